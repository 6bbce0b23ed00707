//! End-to-end scenarios on a real build of `fixtures/cmake-project`: the rows
//! of the safety contract's matrix (§4) that rest on what CMake writes, with
//! the required outcome, exit code and reason code, plus the evidence chains
//! of real subsets (snapshotted). The rows that are faults of the evidence
//! files themselves (a malformed catalogue, a duplicate or unmappable
//! depfile, …) are decided on in-memory evidence in tests/decisions.rs.

mod common;

use common::*;
use std::path::PathBuf;

const CORE_HPP: &str = "libs/core/include/core/core.hpp";

fn assert_full_suite(r: &Run, code: &str) {
    assert_eq!(r.code, 3, "expected FULL_SUITE_SELECTED (3), got {r:#?}");
    assert_eq!(r.state(), "FULL_SUITE_SELECTED", "{r:#?}");
    assert!(
        r.codes().iter().any(|c| c == code),
        "expected reason {code}, got {:?}\n{}",
        r.codes(),
        r.stderr
    );
    assert_eq!(
        r.names(),
        ALL_TESTS,
        "FULL_SUITE_SELECTED must list every catalogue test"
    );
}

fn assert_required(r: &Run, code: &str) {
    assert_eq!(r.code, 4, "expected FULL_SUITE_REQUIRED (4), got {r:#?}");
    assert_eq!(r.state(), "FULL_SUITE_REQUIRED");
    assert!(
        r.codes().iter().any(|c| c == code),
        "expected reason {code}, got {:?}\n{}",
        r.codes(),
        r.stderr
    );
    assert_eq!(r.stdout, "", "FULL_SUITE_REQUIRED must not print names");
}

fn assert_subset(r: &Run, want: &[&str]) {
    assert_eq!(r.code, 0, "expected SUBSET_SELECTED (0), got {r:#?}");
    assert_eq!(r.state(), "SUBSET_SELECTED");
    assert_eq!(r.names(), want);
}

// ---------------------------------------------------------------- subsets

#[test]
fn header_change_selects_exactly_the_dependent_tests_with_chains() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &[]);
    assert_subset(&r, CORE_SELECTED);
    insta::assert_snapshot!("header_change", b.transcript(&r));
}

#[test]
fn library_source_change_selects_through_the_reverse_graph() {
    let b = shared();
    let r = b.run(&["libs/objs/src/checksum.cpp"], &[]);
    assert_subset(
        &r,
        &[
            "net.decode",
            "net.encode",
            "objs.checksum",
            "objs.sum[0-9]+",
            "tool.roundtrip",
        ],
    );
    // net is a SHARED library that gets objs' objects; datagen links net; tool.roundtrip runs datagen by argument.
    assert!(
        r.stderr
            .contains("-> target objs -> target net -> target datagen -> test tool.roundtrip"),
        "{}",
        r.stderr
    );
    insta::assert_snapshot!("library_source_change", b.transcript(&r));
}

#[test]
fn every_row_of_the_fixture_ground_truth_table() {
    let b = shared();
    let core = ["core.add", "core.mul", "core.parse[neg]"];
    let util = ["util.join", "util.spaced", "util.str+concat"];
    let net = ["net.decode", "net.encode"];
    let objs = ["objs.checksum", "objs.sum[0-9]+"];
    let header = ["header.macros", "header.version"];
    fn cat<'a>(parts: &[&[&'a str]]) -> Vec<&'a str> {
        let mut v: Vec<&str> = parts.iter().flat_map(|p| p.iter().copied()).collect();
        v.sort();
        v
    }
    let rows: Vec<(&str, Vec<&str>)> = vec![
        (
            "libs/base/include/base/macros.hpp",
            cat(&[&core, &util, &net, &header, &["tool.roundtrip"]]),
        ),
        (
            "libs/base/include/base/version.hpp",
            cat(&[&net, &objs, &header, &["tool.roundtrip"]]),
        ),
        (
            "libs/core/include/core/parse.hpp",
            cat(&[&core, &util, &net, &["tool.roundtrip"]]),
        ),
        (
            "libs/core/src/core.cpp",
            cat(&[&core, &util, &net, &["tool.roundtrip"]]),
        ),
        ("libs/util/include/util/strings.hpp", cat(&[&util])),
        ("libs/util/src/strings.cpp", cat(&[&util])),
        ("libs/dir with space/spaced.cpp", cat(&[&util])),
        ("libs/dir with space/sp$ace #h.hpp", cat(&[&util])),
        (
            "libs/net/include/net/codec.hpp",
            cat(&[&net, &["tool.roundtrip"]]),
        ),
        ("tools/datagen/main.cpp", cat(&[&["tool.roundtrip"]])),
        (
            "tests/checker.cpp",
            cat(&[&["checker.selftest", "tool.roundtrip"]]),
        ),
        ("tests/test_core.cpp", cat(&[&core])),
        ("tests/test_header.cpp", cat(&[&header])),
    ];
    for (path, want) in rows {
        let r = b.run(&[path], &[]);
        assert_eq!(r.code, 0, "{path}: {}", r.stderr);
        assert_eq!(r.names(), want, "{path}");
        // Every selected test has a chain naming this change.
        for t in &want {
            assert!(
                r.stderr.contains(&format!("chain {t}: {path} -> depfile ")),
                "{path}: no chain for {t}\n{}",
                r.stderr
            );
        }
    }
}

#[test]
fn absolute_changed_path_and_changed_from_stdin_agree_with_relative() {
    let b = shared();
    let rel = b.run(&[CORE_HPP], &[]);
    let abs_path = b.src.join(CORE_HPP).display().to_string();
    let abs = b.run(&[&abs_path], &[]);
    assert_eq!(rel.stdout, abs.stdout);
    let mut args = b.base_args();
    args.extend(["--changed-from".into(), "-".into()]);
    let piped = run_bin(&args, Some(format!("{CORE_HPP}\n").as_bytes()));
    assert_eq!(rel.stdout, piped.stdout);
    assert_eq!(rel.stderr, piped.stderr);
}

