//! The CMake File API reply: index → codemodel-v2 → target objects, plus cmakeFiles-v1.
//!
//! Invariant: a [`Codemodel`] without gaps describes exactly one configuration
//! of the tree at `--source-dir`/`--build-dir`, every target the configuration
//! lists has been read and understood, and every dependency id resolves.
//!
//! Versions: codemodel major 2 and cmakeFiles major 1 with any minor are
//! accepted; members a newer minor adds are ignored (reference §6); an unknown
//! major version is a gap. A member given twice in one object is malformed.
//!
//! Freshness: the chosen index must be the newest reply file, newer than every
//! reply file it references and every non-generated CMake input it lists;
//! a newer `error-*.json` (CMake 4.1+) means the last configure failed and the
//! reply describes an older tree.

use serde::de::IgnoredAny;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashSet;
use std::time::SystemTime;

use super::Reader;
use crate::fasthash::{FastMap, FastSet};
use crate::reason::{Code, Gap};
use crate::{fingerprint, paths};

/// CMake target types as the File API names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    /// `EXECUTABLE`
    Executable,
    /// `STATIC_LIBRARY`
    StaticLibrary,
    /// `SHARED_LIBRARY`
    SharedLibrary,
    /// `MODULE_LIBRARY`
    ModuleLibrary,
    /// `OBJECT_LIBRARY`
    ObjectLibrary,
    /// `INTERFACE_LIBRARY`
    InterfaceLibrary,
    /// `UTILITY`
    #[default]
    Utility,
}

impl TargetKind {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "EXECUTABLE" => TargetKind::Executable,
            "STATIC_LIBRARY" => TargetKind::StaticLibrary,
            "SHARED_LIBRARY" => TargetKind::SharedLibrary,
            "MODULE_LIBRARY" => TargetKind::ModuleLibrary,
            "OBJECT_LIBRARY" => TargetKind::ObjectLibrary,
            "INTERFACE_LIBRARY" => TargetKind::InterfaceLibrary,
            "UTILITY" => TargetKind::Utility,
            _ => return None,
        })
    }

    /// The File API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Executable => "EXECUTABLE",
            TargetKind::StaticLibrary => "STATIC_LIBRARY",
            TargetKind::SharedLibrary => "SHARED_LIBRARY",
            TargetKind::ModuleLibrary => "MODULE_LIBRARY",
            TargetKind::ObjectLibrary => "OBJECT_LIBRARY",
            TargetKind::InterfaceLibrary => "INTERFACE_LIBRARY",
            TargetKind::Utility => "UTILITY",
        }
    }
}

/// A compiled source of a target (it has a compile group).
#[derive(Clone, Debug)]
pub struct CompiledSource {
    /// Absolute folded path.
    pub path: String,
    /// Compile group language (`C`, `CXX`, …).
    pub language: String,
    /// The GENERATED property is set.
    pub generated: bool,
}

/// One build-system target of the selected configuration.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// Target name (unique within a configuration).
    pub name: String,
    /// Opaque File API id.
    pub id: String,
    /// Target type.
    pub kind: TargetKind,
    /// Artifact paths, absolute and folded.
    pub artifacts: Vec<String>,
    /// `<build>/<paths.build>`, absolute and folded: the directory the compiler runs in.
    pub dir_build: String,
    /// Compiled sources.
    pub compiled: Vec<CompiledSource>,
    /// Build-order dependencies (indices into [`Codemodel::targets`]).
    pub deps: Vec<usize>,
    /// Object files of other targets linked in through `$<TARGET_OBJECTS:…>` (absolute, folded).
    pub object_inputs: Vec<String>,
    /// Preprocessor definitions of every compile group.
    pub defines: Vec<String>,
    /// Paths named by `link.commandFragments` with role `libraries`, resolved
    /// against `dir_build` (Makefiles link in that directory). Used only to
    /// *add* graph edges to targets whose artifact they name.
    pub link_paths: Vec<String>,
    /// Library names given to the linker as `-lNAME` or `-l:FILE` (the
    /// part after `-l`), from link fragments of any role.
    pub link_names: Vec<String>,
    /// Library search directories (`-L` fragments), resolved against `dir_build`.
    pub link_dirs: Vec<String>,
    /// Compile command fragments of every compile group (flags such as
    /// `-DX=…` given through `target_compile_options`), as written.
    pub flags: Vec<String>,
    /// Include directories of every compile group (absolute, folded), plus
    /// `-I`/`-isystem`/`-iquote`/`-idirafter` directories named in `flags`.
    pub includes: Vec<String>,
    /// Those the compiler searches as system directories: `isSystem`
    /// (`SYSTEM`, and imported targets' usage requirements), `-isystem` and
    /// `-idirafter` (absolute, folded).
    pub system_includes: Vec<String>,
    /// Source-tree files its compile or link command names verbatim (a
    /// linker or version script, a `-include` file, a response file),
    /// absolute folded: a change to one changes how the target is built.
    pub cmdline_files: Vec<String>,
    /// Build-time generated files the target lists (custom command outputs
    /// through their `.rule` pseudo-sources, stamps), absolute folded.
    pub generated: Vec<String>,
}

impl Target {
    /// A stand-in for a target whose object could not be read: no artifacts, no
    /// sources, no edges. Only ever used alongside a gap, which forbids a subset.
    fn placeholder(r: &RawTargetRef) -> Target {
        Target {
            name: r.name.clone(),
            id: r.id.clone(),
            kind: TargetKind::Utility,
            artifacts: Vec::new(),
            dir_build: String::new(),
            compiled: Vec::new(),
            deps: Vec::new(),
            object_inputs: Vec::new(),
            defines: Vec::new(),
            link_paths: Vec::new(),
            link_names: Vec::new(),
            link_dirs: Vec::new(),
            flags: Vec::new(),
            includes: Vec::new(),
            system_includes: Vec::new(),
            cmdline_files: Vec::new(),
            generated: Vec::new(),
        }
    }

    /// `<dir_build>/CMakeFiles/<name>.dir`: where its objects and depfiles live (Makefiles).
    pub fn object_dir(&self) -> String {
        format!("{}/CMakeFiles/{}.dir", self.dir_build, self.name)
    }
}

/// The audited codemodel of one configuration.
#[derive(Clone, Debug, Default)]
pub struct Codemodel {
    /// Source root as the codemodel spells it (folded).
    pub source_root: String,
    /// Build root as the codemodel spells it (folded).
    pub build_root: String,
    /// Selected configuration name (may be empty).
    pub config: String,
    /// Targets sorted by name.
    pub targets: Vec<Target>,
    /// Build-time generated files (custom command outputs, `.rule` outputs), absolute folded.
    pub generated_files: HashSet<String>,
    /// Modification time of the reply index: when the last successful
    /// configure (generate step) finished. Files a configure writes
    /// (`configure_file`, `file(COPY)`, `file(GENERATE)`) are no newer.
    /// `None` only in hand-made models.
    pub reply_time: Option<SystemTime>,
    /// The generator's name (`Unix Makefiles`, …).
    pub generator: String,
    /// The generator is multi-config (Ninja Multi-Config, Xcode, Visual Studio).
    pub multi_config: bool,
    /// The names of every configuration in the reply.
    pub config_names: Vec<String>,
    /// The `cmake` program that configured the build (`cmake.paths.cmake` of
    /// the reply index, absolute and folded): what `${CMAKE_COMMAND}` in a
    /// test's command expands to. `None` when the index does not say.
    pub cmake_command: Option<String>,
    /// Non-generated CMake inputs from cmakeFiles-v1 (absolute folded), plus the
    /// compilers named by toolchains-v1; `None` when cmakeFiles-v1 is absent.
    pub cmake_inputs: Option<Vec<String>>,
    /// The `file(GLOB[_RECURSE] … CONFIGURE_DEPENDS …)` calls of the configure
    /// (cmakeFiles 1.1 `globsDependent`, CMake 3.30+; empty before). A path
    /// such a glob would list is a build-configuration input: see
    /// [`Codemodel::matches_config_glob`].
    pub config_globs: Vec<ConfigGlob>,
    /// Every reply file read, in read order (for input identity).
    pub files_read: Vec<String>,
    /// `<dir_build>/CMakeFiles/<name>.dir` → target index (Makefiles object directories).
    pub object_dirs: FastMap<String, usize>,
    /// Computed while parsing, when [`Request::fingerprints`] asked for them.
    pub fingerprints: Option<Fingerprints>,
    /// Every include directory of a target that lies outside both roots,
    /// sorted and unique (usually none), found as the codemodel loads;
    /// `None` in a hand-made model (then [`Codemodel::outside_includes`]
    /// looks at the targets).
    pub outside_includes: Option<Vec<String>>,
    /// The compilers' implicit include directories (toolchains-v1), absolute
    /// folded, sorted and unique: where a toolchain's own headers live, also
    /// when it sits inside one of the roots. Empty without a toolchains reply.
    pub implicit_includes: Vec<String>,
}

