//! Decisions on in-memory evidence (`tests/common/evidence.rs`): what a change
//! selects, and which fault of the evidence ends in which outcome, on a
//! project written as CMake, the compiler and ctest write its evidence, in
//! milliseconds and without CMake. What CMake really writes, and soundness,
//! are proved on real builds (tests/cli.rs, tests/oracle.rs).

mod common;

use common::evidence::{Project, Tree};
use common::Run;

/// core (a library), app (an executable linking it, with its own header),
/// and a tool that links nothing; one test each for app and tool, two for a
/// second executable linking core.
fn project() -> Project {
    Project::new()
        .file("README.md", "# P\n")
        .file("core/core.h", "#pragma once\nint core_f();\n")
        .file("core/core.cpp", "#include \"core/core.h\"\nint core_f() { return 1; }\n")
        .file("app/app.h", "#pragma once\n#define APP_ONE 1\n")
        .file(
            "app/main.cpp",
            "#include \"core/core.h\"\n#include \"app/app.h\"\nint main() { return core_f() - APP_ONE; }\n",
        )
        .file("more/more.cpp", "#include \"core/core.h\"\nint main() { return core_f() - 1; }\n")
        .file("tool/tool.h", "#pragma once\n#define TOOL_OK 0\n")
        .file("tool/tool.cpp", "#include \"tool/tool.h\"\nint main() { return TOOL_OK; }\n")
        .library("core", "core", &["core/core.cpp"], &[])
        .includes("core/core.cpp", &["core/core.h"])
        .executable("app", "app", &["app/main.cpp"], &["core"])
        .includes("app/main.cpp", &["core/core.h", "app/app.h"])
        .executable("more", "more", &["more/more.cpp"], &["core"])
        .includes("more/more.cpp", &["core/core.h"])
        .executable("tool", "tool", &["tool/tool.cpp"], &[])
        .includes("tool/tool.cpp", &["tool/tool.h"])
        .test("app.run", "app", &[])
        .test("more.a", "more", &["a"])
        .test("more.b", "more", &["b"])
        .test("tool.run", "tool", &["--check"])
}

const ALL: &[&str] = &["app.run", "more.a", "more.b", "tool.run"];

fn assert_subset(r: &Run, want: &[&str]) {
    assert_eq!(r.code, 0, "expected SUBSET_SELECTED (0): {r:#?}");
    assert_eq!(r.state(), "SUBSET_SELECTED", "{r:#?}");
    assert_eq!(r.names(), want, "{r:#?}");
}

fn assert_full_suite(r: &Run, code: &str) {
    assert_eq!(r.code, 3, "expected FULL_SUITE_SELECTED (3): {r:#?}");
    assert_eq!(r.state(), "FULL_SUITE_SELECTED", "{r:#?}");
    assert!(
        r.codes().iter().any(|c| c == code),
        "expected {code}: {r:#?}"
    );
    assert_eq!(r.names(), ALL, "the full suite lists every test");
}

fn assert_required(r: &Run, code: &str) {
    assert_eq!(r.code, 4, "expected FULL_SUITE_REQUIRED (4): {r:#?}");
    assert_eq!(r.state(), "FULL_SUITE_REQUIRED", "{r:#?}");
    assert!(
        r.codes().iter().any(|c| c == code),
        "expected {code}: {r:#?}"
    );
    assert_eq!(r.stdout, "", "FULL_SUITE_REQUIRED prints no names");
}

fn edit_json(path: &std::path::Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    common::write_keep_mtime(path, &serde_json::to_vec_pretty(&v).unwrap());
}

fn depfiles(t: &Tree) -> Vec<String> {
    let list = std::fs::read_to_string(t.build.join("deps.txt")).unwrap();
    list.lines().map(str::to_owned).collect()
}

// ---------------------------------------------------------------- the builder

/// The builder writes what CMake, the compiler and ctest write: a real build
/// of the same project decides every change alike (outcome, names, codes).
#[test]
fn the_builder_decides_as_a_real_build_of_the_same_project() {
    common::require_tools();
    let p = project();
    let fake = p.write();
    let dir = common::scratch_dir("d2t-evidence-real");
    let (src, build) = (dir.path().join("src"), dir.path().join("build"));
    p.write_cmake(&src);
    common::run_ok(
        std::process::Command::new("bash")
            .arg(common::repo_root().join("fixtures/prepare-build.sh"))
            .arg(&src)
            .arg(&build),
    );
    let real = Tree::at(dir, src, build);
    for change in [
        "app/app.h",
        "tool/tool.h",
        "core/core.h",
        "core/core.cpp",
        "more/more.cpp",
        "README.md",
        "CMakeLists.txt",
        "core/CMakeLists.txt",
    ] {
        let (f, r) = (fake.run(&[change], &[]), real.run(&[change], &[]));
        assert_eq!(
            (f.code, f.state(), f.names(), f.codes()),
            (r.code, r.state(), r.names(), r.codes()),
            "{change}: the builder's evidence decides otherwise than a real build's\nbuilder: {f:#?}\nreal: {r:#?}"
        );
    }
}

// ---------------------------------------------------------------- subsets

#[test]
fn a_header_selects_the_tests_whose_units_include_it() {
    let t = project().write();
    assert_subset(&t.run(&["app/app.h"], &[]), &["app.run"]);
    assert_subset(&t.run(&["tool/tool.h"], &[]), &["tool.run"]);
    // core.h: app includes it, and core's unit is linked into app and more.
    assert_subset(
        &t.run(&["core/core.h"], &[]),
        &["app.run", "more.a", "more.b"],
    );
}

#[test]
fn a_library_source_selects_through_the_reverse_graph() {
    let t = project().write();
    let r = t.run(&["core/core.cpp"], &[]);
    assert_subset(&r, &["app.run", "more.a", "more.b"]);
    assert!(
        r.stderr.contains("core"),
        "the chain names the library: {}",
        r.stderr
    );
}

