//! `diff2test record` and `--record` on real builds (issue 36): a suite run
//! under strace with `ctest -j8` is attributed test by test; a record of
//! another build, of another base, or of a run cut short is said and not
//! used for what it cannot vouch for.
//!
//! Needs cmake, g++, make, git and strace: a missing one fails the test with
//! the package to install.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run_bin, run_ok, Run};

fn require() {
    common::require(
        "tests/record.rs",
        &[
            ("cmake", "cmake"),
            ("ctest", "cmake"),
            ("g++", "g++"),
            ("make", "make"),
            ("git", "git"),
            ("strace", "strace"),
        ],
    );
}

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    src: PathBuf,
}

impl Project {
    /// A git repository with `files`, committed.
    fn new(files: &[(&str, &str)]) -> Self {
        require();
        let dir = common::scratch_dir("d2t-record-");
        let root = dir.path().to_path_buf();
        let src = root.join("src");
        for (p, c) in files {
            let f = src.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, c).unwrap();
        }
        let p = Project {
            _dir: dir,
            root,
            src,
        };
        p.git(&["init", "-q"]);
        p.commit("base");
        p
    }

    fn git(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&run_ok(
            Command::new("git")
                .current_dir(&self.src)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
                .args(args),
        ))
        .into_owned()
    }

    fn commit(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-qm", msg]);
    }

    fn write(&self, rel: &str, content: &str) {
        std::fs::write(self.src.join(rel), content).unwrap();
    }

    /// Builds into `ROOT/build`, runs the suite under strace (`-j1`), checks
    /// that some line of the log satisfies `line`, and records the log,
    /// every test recorded. Returns the build and the record's path.
    fn record_holding(&self, line: impl Fn(&str) -> bool) -> (PathBuf, String) {
        let b = self.build("build");
        let log = self.traced_suite(&b, "1");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.lines().any(line),
            "the log holds the call:\n{}",
            &text[..text.len().min(4000)]
        );
        let (r, rec) = self.record(&b, &log);
        assert_eq!(r.code, 0, "{r:#?}");
        assert!(!r.stderr.contains("RECORD_TEST_UNRECORDED"), "{}", r.stderr);
        (b, rec.display().to_string())
    }

    /// Writes `rel`, commits it, and selects HEAD~1..HEAD with `--record record`.
    fn commit_and_select(&self, build: &Path, rel: &str, content: &str, record: &str) -> Run {
        self.write(rel, content);
        self.commit(rel);
        self.select(
            build,
            &["--base", "HEAD~1", "--head", "HEAD", "--record", record],
        )
    }

    /// Configures and builds into `ROOT/name`, lists the catalogue.
    fn build(&self, name: &str) -> PathBuf {
        let b = self.root.join(name);
        let q = b.join(".cmake/api/v1/query");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(q.join("codemodel-v2"), "").unwrap();
        std::fs::write(q.join("cmakeFiles-v1"), "").unwrap();
        run_ok(
            Command::new("cmake")
                .arg("-S")
                .arg(&self.src)
                .arg("-B")
                .arg(&b),
        );
        run_ok(Command::new("cmake").arg("--build").arg(&b).arg("-j2"));
        let json = run_ok(
            Command::new("ctest")
                .arg("--show-only=json-v1")
                .current_dir(&b),
        );
        std::fs::write(b.join("ctest.json"), json).unwrap();
        b
    }

    /// The suite under strace (`ctest -jN`); returns the log's path.
    fn traced_suite(&self, build: &Path, jobs: &str) -> PathBuf {
        let log = self.root.join(format!(
            "{}.strace",
            build.file_name().unwrap().to_string_lossy()
        ));
        // ctest exits non-zero when a test fails or times out: a result, not an error.
        let out = Command::new("strace")
            .args(common::strace_args())
            .arg(&log)
            .args(["ctest", "-j", jobs, "--timeout", "30"])
            .current_dir(build)
            .output()
            .expect("run strace (apt-get install strace)");
        assert!(log.is_file(), "strace wrote no log: {out:?}");
        log
    }

    fn record(&self, build: &Path, log: &Path) -> (Run, PathBuf) {
        let out = self.root.join("record.json");
        let r = run_bin(
            &[
                "record".into(),
                "--source-dir".into(),
                self.src.display().to_string(),
                "--build-dir".into(),
                build.display().to_string(),
                "--strace".into(),
                log.display().to_string(),
                "--output".into(),
                out.display().to_string(),
            ],
            None,
        );
        (r, out)
    }

    fn select(&self, build: &Path, extra: &[&str]) -> Run {
        let mut args: Vec<String> = vec![
            "--no-ci".into(),
            "--source-dir".into(),
            self.src.display().to_string(),
            "--build-dir".into(),
            build.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        run_bin(&args, None)
    }
}

