//! The pipeline: only sequences the stages of the decision order (contract
//! §3). Each stage is a function that takes the values the stages before it
//! returned and returns its own value with its gaps; the gaps go to the one
//! [`Decision`], and the [`Analysis`] is built once, at the end, from the
//! stages' values:
//!
//! 1-2. the catalogue and the build's evidence ([`ingest::build::read`],
//!    where the threads live): `Ingested`;
//! 3. the graph, each test's mapping, and the audits of the catalogue and the
//!    dependency evidence against the codemodel (`evidence_stage`): `Audited`;
//! 4. reach: `[[script]]` rules and what each test names beyond its closure
//!    (`reach_stage`): `Reached`;
//! 5. the tests behind opaque boundaries and the coverage of every target in
//!    scope (`boundaries_stage`): `Bounded`;
//! 6. the changed paths and the declarations that decide some of them
//!    (`classify_stage`): `Classified`;
//! 7. the reverse walk, what else selects, and the build-description compare
//!    (`walk_and_decide`, `describe_stage`);
//! 8. the decision ([`Decision::finish`]) and the per-test verdicts: `Decided`.

use std::sync::OnceLock;

use crate::analysis::Analysis;
use crate::decide::{Decision, Forced, Outcome};
use crate::declare::Use;
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::Codemodel;
use crate::ingest::{self, Reader};
use crate::policy::{OpaqueMode, Policy};
use crate::reach::TestReach;
use crate::reason::{Code, Gap};
use crate::report::emit::{self, Emitter};
use crate::request::{Request, Writes};
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
    let (mut found, catalogue) = analyse_evidence(req, &policy, &reader, ctest_bytes, &model_cell);
    if reader.total_exceeded() {
        found = stopped_at_total_limit(req, &reader, catalogue);
    }
    if let Some(model) = model_cell.into_inner() {
        ingest::drop_in_background(model);
    }
    let shard_costs = req
        .shard
        .and_then(|_| ingest::ctest_cost::read(&req.build_dir));
    Analysis {
        outcome: found.outcome,
        verdicts: found.verdicts,
        changed: found.changed,
        changed_raw: (req.changed.iter())
            .map(|c| c.to_string_lossy().into_owned())
            .collect(),
        affected_units: found.affected.0,
        affected_direct: found.affected.1,
        affected_dependent: found.affected.2,
        evidence: reader.digests(),
        policy,
        declarations: found.declarations,
        flow_groups: found.flow_groups,
        shard_costs,
        snapshot: found.snapshot,
        init: found.init,
        notes: found.notes,
    }
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

/// What the stages found, gathered once: [`analyse_request`] makes the
/// [`Analysis`] of it.
struct Found {
    outcome: Outcome,
    verdicts: Vec<crate::decide::Verdict>,
    changed: Vec<changes::Changed>,
    /// Affected units, targets owning one, targets affected through them.
    affected: (Vec<String>, Vec<String>, Vec<String>),
    declarations: Vec<Use>,
    flow_groups: std::collections::BTreeMap<String, String>,
    snapshot: Option<serde_json::Value>,
    init: Option<String>,
    notes: Vec<String>,
}

impl Default for Found {
    fn default() -> Self {
        Found {
            outcome: Outcome::InternalError("analysis did not finish".into()),
            verdicts: Vec::new(),
            changed: Vec::new(),
            affected: Default::default(),
            declarations: Vec::new(),
            flow_groups: Default::default(),
            snapshot: None,
            init: None,
            notes: Vec::new(),
        }
    }
}

impl Found {
    /// The decision without a walk (no codemodel, or no catalogue): the
    /// fallback, with every test's fallback verdict.
    fn early(d: Decision, cat: Option<&Catalogue>) -> Found {
        let all = cat.map(|c| c.tests.iter().map(|t| t.name.clone()).collect());
        let outcome = d.finish(all, Vec::new(), Vec::new(), Vec::new());
        Found {
            verdicts: fallback_verdicts(&outcome, cat),
            outcome,
            ..Found::default()
        }
    }
}

