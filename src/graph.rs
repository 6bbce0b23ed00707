//! The reverse target graph: changed file → translation units → owning targets
//! → dependent targets → registered tests.
//!
//! A test depends on (a) the one target whose artifact is its `command[0]`,
//! (b) every target whose artifact path appears verbatim in one of its
//! arguments, ENVIRONMENT entries or the compile definitions of its executable,
//! and (c) everything those reach through File API `dependencies` edges and
//! `$<TARGET_OBJECTS:…>` object inputs. Cycles are walked with a visited set.
//!
//! Safety rules added beyond the seed contract (see SAFETY-CONTRACT.md):
//! * an affected executable, shared library or MODULE library that no test
//!   reaches through (a)-(c) may still be run or loaded by path at run time,
//!   so it forces the full suite (a MODULE library has no link edges at all:
//!   only a test naming its artifact reaches it);
//! * a test whose closure contains an *opaque* target (compiled generated
//!   source, included build-time generated header, foreign object input, or a
//!   compiled language without depfile evidence) cannot be proven unaffected.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::changes::Changed;
use crate::fasthash::FastMap;
use crate::ingest::ctest::{Catalogue, Test as CtestTest};
use crate::ingest::custom_commands::Custom;
use crate::ingest::depfile::{DepEvidence, FileId};
use crate::ingest::file_api::{Codemodel, TargetKind};
use crate::paths;
use crate::reason::{Code, Gap};

/// How one registered test maps onto targets.
#[derive(Clone, Debug)]
pub enum TestMapping {
    /// `command[0]` is exactly one executable target; `direct` lists it first,
    /// then every other referenced target (sorted by index).
    Mapped {
        /// Directly referenced targets.
        direct: Vec<usize>,
    },
    /// The test cannot be mapped; the gap says why.
    Unmapped(Gap),
}

/// Why a target is opaque to dependency evidence.
#[derive(Clone, Debug)]
pub struct Opaque {
    /// Code (GENERATED_SOURCE or UNSUPPORTED_LANGUAGE).
    pub code: Code,
    /// What exactly.
    pub detail: String,
}

/// The target graph of one codemodel.
pub struct Graph<'m> {
    model: &'m Codemodel,
    /// `rev[t]`: targets that depend on `t`.
    rev: Vec<Vec<usize>>,
    /// `fwd[t]`: targets `t` depends on (deps plus object-input owners).
    fwd: Vec<Vec<usize>>,
    /// Opaque targets and why.
    pub opaque: HashMap<usize, Opaque>,
    /// Artifact path → targets producing it (every spelling: the codemodel's,
    /// and each symlink of a versioned library's chain).
    by_artifact: FastMap<String, Vec<usize>>,
    /// Artifact file name (of every spelling) → targets.
    by_name: FastMap<String, Vec<usize>>,
    /// Whether a unit of each target was compiled (see [`Graph::maybe_built`]).
    compiled: Vec<bool>,
    /// Whether an artifact of each target exists: one stat per target, on
    /// first need (the coverage scope and the runtime-loaded rule).
    artifact_exists: Vec<std::cell::OnceCell<bool>>,
    /// What custom commands write, with the targets they belong to (sorted).
    custom_outputs: Vec<(String, usize)>,
}

/// How a test's command reaches the program it runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// Index in the command of the program that runs (0 without a wrapper).
    pub program: usize,
    /// The `cmake -E` wrappers in front of it, outermost first (`env`, `time`, `chdir`).
    pub wrappers: Vec<&'static str>,
    /// The directories `cmake -E chdir` runs it in, as written (relative ones
    /// are relative to the test's working directory), outermost first.
    pub dirs: Vec<String>,
}

/// What a test whose command [`launch`] cannot follow runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotLaunched {
    /// CMake itself (`cmake -P`, another `-E` command, `--build`), as
    /// `cmake` and its next two arguments.
    #[error("{0}, cmake itself (not a cmake -E env, time or chdir wrapper)")]
    Cmake(String),
    /// `cmake -E env` with an option it does not know (it fails).
    #[error("{cmake} -E env with option {option:?}, which cmake -E env does not know")]
    EnvOption {
        /// The CMake.
        cmake: String,
        /// The option.
        option: String,
    },
    /// A wrapper without a program to run.
    #[error("{0}, a cmake -E wrapper without a program to run")]
    NoProgram(String),
}

