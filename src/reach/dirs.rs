//! Directory walks: what a named build-tree directory holds that a program
//! could load or run and that no artifact or build-time output explains (a
//! plugin a `POST_BUILD` step copied there, a file configure wrote).

use std::io::Read;

use super::lookup::{Kind, Lookup, Unexplained};
use crate::paths;

/// At most this many entries of one named directory are looked at; a
/// larger one is itself of unknown content.
const MAX_DIR_ENTRIES: usize = 200_000;

/// Whether the file at `path` starts as an ELF executable or shared object
/// (`e_type` `ET_EXEC` or `ET_DYN`; not a relocatable `.o`) or a `#!` script:
/// something a test could load or run.
fn may_load_or_run(path: &std::path::Path) -> bool {
    let mut head = [0u8; 18];
    let Ok(mut f) = std::fs::File::open(path) else {
        return true; // unreadable: it cannot be ruled out
    };
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
    if n >= 2 && head.starts_with(b"#!") {
        return true;
    }
    if n < 18 || !head.starts_with(b"\x7fELF") {
        return false;
    }
    let e_type = match head[5] {
        2 => u16::from_be_bytes([head[16], head[17]]),
        _ => u16::from_le_bytes([head[16], head[17]]),
    };
    matches!(e_type, 2 | 3)
}

impl Lookup<'_, '_> {
    /// What the build-tree directory `dir` holds, at any depth, that a test
    /// naming it could load or run and that the evidence does not explain
    /// (see [`Unexplained`]). Artifacts and build-time outputs are skipped
    /// (the caller reaches their targets); a symlink to an artifact counts as
    /// the artifact.
    pub(super) fn unexplained_in(&self, dir: &str) -> std::rc::Rc<Unexplained> {
        if let Some(u) = self.dir_cache.borrow().get(dir) {
            return u.clone();
        }
        // A placeholder first: a symlink cycle back here finds it.
        self.dir_cache
            .borrow_mut()
            .insert(dir.to_owned(), Default::default());
        let mut u = Unexplained::default();
        let known =
            |p: &str| !self.graph.artifact_owners(p).is_empty() || self.outputs.contains_key(p);
        for (n, entry) in walkdir::WalkDir::new(dir)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .enumerate()
        {
            let Ok(entry) = entry else {
                u.build_time
                    .push(format!("{dir} (a part of it cannot be read)"));
                break;
            };
            if n > MAX_DIR_ENTRIES {
                u.build_time
                    .push(format!("{dir} (more than {MAX_DIR_ENTRIES} entries)"));
                break;
            }
            let ft = entry.file_type();
            if ft.is_dir() {
                continue;
            }
            let Some(path) = entry.path().to_str().map(paths::fold) else {
                u.build_time
                    .push(format!("{dir} (a file name in it is not UTF-8)"));
                break;
            };
            if known(&path) {
                continue;
            }
            if ft.is_symlink() && entry.path().is_dir() {
                // A symlinked subdirectory: what the directory it leads to
                // holds (walked once; a cycle meets the placeholder).
                let real = std::fs::canonicalize(entry.path())
                    .ok()
                    .and_then(|r| r.to_str().map(paths::fold));
                match real {
                    Some(real) if paths::is_within(&real, &self.model.build_root) => {
                        u.links.extend(
                            self.under(&real)
                                .map(|(o, a, _)| (o, format!("{a} (through the symlink {path})"))),
                        );
                        let sub = self.unexplained_in(&real);
                        u.links.extend(sub.links.iter().cloned());
                        u.configured.extend(sub.configured.iter().cloned());
                        u.copies.extend(sub.copies.iter().cloned());
                        u.build_time.extend(sub.build_time.iter().cloned());
                    }
                    // Outside the build tree: not a build step's copy.
                    _ => {}
                }
                continue;
            }
            if !may_load_or_run(entry.path()) {
                // Data configure wrote here (`file(COPY data DESTINATION …)`):
                // possibly a copy of a source file, read by whoever names the directory.
                if self.kind(&path) == Kind::ConfigureTime {
                    u.copies.push(path);
                }
                continue;
            }
            // Through a symlink (the named directory's own, or the file's):
            // an artifact or output under its real path is that one.
            let real = std::fs::canonicalize(entry.path())
                .ok()
                .and_then(|r| r.to_str().map(paths::fold))
                .filter(|r| *r != path);
            if let Some(real) = real {
                let mut owners: Vec<usize> = self.graph.artifact_owners(&real).to_vec();
                owners.extend(self.outputs.get(real.as_str()).into_iter().flatten());
                if !owners.is_empty() {
                    u.links.extend(
                        owners
                            .into_iter()
                            .map(|o| (o, format!("{path} (its artifact or output {real})"))),
                    );
                    continue;
                }
            }
            match self.kind(&path) {
                Kind::ConfigureTime => u.configured.push(path),
                // A program written after the catalogue was listed is not
                // taken for a test's output here: a rebuild after the listing
                // rewrites such copies too.
                Kind::BuildTime | Kind::AfterListing => u.build_time.push(path),
                Kind::Missing | Kind::Dir => {}
            }
        }
        let u = std::rc::Rc::new(u);
        self.dir_cache
            .borrow_mut()
            .insert(dir.to_owned(), u.clone());
        u
    }
}
