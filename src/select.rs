//! What else selects a test, or blocks a subset, once the evidence is read:
//! policy rules, named changed paths, unvouched prerequisites and the base
//! snapshot of the compare mode. Pure decisions over the stages' results.

use crate::decide::{select_code, Forced};
use crate::graph::{Graph, TestMapping};
use crate::policy::{self, Policy};
use crate::reason::{Code, Gap};
use crate::{changes, ingest, paths, reach, snapshot, vcs};

/// The base snapshot, when compare mode is on ([`Policy::compare_mode`]:
/// `build_config = "compare"`, or `--base-snapshot` without an explicit
/// `build_config = "full"`), a CMake input changed (`cmake_changed`;
/// otherwise the snapshot is not needed, and not read) and the file is a
/// readable snapshot; a gap otherwise (no gap when compare mode is off).
pub(crate) fn compare_base(
    base_snapshot: Option<&str>,
    policy: &Policy,
    cmake_changed: bool,
) -> Result<Option<serde_json::Value>, Gap> {
    if !policy.compare_mode(base_snapshot.is_some()) || !cmake_changed {
        return Ok(None);
    }
    let Some(path) = base_snapshot else {
        return Ok(None);
    };
    let parsed = std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| e.to_string()));
    match parsed {
        Ok(v) if v["schema"] == snapshot::SNAPSHOT_SCHEMA && v["tests"].is_object() => Ok(Some(v)),
        Ok(v) => Err(Gap::new(
            Code::SnapshotInvalid,
            format!(
                "{path}: not a {} document (schema {})",
                snapshot::SNAPSHOT_SCHEMA,
                v["schema"]
            ),
        )),
        Err(e) => Err(Gap::new(Code::SnapshotInvalid, format!("{path}: {e}"))),
    }
}

/// Source-tree prerequisites of the dependency evidence that the change
/// source cannot vouch for (git-ignored, untracked, or not in `--head`'s
/// tree): a change to one would not be in the change set. Build-tree files
/// (also in an in-source build) and files outside the source tree are not
/// asked about: the former are products of the build, the latter system files.
pub(crate) fn unvouched_prerequisites(
    vouched: &vcs::Vouched,
    deps: &ingest::depfile::DepEvidence,
    model: &ingest::file_api::Codemodel,
    user_source: &str,
) -> Vec<Gap> {
    let mut listed = vec![false; deps.files.len()];
    for tu in &deps.tus {
        for &p in &tu.prereqs {
            if let Some(f) = listed.get_mut(p as usize) {
                *f = true;
            }
        }
    }
    let mut out = Vec::new();
    for (id, f) in deps.files.iter().enumerate() {
        if !listed[id] || !model.is_project_file(f) {
            continue;
        }
        let rel = paths::strip_root(f, &model.source_root);
        let spelled = rel.map(|rel| paths::join_fold(user_source, rel));
        if !spelled
            .as_ref()
            .is_some_and(|s| vouched.vouches(std::path::Path::new(s)))
            && !vouched.vouches(std::path::Path::new(f))
        {
            let display = model.display_path(f);
            out.push(Gap::new(
                Code::PrereqNotVersioned,
                format!(
                    "{display} is listed in dependency files but is git-ignored or untracked (not in the change source's tree), so a change to it would not be reported; track it, or pass the change set explicitly"
                ),
            ));
        }
    }
    out.sort();
    out
}