#[test]
fn same_input_gives_byte_identical_output() {
    let b = shared();
    let one = b.run(&[CORE_HPP, "libs/objs/src/checksum.cpp"], &[]);
    let two = b.run(&["libs/objs/src/checksum.cpp", CORE_HPP], &[]);
    assert_eq!(one.stdout, two.stdout);
    assert_eq!(one.stderr, two.stderr);
    let unknown1 = b.run(&["README.md", "nope.txt"], &[]);
    let unknown2 = b.run(&["nope.txt", "README.md"], &[]);
    assert_eq!(unknown1.stderr, unknown2.stderr);
}

#[test]
fn ctest_regex_output_selects_exactly_the_subset_in_real_ctest() {
    let b = shared();
    let names = b.run(&[CORE_HPP], &[]);
    let r = b.run(&[CORE_HPP], &["--format", "ctest-regex"]);
    assert_eq!(r.code, 0);
    let mut listed = Vec::new();
    for regex in r.stdout.lines() {
        let out = std::process::Command::new("ctest")
            .arg("-N")
            .arg("-R")
            .arg(regex)
            .current_dir(&b.build)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("RegularExpression"), "{text}");
        for l in text.lines() {
            if let Some((_, name)) = l.split_once(": ") {
                if l.trim_start().starts_with("Test") {
                    listed.push(name.trim().to_owned());
                }
            }
        }
    }
    listed.sort();
    assert_eq!(listed, names.names());
}

// ---------------------------------------------------------------- matrix: CTest catalogue

#[test]
fn m01_ctest_file_absent_is_full_suite_required() {
    let b = shared();
    let mut args = b.base_args();
    args[5] = b.root.join("missing.json").display().to_string();
    args.extend(["--changed".into(), CORE_HPP.into()]);
    let r = run_bin(&args, None);
    assert_required(&r, "CTEST_UNREADABLE");
    insta::assert_snapshot!("ctest_absent", b.redact(&b.transcript(&r)));
}

#[test]
fn m05_wrapper_test_is_full_suite_selected() {
    let b = shared_opaque();
    let r = b.run(&["libs/util/include/util/strings.hpp"], &[]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.codes().contains(&"TEST_COMMAND_UNMAPPED".to_owned()),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("wrapped.env"), "{}", r.stderr);
}

#[test]
fn s11_basename_only_match_is_not_a_mapping() {
    let b = build_fixture(&[]);
    // Same basename, different directory: must not be taken for the artifact.
    let fake = b.root.join("elsewhere");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::copy(b.build.join("tests/test_core"), fake.join("test_core")).unwrap();
    let fake_exe = fake.join("test_core").display().to_string();
    b.edit_json(&b.ctest_json(), |v| {
        for t in v["tests"].as_array_mut().unwrap() {
            if t["name"] == "core.add" {
                t["command"][0] = fake_exe.clone().into();
            }
        }
    });
    assert_full_suite(
        &b.run(&["libs/util/include/util/strings.hpp"], &[]),
        "TEST_COMMAND_UNMAPPED",
    );
}

// ---------------------------------------------------------------- matrix: File API

#[test]
fn m06_file_api_reply_absent_is_full_suite_selected() {
    let b = build_fixture(&[]);
    std::fs::remove_dir_all(b.reply_dir()).unwrap();
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "FILE_API_REPLY_MISSING");
    // The depfiles are read while the codemodel is looked for: without one,
    // they are still all read, so the plan's evidence never depends on timing.
    let plan = b.run(&[CORE_HPP], &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&plan.stdout).unwrap();
    let evidence = v["inputs"]["evidence"].as_array().unwrap();
    let deps = std::fs::read_to_string(b.deps()).unwrap();
    assert_eq!(evidence.len(), 2 + deps.lines().count(), "{evidence:#?}");
    for _ in 0..5 {
        assert_eq!(
            b.run(&[CORE_HPP], &["--format", "json"]).stdout,
            plan.stdout
        );
    }
}

#[test]
fn m07_ambiguous_reply_index_is_full_suite_selected() {
    let b = build_fixture(&[]);
    let idx = b.reply_file("index-");
    // A later-named index that is older than the current one: which snapshot is current is unclear.
    let other = b.reply_dir().join("index-9999-01-01T00-00-00-0000.json");
    std::fs::copy(&idx, &other).unwrap();
    filetime::set_file_mtime(&other, filetime::FileTime::from_unix_time(1_000_000_000, 0)).unwrap();
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "FILE_API_INDEX_AMBIGUOUS");
}

#[test]
fn m08_codemodel_unsupported_or_malformed_is_full_suite_selected() {
    let b = build_fixture(&[]);
    let cm = b.reply_file("codemodel-v2-");
    let orig = std::fs::read(&cm).unwrap();
    b.edit_json(&cm, |v| v["version"]["major"] = 3.into());
    let r = b.run(&[CORE_HPP], &[]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.codes()
            .iter()
            .any(|c| c == "FILE_API_UNSUPPORTED_VERSION" || c == "FILE_API_REPLY_MISSING"),
        "{}",
        r.stderr
    );
    write_keep_mtime(&cm, b"{\"kind\":\"codemodel\"");
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "FILE_API_MALFORMED");
    write_keep_mtime(&cm, &orig);
    assert_eq!(
        b.run(&[CORE_HPP], &[]).code,
        0,
        "restoring the codemodel restores the subset"
    );
}

#[test]
fn m09_root_mismatch_is_full_suite_selected() {
    let b = build_fixture(&[]);
    let cm = b.reply_file("codemodel-v2-");
    b.edit_json(&cm, |v| v["paths"]["source"] = "/somewhere/else".into());
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "ROOT_MISMATCH");
}

#[test]
fn trailing_slash_on_roots_is_the_same_root() {
    let b = shared();
    let mut args = b.base_args();
    args[1].push('/');
    args[3].push_str("/.");
    args.extend(["--changed".into(), CORE_HPP.into()]);
    assert_eq!(run_bin(&args, None).code, 0);
}

