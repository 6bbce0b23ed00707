//! Deciding with a record of the base's test run (`--record FILE`, SAFETY-CONTRACT §4.12).
//!
//! The record says what each test read at base. Under its one assumption
//! (a test that reads the same inputs does the same thing: no clock,
//! network or randomness decides what it reads), a test *covered* by the
//! record is affected only when something it touched differs:
//! - a source file it read is in the change set;
//! - a path it looked for and did not find is added (at it or below it);
//! - a directory it listed lists other entries now (the entries the tests
//!   made themselves left out), or a source directory it entered is gone
//!   while a change below it is not reported as modified in place;
//! - a build-tree file (or a source-tree file the base commit does not
//!   track) it read differs now from what the record read: the build made
//!   it anew from changed inputs, whatever step did (`execute_process`, a
//!   `POST_BUILD` copy, a generator);
//! - a test whose output it read is selected.
//!
//! Static evidence still selects on its own; the record only adds. It takes
//! away two things: the opaque-boundary gap of a covered test (its command
//! unmapped, its program built from generated sources, …), which its
//! recorded inputs decide instead; and, when every test of the catalogue is
//! covered, the `CHANGE_UNKNOWN` gap of a changed path that no test touched
//! (the build's own inputs stay the static evidence's: a dependency, a
//! CMake input, a custom command's input keeps its own classification).

use std::collections::HashMap;

use crate::changes::{Changed, Class};
use crate::decide::Forced;
use crate::declare::Use;
use crate::ingest::ctest::Catalogue;
use crate::ingest::record::{self, Record, State, Status, Tree};
use crate::paths;
use crate::policy::Declared;
use crate::reason::Code;

/// The assumption a decision resting on the record makes, as printed.
pub const WHY: &str = "a test that reads the same inputs does the same thing: no clock, network or randomness decides what it reads (the recorded run of the base shows every input inside the project)";

use crate::decide::select_code::RECORDED_INPUT_CHANGED;

/// A usable record, audited against this run.
pub struct Recorded {
    /// `--record`, as given (absolute).
    pub path: String,
    record: Record,
    /// Per catalogue test: its test in the record, when the record covers it.
    pub covered: Vec<Option<usize>>,
    /// Per record file: the base commit tracks it (source tree), so the change set decides it.
    tracked: Vec<bool>,
    /// Per record file: what a test read there differs now (build tree, untracked files).
    differs: Vec<Option<String>>,
    /// Absolute path of each record file.
    abs: Vec<String>,
}

/// What the audit found: the record (when usable) and what to say.
pub struct Audit {
    /// The record, when it belongs to this build and base.
    pub recorded: Option<Recorded>,
    /// `CODE: detail` lines for stderr (`note …`).
    pub notes: Vec<String>,
}