/// Everything the walk stands on, once the evidence is read and audited.
struct Evidence<'m> {
    model: &'m Codemodel,
    graph: Graph<'m>,
    deps: DepEvidence,
    custom: ingest::custom_commands::Custom,
    configure_reads: ingest::configure_reads::ConfigureReads,
    /// The test record (`--record`), when usable.
    recorded: Option<crate::recorded::Recorded>,
    /// When the catalogue file was written.
    listed: Option<std::time::SystemTime>,
}

/// Stages 2-3: the evidence read, the graph built, the tests mapped, and the
/// audits of the one against the other. `Err`: the decision without a
/// codemodel.
fn evidence_stage<'m>(
    req: &Request,
    reader: &Reader,
    (modelled, ingested_gaps): (Option<ingest::build::Modelled<'m>>, Vec<Gap>),
    cat: Option<&Catalogue>,
) -> Result<Audited<'m>, Vec<Gap>> {
    let Some(modelled) = modelled else {
        return Err(ingested_gaps);
    };
    let ingest::build::Modelled {
        model,
        mut deps,
        recorded,
        configure_reads,
        list_failed,
    } = modelled;
    // The test record's part of the evidence: kept beside it, as the walk uses it.
    let test_record = std::mem::take(&mut deps.tests);
    let mut gaps = Vec::new();
    let mut graph = Graph::new(model);
    let empty = Catalogue::default();
    let (mappings, config_gaps) = {
        let cat = cat.unwrap_or(&empty);
        (graph.map_tests(cat), graph.config_gaps(cat))
    };
    if let Some(v) = &req.vouched {
        gaps.extend(unvouched_prerequisites(v, &deps, model, &req.source_dir));
    }
    let custom = ingest::custom_commands::resolve(reader, model, &deps, recorded);
    // A custom command's depfile in the dependency list is that command's
    // evidence (read with it), not a unit's that failed to map.
    gaps.extend(
        ingested_gaps
            .into_iter()
            .filter(|g| !custom.lists_depfile_of(g)),
    );
    graph.add_depfile_evidence(&deps, &custom);
    gaps.extend(config_gaps);
    let listed = std::fs::metadata(&req.ctest_json)
        .and_then(|m| m.modified())
        .ok();
    if let Some(c) = cat {
        gaps.extend(ingest::ctest::audit_against(c, model, listed));
    }
    let ev = Evidence {
        model,
        graph,
        deps,
        custom,
        configure_reads,
        recorded: test_record.recorded,
        listed,
    };
    Ok(Audited {
        ev,
        mappings,
        gaps,
        list_failed,
        record_notes: test_record.notes,
    })
}

/// What stages 2-3 return with a codemodel.
struct Audited<'m> {
    ev: Evidence<'m>,
    /// Each test's mapping to the targets it runs.
    mappings: Vec<TestMapping>,
    gaps: Vec<Gap>,
    /// The dependency list could not be read.
    list_failed: bool,
    /// What the audit of the test record says (`note` lines).
    record_notes: Vec<String>,
}

