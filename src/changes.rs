//! The change set: every changed path brought to the canonical form and classified.
//!
//! Allowlist, never extensions (contract §5): a path is *known* only when it is
//! project dependency evidence (a translation unit's source or a prerequisite
//! in a trusted `.d`). Build-configuration and external-resource paths are
//! recognised so they can force the full suite with their own reason; every
//! other path is *unresolved* and forces the full suite too. Classification is
//! a pure function of the path and the evidence, so repeated runs agree.

use std::ffi::OsString;

use crate::ingest::depfile::{DepEvidence, FileId};
use crate::paths;
use crate::reason::{Code, Gap};

/// What a changed path is, by evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Main source of at least one translation unit.
    Source,
    /// Prerequisite of at least one translation unit (not a main source).
    Header,
    /// A CMake input: changes the build graph itself.
    BuildConfig,
    /// Lockfile, preset or package-manager configuration.
    External,
    /// No evidence of record (unknown, deleted, escaping or unreadable): confidence 0.
    Unresolved,
}

impl Class {
    /// Lower-case name used in explanations and plans.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Source => "source",
            Class::Header => "header",
            Class::BuildConfig => "build-config",
            Class::External => "external",
            Class::Unresolved => "unresolved",
        }
    }
}

/// One classified changed path.
#[derive(Clone, Debug)]
pub struct Changed {
    /// The path as displayed: relative to the source root when inside it, else absolute.
    pub display: String,
    /// The real spelling (symlinks resolved), relative to the source root when
    /// inside it, when it differs from `display`. Policy globs match either.
    pub real_display: Option<String>,
    /// Classification.
    pub class: Class,
    /// The evidence that classified it, in words.
    pub evidence: String,
    /// The evidence files it is, for known sources/headers: one per spelling
    /// the depfiles use for it (several when symlinks lead to it), sorted.
    pub files: Vec<FileId>,
    /// The reason this path alone forbids a subset, if any.
    pub gap: Option<Gap>,
    /// Absolute, folded, under the evidence's spelling of the source root
    /// (empty when the path could not be made absolute).
    pub abs: String,
    /// The policy declaration this path's classification rests on (a
    /// boundary or data rule that took its gap away, or the script rule of
    /// the test that runs it).
    pub declared: Option<crate::policy::Declared>,
    /// The change source reports it modified in place (not added, deleted or
    /// retyped): it cannot have changed what a directory lists.
    pub edited: bool,
    /// Targets whose compile or link command names this file verbatim (a
    /// linker script, `-include` file, response file): dependency evidence.
    pub cmdline_targets: Vec<usize>,
    /// Targets whose custom commands read this file, each with the command
    /// in words (in `cmdline_targets` too).
    pub command_reads: Vec<(usize, String)>,
    /// The configure-time call that reads this file although CMake does
    /// not record it as an input (see [`crate::ingest::configure_reads`]).
    pub read_by_configure: Option<String>,
}

/// File names that are external resources (lockfiles, presets, package managers).
const EXTERNAL_NAMES: &[&str] = &[
    "CMakePresets.json",
    "CMakeUserPresets.json",
    "vcpkg.json",
    "vcpkg-configuration.json",
    "conanfile.txt",
    "conanfile.py",
    "conan.lock",
    ".gitmodules",
];

/// True for build-configuration file names: the second line of defence when
/// the File API gives no cmakeFiles-v1 inputs.
pub fn is_build_config_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "cmakelists.txt" || lower.ends_with(".cmake") || lower.ends_with(".cmake.in")
}

/// Roots for classification.
pub struct Roots<'a> {
    /// `--source-dir` as the user spelled it (folded).
    pub user_source: &'a str,
    /// Source root as the evidence spells it (folded).
    pub source: &'a str,
    /// Build root as the evidence spells it (folded).
    pub build: &'a str,
    /// The root of the project's files, as the evidence spells it
    /// ([`crate::ingest::file_api::Codemodel::scope_root`]): the repository
    /// holding the source root, or the source root itself.
    pub scope: &'a str,
}

/// Whether build-tree file `copy` may be a copy of source file `src`: it has
/// the same file name, or the same size and bytes. A configure-time copy
/// (`file(COPY)`, `configure_file(… COPYONLY)`, `file(COPY_FILE)`) has no
/// other trace in the evidence; either test is enough to count it, and
/// counting too many only costs precision.
pub fn may_be_copy(copy: &str, src: &str) -> bool {
    let name = |p: &str| p.rsplit('/').next().unwrap_or("").to_owned();
    if name(copy) == name(src) {
        return true;
    }
    same_bytes(copy, src)
}

