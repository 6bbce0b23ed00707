//! The CMake version matrix: the core integration scenarios on real builds of
//! `fixtures/cmake-project` made with the oldest CMake diff2test supports
//! (3.20), the system's own (Debian 12: 3.25, `/usr/bin/cmake`) and the newest
//! 4.x, with the same expected result on every version.
//!
//! 3.20 and 4.x come from PyPI's `cmake` wheels, in venvs under
//! `target/cmake-venvs/` that `.ci/cmake-versions.sh` installs; a test that
//! finds one missing runs the script itself, and fails (never skips) with what
//! to install when it cannot. Each build runs `fixtures/prepare-build.sh` with
//! `PATH` prefixed by that CMake's `bin/`, and is checked to be made by that
//! CMake (`cmake --version` and the File API index's `cmake.version`).
//!
//! On 4.x (cmakeFiles 1.1, CMake 3.30+) a tiny project with a
//! `file(GLOB … CONFIGURE_DEPENDS src/*.cpp)` checks that a path the glob
//! would list is a build-configuration change.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{OnceLock, RwLock, RwLockReadGuard};
use std::time::Instant;

const CORE_HPP: &str = "libs/core/include/core/core.hpp";
const CHECKSUM_CPP: &str = "libs/objs/src/checksum.cpp";
/// tests/cli.rs `library_source_change_selects_through_the_reverse_graph`.
const CHECKSUM_SELECTED: &[&str] = &[
    "net.decode",
    "net.encode",
    "objs.checksum",
    "objs.sum[0-9]+",
    "tool.roundtrip",
];

/// One column of the matrix.
struct Version {
    /// Shown in messages and scratch-dir names.
    name: &'static str,
    /// `target/cmake-venvs/<venv>/bin`, or `None` for the system's `/usr/bin/cmake`.
    venv: Option<&'static str>,
    /// What the first line of `cmake --version` must start with (`None`: whatever
    /// `/usr/bin/cmake --version` says).
    want: Option<&'static str>,
    /// `cmake --version`'s first line, once checked.
    version: OnceLock<String>,
    /// The default build. Scenarios read it under `default_lock`'s read side; the
    /// stale-header scenario takes the write side for the moment its touch lasts.
    default: OnceLock<Built>,
    default_lock: RwLock<()>,
    /// The `-DD2T_WITH_WRAPPER=ON` build (read-only scenarios).
    wrapper: OnceLock<Built>,
}

impl Version {
    const fn new(
        name: &'static str,
        venv: Option<&'static str>,
        want: Option<&'static str>,
    ) -> Self {
        Version {
            name,
            venv,
            want,
            version: OnceLock::new(),
            default: OnceLock::new(),
            default_lock: RwLock::new(()),
            wrapper: OnceLock::new(),
        }
    }

    fn bin_dir(&self) -> PathBuf {
        match self.venv {
            Some(v) => {
                ensure_venvs();
                repo_root().join("target/cmake-venvs").join(v).join("bin")
            }
            None => PathBuf::from("/usr/bin"),
        }
    }

