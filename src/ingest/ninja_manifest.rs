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

use std::collections::HashMap;

use super::Reader;
use crate::fasthash::FastMap;

/// A piece of an unevaluated string: text, or a variable reference.
#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Var(String),
}

type Eval = Vec<Piece>;

#[derive(Debug, Default)]
struct Scope {
    parent: Option<usize>,
    vars: HashMap<String, String>,
    rules: HashMap<String, usize>,
}

#[derive(Debug, Default)]
struct Rule {
    bindings: HashMap<String, Eval>,
}

/// Where an edge looks up a variable before its rule and its scope's parents:
/// its own bindings (if it has any), otherwise its scope's variables.
#[derive(Debug)]
enum EdgeEnv {
    Own(HashMap<String, String>, usize),
    Scope(usize),
}

#[derive(Debug)]
struct Edge {
    rule: usize,
    env: EdgeEnv,
    ins: Vec<String>,
    outs: Vec<String>,
}

/// A parsed manifest.
#[derive(Debug, Default)]
pub struct Manifest {
    scopes: Vec<Scope>,
    rules: Vec<Rule>,
    edges: Vec<Edge>,
    /// Output path (canonical, as ninja spells it) → the edge building it.
    by_output: FastMap<String, usize>,
}

const PHONY: usize = 0;

impl Manifest {
    /// Reads `file` (relative to `build_root`, where ninja runs, or absolute)
    /// and everything it includes.
    pub fn load(reader: &Reader, build_root: &str, file: &str) -> Result<Manifest, String> {
        let mut m = Manifest {
            scopes: vec![Scope::default()],
            rules: vec![Rule::default()],
            ..Manifest::default()
        };
        m.scopes[0].rules.insert("phony".into(), PHONY);
        m.parse_file(reader, build_root, file, 0, 0)?;
        Ok(m)
    }

    /// The command ninja would run for `output` now, with `;rspfile=CONTENT`
    /// appended when the rule has a response file (what ninja hashes), or
    /// `None` when no edge builds it or the edge is phony.
    pub fn command_of(&self, output: &str) -> Option<String> {
        let &e = self.by_output.get(output)?;
        if self.edges[e].rule == PHONY {
            return None;
        }
        let mut cmd = self.binding(e, "command", 0);
        let rsp = self.binding(e, "rspfile_content", 0);
        if !rsp.is_empty() {
            cmd.push_str(";rspfile=");
            cmd.push_str(&rsp);
        }
        Some(cmd)
    }

    /// A variable of the top-level scope (`builddir`), if set.
    pub fn top_level(&self, var: &str) -> Option<&str> {
        self.scopes[0].vars.get(var).map(String::as_str)
    }

    /// How many edges the manifest has (phony ones included).
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    // ------------------------------------------------------------- evaluation

    fn scope_lookup(&self, mut s: Option<usize>, var: &str) -> String {
        while let Some(i) = s {
            if let Some(v) = self.scopes[i].vars.get(var) {
                return v.clone();
            }
            s = self.scopes[i].parent;
        }
        String::new()
    }

    /// ninja's `EdgeEnv::LookupVariable` with shell-escaped `$in` / `$out`.
    fn binding(&self, e: usize, var: &str, depth: usize) -> String {
        let edge = &self.edges[e];
        match var {
            "in" => return path_list(&edge.ins, ' '),
            "in_newline" => return path_list(&edge.ins, '\n'),
            "out" => return path_list(&edge.outs, ' '),
            _ => {}
        }
        let eval = self.rules[edge.rule].bindings.get(var);
        let (own, parent) = match &edge.env {
            EdgeEnv::Own(map, parent) => (map, Some(*parent)),
            EdgeEnv::Scope(s) => (&self.scopes[*s].vars, self.scopes[*s].parent),
        };
        if let Some(v) = own.get(var) {
            return v.clone();
        }
        if let Some(ev) = eval {
            // A rule variable naming another: ninja rejects cycles; a bound
            // depth keeps a forged manifest from recursing without end.
            if depth > 64 {
                return String::new();
            }
            let mut out = String::new();
            for p in ev {
                match p {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Var(v) => out.push_str(&self.binding(e, v, depth + 1)),
                }
            }
            return out;
        }
        self.scope_lookup(parent, var)
    }

