//! Change-time channels: ways a test may reach what changed that only the
//! change tells, so they run after the walk, over the tests it did not
//! select. Each scans the run-time bytes of what a test runs or loads:
//! - [`SourcePaths`]: a program holds a changed path's directory as
//!   `__FILE__` (a test reading a file beside its source), for a changed
//!   path a declaration let through ([`super::sourced::sourced_by_bytes`]);
//! - [`Loading`]: a program names an affected plugin or library it may load
//!   at run time ([`super::loaded::loaded_by_bytes`]).
//!
//! The table ([`change_channels`]) is run in order, each channel seeing the
//! tests the ones before it selected.

use crate::changes::Changed;
use crate::decide::select_code;
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::reason::Gap;

/// What every change-time channel looks at.
pub struct ChangeCx<'a, 'g> {
    /// The target graph.
    pub graph: &'a Graph<'g>,
    /// The catalogue.
    pub catalogue: &'a Catalogue,
    /// Each test's mapping.
    pub mappings: &'a [TestMapping],
    /// The changed paths, classified.
    pub changed: &'a [Changed],
    /// Per target: affected by the change (the walk, and changed build
    /// descriptions).
    pub affected: &'a [bool],
    /// `--max-file-bytes`.
    pub max_bytes: u64,
}

/// A test a change-time channel selects.
pub struct Pick {
    /// Test index.
    pub test: usize,
    /// Why, in words.
    pub detail: String,
}

/// A change-time channel.
pub trait ChangeChannel {
    /// The selection code its picks carry ([`select_code`]).
    fn code(&self) -> &'static str;
    /// The tests not `selected` yet that it finds, and its gaps.
    fn picks(&self, cx: &ChangeCx<'_, '_>, selected: &[bool]) -> (Vec<Pick>, Vec<Gap>);
}

/// A program holds a changed path's directory as `__FILE__`.
pub struct SourcePaths;

impl ChangeChannel for SourcePaths {
    fn code(&self) -> &'static str {
        select_code::NAMES_CHANGED_PATH
    }

    fn picks(&self, cx: &ChangeCx<'_, '_>, selected: &[bool]) -> (Vec<Pick>, Vec<Gap>) {
        let (found, gaps) = super::sourced::sourced_by_bytes(
            cx.graph,
            cx.catalogue,
            cx.mappings,
            cx.changed,
            selected,
            cx.max_bytes,
        );
        let picks = (found.into_iter())
            .map(|s| Pick {
                test: s.test,
                detail: s.detail,
            })
            .collect();
        (picks, gaps)
    }
}

/// A program names an affected artifact it may load at run time.
pub struct Loading;

impl ChangeChannel for Loading {
    fn code(&self) -> &'static str {
        select_code::MAY_LOAD_AFFECTED
    }

    fn picks(&self, cx: &ChangeCx<'_, '_>, selected: &[bool]) -> (Vec<Pick>, Vec<Gap>) {
        let (loaded, gaps) = super::loaded::loaded_by_bytes(
            cx.graph,
            cx.catalogue,
            cx.mappings,
            cx.affected,
            selected,
        );
        let picks = (loaded.into_iter())
            .map(|l| Pick {
                test: l.test,
                detail: l.detail,
            })
            .collect();
        (picks, gaps)
    }
}

/// Every change-time channel, in the order they run.
pub fn change_channels() -> Vec<Box<dyn ChangeChannel>> {
    vec![Box::new(SourcePaths), Box::new(Loading)]
}
