//! Differential oracle on real CMake builds.
//!
//! Each scenario writes a small CMake project, builds BASE, runs the whole suite
//! with real `ctest`, applies the HEAD edits in place, configures and builds
//! HEAD in the same build dir (as a CI runner that keeps its build does), runs
//! the whole suite again, and runs diff2test on the HEAD build with the change
//! set. Scenarios whose BASE trees are written the same way share one BASE
//! build and its suite's results: each gets a copy of that build at the path
//! it was made at (`common::slots`), so a new scenario costs an incremental
//! build, not two full ones. The set of tests whose result changed (pass <-> fail, or
//! present on one side only) is the ground truth:
//!
//! * **oracle (safety)**: diff2test falls back (exit 3 listing every HEAD test,
//!   or exit 4 with an empty stdout), or exits 0 with a selection that contains
//!   every changed-result test; and the scenario is not vacuous (at least one
//!   result changed);
//! * **precision expectation**: what the scenario should give once the tool is
//!   fixed (asserted after the oracle, so a failure says which one broke).
//!
//! `DIFF2TEST_ORACLE_BIN=/path/to/diff2test` runs another binary instead of the
//! cargo-built one. `DIFF2TEST_ORACLE_GENERATOR=ninja` (or `ninja-multi`, or
//! `makefiles`, the default) builds every scenario that does not choose its own
//! generator with that one (Multi-Config: `--config Debug`, and the catalogue
//! listed with `-C Debug`), so the whole oracle can be swept over each generator. `DIFF2TEST_ORACLE_KEEP=1` keeps the temp dirs (their path is
//! printed on stderr).
//!
//! A missing tool (cmake, g++, make, ninja, git, nm) fails the test with the
//! Debian package to install; nothing is skipped.

mod common;
#[path = "oracle_configure/scenarios.rs"]
mod configure_scenarios;
#[path = "oracle_record/scenarios.rs"]
mod record_scenarios;

use common::{cxx_compiler_id, scratch_dir, Run};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

// ====================================================================== harness

/// The directories of one scenario run.
pub struct Ctx {
    /// Temp root.
    pub root: PathBuf,
    /// `ROOT/src`: the source tree, edited in place from BASE to HEAD.
    pub src: PathBuf,
    /// The BASE build: `ROOT/build` before the HEAD edits (the after-base-build
    /// hooks see it there).
    pub base_build: PathBuf,
    /// `ROOT/build`: the HEAD build diff2test reads (the BASE build, rebuilt
    /// incrementally after the edits, configure run again).
    pub build: PathBuf,
    /// Values hooks record (e.g. commit ids), substituted as `@NAME@`.
    vars: RefCell<BTreeMap<String, String>>,
    /// The configuration built and listed (`--config`), for a swept Multi-Config run.
    pub config: Option<&'static str>,
}

impl Ctx {
    fn set_var(&self, k: &str, v: &str) {
        self.vars.borrow_mut().insert(k.to_owned(), v.to_owned());
    }
    /// Replaces `@ROOT@`, `@SRC@`, `@BUILD@` and every recorded `@VAR@`.
    fn subst(&self, s: &str) -> String {
        let mut out = s
            .replace("@ROOT@", &self.root.display().to_string())
            .replace("@SRC@", &self.src.display().to_string())
            .replace("@BUILD@", &self.build.display().to_string());
        for (k, v) in self.vars.borrow().iter() {
            out = out.replace(&format!("@{k}@"), v);
        }
        out
    }
    fn write(&self, rel: &str, content: &str) {
        let p = self.src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, self.subst(content)).unwrap();
    }
}

type Hook = Box<dyn Fn(&Ctx)>;

/// A hook that writes the BASE tree, with the identity of its closure when
/// it captures nothing (then two scenarios with the same one write the same
/// tree, and may share a BASE build).
struct BaseHook {
    identity: Option<std::any::TypeId>,
    hook: Hook,
}

/// How a tree is configured and built.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Generator {
    Makefiles,
    Ninja,
    NinjaMultiConfig,
}

/// One HEAD edit of the source tree.
pub enum Edit {
    /// Write (create or replace) `path` with `content` (`@VAR@`s substituted).
    Write(String, String),
    /// Copy the bytes of `from` onto `to`.
    Copy(String, String),
    /// Replace the text `from` with `to` in `path` (which must contain it).
    Patch(String, String, String),
}

/// A differential scenario.
pub struct Scenario {
    name: String,
    base: Vec<(String, String)>,
    edits: Vec<Edit>,
    changed: Vec<String>,
    policy: Option<String>,
    extra_args: Vec<String>,
    /// `None`: [`default_generator`].
    generator: Option<Generator>,
    first_targets: Vec<String>,
    /// HEAD is built from scratch (see [`Scenario::fresh_head_build`]).
    fresh_head: bool,
    after_base_files: Vec<BaseHook>,
    after_edits: Vec<Hook>,
    after_head_build: Vec<Hook>,
    after_base_build: Vec<Hook>,
    /// The BASE suite runs under strace and `diff2test record` turns its log
    /// into `ROOT/record.json`, passed as `--record` (see [`Scenario::recorded`]).
    recorded: bool,
}

impl Scenario {
    pub fn new(name: &str) -> Self {
        Scenario {
            name: name.to_owned(),
            base: Vec::new(),
            edits: Vec::new(),
            changed: Vec::new(),
            policy: None,
            extra_args: Vec::new(),
            generator: None,
            first_targets: Vec::new(),
            fresh_head: false,
            after_base_files: Vec::new(),
            after_edits: Vec::new(),
            after_head_build: Vec::new(),
            after_base_build: Vec::new(),
            recorded: false,
        }
    }
    /// A file of the BASE tree (relative to SRC).
    pub fn file(mut self, path: &str, content: &str) -> Self {
        self.base.push((path.to_owned(), content.to_owned()));
        self
    }
    /// A HEAD edit: `path` gets `content`. The path is also a changed path.
    pub fn edit(mut self, path: &str, content: &str) -> Self {
        self.edits
            .push(Edit::Write(path.to_owned(), content.to_owned()));
        self.changed.push(path.to_owned());
        self
    }
    /// A HEAD edit that is NOT reported as changed (e.g. a git-ignored file).
    pub fn silent_edit(mut self, path: &str, content: &str) -> Self {
        self.edits
            .push(Edit::Write(path.to_owned(), content.to_owned()));
        self
    }
    /// A HEAD edit: `from` replaced by `to` in `path` (a changed path).
    pub fn patch(mut self, path: &str, from: &str, to: &str) -> Self {
        self.edits
            .push(Edit::Patch(path.to_owned(), from.to_owned(), to.to_owned()));
        if !self.changed.iter().any(|c| c == path) {
            self.changed.push(path.to_owned());
        }
        self
    }
    /// `other.cpp`, the bystander test's program ([`BYSTANDER`]): it passes
    /// at BASE and HEAD alike.
    pub fn with_bystander(self) -> Self {
        self.file("other.cpp", &main_checking("", "2 + 2 == 4"))
    }
    /// Compare mode's base: a snapshot of the BASE build (made with the
    /// scenario's policy), passed as `--base-snapshot`.
    pub fn against_base_snapshot(self) -> Self {
        self.after_base_build(snapshot_base)
            .arg("--base-snapshot")
            .arg("@ROOT@/base.snapshot.json")
    }
    /// The BASE tree is a copy of `fixtures/cmake-project`.
    pub fn from_fixture(self) -> Self {
        self.after_base_files(|ctx| common::copy_fixture(&ctx.src))
    }
    /// Runs after the BASE build and its ctest run, before the HEAD edits.
    /// Runs the BASE suite under `strace -f -y` (as README's recipe does),
    /// writes its record with `diff2test record` and passes it as `--record`.
    pub fn recorded(mut self) -> Self {
        self.recorded = true;
        self
    }

    pub fn after_base_build(mut self, f: impl Fn(&Ctx) + 'static) -> Self {
        self.after_base_build.push(Box::new(f));
        self
    }
    /// The HEAD edits are made in a later second than the newest file of the
    /// BASE build, as a developer's are. CMake's `file(COPY)` and
    /// `configure_file(COPYONLY)` give a copy its source's mtime cut to whole
    /// seconds: a header edited in the second its user's object was compiled
    /// is copied with an mtime older than the object, make does not rebuild
    /// it, and the HEAD build is stale (diff2test rightly falls back with
    /// `DEP_EVIDENCE_STALE`; the oracle holds either way). For the scenarios
    /// whose precision claim needs a consistent HEAD build.
    pub fn edits_in_a_later_second(self) -> Self {
        self.after_base_build(|ctx| {
            let newest = walkdir::WalkDir::new(&ctx.build)
                .into_iter()
                .flatten()
                .filter_map(|e| e.metadata().ok()?.modified().ok())
                .max();
            let Some(newest) = newest else { return };
            let secs = newest
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            // The file system's clock, not the process's: file times lag it by up to a tick.
            let probe = ctx.root.join("clock-probe");
            loop {
                std::fs::write(&probe, b"").unwrap();
                let now = std::fs::metadata(&probe).unwrap().modified().unwrap();
                let now_secs = now
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                if now_secs > secs {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    }
    /// A HEAD edit: the bytes of `from` are copied onto `to` (a changed path).
    pub fn copy_onto(mut self, from: &str, to: &str) -> Self {
        self.edits.push(Edit::Copy(from.to_owned(), to.to_owned()));
        self.changed.push(to.to_owned());
        self
    }
    /// No `--changed` arguments: the change set comes from `extra_args` (git modes).
    pub fn no_changed_list(mut self) -> Self {
        self.changed.clear();
        self
    }
    /// A policy file, passed with `--policy`.
    pub fn policy(mut self, toml: &str) -> Self {
        self.policy = Some(toml.to_owned());
        self
    }
    /// Extra diff2test arguments (`@VAR@`s substituted).
    pub fn arg(mut self, a: &str) -> Self {
        self.extra_args.push(a.to_owned());
        self
    }
    pub fn generator(mut self, g: Generator) -> Self {
        self.generator = Some(g);
        self
    }
    /// HEAD is configured and built from scratch, not incrementally: for a
    /// scenario about what the build's own dependency tracking misses (a
    /// header `-MMD` leaves out, a `#pragma once` twin whose time is set back,
    /// AUTOUIC on Ninja), where an incremental HEAD build would keep BASE's
    /// objects and so hide the change from the ground truth.
    pub fn fresh_head_build(mut self) -> Self {
        self.fresh_head = true;
        self
    }
    /// Targets built (in order, one at a time) before the whole build.
    pub fn build_first(mut self, target: &str) -> Self {
        self.first_targets.push(target.to_owned());
        self
    }
    /// Runs after the BASE files are written, before the BASE build.
    pub fn after_base_files<F: Fn(&Ctx) + 'static>(mut self, f: F) -> Self {
        let identity = (std::mem::size_of::<F>() == 0).then(std::any::TypeId::of::<F>);
        self.after_base_files.push(BaseHook {
            identity,
            hook: Box::new(f),
        });
        self
    }
    /// Runs after the HEAD edits, before the HEAD build.
    pub fn after_edits(mut self, f: impl Fn(&Ctx) + 'static) -> Self {
        self.after_edits.push(Box::new(f));
        self
    }
    /// After the HEAD build, `rel` (in the source tree) gets a modification
    /// time two minutes ahead: changed since the build, as far as any
    /// freshness audit can tell.
    pub fn touched_after_head_build(self, rel: &'static str) -> Self {
        self.after_head_build(move |ctx| {
            let t = filetime::FileTime::from_unix_time(
                filetime::FileTime::now().unix_seconds() + 120,
                0,
            );
            filetime::set_file_mtime(ctx.src.join(rel), t).unwrap();
        })
    }
    /// Runs after the HEAD build and its ctest run, before diff2test.
    pub fn after_head_build(mut self, f: impl Fn(&Ctx) + 'static) -> Self {
        self.after_head_build.push(Box::new(f));
        self
    }

    /// What makes the BASE build: every input of it, when all are known
    /// (every after-base-files hook captures nothing); scenarios with the same
    /// key share one BASE build ([`common::slots`]).
    fn base_key(&self, generator: Generator, config: Option<&str>) -> Option<String> {
        let hooks: Option<Vec<std::any::TypeId>> =
            self.after_base_files.iter().map(|h| h.identity).collect();
        Some(format!(
            "oracle {generator:?} {config:?} {:?} {:?} {:?} {:?} {}",
            compiler_args(),
            self.first_targets,
            self.base,
            hooks?,
            if self.recorded { "recorded" } else { "" }
        ))
    }

    /// Builds BASE (or restores a BASE build an earlier scenario with the same
    /// key made, with its suite's results), runs the after-base-build hooks,
    /// applies the HEAD edits, configures and builds HEAD incrementally in the
    /// same tree, runs the suite and diff2test.
    pub fn run(self) -> Outcome {
        require_tools();
        // A generator the scenario chose is built as it asks (class 11 lists a
        // Multi-Config catalogue without -C on purpose); the swept default lists
        // the catalogue of the configuration it builds.
        let (generator, config) = match self.generator {
            Some(g) => (g, None),
            None => match default_generator() {
                Generator::NinjaMultiConfig => (Generator::NinjaMultiConfig, Some("Debug")),
                g => (g, None),
            },
        };
        let mut lease = match self.base_key(generator, config) {
            Some(key) => common::slots::lease(&key),
            None => common::slots::unshared(),
        };
        let root = lease.work();
        let ctx = Ctx {
            src: root.join("src"),
            base_build: root.join("build"),
            build: root.join("build"),
            root,
            vars: RefCell::new(BTreeMap::new()),
            config,
        };
        let base: BTreeMap<String, bool> = if lease.restored() {
            let (base, vars): (BTreeMap<String, bool>, BTreeMap<String, String>) = lease.data();
            *ctx.vars.borrow_mut() = vars;
            base
        } else {
            for (p, c) in &self.base {
                ctx.write(p, c);
            }
            for h in &self.after_base_files {
                (h.hook)(&ctx);
            }
            build_tree(&ctx.src, &ctx.build, generator, config, &self.first_targets);
            // Saved before the suite runs: its outputs are no part of BASE.
            lease.save(());
            let junit = ctx.root.join("junit-base.xml");
            let base = if self.recorded {
                let log = ctx.root.join("base.strace");
                let base = run_suite_traced(&ctx.build, &junit, generator, Some(&log));
                ctx.set_var("RECORD_JSON", &record_of(&ctx, &log));
                base
            } else {
                run_suite(&ctx.build, &junit, generator)
            };
            lease.restore();
            lease.set_data((base.clone(), ctx.vars.borrow().clone()));
            base
        };
        // The policy, before the after-base-build hooks: a base snapshot is made with it.
        if let Some(p) = &self.policy {
            std::fs::write(ctx.root.join("diff2test.toml"), p).unwrap();
        }
        for h in &self.after_base_build {
            h(&ctx);
        }
        let record = ctx.root.join("record.json");
        if self.recorded {
            std::fs::write(&record, ctx.vars.borrow()["RECORD_JSON"].as_bytes()).unwrap();
        }
        for e in &self.edits {
            match e {
                Edit::Write(p, c) => ctx.write(p, c),
                Edit::Copy(from, to) => {
                    std::fs::copy(ctx.src.join(from), ctx.src.join(to)).unwrap();
                }
                Edit::Patch(path, from, to) => {
                    let p = ctx.src.join(path);
                    let text = std::fs::read_to_string(&p).unwrap();
                    assert!(text.contains(from.as_str()), "{path} lacks {from:?}");
                    std::fs::write(&p, text.replacen(from.as_str(), to, 1)).unwrap();
                }
            }
        }
        for h in &self.after_edits {
            h(&ctx);
        }
        if self.fresh_head {
            std::fs::remove_dir_all(&ctx.build).unwrap();
        }
        build_tree(&ctx.src, &ctx.build, generator, config, &self.first_targets);
        let head = run_suite(&ctx.build, &ctx.root.join("junit-head.xml"), generator);
        for h in &self.after_head_build {
            h(&ctx);
        }
        let mut args = common::tree_args(&ctx.src, &ctx.build);
        for c in &self.changed {
            args.push("--changed".into());
            args.push(c.clone());
        }
        if self.policy.is_some() {
            args.push("--policy".into());
            args.push(ctx.root.join("diff2test.toml").display().to_string());
        }
        if let Some(c) = config {
            args.push("--config".into());
            args.push(c.into());
        }
        if self.recorded {
            args.push("--record".into());
            args.push(record.display().to_string());
        }
        args.extend(self.extra_args.iter().map(|a| ctx.subst(a)));
        let run = run_diff2test(&args);
        eprintln!(
            "[oracle {}] diff2test exit {}\nstdout:\n{}stderr:\n{}",
            self.name, run.code, run.stdout, run.stderr
        );
        let lease = if std::env::var_os("DIFF2TEST_ORACLE_KEEP").is_some() {
            eprintln!("[oracle {}] kept {}", self.name, lease.keep().display());
            None
        } else {
            Some(lease)
        };
        Outcome {
            _dir: lease,
            name: self.name,
            ctx,
            base,
            head,
            args,
            run,
        }
    }
}

/// The two suites' results and the diff2test run.
pub struct Outcome {
    /// Keeps the trees until the outcome is dropped (later runs may read them).
    _dir: Option<common::slots::Lease>,
    pub name: String,
    pub ctx: Ctx,
    /// test name → passed, at BASE.
    pub base: BTreeMap<String, bool>,
    /// test name → passed, at HEAD.
    pub head: BTreeMap<String, bool>,
    pub args: Vec<String>,
    pub run: Run,
}

impl Outcome {
    /// `diff2test init` on this scenario's head build (the run's evidence flags).
    pub fn init(&self) -> Run {
        let mut args = vec!["init".to_owned()];
        args.extend(self.args[..8].iter().cloned());
        run_diff2test(&args)
    }
    /// Tests whose result differs, or that exist on one side only.
    pub fn changed_results(&self) -> BTreeSet<String> {
        let names: BTreeSet<&String> = self.base.keys().chain(self.head.keys()).collect();
        names
            .into_iter()
            .filter(|n| self.base.get(*n) != self.head.get(*n))
            .cloned()
            .collect()
    }
    /// Scenario precondition: `test`'s result changed between BASE and HEAD.
    pub fn expect_changed(&self, test: &str) {
        assert!(
            self.changed_results().contains(test),
            "precondition: the result of {test} changed\n{}",
            self.report()
        );
    }
    pub fn selected(&self) -> BTreeSet<String> {
        self.run.stdout.lines().map(str::to_owned).collect()
    }
    fn report(&self) -> String {
        format!(
            "scenario {}\nbase results: {:?}\nhead results: {:?}\nchanged results: {:?}\n\
             diff2test {}\nexit: {}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.name,
            self.base,
            self.head,
            self.changed_results(),
            self.args.join(" "),
            self.run.code,
            self.run.stdout,
            self.run.stderr
        )
    }

    /// diff2test again on this outcome's trees: its arguments less every
    /// `(flag, value)` in `drop`, plus `add`.
    pub fn rerun(&self, drop: &[&str], add: &[String]) -> Outcome {
        let mut args: Vec<String> = Vec::new();
        let mut it = self.args.iter();
        while let Some(a) = it.next() {
            if drop.contains(&a.as_str()) {
                it.next();
                continue;
            }
            args.push(a.clone());
        }
        args.extend(add.iter().cloned());
        let run = run_diff2test(&args);
        eprintln!(
            "[oracle {} rerun] diff2test exit {}\nstdout:\n{}stderr:\n{}",
            self.name, run.code, run.stdout, run.stderr
        );
        Outcome {
            _dir: None,
            name: format!("{} (rerun: {})", self.name, args.join(" ")),
            ctx: Ctx {
                root: self.ctx.root.clone(),
                src: self.ctx.src.clone(),
                base_build: self.ctx.base_build.clone(),
                build: self.ctx.build.clone(),
                vars: RefCell::new(BTreeMap::new()),
                config: self.ctx.config,
            },
            base: self.base.clone(),
            head: self.head.clone(),
            args,
            run,
        }
    }

    /// The safety assertion (see the module docs).
    pub fn assert_oracle(&self) {
        let changed = self.changed_results();
        assert!(
            !changed.is_empty(),
            "VACUOUS SCENARIO: no test changed result between base and head\n{}",
            self.report()
        );
        let sel = self.selected();
        match self.run.code {
            0 => {
                let missing: Vec<&String> = changed
                    .iter()
                    .filter(|n| self.head.contains_key(*n) && !sel.contains(*n))
                    .collect();
                assert!(
                    missing.is_empty(),
                    "ORACLE (safety) FAILED: exit 0 omits tests whose result changed: {missing:?}\n{}",
                    self.report()
                );
            }
            3 => {
                let missing: Vec<&String> =
                    self.head.keys().filter(|n| !sel.contains(*n)).collect();
                assert!(
                    missing.is_empty(),
                    "ORACLE (safety) FAILED: exit 3 (full suite) does not list every test: {missing:?}\n{}",
                    self.report()
                );
            }
            4 => assert!(
                self.run.stdout.is_empty(),
                "ORACLE (safety) FAILED: exit 4 with a non-empty stdout\n{}",
                self.report()
            ),
            c => panic!(
                "ORACLE (safety) FAILED: exit {c} is neither a subset nor a fallback\n{}",
                self.report()
            ),
        }
    }

    /// The oracle without the non-vacuity check: for CMake edits that are
    /// meant to change no test's result (a comment, a target nobody links).
    pub fn assert_oracle_may_be_vacuous(&self) {
        let changed = self.changed_results();
        match self.run.code {
            0 => {
                let sel = self.selected();
                let missing: Vec<&String> = changed.iter().filter(|t| !sel.contains(*t)).collect();
                assert!(
                    missing.is_empty(),
                    "ORACLE (safety) FAILED: omits {missing:?}\n{}",
                    self.report()
                );
            }
            3 | 4 => {}
            c => panic!("ORACLE (safety) FAILED: exit {c}\n{}", self.report()),
        }
    }

    /// Precision expectation: exit 0 and a selection containing `want`.
    pub fn expect_subset(&self, want: &[&str]) {
        assert_eq!(
            self.run.code,
            0,
            "PRECISION EXPECTATION FAILED (oracle passed): a subset (exit 0) containing {want:?} is intended\n{}",
            self.report()
        );
        let sel = self.selected();
        let missing: Vec<&&str> = want.iter().filter(|n| !sel.contains(**n)).collect();
        assert!(
            missing.is_empty(),
            "PRECISION EXPECTATION FAILED (oracle passed): the subset lacks {missing:?}\n{}",
            self.report()
        );
    }

    /// Precision expectation: a subset containing `want`, or a fallback (3 or 4).
    pub fn expect_subset_or_fallback(&self, want: &[&str]) {
        match self.run.code {
            0 => self.expect_subset(want),
            3 | 4 => {}
            c => panic!(
                "PRECISION EXPECTATION FAILED (oracle passed): exit {c}, want a subset or a fallback\n{}",
                self.report()
            ),
        }
    }

    /// Precision expectation: a fallback with exit `code` whose stderr mentions `needle`.
    pub fn expect_fallback_naming(&self, code: i32, needle: &str) {
        assert_eq!(
            self.run.code,
            code,
            "PRECISION EXPECTATION FAILED (oracle passed): exit {code} is intended\n{}",
            self.report()
        );
        assert!(
            self.run.stderr.contains(needle),
            "PRECISION EXPECTATION FAILED (oracle passed): stderr should name {needle:?}\n{}",
            self.report()
        );
    }
}

fn require_tools() {
    common::require(
        "tests/oracle.rs",
        &[
            ("cmake", "cmake"),
            ("ctest", "cmake"),
            ("g++", "g++"),
            ("make", "make"),
            ("ninja", "ninja-build"),
            ("git", "git"),
            ("nm", "binutils"),
            ("strace", "strace"),
        ],
    );
}

/// [`common::run_ok`]'s stdout as text.
fn run_text(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&common::run_ok(cmd)).into_owned()
}

/// Writes the File API queries `fixtures/prepare-build.sh` writes (before configuring).
pub fn write_queries(build: &Path) {
    let q = build.join(".cmake/api/v1/query");
    std::fs::create_dir_all(&q).unwrap();
    for kind in ["codemodel-v2", "cmakeFiles-v1", "toolchains-v1", "cache-v2"] {
        std::fs::write(q.join(kind), "").unwrap();
    }
}

/// `fixtures/prepare-build.sh` in Rust, with a choice of generator and of
/// targets to build first: queries, configure (Debug), build -j2, `ctest.json`
/// (run inside BUILD, with `-C CONFIG` when given), `deps.txt` (every
/// `CMakeFiles/*.dir/*.d`, sorted, then `.ninja_deps`).
pub fn build_tree(
    src: &Path,
    build: &Path,
    generator: Generator,
    config: Option<&str>,
    first: &[String],
) {
    std::fs::create_dir_all(build).unwrap();
    write_queries(build);
    let mut cfg = Command::new("cmake");
    cfg.arg("-S").arg(src).arg("-B").arg(build);
    match generator {
        Generator::Makefiles => cfg.args(["-G", "Unix Makefiles", "-DCMAKE_BUILD_TYPE=Debug"]),
        Generator::Ninja => cfg.args(["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug"]),
        Generator::NinjaMultiConfig => cfg.args(["-G", "Ninja Multi-Config"]),
    };
    cfg.args(compiler_args());
    run_text(&mut cfg);
    let build_config: &[&str] = match generator {
        Generator::Makefiles | Generator::Ninja => &[],
        Generator::NinjaMultiConfig => &["--config", "Debug"],
    };
    for t in first {
        run_text(
            Command::new("cmake")
                .arg("--build")
                .arg(build)
                .args(build_config)
                .args(["--target", t]),
        );
    }
    run_text(
        Command::new("cmake")
            .arg("--build")
            .arg(build)
            .args(build_config)
            .arg("-j2"),
    );
    write_catalogue(build, build, config);
    write_dep_list(build);
}

/// What the build recorded for `object` (relative to `build`, as the Makefiles
/// generator spells it, e.g. `CMakeFiles/t.dir/t.cpp.o`): its `.d` file's text
/// when there is one, else its record in `.ninja_deps` (Multi-Config: under
/// `Debug/`), one resolved path a line. For scenario preconditions.
pub fn recorded_deps(build: &Path, object: &str) -> String {
    let d = build.join(format!("{object}.d"));
    if d.is_file() {
        return std::fs::read_to_string(d).unwrap();
    }
    let bytes = std::fs::read(build.join(".ninja_deps"))
        .unwrap_or_else(|e| panic!("neither {} nor .ninja_deps: {e}", d.display()));
    let log = diff2test::ingest::ninja_deps::parse(&bytes).unwrap();
    let (dir, file) = object.rsplit_once('/').unwrap();
    let multi = format!("{dir}/Debug/{file}");
    let rec = log
        .get(object)
        .or_else(|| log.get(&multi))
        .unwrap_or_else(|| panic!("no deps record for {object} in .ninja_deps"));
    let b = build.display().to_string();
    let mut text = String::new();
    for &i in &rec.inputs {
        text.push_str(&log.resolve(&b, i));
        text.push('\n');
    }
    text
}

/// `ctest --show-only=json-v1 [-C CONFIG]`, run in `cwd`, written to `build/ctest.json`.
pub fn write_catalogue(cwd: &Path, build: &Path, config: Option<&str>) {
    let mut cmd = Command::new("ctest");
    cmd.arg("--show-only=json-v1").current_dir(cwd);
    if let Some(c) = config {
        cmd.args(["-C", c]);
    }
    let json = run_text(&mut cmd);
    std::fs::write(build.join("ctest.json"), json).unwrap();
}

/// Every `.d` under a `CMakeFiles/*.dir/` of `build`, sorted by bytes (like `find | LC_ALL=C sort`).
pub fn write_dep_list(build: &Path) {
    let mut deps: Vec<String> = walkdir::WalkDir::new(build)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".d") && p.contains("/CMakeFiles/") && p.contains(".dir/"))
        .collect();
    deps.sort();
    // Ninja folds the depfiles into its deps log: list it too (recognised by its header).
    if build.join(".ninja_deps").is_file() {
        deps.push(build.join(".ninja_deps").display().to_string());
    }
    let mut text = deps.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    std::fs::write(build.join("deps.txt"), text).unwrap();
}

thread_local! {
    /// The generator [`on_ninja`] sweeps a scenario over (each test runs on its own thread).
    static SWEPT: std::cell::Cell<Option<Generator>> = const { std::cell::Cell::new(None) };
    /// Set by [`on_clang`]: build with Clang instead of the default compiler.
    static CLANG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The compilers [`build_tree`] configures with: Clang when [`on_clang`]
/// sweeps the scenario or `DIFF2TEST_ORACLE_CXX=clang` asks for it by hand,
/// else CMake's default (`cc`/`c++`: GCC on Debian), as `-D` arguments.
fn compiler_args() -> Vec<&'static str> {
    let clang = CLANG.with(|c| c.get())
        || match std::env::var("DIFF2TEST_ORACLE_CXX").as_deref() {
            Err(_) | Ok("default") => false,
            Ok("clang") => true,
            Ok(other) => panic!("DIFF2TEST_ORACLE_CXX={other:?}: expected default or clang"),
        };
    if !clang {
        return Vec::new();
    }
    common::require(
        "the Clang oracle scenarios (tests/oracle.rs, clang::*)",
        &[("clang", "clang"), ("clang++", "clang")],
    );
    vec!["-DCMAKE_C_COMPILER=clang", "-DCMAKE_CXX_COMPILER=clang++"]
}

