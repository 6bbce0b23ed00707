//! Custom commands as evidence: what each `add_custom_command` /
//! `add_custom_target` step of the build reads, runs and writes, from the
//! generator's own record of it (Ninja: the `CUSTOM_COMMAND` edges of
//! `build.ninja`; Makefiles: each target's `build.make`, `DependInfo.cmake`
//! and `cmake_clean.cmake`), and the depfiles those commands wrote.
//!
//! A command's *inputs* are the files and directories it declares
//! (`DEPENDS`), the files its depfile lists, every source-tree path its
//! command line names (a directory: everything below it), the directory of
//! every source-tree script it runs, and every project file whose name the
//! bytes of the programs it runs hold (a program, its libraries, a script).
//! Its *programs* are the targets whose artifacts it runs or names. Its
//! *outputs* are its `OUTPUT`s and `BYPRODUCTS`.
//!
//! A command's evidence is *complete* when all of that could be read and
//! every build-tree path it names or declares is explained: an artifact, an
//! output of another command of the evidence, a file configure wrote, a
//! file of CMake's own bookkeeping, or one of its own outputs and depfile.
//! An output is *vouched* when every command that may write it is complete:
//! a unit that includes it, or compiles it, then depends on the targets
//! those commands belong to (not opaque), and a change to an input affects
//! those targets. Anything else stays opaque (`GENERATED_SOURCE`).

use std::collections::BTreeSet;

use super::depfile::DepEvidence;
use super::file_api::Codemodel;
use super::{depfile_syntax, ninja_manifest, Reader};
use crate::fasthash::{FastMap, FastSet};
use crate::paths;

/// One custom command and what it reads.
#[derive(Clone, Debug, Default)]
pub struct Command {
    /// The targets it belongs to (whose build it is part of).
    pub owners: Vec<usize>,
    /// Its outputs and byproducts (absolute, folded).
    pub outputs: Vec<String>,
    /// Source-tree files it reads.
    pub files: BTreeSet<String>,
    /// Source-tree directories it may read anything below.
    pub dirs: BTreeSet<String>,
    /// Build-tree files it reads that other commands write.
    pub after: BTreeSet<String>,
    /// Targets whose artifact it runs or names.
    pub programs: BTreeSet<usize>,
    /// The targets of `programs` it runs (not only names or depends on):
    /// what their bytes name, it may read.
    pub ran: BTreeSet<usize>,
    /// The source-tree scripts it runs (their bytes are read as a program's).
    pub scripts: BTreeSet<String>,
    /// Why its evidence is not complete, if it is not.
    pub incomplete: Option<String>,
    /// Where the generator recorded it (for chains).
    pub evidence: String,
}

/// Every custom command of the build.
#[derive(Debug, Default)]
pub struct Custom {
    /// The commands, in the generator's order.
    pub commands: Vec<Command>,
    /// Output → the commands that may write it.
    pub by_output: FastMap<String, Vec<usize>>,
    /// The depfiles custom commands wrote (not compilers' unit evidence).
    pub depfiles: FastSet<String>,
    /// Why the generator's record could not be read at all (every generated
    /// file then stays opaque).
    pub unreadable: Option<Unreadable>,
}

/// A file of the generator's record, or a program a command runs, that
/// cannot be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{path}{what}: {cause}")]
pub struct Unreadable {
    path: String,
    /// What the file was read for, in words (" cannot be read for byproducts").
    what: &'static str,
    cause: String,
}

impl Unreadable {
    fn new(path: &str, what: &'static str, cause: impl std::fmt::Display) -> Self {
        Unreadable {
            path: path.to_owned(),
            what,
            cause: cause.to_string(),
        }
    }
}