/// Why test reach `r` makes changed path `c` select its test, if it does: the
/// test names `c`, a directory holding it, or a configure-time copy of it
/// (same file name, or same bytes).
pub(crate) fn names_changed(r: &reach::TestReach, c: &changes::Changed) -> Option<String> {
    if c.abs.is_empty() {
        return None;
    }
    if let Some(n) = r
        .source
        .iter()
        .find(|n| **n == c.abs || paths::is_within(&c.abs, n))
    {
        return Some(if *n == c.abs {
            format!("names changed path {}", c.display)
        } else {
            format!(
                "names directory {n}, which holds changed path {}",
                c.display
            )
        });
    }
    let named = r
        .configured
        .iter()
        .find(|copy| changes::may_be_copy(copy, &c.abs));
    if let Some(copy) = named {
        return Some(format!(
            "names {copy}, which configure wrote and which may be a copy of changed path {}",
            c.display
        ));
    }
    r.copies
        .iter()
        .find(|copy| changes::may_be_copy(copy, &c.abs))
        .map(|copy| {
            format!(
                "names a directory holding {copy}, which configure wrote and which may be a copy of changed path {}",
                c.display
            )
        })
}

pub(crate) fn apply_policy(
    policy: &Policy,
    catalogue: &ingest::ctest::Catalogue,
    changed: &[changes::Changed],
) -> (Vec<Forced>, Vec<Gap>) {
    let mut forced = Vec::new();
    let mut gaps = Vec::new();
    let with_label = |label: &str| -> Vec<&str> {
        catalogue
            .tests
            .iter()
            .filter(|t| t.labels.iter().any(|l| l == label))
            .map(|t| t.name.as_str())
            .collect()
    };
    for name in &policy.always_tests {
        if catalogue.tests.iter().any(|t| &t.name == name) {
            forced.push(Forced {
                test: name.clone(),
                code: select_code::ALWAYS_RUN,
                detail: format!("policy always_run.tests lists {name:?}"),
            });
        } else {
            gaps.push(Gap::new(
                Code::PolicyTestUnknown,
                format!("always_run.tests names {name:?}, which is not registered"),
            ));
        }
    }
    for label in &policy.always_labels {
        let tests = with_label(label);
        if tests.is_empty() {
            gaps.push(Gap::new(
                Code::PolicyLabelUncovered,
                format!("always_run.labels requires label {label:?}, which no test carries"),
            ));
        }
        for t in tests {
            forced.push(Forced {
                test: t.to_owned(),
                code: select_code::ALWAYS_RUN,
                detail: format!("policy always_run.labels: label {label:?}"),
            });
        }
    }
    for (ri, rule) in policy.rules.iter().enumerate() {
        for c in changed {
            // Match the path as given and its real spelling: a symlink must not bypass a rule.
            let spellings = std::iter::once(&c.display).chain(c.real_display.as_ref());
            let Some(glob) = spellings
                .clone()
                .find_map(|p| rule.paths.iter().find(|g| policy::glob_match(g, p)))
            else {
                continue;
            };
            for label in &rule.require_labels {
                let tests = with_label(label);
                if tests.is_empty() {
                    gaps.push(Gap::new(
                        Code::PolicyLabelUncovered,
                        format!("rule {} ({glob:?} matched {}) requires label {label:?}, which no test carries", ri + 1, c.display),
                    ));
                }
                for t in tests {
                    forced.push(Forced {
                        test: t.to_owned(),
                        code: select_code::POLICY_PATH_RULE,
                        detail: format!(
                            "rule {}: {} matches {glob:?}, which requires label {label:?}",
                            ri + 1,
                            c.display
                        ),
                    });
                }
            }
        }
    }
    (forced, gaps)
}

/// Tests behind opaque boundaries: what [`opaque_tests`] found.
#[derive(Default)]
pub(crate) struct Opaque {
    /// With `opaque = "select"`: each such test, forced in.
    pub forced: Vec<Forced>,
    /// With `opaque = "select"`: the targets a forced unmapped test references.
    pub extra_reached: Vec<usize>,
    /// Without it: one gap per such test.
    pub gaps: Vec<Gap>,
}

