//! Ninja's build manifest (`build.ninja`, or `build-<Config>.ninja` for Ninja
//! Multi-Config, and every file they `include` or `subninja`), read as far as
//! ninja needs to know an edge's command: top-level variables, rules, edges
//! with their bindings, and scopes. The command of an output is evaluated as
//! ninja's `Edge::EvaluateCommand(true)` does (`src/graph.cc`, `src/eval_env.cc`,
//! `src/lexer.in.cc`, `src/manifest_parser.cc`), so its hash can be compared
//! with the one `.ninja_log` recorded (`ninja_log.rs`). Nothing is run.
//!
//! Anything this reader cannot follow (a syntax error, a missing include, a
//! file over the reading limits) is an error: the caller then cannot compare
//! commands and says so; it never guesses.

use std::borrow::Cow;
use std::collections::HashMap;

use super::Reader;
use crate::fasthash::FastSet;

/// A piece of an unevaluated string: text, or a variable reference.
#[derive(Clone, Debug)]
enum Piece<'a> {
    Text(&'a str),
    Var(&'a str),
}

type Eval<'a> = Vec<Piece<'a>>;

/// A rule's binding, kept past the file it was read from.
#[derive(Clone, Debug)]
enum OwnedPiece {
    Text(String),
    Var(String),
}

#[derive(Debug, Default)]
struct Scope {
    parent: Option<usize>,
    vars: HashMap<String, String>,
    rules: HashMap<String, usize>,
}

#[derive(Debug, Default)]
struct Rule {
    bindings: Vec<(String, Vec<OwnedPiece>)>,
}

impl Rule {
    fn get(&self, var: &str) -> Option<&[OwnedPiece]> {
        self.bindings
            .iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.as_slice())
    }
}

/// One edge while its command is evaluated: what ninja's `EdgeEnv` sees.
struct EdgeView<'e> {
    rule: &'e Rule,
    /// The edge's own bindings (evaluated), or `None`: it has none, and its
    /// scope's variables come first (ninja's `LookupWithFallback` on that env).
    own: Option<&'e [(&'e str, Cow<'e, str>)]>,
    scope: usize,
    ins: &'e [String],
    outs: &'e [String],
}

/// What the reader keeps while it goes through the manifest.
struct State<'w> {
    scopes: Vec<Scope>,
    rules: Vec<Rule>,
    /// Outputs whose command is wanted (`None`: every output).
    wanted: Option<&'w FastSet<&'w str>>,
    /// Outputs seen so far among the wanted ones (ninja rejects two edges
    /// building one output).
    seen: FastSet<String>,
    /// (scope, name) of each scope variable a command looked up (found or
    /// not): ninja evaluates commands after the whole manifest is read, this
    /// reader as it goes, so a later assignment to one of them would make the
    /// two differ. Such a manifest is refused (CMake writes none).
    looked_up: FastSet<(usize, String)>,
    /// The command and response-file content of the edge at hand, reused.
    buffers: (String, String),
    /// A command grew past [`MAX_COMMAND`].
    overflow: bool,
    /// Which edges are emitted, and how whole.
    mode: Mode,
}

/// What a walk of the manifest emits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Each wanted output of every non-phony edge, with its command
    /// ([`for_each_command`]).
    Commands,
    /// Every `CUSTOM_COMMAND` edge whole (all outputs, every input, its
    /// depfile), and no other ([`for_each_edge`]).
    CustomEdges,
    /// Every non-phony edge with all its outputs and its command, the
    /// `CUSTOM_COMMAND` edges whole ([`for_each_command_and_custom_edge`]).
    Both,
}

/// The longest command (with its response file) followed: far beyond any
/// real one, and a bound on what a forged manifest can make us build.
const MAX_COMMAND: usize = 64 << 20;

const PHONY: usize = 0;

/// Reads `file` (relative to `build_root`, where ninja runs, or absolute) and
/// everything it includes, and calls `emit(output, command)` for every output
/// of a non-phony edge that is in `wanted` (every output, with `None`), with
/// the command ninja would run for it now: `Edge::EvaluateCommand(true)`,
/// `;rspfile=CONTENT` appended when the rule has a response file (what ninja
/// hashes into `.ninja_log`). Returns how many edges the manifest has and
/// its top-level `builddir` (where ninja keeps its logs), if set.
pub fn for_each_command(
    reader: &Reader,
    build_root: &str,
    file: &str,
    wanted: Option<&FastSet<&str>>,
    mut emit: impl FnMut(&str, &str),
) -> Result<(usize, Option<String>), ManifestError> {
    let mut st = State {
        scopes: vec![Scope::default()],
        rules: vec![Rule::default()],
        wanted,
        seen: FastSet::default(),
        looked_up: FastSet::default(),
        buffers: (String::new(), String::new()),
        overflow: false,
        mode: Mode::Commands,
    };
    st.scopes[0].rules.insert("phony".into(), PHONY);
    let mut edges = 0;
    let mut each = |e: &Edge<'_>| {
        for o in e.outs {
            emit(o, e.command);
        }
    };
    st.parse_file(reader, build_root, file, 0, 0, &mut edges, &mut each)?;
    Ok((edges, st.scopes[0].vars.remove("builddir")))
}

