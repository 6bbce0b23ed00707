//! The ninja-log reader behind the dependency-evidence interface: maps the
//! records of a `.ninja_deps` (parsed by `ninja_deps.rs`) to translation units
//! and audits them as the depfile reader audits `.d` files.

use std::time::SystemTime;

/// How one path of the log resolves.
#[derive(Clone, Copy)]
enum Resolved {
    /// Outside both roots: a system header.
    System,
    /// Longer than `--max-path-len`.
    TooLong,
    /// A project file, with its timestamp.
    Project(FileId, Option<SystemTime>),
}

use super::evidence::{DepEvidence, FileId, Tu};
use super::file_api::Codemodel;
use crate::fasthash::FastMap;
use crate::paths;
use crate::reason::{Code, Gap};

/// Merges one ninja deps log (`.ninja_deps`) into the evidence: every live
/// record whose output is an object of a target of the selected
/// configuration becomes that unit's dependency evidence (joined with a
/// leftover `.d` for the same unit, if any), audited as a depfile is:
/// * mapping: the output must lie in exactly one target's object directory
///   (`<dir>/CMakeFiles/<t>.dir/`, and `<Config>/` below it for a multi-config
///   generator: records of other configurations are skipped), and its first
///   input must be one of that target's compiled sources;
/// * freshness, ninja's own rule: the output's mtime must not be newer than
///   the record's, and no project prerequisite may be newer than the record;
/// * a record whose output no longer exists is dead (ninja keeps those until
///   it recompacts) and is skipped; coverage then finds the unit missing.
///
/// Paths in the log are relative to the build root (ninja runs there).
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge(
    ev: &mut DepEvidence,
    gaps: &mut Vec<Gap>,
    model: &Codemodel,
    path: &str,
    bytes: &[u8],
    _log_mtime: SystemTime,
    max_path: usize,
) {
    let log = match super::ninja_deps::parse(bytes) {
        Ok(l) => l,
        Err(e) => {
            gaps.push(Gap::new(Code::DepsLogMalformed, format!("{path}: {e}")));
            return;
        }
    };
    let build = &model.build_root;
    let (src, _) = (&model.source_root, ());
    let mut stat_cache: FastMap<String, Option<(SystemTime, u64)>> = FastMap::default();
    let mut stat = |p: &str| -> Option<(SystemTime, u64)> {
        if let Some(v) = stat_cache.get(p) {
            return *v;
        }
        let v = std::fs::metadata(p)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        stat_cache.insert(p.to_owned(), v);
        v
    };
    let mut by_unit: FastMap<(usize, usize), usize> = FastMap::default();
    for (i, tu) in ev.tus.iter().enumerate() {
        by_unit.insert((tu.target, tu.source_index), i);
    }
    let shown = paths::relative_to(path, build);
    let mut new_tus = Vec::new();
    // Per log path id: how it resolves, found on first use.
    let mut resolved: Vec<Option<Resolved>> = vec![None; log.paths.len()];
    let dirs = super::depfile::DirMemo::default();
    // Per file id: the record (stamp) that last listed it, to list it once.
    let mut seen: Vec<u32> = Vec::new();
    let mut stamp: u32 = 0;
    for rec in &log.records {
        let out_rel = &log.paths[rec.output as usize];
        let out = log.resolve(build, rec.output);
        if !(out.ends_with(".o") || out.ends_with(".obj")) {
            continue; // a custom command's depfile record, not a unit
        }
        let Ok(target) = model.object_owner(&out) else {
            continue; // an object of no target of this codemodel (another project)
        };
        let t = &model.targets[target];
        let objdir = t.object_dir();
        let rest = paths::strip_root(&out, &objdir).unwrap_or("");
        if model.multi_config {
            match rest.split_once('/') {
                Some((cfg, _)) if cfg == model.config => {}
                _ => continue, // another configuration's object
            }
        }
        let Some((obj_time, _)) = stat(&out) else {
            continue; // dead record: the output no longer exists
        };
        let rec_time = SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(rec.mtime_ns);
        let depfile = format!("{path} record {out_rel}");
        if obj_time > rec_time {
            gaps.push(Gap::new(
                Code::DepEvidenceStale,
                format!(
                    "{shown} record {out_rel} is older than its object (ninja would rebuild it)"
                ),
            ));
        }
        let Some(&first) = rec.inputs.first() else {
            gaps.push(Gap::new(
                Code::DepFileUnmapped,
                format!("{shown} record {out_rel} lists no inputs"),
            ));
            continue;
        };
        let source = log.resolve(build, first);
        let Some(source_index) = t.compiled.iter().position(|c| c.path == source) else {
            gaps.push(Gap::new(
                Code::DepFileUnmapped,
                format!("{shown} record {out_rel}: first input {source} is not a compiled source of target {:?}", t.name),
            ));
            continue;
        };
        let mut prereqs = Vec::with_capacity(rec.inputs.len());
        stamp += 1;
        for &inp in &rec.inputs {
            // Each distinct path is resolved, classified and stat'ed once per log.
            let r = match &resolved[inp as usize] {
                Some(r) => *r,
                None => {
                    let p = log.resolve(build, inp);
                    let r = if p.len() > max_path {
                        Resolved::TooLong
                    } else if !paths::is_within(&p, src) && !paths::is_within(&p, build) {
                        Resolved::System
                    } else {
                        // One lstat (more only behind a symlink), as the depfile reader does.
                        let st = super::depfile::stat_file(&p, &dirs);
                        let id = ev.add_file(&p, st.size);
                        if let Some(real) = st.real {
                            let v = ev.aliases.entry(real).or_default();
                            if !v.contains(&id) {
                                v.push(id);
                            }
                        }
                        Resolved::Project(id, st.mtime)
                    };
                    resolved[inp as usize] = Some(r);
                    r
                }
            };
            match r {
                Resolved::System => {}
                Resolved::TooLong => {
                    gaps.push(Gap::new(Code::LimitExceeded, format!("{shown} record {out_rel}: a path exceeds {max_path} bytes (--max-path-len)")));
                    break;
                }
                Resolved::Project(id, mtime) => {
                    match mtime {
                        Some(m) if m > rec_time => gaps.push(Gap::new(
                            Code::DepEvidenceStale,
                            format!(
                                "{} is newer than {shown} record {out_rel}",
                                ev.files[id as usize]
                            ),
                        )),
                        Some(_) => {}
                        None => gaps.push(Gap::new(
                            Code::DepPrereqUninspectable,
                            format!(
                                "{} (listed in {shown} record {out_rel}) cannot be inspected",
                                ev.files[id as usize]
                            ),
                        )),
                    }
                    let slot = id as usize;
                    if seen.len() <= slot {
                        seen.resize(slot + 1, 0);
                    }
                    if seen[slot] != stamp {
                        seen[slot] = stamp;
                        prereqs.push(id);
                    }
                }
            }
        }
        match by_unit.get(&(target, source_index)) {
            Some(&usize::MAX) => gaps.push(Gap::new(
                Code::DepFileDuplicate,
                format!(
                    "{shown}: two records describe {source} in target {:?}",
                    t.name
                ),
            )),
            Some(&i) => {
                // A leftover .d for the same unit (-d keepdepfile): join them.
                for id in prereqs {
                    if !ev.tus[i].prereqs.contains(&id) {
                        ev.tus[i].prereqs.push(id);
                    }
                }
            }
            None => {
                by_unit.insert((target, source_index), usize::MAX);
                new_tus.push(Tu {
                    target,
                    source,
                    source_index,
                    depfile,
                    prereqs,
                });
            }
        }
    }
    if !new_tus.is_empty() {
        ev.tus.extend(new_tus);
        ev.tus.sort_by(|a, b| a.depfile.cmp(&b.depfile));
    }
    // Generated headers a log record lists make their unit's target opaque, as for depfiles.
    let mut generated = vec![false; ev.files.len()];
    for g in &model.generated_files {
        if let Some(id) = ev.id_of(g) {
            generated[id as usize] = true;
        }
    }
    for tu in &ev.tus {
        for &id in &tu.prereqs {
            if generated.get(id as usize) == Some(&true) {
                ev.generated_includes
                    .push((tu.target, ev.files[id as usize].clone()));
            }
        }
    }
    ev.generated_includes.sort();
    ev.generated_includes.dedup();
}
