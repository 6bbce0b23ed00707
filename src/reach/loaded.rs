//! Loading by bytes: the tests that may run or load an affected program or
//! library through a program or library they run or load. A binary may
//! load what its run-time bytes name ([`super::bytes`]), the plugins beside
//! it and below where its climbs end ([`super::climbs`]); a walk over those
//! edges and the link graph says which unselected tests reach an affected
//! loadable target, with the chain that shows how.

use super::bytes::{scan_target_binaries, Scanner};
use super::channel::working_dirs;
use super::climbs::{relative_climb, Climb};
use super::plugins::{
    dir_of, is_loadable, modules_below, plugin_like, program_dirs, sorted_loadable,
};
use crate::fasthash::{FastMap, FastSet};
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::file_api::{Codemodel, TargetKind};
use crate::paths;
use crate::reason::Gap;

/// What the loading-by-bytes walk of one run has found so far: each
/// target's scan ([`scan_target_binaries`], done once), the gaps, and the
/// edges that need a word of why in a chain (`(t, o)` → why: a climbing
/// path, or a linked library's own directory).
struct Scans<'n> {
    scanner: Scanner<'n>,
    scanned: FastMap<usize, (Vec<usize>, Vec<Climb>)>,
    gaps: Vec<Gap>,
    edge_why: FastMap<(usize, usize), String>,
}

impl Scans<'_> {
    /// [`scan_target_binaries`] of `t`, once per run.
    fn of(&mut self, model: &Codemodel, t: usize) -> &(Vec<usize>, Vec<Climb>) {
        let Scans {
            scanner,
            scanned,
            gaps,
            ..
        } = self;
        scanned
            .entry(t)
            .or_insert_with(|| scan_target_binaries(model, t, scanner, gaps))
    }
}

/// What target `t`'s binaries may load or run: the loadable targets whose
/// artifact file names its run-time bytes hold ([`scan_target_binaries`]);
/// the plugins ([`plugin_like`]) below every directory those bytes name by
/// climbing from the binary's own directory (`"/../lib/plugins"`); and, for
/// a program, the plugins below its directory (a loader looks beside
/// itself, SAFETY-CONTRACT §4.6; so may a shared library that some target
/// links, from its own directory) and below every directory that the bytes
/// of a shared library it links name by climbing from the program's
/// directory (a plugin manager in a library that starts from
/// `/proc/self/exe`), sorted.
fn may_load(
    graph: &Graph<'_>,
    (sorted, plugins): (&[(String, usize)], &[bool]),
    t: usize,
    scans: &mut Scans<'_>,
) -> Vec<usize> {
    let model = graph.model();
    let (mut found, own_climbs) = scans.of(model, t).clone();
    let target = &model.targets[t];
    let own_dirs: Vec<&str> = target.artifacts.iter().map(|a| dir_of(a)).collect();
    let program_dirs: Vec<&str> = program_dirs(target).map(|(_, d)| d).collect();
    // Where t may look for plugins without a name, each with the word of why
    // its chain needs (none for a program's own directory).
    let mut looks: Vec<(String, Option<String>)> =
        program_dirs.iter().map(|d| (d.to_string(), None)).collect();
    // A linked shared library may look beside itself too (`dladdr`); a
    // plugin is not taken to load its siblings.
    if target.kind == TargetKind::SharedLibrary && !plugins[t] {
        looks.extend(own_dirs.iter().map(|d| {
            (
                d.to_string(),
                Some(format!("below {d}, the directory of this library")),
            )
        }));
    }
    // Climbing paths: t's own, from its directory; for a program, those of
    // the shared libraries it links, from the program's directory. An
    // unbounded climb (in t's bytes, or for a program in a linked library's)
    // may end anywhere: every plugin.
    let mut anywhere: Option<String> = None;
    let mut take = |cs: &[Climb], bases: &[&str], whose: &str| {
        for c in cs {
            match c {
                Climb::Path(climb) => looks.extend(bases.iter().map(|base| {
                    let dir = paths::join_fold(base, climb.trim_start_matches('/'));
                    let why = format!("below {dir}, which {climb:?} in {whose} bytes names");
                    (dir, Some(why))
                })),
                Climb::Anywhere(what) => {
                    anywhere.get_or_insert_with(|| {
                        format!("any plugin: {what} in {whose} bytes climbs out of every directory it starts from")
                    });
                }
            }
        }
    };
    take(&own_climbs, &own_dirs, "its");
    if !program_dirs.is_empty() {
        for l in graph.closure(&[t]) {
            if l != t && model.targets[l].kind == TargetKind::SharedLibrary {
                let whose = format!("linked library {:?}'s", model.targets[l].name);
                let lib_climbs = scans.of(model, l).1.clone();
                take(&lib_climbs, &program_dirs, &whose);
            }
        }
    }
    let mut seen: FastSet<usize> = found.iter().copied().collect();
    seen.insert(t);
    if let Some(why) = &anywhere {
        for o in (0..model.targets.len()).filter(|&o| plugins[o]) {
            if seen.insert(o) {
                scans.edge_why.insert((t, o), why.clone());
                found.push(o);
            }
        }
    }
    for (dir, why) in &looks {
        for (o, _) in modules_below(model, sorted, plugins, dir) {
            if seen.insert(o) {
                if let Some(why) = why {
                    scans.edge_why.insert((t, o), why.clone());
                }
                found.push(o);
            }
        }
    }
    found.sort_unstable();
    found
}

