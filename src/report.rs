//! The only writer of output. Renders an [`Analysis`] into stdout and stderr
//! buffers (and the optional receipt file); `lib::run` commits the buffers
//! after the final decision.
//!
//! stdout carries only the selection (names, ctest regexes or a JSON plan) or,
//! when asked, an explanation; stderr carries the outcome state on its own
//! first line, then evidence chains or coded reasons. Everything is sorted,
//! so equal inputs give byte-identical output.
#![deny(clippy::wildcard_enum_match_arm)]

pub mod ctest_regex;
pub mod emit;
pub mod markdown;
pub mod plan;
mod text;

pub use emit::RenderError;
use emit::{Emitter, View};
use text::one_line;

use std::collections::BTreeMap;
use std::io::Write;

use crate::analysis::Analysis;
use crate::decide::Outcome;
use crate::graph::Chain;
use crate::reason::{Code, Gap};
use crate::request::{Request, Writes};

/// At most this many reasons per code are listed; the rest are counted.
const MAX_REASONS_PER_CODE: usize = 25;

/// Writes just the state and its one-line reason (usage and internal errors).
pub fn render_state_only(outcome: &Outcome, err: &mut Vec<u8>) {
    let _ = writeln!(err, "{}", outcome.state());
    match outcome {
        Outcome::UsageError(msg) => {
            let _ = writeln!(err, "reason USAGE_ERROR: {}", one_line(msg));
        }
        Outcome::InternalError(msg) => {
            let _ = writeln!(err, "reason INTERNAL_ERROR: {}", one_line(msg));
        }
        Outcome::FullSuiteRequired { gaps } | Outcome::FullSuiteSelected { gaps, .. } => {
            write_gaps(gaps, err)
        }
        Outcome::SubsetSelected { .. } => {}
    }
}

/// Renders a finished analysis. Fails (→ USAGE_ERROR) only when the request
/// cannot be honoured: a selection a ctest regex cannot carry, an unknown
/// `--explain` test, or an unwritable receipt.
pub fn render(
    a: &Analysis,
    req: &Request,
    out: &mut Vec<u8>,
    err: &mut Vec<u8>,
) -> Result<(), RenderError> {
    let outcome = &a.outcome;
    if let Outcome::UsageError(_) | Outcome::InternalError(_) = outcome {
        // Nothing on stdout and no receipt: these states make no claim at all.
        render_state_only(outcome, err);
        return Ok(());
    }
    match req.writes {
        Writes::Snapshot => snapshot_report(a, out, err),
        Writes::Policy => init_report(a, out, err),
        Writes::Selection => select_report(a, req, out, err)?,
    }
    Ok(())
}

/// A selection run: the summary on stderr, the format's emitter on stdout,
/// the receipt.
fn select_report(
    a: &Analysis,
    req: &Request,
    out: &mut Vec<u8>,
    err: &mut Vec<u8>,
) -> Result<(), RenderError> {
    // Each listed test's shard, computed once (`--shard K/N`).
    let shards = match (req.shard, listed(&a.outcome)) {
        (Some((_, n)), Some(sel)) => Some(shards_of(a, sel, n)),
        _ => None,
    };
    let selection = selection_of(a, req, shards.as_deref());
    let v = View {
        a,
        req,
        selection: selection.as_deref(),
        shards: shards.as_deref(),
    };
    emit::Summary.emit(&v, err)?;
    let format = emit::of(req.format);
    if req.explain.is_empty() {
        format.emit(&v, out)?;
    } else {
        format.explain(&v, &req.explain, out)?;
    }
    if let Some(path) = &req.receipt {
        let mut bytes = Vec::new();
        emit::Receipt.emit(&v, &mut bytes)?;
        std::fs::write(path, bytes).map_err(|source| RenderError::Receipt {
            path: path.clone(),
            source,
        })?;
    }
    Ok(())
}

/// The tests the outcome lists (`None`: no list, the catalogue cannot be
/// trusted), or this shard's part of them with `--shard K/N` (`shards`: the
/// shard of each listed test).
fn selection_of(a: &Analysis, req: &Request, shards: Option<&[usize]>) -> Option<Vec<String>> {
    let all = listed(&a.outcome)?;
    Some(match (req.shard, shards) {
        (Some((k, _)), Some(shards)) => all
            .iter()
            .zip(shards)
            .filter(|(_, &s)| s == k - 1)
            .map(|(t, _)| t.clone())
            .collect(),
        _ => all.to_vec(),
    })
}

