//! The core integration scenarios on real Ninja and Ninja Multi-Config builds
//! of `fixtures/cmake-project`, each compared with the same change on the Unix
//! Makefiles build: the same exit code, the same stdout names and the same
//! reason codes (except where the contract gives each generator its own code:
//! missing evidence is `DEP_COVERAGE_INCOMPLETE` for Makefiles and
//! `DEPS_LOG_MISSING` for Ninja).
//!
//! Each tree is built once per test binary (`OnceLock`). Scenarios that write
//! into a shared tree (a future mtime, an untracked file, a corrupted copy of
//! the deps log) hold [`LOCK`] for writing and undo their change; every other
//! scenario holds it for reading.
//!
//! cmake, ninja, g++ and make are required; a missing one fails the test with
//! the apt package to install (`cmake`, `ninja-build`, `g++`, `make`).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

const CORE_HPP: &str = "libs/core/include/core/core.hpp";
const CHECKSUM_CPP: &str = "libs/objs/src/checksum.cpp";
const STRINGS_HPP: &str = "libs/util/include/util/strings.hpp";
const VERSION_HPP: &str = "libs/base/include/base/version.hpp";

/// Read: a scenario that only runs the binary. Write: one that changes a shared tree.
static LOCK: RwLock<()> = RwLock::new(());

fn read() -> RwLockReadGuard<'static, ()> {
    LOCK.read().unwrap_or_else(|e| e.into_inner())
}

fn write() -> RwLockWriteGuard<'static, ()> {
    LOCK.write().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------- trees

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gen {
    Makefiles,
    Ninja,
    Multi,
}

/// One built tree: `catalogue` maps a configuration (`None`: a single-config
/// build, or a Multi-Config catalogue listed without `-C`) to its `ctest.json`.
struct Tree {
    gen: Gen,
    b: Built,
    catalogues: Vec<(Option<&'static str>, PathBuf)>,
}

/// One selection: a tree, and for Multi-Config the `--config` (and catalogue) to use.
#[derive(Clone, Copy)]
struct Sel {
    tree: &'static Tree,
    config: Option<&'static str>,
}

impl Sel {
    fn label(&self) -> String {
        match self.config {
            Some(c) => format!("{:?} --config {c}", self.tree.gen),
            None => format!("{:?}", self.tree.gen),
        }
    }
}

fn require_tools() {
    common::require(
        "tests/ninja.rs",
        &[
            ("cmake", "cmake"),
            ("ctest", "cmake"),
            ("ninja", "ninja-build"),
            ("g++", "g++"),
            ("make", "make"),
        ],
    );
}

use common::run_ok;

/// The Ninja recipe: File API queries, configure, build (each configuration
/// for Multi-Config), catalogues, and the dep list (`.d` files, then the deps log).
fn build_ninja(gen: Gen, cmake_args: &[&str]) -> Tree {
    require_tools();
    let started = Instant::now();
    let dir = scratch_dir("d2t-ninja-it-");
    let root = dir.path().to_path_buf();
    let src = root.join("src");
    let build = root.join("build");
    copy_fixture(&src);
    let q = build.join(".cmake/api/v1/query");
    std::fs::create_dir_all(&q).unwrap();
    for kind in ["codemodel-v2", "cmakeFiles-v1", "toolchains-v1", "cache-v2"] {
        std::fs::write(q.join(kind), "").unwrap();
    }
    let mut cfg = Command::new("cmake");
    cfg.arg("-S").arg(&src).arg("-B").arg(&build);
    let configs: &[&'static str] = match gen {
        Gen::Ninja => {
            cfg.args(["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug"]);
            &[]
        }
        Gen::Multi => {
            cfg.args(["-G", "Ninja Multi-Config"]);
            &["Debug", "Release"]
        }
        Gen::Makefiles => unreachable!("Makefiles trees come from common::build_fixture"),
    };
    run_ok(cfg.args(cmake_args));
    let mut catalogues = Vec::new();
    if configs.is_empty() {
        run_ok(Command::new("cmake").arg("--build").arg(&build).arg("-j2"));
    } else {
        for c in configs {
            run_ok(
                Command::new("cmake")
                    .arg("--build")
                    .arg(&build)
                    .args(["--config", c, "-j2"]),
            );
        }
    }
    let list = |c: Option<&'static str>| {
        let mut cmd = Command::new("ctest");
        cmd.current_dir(&build);
        if let Some(c) = c {
            cmd.args(["-C", c]);
        }
        let json = run_ok(cmd.arg("--show-only=json-v1"));
        let path = match c {
            Some(c) => build.join(format!("ctest-{c}.json")),
            None => build.join("ctest.json"),
        };
        std::fs::write(&path, json).unwrap();
        (c, path)
    };
    // Without -C (the only catalogue of a single-config build; the wrong one for Multi-Config).
    catalogues.push(list(None));
    for c in configs {
        catalogues.push(list(Some(c)));
    }
    let mut deps: Vec<String> = walkdir::WalkDir::new(&build)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".d") && p.contains("/CMakeFiles/") && p.contains(".dir/"))
        .collect();
    deps.push(build.join(".ninja_deps").display().to_string());
    std::fs::write(build.join("deps.txt"), deps.join("\n") + "\n").unwrap();
    eprintln!(
        "tests/ninja.rs: built {gen:?} {cmake_args:?} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Tree {
        gen,
        b: Built::from_parts(dir, root, src, build),
        catalogues,
    }
}