/// Why an output is not vouched for ([`Custom::vouched`]).
#[derive(Debug, thiserror::Error)]
pub enum NotVouched<'a> {
    /// The generator's record could not be read.
    #[error("{0}")]
    Unreadable(&'a Unreadable),
    /// No command of the evidence writes the output.
    #[error("no custom command of the evidence writes it")]
    Unwritten,
    /// A command that may write it is incomplete, and why.
    #[error("{0}")]
    Incomplete(&'a str),
}

impl Custom {
    /// The commands that may write `path`, when every one of them is
    /// complete (and there is one); otherwise why not.
    pub fn vouched(&self, path: &str) -> Result<&[usize], NotVouched<'_>> {
        if let Some(why) = &self.unreadable {
            return Err(NotVouched::Unreadable(why));
        }
        let Some(cs) = self.by_output.get(path) else {
            return Err(NotVouched::Unwritten);
        };
        for &c in cs {
            if let Some(why) = &self.commands[c].incomplete {
                return Err(NotVouched::Incomplete(why));
            }
        }
        Ok(cs)
    }

    /// Whether `gap` is a dependency-list entry that failed to map to a
    /// unit because it is the depfile of a custom command.
    pub fn lists_depfile_of(&self, gap: &crate::reason::Gap) -> bool {
        gap.code == crate::reason::Code::DepFileUnmapped
            && (gap.detail.split_once(' ')).is_some_and(|(path, _)| self.depfiles.contains(path))
    }

    /// The targets whose commands read `path` (a source-tree file, absolute,
    /// folded), each with the command's evidence in words. Sorted by target.
    pub fn readers_of(&self, path: &str, model: &Codemodel) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for c in &self.commands {
            let how = if c.files.contains(path) {
                "reads it"
            } else if c.dirs.iter().any(|d| paths::is_within(path, d)) {
                "may read it (it names a directory holding it)"
            } else {
                continue;
            };
            let what = c
                .outputs
                .first()
                .map(|o| paths::relative_to(o, &model.build_root))
                .unwrap_or_default();
            let file = paths::relative_to(&c.evidence, &model.build_root);
            for &t in &c.owners {
                out.push((
                    t,
                    format!("custom command writing {what} ({file}), which {how}"),
                ));
            }
        }
        out.sort();
        out.dedup_by_key(|(t, _)| *t);
        out
    }
}

/// Qt's autogen steps (AUTOMOC, AUTOUIC, AUTORCC), whose evidence
/// `autogen.rs` reads and joins from autogen's own files.
fn is_autogen(command: &str) -> bool {
    command.contains("cmake_autogen") || command.contains("cmake_autorcc")
}

/// Programs that run a script given as an argument.
pub fn is_interpreter(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "python"
            | "pypy"
            | "perl"
            | "sh"
            | "bash"
            | "dash"
            | "zsh"
            | "ruby"
            | "node"
            | "tclsh"
            | "lua"
            | "cmake"
            | "env"
    ) || program == "$(CMAKE_COMMAND)"
}

/// Reads every custom command of the build.
pub fn read(reader: &Reader, model: &Codemodel, deps: &DepEvidence) -> Custom {
    resolve(reader, model, deps, parse(reader, model, None))
}

/// The generator's record of the custom commands, as written (no path
/// resolved yet): needs only the codemodel, so it is read while the
/// dependency evidence is.
pub struct Recorded(Result<Vec<RawCommand>, Unreadable>);

/// Reads the generator's record of the custom commands ([`Recorded`]). On
/// Ninja, `walked` is the manifest's `CUSTOM_COMMAND` edges when the command
/// audit's walk of it already gave them (`ninja_log::read_commands`); the
/// manifest is walked here only when it did not.
pub fn parse(
    reader: &Reader,
    model: &Codemodel,
    walked: Option<&[ninja_manifest::OwnedEdge]>,
) -> Recorded {
    // No generated source and no stamp: no custom command at all.
    if model.targets.iter().all(|t| t.generated.is_empty()) {
        return Recorded(Ok(Vec::new()));
    }
    Recorded(if model.is_ninja() {
        ninja_commands(reader, model, walked)
    } else {
        makefiles_commands(reader, model)
    })
}

/// Resolves what each recorded command reads, runs and writes against the
/// dependency evidence.
pub fn resolve(reader: &Reader, model: &Codemodel, deps: &DepEvidence, raw: Recorded) -> Custom {
    let mut raw = raw.0;
    let mut custom = Custom::default();
    match &mut raw {
        Err(why) => {
            custom.unreadable = Some(why.clone());
            return custom;
        }
        Ok(list) => {
            for (i, r) in list.iter().enumerate() {
                for o in &r.outputs {
                    custom.by_output.entry(o.clone()).or_default().push(i);
                }
                custom.depfiles.extend(r.depfile.iter().cloned());
                custom.depfiles.extend(r.raw_depfiles.iter().cloned());
            }
        }
    }
    let list = raw.unwrap_or_default();
    let ctx = Context::new(model, deps, &custom.by_output, &list);
    custom.commands = list.iter().map(|r| ctx.resolve(reader, r)).collect();
    custom
}

