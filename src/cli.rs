//! Command line: clap's raw [`Cli`], then a validated [`Request`].
//!
//! Syntax errors and meaningless requests are USAGE_ERROR (exit 2). A missing
//! evidence file is *not* a usage error: it is a gap decided by the contract's
//! matrix (e.g. an absent catalogue is FULL_SUITE_REQUIRED).

use std::ffi::OsString;
use std::io::Read;

use camino::Utf8PathBuf;
use clap::Parser;

use crate::ingest::Limits;
use crate::paths;
pub use crate::request::UsageError;
use crate::request::{Command, Format, RecordRequest, Request, Writes};

const AFTER_HELP: &str = "\
Subcommands (each with its own --help):
  diff2test init         write a commented starter diff2test.toml from the build's evidence
  diff2test snapshot     write the build's snapshot, for a later --base-snapshot
  diff2test record       write a record of what each test read, from strace logs of ctest, for a later --record
  diff2test completions  print shell completions: bash, zsh, fish, elvish or powershell
  diff2test man          print the man page (roff): diff2test man > diff2test.1

Exit codes: 0 SUBSET_SELECTED, 2 USAGE_ERROR, 3 FULL_SUITE_SELECTED, 4 FULL_SUITE_REQUIRED,
5 SETUP_ERROR (only with --fail-on-setup-error: the fallback's root cause is the setup), 70 INTERNAL_ERROR.
stdout carries only test names (or ctest regexes); stderr starts with the outcome state, then evidence chains or reasons.

Example (configure with the File API queries, build, list the tests, select):
  mkdir -p build/.cmake/api/v1/query
  touch build/.cmake/api/v1/query/codemodel-v2 build/.cmake/api/v1/query/cmakeFiles-v1
  cmake -S . -B build && cmake --build build
  (cd build && ctest --show-only=json-v1 > ctest.json)   # read as BUILD/ctest.json by default
  diff2test --source-dir . --build-dir build --base origin/main --head HEAD
  diff2test --source-dir . --build-dir build --changed src/core.hpp --format json
The dependency files are found in BUILD (every CMakeFiles/<target>.dir/**/*.d, and
BUILD/.ninja_deps for Ninja generators); --dep-list FILE lists them instead (absolute paths,
or relative to BUILD). Relative changed paths are relative to the git repository's top when
SRC lies in one (as `git diff --name-only` prints them), else to SRC.";

/// `--version`: the tool's version, the document schemas it writes and the
/// CMake versions whose File API replies it reads.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (plan diff2test.plan.v2, receipt diff2test.receipt.v2, snapshot diff2test.snapshot.v1; CMake 3.20 to 4.x)"
);

