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
use crate::ingest::record::{State, Tree};
use crate::ingest::record_audit::display;
pub use crate::ingest::record_audit::Recorded;
use crate::paths;
use crate::policy::Declared;
use crate::reason::Code;

/// The assumption a decision resting on the record makes, as printed.
pub const WHY: &str = "a test that reads the same inputs does the same thing: no clock, network or randomness decides what it reads (the recorded run of the base shows every input inside the project)";

use crate::decide::select_code::RECORDED_INPUT_CHANGED;

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
