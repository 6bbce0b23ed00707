//! The shape of `src/`, kept by a test (ARCHITECTURE.md): no import cycle
//! between files, no source file over 1,500 lines, no function over 150
//! lines, a pipeline that only sequences (no function in `src/pipeline.rs`
//! over 120 lines), and no branch on the output format outside the emitters.
//!
//! A file depends on another when it names an item of it by path:
//! `crate::a::b`, `super::x`, or (in `lib.rs` and `mod.rs` files) a child
//! module `child::x`, in code outside `#[cfg(test)]` modules and comments. A
//! path is charged to the file of its longest module prefix, so a re-export
//! through a parent module is a dependency on the parent's file. `mod`
//! declarations are not dependencies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src_files() -> BTreeMap<Vec<String>, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(&root) {
        let e = e.unwrap();
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("rs") {
            continue;
        }
        let rel = p.strip_prefix(&root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if rel == Path::new("main") {
            continue; // the binary, a crate of its own
        }
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        out.insert(parts, p.to_path_buf());
    }
    out
}

/// The code of a file without its test module and comments.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        // Cut a trailing comment that is not inside a string.
        let mut cut = line.len();
        let mut quotes = 0;
        let b = line.as_bytes();
        for i in 0..b.len() {
            if b[i] == b'"' && (i == 0 || b[i - 1] != b'\\') {
                quotes += 1;
            }
            if quotes % 2 == 0 && b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
                cut = i;
                break;
            }
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// The paths (as module-path segments) a file's code names.
fn named_paths(code: &str, me: &[String], is_parent: bool, kids: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Paths that start with a plain name (`ingest::build::read` after
    // `use crate::ingest`): resolved below through what the file imported.
    let mut bare: Vec<Vec<String>> = Vec::new();
    let bytes = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if !ident(bytes[i]) || (i > 0 && (ident(bytes[i - 1]) || bytes[i - 1] == b':')) {
            i += 1;
            continue;
        }
        // A path starting here: idents joined by `::`, maybe ending in `{…}`.
        let start = i;
        let mut segs: Vec<String> = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < bytes.len() && ident(bytes[j]) {
                j += 1;
            }
            segs.push(code[s..j].to_owned());
            if code[j..].starts_with("::") && j + 2 < bytes.len() && ident(bytes[j + 2]) {
                j += 2;
            } else {
                break;
            }
        }
        let group = code[j..].starts_with("::{");
        i = j.max(start + 1);
        // `pub(crate)`, `pub(super)`: a visibility, not a path.
        let keyword = matches!(segs[0].as_str(), "crate" | "super" | "self");
        if keyword
            && segs
                .iter()
                .all(|s| s == "super" || s == "crate" || s == "self")
            && !group
        {
            continue;
        }
        let base: Option<Vec<String>> = match segs[0].as_str() {
            "crate" => Some(segs[1..].to_vec()),
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                me.len().checked_sub(ups).map(|parent_len| {
                    me[..parent_len]
                        .iter()
                        .chain(&segs[ups..])
                        .cloned()
                        .collect()
                })
            }
            "self" if is_parent => Some(me.iter().chain(&segs[1..]).cloned().collect()),
            first if is_parent && kids.iter().any(|k| k == first) && (segs.len() > 1 || group) => {
                Some(me.iter().chain(&segs).cloned().collect())
            }
            _ => None,
        };
        let Some(base) = base else {
            if segs.len() > 1 || group {
                bare.push(segs);
            }
            continue;
        };
        if !group {
            out.push(base);
            continue;
        }
        // `a::{b, c::d, self}`: each member (its first segment); `self` is `a`.
        let close = code[j..].find('}').map_or(code.len(), |k| j + k);
        for member in code[j + 3..close].split(',') {
            let first = member.trim().split("::").next().unwrap_or("").trim();
            let first = first.split_whitespace().next().unwrap_or("");
            if first == "self" {
                out.push(base.clone());
            } else if !first.is_empty() && first.bytes().all(ident) {
                let mut m = base.clone();
                m.push(first.to_owned());
                out.push(m);
            }
        }
    }
    // An imported module is named by its last segment (`use crate::ingest;`,
    // `use super::depfile::{self, …}`).
    let aliases: BTreeMap<String, Vec<String>> = out
        .iter()
        .filter_map(|p| Some((p.last()?.clone(), p.clone())))
        .collect();
    for segs in bare {
        if let Some(p) = aliases.get(&segs[0]) {
            out.push(p.iter().chain(&segs[1..]).cloned().collect());
        }
    }
    out
}

fn resolve<'a>(
    files: &'a BTreeMap<Vec<String>, PathBuf>,
    path: &[String],
) -> Option<&'a Vec<String>> {
    (0..=path.len())
        .rev()
        .find_map(|n| files.get_key_value(&path[..n]).map(|(k, _)| k))
}