/// The tests the outcome lists: the subset, or the whole suite.
fn listed(o: &Outcome) -> Option<&[String]> {
    match o {
        Outcome::SubsetSelected { selected, .. } => Some(selected),
        Outcome::FullSuiteSelected { all, .. } => Some(all),
        Outcome::FullSuiteRequired { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {
            None
        }
    }
}

/// The summary on stderr of a selection run: the state, notes, the changes
/// (`--explain-changes`), then the outcome's chains and declarations or its
/// reasons, and the shard's share.
fn write_summary(v: &View<'_>, err: &mut Vec<u8>) {
    let (a, req) = (v.a, v.req);
    let outcome = &a.outcome;
    // Writes into a Vec cannot fail.
    let _ = writeln!(err, "{}", outcome.state());
    for n in &a.notes {
        let _ = writeln!(err, "note {}", one_line(n));
    }
    if req.explain_changes {
        for c in &a.changed {
            let _ = writeln!(
                err,
                "change {}: {} ({})",
                c.display,
                c.class.as_str(),
                c.evidence
            );
        }
    }
    match outcome {
        Outcome::SubsetSelected {
            selected,
            all,
            chains,
            forced,
        } => {
            let skipped = all.len() - selected.len();
            if req.changed.is_empty() {
                let _ = writeln!(
                    err,
                    "the change set is empty: nothing changed, so no test is affected"
                );
            }
            let _ = writeln!(
                err,
                "selected {} of {} tests ({} skipped)",
                selected.len(),
                all.len(),
                skipped
            );
            write_chains(chains, err);
            write_declarations(a, err);
            for f in forced {
                let _ = writeln!(
                    err,
                    "forced {}: {}: {}",
                    f.test,
                    f.code,
                    one_line(&f.detail)
                );
            }
        }
        Outcome::FullSuiteSelected { all, gaps } => {
            write_gaps(gaps, err);
            if req.explain_changes {
                write_hints(gaps, err);
            }
            let _ = writeln!(
                err,
                "selected all {} tests: a subset cannot be defended",
                all.len()
            );
        }
        Outcome::FullSuiteRequired { gaps } => {
            write_gaps(gaps, err);
            let _ = writeln!(err, "no test list emitted: the catalogue cannot be trusted; run the complete suite with your usual ctest invocation");
        }
        // Written by render_state_only.
        Outcome::UsageError(_) | Outcome::InternalError(_) => {}
    }
    if let (Some((k, n)), Some(sel), Some(shards)) = (req.shard, listed(outcome), v.shards) {
        write_shard(a, (sel, shards), (k, n), err);
    }
}

/// `shard K/N: …` lines: this shard's share of `sel`, and its cost when
/// ctest recorded costs.
fn write_shard(
    a: &Analysis,
    (sel, shards): (&[String], &[usize]),
    (k, n): (usize, usize),
    err: &mut Vec<u8>,
) {
    let mine = shards.iter().filter(|&&s| s == k - 1).count();
    let _ = writeln!(
        err,
        "shard {k}/{n}: {mine} of the {} selected tests",
        sel.len()
    );
    if let Some(c) = &a.shard_costs {
        let total = |want: usize| -> f64 {
            sel.iter()
                .zip(shards)
                .filter(|(_, &s)| s == want)
                .map(|(t, _)| cost_of(c, t))
                .sum()
        };
        let _ = writeln!(
            err,
            "shard {k}/{n}: balanced by the costs in {} (this shard {:.1} s of {:.1} s); every shard must read the same file",
            c.path,
            total(k - 1),
            (0..n).map(total).sum::<f64>()
        );
    }
}

/// The cost of test `name` by `costs`: its recorded average, else (never run
/// yet) the mean of the recorded ones.
fn cost_of(costs: &crate::ingest::ctest_cost::Costs, name: &str) -> f64 {
    costs
        .seconds
        .get(name)
        .copied()
        .unwrap_or_else(|| costs.seconds.values().sum::<f64>() / costs.seconds.len().max(1) as f64)
}

/// The shard (0-based, of `n`) of each test of `sel`. With the costs ctest
/// recorded (`Analysis::shard_costs`): the groups (a data-flow group, else a
/// test alone) go, costliest first (ties by key), each to the shard with the
/// least cost so far (ties to the lowest): every job that reads the same cost
/// file and selection computes the same split. Without: [`shard_of`].
pub fn shards_of(a: &Analysis, sel: &[String], n: usize) -> Vec<usize> {
    let Some(costs) = &a.shard_costs else {
        return sel.iter().map(|t| shard_of(a, t, n)).collect();
    };
    let key = |t: &str| {
        a.flow_groups
            .get(t)
            .cloned()
            .unwrap_or_else(|| t.to_owned())
    };
    let mut groups: BTreeMap<String, f64> = BTreeMap::new();
    for t in sel {
        *groups.entry(key(t)).or_default() += cost_of(costs, t);
    }
    let mut order: Vec<(String, f64)> = groups.into_iter().collect();
    order.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    let mut load = vec![0.0f64; n];
    let mut shard_of_key: BTreeMap<String, usize> = BTreeMap::new();
    for (k, c) in order {
        let s = (0..n)
            .min_by(|&i, &j| load[i].total_cmp(&load[j]).then(i.cmp(&j)))
            .unwrap_or(0);
        load[s] += c;
        shard_of_key.insert(k, s);
    }
    sel.iter().map(|t| shard_of_key[&key(t)]).collect()
}

/// The shard (0-based, of `n`) of test `name`: tests that hand each other
/// data (`Analysis::flow_groups`) go by their group's key, others by their
/// own name; the key's FNV-1a 64-bit hash modulo `n`. Stable across runs,
/// machines and catalogue order.
pub fn shard_of(a: &Analysis, name: &str, n: usize) -> usize {
    let key = a.flow_groups.get(name).map(String::as_str).unwrap_or(name);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % n as u64) as usize
}