/// Where the program of a test's command starts (for the working directories
/// its names are relative to, and for the reason of an unmapped test): past the `cmake -E env`,
/// `cmake -E time` and `cmake -E chdir` wrappers of the CMake that configured
/// the build (`cmake`, the index's `cmake.paths.cmake`, folded; never a file
/// name), read as that CMake reads them. Each one only runs the rest of its
/// arguments (env: after its `--unset=NAME`, `--modify OP` and `NAME=VALUE`
/// arguments, or after `--`; chdir: in the directory that follows), and its
/// exit status is the program's. Any other use of `cmake` (`-P` scripts,
/// other `-E` commands, `--build`), an option `-E env` does not know (which
/// makes it fail whatever the program does), or a wrapper without a program
/// is `Err` with what the test runs.
pub fn launch(cmd: &[String], cmake: Option<&str>) -> Result<Launch, NotLaunched> {
    let mut l = Launch::default();
    let Some(cmake) = cmake else { return Ok(l) };
    while cmd
        .get(l.program)
        .is_some_and(|c| c.starts_with('/') && paths::fold(c) == cmake)
    {
        let at = l.program;
        let what = || {
            format!(
                "{cmake} {}",
                cmd[at + 1..]
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        if cmd.get(at + 1).map(String::as_str) != Some("-E") {
            return Err(NotLaunched::Cmake(what()));
        }
        let start = match cmd.get(at + 2).map(String::as_str) {
            Some("env") => {
                let mut i = at + 3;
                loop {
                    let Some(a) = cmd.get(i) else { break i };
                    if a == "--" {
                        break i + 1;
                    } else if a.starts_with("--unset=") {
                        i += 1;
                    } else if a == "--modify" {
                        i += 2;
                    } else if a.starts_with('-') {
                        return Err(NotLaunched::EnvOption {
                            cmake: cmake.to_owned(),
                            option: a.clone(),
                        });
                    } else if a.contains('=') {
                        i += 1;
                    } else {
                        break i;
                    }
                }
            }
            Some("time") => at + 3,
            Some("chdir") => match cmd.get(at + 3) {
                Some(d) => {
                    l.dirs.push(d.clone());
                    at + 4
                }
                None => at + 3,
            },
            _ => return Err(NotLaunched::Cmake(what())),
        };
        if start >= cmd.len() {
            return Err(NotLaunched::NoProgram(what()));
        }
        l.wrappers.push(match cmd[at + 2].as_str() {
            "env" => "env",
            "time" => "time",
            _ => "chdir",
        });
        l.program = start;
    }
    Ok(l)
}

impl<'m> Graph<'m> {
    /// Builds the graph, resolving object inputs to their owning targets.
    pub fn new(model: &'m Codemodel) -> Self {
        let n = model.targets.len();
        let mut fwd: Vec<Vec<usize>> = model.targets.iter().map(|t| t.deps.clone()).collect();
        let mut opaque: HashMap<usize, Opaque> = HashMap::new();
        for (i, t) in model.targets.iter().enumerate() {
            for o in &t.object_inputs {
                match model.object_owner(o) {
                    Ok(owner) => fwd[i].push(owner),
                    Err(_) => {
                        opaque.entry(i).or_insert(Opaque {
                            code: Code::GeneratedSource,
                            detail: format!(
                                "target {:?} links object {o}, which no known target produces",
                                t.name
                            ),
                        });
                    }
                }
            }
            // Generated sources are decided with the dependency evidence
            // (`add_depfile_evidence`): AUTOMOC's from autogen's own files,
            // the others from the custom commands that write them.
            if let Some(c) = t
                .compiled
                .iter()
                .find(|c| !crate::ingest::depfile::language_supported(model, &c.language))
            {
                opaque.entry(i).or_insert(Opaque {
                    code: Code::UnsupportedLanguage,
                    detail: format!("target {:?} compiles {} as {}", t.name, c.path, c.language),
                });
            }
        }
        // Link lines that name another target's artifact are dependencies too,
        // whether or not `dependencies` lists them (adding edges is always safe).
        let by_artifact = artifact_index(model);
        // Sorted and unique from here on; link owners that `dependencies`
        // already lists (most of them) are not added twice.
        for f in &mut fwd {
            f.sort_unstable();
            f.dedup();
        }
        let by_name = name_index(&by_artifact);
        let mut extra = Vec::new();
        for (i, t) in model.targets.iter().enumerate() {
            for l in &t.link_paths {
                match link_owners(&by_artifact, l) {
                    Some(owners) => extra.extend(
                        owners
                            .iter()
                            .copied()
                            .filter(|&o| o != i && fwd[i].binary_search(&o).is_err()),
                    ),
                    // A library inside the build tree that no known target produces
                    // (an external project's output, or a target missing from the
                    // codemodel): what it contains is not in the evidence.
                    None if paths::is_within(l, &model.build_root) => {
                        opaque.entry(i).or_insert(Opaque {
                            code: Code::UnknownLinkInput,
                            detail: format!(
                                "target {:?} links {l}, which no known target produces",
                                t.name
                            ),
                        });
                    }
                    None => {}
                }
            }
            // `-lNAME` (or `-l:FILE`): the linker searches the `-L` directories and
            // the system ones. Every target whose artifact has one of the names it
            // may find is an edge; a matching file in a build-tree search directory
            // that no target produces makes the target opaque.
            for name in &t.link_names {
                let files = link_name_files(name);
                let mut found = false;
                for f in &files {
                    if let Some(owners) = by_name.get(f.as_str()) {
                        found = true;
                        extra.extend(
                            owners
                                .iter()
                                .copied()
                                .filter(|&o| o != i && fwd[i].binary_search(&o).is_err()),
                        );
                    }
                }
                if found {
                    continue;
                }
                let in_tree = t
                    .link_dirs
                    .iter()
                    .filter(|d| paths::is_within(d, &model.build_root))
                    .find_map(|d| {
                        files
                            .iter()
                            .map(|f| format!("{d}/{f}"))
                            .find(|p| std::fs::symlink_metadata(p).is_ok())
                    });
                if let Some(p) = in_tree {
                    opaque.entry(i).or_insert(Opaque {
                        code: Code::UnknownLinkInput,
                        detail: format!(
                            "target {:?} links -l{name}, found as {p}, which no known target produces",
                            t.name
                        ),
                    });
                }
            }
            if !extra.is_empty() {
                fwd[i].append(&mut extra);
                fwd[i].sort_unstable();
                fwd[i].dedup();
            }
        }
        // Each `fwd` list is sorted and unique, so each `rev` list is too: its
        // entries are pushed once each, in increasing order.
        let mut rev = vec![Vec::new(); n];
        for (i, f) in fwd.iter().enumerate() {
            for &d in f {
                rev[d].push(i);
            }
        }
        let compiled = vec![false; n];
        let artifact_exists = (0..n).map(|_| std::cell::OnceCell::new()).collect();
        Graph {
            compiled,
            artifact_exists,
            custom_outputs: Vec::new(),
            model,
            rev,
            fwd,
            opaque,
            by_artifact,
            by_name,
        }
    }

    /// What the depfiles add to the graph:
    /// - targets that include a build-time generated header are opaque (their
    ///   code depends on what the build generates, which no depfile shows);
    ///   their other reasons, found by [`Graph::new`], take precedence;
    /// - a target with a compiled unit was built, whatever its declared
    ///   artifact path says: a missing or misspelt artifact must not make a
    ///   compiled executable or library look never built (see
    ///   [`Graph::maybe_built`]).
    pub fn add_depfile_evidence(&mut self, deps: &DepEvidence, custom: &Custom) {
        for tu in &deps.tus {
            if let Some(b) = self.compiled.get_mut(tu.target) {
                *b = true;
            }
        }
        for (t, source, file) in &deps.assembler_includes {
            self.opaque.entry(*t).or_insert(Opaque {
                code: Code::UnsupportedLanguage,
                detail: format!(
                    "target {:?} compiles {source} as ASM, and {file} may name files through the assembler (.include, .incbin), which no depfile lists",
                    self.model.targets[*t].name
                ),
            });
        }
        // The units Qt's autogen writes (AUTOMOC's compilation unit, AUTORCC's
        // resource units): ordinary units only when autogen's own evidence was
        // read and joined; a candidate without a verdict is opaque as any
        // generated source. Verdicts are sorted by (target, compiled index).
        use crate::ingest::autogen::{is_candidate, Verdict};
        for (t, target) in self.model.targets.iter().enumerate() {
            for (ci, c) in target.compiled.iter().enumerate() {
                if !is_candidate(c) {
                    continue;
                }
                let verdicts = &deps.automoc.verdicts;
                let why = match verdicts.binary_search_by_key(&(t, ci), |(k, _)| *k) {
                    Ok(i) => match &verdicts[i].1 {
                        Verdict::Vouched => continue,
                        Verdict::Opaque(why) => why.as_str(),
                    },
                    Err(_) => "its autogen evidence was not read",
                };
                self.opaque.entry(t).or_insert(Opaque {
                    code: Code::GeneratedSource,
                    detail: format!(
                        "target {:?} compiles build-time generated source {} (AUTOMOC: {why})",
                        target.name, c.path
                    ),
                });
            }
        }
        for (t, why) in &deps.automoc.opaque_consumers {
            self.opaque.entry(*t).or_insert(Opaque {
                code: Code::GeneratedSource,
                detail: format!("target {:?}: {why}", self.model.targets[*t].name),
            });
        }
        self.add_custom_evidence(deps, custom);
    }

    /// What custom commands add: a unit that compiles or includes a file a
    /// custom command writes depends on the targets of the commands that may
    /// write it when each of them is complete (see
    /// [`crate::ingest::custom_commands`]), and is opaque otherwise; a target
    /// whose own custom command is incomplete is opaque; a command's
    /// target depends on the programs it runs and on the targets of the
    /// commands that write what it reads.
    fn add_custom_evidence(&mut self, deps: &DepEvidence, custom: &Custom) {
        let model = self.model;
        let mut consumed: Vec<(usize, &str, &str)> = Vec::new();
        for (t, target) in model.targets.iter().enumerate() {
            for c in &target.compiled {
                if c.generated && !crate::ingest::autogen::is_candidate(c) {
                    consumed.push((t, c.path.as_str(), "compiles build-time generated source"));
                }
            }
        }
        for (t, header) in &deps.generated_includes {
            consumed.push((*t, header.as_str(), "includes build-time generated header"));
        }
        for (t, file) in unexplained_build_includes(deps, model, custom) {
            consumed.push((t, file, "includes build-tree file"));
        }
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for (t, file, what) in consumed {
            match custom.vouched(file) {
                Ok(cs) => {
                    for &c in cs {
                        edges.extend(custom.commands[c].owners.iter().map(|&o| (t, o)));
                    }
                }
                Err(why) => {
                    self.opaque.entry(t).or_insert(Opaque {
                        code: Code::GeneratedSource,
                        detail: format!("target {:?} {what} {file} ({why})", model.targets[t].name),
                    });
                }
            }
        }
        for c in &custom.commands {
            for &o in &c.owners {
                if let Some(why) = &c.incomplete {
                    let out = c.outputs.first().map(String::as_str).unwrap_or("?");
                    self.opaque.entry(o).or_insert(Opaque {
                        code: Code::GeneratedSource,
                        detail: format!(
                            "target {:?} runs a custom command writing {out}, and {why}",
                            model.targets[o].name
                        ),
                    });
                    continue;
                }
                edges.extend(c.programs.iter().map(|&p| (o, p)));
                for a in &c.after {
                    for &w in custom.by_output.get(a).into_iter().flatten() {
                        edges.extend(custom.commands[w].owners.iter().map(|&p| (o, p)));
                    }
                }
            }
        }
        self.custom_outputs = (custom.commands.iter())
            .flat_map(|c| {
                c.outputs
                    .iter()
                    .flat_map(|o| c.owners.iter().map(move |&t| (o.clone(), t)))
            })
            .collect();
        self.custom_outputs.sort();
        self.custom_outputs.dedup();
        edges.sort_unstable();
        edges.dedup();
        for (from, to) in edges {
            if from == to {
                continue;
            }
            if let Err(at) = self.fwd[from].binary_search(&to) {
                self.fwd[from].insert(at, to);
                let r = &mut self.rev[to];
                if let Err(at) = r.binary_search(&from) {
                    r.insert(at, from);
                }
            }
        }
    }

    /// What custom commands write, with the targets they belong to.
    pub fn custom_outputs(&self) -> &[(String, usize)] {
        &self.custom_outputs
    }

    /// What `t` depends on (its forward edges: dependencies, object and link edges).
    pub fn deps_of(&self, t: usize) -> &[usize] {
        &self.fwd[t]
    }

    /// The targets that depend on `t` (build order or link), sorted.
    pub fn dependents_of(&self, t: usize) -> &[usize] {
        &self.rev[t]
    }

    /// The codemodel this graph describes.
    pub fn model(&self) -> &'m Codemodel {
        self.model
    }

    /// Every artifact spelling (folded path) → its targets.
    pub fn artifact_spellings(&self) -> &FastMap<String, Vec<usize>> {
        &self.by_artifact
    }

    /// Every artifact file name (of every spelling) → its targets.
    pub fn artifact_names(&self) -> &FastMap<String, Vec<usize>> {
        &self.by_name
    }

    /// The targets whose artifact is spelled `path` (folded).
    pub fn artifact_owners(&self, path: &str) -> &[usize] {
        self.by_artifact.get(path).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Targets whose artifact path occurs verbatim in any of `texts`, sorted.
    pub fn referenced_targets<'a>(
        &self,
        texts: impl IntoIterator<Item = &'a String>,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for s in texts {
            find_artifacts(s, &self.model.build_root, &self.by_artifact, &mut out);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Forward closure (the target itself and everything it depends on), sorted.
    pub fn closure(&self, start: &[usize]) -> Vec<usize> {
        walk(start, &self.fwd)
    }

    /// A catalogue listed with `ctest -C X` must describe the selected codemodel
    /// configuration; a mismatch concerns the whole run, not one test, so it is
    /// said once per configuration the catalogue was listed for.
    pub fn config_gaps(&self, catalogue: &Catalogue) -> Vec<Gap> {
        let mut listed: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
        for test in &catalogue.tests {
            if let Some(c) = self.foreign_config(test) {
                listed.entry(c).or_insert((0, &test.name)).0 += 1;
            }
        }
        let all = catalogue.tests.len();
        listed
            .into_iter()
            .map(|(c, (n, first))| {
                Gap::new(
                    Code::TestConfigMismatch,
                    format!(
                        "the catalogue was listed for configuration {c:?} ({n} of {all} tests, the first {first:?}), codemodel is {:?}",
                        self.model.config
                    ),
                )
            })
            .collect()
    }

    /// The configuration `ctest -C` listed this test for, when it is not the
    /// codemodel's: what the test runs is then another configuration's artifact.
    pub fn foreign_config<'t>(&self, test: &'t CtestTest) -> Option<&'t str> {
        test.config.as_deref().filter(|c| *c != self.model.config)
    }

    /// Maps every test of the catalogue to targets.
    pub fn map_tests(&self, catalogue: &Catalogue) -> Vec<TestMapping> {
        let model = self.model;
        let by_artifact = &self.by_artifact;
        catalogue
            .tests
            .iter()
            .map(|test| {
                let name = &test.name;
                let Some(cmd) = test.command.as_ref().filter(|c| !c.is_empty()) else {
                    return TestMapping::Unmapped(Gap::new(
                        Code::TestCommandMissing,
                        format!("test {name:?} has no command (its executable is not built or does not exist)"),
                    ));
                };
                let exe = &cmd[0];
                if !exe.starts_with('/') {
                    return TestMapping::Unmapped(Gap::new(
                        Code::TestCommandUnmapped,
                        format!("test {name:?} runs {exe:?}, which is not an absolute artifact path"),
                    ));
                }
                let exe_f = paths::fold(exe);
                let hits = by_artifact.get(exe_f.as_str()).map(Vec::as_slice).unwrap_or(&[]);
                let primary = match hits {
                    [one] if model.targets[*one].kind == TargetKind::Executable => *one,
                    [one] => {
                        return TestMapping::Unmapped(Gap::new(
                            Code::TestCommandUnmapped,
                            format!("test {name:?} runs {exe}, the artifact of non-executable target {:?}", model.targets[*one].name),
                        ))
                    }
                    [] => {
                        return TestMapping::Unmapped(Gap::new(
                            Code::TestCommandUnmapped,
                            format!(
                                "test {name:?} runs {exe}, which is not the artifact of any target (wrapper, interpreter or foreign program){}",
                                self.wrapped_program(cmd)
                            ),
                        ))
                    }
                    many => {
                        let names: Vec<_> = many.iter().map(|i| model.targets[*i].name.as_str()).collect();
                        return TestMapping::Unmapped(Gap::new(
                            Code::TestCommandAmbiguous,
                            format!("test {name:?} runs {exe}, the artifact of targets {names:?}"),
                        ));
                    }
                };
                let texts = cmd[1..].iter().chain(test.environment.iter()).chain(model.targets[primary].defines.iter());
                let mut others = self.referenced_targets(texts);
                others.retain(|&o| o != primary);
                let mut direct = vec![primary];
                direct.extend(others);
                TestMapping::Mapped { direct }
            })
            .collect()
    }

    /// For a test run through `cmake -E env|time|chdir` (see [`launch`]):
    /// which target's artifact the wrapper runs, to say so in the reason. The
    /// test stays unmapped (the contract: a wrapper command is not mapped by
    /// default); a `[[script]]` rule listing that target maps it.
    fn wrapped_program(&self, cmd: &[String]) -> String {
        let Ok(l) = launch(cmd, self.model.cmake_command.as_deref()) else {
            return String::new();
        };
        if l.program == 0 {
            return String::new();
        }
        let exe = &cmd[l.program];
        let owner = self
            .by_artifact
            .get(paths::fold(exe).as_str())
            .and_then(|hits| match hits.as_slice() {
                [one] => Some(&self.model.targets[*one].name),
                _ => None,
            });
        match owner {
            Some(t) => format!(
                "; its cmake -E {} wrapper runs {exe}, the artifact of target {t:?}",
                l.wrappers.join(" / ")
            ),
            None => format!(
                "; its cmake -E {} wrapper runs {exe}",
                l.wrappers.join(" / ")
            ),
        }
    }

    /// Which targets need complete dependency evidence: the forward closure of
    /// every target a test references (`test_roots`) and of every executable,
    /// shared or MODULE library whose artifact exists on disk (a test may run
    /// or load it by path). A static/object/interface library outside that
    /// closure, or a loadable target that was never built, produces nothing a
    /// test can execute, so its code cannot affect a test.
    pub fn coverage_scope(&self, test_roots: &[usize]) -> Vec<bool> {
        let mut roots: Vec<usize> = test_roots.to_vec();
        for (i, t) in self.model.targets.iter().enumerate() {
            let loadable = matches!(
                t.kind,
                TargetKind::Executable | TargetKind::SharedLibrary | TargetKind::ModuleLibrary
            );
            // A placeholder (unreadable target object) has no artifacts: keep it in scope.
            if (loadable && self.maybe_built(i)) || t.dir_build.is_empty() {
                roots.push(i);
            }
        }
        let mut scope = vec![false; self.fwd.len()];
        for t in walk(&roots, &self.fwd) {
            scope[t] = true;
        }
        scope
    }

    /// False only when the target declares artifacts, none of them exists on
    /// disk and no unit of it was compiled (never built, e.g. EXCLUDE_FROM_ALL):
    /// then no test can run or load it.
    pub fn maybe_built(&self, t: usize) -> bool {
        let artifacts = &self.model.targets[t].artifacts;
        self.compiled[t]
            || artifacts.is_empty()
            || *self.artifact_exists[t].get_or_init(|| {
                artifacts
                    .iter()
                    .any(|p| std::fs::symlink_metadata(p).is_ok())
            })
    }

    /// Targets that depend (transitively) on an opaque target, each with the
    /// opaque target it reaches (the lowest index, for determinism).
    pub fn tainted(&self) -> HashMap<usize, usize> {
        let mut origins: Vec<usize> = self.opaque.keys().copied().collect();
        origins.sort_unstable();
        let mut out = HashMap::new();
        for o in origins {
            for t in walk(&[o], &self.rev) {
                out.entry(t).or_insert(o);
            }
        }
        out
    }

    /// BFS over reverse edges from `starts`; returns parent pointers
    /// (`parent[t] = Some(p)` means `t` depends on `p`; starts map to themselves).
    pub fn reverse_bfs(&self, starts: &[usize]) -> Vec<Option<usize>> {
        let mut parent = vec![None; self.rev.len()];
        let mut q = VecDeque::new();
        for &s in starts {
            if parent[s].is_none() {
                parent[s] = Some(s);
                q.push_back(s);
            }
        }
        while let Some(t) = q.pop_front() {
            for &d in &self.rev[t] {
                if parent[d].is_none() {
                    parent[d] = Some(t);
                    q.push_back(d);
                }
            }
        }
        parent
    }
}