/// One walk for both readers of the manifest: calls `emit` for every
/// non-phony edge with all its outputs and the command ninja would run
/// (as [`for_each_command`] gives it per output), and with every input and
/// the depfile of each `CUSTOM_COMMAND` edge (as [`for_each_edge`] gives
/// them; other edges' `ins` are empty). Returns what [`for_each_command`]
/// returns.
pub fn for_each_command_and_custom_edge(
    reader: &Reader,
    build_root: &str,
    file: &str,
    mut emit: impl FnMut(&Edge<'_>),
) -> Result<(usize, Option<String>), ManifestError> {
    let mut st = State {
        scopes: vec![Scope::default()],
        rules: vec![Rule::default()],
        wanted: None,
        seen: FastSet::default(),
        looked_up: FastSet::default(),
        buffers: (String::new(), String::new()),
        overflow: false,
        mode: Mode::Both,
    };
    st.scopes[0].rules.insert("phony".into(), PHONY);
    let mut edges = 0;
    st.parse_file(reader, build_root, file, 0, 0, &mut edges, &mut emit)?;
    Ok((edges, st.scopes[0].vars.remove("builddir")))
}

/// Why a Ninja manifest cannot be followed.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// A statement ninja would reject, or one this reader does not follow.
    #[error("{0}")]
    Syntax(String),
    /// The statement at `line` of `file` (as the build tree names it).
    #[error("{file}: line {line}: {source}")]
    At {
        /// The manifest file.
        file: String,
        /// Its line.
        line: usize,
        /// What is wrong there.
        source: Box<ManifestError>,
    },
    /// A manifest file holds bytes that are not UTF-8.
    #[error("{path}: not valid UTF-8")]
    NotUtf8 {
        /// The file.
        path: String,
    },
    /// A manifest file cannot be read within the limits.
    #[error("{path}: {why}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        why: super::ReadError,
    },
    /// `include`/`subninja` nested more than 32 deep.
    #[error("{file}: includes nested more than 32 deep")]
    NestedTooDeep {
        /// The file that would be read next.
        file: String,
    },
}

/// An [`Edge`] kept past the walk.
#[derive(Clone, Debug)]
pub struct OwnedEdge {
    /// The rule's name.
    pub rule: String,
    /// Every output, canonical, as written.
    pub outs: Vec<String>,
    /// Every input, canonical.
    pub ins: Vec<String>,
    /// The evaluated command.
    pub command: String,
    /// The evaluated `depfile` binding, if any.
    pub depfile: Option<String>,
}

impl OwnedEdge {
    /// A copy of `e`.
    pub fn of(e: &Edge<'_>) -> Self {
        OwnedEdge {
            rule: e.rule.to_owned(),
            outs: e.outs.to_vec(),
            ins: e.ins.to_vec(),
            command: e.command.to_owned(),
            depfile: e.depfile.map(str::to_owned),
        }
    }

    /// The edge as a walk gives it.
    pub fn edge(&self) -> Edge<'_> {
        Edge {
            rule: &self.rule,
            outs: &self.outs,
            ins: &self.ins,
            command: &self.command,
            depfile: self.depfile.as_deref(),
        }
    }
}

/// One edge of the manifest as [`for_each_edge`] gives it.
pub struct Edge<'e> {
    /// The rule's name.
    pub rule: &'e str,
    /// Every output (explicit and implicit), canonical, as written.
    pub outs: &'e [String],
    /// Every input (explicit, implicit, order-only and validation), canonical.
    pub ins: &'e [String],
    /// The evaluated command.
    pub command: &'e str,
    /// The evaluated `depfile` binding, if any.
    pub depfile: Option<&'e str>,
}

/// CMake's rule for custom commands in Ninja manifests.
pub const CUSTOM_COMMAND: &str = "CUSTOM_COMMAND";