/// Stages 1-8 in order. Returns what they found and the catalogue (`Err`:
/// why it could not be read).
fn analyse_evidence(
    req: &Request,
    policy: &Policy,
    reader: &Reader,
    ctest_bytes: Result<Vec<u8>, Gap>,
    model_cell: &OnceLock<Codemodel>,
) -> (Found, Result<Catalogue, Gap>) {
    let mut d = Decision::default();
    // A snapshot (made, or compared with a base's) fingerprints the evidence as it is parsed.
    let fingerprints = req.writes == Writes::Snapshot
        || (req.base_snapshot.is_some() && policy.compare_mode(true));
    let asked = record_asked(req);
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
            record: asked.as_ref(),
        },
        model_cell,
    );
    let ingest::build::Ingested {
        catalogue,
        modelled,
        gaps,
    } = ingested;
    let cat = catalogue.as_ref().ok();
    d.extend(catalogue.as_ref().err().cloned());
    let flow_groups = cat.map(|c| reach::flow_groups(c, &[])).unwrap_or_default();
    let audited = match evidence_stage(req, reader, (modelled, gaps), cat) {
        Ok(found) => found,
        Err(gaps) => {
            d.extend(gaps);
            let found = Found {
                flow_groups,
                ..Found::early(d, cat)
            };
            return (found, catalogue);
        }
    };
    let Audited {
        ev,
        mappings,
        gaps,
        list_failed,
        record_notes,
    } = audited;
    d.extend(gaps);
    let empty = Catalogue::default();
    let cat_or_empty = cat.unwrap_or(&empty);
    let mut reached = match reach_stage(req, policy, &ev, cat_or_empty, mappings) {
        Ok(r) => r,
        Err(e) => {
            let found = Found {
                outcome: Outcome::UsageError(e.0),
                flow_groups,
                ..Found::default()
            };
            return (found, catalogue);
        }
    };
    d.extend(reached.gaps.drain(..));
    let mut bounded = boundaries_stage(policy, &ev, cat_or_empty, &reached, list_failed);
    d.extend(bounded.gaps.drain(..));
    let mut classified = classify_stage(req, policy, &ev, cat_or_empty, &reached);
    d.extend(classified.gaps.drain(..));
    classified.forced.extend(bounded.forced);
    let notes = record_notes
        .into_iter()
        .chain(classified.notes.drain(..))
        .collect();
    let flow_groups = bounded.flow_groups.unwrap_or(flow_groups);
    let init = reached.init.take();
    let Some(cat) = cat else {
        let found = Found {
            changed: classified.changed,
            declarations: classified.declarations,
            flow_groups,
            init,
            notes,
            ..Found::early(d, None)
        };
        return (found, catalogue);
    };
    let mut declarations = std::mem::take(&mut classified.declarations);
    let decided = walk_and_decide(req, policy, (d, reader), cat, ev, &reached, classified);
    declarations.extend(decided.declarations);
    declarations.sort();
    let found = Found {
        outcome: decided.outcome,
        verdicts: decided.verdicts,
        changed: decided.changed,
        affected: decided.affected,
        declarations,
        flow_groups,
        snapshot: decided.snapshot,
        init,
        notes,
    };
    (found, catalogue)
}

/// What stage 4 returns: each test's mapping as the policy's `[[script]]`
/// rules and the reach channels extend it, what each test names beyond its
/// closure, and the scripts each test runs.
struct Reached {
    mappings: Vec<TestMapping>,
    reaches: Vec<TestReach>,
    scripts: Vec<Vec<String>>,
    declarations: Vec<Use>,
    /// `diff2test init`: the starter policy.
    init: Option<String>,
    gaps: Vec<Gap>,
}

/// Stage 4: what each test reaches beyond its closure. `Err`: a `[[script]]`
/// rule the evidence contradicts (a usage error).
fn reach_stage(
    req: &Request,
    policy: &Policy,
    ev: &Evidence<'_>,
    cat: &Catalogue,
    mut mappings: Vec<TestMapping>,
) -> Result<Reached, crate::request::UsageError> {
    let lookup = reach::Lookup::new(&ev.graph, ev.listed);
    let (declarations, scripts) =
        declare::map_scripts(policy, &lookup, ev.model, cat, &mut mappings)?;
    let max_bytes = req.limits.max_file_bytes;
    let (reaches, gaps) = reach::extend_mappings(&lookup, &ev.deps, cat, &mut mappings, max_bytes);
    let init = (req.writes == Writes::Policy).then(|| {
        crate::init::suggest(&crate::init::Input {
            lookup: &lookup,
            graph: &ev.graph,
            deps: &ev.deps,
            custom: &ev.custom,
            catalogue: cat,
            mappings: &mappings,
            reaches: &reaches,
            configure: &ev.configure_reads,
            max_bytes,
        })
    });
    Ok(Reached {
        mappings,
        reaches,
        scripts,
        declarations,
        init,
        gaps,
    })
}

