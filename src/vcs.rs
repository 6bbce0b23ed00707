//! In-process git change detection (TIA-CHG-001, TIA-CHG-003, TIA-CHG-008).
//!
//! [`changed_paths`] resolves revisions and compares trees with `gix`, a pure-Rust git
//! implementation. It never starts a process: no `git` executable, no hooks, no filter
//! drivers, no credential helpers. The repository is opened with
//! `permissions.config.git_binary = false` (so gix never runs `git` to locate the
//! installation config), no environment-variable overrides, and without the gix features
//! that can run commands (attributes/filters, status, credentials, network).
//!
//! Change semantics (a "content unit" is a path; its fingerprint is its git object id plus
//! its mode, TIA-CHG-003):
//! * A path is changed when it exists on one side only, or its blob id or mode differs.
//! * No rename or copy tracking: a rename is a deletion of the old path plus an addition of
//!   the new one, so both are reported.
//! * A submodule (gitlink) whose recorded commit differs is one changed path.
//! * With `head = None` the base tree is compared with the working tree: every tracked or
//!   base path is read and hashed in-process (raw bytes, no clean filters or eol
//!   conversion, so filtered files can only be over-reported, never missed), untracked
//!   files that are not ignored are reported, staged changes are reported even if the
//!   working tree undid them, and initialised submodules are compared by their checked-out
//!   HEAD and searched for local edits, which are reported as paths inside the submodule.
//!   TIA-CHG-008: callers in CI mode must pass a head revision.
//!
//! [`changes_with_vouched`] also returns a [`Vouched`]: the files whose changes the chosen
//! comparison would report, so a caller can refuse evidence naming a file it cannot see
//! (for example a git-ignored header).
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::objs::tree::EntryKind;
use gix::ObjectId;

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VcsChange {
    /// Absolute: the repository's working directory joined with the repository-relative path.
    pub path: PathBuf,
    /// How the path changed from base to head (or the working tree).
    pub kind: ChangeKind,
}

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// Present on the new side only.
    Added,
    /// Present on the old side only.
    Deleted,
    /// Same kind and mode on both sides, different content.
    Modified,
    /// Kind (file, executable, symlink, submodule) or mode differs; content may differ too.
    TypeOrModeChanged,
    /// A submodule (gitlink) now records another commit, or its checkout is at another commit.
    SubmoduleMoved,
    /// Working-tree comparison only: a file (or nested repository) that git does not track
    /// and does not ignore.
    Untracked,
}

/// Why changed paths could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VcsError {
    /// `dir` is not inside a git repository (or the repository cannot be opened).
    #[error("no git repository found at or above {}: {detail}", dir.display())]
    NoRepository {
        /// The directory discovery started from.
        dir: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// The revision does not name a commit that is present in this repository
    /// (unknown name, ambiguous or missing hash, or history cut off by a shallow clone).
    #[error("revision {rev:?} does not resolve to a commit in this repository: {detail}")]
    UnresolvedRevision {
        /// The revision as given.
        rev: String,
        /// What went wrong.
        detail: String,
    },
    /// Any other failure reading the repository or the working tree.
    #[error("git: {detail}")]
    Git {
        /// What went wrong.
        detail: String,
    },
}

fn git_err(context: &str, e: impl std::fmt::Display) -> VcsError {
    VcsError::Git {
        detail: format!("{context}: {e}"),
    }
}

/// Discovers the repository containing `source_dir` (the directory itself or any ancestor),
/// resolves `base` (and `head` if `Some`) to commits, and returns every path whose blob id or
/// mode differs, or that exists on one side only, comparing head's tree with base's tree.
/// With `head = None`, compares base's tree with the working tree, including untracked,
/// non-ignored files and staged changes. Renames are a deletion plus an addition. A changed
/// gitlink is one changed path. The result is sorted by path and de-duplicated; paths
/// outside `source_dir` are returned too.
///
/// Equivalent to [`changes_with_vouched`] without the [`Vouched`] part.
pub fn changed_paths(
    source_dir: &Path,
    base: &str,
    head: Option<&str>,
) -> Result<Vec<VcsChange>, VcsError> {
    changes_with_vouched(source_dir, base, head).map(|(changes, _)| changes)
}

