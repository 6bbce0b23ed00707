//! Issue 14: messages that say what to do, one test per message that was
//! wrong, on a real build of the fixture.

mod common;

use common::*;
use std::process::Command;

const CORE_HPP: &str = "libs/core/include/core/core.hpp";

fn run_args(args: &[&str]) -> Run {
    run_bin(
        &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        None,
    )
}

#[test]
fn no_arguments_name_every_missing_flag() {
    let r = run_args(&[]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    let line = r.stderr.lines().nth(1).unwrap();
    // --ctest-json and --dep-list have defaults (issue 31): not required.
    for flag in ["--source-dir", "--build-dir", "--changed"] {
        assert!(line.contains(flag), "{flag} missing from {line:?}");
    }
}

#[test]
fn help_lists_absolute_dep_list_entries_and_version_names_the_schemas() {
    let r = run_args(&["--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("CMakeFiles/<target>.dir/**/*.d"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(".ninja_deps"), "{}", r.stdout);
    assert!(r.stdout.contains("5 SETUP_ERROR"), "{}", r.stdout);
    for sub in ["diff2test init", "diff2test snapshot"] {
        assert!(
            r.stdout.contains(sub),
            "--help should list {sub}: {}",
            r.stdout
        );
    }
    let v = run_args(&["--version"]);
    assert!(
        v.stdout.contains("diff2test.plan.v2") && v.stdout.contains("diff2test.receipt.v2"),
        "{}",
        v.stdout
    );
}

#[test]
fn a_dep_list_entry_that_does_not_exist_says_so_with_its_remedy() {
    let b = shared();
    let list = b.root.join("deps-missing-entry.txt");
    let mut text = std::fs::read_to_string(b.deps()).unwrap();
    text.push_str(&format!("{}/no/such/file.o.d\n", b.build.display()));
    std::fs::write(&list, text).unwrap();
    let mut args = b.base_args();
    let i = args.iter().position(|a| a == "--dep-list").unwrap();
    args[i + 1] = list.display().to_string();
    args.extend(["--changed".into(), CORE_HPP.into()]);
    let r = run_bin(&args, None);
    assert_eq!(r.code, 3);
    assert!(
        r.stderr.contains("no/such/file.o.d does not exist"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("is not inside any target's"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("remedy DEP_FILE_UNREADABLE:"),
        "{}",
        r.stderr
    );
}

#[test]
fn config_not_found_lists_the_configurations_that_exist() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &["--config", "Nope"]);
    assert_eq!(r.code, 3);
    assert!(
        r.stderr
            .contains("--config \"Nope\" is not in the codemodel, which has \"Debug\""),
        "{}",
        r.stderr
    );
}

#[test]
fn explain_with_format_json_prints_json() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &["--explain", "core.add", "--format", "json"]);
    assert_eq!(r.code, 0, "{r:#?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
    assert_eq!(v["tests"][0]["name"], "core.add");
    assert_eq!(v["tests"][0]["action"], "selected");
}

#[test]
fn every_reason_is_followed_by_its_remedy_once() {
    let b = shared();
    let r = b.run(&["README.md", "CMakeLists.txt"], &[]);
    assert_eq!(r.code, 3);
    for code in r.codes() {
        let n = r
            .stderr
            .lines()
            .filter(|l| l.starts_with(&format!("remedy {code}:")))
            .count();
        assert_eq!(n, 1, "{code}: {}", r.stderr);
    }
    // Root cause first: the CMake edit before... both are change reasons; the
    // state line stays first.
    assert_eq!(r.state(), "FULL_SUITE_SELECTED");
}

#[test]
fn the_receipt_carries_the_plans_input_identity() {
    let b = shared();
    let receipt = b.root.join("receipt-identity.json");
    let r = b.run(
        &[CORE_HPP],
        &["--format", "json", "--receipt", receipt.to_str().unwrap()],
    );
    assert_eq!(r.code, 0);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let rec: serde_json::Value = serde_json::from_slice(&std::fs::read(&receipt).unwrap()).unwrap();
    assert_eq!(plan["input_identity"], rec["input_identity"]);
    assert!(rec["input_identity"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
}

#[test]
fn fail_on_setup_error_exits_5_only_for_setup_errors() {
    let b = shared();
    // A setup error: the catalogue path does not exist.
    let mut args = b.base_args();
    let i = args.iter().position(|a| a == "--ctest-json").unwrap();
    args[i + 1] = b.root.join("nope.json").display().to_string();
    args.extend([
        "--changed".into(),
        CORE_HPP.into(),
        "--fail-on-setup-error".into(),
    ]);
    let r = run_bin(&args, None);
    assert_eq!(r.code, 5, "{r:#?}");
    assert_eq!(r.stdout, "");
    // Issue 31: the first line is the state CI looks for, then the fallback's.
    assert_eq!(r.state(), "SETUP_ERROR");
    assert_eq!(
        r.stderr.lines().nth(1),
        Some("FULL_SUITE_REQUIRED"),
        "{}",
        r.stderr
    );
    // A change-caused fallback keeps exit 3.
    let r = b.run(&["README.md"], &["--fail-on-setup-error"]);
    assert_eq!(r.code, 3, "{r:#?}");
}

#[test]
fn output_writes_the_selection_whole_and_stdout_stays_empty() {
    let b = shared();
    let out = b.root.join("selection-output.txt");
    let r = b.run(&[CORE_HPP], &["--output", out.to_str().unwrap()]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), CORE_SELECTED);
    let bad = b.run(&[CORE_HPP], &["--output", "/nonexistent-dir/x.txt"]);
    assert_eq!(bad.code, 2);
    assert_eq!(bad.stdout, "");
}

#[test]
fn markdown_summary_has_the_state_first_and_the_test_names() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &["--format", "markdown"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("**diff2test: SUBSET_SELECTED**"),
        "{}",
        r.stdout
    );
    for t in CORE_SELECTED {
        assert!(r.stdout.contains(&format!("`{t}`")), "{t}: {}", r.stdout);
    }
    let f = b.run(&["README.md"], &["--format", "markdown"]);
    assert!(
        f.stdout.starts_with("**diff2test: FULL_SUITE_SELECTED**"),
        "{}",
        f.stdout
    );
    assert!(f.stdout.contains("declare a [[boundary]]"), "{}", f.stdout);
}

#[test]
fn shards_are_disjoint_stable_and_cover_the_selection() {
    let b = shared();
    let mut union = Vec::new();
    for k in 1..=3 {
        let r = b.run(&[CORE_HPP], &["--shard", &format!("{k}/3")]);
        assert_eq!(r.code, 0);
        let again = b.run(&[CORE_HPP], &["--shard", &format!("{k}/3")]);
        assert_eq!(r.stdout, again.stdout, "stable");
        union.extend(r.names().iter().map(|s| s.to_string()));
    }
    union.sort();
    let before = union.len();
    union.dedup();
    assert_eq!(before, union.len(), "disjoint");
    assert_eq!(union, CORE_SELECTED);
    assert_eq!(b.run(&[CORE_HPP], &["--shard", "0/3"]).code, 2);
    assert_eq!(b.run(&[CORE_HPP], &["--shard", "4/3"]).code, 2);
}

/// An in-source build dir that git does not ignore holds build products, not
/// changes; the plan records --base/--head.
#[test]
fn an_in_source_build_dir_is_no_change_source_and_the_plan_records_the_revisions() {
    let dir = scratch_dir("d2t-insource-");
    let src = dir.path().join("src");
    copy_fixture(&src);
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    let build = src.join("build");
    let b = Built::from_parts(
        dir,
        src.parent().unwrap().to_path_buf(),
        src.clone(),
        build.clone(),
    );
    prepare(&b);
    // Only core.hpp changes in the source; the build dir holds thousands of untracked files.
    let hpp = src.join(CORE_HPP);
    let text = std::fs::read_to_string(&hpp).unwrap();
    std::fs::write(&hpp, format!("{text}\n// edited\n")).unwrap();
    filetime::set_file_mtime(&hpp, filetime::FileTime::from_unix_time(1_000_000_000, 0)).unwrap();
    let mut args = b.base_args();
    args.extend([
        "--no-ci".into(),
        "--base".into(),
        "HEAD".into(),
        "--explain-changes".into(),
        "--format".into(),
        "json".into(),
    ]);
    let r = run_bin(&args, None);
    let changed: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("change "))
        .collect();
    assert_eq!(changed.len(), 1, "only the header is a change: {changed:?}");
    assert!(
        changed[0].starts_with(&format!("change {CORE_HPP}:")),
        "{changed:?}"
    );
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(plan["change"]["base"], "HEAD");
    assert_eq!(plan["change"]["head"], serde_json::Value::Null);
}

// ---------------------------------------------------------------- issue 31, item 7

/// A flag that would do nothing where it is given is a usage error naming it
/// (before, each was silently ignored).
#[test]
fn flags_that_do_nothing_in_context_are_usage_errors() {
    let b = shared();
    for (extra, flag) in [
        (&["--head", "HEAD"][..], "--head"),
        (&["--merge-base"], "--merge-base"),
        (&["--no-merge-base"], "--no-merge-base"),
        (&["-z"], "-z/--null"),
    ] {
        let r = b.run(&[CORE_HPP], extra);
        assert_eq!((r.code, r.state()), (2, "USAGE_ERROR"), "{extra:?}: {r:#?}");
        assert_eq!(r.stdout, "");
        assert!(
            r.stderr.contains(&format!("{flag} does nothing without")),
            "{extra:?}: {}",
            r.stderr
        );
    } // --base-snapshot with a policy that keeps compare mode off.
    let dir = scratch_dir("d2t-snap-off-");
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, "build_config = \"full\"\n").unwrap();
    let r = b.run(
        &[CORE_HPP],
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--base-snapshot",
            dir.path().join("s.json").to_str().unwrap(),
        ],
    );
    assert_eq!((r.code, r.state()), (2, "USAGE_ERROR"), "{r:#?}");
    assert!(
        r.stderr.contains("--base-snapshot does nothing"),
        "{}",
        r.stderr
    );
}

