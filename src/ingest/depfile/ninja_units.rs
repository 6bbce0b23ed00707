//! The ninja-log reader behind the dependency-evidence interface: maps the
//! records of a `.ninja_deps` (parsed by `ninja_deps.rs`) to translation units
//! and audits them as the depfile reader audits `.d` files.

use std::time::SystemTime;

use super::map::{leftover_hint, main_by_stem, SourceIndex};
use super::objects::{ends_with_path, stem_below_object_dir};
use super::stat::{stat_file, DirMemo, FileStat};
use crate::fasthash::FastMap;
use crate::ingest::aliases as alias;
use crate::ingest::drop_in_background;
use crate::ingest::evidence::{DepEvidence, FileId, NewerPrereqs, Tu};
use crate::ingest::file_api::Codemodel;
use crate::ingest::ninja_deps::{self, DepsLog, DepsLogError};
use crate::paths;
use crate::reason::{Code, Gap};

/// How one input path of the log resolves, found before the codemodel is known.
enum Input {
    /// Outside both roots: a system header.
    System,
    /// Longer than `--max-path-len`.
    TooLong,
    /// A project file, with its stat (taken once per log).
    Project(FileStat),
}

/// A ninja deps log read, parsed, and with every path its unit records
/// name resolved, classified and stat'ed: all that needs no codemodel, done
/// by the reading thread while the codemodel loads. [`merge`] then maps it.
pub(crate) struct Prepared {
    /// The log's path, as the dependency list names it.
    pub(crate) path: String,
    /// The parsed log, or why it cannot be used.
    log: Result<DepsLog, DepsLogError>,
    /// Per path id: the path joined to the build root and folded (empty for
    /// a path no unit record names).
    abs: Vec<String>,
    /// Per path id: how it resolves as an input of a unit record.
    inputs: Vec<Option<Input>>,
    /// Per record of `log`: for a unit record (its output is an object file),
    /// `Some` of the object's mtime (`None`: it no longer exists); `None` for
    /// a custom command's record.
    objects: Vec<Option<Option<SystemTime>>>,
    /// Per record of `log`: `Some(n)` for a unit record whose every input is
    /// a system header or an inspectable project file not newer than the
    /// record. Its first `n` inputs were rewritten to its project files only,
    /// each once (first listed wins, paths compared after folding), as log
    /// path ids; the rest are its other inputs (system headers, repeats), for
    /// include directories outside the roots that alias into them.
    clean: Vec<Option<u32>>,
}

/// Whether `out` names what a compile rule writes (a unit's record, not a
/// custom command's): an object file, or a precompiled header, which CMake
/// compiles from `CMakeFiles/<t>.dir/cmake_pch.hxx.cxx` into `cmake_pch.hxx.gch`
/// (GCC) or `.pch` (Clang). Its record is the only evidence of the headers a
/// `target_precompile_headers` list names: the units that use it list the
/// precompiled header, not what it was built from.
fn is_object(out: &str) -> bool {
    [".o", ".obj", ".gch", ".pch"]
        .iter()
        .any(|ext| out.ends_with(ext))
}