/// diff2test: which CTest tests must run for a change, from static CMake evidence.
#[derive(Parser, Debug)]
#[command(name = "diff2test", version = VERSION, about, after_help = AFTER_HELP)]
#[command(group(clap::ArgGroup::new("change_source").required(true).args(["changed", "changed_from", "base"])))]
pub struct Cli {
    /// Top source directory the build was configured from (CMAKE_SOURCE_DIR).
    #[arg(long, value_name = "SRC", required = true)]
    pub source_dir: Option<Utf8PathBuf>,
    /// Top build directory (CMAKE_BINARY_DIR); its File API reply is read from BUILD/.cmake/api/v1/reply.
    #[arg(long, value_name = "BUILD", required = true)]
    pub build_dir: Option<Utf8PathBuf>,
    /// Output of `ctest --show-only=json-v1`, run in BUILD (default: BUILD/ctest.json).
    #[arg(long, value_name = "FILE")]
    pub ctest_json: Option<Utf8PathBuf>,
    /// File listing every compiler `.d` file of the build, one per line (relative lines are
    /// relative to BUILD). Default: found in BUILD, as the build left them: every
    /// `CMakeFiles/<target>.dir/**/*.d`, and BUILD/.ninja_deps (Ninja generators).
    #[arg(long, value_name = "FILE")]
    pub dep_list: Option<Utf8PathBuf>,
    /// A changed path: absolute, or relative to the git repository's top when SRC lies in one
    /// (as `git diff --name-only` prints them), else to SRC. Repeat for several paths. An empty
    /// change set (an empty --changed-from list, --base and --head with the same tree) selects
    /// no test (exit 0).
    #[arg(long, value_name = "PATH")]
    pub changed: Vec<OsString>,
    /// Read changed paths from FILE (or `-` for stdin), one per line.
    #[arg(long, value_name = "FILE|-")]
    pub changed_from: Option<OsString>,
    /// Base revision: changed paths are read in-process from the git repository containing SRC
    /// (no git executable is run). With --head, compares the two commits' trees; without
    /// --head (not allowed in CI mode), compares REV with the working tree including untracked files.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Head revision for --base.
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,
    /// With --base (the default): compare from the merge base of --base and --head (or HEAD),
    /// computed in-process, as a pull request does (`git diff BASE...HEAD`).
    #[arg(long, conflicts_with = "no_merge_base")]
    pub merge_base: bool,
    /// With --base: compare --base's tree itself with --head's (or the working tree's), not
    /// their merge base's: a base branch that moved on shows its own new files as deleted.
    #[arg(long)]
    pub no_merge_base: bool,
    /// CI mode (also on when the environment has CI=true): the working tree is never read as a
    /// change source; only --base with --head, or an explicit list, is accepted.
    #[arg(long, conflicts_with = "no_ci")]
    pub ci: bool,
    /// Turn CI mode off even when CI=true is set.
    #[arg(long)]
    pub no_ci: bool,
    /// With --changed-from: paths are NUL-separated (as `git diff -z --name-only` writes them).
    #[arg(short = 'z', long = "null")]
    pub null: bool,
    /// Configuration to use when the codemodel has several (and the one ctest listed with -C).
    #[arg(long, value_name = "NAME")]
    pub config: Option<String>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value = "names")]
    pub format: Format,
    /// Write what stdout would carry to FILE instead (written whole, or not at all).
    #[arg(long, value_name = "FILE")]
    pub output: Option<Utf8PathBuf>,
    /// Print only shard K of N (1 <= K <= N) of the selection: a deterministic split by test
    /// name (tests that hand each other data stay in one shard); the N shards are disjoint and
    /// together are the selection.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Exit 5 (SETUP_ERROR) instead of 3 or 4 when the fallback's root cause is the setup (a
    /// missing or foreign input, an unsupported generator, an empty dependency list, a wrong
    /// --config), so CI fails fast; stdout is unchanged, stderr starts with a SETUP_ERROR line.
    #[arg(long)]
    pub fail_on_setup_error: bool,
    /// The snapshot (`diff2test snapshot`) of the base commit's build; turns compare mode on
    /// (unless the policy says build_config = "full"). When a CMake input changed, tests whose
    /// build-description fingerprint differs, and new tests, are selected; a changed CMake
    /// script then costs only those. Not read when no CMake input changed.
    #[arg(long, value_name = "FILE")]
    pub base_snapshot: Option<Utf8PathBuf>,
    /// The record of the base build's test run (`diff2test record`): a test whose recorded
    /// inputs are all unchanged is skipped, an unmapped test is decided by what it read, and a
    /// changed path no test read is skipped when every test is recorded. A record of another
    /// build or base is said and not used.
    #[arg(long, value_name = "FILE")]
    pub record: Option<Utf8PathBuf>,
    /// Also write a value receipt (diff2test.receipt.v2 JSON) to FILE.
    #[arg(long, value_name = "FILE")]
    pub receipt: Option<Utf8PathBuf>,
    /// Selection policy file (default: SRC/diff2test.toml when it exists).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<Utf8PathBuf>,
    /// Print on stdout, instead of the selection, why TEST is selected or safe to skip. Repeatable.
    #[arg(long, value_name = "TEST")]
    pub explain: Vec<String>,
    /// Print the classification of every changed path on stderr (path, class, evidence).
    #[arg(long)]
    pub explain_changes: bool,
    /// Limit: largest evidence file read, in bytes.
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Limit: total evidence bytes read.
    #[arg(long, value_name = "BYTES")]
    pub max_total_bytes: Option<u64>,
    /// Limit: registered tests in the catalogue.
    #[arg(long, value_name = "N")]
    pub max_tests: Option<usize>,
    /// Limit: targets in the codemodel configuration.
    #[arg(long, value_name = "N")]
    pub max_targets: Option<usize>,
    /// Limit: entries in the dependency-file list.
    #[arg(long, value_name = "N")]
    pub max_depfiles: Option<usize>,
    /// Limit: length of any path, in bytes.
    #[arg(long, value_name = "BYTES")]
    pub max_path_len: Option<usize>,
}

