//! The tables every channel names things against: build-time outputs and
//! loadable artifacts by path (sorted, for directory queries), artifact file
//! names, plugins, and what each named build-tree path is (a directory, or a
//! file written by configure, by the build, or by a test), each looked up
//! once per run.

use std::time::SystemTime;

use super::bytes::odd_names;
use super::plugins::{modules_below, plugin_like, sorted_loadable};
use crate::fasthash::FastMap;
use crate::graph::Graph;
use crate::ingest::file_api::Codemodel;
use crate::paths;

/// How a named build-tree path exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Missing,
    Dir,
    /// A file no newer than the reply index: written by configure.
    ConfigureTime,
    /// A file written after configure and before the catalogue was listed.
    BuildTime,
    /// A file written after the catalogue was listed, or during the last
    /// recorded ctest run (a test's own output).
    AfterListing,
}

/// Lookup tables over one codemodel, for naming.
pub struct Lookup<'g, 'm> {
    pub(super) graph: &'g Graph<'m>,
    pub(super) model: &'m Codemodel,
    /// Build-time output → targets that list it.
    pub(super) outputs: FastMap<&'g str, Vec<usize>>,
    /// Every output, sorted (directory prefix queries).
    pub(super) sorted_outputs: Vec<&'g str>,
    /// Every spelling of every loadable artifact with its owner, sorted
    /// (directory prefix queries: a plugin loader looks in subdirectories).
    pub(super) sorted_loadable: Vec<(String, usize)>,
    /// Artifact file names with bytes outside [`is_name_byte`](super::bytes::is_name_byte), searched as substrings.
    pub(super) odd_names: Vec<(&'g String, &'g Vec<usize>)>,
    /// Per target: whether it is only ever loaded ([`plugin_like`](super::plugins::plugin_like)).
    pub(super) plugins: Vec<bool>,
    /// Modification time of the catalogue (test outputs are newer).
    pub(super) listed: Option<SystemTime>,
    /// When the last ctest run in the build tree started and ended: the
    /// creation and modification times of `Testing/Temporary/LastTest.log`,
    /// which ctest creates anew when a run starts and writes until it ends.
    pub(super) test_run: Option<(SystemTime, SystemTime)>,
    pub(super) stat_cache: std::cell::RefCell<FastMap<String, Kind>>,
    /// What each named build-tree directory holds that no artifact or
    /// output explains (`Lookup::unexplained_in`, in `dirs`), walked once.
    pub(super) dir_cache: std::cell::RefCell<FastMap<String, std::rc::Rc<Unexplained>>>,
    /// What a scripted test's file names, by (file, the directory relative
    /// names are joined to): tests that run one script, or pass one data
    /// file, share one scan (`Lookup::script_targets`).
    pub(super) file_scans:
        std::cell::RefCell<FastMap<(String, String), std::rc::Rc<super::named::Named>>>,
}

impl<'g, 'm> Lookup<'g, 'm> {
    /// Builds the tables. `listed` is the catalogue file's modification time.
    pub fn new(graph: &'g Graph<'m>, listed: Option<SystemTime>) -> Self {
        let model = graph.model();
        let mut outputs: FastMap<&'g str, Vec<usize>> = FastMap::default();
        for (i, t) in model.targets.iter().enumerate() {
            for g in &t.generated {
                outputs.entry(g.as_str()).or_default().push(i);
            }
        }
        // What custom commands write that the codemodel does not list
        // (a custom target's byproducts).
        for (g, i) in graph.custom_outputs() {
            let owners = outputs.entry(g.as_str()).or_default();
            if !owners.contains(i) {
                owners.push(*i);
            }
        }
        let mut sorted_outputs: Vec<&'g str> = outputs.keys().copied().collect();
        sorted_outputs.sort_unstable();
        let sorted_loadable = sorted_loadable(graph);
        let plugins = plugin_like(graph);
        let odd_names = odd_names(graph.artifact_names());
        let test_run = last_test_run(model);
        Lookup {
            graph,
            model,
            outputs,
            sorted_outputs,
            sorted_loadable,
            odd_names,
            plugins,
            listed,
            test_run,
            stat_cache: Default::default(),
            dir_cache: Default::default(),
            file_scans: Default::default(),
        }
    }