/// Build-tree files a unit lists that were written at build time by a step
/// the codemodel does not list as generating them (a custom target's
/// `BYPRODUCTS`, a step of another target): (target, file). Files of
/// CMake's own directories (`CMakeFiles/`, autogen's `<T>_autogen/`) are
/// left to their own evidence, and configure-time files are not build-time.
fn unexplained_build_includes<'d>(
    deps: &'d DepEvidence,
    model: &Codemodel,
    custom: &Custom,
) -> Vec<(usize, &'d str)> {
    let mut flagged = vec![false; deps.files.len()];
    let mut any = false;
    for (id, f) in deps.files.iter().enumerate() {
        if !paths::is_within(f, &model.build_root)
            || model.generated_files.contains(f)
            || f.contains("/CMakeFiles/")
            || f.split('/').any(|c| c.ends_with("_autogen"))
        {
            continue;
        }
        let built_later = match std::fs::metadata(f).and_then(|m| m.modified()) {
            Ok(t) => model.reply_time.is_none_or(|r| t > r),
            Err(_) => custom.by_output.contains_key(f.as_str()),
        };
        if built_later {
            flagged[id] = true;
            any = true;
        }
    }
    if !any {
        return Vec::new();
    }
    let mut out: Vec<(usize, &str)> = deps
        .listed_by_units(&flagged)
        .into_iter()
        .map(|(t, p)| (t, deps.files[p as usize].as_str()))
        .collect();
    out.sort_unstable();
    out
}

