//! An strace log of a ctest run, read as evidence of what each process
//! opened, examined, executed, listed and wrote.
//!
//! The log is the one `-o FILE` writes with `-f` (every line starts with the
//! process id) and `-y` (file descriptors carry their paths), from strace 5.x
//! or 6.x; `-t`/`-tt`/`-ttt` timestamps are accepted. The reader never runs
//! strace: the user ran it around `ctest` (README, SAFETY-CONTRACT §4.12).
//!
//! Two passes. The first splits the log into processes (a process id that
//! exited and reappears is a new process) and joins `<unfinished ...>` calls
//! with their `<... resumed>` ends. The second replays the calls in log order
//! with each process's working directory (inherited at `fork`/`clone`, shared
//! with `CLONE_FS`, moved by `chdir`/`fchdir`, confirmed by `-y`'s
//! `AT_FDCWD</dir>`), so every relative path is resolved as the kernel did.
//! Whatever cannot be resolved (a truncated string, an fd without its path, a
//! relative path with no known directory, a line that is not strace's) is a
//! *problem* of the process it belongs to, never a silently dropped access.

use std::collections::HashMap;

use crate::paths;

/// What a process did with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Opened for reading (or reading and writing).
    Read,
    /// Examined: stat, access, readlink, … (its existence, type or size).
    Stat,
    /// Executed.
    Exec,
    /// Listed (getdents): the directory's entries.
    List,
    /// Entered or opened as a directory.
    Dir,
    /// Looked for and not found (ENOENT, ENOTDIR).
    Absent,
    /// Created, truncated, written, removed or renamed.
    Write,
}

/// One access to one path (absolute, folded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The path.
    pub path: String,
    /// What was done with it.
    pub kind: Kind,
}

/// One `execve` (or `execveat`).
#[derive(Clone, Debug)]
pub struct Exec {
    /// The program path, resolved against the working directory.
    pub path: String,
    /// `argv` as strace printed it.
    pub argv: Vec<String>,
    /// False when strace abbreviated `argv` (`...`).
    pub argv_complete: bool,
    /// The working directory at the call, when known.
    pub cwd: Option<String>,
    /// Whether it succeeded.
    pub ok: bool,
    /// How many accesses the process had made before this call.
    pub at: usize,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `+++ exited with N +++`
    Code(i32),
    /// `+++ killed by SIG… +++`
    Signal(String),
}

/// One process (one lifetime of a process id).
#[derive(Clone, Debug, Default)]
pub struct Process {
    /// The process id.
    pub pid: u32,
    /// The process that created it (index), when the log shows the call.
    pub parent: Option<usize>,
    /// Its accesses, in order.
    pub accesses: Vec<Access>,
    /// Its program executions, in order.
    pub execs: Vec<Exec>,
    /// How it ended; `None` when the log ends first.
    pub exit: Option<Exit>,
    /// What could not be read of it (line numbers and why).
    pub problems: Vec<String>,
    /// The socket addresses it bound (`Replay::socket_address`: a Unix
    /// socket's path, `@name` in the abstract namespace, or `inet:PORT`).
    pub binds: Vec<String>,
    /// The socket addresses it connected to (the same forms; a port only on
    /// loopback), each with its line.
    pub connects: Vec<(usize, String)>,
    first_line: usize,
}

/// A whole log.
#[derive(Debug, Default)]
pub struct Trace {
    /// Every process, in order of first appearance.
    pub processes: Vec<Process>,
    /// Lines that belong to no process (and so may belong to any).
    pub problems: Vec<String>,
    /// Lines read.
    pub lines: usize,
}

impl Trace {
    /// Whether process `p` is `ancestor` or descends from it.
    pub fn descends(&self, mut p: usize, ancestor: usize) -> bool {
        loop {
            if p == ancestor {
                return true;
            }
            match self.processes[p].parent {
                Some(q) => p = q,
                None => return false,
            }
        }
    }
}

/// A system call as joined from its line(s).
struct Call {
    line: usize,
    proc_: usize,
    name: String,
    args: Vec<String>,
    ret: String,
}

/// A `clone`/`fork`/`vfork` seen in pass one.
struct Spawn {
    parent: usize,
    start_line: usize,
    /// The line the call returned on (0 until then).
    end_line: usize,
    child_pid: u32,
    shares_fs: bool,
}