    fn eval_in_scope(
        &self,
        ev: &Eval,
        scope: usize,
        own: Option<&HashMap<String, String>>,
    ) -> String {
        let mut out = String::new();
        for p in ev {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => match own.and_then(|m| m.get(v)) {
                    Some(x) => out.push_str(x),
                    None => out.push_str(&self.scope_lookup(Some(scope), v)),
                },
            }
        }
        out
    }

    // ---------------------------------------------------------------- parsing

    fn parse_file(
        &mut self,
        reader: &Reader,
        build_root: &str,
        file: &str,
        scope: usize,
        depth: usize,
    ) -> Result<(), String> {
        if depth > 32 {
            return Err(format!("{file}: includes nested more than 32 deep"));
        }
        let path = crate::paths::join_fold(build_root, file);
        let bytes = reader.read(&path).map_err(|e| format!("{path}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{path}: not valid UTF-8"))?;
        let mut lx = Lexer {
            s: text.as_bytes(),
            at: 0,
        };
        let shown = crate::paths::relative_to(&path, build_root).to_owned();
        self.parse_statements(reader, build_root, &mut lx, scope, depth)
            .map_err(|e| format!("{shown}: line {}: {e}", lx.line()))
    }

    fn parse_statements(
        &mut self,
        reader: &Reader,
        build_root: &str,
        lx: &mut Lexer<'_>,
        scope: usize,
        depth: usize,
    ) -> Result<(), String> {
        loop {
            match lx.statement()? {
                Stmt::Eof => return Ok(()),
                Stmt::Blank => {}
                Stmt::Indent => return Err("unexpected indentation".into()),
                Stmt::Word(w) => match w.as_str() {
                    "rule" => self.parse_rule(lx, scope)?,
                    "build" => self.parse_edge(lx, scope)?,
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
                            return Err(format!("{w} without a path"));
                        }
                        lx.newline()?;
                        let file = self.eval_in_scope(&p, scope, None);
                        let target = if w == "subninja" {
                            self.scopes.push(Scope {
                                parent: Some(scope),
                                ..Scope::default()
                            });
                            self.scopes.len() - 1
                        } else {
                            scope
                        };
                        self.parse_file(reader, build_root, &file, target, depth + 1)?;
                    }
                    _ => {
                        // A top-level binding, evaluated now in its scope.
                        lx.expect_equals()?;
                        let v = lx.value()?;
                        let value = self.eval_in_scope(&v, scope, None);
                        self.scopes[scope].vars.insert(w, value);
                    }
                },
            }
        }
    }

    fn parse_rule(&mut self, lx: &mut Lexer<'_>, scope: usize) -> Result<(), String> {
        let name = lx.ident()?;
        lx.newline()?;
        if self.scopes[scope].rules.contains_key(&name) {
            return Err(format!("duplicate rule {name:?}"));
        }
        let mut rule = Rule::default();
        while lx.peek_indent() {
            let (k, v) = lx.binding()?;
            rule.bindings.insert(k, v);
        }
        self.rules.push(rule);
        let id = self.rules.len() - 1;
        self.scopes[scope].rules.insert(name, id);
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

    fn parse_edge(&mut self, lx: &mut Lexer<'_>, scope: usize) -> Result<(), String> {
        let mut outs = Vec::new();
        loop {
            let p = lx.path()?;
            if p.is_empty() {
                break;
            }
            outs.push(p);
        }
        let mut implicit_outs = Vec::new();
        if lx.eat(b"|") {
            loop {
                let p = lx.path()?;
                if p.is_empty() {
                    break;
                }
                implicit_outs.push(p);
            }
        }
        if outs.is_empty() && implicit_outs.is_empty() {
            return Err("expected a path".into());
        }
        if !lx.eat(b":") {
            return Err("expected ':'".into());
        }
        let rule_name = lx.ident()?;
        let rule = self
            .lookup_rule(Some(scope), &rule_name)
            .ok_or_else(|| format!("unknown build rule {rule_name:?}"))?;
        let mut ins = Vec::new();
        loop {
            let p = lx.path()?;
            if p.is_empty() {
                break;
            }
            ins.push(p);
        }
        // Implicit, order-only and validation inputs are not part of `$in`.
        while lx.eat(b"|@") || lx.eat(b"||") || lx.eat(b"|") {
            while !lx.path()?.is_empty() {}
        }
        lx.newline()?;
        let mut own: Option<HashMap<String, String>> = None;
        while lx.peek_indent() {
            let (k, v) = lx.binding()?;
            // Edge bindings are evaluated in the enclosing scope, not the edge's.
            let value = self.eval_in_scope(&v, scope, None);
            own.get_or_insert_with(HashMap::new).insert(k, value);
        }
        let eval_paths = |m: &Manifest, ps: &[Eval]| -> Vec<String> {
            ps.iter()
                .map(|p| canonicalize(&m.eval_in_scope(p, scope, own.as_ref())))
                .collect()
        };
        let outs_c = eval_paths(self, &outs);
        let implicit_c = eval_paths(self, &implicit_outs);
        let ins_c = eval_paths(self, &ins);
        let id = self.edges.len();
        for o in outs_c.iter().chain(&implicit_c) {
            if self.by_output.insert(o.clone(), id).is_some() {
                return Err(format!("multiple rules generate {o}"));
            }
        }
        self.edges.push(Edge {
            rule,
            env: match own {
                Some(m) => EdgeEnv::Own(m, scope),
                None => EdgeEnv::Scope(scope),
            },
            ins: ins_c,
            outs: outs_c,
        });
        Ok(())
    }
}

