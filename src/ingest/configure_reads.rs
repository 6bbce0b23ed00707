//! Project files configure reads that CMake does not record as inputs.
//!
//! `file(STRINGS include/x/version.h …)`, `file(READ VERSION …)` and the
//! hashing and stat subcommands read a file at configure time; cmakeFiles-v1
//! lists only what configure *includes* or *configures*, not what it reads
//! this way. What such a file holds flows into configured files (a version
//! header every unit includes), so a change to it is a change to the build
//! configuration, whatever else it is. The CMake inputs are files we can
//! read: each source-tree CMake input is scanned for those subcommands, and
//! the file each names is resolved ([`resolve`]):
//! - `${CMAKE_CURRENT_LIST_DIR}` is the directory of the script the call
//!   runs in, `${CMAKE_CURRENT_SOURCE_DIR}` (and a relative path) that of
//!   the `CMakeLists.txt` it runs in, `${CMAKE_SOURCE_DIR}` the source root;
//! - inside a `function()` or `macro()`, the script and the parameters are
//!   those of each call of it in the project's CMake inputs;
//! - any other variable takes every value a CMake input `set()`s it to by
//!   its name, and the build's cache value ([`crate::ingest::cmake_cache`]),
//!   when no CMake input writes it any other way (another command naming
//!   it, a `set()` or `list()` of a computed name it could be);
//! - a call under an `if()` branch that those values make false reads nothing;
//! - what is still a variable is matched by its literal tail (every file
//!   ending in `/include/x/version.h`); a path that is nothing but an
//!   unresolved variable could be any file: every changed project file is
//!   then read by configure (`--base-snapshot` decides it).

use super::cmake_cache::Cache;
use super::cmake_script::{commands, Arg, Command};
use super::file_api::Codemodel;
use super::Reader;
use crate::fasthash::{FastMap, FastSet};
use crate::paths;
use std::sync::OnceLock;

/// Subcommands of `file()` that read the file named by their first argument.
const READING: &[&str] = &[
    "READ",
    "STRINGS",
    "MD5",
    "SHA1",
    "SHA224",
    "SHA256",
    "SHA384",
    "SHA512",
    "SHA3_224",
    "SHA3_256",
    "SHA3_384",
    "SHA3_512",
    "TIMESTAMP",
    "SIZE",
    "READ_SYMLINK",
    "COPY_FILE",
];

/// What configure reads, by how it was resolved.
#[derive(Debug, Default)]
pub struct ConfigureReads {
    /// Exact files (absolute, folded), each with the call site in words.
    exact: Vec<(String, String)>,
    /// Literal tails (`/include/x/version.h`) with their call sites.
    tails: Vec<(String, String)>,
    /// A call site whose file could not be resolved at all.
    unresolved: Option<String>,
    /// Every word (a run of file-name bytes) of the scanned CMake inputs:
    /// what configure may name (`unreferenced_paths`).
    words: FastSet<String>,
    /// The scanned inputs and the roots, for [`ConfigureReads::holds_word`]'s
    /// files named by path, read only when first asked (only
    /// `unreferenced_paths` asks: a selection run without it pays nothing).
    scanned: Vec<String>,
    roots: [String; 3],
    named_words: OnceLock<FastSet<String>>,
}

impl ConfigureReads {
    /// The call site that reads `abs` (absolute, folded, in the source
    /// tree), if one may.
    pub fn site_reading(&self, abs: &str) -> Option<&str> {
        if let Ok(i) = self.exact.binary_search_by(|(p, _)| p.as_str().cmp(abs)) {
            return Some(&self.exact[i].1);
        }
        if let Some((_, site)) = self.tails.iter().find(|(t, _)| abs.ends_with(t.as_str())) {
            return Some(site);
        }
        self.unresolved.as_deref()
    }

    /// Whether a scanned CMake input, or a source-tree file one names by
    /// path (the script an `execute_process` runs), holds `name` as a word.
    pub fn holds_word(&self, name: &str) -> bool {
        self.words.contains(name)
            || self
                .named_words
                .get_or_init(|| named_words(&self.scanned, &self.roots))
                .contains(name)
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.tails.is_empty() && self.unresolved.is_none()
    }
}

/// One scanned source-tree CMake input.
struct Script {
    /// Absolute, folded.
    path: String,
    dir: String,
    /// Relative to the source root, for call sites in words.
    rel: String,
    /// A `CMakeLists.txt`: its directory is `CMAKE_CURRENT_SOURCE_DIR`.
    lists: bool,
    text: String,
    /// Its commands, parsed when first asked (most scripts of a large
    /// project read no file: only calls and writers need them).
    parsed: OnceLock<Vec<Command>>,
}

impl Script {
    fn cmds(&self) -> &[Command] {
        self.parsed.get_or_init(|| commands(&self.text))
    }