/// An empty change set (a re-run, an empty commit) is a normal answer: exit
/// 0, nothing to run, a line saying why (before: a usage error, a red job).
#[test]
fn an_empty_change_set_selects_nothing_and_says_so() {
    let b = shared();
    let mut args = b.base_args();
    args.extend(["--changed-from".into(), "-".into()]);
    let r = run_bin(&args, Some(b""));
    assert_eq!((r.code, r.state()), (0, "SUBSET_SELECTED"), "{r:#?}");
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .contains("the change set is empty: nothing changed, so no test is affected"),
        "{}",
        r.stderr
    );
}

/// A NUL-separated list without `-z` is said as such (before: "path
/// contains NUL", with a [[boundary]] suggested).
#[test]
fn a_nul_separated_list_without_z_asks_for_z() {
    let b = shared();
    let mut args = b.base_args();
    args.extend(["--changed-from".into(), "-".into()]);
    let r = run_bin(&args, Some(format!("{CORE_HPP}\0README.md\0").as_bytes()));
    assert_eq!((r.code, r.state()), (2, "USAGE_ERROR"), "{r:#?}");
    assert!(
        r.stderr.contains("NUL-separated") && r.stderr.contains("pass -z"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("boundary"), "{}", r.stderr);
}

/// A missing dependency list is the root cause, said once with its remedy:
/// no changed file is then in a dependency file, and no [[boundary]] is
/// suggested for them.
#[test]
fn a_missing_dependency_list_is_said_once_without_a_boundary_remedy() {
    let b = shared();
    let mut args = b.base_args();
    let i = args.iter().position(|a| a == "--dep-list").unwrap();
    args[i + 1] = b.root.join("no-such-deps.txt").display().to_string();
    args.extend([
        "--changed".into(),
        CORE_HPP.into(),
        "--changed".into(),
        "libs/core/src/core.cpp".into(),
    ]);
    let r = run_bin(&args, None);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr
            .contains("remedy DEP_LIST_UNREADABLE: build the project first"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("[[boundary]]"), "{}", r.stderr);
    assert!(!r.stderr.contains("remedy CHANGE_UNKNOWN"), "{}", r.stderr);
    let unknown: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("reason CHANGE_UNKNOWN"))
        .collect();
    assert_eq!(unknown.len(), 1, "{}", r.stderr);
    assert!(unknown[0].contains("2 changed path(s)"), "{}", r.stderr);
}

