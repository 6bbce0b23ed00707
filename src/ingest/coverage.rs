//! Coverage and completeness, the same for both readers: every compiled unit
//! (C, C++, and assembly on Ninja) of every in-scope target needs its
//! dependency evidence; that evidence must show it lists system headers where
//! `-MMD` would leave out project files; and an assembly unit must not read
//! files through the assembler, which no depfile lists.

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
            if language_supported(model, &c.language) && !covered_here {
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
    let roots = [model.scope_root(), model.build_root.as_str()];
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
    let shows: Vec<bool> = ev.tus.iter().map(lists_system).collect();
    let with_md: std::collections::HashSet<(&str, &str)> = ev
        .tus
        .iter()
        .zip(&shows)
        .filter(|(_, &shows)| shows)
        .filter_map(|(tu, _)| scope_of(tu))
        .collect();
    // Per target: (units without a system header, the first such source, a SYSTEM directory).
    let mut flagged: std::collections::BTreeMap<usize, (usize, &str, &str)> = Default::default();
    for (tu, _) in ev.tus.iter().zip(&shows).filter(|(_, &shows)| !shows) {
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

/// Whether `lang`'s units have trusted dependency evidence in `model`'s
/// build: C and C++ always; assembly (`ASM`, the C compiler on `.s`/`.S`)
/// on the Ninja generators, whose assembly rule writes a `-MD` depfile
/// (folded into `.ninja_deps`; the Makefiles generators write none for
/// it), as long as no file of the unit names another through the
/// assembler (see [`scan_assembler_includes`]).
pub fn language_supported(model: &Codemodel, lang: &str) -> bool {
    matches!(lang, "C" | "CXX") || (lang == "ASM" && model.is_ninja())
}

/// The assembler reads files the preprocessor never sees (`.include`,
/// `.incbin`), so a `-MD` depfile does not list them. For every assembly
/// unit, its source and the project files its evidence lists are read
/// (at most `max_bytes` each) and searched, case-insensitively, for those
/// two directives anywhere (in a macro body too; a comment naming one costs
/// only the subset). A unit with a hit, or with a file that cannot be read,
/// is recorded in [`DepEvidence::assembler_includes`]: its target then has
/// no trusted evidence (`UNSUPPORTED_LANGUAGE` for the tests that depend on it).
pub fn scan_assembler_includes(model: &Codemodel, ev: &mut DepEvidence, max_bytes: u64) {
    let mut found = Vec::new();
    for tu in &ev.tus {
        let Some(t) = model.targets.get(tu.target) else {
            continue;
        };
        if t.compiled.get(tu.source_index).map(|c| c.language.as_str()) != Some("ASM") {
            continue;
        }
        let files = std::iter::once(tu.source.as_str())
            .chain(tu.prereqs.iter().map(|&id| ev.files[id as usize].as_str()));
        for f in files {
            let named = match super::read_capped(f, max_bytes) {
                Ok(bytes) => names_through_assembler(&bytes),
                Err(_) => true,
            };
            if named {
                found.push((tu.target, tu.source.clone(), f.to_owned()));
                break;
            }
        }
    }
    found.sort();
    ev.assembler_includes = found;
}

/// Whether `text` holds `.include` or `.incbin` (any case).
fn names_through_assembler(text: &[u8]) -> bool {
    text.windows(7)
        .any(|w| w.eq_ignore_ascii_case(b".includ") || w.eq_ignore_ascii_case(b".incbin"))
}

/// The coverage gaps of the targets `in_scope` (those that can reach what a
/// test runs or loads): compiled sources without dependency evidence, said
/// once when the dependency list itself failed (`list_failed`), and units
/// whose system headers the evidence leaves out.
pub fn in_scope_gaps(
    model: &Codemodel,
    deps: &DepEvidence,
    in_scope: &[bool],
    list_failed: bool,
) -> Vec<Gap> {
    let coverage = coverage_gaps(model, deps, in_scope);
    let mut gaps = match coverage.iter().min() {
        Some(first) if list_failed => vec![Gap::new(
            Code::DepCoverageIncomplete,
            format!(
                "{} compiled sources in scope have no dependency evidence, because of the dependency list (above); the first: {}",
                coverage.len(),
                first.detail
            ),
        )],
        _ => coverage,
    };
    gaps.extend(system_headers_gaps(model, deps, in_scope));
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembler_directives_are_found_in_any_case_and_place() {
        for text in [
            ".include \"macros.inc\"\n",
            "  .INCBIN \"blob.bin\"\n",
            ".macro load f\n .incbin \\f\n.endm\n",
            "# see .include below\n",
        ] {
            assert!(names_through_assembler(text.as_bytes()), "{text:?}");
        }
        for text in ["#include \"value.h\"\n", "mov $1, %eax\n", ".inc", ""] {
            assert!(!names_through_assembler(text.as_bytes()), "{text:?}");
        }
    }

    #[test]
    fn assembly_is_supported_only_on_ninja() {
        let mut model = Codemodel {
            generator: "Unix Makefiles".into(),
            ..Codemodel::default()
        };
        assert!(language_supported(&model, "CXX") && language_supported(&model, "C"));
        assert!(!language_supported(&model, "ASM"));
        for g in ["Ninja", "Ninja Multi-Config"] {
            model.generator = g.into();
            assert!(language_supported(&model, "ASM"), "{g}");
            assert!(!language_supported(&model, "ASM_NASM"), "{g}");
            assert!(!language_supported(&model, "Fortran"), "{g}");
        }
    }
}
