//! Integration tests for `diff2test::vcs` against real git repositories.
//!
//! The tests use the `git` executable to *build* repositories; the code under test never
//! runs it (see `never_spawns_a_process`).
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use diff2test::vcs::{
    changed_paths, changes_with_vouched, ChangeKind, VcsChange, VcsError, Vouched,
};
use tempfile::TempDir;

const INSTALL_GIT: &str = "install git (apt-get install git)";

/// Runs git in `dir`, isolated from the machine's git configuration; returns trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "user.name=diff2test",
            "-c",
            "user.email=diff2test@example.invalid",
            "-c",
            "core.autocrlf=false",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap_or_else(|e| panic!("{INSTALL_GIT}: cannot run `git`: {e}"));
    assert!(
        output.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A fresh repository in a temp dir. The returned path is canonical, so it compares equal
/// to what `changed_paths` reports.
fn new_repo() -> (TempDir, PathBuf) {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("repo");
    fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q"]);
    (tmp, root)
}

fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn commit_all(root: &Path, msg: &str) -> String {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "--allow-empty", "-m", msg]);
    git(root, &["rev-parse", "HEAD"])
}

fn changes(dir: &Path, base: &str, head: Option<&str>) -> Vec<VcsChange> {
    changed_paths(dir, base, head)
        .unwrap_or_else(|e| panic!("changed_paths({}, {base}, {head:?}): {e}", dir.display()))
}

fn expect(root: &Path, items: &[(&str, ChangeKind)]) -> Vec<VcsChange> {
    let mut v: Vec<VcsChange> = items
        .iter()
        .map(|(rel, kind)| VcsChange {
            path: root.join(rel),
            kind: *kind,
        })
        .collect();
    v.sort_by(|a, b| a.path.cmp(&b.path));
    v
}

/// Two commits: `base` with `a.txt`, `b.txt`, `src/lib.c`; then `edit` applied and committed.
fn two_commits(edit: impl FnOnce(&Path)) -> (TempDir, PathBuf, String, String) {
    let (tmp, root) = new_repo();
    write(&root, "a.txt", "alpha\n");
    write(&root, "b.txt", "beta\n");
    write(&root, "src/lib.c", "int f(void) { return 1; }\n");
    let base = commit_all(&root, "base");
    edit(&root);
    let head = commit_all(&root, "head");
    (tmp, root, base, head)
}

#[test]
fn content_edit_is_modified() {
    let (_t, root, base, head) =
        two_commits(|r| write(r, "src/lib.c", "int f(void) { return 2; }\n"));
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(&root, &[("src/lib.c", ChangeKind::Modified)])
    );
}

#[test]
fn rename_reports_old_and_new_paths() {
    let (_t, root, base, head) = two_commits(|r| {
        git(r, &["mv", "src/lib.c", "src/renamed.c"]);
    });
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(
            &root,
            &[
                ("src/lib.c", ChangeKind::Deleted),
                ("src/renamed.c", ChangeKind::Added)
            ]
        )
    );
}

#[test]
fn deletion_and_addition() {
    let (_t, root, base, head) = two_commits(|r| {
        fs::remove_file(r.join("a.txt")).unwrap();
        write(r, "new/dir/c.txt", "gamma\n");
    });
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(
            &root,
            &[
                ("a.txt", ChangeKind::Deleted),
                ("new/dir/c.txt", ChangeKind::Added)
            ]
        )
    );
    // Reversed direction swaps the kinds.
    assert_eq!(
        changes(&root, &head, Some(&base)),
        expect(
            &root,
            &[
                ("a.txt", ChangeKind::Added),
                ("new/dir/c.txt", ChangeKind::Deleted)
            ]
        )
    );
}

