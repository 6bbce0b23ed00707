//! What a test can reach at run time beyond its executable's link closure.
//!
//! The target graph says what a test's executable is built from. A test can
//! also *name* things: the program it runs may be handed a plugin's path, may
//! open a source file given as an argument, may read a file a custom command
//! wrote, may `dlopen` a library by its file name from its working directory,
//! or may consume what another test wrote. This module finds every such
//! reference that the static evidence shows, so that none of them is taken
//! for independence.
//!
//! The model (SAFETY-CONTRACT.md §4.6):
//! * **Channels.** A test's *texts* are its command (every element),
//!   ENVIRONMENT, ENVIRONMENT_MODIFICATION, WORKING_DIRECTORY and
//!   REQUIRED_FILES; the compile definitions (`defines`, and `-D` in compile
//!   fragments) of every target in its closure; and the contents of every
//!   build-tree header a unit of its closure includes (configured and
//!   generated headers). The *bytes* of every program and library it may run
//!   or load (the run-time sections of ELF files; whole files otherwise).
//! * **Names.** In texts, every absolute path (and every relative one joined
//!   to the working directory) is folded and compared with every spelling of
//!   every artifact (wherever it lives), with the build-time outputs of every
//!   target, with the build and source trees; every file-name token is
//!   compared with every artifact's file name. In bytes, file-name tokens.
//! * **What a name means.** An artifact (by path or file name) or a directory
//!   holding one at any depth (a plugin loader looks in subdirectories): the
//!   test depends on that target. A custom-command output:
//!   the test depends on the targets that list it (and so on its generator).
//!   A source-tree path: a change at or under it selects the test. A
//!   build-tree file that configure wrote (no newer than the reply index): a
//!   possible copy of a source file. A build-tree file written after
//!   configure, before the catalogue was listed, by no step the evidence
//!   shows: unknown (`TEST_READS_UNKNOWN_BUILD_FILE`).
//! * **Plugins beside a program.** A plugin (a MODULE library, or a SHARED
//!   library no target links) below a test's working directory, or below the
//!   directory of a program it runs, is reached without a name (a loader
//!   looks beside itself or in `./plugins`); so is one below a directory a
//!   binary's bytes climb to (`"/../lib/plugins"`), and any plugin when they
//!   climb by an unknown number of levels (a bare `..`, `parent_path()`).
//!
//! Matching only ever adds dependencies; an unrelated token that happens to
//! equal a file name costs precision, never safety.

use std::io::{Read, Seek, SeekFrom};
use std::time::SystemTime;

use crate::fasthash::{FastMap, FastSet};
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::{Catalogue, Test};
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::{Codemodel, TargetKind};
use crate::paths;
use crate::reason::{Code, Gap};

/// What one text source names.
#[derive(Clone, Debug, Default)]
struct Named {
    /// Targets it names, each with the reference in words.
    targets: Vec<(usize, String)>,
    /// Source-tree paths (absolute, folded).
    source: Vec<String>,
    /// Build-tree files written by configure (possible copies).
    configured: Vec<String>,
    /// Build-tree files of unknown origin, each as the test names it
    /// (`names FILE`, `names directory D, which holds FILE`).
    unknown: Vec<String>,
}

impl Named {
    fn absorb(&mut self, other: &Named) {
        self.targets.extend(other.targets.iter().cloned());
        self.source.extend(other.source.iter().cloned());
        self.configured.extend(other.configured.iter().cloned());
        self.unknown.extend(other.unknown.iter().cloned());
    }
}

/// What the evidence says one test names, beyond its graph closure.
#[derive(Clone, Debug, Default)]
pub struct TestReach {
    /// Source-tree paths it names (absolute, folded, sorted): a change at or
    /// under one of them selects the test.
    pub source: Vec<String>,
    /// Configure-time build-tree files it names (sorted): possible copies.
    pub configured: Vec<String>,
    /// Why each target joined its direct list (target, reference), sorted.
    pub via: Vec<(usize, String)>,
    /// The test names a build-tree file of unknown origin.
    pub unknown: Option<Gap>,
}

/// How a named build-tree path exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Missing,
    Dir,
    /// A file no newer than the reply index: written by configure.
    ConfigureTime,
    /// A file written after configure and before the catalogue was listed.
    BuildTime,
    /// A file written after the catalogue was listed (a test's own output).
    AfterListing,
}

/// Lookup tables over one codemodel, for naming.
pub struct Lookup<'g, 'm> {
    graph: &'g Graph<'m>,
    model: &'m Codemodel,
    /// Build-time output → targets that list it.
    outputs: FastMap<&'m str, Vec<usize>>,
    /// Every output, sorted (directory prefix queries).
    sorted_outputs: Vec<&'m str>,
    /// Every spelling of every loadable artifact with its owner, sorted
    /// (directory prefix queries: a plugin loader looks in subdirectories).
    sorted_loadable: Vec<(String, usize)>,
    /// Artifact file names with bytes outside [`is_name_byte`], searched as substrings.
    odd_names: Vec<(&'g String, &'g Vec<usize>)>,
    /// Per target: whether it is only ever loaded ([`plugin_like`]).
    plugins: Vec<bool>,
    /// Modification time of the catalogue (test outputs are newer).
    listed: Option<SystemTime>,
    stat_cache: std::cell::RefCell<FastMap<String, Kind>>,
    /// What each named build-tree directory holds that no artifact or
    /// output explains ([`Lookup::unexplained_in`]), walked once.
    dir_cache: std::cell::RefCell<FastMap<String, std::rc::Rc<Unexplained>>>,
}

/// Files under a named directory that a program could load or run (ELF
/// executables and shared objects, `#!` scripts) and that neither an
/// artifact nor a build-time output of the evidence is, by when they were
/// written ([`Kind`]): by configure (possible copies of source files), or by
/// a build step the evidence does not show (a `POST_BUILD` copy of a plugin).
#[derive(Default)]
struct Unexplained {
    /// Files reached through a symlink that are an artifact or an output:
    /// (its owner, how it was reached).
    links: Vec<(usize, String)>,
    configured: Vec<String>,
    build_time: Vec<String>,
}

/// At most this many entries of one named directory are looked at; a
/// larger one is itself of unknown content.
const MAX_DIR_ENTRIES: usize = 200_000;

/// Whether the file at `path` starts as an ELF executable or shared object
/// (`e_type` `ET_EXEC` or `ET_DYN`; not a relocatable `.o`) or a `#!` script:
/// something a test could load or run.
fn may_load_or_run(path: &std::path::Path) -> bool {
    let mut head = [0u8; 18];
    let Ok(mut f) = std::fs::File::open(path) else {
        return true; // unreadable: it cannot be ruled out
    };
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
    if n >= 2 && head.starts_with(b"#!") {
        return true;
    }
    if n < 18 || !head.starts_with(b"\x7fELF") {
        return false;
    }
    let e_type = match head[5] {
        2 => u16::from_be_bytes([head[16], head[17]]),
        _ => u16::from_le_bytes([head[16], head[17]]),
    };
    matches!(e_type, 2 | 3)
}

/// Bytes a file name token is made of.
#[inline]
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-' | b'~' | b'@' | b'#')
}

/// A run of path bytes (name bytes and `/`) from a binary's run-time data
/// that names a directory relative to another by climbing out of it: it has
/// a `/` and a `..` component (`"/../lib/plugins"`, a suffix a program
/// appends to a directory it computed, such as its own; `"../plugins"`;
/// `$ORIGIN/../lib` gives `/../lib`). A bare `..` is no path.
fn climbing_path(run: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(run).ok()?;
    (text.contains('/') && text.split('/').any(|part| part == "..")).then_some(text)
}

/// How a binary's bytes say that it leaves a directory for another.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Climb {
    /// A [`climbing_path`], joined to the directory it starts from.
    Path(String),
    /// A way out of any directory, by as many levels as the program likes:
    /// a dynamic symbol of a function that gives a directory's parent, or a
    /// bare `..` string ([`unbounded_climb`]). Where it ends is unknown, so
    /// the binary may load any plugin.
    Anywhere(&'static str),
}

/// The path of a [`Climb::Path`] that is relative (no leading `/`: it may
/// be opened as it stands, from the working directory).
fn relative_climb(c: &Climb) -> Option<&str> {
    match c {
        Climb::Path(p) if !p.starts_with('/') => Some(p),
        _ => None,
    }
}

