//! Qt's autogen step (`AUTOMOC`, `AUTOUIC`, `AUTORCC`): the build-time
//! generated sources that are read as evidence instead of making their
//! target opaque. (`AUTORCC`'s resource units: see `rcc_verdict`.)
//!
//! With `AUTOMOC`, CMake scans a target's sources and headers at build time
//! and runs `moc` on those that declare `Q_OBJECT` (and the other macros);
//! the outputs are compiled into the target through one generated unit,
//! `<T>_autogen/mocs_compilation.cpp`, or `#include`d by a unit
//! (`foo.moc`, `moc_foo.cpp`). What that code is depends on:
//!
//! - which files declare a moc macro: every file autogen scans, listed in
//!   `CMakeFiles/<T>_autogen.dir/AutogenInfo.json` (`HEADERS`, `SOURCES`).
//!   A scanned header that gains `Q_OBJECT` adds code to the target, even
//!   when no unit of the target includes it. So each scanned file is joined
//!   to the evidence of the compilation unit, and audited against the parse
//!   cache autogen rewrites whenever a scanned file is newer than it
//!   (`PARSE_CACHE_FILE`): a newer scanned file has not been scanned since it
//!   changed (`DEP_EVIDENCE_STALE`);
//! - what each `moc` run read: Qt 5.15 and later write a depfile beside
//!   every output (`moc_foo.cpp.d`, `foo.moc.d`), which also names the file
//!   of a `Q_PLUGIN_METADATA(FILE …)`. Its project prerequisites are joined
//!   to every unit that includes the output, audited against the depfile.
//!
//! - what each `uic` header (`AUTOUIC`, `ui_NAME.h`) was made from: uic
//!   writes no depfile; its header is made from one `NAME.ui`, found beside
//!   the scanned file that includes the header or in a search path. Every
//!   such form that exists is joined to the units that include the header,
//!   audited against the header (uic rewrites it when its form is newer).
//!   A target with `AUTOUIC` but no `AUTOMOC` compiles no unit of autogen's;
//!   its info (found through the `<T>_autogen` target beside it) is read for
//!   its uic headers alone.
//!
//! Anything else autogen wrote that a unit includes without a depfile (the
//! output of a `moc` before Qt 5.15), an info file that cannot be
//! read, or a compilation file it does not name leaves the target opaque
//! (`GENERATED_SOURCE`), as before. A multi-configuration generator's
//! autogen is read for the selected configuration (`KEY_<Config>` entries). The settings
//! (moc options, include directories, definitions, the moc executable) are
//! written at configure time and change only with a CMake input.

use super::depfile_syntax;
pub use super::evidence::{Automoc, Verdict};
use super::evidence::{DepEvidence, FileId};
use super::file_api::{Codemodel, CompiledSource, Target};
use super::Reader;
use crate::fasthash::{FastMap, FastSet};
use crate::paths;
use crate::reason::{Code, Gap};
use std::time::SystemTime;

/// Whether `c` may be AUTOMOC's compilation unit: a generated
/// `mocs_compilation*.cpp`. Only a candidate: whether it is one is decided
/// from autogen's own evidence by [`join_automoc`].
fn is_moc_candidate(c: &CompiledSource) -> bool {
    let name = c.path.rsplit('/').next().unwrap_or("");
    c.generated && name.starts_with("mocs_compilation") && name.ends_with(".cpp")
}

/// Whether `c` may be an AUTORCC resource unit: a generated `qrc_*.cpp`.
fn is_rcc_candidate(c: &CompiledSource) -> bool {
    let name = c.path.rsplit('/').next().unwrap_or("");
    c.generated && name.starts_with("qrc_") && name.ends_with(".cpp")
}

/// Whether `c` is a compiled generated source that autogen's evidence may
/// vouch for (AUTOMOC's compilation unit, an AUTORCC resource unit): the
/// graph leaves it to [`join_automoc`]'s verdict.
pub fn is_candidate(c: &CompiledSource) -> bool {
    is_moc_candidate(c) || is_rcc_candidate(c)
}

/// The autogen settings of one target that this module reads.
struct Info {
    build_dir: String,
    /// Where autogen writes included outputs (`INCLUDE_DIR`, per configuration).
    include_dir: Option<String>,
    /// `AUTOUIC` is on (`QT_UIC_EXECUTABLE`), with its extra search paths.
    uic: bool,
    uic_search: Vec<String>,
    /// AUTOMOC's compilation unit (`MOC_COMPILATION_FILE`); `None` when
    /// AUTOMOC is off (a target with only `AUTOUIC`).
    compilation: Option<String>,
    predefs: Option<String>,
    parse_cache: String,
    scanned: Vec<String>,
}

fn info_path(t: &Target) -> String {
    format!(
        "{}/CMakeFiles/{}_autogen.dir/AutogenInfo.json",
        t.dir_build, t.name
    )
}