fn build_makefiles(cmake_args: &[&str]) -> Tree {
    require_tools();
    let started = Instant::now();
    let b = build_fixture(cmake_args);
    eprintln!(
        "tests/ninja.rs: built Makefiles {cmake_args:?} in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let catalogues = vec![(None, b.ctest_json())];
    Tree {
        gen: Gen::Makefiles,
        b,
        catalogues,
    }
}

fn makefiles() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| build_makefiles(&[]))
}
fn ninja() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| build_ninja(Gen::Ninja, &[]))
}
fn multi() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| build_ninja(Gen::Multi, &[]))
}
fn makefiles_wrapper() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| build_makefiles(&["-DD2T_WITH_WRAPPER=ON"]))
}
fn ninja_wrapper() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| build_ninja(Gen::Ninja, &["-DD2T_WITH_WRAPPER=ON"]))
}
fn multi_wrapper() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| build_ninja(Gen::Multi, &["-DD2T_WITH_WRAPPER=ON"]))
}

/// Every Ninja selection of a pair of trees: Ninja, Multi-Config Debug and Release.
fn ninja_sels(n: &'static Tree, m: &'static Tree) -> [Sel; 3] {
    [
        Sel {
            tree: n,
            config: None,
        },
        Sel {
            tree: m,
            config: Some("Debug"),
        },
        Sel {
            tree: m,
            config: Some("Release"),
        },
    ]
}

fn make_sel(t: &'static Tree) -> Sel {
    Sel {
        tree: t,
        config: None,
    }
}

// ---------------------------------------------------------------- runs

impl Tree {
    fn catalogue(&self, config: Option<&str>) -> &Path {
        &self
            .catalogues
            .iter()
            .find(|(c, _)| *c == config)
            .unwrap_or_else(|| panic!("{:?} has no catalogue for {config:?}", self.gen))
            .1
    }
}

/// Runs the binary on `sel` with the catalogue of its configuration, `--config`
/// for Multi-Config, the given dep list (default `BUILD/deps.txt`) and changes.
fn run_with(sel: Sel, catalogue: &Path, deps: Option<&Path>, changed: &[&str]) -> Run {
    run_bin(&args_for(sel, catalogue, deps, changed), None)
}

/// The arguments of [`run_with`].
fn args_for(sel: Sel, catalogue: &Path, deps: Option<&Path>, changed: &[&str]) -> Vec<String> {
    let b = &sel.tree.b;
    let mut args: Vec<String> = vec![
        "--source-dir".into(),
        b.src.display().to_string(),
        "--build-dir".into(),
        b.build.display().to_string(),
        "--ctest-json".into(),
        catalogue.display().to_string(),
        "--dep-list".into(),
        deps.unwrap_or(&b.deps()).display().to_string(),
    ];
    if let Some(c) = sel.config {
        args.push("--config".into());
        args.push(c.into());
    }
    for c in changed {
        args.push("--changed".into());
        args.push((*c).into());
    }
    args
}

fn run(sel: Sel, deps: Option<&Path>, changed: &[&str]) -> Run {
    run_with(sel, sel.tree.catalogue(sel.config), deps, changed)
}

fn no_panic(sel: Sel, r: &Run) {
    assert!(
        r.code != 70 && !r.stderr.contains("panicked"),
        "{}: internal error\n{}",
        sel.label(),
        sel.tree.b.transcript(r)
    );
}

/// The same selection: exit code, state, stdout names and reason codes.
fn assert_same(scenario: &str, (ms, m): (Sel, &Run), (ns, n): (Sel, &Run)) {
    no_panic(ms, m);
    no_panic(ns, n);
    let key = |r: &Run| (r.code, r.state().to_owned(), r.stdout.clone(), r.codes());
    assert!(
        key(m) == key(n),
        "{scenario}: {} and {} select differently\n=== {} ===\n{}\n=== {} ===\n{}",
        ms.label(),
        ns.label(),
        ms.label(),
        ms.tree.b.transcript(m),
        ns.label(),
        ns.tree.b.transcript(n)
    );
}

fn assert_subset(sel: Sel, r: &Run, want: &[&str]) {
    no_panic(sel, r);
    assert_eq!(
        (r.code, r.state(), r.names()),
        (0, "SUBSET_SELECTED", want.to_vec()),
        "{}\n{}",
        sel.label(),
        sel.tree.b.transcript(r)
    );
}