/// Functions that give the parent of a directory, as their names stand in a
/// binary's dynamic string table when it calls them from a shared library,
/// each with its name in words (`QDir d(appDir); d.cdUp(); d.cd("plugins")`;
/// `exe.parent_path().parent_path() / "lib"`; `dirname(self)`).
const PARENT_FUNCTIONS: &[(&str, &str)] = &[
    ("dirname", "dirname()"),
    (
        "_ZNKSt10filesystem7__cxx114path11parent_pathEv",
        "std::filesystem::path::parent_path()",
    ),
    (
        "_ZNKSt10filesystem4path11parent_pathEv",
        "std::filesystem::path::parent_path()",
    ),
    (
        "_ZNKSt12experimental10filesystem2v17__cxx114path11parent_pathEv",
        "std::experimental::filesystem::path::parent_path()",
    ),
    (
        "_ZNK5boost10filesystem4path11parent_pathEv",
        "boost::filesystem::path::parent_path()",
    ),
    ("_ZN4QDir4cdUpEv", "QDir::cdUp()"),
    ("_ZNK9QFileInfo4pathEv", "QFileInfo::path()"),
    (
        "_ZNK9QFileInfo12absolutePathEv",
        "QFileInfo::absolutePath()",
    ),
    ("_ZNK9QFileInfo3dirEv", "QFileInfo::dir()"),
    ("_ZNK9QFileInfo11absoluteDirEv", "QFileInfo::absoluteDir()"),
];

/// A whole run of path bytes that climbs out of a directory by an unknown
/// number of levels ([`Climb::Anywhere`]): one of the [`PARENT_FUNCTIONS`],
/// or `..` on its own (`dir / ".." / "lib"`, `QDir::cd("..")`), in words.
fn unbounded_climb(run: &[u8]) -> Option<&'static str> {
    if run == b".." {
        return Some("\"..\"");
    }
    PARENT_FUNCTIONS
        .iter()
        .find(|(symbol, _)| symbol.as_bytes() == run)
        .map(|(_, words)| *words)
}

/// Bytes that end a path token (besides the end of the text).
fn ends_path(c: char, allow_space: bool) -> bool {
    matches!(
        c,
        '"' | '\'' | ';' | ',' | '\t' | '\n' | '\r' | '<' | '>' | '|' | '(' | ')' | '`' | '\0'
    ) || (!allow_space && c == ' ')
}

/// Characters after which a path token may start.
fn starts_after(c: char) -> bool {
    !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+' | '~' | '/' | '$' | '\\'))
}

impl<'g, 'm> Lookup<'g, 'm> {
    /// Builds the tables. `listed` is the catalogue file's modification time.
    pub fn new(graph: &'g Graph<'m>, listed: Option<SystemTime>) -> Self {
        let model = graph.model();
        let mut outputs: FastMap<&'m str, Vec<usize>> = FastMap::default();
        for (i, t) in model.targets.iter().enumerate() {
            for g in &t.generated {
                outputs.entry(g.as_str()).or_default().push(i);
            }
        }
        let mut sorted_outputs: Vec<&'m str> = outputs.keys().copied().collect();
        sorted_outputs.sort_unstable();
        let sorted_loadable = sorted_loadable(graph);
        let plugins = plugin_like(graph);
        let odd_names = odd_names(graph.artifact_names());
        Lookup {
            graph,
            model,
            outputs,
            sorted_outputs,
            sorted_loadable,
            odd_names,
            plugins,
            listed,
            stat_cache: Default::default(),
            dir_cache: Default::default(),
        }
    }

    fn kind(&self, path: &str) -> Kind {
        if let Some(k) = self.stat_cache.borrow().get(path) {
            return *k;
        }
        let k = match std::fs::metadata(path) {
            Err(_) => Kind::Missing,
            Ok(m) if m.is_dir() => Kind::Dir,
            Ok(m) => {
                let t = m.modified().ok();
                match (t, self.model.reply_time, self.listed) {
                    (Some(t), Some(r), _) if t <= r => Kind::ConfigureTime,
                    (Some(t), _, Some(l)) if t > l => Kind::AfterListing,
                    _ => Kind::BuildTime,
                }
            }
        };
        self.stat_cache.borrow_mut().insert(path.to_owned(), k);
        k
    }

    /// What the build-tree directory `dir` holds, at any depth, that a test
    /// naming it could load or run and that the evidence does not explain
    /// (see [`Unexplained`]). Artifacts and build-time outputs are skipped
    /// (the caller reaches their targets); a symlink to an artifact counts as
    /// the artifact.
    fn unexplained_in(&self, dir: &str) -> std::rc::Rc<Unexplained> {
        if let Some(u) = self.dir_cache.borrow().get(dir) {
            return u.clone();
        }
        // A placeholder first: a symlink cycle back here finds it.
        self.dir_cache
            .borrow_mut()
            .insert(dir.to_owned(), Default::default());
        let mut u = Unexplained::default();
        let known =
            |p: &str| !self.graph.artifact_owners(p).is_empty() || self.outputs.contains_key(p);
        for (n, entry) in walkdir::WalkDir::new(dir)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .enumerate()
        {
            let Ok(entry) = entry else {
                u.build_time
                    .push(format!("{dir} (a part of it cannot be read)"));
                break;
            };
            if n > MAX_DIR_ENTRIES {
                u.build_time
                    .push(format!("{dir} (more than {MAX_DIR_ENTRIES} entries)"));
                break;
            }
            let ft = entry.file_type();
            if ft.is_dir() {
                continue;
            }
            let Some(path) = entry.path().to_str().map(paths::fold) else {
                u.build_time
                    .push(format!("{dir} (a file name in it is not UTF-8)"));
                break;
            };
            if known(&path) {
                continue;
            }
            if ft.is_symlink() && entry.path().is_dir() {
                // A symlinked subdirectory: what the directory it leads to
                // holds (walked once; a cycle meets the placeholder).
                let real = std::fs::canonicalize(entry.path())
                    .ok()
                    .and_then(|r| r.to_str().map(paths::fold));
                match real {
                    Some(real) if paths::is_within(&real, &self.model.build_root) => {
                        u.links.extend(
                            self.under(&real)
                                .map(|(o, a, _)| (o, format!("{a} (through the symlink {path})"))),
                        );
                        let sub = self.unexplained_in(&real);
                        u.links.extend(sub.links.iter().cloned());
                        u.configured.extend(sub.configured.iter().cloned());
                        u.build_time.extend(sub.build_time.iter().cloned());
                    }
                    // Outside the build tree: not a build step's copy.
                    _ => {}
                }
                continue;
            }
            if !may_load_or_run(entry.path()) {
                continue;
            }
            // Through a symlink (the named directory's own, or the file's):
            // an artifact or output under its real path is that one.
            let real = std::fs::canonicalize(entry.path())
                .ok()
                .and_then(|r| r.to_str().map(paths::fold))
                .filter(|r| *r != path);
            if let Some(real) = real {
                let mut owners: Vec<usize> = self.graph.artifact_owners(&real).to_vec();
                owners.extend(self.outputs.get(real.as_str()).into_iter().flatten());
                if !owners.is_empty() {
                    u.links.extend(
                        owners
                            .into_iter()
                            .map(|o| (o, format!("{path} (its artifact or output {real})"))),
                    );
                    continue;
                }
            }
            match self.kind(&path) {
                Kind::ConfigureTime => u.configured.push(path),
                // A program written after the catalogue was listed is not
                // taken for a test's output here: a rebuild after the listing
                // rewrites such copies too.
                Kind::BuildTime | Kind::AfterListing => u.build_time.push(path),
                Kind::Missing | Kind::Dir => {}
            }
        }
        let u = std::rc::Rc::new(u);
        self.dir_cache
            .borrow_mut()
            .insert(dir.to_owned(), u.clone());
        u
    }

    /// The loadable artifacts and the build-time outputs at any depth under
    /// `dir` (two prefix queries on the sorted tables), with their owners:
    /// (owner, path, whether it is an artifact rather than an output).
    fn under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = (usize, &'a str, bool)> + 'a {
        let artifacts = at_or_below(&self.sorted_loadable, |(a, _)| a.as_str(), dir)
            .map(|(a, o)| (*o, a.as_str(), true));
        let outputs = at_or_below(&self.sorted_outputs, |o| o, dir)
            .flat_map(move |o| self.outputs[o].iter().map(move |&t| (t, *o, false)));
        artifacts.chain(outputs)
    }

    /// The plugins below `dir` ([`modules_below`]).
    fn modules_under<'a>(&'a self, dir: &'a str) -> Vec<(usize, &'a str)> {
        modules_below(self.model, &self.sorted_loadable, &self.plugins, dir)
    }

    /// Adds to `out` every plugin ([`plugin_like`]) below a directory a test's programs
    /// may look in without naming it: each of its working directories `wds`,
    /// and the directory of every program among `direct` (Qt's library paths
    /// start with the application's own directory; a loader may look beside
    /// `/proc/self/exe`). `looked` holds the directories already done.
    fn modules_beside(
        &self,
        direct: &[usize],
        wds: &[Option<String>],
        looked: &mut FastSet<String>,
        out: &mut Named,
    ) {
        let mut add = |dir: &str, whose: &str, out: &mut Named| {
            if looked.insert(dir.to_owned()) {
                for (o, a) in self.modules_under(dir) {
                    let kind = match self.model.targets[o].kind {
                        TargetKind::ModuleLibrary => "MODULE library",
                        _ => "SHARED library that no target links",
                    };
                    out.targets
                        .push((o, format!("may load {kind} {a}, below {whose}")));
                }
            }
        };
        for wd in wds.iter().flatten() {
            let wd = paths::fold(wd);
            add(&wd, &format!("its working directory {wd}"), out);
        }
        for &t in direct {
            for (a, dir) in program_dirs(&self.model.targets[t]) {
                add(dir, &format!("the directory of its program {a}"), out);
            }
        }
    }