#[cfg(unix)]
#[test]
fn mode_change_is_reported() {
    use std::os::unix::fs::PermissionsExt;
    let (_t, root, base, head) = two_commits(|r| {
        fs::set_permissions(r.join("b.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    });
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(&root, &[("b.txt", ChangeKind::TypeOrModeChanged)])
    );
}

#[cfg(unix)]
#[test]
fn file_to_symlink_and_file_to_directory() {
    let (_t, root, base, head) = two_commits(|r| {
        fs::remove_file(r.join("a.txt")).unwrap();
        std::os::unix::fs::symlink("b.txt", r.join("a.txt")).unwrap();
        fs::remove_file(r.join("b.txt")).unwrap();
        write(r, "b.txt/inner.txt", "now a directory\n");
    });
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(
            &root,
            &[
                ("a.txt", ChangeKind::TypeOrModeChanged),
                ("b.txt", ChangeKind::Deleted),
                ("b.txt/inner.txt", ChangeKind::Added)
            ]
        )
    );
}

#[test]
fn identical_trees_are_empty() {
    let (_t, root, base, _head) = two_commits(|_| {});
    // `two_commits` made an empty commit on top: different commits, same tree.
    assert!(changes(&root, &base, Some("HEAD")).is_empty());
    assert!(changes(&root, "HEAD", Some("HEAD")).is_empty());
    // A clean working tree against HEAD.
    assert!(changes(&root, "HEAD", None).is_empty());
}

#[test]
fn revision_names_resolve() {
    let (_t, root, base, head) = two_commits(|r| write(r, "a.txt", "changed\n"));
    git(&root, &["tag", "v1", &base]);
    git(
        &root,
        &["tag", "-a", "-m", "annotated", "v1-annotated", &base],
    );
    git(&root, &["branch", "feature", &head]);
    // A clone has remote-tracking branches such as origin/main.
    let clone = root.parent().unwrap().join("clone");
    git(
        root.parent().unwrap(),
        &[
            "clone",
            "-q",
            &format!("file://{}", root.display()),
            "clone",
        ],
    );
    let want = expect(&root, &[("a.txt", ChangeKind::Modified)]);
    for (b, h) in [
        ("HEAD~1", "HEAD"),
        ("HEAD^", "main"),
        ("v1", "feature"),
        ("v1-annotated", "refs/heads/feature"),
        (&base[..7], &head[..12]),
        (base.as_str(), head.as_str()),
        ("main~1", "@"),
    ] {
        assert_eq!(changes(&root, b, Some(h)), want, "{b}..{h}");
    }
    let want_clone = expect(&clone, &[("a.txt", ChangeKind::Modified)]);
    assert_eq!(
        changes(&clone, "origin/main~1", Some("origin/main")),
        want_clone
    );
    assert_eq!(changes(&clone, "origin/main~1", None), want_clone);
}

#[test]
fn unresolvable_revisions_are_typed_errors() {
    let (_t, root, base, _head) = two_commits(|r| write(r, "a.txt", "x\n"));
    for bad in [
        "no-such-branch",
        "HEAD~99",
        "0123456789abcdef0123456789abcdef01234567",
        "",
        "main..HEAD",
        "HEAD:a.txt",
    ] {
        match changed_paths(&root, bad, Some("HEAD")) {
            Err(VcsError::UnresolvedRevision { rev, .. }) => assert_eq!(rev, bad),
            other => panic!("base {bad:?}: expected UnresolvedRevision, got {other:?}"),
        }
        match changed_paths(&root, &base, Some(bad)) {
            Err(VcsError::UnresolvedRevision { rev, detail }) => {
                assert_eq!(rev, bad);
                let shown = VcsError::UnresolvedRevision { rev, detail }.to_string();
                assert!(shown.contains("does not resolve"), "{shown}");
            }
            other => panic!("head {bad:?}: expected UnresolvedRevision, got {other:?}"),
        }
    }
}

#[test]
fn no_repository_is_a_typed_error() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("plain");
    fs::create_dir(&dir).unwrap();
    // Guard: the temp dir must not itself sit inside a repository.
    let inside = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(&dir)
        .output();
    if matches!(inside, Ok(ref o) if o.status.success()) {
        eprintln!("skipping: the temp dir is inside a git repository");
        return;
    }
    assert!(matches!(
        changed_paths(&dir, "HEAD", None),
        Err(VcsError::NoRepository { .. })
    ));
    assert!(matches!(
        changed_paths(&dir.join("missing"), "HEAD", None),
        Err(VcsError::NoRepository { .. })
    ));
}

#[test]
fn paths_with_spaces_and_newlines_are_exact() {
    let (_t, root, base, head) = two_commits(|r| {
        write(r, "dir with space/file name.txt", "s\n");
        write(r, "line\nbreak.txt", "n\n");
        write(r, " leading and trailing ", "t\n");
    });
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(
            &root,
            &[
                ("dir with space/file name.txt", ChangeKind::Added),
                ("line\nbreak.txt", ChangeKind::Added),
                (" leading and trailing ", ChangeKind::Added),
            ]
        )
    );
}

#[cfg(unix)]
#[test]
fn non_utf8_paths_do_not_panic_and_are_exact() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let name = OsStr::from_bytes(b"bad-\xff\xfe.txt");
    let (_t, root, base, head) = two_commits(|r| fs::write(r.join(name), "x\n").unwrap());
    assert_eq!(
        changes(&root, &base, Some(&head)),
        vec![VcsChange {
            path: root.join(name),
            kind: ChangeKind::Added
        }]
    );
    // In the working tree too, tracked (edited) and untracked.
    fs::write(root.join(name), "y\n").unwrap();
    let untracked = OsStr::from_bytes(b"new-\x80.txt");
    fs::write(root.join(untracked), "z\n").unwrap();
    assert_eq!(
        changes(&root, &head, None),
        vec![
            VcsChange {
                path: root.join(name),
                kind: ChangeKind::Modified
            },
            VcsChange {
                path: root.join(untracked),
                kind: ChangeKind::Untracked
            },
        ]
    );
}