fn assert_full_suite(sel: Sel, r: &Run, code: &str, names: &[&str]) {
    no_panic(sel, r);
    assert_eq!(
        (r.code, r.state(), r.names()),
        (3, "FULL_SUITE_SELECTED", names.to_vec()),
        "{}\n{}",
        sel.label(),
        sel.tree.b.transcript(r)
    );
    assert!(
        r.codes().iter().any(|c| c == code),
        "{}: expected reason {code}, got {:?}\n{}",
        sel.label(),
        r.codes(),
        sel.tree.b.transcript(r)
    );
}

/// Runs `changed` on Makefiles and on every Ninja selection; each must give
/// `check`'s verdict and the same selection as Makefiles.
fn same_everywhere(scenario: &str, changed: &[&str], check: impl Fn(Sel, &Run)) -> Vec<Run> {
    let _g = read();
    let ms = make_sel(makefiles());
    let m = run(ms, None, changed);
    check(ms, &m);
    let mut runs = Vec::new();
    for ns in ninja_sels(ninja(), multi()) {
        let n = run(ns, None, changed);
        assert_same(scenario, (ms, &m), (ns, &n));
        check(ns, &n);
        runs.push(n);
    }
    runs
}

// ---------------------------------------------------------------- subsets

#[test]
fn header_change_selects_the_same_subset_with_chains_through_the_deps_log() {
    let runs = same_everywhere("header change", &[CORE_HPP], |s, r| {
        assert_subset(s, r, CORE_SELECTED)
    });
    for (n, objdir) in runs.iter().zip(["", "Debug/", "Release/"]) {
        let chains: Vec<&str> = n
            .stderr
            .lines()
            .filter(|l| l.starts_with("chain "))
            .collect();
        assert_eq!(chains.len(), CORE_SELECTED.len(), "{}", n.stderr);
        for l in &chains {
            assert!(
                l.contains(" -> depfile .ninja_deps record "),
                "chain not through the deps log: {l}\n{}",
                n.stderr
            );
        }
        let want = format!(
            "chain core.add: {CORE_HPP} -> depfile .ninja_deps record \
             tests/CMakeFiles/test_core.dir/{objdir}test_core.cpp.o -> unit tests/test_core.cpp \
             -> target test_core -> test core.add"
        );
        assert!(n.stderr.contains(&want), "want {want}\n{}", n.stderr);
    }
}

#[test]
fn library_source_change_selects_the_same_subset() {
    let want = [
        "net.decode",
        "net.encode",
        "objs.checksum",
        "objs.sum[0-9]+",
        "tool.roundtrip",
    ];
    let runs = same_everywhere("library source change", &[CHECKSUM_CPP], |s, r| {
        assert_subset(s, r, &want)
    });
    for n in &runs {
        assert!(
            n.stderr
                .contains("-> target objs -> target net -> target datagen -> test tool.roundtrip"),
            "{}",
            n.stderr
        );
    }
}

// ---------------------------------------------------------------- fallbacks

#[test]
fn cmakelists_change_is_build_config_everywhere() {
    same_everywhere(
        "CMakeLists change",
        &["libs/core/CMakeLists.txt"],
        |s, r| assert_full_suite(s, r, "CHANGE_BUILD_CONFIG", ALL_TESTS),
    );
}

#[test]
fn unknown_path_is_change_unknown_everywhere() {
    same_everywhere("unknown path README.md", &["README.md"], |s, r| {
        assert_full_suite(s, r, "CHANGE_UNKNOWN", ALL_TESTS)
    });
}

/// Removes the files it was given when dropped (also on a failed assertion).
struct Cleanup(Vec<PathBuf>);
impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[test]
fn new_untracked_file_is_change_unknown_everywhere() {
    let _g = write();
    let trees = [makefiles(), ninja(), multi()];
    let name = "untracked-new-file.txt";
    let _c = Cleanup(trees.iter().map(|t| t.b.src.join(name)).collect());
    for t in trees {
        std::fs::write(t.b.src.join(name), "new\n").unwrap();
    }
    let ms = make_sel(trees[0]);
    let m = run(ms, None, &[name]);
    assert_full_suite(ms, &m, "CHANGE_UNKNOWN", ALL_TESTS);
    for ns in ninja_sels(trees[1], trees[2]) {
        let n = run(ns, None, &[name]);
        assert_same("new untracked file", (ms, &m), (ns, &n));
        assert_full_suite(ns, &n, "CHANGE_UNKNOWN", ALL_TESTS);
    }
}

#[test]
fn escaping_path_is_path_escapes_root_everywhere() {
    same_everywhere("escaping path", &["../outside.txt"], |s, r| {
        assert_full_suite(s, r, "PATH_ESCAPES_ROOT", ALL_TESTS)
    });
}