#[test]
fn m10_multiple_configurations_need_explicit_config() {
    let b = build_fixture(&[]);
    let cm = b.reply_file("codemodel-v2-");
    b.edit_json(&cm, |v| {
        let mut second = v["configurations"][0].clone();
        second["name"] = "Release".into();
        v["configurations"].as_array_mut().unwrap().push(second);
    });
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "CONFIG_AMBIGUOUS");
    assert_eq!(b.run(&[CORE_HPP], &["--config", "Debug"]).code, 0);
    assert_full_suite(
        &b.run(&[CORE_HPP], &["--config", "MinSizeRel"]),
        "CONFIG_NOT_FOUND",
    );
}

#[test]
fn m11_target_object_missing_is_full_suite_selected() {
    let b = build_fixture(&[]);
    std::fs::remove_file(b.reply_file("target-util-")).unwrap();
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "TARGET_OBJECT_MISSING");
}

#[test]
fn m12_generated_source_is_full_suite_selected() {
    let b = shared_opaque();
    let r = b.run(&["libs/util/include/util/strings.hpp"], &[]);
    assert_eq!(r.code, 3);
    assert!(
        r.codes().contains(&"GENERATED_SOURCE".to_owned()),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("generated.cpp"), "{}", r.stderr);
}

#[test]
fn unrelated_custom_target_does_not_cost_the_subset() {
    // A UTILITY target's stamp/.rule sources are generated but not compiled: no gap.
    let b = build_fixture(&[]);
    let cm = b.reply_file("codemodel-v2-");
    let docs = b.reply_dir().join("target-docs-Debug-0000.json");
    let mut id = String::new();
    b.edit_json(&cm, |v| {
        let targets = v["configurations"][0]["targets"].as_array_mut().unwrap();
        id = "docs::@0000".into();
        targets.push(serde_json::json!({"name":"docs","id":id,"directoryIndex":0,"projectIndex":0,"jsonFile":"target-docs-Debug-0000.json"}));
    });
    let build = b.build.display().to_string();
    std::fs::write(
        &docs,
        serde_json::to_vec(&serde_json::json!({
            "name":"docs","id":id,"type":"UTILITY","paths":{"source":".","build":"."},
            "sources":[{"path": format!("{build}/CMakeFiles/docs"),"isGenerated":true},
                       {"path": format!("{build}/CMakeFiles/docs.rule"),"isGenerated":true}]
        }))
        .unwrap(),
    )
    .unwrap();
    let idx = b.reply_file("index-");
    filetime::set_file_mtime(
        &docs,
        filetime::FileTime::from_last_modification_time(&std::fs::metadata(&idx).unwrap()),
    )
    .unwrap();
    assert_eq!(
        b.run(&[CORE_HPP], &[]).code,
        0,
        "{}",
        b.run(&[CORE_HPP], &[]).stderr
    );
}

#[test]
fn m23_unknown_target_dependency_is_full_suite_selected() {
    let b = build_fixture(&[]);
    let t = b.reply_file("target-test_core-");
    b.edit_json(&t, |v| {
        v["dependencies"] = serde_json::json!([{"id": "ghost::@ffff"}])
    });
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "TARGET_DEPENDENCY_UNKNOWN");
}

#[test]
fn m24_dependency_cycle_is_traversed() {
    let b = build_fixture(&[]);
    let core = b.reply_file("target-core-");
    let util = b.reply_file("target-util-");
    let util_id = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&util).unwrap())
        .unwrap()["id"]
        .clone();
    b.edit_json(&core, |v| {
        v["dependencies"] = serde_json::json!([{"id": util_id}])
    });
    let r = b.run(&["libs/util/include/util/strings.hpp"], &[]);
    // util <-> core now form a cycle: the walk terminates and follows it (core's dependents join in).
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.names().contains(&"core.add"), "{}", r.stdout);
}

// ---------------------------------------------------------------- matrix: dependency files

#[test]
fn m18_stale_depfile_is_full_suite_selected() {
    let b = build_fixture(&[]);
    touch_future(&b.src.join("libs/base/include/base/version.hpp"), 5);
    let r = b.run(&[CORE_HPP], &[]);
    assert_full_suite(&r, "DEP_EVIDENCE_STALE");
    insta::assert_snapshot!("stale_depfile", b.transcript(&r));
}

#[test]
fn m19_missing_depfile_is_full_suite_selected() {
    let b = build_fixture(&[]);
    let deps = std::fs::read_to_string(b.deps()).unwrap();
    let kept: Vec<&str> = deps
        .lines()
        .filter(|l| !l.contains("test_header.dir"))
        .collect();
    std::fs::write(b.deps(), kept.join("\n") + "\n").unwrap();
    let r = b.run(&[CORE_HPP], &[]);
    assert_full_suite(&r, "DEP_COVERAGE_INCOMPLETE");
    insta::assert_snapshot!("missing_depfile", b.transcript(&r));
}

// ---------------------------------------------------------------- matrix: changed paths

#[test]
fn m21_unknown_changed_path_is_full_suite_selected() {
    let b = shared();
    let r = b.run(&["README.md"], &[]);
    assert_full_suite(&r, "CHANGE_UNKNOWN");
    insta::assert_snapshot!("unknown_path", b.transcript(&r));
}

#[test]
fn deleted_changed_path_is_full_suite_selected() {
    let b = shared();
    assert_full_suite(
        &b.run(&["libs/core/src/removed.cpp"], &[]),
        "CHANGE_DELETED",
    );
}

#[test]
fn m22_build_configuration_change_is_full_suite_selected() {
    let b = shared();
    let r = b.run(&["CMakeLists.txt"], &[]);
    assert_full_suite(&r, "CHANGE_BUILD_CONFIG");
    insta::assert_snapshot!("cmakelists_change", b.transcript(&r));
    assert_full_suite(
        &b.run(&["libs/core/CMakeLists.txt"], &[]),
        "CHANGE_BUILD_CONFIG",
    );
    // A `.cmake` file that no configure read (cmakeFiles-v1 lists every CMake
    // input) is no CMake edit (issue 29, class 1d): this one does not exist,
    // so it is a deleted path, and still the full suite.
    assert_full_suite(&b.run(&["cmake/anything.cmake"], &[]), "CHANGE_DELETED");
}