/// Generic visited-set walk over an adjacency list; returns reached nodes sorted.
fn walk(start: &[usize], adj: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; adj.len()];
    let mut stack: Vec<usize> = Vec::new();
    for &s in start {
        if !seen[s] {
            seen[s] = true;
            stack.push(s);
        }
    }
    while let Some(t) = stack.pop() {
        for &d in &adj[t] {
            if !seen[d] {
                seen[d] = true;
                stack.push(d);
            }
        }
    }
    seen.iter()
        .enumerate()
        .filter(|(_, s)| **s)
        .map(|(i, _)| i)
        .collect()
}

/// Every spelling of every artifact: the codemodel's path and, where it is a
/// symlink, each link of its chain (a versioned shared library's
/// `libfoo.so -> libfoo.so.1 -> libfoo.so.1.2.3`), all folded.
fn artifact_index(model: &Codemodel) -> FastMap<String, Vec<usize>> {
    let mut by_artifact: FastMap<String, Vec<usize>> = FastMap::default();
    for (i, t) in model.targets.iter().enumerate() {
        for a in &t.artifacts {
            by_artifact.entry(a.clone()).or_default().push(i);
            if t.kind == TargetKind::ObjectLibrary {
                continue;
            }
            let mut cur = a.clone();
            for _ in 0..8 {
                let Ok(link) = std::fs::read_link(&cur) else {
                    break;
                };
                let Some(link) = link.to_str() else { break };
                let dir = cur.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                let next = paths::join_fold(dir, link);
                let owners = by_artifact.entry(next.clone()).or_default();
                if !owners.contains(&i) {
                    owners.push(i);
                }
                cur = next;
            }
        }
    }
    for v in by_artifact.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    by_artifact
}