/// Puts a file's modification time back when dropped.
struct RestoreMtime(Vec<(PathBuf, filetime::FileTime)>);
impl Drop for RestoreMtime {
    fn drop(&mut self) {
        for (p, t) in &self.0 {
            let _ = filetime::set_file_mtime(p, *t);
        }
    }
}

#[test]
fn stale_evidence_is_dep_evidence_stale_everywhere() {
    let _g = write();
    let trees = [makefiles(), ninja(), multi()];
    let headers: Vec<PathBuf> = trees.iter().map(|t| t.b.src.join(VERSION_HPP)).collect();
    let _restore = RestoreMtime(
        headers
            .iter()
            .map(|h| {
                let m = std::fs::metadata(h).unwrap();
                (
                    h.clone(),
                    filetime::FileTime::from_last_modification_time(&m),
                )
            })
            .collect(),
    );
    for h in &headers {
        touch_future(h, 5);
    }
    let ms = make_sel(trees[0]);
    let m = run(ms, None, &[CORE_HPP]);
    assert_full_suite(ms, &m, "DEP_EVIDENCE_STALE", ALL_TESTS);
    one_line_for_the_touched_header(&m, "depfile");
    for ns in ninja_sels(trees[1], trees[2]) {
        let n = run(ns, None, &[CORE_HPP]);
        assert_same("stale evidence", (ms, &m), (ns, &n));
        assert_full_suite(ns, &n, "DEP_EVIDENCE_STALE", ALL_TESTS);
        assert!(
            n.stderr
                .contains(&format!("{VERSION_HPP} is newer than .ninja_deps record ")),
            "{}",
            n.stderr
        );
        one_line_for_the_touched_header(&n, "record");
    }
}

/// One touched header is one reason, however many units list it (the fixture
/// has several): "H is newer than E and N more <noun>s that list it".
fn one_line_for_the_touched_header(r: &Run, noun: &str) {
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("reason DEP_EVIDENCE_STALE:"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains(&format!("{VERSION_HPP} is newer than ")),
        "{}",
        lines[0]
    );
    let (_, tail) = lines[0].rsplit_once(" and ").unwrap_or(("", ""));
    let more = tail
        .strip_suffix(&format!(" more {noun}s that list it"))
        .or_else(|| tail.strip_suffix(&format!(" more {noun} that lists it")))
        .and_then(|n| n.parse::<usize>().ok());
    assert!(more.is_some_and(|n| n >= 1), "{}", lines[0]);
}