#[test]
fn m25_path_escaping_the_root_is_not_a_subset() {
    let b = build_fixture(&[]);
    // Out of the source dir and out of any repository holding it.
    let up = "../".repeat(b.src.components().count());
    assert_full_suite(
        &b.run(&[&format!("{up}etc/passwd")], &[]),
        "PATH_ESCAPES_ROOT",
    );
    assert_full_suite(&b.run(&["/etc/passwd"], &[]), "PATH_ESCAPES_ROOT");
    std::os::unix::fs::symlink("/etc", b.src.join("outlink")).unwrap();
    assert_full_suite(&b.run(&["outlink/passwd"], &[]), "PATH_ESCAPES_ROOT");
}

// ---------------------------------------------------------------- limits, usage, internal errors

#[test]
fn m26_limits_exceeded() {
    let b = shared();
    assert_required(
        &b.run(&[CORE_HPP], &["--max-tests", "3"]),
        "CTEST_LIMIT_EXCEEDED",
    );
    assert_full_suite(
        &b.run(&[CORE_HPP], &["--max-depfiles", "3"]),
        "LIMIT_EXCEEDED",
    );
    assert_full_suite(
        &b.run(&[CORE_HPP], &["--max-targets", "3"]),
        "LIMIT_EXCEEDED",
    );
    assert_required(
        &b.run(&[CORE_HPP], &["--max-file-bytes", "100"]),
        "CTEST_LIMIT_EXCEEDED",
    );
    assert_full_suite(
        &b.run(&[CORE_HPP], &["--max-path-len", "20"]),
        "LIMIT_EXCEEDED",
    );
}

/// A compiled executable whose declared artifact path is wrong (a corrupt or
/// hand-edited reply) must not look never built: `tool.roundtrip` runs the
/// real `datagen` by path, and a change `datagen` compiles in must not skip it.
/// (Found by the byte-mutation property test.)
#[test]
fn a_compiled_target_with_a_misspelt_artifact_still_counts_as_built() {
    let b = build_fixture(&[]);
    b.edit_json(&b.reply_file("target-datagen-"), |v| {
        v["artifacts"][0]["path"] = "tools/datagen/datgen".into();
    });
    // datagen's real file is then a build-tree file that no artifact names:
    // tool.roundtrip, which names it, cannot be proven unaffected.
    assert_full_suite(&b.run(&[CORE_HPP], &[]), "TEST_READS_UNKNOWN_BUILD_FILE");
}

/// One header listed under two spellings: the real one by `checksum.cpp`,
/// and through a symlinked include directory by `test_header.cpp`. A change
/// to the file, named by either spelling, must reach both units.
#[test]
fn a_header_reached_through_a_symlink_is_changed_under_every_spelling() {
    let b = build_fixture(&[]);
    const REAL: &str = "libs/base/include/base/version.hpp";
    const LINKED: &str = "libs/base/include_link/base/version.hpp";
    let before = b.run(&[REAL], &[]);
    assert_eq!(before.code, 0, "{before:#?}");
    assert!(before.names().contains(&"header.version"), "{before:#?}");
    std::os::unix::fs::symlink("include", b.src.join("libs/base/include_link")).unwrap();
    let depfile = b
        .build
        .join("tests/CMakeFiles/test_header.dir/test_header.cpp.o.d");
    let text = std::fs::read_to_string(&depfile).unwrap();
    let real_abs = b.src.join(REAL).display().to_string();
    let linked_abs = b.src.join(LINKED).display().to_string();
    assert!(text.contains(&real_abs), "{text}");
    write_keep_mtime(&depfile, text.replace(&real_abs, &linked_abs).as_bytes());
    for spelling in [REAL, LINKED] {
        let after = b.run(&[spelling], &[]);
        assert_eq!(after.code, 0, "{spelling}: {after:#?}");
        assert_eq!(
            after.names(),
            before.names(),
            "{spelling}: {}",
            after.stderr
        );
    }
}

/// The File API reply and the depfiles are read at the same time, so which
/// read crosses `--max-total-bytes` depends on timing; the report, the plan
/// and its input identity must not.
#[test]
fn total_bytes_limit_reports_the_same_whatever_read_crosses_it() {
    let b = shared();
    let mut total = std::fs::metadata(b.ctest_json()).unwrap().len();
    for e in std::fs::read_dir(b.reply_dir()).unwrap() {
        total += e.unwrap().metadata().unwrap().len();
    }
    let deps = std::fs::read_to_string(b.deps()).unwrap();
    total += deps.len() as u64;
    for d in deps.lines() {
        total += std::fs::metadata(b.build.join(d)).unwrap().len();
    }
    for percent in [40, 60, 75] {
        let limit = (total * percent / 100).to_string();
        let first = b.run(
            &[CORE_HPP],
            &["--max-total-bytes", &limit, "--format", "json"],
        );
        assert_eq!(first.code, 3, "{percent}%: {first:#?}");
        let reasons: Vec<&str> = first
            .stderr
            .lines()
            .filter(|l| l.contains("--max-total-bytes"))
            .collect();
        assert_eq!(
            reasons.len(),
            1,
            "{percent}%: one total-limit reason\n{}",
            first.stderr
        );
        assert!(reasons[0].contains("LIMIT_EXCEEDED"), "{}", reasons[0]);
        let plan: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
        assert_eq!(plan["outcome"], "FULL_SUITE_SELECTED", "{plan:#}");
        for _ in 0..4 {
            let again = b.run(
                &[CORE_HPP],
                &["--max-total-bytes", &limit, "--format", "json"],
            );
            assert_eq!(
                again.stdout, first.stdout,
                "{percent}%: plan differs between runs"
            );
            assert_eq!(
                again.stderr, first.stderr,
                "{percent}%: stderr differs between runs"
            );
        }
    }
}

#[test]
fn usage_errors_exit_2_with_nothing_on_stdout() {
    let b = shared();
    for args in [vec![], vec!["--bogus".to_owned()], b.base_args()] {
        let r = run_bin(&args, None);
        assert_eq!(r.code, 2, "{args:?}: {r:#?}");
        assert_eq!(r.state(), "USAGE_ERROR");
        assert_eq!(r.stdout, "");
        assert_eq!(
            r.stderr.lines().count(),
            2,
            "one state line and one reason line: {}",
            r.stderr
        );
    }
    let mut args = b.base_args();
    args[3] = "/nonexistent-build-dir".into();
    args.extend(["--changed".into(), CORE_HPP.into()]);
    assert_eq!(run_bin(&args, None).code, 2);
}

