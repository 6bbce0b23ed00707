//! The mutation suite's catalogue (`mutation-suite/catalogue.tsv`) is well-formed and
//! covers the whole safety contract: every row of the seed's §4 safety matrix
//! (`M4.01`-`M4.27`) and every §11 forbidden shortcut (`S11.01`-`S11.10`) has at
//! least one entry, and each entry's expected outcome is the one the contract
//! requires for its row. No cmake needed: this only reads the catalogue;
//! `mutation-suite/run` executes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use diff2test::reason::{Code, Severity};

const FIELDS: usize = 10;
const OUTCOMES: &[(&str, &str)] = &[
    ("SUBSET_SELECTED", "0"),
    ("USAGE_ERROR", "2"),
    ("FULL_SUITE_SELECTED", "3"),
    ("FULL_SUITE_REQUIRED", "4"),
    ("INTERNAL_ERROR", "70"),
];
/// The README's groups, and `@none`: the empty selection.
const GROUPS: &[&str] = &[
    "@core", "@util", "@net", "@objs", "@header", "@gen", "@none",
];
/// The fixture trees `mutation-suite/run` builds.
const BUILDS: &[&str] = &["default", "opaque", "hostile", "ninja"];

#[derive(Debug)]
struct Entry {
    line: usize,
    id: String,
    row: String,
    build: String,
    changed: String,
    outcome: String,
    exit: String,
    reason: String,
    tests: String,
    what: String,
    action: String,
}

fn catalogue_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mutation-suite")
        .join("catalogue.tsv")
}

fn load() -> (Vec<Entry>, BTreeSet<String>) {
    let path = catalogue_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut entries = Vec::new();
    let mut hardening_ids = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(comment) = line.strip_prefix('#') {
            // Hardening row ids are declared in the header: "#  H.07 description".
            let mut words = comment.split_whitespace();
            if let Some(w) = words.next() {
                if is_hardening_id(w) {
                    assert!(
                        hardening_ids.insert(w.to_owned()),
                        "line {n}: {w} declared twice"
                    );
                }
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        assert!(!line.contains('\r'), "line {n}: CR in the catalogue");
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            f.len(),
            FIELDS,
            "line {n}: {} tab-separated fields, want {FIELDS}: {line:?}",
            f.len()
        );
        for (k, v) in f.iter().enumerate() {
            // bash's `read` with IFS=TAB collapses empty fields: "-" must stand for "none".
            assert!(!v.is_empty(), "line {n}: field {} is empty (use -)", k + 1);
            assert_eq!(
                v.trim(),
                *v,
                "line {n}: field {} has surrounding whitespace",
                k + 1
            );
        }
        entries.push(Entry {
            line: n,
            id: f[0].into(),
            row: f[1].into(),
            build: f[2].into(),
            changed: f[3].into(),
            outcome: f[4].into(),
            exit: f[5].into(),
            reason: f[6].into(),
            tests: f[7].into(),
            what: f[8].into(),
            action: f[9].into(),
        });
    }
    (entries, hardening_ids)
}

fn numbered(s: &str, prefix: &str, max: u32) -> Option<u32> {
    let num = s.strip_prefix(prefix)?;
    if num.len() != 2 || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: u32 = num.parse().ok()?;
    (1..=max).contains(&v).then_some(v)
}

fn is_hardening_id(s: &str) -> bool {
    numbered(s, "H.", 99).is_some()
}

fn code_severity(name: &str) -> Option<Severity> {
    Code::ALL
        .iter()
        .find(|c| c.as_str() == name)
        .map(|c| c.severity())
}

/// The outcomes the contract allows for a row (None: any outcome, e.g. hardening).
fn allowed_outcomes(row: &str) -> Option<&'static [&'static str]> {
    const REQUIRED: &[&str] = &["FULL_SUITE_REQUIRED"];
    const SELECTED: &[&str] = &["FULL_SUITE_SELECTED"];
    const SUBSET: &[&str] = &["SUBSET_SELECTED"];
    const NO_SUBSET: &[&str] = &["FULL_SUITE_SELECTED", "FULL_SUITE_REQUIRED"];
    const INTERNAL: &[&str] = &["INTERNAL_ERROR"];
    if let Some(r) = numbered(row, "M4.", 27) {
        return Some(match r {
            1..=3 => REQUIRED,            // catalogue cannot be trusted
            4..=19 | 21..=23 => SELECTED, // catalogue fine, evidence not
            20 | 24 => SUBSET,            // "continue" / "traverse with visited set"
            25 | 26 => NO_SUBSET,         // "no subset" / "full known suite or required"
            27 => INTERNAL,               // unexpected exception
            _ => unreachable!(),
        });
    }
    if let Some(s) = numbered(row, "S11.", 10) {
        return match s {
            8 => Some(INTERNAL),
            10 => None, // launching programs: the outcome must merely not change
            _ => Some(NO_SUBSET),
        };
    }
    None
}

