//! The one interface of dependency evidence: what each translation unit
//! depends on, as the Make-depfile reader (`depfile.rs`) and the ninja-log
//! reader (`ninja_units.rs`) both build it. Graph, decision and report see only
//! this, never which generator wrote the evidence.

use std::time::SystemTime;

use crate::fasthash::{hash_str, FastMap};

/// Interned id of a project file.
pub type FileId = u32;

/// One translation unit with its dependency evidence.
#[derive(Clone, Debug)]
pub struct Tu {
    /// Owning target (index into the codemodel's targets).
    pub target: usize,
    /// Main source, absolute folded.
    pub source: String,
    /// Index of the main source in the owning target's compiled sources.
    pub source_index: usize,
    /// The `.d` file, absolute folded; for a unit of a ninja deps log, the
    /// log and the record (`LOG record OBJECT`).
    pub depfile: String,
    /// The unit's evidence is a record of a ninja deps log (a leftover `.d`
    /// joined to a record keeps the `.d`'s unit: `false`).
    pub from_log: bool,
    /// Project prerequisites (including the main source), each once, in the
    /// order the depfile first lists them.
    pub prereqs: Vec<FileId>,
    /// The evidence also lists a prerequisite outside both roots (a system
    /// header): what `-MD` writes and `-MMD` leaves out (see
    /// [`super::depfile::system_headers_gaps`]).
    pub lists_outside: bool,
}

/// The dependency evidence of the whole build.
#[derive(Debug, Default)]
pub struct DepEvidence {
    /// Interned project files (absolute folded paths); index = [`FileId`].
    /// Ids are numbered as the reading threads met the files, so nothing may
    /// depend on their order. After a rejected or re-read depfile some
    /// entries are listed by no unit; only [`DepEvidence::by_path`] and
    /// [`DepEvidence::aliases`] say which files are evidence.
    pub files: Vec<String>,
    /// Path → id (the spellings the depfiles use), for files some unit lists.
    pub(crate) by_path: PathIndex,
    /// Real path → the files reached through a symlink that resolve to it.
    /// One physical file may be listed under several spellings; a change to
    /// it is a change to every one of them (see [`DepEvidence::ids_of`]).
    pub aliases: FastMap<String, Vec<FileId>>,
    /// Translation units, sorted by (depfile path).
    pub tus: Vec<Tu>,
    /// Targets that include a build-time generated header: (target, header).
    pub generated_includes: Vec<(usize, String)>,
    /// Assembly units whose files may name others through the assembler
    /// (`.include`, `.incbin`), which no depfile lists: (target, unit source,
    /// the file that does, or cannot be read). See
    /// [`super::depfile::scan_assembler_includes`].
    pub assembler_includes: Vec<(usize, String, String)>,
    /// Qt AUTOMOC: whether each compilation unit autogen wrote
    /// (`<T>_autogen/mocs_compilation.cpp`) is vouched by autogen's own
    /// evidence (see `autogen::join_automoc`).
    pub automoc: Automoc,
    /// Prerequisites joined to a unit from evidence other than its own
    /// depfile or record: `(unit index, file)` → that evidence file (absolute),
    /// which its chains name instead of the unit's depfile.
    pub joined: FastMap<(usize, FileId), String>,
    /// `sizes[id]`: the file's size when it was stat'ed for freshness.
    pub sizes: Vec<Option<u64>>,
    /// `mtime_secs[id]`: its modification time in whole seconds (what GCC
    /// compares, with the size and then the bytes, to skip a `#pragma once`
    /// twin); `None` when unknown.
    pub mtime_secs: Vec<Option<u64>>,
    /// What each test read at base, from a record of its run (`--record`):
    /// the record when its audit found it usable, and the audit's notes.
    pub tests: super::record_audit::Audit,
}