/// Why autogen's evidence cannot tell what one of its outputs was made from
/// (said after the output or the target, as an opaque reason).
#[derive(Debug, Clone, thiserror::Error)]
enum Unexplained {
    #[error("its autogen info {path} cannot be read ({cause})")]
    InfoUnreadable { path: String, cause: String },
    #[error("its autogen info {0} is not valid JSON")]
    InfoNotJson(String),
    #[error("its autogen info {0} has no MULTI_CONFIG")]
    InfoNoMultiConfig(String),
    #[error("its autogen info {path} has no {what}")]
    InfoMissing { path: String, what: String },
    #[error("its autogen info {path} has a {key} entry without an absolute path")]
    InfoRelativeEntry { path: String, key: &'static str },
    #[error("which autogen wrote without a dependency file ({0}: moc before Qt 5.15?)")]
    NoDependencyFile(String),
    #[error("a uic header, but no .ui file is where autogen looks for its form")]
    NoForm,
    #[error("whose moc dependency file {0} cannot be parsed")]
    DependencyFileUnparsable(String),
    #[error("whose moc dependency file {0} does not describe it")]
    DependencyFileElsewhere(String),
    #[error("whose moc dependency file {dep} lists the relative path {name}")]
    RelativePrerequisite { dep: String, name: String },
    #[error("its AUTORCC info {0} names no absolute SOURCE")]
    RccNoSource(String),
    #[error("its AUTORCC info {0} has an INPUTS entry that is no absolute path")]
    RccRelativeInput(String),
    #[error("its resource file {0} cannot be read as UTF-8")]
    QrcUnreadable(String),
    #[error("its resource file {qrc} {why}")]
    Qrc { qrc: String, why: QrcError },
    #[error("{qrc} lists {file}, which cannot be inspected")]
    QrcFileUninspectable { qrc: String, file: String },
    #[error("{qrc} lists {file}, which is not a file (rcc embeds what a directory holds)")]
    QrcDirectory { qrc: String, file: String },
}

fn read_info(reader: &Reader, t: &Target, config: &str) -> Result<Info, Unexplained> {
    let path = info_path(t);
    let bytes = reader
        .read(&path)
        .map_err(|e| Unexplained::InfoUnreadable {
            path: path.clone(),
            cause: e.to_string(),
        })?;
    let v: serde_json::Value = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or_else(|| Unexplained::InfoNotJson(path.clone()))?;
    // A multi-configuration generator writes per-configuration files under
    // `KEY_<Config>` (`mocs_compilation_Debug.cpp`, `ParseCache_Debug.txt`).
    let multi = match v.get("MULTI_CONFIG").and_then(|x| x.as_bool()) {
        Some(m) => m,
        None => return Err(Unexplained::InfoNoMultiConfig(path)),
    };
    let key_of = |key: &str| {
        if multi {
            format!("{key}_{config}")
        } else {
            key.to_owned()
        }
    };
    let text = |key: &str| {
        v.get(key)
            .and_then(|x| x.as_str())
            .filter(|s| !s.is_empty())
    };
    let absolute = |key: &str| {
        text(key)
            .filter(|s| s.starts_with('/'))
            .map(paths::fold)
            .ok_or_else(|| Unexplained::InfoMissing {
                path: path.clone(),
                what: format!("absolute {key}"),
            })
    };
    let mut scanned = Vec::new();
    for key in ["HEADERS", "SOURCES"] {
        let list =
            v.get(key)
                .and_then(|x| x.as_array())
                .ok_or_else(|| Unexplained::InfoMissing {
                    path: path.clone(),
                    what: format!("{key} list"),
                })?;
        for entry in list {
            let name = entry
                .get(0)
                .and_then(|x| x.as_str())
                .filter(|s| s.starts_with('/'))
                .ok_or_else(|| Unexplained::InfoRelativeEntry {
                    path: path.clone(),
                    key,
                })?;
            scanned.push(paths::fold(name));
        }
    }
    scanned.sort();
    scanned.dedup();
    let source_dir = text("CMAKE_CURRENT_SOURCE_DIR").unwrap_or("/");
    let uic_search = v
        .get("UIC_SEARCH_PATHS")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str())
        .map(|d| paths::join_fold(source_dir, d))
        .collect();
    Ok(Info {
        build_dir: absolute("BUILD_DIR")?,
        include_dir: absolute(&key_of("INCLUDE_DIR")).ok(),
        uic: text("QT_UIC_EXECUTABLE").is_some(),
        uic_search,
        compilation: absolute(&key_of("MOC_COMPILATION_FILE")).ok(),
        predefs: text(&key_of("MOC_PREDEFS_FILE")).map(paths::fold),
        parse_cache: absolute(&key_of("PARSE_CACHE_FILE"))?,
        scanned,
    })
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn mtime(path: &str) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// One `stat` of a file joined as evidence: its modification time (for the
/// audit), its size (for the evidence's twin check) and whether it is a
/// regular file.
struct Stat {
    mtime: Option<SystemTime>,
    size: Option<u64>,
    is_file: bool,
}

fn stat(path: &str) -> Stat {
    match std::fs::metadata(path) {
        Ok(m) => Stat {
            mtime: m.modified().ok(),
            size: Some(m.len()),
            is_file: m.is_file(),
        },
        Err(_) => Stat {
            mtime: None,
            size: None,
            is_file: false,
        },
    }
}

/// A prerequisite to join: (unit, file, its size, the evidence that lists it).
type Join = (usize, String, Option<u64>, String);

/// What an output autogen wrote was made from: (file, its size, the
/// evidence that says so); `Err`: why nobody can tell.
type Sources = Result<Vec<(String, Option<u64>, String)>, Unexplained>;

/// Adds each joined file to its unit's prerequisites; a file the evidence
/// already lists keeps its id (and the size its own stat recorded).
fn apply_joins(ev: &mut DepEvidence, joins: Vec<Join>) {
    for (u, p, size, by) in joins {
        let id = ev.add_file(&p, size);
        if !ev.tus[u].prereqs.contains(&id) {
            ev.tus[u].prereqs.push(id);
            ev.joined.insert((u, id), by);
        }
    }
}

/// Reads the autogen evidence of every target that compiles a
/// [candidate](is_candidate) and joins it to every unit that includes what
/// autogen wrote (a unit of another target too), then says which candidates
/// are vouched. Returns the freshness gaps (global, like every other stale
/// evidence). Costs nothing in a build without a candidate.
pub fn join_automoc(ev: &mut DepEvidence, model: &Codemodel, reader: &Reader) -> Vec<Gap> {
    let mut gaps = Vec::new();
    let (candidates, uic_only) = candidates_of(model);
    if candidates.is_empty() && uic_only.is_empty() {
        return gaps;
    }
    let compiled = |&(ti, ci): &(usize, usize)| &model.targets[ti].compiled[ci];
    let candidate_paths: FastSet<&str> = candidates
        .iter()
        .map(|k| compiled(k).path.as_str())
        .collect();
    let rcc_paths: FastSet<&str> = candidates
        .iter()
        .map(compiled)
        .filter(|c| is_rcc_candidate(c))
        .map(|c| c.path.as_str())
        .collect();
    let mut units_of_target: Vec<Vec<usize>> = vec![Vec::new(); model.targets.len()];
    for (u, tu) in ev.tus.iter().enumerate() {
        if let Some(v) = units_of_target.get_mut(tu.target) {
            v.push(u);
        }
    }
    let mut infos: Vec<(usize, Result<Info, Unexplained>)> = candidates
        .iter()
        .filter(|k| is_moc_candidate(compiled(k)))
        .map(|&(ti, _)| (ti, read_info(reader, &model.targets[ti], &model.config)))
        .collect();
    infos.dedup_by_key(|(ti, _)| *ti);
    // Without AUTOMOC only the uic headers are read: an info that cannot be
    // read, or a target without AUTOUIC, leaves what its autogen wrote plain
    // build-tree files, so a change to a form stays an unknown path.
    let uic_infos: Vec<(usize, Info)> = uic_only
        .iter()
        .filter_map(|&ti| {
            let info = read_info(reader, &model.targets[ti], &model.config).ok()?;
            info.uic.then_some((ti, info))
        })
        .collect();
    let roots = [model.scope_root(), model.build_root.as_str()];
    let project = |p: &str| roots.iter().any(|r| paths::is_within(p, r));
    // Why a target stays opaque (the first reason found).
    let mut opaque: Opaque = Default::default();
    let mut ok: Vec<(usize, &Info)> = uic_infos.iter().map(|(ti, i)| (*ti, i)).collect();
    for (ti, info) in &infos {
        match info {
            Ok(info) => ok.push((*ti, info)),
            Err(why) => {
                opaque.insert(*ti, why.to_string());
            }
        }
    }
    // Which autogen directory holds each evidence file.
    let by_dir: FastMap<&str, usize> = ok
        .iter()
        .enumerate()
        .map(|(k, (_, info))| (info.build_dir.as_str(), k))
        .collect();
    let owner: Vec<Option<usize>> = ev
        .files
        .iter()
        .map(|f| {
            if !paths::is_within(f, &model.build_root) {
                return None;
            }
            let mut dir = f.as_str();
            while let Some((parent, _)) = dir.rsplit_once('/') {
                if let Some(&k) = by_dir.get(parent) {
                    return Some(k);
                }
                dir = parent;
            }
            None
        })
        .collect();
    // What each output autogen wrote was generated from, once per output.
    let mut explained: FastMap<FileId, Sources> = FastMap::default();
    let mut joins: Vec<Join> = Vec::new();
    for u in 0..ev.tus.len() {
        for &id in &ev.tus[u].prereqs {
            let Some(k) = owner[id as usize] else {
                continue;
            };
            let (owner_t, info) = ok[k];
            let out = &ev.files[id as usize];
            // The units autogen compiles have verdicts of their own.
            if candidate_paths.contains(out.as_str())
                || info.compilation.as_ref() == Some(out)
                || Some(out) == info.predefs.as_ref()
            {
                continue;
            }
            // A multi-configuration AUTORCC unit includes rcc's output for
            // its configuration: its verdict covers that output.
            if rcc_paths.contains(ev.tus[u].source.as_str()) && file_name(out).starts_with("qrc_") {
                continue;
            }
            let e = explained
                .entry(id)
                .or_insert_with(|| explain(info, out, reader, &project, &mut gaps));
            match e {
                Ok(from) => joins.extend(
                    from.iter()
                        .map(|(p, size, by)| (u, p.clone(), *size, by.clone())),
                ),
                Err(why) => {
                    let why = format!("{} includes {out}, {why}", ev.tus[u].source);
                    opaque.entry(owner_t).or_insert_with(|| why.clone());
                    opaque.entry(ev.tus[u].target).or_insert(why);
                }
            }
        }
    }
    join_scanned(
        ev,
        model,
        &ok,
        &units_of_target,
        &project,
        (&mut joins, &mut gaps),
    );
    // Joining only adds prerequisites: it is applied whatever the verdicts.
    apply_joins(ev, joins);
    let verdicts = candidate_verdicts(
        ev,
        (model, reader),
        &candidates,
        &ok,
        &opaque,
        (&units_of_target, &project),
        &mut gaps,
    );
    ev.automoc.verdicts.extend(verdicts);
    ev.automoc.opaque_consumers = opaque
        .into_iter()
        .filter(|(ti, _)| !model.targets[*ti].compiled.iter().any(is_candidate))
        .collect();
    gaps.sort();
    gaps.dedup();
    gaps
}

/// Each candidate's verdict: an AUTORCC unit's from its own evidence, a moc
/// compilation unit vouched when its target's autogen info names it and
/// nothing made the target opaque.
fn candidate_verdicts(
    ev: &mut DepEvidence,
    (model, reader): (&Codemodel, &Reader),
    candidates: &[(usize, usize)],
    ok: &[(usize, &Info)],
    opaque: &Opaque,
    (units_of_target, project): (&[Vec<usize>], InProject<'_>),
    gaps: &mut Vec<Gap>,
) -> Vec<((usize, usize), Verdict)> {
    let compiled = |&(ti, ci): &(usize, usize)| &model.targets[ti].compiled[ci];
    let info_of: FastMap<usize, &Info> = ok.iter().copied().collect();
    let mut verdicts = Vec::new();
    for &(ti, ci) in candidates {
        let c = compiled(&(ti, ci));
        let v = if is_rcc_candidate(c) {
            rcc_verdict(
                ev,
                model,
                reader,
                (ti, ci),
                &units_of_target[ti],
                project,
                gaps,
            )
        } else {
            match (opaque.get(&ti), info_of.get(&ti)) {
                (Some(why), _) => Verdict::Opaque(why.clone()),
                (None, Some(info)) if info.compilation.as_ref() == Some(&c.path) => {
                    Verdict::Vouched
                }
                (None, Some(info)) => Verdict::Opaque(match &info.compilation {
                    Some(named) => format!(
                        "its autogen info names {named} as the moc compilation file, not this one"
                    ),
                    None => "its autogen info names no moc compilation file".into(),
                }),
                (None, None) => Verdict::Opaque("its autogen info was not read".into()),
            }
        };
        verdicts.push(((ti, ci), v));
    }
    verdicts
}

/// Whether a path lies in the project (its scope or build tree).
type InProject<'a> = &'a dyn Fn(&str) -> bool;

/// Why each target stays opaque (the first reason found).
type Opaque = std::collections::BTreeMap<usize, String>;

/// Every compiled [candidate](is_candidate) (target, source index), and the
/// targets with AUTOUIC but no AUTOMOC: they compile no candidate, but their
/// autogen (the `<T>_autogen` target beside them) writes uic headers.
fn candidates_of(model: &Codemodel) -> (Vec<(usize, usize)>, Vec<usize>) {
    let candidates: Vec<(usize, usize)> = model
        .targets
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            t.compiled
                .iter()
                .enumerate()
                .filter(|(_, c)| is_candidate(c))
                .map(move |(ci, _)| (ti, ci))
        })
        .collect();
    // Targets with AUTOUIC but no AUTOMOC compile no candidate, but their
    // autogen (the `<T>_autogen` target beside them) writes uic headers.
    let has_moc: FastSet<usize> = candidates
        .iter()
        .filter(|&&(ti, ci)| is_moc_candidate(&model.targets[ti].compiled[ci]))
        .map(|&(ti, _)| ti)
        .collect();
    let uic_only: Vec<usize> = (0..model.targets.len())
        .filter(|ti| !has_moc.contains(ti))
        .filter(|&ti| {
            let name = format!("{}_autogen", model.targets[ti].name);
            model
                .targets
                .binary_search_by(|t| t.name.as_str().cmp(&name))
                .is_ok()
        })
        .collect();
    (candidates, uic_only)
}

