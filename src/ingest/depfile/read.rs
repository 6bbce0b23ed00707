//! Reading: the dependency list, each depfile parsed into provisional file
//! ids by a worker, the shared path table and the file stats taken once.

use std::borrow::Cow;
use std::time::SystemTime;

use super::super::depfile_syntax;
use super::super::evidence::FileId;
use super::super::Reader;
use super::map::{Aged, Mapped, Parsed};
use super::objects::{ends_with_path, object_stem, split_object_dir};
use super::stat::{stat_file, DirMemo, FileStat};

use crate::fasthash::{hash_str, FastMap};
use crate::paths;
use crate::reason::{Code, Gap};

/// Provisional id of a prerequisite outside both roots (a system header).
pub(super) const OUTSIDE: FileId = FileId::MAX;

/// Number of lock shards of the shared path table (a power of two).
pub(super) const SHARDS: usize = 64;

/// Project files interned by all workers at once: folded path → provisional id.
/// Workers reach it only on a miss of their own token cache, so the locks are
/// taken once per distinct spelling per worker, not once per prerequisite.
/// Provisional ids depend on thread timing; [`load`] renumbers them in path
/// order before anything else sees them.
/// One lock shard of [`SharedFiles`]: path → (id, timestamp).
pub(super) type Shard = std::sync::Mutex<FastMap<Box<str>, (FileId, Option<SystemTime>)>>;

pub(super) struct SharedFiles {
    pub(super) shards: Vec<Shard>,
    pub(super) next: std::sync::atomic::AtomicU64,
    /// Which directories lead through a symlink, for [`stat_file`].
    pub(super) dirs: DirMemo,
}

impl SharedFiles {
    pub(super) fn new() -> Self {
        SharedFiles {
            shards: (0..SHARDS).map(|_| Default::default()).collect(),
            next: std::sync::atomic::AtomicU64::new(0),
            dirs: DirMemo::default(),
        }
    }

    /// The id of `path` (whose [`hash_str`] is `h`) and its
    /// timestamp; with its stat when this call created it. A file is
    /// stat'ed (outside the lock) by the worker that meets it first; were two
    /// to meet it at once, both look and the first to insert wins.
    pub(super) fn intern(
        &self,
        path: &str,
        h: u64,
    ) -> Option<(FileId, Option<SystemTime>, Option<FileStat>)> {
        let shard = &self.shards[(h >> 58) as usize % SHARDS];
        let lock = || shard.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(id, mtime)) = lock().get(path) {
            return Some((id, mtime, None));
        }
        let st = stat_file(path, &self.dirs);
        let mut map = lock();
        if let Some(&(id, mtime)) = map.get(path) {
            return Some((id, mtime, None));
        }
        let next = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = FileId::try_from(next).ok().filter(|&id| id != OUTSIDE)?;
        map.insert(path.into(), (id, st.mtime));
        Some((id, st.mtime, Some(st)))
    }

    /// Ids handed out so far.
    pub(super) fn len(&self) -> usize {
        self.next
            .load(std::sync::atomic::Ordering::Relaxed)
            .min(u64::from(OUTSIDE)) as usize
    }

    /// Empties the table into the path of each id (moved, not copied); an id
    /// without one (never: every id is inserted) gets an empty path.
    pub(super) fn take_paths(&self) -> Vec<String> {
        let mut paths = vec![String::new(); self.len()];
        for shard in &self.shards {
            let map = std::mem::take(&mut *shard.lock().unwrap_or_else(|p| p.into_inner()));
            for (path, (id, _)) in map {
                if let Some(slot) = paths.get_mut(id as usize) {
                    *slot = path.into_string();
                }
            }
        }
        paths
    }
}