#[test]
fn nothing_changed_selects_nothing() {
    let t = project().write();
    let none = t.build.join("no-changes.txt");
    std::fs::write(&none, "").unwrap();
    let r = t.run(&[], &["--changed-from", none.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.stdout, "", "{r:#?}");
}

#[test]
fn the_same_evidence_gives_the_same_bytes() {
    let t = project().write();
    let a = t.run(&["core/core.h"], &["--format", "json"]);
    let b = t.run(&["core/core.h"], &["--format", "json"]);
    assert_eq!(
        (a.code, &a.stdout, &a.stderr),
        (b.code, &b.stdout, &b.stderr)
    );
}

// ---------------------------------------------------------------- changed paths

#[test]
fn a_path_no_evidence_names_is_the_full_suite() {
    let t = project().write();
    assert_full_suite(&t.run(&["README.md"], &[]), "CHANGE_UNKNOWN");
}

#[test]
fn a_cmake_input_is_the_full_suite() {
    let t = project().write();
    assert_full_suite(&t.run(&["CMakeLists.txt"], &[]), "CHANGE_BUILD_CONFIG");
    assert_full_suite(&t.run(&["app/CMakeLists.txt"], &[]), "CHANGE_BUILD_CONFIG");
}

// ---------------------------------------------------------------- dependency evidence

#[test]
fn a_header_edited_after_the_build_makes_the_evidence_stale() {
    let t = project().write();
    t.edit("tool/tool.h", "// edited\n");
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_EVIDENCE_STALE");
}

#[test]
fn a_unit_without_a_depfile_is_incomplete_coverage() {
    let t = project().without_depfile("tool/tool.cpp").write();
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_COVERAGE_INCOMPLETE");
}

#[test]
fn a_missing_dependency_list_is_the_full_suite() {
    let t = project().write();
    std::fs::remove_file(t.build.join("deps.txt")).unwrap();
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_LIST_UNREADABLE");
}

#[test]
fn a_listed_depfile_absent_or_malformed_is_the_full_suite() {
    let t = project().write();
    let first = depfiles(&t).remove(0);
    let content = std::fs::read(&first).unwrap();
    std::fs::remove_file(&first).unwrap();
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_FILE_UNREADABLE");
    common::write_keep_mtime(std::path::Path::new(&first), b"this is not a depfile\n");
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_FILE_MALFORMED");
    common::write_keep_mtime(std::path::Path::new(&first), &content);
    assert_subset(&t.run(&["app/app.h"], &[]), &["app.run"]);
}

#[test]
fn a_depfile_listed_twice_is_the_full_suite() {
    let t = project().write();
    let first = depfiles(&t).remove(0);
    let (dir, name) = first.rsplit_once('/').unwrap();
    let last = dir.rsplit('/').next().unwrap();
    let list = t.build.join("deps.txt");
    let text = std::fs::read_to_string(&list).unwrap();
    std::fs::write(&list, format!("{text}{dir}/../{last}/{name}\n")).unwrap();
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_FILE_DUPLICATE");
}

#[test]
fn a_depfile_of_another_object_cannot_map() {
    let t = project().write();
    let first = depfiles(&t).remove(0);
    let text = std::fs::read_to_string(&first).unwrap();
    let (target, rest) = text.split_once(": ").unwrap();
    common::write_keep_mtime(
        std::path::Path::new(&first),
        format!("{target}.other.o: {rest}").as_bytes(),
    );
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_FILE_UNMAPPED");
}

#[test]
fn a_dangling_prerequisite_cannot_be_inspected() {
    let t = project().write();
    let h = t.src.join("tool/tool.h");
    std::fs::remove_file(&h).unwrap();
    std::os::unix::fs::symlink(t.src.join("nowhere.h"), &h).unwrap();
    assert_full_suite(&t.run(&["app/app.h"], &[]), "DEP_PREREQ_UNINSPECTABLE");
}

// ---------------------------------------------------------------- the catalogue

#[test]
fn a_malformed_or_unsupported_catalogue_is_required() {
    let t = project().write();
    let ctest = t.build.join("ctest.json");
    let orig = std::fs::read(&ctest).unwrap();
    common::write_keep_mtime(&ctest, &orig[..orig.len() / 2]);
    assert_required(&t.run(&["app/app.h"], &[]), "CTEST_MALFORMED");
    common::write_keep_mtime(&ctest, &orig);
    edit_json(&ctest, |v| v["version"]["major"] = 2.into());
    assert_required(&t.run(&["app/app.h"], &[]), "CTEST_UNSUPPORTED_VERSION");
}

#[test]
fn a_duplicate_or_empty_test_name_is_required() {
    let t = project().write();
    let ctest = t.build.join("ctest.json");
    let orig = std::fs::read(&ctest).unwrap();
    edit_json(&ctest, |v| {
        let first = v["tests"][0].clone();
        v["tests"].as_array_mut().unwrap().push(first);
    });
    assert_required(&t.run(&["app/app.h"], &[]), "CTEST_DUPLICATE_NAME");
    common::write_keep_mtime(&ctest, &orig);
    edit_json(&ctest, |v| v["tests"][0]["name"] = "".into());
    assert_required(&t.run(&["app/app.h"], &[]), "CTEST_EMPTY_NAME");
}

#[test]
fn a_test_without_a_command_is_the_full_suite() {
    let t = project().write();
    edit_json(&t.build.join("ctest.json"), |v| {
        v["tests"][0]["command"] = serde_json::json!([])
    });
    assert_full_suite(&t.run(&["app/app.h"], &[]), "TEST_COMMAND_MISSING");
}
