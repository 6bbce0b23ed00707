//! diff2test: decide which registered CTest tests a change may safely skip.
//!
//! Flow (contract §3): [`cli`] → [`ingest`] (CTest catalogue, File API,
//! dependency files; each audits itself) → [`changes`] → [`graph`] →
//! [`decide`] → [`report`]. Only `report` formats output and only [`run`]
//! commits it, after the final decision. A panic anywhere becomes
//! INTERNAL_ERROR with nothing on stdout.
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::dbg_macro)]
#![warn(missing_docs)]

pub mod changes;
pub mod cli;
pub mod decide;
pub mod declare;
pub mod digest;
pub mod fasthash;
pub mod graph;
pub mod ingest;
pub mod paths;
pub mod policy;
pub mod reach;
pub mod reason;
pub mod report;
pub mod snapshot;
pub mod vcs;

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use decide::{select_code, Decision, Forced, Outcome, Verdict, VerdictReason};
use ingest::Reader;
use policy::{OpaqueMode, Policy};
use reason::{Code, Gap};

/// Runs one invocation: parses `args`, analyses, writes stdout/stderr, returns the exit code.
pub fn run(
    args: Vec<OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = match catch_unwind(AssertUnwindSafe(|| {
        analyse(args, stdin, &mut out, &mut err)
    })) {
        Ok(code) => code,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            out.clear();
            err.clear();
            let o = Outcome::InternalError(format!("panic: {msg}"));
            report::render_state_only(&o, &mut err);
            o.exit_code()
        }
    };
    if stdout.write_all(&out).and_then(|_| stdout.flush()).is_err() {
        // A cut-off list would be a silent subset: the run is an internal error, and
        // stderr says only that (no state or chain that could read as a selection).
        let _ = writeln!(
            stderr,
            "INTERNAL_ERROR\nreason INTERNAL_ERROR: cannot write the selection to stdout"
        );
        return decide::exit::INTERNAL_ERROR;
    }
    let _ = stderr.write_all(&err).and_then(|_| stderr.flush());
    code
}

fn usage(msg: String, err: &mut Vec<u8>) -> u8 {
    let o = Outcome::UsageError(msg);
    report::render_state_only(&o, err);
    o.exit_code()
}

fn analyse(args: Vec<OsString>, stdin: &mut dyn Read, out: &mut Vec<u8>, err: &mut Vec<u8>) -> u8 {
    // 1. CLI and changed-path source.
    let req = match cli::parse(args, stdin) {
        Ok(cli::Parsed::Run(r)) => r,
        Ok(cli::Parsed::Info(text)) => {
            out.extend_from_slice(text.as_bytes());
            return 0;
        }
        Err(msg) => return usage(msg, err),
    };
    let policy = match policy::load(req.policy.as_deref(), &req.source_dir) {
        Ok(p) => p,
        Err(msg) => return usage(msg, err),
    };
    #[cfg(debug_assertions)]
    if std::env::var_os("DIFF2TEST_TEST_HOOK_PANIC").is_some() {
        // Test-only hook (debug builds only): proves a panic ends as INTERNAL_ERROR.
        out.extend_from_slice(b"partial-output-that-must-never-appear\n");
        panic!("deliberate panic from DIFF2TEST_TEST_HOOK_PANIC");
    }
    let analysis = analyse_request(&req, policy);
    if let Err(msg) = report::render(&analysis, &req, out, err) {
        out.clear();
        err.clear();
        return usage(msg, err);
    }
    if let Some(path) = &req.output {
        // Written whole (a temporary file renamed into place) or not at all.
        let tmp = format!("{path}.diff2test-tmp");
        let written = std::fs::write(&tmp, &*out).and_then(|_| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            out.clear();
            err.clear();
            return usage(format!("--output {path}: {e}"), err);
        }
        out.clear();
    }
    let code = analysis.outcome.exit_code();
    if req.fail_on_setup_error && setup_error(&analysis.outcome) {
        let _ = writeln!(
            err,
            "exit {}: --fail-on-setup-error: the fallback's root cause is the setup, not the change",
            decide::exit::SETUP_ERROR
        );
        return decide::exit::SETUP_ERROR;
    }
    code
}