#[test]
fn every_line_is_well_formed() {
    let (entries, hardening_ids) = load();
    assert!(entries.len() >= 60, "only {} entries", entries.len());
    let mut ids = BTreeSet::new();
    for e in &entries {
        let at = format!("line {} ({})", e.line, e.id);
        assert!(
            e.id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-'),
            "{at}: id must be [a-z0-9.-]+"
        );
        assert!(ids.insert(e.id.clone()), "{at}: duplicate id");

        let known_row = numbered(&e.row, "M4.", 27).is_some()
            || numbered(&e.row, "S11.", 10).is_some()
            || hardening_ids.contains(&e.row);
        assert!(
            known_row,
            "{at}: unknown row id {:?} (hardening ids must be declared in the header)",
            e.row
        );

        assert!(
            BUILDS.contains(&e.build.as_str()),
            "{at}: build {:?}",
            e.build
        );

        let exit = OUTCOMES
            .iter()
            .find(|(o, _)| *o == e.outcome)
            .map(|(_, x)| *x);
        let exit = exit.unwrap_or_else(|| panic!("{at}: unknown outcome {:?}", e.outcome));
        assert_eq!(e.exit, exit, "{at}: exit code does not match {}", e.outcome);

        if let Some(allowed) = allowed_outcomes(&e.row) {
            assert!(
                allowed.contains(&e.outcome.as_str()),
                "{at}: row {} requires one of {allowed:?}, not {}",
                e.row,
                e.outcome
            );
        }

        // Reason codes exist, and their severity agrees with the outcome.
        if e.reason != "-" {
            let codes: Vec<&str> = e.reason.split(',').collect();
            let mut untrusted = false;
            for c in &codes {
                match *c {
                    "USAGE_ERROR" | "INTERNAL_ERROR" => {
                        assert_eq!(*c, e.outcome, "{at}: pseudo-code {c} only for that outcome")
                    }
                    _ => {
                        let sev = code_severity(c)
                            .unwrap_or_else(|| panic!("{at}: unknown reason code {c:?}"));
                        untrusted |= sev == Severity::CatalogueUntrusted;
                        match e.outcome.as_str() {
                            "FULL_SUITE_SELECTED" => {
                                assert_eq!(
                                    sev,
                                    Severity::FullSuite,
                                    "{at}: {c} makes the catalogue untrusted (REQUIRED)"
                                )
                            }
                            "FULL_SUITE_REQUIRED" => {}
                            o => panic!("{at}: reason code {c} with outcome {o}"),
                        }
                    }
                }
            }
            if e.outcome == "FULL_SUITE_REQUIRED" {
                assert!(
                    untrusted,
                    "{at}: REQUIRED needs a catalogue-untrusted code among {codes:?}"
                );
            }
        }
        assert!(
            e.outcome != "SUBSET_SELECTED" || e.reason == "-",
            "{at}: a subset carries no reason code"
        );

        // Expected selection: exactly for subsets.
        if e.outcome == "SUBSET_SELECTED" {
            assert_ne!(
                e.tests, "-",
                "{at}: a SUBSET_SELECTED entry must name its exact selection"
            );
            let mut seen = BTreeSet::new();
            assert!(
                e.tests == "@none" || !e.tests.split(',').any(|t| t == "@none"),
                "{at}: @none stands alone"
            );
            for t in e.tests.split(',') {
                assert!(!t.is_empty(), "{at}: empty name in the test list");
                assert!(
                    !t.starts_with('@') || GROUPS.contains(&t),
                    "{at}: unknown group {t}"
                );
                assert!(seen.insert(t), "{at}: {t} listed twice");
            }
        } else {
            assert_eq!(
                e.tests, "-",
                "{at}: only SUBSET_SELECTED entries list tests"
            );
        }

        assert!(
            !e.changed.contains('\t') && !e.what.is_empty() && !e.action.is_empty(),
            "{at}"
        );
        if e.changed == "-" {
            // No --changed flag: a usage error, or the action sets CHANGED itself, or the
            // change set comes from a repository (--base in EXTRA_ARGS).
            assert!(
                e.outcome == "USAGE_ERROR"
                    || e.action.contains("CHANGED=")
                    || (e.action.contains("EXTRA_ARGS=") && e.action.contains("--base")),
                "{at}: changed is - but nothing sets it"
            );
        }
    }
}