#[test]
fn missing_evidence_is_each_generators_own_code() {
    let _g = read();
    // Makefiles: one depfile left out of the list (m19).
    let ms = make_sel(makefiles());
    let m_deps = ms.tree.b.root.join("deps-without-test_header.txt");
    let all = std::fs::read_to_string(ms.tree.b.deps()).unwrap();
    let kept: Vec<&str> = all
        .lines()
        .filter(|l| !l.contains("test_header.dir"))
        .collect();
    std::fs::write(&m_deps, kept.join("\n") + "\n").unwrap();
    let m = run(ms, Some(&m_deps), &[CORE_HPP]);
    assert_full_suite(ms, &m, "DEP_COVERAGE_INCOMPLETE", ALL_TESTS);
    // Ninja: the recipe's dep list without its `.ninja_deps` line (outside the build
    // tree, so it can be written while other scenarios read the tree).
    let mut failures = Vec::new();
    for ns in ninja_sels(ninja(), multi()) {
        let b = &ns.tree.b;
        let deps = b.root.join(format!(
            "deps-without-log-{}.txt",
            ns.config.unwrap_or("single")
        ));
        let all = std::fs::read_to_string(b.deps()).unwrap();
        let kept: String = all
            .lines()
            .filter(|l| !l.ends_with("/.ninja_deps"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&deps, kept).unwrap();
        let n = run(ns, Some(&deps), &[CORE_HPP]);
        no_panic(ns, &n);
        let ok = n.code == m.code
            && n.state() == m.state()
            && n.stdout == m.stdout
            && n.codes().iter().any(|c| c == "DEPS_LOG_MISSING")
            && root_cause_then_one_coverage_line(&n);
        if !ok {
            failures.push(format!(
                "=== {} (want exit 3, every test, DEPS_LOG_MISSING) ===\n{}",
                ns.label(),
                b.transcript(&n)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "missing evidence: a Ninja dep list without .ninja_deps\n{}",
        failures.join("\n")
    );
}

/// A dep list that gives no evidence is the root cause: it comes first, and the
/// units it leaves without evidence are one line, not one per unit.
fn root_cause_then_one_coverage_line(r: &Run) -> bool {
    let reasons: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("reason "))
        .collect();
    let coverage: Vec<&&str> = reasons
        .iter()
        .filter(|l| l.starts_with("reason DEP_COVERAGE_INCOMPLETE:"))
        .collect();
    let first_is_list = reasons.first().is_some_and(|l| {
        l.starts_with("reason DEPS_LOG_MISSING:") || l.starts_with("reason DEP_LIST_UNREADABLE:")
    });
    first_is_list
        && coverage.len() == 1
        && coverage[0].contains(" compiled sources in scope have no dependency evidence, because of the dependency list (above); the first: ")
}

#[test]
fn wrapper_test_is_test_command_unmapped_everywhere() {
    let _g = read();
    let ms = make_sel(makefiles_wrapper());
    let want: Vec<&str> = {
        let mut v = ALL_TESTS.to_vec();
        v.push("wrapped.env");
        v.sort();
        v
    };
    for changed in [STRINGS_HPP, CORE_HPP] {
        let m = run(ms, None, &[changed]);
        assert_full_suite(ms, &m, "TEST_COMMAND_UNMAPPED", &want);
        assert!(m.stderr.contains("wrapped.env"), "{}", m.stderr);
        for ns in ninja_sels(ninja_wrapper(), multi_wrapper()) {
            let n = run(ns, None, &[changed]);
            assert_same(&format!("wrapper test, {changed}"), (ms, &m), (ns, &n));
            assert_full_suite(ns, &n, "TEST_COMMAND_UNMAPPED", &want);
            assert!(n.stderr.contains("wrapped.env"), "{}", n.stderr);
        }
    }
}

// ---------------------------------------------------------------- Multi-Config catalogues

#[test]
fn multi_config_catalogue_listed_without_c_is_full_suite_required() {
    let _g = read();
    let t = multi();
    let noc = t.catalogue(None).to_path_buf();
    for config in [Some("Debug"), Some("Release"), None] {
        let sel = Sel { tree: t, config };
        let r = run_with(sel, &noc, None, &[CORE_HPP]);
        no_panic(sel, &r);
        let label = format!("{} (catalogue without -C)", sel.label());
        assert_eq!(
            (r.code, r.state(), r.stdout.as_str()),
            (4, "FULL_SUITE_REQUIRED", ""),
            "{label}\n{}",
            t.b.transcript(&r)
        );
        assert!(
            r.codes()
                .iter()
                .any(|c| c == "CTEST_CONFIG_MISSING" || c == "CTEST_CATALOGUE_EMPTY"),
            "{label}: {:?}\n{}",
            r.codes(),
            t.b.transcript(&r)
        );
    }
}

/// A catalogue listed for one configuration and `--config` naming the other: the
/// full suite, with the mismatch said once and first (a setup error, exit 5
/// with `--fail-on-setup-error`), not as one line per test followed by every
/// test's command being "unmapped" (it runs the other configuration's artifact).
#[test]
fn multi_config_catalogue_of_the_other_configuration_is_one_setup_reason() {
    let _g = read();
    let t = multi();
    for (listed, chosen) in [("Release", "Debug"), ("Debug", "Release")] {
        let sel = Sel {
            tree: t,
            config: Some(chosen),
        };
        let label = format!("catalogue of {listed}, --config {chosen}");
        let r = run_with(sel, t.catalogue(Some(listed)), None, &[CORE_HPP]);
        no_panic(sel, &r);
        assert_eq!(
            (r.code, r.state()),
            (3, "FULL_SUITE_SELECTED"),
            "{label}\n{}",
            t.b.transcript(&r)
        );
        let reasons: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("reason "))
            .collect();
        let want = format!(
            "reason TEST_CONFIG_MISMATCH: the catalogue was listed for configuration {listed:?} ("
        );
        assert!(
            reasons.first().is_some_and(|l| l.starts_with(&want)),
            "{label}: {reasons:#?}"
        );
        assert!(
            reasons[0].ends_with(&format!("codemodel is {chosen:?}")),
            "{label}: {reasons:#?}"
        );
        assert_eq!(
            reasons.iter().filter(|l| l.contains("TEST_")).count(),
            1,
            "{label}: one reason about the tests, not one per test: {reasons:#?}"
        );
        let names = std::fs::read_to_string(t.catalogue(Some(listed))).unwrap();
        let n = r.stdout.lines().count();
        assert!(
            n > 1
                && r.stdout
                    .lines()
                    .all(|l| names.contains(&format!("\"{l}\""))),
            "{label}: {}",
            r.stdout
        );
    }
    // The root cause is the setup: --fail-on-setup-error makes it exit 5.
    let b = &t.b;
    let sel = Sel {
        tree: t,
        config: Some("Debug"),
    };
    let mut args = args_for(sel, t.catalogue(Some("Release")), None, &[CORE_HPP]);
    args.push("--fail-on-setup-error".into());
    let r = run_bin(&args, None);
    assert_eq!(
        (r.code, r.state()),
        (5, "SETUP_ERROR"),
        "{}",
        b.transcript(&r)
    );
    assert_eq!(
        r.stderr.lines().nth(1),
        Some("FULL_SUITE_SELECTED"),
        "{}",
        b.transcript(&r)
    );
}

// ---------------------------------------------------------------- a corrupted deps log

/// The byte offset of the first path record's checksum in a deps log.
fn first_checksum_offset(log: &[u8]) -> usize {
    assert_eq!(&log[..12], b"# ninjadeps\n");
    let head = u32::from_le_bytes(log[16..20].try_into().unwrap());
    assert_eq!(head >> 31, 0, "the first record of a fresh log is a path");
    let size = (head & 0x7fff_ffff) as usize;
    20 + size - 4
}

#[test]
fn corrupted_deps_log_is_deps_log_malformed_never_a_subset() {
    let _g = write();
    for ns in ninja_sels(ninja(), multi()) {
        let b = &ns.tree.b;
        let log = std::fs::read(b.build.join(".ninja_deps")).unwrap();
        let truncated = log[..log.len() - 3].to_vec(); // cut inside the last record
        let mut flipped = log.clone();
        flipped[first_checksum_offset(&log)] ^= 0x01;
        for (what, bytes) in [("truncated", truncated), ("checksum", flipped)] {
            // A private copy of the log (recognised by its header, not its name),
            // listed instead of BUILD/.ninja_deps.
            let copy = b.build.join(format!("corrupt-{what}.ninja_deps"));
            let deps = b.root.join(format!("deps-corrupt-{what}.txt"));
            let _c = Cleanup(vec![copy.clone(), deps.clone()]);
            std::fs::write(&copy, &bytes).unwrap();
            let all = std::fs::read_to_string(b.deps()).unwrap();
            std::fs::write(
                &deps,
                all.replace(
                    &b.build.join(".ninja_deps").display().to_string(),
                    &copy.display().to_string(),
                ),
            )
            .unwrap();
            let r = run(ns, Some(&deps), &[CORE_HPP]);
            assert_full_suite(ns, &r, "DEPS_LOG_MALFORMED", ALL_TESTS);
            assert!(
                r.stderr.contains(&format!("corrupt-{what}.ninja_deps")),
                "{}: {what}\n{}",
                ns.label(),
                b.transcript(&r)
            );
        }
    }
}

// ------------------------------------------- the newest ninja from PyPI (1.13+)

/// `target/cmake-venvs/ninja-newest/bin/ninja`, installed by `.ci/cmake-versions.sh`
/// (run here when missing; a failure names what to install).
fn newest_ninja() -> PathBuf {
    let root = repo_root();
    let ninja = root.join("target/cmake-venvs/ninja-newest/bin/ninja");
    if !root
        .join("target/cmake-venvs/ninja-newest/.complete")
        .exists()
    {
        let out = Command::new("bash")
            .arg(root.join(".ci/cmake-versions.sh"))
            .arg("newest")
            .current_dir(&root)
            .output()
            .expect("run bash .ci/cmake-versions.sh");
        assert!(
            out.status.success(),
            "installing the newest ninja from PyPI failed (needs python3, python3-venv and PyPI): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        ninja.is_file(),
        "{} missing after .ci/cmake-versions.sh",
        ninja.display()
    );
    ninja
}

fn ninja_newest_tree() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| {
        let ninja = newest_ninja();
        let version = String::from_utf8(run_ok(Command::new(&ninja).arg("--version"))).unwrap();
        let (major, minor) = {
            let mut p = version.trim().split('.');
            (
                p.next().and_then(|x| x.parse::<u32>().ok()).unwrap_or(0),
                p.next().and_then(|x| x.parse::<u32>().ok()).unwrap_or(0),
            )
        };
        assert!(
            (major, minor) >= (1, 13),
            "want ninja >= 1.13, got {version}"
        );
        let arg = format!("-DCMAKE_MAKE_PROGRAM={}", ninja.display());
        let arg: &'static str = Box::leak(arg.into_boxed_str());
        build_ninja(Gen::Ninja, &[arg])
    })
}

#[test]
fn the_newest_ninja_gives_the_same_selections_as_makefiles() {
    let _g = read();
    let ms = make_sel(makefiles());
    let ns = make_sel(ninja_newest_tree());
    for changed in [
        &[CORE_HPP][..],
        &["libs/objs/src/checksum.cpp"][..],
        &["libs/core/CMakeLists.txt"][..],
        &["README.md"][..],
    ] {
        let m = run(ms, None, changed);
        let n = run(ns, None, changed);
        assert_same(&format!("ninja 1.13 {changed:?}"), (ms, &m), (ns, &n));
    }
    let n = run(ns, None, &[CORE_HPP]);
    assert!(
        n.stderr.contains(" -> depfile .ninja_deps record "),
        "{}",
        n.stderr
    );
}

// ---------------------------------------------------------------- flags changed, no build after

/// A scratch Ninja build of [`FLAGS_PROJECT`], with the configuration to
/// build, list and select (Multi-Config).
struct FlagsBuild {
    b: Built,
    config: Option<&'static str>,
}

impl FlagsBuild {
    fn new(gen: &str, config: Option<&'static str>, make_program: Option<PathBuf>) -> FlagsBuild {
        require_tools();
        let dir = scratch_dir("d2t-ninja-flags-");
        let root = dir.path().to_path_buf();
        let (src, build) = (root.join("src"), root.join("build"));
        write_files(&src, FLAGS_PROJECT);
        let q = build.join(".cmake/api/v1/query");
        std::fs::create_dir_all(&q).unwrap();
        for kind in ["codemodel-v2", "cmakeFiles-v1"] {
            std::fs::write(q.join(kind), "").unwrap();
        }
        let mut cfg = Command::new("cmake");
        cfg.arg("-S")
            .arg(&src)
            .arg("-B")
            .arg(&build)
            .args(["-G", gen]);
        if config.is_none() {
            cfg.arg("-DCMAKE_BUILD_TYPE=Debug");
        }
        if let Some(n) = &make_program {
            cfg.arg(format!("-DCMAKE_MAKE_PROGRAM={}", n.display()));
        }
        run_ok(&mut cfg);
        let fb = FlagsBuild {
            b: Built::from_parts(dir, root, src, build),
            config,
        };
        fb.build(None);
        fb.relist();
        let deps = fb.b.build.join(".ninja_deps").display().to_string();
        std::fs::write(fb.b.deps(), deps + "\n").unwrap();
        fb
    }

    /// `cmake --build` (of one target, or all).
    fn build(&self, target: Option<&str>) {
        let mut c = Command::new("cmake");
        c.arg("--build").arg(&self.b.build);
        if let Some(cfg) = self.config {
            c.args(["--config", cfg]);
        }
        if let Some(t) = target {
            c.args(["--target", t]);
        }
        run_ok(&mut c);
    }

    fn relist(&self) {
        let mut c = Command::new("ctest");
        c.current_dir(&self.b.build);
        if let Some(cfg) = self.config {
            c.args(["-C", cfg]);
        }
        let json = run_ok(c.arg("--show-only=json-v1"));
        std::fs::write(self.b.ctest_json(), json).unwrap();
    }

    fn reconfigure(&self, flags: &str) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut c = Command::new("cmake");
        c.arg(format!("-DCMAKE_CXX_FLAGS={flags}"))
            .arg(&self.b.build);
        run_ok(&mut c);
        self.relist();
    }

    fn results(&self) -> std::collections::BTreeMap<String, bool> {
        suite_results_for(&self.b.build, self.config)
    }

    fn run(&self, changed: &str) -> Run {
        let extra: Vec<&str> = self.config.iter().flat_map(|c| ["--config", *c]).collect();
        self.b.run(&[changed], &extra)
    }
}

