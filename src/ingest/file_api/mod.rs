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

use std::collections::HashSet;

use super::Reader;
use crate::fasthash::{FastMap, FastSet};
use crate::reason::{Code, Gap};
use crate::{fingerprint, paths};
use convert::*;
use model::outside_includes;
use raw::*;
use reply::*;

mod convert;
mod glob;
mod model;
mod raw;
mod reply;

pub use glob::ConfigGlob;
pub use model::{
    Codemodel, CompiledSource, Fingerprints, NoOwner, Target, TargetKind, ToolchainPrint,
};

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
    let opened = open(reader, req, gaps)?;
    load_opened(reader, req, opened, gaps)
}

/// The reply's index and codemodel, read and audited, with the configuration
/// chosen: what the build's manifest is found by, before any target is read.
pub struct Opened {
    reply_dir: String,
    index_mtime: std::time::SystemTime,
    files_read: Vec<String>,
    index: RawIndex,
    cm_file: String,
    cm: RawCodemodel,
    config_at: usize,
    source_root: String,
    build_root: String,
    link_from_top: bool,
}

impl Opened {
    /// The codemodel's build root, folded.
    pub fn build_root(&self) -> &str {
        &self.build_root
    }

    /// The chosen configuration's name.
    pub fn config(&self) -> &str {
        &self.cm.configurations[self.config_at].name
    }

    /// A Ninja generator (`build.ninja` or `build-<Config>.ninja` is the manifest).
    pub fn is_ninja(&self) -> bool {
        self.link_from_top
    }

    /// A multi-config generator.
    pub fn multi_config(&self) -> bool {
        self.index.cmake.generator.multi_config == Some(true)
    }
}

