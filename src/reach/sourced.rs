//! Data a test finds from its own source path (`__FILE__`): a program whose
//! run-time bytes hold an absolute source-tree path (what `__FILE__`
//! expands to, in `.rodata`) may read files below that path's directory by
//! names it holds too (`dirname(__FILE__) + "/data/input.txt"`). A changed
//! path that no dependency evidence knows and a declaration let through (a
//! `[[data]]` rule, a boundary) selects a test when the bytes of what it runs
//! (its programs and the libraries they link) hold a source path whose
//! directory holds the changed path, and the changed path's file name.

use super::bytes::{is_name_byte, runtime_bytes};
use crate::changes::{Changed, Class};
use crate::fasthash::{FastMap, FastSet};
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::paths;
use crate::reason::{Code, Gap};

/// A test that may read a changed path from its own source directory.
pub type Sourced = super::channel::Pick;

/// What one binary's run-time bytes hold: the directories of the absolute
/// source-tree paths in them, and their name tokens.
#[derive(Default)]
struct Held {
    dirs: Vec<String>,
    names: FastSet<String>,
}

fn held(bytes: &[u8], scope_root: &str) -> Held {
    let mut h = Held::default();
    let root = scope_root.as_bytes();
    let path_byte = |b: u8| is_name_byte(b) || b == b'/';
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(root)
            && (i == 0 || !path_byte(bytes[i - 1]))
            && bytes.get(i + root.len()) == Some(&b'/')
        {
            let mut j = i + root.len();
            while j < bytes.len() && path_byte(bytes[j]) {
                j += 1;
            }
            if let Ok(p) = std::str::from_utf8(&bytes[i..j]) {
                let p = paths::fold(p);
                if let Some((dir, _)) = p.rsplit_once('/') {
                    if paths::is_within(dir, scope_root) {
                        h.dirs.push(dir.to_owned());
                    }
                }
            }
            i = j;
            continue;
        }
        i += 1;
    }
    for run in bytes.split(|&b| !is_name_byte(b)) {
        if !run.is_empty() && run.len() <= 255 {
            if let Ok(s) = std::str::from_utf8(run) {
                h.names.insert(s.to_owned());
            }
        }
    }
    h.dirs.sort();
    h.dirs.dedup();
    h
}

/// Tests not yet selected whose programs may read a changed path from their
/// own source directory (see the module documentation).
pub fn sourced_by_bytes(
    graph: &Graph<'_>,
    catalogue: &Catalogue,
    mappings: &[TestMapping],
    changed: &[Changed],
    selected: &[bool],
    max_bytes: u64,
) -> (Vec<Sourced>, Vec<Gap>) {
    let model = graph.model();
    // Changed paths let through by a declaration, not by dependency evidence.
    let candidates: Vec<&Changed> = changed
        .iter()
        .filter(|c| c.class == Class::Unresolved && c.gap.is_none() && !c.abs.is_empty())
        .collect();
    let mut out = Vec::new();
    let mut gaps = Vec::new();
    if candidates.is_empty() {
        return (out, gaps);
    }
    let mut cache: FastMap<String, Option<Held>> = FastMap::default();
    for (ti, m) in mappings.iter().enumerate() {
        let (false, TestMapping::Mapped { direct }) = (selected[ti], m) else {
            continue;
        };
        let mut hit: Option<String> = None;
        'targets: for t in graph.closure(direct) {
            for a in &model.targets[t].artifacts {
                let h =
                    cache
                        .entry(a.clone())
                        .or_insert_with(|| match runtime_bytes(a, max_bytes) {
                            Ok(b) => Some(held(&b, model.scope_root())),
                            Err(_) if std::fs::metadata(a).is_err() => None,
                            Err(e) => {
                                gaps.push(Gap::new(
                                    Code::RuntimeLoadedTarget,
                                    format!(
                                    "{a} cannot be read to see which source paths it holds: {e}"
                                ),
                                ));
                                None
                            }
                        });
                let Some(h) = h else { continue };
                for c in &candidates {
                    let name = c.abs.rsplit('/').next().unwrap_or(&c.abs);
                    if !h.names.contains(name) {
                        continue;
                    }
                    if let Some(d) = h.dirs.iter().find(|d| paths::is_within(&c.abs, d)) {
                        hit = Some(format!(
                            "{} holds source path {}/… (as __FILE__ does) and the name {name} of changed path {}: it may read it from its source directory",
                            paths::relative_to(a, &model.build_root),
                            paths::relative_to(d, &model.source_root),
                            c.display
                        ));
                        break 'targets;
                    }
                }
            }
        }
        if let Some(detail) = hit {
            out.push(Sourced { test: ti, detail });
        }
    }
    let _ = catalogue;
    gaps.sort_by(|a, b| a.detail.cmp(&b.detail));
    gaps.dedup_by(|a, b| a.detail == b.detail);
    (out, gaps)
}

