//! What a test can reach at run time beyond its executable's link closure.
//!
//! The target graph says what a test's executable is built from. A test can
//! also *name* things: the program it runs may be handed a plugin's path, may
//! open a source file given as an argument, may read a file a custom command
//! wrote, may `dlopen` a library by its file name from its working directory,
//! or may consume what another test wrote. This module finds every such
//! reference that the static evidence shows, so that none of them is taken
//! for independence.
//!
//! The model (SAFETY-CONTRACT.md §4.6):
//! * **Channels.** A test's *texts* are its command (every element),
//!   ENVIRONMENT, ENVIRONMENT_MODIFICATION, WORKING_DIRECTORY and
//!   REQUIRED_FILES; the compile definitions (`defines`, and `-D` in compile
//!   fragments) of every target in its closure; and the contents of every
//!   build-tree header a unit of its closure includes (configured and
//!   generated headers). The *bytes* of every program and library it may run
//!   or load (the run-time sections of ELF files; whole files otherwise).
//! * **Names.** In texts, every absolute path (and every relative one joined
//!   to the working directory) is folded and compared with every spelling of
//!   every artifact (wherever it lives), with the build-time outputs of every
//!   target, with the build and source trees; every file-name token is
//!   compared with every artifact's file name. In bytes, file-name tokens.
//! * **What a name means.** An artifact (by path or file name) or a directory
//!   holding one at any depth (a plugin loader looks in subdirectories): the
//!   test depends on that target. A custom-command output:
//!   the test depends on the targets that list it (and so on its generator).
//!   A source-tree path: a change at or under it selects the test. A
//!   build-tree file that configure wrote (no newer than the reply index): a
//!   possible copy of a source file. A build-tree file written after
//!   configure, before the catalogue was listed, by no step the evidence
//!   shows: unknown (`TEST_READS_UNKNOWN_BUILD_FILE`).
//! * **Plugins beside a program.** A plugin (a MODULE library, or a SHARED
//!   library no target links) below a test's working directory, or below the
//!   directory of a program it runs, is reached without a name (a loader
//!   looks beside itself or in `./plugins`); so is one below a directory a
//!   binary's bytes climb to (`"/../lib/plugins"`), and any plugin when they
//!   climb by an unknown number of levels (a bare `..`, `parent_path()`).
//!
//! Matching only ever adds dependencies; an unrelated token that happens to
//! equal a file name costs precision, never safety.
//!
//! Layout: two tables of channels, each behind its interface.
//! * Before the change is known, per test ([`channel`], run by
//!   [`extend_mappings`] from the table in [`channels`]): [`texts`] (a
//!   test's command, environment, working directories), [`scripts`]
//!   (source-tree scripts those name), [`named_files`] (configure-time files
//!   those name), [`closure_texts`] (definitions and build-tree headers of
//!   what its programs are built from) and [`beside`] (plugins beside its
//!   programs). They all name through [`lookup`] and [`names`] (with
//!   [`dirs`] for named directories).
//! * After the walk, over the tests it did not select ([`change_channel`],
//!   run from [`change_channels`]): [`sourced`] (programs holding a changed
//!   path's directory as `__FILE__`) and [`loaded`] (programs naming an
//!   affected artifact they may load).
//!
//! The rest name nothing for a test on their own: [`bytes`] (the run-time
//! bytes of a binary), [`climbs`] (relative climbs in them) and [`plugins`]
//! (what is loadable, and where) serve the channels; [`flow`] closes a
//! selection over test-to-test data flow (tests, not paths).

mod beside;
mod bytes;
mod change_channel;
mod channel;
mod climbs;
mod closure_texts;
mod dirs;
mod file_texts;
mod flow;
mod loaded;
mod lookup;
mod named;
mod named_files;
mod names;
mod plugins;
mod scripts;
mod sourced;
mod texts;

pub use change_channel::{change_channels, ChangeChannel, ChangeCx};
pub use flow::{data_flow, flow_groups, Flow};
pub use loaded::{loaded_by_bytes, Loaded};
pub use lookup::Lookup;
pub use named::TestReach;
pub use sourced::{sourced_by_bytes, Holdings, Sourced};

use channel::{working_dirs, Channel, Joined, TestCx};
use named::Named;