/// What parsing produced.
pub enum Parsed {
    /// Run a command.
    Run(Command),
    /// Help or version text: print to stdout, exit 0.
    Info(String),
}

fn dir(flag: &str, p: Option<Utf8PathBuf>) -> Result<String, UsageError> {
    let p = p.ok_or_else(|| format!("{flag} is required"))?;
    let abs = paths::absolute_dir(&p).ok_or_else(|| {
        UsageError(format!(
            "{flag} {p}: cannot determine the working directory"
        ))
    })?;
    if !std::path::Path::new(&abs).is_dir() {
        return Err(UsageError(format!("{flag} {p} is not a directory")));
    }
    Ok(abs)
}

/// `--ctest-json`, by default BUILD/ctest.json.
fn ctest_json(p: Option<Utf8PathBuf>, build_dir: &str) -> Result<String, UsageError> {
    match p {
        Some(p) => file("--ctest-json", Some(p)),
        None => Ok(format!("{build_dir}/ctest.json")),
    }
}

/// `--dep-list`; without it, the empty string: the dependency files are
/// found in the build tree (see [`crate::request::Request::dep_list`]).
fn dep_list(p: Option<Utf8PathBuf>) -> Result<String, UsageError> {
    match p {
        Some(p) => file("--dep-list", Some(p)),
        None => Ok(String::new()),
    }
}

fn file(flag: &str, p: Option<Utf8PathBuf>) -> Result<String, UsageError> {
    let p = p.ok_or_else(|| format!("{flag} is required"))?;
    paths::absolute_dir(&p).ok_or_else(|| {
        UsageError(format!(
            "{flag} {p}: cannot determine the working directory"
        ))
    })
}

fn split_changed(bytes: Vec<u8>, nul: bool) -> Vec<OsString> {
    use std::os::unix::ffi::OsStringExt;
    let sep = if nul { 0u8 } else { b'\n' };
    bytes
        .split(|b| *b == sep)
        .map(|l| {
            if !nul && l.ends_with(b"\r") {
                &l[..l.len() - 1]
            } else {
                l
            }
        })
        .filter(|l| !l.is_empty())
        .map(|l| OsString::from_vec(l.to_vec()))
        .collect()
}

/// The trees and the catalogue: what `snapshot`, `init` and `record` all read.
#[derive(clap::Args, Debug)]
struct RootArgs {
    /// Top source directory the build was configured from.
    #[arg(long, value_name = "SRC", required = true)]
    source_dir: Option<Utf8PathBuf>,
    /// Top build directory (where ctest runs).
    #[arg(long, value_name = "BUILD", required = true)]
    build_dir: Option<Utf8PathBuf>,
    /// Output of `ctest --show-only=json-v1`, run in BUILD (default: BUILD/ctest.json).
    #[arg(long, value_name = "FILE")]
    ctest_json: Option<Utf8PathBuf>,
}

