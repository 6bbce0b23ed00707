//! Shared test harness: builds `fixtures/cmake-project` with the real CMake
//! toolchain in a temp dir and runs the real diff2test binary against it.
//!
//! A missing prerequisite (cmake, g++, make) fails the test with the package to
//! install; nothing is skipped silently.
#![allow(dead_code)]

pub mod evidence;
pub mod slots;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// What keeps a [`Built`]'s trees on disk.
enum Keep {
    Temp(tempfile::TempDir),
    Slot(slots::Lease),
}

/// A configured and built copy of the fixture.
pub struct Built {
    _dir: Keep,
    /// Temp root (redacted as `[ROOT]` in snapshots).
    pub root: PathBuf,
    /// Source dir (`ROOT/src`).
    pub src: PathBuf,
    /// Build dir (`ROOT/build`).
    pub build: PathBuf,
}

/// The result of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// First stderr line: the outcome state.
    pub fn state(&self) -> &str {
        self.stderr.lines().next().unwrap_or("")
    }
    /// The reason codes on stderr, sorted and de-duplicated.
    pub fn codes(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix("reason "))
            .filter_map(|l| l.split(':').next())
            .map(str::to_owned)
            .collect();
        v.sort();
        v.dedup();
        v
    }
    /// stdout lines.
    pub fn names(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Fails unless every `(tool, Debian package)` answers `--version`, naming
/// the package to install; `who` says which tests need it.
pub fn require(who: &str, tools: &[(&str, &str)]) {
    for (tool, pkg) in tools {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        assert!(
            ok,
            "`{tool}` is required by {who}: install it with `apt-get install {pkg}`"
        );
    }
}

/// Fails, naming the Debian packages, unless the fixture build tools are installed.
pub fn require_tools() {
    require(
        "the integration tests",
        &[
            ("cmake", "cmake"),
            ("ctest", "cmake"),
            ("g++", "g++"),
            ("make", "make"),
        ],
    );
}

/// Runs `cmd` and fails, with its output, unless it succeeds; returns its stdout.
pub fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n--- stdout ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A fresh temp dir under cargo's per-target scratch dir, so builds kept alive by
/// `shared()` (statics are never dropped) do not pile up in /tmp.
/// `CMAKE_CXX_COMPILER_ID` of a configured build (`GNU`, `Clang`, …), from
/// the `CMakeFiles/<version>/CMakeCXXCompiler.cmake` its configure wrote.
pub fn cxx_compiler_id(build: &Path) -> String {
    for e in std::fs::read_dir(build.join("CMakeFiles")).expect("BUILD/CMakeFiles") {
        let Ok(text) = std::fs::read_to_string(e.unwrap().path().join("CMakeCXXCompiler.cmake"))
        else {
            continue;
        };
        if let Some(id) = text.lines().find_map(|l| {
            l.strip_prefix("set(CMAKE_CXX_COMPILER_ID \"")
                .and_then(|r| r.strip_suffix("\")"))
        }) {
            return id.to_owned();
        }
    }
    panic!(
        "no CMAKE_CXX_COMPILER_ID under {}/CMakeFiles",
        build.display()
    )
}

pub fn scratch_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(scratch_root())
        .unwrap()
}