/// Other files of the evidence that a change to `abs` (listed as `ids`) may
/// reach: every listed file with the same size and bytes (GCC includes a
/// byte-identical `#pragma once` twin "once" and leaves it out of the `.d`,
/// so a unit listing either may have read both), and every build-tree file
/// with the same file name (a configure-time copy such as `file(COPY)`).
/// Sorted by id.
fn twins_and_copies(
    ev: &DepEvidence,
    abs: &str,
    ids: &[FileId],
    build_root: &str,
) -> Vec<(FileId, String)> {
    let Ok(meta) = std::fs::metadata(abs) else {
        return Vec::new();
    };
    let size = meta.len();
    let secs = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let name = abs.rsplit('/').next().unwrap_or("");
    let mut content: Option<Option<Vec<u8>>> = None;
    let mut out = Vec::new();
    for (id, f) in ev.files.iter().enumerate() {
        let id = id as FileId;
        if ids.contains(&id) {
            continue; // itself
        }
        let in_build = paths::is_within(f, build_root);
        let same_name = in_build && f.rsplit('/').next() == Some(name);
        // GCC skips a `#pragma once` twin only when size, mtime (seconds)
        // and bytes all agree; a file of unknown mtime counts as agreeing.
        // A build-tree copy (configure_file, file(COPY_FILE)) may carry any
        // mtime: for those the size and bytes decide.
        let same_size = ev.sizes.get(id as usize).copied().flatten() == Some(size)
            && (in_build
                || match (ev.mtime_secs.get(id as usize).copied().flatten(), secs) {
                    (Some(a), Some(b)) => a == b,
                    _ => true,
                });
        // The cheap tests first: this loop runs over every file of the evidence.
        if (!same_name && !same_size) || ev.id_of(f) != Some(id) {
            continue; // not alike, or a file no unit lists
        }
        // GCC compares a file only with files it marked once-only: a twin
        // must hold `#pragma once` (the two are byte-identical, so both do).
        let alike = same_name || {
            let mine = content
                .get_or_insert_with(|| std::fs::read(abs).ok().filter(|b| has_pragma_once(b)));
            matches!((mine, std::fs::read(f)), (Some(a), Ok(b)) if *a == b)
        };
        if alike {
            out.push((id, f.clone()));
        }
    }
    out
}

/// Whether `bytes` hold a `#pragma once` directive (`#`, `pragma` and `once`
/// separated by blanks only). A mention inside a comment or string counts
/// too: a twin is assumed where GCC might skip one.
pub fn has_pragma_once(bytes: &[u8]) -> bool {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let mut rest = bytes;
    while let Some(at) = rest.iter().position(|&b| b == b'#') {
        let after = &rest[at + 1..];
        let after = &after[after.iter().take_while(|b| blank(b)).count()..];
        if let Some(tail) = after.strip_prefix(b"pragma") {
            let n = tail.iter().take_while(|b| blank(b)).count();
            if n > 0 && tail[n..].starts_with(b"once") {
                return true;
            }
        }
        rest = &rest[at + 1..];
    }
    false
}

/// Size first, then bytes; `false` when either cannot be read.
pub fn same_bytes(a: &str, b: &str) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(ma), Ok(mb)) if ma.is_file() && mb.is_file() && ma.len() == mb.len() => {
            matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
        }
        _ => false,
    }
}

/// Classifies each changed path, in input order, de-duplicated by canonical path.
#[allow(clippy::too_many_arguments)]
pub fn classify(
    raw: &[OsString],
    roots: &Roots<'_>,
    evidence: &DepEvidence,
    main_sources: &crate::fasthash::FastSet<FileId>,
    cmake_inputs: Option<&[String]>,
    config_globs: &[crate::ingest::file_api::ConfigGlob],
    edited: &std::collections::HashSet<String>,
    max_path_len: usize,
) -> Vec<Changed> {
    // Real (symlink-resolved) spellings of the roots, resolved once for all paths.
    let real = RealRoots {
        user_repo: paths::repo_root_above(roots.user_source),
        cwd: paths::current_dir(),
        user_source: paths::real(roots.user_source),
        source: paths::real(roots.scope),
        build: paths::real(roots.build),
    };
    let mut out: Vec<Changed> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in raw {
        // A file the VCS reports as modified (not added or deleted) cannot
        // have changed what a CONFIGURE_DEPENDS glob lists.
        let is_edited = r.to_str().is_some_and(|p| edited.contains(p));
        let globs = if is_edited { &[][..] } else { config_globs };
        let mut c = classify_one(
            r,
            roots,
            &real,
            evidence,
            main_sources,
            cmake_inputs,
            globs,
            max_path_len,
        );
        c.edited = is_edited;
        if seen.insert(c.display.clone()) {
            out.push(c);
        }
    }
    out
}