#[test]
fn source_dir_may_be_a_subdirectory() {
    let (_t, root, base, head) = two_commits(|r| {
        write(r, "src/lib.c", "changed\n");
        write(r, "a.txt", "outside the source dir\n");
    });
    let want = expect(
        &root,
        &[
            ("a.txt", ChangeKind::Modified),
            ("src/lib.c", ChangeKind::Modified),
        ],
    );
    assert_eq!(changes(&root.join("src"), &base, Some(&head)), want);
    // A relative source dir also yields absolute paths.
    let rel = pathdiff(&root.join("src"));
    if let Some(rel) = rel {
        assert_eq!(changes(&rel, &base, Some(&head)), want);
    }
    assert!(want.iter().all(|c| c.path.is_absolute()));
}

/// `target` relative to the current directory, when both share a prefix.
fn pathdiff(target: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    let common = cwd.ancestors().find(|a| target.starts_with(a))?;
    let ups = cwd.strip_prefix(common).ok()?.components().count();
    let mut rel = PathBuf::new();
    for _ in 0..ups {
        rel.push("..");
    }
    rel.push(target.strip_prefix(common).ok()?);
    Some(rel)
}

/// A superproject `root` with submodule `sub` (from repository `lib`); returns commit ids of
/// the superproject before and after the pointer bump, and the submodule's two commits.
fn repo_with_submodule() -> (TempDir, PathBuf, String, String) {
    let (tmp, root) = new_repo();
    let lib = tmp.path().canonicalize().unwrap().join("lib");
    fs::create_dir(&lib).unwrap();
    git(&lib, &["init", "-q"]);
    write(&lib, "lib.h", "v1\n");
    commit_all(&lib, "lib v1");
    write(&root, "main.c", "int main(void) { return 0; }\n");
    commit_all(&root, "root");
    git(
        &root,
        &[
            "submodule",
            "add",
            "-q",
            &format!("file://{}", lib.display()),
            "sub",
        ],
    );
    let base = commit_all(&root, "add submodule");
    // Bump: a new commit in the submodule, recorded by the superproject.
    write(&root, "sub/lib.h", "v2\n");
    commit_all(&root.join("sub"), "lib v2");
    let head = commit_all(&root, "bump submodule");
    (tmp, root, base, head)
}

#[test]
fn submodule_pointer_bump_is_one_path() {
    let (_t, root, base, head) = repo_with_submodule();
    assert_eq!(
        changes(&root, &base, Some(&head)),
        expect(&root, &[("sub", ChangeKind::SubmoduleMoved)])
    );
    // Adding the submodule: .gitmodules and the gitlink.
    assert_eq!(
        changes(&root, &format!("{base}~1"), Some(&base)),
        expect(
            &root,
            &[
                (".gitmodules", ChangeKind::Added),
                ("sub", ChangeKind::Added)
            ]
        )
    );
}

#[test]
fn submodule_in_the_working_tree() {
    let (_t, root, base, head) = repo_with_submodule();
    // Clean: nothing changed against HEAD; the checkout differs from base.
    assert!(changes(&root, &head, None).is_empty());
    assert_eq!(
        changes(&root, &base, None),
        expect(&root, &[("sub", ChangeKind::SubmoduleMoved)])
    );
    // An uncommitted edit inside the submodule is reported as the inner path.
    write(&root, "sub/lib.h", "local edit\n");
    write(&root, "sub/extra.h", "untracked in the submodule\n");
    assert_eq!(
        changes(&root, &head, None),
        expect(
            &root,
            &[
                ("sub/extra.h", ChangeKind::Untracked),
                ("sub/lib.h", ChangeKind::Modified)
            ]
        )
    );
    // Checking out another commit in the submodule (not committed in the superproject).
    fs::remove_file(root.join("sub/extra.h")).unwrap();
    git(&root.join("sub"), &["checkout", "-q", "--", "lib.h"]);
    git(&root.join("sub"), &["checkout", "-q", "HEAD~1"]);
    assert_eq!(
        changes(&root, &head, None),
        expect(&root, &[("sub", ChangeKind::SubmoduleMoved)])
    );
}

