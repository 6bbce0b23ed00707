//! The GitHub Action (`.github/actions/diff2test/run.sh`) end to end, with a fake
//! `GITHUB_*` environment, on a real fixture build in a real git repository: the
//! step summary, the tests ctest really ran (exactly the selection), shards, the
//! empty selection, setup errors, a stale catalogue, no base, a shallow clone.
//!
//! The list hand-off runs under two CTest versions: one before 3.29 (`-R` per
//! regex line) and one of at least 3.29 (`--tests-from-file`). The newer one is
//! installed from PyPI into `target/cmake-venvs/newest` by
//! `.github/actions/diff2test/install-cmake.sh` when it is missing (the older
//! one is the system ctest, or `target/cmake-venvs/pre-3.29` when the system's is
//! newer). A failed install fails the test with what to install.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

fn commit(dir: &Path, msg: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", msg]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The fixture in a git repository: `main` (base), `feature` (head: a change to
/// `core.hpp`), `docs` (feature + an unknown file: the full suite), and a fake
/// `origin/main`; built at `feature`.
struct Repo {
    b: Built,
    base: String,
    head: String,
    docs: String,
}

fn repo() -> &'static Repo {
    static R: OnceLock<Repo> = OnceLock::new();
    R.get_or_init(|| {
        let dir = scratch_dir("d2t-action-");
        let root = dir.path().to_path_buf();
        let src = root.join("src");
        copy_fixture(&src);
        git(&src, &["init", "-q"]);
        let base = commit(&src, "base");
        git(&src, &["update-ref", "refs/remotes/origin/main", &base]);
        git(&src, &["checkout", "-q", "-b", "feature"]);
        let hdr = src.join("libs/core/include/core/core.hpp");
        let mut text = std::fs::read_to_string(&hdr).unwrap();
        text.push_str("// a change under test\n");
        std::fs::write(&hdr, text).unwrap();
        let head = commit(&src, "change core.hpp");
        git(&src, &["checkout", "-q", "-b", "docs"]);
        std::fs::write(src.join("NOTES.txt"), "not part of any build\n").unwrap();
        let docs = commit(&src, "an unknown file");
        // The base branch moved on after feature branched: a file feature never saw.
        git(&src, &["checkout", "-q", "-b", "moved", &base]);
        std::fs::write(src.join("CHANGES.txt"), "added on main later\n").unwrap();
        let moved = commit(&src, "main moved on");
        git(&src, &["update-ref", "refs/remotes/origin/moved", &moved]);
        git(&src, &["checkout", "-q", "feature"]);
        let b = Built::from_parts(dir, root.clone(), src, root.join("build"));
        prepare(&b);
        Repo {
            b,
            base,
            head,
            docs,
        }
    })
}

/// One action run at a time: they share the build dir (ctest writes into it).
fn lock() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|e| e.into_inner())
}

fn action_dir() -> PathBuf {
    repo_root().join(".github/actions/diff2test")
}