    /// Whether `file` followed by `(` occurs (any case): only then may it
    /// hold a reading `file()` call.
    fn may_call_file(&self) -> bool {
        let b = self.text.as_bytes();
        (0..b.len().saturating_sub(4)).any(|i| {
            b[i..i + 4].eq_ignore_ascii_case(b"file")
                && b[i + 4..]
                    .iter()
                    .find(|c| !matches!(c, b' ' | b'\t'))
                    .is_some_and(|&c| c == b'(')
        })
    }
}

/// A reading `file()` call: where, and what encloses it.
struct ReadCall {
    script: usize,
    cmd: usize,
    /// The innermost `function()`/`macro()` holding it: (name, parameters).
    function: Option<(String, Vec<String>)>,
    /// The `if()` blocks holding it, outermost first, with its branch.
    frames: Vec<Frame>,
}

/// One `if()` block around a call: the conditions of the branches before
/// the call's, and the call's own (`None` for `else()`).
#[derive(Clone, Default)]
struct Frame {
    before: Vec<Vec<Arg>>,
    own: Option<Vec<Arg>>,
}

/// Where code runs: what `CMAKE_CURRENT_LIST_DIR` and
/// `CMAKE_CURRENT_SOURCE_DIR` are (`None`: unknown) and the parameters
/// bound by the call that runs it.
#[derive(Clone, Debug, Default)]
struct Context {
    list_dir: Option<String>,
    source_dir: Option<String>,
    params: Vec<(String, String)>,
}

/// Scans every source-tree CMake input of `model` (cmakeFiles-v1). A file
/// that cannot be read is skipped: it is a CMake input, so any change to it
/// is already a build-configuration change, and what it reads is unchanged
/// unless something else changed.
pub fn scan(reader: &Reader, model: &Codemodel) -> ConfigureReads {
    let mut out = ConfigureReads::default();
    let Some(inputs) = &model.cmake_inputs else {
        return out;
    };
    let mut scripts = Vec::new();
    for input in inputs {
        if !paths::is_within(input, model.scope_root())
            || paths::is_within(input, &model.build_root)
        {
            continue;
        }
        let Ok(bytes) = reader.read(input) else {
            continue;
        };
        for w in bytes.split(|&b| !word_byte(b)).filter(|w| !w.is_empty()) {
            let w = String::from_utf8_lossy(w);
            if !out.words.contains(w.as_ref()) {
                out.words.insert(w.into_owned());
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let dir = input.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        out.scanned.push(input.clone());
        scripts.push(Script {
            path: input.clone(),
            dir: dir.to_owned(),
            rel: paths::relative_to(input, &model.source_root),
            lists: input.ends_with("/CMakeLists.txt"),
            text: text.into_owned(),
            parsed: OnceLock::new(),
        });
    }
    let load = || {
        let cache = super::cmake_cache::load(reader, model);
        (writers(reader, inputs, &scripts), cache)
    };
    add_reads(&scripts, &model.source_root, &load, &mut out);
    out.scanned.sort();
    out.roots = [
        model.source_root.clone(),
        model.scope_root().to_owned(),
        model.build_root.clone(),
    ];
    out.exact.sort();
    out.exact.dedup_by(|a, b| a.0 == b.0);
    out.tails.sort();
    out.tails.dedup_by(|a, b| a.0 == b.0);
    out
}

/// The words of every regular source-tree file (not a scanned CMake input,
/// outside the build tree, at most 1 MiB) that a scanned input names by a
/// path: relative to its directory, or under `${CMAKE_CURRENT_SOURCE_DIR}`,
/// `${CMAKE_CURRENT_LIST_DIR}`, `${CMAKE_SOURCE_DIR}` or `${PROJECT_SOURCE_DIR}`.
fn named_words(
    scanned: &[String],
    [source_root, scope_root, build_root]: &[String; 3],
) -> FastSet<String> {
    let mut words = FastSet::default();
    let mut seen: FastSet<String> = FastSet::default();
    let sep = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ';');
    for input in scanned {
        let Ok(text) = std::fs::read_to_string(input) else {
            continue;
        };
        let dir = input.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        for tok in text
            .split(sep)
            .filter(|t| t.contains('/') || t.contains('.'))
        {
            let p = tok
                .replace("${CMAKE_CURRENT_SOURCE_DIR}", dir)
                .replace("${CMAKE_CURRENT_LIST_DIR}", dir)
                .replace("${CMAKE_SOURCE_DIR}", source_root)
                .replace("${PROJECT_SOURCE_DIR}", source_root);
            if p.contains('$') || p.contains('<') || p.is_empty() {
                continue;
            }
            let abs = paths::join_fold(dir, &p);
            if scanned.binary_search(&abs).is_ok()
                || !paths::is_within(&abs, scope_root)
                || paths::is_within(&abs, build_root)
                || !seen.insert(abs.clone())
            {
                continue;
            }
            match std::fs::metadata(&abs) {
                Ok(m) if m.is_file() && m.len() <= 1 << 20 => {}
                _ => continue,
            }
            if let Ok(b) = std::fs::read(&abs) {
                for w in b.split(|&b| !word_byte(b)).filter(|w| !w.is_empty()) {
                    words.insert(String::from_utf8_lossy(w).into_owned());
                }
            }
        }
    }
    words
}

/// A byte of a file name (what a word is made of).
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-' | b'~' | b'@' | b'#')
}