/// One worker's state: its token cache, the files it interned first (with
/// their stat: every file is stat'ed once, by the worker that meets it
/// first), and what each depfile it took gave, by entry index (mapped to its
/// unit once the codemodel is published).
#[derive(Default)]
pub struct Worker {
    /// Token as written (relative ones joined to their directory) → provisional id or [`OUTSIDE`].
    pub(super) tokens: TokenCache,
    /// Reused key buffer for relative tokens.
    pub(super) scratch: String,
    /// Files this worker interned first, with their path's hash and stat.
    pub(super) created: Vec<(FileId, u64, FileStat)>,
    /// What each depfile it took gave, by entry index: not yet mapped...
    pub(super) results: Vec<(usize, Result<Parsed, Gap>)>,
    /// ... and mapped, once the codemodel was published.
    pub(super) mapped: Vec<(usize, Mapped)>,
    pub(super) buf: Vec<u8>,
    /// What this worker knows of each id, see [`Seen`].
    pub(super) seen: Vec<Seen>,
    /// Number of depfiles this worker started (never 0 while one is read).
    pub(super) serial: u32,
    /// `next[id]`: the project file that followed `id` last time (units of a
    /// target list their headers in much the same order), checked against
    /// the spelling before it is trusted; [`OUTSIDE`] when none.
    pub(super) next: Vec<FileId>,
    /// `spelling[id]`: (offset, length) in `arena` of the absolute token this
    /// worker resolved to `id` first; `(0, 0)` when none.
    pub(super) spelling: Vec<(u32, u32)>,
    pub(super) arena: String,
    /// Entries that are ninja deps logs (recognised by their header),
    /// prepared here (`ninja_units::prepare`: parsed, resolved, stat'ed),
    /// merged after the depfiles...
    pub(super) logs: Vec<super::ninja_units::Prepared>,
    /// ... and their entry indices (entries that hold no depfile).
    pub(super) log_entries: Vec<usize>,
}

/// A worker's token → id cache, without an allocation per token: the
/// tokens are kept in one buffer and the map holds their hash and place.
/// A token whose hash another token took is not cached (it is resolved the
/// slow way each time); every hit is checked byte for byte.
#[derive(Default)]
pub(super) struct TokenCache {
    pub(super) by_hash: FastMap<u64, (u32, u32, FileId)>,
    pub(super) text: String,
}

impl TokenCache {
    pub(super) fn get(&self, hash: u64, token: &str) -> Option<FileId> {
        let &(at, len, id) = self.by_hash.get(&hash)?;
        (self.text.get(at as usize..at as usize + len as usize) == Some(token)).then_some(id)
    }

    pub(super) fn insert(&mut self, hash: u64, token: &str, id: FileId) {
        let (Ok(at), Ok(len)) = (u32::try_from(self.text.len()), u32::try_from(token.len())) else {
            return; // past 4 GiB of tokens: no more caching, lookups still work
        };
        if at.checked_add(len).is_none() {
            return;
        }
        if let std::collections::hash_map::Entry::Vacant(v) = self.by_hash.entry(hash) {
            v.insert((at, len, id));
            self.text.push_str(token);
        }
    }
}

/// A worker's record of one file id.
#[derive(Clone, Copy, Default)]
pub(super) struct Seen {
    /// `== serial`: already listed by the depfile being read.
    pub(super) stamp: u32,
    /// Its timestamp (`Some(None)`: it has none), once this worker met it.
    pub(super) mtime: Option<Option<SystemTime>>,
}

/// The roots a prerequisite must lie in to be a project file.
#[derive(Clone, Copy)]
pub(super) struct Scope<'m> {
    pub(super) source_root: &'m str,
    pub(super) build_root: &'m str,
    /// Each root's first (up to) eight bytes as a little-endian word, and the
    /// mask of the bytes that count, for [`Scope::may_hold`].
    pub(super) heads: [(u64, u64); 2],
}

impl<'m> Scope<'m> {
    pub(super) fn new(source_root: &'m str, build_root: &'m str) -> Self {
        let head = |root: &str| {
            let b = root.as_bytes();
            let n = b.len().min(8);
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&b[..n]);
            let mask = if n == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * n)) - 1
            };
            (u64::from_le_bytes(w), mask)
        };
        Scope {
            source_root,
            build_root,
            heads: [head(source_root), head(build_root)],
        }
    }

    /// False when folded `path` cannot lie in either root: its first eight
    /// bytes (or all of a shorter root) differ from both roots'. Two word
    /// compares: this runs for every prerequisite.
    #[inline]
    pub(super) fn may_hold(&self, path: &str) -> bool {
        let p = path.as_bytes();
        let word = match p.get(..8) {
            Some(w) => u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
            None => {
                let mut w = [0u8; 8];
                w[..p.len()].copy_from_slice(p);
                // A path shorter than a root's head cannot match it: poison
                // the missing bytes so they never compare equal.
                let filled = (1u64 << (8 * p.len())) - 1;
                return self
                    .heads
                    .iter()
                    .any(|&(h, m)| m & !filled == 0 && (u64::from_le_bytes(w) ^ h) & m == 0);
            }
        };
        self.heads.iter().any(|&(h, m)| (word ^ h) & m == 0)
    }
}