    /// File-name tokens of `text` that are artifact names.
    fn scan_names(&self, text: &str, out: &mut Named) {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !is_name_byte(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && is_name_byte(b[i]) {
                i += 1;
            }
            if b.get(i) == Some(&b'/') {
                continue; // a directory component, not a file
            }
            let tok = &text[start..i];
            if let Some(owners) = self.graph.artifact_names().get(tok) {
                for &o in owners {
                    out.targets.push((o, format!("names artifact file {tok}")));
                }
            }
        }
        for &(name, owners) in &self.odd_names {
            if text.contains(name.as_str()) {
                for &o in owners {
                    out.targets.push((o, format!("names artifact file {name}")));
                }
            }
        }
    }

    /// For a scripted test: the source-tree files its command names (the
    /// scripts it runs, read but never run) and the targets whose artifacts
    /// those files name.
    pub fn script_targets(&self, test: &Test) -> (Vec<usize>, Vec<String>) {
        let wds = working_dirs(test, self.model);
        let wd = wds[0].as_deref();
        let (src, build) = (&self.model.source_root, &self.model.build_root);
        let mut files = Vec::new();
        for arg in test.command.iter().flatten() {
            for wd in &wds {
                for p in Self::path_candidates(arg, wd.as_deref()) {
                    if paths::is_within(&p, src)
                        && !paths::is_within(&p, build)
                        && std::fs::metadata(&p).is_ok_and(|m| m.is_file())
                    {
                        files.push(p);
                    }
                }
            }
        }
        files.sort();
        files.dedup();
        let mut named = Named::default();
        for f in &files {
            if let Ok(bytes) = crate::ingest::read_capped(f, 16 << 20) {
                let text = String::from_utf8_lossy(&bytes);
                let dir = f.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                self.scan_text(&text, wd.or(Some(dir)), false, &mut named);
            }
        }
        let mut targets: Vec<usize> = named.targets.into_iter().map(|(t, _)| t).collect();
        targets.sort_unstable();
        targets.dedup();
        (targets, files)
    }

    /// Path candidates in `text`: absolute ones, and relative ones joined to `wd`.
    fn path_candidates(text: &str, wd: Option<&str>) -> Vec<String> {
        // Bytewise: every delimiter is ASCII, and no byte of a multi-byte
        // UTF-8 character is ASCII, so slicing at these positions is safe.
        const MAX: usize = 4096;
        let b = text.as_bytes();
        let ends = |c: u8, allow_space: bool| ends_path(c as char, allow_space);
        let starts = |c: u8| c < 0x80 && starts_after(c as char);
        let mut out = Vec::new();
        for i in 0..b.len() {
            let c = b[i];
            if c >= 0x80 || (i > 0 && !starts(b[i - 1])) || ends(c, false) || c == b'=' || c == b':'
            {
                continue;
            }
            let absolute = c == b'/';
            for allow_space in [false, true] {
                let limit = (i + MAX).min(b.len());
                let e = (i..limit)
                    .find(|&j| ends(b[j], allow_space))
                    .unwrap_or(limit);
                if !text.is_char_boundary(e) {
                    continue;
                }
                let tok = text[i..e].trim_end_matches([' ', '.', ':']);
                if tok.is_empty() {
                    continue;
                }
                if absolute {
                    out.push(paths::fold(tok));
                    // A search-path list (`QT_PLUGIN_PATH=/a/bin:/b`): the
                    // element before each ':' too (those after one start
                    // candidates of their own).
                    for (at, _) in tok.match_indices(':') {
                        out.push(paths::fold(&tok[..at]));
                    }
                } else if let Some(wd) = wd.filter(|w| w.starts_with('/')) {
                    // A relative name: only file-like ones (a `/` or a `.`); a
                    // bare word is an artifact name at most (see scan_names).
                    if tok.contains('/') || tok.contains('.') {
                        out.push(paths::join_fold(wd, tok));
                    }
                }
                if e < limit && !allow_space && b[e] != b' ' {
                    break; // both variants end at the same delimiter
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Everything `text` names. `is_wd`: the text is a working directory, which
    /// names itself only (a test's default working directory holds much that
    /// it does not read).
    fn scan_text(&self, text: &str, wd: Option<&str>, is_wd: bool, out: &mut Named) {
        if !is_wd {
            self.scan_names(text, out);
        }
        let (src, build) = (&self.model.source_root, &self.model.build_root);
        let candidates = if is_wd {
            vec![paths::fold(text)]
        } else {
            Self::path_candidates(text, wd)
        };
        for p in candidates {
            for &o in self.graph.artifact_owners(&p) {
                out.targets.push((o, format!("names artifact {p}")));
            }
            if paths::is_within(&p, src) && !paths::is_within(&p, build) {
                out.source.push(p.clone());
            }
            if let Some(owners) = self.outputs.get(p.as_str()) {
                for &o in owners {
                    out.targets
                        .push((o, format!("names build-time output {p}")));
                }
            }
            let in_build = paths::is_within(&p, build);
            if !in_build && !paths::is_within(&p, src) {
                continue;
            }
            match self.kind(&p) {
                Kind::Missing | Kind::AfterListing => {}
                Kind::Dir if is_wd => {}
                Kind::Dir => {
                    // At any depth: plugin loaders look in subdirectories
                    // (`QT_PLUGIN_PATH=DIR` loads `DIR/<type>/*.so`).
                    for (o, a, artifact) in self.under(&p) {
                        let why = if !artifact {
                            format!("names directory {p}, which holds build-time output {a}")
                        } else if a.rsplit_once('/').is_some_and(|(d, _)| d == p) {
                            format!("names directory {p}, which holds its artifact")
                        } else {
                            format!("names directory {p}, which holds its artifact {a}")
                        };
                        out.targets.push((o, why));
                    }
                    // What else it holds that a program could load or run: a
                    // plugin a POST_BUILD step copied there is no artifact.
                    if in_build {
                        let u = self.unexplained_in(&p);
                        for (o, link) in &u.links {
                            out.targets
                                .push((*o, format!("names directory {p}, which holds {link}")));
                        }
                        out.configured.extend(u.configured.iter().cloned());
                        out.unknown.extend(
                            u.build_time
                                .iter()
                                .map(|f| format!("names directory {p}, which holds {f}")),
                        );
                    }
                }
                Kind::ConfigureTime | Kind::BuildTime if !in_build => {}
                Kind::ConfigureTime => {
                    if self.graph.artifact_owners(&p).is_empty()
                        && !self.outputs.contains_key(p.as_str())
                    {
                        out.configured.push(p);
                    }
                }
                Kind::BuildTime => {
                    if self.graph.artifact_owners(&p).is_empty()
                        && !self.outputs.contains_key(p.as_str())
                    {
                        out.unknown.push(format!("names {p}"));
                    }
                }
            }
        }
    }
}

/// Every spelling of every loadable artifact with its owner, sorted.
fn sorted_loadable(graph: &Graph<'_>) -> Vec<(String, usize)> {
    let model = graph.model();
    let mut sorted: Vec<(String, usize)> = graph
        .artifact_spellings()
        .iter()
        .flat_map(|(path, owners)| {
            owners
                .iter()
                .copied()
                .filter(|&o| is_loadable(model.targets[o].kind))
                .map(move |o| (path.to_owned(), o))
        })
        .collect();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
}

/// Per target: whether it is only ever loaded, never linked: a MODULE
/// library, or a SHARED library that no target of the build depends on (a
/// plugin built as a shared library; a library that something links, or
/// waits for, is not taken for one).
fn plugin_like(graph: &Graph<'_>) -> Vec<bool> {
    let model = graph.model();
    (0..model.targets.len())
        .map(|t| match model.targets[t].kind {
            TargetKind::ModuleLibrary => true,
            TargetKind::SharedLibrary => graph.dependents_of(t).is_empty(),
            _ => false,
        })
        .collect()
}

/// What the loading-by-bytes walk of one run has found so far: each
/// target's scan ([`scan_target_binaries`], done once), the gaps, and the
/// edges that need a word of why in a chain (`(t, o)` → why: a climbing
/// path, or a linked library's own directory).
struct Scans<'n> {
    scanner: Scanner<'n>,
    scanned: FastMap<usize, (Vec<usize>, Vec<Climb>)>,
    gaps: Vec<Gap>,
    edge_why: FastMap<(usize, usize), String>,
}

impl Scans<'_> {
    /// [`scan_target_binaries`] of `t`, once per run.
    fn of(&mut self, model: &Codemodel, t: usize) -> &(Vec<usize>, Vec<Climb>) {
        let Scans {
            scanner,
            scanned,
            gaps,
            ..
        } = self;
        scanned
            .entry(t)
            .or_insert_with(|| scan_target_binaries(model, t, scanner, gaps))
    }
}

/// What target `t`'s binaries may load or run: the loadable targets whose
/// artifact file names its run-time bytes hold ([`scan_target_binaries`]);
/// the plugins ([`plugin_like`]) below every directory those bytes name by
/// climbing from the binary's own directory (`"/../lib/plugins"`); and, for
/// a program, the plugins below its directory (a loader looks beside
/// itself, SAFETY-CONTRACT §4.6; so may a shared library that some target
/// links, from its own directory) and below every directory that the bytes
/// of a shared library it links name by climbing from the program's
/// directory (a plugin manager in a library that starts from
/// `/proc/self/exe`), sorted.
fn may_load(
    graph: &Graph<'_>,
    (sorted, plugins): (&[(String, usize)], &[bool]),
    t: usize,
    scans: &mut Scans<'_>,
) -> Vec<usize> {
    let model = graph.model();
    let (mut found, own_climbs) = scans.of(model, t).clone();
    let target = &model.targets[t];
    let own_dirs: Vec<&str> = target.artifacts.iter().map(|a| dir_of(a)).collect();
    let program_dirs: Vec<&str> = program_dirs(target).map(|(_, d)| d).collect();
    // Where t may look for plugins without a name, each with the word of why
    // its chain needs (none for a program's own directory).
    let mut looks: Vec<(String, Option<String>)> =
        program_dirs.iter().map(|d| (d.to_string(), None)).collect();
    // A linked shared library may look beside itself too (`dladdr`); a
    // plugin is not taken to load its siblings.
    if target.kind == TargetKind::SharedLibrary && !plugins[t] {
        looks.extend(own_dirs.iter().map(|d| {
            (
                d.to_string(),
                Some(format!("below {d}, the directory of this library")),
            )
        }));
    }
    // Climbing paths: t's own, from its directory; for a program, those of
    // the shared libraries it links, from the program's directory. An
    // unbounded climb (in t's bytes, or for a program in a linked library's)
    // may end anywhere: every plugin.
    let mut anywhere: Option<String> = None;
    let mut take = |cs: &[Climb], bases: &[&str], whose: &str| {
        for c in cs {
            match c {
                Climb::Path(climb) => looks.extend(bases.iter().map(|base| {
                    let dir = paths::join_fold(base, climb.trim_start_matches('/'));
                    let why = format!("below {dir}, which {climb:?} in {whose} bytes names");
                    (dir, Some(why))
                })),
                Climb::Anywhere(what) => {
                    anywhere.get_or_insert_with(|| {
                        format!("any plugin: {what} in {whose} bytes climbs out of every directory it starts from")
                    });
                }
            }
        }
    };
    take(&own_climbs, &own_dirs, "its");
    if !program_dirs.is_empty() {
        for l in graph.closure(&[t]) {
            if l != t && model.targets[l].kind == TargetKind::SharedLibrary {
                let whose = format!("linked library {:?}'s", model.targets[l].name);
                let lib_climbs = scans.of(model, l).1.clone();
                take(&lib_climbs, &program_dirs, &whose);
            }
        }
    }
    let mut seen: FastSet<usize> = found.iter().copied().collect();
    seen.insert(t);
    if let Some(why) = &anywhere {
        for o in (0..model.targets.len()).filter(|&o| plugins[o]) {
            if seen.insert(o) {
                scans.edge_why.insert((t, o), why.clone());
                found.push(o);
            }
        }
    }
    for (dir, why) in &looks {
        for (o, _) in modules_below(model, sorted, plugins, dir) {
            if seen.insert(o) {
                if let Some(why) = why {
                    scans.edge_why.insert((t, o), why.clone());
                }
                found.push(o);
            }
        }
    }
    found.sort_unstable();
    found
}

/// The elements of `sorted` (sorted by `key`, folded paths) that are `dir`
/// or lie below it. Those below share the prefix `dir/` and so are one run;
/// a sibling such as `dir-old/x` or `dir.d/x` sorts between `dir` and
/// `dir/`, so a scan from `dir` that stops at the first path outside would
/// miss them all.
fn at_or_below<'a, T>(
    sorted: &'a [T],
    key: impl Fn(&T) -> &str,
    dir: &str,
) -> impl Iterator<Item = &'a T> + 'a {
    let dir = dir
        .strip_suffix('/')
        .filter(|d| !d.is_empty())
        .unwrap_or(dir);
    let prefix = if dir == "/" {
        "/".to_owned()
    } else {
        format!("{dir}/")
    };
    let lo = sorted.partition_point(|x| key(x) < prefix.as_str());
    let hi = lo + sorted[lo..].partition_point(|x| key(x).starts_with(prefix.as_str()));
    let exact_lo = sorted.partition_point(|x| key(x) < dir);
    let exact_hi = exact_lo + sorted[exact_lo..].partition_point(|x| key(x) == dir);
    let exact = if dir == "/" {
        &sorted[..0]
    } else {
        &sorted[exact_lo..exact_hi]
    };
    exact.iter().chain(&sorted[lo..hi])
}

/// The plugins (`plugins[t]`, [`plugin_like`]) whose artifact lies in `dir` or below it, each with
/// one spelling of its artifact (sorted by spelling, each target once), from
/// `sorted` (every spelling of every loadable artifact with its owner,
/// sorted). A directory outside the build tree does not reach into a build
/// tree nested below it (`WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}` with the
/// build in `<source>/build`): a loader there looks in a subdirectory it
/// knows, and the build directory's name is no such thing.
fn modules_below<'a>(
    model: &Codemodel,
    sorted: &'a [(String, usize)],
    plugins: &[bool],
    dir: &str,
) -> Vec<(usize, &'a str)> {
    let mut seen: FastSet<usize> = FastSet::default();
    let build = model.build_root.as_str();
    let outside = !paths::is_within(dir, build);
    at_or_below(sorted, |(a, _)| a.as_str(), dir)
        .filter(|(a, o)| plugins[*o] && !(outside && paths::is_within(a, build)) && seen.insert(*o))
        .map(|(a, o)| (*o, a.as_str()))
        .collect()
}