/// The generator of scenarios that do not choose one: the swept one (see
/// [`on_ninja`]), else `DIFF2TEST_ORACLE_GENERATOR`
/// (`makefiles`, `ninja` or `ninja-multi`), else Unix Makefiles.
fn default_generator() -> Generator {
    if let Some(g) = SWEPT.with(|s| s.get()) {
        return g;
    }
    match std::env::var("DIFF2TEST_ORACLE_GENERATOR").as_deref() {
        Err(_) | Ok("makefiles") => Generator::Makefiles,
        Ok("ninja") => Generator::Ninja,
        Ok("ninja-multi") => Generator::NinjaMultiConfig,
        Ok(other) => {
            panic!("DIFF2TEST_ORACLE_GENERATOR={other:?}: expected makefiles, ninja or ninja-multi")
        }
    }
}

/// Runs the whole suite with real ctest; test name → passed. A test that was
/// not run (missing executable, failed fixture) counts as failed.
pub fn run_suite(build: &Path, junit: &Path, generator: Generator) -> BTreeMap<String, bool> {
    run_suite_traced(build, junit, generator, None)
}

/// [`run_suite`], under strace writing `log` when there is one.
pub fn run_suite_traced(
    build: &Path,
    junit: &Path,
    generator: Generator,
    log: Option<&Path>,
) -> BTreeMap<String, bool> {
    let mut cmd = match log {
        Some(log) => {
            let mut c = Command::new("strace");
            c.args(common::strace_args()).arg(log).arg("ctest");
            c
        }
        None => Command::new("ctest"),
    };
    cmd.current_dir(build)
        .args(["-j2", "--timeout", "60", "--output-junit"])
        .arg(junit);
    if generator == Generator::NinjaMultiConfig {
        cmd.args(["-C", "Debug"]);
    }
    // ctest exits non-zero when a test fails; that is a result, not an error.
    let out = cmd.output().expect("run ctest (apt-get install cmake)");
    let xml = std::fs::read_to_string(junit).unwrap_or_else(|e| {
        panic!(
            "ctest wrote no JUnit file {}: {e}\n{}\n{}",
            junit.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    common::parse_junit(&xml)
}

/// `diff2test record` of the BASE build from `log`: the record's text.
fn record_of(ctx: &Ctx, log: &Path) -> String {
    let b = &ctx.base_build;
    let mut args: Vec<String> = vec![
        "record".into(),
        "--source-dir".into(),
        ctx.src.display().to_string(),
        "--build-dir".into(),
        b.display().to_string(),
        "--strace".into(),
        log.display().to_string(),
    ];
    if ctx.config.is_some() {
        args.extend([
            "--ctest-json".into(),
            b.join("ctest.json").display().to_string(),
        ]);
    }
    let r = run_diff2test(&args);
    assert!(
        r.code == 0 || r.code == 3,
        "diff2test record failed: {r:#?}"
    );
    r.stdout
}

/// The binary under test: `DIFF2TEST_ORACLE_BIN`, or the cargo-built one.
fn diff2test_bin() -> PathBuf {
    match std::env::var_os("DIFF2TEST_ORACLE_BIN") {
        Some(p) => PathBuf::from(p),
        None => assert_cmd::cargo::cargo_bin("diff2test"),
    }
}

fn run_diff2test(args: &[String]) -> Run {
    let out = Command::new(diff2test_bin())
        .args(args)
        .env_remove("CI")
        .output()
        .expect("run diff2test");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn git(ctx: &Ctx, args: &[&str]) -> String {
    run_text(
        Command::new("git")
            .current_dir(&ctx.src)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args([
                "-c",
                "user.name=oracle",
                "-c",
                "user.email=oracle@example.invalid",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args),
    )
    .trim()
    .to_owned()
}

// ============================================================ shared C++ pieces

/// A test no scenario's change reaches (its program is [`Scenario::with_bystander`]'s).
const BYSTANDER: &str = "add_executable(other other.cpp)\nadd_test(NAME other COMMAND other)\n";

const PROLOGUE: &str =
    "cmake_minimum_required(VERSION 3.22)\nproject(oracle CXX)\nenable_testing()\n";

/// `int main` returning 0 iff `expr` holds (prints what it saw).
fn main_checking(includes: &str, expr: &str) -> String {
    format!(
        "{includes}\n#include <cstdio>\nint main() {{\n  bool ok = ({expr});\n  std::printf(\"{}: %s\\n\", ok ? \"ok\" : \"FAIL\");\n  return ok ? 0 : 1;\n}}\n",
        expr.replace('"', "\\\"")
    )
}

/// Loads a plugin and checks `value()` returns 42.
const LOAD_H: &str = r#"#pragma once
#include <dlfcn.h>
#include <cstdio>
static int check_plugin(const char* path) {
  if (!path) { std::fprintf(stderr, "no plugin path\n"); return 2; }
  void* h = dlopen(path, RTLD_NOW);
  if (!h) { std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror()); return 3; }
  using fn = int (*)();
  fn v = reinterpret_cast<fn>(dlsym(h, "value"));
  if (!v) { std::fprintf(stderr, "no value() in %s\n", path); return 4; }
  int got = v();
  std::printf("%s: value() = %d\n", path, got);
  return got == 42 ? 0 : 1;
}
"#;

const PLUG_V1: &str = "extern \"C\" int value() { return 42; }\n";
const PLUG_V2: &str = "extern \"C\" int value() { return 7; }\n";

/// Reads argv[1] and compares it with `want`.
fn file_equals_main(want: &str) -> String {
    format!(
        r#"#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {{
  if (argc < 2) return 2;
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) {{ std::fprintf(stderr, "cannot open %s\n", argv[1]); return 3; }}
  char buf[4096];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  std::printf("read: %s\n", buf);
  return std::strcmp(buf, "{want}") == 0 ? 0 : 1;
}}
"#
    )
}

/// Reads argv[1] and checks it contains argv[2].
const FILE_CONTAINS_MAIN: &str = r#"#include <cstdio>
#include <cstring>
#include <string>
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  FILE* f = std::fopen(argv[1], "rb");
  if (!f) { std::fprintf(stderr, "cannot open %s\n", argv[1]); return 3; }
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  bool ok = text.find(argv[2]) != std::string::npos;
  std::printf("%s %s %s\n", argv[1], ok ? "contains" : "LACKS", argv[2]);
  return ok ? 0 : 1;
}
"#;

/// Writes `text` to argv[1].
fn writer_main(text: &str) -> String {
    format!(
        r#"#include <cstdio>
int main(int argc, char** argv) {{
  if (argc < 2) return 2;
  FILE* f = std::fopen(argv[1], "wb");
  if (!f) return 3;
  std::fputs("{text}", f);
  return std::fclose(f) == 0 ? 0 : 4;
}}
"#
    )
}

// ================================================== class 1: fixtures, DEPENDS

fn data_flow_scenario(name: &str, producer: &str, consumer: &str, link: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(writer writer.cpp)\nadd_executable(reader reader.cpp)\n\
         add_test(NAME {producer} COMMAND writer ${{CMAKE_BINARY_DIR}}/db.txt)\n\
         add_test(NAME {consumer} COMMAND reader ${{CMAKE_BINARY_DIR}}/db.txt)\n{link}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("writer.cpp", &writer_main("v1\\n"))
        .file("reader.cpp", &file_equals_main("v1\\n"))
        .edit("writer.cpp", &writer_main("v2\\n"))
}

#[test]
fn oracle_fixture_setup_feeds_consumer() {
    let o = data_flow_scenario(
        "c01-fixtures",
        "db.setup",
        "db.read",
        "set_tests_properties(db.setup PROPERTIES FIXTURES_SETUP db)\n\
         set_tests_properties(db.read PROPERTIES FIXTURES_REQUIRED db)\n",
    )
    .run();
    o.assert_oracle();
    o.expect_subset(&["db.setup", "db.read"]);
}

#[test]
fn oracle_depends_producer_feeds_consumer() {
    let o = data_flow_scenario(
        "c01-depends",
        "producer",
        "consumer",
        "set_tests_properties(consumer PROPERTIES DEPENDS producer)\n",
    )
    .run();
    o.assert_oracle();
    o.expect_subset(&["producer", "consumer"]);
}

// ===================================================== class 2: plugin channels

/// One way a test gets at the MODULE `plug` besides test A's argument.
struct Channel {
    cmake: String,
    files: Vec<(&'static str, &'static str)>,
}

/// A loader executable `exe` and its test `test`. With `deps`, the exe also gets
/// `add_dependencies(<exe> plug)`: that codemodel edge lets the reverse walk
/// reach the test through the graph, so the per-channel scenarios leave it out
/// (the plugin is built by `all` anyway and only needed when the test runs).
/// A program that loads every library in the `myplugins/` subdirectory of
/// the directory `base` (a C++ expression of type `std::string`) says.
fn loader_dir_main(base: &str) -> String {
    format!(
        "#include \"load.h\"\n#include <dirent.h>\n#include <unistd.h>\n#include <cstdlib>\n#include <string>\n\
         int main() {{\n  std::string dir = {base} + \"/myplugins\";\n  \
         int worst = 0, n = 0;\n  if (DIR* d = opendir(dir.c_str())) {{\n    \
         while (dirent* e = readdir(d)) {{\n      std::string f = e->d_name;\n      \
         if (f.size() > 3 && f.compare(f.size() - 3, 3, \".so\") == 0) {{\n        \
         int r = check_plugin((dir + \"/\" + f).c_str());\n        n++;\n        if (r) worst = r;\n      }}\n    }}\n    \
         closedir(d);\n  }}\n  return n ? worst : 5;\n}}\n"
    )
}

/// The first directory `$PLUGIN_DIRS` lists (a `:`-separated list).
const FIRST_OF_PLUGIN_DIRS: &str =
    "[] { std::string dirs = std::getenv(\"PLUGIN_DIRS\"); return dirs.substr(0, dirs.find(':')); }()";

/// The directory of the running program, as a loader that looks beside
/// itself finds it (`/proc/self/exe`).
const OWN_DIRECTORY: &str =
    "[] { char b[4096]; ssize_t n = readlink(\"/proc/self/exe\", b, sizeof b - 1); \
     std::string p(b, n > 0 ? n : 0); return p.substr(0, p.rfind('/')); }()";

fn loader_exe(exe: &str, test: &str, deps: bool, test_args: &str) -> String {
    // Unless the channel says otherwise, the test runs in `run/`, which holds
    // no plugin (a MODULE library below a test's working directory is reached).
    let wd = if test_args.contains("WORKING_DIRECTORY") {
        ""
    } else {
        " WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/run"
    };
    let mut s = format!(
        "add_executable({exe} {exe}.cpp)\n\
         target_include_directories({exe} PRIVATE ${{CMAKE_SOURCE_DIR}})\n\
         target_link_libraries({exe} PRIVATE ${{CMAKE_DL_LIBS}})\n\
         add_test(NAME {test} COMMAND {exe}{test_args}{wd})\n"
    );
    if deps {
        s.push_str(&format!("add_dependencies({exe} plug)\n"));
    }
    s
}

/// `text`, kept for the rest of the run (a scenario's file contents).
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// A channel whose test's ENVIRONMENT names plugin directories
/// (`PLUGIN_DIRS=dirs`, a `:`-separated list, as QT_PLUGIN_PATH) and whose
/// program loads every library in `myplugins/` below the first; `setup` is
/// the CMake that puts the plugin (or a copy, or a link) there.
fn dir_channel(test: char, setup: &str, dirs: &str, deps: bool) -> Channel {
    let exe = leak(format!("loader_dir_{}", test.to_ascii_lowercase()));
    let source = leak(format!("{exe}.cpp"));
    Channel {
        cmake: format!(
            "{setup}{}set_tests_properties({test} PROPERTIES ENVIRONMENT \"PLUGIN_DIRS={dirs}\")\n",
            loader_exe(exe, &test.to_string(), deps, "")
        ),
        files: vec![(source, leak(loader_dir_main(FIRST_OF_PLUGIN_DIRS)))],
    }
}

fn channel(test: char, deps: bool) -> Channel {
    match test {
        // ENVIRONMENT_MODIFICATION names the plugin; the program dlopen()s getenv("PLUG").
        'B' => Channel {
            cmake: format!(
                "{}set_tests_properties(B PROPERTIES ENVIRONMENT_MODIFICATION \"PLUG=set:$<TARGET_FILE:plug>\")\n",
                loader_exe("loader_env", "B", deps, "")
            ),
            files: vec![(
                "loader_env.cpp",
                "#include \"load.h\"\n#include <cstdlib>\nint main() { return check_plugin(std::getenv(\"PLUG\")); }\n",
            )],
        },
        // A build-tree header written by file(GENERATE) holds the path.
        'C' => Channel {
            cmake: format!(
                "file(GENERATE OUTPUT ${{CMAKE_BINARY_DIR}}/gen/plugpath.h CONTENT \"#define PLUG_PATH \\\"$<TARGET_FILE:plug>\\\"\\n\")\n{}\
                 target_include_directories(loader_gen PRIVATE ${{CMAKE_BINARY_DIR}}/gen)\n",
                loader_exe("loader_gen", "C", deps, "")
            ),
            files: vec![(
                "loader_gen.cpp",
                "#include \"load.h\"\n#include \"plugpath.h\"\nint main() { return check_plugin(PLUG_PATH); }\n",
            )],
        },
        // WORKING_DIRECTORY is the plugin's directory; the program dlopen()s "./libplug.so".
        'D' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/plugins)\n{}",
                loader_exe(
                    "loader_cwd",
                    "D",
                    deps,
                    " WORKING_DIRECTORY $<TARGET_FILE_DIR:plug>"
                )
            ),
            files: vec![(
                "loader_cwd.cpp",
                "#include \"load.h\"\nint main() { return check_plugin(\"./libplug.so\"); }\n",
            )],
        },
        // A PRIVATE compile definition of a linked STATIC library holds the path.
        'E' => Channel {
            cmake: format!(
                "add_library(pathlib STATIC pathlib.cpp)\n\
                 target_compile_definitions(pathlib PRIVATE \"PLUG_PATH=\\\"$<TARGET_FILE:plug>\\\"\")\n\
                 {}{}target_link_libraries(loader_lib PRIVATE pathlib)\n",
                if deps { "add_dependencies(pathlib plug)\n" } else { "" },
                loader_exe("loader_lib", "E", deps, "")
            ),
            files: vec![
                ("pathlib.cpp", "const char* plug_path() { return PLUG_PATH; }\n"),
                (
                    "loader_lib.cpp",
                    "#include \"load.h\"\nconst char* plug_path();\nint main() { return check_plugin(plug_path()); }\n",
                ),
            ],
        },
        // -DPLUG_PATH=... through target_compile_options of the test's own executable.
        'F' => Channel {
            cmake: format!(
                "{}target_compile_options(loader_opt PRIVATE \"-DPLUG_PATH=\\\"$<TARGET_FILE:plug>\\\"\")\n",
                loader_exe("loader_opt", "F", deps, "")
            ),
            files: vec![(
                "loader_opt.cpp",
                "#include \"load.h\"\nint main() { return check_plugin(PLUG_PATH); }\n",
            )],
        },
        // ENVIRONMENT names a list of plugin directories, as QT_PLUGIN_PATH
        // does (the first element ours, then another); the program loads
        // every library in the `myplugins/` subdirectory of the first, which
        // is all that names the plugin.
        'G' => dir_channel(
            'G',
            "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins/myplugins)\n",
            "${CMAKE_BINARY_DIR}/plugins:/usr/lib",
            deps,
        ),
        // A POST_BUILD step copies the plugin into a directory the test
        // names (as projects gather plugins for QT_PLUGIN_PATH); the program
        // loads every library there. The copy is no artifact and no declared
        // output: nothing in the evidence says what it was made from.
        'H' => dir_channel(
            'H',
            "add_custom_command(TARGET plug POST_BUILD\n  \
             COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/gathered/myplugins\n  \
             COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:plug> ${CMAKE_BINARY_DIR}/gathered/myplugins/)\n",
            "${CMAKE_BINARY_DIR}/gathered",
            deps,
        ),
        // The same, with a symlink to the artifact instead of a copy.
        'I' => dir_channel(
            'I',
            "add_custom_command(TARGET plug POST_BUILD\n  \
             COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/linked/myplugins\n  \
             COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:plug> ${CMAKE_BINARY_DIR}/linked/myplugins/libplug.so)\n",
            "${CMAKE_BINARY_DIR}/linked",
            deps,
        ),
        // The named directory is a symlink (made at configure time) to the
        // one the plugin is built in.
        'J' => dir_channel(
            'J',
            "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/real-plugins/myplugins)\n\
             file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/real-plugins)\n\
             file(CREATE_LINK real-plugins ${CMAKE_BINARY_DIR}/plugin-view SYMBOLIC)\n",
            "${CMAKE_BINARY_DIR}/plugin-view",
            deps,
        ),
        // The named directory holds a symlink to the directory the plugin
        // is built in (one level down, as a loader looks).
        'K' => dir_channel(
            'K',
            "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/built/myplugins)\n\
             file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/built/myplugins ${CMAKE_BINARY_DIR}/linked-dirs)\n\
             file(CREATE_LINK ../built/myplugins ${CMAKE_BINARY_DIR}/linked-dirs/myplugins SYMBOLIC)\n",
            "${CMAKE_BINARY_DIR}/linked-dirs",
            deps,
        ),
        // As G, with a sibling directory whose name starts with the named
        // one's (`plugins-old/`, which sorts between `plugins` and
        // `plugins/`) holding another MODULE library.
        'P' => dir_channel(
            'P',
            "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins/myplugins)\n\
             add_library(old_plug MODULE plug.cpp)\n\
             set_target_properties(old_plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins-old)\n",
            "${CMAKE_BINARY_DIR}/plugins",
            deps,
        ),
        // The plugin is built below the program's own directory, which the
        // program finds from `/proc/self/exe` (as Qt's library paths start
        // with the application's directory): nothing names it.
        'L' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin/myplugins)\n{}",
                loader_exe("loader_beside", "L", deps, "")
            ),
            files: vec![("loader_beside.cpp", leak(loader_dir_main(OWN_DIRECTORY)))],
        },
        // The plugin is built below the test's working directory, and the
        // program loads what `./myplugins/` holds: nothing names it.
        'M' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/wd/myplugins)\n{}",
                loader_exe(
                    "loader_wd",
                    "M",
                    deps,
                    " WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/wd"
                )
            ),
            files: vec![("loader_wd.cpp", leak(loader_dir_main("std::string(\".\")")))],
        },
        // A program in `other/`, which holds no plugin, that loads nothing.
        'N' => Channel {
            cmake: format!(
                "{}set_target_properties(plain PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/other)\n",
                loader_exe("plain", "N", deps, "")
            ),
            files: vec![("plain.cpp", "int main() { return 0; }\n")],
        },
        // A program that loads nothing, run in the directory above the
        // source and build trees (which holds the build tree, and so plug).
        'O' => Channel {
            cmake: format!(
                "{}set_target_properties(plain_above PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/other)\n",
                loader_exe(
                    "plain_above",
                    "O",
                    deps,
                    " WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/.."
                )
            ),
            files: vec![("plain_above.cpp", "int main() { return 0; }\n")],
        },
        // A program runs another by a path it computes (its bytes hold the
        // other's file name); that one loads the plugins beside itself.
        'Q' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/tools/myplugins)\n\
                 add_executable(tool_beside tool_beside.cpp)\n\
                 target_include_directories(tool_beside PRIVATE ${{CMAKE_SOURCE_DIR}})\n\
                 target_link_libraries(tool_beside PRIVATE ${{CMAKE_DL_LIBS}})\n\
                 set_target_properties(tool_beside PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/tools)\n{}",
                loader_exe("runner", "Q", deps, "")
            ),
            files: vec![
                ("tool_beside.cpp", leak(loader_dir_main(OWN_DIRECTORY))),
                (
                    "runner.cpp",
                    "#include <unistd.h>\n#include <string>\nint main() {\n  char b[4096];\n  \
                     ssize_t n = readlink(\"/proc/self/exe\", b, sizeof b - 1);\n  std::string p(b, n > 0 ? n : 0);\n  \
                     std::string tool = p.substr(0, p.rfind('/')) + \"/../tools/tool_beside\";\n  \
                     execl(tool.c_str(), tool.c_str(), (char*)nullptr);\n  return 9;\n}\n",
                ),
            ],
        },
        // A plugin built as a SHARED library that no target links, below
        // the program's own directory (the program looks beside itself).
        'R' => Channel {
            cmake: format!(
                "add_library(splug SHARED plug.cpp)\n\
                 set_target_properties(splug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin/myplugins)\n{}",
                loader_exe("loader_shared", "R", deps, "")
            ),
            files: vec![("loader_shared.cpp", leak(loader_dir_main(OWN_DIRECTORY)))],
        },
        // A SHARED library below the programs' directory that a program
        // (`suser`, no test) links, and a test whose program loads nothing.
        'S' => Channel {
            cmake: format!(
                "add_library(slinked SHARED plug.cpp)\n\
                 set_target_properties(slinked PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin/myplugins)\n\
                 add_executable(suser plain_s.cpp)\ntarget_link_libraries(suser PRIVATE slinked)\n{}",
                loader_exe("plain_s", "S", deps, "")
            ),
            files: vec![("plain_s.cpp", "int main() { return 0; }\n")],
        },
        // The plugin is built in `lib/myplugins`, and the program (in `bin/`)
        // loads what `<its own directory>/../lib/myplugins` holds: only the
        // climbing suffix "/../lib" in its bytes says where.
        'T' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/lib/myplugins)\n{}",
                loader_exe("loader_climb", "T", deps, "")
            ),
            files: vec![(
                "loader_climb.cpp",
                leak(loader_dir_main(&format!("{OWN_DIRECTORY} + \"/../lib\""))),
            )],
        },
        // A program whose bytes climb to a directory that holds no plugin.
        'U' => Channel {
            cmake: loader_exe("plain_climb", "U", deps, ""),
            files: vec![(
                "plain_climb.cpp",
                "#include <cstdio>\nint main(int argc, char**) { if (argc > 5) std::puts(\"/../share/data\"); return 0; }\n",
            )],
        },
        // As T, but the climb is in a SHARED library the program links (a
        // plugin manager starting from `/proc/self/exe`), built in
        // `deep/mgr/`: "/../lib" from the library's own directory leads to
        // `deep/lib/`, which holds nothing, from the program's to the plugin.
        'V' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/lib/myplugins)\n\
                 add_library(plugmgr SHARED plugmgr.cpp)\n\
                 set_target_properties(plugmgr PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/deep/mgr)\n{}\
                 target_link_libraries(loader_mgr PRIVATE plugmgr)\n",
                loader_exe("loader_mgr", "V", deps, "")
            ),
            files: vec![
                (
                    "plugmgr.cpp",
                    leak(format!(
                        "#include <unistd.h>\n#include <string>\nstd::string plugin_dir() {{ return {OWN_DIRECTORY} + \"/../lib\"; }}\n"
                    )),
                ),
                (
                    "loader_mgr.cpp",
                    leak(loader_dir_main(
                        "[] { extern std::string plugin_dir(); return plugin_dir(); }()",
                    )),
                ),
            ],
        },
        // A SHARED library the program links, built in `libs/`, loads what
        // `myplugins/` beside itself holds (it finds itself with dladdr):
        // nothing names the plugin, and no byte climbs.
        'W' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/libs/myplugins)\n\
                 add_library(selfmgr SHARED selfmgr.cpp)\n\
                 set_target_properties(selfmgr PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/libs)\n\
                 target_link_libraries(selfmgr PRIVATE ${{CMAKE_DL_LIBS}})\n{}\
                 target_link_libraries(loader_self PRIVATE selfmgr)\n",
                loader_exe("loader_self", "W", deps, "")
            ),
            files: vec![
                (
                    "selfmgr.cpp",
                    "#include <dlfcn.h>\n#include <string>\nstatic int anchor;\n\
                     std::string own_library_directory() {\n  Dl_info i;\n  \
                     if (!dladdr(static_cast<void*>(&anchor), &i) || !i.dli_fname) return \"\";\n  \
                     std::string p = i.dli_fname;\n  return p.substr(0, p.rfind('/'));\n}\n",
                ),
                (
                    "loader_self.cpp",
                    leak(loader_dir_main(
                        "[] { extern std::string own_library_directory(); return own_library_directory(); }()",
                    )),
                ),
            ],
        },
        // Programs in `bin/` that climb to `lib/` without a climbing path in
        // their bytes, by a function that gives a directory's parent (X:
        // std::filesystem's parent_path(), Y: dirname()) or by a bare ".."
        // component (Z), and load what `lib/myplugins/` holds.
        'X' | 'Y' | 'Z' => {
            let (exe, head, base) = match test {
                'X' => (
                    "loader_parent",
                    "#include <filesystem>\n",
                    format!("std::filesystem::path({OWN_DIRECTORY}).parent_path().string() + \"/lib\""),
                ),
                'Y' => (
                    "loader_dirname",
                    "#include <libgen.h>\n#include <vector>\n",
                    format!(
                        "[] {{ std::string own = {OWN_DIRECTORY}; std::vector<char> b(own.begin(), own.end()); \
                         b.push_back(0); return std::string(dirname(b.data())); }}() + \"/lib\""
                    ),
                ),
                _ => (
                    "loader_dotdot",
                    "",
                    format!("{OWN_DIRECTORY} + \"/\" + std::string(\"..\") + \"/lib\""),
                ),
            };
            Channel {
                cmake: format!(
                    "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/lib/myplugins)\n{}",
                    loader_exe(exe, &test.to_string(), deps, "")
                ),
                files: vec![(
                    leak(format!("{exe}.cpp")),
                    leak(format!("{head}{}", loader_dir_main(&base))),
                )],
            }
        }
        // A program in `bin/` whose test runs in `run/sub/` and loads what
        // `../../lib/myplugins` holds, opened as it stands: relative to the
        // working directory (from the program's own directory the same climb
        // leaves the build tree).
        'a' => Channel {
            cmake: format!(
                "set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/lib/myplugins)\n\
                 file(MAKE_DIRECTORY ${{CMAKE_BINARY_DIR}}/run/sub)\n{}",
                loader_exe(
                    "loader_wd_climb",
                    "a",
                    deps,
                    " WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/run/sub"
                )
            ),
            files: vec![(
                "loader_wd_climb.cpp",
                leak(loader_dir_main("std::string(\"../../lib\")")),
            )],
        },
        // The test names a file that file(GENERATE) writes at generate time
        // (one per configuration), holding the plugin's path; the program
        // reads the path from it.
        'b' => Channel {
            cmake: format!(
                "file(GENERATE OUTPUT ${{CMAKE_BINARY_DIR}}/run/plugins-$<CONFIG>.txt CONTENT \"$<TARGET_FILE:plug>\")\n{}",
                loader_exe("loader_list", "b", deps, " ${CMAKE_BINARY_DIR}/run/plugins-$<CONFIG>.txt")
            ),
            files: vec![(
                "loader_list.cpp",
                "#include \"load.h\"\n#include <fstream>\n#include <string>\n\
                 int main(int argc, char** argv) {\n  if (argc < 2) return 2;\n  \
                 std::ifstream in(argv[1]);\n  std::string path;\n  \
                 if (!std::getline(in, path)) return 6;\n  return check_plugin(path.c_str());\n}\n",
            )],
        },
        other => panic!("no channel {other}"),
    }
}

/// MODULE `plug` (`value()` is 42, 7 at HEAD) and test A (`loader
/// $<TARGET_FILE:plug>`, so the plugin *is* named by one test), plus `channels`.
/// Programs are built in `bin/` and tests run in `run/`, so that a plugin is
/// below neither unless a channel puts it there (SAFETY-CONTRACT §4.6).
fn plugin_scenario(name: &str, channels: &[Channel]) -> Scenario {
    let mut cmake = format!(
        "{PROLOGUE}set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin)\n\
         file(MAKE_DIRECTORY ${{CMAKE_BINARY_DIR}}/run)\n\
         add_library(plug MODULE plug.cpp)\n\
         add_executable(loader loader.cpp)\n\
         target_link_libraries(loader PRIVATE ${{CMAKE_DL_LIBS}})\n\
         add_dependencies(loader plug)\n\
         add_test(NAME A COMMAND loader $<TARGET_FILE:plug> WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}}/run)\n"
    );
    for c in channels {
        cmake.push_str(&c.cmake);
    }
    let mut s = Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("load.h", LOAD_H)
        .file("plug.cpp", PLUG_V1)
        .file(
            "loader.cpp",
            "#include \"load.h\"\nint main(int argc, char** argv) { return check_plugin(argc > 1 ? argv[1] : nullptr); }\n",
        );
    for c in channels {
        for (p, text) in &c.files {
            s = s.file(p, text);
        }
    }
    s.edit("plug.cpp", PLUG_V2)
}

/// [`plugin_scenario`] with the one channel `c`: the oracle holds and the
/// subset is exactly test A (which names the plugin) and the channel's test.
fn expect_channel_subset(name: &str, c: char) {
    let o = plugin_scenario(name, &[channel(c, false)]).run();
    o.assert_oracle();
    o.expect_subset(&["A", &c.to_string()]);
}

/// [`plugin_scenario`] with the channels `chans` (none with
/// `add_dependencies`): the oracle holds, the subset is exactly `want`, and
/// stderr names each of `stderr`.
fn expect_channels(name: &str, chans: &str, want: &[&str], stderr: &[&str]) {
    let chans: Vec<Channel> = chans.chars().map(|c| channel(c, false)).collect();
    let o = plugin_scenario(name, &chans).run();
    o.assert_oracle();
    o.expect_exact_subset(want);
    o.expect_stderr(stderr);
}

/// The chain says why the test reaches the plugin: what its channel names.
#[test]
fn oracle_plugin_via_environment_modification() {
    expect_channels(
        "c02-env",
        "B",
        &["A", "B"],
        &["-> target plug -> test B, which names "],
    );
}

#[test]
fn oracle_plugin_via_generated_header() {
    expect_channel_subset("c02-genheader", 'C');
}

#[test]
fn oracle_plugin_via_working_directory() {
    expect_channel_subset("c02-cwd", 'D');
}