/// File name → targets, over every spelling in `by_artifact`.
fn name_index(by_artifact: &FastMap<String, Vec<usize>>) -> FastMap<String, Vec<usize>> {
    let mut by_name: FastMap<String, Vec<usize>> = FastMap::default();
    for (path, owners) in by_artifact {
        let name = path.rsplit('/').next().unwrap_or(path);
        by_name
            .entry(name.to_owned())
            .or_default()
            .extend(owners.iter().copied());
    }
    for v in by_name.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    by_name
}

/// The targets a link-line path names: an artifact spelling, or a versioned
/// name beside one (`libfoo.so.1.2.3` next to the artifact `libfoo.so`,
/// whose symlinks may not exist yet).
fn link_owners<'a>(
    by_artifact: &'a FastMap<String, Vec<usize>>,
    l: &str,
) -> Option<&'a Vec<usize>> {
    if let Some(o) = by_artifact.get(l) {
        return Some(o);
    }
    let mut cut = l.len();
    while let Some(dot) = l[..cut].rfind('.') {
        let tail = &l[dot + 1..];
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        if let Some(o) = by_artifact.get(&l[..dot]) {
            return Some(o);
        }
        cut = dot;
    }
    None
}

/// The file names `-lNAME` may resolve to (`-l:FILE` names one exactly).
fn link_name_files(name: &str) -> Vec<String> {
    match name.strip_prefix(':') {
        Some(file) => vec![file.to_owned()],
        None => vec![
            format!("lib{name}.so"),
            format!("lib{name}.a"),
            format!("lib{name}.dylib"),
            format!("{name}.lib"),
        ],
    }
}

