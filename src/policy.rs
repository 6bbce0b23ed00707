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
//!
//! unreferenced_paths = "skip"  # or "full" (default): a changed path nothing references
//! scripts = "scan"             # or "off" (default): map scripted tests to what their scripts name
//!
//! # Declarations (assumptions the user adds to gain precision; each is named
//! # on stderr and in the plan whenever a decision rests on it):
//! [[boundary]]                 # paths no build step or test reads
//! paths = ["docs/**", "*.md"]
//! why = "documentation only"
//! [[data]]                     # test data: read only by the tests that name it,
//! paths = ["tests/data/**"]    # and by the tests / labels listed (both optional);
//!                              # "tests/{test}.expected": read by the test it names
//! tests = ["parser*"]         # test-name patterns (see name_match: `*` crosses `/`)
//! labels = ["data"]
//! why = "parser fixtures"
//! [[script]]                   # tests run through a script or interpreter
//! tests = ["test*.test"]       # test-name patterns
//! targets = ["test1"]          # what they run (target names; "{test}" is the test's name), and/or
//! targets_from_script = true   # the targets whose artifacts the script files name
//! why = "each script runs the program of its name"
//! ```

use serde::Deserialize;

/// What a changed CMake script costs (`build_config`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildConfigMode {
    /// The full suite (contract behaviour).
    #[default]
    Full,
    /// Compare per-test build-description fingerprints with `--base-snapshot`.
    Compare,
}

impl BuildConfigMode {
    /// The spelling used in the policy file and plans.
    pub fn as_str(self) -> &'static str {
        match self {
            BuildConfigMode::Full => "full",
            BuildConfigMode::Compare => "compare",
        }
    }
}

/// What a changed path no evidence knows costs (`unreferenced_paths`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnreferencedMode {
    /// The full suite (`CHANGE_UNKNOWN`, contract behaviour).
    #[default]
    Full,
    /// Skipped, under a printed assumption, when nothing in the evidence
    /// references it (`src/unreferenced.rs`).
    Skip,
}

/// How tests run through a script are mapped without a `[[script]]` rule
/// (`scripts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScriptsMode {
    /// Not mapped (`TEST_COMMAND_UNMAPPED`, contract behaviour).
    #[default]
    Off,
    /// Mapped to the targets whose artifacts its scripts name, under the
    /// printed assumption "the scripts run only what they name".
    Scan,
}

impl ScriptsMode {
    /// The spelling used in the policy file and plans.
    pub fn as_str(self) -> &'static str {
        match self {
            ScriptsMode::Off => "off",
            ScriptsMode::Scan => "scan",
        }
    }
}