/// Reads a log. Never fails: what cannot be read is a problem, by line.
pub fn parse(text: &str) -> Trace {
    let mut trace = Trace::default();
    let mut live: HashMap<u32, usize> = HashMap::new();
    let mut pending: HashMap<usize, (usize, String)> = HashMap::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut spawns: Vec<Spawn> = Vec::new();
    let mut last_complete = true;
    for (n, raw) in text.split('\n').enumerate() {
        let line_no = n + 1;
        if raw.is_empty() {
            continue;
        }
        trace.lines = line_no;
        last_complete = true;
        let Some((pid, body)) = split_pid(raw) else {
            if raw.starts_with("strace: ") && (raw.contains("attached") || raw.contains("detached"))
            {
                continue;
            }
            trace.problems.push(format!(
                "line {line_no}: not a line of `strace -f`: {}",
                clip(raw)
            ));
            continue;
        };
        let proc_ = *live.entry(pid).or_insert_with(|| {
            trace.processes.push(Process {
                pid,
                first_line: line_no,
                ..Process::default()
            });
            trace.processes.len() - 1
        });
        let body = body.trim_start();
        if let Some(rest) = body.strip_prefix("+++ ") {
            let rest = rest.trim_end_matches(" +++");
            let exit = if let Some(code) = rest.strip_prefix("exited with ") {
                code.trim().parse().ok().map(Exit::Code)
            } else {
                rest.strip_prefix("killed by ")
                    .map(|s| Exit::Signal(s.split_whitespace().next().unwrap_or("").to_owned()))
            };
            match exit {
                Some(e) => trace.processes[proc_].exit = Some(e),
                None => trace.processes[proc_]
                    .problems
                    .push(format!("line {line_no}: unknown end {}", clip(body))),
            }
            live.remove(&pid);
            continue;
        }
        if body.starts_with("--- ") || body.starts_with("<detached") || body.starts_with("+++") {
            continue;
        }
        let joined = if let Some(rest) = body.strip_prefix("<... ") {
            // `<... name resumed>REST`
            let Some((_, after)) = rest.split_once(" resumed>") else {
                trace.processes[proc_].problems.push(format!(
                    "line {line_no}: unreadable resumption {}",
                    clip(body)
                ));
                continue;
            };
            match pending.remove(&proc_) {
                Some((_, head)) => format!("{head}{after}"),
                None => {
                    trace.processes[proc_].problems.push(format!(
                        "line {line_no}: a resumed call whose start is not in the log"
                    ));
                    continue;
                }
            }
        } else if let Some(head) = body.strip_suffix(" <unfinished ...>") {
            pending.insert(proc_, (line_no, head.to_owned()));
            if let Some(s) = spawn_start(head) {
                spawns.push(Spawn {
                    parent: proc_,
                    start_line: line_no,
                    end_line: 0,
                    child_pid: 0,
                    shares_fs: s,
                });
            }
            continue;
        } else {
            body.to_owned()
        };
        let Some(call) = split_call(&joined) else {
            last_complete = false;
            trace.processes[proc_]
                .problems
                .push(format!("line {line_no}: unreadable call {}", clip(&joined)));
            continue;
        };
        let (name, args, ret) = call;
        if matches!(name.as_str(), "clone" | "clone3" | "fork" | "vfork") {
            if let Some(child) = leading_number(&ret) {
                // The spawn started on this line, or on its `<unfinished ...>` line.
                match spawns
                    .iter_mut()
                    .rev()
                    .find(|s| s.parent == proc_ && s.child_pid == 0)
                {
                    Some(s) => {
                        s.child_pid = child;
                        s.end_line = line_no;
                    }
                    None => spawns.push(Spawn {
                        parent: proc_,
                        start_line: line_no,
                        end_line: line_no,
                        child_pid: child,
                        shares_fs: spawn_start(&joined).unwrap_or(false),
                    }),
                }
            } else if let Some(pos) = spawns
                .iter()
                .rposition(|s| s.parent == proc_ && s.child_pid == 0)
            {
                spawns.remove(pos); // failed: no child
            }
        }
        calls.push(Call {
            line: line_no,
            proc_,
            name,
            args,
            ret,
        });
    }
    if !last_complete && !text.ends_with('\n') {
        trace
            .problems
            .push(format!("line {}: the log ends inside a line", trace.lines));
    }
    for (proc_, (line, head)) in pending {
        trace.processes[proc_].problems.push(format!(
            "line {line}: the call {} never returned in the log",
            clip(&head)
        ));
    }
    let (shares, born) = link_spawns(&mut trace, &spawns);
    replay(&mut trace, calls, &shares, &born);
    trace
}

/// Gives every spawned process its parent: the lifetime of the child's id
/// that starts first after the spawn started. Returns the children that
/// share their parent's working directory (`CLONE_FS`), and the child
/// each spawn's return line created.
fn link_spawns(
    trace: &mut Trace,
    spawns: &[Spawn],
) -> (HashMap<usize, bool>, HashMap<usize, usize>) {
    let mut shares = HashMap::new();
    let mut born = HashMap::new();
    let mut by_pid: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in trace.processes.iter().enumerate() {
        by_pid.entry(p.pid).or_default().push(i);
    }
    for s in spawns.iter().filter(|s| s.child_pid != 0) {
        let Some(cands) = by_pid.get(&s.child_pid) else {
            continue; // the child did nothing the log shows
        };
        if let Some(&c) = cands
            .iter()
            .find(|&&c| trace.processes[c].first_line > s.start_line && c != s.parent)
        {
            if trace.processes[c].parent.is_none() {
                trace.processes[c].parent = Some(s.parent);
                shares.insert(c, s.shares_fs);
                born.insert(s.end_line, c);
            }
        }
    }
    (shares, born)
}

/// For a spawn call's text: whether the child shares the working directory.
fn spawn_start(head: &str) -> Option<bool> {
    let name = head.split('(').next()?;
    match name {
        "clone" | "clone3" => Some(head.contains("CLONE_FS")),
        "fork" | "vfork" => Some(false),
        _ => None,
    }
}

/// Replays the calls in log order with each process's working directory. A
/// child gets its parent's directory as it was at the spawn: when its first
/// line comes after the spawn returned (the parent may `chdir` away at once,
/// as ctest does between tests), it is taken on the spawn's return line.
fn replay(
    trace: &mut Trace,
    calls: Vec<Call>,
    shares: &HashMap<usize, bool>,
    born: &HashMap<usize, usize>,
) {
    let n = trace.processes.len();
    let mut cells: Vec<Option<String>> = Vec::new();
    let mut cell_of: Vec<Option<usize>> = vec![None; n];
    for call in calls {
        let p = call.proc_;
        let cell = ensure_cell(trace, shares, &mut cells, &mut cell_of, p);
        if let Some(&child) = born.get(&call.line) {
            ensure_cell(trace, shares, &mut cells, &mut cell_of, child);
        }
        let mut cx = Replay {
            cwd: &mut cells[cell],
            proc_: &mut trace.processes[p],
            line: call.line,
        };
        cx.call(&call.name, &call.args, &call.ret);
    }
}

