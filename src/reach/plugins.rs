//! Plugins: the targets that are only ever loaded (a MODULE library, or a
//! SHARED library no target links), and where they lie, so that a program
//! that looks in a directory without naming what it loads (beside itself,
//! in `./plugins`, where a climb ends) is taken to load them.

use crate::fasthash::FastSet;
use crate::graph::Graph;
use crate::ingest::file_api::{Codemodel, Target, TargetKind};
use crate::paths;

/// Every spelling of every loadable artifact with its owner, sorted.
pub(super) fn sorted_loadable(graph: &Graph<'_>) -> Vec<(String, usize)> {
    let model = graph.model();
    let mut sorted: Vec<(String, usize)> = graph
        .artifact_spellings()
        .iter()
        .flat_map(|(path, owners)| {
            owners
                .iter()
                .copied()
                .filter(|&o| is_loadable(model.targets[o].kind))
                .map(move |o| (path.to_owned(), o))
        })
        .collect();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
}

/// Per target: whether it is only ever loaded, never linked: a MODULE
/// library, or a SHARED library that no target of the build depends on (a
/// plugin built as a shared library; a library that something links, or
/// waits for, is not taken for one).
pub(super) fn plugin_like(graph: &Graph<'_>) -> Vec<bool> {
    let model = graph.model();
    (0..model.targets.len())
        .map(|t| match model.targets[t].kind {
            TargetKind::ModuleLibrary => true,
            TargetKind::SharedLibrary => graph.dependents_of(t).is_empty(),
            _ => false,
        })
        .collect()
}

/// The plugins (`plugins[t]`, [`plugin_like`]) whose artifact lies in `dir` or below it, each with
/// one spelling of its artifact (sorted by spelling, each target once), from
/// `sorted` (every spelling of every loadable artifact with its owner,
/// sorted). A directory outside the build tree does not reach into a build
/// tree nested below it (`WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}` with the
/// build in `<source>/build`): a loader there looks in a subdirectory it
/// knows, and the build directory's name is no such thing.
pub(super) fn modules_below<'a>(
    model: &Codemodel,
    sorted: &'a [(String, usize)],
    plugins: &[bool],
    dir: &str,
) -> Vec<(usize, &'a str)> {
    let mut seen: FastSet<usize> = FastSet::default();
    let build = model.build_root.as_str();
    let outside = !paths::is_within(dir, build);
    paths::at_or_below(sorted, |(a, _)| a.as_str(), dir)
        .filter(|(a, o)| plugins[*o] && !(outside && paths::is_within(a, build)) && seen.insert(*o))
        .map(|(a, o)| (*o, a.as_str()))
        .collect()
}

/// Each artifact of `target` when it is a program, with its directory.
pub(super) fn program_dirs(target: &Target) -> impl Iterator<Item = (&str, &str)> {
    let program = target.kind == TargetKind::Executable;
    target
        .artifacts
        .iter()
        .filter(move |a| program && a.contains('/'))
        .map(|a| (a.as_str(), dir_of(a)))
}

/// The directory an (absolute) artifact path is in; `/` for one at the root.
pub(super) fn dir_of(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((d, _)) => d,
    }
}

pub(super) fn is_loadable(kind: TargetKind) -> bool {
    matches!(
        kind,
        TargetKind::Executable | TargetKind::SharedLibrary | TargetKind::ModuleLibrary
    )
}
