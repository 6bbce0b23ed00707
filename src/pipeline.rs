//! The pipeline: sequences the stages of the decision order (contract §3) —
//! catalogue, codemodel, dependency evidence, test mapping and reach, changed
//! paths, declarations, reverse walk, what else selects, decision — and hands
//! each stage's result to the next. The threads that read evidence while the
//! codemodel loads live in the readers (`ingest::depfile::ReadJob`); the
//! decisions live in the stage modules (`reach`, `declare`, `select`,
//! `graph`, `decide`, `verdict`).

use std::collections::HashSet;

use crate::analysis::Analysis;
use crate::decide::{select_code, Decision, Forced, Outcome};
use crate::ingest::{self, Reader};
use crate::policy::{self, OpaqueMode, Policy};
use crate::reason::{Code, Gap};
use crate::request::Request;
use crate::select::{apply_policy, compare_base, names_changed, unvouched_prerequisites};
use crate::verdict::{fallback_verdicts, verdicts};
use crate::{changes, declare, fasthash, graph, paths, reach, snapshot, vcs};

/// Steps 2-10 of the decision order. Pure with respect to output.
pub fn analyse_request(req: &Request, policy: Policy) -> Analysis {
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
    req: &Request,
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
    // A snapshot (made, or compared with a base's) fingerprints the evidence
    // as it is parsed, so that nothing is read twice.
    let fingerprints = req.snapshot
        || (a.policy.build_config == policy::BuildConfigMode::Compare
            && req.base_snapshot.is_some());
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
                fingerprints,
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
                fingerprints,
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

        // A Ninja build's manifest and log, read here while the deps log is.
        if model.is_ninja() {
            job.ninja_commands(model);
        }

        // 6-7. Dependency files: mapping, completeness, freshness.
        let pending = job.pending(job.work_and_join(helpers));
        let (mut deps, dep_gaps) = pending.finish(reader, model, sources);
        // The list itself gave no evidence: every unit's missing evidence is
        // its consequence, said once below.
        let list_failed = dep_gaps
            .iter()
            .any(|g| matches!(g.code, Code::DepListUnreadable | Code::DepsLogMissing));
        decision.extend(dep_gaps);
        decision.extend(ingest::depfile::join_outside_aliases(
            &mut deps,
            model,
            req.limits.max_file_bytes,
        ));
        ingest::depfile::scan_assembler_includes(model, &mut deps, req.limits.max_file_bytes);
        decision.extend(ingest::autogen::join_automoc(&mut deps, model, reader));
        if let Some(v) = &req.vouched {
            decision.extend(unvouched_prerequisites(v, &deps, model, &req.source_dir));
        }
        graph.add_depfile_evidence(&deps);
        decision.extend(config_gaps);
        let listed = std::fs::metadata(&req.ctest_json)
            .and_then(|m| m.modified())
            .ok();
        if let Some(c) = catalogue {
            decision.extend(ingest::ctest::audit_against(c, model, listed));
        }

        // 5 (cont.). What each test names beyond its executable: artifacts and
        // outputs join its direct targets; source paths and copies are kept.
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
            if graph.foreign_config(test).is_some() {
                // It runs another configuration's artifacts: that is its one
                // reason (`config_gaps`), which already forces the full suite.
                continue;
            }
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
        let in_scope = graph.coverage_scope(&test_roots);
        let coverage = ingest::depfile::coverage_gaps(model, &deps, &in_scope);
        decision.extend(match coverage.iter().min() {
            Some(first) if list_failed => vec![Gap::new(
                Code::DepCoverageIncomplete,
                format!(
                    "{} compiled sources in scope have no dependency evidence, because of the dependency list (above); the first: {}",
                    coverage.len(),
                    first.detail
                ),
            )],
            _ => coverage,
        });
        decision.extend(ingest::depfile::system_headers_gaps(
            model, &deps, &in_scope,
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
            &model.config_globs,
            &req.edited,
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
        let mut impact = graph::impact(&graph, &deps, &a.changed, catalogue, &mappings);
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
            reach::loaded_by_bytes(&graph, catalogue, &mappings, &affected, &is_selected);
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
            match snapshot::compute(model, &graph, &deps, catalogue, &mappings, &reaches, commit) {
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

        // Each chain says why its test reaches its last target when a channel does.
        let index: fasthash::FastMap<&str, usize> = if reaches.iter().any(|r| !r.via.is_empty()) {
            (catalogue.tests.iter().enumerate())
                .map(|(i, t)| (t.name.as_str(), i))
                .collect()
        } else {
            Default::default()
        };
        for c in &mut impact.chains {
            let Some(&ti) = index.get(c.test.as_str()) else {
                continue;
            };
            if let Some((_, why)) = reaches[ti]
                .via
                .iter()
                .find(|(t, _)| c.targets.last() == Some(&model.targets[*t].name))
            {
                c.reached = why.clone();
            }
        }

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
        ingest::drop_in_background((deps, mappings, impact.units, impact.affected));
        a
    });
    drop(job);
    drop(sources_cell);
    if let Some(model) = model_cell.into_inner() {
        ingest::drop_in_background(model);
    }
    a
}