fn ensure_cell(
    trace: &Trace,
    shares: &HashMap<usize, bool>,
    cells: &mut Vec<Option<String>>,
    cell_of: &mut [Option<usize>],
    p: usize,
) -> usize {
    if let Some(c) = cell_of[p] {
        return c;
    }
    let c = match trace.processes[p].parent {
        Some(parent) if parent != p => {
            let pc = ensure_cell(trace, shares, cells, cell_of, parent);
            if shares.get(&p).copied().unwrap_or(false) {
                pc
            } else {
                cells.push(cells[pc].clone());
                cells.len() - 1
            }
        }
        _ => {
            cells.push(None);
            cells.len() - 1
        }
    };
    cell_of[p] = Some(c);
    c
}

struct Replay<'a> {
    cwd: &'a mut Option<String>,
    proc_: &'a mut Process,
    line: usize,
}

impl Replay<'_> {
    fn problem(&mut self, what: String) {
        self.proc_
            .problems
            .push(format!("line {}: {what}", self.line));
    }

    fn push(&mut self, path: String, kind: Kind) {
        self.proc_.accesses.push(Access { path, kind });
    }

    /// The directory a `dirfd` argument names (`AT_FDCWD</dir>`, `3</dir>`).
    fn dir_of(&mut self, dirfd: &str) -> Option<String> {
        let (fd, ann) = split_annotation(dirfd);
        match ann {
            Some(a) if a.starts_with('/') => {
                let a = paths::fold(&a);
                if fd == "AT_FDCWD" {
                    if self.cwd.is_none() {
                        // Unknown until now (its spawn is not in the log): the
                        // directory its earlier execs ran in, as no chdir moved it.
                        for e in self.proc_.execs.iter_mut().filter(|e| e.cwd.is_none()) {
                            e.cwd = Some(a.clone());
                        }
                    }
                    *self.cwd = Some(a.clone());
                }
                Some(a)
            }
            _ if fd == "AT_FDCWD" => self.cwd.clone(),
            _ => None,
        }
    }

    /// The address of a socket argument a server on this machine may answer:
    /// a Unix socket (`{sa_family=AF_UNIX, sun_path="/x"}`, `sun_path=@"name"`:
    /// the folded absolute path, or `@name`), or an IPv4/IPv6 port (`inet:N`)
    /// when `bind` names any address or `connect` a loopback one (another
    /// host is the network, under the record's assumption). A bind to port 0
    /// takes a port the log does not show: `inet:*`. A path strace cut short,
    /// or a relative one with no known directory, is a problem of the process.
    fn socket_address(&mut self, arg: &str, bind: bool) -> Option<String> {
        if arg.contains("sa_family=AF_INET") {
            return inet_port(arg, bind);
        }
        if !arg.contains("sa_family=AF_UNIX") {
            return None;
        }
        let tail = arg.split_once("sun_path=")?.1.trim_end_matches('}');
        let tail = tail.split(", ").next().unwrap_or(tail);
        if let Some(abs) = tail.strip_prefix('@') {
            return Some(format!(
                "@{}",
                unquote(abs).unwrap_or_else(|| abs.to_owned())
            ));
        }
        self.resolve(None, tail, "", "a Unix socket")
    }

    /// Resolves a quoted path argument against `dir` (`None`: the cwd).
    /// `None` also when the call named no file at all: strace prints a path
    /// whole (its `-s` limit does not apply to file names) unless it has no NUL
    /// within `PATH_MAX` bytes, and such a name the kernel refuses with
    /// `ENAMETOOLONG` before it looks at any file system (yyjson's writer test
    /// opens one on purpose). A truncated path with any other outcome is a problem.
    fn resolve(&mut self, dir: Option<&str>, arg: &str, ret: &str, what: &str) -> Option<String> {
        let Some(s) = unquote(arg) else {
            if is_truncated_string(arg) && errno(ret) == Some("ENAMETOOLONG") {
                return None;
            }
            self.problem(format!(
                "{what}: a path strace did not print whole: {}",
                clip(arg)
            ));
            return None;
        };
        if s.starts_with('/') {
            return Some(paths::fold(&s));
        }
        let base = match dir {
            Some(d) => Some(d.to_owned()),
            None => self.cwd.clone(),
        };
        match base {
            Some(b) => Some(paths::join_fold(&b, &s)),
            None => {
                self.problem(format!(
                    "{what}: relative path {s:?} with no known working directory"
                ));
                None
            }
        }
    }

    /// One path access: `dirfd` (None: cwd), the quoted path, what it is on success.
    fn access(&mut self, name: &str, dirfd: Option<&str>, arg: &str, ret: &str, ok_kind: Kind) {
        if unquote(arg).is_some_and(|s| s.is_empty()) {
            return; // AT_EMPTY_PATH: the fd itself, opened before
        }
        if arg == "NULL" && matches!(name, "utimensat" | "futimesat") {
            return; // futimens(fd): the descriptor itself, opened before
        }
        let dir = match dirfd {
            Some(fd) => match self.dir_of(fd) {
                Some(d) => Some(d),
                None => {
                    let rel = unquote(arg).is_some_and(|s| !s.starts_with('/'));
                    if rel {
                        self.problem(format!(
                            "{name}: relative to a descriptor strace printed without its path ({}): run strace with -y",
                            clip(fd)
                        ));
                        return;
                    }
                    None
                }
            },
            None => None,
        };
        let Some(path) = self.resolve(dir.as_deref(), arg, ret, name) else {
            return;
        };
        let kind = match outcome(ret) {
            Outcome::Ok => ok_kind,
            Outcome::Missing => {
                if ok_kind == Kind::Write {
                    Kind::Write
                } else {
                    Kind::Absent
                }
            }
            Outcome::OtherError => {
                if ok_kind == Kind::Write {
                    Kind::Write
                } else {
                    Kind::Stat
                }
            }
            Outcome::Unknown => ok_kind,
        };
        // `-y` prints the descriptor an open returns with its real path: a file
        // reached through a symlink is read at both spellings.
        if let (Kind::Read | Kind::Dir | Kind::Write, Some(real)) = (kind, returned_path(ret)) {
            if real != path {
                self.push(real, kind);
            }
        }
        self.push(path, kind);
    }

    /// Calls by which files may be read without their path in the log: a
    /// problem of the process when they succeed; sockets kept for the
    /// record's check of servers outside a test's run. Any other call is
    /// [`Replay::examined`].
    fn unseen(&mut self, name: &str, args: &[String], ret: &str) {
        let a = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        match name {
            // Ways to open a file that leave no path in the log: an io_uring
            // ring (its OPENAT, STATX, RENAMEAT… requests are not syscalls) and
            // a file handle. What the process read through them is unknown.
            "io_uring_setup" if outcome(ret) == Outcome::Ok => self.problem(
                "io_uring_setup: a ring's requests open files that strace does not show".into(),
            ),
            "open_by_handle_at" if outcome(ret) == Outcome::Ok => {
                self.problem("open_by_handle_at: a file opened by handle, with no path".into());
            }
            "io_uring_setup" | "open_by_handle_at" => {}
            // A socket: a server at the other end may read files for it.
            "bind" | "connect" => {
                let Some(addr) = self.socket_address(a(1), name == "bind") else {
                    return;
                };
                let r = ret.trim();
                if name == "bind" && r == "0" {
                    self.proc_.binds.push(addr);
                } else if name == "connect" && (r == "0" || errno(r) == Some("EINPROGRESS")) {
                    self.proc_.connects.push((self.line, addr));
                }
            }
            // A new root or a new mount changes what every later path names:
            // `/tmp/view/x` may be `/src/data/x` bound there (bwrap, unshare).
            "chroot" | "pivot_root" | "move_mount" if outcome(ret) == Outcome::Ok => {
                self.problem(format!("{name}: later paths name files of another tree"));
            }
            "mount" if outcome(ret) == Outcome::Ok && !keeps_paths(a(3)) => {
                self.problem(format!(
                    "mount of {} on {}: later paths below it name files of another tree",
                    clip(a(0)),
                    clip(a(1))
                ));
            }
            // Its source may be no path at all ("none", "tmpfs").
            "mount" => self.access(name, None, a(1), ret, Kind::Stat),
            _ => self.examined(name, args, ret),
        }
    }

    /// Any other call with a quoted path (stat, lstat, access, readlink,
    /// statfs, getxattr, a failed chroot, …): the path is examined.
    fn examined(&mut self, name: &str, args: &[String], ret: &str) {
        if let Some(i) = args.iter().position(|x| x.starts_with('"')) {
            let dirfd = (i > 0)
                .then(|| args[i - 1].as_str())
                .filter(|d| d.starts_with("AT_FDCWD") || d.contains('<'));
            self.access(name, dirfd, &args[i].clone(), ret, Kind::Stat);
        }
    }

    fn call(&mut self, name: &str, args: &[String], ret: &str) {
        let a = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        match name {
            "open" => {
                let k = open_kind(a(1));
                self.access(name, None, a(0), ret, k);
            }
            "creat" => self.access(name, None, a(0), ret, Kind::Write),
            "openat" | "openat2" => {
                let k = open_kind(a(2));
                self.access(name, Some(a(0)), a(1), ret, k);
            }
            "execve" | "execveat" => {
                let (dirfd, path, argv) = if name == "execve" {
                    (None, a(0), a(1))
                } else {
                    (Some(a(0)), a(1), a(2))
                };
                let dir = dirfd.and_then(|d| self.dir_of(d));
                let Some(resolved) = self.resolve(dir.as_deref(), path, ret, name) else {
                    return;
                };
                let ok = outcome(ret) == Outcome::Ok || outcome(ret) == Outcome::Unknown;
                let (argv, complete) = parse_array(argv);
                let at = self.proc_.accesses.len();
                self.proc_.execs.push(Exec {
                    path: resolved.clone(),
                    argv,
                    argv_complete: complete,
                    cwd: self.cwd.clone(),
                    ok,
                    at,
                });
                let kind = match outcome(ret) {
                    Outcome::Missing => Kind::Absent,
                    Outcome::OtherError => Kind::Stat,
                    Outcome::Ok | Outcome::Unknown => Kind::Exec,
                };
                self.push(resolved, kind);
            }
            "chdir" => {
                let Some(path) = self.resolve(None, a(0), ret, name) else {
                    return;
                };
                if outcome(ret) == Outcome::Ok {
                    *self.cwd = Some(path.clone());
                    self.push(path, Kind::Dir);
                } else {
                    self.push(path, Kind::Absent);
                }
            }
            "fchdir" => {
                let (_, ann) = split_annotation(a(0));
                match ann {
                    Some(d) if d.starts_with('/') => {
                        let d = paths::fold(&d);
                        if outcome(ret) == Outcome::Ok {
                            *self.cwd = Some(d.clone());
                        }
                        self.push(d, Kind::Dir);
                    }
                    _ => {
                        *self.cwd = None;
                        self.problem(
                            "fchdir to a descriptor without its path: run strace with -y".into(),
                        );
                    }
                }
            }
            "getdents64" | "getdents" | "readdir" => {
                let (_, ann) = split_annotation(a(0));
                match ann {
                    Some(d) if d.starts_with('/') => self.push(paths::fold(&d), Kind::List),
                    _ => self.problem(format!(
                        "{name} of a descriptor without its path ({}): run strace with -y",
                        clip(a(0))
                    )),
                }
            }
            // Calls that only name a descriptor, or no path at all.
            "exit" | "exit_group" | "wait4" | "waitid" | "kill" | "tkill" | "tgkill" | "clone"
            | "clone3" | "fork" | "vfork" | "arch_prctl" | "unshare" | "setns" | "prctl"
            | "rt_sigreturn" | "pidfd_open" | "pidfd_send_signal" | "fstat" | "fstatfs"
            | "fchmod" | "fchown" | "ftruncate" | "fsync" | "fdatasync" | "fgetxattr"
            | "flistxattr" | "fsetxattr" | "fremovexattr" | "fanotify_init" | "inotify_init"
            | "inotify_init1" | "umask" | "seccomp" | "ptrace" | "pidfd_getfd" | "close_range" => {}
            "unlink" | "rmdir" | "mkdir" | "chmod" | "chown" | "lchown" | "truncate" | "utime"
            | "utimes" | "mknod" | "setxattr" | "lsetxattr" | "removexattr" | "lremovexattr"
            | "acct" | "swapon" | "swapoff" => self.access(name, None, a(0), ret, Kind::Write),
            "unlinkat" | "mkdirat" | "fchmodat" | "fchmodat2" | "fchownat" | "futimesat"
            | "utimensat" | "mknodat" => self.access(name, Some(a(0)), a(1), ret, Kind::Write),
            "rename" | "link" => {
                self.access(name, None, a(0), ret, Kind::Write);
                self.access(name, None, a(1), ret, Kind::Write);
            }
            "renameat" | "renameat2" | "linkat" => {
                self.access(name, Some(a(0)), a(1), ret, Kind::Write);
                self.access(name, Some(a(2)), a(3), ret, Kind::Write);
            }
            "symlink" => self.access(name, None, a(1), ret, Kind::Write),
            "symlinkat" => self.access(name, Some(a(1)), a(2), ret, Kind::Write),
            "newfstatat" | "fstatat64" | "faccessat" | "faccessat2" | "readlinkat" | "statx"
            | "name_to_handle_at" | "inotify_add_watch" => {
                let (dirfd, path) = if name == "inotify_add_watch" {
                    (None, a(1))
                } else {
                    (Some(a(0)), a(1))
                };
                self.access(name, dirfd, path, ret, Kind::Stat)
            }
            _ => self.unseen(name, args, ret),
        }
    }
}