/// "Did you mean" for a test name, a configuration spelled in another case,
/// and a changed path given relative to the working directory.
#[test]
fn did_you_mean_for_tests_configurations_and_paths() {
    let b = shared();
    let r = b.run(&[CORE_HPP], &["--explain", "core.ad"]);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(
        r.stderr.contains("(did you mean \"core.add\"?)"),
        "{}",
        r.stderr
    );
    let r = b.run(&[CORE_HPP], &["--config", "debug"]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr.contains("(did you mean \"Debug\"?)"),
        "{}",
        r.stderr
    );
    // Relative to this process's working directory, not to --source-dir.
    let cwd = std::env::current_dir().unwrap();
    let up = "../".repeat(cwd.components().count());
    let from_cwd = format!(
        "{up}{}",
        b.src
            .join(CORE_HPP)
            .display()
            .to_string()
            .trim_start_matches('/')
    );
    let r = b.run(&[&from_cwd], &[]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr.contains(&format!("did you mean {CORE_HPP}?")),
        "{}",
        r.stderr
    );
}

/// Run from a subdirectory of the source tree, a relative `--changed` that
/// names a file there (and nothing relative to the source dir) is a usage
/// error naming the path meant: taken as given it was a deleted file, the
/// whole suite for a typo (issue 37).
#[test]
fn a_relative_changed_path_from_a_subdirectory_is_a_usage_error_naming_the_path_meant() {
    let b = shared();
    let mut args = b.base_args();
    args.extend(["--changed".into(), "include/core/core.hpp".into()]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_diff2test"))
        .args(&args)
        .current_dir(b.src.join("libs/core"))
        .env_remove("CI")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.starts_with("USAGE_ERROR\n"), "{stderr}");
    assert!(
        stderr.contains(&format!("(did you mean {CORE_HPP}?)")),
        "{stderr}"
    );
}

