//! Per-test build-description fingerprints (TIA-CHG-003/005/010).
//!
//! A snapshot records, for every registered test, a fingerprint of what the
//! static evidence says determines how it is built and run:
//! * its catalogue entry (command and properties, backtraces left out);
//! * for every target in its closure, the codemodel's description of it: the
//!   whole target object (type, artifacts, sources and compile groups with
//!   flags, defines, include directories, standard, precompiled headers, link
//!   fragments, dependencies by name), backtraces and ids left out;
//! * the content digest of every build-tree prerequisite its closure's units
//!   include (configured headers) and of every configure-time file it names;
//! * the toolchains reply (compiler ids, versions, paths).
//!
//! Paths under the source and build roots are written as `<SRC>/…` and
//! `<BUILD>/…`, so a snapshot from another checkout or build directory of the
//! same commit compares equal. The document is canonical (sorted keys and
//! lists) and byte-identical for the same build.
//!
//! With `build_config = "compare"` and `--base-snapshot FILE`, a selection
//! run whose only obstacle is changed CMake scripts compares each test's
//! fingerprint with the base's: a changed or new one selects the test
//! (`BUILD_DESCRIPTION_CHANGED`, naming what changed); an equal one is decided
//! by the other evidence.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::fingerprint;
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::{Codemodel, ToolchainPrint};
use crate::paths;
use crate::reach::TestReach;
use crate::reason::{Code, Gap};

/// Schema id of snapshots.
pub const SNAPSHOT_SCHEMA: &str = "diff2test.snapshot.v1";