/// A command as the generator recorded it, before its paths are resolved.
#[derive(Debug, Default)]
pub struct RawCommand {
    owners: Vec<usize>,
    outputs: Vec<String>,
    /// Declared inputs (absolute).
    inputs: Vec<String>,
    /// The shell command line(s).
    command: String,
    /// The directory it starts in.
    cwd: String,
    depfile: Option<String>,
    evidence: String,
    /// Target names it depends on (Ninja order-only aliases).
    target_names: Vec<String>,
    /// The depfiles the command writes before CMake rewrites them
    /// (`cmake -E cmake_transform_depfile ... RAW OUT`).
    raw_depfiles: Vec<String>,
}

/// The targets each custom output belongs to: sources the codemodel lists
/// as generated, and each utility target's own `CMakeFiles/<name>` stamp.
fn owners_by_output(model: &Codemodel) -> FastMap<String, Vec<usize>> {
    let mut by: FastMap<String, Vec<usize>> = FastMap::default();
    for (i, t) in model.targets.iter().enumerate() {
        for g in &t.generated {
            by.entry(g.clone()).or_default().push(i);
        }
        let dir = t.object_dir();
        if let Some(stamp) = dir.strip_suffix(".dir") {
            by.entry(stamp.to_owned()).or_default().push(i);
        }
    }
    by
}

fn ninja_commands(
    reader: &Reader,
    model: &Codemodel,
    walked: Option<&[ninja_manifest::OwnedEdge]>,
) -> Result<Vec<RawCommand>, Unreadable> {
    let build = model.build_root.as_str();
    let file = if model.multi_config {
        format!("build-{}.ninja", model.config)
    } else {
        "build.ninja".to_owned()
    };
    let owners_of = owners_by_output(model);
    let names: FastSet<&str> = model.targets.iter().map(|t| t.name.as_str()).collect();
    let mut out = Vec::new();
    let mut each = |e: &ninja_manifest::Edge<'_>| {
        if e.rule != ninja_manifest::CUSTOM_COMMAND || is_autogen(e.command) {
            return;
        }
        // CMake's own utility commands (`rebuild_cache`, `edit_cache`,
        // `install`, `test`, …: outputs `CMakeFiles/<name>.util`) build
        // nothing a test runs; `rebuild_cache` names the source root.
        if !e.outs.is_empty() && e.outs.iter().all(|o| o.ends_with(".util")) {
            return;
        }
        let abs = |p: &str| paths::join_fold(build, p);
        let mut outputs: Vec<String> = e.outs.iter().map(|o| abs(o)).collect();
        outputs.sort();
        outputs.dedup();
        let mut owners: Vec<usize> = (outputs.iter())
            .flat_map(|o| owners_of.get(o).into_iter().flatten().copied())
            .collect();
        owners.sort_unstable();
        owners.dedup();
        let (mut inputs, mut target_names) = (Vec::new(), Vec::new());
        for i in e.ins {
            if !i.contains('/') && names.contains(i.as_str()) {
                target_names.push(i.clone());
            } else if let Some(t) = i.strip_prefix("cmake_object_order_depends_target_") {
                target_names.push(t.to_owned());
            } else {
                inputs.push(abs(i));
            }
        }
        out.push(RawCommand {
            owners,
            outputs,
            inputs,
            command: e.command.to_owned(),
            cwd: build.to_owned(),
            depfile: e.depfile.map(abs),
            evidence: format!("{build}/{file}"),
            target_names,
            raw_depfiles: transformed_depfiles(e.command, build),
        });
    };
    match walked {
        Some(edges) => edges.iter().for_each(|e| each(&e.edge())),
        None => {
            ninja_manifest::for_each_edge(reader, build, &file, each)
                .map_err(|e| Unreadable::new(&format!("{build}/{file}"), FOR_COMMANDS, e))?;
        }
    }
    Ok(out)
}

/// Each target's `build.make`: the rules that build its custom outputs.
const FOR_COMMANDS: &str = " cannot be read for its custom commands";