/// A mistyped subcommand gets its "did you mean".
#[test]
fn a_mistyped_subcommand_gets_did_you_mean() {
    let r = run_bin(&["inti".into(), "--source-dir".into(), ".".into()], None);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(
        r.stderr
            .contains("unknown subcommand \"inti\" (did you mean \"init\"?)"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------- issue 31, item 6

/// With the costs ctest recorded in the build tree (`CTestCostData.txt`,
/// written by a real ctest run here), `--shard` balances the shards by time:
/// disjoint, together the selection, the same on every call; a full-suite
/// fallback is split too. A test that costs more than all the others
/// together gets a shard of its own.
#[test]
fn shards_are_balanced_by_the_costs_ctest_recorded() {
    // A private tree: ctest writes into it.
    let b = &build_fixture(&["-DD2T_SHARD_COST_TREE=ON"]);
    run_ok(
        Command::new("ctest")
            .current_dir(&b.build)
            .args(["-j2", "--quiet"]),
    );
    let costs = b.build.join("Testing/Temporary/CTestCostData.txt");
    assert!(costs.is_file(), "ctest wrote no {}", costs.display());
    for changed in [CORE_HPP, "README.md"] {
        let whole = b.run(&[changed], &[]);
        let mut union = Vec::new();
        for k in 1..=3 {
            let r = b.run(&[changed], &["--shard", &format!("{k}/3")]);
            assert_eq!(r.code, whole.code, "{r:#?}");
            assert!(
                r.stderr.contains("balanced by the costs in")
                    && r.stderr.contains("CTestCostData.txt"),
                "{}",
                r.stderr
            );
            assert_eq!(
                r.stdout,
                b.run(&[changed], &["--shard", &format!("{k}/3")]).stdout
            );
            union.extend(r.names().iter().map(|s| s.to_string()));
        }
        let n = union.len();
        union.sort();
        union.dedup();
        assert_eq!(n, union.len(), "shards overlap: {union:?}");
        let mut all: Vec<String> = whole.names().iter().map(|s| s.to_string()).collect();
        all.sort();
        assert_eq!(union, all, "{changed}: the shards are not the selection");
    }
    // One test costlier than the rest together: alone in its shard.
    let mut text = String::new();
    for t in CORE_SELECTED {
        let secs = if *t == "net.decode" { 1000.0 } else { 1.0 };
        text.push_str(&format!("{t} 1 {secs}\n"));
    }
    text.push_str("---\n");
    std::fs::write(&costs, text).unwrap();
    let alone: Vec<Vec<String>> = (1..=2)
        .map(|k| {
            let r = b.run(&[CORE_HPP], &["--shard", &format!("{k}/2")]);
            r.names().iter().map(|s| s.to_string()).collect()
        })
        .collect();
    assert!(
        alone.iter().any(|s| s == &["net.decode"]),
        "net.decode should run alone: {alone:?}"
    );
}

/// `--help` lists every subcommand, `--version` the schemas and the CMake
/// range; `completions` and `man` print what clap generates from the same
/// definition (issue 31, item 7).
#[test]
fn help_version_completions_and_man_page() {
    let h = run_args(&["--help"]);
    for sub in ["init", "snapshot", "completions", "man"] {
        assert!(
            h.stdout.contains(&format!("diff2test {sub}")),
            "{sub}: {}",
            h.stdout
        );
    }
    let v = run_args(&["--version"]);
    assert!(v.stdout.contains("CMake 3.20 to 4.x"), "{}", v.stdout);
    assert!(v.stdout.contains("diff2test.snapshot.v1"), "{}", v.stdout);
    for (shell, needle) in [
        ("bash", "complete -F _diff2test"),
        ("zsh", "#compdef diff2test"),
        ("fish", "complete -c diff2test"),
    ] {
        let r = run_args(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {r:#?}");
        assert!(
            r.stdout.contains(needle),
            "{shell}: {}",
            &r.stdout[..r.stdout.len().min(400)]
        );
        assert!(r.stdout.contains("source-dir"), "{shell}");
        assert!(
            r.stdout.contains("snapshot"),
            "{shell}: subcommands complete too"
        );
    }
    let bad = run_args(&["completions", "tcsh"]);
    assert_eq!((bad.code, bad.state()), (2, "USAGE_ERROR"));
    assert!(bad.stdout.is_empty());
    let m = run_args(&["man"]);
    assert_eq!(m.code, 0);
    assert!(
        m.stdout.starts_with(".ie") || m.stdout.contains(".TH diff2test 1"),
        "{}",
        m.stdout
    );
    assert!(
        m.stdout.contains("source\\-dir"),
        "the man page documents the flags"
    );
}

/// A catalogue listed from another build tree is said once, as the root
/// cause with its remedy; the tests it leaves unmapped are one line, with no
/// remedy of their own (before: one line per test and an unmapped-test remedy).
#[test]
fn a_foreign_catalogue_is_said_once() {
    let b = shared();
    let text = std::fs::read_to_string(b.ctest_json()).unwrap();
    let foreign = text.replace(&b.build.display().to_string(), "/elsewhere/build");
    let dir = scratch_dir("d2t-foreign-");
    let path = dir.path().join("ctest.json");
    std::fs::write(&path, foreign).unwrap();
    let mut args = b.base_args();
    let i = args.iter().position(|a| a == "--ctest-json").unwrap();
    args[i + 1] = path.display().to_string();
    args.extend(["--changed".into(), CORE_HPP.into()]);
    let r = run_bin(&args, None);
    assert_eq!((r.code, r.state()), (4, "FULL_SUITE_REQUIRED"), "{r:#?}");
    assert!(
        r.stderr.contains("reason CTEST_CATALOGUE_FOREIGN"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("remedy CTEST_CATALOGUE_FOREIGN"),
        "{}",
        r.stderr
    );
    let unmapped: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("reason TEST_COMMAND_UNMAPPED"))
        .collect();
    assert_eq!(unmapped.len(), 1, "{}", r.stderr);
    assert!(
        unmapped[0].contains("14 test(s) run programs of another build tree"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("remedy TEST_COMMAND_UNMAPPED"),
        "{}",
        r.stderr
    );
}

/// CMake's `file(COPY)` gives a copy its source's time cut to the second. A
/// header edited in the second its user was compiled makes a copy newer than
/// the unit's depfile (written first) and older than its object: make keeps
/// the object, and the evidence stays stale through any number of rebuilds.
/// The reason says what clears it; this build shows that a rebuild does not
/// and that what it says does. A source file's whole-second time gets no
/// such words (`m18`'s snapshot).
#[test]
fn a_whole_second_build_tree_copy_newer_than_its_depfile_says_to_touch_it() {
    require_tools();
    let dir = scratch_dir("d2t-whole-second-");
    let (src, build) = (dir.path().join("src"), dir.path().join("build"));
    write_files(
        &src,
        &[
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.20)\nproject(p CXX)\nenable_testing()\n\
                 file(COPY include/ DESTINATION ${CMAKE_BINARY_DIR}/sdk/include)\n\
                 add_executable(user user.cpp)\n\
                 target_include_directories(user PRIVATE ${CMAKE_BINARY_DIR}/sdk/include)\n\
                 add_test(NAME user COMMAND user)\n\
                 add_executable(other other.cpp)\nadd_test(NAME other COMMAND other)\n",
            ),
            ("include/api.h", "#pragma once\n#define API_VALUE 1\n"),
            (
                "user.cpp",
                "#include <api.h>\nint main() { return API_VALUE == 1 ? 0 : 1; }\n",
            ),
            ("other.cpp", "int main() { return 0; }\n"),
        ],
    );
    run_ok(
        Command::new("bash")
            .arg(repo_root().join("fixtures/prepare-build.sh"))
            .arg(&src)
            .arg(&build),
    );
    let obj = build.join("CMakeFiles/user.dir/user.cpp.o");
    let depfile = build.join("CMakeFiles/user.dir/user.cpp.o.d");
    let copy = build.join("sdk/include/api.h");
    let mtime = |p: &std::path::Path| {
        filetime::FileTime::from_last_modification_time(&std::fs::metadata(p).unwrap())
    };
    // As the same second as the compile leaves it: the copy (file(COPY)'s
    // whole second) after the depfile, before the object, and before the
    // File API reply of a later configure (which copies nothing, as the
    // copy's time is its source's). Everything stays in the past for make.
    let compiled = mtime(&depfile);
    let second = compiled.unix_seconds() + 1;
    while filetime::FileTime::now().unix_seconds() < second + 2 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let relist = || {
        let listed = run_ok(
            Command::new("ctest")
                .arg("--show-only=json-v1")
                .current_dir(&build),
        );
        std::fs::write(build.join("ctest.json"), listed).unwrap();
    };
    run_ok(Command::new("cmake").arg(&build));
    relist();
    let at = |s: i64, ns: u32| filetime::FileTime::from_unix_time(s, ns);
    // What the compile read is no newer than its depfile.
    for f in [
        "CMakeFiles/user.dir/flags.make",
        "CMakeFiles/user.dir/user.cpp.o.d",
    ] {
        filetime::set_file_mtime(build.join(f), at(second - 1, 500_000_000)).unwrap();
    }
    filetime::set_file_mtime(src.join("user.cpp"), at(second - 2, 0)).unwrap();
    filetime::set_file_mtime(&copy, at(second, 0)).unwrap();
    filetime::set_file_mtime(&obj, at(second, 200_000_000)).unwrap();
    let stale = |r: &Run| {
        let lines: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("reason DEP_EVIDENCE_STALE:"))
            .collect();
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert_eq!(r.stdout, "other\nuser\n");
        assert_eq!(r.codes(), ["DEP_EVIDENCE_STALE"], "{}", r.stderr);
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        lines[0].to_owned()
    };
    let line = stale(&run_on(&src, &build, &["other.cpp"], &[]));
    assert!(
        line.contains(&format!(
            "{} is newer than {}",
            copy.display(),
            depfile.display()
        )),
        "{line}"
    );
    assert!(
        line.ends_with("its modification time is a whole second, as a copy that keeps its source's time cut to the second has (CMake's file(COPY)), so the build may take the object for up to date: if a rebuild leaves this reason, touch the file it was copied from, re-run cmake and rebuild"),
        "{line}"
    );
    // A rebuild leaves it: make takes the object for up to date.
    let object_time = mtime(&obj);
    run_ok(Command::new("cmake").arg("--build").arg(&build));
    assert_eq!(mtime(&obj), object_time, "make rebuilt the object");
    assert_eq!(stale(&run_on(&src, &build, &["other.cpp"], &[])), line);
    // What the words say clears it: the source touched (in a later second
    // than the object), cmake re-run (file(COPY) copies it again, with the
    // new time cut to the second), a rebuild. Touching the copy itself would
    // make it a build-tree file written after configure (GENERATED_SOURCE).
    let later = object_time.unix_seconds() + 1;
    while filetime::FileTime::now().unix_seconds() <= later {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    filetime::set_file_mtime(src.join("include/api.h"), filetime::FileTime::now()).unwrap();
    run_ok(Command::new("cmake").arg(&build));
    run_ok(Command::new("cmake").arg("--build").arg(&build));
    relist();
    assert!(mtime(&obj) > object_time, "the object was not rebuilt");
    let r = run_on(&src, &build, &["other.cpp"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "other\n", "{}", r.stderr);
}