/// What stage 5 returns: the tests behind opaque boundaries, forced in or a
/// gap each, the coverage of every target in scope, and the data-flow groups
/// when tests share a path.
struct Bounded {
    forced: Vec<Forced>,
    flow_groups: Option<std::collections::BTreeMap<String, String>>,
    gaps: Vec<Gap>,
}

/// Stage 5: opaque boundaries and coverage.
fn boundaries_stage(
    policy: &Policy,
    ev: &Evidence<'_>,
    cat: &Catalogue,
    reached: &Reached,
    list_failed: bool,
) -> Bounded {
    // Tests that name one test-time path share data too (also for --shard).
    let flow_groups = reached
        .reaches
        .iter()
        .any(|r| !r.shared.is_empty())
        .then(|| {
            let shared: Vec<Vec<String>> =
                reached.reaches.iter().map(|r| r.shared.clone()).collect();
            reach::flow_groups(cat, &shared)
        });
    let recorded_tests: Vec<bool> = match &ev.recorded {
        Some(r) => r.covered.iter().map(Option::is_some).collect(),
        None => Vec::new(),
    };
    let opaque = select::opaque_tests(
        &ev.graph,
        cat,
        &reached.mappings,
        &reached.reaches,
        policy.opaque == OpaqueMode::Select,
        &recorded_tests,
    );
    let mut gaps = opaque.gaps;
    // Coverage of every target that can reach what a test runs or loads.
    let in_scope = ev.graph.coverage_scope(&select::test_roots(
        &reached.mappings,
        &opaque.extra_reached,
    ));
    gaps.extend(ingest::coverage::in_scope_gaps(
        ev.model,
        &ev.deps,
        &in_scope,
        list_failed,
    ));
    Bounded {
        forced: opaque.forced,
        flow_groups,
        gaps,
    }
}

/// What stage 6 returns: each changed path's class and evidence, the
/// declarations that decide some of them, the tests they force in, and the
/// base snapshot when a CMake edit is compared.
struct Classified {
    changed: Vec<changes::Changed>,
    declarations: Vec<Use>,
    forced: Vec<Forced>,
    notes: Vec<String>,
    base_snapshot: Option<serde_json::Value>,
    gaps: Vec<Gap>,
}

/// Stage 6: the changed paths, and the declarations that decide some of them.
fn classify_stage(
    req: &Request,
    policy: &Policy,
    ev: &Evidence<'_>,
    cat: &Catalogue,
    reached: &Reached,
) -> Classified {
    let (source, edited, max_path) = (&req.source_dir, &req.edited, req.limits.max_path_len);
    let mut changed =
        changes::classify_against(&req.changed, source, ev.model, &ev.deps, edited, max_path);
    changes::custom_command_inputs(&mut changed, &ev.custom, ev.model);
    changes::configure_reads(&mut changed, &ev.configure_reads, ev.model);
    changes::assembler_search_dirs(&mut changed, ev.model);
    let mut declarations = reached.declarations.clone();
    if let Some(r) = &ev.recorded {
        declarations.extend(r.decide_unknown_paths(&mut changed));
    }
    let declared = declare::apply(
        &mut changed,
        policy,
        ev.model,
        cat,
        &reached.reaches,
        &reached.scripts,
    );
    declarations.extend(declared.uses);
    let mut gaps = declared.gaps;
    let (uses, unreferenced_gaps) = crate::unreferenced::apply(
        &mut changed,
        policy,
        &ev.graph,
        cat,
        &reached.mappings,
        &reached.reaches,
        &ev.configure_reads,
        req.limits.max_file_bytes,
    );
    declarations.extend(uses);
    gaps.extend(unreferenced_gaps);
    declarations.sort();
    declarations.dedup();
    // The snapshots decide CMake edits only: with none, a base snapshot is
    // not read (one that would not match costs nothing).
    let cmake_changed = changed.iter().any(|c| {
        c.gap
            .as_ref()
            .is_some_and(|g| g.code == Code::ChangeBuildConfig)
    });
    let base_snapshot = match compare_base(req.base_snapshot.as_deref(), policy, cmake_changed) {
        Ok(base) => base,
        Err(g) => {
            gaps.push(g);
            None
        }
    };
    if base_snapshot.is_some() {
        declarations.extend(declare::compare_mode(&mut changed));
        declarations.sort();
    }
    gaps.extend(changed.iter().filter_map(|c| c.gap.clone()));
    Classified {
        changed,
        declarations,
        forced: declared.forced,
        notes: declared.notes,
        base_snapshot,
        gaps,
    }
}