fn makefiles_commands(reader: &Reader, model: &Codemodel) -> Result<Vec<RawCommand>, Unreadable> {
    let build = model.build_root.as_str();
    let mut out = Vec::new();
    // Only a target that lists a generated source or a stamp has custom commands.
    for (ti, t) in model
        .targets
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.generated.is_empty())
    {
        let dir = t.object_dir();
        let path = format!("{dir}/build.make");
        if std::fs::metadata(&path).is_err() {
            continue;
        }
        let bytes = reader
            .read(&path)
            .map_err(|e| Unreadable::new(&path, FOR_COMMANDS, e))?;
        let text = String::from_utf8_lossy(&bytes);
        let wanted: FastSet<String> = t
            .generated
            .iter()
            .cloned()
            .chain(dir.strip_suffix(".dir").map(str::to_owned))
            .collect();
        let depfiles = dependinfo_depfiles(reader, &dir, build, &t.dir_build)?;
        let rules = make_rules(&text);
        let mut mine: Vec<RawCommand> = Vec::new();
        for r in &rules {
            let target = paths::join_fold(build, &r.target);
            if !wanted.contains(&target) {
                continue;
            }
            // A second output of one command: `out2: out1` touched after it.
            if r.recipe.iter().all(|l| l.contains("touch_nocreate")) && r.prereqs.len() == 1 {
                let first = paths::join_fold(build, &r.prereqs[0]);
                if let Some(c) = mine.iter_mut().find(|c| c.outputs.contains(&first)) {
                    c.outputs.push(target);
                    continue;
                }
            }
            if r.recipe.iter().any(|l| is_autogen(l)) {
                continue;
            }
            let command = (r.recipe.iter())
                .filter(|l| !l.contains("cmake_echo_color"))
                .map(|l| l.trim_start_matches('@'))
                .collect::<Vec<_>>()
                .join(" && ");
            let inputs = (r.prereqs.iter())
                .map(|p| paths::join_fold(build, p))
                .collect();
            mine.push(RawCommand {
                owners: vec![ti],
                depfile: depfiles.get(&target).cloned(),
                outputs: vec![target],
                inputs,
                command: expand_make_vars(&command, &text),
                cwd: build.to_owned(),
                evidence: path.clone(),
                target_names: Vec::new(),
                raw_depfiles: Vec::new(),
            });
        }
        // Byproducts: what `make clean` removes that no rule builds.
        let clean = format!("{dir}/cmake_clean.cmake");
        if !mine.is_empty() && std::fs::metadata(&clean).is_ok() {
            let bytes = reader
                .read(&clean)
                .map_err(|e| Unreadable::new(&clean, " cannot be read for byproducts", e))?;
            let text = String::from_utf8_lossy(&bytes);
            let known: FastSet<String> = mine.iter().flat_map(|c| c.outputs.clone()).collect();
            let mut extra = Vec::new();
            for q in quoted(&text) {
                let abs = paths::join_fold(&t.dir_build, q);
                if !known.contains(&abs) && !is_bookkeeping(&abs, &dir, t) {
                    extra.push(abs);
                }
            }
            for c in &mut mine {
                c.outputs.extend(extra.iter().cloned());
            }
        }
        out.extend(mine);
    }
    Ok(out)
}

/// The raw depfile of each `cmake_transform_depfile` step of `command`.
fn transformed_depfiles(command: &str, build: &str) -> Vec<String> {
    let words = shell_words(command);
    let mut out = Vec::new();
    for seg in words.split(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|")) {
        if seg.iter().any(|w| w == "cmake_transform_depfile") && seg.len() >= 2 {
            out.push(paths::join_fold(build, &seg[seg.len() - 2]));
        }
    }
    out
}

/// Files `make clean` removes that are not what a custom command wrote: the
/// target's objects, depfiles, artifacts and CMake's own files.
fn is_bookkeeping(abs: &str, object_dir: &str, t: &super::file_api::Target) -> bool {
    paths::is_within(abs, object_dir)
        || t.artifacts.iter().any(|a| a == abs)
        || abs.ends_with(".pdb")
        || abs.ends_with(".manifest")
        || t.artifacts.iter().any(|a| {
            // Versioned library symlinks and import libraries beside the artifact.
            let (ad, an) = a.rsplit_once('/').unwrap_or(("", a));
            let (d, n) = abs.rsplit_once('/').unwrap_or(("", abs));
            ad == d && (n.starts_with(an) || an.starts_with(n))
        })
}

/// The strings between double quotes.
fn quoted(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).collect()
}

/// `DependInfo.cmake`'s `CMAKE_DEPENDS_DEPENDENCY_FILES` entries of kind
/// `custom`: output → the depfile its command writes.
fn dependinfo_depfiles(
    reader: &Reader,
    object_dir: &str,
    build: &str,
    dir_build: &str,
) -> Result<FastMap<String, String>, Unreadable> {
    let path = format!("{object_dir}/DependInfo.cmake");
    let mut out = FastMap::default();
    if std::fs::metadata(&path).is_err() {
        return Ok(out);
    }
    let bytes = reader
        .read(&path)
        .map_err(|e| Unreadable::new(&path, " cannot be read for custom depfiles", e))?;
    let text = String::from_utf8_lossy(&bytes);
    let Some(start) = text.find("CMAKE_DEPENDS_DEPENDENCY_FILES") else {
        return Ok(out);
    };
    let body = &text[start..];
    let body = &body[..body.find(')').unwrap_or(body.len())];
    let q = quoted(body);
    for entry in q.chunks(4) {
        if let [_, output, "custom", depfile] = entry {
            // Relative to the directory's build directory (CMake writes the
            // top one's as relative to the build root, which is the same).
            let d = paths::join_fold(dir_build, depfile);
            let d = if std::fs::metadata(&d).is_ok() {
                d
            } else {
                paths::join_fold(build, depfile)
            };
            let o = paths::join_fold(build, output);
            out.insert(o, d);
        }
    }
    Ok(out)
}