/// [`changed_paths`], plus what this change source vouches for (see [`Vouched`]), computed
/// from the same repository open and the same walk.
pub fn changes_with_vouched(
    source_dir: &Path,
    base: &str,
    head: Option<&str>,
) -> Result<(Vec<VcsChange>, Vouched), VcsError> {
    let repo = discover(source_dir)?;
    let root = workdir_of(&repo).ok_or_else(|| VcsError::Git {
        detail: format!(
            "{} is a bare repository: it has no working tree",
            repo.git_dir().display()
        ),
    })?;
    let base_tree = resolve_tree(&repo, base)?;
    let mut out = Changes::default();
    let mut set = VouchSet::default();
    let mode = match head {
        Some(head) => {
            let head_tree = resolve_tree(&repo, head)?;
            for (rel, old, new) in diff_trees(&repo, base_tree, head_tree)? {
                if let Some(kind) = kind_of(old, new) {
                    out.insert(&root, rel.as_ref(), kind)?;
                }
            }
            for_each_leaf(&repo, head_tree, BStr::new(""), |rel, item| {
                if matches!(item, Item::Gitlink(_)) {
                    set.whole_dirs.insert(rel.clone());
                }
                set.files.insert(rel);
            })?;
            VouchMode::Tree
        }
        None => {
            worktree_changes(&repo, Some(base_tree), &root, &mut out, &mut set, 0)?;
            VouchMode::WorkingTree
        }
    };
    let changes = out
        .0
        .into_iter()
        .map(|(path, kind)| VcsChange { path, kind })
        .collect();
    Ok((changes, Vouched::new(root, mode, set)))
}

/// The files a change source vouches for: a file is vouched for when any change to it
/// (content, mode, kind, existence) would have been reported by that change source, so a
/// build prerequisite that is vouched for and absent from the change set is unchanged.
///
/// * `--base A --head B` (tree comparison): the blobs (files and symlinks) of B's tree, plus
///   everything below a submodule (gitlink) of B's tree: the submodule's content is pinned
///   by the recorded commit, and a moved pointer is already reported as the gitlink path.
/// * `--base A` without `--head` (working tree): paths in the index or in A's tree (except
///   index entries marked skip-worktree, whose working-tree copy git never reads), untracked
///   files that are not ignored (they are reported anyway), and, inside an initialised
///   submodule, the same rules applied to the submodule's own index, HEAD and ignore rules.
///   An ignored untracked file is not vouched for, nor is anything below an untracked
///   nested repository, an unreadable or ignored directory, an uninitialised submodule or a
///   symlinked directory.
///
/// Paths outside the repository's working directory are never vouched for. Matching is
/// lexical (`.` components and repeated separators are ignored, a `..` component is never
/// vouched for) against the working directory exactly as [`VcsChange::path`] spells it, then
/// against its canonical form. When unsure, the answer is `false`: that only costs a fallback.
#[derive(Clone)]
pub struct Vouched {
    root: PathBuf,
    /// `root` canonicalized, when that is spelled differently.
    canonical_root: Option<PathBuf>,
    mode: VouchMode,
    set: VouchSet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VouchMode {
    Tree,
    WorkingTree,
}

/// Repository-relative (`/`-separated) paths.
#[derive(Debug, Clone, Default)]
struct VouchSet {
    /// Vouched files.
    files: HashSet<BString>,
    /// Directories everything below which is vouched (gitlinks of a tree).
    whole_dirs: HashSet<BString>,
    /// Initialised submodules in the working tree, by their path in this repository.
    subs: HashMap<BString, VouchSet>,
}

impl VouchSet {
    fn contains(&self, rel: &[u8]) -> bool {
        if self.files.contains(rel) {
            return true;
        }
        if self.whole_dirs.is_empty() && self.subs.is_empty() {
            return false;
        }
        for (i, _) in rel.iter().enumerate().filter(|(_, b)| **b == b'/') {
            let dir = &rel[..i];
            if self.whole_dirs.contains(dir) {
                return true;
            }
            if let Some(sub) = self.subs.get(dir) {
                return sub.contains(&rel[i + 1..]);
            }
        }
        false
    }

    fn len(&self) -> usize {
        self.files.len() + self.subs.values().map(VouchSet::len).sum::<usize>()
    }
}

impl Vouched {
    fn new(root: PathBuf, mode: VouchMode, set: VouchSet) -> Self {
        let canonical_root = fs::canonicalize(&root).ok().filter(|c| *c != root);
        Vouched {
            root,
            canonical_root,
            mode,
            set,
        }
    }

    /// True iff a change to the file at `abs_path` would have been reported by the change
    /// source this was computed with (see [`Vouched`]).
    pub fn vouches(&self, abs_path: &Path) -> bool {
        std::iter::once(&self.root)
            .chain(self.canonical_root.as_ref())
            .filter_map(|root| abs_path.strip_prefix(root).ok())
            .filter_map(rel_bytes)
            .any(|rel| self.set.contains(&rel))
    }

