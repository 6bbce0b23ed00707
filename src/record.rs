//! `diff2test record`: turns strace logs of the base's ctest run into a
//! record ([`crate::ingest::record`]). Nothing is run: the user ran
//!
//! ```sh
//! strace -f -y -s 4096 -e trace=%file,%process,getdents64,fchdir,io_uring_setup,open_by_handle_at,bind,connect -o FILE ctest …
//! ```
//!
//! (`--seccomp-bpf` makes it faster where the kernel has it; any `-j`).
//!
//! A test's run is the process tree below a process whose `execve` is the
//! test's catalogue command (the program ctest resolved, the same arguments)
//! in the test's working directory. Two tests running one program with
//! different arguments are told apart by their arguments; tests that share
//! their whole command line and working directory share their runs (each
//! gets what all of them read, a superset of its own). Everything a run's
//! processes touched inside the project's scope or the build tree is kept;
//! paths outside both (the system, `/tmp`) are the environment.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::digest;
use crate::ingest::ctest::Catalogue;
use crate::ingest::record::{self, File, Log, Record, State, Status, TestRun, Tree};
use crate::ingest::strace::{self, Exit, Kind, Trace};
use crate::paths;
use crate::request::{RecordRequest, UsageError};

/// The strace options of the one documented command line (README, `record
/// --help`, `init`'s header, the Action, the mutation suite and the tests spell
/// it the same way: `tests/ci_config.rs` checks).
pub const STRACE_OPTIONS: &str =
    "-f -y -s 4096 -e trace=%file,%process,getdents64,fchdir,io_uring_setup,open_by_handle_at,bind,connect";

/// The largest log read (bytes): a whole suite's log is large, not unbounded.
pub const MAX_LOG_BYTES: u64 = 16 << 30;

/// Writes the record of `req`'s logs. `Err`: a usage error (one line).
pub fn record(req: &RecordRequest) -> Result<Record, UsageError> {
    let cat_bytes = std::fs::read(&req.ctest_json)
        .map_err(|e| format!("--ctest-json {}: {e}", req.ctest_json))?;
    let catalogue: Catalogue = crate::ingest::ctest::parse(
        &cat_bytes,
        &req.ctest_json,
        &req.build_dir,
        usize::MAX,
        true,
    )
    .map_err(|g| format!("the catalogue cannot be read: {g}"))?;
    let json = catalogue.json.clone().unwrap_or_default();
    let entries: HashMap<String, String> = record::entry_fingerprints(&json).into_iter().collect();
    let scope = paths::repo_root_above(&req.source_dir)
        .or_else(|| {
            std::path::Path::new(&format!("{}/.git", req.source_dir))
                .exists()
                .then(|| req.source_dir.clone())
        })
        .unwrap_or_else(|| req.source_dir.clone());
    let roots = Roots::new(&scope, &req.build_dir);

    let mut logs = Vec::new();
    let mut problems = Vec::new();
    let mut acc = Accumulator::new(&catalogue);
    for file in &req.straces {
        let meta = std::fs::metadata(file).map_err(|e| format!("--strace {file}: {e}"))?;
        if meta.len() > MAX_LOG_BYTES {
            return Err(UsageError(format!(
                "--strace {file}: larger than {MAX_LOG_BYTES} bytes"
            )));
        }
        let bytes = std::fs::read(file).map_err(|e| format!("--strace {file}: {e}"))?;
        let text = String::from_utf8_lossy(&bytes);
        let trace = strace::parse(&text);
        if trace.processes.is_empty() {
            return Err(UsageError(format!(
                "--strace {file}: no line of `strace -f -o FILE` in it (a log of -ff has no process ids: use -f)"
            )));
        }
        problems.extend(trace.problems.iter().map(|p| format!("{file}: {p}")));
        logs.push(Log {
            file: file.clone(),
            lines: trace.lines,
            sha256: digest::hex(&digest::sha256(&bytes)),
        });
        acc.add(&trace, file);
    }
    let mut rec = acc.finish(&roots, &entries, &problems);
    rec.source_dir = req.source_dir.clone();
    rec.build_dir = req.build_dir.clone();
    rec.scope = scope;
    rec.commit = crate::vcs::resolve_commit(std::path::Path::new(&req.source_dir), "HEAD").ok();
    rec.catalogue_sha256 = digest::hex(&digest::sha256(&cat_bytes));
    rec.logs = logs;
    rec.problems = problems;
    Ok(rec)
}

