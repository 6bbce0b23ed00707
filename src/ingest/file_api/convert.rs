//! One target object, converted from its wire form into a [`Target`].

use super::model::{CompiledSource, Target, TargetKind};
use super::raw::*;
use crate::fasthash::{FastMap, FastSet};
use crate::paths;
use crate::reason::{Code, Gap};

/// The compilers' implicit include directories (folded), sorted and unique.
pub(super) fn implicit_include_dirs(tc: &RawToolchains) -> Vec<String> {
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

/// A file name a linker reads as a library or object: `*.a`, `*.so`,
/// `*.so.N…`, `*.dylib`, `*.lib`, `*.o`, `*.obj`.
pub(super) fn looks_like_library(p: &str) -> bool {
    let name = p.rsplit('/').next().unwrap_or(p);
    [".a", ".so", ".dylib", ".lib", ".o", ".obj"]
        .iter()
        .any(|ext| name.ends_with(ext))
        || name.contains(".so.")
}

/// One target object, converted.
pub(super) struct Converted {
    pub(super) target: Target,
    /// The target object's fingerprint, when asked for.
    pub(super) fingerprint: Option<String>,
    /// Build-time generated files it declares (custom command outputs, stamps).
    pub(super) generated: Vec<String>,
    pub(super) gaps: Vec<Gap>,
    pub(super) files_read: Vec<String>,
}

pub(super) fn convert_target(
    t: RawTarget<'_>,
    file: &str,
    (source_root, build_root, scope_root): (&str, &str, &str),
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
    let (link_paths, link_names, link_dirs) = link_words(&fragments, link_dir);
    let mut flags: Vec<String> = groups
        .iter()
        .flat_map(|g| g.compile_command_fragments.iter().flatten())
        .map(|f| f.fragment.to_string())
        .collect();
    flags.sort();
    flags.dedup();
    let (includes, system_includes) = include_dirs(&groups, &flags, &dir_build, link_dir);
    let mut generated = generated_files.clone();
    generated.sort();
    generated.dedup();
    let (cmdline_files, cmdline_build_files, asm_search_dirs) =
        command_line_files(&fragments, &flags, link_dir, (scope_root, build_root));
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
        cmdline_build_files,
        asm_search_dirs,
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

/// What the link fragments name, relative paths taken from `link_dir`:
/// library paths, `-l` names and `-L` directories (the last two sorted and
/// unique).
fn link_words(
    fragments: &[RawFragment<'_>],
    link_dir: &str,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut link_paths = Vec::new();
    let mut link_names = Vec::new();
    let mut link_dirs = Vec::new();
    for f in fragments {
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
    (link_paths, link_names, link_dirs)
}

/// The include directories of the compile groups (relative to the target's
/// build directory) and of the `-I`-like flags (relative to `link_dir`), and
/// which of them hold system headers; both sorted and unique.
fn include_dirs(
    groups: &[RawCompileGroup<'_>],
    flags: &[String],
    dir_build: &str,
    link_dir: &str,
) -> (Vec<String>, Vec<String>) {
    let mut includes: Vec<String> = Vec::new();
    let mut system_includes: Vec<String> = Vec::new();
    for i in groups.iter().flat_map(|g| g.includes.iter().flatten()) {
        let dir = paths::join_fold(dir_build, &i.path);
        if i.is_system == Some(true) {
            system_includes.push(dir.clone());
        }
        includes.push(dir);
    }
    for f in flags {
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
    (includes, system_includes)
}

/// The files the compile and link command lines name (relative to
/// `link_dir`): those in the project's scope, those in the build tree (flags
/// only), and the assembler's search directories (`-Wa,-I`); each sorted and
/// unique.
fn command_line_files(
    fragments: &[RawFragment<'_>],
    flags: &[String],
    link_dir: &str,
    (scope_root, build_root): (&str, &str),
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut cmdline_files = Vec::new();
    let mut cmdline_build_files = Vec::new();
    let mut asm_search_dirs = Vec::new();
    let is_flags = |role: Option<&str>| !matches!(role, Some("libraries" | "libraryPath"));
    for (word, flag) in fragments
        .iter()
        .flat_map(|f| {
            let flag = is_flags(f.role.as_ref().map(|r| &*r.0));
            f.fragment.split_ascii_whitespace().map(move |w| (w, flag))
        })
        .chain(
            flags
                .iter()
                .flat_map(|f| f.split_ascii_whitespace().map(|w| (w, true))),
        )
    {
        if flag {
            if let Some(rest) = word.strip_prefix("-Wa,") {
                // `-Wa,-I<dir>` or `-Wa,-I,<dir>`: the assembler's search path.
                let mut pieces = rest.split(',');
                while let Some(p) = pieces.next() {
                    let dir = match p.strip_prefix("-I") {
                        Some("") => pieces.next().unwrap_or(""),
                        Some(d) => d,
                        None => continue,
                    };
                    let dir = dir.trim_matches(|c| c == '"' || c == '\'');
                    if !dir.is_empty() {
                        let abs = paths::join_fold(link_dir, dir);
                        if paths::is_within(&abs, scope_root) && !paths::is_within(&abs, build_root)
                        {
                            asm_search_dirs.push(abs);
                        }
                    }
                }
            }
        }
        for piece in word.split([',', '=']) {
            let piece = piece.trim_matches(|c| c == '"' || c == '\'');
            let piece = piece.strip_prefix('@').unwrap_or(piece);
            if piece.is_empty() || piece.starts_with('-') || !piece.contains('/') {
                continue;
            }
            let abs = paths::join_fold(link_dir, piece);
            if paths::is_within(&abs, build_root) {
                if flag {
                    cmdline_build_files.push(abs);
                }
            } else if paths::is_within(&abs, scope_root) {
                cmdline_files.push(abs);
            }
        }
    }
    cmdline_files.sort();
    cmdline_files.dedup();
    cmdline_build_files.sort();
    cmdline_build_files.dedup();
    asm_search_dirs.sort();
    asm_search_dirs.dedup();
    (cmdline_files, cmdline_build_files, asm_search_dirs)
}

/// A stand-in for a target whose object could not be read: no artifacts, no
/// sources, no edges. Only ever used alongside a gap, which forbids a subset.
pub(super) fn placeholder(r: &RawTargetRef) -> Target {
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
        cmdline_build_files: Vec::new(),
        asm_search_dirs: Vec::new(),
        generated: Vec::new(),
    }
}