/// Each artifact of `target` when it is a program, with its directory.
fn program_dirs(target: &crate::ingest::file_api::Target) -> impl Iterator<Item = (&str, &str)> {
    let program = target.kind == TargetKind::Executable;
    target
        .artifacts
        .iter()
        .filter(move |a| program && a.contains('/'))
        .map(|a| (a.as_str(), dir_of(a)))
}

/// The directory an (absolute) artifact path is in; `/` for one at the root.
fn dir_of(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((d, _)) => d,
    }
}

fn is_loadable(kind: TargetKind) -> bool {
    matches!(
        kind,
        TargetKind::Executable | TargetKind::SharedLibrary | TargetKind::ModuleLibrary
    )
}

/// The texts of a target that its programs receive: compile definitions,
/// and `-D` definitions written as compile fragments.
fn target_texts(model: &Codemodel, t: usize) -> Vec<&str> {
    let target = &model.targets[t];
    let mut v: Vec<&str> = target.defines.iter().map(String::as_str).collect();
    for f in &target.flags {
        let mut words = f.split_ascii_whitespace();
        while let Some(w) = words.next() {
            if w == "-D" {
                v.extend(words.next());
            } else if let Some(d) = w.strip_prefix("-D") {
                v.push(d);
            }
        }
    }
    v
}

