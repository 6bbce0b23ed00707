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
pub mod graph;
pub mod ingest;
pub mod paths;
pub mod reason;
pub mod report;

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use decide::{Decision, Outcome};
use ingest::Reader;

/// Runs one invocation: parses `args`, analyses, writes stdout/stderr, returns the exit code.
pub fn run(args: Vec<OsString>, stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = match catch_unwind(AssertUnwindSafe(|| analyse(args, stdin, &mut out, &mut err))) {
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
            let _ = report::render(&o, report::Format::Names, &mut out, &mut err);
            out.clear();
            o.exit_code()
        }
    };
    if stdout.write_all(&out).and_then(|_| stdout.flush()).is_err() {
        // A cut-off list would be a silent subset: report it as an internal error.
        let _ = stderr.write_all(&err);
        let _ = writeln!(stderr, "INTERNAL_ERROR\nreason INTERNAL_ERROR: cannot write the selection to stdout");
        return decide::exit::INTERNAL_ERROR;
    }
    let _ = stderr.write_all(&err).and_then(|_| stderr.flush());
    code
}

fn analyse(args: Vec<OsString>, stdin: &mut dyn Read, out: &mut Vec<u8>, err: &mut Vec<u8>) -> u8 {
    // 1. CLI and changed-path source.
    let req = match cli::parse(args, stdin) {
        Ok(cli::Parsed::Run(r)) => r,
        Ok(cli::Parsed::Info(text)) => {
            out.extend_from_slice(text.as_bytes());
            return 0;
        }
        Err(msg) => {
            let o = Outcome::UsageError(msg);
            let _ = report::render(&o, report::Format::Names, out, err);
            return o.exit_code();
        }
    };
    #[cfg(debug_assertions)]
    if std::env::var_os("DIFF2TEST_TEST_HOOK_PANIC").is_some() {
        // Test-only hook (debug builds only): proves a panic ends as INTERNAL_ERROR.
        out.extend_from_slice(b"partial-output-that-must-never-appear\n");
        panic!("deliberate panic from DIFF2TEST_TEST_HOOK_PANIC");
    }
    let outcome = decide_outcome(&req);
    match report::render(&outcome, req.format, out, err) {
        Ok(()) => outcome.exit_code(),
        Err(msg) => {
            out.clear();
            err.clear();
            let o = Outcome::UsageError(format!("--format {:?} cannot express this selection: {msg}; use --format names", req.format));
            let _ = report::render(&o, report::Format::Names, out, err);
            o.exit_code()
        }
    }
}

/// Steps 2-10 of the decision order. Pure with respect to output.
pub fn decide_outcome(req: &cli::Request) -> Outcome {
    let reader = Reader::new(req.limits.clone());
    let mut decision = Decision::default();

    // 2. The catalogue, early: it decides whether any list can be emitted.
    let catalogue = match ingest::ctest::load(&reader, &req.ctest_json, &req.build_dir) {
        Ok(c) => Some(c),
        Err(g) => {
            decision.require_full(g);
            None
        }
    };
    let all: Option<Vec<String>> = catalogue.as_ref().map(|c| c.tests.iter().map(|t| t.name.clone()).collect());

    // 3-4. Roots, versions, codemodel.
    let fa = ingest::file_api::load(
        &reader,
        &ingest::file_api::Request { source_dir: &req.source_dir, build_dir: &req.build_dir, config: req.config.as_deref() },
    );
    decision.extend(fa.gaps);
    let Some(model) = fa.model else {
        return decision.finish(all, Vec::new(), Vec::new());
    };

    // 6-7. Dependency files: mapping, completeness, freshness.
    let (deps, dep_gaps) = ingest::depfile::load(&reader, &req.dep_list, &model);
    decision.extend(dep_gaps);

    // 5. Map every test (needs the graph, which needs object-input owners).
    let graph = graph::Graph::new(&model, &deps);
    let empty = ingest::ctest::Catalogue::default();
    let cat = catalogue.as_ref().unwrap_or(&empty);
    let mappings = graph.map_tests(cat);
    let tainted = graph.tainted();
    for (test, m) in cat.tests.iter().zip(&mappings) {
        match m {
            graph::TestMapping::Unmapped(g) => decision.require_full(g.clone()),
            graph::TestMapping::Mapped { direct } => {
                if let Some(origin) = direct.iter().find_map(|d| tainted.get(d)) {
                    let why = &graph.opaque[origin];
                    decision.require_full(reason::Gap::new(why.code, format!("test {:?}: {}", test.name, why.detail)));
                }
            }
        }
    }

    // 8. Changed paths.
    let main_sources: HashSet<ingest::depfile::FileId> =
        deps.tus.iter().filter_map(|tu| deps.by_path.get(&tu.source).copied()).collect();
    let roots = changes::Roots { user_source: &req.source_dir, source: &model.source_root, build: &model.build_root };
    let changed = changes::classify(
        &req.changed,
        &roots,
        &deps,
        &main_sources,
        model.cmake_inputs.as_deref(),
        req.limits.max_path_len,
    );
    decision.extend(changed.iter().filter_map(|c| c.gap.clone()));

    // 9. Reverse graph walk (only meaningful against a trusted catalogue).
    if catalogue.is_none() {
        return decision.finish(all, Vec::new(), Vec::new());
    }
    let impact = graph::impact(&graph, &deps, &changed, cat, &mappings);
    decision.extend(impact.gaps);
    let selected: Vec<String> = impact.selected.iter().map(|&i| cat.tests[i].name.clone()).collect();

    // 10. Only now commit.
    decision.finish(all, selected, impact.chains)
}