/// A directory the test names (the first of a list in an environment
/// variable, as `QT_PLUGIN_PATH`) holds the plugin one level down: plugin
/// loaders look in subdirectories.
#[test]
fn oracle_plugin_in_a_subdirectory_of_a_named_directory() {
    expect_channel_subset("c02-plugin-subdir", 'G');
}

/// The plugin reaches the test only as a POST_BUILD copy in the directory
/// it names: a loadable file there that the evidence does not explain.
/// (Before the walk of named directories: `exit 0 omits tests whose result
/// changed: ["H"]`.)
#[test]
fn oracle_plugin_copied_post_build_into_a_named_directory() {
    let o = plugin_scenario("c02-plugin-gathered", &[channel('H', false)]).run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "TEST_READS_UNKNOWN_BUILD_FILE");
    o.expect_stderr(&["/gathered, which holds ", "/gathered/myplugins/libplug.so"]);
}

/// The copy rewritten after the catalogue was listed (a rebuild after the
/// listing) is not taken for a test's output.
#[test]
fn oracle_plugin_copied_post_build_after_the_listing() {
    let o = plugin_scenario("c02-plugin-gathered-late", &[channel('H', false)])
        .after_head_build(|ctx| {
            let copy = ctx.build.join("gathered/myplugins/libplug.so");
            let later = filetime::FileTime::from_unix_time(
                filetime::FileTime::now().unix_seconds() + 120,
                0,
            );
            filetime::set_file_mtime(copy, later).unwrap();
        })
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "TEST_READS_UNKNOWN_BUILD_FILE");
}

/// A sibling of the named directory whose name extends it (`plugins-old`)
/// does not hide what the named one holds. (Before the fix: `exit 0 omits
/// tests whose result changed: ["P"]`.)
#[test]
fn oracle_plugin_in_a_named_directory_beside_a_longer_named_sibling() {
    expect_channel_subset("c02-plugin-sibling", 'P');
}

/// The directory the test names is a symlink to the one holding the
/// plugin: its artifacts are looked up under the real path too.
#[test]
fn oracle_plugin_in_a_directory_named_through_a_symlink() {
    expect_channel_subset("c02-plugin-view", 'J');
}

/// The directory the test names holds a symlink to the plugin's directory:
/// what that directory holds is looked at too.
#[test]
fn oracle_plugin_in_a_symlinked_subdirectory_of_a_named_directory() {
    expect_channel_subset("c02-plugin-linked-dir", 'K');
}

/// With `opaque = "select"` only the test that names the directory is
/// forced in; the others are still decided by the evidence.
#[test]
fn oracle_plugin_copied_post_build_with_opaque_select() {
    let o = plugin_scenario(
        "c02-plugin-gathered-select",
        &[channel('H', false), channel('B', false)],
    )
    .policy("opaque = \"select\"\n")
    .run();
    o.assert_oracle();
    o.expect_subset(&["A", "B", "H"]);
    o.expect_stderr(&["forced H: OPAQUE_BOUNDARY: TEST_READS_UNKNOWN_BUILD_FILE"]);
}

/// The plugin is below the program's own directory and nothing names it:
/// a loader that looks beside itself finds it. (Before the rule:
/// `exit 0 omits tests whose result changed: ["L"]`.)
#[test]
fn oracle_plugin_below_the_program_directory() {
    expect_channel_subset("c02-plugin-beside", 'L');
}

/// The plugin is below the test's working directory and nothing names it.
/// (Before the rule: `exit 0 omits tests whose result changed: ["M"]`.)
#[test]
fn oracle_plugin_below_the_working_directory() {
    expect_channel_subset("c02-plugin-in-wd", 'M');
}

/// The rule is the directory's, not the suite's: a test whose program and
/// working directory hold no plugin is still left out.
#[test]
fn oracle_plugin_below_one_program_directory_only() {
    expect_channels(
        "c02-plugin-beside-other",
        "LN",
        &["A", "L"],
        &[
            "may load MODULE library ",
            "/bin/myplugins/libplug.so, below the directory of its program ",
        ],
    );
}

/// A program that only the bytes of the test's program name loads the
/// plugin beside itself: what it may load includes that plugin. (Before:
/// `exit 0 omits tests whose result changed: ["Q"]`.)
#[test]
fn oracle_plugin_below_the_directory_of_a_program_named_in_bytes() {
    expect_channels(
        "c02-plugin-beside-run",
        "Q",
        &["A", "Q"],
        &["\"runner\" -> \"tool_beside\" -> \"plug\""],
    );
}

/// A plugin built as a SHARED library that nothing links is a plugin too.
/// (Before: `exit 0 omits tests whose result changed: ["R"]`.)
/// A loader that climbs from its own directory (`<bin>/../lib`, the
/// bin/lib layout) to the plugins; a program whose bytes climb to a
/// directory without plugins stays out. (Without the climbing paths of
/// SAFETY-CONTRACT §4.6: `exit 0 omits tests whose result changed: ["T"]`.)
#[test]
fn oracle_plugin_below_a_directory_the_program_climbs_to() {
    expect_channels(
        "c02-climb",
        "TU",
        &["A", "T"],
        &[
            "forced T: MAY_LOAD_AFFECTED",
            "\"loader_climb\" -> \"plug\" (below ",
            "/build/lib, which \"/../lib\" in its bytes names)",
        ],
    );
}

/// The climb is in a linked SHARED library's bytes and starts from the
/// program's directory. (Joined only to the library's own directory:
/// `exit 0 omits tests whose result changed: ["V"]`.)
#[test]
fn oracle_plugin_below_a_directory_a_linked_library_climbs_to() {
    expect_channels(
        "c02-climb-lib",
        "V",
        &["A", "V"],
        &[
            "forced V: MAY_LOAD_AFFECTED",
            "\"loader_mgr\" -> \"plug\" (below ",
            "/build/lib, which \"/../lib\" in linked library \"plugmgr\"'s bytes names)",
        ],
    );
}

/// A linked SHARED library that loads the plugins beside itself. (Without
/// a library's own directory: `exit 0 omits tests whose result changed: ["W"]`.)
#[test]
fn oracle_plugin_below_the_directory_of_a_linked_library() {
    expect_channels(
        "c02-beside-lib",
        "W",
        &["A", "W"],
        &[
            "forced W: MAY_LOAD_AFFECTED",
            "\"selfmgr\" -> \"plug\" (below ",
            "/build/libs, the directory of this library)",
        ],
    );
}

/// Programs that climb by a parent-directory function or a bare ".." (no
/// climbing path in their bytes) may load any plugin. (Without unbounded
/// climbs: `exit 0 omits tests whose result changed: ["X", "Y", "Z"]`.)
#[test]
fn oracle_plugin_reached_by_an_unbounded_climb() {
    expect_channels(
        "c02-parent",
        "XYZ",
        &["A", "X", "Y", "Z"],
        &[
            "forced X: MAY_LOAD_AFFECTED",
            "\"loader_parent\" -> \"plug\" (any plugin: std::filesystem::path::parent_path() in its bytes climbs out of every directory it starts from)",
            "\"loader_dirname\" -> \"plug\" (any plugin: dirname() in its bytes climbs",
            "\"loader_dotdot\" -> \"plug\" (any plugin: \"..\" in its bytes climbs",
        ],
    );
}

/// A relative climbing path opened from the test's working directory. (Joined
/// only to the program's directory: `exit 0 omits tests whose result changed: ["a"]`.)
#[test]
fn oracle_plugin_below_a_directory_the_program_climbs_to_from_the_working_directory() {
    expect_channels(
        "c02-climb-wd",
        "a",
        &["A", "a"],
        &[
            "forced a: MAY_LOAD_AFFECTED",
            "\"loader_wd_climb\" -> \"plug\" (below ",
            "/build/lib, which \"../../lib\" in its bytes names from the test's working directory ",
        ],
    );
}

/// The plugin's path is in a file the test names, written by file(GENERATE).
/// (Without reading the files a test names: `exit 0 omits tests whose result
/// changed: ["b"]`.)
#[test]
fn oracle_plugin_path_read_from_a_generated_file_the_test_names() {
    expect_channels(
        "c02-listfile",
        "b",
        &["A", "b"],
        &[
            "-> target plug -> test b, which names ",
            "/build/run/plugins-",
            ".txt, which names artifact",
        ],
    );
}

#[test]
fn oracle_shared_plugin_below_the_program_directory() {
    expect_channels(
        "c02-shared-plugin-beside",
        "R",
        &["A", "R"],
        &["may load SHARED library that no target links "],
    );
}

/// A SHARED library that a program links is not taken for a plugin: the
/// test whose program sits above it is still left out.
#[test]
fn oracle_linked_shared_library_below_the_program_directory_is_no_plugin() {
    expect_channels("c02-linked-shared-beside", "S", &["A"], &[]);
}

/// A working directory outside the build tree does not reach into the build
/// tree below it: a test run above both trees is still left out.
#[test]
fn oracle_working_directory_above_the_build_tree_reaches_no_plugin_in_it() {
    expect_channels("c02-wd-above-build", "O", &["A"], &[]);
}

/// A POST_BUILD symlink to the artifact in the named directory is the
/// artifact: the exact subset.
#[test]
fn oracle_plugin_linked_post_build_into_a_named_directory() {
    expect_channels(
        "c02-plugin-linked",
        "I",
        &["A", "I"],
        &["-> target plug -> test I"],
    );
}

#[test]
fn oracle_plugin_via_static_library_definition() {
    expect_channel_subset("c02-libdef", 'E');
}

#[test]
fn oracle_plugin_via_compile_options() {
    expect_channel_subset("c02-copts", 'F');
}

/// Every channel at once, each exe with `add_dependencies(<exe> plug)`: the
/// graph edge already reaches them all (a guard that the fix keeps a subset).
#[test]
fn oracle_all_channels_with_add_dependencies() {
    let chans: Vec<Channel> = "BCDEF".chars().map(|c| channel(c, true)).collect();
    let o = plugin_scenario("c02-all-deps", &chans).run();
    o.assert_oracle();
    o.expect_subset(&["A", "B", "C", "D", "E", "F"]);
}

#[test]
fn oracle_untested_executables_linking_a_tested_library() {
    let o = Scenario::new("c02-untested-exes")
        .file(
            "CMakeLists.txt",
            &format!(
                "{PROLOGUE}add_library(lib STATIC lib.cpp)\n\
                 add_executable(lib_test lib_test.cpp)\ntarget_link_libraries(lib_test PRIVATE lib)\n\
                 add_test(NAME lib.t COMMAND lib_test)\n\
                 add_executable(example example.cpp)\ntarget_link_libraries(example PRIVATE lib)\n\
                 add_executable(fuzzer fuzzer.cpp)\ntarget_link_libraries(fuzzer PRIVATE lib)\n"
            ),
        )
        .file("lib.cpp", "int lib_value() { return 1; }\n")
        .file(
            "lib_test.cpp",
            &main_checking("int lib_value();", "lib_value() == 1"),
        )
        .file(
            "example.cpp",
            "#include <cstdio>\nint lib_value();\nint main() { std::printf(\"%d\\n\", lib_value()); }\n",
        )
        .file(
            "fuzzer.cpp",
            "int lib_value();\nint main() { return lib_value() > 100; }\n",
        )
        .edit("lib.cpp", "int lib_value() { return 2; }\n")
        .run();
    o.assert_oracle();
    o.expect_subset(&["lib.t"]);
}

// ======================================================= class 3: named path

#[test]
fn oracle_header_named_verbatim_as_test_argument() {
    let cmake = format!(
        "{PROLOGUE}add_executable(api_compile api_compile.cpp)\n\
         target_include_directories(api_compile PRIVATE ${{CMAKE_SOURCE_DIR}}/include)\n\
         add_test(NAME api.compile COMMAND api_compile)\n\
         add_executable(text_check text_check.cpp)\n\
         add_test(NAME api.text COMMAND text_check ${{CMAKE_SOURCE_DIR}}/include/api.h API_STABLE_V1)\n"
    );
    let o = Scenario::new("c03-named-path")
        .file("CMakeLists.txt", &cmake)
        .file(
            "include/api.h",
            "#pragma once\n// marker: API_STABLE_V1\ninline int api_version() { return 1; }\n",
        )
        .file(
            "api_compile.cpp",
            &main_checking("#include \"api.h\"", "api_version() == 1"),
        )
        .file("text_check.cpp", FILE_CONTAINS_MAIN)
        .edit(
            "include/api.h",
            "#pragma once\n// marker: removed\ninline int api_version() { return 1; }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_subset(&["api.compile", "api.text"]);
}

// ================================================== class 4: build-tree copies

/// `copy.user` includes `<COPY_NAME>` from `BUILD/sdk/include` only; `direct.user`
/// includes the source `include/api.h`. Both check `API_VALUE == 1`.
fn copies_scenario(name: &str, copy_cmake: &str, copy_name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}{copy_cmake}\
         add_executable(copy_user copy_user.cpp)\n\
         target_include_directories(copy_user PRIVATE ${{CMAKE_BINARY_DIR}}/sdk/include)\n\
         add_test(NAME copy.user COMMAND copy_user)\n\
         add_executable(direct_user direct_user.cpp)\n\
         target_include_directories(direct_user PRIVATE ${{CMAKE_SOURCE_DIR}}/include)\n\
         add_test(NAME direct.user COMMAND direct_user)\n"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("include/api.h", "#pragma once\n#define API_VALUE 1\n")
        .file(
            "copy_user.cpp",
            &main_checking(&format!("#include <{copy_name}>"), "API_VALUE == 1"),
        )
        .file(
            "direct_user.cpp",
            &main_checking("#include \"api.h\"", "API_VALUE == 1"),
        )
        .edit("include/api.h", "#pragma once\n#define API_VALUE 2\n")
        .edits_in_a_later_second()
}

#[test]
fn oracle_file_copy_of_include_dir() {
    let o = copies_scenario(
        "c04-file-copy",
        "file(COPY include/ DESTINATION ${CMAKE_BINARY_DIR}/sdk/include)\n",
        "api.h",
    )
    .run();
    o.assert_oracle();
    o.expect_subset(&["copy.user", "direct.user"]);
}

#[test]
fn oracle_configure_file_copyonly() {
    let o = copies_scenario(
        "c04-configure-copyonly",
        "configure_file(include/api.h ${CMAKE_BINARY_DIR}/sdk/include/api.h COPYONLY)\n",
        "api.h",
    )
    .run();
    o.assert_oracle();
    o.expect_subset_or_fallback(&["copy.user", "direct.user"]);
}

#[test]
fn oracle_file_copy_file_renamed() {
    let o = copies_scenario(
        "c04-copy-file-renamed",
        "file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/sdk/include)\n\
         file(COPY_FILE ${CMAKE_SOURCE_DIR}/include/api.h ${CMAKE_BINARY_DIR}/sdk/include/api_copy.h)\n",
        "api_copy.h",
    )
    .run();
    o.assert_oracle();
    o.expect_subset_or_fallback(&["copy.user", "direct.user"]);
}

#[test]
fn oracle_configured_header_does_not_cost_the_subset() {
    let cmake = format!(
        "{PROLOGUE}set(CFG_VALUE 1)\n\
         configure_file(config.h.in ${{CMAKE_BINARY_DIR}}/config.h)\n\
         add_executable(t1 t1.cpp)\n\
         target_include_directories(t1 PRIVATE ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME t1 COMMAND t1)\n\
         add_executable(t2 t2.cpp)\n\
         target_include_directories(t2 PRIVATE ${{CMAKE_SOURCE_DIR}})\n\
         add_test(NAME t2 COMMAND t2)\n"
    );
    let o = Scenario::new("c04-configured-guard")
        .file("CMakeLists.txt", &cmake)
        .file(
            "config.h.in",
            "#pragma once\n#define CFG_VALUE @CFG_VALUE@\n",
        )
        .file(
            "t1.cpp",
            &main_checking("#include \"config.h\"", "CFG_VALUE == 1"),
        )
        .file("other.h", "#pragma once\n#define OTHER 1\n")
        .file(
            "t2.cpp",
            &main_checking("#include \"other.h\"", "OTHER == 1"),
        )
        .edit("other.h", "#pragma once\n#define OTHER 2\n")
        .run();
    o.assert_oracle();
    o.expect_subset(&["t2"]);
}

// ============================================================ class 5: -l links

#[test]
fn oracle_library_linked_by_dash_l_without_a_codemodel_edge() {
    // No add_dependencies(app foo) and no target name on app's link line: the
    // codemodel has no app -> foo edge. foo is built first so app links.
    let cmake = format!(
        "{PROLOGUE}add_library(foo SHARED foo.cpp)\n\
         set_target_properties(foo PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}})\n\
         add_executable(foo_test foo_test.cpp)\n\
         target_link_libraries(foo_test PRIVATE foo)\n\
         add_test(NAME foo.t COMMAND foo_test)\n\
         add_executable(app app.cpp)\n\
         target_link_directories(app PRIVATE ${{CMAKE_BINARY_DIR}})\n\
         target_link_libraries(app PRIVATE -lfoo)\n\
         set_target_properties(app PROPERTIES BUILD_RPATH ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME app.t COMMAND app)\n"
    );
    let o = Scenario::new("c05-dash-l")
        .file("CMakeLists.txt", &cmake)
        .file("foo.cpp", "int foo() { return 1; }\n")
        .file("foo_test.cpp", &main_checking("int foo();", "foo() == 1"))
        .file("app.cpp", &main_checking("int foo();", "foo() == 1"))
        .edit("foo.cpp", "int foo() { return 2; }\n")
        .build_first("foo")
        .run();
    o.assert_oracle();
    o.expect_subset(&["foo.t", "app.t"]);
}

// ================================================== class 6: #pragma once twins

const TWIN_A: &str = "#pragma once\n#ifndef TWIN_A\n#define TWIN_A 1\n#endif\n";
const TWIN_B_BASE: &str = "#pragma once\n#define TWIN_B 1\n";

#[test]
fn oracle_pragma_once_twin_synced_from_the_other_copy() {
    let cmake = format!(
        "{PROLOGUE}add_executable(both both.cpp)\n\
         target_include_directories(both PRIVATE ${{CMAKE_SOURCE_DIR}})\n\
         add_test(NAME both COMMAND both)\n\
         add_executable(only_b only_b.cpp)\n\
         target_include_directories(only_b PRIVATE ${{CMAKE_SOURCE_DIR}})\n\
         add_test(NAME only_b COMMAND only_b)\n"
    );
    let o = Scenario::new("c06-pragma-once-twins")
        .fresh_head_build()
        .file("CMakeLists.txt", &cmake)
        .file("a/twin.h", TWIN_A)
        .file("b/twin.h", TWIN_B_BASE)
        .file(
            "both.cpp",
            &main_checking(
                "#include \"a/twin.h\"\n#include \"b/twin.h\"\n#ifndef TWIN_B\n#define TWIN_B 0\n#endif",
                "TWIN_B == 1",
            ),
        )
        .file(
            "only_b.cpp",
            &main_checking(
                "#include \"b/twin.h\"\n#ifndef TWIN_B\n#define TWIN_B 0\n#endif",
                "TWIN_B == 1",
            ),
        )
        // Sync one vendored copy onto the other: byte-identical, and (as in a
        // fresh clone) the same mtime.
        .copy_onto("a/twin.h", "b/twin.h")
        .after_edits(|ctx| {
            let a = ctx.src.join("a/twin.h");
            let b = ctx.src.join("b/twin.h");
            let t = filetime::FileTime::from_unix_time(
                filetime::FileTime::now().unix_seconds() - 60,
                0,
            );
            filetime::set_file_mtime(&a, t).unwrap();
            filetime::set_file_mtime(&b, t).unwrap();
            assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        })
        .after_head_build(|ctx| {
            let d = recorded_deps(&ctx.build, "CMakeFiles/both.dir/both.cpp.o");
            // GCC skips a byte-identical `#pragma once` twin and leaves it out
            // of the .d; Clang keys `#pragma once` on the file, so it reads and
            // lists both (the scenario then needs no twin rule, and must still
            // pass the oracle with the same subset).
            let gcc_omits = cxx_compiler_id(&ctx.build) == "GNU";
            assert!(
                d.contains("a/twin.h") && d.contains("b/twin.h") != gcc_omits,
                "scenario precondition: GCC should omit the #pragma once twin b/twin.h from both's .d (Clang lists it):\n{d}"
            );
        })
        .run();
    o.assert_oracle();
    o.expect_subset(&["both", "only_b"]);
}

/// Two trivial test mains, byte-identical at HEAD and with one mtime (a
/// fresh clone): GCC compares only once-only files (`#pragma once`), so
/// neither is the other's twin, and a change to one selects its own test
/// alone (issue 30, item 4; before, both were selected).
#[test]
fn precision_identical_mains_without_pragma_once_are_no_twins() {
    let cmake = format!(
        "{PROLOGUE}add_executable(ta a.cpp)\nadd_test(NAME t_a COMMAND ta)\n\
         add_executable(tb b.cpp)\nadd_test(NAME t_b COMMAND tb)\n{BYSTANDER}"
    );
    let main = "int main() { return 0; }\n";
    let o = Scenario::new("c30-identical-mains")
        .file("CMakeLists.txt", &cmake)
        .file("a.cpp", "int main() { return 1; }\n")
        .file("b.cpp", main)
        .with_bystander()
        .edit("a.cpp", main)
        .after_edits(|ctx| {
            let t = filetime::FileTime::from_unix_time(
                filetime::FileTime::now().unix_seconds() - 60,
                0,
            );
            filetime::set_file_mtime(ctx.src.join("a.cpp"), t).unwrap();
            filetime::set_file_mtime(ctx.src.join("b.cpp"), t).unwrap();
        })
        .fresh_head_build()
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_a"]);
}

// ============================================= class 7: alias outside the roots

fn outside_alias_scenario(name: &str, with_direct_user: bool) -> Scenario {
    let mut cmake = format!(
        "{PROLOGUE}add_executable(t t.cpp)\n\
         target_include_directories(t PRIVATE @ROOT@/outside/mylib-include)\n\
         add_test(NAME t.test COMMAND t)\n"
    );
    if with_direct_user {
        cmake.push_str(
            "add_executable(direct direct.cpp)\n\
             target_include_directories(direct PRIVATE ${CMAKE_SOURCE_DIR}/include)\n\
             add_test(NAME direct.test COMMAND direct)\n",
        );
    }
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("include/api.h", "#pragma once\n#define API_VALUE 1\n")
        .file(
            "t.cpp",
            &main_checking("#include <api.h>", "API_VALUE == 1"),
        )
        .file(
            "direct.cpp",
            &main_checking("#include <api.h>", "API_VALUE == 1"),
        )
        .after_base_files(|ctx| {
            std::fs::create_dir_all(ctx.root.join("outside")).unwrap();
            std::os::unix::fs::symlink(
                ctx.src.join("include"),
                ctx.root.join("outside/mylib-include"),
            )
            .unwrap();
        })
        .after_head_build(|ctx| {
            let d = recorded_deps(&ctx.build, "CMakeFiles/t.dir/t.cpp.o");
            assert!(
                d.contains("outside/mylib-include/api.h"),
                "scenario precondition: t's .d should name the outside spelling:\n{d}"
            );
        })
        .edit("include/api.h", "#pragma once\n#define API_VALUE 2\n")
}

#[test]
fn oracle_include_dir_alias_outside_the_roots() {
    let o = outside_alias_scenario("c07-outside-alias", false).run();
    o.assert_oracle();
    o.expect_subset(&["t.test"]);
}

#[test]
fn oracle_include_dir_alias_outside_the_roots_with_a_direct_user() {
    let o = outside_alias_scenario("c07-outside-alias-direct", true).run();
    o.assert_oracle();
    o.expect_subset(&["t.test", "direct.test"]);
}

#[test]
fn oracle_aliased_header_newer_than_the_evidence_is_stale() {
    // Only the outside spelling reaches api.h: touched after the build, it is
    // newer than t's evidence, which only the joined inside spelling shows.
    let o = outside_alias_scenario("c07-outside-alias-stale", false)
        .touched_after_head_build("include/api.h")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "DEP_EVIDENCE_STALE");
    assert!(
        o.run.stderr.contains("include/api.h is newer than"),
        "{}",
        o.report()
    );
}

// ================================================ class 8: build products read

fn table_scenario(name: &str, extra_cmake: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(gen gen.cpp)\n\
         add_executable(checker checker.cpp)\n\
         add_custom_command(OUTPUT ${{CMAKE_BINARY_DIR}}/table.txt\n\
         \x20 COMMAND gen ${{CMAKE_BINARY_DIR}}/table.txt DEPENDS gen)\n\
         add_custom_target(table ALL DEPENDS ${{CMAKE_BINARY_DIR}}/table.txt)\n\
         add_test(NAME gen.run COMMAND gen ${{CMAKE_BINARY_DIR}}/gen-run.txt)\n\
         add_test(NAME table.check COMMAND checker ${{CMAKE_BINARY_DIR}}/table.txt)\n{extra_cmake}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("gen.cpp", &writer_main("row 1\\n"))
        .file("checker.cpp", &file_equals_main("row 1\\n"))
        .edit("gen.cpp", &writer_main("row 2\\n"))
}

#[test]
fn oracle_test_reads_a_file_a_custom_command_generated() {
    let o = table_scenario("c08-table", "").run();
    o.assert_oracle();
    let mut want = vec!["table.check"];
    if o.changed_results().contains("gen.run") {
        want.push("gen.run");
    }
    o.expect_subset(&want);
}

#[test]
fn oracle_test_reads_nm_output_of_a_static_library() {
    let cmake = format!(
        "{PROLOGUE}add_library(core STATIC core.cpp)\n\
         add_executable(core_test core_test.cpp)\n\
         target_link_libraries(core_test PRIVATE core)\n\
         add_test(NAME core.t COMMAND core_test)\n\
         add_custom_command(OUTPUT ${{CMAKE_BINARY_DIR}}/syms.txt\n\
         \x20 COMMAND sh -c \"nm $<TARGET_FILE:core> > ${{CMAKE_BINARY_DIR}}/syms.txt\"\n\
         \x20 DEPENDS core VERBATIM)\n\
         add_custom_target(syms ALL DEPENDS ${{CMAKE_BINARY_DIR}}/syms.txt)\n\
         add_executable(syms_check syms_check.cpp)\n\
         add_test(NAME syms.check COMMAND syms_check ${{CMAKE_BINARY_DIR}}/syms.txt core_sym_v1)\n"
    );
    let o = Scenario::new("c08-nm")
        .file("CMakeLists.txt", &cmake)
        .file(
            "core.cpp",
            "extern \"C\" int core_sym_v1() { return 1; }\nint core_other() { return 5; }\n",
        )
        .file(
            "core_test.cpp",
            &main_checking("int core_other();", "core_other() == 5"),
        )
        .file("syms_check.cpp", FILE_CONTAINS_MAIN)
        .edit(
            "core.cpp",
            "extern \"C\" int core_sym_v2() { return 1; }\nint core_other() { return 5; }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_subset_or_fallback(&["syms.check"]);
}

#[test]
fn oracle_generated_file_with_opaque_select_policy_and_wrapper() {
    let o = table_scenario(
        "c08-table-policy",
        "add_test(NAME wrap COMMAND ${CMAKE_COMMAND} -E env X=1 $<TARGET_FILE:gen> ${CMAKE_BINARY_DIR}/wrap.txt)\n",
    )
    .policy("opaque = \"select\"\n")
    .run();
    o.assert_oracle();
    o.expect_subset(&["table.check", "wrap"]);
}

// ===================================== class 9: artifacts outside the build root

/// `runner SRC/bin/tool` checks what `tool` prints; with `direct`, a second
/// test `tool.direct` runs `tool` itself (command[0]), so the target is reached.
fn bin_in_source_scenario(name: &str, direct: bool) -> Scenario {
    let mut cmake = format!(
        "{PROLOGUE}set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${{PROJECT_SOURCE_DIR}}/bin)\n\
         add_executable(tool tool.cpp)\n\
         add_executable(runner runner.cpp)\n\
         add_test(NAME tool.via COMMAND runner ${{PROJECT_SOURCE_DIR}}/bin/tool)\n"
    );
    if direct {
        cmake.push_str("add_test(NAME tool.direct COMMAND tool)\n");
    }
    let runner = r#"#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  FILE* p = popen(argv[1], "r");
  if (!p) return 3;
  char buf[256] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  buf[n] = 0;
  int st = pclose(p);
  std::printf("%s said: %s\n", argv[1], buf);
  return st == 0 && std::strcmp(buf, "tool-v1\n") == 0 ? 0 : 1;
}
"#;
    let tool = |v: &str| {
        format!("#include <cstdio>\nint main() {{ std::puts(\"tool-{v}\"); return 0; }}\n")
    };
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("runner.cpp", runner)
        .file("tool.cpp", &tool("v1"))
        .edit("tool.cpp", &tool("v2"))
}

#[test]
fn oracle_runtime_output_directory_in_the_source_tree() {
    let o = bin_in_source_scenario("c09-bin-in-source", false).run();
    o.assert_oracle();
    o.expect_subset(&["tool.via"]);
}

#[test]
fn oracle_runtime_output_directory_in_the_source_tree_with_a_direct_test() {
    let o = bin_in_source_scenario("c09-bin-in-source-direct", true).run();
    o.assert_oracle();
    o.expect_subset(&["tool.via", "tool.direct"]);
}

#[test]
fn oracle_plugin_named_with_a_double_slash() {
    let cmake = format!(
        "{PROLOGUE}add_library(p MODULE p.cpp)\n\
         set_target_properties(p PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/plugins)\n\
         add_executable(loader loader.cpp)\n\
         target_link_libraries(loader PRIVATE ${{CMAKE_DL_LIBS}})\n\
         add_test(NAME p.named COMMAND loader $<TARGET_FILE:p>)\n\
         add_test(NAME p.slash COMMAND loader ${{CMAKE_BINARY_DIR}}/plugins//libp.so)\n"
    );
    let o = Scenario::new("c09-double-slash")
        .file("CMakeLists.txt", &cmake)
        .file("load.h", LOAD_H)
        .file("p.cpp", PLUG_V1)
        .file(
            "loader.cpp",
            "#include \"load.h\"\nint main(int argc, char** argv) { return check_plugin(argc > 1 ? argv[1] : nullptr); }\n",
        )
        .edit("p.cpp", PLUG_V2)
        .run();
    o.assert_oracle();
    o.expect_subset(&["p.named", "p.slash"]);
}