/// Ninja keeps no flags file: a configure that changes the flags rewrites
/// build.ninja, and ninja compiles again every output whose command's hash is
/// not the one `.ninja_log` holds. Configured with -DUSE_B after the build and
/// not built again (or only t_other built), core's deps record still lists
/// a.hpp, so a change to b.hpp looked like t_other's alone; real ctest shows
/// t_core flip once ninja compiles core.cpp under the new flags. On ninja 1.11
/// (log v5, MurmurHash64A), the newest ninja (1.13: log v7, rapidhash) and
/// Ninja Multi-Config (build-Debug.ninja).
#[test]
fn ninja_flags_changed_by_a_configure_without_a_build_make_the_evidence_stale() {
    let _g = read();
    let setups = [
        ("Ninja", None, None),
        ("Ninja", None, Some(newest_ninja())),
        ("Ninja Multi-Config", Some("Debug"), None),
    ];
    for (gen, config, make_program) in setups {
        let fb = FlagsBuild::new(gen, config, make_program.clone());
        let label = format!("{gen} {config:?} {make_program:?}");
        let base = fb.results();
        let log = std::fs::read_to_string(fb.b.build.join(".ninja_log")).unwrap();
        let want = if make_program.is_some() {
            "# ninja log v7\n"
        } else {
            "# ninja log v5\n"
        };
        assert!(
            log.starts_with(want),
            "{label}: {}",
            &log[..20.min(log.len())]
        );
        // Fresh evidence: the exact subset, both commands as the log says.
        let r = fb.run("b.hpp");
        assert_eq!(
            (r.code, r.names()),
            (0, vec!["t_other"]),
            "{label}\n{}",
            fb.b.transcript(&r)
        );

        std::fs::write(fb.b.src.join("b.hpp"), "#pragma once\n#define VALUE 2\n").unwrap();
        fb.build(None);
        fb.reconfigure("-DUSE_B");
        let stale = fb.run("b.hpp");
        // Only t_other built after the configure: core's objects are still stale.
        fb.build(Some("t_other"));
        fb.relist();
        let partial = fb.run("b.hpp");
        fb.build(None);
        let head = fb.results();
        assert_eq!(head.get("t_core"), Some(&false), "{label}: {head:?}");
        for (what, r) in [("no build", &stale), ("t_other built", &partial)] {
            assert_oracle(r, &base, &head);
            assert_eq!(r.code, 3, "{label} ({what})\n{}", fb.b.transcript(r));
            assert_eq!(
                r.codes(),
                ["DEP_EVIDENCE_STALE"],
                "{label} ({what})\n{}",
                r.stderr
            );
            assert!(
                r.stderr.contains("of target \"core\": its command in the manifest is not the one .ninja_log recorded"),
                "{label} ({what})\n{}",
                r.stderr
            );
        }
        assert!(
            !partial.stderr.contains("target \"t_other\""),
            "{label}: t_other was built under the new flags\n{}",
            partial.stderr
        );
        // Built under the new flags: current evidence, and b.hpp reaches core.
        fb.relist();
        let r = fb.run("b.hpp");
        assert_oracle(&r, &base, &head);
        assert_eq!(
            (r.code, r.names()),
            (0, vec!["t_core", "t_other"]),
            "{label}\n{}",
            fb.b.transcript(&r)
        );
        // A configure that changes nothing keeps the subset (same commands).
        fb.reconfigure("-DUSE_B");
        let r = fb.run("b.hpp");
        assert_eq!(
            r.code,
            0,
            "{label}: a no-op configure\n{}",
            fb.b.transcript(&r)
        );
    }
}