/// Fingerprints of the reply's target objects and toolchains
/// ([`crate::fingerprint`]), taken from the bytes the load parsed.
#[derive(Clone, Debug)]
pub struct Fingerprints {
    /// By target index; `None` for a target whose object could not be used.
    pub targets: Vec<Option<String>>,
    /// The toolchains reply's; `Ok(None)` when there is none, `Err` when it
    /// could not be used.
    pub toolchain: Result<Option<String>, ()>,
}

impl Codemodel {
    /// The generator is Ninja or Ninja Multi-Config: it runs every command
    /// from the top of the build tree and folds depfiles into `.ninja_deps`;
    /// otherwise (the supported Makefiles generator) each target's commands
    /// run in its build directory and its depfiles stay on disk.
    pub fn is_ninja(&self) -> bool {
        self.generator.starts_with("Ninja")
    }

    /// Every include directory of a target outside both roots, sorted and unique.
    pub fn outside_includes(&self) -> std::borrow::Cow<'_, [String]> {
        match &self.outside_includes {
            Some(v) => std::borrow::Cow::Borrowed(v.as_slice()),
            None => std::borrow::Cow::Owned(outside_includes(
                &self.targets,
                &self.source_root,
                &self.build_root,
            )),
        }
    }

    /// The one target whose `CMakeFiles/<target>.dir/` directory contains
    /// `path` (a depfile or an object file); an error says why there is none.
    pub fn object_owner(&self, path: &str) -> Result<usize, &'static str> {
        let mut found = None;
        let mut from = 0;
        while let Some(pos) = path[from..].find("/CMakeFiles/") {
            let seg_start = from + pos + "/CMakeFiles/".len();
            if let Some(seg_len) = path[seg_start..].find('/') {
                if let Some(&t) = self.object_dirs.get(&path[..seg_start + seg_len]) {
                    if found.is_some_and(|f| f != t) {
                        return Err("lies inside the object directories of more than one target");
                    }
                    found = Some(t);
                }
            }
            from = seg_start;
        }
        found.ok_or("is not inside any target's CMakeFiles/<target>.dir/ directory")
    }

    /// True when `abs_path` (absolute, folded, the codemodel's spelling) is a
    /// path one of the `CONFIGURE_DEPENDS` globs lists, or would list if it
    /// were added: adding, removing or renaming it changes what the glob
    /// returns, so CMake re-runs configure (see [`ConfigGlob::matches`]).
    pub fn matches_config_glob(&self, abs_path: &str) -> bool {
        self.config_globs.iter().any(|g| g.matches(abs_path))
    }
}

/// One `file(GLOB …)` or `file(GLOB_RECURSE …)` call made with
/// `CONFIGURE_DEPENDS`, as cmakeFiles 1.1 records it in `globsDependent`.
///
/// CMake writes `expression` absolute (relative patterns are joined to
/// `CMAKE_CURRENT_SOURCE_DIR` first); its glob (kwsys `Glob`) starts in the
/// directory before the component holding the first wildcard ([`Self::base`])
/// and matches one component per pattern; `GLOB_RECURSE` matches the last
/// pattern against names at any depth below the directories the others reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigGlob {
    /// The expression as CMake wrote it.
    pub expression: String,
    /// Where the glob starts: the expression up to the last `/` before its
    /// first wildcard, absolute and folded.
    pub base: String,
    /// The rest of the expression, one pattern per path component (`*`, `?`
    /// and `[…]` with `!`/`^` and ranges; anything else is literal). Empty
    /// components are dropped.
    pub patterns: Vec<String>,
    /// `file(GLOB_RECURSE)`.
    pub recurse: bool,
    /// Directories are listed too (`GLOB`'s default; `GLOB_RECURSE` with `LIST_DIRECTORIES true`).
    pub list_directories: bool,
    /// `GLOB_RECURSE … FOLLOW_SYMLINKS` (kept for reference: [`Self::matches`]
    /// always assumes symlinked directories are followed, which matches more).
    pub follow_symlinks: bool,
    /// What it matched at configure time, absolute and folded (CMake writes
    /// them relative to `RELATIVE <dir>` when given), sorted.
    pub matched: Vec<String>,
}

impl ConfigGlob {
    /// Builds a glob from a `globsDependent` entry; `source_root` anchors an
    /// expression that is not absolute (CMake always writes absolute ones).
    pub fn new(
        expression: &str,
        source_root: &str,
        recurse: bool,
        list_directories: bool,
        follow_symlinks: bool,
        relative: Option<&str>,
        matched: &[String],
    ) -> ConfigGlob {
        let abs = if expression.starts_with('/') {
            expression.to_owned()
        } else {
            format!("{source_root}/{expression}")
        };
        // kwsys Glob::FindFiles: the fixed prefix ends at the last '/' before the first wildcard.
        let first_wild = abs.find(['*', '?', '[']).unwrap_or(abs.len());
        let cut = abs[..first_wild].rfind('/').unwrap_or(0);
        let base = paths::fold(&abs[..cut]);
        let patterns = abs[cut..]
            .split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect();
        let rel_base = relative.map(|r| paths::join_fold(source_root, r));
        let mut matched: Vec<String> = matched
            .iter()
            .map(|p| paths::join_fold(rel_base.as_deref().unwrap_or(source_root), p))
            .collect();
        matched.sort();
        matched.dedup();
        ConfigGlob {
            expression: expression.to_owned(),
            base,
            patterns,
            recurse,
            list_directories,
            follow_symlinks,
            matched,
        }
    }

    /// True when the glob lists `abs_path` (absolute, folded) or would list it
    /// if it existed, or `abs_path` lies inside a directory the glob lists
    /// (its directory may be new). Whether the path exists now, or was listed
    /// at configure time, is not asked: a build tree configured after the
    /// change lists an added file already, so a listed path may still be one
    /// the change added (with no change kind to tell, this matches more).
    /// Symlinked directories are assumed to be followed (matches more).
    pub fn matches(&self, abs_path: &str) -> bool {
        let Some(rel) = paths::strip_root(abs_path, &self.base) else {
            return false;
        };
        let n = self.patterns.len();
        if rel.is_empty() || n == 0 {
            return false;
        }
        let comps: Vec<&str> = rel.split('/').collect();
        if comps.len() < n {
            return false;
        }
        if self.recurse {
            // Leading patterns reach directories; the last one matches names at any depth below.
            let lead = &self.patterns[..n - 1];
            if !lead.iter().zip(&comps).all(|(p, c)| glob_component(p, c)) {
                return false;
            }
            let below = &comps[n - 1..];
            (self.list_directories && below.len() >= 2)
                || glob_component(&self.patterns[n - 1], below[below.len() - 1])
        } else {
            if !self
                .patterns
                .iter()
                .zip(&comps)
                .all(|(p, c)| glob_component(p, c))
            {
                return false;
            }
            comps.len() == n || self.list_directories
        }
    }
}

