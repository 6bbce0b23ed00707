//! The audit of a record of the base's test run (`--record FILE`,
//! SAFETY-CONTRACT §4.12): a source of dependency evidence that says, per
//! test, what the test read, looked for, listed and wrote at base.
//!
//! The record is used only when it belongs to this build and base: its
//! trees are this build's, no log line is left without a process, and every
//! source file its tests read has the content the base commit (or, without
//! one, the disk less the change set) gives it. Each catalogue test is
//! covered when the record holds a complete run of it under the same
//! catalogue entry. For the build-tree files (and the untracked ones) a
//! covered test touched, the audit finds how each differs now. Deciding with
//! it is [`crate::recorded`]'s.

use std::collections::HashMap;

use super::ctest::Catalogue;
use super::record::{self, Record, State, Status, Tree};

/// A usable record, audited against this run.
#[derive(Debug)]
pub struct Recorded {
    /// `--record`, as given (absolute).
    pub path: String,
    pub(crate) record: Record,
    /// Per catalogue test: its test in the record, when the record covers it.
    pub covered: Vec<Option<usize>>,
    /// Per record file: the base commit tracks it (source tree), so the change set decides it.
    pub(crate) tracked: Vec<bool>,
    /// Per record file: what a test read there differs now (build tree, untracked files).
    pub(crate) differs: Vec<Option<String>>,
    /// Absolute path of each record file.
    pub(crate) abs: Vec<String>,
}

/// What the audit found: the record (when usable) and what to say.
#[derive(Debug, Default)]
pub struct Audit {
    /// The record, when it belongs to this build and base.
    pub recorded: Option<Recorded>,
    /// `CODE: detail` lines for stderr (`note …`).
    pub notes: Vec<String>,
}

/// What the command line asks of a record (`--record`): what the audit
/// checks it against besides the build and its catalogue.
#[derive(Debug, Clone)]
pub struct Asked {
    /// `--record` (absolute).
    pub path: String,
    /// The commit the change set starts from, when there is one.
    pub base_commit: Option<String>,
    /// The changed paths (absolute, folded), for a change list without a base commit.
    pub changed_abs: Vec<String>,
    /// The largest record read.
    pub max_bytes: u64,
}

/// A record to audit against this run: a source of per-test dependency
/// evidence (`ingest::depfile::source::DepSource`).
pub struct Input<'a> {
    /// What the command line asks of it.
    pub asked: &'a Asked,
    /// `--source-dir` (absolute, folded).
    pub source_dir: &'a str,
    /// `--build-dir` (absolute, folded).
    pub build_dir: &'a str,
    /// The catalogue, with its document as parsed (`ctest --show-only=json-v1`).
    pub catalogue: &'a Catalogue,
}

/// A source file a record read with other content than it has now, which the
/// change set does not name: the record is of another base.
#[derive(Debug, thiserror::Error)]
#[error("{record} read {file} with other content than it has now, and the change set does not name it: it records another base")]
struct OtherBase {
    record: String,
    file: String,
}

/// Without a base commit: each source input the record read must have the
/// content it has now, unless the change set names it. `Err`: the first
/// that does not.
fn tracked_on_disk(
    input: &Input<'_>,
    rec: &record::Record,
    abs: &[String],
    source_inputs: &[usize],
    tracked: &mut [bool],
) -> Result<(), OtherBase> {
    for &i in source_inputs {
        if input.asked.changed_abs.iter().any(|c| c == &abs[i]) {
            tracked[i] = true;
            continue;
        }
        let f = &rec.files[i];
        let here = std::path::Path::new(&abs[i]);
        let now = crate::vcs::blob_id_of_link(here).or_else(|| crate::vcs::blob_id_of_file(here));
        let same = match f.state {
            State::File => now.as_deref() == f.oid.as_deref(),
            _ => now.is_none(),
        };
        if !same {
            return Err(OtherBase {
                record: input.asked.path.to_owned(),
                file: display(rec, i),
            });
        }
        tracked[i] = true;
    }
    Ok(())
}