/// The inputs of the audit.
pub struct Input<'a> {
    /// `--record`.
    pub path: &'a str,
    /// `--source-dir` and `--build-dir` (absolute, folded).
    pub source_dir: &'a str,
    /// `--build-dir`.
    pub build_dir: &'a str,
    /// The catalogue document as parsed (`ctest --show-only=json-v1`).
    pub catalogue_json: &'a serde_json::Value,
    /// The catalogue.
    pub catalogue: &'a Catalogue,
    /// The commit the change set starts from, when there is one.
    pub base_commit: Option<&'a str>,
    /// The changed paths (absolute, folded), for a change list without a base commit.
    pub changed_abs: &'a [String],
    /// The largest record read.
    pub max_bytes: u64,
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
        if input.changed_abs.iter().any(|c| c == &abs[i]) {
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
                record: input.path.to_owned(),
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
    let rec = match record::load(input.path, input.max_bytes) {
        Ok(r) => r,
        Err(e) => return unused("RECORD_UNREADABLE", e.to_string()),
    };
    if rec.build_dir != input.build_dir || rec.source_dir != input.source_dir {
        return unused(
            "RECORD_FOREIGN",
            format!(
                "{} records the build {} of {}, not {} of {}",
                input.path, rec.build_dir, rec.source_dir, input.build_dir, input.source_dir
            ),
        );
    }
    if !rec.problems.is_empty() {
        return unused(
            "RECORD_INCOMPLETE",
            format!(
                "{}: a log line belongs to no process ({})",
                input.path, rec.problems[0]
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
    match input.base_commit {
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
                                input.path,
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
    let entries: HashMap<String, String> = record::entry_fingerprints(input.catalogue_json)
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
            input.path,
            uncovered.join(", "),
            if n > 5 { ", …" } else { "" }
        ));
    }
    let differs = current_differences(&rec, &abs, &tracked, &covered);
    Audit {
        recorded: Some(Recorded {
            path: input.path.to_owned(),
            record: rec,
            covered,
            tracked,
            differs,
            abs,
        }),
        notes,
    }
}

fn display(rec: &Record, i: usize) -> String {
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

impl Recorded {
    /// Whether every test of the catalogue is covered.
    pub fn covers_all(&self) -> bool {
        self.covered.iter().all(Option::is_some)
    }

    fn declared(&self) -> Declared {
        Declared {
            kind: "record",
            rule: 1,
            matched: self.path.clone(),
            why: WHY.into(),
        }
    }

    /// Clears the `CHANGE_UNKNOWN` gap of every changed path the record
    /// decides: only when it covers every test. Returns the uses.
    pub fn decide_unknown_paths(&self, changed: &mut [Changed]) -> Vec<Use> {
        if !self.covers_all() {
            return Vec::new();
        }
        let mut uses = Vec::new();
        for c in changed.iter_mut() {
            let open = c.class == Class::Unresolved
                && !c.abs.is_empty()
                && c.gap
                    .as_ref()
                    .is_some_and(|g| g.code == Code::ChangeUnknown);
            if !open {
                continue;
            }
            let readers: Vec<&str> = (self.covered.iter().flatten())
                .filter(|&&ti| self.touches(ti, c).is_some())
                .map(|&ti| self.record.tests[ti].name.as_str())
                .collect();
            c.gap = None;
            c.evidence = if readers.is_empty() {
                format!("no test touched it in the recorded run ({})", self.path)
            } else {
                format!(
                    "the recorded run ({}) shows the tests that touched it: {}",
                    self.path,
                    readers.join(", ")
                )
            };
            c.declared = Some(self.declared());
            uses.push(Use {
                declared: self.declared(),
                subject: format!("{}: {}", c.display, c.evidence),
            });
        }
        uses
    }

    /// Why record test `ti` is affected by `c`, if it is.
    fn touches(&self, ti: usize, c: &Changed) -> Option<String> {
        let t = &self.record.tests[ti];
        let p = c.abs.as_str();
        if p.is_empty() {
            return None;
        }
        for &i in &t.reads {
            let f = &self.record.files[i];
            let a = &self.abs[i];
            match f.state {
                State::File | State::Other if a == p && self.tracked[i] => {
                    return Some(format!("read {} at base", c.display));
                }
                State::Absent if paths::is_within(p, a) => {
                    return Some(format!(
                        "looked for {} at base, where it was not",
                        display(&self.record, i)
                    ));
                }
                State::Dir
                    if f.tree == Tree::Source
                        && !c.edited
                        && paths::is_within(p, a)
                        && a != p
                        && !std::path::Path::new(a).is_dir() =>
                {
                    return Some(format!(
                        "used the directory {}, which is gone",
                        display(&self.record, i)
                    ));
                }
                _ => {}
            }
        }
        None
    }

    /// The tests the record selects, each with why: what they touched
    /// changed, or a test whose output they read is selected (also by
    /// `already`, the selection so far).
    pub fn select(
        &self,
        catalogue: &Catalogue,
        changed: &[Changed],
        already: &[bool],
    ) -> Vec<Forced> {
        let mut selected: Vec<Option<String>> = vec![None; catalogue.tests.len()];
        for (ci, cov) in self.covered.iter().enumerate() {
            let Some(ti) = *cov else { continue };
            let t = &self.record.tests[ti];
            let why = changed
                .iter()
                .find_map(|c| self.touches(ti, c))
                .or_else(|| {
                    t.reads.iter().chain(&t.listed).find_map(|&i| {
                        self.differs[i].as_ref().map(|d| {
                            format!(
                                "{} {d} (the recorded run touched it at base)",
                                display(&self.record, i)
                            )
                        })
                    })
                });
            selected[ci] = why;
        }
        // Outputs read by other tests: a selected writer selects its readers.
        let writers: HashMap<usize, Vec<usize>> = {
            let mut w: HashMap<usize, Vec<usize>> = HashMap::new();
            for (ci, cov) in self.covered.iter().enumerate() {
                if let Some(ti) = cov {
                    for &i in &self.record.tests[*ti].wrote {
                        w.entry(i).or_default().push(ci);
                    }
                }
            }
            w
        };
        loop {
            let mut grew = false;
            for (ci, cov) in self.covered.iter().enumerate() {
                let Some(ti) = *cov else { continue };
                if selected[ci].is_some() {
                    continue;
                }
                let t = &self.record.tests[ti];
                let hit = t.reads.iter().find_map(|&i| {
                    writers.get(&i).and_then(|ws| {
                        ws.iter()
                            .find(|&&w| w != ci && (selected[w].is_some() || already[w]))
                            .map(|&w| (i, w))
                    })
                });
                if let Some((i, w)) = hit {
                    selected[ci] = Some(format!(
                        "read {}, which the selected test {:?} writes",
                        display(&self.record, i),
                        catalogue.tests[w].name
                    ));
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        (selected.into_iter().enumerate())
            .filter_map(|(ci, why)| {
                why.map(|detail| Forced {
                    test: catalogue.tests[ci].name.clone(),
                    code: RECORDED_INPUT_CHANGED,
                    detail,
                })
            })
            .collect()
    }

    /// The use recorded for a test the static evidence reaches and the
    /// record shows unaffected (taken out of the selection).
    pub fn use_unaffected(&self, test: &str) -> Use {
        Use {
            declared: self.declared(),
            subject: format!(
                "test {test:?}: the static evidence reaches it, and every input its recorded run touched is unchanged: skipped"
            ),
        }
    }

    /// The use recorded when a subset rests on the record.
    pub fn use_of(&self) -> Use {
        let n = self.covered.iter().flatten().count();
        Use {
            declared: self.declared(),
            subject: format!(
                "{n} of {} tests decided with their recorded runs",
                self.covered.len()
            ),
        }
    }
}