/// What stages 7-8 return.
struct Decided {
    outcome: Outcome,
    verdicts: Vec<crate::decide::Verdict>,
    /// The changed paths (a record may decide unknown ones).
    changed: Vec<changes::Changed>,
    affected: (Vec<String>, Vec<String>, Vec<String>),
    snapshot: Option<serde_json::Value>,
    /// What the record's decision rests on.
    declarations: Vec<Use>,
}

/// Stages 7-8: the reverse walk over a trusted catalogue, what else
/// selects, and the decision.
fn walk_and_decide(
    req: &Request,
    policy: &Policy,
    (mut d, reader): (Decision, &Reader),
    cat: &Catalogue,
    ev: Evidence<'_>,
    reached: &Reached,
    classified: Classified,
) -> Decided {
    let Evidence {
        model,
        graph,
        deps,
        recorded,
        ..
    } = ev;
    let Classified {
        changed,
        mut forced,
        base_snapshot,
        ..
    } = classified;
    let (mappings, reaches) = (&reached.mappings, &reached.reaches);
    let mut impact = graph::impact(&graph, &deps, &changed, cat, mappings);
    d.extend(impact.gaps.iter().cloned());
    let (policy_forced, policy_gaps) = apply_policy(policy, cat, &changed);
    forced.extend(policy_forced);
    d.extend(policy_gaps);

    // The build-description compare (compare mode) or the snapshot to make.
    let described = describe_stage(
        req,
        reader,
        (model, &graph, &deps),
        cat,
        reached,
        base_snapshot.as_ref(),
    );
    d.extend(described.gaps);
    let mut affected = impact.affected.clone();
    affected.extend(described.targets);
    affected.sort_unstable();
    affected.dedup();

    // What tests name and load beyond the graph, changed build descriptions,
    // then test-to-test data flow.
    let mut sel = Selection::new(cat, &impact.selected, forced);
    sel.by_named_paths(reaches, &changed);
    d.extend(sel.by_change_channels(&reach::ChangeCx {
        graph: &graph,
        catalogue: cat,
        mappings,
        changed: &changed,
        affected: &affected,
        max_bytes: req.limits.max_file_bytes,
    }));
    sel.by_description(described.changed);
    let declarations = match &recorded {
        Some(r) => decide_by_record(r, &changed, &mut sel, &mut impact, cat),
        None => Vec::new(),
    };
    sel.by_data_flow(reaches);

    // The plan's summary, and each chain's word on how its test reaches its target.
    let affected_summary = impact.summary(model, &deps);
    reach::explain_chains(&mut impact.chains, reaches, cat, model);

    // 8. Only now commit.
    let all = Some(cat.tests.iter().map(|t| t.name.clone()).collect());
    let selected: Vec<String> = (impact.selected.iter())
        .map(|&i| cat.tests[i].name.clone())
        .collect();
    // A snapshot fingerprints every test whatever changes later: its gaps stay.
    if req.changed.is_empty() && req.writes != Writes::Snapshot {
        d.nothing_changed();
    }
    let outcome = d.finish(all, selected, impact.chains, sel.forced);
    let verdicts = if needs_verdicts(req) {
        verdicts(&outcome, cat, &graph, mappings, &deps, model)
    } else {
        Vec::new()
    };
    drop(graph);
    ingest::drop_in_background((deps, impact.units, impact.affected));
    Decided {
        outcome,
        verdicts,
        changed,
        affected: affected_summary,
        snapshot: described.snapshot,
        declarations,
    }
}

/// What the build-description stage returns: the snapshot made
/// (`diff2test snapshot`), or what differs from the base's.
#[derive(Default)]
struct Described {
    snapshot: Option<serde_json::Value>,
    /// (test, what of its description changed).
    changed: Vec<(String, String)>,
    /// The targets whose description changed.
    targets: Vec<usize>,
    gaps: Vec<Gap>,
}