/// The files each autogen scans, against its parse cache (a newer one is
/// stale evidence), joined to its compilation unit.
fn join_scanned(
    ev: &DepEvidence,
    model: &Codemodel,
    ok: &[(usize, &Info)],
    units_of_target: &[Vec<usize>],
    project: &dyn Fn(&str) -> bool,
    (joins, gaps): (&mut Vec<Join>, &mut Vec<Gap>),
) {
    for &(ti, info) in ok {
        let Some(compilation) = &info.compilation else {
            // No AUTOMOC: what the scan finds only decides which uic
            // headers are made, and each unit's own evidence lists those.
            continue;
        };
        let cache_time = mtime(&info.parse_cache);
        let info_file = info_path(&model.targets[ti]);
        let units: Vec<usize> = units_of_target[ti]
            .iter()
            .copied()
            .filter(|&u| ev.tus[u].source == *compilation)
            .collect();
        for p in info.scanned.iter().filter(|p| project(p)) {
            let st = stat(p);
            match (st.mtime, cache_time) {
                (Some(m), Some(c)) if m > c => gaps.push(Gap::new(
                    Code::DepEvidenceStale,
                    format!(
                        "{p} is newer than {}: AUTOMOC of target {:?} has not scanned it since it changed",
                        info.parse_cache, model.targets[ti].name
                    ),
                )),
                (Some(_), Some(_)) => {}
                _ => gaps.push(Gap::new(
                    Code::DepPrereqUninspectable,
                    format!(
                        "{p} (scanned by AUTOMOC of target {:?}) or {} cannot be inspected",
                        model.targets[ti].name, info.parse_cache
                    ),
                )),
            }
            for &u in &units {
                joins.push((u, p.clone(), st.size, info_file.clone()));
            }
        }
    }
}