/// The evidence flags `diff2test snapshot` and `diff2test init` share.
#[derive(clap::Args, Debug)]
struct EvidenceArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// The dependency list (as for a selection run; default: found in BUILD).
    #[arg(long, value_name = "FILE")]
    dep_list: Option<Utf8PathBuf>,
    /// Configuration (multi-config generators).
    #[arg(long, value_name = "NAME")]
    config: Option<String>,
    /// Write to FILE instead of stdout (written whole, or not at all).
    #[arg(long, value_name = "FILE")]
    output: Option<Utf8PathBuf>,
}

/// `diff2test snapshot`: the build's per-test build-description fingerprints.
#[derive(Parser, Debug)]
#[command(
    name = "diff2test snapshot",
    version = VERSION,
    about = "Write the build's diff2test.snapshot.v1 (per-test build-description fingerprints) for a later --base-snapshot",
    after_help = "Exit codes: 0 written, 2 USAGE_ERROR, 3 the evidence is incomplete (reasons on stderr, nothing written)."
)]
struct SnapshotCli {
    #[command(flatten)]
    evidence: EvidenceArgs,
    /// Selection policy file (default: SRC/diff2test.toml when it exists).
    #[arg(long, value_name = "FILE")]
    policy: Option<Utf8PathBuf>,
}

/// `diff2test init`: a starter policy from the build's evidence.
#[derive(Parser, Debug)]
#[command(
    name = "diff2test init",
    version = VERSION,
    about = "Write a commented starter diff2test.toml derived from the build's evidence and the source tree, each suggestion with the evidence behind it, for you to review",
    after_help = "Exit codes: 0 written, 2 USAGE_ERROR (an --output file that exists without --force)."
)]
struct InitCli {
    #[command(flatten)]
    evidence: EvidenceArgs,
    /// Overwrite an existing --output file.
    #[arg(long)]
    force: bool,
}

/// `diff2test record`: a record of the base's test run from strace logs.
#[derive(Parser, Debug)]
#[command(
    name = "diff2test record",
    version = VERSION,
    about = "Write a diff2test.record.v1 of what each test read, from strace logs of the base build's ctest run, for a later --record",
    after_help = "Record the run with:\n  strace -f -y -s 4096 -e trace=%file,%process,getdents64,fchdir,io_uring_setup,open_by_handle_at,bind,connect -o ctest.strace ctest -j8\n(add --seccomp-bpf where the kernel has it), then:\n  diff2test record --source-dir SRC --build-dir BUILD --strace ctest.strace --output record.json\n\nExit codes: 0 written, every test recorded; 2 USAGE_ERROR (nothing written); 3 written, some tests not recorded (reasons on stderr: they are decided without the record)."
)]
struct RecordCli {
    #[command(flatten)]
    roots: RootArgs,
    /// An strace log of the ctest run (`strace -f -y … -o FILE ctest …`); repeat for several runs.
    #[arg(long = "strace", value_name = "FILE", required = true)]
    straces: Vec<Utf8PathBuf>,
    /// Write the record to FILE instead of stdout (written whole, or not at all).
    #[arg(long, value_name = "FILE")]
    output: Option<Utf8PathBuf>,
}

fn parse_record(args: Vec<OsString>) -> Result<Parsed, UsageError> {
    let r = match sub_parse::<RecordCli>(args)? {
        Ok(r) => r,
        Err(info) => return Ok(info),
    };
    let source_dir = dir("--source-dir", r.roots.source_dir)?;
    let build_dir = dir("--build-dir", r.roots.build_dir)?;
    let straces = (r.straces.into_iter())
        .map(|p| file("--strace", Some(p)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parsed::Run(Command::Record(Box::new(RecordRequest {
        ctest_json: ctest_json(r.roots.ctest_json, &build_dir)?,
        source_dir,
        build_dir,
        straces,
        output: r
            .output
            .as_ref()
            .map(|p| file("--output", Some(p.clone())))
            .transpose()?,
    }))))
}

/// A subcommand's arguments, or its help text.
fn sub_parse<T: Parser>(mut args: Vec<OsString>) -> Result<Result<T, Parsed>, UsageError> {
    args.remove(1);
    match T::try_parse_from(args) {
        Ok(s) => Ok(Ok(s)),
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    Ok(Err(Parsed::Info(e.to_string())))
                }
                _ => Err(UsageError(clap_message(&e.to_string()))),
            }
        }
    }
}