#[test]
fn working_tree_comparison() {
    let (_t, root, base, _head) = two_commits(|r| {
        write(r, ".gitignore", "*.log\nbuild/\n");
    });
    // base has a.txt, b.txt, src/lib.c (no .gitignore yet).
    write(&root, "a.txt", "unstaged edit\n");
    write(&root, "untracked.txt", "new\n");
    write(&root, "deep/er/untracked.c", "new\n");
    write(&root, "ignored.log", "ignored\n");
    write(&root, "build/out.o", "ignored dir\n");
    write(&root, "staged.txt", "staged\n");
    git(&root, &["add", "staged.txt"]);
    fs::remove_file(root.join("b.txt")).unwrap();
    // A staged edit.
    write(&root, "src/lib.c", "staged edit\n");
    git(&root, &["add", "src/lib.c"]);
    assert_eq!(
        changes(&root, &base, None),
        expect(
            &root,
            &[
                (".gitignore", ChangeKind::Added),
                ("a.txt", ChangeKind::Modified),
                ("b.txt", ChangeKind::Deleted),
                ("deep/er/untracked.c", ChangeKind::Untracked),
                ("src/lib.c", ChangeKind::Modified),
                ("staged.txt", ChangeKind::Added),
                ("untracked.txt", ChangeKind::Untracked),
            ]
        )
    );
    // Staged, then undone in the working tree only: still reported (conservative).
    write(&root, "src/lib.c", "int f(void) { return 1; }\n");
    let got = changes(&root, &base, None);
    assert!(
        got.contains(&VcsChange {
            path: root.join("src/lib.c"),
            kind: ChangeKind::Modified
        }),
        "{got:?}"
    );
    assert!(
        !got.iter()
            .any(|c| c.path.ends_with("ignored.log") || c.path.starts_with(root.join("build"))),
        "{got:?}"
    );
}

#[test]
fn tracked_file_in_ignored_directory_is_still_compared() {
    let (_t, root, _base, head) = two_commits(|r| {
        write(r, "build/keep.txt", "tracked\n");
        write(r, ".gitignore", "build/\n");
        git(r, &["add", "-f", "build/keep.txt"]);
    });
    write(&root, "build/keep.txt", "edited\n");
    write(&root, "build/junk.o", "ignored\n");
    assert_eq!(
        changes(&root, &head, None),
        expect(&root, &[("build/keep.txt", ChangeKind::Modified)])
    );
}

#[cfg(unix)]
#[test]
fn working_tree_mode_and_symlink_changes() {
    use std::os::unix::fs::PermissionsExt;
    let (_t, root, _base, head) =
        two_commits(|r| std::os::unix::fs::symlink("a.txt", r.join("link")).unwrap());
    fs::set_permissions(root.join("b.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(root.join("link")).unwrap();
    std::os::unix::fs::symlink("b.txt", root.join("link")).unwrap();
    assert_eq!(
        changes(&root, &head, None),
        expect(
            &root,
            &[
                ("b.txt", ChangeKind::TypeOrModeChanged),
                ("link", ChangeKind::Modified)
            ]
        )
    );
}

#[test]
fn untracked_nested_repository_is_one_path() {
    let (_t, root, _base, head) = two_commits(|_| {});
    let nested = root.join("vendor/nested");
    fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    write(&nested, "x.c", "x\n");
    assert_eq!(
        changes(&root, &head, None),
        expect(&root, &[("vendor/nested", ChangeKind::Untracked)])
    );
}

#[test]
fn shallow_clone_without_base_is_unresolved() {
    let (_t, root, base, head) = two_commits(|r| write(r, "a.txt", "x\n"));
    let parent = root.parent().unwrap();
    git(
        parent,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &format!("file://{}", root.display()),
            "shallow",
        ],
    );
    let shallow = parent.join("shallow");
    for bad in [base.as_str(), &base[..10], "HEAD~1", "HEAD^"] {
        match changed_paths(&shallow, bad, Some("HEAD")) {
            Err(VcsError::UnresolvedRevision { .. }) => {}
            other => panic!("shallow base {bad:?}: expected UnresolvedRevision, got {other:?}"),
        }
    }
    assert!(changes(&shallow, &head, Some("HEAD")).is_empty());
}

#[test]
fn linked_worktree_is_supported() {
    let (_t, root, base, head) = two_commits(|r| write(r, "a.txt", "x\n"));
    let wt = root.parent().unwrap().join("wt");
    git(
        &root,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            wt.to_str().unwrap(),
            &head,
        ],
    );
    write(&wt, "b.txt", "edited in the linked worktree\n");
    assert_eq!(
        changes(&wt, &base, None),
        expect(
            &wt,
            &[
                ("a.txt", ChangeKind::Modified),
                ("b.txt", ChangeKind::Modified)
            ]
        )
    );
    assert_eq!(
        changes(&wt, &base, Some(&head)),
        expect(&wt, &[("a.txt", ChangeKind::Modified)])
    );
}