/// Parses the deps log `bytes` (read from `path`) and resolves, classifies
/// and stats the paths its unit records name: relative paths against the
/// build root (ninja runs there), project files those within `roots`
/// (source, build), one `lstat` per distinct file through `dirs`.
pub(crate) fn prepare(
    path: &str,
    bytes: &[u8],
    (source_root, build_root): (&str, &str),
    dirs: &DirMemo,
    max_path: usize,
) -> Prepared {
    let mut p = Prepared {
        path: path.to_owned(),
        log: Ok(DepsLog::default()),
        abs: Vec::new(),
        inputs: Vec::new(),
        objects: Vec::new(),
        clean: Vec::new(),
    };
    let mut log = match ninja_deps::parse(bytes) {
        Ok(l) => l,
        Err(e) => {
            p.log = Err(e);
            return p;
        }
    };
    p.abs = vec![String::new(); log.paths.len()];
    p.inputs = std::iter::repeat_with(|| None)
        .take(log.paths.len())
        .collect();
    let resolve = |abs: &mut Vec<String>, id: u32| {
        let slot = &mut abs[id as usize];
        if slot.is_empty() {
            *slot = log.resolve(build_root, id);
        }
    };
    // Resolve and classify every path first, then stat the project files
    // and objects (stats on two threads at once contend in the kernel and
    // cost more than they save).
    let mut objects: Vec<Option<u32>> = Vec::with_capacity(log.records.len());
    let mut project: Vec<u32> = Vec::new();
    let mut classified = vec![false; log.paths.len()];
    for rec in &log.records {
        resolve(&mut p.abs, rec.output);
        if !is_object(&p.abs[rec.output as usize]) {
            objects.push(None);
            continue;
        }
        objects.push(Some(rec.output));
        for &inp in &rec.inputs {
            if std::mem::replace(&mut classified[inp as usize], true) {
                continue;
            }
            resolve(&mut p.abs, inp);
            let a = &p.abs[inp as usize];
            if a.len() > max_path {
                p.inputs[inp as usize] = Some(Input::TooLong);
            } else if !paths::is_within(a, source_root) && !paths::is_within(a, build_root) {
                p.inputs[inp as usize] = Some(Input::System);
            } else {
                project.push(inp);
            }
        }
    }
    for id in project {
        p.inputs[id as usize] = Some(Input::Project(stat_file(&p.abs[id as usize], dirs)));
    }
    p.objects = objects
        .into_iter()
        .map(|o| {
            o.map(|id| {
                std::fs::metadata(&p.abs[id as usize])
                    .ok()
                    .and_then(|m| m.modified().ok())
            })
        })
        .collect();
    // The common case, done here rather than after the codemodel loads:
    // a clean record's inputs become its project files, each once.
    let mut canon: Vec<u32> = (0..log.paths.len() as u32).collect();
    let mut first: FastMap<&str, u32> = FastMap::default();
    for (id, input) in p.inputs.iter().enumerate() {
        if let Some(Input::Project(_)) = input {
            canon[id] = *first.entry(p.abs[id].as_str()).or_insert(id as u32);
        }
    }
    let mut seen = vec![0u32; log.paths.len()];
    let mut stamp = 0u32;
    p.clean = Vec::with_capacity(log.records.len());
    for (rec, object) in log.records.iter_mut().zip(&p.objects) {
        let rec_time = SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(rec.mtime_ns);
        // The main source (listed first) too: a record whose first input is
        // not a project file keeps it, for the mapping's message.
        let first_is_project = matches!(
            rec.inputs.first().map(|&i| &p.inputs[i as usize]),
            None | Some(Some(Input::Project(_)))
        );
        let clean = object.is_some()
            && first_is_project
            && rec.inputs.iter().all(|&i| match &p.inputs[i as usize] {
                Some(Input::System) => true,
                Some(Input::Project(st)) => st.mtime.is_some_and(|m| m <= rec_time),
                Some(Input::TooLong) | None => false,
            });
        if !clean {
            p.clean.push(None);
            continue;
        }
        stamp += 1;
        let mut kept = 0;
        for at in 0..rec.inputs.len() {
            let i = rec.inputs[at] as usize;
            if let Some(Input::Project(_)) = p.inputs[i] {
                let c = canon[i];
                if seen[c as usize] != stamp {
                    seen[c as usize] = stamp;
                    // `kept..at` holds inputs not kept: one moves to `at`.
                    rec.inputs.swap(kept, at);
                    rec.inputs[kept] = c;
                    kept += 1;
                }
            }
        }
        p.clean.push(Some(kept as u32));
    }
    p.log = Ok(log);
    p
}

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
/// Returns each unit record kept, as (target, output path as ninja spells
/// it), for the command audit (`ninja_log::audit_commands`).
pub(crate) fn merge(
    ev: &mut DepEvidence,
    gaps: &mut Vec<Gap>,
    model: &Codemodel,
    sources: &SourceIndex<'_>,
    prepared: Prepared,
    max_path: usize,
) -> Vec<(usize, String)> {
    let (path, log, abs, inputs) = (prepared.path, prepared.log, prepared.abs, prepared.inputs);
    let path = path.as_str();
    let mut log = match log {
        Ok(l) => l,
        Err(e) => {
            gaps.push(Gap::new(Code::DepsLogMalformed, format!("{path}: {e}")));
            return Vec::new();
        }
    };
    let build = &model.build_root;
    // Include directories outside the roots that alias into them (rare):
    // their inputs join the unit under the inside spelling, as for depfiles.
    let aliases = alias::outside_aliases(model);
    let mut outside: Vec<&str> = Vec::new();
    let mut by_unit: FastMap<(usize, usize), usize> = (ev.tus.iter().enumerate())
        .map(|(i, tu)| ((tu.target, tu.source_index), i))
        .collect();
    let shown = paths::relative_to(path, build);
    let mut new_tus = Vec::new();
    // Per file id: the record (stamp) that last listed it, to list it once.
    let mut seen: Vec<u32> = Vec::new();
    let mut stamp: u32 = 0;
    // Per log path id: its evidence id, given on first use.
    let mut files = LogFiles {
        abs: &abs,
        inputs: &inputs,
        ids: vec![FileId::MAX; log.paths.len()],
    };
    // Each record's input list becomes its unit's prerequisite list, in place.
    let records = std::mem::take(&mut log.records);
    let mut newer = NewerPrereqs::default();
    // Each unit record kept: its target and its output, as ninja spells it.
    let mut built = Vec::new();
    let (objects, clean) = (&prepared.objects, prepared.clean);
    for ((mut rec, object), clean) in records.into_iter().zip(objects).zip(clean) {
        let Some(object) = object else {
            continue; // a custom command's depfile record, not a unit
        };
        let out_rel = &log.paths[rec.output as usize];
        let out = &abs[rec.output as usize];
        let Ok(target) = model.object_owner(out) else {
            continue; // an object of no target of this codemodel (another project)
        };
        let t = &model.targets[target];
        if !of_the_config(model, target, out) {
            continue; // another configuration's object
        }
        let Some(obj_time) = *object else {
            continue; // dead record: the output no longer exists
        };
        let rec_time = SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(rec.mtime_ns);
        // Ninja's own rule: an object newer than its record is rebuilt.
        gaps.extend((obj_time > rec_time).then(|| {
            let why = "is older than its object (ninja would rebuild it)";
            Gap::new(
                Code::DepEvidenceStale,
                format!("{shown} record {out_rel} {why}"),
            )
        }));
        let source_index = match unit_source(
            model,
            sources,
            (target, out),
            &rec.inputs,
            &abs,
            (&shown, out_rel),
        ) {
            Ok(i) => i,
            Err(g) => {
                gaps.push(g);
                continue;
            }
        };
        let source = &abs[rec.inputs[0] as usize];
        let aliased = !aliases.is_empty() && alias::uses_alias(&aliases, &t.includes);
        outside.clear();
        let lists_outside;
        if let Some(kept) = clean {
            lists_outside = keep_clean(
                ev,
                &mut files,
                &mut rec.inputs,
                kept as usize,
                aliased,
                &mut outside,
            );
        } else {
            stamp += 1;
            lists_outside = keep_unclean(
                ev,
                &mut files,
                &mut rec.inputs,
                Record {
                    shown: &shown,
                    out_rel,
                    time: rec_time,
                    aliased,
                },
                (&mut seen, stamp),
                &mut newer,
                &mut outside,
                (max_path, gaps),
            );
        }
        let mut prereqs = rec.inputs;
        let depfile = format!("{path} record {out_rel}");
        if !outside.is_empty() {
            let at = format!("{shown} record {out_rel}");
            let (found, time) = (outside.iter().copied(), Some(rec_time));
            alias::join_aliased(ev, &mut prereqs, &aliases, found, time, &at, gaps);
        }
        built.push((target, out_rel.clone()));
        let (source, from_log) = (source.clone(), true);
        let unit = Tu {
            target,
            source,
            source_index,
            depfile,
            from_log,
            lists_outside,
            prereqs,
        };
        join_unit(
            ev,
            &mut by_unit,
            &mut new_tus,
            unit,
            (&shown, &t.name),
            gaps,
        );
    }
    finish_units(ev, model, new_tus, newer, gaps);
    // The log's path table and the resolved paths: tens of thousands of strings.
    drop_in_background((log, abs, inputs));
    built
}