/// Matches one path component against one kwsys glob pattern (byte-wise, as
/// kwsys's regex does): `*` any run, `?` one byte, `[set]` / `[!set]` /
/// `[^set]` one byte in (or not in) the set, with `a-z` ranges and a leading
/// `]` taken literally; an unclosed `[` is literal. Case-sensitive (Linux).
fn glob_component(pattern: &str, name: &str) -> bool {
    fn class_end(p: &[u8], i: usize) -> Option<usize> {
        // p[i] == b'['; returns the index of the closing ']'.
        let mut j = i + 1;
        if p.get(j) == Some(&b'!') {
            j += 1;
        }
        if p.get(j) == Some(&b']') {
            j += 1;
        }
        while j < p.len() && p[j] != b']' {
            j += 1;
        }
        (j < p.len()).then_some(j)
    }
    fn in_class(set: &[u8], c: u8) -> bool {
        let (neg, set) = match set.first() {
            Some(b'!') | Some(b'^') => (true, &set[1..]),
            _ => (false, set),
        };
        let mut hit = false;
        let mut k = 0;
        while k < set.len() {
            if k + 2 < set.len() && set[k + 1] == b'-' {
                hit |= set[k] <= c && c <= set[k + 2];
                k += 3;
            } else {
                hit |= set[k] == c;
                k += 1;
            }
        }
        hit != neg
    }
    let (p, s) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut si) = (0, 0);
    // Backtracking point: the last '*' seen, and where in `s` it resumes.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some(b'*') => {
                star = Some((pi + 1, si));
                pi += 1;
                continue;
            }
            Some(b'?') => Some(pi + 1),
            Some(b'[') => match class_end(p, pi) {
                Some(end) => in_class(&p[pi + 1..end], s[si]).then_some(end + 1),
                None => (s[si] == b'[').then_some(pi + 1),
            },
            Some(&c) => (s[si] == c).then_some(pi + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                si += 1;
            }
            (None, Some((sp, ss))) => {
                pi = sp;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Result of loading the File API: a model when one could be built, and every gap found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The model, when a codemodel could be read at all.
    pub model: Option<Codemodel>,
    /// Gaps; empty means the codemodel is complete.
    pub gaps: Vec<Gap>,
}

/// What the caller told us.
pub struct Request<'a> {
    /// `--source-dir`, folded absolute.
    pub source_dir: &'a str,
    /// `--build-dir`, folded absolute.
    pub build_dir: &'a str,
    /// `--config`.
    pub config: Option<&'a str>,
    /// Threads to parse target objects on (at least one).
    pub threads: usize,
    /// Fingerprint the target objects and the toolchains reply as they are
    /// parsed ([`Codemodel::fingerprints`], for a snapshot).
    pub fingerprints: bool,
}

// ---------------- raw wire structs ----------------

#[derive(Deserialize)]
struct RawVersion {
    major: u64,
    #[serde(default)]
    minor: Option<u64>,
}

#[derive(Deserialize)]
struct RawIndex {
    cmake: RawIndexCmake,
    objects: Vec<RawObjectRef>,
    #[serde(default)]
    reply: Option<StrictObject>,
}

/// A JSON object (at any depth) that rejects duplicate keys, unlike
/// `serde_json::Map`, where the last duplicate silently wins.
struct StrictObject(serde_json::Map<String, serde_json::Value>);

struct StrictValue(serde_json::Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StrictValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value without duplicate object keys")
            }
            fn visit_bool<E>(self, v: bool) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StrictValue, E> {
                Ok(StrictValue(serde_json::Number::from_f64(v).map_or(
                    serde_json::Value::Null,
                    serde_json::Value::Number,
                )))
            }
            fn visit_str<E>(self, v: &str) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_string<E>(self, v: String) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_unit<E>(self) -> Result<StrictValue, E> {
                Ok(StrictValue(serde_json::Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<StrictValue, A::Error> {
                let mut v = Vec::new();
                while let Some(StrictValue(x)) = a.next_element()? {
                    v.push(x);
                }
                Ok(StrictValue(serde_json::Value::Array(v)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<StrictValue, A::Error> {
                let mut m = serde_json::Map::new();
                while let Some((k, StrictValue(x))) = a.next_entry::<String, StrictValue>()? {
                    if m.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!("duplicate key {k:?}")));
                    }
                    m.insert(k, x);
                }
                Ok(StrictValue(serde_json::Value::Object(m)))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for StrictObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match StrictValue::deserialize(d)?.0 {
            serde_json::Value::Object(m) => Ok(StrictObject(m)),
            _ => Err(serde::de::Error::custom("expected an object")),
        }
    }
}

#[derive(Deserialize)]
struct RawIndexCmake {
    generator: RawGenerator,
    #[allow(dead_code)]
    version: IgnoredAny,
    #[serde(default)]
    paths: Option<RawCmakePaths>,
}

/// `cmake.paths` of the reply index (every version since the File API's
/// first): the programs of the CMake that configured the build.
#[derive(Deserialize)]
struct RawCmakePaths {
    #[serde(default)]
    cmake: Option<String>,
}

#[derive(Deserialize)]
struct RawGenerator {
    name: String,
    #[serde(default, rename = "multiConfig")]
    multi_config: Option<bool>,
}

#[derive(Deserialize)]
struct RawObjectRef {
    kind: String,
    version: RawVersion,
    #[serde(rename = "jsonFile")]
    json_file: String,
}

#[derive(Deserialize)]
struct RawCodemodel {
    kind: String,
    version: RawVersion,
    paths: RawPaths,
    configurations: Vec<RawConfiguration>,
}

#[derive(Deserialize)]
struct RawPaths {
    source: String,
    build: String,
}

#[derive(Deserialize)]
struct RawConfiguration {
    name: String,
    targets: Vec<RawTargetRef>,
    #[serde(default, rename = "abstractTargets")]
    abstract_targets: Option<Vec<RawTargetRef>>,
}

#[derive(Deserialize)]
struct RawTargetRef {
    name: String,
    id: String,
    #[serde(rename = "jsonFile")]
    json_file: String,
}

// Target objects are the bulk of the reply (thousands of files): their strings
// are borrowed from the read buffer where JSON escapes allow it.

#[derive(Deserialize)]
struct RawTarget<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    paths: RawTargetPaths<'a>,
    #[serde(default, borrow)]
    artifacts: Option<Vec<RawPathEntry<'a>>>,
    #[serde(default, borrow)]
    sources: Option<Vec<RawSource<'a>>>,
    #[serde(default, rename = "compileGroups", borrow)]
    compile_groups: Option<Vec<RawCompileGroup<'a>>>,
    #[serde(default, borrow)]
    dependencies: Option<Vec<RawDependency<'a>>>,
    #[serde(default, borrow)]
    link: Option<RawLink<'a>>,
}

#[derive(Deserialize)]
struct RawTargetPaths<'a> {
    #[serde(borrow)]
    #[allow(dead_code)]
    source: Cow<'a, str>,
    #[serde(borrow)]
    build: Cow<'a, str>,
}

#[derive(Deserialize)]
struct RawLink<'a> {
    #[serde(default, rename = "commandFragments", borrow)]
    command_fragments: Option<Vec<RawFragment<'a>>>,
}

#[derive(Deserialize)]
struct RawFragment<'a> {
    #[serde(borrow)]
    fragment: Cow<'a, str>,
    #[serde(default, borrow)]
    role: Option<Borrowed<'a>>,
}

/// A string borrowed from the read buffer where JSON escapes allow it. serde
/// borrows a `Cow<str>` only when it is a field's whole type: inside an
/// `Option` it would always allocate, so optional strings use this.
#[derive(Deserialize)]
#[serde(transparent)]
struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
struct RawPathEntry<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
}

#[derive(Deserialize)]
struct RawSource<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(default, rename = "compileGroupIndex")]
    compile_group_index: Option<usize>,
    #[serde(default, rename = "isGenerated")]
    is_generated: Option<bool>,
}

#[derive(Deserialize)]
struct RawCompileGroup<'a> {
    #[serde(borrow)]
    language: Cow<'a, str>,
    #[serde(default, borrow)]
    defines: Option<Vec<RawDefine<'a>>>,
    #[serde(default, rename = "compileCommandFragments", borrow)]
    compile_command_fragments: Option<Vec<RawFragment<'a>>>,
    #[serde(default, borrow)]
    includes: Option<Vec<RawInclude<'a>>>,
}

#[derive(Deserialize)]
struct RawInclude<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(default, rename = "isSystem")]
    is_system: Option<bool>,
}

#[derive(Deserialize)]
struct RawDefine<'a> {
    #[serde(borrow)]
    define: Cow<'a, str>,
}

#[derive(Deserialize)]
struct RawDependency<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
}

#[derive(Deserialize)]
struct RawCmakeFiles {
    kind: String,
    version: RawVersion,
    inputs: Vec<RawCmakeInput>,
    /// cmakeFiles 1.1 (CMake 3.30+): the `CONFIGURE_DEPENDS` globs.
    #[serde(default, rename = "globsDependent")]
    globs_dependent: Option<Vec<RawGlobDependent>>,
}

