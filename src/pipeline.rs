//! The pipeline: only sequences the stages of the decision order (contract
//! §3) and hands each stage's result to the next. Every stage is a function
//! of its own module that takes what it needs and returns its findings and
//! its gaps:
//!
//! 1. the catalogue ([`ingest::ctest::parse`]), read first and alone;
//! 2. the codemodel and the dependency evidence ([`ingest::build::read`],
//!    where the threads live), with the tests mapped
//!    ([`graph::Graph::map_tests`]) while the depfiles are read;
//! 3. the catalogue against the codemodel ([`ingest::ctest::audit_against`]);
//! 4. reach: what each test names beyond its closure ([`reach`]), and the
//!    tests behind opaque boundaries ([`select::opaque_tests`]);
//! 5. coverage of every target in scope ([`ingest::coverage::in_scope_gaps`]);
//! 6. the changed paths ([`changes::classify_against`]) and the declarations
//!    that decide some of them ([`declare`]);
//! 7. the reverse walk ([`graph::impact`]) and what else selects
//!    ([`select::Selection`]), the build-description compare among it
//!    ([`snapshot`]);
//! 8. the decision ([`Decision::finish`]) and the per-test verdicts.

use std::sync::OnceLock;

use crate::analysis::Analysis;
use crate::decide::{Decision, Forced};
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::Codemodel;
use crate::ingest::{self, Reader};
use crate::policy::{OpaqueMode, Policy};
use crate::reach::TestReach;
use crate::reason::{Code, Gap};
use crate::report::emit::{self, Emitter};
use crate::request::{Command, Request};
use crate::select::{self, apply_policy, compare_base, unvouched_prerequisites, Selection};
use crate::verdict::{fallback_verdicts, verdicts};
use crate::{changes, declare, graph, paths, reach, snapshot, vcs};

/// The whole decision order for one request. Pure with respect to output.
pub fn analyse_request(req: &Request, policy: Policy) -> Analysis {
    let reader = if needs_digests(req) {
        Reader::with_digests(req.limits.clone())
    } else {
        Reader::new(req.limits.clone())
    };
    // The catalogue's bytes are read first and alone, so what it says never
    // depends on timing; it is parsed while the depfiles are being read.
    let ctest_bytes = reader.read(&req.ctest_json).map_err(|e| {
        e.gap(
            &req.ctest_json,
            Code::CtestUnreadable,
            Code::CtestLimitExceeded,
        )
    });
    let model_cell = OnceLock::new();
    let (mut a, catalogue) = analyse_evidence(req, policy, &reader, ctest_bytes, &model_cell);
    if reader.total_exceeded() {
        stop_at_total_limit(&mut a, &reader, catalogue);
    }
    if let Some(model) = model_cell.into_inner() {
        ingest::drop_in_background(model);
    }
    if req.shard.is_some() {
        a.shard_costs = ingest::ctest_cost::read(&req.build_dir);
    }
    a
}

/// The output (the format's emitter, or the receipt) carries the content
/// digest of every evidence file.
fn needs_digests(req: &Request) -> bool {
    emit::of(req.format).needs_digests() || (req.receipt.is_some() && emit::Receipt.needs_digests())
}

/// The output carries each test's verdict (the format's emitter, or `--explain`).
fn needs_verdicts(req: &Request) -> bool {
    emit::of(req.format).needs_verdicts() || !req.explain.is_empty()
}

/// Everything the walk stands on, once the evidence is read and audited.
struct Evidence<'m> {
    model: &'m Codemodel,
    graph: Graph<'m>,
    deps: DepEvidence,
    custom: ingest::custom_commands::Custom,
    configure_reads: ingest::configure_reads::ConfigureReads,
    mappings: Vec<TestMapping>,
    reaches: Vec<TestReach>,
    forced: Vec<Forced>,
    base_snapshot: Option<serde_json::Value>,
    recorded: Option<crate::recorded::Recorded>,
}