/// Reads `file` as [`for_each_command`] does and calls `emit` for every
/// `CUSTOM_COMMAND` edge (CMake's custom commands), with all its outputs and
/// inputs; every other edge is skipped unevaluated.
pub fn for_each_edge(
    reader: &Reader,
    build_root: &str,
    file: &str,
    mut emit: impl FnMut(&Edge<'_>),
) -> Result<usize, ManifestError> {
    let mut st = State {
        scopes: vec![Scope::default()],
        rules: vec![Rule::default()],
        wanted: None,
        seen: FastSet::default(),
        looked_up: FastSet::default(),
        buffers: (String::new(), String::new()),
        overflow: false,
        mode: Mode::CustomEdges,
    };
    st.scopes[0].rules.insert("phony".into(), PHONY);
    let mut edges = 0;
    st.parse_file(reader, build_root, file, 0, 0, &mut edges, &mut emit)?;
    Ok(edges)
}

impl State<'_> {
    // ------------------------------------------------------------- evaluation

    fn scope_lookup(&self, mut s: Option<usize>, var: &str) -> Option<&str> {
        while let Some(i) = s {
            if let Some(v) = self.scopes[i].vars.get(var) {
                return Some(v);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    /// ninja's `EdgeEnv::LookupVariable` (shell-escaped `$in` / `$out`),
    /// appended to `out`. Stops (and sets `overflow`) once `out` is longer
    /// than [`MAX_COMMAND`]: rule variables that each name another twice
    /// would otherwise double the work at every level.
    fn binding(&mut self, e: &EdgeView<'_>, var: &str, depth: usize, out: &mut String) {
        if self.overflow {
            return;
        }
        if out.len() > MAX_COMMAND {
            self.overflow = true;
            return;
        }
        match var {
            "in" => return path_list(e.ins, ' ', out),
            "in_newline" => return path_list(e.ins, '\n', out),
            "out" => return path_list(e.outs, ' ', out),
            _ => {}
        }
        let (own, parent) = match e.own {
            Some(own) => (
                own.iter().find(|(k, _)| *k == var).map(|(_, v)| v.as_ref()),
                Some(e.scope),
            ),
            None => {
                // The scope's own variables come before the rule's: a later
                // assignment there would change the command too.
                self.looked_up.insert((e.scope, var.to_owned()));
                (
                    self.scopes[e.scope].vars.get(var).map(String::as_str),
                    self.scopes[e.scope].parent,
                )
            }
        };
        if let Some(v) = own {
            out.push_str(v);
            return;
        }
        if let Some(ev) = e.rule.get(var) {
            // A rule variable naming another: ninja rejects cycles; a bound
            // depth keeps a forged manifest from recursing without end.
            if depth > 64 {
                return;
            }
            for p in ev {
                match p {
                    OwnedPiece::Text(t) => out.push_str(t),
                    OwnedPiece::Var(v) => self.binding(e, v, depth + 1, out),
                }
            }
            return;
        }
        let mut s = parent;
        while let Some(i) = s {
            self.looked_up.insert((i, var.to_owned()));
            if self.scopes[i].vars.contains_key(var) {
                break;
            }
            s = self.scopes[i].parent;
        }
        if let Some(v) = self.scope_lookup(parent, var) {
            out.push_str(v);
        }
    }

    /// An edge binding, a path or a top-level value: evaluated now, in the
    /// edge's own bindings (paths only) and then the scope chain.
    fn eval_now(
        &self,
        ev: &Eval<'_>,
        scope: usize,
        own: Option<&[(&str, Cow<'_, str>)]>,
    ) -> String {
        let mut out = String::new();
        for p in ev {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => {
                    let local = own
                        .and_then(|o| o.iter().find(|(k, _)| k == v))
                        .map(|(_, x)| x.as_ref());
                    if let Some(x) = local.or_else(|| self.scope_lookup(Some(scope), v)) {
                        out.push_str(x);
                    }
                }
            }
        }
        out
    }

    fn assign(&mut self, scope: usize, key: &str, value: String) -> Result<(), ManifestError> {
        if self.looked_up.contains(&(scope, key.to_owned())) {
            return Err(ManifestError::Syntax(format!(
                "variable {key:?} is set after an edge whose command uses it (ninja evaluates commands after the whole manifest; not followed)"
            )));
        }
        self.scopes[scope].vars.insert(key.to_owned(), value);
        Ok(())
    }

    // ---------------------------------------------------------------- parsing

    #[allow(clippy::too_many_arguments)]
    fn parse_file(
        &mut self,
        reader: &Reader,
        build_root: &str,
        file: &str,
        scope: usize,
        depth: usize,
        edges: &mut usize,
        emit: &mut dyn FnMut(&Edge<'_>),
    ) -> Result<(), ManifestError> {
        if depth > 32 {
            return Err(ManifestError::NestedTooDeep {
                file: file.to_owned(),
            });
        }
        let path = crate::paths::join_fold(build_root, file);
        let shown = crate::paths::relative_to(&path, build_root).to_owned();
        // In pieces that end where a statement does: a manifest can be tens
        // of megabytes, and only one statement at a time is ever needed.
        let mut pending: Vec<u8> = Vec::new();
        let mut line_base = 0usize;
        let mut segment =
            |st: &mut Self, bytes: &[u8], line_base: &mut usize| -> Result<(), ManifestError> {
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| ManifestError::NotUtf8 { path: path.clone() })?;
                let mut lx = Lexer {
                    s: text,
                    at: 0,
                    line_base: *line_base,
                };
                st.parse_statements(reader, build_root, &mut lx, scope, depth, edges, emit)
                    .map_err(|e| ManifestError::At {
                        file: shown.clone(),
                        line: lx.line(),
                        source: Box::new(e),
                    })?;
                *line_base += count_newlines(bytes);
                Ok(())
            };
        reader
            .read_chunks(&path, 1 << 20, |chunk| {
                pending.extend_from_slice(chunk);
                let cut = statement_boundary(&pending);
                if cut > 0 {
                    segment(self, &pending[..cut], &mut line_base)?;
                    pending.drain(..cut);
                }
                Ok(())
            })
            .map_err(|e| match e {
                super::Chunked::Read(why) => ManifestError::Unreadable {
                    path: path.clone(),
                    why,
                },
                super::Chunked::Stopped(e) => e,
            })?;
        segment(self, &pending, &mut line_base)
    }

    #[allow(clippy::too_many_arguments)]
    fn parse_statements<'a>(
        &mut self,
        reader: &Reader,
        build_root: &str,
        lx: &mut Lexer<'a>,
        scope: usize,
        depth: usize,
        edges: &mut usize,
        emit: &mut dyn FnMut(&Edge<'_>),
    ) -> Result<(), ManifestError> {
        loop {
            match lx.statement()? {
                Stmt::Eof => return Ok(()),
                Stmt::Blank => {}
                Stmt::Indent => return Err(ManifestError::Syntax("unexpected indentation".into())),
                Stmt::Word(w) => match w {
                    "rule" => self.parse_rule(lx, scope)?,
                    "build" => {
                        *edges += 1;
                        self.parse_edge(lx, scope, emit)?;
                    }
                    "pool" => {
                        lx.ident()?;
                        lx.newline()?;
                        while lx.peek_indent() {
                            lx.binding()?;
                        }
                    }
                    "default" => {
                        while !lx.path()?.is_empty() {}
                        lx.newline()?;
                    }
                    "include" | "subninja" => {
                        let p = lx.path()?;
                        if p.is_empty() {
                            return Err(ManifestError::Syntax(format!("{w} without a path")));
                        }
                        lx.newline()?;
                        let file = self.eval_now(&p, scope, None);
                        let target = if w == "subninja" {
                            self.scopes.push(Scope {
                                parent: Some(scope),
                                ..Scope::default()
                            });
                            self.scopes.len() - 1
                        } else {
                            scope
                        };
                        self.parse_file(reader, build_root, &file, target, depth + 1, edges, emit)?;
                    }
                    _ => {
                        // A top-level binding, evaluated now in its scope.
                        lx.expect_equals()?;
                        let v = lx.value()?;
                        let value = self.eval_now(&v, scope, None);
                        self.assign(scope, w, value)?;
                    }
                },
            }
        }
    }

    fn parse_rule(&mut self, lx: &mut Lexer<'_>, scope: usize) -> Result<(), ManifestError> {
        let name = lx.ident()?;
        lx.newline()?;
        if self.scopes[scope].rules.contains_key(name) {
            return Err(ManifestError::Syntax(format!("duplicate rule {name:?}")));
        }
        let mut rule = Rule::default();
        while lx.peek_indent() {
            let (k, v) = lx.binding()?;
            let owned = v
                .into_iter()
                .map(|p| match p {
                    Piece::Text(t) => OwnedPiece::Text(t.to_owned()),
                    Piece::Var(v) => OwnedPiece::Var(v.to_owned()),
                })
                .collect();
            rule.bindings.retain(|(key, _)| key != k);
            rule.bindings.push((k.to_owned(), owned));
        }
        self.rules.push(rule);
        let id = self.rules.len() - 1;
        self.scopes[scope].rules.insert(name.to_owned(), id);
        Ok(())
    }

    fn lookup_rule(&self, mut s: Option<usize>, name: &str) -> Option<usize> {
        while let Some(i) = s {
            if let Some(&r) = self.scopes[i].rules.get(name) {
                return Some(r);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    fn parse_edge(
        &mut self,
        lx: &mut Lexer<'_>,
        scope: usize,
        emit: &mut dyn FnMut(&Edge<'_>),
    ) -> Result<(), ManifestError> {
        let (outs, n_explicit) = edge_outputs(lx)?;
        // Outputs written as plain text (CMake's are) that nobody wants: the
        // rest of the statement is only checked for where it ends.
        if let Some(w) = self.wanted {
            let plain = outs
                .iter()
                .all(|p| p.iter().all(|x| matches!(x, Piece::Text(_))));
            if plain
                && !outs
                    .iter()
                    .any(|p| w.contains(canonicalize(&concat(p)).as_str()))
            {
                return lx.skip_statement();
            }
        }
        if !lx.eat(b":") {
            return Err(ManifestError::Syntax("expected ':'".into()));
        }
        let rule_name = lx.ident()?;
        let rule = self
            .lookup_rule(Some(scope), rule_name)
            .ok_or_else(|| ManifestError::Syntax(format!("unknown build rule {rule_name:?}")))?;
        // Custom commands only: the rest of the statement is skipped unread.
        if self.mode == Mode::CustomEdges && rule_name != CUSTOM_COMMAND {
            return lx.skip_statement();
        }
        // This edge is wanted whole: all its inputs, its depfile.
        let whole = self.mode != Mode::Commands && rule_name == CUSTOM_COMMAND;
        let mut ins = Vec::new();
        while let Some(p) = lx.path_nonempty()? {
            ins.push(p);
        }
        // Implicit, order-only and validation inputs are not part of `$in`.
        let mut other_ins = Vec::new();
        while lx.eat(b"|@") || lx.eat(b"||") || lx.eat(b"|") {
            while let Some(p) = lx.path_nonempty()? {
                if whole {
                    other_ins.push(p);
                }
            }
        }
        lx.newline()?;
        let mut own: Option<Vec<(&str, Cow<'_, str>)>> = None;
        while lx.peek_indent() {
            let (k, v) = lx.binding()?;
            // Edge bindings are evaluated in the enclosing scope, not the edge's.
            let value = match v.as_slice() {
                [] => Cow::Borrowed(""),
                [Piece::Text(t)] => Cow::Borrowed(*t),
                _ => Cow::Owned(self.eval_now(&v, scope, None)),
            };
            let own = own.get_or_insert_with(Vec::new);
            own.retain(|(key, _)| *key != k);
            own.push((k, value));
        }
        let paths = |st: &State<'_>, ps: &[Eval<'_>]| -> Vec<String> {
            ps.iter()
                .map(|p| match p.as_slice() {
                    [Piece::Text(t)] => canonicalize(t),
                    _ => canonicalize(&st.eval_now(p, scope, own.as_deref())),
                })
                .collect()
        };
        let all_outs = paths(self, &outs);
        let wanted: Vec<&String> = all_outs
            .iter()
            .filter(|o| self.wanted.is_none_or(|w| w.contains(o.as_str())))
            .collect();
        for o in &wanted {
            if !self.seen.insert((*o).clone()) {
                return Err(ManifestError::Syntax(format!(
                    "multiple rules generate {o}"
                )));
            }
        }
        if wanted.is_empty() || rule == PHONY {
            return Ok(());
        }
        let ins = paths(self, &ins);
        let rules = std::mem::take(&mut self.rules);
        let view = EdgeView {
            rule: &rules[rule],
            own: own.as_deref(),
            scope,
            ins: &ins,
            outs: &all_outs[..n_explicit],
        };
        let (mut cmd, mut rsp) = std::mem::take(&mut self.buffers);
        cmd.clear();
        rsp.clear();
        self.binding(&view, "command", 0, &mut cmd);
        self.binding(&view, "rspfile_content", 0, &mut rsp);
        let mut depfile = String::new();
        if whole {
            self.binding(&view, "depfile", 0, &mut depfile);
        }
        self.rules = rules;
        if self.overflow || cmd.len() + rsp.len() > MAX_COMMAND {
            return Err(ManifestError::Syntax(format!(
                "a command longer than {MAX_COMMAND} bytes (not followed)"
            )));
        }
        if !rsp.is_empty() {
            cmd.push_str(";rspfile=");
            cmd.push_str(&rsp);
        }
        if whole {
            let mut all_ins = ins.clone();
            all_ins.extend(paths(self, &other_ins));
            let rule_name = rule_name.to_owned();
            emit(&Edge {
                rule: &rule_name,
                outs: &all_outs,
                ins: &all_ins,
                command: &cmd,
                depfile: (!depfile.is_empty()).then_some(depfile.as_str()),
            });
        } else if self.mode == Mode::Both {
            let rule_name = rule_name.to_owned();
            emit(&Edge {
                rule: &rule_name,
                outs: &all_outs,
                ins: &[],
                command: &cmd,
                depfile: None,
            });
        } else {
            for o in wanted {
                emit(&Edge {
                    rule: "",
                    outs: std::slice::from_ref(o),
                    ins: &[],
                    command: &cmd,
                    depfile: None,
                });
            }
        }
        self.buffers = (cmd, rsp);
        Ok(())
    }
}

/// A build statement's outputs, explicit then implicit (after `|`), and
/// how many are explicit.
fn edge_outputs<'a>(lx: &mut Lexer<'a>) -> Result<(Vec<Eval<'a>>, usize), ManifestError> {
    let mut outs = Vec::new();
    while let Some(p) = lx.path_nonempty()? {
        outs.push(p);
    }
    let n_explicit = outs.len();
    if lx.eat(b"|") {
        while let Some(p) = lx.path_nonempty()? {
            outs.push(p);
        }
    }
    if outs.is_empty() {
        return Err(ManifestError::Syntax("expected a path".into()));
    }
    Ok((outs, n_explicit))
}

fn concat(ev: &Eval<'_>) -> String {
    let mut s = String::new();
    for p in ev {
        if let Piece::Text(t) = p {
            s.push_str(t);
        }
    }
    s
}

/// `$in` / `$out`: paths joined by `sep`, each shell-escaped as ninja does.
fn path_list(paths: &[String], sep: char, out: &mut String) {
    for (i, p) in paths.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        shell_escape(p, out);
    }
}

/// ninja's `GetShellEscapedString` (POSIX): as is when every byte is shell
/// safe, otherwise single-quoted with each `'` written `'\''`.
fn shell_escape(s: &str, out: &mut String) {
    let safe = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-' | b'.' | b'/');
    if s.bytes().all(safe) {
        out.push_str(s);
        return;
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\'");
        }
        out.push(c);
    }
    out.push('\'');
}

/// ninja's `CanonicalizePath` (POSIX): `.` components and repeated slashes
/// removed, `..` taken back over a preceding component when there is one.
pub fn canonicalize(p: &str) -> String {
    if !p.contains("//")
        && !p.contains("./")
        && !p.ends_with('.')
        && !p.ends_with('/')
        && !p.is_empty()
    {
        return p.to_owned(); // already canonical (the common case)
    }
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    let mut kept_up = 0; // leading `..` components that stay
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." if parts.len() > kept_up => {
                parts.pop();
            }
            ".." => {
                parts.push("..");
                kept_up += 1;
            }
            _ => parts.push(c),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

// ------------------------------------------------------------------- lexer

enum Stmt<'a> {
    Eof,
    Blank,
    Indent,
    Word(&'a str),
}

struct Lexer<'a> {
    s: &'a str,
    at: usize,
    /// Lines before this piece of the file (for error messages).
    line_base: usize,
}

fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn simple_var_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')
}

impl<'a> Lexer<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn line(&self) -> usize {
        1 + self.line_base
            + self.bytes()[..self.at.min(self.s.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    fn byte(&self, i: usize) -> Option<u8> {
        self.bytes().get(i).copied()
    }

    /// Spaces and `$`-newline continuations between tokens.
    fn eat_space(&mut self) {
        loop {
            match (self.peek(), self.byte(self.at + 1)) {
                (Some(b' '), _) => self.at += 1,
                (Some(b'$'), Some(b'\n')) => self.at += 2,
                (Some(b'$'), Some(b'\r')) if self.byte(self.at + 2) == Some(b'\n') => self.at += 3,
                _ => return,
            }
        }
    }

    /// The start of a statement: a keyword or variable name, a blank or
    /// comment line, indentation (an error here), or the end.
    fn statement(&mut self) -> Result<Stmt<'a>, ManifestError> {
        let start = self.at;
        while self.peek() == Some(b' ') {
            self.at += 1;
        }
        match self.peek() {
            None => Ok(Stmt::Eof),
            Some(b'#') => {
                self.skip_line_raw();
                Ok(Stmt::Blank)
            }
            Some(b'\n') => {
                self.at += 1;
                Ok(Stmt::Blank)
            }
            Some(b'\r') if self.byte(self.at + 1) == Some(b'\n') => {
                self.at += 2;
                Ok(Stmt::Blank)
            }
            Some(_) if self.at > start => Ok(Stmt::Indent),
            Some(_) => Ok(Stmt::Word(self.ident()?)),
        }
    }

    /// To just past the next newline (a comment: no escapes).
    fn skip_line_raw(&mut self) {
        match memchr_nl(&self.bytes()[self.at..]) {
            Some(i) => self.at += i + 1,
            None => self.at = self.s.len(),
        }
    }

    /// To just past the newline that ends this logical line (`$\n` continues
    /// it; `$$` is an escaped dollar).
    fn skip_logical_line(&mut self) {
        let b = self.bytes();
        while self.at < b.len() {
            match b[self.at] {
                b'$' => self.at += 2,
                b'\n' => {
                    self.at += 1;
                    return;
                }
                _ => self.at += 1,
            }
        }
        self.at = self.at.min(b.len());
    }

    /// The rest of a statement not needed: its line and its bindings.
    fn skip_statement(&mut self) -> Result<(), ManifestError> {
        self.skip_logical_line();
        while self.peek_indent() {
            self.skip_logical_line();
        }
        Ok(())
    }

    fn ident(&mut self) -> Result<&'a str, ManifestError> {
        let start = self.at;
        while self.peek().is_some_and(ident_byte) {
            self.at += 1;
        }
        if self.at == start {
            return Err(ManifestError::Syntax("expected a name".into()));
        }
        let w = &self.s[start..self.at];
        self.eat_space();
        Ok(w)
    }

    fn eat(&mut self, tok: &[u8]) -> bool {
        if self.bytes()[self.at..].starts_with(tok) {
            // `|` must not be the start of `||` or `|@`.
            if tok == b"|" && matches!(self.byte(self.at + 1), Some(b'|') | Some(b'@')) {
                return false;
            }
            self.at += tok.len();
            self.eat_space();
            true
        } else {
            false
        }
    }

    fn expect_equals(&mut self) -> Result<(), ManifestError> {
        if self.eat(b"=") {
            Ok(())
        } else {
            Err(ManifestError::Syntax("expected '='".into()))
        }
    }

    fn newline(&mut self) -> Result<(), ManifestError> {
        self.eat_space();
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.at += 1;
                Ok(())
            }
            Some(b'\r') if self.byte(self.at + 1) == Some(b'\n') => {
                self.at += 2;
                Ok(())
            }
            Some(b'#') => Err(ManifestError::Syntax(
                "comments must be on their own line".into(),
            )),
            Some(_) => Err(ManifestError::Syntax("expected a newline".into())),
        }
    }

    /// An indented line follows (a binding of the statement above); comment
    /// lines in between are skipped, as ninja's lexer skips them.
    fn peek_indent(&mut self) -> bool {
        loop {
            let mut i = self.at;
            while self.byte(i) == Some(b' ') {
                i += 1;
            }
            match self.byte(i) {
                Some(b'#') => {
                    self.at = i;
                    self.skip_line_raw();
                }
                None | Some(b'\n') => return false,
                Some(b'\r') if self.byte(i + 1) == Some(b'\n') => return false,
                _ if i == self.at => return false,
                _ => {
                    self.at = i;
                    return true;
                }
            }
        }
    }

    fn binding(&mut self) -> Result<(&'a str, Eval<'a>), ManifestError> {
        let k = self.ident()?;
        self.expect_equals()?;
        Ok((k, self.value()?))
    }

    fn value(&mut self) -> Result<Eval<'a>, ManifestError> {
        self.eval_string(false)
    }

    fn path(&mut self) -> Result<Eval<'a>, ManifestError> {
        self.eval_string(true)
    }

    fn path_nonempty(&mut self) -> Result<Option<Eval<'a>>, ManifestError> {
        let p = self.path()?;
        Ok((!p.is_empty()).then_some(p))
    }

    /// ninja's `Lexer::ReadEvalString`.
    fn eval_string(&mut self, path: bool) -> Result<Eval<'a>, ManifestError> {
        let b = self.bytes();
        let mut out: Eval<'a> = Vec::new();
        loop {
            // A run of plain text.
            let start = self.at;
            self.at += plain_run(&b[self.at..], path);
            if self.at > start {
                out.push(Piece::Text(&self.s[start..self.at]));
            }
            let Some(c) = b.get(self.at).copied() else {
                if path {
                    break;
                }
                return Err(ManifestError::Syntax("unexpected end of file".into()));
            };
            match c {
                b'$' => {
                    let next = b.get(self.at + 1).copied();
                    match next {
                        Some(b'$') => {
                            out.push(Piece::Text("$"));
                            self.at += 2;
                        }
                        Some(b' ') => {
                            out.push(Piece::Text(" "));
                            self.at += 2;
                        }
                        Some(b':') => {
                            out.push(Piece::Text(":"));
                            self.at += 2;
                        }
                        Some(b'\n') => {
                            self.at += 2;
                            while self.peek() == Some(b' ') {
                                self.at += 1;
                            }
                        }
                        Some(b'\r') if b.get(self.at + 2) == Some(&b'\n') => {
                            self.at += 3;
                            while self.peek() == Some(b' ') {
                                self.at += 1;
                            }
                        }
                        Some(b'{') => {
                            let start = self.at + 2;
                            let mut i = start;
                            while b.get(i).copied().is_some_and(ident_byte) {
                                i += 1;
                            }
                            if i == start || b.get(i) != Some(&b'}') {
                                return Err(ManifestError::Syntax(
                                    "bad $-escape (literal $ must be written as $$)".into(),
                                ));
                            }
                            out.push(Piece::Var(&self.s[start..i]));
                            self.at = i + 1;
                        }
                        Some(c) if simple_var_byte(c) => {
                            let start = self.at + 1;
                            let mut i = start;
                            while b.get(i).copied().is_some_and(simple_var_byte) {
                                i += 1;
                            }
                            out.push(Piece::Var(&self.s[start..i]));
                            self.at = i;
                        }
                        _ => {
                            return Err(ManifestError::Syntax(
                                "bad $-escape (literal $ must be written as $$)".into(),
                            ))
                        }
                    }
                }
                b'\n' => {
                    if !path {
                        self.at += 1;
                    }
                    break;
                }
                b'\r' if b.get(self.at + 1) == Some(&b'\n') => {
                    if !path {
                        self.at += 2;
                    }
                    break;
                }
                b'\r' | 0 => return Err(ManifestError::Syntax("unexpected control byte".into())),
                _ => break, // a path ends at ' ', ':' or '|'
            }
        }
        if path {
            self.eat_space();
        }
        Ok(out)
    }
}