    /// `PATH` with this CMake's `bin/` first.
    fn path_env(&self) -> String {
        format!(
            "{}:{}",
            self.bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// Checks that `cmake` and `ctest` found through [`Self::path_env`] are the
    /// expected version, and returns `cmake --version`'s first line.
    fn checked_version(&self) -> &str {
        self.version.get_or_init(|| {
            let path = self.path_env();
            let first_line = |tool: &str, env_path: Option<&str>| -> String {
                let mut cmd = Command::new(tool);
                cmd.arg("--version");
                if let Some(p) = env_path {
                    cmd.env("PATH", p);
                }
                let out = cmd.output().unwrap_or_else(|e| {
                    panic!(
                        "{}: cannot run `{tool} --version` ({e}); {}",
                        self.name,
                        self.remedy()
                    )
                });
                assert!(
                    out.status.success(),
                    "{}: `{tool} --version` failed; {}",
                    self.name,
                    self.remedy()
                );
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned()
            };
            let cmake = first_line("cmake", Some(&path));
            let want = match self.want {
                Some(w) => w.to_owned(),
                None => first_line("/usr/bin/cmake", None),
            };
            assert!(
                cmake.starts_with(&want),
                "{}: `cmake --version` with PATH={path} says {cmake:?}, expected {want:?}; {}",
                self.name,
                self.remedy()
            );
            let ctest = first_line("ctest", Some(&path));
            let number = cmake.trim_start_matches("cmake version ");
            assert_eq!(
                ctest.trim_start_matches("ctest version "),
                number,
                "{}: ctest and cmake on PATH={path} differ",
                self.name
            );
            eprintln!("matrix {}: {cmake}", self.name);
            cmake
        })
    }

    /// This CMake is `major.minor` or newer.
    fn version_at_least(&self, major: u32, minor: u32) -> bool {
        let number = self.checked_version().trim_start_matches("cmake version ");
        let mut parts = number
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
    }

    fn remedy(&self) -> String {
        match self.venv {
            Some(v) => format!(
                "install it with `bash .ci/cmake-versions.sh {v}` (needs python3, python3-venv and PyPI access)"
            ),
            None => "install Debian's CMake with `apt-get install cmake`".into(),
        }
    }

    /// Copies `fixtures/cmake-project` and builds it with this CMake.
    fn build_fixture(&self, cmake_args: &[&str]) -> Built {
        self.build(cmake_args, copy_fixture)
    }

    /// Lays out a source tree with `layout` and builds it with this CMake
    /// through `fixtures/prepare-build.sh`.
    fn build(&self, cmake_args: &[&str], layout: impl FnOnce(&Path)) -> Built {
        self.build_with("", cmake_args, layout)
    }

    /// [`Self::build`] with `generator` (`D2T_GENERATOR` of prepare-build.sh:
    /// empty for Unix Makefiles, or `Ninja`).
    fn build_with(
        &self,
        generator: &str,
        cmake_args: &[&str],
        layout: impl FnOnce(&Path),
    ) -> Built {
        let version = self.checked_version().trim_start_matches("cmake version ");
        let dir = scratch_dir(&format!("d2t-matrix-{}-", self.name));
        let root = dir.path().to_path_buf();
        let src = root.join("src");
        let build = root.join("build");
        layout(&src);
        let start = Instant::now();
        let out = Command::new("bash")
            .arg(repo_root().join("fixtures/prepare-build.sh"))
            .arg(&src)
            .arg(&build)
            .args(cmake_args)
            .env("PATH", self.path_env())
            .env("D2T_GENERATOR", generator)
            .output()
            .expect("run bash fixtures/prepare-build.sh (install bash)");
        assert!(
            out.status.success(),
            "{}: prepare-build.sh failed:\n{}\n{}",
            self.name,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let b = Built::from_parts(dir, root, src, build);
        // The reply itself must come from this CMake.
        let index = reply_index(&b);
        assert_eq!(
            index["cmake"]["version"]["string"].as_str(),
            Some(version),
            "{}: the File API reply was written by another CMake",
            self.name
        );
        eprintln!(
            "matrix {}: built {} {cmake_args:?} in {:.1}s",
            self.name,
            b.src.display(),
            start.elapsed().as_secs_f64()
        );
        b
    }

    /// The default build, and a read guard that keeps the stale-header scenario out.
    fn default_build(&self) -> (RwLockReadGuard<'_, ()>, &Built) {
        let b = self.default.get_or_init(|| self.build_fixture(&[]));
        let guard = self.default_lock.read().unwrap_or_else(|e| e.into_inner());
        (guard, b)
    }

    fn wrapper_build(&self) -> &Built {
        self.wrapper
            .get_or_init(|| self.build_fixture(&["-DD2T_WITH_WRAPPER=ON"]))
    }
}

static V3_20: Version = Version::new("3.20", Some("3.20"), Some("cmake version 3.20."));
static SYSTEM: Version = Version::new("system", None, None);
static NEWEST: Version = Version::new("newest", Some("newest"), Some("cmake version 4."));
static ALL: [&Version; 3] = [&V3_20, &SYSTEM, &NEWEST];

/// Installs the venvs with `.ci/cmake-versions.sh` when one is missing or reports
/// the wrong version (once per test process; the script locks across processes).
fn ensure_venvs() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let res = DONE.get_or_init(|| {
        let venvs = repo_root().join("target/cmake-venvs");
        let ok = |name: &str, want: &str| {
            Command::new(venvs.join(name).join("bin/cmake"))
                .arg("--version")
                .output()
                .is_ok_and(|o| {
                    o.status.success() && String::from_utf8_lossy(&o.stdout).starts_with(want)
                })
        };
        if ok("3.20", "cmake version 3.20.")
            && ok("3.18", "cmake version 3.18.")
            && ok("newest", "cmake version 4.")
        {
            return Ok(());
        }
        let start = Instant::now();
        let out = Command::new("bash")
            .arg(repo_root().join(".ci/cmake-versions.sh"))
            .output()
            .map_err(|e| format!("cannot run bash .ci/cmake-versions.sh: {e}"))?;
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        eprintln!(
            "{log}matrix: .ci/cmake-versions.sh took {:.1}s",
            start.elapsed().as_secs_f64()
        );
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "the CMake version matrix needs CMake 3.20 and 4.x in target/cmake-venvs/, and \
                 `bash .ci/cmake-versions.sh` could not install them:\n{log}\n\
                 Install python3 and python3-venv (apt-get install python3 python3-venv), give pip \
                 access to PyPI (or PIP_INDEX_URL), and re-run."
            ))
        }
    });
    if let Err(msg) = res {
        panic!("{msg}");
    }
}