use crate::fasthash::FastSet;
use crate::graph::{Chain, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::Codemodel;
use crate::reason::{Code, Gap};

/// The channels, in the order they run for each test: a later one sees
/// what the earlier ones named (the named files are those the texts name).
/// A new channel is a file of this module and one line here.
fn channels<'a>(
    lookup: &'a Lookup<'_, '_>,
    deps: &'a DepEvidence,
    max_bytes: u64,
    gaps: &mut Vec<Gap>,
) -> Vec<Box<dyn Channel + 'a>> {
    vec![
        Box::new(texts::Texts),
        Box::new(scripts::Scripts::default()),
        Box::new(named_files::NamedFiles::default()),
        Box::new(closure_texts::ClosureTexts::new(
            lookup, deps, max_bytes, gaps,
        )),
        Box::new(beside::Beside::default()),
    ]
}

/// Extends every mapped test's direct targets with what its channels name,
/// and returns, per test, what else they name. Every file a channel reads
/// is read up to `max_bytes`.
pub fn extend_mappings(
    lookup: &Lookup<'_, '_>,
    deps: &DepEvidence,
    catalogue: &Catalogue,
    mappings: &mut [TestMapping],
    max_bytes: u64,
) -> (Vec<TestReach>, Vec<Gap>) {
    let mut gaps = Vec::new();
    let mut channels = channels(lookup, deps, max_bytes, &mut gaps);
    let mut out = Vec::with_capacity(catalogue.tests.len());
    for (test, m) in catalogue.tests.iter().zip(mappings.iter_mut()) {
        let TestMapping::Mapped { direct } = m else {
            out.push(TestReach::default());
            continue;
        };
        let wds = working_dirs(test, lookup.model);
        let cx = TestCx {
            lookup,
            test,
            wds: &wds,
            max_bytes,
        };
        out.push(reach_of(&cx, &mut channels, direct, &mut gaps));
    }
    (out, gaps)
}

/// One test's reach: every channel on the test, then rounds to a fixed
/// point (a target that joins brings its closure's texts, and a program
/// that joins the plugins beside it).
fn reach_of(
    cx: &TestCx<'_, '_, '_>,
    channels: &mut [Box<dyn Channel + '_>],
    direct: &mut Vec<usize>,
    gaps: &mut Vec<Gap>,
) -> TestReach {
    let mut named = Named::default();
    for c in channels.iter_mut() {
        c.of_test(cx, direct, &mut named, gaps);
    }
    let mut via: Vec<(usize, String)> = Vec::new();
    let quiet = named.targets.iter().all(|(t, _)| direct.contains(t))
        && !channels.iter().any(|c| c.may_grow(direct));
    // Closure targets already shown to the channels; direct[shown..] are not yet.
    let mut done: FastSet<usize> = FastSet::default();
    let mut shown = 0;
    if !quiet {
        loop {
            let closure: Vec<usize> = (cx.lookup.graph.closure(direct).into_iter())
                .filter(|&t| done.insert(t))
                .collect();
            let joined = Joined {
                direct: &direct[shown..],
                closure: &closure,
            };
            for c in channels.iter_mut() {
                c.of_round(cx, &joined, &mut named, gaps);
            }
            shown = direct.len();
            let mut grew = false;
            for (t, why) in &named.targets {
                if !direct.contains(t) {
                    direct.push(*t);
                    via.push((*t, why.clone()));
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
    }
    let mut r = TestReach {
        source: named.source,
        configured: named.configured,
        copies: named.copies,
        via,
        unknown: None,
        shared: named.shared,
    };
    r.shared.sort();
    r.shared.dedup();
    r.source.sort();
    r.source.dedup();
    r.configured.sort();
    r.configured.dedup();
    r.copies.sort();
    r.copies.dedup();
    r.via.sort();
    r.via.dedup_by_key(|(t, _)| *t);
    named.unknown.sort();
    named.unknown.dedup();
    if let Some(u) = named.unknown.first() {
        r.unknown = Some(Gap::new(
            Code::TestReadsUnknownBuildFile,
            format!(
                "test {:?} {u}, which a build step wrote after configure and no target in the evidence produces",
                cx.test.name
            ),
        ));
    }
    r
}

/// Each chain says why its test reaches its last target when a channel
/// made that target one of the test's direct targets.
pub fn explain_chains(
    chains: &mut [Chain],
    reaches: &[TestReach],
    catalogue: &Catalogue,
    model: &Codemodel,
) {
    if reaches.iter().all(|r| r.via.is_empty()) {
        return;
    }
    let index: crate::fasthash::FastMap<&str, usize> = (catalogue.tests.iter().enumerate())
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    for c in chains {
        let Some(&ti) = index.get(c.test.as_str()) else {
            continue;
        };
        if let Some((_, why)) = reaches[ti]
            .via
            .iter()
            .find(|(t, _)| c.targets.last() == Some(&model.targets[*t].name))
        {
            c.reached = why.clone();
        }
    }
}
