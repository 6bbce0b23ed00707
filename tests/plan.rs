//! Issue 6 on a real build of `fixtures/cmake-project`: the `diff2test.plan.v2`
//! JSON plan (validated against `schemas/plan-v2.schema.json`), its identities
//! and determinism, the `diff2test.receipt.v1` receipt, the selection policy
//! (`always_run`, path rules, `opaque = "select" | "full"`) and `--explain`.
//!
//! Shared builds are never mutated: policy files, receipts and evidence copies
//! are written beside them in the temp root, under names unique to each test.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

const CORE_HPP: &str = "libs/core/include/core/core.hpp";
const STRINGS_HPP: &str = "libs/util/include/util/strings.hpp";
const CODEC_HPP: &str = "libs/net/include/net/codec.hpp";

const OUTSIDE: &str = "OUTSIDE_TRANSITIVE_IMPACT_SET";

const CORE_SKIPPED: &[&str] = &[
    "checker.selftest",
    "header.macros",
    "header.version",
    "objs.checksum",
    "objs.sum[0-9]+",
];

// ---------------------------------------------------------------- schema and plan helpers

fn load_schema(file: &str) -> Value {
    let path = repo_root().join("schemas").join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn compile(file: &str) -> jsonschema::Validator {
    let schema = load_schema(file);
    if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
        panic!("{file} is not a valid draft 2020-12 schema: {e}");
    }
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{file} does not compile: {e}"))
}

fn plan_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| compile("plan-v2.schema.json"))
}

fn receipt_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| compile("receipt-v2.schema.json"))
}

fn schema_errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("at {}: {e}", e.instance_path))
        .collect()
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors = schema_errors(v, doc);
    assert!(
        errors.is_empty(),
        "{what} does not validate:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(doc).unwrap()
    );
}

fn assert_plan_invalid(doc: &Value, why: &str) {
    assert!(
        !plan_validator().is_valid(doc),
        "the plan schema accepted a plan with {why}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `plan_identity` recomputed independently: drop the member, serialize compactly
/// (serde_json's default map keeps keys sorted), SHA-256.
fn recompute_plan_identity(plan: &Value) -> String {
    let mut p = plan.clone();
    p.as_object_mut()
        .expect("plan is an object")
        .remove("plan_identity");
    format!(
        "sha256:{}",
        hex(&Sha256::digest(serde_json::to_vec(&p).unwrap()))
    )
}

/// Registered test names of a catalogue, sorted by bytes.
fn catalogue_names(ctest_json: &Path) -> Vec<String> {
    let v: Value = serde_json::from_slice(&std::fs::read(ctest_json).unwrap()).unwrap();
    let mut names: Vec<String> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn tests_of(plan: &Value) -> &Vec<Value> {
    plan["tests"].as_array().expect("tests is an array")
}

fn test<'a>(plan: &'a Value, name: &str) -> &'a Value {
    tests_of(plan)
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("test {name} missing from the plan"))
}

fn codes(t: &Value) -> Vec<&str> {
    t["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect()
}

fn with_action<'a>(plan: &'a Value, action: &str) -> Vec<&'a str> {
    tests_of(plan)
        .iter()
        .filter(|t| t["action"] == action)
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

fn fallback_codes(plan: &Value) -> Vec<&str> {
    plan["fallback_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect()
}

/// Every property the issue demands of a plan, checked in code (independent of the schema):
/// canonical bytes, schema validity, each registered test exactly once with a coded reason,
/// a skip argument with a non-empty closure on every skipped test, consistent counts and a
/// correct `plan_identity`.
fn check_plan(stdout: &str, registered: Option<&[String]>) -> Value {
    let plan: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document: {e}\n{stdout}"));
    // Canonical form: re-serializing the parsed plan (keys sorted) gives the same bytes.
    assert_eq!(
        String::from_utf8(serde_json::to_vec_pretty(&plan).unwrap()).unwrap() + "\n",
        stdout,
        "the plan is not in canonical form (sorted keys, two-space indent, one final newline)"
    );
    assert_valid(plan_validator(), &plan, "the plan");
    assert_eq!(plan["schema"], "diff2test.plan.v2");
    let names: Vec<&str> = tests_of(&plan)
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "tests must be sorted by name and appear once each: {names:?}"
    );
    if let Some(registered) = registered {
        assert_eq!(
            names, registered,
            "every registered test must appear exactly once"
        );
    }
    for t in tests_of(&plan) {
        let reasons = t["reasons"].as_array().unwrap();
        assert!(!reasons.is_empty(), "test {} has no reason", t["name"]);
        assert!(
            reasons
                .iter()
                .all(|r| r["code"].as_str().is_some_and(|c| !c.is_empty())),
            "a reason without a code: {t}"
        );
        match t["action"].as_str().unwrap() {
            "skipped" => {
                assert!(
                    codes(t).contains(&OUTSIDE),
                    "skipped test {} lacks {OUTSIDE}: {t}",
                    t["name"]
                );
                assert!(
                    !t["closure"].as_array().unwrap().is_empty(),
                    "skipped test {} has an empty closure",
                    t["name"]
                );
                let skip = reasons.iter().find(|r| r["code"] == OUTSIDE).unwrap();
                for c in t["closure"].as_array().unwrap() {
                    let entry = format!("target:{}", c["target"].as_str().unwrap());
                    assert!(
                        skip["evidence"]
                            .as_array()
                            .unwrap()
                            .contains(&Value::String(entry.clone())),
                        "skip argument of {} omits {entry}",
                        t["name"]
                    );
                }
            }
            "selected" => assert!(
                !codes(t).contains(&OUTSIDE),
                "selected test {} carries a skip argument",
                t["name"]
            ),
            other => panic!("unknown action {other}"),
        }
    }
    let selected = with_action(&plan, "selected").len() as u64;
    let skipped = with_action(&plan, "skipped").len() as u64;
    if plan["outcome"] != "FULL_SUITE_REQUIRED" {
        assert_eq!(plan["summary"]["available"], names.len() as u64);
        assert_eq!(plan["summary"]["selected"], selected);
        assert_eq!(plan["summary"]["skipped"], skipped);
    }
    assert_eq!(
        plan["plan_identity"].as_str().unwrap(),
        recompute_plan_identity(&plan),
        "plan_identity is not the SHA-256 of the plan without it"
    );
    plan
}