/// What the output `out` in an autogen directory was generated from, each
/// with the evidence that says so: what moc read (its dependency file), or
/// the forms uic may have read. `Err`: why nobody can tell.
fn explain(
    info: &Info,
    out: &str,
    reader: &Reader,
    project: &dyn Fn(&str) -> bool,
    gaps: &mut Vec<Gap>,
) -> Sources {
    let mut from = Vec::new();
    let dep = format!("{out}.d");
    let Ok(bytes) = reader.read(&dep) else {
        // uic writes no dependency file: its header is made from one `.ui`
        // file, found where autogen looks for it.
        let Some(forms) = uic_forms(info, out) else {
            return Err(Unexplained::NoDependencyFile(dep));
        };
        if forms.is_empty() {
            return Err(Unexplained::NoForm);
        }
        let written = mtime(out);
        for (f, st) in forms.into_iter().filter(|(f, _)| project(f)) {
            audit(&f, st.mtime, written, out, gaps);
            from.push((f, st.size, out.to_owned()));
        }
        return Ok(from);
    };
    let parsed = depfile_syntax::parse(&bytes)
        .map_err(|_| Unexplained::DependencyFileUnparsable(dep.clone()))?;
    let names_out = parsed.rules.iter().any(|r| {
        r.targets
            .iter()
            .any(|x| x.starts_with('/') && paths::fold(x) == out)
    });
    if !names_out {
        return Err(Unexplained::DependencyFileElsewhere(dep));
    }
    let recorded = mtime(&dep);
    for name in parsed.rules.iter().flat_map(|r| r.prereqs.iter()) {
        if !name.starts_with('/') {
            return Err(Unexplained::RelativePrerequisite {
                dep,
                name: name.to_string(),
            });
        }
        let p = paths::fold(name);
        if project(&p) {
            let st = stat(&p);
            audit(&p, st.mtime, recorded, &dep, gaps);
            from.push((p, st.size, dep.clone()));
        }
    }
    Ok(from)
}