/// Extends every mapped test's direct targets with what its channels name,
/// and returns, per test, what else they name. `headers` reads the build-tree
/// headers (bounded by `max_bytes` each).
pub fn extend_mappings(
    lookup: &Lookup<'_, '_>,
    deps: &DepEvidence,
    catalogue: &Catalogue,
    mappings: &mut [TestMapping],
    max_bytes: u64,
) -> (Vec<TestReach>, Vec<Gap>) {
    let model = lookup.model;
    let graph = lookup.graph;
    let build = &model.build_root;
    let src = &model.source_root;
    let mut gaps = Vec::new();
    // Build-tree headers each target's units include.
    let mut headers_of: Vec<Vec<u32>> = vec![Vec::new(); model.targets.len()];
    // Decided once per file, not once per listing.
    let git = format!("{src}/.git");
    let in_build: Vec<bool> = deps
        .files
        .iter()
        // In-source builds: the build tree lies inside the source tree.
        .map(|f| paths::is_within(f, build) && !paths::is_within(f, &git))
        .collect();
    let any_in_build = in_build.contains(&true);
    for tu in deps.tus.iter().filter(|_| any_in_build) {
        for &p in &tu.prereqs {
            if in_build.get(p as usize) == Some(&true) {
                headers_of[tu.target].push(p);
            }
        }
    }
    for h in &mut headers_of {
        h.sort_unstable();
        h.dedup();
    }
    // What each header and each target's own texts name, computed once.
    let mut header_named: FastMap<u32, Named> = FastMap::default();
    let mut target_named: Vec<Option<Named>> = vec![None; model.targets.len()];
    let mut named_of_target = |t: usize, gaps: &mut Vec<Gap>| -> Named {
        if let Some(n) = &target_named[t] {
            return n.clone();
        }
        let mut n = Named::default();
        // Relative paths in definitions and headers are relative to each
        // test's working directory at run time, not to anything here: only
        // absolute paths and file names count (SAFETY-CONTRACT §9).
        for text in target_texts(model, t) {
            lookup.scan_text(text, None, false, &mut n);
        }
        for &h in &headers_of[t] {
            let hn = header_named.entry(h).or_insert_with(|| {
                let mut hn = Named::default();
                let path = &deps.files[h as usize];
                match crate::ingest::read_capped(path, max_bytes) {
                    Ok(bytes) => {
                        let text = String::from_utf8_lossy(&bytes);
                        lookup.scan_text(&text, None, false, &mut hn);
                    }
                    Err(e) => gaps.push(Gap::new(
                        Code::DepPrereqUninspectable,
                        format!(
                            "build-tree header {path} cannot be read to see what it names: {e}"
                        ),
                    )),
                }
                hn
            });
            n.absorb(hn);
        }
        target_named[t] = Some(n.clone());
        n
    };
    // The targets whose own texts or headers name anything, and every target
    // that depends on one: only a test reaching one of those needs the
    // closure walk below (one reverse walk instead of one closure per test).
    let sources: Vec<usize> = (0..model.targets.len())
        .filter(|&t| {
            let n = named_of_target(t, &mut gaps);
            !(n.targets.is_empty()
                && n.source.is_empty()
                && n.configured.is_empty()
                && n.unknown.is_empty())
        })
        .collect();
    let reaches_source = graph.reverse_bfs(&sources);
    let mut file_named = NamedFiles::default();
    let mut out = Vec::with_capacity(catalogue.tests.len());
    for (test, m) in catalogue.tests.iter().zip(mappings.iter_mut()) {
        let TestMapping::Mapped { direct } = m else {
            out.push(TestReach::default());
            continue;
        };
        let wds = working_dirs(test, model);
        let mut own = Named::default();
        scan_test(lookup, test, &wds, &mut own);
        scan_named_files(
            lookup,
            (test, &wds),
            &mut own,
            (max_bytes, &mut gaps),
            &mut file_named,
        );
        let mut named = own.clone();
        let mut looked: FastSet<String> = FastSet::default();
        lookup.modules_beside(direct, &wds, &mut looked, &mut named);
        let mut via: Vec<(usize, String)> = Vec::new();
        // Fixed point: a target that joins brings its closure's texts, and
        // a program that joins the plugins beside it.
        let mut done: FastSet<usize> = FastSet::default();
        let quiet = named.targets.iter().all(|(t, _)| direct.contains(t))
            && direct.iter().all(|&d| reaches_source[d].is_none());
        loop {
            if quiet {
                break;
            }
            let closure = graph.closure(direct);
            let mut grew = false;
            for t in closure {
                if done.insert(t) {
                    let n = named_of_target(t, &mut gaps);
                    named.absorb(&n);
                }
            }
            lookup.modules_beside(direct, &[], &mut looked, &mut named);
            for (t, why) in &named.targets {
                if !direct.contains(t) {
                    direct.push(*t);
                    via.push((*t, why.clone()));
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let mut r = TestReach {
            source: named.source,
            configured: named.configured,
            via,
            unknown: None,
        };
        r.source.sort();
        r.source.dedup();
        r.configured.sort();
        r.configured.dedup();
        r.via.sort();
        r.via.dedup_by_key(|(t, _)| *t);
        named.unknown.sort();
        named.unknown.dedup();
        if let Some(u) = named.unknown.first() {
            r.unknown = Some(Gap::new(
                Code::TestReadsUnknownBuildFile,
                format!(
                    "test {:?} {u}, which a build step wrote after configure and no target in the evidence produces",
                    test.name
                ),
            ));
        }
        out.push(r);
    }
    (out, gaps)
}

/// The configure-time files tests name, each read and scanned once per run
/// ([`scan_named_files`]).
#[derive(Default)]
struct NamedFiles {
    /// File → its text; `None` when it is no regular file, `Err` when it
    /// cannot be read (the reason).
    texts: FastMap<String, Option<Result<String, String>>>,
    /// (file, directory its relative paths are joined to) → what it names.
    named: FastMap<(String, Option<String>), Named>,
}

/// The build-tree files that configure or generate wrote and that a test's
/// texts name (`out.configured`: a list of plugin paths `file(GENERATE)`
/// wrote, a configured settings file its program reads) are texts of the
/// test too, read as they stand now; so are the ones those name, each read
/// once per run (`cache`). Relative paths in one are joined to its own
/// directory and to each working directory `wds` of the test. One that
/// cannot be read, or is larger than `max_bytes`, is a gap.
fn scan_named_files(
    lookup: &Lookup<'_, '_>,
    (test, wds): (&Test, &[Option<String>]),
    out: &mut Named,
    (max_bytes, gaps): (u64, &mut Vec<Gap>),
    cache: &mut NamedFiles,
) {
    let mut queue: Vec<String> = out.configured.clone();
    let mut seen: FastSet<String> = queue.iter().cloned().collect();
    while let Some(f) = queue.pop() {
        let text = cache.texts.entry(f.clone()).or_insert_with(|| {
            std::fs::metadata(&f).is_ok_and(|m| m.is_file()).then(|| {
                crate::ingest::read_capped(&f, max_bytes)
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .map_err(|e| e.to_string())
            })
        });
        let text = match text {
            None => continue,
            Some(Ok(text)) => text,
            Some(Err(e)) => {
                gaps.push(Gap::new(
                    Code::DepPrereqUninspectable,
                    format!(
                        "{f}, which test {:?} names, cannot be read to see what it names: {e}",
                        test.name
                    ),
                ));
                continue;
            }
        };
        let own_dir = dir_of(&f).to_owned();
        for wd in std::iter::once(Some(own_dir)).chain(wds.iter().cloned()) {
            let n = cache
                .named
                .entry((f.clone(), wd.clone()))
                .or_insert_with(|| {
                    let mut n = Named::default();
                    lookup.scan_text(text, wd.as_deref(), false, &mut n);
                    n
                });
            for (t, why) in &n.targets {
                out.targets.push((*t, format!("names {f}, which {why}")));
            }
            out.source.extend(n.source.iter().cloned());
            out.unknown
                .extend(n.unknown.iter().map(|u| format!("names {f}, which {u}")));
            for c in &n.configured {
                if seen.insert(c.clone()) {
                    out.configured.push(c.clone());
                    queue.push(c.clone());
                }
            }
        }
    }
}

/// What `test`'s own texts name, each relative name joined to each of its
/// working directories `wds` ([`working_dirs`]).
fn scan_test(lookup: &Lookup<'_, '_>, test: &Test, wds: &[Option<String>], out: &mut Named) {
    for wd in wds {
        let wd = wd.as_deref();
        for t in test
            .command
            .iter()
            .flatten()
            .chain(&test.environment)
            .chain(&test.environment_modification)
            .chain(&test.required_files)
        {
            lookup.scan_text(t, wd, false, out);
        }
        if let Some(wd) = wd {
            lookup.scan_text(wd, None, true, out);
        }
    }
}

/// The directories a test's relative names may be relative to: its
/// WORKING_DIRECTORY (`None` when empty) first, then each directory a
/// `cmake -E chdir` wrapper runs its program in, joined to the one before
/// it. Names are looked up against every one of them, which can only add
/// dependencies.
fn working_dirs(test: &Test, model: &Codemodel) -> Vec<Option<String>> {
    let own = (!test.working_directory.is_empty()).then(|| test.working_directory.clone());
    let mut out = vec![own];
    let dirs = test
        .command
        .as_deref()
        .and_then(|c| crate::graph::launch(c, model.cmake_command.as_deref()).ok())
        .map(|l| l.dirs)
        .unwrap_or_default();
    for d in dirs {
        let next = if d.starts_with('/') {
            Some(paths::fold(&d))
        } else {
            out.last()
                .cloned()
                .flatten()
                .map(|w| paths::join_fold(&w, &d))
        };
        if next.is_some() && !out.contains(&next) {
            out.push(next);
        }
    }
    out
}

/// One test selected because it may load an affected program or library.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Test index.
    pub test: usize,
    /// In words: which of its programs names which affected artifact.
    pub detail: String,
}

/// Tests that may run or load an affected program or library through a
/// program or library they run or load (by the bytes of those binaries).
///
/// `affected[t]`: target `t` is reached by the change. `selected[i]`: test
/// `i` is already selected (it is not looked at again). Every program and
/// library an unselected test may run or load is scanned for the file names
/// of every artifact; what it names it may load, transitively, and a program
/// may load the plugins below its directory ([`may_load`]). A test is
/// selected when that set meets an affected loadable target.
pub fn loaded_by_bytes(
    graph: &Graph<'_>,
    catalogue: &Catalogue,
    mappings: &[TestMapping],
    affected: &[bool],
    selected: &[bool],
) -> (Vec<Loaded>, Vec<Gap>) {
    let model = graph.model();
    let any_affected_loadable = affected
        .iter()
        .enumerate()
        .any(|(t, &a)| a && is_loadable(model.targets[t].kind));
    if !any_affected_loadable {
        return (Vec::new(), Vec::new());
    }
    let mut scans = Scans {
        scanner: Scanner::new(graph.artifact_names()),
        scanned: FastMap::default(),
        gaps: Vec::new(),
        edge_why: FastMap::default(),
    };
    let sorted = sorted_loadable(graph);
    let plugins = plugin_like(graph);
    // mentions[t]: the loadable targets a binary of target t names (scanned once).
    let mut mentions: FastMap<usize, Vec<usize>> = FastMap::default();
    // One walk over dependency and mention edges from every unselected test's
    // targets scans each binary once; a reverse walk from the affected
    // loadable targets then says which targets can reach one. Only tests
    // with such a target need their own walk (for the chain); the others
    // provably load nothing affected.
    let n = model.targets.len();
    let mut visited = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    for (ti, m) in mappings.iter().enumerate() {
        if let (false, TestMapping::Mapped { direct }) = (selected[ti], m) {
            stack.extend(direct.iter().copied());
        }
    }
    let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n];
    while let Some(t) = stack.pop() {
        if std::mem::replace(&mut visited[t], true) {
            continue;
        }
        let mut next: Vec<usize> = graph.deps_of(t).to_vec();
        if is_loadable(model.targets[t].kind) {
            let named = mentions
                .entry(t)
                .or_insert_with(|| may_load(graph, (&sorted, &plugins), t, &mut scans));
            next.extend(named.iter().copied());
        }
        for d in next {
            rev[d].push(t);
            if !visited[d] {
                stack.push(d);
            }
        }
    }
    let back = |from: Vec<usize>| {
        let mut hit = vec![false; n];
        let mut queue = from;
        while let Some(t) = queue.pop() {
            if std::mem::replace(&mut hit[t], true) {
                continue;
            }
            queue.extend(rev[t].iter().copied().filter(|&p| !hit[p]));
        }
        hit
    };
    let reaches = back(
        (0..n)
            .filter(|&t| visited[t] && affected[t] && is_loadable(model.targets[t].kind))
            .collect(),
    );
    // A relative climbing path ("../../lib/plugins") may also be resolved
    // against the working directory of the test that runs the binary: the
    // targets that reach a binary holding one need a walk of their own.
    let reaches_climber = back(
        scans
            .scanned
            .iter()
            .filter(|(_, (_, climbs))| climbs.iter().any(|c| relative_climb(c).is_some()))
            .map(|(&t, _)| t)
            .collect(),
    );
    let mut out = Vec::new();
    for (ti, m) in mappings.iter().enumerate() {
        if selected[ti] {
            continue;
        }
        let TestMapping::Mapped { direct } = m else {
            continue;
        };
        let wds: Vec<String> = if direct.iter().any(|&d| reaches_climber[d]) {
            working_dirs(&catalogue.tests[ti], model)
                .into_iter()
                .flatten()
                .collect()
        } else {
            Vec::new()
        };
        if wds.is_empty() && !direct.iter().any(|&d| reaches[d]) {
            continue;
        }
        // This test's own edges: plugins below a directory that a binary's
        // relative climbing path names from one of its working directories.
        let mut wd_why: FastMap<(usize, usize), String> = FastMap::default();
        // Everything the test may run or load, with how it got there.
        let mut reach: Vec<usize> = graph.closure(direct);
        let mut seen: FastSet<usize> = reach.iter().copied().collect();
        let mut parent: FastMap<usize, usize> = FastMap::default();
        let mut k = 0;
        let mut hit = None;
        while k < reach.len() {
            let t = reach[k];
            k += 1;
            if affected[t] && is_loadable(model.targets[t].kind) && parent.contains_key(&t) {
                hit = Some(t);
                break;
            }
            if !is_loadable(model.targets[t].kind) {
                continue;
            }
            let named = mentions
                .entry(t)
                .or_insert_with(|| may_load(graph, (&sorted, &plugins), t, &mut scans));
            // Only this test's walk takes the plugins its working directories add.
            let mut from_wd: Vec<usize> = Vec::new();
            let climbs = scans.scanned.get(&t).map_or(&[][..], |(_, c)| c.as_slice());
            for climb in climbs.iter().filter_map(relative_climb) {
                for wd in &wds {
                    let dir = paths::join_fold(wd, climb);
                    for (o, _) in modules_below(model, &sorted, &plugins, &dir) {
                        if o != t && !named.contains(&o) && !from_wd.contains(&o) {
                            from_wd.push(o);
                            wd_why.insert(
                                (t, o),
                                format!("below {dir}, which {climb:?} in its bytes names from the test's working directory {wd}"),
                            );
                        }
                    }
                }
            }
            for &n in named.iter().chain(&from_wd) {
                for c in graph.closure(&[n]) {
                    if seen.insert(c) {
                        parent.insert(c, t);
                        reach.push(c);
                    }
                }
            }
        }
        if let Some(h) = hit {
            let mut via = vec![h];
            let mut cur = h;
            while let Some(&p) = parent.get(&cur) {
                via.push(p);
                cur = p;
                if via.len() > model.targets.len() {
                    break;
                }
            }
            via.reverse();
            let words: Vec<String> = via
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    let why = i
                        .checked_sub(1)
                        .and_then(|p| {
                            let edge = (via[p], t);
                            wd_why.get(&edge).or_else(|| scans.edge_why.get(&edge))
                        })
                        .map_or(String::new(), |w| format!(" ({w})"));
                    format!("{:?}{why}", model.targets[t].name)
                })
                .collect();
            out.push(Loaded {
                test: ti,
                detail: format!(
                    "may load affected {} {:?}: {} (each names the next one's artifact file in its run-time bytes, or is a plugin below the directory of the program or linked library before it or below a directory those bytes climb to, or any plugin when they climb by an unknown number of levels)",
                    model.targets[h].kind.as_str(),
                    model.targets[h].name,
                    words.join(" -> ")
                ),
            });
        }
    }
    let mut gaps = scans.gaps;
    gaps.sort();
    gaps.dedup();
    (out, gaps)
}