/// The base snapshot, when `build_config = "compare"` and `--base-snapshot`
/// are both given and the file is a readable snapshot; a gap otherwise
/// (no gap when compare mode is off).
fn compare_base(
    req: &cli::Request,
    policy: &Policy,
    decision: &mut Decision,
) -> Option<serde_json::Value> {
    if policy.build_config != policy::BuildConfigMode::Compare {
        return None;
    }
    let path = req.base_snapshot.as_deref()?;
    let parsed = std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| e.to_string()));
    match parsed {
        Ok(v) if v["schema"] == snapshot::SNAPSHOT_SCHEMA && v["tests"].is_object() => Some(v),
        Ok(v) => {
            decision.require_full(Gap::new(
                Code::SnapshotInvalid,
                format!(
                    "{path}: not a {} document (schema {})",
                    snapshot::SNAPSHOT_SCHEMA,
                    v["schema"]
                ),
            ));
            None
        }
        Err(e) => {
            decision.require_full(Gap::new(Code::SnapshotInvalid, format!("{path}: {e}")));
            None
        }
    }
}

/// A fallback whose root cause is the setup (a rank-0 reason: missing,
/// foreign or unsupported input, generator, configuration, dependency list,
/// limit or policy), not the change.
fn setup_error(o: &Outcome) -> bool {
    match o {
        Outcome::FullSuiteSelected { gaps, .. } | Outcome::FullSuiteRequired { gaps } => {
            gaps.iter().any(|g| g.code.rank() == 0)
        }
        Outcome::SubsetSelected { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {
            false
        }
    }
}

/// Everything the report layer may show about one run.
#[derive(Debug)]
pub struct Analysis {
    /// The decision.
    pub outcome: Outcome,
    /// One verdict per registered test, sorted by name (empty when the catalogue is untrusted).
    pub verdicts: Vec<Verdict>,
    /// Classified changed paths, in input order.
    pub changed: Vec<changes::Changed>,
    /// Changed paths exactly as given (lossy for non-UTF-8), for identities.
    pub changed_raw: Vec<String>,
    /// Affected translation units (source paths relative to the source root).
    pub affected_units: Vec<String>,
    /// Targets owning an affected unit.
    pub affected_direct: Vec<String>,
    /// Targets affected only through dependencies.
    pub affected_dependent: Vec<String>,
    /// `(path, sha256)` of every evidence file read (only with `--format json` or `--receipt`).
    pub evidence: Vec<(String, String)>,
    /// The policy in force.
    pub policy: Policy,
    /// Every policy declaration the analysis applied, with what to.
    pub declarations: Vec<declare::Use>,
    /// Test name → the key of its data-flow group (fixtures, DEPENDS,
    /// RESOURCE_LOCK), for tests in a group of two or more: `--shard` keeps a
    /// group in one shard.
    pub flow_groups: std::collections::BTreeMap<String, String>,
    /// `diff2test snapshot`: the snapshot, when the evidence was complete.
    pub snapshot: Option<serde_json::Value>,
}

/// Steps 2-10 of the decision order. Pure with respect to output.
pub fn analyse_request(req: &cli::Request, policy: Policy) -> Analysis {
    let reader = if req.needs_digests() {
        Reader::with_digests(req.limits.clone())
    } else {
        Reader::new(req.limits.clone())
    };
    // 2. The catalogue, early: it decides whether any list can be emitted.
    // Its bytes are read first and alone, so what it says never depends on
    // timing; it is parsed while the depfiles are already being read.
    let ctest_bytes = reader.read(&req.ctest_json).map_err(|e| {
        e.gap(
            &req.ctest_json,
            Code::CtestUnreadable,
            Code::CtestLimitExceeded,
        )
    });
    let mut catalogue = None;
    let mut catalogue_gap = None;
    let mut a = analyse_evidence(
        req,
        policy,
        &reader,
        ctest_bytes,
        &mut catalogue,
        &mut catalogue_gap,
    );
    if reader.total_exceeded() {
        stop_at_total_limit(&mut a, &reader, catalogue.as_ref(), catalogue_gap);
    }
    a
}

/// A run stopped by `--max-total-bytes` has read a part of the evidence that
/// depends on the timing of parallel reads. Every finding drawn from it is
/// dropped: what is left is the catalogue's own verdict and the limit, so
/// equal inputs still give equal reports.
fn stop_at_total_limit(
    a: &mut Analysis,
    reader: &Reader,
    catalogue: Option<&ingest::ctest::Catalogue>,
    catalogue_gap: Option<Gap>,
) {
    let mut decision = Decision::default();
    decision.extend(catalogue_gap);
    decision.require_full(Gap::new(
        Code::LimitExceeded,
        ingest::ReadError::TotalTooLarge {
            limit: reader.limits().max_total_bytes,
        }
        .to_string(),
    ));
    let all = catalogue.map(|c| c.tests.iter().map(|t| t.name.clone()).collect());
    a.outcome = decision.finish(all, Vec::new(), Vec::new(), Vec::new());
    a.verdicts = fallback_verdicts(&a.outcome, catalogue);
    a.affected_units.clear();
    a.affected_direct.clear();
    a.affected_dependent.clear();
    // Shown as given: classifying them needs the evidence that was not read.
    let why = "not classified: reading the evidence stopped at --max-total-bytes";
    let mut seen = HashSet::new();
    a.changed = a
        .changed_raw
        .iter()
        .filter(|raw| seen.insert(raw.as_str()))
        .map(|raw| changes::Changed {
            display: raw.clone(),
            real_display: None,
            class: changes::Class::Unresolved,
            evidence: why.into(),
            files: Vec::new(),
            gap: Some(Gap::new(Code::LimitExceeded, format!("{raw}: {why}"))),
            abs: String::new(),
            declared: None,
            cmdline_targets: Vec::new(),
        })
        .collect();
    a.evidence = reader.digests();
}

/// Steps 3-10 once the catalogue is read (`catalogue_gap` when it could not be).
fn analyse_evidence(
    req: &cli::Request,
    policy: Policy,
    reader: &Reader,
    ctest_bytes: Result<Vec<u8>, Gap>,
    catalogue_slot: &mut Option<ingest::ctest::Catalogue>,
    catalogue_gap: &mut Option<Gap>,
) -> Analysis {
    let changed_raw: Vec<String> = req
        .changed
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let mut decision = Decision::default();
    let mut a = Analysis {
        outcome: Outcome::InternalError("analysis did not finish".into()),
        verdicts: Vec::new(),
        changed: Vec::new(),
        changed_raw,
        affected_units: Vec::new(),
        affected_direct: Vec::new(),
        affected_dependent: Vec::new(),
        evidence: Vec::new(),
        policy,
        declarations: Vec::new(),
        flow_groups: Default::default(),
        snapshot: None,
    };
    // 3-7. The codemodel, with the depfiles (the bulk of the evidence) read
    // at the same time; mapping them to targets waits for the codemodel.
    // Without a codemodel the depfiles are still read to the end, so the
    // evidence read (and its identity) never depends on timing.
    // Threads: one reads depfiles from the start; this one loads the codemodel,
    // builds the graph, then joins the reading (one thread per core in all).
    // The codemodel outlives the reading threads: once loaded, it is handed
    // to them so that they map each depfile to its unit as they read it.
    let model_cell: std::sync::OnceLock<ingest::file_api::Codemodel> = std::sync::OnceLock::new();
    let sources_cell: std::sync::OnceLock<ingest::depfile::SourceIndex<'_>> =
        std::sync::OnceLock::new();
    let job =
        ingest::depfile::ReadJob::new(reader, &req.dep_list, (&req.source_dir, &req.build_dir));
    let a = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..ingest::threads())
            .map(|_| s.spawn(|| job.work()))
            .collect();
        let parsed = ctest_bytes.and_then(|bytes| {
            ingest::ctest::parse(
                &bytes,
                &req.ctest_json,
                &req.build_dir,
                req.limits.max_tests,
            )
        });
        let catalogue = match parsed {
            Ok(c) => Some(&*catalogue_slot.insert(c)),
            Err(g) => {
                *catalogue_gap = Some(g.clone());
                decision.require_full(g);
                None
            }
        };
        let all: Option<Vec<String>> =
            catalogue.map(|c| c.tests.iter().map(|t| t.name.clone()).collect());
        if let Some(c) = catalogue {
            a.flow_groups = reach::flow_groups(c);
        }
        let fa = ingest::file_api::load(
            reader,
            &ingest::file_api::Request {
                source_dir: &req.source_dir,
                build_dir: &req.build_dir,
                config: req.config.as_deref(),
                // The other cores are reading depfiles.
                threads: ingest::threads().div_ceil(2),
            },
        );
        decision.extend(fa.gaps);
        let Some(model) = fa.model else {
            drop(job.work_and_join(helpers));
            a.outcome = decision.finish(all, Vec::new(), Vec::new(), Vec::new());
            a.verdicts = fallback_verdicts(&a.outcome, catalogue);
            a.evidence = reader.digests();
            return a;
        };
        let model = model_cell.get_or_init(|| model);
        let sources = sources_cell.get_or_init(|| ingest::depfile::SourceIndex::new(model));
        job.publish(model, sources);

        // 5. Map every test while the depfiles are still being read.
        let mut graph = graph::Graph::new(model);
        let empty = ingest::ctest::Catalogue::default();
        let cat = catalogue.unwrap_or(&empty);
        let mut mappings = graph.map_tests(cat);
        let config_gaps = graph.config_gaps(cat);

        // 6-7. Dependency files: mapping, completeness, freshness.
        let pending = job.pending(job.work_and_join(helpers));
        let (mut deps, dep_gaps) = pending.finish(reader, model, sources);
        decision.extend(dep_gaps);
        decision.extend(ingest::depfile::join_outside_aliases(
            &mut deps,
            model,
            req.limits.max_file_bytes,
        ));
        if let Some(v) = &req.vouched {
            decision.extend(unvouched_prerequisites(v, &deps, model, &req.source_dir));
        }
        graph.add_depfile_evidence(&deps);
        decision.extend(config_gaps);
        if let Some(c) = catalogue {
            decision.extend(ingest::ctest::audit_against(c, model));
        }

        // 5 (cont.). What each test names beyond its executable: artifacts and
        // outputs join its direct targets; source paths and copies are kept.
        let listed = std::fs::metadata(&req.ctest_json)
            .and_then(|m| m.modified())
            .ok();
        let lookup = reach::Lookup::new(&graph, listed);
        let scripts = match declare::map_scripts(&a.policy, &lookup, model, cat, &mut mappings) {
            Ok((uses, scripts)) => {
                a.declarations.extend(uses);
                scripts
            }
            Err(msg) => {
                a.outcome = Outcome::UsageError(msg);
                return a;
            }
        };
        let (reaches, reach_gaps) = reach::extend_mappings(
            &lookup,
            &deps,
            cat,
            &mut mappings,
            req.limits.max_file_bytes,
        );
        decision.extend(reach_gaps);

        // 5 (cont.). Find tests behind opaque boundaries.
        let tainted = graph.tainted();
        let select_opaque = a.policy.opaque == OpaqueMode::Select;
        let mut forced: Vec<Forced> = Vec::new();
        let mut extra_reached: Vec<usize> = Vec::new();
        for (ti, (test, m)) in cat.tests.iter().zip(&mappings).enumerate() {
            let local_gap = match m {
                graph::TestMapping::Unmapped(g) => {
                    if select_opaque {
                        // The forced test runs whatever it references: count those as reached.
                        let texts = test.command.iter().flatten().chain(test.environment.iter());
                        extra_reached.extend(graph.referenced_targets(texts));
                    }
                    Some(g.clone())
                }
                graph::TestMapping::Mapped { direct } => direct
                    .iter()
                    .find_map(|d| tainted.get(d))
                    .map(|origin| {
                        let why = &graph.opaque[origin];
                        Gap::new(why.code, format!("test {:?}: {}", test.name, why.detail))
                    })
                    .or_else(|| reaches[ti].unknown.clone()),
            };
            if let Some(g) = local_gap {
                if select_opaque {
                    forced.push(Forced {
                        test: test.name.clone(),
                        code: select_code::OPAQUE_BOUNDARY,
                        detail: g.to_string(),
                    });
                } else {
                    decision.require_full(g);
                }
            }
        }

        // 6b. Coverage of every target that can reach what a test runs or loads.
        let test_roots: Vec<usize> = mappings
            .iter()
            .filter_map(|m| match m {
                graph::TestMapping::Mapped { direct } => Some(direct.iter().copied()),
                graph::TestMapping::Unmapped(_) => None,
            })
            .flatten()
            .chain(extra_reached.iter().copied())
            .collect();
        decision.extend(ingest::depfile::coverage_gaps(
            model,
            &deps,
            &graph.coverage_scope(&test_roots),
        ));

        // 8. Changed paths.
        let main_sources: fasthash::FastSet<ingest::depfile::FileId> = deps
            .tus
            .iter()
            .filter_map(|tu| deps.source_id(tu))
            .collect();
        let roots = changes::Roots {
            user_source: &req.source_dir,
            source: &model.source_root,
            build: &model.build_root,
        };
        a.changed = changes::classify(
            &req.changed,
            &roots,
            &deps,
            &main_sources,
            model.cmake_inputs.as_deref(),
            req.limits.max_path_len,
        );
        let declared_forced =
            match declare::apply(&mut a.changed, &a.policy, model, cat, &reaches, &scripts) {
                Ok((f, uses)) => {
                    a.declarations.extend(uses);
                    a.declarations.sort();
                    a.declarations.dedup();
                    f
                }
                Err(msg) => {
                    a.outcome = Outcome::UsageError(msg);
                    return a;
                }
            };
        forced.extend(declared_forced);
        // build_config = "compare": a changed CMake script is decided by the
        // per-test fingerprints below instead of costing the whole suite.
        let base_snapshot = compare_base(req, &a.policy, &mut decision);
        if base_snapshot.is_some() {
            let why = "build_config = \"compare\": a CMake edit changes a test only through its build description (catalogue entry, closure targets' descriptions, configured headers, toolchain); files configure writes that no unit includes and no test names, custom-command steps and install rules are assumed unchanged";
            for c in &mut a.changed {
                let script = c.class == changes::Class::BuildConfig
                    && (c.display.ends_with("CMakeLists.txt") || c.display.ends_with(".cmake"));
                if script {
                    c.gap = None;
                    let d = policy::Declared {
                        kind: "build_config",
                        rule: 1,
                        matched: "compare".into(),
                        why: why.into(),
                    };
                    a.declarations.push(declare::Use {
                        declared: d.clone(),
                        subject: c.display.clone(),
                    });
                    c.evidence =
                        format!("{}; compared by build-description fingerprints", c.evidence);
                    c.declared = Some(d);
                }
            }
            a.declarations.sort();
        }
        decision.extend(a.changed.iter().filter_map(|c| c.gap.clone()));

        // 9. Reverse graph walk (only meaningful against a trusted catalogue).
        let Some(catalogue) = catalogue else {
            a.outcome = decision.finish(all, Vec::new(), Vec::new(), Vec::new());
            a.evidence = reader.digests();
            return a;
        };
        let impact = graph::impact(&graph, &deps, &a.changed, catalogue, &mappings);
        decision.extend(impact.gaps.iter().cloned());

        // Policy: always-run tests and label rules for matching paths.
        let (policy_forced, policy_gaps) = apply_policy(&a.policy, catalogue, &a.changed);
        forced.extend(policy_forced);
        decision.extend(policy_gaps);

        // What tests name and load beyond the graph, then test-to-test data flow.
        let index: std::collections::HashMap<&str, usize> = catalogue
            .tests
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut is_selected = vec![false; catalogue.tests.len()];
        for &i in &impact.selected {
            is_selected[i] = true;
        }
        for f in &forced {
            if let Some(&i) = index.get(f.test.as_str()) {
                is_selected[i] = true;
            }
        }
        let mut select = |i: usize, code: &'static str, detail: String, flags: &mut Vec<bool>| {
            flags[i] = true;
            forced.push(Forced {
                test: catalogue.tests[i].name.clone(),
                code,
                detail,
            });
        };
        for (i, r) in reaches.iter().enumerate() {
            for c in &a.changed {
                if let Some(why) = names_changed(r, c) {
                    select(i, select_code::NAMES_CHANGED_PATH, why, &mut is_selected);
                }
            }
        }
        let mut affected = vec![false; model.targets.len()];
        for &t in &impact.affected {
            affected[t] = true;
        }
        let (loaded, load_gaps) =
            reach::loaded_by_bytes(&graph, &mappings, &affected, &is_selected);
        decision.extend(load_gaps);
        for l in loaded {
            select(
                l.test,
                select_code::MAY_LOAD_AFFECTED,
                l.detail,
                &mut is_selected,
            );
        }
        if req.snapshot || base_snapshot.is_some() {
            let commit = if req.snapshot {
                vcs::resolve_commit(std::path::Path::new(&req.source_dir), "HEAD").ok()
            } else {
                None
            };
            match snapshot::compute(
                model,
                &graph,
                &deps,
                catalogue,
                &req.ctest_json,
                &mappings,
                &reaches,
                commit,
            ) {
                Err(g) => decision.require_full(g),
                Ok(head) => match &base_snapshot {
                    None => a.snapshot = Some(head),
                    Some(base) => {
                        if let Some(why) = snapshot::incompatible(base, &head) {
                            decision.require_full(Gap::new(
                                Code::SnapshotMismatch,
                                format!("{}: {why}", req.base_snapshot.as_deref().unwrap_or("")),
                            ));
                        }
                        let recorded = base["source_commit"].as_str();
                        if let Some(b) = &req.base_commit {
                            if recorded != Some(b.as_str()) {
                                decision.require_full(Gap::new(
                                    Code::SnapshotMismatch,
                                    format!(
                                        "{} was made at commit {}, but the change set starts at {b}",
                                        req.base_snapshot.as_deref().unwrap_or(""),
                                        recorded.unwrap_or("(none recorded)")
                                    ),
                                ));
                            }
                        }
                        for (name, what) in snapshot::changed_tests(base, &head) {
                            if let Some(&i) = index.get(name.as_str()) {
                                select(
                                    i,
                                    select_code::BUILD_DESCRIPTION_CHANGED,
                                    format!("its build description changed: {what}"),
                                    &mut is_selected,
                                );
                            }
                        }
                    }
                },
            }
        }
        for f in reach::data_flow(catalogue, &is_selected) {
            select(
                f.test,
                select_code::TEST_DATA_FLOW,
                f.detail,
                &mut is_selected,
            );
        }

        // Affected summary (for plans), from the walk.
        let mut units: Vec<String> = impact
            .units
            .iter()
            .map(|&u| paths::relative_to(&deps.tus[u].source, &model.source_root))
            .collect();
        units.sort();
        units.dedup();
        a.affected_units = units;
        let names = |ts: &mut dyn Iterator<Item = usize>| -> Vec<String> {
            let mut v: Vec<String> = ts.map(|t| model.targets[t].name.clone()).collect();
            v.sort();
            v
        };
        a.affected_direct = names(&mut impact.direct.iter().copied());
        a.affected_dependent = names(
            &mut impact
                .affected
                .iter()
                .copied()
                .filter(|t| impact.direct.binary_search(t).is_err()),
        );

        // 10. Only now commit.
        let selected: Vec<String> = impact
            .selected
            .iter()
            .map(|&i| catalogue.tests[i].name.clone())
            .collect();
        a.outcome = decision.finish(all, selected, impact.chains, forced);
        a.verdicts = if req.needs_verdicts() {
            verdicts(&a.outcome, catalogue, &graph, &mappings, &deps, model)
        } else {
            Vec::new()
        };
        a.evidence = reader.digests();
        drop(graph);
        drop_in_background((deps, mappings, impact.units, impact.affected));
        a
    });
    drop(job);
    drop(sources_cell);
    if let Some(model) = model_cell.into_inner() {
        drop_in_background(model);
    }
    a
}