/// The command audit compares the command ninja would run with the one it
/// logged. Real configurations that change how that command is spelled must
/// still compare equal, or every such build would fall back: response files
/// (`;rspfile=` content, CMAKE_NINJA_FORCE_RESPONSE_FILE), a compiler launcher
/// and a define with a quoted space. Same selections as the Makefiles build.
#[test]
fn response_files_launchers_and_quoted_flags_keep_the_ninja_subset() {
    let _g = read();
    static T: OnceLock<Tree> = OnceLock::new();
    let t = T.get_or_init(|| {
        build_ninja(
            Gen::Ninja,
            &[
                "-DCMAKE_NINJA_FORCE_RESPONSE_FILE=ON",
                "-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/env",
                "-DCMAKE_CXX_FLAGS=-DQUOTED=\"a b\"",
            ],
        )
    });
    let rules = std::fs::read_to_string(t.b.build.join("CMakeFiles/rules.ninja")).unwrap();
    assert!(
        rules.contains("rspfile_content"),
        "no response files:\n{rules}"
    );
    let ms = make_sel(makefiles());
    let ns = make_sel(t);
    for changed in [&[CORE_HPP][..], &["libs/objs/src/checksum.cpp"][..]] {
        let m = run(ms, None, changed);
        let n = run(ns, None, changed);
        assert_same(
            &format!("rsp, launcher, quotes {changed:?}"),
            (ms, &m),
            (ns, &n),
        );
        assert_eq!(n.code, 0, "{}", t.b.transcript(&n));
    }
}