/// Where tests build their projects: outside this repository, so that each
/// project is a repository's top (or in none), as a standalone project is;
/// the tool takes a repository above the source dir as the project's scope
/// (`$D2T_TEST_SCRATCH`, default `$TMPDIR/diff2test-test-scratch`). A test of
/// a project in a subdirectory of its repository makes that repository.
pub fn scratch_root() -> std::path::PathBuf {
    let root = std::env::var_os("D2T_TEST_SCRATCH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("diff2test-test-scratch"));
    std::fs::create_dir_all(&root).unwrap();
    let mut up = Some(root.as_path());
    while let Some(d) = up {
        assert!(
            !d.join(".git").exists(),
            "test scratch {} lies in the git repository {}: set D2T_TEST_SCRATCH to a directory outside any repository",
            root.display(),
            d.display()
        );
        up = d.parent();
    }
    root
}

/// Copies the fixture sources to `dest`.
pub fn copy_fixture(dest: &Path) {
    copy_dir(&repo_root().join("fixtures/cmake-project"), dest);
}

/// Configures and builds `b.src` into `b.build` with `prepare-build.sh`.
pub fn prepare_with(b: &Built, cmake_args: &[&str]) {
    require_tools();
    run_ok(
        Command::new("bash")
            .arg(repo_root().join("fixtures/prepare-build.sh"))
            .arg(&b.src)
            .arg(&b.build)
            .args(cmake_args),
    );
}

/// [`prepare_with`] without extra arguments.
pub fn prepare(b: &Built) {
    prepare_with(b, &[])
}

/// A private, mutable build of the fixture, as `prepare-build.sh` makes it
/// with `cmake_args`: built once per slot ([`slots`]) and restored from its
/// pristine copy for every later caller (the same tree, at the same path).
pub fn build_fixture(cmake_args: &[&str]) -> Built {
    require_tools();
    let mut lease = slots::lease(&format!("fixture {cmake_args:?}"));
    let root = lease.work();
    let src = root.join("src");
    let build = root.join("build");
    if !lease.restored() {
        copy_fixture(&src);
        run_ok(
            Command::new("bash")
                .arg(repo_root().join("fixtures/prepare-build.sh"))
                .arg(&src)
                .arg(&build)
                .args(cmake_args),
        );
        lease.save(());
    }
    Built {
        _dir: Keep::Slot(lease),
        root,
        src,
        build,
    }
}

/// One shared default build for read-only scenarios (never mutate it).
pub fn shared() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| build_fixture(&[]))
}

/// One shared opaque build (wrapper, generated source, plugin) for read-only scenarios.
pub fn shared_opaque() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| build_fixture(&["-DD2T_WITH_ALL_OPAQUE=ON"]))
}

impl Built {
    /// Assembles a `Built` from a temp dir the caller laid out.
    pub fn from_parts(
        dir: tempfile::TempDir,
        root: PathBuf,
        src: PathBuf,
        build: PathBuf,
    ) -> Built {
        Built {
            _dir: Keep::Temp(dir),
            root,
            src,
            build,
        }
    }
    pub fn ctest_json(&self) -> PathBuf {
        self.build.join("ctest.json")
    }
    pub fn deps(&self) -> PathBuf {
        self.build.join("deps.txt")
    }
    pub fn reply_dir(&self) -> PathBuf {
        self.build.join(".cmake/api/v1/reply")
    }
    /// The reply file whose name starts with `prefix` (e.g. `target-core-`).
    pub fn reply_file(&self, prefix: &str) -> PathBuf {
        let mut hits: Vec<PathBuf> = std::fs::read_dir(self.reply_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
            .collect();
        hits.sort();
        assert_eq!(
            hits.len(),
            1,
            "expected one reply file starting with {prefix}: {hits:?}"
        );
        hits.pop().unwrap()
    }
    /// The standard arguments (everything but the change).
    pub fn base_args(&self) -> Vec<String> {
        tree_args(&self.src, &self.build)
    }
    /// Runs the binary with the standard arguments, `--changed` for each path, and `extra`.
    pub fn run(&self, changed: &[&str], extra: &[&str]) -> Run {
        run_on(&self.src, &self.build, changed, extra)
    }
    /// Replaces the temp root with `[ROOT]`.
    pub fn redact(&self, s: &str) -> String {
        s.replace(&self.root.display().to_string(), "[ROOT]")
    }
    /// exit code + stdout + stderr, redacted, for snapshots.
    pub fn transcript(&self, r: &Run) -> String {
        self.redact(&format!(
            "exit: {}\n--- stdout ---\n{}--- stderr ---\n{}",
            r.code, r.stdout, r.stderr
        ))
    }
    /// Edits a JSON file in place.
    pub fn edit_json(&self, path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
        edit_json(path, f)
    }
}

pub fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let meta = std::fs::metadata(path).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
    // Keep the original timestamp so freshness audits see an untouched reply.
    filetime::set_file_mtime(path, filetime::FileTime::from_last_modification_time(&meta)).unwrap();
}