/// AUTORCC's unit `c` (`qrc_NAME.cpp`) of target `ti`: rcc embeds the `.qrc`
/// file's resources in it. The `AutoRcc_*_Info.json` of the target whose
/// output (`BUILD_DIR/OUTPUT_CHECKSUM/OUTPUT_NAME`) it is names the `.qrc`
/// (`SOURCE`) and what configure listed in it (`INPUTS`); the `.qrc` is read
/// again too, since rcc lists it again at build time. The `.qrc` and every
/// file either names are joined to the unit, each no newer than the output
/// (autorcc runs rcc again when one is). A listed directory (rcc embeds
/// what it holds), a missing file or a `.qrc` that cannot be read leaves the
/// target opaque.
fn rcc_verdict(
    ev: &mut DepEvidence,
    model: &Codemodel,
    reader: &Reader,
    (ti, ci): (usize, usize),
    units_of_target: &[usize],
    project: &dyn Fn(&str) -> bool,
    gaps: &mut Vec<Gap>,
) -> Verdict {
    let t = &model.targets[ti];
    let out = &t.compiled[ci].path;
    let dir = format!("{}/CMakeFiles/{}_autogen.dir", t.dir_build, t.name);
    let mut infos: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("AutoRcc_") && n.ends_with("_Info.json"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    infos.sort();
    for path in infos {
        let Some(v) = reader
            .read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        else {
            return Verdict::Opaque(format!("its AUTORCC info {path} cannot be read"));
        };
        let text = |key: &str| {
            v.get(key)
                .and_then(|x| x.as_str())
                .filter(|s| !s.is_empty())
        };
        let (Some(build), Some(sum), Some(name)) = (
            text("BUILD_DIR"),
            text("OUTPUT_CHECKSUM"),
            text("OUTPUT_NAME"),
        ) else {
            return Verdict::Opaque(format!("its AUTORCC info {path} names no output"));
        };
        if !build.starts_with('/') || paths::fold(&format!("{build}/{sum}/{name}")) != *out {
            continue;
        }
        let rcc = Rcc {
            target: ti,
            out,
            info: &path,
            v: &v,
            units_of_target,
        };
        return match rcc_join(ev, &rcc, reader, project, gaps) {
            Ok(()) => Verdict::Vouched,
            Err(why) => Verdict::Opaque(why.to_string()),
        };
    }
    Verdict::Opaque(format!("no AUTORCC info in {dir} names it as its output"))
}

/// One AUTORCC unit and the info that names it as its output.
struct Rcc<'a> {
    target: usize,
    out: &'a str,
    info: &'a str,
    v: &'a serde_json::Value,
    /// The units of the unit's target.
    units_of_target: &'a [usize],
}