/// The scope and the build tree, in their given and their real spellings.
struct Roots {
    build: Vec<String>,
    scope: Vec<String>,
}

impl Roots {
    fn new(scope: &str, build: &str) -> Self {
        let both = |p: &str| {
            let mut v = vec![p.to_owned()];
            if let Some(r) = paths::real(p) {
                if r != p {
                    v.push(r);
                }
            }
            v
        };
        Roots {
            build: both(build),
            scope: both(scope),
        }
    }

    /// Where `abs` is: the build tree first (it may lie inside the scope).
    fn locate(&self, abs: &str) -> Option<(Tree, String)> {
        for b in &self.build {
            if let Some(rel) = paths::strip_root(abs, b) {
                return Some((Tree::Build, rel.to_owned()));
            }
        }
        for s in &self.scope {
            if let Some(rel) = paths::strip_root(abs, s) {
                return Some((Tree::Source, rel.to_owned()));
            }
        }
        None
    }

    fn abs(&self, tree: Tree, rel: &str) -> String {
        let root = match tree {
            Tree::Build => &self.build[0],
            Tree::Source => &self.scope[0],
        };
        if rel.is_empty() {
            root.clone()
        } else {
            format!("{root}/{rel}")
        }
    }
}

/// Per path a test touched: (read, listed, wrote).
type Touched = BTreeMap<(Tree, String), [bool; 3]>;

/// One run of a test group: what its processes did, and how it ended.
#[derive(Default)]
struct Run {
    accesses: Vec<(String, Kind)>,
    ended: bool,
    killed: Option<String>,
    problems: Vec<String>,
}

/// Runs collected across logs, per group of tests that share a command line
/// and a working directory.
struct Accumulator<'c> {
    catalogue: &'c Catalogue,
    /// (command, working directory) → the tests (indices) registered with it.
    groups: BTreeMap<(Vec<String>, String), Vec<usize>>,
    runs: BTreeMap<(Vec<String>, String), Vec<Run>>,
}

impl<'c> Accumulator<'c> {
    fn new(catalogue: &'c Catalogue) -> Self {
        let mut groups: BTreeMap<(Vec<String>, String), Vec<usize>> = BTreeMap::new();
        for (i, t) in catalogue.tests.iter().enumerate() {
            if let Some(cmd) = t.command.as_ref().filter(|c| !c.is_empty()) {
                groups
                    .entry((cmd.clone(), t.working_directory.clone()))
                    .or_default()
                    .push(i);
            }
        }
        Accumulator {
            catalogue,
            groups,
            runs: BTreeMap::new(),
        }
    }

    /// The group whose command this exec is, in its working directory.
    fn group_of(&self, e: &strace::Exec) -> Option<(Vec<String>, String)> {
        if !e.ok || !e.argv_complete || e.argv.is_empty() {
            return None;
        }
        let cwd = e.cwd.as_deref()?;
        let tail = &e.argv[1..];
        self.groups
            .keys()
            .find(|(cmd, wd)| {
                cmd.len() == e.argv.len()
                    && cmd[1..] == *tail
                    && (paths::fold(&cmd[0]) == e.path || cmd[0] == e.argv[0])
                    && (wd.is_empty() || paths::fold(wd) == cwd)
            })
            .cloned()
    }

