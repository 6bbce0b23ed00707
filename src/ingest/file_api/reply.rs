//! The reply directory: which index to trust, and reading the files it
//! names, each no newer than the index.

use std::time::SystemTime;

use super::raw::{RawIndex, StrictObject};
use crate::ingest::Reader;
use crate::paths;
use crate::reason::{Code, Gap};

pub(super) fn mtime(path: &str) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// A reply file name must be a plain file name inside `reply/` (no traversal).
pub(super) fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && name != "." && name != ".."
}

pub(super) struct Ctx<'a> {
    pub(super) reader: &'a Reader,
    pub(super) reply_dir: String,
    pub(super) index_mtime: SystemTime,
    pub(super) files_read: Vec<String>,
}

impl Ctx<'_> {
    /// Reads one reply file named by the index or codemodel into `buf[..n]`,
    /// checking it is no newer than the index (timestamp from the handle that
    /// was read). Returns its path and `n`.
    pub(super) fn read_into(
        &mut self,
        name: &str,
        missing: Code,
        buf: &mut Vec<u8>,
    ) -> Result<(String, usize), Gap> {
        if !plain_name(name) {
            return Err(Gap::new(
                Code::FileApiMalformed,
                format!("reply file name {name:?} is not a plain file name"),
            ));
        }
        let path = format!("{}/{}", self.reply_dir, name);
        let (meta, n) = self
            .reader
            .read_into_meta(&path, buf)
            .map_err(|e| e.gap(&path, missing, Code::LimitExceeded))?;
        match meta.modified() {
            Ok(t) if t <= self.index_mtime => {}
            Ok(_) => {
                return Err(Gap::new(
                    Code::FileApiReplyStale,
                    format!("{path} is newer than the reply index that references it"),
                ))
            }
            Err(_) => {
                return Err(Gap::new(
                    missing,
                    format!("{path}: cannot read its timestamp"),
                ))
            }
        }
        self.files_read.push(path.clone());
        Ok((path, n))
    }

    /// Reads and decodes one (small) reply file.
    pub(super) fn read_json<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
        missing: Code,
    ) -> Result<T, Gap> {
        self.read_json_as(name, missing, false).map(|(t, _)| t)
    }

    /// [`Ctx::read_json`] of an optional reply (a missing one is malformed
    /// evidence), with the parsed document too when `keep`.
    pub(super) fn read_json_kept<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
        keep: bool,
    ) -> Result<(T, Option<serde_json::Value>), Gap> {
        self.read_json_as(name, Code::FileApiMalformed, keep)
    }

    fn read_json_as<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
        missing: Code,
        keep: bool,
    ) -> Result<(T, Option<serde_json::Value>), Gap> {
        let mut buf = Vec::new();
        let (path, n) = self.read_into(name, missing, &mut buf)?;
        let text = json_text(&buf[..n], &path)?;
        let value = crate::ingest::json_value(text, keep);
        let t = crate::ingest::parse_json(text, value.as_ref())
            .map_err(|e| Gap::new(Code::FileApiMalformed, format!("{path}: {e}")))?;
        Ok((t, value))
    }
}

/// A reply file as text: JSON is UTF-8 throughout (RFC 8259), members this
/// tool ignores included, so the whole file is checked once, up front (and
/// serde need not check string by string).
pub(super) fn json_text<'b>(bytes: &'b [u8], path: &str) -> Result<&'b str, Gap> {
    std::str::from_utf8(bytes).map_err(|e| {
        Gap::new(
            Code::FileApiMalformed,
            format!("{path}: not UTF-8 (at byte {})", e.valid_up_to()),
        )
    })
}