/// Loads `--record` and audits it.
pub fn audit(input: &Input<'_>) -> Audit {
    let unused = |code: &str, detail: String| Audit {
        recorded: None,
        notes: vec![format!("{code}: {detail}; the record is not used")],
    };
    let rec = match record::load(&input.asked.path, input.asked.max_bytes) {
        Ok(r) => r,
        Err(e) => return unused("RECORD_UNREADABLE", e.to_string()),
    };
    if rec.build_dir != input.build_dir || rec.source_dir != input.source_dir {
        return unused(
            "RECORD_FOREIGN",
            format!(
                "{} records the build {} of {}, not {} of {}",
                input.asked.path, rec.build_dir, rec.source_dir, input.build_dir, input.source_dir
            ),
        );
    }
    if !rec.problems.is_empty() {
        return unused(
            "RECORD_INCOMPLETE",
            format!(
                "{}: a log line belongs to no process ({})",
                input.asked.path, rec.problems[0]
            ),
        );
    }
    let written = rec.written();
    let abs: Vec<String> = (0..rec.files.len()).map(|i| rec.abs(i)).collect();
    // What some test read, not wrote: the inputs the audit looks at.
    let mut read = vec![false; rec.files.len()];
    for t in rec.tests.iter().filter(|t| t.status == Status::Recorded) {
        for &i in &t.reads {
            read[i] = true;
        }
    }
    let source_inputs: Vec<usize> = (0..rec.files.len())
        .filter(|&i| read[i] && !written[i] && rec.files[i].tree == Tree::Source)
        .filter(|&i| matches!(rec.files[i].state, State::File | State::Absent))
        .collect();
    let mut tracked = vec![false; rec.files.len()];
    match input.asked.base_commit.as_deref() {
        Some(base) => {
            let asked: Vec<&str> = source_inputs.iter().map(|&i| abs[i].as_str()).collect();
            let ids =
                match crate::vcs::blob_ids_at(std::path::Path::new(input.source_dir), base, &asked)
                {
                    Ok(ids) => ids,
                    Err(e) => {
                        return unused(
                            "RECORD_UNVERIFIED",
                            format!("cannot read the base commit {base}: {e}"),
                        )
                    }
                };
            for (&i, id) in source_inputs.iter().zip(ids) {
                let f = &rec.files[i];
                match (f.state, id) {
                    (State::File, Some(id)) if f.oid.as_deref() == Some(id.as_str()) => tracked[i] = true,
                    (State::File, Some(_)) | (State::Absent, Some(_)) => {
                        return unused(
                            "RECORD_STALE",
                            format!(
                                "{} read {} with other content than the base commit {base} has: it records another base",
                                input.asked.path,
                                display(&rec, i)
                            ),
                        )
                    }
                    (State::Absent, None) => tracked[i] = true,
                    _ => {} // untracked at base: compared on disk
                }
            }
        }
        None => {
            if let Err(why) = tracked_on_disk(input, &rec, &abs, &source_inputs, &mut tracked) {
                return unused("RECORD_STALE", why.to_string());
            }
        }
    }
    // Which tests it covers.
    let mut notes = Vec::new();
    let entries: HashMap<String, String> = record::entry_fingerprints(
        input
            .catalogue
            .json
            .as_ref()
            .unwrap_or(&serde_json::Value::Null),
    )
    .into_iter()
    .collect();
    let by_name: HashMap<&str, usize> = (rec.tests.iter().enumerate())
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut uncovered: Vec<String> = Vec::new();
    let covered: Vec<Option<usize>> = (input.catalogue.tests.iter())
        .map(|t| {
            let why = match by_name.get(t.name.as_str()) {
                None => "not in the record".to_owned(),
                Some(&i) => {
                    let r = &rec.tests[i];
                    if r.status != Status::Recorded {
                        r.status.as_str().to_owned()
                    } else if entries.get(&t.name) != Some(&r.entry) {
                        "its catalogue entry changed".to_owned()
                    } else {
                        return Some(i);
                    }
                }
            };
            uncovered.push(format!("{:?} ({why})", t.name));
            None
        })
        .collect();
    if !uncovered.is_empty() {
        let n = uncovered.len();
        uncovered.truncate(5);
        notes.push(format!(
            "RECORD_TEST_UNRECORDED: {n} of {} tests are decided without {}: {}{}",
            covered.len(),
            input.asked.path,
            uncovered.join(", "),
            if n > 5 { ", …" } else { "" }
        ));
    }
    let differs = current_differences(&rec, &abs, &tracked, &covered);
    Audit {
        recorded: Some(Recorded {
            path: input.asked.path.to_owned(),
            record: rec,
            covered,
            tracked,
            differs,
            abs,
        }),
        notes,
    }
}