    fn add(&mut self, trace: &Trace, file: &str) {
        let n = trace.processes.len();
        let mut run_of: Vec<Option<usize>> = vec![None; n];
        let mut roots: Vec<(usize, (Vec<String>, String))> = Vec::new();
        for p in 0..n {
            let proc_ = &trace.processes[p];
            if let Some(parent) = proc_.parent.filter(|&q| q < p) {
                if let Some(r) = run_of[parent] {
                    run_of[p] = Some(r);
                    continue;
                }
            }
            if let Some(key) = proc_.execs.iter().find_map(|e| self.group_of(e)) {
                run_of[p] = Some(roots.len());
                roots.push((p, key));
            }
        }
        let mut runs: Vec<Run> = roots.iter().map(|_| Run::default()).collect();
        // The Unix sockets and ports each run's processes bound: a connection
        // to any other one (a Unix socket, a loopback port) reaches a server
        // outside the run (a daemon, a CI service), which may read files for
        // it that the run's processes never open. A port 0 bind stands for
        // any port (the one the kernel chose is not in the log).
        let mut bound: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); roots.len()];
        for (p, r) in run_of.iter().enumerate() {
            if let Some(r) = *r {
                bound[r].extend(trace.processes[p].binds.iter().map(String::as_str));
            }
        }
        for (p, r) in run_of.iter().enumerate() {
            let Some(r) = *r else { continue };
            let proc_ = &trace.processes[p];
            let run = &mut runs[r];
            run.problems.extend(
                (proc_.connects.iter())
                    .filter(|(_, addr)| {
                        let any_port = addr.starts_with("inet:") && bound[r].contains("inet:*");
                        !any_port && !bound[r].contains(addr.as_str())
                    })
                    .map(|(line, addr)| {
                        format!("{file}: line {line}: connect to {addr}, a socket no process of the test's run bound: a server outside the run may read files for it")
                    }),
            );
            run.accesses
                .extend(proc_.accesses.iter().map(|a| (a.path.clone(), a.kind)));
            run.problems
                .extend(proc_.problems.iter().map(|x| format!("{file}: {x}")));
            if p == roots[r].0 {
                match &proc_.exit {
                    Some(Exit::Code(_)) => run.ended = true,
                    Some(Exit::Signal(s)) => run.killed = Some(s.clone()),
                    None => {}
                }
            }
        }
        for ((_, key), run) in roots.into_iter().zip(runs) {
            self.runs.entry(key).or_default().push(run);
        }
    }

    fn finish(
        self,
        roots: &Roots,
        entries: &HashMap<String, String>,
        problems: &[String],
    ) -> Record {
        let mut table: BTreeMap<(Tree, String), ()> = BTreeMap::new();
        // Per test: path → (reads, listed, wrote).
        let mut per_test: Vec<(TestRun, Touched)> = Vec::new();
        let mut tests: Vec<usize> = (0..self.catalogue.tests.len()).collect();
        tests.sort_by(|&a, &b| {
            self.catalogue.tests[a]
                .name
                .cmp(&self.catalogue.tests[b].name)
        });
        let group_of_test: HashMap<usize, &(Vec<String>, String)> = self
            .groups
            .iter()
            .flat_map(|(k, v)| v.iter().map(move |&i| (i, k)))
            .collect();
        for i in tests {
            let t = &self.catalogue.tests[i];
            let mut tr = TestRun {
                name: t.name.clone(),
                entry: entries.get(&t.name).cloned().unwrap_or_default(),
                status: Status::Recorded,
                detail: String::new(),
                runs: 0,
                reads: Vec::new(),
                listed: Vec::new(),
                wrote: Vec::new(),
            };
            let mut touched: Touched = BTreeMap::new();
            let key = group_of_test.get(&i);
            let runs = key.and_then(|k| self.runs.get(*k));
            let group_len = key.and_then(|k| self.groups.get(*k)).map_or(1, Vec::len);
            match runs {
                None => {
                    tr.status = Status::NotRun;
                    tr.detail = if t.command.as_ref().is_none_or(|c| c.is_empty()) {
                        "the catalogue gives it no command".into()
                    } else {
                        "no process in the logs ran its command in its working directory".into()
                    };
                }
                Some(runs) => {
                    tr.runs = runs.len();
                    if runs.len() < group_len {
                        tr.status = Status::Ambiguous;
                        tr.detail = format!(
                            "{group_len} tests share its command line and working directory, and the logs have {} run(s) of it",
                            runs.len()
                        );
                    } else if let Some(r) = runs.iter().find(|r| !r.ended) {
                        tr.status = Status::CutShort;
                        tr.detail = match &r.killed {
                            Some(sig) => {
                                format!("a run was killed by {sig} (a timeout or a crash)")
                            }
                            None => "the log ends before a run of it did".into(),
                        };
                    } else if let Some(p) = runs.iter().flat_map(|r| &r.problems).next() {
                        tr.status = Status::Incomplete;
                        tr.detail = p.clone();
                    } else if let Some(p) = problems.first() {
                        tr.status = Status::Incomplete;
                        tr.detail = format!("a line of the logs belongs to no process: {p}");
                    }
                    if tr.status == Status::Recorded {
                        collect(runs, roots, &mut touched);
                    }
                }
            }
            for k in touched.keys() {
                table.insert(k.clone(), ());
            }
            per_test.push((tr, touched));
        }
        let index: HashMap<(Tree, String), usize> = table
            .keys()
            .enumerate()
            .map(|(i, k)| (k.clone(), i))
            .collect();
        let mut listed_any = vec![false; table.len()];
        let mut out_tests = Vec::with_capacity(per_test.len());
        for (mut tr, touched) in per_test {
            for (k, [r, l, w]) in touched {
                let i = index[&k];
                if r {
                    tr.reads.push(i);
                }
                if l {
                    tr.listed.push(i);
                    listed_any[i] = true;
                }
                if w {
                    tr.wrote.push(i);
                }
            }
            out_tests.push(tr);
        }
        let files = table
            .into_keys()
            .enumerate()
            .map(|(i, (tree, path))| state_of(tree, path, roots, listed_any[i]))
            .collect();
        Record {
            schema: record::SCHEMA.into(),
            source_dir: String::new(),
            build_dir: String::new(),
            scope: String::new(),
            commit: None,
            catalogue_sha256: String::new(),
            logs: Vec::new(),
            problems: Vec::new(),
            files,
            tests: out_tests,
        }
    }
}

