//! Compiler dependency files from `--dep-list`: mapping, completeness and freshness.
//!
//! Invariant: when [`load`] returns no gaps, every compiled C/C++ translation
//! unit (target, source) of the codemodel has exactly one `.d` file, each `.d`
//! maps to exactly one such unit through the Unix Makefiles layout
//! `<dir_build>/CMakeFiles/<target>.dir/…` and its first prerequisite, its rule
//! target is its own object file, and no project prerequisite it lists is newer
//! than it (contract §7-8). Missing evidence is never read as "no dependencies".
//!
//! Paths in a Makefiles depfile are as the compiler opened them, relative to
//! the directory the compiler ran in (`<dir_build>`); they are joined and folded
//! lexically (symlinks kept, as CMake keeps them). Only prerequisites inside the
//! source or build root are project prerequisites; system headers are ignored.

use std::borrow::Cow;
use std::collections::HashSet;
use std::time::SystemTime;

use super::depfile_syntax;
use super::file_api::Codemodel;
use super::Reader;
use crate::fasthash::{hash_str, FastMap};
use crate::paths;
use crate::reason::{Code, Gap};

pub use super::aliases::join_outside_aliases;
pub use super::coverage::{coverage_gaps, language_supported};
use super::evidence::PathIndex;
pub use super::evidence::{DepEvidence, FileId, Tu};

/// Provisional id of a prerequisite outside both roots (a system header).
const OUTSIDE: FileId = FileId::MAX;

/// Number of lock shards of the shared path table (a power of two).
const SHARDS: usize = 64;

/// Project files interned by all workers at once: folded path → provisional id.
/// Workers reach it only on a miss of their own token cache, so the locks are
/// taken once per distinct spelling per worker, not once per prerequisite.
/// Provisional ids depend on thread timing; [`load`] renumbers them in path
/// order before anything else sees them.
/// One lock shard of [`SharedFiles`]: path → (id, timestamp).
type Shard = std::sync::Mutex<FastMap<Box<str>, (FileId, Option<SystemTime>)>>;

struct SharedFiles {
    shards: Vec<Shard>,
    next: std::sync::atomic::AtomicU64,
    /// Which directories lead through a symlink, for [`stat_file`].
    dirs: DirMemo,
}