/// Chooses the reply index: the lexicographically greatest `index-*.json`,
/// which must also be the newest by modification time.
pub(super) fn choose_index(reply_dir: &str) -> Result<(String, SystemTime), Gap> {
    let entries = match std::fs::read_dir(reply_dir) {
        Ok(e) => e,
        Err(e) => {
            return Err(Gap::new(
                Code::FileApiReplyMissing,
                format!(
                    "{reply_dir}: {e}; write {}/query/codemodel-v2 and re-run cmake",
                    reply_dir.trim_end_matches("/reply")
                ),
            ))
        }
    };
    let mut indexes: Vec<(String, Option<SystemTime>)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for e in entries {
        let e =
            e.map_err(|err| Gap::new(Code::FileApiReplyMissing, format!("{reply_dir}: {err}")))?;
        let Some(name) = e.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with("index-") && name.ends_with(".json") {
            let t = mtime(&format!("{reply_dir}/{name}"));
            indexes.push((name, t));
        } else if name.starts_with("error-") && name.ends_with(".json") {
            errors.push(name);
        }
    }
    indexes.sort();
    let Some((chosen, chosen_t)) = indexes.last().cloned() else {
        return Err(Gap::new(
            Code::FileApiReplyMissing,
            format!("{reply_dir}: no index-*.json"),
        ));
    };
    let Some(chosen_t) = chosen_t else {
        return Err(Gap::new(
            Code::FileApiIndexAmbiguous,
            format!("{reply_dir}/{chosen}: cannot read its timestamp"),
        ));
    };
    for (name, t) in &indexes[..indexes.len() - 1] {
        match t {
            Some(t) if *t <= chosen_t => {}
            _ => {
                return Err(Gap::new(
                    Code::FileApiIndexAmbiguous,
                    format!("{reply_dir}: {name} is newer than (or as uncertain as) the later-named {chosen}"),
                ))
            }
        }
    }
    // error-<timestamp>.json uses the same timestamp naming as index files.
    if let Some(err) = errors.iter().max() {
        let err_stamp = err.trim_start_matches("error-");
        let idx_stamp = chosen.trim_start_matches("index-");
        if err_stamp > idx_stamp {
            return Err(Gap::new(
                Code::FileApiReplyStale,
                format!(
                    "{reply_dir}/{err} records a configure that failed after {chosen} was written"
                ),
            ));
        }
    }
    Ok((chosen, chosen_t))
}

/// Finds the reply file of `kind` with `major` in the index, or reports what exists.
pub(super) fn find_object(index: &RawIndex, kind: &str, major: u64) -> Result<Option<String>, Gap> {
    // Our own client query first, then the shared stateless query, then objects[].
    let mut candidates: Vec<&serde_json::Value> = Vec::new();
    if let Some(StrictObject(reply)) = &index.reply {
        if let Some(client) = reply.get("client-diff2test") {
            if let Some(v) = client.get(format!("{kind}-v{major}")) {
                candidates.push(v);
            }
        }
        if let Some(v) = reply.get(&format!("{kind}-v{major}")) {
            candidates.push(v);
        }
    }
    for c in candidates {
        if let (Some(k), Some(f)) = (
            c.get("kind").and_then(|k| k.as_str()),
            c.get("jsonFile").and_then(|f| f.as_str()),
        ) {
            let m = c
                .get("version")
                .and_then(|v| v.get("major"))
                .and_then(|m| m.as_u64());
            if k == kind && m == Some(major) {
                return Ok(Some(f.to_owned()));
            }
        }
    }
    let mut other_major = None;
    for o in &index.objects {
        if o.kind == kind {
            if o.version.major == major {
                return Ok(Some(o.json_file.clone()));
            }
            other_major = Some(o.version.major);
        }
    }
    match other_major {
        Some(m) => Err(Gap::new(
            Code::FileApiUnsupportedVersion,
            format!("{kind} reply has major version {m}; only {major} is supported"),
        )),
        None => Ok(None),
    }
}

/// True when `a` and `b` name the same directory: equal after lexical folding,
/// or (documented policy) equal after resolving symlinks.
pub(super) fn same_root(a: &str, b: &str) -> bool {
    a == b || matches!((paths::real(a), paths::real(b)), (Some(x), Some(y)) if x == y)
}