/// One test selected because it may load an affected program or library
/// (its detail: which of its programs names which affected artifact).
pub type Loaded = super::channel::Pick;

/// One walk over dependency and mention edges from every unselected test's
/// targets (scanning each binary once, into `mentions`): which targets it
/// visits, and each target's predecessors in it.
fn walk_unselected<'n>(
    graph: &Graph<'_>,
    mappings: &[TestMapping],
    selected: &[bool],
    (sorted, plugins): (&[(String, usize)], &[bool]),
    (mentions, scans): (&mut FastMap<usize, Vec<usize>>, &mut Scans<'n>),
) -> (Vec<bool>, Vec<Vec<usize>>) {
    let model = graph.model();
    let n = model.targets.len();
    let mut visited = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    for (ti, m) in mappings.iter().enumerate() {
        if let (false, TestMapping::Mapped { direct }) = (selected[ti], m) {
            stack.extend(direct.iter().copied());
        }
    }
    let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n];
    while let Some(t) = stack.pop() {
        if std::mem::replace(&mut visited[t], true) {
            continue;
        }
        let mut next: Vec<usize> = graph.deps_of(t).to_vec();
        if is_loadable(model.targets[t].kind) {
            let named = mentions
                .entry(t)
                .or_insert_with(|| may_load(graph, (sorted, plugins), t, scans));
            next.extend(named.iter().copied());
        }
        for d in next {
            rev[d].push(t);
            if !visited[d] {
                stack.push(d);
            }
        }
    }
    (visited, rev)
}

/// Why a binary may load another (`(t, o)` → why), for a chain's words.
type EdgeWhy = FastMap<(usize, usize), String>;

/// The targets each target of a walk was reached from (`rev`), walked
/// back from `from`: which targets reach one of them.
fn reverse_reach(rev: &[Vec<usize>], from: Vec<usize>) -> Vec<bool> {
    let mut hit = vec![false; rev.len()];
    let mut queue = from;
    while let Some(t) = queue.pop() {
        if std::mem::replace(&mut hit[t], true) {
            continue;
        }
        queue.extend(rev[t].iter().copied().filter(|&p| !hit[p]));
    }
    hit
}

/// In words: how a test's walk reached affected target `h` (`parent`: each
/// target's predecessor), each step with why it loads the next.
fn load_chain(
    model: &Codemodel,
    h: usize,
    parent: &FastMap<usize, usize>,
    (wd_why, edge_why): (&EdgeWhy, &EdgeWhy),
) -> String {
    let mut via = vec![h];
    let mut cur = h;
    while let Some(&p) = parent.get(&cur) {
        via.push(p);
        cur = p;
        if via.len() > model.targets.len() {
            break;
        }
    }
    via.reverse();
    let words: Vec<String> = via
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let why = i
                .checked_sub(1)
                .and_then(|p| {
                    let edge = (via[p], t);
                    wd_why.get(&edge).or_else(|| edge_why.get(&edge))
                })
                .map_or(String::new(), |w| format!(" ({w})"));
            format!("{:?}{why}", model.targets[t].name)
        })
        .collect();
    format!(
        "may load affected {} {:?}: {} (each names the next one's artifact file in its run-time bytes, or is a plugin below the directory of the program or linked library before it or below a directory those bytes climb to, or any plugin when they climb by an unknown number of levels)",
        model.targets[h].kind.as_str(),
        model.targets[h].name,
        words.join(" -> ")
    )
}