struct MakeRule {
    target: String,
    prereqs: Vec<String>,
    recipe: Vec<String>,
}

/// The rules of a CMake-written `build.make`: each target with every
/// prerequisite its lines list and the recipe that follows them.
fn make_rules(text: &str) -> Vec<MakeRule> {
    let mut rules: Vec<MakeRule> = Vec::new();
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix('\t') {
            if let Some(r) = rules.last_mut() {
                r.recipe.push(cmd.to_owned());
            }
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() || line.starts_with("include ") {
            continue;
        }
        if line.contains(" = ") && !line.contains(": ") {
            continue;
        }
        let Some((target, prereq)) = line.split_once(':') else {
            continue;
        };
        let target = target.trim();
        if target.starts_with('.') {
            continue;
        }
        let prereqs: Vec<String> = prereq.split_whitespace().map(unescape_make).collect();
        match rules.last_mut() {
            Some(r) if r.target == target && r.recipe.is_empty() => r.prereqs.extend(prereqs),
            _ => rules.push(MakeRule {
                target: unescape_make(target),
                prereqs,
                recipe: Vec::new(),
            }),
        }
    }
    rules
}

fn unescape_make(s: &str) -> String {
    s.replace("\\ ", " ").replace("$$", "$")
}

/// `$(NAME)` references replaced by the `NAME = value` lines of `build.make`.
fn expand_make_vars(command: &str, text: &str) -> String {
    let mut out = command.to_owned();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(" = ") {
            let k = k.trim();
            if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                out = out.replace(&format!("$({k})"), v.trim());
            }
        }
    }
    out
}

/// The tables a command's paths are resolved against.
struct Context<'a> {
    model: &'a Codemodel,
    /// Artifact path → target.
    artifacts: FastMap<&'a str, usize>,
    by_name: FastMap<&'a str, usize>,
    by_output: &'a FastMap<String, Vec<usize>>,
    depfiles: FastSet<&'a str>,
    /// File name → project files of the dependency evidence with it (what a
    /// program's bytes may name).
    evidence_names: FastMap<&'a str, Vec<&'a str>>,
    /// What each scanned file's bytes name (each file is scanned once,
    /// however many commands run it): the files, or why it cannot be read.
    scanned: std::cell::RefCell<FastMap<String, Result<Vec<&'a str>, Unreadable>>>,
}

impl<'a> Context<'a> {
    fn new(
        model: &'a Codemodel,
        deps: &'a DepEvidence,
        by_output: &'a FastMap<String, Vec<usize>>,
        list: &'a [RawCommand],
    ) -> Self {
        let mut artifacts = FastMap::default();
        let mut by_name = FastMap::default();
        for (i, t) in model.targets.iter().enumerate() {
            for a in &t.artifacts {
                artifacts.insert(a.as_str(), i);
            }
            by_name.insert(t.name.as_str(), i);
        }
        let mut evidence_names: FastMap<&str, Vec<&str>> = FastMap::default();
        for f in &deps.files {
            if model.is_project_file(f) {
                let name = f.rsplit('/').next().unwrap_or(f);
                evidence_names.entry(name).or_default().push(f.as_str());
            }
        }
        let mut depfiles: FastSet<&str> =
            list.iter().filter_map(|r| r.depfile.as_deref()).collect();
        depfiles.extend(
            list.iter()
                .flat_map(|r| r.raw_depfiles.iter().map(String::as_str)),
        );
        Context {
            model,
            artifacts,
            by_name,
            by_output,
            depfiles,
            evidence_names,
            scanned: Default::default(),
        }
    }