fn parse_init(args: Vec<OsString>) -> Result<Parsed, UsageError> {
    let s = match sub_parse::<InitCli>(args)? {
        Ok(s) => s,
        Err(info) => return Ok(info),
    };
    if let Some(o) = &s.evidence.output {
        if o.exists() && !s.force {
            return Err(UsageError(format!(
                "--output {o}: the file exists; pass --force to overwrite it"
            )));
        }
    }
    request_of(s.evidence, None, true)
}

fn parse_snapshot(args: Vec<OsString>) -> Result<Parsed, UsageError> {
    let s = match sub_parse::<SnapshotCli>(args)? {
        Ok(s) => s,
        Err(info) => return Ok(info),
    };
    request_of(s.evidence, s.policy, false)
}

/// The request of `diff2test snapshot` (or, `init`, of `diff2test init`).
fn request_of(
    s: EvidenceArgs,
    policy: Option<Utf8PathBuf>,
    init: bool,
) -> Result<Parsed, UsageError> {
    let source_dir = dir("--source-dir", s.roots.source_dir)?;
    let build_dir = dir("--build-dir", s.roots.build_dir)?;
    Ok(Parsed::Run(Command::of(Request {
        ctest_json: ctest_json(s.roots.ctest_json, &build_dir)?,
        dep_list: dep_list(s.dep_list)?,
        build_dir,
        changed: Vec::new(),
        config: s.config,
        format: Format::Names,
        limits: Limits::default(),
        receipt: None,
        policy: policy.map(|p| file("--policy", Some(p))).transpose()?,
        explain: Vec::new(),
        explain_changes: false,
        vouched: None,
        base: None,
        head: None,
        output: s
            .output
            .as_ref()
            .map(|p| file("--output", Some(p.clone())))
            .transpose()?,
        shard: None,
        fail_on_setup_error: false,
        writes: if init {
            Writes::Policy
        } else {
            Writes::Snapshot
        },
        base_snapshot: None,
        base_commit: None,
        edited: Default::default(),
        record: None,
        source_dir,
    })))
}

/// A relative path of an explicit list that exists nowhere it is taken
/// from (the repository's top when the source dir lies below it, else the
/// source dir) but exists relative to the working directory, a
/// subdirectory of that: the user ran from a subdirectory. Taken as it is, it would be a deleted file (the
/// whole suite, run for a typo): a usage error naming what was meant.
fn relative_to_elsewhere(changed: &[OsString], source_dir: &str) -> Result<(), UsageError> {
    let base = paths::repo_root_above(source_dir).unwrap_or_else(|| source_dir.to_owned());
    let Some(cwd) = paths::current_dir() else {
        return Ok(());
    };
    // Only from a subdirectory of where paths are taken from.
    if cwd == base || !paths::is_within(&cwd, &base) {
        return Ok(());
    }
    for p in changed.iter().filter_map(|p| p.to_str()) {
        if p.starts_with('/') || p.is_empty() {
            continue;
        }
        let exists = |root: &str| std::fs::symlink_metadata(paths::join_fold(root, p)).is_ok();
        if exists(&base) || !exists(&cwd) {
            continue;
        }
        let meant = paths::join_fold(&cwd, p);
        let from_base = paths::strip_root(&meant, &base)
            .map(|r| format!(" (did you mean {r}?)"))
            .unwrap_or_default();
        return Err(UsageError(format!(
            "--changed {p}: no such path relative to {base}, where relative paths are taken from, but {meant} exists{from_base}: pass paths relative to {base}, or absolute"
        )));
    }
    Ok(())
}

fn parse_shard(s: &str) -> Result<(usize, usize), UsageError> {
    let bad = || format!("--shard {s:?}: expected K/N with 1 <= K <= N (e.g. 2/4)");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if k == 0 || n == 0 || k > n {
        return Err(UsageError(bad()));
    }
    Ok((k, n))
}