/// Reads and audits the index and the codemodel of `req.build_dir` and
/// chooses the configuration (no target object is read yet).
pub fn open(reader: &Reader, req: &Request<'_>, gaps: &mut Vec<Gap>) -> Result<Opened, Gap> {
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

    let config_at = match (req.config, cm.configurations.len()) {
        (_, 0) => {
            return Err(Gap::new(
                Code::FileApiMalformed,
                format!("{cm_file}: no configurations"),
            ))
        }
        (None, 1) => 0,
        (None, n) => {
            let names: Vec<_> = cm.configurations.iter().map(|c| c.name.as_str()).collect();
            return Err(Gap::new(
                Code::ConfigAmbiguous,
                format!("{n} configurations {names:?}; pass --config"),
            ));
        }
        (Some(want), _) => {
            let hits: Vec<_> = (0..cm.configurations.len())
                .filter(|&i| cm.configurations[i].name == want)
                .collect();
            match hits.len() {
                1 => hits[0],
                0 => {
                    return Err(Gap::new(
                        Code::ConfigNotFound,
                        format!(
                            "--config {want:?} is not in the codemodel, which has {}{}",
                            cm.configurations
                                .iter()
                                .map(|c| format!("{:?}", c.name))
                                .collect::<Vec<_>>()
                                .join(", "),
                            crate::paths::did_you_mean(
                                want,
                                cm.configurations.iter().map(|c| c.name.as_str())
                            )
                            .map(|m| format!(" (did you mean {m:?}?)"))
                            .unwrap_or_default()
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
    let config = &cm.configurations[config_at];
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

    Ok(Opened {
        reply_dir,
        index_mtime,
        files_read: ctx.files_read,
        index,
        cm_file,
        cm,
        config_at,
        source_root,
        build_root,
        link_from_top,
    })
}

/// Reads, parses and audits every target object of the configuration
/// [`open`] chose, then the cmakeFiles, toolchains and cache replies.
pub fn load_opened(
    reader: &Reader,
    req: &Request<'_>,
    opened: Opened,
    gaps: &mut Vec<Gap>,
) -> Result<Codemodel, Gap> {
    let Opened {
        reply_dir,
        index_mtime,
        files_read,
        index,
        cm_file,
        cm,
        config_at,
        source_root,
        build_root,
        link_from_top,
    } = opened;
    let mut ctx = Ctx {
        reader,
        reply_dir: reply_dir.clone(),
        index_mtime,
        files_read,
    };
    let config = &cm.configurations[config_at];
    // Read every target object (in parallel: they are independent files).
    let refs = sorted_refs(config)?;
    let mut id_to_index: FastMap<&str, usize> = FastMap::default();
    for (i, r) in refs.iter().enumerate() {
        id_to_index.insert(r.id.as_str(), i);
    }
    let abstract_ids = abstract_ids(&cm, config, &cm_file, gaps);

    // Target and abstract target names by id: a fingerprint names dependencies.
    let names_by_id: FastMap<&str, &str> = config
        .targets
        .iter()
        .chain(config.abstract_targets.iter().flatten())
        .map(|t| (t.id.as_str(), t.name.as_str()))
        .collect();
    // Read, parse and convert every target object in parallel (they are independent files).
    let roots = (source_root.as_str(), build_root.as_str());
    let repo_root = paths::repo_root_above(&source_root);
    let scope_root = repo_root.as_deref().unwrap_or(&source_root);
    let each = EachTarget {
        reader,
        reply_dir: &reply_dir,
        index_mtime,
        fingerprints: req.fingerprints,
        roots: (roots.0, roots.1, scope_root),
        ids: (&id_to_index, &abstract_ids),
        names_by_id: &names_by_id,
        link_from_top,
    };
    let converted: Vec<Result<Converted, Gap>> =
        super::par_map_n(req.threads, &refs, |r| each.read(r));

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
                targets.push(placeholder(refs[i]));
                target_fingerprints.push(None);
            }
        }
    }

    let (mut cmake_inputs, config_globs) = cmake_files(&mut ctx, &index, &source_root, gaps);
    let (toolchain_fingerprint, implicit_includes) = toolchains(
        &mut ctx,
        &index,
        (req.fingerprints, roots),
        &mut cmake_inputs,
        gaps,
    );
    // cache-v2 (optional): read only when a configure read needs a variable.
    let cache_reply = match find_object(&index, "cache", 2) {
        Ok(Some(f)) => Some(format!("{reply_dir}/{f}")),
        _ => None,
    };
    let object_dirs = targets
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.dir_build.is_empty())
        .map(|(i, t)| (t.object_dir(), i))
        .collect();
    let outside_includes = Some(outside_includes(&targets, scope_root, &build_root));
    Ok(Codemodel {
        outside_includes,
        repo_root,
        object_dirs,
        source_root,
        build_root,
        config: config.name.clone(),
        reply_time: Some(index_mtime),
        generator: index.cmake.generator.name.clone(),
        cmake_version: index
            .cmake
            .version
            .as_ref()
            .and_then(|v| Some((v.major?, v.minor?))),
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
        cache_reply,
        config_globs,
        files_read: ctx.files_read,
        implicit_includes,
        fingerprints: req.fingerprints.then_some(Fingerprints {
            targets: target_fingerprints,
            toolchain: toolchain_fingerprint,
        }),
    })
}

/// The configuration's target references by name and id; a name or id
/// listed twice is malformed.
fn sorted_refs(config: &RawConfiguration) -> Result<Vec<&RawTargetRef>, Gap> {
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
    Ok(refs)
}

/// The ids of the configuration's abstract targets. They exist only from
/// codemodel 2.9; in an older reply they are forged evidence (a gap).
fn abstract_ids<'c>(
    cm: &RawCodemodel,
    config: &'c RawConfiguration,
    cm_file: &str,
    gaps: &mut Vec<Gap>,
) -> FastSet<&'c str> {
    let minor = cm.version.minor.unwrap_or(0);
    if config.abstract_targets.is_some() && minor < 9 {
        gaps.push(Gap::new(
            Code::FileApiMalformed,
            format!(
                "{cm_file}: abstractTargets in a codemodel 2.{minor} reply (introduced in 2.9)"
            ),
        ));
    }
    if minor >= 9 {
        config
            .abstract_targets
            .iter()
            .flatten()
            .map(|t| t.id.as_str())
            .collect()
    } else {
        FastSet::default()
    }
}

/// What reading one target object needs (shared by the threads that read them).
struct EachTarget<'a> {
    reader: &'a Reader,
    reply_dir: &'a str,
    index_mtime: std::time::SystemTime,
    fingerprints: bool,
    /// Source, build and scope roots.
    roots: (&'a str, &'a str, &'a str),
    /// Target index by id, and the abstract targets' ids.
    ids: (&'a FastMap<&'a str, usize>, &'a FastSet<&'a str>),
    /// Target and abstract target names by id: a fingerprint names dependencies.
    names_by_id: &'a FastMap<&'a str, &'a str>,
    link_from_top: bool,
}

impl EachTarget<'_> {
    /// Reads, parses and converts the target object `r` names.
    fn read(&self, r: &RawTargetRef) -> Result<Converted, Gap> {
        thread_local!(static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) });
        let mut local = Ctx {
            reader: self.reader,
            reply_dir: self.reply_dir.to_owned(),
            index_mtime: self.index_mtime,
            files_read: Vec::new(),
        };
        BUF.with(|b| {
            let mut buf = b.borrow_mut();
            let (path, n) = local.read_into(&r.json_file, Code::TargetObjectMissing, &mut buf)?;
            let text = json_text(&buf[..n], &path)?;
            let value = crate::ingest::json_value(text, self.fingerprints);
            let t: RawTarget<'_> = crate::ingest::parse_json(text, value.as_ref())
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
            let mut c = convert_target(t, &r.json_file, self.roots, self.ids, self.link_from_top)?;
            c.files_read = local.files_read;
            c.fingerprint = value.map(|v| {
                let name_of = |id: &str| self.names_by_id.get(id).map(|n| (*n).to_owned());
                fingerprint::target(v, name_of, self.roots.0, self.roots.1)
            });
            Ok(c)
        })
    }
}