/// The loadable targets whose artifact file names appear as tokens in the
/// run-time bytes of `t`'s artifacts, and the [`climbing_path`]s those bytes
/// hold (sorted, each once). A binary that cannot be read is a gap.
fn scan_target_binaries(
    model: &Codemodel,
    t: usize,
    scanner: &mut Scanner<'_>,
    gaps: &mut Vec<Gap>,
) -> (Vec<usize>, Vec<Climb>) {
    let mut found: Vec<usize> = Vec::new();
    let mut climbs: Vec<Climb> = Vec::new();
    for a in &model.targets[t].artifacts {
        match std::fs::metadata(a) {
            Err(_) => continue, // never built: nothing can run or load it
            Ok(m) if !m.is_file() => continue,
            Ok(_) => {}
        }
        if let Err(e) = scanner.scan(a, (&mut found, &mut climbs)) {
            gaps.push(Gap::new(
                Code::RuntimeLoadedTarget,
                format!(
                    "{} of target {:?} cannot be read to see which programs and libraries it may load: {e}",
                    a, model.targets[t].name
                ),
            ));
        }
    }
    found.retain(|&o| o != t && is_loadable(model.targets[o].kind));
    found.sort_unstable();
    found.dedup();
    climbs.sort_unstable();
    climbs.dedup();
    (found, climbs)
}