    /// The repository's working directory, as [`VcsChange::path`] spells it.
    pub fn workdir(&self) -> &Path {
        &self.root
    }
}

impl std::fmt::Debug for Vouched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vouched")
            .field("root", &self.root)
            .field("canonical_root", &self.canonical_root)
            .field("mode", &self.mode)
            .field("files", &self.set.len())
            .field("submodule_dirs", &self.set.whole_dirs.len())
            .finish()
    }
}

/// A relative native path as repository-relative bytes; `None` unless every component is a
/// plain name (no `..`, no root) and there is at least one.
fn rel_bytes(rel: &Path) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for c in rel.components() {
        let std::path::Component::Normal(name) = c else {
            return None;
        };
        let name = gix::path::os_str_into_bstr(name).ok()?;
        if name.contains(&b'/') {
            return None;
        }
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(name);
    }
    (!out.is_empty()).then_some(out)
}

/// Options that read the repository's own config plus the system and user config files, but
/// never run `git`, honour no `GIT_*` environment variables and load no attribute files
/// outside the repository.
fn open_options() -> gix::open::Options {
    use gix::open::permissions::{Attributes, Config, Environment};
    let mut env = Environment::isolated();
    // Only to locate ~/.gitconfig and the user's global excludes file (core.excludesFile).
    env.home = gix::sec::Permission::Allow;
    env.xdg_config_home = gix::sec::Permission::Allow;
    let config = Config {
        git_binary: false,
        system: true,
        git: true,
        user: true,
        env: false,
        includes: true,
    };
    gix::open::Options::isolated().permissions(gix::open::Permissions {
        env,
        config,
        attributes: Attributes::isolated(),
    })
}

fn discover(source_dir: &Path) -> Result<gix::Repository, VcsError> {
    let no_repo = |detail: String| VcsError::NoRepository {
        dir: source_dir.to_path_buf(),
        detail,
    };
    let dir = std::path::absolute(source_dir).map_err(|e| no_repo(e.to_string()))?;
    if !dir.is_dir() {
        return Err(no_repo("not a directory".into()));
    }
    let opts = open_options();
    // Repositories owned by another user get "reduced" trust; reading is all we do, so both
    // levels open the same way (no safe.directory refusal).
    let trust_map = gix::sec::trust::Mapping {
        full: opts.clone(),
        reduced: opts,
    };
    gix::ThreadSafeRepository::discover_opts(&dir, Default::default(), trust_map)
        .map(gix::Repository::from)
        .map_err(|e| no_repo(e.to_string()))
}

fn workdir_of(repo: &gix::Repository) -> Option<PathBuf> {
    let wd = repo.workdir()?;
    Some(std::path::absolute(wd).unwrap_or_else(|_| wd.to_path_buf()))
}

/// Resolves `rev` to a commit present in the object database and returns its tree id.
fn resolve_tree(repo: &gix::Repository, rev: &str) -> Result<ObjectId, VcsError> {
    let unresolved = |detail: String| VcsError::UnresolvedRevision {
        rev: rev.to_string(),
        detail: with_shallow_hint(repo, detail),
    };
    if rev.is_empty() {
        return Err(unresolved("empty revision".into()));
    }
    let id = commit_id(repo, rev)?;
    let commit = repo
        .find_commit(id)
        .map_err(|e| unresolved(format!("{id} is not a commit: {e}")))?;
    let tree = commit
        .tree_id()
        .map_err(|e| git_err(&format!("cannot read commit {id}"), e))?;
    Ok(tree.detach())
}

/// What a path holds on one side of a comparison. Trees are never items; only leaves are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    File {
        exec: bool,
        id: ObjectId,
    },
    Link(ObjectId),
    Gitlink(ObjectId),
    /// An unmerged index entry: differs from everything.
    Conflict,
}

fn item_of(kind: EntryKind, id: ObjectId) -> Option<Item> {
    match kind {
        EntryKind::Tree => None,
        EntryKind::Blob => Some(Item::File { exec: false, id }),
        EntryKind::BlobExecutable => Some(Item::File { exec: true, id }),
        EntryKind::Link => Some(Item::Link(id)),
        EntryKind::Commit => Some(Item::Gitlink(id)),
    }
}

