//! Change sources on a real git repository around the fixture (issue 5): every
//! scenario gives the same outcome via `--base/--head` (read in-process) and via
//! the equivalent explicit list; CI mode; no external process.

mod common;

use common::*;
use std::path::Path;

struct Repo {
    b: Built,
    commits: Vec<(String, String)>, // (scenario, sha)
}

fn commit(dir: &Path, msg: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", msg]);
    git(dir, &["rev-parse", "HEAD"])
}

/// Builds the history first, then the build tree at the final commit (so evidence is fresh).
fn repo() -> &'static Repo {
    static R: std::sync::OnceLock<Repo> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        let dir = scratch_dir("d2t-git-");
        let root = dir.path().to_path_buf();
        let src = root.join("src");
        // A second repository to use as a submodule.
        let sub = root.join("subrepo");
        std::fs::create_dir_all(&sub).unwrap();
        git(&sub, &["init", "-q"]);
        std::fs::write(sub.join("lib.txt"), "v1\n").unwrap();
        commit(&sub, "sub v1");

        let b = build_fixture_in(dir, false);
        git(&src, &["init", "-q"]);
        std::fs::create_dir_all(src.join("data")).unwrap();
        std::fs::write(src.join("data/old.txt"), "old\n").unwrap();
        git(
            &src,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                sub.to_str().unwrap(),
                "third_party/sub",
            ],
        );
        let mut commits = vec![("base".to_owned(), commit(&src, "base"))];

        let hdr = src.join("libs/util/include/util/strings.hpp");
        let mut text = std::fs::read_to_string(&hdr).unwrap();
        text.push_str("\n\n");
        std::fs::write(&hdr, text).unwrap();
        commits.push((
            "header-whitespace".into(),
            commit(&src, "whitespace-only header edit"),
        ));

        git(&src, &["mv", "README.md", "NOTES.md"]);
        commits.push(("rename".into(), commit(&src, "rename")));

        git(&src, &["rm", "-q", "data/old.txt"]);
        commits.push(("deletion".into(), commit(&src, "deletion")));

        let cm = src.join("libs/core/CMakeLists.txt");
        let mut text = std::fs::read_to_string(&cm).unwrap();
        text.push_str("# comment\n");
        std::fs::write(&cm, text).unwrap();
        commits.push(("cmakelists".into(), commit(&src, "cmakelists edit")));

        std::fs::write(src.join("vcpkg.json"), "{\"name\":\"x\"}\n").unwrap();
        commits.push(("lockfile".into(), commit(&src, "lockfile add")));

        std::fs::write(sub.join("lib.txt"), "v2\n").unwrap();
        let v2 = commit(&sub, "sub v2");
        let subdir = src.join("third_party/sub");
        git(&subdir, &["fetch", "-q", "origin"]);
        git(&subdir, &["checkout", "-q", &v2]);
        commits.push(("submodule".into(), commit(&src, "submodule bump")));

        std::fs::create_dir_all(src.join("notes")).unwrap();
        std::fs::write(src.join("notes/a b\nc.txt"), "x\n").unwrap();
        commits.push((
            "odd-name".into(),
            commit(&src, "path with space and newline"),
        ));

        // Evidence at the final commit.
        prepare(&b);
        Repo { b, commits }
    })
}

fn build_fixture_in(dir: tempfile::TempDir, build: bool) -> Built {
    let root = dir.path().to_path_buf();
    let src = root.join("src");
    let bld = root.join("build");
    copy_fixture(&src);
    let b = Built::from_parts(dir, root, src, bld);
    if build {
        prepare(&b);
    }
    b
}

fn sha(r: &Repo, name: &str) -> String {
    r.commits.iter().find(|(n, _)| n == name).unwrap().1.clone()
}

fn prev(r: &Repo, name: &str) -> String {
    let i = r.commits.iter().position(|(n, _)| n == name).unwrap();
    r.commits[i - 1].1.clone()
}

fn via_git(r: &Repo, name: &str) -> Run {
    let base = prev(r, name);
    let head = sha(r, name);
    let mut args = r.b.base_args();
    args.extend(["--base".into(), base, "--head".into(), head]);
    run_bin(&args, None)
}

fn via_list(r: &Repo, paths: &[&str]) -> Run {
    let mut args = r.b.base_args();
    args.extend(["--changed-from".into(), "-".into(), "-z".into()]);
    let mut input = Vec::new();
    for p in paths {
        input.extend_from_slice(p.as_bytes());
        input.push(0);
    }
    run_bin(&args, Some(&input))
}

fn same(r: &Repo, name: &str, paths: &[&str], code: i32, reason: Option<&str>) {
    let g = via_git(r, name);
    let l = via_list(r, paths);
    assert_eq!(g.code, code, "{name} via git: {}", g.stderr);
    assert_eq!(l.code, code, "{name} via list: {}", l.stderr);
    assert_eq!(g.stdout, l.stdout, "{name}: selections differ");
    assert_eq!(g.stderr, l.stderr, "{name}: explanations differ");
    if let Some(reason) = reason {
        assert!(
            g.codes().iter().any(|c| c == reason),
            "{name}: expected {reason}: {}",
            g.stderr
        );
    }
}

