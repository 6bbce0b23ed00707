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
use super::{ReadError, Reader};
use crate::fasthash::FastMap;
use crate::paths;
use crate::reason::{Code, Gap};

/// Interned id of a project file.
pub type FileId = u32;

/// One translation unit with its dependency evidence.
#[derive(Clone, Debug)]
pub struct Tu {
    /// Owning target (index into the codemodel's targets).
    pub target: usize,
    /// Main source, absolute folded.
    pub source: String,
    /// The `.d` file, absolute folded.
    pub depfile: String,
    /// Project prerequisites (including the main source), de-duplicated.
    pub prereqs: Vec<FileId>,
}

/// The dependency evidence of the whole build.
#[derive(Debug, Default)]
pub struct DepEvidence {
    /// Interned project files (absolute folded paths); index = [`FileId`].
    pub files: Vec<String>,
    /// Path → id, including real-path aliases of files reached through symlinks.
    pub by_path: FastMap<String, FileId>,
    /// Translation units, sorted by (depfile path).
    pub tus: Vec<Tu>,
    /// Targets that include a build-time generated header: (target, header).
    pub generated_includes: Vec<(usize, String)>,
    /// Every `.d` read (for input identity).
    pub depfiles_read: Vec<String>,
}

/// Provisional id of a prerequisite outside both roots (a system header).
const OUTSIDE: FileId = FileId::MAX;

/// Number of lock shards of the shared path table (a power of two).
const SHARDS: usize = 64;

/// Project files interned by all workers at once: folded path → provisional id.
/// Workers reach it only on a miss of their own token cache, so the locks are
/// taken once per distinct spelling per worker, not once per prerequisite.
/// Provisional ids depend on thread timing; [`load`] renumbers them in path
/// order before anything else sees them.
struct SharedFiles {
    shards: Vec<std::sync::Mutex<FastMap<Box<str>, FileId>>>,
    next: std::sync::atomic::AtomicU64,
}

impl SharedFiles {
    fn new() -> Self {
        SharedFiles {
            shards: (0..SHARDS).map(|_| Default::default()).collect(),
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The id of `path`, and whether this call created it.
    fn intern(&self, path: &str) -> Option<(FileId, bool)> {
        use std::hash::BuildHasher;
        let h =
            std::hash::BuildHasherDefault::<crate::fasthash::FxHasher>::default().hash_one(path);
        let shard = &self.shards[(h >> 58) as usize % SHARDS];
        let mut map = match shard.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&id) = map.get(path) {
            return Some((id, false));
        }
        let next = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = FileId::try_from(next).ok().filter(|&id| id != OUTSIDE)?;
        map.insert(path.into(), id);
        Some((id, true))
    }
}

/// One worker's state: its token cache, the files it interned first (with
/// their freshness stat, taken here so every file is stat'ed once, on both
/// cores), and its mapped units and gaps by entry index.
#[derive(Default)]
struct Worker {
    /// Token as written (relative ones joined to their directory) → provisional id or [`OUTSIDE`].
    tokens: FastMap<Box<str>, FileId>,
    /// Reused key buffer for relative tokens.
    scratch: String,
    created: Vec<(FileId, String, FileStat)>,
    units: Vec<(usize, LocalUnit)>,
    gaps: Vec<(usize, Gap)>,
    buf: Vec<u8>,
}

/// The roots a prerequisite must lie in to be a project file.
#[derive(Clone, Copy)]
struct Scope<'m> {
    source_root: &'m str,
    build_root: &'m str,
}

impl Scope<'_> {
    /// False when folded `path` cannot lie in either root: its first eight
    /// bytes (or all of a shorter root) differ from both roots'.
    #[inline]
    fn may_hold(&self, path: &str) -> bool {
        fn head(s: &str) -> &[u8] {
            &s.as_bytes()[..s.len().min(8)]
        }
        let p = path.as_bytes();
        p.starts_with(head(self.source_root)) || p.starts_with(head(self.build_root))
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
    ) -> Option<FileId> {
        let key = if name.starts_with('/') {
            // Most prerequisites are system headers: an absolute, already folded
            // path that starts with neither root is outside without a lookup.
            if !scope.may_hold(name) && paths::is_folded(name) {
                return Some(OUTSIDE);
            }
            name
        } else {
            self.scratch.clear();
            self.scratch.push_str(dir);
            self.scratch.push('/');
            self.scratch.push_str(name);
            self.scratch.as_str()
        };
        if let Some(&id) = self.tokens.get(key) {
            return Some(id);
        }
        let abs = paths::join_fold_cow(dir, name);
        let id = if paths::is_within(&abs, scope.source_root)
            || paths::is_within(&abs, scope.build_root)
        {
            let (id, created) = shared.intern(&abs)?;
            if created {
                let st = stat_file(&abs);
                self.created.push((id, abs.into_owned(), st));
            }
            id
        } else {
            OUTSIDE
        };
        let key: Box<str> = if name.starts_with('/') {
            name.into()
        } else {
            self.scratch.as_str().into()
        };
        self.tokens.insert(key, id);
        Some(id)
    }
}