/// Frees `heavy` (the evidence: hundreds of thousands of small allocations at
/// monorepo scale) on a helper thread, so the report is not held up by it. A
/// process that exits right after does not wait for the helper; if no thread
/// can be started, it is freed here.
fn drop_in_background<T: Send + 'static>(heavy: T) {
    let _ = std::thread::Builder::new().spawn(move || drop(heavy));
}

/// Source-tree prerequisites of the dependency evidence that the change
/// source cannot vouch for (git-ignored, untracked, or not in `--head`'s
/// tree): a change to one would not be in the change set. Build-tree files
/// (also in an in-source build) and files outside the source tree are not
/// asked about: the former are products of the build, the latter system files.
fn unvouched_prerequisites(
    vouched: &vcs::Vouched,
    deps: &ingest::depfile::DepEvidence,
    model: &ingest::file_api::Codemodel,
    user_source: &str,
) -> Vec<Gap> {
    let mut listed = vec![false; deps.files.len()];
    for tu in &deps.tus {
        for &p in &tu.prereqs {
            if let Some(f) = listed.get_mut(p as usize) {
                *f = true;
            }
        }
    }
    let mut out = Vec::new();
    for (id, f) in deps.files.iter().enumerate() {
        if !listed[id]
            || paths::is_within(f, &model.build_root)
            || !paths::is_within(f, &model.source_root)
        {
            continue;
        }
        let rel = paths::strip_root(f, &model.source_root).unwrap_or("");
        let spelled = paths::join_fold(user_source, rel);
        if !vouched.vouches(std::path::Path::new(&spelled))
            && !vouched.vouches(std::path::Path::new(f))
        {
            let display = if rel.is_empty() { f.as_str() } else { rel };
            out.push(Gap::new(
                Code::PrereqNotVersioned,
                format!(
                    "{display} is listed in dependency files but is git-ignored or untracked (not in the change source's tree), so a change to it would not be reported; track it, or pass the change set explicitly"
                ),
            ));
        }
    }
    out.sort();
    out
}