/// Finds the tests behind opaque boundaries: unmapped tests, tests whose
/// direct targets are tainted by an opaque target, tests that name a build
/// file of unknown origin. With `select_opaque` each is forced in (and an
/// unmapped one reaches whatever its texts reference); otherwise each is a
/// gap. A test that runs another configuration's artifacts is left to the
/// configuration gaps.
pub(crate) fn opaque_tests(
    graph: &Graph<'_>,
    catalogue: &ingest::ctest::Catalogue,
    mappings: &[TestMapping],
    reaches: &[reach::TestReach],
    select_opaque: bool,
    recorded: &[bool],
) -> Opaque {
    let tainted = graph.tainted();
    let mut out = Opaque::default();
    for (ti, (test, m)) in catalogue.tests.iter().zip(mappings).enumerate() {
        if graph.foreign_config(test).is_some() {
            continue;
        }
        if recorded.get(ti).copied().unwrap_or(false) {
            continue; // its recorded run decides it (crate::recorded)
        }
        let local_gap = match m {
            TestMapping::Unmapped(g) => {
                if select_opaque {
                    // The forced test runs whatever it references: count those as reached.
                    let texts = test.command.iter().flatten().chain(test.environment.iter());
                    out.extra_reached.extend(graph.referenced_targets(texts));
                }
                Some(g.clone())
            }
            TestMapping::Mapped { direct } => direct
                .iter()
                .find_map(|d| tainted.get(d))
                .map(|origin| {
                    let why = &graph.opaque[origin];
                    Gap::new(why.code, format!("test {:?}: {}", test.name, why.detail))
                })
                .or_else(|| reaches[ti].unknown.clone()),
        };
        if let Some(g) = local_gap {
            if select_opaque {
                out.forced.push(Forced {
                    test: test.name.clone(),
                    code: select_code::OPAQUE_BOUNDARY,
                    detail: g.to_string(),
                });
            } else {
                out.gaps.push(g);
            }
        }
    }
    out
}

/// The targets every mapped test runs or loads directly, and `extra`.
pub(crate) fn test_roots(mappings: &[TestMapping], extra: &[usize]) -> Vec<usize> {
    mappings
        .iter()
        .filter_map(|m| match m {
            TestMapping::Mapped { direct } => Some(direct.iter().copied()),
            TestMapping::Unmapped(_) => None,
        })
        .flatten()
        .chain(extra.iter().copied())
        .collect()
}

/// The selection beyond the reverse walk, built in a fixed order: the tests
/// the walk selected and those forced in before it; then the tests that name
/// a changed path ([`Selection::by_named_paths`]), that may load an affected
/// binary ([`Selection::by_loading`]; a test already selected is not looked
/// at again), whose build description changed ([`Selection::by_description`]),
/// and last the data flow from every selected test ([`Selection::by_data_flow`]).
pub(crate) struct Selection<'c> {
    catalogue: &'c ingest::ctest::Catalogue,
    index: std::collections::HashMap<&'c str, usize>,
    selected: Vec<bool>,
    /// Every test forced in, with its reason.
    pub forced: Vec<Forced>,
}

impl<'c> Selection<'c> {
    /// The walk's `selected` tests and the `forced` ones.
    pub(crate) fn new(
        catalogue: &'c ingest::ctest::Catalogue,
        selected: &[usize],
        forced: Vec<Forced>,
    ) -> Self {
        let index: std::collections::HashMap<&str, usize> = (catalogue.tests.iter().enumerate())
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut is_selected = vec![false; catalogue.tests.len()];
        for &i in selected {
            is_selected[i] = true;
        }
        for f in &forced {
            if let Some(&i) = index.get(f.test.as_str()) {
                is_selected[i] = true;
            }
        }
        Selection {
            catalogue,
            index,
            selected: is_selected,
            forced,
        }
    }

    fn select(&mut self, i: usize, code: &'static str, detail: String) {
        self.selected[i] = true;
        self.forced.push(Forced {
            test: self.catalogue.tests[i].name.clone(),
            code,
            detail,
        });
    }

    /// Tests whose reach names a changed path, a directory holding one, or a
    /// configure-time copy of one ([`names_changed`]).
    pub(crate) fn by_named_paths(
        &mut self,
        reaches: &[reach::TestReach],
        changed: &[changes::Changed],
    ) {
        for (i, r) in reaches.iter().enumerate() {
            for c in changed {
                if let Some(why) = names_changed(r, c) {
                    self.select(i, select_code::NAMES_CHANGED_PATH, why);
                }
            }
        }
    }

