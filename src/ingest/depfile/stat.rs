//! File facts every dependency reader audits with: modification time, size
//! and real path, with one `lstat` per directory shared by all workers.

use std::time::SystemTime;

use crate::fasthash::FastMap;
use crate::paths;

pub(crate) struct FileStat {
    pub(crate) mtime: Option<SystemTime>,
    /// Size in bytes (following links).
    pub(crate) size: Option<u64>,
    /// Real path when it differs from the lexical one.
    pub(crate) real: Option<String>,
}

/// Directory → whether it or an ancestor is a symlink (or cannot be
/// inspected): one `lstat` per directory for all the workers of one read.
#[derive(Default)]
pub(crate) struct DirMemo(std::sync::Mutex<FastMap<String, bool>>);

impl DirMemo {
    pub(super) fn memo(&self) -> std::sync::MutexGuard<'_, FastMap<String, bool>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when `dir` or one of its ancestors is a symlink (or cannot be inspected).
    pub(super) fn linked(&self, dir: &str) -> bool {
        if dir.is_empty() || dir == "/" {
            return false;
        }
        if let Some(&v) = self.memo().get(dir) {
            return v;
        }
        // Not under the lock: two workers may both look, and agree.
        let here = match std::fs::symlink_metadata(dir) {
            Ok(m) => m.file_type().is_symlink(),
            Err(_) => true,
        };
        let parent = dir.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
        let v = here || self.linked(parent);
        self.memo().insert(dir.to_owned(), v);
        v
    }
}

pub(crate) fn stat_file(path: &str, dirs: &DirMemo) -> FileStat {
    let lmeta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => {
            return FileStat {
                mtime: None,
                size: None,
                real: None,
            }
        }
    };
    let (dir, _) = path.rsplit_once('/').unwrap_or(("", path));
    let linked = lmeta.file_type().is_symlink() || dirs.linked(dir);
    if !linked {
        // No symlink anywhere on the path: the lexical spelling is the real one.
        return FileStat {
            mtime: lmeta.modified().ok(),
            size: Some(lmeta.len()),
            real: None,
        };
    }
    // Follow links: a dangling one has no timestamp to trust.
    let meta = std::fs::metadata(path).ok();
    let mtime = meta.as_ref().and_then(|m| m.modified().ok());
    let size = meta.map(|m| m.len());
    let real = paths::real(path).filter(|r| r != path);
    FileStat { mtime, size, real }
}
