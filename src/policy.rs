//! Selection policy (`diff2test.toml` at the source root, or `--policy FILE`).
//!
//! Policy can only *add* tests to a subset (always-run tests, label rules for
//! sensitive paths) or, with `opaque = "select"`, replace a whole-run fallback
//! caused by one opaque test with the forced selection of that test. It can
//! never remove a test that evidence selected, and global unknowns still fall
//! back to the full suite. Unknown keys are errors (strict parsing).
//!
//! ```toml
//! opaque = "select"            # or "full" (default: the seed contract's behaviour)
//! [always_run]
//! tests = ["checker.selftest"]
//! labels = ["smoke"]
//! [[rule]]
//! paths = ["libs/net/**"]      # globs over changed paths relative to the source root
//! require_labels = ["net"]
//! ```

use serde::Deserialize;

/// What to do with a test that evidence cannot map or whose closure is opaque.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpaqueMode {
    /// The whole run falls back to the full suite (contract behaviour).
    #[default]
    Full,
    /// Only that test is forced into the selection (reason OPAQUE_BOUNDARY).
    Select,
}

impl OpaqueMode {
    /// The spelling used in the policy file and plans.
    pub fn as_str(self) -> &'static str {
        match self {
            OpaqueMode::Full => "full",
            OpaqueMode::Select => "select",
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    opaque: Option<OpaqueMode>,
    #[serde(default)]
    always_run: Option<RawAlwaysRun>,
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAlwaysRun {
    #[serde(default)]
    tests: Vec<String>,
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    paths: Vec<String>,
    require_labels: Vec<String>,
}

/// A path rule: when a changed path matches one of `paths`, every test carrying
/// one of `require_labels` must run.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Globs (`**` any, `*` no slash, `?` one non-slash character).
    pub paths: Vec<String>,
    /// Labels required when a path matches.
    pub require_labels: Vec<String>,
}

/// The loaded policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Opaque-boundary mode.
    pub opaque: OpaqueMode,
    /// Tests that always run, by exact name.
    pub always_tests: Vec<String>,
    /// Tests that always run, by CTest label.
    pub always_labels: Vec<String>,
    /// Path rules.
    pub rules: Vec<Rule>,
    /// Where the policy came from (`None`: built-in default).
    pub source: Option<String>,
    /// SHA-256 (hex) of the policy file, when there is one.
    pub identity: Option<String>,
}

/// Loads the policy: `explicit` (from `--policy`) must exist; otherwise
/// `SRC/diff2test.toml` is used when present. Errors are usage errors.
pub fn load(explicit: Option<&str>, source_dir: &str) -> Result<Policy, String> {
    let default_path = format!("{source_dir}/diff2test.toml");
    let path = match explicit {
        Some(p) => p.to_owned(),
        None if std::path::Path::new(&default_path).is_file() => default_path,
        None => return Ok(Policy::default()),
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("policy {path}: {e}"))?;
    let text =
        std::str::from_utf8(&bytes).map_err(|_| format!("policy {path}: not valid UTF-8"))?;
    let raw: RawPolicy =
        toml::from_str(text).map_err(|e| format!("policy {path}: {}", e.message()))?;
    let always = raw.always_run.unwrap_or_default();
    for r in &raw.rule {
        if r.paths.is_empty() || r.require_labels.is_empty() {
            return Err(format!(
                "policy {path}: every [[rule]] needs non-empty paths and require_labels"
            ));
        }
    }
    Ok(Policy {
        opaque: raw.opaque.unwrap_or_default(),
        always_tests: always.tests,
        always_labels: always.labels,
        rules: raw
            .rule
            .into_iter()
            .map(|r| Rule {
                paths: r.paths,
                require_labels: r.require_labels,
            })
            .collect(),
        source: Some(path),
        identity: Some(crate::digest::hex(&crate::digest::sha256(&bytes))),
    })
}

/// Glob match over a `/`-separated path: `**` matches anything (including `/`),
/// `*` anything but `/`, `?` one character but `/`; everything else is literal.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = &p[2..];
                // `**/` may also match zero directories.
                let rest_nos = rest.strip_prefix(b"/").unwrap_or(rest);
                (0..=s.len()).any(|i| go(rest, &s[i..]) || go(rest_nos, &s[i..]))
            }
            Some(b'*') => {
                let rest = &p[1..];
                for i in 0..=s.len() {
                    if go(rest, &s[i..]) {
                        return true;
                    }
                    if i < s.len() && s[i] == b'/' {
                        break;
                    }
                }
                false
            }
            Some(b'?') => !s.is_empty() && s[0] != b'/' && go(&p[1..], &s[1..]),
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("libs/net/**", "libs/net/src/codec.cpp"));
        assert!(glob_match(
            "libs/**/*.hpp",
            "libs/net/include/net/codec.hpp"
        ));
        assert!(glob_match("**/CMakeLists.txt", "CMakeLists.txt"));
        assert!(glob_match("*.md", "README.md"));
        assert!(!glob_match("*.md", "docs/README.md"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "a/c"));
        assert!(!glob_match("libs/net/**", "libs/network/x"));
    }

    #[test]
    fn strict_parsing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(&p, "opaque = \"select\"\n[always_run]\ntests=[\"a\"]\n[[rule]]\npaths=[\"x/**\"]\nrequire_labels=[\"l\"]\n").unwrap();
        let pol = load(Some(p.to_str().unwrap()), "/nonexistent").unwrap();
        assert_eq!(pol.opaque, OpaqueMode::Select);
        assert_eq!(pol.always_tests, vec!["a"]);
        assert_eq!(pol.rules.len(), 1);
        assert_eq!(pol.identity.as_ref().unwrap().len(), 64);
        std::fs::write(&p, "opaqe = \"select\"\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()), "/x")
            .unwrap_err()
            .contains("unknown field"));
        std::fs::write(&p, "opaque = \"maybe\"\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()), "/x").is_err());
        std::fs::write(&p, "[always_run]\ntest=[\"a\"]\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()), "/x").is_err());
        assert!(load(Some("/nonexistent/p.toml"), "/x").is_err());
        assert!(load(None, "/nonexistent").unwrap().source.is_none());
    }
}