/// clap's error as one line: its message and the lines that complete it (the
/// missing arguments, a tip), without the usage block.
fn clap_message(text: &str) -> String {
    let mut parts = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        if !l.is_empty() {
            parts.push(l.trim_start_matches("error: ").to_owned());
        }
    }
    let msg = parts.join(" ");
    if msg.is_empty() {
        "invalid arguments (see diff2test --help)".into()
    } else {
        format!("{msg} (see diff2test --help)")
    }
}

/// The whole command line as one clap command, subcommands included: what
/// completions and the man page are generated from.
fn full_command() -> clap::Command {
    use clap::CommandFactory;
    let shells = ["bash", "zsh", "fish", "elvish", "powershell"];
    Cli::command()
        .subcommand_negates_reqs(true)
        .subcommand(InitCli::command().name("init"))
        .subcommand(SnapshotCli::command().name("snapshot"))
        .subcommand(RecordCli::command().name("record"))
        .subcommand(
            clap::Command::new("completions")
                .about("Print shell completions")
                .arg(clap::Arg::new("shell").required(true).value_parser(shells)),
        )
        .subcommand(clap::Command::new("man").about("Print the man page (roff)"))
}

/// `diff2test completions SHELL` and `diff2test man`.
fn parse_generated(args: &[OsString]) -> Result<Parsed, UsageError> {
    let mut buf = Vec::new();
    let mut cmd = full_command();
    if args[1] == "man" {
        if args.len() > 2 {
            return Err(UsageError("diff2test man takes no arguments".into()));
        }
        clap_mangen::Man::new(cmd)
            .render(&mut buf)
            .map_err(|e| format!("cannot render the man page: {e}"))?;
    } else {
        use clap_complete::Shell;
        let shell =
            match args.get(2).and_then(|s| s.to_str()) {
                Some("bash") if args.len() == 3 => Shell::Bash,
                Some("zsh") if args.len() == 3 => Shell::Zsh,
                Some("fish") if args.len() == 3 => Shell::Fish,
                Some("elvish") if args.len() == 3 => Shell::Elvish,
                Some("powershell") if args.len() == 3 => Shell::PowerShell,
                _ => return Err(
                    "diff2test completions takes one shell: bash, zsh, fish, elvish or powershell"
                        .into(),
                ),
            };
        clap_complete::generate(shell, &mut cmd, "diff2test", &mut buf);
    }
    String::from_utf8(buf)
        .map(Parsed::Info)
        .map_err(|_| "generated text is not UTF-8".into())
}