/// Why test reach `r` makes changed path `c` select its test, if it does: the
/// test names `c`, a directory holding it, or a configure-time copy of it
/// (same file name, or same bytes).
fn names_changed(r: &reach::TestReach, c: &changes::Changed) -> Option<String> {
    if c.abs.is_empty() {
        return None;
    }
    if let Some(n) = r
        .source
        .iter()
        .find(|n| **n == c.abs || paths::is_within(&c.abs, n))
    {
        return Some(if *n == c.abs {
            format!("names changed path {}", c.display)
        } else {
            format!(
                "names directory {n}, which holds changed path {}",
                c.display
            )
        });
    }
    r.configured
        .iter()
        .find(|copy| changes::may_be_copy(copy, &c.abs))
        .map(|copy| {
            format!(
                "names {copy}, which configure wrote and which may be a copy of changed path {}",
                c.display
            )
        })
}

fn apply_policy(
    policy: &Policy,
    catalogue: &ingest::ctest::Catalogue,
    changed: &[changes::Changed],
) -> (Vec<Forced>, Vec<Gap>) {
    let mut forced = Vec::new();
    let mut gaps = Vec::new();
    let with_label = |label: &str| -> Vec<&str> {
        catalogue
            .tests
            .iter()
            .filter(|t| t.labels.iter().any(|l| l == label))
            .map(|t| t.name.as_str())
            .collect()
    };
    for name in &policy.always_tests {
        if catalogue.tests.iter().any(|t| &t.name == name) {
            forced.push(Forced {
                test: name.clone(),
                code: select_code::ALWAYS_RUN,
                detail: format!("policy always_run.tests lists {name:?}"),
            });
        } else {
            gaps.push(Gap::new(
                Code::PolicyTestUnknown,
                format!("always_run.tests names {name:?}, which is not registered"),
            ));
        }
    }
    for label in &policy.always_labels {
        let tests = with_label(label);
        if tests.is_empty() {
            gaps.push(Gap::new(
                Code::PolicyLabelUncovered,
                format!("always_run.labels requires label {label:?}, which no test carries"),
            ));
        }
        for t in tests {
            forced.push(Forced {
                test: t.to_owned(),
                code: select_code::ALWAYS_RUN,
                detail: format!("policy always_run.labels: label {label:?}"),
            });
        }
    }
    for (ri, rule) in policy.rules.iter().enumerate() {
        for c in changed {
            // Match the path as given and its real spelling: a symlink must not bypass a rule.
            let spellings = std::iter::once(&c.display).chain(c.real_display.as_ref());
            let Some(glob) = spellings
                .clone()
                .find_map(|p| rule.paths.iter().find(|g| policy::glob_match(g, p)))
            else {
                continue;
            };
            for label in &rule.require_labels {
                let tests = with_label(label);
                if tests.is_empty() {
                    gaps.push(Gap::new(
                        Code::PolicyLabelUncovered,
                        format!("rule {} ({glob:?} matched {}) requires label {label:?}, which no test carries", ri + 1, c.display),
                    ));
                }
                for t in tests {
                    forced.push(Forced {
                        test: t.to_owned(),
                        code: select_code::POLICY_PATH_RULE,
                        detail: format!(
                            "rule {}: {} matches {glob:?}, which requires label {label:?}",
                            ri + 1,
                            c.display
                        ),
                    });
                }
            }
        }
    }
    (forced, gaps)
}

