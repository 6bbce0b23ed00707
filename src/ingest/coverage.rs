//! Coverage (contract §7), the same for both readers: every compiled C/C++
//! unit of every in-scope target needs its dependency evidence.

use super::evidence::DepEvidence;
use super::file_api::Codemodel;
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

/// Languages whose compile rule writes a trusted Make-syntax depfile.
pub fn language_supported(lang: &str) -> bool {
    matches!(lang, "C" | "CXX")
}