fn rcc_join(
    ev: &mut DepEvidence,
    rcc: &Rcc<'_>,
    reader: &Reader,
    project: &dyn Fn(&str) -> bool,
    gaps: &mut Vec<Gap>,
) -> Result<(), Unexplained> {
    let (out, info, v) = (rcc.out, rcc.info, rcc.v);
    let qrc = v
        .get("SOURCE")
        .and_then(|x| x.as_str())
        .filter(|s| s.starts_with('/'))
        .map(paths::fold)
        .ok_or_else(|| Unexplained::RccNoSource(info.to_owned()))?;
    let text = reader
        .read(&qrc)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| Unexplained::QrcUnreadable(qrc.clone()))?;
    let qrc_dir = qrc.rsplit_once('/').map(|(d, _)| d).unwrap_or("/");
    let mut files: Vec<String> = qrc_files(&text)
        .map_err(|why| Unexplained::Qrc {
            qrc: qrc.clone(),
            why,
        })?
        .iter()
        .map(|f| paths::join_fold(qrc_dir, f))
        .collect();
    for x in v
        .get("INPUTS")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        match x.as_str() {
            Some(p) if p.starts_with('/') => files.push(paths::fold(p)),
            _ => return Err(Unexplained::RccRelativeInput(info.to_owned())),
        }
    }
    files.push(qrc.clone());
    files.sort();
    files.dedup();
    let units: Vec<usize> = rcc
        .units_of_target
        .iter()
        .copied()
        .filter(|&u| ev.tus[u].source == out)
        .collect();
    // What rcc wrote: the unit itself, or on a multi-configuration generator
    // the output for its configuration that the unit includes (under the
    // same autogen directory).
    let build = v.get("BUILD_DIR").and_then(|x| x.as_str()).unwrap_or("/");
    let inner: Vec<&String> = units
        .iter()
        .flat_map(|&u| ev.tus[u].prereqs.iter())
        .map(|&id| &ev.files[id as usize])
        .filter(|p| *p != out && paths::is_within(p, build) && file_name(p).starts_with("qrc_"))
        .collect();
    let (written, written_by) = match inner.iter().min_by_key(|p| mtime(p)) {
        Some(p) => (mtime(p), p.to_string()),
        None => (mtime(out), out.to_owned()),
    };
    let mut joins: Vec<Join> = Vec::new();
    for f in &files {
        let st = stat(f);
        if st.mtime.is_none() {
            return Err(Unexplained::QrcFileUninspectable {
                qrc,
                file: f.clone(),
            });
        }
        if !st.is_file {
            return Err(Unexplained::QrcDirectory {
                qrc,
                file: f.clone(),
            });
        }
        if project(f) {
            audit(f, st.mtime, written, &written_by, gaps);
            joins.extend(
                units
                    .iter()
                    .map(|&u| (u, f.clone(), st.size, info.to_owned())),
            );
        }
    }
    apply_joins(ev, joins);
    // The output is a custom command's (its `.rule`): the unit that compiles
    // it lists it, which alone is no generated header. Any other unit of the
    // target that lists it still is.
    let listed_elsewhere = ev.id_of(out).is_some_and(|id| {
        rcc.units_of_target
            .iter()
            .any(|&u| ev.tus[u].source != out && ev.tus[u].prereqs.contains(&id))
    });
    if !listed_elsewhere {
        ev.generated_includes
            .retain(|(t, header)| !(*t == rcc.target && header == out));
    }
    Ok(())
}

/// Why a Qt resource collection (`.qrc`) is not read (said after its path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum QrcError {
    #[error("uses CDATA, which is not read")]
    Cdata,
    #[error("has an unterminated comment")]
    UnterminatedComment,
    #[error("has an unterminated <file> tag")]
    UnterminatedTag,
    #[error("has an empty <file/> entry")]
    EmptyFile,
    #[error("has a <file> without </file>")]
    UnclosedFile,
    #[error("has a bare '&'")]
    BareAmpersand,
    #[error("has a bad character reference")]
    BadCharacterReference,
    #[error("uses the entity &{0};, which is not read")]
    Entity(String),
}

/// The `<file>` entries of a Qt resource collection (`.qrc`, XML), as
/// written (relative to the `.qrc`'s directory, or absolute). Comments are
/// skipped, as rcc skips them; CDATA or an entity other than the five XML
/// ones and character references is refused rather than guessed.
fn qrc_files(text: &str) -> Result<Vec<String>, QrcError> {
    if text.contains("<![CDATA[") {
        return Err(QrcError::Cdata);
    }
    let mut body = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<!--") {
        body.push_str(&rest[..at]);
        let end = rest[at..]
            .find("-->")
            .ok_or(QrcError::UnterminatedComment)?;
        rest = &rest[at + end + 3..];
    }
    body.push_str(rest);
    let mut files = Vec::new();
    let mut rest = body.as_str();
    while let Some(at) = rest.find("<file") {
        let after = &rest[at + 5..];
        match after.chars().next() {
            Some('>' | '/' | ' ' | '\t' | '\n' | '\r') => {}
            _ => {
                rest = after;
                continue;
            }
        }
        let open_end = after.find('>').ok_or(QrcError::UnterminatedTag)?;
        if after[..open_end].ends_with('/') {
            return Err(QrcError::EmptyFile);
        }
        let inner = &after[open_end + 1..];
        let close = inner.find("</file>").ok_or(QrcError::UnclosedFile)?;
        files.push(xml_text(inner[..close].trim())?);
        rest = &inner[close + 7..];
    }
    Ok(files)
}

