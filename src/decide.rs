//! The outcome state machine (contract §2-3, §10). Pure: no I/O.
//!
//! Decisions only move towards safety: gaps accumulate and no operation
//! removes one. A subset is produced only when the accumulated gap list is
//! empty at the very end, after every audit has run.
#![deny(clippy::wildcard_enum_match_arm)]

use crate::graph::Chain;
use crate::reason::{Gap, Severity};

/// Stable exit codes (README, SAFETY-CONTRACT.md).
pub mod exit {
    /// SUBSET_SELECTED
    pub const SUBSET_SELECTED: u8 = 0;
    /// USAGE_ERROR
    pub const USAGE_ERROR: u8 = 2;
    /// FULL_SUITE_SELECTED
    pub const FULL_SUITE_SELECTED: u8 = 3;
    /// FULL_SUITE_REQUIRED
    pub const FULL_SUITE_REQUIRED: u8 = 4;
    /// SETUP_ERROR: only with `--fail-on-setup-error`, a fallback (3 or 4)
    /// whose root cause is the setup; stdout and stderr are those of 3 or 4.
    pub const SETUP_ERROR: u8 = 5;
    /// INTERNAL_ERROR (including a panic)
    pub const INTERNAL_ERROR: u8 = 70;
}

/// The five outcome states, each carrying the evidence that justifies it.
#[derive(Debug)]
pub enum Outcome {
    /// A justified subset of the known catalogue.
    SubsetSelected {
        /// Selected test names, sorted.
        selected: Vec<String>,
        /// Every registered test name, sorted.
        all: Vec<String>,
        /// One chain per (test, changed path), sorted.
        chains: Vec<Chain>,
        /// Tests added by policy or opaque boundaries, with why (sorted).
        forced: Vec<Forced>,
    },
    /// The catalogue is trusted but a subset cannot be defended: every known test.
    FullSuiteSelected {
        /// Every registered test name, sorted.
        all: Vec<String>,
        /// Why (sorted, de-duplicated, never empty).
        gaps: Vec<Gap>,
    },
    /// The catalogue cannot be trusted: no names at all.
    FullSuiteRequired {
        /// Why (sorted, de-duplicated, never empty).
        gaps: Vec<Gap>,
    },
    /// The request was not meaningful.
    UsageError(String),
    /// An invariant failed or the tool panicked.
    InternalError(String),
}

impl Outcome {
    /// The state name printed on stderr and in plans.
    pub fn state(&self) -> &'static str {
        match self {
            Outcome::SubsetSelected { .. } => "SUBSET_SELECTED",
            Outcome::FullSuiteSelected { .. } => "FULL_SUITE_SELECTED",
            Outcome::FullSuiteRequired { .. } => "FULL_SUITE_REQUIRED",
            Outcome::UsageError(_) => "USAGE_ERROR",
            Outcome::InternalError(_) => "INTERNAL_ERROR",
        }
    }

    /// The documented process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::SubsetSelected { .. } => exit::SUBSET_SELECTED,
            Outcome::FullSuiteSelected { .. } => exit::FULL_SUITE_SELECTED,
            Outcome::FullSuiteRequired { .. } => exit::FULL_SUITE_REQUIRED,
            Outcome::UsageError(_) => exit::USAGE_ERROR,
            Outcome::InternalError(_) => exit::INTERNAL_ERROR,
        }
    }
}