/// A log's paths as `prepare` resolved and classified them, and the
/// evidence id each got on first use.
struct LogFiles<'a> {
    abs: &'a [String],
    inputs: &'a [Option<Input>],
    ids: Vec<FileId>,
}

impl LogFiles<'_> {
    /// The evidence id of log path `inp` (a project file, `st`), added on first use.
    fn add(&mut self, ev: &mut DepEvidence, inp: u32, st: &FileStat) -> FileId {
        match self.ids[inp as usize] {
            FileId::MAX => {
                let id = ev.add_file(&self.abs[inp as usize], st.size);
                if let Some(real) = &st.real {
                    let v = ev.aliases.entry(real.clone()).or_default();
                    if !v.contains(&id) {
                        v.push(id);
                    }
                }
                self.ids[inp as usize] = id;
                id
            }
            id => id,
        }
    }
}

/// The deps log record being merged.
struct Record<'r> {
    /// The log, as messages name it.
    shown: &'r str,
    /// Its output, as ninja spells it.
    out_rel: &'r str,
    /// When ninja recorded it.
    time: SystemTime,
    /// Its target includes a directory that aliases into the roots.
    aliased: bool,
}

/// After the last record: the newer-prerequisite gaps, the new units in
/// depfile order, the generated headers.
fn finish_units(
    ev: &mut DepEvidence,
    model: &Codemodel,
    new_tus: Vec<Tu>,
    newer: NewerPrereqs,
    gaps: &mut Vec<Gap>,
) {
    newer.into_gaps(&ev.files, "record", None, gaps);
    if !new_tus.is_empty() {
        ev.tus.extend(new_tus);
        ev.tus.sort_by(|a, b| a.depfile.cmp(&b.depfile));
    }
    mark_generated_includes(ev, model);
}