/// Whether a `mount` with these flags leaves every path naming the file it
/// named: a change of propagation (`unshare -m` makes `/` private) or a
/// remount of options. Anything else (a bind, a new file system) maps a
/// directory onto other files.
fn keeps_paths(flags: &str) -> bool {
    const PROPAGATION: &[&str] = &["MS_PRIVATE", "MS_SLAVE", "MS_SHARED", "MS_UNBINDABLE"];
    const OPTIONS: &[&str] = &[
        "MS_REC",
        "MS_SILENT",
        "MS_RDONLY",
        "MS_NOSUID",
        "MS_NODEV",
        "MS_NOEXEC",
        "MS_NOATIME",
        "MS_NODIRATIME",
        "MS_RELATIME",
        "MS_STRICTATIME",
    ];
    let names: Vec<&str> = flags.split('|').map(str::trim).collect();
    let remount = names.contains(&"MS_REMOUNT");
    let propagation = names.iter().any(|f| PROPAGATION.contains(f));
    // A bind remount changes only the options of a bind made before.
    let known = |f: &&str| {
        PROPAGATION.contains(f)
            || OPTIONS.contains(f)
            || *f == "MS_REMOUNT"
            || (remount && *f == "MS_BIND")
    };
    (remount || propagation) && names.iter().all(known)
}