/// Adds every target whose artifact path occurs verbatim in `s`.
fn find_artifacts(
    s: &str,
    build_root: &str,
    by_artifact: &FastMap<String, Vec<usize>>,
    out: &mut Vec<usize>,
) {
    if build_root.is_empty() {
        return;
    }
    let mut from = 0;
    while let Some(pos) = s[from..].find(build_root) {
        let start = from + pos;
        let mut end = start + build_root.len();
        while end <= s.len() {
            if s.is_char_boundary(end) {
                if let Some(ts) = by_artifact.get(&s[start..end]) {
                    out.extend(ts.iter().copied());
                }
            }
            end += 1;
        }
        from = start + 1;
        while !s.is_char_boundary(from) {
            from += 1;
        }
    }
}

/// One evidence chain: why a test is selected.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Chain {
    /// Test name.
    pub test: String,
    /// Changed path as displayed.
    pub changed: String,
    /// Dependency file, relative to the build root.
    pub depfile: String,
    /// Translation unit source, relative to the source root when inside it.
    pub tu: String,
    /// Owning target, then each dependent target up to the test's target.
    pub targets: Vec<String>,
    /// Why the test reaches the last of `targets` when its channels, not its
    /// program's link closure, do (`names artifact file libp.so`, a plugin
    /// below its program's directory); empty otherwise.
    pub reached: String,
}