/// Runs `b` with `--format json` and checks the plan.
fn json_run(b: &Built, changed: &[&str], extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(extra);
    let r = b.run(changed, &args);
    assert!(!r.stdout.is_empty(), "no plan on stdout: {r:#?}");
    let plan = check_plan(&r.stdout, Some(&catalogue_names(&b.ctest_json())));
    assert_eq!(
        plan["outcome"],
        r.state(),
        "plan outcome and stderr state disagree"
    );
    assert_eq!(
        plan["exit_code"], r.code,
        "plan exit_code and process exit code disagree"
    );
    (r, plan)
}

/// Writes a policy file into the build's temp root (never into SRC or BUILD).
fn policy(b: &Built, name: &str, text: &str) -> String {
    let p = b.root.join(format!("policy-{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn receipt_path(b: &Built, name: &str) -> PathBuf {
    b.root.join(format!("receipt-{name}.json"))
}

fn read_receipt(path: &Path) -> Value {
    let bytes = std::fs::read(path)
        .unwrap_or_else(|e| panic!("receipt {} not written: {e}", path.display()));
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_valid(receipt_validator(), &v, "the receipt");
    assert_eq!(v["schema"], "diff2test.receipt.v2");
    v
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

// ---------------------------------------------------------------- the schemas themselves

#[test]
fn schemas_are_valid_draft_2020_12_and_match_the_code_vocabulary() {
    plan_validator();
    receipt_validator();
    let schema = load_schema("plan-v2.schema.json");
    let enum_of = |def: &str| -> BTreeSet<String> {
        schema["$defs"][def]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_owned())
            .collect()
    };
    let frozen: BTreeSet<String> = diff2test::reason::Code::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(
        enum_of("gap_code"),
        frozen,
        "the schema's fallback codes must be exactly src/reason.rs Code::ALL"
    );
    use diff2test::decide::select_code as s;
    let select: BTreeSet<String> = s::ALL.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        enum_of("selection_code"),
        select,
        "the schema's selection codes must be exactly src/decide.rs select_code"
    );
    assert_eq!(
        schema["properties"]["schema"]["const"],
        diff2test::report::plan::PLAN_SCHEMA
    );
    assert_eq!(
        load_schema("receipt-v2.schema.json")["properties"]["schema"]["const"],
        diff2test::report::plan::RECEIPT_SCHEMA
    );
}

/// Compatibility is exact by schema identity (seed 002 §9): v1 stays as it was
/// published; v2 carries the new members.
#[test]
fn v1_schemas_are_kept_unchanged_and_v2_keeps_the_members_ci_scripts_rely_on() {
    use sha2::Digest as _;
    for (file, want) in [
        (
            "plan-v1.schema.json",
            "0b0070570512f9a60d316e2181d1324c4d8169b0bbaec41aa607999c5c18a601",
        ),
        (
            "receipt-v1.schema.json",
            "ce8d2da5d7a3f09296778b862853f209568b55e7cbad3db4c0d58ed01cc35676",
        ),
    ] {
        let bytes = std::fs::read(repo_root().join("schemas").join(file)).unwrap();
        let got: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, want, "{file} is historical and must not change");
    }
    let v2 = load_schema("plan-v2.schema.json");
    for member in [
        "schema",
        "outcome",
        "input_identity",
        "plan_identity",
        "tests",
    ] {
        assert!(
            v2["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m == member),
            "{member}"
        );
    }
    let test = &v2["$defs"]["test"];
    assert!(test.is_object(), "plan-v2 keeps $defs.test");
}

// ---------------------------------------------------------------- plans for each outcome

#[test]
fn subset_plan_validates_and_every_test_has_a_reason() {
    let b = shared();
    let (r, plan) = json_run(b, &[CORE_HPP], &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(plan["outcome"], "SUBSET_SELECTED");
    assert_eq!(with_action(&plan, "selected"), CORE_SELECTED);
    assert_eq!(with_action(&plan, "skipped"), CORE_SKIPPED);
    assert_eq!(
        plan["summary"],
        serde_json::json!({"available": 14, "selected": 9, "skipped": 5})
    );
    assert_eq!(fallback_codes(&plan), Vec::<&str>::new());
    // Selected tests carry their evidence chain.
    let tool = test(&plan, "tool.roundtrip");
    assert_eq!(codes(tool), ["AFFECTED_BY_CHANGE"]);
    assert!(
        tool["reasons"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("-> target net -> target datagen -> test tool.roundtrip"),
        "{tool}"
    );
    // Skipped tests carry the skip argument with their closure.
    for name in CORE_SKIPPED {
        assert_eq!(codes(test(&plan, name)), [OUTSIDE], "{name}");
    }
    let closure = |name: &str| -> Vec<String> {
        test(&plan, name)["closure"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["target"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(closure("header.macros"), ["test_header"]);
    assert_eq!(closure("checker.selftest"), ["checker"]);
    assert_eq!(closure("objs.checksum"), ["objs", "test_objs"]);
    assert_eq!(
        test(&plan, "objs.checksum")["closure"][0]["type"],
        "OBJECT_LIBRARY"
    );
    // Change and affected summary.
    assert_eq!(plan["change"]["paths"][0]["path"], CORE_HPP);
    assert_eq!(plan["change"]["paths"][0]["class"], "header");
    assert!(plan["affected"]["targets"]["direct"]
        .as_array()
        .unwrap()
        .contains(&Value::from("core")));
    assert!(plan["affected"]["targets"]["dependent"]
        .as_array()
        .unwrap()
        .contains(&Value::from("datagen")));
    // The plan replaces the names on stdout; stderr is unchanged.
    assert!(
        r.stderr.contains("selected 9 of 14 tests (5 skipped)"),
        "{}",
        r.stderr
    );
}

#[test]
fn full_suite_selected_plan_selects_every_test_with_the_fallback_reason() {
    let b = shared();
    let (r, plan) = json_run(b, &["README.md"], &[]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert_eq!(plan["outcome"], "FULL_SUITE_SELECTED");
    assert_eq!(with_action(&plan, "selected"), ALL_TESTS);
    assert_eq!(fallback_codes(&plan), ["CHANGE_UNKNOWN"]);
    assert_eq!(
        plan["summary"],
        serde_json::json!({"available": 14, "selected": 14, "skipped": 0})
    );
    for t in tests_of(&plan) {
        assert_eq!(codes(t), ["FULL_SUITE_FALLBACK"], "{t}");
        let evidence = t["reasons"][0]["evidence"].as_array().unwrap();
        assert!(
            evidence
                .iter()
                .any(|e| e.as_str().unwrap().starts_with("CHANGE_UNKNOWN: README.md")),
            "{t}"
        );
    }
    assert_eq!(plan["change"]["paths"][0]["class"], "unresolved");
    assert_eq!(plan["change"]["paths"][0]["confidence"], 0);
}

#[test]
fn full_suite_selected_before_the_graph_exists_still_has_a_full_plan() {
    // The File API reply is unusable (ROOT_MISMATCH: another source dir), so no graph is built.
    let b = shared();
    let mut args = b.base_args();
    args[1] = b.build.display().to_string();
    args.extend([
        "--changed".into(),
        "ctest.json".into(),
        "--format".into(),
        "json".into(),
    ]);
    let r = run_bin(&args, None);
    assert_eq!(r.code, 3, "{r:#?}");
    let plan = check_plan(&r.stdout, Some(&catalogue_names(&b.ctest_json())));
    assert!(
        fallback_codes(&plan).contains(&"ROOT_MISMATCH"),
        "{:?}",
        fallback_codes(&plan)
    );
    assert_eq!(with_action(&plan, "selected"), ALL_TESTS);
}

#[test]
fn full_suite_required_plan_has_no_tests() {
    let b = shared();
    let mut args = b.base_args();
    args[5] = b.root.join("missing-plan.json").display().to_string();
    let receipt = receipt_path(b, "required");
    args.extend(
        [
            "--changed",
            CORE_HPP,
            "--format",
            "json",
            "--receipt",
            receipt.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let r = run_bin(&args, None);
    assert_eq!(r.code, 4, "{r:#?}");
    let plan = check_plan(&r.stdout, None);
    assert_eq!(plan["outcome"], "FULL_SUITE_REQUIRED");
    assert_eq!(plan["exit_code"], 4);
    assert_eq!(tests_of(&plan).len(), 0);
    assert_eq!(fallback_codes(&plan), ["CTEST_UNREADABLE"]);
    assert_eq!(
        plan["summary"],
        serde_json::json!({"available": null, "selected": null, "skipped": null})
    );
    let rec = read_receipt(&receipt);
    assert_eq!(rec["outcome"], "FULL_SUITE_REQUIRED");
    assert_eq!(rec["reduction"], Value::Null);
    assert_eq!(rec["tests"]["available"], Value::Null);
}

// ---------------------------------------------------------------- determinism and identities

#[test]
fn two_runs_give_byte_identical_plans_and_equal_identities() {
    for b in [shared(), shared_opaque()] {
        let a = b.run(&[CORE_HPP, STRINGS_HPP], &["--format", "json"]);
        let c = b.run(&[CORE_HPP, STRINGS_HPP], &["--format", "json"]);
        assert_eq!(a.stdout, c.stdout, "two runs on the same input differ");
        assert_eq!(a.stderr, c.stderr);
        // The order of the changed paths is not part of the input.
        let swapped = b.run(&[STRINGS_HPP, CORE_HPP], &["--format", "json"]);
        assert_eq!(
            a.stdout, swapped.stdout,
            "the changed-path order leaked into the plan"
        );
        let p = check_plan(&a.stdout, Some(&catalogue_names(&b.ctest_json())));
        let q: Value = serde_json::from_str(&c.stdout).unwrap();
        assert_eq!(p["plan_identity"], q["plan_identity"]);
        assert_eq!(p["input_identity"], q["input_identity"]);
    }
}

#[test]
fn plan_identity_is_recomputable_and_distinguishes_plans() {
    let b = shared();
    let (_, core) = json_run(b, &[CORE_HPP], &[]);
    let (_, strings) = json_run(b, &[STRINGS_HPP], &[]);
    let (_, full) = json_run(b, &["README.md"], &[]);
    let ids: BTreeSet<&str> = [&core, &strings, &full]
        .iter()
        .map(|p| p["plan_identity"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "different plans share an identity");
    // A hand-edited plan no longer matches its identity.
    let mut forged = core.clone();
    forged["tests"][0]["action"] = Value::from("selected");
    assert_ne!(
        recompute_plan_identity(&forged),
        core["plan_identity"].as_str().unwrap()
    );
    // The identity is over the compact form with the member omitted, not the pretty stdout.
    let pretty = Sha256::digest(serde_json::to_vec_pretty(&core).unwrap());
    assert_ne!(
        format!("sha256:{}", hex(&pretty)),
        core["plan_identity"].as_str().unwrap()
    );
}

#[test]
fn one_evidence_byte_changes_the_input_identity() {
    let b = shared();
    // A private copy of the catalogue, so the shared build is never touched.
    let copy = b.root.join("ctest-identity-copy.json");
    let orig = std::fs::read(b.ctest_json()).unwrap();
    std::fs::write(&copy, &orig).unwrap();
    let run = || {
        let mut args = b.base_args();
        args[5] = copy.display().to_string();
        args.extend(["--changed", CORE_HPP, "--format", "json"].map(String::from));
        let r = run_bin(&args, None);
        assert_eq!(r.code, 0, "{r:#?}");
        check_plan(&r.stdout, Some(&catalogue_names(&copy)))
    };
    let before = run();
    assert_eq!(
        run()["input_identity"],
        before["input_identity"],
        "the same evidence must give the same input identity"
    );
    write_keep_mtime(&copy, &[orig.as_slice(), b"\n"].concat());
    let after = run();
    assert_ne!(
        after["input_identity"], before["input_identity"],
        "one more byte in ctest.json must change the input identity"
    );
    assert_ne!(after["plan_identity"], before["plan_identity"]);
    assert_eq!(
        after["tests"], before["tests"],
        "a whitespace byte must not change any verdict"
    );
    let digest_of = |p: &Value| -> Value {
        p["inputs"]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == copy.display().to_string())
            .unwrap()["sha256"]
            .clone()
    };
    assert_ne!(digest_of(&after), digest_of(&before));
    assert_eq!(
        digest_of(&after),
        hex(&Sha256::digest(std::fs::read(&copy).unwrap()))
    );

    // The policy file is an input too.
    let p1 = policy(
        b,
        "identity",
        "[always_run]\ntests = [\"checker.selftest\"]\n",
    );
    let (_, with1) = json_run(b, &[CORE_HPP], &["--policy", &p1]);
    std::fs::write(&p1, "[always_run]\ntests = [\"checker.selftest\"] \n").unwrap();
    let (_, with2) = json_run(b, &[CORE_HPP], &["--policy", &p1]);
    assert_ne!(
        with1["input_identity"], with2["input_identity"],
        "a policy byte must change the input identity"
    );
    assert_eq!(
        with2["inputs"]["policy"]["identity"],
        hex(&Sha256::digest(std::fs::read(&p1).unwrap()))
    );
}

// ---------------------------------------------------------------- receipts

#[test]
fn receipt_counts_are_exact() {
    let b = shared();
    let path = receipt_path(b, "core");
    let r = b.run(&[CORE_HPP], &["--receipt", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.names(), CORE_SELECTED, "--receipt must not change stdout");
    let rec = read_receipt(&path);
    assert_eq!(rec["outcome"], "SUBSET_SELECTED");
    assert_eq!(
        rec["tests"],
        serde_json::json!({"available": 14, "selected": 9, "skipped": 5})
    );
    assert_eq!(
        rec["reduction"],
        serde_json::json!({"available": 14, "skipped": 5, "fraction": "5/14"})
    );
    assert_eq!(
        rec["forced_selection"],
        serde_json::json!({"count": 0, "tests": []})
    );

    // Forced additions are counted; a fallback skips nothing.
    let pol = policy(
        b,
        "receipt",
        "[always_run]\ntests = [\"checker.selftest\", \"core.add\"]\n",
    );
    let path = receipt_path(b, "forced");
    let r = b.run(
        &[CORE_HPP],
        &["--policy", &pol, "--receipt", path.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let rec = read_receipt(&path);
    assert_eq!(
        rec["tests"],
        serde_json::json!({"available": 14, "selected": 10, "skipped": 4})
    );
    assert_eq!(rec["reduction"]["fraction"], "4/14");
    // core.add has its own chain: only checker.selftest is a forced addition.
    assert_eq!(
        rec["forced_selection"],
        serde_json::json!({"count": 1, "tests": [{"name": "checker.selftest", "code": "ALWAYS_RUN"}]})
    );

    let path = receipt_path(b, "full");
    let r = b.run(
        &["README.md"],
        &["--format", "json", "--receipt", path.to_str().unwrap()],
    );
    assert_eq!(r.code, 3);
    let rec = read_receipt(&path);
    assert_eq!(
        rec["reduction"],
        serde_json::json!({"available": 14, "skipped": 0, "fraction": "0/14"})
    );
}

// ---------------------------------------------------------------- policy

#[test]
fn always_run_by_name_and_by_label() {
    let b = shared();
    let pol = policy(
        b,
        "always",
        "[always_run]\ntests = [\"checker.selftest\"]\nlabels = [\"header\"]\n",
    );
    let r = b.run(&[STRINGS_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        r.names(),
        [
            "checker.selftest",
            "header.macros",
            "header.version",
            "util.join",
            "util.spaced",
            "util.str+concat"
        ]
    );
    assert!(
        r.stderr.contains("forced checker.selftest: ALWAYS_RUN"),
        "{}",
        r.stderr
    );
    let (_, plan) = json_run(b, &[STRINGS_HPP], &["--policy", &pol]);
    assert_eq!(codes(test(&plan, "checker.selftest")), ["ALWAYS_RUN"]);
    assert_eq!(codes(test(&plan, "header.macros")), ["ALWAYS_RUN"]);
    assert!(test(&plan, "header.macros")["reasons"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("\"header\""));
    assert_eq!(codes(test(&plan, "util.join")), ["AFFECTED_BY_CHANGE"]);
    assert_eq!(test(&plan, "core.add")["action"], "skipped");
    assert_eq!(plan["inputs"]["policy"]["source"], pol.as_str());
    // Policy only adds: the same forced tests on a fallback stay a full fallback.
    let r = b.run(&["README.md"], &["--policy", &pol]);
    assert_eq!(r.code, 3);
    assert_eq!(r.names(), ALL_TESTS);
}

#[test]
fn path_rule_requires_labels_for_matching_changes() {
    let b = shared();
    let pol = policy(
        b,
        "rule-tool",
        "[[rule]]\npaths = [\"libs/net/**\"]\nrequire_labels = [\"tool\"]\n",
    );
    let (r, plan) = json_run(b, &[CODEC_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        with_action(&plan, "selected"),
        ["net.decode", "net.encode", "tool.roundtrip"]
    );
    let tool = codes(test(&plan, "tool.roundtrip"));
    assert!(
        tool.contains(&"POLICY_PATH_RULE") && tool.contains(&"AFFECTED_BY_CHANGE"),
        "{tool:?}"
    );

    // A rule that adds tests the evidence would skip.
    let pol = policy(
        b,
        "rule-header",
        "[[rule]]\npaths = [\"libs/net/**\"]\nrequire_labels = [\"header\"]\n",
    );
    let (r, plan) = json_run(b, &[CODEC_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        with_action(&plan, "selected"),
        [
            "header.macros",
            "header.version",
            "net.decode",
            "net.encode",
            "tool.roundtrip"
        ]
    );
    assert_eq!(codes(test(&plan, "header.version")), ["POLICY_PATH_RULE"]);
    assert!(test(&plan, "header.version")["reasons"][0]["detail"]
        .as_str()
        .unwrap()
        .contains(CODEC_HPP));
    let names = b.run(&[CODEC_HPP], &["--policy", &pol]);
    assert_eq!(
        names.names(),
        [
            "header.macros",
            "header.version",
            "net.decode",
            "net.encode",
            "tool.roundtrip"
        ]
    );

    // A change the rule does not match leaves the selection to the evidence.
    let (r, plan) = json_run(b, &[STRINGS_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 0);
    assert_eq!(
        with_action(&plan, "selected"),
        ["util.join", "util.spaced", "util.str+concat"]
    );
    assert_eq!(codes(test(&plan, "header.version")), [OUTSIDE]);
}

#[test]
fn required_label_that_no_test_carries_is_full_suite_selected() {
    let b = shared();
    let pol = policy(
        b,
        "uncovered-rule",
        "[[rule]]\npaths = [\"libs/net/**\"]\nrequire_labels = [\"tool\", \"fuzz\"]\n",
    );
    let (r, plan) = json_run(b, &[CODEC_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert_eq!(r.codes(), ["POLICY_LABEL_UNCOVERED"]);
    assert!(r.stderr.contains("\"fuzz\""), "{}", r.stderr);
    assert_eq!(fallback_codes(&plan), ["POLICY_LABEL_UNCOVERED"]);
    assert_eq!(with_action(&plan, "selected"), ALL_TESTS);
    assert_eq!(b.run(&[CODEC_HPP], &["--policy", &pol]).names(), ALL_TESTS);

    let pol = policy(
        b,
        "uncovered-always",
        "[always_run]\nlabels = [\"smoke\"]\n",
    );
    let r = b.run(&[CORE_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert_eq!(r.codes(), ["POLICY_LABEL_UNCOVERED"]);

    let pol = policy(
        b,
        "unknown-test",
        "[always_run]\ntests = [\"no.such.test\"]\n",
    );
    let r = b.run(&[CORE_HPP], &["--policy", &pol]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert_eq!(r.codes(), ["POLICY_TEST_UNKNOWN"]);
}

#[test]
fn malformed_or_missing_policy_is_a_usage_error() {
    let b = shared();
    let cases = [
        ("unknown-top", "opaqe = \"select\"\n"),
        ("unknown-always", "[always_run]\ntest = [\"core.add\"]\n"),
        (
            "unknown-rule",
            "[[rule]]\npaths = [\"libs/**\"]\nrequire_labels = [\"unit\"]\nlabels = [\"x\"]\n",
        ),
        ("bad-opaque", "opaque = \"maybe\"\n"),
        (
            "empty-rule",
            "[[rule]]\npaths = []\nrequire_labels = [\"unit\"]\n",
        ),
        ("not-toml", "[always_run\n"),
    ];
    for (name, text) in cases {
        let pol = policy(b, name, text);
        let r = b.run(&[CORE_HPP], &["--policy", &pol, "--format", "json"]);
        assert_eq!(r.code, 2, "{name}: {r:#?}");
        assert_eq!(r.state(), "USAGE_ERROR", "{name}");
        assert_eq!(
            r.stdout, "",
            "{name}: a usage error prints nothing on stdout"
        );
        assert!(r.stderr.contains("policy"), "{name}: {}", r.stderr);
    }
    let missing = b.root.join("no-such-policy.toml");
    let r = b.run(&[CORE_HPP], &["--policy", missing.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:#?}");
    assert_eq!(r.state(), "USAGE_ERROR");
    assert_eq!(r.stdout, "");
}

#[test]
fn policy_file_at_the_source_root_is_used_and_policy_flag_overrides_it() {
    let b = build_fixture(&[]);
    let default = b.src.join("diff2test.toml");
    std::fs::write(&default, "[always_run]\ntests = [\"checker.selftest\"]\n").unwrap();
    let (r, plan) = json_run(&b, &[STRINGS_HPP], &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        with_action(&plan, "selected"),
        [
            "checker.selftest",
            "util.join",
            "util.spaced",
            "util.str+concat"
        ]
    );
    assert_eq!(
        plan["inputs"]["policy"]["source"],
        default.display().to_string()
    );
    let explicit = policy(&b, "override", "opaque = \"full\"\n");
    let (_, plan) = json_run(&b, &[STRINGS_HPP], &["--policy", &explicit]);
    assert_eq!(
        with_action(&plan, "selected"),
        ["util.join", "util.spaced", "util.str+concat"]
    );
    assert_eq!(plan["inputs"]["policy"]["source"], explicit.as_str());
    // A broken default policy is a usage error too, not silently ignored.
    std::fs::write(&default, "[always_run]\nnames = []\n").unwrap();
    let r = b.run(&[STRINGS_HPP], &[]);
    assert_eq!(r.code, 2, "{r:#?}");
}

/// A changed path given through a symlink inside the source tree is mapped onto the
/// real file by the evidence walk (the chain names the real TU), so a path rule for
/// the real location must apply too. Otherwise spelling the path differently
/// bypasses the policy.
#[test]
fn path_rule_applies_to_a_symlinked_spelling_of_the_changed_path() {
    let b = build_fixture(&[]);
    std::os::unix::fs::symlink("libs/net", b.src.join("netlink")).unwrap();
    let pol = policy(
        &b,
        "symlink",
        "[[rule]]\npaths = [\"libs/net/**\"]\nrequire_labels = [\"header\"]\n",
    );
    let direct = b.run(&["libs/net/src/codec.cpp"], &["--policy", &pol]);
    assert_eq!(direct.code, 0, "{direct:#?}");
    assert_eq!(
        direct.names(),
        [
            "header.macros",
            "header.version",
            "net.decode",
            "net.encode",
            "tool.roundtrip"
        ]
    );
    let via_link = b.run(&["netlink/src/codec.cpp"], &["--policy", &pol]);
    assert_eq!(via_link.code, 0, "{via_link:#?}");
    assert!(
        via_link.stderr.contains("-> unit libs/net/src/codec.cpp"),
        "the evidence walk resolves the symlink: {}",
        via_link.stderr
    );
    assert_eq!(
        via_link.names(),
        direct.names(),
        "policy rule `libs/net/**` was bypassed by naming libs/net/src/codec.cpp through a symlink\n{}",
        via_link.stderr
    );
}

// ---------------------------------------------------------------- opaque = "select" | "full"

const OPAQUE_FORCED: &[&str] = &["gen.core", "gen.value", "wrapped.env"];

#[test]
fn opaque_select_forces_opaque_tests_and_skips_unrelated_ones() {
    let b = shared_opaque();
    let select = policy(b, "opaque-select", "opaque = \"select\"\n");
    let (r, plan) = json_run(b, &[CORE_HPP], &["--policy", &select]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(plan["outcome"], "SUBSET_SELECTED");
    assert_eq!(plan["inputs"]["policy"]["opaque"], "select");
    let mut want: Vec<&str> = CORE_SELECTED.to_vec();
    want.extend(["gen.core", "gen.value", "plugin.load", "wrapped.env"]);
    assert_eq!(with_action(&plan, "selected"), sorted(&want));
    assert_eq!(with_action(&plan, "skipped"), CORE_SKIPPED);
    // The wrapper is forced by its opaque boundary only; the generated-source tests also have chains.
    assert_eq!(codes(test(&plan, "wrapped.env")), ["OPAQUE_BOUNDARY"]);
    assert!(test(&plan, "wrapped.env")["reasons"][0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("TEST_COMMAND_UNMAPPED"));
    for name in ["gen.core", "gen.value"] {
        let c = codes(test(&plan, name));
        assert!(
            c.contains(&"OPAQUE_BOUNDARY") && c.contains(&"AFFECTED_BY_CHANGE"),
            "{name}: {c:?}"
        );
        let forced = test(&plan, name)["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["code"] == "OPAQUE_BOUNDARY")
            .unwrap();
        assert!(
            forced["detail"]
                .as_str()
                .unwrap()
                .starts_with("GENERATED_SOURCE"),
            "{forced}"
        );
    }
    // The MODULE plugin is reached through the artifact its test names: a chain, no boundary.
    assert_eq!(codes(test(&plan, "plugin.load")), ["AFFECTED_BY_CHANGE"]);
    assert!(test(&plan, "plugin.load")["reasons"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("-> target plugin -> test plugin.load"));
    for name in [
        "header.macros",
        "header.version",
        "objs.checksum",
        "checker.selftest",
    ] {
        assert_eq!(codes(test(&plan, name)), [OUTSIDE], "{name}");
    }
    let names = b.run(&[CORE_HPP], &["--policy", &select]);
    assert_eq!(names.names(), sorted(&want));

    // A change that reaches none of them: the opaque tests are still forced in, the rest skipped.
    let path = receipt_path(b, "opaque-strings");
    let (r, plan) = json_run(
        b,
        &[STRINGS_HPP],
        &["--policy", &select, "--receipt", path.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        with_action(&plan, "selected"),
        [
            "gen.core",
            "gen.value",
            "util.join",
            "util.spaced",
            "util.str+concat",
            "wrapped.env"
        ]
    );
    for name in OPAQUE_FORCED {
        assert_eq!(codes(test(&plan, name)), ["OPAQUE_BOUNDARY"], "{name}");
    }
    for name in [
        "plugin.load",
        "core.add",
        "header.macros",
        "net.decode",
        "tool.roundtrip",
    ] {
        assert_eq!(codes(test(&plan, name)), [OUTSIDE], "{name}");
    }
    let rec = read_receipt(&path);
    assert_eq!(rec["reduction"]["fraction"], "12/18");
    assert_eq!(rec["forced_selection"]["count"], 3);
    let forced: Vec<&str> = rec["forced_selection"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(forced, OPAQUE_FORCED);
}

#[test]
fn opaque_full_falls_back_on_the_same_run() {
    let b = shared_opaque();
    let full = policy(b, "opaque-full", "opaque = \"full\"\n");
    for extra in [vec!["--policy", full.as_str()], vec![]] {
        let (r, plan) = json_run(b, &[CORE_HPP], &extra);
        assert_eq!(r.code, 3, "{extra:?}: {r:#?}");
        assert_eq!(plan["outcome"], "FULL_SUITE_SELECTED");
        assert_eq!(
            fallback_codes(&plan),
            [
                "TEST_COMMAND_UNMAPPED",
                "GENERATED_SOURCE",
                "GENERATED_SOURCE"
            ]
        );
        assert_eq!(tests_of(&plan).len(), 18);
        assert!(tests_of(&plan).iter().all(|t| t["action"] == "selected"));
    }
}

/// The template a custom command copies is evidence of that command (its
/// declared input): no longer an unknown path, it affects the command's
/// target (whose tests `opaque = "select"` forces anyway: the command's
/// intermediate file makes its evidence incomplete).
#[test]
fn a_custom_command_input_is_classified_through_its_command() {
    let b = shared_opaque();
    let select = policy(b, "opaque-select-template", "opaque = \"select\"\n");
    let (r, plan) = json_run(b, &["tests/gen/generated.cpp.in"], &["--policy", &select]);
    assert_eq!(r.code, 0, "{r:#?}");
    let path = &plan["change"]["paths"][0];
    assert_eq!(path["class"], "header", "{path}");
    assert!(
        path["evidence"]
            .as_str()
            .unwrap()
            .contains("custom command writing tests/gen/generated.cpp"),
        "{path}"
    );
    let selected = with_action(&plan, "selected");
    assert!(
        selected.contains(&"gen.value") && selected.contains(&"gen.core"),
        "{selected:?}"
    );
    assert!(!selected.contains(&"util.join"), "{selected:?}");
}

#[test]
fn opaque_select_still_falls_back_on_global_unknowns() {
    let b = shared_opaque();
    let select = policy(b, "opaque-select-global", "opaque = \"select\"\n");
    for (changed, code) in [
        ("README.md", "CHANGE_UNKNOWN"),
        ("CMakeLists.txt", "CHANGE_BUILD_CONFIG"),
        ("libs/core/include/core/gone.hpp", "CHANGE_DELETED"),
    ] {
        let (r, plan) = json_run(b, &[CORE_HPP, changed], &["--policy", &select]);
        assert_eq!(r.code, 3, "{changed}: {r:#?}");
        assert!(
            fallback_codes(&plan).contains(&code),
            "{changed}: {:?}",
            fallback_codes(&plan)
        );
        assert_eq!(with_action(&plan, "selected").len(), 18);
    }
    // Missing dependency evidence (a private copy of the dep list without one .d).
    let deps = std::fs::read_to_string(b.deps()).unwrap();
    let kept: Vec<&str> = deps
        .lines()
        .filter(|l| !l.contains("test_header.dir"))
        .collect();
    assert!(kept.len() < deps.lines().count());
    let copy = b.root.join("deps-missing-one.txt");
    std::fs::write(&copy, kept.join("\n") + "\n").unwrap();
    let mut args = b.base_args();
    args[7] = copy.display().to_string();
    args.extend(["--changed", CORE_HPP, "--policy", select.as_str()].map(String::from));
    let r = run_bin(&args, None);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.codes().contains(&"DEP_COVERAGE_INCOMPLETE".to_owned()),
        "{:?}",
        r.codes()
    );
}

// ---------------------------------------------------------------- --explain

#[test]
fn explain_says_why_a_test_is_selected_or_safe_to_skip() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &["--explain", "header.macros"]);
    assert_eq!(r.code, 0, "{r:#?}");
    let out = b.redact(&r.stdout);
    assert!(
        out.starts_with("test header.macros: skipped (safe to skip) [SUBSET_SELECTED]\n"),
        "{out}"
    );
    assert!(out.contains("  reason OUTSIDE_TRANSITIVE_IMPACT_SET: none of the 1 targets in its dependency closure is reached"), "{out}");
    assert!(
        out.contains("    evidence command[0]:[ROOT]/build/tests/test_header\n"),
        "{out}"
    );
    assert!(out.contains("    evidence target:test_header\n"), "{out}");
    assert!(
        out.contains("  closure: test_header (EXECUTABLE, 1 units)\n"),
        "{out}"
    );
    assert!(
        !out.contains("header.version"),
        "only the explained test: {out}"
    );

    let r = b.run(
        &[CORE_HPP],
        &["--explain", "net.decode", "--explain", "objs.checksum"],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        r.stdout
            .starts_with("test net.decode: selected [SUBSET_SELECTED]\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("  reason AFFECTED_BY_CHANGE: {CORE_HPP} -> depfile libs/net/CMakeFiles/net.dir/src/codec.cpp.o.d")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("    evidence unit:libs/net/src/codec.cpp\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("test objs.checksum: skipped (safe to skip) [SUBSET_SELECTED]\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "  closure: objs (OBJECT_LIBRARY, 1 units), test_objs (EXECUTABLE, 1 units)\n"
        ),
        "{}",
        r.stdout
    );

    // On a fallback the explanation names the fallback.
    let r = b.run(&["README.md"], &["--explain", "header.macros"]);
    assert_eq!(r.code, 3);
    assert!(
        r.stdout.starts_with(
            "test header.macros: selected [FULL_SUITE_SELECTED]\n  reason FULL_SUITE_FALLBACK:"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("evidence CHANGE_UNKNOWN: README.md"),
        "{}",
        r.stdout
    );

    // A forced test explains its forcing.
    let select = policy(shared_opaque(), "opaque-explain", "opaque = \"select\"\n");
    let r = shared_opaque().run(
        &[STRINGS_HPP],
        &["--policy", &select, "--explain", "wrapped.env"],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(r.stdout.starts_with("test wrapped.env: selected [SUBSET_SELECTED]\n  reason OPAQUE_BOUNDARY: TEST_COMMAND_UNMAPPED"), "{}", r.stdout);
}

#[test]
fn explain_of_an_unknown_test_is_a_usage_error() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &["--explain", "nosuch"]);
    assert_eq!(r.code, 2, "{r:#?}");
    assert_eq!(r.state(), "USAGE_ERROR");
    assert!(r.stderr.contains("nosuch"), "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let r = b.run(
        &[CORE_HPP],
        &["--explain", "core.add", "--explain", "nosuch"],
    );
    assert_eq!(
        r.code, 2,
        "one unknown name fails the whole request: {r:#?}"
    );
    assert_eq!(r.stdout, "");
}

// ---------------------------------------------------------------- the schema catches broken plans

#[test]
fn schema_and_checker_reject_a_skipped_test_without_its_skip_argument() {
    let b = shared();
    let (_, plan) = json_run(b, &[CORE_HPP], &[]);
    let skipped = tests_of(&plan)
        .iter()
        .position(|t| t["action"] == "skipped")
        .unwrap();
    let selected = tests_of(&plan)
        .iter()
        .position(|t| t["action"] == "selected")
        .unwrap();
    let mutate = |f: &dyn Fn(&mut Value)| -> Value {
        let mut p = plan.clone();
        f(&mut p);
        p
    };
    let broken = [
        (
            "a skipped test without reasons",
            mutate(&|p| p["tests"][skipped]["reasons"] = serde_json::json!([])),
        ),
        (
            "a skipped test without OUTSIDE_TRANSITIVE_IMPACT_SET",
            mutate(&|p| p["tests"][skipped]["reasons"][0]["code"] = "AFFECTED_BY_CHANGE".into()),
        ),
        (
            "a skipped test with an empty closure",
            mutate(&|p| p["tests"][skipped]["closure"] = serde_json::json!([])),
        ),
        (
            "a reason without a code",
            mutate(&|p| {
                p["tests"][selected]["reasons"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("code");
            }),
        ),
        (
            "a selected test with a skip argument",
            mutate(&|p| p["tests"][selected]["reasons"][0]["code"] = OUTSIDE.into()),
        ),
        (
            "an unknown action",
            mutate(&|p| p["tests"][0]["action"] = "maybe".into()),
        ),
        (
            "a subset with a fallback reason",
            mutate(&|p| {
                p["fallback_reasons"] =
                    serde_json::json!([{"code": "CHANGE_UNKNOWN", "detail": "x"}]);
            }),
        ),
        (
            "a full fallback that skips a test",
            mutate(&|p| {
                p["outcome"] = "FULL_SUITE_SELECTED".into();
                p["exit_code"] = 3.into();
                p["fallback_reasons"] =
                    serde_json::json!([{"code": "CHANGE_UNKNOWN", "detail": "x"}]);
            }),
        ),
        (
            "an exit code that contradicts the outcome",
            mutate(&|p| p["exit_code"] = 3.into()),
        ),
        (
            "an unknown fallback code",
            mutate(&|p| {
                p["outcome"] = "FULL_SUITE_REQUIRED".into();
                p["exit_code"] = 4.into();
                p["tests"] = serde_json::json!([]);
                p["summary"] =
                    serde_json::json!({"available": null, "selected": null, "skipped": null});
                p["fallback_reasons"] =
                    serde_json::json!([{"code": "SOMETHING_NEW", "detail": "x"}]);
            }),
        ),
        (
            "a FULL_SUITE_REQUIRED plan with tests",
            mutate(&|p| {
                p["outcome"] = "FULL_SUITE_REQUIRED".into();
                p["exit_code"] = 4.into();
                p["summary"] =
                    serde_json::json!({"available": null, "selected": null, "skipped": null});
                p["fallback_reasons"] =
                    serde_json::json!([{"code": "CTEST_UNREADABLE", "detail": "x"}]);
            }),
        ),
        (
            "a malformed identity",
            mutate(&|p| p["plan_identity"] = "sha256:XYZ".into()),
        ),
        (
            "a missing input_identity",
            mutate(&|p| {
                p.as_object_mut().unwrap().remove("input_identity");
            }),
        ),
        (
            "an undocumented top-level member",
            mutate(&|p| p["extra"] = true.into()),
        ),
        (
            "a wrong schema id",
            mutate(&|p| p["schema"] = "diff2test.plan.v1".into()),
        ),
    ];
    for (why, doc) in &broken {
        assert_plan_invalid(doc, why);
    }
    // The code-level checker catches the same bug independently of the schema, and a duplicate test.
    let registered = catalogue_names(&b.ctest_json());
    for (why, doc) in [&broken[0], &broken[1], &broken[2]] {
        let text = String::from_utf8(serde_json::to_vec_pretty(doc).unwrap()).unwrap() + "\n";
        let caught = std::panic::catch_unwind(|| check_plan(&text, Some(&registered))).is_err();
        assert!(caught, "check_plan accepted {why}");
    }
    let dup = mutate(&|p| {
        let t = p["tests"][0].clone();
        p["tests"].as_array_mut().unwrap().insert(0, t);
    });
    let text = String::from_utf8(serde_json::to_vec_pretty(&dup).unwrap()).unwrap() + "\n";
    assert!(
        std::panic::catch_unwind(|| check_plan(&text, Some(&registered))).is_err(),
        "check_plan accepted a duplicate test"
    );
}

#[test]
fn receipt_schema_rejects_inexact_or_inconsistent_receipts() {
    let b = shared();
    let path = receipt_path(b, "negative");
    let r = b.run(&[CORE_HPP], &["--receipt", path.to_str().unwrap()]);
    assert_eq!(r.code, 0);
    let rec = read_receipt(&path);
    let mutate = |f: &dyn Fn(&mut Value)| -> Value {
        let mut p = rec.clone();
        f(&mut p);
        p
    };
    let broken = [
        (
            "a rounded percentage",
            mutate(&|p| p["reduction"]["fraction"] = "35.7%".into()),
        ),
        (
            "a null reduction on a subset",
            mutate(&|p| p["reduction"] = Value::Null),
        ),
        (
            "an unknown forced code",
            mutate(&|p| {
                p["forced_selection"]["tests"] =
                    serde_json::json!([{"name": "x", "code": "AFFECTED_BY_CHANGE"}])
            }),
        ),
        ("a time claim", mutate(&|p| p["saved_seconds"] = 12.into())),
        (
            "a fallback that skips",
            mutate(&|p| p["outcome"] = "FULL_SUITE_SELECTED".into()),
        ),
    ];
    for (why, doc) in &broken {
        assert!(
            !receipt_validator().is_valid(doc),
            "the receipt schema accepted {why}"
        );
    }
}

/// `diff2test snapshot` writes a document that its schema accepts.
#[test]
fn the_snapshot_validates_against_its_schema() {
    let b = shared();
    let mut args = vec!["snapshot".to_owned()];
    args.extend(b.base_args());
    let r = run_bin(&args, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.state(), "SNAPSHOT_WRITTEN");
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let v = compile("snapshot-v1.schema.json");
    assert_valid(&v, &doc, "snapshot");
    assert_eq!(doc["tests"].as_object().unwrap().len(), ALL_TESTS.len());
    // Byte-identical for the same build.
    assert_eq!(run_bin(&args, None).stdout, r.stdout);
}