/// Byte ranges of `file` where a program keeps the names it uses at run
/// time: the allocated, file-backed data sections of an ELF file (strings,
/// `.rodata`, `.data`, `.dynstr`; not code, symbol tables or debug
/// information); the whole file otherwise.
fn runtime_ranges(f: &mut std::fs::File, len: u64) -> std::io::Result<Vec<(u64, u64)>> {
    let mut head = [0u8; 64];
    let n = f.read(&mut head)?;
    let whole = Ok(vec![(0, len)]);
    if n < 52 || &head[..4] != b"\x7fELF" || head[5] != 1 {
        return whole; // not little-endian ELF: scan everything
    }
    let is64 = match head[4] {
        1 => false,
        2 => true,
        _ => return whole,
    };
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let u32_at =
        |b: &[u8], o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as u64;
    let u64_at = |b: &[u8], o: usize| {
        u64::from_le_bytes([
            b[o],
            b[o + 1],
            b[o + 2],
            b[o + 3],
            b[o + 4],
            b[o + 5],
            b[o + 6],
            b[o + 7],
        ])
    };
    let (shoff, shentsize, shnum) = if is64 {
        (
            u64_at(&head, 0x28),
            u16_at(&head, 0x3a),
            u16_at(&head, 0x3c),
        )
    } else {
        (
            u32_at(&head, 0x20),
            u16_at(&head, 0x2e),
            u16_at(&head, 0x30),
        )
    };
    let need = if is64 { 64 } else { 40 };
    if shnum == 0 || shentsize < need || shoff >= len || shnum * shentsize > len - shoff {
        return whole;
    }
    let mut table = vec![0u8; (shnum * shentsize) as usize];
    f.seek(SeekFrom::Start(shoff))?;
    f.read_exact(&mut table)?;
    let shstrndx = if is64 {
        u16_at(&head, 0x3e)
    } else {
        u16_at(&head, 0x32)
    };
    let section = |i: usize| {
        let s = &table[i * shentsize as usize..];
        let (flags, off, size) = if is64 {
            (u64_at(s, 8), u64_at(s, 24), u64_at(s, 32))
        } else {
            (u32_at(s, 8), u32_at(s, 16), u32_at(s, 20))
        };
        (u32_at(s, 0), u32_at(s, 4), flags, off, size)
    };
    // Section names, to keep the data sections (strings live there).
    let mut names = Vec::new();
    if (shstrndx as usize) < shnum as usize {
        let (_, _, _, off, size) = section(shstrndx as usize);
        if off <= len && size <= len - off && size < (64 << 20) {
            names = vec![0u8; size as usize];
            f.seek(SeekFrom::Start(off))?;
            f.read_exact(&mut names)?;
        }
    }
    let name_of = |at: u64| -> &[u8] {
        let rest = names.get(at as usize..).unwrap_or(&[]);
        &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]
    };
    const SHF_ALLOC: u64 = 2;
    const SHF_EXECINSTR: u64 = 4;
    const SHF_STRINGS: u64 = 0x20;
    const SHT_NOBITS: u64 = 8;
    let mut ranges = Vec::new();
    for i in 0..shnum as usize {
        let (name, sh_type, flags, off, size) = section(i);
        if flags & SHF_ALLOC == 0
            || flags & SHF_EXECINSTR != 0
            || sh_type == SHT_NOBITS
            || size == 0
        {
            continue;
        }
        // Data a program reads at run time: string sections, and .rodata/.data
        // (arrays initialised with a name) and .dynstr (needed libraries, rpaths).
        let n = name_of(name);
        let data = flags & SHF_STRINGS != 0
            || names.is_empty()
            || [
                &b".rodata"[..],
                b".data",
                b".dynstr",
                b".tdata",
                b".lrodata",
                b".ldata",
            ]
            .iter()
            .any(|p| n.starts_with(p));
        if !data {
            continue;
        }
        if off > len || size > len - off {
            return whole; // inconsistent table: scan everything
        }
        ranges.push((off, size));
    }
    Ok(ranges)
}

/// The artifact file names with bytes outside [`is_name_byte`] (searched as
/// substrings, not tokens), with their targets, sorted.
fn odd_names(names: &FastMap<String, Vec<usize>>) -> Vec<(&String, &Vec<usize>)> {
    let mut odd: Vec<_> = names
        .iter()
        .filter(|(k, _)| !k.bytes().all(is_name_byte))
        .collect();
    odd.sort();
    odd
}

/// What one run scans binaries for, set up once: every artifact file name,
/// their length bounds, the names that need a substring search, and one
/// read buffer for every binary.
struct Scanner<'n> {
    names: &'n FastMap<String, Vec<usize>>,
    min_len: usize,
    max_len: usize,
    odd: Vec<(&'n String, &'n Vec<usize>)>,
    buf: Vec<u8>,
}

impl<'n> Scanner<'n> {
    fn new(names: &'n FastMap<String, Vec<usize>>) -> Self {
        let (min_len, max_len) = names.keys().fold((usize::MAX, 0), |(lo, hi), k| {
            (lo.min(k.len()), hi.max(k.len()))
        });
        let odd = odd_names(names);
        Scanner {
            names,
            min_len,
            max_len,
            odd,
            buf: Vec::new(),
        }
    }

    /// Adds the targets whose artifact file name is a token of `path`'s
    /// run-time bytes, and the [`climbing_path`]s they hold.
    fn scan(&mut self, path: &str, out: (&mut Vec<usize>, &mut Vec<Climb>)) -> std::io::Result<()> {
        if self.buf.is_empty() {
            self.buf = vec![0u8; 1 << 20];
        }
        let (names, min_len, max_len) = (self.names, self.min_len, self.max_len);
        let (odd, buf) = (&self.odd, &mut self.buf);
        scan_binary(path, names, (min_len, max_len), odd, buf, out)
    }
}

/// Adds the targets whose artifact file name is a token of `path`'s run-time
/// bytes to `found`, and the [`climbing_path`]s those bytes hold to `climbs`.
fn scan_binary(
    path: &str,
    names: &FastMap<String, Vec<usize>>,
    (min_len, max_len): (usize, usize),
    odd: &[(&String, &Vec<usize>)],
    buf: &mut [u8],
    (found, climbs): (&mut Vec<usize>, &mut Vec<Climb>),
) -> std::io::Result<()> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let ranges = runtime_ranges(&mut f, len)?;
    for (off, size) in ranges {
        f.seek(SeekFrom::Start(off))?;
        let mut left = size;
        let mut run: Vec<u8> = Vec::with_capacity(max_len + 1);
        let mut tail: Vec<u8> = Vec::new();
        let check = |run: &[u8], next: Option<u8>, found: &mut Vec<usize>| {
            if run.len() >= min_len && run.len() <= max_len && next != Some(b'/') {
                if let Some(owners) = std::str::from_utf8(run).ok().and_then(|s| names.get(s)) {
                    found.extend(owners.iter().copied());
                }
            }
        };
        let mut too_long = false;
        // The run of path bytes (name bytes and `/`) the byte is in, for
        // [`climbing_path`]; one longer than a path may be is none.
        let mut path_run: Vec<u8> = Vec::new();
        let mut path_too_long = false;
        let mut end_path_run = |path_run: &mut Vec<u8>, too_long: bool| {
            if !too_long {
                if let Some(what) = unbounded_climb(path_run) {
                    climbs.push(Climb::Anywhere(what));
                } else if path_run.contains(&b'.') {
                    if let Some(p) = climbing_path(path_run) {
                        climbs.push(Climb::Path(p.to_owned()));
                    }
                }
            }
            path_run.clear();
        };
        while left > 0 {
            let want = left.min(buf.len() as u64) as usize;
            f.read_exact(&mut buf[..want])?;
            left -= want as u64;
            let chunk = &buf[..want];
            for &b in chunk {
                if is_name_byte(b) || b == b'/' {
                    if path_run.len() < MAX_CLIMBING_PATH {
                        path_run.push(b);
                    } else {
                        path_too_long = true;
                    }
                } else if !path_run.is_empty() {
                    end_path_run(&mut path_run, path_too_long);
                    path_too_long = false;
                }
                if is_name_byte(b) {
                    if run.len() <= max_len {
                        run.push(b);
                    } else {
                        too_long = true;
                    }
                } else {
                    if !run.is_empty() && !too_long {
                        check(&run, Some(b), found);
                    }
                    run.clear();
                    too_long = false;
                }
            }
            if !odd.is_empty() {
                let mut joined = std::mem::take(&mut tail);
                joined.extend_from_slice(chunk);
                for (name, owners) in odd {
                    let n = name.as_bytes();
                    if joined.windows(n.len()).any(|w| w == n) {
                        found.extend(owners.iter().copied());
                    }
                }
                let keep = joined.len().min(max_len);
                tail = joined[joined.len() - keep..].to_vec();
            }
        }
        if !run.is_empty() && !too_long {
            check(&run, None, found);
        }
        if !path_run.is_empty() {
            end_path_run(&mut path_run, path_too_long);
        }
    }
    Ok(())
}

/// The longest run of path bytes [`scan_binary`] takes for a climbing path.
const MAX_CLIMBING_PATH: usize = 4096;

