//! What else selects a test, or blocks a subset, once the evidence is read:
//! policy rules, named changed paths, unvouched prerequisites and the base
//! snapshot of the compare mode. Pure decisions over the stages' results.

use crate::decide::{select_code, Decision, Forced};
use crate::policy::{self, Policy};
use crate::reason::{Code, Gap};
use crate::{changes, ingest, paths, reach, snapshot, vcs};

/// The base snapshot, when `build_config = "compare"` and `--base-snapshot`
/// are both given and the file is a readable snapshot; a gap otherwise
/// (no gap when compare mode is off).
pub(crate) fn compare_base(
    req: &crate::request::Request,
    policy: &Policy,
    decision: &mut Decision,
) -> Option<serde_json::Value> {
    if policy.build_config != policy::BuildConfigMode::Compare {
        return None;
    }
    let path = req.base_snapshot.as_deref()?;
    let parsed = std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|e| e.to_string()));
    match parsed {
        Ok(v) if v["schema"] == snapshot::SNAPSHOT_SCHEMA && v["tests"].is_object() => Some(v),
        Ok(v) => {
            decision.require_full(Gap::new(
                Code::SnapshotInvalid,
                format!(
                    "{path}: not a {} document (schema {})",
                    snapshot::SNAPSHOT_SCHEMA,
                    v["schema"]
                ),
            ));
            None
        }
        Err(e) => {
            decision.require_full(Gap::new(Code::SnapshotInvalid, format!("{path}: {e}")));
            None
        }
    }
}

/// Source-tree prerequisites of the dependency evidence that the change
/// source cannot vouch for (git-ignored, untracked, or not in `--head`'s
/// tree): a change to one would not be in the change set. Build-tree files
/// (also in an in-source build) and files outside the source tree are not
/// asked about: the former are products of the build, the latter system files.
pub(crate) fn unvouched_prerequisites(
    vouched: &vcs::Vouched,
    deps: &ingest::depfile::DepEvidence,
    model: &ingest::file_api::Codemodel,
    user_source: &str,
) -> Vec<Gap> {
    let mut listed = vec![false; deps.files.len()];
    for tu in &deps.tus {
        for &p in &tu.prereqs {
            if let Some(f) = listed.get_mut(p as usize) {
                *f = true;
            }
        }
    }
    let mut out = Vec::new();
    for (id, f) in deps.files.iter().enumerate() {
        if !listed[id]
            || paths::is_within(f, &model.build_root)
            || !paths::is_within(f, &model.source_root)
        {
            continue;
        }
        let rel = paths::strip_root(f, &model.source_root).unwrap_or("");
        let spelled = paths::join_fold(user_source, rel);
        if !vouched.vouches(std::path::Path::new(&spelled))
            && !vouched.vouches(std::path::Path::new(f))
        {
            let display = if rel.is_empty() { f.as_str() } else { rel };
            out.push(Gap::new(
                Code::PrereqNotVersioned,
                format!(
                    "{display} is listed in dependency files but is git-ignored or untracked (not in the change source's tree), so a change to it would not be reported; track it, or pass the change set explicitly"
                ),
            ));
        }
    }
    out.sort();
    out
}

/// Why test reach `r` makes changed path `c` select its test, if it does: the
/// test names `c`, a directory holding it, or a configure-time copy of it
/// (same file name, or same bytes).
pub(crate) fn names_changed(r: &reach::TestReach, c: &changes::Changed) -> Option<String> {
    if c.abs.is_empty() {
        return None;
    }
    if let Some(n) = r
        .source
        .iter()
        .find(|n| **n == c.abs || paths::is_within(&c.abs, n))
    {
        return Some(if *n == c.abs {
            format!("names changed path {}", c.display)
        } else {
            format!(
                "names directory {n}, which holds changed path {}",
                c.display
            )
        });
    }
    r.configured
        .iter()
        .find(|copy| changes::may_be_copy(copy, &c.abs))
        .map(|copy| {
            format!(
                "names {copy}, which configure wrote and which may be a copy of changed path {}",
                c.display
            )
        })
}

pub(crate) fn apply_policy(
    policy: &Policy,
    catalogue: &ingest::ctest::Catalogue,
    changed: &[changes::Changed],
) -> (Vec<Forced>, Vec<Gap>) {
    let mut forced = Vec::new();
    let mut gaps = Vec::new();
    let with_label = |label: &str| -> Vec<&str> {
        catalogue
            .tests
            .iter()
            .filter(|t| t.labels.iter().any(|l| l == label))
            .map(|t| t.name.as_str())
            .collect()
    };
    for name in &policy.always_tests {
        if catalogue.tests.iter().any(|t| &t.name == name) {
            forced.push(Forced {
                test: name.clone(),
                code: select_code::ALWAYS_RUN,
                detail: format!("policy always_run.tests lists {name:?}"),
            });
        } else {
            gaps.push(Gap::new(
                Code::PolicyTestUnknown,
                format!("always_run.tests names {name:?}, which is not registered"),
            ));
        }
    }
    for label in &policy.always_labels {
        let tests = with_label(label);
        if tests.is_empty() {
            gaps.push(Gap::new(
                Code::PolicyLabelUncovered,
                format!("always_run.labels requires label {label:?}, which no test carries"),
            ));
        }
        for t in tests {
            forced.push(Forced {
                test: t.to_owned(),
                code: select_code::ALWAYS_RUN,
                detail: format!("policy always_run.labels: label {label:?}"),
            });
        }
    }
    for (ri, rule) in policy.rules.iter().enumerate() {
        for c in changed {
            // Match the path as given and its real spelling: a symlink must not bypass a rule.
            let spellings = std::iter::once(&c.display).chain(c.real_display.as_ref());
            let Some(glob) = spellings
                .clone()
                .find_map(|p| rule.paths.iter().find(|g| policy::glob_match(g, p)))
            else {
                continue;
            };
            for label in &rule.require_labels {
                let tests = with_label(label);
                if tests.is_empty() {
                    gaps.push(Gap::new(
                        Code::PolicyLabelUncovered,
                        format!("rule {} ({glob:?} matched {}) requires label {label:?}, which no test carries", ri + 1, c.display),
                    ));
                }
                for t in tests {
                    forced.push(Forced {
                        test: t.to_owned(),
                        code: select_code::POLICY_PATH_RULE,
                        detail: format!(
                            "rule {}: {} matches {glob:?}, which requires label {label:?}",
                            ri + 1,
                            c.display
                        ),
                    });
                }
            }
        }
    }
    (forced, gaps)
}
