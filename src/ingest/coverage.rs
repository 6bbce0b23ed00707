//! Coverage (contract §7), the same for both readers: every compiled C/C++
//! unit of every in-scope target needs its dependency evidence.

use super::evidence::{DepEvidence, Tu};
use super::file_api::Codemodel;
use crate::paths;
use crate::reason::{Code, Gap};

/// Coverage (contract §7): every compiled C/C++ unit of every *in-scope* target
/// needs exactly one depfile. `in_scope[t]` says whether target `t` can reach
/// anything a test runs or loads (see `graph::Graph::coverage_scope`).
pub fn coverage_gaps(model: &Codemodel, ev: &DepEvidence, in_scope: &[bool]) -> Vec<Gap> {
    // Covered: (target, compiled source index), as the units were mapped.
    let mut covered: Vec<Vec<bool>> = model
        .targets
        .iter()
        .map(|t| vec![false; t.compiled.len()])
        .collect();
    for tu in &ev.tus {
        if let Some(c) = covered
            .get_mut(tu.target)
            .and_then(|c| c.get_mut(tu.source_index))
        {
            *c = true;
        }
    }
    let mut gaps = Vec::new();
    for (ti, t) in model.targets.iter().enumerate() {
        if !in_scope.get(ti).copied().unwrap_or(true) {
            continue;
        }
        for (ci, c) in t.compiled.iter().enumerate() {
            // A source the target object lists twice is covered by the unit
            // filed under either of its places (units are filed under the first).
            let covered_here = covered[ti][ci]
                || t.compiled
                    .iter()
                    .zip(&covered[ti])
                    .any(|(other, &cov)| cov && other.path == c.path);
            if language_supported(&c.language) && !covered_here {
                gaps.push(Gap::new(
                    Code::DepCoverageIncomplete,
                    format!(
                        "{} of target {:?} has no dependency file in the list",
                        c.path, t.name
                    ),
                ));
            }
        }
    }
    gaps
}

/// Completeness of each unit's list (contract §7): `-MMD` and `-MM` leave out
/// of a depfile every header found through a system include directory, and
/// every header such a header includes, wherever it lies. For a target that
/// searches a SYSTEM directory inside the roots (a vendored library marked
/// `SYSTEM`, an imported target built into the build tree), those are
/// project files: their absence would make a unit look unaffected by a
/// change to one. What `-MD` writes always lists some system header (GCC
/// lists `/usr/include/stdc-predef.h`, which it includes before every unit,
/// and any standard header lies outside the roots, or in the compiler's
/// implicit include directories when the toolchain is inside them). The
/// depfile flags are a rule variable (`CMAKE_DEPFILE_FLAGS_<LANG>`): one
/// value per directory and language. So a unit of such an in-scope target
/// must list a prerequisite outside both roots or inside an implicit include
/// directory, unless another unit of the same language in the same directory
/// does (then the flags there are `-MD`, and this unit includes no system
/// header); one gap per target is reported.
pub fn system_headers_gaps(model: &Codemodel, ev: &DepEvidence, in_scope: &[bool]) -> Vec<Gap> {
    let roots = [model.source_root.as_str(), model.build_root.as_str()];
    let inside = |d: &String| roots.iter().any(|r| paths::is_within(d, r));
    let lists_system = |tu: &Tu| {
        tu.lists_outside
            || tu.prereqs.iter().any(|&id| {
                let f = &ev.files[id as usize];
                model
                    .implicit_includes
                    .iter()
                    .any(|d| paths::is_within(f, d))
            })
    };
    // The flags' scope: the unit's directory and language.
    let scope_of = |tu: &Tu| {
        let t = model.targets.get(tu.target)?;
        let language = t.compiled.get(tu.source_index)?.language.as_str();
        Some((t.dir_build.as_str(), language))
    };
    let with_md: std::collections::HashSet<(&str, &str)> = ev
        .tus
        .iter()
        .filter(|tu| lists_system(tu))
        .filter_map(scope_of)
        .collect();
    // Per target: (units without a system header, the first such source, a SYSTEM directory).
    let mut flagged: std::collections::BTreeMap<usize, (usize, &str, &str)> = Default::default();
    for tu in ev.tus.iter().filter(|tu| !lists_system(tu)) {
        let Some(t) = model.targets.get(tu.target) else {
            continue;
        };
        let Some(dir) = t.system_includes.iter().find(|d| inside(d)) else {
            continue;
        };
        if !in_scope.get(tu.target).copied().unwrap_or(true) {
            continue;
        }
        if scope_of(tu).is_some_and(|s| with_md.contains(&s)) {
            continue;
        }
        let e = flagged
            .entry(tu.target)
            .or_insert((0, tu.source.as_str(), dir));
        e.0 += 1;
        if tu.source.as_str() < e.1 {
            e.1 = tu.source.as_str();
        }
    }
    flagged
        .into_iter()
        .map(|(t, (n, first, dir))| {
            Gap::new(
                Code::DepSystemHeadersOmitted,
                format!(
                    "{n} unit(s) of target {:?} (first: {first}) list no system header, though the target searches {dir} as a SYSTEM include directory: their dependency evidence leaves out what is found there",
                    model.targets[t].name
                ),
            )
        })
        .collect()
}

/// Languages whose compile rule writes a trusted Make-syntax depfile.
pub fn language_supported(lang: &str) -> bool {
    matches!(lang, "C" | "CXX")
}