/// Stages 1-6 (catalogue, evidence, mapping, reach, coverage, changed paths
/// and declarations), then [`walk_and_decide`]. Returns the analysis and the
/// catalogue (`Err`: why it could not be read).
fn analyse_evidence(
    req: &Request,
    policy: Policy,
    reader: &Reader,
    ctest_bytes: Result<Vec<u8>, Gap>,
    model_cell: &OnceLock<Codemodel>,
) -> (Analysis, Result<Catalogue, Gap>) {
    let mut a = Analysis::new(&req.changed, policy);
    let mut d = Decision::default();
    // A snapshot (made, or compared with a base's) fingerprints the evidence as it is parsed.
    let fingerprints = req.command == Command::Snapshot
        || (req.base_snapshot.is_some() && a.policy.compare_mode(true));
    let ingested = ingest::build::read(
        reader,
        ingest::build::Request {
            source_dir: &req.source_dir,
            build_dir: &req.build_dir,
            dep_list: &req.dep_list,
            config: req.config.as_deref(),
            fingerprints,
            ctest_bytes,
            ctest_json: &req.ctest_json,
            max_tests: req.limits.max_tests,
            // The document is kept for a snapshot's and a record's entry fingerprints.
            keep_ctest_document: fingerprints || req.record.is_some(),
        },
        model_cell,
    );
    let catalogue = ingested.catalogue;
    let cat = catalogue.as_ref().ok();
    d.extend(catalogue.as_ref().err().cloned());
    if let Some(c) = cat {
        a.flow_groups = reach::flow_groups(c, &[]);
    }
    let Some(modelled) = ingested.modelled else {
        d.extend(ingested.gaps);
        finish_early(&mut a, d, cat, reader);
        return (a, catalogue);
    };
    let ingest::build::Modelled {
        model,
        deps,
        recorded,
        configure_reads,
        list_failed,
    } = modelled;
    let mut graph = Graph::new(model);
    let empty = Catalogue::default();
    let (mappings, config_gaps) = {
        let cat = cat.unwrap_or(&empty);
        (graph.map_tests(cat), graph.config_gaps(cat))
    };
    if let Some(v) = &req.vouched {
        d.extend(unvouched_prerequisites(v, &deps, model, &req.source_dir));
    }
    let custom = ingest::custom_commands::resolve(reader, model, &deps, recorded);
    // A custom command's depfile in the dependency list is that command's
    // evidence (read with it), not a unit's that failed to map.
    d.extend(
        ingested
            .gaps
            .into_iter()
            .filter(|g| !custom.lists_depfile_of(g)),
    );
    graph.add_depfile_evidence(&deps, &custom);
    d.extend(config_gaps);
    let listed = std::fs::metadata(&req.ctest_json)
        .and_then(|m| m.modified())
        .ok();
    if let Some(c) = cat {
        d.extend(ingest::ctest::audit_against(c, model, listed));
    }
    let mut ev = Evidence {
        model,
        graph,
        deps,
        custom,
        configure_reads,
        mappings,
        reaches: Vec::new(),
        forced: Vec::new(),
        base_snapshot: None,
        recorded: None,
    };
    if !reach_and_changes(req, &mut a, &mut d, cat, &mut ev, (listed, list_failed)) {
        return (a, catalogue);
    }
    let Some(cat) = cat else {
        finish_early(&mut a, d, None, reader);
        return (a, catalogue);
    };
    walk_and_decide(req, &mut a, d, reader, cat, ev);
    (a, catalogue)
}