/// `inet:PORT` of an `AF_INET`/`AF_INET6` address strace printed (`sin_port=
/// htons(N)`, `sin6_port=htons(N)`): for a bind, any address (`inet:*` for
/// port 0); for a connect, only a loopback one (`127.…`, `::1`,
/// `::ffff:127.…`).
fn inet_port(arg: &str, bind: bool) -> Option<String> {
    let port = arg.split("_port=htons(").nth(1)?.split(')').next()?.trim();
    if bind {
        return Some(if port == "0" {
            "inet:*".into()
        } else {
            format!("inet:{port}")
        });
    }
    let loopback = arg.contains("inet_addr(\"127.")
        || arg.contains("\"::1\"")
        || arg.contains("\"::ffff:127.");
    loopback.then(|| format!("inet:{port}"))
}

/// What an open's flags make of its path.
fn open_kind(flags: &str) -> Kind {
    let f = |x: &str| flags.split(['|', ',', ' ', '{', '}', '=']).any(|t| t == x);
    if f("O_WRONLY") || f("O_CREAT") || f("O_TRUNC") || f("O_TMPFILE") {
        Kind::Write
    } else if f("O_DIRECTORY") {
        Kind::Dir
    } else {
        Kind::Read // O_RDONLY, and O_RDWR (it reads what is there)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Missing,
    OtherError,
    Unknown,
}

fn outcome(ret: &str) -> Outcome {
    let r = ret.trim();
    if r.starts_with('?') || r.is_empty() {
        return Outcome::Unknown;
    }
    match errno(r) {
        Some("ENOENT" | "ENOTDIR") => Outcome::Missing,
        Some(_) => Outcome::OtherError,
        None => Outcome::Ok,
    }
}

/// The error a failed call returned (`-1 ENOENT (No such file or directory)`).
fn errno(ret: &str) -> Option<&str> {
    let err = ret.trim().strip_prefix("-1 ")?;
    Some(err.split_whitespace().next().unwrap_or(""))
}

/// A quoted string strace cut short: `"…"...`.
fn is_truncated_string(tok: &str) -> bool {
    let t = tok.trim();
    t.starts_with('"') && t.ends_with("\"...")
}

/// `PID rest`, with an optional timestamp after the id.
fn split_pid(line: &str) -> Option<(u32, &str)> {
    let line = line.strip_prefix("[pid ").map_or(line, |l| l.trim_start());
    let end = line.find(|c: char| !c.is_ascii_digit())?;
    if end == 0 {
        return None;
    }
    let pid: u32 = line[..end].parse().ok()?;
    let mut rest = line[end..].trim_start_matches(']').trim_start();
    // -t / -tt / -ttt timestamps: digits, ':' and '.' before a space.
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        if let Some(sp) = rest.find(' ') {
            if rest[..sp]
                .chars()
                .all(|c| c.is_ascii_digit() || c == ':' || c == '.')
            {
                rest = rest[sp..].trim_start();
            }
        }
    }
    Some((pid, rest))
}