#[cfg(unix)]
#[test]
fn symlinked_leading_directory_hides_tracked_files() {
    // git does not follow a symlinked directory for tracked paths: src/lib.c is deleted
    // and the symlink `src` is a new, untracked entry.
    let (_t, root, _base, head) = two_commits(|_| {});
    let elsewhere = root.parent().unwrap().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("lib.c"), "int f(void) { return 1; }\n").unwrap();
    fs::remove_dir_all(root.join("src")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("src")).unwrap();
    assert_eq!(
        changes(&root, &head, None),
        expect(
            &root,
            &[
                ("src", ChangeKind::Untracked),
                ("src/lib.c", ChangeKind::Deleted)
            ]
        )
    );
}

#[test]
fn unborn_head_is_unresolved() {
    let (_t, root) = new_repo();
    write(&root, "a.txt", "a\n");
    assert!(matches!(
        changed_paths(&root, "HEAD", None),
        Err(VcsError::UnresolvedRevision { .. })
    ));
}

/// As root (CI), a repository owned by another user is still read: gix gives it reduced
/// trust instead of refusing it the way `git` does ("dubious ownership").
#[cfg(unix)]
#[test]
fn repository_owned_by_another_user_is_read() {
    use std::os::unix::fs::MetadataExt;
    let (_t, root, base, head) = two_commits(|r| write(r, "a.txt", "x\n"));
    if fs::metadata(&root).unwrap().uid() != 0 {
        eprintln!("skipping: needs root to hand the repository to another user");
        return;
    }
    write(&root, "b.txt", "unstaged\n");
    let want_head = changes(&root, &base, Some(&head));
    let want_wt = changes(&root, &base, None);
    for entry in walk(&root) {
        std::os::unix::fs::lchown(&entry, Some(65534), Some(65534)).unwrap();
    }
    assert_eq!(changes(&root, &base, Some(&head)), want_head);
    assert_eq!(changes(&root, &base, None), want_wt);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

// ---- Differential test against `git diff` -------------------------------------------

/// A tiny deterministic PRNG (xorshift), so the test needs no extra crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// git's NUL-separated path output as absolute paths under `root`.
#[cfg(unix)]
fn git_paths(root: &Path, args: &[&str]) -> std::collections::BTreeSet<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap_or_else(|e| panic!("{INSTALL_GIT}: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| {
            root.join(std::ffi::OsStr::from_bytes(
                p.strip_suffix(b"/").unwrap_or(p),
            ))
        })
        .collect()
}

/// Random edits: create, edit, delete, chmod, file<->symlink, file<->directory.
#[cfg(unix)]
fn mutate(root: &Path, rng: &mut Rng, steps: usize) {
    use std::os::unix::fs::PermissionsExt;
    const DIRS: [&str; 6] = ["", "d", "d/e", "sp ace", "ign", "x/y/z"];
    const NAMES: [&str; 9] = [
        "a.c", "b.h", "c d.txt", "é.txt", "n\nl", "k.log", "m", "p.cmake", "q",
    ];
    for _ in 0..steps {
        let rel = Path::new(DIRS[rng.below(DIRS.len())]).join(NAMES[rng.below(NAMES.len())]);
        let path = root.join(&rel);
        let meta = fs::symlink_metadata(&path).ok();
        match rng.below(7) {
            0 | 1 => {
                if meta.as_ref().is_some_and(|m| m.is_dir()) {
                    fs::remove_dir_all(&path).unwrap();
                } else if meta.is_some() {
                    fs::remove_file(&path).unwrap();
                }
                if fs::symlink_metadata(path.parent().unwrap()).is_ok_and(|m| !m.is_dir()) {
                    fs::remove_file(path.parent().unwrap()).unwrap();
                }
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, format!("{}\n", rng.next() % 4)).unwrap();
            }
            2 if meta.as_ref().is_some_and(|m| m.is_file()) => fs::remove_file(&path).unwrap(),
            3 if meta.as_ref().is_some_and(|m| m.is_file()) => {
                let mode = meta.unwrap().permissions().mode() ^ 0o111;
                fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            }
            4 if meta.as_ref().is_some_and(|m| m.is_file()) => {
                fs::remove_file(&path).unwrap();
                std::os::unix::fs::symlink(NAMES[rng.below(NAMES.len())], &path).unwrap();
            }
            5 if meta
                .as_ref()
                .is_some_and(|m| m.is_file() || m.file_type().is_symlink()) =>
            {
                // The file becomes a directory holding a file.
                fs::remove_file(&path).unwrap();
                fs::create_dir_all(&path).unwrap();
                fs::write(path.join("inner.c"), "i\n").unwrap();
            }
            6 if meta.as_ref().is_some_and(|m| m.is_file()) => {
                fs::write(&path, format!("edit {}\n", rng.next() % 3)).unwrap();
            }
            _ => {}
        }
    }
}