/// What a test's runs did with each path in scope: read (before any write of
/// its own), listed, wrote. A path first looked for and not found, then
/// written, is the test's own output, not an input.
fn collect(runs: &[Run], roots: &Roots, touched: &mut Touched) {
    for run in runs {
        let mut first: HashMap<&str, Kind> = HashMap::new();
        let mut kinds: HashMap<&str, BTreeSet<Kind>> = HashMap::new();
        for (path, kind) in &run.accesses {
            first.entry(path.as_str()).or_insert(*kind);
            kinds.entry(path.as_str()).or_default().insert(*kind);
        }
        for (path, ks) in kinds {
            let Some(key) = roots.locate(path) else {
                continue;
            };
            let f = first[path];
            let writes = ks.contains(&Kind::Write);
            let output = f == Kind::Write || (f == Kind::Absent && writes);
            // What a symlink it read leads to is read too (an exec'd link to a program).
            if !output {
                let real = std::fs::symlink_metadata(path)
                    .is_ok_and(|m| m.file_type().is_symlink())
                    .then(|| paths::real(path))
                    .flatten();
                if let Some(rk) = real.and_then(|r| roots.locate(&r)) {
                    touched.entry(rk).or_insert([false; 3])[0] = true;
                }
            }
            let e = touched.entry(key).or_insert([false; 3]);
            e[0] |= !output;
            e[1] |= ks.contains(&Kind::List);
            e[2] |= writes;
        }
    }
}

/// The path's state now (just after the run it was recorded in).
fn state_of(tree: Tree, path: String, roots: &Roots, listed: bool) -> File {
    let abs = roots.abs(tree, &path);
    let mut f = File {
        tree,
        path,
        state: State::Absent,
        oid: None,
        target_oid: None,
        entries: None,
    };
    let link = crate::vcs::blob_id_of_link(std::path::Path::new(&abs));
    match std::fs::metadata(&abs) {
        Ok(m) if m.is_file() => match crate::vcs::blob_id_of_file(std::path::Path::new(&abs)) {
            Some(oid) => {
                f.state = State::File;
                match link {
                    Some(l) => {
                        f.oid = Some(l);
                        f.target_oid = Some(oid);
                    }
                    None => f.oid = Some(oid),
                }
            }
            None => f.state = State::Other,
        },
        Ok(m) if m.is_dir() => {
            f.state = State::Dir;
            f.oid = link;
            if listed {
                f.entries = Some(dir_entries(&abs));
            }
        }
        Ok(_) => f.state = State::Other,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => f.state = State::Absent,
        Err(_) => f.state = State::Other,
    }
    f
}

/// A directory's entry names, sorted (empty when it cannot be listed).
pub fn dir_entries(abs: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(abs)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The record as written: JSON, one line per file and per test, deterministic.
pub fn to_json(r: &Record) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}