    /// Tests not yet selected that a change-time channel finds
    /// ([`reach::change_channels`], in their order).
    pub(crate) fn by_change_channels(&mut self, cx: &reach::ChangeCx<'_, '_>) -> Vec<Gap> {
        let mut gaps = Vec::new();
        for channel in reach::change_channels() {
            let (picks, found) = channel.picks(cx, &self.selected);
            for p in picks {
                self.select(p.test, channel.code(), p.detail);
            }
            gaps.extend(found);
        }
        gaps
    }

    /// Tests whose build description changed (compare mode): (name, what changed).
    pub(crate) fn by_description(&mut self, changed: Vec<(String, String)>) {
        for (name, what) in changed {
            if let Some(&i) = self.index.get(name.as_str()) {
                self.select(
                    i,
                    select_code::BUILD_DESCRIPTION_CHANGED,
                    format!("its build description changed: {what}"),
                );
            }
        }
    }

    /// The tests a record of the base's run selects (given the selection so
    /// far); returns, per test, whether the record selected it.
    pub(crate) fn by_record(
        &mut self,
        recorded: &crate::recorded::Recorded,
        changed: &[changes::Changed],
    ) -> Vec<bool> {
        let mut picked = vec![false; self.selected.len()];
        // A test that stays selected whatever the record says: one it does not
        // cover, or one forced in by more than a static inference. A covered
        // test only inferences selected is taken out unless the record picks
        // it, and a test that does not run writes nothing its readers would see.
        let staying: Vec<bool> = (0..self.selected.len())
            .map(|i| {
                self.selected[i] && (recorded.covered[i].is_none() || self.kept_beyond_inference(i))
            })
            .collect();
        for f in recorded.select(self.catalogue, changed, &staying) {
            if let Some(&i) = self.index.get(f.test.as_str()) {
                picked[i] = true;
                self.select(i, f.code, f.detail);
            }
        }
        picked
    }

    /// Whether test `i` was forced in by more than a static inference (a
    /// policy, an opaque boundary): a record does not take it out.
    fn kept_beyond_inference(&self, i: usize) -> bool {
        const INFERRED: &[&str] = &[
            select_code::NAMES_CHANGED_PATH,
            select_code::MAY_LOAD_AFFECTED,
            select_code::BUILD_DESCRIPTION_CHANGED,
        ];
        let name = self.catalogue.tests[i].name.as_str();
        (self.forced.iter()).any(|f| f.test == name && !INFERRED.contains(&f.code))
    }

    /// Takes out each test `unaffected` marks (a record shows every input it
    /// touched unchanged) that only the static inferences selected: the walk,
    /// a named path, loading by bytes, a changed build description. A test a
    /// policy or an opaque boundary forced in stays. Returns those taken out.
    pub(crate) fn drop_unaffected(&mut self, unaffected: &[bool]) -> Vec<usize> {
        let mut dropped = Vec::new();
        for (i, &u) in unaffected.iter().enumerate() {
            if !u || !self.selected[i] || self.kept_beyond_inference(i) {
                continue;
            }
            let name = self.catalogue.tests[i].name.as_str();
            self.forced.retain(|f| f.test != name);
            self.selected[i] = false;
            dropped.push(i);
        }
        dropped
    }

    /// Closes the selection over test-to-test data flow ([`reach::data_flow`]).
    pub(crate) fn by_data_flow(&mut self, reaches: &[reach::TestReach]) {
        let shared: Vec<Vec<String>> = reaches.iter().map(|r| r.shared.clone()).collect();
        for f in reach::data_flow(self.catalogue, &self.selected, &shared) {
            self.select(f.test, select_code::TEST_DATA_FLOW, f.detail);
        }
    }
}