#[cfg(unix)]
#[test]
fn agrees_with_git_diff_on_random_histories() {
    for seed in [
        0x9e37_79b9_7f4a_7c15u64,
        0xdead_beef_1234_5678,
        42_4242_4242,
    ] {
        let mut rng = Rng(seed);
        let (_t, root) = new_repo();
        write(&root, ".gitignore", "*.log\nign/\n");
        mutate(&root, &mut rng, 60);
        let a = commit_all(&root, "a");
        mutate(&root, &mut rng, 30);
        let b = commit_all(&root, "b");
        let ours = |base: &str, head: Option<&str>| -> std::collections::BTreeSet<PathBuf> {
            changes(&root, base, head)
                .into_iter()
                .map(|c| c.path)
                .collect()
        };
        let theirs = git_paths(
            &root,
            &["diff", "-z", "--name-only", "--no-renames", &a, &b],
        );
        assert_eq!(ours(&a, Some(&b)), theirs, "seed {seed:#x}: {a}..{b}");

        // Working tree: unstaged edits, some staged, untracked and ignored files.
        mutate(&root, &mut rng, 30);
        for _ in 0..3 {
            let _ = Command::new("git")
                .args(["add", "-A", "d"])
                .current_dir(&root)
                .output();
        }
        mutate(&root, &mut rng, 10);
        let mut want = git_paths(&root, &["diff", "-z", "--name-only", "--no-renames", &a]);
        want.extend(git_paths(
            &root,
            &["diff", "-z", "--cached", "--name-only", "--no-renames", &a],
        ));
        want.extend(git_paths(
            &root,
            &["ls-files", "-z", "-o", "--exclude-standard"],
        ));
        assert_eq!(ours(&a, None), want, "seed {seed:#x}: {a} vs working tree");
        eprintln!(
            "seed {seed:#x}: {} paths between revisions, {} against the working tree",
            theirs.len(),
            want.len()
        );
        assert!(
            !theirs.is_empty() && !want.is_empty(),
            "seed {seed:#x} made no change: pick another"
        );
    }
}

// ---- No process is ever spawned -------------------------------------------------------

const CHILD_ENV: &str = "DIFF2TEST_VCS_CHILD_REPO";

/// Runs `changed_paths` in a child copy of this test binary whose PATH is `path_env`, and
/// returns what the child printed (`Debug` of the result).
fn run_child(repo: &Path, base: &str, path_env: &Path) -> String {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "child_runs_changed_paths",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, repo)
        .env("DIFF2TEST_VCS_CHILD_BASE", base)
        .env("PATH", path_env)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no RESULT in {stdout}"));
    line.to_string()
}

/// Started by `never_spawns_a_process` in a child process (with a hostile PATH); run
/// directly, it performs the same comparison on a repository of its own.
#[test]
fn child_runs_changed_paths() {
    let Some(repo) = std::env::var_os(CHILD_ENV) else {
        let (_tmp, root, base, _head) = repo_with_submodule();
        let got = changed_paths(&root, &base, Some("HEAD")).unwrap();
        assert!(
            got.iter().any(|c| c.kind == ChangeKind::SubmoduleMoved),
            "{got:?}"
        );
        return;
    };
    let base = std::env::var("DIFF2TEST_VCS_CHILD_BASE").unwrap();
    let head = changed_paths(Path::new(&repo), &base, Some("HEAD"));
    let worktree = changed_paths(Path::new(&repo), &base, None);
    println!("RESULT {:?}", (head, worktree));
}