/// Each byte of `x` that is zero, as its high bit (exact, no false positives).
fn zero_bytes(x: u64) -> u64 {
    const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LO7).wrapping_add(LO7)) | x | LO7)
}

fn splat(c: u8) -> u64 {
    u64::from(c) * 0x0101_0101_0101_0101
}

/// How many bytes at the start of `b` are plain text of a value (not `$`, a
/// newline, `\r` or NUL) or, with `path`, of a path (nor ' ', ':', '|'):
/// eight bytes at a time, most of a manifest being long flag lists.
fn plain_run(b: &[u8], path: bool) -> usize {
    let mut i = 0;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let mut hit = zero_bytes(w ^ splat(b'$'))
            | zero_bytes(w ^ splat(b'\n'))
            | zero_bytes(w ^ splat(b'\r'))
            | zero_bytes(w);
        if path {
            hit |= zero_bytes(w ^ splat(b' '))
                | zero_bytes(w ^ splat(b':'))
                | zero_bytes(w ^ splat(b'|'));
        }
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if matches!(c, b'$' | b'\n' | b'\r' | 0) || (path && matches!(c, b' ' | b':' | b'|')) {
            break;
        }
        i += 1;
    }
    i
}

/// The number of newlines in `b`, eight bytes at a time.
fn count_newlines(b: &[u8]) -> usize {
    let mut chunks = b.chunks_exact(8);
    let mut n = 0;
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        n += zero_bytes(w ^ splat(b'\n')).count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|&&c| c == b'\n').count()
}