/// XML character data with its entities resolved.
fn xml_text(s: &str) -> Result<String, QrcError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').ok_or(QrcError::BareAmpersand)?;
        let entity = &rest[at + 1..at + end];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or(QrcError::BadCharacterReference)?,
            e if e.starts_with('#') => e[1..]
                .parse::<u32>()
                .ok()
                .and_then(char::from_u32)
                .ok_or(QrcError::BadCharacterReference)?,
            _ => return Err(QrcError::Entity(entity.to_owned())),
        };
        out.push(c);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// When `out` is a header `AUTOUIC` writes (`INCLUDE_DIR/[DIR/]ui_NAME.h`),
/// every `.ui` file uic may have made it from: `NAME.ui` (and `DIR/NAME.ui`)
/// beside any file autogen scans (uic looks beside the file that includes
/// the header, which is one of them) and in each `AUTOUIC_SEARCH_PATHS`
/// directory. Only those that exist; a superset of the one used, so a change
/// to any of them reaches the target. `None` when `out` is no uic header.
fn uic_forms(info: &Info, out: &str) -> Option<Vec<(String, Stat)>> {
    if !info.uic {
        return None;
    }
    let key = paths::strip_root(out, info.include_dir.as_deref()?)?;
    let (prefix, file) = match key.rsplit_once('/') {
        Some((d, f)) => (format!("{d}/"), f),
        None => (String::new(), key),
    };
    let form = format!("{}.ui", file.strip_prefix("ui_")?.strip_suffix(".h")?);
    let dirs = info
        .scanned
        .iter()
        .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_owned()))
        .chain(info.uic_search.iter().cloned());
    let mut forms: Vec<String> = dirs
        .flat_map(|d| {
            [
                paths::join_fold(&d, &form),
                paths::join_fold(&d, &format!("{prefix}{form}")),
            ]
        })
        .collect();
    forms.sort();
    forms.dedup();
    Some(
        forms
            .into_iter()
            .map(|p| {
                let st = stat(&p);
                (p, st)
            })
            .filter(|(_, st)| st.is_file)
            .collect(),
    )
}