/// `name(args) = ret` → (name, top-level args, ret). `None` when the text is
/// not a whole call.
fn split_call(text: &str) -> Option<(String, Vec<String>, String)> {
    let open = text.find('(')?;
    let name = &text[..open];
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '?')
    {
        return None;
    }
    let (args, close) = split_top(&text[open + 1..], ')')?;
    let rest = text[open + 1 + close + 1..].trim_start();
    let ret = rest.strip_prefix('=')?.trim().to_owned();
    Some((name.to_owned(), args, ret))
}

/// Splits `s` at top-level commas up to the top-level `end`; returns the
/// parts (trimmed) and the offset of `end`.
fn split_top(s: &str, end: char) -> Option<(Vec<String>, usize)> {
    let b = s.as_bytes();
    let mut parts = Vec::new();
    let mut depth: i32 = 0;
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'<' if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') => {
                // An fd's path annotation: to its closing '>'.
                while i < b.len() && b[i] != b'>' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            c if depth == 0 && c == end as u8 => {
                let last = s[start..i].trim();
                if !last.is_empty() || !parts.is_empty() {
                    parts.push(last.to_owned());
                }
                return Some((parts, i));
            }
            b',' if depth == 0 => {
                parts.push(s[start..i].trim().to_owned());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `["a", "b"]` → the strings, and whether the array was printed whole.
fn parse_array(s: &str) -> (Vec<String>, bool) {
    let Some(inner) = s.trim().strip_prefix('[') else {
        return (Vec::new(), false);
    };
    let Some((parts, _)) = split_top(inner, ']') else {
        return (Vec::new(), false);
    };
    let mut out = Vec::new();
    let mut complete = true;
    for p in parts {
        match unquote(&p) {
            Some(v) => out.push(v),
            None => complete = false,
        }
    }
    (out, complete)
}

/// `3</path>` → ("3", Some("/path")), unescaped.
fn split_annotation(tok: &str) -> (&str, Option<String>) {
    match tok.find('<') {
        Some(i) if tok.ends_with('>') => {
            let inner = &tok[i + 1..tok.len() - 1];
            (
                &tok[..i],
                unescape(inner).map(|b| String::from_utf8_lossy(&b).into_owned()),
            )
        }
        _ => (tok, None),
    }
}

/// A quoted C string as strace prints it; `None` when truncated (`"…"...`),
/// not a string, or not UTF-8.
pub fn unquote(tok: &str) -> Option<String> {
    let t = tok.trim();
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    String::from_utf8(unescape(inner)?).ok()
}

fn unescape(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = *b.get(i + 1)?;
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'x' => {
                let h = s.get(i..i + 2)?;
                out.push(u8::from_str_radix(h, 16).ok()?);
                i += 2;
            }
            b'0'..=b'7' => {
                let mut v: u32 = u32::from(c - b'0');
                let mut k = 0;
                while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    k += 1;
                }
                out.push(u8::try_from(v).ok()?);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// The real path `-y` prints with a returned descriptor (`= 3</real/path>`).
fn returned_path(ret: &str) -> Option<String> {
    let r = ret.trim();
    if !r.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (_, ann) = split_annotation(r);
    ann.filter(|a| a.starts_with('/')).map(|a| paths::fold(&a))
}

fn leading_number(s: &str) -> Option<u32> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

fn clip(s: &str) -> String {
    let mut t: String = s.chars().take(120).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process's accesses as (path, kind).
    fn kinds(p: &Process) -> Vec<(&str, Kind)> {
        p.accesses
            .iter()
            .map(|a| (a.path.as_str(), a.kind))
            .collect()
    }

    const LOG: &str = r#"5356  execve("/usr/bin/ctest", ["ctest", "-j2"], 0x7ffe33190090 /* 35 vars */) = 0
5356  chdir("/tmp/st/build")            = 0
5356  clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7ff811764710) = 5357
5357  execve("/tmp/st/build/prog", ["/tmp/st/build/prog", "/tmp/st/src/data/a.txt"], 0x56379f1ac510 /* 36 vars */) = 0
5356  clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>
5358  openat(AT_FDCWD</tmp/st/build>, "rel/x.txt", O_RDONLY) = -1 ENOENT (No such file or directory)
5356  <... clone resumed>, child_tidptr=0x7ff811764710) = 5358
5357  openat(AT_FDCWD</tmp/st/build>, "/tmp/st/src/data/a.txt", O_RDONLY <unfinished ...>
5358  access("sub/y", R_OK) = 0
5357  <... openat resumed>)             = 4</tmp/st/src/data/a.txt>
5357  getdents64(5</tmp/st/src/da\74ta>, 0x5 /* 3 entries */, 32768) = 80
5358  chdir("../src")  = 0
5358  openat(AT_FDCWD, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/st/src/out.txt>
5357  +++ exited with 0 +++
5358  +++ killed by SIGSEGV (core dumped) +++
5356  +++ exited with 0 +++
"#;

    #[test]
    fn joins_resumed_calls_and_resolves_relative_paths_with_inherited_cwd() {
        let t = parse(LOG);
        assert!(t.problems.is_empty(), "{:?}", t.problems);
        assert_eq!(t.processes.len(), 3);
        let p7 = &t.processes[1];
        assert_eq!(p7.pid, 5357);
        assert_eq!(p7.parent, Some(0));
        assert_eq!(p7.execs[0].argv[1], "/tmp/st/src/data/a.txt");
        assert_eq!(p7.execs[0].cwd.as_deref(), Some("/tmp/st/build"));
        assert!(p7.accesses.contains(&Access {
            path: "/tmp/st/src/data/a.txt".into(),
            kind: Kind::Read
        }));
        assert!(p7.accesses.contains(&Access {
            path: "/tmp/st/src/da<ta".into(),
            kind: Kind::List
        }));
        assert_eq!(p7.exit, Some(Exit::Code(0)));
        let p8 = &t.processes[2];
        assert_eq!(p8.parent, Some(0), "{:?}", p8);
        assert!(p8.problems.is_empty(), "{:?}", p8.problems);
        assert_eq!(
            kinds(p8),
            vec![
                ("/tmp/st/build/rel/x.txt", Kind::Absent),
                ("/tmp/st/build/sub/y", Kind::Stat),
                ("/tmp/st/src", Kind::Dir),
                ("/tmp/st/src/out.txt", Kind::Write),
            ]
        );
        assert_eq!(p8.exit, Some(Exit::Signal("SIGSEGV".into())));
    }

    #[test]
    fn a_truncated_path_or_an_unannotated_listing_is_a_problem_of_its_process() {
        let t = parse(
            "7 openat(AT_FDCWD, \"/a/very/long\"..., O_RDONLY) = 3\n7 getdents64(3, 0x1, 100) = 0\n7 open(\"rel\", O_RDONLY) = 3\n",
        );
        assert_eq!(
            t.processes[0].problems.len(),
            3,
            "{:?}",
            t.processes[0].problems
        );
        assert!(t.processes[0].accesses.is_empty());
    }

    #[test]
    fn a_path_too_long_for_the_kernel_names_no_file() {
        // strace cuts a path only past PATH_MAX; the kernel refuses it unread.
        let long = format!("/tmp/{}", "a".repeat(4091));
        let t = parse(&format!(
            "7 openat(AT_FDCWD</b>, \"{long}\"..., O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 ENAMETOOLONG (File name too long)\n\
             7 stat(\"{long}\"..., 0x7ffd) = -1 ENAMETOOLONG (File name too long)\n\
             7 openat(AT_FDCWD</b>, \"{long}\"..., O_RDONLY) = -1 ENOENT (No such file or directory)\n"
        ));
        let p = &t.processes[0];
        assert!(p.accesses.is_empty(), "{:?}", p.accesses);
        assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
        assert!(p.problems[0].starts_with("line 3: openat: a path strace did not print whole"));
    }

    #[test]
    fn a_ring_or_a_file_handle_that_opened_is_a_problem_and_one_that_failed_is_not() {
        let t = parse(concat!(
            "7 io_uring_setup(4, {flags=0, sq_entries=4}) = 3<anon_inode:[io_uring]>\n",
            "8 io_uring_setup(4, 0x7ffd) = -1 EPERM (Operation not permitted)\n",
            "9 open_by_handle_at(3</m>, {handle_bytes=8, handle_type=1}, O_RDONLY) = 4</m/f>\n",
            "10 open_by_handle_at(3</m>, {handle_bytes=8, handle_type=1}, O_RDONLY) = -1 EPERM (Operation not permitted)\n",
        ));
        let problems: Vec<usize> = t.processes.iter().map(|p| p.problems.len()).collect();
        assert_eq!(problems, vec![1, 0, 1, 0], "{:?}", t.processes);
        assert!(t.processes.iter().all(|p| p.accesses.is_empty()));
    }

    #[test]
    fn a_new_root_or_a_bind_mount_is_a_problem_and_a_propagation_change_is_not() {
        // The first two lines are what `unshare -m sh -c 'mount --bind …'` printed.
        let t = parse(concat!(
            "7 mount(\"none\", \"/\", NULL, MS_REC|MS_PRIVATE, NULL) = 0\n",
            "8 mount(\"/tmp/mnt-t/real\", \"/tmp/mnt-t/view\", 0x56509122ffd0, MS_BIND, NULL) = 0\n",
            "9 mount(\"none\", \"/tmp/v\", NULL, MS_REMOUNT|MS_BIND|MS_RDONLY, NULL) = 0\n",
            "10 mount(\"tmpfs\", \"/tmp/t\", \"tmpfs\", 0, NULL) = 0\n",
            "11 chroot(\"/tmp/root\") = 0\n",
            "12 chroot(\"/tmp/root\") = -1 EPERM (Operation not permitted)\n",
            "13 pivot_root(\".\", \".\") = 0\n",
            "14 mount(\"/a\", \"/b\", NULL, MS_BIND, NULL) = -1 EPERM (Operation not permitted)\n",
        ));
        let problems: Vec<usize> = t.processes.iter().map(|p| p.problems.len()).collect();
        assert_eq!(problems, vec![0, 1, 0, 1, 1, 0, 1, 0], "{:?}", t.processes);
    }

    #[test]
    fn unix_and_loopback_binds_and_connects_are_kept_and_others_are_not() {
        // As strace -y printed them for Python's socket module.
        let t = parse(concat!(
            "7 bind(3<socket:[7290110]>, {sa_family=AF_UNIX, sun_path=@\"abstract\"}, 11) = 0\n",
            "7 bind(4<socket:[7290116]>, {sa_family=AF_INET, sin_port=htons(0), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0\n",
            "7 connect(3<socket:[7290094]>, {sa_family=AF_UNIX, sun_path=\"/tmp/t.sock\"}, 14) = 0\n",
            "7 connect(5<socket:[1]>, {sa_family=AF_UNIX, sun_path=\"/var/run/nscd/socket\"}, 110) = -1 ENOENT (No such file or directory)\n",
            "7 connect(6<socket:[2]>, {sa_family=AF_UNIX, sun_path=\"/tmp/s2\"}, 110) = -1 EINPROGRESS (Operation now in progress)\n",
            "7 connect(7<socket:[3]>, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0\n",
            "7 connect(8<socket:[4]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"::1\", &sin6_addr), sin6_scope_id=0}, 28) = 0\n",
            "7 connect(9<socket:[5]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"93.184.216.34\")}, 16) = 0\n",
        ));
        let p = &t.processes[0];
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(p.binds, vec!["@abstract".to_owned(), "inet:*".to_owned()]);
        assert_eq!(
            p.connects,
            vec![
                (3, "/tmp/t.sock".to_owned()),
                (5, "/tmp/s2".to_owned()),
                (6, "inet:8080".to_owned()),
                (7, "inet:443".to_owned())
            ]
        );
    }

    #[test]
    fn futimens_on_a_descriptor_is_no_path_and_no_problem() {
        // `cmake -E copy` (brotli's roundtrip tests) sets the copy's times through its fd.
        let t = parse(concat!(
            "7 openat(AT_FDCWD</b>, \"out.br\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</b/out.br>\n",
            "7 utimensat(3</b/out.br>, NULL, [{tv_sec=1, tv_nsec=0}, {tv_sec=1, tv_nsec=0}], 0) = 0\n",
        ));
        let p = &t.processes[0];
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert_eq!(kinds(p), vec![("/b/out.br", Kind::Write)]);
    }

    #[test]
    fn a_line_that_is_not_strace_f_and_a_log_cut_inside_a_call_are_problems() {
        let t = parse("openat(AT_FDCWD, \"x\", O_RDONLY) = 3\n");
        assert_eq!(t.problems.len(), 1);
        let t = parse("7 openat(AT_FDCWD</d>, \"x\", O_RDONLY <unfinished ...>\n");
        assert_eq!(t.processes[0].problems.len(), 1, "{:?}", t.processes[0]);
        let t = parse("7 openat(AT_FDCWD</d>, \"x\", O_RD");
        assert!(!t.problems.is_empty() || !t.processes[0].problems.is_empty());
    }

    #[test]
    fn a_child_keeps_the_directory_of_its_spawn_when_the_parent_moves_on_first() {
        // ctest enters the test's directory, spawns, and goes back before the child runs.
        let t = parse(concat!(
            "1 chdir(\"/b/tests\") = 0\n",
            "1 clone(child_stack=NULL, flags=SIGCHLD) = 2\n",
            "1 chdir(\"/b\") = 0\n",
            "2 execve(\"/b/tests/t\", [\"/b/tests/t\"], 0x1 /* 3 vars */) = 0\n",
            "2 openat(AT_FDCWD, \"in.txt\", O_RDONLY) = 3\n",
        ));
        let c = &t.processes[1];
        assert_eq!(c.execs[0].cwd.as_deref(), Some("/b/tests"));
        assert_eq!(c.accesses[1].path, "/b/tests/in.txt");
    }

    #[test]
    fn strace_5_lines_without_a_cwd_annotation_resolve_by_the_tracked_directory() {
        // strace 5.x: `AT_FDCWD` without `</dir>`; vfork; `-tt` timestamps; a failed exec
        // of a PATH search before the one that runs.
        let t = parse(concat!(
            "10 09:00:00.000001 chdir(\"/b\") = 0\n",
            "10 09:00:00.000002 vfork() = 11\n",
            "11 09:00:00.000003 execve(\"/usr/local/bin/t\", [\"t\", \"x\"], 0x1 /* 2 vars */) = -1 ENOENT (No such file or directory)\n",
            "11 09:00:00.000004 execve(\"/b/t\", [\"t\", \"x\"], 0x1 /* 2 vars */) = 0\n",
            "11 09:00:00.000005 openat(AT_FDCWD, \"data/x\", O_RDONLY|O_CLOEXEC) = 3</b/data/x>\n",
            "11 09:00:00.000006 newfstatat(AT_FDCWD, \"gone\", 0x7ffd, 0) = -1 ENOENT (No such file or directory)\n",
            "11 09:00:00.000007 +++ exited with 0 +++\n",
        ));
        let c = &t.processes[1];
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!(c.execs.len(), 2);
        assert!(!c.execs[0].ok && c.execs[1].ok);
        assert_eq!(c.execs[1].cwd.as_deref(), Some("/b"));
        assert_eq!(
            kinds(c),
            vec![
                ("/usr/local/bin/t", Kind::Absent),
                ("/b/t", Kind::Exec),
                ("/b/data/x", Kind::Read),
                ("/b/gone", Kind::Absent),
            ]
        );
        assert_eq!(c.exit, Some(Exit::Code(0)));
    }

    #[test]
    fn timestamps_and_clone_fs_threads_share_the_directory() {
        let t = parse(concat!(
            "1 12:00:00.000001 chdir(\"/w\") = 0\n",
            "1 12:00:00.000002 clone3({flags=CLONE_VM|CLONE_FS|CLONE_THREAD, exit_signal=0}, 88) = 2\n",
            "2 12:00:00.000003 chdir(\"/v\") = 0\n",
            "1 12:00:00.000004 open(\"f\", O_RDONLY) = 3</v/f>\n",
        ));
        assert!(t.processes.iter().all(|p| p.problems.is_empty()));
        assert_eq!(t.processes[0].accesses[1].path, "/v/f");
    }
}
