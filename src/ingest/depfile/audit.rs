//! Audit: the file table and its index, duplicate units, freshness,
//! symlink aliases and generated headers, once every depfile is mapped.

use std::collections::HashSet;
use std::time::SystemTime;

use super::super::evidence::{DepEvidence, FileId, NewerPrereqs, PathIndex, Tu};
use super::super::file_api::Codemodel;
use super::map::{Aged, LocalUnit};
use super::stat::FileStat;

use crate::fasthash::FastMap;
use crate::reason::{Code, Gap};

/// The Makefiles generators write each target's compile flags into
/// `<dir_build>/CMakeFiles/<target>.dir/flags.make`, only when they change,
/// and every object of the target depends on it: a `flags.make` newer than a
/// unit's depfile means the flags changed after the unit was compiled, so make
/// would compile it again, and what its depfile lists may not be what it
/// includes now (an `#ifdef` on a new `-D`). Stale (`DEP_EVIDENCE_STALE`), once
/// per target. Ninja keeps command changes in `.ninja_log`, which is not read.
struct FlagsFiles<'m> {
    model: &'m Codemodel,
    /// Per target: `flags.make`'s modification time (`None`: not found), and
    /// whether the target was reported.
    seen: FastMap<usize, (Option<SystemTime>, bool)>,
}

impl<'m> FlagsFiles<'m> {
    fn new(model: &'m Codemodel) -> Self {
        FlagsFiles {
            model,
            seen: FastMap::default(),
        }
    }

    fn newer_than(&mut self, target: usize, compiled: SystemTime, depfile: &str) -> Option<Gap> {
        if self.model.is_ninja() {
            return None;
        }
        let model = self.model;
        let (flags, reported) = self.seen.entry(target).or_insert_with(|| {
            let path = format!("{}/flags.make", model.targets[target].object_dir());
            (
                std::fs::metadata(path).and_then(|m| m.modified()).ok(),
                false,
            )
        });
        let newer = flags.is_some_and(|f| f > compiled);
        if !newer || *reported {
            return None;
        }
        *reported = true;
        let t = &model.targets[target];
        Some(Gap::new(
            Code::DepEvidenceStale,
            format!(
                "{}/flags.make is newer than {depfile}: the compile flags of target {:?} changed after it was compiled (make would compile it again)",
                t.object_dir(),
                t.name
            ),
        ))
    }
}

/// Builds the evidence from the mapped units: the file table and its index,
/// duplicate and freshness checks, symlink aliases and generated headers.
pub(super) fn audit(
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
        let mut flags = FlagsFiles::new(model);
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
            if let Some(gap) = flags.newer_than(u.target, u.mtime, d) {
                gaps.push(gap);
            }
            tus.push(Tu {
                target: u.target,
                source: u.source,
                source_index: u.source_index,
                depfile: d.clone(),
                from_log: false,
                prereqs: u.prereqs,
                lists_outside: u.lists_outside,
            });
        }

        // Freshness: every project prerequisite no newer than its depfile
        // (found while mapping; reported here, for the units kept, in order).
        let mut reported = HashSet::new();
        let mut newer = NewerPrereqs::default();
        for (tu_idx, aged) in aged_units {
            let tu = &tus[tu_idx];
            for a in aged {
                match a {
                    Aged::Newer(id) => newer.note(
                        id,
                        &tu.depfile,
                        stats.get(id as usize).and_then(|s| s.mtime),
                    ),
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
        newer.into_gaps(files, "depfile", Some(&model.build_root), &mut gaps);
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
    let mut gi: Vec<(usize, String)> = if any_generated {
        ev.listed_by_units(&generated)
            .into_iter()
            .map(|(t, id)| (t, ev.files[id as usize].clone()))
            .collect()
    } else {
        Vec::new()
    };
    gi.sort();
    ev.generated_includes = gi;
    (ev, gaps)
}