/// The roots with symlinks resolved (`None` when a root cannot be resolved).
struct RealRoots {
    /// The git work tree holding `--source-dir` (as the user spelled it),
    /// when it is a strict ancestor: relative changed paths are relative to
    /// it, as `git diff --name-only` prints them.
    user_repo: Option<String>,
    /// The working directory, for "did you mean".
    cwd: Option<String>,
    user_source: Option<String>,
    /// The scope root's (see [`Roots::scope`]).
    source: Option<String>,
    build: Option<String>,
}

fn unresolved(display: String, code: Code, evidence: String) -> Changed {
    let gap = Gap::new(code, format!("{display}: {evidence}"));
    classified(
        display,
        None,
        Class::Unresolved,
        evidence,
        (Vec::new(), Some(gap)),
    )
}

/// A changed path as classified: nothing declared or joined to it yet.
fn classified(
    display: String,
    real_display: Option<String>,
    class: Class,
    evidence: String,
    (files, gap): (Vec<FileId>, Option<Gap>),
) -> Changed {
    Changed {
        display,
        real_display,
        class,
        evidence,
        files,
        gap,
        abs: String::new(),
        declared: None,
        edited: false,
        cmdline_targets: Vec::new(),
        command_reads: Vec::new(),
        read_by_configure: None,
    }
}

#[allow(clippy::too_many_arguments)]
fn classify_one(
    raw: &OsString,
    roots: &Roots<'_>,
    real_roots: &RealRoots,
    evidence: &DepEvidence,
    main_sources: &crate::fasthash::FastSet<FileId>,
    cmake_inputs: Option<&[String]>,
    config_globs: &[crate::ingest::file_api::ConfigGlob],
    max_path_len: usize,
) -> Changed {
    let Some(p) = raw.to_str() else {
        let display = raw.to_string_lossy().into_owned();
        return unresolved(
            display,
            Code::ChangeNotUtf8,
            "path is not valid UTF-8".into(),
        );
    };
    if p.is_empty() {
        return unresolved(String::new(), Code::ChangeUnknown, "empty path".into());
    }
    if p.len() > max_path_len {
        return unresolved(
            p.to_owned(),
            Code::LimitExceeded,
            format!("path exceeds {max_path_len} bytes (--max-path-len)"),
        );
    }
    if p.contains('\0') {
        return unresolved(
            p.to_owned(),
            Code::ChangeUnknown,
            "path contains NUL".into(),
        );
    }
    // Canonical absolute form, expressed under the evidence's spelling of the source root.
    let abs = if p.starts_with('/') {
        let f = paths::fold(p);
        if let Some(rel) = paths::strip_root(&f, roots.user_source) {
            paths::join_fold(roots.source, rel)
        } else if paths::is_within(&f, roots.source) || paths::is_within(&f, roots.build) {
            f
        } else {
            // A VCS or caller may spell the tree by its real path (symlinks resolved).
            match real_roots
                .user_source
                .as_deref()
                .and_then(|r| paths::strip_root(&f, r).map(str::to_owned))
            {
                Some(rel) => paths::join_fold(roots.source, &rel),
                None => f,
            }
        }
    } else {
        let raw_p = p;
        // Relative to the repository's top when the source dir is below it.
        let p = &match &real_roots.user_repo {
            Some(repo) => {
                let f = paths::join_fold(repo, p);
                if !paths::is_within(&f, repo) {
                    return unresolved(
                        p.to_owned(),
                        Code::PathEscapesRoot,
                        format!("resolves to {f}, outside the repository {repo} (relative paths are relative to it)"),
                    );
                }
                paths::climb_to(roots.user_source, &f).unwrap_or(f)
            }
            None => p.to_owned(),
        };
        let f = paths::join_fold(roots.user_source, p);
        if !paths::is_within(&f, roots.user_source) {
            // Out of the source root: still a project file when it lies in
            // the repository holding it (`../web/app.js`).
            let inside = paths::join_fold(roots.source, p);
            if roots.scope == roots.source || !paths::is_within(&inside, roots.scope) {
                let hint = did_you_mean(raw_p, &f, roots, real_roots)
                    .map(|h| format!("; {h}"))
                    .unwrap_or_default();
                return unresolved(
                    p.to_owned(),
                    Code::PathEscapesRoot,
                    format!("resolves to {f}, outside the source root and its repository{hint}"),
                );
            }
            inside
        } else {
            match paths::strip_root(&f, roots.user_source) {
                Some(rel) => paths::join_fold(roots.source, rel),
                None => f,
            }
        }
    };
    let mut c = classify_abs(
        &abs,
        roots,
        real_roots,
        evidence,
        main_sources,
        cmake_inputs,
        config_globs,
    );
    if !p.starts_with('/')
        && c.gap
            .as_ref()
            .is_some_and(|g| g.code == Code::ChangeDeleted)
    {
        if let Some(hint) = did_you_mean(p, &abs, roots, real_roots) {
            c.evidence = format!("{}; {hint}", c.evidence);
            if let Some(g) = &mut c.gap {
                g.detail = format!("{}; {hint}", g.detail);
            }
        }
    }
    c.abs = abs;
    c
}