/// Whether object `out` of `target` belongs to the selected configuration
/// (a multi-config generator puts each configuration's objects in
/// `<Config>/` below the object directory).
fn of_the_config(model: &Codemodel, target: usize, out: &str) -> bool {
    if !model.multi_config {
        return true;
    }
    let objdir = model.targets[target].object_dir();
    let rest = paths::strip_root(out, &objdir).unwrap_or("");
    matches!(rest.split_once('/'), Some((cfg, _)) if cfg == model.config)
}

/// [`record_source`], or the `DEP_FILE_UNMAPPED` gap of a record of log
/// `shown` with output `out_rel` that lists no inputs or no compiled source
/// of its target.
fn unit_source(
    model: &Codemodel,
    sources: &SourceIndex<'_>,
    (target, out): (usize, &str),
    rec_inputs: &[u32],
    abs: &[String],
    (shown, out_rel): (&str, &str),
) -> Result<usize, Gap> {
    let Some(&first) = rec_inputs.first() else {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!("{shown} record {out_rel} lists no inputs"),
        ));
    };
    let source = &abs[first as usize];
    record_source(model, sources, target, out, rec_inputs, abs).ok_or_else(|| {
        Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{shown} record {out_rel}: first input {source} is not a compiled source of target {:?}{}",
                model.targets[target].name,
                leftover_hint(
                    source,
                    "remove its object (`ninja -t cleandead` removes every output the build no longer declares), or build afresh"
                )
            ),
        )
    })
}

/// The compiled source (its index in the target's sources) a unit record
/// of `target` describes: its first input, or (Clang lists a precompiled
/// header's inputs first) the later input the object's path names.
fn record_source(
    model: &Codemodel,
    sources: &SourceIndex<'_>,
    target: usize,
    out: &str,
    rec_inputs: &[u32],
    abs: &[String],
) -> Option<usize> {
    let source = &abs[*rec_inputs.first()? as usize];
    sources.get(target, source).or_else(|| {
        let objdir = model.targets[target].object_dir();
        let mut below = paths::strip_root(out, &objdir)?;
        if model.multi_config {
            below = below.split_once('/')?.1;
        }
        let stem = stem_below_object_dir(below)?;
        main_by_stem(
            rec_inputs[1..]
                .iter()
                .map(|&i| abs[i as usize].as_str())
                .filter(|p| ends_with_path(p, stem)),
            |p| sources.get(target, p),
        )
    })
}

/// A record `prepare` vouched for: its first `kept` inputs are its project
/// files, each once, all fresh; they become evidence ids in place and the
/// rest (system headers and repeats) is dropped, the system headers going to
/// `outside` when the target aliases. Returns whether it lists a file
/// outside the roots.
fn keep_clean<'a>(
    ev: &mut DepEvidence,
    files: &mut LogFiles<'a>,
    rec_inputs: &mut Vec<u32>,
    kept: usize,
    aliased: bool,
    outside: &mut Vec<&'a str>,
) -> bool {
    let (inputs, abs) = (files.inputs, files.abs);
    let mut system = rec_inputs[kept..]
        .iter()
        .filter(|&&i| matches!(inputs[i as usize], Some(Input::System)))
        .map(|&i| abs[i as usize].as_str());
    let lists_outside = if aliased {
        outside.extend(system);
        !outside.is_empty()
    } else {
        system.next().is_some()
    };
    rec_inputs.truncate(kept);
    for slot in rec_inputs.iter_mut() {
        if let Some(Input::Project(st)) = &inputs[*slot as usize] {
            *slot = files.add(ev, *slot, st);
        }
    }
    lists_outside
}