    fn resolve(&self, reader: &Reader, r: &RawCommand) -> Command {
        let mut c = Command {
            owners: r.owners.clone(),
            outputs: r.outputs.clone(),
            evidence: r.evidence.clone(),
            ..Command::default()
        };
        if c.owners.is_empty() {
            c.incomplete = Some(format!(
                "no target of the codemodel owns the custom command writing {}",
                r.outputs.first().map(String::as_str).unwrap_or("?")
            ));
        }
        for n in &r.target_names {
            if let Some(&t) = self.by_name.get(n.as_str()) {
                c.programs.insert(t);
            }
        }
        for i in &r.inputs {
            self.path(i, &mut c, r, true);
        }
        if let Some(d) = &r.depfile {
            self.read_depfile(reader, d, &mut c, r);
        }
        self.command_line(&r.command, &r.cwd, &mut c, r);
        // What the programs it runs hold the names of.
        let mut scanned: FastSet<usize> = FastSet::default();
        let mut stack: Vec<usize> = c.ran.iter().copied().collect();
        let mut files: Vec<String> = Vec::new();
        while let Some(t) = stack.pop() {
            if !scanned.insert(t) {
                continue;
            }
            stack.extend(self.model.targets[t].deps.iter().copied());
            files.extend(self.model.targets[t].artifacts.iter().cloned());
        }
        files.extend(c.scripts.iter().cloned());
        files.sort();
        files.dedup();
        for f in files {
            self.scan_names(reader, &f, &mut c);
        }
        c
    }