/// Parses arguments. Errors are one-line usage messages.
pub fn parse(args: Vec<OsString>, stdin: &mut dyn Read) -> Result<Parsed, UsageError> {
    if let Some(parsed) = subcommand(&args) {
        return parsed;
    }
    let mut cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    Ok(Parsed::Info(e.to_string()))
                }
                _ => Err(UsageError(clap_message(&e.to_string()))),
            };
        }
    };
    let source_dir = dir("--source-dir", cli.source_dir.take())?;
    let build_dir = dir("--build-dir", cli.build_dir.take())?;
    let ctest_json = ctest_json(cli.ctest_json.take(), &build_dir)?;
    let dep_list = dep_list(cli.dep_list.take())?;
    check_flags(&cli)?;
    let ci = cli.ci
        || (!cli.no_ci
            && std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1"));
    if cli.base.is_some() && (!cli.changed.is_empty() || cli.changed_from.is_some()) {
        return Err(
            "--base/--head cannot be combined with an explicit list (--changed/--changed-from)"
                .into(),
        );
    }
    let mut changed = cli.changed.clone();
    let (vouched, base_commit, edited) = match &cli.base {
        Some(base) => {
            let from_vcs = vcs_changes(&cli, base, ci, (&source_dir, &build_dir))?;
            changed.extend(from_vcs.changed);
            (
                Some(from_vcs.vouched),
                from_vcs.base_commit,
                from_vcs.edited,
            )
        }
        None => (None, None, Default::default()),
    };
    if let Some(from) = cli.changed_from {
        let bytes = if from == "-" {
            let mut b = Vec::new();
            stdin
                .read_to_end(&mut b)
                .map_err(|e| format!("--changed-from -: cannot read stdin: {e}"))?;
            b
        } else {
            std::fs::read(&from)
                .map_err(|e| format!("--changed-from {}: {e}", from.to_string_lossy()))?
        };
        if !cli.null && bytes.contains(&0) {
            return Err(UsageError(format!(
                "--changed-from {}: the list holds NUL bytes, so it is NUL-separated (as `git diff -z --name-only` writes it): pass -z",
                from.to_string_lossy()
            )));
        }
        changed.extend(split_changed(bytes, cli.null));
    }
    if cli.base.is_none() {
        relative_to_elsewhere(&changed, &source_dir)?;
    }
    let output = cli
        .output
        .as_ref()
        .map(|p| file("--output", Some(p.clone())))
        .transpose()?;
    let shard = cli.shard.as_deref().map(parse_shard).transpose()?;
    let d = Limits::default();
    let limits = Limits {
        max_file_bytes: cli.max_file_bytes.unwrap_or(d.max_file_bytes),
        max_total_bytes: cli.max_total_bytes.unwrap_or(d.max_total_bytes),
        max_tests: cli.max_tests.unwrap_or(d.max_tests),
        max_targets: cli.max_targets.unwrap_or(d.max_targets),
        max_depfiles: cli.max_depfiles.unwrap_or(d.max_depfiles),
        max_path_len: cli.max_path_len.unwrap_or(d.max_path_len),
    };
    let receipt = match cli.receipt {
        Some(p) => Some(file("--receipt", Some(p))?),
        None => None,
    };
    let policy = match cli.policy {
        Some(p) => Some(file("--policy", Some(p))?),
        None => None,
    };
    Ok(Parsed::Run(Command::of(Request {
        receipt,
        policy,
        explain: cli.explain,
        explain_changes: cli.explain_changes,
        source_dir,
        build_dir,
        ctest_json,
        dep_list,
        changed,
        config: cli.config,
        format: cli.format,
        limits,
        vouched,
        base: cli.base.clone(),
        head: cli.head.clone(),
        output,
        shard,
        fail_on_setup_error: cli.fail_on_setup_error,
        writes: Writes::Selection,
        base_commit,
        edited,
        base_snapshot: cli
            .base_snapshot
            .as_ref()
            .map(|p| file("--base-snapshot", Some(p.clone())))
            .transpose()?,
        record: cli
            .record
            .as_ref()
            .map(|p| file("--record", Some(p.clone())))
            .transpose()?,
    })))
}

/// A subcommand's own parse (`snapshot`, `init`, `record`, `completions`,
/// `man`), a usage error for a mistyped one, or `None`: a selection run.
fn subcommand(args: &[OsString]) -> Option<Result<Parsed, UsageError>> {
    if args
        .get(1)
        .is_some_and(|a| a == "completions" || a == "man")
    {
        return Some(parse_generated(args));
    }
    if args.get(1).is_some_and(|a| a == "snapshot") {
        return Some(parse_snapshot(args.to_vec()));
    }
    if args.get(1).is_some_and(|a| a == "init") {
        return Some(parse_init(args.to_vec()));
    }
    if args.get(1).is_some_and(|a| a == "record") {
        return Some(parse_record(args.to_vec()));
    }
    // A mistyped subcommand (`diff2test inti`): a selection run takes no
    // positional argument, so a bare word near a subcommand's name is one.
    if let Some(word) = args
        .get(1)
        .and_then(|a| a.to_str())
        .filter(|a| !a.starts_with('-'))
    {
        let subcommands = ["init", "snapshot", "record", "completions", "man"];
        // A swap of two letters is two edits: allow two for these short names.
        let near = |c: &&&str| paths::edit_distance(word, c) <= 2 && word.len() >= 3;
        if let Some(meant) = paths::did_you_mean(word, subcommands)
            .or_else(|| subcommands.iter().find(near).copied())
        {
            return Some(Err(UsageError(format!(
                "unknown subcommand {word:?} (did you mean {meant:?}?); see diff2test --help"
            ))));
        }
    }
    None
}