fn kind_of(old: Option<Item>, new: Option<Item>) -> Option<ChangeKind> {
    use Item::*;
    Some(match (old, new) {
        (None, None) => return None,
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Deleted,
        (Some(a), Some(b)) if a == b && a != Conflict => return None,
        (Some(Conflict), _) | (_, Some(Conflict)) => ChangeKind::Modified,
        (Some(File { exec: e1, .. }), Some(File { exec: e2, .. })) if e1 != e2 => {
            ChangeKind::TypeOrModeChanged
        }
        (Some(File { .. }), Some(File { .. })) | (Some(Link(_)), Some(Link(_))) => {
            ChangeKind::Modified
        }
        (Some(Gitlink(_)), Some(Gitlink(_))) => ChangeKind::SubmoduleMoved,
        (Some(_), Some(_)) => ChangeKind::TypeOrModeChanged,
    })
}

/// The result, keyed by absolute path so it comes out sorted and de-duplicated.
#[derive(Default)]
struct Changes(BTreeMap<PathBuf, ChangeKind>);

impl Changes {
    fn insert(&mut self, root: &Path, rel: &BStr, kind: ChangeKind) -> Result<(), VcsError> {
        let path = root.join(rel_to_path(rel)?);
        self.0.entry(path).or_insert(kind);
        Ok(())
    }
}

/// Repository-relative path bytes (`/`-separated) to a native path, exactly (no lossy step).
fn rel_to_path(rel: &BStr) -> Result<PathBuf, VcsError> {
    gix::path::from_bstr(rel)
        .map(|p| p.into_owned())
        .map_err(|e| {
            git_err(
                &format!("path {rel:?} cannot be represented on this platform"),
                e,
            )
        })
}

fn os_to_bytes(name: &std::ffi::OsStr) -> Result<BString, VcsError> {
    gix::path::os_str_into_bstr(name)
        .map(|b| b.to_owned())
        .map_err(|e| {
            git_err(
                &format!("file name {name:?} cannot be represented as git path bytes"),
                e,
            )
        })
}

fn find_tree(repo: &gix::Repository, id: ObjectId) -> Result<gix::Tree<'_>, VcsError> {
    repo.find_tree(id)
        .map_err(|e| git_err(&format!("cannot read tree {id}"), e))
}

/// One leaf-level difference: `(repository-relative path, old, new)`; `old != new`.
type LeafChange = (BString, Option<Item>, Option<Item>);

/// Leaf-level differences between two trees.
fn diff_trees(
    repo: &gix::Repository,
    old: ObjectId,
    new: ObjectId,
) -> Result<Vec<LeafChange>, VcsError> {
    use gix::diff::tree::recorder::Change;
    if old == new {
        return Ok(Vec::new());
    }
    let (old_tree, new_tree) = (find_tree(repo, old)?, find_tree(repo, new)?);
    let hash = repo.object_hash();
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old_tree.data, hash),
        gix::objs::TreeRefIter::from_bytes(&new_tree.data, hash),
        gix::diff::tree::State::default(),
        &repo.objects,
        &mut recorder,
    )
    .map_err(|e| git_err(&format!("cannot compare trees {old} and {new}"), e))?;
    let mut out = Vec::new();
    for change in recorder.records {
        let (path, a, b) = match change {
            Change::Addition {
                entry_mode,
                oid,
                path,
                ..
            } => (path, None, item_of(entry_mode.kind(), oid)),
            Change::Deletion {
                entry_mode,
                oid,
                path,
                ..
            } => (path, item_of(entry_mode.kind(), oid), None),
            Change::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
                path,
            } => (
                path,
                item_of(previous_entry_mode.kind(), previous_oid),
                item_of(entry_mode.kind(), oid),
            ),
        };
        if a != b {
            out.push((path, a, b));
        }
    }
    Ok(out)
}

/// Every leaf of `tree`, keyed by repository-relative path.
fn flatten_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &BStr,
    into: &mut BTreeMap<BString, Item>,
) -> Result<(), VcsError> {
    for_each_leaf(repo, tree, prefix, |path, item| {
        into.insert(path, item);
    })
}

/// Calls `f` with every leaf of `tree` and its repository-relative path.
fn for_each_leaf(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &BStr,
    mut f: impl FnMut(BString, Item),
) -> Result<(), VcsError> {
    let tree = find_tree(repo, tree)?;
    let entries = tree
        .traverse()
        .breadthfirst
        .files()
        .map_err(|e| git_err(&format!("cannot walk tree {}", tree.id), e))?;
    for e in entries {
        if let Some(item) = item_of(e.mode.kind(), e.oid) {
            let mut path = BString::from(prefix);
            if !path.is_empty() {
                path.push_byte(b'/');
            }
            path.push_str(&e.filepath);
            f(path, item);
        }
    }
    Ok(())
}

