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

use std::collections::{HashMap, HashSet};
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

/// One chunk's worth of mapped depfiles, with chunk-local interned paths.
#[derive(Default)]
struct Local {
    files: Vec<String>,
    index: FastMap<String, FileId>,
    /// (entry index, mapped unit).
    units: Vec<(usize, LocalUnit)>,
    /// (entry index, gap).
    gaps: Vec<(usize, Gap)>,
}

struct LocalUnit {
    target: usize,
    source: String,
    mtime: SystemTime,
    /// (device, inode) of the depfile, to catch one file listed under two spellings.
    identity: (u64, u64),
    prereqs: Vec<FileId>,
}

impl Local {
    fn intern(&mut self, p: &str) -> FileId {
        if let Some(&id) = self.index.get(p) {
            return id;
        }
        let id = self.files.len() as FileId;
        self.files.push(p.to_owned());
        self.index.insert(p.to_owned(), id);
        id
    }
}

fn map_one(
    reader: &Reader,
    depfile: &str,
    model: &Codemodel,
    buf: &mut Vec<u8>,
    local: &mut Local,
) -> Result<LocalUnit, Gap> {
    use std::os::unix::fs::MetadataExt;
    let target = model
        .object_owner(depfile)
        .map_err(|why| Gap::new(Code::DepFileUnmapped, format!("{depfile} {why}")))?;
    let t = &model.targets[target];
    let meta = reader.read_into_meta(depfile, buf).map_err(|e| match e {
        ReadError::Io(err) => Gap::new(Code::DepFileUnreadable, format!("{depfile}: {err}")),
        limit => Gap::new(Code::LimitExceeded, format!("{depfile}: {limit}")),
    })?;
    let mtime = meta.modified().map_err(|e| {
        Gap::new(
            Code::DepPrereqUninspectable,
            format!("{depfile}: cannot read its timestamp: {e}"),
        )
    })?;
    let identity = (meta.dev(), meta.ino());
    let parsed = depfile_syntax::parse(buf)
        .map_err(|e| Gap::new(Code::DepFileMalformed, format!("{depfile}: {e}")))?;
    let mut main = None;
    for rule in &parsed.rules {
        if rule.prereqs.is_empty() {
            continue; // -MP phony rule
        }
        if main.is_some() {
            return Err(Gap::new(
                Code::DepFileMalformed,
                format!("{depfile}: more than one rule with prerequisites"),
            ));
        }
        main = Some(rule);
    }
    let Some(rule) = main else {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!("{depfile}: no rule with prerequisites"),
        ));
    };
    if rule.targets.len() != 1 {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!("{depfile}: main rule has {} targets", rule.targets.len()),
        ));
    }
    // The -MT target is the object path relative to the build root; it must be this depfile's object.
    let rule_target = paths::join_fold_cow(&model.build_root, &rule.targets[0]);
    let expected = depfile.strip_suffix(".d").unwrap_or(depfile);
    if rule_target != expected {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: rule target {:?} is not its own object {expected}",
                rule.targets[0].as_ref()
            ),
        ));
    }
    let first = paths::join_fold_cow(&t.dir_build, &rule.prereqs[0]);
    let Some(src) = t.compiled.iter().find(|c| c.path == first) else {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: main source {first} is not a compiled source of target {:?}",
                t.name
            ),
        ));
    };
    let max_path = reader.limits().max_path_len;
    let mut prereqs = Vec::with_capacity(rule.prereqs.len());
    for p in &rule.prereqs {
        if p.len() > max_path {
            return Err(Gap::new(
                Code::LimitExceeded,
                format!("{depfile}: a prerequisite path exceeds {max_path} bytes (--max-path-len)"),
            ));
        }
        let abs = paths::join_fold_cow(&t.dir_build, p);
        if paths::is_within(&abs, &model.source_root) || paths::is_within(&abs, &model.build_root) {
            prereqs.push(local.intern(&abs));
        }
    }
    Ok(LocalUnit {
        target,
        source: src.path.clone(),
        mtime,
        identity,
        prereqs,
    })
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

    // Read, parse and map in parallel; each worker interns paths locally.
    let mut locals: Vec<(Local, Vec<u8>)> = super::par_each(
        &entries,
        || (Local::default(), Vec::new()),
        |(local, buf), i, d| match map_one(reader, d, model, buf, local) {
            Ok(u) => local.units.push((i, u)),
            Err(g) => local.gaps.push((i, g)),
        },
    );

    // Global ids: one remap table per worker.
    let mut remaps: Vec<Vec<FileId>> = Vec::with_capacity(locals.len());
    for (local, _) in &mut locals {
        let remap = std::mem::take(&mut local.files)
            .into_iter()
            .map(|f| {
                let next = ev.files.len() as FileId;
                *ev.by_path.entry(f).or_insert_with_key(|k| {
                    ev.files.push(k.clone());
                    next
                })
            })
            .collect();
        remaps.push(remap);
    }
    // Units back in entry order (workers pulled entries dynamically).
    let mut units: Vec<(usize, usize, LocalUnit)> = Vec::with_capacity(entries.len());
    let mut entry_gaps: Vec<(usize, Gap)> = Vec::new();
    for (w, (local, _)) in locals.into_iter().enumerate() {
        units.extend(local.units.into_iter().map(|(e, u)| (e, w, u)));
        entry_gaps.extend(local.gaps);
    }
    units.sort_unstable_by_key(|(e, _, _)| *e);
    entry_gaps.sort_by_key(|(e, _)| *e);
    gaps.extend(entry_gaps.into_iter().map(|(_, g)| g));
    let remapped: Vec<Vec<FileId>> = super::par_map(&units, |(_, w, u)| {
        let mut ids: Vec<FileId> = u.prereqs.iter().map(|&l| remaps[*w][l as usize]).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    });

    let mut tu_of: HashMap<(usize, String), String> = HashMap::new();
    let mut identities: HashMap<(u64, u64), usize> = HashMap::new();
    let mut file_mtime_needed: Vec<(usize, SystemTime)> = Vec::new(); // (tu index, depfile mtime)
    for ((entry, _, u), ids) in units.into_iter().zip(remapped) {
        let d = &entries[entry];
        ev.depfiles_read.push(d.clone());
        if let Some(prev) = identities.insert(u.identity, entry) {
            gaps.push(Gap::new(
                Code::DepFileDuplicate,
                format!("{} and {d} are the same file", entries[prev]),
            ));
            continue;
        }
        if let Some(prev) = tu_of.insert((u.target, u.source.clone()), d.clone()) {
            gaps.push(Gap::new(
                Code::DepFileDuplicate,
                format!(
                    "{prev} and {d} both describe {} in target {:?}",
                    u.source, model.targets[u.target].name
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

    // Freshness: stat every unique project file once.
    let stats: Vec<FileStat> = super::par_map(&ev.files, |f| stat_file(f));
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