/// cmakeFiles-v1: the CMake inputs of this configure (each project input
/// checked to be no newer than the reply) and the globs it depends on.
fn cmake_files(
    ctx: &mut Ctx<'_>,
    index: &RawIndex,
    source_root: &str,
    gaps: &mut Vec<Gap>,
) -> (Option<Vec<String>>, Vec<ConfigGlob>) {
    let index_mtime = ctx.index_mtime;
    let mut config_globs = Vec::new();
    let cmake_inputs = match find_object(index, "cmakeFiles", 1) {
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
                    .map(|g| g.convert(source_root))
                    .collect();
                let mut inputs = Vec::new();
                for inp in cf.inputs {
                    let abs = paths::join_fold(source_root, &inp.path);
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
    (cmake_inputs, config_globs)
}

/// toolchains-v1 (optional): a changed compiler is a build-configuration
/// change. Returns the reply's fingerprint (`Err`: unreadable) and the
/// compilers' implicit include directories; the compilers join `cmake_inputs`.
fn toolchains(
    ctx: &mut Ctx<'_>,
    index: &RawIndex,
    (fingerprints, roots): (bool, (&str, &str)),
    cmake_inputs: &mut Option<Vec<String>>,
    gaps: &mut Vec<Gap>,
) -> (ToolchainPrint, Vec<String>) {
    let mut toolchain_fingerprint = ToolchainPrint::Absent;
    let mut implicit_includes: Vec<String> = Vec::new();
    match find_object(index, "toolchains", 1) {
        Err(g) => gaps.push(g),
        Ok(None) => {}
        Ok(Some(f)) => match ctx.read_json_kept::<RawToolchains>(&f, fingerprints) {
            Err(g) => {
                toolchain_fingerprint = ToolchainPrint::Unusable;
                gaps.push(g)
            }
            Ok((tc, value)) => {
                if let Some(v) = value {
                    toolchain_fingerprint =
                        ToolchainPrint::Of(fingerprint::of(v, roots.0, roots.1));
                }
                if tc.kind != "toolchains" || tc.version.major != 1 {
                    gaps.push(Gap::new(
                        Code::FileApiUnsupportedVersion,
                        format!("{f}: not toolchains major 1"),
                    ));
                } else {
                    implicit_includes = implicit_include_dirs(&tc);
                    if let Some(inputs) = cmake_inputs {
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
    (toolchain_fingerprint, implicit_includes)
}

#[cfg(test)]
mod tests {
    use super::glob::glob_component;
    use super::*;
    use std::borrow::Cow;

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
