//! The `diff2test.plan.v2` plan and `diff2test.receipt.v2` receipt documents.
//!
//! Both are built as `serde_json::Value`s, whose objects keep keys sorted, and
//! every array whose order has no meaning is sorted here, so a plan is
//! canonical: the same input gives byte-identical output. `plan_identity` is
//! the SHA-256 of the compact canonical plan with that member omitted.
//! The schema is `schemas/plan-v2.schema.json` (`plan-v1.schema.json` is the
//! historical v1, kept unchanged).

use serde_json::{json, Value};

use crate::analysis::Analysis;
use crate::decide::Outcome;
use crate::digest;
use crate::request::Request;

/// Schema id of plans.
pub const PLAN_SCHEMA: &str = "diff2test.plan.v2";
/// Schema id of receipts.
pub const RECEIPT_SCHEMA: &str = "diff2test.receipt.v2";

fn sha(v: &Value) -> String {
    format!("sha256:{}", digest::hex(&digest::sha256(&compact(v))))
}

/// Compact canonical bytes.
pub fn compact(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// Pretty bytes (two-space indent) for humans; same content as the canonical form.
pub fn to_pretty(v: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap_or_default()
}

/// Input identity: changed paths as given, content digest of every evidence file, policy and config.
pub fn input_identity(a: &Analysis, req: &Request) -> String {
    let mut changed = a.changed_raw.clone();
    changed.sort();
    let evidence: Vec<Value> = a.evidence.iter().map(|(p, h)| json!([p, h])).collect();
    sha(&json!({
        "changed": changed,
        "evidence": evidence,
        "policy": a.policy.identity,
        "config": req.config,
        "source_dir": req.source_dir,
        "build_dir": req.build_dir,
    }))
}

fn counts(a: &Analysis) -> Option<(usize, usize)> {
    match &a.outcome {
        Outcome::SubsetSelected { selected, all, .. } => Some((all.len(), selected.len())),
        Outcome::FullSuiteSelected { all, .. } => Some((all.len(), all.len())),
        Outcome::FullSuiteRequired { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {
            None
        }
    }
}

fn claim(o: &Outcome, declared: bool) -> &'static str {
    match o {
        Outcome::SubsetSelected { .. } if declared => {
            "Complete with declared boundaries: every skipped test's dependency closure (its command target, every artifact, output and directory its command, environment, working directory, required files, closure definitions and build-tree headers name, what its programs' bytes name, and their build dependencies) contains no target reached from the changed paths through complete, detectably fresh compiler dependency evidence under the supported Unix Makefiles and Ninja models (compiler depfiles or the ninja deps log), no skipped test names a changed path, and the changed paths outside that evidence are covered by the policy declarations listed in `declarations`, which this claim assumes to be true. The claim is file-level and bounded by that evidence; it says nothing about whether any test passes."
        }
        Outcome::SubsetSelected { .. } => {
            "Every skipped test's dependency closure (its command target, every artifact, output and directory its command, environment, working directory, required files, closure definitions and build-tree headers name, what its programs' bytes name, and their build dependencies) contains no target reached from the changed paths through complete, detectably fresh compiler dependency evidence under the supported Unix Makefiles and Ninja models (compiler depfiles or the ninja deps log), and no skipped test names a changed path. The claim is file-level and bounded by that evidence; it says nothing about whether any test passes."
        }
        Outcome::FullSuiteSelected { .. } => {
            "No subset can be defended from the evidence (see fallback_reasons); every registered test is selected."
        }
        Outcome::FullSuiteRequired { .. } => {
            "The test catalogue cannot be trusted or enumerated; no test list is claimed. Run the complete suite through the usual workflow."
        }
        Outcome::UsageError(_) | Outcome::InternalError(_) => "No claim.",
    }
}

/// One test's verdict as the plan writes it (also `--explain T --format json`).
pub fn test_json(v: &crate::decide::Verdict) -> Value {
    let reasons: Vec<Value> = v
        .reasons
        .iter()
        .map(|r| json!({"code": r.code, "detail": r.detail, "evidence": r.evidence}))
        .collect();
    let closure: Vec<Value> = v
        .closure
        .iter()
        .map(|c| json!({"target": c.target, "type": c.kind, "translation_units": c.units}))
        .collect();
    json!({
        "name": v.name,
        "action": if v.selected { "selected" } else { "skipped" },
        "labels": v.labels,
        "reasons": reasons,
        "closure": closure,
    })
}

fn declared_json(d: &crate::policy::Declared) -> Value {
    json!({"kind": d.kind, "rule": d.rule, "matched": d.matched, "why": d.why})
}

/// Builds the plan.
pub fn plan(a: &Analysis, req: &Request) -> Value {
    let mut change_paths: Vec<Value> = a
        .changed
        .iter()
        .map(|c| json!({"path": c.display, "class": c.class.as_str(), "evidence": c.evidence, "confidence": if c.gap.is_some() { 0 } else { 1 }, "declared": c.declared.as_ref().map(declared_json)}))
        .collect();
    change_paths.sort_by(|x, y| x["path"].as_str().cmp(&y["path"].as_str()));
    let mut displays: Vec<&str> = a.changed.iter().map(|c| c.display.as_str()).collect();
    displays.sort();
    let change_identity = sha(&json!(displays));
    let tests: Vec<Value> = a.verdicts.iter().map(test_json).collect();
    let fallback: Vec<Value> = match &a.outcome {
        Outcome::FullSuiteSelected { gaps, .. } | Outcome::FullSuiteRequired { gaps } => gaps
            .iter()
            .map(|g| json!({"code": g.code.as_str(), "detail": g.detail}))
            .collect(),
        Outcome::SubsetSelected { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {
            Vec::new()
        }
    };
    let summary = match counts(a) {
        Some((available, selected)) => {
            json!({"available": available, "selected": selected, "skipped": available - selected})
        }
        None => json!({"available": null, "selected": null, "skipped": null}),
    };
    let evidence: Vec<Value> = a
        .evidence
        .iter()
        .map(|(p, h)| json!({"path": p, "sha256": h}))
        .collect();
    let declarations: Vec<Value> = a
        .declarations
        .iter()
        .map(|u| json!({"declared": declared_json(&u.declared), "subject": u.subject}))
        .collect();
    let mut hints: Vec<Value> = match &a.outcome {
        Outcome::FullSuiteSelected { gaps, .. } => gaps
            .iter()
            .filter_map(|g| {
                crate::declare::hint(g).map(|h| json!({"code": g.code.as_str(), "hint": h}))
            })
            .collect(),
        Outcome::SubsetSelected { .. }
        | Outcome::FullSuiteRequired { .. }
        | Outcome::UsageError(_)
        | Outcome::InternalError(_) => Vec::new(),
    };
    hints.sort_by_key(|h| h.to_string());
    hints.dedup();
    let mut plan = json!({
        "schema": PLAN_SCHEMA,
        "outcome": a.outcome.state(),
        "exit_code": a.outcome.exit_code(),
        "input_identity": input_identity(a, req),
        "change": {"identity": change_identity, "paths": change_paths, "base": req.base, "head": req.head},
        "inputs": {
            "source_dir": req.source_dir,
            "build_dir": req.build_dir,
            "config": req.config,
            "evidence": evidence,
            "policy": {"source": a.policy.source, "identity": a.policy.identity, "opaque": a.policy.opaque.as_str(), "build_config": a.policy.build_config.as_str(), "unreferenced_paths": a.policy.unreferenced_paths.as_str(), "scripts": a.policy.scripts_mode.as_str()},
        },
        "affected": {
            "translation_units": a.affected_units,
            "targets": {"direct": a.affected_direct, "dependent": a.affected_dependent},
        },
        "tests": tests,
        "fallback_reasons": fallback,
        "summary": summary,
        "claim": claim(&a.outcome, !a.declarations.is_empty()),
        "declarations": declarations,
        "policy_hints": hints,
    });
    let id = sha(&plan);
    if let Value::Object(m) = &mut plan {
        m.insert("plan_identity".into(), Value::String(id));
    }
    plan
}

/// Builds the value receipt: exact counts, no time, cost or correctness claims.
pub fn receipt(a: &Analysis, req: &Request) -> Value {
    let forced: Vec<Value> = match &a.outcome {
        Outcome::SubsetSelected { forced, chains, .. } => {
            let mut v: Vec<Value> = forced
                .iter()
                .filter(|f| !chains.iter().any(|c| c.test == f.test))
                .map(|f| json!({"name": f.test, "code": f.code}))
                .collect();
            v.dedup();
            v
        }
        Outcome::FullSuiteSelected { .. }
        | Outcome::FullSuiteRequired { .. }
        | Outcome::UsageError(_)
        | Outcome::InternalError(_) => Vec::new(),
    };
    let mut forced_names: Vec<&str> = forced.iter().filter_map(|f| f["name"].as_str()).collect();
    forced_names.dedup();
    let (tests, reduction) = match counts(a) {
        Some((available, selected)) => {
            let skipped = available - selected;
            (
                json!({"available": available, "selected": selected, "skipped": skipped}),
                json!({"skipped": skipped, "available": available, "fraction": format!("{skipped}/{available}")}),
            )
        }
        None => (
            json!({"available": null, "selected": null, "skipped": null}),
            Value::Null,
        ),
    };
    json!({
        "schema": RECEIPT_SCHEMA,
        "input_identity": input_identity(a, req),
        "outcome": a.outcome.state(),
        "tests": tests,
        "reduction": reduction,
        "forced_selection": {"count": forced_names.len(), "tests": forced},
        "claims": "Exact planning counts only. No time, cost, token, correctness or failure-prevention claim is made.",
    })
}