/// For relative changed path `p` that does not exist where it resolved
/// (`abs`): the project file it names relative to another root (the source
/// dir when relative paths are the repository's, the repository's top
/// otherwise, the working directory), if one exists.
fn did_you_mean(p: &str, abs: &str, roots: &Roots<'_>, real_roots: &RealRoots) -> Option<String> {
    let base = real_roots.user_repo.as_deref().unwrap_or(roots.user_source);
    let others = [Some(roots.user_source), real_roots.cwd.as_deref()];
    for other in others.into_iter().flatten() {
        let cand = paths::join_fold(other, p);
        if cand == abs || std::fs::symlink_metadata(&cand).is_err() {
            continue;
        }
        let Some(from_base) = paths::strip_root(&cand, base) else {
            continue;
        };
        if from_base.is_empty() {
            continue;
        }
        return Some(format!(
            "did you mean {from_base}? {p} names that file relative to {other}, but relative paths are relative to {base}{}",
            if real_roots.user_repo.is_some() {
                " (the repository's top, as git prints them)"
            } else {
                " (--source-dir)"
            }
        ));
    }
    None
}

fn classify_abs(
    abs: &str,
    roots: &Roots<'_>,
    real_roots: &RealRoots,
    evidence: &DepEvidence,
    main_sources: &crate::fasthash::FastSet<FileId>,
    cmake_inputs: Option<&[String]>,
    config_globs: &[crate::ingest::file_api::ConfigGlob],
) -> Changed {
    let abs = abs.to_owned();
    let display = match paths::strip_root(&abs, roots.source) {
        Some("") => ".".to_owned(),
        Some(rel) => rel.to_owned(),
        None if paths::is_within(&abs, roots.scope) && !paths::is_within(&abs, roots.build) => {
            paths::climb_to(roots.source, &abs).unwrap_or_else(|| abs.clone())
        }
        None => abs.clone(),
    };
    let inside = paths::is_within(&abs, roots.scope) || paths::is_within(&abs, roots.build);
    if !inside {
        return unresolved(
            display,
            Code::PathEscapesRoot,
            "outside the source and build roots and the repository holding them".into(),
        );
    }
    // Through a symlink out of the tree?
    let exists = std::fs::symlink_metadata(&abs).is_ok();
    let mut real_abs = None;
    if exists {
        if let Some(real) = paths::real(&abs) {
            let ok = real_roots
                .source
                .as_deref()
                .is_some_and(|r| paths::is_within(&real, r))
                || real_roots
                    .build
                    .as_deref()
                    .is_some_and(|r| paths::is_within(&real, r));
            if !ok {
                return unresolved(
                    display,
                    Code::PathEscapesRoot,
                    format!("resolves through a symlink to {real}"),
                );
            }
            if real != abs {
                real_abs = Some(real);
            }
        }
    }
    let real_display = real_abs.as_ref().map(|r| {
        if paths::is_within(r, roots.source) || !paths::is_within(r, roots.scope) {
            paths::relative_to(r, roots.source)
        } else {
            paths::climb_to(roots.source, r).unwrap_or_else(|| r.clone())
        }
    });
    let name = abs.rsplit('/').next().unwrap_or("");
    if EXTERNAL_NAMES.contains(&name) {
        let evidence = format!("{name} is a lockfile/preset/package-manager file");
        let gap = Gap::new(
            Code::ChangeExternalResource,
            format!("{display}: {evidence}"),
        );
        let decided = (Vec::new(), Some(gap));
        return classified(display, real_display, Class::External, evidence, decided);
    }
    let in_inputs = cmake_inputs.is_some_and(|inputs| inputs.binary_search(&abs).is_ok());
    let glob = config_globs.iter().find(|g| g.matches(&abs));
    // By name only when the File API lists no CMake inputs: where it does,
    // a `.cmake` or `CMakeLists.txt` that the last configure did not read
    // (a test-time script a `cmake -P` test runs or includes, an unused
    // subproject) is no CMake edit, and is decided as any other file.
    let by_name = cmake_inputs.is_none() && is_build_config_name(name);
    if in_inputs || glob.is_some() || by_name {
        let evidence = if in_inputs {
            "listed as a CMake input by the File API cmakeFiles-v1 reply".to_owned()
        } else if let Some(g) = glob {
            format!(
                "the CONFIGURE_DEPENDS glob {:?} lists it or would list it if added (cmakeFiles-v1 globsDependent): adding or removing it re-runs configure",
                g.expression
            )
        } else {
            "named like a CMake build file (CMakeLists.txt / *.cmake)".to_owned()
        };
        let gap = Gap::new(Code::ChangeBuildConfig, format!("{display}: {evidence}"));
        let decided = (Vec::new(), Some(gap));
        return classified(display, real_display, Class::BuildConfig, evidence, decided);
    }
    if !exists {
        return unresolved(
            display,
            Code::ChangeDeleted,
            "does not exist (deleted or renamed away); current evidence cannot map it".into(),
        );
    }
    let mut ids = evidence.ids_of(&abs, real_abs.as_deref());
    let alike = if ids.is_empty() {
        Vec::new()
    } else {
        twins_and_copies(evidence, &abs, &ids, roots.build)
    };
    if ids.is_empty() {
        return unresolved(
            display,
            Code::ChangeUnknown,
            "not in any dependency file; it may feed code generation, configuration or a test at run time".into(),
        );
    }
    let (class, evidence) = if ids.iter().any(|id| main_sources.contains(id)) {
        (Class::Source, "main source of a translation unit")
    } else {
        (Class::Header, "prerequisite in dependency files")
    };
    let mut evidence = evidence.to_owned();
    if !alike.is_empty() {
        let names: Vec<&str> = alike.iter().map(|(_, p)| p.as_str()).collect();
        evidence.push_str(&format!(
            "; also reaches every unit listing {} (same bytes, or a build-tree file of the same name: a #pragma once twin GCC may have left out, or a configure-time copy)",
            names.join(", ")
        ));
        ids.extend(alike.iter().map(|(id, _)| *id));
        ids.sort_unstable();
        ids.dedup();
    }
    classified(display, real_display, class, evidence, (ids, None))
}