/// Stage 7b: the build-description compare (compare mode), or the snapshot
/// to make.
fn describe_stage(
    req: &Request,
    reader: &Reader,
    (model, graph, deps): (&Codemodel, &Graph<'_>, &DepEvidence),
    cat: &Catalogue,
    reached: &Reached,
    base_snapshot: Option<&serde_json::Value>,
) -> Described {
    let mut out = Described::default();
    if req.writes != Writes::Snapshot && base_snapshot.is_none() {
        return out;
    }
    let commit = if req.writes == Writes::Snapshot {
        vcs::resolve_commit(std::path::Path::new(&req.source_dir), "HEAD").ok()
    } else {
        None
    };
    let (mappings, reaches) = (&reached.mappings, &reached.reaches);
    let computed = ingest::build_commands::fingerprints(reader, model).and_then(|commands| {
        snapshot::compute(
            model, graph, deps, cat, mappings, reaches, &commands, commit,
        )
    });
    match computed {
        Err(g) => out.gaps.push(g),
        Ok(head) => match base_snapshot {
            None => out.snapshot = Some(head),
            Some(base) => {
                let path = req.base_snapshot.as_deref().unwrap_or("");
                let compared = snapshot::compare(base, &head, path, req.base_commit.as_deref());
                out.gaps = compared.gaps;
                out.changed = compared.changed;
                // A target whose description changed is affected for what
                // may load it by bytes (a plugin a program dlopen()s by name).
                out.targets = (model.targets.iter().enumerate())
                    .filter(|(_, t)| compared.targets.contains(&t.name))
                    .map(|(i, _)| i)
                    .collect();
            }
        },
    }
    out
}

/// What a usable record decides: the tests it selects, and the covered tests
/// only static inferences selected although every input they touched is
/// unchanged (taken out, each said as an `assume RECORD` line). Returns the
/// declarations the decision rests on.
fn decide_by_record(
    r: &crate::recorded::Recorded,
    changed: &[changes::Changed],
    sel: &mut Selection<'_>,
    impact: &mut graph::Impact,
    cat: &Catalogue,
) -> Vec<Use> {
    let picked = sel.by_record(r, changed);
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
    let mut uses = Vec::new();
    if r.covered.iter().any(Option::is_some) {
        uses.push(r.use_of());
    }
    uses.extend(names.iter().map(|n| r.use_unaffected(n)));
    uses
}

/// What `--record` (when given) asks of the record: its audit is the
/// dependency evidence's (`ingest::record_audit`).
fn record_asked(req: &Request) -> Option<ingest::record_audit::Asked> {
    let path = req.record.as_ref()?;
    let top = paths::repo_root_above(&req.source_dir).unwrap_or_else(|| req.source_dir.clone());
    Some(ingest::record_audit::Asked {
        path: path.clone(),
        base_commit: req.base_commit.clone(),
        changed_abs: (req.changed.iter())
            .map(|c| paths::join_fold(&top, &c.to_string_lossy()))
            .collect(),
        max_bytes: req.limits.max_file_bytes.max(1 << 30),
    })
}

/// A run stopped by `--max-total-bytes` has read a part of the evidence that
/// depends on the timing of parallel reads. Every finding drawn from it is
/// dropped: what is left is the catalogue's own verdict and the limit, so
/// equal inputs still give equal reports.
fn stopped_at_total_limit(
    req: &Request,
    reader: &Reader,
    catalogue: Result<Catalogue, Gap>,
) -> Found {
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
    let raw: Vec<String> = (req.changed.iter())
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    Found {
        changed: changes::unclassified(
            &raw,
            "not classified: reading the evidence stopped at --max-total-bytes",
            Code::LimitExceeded,
        ),
        flow_groups: (catalogue.as_ref())
            .map(|c| reach::flow_groups(c, &[]))
            .unwrap_or_default(),
        ..Found::early(decision, catalogue.as_ref())
    }
}