/// Writes `bytes` to `path`, keeping its modification time.
pub fn write_keep_mtime(path: &Path, bytes: &[u8]) {
    let meta = std::fs::metadata(path).ok();
    std::fs::write(path, bytes).unwrap();
    if let Some(meta) = meta {
        filetime::set_file_mtime(path, filetime::FileTime::from_last_modification_time(&meta))
            .unwrap();
    }
}

/// Sets `path`'s mtime `secs` seconds into the future.
pub fn touch_future(path: &Path, secs: i64) {
    let now = filetime::FileTime::now();
    filetime::set_file_mtime(
        path,
        filetime::FileTime::from_unix_time(now.unix_seconds() + secs, 0),
    )
    .unwrap();
}

/// The arguments naming the evidence of the tree at `src` and `build`, as
/// `fixtures/prepare-build.sh` leaves it (`BUILD/ctest.json`, `BUILD/deps.txt`):
/// everything but the change.
pub fn tree_args(src: &Path, build: &Path) -> Vec<String> {
    vec![
        "--source-dir".into(),
        src.display().to_string(),
        "--build-dir".into(),
        build.display().to_string(),
        "--ctest-json".into(),
        build.join("ctest.json").display().to_string(),
        "--dep-list".into(),
        build.join("deps.txt").display().to_string(),
    ]
}