fn reply_index(b: &Built) -> serde_json::Value {
    let mut idx: Vec<PathBuf> = std::fs::read_dir(b.reply_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("index-") && n.ends_with(".json")
        })
        .collect();
    idx.sort();
    serde_json::from_slice(&std::fs::read(idx.last().expect("a reply index")).unwrap()).unwrap()
}

/// The test names of `b`'s catalogue, sorted (what a full suite lists).
fn catalogue_names(b: &Built) -> Vec<String> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(b.ctest_json()).unwrap()).unwrap();
    let mut names: Vec<String> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn assert_subset(v: &Version, r: &Run, want: &[&str]) {
    assert_eq!(
        r.code, 0,
        "{}: expected SUBSET_SELECTED (0), got {r:#?}",
        v.name
    );
    assert_eq!(r.state(), "SUBSET_SELECTED", "{}", v.name);
    assert_eq!(r.names(), want, "{}", v.name);
}

fn assert_full_suite(v: &Version, b: &Built, r: &Run, code: &str) {
    assert_eq!(
        r.code, 3,
        "{}: expected FULL_SUITE_SELECTED (3), got {r:#?}",
        v.name
    );
    assert_eq!(r.state(), "FULL_SUITE_SELECTED", "{}", v.name);
    assert!(
        r.codes().iter().any(|c| c == code),
        "{}: expected reason {code}, got {:?}\n{}",
        v.name,
        r.codes(),
        r.stderr
    );
    assert_eq!(
        r.names(),
        catalogue_names(b),
        "{}: FULL_SUITE_SELECTED must list every catalogue test",
        v.name
    );
}

// ---------------------------------------------------------------- scenarios

fn header_change(v: &Version) {
    let (_read, b) = v.default_build();
    assert_eq!(
        catalogue_names(b),
        ALL_TESTS,
        "{}: the fixture's catalogue",
        v.name
    );
    assert_subset(v, &b.run(&[CORE_HPP], &[]), CORE_SELECTED);
}

fn library_source_change(v: &Version) {
    let (_read, b) = v.default_build();
    let r = b.run(&[CHECKSUM_CPP], &[]);
    assert_subset(v, &r, CHECKSUM_SELECTED);
    assert!(
        r.stderr
            .contains("-> target objs -> target net -> target datagen -> test tool.roundtrip"),
        "{}: {}",
        v.name,
        r.stderr
    );
}

fn cmakelists_change(v: &Version) {
    let (_read, b) = v.default_build();
    let r = b.run(&["libs/core/CMakeLists.txt"], &[]);
    assert_full_suite(v, b, &r, "CHANGE_BUILD_CONFIG");
}

fn unknown_path(v: &Version) {
    let (_read, b) = v.default_build();
    assert_full_suite(v, b, &b.run(&["README.md"], &[]), "CHANGE_UNKNOWN");
}

/// Puts a file's modification time back when dropped (also when a test panics).
struct RestoreMtime(PathBuf, filetime::FileTime);

impl Drop for RestoreMtime {
    fn drop(&mut self) {
        filetime::set_file_mtime(&self.0, self.1).unwrap();
    }
}