    /// A path the command declares or names: `declared` when it is a
    /// declared input or a depfile prerequisite (it is read).
    fn path(&self, p: &str, c: &mut Command, r: &RawCommand, declared: bool) {
        let (src, build) = (&self.model.source_root, &self.model.build_root);
        if let Some(&t) = self.artifacts.get(p) {
            c.programs.insert(t);
            return;
        }
        if paths::is_within(p, build) {
            if r.outputs.iter().any(|o| o == p)
                || r.depfile.as_deref() == Some(p)
                || self.depfiles.contains(p)
            {
                return;
            }
            if self.by_output.contains_key(p) {
                c.after.insert(p.to_owned());
                return;
            }
            let rel = paths::relative_to(p, build);
            if rel.contains("CMakeFiles/") || rel == "CMakeFiles" {
                return; // CMake's own bookkeeping (stamps, rule files)
            }
            match std::fs::metadata(p) {
                Err(_) if !declared => {} // a file it writes and removes, or never
                Ok(m) if m.is_dir() => {
                    if declared {
                        c.incomplete
                            .get_or_insert(format!("it depends on build-tree directory {p}"));
                    }
                }
                Ok(m) if configure_time(&m, self.model) => {}
                _ => {
                    c.incomplete.get_or_insert(format!(
                        "it names build-tree file {p}, which no step of the evidence writes"
                    ));
                }
            }
            return;
        }
        if paths::is_within(p, src) {
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => {
                    c.dirs.insert(p.to_owned());
                }
                Ok(_) => {
                    c.files.insert(p.to_owned());
                }
                Err(_) if declared => {
                    c.files.insert(p.to_owned());
                }
                Err(_) => {}
            }
        }
    }

    fn read_depfile(&self, reader: &Reader, d: &str, c: &mut Command, r: &RawCommand) {
        let outputs_exist = r.outputs.iter().any(|o| std::fs::metadata(o).is_ok());
        let bytes = match reader.read(d) {
            Ok(b) => b,
            Err(_) if !outputs_exist => {
                c.incomplete
                    .get_or_insert(format!("it has not run (its depfile {d} does not exist)"));
                return;
            }
            Err(e) => {
                c.incomplete
                    .get_or_insert(format!("its depfile {d} cannot be read: {e}"));
                return;
            }
        };
        let written = std::fs::metadata(d).and_then(|m| m.modified()).ok();
        match depfile_syntax::parse(&bytes) {
            Ok(df) => {
                for rule in &df.rules {
                    for p in &rule.prereqs {
                        let abs = paths::join_fold(&r.cwd, p);
                        // A prerequisite newer than the depfile: the command
                        // has not run since it changed (S11.02 for commands).
                        let newer = std::fs::metadata(&abs)
                            .and_then(|m| m.modified())
                            .ok()
                            .zip(written)
                            .is_some_and(|(t, w)| t > w);
                        if newer {
                            c.incomplete.get_or_insert(format!(
                                "{abs} is newer than its depfile {d} (the command has not run since)"
                            ));
                        }
                        self.path(&abs, c, r, true);
                    }
                }
            }
            Err(e) => {
                c.incomplete
                    .get_or_insert(format!("its depfile {d} cannot be parsed: {e}"));
            }
        }
    }

    /// The shell command line: each `&&`/`;`/`|` segment's program, and
    /// every path any word names (`-I/dir`, `--opt=/file` included).
    fn command_line(&self, command: &str, cwd: &str, c: &mut Command, r: &RawCommand) {
        let mut cwd = cwd.to_owned();
        let words: Vec<String> = shell_words(command);
        let mut at_program = true;
        let mut after_cd = false;
        let mut interpreter = false;
        let mut skip_segment = false;
        for w in &words {
            if matches!(w.as_str(), "&&" | "||" | ";" | "|") {
                at_program = true;
                skip_segment = false;
                interpreter = false;
                continue;
            }
            if after_cd {
                cwd = paths::join_fold(&cwd, w);
                after_cd = false;
                continue;
            }
            if skip_segment {
                continue;
            }
            if w == "cmake_transform_depfile" {
                // CMake rewriting the command's depfile: roots and depfiles follow.
                skip_segment = true;
                continue;
            }
            if at_program {
                at_program = false;
                if w == "cd" {
                    after_cd = true;
                    continue;
                }
                interpreter = is_interpreter(w);
                if !w.contains('/') {
                    // A program found on PATH, or a target's name run by CMake.
                    if let Some(&t) = self.by_name.get(w.as_str()) {
                        c.programs.insert(t);
                        c.ran.insert(t);
                    }
                    continue;
                }
                let abs = paths::join_fold(&cwd, w);
                self.program(&abs, c, r);
                continue;
            }
            if w.contains(char::is_whitespace) {
                // A command line handed to a shell (`sh -c "..."`): the paths it names.
                for inner in shell_words(w) {
                    for p in word_paths(&inner) {
                        self.path(&paths::join_fold(&cwd, p), c, r, false);
                    }
                }
                continue;
            }
            for p in word_paths(w) {
                let abs = paths::join_fold(&cwd, p);
                if interpreter
                    && paths::is_within(&abs, self.model.scope_root())
                    && !paths::is_within(&abs, &self.model.build_root)
                    && std::fs::metadata(&abs).is_ok_and(|m| m.is_file())
                {
                    // The script an interpreter runs: its directory too.
                    self.script(&abs, c);
                    interpreter = false;
                    continue;
                }
                self.path(&abs, c, r, false);
            }
        }
    }

    fn program(&self, abs: &str, c: &mut Command, r: &RawCommand) {
        let (src, build) = (&self.model.source_root, &self.model.build_root);
        if let Some(&t) = self.artifacts.get(abs) {
            c.programs.insert(t);
            c.ran.insert(t);
        } else if paths::is_within(abs, build) {
            if self.by_output.contains_key(abs) {
                c.after.insert(abs.to_owned());
            } else {
                c.incomplete.get_or_insert(format!(
                    "it runs {abs}, which no target or step of the evidence builds"
                ));
            }
        } else if paths::is_within(abs, src) {
            self.script(abs, c);
        } else {
            let _ = r; // a program outside both trees: the toolchain's
        }
    }

    /// A source-tree script: it, and everything below its directory.
    fn script(&self, abs: &str, c: &mut Command) {
        c.files.insert(abs.to_owned());
        c.scripts.insert(abs.to_owned());
        if let Some((dir, _)) = abs.rsplit_once('/') {
            if paths::is_within(dir, self.model.scope_root()) {
                c.dirs.insert(dir.to_owned());
            }
        }
    }

    /// Every project file of the dependency evidence whose name is a token
    /// of `file`'s bytes (ASCII, or UTF-16LE at either alignment).
    fn scan_names(&self, reader: &Reader, file: &str, c: &mut Command) {
        if self.evidence_names.is_empty() {
            return;
        }
        if let Some(found) = self.scanned.borrow().get(file) {
            match found {
                Ok(fs) => c.files.extend(fs.iter().map(|f| (*f).to_owned())),
                Err(why) => {
                    c.incomplete.get_or_insert(why.to_string());
                }
            }
            return;
        }
        let found = self.names_in(reader, file);
        self.scanned.borrow_mut().insert(file.to_owned(), found);
        self.scan_names(reader, file, c);
    }

    fn names_in(&self, reader: &Reader, file: &str) -> Result<Vec<&'a str>, Unreadable> {
        let bytes = match reader.read(file) {
            Ok(b) => b,
            Err(_) if std::fs::metadata(file).is_err() => return Ok(Vec::new()), // never built
            Err(e) => {
                return Err(Unreadable::new(
                    file,
                    ", a program it runs, cannot be read",
                    e,
                ))
            }
        };
        let mut found: Vec<&'a str> = Vec::new();
        let mut check = |run: &[u8]| {
            if let Some(fs) = std::str::from_utf8(run)
                .ok()
                .and_then(|s| self.evidence_names.get(s))
            {
                found.extend(fs.iter().copied());
            }
        };
        tokens(bytes.iter().copied(), &mut check);
        for align in 0..2 {
            let wide = bytes[align.min(bytes.len())..].chunks_exact(2).map(|p| {
                if p[1] == 0 {
                    p[0]
                } else {
                    0
                }
            });
            tokens(wide, &mut check);
        }
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }
}

