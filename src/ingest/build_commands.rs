//! The generator's own record of how each target is compiled and linked,
//! for snapshots (compare mode).
//!
//! The File API describes a target (its sources, compile groups, link
//! fragments, dependencies, artifacts), but not every flag the generator
//! adds when it writes the commands: a shared library's soname
//! (`-Wl,-soname,libfoo.so.2` from `SOVERSION`), its install name, rpaths,
//! a compiler launcher. A `SOVERSION` bump changes none of the File API's
//! fields and relinks every program against a new soname. The generator's
//! files are the exact record: `flags.make` and `link.txt` in the target's
//! object directory (Makefiles), the evaluated command of every edge that
//! builds one of its objects or artifacts (Ninja: `build.ninja`, or
//! `build-<Config>.ninja`), and its custom commands (`build.make`; the
//! Ninja edges writing its generated sources or its stamp): a custom
//! command whose outputs a unit includes is evidence of that unit's target
//! (`custom_commands.rs`), so a CMake edit to the command must change the
//! fingerprint of the target it belongs to. They are fingerprinted *beside* the File API
//! fields, not instead of them: the File API also says what no command
//! line shows (its dependencies on other targets, its sources as CMake
//! lists them), and a snapshot must change when either does.
//!
//! Paths under the roots are written as `<SRC>` and `<BUILD>`, so the same
//! commands in another checkout or build directory fingerprint the same.

use super::file_api::Codemodel;
use super::{ninja_manifest, Reader};
use crate::fasthash::FastMap;
use crate::fingerprint;
use crate::paths;
use crate::reason::{Code, Gap};

/// Per target (indexed as `model.targets`): the fingerprint of the commands
/// the generator wrote for it. A file that exists but cannot be read, or a
/// manifest that cannot be evaluated, is a gap: the snapshot would be
/// incomplete.
pub fn fingerprints(reader: &Reader, model: &Codemodel) -> Result<Vec<String>, Gap> {
    let texts = if model.is_ninja() {
        ninja_texts(reader, model)?
    } else {
        makefiles_texts(reader, model)?
    };
    let (src, build) = (model.source_root.as_str(), model.build_root.as_str());
    Ok(texts
        .iter()
        .map(|t| fingerprint::short_hash(fingerprint::relativize(t, src, build).as_bytes()))
        .collect())
}

/// `flags.make` and `link.txt` of each target's object directory, each
/// marked absent when the generator wrote none (a target without sources,
/// an interface library).
fn makefiles_texts(reader: &Reader, model: &Codemodel) -> Result<Vec<String>, Gap> {
    let mut out = Vec::with_capacity(model.targets.len());
    for t in &model.targets {
        let dir = t.object_dir();
        let mut text = String::new();
        // `build.make` holds its custom commands (and the rules that
        // compile and link, which the other two say in full).
        for name in ["flags.make", "link.txt", "build.make"] {
            let path = format!("{dir}/{name}");
            text.push_str(name);
            match std::fs::metadata(&path) {
                Err(_) => text.push_str(" absent\n"),
                Ok(_) => {
                    let bytes = reader.read(&path).map_err(|e| {
                        Gap::new(
                            Code::SnapshotInvalid,
                            format!("{path} cannot be read for the snapshot: {e}"),
                        )
                    })?;
                    text.push('\n');
                    text.push_str(&String::from_utf8_lossy(&bytes));
                    text.push('\n');
                }
            }
        }
        out.push(text);
    }
    Ok(out)
}

/// The evaluated commands of the edges that build each target's objects
/// (outputs below its object directory) and artifacts, sorted by output.
fn ninja_texts(reader: &Reader, model: &Codemodel) -> Result<Vec<String>, Gap> {
    let build = model.build_root.as_str();
    let rel = |p: &str| paths::relative_to(p, build).to_owned();
    // Artifacts, and object directories (`DIR/CMakeFiles/NAME.dir`), by path
    // relative to the build root.
    let mut owner_of: FastMap<String, usize> = FastMap::default();
    for (i, t) in model.targets.iter().enumerate() {
        for a in &t.artifacts {
            owner_of.insert(rel(a), i);
        }
        owner_of.insert(rel(&t.object_dir()), i);
        // Its custom commands: the outputs the codemodel lists as its
        // generated sources, and a utility target's own stamp.
        for g in &t.generated {
            owner_of.entry(rel(g)).or_insert(i);
        }
        if let Some(stamp) = t.object_dir().strip_suffix(".dir") {
            owner_of.entry(rel(stamp)).or_insert(i);
        }
    }
    let file = if model.multi_config {
        format!("build-{}.ninja", model.config)
    } else {
        "build.ninja".to_owned()
    };
    let mut per_target: Vec<Vec<(String, String)>> = vec![Vec::new(); model.targets.len()];
    ninja_manifest::for_each_command(reader, build, &file, None, |output, command| {
        let output = output.strip_prefix("./").unwrap_or(output);
        let owner = owner_of
            .get(output)
            .or_else(|| owner_of.get(object_dir_of(output)?))
            .copied();
        if let Some(i) = owner {
            per_target[i].push((output.to_owned(), command.to_owned()));
        }
    })
    .map_err(|e| {
        Gap::new(
            Code::SnapshotInvalid,
            format!("{build}/{file} cannot be evaluated for the snapshot: {e}"),
        )
    })?;
    Ok(per_target
        .into_iter()
        .map(|mut edges| {
            edges.sort();
            edges
                .iter()
                .map(|(o, c)| format!("build {o}\n{c}\n"))
                .collect()
        })
        .collect())
}

/// The object directory an output lies below (`a/CMakeFiles/t.dir` for
/// `a/CMakeFiles/t.dir/x.cpp.o`), if it lies below one.
fn object_dir_of(output: &str) -> Option<&str> {
    let at = output
        .match_indices("CMakeFiles/")
        .map(|(i, _)| i)
        .find(|&i| i == 0 || output.as_bytes()[i - 1] == b'/')?;
    let rest = &output[at + "CMakeFiles/".len()..];
    let end = rest.find(".dir/")? + ".dir".len();
    Some(&output[..at + "CMakeFiles/".len() + end])
}