#[test]
fn help_explains_every_flag() {
    let r = run_bin(&["--help".to_owned()], None);
    assert_eq!(r.code, 0);
    for flag in [
        "--source-dir",
        "--build-dir",
        "--ctest-json",
        "--dep-list",
        "--changed",
        "--changed-from",
        "--config",
        "--format",
        "Example",
    ] {
        assert!(r.stdout.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn m27_panic_is_internal_error_with_nothing_on_stdout() {
    let b = shared();
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    cmd.args(b.base_args())
        .args(["--changed", CORE_HPP])
        .env("DIFF2TEST_TEST_HOOK_PANIC", "1");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(70));
    assert!(
        out.stdout.is_empty(),
        "stdout: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("INTERNAL_ERROR\nreason INTERNAL_ERROR: panic: deliberate panic"),
        "{err}"
    );
}

#[test]
fn no_external_program_is_needed() {
    // With an empty PATH the analysis is unchanged: nothing is launched.
    let b = shared();
    let with_path = b.run(&[CORE_HPP], &[]);
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    cmd.args(b.base_args())
        .args(["--changed", CORE_HPP])
        .env("PATH", "");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(with_path.code));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), with_path.stdout);
    assert_eq!(String::from_utf8(out.stderr).unwrap(), with_path.stderr);
}

#[test]
fn module_plugin_is_reached_only_through_test_arguments() {
    let b = build_fixture(&["-DD2T_WITH_PLUGIN=ON"]);
    // The plugin's own source: plugin.load names the plugin artifact as an argument.
    let r = b.run(&["plugins/greeter/greeter.cpp"], &[]);
    assert_subset(&r, &["plugin.load"]);
    assert!(
        r.stderr.contains("-> target plugin -> test plugin.load"),
        "{}",
        r.stderr
    );
    // core.hpp reaches the plugin through its link to core; the plugin test joins the selection.
    let r = b.run(&[CORE_HPP], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.names().contains(&"plugin.load"));
    // If no channel names the plugin (no argument, environment, working
    // directory, definition, header or bytes of a program a test runs), no
    // test can load it: a change to it selects nothing (SAFETY-CONTRACT §4.6).
    b.edit_json(&b.ctest_json(), |v| {
        for t in v["tests"].as_array_mut().unwrap() {
            if t["name"] == "plugin.load" {
                t["command"].as_array_mut().unwrap().truncate(1);
            }
        }
    });
    let r = b.run(&["plugins/greeter/greeter.cpp"], &[]);
    assert_subset(&r, &[]);
}

#[test]
fn application_executable_named_by_no_test_costs_nothing() {
    let b = build_fixture(&[]);
    // Drop tool.roundtrip's argument: datagen is then run by no mapped test.
    b.edit_json(&b.ctest_json(), |v| {
        for t in v["tests"].as_array_mut().unwrap() {
            if t["name"] == "tool.roundtrip" {
                t["command"].as_array_mut().unwrap().truncate(1);
            }
        }
    });
    // No test's command, environment, working directory, definitions, headers
    // or program bytes name datagen: no test can run it, so nothing is selected.
    let r = b.run(&["tools/datagen/main.cpp"], &[]);
    assert_subset(&r, &[]);
}

#[test]
fn link_fragments_back_up_a_lost_dependencies_member() {
    // A corrupted or renamed `dependencies` member must not silently drop edges:
    // the link line names the same artifacts, and those edges are added too.
    let b = build_fixture(&[]);
    for prefix in ["target-test_util-", "target-util-", "target-test_core-"] {
        let f = b.reply_file(prefix);
        b.edit_json(&f, |v| {
            let deps = v.as_object_mut().unwrap().remove("dependencies");
            assert!(deps.is_some(), "{prefix} had dependencies");
        });
    }
    let r = b.run(&["libs/core/src/core.cpp"], &[]);
    assert_subset(&r, CORE_SELECTED);
}

#[test]
fn precompiled_headers_and_unity_builds_are_ordinary_evidence() {
    // CMake writes cmake_pch.hxx.cxx (depfile cmake_pch.hxx.gch.d) and Unity/unity_0_cxx.cxx at
    // configure time: compiled, not custom-command outputs. Their depfiles carry the real headers.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.20)\nproject(P CXX)\nadd_library(l STATIC a.cpp b.cpp)\n\
         target_precompile_headers(l PRIVATE <vector> a.hpp)\nadd_executable(t t.cpp u.cpp)\ntarget_link_libraries(t l)\n\
         set_target_properties(t PROPERTIES UNITY_BUILD ON)\nadd_executable(other other.cpp)\nenable_testing()\n\
         add_test(NAME t COMMAND t)\nadd_test(NAME other COMMAND other)\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a.hpp"),
        "#pragma once\ninline int a0() { return 0; }\n",
    )
    .unwrap();
    std::fs::write(src.join("a.cpp"), "int a() { return 1; }\n").unwrap();
    std::fs::write(src.join("b.cpp"), "int b() { return 2; }\n").unwrap();
    std::fs::write(src.join("u.hpp"), "#pragma once\nint u();\n").unwrap();
    std::fs::write(
        src.join("u.cpp"),
        "#include \"u.hpp\"\nint u() { return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("t.cpp"),
        "#include \"u.hpp\"\nint a();\nint main() { return a() - 1 + u(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("other.cpp"), "int main() { return 0; }\n").unwrap();
    let b = Built::from_parts(
        dir,
        PathBuf::new(),
        src.clone(),
        src.parent().unwrap().join("build"),
    );
    prepare(&b);
    let deps = std::fs::read_to_string(b.deps()).unwrap();
    // GCC precompiles to `.gch`, and its units list that instead of the
    // header: the chain runs through the `.gch`'s own depfile. Clang
    // precompiles to `.pch` and lists the header's inputs in every unit that
    // uses it, before the unit's own source (mapped by the object's path).
    let (pch, chain) = match cxx_compiler_id(&b.build).as_str() {
        "GNU" => ("cmake_pch.hxx.gch.d", "cmake_pch.hxx.gch.d -> unit"),
        _ => ("cmake_pch.hxx.pch.d", "a.cpp.o.d -> unit a.cpp"),
    };
    assert!(
        deps.contains(pch) && deps.contains("unity_0_cxx.cxx.o.d"),
        "{deps}"
    );
    let r = b.run(&["a.hpp"], &[]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "t\n"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("depfile CMakeFiles/l.dir/{chain}")),
        "{}",
        r.stderr
    );
    let r = b.run(&["u.hpp"], &[]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "t\n"), "{}", r.stderr);
    assert!(r.stderr.contains("unity_0_cxx.cxx"), "{}", r.stderr);
}