#[test]
fn whitespace_only_header_edit_still_selects_its_dependents() {
    let r = repo();
    same(
        r,
        "header-whitespace",
        &["libs/util/include/util/strings.hpp"],
        0,
        None,
    );
    assert_eq!(
        via_git(r, "header-whitespace").names(),
        ["util.join", "util.spaced", "util.str+concat"]
    );
}

#[test]
fn rename_contributes_old_and_new_path() {
    let r = repo();
    same(
        r,
        "rename",
        &["NOTES.md", "README.md"],
        3,
        Some("CHANGE_DELETED"),
    );
    assert!(via_git(r, "rename")
        .codes()
        .contains(&"CHANGE_UNKNOWN".to_owned()));
}

#[test]
fn deletion_falls_back() {
    same(
        repo(),
        "deletion",
        &["data/old.txt"],
        3,
        Some("CHANGE_DELETED"),
    );
}

#[test]
fn cmakelists_edit_falls_back() {
    same(
        repo(),
        "cmakelists",
        &["libs/core/CMakeLists.txt"],
        3,
        Some("CHANGE_BUILD_CONFIG"),
    );
}

#[test]
fn lockfile_add_falls_back_as_external_resource() {
    same(
        repo(),
        "lockfile",
        &["vcpkg.json"],
        3,
        Some("CHANGE_EXTERNAL_RESOURCE"),
    );
}

#[test]
fn submodule_bump_is_a_changed_path() {
    same(
        repo(),
        "submodule",
        &["third_party/sub"],
        3,
        Some("CHANGE_UNKNOWN"),
    );
}

#[test]
fn path_with_space_and_newline_is_exact() {
    let r = repo();
    same(
        r,
        "odd-name",
        &["notes/a b\nc.txt"],
        3,
        Some("CHANGE_UNKNOWN"),
    );
    assert!(
        via_git(r, "odd-name")
            .stderr
            .contains("notes/a b c.txt: not in any dependency file"),
        "{}",
        via_git(r, "odd-name").stderr
    );
}

#[test]
fn explain_changes_classifies_every_path() {
    let r = repo();
    let mut args = r.b.base_args();
    args.extend([
        "--base".into(),
        sha(r, "base"),
        "--head".into(),
        sha(r, "odd-name"),
        "--explain-changes".into(),
    ]);
    let g = run_bin(&args, None);
    assert_eq!(g.code, 3);
    for want in [
        "change libs/util/include/util/strings.hpp: header (prerequisite in dependency files)",
        "change libs/core/CMakeLists.txt: build-config",
        "change vcpkg.json: external",
        "change README.md: unresolved",
        "change third_party/sub: unresolved",
    ] {
        assert!(g.stderr.contains(want), "missing {want:?} in\n{}", g.stderr);
    }
    // Same classification on a repeated run.
    assert_eq!(run_bin(&args, None).stderr, g.stderr);
}

#[test]
fn unresolvable_revision_is_a_usage_error() {
    let r = repo();
    let mut args = r.b.base_args();
    args.extend([
        "--base".into(),
        "no-such-rev".into(),
        "--head".into(),
        "HEAD".into(),
    ]);
    let g = run_bin(&args, None);
    assert_eq!(g.code, 2, "{}", g.stderr);
    assert!(g.stderr.contains("no-such-rev"), "{}", g.stderr);
    assert_eq!(g.stdout, "");
}

#[test]
fn ci_mode_never_reads_the_working_tree() {
    let r = repo();
    let mut args = r.b.base_args();
    args.extend(["--base".into(), sha(r, "base")]);
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    let out = cmd.args(&args).env("CI", "true").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("CI mode"));
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    let out = cmd
        .args(&args)
        .arg("--ci")
        .env_remove("CI")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Outside CI mode, --base alone compares with the working tree (an untracked file counts).
    std::fs::write(r.b.src.join("untracked-note.txt"), "x\n").unwrap();
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    let out = cmd
        .args(&args)
        .arg("--no-ci")
        .arg("--explain-changes")
        .env("CI", "true")
        .output()
        .unwrap();
    std::fs::remove_file(r.b.src.join("untracked-note.txt")).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("change untracked-note.txt: unresolved"),
        "{err}"
    );
    // An explicit list with --base is refused.
    let mut both = r.b.base_args();
    both.extend([
        "--base".into(),
        sha(r, "base"),
        "--head".into(),
        "HEAD".into(),
        "--changed".into(),
        "x".into(),
    ]);
    assert_eq!(run_bin(&both, None).code, 2);
}

#[test]
fn git_change_source_starts_no_process() {
    let r = repo();
    let with_path = via_git(r, "header-whitespace");
    let mut args = r.b.base_args();
    args.extend([
        "--base".into(),
        prev(r, "header-whitespace"),
        "--head".into(),
        sha(r, "header-whitespace"),
    ]);
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = assert_cmd::Command::cargo_bin("diff2test").unwrap();
    let out = cmd.args(&args).env("PATH", empty.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(with_path.code));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), with_path.stdout);
    assert_eq!(String::from_utf8(out.stderr).unwrap(), with_path.stderr);
}