/// Verdicts when no graph exists: every test selected with the fallback reasons.
fn fallback_verdicts(
    outcome: &Outcome,
    catalogue: Option<&ingest::ctest::Catalogue>,
) -> Vec<Verdict> {
    let (Outcome::FullSuiteSelected { gaps, .. }, Some(cat)) = (outcome, catalogue) else {
        return Vec::new();
    };
    let mut v: Vec<Verdict> = cat
        .tests
        .iter()
        .map(|t| fallback_verdict(t, gaps))
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

fn fallback_verdict(t: &ingest::ctest::Test, gaps: &[Gap]) -> Verdict {
    let mut codes: Vec<&str> = gaps.iter().map(|g| g.code.as_str()).collect();
    codes.dedup();
    Verdict {
        name: t.name.clone(),
        labels: t.labels.clone(),
        selected: true,
        reasons: vec![VerdictReason {
            code: select_code::FULL_SUITE_FALLBACK.into(),
            detail: format!("a subset cannot be defended: {}", codes.join(", ")),
            // At most 25 per test: the full list is in the plan's fallback_reasons, once.
            evidence: gaps
                .iter()
                .take(25)
                .map(|g| g.to_string())
                .chain((gaps.len() > 25).then(|| {
                    format!(
                        "... and {} more fallback reasons (see fallback_reasons)",
                        gaps.len() - 25
                    )
                }))
                .collect(),
        }],
        closure: Vec::new(),
    }
}

fn verdicts(
    outcome: &Outcome,
    catalogue: &ingest::ctest::Catalogue,
    graph: &graph::Graph<'_>,
    mappings: &[graph::TestMapping],
    deps: &ingest::depfile::DepEvidence,
    model: &ingest::file_api::Codemodel,
) -> Vec<Verdict> {
    let (selected, chains, forced) = match outcome {
        Outcome::SubsetSelected {
            selected,
            chains,
            forced,
            ..
        } => (selected, chains, forced),
        Outcome::FullSuiteSelected { .. } => return fallback_verdicts(outcome, Some(catalogue)),
        Outcome::FullSuiteRequired { .. } | Outcome::UsageError(_) | Outcome::InternalError(_) => {
            return Vec::new()
        }
    };
    let mut units_of: BTreeMap<usize, usize> = BTreeMap::new();
    for tu in &deps.tus {
        *units_of.entry(tu.target).or_default() += 1;
    }
    let mut out: Vec<Verdict> = catalogue
        .tests
        .iter()
        .zip(mappings)
        .map(|(t, m)| {
            let is_selected = selected.binary_search(&t.name).is_ok();
            // Chains and forced entries are sorted by test name: take this test's run.
            let mine = |name: &str| name == t.name;
            let first_chain = chains.partition_point(|c| c.test < t.name);
            let mut reasons: Vec<VerdictReason> = chains[first_chain..]
                .iter()
                .take_while(|c| mine(&c.test))
                .map(|c| {
                    let mut evidence = if c.depfile.is_empty() {
                        vec![format!("changed:{}", c.changed), "command-line:compile or link command".to_owned()]
                    } else {
                        vec![format!("changed:{}", c.changed), format!("depfile:{}", c.depfile), format!("unit:{}", c.tu)]
                    };
                    evidence.extend(c.targets.iter().map(|x| format!("target:{x}")));
                    evidence.push(format!("test:{}", c.test));
                    VerdictReason { code: select_code::AFFECTED_BY_CHANGE.into(), detail: report::chain_text(c), evidence }
                })
                .collect();
            let first_forced = forced.partition_point(|f| f.test < t.name);
            reasons.extend(forced[first_forced..].iter().take_while(|f| mine(&f.test)).map(|f| VerdictReason {
                code: f.code.into(),
                detail: f.detail.clone(),
                evidence: Vec::new(),
            }));
            let closure_ids = match m {
                graph::TestMapping::Mapped { direct } => graph.closure(direct),
                graph::TestMapping::Unmapped(_) => Vec::new(),
            };
            let closure: Vec<decide::ClosureEntry> = closure_ids
                .iter()
                .map(|&i| decide::ClosureEntry {
                    target: model.targets[i].name.clone(),
                    kind: model.targets[i].kind.as_str(),
                    units: units_of.get(&i).copied().unwrap_or(0),
                })
                .collect();
            if !is_selected {
                let units: usize = closure.iter().map(|c| c.units).sum();
                let mut evidence = vec![
                    format!("command[0]:{}", t.command.as_ref().and_then(|c| c.first()).cloned().unwrap_or_default()),
                    "codemodel: every target object read, every dependency id resolved".to_owned(),
                    format!("depfiles: all {units} compiled units of the closure have exactly one fresh .d"),
                    "changed paths: every one classified as a known source or header".to_owned(),
                ];
                evidence.extend(closure.iter().map(|c| format!("target:{}", c.target)));
                reasons.push(VerdictReason {
                    code: select_code::OUTSIDE_TRANSITIVE_IMPACT_SET.into(),
                    detail: format!(
                        "none of the {} targets in its dependency closure is reached by the change's reverse walk",
                        closure.len()
                    ),
                    evidence,
                });
            }
            Verdict { name: t.name.clone(), labels: t.labels.clone(), selected: is_selected, reasons, closure }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