impl SharedFiles {
    fn new() -> Self {
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
    fn intern(&self, path: &str, h: u64) -> Option<(FileId, Option<SystemTime>, Option<FileStat>)> {
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
    fn len(&self) -> usize {
        self.next
            .load(std::sync::atomic::Ordering::Relaxed)
            .min(u64::from(OUTSIDE)) as usize
    }

    /// Empties the table into the path of each id (moved, not copied); an id
    /// without one (never: every id is inserted) gets an empty path.
    fn take_paths(&self) -> Vec<String> {
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
    tokens: TokenCache,
    /// Reused key buffer for relative tokens.
    scratch: String,
    /// Files this worker interned first, with their path's hash and stat.
    created: Vec<(FileId, u64, FileStat)>,
    /// What each depfile it took gave, by entry index: not yet mapped...
    results: Vec<(usize, Result<Parsed, Gap>)>,
    /// ... and mapped, once the codemodel was published.
    mapped: Vec<(usize, Mapped)>,
    buf: Vec<u8>,
    /// What this worker knows of each id, see [`Seen`].
    seen: Vec<Seen>,
    /// Number of depfiles this worker started (never 0 while one is read).
    serial: u32,
    /// `next[id]`: the project file that followed `id` last time (units of a
    /// target list their headers in much the same order), checked against
    /// the spelling before it is trusted; [`OUTSIDE`] when none.
    next: Vec<FileId>,
    /// `spelling[id]`: (offset, length) in `arena` of the absolute token this
    /// worker resolved to `id` first; `(0, 0)` when none.
    spelling: Vec<(u32, u32)>,
    arena: String,
    /// Entries that are ninja deps logs (recognised by their header), with
    /// their bytes and timestamp: read here, merged after the depfiles.
    logs: Vec<(String, Vec<u8>, SystemTime)>,
}

/// A worker's token → id cache, without an allocation per token: the
/// tokens are kept in one buffer and the map holds their hash and place.
/// A token whose hash another token took is not cached (it is resolved the
/// slow way each time); every hit is checked byte for byte.
#[derive(Default)]
struct TokenCache {
    by_hash: FastMap<u64, (u32, u32, FileId)>,
    text: String,
}

impl TokenCache {
    fn get(&self, hash: u64, token: &str) -> Option<FileId> {
        let &(at, len, id) = self.by_hash.get(&hash)?;
        (self.text.get(at as usize..at as usize + len as usize) == Some(token)).then_some(id)
    }

    fn insert(&mut self, hash: u64, token: &str, id: FileId) {
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
struct Seen {
    /// `== serial`: already listed by the depfile being read.
    stamp: u32,
    /// Its timestamp (`Some(None)`: it has none), once this worker met it.
    mtime: Option<Option<SystemTime>>,
}

/// The roots a prerequisite must lie in to be a project file.
#[derive(Clone, Copy)]
struct Scope<'m> {
    source_root: &'m str,
    build_root: &'m str,
    /// Each root's first (up to) eight bytes as a little-endian word, and the
    /// mask of the bytes that count, for [`Scope::may_hold`].
    heads: [(u64, u64); 2],
}

impl<'m> Scope<'m> {
    fn new(source_root: &'m str, build_root: &'m str) -> Self {
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
    fn may_hold(&self, path: &str) -> bool {
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
    fn resolve(
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
    fn spelled(&self, id: FileId) -> Option<&str> {
        let &(at, len) = self.spelling.get(id as usize)?;
        if len == 0 {
            return None;
        }
        self.arena.get(at as usize..(at + len) as usize)
    }

    /// Records `name` as the absolute spelling of `id` (the first one wins).
    fn spell(&mut self, id: FileId, name: &str) {
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
    fn seen(&mut self, id: FileId) -> &mut Seen {
        slot(&mut self.seen, id, Seen::default())
    }

    /// Remembers that `id` followed `last` in a unit.
    fn follows(&mut self, last: FileId, id: FileId) {
        if last == OUTSIDE {
            return;
        }
        *slot(&mut self.next, last, OUTSIDE) = id;
    }
}

/// The entry of `id` in a by-id table that grows (doubling, new entries
/// `fill`) on first use of an id past its end.
fn slot<T: Clone>(table: &mut Vec<T>, id: FileId, fill: T) -> &mut T {
    let at = id as usize;
    if at >= table.len() {
        table.resize((at + 1).max(2 * table.len()), fill);
    }
    &mut table[at]
}

struct LocalUnit {
    target: usize,
    /// Index of the main source in the target's compiled sources.
    source_index: usize,
    source: String,
    /// (device, inode) of the depfile, to catch one file listed under two spellings.
    identity: (u64, u64),
    /// Provisional ids, each once, in first-listed order.
    prereqs: Vec<FileId>,
    /// Prerequisites newer than the depfile or without a timestamp, in order.
    aged: Vec<Aged>,
}

/// The unit depfile `d` (owned by `target`) describes, from its parse `p`:
/// the mapping checks ([`check_unit`]) and the freshness of its prerequisites.
fn unit_of(
    d: &str,
    model: &Codemodel,
    target: usize,
    max_path: usize,
    p: Parsed,
    sources: &FastMap<(usize, &str), usize>,
) -> Result<LocalUnit, Gap> {
    let (source_index, source) = check_unit(d, model, target, max_path, &p, sources)?;
    Ok(LocalUnit {
        target,
        source_index,
        source,
        identity: p.identity,
        prereqs: p.prereqs,
        aged: p.aged,
    })
}

/// A prerequisite whose timestamp does not show the depfile is fresh.
#[derive(Clone, Copy)]
enum Aged {
    /// Modified after the depfile was written.
    Newer(FileId),
    /// No timestamp could be read.
    Unknown(FileId),
}

/// Streams one depfile's names: keeps the main rule's targets and first
/// prerequisite for the mapping checks, and resolves its prerequisites as they
/// come. The checks themselves run after the whole file parsed (see
/// [`check_unit`]), so a syntax error always wins.
struct UnitSink<'a, 'w> {
    worker: &'w mut Worker,
    shared: &'w SharedFiles,
    scope: Scope<'w>,
    dir: &'w str,
    max_path: usize,
    /// Targets of the rule being read.
    targets: Vec<Cow<'a, str>>,
    /// Targets of the first rule with prerequisites.
    main_targets: Vec<Cow<'a, str>>,
    /// First prerequisite of that rule.
    first: Option<Cow<'a, str>>,
    /// Rules with at least one prerequisite so far.
    rules_with_prereqs: usize,
    /// Whether the rule being read has a prerequisite yet.
    rule_has_prereqs: bool,
    /// Whether the rule being read is the main rule.
    in_main: bool,
    too_long: bool,
    table_full: bool,
    /// Whether a relative prerequisite was resolved against `dir`.
    relative: bool,
    /// The last project file listed, [`OUTSIDE`] before the first.
    last: FileId,
    prereqs: Vec<FileId>,
    /// The depfile's timestamp, and its prerequisites that are not older.
    mtime: SystemTime,
    aged: Vec<Aged>,
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
            Some(OUTSIDE) => {}
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

/// What one `.d` says, read before its owner target is known.
struct Parsed {
    /// (device, inode) of the depfile, to catch one file listed under two spellings.
    identity: (u64, u64),
    /// Targets of the first rule with prerequisites.
    main_targets: Vec<String>,
    /// First prerequisite of that rule.
    first: Option<String>,
    rules_with_prereqs: usize,
    too_long: bool,
    table_full: bool,
    /// The directory relative prerequisites were resolved against, when there were any.
    relative_to: Option<String>,
    /// Provisional ids of its project prerequisites, each once, in first-listed order.
    prereqs: Vec<FileId>,
    /// Those not older than the depfile, or without a timestamp, in order.
    aged: Vec<Aged>,
}

/// Reads and parses one `.d`, resolving relative prerequisites against `dir`
/// (the directory its compiler ran in). Checks, first failure wins: readable;
/// timestamp; syntax. The mapping checks come later, in [`check_unit`].
fn read_one(
    reader: &Reader,
    depfile: &str,
    scope: Scope<'_>,
    dir: &str,
    shared: &SharedFiles,
    worker: &mut Worker,
) -> Result<Parsed, Gap> {
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
        if super::ninja_deps::is_deps_log(bytes) {
            // A ninja deps log, recognised by its header: merged in `finish`.
            worker
                .logs
                .push((depfile.to_owned(), bytes.to_vec(), mtime));
            return Err(Gap::new(
                Code::DepFileUnmapped,
                format!("{depfile}: a ninja deps log"),
            ));
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
            rules_with_prereqs: 0,
            rule_has_prereqs: false,
            in_main: false,
            too_long: false,
            table_full: false,
            relative: false,
            last: OUTSIDE,
            prereqs: Vec::with_capacity(n / 256 + 4),
            mtime,
            aged: Vec::new(),
        };
        depfile_syntax::parse_into(bytes, &mut sink)
            .map_err(|e| Gap::new(Code::DepFileMalformed, format!("{depfile}: {e}")))?;
        Ok(Parsed {
            identity: (meta.dev(), meta.ino()),
            main_targets: sink.main_targets.iter().map(|t| t.to_string()).collect(),
            first: sink.first.map(Cow::into_owned),
            rules_with_prereqs: sink.rules_with_prereqs,
            too_long: sink.too_long,
            table_full: sink.table_full,
            relative_to: sink.relative.then(|| dir.to_owned()),
            prereqs: sink.prereqs,
            aged: sink.aged,
        })
    })();
    worker.buf = buf;
    result
}

/// The directory the compiler of a Makefiles depfile ran in, read off its
/// path: what comes before `/CMakeFiles/<name>.dir/` (empty when nothing
/// matches). Only a first guess, made before the codemodel is known; the
/// owner target's `dir_build` decides (see [`Pending::finish`]).
fn guessed_dir(depfile: &str) -> &str {
    let mut from = 0;
    while let Some(pos) = depfile[from..].find("/CMakeFiles/") {
        let at = from + pos;
        let seg_start = at + "/CMakeFiles/".len();
        if let Some(len) = depfile[seg_start..].find('/') {
            if depfile[seg_start..seg_start + len].ends_with(".dir") {
                return &depfile[..at];
            }
        }
        from = seg_start;
    }
    ""
}

/// The mapping checks after a clean parse, first failure wins: exactly one
/// rule with prerequisites; one target, its own object; first prerequisite a
/// compiled source of the owner; no prerequisite path over `--max-path-len`.
/// Returns the unit's main source.
fn check_unit(
    depfile: &str,
    model: &Codemodel,
    target: usize,
    max_path: usize,
    sink: &Parsed,
    sources: &FastMap<(usize, &str), usize>,
) -> Result<(usize, String), Gap> {
    let t = &model.targets[target];
    if sink.rules_with_prereqs > 1 {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!("{depfile}: more than one rule with prerequisites"),
        ));
    }
    let Some(first) = &sink.first else {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!("{depfile}: no rule with prerequisites"),
        ));
    };
    if sink.main_targets.len() != 1 {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!(
                "{depfile}: main rule has {} targets",
                sink.main_targets.len()
            ),
        ));
    }
    // The -MT target is the object path relative to the build root; it must be this depfile's object.
    let expected = depfile.strip_suffix(".d").unwrap_or(depfile);
    if !paths::joins_to(&model.build_root, &sink.main_targets[0], expected) {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: rule target {:?} is not its own object {expected}",
                sink.main_targets[0]
            ),
        ));
    }
    let first = paths::join_fold_cow(&t.dir_build, first);
    let Some(&src) = sources.get(&(target, first.as_ref())) else {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: main source {first} is not a compiled source of target {:?}",
                t.name
            ),
        ));
    };
    if sink.too_long {
        return Err(Gap::new(
            Code::LimitExceeded,
            format!(
                "{depfile}: a prerequisite path exceeds {} bytes (--max-path-len)",
                max_path
            ),
        ));
    }
    if sink.table_full {
        return Err(Gap::new(
            Code::LimitExceeded,
            format!("{depfile}: more distinct project files than this tool can number"),
        ));
    }
    Ok((src, t.compiled[src].path.clone()))
}