impl Worker {
    /// Provisional id of prerequisite `name` written in a depfile whose compiler
    /// ran in `dir`; [`OUTSIDE`] for files outside both roots; `None` when the
    /// table is full.
    pub(super) fn resolve(
        &mut self,
        shared: &SharedFiles,
        scope: Scope<'_>,
        dir: &str,
        name: &str,
        last: FileId,
    ) -> Option<FileId> {
        let key = if name.starts_with('/') {
            // Most prerequisites are system headers: an absolute, already folded
            // path that starts with neither root is outside without a lookup.
            if !scope.may_hold(name) && paths::is_folded(name) {
                return Some(OUTSIDE);
            }
            // The file that followed `last` before, when spelled the same.
            if let Some(&guess) = self.next.get(last as usize) {
                if guess != OUTSIDE && self.spelled(guess) == Some(name) {
                    return Some(guess);
                }
            }
            name
        } else {
            self.scratch.clear();
            self.scratch.push_str(dir);
            self.scratch.push('/');
            self.scratch.push_str(name);
            self.scratch.as_str()
        };
        let hash = hash_str(key);
        if let Some(id) = self.tokens.get(hash, key) {
            return Some(id);
        }
        let abs = paths::join_fold_cow(dir, name);
        let id = if paths::is_within(&abs, scope.source_root)
            || paths::is_within(&abs, scope.build_root)
        {
            // An absolute token already folded is its own path: hashed once.
            let hash = match abs {
                Cow::Borrowed(_) => hash,
                Cow::Owned(_) => hash_str(&abs),
            };
            let (id, mtime, created) = shared.intern(&abs, hash)?;
            if name.starts_with('/') {
                self.spell(id, name);
            }
            self.seen(id).mtime = Some(mtime);
            if let Some(st) = created {
                self.created.push((id, hash, st));
            }
            id
        } else {
            OUTSIDE
        };
        let key = if name.starts_with('/') {
            name
        } else {
            self.scratch.as_str()
        };
        self.tokens.insert(hash, key, id);
        Some(id)
    }

    /// The absolute spelling recorded for `id`, if any.
    pub(super) fn spelled(&self, id: FileId) -> Option<&str> {
        let &(at, len) = self.spelling.get(id as usize)?;
        if len == 0 {
            return None;
        }
        self.arena.get(at as usize..(at + len) as usize)
    }

    /// Records `name` as the absolute spelling of `id` (the first one wins).
    pub(super) fn spell(&mut self, id: FileId, name: &str) {
        let (Ok(at), Ok(len)) = (u32::try_from(self.arena.len()), u32::try_from(name.len())) else {
            return; // past 4 GiB of spellings: no more guesses, lookups still work
        };
        let spelling = slot(&mut self.spelling, id, (0, 0));
        if spelling.1 == 0 && at.checked_add(len).is_some() {
            *spelling = (at, len);
            self.arena.push_str(name);
        }
    }

    /// The record of `id`, made on first use.
    pub(super) fn seen(&mut self, id: FileId) -> &mut Seen {
        slot(&mut self.seen, id, Seen::default())
    }

    /// Remembers that `id` followed `last` in a unit.
    pub(super) fn follows(&mut self, last: FileId, id: FileId) {
        if last == OUTSIDE {
            return;
        }
        *slot(&mut self.next, last, OUTSIDE) = id;
    }
}

/// The entry of `id` in a by-id table that grows (doubling, new entries
/// `fill`) on first use of an id past its end.
pub(super) fn slot<T: Clone>(table: &mut Vec<T>, id: FileId, fill: T) -> &mut T {
    let at = id as usize;
    if at >= table.len() {
        table.resize((at + 1).max(2 * table.len()), fill);
    }
    &mut table[at]
}