fn reads_of(record: &Path, test: &str) -> Vec<String> {
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    let files = r["files"].as_array().unwrap();
    let t = r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == test)
        .unwrap_or_else(|| panic!("no test {test} in the record"));
    t["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let f = &files[i.as_u64().unwrap() as usize];
            format!(
                "{}:{}",
                f["tree"].as_str().unwrap(),
                f["path"].as_str().unwrap()
            )
        })
        .collect()
}

const CMAKE: &str = "cmake_minimum_required(VERSION 3.20)\nproject(rec CXX)\nenable_testing()\n\
add_executable(prog prog.cpp)\n\
foreach(i RANGE 1 8)\n\
  add_test(NAME read_${i} COMMAND prog ${CMAKE_CURRENT_SOURCE_DIR}/data/${i}.txt)\n\
endforeach()\n";

const PROG: &str = "#include <fstream>\n#include <string>\n#include <thread>\n#include <chrono>\n\
int main(int, char** v) {\n\
  std::this_thread::sleep_for(std::chrono::milliseconds(200));\n\
  std::ifstream in(v[1]); std::string s; std::getline(in, s); return s == \"ok\" ? 0 : 1;\n\
}\n";

fn eight_readers() -> Project {
    let mut files: Vec<(String, String)> = vec![
        ("CMakeLists.txt".into(), CMAKE.into()),
        ("prog.cpp".into(), PROG.into()),
    ];
    for i in 1..=8 {
        files.push((format!("data/{i}.txt"), "ok\n".into()));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Project::new(&refs)
}

/// Eight tests run one program with different arguments, eight at a time:
/// each test's record holds its own data file and no other's, and a change
/// to one data file selects exactly its reader.
#[test]
fn a_suite_run_with_j8_attributes_every_access_to_its_own_test() {
    let p = eight_readers();
    let b = p.build("build");
    let log = p.traced_suite(&b, "8");
    let (r, rec) = p.record(&b, &log);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        r.stderr
            .starts_with("RECORD_WRITTEN\nrecorded 8 of 8 tests"),
        "{}",
        r.stderr
    );
    for i in 1..=8 {
        let reads = reads_of(&rec, &format!("read_{i}"));
        for j in 1..=8 {
            let has = reads.contains(&format!("source:data/{j}.txt"));
            assert_eq!(has, i == j, "read_{i} and data/{j}.txt: {reads:?}");
        }
        assert!(reads.contains(&"build:prog".to_owned()), "{reads:?}");
    }
    // Deterministic: the same log gives the same bytes.
    let first = std::fs::read(&rec).unwrap();
    let (_, rec2) = p.record(&b, &log);
    assert_eq!(first, std::fs::read(rec2).unwrap());

    p.write("data/5.txt", "changed\n");
    p.commit("head");
    let rec_arg = rec.display().to_string();
    let r = p.select(
        &b,
        &["--base", "HEAD~1", "--head", "HEAD", "--record", &rec_arg],
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, "read_5\n"), "{r:#?}");
    assert!(
        r.stderr
            .contains("forced read_5: RECORDED_INPUT_CHANGED: read data/5.txt at base"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("assume RECORD 1"), "{}", r.stderr);
    // Without the record the data file is unknown evidence (any test might read it).
    let r = p.select(&b, &["--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr.contains("reason CHANGE_UNKNOWN: data/5.txt"),
        "{}",
        r.stderr
    );

    // A record of another build directory is said and not used.
    let other = p.build("other-build");
    let r = p.select(
        &other,
        &["--base", "HEAD~1", "--head", "HEAD", "--record", &rec_arg],
    );
    assert!(r.stderr.contains("note RECORD_FOREIGN: "), "{}", r.stderr);
    assert!(!r.stderr.contains("assume RECORD"), "{}", r.stderr);

    // A record of another base: it read data/5.txt with content the new base lacks.
    let r = p.commit_and_select(&b, "README.md", "docs\n", &rec_arg);
    assert!(r.stderr.contains("note RECORD_STALE: "), "{}", r.stderr);
    assert!(r.stderr.contains("data/5.txt"), "{}", r.stderr);
    assert_eq!(
        r.code, 3,
        "README.md is unknown without a usable record: {r:#?}"
    );
}

/// A changed path no test read is skipped only when the record covers every
/// test; a test cut short at base (a timeout) is not covered, and says so.
#[test]
fn a_test_cut_short_at_base_counts_as_unrecorded() {
    let cmake = "cmake_minimum_required(VERSION 3.20)\nproject(rec CXX)\nenable_testing()\n\
        add_executable(prog prog.cpp)\n\
        add_test(NAME reads COMMAND prog ${CMAKE_CURRENT_SOURCE_DIR}/data/1.txt)\n\
        add_test(NAME slow COMMAND sh -c \"sleep 20\")\n\
        set_tests_properties(slow PROPERTIES TIMEOUT 1)\n";
    let p = Project::new(&[
        ("CMakeLists.txt", cmake),
        ("prog.cpp", PROG),
        ("data/1.txt", "ok\n"),
        ("README.md", "docs\n"),
    ]);
    let b = p.build("build");
    let log = p.traced_suite(&b, "2");
    let (r, rec) = p.record(&b, &log);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr.contains(
            "reason RECORD_TEST_UNRECORDED: test \"slow\" cut short: a run was killed by SIGKILL"
        ),
        "{}",
        r.stderr
    );
    let rec_arg = rec.display().to_string();
    let r = p.commit_and_select(&b, "README.md", "docs v2\n", &rec_arg);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr
            .contains("note RECORD_TEST_UNRECORDED: 1 of 2 tests are decided without"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("reason CHANGE_UNKNOWN: README.md"),
        "{}",
        r.stderr
    );

    // A truncated log: the run whose end is cut off is not recorded either.
    let text = std::fs::read_to_string(&log).unwrap();
    // After its open of the data file (the program sleeps before it: the spawn's
    // return is in the log by then), before it ends.
    let open = text
        .find("data/1.txt\", O_RDONLY")
        .expect("the log holds test reads' open of its data file");
    let end = open + text[open..].find('\n').unwrap() + 1;
    let cut = p.root.join("cut.strace");
    std::fs::write(&cut, &text[..end]).unwrap();
    let (r, _) = p.record(&b, &cut);
    assert_eq!(r.code, 3, "{r:#?}");
    assert!(
        r.stderr.contains(
            "RECORD_TEST_UNRECORDED: test \"reads\" cut short: the log ends before a run of it did"
        ),
        "{}",
        r.stderr
    );
}

