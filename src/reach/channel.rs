//! The channel interface. A channel is one way a test can name what it
//! runs, loads or reads beyond its executable's link closure: its texts, the
//! files those name, its closure's definitions and headers, the plugins
//! beside its programs. [`super::extend_mappings`] runs every channel of
//! its table for every mapped test, in table order, and then again, round
//! by round, for what joined the test's reach, until nothing joins.

use super::lookup::Lookup;
use super::named::Named;
use crate::ingest::ctest::Test;
use crate::ingest::file_api::Codemodel;
use crate::paths;
use crate::reason::Gap;

/// A test a change-time channel selects ([`super::ChangeChannel`]).
#[derive(Clone, Debug)]
pub struct Pick {
    /// Test index.
    pub test: usize,
    /// Why, in words.
    pub detail: String,
}

/// What a channel sees of one test.
pub(super) struct TestCx<'a, 'g, 'm> {
    /// The run's lookup tables.
    pub lookup: &'a Lookup<'g, 'm>,
    /// The test.
    pub test: &'a Test,
    /// Its working directories ([`working_dirs`]).
    pub wds: &'a [Option<String>],
    /// Each file a channel reads is read up to this many bytes (`--max-file-bytes`).
    pub max_bytes: u64,
}

/// What joined a test's reach in one round of the fixed point.
pub(super) struct Joined<'a> {
    /// Targets new in the test's direct list: programs and libraries it runs or loads.
    pub direct: &'a [usize],
    /// Targets new in the link closure of its direct list.
    pub closure: &'a [usize],
}

/// One channel. An instance serves one run, so it may keep what it read
/// (a file is read once, not once per test). Every reference it adds to
/// `out` carries the chain fragment that explains it
/// (`names artifact file libp.so`); a gap is evidence it could not read.
pub(super) trait Channel {
    /// What the test names through this channel before any target joins
    /// its reach; `direct` is its direct list so far. Channels earlier in
    /// the table have already added to `out` (a named file is read once
    /// the texts that name it were scanned).
    fn of_test(
        &mut self,
        _cx: &TestCx<'_, '_, '_>,
        _direct: &[usize],
        _out: &mut Named,
        _gaps: &mut Vec<Gap>,
    ) {
    }

    /// What the targets that joined the test's reach name.
    fn of_round(
        &mut self,
        _cx: &TestCx<'_, '_, '_>,
        _joined: &Joined<'_>,
        _out: &mut Named,
        _gaps: &mut Vec<Gap>,
    ) {
    }

    /// Whether a round could add a target for a test whose direct list is
    /// `direct` when nothing it named so far is new: when no channel says
    /// so, the rounds are skipped.
    fn may_grow(&self, _direct: &[usize]) -> bool {
        false
    }
}

/// The directories a test's relative names may be relative to: its
/// WORKING_DIRECTORY (`None` when empty) first, then each directory a
/// `cmake -E chdir` wrapper runs its program in, joined to the one before
/// it. Names are looked up against every one of them, which can only add
/// dependencies.
pub(super) fn working_dirs(test: &Test, model: &Codemodel) -> Vec<Option<String>> {
    let own = (!test.working_directory.is_empty()).then(|| test.working_directory.clone());
    let mut out = vec![own];
    let dirs = test
        .command
        .as_deref()
        .and_then(|c| crate::graph::launch(c, model.cmake_command.as_deref()).ok())
        .map(|l| l.dirs)
        .unwrap_or_default();
    for d in dirs {
        let next = if d.starts_with('/') {
            Some(paths::fold(&d))
        } else {
            out.last()
                .cloned()
                .flatten()
                .map(|w| paths::join_fold(&w, &d))
        };
        if next.is_some() && !out.contains(&next) {
            out.push(next);
        }
    }
    out
}