/// An index entry, reduced to what the comparison needs.
#[derive(Clone, Copy)]
struct Staged {
    item: Item,
    /// Sparse checkout: git does not look at the working tree for this path.
    skip_worktree: bool,
}

const MAX_SUBMODULE_DEPTH: u32 = 32;

/// Compares `base_tree` (`None`: empty) with the working tree of `repo`, recording changes as
/// absolute paths under `root` (the repository's working directory), and the paths whose
/// changes this comparison reports in `vouch` (see [`Vouched`]).
fn worktree_changes(
    repo: &gix::Repository,
    base_tree: Option<ObjectId>,
    root: &Path,
    out: &mut Changes,
    vouch: &mut VouchSet,
    depth: u32,
) -> Result<(), VcsError> {
    if depth > MAX_SUBMODULE_DEPTH {
        return Err(VcsError::Git {
            detail: format!(
                "submodules nested deeper than {MAX_SUBMODULE_DEPTH} levels at {}",
                root.display()
            ),
        });
    }
    let mut base = BTreeMap::new();
    if let Some(tree) = base_tree {
        flatten_tree(repo, tree, BStr::new(""), &mut base)?;
    }

    let index = repo
        .index_or_empty()
        .map_err(|e| git_err("cannot read the index", e))?;
    let staged = staged_entries(repo, &index)?;

    let fs = {
        let config = repo.config_snapshot();
        FsConfig {
            file_mode: config.boolean("core.fileMode").unwrap_or(true),
            symlinks: config.boolean("core.symlinks").unwrap_or(true),
            hash: repo.object_hash(),
        }
    };

    let known: BTreeSet<&BString> = base.keys().chain(staged.keys()).collect();
    let mut known_dirs: BTreeSet<BString> = BTreeSet::new();
    for path in &known {
        let mut p: &[u8] = path.as_slice();
        while let Some(slash) = p.rfind_byte(b'/') {
            p = &p[..slash];
            if !known_dirs.insert(BString::from(p)) {
                break;
            }
        }
    }
    let gitlinks: BTreeSet<&BString> = known
        .iter()
        .copied()
        .filter(|p| {
            matches!(base.get(*p), Some(Item::Gitlink(_)))
                || matches!(staged.get(*p).map(|s| s.item), Some(Item::Gitlink(_)))
        })
        .collect();

    // 1. Every path known to the base tree or the index.
    let mut dirs = DirCache::default();
    for path in &known {
        let b = base.get(*path).copied();
        let s = staged.get(*path).copied();
        let i = s.map(|s| s.item);
        let w = match s {
            // Never read from the working tree, so a local edit would go unreported.
            Some(s) if s.skip_worktree => Some(s.item),
            _ => {
                let expected = i.or(b);
                let w = worktree_item(
                    repo,
                    root,
                    path.as_ref(),
                    expected,
                    &fs,
                    &mut dirs,
                    out,
                    vouch,
                    depth,
                )?;
                vouch.files.insert((*path).clone());
                w
            }
        };
        let kind = if w != b || w == Some(Item::Conflict) {
            kind_of(b, w)
        } else {
            kind_of(b, i)
        };
        if let Some(kind) = kind {
            out.insert(root, path.as_ref(), kind)?;
        }
    }

    // 2. Untracked, non-ignored files.
    untracked(
        repo,
        &index,
        root,
        (&known, &known_dirs, &gitlinks),
        out,
        vouch,
    )
}

/// The index's entries by path (a sparse directory expanded, a conflict or
/// an unknown mode as [`Item::Conflict`]).
fn staged_entries(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
) -> Result<BTreeMap<BString, Staged>, VcsError> {
    let mut staged: BTreeMap<BString, Staged> = BTreeMap::new();
    for entry in index.entries() {
        let path = entry.path(index);
        let skip_worktree = entry
            .flags
            .contains(gix::index::entry::Flags::SKIP_WORKTREE);
        if entry.mode.is_sparse() {
            // A sparse index keeps a whole directory as one tree entry; expand it.
            let mut leaves = BTreeMap::new();
            flatten_tree(repo, entry.id, path, &mut leaves)?;
            staged.extend(leaves.into_iter().map(|(p, item)| {
                (
                    p,
                    Staged {
                        item,
                        skip_worktree: true,
                    },
                )
            }));
            continue;
        }
        let item = if entry.stage_raw() != 0 {
            Item::Conflict
        } else {
            match entry
                .mode
                .to_tree_entry_mode()
                .map(|m| m.kind())
                .and_then(|k| item_of(k, entry.id))
            {
                Some(item) => item,
                None => Item::Conflict, // unknown mode: treat as changed
            }
        };
        staged
            .entry(path.to_owned())
            .and_modify(|s| s.item = Item::Conflict)
            .or_insert(Staged {
                item,
                skip_worktree,
            });
    }
    Ok(staged)
}