/// Runs the binary over that tree with `--changed` for each path, and `extra`.
pub fn run_on(src: &Path, build: &Path, changed: &[&str], extra: &[&str]) -> Run {
    let mut args = tree_args(src, build);
    for c in changed {
        args.push("--changed".into());
        args.push((*c).into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    run_bin(&args, None)
}

/// Runs the diff2test binary with `args` (and `stdin`).
pub fn run_bin(args: &[String], stdin: Option<&[u8]>) -> Run {
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    cmd.args(args);
    if let Some(s) = stdin {
        cmd.write_stdin(s.to_vec());
    }
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// What a change to `libs/core/include/core/core.hpp` selects (fixture README): 9 of 14.
pub const CORE_SELECTED: &[&str] = &[
    "core.add",
    "core.mul",
    "core.parse[neg]",
    "net.decode",
    "net.encode",
    "tool.roundtrip",
    "util.join",
    "util.spaced",
    "util.str+concat",
];

/// Names from the fixture README's tables.
pub const ALL_TESTS: &[&str] = &[
    "checker.selftest",
    "core.add",
    "core.mul",
    "core.parse[neg]",
    "header.macros",
    "header.version",
    "net.decode",
    "net.encode",
    "objs.checksum",
    "objs.sum[0-9]+",
    "tool.roundtrip",
    "util.join",
    "util.spaced",
    "util.str+concat",
];

/// Runs `git` in `dir` with a fixed identity (tests build real repositories
/// with the git CLI; diff2test itself never runs it). Returns trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("`git` is required by these tests: install it with `apt-get install git`");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Writes each `(path, text)` under `dir`, creating parent directories.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// Runs the whole suite of `build` with real ctest; test name -> passed (a
/// test that did not run counts as failed).
pub fn suite_results(build: &Path) -> std::collections::BTreeMap<String, bool> {
    suite_results_for(build, None)
}

/// [`suite_results`] of one configuration of a multi-config build (`ctest -C`).
pub fn suite_results_for(
    build: &Path,
    config: Option<&str>,
) -> std::collections::BTreeMap<String, bool> {
    let junit = build.join("d2t-suite.xml");
    let mut cmd = Command::new("ctest");
    cmd.current_dir(build);
    if let Some(c) = config {
        cmd.args(["-C", c]);
    }
    let out = cmd
        .args(["--timeout", "60", "--output-junit"])
        .arg(&junit)
        .output()
        .expect("run ctest (apt-get install cmake)");
    let xml = std::fs::read_to_string(&junit).unwrap_or_else(|e| {
        panic!(
            "ctest wrote no JUnit file {}: {e}\n{}",
            junit.display(),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    parse_junit(&xml)
}

/// The oracle: every test whose result differs between `base` and `head`
/// (or that exists on one side only) must be selected, unless the run fell
/// back (exit 3 or 4).
pub fn assert_oracle(
    r: &Run,
    base: &std::collections::BTreeMap<String, bool>,
    head: &std::collections::BTreeMap<String, bool>,
) {
    let changed: std::collections::BTreeSet<&String> = base
        .keys()
        .chain(head.keys())
        .filter(|n| base.get(*n) != head.get(*n))
        .collect();
    assert!(
        !changed.is_empty(),
        "the scenario flips no test: base {base:?}, head {head:?}"
    );
    if matches!(r.code, 3 | 4) {
        return;
    }
    assert_eq!(r.code, 0, "{r:#?}");
    let selected: Vec<&str> = r.stdout.lines().collect();
    let missed: Vec<&&String> = changed
        .iter()
        .filter(|n| !selected.contains(&n.as_str()))
        .collect();
    assert!(
        missed.is_empty(),
        "ORACLE (safety) FAILED: exit 0 omits tests whose result changed: {missed:?}\n{}",
        r.stderr
    );
}

fn xml_attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = start + tag[start..].find('"')?;
    Some(
        tag[start..end]
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// `<testcase name="N" ... status="run|fail|notrun|disabled">`: passed iff `run`.
pub fn parse_junit(xml: &str) -> std::collections::BTreeMap<String, bool> {
    let mut out = std::collections::BTreeMap::new();
    for chunk in xml.split("<testcase").skip(1) {
        let tag = &chunk[..chunk.find('>').expect("unterminated <testcase")];
        let tag = format!(" {}", tag.trim_start());
        let name = xml_attr(&tag, "name").expect("testcase without name");
        let status = xml_attr(&tag, "status").expect("testcase without status");
        out.insert(name, status == "run");
    }
    out
}

/// A project whose flags decide what a unit includes: core.cpp includes b.hpp
/// only with -DUSE_B, other.cpp always (tests/cli.rs on Makefiles, tests/ninja.rs
/// on Ninja: the flags changed by a configure after the build).
pub const FLAGS_PROJECT: &[(&str, &str)] = &[
    (
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.20)\nproject(P CXX)\nenable_testing()\n\
         add_library(core STATIC core.cpp)\nadd_executable(t_core t_core.cpp)\ntarget_link_libraries(t_core core)\n\
         add_test(NAME t_core COMMAND t_core)\n\
         add_executable(t_other other.cpp)\nadd_test(NAME t_other COMMAND t_other)\n",
    ),
    // Not byte-identical to b.hpp: a twin would tie b.hpp to core already.
    ("a.hpp", "#pragma once\n#define VALUE (1)\n"),
    ("b.hpp", "#pragma once\n#define VALUE 1\n"),
    (
        "core.cpp",
        "#ifdef USE_B\n#include \"b.hpp\"\n#else\n#include \"a.hpp\"\n#endif\nint core() { return VALUE; }\n",
    ),
    ("t_core.cpp", "int core();\nint main() { return core() == 1 ? 0 : 1; }\n"),
    ("other.cpp", "#include \"b.hpp\"\nint main() { return VALUE > 0 ? 0 : 1; }\n"),
];

/// The documented strace command line's arguments up to `-o` (the log's path
/// follows), from [`diff2test::record::STRACE_OPTIONS`].
pub fn strace_args() -> Vec<&'static str> {
    let mut v: Vec<&str> = diff2test::record::STRACE_OPTIONS.split(' ').collect();
    v.push("-o");
    v
}
