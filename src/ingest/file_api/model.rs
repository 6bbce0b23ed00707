//! The codemodel as the rest of diff2test sees it: targets, their compiled
//! sources, artifacts, dependencies and texts, and the build's roots.

use std::collections::HashSet;
use std::time::SystemTime;

use super::glob::ConfigGlob;
use crate::fasthash::FastMap;
use crate::paths;

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
    pub(super) fn parse(s: &str) -> Option<Self> {
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
    /// Build-tree files its compile flags or link flags (not its libraries)
    /// name verbatim (a version script `file(WRITE)` wrote), absolute
    /// folded: part of its build description (snapshots).
    pub cmdline_build_files: Vec<String>,
    /// Source-tree directories its compile flags hand the assembler as
    /// search directories (`-Wa,-I<dir>`): `.incbin` and `.include` in
    /// inline assembly find files there that no depfile lists.
    pub asm_search_dirs: Vec<String>,
    /// Build-time generated files the target lists (custom command outputs
    /// through their `.rule` pseudo-sources, stamps), absolute folded.
    pub generated: Vec<String>,
}

impl Target {
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
    /// The work tree of the git repository holding the source root, when
    /// that is an ancestor of it (a CMake project in a subdirectory of its
    /// repository); found by the nearest `.git` entry, never by running git.
    /// `None` when the source root is the repository's top or in none.
    pub repo_root: Option<String>,
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
    /// The version (major, minor) of the CMake that configured the build, from
    /// the reply index; `None` when it does not say.
    pub cmake_version: Option<(u64, u64)>,
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
    /// The cache-v2 reply file the index names (absolute), when the build
    /// queried it: see [`crate::ingest::cmake_cache`].
    pub cache_reply: Option<String>,
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
    /// The toolchains reply's.
    pub toolchain: ToolchainPrint,
}

/// The fingerprint of the toolchains reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolchainPrint {
    /// The reply has no toolchains object.
    Absent,
    /// Its fingerprint.
    Of(String),
    /// It could not be used (its gap says why).
    Unusable,
}

/// Why a path has no one owning target ([`Codemodel::object_owner`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoOwner {
    /// Object directories of several targets contain it.
    #[error("lies inside the object directories of more than one target")]
    Several,
    /// No target's object directory contains it.
    #[error("is not inside any target's CMakeFiles/<target>.dir/ directory")]
    None,
}

impl Codemodel {
    /// The root of the project's files: the repository's work tree when the
    /// source root lies in a subdirectory of it, else the source root. Files
    /// below it (and not in the build tree) are project files: dependency
    /// evidence keeps them, a change to one is classified, not escaped.
    pub fn scope_root(&self) -> &str {
        self.repo_root.as_deref().unwrap_or(&self.source_root)
    }

    /// Whether `abs` (folded) is a project file: below
    /// [`Codemodel::scope_root`] and not in the build tree.
    pub fn is_project_file(&self, abs: &str) -> bool {
        paths::is_within(abs, self.scope_root()) && !paths::is_within(abs, &self.build_root)
    }

    /// `abs` (folded, below [`Codemodel::scope_root`]) as a user names it
    /// from the source root: relative, with `../` steps out of it when it
    /// lies elsewhere in the repository.
    pub fn display_path(&self, abs: &str) -> String {
        if let Some(rel) = paths::strip_root(abs, &self.source_root) {
            return if rel.is_empty() {
                ".".into()
            } else {
                rel.into()
            };
        }
        match &self.repo_root {
            Some(repo) if paths::is_within(abs, repo) => {
                paths::climb_to(&self.source_root, abs).unwrap_or_else(|| abs.to_owned())
            }
            _ => abs.to_owned(),
        }
    }

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
                self.scope_root(),
                &self.build_root,
            )),
        }
    }

    /// The one target whose `CMakeFiles/<target>.dir/` directory contains
    /// `path` (a depfile or an object file); an error says why there is none.
    pub fn object_owner(&self, path: &str) -> Result<usize, NoOwner> {
        let mut found = None;
        let mut from = 0;
        while let Some(pos) = path[from..].find("/CMakeFiles/") {
            let seg_start = from + pos + "/CMakeFiles/".len();
            if let Some(seg_len) = path[seg_start..].find('/') {
                if let Some(&t) = self.object_dirs.get(&path[..seg_start + seg_len]) {
                    if found.is_some_and(|f| f != t) {
                        return Err(NoOwner::Several);
                    }
                    found = Some(t);
                }
            }
            from = seg_start;
        }
        found.ok_or(NoOwner::None)
    }

    /// True when `abs_path` (absolute, folded, the codemodel's spelling) is a
    /// path one of the `CONFIGURE_DEPENDS` globs lists, or would list if it
    /// were added: adding, removing or renaming it changes what the glob
    /// returns, so CMake re-runs configure (see [`ConfigGlob::matches`]).
    pub fn matches_config_glob(&self, abs_path: &str) -> bool {
        self.config_globs.iter().any(|g| g.matches(abs_path))
    }
}

/// The include directories of `targets` outside both roots, sorted and unique.
pub(super) fn outside_includes(
    targets: &[Target],
    source_root: &str,
    build_root: &str,
) -> Vec<String> {
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