impl UnreferencedMode {
    /// The spelling used in the policy file and plans.
    pub fn as_str(self) -> &'static str {
        match self {
            UnreferencedMode::Full => "full",
            UnreferencedMode::Skip => "skip",
        }
    }
}

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
    #[serde(default)]
    build_config: Option<BuildConfigMode>,
    #[serde(default)]
    unreferenced_paths: Option<UnreferencedMode>,
    #[serde(default)]
    scripts: Option<ScriptsMode>,
    #[serde(default)]
    boundary: Vec<RawBoundary>,
    #[serde(default)]
    data: Vec<RawData>,
    #[serde(default)]
    script: Vec<RawScript>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoundary {
    paths: Vec<String>,
    why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawData {
    paths: Vec<String>,
    why: String,
    #[serde(default)]
    tests: Vec<String>,
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    tests: Vec<String>,
    why: String,
    #[serde(default)]
    targets: Vec<String>,
    #[serde(default)]
    targets_from_script: bool,
}

/// `[[boundary]]`: paths that no build step or test reads. A changed (or
/// deleted) path under one does not cost the subset; the plan says the subset
/// is complete *with declared boundaries*.
#[derive(Clone, Debug)]
pub struct Boundary {
    /// Globs over paths relative to the source root.
    pub paths: Vec<String>,
    /// The user's justification (required).
    pub why: String,
}

/// `[[data]]`: test data read only by the tests that name it, and by the
/// tests and labels listed.
#[derive(Clone, Debug)]
pub struct DataRule {
    /// Globs over paths relative to the source root.
    pub paths: Vec<String>,
    /// The user's justification (required).
    pub why: String,
    /// Test-name patterns ([`name_match`]) of tests that read the data too.
    pub tests: Vec<String>,
    /// Labels whose tests read the data too.
    pub labels: Vec<String>,
}

/// `[[script]]`: what tests that run a script or interpreter run.
#[derive(Clone, Debug)]
pub struct ScriptRule {
    /// Test-name patterns ([`name_match`]).
    pub tests: Vec<String>,
    /// The user's justification (required).
    pub why: String,
    /// Target names they run.
    pub targets: Vec<String>,
    /// Also the targets whose artifacts the script files (source-tree files
    /// the command names) mention.
    pub targets_from_script: bool,
}

/// Which declaration a decision rests on, for stderr and plans.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Declared {
    /// `boundary`, `data` or `script`.
    pub kind: &'static str,
    /// 1-based index among the declarations of that kind.
    pub rule: usize,
    /// The glob that matched (or the test-name glob).
    pub matched: String,
    /// The user's justification.
    pub why: String,
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
    /// What a changed CMake script costs.
    pub build_config: BuildConfigMode,
    /// Whether the policy sets `build_config` itself (an explicit `"full"`
    /// keeps compare mode off even with `--base-snapshot`).
    pub build_config_set: bool,
    /// What a changed path no evidence knows costs.
    pub unreferenced_paths: UnreferencedMode,
    /// How scripted tests without a `[[script]]` rule are mapped.
    pub scripts_mode: ScriptsMode,
    /// Tests that always run, by exact name.
    pub always_tests: Vec<String>,
    /// Tests that always run, by CTest label.
    pub always_labels: Vec<String>,
    /// Path rules.
    pub rules: Vec<Rule>,
    /// Declared boundaries.
    pub boundaries: Vec<Boundary>,
    /// Declared test-data rules.
    pub data: Vec<DataRule>,
    /// Declared scripted tests.
    pub scripts: Vec<ScriptRule>,
    /// Where the policy came from (`None`: built-in default).
    pub source: Option<String>,
    /// SHA-256 (hex) of the policy file, when there is one.
    pub identity: Option<String>,
}

impl Policy {
    /// Whether CMake edits are decided by snapshots: `build_config =
    /// "compare"`, or a `--base-snapshot` given (`with_snapshot`) and no
    /// explicit `build_config = "full"`.
    pub fn compare_mode(&self, with_snapshot: bool) -> bool {
        self.build_config == BuildConfigMode::Compare || (with_snapshot && !self.build_config_set)
    }

    /// The first boundary one of `spellings` (relative to the source root) falls under.
    pub fn boundary_for<'a>(
        &self,
        spellings: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Option<Declared> {
        self.boundaries.iter().enumerate().find_map(|(i, b)| {
            let g = spellings
                .clone()
                .into_iter()
                .find_map(|p| b.paths.iter().find(|g| glob_match(g, p)))?;
            Some(Declared {
                kind: "boundary",
                rule: i + 1,
                matched: g.clone(),
                why: b.why.clone(),
            })
        })
    }

    /// The first data rule one of `spellings` falls under, with its index.
    pub fn data_for<'a>(
        &self,
        spellings: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Option<(usize, Declared)> {
        self.data.iter().enumerate().find_map(|(i, d)| {
            let g = spellings
                .clone()
                .into_iter()
                .find_map(|p| d.paths.iter().find(|g| template_match(g, None, p)))?;
            Some((
                i,
                Declared {
                    kind: "data",
                    rule: i + 1,
                    matched: g.clone(),
                    why: d.why.clone(),
                },
            ))
        })
    }