/// A record `prepare` could not vouch for: each input is checked (path
/// length, freshness against the record, inspectable), its project files
/// become evidence ids, each once (`seen` holds `stamp` for those kept), in
/// `rec_inputs` itself. System headers go to `outside` when the target
/// aliases. Returns whether it lists a file outside the roots.
#[allow(clippy::too_many_arguments)]
fn keep_unclean<'a>(
    ev: &mut DepEvidence,
    files: &mut LogFiles<'a>,
    rec_inputs: &mut Vec<u32>,
    r: Record<'_>,
    (seen, stamp): (&mut Vec<u32>, u32),
    newer: &mut NewerPrereqs,
    outside: &mut Vec<&'a str>,
    (max_path, gaps): (usize, &mut Vec<Gap>),
) -> bool {
    let inputs = files.inputs;
    let mut lists_outside = false;
    let mut kept = 0;
    for at in 0..rec_inputs.len() {
        let inp = rec_inputs[at];
        let st = match &inputs[inp as usize] {
            Some(Input::Project(st)) => st,
            Some(Input::TooLong) => {
                gaps.push(Gap::new(
                    Code::LimitExceeded,
                    format!(
                        "{} record {}: a path exceeds {max_path} bytes (--max-path-len)",
                        r.shown, r.out_rel
                    ),
                ));
                break;
            }
            Some(Input::System) => {
                lists_outside = true;
                if r.aliased {
                    outside.push(&files.abs[inp as usize]);
                }
                continue;
            }
            // Every input of a unit record was classified by `prepare`.
            None => continue,
        };
        let id = files.add(ev, inp, st);
        match st.mtime {
            Some(m) if m > r.time => {
                newer.note(id, &format!("{} record {}", r.shown, r.out_rel), Some(m))
            }
            Some(_) => {}
            None => gaps.push(Gap::new(
                Code::DepPrereqUninspectable,
                format!(
                    "{} (listed in {} record {}) cannot be inspected",
                    ev.files[id as usize], r.shown, r.out_rel
                ),
            )),
        }
        let slot = id as usize;
        if seen.len() <= slot {
            seen.resize(slot + 1, 0);
        }
        if seen[slot] != stamp {
            seen[slot] = stamp;
            // `kept <= at`: the slot was read already.
            rec_inputs[kept] = id;
            kept += 1;
        }
    }
    rec_inputs.truncate(kept);
    lists_outside
}