/// Streams one depfile's names: keeps the main rule's targets and first
/// prerequisite for the mapping checks, and resolves its prerequisites as they
/// come. The checks themselves run after the whole file parsed (see
/// [`check_unit`]), so a syntax error always wins.
pub(super) struct UnitSink<'a, 'w> {
    pub(super) worker: &'w mut Worker,
    pub(super) shared: &'w SharedFiles,
    pub(super) scope: Scope<'w>,
    pub(super) dir: &'w str,
    pub(super) max_path: usize,
    /// Targets of the rule being read.
    pub(super) targets: Vec<Cow<'a, str>>,
    /// Targets of the first rule with prerequisites.
    pub(super) main_targets: Vec<Cow<'a, str>>,
    /// First prerequisite of that rule.
    pub(super) first: Option<Cow<'a, str>>,
    /// The object's stem, while later prerequisites are compared with it
    /// (only when the first does not end with it).
    pub(super) stem: Option<String>,
    /// Later prerequisites of the main rule that end with the stem.
    pub(super) stem_matches: Vec<String>,
    /// Rules with at least one prerequisite so far.
    pub(super) rules_with_prereqs: usize,
    /// Whether the rule being read has a prerequisite yet.
    pub(super) rule_has_prereqs: bool,
    /// Whether the rule being read is the main rule.
    pub(super) in_main: bool,
    pub(super) too_long: bool,
    pub(super) table_full: bool,
    /// Whether a relative prerequisite was resolved against `dir`.
    pub(super) relative: bool,
    /// The last project file listed, [`OUTSIDE`] before the first.
    pub(super) last: FileId,
    pub(super) prereqs: Vec<FileId>,
    /// Whether the main rule lists a prerequisite outside both roots.
    pub(super) lists_outside: bool,
    /// The depfile's timestamp, and its prerequisites that are not older.
    pub(super) mtime: SystemTime,
    pub(super) aged: Vec<Aged>,
}

impl<'a> depfile_syntax::Sink<'a> for UnitSink<'a, '_> {
    fn target(&mut self, name: Cow<'a, str>) {
        self.targets.push(name);
    }

    fn prereq(&mut self, name: Cow<'a, str>) {
        if !self.rule_has_prereqs {
            self.rule_has_prereqs = true;
            self.rules_with_prereqs += 1;
            self.in_main = self.rules_with_prereqs == 1;
            if self.in_main {
                self.main_targets = std::mem::take(&mut self.targets);
                self.first = Some(name.clone());
                self.stem = self
                    .main_targets
                    .first()
                    .and_then(|t| object_stem(t))
                    .filter(|stem| !ends_with_path(&name, stem))
                    .map(str::to_owned);
            }
        } else if let Some(stem) = &self.stem {
            if self.in_main && ends_with_path(&name, stem) {
                self.stem_matches.push(name.to_string());
            }
        }
        if !self.in_main {
            return; // a second rule with prerequisites: rejected after the parse
        }
        if name.len() > self.max_path {
            self.too_long = true;
            return;
        }
        self.relative |= !name.starts_with('/');
        match self
            .worker
            .resolve(self.shared, self.scope, self.dir, &name, self.last)
        {
            Some(OUTSIDE) => self.lists_outside = true,
            Some(id) => {
                self.worker.follows(self.last, id);
                self.last = id;
                // Each file once per unit, in first-listed order, with its
                // freshness against the depfile.
                let serial = self.worker.serial;
                let seen = self.worker.seen(id);
                if seen.stamp != serial {
                    seen.stamp = serial;
                    match seen.mtime {
                        Some(Some(t)) if t <= self.mtime => {}
                        Some(Some(_)) => self.aged.push(Aged::Newer(id)),
                        // No timestamp (or, never, none known to this worker).
                        _ => self.aged.push(Aged::Unknown(id)),
                    }
                    self.prereqs.push(id);
                }
            }
            None => self.table_full = true,
        }
    }

    fn end_rule(&mut self) {
        self.targets.clear();
        self.rule_has_prereqs = false;
        self.in_main = false;
    }
}