/// Result of the reverse walk.
#[derive(Debug, Default)]
pub struct Impact {
    /// Selected test indices (into the catalogue), sorted.
    pub selected: Vec<usize>,
    /// Evidence chains, sorted by (test, changed).
    pub chains: Vec<Chain>,
    /// Affected targets (reverse closure of changed units' owners), sorted.
    pub affected: Vec<usize>,
    /// Translation units (indices into the depfile evidence) listing a changed file, sorted.
    pub units: Vec<usize>,
    /// Targets owning one of those units, sorted.
    pub direct: Vec<usize>,
    /// Gaps found by the walk (none today; kept for walk-level audits).
    pub gaps: Vec<Gap>,
}

/// Walks from each known changed file to the tests it reaches.
pub fn impact(
    graph: &Graph<'_>,
    deps: &DepEvidence,
    changed: &[Changed],
    catalogue: &Catalogue,
    mappings: &[TestMapping],
) -> Impact {
    let model = graph.model;
    let mut out = Impact::default();
    // Which tests each target feeds directly.
    let mut tests_of: Vec<Vec<usize>> = vec![Vec::new(); model.targets.len()];
    for (ti, m) in mappings.iter().enumerate() {
        if let TestMapping::Mapped { direct } = m {
            for &t in direct {
                tests_of[t].push(ti);
            }
        }
    }
    let mut affected = vec![false; model.targets.len()];
    let mut selected = vec![false; catalogue.tests.len()];
    // Units listing each changed file, in unit order: one pass over all units.
    let mut slot: HashMap<FileId, usize> = HashMap::new();
    for c in changed {
        for &fid in &c.files {
            let next = slot.len();
            slot.entry(fid).or_insert(next);
        }
    }
    let mut units_of: Vec<Vec<usize>> = vec![Vec::new(); slot.len()];
    if !slot.is_empty() {
        let mut is_changed = vec![false; deps.files.len()];
        for &fid in slot.keys() {
            if let Some(flag) = is_changed.get_mut(fid as usize) {
                *flag = true;
            }
        }
        for (ui, tu) in deps.tus.iter().enumerate() {
            for &p in &tu.prereqs {
                if is_changed[p as usize] {
                    units_of[slot[&p]].push(ui);
                }
            }
        }
    }
    for c in changed {
        if c.files.is_empty() && c.cmdline_targets.is_empty() {
            continue;
        }
        // Units listing this file under any of its spellings, in unit order.
        let mut units: Vec<usize> = c
            .files
            .iter()
            .flat_map(|f| units_of[slot[f]].iter().copied())
            .collect();
        units.sort_unstable();
        units.dedup();
        // First unit (by depfile order) per owning target.
        let mut unit_of_target: HashMap<usize, usize> = HashMap::new();
        for &ui in &units {
            let tu = &deps.tus[ui];
            unit_of_target.entry(tu.target).or_insert(ui);
            out.units.push(ui);
            out.direct.push(tu.target);
        }
        let mut starts: Vec<usize> = unit_of_target.keys().copied().collect();
        starts.extend(c.cmdline_targets.iter().copied());
        out.direct.extend(c.cmdline_targets.iter().copied());
        starts.sort_unstable();
        starts.dedup();
        let parent = graph.reverse_bfs(&starts);
        for (t, p) in parent.iter().enumerate() {
            if p.is_none() {
                continue;
            }
            affected[t] = true;
            for &ti in &tests_of[t] {
                let direct = match &mappings[ti] {
                    TestMapping::Mapped { direct } => direct,
                    TestMapping::Unmapped(_) => continue,
                };
                // One chain per (test, changed path): through the first reached direct target.
                let first_reached = direct.iter().copied().find(|d| parent[*d].is_some());
                if first_reached != Some(t) {
                    continue;
                }
                selected[ti] = true;
                let mut path = vec![t];
                let mut cur = t;
                while let Some(p) = parent[cur] {
                    if p == cur {
                        break;
                    }
                    path.push(p);
                    cur = p;
                }
                path.reverse();
                let owner = path[0];
                let (depfile, tu) = match unit_of_target.get(&owner) {
                    Some(&u) => {
                        let unit = &deps.tus[u];
                        // The file that lists the changed path for this unit.
                        let evidence = c
                            .files
                            .iter()
                            .find_map(|f| deps.joined.get(&(u, *f)))
                            .unwrap_or(&unit.depfile);
                        (
                            paths::relative_to(evidence, &model.build_root),
                            paths::relative_to(&unit.source, &model.source_root),
                        )
                    }
                    // Read by a custom command of the owner, or named on
                    // its compile or link command.
                    None => (
                        String::new(),
                        (c.command_reads.iter())
                            .find(|(t, _)| *t == owner)
                            .map(|(_, how)| how.clone())
                            .unwrap_or_default(),
                    ),
                };
                out.chains.push(Chain {
                    test: catalogue.tests[ti].name.clone(),
                    changed: c.display.clone(),
                    depfile,
                    tu,
                    targets: path
                        .iter()
                        .map(|&i| model.targets[i].name.clone())
                        .collect(),
                    reached: String::new(),
                });
            }
        }
    }
    out.affected = set_indices(&affected);
    out.selected = set_indices(&selected);
    out.chains.sort();
    out.units.sort_unstable();
    out.units.dedup();
    out.direct.sort_unstable();
    out.direct.dedup();
    out
}