/// Selection reason codes (not fallback codes): why a test is in a subset.
pub mod select_code {
    /// Evidence chain from a changed path.
    pub const AFFECTED_BY_CHANGE: &str = "AFFECTED_BY_CHANGE";
    /// Policy `always_run`.
    pub const ALWAYS_RUN: &str = "ALWAYS_RUN";
    /// Policy path rule requiring a label.
    pub const POLICY_PATH_RULE: &str = "POLICY_PATH_RULE";
    /// Opaque boundary forced selection (`opaque = "select"`).
    pub const OPAQUE_BOUNDARY: &str = "OPAQUE_BOUNDARY";
    /// Test-to-test data flow: a selected test sets up, cleans up or precedes
    /// (DEPENDS) this one, or shares a RESOURCE_LOCK with it.
    pub const TEST_DATA_FLOW: &str = "TEST_DATA_FLOW";
    /// The test names a changed path (or a directory holding it) in its
    /// command, environment, working directory, REQUIRED_FILES or build.
    pub const NAMES_CHANGED_PATH: &str = "NAMES_CHANGED_PATH";
    /// The test may run or load an affected program or library by name.
    pub const MAY_LOAD_AFFECTED: &str = "MAY_LOAD_AFFECTED";
    /// A declared `[[data]]` rule lists the test for a changed data path.
    pub const DECLARED_DATA: &str = "DECLARED_DATA";
    /// A declared `[[script]]` rule: the test runs the changed script.
    pub const DECLARED_SCRIPT: &str = "DECLARED_SCRIPT";
    /// `build_config = "compare"`: the test's build-description fingerprint
    /// differs from the base snapshot's, or the test is new.
    pub const BUILD_DESCRIPTION_CHANGED: &str = "BUILD_DESCRIPTION_CHANGED";
    /// A record of the base's test run: something the test read, looked
    /// for or listed then differs now, or a selected test writes what it read.
    pub const RECORDED_INPUT_CHANGED: &str = "RECORDED_INPUT_CHANGED";
    /// Whole-run fallback.
    pub const FULL_SUITE_FALLBACK: &str = "FULL_SUITE_FALLBACK";
    /// Skip argument.
    pub const OUTSIDE_TRANSITIVE_IMPACT_SET: &str = "OUTSIDE_TRANSITIVE_IMPACT_SET";
    /// Every selection code, in declaration order.
    pub const ALL: &[&str] = &[
        AFFECTED_BY_CHANGE,
        ALWAYS_RUN,
        POLICY_PATH_RULE,
        OPAQUE_BOUNDARY,
        TEST_DATA_FLOW,
        NAMES_CHANGED_PATH,
        MAY_LOAD_AFFECTED,
        DECLARED_DATA,
        DECLARED_SCRIPT,
        BUILD_DESCRIPTION_CHANGED,
        RECORDED_INPUT_CHANGED,
        FULL_SUITE_FALLBACK,
        OUTSIDE_TRANSITIVE_IMPACT_SET,
    ];
}

/// A test forced into a subset, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Forced {
    /// Test name.
    pub test: String,
    /// A [`select_code`] constant.
    pub code: &'static str,
    /// Exact detail.
    pub detail: String,
}

/// Accumulates gaps; [`Decision::finish`] turns them into an outcome.
#[derive(Debug, Default)]
pub struct Decision {
    gaps: Vec<Gap>,
}

impl Decision {
    /// Records one reason that forbids a subset.
    pub fn require_full(&mut self, gap: Gap) {
        self.gaps.push(gap);
    }

    /// Records several.
    pub fn extend(&mut self, gaps: impl IntoIterator<Item = Gap>) {
        self.gaps.extend(gaps);
    }

    /// With nothing changed, what stands between one test and a change
    /// (a test the model cannot map, a generated source, a run-time load:
    /// [`Code::rank`] 3) affects no test: only the evidence's own gaps stay.
    pub fn nothing_changed(&mut self) {
        self.gaps.retain(|g| g.code.rank() < 3);
    }