    pub(super) fn kind(&self, path: &str) -> Kind {
        if let Some(k) = self.stat_cache.borrow().get(path) {
            return *k;
        }
        let k = match std::fs::metadata(path) {
            Err(_) => Kind::Missing,
            Ok(m) if m.is_dir() => Kind::Dir,
            Ok(m) => {
                let t = m.modified().ok();
                match (t, self.model.reply_time, self.listed) {
                    (Some(t), Some(r), _) if t <= r => Kind::ConfigureTime,
                    (Some(t), _, Some(l)) if t > l => Kind::AfterListing,
                    (Some(t), _, _)
                        if self.test_run.is_some_and(|(from, to)| from < t && t <= to)
                            && !runnable(path, &m) =>
                    {
                        Kind::AfterListing
                    }
                    _ => Kind::BuildTime,
                }
            }
        };
        self.stat_cache.borrow_mut().insert(path.to_owned(), k);
        k
    }

    /// The loadable artifacts and the build-time outputs at any depth under
    /// `dir` (two prefix queries on the sorted tables), with their owners:
    /// (owner, path, whether it is an artifact rather than an output).
    pub(super) fn under<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Iterator<Item = (usize, &'a str, bool)> + 'a {
        let artifacts = paths::at_or_below(&self.sorted_loadable, |(a, _)| a.as_str(), dir)
            .map(|(a, o)| (*o, a.as_str(), true));
        let outputs = paths::at_or_below(&self.sorted_outputs, |o| o, dir)
            .flat_map(move |o| self.outputs[o].iter().map(move |&t| (t, *o, false)));
        artifacts.chain(outputs)
    }

    /// The plugins below `dir` ([`modules_below`]).
    pub(super) fn modules_under<'a>(&'a self, dir: &'a str) -> Vec<(usize, &'a str)> {
        modules_below(self.model, &self.sorted_loadable, &self.plugins, dir)
    }
}

/// Whether a file could be run: an exec bit, an ELF header or `#!`. A
/// program is never taken for a test's output (a build product the evidence
/// does not show, linked just before ctest started, would be).
fn runnable(path: &str, m: &std::fs::Metadata) -> bool {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    if m.permissions().mode() & 0o111 != 0 {
        return true;
    }
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n].starts_with(b"\x7fELF") || head[..n].starts_with(b"#!")
}

/// The last recorded ctest run of the build tree, as a window a test's
/// output may have been written in: from when `Testing/Temporary/LastTest.log`
/// was created (ctest creates it anew a few milliseconds after a run starts:
/// one second earlier, for the tests it started first), but not before the
/// newest artifact of the build (the build ran before the tests), to when it
/// was last written (as the run ends). `None` without the log or a creation
/// time (a file system that keeps none).
fn last_test_run(model: &Codemodel) -> Option<(SystemTime, SystemTime)> {
    let log = format!("{}/Testing/Temporary/LastTest.log", model.build_root);
    let m = std::fs::metadata(log).ok()?;
    let (created, to) = (m.created().ok()?, m.modified().ok()?);
    let mut from = created.checked_sub(std::time::Duration::from_secs(1))?;
    for t in &model.targets {
        for a in &t.artifacts {
            if let Ok(built) = std::fs::metadata(a).and_then(|m| m.modified()) {
                from = from.max(built);
            }
        }
    }
    (from < to).then_some((from, to))
}

/// Files under a named directory that a program could load or run (ELF
/// executables and shared objects, `#!` scripts) and that neither an
/// artifact nor a build-time output of the evidence is, by when they were
/// written ([`Kind`]): by configure (possible copies of source files), or by
/// a build step the evidence does not show (a `POST_BUILD` copy of a plugin).
#[derive(Default)]
pub(super) struct Unexplained {
    /// Files reached through a symlink that are an artifact or an output:
    /// (its owner, how it was reached).
    pub(super) links: Vec<(usize, String)>,
    pub(super) configured: Vec<String>,
    /// Configure-time files that no program loads or runs (data): possible
    /// copies of source files.
    pub(super) copies: Vec<String>,
    pub(super) build_time: Vec<String>,
}