/// The indices whose flag is set, ascending.
fn set_indices(flags: &[bool]) -> Vec<usize> {
    flags
        .iter()
        .enumerate()
        .filter(|(_, f)| **f)
        .map(|(i, _)| i)
        .collect()
}

impl Impact {
    /// The affected units (source paths relative to the source root), the
    /// targets owning one, and the targets affected only through
    /// dependencies, each sorted: the plan's summary.
    pub fn summary(
        &self,
        model: &Codemodel,
        deps: &DepEvidence,
    ) -> (Vec<String>, Vec<String>, Vec<String>) {
        let mut units: Vec<String> = (self.units.iter())
            .map(|&u| paths::relative_to(&deps.tus[u].source, &model.source_root))
            .collect();
        units.sort();
        units.dedup();
        let names = |ts: &mut dyn Iterator<Item = usize>| -> Vec<String> {
            let mut v: Vec<String> = ts.map(|t| model.targets[t].name.clone()).collect();
            v.sort();
            v
        };
        let direct = names(&mut self.direct.iter().copied());
        let dependent = names(
            &mut (self.affected.iter().copied()).filter(|t| self.direct.binary_search(t).is_err()),
        );
        (units, direct, dependent)
    }
}

#[cfg(test)]
mod tests {
    use super::launch;

    fn cmd(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    const CMAKE: Option<&str> = Some("/usr/bin/cmake");

    #[test]
    fn a_command_without_a_wrapper_runs_its_first_element() {
        let l = launch(&cmd("/b/t --x"), CMAKE).unwrap();
        assert_eq!((l.program, l.wrappers.len(), l.dirs.len()), (0, 0, 0));
        // Without the index's cmake path nothing is unwrapped.
        let l = launch(&cmd("/usr/bin/cmake -E env /b/t"), None).unwrap();
        assert_eq!(l.program, 0);
    }

    #[test]
    fn env_skips_its_options_and_assignments_as_cmake_reads_them() {
        let c =
            cmd("/usr/bin/cmake -E env --unset=A --modify PATH=path_list_prepend:/x B=1 /b/t C=2");
        let l = launch(&c, CMAKE).unwrap();
        assert_eq!(
            (c[l.program].as_str(), l.wrappers.clone()),
            ("/b/t", vec!["env"])
        );
        // `--` ends the options: what follows is the program, even with a `=`.
        let c = cmd("/usr/bin/cmake -E env A=1 -- /b/x=y 1");
        assert_eq!(c[launch(&c, CMAKE).unwrap().program], "/b/x=y");
        // A spelling of the same path is the same cmake.
        let c = cmd("/usr//bin/./cmake -E env /b/t");
        assert_eq!(launch(&c, CMAKE).unwrap().program, 3);
    }

    #[test]
    fn time_and_chdir_run_what_follows_and_wrappers_nest() {
        let c = cmd("/usr/bin/cmake -E chdir data /usr/bin/cmake -E time /usr/bin/cmake -E env A=1 /b/t in.txt");
        let l = launch(&c, CMAKE).unwrap();
        assert_eq!(c[l.program], "/b/t");
        assert_eq!(l.wrappers, vec!["chdir", "time", "env"]);
        assert_eq!(l.dirs, vec!["data".to_owned()]);
    }

    #[test]
    fn other_uses_of_cmake_are_not_wrappers() {
        for (c, needle) in [
            ("/usr/bin/cmake -P /s/run.cmake", "cmake itself"),
            ("/usr/bin/cmake -E copy /a /b", "cmake itself"),
            ("/usr/bin/cmake --build /b", "cmake itself"),
            ("/usr/bin/cmake -E env --bogus /b/t", "does not know"),
            ("/usr/bin/cmake -E env A=1 B=2", "without a program"),
            ("/usr/bin/cmake -E env --modify", "without a program"),
            ("/usr/bin/cmake -E env A=1 --", "without a program"),
            ("/usr/bin/cmake -E time", "without a program"),
            ("/usr/bin/cmake -E chdir /d", "without a program"),
            ("/usr/bin/cmake", "cmake itself"),
        ] {
            let err = launch(&cmd(c), CMAKE).unwrap_err().to_string();
            assert!(err.contains(needle), "{c}: {err}");
        }
        // Another cmake than the one that configured the build is a foreign program.
        let l = launch(&cmd("/opt/cmake/bin/cmake -E env /b/t"), CMAKE).unwrap();
        assert_eq!(l.program, 0);
    }
}