fn ctest_version(ctest: &Path) -> Option<(u32, u32)> {
    let out = Command::new(ctest).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.lines().next()?.strip_prefix("ctest version ")?;
    let mut it = v.split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// `target/cmake-venvs/NAME/bin/ctest`, installed with `install-cmake.sh` when missing.
fn venv_ctest(name: &str, requirement: &str) -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _g = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let venv = repo_root().join("target/cmake-venvs").join(name);
    let ctest = venv.join("bin/ctest");
    if !venv.join(".complete").exists() {
        let out = Command::new("bash")
            .arg(action_dir().join("install-cmake.sh"))
            .arg(&venv)
            .arg(requirement)
            .output()
            .expect("run bash install-cmake.sh (install bash)");
        assert!(
            out.status.success(),
            "could not install `{requirement}` from PyPI into {}: install python3 and python3-venv, \
             then `python3 -m venv {0} && {0}/bin/pip install '{requirement}'`\n{}\n{}",
            venv.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    ctest
}

/// A CTest of at least 3.29 (`--tests-from-file`).
fn newest_ctest() -> PathBuf {
    let c = venv_ctest("newest", "cmake>=3.29");
    let v = ctest_version(&c).expect("ctest --version of the venv");
    assert!(v >= (3, 29), "{} is {v:?}, not >= 3.29", c.display());
    c
}

/// A CTest older than 3.29 (the `-R` hand-off): the system's, or one from PyPI.
fn old_ctest() -> PathBuf {
    let system = PathBuf::from("ctest");
    match ctest_version(&system) {
        Some(v) if ((3, 21)..(3, 29)).contains(&v) => system,
        _ => venv_ctest("pre-3.29", "cmake>=3.21,<3.29"),
    }
}

struct ActionRun {
    code: i32,
    out: String,
    summary: String,
    outputs: String,
    /// The tests ctest started, from its own output (`Start N: NAME`).
    ran: Vec<String>,
    _tmp: tempfile::TempDir,
}

impl ActionRun {
    fn ran_set(&self) -> BTreeSet<String> {
        self.ran.iter().cloned().collect()
    }
    fn ctest_invoked(&self) -> bool {
        self.out.lines().any(|l| l.starts_with("Test project "))
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Runs `run.sh` with a clean environment plus `env`: no inherited `GITHUB_*`,
/// `RUNNER_*` or `D2T_*` variable, a step summary and an output file in a temp
/// dir, install=skip with the cargo-built diff2test first on PATH.
fn run_action(dir: &Path, env: &[(&str, &str)]) -> ActionRun {
    let tmp = scratch_dir("d2t-action-run-");
    let summary = tmp.path().join("step-summary.md");
    let outputs = tmp.path().join("github-output");
    std::fs::write(&summary, "").unwrap();
    std::fs::write(&outputs, "").unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_diff2test")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg(action_dir().join("run.sh")).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("GITHUB_") || k.starts_with("RUNNER_") || k.starts_with("D2T_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PATH", path)
        .env("CI", "true")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("RUNNER_TEMP", tmp.path())
        .env("D2T_INSTALL", "skip");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run bash run.sh (install bash)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = text
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("Start ")?;
            let (num, name) = rest.split_once(": ")?;
            num.trim().parse::<u32>().ok()?;
            Some(name.to_owned())
        })
        .collect();
    ActionRun {
        code: out.status.code().unwrap_or(-1),
        summary: std::fs::read_to_string(&summary).unwrap(),
        outputs: std::fs::read_to_string(&outputs).unwrap(),
        out: text,
        ran,
        _tmp: tmp,
    }
}

/// A pull request from `feature` into `main`, on the fixture build.
fn pr_env<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut v = vec![
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
        ("D2T_SOURCE_DIR", "src"),
        ("D2T_BUILD_DIR", "build"),
    ];
    v.extend_from_slice(extra);
    v
}

fn diff2test_names(r: &Repo, extra: &[&str]) -> Vec<String> {
    let mut args = r.b.base_args();
    args.extend(
        [
            "--ci",
            "--base",
            "origin/main",
            "--head",
            "HEAD",
            "--merge-base",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    args.extend(extra.iter().map(|s| s.to_string()));
    let run = run_bin(&args, None);
    assert!(
        run.code == 0 || run.code == 3,
        "diff2test {args:?}: {run:?}"
    );
    run.names().iter().map(|s| s.to_string()).collect()
}

fn assert_subset_run(run: &ActionRun, how: &str) {
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(
        run.out.contains(how),
        "expected the {how} hand-off:\n{}",
        run.out
    );
    let first = run.summary.lines().next().unwrap_or("");
    assert!(
        first.contains("SUBSET_SELECTED") && first.contains("9 of 14"),
        "state line: {first:?}\n{}",
        run.summary
    );
    for name in CORE_SELECTED {
        assert!(
            run.summary.contains(&format!("`{name}`")),
            "{name} not in the summary:\n{}",
            run.summary
        );
    }
    assert_eq!(run.ran_set(), set(CORE_SELECTED), "{}", run.out);
    assert_eq!(
        run.ran.len(),
        CORE_SELECTED.len(),
        "a test ran twice:\n{}",
        run.out
    );
    assert!(
        run.outputs.contains("state=SUBSET_SELECTED\n"),
        "{}",
        run.outputs
    );
    assert!(
        run.outputs.contains("selected-count=9\n"),
        "{}",
        run.outputs
    );
    assert!(run.outputs.contains("ran-count=9\n"), "{}", run.outputs);
}

#[test]
fn list_handoff_before_ctest_3_29_runs_exactly_the_selection_by_regex() {
    let r = repo();
    let _g = lock();
    let ctest = old_ctest();
    let ctest = ctest.to_str().unwrap();
    let run = run_action(&r.b.root, &pr_env(&[("D2T_CTEST", ctest)]));
    assert_subset_run(&run, " -R, 1 call(s)");
}

#[test]
fn list_handoff_with_ctest_3_29_or_newer_runs_exactly_the_selection_from_a_file() {
    let r = repo();
    let ctest = newest_ctest();
    let _g = lock();
    let run = run_action(
        &r.b.root,
        &pr_env(&[("D2T_CTEST", ctest.to_str().unwrap())]),
    );
    assert_subset_run(&run, "--tests-from-file");
}

#[test]
fn full_suite_selected_hands_every_test_over_under_both_ctest_versions() {
    let r = repo();
    let newest = newest_ctest();
    let old = old_ctest();
    let _g = lock();
    for (ctest, how) in [(&newest, "--tests-from-file"), (&old, " -R, ")] {
        let run = run_action(
            &r.b.root,
            &[
                ("GITHUB_EVENT_NAME", "workflow_dispatch"),
                ("D2T_SOURCE_DIR", "src"),
                ("D2T_BUILD_DIR", "build"),
                ("D2T_BASE", &r.head),
                ("D2T_HEAD", &r.docs),
                ("D2T_CTEST", ctest.to_str().unwrap()),
            ],
        );
        assert_eq!(run.code, 0, "{}", run.out);
        assert!(run.out.contains(how), "{how}:\n{}", run.out);
        assert!(
            run.summary
                .starts_with("**diff2test: FULL_SUITE_SELECTED**"),
            "{}",
            run.summary
        );
        assert_eq!(run.ran_set(), set(ALL_TESTS), "{}", run.out);
    }
}

#[test]
fn shards_are_disjoint_and_together_run_the_selection() {
    let r = repo();
    let newest = newest_ctest();
    let old = old_ctest();
    let _g = lock();
    // Shard jobs run on separate machines that restore one CTestCostData.txt
    // (which balances the shards); here they share a build dir, whose cost
    // file each job's ctest run rewrites: each job starts from the same one.
    let costs = r.b.build.join("Testing/Temporary/CTestCostData.txt");
    let saved = std::fs::read(&costs).ok();
    let restore = || match &saved {
        Some(bytes) => std::fs::write(&costs, bytes).unwrap(),
        None => {
            let _ = std::fs::remove_file(&costs);
        }
    };
    for ctest in [&newest, &old] {
        let mut union = BTreeSet::new();
        let mut total = 0;
        for shard in ["1/2", "2/2"] {
            restore();
            let expected: BTreeSet<String> = diff2test_names(r, &["--shard", shard])
                .into_iter()
                .collect();
            let run = run_action(
                &r.b.root,
                &pr_env(&[("D2T_SHARD", shard), ("D2T_CTEST", ctest.to_str().unwrap())]),
            );
            assert_eq!(run.code, 0, "{}", run.out);
            assert!(run.outputs.contains("ran-count="), "{}", run.outputs);
            assert_eq!(run.ran_set(), expected, "shard {shard}:\n{}", run.out);
            assert!(
                run.summary.contains(&format!("shard {shard}")),
                "{}",
                run.summary
            );
            total += run.ran.len();
            union.extend(run.ran);
        }
        assert_eq!(total, union.len(), "the shards overlap");
        assert_eq!(union, set(CORE_SELECTED));
    }
    restore();
}

/// A whole-suite run (no base) is split across the shards too, by ctest's
/// own numbering (before: all of it on shard 1); each reports what ran and
/// what passed in the step summary, and sets ran-count.
#[test]
fn a_whole_suite_run_is_split_across_the_shards() {
    let r = repo();
    let ctest = newest_ctest();
    let _g = lock();
    let mut union = BTreeSet::new();
    let mut total = 0;
    for shard in ["1/2", "2/2"] {
        let run = run_action(
            &r.b.root,
            &[
                ("GITHUB_EVENT_NAME", "workflow_dispatch"),
                ("D2T_SOURCE_DIR", "src"),
                ("D2T_BUILD_DIR", "build"),
                ("D2T_SHARD", shard),
                ("D2T_CTEST", ctest.to_str().unwrap()),
            ],
        );
        assert_eq!(run.code, 0, "{}", run.out);
        assert!(
            !run.ran.is_empty(),
            "shard {shard} ran nothing:\n{}",
            run.out
        );
        assert!(
            run.outputs
                .contains(&format!("ran-count={}\n", run.ran.len())),
            "{}",
            run.outputs
        );
        assert!(
            run.summary
                .contains(&format!("ctest ran {} test(s): all passed.", run.ran.len())),
            "{}",
            run.summary
        );
        total += run.ran.len();
        union.extend(run.ran);
    }
    assert_eq!(total, union.len(), "the shards overlap");
    assert_eq!(union, set(ALL_TESTS));
}

#[test]
fn an_empty_selection_runs_no_ctest_and_succeeds() {
    let r = repo();
    let ctest = newest_ctest();
    // A shard of many that happens to hold no test: an empty subset.
    let n = 40;
    let k = (1..=n)
        .find(|k| diff2test_names(r, &["--shard", &format!("{k}/{n}")]).is_empty())
        .expect("some shard of 40 is empty");
    let shard = format!("{k}/{n}");
    let _g = lock();
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_SHARD", &shard),
            ("D2T_CTEST", ctest.to_str().unwrap()),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(run.out.contains("no test affected"), "{}", run.out);
    assert!(!run.ctest_invoked(), "ctest ran:\n{}", run.out);
    assert!(run.ran.is_empty());
    assert!(run.summary.contains("No test affected"), "{}", run.summary);
}

/// Moves a file aside for the life of the guard.
struct Aside(PathBuf, PathBuf);
impl Aside {
    fn new(p: PathBuf) -> Aside {
        let to = p.with_extension("aside");
        std::fs::rename(&p, &to).unwrap();
        Aside(p, to)
    }
}
impl Drop for Aside {
    fn drop(&mut self) {
        std::fs::rename(&self.1, &self.0).unwrap();
    }
}

#[test]
fn a_missing_ctest_json_is_a_setup_error_and_runs_nothing() {
    let r = repo();
    let _g = lock();
    let run = {
        let _aside = Aside::new(r.b.ctest_json());
        run_action(&r.b.root, &pr_env(&[]))
    };
    assert_eq!(run.code, 5, "{}", run.out);
    assert!(
        run.out.contains("::error::diff2test: SETUP_ERROR"),
        "{}",
        run.out
    );
    assert!(
        run.out.contains("::error::reason CTEST_UNREADABLE"),
        "{}",
        run.out
    );
    assert!(!run.ctest_invoked(), "ctest ran:\n{}", run.out);
    assert!(run.summary.contains("CTEST_UNREADABLE"), "{}", run.summary);
}

#[test]
fn a_selected_name_unknown_to_ctest_fails_before_running_anything() {
    // ctest skips names it does not know (--tests-from-file) or that match nothing:
    // a stale catalogue whose name ctest no longer has must not pass quietly.
    let r = repo();
    let newest = newest_ctest();
    let _g = lock();
    let original = std::fs::read(r.b.ctest_json()).unwrap();
    let stale = String::from_utf8(original.clone())
        .unwrap()
        .replace("\"core.add\"", "\"core.add.gone\"");
    write_keep_mtime(&r.b.ctest_json(), stale.as_bytes());
    let runs: Vec<ActionRun> = [&newest, &old_ctest()]
        .iter()
        .map(|c| run_action(&r.b.root, &pr_env(&[("D2T_CTEST", c.to_str().unwrap())])))
        .collect();
    write_keep_mtime(&r.b.ctest_json(), &original);
    for run in runs {
        assert_eq!(run.code, 1, "{}", run.out);
        assert!(
            run.out.contains("not in ctest's catalogue") && run.out.contains("core.add.gone"),
            "{}",
            run.out
        );
        assert!(run.ran.is_empty(), "{}", run.out);
    }
}

#[test]
fn no_base_runs_the_whole_suite_and_says_why() {
    let r = repo();
    let _g = lock();
    let zeros = "0".repeat(40);
    for (event, before, why) in [
        ("workflow_dispatch", "", "has no base revision"),
        ("push", zeros.as_str(), "created the branch"),
    ] {
        let run = run_action(
            &r.b.root,
            &[
                ("GITHUB_EVENT_NAME", event),
                ("D2T_PUSH_BEFORE", before),
                ("D2T_SOURCE_DIR", "src"),
                ("D2T_BUILD_DIR", "build"),
            ],
        );
        assert_eq!(run.code, 0, "{}", run.out);
        assert!(run.summary.contains(why), "{event}: {}", run.summary);
        assert!(
            run.summary.contains("the whole suite runs"),
            "{}",
            run.summary
        );
        assert_eq!(run.ran_set(), set(ALL_TESTS), "{}", run.out);
    }
}

#[test]
fn a_push_compares_with_the_previous_tip() {
    let r = repo();
    let _g = lock();
    let run = run_action(
        &r.b.root,
        &[
            ("GITHUB_EVENT_NAME", "push"),
            ("D2T_PUSH_BEFORE", &r.base),
            ("D2T_SOURCE_DIR", "src"),
            ("D2T_BUILD_DIR", "build"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert_eq!(run.ran_set(), set(CORE_SELECTED), "{}", run.out);
}

#[test]
fn a_shallow_clone_fails_with_the_fetch_depth_remedy() {
    let r = repo();
    let tmp = scratch_dir("d2t-action-shallow-");
    let url = format!("file://{}", r.b.src.display());
    git(
        tmp.path(),
        &[
            "clone", "-q", "--depth", "1", "--branch", "feature", &url, "src",
        ],
    );
    let _g = lock();
    // The push's previous tip is cut off (the script's check), and a base that
    // does not resolve (diff2test's hint).
    for env in [
        vec![("GITHUB_EVENT_NAME", "push"), ("D2T_PUSH_BEFORE", &*r.base)],
        vec![
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("D2T_BASE", &*r.base),
        ],
    ] {
        let mut env = env;
        let build = r.b.build.display().to_string();
        env.push(("D2T_SOURCE_DIR", "src"));
        env.push(("D2T_BUILD_DIR", &build));
        let run = run_action(tmp.path(), &env);
        assert_eq!(run.code, 2, "{}", run.out);
        assert!(
            run.out.contains("::error::") && run.out.contains("fetch-depth: 0"),
            "{}",
            run.out
        );
        assert!(!run.ctest_invoked(), "{}", run.out);
    }
}

/// The fixture with its hostile parts (FIXTURES_SETUP/REQUIRED, DEPENDS), in git:
/// `main`, then `feature` changing `hostile/hread.cpp` (the fixture reader); built
/// at `feature` as the mutation suite builds it.
fn hostile() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        require_tools();
        let dir = scratch_dir("d2t-action-hostile-");
        let root = dir.path().to_path_buf();
        let src = root.join("src");
        copy_fixture(&src);
        let twin = src.join("hostile/twin/a/htwin.hpp");
        let mtime =
            filetime::FileTime::from_last_modification_time(&std::fs::metadata(&twin).unwrap());
        filetime::set_file_mtime(src.join("hostile/twin/b/htwin.hpp"), mtime).unwrap();
        git(&src, &["init", "-q"]);
        let base = commit(&src, "base");
        git(&src, &["update-ref", "refs/remotes/origin/main", &base]);
        git(&src, &["checkout", "-q", "-b", "feature"]);
        let reader = src.join("hostile/hread.cpp");
        let mut text = std::fs::read_to_string(&reader).unwrap();
        text.push_str("// a change under test\n");
        std::fs::write(&reader, text).unwrap();
        commit(&src, "change the fixture reader");
        let build = root.join("build");
        run_ok(
            Command::new("bash")
                .arg(repo_root().join("fixtures/prepare-build.sh"))
                .arg(&src)
                .arg(&build)
                .arg("-DD2T_WITH_HOSTILE=ON")
                .arg(format!(
                    "-DD2T_HOSTILE_OUTSIDE={}",
                    root.join("outside").display()
                ))
                .env("D2T_BUILD_FIRST", "hfoo"),
        );
        Built::from_parts(dir, root, src, build)
    })
}

/// What a change to `hostile/hread.cpp` selects (with the fixture setup and the
/// DEPENDS writer forced in by TEST_DATA_FLOW).
const READER_SELECTED: &[&str] = &[
    "h.api.text",
    "h.dep.read",
    "h.dep.write",
    "h.fix.read",
    "h.fix.setup",
    "h.table",
];

#[test]
fn ctest_adds_no_fixture_beyond_the_selection_and_an_added_one_is_reported() {
    let b = hostile();
    let newest = newest_ctest();
    let old = old_ctest();
    let _g = lock();
    let env = |ctest: &Path| -> Vec<(String, String)> {
        vec![
            ("GITHUB_EVENT_NAME".into(), "pull_request".into()),
            ("GITHUB_BASE_REF".into(), "main".into()),
            ("D2T_SOURCE_DIR".into(), "src".into()),
            ("D2T_BUILD_DIR".into(), "build".into()),
            ("D2T_CTEST".into(), ctest.display().to_string()),
        ]
    };
    let run_with = |ctest: &Path| {
        let e = env(ctest);
        let e: Vec<(&str, &str)> = e.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run_action(&b.root, &e)
    };
    // diff2test selects the fixture's setup with its consumer: ctest runs exactly that.
    for ctest in [&newest, &old] {
        let run = run_with(ctest);
        assert_eq!(run.code, 0, "{}", run.out);
        assert_eq!(run.ran_set(), set(READER_SELECTED), "{}", run.out);
        assert!(!run.out.contains("::warning::"), "{}", run.out);
    }
    // A catalogue that hides the fixture from diff2test (and the file the two
    // tests share, which links them too): ctest still adds the setup from its
    // own list. More than selected is reported, not failed.
    let original = std::fs::read(b.ctest_json()).unwrap();
    edit_json(&b.ctest_json(), |v| {
        for t in v["tests"].as_array_mut().unwrap() {
            if t["name"] == "h.fix.read" {
                t["properties"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|p| p["name"] != "FIXTURES_REQUIRED" && p["name"] != "DEPENDS");
                for w in t["command"].as_array_mut().unwrap() {
                    if let Some(s) = w.as_str().filter(|s| s.ends_with("/hfix.txt")) {
                        *w = s.replace("/hfix.txt", "/hfix-hidden.txt").into();
                    }
                }
            }
        }
    });
    let runs: Vec<ActionRun> = [&newest, &old].iter().map(|c| run_with(c)).collect();
    write_keep_mtime(&b.ctest_json(), &original);
    for run in runs {
        assert_eq!(run.code, 0, "{}", run.out);
        assert_eq!(run.ran_set(), set(READER_SELECTED), "{}", run.out);
        assert!(
            run.out.contains("::warning::") && run.out.contains("(fixtures it added): h.fix.setup"),
            "{}",
            run.out
        );
        assert!(run.summary.contains("`h.fix.setup`"), "{}", run.summary);
    }
}

/// Issue 15's CI recipe through the action: a run with `snapshot-out` writes
/// the build's snapshot (as a main-branch job would, to upload it), and a run
/// with `base-snapshot` and a compare policy passes it on to diff2test.
#[test]
fn the_action_writes_a_snapshot_and_passes_a_base_snapshot_on() {
    let r = repo();
    let _g = lock();
    let tmp = scratch_dir("d2t-action-snap-");
    let snap = tmp.path().join("base.snapshot.json");
    let snap_s = snap.to_str().unwrap().to_owned();
    let old = old_ctest();
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_SNAPSHOT_OUT", &snap_s),
            ("D2T_CTEST", old.to_str().unwrap()),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    assert_eq!(doc["schema"], "diff2test.snapshot.v1", "{}", run.out);
    assert!(run.outputs.contains("snapshot-file="), "{}", run.outputs);
    // Passed on as the base snapshot with build_config = "compare": it was made
    // at the head commit, not at the merge base the PR starts from, but the PR
    // changes no CMake input, so the snapshot is not needed and not read (a
    // mismatch costs nothing; with a CMake edit it would fall back: the
    // mutation suite's compare.snapshot-other-* entries).
    let policy = tmp.path().join("diff2test.toml");
    std::fs::write(&policy, "build_config = \"compare\"\n").unwrap();
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_BASE_SNAPSHOT", &snap_s),
            ("D2T_POLICY", policy.to_str().unwrap()),
            ("D2T_CTEST", old.to_str().unwrap()),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(!run.out.contains("SNAPSHOT_MISMATCH"), "{}", run.out);
    assert!(run.out.contains("SUBSET_SELECTED"), "{}", run.out);
    assert!(run.ctest_invoked(), "{}", run.out);
    // A cache miss (no snapshot restored): said, and the selection goes on
    // without it (issue 31, item 4).
    let missing = tmp.path().join("not-restored.snapshot.json");
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_BASE_SNAPSHOT", missing.to_str().unwrap()),
            ("D2T_POLICY", policy.to_str().unwrap()),
            ("D2T_CTEST", old.to_str().unwrap()),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(run.out.contains("no base snapshot at"), "{}", run.out);
    assert!(run.out.contains("SUBSET_SELECTED"), "{}", run.out);
}

/// Issue 36, item 5: with `record-out` (a push to the main branch) the action
/// runs the whole suite under strace and writes its record; a pull request
/// passes it on with `record`, and a record that was not restored is said.
#[test]
fn the_action_records_the_suite_and_passes_the_record_on() {
    let r = repo();
    let _g = lock();
    let tmp = scratch_dir("d2t-action-rec-");
    let rec = tmp.path().join("base.record.json");
    let rec_s = rec.to_str().unwrap().to_owned();
    let old = old_ctest();
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_RECORD_OUT", &rec_s),
            ("D2T_CTEST", old.to_str().unwrap()),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(run.out.contains("RECORD_WRITTEN"), "{}", run.out);
    assert!(run.outputs.contains("record-file="), "{}", run.outputs);
    assert!(run.outputs.contains("state=RECORDED"), "{}", run.outputs);
    assert!(
        run.summary.contains("recorded the suite's run"),
        "{}",
        run.summary
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&rec).unwrap()).unwrap();
    assert_eq!(doc["schema"], "diff2test.record.v1", "{}", run.out);
    let n = doc["tests"].as_array().unwrap().len();
    assert!(
        n > 0 && run.ran.len() == n,
        "the whole suite ran under strace: {}",
        run.out
    );
    // A pull request passes it on.
    let run = run_action(
        &r.b.root,
        &pr_env(&[("D2T_RECORD", &rec_s), ("D2T_CTEST", old.to_str().unwrap())]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(run.out.contains("SUBSET_SELECTED"), "{}", run.out);
    assert!(run.out.contains("assume RECORD 1"), "{}", run.out);
    // Not restored: said, and the selection goes on without it.
    let missing = tmp.path().join("not-restored.record.json");
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_RECORD", missing.to_str().unwrap()),
            ("D2T_CTEST", old.to_str().unwrap()),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert!(run.out.contains("no record at"), "{}", run.out);
    assert!(!run.out.contains("assume RECORD"), "{}", run.out);
}

// ---------------------------------------------------------------- issue 31

/// A release directory as the release workflow lays it out: the archive of
/// this version for this machine, holding the binary, and its `.sha256`.
fn release_dir(corrupt: bool) -> tempfile::TempDir {
    let dir = scratch_dir("d2t-release-");
    let target = match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-musl",
        "aarch64" => "aarch64-unknown-linux-musl",
        other => panic!("no release target for {other}"),
    };
    let name = format!("diff2test-v{}-{target}", env!("CARGO_PKG_VERSION"));
    let stage = dir.path().join(&name);
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_diff2test"), stage.join("diff2test")).unwrap();
    let archive = format!("{name}.tar.gz");
    run_ok(
        Command::new("tar")
            .current_dir(dir.path())
            .args(["-czf", &archive, &name]),
    );
    std::fs::remove_dir_all(&stage).unwrap();
    let sum = String::from_utf8(run_ok(
        Command::new("sha256sum")
            .current_dir(dir.path())
            .arg(&archive),
    ))
    .unwrap();
    let sum = if corrupt {
        format!("{}{}", "0".repeat(64), &sum[64..])
    } else {
        sum
    };
    std::fs::write(dir.path().join(format!("{archive}.sha256")), sum).unwrap();
    dir
}

/// The action with default inputs installs the released binary of its
/// version (checked against its checksum), compiling nothing: no cargo and
/// no diff2test on PATH.
#[test]
fn the_action_installs_the_released_binary_by_default_without_compiling() {
    let r = repo();
    let ctest = newest_ctest();
    let rel = release_dir(false);
    let url = format!("file://{}", rel.path().display());
    let _g = lock();
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_INSTALL", "auto"),
            ("D2T_RELEASE_URL", &url),
            ("D2T_PIP_SPEC", "/nonexistent/no-wheel.whl"),
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("D2T_CTEST", ctest.to_str().unwrap()),
        ]),
    );
    assert!(
        run.out.contains("installed the released diff2test"),
        "{}",
        run.out
    );
    assert!(!run.out.contains("cargo install"), "{}", run.out);
    assert_subset_run(&run, "--tests-from-file");
    // A checksum that does not match is never run.
    let bad = release_dir(true);
    let url = format!("file://{}", bad.path().display());
    let run = run_action(
        &r.b.root,
        &pr_env(&[
            ("D2T_INSTALL", "release"),
            ("D2T_RELEASE_URL", &url),
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ]),
    );
    assert_eq!(run.code, 1, "{}", run.out);
    assert!(
        run.out.contains("does not match its checksum"),
        "{}",
        run.out
    );
    assert!(!run.ctest_invoked(), "{}", run.out);
}