// ======================================= class 10: prerequisites git does not see

fn ignored_header_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(cfg cfg.cpp)\n\
         target_include_directories(cfg PRIVATE ${{CMAKE_SOURCE_DIR}})\n\
         add_test(NAME cfg.t COMMAND cfg)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other.t COMMAND other)\n"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file(".gitignore", "config_local.h\n")
        .file("config_local.h", "#pragma once\n#define CFG_VALUE 1\n")
        .file(
            "cfg.cpp",
            &main_checking("#include \"config_local.h\"", "CFG_VALUE == 1"),
        )
        .file("other.cpp", "int main() { return 0; }\n")
        .after_base_files(|ctx| {
            git(ctx, &["init", "-q"]);
            git(ctx, &["add", "-A"]);
            git(ctx, &["commit", "-q", "-m", "base"]);
            let ignored = git(ctx, &["status", "--porcelain", "--ignored"]);
            assert!(
                ignored.contains("!! config_local.h"),
                "config_local.h should be ignored: {ignored}"
            );
            ctx.set_var("BASE_SHA", &git(ctx, &["rev-parse", "HEAD"]));
        })
        .silent_edit("config_local.h", "#pragma once\n#define CFG_VALUE 2\n")
        .silent_edit("other.cpp", "int main() { return 1; }\n")
        .no_changed_list()
}

#[test]
fn oracle_ignored_header_changed_in_the_working_tree() {
    let o = ignored_header_scenario("c10-worktree")
        .arg("--no-ci")
        .arg("--base")
        .arg("HEAD")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "config_local.h");
}

#[test]
fn oracle_ignored_header_with_base_and_head_commits() {
    let o = ignored_header_scenario("c10-commits")
        .after_edits(|ctx| {
            git(ctx, &["commit", "-q", "-am", "head"]);
            ctx.set_var("HEAD_SHA", &git(ctx, &["rev-parse", "HEAD"]));
        })
        .arg("--base")
        .arg("@BASE_SHA@")
        .arg("--head")
        .arg("@HEAD_SHA@")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "config_local.h");
}

// ================================== class 11: a catalogue that lists nothing

/// One test whose result flips at HEAD.
fn tiny_scenario(name: &str) -> Scenario {
    Scenario::new(name)
        .file(
            "CMakeLists.txt",
            &format!("{PROLOGUE}add_executable(t t.cpp)\nadd_test(NAME t.run COMMAND t)\n"),
        )
        .file("t.cpp", "int main() { return 0; }\n")
        .edit("t.cpp", "int main() { return 1; }\n")
}

#[test]
fn oracle_multi_config_catalogue_without_dash_c() {
    let o = tiny_scenario("c11-multi-config")
        .generator(Generator::NinjaMultiConfig)
        .after_head_build(|ctx| {
            let json = std::fs::read_to_string(ctx.build.join("ctest.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            // Record what ctest lists without -C (reported, not required).
            eprintln!(
                "[c11-multi-config] catalogue without -C lists {} tests",
                v["tests"].as_array().map_or(0, |a| a.len())
            );
        })
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(4, "-C");
    assert!(o.run.stdout.is_empty());
}

#[test]
fn oracle_catalogue_written_outside_the_build_dir() {
    let o = tiny_scenario("c11-empty-dir")
        .after_head_build(|ctx| {
            let empty = ctx.root.join("empty");
            std::fs::create_dir_all(&empty).unwrap();
            write_catalogue(&empty, &ctx.build, None);
        })
        .run();
    o.assert_oracle();
    assert_eq!(
        o.run.code,
        4,
        "PRECISION EXPECTATION FAILED (oracle passed): exit 4 is intended\n{}",
        o.report()
    );
}

#[test]
fn oracle_catalogue_from_another_build_dir() {
    let o = tiny_scenario("c11-other-build")
        .after_head_build(|ctx| {
            let b2 = ctx.root.join("build2");
            build_tree(&ctx.src, &b2, Generator::Makefiles, None, &[]);
            std::fs::copy(b2.join("ctest.json"), ctx.build.join("ctest.json")).unwrap();
        })
        .run();
    o.assert_oracle();
    assert_eq!(
        o.run.code,
        4,
        "PRECISION EXPECTATION FAILED (oracle passed): exit 4 is intended\n{}",
        o.report()
    );
}

// ============================= class 12: precompiled headers (and reusing them)

/// `core` precompiles `inc/big.h`, which includes `inc/deep.h`; its units then
/// list the precompiled header, not what it was built from, so only the
/// precompiled header's own record (`cmake_pch.hxx.gch`) names `deep.h`.
fn pch_scenario(name: &str, extra_cmake: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_library(core STATIC core.cpp)\n\
         target_include_directories(core PUBLIC ${{CMAKE_SOURCE_DIR}}/inc)\n\
         target_precompile_headers(core PRIVATE inc/big.h)\n\
         add_executable(t1 t1.cpp)\n\
         target_link_libraries(t1 core)\n\
         add_test(NAME t1 COMMAND t1)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other COMMAND other)\n{extra_cmake}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file(
            "inc/big.h",
            "#pragma once\n#include \"deep.h\"\ninline int big() { return DEEP; }\n",
        )
        .file("inc/deep.h", "#pragma once\n#define DEEP 1\n")
        // No #include: the precompiled header is forced onto every unit.
        .file("core.cpp", "int core() { return big(); }\n")
        .file("t1.cpp", &main_checking("int core();", "core() == 1"))
        .file("other.cpp", &main_checking("", "1 + 1 == 2"))
        .edit("inc/deep.h", "#pragma once\n#define DEEP 2\n")
}

#[test]
fn oracle_precompiled_header_is_the_only_evidence_of_its_headers() {
    let o = pch_scenario("c12-pch", "").run();
    o.assert_oracle();
    o.expect_exact_subset(&["t1"]);
    // GCC writes `cmake_pch.hxx.gch`, Clang `cmake_pch.hxx.pch` (whose units
    // list its inputs before their own source: mapped by the object's path).
    let pch = match cxx_compiler_id(&o.ctx.build).as_str() {
        "GNU" => "cmake_pch.hxx.gch",
        _ => "cmake_pch.hxx.pch",
    };
    assert!(
        o.run.stderr.contains(pch),
        "the chain runs through the precompiled header's record {pch}\n{}",
        o.report()
    );
}

#[test]
fn oracle_precompiled_header_reused_by_a_target_that_does_not_link_it() {
    // t2 compiles with core's precompiled header (REUSE_FROM) but links nothing.
    let o = pch_scenario(
        "c12-pch-reuse",
        "add_executable(t2 t2.cpp)\n\
         target_precompile_headers(t2 REUSE_FROM core)\n\
         add_test(NAME t2 COMMAND t2)\n",
    )
    .file("t2.cpp", &main_checking("", "big() == 1"))
    .run();
    o.assert_oracle();
    o.expect_subset(&["t1", "t2"]);
}

// ======================================================== class 13: unity builds

/// `core` is a unity build: CMake compiles `CMakeFiles/core.dir/Unity/unity_0_cxx.cxx`,
/// which `#include`s `a.cpp` and `b.cpp` by absolute path.
#[test]
fn oracle_unity_build_source_change() {
    let cmake = format!(
        "{PROLOGUE}add_library(core STATIC a.cpp b.cpp)\n\
         set_target_properties(core PROPERTIES UNITY_BUILD ON)\n\
         add_executable(t1 t1.cpp)\n\
         target_link_libraries(t1 core)\n\
         add_test(NAME t1 COMMAND t1)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other COMMAND other)\n"
    );
    let o = Scenario::new("c13-unity")
        .file("CMakeLists.txt", &cmake)
        .file("a.cpp", "int fa() { return 1; }\n")
        .file("b.cpp", "int fb() { return 2; }\n")
        .file(
            "t1.cpp",
            &main_checking("int fa(); int fb();", "fa() + fb() == 3"),
        )
        .file("other.cpp", &main_checking("", "1 + 1 == 2"))
        .edit("b.cpp", "int fb() { return 3; }\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t1"]);
}

// ============ class 14: a build directory kept between commits (renamed sources)

/// One build directory, built at BASE, then again after a commit that renames
/// `b.cpp` to `c.cpp` and another that edits `a.cpp` (as a CI runner that keeps
/// its build tree does). The renamed source's old record (or `.d`) stays: it is
/// unmappable, so the run falls back, and the reason says it is a leftover and
/// how to clear it. Once cleared, the run is a subset again, and it holds
/// every test whose result the edit changed (real ctest before and after).
fn kept_build_dir(generator: Generator) {
    require_tools();
    let dir = scratch_dir("d2t-oracle-c14-kept-build-");
    let (src, build) = (dir.path().join("src"), dir.path().join("build"));
    let write = |rel: &str, text: &str| {
        std::fs::create_dir_all(src.join(rel).parent().unwrap()).unwrap();
        std::fs::write(src.join(rel), text).unwrap();
    };
    let cmake = |second: &str| {
        format!(
            "{PROLOGUE}add_library(core STATIC a.cpp {second})\n\
             add_executable(t1 t1.cpp)\ntarget_link_libraries(t1 core)\nadd_test(NAME t1 COMMAND t1)\n\
             add_executable(t2 t2.cpp)\nadd_test(NAME t2 COMMAND t2)\n"
        )
    };
    write("CMakeLists.txt", &cmake("b.cpp"));
    write("a.cpp", "int fa() { return 1; }\n");
    write("b.cpp", "int fb() { return 2; }\n");
    write(
        "t1.cpp",
        &main_checking("int fa(); int fb();", "fa() + fb() == 3"),
    );
    write("t2.cpp", &main_checking("", "1 + 1 == 2"));
    build_tree(&src, &build, generator, None, &[]);
    // Commit 1: rename b.cpp to c.cpp, rebuild in place.
    std::fs::rename(src.join("b.cpp"), src.join("c.cpp")).unwrap();
    write("CMakeLists.txt", &cmake("c.cpp"));
    build_tree(&src, &build, generator, None, &[]);
    let before = run_suite(&build, &dir.path().join("junit-1.xml"), generator);
    // Commit 2: edit a.cpp (t1 now fails), rebuild in place.
    write("a.cpp", "int fa() { return 5; }\n");
    build_tree(&src, &build, generator, None, &[]);
    let after = run_suite(&build, &dir.path().join("junit-2.xml"), generator);
    let changed: Vec<&String> = after
        .keys()
        .filter(|t| before.get(*t) != after.get(*t))
        .collect();
    assert_eq!(
        changed,
        ["t1"],
        "scenario precondition: the edit changes t1 only"
    );
    let args: Vec<String> = [
        "--source-dir",
        src.to_str().unwrap(),
        "--build-dir",
        build.to_str().unwrap(),
        "--ctest-json",
        build.join("ctest.json").to_str().unwrap(),
        "--dep-list",
        build.join("deps.txt").to_str().unwrap(),
        "--changed",
        "a.cpp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let r = run_diff2test(&args);
    assert_eq!(r.code, 3, "the leftover is unmappable evidence: {r:#?}");
    assert!(r.stderr.starts_with("FULL_SUITE_SELECTED\n"), "{r:#?}");
    assert!(
        r.stderr.contains("reason DEP_FILE_UNMAPPED: ")
            && r.stderr.contains("b.cpp is not a compiled source of target \"core\" (it no longer exists: a leftover of an earlier build"),
        "{r:#?}"
    );
    assert_eq!(r.stdout, "t1\nt2\n", "{r:#?}");
    // Clear it as the reason says.
    match generator {
        Generator::Makefiles => {
            assert!(r.stderr.contains("delete it and its object"), "{r:#?}");
            let obj = build.join("CMakeFiles/core.dir/b.cpp.o");
            std::fs::remove_file(&obj).unwrap();
            std::fs::remove_file(build.join("CMakeFiles/core.dir/b.cpp.o.d")).unwrap();
            write_dep_list(&build);
        }
        _ => {
            assert!(r.stderr.contains("`ninja -t cleandead`"), "{r:#?}");
            common::run_ok(
                Command::new("ninja")
                    .arg("-C")
                    .arg(&build)
                    .args(["-t", "cleandead"]),
            );
        }
    }
    let r = run_diff2test(&args);
    assert_eq!(r.code, 0, "a subset once the leftover is cleared: {r:#?}");
    assert_eq!(
        r.stdout, "t1\n",
        "every changed-result test, and only t1: {r:#?}"
    );
}

#[test]
fn oracle_renamed_source_in_a_kept_build_dir_makefiles() {
    kept_build_dir(Generator::Makefiles);
}

#[test]
fn oracle_renamed_source_in_a_kept_build_dir_ninja() {
    kept_build_dir(Generator::Ninja);
}

// ====== class 15: depfiles without system headers, and a SYSTEM directory in the tree

/// `core` searches `vendor/` (in the source tree) as a SYSTEM include
/// directory, as vendored libraries usually are; `other` includes the same
/// header through a plain include directory. With `depfile_flags`
/// (`CMAKE_DEPFILE_FLAGS_CXX`), the depfiles are written that way.
fn system_dir_scenario(name: &str, depfile_flags: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}{depfile_flags}\n\
         add_library(core STATIC core.cpp)\n\
         target_include_directories(core SYSTEM PUBLIC vendor)\n\
         add_executable(t1 t1.cpp)\n\
         target_link_libraries(t1 core)\n\
         add_test(NAME t1 COMMAND t1)\n\
         add_executable(other other.cpp)\n\
         target_include_directories(other PRIVATE vendor)\n\
         add_test(NAME other COMMAND other)\n"
    );
    Scenario::new(name)
        .fresh_head_build()
        .file("CMakeLists.txt", &cmake)
        .file("vendor/vendored.h", "#pragma once\n#define VENDORED 1\n")
        .file(
            "core.cpp",
            "#include \"vendored.h\"\nint core() { return VENDORED; }\n",
        )
        .file("t1.cpp", &main_checking("int core();", "core() == 1"))
        .file(
            "other.cpp",
            &main_checking("#include \"vendored.h\"", "VENDORED >= 1"),
        )
        .edit("vendor/vendored.h", "#pragma once\n#define VENDORED 2\n")
}

/// `-MMD` leaves `vendored.h` out of `core.cpp`'s depfile (it is found
/// through a SYSTEM directory) but not out of `other.cpp`'s: the change
/// looks like it reaches `other` only, while it flips `t1`.
#[test]
fn oracle_mmd_depfiles_and_a_system_include_dir_in_the_tree() {
    let o = system_dir_scenario(
        "c15-mmd",
        "set(CMAKE_DEPFILE_FLAGS_CXX \"-MMD -MT <DEP_TARGET> -MF <DEP_FILE>\")",
    )
    .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "DEP_SYSTEM_HEADERS_OMITTED");
    assert!(
        o.run.stderr.contains("target \"core\""),
        "the reason names the target whose units list no system header\n{}",
        o.report()
    );
}

/// With CMake's default `-MD` the same tree gives the exact subset.
#[test]
fn oracle_md_depfiles_and_a_system_include_dir_in_the_tree() {
    let o = system_dir_scenario("c15-md", "").run();
    o.assert_oracle();
    o.expect_exact_subset(&["other", "t1"]);
}

/// With `-MD`, a unit that includes no system header at all (here compiled
/// `-ffreestanding -nostdinc`, so not even GCC's `stdc-predef.h`) lists
/// none; another unit of the same language in its directory does, which
/// shows the directory's depfile flags are `-MD`: still the exact subset.
#[test]
fn oracle_md_unit_without_system_headers_beside_one_with_them() {
    let o = system_dir_scenario("c15-md-freestanding", "")
        .file(
            "CMakeLists.txt",
            &format!(
                "{PROLOGUE}add_library(core STATIC core.cpp bare.cpp)\n\
                 set_source_files_properties(bare.cpp PROPERTIES COMPILE_OPTIONS \"-ffreestanding;-nostdinc\")\n\
                 target_include_directories(core SYSTEM PUBLIC vendor)\n\
                 add_executable(t1 t1.cpp)\n\
                 target_link_libraries(t1 core)\n\
                 add_test(NAME t1 COMMAND t1)\n\
                 add_executable(other other.cpp)\n\
                 target_include_directories(other PRIVATE vendor)\n\
                 add_test(NAME other COMMAND other)\n"
            ),
        )
        .file(
            "bare.cpp",
            "#include \"vendored.h\"\nint bare() { return VENDORED; }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["other", "t1"]);
}

// ================================================== class 16: assembly units

/// An x86-64 assembly function `name` returning `value` (an assembler
/// expression), for the C compiler on a `.S` file; `prelude` comes first.
fn asm_function(prelude: &str, name: &str, value: &str) -> String {
    format!(
        "{prelude}\n.text\n.globl {name}\n{name}:\n  mov ${value}, %eax\n  ret\n.section .note.GNU-stack,\"\",@progbits\n"
    )
}

/// `core` is written in assembly (`fast.S`, compiled by the C compiler, which
/// writes a `-MD` depfile) and `#include`s `value.h`.
fn asm_scenario(name: &str, generator: Generator) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}enable_language(C ASM)\n\
         add_library(core STATIC fast.S)\n\
         add_executable(t1 t1.cpp)\n\
         target_link_libraries(t1 core)\n\
         add_test(NAME t1 COMMAND t1)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other COMMAND other)\n"
    );
    Scenario::new(name)
        .generator(generator)
        .file("CMakeLists.txt", &cmake)
        .file("value.h", "#define VALUE 1\n")
        .file(
            "fast.S",
            &asm_function("#include \"value.h\"", "fast_value", "VALUE"),
        )
        .file(
            "t1.cpp",
            &main_checking("extern \"C\" int fast_value();", "fast_value() == 1"),
        )
        .file("other.cpp", &main_checking("", "1 + 1 == 2"))
        .edit("value.h", "#define VALUE 2\n")
}

/// On Ninja the assembly unit's deps record is its evidence: the exact subset.
#[test]
fn oracle_assembly_unit_on_ninja_is_ordinary_evidence() {
    let o = asm_scenario("c16-asm-ninja", Generator::Ninja).run();
    o.assert_oracle();
    o.expect_exact_subset(&["t1"]);
    assert!(
        o.run.stderr.contains("record CMakeFiles/core.dir/fast.S.o"),
        "the chain runs through the assembly unit's record\n{}",
        o.report()
    );
}

/// The Makefiles generators write no depfile for assembly: the tests that
/// depend on it cannot be decided.
#[test]
fn oracle_assembly_unit_on_makefiles_has_no_evidence() {
    let o = asm_scenario("c16-asm-make", Generator::Makefiles).run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "UNSUPPORTED_LANGUAGE");
}

/// `macros.inc` is read by the assembler in `a.S` (`.include`, which no
/// depfile lists) and by the preprocessor in `b.S` (`#include`, listed):
/// the evidence shows `b`'s target reading it, not `a`'s, while the change
/// flips the tests of both. The assembler's directive makes `a` opaque.
#[test]
fn oracle_assembler_include_is_not_in_any_depfile() {
    let cmake = format!(
        "{PROLOGUE}enable_language(C ASM)\n\
         add_library(a STATIC a.S)\n\
         target_include_directories(a PRIVATE inc)\n\
         add_library(b STATIC b.S)\n\
         target_include_directories(b PRIVATE inc)\n\
         add_executable(t1 t1.cpp)\n\
         target_link_libraries(t1 a)\n\
         add_test(NAME t1 COMMAND t1)\n\
         add_executable(t2 t2.cpp)\n\
         target_link_libraries(t2 b)\n\
         add_test(NAME t2 COMMAND t2)\n"
    );
    let o = Scenario::new("c16-gas-include")
        .generator(Generator::Ninja)
        .file("CMakeLists.txt", &cmake)
        .file("inc/macros.inc", ".set SHARED_VALUE, 1\n")
        .file(
            "a.S",
            &asm_function(".include \"macros.inc\"", "a_value", "SHARED_VALUE"),
        )
        .file(
            "b.S",
            &asm_function("#include \"macros.inc\"", "b_value", "SHARED_VALUE"),
        )
        .file(
            "t1.cpp",
            &main_checking("extern \"C\" int a_value();", "a_value() == 1"),
        )
        .file(
            "t2.cpp",
            &main_checking("extern \"C\" int b_value();", "b_value() == 1"),
        )
        .edit("inc/macros.inc", ".set SHARED_VALUE, 2\n")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "UNSUPPORTED_LANGUAGE");
    assert!(
        o.run
            .stderr
            .contains("may name files through the assembler"),
        "the reason says why the assembly unit's evidence is not trusted\n{}",
        o.report()
    );
}

// ============================================= class 17: cmake -E wrappers

/// `add_test(… COMMAND ${CMAKE_COMMAND} -E env|time …)`: CMake's own
/// documentation shows `-E env` as the way to register a test that dies on a
/// signal. A wrapper command is not mapped by default (the contract): the run
/// falls back, and the reason names the target the wrapper runs.
fn wrapper_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_library(core STATIC core.cpp)\n\
         add_executable(t1 t1.cpp)\n\
         target_link_libraries(t1 core)\n\
         add_test(NAME t1 COMMAND ${{CMAKE_COMMAND}} -E env --unset=T1_UNUSED T1_MODE=check -- $<TARGET_FILE:t1>)\n\
         add_executable(t2 t2.cpp)\n\
         add_test(NAME t2 COMMAND ${{CMAKE_COMMAND}} -E time $<TARGET_FILE:t2>)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other COMMAND other)\n"
    );
    let t1 = main_checking(
        "#include <cstdlib>\n#include <cstring>\nint core();",
        "core() == 1 && std::getenv(\"T1_MODE\") && !std::strcmp(std::getenv(\"T1_MODE\"), \"check\")",
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("core.cpp", "int core() { return 1; }\n")
        .file("t1.cpp", &t1)
        .file("t2.cpp", &main_checking("", "2 + 2 == 4"))
        .file("other.cpp", &main_checking("", "1 + 1 == 2"))
        .edit("core.cpp", "int core() { return 2; }\n")
}

#[test]
fn oracle_cmake_e_wrapper_falls_back_and_names_the_wrapped_target() {
    let o = wrapper_scenario("c17-env-default").run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "TEST_COMMAND_UNMAPPED");
    for needle in [
        "its cmake -E env wrapper runs",
        "the artifact of target \"t1\"",
        "its cmake -E time wrapper runs",
    ] {
        assert!(o.run.stderr.contains(needle), "{needle}\n{}", o.report());
    }
}

/// A `[[script]]` rule for each wrapped test, listing the target it runs,
/// gives the exact subset.
#[test]
fn oracle_cmake_e_wrapper_declared_with_a_script_rule() {
    let o = wrapper_scenario("c17-env-script")
        .policy(
            "[[script]]\ntests = [\"t1\"]\ntargets = [\"t1\"]\nwhy = \"cmake -E env runs t1\"\n\n\
             [[script]]\ntests = [\"t2\"]\ntargets = [\"t2\"]\nwhy = \"cmake -E time runs t2\"\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t1"]);
}

