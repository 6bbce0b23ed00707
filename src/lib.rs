//! diff2test: decide which registered CTest tests a change may safely skip.
//!
//! Flow (contract §3): [`cli`] → [`ingest`] (CTest catalogue, File API,
//! dependency files; each audits itself) → [`changes`] → [`graph`] →
//! [`decide`] → [`report`]. Only `report` formats output and only [`run`]
//! commits it, after the final decision. A panic anywhere becomes
//! INTERNAL_ERROR with nothing on stdout.
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::dbg_macro)]
#![warn(missing_docs)]

pub mod analysis;
pub mod changes;
pub mod cli;
pub mod decide;
pub mod declare;
pub mod digest;
pub mod fasthash;
pub mod fingerprint;
pub mod graph;
pub mod ingest;
pub mod init;
pub mod paths;
pub mod pipeline;
pub mod policy;
pub mod reach;
pub mod reason;
pub mod record;
pub mod recorded;
pub mod report;
pub mod request;
pub mod select;
pub mod snapshot;
pub mod unreferenced;
pub mod vcs;
pub mod verdict;

pub use analysis::Analysis;
pub use pipeline::analyse_request;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use decide::Outcome;
use request::{Command, UsageError, Writes};

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

/// `diff2test record`: the record, written whole to `--output` or stdout.
fn write_record(req: &request::RecordRequest, out: &mut Vec<u8>, err: &mut Vec<u8>) -> u8 {
    let rec = match record::record(req) {
        Ok(r) => r,
        Err(msg) => return usage(msg, err),
    };
    let code = report::render_record(&rec, out, err);
    match to_output(req.output.as_deref(), out, err) {
        Ok(()) => code,
        Err(usage_code) => usage_code,
    }
}

/// With `--output PATH`: stdout's bytes go to PATH, written whole, and stdout
/// stays empty; a file that cannot be written is a usage error (its code).
fn to_output(path: Option<&str>, out: &mut Vec<u8>, err: &mut Vec<u8>) -> Result<(), u8> {
    let Some(path) = path else {
        return Ok(());
    };
    if let Err(msg) = write_whole(path, out) {
        out.clear();
        err.clear();
        return Err(usage(msg, err));
    }
    out.clear();
    Ok(())
}

/// Writes `bytes` to `path` whole (a temporary file renamed into place) or not at all.
fn write_whole(path: &str, bytes: &[u8]) -> Result<(), UsageError> {
    let tmp = format!("{path}.diff2test-tmp");
    let written = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        UsageError(format!("--output {path}: {e}"))
    })
}

/// Renders the usage error `why` (a typed error's one line); its exit code.
fn usage(why: impl std::fmt::Display, err: &mut Vec<u8>) -> u8 {
    let o = Outcome::UsageError(why.to_string());
    report::render_state_only(&o, err);
    o.exit_code()
}

fn analyse(args: Vec<OsString>, stdin: &mut dyn Read, out: &mut Vec<u8>, err: &mut Vec<u8>) -> u8 {
    // 1. CLI and changed-path source.
    let req = match cli::parse(args, stdin) {
        Ok(cli::Parsed::Run(Command::Record(r))) => return write_record(&r, out, err),
        Ok(cli::Parsed::Run(Command::Select(r) | Command::Snapshot(r) | Command::Init(r))) => r,
        Ok(cli::Parsed::Info(text)) => {
            out.extend_from_slice(text.as_bytes());
            return 0;
        }
        Err(e) => return usage(e, err),
    };
    let policy = match policy::load(req.policy.as_deref(), &req.source_dir) {
        Ok(p) => p,
        Err(e) => return usage(e, err),
    };
    if req.base_snapshot.is_some() && !policy.compare_mode(true) {
        return usage(
            "--base-snapshot does nothing: the policy sets build_config = \"full\", which keeps compare mode off; drop one of them",
            err,
        );
    }
    #[cfg(debug_assertions)]
    if std::env::var_os("DIFF2TEST_TEST_HOOK_PANIC").is_some() {
        // Test-only hook (debug builds only): proves a panic ends as INTERNAL_ERROR.
        out.extend_from_slice(b"partial-output-that-must-never-appear\n");
        panic!("deliberate panic from DIFF2TEST_TEST_HOOK_PANIC");
    }
    let analysis = analyse_request(&req, policy);
    if let Err(e) = report::render(&analysis, &req, out, err) {
        out.clear();
        err.clear();
        return usage(e, err);
    }
    if let Err(code) = to_output(req.output.as_deref(), out, err) {
        return code;
    }
    // `diff2test init` succeeds whenever it wrote its policy: what stops a
    // subset today is what the policy helps with.
    let code = if req.writes == Writes::Policy && analysis.init.is_some() {
        0
    } else {
        analysis.outcome.exit_code()
    };
    if req.fail_on_setup_error && setup_error(&analysis.outcome) {
        // The state a CI log reader looks for comes first; the fallback's own
        // state, reasons and remedies follow unchanged.
        let mut marked = b"SETUP_ERROR\n".to_vec();
        marked.append(err);
        *err = marked;
        let _ = writeln!(
            err,
            "exit {}: --fail-on-setup-error: the fallback's root cause is the setup, not the change",
            decide::exit::SETUP_ERROR
        );
        return decide::exit::SETUP_ERROR;
    }
    code
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