/// Bad input: a file that is no strace -f log is a usage error and nothing is written.
#[test]
fn a_file_that_is_no_strace_log_is_a_usage_error() {
    let p = eight_readers();
    let b = p.build("build");
    let log = p.root.join("not.strace");
    std::fs::write(&log, "hello\nworld\n").unwrap();
    let (r, out) = p.record(&b, &log);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(r.stderr.starts_with("USAGE_ERROR\n"), "{}", r.stderr);
    assert!(
        r.stderr.contains("no line of `strace -f -o FILE`"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty() && !out.exists());
}

/// A test that runs a committed symlink (json-c's `tests/test4.test ->
/// test_basic.test`): the record keeps the link as git stores it (so the
/// base commit vouches for it) and what it leads to, which a change selects.
#[test]
fn a_symlinked_script_is_audited_as_git_stores_it_and_its_target_selects() {
    let cmake = "cmake_minimum_required(VERSION 3.20)\nproject(rec CXX)\nenable_testing()\n\
        add_executable(prog prog.cpp)\n\
        add_test(NAME via_link COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/alias.sh)\n\
        add_test(NAME other COMMAND sh -c \"exit 0\")\n";
    let p = Project::new(&[
        ("CMakeLists.txt", cmake),
        ("tests/real.sh", "#!/bin/sh\nexit 0\n"),
        ("prog.cpp", PROG),
        ("README.md", "docs\n"),
    ]);
    std::os::unix::fs::symlink("real.sh", p.src.join("tests/alias.sh")).unwrap();
    p.commit("link");
    let b = p.build("build");
    let log = p.traced_suite(&b, "2");
    let (r, rec) = p.record(&b, &log);
    assert_eq!(r.code, 0, "{r:#?}");
    let reads = reads_of(&rec, "via_link");
    assert!(
        reads.contains(&"source:tests/alias.sh".to_owned()),
        "{reads:?}"
    );
    assert!(
        reads.contains(&"source:tests/real.sh".to_owned()),
        "{reads:?}"
    );
    let rec_arg = rec.display().to_string();
    let r = p.commit_and_select(&b, "tests/real.sh", "#!/bin/sh\nexit 1\n", &rec_arg);
    assert!(!r.stderr.contains("RECORD_STALE"), "{}", r.stderr);
    assert_eq!((r.code, r.stdout.as_str()), (0, "via_link\n"), "{r:#?}");
}

/// A test whose program sets a file's times through its descriptor
/// (`futimens`: strace prints `utimensat(3</path>, NULL, …)`, as brotli's
/// CLI does for every file it writes) is recorded: before, the NULL path
/// was "a path strace did not print whole" and every brotli test was
/// unrecorded. A change to a file it does not read is skipped by the record.
#[test]
fn a_program_that_sets_times_through_its_descriptor_is_recorded() {
    let cmake = "cmake_minimum_required(VERSION 3.20)\nproject(rec CXX)\nenable_testing()\n\
        add_executable(stamp stamp.cpp)\n\
        add_test(NAME stamps COMMAND stamp ${CMAKE_CURRENT_SOURCE_DIR}/data/in.txt out.txt)\n";
    let stamp =
        "#include <fcntl.h>\n#include <sys/stat.h>\n#include <unistd.h>\n#include <cstdio>\n\
        int main(int, char** argv) {\n\
          FILE* in = std::fopen(argv[1], \"r\"); if (!in) return 1; std::fclose(in);\n\
          int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644); if (fd < 0) return 1;\n\
          struct timespec t[2] = {{1, 0}, {1, 0}};\n\
          int r = futimens(fd, t); close(fd); return r == 0 ? 0 : 1;\n}\n";
    let p = Project::new(&[
        ("CMakeLists.txt", cmake),
        ("stamp.cpp", stamp),
        ("data/in.txt", "in\n"),
        ("data/other.txt", "other\n"),
    ]);
    let (b, rec_arg) = p.record_holding(|l| l.contains("utimensat(") && l.contains(">, NULL, "));
    let r = p.commit_and_select(&b, "data/other.txt", "other v2\n", &rec_arg);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:#?}");
}

/// A test that opens a path longer than PATH_MAX (yyjson's writer test does, to
/// check its error): strace prints such a name cut short, and the kernel refused
/// it with ENAMETOOLONG before it looked at any file, so the call read nothing.
/// Before, the cut name left the test unrecorded (RECORD_TEST_UNRECORDED) and
/// every change fell back for it. Now it is recorded from what it did read: a
/// change to a file it does not read is skipped, one to the file it reads is not.
#[test]
fn a_path_too_long_to_open_reads_nothing_and_the_test_is_recorded() {
    let cmake = "cmake_minimum_required(VERSION 3.20)\nproject(rec CXX)\nenable_testing()\n\
        add_executable(longname longname.cpp)\n\
        add_test(NAME long_name COMMAND longname ${CMAKE_CURRENT_SOURCE_DIR}/data/in.txt)\n";
    let prog = "#include <cerrno>\n#include <cstdio>\n#include <string>\n\
        int main(int, char** argv) {\n\
          std::string p(5000, 'a');\n\
          std::FILE* bad = std::fopen(p.c_str(), \"w\");\n\
          if (bad || errno != ENAMETOOLONG) return 2;\n\
          std::FILE* in = std::fopen(argv[1], \"r\"); if (!in) return 1;\n\
          int c = std::fgetc(in); std::fclose(in); return c == 'i' ? 0 : 1;\n}\n";
    let p = Project::new(&[
        ("CMakeLists.txt", cmake),
        ("longname.cpp", prog),
        ("data/in.txt", "in\n"),
        ("data/other.txt", "other\n"),
    ]);
    let (b, rec_arg) = p.record_holding(|l| l.contains("\"...") && l.contains("ENAMETOOLONG"));
    let r = p.commit_and_select(&b, "data/other.txt", "other v2\n", &rec_arg);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:#?}");
    let r = p.commit_and_select(&b, "data/in.txt", "broken\n", &rec_arg);
    assert_eq!((r.code, r.stdout.as_str()), (0, "long_name\n"), "{r:#?}");
}