fn stale_header(v: &Version) {
    // Touches the shared build's tree: alone, and only until the run is done.
    let b = v.default.get_or_init(|| v.build_fixture(&[]));
    let _write = v.default_lock.write().unwrap_or_else(|e| e.into_inner());
    let header = b.src.join("libs/base/include/base/version.hpp");
    let meta = std::fs::metadata(&header).unwrap();
    let _restore = RestoreMtime(
        header.clone(),
        filetime::FileTime::from_last_modification_time(&meta),
    );
    touch_future(&header, 5);
    assert_full_suite(v, b, &b.run(&[CORE_HPP], &[]), "DEP_EVIDENCE_STALE");
}

/// `--dep-list` without one depfile (a copy next to the tree: the shared build is not touched).
fn missing_depfile_args(b: &Built, name: &str) -> Vec<String> {
    let deps = std::fs::read_to_string(b.deps()).unwrap();
    let kept: Vec<&str> = deps
        .lines()
        .filter(|l| !l.contains("/test_header.dir/"))
        .collect();
    assert_eq!(
        kept.len() + 1,
        deps.lines().count(),
        "one test_header depfile in {deps}"
    );
    let list = b.root.join(format!("deps-without-test_header-{name}.txt"));
    std::fs::write(&list, kept.join("\n") + "\n").unwrap();
    let mut args = b.base_args();
    let i = args.iter().position(|a| a == "--dep-list").unwrap();
    args[i + 1] = list.display().to_string();
    args.extend(["--changed".to_owned(), CORE_HPP.to_owned()]);
    args
}

fn missing_depfile(v: &Version) {
    let (_read, b) = v.default_build();
    let r = run_bin(&missing_depfile_args(b, "scenario"), None);
    assert_full_suite(v, b, &r, "DEP_COVERAGE_INCOMPLETE");
}

fn opaque_wrapper(v: &Version) {
    let b = v.wrapper_build();
    let r = b.run(&["libs/util/include/util/strings.hpp"], &[]);
    assert_full_suite(v, b, &r, "TEST_COMMAND_UNMAPPED");
    assert!(r.stderr.contains("wrapped.env"), "{}: {}", v.name, r.stderr);
}

/// A tiny project whose library sources come from a `CONFIGURE_DEPENDS` glob.
fn glob_lab(src: &Path) {
    let files: &[(&str, &str)] = &[
        (
            "CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.20)\n\
             project(GlobLab LANGUAGES CXX)\n\
             enable_testing()\n\
             file(GLOB lab_srcs CONFIGURE_DEPENDS src/*.cpp)\n\
             add_library(lab STATIC ${lab_srcs})\n\
             target_include_directories(lab PUBLIC include)\n\
             add_executable(test_lab test/test_lab.cpp)\n\
             target_link_libraries(test_lab PRIVATE lab)\n\
             add_test(NAME lab.works COMMAND test_lab)\n\
             add_executable(test_other test/test_other.cpp)\n\
             target_include_directories(test_other PRIVATE other)\n\
             add_test(NAME other.works COMMAND test_other)\n",
        ),
        ("include/lab.hpp", "#pragma once\nint lab();\n"),
        (
            "src/lab.cpp",
            "#include \"lab.hpp\"\nint lab() { return 0; }\n",
        ),
        (
            "test/test_lab.cpp",
            "#include \"lab.hpp\"\nint main() { return lab(); }\n",
        ),
        (
            "other/other.hpp",
            "#pragma once\ninline int other() { return 0; }\n",
        ),
        (
            "test/test_other.cpp",
            "#include \"other.hpp\"\nint main() { return other(); }\n",
        ),
    ];
    write_files(src, files);
}

/// No version may give a subset for a file added under a `CONFIGURE_DEPENDS`
/// glob; from cmakeFiles 1.1 (CMake 3.30) the reply names the glob, and the
/// reason is `CHANGE_BUILD_CONFIG`.
fn configure_depends_glob(v: &Version) {
    let b = v.build(&[], glob_lab);
    let globs_in_reply = v.version_at_least(3, 30);
    // Control: a header outside every glob still gives a subset.
    assert_subset(v, &b.run(&["other/other.hpp"], &[]), &["other.works"]);
    if globs_in_reply {
        // A source the glob listed at configure time: a build configured after the
        // change lists an added file already, so this may be one the change added.
        assert_full_suite(v, &b, &b.run(&["src/lab.cpp"], &[]), "CHANGE_BUILD_CONFIG");
    }
    // A file added under the glob after the build.
    std::fs::write(b.src.join("src/extra.cpp"), "int extra() { return 1; }\n").unwrap();
    let r = b.run(&["src/extra.cpp"], &[]);
    if globs_in_reply {
        assert_full_suite(v, &b, &r, "CHANGE_BUILD_CONFIG");
    } else {
        // CMake < 3.30 does not report globs: still never a subset.
        assert_eq!(r.code, 3, "{}: {r:#?}", v.name);
    }
}

