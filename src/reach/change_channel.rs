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

pub use super::channel::Pick;

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
    /// The targets the change affects (the walk's, and those whose build
    /// description changed), sorted.
    pub affected: &'a [usize],
    /// `--max-file-bytes`.
    pub max_bytes: u64,
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
        super::sourced::sourced_by_bytes(
            cx.graph,
            cx.catalogue,
            cx.mappings,
            cx.changed,
            selected,
            cx.max_bytes,
        )
    }
}

/// A program names an affected artifact it may load at run time.
pub struct Loading;

impl ChangeChannel for Loading {
    fn code(&self) -> &'static str {
        select_code::MAY_LOAD_AFFECTED
    }

    fn picks(&self, cx: &ChangeCx<'_, '_>, selected: &[bool]) -> (Vec<Pick>, Vec<Gap>) {
        let mut affected = vec![false; cx.graph.model().targets.len()];
        for &t in cx.affected {
            affected[t] = true;
        }
        super::loaded::loaded_by_bytes(cx.graph, cx.catalogue, cx.mappings, &affected, selected)
    }
}

/// Every change-time channel, in the order they run.
pub fn change_channels() -> Vec<Box<dyn ChangeChannel>> {
    vec![Box::new(SourcePaths), Box::new(Loading)]
}