    /// The tests a `{test}` template of data rule `rule` names for one of
    /// `spellings`: those whose name, put in the template, matches. A
    /// template path is read by the test it names (`tests/{test}.expected`).
    pub fn data_template_tests<'a, 'n>(
        &self,
        rule: usize,
        spellings: impl IntoIterator<Item = &'a str> + Clone,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Vec<&'n str> {
        let templates: Vec<&String> = self.data[rule]
            .paths
            .iter()
            .filter(|g| g.contains("{test}"))
            .collect();
        if templates.is_empty() {
            return Vec::new();
        }
        names
            .into_iter()
            .filter(|n| {
                templates.iter().any(|g| {
                    spellings
                        .clone()
                        .into_iter()
                        .any(|p| template_match(g, Some(n), p))
                })
            })
            .collect()
    }

    /// The first script rule whose test-name patterns match `test`, with its index.
    pub fn script_for(&self, test: &str) -> Option<(usize, Declared)> {
        self.scripts.iter().enumerate().find_map(|(i, s)| {
            let g = s.tests.iter().find(|g| name_match(g, test))?;
            Some((
                i,
                Declared {
                    kind: "script",
                    rule: i + 1,
                    matched: g.clone(),
                    why: s.why.clone(),
                },
            ))
        })
    }
}

/// A policy file that cannot be used as written (a usage error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("policy {path}: {why}")]
pub struct PolicyError {
    /// The policy file.
    pub path: String,
    /// What is wrong with it.
    pub why: String,
}

/// Loads the policy: `explicit` (from `--policy`) must exist; otherwise
/// `SRC/diff2test.toml` is used when present. Errors are usage errors.
pub fn load(explicit: Option<&str>, source_dir: &str) -> Result<Policy, PolicyError> {
    let default_path = format!("{source_dir}/diff2test.toml");
    let path = match explicit {
        Some(p) => p.to_owned(),
        None if std::path::Path::new(&default_path).is_file() => default_path,
        None => return Ok(Policy::default()),
    };
    let bad = |why: String| PolicyError {
        path: path.clone(),
        why,
    };
    let bytes = std::fs::read(&path).map_err(|e| bad(e.to_string()))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("not valid UTF-8".into()))?;
    let raw: RawPolicy = toml::from_str(text).map_err(|e| bad(e.message().to_owned()))?;
    let always = raw.always_run.unwrap_or_default();
    for r in &raw.rule {
        if r.paths.is_empty() || r.require_labels.is_empty() {
            return Err(bad(
                "every [[rule]] needs non-empty paths and require_labels".into(),
            ));
        }
    }
    let need = |what: &str, ok: bool| -> Result<(), PolicyError> {
        if ok {
            Ok(())
        } else {
            Err(bad(what.to_owned()))
        }
    };
    // Both path declarations: a non-empty list of non-empty globs, and a why.
    let path_rules = raw
        .boundary
        .iter()
        .map(|b| ("boundary", &b.paths, &b.why))
        .chain(raw.data.iter().map(|d| ("data", &d.paths, &d.why)));
    for (kind, globs, why) in path_rules {
        need(
            &format!("every [[{kind}]] needs a non-empty paths list"),
            !globs.is_empty(),
        )?;
        need(
            &format!("every [[{kind}]] needs a non-empty why"),
            !why.trim().is_empty(),
        )?;
        need(
            &format!("a [[{kind}]] glob is empty"),
            globs.iter().all(|g| !g.is_empty()),
        )?;
    }
    for sc in &raw.script {
        need(
            "every [[script]] needs a non-empty tests list",
            !sc.tests.is_empty(),
        )?;
        need(
            "every [[script]] needs a non-empty why",
            !sc.why.trim().is_empty(),
        )?;
        need(
            "every [[script]] needs targets or targets_from_script = true",
            !sc.targets.is_empty() || sc.targets_from_script,
        )?;
    }
    Ok(Policy {
        boundaries: raw
            .boundary
            .into_iter()
            .map(|b| Boundary {
                paths: b.paths,
                why: b.why,
            })
            .collect(),
        data: raw
            .data
            .into_iter()
            .map(|d| DataRule {
                paths: d.paths,
                why: d.why,
                tests: d.tests,
                labels: d.labels,
            })
            .collect(),
        scripts: raw
            .script
            .into_iter()
            .map(|s| ScriptRule {
                tests: s.tests,
                why: s.why,
                targets: s.targets,
                targets_from_script: s.targets_from_script,
            })
            .collect(),
        opaque: raw.opaque.unwrap_or_default(),
        build_config_set: raw.build_config.is_some(),
        unreferenced_paths: raw.unreferenced_paths.unwrap_or_default(),
        scripts_mode: raw.scripts.unwrap_or_default(),
        build_config: raw.build_config.unwrap_or_default(),
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
    glob_go(pattern.as_bytes(), path.as_bytes(), None)
}

/// [`glob_match`] of a data template: `{test}` is the test's name `name`,
/// literally (a name holding `/` names no path), or, with `None`, any
/// test's: one or more characters of one path segment. `{test}` never
/// crosses `/`, and neither does a `*` beside it (`tests/{test}*.expected`
/// is `tests/<name><anything but '/'>.expected`).
pub fn template_match(template: &str, name: Option<&str>, path: &str) -> bool {
    if name.is_some_and(|n| n.is_empty() || n.contains('/')) {
        return false;
    }
    let p = template.replace("{test}", "\u{1}");
    glob_go(p.as_bytes(), path.as_bytes(), Some(name.map(str::as_bytes)))
}

/// The matcher behind [`glob_match`] and [`template_match`]: `test` is the
/// meaning of the template byte 1 (a literal name, or one segment).
fn glob_go(p: &[u8], s: &[u8], test: Option<Option<&[u8]>>) -> bool {
    fn go(p: &[u8], s: &[u8], test: Option<Option<&[u8]>>) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(1) if test.is_some() => match test.flatten() {
                Some(name) => s.starts_with(name) && go(&p[1..], &s[name.len()..], test),
                None => (1..=s.len())
                    .take_while(|&i| s[i - 1] != b'/')
                    .any(|i| go(&p[1..], &s[i..], test)),
            },
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = &p[2..];
                // `**/` may also match zero directories.
                let rest_nos = rest.strip_prefix(b"/").unwrap_or(rest);
                (0..=s.len()).any(|i| go(rest, &s[i..], test) || go(rest_nos, &s[i..], test))
            }
            Some(b'*') => {
                let rest = &p[1..];
                for i in 0..=s.len() {
                    if go(rest, &s[i..], test) {
                        return true;
                    }
                    if i < s.len() && s[i] == b'/' {
                        break;
                    }
                }
                false
            }
            Some(b'?') => !s.is_empty() && s[0] != b'/' && go(&p[1..], &s[1..], test),
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..], test),
        }
    }
    go(p, s, test)
}