// ------------------------------------------- CMake 4.2+ object layouts

/// A library whose `src/lab.cpp` is the only unit to include
/// `src/lab_private.hpp`, its test, and an unrelated test; `extra_cmake`
/// follows `lab`'s definition (properties of its sources).
fn layout_lab(src: &Path, extra_cmake: &str) {
    let cmake = format!(
        "cmake_minimum_required(VERSION 3.20)\n\
         project(LayoutLab LANGUAGES CXX)\n\
         enable_testing()\n\
         add_library(lab STATIC src/lab.cpp src/util.cpp)\n\
         target_include_directories(lab PUBLIC include)\n\
         {extra_cmake}\n\
         add_executable(test_lab test/test_lab.cpp)\n\
         target_link_libraries(test_lab PRIVATE lab)\n\
         add_test(NAME lab.works COMMAND test_lab)\n\
         add_executable(test_other test/test_other.cpp)\n\
         add_test(NAME other.works COMMAND test_other)\n"
    );
    let files: &[(&str, &str)] = &[
        ("CMakeLists.txt", &cmake),
        ("include/lab.hpp", "#pragma once\nint lab();\nint util();\n"),
        (
            "src/lab_private.hpp",
            "#pragma once\nconstexpr int kLab = 0;\n",
        ),
        (
            "src/lab.cpp",
            "#include \"lab.hpp\"\n#include \"lab_private.hpp\"\nint lab() { return kLab; }\n",
        ),
        (
            "src/util.cpp",
            "#include \"lab.hpp\"\nint util() { return 0; }\n",
        ),
        (
            "test/test_lab.cpp",
            "#include \"lab.hpp\"\nint main() { return lab() + util(); }\n",
        ),
        ("test/test_other.cpp", "int main() { return 0; }\n"),
    ];
    write_files(src, files);
}

/// Every test of `b` with whether it passed, from a real `ctest` run of this CMake.
fn ctest_results(v: &Version, b: &Built) -> std::collections::BTreeMap<String, bool> {
    let out = Command::new("ctest")
        .arg("--test-dir")
        .arg(&b.build)
        .env("PATH", v.path_env())
        .output()
        .expect("run ctest");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut results = std::collections::BTreeMap::new();
    for line in text.lines().filter(|l| l.contains("Test #")) {
        // "  1/2 Test #1: lab.works ........   Passed    0.01 sec"
        let Some((_, rest)) = line.split_once(": ") else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap_or("").to_owned();
        results.insert(name, line.contains(" Passed "));
    }
    assert!(
        !results.is_empty(),
        "{}: ctest ran no test:\n{text}",
        v.name
    );
    results
}

/// `OBJECT_NAME` (CMake 4.2) renames an object inside its target's
/// directory, here into a subdirectory: the unit is still mapped from the
/// evidence, and the subset holds the one test whose result the change
/// flips (real ctest before and after the rebuild: the oracle).
fn object_name_is_mapped(v: &Version, generator: &str) {
    let b = v.build_with(generator, &[], |src| {
        layout_lab(
            src,
            "set_source_files_properties(src/lab.cpp PROPERTIES OBJECT_NAME renamed/lab_object)",
        )
    });
    let renamed = "CMakeFiles/lab.dir/renamed/lab_object.o";
    assert!(
        b.build.join(renamed).is_file(),
        "{} {generator:?}: CMake wrote no {renamed}",
        v.name
    );
    let r = b.run(&["src/lab_private.hpp"], &[]);
    assert_subset(v, &r, &["lab.works"]);
    assert!(
        r.stderr.contains("renamed/lab_object.o"),
        "{} {generator:?}: the chain goes through the renamed object's evidence:\n{}",
        v.name,
        r.stderr
    );
    let before = ctest_results(v, &b);
    std::fs::write(
        b.src.join("src/lab_private.hpp"),
        "#pragma once\nconstexpr int kLab = 1;\n",
    )
    .unwrap();
    run_ok(
        Command::new("cmake")
            .arg("--build")
            .arg(&b.build)
            .env("PATH", v.path_env()),
    );
    let after = ctest_results(v, &b);
    let changed: Vec<&str> = before
        .iter()
        .filter(|(name, pass)| after.get(*name) != Some(pass))
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(changed, ["lab.works"], "{}: the oracle's premise", v.name);
    for name in changed {
        assert!(
            r.names().contains(&name),
            "{}: {name} changed but was not selected",
            v.name
        );
    }
}