/// Generated headers a log record lists make their unit's target opaque, as
/// for depfiles.
fn mark_generated_includes(ev: &mut DepEvidence, model: &Codemodel) {
    let mut generated = vec![false; ev.files.len()];
    for g in &model.generated_files {
        if let Some(id) = ev.id_of(g) {
            generated[id as usize] = true;
        }
    }
    let any_generated = generated.contains(&true);
    for tu in ev.tus.iter().filter(|_| any_generated) {
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

/// Adds a deps log record's `unit` to the evidence: a new unit, or joined
/// with a leftover `.d` of the same unit (`-d keepdepfile`); a second record
/// of one unit is a duplicate. `by_unit` maps each unit seen to its index in
/// `ev.tus` (`usize::MAX`: one of `new_tus`).
fn join_unit(
    ev: &mut DepEvidence,
    by_unit: &mut FastMap<(usize, usize), usize>,
    new_tus: &mut Vec<Tu>,
    unit: Tu,
    (shown, target_name): (&str, &str),
    gaps: &mut Vec<Gap>,
) {
    match by_unit.get(&(unit.target, unit.source_index)) {
        Some(&usize::MAX) => gaps.push(Gap::new(
            Code::DepFileDuplicate,
            format!(
                "{shown}: two records describe {} in target {target_name:?}",
                unit.source
            ),
        )),
        Some(&i) => {
            // A leftover .d for the same unit (-d keepdepfile): join them.
            for id in unit.prereqs {
                if !ev.tus[i].prereqs.contains(&id) {
                    ev.tus[i].prereqs.push(id);
                }
            }
            ev.tus[i].lists_outside |= unit.lists_outside;
        }
        None => {
            by_unit.insert((unit.target, unit.source_index), usize::MAX);
            new_tus.push(unit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::ninja_deps::write;

    /// A build tree on disk: `s/a.h`, `s/b.h`, `s/main.cpp` and the object
    /// `b/CMakeFiles/t.dir/main.cpp.o`, with every file's mtime at `at` seconds.
    fn tree(at: i64) -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().to_str().expect("utf-8 temp dir").to_owned();
        let (src, build) = (format!("{root}/s"), format!("{root}/b"));
        std::fs::create_dir_all(format!("{build}/CMakeFiles/t.dir")).expect("mkdir");
        std::fs::create_dir_all(&src).expect("mkdir");
        for f in [
            format!("{src}/a.h"),
            format!("{src}/b.h"),
            format!("{src}/main.cpp"),
            format!("{build}/CMakeFiles/t.dir/main.cpp.o"),
        ] {
            std::fs::write(&f, "x").expect("write");
            filetime::set_file_mtime(&f, filetime::FileTime::from_unix_time(at, 0)).expect("mtime");
        }
        (dir, src, build)
    }

    fn prepared(src: &str, build: &str, rec_secs: u64, inputs: &[&str]) -> Prepared {
        let bytes = write(&[(
            "CMakeFiles/t.dir/main.cpp.o",
            rec_secs * 1_000_000_000,
            inputs,
        )]);
        prepare("deps", &bytes, (src, build), &DirMemo::default(), 4096)
    }

    #[test]
    fn a_clean_record_keeps_its_project_files_once_whatever_their_spelling() {
        let (_dir, src, build) = tree(1_000);
        let a_again = format!("{build}/../s/./a.h");
        let main = format!("{src}/main.cpp");
        let a = format!("{src}/a.h");
        let b = format!("{src}/b.h");
        let inputs = [
            main.as_str(),
            "/usr/include/stdio.h",
            a.as_str(),
            a_again.as_str(),
            b.as_str(),
            a.as_str(),
        ];
        let p = prepared(&src, &build, 2_000, &inputs);
        assert_eq!(p.clean, vec![Some(3)]);
        let log = p.log.as_ref().expect("parsed");
        let kept: Vec<&str> = log.records[0].inputs[..3]
            .iter()
            .map(|&i| p.abs[i as usize].as_str())
            .collect();
        assert_eq!(kept, [main.as_str(), a.as_str(), b.as_str()]);
        // The others stay behind them, for aliased include directories.
        let mut rest: Vec<&str> = log.records[0].inputs[3..]
            .iter()
            .map(|&i| p.abs[i as usize].as_str())
            .collect();
        rest.sort_unstable();
        let mut want = ["/usr/include/stdio.h", a.as_str(), a.as_str()];
        want.sort_unstable();
        assert_eq!(rest, want);
        assert!(matches!(p.objects[0], Some(Some(_))), "the object exists");
    }

    #[test]
    fn a_record_with_a_newer_or_missing_input_is_left_to_the_full_audit() {
        let (_dir, src, build) = tree(3_000);
        let main = format!("{src}/main.cpp");
        let a = format!("{src}/a.h");
        // Every input newer than the record (at 2,000 s): not clean, inputs untouched.
        let p = prepared(
            &src,
            &build,
            2_000,
            &[main.as_str(), a.as_str(), a.as_str()],
        );
        assert_eq!(p.clean, vec![None]);
        assert_eq!(p.log.as_ref().expect("parsed").records[0].inputs.len(), 3);
        // A project file that does not exist has no timestamp: not clean either.
        let gone = format!("{src}/gone.h");
        let p = prepared(&src, &build, 4_000, &[main.as_str(), gone.as_str()]);
        assert_eq!(p.clean, vec![None]);
        // A first input that is not a project file stays, for the mapping's message.
        let p = prepared(
            &src,
            &build,
            4_000,
            &["/usr/include/stdio.h", main.as_str()],
        );
        assert_eq!(p.clean, vec![None]);
        // A custom command's record (no object) is never a unit's.
        let bytes = write(&[("gen.stamp", 4_000_000_000_000, &[main.as_str()])]);
        let p = prepare("deps", &bytes, (&src, &build), &DirMemo::default(), 4096);
        assert_eq!(p.clean, vec![None]);
        assert_eq!(p.objects, vec![None]);
    }
}