/// Reads `--dep-list`, maps and audits every listed `.d`. Returns the evidence
/// (possibly partial, for explanations) and every gap found.
pub fn load(reader: &Reader, dep_list: &str, model: &Codemodel) -> (DepEvidence, Vec<Gap>) {
    let roots = (model.source_root.as_str(), model.build_root.as_str());
    let job = ReadJob::new(reader, dep_list, roots);
    job.read_all()
        .finish(reader, model, &SourceIndex::new(model))
}

/// Every compiled source of the codemodel by (target, path), for the check
/// that a depfile's first prerequisite is a compiled source of its owner.
/// Built apart so it can be built while the depfiles are still being read.
pub struct SourceIndex<'m>(FastMap<(usize, &'m str), usize>);

impl<'m> SourceIndex<'m> {
    /// Indexes every compiled source of `model`.
    pub fn new(model: &'m Codemodel) -> Self {
        let mut sources = FastMap::default();
        for (ti, t) in model.targets.iter().enumerate() {
            for (ci, c) in t.compiled.iter().enumerate() {
                sources.entry((ti, c.path.as_str())).or_insert(ci);
            }
        }
        SourceIndex(sources)
    }
}

/// The dependency-file list, read and checked.
struct DepList {
    /// Absolute, sorted; empty when the list itself failed.
    entries: Vec<String>,
    /// Gaps of the list itself.
    gaps: Vec<Gap>,
    /// Whether the list failed so that no depfile is read.
    failed: bool,
}

/// Reads `dep_list` (one path per line or NUL-separated, relative to
/// `build_root`) and checks its entries.
fn read_list(reader: &Reader, dep_list: &str, build_root: &str) -> DepList {
    let mut gaps = Vec::new();
    let failed = |gaps: Vec<Gap>| DepList {
        entries: Vec::new(),
        gaps,
        failed: true,
    };
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
    if entries.len() > reader.limits().max_depfiles {
        gaps.push(Gap::new(
            Code::LimitExceeded,
            format!(
                "{} dependency files exceed the limit of {} (--max-depfiles)",
                entries.len(),
                reader.limits().max_depfiles
            ),
        ));
        return failed(gaps);
    }
    entries.sort();
    DepList {
        entries,
        gaps,
        failed: false,
    }
}

/// Reading every depfile of the list, shared by any number of threads: each
/// calls [`ReadJob::work`] and takes blocks of depfiles until none is left,
/// so the thread that loads the codemodel joins in once it is done. Paths are
/// resolved against the roots given on the command line and each depfile's
/// directory as its path shows it; everything that needs the codemodel waits
/// for [`Pending::finish`].
pub struct ReadJob<'r> {
    reader: &'r Reader,
    dep_list: String,
    /// The roots prerequisites are resolved against (`--source-dir`, `--build-dir`).
    source_root: String,
    build_root: String,
    /// Read by the first thread that needs it.
    list: std::sync::OnceLock<DepList>,
    /// Next entry to take.
    next: std::sync::atomic::AtomicUsize,
    shared: SharedFiles,
    /// The codemodel, once [`ReadJob::publish`]ed: from then on each worker
    /// maps what it reads to its unit as it goes.
    mapper: std::sync::OnceLock<Mapper<'r>>,
}

/// The codemodel and its source index, for mapping depfiles to units.
#[derive(Clone, Copy)]
struct Mapper<'m> {
    model: &'m Codemodel,
    sources: &'m SourceIndex<'m>,
    max_path: usize,
}

/// What the codemodel says of one depfile read.
enum Mapped {
    Unmapped(Gap),
    /// Its relative prerequisites were resolved against a wrong guess of its
    /// directory: to be read again against its owner's (`target`).
    Again(usize),
    Done(Result<LocalUnit, Gap>),
}