#[derive(Deserialize)]
struct RawGlobDependent {
    expression: String,
    #[serde(default)]
    recurse: Option<bool>,
    #[serde(default, rename = "listDirectories")]
    list_directories: Option<bool>,
    #[serde(default, rename = "followSymlinks")]
    follow_symlinks: Option<bool>,
    #[serde(default)]
    relative: Option<String>,
    #[serde(default)]
    paths: Option<Vec<String>>,
}

impl RawGlobDependent {
    fn convert(&self, source_root: &str) -> ConfigGlob {
        ConfigGlob::new(
            &self.expression,
            source_root,
            self.recurse == Some(true),
            self.list_directories == Some(true),
            self.follow_symlinks == Some(true),
            self.relative.as_deref(),
            self.paths.as_deref().unwrap_or_default(),
        )
    }
}

#[derive(Deserialize)]
struct RawToolchains {
    kind: String,
    version: RawVersion,
    toolchains: Vec<RawToolchain>,
}

#[derive(Deserialize)]
struct RawToolchain {
    #[serde(default)]
    compiler: Option<RawCompiler>,
}

#[derive(Deserialize)]
struct RawCompiler {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    implicit: Option<RawImplicit>,
}

#[derive(Deserialize)]
struct RawImplicit {
    #[serde(default, rename = "includeDirectories")]
    include_directories: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct RawCmakeInput {
    path: String,
    #[serde(default, rename = "isGenerated")]
    is_generated: Option<bool>,
    #[serde(default, rename = "isCMake")]
    is_cmake: Option<bool>,
}

// ---------------- loading ----------------

fn mtime(path: &str) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// A reply file name must be a plain file name inside `reply/` (no traversal).
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && name != "." && name != ".."
}

struct Ctx<'a> {
    reader: &'a Reader,
    reply_dir: String,
    index_mtime: SystemTime,
    files_read: Vec<String>,
}

impl Ctx<'_> {
    /// Reads one reply file named by the index or codemodel into `buf[..n]`,
    /// checking it is no newer than the index (timestamp from the handle that
    /// was read). Returns its path and `n`.
    fn read_into(
        &mut self,
        name: &str,
        missing: Code,
        buf: &mut Vec<u8>,
    ) -> Result<(String, usize), Gap> {
        if !plain_name(name) {
            return Err(Gap::new(
                Code::FileApiMalformed,
                format!("reply file name {name:?} is not a plain file name"),
            ));
        }
        let path = format!("{}/{}", self.reply_dir, name);
        let (meta, n) = self
            .reader
            .read_into_meta(&path, buf)
            .map_err(|e| e.gap(&path, missing, Code::LimitExceeded))?;
        match meta.modified() {
            Ok(t) if t <= self.index_mtime => {}
            Ok(_) => {
                return Err(Gap::new(
                    Code::FileApiReplyStale,
                    format!("{path} is newer than the reply index that references it"),
                ))
            }
            Err(_) => {
                return Err(Gap::new(
                    missing,
                    format!("{path}: cannot read its timestamp"),
                ))
            }
        }
        self.files_read.push(path.clone());
        Ok((path, n))
    }

    /// Reads and decodes one (small) reply file.
    fn read_json<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
        missing: Code,
    ) -> Result<T, Gap> {
        self.read_json_as(name, missing, false).map(|(t, _)| t)
    }

    /// [`Ctx::read_json`] of an optional reply (a missing one is malformed
    /// evidence), with the parsed document too when `keep`.
    fn read_json_kept<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
        keep: bool,
    ) -> Result<(T, Option<serde_json::Value>), Gap> {
        self.read_json_as(name, Code::FileApiMalformed, keep)
    }

    fn read_json_as<T: serde::de::DeserializeOwned>(
        &mut self,
        name: &str,
        missing: Code,
        keep: bool,
    ) -> Result<(T, Option<serde_json::Value>), Gap> {
        let mut buf = Vec::new();
        let (path, n) = self.read_into(name, missing, &mut buf)?;
        let text = json_text(&buf[..n], &path)?;
        let value = super::json_value(text, keep);
        let t = super::parse_json(text, value.as_ref())
            .map_err(|e| Gap::new(Code::FileApiMalformed, format!("{path}: {e}")))?;
        Ok((t, value))
    }
}

/// A reply file as text: JSON is UTF-8 throughout (RFC 8259), members this
/// tool ignores included, so the whole file is checked once, up front (and
/// serde need not check string by string).
fn json_text<'b>(bytes: &'b [u8], path: &str) -> Result<&'b str, Gap> {
    std::str::from_utf8(bytes).map_err(|e| {
        Gap::new(
            Code::FileApiMalformed,
            format!("{path}: not UTF-8 (at byte {})", e.valid_up_to()),
        )
    })
}

/// Chooses the reply index: the lexicographically greatest `index-*.json`,
/// which must also be the newest by modification time.
fn choose_index(reply_dir: &str) -> Result<(String, SystemTime), Gap> {
    let entries = match std::fs::read_dir(reply_dir) {
        Ok(e) => e,
        Err(e) => {
            return Err(Gap::new(
                Code::FileApiReplyMissing,
                format!(
                    "{reply_dir}: {e}; write {}/query/codemodel-v2 and re-run cmake",
                    reply_dir.trim_end_matches("/reply")
                ),
            ))
        }
    };
    let mut indexes: Vec<(String, Option<SystemTime>)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for e in entries {
        let e =
            e.map_err(|err| Gap::new(Code::FileApiReplyMissing, format!("{reply_dir}: {err}")))?;
        let Some(name) = e.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with("index-") && name.ends_with(".json") {
            let t = mtime(&format!("{reply_dir}/{name}"));
            indexes.push((name, t));
        } else if name.starts_with("error-") && name.ends_with(".json") {
            errors.push(name);
        }
    }
    indexes.sort();
    let Some((chosen, chosen_t)) = indexes.last().cloned() else {
        return Err(Gap::new(
            Code::FileApiReplyMissing,
            format!("{reply_dir}: no index-*.json"),
        ));
    };
    let Some(chosen_t) = chosen_t else {
        return Err(Gap::new(
            Code::FileApiIndexAmbiguous,
            format!("{reply_dir}/{chosen}: cannot read its timestamp"),
        ));
    };
    for (name, t) in &indexes[..indexes.len() - 1] {
        match t {
            Some(t) if *t <= chosen_t => {}
            _ => {
                return Err(Gap::new(
                    Code::FileApiIndexAmbiguous,
                    format!("{reply_dir}: {name} is newer than (or as uncertain as) the later-named {chosen}"),
                ))
            }
        }
    }
    // error-<timestamp>.json uses the same timestamp naming as index files.
    if let Some(err) = errors.iter().max() {
        let err_stamp = err.trim_start_matches("error-");
        let idx_stamp = chosen.trim_start_matches("index-");
        if err_stamp > idx_stamp {
            return Err(Gap::new(
                Code::FileApiReplyStale,
                format!(
                    "{reply_dir}/{err} records a configure that failed after {chosen} was written"
                ),
            ));
        }
    }
    Ok((chosen, chosen_t))
}

/// Finds the reply file of `kind` with `major` in the index, or reports what exists.
fn find_object(index: &RawIndex, kind: &str, major: u64) -> Result<Option<String>, Gap> {
    // Our own client query first, then the shared stateless query, then objects[].
    let mut candidates: Vec<&serde_json::Value> = Vec::new();
    if let Some(StrictObject(reply)) = &index.reply {
        if let Some(client) = reply.get("client-diff2test") {
            if let Some(v) = client.get(format!("{kind}-v{major}")) {
                candidates.push(v);
            }
        }
        if let Some(v) = reply.get(&format!("{kind}-v{major}")) {
            candidates.push(v);
        }
    }
    for c in candidates {
        if let (Some(k), Some(f)) = (
            c.get("kind").and_then(|k| k.as_str()),
            c.get("jsonFile").and_then(|f| f.as_str()),
        ) {
            let m = c
                .get("version")
                .and_then(|v| v.get("major"))
                .and_then(|m| m.as_u64());
            if k == kind && m == Some(major) {
                return Ok(Some(f.to_owned()));
            }
        }
    }
    let mut other_major = None;
    for o in &index.objects {
        if o.kind == kind {
            if o.version.major == major {
                return Ok(Some(o.json_file.clone()));
            }
            other_major = Some(o.version.major);
        }
    }
    match other_major {
        Some(m) => Err(Gap::new(
            Code::FileApiUnsupportedVersion,
            format!("{kind} reply has major version {m}; only {major} is supported"),
        )),
        None => Ok(None),
    }
}