/// Runs of file-name bytes, each handed to `check` (the last path component
/// of a run that holds `/`).
fn tokens(bytes: impl Iterator<Item = u8>, check: &mut impl FnMut(&[u8])) {
    let mut run: Vec<u8> = Vec::new();
    let name = |b: u8| {
        b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-' | b'~' | b'@' | b'#')
    };
    for b in bytes {
        if name(b) {
            if run.len() < 256 {
                run.push(b);
            }
        } else {
            if !run.is_empty() {
                check(&run);
            }
            run.clear();
        }
    }
    if !run.is_empty() {
        check(&run);
    }
}

fn configure_time(m: &std::fs::Metadata, model: &Codemodel) -> bool {
    match (m.modified().ok(), model.reply_time) {
        (Some(t), Some(r)) => t <= r,
        _ => false,
    }
}

/// Words of a POSIX shell command line: split on unquoted blanks, quotes
/// removed, `&&`, `||`, `;` and `|` as words of their own.
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = s.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                has = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    has = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, ';') => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
                out.push(";".into());
            }
            (None, '&' | '|') => {
                if has || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
                let double = chars.peek() == Some(&ch);
                if double {
                    chars.next();
                }
                out.push(match (ch, double) {
                    ('&', true) => "&&".into(),
                    ('|', true) => "||".into(),
                    ('|', false) => "|".into(),
                    _ => ";".into(), // a background `&` ends a command too
                });
            }
            (None, c) => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The paths a word may name: itself, what follows `=`, what follows a
/// short option's letter when that is an absolute path (`-I/dir`).
fn word_paths(w: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if w.contains('/') && !w.starts_with('-') {
        out.push(w);
    }
    if let Some((_, v)) = w.split_once('=') {
        if v.contains('/') {
            out.push(v);
        }
    }
    if w.starts_with('-') && !w.starts_with("--") && w.len() > 2 {
        let rest = &w[2..];
        if rest.starts_with('/') {
            out.push(rest);
        }
    }
    if w.starts_with("-") && w.contains(',') {
        // -Wl,--version-script=/x, -Wa,-I/dir
        for part in w.split(',') {
            if part.starts_with('/') {
                out.push(part);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_a_shell_does() {
        assert_eq!(
            shell_words("cd /b && python3 '/s/a b.py' x\"y z\";echo|cat"),
            vec![
                "cd",
                "/b",
                "&&",
                "python3",
                "/s/a b.py",
                "xy z",
                ";",
                "echo",
                "|",
                "cat"
            ]
        );
    }

    #[test]
    fn word_paths_find_glued_paths() {
        assert_eq!(word_paths("-I/s/inc"), vec!["/s/inc"]);
        assert_eq!(word_paths("--out=/b/x"), vec!["/b/x"]);
        assert_eq!(word_paths("rel/x.txt"), vec!["rel/x.txt"]);
        assert!(word_paths("-O2").is_empty());
    }

    #[test]
    fn make_rules_group_lines_and_recipes() {
        let text = "CMAKE_COMMAND = /usr/bin/cmake\n\ngen/h.h: /s/mk.py\ngen/h.h: /s/in.txt\n\t@$(CMAKE_COMMAND) -E cmake_echo_color x\n\tpython3 /s/mk.py gen/h.h\n\nother: a\n";
        let rules = make_rules(text);
        assert_eq!(rules[0].target, "gen/h.h");
        assert_eq!(rules[0].prereqs, vec!["/s/mk.py", "/s/in.txt"]);
        assert_eq!(rules[0].recipe.len(), 2);
        assert_eq!(
            expand_make_vars("$(CMAKE_COMMAND) -E x", text),
            "/usr/bin/cmake -E x"
        );
    }

    #[test]
    fn interpreters_are_known_by_name() {
        assert!(is_interpreter("/usr/bin/python3.11"));
        assert!(is_interpreter("bash"));
        assert!(!is_interpreter("/b/genh"));
    }
}