/// The one-line text of a chain (also used as the plan's reason detail).
pub fn chain_text(c: &Chain) -> String {
    // A file named on a compile or link command has no depfile: the chain
    // starts at the target whose command names it.
    let mut s = if c.depfile.is_empty() && !c.tu.is_empty() {
        format!("{} -> {}", c.changed, c.tu)
    } else if c.depfile.is_empty() {
        format!("{} -> named on the compile or link command", c.changed)
    } else {
        format!("{} -> depfile {} -> unit {}", c.changed, c.depfile, c.tu)
    };
    for t in &c.targets {
        s.push_str(" -> target ");
        s.push_str(t);
    }
    s.push_str(" -> test ");
    s.push_str(&c.test);
    if !c.reached.is_empty() {
        s.push_str(", which ");
        s.push_str(&c.reached);
    }
    s
}

fn write_chains(chains: &[Chain], err: &mut Vec<u8>) {
    for c in chains {
        let _ = writeln!(err, "chain {}: {}", c.test, chain_text(c));
    }
}

/// `diff2test init`: the starter policy on stdout whenever the evidence
/// could be read at all (what stops a subset today is what it helps with);
/// the reasons of a selection run with no change on stderr.
fn init_report(a: &Analysis, out: &mut Vec<u8>, err: &mut Vec<u8>) {
    match &a.init {
        Some(text) => {
            let _ = writeln!(err, "POLICY_WRITTEN");
            if let Outcome::FullSuiteSelected { gaps, .. } | Outcome::FullSuiteRequired { gaps } =
                &a.outcome
            {
                write_gaps(gaps, err);
            }
            out.extend_from_slice(text.as_bytes());
        }
        None => {
            let _ = writeln!(err, "{}", a.outcome.state());
            if let Outcome::FullSuiteSelected { gaps, .. } | Outcome::FullSuiteRequired { gaps } =
                &a.outcome
            {
                write_gaps(gaps, err);
            }
            let _ = writeln!(
                err,
                "no policy written: the build's evidence could not be read"
            );
        }
    }
}

/// `diff2test record`: the record on stdout; on stderr `RECORD_WRITTEN`, how
/// many tests it covers, and one `reason RECORD_TEST_UNRECORDED` line per
/// test it does not (exit 3 then: those are decided without it).
pub fn render_record(
    r: &crate::ingest::record::Record,
    out: &mut Vec<u8>,
    err: &mut Vec<u8>,
) -> u8 {
    use crate::ingest::record::Status;
    let recorded = r
        .tests
        .iter()
        .filter(|t| t.status == Status::Recorded)
        .count();
    let _ = writeln!(err, "RECORD_WRITTEN");
    let _ = writeln!(
        err,
        "recorded {recorded} of {} tests ({} paths) from {} log line(s)",
        r.tests.len(),
        r.files.len(),
        r.logs.iter().map(|l| l.lines).sum::<usize>()
    );
    for t in r.tests.iter().filter(|t| t.status != Status::Recorded) {
        let _ = writeln!(
            err,
            "reason RECORD_TEST_UNRECORDED: test {:?} {}: {}",
            t.name,
            t.status.as_str(),
            one_line(&t.detail)
        );
    }
    if recorded < r.tests.len() {
        let _ = writeln!(err, "remedy RECORD_TEST_UNRECORDED: record a whole ctest run that ends by itself, with strace -f -y -s 4096 (the command in `diff2test record --help`); a test not recorded is decided without the record");
    }
    out.extend_from_slice(crate::record::to_json(r).as_bytes());
    if recorded == r.tests.len() {
        0
    } else {
        crate::decide::exit::FULL_SUITE_SELECTED
    }
}