#[test]
fn no_import_cycle_between_files_of_src() {
    let files = src_files();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (me, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let code = code_of(&text);
        let is_parent = path.ends_with("mod.rs") || path.ends_with("lib.rs");
        let kids: Vec<String> = files
            .keys()
            .filter(|k| k.len() == me.len() + 1 && k[..me.len()] == me[..])
            .map(|k| k[me.len()].clone())
            .collect();
        let deps = edges.entry(me.clone()).or_default();
        for p in named_paths(&code, me, is_parent, &kids) {
            if let Some(to) = resolve(&files, &p) {
                if to != me {
                    deps.insert(to.clone());
                }
            }
        }
    }
    // Tarjan's strongly connected components.
    struct St<'e> {
        edges: &'e BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'e Vec<String>, usize>,
        low: BTreeMap<&'e Vec<String>, usize>,
        stack: Vec<&'e Vec<String>>,
        on: BTreeSet<&'e Vec<String>>,
        next: usize,
        cycles: Vec<Vec<String>>,
    }
    fn visit<'e>(st: &mut St<'e>, v: &'e Vec<String>) {
        st.index.insert(v, st.next);
        st.low.insert(v, st.next);
        st.next += 1;
        st.stack.push(v);
        st.on.insert(v);
        for w in &st.edges[v] {
            if !st.index.contains_key(w) {
                visit(st, w);
                let lw = st.low[w];
                let lv = st.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if st.on.contains(w) {
                let iw = st.index[w];
                let lv = st.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if st.low[v] == st.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = st.stack.pop().unwrap();
                st.on.remove(w);
                comp.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                st.cycles.push(comp);
            }
        }
    }
    let mut st = St {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        cycles: Vec::new(),
    };
    for v in edges.keys() {
        if !st.index.contains_key(v) {
            visit(&mut st, v);
        }
    }
    let into_root: Vec<String> = (edges.iter())
        .filter(|(_, d)| d.contains(&Vec::new()))
        .map(|(f, _)| f.join("::"))
        .collect();
    assert!(
        st.cycles.is_empty(),
        "files of src/ that import each other (module paths): {:?}; files naming the crate root: {into_root:?}",
        st.cycles
    );
    // The checker sees the edges it must: a few known ones.
    let has = |a: &str, b: &str| {
        let a: Vec<String> = a.split("::").map(str::to_owned).collect();
        let b: Vec<String> = b.split("::").map(str::to_owned).collect();
        edges[&a].contains(&b)
    };
    assert!(has("pipeline", "ingest::build"));
    assert!(has("reach::texts", "reach::channel"));
    assert!(has("report", "request"));
}

#[test]
fn no_source_file_over_1500_lines() {
    let long: Vec<(PathBuf, usize)> = src_files()
        .into_values()
        .map(|p| {
            let n = std::fs::read_to_string(&p).unwrap().lines().count();
            (p, n)
        })
        .filter(|(_, n)| *n > 1500)
        .collect();
    assert!(long.is_empty(), "over 1,500 lines: {long:?}");
}

/// Each function of `text` longer than `limit` lines (from its `fn` line to
/// the closing brace at the same indentation), with its length.
fn functions_over(text: &str, limit: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let indent = &line[..line.len() - line.trim_start().len()];
        let mut t = line.trim_start();
        for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
            t = t.strip_prefix(prefix).unwrap_or(t);
        }
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        if line.trim_end().ends_with(';') {
            continue; // a trait method without a body
        }
        let close = format!("{indent}}}");
        if let Some(end) = (i + 1..lines.len()).find(|&j| lines[j] == close) {
            let n = end - i + 1;
            if n > limit {
                let name = rest.split(['(', '<']).next().unwrap_or("").to_owned();
                long.push((name, n));
            }
        }
    }
    long
}

#[test]
fn the_pipeline_only_sequences() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pipeline.rs");
    let long = functions_over(&std::fs::read_to_string(path).unwrap(), 120);
    assert!(
        long.is_empty(),
        "functions of src/pipeline.rs over 120 lines: {long:?}"
    );
}

#[test]
fn no_function_of_src_over_150_lines() {
    let mut long = Vec::new();
    for p in src_files().into_values() {
        for (name, n) in functions_over(&std::fs::read_to_string(&p).unwrap(), 150) {
            long.push((p.display().to_string(), name, n));
        }
    }
    assert!(long.is_empty(), "functions over 150 lines: {long:?}");
}

#[test]
fn the_length_check_sees_a_long_function() {
    let body = "    x();\n".repeat(151);
    let text = format!("impl A {{\n    pub fn long() {{\n{body}    }}\n}}\nfn short() {{\n}}\n");
    assert_eq!(functions_over(&text, 150), vec![("long".to_owned(), 153)]);
}

/// Only the format's definition, the command line's default and the
/// emitters name a `Format` variant: no other code branches on the format.
#[test]
fn only_the_emitters_branch_on_the_format() {
    let allowed = ["request.rs", "cli.rs", "emit.rs"];
    let mut found = Vec::new();
    for p in src_files().into_values() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let code = code_of(&std::fs::read_to_string(&p).unwrap());
        if code.contains("Format::") && !allowed.contains(&name.as_str()) {
            found.push(p.display().to_string());
        }
    }
    assert!(
        found.is_empty(),
        "Format:: named outside the emitters: {found:?}"
    );
}