impl DepEvidence {
    /// Every file that is the file at `path` (absolute, folded): listed under
    /// that spelling, or under another spelling through symlinks. `real` is
    /// `path` with symlinks resolved, when that differs. Sorted.
    pub fn ids_of(&self, path: &str, real: Option<&str>) -> Vec<FileId> {
        let mut ids = Vec::new();
        for p in std::iter::once(path).chain(real) {
            ids.extend(self.id_of(p));
            ids.extend(self.aliases.get(p).into_iter().flatten().copied());
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// (target, file) for every unit that lists a file `flagged` marks (by
    /// id), each once (sorted by target, then file id).
    pub fn listed_by_units(&self, flagged: &[bool]) -> Vec<(usize, FileId)> {
        let mut out = Vec::new();
        for tu in &self.tus {
            for &p in &tu.prereqs {
                if flagged.get(p as usize) == Some(&true) {
                    out.push((tu.target, p));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl DepEvidence {
    /// Adds project file `path` (absolute, folded) to the table and the path
    /// index when no unit lists it yet; returns its id either way.
    pub fn add_file(&mut self, path: &str, size: Option<u64>) -> FileId {
        if let Some(id) = self.id_of(path) {
            return id;
        }
        let id = self.files.len() as FileId;
        self.files.push(path.to_owned());
        if self.sizes.len() < self.files.len() {
            self.sizes.resize(self.files.len() - 1, None);
            self.sizes.push(size);
        }
        self.by_path.insert(path, id);
        id
    }

    /// The id of the file some unit lists under the spelling `path`.
    pub fn id_of(&self, path: &str) -> Option<FileId> {
        self.by_path.get(&self.files, path)
    }

    /// The id of `tu`'s main source, when it is a project file. A depfile
    /// lists its main source first, so that is looked at before the index.
    pub fn source_id(&self, tu: &Tu) -> Option<FileId> {
        tu.prereqs
            .first()
            .copied()
            .filter(|&id| self.files.get(id as usize) == Some(&tu.source))
            .or_else(|| self.id_of(&tu.source))
    }
}

/// An index from path to id that holds no copy of the paths: ids by a hash
/// of the path, checked against the file table on every lookup.
#[derive(Debug, Default)]
pub(crate) struct PathIndex {
    pub(crate) by_hash: FastMap<u64, FileId>,
    /// Ids whose hash another path already took (practically never).
    pub(crate) spill: Vec<FileId>,
}

impl PathIndex {
    /// Indexes `files[id]` for every id where `keep(id)`; `hashes[id]` is
    /// [`hash_str`] of `files[id]`, computed here where it is missing.
    pub(crate) fn new(
        files: &[String],
        hashes: &[Option<u64>],
        keep: impl Fn(usize) -> bool,
    ) -> Self {
        let mut index = PathIndex::default();
        index.by_hash.reserve(files.len());
        for (id, f) in files.iter().enumerate().filter(|&(id, _)| keep(id)) {
            let hash = hashes.get(id).copied().flatten();
            match index.by_hash.entry(hash.unwrap_or_else(|| hash_str(f))) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(id as FileId);
                }
                std::collections::hash_map::Entry::Occupied(_) => index.spill.push(id as FileId),
            }
        }
        index
    }

    fn insert(&mut self, path: &str, id: FileId) {
        match self.by_hash.entry(hash_str(path)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(id);
            }
            std::collections::hash_map::Entry::Occupied(_) => self.spill.push(id),
        }
    }

    pub(crate) fn get(&self, files: &[String], path: &str) -> Option<FileId> {
        let is = |id: FileId| files.get(id as usize).is_some_and(|f| f == path);
        self.by_hash
            .get(&hash_str(path))
            .copied()
            .filter(|&id| is(id))
            .or_else(|| self.spill.iter().copied().find(|&id| is(id)))
    }
}

/// Project prerequisites newer than the evidence that lists them, gathered
/// from every unit so that one touched header is one reason: "`h` is newer than
/// `E`" when one unit lists it, "… and N more <noun>s that list it" otherwise.
/// Both readers report through it, so the lines read alike on either generator.
#[derive(Debug, Default)]
pub(crate) struct NewerPrereqs {
    /// File id → (how many evidence files list it, the first by name, its
    /// modification time is a whole second).
    by_file: FastMap<FileId, (usize, String, bool)>,
}

/// What a stale build-tree file with a whole-second modification time gets
/// after its reason: CMake's `file(COPY)` gives a copy its source's time cut
/// to the second, so a header edited in the second its user was compiled
/// makes a copy newer than the depfile but older than the object, which make
/// does not rebuild.
pub(crate) const WHOLE_SECOND_COPY_HINT: &str = "; its modification time is a whole second, as a copy that keeps its source's time cut to the second has (CMake's file(COPY)), so the build may take the object for up to date: if a rebuild leaves this reason, touch the file it was copied from, re-run cmake and rebuild";

impl NewerPrereqs {
    /// `file`, modified at `mtime` (when known), is newer than `evidence` (a
    /// depfile, or `LOG record OBJECT`).
    pub(crate) fn note(&mut self, file: FileId, evidence: &str, mtime: Option<SystemTime>) {
        let whole = mtime
            .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
            .is_some_and(|d| d.subsec_nanos() == 0);
        let e = self
            .by_file
            .entry(file)
            .or_insert_with(|| (0, evidence.to_owned(), whole));
        e.0 += 1;
        if evidence < e.1.as_str() {
            e.1 = evidence.to_owned();
        }
    }

    /// One `DEP_EVIDENCE_STALE` gap per file, `noun` naming the kind of
    /// evidence ("depfile", "record"). With `copies_below` (depfiles, which
    /// the compiler writes before the object), a file below it whose time is
    /// a whole second gets [`WHOLE_SECOND_COPY_HINT`]. Ninja's record holds
    /// the object's own time, and Ninja rebuilds what is newer than that.
    pub(crate) fn into_gaps(
        self,
        files: &[String],
        noun: &str,
        copies_below: Option<&str>,
        gaps: &mut Vec<crate::reason::Gap>,
    ) {
        let mut all: Vec<_> = self.by_file.into_iter().collect();
        all.sort_unstable_by(|a, b| files[a.0 as usize].cmp(&files[b.0 as usize]));
        for (id, (n, first, whole)) in all {
            let file = &files[id as usize];
            let mut detail = match n {
                1 => format!("{file} is newer than {first}"),
                2 => format!("{file} is newer than {first} and 1 more {noun} that lists it"),
                _ => format!(
                    "{file} is newer than {first} and {} more {noun}s that list it",
                    n - 1
                ),
            };
            if whole && copies_below.is_some_and(|b| crate::paths::is_within(file, b)) {
                detail.push_str(WHOLE_SECOND_COPY_HINT);
            }
            gaps.push(crate::reason::Gap::new(
                crate::reason::Code::DepEvidenceStale,
                detail,
            ));
        }
    }
}

/// The verdict on one candidate: vouched, or the reason it stays opaque.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Autogen's evidence was read and joined: an ordinary unit.
    Vouched,
    /// Why the target stays opaque.
    Opaque(String),
}

/// What the autogen evidence decided (`super::autogen::join_automoc`), for the graph.
#[derive(Clone, Debug, Default)]
pub struct Automoc {
    /// One verdict per candidate: `((target, compiled index), verdict)`, sorted.
    pub verdicts: Vec<((usize, usize), Verdict)>,
    /// Targets without a candidate whose units include an output autogen
    /// wrote that nothing explains: (target, why), sorted.
    pub opaque_consumers: Vec<(usize, String)>,
}