/// `cmake -E chdir DIR PROGRAM ARGS` runs the program in `DIR`: a relative
/// argument names a file relative to `DIR`, not to the test's working
/// directory. `reader` checks the header it is handed as `../inc/value.hpp`
/// from `data/`; `lib` compiles the same header. A change to it flips `read`,
/// which only the argument ties to it. The test is declared as running
/// `reader`; looking the argument up against the test's own working
/// directory alone omits it.
#[test]
fn oracle_cmake_e_chdir_resolves_arguments_in_its_directory() {
    let cmake = format!(
        "{PROLOGUE}add_library(lib STATIC lib.cpp)\n\
         target_include_directories(lib PUBLIC inc)\n\
         add_executable(user user.cpp)\n\
         target_link_libraries(user lib)\n\
         add_test(NAME user COMMAND user)\n\
         add_executable(reader reader.cpp)\n\
         add_test(NAME read COMMAND ${{CMAKE_COMMAND}} -E chdir ${{CMAKE_CURRENT_SOURCE_DIR}}/data $<TARGET_FILE:reader> ../inc/value.hpp)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other COMMAND other)\n"
    );
    let reader = "#include <fstream>\n#include <sstream>\n#include <cstdio>\n\
                  int main(int argc, char** argv) {\n\
                    if (argc < 2) return 2;\n\
                    std::ifstream f(argv[1]);\n\
                    if (!f) { std::printf(\"cannot open %s\\n\", argv[1]); return 3; }\n\
                    std::stringstream s; s << f.rdbuf();\n\
                    bool ok = s.str().find(\"VALUE 1\") != std::string::npos;\n\
                    std::printf(\"%s\\n\", ok ? \"ok\" : \"FAIL\");\n\
                    return ok ? 0 : 1;\n\
                  }\n";
    let o = Scenario::new("c17-chdir")
        .file("CMakeLists.txt", &cmake)
        .file("inc/value.hpp", "#pragma once\n#define VALUE 1\n")
        .file("lib.cpp", "#include \"value.hpp\"\nint lib() { return VALUE; }\n")
        .file("user.cpp", &main_checking("int lib();", "lib() > 0"))
        .file("reader.cpp", reader)
        .file("data/readme.txt", "the reader runs here\n")
        .file("other.cpp", &main_checking("", "1 + 1 == 2"))
        .policy("[[script]]\ntests = [\"read\"]\ntargets = [\"reader\"]\nwhy = \"cmake -E chdir runs reader\"\n")
        .edit("inc/value.hpp", "#pragma once\n#define VALUE 2\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["read", "user"]);
    assert!(
        o.run.stderr.contains("forced read: NAMES_CHANGED_PATH"),
        "the relative argument is resolved in the chdir directory\n{}",
        o.report()
    );
}

// ================================================= class 18: Qt AUTOMOC

/// Fails, naming the Debian package, unless Qt 5's development files (its
/// CMake package and `moc`) are installed.
fn require_qt() {
    let moc = Command::new("/usr/lib/qt5/bin/moc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let package = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("cmake/Qt5Core/Qt5CoreConfig.cmake").is_file());
    assert!(
        moc && package,
        "Qt 5 (moc and the Qt5Core CMake package) is required by tests/oracle.rs class 18: install it with `apt-get install qtbase5-dev`"
    );
}

/// Every target is AUTOMOC'd (`CMAKE_AUTOMOC`), as a Qt project sets it.
/// `core` lists `extra.h` and `lonely.h` among its sources, so autogen scans
/// them, but none of its units includes either: only `plain.cpp` includes
/// `extra.h`, and nothing includes `lonely.h`. `core.cpp` calls
/// `extra_marker` through a weak reference, which stays null until a moc
/// output that defines it is compiled into `core`.
fn automoc_scenario(name: &str) -> Scenario {
    require_qt();
    let cmake = format!(
        "{PROLOGUE}set(CMAKE_AUTOMOC ON)\n\
         find_package(Qt5 REQUIRED COMPONENTS Core)\n\
         add_library(core STATIC core.cpp core.h extra.h lonely.h)\n\
         target_link_libraries(core PUBLIC Qt5::Core)\n\
         add_executable(t_core t_core.cpp)\n\
         target_link_libraries(t_core core)\n\
         add_test(NAME t_core COMMAND t_core)\n\
         add_library(plain STATIC plain.cpp)\n\
         target_link_libraries(plain PUBLIC Qt5::Core)\n\
         add_executable(t_plain t_plain.cpp)\n\
         target_link_libraries(t_plain plain)\n\
         add_test(NAME t_plain COMMAND t_plain)\n"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("core.h", &automoc_core_h(1))
        .file(
            "core.cpp",
            "#include \"core.h\"\n#include <QMetaObject>\n\
             extern \"C\" int extra_marker() __attribute__((weak));\n\
             int core_value() { Core c; return c.metaObject()->propertyCount(); }\n\
             int core_marker() { return extra_marker ? extra_marker() : 0; }\n",
        )
        .file(
            "t_core.cpp",
            &main_checking(
                "#include \"core.h\"",
                "core_value() == 2 && core_marker() == 7",
            ),
        )
        .file("extra.h", AUTOMOC_EXTRA_H)
        .file("lonely.h", "#pragma once\n")
        .file(
            "plain.cpp",
            "#include \"extra.h\"\nint plain() { return extra_value(); }\n",
        )
        .file(
            "t_plain.cpp",
            &main_checking("int plain();", "plain() == 1"),
        )
}

/// `extra.h` declares a `Q_OBJECT` class, so autogen of `core` compiles its
/// moc output, and with it `extra_marker`, into `core`.
const AUTOMOC_EXTRA_H: &str =
    "#pragma once\n#include <QObject>\nclass Extra : public QObject {\n  Q_OBJECT\n};\n\
     extern \"C\" int extra_marker() { return 7; }\ninline int extra_value() { return 1; }\n";

/// `core.h`: a `Q_OBJECT` class with `n` properties of its own.
fn automoc_core_h(n: usize) -> String {
    let props: String = (0..n)
        .map(|i| {
            format!(
                "  Q_PROPERTY(int p{i} READ p{i})\npublic:\n  int p{i}() const {{ return {i}; }}\n"
            )
        })
        .collect();
    format!(
        "#pragma once\n#include <QObject>\nclass Core : public QObject {{\n  Q_OBJECT\n{props}}};\nint core_value();\nint core_marker();\n"
    )
}

/// A property more in a `Q_OBJECT` header changes the moc output compiled
/// into `core`: the AUTOMOC unit is ordinary evidence, and the subset exact.
#[test]
fn oracle_automoc_header_change_is_ordinary_evidence() {
    let o = automoc_scenario("c18-automoc-header")
        .edit("core.h", &automoc_core_h(2))
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_core"]);
}

/// A change that touches no Qt code keeps the subset in a project where
/// every target is AUTOMOC'd.
#[test]
fn oracle_automoc_everywhere_keeps_the_subset_of_a_plain_change() {
    let o = automoc_scenario("c18-automoc-plain")
        .edit(
            "plain.cpp",
            "#include \"extra.h\"\nint plain() { return extra_value() + 1; }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_plain"]);
}

/// `extra.h` loses its `Q_OBJECT` class: autogen of `core`, which scans it,
/// no longer compiles a moc output of it (nor the code it includes) into
/// `core`, so `t_core` flips. No unit of `core` includes `extra.h`, and at
/// HEAD no moc output does: the dependency evidence shows only `plain.cpp`
/// reading it. The scan list in autogen's info selects `t_core`.
#[test]
fn oracle_scanned_header_losing_q_object_selects_its_target() {
    let o = automoc_scenario("c18-automoc-scanned")
        .edit(
            "extra.h",
            "#pragma once\n#include <QObject>\ninline int extra_value() { return 1; }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_core", "t_plain"]);
    o.expect_stderr(&["extra.h -> depfile CMakeFiles/core_autogen.dir/AutogenInfo.json -> unit"]);
}

/// `core.h` also declares a plugin class whose metadata is `meta.json`
/// (`Q_PLUGIN_METADATA(FILE …)`), which moc embeds in its output; `t_core`
/// checks the embedded tag.
fn automoc_plugin_scenario(name: &str) -> Scenario {
    let core_h = format!(
        "{}class Plug : public QObject {{\n  Q_OBJECT\n  Q_PLUGIN_METADATA(IID \"d2t.plug\" FILE \"meta.json\")\n}};\n",
        automoc_core_h(1)
    );
    automoc_scenario(name)
        .file("core.h", &core_h)
        .file("meta.json", "{ \"tag\": \"v1\" }\n")
        .file(
            "t_core.cpp",
            &main_checking(
                "#include \"core.h\"\n#include <cstring>\nextern \"C\" const char *qt_plugin_query_metadata();",
                "core_value() == 2 && memmem(qt_plugin_query_metadata(), 48, \"v1\", 2) != nullptr",
            ),
        )
        .edit("meta.json", "{ \"tag\": \"v2\" }\n")
}

/// moc's dependency file is the only evidence that lists the metadata file:
/// a change to it selects the target that compiles the output, and nothing
/// else.
#[test]
fn oracle_plugin_metadata_file_is_listed_by_the_moc_depfile() {
    let o = automoc_plugin_scenario("c18-automoc-plugin-json").run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_core"]);
    o.expect_stderr(&["moc_core.cpp.d -> unit"]);
}

/// A Qt plugin (`Q_PLUGIN_METADATA`, a MODULE library) built into
/// `bin/d2tplugins/`, and a test program in `bin/` that loads every plugin of
/// that type through `QCoreApplication::libraryPaths()`, whose first entry is
/// the application's own directory (as KDE's `KPluginMetaData::findPlugins`
/// does): nothing names the plugin or the directory. `t_other`, in `other/`,
/// loads nothing. Both tests run in `run/`, which holds no plugin.
fn qt_plugin_scenario(name: &str) -> Scenario {
    require_qt();
    let cmake = format!(
        "{PROLOGUE}set(CMAKE_AUTOMOC ON)\n\
         find_package(Qt5 REQUIRED COMPONENTS Core)\n\
         set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin)\n\
         file(MAKE_DIRECTORY ${{CMAKE_BINARY_DIR}}/run)\n\
         add_library(greet MODULE greet.cpp greeter.h)\n\
         target_link_libraries(greet PRIVATE Qt5::Core)\n\
         set_target_properties(greet PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin/d2tplugins)\n\
         add_executable(t_app t_app.cpp greeter.h)\n\
         target_link_libraries(t_app PRIVATE Qt5::Core)\n\
         add_test(NAME t_app COMMAND t_app WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}}/run)\n\
         add_executable(t_other t_other.cpp)\n\
         set_target_properties(t_other PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/other)\n\
         add_test(NAME t_other COMMAND t_other WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}}/run)\n"
    );
    let greet = |v: u32| {
        format!(
            "#include \"greeter.h\"\n\
             class Greet : public QObject, public Greeter {{\n  Q_OBJECT\n  \
             Q_PLUGIN_METADATA(IID Greeter_iid)\n  Q_INTERFACES(Greeter)\n\
             public:\n  int value() const override {{ return {v}; }}\n}};\n\
             #include \"greet.moc\"\n"
        )
    };
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file(
            "greeter.h",
            "#pragma once\n#include <QObject>\n#include <QtPlugin>\n\
             class Greeter {\npublic:\n  virtual ~Greeter() = default;\n  virtual int value() const = 0;\n};\n\
             #define Greeter_iid \"d2t.Greeter\"\nQ_DECLARE_INTERFACE(Greeter, Greeter_iid)\n",
        )
        .file("greet.cpp", &greet(42))
        .file(
            "t_app.cpp",
            "#include <QCoreApplication>\n#include <QDir>\n#include <QPluginLoader>\n#include <cstdio>\n\
             #include \"greeter.h\"\n\
             int main(int argc, char** argv) {\n  QCoreApplication app(argc, argv);\n  int found = 0, worst = 0;\n  \
             for (const QString& path : QCoreApplication::libraryPaths()) {\n    \
             QDir dir(path + \"/d2tplugins\");\n    \
             for (const QString& f : dir.entryList(QDir::Files)) {\n      \
             QPluginLoader loader(dir.absoluteFilePath(f));\n      \
             if (auto* g = qobject_cast<Greeter*>(loader.instance())) {\n        \
             ++found;\n        if (g->value() != 42) worst = 1;\n      }\n    }\n  }\n  \
             std::printf(\"%d plugins\\n\", found);\n  return found ? worst : 5;\n}\n",
        )
        .file("t_other.cpp", "int main() { return 0; }\n")
        .edit("greet.cpp", &greet(7))
}

/// Qt finds the plugin in the application's directory, which no channel
/// names: the test is reached through that directory, and only it. (Before
/// the rule: `exit 0 omits tests whose result changed: ["t_app"]`.)
#[test]
fn oracle_qt_plugin_found_through_the_application_directory() {
    let o = qt_plugin_scenario("c02-qt-plugin-app-dir").run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_app"]);
    o.expect_stderr(&[
        "-> target greet -> test t_app, which may load MODULE library ",
        "/bin/d2tplugins/libgreet.so, below the directory of its program ",
    ]);
}

/// A file moc read that is newer than moc's dependency file: moc has not run
/// since it changed.
#[test]
fn oracle_file_newer_than_the_moc_depfile_is_stale() {
    let o = automoc_plugin_scenario("c18-automoc-plugin-stale")
        .touched_after_head_build("meta.json")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "DEP_EVIDENCE_STALE");
    o.expect_stderr(&["meta.json is newer than", "moc_core.cpp.d"]);
}

/// A Qt Designer form with the given `QLabel`s.
fn designer_form(labels: &[&str]) -> String {
    let widgets: String = labels
        .iter()
        .map(|l| format!("  <widget class=\"QLabel\" name=\"{l}\"/>\n"))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ui version=\"4.0\">\n <class>Form</class>\n \
         <widget class=\"QWidget\" name=\"Form\">\n{widgets} </widget>\n <resources/>\n <connections/>\n</ui>\n"
    )
}

/// `AUTOUIC` beside `AUTOMOC`, as a Qt Widgets project sets them: `gui.cpp`
/// includes `ui_form.h`, which uic makes from `forms/form.ui` (found through
/// `AUTOUIC_SEARCH_PATHS`); `t_gui` counts the form's widgets
/// (`sizeof(Ui::Form)`: one pointer per widget).
fn autouic_scenario(name: &str) -> Scenario {
    autouic_scenario_with(name, "set(CMAKE_AUTOMOC ON)\n")
}

/// [`autouic_scenario`] with `automoc` (`set(CMAKE_AUTOMOC ON)`, or nothing).
fn autouic_scenario_with(name: &str, automoc: &str) -> Scenario {
    require_qt();
    let cmake = format!(
        "{PROLOGUE}{automoc}set(CMAKE_AUTOUIC ON)\n\
         find_package(Qt5 REQUIRED COMPONENTS Widgets)\n\
         add_library(gui STATIC gui.cpp)\n\
         set_target_properties(gui PROPERTIES AUTOUIC_SEARCH_PATHS forms)\n\
         target_link_libraries(gui PUBLIC Qt5::Widgets)\n\
         add_executable(t_gui t_gui.cpp)\n\
         target_link_libraries(t_gui gui)\n\
         add_test(NAME t_gui COMMAND t_gui)\n\
         add_executable(t_other t_other.cpp)\n\
         add_test(NAME t_other COMMAND t_other)\n"
    );
    Scenario::new(name)
        .fresh_head_build()
        .file("CMakeLists.txt", &cmake)
        .file("forms/form.ui", &designer_form(&["label"]))
        .file(
            "gui.cpp",
            "#include \"ui_form.h\"\nint gui_widgets() { return sizeof(Ui::Form) / sizeof(void *); }\n",
        )
        .file("t_gui.cpp", &main_checking("int gui_widgets();", "gui_widgets() == 1"))
        .file("t_other.cpp", &main_checking("", "1 + 1 == 2"))
}

/// A widget more in the form changes the uic header `gui.cpp` includes: the
/// form is joined to that unit, and the subset is exact.
#[test]
fn oracle_autouic_form_change_selects_the_unit_that_includes_its_header() {
    expect_form_change_selects_t_gui(autouic_scenario("c18-autouic-form"));
}

/// A widget more in the form: the oracle holds, the subset is exactly
/// `t_gui`, and its chain runs from the form through the uic header.
fn expect_form_change_selects_t_gui(s: Scenario) {
    let o = s
        .edit("forms/form.ui", &designer_form(&["label", "label2"]))
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_gui"]);
    o.expect_stderr(&[
        "form.ui -> depfile gui_autogen/include",
        "ui_form.h -> unit gui.cpp",
    ]);
}

/// The form touched after the build (uic has not run since): stale.
fn expect_touched_form_is_stale(s: Scenario) {
    let o = s
        .edit("t_other.cpp", &main_checking("", "1 + 1 == 3"))
        .touched_after_head_build("forms/form.ui")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "DEP_EVIDENCE_STALE");
    o.expect_stderr(&["form.ui is newer than"]);
}

/// `AUTOUIC` without `AUTOMOC`: no `mocs_compilation.cpp`, but autogen
/// still writes the uic header `gui.cpp` includes. The form is joined to
/// that unit as with AUTOMOC (it used to be an unknown path: the full suite).
#[test]
fn oracle_autouic_without_automoc_form_change_selects_its_includer() {
    expect_form_change_selects_t_gui(
        autouic_scenario_with("c18-autouic-only", "").after_head_build(|ctx| {
            let units = std::fs::read_dir(ctx.build.join("gui_autogen"))
                .unwrap()
                .flatten()
                .any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("mocs_compilation")
                });
            assert!(!units, "scenario precondition: no AUTOMOC unit");
        }),
    );
}

/// The same form touched after the build: uic has not run since.
#[test]
fn oracle_autouic_without_automoc_form_newer_than_its_header_is_stale() {
    expect_touched_form_is_stale(autouic_scenario_with("c18-autouic-only-stale", ""));
}

/// [`autouic_scenario`] plus `t_app` (no AUTOMOC of its own, not linking
/// `gui`), which includes the uic header of `gui` through `gui`'s autogen
/// include directory, after `gui_autogen` has run.
fn autouic_other_target_scenario(name: &str) -> Scenario {
    let cmake = "get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)\n\
         if(multi)\n  set(ui_dir gui_autogen/include_$<CONFIG>)\nelse()\n  set(ui_dir gui_autogen/include)\nendif()\n\
         add_executable(t_app t_app.cpp)\n\
         set_target_properties(t_app PROPERTIES AUTOMOC OFF AUTOUIC OFF)\n\
         target_include_directories(t_app PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/${ui_dir})\n\
         target_link_libraries(t_app Qt5::Widgets)\n\
         add_dependencies(t_app gui_autogen)\n\
         add_test(NAME t_app COMMAND t_app)\n";
    autouic_scenario(name)
        .after_base_files(move |ctx| {
            let path = ctx.src.join("CMakeLists.txt");
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str(cmake);
            std::fs::write(&path, text).unwrap();
        })
        .file(
            "t_app.cpp",
            &main_checking(
                "#include \"ui_form.h\"",
                "sizeof(Ui::Form) == sizeof(void *)",
            ),
        )
}

/// The form reaches `t_app`'s unit too, not only the units of the target
/// whose autogen wrote the header.
#[test]
fn oracle_autouic_header_included_by_another_target() {
    let o = autouic_other_target_scenario("c18-autouic-other-target")
        .edit("forms/form.ui", &designer_form(&["label", "label2"]))
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_app", "t_gui"]);
}

/// When nothing explains the header (its form is nowhere autogen looks),
/// the target of every unit that includes it is opaque, not only `gui`:
/// with `opaque = "select"`, `t_app` is forced in beside `t_gui`.
#[test]
fn oracle_unexplained_autogen_header_makes_its_includer_opaque() {
    let o = autouic_other_target_scenario("c18-autouic-unexplained")
        .policy("opaque = \"select\"\n")
        .edit("t_other.cpp", &main_checking("", "1 + 1 == 3"))
        .after_head_build(|ctx| {
            std::fs::rename(ctx.src.join("forms"), ctx.root.join("forms-moved")).unwrap();
        })
        .run();
    o.assert_oracle();
    o.expect_subset(&["t_app", "t_gui", "t_other"]);
    o.expect_stderr(&[
        "forced t_app: OPAQUE_BOUNDARY: GENERATED_SOURCE",
        "no .ui file is where autogen looks for its form",
    ]);
}

/// A form newer than the header uic made from it: uic has not run since.
#[test]
fn oracle_autouic_form_newer_than_its_header_is_stale() {
    expect_touched_form_is_stale(autouic_scenario("c18-autouic-stale"));
}

/// `AUTORCC`: `core` embeds `data/v.txt` through `res.qrc` (under an alias)
/// and `t_core` reads it back from the resource system.
fn autorcc_scenario(name: &str) -> Scenario {
    require_qt();
    let cmake = format!(
        "{PROLOGUE}set(CMAKE_AUTOMOC ON)\nset(CMAKE_AUTORCC ON)\n\
         find_package(Qt5 REQUIRED COMPONENTS Core)\n\
         add_library(core STATIC core.cpp res.qrc)\n\
         target_link_libraries(core PUBLIC Qt5::Core)\n\
         add_executable(t_core t_core.cpp)\n\
         target_link_libraries(t_core core)\n\
         add_test(NAME t_core COMMAND t_core)\n\
         add_executable(t_other t_other.cpp)\n\
         add_test(NAME t_other COMMAND t_other)\n"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file(
            "res.qrc",
            "<!DOCTYPE RCC><RCC version=\"1.0\">\n<qresource prefix=\"/\">\n  \
             <!-- <file>data/unused.txt</file> -->\n  <file alias=\"v.txt\">data/v.txt</file>\n\
             </qresource>\n</RCC>\n",
        )
        .file("data/v.txt", "v1\n")
        .file(
            "core.cpp",
            "#include <QFile>\nstatic int init() { Q_INIT_RESOURCE(res); return 0; }\n\
             QByteArray core_data() {\n  init();\n  QFile f(\":/v.txt\");\n  \
             f.open(QIODevice::ReadOnly);\n  return f.readAll();\n}\n",
        )
        .file(
            "t_core.cpp",
            &main_checking(
                "#include <QByteArray>\nQByteArray core_data();",
                "core_data() == \"v1\\n\"",
            ),
        )
        .file("t_other.cpp", &main_checking("", "1 + 1 == 2"))
}

/// A resource changes the unit rcc writes: it is joined to that unit from
/// the AUTORCC info and the `.qrc`, and the subset is exact.
#[test]
fn oracle_autorcc_resource_change_selects_the_target_that_embeds_it() {
    let o = autorcc_scenario("c18-autorcc-resource")
        .edit("data/v.txt", "v2\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_core"]);
    o.expect_stderr(&["_Info.json -> unit"]);
}

/// A resource newer than the unit rcc wrote: rcc has not run since.
#[test]
fn oracle_autorcc_resource_newer_than_its_unit_is_stale() {
    let o = autorcc_scenario("c18-autorcc-stale")
        .edit("t_other.cpp", &main_checking("", "1 + 1 == 3"))
        .touched_after_head_build("data/v.txt")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "DEP_EVIDENCE_STALE");
    o.expect_stderr(&["data/v.txt is newer than", "/qrc_res"]);
}

/// A scanned file newer than autogen's parse cache has not been scanned
/// since it changed: the evidence is stale.
#[test]
fn oracle_scanned_file_newer_than_the_parse_cache_is_stale() {
    let o = automoc_scenario("c18-automoc-stale")
        .edit("core.h", &automoc_core_h(2))
        .touched_after_head_build("lonely.h")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "DEP_EVIDENCE_STALE");
    o.expect_stderr(&["lonely.h is newer than", "ParseCache"]);
}

/// A moc output without its dependency file (Qt before 5.15 writes none)
/// does not say what moc read: its target stays opaque.
#[test]
fn oracle_moc_output_without_a_dependency_file_is_opaque() {
    let o = automoc_scenario("c18-automoc-no-depfile")
        .edit("core.h", &automoc_core_h(2))
        .after_head_build(|ctx| {
            let mut removed = 0;
            for e in walkdir::WalkDir::new(ctx.build.join("core_autogen")) {
                let e = e.unwrap();
                if e.file_name() == "moc_core.cpp.d" {
                    std::fs::remove_file(e.path()).unwrap();
                    removed += 1;
                }
            }
            // One per configuration built on a multi-configuration generator.
            assert!(removed >= 1, "moc writes moc_core.cpp.d");
        })
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "GENERATED_SOURCE");
    o.expect_stderr(&["without a dependency file"]);
}

// ============================ issue 12: precision on real projects (exact selections)

impl Outcome {
    /// Stderr names every one of `needles` (a reason, a chain, a path).
    pub fn expect_stderr(&self, needles: &[&str]) {
        for n in needles {
            assert!(
                self.run.stderr.contains(n),
                "stderr should name {n:?}\n{}",
                self.report()
            );
        }
    }

    /// Precision expectation: exit 0 and exactly `want`.
    pub fn expect_exact_subset(&self, want: &[&str]) {
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            (self.run.code, self.selected()),
            (0, want),
            "PRECISION EXPECTATION FAILED (oracle passed): exactly this subset is intended\n{}",
            self.report()
        );
    }
}

/// `foo` (SHARED, VERSION/SOVERSION) linked by `app`; `other` does not use it.
fn versioned_scenario(name: &str) -> Scenario {
    Scenario::new(name)
        .file(
            "CMakeLists.txt",
            &format!(
                "{PROLOGUE}add_library(foo SHARED foo.cpp)\n\
                 set_target_properties(foo PROPERTIES VERSION 1.2.3 SOVERSION 1)\n\
                 add_executable(app app.cpp)\ntarget_link_libraries(app PRIVATE foo)\n\
                 add_executable(other other.cpp)\n\
                 add_test(NAME app.t COMMAND app)\nadd_test(NAME other.t COMMAND other)\n"
            ),
        )
        .file("foo.cpp", "int foo() { return 42; }\n")
        .file("app.cpp", &main_checking("int foo();", "foo() == 42"))
        .file("other.cpp", "int main() { return 0; }\n")
        .edit("foo.cpp", "int foo() { return 7; }\n")
}

#[test]
fn precision_versioned_shared_library_gives_chains_and_a_subset() {
    let o = versioned_scenario("p-versioned").run();
    o.assert_oracle();
    o.expect_exact_subset(&["app.t"]);
    assert!(
        o.run
            .stderr
            .contains("-> target foo -> target app -> test app.t"),
        "{}",
        o.report()
    );
    assert!(
        !o.run.stderr.contains("UNKNOWN_LINK_INPUT"),
        "{}",
        o.report()
    );
}

fn docs_scenario(name: &str) -> Scenario {
    tiny_scenario(name)
        .file("README.md", "# readme\n")
        .file("docs/guide.md", "guide\n")
        .edit("docs/guide.md", "guide, revised\n")
}

#[test]
fn precision_a_doc_change_under_a_boundary_keeps_the_subset_and_names_the_boundary() {
    let o = docs_scenario("p-boundary")
        .policy("[[boundary]]\npaths = [\"*.md\", \"docs/**\"]\nwhy = \"documentation: no build step or test reads it\"\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t.run"]);
    assert!(
        o.run
            .stderr
            .contains("assume BOUNDARY 1 (\"docs/**\"): docs/guide.md -- why: documentation"),
        "{}",
        o.report()
    );
    // The plan records the declaration and the bounded claim.
    let mut args = o.args.clone();
    args.extend(["--format".into(), "json".into()]);
    let r = common::run_bin(&args, None);
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(plan["schema"], "diff2test.plan.v2");
    assert_eq!(plan["declarations"][0]["declared"]["kind"], "boundary");
    assert_eq!(plan["declarations"][0]["subject"], "docs/guide.md");
    assert!(plan["claim"]
        .as_str()
        .unwrap()
        .starts_with("Complete with declared boundaries"));
}

#[test]
fn precision_the_same_doc_change_without_a_boundary_is_change_unknown_with_a_hint() {
    let o = docs_scenario("p-no-boundary")
        .arg("--explain-changes")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "reason CHANGE_UNKNOWN: docs/guide.md");
    assert!(
        o.run.stderr.contains(
            "hint CHANGE_UNKNOWN: docs/guide.md is in no dependency evidence: pass --record"
        ),
        "{}",
        o.report()
    );
}

/// A boundary the evidence contradicts is not applied, and said: a fallback
/// naming the rule, never a usage error born of what a change touches.
#[test]
fn precision_a_boundary_over_dependency_evidence_is_not_applied_and_named() {
    let o = docs_scenario("p-boundary-lies")
        .policy("[[boundary]]\npaths = [\"**\"]\nwhy = \"wrong on purpose\"\n")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "reason POLICY_BOUNDARY_CONTRADICTED: docs/guide.md: policy [[boundary]] 1 (\"**\") is not applied: it covers CMakeLists.txt (\"**\"), which is a CMake input");
}

#[test]
fn precision_a_data_change_selects_exactly_the_tests_that_name_it() {
    let cmake = format!(
        "{PROLOGUE}add_executable(eq eq.cpp)\nadd_executable(t t.cpp)\n\
         add_test(NAME data.a COMMAND eq ${{CMAKE_SOURCE_DIR}}/tests/data/a.txt)\n\
         add_test(NAME data.b COMMAND eq ${{CMAKE_SOURCE_DIR}}/tests/data/b.txt)\n\
         add_test(NAME other COMMAND t)\n"
    );
    let o = Scenario::new("p-data")
        .file("CMakeLists.txt", &cmake)
        .file("eq.cpp", &file_equals_main("ok"))
        .file("t.cpp", "int main() { return 0; }\n")
        .file("tests/data/a.txt", "ok")
        .file("tests/data/b.txt", "ok")
        .edit("tests/data/a.txt", "not ok")
        .policy("[[data]]\npaths = [\"tests/data/**\"]\nwhy = \"test inputs, read only by the tests that name them\"\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["data.a"]);
    assert!(o.run.stderr.contains("assume DATA 1"), "{}", o.report());
}

fn scripted_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(test1 test1.cpp)\nadd_executable(test2 test2.cpp)\n\
         add_test(NAME test1 COMMAND sh ${{CMAKE_SOURCE_DIR}}/tests/test1.test WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME test2 COMMAND sh ${{CMAKE_SOURCE_DIR}}/tests/test2.test WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("test1.cpp", "int main() { return 0; }\n")
        .file("test2.cpp", "int main() { return 0; }\n")
        .file("tests/test1.test", "#!/bin/sh\nexec ./test1\n")
        .file("tests/test2.test", "#!/bin/sh\nexec ./test2\n")
        .policy("[[script]]\ntests = [\"test*\"]\ntargets_from_script = true\nwhy = \"each script runs the program it names\"\n")
}

#[test]
fn precision_a_scripted_test_is_selected_through_its_target() {
    let o = scripted_scenario("p-script-target")
        .edit("test1.cpp", "int main() { return 1; }\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["test1"]);
    assert!(o.run.stderr.contains("assume SCRIPT 1"), "{}", o.report());
}

#[test]
fn precision_a_scripted_test_is_selected_through_its_script() {
    let o = scripted_scenario("p-script-file")
        .edit("tests/test2.test", "#!/bin/sh\n./test2 && exit 1\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["test2"]);
}

/// A test `other.t` whose program loads nothing, built and run in
/// `elsewhere/`: libfoo.so, which no target links, is a plugin to any test
/// whose working directory or program directory holds it (SAFETY-CONTRACT
/// §4.6), and the build root holds it.
const OTHER_ELSEWHERE: &str = "add_executable(other other.cpp)\n\
     set_target_properties(other PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/elsewhere)\n\
     add_test(NAME other.t COMMAND other WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/elsewhere)\n";

#[test]
fn precision_a_version_script_named_on_the_link_line_is_dependency_evidence() {
    let cmake = format!(
        "{PROLOGUE}add_library(foo SHARED foo.cpp)\n\
         target_link_options(foo PRIVATE -Wl,--version-script=${{CMAKE_CURRENT_SOURCE_DIR}}/foo.map)\n\
         set_target_properties(foo PROPERTIES LINK_DEPENDS ${{CMAKE_CURRENT_SOURCE_DIR}}/foo.map)\n\
         add_executable(loader loader.cpp)\ntarget_link_libraries(loader PRIVATE ${{CMAKE_DL_LIBS}})\n\
         add_test(NAME vis.t COMMAND loader $<TARGET_FILE:foo>)\n{OTHER_ELSEWHERE}"
    );
    let loader = format!(
        "{LOAD_H}int main(int argc, char** argv) {{ return check_plugin(argc > 1 ? argv[1] : nullptr); }}\n"
    );
    let o = Scenario::new("p-version-script")
        .file("CMakeLists.txt", &cmake)
        .file("foo.cpp", "extern \"C\" int value() { return 42; }\n")
        .file("foo.map", "{ global: value; local: *; };\n")
        .file("loader.cpp", &loader)
        .file("other.cpp", "int main() { return 0; }\n")
        .edit("foo.map", "{ global: other_name; local: *; };\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["vis.t"]);
    assert!(
        o.run
            .stderr
            .contains("foo.map -> named on the compile or link command -> target foo"),
        "{}",
        o.report()
    );
}

/// Ninja runs every compile and link command from the top of the build tree,
/// so a relative path in a fragment starts there, not in the target's build
/// directory (`sub/`): the version script of `foo` is `../src/sub/foo.map`
/// from `build/`. Resolved against `build/sub/`, it would name nothing, and
/// the change would be an unknown path.
#[test]
fn precision_ninja_resolves_a_relative_link_fragment_from_the_top_of_the_build_tree() {
    let cmake = format!(
        "{PROLOGUE}add_subdirectory(sub)\n\
         add_executable(loader loader.cpp)\ntarget_link_libraries(loader PRIVATE ${{CMAKE_DL_LIBS}})\n\
         add_test(NAME vis.t COMMAND loader $<TARGET_FILE:foo>)\n{OTHER_ELSEWHERE}"
    );
    let sub = "add_library(foo SHARED foo.cpp)\n\
               target_link_options(foo PRIVATE -Wl,--version-script=../src/sub/foo.map)\n\
               set_target_properties(foo PROPERTIES LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/foo.map)\n";
    let loader = format!(
        "{LOAD_H}int main(int argc, char** argv) {{ return check_plugin(argc > 1 ? argv[1] : nullptr); }}\n"
    );
    let o = Scenario::new("p-ninja-relative-fragment")
        .generator(Generator::Ninja)
        .file("CMakeLists.txt", &cmake)
        .file("sub/CMakeLists.txt", sub)
        .file("sub/foo.cpp", "extern \"C\" int value() { return 42; }\n")
        .file("sub/foo.map", "{ global: value; local: *; };\n")
        .file("loader.cpp", &loader)
        .file("other.cpp", "int main() { return 0; }\n")
        .edit("sub/foo.map", "{ global: other_name; local: *; };\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["vis.t"]);
    assert!(
        o.run
            .stderr
            .contains("sub/foo.map -> named on the compile or link command -> target foo"),
        "{}",
        o.report()
    );
}

// ============== issue 15: CMake edits decided by build-description fingerprints

/// Writes BASE's snapshot to `ROOT/base.snapshot.json` (from the BASE build, before the edits).
fn snapshot_base(ctx: &Ctx) {
    let b = &ctx.base_build;
    let mut args: Vec<String> = vec!["snapshot".into()];
    args.extend(common::tree_args(&ctx.src, b));
    args.extend([
        "--output".into(),
        ctx.root.join("base.snapshot.json").display().to_string(),
    ]);
    // The scenario's policy (its [[script]] rules map tests the snapshot fingerprints).
    let policy = ctx.root.join("diff2test.toml");
    if policy.is_file() {
        args.extend(["--policy".into(), policy.display().to_string()]);
    }
    if let Some(c) = ctx.config {
        args.extend(["--config".into(), c.into()]);
    }
    let r = run_diff2test(&args);
    assert_eq!(r.code, 0, "diff2test snapshot failed: {r:#?}");
}

const COMPARE: &str = "build_config = \"compare\"\n";

/// A CMake edit of the fixture, decided with `build_config = "compare"`.
fn cmake_edit(name: &str) -> Scenario {
    Scenario::new(name)
        .from_fixture()
        .after_base_build(snapshot_base)
        .policy(COMPARE)
        .arg("--base-snapshot")
        .arg("@ROOT@/base.snapshot.json")
}

/// Makes `test_util` fail at HEAD only when compiled with `-DUTIL_FLAG` (so the flag's effect is observable).
const UTIL_TEST_PATCH: (&str, &str) = ("int main(", "#ifdef UTIL_FLAG\nstatic const int d2t_flag_fails = 1;\n#else\nstatic const int d2t_flag_fails = 0;\n#endif\nint main(");

#[test]
fn compare_a_flag_on_one_target_selects_the_tests_of_its_dependents() {
    let o = cmake_edit("s-flag")
        .after_base_files(|ctx| {
            // test_util returns failure when UTIL_FLAG is defined (base: not defined).
            let p = ctx.src.join("tests/test_util.cpp");
            let t = std::fs::read_to_string(&p).unwrap();
            let t = t.replacen(UTIL_TEST_PATCH.0, UTIL_TEST_PATCH.1, 1);
            let t = t.replacen(
                "int main(int argc, char** argv) {",
                "int main(int argc, char** argv) {\n  if (d2t_flag_fails) return 1;",
                1,
            );
            std::fs::write(&p, t).unwrap();
        })
        .patch(
            "libs/util/CMakeLists.txt",
            "target_link_libraries(util PUBLIC core)",
            "target_link_libraries(util PUBLIC core)\ntarget_compile_definitions(util PUBLIC UTIL_FLAG=1)",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["util.join", "util.spaced", "util.str+concat"]);
    assert!(
        o.run.stderr.contains("BUILD_DESCRIPTION_CHANGED"),
        "{}",
        o.report()
    );
    assert!(
        o.run.stderr.contains("assume BUILD_CONFIG 1"),
        "{}",
        o.report()
    );
}

#[test]
fn compare_a_new_test_is_selected_alone() {
    let o = cmake_edit("s-new-test")
        .patch(
            "tests/CMakeLists.txt",
            "add_test(NAME core.mul COMMAND test_core mul)",
            "add_test(NAME core.mul COMMAND test_core mul)\nadd_test(NAME core.extra COMMAND test_core add)",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["core.extra"]);
    assert!(
        o.run
            .stderr
            .contains("a new test: no fingerprint of record"),
        "{}",
        o.report()
    );
}

#[test]
fn compare_a_new_target_nobody_links_selects_nothing() {
    let o = cmake_edit("s-new-target")
        .patch(
            "tests/CMakeLists.txt",
            "add_executable(checker checker.cpp)",
            "add_executable(checker checker.cpp)\nadd_executable(unused_tool checker.cpp)",
        )
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
}

#[test]
fn compare_a_version_bump_in_project_selects_nothing() {
    let o = cmake_edit("s-version")
        .patch(
            "CMakeLists.txt",
            "project(D2TFixture LANGUAGES CXX)",
            "project(D2TFixture VERSION 1.2.3 LANGUAGES CXX)",
        )
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
}

#[test]
fn compare_a_changed_link_selects_the_tests_of_that_executable() {
    let o = cmake_edit("s-link")
        .patch(
            "tests/CMakeLists.txt",
            "target_link_libraries(test_objs PRIVATE objs)",
            "target_link_libraries(test_objs PRIVATE objs util)",
        )
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&["objs.checksum", "objs.sum[0-9]+"]);
}

#[test]
fn compare_a_changed_test_property_selects_that_test() {
    let o = cmake_edit("s-property")
        .patch(
            "tests/CMakeLists.txt",
            "set_tests_properties(tool.roundtrip PROPERTIES LABELS \"tool;slow\")",
            "set_tests_properties(tool.roundtrip PROPERTIES LABELS \"tool;slow\" WILL_FAIL TRUE)",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["tool.roundtrip"]);
    assert!(
        o.run.stderr.contains("its catalogue entry"),
        "{}",
        o.report()
    );
}

/// A test whose name holds the source root (`add_test(NAME "${CMAKE_SOURCE_DIR}/…")`):
/// its catalogue entry must still count in its fingerprint when its command changes.
#[test]
fn compare_a_changed_command_selects_a_test_whose_name_holds_the_source_root() {
    let o = cmake_edit("s-rooted-name")
        .after_base_files(|ctx| {
            let p = ctx.src.join("tests/CMakeLists.txt");
            let mut t = std::fs::read_to_string(&p).unwrap();
            t.push_str(
                "add_test(NAME \"${CMAKE_SOURCE_DIR}/core.rooted\" COMMAND test_core add)\n",
            );
            std::fs::write(&p, t).unwrap();
        })
        .patch(
            "tests/CMakeLists.txt",
            "/core.rooted\" COMMAND test_core add)",
            "/core.rooted\" COMMAND test_core none)",
        )
        .run();
    o.assert_oracle();
    let rooted = format!("{}/core.rooted", o.ctx.src.display());
    assert!(o.selected().contains(&rooted), "{}", o.report());
}

#[test]
fn compare_an_edit_that_changes_nothing_selects_nothing() {
    let o = cmake_edit("s-comment")
        .patch(
            "CMakeLists.txt",
            "enable_testing()",
            "# a comment\nenable_testing()",
        )
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
}

#[test]
fn compare_mode_off_is_the_full_suite_as_before() {
    let o = Scenario::new("s-off")
        .from_fixture()
        .patch(
            "CMakeLists.txt",
            "enable_testing()",
            "# a comment\nenable_testing()",
        )
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "reason CHANGE_BUILD_CONFIG: CMakeLists.txt");
}

#[test]
fn compare_a_changed_configure_file_template_falls_back() {
    let cmake = format!(
        "{PROLOGUE}configure_file(config.h.in ${{CMAKE_BINARY_DIR}}/config.h)\n\
         add_executable(t t.cpp)\ntarget_include_directories(t PRIVATE ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME t.run COMMAND t)\n"
    );
    let o = Scenario::new("s-template")
        .file("CMakeLists.txt", &cmake)
        .file("config.h.in", "#define VALUE 1\n")
        .file(
            "t.cpp",
            &main_checking("#include \"config.h\"", "VALUE == 1"),
        )
        .edit("config.h.in", "#define VALUE 2\n")
        .after_base_build(snapshot_base)
        .policy(COMPARE)
        .arg("--base-snapshot")
        .arg("@ROOT@/base.snapshot.json")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "reason CHANGE_BUILD_CONFIG: config.h.in");
}

#[test]
fn compare_a_corrupt_or_foreign_snapshot_falls_back() {
    let o = cmake_edit("s-corrupt")
        .patch(
            "CMakeLists.txt",
            "enable_testing()",
            "# a comment\nenable_testing()",
        )
        .after_head_build(|ctx| {
            std::fs::write(
                ctx.root.join("base.snapshot.json"),
                b"{\"schema\": \"other\"}",
            )
            .unwrap();
        })
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "reason SNAPSHOT_INVALID");
    let o = cmake_edit("s-foreign")
        .patch(
            "CMakeLists.txt",
            "enable_testing()",
            "# a comment\nenable_testing()",
        )
        .after_head_build(|ctx| {
            let p = ctx.root.join("base.snapshot.json");
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            v["config"] = "Release".into();
            std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        })
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "reason SNAPSHOT_MISMATCH");
}