/// True when `a` and `b` name the same directory: equal after lexical folding,
/// or (documented policy) equal after resolving symlinks.
fn same_root(a: &str, b: &str) -> bool {
    a == b || matches!((paths::real(a), paths::real(b)), (Some(x), Some(y)) if x == y)
}

/// Loads and audits the File API reply of `req.build_dir`.
pub fn load(reader: &Reader, req: &Request<'_>) -> Loaded {
    let mut out = Loaded::default();
    match load_inner(reader, req, &mut out.gaps) {
        Ok(model) => out.model = Some(model),
        Err(g) => out.gaps.push(g),
    }
    out
}

fn load_inner(reader: &Reader, req: &Request<'_>, gaps: &mut Vec<Gap>) -> Result<Codemodel, Gap> {
    let reply_dir = format!("{}/.cmake/api/v1/reply", req.build_dir);
    let (index_name, index_mtime) = choose_index(&reply_dir)?;
    let mut ctx = Ctx {
        reader,
        reply_dir: reply_dir.clone(),
        index_mtime,
        files_read: Vec::new(),
    };
    let index: RawIndex = ctx.read_json(&index_name, Code::FileApiReplyMissing)?;
    let generator = index.cmake.generator.name.as_str();
    if !matches!(generator, "Unix Makefiles" | "Ninja" | "Ninja Multi-Config") {
        gaps.push(Gap::new(
            Code::UnsupportedGenerator,
            format!(
                "the build tree uses the {generator:?} generator (supported: Unix Makefiles, Ninja, Ninja Multi-Config)"
            ),
        ));
    } else if index.cmake.generator.multi_config == Some(true) && generator != "Ninja Multi-Config"
    {
        gaps.push(Gap::new(
            Code::UnsupportedGenerator,
            format!("the build tree uses the multi-config generator {generator:?}"),
        ));
    }
    // Makefiles link in the target's build directory; Ninja from the top of the build tree.
    let link_from_top = generator.starts_with("Ninja");
    let cm_file = find_object(&index, "codemodel", 2)?.ok_or_else(|| {
        Gap::new(
            Code::FileApiReplyMissing,
            format!("{reply_dir}/{index_name} has no codemodel-v2 reply"),
        )
    })?;
    let cm: RawCodemodel = ctx.read_json(&cm_file, Code::FileApiReplyMissing)?;
    if cm.kind != "codemodel" || cm.version.major != 2 {
        return Err(Gap::new(
            Code::FileApiUnsupportedVersion,
            format!(
                "{cm_file}: kind {:?} version {} is not codemodel 2",
                cm.kind, cm.version.major
            ),
        ));
    }
    if !cm.paths.source.starts_with('/') || !cm.paths.build.starts_with('/') {
        return Err(Gap::new(
            Code::FileApiMalformed,
            format!("{cm_file}: paths.source/paths.build are not absolute"),
        ));
    }
    let source_root = paths::fold(&cm.paths.source);
    let build_root = paths::fold(&cm.paths.build);
    let mut roots_ok = true;
    if !same_root(&source_root, req.source_dir) {
        gaps.push(Gap::new(
            Code::RootMismatch,
            format!(
                "codemodel source {source_root} is not --source-dir {}",
                req.source_dir
            ),
        ));
        roots_ok = false;
    }
    if !same_root(&build_root, req.build_dir) {
        gaps.push(Gap::new(
            Code::RootMismatch,
            format!(
                "codemodel build {build_root} is not --build-dir {}",
                req.build_dir
            ),
        ));
        roots_ok = false;
    }
    let _ = roots_ok;

    let config = match (req.config, cm.configurations.len()) {
        (_, 0) => {
            return Err(Gap::new(
                Code::FileApiMalformed,
                format!("{cm_file}: no configurations"),
            ))
        }
        (None, 1) => &cm.configurations[0],
        (None, n) => {
            let names: Vec<_> = cm.configurations.iter().map(|c| c.name.as_str()).collect();
            return Err(Gap::new(
                Code::ConfigAmbiguous,
                format!("{n} configurations {names:?}; pass --config"),
            ));
        }
        (Some(want), _) => {
            let hits: Vec<_> = cm
                .configurations
                .iter()
                .filter(|c| c.name == want)
                .collect();
            match hits.len() {
                1 => hits[0],
                0 => {
                    return Err(Gap::new(
                        Code::ConfigNotFound,
                        format!(
                            "--config {want:?} is not in the codemodel, which has {}",
                            cm.configurations
                                .iter()
                                .map(|c| format!("{:?}", c.name))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ))
                }
                _ => {
                    return Err(Gap::new(
                        Code::ConfigAmbiguous,
                        format!("configuration {want:?} appears twice"),
                    ))
                }
            }
        }
    };
    if config.targets.len() > reader.limits().max_targets {
        return Err(Gap::new(
            Code::LimitExceeded,
            format!(
                "{} targets exceed the limit of {} (--max-targets)",
                config.targets.len(),
                reader.limits().max_targets
            ),
        ));
    }

    // Read every target object (in parallel: they are independent files).
    let mut refs: Vec<&RawTargetRef> = config.targets.iter().collect();
    refs.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let mut seen_names = HashSet::new();
    let mut seen_ids = HashSet::new();
    for r in &refs {
        if !seen_names.insert(r.name.as_str()) || !seen_ids.insert(r.id.as_str()) {
            return Err(Gap::new(
                Code::FileApiMalformed,
                format!("target {:?} / id {:?} listed twice", r.name, r.id),
            ));
        }
    }
    let mut id_to_index: FastMap<&str, usize> = FastMap::default();
    for (i, r) in refs.iter().enumerate() {
        id_to_index.insert(r.id.as_str(), i);
    }
    // abstractTargets exist only from codemodel 2.9; in an older reply they are forged evidence.
    let minor = cm.version.minor.unwrap_or(0);
    if config.abstract_targets.is_some() && minor < 9 {
        gaps.push(Gap::new(
            Code::FileApiMalformed,
            format!(
                "{cm_file}: abstractTargets in a codemodel 2.{minor} reply (introduced in 2.9)"
            ),
        ));
    }
    let abstract_ids: FastSet<&str> = if minor >= 9 {
        config
            .abstract_targets
            .iter()
            .flatten()
            .map(|t| t.id.as_str())
            .collect()
    } else {
        FastSet::default()
    };

    // Target and abstract target names by id: a fingerprint names dependencies.
    let names_by_id: FastMap<&str, &str> = config
        .targets
        .iter()
        .chain(config.abstract_targets.iter().flatten())
        .map(|t| (t.id.as_str(), t.name.as_str()))
        .collect();
    // Read, parse and convert every target object in parallel (they are independent files).
    let roots = (source_root.as_str(), build_root.as_str());
    let converted: Vec<Result<Converted, Gap>> = super::par_map_n(req.threads, &refs, |r| {
        thread_local!(static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) });
        let mut local = Ctx {
            reader,
            reply_dir: reply_dir.clone(),
            index_mtime,
            files_read: Vec::new(),
        };
        BUF.with(|b| {
            let mut buf = b.borrow_mut();
            let (path, n) = local.read_into(&r.json_file, Code::TargetObjectMissing, &mut buf)?;
            let text = json_text(&buf[..n], &path)?;
            let value = super::json_value(text, req.fingerprints);
            let t: RawTarget<'_> = super::parse_json(text, value.as_ref())
                .map_err(|e| Gap::new(Code::FileApiMalformed, format!("{path}: {e}")))?;
            if t.name != r.name || t.id != r.id {
                return Err(Gap::new(
                    Code::TargetObjectMissing,
                    format!(
                        "{}: describes {:?}/{:?}, codemodel expects {:?}/{:?}",
                        r.json_file, t.name, t.id, r.name, r.id
                    ),
                ));
            }
            let mut c = convert_target(
                t,
                &r.json_file,
                roots,
                (&id_to_index, &abstract_ids),
                link_from_top,
            )?;
            c.files_read = local.files_read;
            c.fingerprint = value.map(|v| {
                let name_of = |id: &str| names_by_id.get(id).map(|n| (*n).to_owned());
                fingerprint::target(v, name_of, roots.0, roots.1)
            });
            Ok(c)
        })
    });

    let mut targets = Vec::with_capacity(refs.len());
    let mut target_fingerprints = Vec::new();
    let mut generated_files = HashSet::new();
    for (i, res) in converted.into_iter().enumerate() {
        match res {
            Ok(c) => {
                target_fingerprints.push(c.fingerprint);
                ctx.files_read.extend(c.files_read);
                gaps.extend(c.gaps);
                generated_files.extend(c.generated);
                targets.push(c.target);
            }
            Err(g) => {
                gaps.push(g);
                // Keep indices aligned with a placeholder (the gap already forbids a subset).
                targets.push(Target::placeholder(refs[i]));
                target_fingerprints.push(None);
            }
        }
    }

    // cmakeFiles-v1: the CMake inputs of this configure, and a freshness check of the reply.
    let mut config_globs = Vec::new();
    let cmake_inputs = match find_object(&index, "cmakeFiles", 1) {
        Err(g) => {
            gaps.push(g);
            None
        }
        Ok(None) => None,
        Ok(Some(f)) => match ctx.read_json::<RawCmakeFiles>(&f, Code::FileApiMalformed) {
            Err(g) => {
                gaps.push(g);
                None
            }
            Ok(cf) if cf.kind != "cmakeFiles" || cf.version.major != 1 => {
                gaps.push(Gap::new(
                    Code::FileApiUnsupportedVersion,
                    format!("{f}: not cmakeFiles major 1"),
                ));
                None
            }
            Ok(cf) => {
                config_globs = cf
                    .globs_dependent
                    .iter()
                    .flatten()
                    .map(|g| g.convert(&source_root))
                    .collect();
                let mut inputs = Vec::new();
                for inp in cf.inputs {
                    let abs = paths::join_fold(&source_root, &inp.path);
                    if inp.is_generated == Some(true) {
                        continue;
                    }
                    // CMake's own modules change only with a CMake upgrade; project inputs must be older than the reply.
                    if inp.is_cmake != Some(true) {
                        match mtime(&abs) {
                            Some(t) if t <= index_mtime => {}
                            Some(_) => gaps.push(Gap::new(
                                Code::FileApiReplyStale,
                                format!("{abs} is newer than the File API reply; re-run cmake"),
                            )),
                            None => gaps.push(Gap::new(
                                Code::FileApiReplyStale,
                                format!("CMake input {abs} cannot be inspected (deleted since the last configure?)"),
                            )),
                        }
                    }
                    inputs.push(abs);
                }
                inputs.sort();
                inputs.dedup();
                Some(inputs)
            }
        },
    };

    // toolchains-v1 (optional): a changed compiler is a build-configuration change.
    let mut cmake_inputs = cmake_inputs;
    let mut toolchain_fingerprint: Result<Option<String>, ()> = Ok(None);
    let mut implicit_includes: Vec<String> = Vec::new();
    match find_object(&index, "toolchains", 1) {
        Err(g) => gaps.push(g),
        Ok(None) => {}
        Ok(Some(f)) => match ctx.read_json_kept::<RawToolchains>(&f, req.fingerprints) {
            Err(g) => {
                toolchain_fingerprint = Err(());
                gaps.push(g)
            }
            Ok((tc, value)) => {
                toolchain_fingerprint = Ok(value.map(|v| fingerprint::of(v, roots.0, roots.1)));
                if tc.kind != "toolchains" || tc.version.major != 1 {
                    gaps.push(Gap::new(
                        Code::FileApiUnsupportedVersion,
                        format!("{f}: not toolchains major 1"),
                    ));
                } else {
                    implicit_includes = implicit_include_dirs(&tc);
                    if let Some(inputs) = &mut cmake_inputs {
                        inputs.extend(
                            tc.toolchains
                                .into_iter()
                                .filter_map(|t| t.compiler?.path)
                                .map(|p| paths::fold(&p)),
                        );
                        inputs.sort();
                        inputs.dedup();
                    }
                }
            }
        },
    }

    let object_dirs = targets
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.dir_build.is_empty())
        .map(|(i, t)| (t.object_dir(), i))
        .collect();
    let outside_includes = Some(outside_includes(&targets, &source_root, &build_root));
    Ok(Codemodel {
        outside_includes,
        object_dirs,
        source_root,
        build_root,
        config: config.name.clone(),
        reply_time: Some(index_mtime),
        generator: index.cmake.generator.name.clone(),
        multi_config: index.cmake.generator.multi_config == Some(true),
        cmake_command: index
            .cmake
            .paths
            .as_ref()
            .and_then(|p| p.cmake.as_deref())
            .filter(|c| c.starts_with('/'))
            .map(paths::fold),
        config_names: cm.configurations.iter().map(|c| c.name.clone()).collect(),
        targets,
        generated_files,
        cmake_inputs,
        config_globs,
        files_read: ctx.files_read,
        implicit_includes,
        fingerprints: req.fingerprints.then_some(Fingerprints {
            targets: target_fingerprints,
            toolchain: toolchain_fingerprint,
        }),
    })
}