/// The end of the last complete statement in `b` (0: none yet): just past a
/// newline that no `$` escapes (an even run of `$` before it) and that a
/// name follows, which only a new statement can start with (not a binding,
/// a comment, which may sit inside a binding block, or a blank line).
fn statement_boundary(b: &[u8]) -> usize {
    let mut i = b.len();
    while i > 0 {
        i -= 1;
        if b[i] != b'\n' || !b.get(i + 1).copied().is_some_and(ident_byte) {
            continue;
        }
        let dollars = b[..i].iter().rev().take_while(|&&c| c == b'$').count();
        if dollars % 2 == 0 {
            return i + 1;
        }
    }
    0
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Limits;

    /// Every output's command, as `for_each_command` gives it.
    struct Manifest(std::collections::BTreeMap<String, String>);

    impl Manifest {
        fn command_of(&self, o: &str) -> Option<&str> {
            self.0.get(o).map(String::as_str)
        }
    }

    fn load(files: &[(&str, &str)], top: &str) -> Result<Manifest, ManifestError> {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let root = dir.path().to_str().expect("utf-8").to_owned();
        let mut all = std::collections::BTreeMap::new();
        for_each_command(&Reader::new(Limits::default()), &root, top, None, |o, c| {
            all.insert(o.to_owned(), c.to_owned());
        })?;
        Ok(Manifest(all))
    }

    #[test]
    fn a_cmake_style_compile_edge_evaluates_as_ninja_does() {
        let m = load(
            &[
                (
                    "build.ninja",
                    "ninja_required_version = 1.5\n# comment\ninclude CMakeFiles/rules.ninja\n\n\
                     build CMakeFiles/t.dir/a$ b.cpp.o: CXX_COMPILER__t_Debug /src/a$ b.cpp || order\n  \
                     DEFINES = -DX=\\\"y\\\"\n  DEP_FILE = CMakeFiles/t.dir/a$ b.cpp.o.d\n  FLAGS = -g $\n      -O0\n  \
                     INCLUDES = -I/src/inc\n  OBJECT_DIR = CMakeFiles/t.dir\n\nbuild order: phony\n",
                ),
                (
                    "CMakeFiles/rules.ninja",
                    "rule CXX_COMPILER__t_Debug\n  depfile = $DEP_FILE\n  deps = gcc\n  \
                     command = ${LAUNCHER}/usr/bin/c++ $DEFINES $INCLUDES $FLAGS -MD -MT $out -MF $DEP_FILE -o $out -c $in\n  \
                     description = Building CXX object $out\n",
                ),
            ],
            "build.ninja",
        )
        .unwrap();
        assert_eq!(
            m.command_of("CMakeFiles/t.dir/a b.cpp.o"),
            Some(
                "/usr/bin/c++ -DX=\\\"y\\\" -I/src/inc -g -O0 -MD -MT 'CMakeFiles/t.dir/a b.cpp.o' \
                 -MF CMakeFiles/t.dir/a b.cpp.o.d -o 'CMakeFiles/t.dir/a b.cpp.o' -c '/src/a b.cpp'"
            )
        );
        assert_eq!(m.command_of("order"), None, "phony");
        assert_eq!(m.command_of("nothing"), None);
    }

    #[test]
    fn scopes_rules_and_rspfiles() {
        let m = load(
            &[
                (
                    "build.ninja",
                    "cflags = -top\nrule cc\n  command = cc $cflags $in -o $out\n  rspfile = $out.rsp\n  \
                     rspfile_content = $in $extra\n\
                     build a.o: cc a.c\n  extra = -e\nsubninja sub.ninja\nbuild c.o: cc ./x/../c.c\n",
                ),
                (
                    "sub.ninja",
                    "cflags = -sub\nbuild b.o: cc b.c\n",
                ),
            ],
            "build.ninja",
        )
        .unwrap();
        assert_eq!(
            m.command_of("a.o"),
            Some("cc -top a.c -o a.o;rspfile=a.c -e")
        );
        assert_eq!(m.command_of("b.o"), Some("cc -sub b.c -o b.o;rspfile=b.c "));
        assert_eq!(m.command_of("c.o"), Some("cc -top c.c -o c.o;rspfile=c.c "));
    }

    #[test]
    fn what_ninja_rejects_is_an_error() {
        for bad in [
            "build a.o: nosuchrule a.c\n",
            "rule r\n  command = x\nrule r\n  command = y\n",
            "rule r\n  command = $\n",
            "x = $!\n",
            "  indented = 1\n",
            "rule r\n  command = x\nbuild a: r\nbuild a: r\n",
            "rule r\n  command = x\nbuild a: r b c\n  y = $\n",
            "include missing.ninja\n",
        ] {
            assert!(
                load(&[("build.ninja", bad)], "build.ninja").is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn only_wanted_outputs_are_evaluated_and_late_assignments_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("build.ninja"),
            "rule cc\n  command = cc $flags $in -o $out\nbuild a.o: cc a.c\n  flags = -a\n\
             build b.o: cc b$ $$weird$:.c\n  flags = -b\n",
        )
        .unwrap();
        let root = dir.path().to_str().unwrap();
        let reader = Reader::new(Limits::default());
        let wanted: FastSet<&str> = ["b.o"].into_iter().collect();
        let mut got = Vec::new();
        let edges = for_each_command(&reader, root, "build.ninja", Some(&wanted), |o, c| {
            got.push((o.to_owned(), c.to_owned()))
        })
        .unwrap();
        assert_eq!(edges, (2, None));
        assert_eq!(
            got,
            [("b.o".to_owned(), "cc -b 'b $weird:.c' -o b.o".to_owned())]
        );
        // A scope variable a command used, assigned after the edge: refused.
        std::fs::write(
            dir.path().join("late.ninja"),
            "rule cc\n  command = cc $late $in\nbuild a.o: cc a.c\n  x = 1\nlate = -O2\n",
        )
        .unwrap();
        let err = for_each_command(&reader, root, "late.ninja", None, |_, _| {}).unwrap_err();
        assert!(
            err.to_string().contains("\"late\" is set after an edge"),
            "{err}"
        );
    }

    /// A manifest of several megabytes is read in pieces that end where a
    /// statement does: continuations, escaped dollars before a newline and a
    /// comment inside a binding block never split a statement.
    #[test]
    fn a_large_manifest_read_in_pieces_gives_every_command() {
        let mut text = String::from("rule cc\n  command = cc $flags $in -o $out\n");
        let long = "-Dx".repeat(150);
        for i in 0..6000 {
            text.push_str(&format!(
                "build o{i}.o: cc s{i}.c\n  flags = {long} $\n      -n{i} $$\n# a comment between bindings\n  unused = 1\n"
            ));
        }
        assert!(text.len() > 3 << 20);
        let m = load(&[("build.ninja", &text)], "build.ninja").unwrap();
        assert_eq!(m.0.len(), 6000);
        for i in [0, 1, 2999, 5999] {
            assert_eq!(
                m.command_of(&format!("o{i}.o")),
                Some(format!("cc {long} -n{i} $ s{i}.c -o o{i}.o").as_str())
            );
        }
        assert_eq!(statement_boundary(b"a = 1\nb = 2$\nc"), 6);
        assert_eq!(statement_boundary(b"a = 1$$\nb"), 8);
        assert_eq!(statement_boundary(b"a = 1\n  b"), 0);
        assert_eq!(count_newlines(b"\n1234567\n123\n"), 3);
        assert_eq!(plain_run(b"abcdefghijk$", false), 11);
        assert_eq!(plain_run(b"abcdefgh ijk", true), 8);
    }

    #[test]
    fn rule_variables_that_double_at_every_level_are_cut_short() {
        let mut text = String::from("rule r\n  command = $v0\n");
        for i in 0..60 {
            text.push_str(&format!("  v{i} = $v{n} $v{n}\n", n = i + 1));
        }
        text.push_str("  v60 = xxxxxxxxxxxxxxxx\nbuild a: r\n");
        // 2^60 pieces uncut: this returns at all only because of the cut.
        let Err(err) = load(&[("build.ninja", &text)], "build.ninja") else {
            panic!("a 2^60-piece command was accepted");
        };
        assert!(err.to_string().contains("a command longer than"), "{err}");
    }

    #[test]
    fn canonical_paths() {
        assert_eq!(canonicalize("a/./b//c"), "a/b/c");
        assert_eq!(canonicalize("a/../b"), "b");
        assert_eq!(canonicalize("../a/../../b"), "../../b");
        assert_eq!(canonicalize("/x/../y"), "/y");
        assert_eq!(canonicalize("./"), ".");
    }
}