struct LocalUnit {
    target: usize,
    source: String,
    mtime: SystemTime,
    /// (device, inode) of the depfile, to catch one file listed under two spellings.
    identity: (u64, u64),
    /// Provisional ids, in file order, duplicates kept.
    prereqs: Vec<FileId>,
}

/// Streams one depfile's names: keeps the main rule's targets and first
/// prerequisite for the mapping checks, and resolves its prerequisites as they
/// come. The checks themselves run after the whole file parsed, in the order
/// [`map_one`] documents, so a syntax error always wins.
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
    prereqs: Vec<FileId>,
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
        match self
            .worker
            .resolve(self.shared, self.scope, self.dir, &name)
        {
            Some(OUTSIDE) => {}
            Some(id) => self.prereqs.push(id),
            None => self.table_full = true,
        }
    }

    fn end_rule(&mut self) {
        self.targets.clear();
        self.rule_has_prereqs = false;
        self.in_main = false;
    }
}

/// Reads, parses and maps one `.d`. Checks, first failure wins: owner target
/// from the path; readable; syntax; exactly one rule with prerequisites; one
/// target, its own object; first prerequisite a compiled source of the owner;
/// no prerequisite path over `--max-path-len`.
fn map_one(
    reader: &Reader,
    depfile: &str,
    model: &Codemodel,
    shared: &SharedFiles,
    worker: &mut Worker,
) -> Result<LocalUnit, Gap> {
    use std::os::unix::fs::MetadataExt;
    let target = model
        .object_owner(depfile)
        .map_err(|why| Gap::new(Code::DepFileUnmapped, format!("{depfile} {why}")))?;
    let t = &model.targets[target];
    let mut buf = std::mem::take(&mut worker.buf);
    let result = (|| {
        let meta = reader
            .read_into_meta(depfile, &mut buf)
            .map_err(|e| match e {
                ReadError::Io(err) => {
                    Gap::new(Code::DepFileUnreadable, format!("{depfile}: {err}"))
                }
                limit => Gap::new(Code::LimitExceeded, format!("{depfile}: {limit}")),
            })?;
        let mtime = meta.modified().map_err(|e| {
            Gap::new(
                Code::DepPrereqUninspectable,
                format!("{depfile}: cannot read its timestamp: {e}"),
            )
        })?;
        let identity = (meta.dev(), meta.ino());
        let mut sink = UnitSink {
            worker: &mut *worker,
            shared,
            scope: Scope {
                source_root: &model.source_root,
                build_root: &model.build_root,
            },
            dir: &t.dir_build,
            max_path: reader.limits().max_path_len,
            targets: Vec::new(),
            main_targets: Vec::new(),
            first: None,
            rules_with_prereqs: 0,
            rule_has_prereqs: false,
            in_main: false,
            too_long: false,
            table_full: false,
            prereqs: Vec::with_capacity(buf.len() / 256 + 4),
        };
        depfile_syntax::parse_into(&buf, &mut sink)
            .map_err(|e| Gap::new(Code::DepFileMalformed, format!("{depfile}: {e}")))?;
        let source = check_unit(depfile, model, target, &sink)?;
        Ok(LocalUnit {
            target,
            source,
            mtime,
            identity,
            prereqs: sink.prereqs,
        })
    })();
    worker.buf = buf;
    result
}

/// The mapping checks of [`map_one`] after a clean parse; returns the unit's main source.
fn check_unit(
    depfile: &str,
    model: &Codemodel,
    target: usize,
    sink: &UnitSink<'_, '_>,
) -> Result<String, Gap> {
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
    let rule_target = paths::join_fold_cow(&model.build_root, &sink.main_targets[0]);
    let expected = depfile.strip_suffix(".d").unwrap_or(depfile);
    if rule_target != expected {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: rule target {:?} is not its own object {expected}",
                sink.main_targets[0].as_ref()
            ),
        ));
    }
    let first = paths::join_fold_cow(&t.dir_build, first);
    let Some(src) = t.compiled.iter().find(|c| c.path == first) else {
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
                sink.max_path
            ),
        ));
    }
    if sink.table_full {
        return Err(Gap::new(
            Code::LimitExceeded,
            format!("{depfile}: more distinct project files than this tool can number"),
        ));
    }
    Ok(src.path.clone())
}