/// Test name → the smallest name of its data-flow group (tests linked by a
/// fixture, DEPENDS or RESOURCE_LOCK), for every test in a group of two or more.
pub fn flow_groups(catalogue: &Catalogue) -> std::collections::BTreeMap<String, String> {
    let tests = &catalogue.tests;
    let index = name_index(catalogue);
    let mut parent: Vec<usize> = (0..tests.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut by_key: FastMap<String, usize> = FastMap::default();
    for (i, t) in tests.iter().enumerate() {
        let keys = t
            .fixtures_setup
            .iter()
            .chain(&t.fixtures_cleanup)
            .chain(&t.fixtures_required)
            .map(|f| format!("fixture:{f}"))
            .chain(t.resource_lock.iter().map(|r| format!("lock:{r}")))
            .chain(
                t.depends
                    .iter()
                    .filter(|d| index.contains_key(d.as_str()))
                    .map(|d| format!("test:{d}")),
            );
        for k in keys {
            let j = match k.strip_prefix("test:") {
                Some(d) => index[d],
                None => *by_key.entry(k).or_insert(i),
            };
            let (a, b) = (root(&mut parent, i), root(&mut parent, j));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut members: FastMap<usize, Vec<usize>> = FastMap::default();
    for i in 0..tests.len() {
        let r = root(&mut parent, i);
        members.entry(r).or_default().push(i);
    }
    let mut out = std::collections::BTreeMap::new();
    for group in members.values().filter(|g| g.len() > 1) {
        let key = group
            .iter()
            .map(|&i| tests[i].name.as_str())
            .min()
            .unwrap_or("")
            .to_owned();
        for &i in group {
            out.insert(tests[i].name.clone(), key.clone());
        }
    }
    out
}

/// One test selected because another selected test's data reaches it.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Test index.
    pub test: usize,
    /// In words.
    pub detail: String,
}

/// Closes a selection over test-to-test data flow, to a fixed point:
/// * a selected test that sets up or cleans up fixture F selects every test
///   that requires F, and a selected test that requires F selects F's setup
///   and cleanup tests (ctest would add those anyway);
/// * a selected test selects every test that lists it in DEPENDS (it may
///   have written what they read), and the tests it DEPENDS on;
/// * a selected test selects every test that shares a RESOURCE_LOCK with it
///   (a resource held in turn may carry state from one to the other).
pub fn data_flow(catalogue: &Catalogue, selected: &[bool]) -> Vec<Flow> {
    let tests = &catalogue.tests;
    let index = name_index(catalogue);
    let mut providers: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut consumers: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut holders: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); tests.len()];
    for (i, t) in tests.iter().enumerate() {
        for f in t.fixtures_setup.iter().chain(&t.fixtures_cleanup) {
            providers.entry(f.as_str()).or_default().push(i);
        }
        for f in &t.fixtures_required {
            consumers.entry(f.as_str()).or_default().push(i);
        }
        for r in &t.resource_lock {
            holders.entry(r.as_str()).or_default().push(i);
        }
        for d in &t.depends {
            if let Some(&j) = index.get(d.as_str()) {
                dependents[j].push(i);
            }
        }
    }
    let mut sel = selected.to_vec();
    let mut queue: Vec<usize> = (0..tests.len()).filter(|&i| sel[i]).collect();
    let mut out = Vec::new();
    while let Some(i) = queue.pop() {
        let t = &tests[i];
        let mut add = |j: usize, detail: String, sel: &mut Vec<bool>, queue: &mut Vec<usize>| {
            if !sel[j] {
                sel[j] = true;
                queue.push(j);
                out.push(Flow { test: j, detail });
            }
        };
        for f in t.fixtures_setup.iter().chain(&t.fixtures_cleanup) {
            for &j in consumers.get(f.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!(
                        "requires fixture {f:?}, which selected test {:?} sets up or cleans up",
                        t.name
                    ),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for f in &t.fixtures_required {
            for &j in providers.get(f.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!(
                        "sets up or cleans up fixture {f:?}, which selected test {:?} requires",
                        t.name
                    ),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for &j in &dependents[i] {
            add(
                j,
                format!(
                    "DEPENDS on selected test {:?}, which may write what it reads",
                    t.name
                ),
                &mut sel,
                &mut queue,
            );
        }
        for d in &t.depends {
            if let Some(&j) = index.get(d.as_str()) {
                add(
                    j,
                    format!("selected test {:?} DEPENDS on it", t.name),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for r in &t.resource_lock {
            for &j in holders.get(r.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!("shares RESOURCE_LOCK {r:?} with selected test {:?}", t.name),
                    &mut sel,
                    &mut queue,
                );
            }
        }
    }
    out
}

/// Test name → catalogue index.
fn name_index(catalogue: &Catalogue) -> FastMap<&str, usize> {
    catalogue
        .tests
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_candidates_cover_spellings() {
        let c = Lookup::path_candidates("--plugin=/b/plugins//libp.so", None);
        assert!(c.contains(&"/b/plugins/libp.so".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("PLUG=set:/b/x/libp.so", None);
        assert!(c.contains(&"/b/x/libp.so".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("/dir with space/a.txt", None);
        assert!(c.contains(&"/dir with space/a.txt".to_owned()), "{c:?}");
        assert!(c.contains(&"/dir".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("./libp.so", Some("/b/plugins"));
        assert!(c.contains(&"/b/plugins/libp.so".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("#define P \"/b/x.so\"", None);
        assert!(c.contains(&"/b/x.so".to_owned()), "{c:?}");
        // A search-path list: every element.
        let c = Lookup::path_candidates("QT_PLUGIN_PATH=/b/bin:/usr/lib/qt5/plugins:", None);
        for want in ["/b/bin", "/usr/lib/qt5/plugins"] {
            assert!(c.contains(&want.to_owned()), "{want} not in {c:?}");
        }
    }

    fn cat(tests: Vec<Test>) -> Catalogue {
        Catalogue { tests, json: None }
    }

    fn t(name: &str) -> Test {
        Test {
            name: name.into(),
            ..Test::default()
        }
    }

    #[test]
    fn data_flow_follows_fixtures_depends_and_locks() {
        let mut setup = t("setup");
        setup.fixtures_setup = vec!["db".into()];
        let mut user = t("user");
        user.fixtures_required = vec!["db".into()];
        let mut after = t("after");
        after.depends = vec!["user".into()];
        let mut l1 = t("l1");
        l1.resource_lock = vec!["port".into()];
        let mut l2 = t("l2");
        l2.resource_lock = vec!["port".into()];
        let other = t("other");
        let c = cat(vec![setup, user, after, l1, l2, other]);
        let sel = |s: &[usize]| {
            let mut v = vec![false; 6];
            for &i in s {
                v[i] = true;
            }
            let mut got: Vec<usize> = data_flow(&c, &v).iter().map(|f| f.test).collect();
            got.sort();
            got
        };
        assert_eq!(sel(&[0]), vec![1, 2]);
        assert_eq!(sel(&[1]), vec![0, 2]);
        assert_eq!(sel(&[2]), vec![0, 1]);
        assert_eq!(sel(&[3]), vec![4]);
        assert_eq!(sel(&[5]), Vec::<usize>::new());
    }

    #[test]
    fn climbing_paths_need_a_slash_and_a_parent_component() {
        let climbs = |s: &str| climbing_path(s.as_bytes()).map(str::to_owned);
        assert_eq!(
            climbs("/../lib/plugins").as_deref(),
            Some("/../lib/plugins")
        );
        assert_eq!(climbs("../plugins").as_deref(), Some("../plugins"));
        assert_eq!(climbs("bin/../lib").as_deref(), Some("bin/../lib"));
        assert_eq!(climbs("/..").as_deref(), Some("/.."));
        for none in ["..", "...", "a/b", "/usr/lib", "lib..so/x", "a/.../b", ""] {
            assert_eq!(climbs(none), None, "{none:?}");
        }
    }

    #[test]
    fn unbounded_climbs_are_a_bare_parent_or_a_parent_function() {
        assert_eq!(unbounded_climb(b".."), Some("\"..\""));
        assert_eq!(unbounded_climb(b"dirname"), Some("dirname()"));
        assert_eq!(unbounded_climb(b"_ZN4QDir4cdUpEv"), Some("QDir::cdUp()"));
        assert_eq!(
            unbounded_climb(b"_ZNKSt10filesystem7__cxx114path11parent_pathEv"),
            Some("std::filesystem::path::parent_path()")
        );
        for none in [
            &b"..."[..],
            b"/..",
            b"../lib",
            b"dirname2",
            b"xdirname",
            b"_ZN4QDir2cdERK7QString",
            b"",
        ] {
            assert_eq!(unbounded_climb(none), None, "{none:?}");
        }
    }

    #[test]
    fn at_or_below_keeps_the_whole_run_past_longer_named_siblings() {
        let mut sorted = vec![
            "/b/p",
            "/b/p-old/x.so",
            "/b/p.d/y.so",
            "/b/p/a.so",
            "/b/p/z/b.so",
            "/b/pq/c.so",
            "/b/q/d.so",
            "/c/e.so",
        ];
        sorted.sort_unstable();
        let below =
            |dir: &str| -> Vec<&str> { at_or_below(&sorted, |s| s, dir).copied().collect() };
        assert_eq!(below("/b/p"), vec!["/b/p", "/b/p/a.so", "/b/p/z/b.so"]);
        assert_eq!(below("/b/p/"), vec!["/b/p", "/b/p/a.so", "/b/p/z/b.so"]);
        assert_eq!(below("/b/p/z"), vec!["/b/p/z/b.so"]);
        assert_eq!(below("/b/q"), vec!["/b/q/d.so"]);
        assert_eq!(below("/b/r"), Vec::<&str>::new());
        assert_eq!(below("/").len(), sorted.len());
    }
}