/// The error type of a `Result<…>` written in `code` when it is a bare
/// `String` (or `()`): an error that says nothing typed about what failed.
fn untyped_errors(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("Result<") {
        let inner = &rest[at + "Result<".len()..];
        // The top-level comma and closing `>` of this Result.
        let (mut depth, mut comma, mut end) = (0i32, None, None);
        for (i, c) in inner.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '>' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                '>' => depth -= 1,
                ',' if depth == 0 => comma = Some(i),
                _ => {}
            }
        }
        if let (Some(c), Some(e)) = (comma, end) {
            let err = inner[c + 1..e].trim();
            if err == "String" || err == "()" || err == "&'static str" {
                found.push(format!("Result<{}>", inner[..e].trim()));
            }
        }
        rest = &rest[at + 1..];
    }
    found
}

/// Every error a function of `src/` returns is a type that says what failed
/// (thiserror enums and structs), not a bare string.
#[test]
fn no_result_of_src_has_a_string_error() {
    let mut found = Vec::new();
    for p in src_files().into_values() {
        let code = code_of(&std::fs::read_to_string(&p).unwrap());
        for e in untyped_errors(&code) {
            found.push(format!("{}: {e}", p.display()));
        }
    }
    assert!(found.is_empty(), "untyped errors: {found:#?}");
}

#[test]
fn the_error_check_sees_a_string_error() {
    let code = "fn a() -> Result<Vec<u8>, String> {}\nfn b() -> Result<FastMap<String, String>, Gap> {}\nfn c() -> Result<(), ()> {}";
    assert_eq!(
        untyped_errors(code),
        ["Result<Vec<u8>, String>", "Result<(), ()>"]
    );
}

/// Every module of `src/reach/` that names paths for a test is a channel in
/// one of the two tables (`impl Channel` in `reach::channels`, or wrapped by
/// an `impl ChangeChannel` of `reach::change_channels`); the others are
/// named here with what they serve, so a new module must say which it is.
#[test]
fn every_reach_module_that_names_paths_is_a_channel() {
    let reach = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/reach");
    let read = |f: &str| std::fs::read_to_string(reach.join(f)).unwrap();
    let table = code_of(&read("mod.rs"));
    let table = &table[table.find("fn channels").expect("reach::channels")..];
    let change = code_of(&read("change_channel.rs"));
    let helpers = [
        ("mod", "the tables and the run"),
        ("channel", "the per-test interface"),
        ("change_channel", "the change-time interface and its table"),
        ("lookup", "names against the build, for every channel"),
        ("names", "the name scanner of texts"),
        ("named", "what a text names"),
        ("dirs", "named directories"),
        ("file_texts", "files a channel reads, read once"),
        ("bytes", "the run-time bytes of a binary"),
        ("climbs", "relative climbs in bytes"),
        ("plugins", "what is loadable, and where"),
        ("flow", "test-to-test data flow (tests, not paths)"),
    ];
    let mut unclassified = Vec::new();
    for e in std::fs::read_dir(&reach).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let Some(module) = name.strip_suffix(".rs") else {
            continue;
        };
        if helpers.iter().any(|(h, _)| *h == module) {
            continue;
        }
        let code = code_of(&read(&name));
        let per_test = code.contains("impl Channel for") || code.contains("> Channel for");
        let in_table = table.contains(&format!("{module}::"));
        let at_change = change.contains(&format!("super::{module}::"));
        if !(at_change || per_test && in_table) {
            unclassified.push(module.to_owned());
        }
    }
    unclassified.sort();
    assert!(
        unclassified.is_empty(),
        "reach modules that are neither a channel in a table nor a named helper: {unclassified:?}"
    );
}

#[test]
fn every_dependency_evidence_source_folds_through_the_trait() {
    // What reads each source into the `DepEvidence` (the `.d` files' audit,
    // the Ninja deps log's merge, the test record's audit): named (imported
    // or called) nowhere but in its `DepSource` impl, so that no source is
    // wired around the trait.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let folds = [
        (
            "ingest/depfile/audit.rs",
            "pub(super) fn audit(",
            "audit::audit",
        ),
        (
            "ingest/depfile/ninja_units.rs",
            "pub(crate) fn merge(",
            "ninja_units::merge",
        ),
        (
            "ingest/record_audit.rs",
            "pub fn audit(",
            "record_audit::audit",
        ),
    ];
    let source = root.join("ingest/depfile/source.rs");
    let by_trait = code_of(&std::fs::read_to_string(&source).unwrap());
    let mut around = Vec::new();
    for (home, def, name) in folds {
        let text = std::fs::read_to_string(root.join(home)).unwrap();
        assert!(
            text.contains(def),
            "{home} no longer defines {def}: update this test"
        );
        assert!(
            by_trait.contains(name),
            "source.rs does not fold {home} ({name})"
        );
        for path in src_files().values().filter(|p| **p != source) {
            if code_of(&std::fs::read_to_string(path).unwrap()).contains(name) {
                around.push(format!("{} names {name}", path.display()));
            }
        }
    }
    assert!(
        around.is_empty(),
        "sources folded around the DepSource trait: {around:?}"
    );
}
