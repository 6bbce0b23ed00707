//! What a run was asked to do, once the command line is validated: shared
//! by the command line that builds it ([`crate::cli`]), the stages that
//! read it and the report that renders for it.

use std::ffi::OsString;

use crate::ingest::Limits;

/// Output formats of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One test name per line, sorted.
    Names,
    /// Anchored, escaped regexes for `ctest -R`, one per line; run ctest once per line.
    CtestRegex,
    /// A `diff2test.plan.v2` JSON plan.
    Json,
    /// A markdown summary for CI step summaries: the state on its first line, counts, the
    /// selected tests with one-line reasons, fallback reasons with their remedies.
    Markdown,
}

/// What the command line asked for: one subcommand, with its validated
/// request. (`--help` and `--version` are not commands: `cli::Parsed::Info`.)
#[derive(Debug)]
pub enum Command {
    /// Select the tests a change set affects (no subcommand).
    Select(Box<Request>),
    /// `diff2test snapshot`: write the build's snapshot instead of selecting.
    Snapshot(Box<Request>),
    /// `diff2test init`: write a starter policy instead of selecting.
    Init(Box<Request>),
    /// `diff2test record`: write a record of what each test read, from
    /// strace logs of the base's test run (no build evidence is analysed).
    Record(Box<RecordRequest>),
}

impl Command {
    /// The command of an analysis request: the one its [`Writes`] names.
    pub fn of(req: Request) -> Command {
        match req.writes {
            Writes::Selection => Command::Select(Box::new(req)),
            Writes::Snapshot => Command::Snapshot(Box::new(req)),
            Writes::Policy => Command::Init(Box::new(req)),
        }
    }
}

/// What an analysis of the build's evidence writes (the stages that differ
/// by command ask this of the request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// The selection ([`Command::Select`]).
    Selection,
    /// The build's snapshot ([`Command::Snapshot`]).
    Snapshot,
    /// A starter policy ([`Command::Init`]).
    Policy,
}

/// What `diff2test record` was asked.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    /// `--source-dir`, absolute and folded.
    pub source_dir: String,
    /// `--build-dir`, absolute and folded.
    pub build_dir: String,
    /// `--ctest-json`, absolute and folded.
    pub ctest_json: String,
    /// `--strace` logs, as given.
    pub straces: Vec<String>,
    /// `--output`, absolute.
    pub output: Option<String>,
}

/// A validated analysis request.
#[derive(Debug)]
pub struct Request {
    /// `--source-dir`, absolute and folded.
    pub source_dir: String,
    /// `--build-dir`, absolute and folded.
    pub build_dir: String,
    /// `--ctest-json`, absolute and folded.
    pub ctest_json: String,
    /// `--dep-list`, absolute and folded.
    pub dep_list: String,
    /// Changed paths as given.
    pub changed: Vec<OsString>,
    /// `--config`.
    pub config: Option<String>,
    /// `--format`.
    pub format: Format,
    /// Input limits.
    pub limits: Limits,
    /// `--receipt`, absolute.
    pub receipt: Option<String>,
    /// `--policy`, absolute.
    pub policy: Option<String>,
    /// `--explain` test names.
    pub explain: Vec<String>,
    /// `--explain-changes`.
    pub explain_changes: bool,
    /// With `--base`: which files the change source vouches for (a change to
    /// any other file would not have been reported).
    pub vouched: Option<crate::vcs::Vouched>,
    /// `--base`, as given.
    pub base: Option<String>,
    /// `--head`, as given.
    pub head: Option<String>,
    /// `--output`, absolute.
    pub output: Option<String>,
    /// `--shard K/N` as (K, N), 1-based.
    pub shard: Option<(usize, usize)>,
    /// `--fail-on-setup-error`.
    pub fail_on_setup_error: bool,
    /// What the run writes: a selection, a snapshot or a starter policy.
    pub writes: Writes,
    /// `--base-snapshot`, absolute.
    pub base_snapshot: Option<String>,
    /// The commit the change set starts from (`--base` resolved, or the merge base).
    pub base_commit: Option<String>,
    /// Changed paths (as given) that the VCS reports as modified in place, not
    /// added, deleted or retyped: these cannot change what a glob lists.
    pub edited: std::collections::HashSet<String>,
    /// `--record`, absolute: the record of the base build's test run.
    pub record: Option<String>,
}

/// A request diff2test cannot honour (a command line, a policy rule, an
/// output file): the run is a USAGE_ERROR with this one-line message and
/// nothing on stdout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl From<String> for UsageError {
    fn from(msg: String) -> Self {
        UsageError(msg)
    }
}

impl From<&str> for UsageError {
    fn from(msg: &str) -> Self {
        UsageError(msg.to_owned())
    }
}