/// `diff2test snapshot`: the document on stdout when the evidence is
/// complete (exit 0); otherwise the reasons and nothing on stdout (exit 3 or 4).
fn snapshot_report(a: &Analysis, out: &mut Vec<u8>, err: &mut Vec<u8>) {
    match (&a.outcome, &a.snapshot) {
        (Outcome::SubsetSelected { all, .. }, Some(s)) => {
            let _ = writeln!(err, "SNAPSHOT_WRITTEN\nfingerprinted {} tests", all.len());
            out.extend_from_slice(&plan::compact(s));
            out.push(b'\n');
        }
        (Outcome::FullSuiteSelected { gaps, .. }, _) | (Outcome::FullSuiteRequired { gaps }, _) => {
            let _ = writeln!(err, "{}", a.outcome.state());
            write_gaps(gaps, err);
            let _ = writeln!(err, "no snapshot written: the evidence is incomplete");
        }
        (Outcome::SubsetSelected { .. }, None)
        | (Outcome::UsageError(_), _)
        | (Outcome::InternalError(_), _) => render_state_only(&a.outcome, err),
    }
}

/// The declared assumptions a subset rests on, one line each:
/// `assume KIND RULE (GLOB): SUBJECT — WHY`.
fn write_declarations(a: &Analysis, err: &mut Vec<u8>) {
    for u in &a.declarations {
        let d = &u.declared;
        let kind = match d.kind {
            "boundary" => "BOUNDARY",
            "data" => "DATA",
            "build_config" => "BUILD_CONFIG",
            "unreferenced_paths" => "UNREFERENCED_PATHS",
            "scripts" => "SCRIPTS",
            "record" => "RECORD",
            _ => "SCRIPT",
        };
        let _ = writeln!(
            err,
            "assume {kind} {} ({:?}): {} -- why: {}",
            d.rule,
            d.matched,
            one_line(&u.subject),
            one_line(&d.why)
        );
    }
}

/// For each fallback reason a policy declaration would have avoided: how.
fn write_hints(gaps: &[Gap], err: &mut Vec<u8>) {
    let mut seen = std::collections::BTreeSet::new();
    for g in gaps {
        if let Some(h) = crate::declare::hint(g) {
            if seen.insert(h.clone()) {
                let _ = writeln!(err, "hint {}: {}", g.code.as_str(), one_line(&h));
            }
        }
    }
}

fn write_gaps(gaps: &[Gap], err: &mut Vec<u8>) {
    // Root cause first (the order `Decision::finish` gave them), each code's lines together.
    let mut by_code: BTreeMap<_, Vec<&Gap>> = BTreeMap::new();
    for g in gaps {
        by_code.entry((g.code.rank(), g.code)).or_default().push(g);
    }
    // A root cause's side effects are said once, as such, with no remedy of
    // their own: without dependency evidence no changed file is in a
    // dependency file; a catalogue listed from another build tree runs none
    // of this build's programs.
    let has = |codes: &[Code]| gaps.iter().any(|g| codes.contains(&g.code));
    let side_effect_of = |code: Code| -> Option<&'static str> {
        let no_evidence = [
            Code::DepListUnreadable,
            Code::DepsLogMissing,
            Code::DepCoverageIncomplete,
        ];
        if code == Code::ChangeUnknown && has(&no_evidence) {
            Some("changed path(s) in no dependency file, as any is while the dependency evidence is missing (above)")
        } else if code == Code::TestCommandUnmapped && has(&[Code::CtestCatalogueForeign]) {
            Some("test(s) run programs of another build tree, as the catalogue does (above)")
        } else {
            None
        }
    };
    let mut codes = Vec::new();
    for ((_, code), list) in by_code {
        if let Some(why) = side_effect_of(code) {
            let _ = writeln!(
                err,
                "reason {}: {} {why}; the first: {}",
                code.as_str(),
                list.len(),
                one_line(&list[0].detail)
            );
            continue;
        }
        codes.push(code);
        for g in list.iter().take(MAX_REASONS_PER_CODE) {
            let _ = writeln!(err, "reason {}: {}", code.as_str(), one_line(&g.detail));
        }
        if list.len() > MAX_REASONS_PER_CODE {
            let _ = writeln!(
                err,
                "reason {}: ... and {} more",
                code.as_str(),
                list.len() - MAX_REASONS_PER_CODE
            );
        }
    }
    // What to do, once per code, root cause first.
    for code in codes {
        let _ = writeln!(err, "remedy {}: {}", code.as_str(), code.remedy());
    }
}