/// [`classify`] against the codemodel and the dependency evidence: the
/// roots are `user_source` (`--source-dir` as given) and the codemodel's.
pub fn classify_against(
    raw: &[OsString],
    user_source: &str,
    model: &crate::ingest::file_api::Codemodel,
    deps: &DepEvidence,
    edited: &std::collections::HashSet<String>,
    max_path_len: usize,
) -> Vec<Changed> {
    let main_sources: crate::fasthash::FastSet<FileId> = deps
        .tus
        .iter()
        .filter_map(|tu| deps.source_id(tu))
        .collect();
    let roots = Roots {
        user_source,
        source: &model.source_root,
        build: &model.build_root,
        scope: model.scope_root(),
    };
    classify(
        raw,
        &roots,
        deps,
        &main_sources,
        model.cmake_inputs.as_deref(),
        &model.config_globs,
        edited,
        max_path_len,
    )
}

/// Changed files below a directory a target's compile flags hand the
/// assembler (`-Wa,-I<dir>`): inline assembly may `.incbin` or `.include`
/// them by a name no depfile lists, so they are evidence of that target.
pub fn assembler_search_dirs(changed: &mut [Changed], model: &crate::ingest::file_api::Codemodel) {
    for (t, target) in model.targets.iter().enumerate() {
        for dir in &target.asm_search_dirs {
            for c in changed.iter_mut().filter(|c| paths::is_within(&c.abs, dir)) {
                if c.class == Class::BuildConfig || c.class == Class::External {
                    continue;
                }
                let how = format!(
                    "below {}, which target {}'s assembler searches (-Wa,-I)",
                    paths::relative_to(dir, &model.source_root),
                    target.name
                );
                if c.gap
                    .as_ref()
                    .is_some_and(|g| g.code == Code::ChangeUnknown)
                {
                    c.gap = None;
                    c.class = Class::Header;
                    c.evidence = how.clone();
                } else {
                    c.evidence = format!("{}; {how}", c.evidence);
                }
                if !c.cmdline_targets.contains(&t) {
                    c.cmdline_targets.push(t);
                    c.cmdline_targets.sort_unstable();
                }
                c.command_reads.push((
                    t,
                    format!("assembler search directory of target {}", target.name),
                ));
            }
        }
    }
}