fn commits_scenario(name: &str) -> Scenario {
    cmake_edit(name)
        .after_base_files(|ctx| {
            git(ctx, &["init", "-q"]);
            git(ctx, &["add", "-A"]);
            git(ctx, &["commit", "-q", "-m", "A"]);
            ctx.set_var("A", &git(ctx, &["rev-parse", "HEAD"]));
        })
        .patch(
            "CMakeLists.txt",
            "enable_testing()",
            "# B\nenable_testing()",
        )
        .after_edits(|ctx| {
            git(ctx, &["commit", "-q", "-am", "B"]);
            ctx.set_var("B", &git(ctx, &["rev-parse", "HEAD"]));
            let p = ctx.src.join("CMakeLists.txt");
            let t = std::fs::read_to_string(&p)
                .unwrap()
                .replacen("# B", "# B\n# C", 1);
            std::fs::write(&p, t).unwrap();
            git(ctx, &["commit", "-q", "-am", "C"]);
            ctx.set_var("C", &git(ctx, &["rev-parse", "HEAD"]));
        })
        .no_changed_list()
}

#[test]
fn compare_a_snapshot_of_the_base_commit_is_used_and_one_of_another_commit_falls_back() {
    // The snapshot was made at A: comparing A..C uses it (nothing changed in the description).
    let o = commits_scenario("s-commit-ok")
        .arg("--base")
        .arg("@A@")
        .arg("--head")
        .arg("@C@")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
    // B..C starts at B, where no snapshot was made: the fingerprints are not comparable.
    let o = commits_scenario("s-commit-other")
        .arg("--base")
        .arg("@B@")
        .arg("--head")
        .arg("@C@")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "reason SNAPSHOT_MISMATCH");
    assert!(
        o.run.stderr.contains("but the change set starts at"),
        "{}",
        o.report()
    );
}

// ============== issue 29, class 1b: what a test may load at run time is part of its description

/// A plugin that a program `dlopen()`s by its file name (found through the
/// program's build rpath; only the program's bytes name it) and whose
/// compile definitions a CMake edit changes: the plugin is outside the test's
/// closure, so its changed description must mark it affected for the
/// loading-by-bytes walk. The programs are built, and the tests run, in
/// `bin/`, beside no plugin.
#[test]
fn compare_a_changed_plugin_description_selects_the_tests_that_may_load_it() {
    let cmake = format!(
        "{PROLOGUE}add_library(plug MODULE plug.cpp)\n\
         set_target_properties(plug PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/plugdir)\n\
         target_compile_definitions(plug PRIVATE PLUG_VALUE=1)\n\
         add_executable(loader loader.cpp)\n\
         set_target_properties(loader PROPERTIES BUILD_RPATH ${{CMAKE_BINARY_DIR}}/plugdir)\n\
         target_link_libraries(loader PRIVATE ${{CMAKE_DL_LIBS}})\n\
         add_test(NAME t_load COMMAND loader WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin)\n\
         add_executable(other other.cpp)\n\
         add_test(NAME other COMMAND other WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}}/bin)\n"
    );
    let o = Scenario::new("c29-plugin-description")
        .fresh_head_build()
        .file("CMakeLists.txt", &cmake.replace(
            "add_executable(loader loader.cpp)\n",
            "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\nadd_executable(loader loader.cpp)\n",
        ))
        .file("plug.cpp", "extern \"C\" int plug_value() { return PLUG_VALUE; }\n")
        .file(
            "loader.cpp",
            &main_checking(
                "#include <dlfcn.h>\n\
                 static int loaded_value() {\n\
                   void* h = dlopen(\"libplug.so\", RTLD_NOW);\n\
                   if (!h) return -1;\n\
                   auto f = reinterpret_cast<int (*)()>(dlsym(h, \"plug_value\"));\n\
                   return f ? f() : -2;\n\
                 }",
                "loaded_value() == 1",
            ),
        )
        .with_bystander()
        .policy(COMPARE)
        .against_base_snapshot()
        .patch("CMakeLists.txt", "PLUG_VALUE=1", "PLUG_VALUE=2")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_load"]);
    assert!(o.run.stderr.contains("MAY_LOAD_AFFECTED"), "{}", o.report());
}

// ============== issue 29, class 1c: files configure writes below a directory a test names

/// A golden file that configure writes (`file(WRITE)`) into a directory the
/// test is handed: a CMake edit that changes its content changes no target
/// and no catalogue entry, only that file. Every configure-written file a
/// test's channels reach, through a directory too, is part of its snapshot.
#[test]
fn compare_a_golden_file_configure_writes_into_a_named_directory() {
    let cmake = format!(
        "{PROLOGUE}file(WRITE ${{CMAKE_BINARY_DIR}}/golden/expected.txt \"v1\\n\")\n\
         add_executable(checker checker.cpp)\n\
         add_test(NAME t_golden COMMAND checker ${{CMAKE_BINARY_DIR}}/golden)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-golden")
        .file("CMakeLists.txt", &cmake)
        .file(
            "checker.cpp",
            "#include <fstream>\n#include <string>\n\
             int main(int argc, char** argv) {\n\
               if (argc < 2) return 2;\n\
               std::ifstream in(std::string(argv[1]) + \"/expected.txt\");\n\
               std::string s; std::getline(in, s);\n\
               return s == \"v1\" ? 0 : 1;\n\
             }\n",
        )
        .with_bystander()
        .policy(COMPARE)
        .against_base_snapshot()
        .patch("CMakeLists.txt", "expected.txt \"v1", "expected.txt \"v2")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_golden"]);
}

// ============== issue 29, class 1d: a .cmake file is a CMake edit only when configure read it

/// A `cmake -P` test whose script runs a built program and `include()`s a
/// helper that says what to expect; a `[[script]]` rule declares what the
/// script runs. Neither file is read by configure (cmakeFiles-v1 lists
/// neither): a change to the helper is no CMake edit. Before, its name alone
/// made it one, compare mode then cleared it, and the test whose helper
/// changed was omitted; now it is a path no evidence explains (the test
/// names the script, not the helper), and the run falls back.
#[test]
fn compare_a_test_time_cmake_script_is_no_cmake_edit() {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         add_test(NAME t_script COMMAND ${{CMAKE_COMMAND}} -DPROG=$<TARGET_FILE:tool> -P ${{CMAKE_CURRENT_SOURCE_DIR}}/check.cmake)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-cmake-script")
        .file("CMakeLists.txt", &cmake)
        .file("tool.cpp", "#include <cstdio>\nint main() { std::puts(\"42\"); }\n")
        .file(
            "check.cmake",
            "include(${CMAKE_CURRENT_LIST_DIR}/expect.cmake)\n\
             execute_process(COMMAND ${PROG} OUTPUT_VARIABLE out)\n\
             string(STRIP \"${out}\" out)\n\
             if(NOT out STREQUAL \"${EXPECTED}\")\n  message(FATAL_ERROR \"tool printed ${out}\")\nendif()\n",
        )
        .file("expect.cmake", "set(EXPECTED 42)\n")
        .with_bystander()
        .against_base_snapshot()
        .policy(&format!(
            "{COMPARE}[[script]]\ntests = [\"t_script\"]\ntargets = [\"tool\"]\nwhy = \"check.cmake runs tool\"\n"
        ))
        .edit("expect.cmake", "set(EXPECTED 43)\n")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
}

// ============== issue 29, class 5: names the byte scan cannot see

/// A program that starts the converter beside it by a name it keeps as
/// UTF-16 (`u"/conv"`; Qt's `QStringLiteral` stores the same bytes): no text
/// channel names `conv`, so only its bytes can say the runner may run it.
/// The byte scan reads UTF-16LE text too.
#[test]
fn oracle_program_named_in_utf16_bytes() {
    let cmake = format!(
        "{PROLOGUE}add_executable(conv conv.cpp)\n\
         add_executable(runner runner.cpp)\n\
         add_test(NAME t_runner COMMAND runner)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-utf16")
        .file("CMakeLists.txt", &cmake)
        .file(
            "conv.cpp",
            "#include <cstdio>\nint main() { std::puts(\"v1\"); }\n",
        )
        .file(
            "runner.cpp",
            &main_checking(
                "#include <unistd.h>\n#include <climits>\n#include <cstdio>\n#include <string>\n\
                 static const char16_t kConv[] = u\"/conv\";\n\
                 static std::string converted() {\n\
                   char b[PATH_MAX];\n\
                   ssize_t n = readlink(\"/proc/self/exe\", b, sizeof b - 1);\n\
                   if (n <= 0) return \"\";\n\
                   std::string cmd(b, n);\n\
                   cmd = cmd.substr(0, cmd.rfind('/'));\n\
                   for (const char16_t* w = kConv; *w; ++w) cmd += char(*w);\n\
                   FILE* p = popen(cmd.c_str(), \"r\");\n\
                   if (!p) return \"\";\n\
                   char out[64] = {0};\n\
                   if (!fgets(out, sizeof out, p)) out[0] = 0;\n\
                   pclose(p);\n\
                   return out;\n\
                 }",
                "converted() == \"v1\\n\"",
            ),
        )
        .with_bystander()
        .edit(
            "conv.cpp",
            "#include <cstdio>\nint main() { std::puts(\"v2\"); }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_runner"]);
}

// ============== issue 29, class 6: a source-tree script a test runs is a text of the test

/// A test's program is handed a source-tree shell script, which starts
/// `./tool` from the test's working directory: no text of the test names
/// `tool`, only the script does. The script is read as a text of the test,
/// so a change to `tool` selects it.
#[test]
fn oracle_script_a_test_runs_names_what_it_starts() {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         add_executable(runner runner.cpp)\n\
         add_test(NAME t_script COMMAND runner ${{CMAKE_CURRENT_SOURCE_DIR}}/run.sh WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-script")
        .file("CMakeLists.txt", &cmake)
        .file(
            "tool.cpp",
            "#include <cstdio>\nint main() { std::puts(\"tool-v1\"); }\n",
        )
        .file("run.sh", "#!/bin/sh\n./tool | grep -q tool-v1\n")
        .file(
            "runner.cpp",
            "#include <cstdlib>\n#include <string>\n\
             int main(int argc, char** argv) {\n\
               if (argc < 2) return 2;\n\
               return std::system((std::string(\"sh \") + argv[1]).c_str()) == 0 ? 0 : 1;\n\
             }\n",
        )
        .with_bystander()
        .edit(
            "tool.cpp",
            "#include <cstdio>\nint main() { std::puts(\"tool-v2\"); }\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_script"]);
    assert!(o.run.stderr.contains("names script"), "{}", o.report());
}

// ============== issue 29, class 2: custom commands are evidence

/// A custom command preprocesses a template with the compiler (`-E -P`,
/// `DEPFILE`), and a test reads what it wrote; a compiled unit includes the
/// same header. Ninja reads the command's depfile itself (never folded into
/// `.ninja_deps`), the Makefiles generator names it in `DependInfo.cmake`,
/// and the codemodel shows no `DEPENDS` on the header: a change to it must
/// select the test that reads the command's output, not only the unit's.
#[test]
fn oracle_custom_command_depfile_reads_a_header_a_unit_includes() {
    let cmake = format!(
        "{PROLOGUE}add_custom_command(OUTPUT ${{CMAKE_BINARY_DIR}}/pre.txt\n\
         \x20 COMMAND ${{CMAKE_CXX_COMPILER}} -x c -E -P -MD -MT ${{CMAKE_BINARY_DIR}}/pre.txt -MF ${{CMAKE_BINARY_DIR}}/pre.d -I${{CMAKE_SOURCE_DIR}}/inc ${{CMAKE_SOURCE_DIR}}/tpl.in -o ${{CMAKE_BINARY_DIR}}/pre.txt\n\
         \x20 DEPENDS tpl.in DEPFILE ${{CMAKE_BINARY_DIR}}/pre.d VERBATIM)\n\
         add_custom_target(pre ALL DEPENDS ${{CMAKE_BINARY_DIR}}/pre.txt)\n\
         add_executable(contains contains.cpp)\n\
         add_test(NAME t_pre COMMAND contains ${{CMAKE_BINARY_DIR}}/pre.txt \"value 3\")\n\
         add_executable(use use.cpp)\n\
         target_include_directories(use PRIVATE inc)\n\
         add_test(NAME t_use COMMAND use)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-custom-depfile")
        .file("CMakeLists.txt", &cmake)
        .file("inc/v.h", "#define V 3\n")
        .file("tpl.in", "#include \"v.h\"\nvalue V\n")
        .file("contains.cpp", FILE_CONTAINS_MAIN)
        .file("use.cpp", &main_checking("#include \"v.h\"", "V > 0"))
        .with_bystander()
        .edit("inc/v.h", "#define V 4\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_pre");
    o.expect_exact_subset(&["t_pre", "t_use"]);
    assert!(
        o.run.stderr.contains("custom command writing pre.txt"),
        "{}",
        o.report()
    );
}

/// A header written by `add_custom_target(... BYPRODUCTS ...)` from a
/// project program and included by another target, ordered by declaration
/// only (no `add_dependencies`): the codemodel lists the header nowhere. The
/// includer depends on what produced it, so a change to the program's
/// source selects the includer's test. (The program writes the header only
/// when its content changes, as generators do, so that the includer, built
/// after it, is not older than it.)
#[test]
fn oracle_byproduct_header_of_a_custom_target_depends_on_its_program() {
    let cmake = format!(
        "{PROLOGUE}add_executable(genh genh.cpp)\n\
         add_custom_target(mkhdr ALL COMMAND genh ${{CMAKE_BINARY_DIR}}/gen/g.h BYPRODUCTS ${{CMAKE_BINARY_DIR}}/gen/g.h)\n\
         add_executable(use use.cpp)\n\
         target_include_directories(use PRIVATE ${{CMAKE_BINARY_DIR}}/gen)\n\
         add_test(NAME t_use COMMAND use)\n{BYSTANDER}"
    );
    let genh = |v: u32| {
        format!(
            "#include <filesystem>\n#include <fstream>\n#include <sstream>\n#include <string>\n\
             int main(int, char** argv) {{\n\
               std::filesystem::create_directories(std::filesystem::path(argv[1]).parent_path());\n\
               std::string want = \"#define G {v}\\n\";\n\
               std::stringstream have; have << std::ifstream(argv[1]).rdbuf();\n\
               if (have.str() != want) std::ofstream(argv[1]) << want;\n}}\n"
        )
    };
    let o = Scenario::new("c29-byproduct")
        .file("CMakeLists.txt", &cmake)
        .file("genh.cpp", &genh(1))
        .file("use.cpp", &main_checking("#include \"g.h\"", "G == 1"))
        .with_bystander()
        .build_first("mkhdr")
        .edit("genh.cpp", &genh(2))
        .run();
    o.assert_oracle();
    o.expect_changed("t_use");
    o.expect_exact_subset(&["t_use"]);
}

/// A header a custom command writes with a source-tree CMake script from
/// declared data, included by `use`.
fn complete_producer_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_custom_command(OUTPUT ${{CMAKE_BINARY_DIR}}/gen/table.h\n\
         \x20 COMMAND ${{CMAKE_COMMAND}} -DIN=${{CMAKE_SOURCE_DIR}}/data/table.txt -DSUFFIX= -DOUT=${{CMAKE_BINARY_DIR}}/gen/table.h -P ${{CMAKE_SOURCE_DIR}}/tools/mktable.cmake\n\
         \x20 DEPENDS tools/mktable.cmake data/table.txt VERBATIM)\n\
         add_executable(use use.cpp ${{CMAKE_BINARY_DIR}}/gen/table.h)\n\
         target_include_directories(use PRIVATE ${{CMAKE_BINARY_DIR}}/gen)\n\
         add_test(NAME t_use COMMAND use)\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("data/table.txt", "1\n")
        .file(
            "tools/mktable.cmake",
            "file(STRINGS ${IN} v)\nfile(WRITE ${OUT} \"#define TABLE ${v}${SUFFIX}\\n\")\n",
        )
        .file(
            "use.cpp",
            &main_checking("#include \"table.h\"", "TABLE == 1"),
        )
        .with_bystander()
}

/// A generated header whose producer's evidence is complete (a source-tree
/// script run by an interpreter, its data declared) is no longer opaque: a
/// change to the data selects the includer's test and skips the others,
/// where every run was `GENERATED_SOURCE` before.
#[test]
fn precision_a_generated_header_with_complete_producer_evidence_is_a_subset() {
    let o = complete_producer_scenario("c29-complete-producer")
        .edit("data/table.txt", "2\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_use"]);
    assert!(!o.run.stderr.contains("GENERATED_SOURCE"), "{}", o.report());
}

/// Compare mode: a CMake edit to the custom command alone (its arguments)
/// changes the fingerprint of the target it belongs to, so the includer of
/// what it writes is selected.
#[test]
fn compare_a_custom_command_edit_selects_the_includer_of_its_output() {
    let o = complete_producer_scenario("c29-complete-producer-compare")
        .policy(COMPARE)
        .against_base_snapshot()
        .patch("CMakeLists.txt", "-DSUFFIX= ", "-DSUFFIX=0 ")
        .run();
    o.assert_oracle();
    o.expect_changed("t_use");
    o.expect_exact_subset(&["t_use"]);
}

// ============== issue 29, class 3: configure reads project files CMake does not record

/// Configure takes the version from a compiled header with `file(STRINGS)`
/// and writes it into a configured header another target includes;
/// cmakeFiles-v1 does not list the header. A change to it is a change to
/// the build configuration (default mode: the whole suite), not only a
/// header the depfiles walk.
fn configure_reads_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}file(STRINGS \"${{CMAKE_CURRENT_SOURCE_DIR}}/include/x/version.h\" vline REGEX \"X_VERSION\")\n\
         string(REGEX MATCH \"[0-9]+\" XV \"${{vline}}\")\n\
         configure_file(config.h.in ${{CMAKE_BINARY_DIR}}/config.h)\n\
         add_executable(reader reader.cpp)\n\
         target_include_directories(reader PRIVATE ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME t_config COMMAND reader)\n\
         add_executable(direct direct.cpp)\n\
         target_include_directories(direct PRIVATE include)\n\
         add_test(NAME t_direct COMMAND direct)\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("include/x/version.h", "#define X_VERSION 1\n")
        .file("config.h.in", "#define CONFIG_VERSION @XV@\n")
        .file(
            "reader.cpp",
            &main_checking("#include \"config.h\"", "CONFIG_VERSION == 1"),
        )
        .file(
            "direct.cpp",
            &main_checking("#include \"x/version.h\"", "X_VERSION > 0"),
        )
        .with_bystander()
}

#[test]
fn oracle_configure_reads_a_header_with_file_strings() {
    let o = configure_reads_scenario("c29-configure-reads")
        .edit("include/x/version.h", "#define X_VERSION 2\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_config");
    o.expect_fallback_naming(3, "CHANGE_BUILD_CONFIG");
    o.expect_stderr(&["file(STRINGS"]);
}

/// The same in compare mode: the configured header's bytes are part of the
/// snapshot, so its reader is selected with the header's own includer.
#[test]
fn compare_a_header_configure_reads_selects_the_configured_headers_readers() {
    let o = configure_reads_scenario("c29-configure-reads-compare")
        .policy(COMPARE)
        .against_base_snapshot()
        .edit("include/x/version.h", "#define X_VERSION 2\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_config", "t_direct"]);
}

// ============== issue 29, class 6: `.incbin` through the assembler's search path

/// A C++ unit embeds a header's text with inline assembly (`.incbin`), found
/// through `-Wa,-I`; another unit `#include`s the same header. No depfile
/// lists what the assembler read, so the header looked like the includer's
/// alone and the embedding program's test was omitted. Files below a
/// directory the assembler searches are evidence of the target whose flags
/// name it. (A fresh HEAD build: an incremental one does not rebuild what
/// no depfile lists.)
#[test]
fn oracle_incbin_through_the_assembler_search_path() {
    let cmake = format!(
        "{PROLOGUE}add_executable(emb emb.cpp)\n\
         target_compile_options(emb PRIVATE -Wa,-I${{CMAKE_CURRENT_SOURCE_DIR}}/inc)\n\
         add_test(NAME t_emb COMMAND emb)\n\
         add_executable(use use.cpp)\n\
         target_include_directories(use PRIVATE inc)\n\
         add_test(NAME t_use COMMAND use)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-incbin")
        .file("CMakeLists.txt", &cmake)
        .file("inc/table.h", "#define TABLE 1 /* v1 */\n")
        .file(
            "emb.cpp",
            "#include <cstring>\n\
             asm(\".section .rodata\\n.global table_text\\ntable_text:\\n.incbin \\\"table.h\\\"\\n.byte 0\\n.previous\\n\");\n\
             extern \"C\" const char table_text[];\n\
             int main() { return std::strstr(table_text, \"v1\") ? 0 : 1; }\n",
        )
        .file("use.cpp", &main_checking("#include \"table.h\"", "TABLE > 0"))
        .with_bystander()
        .fresh_head_build()
        .edit("inc/table.h", "#define TABLE 1 /* v2 */\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_emb");
    o.expect_exact_subset(&["t_emb", "t_use"]);
    o.expect_stderr(&["assembler search directory of target emb"]);
}

// ============== issue 29, class 6: data found from `__FILE__`

/// A `[[data]]` rule says the data is read only by the tests that name it.
/// One test names its file; another finds it from its own source path
/// (`__FILE__`, kept in its `.rodata`) and names nothing. The bytes of what
/// a test runs holding a source path whose directory holds the changed path,
/// and the changed path's file name, name it too.
#[test]
fn oracle_data_found_from_the_source_path_under_a_data_rule() {
    let cmake = format!(
        "{PROLOGUE}add_executable(from_file from_file.cpp)\n\
         add_test(NAME t_file COMMAND from_file)\n\
         add_executable(contains contains.cpp)\n\
         add_test(NAME t_named COMMAND contains ${{CMAKE_CURRENT_SOURCE_DIR}}/data/input.txt v1)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-dunder-file")
        .file("CMakeLists.txt", &cmake)
        .file("data/input.txt", "v1\n")
        .file("contains.cpp", FILE_CONTAINS_MAIN)
        .file(
            "from_file.cpp",
            &main_checking(
                "#include <fstream>\n#include <string>\n\
                 static std::string first_line() {\n\
                   std::string f = __FILE__;\n\
                   std::ifstream in(f.substr(0, f.rfind('/')) + \"/data/input.txt\");\n\
                   std::string s; std::getline(in, s); return s;\n\
                 }",
                "first_line() == \"v1\"",
            ),
        )
        .with_bystander()
        .policy("[[data]]\npaths = [\"data/**\"]\nwhy = \"read only by the tests that name it\"\n")
        .edit("data/input.txt", "v2\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_file");
    o.expect_exact_subset(&["t_file", "t_named"]);
    o.expect_stderr(&["(as __FILE__ does)"]);
}

// ============== issue 29, class 6: a cleanup test's output read by a later test