/// `$in` / `$out`: paths joined by `sep`, each shell-escaped as ninja does.
fn path_list(paths: &[String], sep: char) -> String {
    let mut out = String::new();
    for (i, p) in paths.iter().enumerate() {
        if i > 0 {
            out.push(sep);
        }
        shell_escape(p, &mut out);
    }
    out
}

/// ninja's `GetShellEscapedString` (POSIX): as is when every byte is shell
/// safe, otherwise single-quoted with each `'` written `'\''`.
fn shell_escape(s: &str, out: &mut String) {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.' | '/');
    if s.chars().all(safe) {
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

enum Stmt {
    Eof,
    Blank,
    Indent,
    Word(String),
}

struct Lexer<'a> {
    s: &'a [u8],
    at: usize,
}

fn ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

impl Lexer<'_> {
    fn line(&self) -> usize {
        1 + self.s[..self.at.min(self.s.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    /// Spaces and `$`-newline continuations between tokens.
    fn eat_space(&mut self) {
        loop {
            match (self.peek(), self.s.get(self.at + 1)) {
                (Some(b' '), _) => self.at += 1,
                (Some(b'$'), Some(b'\n')) => self.at += 2,
                (Some(b'$'), Some(b'\r')) if self.s.get(self.at + 2) == Some(&b'\n') => {
                    self.at += 3
                }
                _ => return,
            }
        }
    }

    /// The start of a statement: a keyword or variable name, a blank or
    /// comment line, indentation (an error here), or the end.
    fn statement(&mut self) -> Result<Stmt, String> {
        let start = self.at;
        while self.peek() == Some(b' ') {
            self.at += 1;
        }
        match self.peek() {
            None => Ok(Stmt::Eof),
            Some(b'#') => {
                while let Some(b) = self.peek() {
                    self.at += 1;
                    if b == b'\n' {
                        break;
                    }
                }
                Ok(Stmt::Blank)
            }
            Some(b'\n') => {
                self.at += 1;
                Ok(Stmt::Blank)
            }
            Some(b'\r') if self.s.get(self.at + 1) == Some(&b'\n') => {
                self.at += 2;
                Ok(Stmt::Blank)
            }
            Some(_) if self.at > start => Ok(Stmt::Indent),
            Some(_) => Ok(Stmt::Word(self.ident()?)),
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        let start = self.at;
        while self.peek().is_some_and(ident_byte) {
            self.at += 1;
        }
        if self.at == start {
            return Err("expected a name".into());
        }
        let w = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
        self.eat_space();
        Ok(w)
    }

    fn eat(&mut self, tok: &[u8]) -> bool {
        if self.s[self.at..].starts_with(tok) {
            // `|` must not be the start of `||` or `|@`.
            if tok == b"|" && matches!(self.s.get(self.at + 1), Some(b'|') | Some(b'@')) {
                return false;
            }
            self.at += tok.len();
            self.eat_space();
            true
        } else {
            false
        }
    }

    fn expect_equals(&mut self) -> Result<(), String> {
        if self.eat(b"=") {
            Ok(())
        } else {
            Err("expected '='".into())
        }
    }

    fn newline(&mut self) -> Result<(), String> {
        self.eat_space();
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.at += 1;
                Ok(())
            }
            Some(b'\r') if self.s.get(self.at + 1) == Some(&b'\n') => {
                self.at += 2;
                Ok(())
            }
            Some(b'#') => Err("comments must be on their own line".into()),
            Some(_) => Err("expected a newline".into()),
        }
    }

    /// An indented line follows (a binding of the statement above).
    fn peek_indent(&mut self) -> bool {
        let mut i = self.at;
        while self.s.get(i) == Some(&b' ') {
            i += 1;
        }
        if i == self.at {
            return false;
        }
        match self.s.get(i) {
            None | Some(b'\n') | Some(b'#') => false,
            Some(b'\r') if self.s.get(i + 1) == Some(&b'\n') => false,
            _ => {
                self.at = i;
                true
            }
        }
    }

    fn binding(&mut self) -> Result<(String, Eval), String> {
        let k = self.ident()?;
        self.expect_equals()?;
        Ok((k, self.value()?))
    }

    fn value(&mut self) -> Result<Eval, String> {
        self.eval_string(false)
    }

    fn path(&mut self) -> Result<Eval, String> {
        self.eval_string(true)
    }

    /// ninja's `Lexer::ReadEvalString`.
    fn eval_string(&mut self, path: bool) -> Result<Eval, String> {
        let mut out: Eval = Vec::new();
        let mut text = String::new();
        let flush = |text: &mut String, out: &mut Eval| {
            if !text.is_empty() {
                out.push(Piece::Text(std::mem::take(text)));
            }
        };
        loop {
            let Some(b) = self.peek() else {
                if path {
                    break;
                }
                return Err("unexpected end of file".into());
            };
            match b {
                b'$' => {
                    let next = self.s.get(self.at + 1).copied();
                    match next {
                        Some(b'$') => {
                            text.push('$');
                            self.at += 2;
                        }
                        Some(b' ') => {
                            text.push(' ');
                            self.at += 2;
                        }
                        Some(b':') => {
                            text.push(':');
                            self.at += 2;
                        }
                        Some(b'\n') => {
                            self.at += 2;
                            while self.peek() == Some(b' ') {
                                self.at += 1;
                            }
                        }
                        Some(b'\r') if self.s.get(self.at + 2) == Some(&b'\n') => {
                            self.at += 3;
                            while self.peek() == Some(b' ') {
                                self.at += 1;
                            }
                        }
                        Some(b'{') => {
                            let start = self.at + 2;
                            let mut i = start;
                            while self.s.get(i).copied().is_some_and(ident_byte) {
                                i += 1;
                            }
                            if i == start || self.s.get(i) != Some(&b'}') {
                                return Err("bad $-escape (literal $ must be written as $$)".into());
                            }
                            flush(&mut text, &mut out);
                            let name = String::from_utf8_lossy(&self.s[start..i]).into_owned();
                            out.push(Piece::Var(name));
                            self.at = i + 1;
                        }
                        Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' => {
                            let start = self.at + 1;
                            let mut i = start;
                            while self.s.get(i).is_some_and(|c| {
                                c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-'
                            }) {
                                i += 1;
                            }
                            flush(&mut text, &mut out);
                            let name = String::from_utf8_lossy(&self.s[start..i]).into_owned();
                            out.push(Piece::Var(name));
                            self.at = i;
                        }
                        _ => return Err("bad $-escape (literal $ must be written as $$)".into()),
                    }
                }
                b'\n' => {
                    if !path {
                        self.at += 1;
                    }
                    break;
                }
                b'\r' if self.s.get(self.at + 1) == Some(&b'\n') => {
                    if !path {
                        self.at += 2;
                    }
                    break;
                }
                b'\r' | 0 => return Err("unexpected control byte".into()),
                b' ' | b':' | b'|' if path => break,
                _ => {
                    // One UTF-8 character (the text is valid UTF-8).
                    let len = utf8_len(b);
                    let end = (self.at + len).min(self.s.len());
                    text.push_str(
                        std::str::from_utf8(&self.s[self.at..end])
                            .map_err(|_| "not valid UTF-8")?,
                    );
                    self.at = end;
                }
            }
        }
        flush(&mut text, &mut out);
        if path {
            self.eat_space();
        }
        Ok(out)
    }
}

fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Limits;

    fn load(files: &[(&str, &str)], top: &str) -> Result<Manifest, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let root = dir.path().to_str().expect("utf-8").to_owned();
        Manifest::load(&Reader::new(Limits::default()), &root, top)
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
            m.command_of("CMakeFiles/t.dir/a b.cpp.o").as_deref(),
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
            m.command_of("a.o").as_deref(),
            Some("cc -top a.c -o a.o;rspfile=a.c -e")
        );
        assert_eq!(
            m.command_of("b.o").as_deref(),
            Some("cc -sub b.c -o b.o;rspfile=b.c ")
        );
        assert_eq!(
            m.command_of("c.o").as_deref(),
            Some("cc -top c.c -o c.o;rspfile=c.c ")
        );
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
            "include missing.ninja\n",
        ] {
            assert!(
                load(&[("build.ninja", bad)], "build.ninja").is_err(),
                "{bad:?}"
            );
        }
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