/// A flag that would do nothing here is a mistake in the caller's script.
fn check_flags(cli: &Cli) -> Result<(), UsageError> {
    let without = |flag: &str, needs: &str, what: &str| {
        Err(UsageError(format!(
            "{flag} does nothing without {needs}: {what}; drop it, or pass {needs}"
        )))
    };
    if cli.base.is_none() {
        if cli.head.is_some() {
            return without(
                "--head",
                "--base",
                "the head revision is compared with a base",
            );
        }
        if cli.merge_base || cli.no_merge_base {
            let flag = if cli.merge_base {
                "--merge-base"
            } else {
                "--no-merge-base"
            };
            return without(flag, "--base", "it chooses how --base is compared");
        }
    }
    if cli.null && cli.changed_from.is_none() {
        return without(
            "-z/--null",
            "--changed-from",
            "it says how a --changed-from list is separated",
        );
    }
    Ok(())
}

/// The change set `--base` (and `--head`) give, from the repository.
struct FromVcs {
    changed: Vec<OsString>,
    vouched: crate::vcs::Vouched,
    base_commit: Option<String>,
    edited: std::collections::HashSet<String>,
}

/// The changes between `base` (its merge base with the head, unless
/// `--no-merge-base`) and `--head` or the working tree.
fn vcs_changes(
    cli: &Cli,
    base: &str,
    ci: bool,
    (source_dir, build_dir): (&str, &str),
) -> Result<FromVcs, UsageError> {
    if ci && cli.head.is_none() {
        return Err(UsageError("CI mode (--ci or CI=true) never reads the working tree: pass --head REV with --base, or an explicit list (--no-ci to override)".into()));
    }
    let base_rev = if !cli.no_merge_base {
        crate::vcs::merge_base(
            std::path::Path::new(source_dir),
            base,
            cli.head.as_deref().unwrap_or("HEAD"),
        )
        .map_err(|e| {
            format!("cannot compute the merge base: {e}; or pass --no-merge-base to compare --base's tree itself")
        })?
    } else {
        base.to_owned()
    };
    let base_commit = crate::vcs::resolve_commit(std::path::Path::new(source_dir), &base_rev).ok();
    let (changes, v) = crate::vcs::changes_with_vouched(
        std::path::Path::new(source_dir),
        &base_rev,
        cli.head.as_deref(),
    )
    .map_err(|e| format!("cannot compute the change set: {e}"))?;
    // Working tree: an in-source build dir that git does not ignore holds
    // build products, not changes (thousands of them on a real project).
    let in_build = |c: &crate::vcs::VcsChange| {
        cli.head.is_none()
            && c.path
                .to_str()
                .is_some_and(|p| paths::is_within(&paths::fold(p), build_dir))
    };
    let edited = std::collections::HashSet::from_iter(
        changes
            .iter()
            .filter(|c| c.kind == crate::vcs::ChangeKind::Modified)
            .filter_map(|c| c.path.to_str().map(str::to_owned)),
    );
    let changed = changes
        .into_iter()
        .filter(|c| !in_build(c))
        .map(|c| c.path.into_os_string())
        .collect();
    Ok(FromVcs {
        changed,
        vouched: v,
        base_commit,
        edited,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lists_split() {
        assert_eq!(
            split_changed(b"a\r\nb c\n\nd".to_vec(), false),
            vec!["a", "b c", "d"]
        );
        assert_eq!(
            split_changed(b"a\nb\0c\0".to_vec(), true),
            vec!["a\nb", "c"]
        );
    }

    #[test]
    fn verify_cli() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        full_command().debug_assert();
    }
}