// ---------------------------------------------------------------- issue 31: fewer steps

/// Issue 31, item 2: `--ctest-json` defaults to `BUILD/ctest.json` and the
/// dependency files are found in BUILD without `--dep-list`: a run with only
/// `--source-dir`, `--build-dir` and the change (plus, for Multi-Config, the
/// configuration and its catalogue) decides exactly as the full command line
/// does, on Unix Makefiles, Ninja and Ninja Multi-Config, for a subset, a
/// source change and a fallback. The found list is the listed one: a
/// missing `.d` is a gap as before (`DEP_COVERAGE_INCOMPLETE`).
#[test]
fn the_minimal_command_line_decides_as_the_full_one_on_every_generator() {
    let _g = read();
    let sels = [
        make_sel(makefiles()),
        make_sel(ninja()),
        Sel {
            tree: multi(),
            config: Some("Debug"),
        },
        Sel {
            tree: multi(),
            config: Some("Release"),
        },
    ];
    for sel in sels {
        for changed in [&[CORE_HPP][..], &[CHECKSUM_CPP], &["README.md"]] {
            let full = run(sel, None, changed);
            // Today's full command line without --dep-list, and without
            // --ctest-json where BUILD/ctest.json is the catalogue to use.
            let mut args = args_for(sel, sel.tree.catalogue(sel.config), None, changed);
            let mut drop = |flag: &str| {
                let i = args.iter().position(|a| a == flag).unwrap();
                args.drain(i..i + 2);
            };
            drop("--dep-list");
            if sel.config.is_none() {
                drop("--ctest-json");
            }
            let minimal = run_bin(&args, None);
            assert_same(
                &format!("minimal {changed:?}"),
                (sel, &minimal),
                (sel, &full),
            );
            assert_eq!(minimal.stderr, full.stderr, "{}", sel.label());
        }
    }
}