/// `CMAKE_INTERMEDIATE_DIR_STRATEGY=SHORT` (CMake 4.2) puts objects in
/// `<dir>/.o/<hash>/`, in no `<target>.dir`: no unit can be mapped to its
/// target from the evidence, so the run falls back, with the reason, both
/// for the README's dependency list and for one listing every `.d`.
fn short_intermediate_dirs_fall_back(v: &Version, generator: &str) {
    let b = v.build_with(
        generator,
        &["-DCMAKE_INTERMEDIATE_DIR_STRATEGY=SHORT"],
        |src| layout_lab(src, ""),
    );
    assert!(
        !b.build.join("CMakeFiles/lab.dir").exists() && b.build.join(".o").is_dir(),
        "{} {generator:?}: SHORT did not move the objects to .o/",
        v.name
    );
    let r = b.run(&["src/lab_private.hpp"], &[]);
    let code = if generator.is_empty() {
        "DEP_LIST_UNREADABLE" // the README's recipe lists no .d: none is in a <target>.dir
    } else {
        "DEP_COVERAGE_INCOMPLETE" // the log's records belong to no target
    };
    assert_full_suite(v, &b, &r, code);
    if generator.is_empty() {
        let mut all: Vec<String> = walkdir::WalkDir::new(&b.build)
            .into_iter()
            .map(|e| e.unwrap().path().display().to_string())
            .filter(|p| p.ends_with(".d"))
            .collect();
        all.sort();
        assert!(!all.is_empty(), "{}: SHORT wrote no .d", v.name);
        std::fs::write(b.deps(), all.join("\n") + "\n").unwrap();
        let r = b.run(&["src/lab_private.hpp"], &[]);
        assert_full_suite(v, &b, &r, "DEP_FILE_UNMAPPED");
    }
}

#[test]
fn cmake_4_object_name_is_mapped_on_makefiles() {
    object_name_is_mapped(&NEWEST, "")
}

#[test]
fn cmake_4_object_name_is_mapped_on_ninja() {
    require("OBJECT_NAME on Ninja", &[("ninja", "ninja-build")]);
    object_name_is_mapped(&NEWEST, "Ninja")
}

#[test]
fn cmake_4_short_intermediate_dirs_fall_back_on_makefiles() {
    short_intermediate_dirs_fall_back(&NEWEST, "")
}

#[test]
fn cmake_4_short_intermediate_dirs_fall_back_on_ninja() {
    require("SHORT on Ninja", &[("ninja", "ninja-build")]);
    short_intermediate_dirs_fall_back(&NEWEST, "Ninja")
}

macro_rules! matrix {
    ($($module:ident => $version:expr;)*) => {$(
        mod $module {
            use super::*;
            #[test]
            fn header_change_selects_the_dependent_tests() {
                header_change(&$version)
            }
            #[test]
            fn library_source_change_selects_through_the_reverse_graph() {
                library_source_change(&$version)
            }
            #[test]
            fn cmakelists_change_is_build_config() {
                cmakelists_change(&$version)
            }
            #[test]
            fn unknown_path_is_change_unknown() {
                unknown_path(&$version)
            }
            #[test]
            fn stale_header_is_dep_evidence_stale() {
                stale_header(&$version)
            }
            #[test]
            fn missing_depfile_is_dep_coverage_incomplete() {
                missing_depfile(&$version)
            }
            #[test]
            fn opaque_wrapper_is_test_command_unmapped() {
                opaque_wrapper(&$version)
            }
            #[test]
            fn file_added_under_a_configure_depends_glob() {
                configure_depends_glob(&$version)
            }
        }
    )*};
}

matrix! {
    cmake_3_20 => V3_20;
    cmake_system => SYSTEM;
    cmake_4 => NEWEST;
}