/// Computes the snapshot of the current build. `commands` are the targets' generator-command
/// fingerprints ([`crate::ingest::build_commands`]), indexed as `model.targets`.
#[allow(clippy::too_many_arguments)]
pub fn compute(
    model: &Codemodel,
    graph: &Graph<'_>,
    deps: &DepEvidence,
    catalogue: &Catalogue,
    mappings: &[TestMapping],
    reaches: &[TestReach],
    commands: &[String],
    source_commit: Option<String>,
) -> Result<Value, Gap> {
    let (src, build) = (model.source_root.as_str(), model.build_root.as_str());
    // Fingerprinted by the readers from the bytes the analysis parsed.
    let invalid = |why: &str| Gap::new(Code::SnapshotInvalid, why.to_owned());
    let fp = model
        .fingerprints
        .as_ref()
        .ok_or_else(|| invalid("the codemodel was loaded without fingerprints"))?;
    let mut targets: BTreeMap<String, String> = BTreeMap::new();
    for (i, (t, f)) in model.targets.iter().zip(&fp.targets).enumerate() {
        let Some(f) = f else {
            return Err(invalid(&format!(
                "target {:?} has no usable object file",
                t.name
            )));
        };
        // The File API's description and the generator's commands
        // (`ingest::build_commands`): a soname lives only in the latter.
        let cmds = commands.get(i).map(String::as_str).unwrap_or("");
        targets.insert(
            t.name.clone(),
            fingerprint::short_hash(format!("{f} {cmds}").as_bytes()),
        );
    }
    let toolchain = match &fp.toolchain {
        ToolchainPrint::Of(f) => f.clone(),
        ToolchainPrint::Absent => "none".to_owned(),
        ToolchainPrint::Unusable => return Err(invalid("the toolchains reply could not be read")),
    };
    // Catalogue entries, canonical.
    let cat = catalogue
        .json
        .as_ref()
        .ok_or_else(|| invalid("the catalogue was parsed without its document"))?;
    let mut entries: BTreeMap<String, String> = BTreeMap::new();
    for t in cat["tests"].as_array().into_iter().flatten() {
        // Keyed by the name as registered: the one each test is looked up by.
        // (Keyed by its canonical form, a name holding a root found no entry,
        // and a changed command of that test went unnoticed.)
        if let Some(name) = t["name"].as_str() {
            entries.insert(name.to_owned(), fingerprint::of(t.clone(), src, build));
        }
    }
    // Build-tree files a closure includes, and configure-time files tests name.
    let mut units_of: Vec<Vec<usize>> = vec![Vec::new(); model.targets.len()];
    for (i, tu) in deps.tus.iter().enumerate() {
        units_of[tu.target].push(i);
    }
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut tests = serde_json::Map::new();
    for (i, test) in catalogue.tests.iter().enumerate() {
        // Never an empty entry: that would hide a change to the test's command.
        let entry = entries.get(&test.name).cloned().ok_or_else(|| {
            invalid(&format!(
                "test {:?} has no catalogue entry to fingerprint",
                test.name
            ))
        })?;
        let TestMapping::Mapped { direct } = &mappings[i] else {
            // Unmapped: what it depends on is unknown, so it never compares equal.
            tests.insert(
                test.name.clone(),
                json!({"fingerprint": "opaque", "catalogue": entry, "targets": [], "files": []}),
            );
            continue;
        };
        let closure = graph.closure(direct);
        let mut names: Vec<&str> = closure
            .iter()
            .map(|&t| model.targets[t].name.as_str())
            .collect();
        names.sort_unstable();
        let mut fs: BTreeSet<String> = BTreeSet::new();
        for &t in &closure {
            // Build-tree files its flags name (a version script configure wrote).
            for f in &model.targets[t].cmdline_build_files {
                if std::fs::metadata(f).is_ok_and(|m| m.is_file()) {
                    fs.insert(digest_of(&mut files, f, src, build)?);
                }
            }
            for &u in &units_of[t] {
                for &p in &deps.tus[u].prereqs {
                    let f = &deps.files[p as usize];
                    if paths::is_within(f, build) {
                        fs.insert(digest_of(&mut files, f, src, build)?);
                    }
                }
            }
        }
        for f in reaches[i].configured.iter().chain(&reaches[i].copies) {
            fs.insert(digest_of(&mut files, f, src, build)?);
        }
        let mut all = format!("catalogue {entry}\ntoolchain {toolchain}\n");
        for n in &names {
            all.push_str(&format!(
                "target {n} {}\n",
                targets.get(*n).map(String::as_str).unwrap_or("")
            ));
        }
        for f in &fs {
            all.push_str(&format!(
                "file {f} {}\n",
                files.get(f).map(String::as_str).unwrap_or("")
            ));
        }
        tests.insert(
            test.name.clone(),
            json!({"fingerprint": fingerprint::short_hash(all.as_bytes()), "catalogue": entry, "targets": names, "files": fs}),
        );
    }
    let layout = paths::strip_root(build, src).map(str::to_owned);
    Ok(json!({
        "schema": SNAPSHOT_SCHEMA,
        "tool": {"name": "diff2test", "version": env!("CARGO_PKG_VERSION")},
        "source_commit": source_commit,
        "generator": model.generator,
        "config": model.config,
        "layout": {"build_inside_source": layout},
        "toolchain": toolchain,
        "targets": targets,
        "files": files,
        "tests": tests,
    }))
}

/// The key of build-tree file `p` in the snapshot's `files`, its digest
/// recorded there on first use.
fn digest_of(
    files: &mut BTreeMap<String, String>,
    p: &str,
    src: &str,
    build: &str,
) -> Result<String, Gap> {
    let key = fingerprint::relativize(p, src, build);
    if !files.contains_key(&key) {
        let bytes = std::fs::read(p).map_err(|e| {
            Gap::new(
                Code::SnapshotInvalid,
                format!("{p} cannot be read for the snapshot: {e}"),
            )
        })?;
        files.insert(key.clone(), fingerprint::short_hash(&bytes));
    }
    Ok(key)
}