/// Stages 4-6: what each test reaches beyond its closure and the tests
/// behind opaque boundaries, coverage of every target in scope, the changed
/// paths and the declarations that decide some of them. `false` when a
/// declaration is a usage error (the analysis says so).
fn reach_and_changes(
    req: &Request,
    a: &mut Analysis,
    d: &mut Decision,
    cat: Option<&Catalogue>,
    ev: &mut Evidence<'_>,
    (listed, list_failed): (Option<std::time::SystemTime>, bool),
) -> bool {
    let empty = Catalogue::default();
    let cat_or_empty = cat.unwrap_or(&empty);

    // 4. Reach: what each test names beyond its closure; opaque boundaries.
    let lookup = reach::Lookup::new(&ev.graph, listed);
    let scripts =
        declare::map_scripts(&a.policy, &lookup, ev.model, cat_or_empty, &mut ev.mappings);
    let Some((uses, scripts)) = a.usage_or(scripts) else {
        return false;
    };
    a.declarations.extend(uses);
    let max_bytes = req.limits.max_file_bytes;
    let reach_gaps;
    (ev.reaches, reach_gaps) =
        reach::extend_mappings(&lookup, &ev.deps, cat_or_empty, &mut ev.mappings, max_bytes);
    if req.command == Command::Init {
        a.init = Some(crate::init::suggest(&crate::init::Input {
            lookup: &lookup,
            graph: &ev.graph,
            deps: &ev.deps,
            custom: &ev.custom,
            catalogue: cat_or_empty,
            mappings: &ev.mappings,
            reaches: &ev.reaches,
            configure: &ev.configure_reads,
            max_bytes,
        }));
    }
    drop(lookup);
    d.extend(reach_gaps);
    let recorded_tests = audit_record(req, a, cat, ev);
    // Tests that name one test-time path share data too (also for --shard).
    if ev.reaches.iter().any(|r| !r.shared.is_empty()) {
        let shared: Vec<Vec<String>> = ev.reaches.iter().map(|r| r.shared.clone()).collect();
        a.flow_groups = reach::flow_groups(cat_or_empty, &shared);
    }
    let select_opaque = a.policy.opaque == OpaqueMode::Select;
    let opaque = select::opaque_tests(
        &ev.graph,
        cat_or_empty,
        &ev.mappings,
        &ev.reaches,
        select_opaque,
        &recorded_tests,
    );
    d.extend(opaque.gaps);
    ev.forced = opaque.forced;

    // 5. Coverage of every target that can reach what a test runs or loads.
    let in_scope = ev
        .graph
        .coverage_scope(&select::test_roots(&ev.mappings, &opaque.extra_reached));
    d.extend(ingest::coverage::in_scope_gaps(
        ev.model,
        &ev.deps,
        &in_scope,
        list_failed,
    ));

    // 6. Changed paths, and the declarations that decide some of them.
    let (source, edited, max_path) = (&req.source_dir, &req.edited, req.limits.max_path_len);
    a.changed =
        changes::classify_against(&req.changed, source, ev.model, &ev.deps, edited, max_path);
    changes::custom_command_inputs(&mut a.changed, &ev.custom, ev.model);
    changes::configure_reads(&mut a.changed, &ev.configure_reads, ev.model);
    changes::assembler_search_dirs(&mut a.changed, ev.model);
    if let Some(r) = &ev.recorded {
        a.declarations
            .extend(r.decide_unknown_paths(&mut a.changed));
    }
    let declared = declare::apply(
        &mut a.changed,
        &a.policy,
        ev.model,
        cat_or_empty,
        &ev.reaches,
        &scripts,
    );
    ev.forced.extend(declared.forced);
    a.declarations.extend(declared.uses);
    d.extend(declared.gaps);
    a.notes.extend(declared.notes);
    let (uses, gaps) = crate::unreferenced::apply(
        &mut a.changed,
        &a.policy,
        &ev.graph,
        cat_or_empty,
        &ev.mappings,
        &ev.reaches,
        &ev.configure_reads,
        req.limits.max_file_bytes,
    );
    a.declarations.extend(uses);
    d.extend(gaps);
    a.declarations.sort();
    a.declarations.dedup();
    // The snapshots decide CMake edits only: with none, a base snapshot is
    // not read (one that would not match costs nothing).
    let cmake_changed = a.changed.iter().any(|c| {
        c.gap
            .as_ref()
            .is_some_and(|g| g.code == Code::ChangeBuildConfig)
    });
    ev.base_snapshot = compare_base(req.base_snapshot.as_deref(), &a.policy, cmake_changed, d);
    if ev.base_snapshot.is_some() {
        a.declarations.extend(declare::compare_mode(&mut a.changed));
        a.declarations.sort();
    }
    d.extend(a.changed.iter().filter_map(|c| c.gap.clone()));
    true
}