/// Record file `i` as the reports name it (`build/…` in the build tree).
pub(crate) fn display(rec: &Record, i: usize) -> String {
    let f = &rec.files[i];
    match f.tree {
        Tree::Build => format!("build/{}", f.path),
        Tree::Source => {
            if f.path.is_empty() {
                ".".into()
            } else {
                f.path.clone()
            }
        }
    }
}

/// For every build-tree (or untracked) path a covered test read: how it
/// differs now from what the record read, if it does.
fn current_differences(
    rec: &Record,
    abs: &[String],
    tracked: &[bool],
    covered: &[Option<usize>],
) -> Vec<Option<String>> {
    let mut wanted = vec![false; rec.files.len()];
    for &ti in covered.iter().flatten() {
        let t = &rec.tests[ti];
        for &i in t.reads.iter().chain(&t.listed) {
            wanted[i] = true;
        }
    }
    let mut listed = vec![false; rec.files.len()];
    let mut written: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for t in &rec.tests {
        for &i in &t.listed {
            listed[i] = true;
        }
        for &i in &t.wrote {
            written.insert(abs[i].as_str());
        }
    }
    // A listing without the entries the tests made themselves (`__pycache__`, outputs).
    let own = |dir: &str, names: Vec<String>| -> Vec<String> {
        (names.into_iter())
            .filter(|n| !written.contains(format!("{dir}/{n}").as_str()))
            .collect()
    };
    (0..rec.files.len())
        .map(|i| {
            let f = &rec.files[i];
            if !wanted[i] || tracked[i] {
                return None;
            }
            if f.tree == Tree::Source && f.state == State::Dir && !listed[i] {
                return None; // a source directory's existence: decided by the change set
            }
            let path = std::path::Path::new(&abs[i]);
            let now = std::fs::metadata(path);
            match f.state {
                State::File => match now {
                    Ok(m) if m.is_file() => {
                        let link = crate::vcs::blob_id_of_link(path);
                        let id = crate::vcs::blob_id_of_file(path);
                        let (was_link, was) = match &f.target_oid {
                            Some(t) => (f.oid.as_deref(), Some(t.as_str())),
                            None => (None, f.oid.as_deref()),
                        };
                        (link.as_deref() != was_link || id.as_deref() != was)
                            .then(|| "has other content now".into())
                    }
                    Ok(_) => Some("is no longer a file".into()),
                    Err(_) => Some("is gone".into()),
                },
                State::Absent => now.is_ok().then(|| "exists now".into()),
                State::Dir => match now {
                    Ok(m) if m.is_dir() => match &f.entries {
                        Some(e)
                            if listed[i]
                                && own(&abs[i], e.clone())
                                    != own(&abs[i], crate::record::dir_entries(&abs[i])) =>
                        {
                            Some("lists other entries now".into())
                        }
                        _ => None,
                    },
                    _ => Some("is no longer a directory".into()),
                },
                State::Other => None,
            }
        })
        .collect()
}