#[cfg(unix)]
#[test]
fn never_spawns_a_process() {
    use std::os::unix::fs::PermissionsExt;
    let (tmp, root, base, _head) = repo_with_submodule();
    write(&root, "a new file.txt", "untracked\n");
    write(&root, "sub/lib.h", "dirty submodule\n");
    let expected = format!(
        "{:?}",
        (
            changed_paths(&root, &base, Some("HEAD")),
            changed_paths(&root, &base, None)
        )
    );
    assert!(
        expected.contains("SubmoduleMoved") && expected.contains("Untracked"),
        "{expected}"
    );

    // 1. PATH points at an empty directory: no program can be found by name.
    let empty = tmp.path().join("empty-bin");
    fs::create_dir(&empty).unwrap();
    assert_eq!(run_child(&root, &base, &empty), expected);

    // 2. PATH holds decoy `git` and `sh` that leave a mark if they are ever run.
    let decoys = tmp.path().join("decoy-bin");
    fs::create_dir(&decoys).unwrap();
    let mark = tmp.path().join("spawned");
    for name in ["git", "sh", "git-lfs", "ssh"] {
        let script = decoys.join(name);
        fs::write(
            &script,
            format!("#!/bin/sh\necho {name} >> '{}'\nexit 1\n", mark.display()),
        )
        .unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(run_child(&root, &base, &decoys), expected);
    assert!(
        !mark.exists(),
        "a process was spawned: {}",
        fs::read_to_string(&mark).unwrap_or_default()
    );
}

// ---- What a change source vouches for ------------------------------------------------

fn vouched(dir: &Path, base: &str, head: Option<&str>) -> (Vec<VcsChange>, Vouched) {
    changes_with_vouched(dir, base, head).unwrap_or_else(|e| {
        panic!(
            "changes_with_vouched({}, {base}, {head:?}): {e}",
            dir.display()
        )
    })
}

/// Asserts which repository-relative paths (under `root`) are vouched for and which are not.
fn assert_vouches(v: &Vouched, root: &Path, yes: &[&str], no: &[&str]) {
    for rel in yes {
        assert!(
            v.vouches(&root.join(rel)),
            "{rel:?} should be vouched for: {v:?}"
        );
    }
    for rel in no {
        assert!(
            !v.vouches(&root.join(rel)),
            "{rel:?} must not be vouched for: {v:?}"
        );
    }
}

#[test]
fn vouched_between_revisions_is_head_blobs() {
    let (tmp, root, base, head) = two_commits(|r| {
        write(r, ".gitignore", "*.local.h\n");
        write(r, "include/config.h", "#define X 1\n");
        fs::remove_file(r.join("b.txt")).unwrap();
    });
    write(&root, "include/config.local.h", "ignored local header\n");
    write(&root, "untracked.h", "not in head\n");
    let outside = tmp.path().canonicalize().unwrap().join("outside.h");
    fs::write(&outside, "outside the repository\n").unwrap();

    let (got, v) = vouched(&root, &base, Some(&head));
    assert_eq!(got, changes(&root, &base, Some(&head)));
    assert_eq!(v.workdir(), root);
    assert_vouches(
        &v,
        &root,
        &[
            "a.txt",
            "src/lib.c",
            "include/config.h",
            ".gitignore",
            "src/./lib.c",
            "src//lib.c",
        ],
        &[
            "include/config.local.h", // ignored, in the working tree only
            "untracked.h",            // not in head
            "b.txt",                  // in base only
            "src",                    // a tree, not a blob
            "",                       // the working directory itself
            "../repo/a.txt",          // `..` is never vouched for
            "src/../a.txt",
            ".git/config",
            "src/lib.c/x",
            "A.TXT",
        ],
    );
    assert!(!v.vouches(&outside));
    assert!(
        !v.vouches(Path::new("a.txt")),
        "a relative path is never vouched for"
    );
    // Every added or modified path is vouched for; a deleted one is not (not in head).
    for c in &got {
        assert_eq!(v.vouches(&c.path), c.kind != ChangeKind::Deleted, "{c:?}");
    }
}

#[cfg(unix)]
#[test]
fn vouched_matches_symlinked_and_canonical_workdir_spellings() {
    let (tmp, root, base, head) = two_commits(|r| write(r, "a.txt", "x\n"));
    let alias = tmp.path().canonicalize().unwrap().join("alias");
    std::os::unix::fs::symlink(&root, &alias).unwrap();
    for mode in [Some(head.as_str()), None] {
        let (got, v) = vouched(&alias, &base, mode);
        assert_eq!(v.workdir(), alias, "{mode:?}");
        assert!(got.iter().all(|c| c.path.starts_with(&alias)), "{got:?}");
        assert_vouches(&v, &alias, &["a.txt", "src/lib.c"], &["nope.h"]);
        assert_vouches(&v, &root, &["a.txt", "src/lib.c"], &["nope.h"]);
    }
}

#[test]
fn vouched_working_tree_excludes_ignored_files() {
    let (_t, root, base, _head) = two_commits(|r| {
        write(r, ".gitignore", "config_local.h\nbuild/\n");
        write(r, "build/keep.h", "tracked in an ignored directory\n");
        git(r, &["add", "-f", "build/keep.h"]);
    });
    write(&root, "config_local.h", "ignored local header\n");
    write(&root, "build/gen.h", "ignored directory\n");
    write(&root, "untracked.h", "untracked, not ignored\n");
    write(&root, "new/dir/deep.h", "untracked in a new directory\n");
    write(&root, "staged.h", "staged only\n");
    git(&root, &["add", "staged.h"]);
    git(&root, &["rm", "-q", "--cached", "a.txt"]); // in base, no longer in the index
    fs::remove_file(root.join("b.txt")).unwrap();
    let nested = root.join("vendor/nested");
    fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    write(&nested, "x.h", "in an untracked nested repository\n");

    let (got, v) = vouched(&root, &base, None);
    assert_eq!(got, changes(&root, &base, None));
    assert_vouches(
        &v,
        &root,
        &[
            "src/lib.c",
            "a.txt",
            "b.txt",
            ".gitignore",
            "build/keep.h",
            "untracked.h",
            "new/dir/deep.h",
            "staged.h",
        ],
        &[
            "config_local.h",
            "build/gen.h",
            "vendor/nested/x.h",
            "never-existed.h",
            ".git/index",
        ],
    );
    // The reported files (not the nested repository's directory) are vouched for.
    for c in got.iter().filter(|c| !c.path.is_dir()) {
        assert!(v.vouches(&c.path), "{c:?}");
    }
}

#[test]
fn vouched_working_tree_excludes_skip_worktree_entries() {
    let (_t, root, _base, head) = two_commits(|_| {});
    git(&root, &["update-index", "--skip-worktree", "a.txt"]);
    write(&root, "a.txt", "edited, but git never looks\n");
    let (got, v) = vouched(&root, &head, None);
    assert!(got.is_empty(), "{got:?}");
    assert_vouches(&v, &root, &["b.txt", "src/lib.c"], &["a.txt"]);
}

#[test]
fn vouched_inside_submodules() {
    let (_t, root, base, head) = repo_with_submodule();
    // Between revisions: everything below a gitlink of head is vouched for.
    let (_, v) = vouched(&root, &base, Some(&head));
    assert_vouches(
        &v,
        &root,
        &["main.c", "sub/lib.h", "sub/anything/else.h"],
        &["subx/lib.h", "su/lib.h", "sub/../main.c"],
    );
    let (_, v) = vouched(&root, &format!("{base}~1"), Some(&format!("{base}~1")));
    assert_vouches(&v, &root, &["main.c"], &["sub/lib.h"]);

    // Working tree: the submodule's own index, HEAD and ignore rules decide.
    let sub = root.join("sub");
    let exclude = git(&sub, &["rev-parse", "--git-path", "info/exclude"]);
    let exclude = sub.join(exclude);
    fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    fs::write(&exclude, "*.local\n").unwrap();
    write(&sub, "extra.h", "untracked in the submodule\n");
    write(&sub, "cfg.local", "ignored in the submodule\n");
    write(&sub, "lib.h", "local edit\n");
    let (got, v) = vouched(&root, &head, None);
    assert_eq!(
        got,
        expect(
            &root,
            &[
                ("sub/extra.h", ChangeKind::Untracked),
                ("sub/lib.h", ChangeKind::Modified)
            ]
        )
    );
    assert_vouches(
        &v,
        &root,
        &["main.c", "sub/lib.h", "sub/extra.h"],
        &["sub/cfg.local", "sub/missing.h", "sub/.git"],
    );

    // An uninitialised submodule: nothing in its directory is read, so nothing is vouched.
    git(&root, &["submodule", "deinit", "-q", "-f", "sub"]);
    write(&root, "sub/lib.h", "not a checkout\n");
    let (got, v) = vouched(&root, &head, None);
    assert!(got.is_empty(), "{got:?}");
    assert_vouches(&v, &root, &["main.c"], &["sub/lib.h"]);
    let (_, v) = vouched(&root, &head, Some(&head));
    assert_vouches(&v, &root, &["main.c", "sub/lib.h"], &[]);
}

/// Timing on ~20k files: `cargo test --release --test vcs -- --ignored --nocapture`.
#[test]
#[ignore]
fn vouched_timing_on_20k_files() {
    use std::time::Instant;
    let (_t, root) = new_repo();
    for d in 0..200 {
        for f in 0..100 {
            write(&root, &format!("dir{d}/sub{}/file{f}.h", f % 4), "x\n");
        }
    }
    let head = commit_all(&root, "20k");
    let paths: Vec<PathBuf> = (0..20_000)
        .map(|i| root.join(format!("dir{}/sub{}/file{}.h", i / 100, i % 4, i % 100)))
        .collect();
    for (label, mode) in [("tree", Some(head.as_str())), ("working tree", None)] {
        let t = Instant::now();
        let (got, v) = vouched(&root, &head, mode);
        let built = t.elapsed();
        let t = Instant::now();
        assert!(paths.iter().all(|p| v.vouches(p)));
        let looked = t.elapsed();
        assert!(got.is_empty());
        eprintln!("{label}: changes + vouched in {built:?}; 20k lookups in {looked:?}");
    }
}