    /// Final decision. `all` is `None` when the catalogue could not be read.
    /// `forced` tests join the selection with their own reasons.
    pub fn finish(
        mut self,
        all: Option<Vec<String>>,
        selected: Vec<String>,
        chains: Vec<Chain>,
        mut forced: Vec<Forced>,
    ) -> Outcome {
        // Root cause first (Code::rank), then by code and detail.
        self.gaps
            .sort_by(|a, b| (a.code.rank(), a).cmp(&(b.code.rank(), b)));
        self.gaps.dedup();
        let untrusted = self
            .gaps
            .iter()
            .any(|g| g.code.severity() == Severity::CatalogueUntrusted);
        match all {
            None => {
                if self.gaps.is_empty() {
                    return Outcome::InternalError(
                        "catalogue missing without a recorded reason".into(),
                    );
                }
                Outcome::FullSuiteRequired { gaps: self.gaps }
            }
            Some(_) if untrusted => Outcome::FullSuiteRequired { gaps: self.gaps },
            Some(mut all) => {
                all.sort();
                if !self.gaps.is_empty() {
                    return Outcome::FullSuiteSelected {
                        all,
                        gaps: self.gaps,
                    };
                }
                let mut selected = selected;
                selected.extend(forced.iter().map(|f| f.test.clone()));
                selected.sort();
                selected.dedup();
                forced.sort();
                forced.dedup();
                // Invariant: every selected name is a catalogue name, and every selection has a reason.
                let justified: std::collections::HashSet<&str> = chains
                    .iter()
                    .map(|c| c.test.as_str())
                    .chain(forced.iter().map(|f| f.test.as_str()))
                    .collect();
                if selected.iter().any(|s| all.binary_search(s).is_err())
                    || selected.iter().any(|s| !justified.contains(s.as_str()))
                {
                    return Outcome::InternalError("selected a test without evidence".into());
                }
                Outcome::SubsetSelected {
                    selected,
                    all,
                    chains,
                    forced,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reason::Code;

    #[test]
    fn gaps_force_full_suite_and_untrusted_catalogue_forces_required() {
        let mut d = Decision::default();
        d.require_full(Gap::new(Code::DepEvidenceStale, "x"));
        let o = d.finish(
            Some(vec!["b".into(), "a".into()]),
            vec!["a".into()],
            vec![],
            vec![],
        );
        assert!(matches!(&o, Outcome::FullSuiteSelected { all, .. } if all == &["a", "b"]));
        assert_eq!(o.exit_code(), 3);

        let mut d = Decision::default();
        d.require_full(Gap::new(Code::CtestDuplicateName, "x"));
        let o = d.finish(Some(vec!["a".into()]), vec![], vec![], vec![]);
        assert_eq!(o.exit_code(), 4);

        let o = Decision::default().finish(None, vec![], vec![], vec![]);
        assert_eq!(o.exit_code(), 70);
    }

    #[test]
    fn the_root_cause_comes_first() {
        let mut d = Decision::default();
        d.require_full(Gap::new(Code::ChangeUnknown, "README.md"));
        d.require_full(Gap::new(Code::DepCoverageIncomplete, "a.cpp"));
        d.require_full(Gap::new(Code::UnsupportedGenerator, "Xcode"));
        d.require_full(Gap::new(Code::TestCommandUnmapped, "t"));
        let Outcome::FullSuiteSelected { gaps, .. } =
            d.finish(Some(vec!["t".into()]), vec![], vec![], vec![])
        else {
            panic!("full suite expected");
        };
        let codes: Vec<&str> = gaps.iter().map(|g| g.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "UNSUPPORTED_GENERATOR",
                "DEP_COVERAGE_INCOMPLETE",
                "CHANGE_UNKNOWN",
                "TEST_COMMAND_UNMAPPED"
            ]
        );
    }

    #[test]
    fn subset_without_chain_is_internal_error() {
        let o =
            Decision::default().finish(Some(vec!["a".into()]), vec!["a".into()], vec![], vec![]);
        assert_eq!(o.exit_code(), 70);
        let o = Decision::default().finish(Some(vec!["a".into()]), vec![], vec![], vec![]);
        assert!(matches!(o, Outcome::SubsetSelected { ref selected, .. } if selected.is_empty()));
    }
}

/// One reason in a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerdictReason {
    /// Stable code (a [`select_code`] constant).
    pub code: String,
    /// Exact detail.
    pub detail: String,
    /// Evidence references (`kind:value`).
    pub evidence: Vec<String>,
}

/// One target of a test's dependency closure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosureEntry {
    /// Target name.
    pub target: String,
    /// File API type.
    pub kind: &'static str,
    /// Compiled units with audited dependency files.
    pub units: usize,
}

/// The decision for one registered test: selected with reasons, or skipped with its skip argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Test name.
    pub name: String,
    /// CTest labels.
    pub labels: Vec<String>,
    /// Selected (true) or skipped (false).
    pub selected: bool,
    /// Never empty.
    pub reasons: Vec<VerdictReason>,
    /// The test's target closure (empty when unmapped or on fallback).
    pub closure: Vec<ClosureEntry>,
}