/// Tests that may run or load an affected program or library through a
/// program or library they run or load (by the bytes of those binaries).
///
/// `affected[t]`: target `t` is reached by the change. `selected[i]`: test
/// `i` is already selected (it is not looked at again). Every program and
/// library an unselected test may run or load is scanned for the file names
/// of every artifact; what it names it may load, transitively, and a program
/// may load the plugins below its directory ([`may_load`]). A test is
/// selected when that set meets an affected loadable target.
pub fn loaded_by_bytes(
    graph: &Graph<'_>,
    catalogue: &Catalogue,
    mappings: &[TestMapping],
    affected: &[bool],
    selected: &[bool],
) -> (Vec<Loaded>, Vec<Gap>) {
    let model = graph.model();
    let any_affected_loadable = affected
        .iter()
        .enumerate()
        .any(|(t, &a)| a && is_loadable(model.targets[t].kind));
    if !any_affected_loadable {
        return (Vec::new(), Vec::new());
    }
    let mut scans = Scans {
        scanner: Scanner::new(graph.artifact_names()),
        scanned: FastMap::default(),
        gaps: Vec::new(),
        edge_why: FastMap::default(),
    };
    let sorted = sorted_loadable(graph);
    let plugins = plugin_like(graph);
    // mentions[t]: the loadable targets a binary of target t names (scanned once).
    let mut mentions: FastMap<usize, Vec<usize>> = FastMap::default();
    // One walk over dependency and mention edges from every unselected test's
    // targets scans each binary once; a reverse walk from the affected
    // loadable targets then says which targets can reach one. Only tests
    // with such a target need their own walk (for the chain); the others
    // provably load nothing affected.
    let n = model.targets.len();
    let (visited, rev) = walk_unselected(
        graph,
        mappings,
        selected,
        (&sorted, &plugins),
        (&mut mentions, &mut scans),
    );
    let back = |from: Vec<usize>| reverse_reach(&rev, from);
    let reaches = back(
        (0..n)
            .filter(|&t| visited[t] && affected[t] && is_loadable(model.targets[t].kind))
            .collect(),
    );
    // A relative climbing path ("../../lib/plugins") may also be resolved
    // against the working directory of the test that runs the binary: the
    // targets that reach a binary holding one need a walk of their own.
    let reaches_climber = back(
        scans
            .scanned
            .iter()
            .filter(|(_, (_, climbs))| climbs.iter().any(|c| relative_climb(c).is_some()))
            .map(|(&t, _)| t)
            .collect(),
    );
    let mut out = Vec::new();
    for (ti, m) in mappings.iter().enumerate() {
        if selected[ti] {
            continue;
        }
        let TestMapping::Mapped { direct } = m else {
            continue;
        };
        let wds: Vec<String> = if direct.iter().any(|&d| reaches_climber[d]) {
            working_dirs(&catalogue.tests[ti], model)
                .into_iter()
                .flatten()
                .collect()
        } else {
            Vec::new()
        };
        if wds.is_empty() && !direct.iter().any(|&d| reaches[d]) {
            continue;
        }
        // This test's own edges: plugins below a directory that a binary's
        // relative climbing path names from one of its working directories.
        let mut wd_why: FastMap<(usize, usize), String> = FastMap::default();
        // Everything the test may run or load, with how it got there.
        let mut reach: Vec<usize> = graph.closure(direct);
        let mut seen: FastSet<usize> = reach.iter().copied().collect();
        let mut parent: FastMap<usize, usize> = FastMap::default();
        let mut k = 0;
        let mut hit = None;
        while k < reach.len() {
            let t = reach[k];
            k += 1;
            if affected[t] && is_loadable(model.targets[t].kind) && parent.contains_key(&t) {
                hit = Some(t);
                break;
            }
            if !is_loadable(model.targets[t].kind) {
                continue;
            }
            let named = mentions
                .entry(t)
                .or_insert_with(|| may_load(graph, (&sorted, &plugins), t, &mut scans));
            // Only this test's walk takes the plugins its working directories add.
            let mut from_wd: Vec<usize> = Vec::new();
            let climbs = scans.scanned.get(&t).map_or(&[][..], |(_, c)| c.as_slice());
            for climb in climbs.iter().filter_map(relative_climb) {
                for wd in &wds {
                    let dir = paths::join_fold(wd, climb);
                    for (o, _) in modules_below(model, &sorted, &plugins, &dir) {
                        if o != t && !named.contains(&o) && !from_wd.contains(&o) {
                            from_wd.push(o);
                            wd_why.insert(
                                (t, o),
                                format!("below {dir}, which {climb:?} in its bytes names from the test's working directory {wd}"),
                            );
                        }
                    }
                }
            }
            for &n in named.iter().chain(&from_wd) {
                for c in graph.closure(&[n]) {
                    if seen.insert(c) {
                        parent.insert(c, t);
                        reach.push(c);
                    }
                }
            }
        }
        if let Some(h) = hit {
            let detail = load_chain(model, h, &parent, (&wd_why, &scans.edge_why));
            out.push(Loaded { test: ti, detail });
        }
    }
    let mut gaps = scans.gaps;
    gaps.sort();
    gaps.dedup();
    (out, gaps)
}
