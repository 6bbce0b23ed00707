//! A record of the base's test run (`diff2test record`): what each test
//! opened, examined, executed, listed and wrote inside the project's scope,
//! with the content of what it read. This module is the record's format,
//! reading and audit; [`crate::record`] writes one from strace logs and
//! [`crate::recorded`] decides with one.
//!
//! The audit (SAFETY-CONTRACT §4.12) makes a record *usable* only when it
//! belongs to the build and the base at hand:
//! - its schema is `diff2test.record.v1`, and its source and build
//!   directories are this run's;
//! - every source file it read that the base commit tracks has, in the base
//!   commit, the content the record read (else it is another base's record:
//!   `RECORD_STALE`, unused); without a base commit, every such file outside
//!   the change set has on disk the content the record read;
//! - a test *covered* by the record has one recorded run that ended by
//!   itself, with no unreadable line, and a catalogue entry equal to this
//!   catalogue's (all but its backtrace). Every other test is decided as
//!   without a record.

use serde::{Deserialize, Serialize};

use crate::digest;

/// The record's schema identity.
pub const SCHEMA: &str = "diff2test.record.v1";

/// A whole record, as written and read.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// [`SCHEMA`].
    pub schema: String,
    /// `--source-dir` of the recorded build (absolute, folded).
    pub source_dir: String,
    /// `--build-dir` of the recorded build (absolute, folded).
    pub build_dir: String,
    /// The project's scope: the git work tree holding the source dir, or the source dir.
    pub scope: String,
    /// The commit checked out in the source dir when the record was written, if any.
    pub commit: Option<String>,
    /// SHA-256 of the catalogue the runs were matched against.
    pub catalogue_sha256: String,
    /// The logs read, in the order given.
    pub logs: Vec<Log>,
    /// Lines of the logs that belong to no process (each makes every test unrecorded).
    pub problems: Vec<String>,
    /// Every path a recorded test touched inside the scope or the build tree, sorted.
    pub files: Vec<File>,
    /// Every test of the catalogue, sorted by name.
    pub tests: Vec<TestRun>,
}

/// One strace log.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// Its path as given.
    pub file: String,
    /// Its lines.
    pub lines: usize,
    /// SHA-256 of its bytes.
    pub sha256: String,
}

/// Which tree a recorded path is in.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Tree {
    /// Below the build directory (relative to it).
    Build,
    /// Below the scope, outside the build directory (relative to the scope).
    Source,
}

/// What a recorded path was when the record was written.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// A regular file (or a symlink to one), with its blob id.
    File,
    /// A directory.
    Dir,
    /// Nothing there.
    Absent,
    /// Anything else (a socket, a device, an unreadable file).
    Other,
}

/// One path.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The tree.
    pub tree: Tree,
    /// Relative to the tree's root (`""`: the root itself).
    pub path: String,
    /// Its state.
    pub state: State,
    /// For a file: the git blob id (SHA-1) of its bytes; for a symlink: of
    /// its target as written (as git stores a symlink).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oid: Option<String>,
    /// For a symlink to a file: the blob id of the bytes it leads to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_oid: Option<String>,
    /// For a directory a test listed: its entries, sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<String>>,
}

/// How one test's recorded run came out.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every run of the test ended by itself and every line of it was read.
    Recorded,
    /// A run was killed (a timeout, a crash) or the log ends before it did.
    CutShort,
    /// A line of one of its processes could not be read whole.
    Incomplete,
    /// The log shows no run of it.
    NotRun,
    /// Several tests share its command line and working directory and the
    /// log has fewer runs than tests.
    Ambiguous,
}

impl Status {
    /// The word used on stderr.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Recorded => "recorded",
            Status::CutShort => "cut short",
            Status::Incomplete => "incomplete",
            Status::NotRun => "not run",
            Status::Ambiguous => "ambiguous",
        }
    }
}

/// One test's recorded run(s).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TestRun {
    /// The test's name.
    pub name: String,
    /// SHA-256 of its catalogue entry (canonical JSON, all but `backtrace`).
    pub entry: String,
    /// How its run came out.
    pub status: Status,
    /// Why, when not recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Runs of it in the logs.
    pub runs: usize,
    /// Paths it read, examined, executed or looked for before writing them (indices into `files`).
    pub reads: Vec<usize>,
    /// Directories it listed (indices into `files`).
    pub listed: Vec<usize>,
    /// Paths it created, wrote, removed or renamed (indices into `files`).
    pub wrote: Vec<usize>,
}

/// The fingerprint of each test's catalogue entry, by name: SHA-256 of the
/// entry as canonical JSON (keys sorted), without `backtrace` (where the
/// `add_test` stands, not what the test does).
pub fn entry_fingerprints(catalogue_json: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(tests) = catalogue_json.get("tests").and_then(|t| t.as_array()) else {
        return out;
    };
    for t in tests {
        let Some(name) = t.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        let mut text = String::new();
        if let Some(obj) = t.as_object() {
            let mut keys: Vec<&String> = obj.keys().filter(|k| *k != "backtrace").collect();
            keys.sort();
            text.push('{');
            for k in keys {
                canonical(&serde_json::Value::String(k.clone()), &mut text);
                text.push(':');
                canonical(&obj[k], &mut text);
                text.push(',');
            }
            text.push('}');
        }
        out.push((
            name.to_owned(),
            digest::hex(&digest::sha256(text.as_bytes())),
        ));
    }
    out
}