/// Beyond exit codes and names: every version gives the same transcript
/// (chains, reasons, remedies; temp roots redacted).
#[test]
fn every_version_gives_the_same_transcripts() {
    let scenarios: [(&str, &[&str]); 4] = [
        ("header", &[CORE_HPP]),
        ("library source", &[CHECKSUM_CPP]),
        ("CMakeLists.txt", &["libs/core/CMakeLists.txt"]),
        ("unknown path", &["README.md"]),
    ];
    let transcripts = |v: &Version| -> Vec<String> {
        let (_read, b) = v.default_build();
        let mut t: Vec<String> = scenarios
            .iter()
            .map(|(_, changed)| b.transcript(&b.run(changed, &[])))
            .collect();
        let r = run_bin(&missing_depfile_args(b, "transcript"), None);
        t.push(b.transcript(&r));
        t
    };
    let base = transcripts(ALL[0]);
    for v in &ALL[1..] {
        for (i, (got, want)) in transcripts(v).iter().zip(&base).enumerate() {
            let what = scenarios.get(i).map_or("missing depfile", |s| s.0);
            assert_eq!(
                got, want,
                "{what}: CMake {} and {} disagree",
                v.name, ALL[0].name
            );
        }
    }
}

/// CMake before 3.20 with a Makefiles generator writes no compiler `.d`
/// files (it scanned dependencies itself): diff2test says so in one reason,
/// with the remedy, and falls back; the same CMake with Ninja gives a subset
/// (issue 31, item 2). Real CMake 3.18 from PyPI (there is no 3.19 wheel).
#[test]
fn cmake_before_3_20_with_makefiles_is_said_plainly_and_ninja_works() {
    ensure_venvs();
    let cmake = repo_root().join("target/cmake-venvs/3.18/bin/cmake");
    let ctest = repo_root().join("target/cmake-venvs/3.18/bin/ctest");
    let dir = scratch_dir("d2t-cmake318-");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.14)\nproject(old CXX)\nenable_testing()\n\
         add_executable(t t.cpp)\nadd_test(NAME t COMMAND t)\n\
         add_executable(u u.cpp)\nadd_test(NAME u COMMAND u)\n",
    )
    .unwrap();
    std::fs::write(src.join("t.h"), "#define V 1\n").unwrap();
    std::fs::write(
        src.join("t.cpp"),
        "#include \"t.h\"\nint main() { return V - 1; }\n",
    )
    .unwrap();
    std::fs::write(src.join("u.cpp"), "int main() { return 0; }\n").unwrap();
    for (gen, dirname) in [("Unix Makefiles", "build-make"), ("Ninja", "build-ninja")] {
        let build = dir.path().join(dirname);
        let q = build.join(".cmake/api/v1/query");
        std::fs::create_dir_all(&q).unwrap();
        for k in ["codemodel-v2", "cmakeFiles-v1"] {
            std::fs::write(q.join(k), "").unwrap();
        }
        run_ok(
            Command::new(&cmake)
                .arg("-S")
                .arg(&src)
                .arg("-B")
                .arg(&build)
                .args(["-G", gen]),
        );
        run_ok(Command::new(&cmake).arg("--build").arg(&build));
        let json = run_ok(
            Command::new(&ctest)
                .current_dir(&build)
                .arg("--show-only=json-v1"),
        );
        std::fs::write(build.join("ctest.json"), json).unwrap();
        let args: Vec<String> = vec![
            "--source-dir".into(),
            src.display().to_string(),
            "--build-dir".into(),
            build.display().to_string(),
            "--changed".into(),
            "t.h".into(),
        ];
        let r = run_bin(&args, None);
        if gen == "Ninja" {
            assert_eq!((r.code, r.stdout.as_str()), (0, "t\n"), "{gen}: {r:#?}");
        } else {
            assert_eq!(r.code, 3, "{gen}: {r:#?}");
            assert!(
                r.stderr.contains("reason DEP_LIST_UNREADABLE: the build was configured by CMake 3.18 with the \"Unix Makefiles\" generator, which writes no compiler dependency files"),
                "{}",
                r.stderr
            );
            assert_eq!(
                r.stderr.matches("reason DEP_LIST_UNREADABLE").count(),
                1,
                "{}",
                r.stderr
            );
            assert!(!r.stderr.contains("[[boundary]]"), "{}", r.stderr);
        }
    }
}