#[test]
fn unbuilt_exclude_from_all_targets_outside_every_test_closure_need_no_depfiles() {
    // A static library nothing links, and an executable never built: neither produces
    // anything a test can run or load, so their missing depfiles cost no subset.
    let dir = scratch_dir("d2t-it-");
    let root = dir.path().to_path_buf();
    let src = root.join("src");
    copy_fixture(&src);
    std::fs::create_dir_all(src.join("extra")).unwrap();
    std::fs::write(
        src.join("extra/CMakeLists.txt"),
        "add_library(unbuilt_lib STATIC EXCLUDE_FROM_ALL unbuilt.cpp)\n\
         target_link_libraries(unbuilt_lib PUBLIC core)\n\
         add_executable(unbuilt_tool EXCLUDE_FROM_ALL tool.cpp)\n\
         target_link_libraries(unbuilt_tool PRIVATE core)\n",
    )
    .unwrap();
    std::fs::write(
        src.join("extra/unbuilt.cpp"),
        "#include \"core/core.hpp\"\nint unbuilt() { return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("extra/tool.cpp"),
        "#include \"core/core.hpp\"\nint main() { return 0; }\n",
    )
    .unwrap();
    let mut top = std::fs::read_to_string(src.join("CMakeLists.txt")).unwrap();
    top.push_str("\nadd_subdirectory(extra)\n");
    std::fs::write(src.join("CMakeLists.txt"), top).unwrap();
    let b = Built::from_parts(dir, root.clone(), src, root.join("build"));
    prepare(&b);
    let r = b.run(&[CORE_HPP], &[]);
    assert_subset(&r, CORE_SELECTED);
    // Once the executable exists on disk a test could run it by path: its units need evidence.
    let tool = b.build.join("extra/unbuilt_tool");
    std::fs::write(&tool, b"").unwrap();
    let r = b.run(&[CORE_HPP], &[]);
    assert_full_suite(&r, "DEP_COVERAGE_INCOMPLETE");
    assert!(
        r.stderr
            .contains("extra/tool.cpp of target \"unbuilt_tool\""),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("unbuilt_lib"), "{}", r.stderr);
}

// ------------------------------------------- catalogue freshness (discovered tests)

/// A test program that answers `--gtest_list_tests` as googletest does and runs
/// one case per `--gtest_filter=Suite.Name`, so CMake's own `GoogleTest` module
/// (`gtest_discover_tests`) registers its cases. `cases` is `("Suite", "Name",
/// "expression")`, each case passing when its expression holds.
fn fake_gtest_main(includes: &str, cases: &[(&str, &str, &str)]) -> String {
    let mut fns = String::new();
    let mut table = String::new();
    for (i, (suite, name, expr)) in cases.iter().enumerate() {
        fns.push_str(&format!("static bool case{i}() {{ return {expr}; }}\n"));
        table.push_str(&format!("{{\"{suite}\", \"{name}\", case{i}}}, "));
    }
    format!(
        "{includes}\n#include <cstdio>\n#include <cstring>\n#include <string>\n\
         struct Case {{ const char* suite; const char* name; bool (*run)(); }};\n{fns}\
         static const Case cases[] = {{ {table} }};\n\
         int main(int argc, char** argv) {{\n\
           int n = sizeof(cases) / sizeof(cases[0]);\n\
           std::string filter;\n\
           for (int i = 1; i < argc; ++i) {{\n\
             if (!std::strcmp(argv[i], \"--gtest_list_tests\")) {{\n\
               for (int k = 0; k < n; ++k) std::printf(\"%s.\\n  %s\\n\", cases[k].suite, cases[k].name);\n\
               return 0;\n\
             }}\n\
             if (!std::strncmp(argv[i], \"--gtest_filter=\", 15)) filter = argv[i] + 15;\n\
           }}\n\
           int failed = 0;\n\
           for (int k = 0; k < n; ++k) {{\n\
             std::string full = std::string(cases[k].suite) + \".\" + cases[k].name;\n\
             if (!filter.empty() && filter != full) continue;\n\
             if (!cases[k].run()) {{ std::printf(\"FAILED %s\\n\", full.c_str()); ++failed; }}\n\
           }}\n\
           return failed ? 1 : 0;\n\
         }}\n"
    )
}

/// Lists the catalogue again, as the README's recipe does after a build.
fn relist(b: &Built) {
    let out = run_ok(
        std::process::Command::new("ctest")
            .arg("--show-only=json-v1")
            .current_dir(&b.build),
    );
    std::fs::write(b.ctest_json(), out).unwrap();
}

fn cmake_build(b: &Built) {
    run_ok(
        std::process::Command::new("cmake")
            .arg("--build")
            .arg(&b.build),
    );
}

/// A project written into a fresh scratch dir: `(path, text)` files under `src/`.
fn scratch_project(prefix: &str, files: &[(&str, &str)]) -> Built {
    let dir = scratch_dir(prefix);
    let root = dir.path().to_path_buf();
    let src = root.join("src");
    write_files(&src, files);
    Built::from_parts(dir, root.clone(), src, root.join("build"))
}