impl Mapper<'_> {
    /// Maps depfile `d` (read as `result`; `None`: never read) to its owner
    /// target and checks it ([`unit_of`]).
    fn map(&self, d: &str, result: Option<Result<Parsed, Gap>>) -> Mapped {
        let model = self.model;
        let target = match model.object_owner(d) {
            Ok(t) => t,
            Err(why) => {
                if std::fs::symlink_metadata(d).is_err() {
                    return Mapped::Unmapped(Gap::new(
                        Code::DepFileUnreadable,
                        format!(
                            "{d} does not exist (relative dep-list entries are relative to BUILD)"
                        ),
                    ));
                }
                return Mapped::Unmapped(Gap::new(Code::DepFileUnmapped, format!("{d} {why}")));
            }
        };
        let t = &model.targets[target];
        match result {
            Some(Ok(p))
                if p.relative_to
                    .as_ref()
                    .is_some_and(|dir| *dir != t.dir_build) =>
            {
                Mapped::Again(target)
            }
            Some(Ok(p)) => {
                Mapped::Done(unit_of(d, model, target, self.max_path, p, &self.sources.0))
            }
            Some(Err(g)) => Mapped::Done(Err(g)),
            // Every entry is read; were one not, it would be missing evidence, never empty.
            None => Mapped::Done(Err(Gap::new(
                Code::DepFileUnreadable,
                format!("{d}: not read"),
            ))),
        }
    }
}

impl<'r> ReadJob<'r> {
    /// A job for `dep_list`, resolving against `roots` (source, build).
    pub fn new(
        reader: &'r Reader,
        dep_list: &str,
        (source_root, build_root): (&str, &str),
    ) -> Self {
        ReadJob {
            reader,
            dep_list: dep_list.to_owned(),
            source_root: source_root.to_owned(),
            build_root: build_root.to_owned(),
            list: std::sync::OnceLock::new(),
            next: std::sync::atomic::AtomicUsize::new(0),
            shared: SharedFiles::new(),
            mapper: std::sync::OnceLock::new(),
        }
    }

    /// Hands the codemodel to the workers, so that they map depfiles to units
    /// while the rest is read (only when its roots are the ones the depfiles
    /// are read against; [`Pending::finish`] maps whatever is left).
    pub fn publish(&self, model: &'r Codemodel, sources: &'r SourceIndex<'r>) {
        if model.source_root == self.source_root && model.build_root == self.build_root {
            let _ = self.mapper.set(Mapper {
                model,
                sources,
                max_path: self.reader.limits().max_path_len,
            });
        }
    }

    fn list(&self) -> &DepList {
        self.list
            .get_or_init(|| read_list(self.reader, &self.dep_list, &self.build_root))
    }

    /// Reads depfiles until none is left; returns what this thread read.
    pub fn work(&self) -> Worker {
        const BLOCK: usize = 8;
        let mut w = Worker::default();
        let list = self.list();
        if list.failed {
            return w;
        }
        let scope = Scope::new(&self.source_root, &self.build_root);
        loop {
            let start = self
                .next
                .fetch_add(BLOCK, std::sync::atomic::Ordering::Relaxed);
            let Some(block) = list
                .entries
                .get(start..(start + BLOCK).min(list.entries.len()))
            else {
                break;
            };
            if block.is_empty() {
                break;
            }
            for (k, d) in block.iter().enumerate() {
                let parsed = read_one(self.reader, d, scope, guessed_dir(d), &self.shared, &mut w);
                w.results.push((start + k, parsed));
            }
            if let Some(m) = self.mapper.get() {
                for (i, r) in w.results.drain(..) {
                    w.mapped.push((i, m.map(&list.entries[i], Some(r))));
                }
            }
        }
        w
    }

    /// Reads everything on all cores.
    pub fn read_all(&self) -> Pending<'_, 'r> {
        let workers = std::thread::scope(|s| {
            let helpers: Vec<_> = (1..super::threads())
                .map(|_| s.spawn(|| self.work()))
                .collect();
            self.work_and_join(helpers)
        });
        self.pending(workers)
    }