/// Resolves every reading `file()` call of `scripts` into `out`; `load`
/// gives the variables' writers and the cache, called once when a call
/// first needs them.
fn add_reads(
    scripts: &[Script],
    source_root: &str,
    load: &(dyn Fn() -> (Writers, Option<Cache>) + Sync),
    out: &mut ConfigureReads,
) {
    let reads = read_calls(scripts);
    if reads.is_empty() {
        return;
    }
    let world = World {
        scripts,
        source_root,
        known: OnceLock::new(),
        load,
    };
    for r in &reads {
        world.add(r, out);
    }
}

/// Every reading `file()` call of `scripts`, with what encloses it.
fn read_calls(scripts: &[Script]) -> Vec<ReadCall> {
    let mut out = Vec::new();
    for (si, script) in scripts.iter().enumerate() {
        let mut function: Option<(String, Vec<String>)> = None;
        let mut frames: Vec<Frame> = Vec::new();
        if !script.may_call_file() {
            continue;
        }
        for (ci, c) in script.cmds().iter().enumerate() {
            match c.name.as_str() {
                "function" | "macro" => {
                    let mut w = c.words().map(str::to_owned);
                    let name = w.next().unwrap_or_default().to_ascii_lowercase();
                    function = Some((name, w.collect()));
                    frames.clear();
                }
                "endfunction" | "endmacro" => {
                    function = None;
                    frames.clear();
                }
                "if" => frames.push(Frame {
                    before: Vec::new(),
                    own: Some(c.args.clone()),
                }),
                "elseif" | "else" => {
                    if let Some(f) = frames.last_mut() {
                        if let Some(own) = f.own.take() {
                            f.before.push(own);
                        } else {
                            // A second else(): unknown shape, evaluate nothing.
                            f.before.push(vec![unknown_condition()]);
                        }
                        f.own = (c.name == "elseif").then(|| c.args.clone());
                    }
                }
                "endif" => {
                    frames.pop();
                }
                "file" => {
                    let mut w = c.words();
                    let sub = w.next().unwrap_or("").to_ascii_uppercase();
                    if READING.contains(&sub.as_str()) && c.args.len() >= 2 {
                        out.push(ReadCall {
                            script: si,
                            cmd: ci,
                            function: function.clone(),
                            frames: frames.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// A condition no evaluation decides.
fn unknown_condition() -> Arg {
    Arg {
        text: "${?}".into(),
        quoted: true,
    }
}

/// How every CMake input of the configure writes variables, for
/// [`World::values_of`].
#[derive(Debug, Default)]
struct Writers {
    /// Literal values `set(NAME value…)` gives (no `CACHE`), by name, each
    /// with the context it is set in (its script's directories, outside a
    /// function).
    set_values: FastMap<String, Vec<(String, Context)>>,
    /// Names some other command may write: every literal argument (a set
    /// value too: it may be a name passed on) of a command that is not
    /// known to write only its cache or nothing.
    other: FastSet<String>,
    /// Computed names a command may write (`${p}_EXECUTABLE`), as globs
    /// (`*` for each reference).
    computed: Vec<String>,
    /// `cmake_language(CALL …)` or `variable_watch()` is used somewhere:
    /// functions may run without a call site we see.
    dynamic_calls: bool,
}

/// Commands whose literal arguments write no variable of that name, or
/// only its cache entry (which the cache holds).
const NOT_WRITING: &[&str] = &[
    "if",
    "elseif",
    "else",
    "endif",
    "while",
    "endwhile",
    "foreach",
    "endforeach",
    "function",
    "endfunction",
    "macro",
    "endmacro",
    "mark_as_advanced",
    "message",
    "find_program",
    "find_file",
    "find_path",
    "find_library",
    "option",
    "unset",
    "return",
    "add_test",
    "add_executable",
    "add_library",
    "add_custom_command",
    "add_custom_target",
    "add_subdirectory",
    "add_compile_options",
    "add_compile_definitions",
    "add_definitions",
    "add_dependencies",
    "add_link_options",
    "include_directories",
    "link_directories",
    "link_libraries",
    "install",
    "set_property",
    "set_target_properties",
    "set_tests_properties",
    "set_source_files_properties",
    "set_directory_properties",
    "target_link_libraries",
    "target_include_directories",
    "target_compile_definitions",
    "target_compile_options",
    "target_compile_features",
    "target_sources",
    "target_link_options",
    "target_link_directories",
    "target_precompile_headers",
    "enable_testing",
    "enable_language",
    "cmake_minimum_required",
    "cmake_policy",
    "configure_file",
    "break",
    "continue",
];

/// Reads every CMake input (the project's, the build tree's and CMake's
/// own modules; the compilers toolchains-v1 adds are not scripts) and
/// records how it writes variables.
fn writers(reader: &Reader, inputs: &[String], scripts: &[Script]) -> Writers {
    let mut w = Writers::default();
    let mut record = |cmds: &[Command], at: Context| {
        let mut inside = false;
        for c in cmds {
            match c.name.as_str() {
                "function" | "macro" => inside = true,
                "endfunction" | "endmacro" => inside = false,
                "cmake_language" | "variable_watch" => w.dynamic_calls = true,
                _ => {}
            }
            // A value set inside a function is expanded with no directory known.
            let ctx = if inside {
                Context::default()
            } else {
                at.clone()
            };
            w.note(c, ctx);
        }
    };
    for s in scripts {
        let at = Context {
            list_dir: Some(s.dir.clone()),
            source_dir: s.lists.then(|| s.dir.clone()),
            params: Vec::new(),
        };
        record(s.cmds(), at);
    }
    let own: FastSet<&str> = scripts.iter().map(|s| s.path.as_str()).collect();
    for input in inputs.iter().filter(|i| !own.contains(i.as_str())) {
        let Ok(bytes) = reader.read(input) else {
            continue;
        };
        if bytes.iter().take(8192).any(|&b| b == 0) {
            continue;
        }
        record(
            &commands(&String::from_utf8_lossy(&bytes)),
            Context::default(),
        );
    }
    w
}

impl Writers {
    /// What command `c` may write. A name written as a reference alone
    /// (`set(${out} …)`) writes the name its reference holds, which is
    /// written literally where that is set or passed: only literal names
    /// and computed names with a literal part (`${p}_EXECUTABLE`) count.
    fn note(&mut self, c: &Command, at: Context) {
        let name = c.name.as_str();
        if NOT_WRITING.contains(&name) {
            return;
        }
        let args: Vec<&str> = c.words().collect();
        let cached = name == "set" && args.contains(&"CACHE");
        for (i, a) in args.iter().enumerate() {
            if name == "set" && i == 0 {
                if cached || a.starts_with("ENV{") {
                    continue;
                }
                if !a.contains("${") {
                    let mut vals: Vec<&str> = args[1..].to_vec();
                    if vals.last() == Some(&"PARENT_SCOPE") {
                        vals.pop();
                    }
                    let v = self.set_values.entry((*a).to_owned()).or_default();
                    v.push((vals.join(";"), at.clone()));
                    continue;
                }
            }
            if !a.contains("${") {
                self.other.insert((*a).to_owned());
            } else if (name != "set" && name != "list") || i == usize::from(name == "list") {
                // A computed value of set() or list() is a value; anywhere
                // else it may be a name.
                self.computed.extend(glob_of(a));
            }
        }
    }

    /// Whether some command may write `var` other than by a literal
    /// `set()` or into its cache entry.
    fn written_otherwise(&self, var: &str) -> bool {
        self.other.contains(var) || self.computed.iter().any(|g| glob_match(g, var))
    }
}

/// A computed name as a glob (`${p}_EXECUTABLE` → `*_EXECUTABLE`); `None`
/// for a name that is references alone.
fn glob_of(name: &str) -> Option<String> {
    let mut glob = String::new();
    let mut rest = name;
    while let Some(i) = rest.find("${") {
        glob.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('}') else {
            glob.push('*');
            rest = "";
            break;
        };
        if !glob.ends_with('*') {
            glob.push('*');
        }
        rest = &rest[i + j + 1..];
    }
    glob.push_str(rest);
    (glob.chars().any(|c| c != '*')).then_some(glob)
}

/// `*` matches any run of bytes.
fn glob_match(glob: &str, s: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == s;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !s.starts_with(first)
        || !s[first.len()..].ends_with(last)
        || s.len() < first.len() + last.len()
    {
        return false;
    }
    let mut at = first.len();
    let end = s.len() - last.len();
    for p in &parts[1..parts.len() - 1] {
        match s[at..end].find(p) {
            Some(i) => at += i + p.len(),
            None => return false,
        }
    }
    true
}

/// The project's scripts, and how variables get their values (read once,
/// when a call first needs a variable beyond the built-in directories).
struct World<'a> {
    scripts: &'a [Script],
    source_root: &'a str,
    known: OnceLock<(Writers, Option<Cache>)>,
    load: &'a (dyn Fn() -> (Writers, Option<Cache>) + Sync),
}

/// At most this many values for one path: more is a tail match.
const MAX_VALUES: usize = 64;

impl World<'_> {
    fn known(&self) -> &(Writers, Option<Cache>) {
        self.known.get_or_init(self.load)
    }

    /// Resolves read call `r` into `out`.
    fn add(&self, r: &ReadCall, out: &mut ConfigureReads) {
        let script = &self.scripts[r.script];
        let c = &script.cmds()[r.cmd];
        let sub = c.args[0].text.to_ascii_uppercase();
        let arg = &c.args[1].text;
        let site = format!(
            "configure reads it: file({sub} {arg} …) at {}:{}",
            script.rel, c.line
        );
        let contexts = match &r.function {
            None => vec![Context {
                list_dir: Some(script.dir.clone()),
                source_dir: script.lists.then(|| script.dir.clone()),
                params: Vec::new(),
            }],
            Some((name, params)) => match self.call_contexts(name, params) {
                Some(c) => c,
                None => {
                    out.unresolved.get_or_insert_with(|| {
                        format!("{site} (in {name}(), whose calls are not all visible)")
                    });
                    return;
                }
            },
        };
        for ctx in contexts {
            if r.frames.iter().any(|f| self.branch_not_taken(f, &ctx)) {
                continue;
            }
            self.resolve(arg, &ctx, &site, out);
        }
    }

    /// The contexts of every call of function `name` in the project's
    /// scripts; `None` when a call cannot be followed (a computed call
    /// anywhere, an argument that is a list, a call from another function).
    fn call_contexts(&self, name: &str, params: &[String]) -> Option<Vec<Context>> {
        if self.known().0.dynamic_calls {
            return None;
        }
        let mut out = Vec::new();
        for s in self.scripts {
            let mut inside = false;
            for c in s.cmds() {
                match c.name.as_str() {
                    "function" | "macro" => inside = true,
                    "endfunction" | "endmacro" => inside = false,
                    n if n == name => {
                        if inside || c.args.iter().any(|a| !a.quoted && a.text.contains("${")) {
                            return None;
                        }
                        let bound = params
                            .iter()
                            .zip(c.words())
                            .map(|(p, a)| (p.clone(), a.to_owned()))
                            .collect();
                        out.push(Context {
                            list_dir: Some(s.dir.clone()),
                            source_dir: s.lists.then(|| s.dir.clone()),
                            params: bound,
                        });
                    }
                    _ => {}
                }
            }
        }
        Some(out)
    }

    /// Resolves path `arg` in `ctx` into `out`.
    fn resolve(&self, arg: &str, ctx: &Context, site: &str, out: &mut ConfigureReads) {
        for value in self.expand(arg, ctx, 0) {
            if !value.contains("${") && !value.contains("$<") {
                let abs = if value.starts_with('/') {
                    paths::fold(&value)
                } else if let Some(d) = &ctx.source_dir {
                    paths::join_fold(d, &value)
                } else {
                    // Relative to a CMakeLists.txt we do not know: any
                    // file ending so.
                    let tail = value
                        .split('/')
                        .filter(|p| !matches!(*p, "" | "." | ".."))
                        .collect::<Vec<_>>()
                        .join("/");
                    push_tail(&tail, site, out);
                    continue;
                };
                out.exact.push((abs, site.to_owned()));
                continue;
            }
            let tail = value.rsplit_once('}').map(|(_, t)| t).unwrap_or("");
            push_tail(tail.trim_start_matches('/'), site, out);
        }
    }

    /// Every value `text` may have in `ctx`; a reference that cannot be
    /// resolved stays `${…}` in it.
    fn expand(&self, text: &str, ctx: &Context, depth: usize) -> Vec<String> {
        let Some(i) = text.find("${") else {
            return vec![text.to_owned()];
        };
        let Some(j) = text[i..].find('}') else {
            return vec![text.to_owned()];
        };
        let var = &text[i + 2..i + j];
        let (before, after) = (&text[..i], &text[i + j + 1..]);
        let values = match self.values_of(var, ctx, depth) {
            Some(v) => v,
            // Unresolved: keep it, and what follows as written.
            None => return vec![text.to_owned()],
        };
        let mut out = Vec::new();
        for v in values {
            for rest in self.expand(after, ctx, depth) {
                out.push(format!("{before}{v}{rest}"));
                if out.len() > MAX_VALUES {
                    return vec![text.to_owned()];
                }
            }
        }
        out
    }

    /// The values variable `var` may have in `ctx`, or `None`.
    fn values_of(&self, var: &str, ctx: &Context, depth: usize) -> Option<Vec<String>> {
        if var.contains('$') || depth > 4 {
            return None;
        }
        if let Some((_, v)) = ctx.params.iter().find(|(p, _)| p == var) {
            return Some(vec![v.clone()]);
        }
        match var {
            "CMAKE_CURRENT_LIST_DIR" => return ctx.list_dir.clone().map(|d| vec![d]),
            "CMAKE_CURRENT_SOURCE_DIR" => return ctx.source_dir.clone().map(|d| vec![d]),
            "CMAKE_SOURCE_DIR" => return Some(vec![self.source_root.to_owned()]),
            _ => {}
        }
        let (writers, cache) = self.known();
        if writers.written_otherwise(var) {
            return None;
        }
        let mut values = Vec::new();
        for (v, at) in writers.set_values.get(var).into_iter().flatten() {
            // A set value is expanded where it was set.
            values.extend(self.expand(v, at, depth + 1));
        }
        match cache.as_ref().and_then(|c| c.get(var)) {
            Some(v) => values.push(v.to_owned()),
            // Neither set nor cached: a variable CMake itself sets.
            None if values.is_empty() => return None,
            None => {}
        }
        values.sort();
        values.dedup();
        Some(values)
    }

    /// Whether the cache and the set values make the branch of `f` that
    /// holds the call certainly not taken.
    fn branch_not_taken(&self, f: &Frame, ctx: &Context) -> bool {
        let own_false = f
            .own
            .as_ref()
            .is_some_and(|c| self.condition(c, ctx) == Some(false));
        own_false
            || f.before
                .iter()
                .any(|c| self.condition(c, ctx) == Some(true))
    }

    /// `if()`'s value of `args` when only `NOT`, `AND`, `OR`, parentheses,
    /// constants and variables whose values are all known appear.
    fn condition(&self, args: &[Arg], ctx: &Context) -> Option<bool> {
        let mut at = 0;
        let v = self.or(args, &mut at, ctx)?;
        (at == args.len()).then_some(v)?
    }

    fn or(&self, a: &[Arg], at: &mut usize, ctx: &Context) -> Option<Option<bool>> {
        self.chain(a, at, ctx, ("OR", true), Self::and)
    }

    fn and(&self, a: &[Arg], at: &mut usize, ctx: &Context) -> Option<Option<bool>> {
        self.chain(a, at, ctx, ("AND", false), Self::not)
    }

    /// `operand (OP operand)*`, three-valued: one operand equal to
    /// `absorbing` decides it (true for OR, false for AND), all known
    /// otherwise give the other value, else unknown. `operand` is the next
    /// step of the grammar: unparsable (`None`), or its three-valued value.
    #[allow(clippy::type_complexity)]
    fn chain(
        &self,
        a: &[Arg],
        at: &mut usize,
        ctx: &Context,
        (op, absorbing): (&str, bool),
        operand: fn(&Self, &[Arg], &mut usize, &Context) -> Option<Option<bool>>,
    ) -> Option<Option<bool>> {
        let mut v = operand(self, a, at, ctx)?;
        while a.get(*at).is_some_and(|x| !x.quoted && x.text == op) {
            *at += 1;
            let r = operand(self, a, at, ctx)?;
            v = match (v, r) {
                (Some(x), _) | (_, Some(x)) if x == absorbing => Some(absorbing),
                (Some(_), Some(_)) => Some(!absorbing),
                _ => None,
            };
        }
        Some(v)
    }

    fn not(&self, a: &[Arg], at: &mut usize, ctx: &Context) -> Option<Option<bool>> {
        let x = a.get(*at)?;
        *at += 1;
        if x.quoted {
            return None;
        }
        match x.text.as_str() {
            "NOT" => Some(self.not(a, at, ctx)?.map(|v| !v)),
            "(" => {
                let v = self.or(a, at, ctx)?;
                (a.get(*at)?.text == ")").then(|| *at += 1)?;
                Some(v)
            }
            t if t.contains(['$', '<', '>', '"']) || is_operator(t) => None,
            t => Some(match constant(t) {
                Some(c) => Some(c),
                None => {
                    // Every value it may have, each known: true when none
                    // is a false constant, false when all are.
                    let Some(values) = self.values_of(t, ctx, 0) else {
                        return Some(None);
                    };
                    if values.is_empty() || values.iter().any(|v| v.contains("${")) {
                        return Some(None);
                    }
                    let truth: Vec<bool> =
                        values.iter().map(|v| constant(v) != Some(false)).collect();
                    if truth.iter().all(|&t| t) {
                        Some(true)
                    } else if truth.iter().all(|&t| !t) {
                        Some(false)
                    } else {
                        None
                    }
                }
            }),
        }
    }
}

/// `if()`'s operators and tests (any of them: the condition is not evaluated).
fn is_operator(t: &str) -> bool {
    matches!(
        t,
        "EXISTS"
            | "COMMAND"
            | "POLICY"
            | "TARGET"
            | "TEST"
            | "DEFINED"
            | "IS_DIRECTORY"
            | "IS_SYMLINK"
            | "IS_ABSOLUTE"
            | "IS_READABLE"
            | "IS_WRITABLE"
            | "IS_EXECUTABLE"
            | "IS_NEWER_THAN"
            | "MATCHES"
            | "LESS"
            | "GREATER"
            | "EQUAL"
            | "LESS_EQUAL"
            | "GREATER_EQUAL"
            | "STRLESS"
            | "STRGREATER"
            | "STREQUAL"
            | "STRLESS_EQUAL"
            | "STRGREATER_EQUAL"
            | "VERSION_LESS"
            | "VERSION_GREATER"
            | "VERSION_EQUAL"
            | "VERSION_LESS_EQUAL"
            | "VERSION_GREATER_EQUAL"
            | "IN_LIST"
            | "PATH_EQUAL"
    )
}

/// `if()`'s named constants: `Some(true)` for 1, ON, YES, TRUE, Y and
/// non-zero numbers, `Some(false)` for 0, OFF, NO, FALSE, N, IGNORE,
/// NOTFOUND, the empty string and `*-NOTFOUND`; `None` for anything else
/// (a variable's name when it is an argument of `if()`).
fn constant(t: &str) -> Option<bool> {
    let u = t.to_ascii_uppercase();
    match u.as_str() {
        "1" | "ON" | "YES" | "TRUE" | "Y" => Some(true),
        "0" | "OFF" | "NO" | "FALSE" | "N" | "IGNORE" | "NOTFOUND" | "" => Some(false),
        _ if u.ends_with("-NOTFOUND") => Some(false),
        _ => u.parse::<f64>().ok().map(|n| n != 0.0),
    }
}

fn push_tail(tail: &str, site: &str, out: &mut ConfigureReads) {
    if tail.is_empty() || tail.contains("${") {
        out.unresolved.get_or_insert_with(|| {
            format!("{site} (a file named only by a variable no evidence resolves)")
        });
        return;
    }
    out.tails.push((format!("/{tail}"), site.to_owned()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reads of project scripts `files` (path below `/s`, text) with
    /// the cache entries `cache` (`None`: no cache).
    fn reads(files: &[(&str, &str)], cache: Option<&[(&str, &str)]>) -> ConfigureReads {
        let scripts: Vec<Script> = files
            .iter()
            .map(|(p, t)| {
                let path = format!("/s/{p}");
                let dir = path.rsplit_once('/').unwrap().0.to_owned();
                Script {
                    lists: path.ends_with("/CMakeLists.txt"),
                    rel: (*p).to_owned(),
                    path,
                    dir,
                    text: (*t).to_owned(),
                    parsed: OnceLock::new(),
                }
            })
            .collect();
        let reader = Reader::new(Default::default());
        let load = || (writers(&reader, &[], &scripts), cache.map(Cache::of));
        let mut out = ConfigureReads::default();
        add_reads(&scripts, "/s", &load, &mut out);
        out.exact.sort();
        out
    }

    fn one(text: &str) -> ConfigureReads {
        reads(&[("sub/CMakeLists.txt", text)], None)
    }

    #[test]
    fn a_version_header_read_with_strings_is_found() {
        let r = one(
            "# file(READ not/this)\nfile(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/include/x/version.h\" v REGEX \"X\")\n",
        );
        assert!(r
            .site_reading("/s/sub/include/x/version.h")
            .unwrap()
            .ends_with("sub/CMakeLists.txt:2"));
        assert_eq!(r.site_reading("/s/sub/include/x/other.h"), None);
    }

    #[test]
    fn variables_fall_back_to_the_literal_tail_or_to_everything() {
        let r = one("FILE(READ ${PROJECT_SOURCE_DIR}/VERSION ver)\n");
        assert!(r.site_reading("/s/VERSION").is_some());
        assert!(r.site_reading("/s/x/VERSION").is_some());
        assert!(r.site_reading("/s/VERSION.txt").is_none());
        let r = one("set(F ${CMAKE_CURRENT_SOURCE_DIR}/v.txt)\nfile(READ ${F} v)\n");
        assert!(r.site_reading("/s/sub/v.txt").is_some());
        assert!(r.site_reading("/s/sub/w.txt").is_none());
        let r = one("file(READ ${NOWHERE} v)\n");
        assert!(r
            .site_reading("/s/anything.cpp")
            .unwrap()
            .contains("no evidence resolves"));
    }

    #[test]
    fn relative_paths_are_relative_to_the_lists_file_and_writes_are_not_reads() {
        let r = one("file(WRITE out.txt x)\nfile(SHA256 data/blob.bin h)\nprofile(READ x)\n");
        assert!(r.site_reading("/s/sub/data/blob.bin").is_some());
        assert!(r.site_reading("/s/sub/out.txt").is_none());
        assert!(r.site_reading("/s/sub/x").is_none());
        // In an included module the current source directory is the includer's.
        let r = reads(
            &[(
                "cmake/Ver.cmake",
                "file(READ ../VERSION v)\nfile(READ ${CMAKE_CURRENT_LIST_DIR}/x.in v)",
            )],
            None,
        );
        assert!(r.site_reading("/s/VERSION").is_some() && r.site_reading("/s/a/VERSION").is_some());
        assert!(r.site_reading("/s/cmake/x.in").is_some() && r.site_reading("/s/x.in").is_none());
    }

    #[test]
    fn a_function_parameter_takes_every_call_argument() {
        let text = "function(read_macro PATH MACRO OUTPUT)\n  file(STRINGS ${PATH} _line REGEX \"x\")\n  set(${OUTPUT} ${_line} PARENT_SCOPE)\nendfunction()\nread_macro(\"c/common/version.h\" \"A\" A)\nread_macro(c/other.h B B)\n";
        let r = reads(&[("CMakeLists.txt", text)], None);
        assert!(r.site_reading("/s/c/common/version.h").is_some());
        assert!(r.site_reading("/s/c/other.h").is_some());
        assert!(r.site_reading("/s/c/enc/encode.c").is_none());
        // A computed call anywhere: the calls we see may not be all.
        let r = reads(
            &[(
                "CMakeLists.txt",
                &format!("{text}cmake_language(CALL read_macro x y z)\n"),
            )],
            None,
        );
        assert!(r.site_reading("/s/c/enc/encode.c").is_some());
        // A list argument may shift the parameters.
        let r = reads(
            &[("CMakeLists.txt", &format!("{text}read_macro(${{ARGS}})\n"))],
            None,
        );
        assert!(r.site_reading("/s/c/enc/encode.c").is_some());
    }

    const FIND: &str = "find_program(X_EXECUTABLE x)\nif (X_EXECUTABLE)\n  file(STRINGS \"${X_EXECUTABLE}\" FIRST LIMIT_COUNT 1)\nendif()\n";

    #[test]
    fn a_cached_program_is_resolved_and_its_condition_evaluated() {
        let files = [
            ("CMakeLists.txt", "include(cmake/FindX.cmake)\n"),
            ("cmake/FindX.cmake", FIND),
        ];
        // Not found: the branch is not taken.
        let r = reads(&files, Some(&[("X_EXECUTABLE", "X_EXECUTABLE-NOTFOUND")]));
        assert!(r.is_empty(), "{r:?}");
        // Found outside the tree: a file of no project.
        let r = reads(&files, Some(&[("X_EXECUTABLE", "/usr/bin/x")]));
        assert!(r.site_reading("/s/src/a.c").is_none());
        assert!(r.site_reading("/usr/bin/x").is_some());
        // Found in the tree: that file.
        let r = reads(&files, Some(&[("X_EXECUTABLE", "/s/tools/x.py")]));
        assert!(
            r.site_reading("/s/tools/x.py").is_some() && r.site_reading("/s/src/a.c").is_none()
        );
        // No cache: unresolved.
        let r = reads(&files, None);
        assert!(r.site_reading("/s/src/a.c").is_some());
    }

    #[test]
    fn a_variable_written_otherwise_is_not_taken_from_the_cache() {
        let cache: &[(&str, &str)] = &[("X_EXECUTABLE", "X_EXECUTABLE-NOTFOUND")];
        for shadow in [
            "get_filename_component(X_EXECUTABLE /s/tools/x.py ABSOLUTE)",
            "string(TOLOWER ${Y} X_EXECUTABLE)",
            "set(p X)\nstring(APPEND ${p}_EXECUTABLE /s/tools/x.py)",
            "set(names X_EXECUTABLE)\nforeach(n ${names})\n set(${n} /s/tools/x.py)\nendforeach()",
        ] {
            let files = [("CMakeLists.txt", shadow), ("cmake/FindX.cmake", FIND)];
            let r = reads(&files, Some(cache));
            assert!(r.site_reading("/s/src/a.c").is_some(), "{shadow}");
        }
        // A literal set() adds its value to the cache's.
        let files = [
            (
                "CMakeLists.txt",
                "set(X_EXECUTABLE ${CMAKE_SOURCE_DIR}/tools/x.py)",
            ),
            ("cmake/FindX.cmake", FIND),
        ];
        let r = reads(&files, Some(cache));
        assert!(
            r.site_reading("/s/tools/x.py").is_some() && r.site_reading("/s/src/a.c").is_none()
        );
    }

    #[test]
    fn conditions_with_unknowns_are_not_evaluated() {
        let cache: &[(&str, &str)] = &[("A", "OFF"), ("B", "ON")];
        let read = |cond: &str| {
            let text =
                format!("if({cond})\nfile(READ x.txt v)\nelse()\nfile(READ y.txt v)\nendif()\n");
            let r = reads(&[("CMakeLists.txt", &text)], Some(cache));
            (
                r.site_reading("/s/x.txt").is_some(),
                r.site_reading("/s/y.txt").is_some(),
            )
        };
        assert_eq!(read("A"), (false, true));
        assert_eq!(read("NOT A AND (B OR C)"), (true, false));
        assert_eq!(read("C"), (true, true));
        assert_eq!(read("A STREQUAL B"), (true, true));
        assert_eq!(read("\"${A}\""), (true, true));
        assert_eq!(read("A OR C"), (true, true));
        assert_eq!(read("A AND C"), (false, true));
        // A value still holding a reference is not known to be false.
        let text = "set(D ${SOMEWHERE})\nif(D)\nfile(READ x.txt v)\nendif()\n";
        let r = reads(&[("CMakeLists.txt", text)], Some(cache));
        assert!(r.site_reading("/s/x.txt").is_some());
    }

    #[test]
    fn computed_names_as_globs() {
        assert_eq!(
            glob_of("Sphinx-${t}_EXECUTABLE").as_deref(),
            Some("Sphinx-*_EXECUTABLE")
        );
        assert_eq!(glob_of("${out}"), None);
        assert!(glob_match("Sphinx-*_EXECUTABLE", "Sphinx-build_EXECUTABLE"));
        assert!(!glob_match("Sphinx-*_EXECUTABLE", "Sphinx_EXECUTABLE"));
        assert!(glob_match("*_FOUND", "X_FOUND") && !glob_match("*_FOUND", "X_FOUNDS"));
    }
}