/// What the run-time bytes of every binary the mapped tests run or load
/// hold (each binary scanned once): for `unreferenced_paths = "skip"`.
pub struct Holdings {
    binaries: Vec<(String, Held)>,
    /// Binaries that could not be read (nothing may then be skipped).
    pub gaps: Vec<Gap>,
}

impl Holdings {
    /// Scans the closure binaries of every mapped test.
    pub fn scan(graph: &Graph<'_>, mappings: &[TestMapping], max_bytes: u64) -> Self {
        let model = graph.model();
        let mut direct: Vec<usize> = mappings
            .iter()
            .filter_map(|m| match m {
                TestMapping::Mapped { direct } => Some(direct.iter().copied()),
                TestMapping::Unmapped(_) => None,
            })
            .flatten()
            .collect();
        direct.sort_unstable();
        direct.dedup();
        let mut binaries: Vec<(String, Held)> = Vec::new();
        let mut gaps = Vec::new();
        let mut seen: FastSet<&str> = FastSet::default();
        let mut done: FastSet<usize> = FastSet::default();
        // To a fixed point: a program another scanned binary names by its file
        // name (it may run it: a helper beside itself) is scanned like the closure.
        let mut roots = direct;
        while !roots.is_empty() {
            let before = binaries.len();
            for t in graph.closure(&roots) {
                if !done.insert(t) {
                    continue;
                }
                for a in &model.targets[t].artifacts {
                    if !seen.insert(a.as_str()) {
                        continue;
                    }
                    match runtime_bytes(a, max_bytes) {
                        Ok(b) => binaries.push((a.clone(), held(&b, model.scope_root()))),
                        Err(_) if std::fs::metadata(a).is_err() => {}
                        Err(e) => gaps.push(Gap::new(
                            Code::ChangeUnknown,
                            format!("{a} cannot be read to see which names it holds: {e}"),
                        )),
                    }
                }
            }
            roots = (model.targets.iter().enumerate())
                .filter(|(t, _)| !done.contains(t))
                .filter(|(_, target)| {
                    target.artifacts.iter().any(|a| {
                        let name = a.rsplit('/').next().unwrap_or(a);
                        binaries[before..]
                            .iter()
                            .any(|(_, h)| h.names.contains(name))
                    })
                })
                .map(|(t, _)| t)
                .collect();
        }
        binaries.sort_by(|a, b| a.0.cmp(&b.0));
        Holdings { binaries, gaps }
    }

    /// The first binary that holds `abs`'s file name, or a source path
    /// whose directory holds `abs` (it may find files below its own source
    /// directory by computed names), in words.
    pub fn referencing(&self, abs: &str, build_root: &str, source_root: &str) -> Option<String> {
        self.holding_name(abs, build_root)
            .or_else(|| self.holding_source_dir(abs, build_root, source_root))
    }

    /// The first binary that holds `abs`'s file name, in words.
    pub fn holding_name(&self, abs: &str, build_root: &str) -> Option<String> {
        let name = abs.rsplit('/').next().unwrap_or(abs);
        self.binaries
            .iter()
            .find(|(_, h)| h.names.contains(name))
            .map(|(a, _)| {
                format!(
                    "{} holds its file name {name}",
                    paths::relative_to(a, build_root)
                )
            })
    }

    /// The first binary that holds a source path whose directory holds
    /// `abs` (it may find files below its own source directory by computed
    /// names), in words.
    pub fn holding_source_dir(
        &self,
        abs: &str,
        build_root: &str,
        source_root: &str,
    ) -> Option<String> {
        self.binaries.iter().find_map(|(a, h)| {
            let d = h.dirs.iter().find(|d| paths::is_within(abs, d))?;
            let dir = match paths::relative_to(d, source_root) {
                r if r.is_empty() => ".".to_owned(),
                r => r,
            };
            Some(format!(
                "{} holds source path {dir}/… (as __FILE__ does): it may find files below that directory",
                paths::relative_to(a, build_root)
            ))
        })
    }
}