#[test]
fn a_catalogue_listed_before_a_rebuild_of_a_discovered_program_is_stale() {
    // gtest_discover_tests registers a program's cases from a file its POST_BUILD
    // step writes after every link. A case added to core_test.cpp exists only
    // in a catalogue listed after the rebuild: the names of one listed before
    // it would never run the new case (here a failing one). emu_test runs
    // behind an emulator, so its command starts with the emulator.
    let one_case = fake_gtest_main(
        "#include \"../core.hpp\"",
        &[("Core", "Value", "core() == 1")],
    );
    let emu_one = fake_gtest_main("", &[("Emu", "One", "true")]);
    let b = scratch_project(
        "d2t-discover-",
        &[
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.20)\nproject(P CXX)\nenable_testing()\ninclude(GoogleTest)\n\
                 add_library(core STATIC core.cpp)\nadd_executable(core_test tests/core_test.cpp)\n\
                 target_link_libraries(core_test core)\ngtest_discover_tests(core_test)\n\
                 add_executable(emu_test tests/emu_test.cpp)\n\
                 set_target_properties(emu_test PROPERTIES CROSSCOMPILING_EMULATOR /usr/bin/env)\n\
                 gtest_discover_tests(emu_test)\n\
                 add_executable(other tests/other.cpp)\nadd_test(NAME other COMMAND other)\n",
            ),
            ("core.hpp", "#pragma once\nint core();\n"),
            ("core.cpp", "#include \"core.hpp\"\nint core() { return 1; }\n"),
            ("tests/core_test.cpp", &one_case),
            ("tests/emu_test.cpp", &emu_one),
            ("tests/other.cpp", "int main() { return 0; }\n"),
        ],
    );
    let src = b.src.clone();
    prepare(&b);
    let listed = std::fs::read_to_string(b.ctest_json()).unwrap();
    assert!(
        listed.contains("\"/usr/bin/env\""),
        "emu_test's cases run behind the emulator: {listed}"
    );
    let base = suite_results(&b.build);
    // A test behind an emulator is unmapped unless declared.
    let policy = b.root.join("diff2test.toml");
    std::fs::write(
        &policy,
        "[[script]]\ntests = [\"Emu.*\"]\ntargets = [\"emu_test\"]\nwhy = \"the emulator runs emu_test\"\n",
    )
    .unwrap();
    let policy = policy.display().to_string();
    let run = |changed: &str| b.run(&[changed], &["--policy", &policy]);

    let r = run("core.hpp");
    assert_subset(&r, &["Core.Value"]);

    // A program registered by add_test (it has a backtrace) rebuilt after the
    // listing does not make the catalogue stale: its registration is the configure's.
    std::fs::write(
        src.join("tests/other.cpp"),
        "int main() { return 0 * 2; }\n",
    )
    .unwrap();
    cmake_build(&b);
    let r = run("tests/other.cpp");
    assert_subset(&r, &["other"]);

    // A new, failing case; rebuilt, not listed again. Real ctest at both
    // states: the new case is the test whose result changed.
    let two_cases = fake_gtest_main(
        "#include \"../core.hpp\"",
        &[
            ("Core", "Value", "core() == 1"),
            ("Core", "New", "core() == 2"),
        ],
    );
    std::fs::write(src.join("tests/core_test.cpp"), &two_cases).unwrap();
    cmake_build(&b);
    let head = suite_results(&b.build);
    assert_eq!(head.get("Core.New"), Some(&false), "{head:?}");
    let stale = std::fs::read_to_string(b.ctest_json()).unwrap();
    assert!(
        !stale.contains("Core.New"),
        "the old listing lacks the new case"
    );
    // Stale until listed again; then the new case is in the suite and selected.
    let stale_then_relisted = |changed: &str, program: &str, base, head, want: &[&str]| {
        let r = run(changed);
        assert_oracle(&r, base, head);
        assert_required(&r, "CTEST_CATALOGUE_STALE");
        assert!(
            r.stderr.contains(&format!("/build/{program} was built"))
                && r.stderr.contains("re-list it"),
            "{}",
            r.stderr
        );
        relist(&b);
        let r = run(changed);
        assert_oracle(&r, base, head);
        assert_subset(&r, want);
    };
    stale_then_relisted(
        "tests/core_test.cpp",
        "core_test",
        &base,
        &head,
        &["Core.New", "Core.Value"],
    );

    // The same behind the emulator: command[0] is /usr/bin/env, the program
    // it runs was rebuilt with a new, failing case.
    let before = suite_results(&b.build);
    let emu_two = fake_gtest_main("", &[("Emu", "One", "true"), ("Emu", "Two", "false")]);
    std::fs::write(src.join("tests/emu_test.cpp"), &emu_two).unwrap();
    cmake_build(&b);
    let after = suite_results(&b.build);
    assert_eq!(after.get("Emu.Two"), Some(&false), "{after:?}");
    stale_then_relisted(
        "tests/emu_test.cpp",
        "emu_test",
        &before,
        &after,
        &["Emu.One", "Emu.Two"],
    );

    // A configure after the listing (a new reply index) makes it stale too.
    std::thread::sleep(std::time::Duration::from_millis(20));
    run_ok(std::process::Command::new("cmake").arg(&b.build));
    let r = run("tests/core_test.cpp");
    assert_required(&r, "CTEST_CATALOGUE_STALE");
    assert!(
        r.stderr.contains("before the last configure"),
        "{}",
        r.stderr
    );
    relist(&b);
    let r = run("tests/core_test.cpp");
    assert_subset(&r, &["Core.New", "Core.Value"]);
}

// ------------------------------------------- compile flags changed after the build