/// Reads and parses one `.d`, resolving relative prerequisites against `dir`
/// (the directory its compiler ran in). Checks, first failure wins: readable;
/// timestamp; syntax. The mapping checks come later, in [`check_unit`].
pub(super) fn read_one(
    reader: &Reader,
    depfile: &str,
    scope: Scope<'_>,
    dir: &str,
    shared: &SharedFiles,
    worker: &mut Worker,
) -> Result<Option<Parsed>, Gap> {
    use std::os::unix::fs::MetadataExt;
    worker.serial = worker.serial.wrapping_add(1);
    if worker.serial == 0 {
        // Wrapped: old stamps could collide with the new serial numbers.
        worker.seen.iter_mut().for_each(|s| s.stamp = 0);
        worker.serial = 1;
    }
    let mut buf = std::mem::take(&mut worker.buf);
    let result = (|| {
        let (meta, n) = reader
            .read_into_meta(depfile, &mut buf)
            .map_err(|e| e.gap(depfile, Code::DepFileUnreadable, Code::LimitExceeded))?;
        let bytes = &buf[..n];
        let mtime = meta.modified().map_err(|e| {
            Gap::new(
                Code::DepPrereqUninspectable,
                format!("{depfile}: cannot read its timestamp: {e}"),
            )
        })?;
        if super::super::ninja_deps::is_deps_log(bytes) {
            // A ninja deps log, recognised by its header: merged in `finish`.
            let roots = (scope.source_root, scope.build_root);
            let max_path = reader.limits().max_path_len;
            let log = super::ninja_units::prepare(depfile, bytes, roots, &shared.dirs, max_path);
            worker.logs.push(log);
            return Ok(None);
        }
        let mut sink = UnitSink {
            worker: &mut *worker,
            shared,
            scope,
            dir,
            max_path: reader.limits().max_path_len,
            targets: Vec::new(),
            main_targets: Vec::new(),
            first: None,
            stem: None,
            stem_matches: Vec::new(),
            rules_with_prereqs: 0,
            rule_has_prereqs: false,
            in_main: false,
            too_long: false,
            table_full: false,
            relative: false,
            last: OUTSIDE,
            prereqs: Vec::with_capacity(n / 256 + 4),
            lists_outside: false,
            mtime,
            aged: Vec::new(),
        };
        depfile_syntax::parse_into(bytes, &mut sink)
            .map_err(|e| Gap::new(Code::DepFileMalformed, format!("{depfile}: {e}")))?;
        Ok(Some(Parsed {
            identity: (meta.dev(), meta.ino()),
            main_targets: sink.main_targets.iter().map(|t| t.to_string()).collect(),
            first: sink.first.map(Cow::into_owned),
            stem_matches: sink.stem_matches,
            rules_with_prereqs: sink.rules_with_prereqs,
            too_long: sink.too_long,
            table_full: sink.table_full,
            relative_to: sink.relative.then(|| dir.to_owned()),
            prereqs: sink.prereqs,
            aged: sink.aged,
            lists_outside: sink.lists_outside,
            mtime,
        }))
    })();
    // A deps log is one large file: its buffer is not kept for small depfiles.
    if buf.capacity() > LARGE_BUFFER {
        buf = Vec::new();
    }
    worker.buf = buf;
    result
}

/// Above this capacity a worker's read buffer is freed after use.
const LARGE_BUFFER: usize = 4 << 20;

/// The directory the compiler of a Makefiles depfile ran in, read off its
/// path: what comes before `/CMakeFiles/<name>.dir/` (empty when nothing
/// matches). Only a first guess, made before the codemodel is known; the
/// owner target's `dir_build` decides (see [`Pending::finish`]).
pub(super) fn guessed_dir(depfile: &str) -> &str {
    split_object_dir(depfile).map_or("", |(dir, _)| dir)
}

/// The dependency-file list, read and checked.
pub(super) struct DepList {
    /// Absolute, sorted; empty when the list itself failed.
    pub(super) entries: Vec<String>,
    /// Gaps of the list itself.
    pub(super) gaps: Vec<Gap>,
    /// Whether the list failed so that no depfile is read.
    pub(super) failed: bool,
}