/// Match of a test-name pattern (`[[data]] tests`, `[[script]] tests`).
/// Test names are not paths: gtest's parameterised names hold `/`
/// (`Suite/Test.Case/0`), so `*` matches any run of characters, `/`
/// included; `?` matches exactly one character; `[…]` one character of a
/// set (`[abc]`, a range `[a-z]`, negated by a leading `!` or `^`; a `]`
/// right after the opening `[` or its negation is a member), and a `[`
/// without its `]` is literal; every other character, `\` too, is literal.
pub fn name_match(pattern: &str, name: &str) -> bool {
    fn class(p: &[char], c: char) -> Option<(bool, usize)> {
        // Some((whether `c` is a member, length of the class in `p`)).
        let mut i = 1;
        let negated = matches!(p.get(i), Some('!' | '^'));
        if negated {
            i += 1;
        }
        let mut member = false;
        let mut first = true;
        loop {
            let &x = p.get(i)?;
            if x == ']' && !first {
                return Some((member != negated, i + 1));
            }
            first = false;
            if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&y| y != ']') {
                let y = p[i + 2];
                member |= x <= c && c <= y;
                i += 3;
            } else {
                member |= x == c;
                i += 1;
            }
        }
    }
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => (0..=s.len()).any(|i| go(&p[1..], &s[i..])),
            Some('?') => !s.is_empty() && go(&p[1..], &s[1..]),
            Some('[') => match (s.first(), class(p, s.first().copied().unwrap_or('\0'))) {
                (Some(_), Some((true, len))) => go(&p[len..], &s[1..]),
                (_, Some((false, _))) | (None, Some(_)) => false,
                (_, None) => s.first() == Some(&'[') && go(&p[1..], &s[1..]),
            },
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    go(&p, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_template_never_crosses_a_slash() {
        let t = "tests/{test}*.expected";
        assert!(template_match(t, Some("re"), "tests/re.expected"));
        assert!(template_match(t, Some("re"), "tests/re_2.expected"));
        assert!(!template_match(
            t,
            Some("re"),
            "tests/regress/case1.expected"
        ));
        assert!(!template_match(t, None, "tests/regress/case1.expected"));
        assert!(template_match(t, None, "tests/regress.expected"));
        assert!(!template_match(t, Some("a/b"), "tests/a/b.expected"));
        // A name is literal: glob characters in it match only themselves.
        assert!(!template_match(
            "tests/{test}.out",
            Some("t?"),
            "tests/t1.out"
        ));
        assert!(template_match(
            "tests/{test}.out",
            Some("t?"),
            "tests/t?.out"
        ));
        assert!(!template_match("tests/{test}.out", None, "tests/.out"));
        assert!(template_match(
            "data/**/{test}.txt",
            Some("x"),
            "data/a/b/x.txt"
        ));
    }

    #[test]
    fn test_name_patterns_cross_slashes_and_know_classes() {
        assert!(name_match("parser*", "parser/unicode"));
        assert!(name_match("parser*", "parser.basic"));
        assert!(name_match("*", "Suite/Test.Case/0"));
        assert!(name_match("Suite/*/0", "Suite/Test.Case/0"));
        assert!(!name_match("parser*", "lexer/parser"));
        assert!(name_match("t?", "t1"));
        assert!(name_match("t?", "t/"));
        assert!(!name_match("t?", "t12"));
        assert!(name_match("case[0-9]", "case7"));
        assert!(!name_match("case[!0-9]", "case7"));
        assert!(name_match("case[^0-9]", "casex"));
        assert!(name_match("a[]]b", "a]b"));
        assert!(name_match("a[b", "a[b"));
        assert!(!name_match("a[b", "ab"));
        assert!(name_match("x\\y", "x\\y"));
        assert!(name_match("ünï*", "ünïcode/ß"));
        assert!(!name_match("exact", "exact2"));
    }

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
            .to_string()
            .contains("unknown field"));
        std::fs::write(&p, "opaque = \"maybe\"\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()), "/x").is_err());
        std::fs::write(&p, "[always_run]\ntest=[\"a\"]\n").unwrap();
        assert!(load(Some(p.to_str().unwrap()), "/x").is_err());
        assert!(load(Some("/nonexistent/p.toml"), "/x").is_err());
        // Declarations: strict, with a required justification and no empty glob list.
        for (text, want) in [
            ("[[boundary]]\npaths=[\"docs/**\"]\nwhy=\"docs\"\n", None),
            (
                "[[boundary]]\npaths=[]\nwhy=\"docs\"\n",
                Some("non-empty paths"),
            ),
            (
                "[[boundary]]\npaths=[\"docs/**\"]\n",
                Some("missing field `why`"),
            ),
            (
                "[[boundary]]\npaths=[\"docs/**\"]\nwhy=\" \"\n",
                Some("non-empty why"),
            ),
            (
                "[[boundary]]\npaths=[\"\"]\nwhy=\"x\"\n",
                Some("glob is empty"),
            ),
            (
                "[[boundary]]\npaths=[\"a\"]\nwhy=\"x\"\nwhy_not=1\n",
                Some("unknown field"),
            ),
            (
                "[[data]]\npaths=[\"t/**\"]\nwhy=\"d\"\ntests=[\"a*\"]\nlabels=[\"l\"]\n",
                None,
            ),
            ("[[data]]\npaths=[]\nwhy=\"d\"\n", Some("non-empty paths")),
            (
                "[[script]]\ntests=[\"t*\"]\ntargets=[\"x\"]\nwhy=\"s\"\n",
                None,
            ),
            (
                "[[script]]\ntests=[\"t*\"]\nwhy=\"s\"\n",
                Some("targets or targets_from_script"),
            ),
            (
                "[[script]]\ntests=[]\ntargets_from_script=true\nwhy=\"s\"\n",
                Some("non-empty tests"),
            ),
        ] {
            std::fs::write(&p, text).unwrap();
            let got = load(Some(p.to_str().unwrap()), "/x");
            match want {
                None => assert!(got.is_ok(), "{text}: {got:?}"),
                Some(w) => assert!(
                    got.as_ref().unwrap_err().to_string().contains(w),
                    "{text}: {got:?}"
                ),
            }
        }
        std::fs::write(
            &p,
            "[[boundary]]\npaths=[\"*.md\", \"docs/**\"]\nwhy=\"docs\"\n",
        )
        .unwrap();
        let pol = load(Some(p.to_str().unwrap()), "/x").unwrap();
        let d = pol.boundary_for(["docs/a/b.rst"]).unwrap();
        assert_eq!(
            (d.kind, d.rule, d.matched.as_str()),
            ("boundary", 1, "docs/**")
        );
        assert!(pol.boundary_for(["src/a.md"]).is_none());
        assert!(load(None, "/nonexistent").unwrap().source.is_none());
    }
}