#[test]
fn makefiles_flags_changed_after_the_build_make_the_evidence_stale() {
    // core.cpp includes b.hpp only with -DUSE_B. Configured without it and built,
    // then configured with it and not built again: core's depfile still lists
    // a.hpp. A change to b.hpp (which other.cpp includes, so it is known
    // evidence) then flips t_core once make compiles core.cpp again, but the
    // old depfile ties b.hpp to t_other alone.
    let b = scratch_project("d2t-flags-", FLAGS_PROJECT);
    prepare(&b);
    let base = suite_results(&b.build);

    // The change is built (other.cpp is compiled again; core.cpp does not
    // include b.hpp yet), then the flags change and nothing is built.
    std::fs::write(b.src.join("b.hpp"), "#pragma once\n#define VALUE 2\n").unwrap();
    cmake_build(&b);
    std::thread::sleep(std::time::Duration::from_millis(20));
    run_ok(
        std::process::Command::new("cmake")
            .arg("-DCMAKE_CXX_FLAGS=-DUSE_B")
            .arg(&b.build),
    );
    relist(&b);
    let r = b.run(&["b.hpp"], &[]);

    // Real ctest once make has compiled everything under the new flags: t_core flips.
    cmake_build(&b);
    let head = suite_results(&b.build);
    assert_eq!(head.get("t_core"), Some(&false), "{head:?}");
    assert_oracle(&r, &base, &head);
    // Without the flags rule: a subset of t_other alone.
    assert_full_suite_of(&r, &["t_core", "t_other"], "DEP_EVIDENCE_STALE");
    assert_eq!(r.codes(), ["DEP_EVIDENCE_STALE"], "{}", r.stderr);
    assert!(
        r.stderr
            .contains("CMakeFiles/core.dir/flags.make is newer than")
            && r.stderr.contains("make would compile it again"),
        "{}",
        r.stderr
    );

    // After that build the evidence is current: b.hpp reaches core.
    relist(&b);
    let r = b.run(&["b.hpp"], &[]);
    assert_oracle(&r, &base, &head);
    assert_subset(&r, &["t_core", "t_other"]);
}

fn assert_full_suite_of(r: &Run, all: &[&str], code: &str) {
    assert_eq!(r.code, 3, "expected FULL_SUITE_SELECTED (3), got {r:#?}");
    assert!(
        r.codes().iter().any(|c| c == code),
        "expected {code}: {}",
        r.stderr
    );
    assert_eq!(r.names(), all);
}

/// `diff2test init` on the fixture (issue 30, item 1): a commented starter
/// policy that the policy loader accepts unedited, whose active lines are the
/// self-checking modes only, naming the unreferenced top-level path and the
/// test it cannot map; with it, a README change is an empty subset. `--output`
/// never overwrites without `--force`.
#[test]
fn init_writes_a_starter_policy_that_loads_and_keeps_its_promises() {
    // A private tree: the shared one is read by tests that run meanwhile, and
    // a ctest run of another test must not change what two runs here see.
    let b = &build_fixture(&["-DD2T_WITH_ALL_OPAQUE=ON"]);
    let mut args = vec!["init".to_owned()];
    args.extend(b.base_args());
    let r = common::run_bin(&args, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(r.stderr.starts_with("POLICY_WRITTEN\n"), "{}", r.stderr);
    let text = r.stdout.clone();
    let active: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    // Issue 36: nothing active; the textual modes are assumptions, written commented.
    assert!(active.is_empty(), "{text}");
    assert!(
        text.contains("\n# unreferenced_paths = \"skip\"\n"),
        "{text}"
    );
    assert!(text.contains("diff2test record"), "{text}");
    assert!(text.contains("#   README.md\n"), "{text}");
    assert!(
        text.contains("#   wrapped.env: TEST_COMMAND_UNMAPPED"),
        "{text}"
    );
    assert!(text.contains("#   libs/: dependency evidence"), "{text}");
    // The loader accepts it as written, and with every suggestion uncommented.
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("diff2test.toml");
    std::fs::write(&written, &text).unwrap();
    let loaded = diff2test::policy::load(Some(written.to_str().unwrap()), "/nonexistent").unwrap();
    assert_eq!(
        loaded.unreferenced_paths,
        diff2test::policy::UnreferencedMode::Full
    );
    let uncommented: String = text
        .lines()
        .map(|l| {
            l.strip_prefix("# ")
                .filter(|r| r.starts_with('[') || r.contains(" = "))
                .unwrap_or(l)
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let all = dir.path().join("all.toml");
    std::fs::write(&all, &uncommented).unwrap();
    diff2test::policy::load(Some(all.to_str().unwrap()), "/nonexistent")
        .unwrap_or_else(|e| panic!("{e}\n{uncommented}"));
    // As written, a README change costs the whole suite (nothing rests on an
    // assumption); with every suggestion uncommented it is skipped under the mode.
    let p = written.to_str().unwrap();
    let r = b.run(&["README.md"], &["--policy", p]);
    assert_eq!(r.code, 3, "{r:#?}");
    let mode = dir.path().join("mode.toml");
    std::fs::write(
        &mode,
        text.replace(
            "\n# unreferenced_paths = \"skip\"\n",
            "\nunreferenced_paths = \"skip\"\n",
        ),
    )
    .unwrap();
    let p = mode.to_str().unwrap();
    let r = b.run(&["README.md"], &["--policy", p, "--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        plan["change"]["paths"][0]["declared"]["kind"], "unreferenced_paths",
        "{r:#?}"
    );
    // --output: written whole; never over an existing file without --force.
    let out = dir.path().join("out.toml");
    let mut with_out = args.clone();
    with_out.extend(["--output".into(), out.display().to_string()]);
    assert_eq!(common::run_bin(&with_out, None).code, 0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    let again = common::run_bin(&with_out, None);
    assert_eq!(again.code, 2, "{again:#?}");
    assert!(again.stderr.contains("pass --force"), "{}", again.stderr);
    assert!(again.stdout.is_empty());
    with_out.push("--force".into());
    assert_eq!(common::run_bin(&with_out, None).code, 0);
    // Issue 30, item 6: each fallback's hint names the one-line mode that
    // would have avoided it, on stderr and in the plan.
    let r = b.run(&["README.md", "CMakeLists.txt"], &["--explain-changes"]);
    assert_eq!(r.code, 3, "{r:#?}");
    for want in [
        "hint CHANGE_UNKNOWN: README.md is in no dependency evidence",
        "set unreferenced_paths = \"skip\"",
        "hint CHANGE_BUILD_CONFIG: CMakeLists.txt: pass the base commit's `diff2test snapshot` as --base-snapshot",
        "hint TEST_COMMAND_UNMAPPED: test \"wrapped.env\"",
        "set scripts = \"scan\"",
    ] {
        assert!(r.stderr.contains(want), "{want}\n{}", r.stderr);
    }
    let r = b.run(&["README.md"], &["--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let hints = plan["policy_hints"].to_string();
    assert!(hints.contains("unreferenced_paths"), "{hints}");
    assert!(hints.contains("scripts = \\\"scan\\\""), "{hints}");
}