/// Stages 7-8: the reverse walk over a trusted catalogue, what else
/// selects, and the decision.
fn walk_and_decide(
    req: &Request,
    a: &mut Analysis,
    mut d: Decision,
    reader: &Reader,
    cat: &Catalogue,
    ev: Evidence<'_>,
) {
    let Evidence {
        model,
        graph,
        deps,
        mappings,
        reaches,
        mut forced,
        custom: _,
        configure_reads: _,
        base_snapshot,
        recorded,
    } = ev;
    let mut impact = graph::impact(&graph, &deps, &a.changed, cat, &mappings);
    d.extend(impact.gaps.iter().cloned());
    let (policy_forced, policy_gaps) = apply_policy(&a.policy, cat, &a.changed);
    forced.extend(policy_forced);
    d.extend(policy_gaps);

    // The build-description compare (compare mode) or the snapshot to make.
    let mut description_changed: Vec<(String, String)> = Vec::new();
    let mut affected = impact.affected.clone();
    if req.command == Command::Snapshot || base_snapshot.is_some() {
        let commit = if req.command == Command::Snapshot {
            vcs::resolve_commit(std::path::Path::new(&req.source_dir), "HEAD").ok()
        } else {
            None
        };
        let computed = ingest::build_commands::fingerprints(reader, model).and_then(|commands| {
            snapshot::compute(
                model, &graph, &deps, cat, &mappings, &reaches, &commands, commit,
            )
        });
        match computed {
            Err(g) => d.require_full(g),
            Ok(head) => match &base_snapshot {
                None => a.snapshot = Some(head),
                Some(base) => {
                    let path = req.base_snapshot.as_deref().unwrap_or("");
                    let compared = snapshot::compare(base, &head, path, req.base_commit.as_deref());
                    d.extend(compared.gaps);
                    description_changed = compared.changed;
                    // A target whose description changed is affected for what
                    // may load it by bytes (a plugin a program dlopen()s by name).
                    affected.extend(
                        (model.targets.iter().enumerate())
                            .filter(|(_, t)| compared.targets.contains(&t.name))
                            .map(|(i, _)| i),
                    );
                    affected.sort_unstable();
                    affected.dedup();
                }
            },
        }
    }

    // What tests name and load beyond the graph, changed build descriptions,
    // then test-to-test data flow.
    let mut sel = Selection::new(cat, &impact.selected, forced);
    sel.by_named_paths(&reaches, &a.changed);
    let max_bytes = req.limits.max_file_bytes;
    d.extend(sel.by_source_paths(&graph, &mappings, &a.changed, max_bytes));
    d.extend(sel.by_loading(&graph, &mappings, &affected));
    sel.by_description(description_changed);
    if let Some(r) = &recorded {
        decide_by_record(r, a, &mut sel, &mut impact, cat);
    }
    sel.by_data_flow(&reaches);

    // The plan's summary, and each chain's word on how its test reaches its target.
    (a.affected_units, a.affected_direct, a.affected_dependent) = impact.summary(model, &deps);
    reach::explain_chains(&mut impact.chains, &reaches, cat, model);

    // 8. Only now commit.
    let all = Some(cat.tests.iter().map(|t| t.name.clone()).collect());
    let selected: Vec<String> = (impact.selected.iter())
        .map(|&i| cat.tests[i].name.clone())
        .collect();
    // A snapshot fingerprints every test whatever changes later: its gaps stay.
    if req.changed.is_empty() && req.command != Command::Snapshot {
        d.nothing_changed();
    }
    a.outcome = d.finish(all, selected, impact.chains, sel.forced);
    a.verdicts = if needs_verdicts(req) {
        verdicts(&a.outcome, cat, &graph, &mappings, &deps, model)
    } else {
        Vec::new()
    };
    a.evidence = reader.digests();
    drop(graph);
    ingest::drop_in_background((deps, mappings, impact.units, impact.affected));
}