/// Changed project files configure reads without recording them (see
/// [`crate::ingest::configure_reads`]): a change to the build
/// configuration, whatever else they are (their dependency evidence is
/// kept, for compare mode, which clears the gap).
pub fn configure_reads(
    changed: &mut [Changed],
    reads: &crate::ingest::configure_reads::ConfigureReads,
    model: &crate::ingest::file_api::Codemodel,
) {
    if reads.is_empty() {
        return;
    }
    for c in changed.iter_mut() {
        if c.abs.is_empty() || c.class == Class::BuildConfig || !model.is_project_file(&c.abs) {
            continue;
        }
        let Some(site) = reads.site_reading(&c.abs) else {
            continue;
        };
        if c.class == Class::Unresolved {
            c.class = Class::BuildConfig;
            c.evidence = site.to_owned();
        } else {
            c.evidence = format!("{}; {site}", c.evidence);
        }
        c.gap = Some(Gap::new(
            Code::ChangeBuildConfig,
            format!("{}: {site}", c.display),
        ));
        c.read_by_configure = Some(site.to_owned());
    }
}

/// Changed files a custom command reads (see
/// [`crate::ingest::custom_commands`]): the targets the commands belong to
/// are affected, as a target whose command line names a file is; a file no
/// other evidence knows is dependency evidence through them.
pub fn custom_command_inputs(
    changed: &mut [Changed],
    custom: &crate::ingest::custom_commands::Custom,
    model: &crate::ingest::file_api::Codemodel,
) {
    if custom.commands.is_empty() {
        return;
    }
    for c in changed.iter_mut().filter(|c| !c.abs.is_empty()) {
        let readers = custom.readers_of(&c.abs, model);
        if readers.is_empty() {
            continue;
        }
        let words: Vec<String> = (readers.iter())
            .map(|(t, how)| format!("target {}: {how}", model.targets[*t].name))
            .collect();
        let words = words.join("; ");
        if c.gap
            .as_ref()
            .is_some_and(|g| g.code == Code::ChangeUnknown)
        {
            c.gap = None;
            c.class = Class::Header;
            c.evidence = words;
        } else {
            c.evidence.push_str("; ");
            c.evidence.push_str(&words);
        }
        c.cmdline_targets.extend(readers.iter().map(|(t, _)| *t));
        c.cmdline_targets.sort_unstable();
        c.cmdline_targets.dedup();
        c.command_reads = readers;
    }
}

/// The changed paths as given, each once and not classified (`why`, with a
/// gap of `code`): what a run that stopped before the evidence was read shows.
pub fn unclassified(raw: &[String], why: &str, code: Code) -> Vec<Changed> {
    let mut seen = std::collections::HashSet::new();
    raw.iter()
        .filter(|raw| seen.insert(raw.as_str()))
        .map(|raw| Changed {
            display: raw.clone(),
            real_display: None,
            class: Class::Unresolved,
            evidence: why.into(),
            files: Vec::new(),
            gap: Some(Gap::new(code, format!("{raw}: {why}"))),
            abs: String::new(),
            declared: None,
            edited: false,
            cmdline_targets: Vec::new(),
            command_reads: Vec::new(),
            read_by_configure: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::has_pragma_once;

    #[test]
    fn pragma_once_is_found_with_any_blanks() {
        assert!(has_pragma_once(b"// x\n#pragma once\nint a;\n"));
        assert!(has_pragma_once(b"#  pragma\tonce\n"));
        assert!(!has_pragma_once(b"#pragma\n once\n"));
        assert!(!has_pragma_once(b"#ifndef X_H\n#define X_H\n#endif\n"));
        assert!(!has_pragma_once(b"int main() { return 0; }\n"));
    }
}