/// Every untracked, non-ignored file (or nested repository, or unreadable
/// directory) below `root` goes to `out`; its files are vouched for.
fn untracked(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
    root: &Path,
    (known, known_dirs, gitlinks): (&BTreeSet<&BString>, &BTreeSet<BString>, &BTreeSet<&BString>),
    out: &mut Changes,
    vouch: &mut VouchSet,
) -> Result<(), VcsError> {
    let mut excludes = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|e| git_err("cannot load ignore rules", e))?;
    let mut is_ignored = |rel: &BStr, is_dir: bool| -> Result<bool, VcsError> {
        let mode = if is_dir {
            gix::index::entry::Mode::DIR
        } else {
            gix::index::entry::Mode::FILE
        };
        excludes
            .at_entry(rel, Some(mode))
            .map(|p| p.is_excluded())
            .map_err(|e| git_err(&format!("cannot evaluate ignore rules for {rel:?}"), e))
    };
    let mut stack: Vec<BString> = vec![BString::default()];
    while let Some(dir_rel) = stack.pop() {
        let dir_abs = if dir_rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(rel_to_path(dir_rel.as_ref())?)
        };
        let read = match fs::read_dir(&dir_abs) {
            Ok(read) => read,
            Err(_) if !dir_rel.is_empty() => {
                // Unreadable directory: its content is unknown, so report it as changed.
                out.insert(root, dir_rel.as_ref(), ChangeKind::Untracked)?;
                continue;
            }
            Err(e) => {
                return Err(git_err(
                    &format!("cannot read the working tree {}", dir_abs.display()),
                    e,
                ))
            }
        };
        for entry in read {
            let entry = entry
                .map_err(|e| git_err(&format!("cannot read directory {}", dir_abs.display()), e))?;
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let mut rel = dir_rel.clone();
            if !rel.is_empty() {
                rel.push_byte(b'/');
            }
            rel.push_str(os_to_bytes(&name)?);
            let file_type = match entry.file_type() {
                Ok(t) => t,
                Err(_) => continue, // vanished
            };
            if file_type.is_dir() {
                if gitlinks.contains(&rel) {
                    continue; // a submodule: handled with the known paths
                }
                if is_ignored(rel.as_ref(), true)? {
                    continue; // everything below an ignored directory is ignored
                }
                let is_known_dir = known_dirs.contains(&rel);
                if !is_known_dir && fs::symlink_metadata(entry.path().join(".git")).is_ok() {
                    // An untracked nested repository: git shows it as one entry.
                    out.insert(root, rel.as_ref(), ChangeKind::Untracked)?;
                    continue;
                }
                stack.push(rel);
            } else if file_type.is_file() || file_type.is_symlink() {
                if known.contains(&rel) || is_ignored(rel.as_ref(), false)? {
                    continue;
                }
                out.insert(root, rel.as_ref(), ChangeKind::Untracked)?;
                vouch.files.insert(rel);
            }
            // Sockets, FIFOs and devices are not content git can track.
        }
    }
    Ok(())
}

struct FsConfig {
    file_mode: bool,
    symlinks: bool,
    hash: gix::hash::Kind,
}

/// Whether each leading directory of a path is a real directory (not a symlink, not missing).
#[derive(Default)]
struct DirCache(HashMap<PathBuf, bool>);

impl DirCache {
    fn is_real_dir(&mut self, dir: &Path) -> bool {
        if let Some(&known) = self.0.get(dir) {
            return known;
        }
        let real = fs::symlink_metadata(dir)
            .map(|m| m.is_dir())
            .unwrap_or(false);
        self.0.insert(dir.to_path_buf(), real);
        real
    }
}

