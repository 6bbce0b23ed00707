//! Per-test build-description fingerprints (issue 15, TIA-CHG-003/005/010).
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

use crate::digest;
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::Codemodel;
use crate::paths;
use crate::reach::TestReach;
use crate::reason::{Code, Gap};

/// Schema id of snapshots.
pub const SNAPSHOT_SCHEMA: &str = "diff2test.snapshot.v1";

/// 128 bits of SHA-256, hex: plenty to detect a change, half the size.
fn h(bytes: &[u8]) -> String {
    digest::hex(&digest::sha256(bytes))[..32].to_owned()
}

/// Replaces the roots in every string of `v` and drops backtraces and ids.
fn canonical(v: &mut Value, src: &str, build: &str) {
    match v {
        Value::String(s) => {
            *s = relativize(s, src, build);
        }
        Value::Array(a) => a.iter_mut().for_each(|x| canonical(x, src, build)),
        Value::Object(m) => {
            m.retain(|k, _| {
                !matches!(
                    k.as_str(),
                    "backtrace" | "backtraces" | "backtraceGraph" | "jsonFile" | "codemodelVersion"
                )
            });
            m.values_mut().for_each(|x| canonical(x, src, build));
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `s` with every occurrence of the build root, then the source root,
/// replaced by a placeholder (the build root first: it may lie inside the
/// source root).
fn relativize(s: &str, src: &str, build: &str) -> String {
    let mut out = s.to_owned();
    if !build.is_empty() {
        out = out.replace(build, "<BUILD>");
    }
    if !src.is_empty() {
        out = out.replace(src, "<SRC>");
    }
    out
}

fn read_json(path: &str) -> Result<Value, Gap> {
    let bytes = std::fs::read(path).map_err(|e| {
        Gap::new(
            Code::SnapshotInvalid,
            format!("{path} cannot be read for the snapshot: {e}"),
        )
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Gap::new(Code::SnapshotInvalid, format!("{path}: {e}")))
}

/// Computes the snapshot of the current build.
#[allow(clippy::too_many_arguments)]
pub fn compute(
    model: &Codemodel,
    graph: &Graph<'_>,
    deps: &DepEvidence,
    catalogue: &Catalogue,
    ctest_json: &str,
    mappings: &[TestMapping],
    reaches: &[TestReach],
    source_commit: Option<String>,
) -> Result<Value, Gap> {
    let (src, build) = (model.source_root.as_str(), model.build_root.as_str());
    // The codemodel file and, from it, each target's object file.
    let reply = |prefix: &str| {
        model
            .files_read
            .iter()
            .find(|f| f.rsplit('/').next().is_some_and(|n| n.starts_with(prefix)))
            .cloned()
    };
    let cm_file = reply("codemodel-v2-").ok_or_else(|| {
        Gap::new(
            Code::SnapshotInvalid,
            "the codemodel reply file is not among the files read",
        )
    })?;
    let cm = read_json(&cm_file)?;
    let reply_dir = cm_file
        .rsplit_once('/')
        .map(|(d, _)| d)
        .unwrap_or("")
        .to_owned();
    let config = cm["configurations"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == model.config.as_str()))
        .ok_or_else(|| {
            Gap::new(
                Code::SnapshotInvalid,
                "the selected configuration is not in the codemodel",
            )
        })?;
    let mut id_to_name: BTreeMap<String, String> = BTreeMap::new();
    let mut file_of: BTreeMap<String, String> = BTreeMap::new();
    for t in config["targets"].as_array().into_iter().flatten() {
        if let (Some(id), Some(name), Some(f)) =
            (t["id"].as_str(), t["name"].as_str(), t["jsonFile"].as_str())
        {
            id_to_name.insert(id.to_owned(), name.to_owned());
            file_of.insert(name.to_owned(), format!("{reply_dir}/{f}"));
        }
    }
    for t in config["abstractTargets"].as_array().into_iter().flatten() {
        if let (Some(id), Some(name)) = (t["id"].as_str(), t["name"].as_str()) {
            id_to_name.insert(id.to_owned(), name.to_owned());
        }
    }
    let mut targets: BTreeMap<String, String> = BTreeMap::new();
    for t in &model.targets {
        let Some(f) = file_of.get(&t.name) else {
            return Err(Gap::new(
                Code::SnapshotInvalid,
                format!("target {:?} has no object file", t.name),
            ));
        };
        let mut v = read_json(f)?;
        if let Some(ds) = v.get_mut("dependencies").and_then(Value::as_array_mut) {
            for d in ds.iter_mut() {
                let name = d["id"]
                    .as_str()
                    .and_then(|id| id_to_name.get(id))
                    .cloned()
                    .unwrap_or_default();
                *d = json!({"target": name});
            }
        }
        if let Some(m) = v.as_object_mut() {
            m.remove("id");
        }
        canonical(&mut v, src, build);
        targets.insert(
            t.name.clone(),
            h(&serde_json::to_vec(&v).unwrap_or_default()),
        );
    }
    let toolchain = match reply("toolchains-v1-") {
        Some(f) => {
            let mut v = read_json(&f)?;
            canonical(&mut v, src, build);
            h(&serde_json::to_vec(&v).unwrap_or_default())
        }
        None => "none".to_owned(),
    };
    // Catalogue entries, canonical.
    let cat = read_json(ctest_json)?;
    let mut entries: BTreeMap<String, String> = BTreeMap::new();
    for t in cat["tests"].as_array().into_iter().flatten() {
        let mut t = t.clone();
        canonical(&mut t, src, build);
        if let Some(name) = t["name"].as_str().map(str::to_owned) {
            entries.insert(name, h(&serde_json::to_vec(&t).unwrap_or_default()));
        }
    }
    // Build-tree files a closure includes, and configure-time files tests name.
    let mut units_of: Vec<Vec<usize>> = vec![Vec::new(); model.targets.len()];
    for (i, tu) in deps.tus.iter().enumerate() {
        units_of[tu.target].push(i);
    }
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    fn digest_of(
        files: &mut BTreeMap<String, String>,
        p: &str,
        src: &str,
        build: &str,
    ) -> Result<String, Gap> {
        let key = relativize(p, src, build);
        if !files.contains_key(&key) {
            let bytes = std::fs::read(p).map_err(|e| {
                Gap::new(
                    Code::SnapshotInvalid,
                    format!("{p} cannot be read for the snapshot: {e}"),
                )
            })?;
            files.insert(key.clone(), h(&bytes));
        }
        Ok(key)
    }
    let mut tests = serde_json::Map::new();
    for (i, test) in catalogue.tests.iter().enumerate() {
        let entry = entries.get(&test.name).cloned().unwrap_or_default();
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
            for &u in &units_of[t] {
                for &p in &deps.tus[u].prereqs {
                    let f = &deps.files[p as usize];
                    if paths::is_within(f, build) {
                        fs.insert(digest_of(&mut files, f, src, build)?);
                    }
                }
            }
        }
        for f in &reaches[i].configured {
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
            json!({"fingerprint": h(all.as_bytes()), "catalogue": entry, "targets": names, "files": fs}),
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
