//! CI smoke check of the synthetic build generator (`examples/synth.rs`, issue 4)
//! against the real binary: the `small` preset (~500 translation units, ~50 tests)
//! must give a proper subset for its one-header change, and breaking its
//! dependency evidence must end in the full suite with the right reason codes.

#[path = "../examples/synth.rs"]
mod synth;

use std::path::Path;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn diff2test(out: &Path, change: &str) -> Run {
    let src = out.join("src");
    let build = out.join("build");
    let o = assert_cmd::Command::cargo_bin("diff2test")
        .unwrap()
        .arg("--source-dir")
        .arg(&src)
        .arg("--build-dir")
        .arg(&build)
        .arg("--ctest-json")
        .arg(build.join("ctest.json"))
        .arg("--dep-list")
        .arg(build.join("deps.txt"))
        .arg("--changed-from")
        .arg(out.join("changes").join(format!("{change}.txt")))
        .arg("--format")
        .arg("names")
        .output()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
}

fn has_reason(stderr: &str, code: &str) -> bool {
    stderr
        .lines()
        .any(|l| l.starts_with(&format!("reason {code}")))
}

#[test]
fn small_preset_subset_then_broken_evidence_falls_back() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("small");
    let preset = synth::preset("small").unwrap();
    let sum = synth::generate(&preset, 1, &out).unwrap();
    assert!(
        sum.tus > 300 && sum.tests > 30,
        "small preset too small: {sum:?}"
    );

    // 1. One header: a non-empty proper subset that contains every test the
    //    generator's independent oracle selects.
    let r = diff2test(&out, "one-header");
    assert_eq!(r.code, 0, "stderr:\n{}", r.stderr);
    assert_eq!(
        r.stderr.lines().next(),
        Some("SUBSET_SELECTED"),
        "stderr:\n{}",
        r.stderr
    );
    let selected: Vec<&str> = r.stdout.lines().collect();
    assert!(
        !selected.is_empty() && selected.len() < sum.tests,
        "{} of {}",
        selected.len(),
        sum.tests
    );
    let (_, oracle) = sum
        .expected_names
        .iter()
        .find(|(n, _)| n == "one-header")
        .unwrap();
    for t in oracle {
        assert!(
            selected.contains(&t.as_str()),
            "diff2test omitted {t}, which the oracle selects; stdout:\n{}",
            r.stdout
        );
    }

    // 2. A listed depfile disappears: its translation unit has no evidence.
    let deps_txt = out.join("build/deps.txt");
    let list = std::fs::read_to_string(&deps_txt).unwrap();
    // A unit of a test executable: always inside the coverage scope (a library that no
    // test or built executable links is out of scope, and its depfile may be missing).
    let victim = list
        .lines()
        .find(|l| l.contains("/unittests/"))
        .expect("a test executable's depfile")
        .to_owned();
    std::fs::remove_file(&victim).unwrap();
    let r = diff2test(&out, "one-header");
    assert_eq!(r.code, 3, "stderr:\n{}", r.stderr);
    assert_eq!(r.stderr.lines().next(), Some("FULL_SUITE_SELECTED"));
    assert!(
        has_reason(&r.stderr, "DEP_FILE_UNREADABLE"),
        "stderr:\n{}",
        r.stderr
    );
    assert_eq!(r.stdout.lines().count(), sum.tests);

    // 3. ...and is dropped from the list too: coverage is incomplete.
    let rest: String = list
        .lines()
        .filter(|l| *l != victim)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&deps_txt, rest).unwrap();
    let r = diff2test(&out, "one-header");
    assert_eq!(r.code, 3, "stderr:\n{}", r.stderr);
    assert!(
        has_reason(&r.stderr, "DEP_COVERAGE_INCOMPLETE"),
        "stderr:\n{}",
        r.stderr
    );
    assert!(
        !has_reason(&r.stderr, "DEP_FILE_UNREADABLE"),
        "stderr:\n{}",
        r.stderr
    );
}

/// The Ninja variant: no `.d` files, one `.ninja_deps` that is byte for byte what
/// the library's model of ninja's `DepsLog` writes for the same records, and the
/// same outcomes as the Makefiles tree (subset with the oracle's tests, exit 3 for
/// the CMake edit).
#[test]
fn ninja_preset_writes_ninjas_deps_log_and_selects_a_subset() {
    use diff2test::ingest::ninja_deps;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tiny-ninja");
    let preset = synth::preset("tiny-ninja").unwrap();
    let sum = synth::generate(&preset, 1, &out).unwrap();
    let build = out.join("build");
    let log_path = build.join(".ninja_deps");
    assert_eq!(
        std::fs::read_to_string(build.join("deps.txt")).unwrap(),
        format!("{}\n", log_path.display())
    );
    assert_eq!(sum.depfiles, 0);
    let bytes = std::fs::read(&log_path).unwrap();
    let log = ninja_deps::parse(&bytes).unwrap();
    assert_eq!(log.records.len(), sum.tus);
    // The generator writes each output's path record just before its deps
    // record, so output ids follow the log's order.
    let mut recs = log.records.clone();
    recs.sort_by_key(|r| r.output);
    let named: Vec<(&str, u64, Vec<&str>)> = recs
        .iter()
        .map(|r| {
            let ins = r.inputs.iter().map(|&i| log.paths[i as usize].as_str());
            (
                log.paths[r.output as usize].as_str(),
                r.mtime_ns,
                ins.collect(),
            )
        })
        .collect();
    let slices: Vec<(&str, u64, &[&str])> = named
        .iter()
        .map(|(o, m, i)| (*o, *m, i.as_slice()))
        .collect();
    assert!(ninja_deps::write(&slices) == bytes, "not ninja's layout");

    let r = diff2test(&out, "one-header");
    assert_eq!(r.code, 0, "stderr:\n{}", r.stderr);
    let selected: Vec<&str> = r.stdout.lines().collect();
    assert!(!selected.is_empty() && selected.len() < sum.tests);
    let (_, oracle) = sum
        .expected_names
        .iter()
        .find(|(n, _)| n == "one-header")
        .unwrap();
    for t in oracle {
        assert!(selected.contains(&t.as_str()), "omitted {t}");
    }
    let r = diff2test(&out, "build-config");
    assert_eq!(r.code, 3, "stderr:\n{}", r.stderr);
    assert!(
        has_reason(&r.stderr, "CHANGE_BUILD_CONFIG"),
        "stderr:\n{}",
        r.stderr
    );
}

/// Every file under `dir` with its bytes and modification time, hashed.
fn tree_digest(dir: &Path) -> (usize, u64) {
    use std::hash::{Hash, Hasher};
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .collect();
    files.sort_by(|a, b| a.path().cmp(b.path()));
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in &files {
        f.path().hash(&mut h);
        std::fs::read(f.path()).unwrap().hash(&mut h);
        filetime::FileTime::from_last_modification_time(&f.metadata().unwrap())
            .unix_seconds()
            .hash(&mut h);
    }
    (files.len(), h.finish())
}

#[test]
fn generation_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x");
    let preset = synth::preset("tiny").unwrap();
    synth::generate(&preset, 7, &out).unwrap();
    let a = tree_digest(&out);
    // The generator replaces its own earlier output.
    synth::generate(&preset, 7, &out).unwrap();
    assert_eq!(a, tree_digest(&out));
    synth::generate(&preset, 8, &out).unwrap();
    assert_ne!(a, tree_digest(&out));
}