fn canonical(v: &serde_json::Value, out: &mut String) {
    match v {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                canonical(&serde_json::Value::String(k.clone()), out);
                out.push(':');
                canonical(&m[k], out);
                out.push(',');
            }
            out.push('}');
        }
        serde_json::Value::Array(a) => {
            out.push('[');
            for x in a {
                canonical(x, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Why a record file cannot be used (one line for `RECORD_UNREADABLE`,
/// after the file's path).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// It cannot be read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is larger than `--max-evidence-bytes`.
    #[error("{size} bytes is more than the limit of {limit}")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// It is not JSON.
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// It is a record of another schema.
    #[error("schema {0:?} is not {SCHEMA:?} (write it again with this diff2test record)")]
    Schema(String),
    /// It has no schema at all.
    #[error("no \"schema\": not a diff2test record")]
    NoSchema,
    /// Its members are not a record's.
    #[error("not a {SCHEMA} record: {0}")]
    Shape(serde_json::Error),
    /// A test refers to a path the record does not list.
    #[error("a test refers to a path the record does not list")]
    Dangling,
}

/// A record file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
pub struct Unusable {
    /// The file.
    pub path: String,
    /// Why.
    pub why: RecordError,
}

/// Reads a record file.
pub fn load(path: &str, max_bytes: u64) -> Result<Record, Unusable> {
    read_record(path, max_bytes).map_err(|why| Unusable {
        path: path.to_owned(),
        why,
    })
}

fn read_record(path: &str, max_bytes: u64) -> Result<Record, RecordError> {
    let size = std::fs::metadata(path)?.len();
    if size > max_bytes {
        return Err(RecordError::TooLarge {
            size,
            limit: max_bytes,
        });
    }
    let bytes = std::fs::read(path)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(RecordError::NotJson)?;
    match v.get("schema").and_then(|s| s.as_str()) {
        Some(SCHEMA) => {}
        Some(other) => return Err(RecordError::Schema(other.to_owned())),
        None => return Err(RecordError::NoSchema),
    }
    let r: Record = serde_json::from_value(v).map_err(RecordError::Shape)?;
    let n = r.files.len();
    let bad = r
        .tests
        .iter()
        .any(|t| (t.reads.iter().chain(&t.listed).chain(&t.wrote)).any(|&i| i >= n));
    if bad {
        return Err(RecordError::Dangling);
    }
    Ok(r)
}

impl Record {
    /// The absolute path of `files[i]`.
    pub fn abs(&self, i: usize) -> String {
        let f = &self.files[i];
        let root = match f.tree {
            Tree::Build => &self.build_dir,
            Tree::Source => &self.scope,
        };
        if f.path.is_empty() {
            root.clone()
        } else {
            format!("{root}/{}", f.path)
        }
    }

    /// Whether some test wrote `files[i]`.
    pub fn written(&self) -> Vec<bool> {
        let mut w = vec![false; self.files.len()];
        for t in &self.tests {
            for &i in &t.wrote {
                w[i] = true;
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_fingerprints_ignore_the_backtrace_and_key_order() {
        let a = serde_json::json!({"tests": [{"name": "t", "backtrace": 3, "command": ["x"], "properties": [{"name": "WORKING_DIRECTORY", "value": "/b"}]}]});
        let b = serde_json::json!({"tests": [{"properties": [{"value": "/b", "name": "WORKING_DIRECTORY"}], "command": ["x"], "name": "t", "backtrace": 9}]});
        let c = serde_json::json!({"tests": [{"name": "t", "command": ["x", "y"], "properties": [{"name": "WORKING_DIRECTORY", "value": "/b"}]}]});
        assert_eq!(entry_fingerprints(&a), entry_fingerprints(&b));
        assert_ne!(entry_fingerprints(&a), entry_fingerprints(&c));
    }

    #[test]
    fn a_record_of_another_schema_or_with_dangling_indices_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        let p = p.to_str().unwrap();
        std::fs::write(p, r#"{"schema": "diff2test.record.v9"}"#).unwrap();
        assert!(load(p, 1 << 20).unwrap_err().to_string().contains("is not"));
        let r = Record {
            schema: SCHEMA.into(),
            source_dir: "/s".into(),
            build_dir: "/b".into(),
            scope: "/s".into(),
            commit: None,
            catalogue_sha256: String::new(),
            logs: vec![],
            problems: vec![],
            files: vec![],
            tests: vec![TestRun {
                name: "t".into(),
                entry: String::new(),
                status: Status::Recorded,
                detail: String::new(),
                runs: 1,
                reads: vec![0],
                listed: vec![],
                wrote: vec![],
            }],
        };
        std::fs::write(p, serde_json::to_vec(&r).unwrap()).unwrap();
        assert!(load(p, 1 << 20)
            .unwrap_err()
            .to_string()
            .contains("does not list"));
        std::fs::write(p, "{").unwrap();
        assert!(load(p, 1 << 20)
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
    }
}
