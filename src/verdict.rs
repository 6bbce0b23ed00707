//! One verdict per registered test (plans, explanations, markdown): selected
//! with its reasons, or skipped with its skip argument.

use std::collections::BTreeMap;

use crate::decide::{self, select_code, Outcome, Verdict, VerdictReason};
use crate::reason::Gap;
use crate::{graph, ingest, report};

/// Verdicts when no graph exists: every test selected with the fallback reasons.
pub(crate) fn fallback_verdicts(
    outcome: &Outcome,
    catalogue: Option<&ingest::ctest::Catalogue>,
) -> Vec<Verdict> {
    let (Outcome::FullSuiteSelected { gaps, .. }, Some(cat)) = (outcome, catalogue) else {
        return Vec::new();
    };
    let mut v: Vec<Verdict> = cat
        .tests
        .iter()
        .map(|t| fallback_verdict(t, gaps))
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

pub(crate) fn fallback_verdict(t: &ingest::ctest::Test, gaps: &[Gap]) -> Verdict {
    let mut codes: Vec<&str> = gaps.iter().map(|g| g.code.as_str()).collect();
    codes.dedup();
    Verdict {
        name: t.name.clone(),
        labels: t.labels.clone(),
        selected: true,
        reasons: vec![VerdictReason {
            code: select_code::FULL_SUITE_FALLBACK.into(),
            detail: format!("a subset cannot be defended: {}", codes.join(", ")),
            // At most 25 per test: the full list is in the plan's fallback_reasons, once.
            evidence: gaps
                .iter()
                .take(25)
                .map(|g| g.to_string())
                .chain((gaps.len() > 25).then(|| {
                    format!(
                        "... and {} more fallback reasons (see fallback_reasons)",
                        gaps.len() - 25
                    )
                }))
                .collect(),
        }],
        closure: Vec::new(),
    }
}

pub(crate) fn verdicts(
    outcome: &Outcome,
    catalogue: &ingest::ctest::Catalogue,
    graph: &graph::Graph<'_>,
    mappings: &[graph::TestMapping],
    deps: &ingest::depfile::DepEvidence,
    model: &ingest::file_api::Codemodel,
) -> Vec<Verdict> {
    let (selected, chains, forced) = match outcome {
        Outcome::SubsetSelected {
            selected,
            chains,
            forced,
            ..
        } => (selected, chains, forced),
        Outcome::FullSuiteSelected { .. } => return fallback_verdicts(outcome, Some(catalogue)),
        Outcome::FullSuiteRequired { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {
            return Vec::new()
        }
    };
    let mut units_of: BTreeMap<usize, usize> = BTreeMap::new();
    for tu in &deps.tus {
        *units_of.entry(tu.target).or_default() += 1;
    }
    let mut out: Vec<Verdict> = catalogue
        .tests
        .iter()
        .zip(mappings)
        .map(|(t, m)| {
            let is_selected = selected.binary_search(&t.name).is_ok();
            // Chains and forced entries are sorted by test name: take this test's run.
            let mine = |name: &str| name == t.name;
            let first_chain = chains.partition_point(|c| c.test < t.name);
            let mut reasons: Vec<VerdictReason> = chains[first_chain..]
                .iter()
                .take_while(|c| mine(&c.test))
                .map(|c| {
                    let mut evidence = if c.depfile.is_empty() {
                        vec![format!("changed:{}", c.changed), "command-line:compile or link command".to_owned()]
                    } else {
                        vec![format!("changed:{}", c.changed), format!("depfile:{}", c.depfile), format!("unit:{}", c.tu)]
                    };
                    evidence.extend(c.targets.iter().map(|x| format!("target:{x}")));
                    evidence.push(format!("test:{}", c.test));
                    VerdictReason { code: select_code::AFFECTED_BY_CHANGE.into(), detail: report::chain_text(c), evidence }
                })
                .collect();
            let first_forced = forced.partition_point(|f| f.test < t.name);
            reasons.extend(forced[first_forced..].iter().take_while(|f| mine(&f.test)).map(|f| VerdictReason {
                code: f.code.into(),
                detail: f.detail.clone(),
                evidence: Vec::new(),
            }));
            let closure_ids = match m {
                graph::TestMapping::Mapped { direct } => graph.closure(direct),
                graph::TestMapping::Unmapped(_) => Vec::new(),
            };
            let closure: Vec<decide::ClosureEntry> = closure_ids
                .iter()
                .map(|&i| decide::ClosureEntry {
                    target: model.targets[i].name.clone(),
                    kind: model.targets[i].kind.as_str(),
                    units: units_of.get(&i).copied().unwrap_or(0),
                })
                .collect();
            if !is_selected {
                let units: usize = closure.iter().map(|c| c.units).sum();
                let mut evidence = vec![
                    format!("command[0]:{}", t.command.as_ref().and_then(|c| c.first()).cloned().unwrap_or_default()),
                    "codemodel: every target object read, every dependency id resolved".to_owned(),
                    format!("depfiles: all {units} compiled units of the closure have exactly one fresh .d"),
                    "changed paths: every one classified as a known source or header".to_owned(),
                ];
                evidence.extend(closure.iter().map(|c| format!("target:{}", c.target)));
                reasons.push(VerdictReason {
                    code: select_code::OUTSIDE_TRANSITIVE_IMPACT_SET.into(),
                    detail: format!(
                        "none of the {} targets in its dependency closure is reached by the change's reverse walk",
                        closure.len()
                    ),
                    evidence,
                });
            }
            Verdict { name: t.name.clone(), labels: t.labels.clone(), selected: is_selected, reasons, closure }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
