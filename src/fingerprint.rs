//! Canonical JSON fingerprints of evidence, for snapshots: the
//! roots written as `<SRC>` and `<BUILD>`, backtraces and reply-file names
//! left out, so the same build description from another checkout or build
//! directory hashes the same. The readers compute them from the bytes they
//! parse (`ingest::file_api`), or keep what they parsed (`ingest::ctest`),
//! so a snapshot never reads evidence a second time.

use serde_json::Value;

use crate::digest;

/// 128 bits of SHA-256, hex: plenty to detect a change, half the size.
pub fn short_hash(bytes: &[u8]) -> String {
    digest::hex(&digest::sha256(bytes))[..32].to_owned()
}

/// The short hash of `v` made canonical ([`canonical`]).
pub fn of(mut v: Value, src: &str, build: &str) -> String {
    canonical(&mut v, src, build);
    short_hash(&serde_json::to_vec(&v).unwrap_or_default())
}

/// The fingerprint of a codemodel target object: its dependencies by target
/// name (`name_of` an id; unknown ids become ""), its own id left out.
pub fn target(
    mut v: Value,
    name_of: impl Fn(&str) -> Option<String>,
    src: &str,
    build: &str,
) -> String {
    if let Some(ds) = v.get_mut("dependencies").and_then(Value::as_array_mut) {
        for d in ds.iter_mut() {
            let name = d["id"].as_str().and_then(&name_of).unwrap_or_default();
            *d = serde_json::json!({ "target": name });
        }
        // A set: CMake lists it in no stable order (two configures of one
        // tree differ), and its order means nothing (link order is in `link`).
        ds.sort_by(|a, b| a["target"].as_str().cmp(&b["target"].as_str()));
        ds.dedup();
    }
    if let Some(m) = v.as_object_mut() {
        m.remove("id");
    }
    of(v, src, build)
}

/// Replaces the roots in every string of `v` and drops backtraces and ids.
pub fn canonical(v: &mut Value, src: &str, build: &str) {
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
pub fn relativize(s: &str, src: &str, build: &str) -> String {
    let mut out = s.to_owned();
    if !build.is_empty() {
        out = out.replace(build, "<BUILD>");
    }
    if !src.is_empty() {
        out = out.replace(src, "<SRC>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_fingerprint_ignores_the_order_of_its_dependencies() {
        let names = |id: &str| Some(id.trim_start_matches("id-").to_owned());
        let a = serde_json::json!({"name": "t", "id": "x", "dependencies": [
            {"id": "id-b", "backtrace": 1}, {"id": "id-a", "backtrace": 2}, {"id": "id-c"}]});
        let b = serde_json::json!({"name": "t", "id": "y", "dependencies": [
            {"id": "id-c"}, {"id": "id-a", "backtrace": 5}, {"id": "id-b"}]});
        assert_eq!(target(a, names, "/s", "/b"), target(b, names, "/s", "/b"));
        let c = serde_json::json!({"name": "t", "id": "y", "dependencies": [
            {"id": "id-c"}, {"id": "id-a"}]});
        let d = serde_json::json!({"name": "t", "id": "y", "dependencies": [
            {"id": "id-c"}, {"id": "id-a"}, {"id": "id-b"}]});
        assert_ne!(target(c, names, "/s", "/b"), target(d, names, "/s", "/b"));
    }
}