/// Coverage (contract §7): every compiled C/C++ unit of every *in-scope* target
/// needs exactly one depfile. `in_scope[t]` says whether target `t` can reach
/// anything a test runs or loads (see `graph::Graph::coverage_scope`).
pub fn coverage_gaps(model: &Codemodel, ev: &DepEvidence, in_scope: &[bool]) -> Vec<Gap> {
    let covered: HashSet<(usize, &str)> = ev
        .tus
        .iter()
        .map(|tu| (tu.target, tu.source.as_str()))
        .collect();
    let mut gaps = Vec::new();
    for (ti, t) in model.targets.iter().enumerate() {
        if !in_scope.get(ti).copied().unwrap_or(true) {
            continue;
        }
        for c in &t.compiled {
            if language_supported(&c.language) && !covered.contains(&(ti, c.path.as_str())) {
                gaps.push(Gap::new(
                    Code::DepCoverageIncomplete,
                    format!(
                        "{} of target {:?} has no dependency file in the list",
                        c.path, t.name
                    ),
                ));
            }
        }
    }
    gaps
}

/// Languages whose compile rule writes a trusted Make-syntax depfile.
pub fn language_supported(lang: &str) -> bool {
    matches!(lang, "C" | "CXX")
}

/// Reads `--dep-list`, maps and audits every listed `.d`. Returns the evidence
/// (possibly partial, for explanations) and every gap found.
pub fn load(reader: &Reader, dep_list: &str, model: &Codemodel) -> (DepEvidence, Vec<Gap>) {
    let mut gaps = Vec::new();
    let mut ev = DepEvidence::default();
    let list = match reader.read(dep_list) {
        Ok(b) => b,
        Err(ReadError::Io(e)) => {
            gaps.push(Gap::new(
                Code::DepListUnreadable,
                format!("{dep_list}: {e}"),
            ));
            return (ev, gaps);
        }
        Err(limit) => {
            gaps.push(Gap::new(
                Code::LimitExceeded,
                format!("{dep_list}: {limit}"),
            ));
            return (ev, gaps);
        }
    };
    let Ok(list) = std::str::from_utf8(&list) else {
        gaps.push(Gap::new(
            Code::DepListUnreadable,
            format!("{dep_list}: not valid UTF-8"),
        ));
        return (ev, gaps);
    };
    // One path per line; NUL-separated lists are accepted too. Relative lines are relative to the build root.
    let sep = if list.contains('\0') { '\0' } else { '\n' };
    let mut entries: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
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
        let abs = paths::join_fold(&model.build_root, line);
        if !paths::is_within(&abs, &model.build_root) {
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
        return (ev, gaps);
    }
    entries.sort();

    // Read, parse and map in parallel; workers share one path table.
    let shared = SharedFiles::new();
    let workers: Vec<Worker> =
        super::par_each(&entries, Worker::default, |w, i, d| {
            match map_one(reader, d, model, &shared, w) {
                Ok(u) => w.units.push((i, u)),
                Err(g) => w.gaps.push((i, g)),
            }
        });

    // Units and gaps back in entry order (workers pulled entries dynamically).
    let n_ids = shared.next.into_inner().min(u64::from(OUTSIDE)) as usize;
    let mut units: Vec<(usize, LocalUnit)> = Vec::with_capacity(entries.len());
    let mut entry_gaps: Vec<(usize, Gap)> = Vec::new();
    let mut created: Vec<Option<(String, FileStat)>> =
        std::iter::repeat_with(|| None).take(n_ids).collect();
    for w in workers {
        units.extend(w.units);
        entry_gaps.extend(w.gaps);
        for (id, path, st) in w.created {
            created[id as usize] = Some((path, st));
        }
    }
    units.sort_unstable_by_key(|(e, _)| *e);
    entry_gaps.sort_by_key(|(e, _)| *e);
    gaps.extend(entry_gaps.into_iter().map(|(_, g)| g));

    // Final ids: the files some mapped unit lists, numbered in path order, so
    // ids never depend on thread timing (files seen only in rejected depfiles
    // are dropped: the rejection already forbids a subset).
    let mut used = vec![false; n_ids];
    for (_, u) in &units {
        for &id in &u.prereqs {
            used[id as usize] = true;
        }
    }
    let mut order: Vec<FileId> = (0..n_ids as FileId)
        .filter(|&id| used[id as usize] && created[id as usize].is_some())
        .collect();
    order.sort_unstable_by(|&a, &b| {
        let path = |id: FileId| created[id as usize].as_ref().map(|(p, _)| p.as_str());
        path(a).cmp(&path(b))
    });
    let mut renumber = vec![OUTSIDE; n_ids];
    let mut stats: Vec<FileStat> = Vec::with_capacity(order.len());
    ev.files.reserve(order.len());
    for (new, &old) in order.iter().enumerate() {
        renumber[old as usize] = new as FileId;
        if let Some((path, st)) = created[old as usize].take() {
            ev.files.push(path);
            stats.push(st);
        }
    }
    drop(created);
    let renumbered: Vec<Vec<FileId>> = super::par_map(&units, |(_, u)| {
        let mut ids: Vec<FileId> = u.prereqs.iter().map(|&l| renumber[l as usize]).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    });
    ev.by_path.reserve(ev.files.len());
    for (id, f) in ev.files.iter().enumerate() {
        ev.by_path.insert(f.clone(), id as FileId);
    }

    let mut tu_of: FastMap<(usize, String), usize> = FastMap::default();
    let mut identities: FastMap<(u64, u64), usize> = FastMap::default();
    let mut file_mtime_needed: Vec<(usize, SystemTime)> = Vec::new(); // (tu index, depfile mtime)
    for ((entry, u), ids) in units.into_iter().zip(renumbered) {
        let d = &entries[entry];
        ev.depfiles_read.push(d.clone());
        if let Some(prev) = identities.insert(u.identity, entry) {
            gaps.push(Gap::new(
                Code::DepFileDuplicate,
                format!("{} and {d} are the same file", entries[prev]),
            ));
            continue;
        }
        if let Some(prev) = tu_of.insert((u.target, u.source.clone()), entry) {
            gaps.push(Gap::new(
                Code::DepFileDuplicate,
                format!(
                    "{} and {d} both describe {} in target {:?}",
                    entries[prev], u.source, model.targets[u.target].name
                ),
            ));
            continue;
        }
        file_mtime_needed.push((ev.tus.len(), u.mtime));
        ev.tus.push(Tu {
            target: u.target,
            source: u.source,
            depfile: d.clone(),
            prereqs: ids,
        });
    }

    // Freshness: every project prerequisite no newer than its depfile.
    let mut reported = HashSet::new();
    for (tu_idx, dmtime) in file_mtime_needed {
        let tu = &ev.tus[tu_idx];
        for &id in &tu.prereqs {
            match &stats[id as usize].mtime {
                Some(t) if t <= &dmtime => {}
                Some(_) => gaps.push(Gap::new(
                    Code::DepEvidenceStale,
                    format!("{} is newer than {}", ev.files[id as usize], tu.depfile),
                )),
                None => {
                    if reported.insert(id) {
                        gaps.push(Gap::new(
                            Code::DepPrereqUninspectable,
                            format!(
                                "{} (listed in {}) cannot be inspected",
                                ev.files[id as usize], tu.depfile
                            ),
                        ));
                    }
                }
            }
        }
    }
    // Aliases: the real spelling of files reached through symlinks inside the tree.
    for (id, st) in stats.into_iter().enumerate() {
        if let Some(real) = st.real {
            ev.by_path.entry(real).or_insert(id as FileId);
        }
    }
    // Build-time generated headers included by a unit: look the (few) generated
    // files up once, then test ids, not strings, against each unit's prerequisites.
    let mut generated = vec![false; ev.files.len()];
    let mut any_generated = false;
    for g in &model.generated_files {
        if let Some(&id) = ev.by_path.get(g.as_str()) {
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
    /// Real path when it differs from the lexical one.
    real: Option<String>,
}

thread_local! {
    /// Directory → does it or an ancestor go through a symlink (memoised lstat per directory).
    static DIR_LINKED: std::cell::RefCell<FastMap<String, bool>> = std::cell::RefCell::new(FastMap::default());
}

/// True when `dir` or one of its ancestors is a symlink (or cannot be inspected).
fn dir_linked(dir: &str, memo: &mut FastMap<String, bool>) -> bool {
    if dir.is_empty() || dir == "/" {
        return false;
    }
    if let Some(&v) = memo.get(dir) {
        return v;
    }
    let here = match std::fs::symlink_metadata(dir) {
        Ok(m) => m.file_type().is_symlink(),
        Err(_) => true,
    };
    let parent = dir.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    let v = here || dir_linked(parent, memo);
    memo.insert(dir.to_owned(), v);
    v
}

fn stat_file(path: &str) -> FileStat {
    let lmeta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => {
            return FileStat {
                mtime: None,
                real: None,
            }
        }
    };
    let (dir, _) = path.rsplit_once('/').unwrap_or(("", path));
    let linked =
        lmeta.file_type().is_symlink() || DIR_LINKED.with(|m| dir_linked(dir, &mut m.borrow_mut()));
    if !linked {
        // No symlink anywhere on the path: the lexical spelling is the real one.
        return FileStat {
            mtime: lmeta.modified().ok(),
            real: None,
        };
    }
    // Follow links: a dangling one has no timestamp to trust.
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let real = paths::real(path).filter(|r| r != path);
    FileStat { mtime, real }
}