/// Why `base` cannot be compared with `head` (another generator, config,
/// layout, tool major version or schema), if it cannot.
pub fn incompatible(base: &Value, head: &Value) -> Option<String> {
    if base["schema"] != SNAPSHOT_SCHEMA {
        return Some(format!(
            "its schema is {}, not {SNAPSHOT_SCHEMA}",
            base["schema"]
        ));
    }
    let major = |v: &Value| {
        v["tool"]["version"]
            .as_str()
            .and_then(|s| s.split('.').next().map(str::to_owned))
    };
    if major(base) != major(head) {
        return Some(format!(
            "it was made by diff2test {} (this is {})",
            base["tool"]["version"], head["tool"]["version"]
        ));
    }
    for k in ["generator", "config", "layout"] {
        if base[k] != head[k] {
            return Some(format!(
                "its {k} is {}, this build's is {}",
                base[k], head[k]
            ));
        }
    }
    None
}

/// The tests of `head` whose fingerprint differs from `base`'s, or that
/// `base` does not have, each with what changed in words, sorted by name.
pub fn changed_tests(base: &Value, head: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(tests) = head["tests"].as_object() else {
        return out;
    };
    for (name, t) in tests {
        let Some(b) = base["tests"].get(name) else {
            out.push((
                name.clone(),
                "a new test: no fingerprint of record (unresolved, confidence 0)".to_owned(),
            ));
            continue;
        };
        if t["fingerprint"] == "opaque" {
            out.push((
                name.clone(),
                "its command cannot be mapped, so its build description is unknown".to_owned(),
            ));
            continue;
        }
        if b["fingerprint"] == t["fingerprint"] {
            continue;
        }
        let mut what = Vec::new();
        if b["catalogue"] != t["catalogue"] {
            what.push("its catalogue entry (command or properties)".to_owned());
        }
        if base["toolchain"] != head["toolchain"] {
            what.push("the toolchain".to_owned());
        }
        let (bn, hn) = (strings(&b["targets"]), strings(&t["targets"]));
        for n in hn.difference(&bn) {
            what.push(format!("target {n:?} joined its closure"));
        }
        for n in bn.difference(&hn) {
            what.push(format!("target {n:?} left its closure"));
        }
        for n in hn.intersection(&bn) {
            if base["targets"][n] != head["targets"][n] {
                what.push(format!("the description of target {n:?} (sources, compile flags, definitions, include directories, link or dependencies)"));
            }
        }
        for f in strings(&t["files"]) {
            if base["files"][&f] != head["files"][&f] {
                what.push(format!("the content of build-tree file {f}"));
            }
        }
        if what.is_empty() {
            what.push("its fingerprint".to_owned());
        }
        out.push((name.clone(), what.join("; ")));
    }
    out
}

/// The strings of a JSON array (nothing for anything else).
fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// What comparing the base's snapshot with this build's found.
pub(crate) struct Compared {
    /// The base cannot be compared: another tree, format or commit.
    pub gaps: Vec<Gap>,
    /// The tests whose fingerprint changed or is new: (name, what changed).
    pub changed: Vec<(String, String)>,
    /// The targets whose description changed or that are new, by name: a
    /// test that may load one at run time (by the bytes of what it runs, so
    /// outside its closure) is affected as if its code had changed.
    pub targets: Vec<String>,
}

/// Compares `base` (read from `base_path`) with `head`. When the change set
/// starts at `base_commit`, the base must have been made there.
pub(crate) fn compare(
    base: &Value,
    head: &Value,
    base_path: &str,
    base_commit: Option<&str>,
) -> Compared {
    let mut gaps = Vec::new();
    if let Some(why) = incompatible(base, head) {
        gaps.push(Gap::new(
            Code::SnapshotMismatch,
            format!("{base_path}: {why}"),
        ));
    }
    let recorded = base["source_commit"].as_str();
    if let Some(b) = base_commit {
        if recorded != Some(b) {
            gaps.push(Gap::new(
                Code::SnapshotMismatch,
                format!(
                    "{base_path} was made at commit {}, but the change set starts at {b}",
                    recorded.unwrap_or("(none recorded)")
                ),
            ));
        }
    }
    let targets = (head["targets"].as_object().into_iter().flatten())
        .filter(|(name, f)| base["targets"].get(name.as_str()) != Some(f))
        .map(|(name, _)| name.clone())
        .collect();
    Compared {
        gaps,
        changed: changed_tests(base, head),
        targets,
    }
}