    /// Reads on this thread too until nothing is left, then waits for the
    /// `helpers` (threads running [`ReadJob::work`]); a helper's panic is
    /// raised here. Returns every thread's worker.
    pub fn work_and_join(
        &self,
        helpers: Vec<std::thread::ScopedJoinHandle<'_, Worker>>,
    ) -> Vec<Worker> {
        let mut workers = vec![self.work()];
        for h in helpers {
            match h.join() {
                Ok(w) => workers.push(w),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        workers
    }

    /// What `workers` (every thread that called [`ReadJob::work`], once all
    /// of them returned) read, by entry.
    pub fn pending(&self, workers: Vec<Worker>) -> Pending<'_, 'r> {
        let list = self.list();
        let mut p = Pending {
            job: self,
            results: std::iter::repeat_with(|| Slot::Unread)
                .take(list.entries.len())
                .collect(),
            created: Vec::new(),
            logs: Vec::new(),
        };
        for w in workers {
            p.logs.extend(w.logs);
            for (i, r) in w.results {
                if let Some(slot) = p.results.get_mut(i) {
                    *slot = Slot::Read(r);
                }
            }
            for (i, m) in w.mapped {
                if let Some(slot) = p.results.get_mut(i) {
                    *slot = Slot::Mapped(m);
                }
            }
            p.created.extend(w.created);
        }
        p
    }
}

/// Depfiles read and parsed, some of them mapped.
pub struct Pending<'j, 'r> {
    job: &'j ReadJob<'r>,
    /// By entry index.
    results: Vec<Slot>,
    created: Vec<(FileId, u64, FileStat)>,
    /// Ninja deps logs met among the entries.
    logs: Vec<(String, Vec<u8>, SystemTime)>,
}

/// What became of one entry of the list.
enum Slot {
    Unread,
    Read(Result<Parsed, Gap>),
    Mapped(Mapped),
}

impl Pending<'_, '_> {
    /// Maps every depfile read to its owner target and audits the whole
    /// evidence against `model` (coverage excepted: see [`coverage_gaps`]).
    /// When the codemodel's roots are not the ones the depfiles were read
    /// against, they are all read again against the codemodel's.
    pub fn finish(
        self,
        reader: &Reader,
        model: &Codemodel,
        sources: &SourceIndex<'_>,
    ) -> (DepEvidence, Vec<Gap>) {
        let job = self.job;
        if job.source_root != model.source_root || job.build_root != model.build_root {
            return load(reader, &job.dep_list, model);
        }
        let mut ev = DepEvidence::default();
        let list = job.list();
        let mut gaps = list.gaps.clone();
        let no_log_gap = || {
            Gap::new(
                Code::DepsLogMissing,
                format!(
                    "the build uses the {:?} generator, which folds compiler depfiles into BUILD/.ninja_deps, and {} names no deps log: add {}/.ninja_deps to it",
                    model.generator, job.dep_list, model.build_root
                ),
            )
        };
        let ninja = model.generator.starts_with("Ninja");
        if list.failed {
            if ninja {
                gaps.push(no_log_gap());
            }
            return (ev, gaps);
        }
        let entries = &list.entries;
        let shared = &job.shared;
        let scope = Scope::new(&model.source_root, &model.build_root);
        let max_path = reader.limits().max_path_len;
        // Map and check every depfile not mapped yet (all of them, unless the
        // codemodel was published while they were read), on all cores; only a
        // depfile whose relative prerequisites were resolved against a wrong
        // guess of its directory waits, to be read again against its owner's.
        let mapper = Mapper {
            model,
            sources,
            max_path,
        };
        let mapped: Vec<Mapped> = if self.results.iter().all(|s| matches!(s, Slot::Mapped(_))) {
            self.results
                .into_iter()
                .filter_map(|s| match s {
                    Slot::Mapped(m) => Some(m),
                    _ => None,
                })
                .collect()
        } else {
            super::par_map_owned(self.results, |i, slot| match slot {
                Slot::Mapped(m) => m,
                Slot::Read(r) => mapper.map(&entries[i], Some(r)),
                Slot::Unread => mapper.map(&entries[i], None),
            })
        };
        let mut again = Worker::default();
        let mut clean = true;
        let mut units: Vec<(usize, LocalUnit)> = Vec::with_capacity(entries.len());
        let mut logs = self.logs;
        logs.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, m) in mapped.into_iter().enumerate() {
            let d = &entries[i];
            if logs.iter().any(|(l, _, _)| l == d) {
                continue; // merged below
            }
            let unit = match m {
                Mapped::Unmapped(g) => Err(g),
                Mapped::Done(unit) => unit,
                Mapped::Again(target) => {
                    let dir = &model.targets[target].dir_build;
                    let parsed = read_one(reader, d, scope, dir, shared, &mut again);
                    clean = false;
                    parsed.and_then(|p| unit_of(d, model, target, max_path, p, &sources.0))
                }
            };
            match unit {
                Ok(u) => units.push((i, u)),
                Err(g) => {
                    clean = false;
                    gaps.push(g);
                }
            }
        }
        // Every file met, with its path's hash and its stat, by id.
        let files = shared.take_paths();
        let mut stats: Vec<FileStat> = std::iter::repeat_with(|| FileStat {
            mtime: None,
            size: None,
            real: None,
        })
        .take(files.len())
        .collect();
        let mut hashes: Vec<Option<u64>> = vec![None; files.len()];
        for (id, hash, st) in self.created.into_iter().chain(again.created) {
            if let Some(slot) = stats.get_mut(id as usize) {
                *slot = st;
                hashes[id as usize] = Some(hash);
            }
        }
        ev.files = files;
        logs.extend(again.logs);
        let (mut ev, mut gaps) = audit(model, entries, units, (stats, &hashes), clean, ev, gaps);
        if ninja && logs.is_empty() {
            gaps.push(no_log_gap());
        }
        for (path, bytes, mtime) in logs {
            super::ninja_units::merge(&mut ev, &mut gaps, model, &path, &bytes, mtime, max_path);
        }
        (ev, gaps)
    }
}

/// Builds the evidence from the mapped units: the file table and its index,
/// duplicate and freshness checks, symlink aliases and generated headers.
fn audit(
    model: &Codemodel,
    entries: &[String],
    units: Vec<(usize, LocalUnit)>,
    (stats, hashes): (Vec<FileStat>, &[Option<u64>]),
    clean: bool,
    mut ev: DepEvidence,
    mut gaps: Vec<Gap>,
) -> (DepEvidence, Vec<Gap>) {
    // Only files a mapped unit lists are evidence. When a depfile was
    // rejected or read again, the table also holds what it named (or named
    // under a wrong guess of its directory): leave those out of the index,
    // or a change to such a file would pass for a known header.
    let used: Option<Vec<bool>> = (!clean).then(|| {
        let mut used = vec![false; ev.files.len()];
        for (_, u) in &units {
            for &id in &u.prereqs {
                used[id as usize] = true;
            }
        }
        used
    });
    let listed = |id: usize| used.as_ref().is_none_or(|u| u[id]);
    // Ids stay as the shared table gave them: which worker met a file first
    // decides its number, so nothing may depend on the order of ids.
    // The path index: the hashes were taken when the files were interned.
    let by_path = PathIndex::new(&ev.files, hashes, listed);
    let files = &ev.files;
    let tus = &mut ev.tus;
    {
        let mut tu_of: FastMap<(usize, usize), usize> = FastMap::default();
        let mut identities: FastMap<(u64, u64), usize> = FastMap::default();
        let mut aged_units: Vec<(usize, Vec<Aged>)> = Vec::new(); // (tu index, its aged prerequisites)
        for (entry, u) in units {
            let d = &entries[entry];
            if let Some(prev) = identities.insert(u.identity, entry) {
                gaps.push(Gap::new(
                    Code::DepFileDuplicate,
                    format!("{} and {d} are the same file", entries[prev]),
                ));
                continue;
            }
            if let Some(prev) = tu_of.insert((u.target, u.source_index), entry) {
                gaps.push(Gap::new(
                    Code::DepFileDuplicate,
                    format!(
                        "{} and {d} both describe {} in target {:?}",
                        entries[prev], u.source, model.targets[u.target].name
                    ),
                ));
                continue;
            }
            if !u.aged.is_empty() {
                aged_units.push((tus.len(), u.aged));
            }
            tus.push(Tu {
                target: u.target,
                source: u.source,
                source_index: u.source_index,
                depfile: d.clone(),
                prereqs: u.prereqs,
            });
        }

        // Freshness: every project prerequisite no newer than its depfile
        // (found while mapping; reported here, for the units kept, in order).
        let mut reported = HashSet::new();
        for (tu_idx, aged) in aged_units {
            let tu = &tus[tu_idx];
            for a in aged {
                match a {
                    Aged::Newer(id) => gaps.push(Gap::new(
                        Code::DepEvidenceStale,
                        format!("{} is newer than {}", files[id as usize], tu.depfile),
                    )),
                    Aged::Unknown(id) => {
                        if reported.insert(id) {
                            gaps.push(Gap::new(
                                Code::DepPrereqUninspectable,
                                format!(
                                    "{} (listed in {}) cannot be inspected",
                                    files[id as usize], tu.depfile
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
    ev.by_path = by_path;
    ev.sizes = stats.iter().map(|st| st.size).collect();
    ev.mtime_secs = stats
        .iter()
        .map(|st| {
            st.mtime
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
        })
        .collect();
    // Aliases: the real spelling of files reached through symlinks inside the tree.
    for (id, st) in stats.into_iter().enumerate() {
        if let Some(real) = st.real.filter(|_| listed(id)) {
            ev.aliases.entry(real).or_default().push(id as FileId);
        }
    }
    // Build-time generated headers included by a unit: look the (few) generated
    // files up once, then test ids, not strings, against each unit's prerequisites.
    let mut generated = vec![false; ev.files.len()];
    let mut any_generated = false;
    for g in &model.generated_files {
        for id in ev.ids_of(g, None) {
            generated[id as usize] = true;
            any_generated = true;
        }
    }
    let mut gi = Vec::new();
    if any_generated {
        for tu in &ev.tus {
            for &id in &tu.prereqs {
                if generated[id as usize] {
                    gi.push((tu.target, ev.files[id as usize].clone()));
                }
            }
        }
    }
    gi.sort();
    gi.dedup();
    ev.generated_includes = gi;
    (ev, gaps)
}

struct FileStat {
    mtime: Option<SystemTime>,
    /// Size in bytes (following links).
    size: Option<u64>,
    /// Real path when it differs from the lexical one.
    real: Option<String>,
}

/// Directory → whether it or an ancestor is a symlink (or cannot be
/// inspected): one `lstat` per directory for all the workers of one read.
#[derive(Default)]
struct DirMemo(std::sync::Mutex<FastMap<String, bool>>);

impl DirMemo {
    fn memo(&self) -> std::sync::MutexGuard<'_, FastMap<String, bool>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when `dir` or one of its ancestors is a symlink (or cannot be inspected).
    fn linked(&self, dir: &str) -> bool {
        if dir.is_empty() || dir == "/" {
            return false;
        }
        if let Some(&v) = self.memo().get(dir) {
            return v;
        }
        // Not under the lock: two workers may both look, and agree.
        let here = match std::fs::symlink_metadata(dir) {
            Ok(m) => m.file_type().is_symlink(),
            Err(_) => true,
        };
        let parent = dir.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
        let v = here || self.linked(parent);
        self.memo().insert(dir.to_owned(), v);
        v
    }
}

fn stat_file(path: &str, dirs: &DirMemo) -> FileStat {
    let lmeta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => {
            return FileStat {
                mtime: None,
                size: None,
                real: None,
            }
        }
    };
    let (dir, _) = path.rsplit_once('/').unwrap_or(("", path));
    let linked = lmeta.file_type().is_symlink() || dirs.linked(dir);
    if !linked {
        // No symlink anywhere on the path: the lexical spelling is the real one.
        return FileStat {
            mtime: lmeta.modified().ok(),
            size: Some(lmeta.len()),
            real: None,
        };
    }
    // Follow links: a dangling one has no timestamp to trust.
    let meta = std::fs::metadata(path).ok();
    let mtime = meta.as_ref().and_then(|m| m.modified().ok());
    let size = meta.map(|m| m.len());
    let real = paths::real(path).filter(|r| r != path);
    FileStat { mtime, size, real }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::file_api::{CompiledSource, Target, TargetKind};
    use crate::ingest::Limits;

    #[test]
    fn a_source_listed_twice_is_covered_by_its_one_unit() {
        let source = |path: &str| CompiledSource {
            path: path.into(),
            language: "CXX".into(),
            generated: false,
        };
        let mut model = Codemodel::default();
        model.targets.push(Target {
            name: "t".into(),
            id: "t::@1".into(),
            kind: TargetKind::StaticLibrary,
            artifacts: Vec::new(),
            dir_build: "/b".into(),
            compiled: vec![source("/s/a.cpp"), source("/s/a.cpp"), source("/s/b.cpp")],
            deps: Vec::new(),
            object_inputs: Vec::new(),
            defines: Vec::new(),
            link_paths: Vec::new(),
            ..Target::default()
        });
        let ev = DepEvidence {
            files: vec!["/s/a.cpp".into()],
            tus: vec![Tu {
                target: 0,
                source: "/s/a.cpp".into(),
                source_index: 0,
                depfile: "/b/CMakeFiles/t.dir/a.cpp.o.d".into(),
                prereqs: vec![0],
            }],
            ..DepEvidence::default()
        };
        let gaps = coverage_gaps(&model, &ev, &[true]);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert!(gaps[0].to_string().contains("/s/b.cpp"), "{gaps:?}");
        assert!(coverage_gaps(&model, &ev, &[false]).is_empty());
    }

    #[test]
    fn token_cache_hits_only_the_token_it_holds() {
        let mut c = TokenCache::default();
        let (a, b) = ("/s/a.h", "/s/b.h");
        c.insert(hash_str(a), a, 7);
        assert_eq!(c.get(hash_str(a), a), Some(7));
        assert_eq!(c.get(hash_str(b), b), None);
        // Same hash, other token (a collision): neither cached nor confused.
        c.insert(hash_str(a), b, 8);
        assert_eq!(c.get(hash_str(a), b), None);
        assert_eq!(c.get(hash_str(a), a), Some(7));
        c.insert(hash_str(b), b, 9);
        assert_eq!(c.get(hash_str(b), b), Some(9));
    }

    #[test]
    fn path_index_checks_every_hit_against_the_file_table() {
        let files: Vec<String> = ["/s/a.h", "/s/b.h", "/s/c.h"].map(String::from).into();
        let hashes = [None, Some(hash_str("/s/b.h")), None];
        let index = PathIndex::new(&files, &hashes, |id| id != 2);
        assert_eq!(index.get(&files, "/s/a.h"), Some(0));
        assert_eq!(index.get(&files, "/s/b.h"), Some(1));
        assert_eq!(index.get(&files, "/s/c.h"), None, "not kept");
        assert_eq!(index.get(&files, "/s/d.h"), None);
        // A hash taken by another path: the slot's file does not match, so
        // the spilled ids are searched.
        let mut collided = PathIndex::default();
        collided.by_hash.insert(hash_str("/s/b.h"), 0);
        collided.spill.push(1);
        assert_eq!(collided.get(&files, "/s/b.h"), Some(1));
        assert_eq!(collided.get(&files, "/s/a.h"), None);
    }

    #[test]
    fn may_hold_rejects_only_paths_that_start_with_neither_root() {
        let s = Scope::new("/work/src", "/b");
        for (path, want) in [
            ("/work/src/a.h", true),
            ("/work/srcX/a.h", true), // same first eight bytes: only a guess
            ("/work/sr", true),
            ("/work/s", false),
            ("/usr/include/stdio.h", false),
            ("/b", true),
            ("/b/x.h", true),
            ("/bin/x.h", true),
            ("/", false),
            ("", false),
            ("/a/b", false),
        ] {
            assert_eq!(s.may_hold(path), want, "{path}");
            let slow = |r: &str| path.as_bytes().starts_with(&r.as_bytes()[..r.len().min(8)]);
            assert_eq!(want, slow(s.source_root) || slow(s.build_root), "{path}");
        }
        let all = Scope::new("/", "/");
        assert!(all.may_hold("/usr/x.h"));
    }

    #[test]
    fn guessed_dir_is_what_precedes_the_object_directory() {
        assert_eq!(guessed_dir("/b/lib/CMakeFiles/t.dir/a.cpp.o.d"), "/b/lib");
        assert_eq!(guessed_dir("/b/CMakeFiles/t.dir/sub/a.cpp.o.d"), "/b");
        // A CMakeFiles directory that is not an object directory is skipped.
        assert_eq!(
            guessed_dir("/b/CMakeFiles/x/lib/CMakeFiles/t.dir/a.o.d"),
            "/b/CMakeFiles/x/lib"
        );
        // Only a guess: the first object directory wins, the codemodel decides.
        assert_eq!(
            guessed_dir("/t/CMakeFiles/w.dir/b/CMakeFiles/t.dir/a.o.d"),
            "/t"
        );
        assert_eq!(guessed_dir("/b/a.o.d"), "");
    }

    /// A hand-made tree whose build root itself lies inside a
    /// `CMakeFiles/<x>.dir/` directory, so the guess made before the codemodel
    /// is known is wrong for every depfile, and relative prerequisites must be
    /// resolved again against the owner's directory.
    struct Tree {
        _tmp: tempfile::TempDir,
        model: Codemodel,
        dep_list: String,
        header: String,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = paths::fold(tmp.path().to_str().expect("utf-8 temp dir"));
        let src = format!("{root}/src");
        let build = format!("{root}/CMakeFiles/w.dir/b");
        let dir_build = format!("{build}/sub");
        let obj_dir = format!("{dir_build}/CMakeFiles/t.dir");
        std::fs::create_dir_all(&src).expect("mkdir");
        std::fs::create_dir_all(&obj_dir).expect("mkdir");
        std::fs::write(format!("{src}/a.cpp"), "int a;\n").expect("write");
        let header = format!("{dir_build}/gen.h");
        std::fs::write(&header, "\n").expect("write");
        // `src/x.h` is `<dir_build>/src/x.h`; the wrong guess of the directory
        // would make it `<root>/src/x.h`, a real file of the source tree.
        std::fs::create_dir_all(format!("{dir_build}/src")).expect("mkdir");
        std::fs::write(format!("{dir_build}/src/x.h"), "\n").expect("write");
        std::fs::write(format!("{src}/x.h"), "\n").expect("write");
        let dep_list = write_depfile(
            &root,
            &obj_dir,
            &format!("sub/CMakeFiles/t.dir/a.cpp.o: {src}/a.cpp \\\n gen.h /usr/include/stdio.h src/x.h\n"),
        );
        let model = one_target_model(&src, &build, &dir_build, obj_dir);
        Tree {
            _tmp: tmp,
            model,
            dep_list,
            header,
        }
    }

    /// Writes `text` as `<obj_dir>/a.cpp.o.d`, last (so it is no older than
    /// its prerequisites), and a dependency list naming it; returns the list.
    fn write_depfile(root: &str, obj_dir: &str, text: &str) -> String {
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(format!("{obj_dir}/a.cpp.o.d"), text).expect("write");
        let dep_list = format!("{root}/deps.txt");
        std::fs::write(&dep_list, format!("{obj_dir}/a.cpp.o.d\n")).expect("write");
        dep_list
    }

    /// A codemodel of one static library `t` compiling `<src>/a.cpp` in
    /// `dir_build`, its objects in `obj_dir`.
    fn one_target_model(src: &str, build: &str, dir_build: &str, obj_dir: String) -> Codemodel {
        Codemodel {
            object_dirs: [(obj_dir, 0)].into_iter().collect(),
            source_root: src.into(),
            build_root: build.into(),
            targets: vec![Target {
                name: "t".into(),
                id: "t::@1".into(),
                kind: TargetKind::StaticLibrary,
                artifacts: Vec::new(),
                dir_build: dir_build.into(),
                compiled: vec![CompiledSource {
                    path: format!("{src}/a.cpp"),
                    language: "CXX".into(),
                    generated: false,
                }],
                deps: Vec::new(),
                object_inputs: Vec::new(),
                defines: Vec::new(),
                link_paths: Vec::new(),
                ..Target::default()
            }],
            ..Codemodel::default()
        }
    }

    fn prereq_paths(ev: &DepEvidence) -> Vec<&str> {
        ev.tus[0]
            .prereqs
            .iter()
            .map(|&id| ev.files[id as usize].as_str())
            .collect()
    }

    #[test]
    fn relative_prerequisites_are_resolved_against_the_owner_not_the_guess() {
        let t = tree();
        let reader = Reader::new(Limits::default());
        let (ev, gaps) = load(&reader, &t.dep_list, &t.model);
        assert!(gaps.is_empty(), "{gaps:?}");
        assert_eq!(ev.tus.len(), 1);
        let source = t.model.targets[0].compiled[0].path.as_str();
        let built_x = format!("{}/src/x.h", t.model.targets[0].dir_build);
        assert_eq!(
            prereq_paths(&ev),
            vec![source, t.header.as_str(), built_x.as_str()]
        );
        assert!(ev.id_of(&t.header).is_some());
        assert!(ev.id_of(&built_x).is_some());
        assert_eq!(ev.source_id(&ev.tus[0]), ev.id_of(source));
        assert!(ev.source_id(&ev.tus[0]).is_some());
        // What the wrong guess named is no evidence: a change to it must stay unknown.
        let decoy = format!("{}/x.h", t.model.source_root);
        assert!(ev.id_of(&decoy).is_none(), "{:?}", ev.files);
        assert!(ev.ids_of(&decoy, None).is_empty());
    }

    #[test]
    fn units_mapped_while_reading_are_the_units_mapped_after() {
        let t = tree();
        let reader = Reader::new(Limits::default());
        let (after, after_gaps) = load(&reader, &t.dep_list, &t.model);
        let sources = SourceIndex::new(&t.model);
        let roots = (t.model.source_root.as_str(), t.model.build_root.as_str());
        let job = ReadJob::new(&reader, &t.dep_list, roots);
        job.publish(&t.model, &sources);
        assert!(job.mapper.get().is_some());
        let pending = job.read_all();
        assert!(
            pending.results.iter().all(|s| matches!(s, Slot::Mapped(_))),
            "every depfile was mapped by the worker that read it"
        );
        let (during, during_gaps) = pending.finish(&reader, &t.model, &sources);
        assert_eq!(format!("{during_gaps:?}"), format!("{after_gaps:?}"));
        assert_eq!(prereq_paths(&during), prereq_paths(&after));
        let decoy = format!("{}/x.h", t.model.source_root);
        assert!(during.id_of(&decoy).is_none());
        // A codemodel with other roots is not handed to the workers.
        let other = ReadJob::new(&reader, &t.dep_list, ("/elsewhere/src", "/elsewhere/build"));
        other.publish(&t.model, &sources);
        assert!(other.mapper.get().is_none());
    }

    /// Two reads in one process (and on one calling thread) of a tree whose
    /// include directory became a symlink in between: the second read sees
    /// the link, whatever the first one learnt about that directory.
    #[test]
    fn each_read_looks_at_the_symlinks_afresh() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = paths::fold(tmp.path().to_str().expect("utf-8 temp dir"));
        let (src, build) = (format!("{root}/src"), format!("{root}/build"));
        let obj_dir = format!("{build}/CMakeFiles/t.dir");
        for d in [format!("{src}/real"), format!("{src}/inc"), obj_dir.clone()] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(format!("{src}/a.cpp"), "int a;\n").expect("write");
        std::fs::write(format!("{src}/real/x.h"), "\n").expect("write");
        std::fs::write(format!("{src}/inc/x.h"), "\n").expect("write");
        let dep_list = write_depfile(
            &root,
            &obj_dir,
            &format!("CMakeFiles/t.dir/a.cpp.o: {src}/a.cpp \\\n {src}/inc/x.h\n"),
        );
        let model = one_target_model(&src, &build, &build, obj_dir);
        let reader = Reader::new(Limits::default());
        let (real_x, listed_x) = (format!("{src}/real/x.h"), format!("{src}/inc/x.h"));
        let (ev, gaps) = load(&reader, &dep_list, &model);
        assert!(gaps.is_empty(), "{gaps:?}");
        assert!(
            ev.ids_of(&real_x, None).is_empty(),
            "inc/ is a directory of its own"
        );
        // inc/ becomes a symlink to real/.
        std::fs::remove_dir_all(format!("{src}/inc")).expect("rm");
        std::os::unix::fs::symlink(format!("{src}/real"), format!("{src}/inc")).expect("ln");
        let (ev, gaps) = load(&reader, &dep_list, &model);
        assert!(gaps.is_empty(), "{gaps:?}");
        let listed = ev.id_of(&listed_x).expect("inc/x.h is listed");
        assert_eq!(ev.ids_of(&real_x, None), vec![listed]);
    }

    #[test]
    fn depfiles_read_against_other_roots_are_read_again() {
        let t = tree();
        let reader = Reader::new(Limits::default());
        // As when --source-dir/--build-dir spell the roots differently from the codemodel.
        let job = ReadJob::new(&reader, &t.dep_list, ("/elsewhere/src", "/elsewhere/build"));
        let (ev, gaps) = job
            .read_all()
            .finish(&reader, &t.model, &SourceIndex::new(&t.model));
        assert!(gaps.is_empty(), "{gaps:?}");
        let source = t.model.targets[0].compiled[0].path.as_str();
        let built_x = format!("{}/src/x.h", t.model.targets[0].dir_build);
        assert_eq!(
            prereq_paths(&ev),
            vec![source, t.header.as_str(), built_x.as_str()]
        );
    }
}