/// The compilers' implicit include directories (folded), sorted and unique.
fn implicit_include_dirs(tc: &RawToolchains) -> Vec<String> {
    let mut dirs: Vec<String> = tc
        .toolchains
        .iter()
        .filter_map(|t| {
            t.compiler
                .as_ref()?
                .implicit
                .as_ref()?
                .include_directories
                .as_ref()
        })
        .flatten()
        .map(|d| paths::fold(d))
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The include directories of `targets` outside both roots, sorted and unique.
fn outside_includes(targets: &[Target], source_root: &str, build_root: &str) -> Vec<String> {
    let mut outside: Vec<String> = targets
        .iter()
        .flat_map(|t| t.includes.iter())
        .filter(|d| !paths::is_within(d, source_root) && !paths::is_within(d, build_root))
        .cloned()
        .collect();
    outside.sort_unstable();
    outside.dedup();
    outside
}

/// A file name a linker reads as a library or object: `*.a`, `*.so`,
/// `*.so.N…`, `*.dylib`, `*.lib`, `*.o`, `*.obj`.
fn looks_like_library(p: &str) -> bool {
    let name = p.rsplit('/').next().unwrap_or(p);
    [".a", ".so", ".dylib", ".lib", ".o", ".obj"]
        .iter()
        .any(|ext| name.ends_with(ext))
        || name.contains(".so.")
}

/// One target object, converted.
struct Converted {
    target: Target,
    /// The target object's fingerprint, when asked for.
    fingerprint: Option<String>,
    /// Build-time generated files it declares (custom command outputs, stamps).
    generated: Vec<String>,
    gaps: Vec<Gap>,
    files_read: Vec<String>,
}

fn convert_target(
    t: RawTarget<'_>,
    file: &str,
    (source_root, build_root): (&str, &str),
    (id_to_index, abstract_ids): (&FastMap<&str, usize>, &FastSet<&str>),
    link_from_top: bool,
) -> Result<Converted, Gap> {
    let mut gaps = Vec::new();
    let mut generated_files = Vec::new();
    let kind = TargetKind::parse(&t.kind).ok_or_else(|| {
        Gap::new(
            Code::FileApiMalformed,
            format!("{file}: unknown target type {:?}", t.kind),
        )
    })?;
    let groups = t.compile_groups.unwrap_or_default();
    let mut compiled = Vec::new();
    let mut object_inputs = Vec::new();
    for s in t.sources.unwrap_or_default() {
        let abs = paths::join_fold(source_root, &s.path);
        let generated = s.is_generated == Some(true);
        match s.compile_group_index {
            Some(g) => {
                let group = groups.get(g).ok_or_else(|| {
                    Gap::new(
                        Code::FileApiMalformed,
                        format!(
                            "{file}: source {:?} has compileGroupIndex {g} out of range",
                            s.path
                        ),
                    )
                })?;
                compiled.push(CompiledSource {
                    path: abs,
                    language: group.language.to_string(),
                    generated,
                });
            }
            None if generated => {
                if let Some(out) = abs.strip_suffix(".rule") {
                    generated_files.push(out.to_owned());
                } else if abs.ends_with(".o") || abs.ends_with(".obj") {
                    object_inputs.push(abs);
                } else {
                    generated_files.push(abs);
                }
            }
            None => {}
        }
    }
    let mut deps = Vec::new();
    for d in t.dependencies.unwrap_or_default() {
        match id_to_index.get(d.id.as_ref()) {
            Some(&i) => deps.push(i),
            None if abstract_ids.contains(d.id.as_ref()) => {}
            None => gaps.push(Gap::new(
                Code::TargetDependencyUnknown,
                format!("target {:?} depends on unknown id {:?}", t.name, d.id),
            )),
        }
    }
    deps.sort_unstable();
    deps.dedup();
    let mut defines: Vec<String> = groups
        .iter()
        .flat_map(|g| g.defines.iter().flatten().map(|d| d.define.to_string()))
        .collect();
    defines.sort();
    defines.dedup();
    let artifacts = t
        .artifacts
        .unwrap_or_default()
        .into_iter()
        .map(|a| paths::join_fold(build_root, &a.path))
        .collect();
    let dir_build = paths::join_fold(build_root, &t.paths.build);
    let fragments = t.link.and_then(|l| l.command_fragments).unwrap_or_default();
    // The directory the compiler and the linker run in: relative paths in
    // compile and link fragments start there (Ninja runs every command from
    // the top of the build tree, the Makefiles generators from the target's
    // build directory).
    let link_dir: &str = if link_from_top {
        build_root
    } else {
        &dir_build
    };
    let mut link_paths = Vec::new();
    let mut link_names = Vec::new();
    let mut link_dirs = Vec::new();
    for f in &fragments {
        let role = f.role.as_ref().map(|r| &*r.0);
        // A fragment may hold several shell words (`-L/a -lfoo`); quoting is rare here
        // and only ever splits a word too much, which can only add candidates.
        for word in f.fragment.split_ascii_whitespace() {
            let word = word.trim_matches(|c| c == '"' || c == '\'');
            if let Some(name) = word.strip_prefix("-l").filter(|n| !n.is_empty()) {
                link_names.push(name.to_owned());
            } else if let Some(dir) = word.strip_prefix("-L").filter(|d| !d.is_empty()) {
                link_dirs.push(paths::join_fold(link_dir, dir));
            } else if let Some(dirs) = word.strip_prefix("-Wl,") {
                // -Wl,-L/dir,-lfoo and -Wl,-rpath,/dir: the linker sees each comma part.
                for p in dirs.split(',') {
                    if let Some(name) = p.strip_prefix("-l").filter(|n| !n.is_empty()) {
                        link_names.push(name.to_owned());
                    } else if let Some(dir) = p.strip_prefix("-L").filter(|d| !d.is_empty()) {
                        link_dirs.push(paths::join_fold(link_dir, dir));
                    } else if !p.starts_with('-') && looks_like_library(p) {
                        // -Wl,--whole-archive,libx.a; not an option's argument (-rpath,DIR)
                        link_paths.push(paths::join_fold(link_dir, p));
                    }
                }
            } else if role == Some("libraries") && !word.starts_with('-') && !word.is_empty() {
                link_paths.push(paths::join_fold(link_dir, word));
            } else if role == Some("libraryPath") && !word.starts_with('-') && !word.is_empty() {
                link_dirs.push(paths::join_fold(link_dir, word));
            }
        }
    }
    link_names.sort();
    link_names.dedup();
    link_dirs.sort();
    link_dirs.dedup();
    let mut flags: Vec<String> = groups
        .iter()
        .flat_map(|g| g.compile_command_fragments.iter().flatten())
        .map(|f| f.fragment.to_string())
        .collect();
    flags.sort();
    flags.dedup();
    let mut includes: Vec<String> = Vec::new();
    let mut system_includes: Vec<String> = Vec::new();
    for i in groups.iter().flat_map(|g| g.includes.iter().flatten()) {
        let dir = paths::join_fold(&dir_build, &i.path);
        if i.is_system == Some(true) {
            system_includes.push(dir.clone());
        }
        includes.push(dir);
    }
    for f in &flags {
        let mut words = f.split_ascii_whitespace().peekable();
        while let Some(w) = words.next() {
            for opt in ["-isystem", "-iquote", "-idirafter", "-I"] {
                if let Some(rest) = w.strip_prefix(opt) {
                    let dir = if rest.is_empty() {
                        words.peek().copied().unwrap_or("")
                    } else {
                        rest
                    };
                    if !dir.is_empty() {
                        let dir = paths::join_fold(link_dir, dir);
                        // Headers found through these count as system headers too.
                        if opt == "-isystem" || opt == "-idirafter" {
                            system_includes.push(dir.clone());
                        }
                        includes.push(dir);
                    }
                    break;
                }
            }
        }
    }
    includes.sort();
    includes.dedup();
    system_includes.sort();
    system_includes.dedup();
    let mut generated = generated_files.clone();
    generated.sort();
    generated.dedup();
    let mut cmdline_files = Vec::new();
    for word in fragments
        .iter()
        .map(|f| &*f.fragment)
        .chain(flags.iter().map(String::as_str))
        .flat_map(str::split_ascii_whitespace)
    {
        for piece in word.split([',', '=']) {
            let piece = piece.trim_matches(|c| c == '"' || c == '\'');
            let piece = piece.strip_prefix('@').unwrap_or(piece);
            if piece.is_empty() || piece.starts_with('-') || !piece.contains('/') {
                continue;
            }
            let abs = paths::join_fold(link_dir, piece);
            if paths::is_within(&abs, source_root) && !paths::is_within(&abs, build_root) {
                cmdline_files.push(abs);
            }
        }
    }
    cmdline_files.sort();
    cmdline_files.dedup();
    let target = Target {
        name: t.name.into_owned(),
        id: t.id.into_owned(),
        kind,
        artifacts,
        dir_build,
        compiled,
        deps,
        object_inputs,
        defines,
        link_paths,
        link_names,
        link_dirs,
        flags,
        includes,
        system_includes,
        cmdline_files,
        generated,
    };
    Ok(Converted {
        fingerprint: None,
        target,
        generated: generated_files,
        gaps,
        files_read: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_strings_borrow_unless_escaped() {
        let json = br#"{"fragment": "../lib/libx.a", "role": "libraries"}"#;
        let f: RawFragment<'_> = serde_json::from_slice(json).unwrap();
        assert!(matches!(f.fragment, Cow::Borrowed("../lib/libx.a")));
        assert!(matches!(f.role, Some(Borrowed(Cow::Borrowed("libraries")))));
        let json = br#"{"fragment": "a\"b", "role": "li\u0062raries"}"#;
        let f: RawFragment<'_> = serde_json::from_slice(json).unwrap();
        assert_eq!(f.fragment, "a\"b");
        assert!(matches!(f.role, Some(Borrowed(Cow::Owned(ref r))) if r == "libraries"));
        let f: RawFragment<'_> = serde_json::from_slice(br#"{"fragment": "-lm"}"#).unwrap();
        assert!(f.role.is_none());
    }

    /// `globsDependent` exactly as CMake 4.4.5 wrote it (cmakeFiles 1.1) for
    ///
    /// ```cmake
    /// file(GLOB srcs CONFIGURE_DEPENDS src/*.cpp)
    /// file(GLOB_RECURSE rsrcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
    /// file(GLOB hdrs LIST_DIRECTORIES false RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/inc CONFIGURE_DEPENDS inc/*.h inc/*.hpp)
    /// file(GLOB_RECURSE sl FOLLOW_SYMLINKS LIST_DIRECTORIES true CONFIGURE_DEPENDS src/sub/*)
    /// file(GLOB txt CONFIGURE_DEPENDS src/f[0-9].tx? ../globlab/src/*.none)
    /// file(GLOB nothing CONFIGURE_DEPENDS src/*.zzz)
    /// ```
    ///
    /// (source `/tmp/globlab`; `inputs` cut to two of its 96 entries).
    const CMAKE_4_4_CMAKE_FILES: &str = r#"{
 "inputs": [
  {"path": "CMakeLists.txt"},
  {"isGenerated": true, "path": "b/CMakeFiles/4.4.5/CMakeSystem.cmake"}
 ],
 "kind": "cmakeFiles",
 "paths": {"build": "/tmp/globlab/b", "source": "/tmp/globlab"},
 "version": {"major": 1, "minor": 1},
 "globsDependent": [
  {"expression": "/tmp/globlab/inc/*.h", "paths": ["x.h"], "relative": "/tmp/globlab/inc"},
  {"expression": "/tmp/globlab/inc/*.hpp", "paths": ["y.hpp"], "relative": "/tmp/globlab/inc"},
  {"expression": "/tmp/globlab/../globlab/src/*.none", "listDirectories": true, "paths": []},
  {"expression": "/tmp/globlab/src/*.cpp", "listDirectories": true,
   "paths": ["/tmp/globlab/src/a.cpp", "/tmp/globlab/src/b.cpp"]},
  {"expression": "/tmp/globlab/src/*.zzz", "listDirectories": true, "paths": []},
  {"expression": "/tmp/globlab/src/f[0-9].tx?", "listDirectories": true,
   "paths": ["/tmp/globlab/src/f1.txt", "/tmp/globlab/src/f2.txt"]},
  {"expression": "/tmp/globlab/src/*.cpp",
   "paths": ["/tmp/globlab/src/a.cpp", "/tmp/globlab/src/b.cpp",
             "/tmp/globlab/src/sub/c.cpp", "/tmp/globlab/src/sub/deep/d.cpp"],
   "recurse": true},
  {"expression": "/tmp/globlab/src/sub/*", "followSymlinks": true, "listDirectories": true,
   "paths": ["/tmp/globlab/src/sub/c.cpp", "/tmp/globlab/src/sub/deep",
             "/tmp/globlab/src/sub/deep/d.cpp"],
   "recurse": true}
 ]
}"#;

    fn globlab_model() -> Codemodel {
        let cf: RawCmakeFiles = serde_json::from_str(CMAKE_4_4_CMAKE_FILES).unwrap();
        assert_eq!((cf.kind.as_str(), cf.version.major), ("cmakeFiles", 1));
        assert_eq!(cf.inputs.len(), 2);
        Codemodel {
            config_globs: cf
                .globs_dependent
                .iter()
                .flatten()
                .map(|g| g.convert("/tmp/globlab"))
                .collect(),
            ..Codemodel::default()
        }
    }

    #[test]
    fn globs_dependent_is_parsed_from_cmake_4_4() {
        let m = globlab_model();
        assert_eq!(m.config_globs.len(), 8);
        let h = &m.config_globs[0];
        assert_eq!(h.base, "/tmp/globlab/inc");
        assert_eq!(h.patterns, ["*.h"]);
        assert!(!h.recurse && !h.list_directories && !h.follow_symlinks);
        // RELATIVE paths are made absolute against the RELATIVE directory.
        assert_eq!(h.matched, ["/tmp/globlab/inc/x.h"]);
        // `..` in the fixed prefix is folded, as the file system would resolve it.
        assert_eq!(m.config_globs[2].base, "/tmp/globlab/src");
        assert_eq!(m.config_globs[5].patterns, ["f[0-9].tx?"]);
        let r = &m.config_globs[6];
        assert!(r.recurse && !r.list_directories);
        assert_eq!(r.matched.len(), 4);
        let s = &m.config_globs[7];
        assert!(s.recurse && s.list_directories && s.follow_symlinks);
        assert_eq!(s.base, "/tmp/globlab/src/sub");
        // A 1.0 reply (CMake < 3.30) has no globsDependent: no globs, nothing matches.
        let old = r#"{"kind":"cmakeFiles","version":{"major":1,"minor":0},"inputs":[]}"#;
        let cf: RawCmakeFiles = serde_json::from_str(old).unwrap();
        assert!(cf.globs_dependent.is_none());
        assert!(!Codemodel::default().matches_config_glob("/tmp/globlab/src/new.cpp"));
    }

    #[test]
    fn a_path_a_configure_depends_glob_would_list_matches() {
        let m = globlab_model();
        let yes = [
            "/tmp/globlab/src/new.cpp",          // GLOB src/*.cpp: an added source
            "/tmp/globlab/src/a.cpp",            // listed: may be one the change added
            "/tmp/globlab/src/.hidden.cpp",      // kwsys `*` matches a leading dot
            "/tmp/globlab/src/x/deeper/e.cpp",   // GLOB_RECURSE src/*.cpp at any depth
            "/tmp/globlab/inc/z.h",              // RELATIVE globs match like the others
            "/tmp/globlab/src/f7.txt",           // [0-9] and ?
            "/tmp/globlab/src/f7.txz",           //
            "/tmp/globlab/src/sub/new/any.bin",  // recursive + LIST_DIRECTORIES: a new directory
            "/tmp/globlab/src/sub/n.txt",        // src/sub/* recursive
            "/tmp/globlab/src/dir.cpp/file.txt", // GLOB lists directories: dir.cpp may be new
        ];
        for p in yes {
            assert!(m.matches_config_glob(p), "{p} should match");
        }
        let no = [
            "/tmp/globlab/src/a.hpp",   // no pattern for .hpp under src
            "/tmp/globlab/src",         // the base itself
            "/tmp/globlab/inc/sub/z.h", // GLOB is not recursive
            "/tmp/globlab/inc/z.hh",    // *.h is anchored
            "/tmp/globlab/src/fa.txt",  // [0-9]
            "/tmp/globlab/src/f10.txt", // f[0-9] is one byte
            "/tmp/globlab/README.md",   // outside every base
            "/tmp/globlab-other/src/x.cpp",
            "/tmp/globlab/src/f1.txtx",
        ];
        for p in no {
            assert!(!m.matches_config_glob(p), "{p} should not match");
        }
    }

    #[test]
    fn kwsys_glob_component_semantics() {
        let t = |p: &str, n: &str| glob_component(p, n);
        assert!(t("*", "") && t("*", "abc") && t("a*c", "abbbc") && t("a*c", "ac"));
        assert!(!t("a*c", "abcd") && !t("?", "") && t("??", "é"));
        assert!(t("*.c*", "x.cpp") && t("*a*a*", "banana") && !t("*a*a*a*a", "banana"));
        assert!(t("[abc]", "b") && !t("[abc]", "d") && t("[a-c]x", "bx"));
        assert!(t("[!a-c]", "d") && !t("[!a-c]", "b") && t("[^a]", "b") && !t("[^a]", "a"));
        assert!(t("[]]", "]") && t("[!]]", "a") && !t("[!]]", "]"));
        assert!(t("[a-]", "-") && t("[-a]", "-"));
        // An unclosed bracket is a literal '['.
        assert!(t("[ab", "[ab") && !t("[ab", "a"));
        // Everything else is literal (no backslash escapes, no braces).
        assert!(t("a.b", "a.b") && !t("a.b", "axb") && t("{a,b}", "{a,b}") && t(r"\*", r"\x"));
    }

    #[test]
    fn glob_bases_cut_at_the_first_wildcard_component() {
        let g = |e: &str| ConfigGlob::new(e, "/s", false, false, false, None, &[]);
        assert_eq!(
            (g("/s/a/b*/c/*.h").base, g("/s/a/b*/c/*.h").patterns),
            (
                "/s/a".into(),
                vec!["b*".to_owned(), "c".into(), "*.h".into()]
            )
        );
        assert_eq!(g("/s/a/x.h").base, "/s/a");
        assert_eq!(g("rel/*.h").base, "/s/rel");
        let deep = g("/s/*/inc/*.h");
        assert!(deep.matches("/s/lib/inc/a.h"));
        assert!(!deep.matches("/s/lib/src/a.h") && !deep.matches("/s/lib/inc/x/a.h"));
        let r = ConfigGlob::new("/s/*/inc/*.h", "/s", true, false, false, None, &[]);
        assert!(r.matches("/s/lib/inc/x/a.h") && r.matches("/s/lib/inc/a.h"));
        assert!(!r.matches("/s/lib/src/a.h") && !r.matches("/s/lib/inc/x/a.c"));
        assert!(!r.matches("/s/lib/inc"));
    }
}