/// What the working tree holds at `rel`, as git would see it (`None`: nothing trackable).
/// `expected` is the index (or base) entry, used where the file system cannot tell: the
/// executable bit when `core.fileMode` is false, symlinks when `core.symlinks` is false,
/// and submodules that are not checked out.
#[allow(clippy::too_many_arguments)]
fn worktree_item(
    repo: &gix::Repository,
    root: &Path,
    rel: &BStr,
    expected: Option<Item>,
    fs_config: &FsConfig,
    dirs: &mut DirCache,
    out: &mut Changes,
    vouch: &mut VouchSet,
    depth: u32,
) -> Result<Option<Item>, VcsError> {
    // Never look outside the working tree, whatever a tree entry is called.
    if rel
        .split_str("/")
        .any(|c| c.is_empty() || c == b"." || c == b"..")
    {
        return Ok(None);
    }
    let abs = root.join(rel_to_path(rel)?);
    // git does not follow symlinked leading directories: a/b is absent if a is a symlink.
    let mut ancestors: Vec<&Path> = abs.ancestors().skip(1).take_while(|p| *p != root).collect();
    ancestors.reverse();
    if !ancestors.into_iter().all(|d| dirs.is_real_dir(d)) {
        return Ok(None);
    }
    let meta = match fs::symlink_metadata(&abs) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(git_err(&format!("cannot inspect {}", abs.display()), e)),
    };
    let null = ObjectId::null(fs_config.hash);
    let ft = meta.file_type();
    if ft.is_symlink() {
        let id = match fs::read_link(&abs) {
            Ok(target) => gix::path::into_bstr(target)
                .ok()
                .and_then(|bytes| hash_bytes(fs_config.hash, &bytes))
                .unwrap_or(null),
            Err(_) => null, // unreadable: treat as changed
        };
        return Ok(Some(Item::Link(id)));
    }
    if ft.is_file() {
        let id = hash_file(fs_config.hash, &abs).unwrap_or(null);
        if !fs_config.symlinks && matches!(expected, Some(Item::Link(_))) {
            return Ok(Some(Item::Link(id)));
        }
        let exec = if fs_config.file_mode {
            is_executable(&meta)
        } else {
            matches!(expected, Some(Item::File { exec: true, .. }))
        };
        return Ok(Some(Item::File { exec, id }));
    }
    if ft.is_dir() {
        if let Some(Item::Gitlink(recorded)) = expected {
            if fs::symlink_metadata(abs.join(".git")).is_err() {
                // Not checked out (no `git submodule update`): git treats it as unchanged.
                return Ok(Some(Item::Gitlink(recorded)));
            }
            let mut inner = VouchSet::default();
            return Ok(Some(Item::Gitlink(
                match submodule_head(repo, &abs, out, &mut inner, depth) {
                    Ok(head) => {
                        vouch.subs.insert(rel.to_owned(), inner);
                        head
                    }
                    // Reported as moved; nothing inside is vouched for.
                    Err(_) => null,
                },
            )));
        }
        return Ok(None); // a directory where a file was expected: the file is gone
    }
    Ok(None)
}

/// The commit checked out in the submodule at `abs`; also records its local edits, and in
/// `vouch` what its comparison vouches for, relative to the submodule.
fn submodule_head(
    _repo: &gix::Repository,
    abs: &Path,
    out: &mut Changes,
    vouch: &mut VouchSet,
    depth: u32,
) -> Result<ObjectId, VcsError> {
    let sub = gix::open_opts(abs, open_options())
        .map_err(|e| git_err(&format!("cannot open submodule {}", abs.display()), e))?;
    let sub_root = workdir_of(&sub).unwrap_or_else(|| abs.to_path_buf());
    // The inner paths are vouched for below `abs`; only if that is the submodule's working
    // directory (a `core.worktree` could point elsewhere).
    let same_dir = sub_root == abs
        || matches!((fs::canonicalize(&sub_root), fs::canonicalize(abs)), (Ok(a), Ok(b)) if a == b);
    let mut elsewhere = VouchSet::default();
    let vouch = if same_dir { vouch } else { &mut elsewhere };
    let head = sub.head_id().ok().map(|id| id.detach());
    let head_tree = match head {
        Some(id) => Some(
            sub.find_commit(id)
                .and_then(|c| c.tree_id().map(|t| t.detach()))
                .map_err(|e| {
                    git_err(
                        &format!("cannot read HEAD of submodule {}", abs.display()),
                        e,
                    )
                })?,
        ),
        None => None,
    };
    worktree_changes(&sub, head_tree, &sub_root, out, vouch, depth + 1)?;
    head.ok_or_else(|| VcsError::Git {
        detail: format!("submodule {} has no HEAD commit", abs.display()),
    })
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o100 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}

fn hash_bytes(kind: gix::hash::Kind, data: &[u8]) -> Option<ObjectId> {
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, data).ok()
}

/// The blob id of the file's raw bytes, streamed. `None` if it cannot be read completely.
fn hash_file(kind: gix::hash::Kind, path: &Path) -> Option<ObjectId> {
    let mut file = fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    gix::objs::compute_stream_hash(
        kind,
        gix::objs::Kind::Blob,
        &mut file,
        len,
        &mut gix::progress::Discard,
        &interrupt,
    )
    .ok()
}