/// A joined project file (modified at `m`) must not be newer than the
/// evidence that lists it.
fn audit(
    p: &str,
    m: Option<SystemTime>,
    recorded: Option<SystemTime>,
    evidence: &str,
    gaps: &mut Vec<Gap>,
) {
    super::aliases::audit_joined(p, m, recorded, (evidence, ""), gaps);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Limits;

    /// A target `core` built in a temp dir, with `info` as its AutogenInfo.json.
    fn target_with_info(info: &str) -> (tempfile::TempDir, Target) {
        let dir = tempfile::tempdir().expect("temp dir");
        let build = dir.path().to_str().unwrap().to_owned();
        let t = Target {
            name: "core".into(),
            dir_build: build.clone(),
            ..Target::default()
        };
        let p = info_path(&t);
        std::fs::create_dir_all(std::path::Path::new(&p).parent().unwrap()).unwrap();
        std::fs::write(&p, info.replace("@B@", &build)).unwrap();
        (dir, t)
    }

    const SINGLE: &str = r#"{
      "MULTI_CONFIG": false, "BUILD_DIR": "@B@/core_autogen",
      "INCLUDE_DIR": "@B@/core_autogen/include",
      "MOC_COMPILATION_FILE": "@B@/core_autogen/mocs_compilation.cpp",
      "MOC_PREDEFS_FILE": "@B@/core_autogen/moc_predefs.h",
      "PARSE_CACHE_FILE": "@B@/CMakeFiles/core_autogen.dir/ParseCache.txt",
      "QT_UIC_EXECUTABLE": "/usr/lib/qt5/bin/uic", "UIC_SEARCH_PATHS": ["forms", "/abs/forms"],
      "CMAKE_CURRENT_SOURCE_DIR": "/src",
      "HEADERS": [["/src/b.h", "Mu", "X/moc_b.cpp", null], ["/src/a.h", "Mu", "X/moc_a.cpp"]],
      "SOURCES": [["/src/a.cpp", "Mu"], ["/src/./a.h", "Mu"]],
      "NEWER_MEMBER": 1
    }"#;

    #[test]
    fn single_configuration_info_is_read_with_its_scan_list() {
        let (_d, t) = target_with_info(SINGLE);
        let info = read_info(&Reader::new(Limits::default()), &t, "Debug").unwrap();
        let b = &t.dir_build;
        assert_eq!(
            info.compilation,
            Some(format!("{b}/core_autogen/mocs_compilation.cpp"))
        );
        assert_eq!(
            info.parse_cache,
            format!("{b}/CMakeFiles/core_autogen.dir/ParseCache.txt")
        );
        assert_eq!(info.scanned, ["/src/a.cpp", "/src/a.h", "/src/b.h"]);
        assert_eq!(info.uic_search, ["/src/forms", "/abs/forms"]);
        assert!(info.uic);
    }

    #[test]
    fn multi_configuration_info_is_read_for_the_selected_configuration() {
        let multi = SINGLE
            .replace("\"MULTI_CONFIG\": false", "\"MULTI_CONFIG\": true")
            .replace(
                "\"INCLUDE_DIR\":",
                "\"INCLUDE_DIR_Release\": \"@B@/core_autogen/include_Release\", \
                 \"MOC_COMPILATION_FILE_Release\": \"@B@/core_autogen/mocs_compilation_Release.cpp\", \
                 \"PARSE_CACHE_FILE_Release\": \"@B@/CMakeFiles/core_autogen.dir/ParseCache_Release.txt\", \
                 \"INCLUDE_DIR\":",
            );
        let (_d, t) = target_with_info(&multi);
        let reader = Reader::new(Limits::default());
        let info = read_info(&reader, &t, "Release").unwrap();
        assert!(info
            .compilation
            .unwrap()
            .ends_with("/mocs_compilation_Release.cpp"));
        assert!(info.parse_cache.ends_with("/ParseCache_Release.txt"));
        assert_eq!(
            info.include_dir
                .as_deref()
                .map(|d| d.ends_with("/include_Release")),
            Some(true)
        );
        // A configuration the info has no files for is no evidence.
        let err = read_info(&reader, &t, "Debug").err().unwrap().to_string();
        assert!(err.contains("PARSE_CACHE_FILE_Debug"), "{err}");
    }

    #[test]
    fn unreadable_or_incomplete_info_is_a_reason_not_a_guess() {
        let reader = Reader::new(Limits::default());
        for (info, needle) in [
            ("{ not json", "is not valid JSON"),
            (
                &SINGLE.replace("\"MULTI_CONFIG\": false,", "") as &str,
                "has no MULTI_CONFIG",
            ),
            (
                &SINGLE.replace("[\"/src/a.cpp\"", "[\"a.cpp\""),
                "without an absolute path",
            ),
            (
                &SINGLE.replace("\"SOURCES\":", "\"SOURCEZ\":"),
                "has no SOURCES list",
            ),
            (
                &SINGLE.replace("\"@B@/core_autogen\",", "\"core_autogen\","),
                "absolute BUILD_DIR",
            ),
        ] {
            let (_d, t) = target_with_info(info);
            let err = read_info(&reader, &t, "Debug").err().unwrap().to_string();
            assert!(err.contains(needle), "{needle:?} not in {err:?}");
        }
        let t = Target {
            name: "core".into(),
            dir_build: "/nonexistent-d2t".into(),
            ..Target::default()
        };
        let err = read_info(&reader, &t, "Debug").err().unwrap().to_string();
        assert!(err.contains("cannot be read"), "{err}");
    }

    #[test]
    fn qrc_entries_are_read_as_rcc_reads_them() {
        let qrc = "<!DOCTYPE RCC><RCC version=\"1.0\">\n<qresource prefix=\"/p\">\n\
                   <!-- <file>gone.txt</file> -->\n  <file alias=\"a\">  data/a&amp;b.txt </file>\n\
                   <file>&#x41;.png</file><files>no</files>\n</qresource>\n\
                   <qresource lang=\"de\"><file\n>/abs/de.txt</file></qresource></RCC>\n";
        assert_eq!(
            qrc_files(qrc).unwrap(),
            ["data/a&b.txt", "A.png", "/abs/de.txt"]
        );
        for (bad, needle) in [
            ("<RCC><file><![CDATA[x]]></file></RCC>", "CDATA"),
            ("<RCC><!-- <file>x</file></RCC>", "unterminated comment"),
            ("<RCC><file>x</RCC>", "without </file>"),
            ("<RCC><file/></RCC>", "empty <file/>"),
            ("<RCC><file>&nbsp;x</file></RCC>", "&nbsp;"),
            ("<RCC><file>a & b</file></RCC>", "bare '&'"),
        ] {
            let err = qrc_files(bad).err().unwrap();
            assert!(
                err.to_string().contains(needle),
                "{needle:?} not in {err:?}"
            );
        }
    }

    #[test]
    fn a_uic_header_maps_to_every_form_autogen_may_have_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_owned();
        for f in [
            "src/form.ui",
            "src/sub/form.ui",
            "forms/sub/form.ui",
            "forms/other.ui",
        ] {
            let p = format!("{root}/{f}");
            std::fs::create_dir_all(std::path::Path::new(&p).parent().unwrap()).unwrap();
            std::fs::write(&p, "<ui/>").unwrap();
        }
        let info = Info {
            build_dir: format!("{root}/b/core_autogen"),
            include_dir: Some(format!("{root}/b/core_autogen/include")),
            uic: true,
            uic_search: vec![format!("{root}/forms")],
            compilation: None,
            predefs: None,
            parse_cache: String::new(),
            scanned: vec![format!("{root}/src/a.cpp")],
        };
        let forms = uic_forms(
            &info,
            &format!("{root}/b/core_autogen/include/sub/ui_form.h"),
        )
        .map(|f| f.into_iter().map(|(p, _)| p).collect::<Vec<_>>());
        assert_eq!(
            forms,
            Some(vec![
                format!("{root}/forms/sub/form.ui"),
                format!("{root}/src/form.ui"),
                format!("{root}/src/sub/form.ui"),
            ])
        );
        // Not a uic header: a moc output, or a file outside the include directory.
        assert!(uic_forms(&info, &format!("{root}/b/core_autogen/include/a.moc")).is_none());
        assert!(uic_forms(&info, &format!("{root}/b/core_autogen/X/ui_form.h")).is_none());
        // Without AUTOUIC nothing is a uic header.
        let off = Info { uic: false, ..info };
        assert!(uic_forms(&off, &format!("{root}/b/core_autogen/include/ui_form.h")).is_none());
    }
}
