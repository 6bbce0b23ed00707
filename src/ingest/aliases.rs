//! Prerequisites spelled through include directories outside both roots that
//! resolve into them, joined under their inside spelling.

use super::depfile_syntax;
use super::evidence::{DepEvidence, FileId};
use super::file_api::Codemodel;
use crate::paths;
use crate::reason::{Code, Gap};
use std::time::SystemTime;

/// Include directories of the codemodel that lie outside both roots but
/// resolve into one of them: (outside spelling, inside spelling), sorted.
/// Empty in the usual case; its real path is taken once per directory.
pub(crate) fn outside_aliases(model: &Codemodel) -> Vec<(String, String)> {
    let (src, build) = (&model.source_root, &model.build_root);
    let outside = model.outside_includes();
    if outside.is_empty() {
        return Vec::new();
    }
    let real_roots: Vec<(String, &String)> = [src, build]
        .into_iter()
        .filter_map(|r| paths::real(r).map(|real| (real, r)))
        .collect();
    let mut aliases = Vec::new();
    for d in outside.iter() {
        let Some(real) = paths::real(d) else { continue };
        let inside = if paths::is_within(&real, src) || paths::is_within(&real, build) {
            Some(real.clone())
        } else {
            real_roots.iter().find_map(|(rr, r)| {
                paths::strip_root(&real, rr).map(|rel| paths::join_fold(r, rel))
            })
        };
        if let Some(inside) = inside {
            aliases.push((d.clone(), inside));
        }
    }
    aliases
}

/// The freshness audit of a prerequisite joined to a unit from other
/// evidence than its own list: `path` (modified at `mtime`) must be no newer
/// than `recorded`, the time of `evidence`, the file it was joined from
/// (`how`: through what, for the message); a time that cannot be read is
/// uninspectable.
pub(crate) fn audit_joined(
    path: &str,
    mtime: Option<SystemTime>,
    recorded: Option<SystemTime>,
    (evidence, how): (&str, &str),
    gaps: &mut Vec<Gap>,
) {
    match (mtime, recorded) {
        (Some(m), Some(r)) if m > r => gaps.push(Gap::new(
            Code::DepEvidenceStale,
            format!("{path} is newer than {evidence}"),
        )),
        (Some(_), Some(_)) => {}
        _ => gaps.push(Gap::new(
            Code::DepPrereqUninspectable,
            format!("{path} (listed in {evidence}{how}) cannot be inspected"),
        )),
    }
}

/// Whether `target` compiles with one of the `aliases` directories.
pub(crate) fn uses_alias(aliases: &[(String, String)], includes: &[String]) -> bool {
    aliases.iter().any(|(d, _)| includes.iter().any(|i| i == d))
}

/// Adds to `prereqs` each of `names` (absolute, folded) that lies under one of
/// the `aliases` directories, under its inside spelling, audited as any other
/// prerequisite: newer than `recorded` (the evidence's own time) is stale, no
/// timestamp is uninspectable. `evidence` names the depfile or log record.
pub(crate) fn join_aliased<'n>(
    ev: &mut DepEvidence,
    prereqs: &mut Vec<FileId>,
    aliases: &[(String, String)],
    names: impl IntoIterator<Item = &'n str>,
    recorded: Option<SystemTime>,
    evidence: &str,
    gaps: &mut Vec<Gap>,
) {
    let mut joined = Vec::new();
    for p in names {
        for (d, inside) in aliases {
            if let Some(rel) = paths::strip_root(p, d) {
                joined.push(paths::join_fold(inside, rel));
            }
        }
    }
    joined.sort();
    joined.dedup();
    for real in joined {
        let meta = std::fs::metadata(&real).ok();
        audit_joined(
            &real,
            meta.as_ref().and_then(|m| m.modified().ok()),
            recorded,
            (evidence, " through an include directory outside the roots"),
            gaps,
        );
        let id = ev.add_file(&real, meta.map(|m| m.len()));
        if !prereqs.contains(&id) {
            prereqs.push(id);
        }
    }
}

/// Joins prerequisites spelled through an include directory that lies outside
/// both roots but resolves into one of them (a developer-install layout such
/// as `/opt/mylib/include -> SRC/include`): the compiler lists the outside
/// spelling, the change set names the inside one. For every include
/// directory of the codemodel outside both roots, its real path is taken
/// once; when it lands inside a root, the depfiles of the units whose target
/// uses it are read again and each prerequisite under it is added to the unit
/// under its inside spelling, with the same freshness audit as any other.
/// Nothing is read when no such directory exists (the usual case). Units of a
/// ninja deps log were joined as the log was merged (`ninja_units::merge`,
/// from the record's own inputs), so no log is read again.
pub fn join_outside_aliases(ev: &mut DepEvidence, model: &Codemodel, max_bytes: u64) -> Vec<Gap> {
    let aliases = outside_aliases(model);
    let mut gaps = Vec::new();
    if aliases.is_empty() {
        return gaps;
    }
    for ti in 0..ev.tus.len() {
        let target = &model.targets[ev.tus[ti].target];
        if ev.tus[ti].from_log || !uses_alias(&aliases, &target.includes) {
            continue;
        }
        let depfile = ev.tus[ti].depfile.clone();
        let dep_time = std::fs::metadata(&depfile).and_then(|m| m.modified()).ok();
        let bytes = match std::fs::read(&depfile) {
            Ok(b) if (b.len() as u64) <= max_bytes => b,
            Ok(_) | Err(_) => {
                gaps.push(Gap::new(
                    Code::DepFileUnreadable,
                    format!("{depfile} cannot be read again to join prerequisites spelled through an include directory outside the roots"),
                ));
                continue;
            }
        };
        let Ok(parsed) = depfile_syntax::parse(&bytes) else {
            continue; // it parsed the first time; a change since is caught by freshness
        };
        let names: Vec<String> = parsed
            .rules
            .iter()
            .flat_map(|r| r.prereqs.iter())
            .map(|name| paths::join_fold(&target.dir_build, name))
            .collect();
        let mut prereqs = std::mem::take(&mut ev.tus[ti].prereqs);
        join_aliased(
            ev,
            &mut prereqs,
            &aliases,
            names.iter().map(String::as_str),
            dep_time,
            &depfile,
            &mut gaps,
        );
        ev.tus[ti].prereqs = prereqs;
    }
    gaps
}