#[test]
fn every_contract_row_and_shortcut_is_covered() {
    let (entries, hardening_ids) = load();
    let mut by_row: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &entries {
        by_row
            .entry(e.row.as_str())
            .or_default()
            .push(e.id.as_str());
    }
    let mut missing = Vec::new();
    for r in 1..=27 {
        let id = format!("M4.{r:02}");
        if !by_row.contains_key(id.as_str()) {
            missing.push(id);
        }
    }
    for s in 1..=10 {
        let id = format!("S11.{s:02}");
        if !by_row.contains_key(id.as_str()) {
            missing.push(id);
        }
    }
    for h in &hardening_ids {
        if !by_row.contains_key(h.as_str()) {
            missing.push(h.clone());
        }
    }
    assert!(missing.is_empty(), "rows without a mutation: {missing:?}");

    // Rows whose required outcome is a fallback must each have at least one entry that
    // demonstrates the fallback; "continue"/"traverse" rows must demonstrate a kept subset.
    for r in (1..=27)
        .map(|r| format!("M4.{r:02}"))
        .chain((1..=9).map(|s| format!("S11.{s:02}")))
    {
        let allowed = allowed_outcomes(&r).expect("contract row");
        let rows: Vec<&Entry> = entries.iter().filter(|e| e.row == r).collect();
        assert!(
            rows.iter().all(|e| allowed.contains(&e.outcome.as_str())),
            "{r}"
        );
    }
    // The launch-external-programs shortcut needs both a kept subset and a fallback run.
    let s10: Vec<&Entry> = entries.iter().filter(|e| e.row == "S11.10").collect();
    assert!(
        s10.iter().any(|e| e.outcome == "SUBSET_SELECTED"),
        "S11.10 needs a subset run"
    );
    assert!(
        s10.iter().any(|e| e.outcome != "SUBSET_SELECTED"),
        "S11.10 needs a fallback run"
    );
    // The opaque, hostile and Ninja builds are exercised.
    for b in ["opaque", "hostile", "ninja"] {
        assert!(
            entries.iter().any(|e| e.build == b),
            "no entry uses the {b} build"
        );
    }
}

#[test]
fn runner_is_present_and_executable() {
    let run = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mutation-suite")
        .join("run");
    let meta = std::fs::metadata(&run).unwrap_or_else(|e| panic!("{}: {e}", run.display()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert!(
            meta.permissions().mode() & 0o111 != 0,
            "{} is not executable",
            run.display()
        );
    }
    let text = std::fs::read_to_string(&run).unwrap();
    assert!(
        text.starts_with("#!/usr/bin/env bash"),
        "the runner is a bash script"
    );
    assert!(
        text.contains("apt-get install cmake g++ make ninja-build"),
        "the runner names the packages it needs"
    );
}

#[test]
fn compare_mode_entries_cover_each_outcome() {
    // H.18 (issue 15): an equal snapshot keeps an empty subset, corrupt/foreign and mismatched
    // snapshots fall back with their own codes, a stale one selects a subset, and with the mode
    // off (or no snapshot) a CMake edit still costs the suite.
    let (entries, hardening_ids) = load();
    assert!(
        hardening_ids.contains("H.18"),
        "H.18 is declared in the header"
    );
    let h18: Vec<&Entry> = entries.iter().filter(|e| e.row == "H.18").collect();
    let has = |f: &dyn Fn(&Entry) -> bool, what: &str| {
        assert!(h18.iter().any(|e| f(e)), "H.18 needs {what}");
    };
    has(
        &|e| {
            e.outcome == "SUBSET_SELECTED"
                && e.tests == "@none"
                && e.action.contains("\"$SNAP\"")
                && e.action.contains("assume BUILD_CONFIG")
        },
        "a positive control (the unmodified snapshot selects nothing, naming the assumption)",
    );
    has(
        &|e| e.reason == "SNAPSHOT_INVALID",
        "a SNAPSHOT_INVALID entry",
    );
    has(
        &|e| e.reason == "SNAPSHOT_MISMATCH",
        "a SNAPSHOT_MISMATCH entry",
    );
    has(
        &|e| {
            e.outcome == "SUBSET_SELECTED"
                && e.tests != "@none"
                && e.action.contains("BUILD_DESCRIPTION_CHANGED")
        },
        "a stale snapshot selecting a subset",
    );
    has(
        &|e| e.reason == "CHANGE_BUILD_CONFIG" && e.action.contains("build_config = \"full\""),
        "a mode-off entry",
    );
    has(
        &|e| {
            e.outcome == "USAGE_ERROR"
                && e.action.contains("--base-snapshot")
                && e.action.contains("build_config = \"full\"")
        },
        "a --base-snapshot the policy turns off (a flag that does nothing: a usage error)",
    );
    for e in &h18 {
        let at = format!("line {} ({})", e.line, e.id);
        // $SNAP is the default tree's snapshot; an entry on another tree
        // makes that tree's own (`"$BIN" snapshot ...`).
        if !e.action.contains("\"$BIN\" snapshot") {
            assert_eq!(
                e.build, "default",
                "{at}: $SNAP is the default tree's snapshot"
            );
        }
        assert!(
            e.changed.ends_with("CMakeLists.txt"),
            "{at}: the compare mode is about a changed CMake script"
        );
        assert!(
            e.action.contains("EXTRA_ARGS=("),
            "{at}: the compare flags go through EXTRA_ARGS"
        );
    }
}