/// A cleanup test (`FIXTURES_CLEANUP`) writes a build-tree file that a
/// later, unrelated test reads; no build step writes it. The two name the
/// same test-time path, so they share data: the writer's change selects the
/// reader.
#[test]
fn oracle_cleanup_test_output_read_by_a_later_test() {
    let cmake = format!(
        "{PROLOGUE}add_executable(writer writer.cpp)\n\
         add_executable(noop noop.cpp)\n\
         add_test(NAME t_req COMMAND noop)\n\
         set_tests_properties(t_req PROPERTIES FIXTURES_REQUIRED F)\n\
         add_test(NAME t_clean COMMAND writer ${{CMAKE_BINARY_DIR}}/state.txt)\n\
         set_tests_properties(t_clean PROPERTIES FIXTURES_CLEANUP F)\n\
         add_executable(later later.cpp)\n\
         add_test(NAME t_later COMMAND later ${{CMAKE_BINARY_DIR}}/state.txt state-v1)\n{BYSTANDER}"
    );
    let writer = |v: u32| {
        format!(
            "#include <fstream>\nint main(int, char** argv) {{ std::ofstream(argv[1]) << \"state-v{v}\\n\"; }}\n"
        )
    };
    let o = Scenario::new("c29-cleanup-output")
        .file("CMakeLists.txt", &cmake)
        .file("writer.cpp", &writer(1))
        .file("noop.cpp", "int main() { return 0; }\n")
        // Later: it waits (3 s at most) for the file to be written after it
        // started, as a test ctest runs after the cleanup would find it.
        .file(
            "later.cpp",
            "#include <chrono>\n#include <filesystem>\n#include <fstream>\n#include <sstream>\n#include <string>\n#include <thread>\n\
             int main(int argc, char** argv) {\n\
               if (argc < 3) return 2;\n\
               namespace fs = std::filesystem;\n\
               auto start = fs::file_time_type::clock::now();\n\
               for (int i = 0; i < 30; ++i) {\n\
                 std::error_code ec;\n\
                 auto t = fs::last_write_time(argv[1], ec);\n\
                 if (!ec && t > start) break;\n\
                 std::this_thread::sleep_for(std::chrono::milliseconds(100));\n\
               }\n\
               std::stringstream text; text << std::ifstream(argv[1]).rdbuf();\n\
               return text.str().find(argv[2]) != std::string::npos ? 0 : 1;\n\
             }\n",
        )
        .with_bystander()
        .edit("writer.cpp", &writer(2))
        .run();
    o.assert_oracle();
    o.expect_changed("t_later");
    o.expect_exact_subset(&["t_clean", "t_later", "t_req"]);
    o.expect_stderr(&["which no build step writes and selected test"]);
}

/// Issue 30, item 5: `--base-snapshot` alone turns compare mode on (no
/// policy file), with the assumption printed.
#[test]
fn compare_mode_by_the_base_snapshot_flag_alone() {
    let o = configure_reads_scenario("c30-compare-by-flag")
        .against_base_snapshot()
        .edit("include/x/version.h", "#define X_VERSION 2\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_config", "t_direct"]);
    o.expect_stderr(&["assume BUILD_CONFIG 1 (\"compare\")"]);
}

// ============== issue 30, item 2: unreferenced_paths = "skip"

const SKIP_UNREFERENCED: &str = "unreferenced_paths = \"skip\"\n";

/// Documentation, CI files, a README a test reads, and a script that finds
/// its expected output beside itself by a name it computes.
fn unreferenced_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(contains contains.cpp)\n\
         add_test(NAME t_readme COMMAND contains ${{CMAKE_CURRENT_SOURCE_DIR}}/README.md hello)\n\
         add_executable(tool tool.cpp)\n\
         add_executable(runner runner.cpp)\n\
         add_test(NAME t_expected COMMAND runner ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/check.sh tool WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("README.md", "hello\n")
        .file("docs/guide.md", "# Guide\n")
        .file(".github/workflows/ci.yml", "on: push\n")
        .file("contains.cpp", FILE_CONTAINS_MAIN)
        .file("tool.cpp", "#include <cstdio>\nint main() { std::puts(\"out-v1\"); }\n")
        .file(
            "tests/check.sh",
            "#!/bin/sh\nd=$(dirname \"$0\")\n./$1 > \"$1.out\" && cmp \"$1.out\" \"$d/$1.expected\"\n",
        )
        .file("tests/tool.expected", "out-v1\n")
        .file(
            "runner.cpp",
            "#include <cstdlib>\n#include <string>\n\
             int main(int argc, char** argv) {\n\
               if (argc < 3) return 2;\n\
               return std::system((std::string(\"sh \") + argv[1] + \" \" + argv[2]).c_str()) == 0 ? 0 : 1;\n\
             }\n",
        )
        .with_bystander()
}

/// A docs change and a CI-file change: nothing references them, so with the
/// mode they are skipped (an empty subset, the assumption printed); without
/// it they cost the whole suite.
#[test]
fn unreferenced_docs_and_ci_files_are_skipped_only_with_the_mode() {
    let o = unreferenced_scenario("c30-unref-docs")
        .policy(SKIP_UNREFERENCED)
        .edit("docs/guide.md", "# Guide, v2\n")
        .edit(".github/workflows/ci.yml", "on: [push, pull_request]\n")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
    o.expect_stderr(&["assume UNREFERENCED_PATHS 1 (\"skip\"): docs/guide.md"]);
    let o = unreferenced_scenario("c30-unref-docs-default")
        .edit("docs/guide.md", "# Guide, v2\n")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
}

/// A README a test reads is referenced: never skipped.
#[test]
fn unreferenced_mode_never_skips_a_readme_a_test_reads() {
    let o = unreferenced_scenario("c30-unref-readme")
        .policy(SKIP_UNREFERENCED)
        .edit("README.md", "bye\n")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
    o.expect_stderr(&["test \"t_readme\" names"]);
}

/// An expected-output file a script finds beside itself by a name it
/// computes (`$(dirname "$0")/$1.expected`): the script's directory is
/// referenced, so the file is never skipped.
#[test]
fn unreferenced_mode_never_skips_what_a_script_finds_beside_itself() {
    let o = unreferenced_scenario("c30-unref-expected")
        .policy(SKIP_UNREFERENCED)
        .edit("tests/tool.expected", "out-v2\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_expected");
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
    o.expect_stderr(&["finds files relative to itself"]);
}

/// A `[[data]]` path template, `tests/{test}.expected`, declares the
/// expected output a test's script finds by a name it computes: a change to
/// one selects the test named in its path, and only it (without the rule:
/// `CHANGE_UNKNOWN`, the whole suite, as the script finds files beside
/// itself).
#[test]
fn a_data_template_selects_the_test_its_expected_file_names() {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         add_executable(other2 other2.cpp)\n\
         add_test(NAME tool COMMAND ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/run.sh tool WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME other2 COMMAND ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/run.sh other2 WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n"
    );
    let policy = "unreferenced_paths = \"skip\"\n\
                  [[script]]\ntests = [\"*\"]\ntargets = [\"{test}\"]\nwhy = \"run.sh runs the program named like the test\"\n\
                  [[data]]\npaths = [\"tests/{test}.expected\"]\nwhy = \"run.sh compares a program's output with tests/<its test>.expected\"\n";
    let base = |name: &str| {
        Scenario::new(name)
            .file("CMakeLists.txt", &cmake)
            .file("tool.cpp", "#include <cstdio>\nint main() { std::puts(\"tool-v1\"); }\n")
            .file("other2.cpp", "#include <cstdio>\nint main() { std::puts(\"other-v1\"); }\n")
            .file(
                "tests/run.sh",
                "#!/bin/sh\nd=$(dirname \"$0\")\n./$1 > \"$1.out\" && cmp \"$1.out\" \"$d/$1.expected\"\n",
            )
            .file("tests/tool.expected", "tool-v1\n")
            .file("tests/other2.expected", "other-v1\n")
            .after_base_files(|ctx| {
                use std::os::unix::fs::PermissionsExt;
                let p = ctx.src.join("tests/run.sh");
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            })
    };
    let o = base("c30-data-template")
        .policy(policy)
        .edit("tests/tool.expected", "tool-v2\n")
        .run();
    o.assert_oracle();
    o.expect_changed("tool");
    o.expect_exact_subset(&["tool"]);
    o.expect_stderr(&["assume DATA 1 (\"tests/{test}.expected\"): tests/tool.expected"]);
    // init finds the family from the evidence and suggests the rule (commented).
    let r = o.init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("#   tests/{test}*.expected: beside the scripts of 2 tests")
            && r.stdout.contains("# paths = [\"tests/{test}*.expected\"]"),
        "{}",
        r.stdout
    );
    // Without the data rule, the script's directory is referenced: the whole suite.
    let without = policy.split("[[data]]").next().unwrap().to_owned();
    let o = base("c30-data-template-without")
        .policy(&without)
        .edit("tests/tool.expected", "tool-v2\n")
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
}

/// xz's unit tests get `srcdir=SRC/tests` and read `$srcdir/files/NAME` by
/// names they compute: they name the directory, so a change to a file below
/// it costs the whole suite unless a data rule says who reads it. init lists
/// the directory as `tests/` and suggests `tests/**` (before: `tests`, a glob
/// no file below it matches, so the rule, uncommented, changed nothing);
/// with it the change selects exactly the test that names the directory.
#[test]
fn init_rules_a_directory_tests_name_with_everything_below_it() {
    let cmake = format!(
        "{PROLOGUE}add_executable(reader reader.cpp)\n\
         add_test(NAME reader COMMAND reader)\n\
         set_tests_properties(reader PROPERTIES ENVIRONMENT \"srcdir=${{CMAKE_SOURCE_DIR}}/tests\")\n\
         {BYSTANDER}"
    );
    let reader = "#include <cstdio>\n#include <cstdlib>\n#include <string>\n\
                  int main() {\n\
                  \x20 const char* d = std::getenv(\"srcdir\");\n\
                  \x20 if (!d) return 2;\n\
                  \x20 std::string p = std::string(d) + \"/files/\" + \"input\" + \".txt\";\n\
                  \x20 std::FILE* f = std::fopen(p.c_str(), \"r\");\n\
                  \x20 if (!f) return 3;\n\
                  \x20 char b[3] = {0};\n\
                  \x20 std::size_t n = std::fread(b, 1, 2, f);\n\
                  \x20 std::fclose(f);\n\
                  \x20 bool ok = n == 2 && b[0] == 'v' && b[1] == '1';\n\
                  \x20 std::puts(ok ? \"ok\" : \"FAIL\");\n\
                  \x20 return ok ? 0 : 1;\n\
                  }\n";
    let base = |name: &str| {
        Scenario::new(name)
            .file("CMakeLists.txt", &cmake)
            .file("reader.cpp", reader)
            .file("tests/files/input.txt", "v1\n")
            .with_bystander()
            .edit("tests/files/input.txt", "v2\n")
    };
    let o = base("c30-data-dir").run();
    o.assert_oracle();
    o.expect_changed("reader");
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
    let r = o.init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\n#   tests/\n"), "{}", r.stdout);
    let rule = "[[data]]\npaths = [\"tests/**\"]\nwhy = \"test data, read only by the tests that name it\"\n";
    assert!(
        r.stdout.contains(&format!(
            "# {}",
            rule.replace('\n', "\n# ").trim_end_matches("# ")
        )),
        "{}",
        r.stdout
    );
    let o = base("c30-data-dir-rule").policy(rule).run();
    o.assert_oracle();
    o.expect_exact_subset(&["reader"]);
    o.expect_stderr(&["assume DATA 1 (\"tests/**\"): tests/files/input.txt"]);
}

/// libpng's test scripts: one file per test, `tests/NAME.cmake`, each
/// running the program its command line names on the files it lists. Beside
/// `tests/tool.cmake` lies `tests/tool-data.cmake`, the script of the test
/// `tool-data`: a test's own script, never a data file another test is named
/// for. Configured into the build tree (libpng's `configure_file` of
/// `test.cmake.in`) or written in the source tree, init suggests no
/// `[[data]]` rule over them (before: `BUILD/tests/{test}*.cmake`, a path
/// no change set holds, and `tests/{test}*.cmake` over other tests' scripts).
#[test]
fn init_offers_no_data_rule_over_other_tests_scripts() {
    let script = "execute_process(COMMAND \"${TEST_COMMAND}\" ${TEST_FILES} RESULT_VARIABLE rc)\n\
                  if(rc)\n  message(FATAL_ERROR \"failed: ${rc}\")\nendif()\n";
    let tool = main_checking("", "true");
    for (name, configured) in [
        ("c30-init-configured-scripts", true),
        ("c30-init-source-scripts", false),
    ] {
        let (add, dir) = if configured {
            (
                "  set(TEST_FILES \"${ARGN}\")\n  configure_file(${CMAKE_SOURCE_DIR}/test.cmake.in ${CMAKE_BINARY_DIR}/tests/${NAME}.cmake @ONLY)\n",
                "${CMAKE_BINARY_DIR}/tests",
            )
        } else {
            ("", "${CMAKE_SOURCE_DIR}/tests")
        };
        let cmake = format!(
            "{PROLOGUE}function(script_test NAME PROGRAM)\n{add}  add_test(NAME ${{NAME}} COMMAND ${{CMAKE_COMMAND}} -DTEST_COMMAND=$<TARGET_FILE:${{PROGRAM}}> \"-DTEST_FILES=${{ARGN}}\" -P {dir}/${{NAME}}.cmake)\nendfunction()\n\
             add_executable(tool tool.cpp)\nadd_executable(other other.cpp)\n\
             script_test(tool tool)\nscript_test(tool-data tool ${{CMAKE_SOURCE_DIR}}/data/a.txt)\n\
             script_test(other other)\nscript_test(other-data other ${{CMAKE_SOURCE_DIR}}/data/b.txt)\n"
        );
        let mut sc = Scenario::new(name)
            .file("CMakeLists.txt", &cmake)
            .file("tool.cpp", &tool)
            .file("other.cpp", &tool)
            .file("data/a.txt", "a\n")
            .file("data/b.txt", "b\n");
        if configured {
            sc = sc.file(
                "test.cmake.in",
                &format!("set(TEST_FILES \"@TEST_FILES@\")\n{script}"),
            );
        } else {
            for t in ["tool", "tool-data", "other", "other-data"] {
                sc = sc.file(&format!("tests/{t}.cmake"), script);
            }
        }
        let o = sc.edit("data/a.txt", "a2\n").run();
        o.assert_oracle_may_be_vacuous();
        o.expect_fallback_naming(3, "TEST_COMMAND_UNMAPPED");
        let r = o.init();
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert!(!r.stdout.contains("[[data]]"), "{name}: {}", r.stdout);
        assert!(!r.stdout.contains("{test}"), "{name}: {}", r.stdout);
        assert!(
            r.stdout.contains("POLICY_WRITTEN") || r.stderr.contains("POLICY_WRITTEN"),
            "{name}: {}",
            r.stderr
        );
    }
}

/// A shared library at the top of the tree with `assert()` holds its
/// source path (`__FILE__`): the whole tree lies below the directory it
/// might find files in by computed names, so `unreferenced_paths` keeps a
/// README there (`CHANGE_UNKNOWN`, naming the library), `init` lists it apart
/// and puts it in the boundary it suggests, and that boundary, uncommented,
/// skips it.
#[test]
fn a_library_holding_its_top_level_source_path_keeps_docs_referenced_and_init_says_so() {
    let cmake = format!(
        "{PROLOGUE}add_library(core SHARED core.cpp)\n\
         add_executable(t_core tests/t.cpp)\ntarget_link_libraries(t_core core)\n\
         add_test(NAME t_core COMMAND t_core)\n"
    );
    let base = |name: &str| {
        Scenario::new(name)
            .file("CMakeLists.txt", &cmake)
            .file(
                "core.cpp",
                "#include <cassert>\nint core_value(int x) { assert(x >= 0); return x + 1; }\n",
            )
            .file(
                "tests/t.cpp",
                "int core_value(int);\nint main() { return core_value(1) == 2 ? 0 : 1; }\n",
            )
            .file("README.md", "# core\n")
    };
    let o = base("c30-root-file")
        .policy(SKIP_UNREFERENCED)
        .edit("README.md", "# core, v2\n")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
    o.expect_stderr(&["holds source path ./… (as __FILE__ does)"]);
    let r = o.init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("# Below the source directory of a binary a test runs or loads")
            && r.stdout
                .contains("#   README.md: libcore.so holds source path ./…"),
        "{}",
        r.stdout
    );
    let policy = init_boundary_policy(
        &r.stdout,
        "README.md",
        "documentation: core does not read it",
    );
    let o = base("c30-root-file-boundary")
        .policy(&policy)
        .edit("README.md", "# core, v3\n")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
    o.expect_stderr(&["assume BOUNDARY 1"]);
}

/// `unreferenced_paths = "skip"` and init's suggested `[[boundary]]` (from
/// its output `init`), uncommented, which must list `path`.
fn init_boundary_policy(init: &str, path: &str, why: &str) -> String {
    let boundary = init
        .lines()
        .find(|l| l.starts_with("# paths = [") && l.contains(&format!("\"{path}\"")))
        .unwrap_or_else(|| panic!("no boundary suggestion with {path}:\n{init}"))
        .trim_start_matches("# ");
    format!("{SKIP_UNREFERENCED}[[boundary]]\n{boundary}\nwhy = \"{why}\"\n")
}

/// init's list of unreferenced entries is what `unreferenced_paths` decides
/// path by path: a directory whose name a CMake input holds as a word (here
/// `execute_process(… -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/gen.cmake)`, which
/// writes a header at configure; mbedtls runs `scripts/config.py` so) is
/// referenced, and its boundary is not suggested. Before, init listed
/// `tools/` as referenced by nothing and suggested `tools/**` in its
/// `[[boundary]]`: uncommented, it skipped the edit that fails `t_gen`.
#[test]
fn init_keeps_a_directory_a_cmake_input_names_out_of_its_boundary() {
    let cmake = format!(
        "{PROLOGUE}execute_process(COMMAND ${{CMAKE_COMMAND}} -DOUT=${{CMAKE_CURRENT_BINARY_DIR}}/gen.h -P ${{CMAKE_CURRENT_SOURCE_DIR}}/tools/gen.cmake)\n\
         add_executable(t_gen t.cpp)\ntarget_include_directories(t_gen PRIVATE ${{CMAKE_CURRENT_BINARY_DIR}})\n\
         add_test(NAME t_gen COMMAND t_gen)\n"
    );
    let base = |name: &str| {
        Scenario::new(name)
            .file("CMakeLists.txt", &cmake)
            .file(
                "tools/gen.cmake",
                "file(WRITE ${OUT} \"#define VALUE 1\\n\")\n",
            )
            .file(
                "t.cpp",
                "#include \"gen.h\"\nint main() { return VALUE == 1 ? 0 : 1; }\n",
            )
            .file("docs/guide.md", "# guide\n")
            .fresh_head_build()
            .edit(
                "tools/gen.cmake",
                "file(WRITE ${OUT} \"#define VALUE 2\\n\")\n",
            )
    };
    let o = base("c37-init-named-dir").run();
    o.expect_changed("t_gen");
    o.assert_oracle();
    let r = o.init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("#   tools/: a CMake input (or a file it names) holds its name \"tools\"\n"),
        "{}",
        r.stdout
    );
    let policy = init_boundary_policy(
        &r.stdout,
        "docs/**",
        "documentation: no build step reads it",
    );
    assert!(!policy.contains("tools"), "{policy}");
    let o = base("c37-init-named-dir-boundary").policy(&policy).run();
    o.expect_changed("t_gen");
    o.assert_oracle();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN: tools/gen.cmake");
}

/// A static library at the top of the tree built with `-g`: its members'
/// debug information holds their source paths, but that is no data a
/// program reads at run time (only the members' data sections are, as for
/// ELF files): README.md is referenced by nothing, init says so, and
/// `unreferenced_paths` skips its change.
#[test]
fn a_static_library_with_debug_info_at_the_top_references_no_readme() {
    let cmake = format!(
        "{PROLOGUE}add_library(core STATIC core.cpp)\ntarget_compile_options(core PRIVATE -g)\n\
         add_executable(t_core tests/t.cpp)\ntarget_link_libraries(t_core core)\n\
         add_test(NAME t_core COMMAND t_core)\n"
    );
    let o = Scenario::new("c37-static-g")
        .file("CMakeLists.txt", &cmake)
        .file("core.cpp", "int core_value(int x) { return x + 1; }\n")
        .file(
            "tests/t.cpp",
            "int core_value(int);\nint main() { return core_value(1) == 2 ? 0 : 1; }\n",
        )
        .file("README.md", "# core\n")
        .policy(SKIP_UNREFERENCED)
        .edit("README.md", "# core, v2\n")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
    let r = o.init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let unreferenced = r
        .stdout
        .split("# Referenced top-level entries")
        .next()
        .unwrap_or("");
    assert!(
        unreferenced.contains("#   README.md\n") && !r.stdout.contains("README.md: libcore.a"),
        "{}",
        r.stdout
    );
}

/// A project whose CMakeLists.txt adds `tests` (and a test `t` and the
/// bystander), run with an empty change set; checks the empty selection.
fn empty_change_set(name: &str, tests: &str, files: &[(&str, &str)]) -> Outcome {
    let mut s = Scenario::new(name)
        .file(
            "CMakeLists.txt",
            &format!(
                "{PROLOGUE}add_executable(t t.cpp)\nadd_test(NAME t COMMAND t)\n{tests}{BYSTANDER}"
            ),
        )
        .file("t.cpp", "int main() { return 0; }\n");
    for (path, text) in files {
        s = s.file(path, text);
    }
    let o = s
        .with_bystander()
        .no_changed_list()
        .arg("--changed-from")
        .arg("/dev/null")
        .run();
    o.assert_oracle_may_be_vacuous();
    assert!(o.changed_results().is_empty());
    o.expect_exact_subset(&[]);
    o.expect_stderr(&["the change set is empty"]);
    o
}

/// An empty change set (a re-run, an empty commit) selects nothing, exit 0:
/// base and head are the same tree, built and run whole at both, and no
/// test's result changes.
#[test]
fn an_empty_change_set_selects_nothing() {
    empty_change_set("c31-empty-change-set", "", &[]);
}

/// The same with a test the evidence cannot map (a script): with nothing
/// changed it affects nothing either, exit 0 (it was 3, while the README
/// promised 0).
#[test]
fn an_empty_change_set_with_an_unmapped_test_selects_nothing() {
    let o = empty_change_set(
        "c37-empty-change-set-unmapped",
        "add_test(NAME s COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/s.sh)\n",
        &[("s.sh", "n=t\nexec \"./${n}\"\n")],
    );
    assert!(
        !o.run.stderr.contains("TEST_COMMAND_UNMAPPED"),
        "{}",
        o.run.stderr
    );
}

/// A header added where a compiler searches: beside the unit that includes
/// `config.h` from an include directory (a quote include looks beside the
/// includer first), or named by a `__has_include` of a file that was
/// missing. Neither make nor ninja rebuilds for it; a build that compiles
/// the unit again lists it in the unit's depfile, so it is dependency
/// evidence of exactly that unit, with or without the mode (a build that
/// did not compile it again runs the same program).
#[test]
fn a_header_a_compiler_finds_by_search_is_evidence_after_the_build_that_reads_it() {
    let cmake = format!(
        "{PROLOGUE}add_executable(t_shadow app/main.cpp)\n\
         target_include_directories(t_shadow PRIVATE ${{CMAKE_SOURCE_DIR}}/include)\n\
         add_test(NAME t_shadow COMMAND t_shadow)\n\
         add_executable(t_probe probe/main.cpp)\n\
         add_test(NAME t_probe COMMAND t_probe)\n{BYSTANDER}"
    );
    let base = |name: &str| {
        Scenario::new(name)
            .policy(SKIP_UNREFERENCED)
            .file("CMakeLists.txt", &cmake)
            .file("include/config.h", "#pragma once\nconstexpr int kValue = 1;\n")
            .file("app/main.cpp", &main_checking("#include \"config.h\"", "kValue == 1"))
            .file(
                "probe/main.cpp",
                &main_checking(
                    "#if __has_include(\"local_override.h\")\n#include \"local_override.h\"\n#else\nconstexpr int kOverride = 0;\n#endif",
                    "kOverride == 0",
                ),
            )
            .with_bystander()
            // Neither make nor ninja knows the new file: only a fresh build sees it.
            .fresh_head_build()
    };
    let o = base("c30-unref-shadow")
        .edit("app/config.h", "#pragma once\nconstexpr int kValue = 2;\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_shadow");
    o.expect_exact_subset(&["t_shadow"]);
    let o = base("c30-unref-has-include")
        .edit(
            "probe/local_override.h",
            "#pragma once\nconstexpr int kOverride = 1;\n",
        )
        .run();
    o.assert_oracle();
    o.expect_changed("t_probe");
    o.expect_exact_subset(&["t_probe"]);
}

// ============== issue 30, item 2: a CMake project in a subdirectory of its repository

/// The repository is the scenario's root; its CMake project is `src/`
/// (`--source-dir`), beside a web front end, docs, a header directory the
/// project includes and test data a test reads. BASE is committed there.
fn monorepo_tree(ctx: &Ctx) {
    let put = |rel: &str, text: &str| {
        let p = ctx.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put("web/app.js", "console.log(1);\n");
    put("docs/guide.md", "# Guide\n");
    put(
        "shared/shared_limit.h",
        "#pragma once\nconstexpr int kLimit = 1;\n",
    );
    put("testdata/input.txt", "hello\n");
    put(".gitignore", "/build/\n/junit-*.xml\n/diff2test.toml\n");
    git(ctx, &["-C", "..", "init", "-q"]);
    git(ctx, &["-C", "..", "add", "-A"]);
    git(ctx, &["-C", "..", "commit", "-q", "-m", "base"]);
    ctx.set_var("BASE_SHA", &git(ctx, &["rev-parse", "HEAD"]));
}

/// Writes `text` to `rel` (relative to the repository root) and commits it.
fn monorepo_commit(ctx: &Ctx, rel: &str, text: &str) {
    std::fs::write(ctx.root.join(rel), text).unwrap();
    git(ctx, &["-C", "..", "commit", "-q", "-am", "head"]);
    ctx.set_var("HEAD_SHA", &git(ctx, &["rev-parse", "HEAD"]));
}

fn monorepo_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(t_limit limit.cpp)\n\
         target_include_directories(t_limit PRIVATE ${{CMAKE_SOURCE_DIR}}/../shared)\n\
         add_test(NAME t_limit COMMAND t_limit)\n\
         add_executable(contains contains.cpp)\n\
         add_test(NAME t_data COMMAND contains ${{CMAKE_SOURCE_DIR}}/../testdata/input.txt hello)\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file(
            "limit.cpp",
            &main_checking("#include \"shared_limit.h\"", "kLimit == 1"),
        )
        .file("contains.cpp", FILE_CONTAINS_MAIN)
        .with_bystander()
        .after_base_files(monorepo_tree)
        .no_changed_list()
        .arg("--base")
        .arg("@BASE_SHA@")
        .arg("--head")
        .arg("@HEAD_SHA@")
}

/// A web or docs change beside the CMake project: with the mode it is
/// skipped (nothing references it), without it the whole suite runs, as
/// for any unknown path; neither is `PATH_ESCAPES_ROOT` any more.
#[test]
fn monorepo_a_change_beside_the_project_is_classified_not_escaped() {
    let o = monorepo_scenario("c30-mono-web")
        .policy(SKIP_UNREFERENCED)
        .after_edits(|ctx| monorepo_commit(ctx, "web/app.js", "console.log(2);\n"))
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
    o.expect_stderr(&["assume UNREFERENCED_PATHS 1 (\"skip\"): ../web/app.js"]);
    // `init` looks at the repository's top level too, and tells the
    // referenced entries beside the project from the unreferenced ones.
    let r = o.init();
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in [
        "#   ../web/\n",
        "#   ../docs/\n",
        "#   ../shared/: dependency evidence (../shared/shared_limit.h)\n",
        "#   ../testdata/: named by test \"t_data\"\n",
    ] {
        assert!(
            r.stdout.contains(line),
            "init should list {line:?}:\n{}",
            r.stdout
        );
    }
    let o = monorepo_scenario("c30-mono-web-default")
        .after_edits(|ctx| monorepo_commit(ctx, "docs/guide.md", "# Guide, v2\n"))
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN");
    assert!(
        !o.run.stderr.contains("PATH_ESCAPES_ROOT"),
        "{}",
        o.run.stderr
    );
    // A boundary may name it from the source dir, with `../`.
    let o = monorepo_scenario("c30-mono-web-boundary")
        .policy("[[boundary]]\npaths = [\"../web/**\"]\nwhy = \"the web front end is not built by CMake\"\n")
        .after_edits(|ctx| monorepo_commit(ctx, "web/app.js", "console.log(3);\n"))
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_exact_subset(&[]);
    o.expect_stderr(&["../web/app.js"]);
}

/// A header outside the source dir that the project includes is dependency
/// evidence: a change to it selects exactly the test whose program includes
/// it (before: `PATH_ESCAPES_ROOT`, the whole suite).
#[test]
fn monorepo_a_shared_header_beside_the_project_selects_its_includer() {
    for (name, policy) in [
        ("c30-mono-header", None),
        ("c30-mono-header-skip", Some(SKIP_UNREFERENCED)),
    ] {
        let mut s = monorepo_scenario(name).after_edits(|ctx| {
            monorepo_commit(
                ctx,
                "shared/shared_limit.h",
                "#pragma once\nconstexpr int kLimit = 2;\n",
            )
        });
        if let Some(p) = policy {
            s = s.policy(p);
        }
        let o = s.run();
        o.assert_oracle();
        o.expect_changed("t_limit");
        o.expect_exact_subset(&["t_limit"]);
        // The same change as `git diff --name-only` prints it, relative to
        // the repository's top (issue 31, item 3), gives the same selection;
        // a path relative to the source dir gets a "did you mean".
        let with = |changed: &str| {
            let mut args = o.args[..8].to_vec();
            args.extend(["--changed".into(), changed.into()]);
            if policy.is_some() {
                args.extend([
                    "--policy".into(),
                    o.ctx.root.join("diff2test.toml").display().to_string(),
                ]);
            }
            run_diff2test(&args)
        };
        let r = with("shared/shared_limit.h");
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (0, "t_limit\n"),
            "{}",
            r.stderr
        );
        let r = with("limit.cpp");
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(
            r.stderr.contains("did you mean src/limit.cpp?"),
            "{}",
            r.stderr
        );
    }
}

