//! `--format markdown`: a summary for CI step summaries (`$GITHUB_STEP_SUMMARY`)
//! or any CI that renders markdown. The state is on the first line; then the
//! counts, the selected tests with a one-line reason each, the fallback
//! reasons with what to do, and the skipped count.

use std::fmt::Write as _;

use crate::analysis::Analysis;
use crate::decide::Outcome;

/// Escapes text for a markdown table cell.
fn cell(s: &str) -> String {
    super::text::one_line(s)
        .replace('|', "\\|")
        .replace('`', "'")
}

/// Writes the summary of `a` (with `selection` as printed, sharded or not).
pub fn write(
    a: &Analysis,
    selection: Option<&[String]>,
    shard: Option<(usize, usize)>,
    out: &mut Vec<u8>,
) {
    let mut s = String::new();
    let shard_note = shard
        .map(|(k, n)| format!(" (shard {k}/{n})"))
        .unwrap_or_default();
    match &a.outcome {
        Outcome::SubsetSelected { selected, all, .. } => {
            let _ = writeln!(
                s,
                "**diff2test: SUBSET_SELECTED** — {} of {} tests selected, {} skipped{shard_note}",
                selected.len(),
                all.len(),
                all.len() - selected.len()
            );
        }
        Outcome::FullSuiteSelected { all, .. } => {
            let _ = writeln!(
                s,
                "**diff2test: FULL_SUITE_SELECTED** — all {} tests selected: a subset cannot be defended{shard_note}",
                all.len()
            );
        }
        Outcome::FullSuiteRequired { .. } => {
            let _ = writeln!(
                s,
                "**diff2test: FULL_SUITE_REQUIRED** — the test catalogue cannot be trusted: run the complete suite with your usual ctest invocation"
            );
        }
        Outcome::UsageError(m) | Outcome::InternalError(m) => {
            let _ = writeln!(s, "**diff2test: {}** — {}", a.outcome.state(), cell(m));
        }
    }
    let _ = writeln!(s);
    if !a.declarations.is_empty() {
        let _ = writeln!(s, "Declared assumptions this result rests on:\n");
        for u in &a.declarations {
            let _ = writeln!(
                s,
                "- {} {} (`{}`): {} — why: {}",
                u.declared.kind,
                u.declared.rule,
                cell(&u.declared.matched),
                cell(&u.subject),
                cell(&u.declared.why)
            );
        }
        let _ = writeln!(s);
    }
    match &a.outcome {
        Outcome::FullSuiteSelected { gaps, .. } | Outcome::FullSuiteRequired { gaps } => {
            let _ = writeln!(s, "| reason | detail | what to do |\n|---|---|---|");
            let mut per_code: std::collections::BTreeMap<(u8, crate::reason::Code), usize> =
                Default::default();
            for g in gaps {
                let n = per_code.entry((g.code.rank(), g.code)).or_default();
                *n += 1;
                if *n <= 10 {
                    let _ = writeln!(
                        s,
                        "| `{}` | {} | {} |",
                        g.code.as_str(),
                        cell(&g.detail),
                        cell(g.code.remedy())
                    );
                }
            }
            for ((_, code), n) in per_code.iter().filter(|(_, n)| **n > 10) {
                let _ = writeln!(s, "| `{}` | … and {} more | |", code.as_str(), n - 10);
            }
            let _ = writeln!(s);
        }
        Outcome::SubsetSelected { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {}
    }
    if let (Some(sel), Outcome::SubsetSelected { .. }) = (selection, &a.outcome) {
        let _ = writeln!(s, "| selected test | why |\n|---|---|");
        for name in sel {
            let why = a
                .verdicts
                .iter()
                .find(|v| &v.name == name)
                .and_then(|v| v.reasons.first())
                .map(|r| format!("`{}` {}", r.code, cell(&r.detail)))
                .unwrap_or_default();
            let _ = writeln!(s, "| `{}` | {} |", cell(name), why);
        }
        let _ = writeln!(s);
    } else if let Some(sel) = selection {
        let _ = writeln!(s, "<details><summary>{} tests</summary>\n", sel.len());
        for name in sel {
            let _ = writeln!(s, "- `{}`", cell(name));
        }
        let _ = writeln!(s, "\n</details>");
    }
    out.extend_from_slice(s.as_bytes());
}