/// What a usable record decides: the tests it selects, and the covered tests
/// only static inferences selected although every input they touched is
/// unchanged (taken out, each said as an `assume RECORD` line).
fn decide_by_record(
    r: &crate::recorded::Recorded,
    a: &mut Analysis,
    sel: &mut Selection<'_>,
    impact: &mut graph::Impact,
    cat: &Catalogue,
) {
    let picked = sel.by_record(r, &a.changed);
    let unaffected: Vec<bool> = (r.covered.iter().zip(&picked))
        .map(|(c, p)| c.is_some() && !p)
        .collect();
    let dropped = sel.drop_unaffected(&unaffected);
    impact.selected.retain(|i| !dropped.contains(i));
    let names: Vec<&str> = dropped
        .iter()
        .map(|&i| cat.tests[i].name.as_str())
        .collect();
    impact.chains.retain(|c| !names.contains(&c.test.as_str()));
    if r.covered.iter().any(Option::is_some) {
        a.declarations.push(r.use_of());
    }
    a.declarations
        .extend(names.iter().map(|n| r.use_unaffected(n)));
    a.declarations.sort();
}

/// Reads and audits `--record` (when given) against this run's catalogue
/// and base, keeps it in `ev` when usable, and says why not; returns, per
/// test, whether the record covers it.
fn audit_record(
    req: &Request,
    a: &mut Analysis,
    cat: Option<&Catalogue>,
    ev: &mut Evidence<'_>,
) -> Vec<bool> {
    let (Some(path), Some(cat)) = (&req.record, cat) else {
        return Vec::new();
    };
    let empty = serde_json::Value::Null;
    let top = paths::repo_root_above(&req.source_dir).unwrap_or_else(|| req.source_dir.clone());
    let changed_abs: Vec<String> = (req.changed.iter())
        .map(|c| paths::join_fold(&top, &c.to_string_lossy()))
        .collect();
    let audit = crate::recorded::audit(&crate::recorded::Input {
        path,
        source_dir: &req.source_dir,
        build_dir: &req.build_dir,
        catalogue_json: cat.json.as_ref().unwrap_or(&empty),
        catalogue: cat,
        base_commit: req.base_commit.as_deref(),
        changed_abs: &changed_abs,
        max_bytes: req.limits.max_file_bytes.max(1 << 30),
    });
    a.notes.extend(audit.notes);
    ev.recorded = audit.recorded;
    match &ev.recorded {
        Some(r) => r.covered.iter().map(Option::is_some).collect(),
        None => Vec::new(),
    }
}

/// The decision without a walk (no codemodel, or no catalogue): the
/// fallback, with every test's fallback verdict.
fn finish_early(a: &mut Analysis, d: Decision, cat: Option<&Catalogue>, reader: &Reader) {
    let all = cat.map(|c| c.tests.iter().map(|t| t.name.clone()).collect());
    a.outcome = d.finish(all, Vec::new(), Vec::new(), Vec::new());
    a.verdicts = fallback_verdicts(&a.outcome, cat);
    a.evidence = reader.digests();
}

/// A run stopped by `--max-total-bytes` has read a part of the evidence that
/// depends on the timing of parallel reads. Every finding drawn from it is
/// dropped: what is left is the catalogue's own verdict and the limit, so
/// equal inputs still give equal reports.
fn stop_at_total_limit(a: &mut Analysis, reader: &Reader, catalogue: Result<Catalogue, Gap>) {
    let mut decision = Decision::default();
    let (catalogue, catalogue_gap) = match catalogue {
        Ok(c) => (Some(c), None),
        Err(g) => (None, Some(g)),
    };
    decision.extend(catalogue_gap);
    decision.require_full(Gap::new(
        Code::LimitExceeded,
        ingest::ReadError::TotalTooLarge {
            limit: reader.limits().max_total_bytes,
        }
        .to_string(),
    ));
    let all = catalogue
        .as_ref()
        .map(|c| c.tests.iter().map(|t| t.name.clone()).collect());
    a.outcome = decision.finish(all, Vec::new(), Vec::new(), Vec::new());
    a.verdicts = fallback_verdicts(&a.outcome, catalogue.as_ref());
    a.affected_units.clear();
    a.affected_direct.clear();
    a.affected_dependent.clear();
    a.changed = changes::unclassified(
        &a.changed_raw,
        "not classified: reading the evidence stopped at --max-total-bytes",
        Code::LimitExceeded,
    );
    a.evidence = reader.digests();
}