/// Without `D2T_RELEASE_URL`, the release comes from the repository the
/// runner fetched the action from (its `_actions/OWNER/REPO/REF` path), not
/// from the workflow's repository (`github.action_repository` is empty in a
/// composite action: the install 404ed, then fell back to pip and cargo).
/// The release-repository input overrides it.
#[test]
fn the_action_installs_from_the_repository_it_was_fetched_from() {
    let r = repo();
    let rel = release_dir(false);
    let host = scratch_dir("d2t-github-");
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    for owner_repo in ["acme/diff2test", "fork/d2t"] {
        let at = host
            .path()
            .join(owner_repo)
            .join("releases/download")
            .join(&version);
        std::fs::create_dir_all(&at).unwrap();
        for e in std::fs::read_dir(rel.path()).unwrap().flatten() {
            std::fs::copy(e.path(), at.join(e.file_name())).unwrap();
        }
    }
    let github = format!("file://{}", host.path().display());
    let fetched = "/home/runner/work/_actions/acme/diff2test/v1/.github/actions/diff2test";
    let _g = lock();
    for (extra, want) in [(None, "acme/diff2test"), (Some("fork/d2t"), "fork/d2t")] {
        let mut env = vec![
            ("D2T_INSTALL", "release"),
            ("D2T_GITHUB_URL", github.as_str()),
            ("GITHUB_ACTION_PATH", fetched),
            ("GITHUB_REPOSITORY", "user/app"),
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ];
        if let Some(x) = extra {
            env.push(("D2T_RELEASE_REPOSITORY", x));
        }
        let run = run_action(&r.b.root, &pr_env(&env));
        assert_eq!(run.code, 0, "{want}: {}", run.out);
        // Only `want`'s copy exists under that name: remove it and the install fails.
        let moved = host.path().join(want).join("releases");
        let aside = host.path().join("aside");
        std::fs::rename(&moved, &aside).unwrap();
        let run = run_action(&r.b.root, &pr_env(&env));
        assert_eq!(run.code, 1, "{want}: {}", run.out);
        assert!(
            run.out
                .contains(&format!("{github}/{want}/releases/download/{version}/")),
            "{want}: {}",
            run.out
        );
        std::fs::rename(&aside, &moved).unwrap();
    }
}