/// The merge base of `a` and `b` (as `git merge-base a b` would give it),
/// computed in-process, as a full commit id. A pull request's change set is
/// `merge_base(base, head)..head`.
pub fn merge_base(source_dir: &Path, a: &str, b: &str) -> Result<String, VcsError> {
    let repo = discover(source_dir)?;
    let commit_of = |rev: &str| commit_id(&repo, rev);
    let (x, y) = (commit_of(a)?, commit_of(b)?);
    let base = repo
        .merge_base(x, y)
        .map_err(|e| VcsError::UnresolvedRevision {
            rev: format!("{a}...{b}"),
            detail: with_shallow_hint(&repo, format!("no merge base: {e}")),
        })?;
    base.map(|id| id.to_string())
        .ok_or_else(|| VcsError::UnresolvedRevision {
            rev: format!("{a}...{b}"),
            detail: with_shallow_hint(&repo, "the two revisions share no history".into()),
        })
}

/// Adds what to do when the repository is a shallow clone (actions/checkout's
/// default depth 1 has no history to compare with).
fn with_shallow_hint(repo: &gix::Repository, detail: String) -> String {
    if repo.is_shallow().unwrap_or(false) {
        format!("{detail} (this is a shallow clone: fetch the history, e.g. actions/checkout with fetch-depth: 0, or git fetch --unshallow)")
    } else {
        detail
    }
}

/// The full commit id `rev` names in the repository containing `source_dir`.
pub fn resolve_commit(source_dir: &Path, rev: &str) -> Result<String, VcsError> {
    let repo = discover(source_dir)?;
    commit_id(&repo, rev).map(|id| id.to_string())
}

/// The commit `rev` names in `repo`.
fn commit_id(repo: &gix::Repository, rev: &str) -> Result<ObjectId, VcsError> {
    let unresolved = |detail: String| VcsError::UnresolvedRevision {
        rev: rev.to_string(),
        detail: with_shallow_hint(repo, detail),
    };
    let id = repo
        .rev_parse_single(rev)
        .map_err(|e| unresolved(e.to_string()))?;
    let object = id
        .object()
        .map_err(|e| unresolved(format!("object {id} is not available: {e}")))?;
    let commit = object
        .peel_to_commit()
        .map_err(|e| unresolved(format!("{id} is not a commit: {e}")))?;
    Ok(commit.id)
}

/// The git blob id of the file at `path` as it is on disk (SHA-1, as git
/// would store it), hex; `None` when it cannot be read whole.
pub fn blob_id_of_file(path: &Path) -> Option<String> {
    hash_file(gix::hash::Kind::Sha1, path).map(|id| id.to_string())
}

/// The git blob id of a symlink at `path` as git stores it (the bytes of its
/// target, as written); `None` when it is no symlink.
pub fn blob_id_of_link(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let target = fs::read_link(path).ok()?;
    hash_bytes(gix::hash::Kind::Sha1, target.as_os_str().as_bytes()).map(|id| id.to_string())
}

/// For each absolute path: the blob id it has in the tree of `rev` in the
/// repository holding `source_dir` (`None`: not a file there, or outside the
/// repository's work tree). Read in-process; git is never run.
pub fn blob_ids_at(
    source_dir: &Path,
    rev: &str,
    paths: &[&str],
) -> Result<Vec<Option<String>>, VcsError> {
    let repo = discover(source_dir)?;
    let workdir = workdir_of(&repo).ok_or_else(|| VcsError::NoRepository {
        dir: source_dir.to_path_buf(),
        detail: "a bare repository has no work tree".into(),
    })?;
    let id = commit_id(&repo, rev)?;
    let tree = repo
        .find_commit(id)
        .map_err(|e| git_err("cannot read the commit", e))?
        .tree()
        .map_err(|e| git_err("cannot read the commit's tree", e))?;
    let workdir = workdir.to_string_lossy().into_owned();
    let workdir = crate::paths::fold(&workdir);
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let Some(rel) = crate::paths::strip_root(p, &workdir).filter(|r| !r.is_empty()) else {
            out.push(None);
            continue;
        };
        let entry = tree
            .lookup_entry_by_path(rel)
            .map_err(|e| git_err(&format!("cannot look up {rel}"), e))?;
        out.push(entry.and_then(|e| {
            let mode = e.mode();
            (mode.is_blob() || mode.is_link()).then(|| e.object_id().to_string())
        }));
    }
    Ok(out)
}