/// Reads `dep_list` (one path per line or NUL-separated, relative to
/// `build_root`) and checks its entries.
/// The dependency files the build left in `build_root`, found without a
/// list (no `--dep-list`): every regular `*.d` file below a target's object
/// directory (`…/CMakeFiles/<target>.dir/…`, as CMake places each unit's
/// depfile beside its object), and `build_root/.ninja_deps`, ninja's deps
/// log, when it exists. The walk does not follow symlinks; the result is
/// sorted. The audit is the list's: a compiled unit whose depfile is missing
/// is a gap as before.
fn found_in(reader: &Reader, build_root: &str) -> DepList {
    let mut gaps = Vec::new();
    let mut entries = Vec::new();
    let walk = walkdir::WalkDir::new(build_root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != ".git");
    for e in walk {
        let e = match e {
            Ok(e) => e,
            Err(err) => {
                gaps.push(Gap::new(
                    Code::DepListUnreadable,
                    format!("cannot look for dependency files in {build_root}: {err}"),
                ));
                continue;
            }
        };
        if !e.file_type().is_file() {
            continue;
        }
        let Some(p) = e.path().to_str() else { continue };
        let in_object_dir = p
            .split_once("/CMakeFiles/")
            .is_some_and(|(_, rest)| rest.contains(".dir/"));
        if p.ends_with(".d") && in_object_dir {
            entries.push(paths::fold(p));
        }
    }
    let log = format!("{build_root}/.ninja_deps");
    if std::fs::metadata(&log).is_ok_and(|m| m.is_file()) {
        entries.push(log);
    }
    entries.sort();
    entries.dedup();
    if let Some(long) = entries
        .iter()
        .find(|p| p.len() > reader.limits().max_path_len)
    {
        gaps.push(Gap::new(
            Code::LimitExceeded,
            format!(
                "{long}: a path exceeds {} bytes (--max-path-len)",
                reader.limits().max_path_len
            ),
        ));
        entries.retain(|p| p.len() <= reader.limits().max_path_len);
    }
    if entries.is_empty() && gaps.is_empty() {
        gaps.push(Gap::new(
            Code::DepListUnreadable,
            format!(
                "no dependency files in {build_root}: no CMakeFiles/<target>.dir/**/*.d and no .ninja_deps (build the project first)"
            ),
        ));
    }
    bounded(reader, entries, gaps)
}

/// A dependency list of `entries` (sorted), or a failed one when they are
/// more than `--max-depfiles`.
fn bounded(reader: &Reader, entries: Vec<String>, mut gaps: Vec<Gap>) -> DepList {
    if entries.len() > reader.limits().max_depfiles {
        gaps.push(Gap::new(
            Code::LimitExceeded,
            format!(
                "{} dependency files exceed the limit of {} (--max-depfiles)",
                entries.len(),
                reader.limits().max_depfiles
            ),
        ));
        return DepList {
            entries: Vec::new(),
            gaps,
            failed: true,
        };
    }
    DepList {
        entries,
        gaps,
        failed: false,
    }
}

pub(super) fn read_list(reader: &Reader, dep_list: &str, build_root: &str) -> DepList {
    let mut gaps = Vec::new();
    let failed = |gaps: Vec<Gap>| DepList {
        entries: Vec::new(),
        gaps,
        failed: true,
    };
    if dep_list.is_empty() {
        return found_in(reader, build_root);
    }
    let list = match reader.read(dep_list) {
        Ok(b) => b,
        Err(e) => {
            gaps.push(e.gap(dep_list, Code::DepListUnreadable, Code::LimitExceeded));
            return failed(gaps);
        }
    };
    let Ok(list) = std::str::from_utf8(&list) else {
        gaps.push(Gap::new(
            Code::DepListUnreadable,
            format!("{dep_list}: not valid UTF-8"),
        ));
        return failed(gaps);
    };
    // One path per line; NUL-separated lists are accepted too. Relative lines are relative to the build root.
    let sep = if list.contains('\0') { '\0' } else { '\n' };
    let mut entries: Vec<String> = Vec::new();
    let mut seen: crate::fasthash::FastSet<String> = crate::fasthash::FastSet::default();
    for line in list.split(sep) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if line.len() > reader.limits().max_path_len {
            gaps.push(Gap::new(
                Code::LimitExceeded,
                format!(
                    "{dep_list}: a path exceeds {} bytes (--max-path-len)",
                    reader.limits().max_path_len
                ),
            ));
            continue;
        }
        let abs = paths::join_fold(build_root, line);
        if !paths::is_within(&abs, build_root) {
            gaps.push(Gap::new(
                Code::PathEscapesRoot,
                format!("{dep_list}: {line:?} is outside the build root"),
            ));
            continue;
        }
        if !seen.insert(abs.clone()) {
            gaps.push(Gap::new(
                Code::DepFileDuplicate,
                format!("{abs} is listed twice"),
            ));
            continue;
        }
        entries.push(abs);
    }
    if entries.is_empty() && gaps.is_empty() {
        gaps.push(Gap::new(
            Code::DepListUnreadable,
            format!("{dep_list}: lists no dependency files"),
        ));
    }
    entries.sort();
    bounded(reader, entries, gaps)
}