/// A merge queue's group compares with its base_sha.
#[test]
fn a_merge_group_compares_with_its_base_sha() {
    let r = repo();
    let _g = lock();
    let run = run_action(
        &r.b.root,
        &[
            ("GITHUB_EVENT_NAME", "merge_group"),
            ("D2T_MERGE_GROUP_BASE", &r.base),
            ("D2T_SOURCE_DIR", "src"),
            ("D2T_BUILD_DIR", "build"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.out);
    assert_eq!(run.ran_set(), set(CORE_SELECTED), "{}", run.out);
}

/// `--base` compares from the merge base by default: a base branch that
/// moved on (a file added there) is no change of the head's; with
/// `--no-merge-base` the trees are compared directly and that file looks
/// deleted.
#[test]
fn base_compares_from_the_merge_base_by_default() {
    let r = repo();
    let mut args = r.b.base_args();
    args.extend(["--ci", "--base", "origin/moved", "--head", "HEAD"].map(String::from));
    let run = run_bin(&args, None);
    assert_eq!((run.code, run.state()), (0, "SUBSET_SELECTED"), "{run:?}");
    assert_eq!(run.names(), CORE_SELECTED);
    args.push("--no-merge-base".into());
    let run = run_bin(&args, None);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains("reason CHANGE_DELETED: CHANGES.txt"),
        "{}",
        run.stderr
    );
}

/// `--base X --head X`: nothing changed, an empty selection (exit 0), not a
/// usage error.
#[test]
fn the_same_base_and_head_select_nothing() {
    let r = repo();
    let mut args = r.b.base_args();
    args.extend(["--ci", "--base", "HEAD", "--head", "HEAD"].map(String::from));
    let run = run_bin(&args, None);
    assert_eq!((run.code, run.state()), (0, "SUBSET_SELECTED"), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("the change set is empty"),
        "{}",
        run.stderr
    );
}