/// Test data outside the source dir that a test names is never skipped.
#[test]
fn monorepo_test_data_beside_the_project_is_never_skipped() {
    let o = monorepo_scenario("c30-mono-data")
        .policy(SKIP_UNREFERENCED)
        .after_edits(|ctx| monorepo_commit(ctx, "testdata/input.txt", "bye\n"))
        .run();
    o.assert_oracle();
    o.expect_changed("t_data");
    o.expect_stderr(&["test \"t_data\" names"]);
}

// ============== issue 30, item 7: outputs of earlier test runs

/// A CI runner that keeps its build tree lists the catalogue after the
/// previous ctest run: the files that run's tests wrote are older than the
/// catalogue. ctest's `Testing/Temporary/LastTest.log` says when that run
/// started and ended; a build-tree file written inside it, by no build
/// step, is a test output (before: `TEST_READS_UNKNOWN_BUILD_FILE`, the
/// whole suite).
#[test]
fn precision_outputs_of_the_last_ctest_run_are_test_outputs() {
    let cmake = format!(
        "{PROLOGUE}add_executable(writer writer.cpp)\n\
         add_test(NAME t_w COMMAND writer ${{CMAKE_BINARY_DIR}}/out/result.txt)\n{BYSTANDER}"
    );
    let writer = |ok: u32| {
        format!(
            "#include <filesystem>\n#include <fstream>\n\
             int main(int, char** argv) {{\n\
               std::filesystem::create_directories(std::filesystem::path(argv[1]).parent_path());\n\
               std::ofstream(argv[1]) << \"result\\n\";\n\
               return {ok};\n}}\n",
            ok = 1 - ok
        )
    };
    let o = Scenario::new("c30-last-test-run")
        .file("CMakeLists.txt", &cmake)
        .file("writer.cpp", &writer(1))
        .with_bystander()
        .edit("writer.cpp", &writer(0))
        // The catalogue listed again after the HEAD suite ran, as the next
        // job of a runner that keeps its tree would.
        .after_head_build(|ctx| write_catalogue(&ctx.build, &ctx.build, ctx.config))
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_w"]);
}

// ============== issue 30, item 3: scripted tests mapped by `scripts = "scan"`

const SCRIPTS_SCAN: &str = "scripts = \"scan\"\n";

fn tool(name: &str, v: u32) -> String {
    format!("#include <cstdio>\nint main() {{ std::puts(\"{name}-v{v}\"); }}\n")
}

/// Three tests, each run through a source-tree script of another
/// interpreter (sh, python3, cmake -P) that runs one tool by name.
fn scan_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool_a tool_a.cpp)\nadd_executable(tool_b tool_b.cpp)\nadd_executable(tool_c tool_c.cpp)\n\
         add_test(NAME t_sh COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/run_a.sh WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME t_py COMMAND python3 ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/run_b.py WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME t_cmake COMMAND ${{CMAKE_COMMAND}} -P ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/run_c.cmake WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("tool_a.cpp", &tool("a", 1))
        .file("tool_b.cpp", &tool("b", 1))
        .file("tool_c.cpp", &tool("c", 1))
        .file("tests/run_a.sh", "#!/bin/sh\n./tool_a | grep -q a-v1\n")
        .file(
            "tests/run_b.py",
            "import subprocess, sys\nout = subprocess.run(['./tool_b'], capture_output=True).stdout\nsys.exit(0 if b'b-v1' in out else 1)\n",
        )
        .file(
            "tests/run_c.cmake",
            "execute_process(COMMAND ./tool_c OUTPUT_VARIABLE o)\nif(NOT o MATCHES \"c-v1\")\n  message(FATAL_ERROR \"got ${o}\")\nendif()\n",
        )
        .with_bystander()
        .policy(SCRIPTS_SCAN)
}

#[test]
fn scripts_scan_maps_each_interpreter_kind_to_what_its_script_runs() {
    for (edit, want) in [
        ("tool_a.cpp", "t_sh"),
        ("tool_b.cpp", "t_py"),
        ("tool_c.cpp", "t_cmake"),
    ] {
        let letter = &edit[5..6];
        let o = scan_scenario(&format!("c30-scan-{letter}"))
            .edit(edit, &tool(letter, 2))
            .run();
        o.assert_oracle();
        assert!(
            o.changed_results().contains(want),
            "precondition\n{}",
            o.report()
        );
        o.expect_exact_subset(&[want]);
        o.expect_stderr(&["assume SCRIPTS 1 (\"scan\")"]);
    }
    // A script file is a dependency of its test.
    let o = scan_scenario("c30-scan-script")
        .edit(
            "tests/run_b.py",
            "import subprocess, sys\nout = subprocess.run(['./tool_b'], capture_output=True).stdout\nsys.exit(0 if b'b-v9' in out else 1)\n",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_py"]);
}

/// A script that runs a program by a name it computes names no artifact:
/// the scan does not map it (the whole suite), without the mode either.
#[test]
fn scripts_scan_does_not_map_a_script_that_runs_a_computed_name() {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool_d tool_d.cpp)\n\
         add_test(NAME t_computed COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/run_d.sh WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n{BYSTANDER}"
    );
    let o = Scenario::new("c30-scan-computed")
        .file("CMakeLists.txt", &cmake)
        .file("tool_d.cpp", &tool("d", 1))
        .file(
            "tests/run_d.sh",
            "#!/bin/sh\nn=tool\n\"./${n}_d\" | grep -q d-v1\n",
        )
        .with_bystander()
        .policy(SCRIPTS_SCAN)
        .edit("tool_d.cpp", &tool("d", 2))
        .run();
    o.assert_oracle();
    o.expect_fallback_naming(3, "TEST_COMMAND_UNMAPPED");
}

// ============== issue 30, item 1: `diff2test init`

/// Writes `diff2test init`'s policy for the BASE build as the scenario's policy.
fn init_policy(ctx: &Ctx) {
    let b = &ctx.base_build;
    let mut args: Vec<String> = vec!["init".into()];
    args.extend(common::tree_args(&ctx.src, b));
    args.extend([
        "--output".into(),
        ctx.root.join("diff2test.toml").display().to_string(),
        "--force".into(),
    ]);
    if let Some(c) = ctx.config {
        args.extend(["--config".into(), c.into()]);
    }
    let r = run_diff2test(&args);
    assert_eq!(r.code, 0, "diff2test init failed: {r:#?}");
}

/// `init` on a project with scripted tests and documentation: the policy it
/// writes, used unedited, loads, and over a docs change and a tool change
/// every assumption it makes holds (the oracle). Issue 36: init writes the
/// textual modes commented (they are assumptions), so as written it gives
/// the whole suite where they would decide; uncommented they give the
/// subsets they are for; and a record of the base's suite run gives those
/// subsets from evidence, with no policy at all.
#[test]
fn init_policy_unedited_keeps_the_oracle_over_a_few_commits() {
    for (name, edit, content, want) in [
        (
            "c30-init-docs",
            "docs/guide.md",
            "# Guide, v2\n".to_owned(),
            vec![],
        ),
        ("c30-init-tool", "tool_a.cpp", tool("a", 2), vec!["t_sh"]),
        (
            "c30-init-script",
            "tests/run_c.cmake",
            "execute_process(COMMAND ./tool_c OUTPUT_VARIABLE o)\nmessage(FATAL_ERROR \"no\")\n"
                .to_owned(),
            vec!["t_cmake"],
        ),
    ] {
        let o = scan_scenario(name)
            .file("docs/guide.md", "# Guide\n")
            .policy("# replaced by diff2test init\n")
            .after_base_build(init_policy)
            .recorded()
            .edit(edit, &content)
            .run();
        // With the record (and init's policy, which activates nothing).
        o.assert_oracle_may_be_vacuous();
        o.expect_exact_subset(&want);
        // With the record and no policy at all: every scripted test (sh, python3,
        // cmake -P) is mapped by what its recorded run ran and read.
        let no_policy = o.rerun(&["--policy"], &[]);
        no_policy.assert_oracle_may_be_vacuous();
        no_policy.expect_exact_subset(&want);
        let policy = std::fs::read_to_string(o.ctx.root.join("diff2test.toml")).unwrap();
        assert!(
            policy.contains("\n# unreferenced_paths = \"skip\"\n")
                && policy.contains("\n# scripts = \"scan\"\n")
                && !policy.contains("\nunreferenced_paths =")
                && !policy.contains("\nscripts ="),
            "{policy}"
        );
        // As written, without the record: nothing rests on an assumption.
        let as_written = o.rerun(&["--record"], &[]);
        as_written.assert_oracle_may_be_vacuous();
        assert_eq!(as_written.run.code, 3, "{}", as_written.run.stderr);
        // Uncommented, the textual modes give the subsets they are for.
        let chosen = o.ctx.root.join("chosen.toml");
        std::fs::write(
            &chosen,
            policy
                .replace(
                    "\n# unreferenced_paths = \"skip\"\n",
                    "\nunreferenced_paths = \"skip\"\n",
                )
                .replace("\n# scripts = \"scan\"\n", "\nscripts = \"scan\"\n"),
        )
        .unwrap();
        let textual = o.rerun(
            &["--record", "--policy"],
            &["--policy".into(), chosen.display().to_string()],
        );
        textual.assert_oracle_may_be_vacuous();
        textual.expect_exact_subset(&want);
    }
}

// ============== issue 29, class 4: declarations match exactly what they say

/// `[[data]] tests = ["parser*"]` covers `parser/unicode`: test names are
/// not paths (gtest's parameterised names hold `/`), so `*` crosses `/`. The
/// test finds its data from `__FILE__` (no channel names the data).
#[test]
fn oracle_data_rule_test_pattern_covers_a_name_with_a_slash() {
    let cmake = format!(
        "{PROLOGUE}add_executable(parser_unicode parser_unicode.cpp)\n\
         add_test(NAME parser/unicode COMMAND parser_unicode)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-name-pattern")
        .file("CMakeLists.txt", &cmake)
        .file("data/input.txt", "v1\n")
        .file(
            "parser_unicode.cpp",
            &main_checking(
                "#include <fstream>\n#include <string>\n\
                 static std::string first_line() {\n\
                   std::string f = __FILE__;\n\
                   std::ifstream in(f.substr(0, f.rfind('/')) + \"/data/input.txt\");\n\
                   std::string s; std::getline(in, s); return s;\n\
                 }",
                "first_line() == \"v1\"",
            ),
        )
        .with_bystander()
        .policy("[[data]]\npaths = [\"data/**\"]\ntests = [\"parser*\"]\nwhy = \"parser fixtures, read by the parser tests\"\n")
        .edit("data/input.txt", "v2\n")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["parser/unicode"]);
}

/// A `[[data]]` rule that is true (the data is read only by the tests that
/// name it) and a test that names a build-tree directory configure copied
/// the data into (`file(COPY data DESTINATION …)`): the files below a named
/// directory that configure wrote are possible copies too, not only a named
/// copied file.
#[test]
fn oracle_data_rule_and_a_test_naming_a_copied_directory() {
    let cmake = format!(
        "{PROLOGUE}file(COPY data DESTINATION ${{CMAKE_BINARY_DIR}}/testdata)\n\
         add_executable(reader reader.cpp)\n\
         add_test(NAME t_data COMMAND reader ${{CMAKE_BINARY_DIR}}/testdata/data)\n{BYSTANDER}"
    );
    let o = Scenario::new("c29-copied-dir")
        .file("CMakeLists.txt", &cmake)
        .file("data/input.txt", "v1\n")
        .file(
            "reader.cpp",
            "#include <fstream>\n#include <string>\n#include <cstdio>\n\
             int main(int argc, char** argv) {\n\
               if (argc < 2) return 2;\n\
               std::ifstream in(std::string(argv[1]) + \"/input.txt\");\n\
               std::string s; std::getline(in, s);\n\
               std::printf(\"read %s\\n\", s.c_str());\n\
               return s == \"v1\" ? 0 : 1;\n\
             }\n",
        )
        .with_bystander()
        .policy("[[data]]\npaths = [\"data/**\"]\nwhy = \"read only by the tests that name it\"\n")
        .edit("data/input.txt", "v2\n")
        // file(COPY) skips a file whose copy has the same timestamp, which
        // CMake may compare to the second: an edit in the second the base
        // was written would not be copied. Ten seconds before the copy.
        .after_edits(|ctx| {
            let copy = ctx.build.join("testdata/data/input.txt");
            let was =
                filetime::FileTime::from_last_modification_time(&std::fs::metadata(copy).unwrap());
            let t = filetime::FileTime::from_unix_time(was.unix_seconds() - 10, 0);
            filetime::set_file_mtime(ctx.src.join("data/input.txt"), t).unwrap();
        })
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_data"]);
    assert!(
        o.run.stderr.contains("names a directory holding"),
        "{}",
        o.report()
    );
}

// ============== issue 29, class 1a: compare mode fingerprints what the build runs

/// A shared library `foo` with `VERSION 1.2.3 SOVERSION 1`, a program that
/// checks which soname it loaded, and a bystander that links nothing.
fn soname_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_library(foo SHARED foo.cpp)\n\
         set_target_properties(foo PROPERTIES VERSION 1.2.3 SOVERSION 1)\n\
         add_executable(t_soname t_soname.cpp)\n\
         target_link_libraries(t_soname foo)\n\
         add_test(NAME t_soname COMMAND t_soname)\n\
         add_executable(t_other t_other.cpp)\n\
         add_test(NAME t_other COMMAND t_other)\n"
    );
    Scenario::new(name)
        .fresh_head_build()
        .file("CMakeLists.txt", &cmake)
        .file("foo.cpp", "int foo() { return 1; }\n")
        .file(
            "t_soname.cpp",
            &main_checking(
                "#include <link.h>\n#include <cstring>\nint foo();\n\
                 static int seen(dl_phdr_info* i, size_t, void* found) {\n\
                   const char* want = \"libfoo.so.1\";\n\
                   size_t n = std::strlen(i->dlpi_name), w = std::strlen(want);\n\
                   if (n >= w && std::strcmp(i->dlpi_name + n - w, want) == 0) *static_cast<int*>(found) = 1;\n\
                   return 0;\n\
                 }\n\
                 static int loaded_soname_1() { int found = 0; dl_iterate_phdr(seen, &found); return found; }",
                "foo() == 1 && loaded_soname_1()",
            ),
        )
        .file("t_other.cpp", &main_checking("", "2 + 2 == 4"))
        .policy(COMPARE)
        .against_base_snapshot()
}

/// A `SOVERSION` bump changes none of the File API's fields (the artifact is
/// still `libfoo.so.1.2.3`), but the link command's soname: every program
/// that links the library is relinked against `libfoo.so.2`. Compare mode
/// fingerprints the generator's commands, so `t_soname` (whose result flips)
/// is selected and the bystander is not.
#[test]
fn compare_a_soversion_bump_selects_the_tests_whose_programs_link_the_library() {
    let o = soname_scenario("c29-soversion")
        .patch("CMakeLists.txt", "SOVERSION 1)", "SOVERSION 2)")
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_soname"]);
    assert!(
        o.run.stderr.contains("BUILD_DESCRIPTION_CHANGED"),
        "{}",
        o.report()
    );
}

/// A version script that configure writes from a CMake list (`file(WRITE)`)
/// and the link line names: a new symbol in the list changes what the library
/// exports, and no File API field. Its bytes are part of the description.
#[test]
fn compare_a_version_script_configure_writes_is_part_of_the_description() {
    let cmake = format!(
        "{PROLOGUE}set(exported foo_base)\n\
         list(JOIN exported \"; \" syms)\n\
         file(WRITE ${{CMAKE_CURRENT_BINARY_DIR}}/foo.map \"{{ global: ${{syms}}; local: *; }};\\n\")\n\
         add_library(foo SHARED foo.cpp)\n\
         target_link_options(foo PRIVATE -Wl,--version-script=${{CMAKE_CURRENT_BINARY_DIR}}/foo.map)\n\
         add_executable(t_sym t_sym.cpp)\n\
         target_link_libraries(t_sym foo ${{CMAKE_DL_LIBS}})\n\
         add_test(NAME t_sym COMMAND t_sym)\n\
         add_executable(t_other t_other.cpp)\n\
         add_test(NAME t_other COMMAND t_other)\n"
    );
    let o = Scenario::new("c29-version-script")
        .fresh_head_build()
        .file("CMakeLists.txt", &cmake)
        .file(
            "foo.cpp",
            "extern \"C\" int foo_base() { return 1; }\nextern \"C\" int foo_extra() { return 2; }\n",
        )
        .file(
            "t_sym.cpp",
            &main_checking(
                "#include <dlfcn.h>\nextern \"C\" int foo_base();",
                "foo_base() == 1 && dlsym(RTLD_DEFAULT, \"foo_extra\") != nullptr",
            ),
        )
        .file("t_other.cpp", &main_checking("", "2 + 2 == 4"))
        .policy(COMPARE)
        .against_base_snapshot()
        .patch(
            "CMakeLists.txt",
            "set(exported foo_base)",
            "set(exported foo_base foo_extra)",
        )
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_sym"]);
}

#[test]
fn snapshots_of_one_commit_in_two_build_dirs_are_identical() {
    let a = common::build_fixture(&[]);
    let snap = |b: &common::Built, src: &Path| -> String {
        let mut args: Vec<String> = vec!["snapshot".into()];
        args.extend(common::tree_args(src, &b.build));
        let r = run_diff2test(&args);
        assert_eq!(r.code, 0, "{r:#?}");
        r.stdout
    };
    let first = snap(&a, &a.src);
    // A second build of the same sources in another directory.
    let other = a.root.join("build-two");
    let out = Command::new("bash")
        .arg(common::repo_root().join("fixtures/prepare-build.sh"))
        .arg(&a.src)
        .arg(&other)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b2 = common::Built::from_parts(
        tempfile::tempdir().unwrap(),
        a.root.clone(),
        a.src.clone(),
        other,
    );
    assert_eq!(
        first,
        snap(&b2, &a.src),
        "same commit, other build dir: equal snapshots"
    );
    // And a copy of the sources in another checkout.
    let c = common::build_fixture(&[]);
    assert_eq!(
        first,
        snap(&c, &c.src),
        "same commit, other checkout and build dir: equal snapshots"
    );
    assert!(first.len() < 64 * 1024, "compact: {} bytes", first.len());
    // And the same build directory configured again from scratch (a new
    // cache: CMake lists each target's dependencies in no stable order).
    std::fs::remove_file(a.build.join("CMakeCache.txt")).unwrap();
    let out = Command::new("bash")
        .arg(common::repo_root().join("fixtures/prepare-build.sh"))
        .arg(&a.src)
        .arg(&a.build)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        first,
        snap(&a, &a.src),
        "same commit, configured again: equal snapshots"
    );
}

#[test]
fn precision_versioned_shared_library_on_ninja_gives_chains_and_a_subset() {
    let o = versioned_scenario("p-versioned-ninja")
        .generator(Generator::Ninja)
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["app.t"]);
    assert!(
        o.run.stderr.contains("depfile .ninja_deps record"),
        "{}",
        o.report()
    );
    assert!(
        !o.run.stderr.contains("UNKNOWN_LINK_INPUT"),
        "{}",
        o.report()
    );
}

// ============ the hostile classes and the precision scenarios again, on -G Ninja

/// Runs `scenario` (a test of this file) with `-G Ninja` as its default generator.
fn on_ninja(scenario: fn()) {
    SWEPT.with(|s| s.set(Some(Generator::Ninja)));
    scenario();
}

/// Runs `scenario` built with Clang on `generator` (see [`compiler_args`]).
fn on_clang(generator: Generator, scenario: fn()) {
    CLANG.with(|c| c.set(true));
    SWEPT.with(|s| s.set(Some(generator)));
    scenario();
}

/// `clang::NAME` and `clang::ninja::NAME` run the test `NAME` again built
/// with Clang, on Unix Makefiles and on Ninja: the scenarios whose evidence
/// depends on what the compiler writes. Clang lists a precompiled header's
/// inputs in each unit's depfile before the unit's own source (GCC lists the
/// source first and the `.gch` instead), keys `#pragma once` on the file
/// rather than its bytes (so both twins are listed), and implicitly includes
/// no `stdc-predef.h`.
macro_rules! on_clang {
    ($($name:ident),* $(,)?) => {
        mod clang {
            $(
                #[test]
                fn $name() {
                    super::on_clang(super::Generator::Makefiles, super::$name);
                }
            )*
            mod ninja {
                $(
                    #[test]
                    fn $name() {
                        super::super::on_clang(super::super::Generator::Ninja, super::super::$name);
                    }
                )*
            }
        }
    };
}

on_clang!(
    oracle_pragma_once_twin_synced_from_the_other_copy,
    oracle_precompiled_header_is_the_only_evidence_of_its_headers,
    oracle_precompiled_header_reused_by_a_target_that_does_not_link_it,
    oracle_unity_build_source_change,
    oracle_mmd_depfiles_and_a_system_include_dir_in_the_tree,
    oracle_md_depfiles_and_a_system_include_dir_in_the_tree,
    oracle_md_unit_without_system_headers_beside_one_with_them,
    oracle_assembly_unit_on_ninja_is_ordinary_evidence,
    precision_versioned_shared_library_gives_chains_and_a_subset,
);

/// `ninja::NAME` runs the test `NAME` again with `-G Ninja`: Ninja folds the
/// depfiles into `.ninja_deps` and links from the top of the build tree, so
/// every hostile pattern and every precision claim is checked on both
/// generators. (Class 11 is about where the catalogue was listed; the
/// Multi-Config sweep, `DIFF2TEST_ORACLE_GENERATOR=ninja-multi`, is run by
/// hand: several scenarios there build single-config layouts on purpose.)
macro_rules! on_ninja {
    ($($name:ident),* $(,)?) => {
        mod ninja {
            $(
                #[test]
                fn $name() {
                    super::on_ninja(super::$name);
                }
            )*
        }
    };
}

on_ninja!(
    oracle_fixture_setup_feeds_consumer,
    oracle_depends_producer_feeds_consumer,
    oracle_plugin_via_environment_modification,
    oracle_plugin_via_generated_header,
    oracle_plugin_via_working_directory,
    oracle_plugin_in_a_subdirectory_of_a_named_directory,
    oracle_plugin_copied_post_build_into_a_named_directory,
    oracle_plugin_copied_post_build_with_opaque_select,
    oracle_plugin_copied_post_build_after_the_listing,
    oracle_plugin_in_a_directory_named_through_a_symlink,
    oracle_plugin_in_a_symlinked_subdirectory_of_a_named_directory,
    oracle_plugin_linked_post_build_into_a_named_directory,
    oracle_plugin_below_the_program_directory,
    oracle_plugin_below_the_working_directory,
    oracle_plugin_below_one_program_directory_only,
    oracle_qt_plugin_found_through_the_application_directory,
    oracle_shared_plugin_below_the_program_directory,
    oracle_linked_shared_library_below_the_program_directory_is_no_plugin,
    oracle_plugin_below_the_directory_of_a_program_named_in_bytes,
    oracle_plugin_below_a_directory_the_program_climbs_to,
    oracle_plugin_below_a_directory_a_linked_library_climbs_to,
    oracle_plugin_below_the_directory_of_a_linked_library,
    oracle_plugin_reached_by_an_unbounded_climb,
    oracle_plugin_below_a_directory_the_program_climbs_to_from_the_working_directory,
    oracle_plugin_path_read_from_a_generated_file_the_test_names,
    oracle_plugin_in_a_named_directory_beside_a_longer_named_sibling,
    oracle_working_directory_above_the_build_tree_reaches_no_plugin_in_it,
    oracle_plugin_via_static_library_definition,
    oracle_plugin_via_compile_options,
    oracle_all_channels_with_add_dependencies,
    oracle_untested_executables_linking_a_tested_library,
    oracle_header_named_verbatim_as_test_argument,
    oracle_file_copy_of_include_dir,
    oracle_configure_file_copyonly,
    oracle_file_copy_file_renamed,
    oracle_configured_header_does_not_cost_the_subset,
    oracle_library_linked_by_dash_l_without_a_codemodel_edge,
    oracle_pragma_once_twin_synced_from_the_other_copy,
    oracle_include_dir_alias_outside_the_roots,
    oracle_include_dir_alias_outside_the_roots_with_a_direct_user,
    oracle_aliased_header_newer_than_the_evidence_is_stale,
    oracle_test_reads_a_file_a_custom_command_generated,
    oracle_test_reads_nm_output_of_a_static_library,
    oracle_generated_file_with_opaque_select_policy_and_wrapper,
    oracle_runtime_output_directory_in_the_source_tree,
    oracle_runtime_output_directory_in_the_source_tree_with_a_direct_test,
    oracle_plugin_named_with_a_double_slash,
    oracle_ignored_header_changed_in_the_working_tree,
    oracle_ignored_header_with_base_and_head_commits,
    oracle_precompiled_header_is_the_only_evidence_of_its_headers,
    oracle_precompiled_header_reused_by_a_target_that_does_not_link_it,
    oracle_unity_build_source_change,
    oracle_mmd_depfiles_and_a_system_include_dir_in_the_tree,
    oracle_md_depfiles_and_a_system_include_dir_in_the_tree,
    oracle_md_unit_without_system_headers_beside_one_with_them,
    oracle_cmake_e_wrapper_falls_back_and_names_the_wrapped_target,
    oracle_cmake_e_wrapper_declared_with_a_script_rule,
    oracle_cmake_e_chdir_resolves_arguments_in_its_directory,
    oracle_automoc_header_change_is_ordinary_evidence,
    oracle_automoc_everywhere_keeps_the_subset_of_a_plain_change,
    oracle_scanned_header_losing_q_object_selects_its_target,
    oracle_plugin_metadata_file_is_listed_by_the_moc_depfile,
    oracle_autouic_form_change_selects_the_unit_that_includes_its_header,
    oracle_autouic_header_included_by_another_target,
    oracle_autouic_without_automoc_form_change_selects_its_includer,
    oracle_autouic_without_automoc_form_newer_than_its_header_is_stale,
    oracle_unexplained_autogen_header_makes_its_includer_opaque,
    oracle_autorcc_resource_change_selects_the_target_that_embeds_it,
    oracle_autorcc_resource_newer_than_its_unit_is_stale,
    oracle_autouic_form_newer_than_its_header_is_stale,
    oracle_file_newer_than_the_moc_depfile_is_stale,
    oracle_scanned_file_newer_than_the_parse_cache_is_stale,
    oracle_moc_output_without_a_dependency_file_is_opaque,
    precision_versioned_shared_library_gives_chains_and_a_subset,
    precision_a_doc_change_under_a_boundary_keeps_the_subset_and_names_the_boundary,
    precision_the_same_doc_change_without_a_boundary_is_change_unknown_with_a_hint,
    precision_a_boundary_over_dependency_evidence_is_not_applied_and_named,
    precision_a_data_change_selects_exactly_the_tests_that_name_it,
    precision_a_scripted_test_is_selected_through_its_target,
    precision_a_scripted_test_is_selected_through_its_script,
    precision_a_version_script_named_on_the_link_line_is_dependency_evidence,
    compare_a_soversion_bump_selects_the_tests_whose_programs_link_the_library,
    compare_a_version_script_configure_writes_is_part_of_the_description,
    oracle_data_rule_test_pattern_covers_a_name_with_a_slash,
    a_header_a_compiler_finds_by_search_is_evidence_after_the_build_that_reads_it,
    a_data_template_selects_the_test_its_expected_file_names,
    an_empty_change_set_selects_nothing,
    a_library_holding_its_top_level_source_path_keeps_docs_referenced_and_init_says_so,
    monorepo_a_change_beside_the_project_is_classified_not_escaped,
    monorepo_a_shared_header_beside_the_project_selects_its_includer,
    monorepo_test_data_beside_the_project_is_never_skipped,
    oracle_data_rule_and_a_test_naming_a_copied_directory,
    compare_a_test_time_cmake_script_is_no_cmake_edit,
    oracle_program_named_in_utf16_bytes,
    compare_a_changed_plugin_description_selects_the_tests_that_may_load_it,
    compare_a_golden_file_configure_writes_into_a_named_directory,
    oracle_script_a_test_runs_names_what_it_starts,
    oracle_custom_command_depfile_reads_a_header_a_unit_includes,
    oracle_byproduct_header_of_a_custom_target_depends_on_its_program,
    precision_a_generated_header_with_complete_producer_evidence_is_a_subset,
    oracle_configure_reads_a_header_with_file_strings,
    compare_a_custom_command_edit_selects_the_includer_of_its_output,
    compare_a_header_configure_reads_selects_the_configured_headers_readers,
    oracle_incbin_through_the_assembler_search_path,
    oracle_data_found_from_the_source_path_under_a_data_rule,
    oracle_cleanup_test_output_read_by_a_later_test,
    precision_identical_mains_without_pragma_once_are_no_twins,
    compare_mode_by_the_base_snapshot_flag_alone,
    unreferenced_docs_and_ci_files_are_skipped_only_with_the_mode,
    unreferenced_mode_never_skips_a_readme_a_test_reads,
    unreferenced_mode_never_skips_what_a_script_finds_beside_itself,
    precision_outputs_of_the_last_ctest_run_are_test_outputs,
    scripts_scan_maps_each_interpreter_kind_to_what_its_script_runs,
    scripts_scan_does_not_map_a_script_that_runs_a_computed_name,
    init_policy_unedited_keeps_the_oracle_over_a_few_commits,
);
