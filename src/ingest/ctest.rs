//! The CTest catalogue: `ctest --show-only=json-v1`.
//!
//! Invariant: a [`Catalogue`] is only returned when every registered test has a
//! unique, non-empty, addressable name under a supported `ctestInfo` major
//! version 1. Anything else is a catalogue-untrusted gap (FULL_SUITE_REQUIRED):
//! no test list is invented.
//!
//! Unknown members are ignored (CTest may add them in a minor version); members
//! this tool relies on must have the documented types, and a member given twice
//! in one object is malformed (serde rejects duplicate fields).

use serde::Deserialize;
use std::collections::HashSet;

use crate::reason::{Code, Gap};

/// One registered test.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Test {
    /// The exact CTest name.
    pub name: String,
    /// `command` as ctest resolved it; `None` when the key is absent.
    pub command: Option<Vec<String>>,
    /// `config` (present only when ctest ran with `-C`).
    pub config: Option<String>,
    /// LABELS property, sorted and de-duplicated by CTest.
    pub labels: Vec<String>,
    /// ENVIRONMENT property entries (`K=V`).
    pub environment: Vec<String>,
    /// ENVIRONMENT_MODIFICATION entries (`K=op:value`).
    pub environment_modification: Vec<String>,
    /// WORKING_DIRECTORY (ctest always writes it; empty when absent).
    pub working_directory: String,
    /// REQUIRED_FILES.
    pub required_files: Vec<String>,
    /// DEPENDS: tests that must run before this one (ctest adds fixture edges here too).
    pub depends: Vec<String>,
    /// FIXTURES_SETUP: fixtures this test sets up.
    pub fixtures_setup: Vec<String>,
    /// FIXTURES_CLEANUP: fixtures this test cleans up.
    pub fixtures_cleanup: Vec<String>,
    /// FIXTURES_REQUIRED: fixtures this test needs.
    pub fixtures_required: Vec<String>,
    /// RESOURCE_LOCK: resources this test holds exclusively.
    pub resource_lock: Vec<String>,
    /// The catalogue gives the test a backtrace: an `add_test` in a
    /// `CMakeLists.txt` registered it when the build was configured. A test
    /// without one was registered by a file ctest included
    /// (`TEST_INCLUDE_FILES`: `gtest_discover_tests`, `catch_discover_tests`),
    /// which a build step writes again whenever its program is rebuilt.
    pub configured: bool,
}

impl Test {
    /// Every string this test's registration hands to the program it runs:
    /// the command (all elements), ENVIRONMENT, ENVIRONMENT_MODIFICATION,
    /// WORKING_DIRECTORY and REQUIRED_FILES. A path or file name a test can
    /// open without computing it at run time is in one of these (or in its
    /// build: see `reach`).
    pub fn texts(&self) -> impl Iterator<Item = &String> {
        self.command
            .iter()
            .flatten()
            .chain(&self.environment)
            .chain(&self.environment_modification)
            .chain(std::iter::once(&self.working_directory).filter(|w| !w.is_empty()))
            .chain(&self.required_files)
    }
}

/// The whole catalogue, in file order.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    /// Registered tests.
    pub tests: Vec<Test>,
    /// The whole document as parsed, when [`parse`] was asked to keep it (for
    /// a snapshot's catalogue fingerprints: the bytes are not read again).
    pub json: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawVersion {
    major: u64,
    #[allow(dead_code)]
    minor: u64,
}

#[derive(Deserialize)]
struct RawHead {
    kind: String,
    version: RawVersion,
}

#[derive(Deserialize)]
struct RawCatalogue {
    kind: String,
    version: RawVersion,
    tests: Vec<RawTest>,
}

#[derive(Deserialize)]
struct RawTest {
    name: String,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    config: Option<String>,
    #[serde(default)]
    properties: Option<Vec<RawProperty>>,
    #[serde(default)]
    backtrace: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct RawProperty {
    name: String,
    value: serde_json::Value,
}

fn string_list(prop: &str, test: &str, v: &serde_json::Value) -> Result<Vec<String>, Gap> {
    let bad = || {
        Gap::new(
            Code::CtestMalformed,
            format!("test {test:?}: property {prop} is not a list of strings"),
        )
    };
    match v {
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).ok_or_else(bad))
            .collect(),
        serde_json::Value::String(s) => Ok(vec![s.clone()]),
        _ => Err(bad()),
    }
}

/// Parses and audits the catalogue's bytes (read from `origin`). `build_dir`
/// (folded) is used to tell an empty suite from a build tree without tests.
/// With `keep_json`, the parsed document is kept in [`Catalogue::json`].
pub fn parse(
    bytes: &[u8],
    origin: &str,
    build_dir: &str,
    max_tests: usize,
    keep_json: bool,
) -> Result<Catalogue, Gap> {
    let malformed = |e: serde_json::Error| Gap::new(Code::CtestMalformed, format!("{origin}: {e}"));
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Gap::new(
            Code::CtestMalformed,
            format!("{origin}: file is empty"),
        ));
    }
    let check_head = |kind: &str, major: u64| -> Result<(), Gap> {
        if kind != "ctestInfo" {
            return Err(Gap::new(
                Code::CtestUnsupportedVersion,
                format!("{origin}: kind {kind:?} is not \"ctestInfo\""),
            ));
        }
        if major != 1 {
            return Err(Gap::new(
                Code::CtestUnsupportedVersion,
                format!("{origin}: json-v{major} is not supported (only major version 1)"),
            ));
        }
        Ok(())
    };
    // JSON is UTF-8 throughout, members this tool ignores included.
    let bytes = std::str::from_utf8(bytes).map_err(|e| {
        Gap::new(
            Code::CtestMalformed,
            format!("{origin}: not UTF-8 (at byte {})", e.valid_up_to()),
        )
    })?;
    // One parse on the normal path; only a failed parse is re-read for its header,
    // to tell an unsupported kind/version from malformed JSON. Kept as a
    // document, it is read from that document (a failure is parsed again from
    // the text, for serde's position in the message).
    let json = super::json_value(bytes, keep_json);
    let raw = match super::parse_json::<RawCatalogue>(bytes, json.as_ref()) {
        Ok(raw) => {
            check_head(&raw.kind, raw.version.major)?;
            raw
        }
        Err(full) => {
            let head: RawHead = serde_json::from_str(bytes).map_err(malformed)?;
            check_head(&head.kind, head.version.major)?;
            return Err(malformed(full));
        }
    };
    if raw.tests.len() > max_tests {
        return Err(Gap::new(
            Code::CtestLimitExceeded,
            format!(
                "{origin}: {} tests exceed the limit of {max_tests} (--max-tests)",
                raw.tests.len()
            ),
        ));
    }
    let mut seen: HashSet<&str> = HashSet::with_capacity(raw.tests.len());
    for t in &raw.tests {
        if t.name.is_empty() {
            return Err(Gap::new(
                Code::CtestEmptyName,
                format!("{origin}: a test has an empty name"),
            ));
        }
        if t.name.trim() != t.name || t.name.chars().any(char::is_control) {
            return Err(Gap::new(
                Code::CtestSuspiciousName,
                format!("{origin}: test name {:?}", t.name),
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(Gap::new(
                Code::CtestDuplicateName,
                format!("{origin}: test {:?} is registered twice", t.name),
            ));
        }
    }
    let mut tests = Vec::with_capacity(raw.tests.len());
    for t in raw.tests {
        let mut test = Test {
            name: t.name,
            command: t.command,
            config: t.config,
            configured: t.backtrace.is_some(),
            ..Test::default()
        };
        for p in t.properties.unwrap_or_default() {
            let slot = match p.name.as_str() {
                "LABELS" => &mut test.labels,
                "ENVIRONMENT" => &mut test.environment,
                "ENVIRONMENT_MODIFICATION" => &mut test.environment_modification,
                "REQUIRED_FILES" => &mut test.required_files,
                "DEPENDS" => &mut test.depends,
                "FIXTURES_SETUP" => &mut test.fixtures_setup,
                "FIXTURES_CLEANUP" => &mut test.fixtures_cleanup,
                "FIXTURES_REQUIRED" => &mut test.fixtures_required,
                "RESOURCE_LOCK" => &mut test.resource_lock,
                "WORKING_DIRECTORY" => {
                    let mut wd = string_list("WORKING_DIRECTORY", &test.name, &p.value)?;
                    if wd.len() > 1 {
                        return Err(Gap::new(
                            Code::CtestMalformed,
                            format!(
                                "test {:?}: WORKING_DIRECTORY has {} values",
                                test.name,
                                wd.len()
                            ),
                        ));
                    }
                    test.working_directory = wd.pop().unwrap_or_default();
                    continue;
                }
                _ => continue,
            };
            *slot = string_list(&p.name, &test.name, &p.value)?;
        }
        test.labels.sort();
        test.labels.dedup();
        tests.push(test);
    }
    if tests.is_empty() {
        let testfile = format!("{build_dir}/CTestTestfile.cmake");
        if !std::path::Path::new(&testfile).is_file() {
            return Err(Gap::new(
                Code::CtestNoTestfile,
                format!("{origin}: no tests and no {testfile}"),
            ));
        }
        if let Some(file) = registers_tests(build_dir) {
            return Err(Gap::new(
                Code::CtestCatalogueEmpty,
                format!(
                    "{origin} lists no tests, but {file} registers some: list the catalogue in the build dir with `ctest --show-only=json-v1` (multi-config generators: `ctest -C <config> --show-only=json-v1`)"
                ),
            ));
        }
    }
    Ok(Catalogue { tests, json })
}

/// The first CTestTestfile.cmake under `build_dir` (following `subdirs()`)
/// that registers a test (`add_test(`), if any. Bounded: at most 10,000 files.
fn registers_tests(build_dir: &str) -> Option<String> {
    let mut todo = vec![build_dir.to_owned()];
    let mut seen = HashSet::new();
    while let Some(dir) = todo.pop() {
        if seen.len() >= 10_000 || !seen.insert(dir.clone()) {
            continue;
        }
        let file = format!("{dir}/CTestTestfile.cmake");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let l = line.trim_start();
            if l.starts_with("add_test(") || l.starts_with("add_test (") {
                return Some(file);
            }
            if let Some(rest) = l.strip_prefix("subdirs(") {
                let sub = rest
                    .trim_end()
                    .trim_end_matches(')')
                    .trim()
                    .trim_matches('"');
                if !sub.is_empty() {
                    todo.push(crate::paths::join_fold(&dir, sub));
                }
            }
        }
    }
    None
}

/// Audits the catalogue against the codemodel of the build it should
/// describe (contract: a catalogue that lists nothing is not an empty suite):
/// * a multi-config build listed without `-C` (ctest then drops every test
///   that exists only in some configurations);
/// * no tests while the build has executables;
/// * tests, none of which runs in or names a path of this build tree.
pub fn audit_against(
    cat: &Catalogue,
    model: &crate::ingest::file_api::Codemodel,
    listed: Option<std::time::SystemTime>,
) -> Vec<Gap> {
    use crate::ingest::file_api::TargetKind;
    let artifacts = artifact_set(model);
    let mut gaps = freshness(cat, model, &artifacts, listed);
    let cfg_hint = if model.multi_config {
        format!(
            "`ctest -C <config> --show-only=json-v1` (configurations: {})",
            model.config_names.join(", ")
        )
    } else {
        "`ctest --show-only=json-v1`".to_owned()
    };
    if model.multi_config && (cat.tests.is_empty() || cat.tests.iter().any(|t| t.config.is_none()))
    {
        gaps.push(Gap::new(
            Code::CtestConfigMissing,
            format!(
                "the build uses the multi-config generator {:?} and the catalogue was listed without -C: list it in {} with {cfg_hint}",
                model.generator, model.build_root
            ),
        ));
    }
    let executables = model
        .targets
        .iter()
        .filter(|t| t.kind == TargetKind::Executable)
        .count();
    if executables == 0 {
        return gaps;
    }
    if cat.tests.is_empty() {
        gaps.push(Gap::new(
            Code::CtestCatalogueEmpty,
            format!(
                "the catalogue lists no tests while the build has {executables} executables: list it in {} with {cfg_hint}",
                model.build_root
            ),
        ));
        return gaps;
    }
    let build = &model.build_root;
    let ours = cat.tests.iter().any(|t| {
        let wd = crate::paths::fold(&t.working_directory);
        (!t.working_directory.is_empty() && crate::paths::is_within(&wd, build))
            || t.command.iter().flatten().any(|c| {
                let f = crate::paths::fold(c);
                crate::paths::is_within(&f, build) || artifacts.contains(f.as_str())
            })
    });
    if !ours {
        gaps.push(Gap::new(
            Code::CtestCatalogueForeign,
            format!(
                "no test of the catalogue runs in {build} or runs one of its artifacts: it was listed from another build tree; list it in {build} with {cfg_hint}"
            ),
        ));
    }
    gaps
}

/// Every artifact path of the codemodel (folded, as the codemodel spells it).
fn artifact_set(model: &crate::ingest::file_api::Codemodel) -> HashSet<&str> {
    model
        .targets
        .iter()
        .flat_map(|t| t.artifacts.iter().map(String::as_str))
        .collect()
}

/// The catalogue must be listed after what registers its tests was written
/// (`listed`: its modification time). A configure after the listing (the
/// reply index is newer) may have added, removed or changed `add_test`s; a
/// program rebuilt after the listing may have changed the tests a build step
/// registers for it (`gtest_discover_tests` writes them after every link).
/// Either way the suite the catalogue lists may not be the suite ctest
/// would run, so it cannot be trusted (`CTEST_CATALOGUE_STALE`). Equal
/// timestamps count as fresh.
fn freshness(
    cat: &Catalogue,
    model: &crate::ingest::file_api::Codemodel,
    artifacts: &HashSet<&str>,
    listed: Option<std::time::SystemTime>,
) -> Vec<Gap> {
    let Some(listed) = listed else {
        return vec![Gap::new(
            Code::CtestCatalogueStale,
            "the catalogue's modification time cannot be read, so it cannot be shown to be listed after the build",
        )];
    };
    if let Some(reply) = model.reply_time.filter(|r| *r > listed) {
        return vec![Gap::new(
            Code::CtestCatalogueStale,
            format!(
                "the catalogue was listed {} before the last configure of {} wrote its File API reply: re-list it",
                age(reply, listed),
                model.build_root
            ),
        )];
    }
    // The programs such a test runs: every element of its command that is an
    // artifact of the build (the program itself, or the one an emulator or
    // wrapper runs), never a test's own output file.
    let mut programs: Vec<&str> = cat
        .tests
        .iter()
        .filter(|t| !t.configured)
        .flat_map(|t| t.command.iter().flatten())
        .filter(|c| c.starts_with('/') && artifacts.contains(crate::paths::fold(c).as_str()))
        .map(String::as_str)
        .collect();
    programs.sort_unstable();
    programs.dedup();
    let newer: Vec<(&str, std::time::SystemTime)> = programs
        .into_iter()
        .filter_map(|p| {
            let m = std::fs::metadata(p).and_then(|m| m.modified()).ok()?;
            (m > listed).then_some((p, m))
        })
        .collect();
    match newer.first() {
        None => Vec::new(),
        Some(&(p, m)) => vec![Gap::new(
            Code::CtestCatalogueStale,
            format!(
                "{p} was built {} after the catalogue was listed, and a build step registers tests for it (no backtrace: gtest_discover_tests or similar){}: re-list it",
                age(m, listed),
                match newer.len() {
                    1 => String::new(),
                    n => format!("; so were {} more such programs", n - 1),
                }
            ),
        )],
    }
}

/// How much later `late` is than `early`, in words.
fn age(late: std::time::SystemTime, early: std::time::SystemTime) -> String {
    let d = late.duration_since(early).unwrap_or_default();
    if d.as_secs() >= 1 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Catalogue, Gap> {
        parse(s.as_bytes(), "ctest.json", "/nonexistent-build", 100, false)
    }

    fn code(s: &str) -> Code {
        p(s).unwrap_err().code
    }

    const HEAD: &str = r#""kind":"ctestInfo","version":{"major":1,"minor":0}"#;

    /// [`freshness`] with the model's artifacts, as [`audit_against`] calls it.
    fn fresh(
        cat: &Catalogue,
        model: &crate::ingest::file_api::Codemodel,
        listed: Option<std::time::SystemTime>,
    ) -> Vec<Gap> {
        freshness(cat, model, &artifact_set(model), listed)
    }

    #[test]
    fn a_catalogue_listed_before_the_last_configure_is_stale_and_equal_times_are_fresh() {
        use std::time::{Duration, UNIX_EPOCH};
        let t = |s| Some(UNIX_EPOCH + Duration::from_secs(s));
        let model = crate::ingest::file_api::Codemodel {
            reply_time: t(100),
            ..Default::default()
        };
        let cat = Catalogue::default();
        assert!(fresh(&cat, &model, t(100)).is_empty());
        assert!(fresh(&cat, &model, t(101)).is_empty());
        let g = fresh(&cat, &model, t(98));
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].code, Code::CtestCatalogueStale);
        assert!(
            g[0].detail.contains("2 s before the last configure"),
            "{}",
            g[0].detail
        );
        let g = fresh(&cat, &model, None);
        assert_eq!(g[0].code, Code::CtestCatalogueStale);
    }

    #[test]
    fn only_tests_without_a_backtrace_tie_the_listing_to_their_program() {
        use std::time::{Duration, SystemTime};
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("prog");
        std::fs::write(&prog, b"").unwrap();
        let built = std::fs::metadata(&prog).unwrap().modified().unwrap();
        let mut model = crate::ingest::file_api::Codemodel::default();
        model.targets.push(crate::ingest::file_api::Target {
            artifacts: vec![crate::paths::fold(&prog.display().to_string())],
            ..Default::default()
        });
        let test = |configured| Test {
            name: "t".into(),
            command: Some(vec![prog.display().to_string()]),
            configured,
            ..Test::default()
        };
        let before: Option<SystemTime> = Some(built - Duration::from_secs(5));
        let cat = |configured| Catalogue {
            tests: vec![test(configured)],
            json: None,
        };
        assert!(fresh(&cat(true), &model, before).is_empty());
        let g = fresh(&cat(false), &model, before);
        assert_eq!(g.len(), 1);
        assert!(
            g[0].detail
                .contains("was built 5 s after the catalogue was listed"),
            "{}",
            g[0].detail
        );
        assert!(fresh(&cat(false), &model, Some(built)).is_empty());
        // Behind an emulator, the program is still the artifact it runs; a
        // newer file that is no artifact (a test's own output) does not count.
        let out = dir.path().join("out.txt");
        std::fs::write(&out, b"").unwrap();
        let wrapped = |args: Vec<String>| Catalogue {
            tests: vec![Test {
                name: "t".into(),
                command: Some(args),
                ..Test::default()
            }],
            json: None,
        };
        let emu = "/usr/bin/qemu-x86_64".to_owned();
        let g = fresh(
            &wrapped(vec![emu.clone(), prog.display().to_string()]),
            &model,
            before,
        );
        assert_eq!(g.len(), 1, "{g:?}");
        let g = fresh(
            &wrapped(vec![emu, out.display().to_string()]),
            &model,
            before,
        );
        assert!(g.is_empty(), "{g:?}");
    }

    #[test]
    fn a_kept_document_gives_the_same_catalogue_and_the_same_messages() {
        let keep = |s: &str| parse(s.as_bytes(), "ctest.json", "/nonexistent-build", 100, true);
        let ok = format!(
            r#"{{{HEAD},"tests":[{{"name":"a","command":["/bin/a"],"properties":[{{"name":"LABELS","value":["x"]}}]}}]}}"#
        );
        let (kept, plain) = (keep(&ok).unwrap(), p(&ok).unwrap());
        assert_eq!(kept.tests, plain.tests);
        assert!(plain.json.is_none());
        assert_eq!(kept.json.unwrap()["tests"][0]["name"], "a");
        // A type error read from the kept document is reported as from the text (with its position).
        let bad = format!(r#"{{{HEAD},"tests":[{{"name":7}}]}}"#);
        let (k, q) = (keep(&bad).unwrap_err(), p(&bad).unwrap_err());
        assert_eq!((k.code, k.to_string()), (q.code, q.to_string()));
        assert!(q.to_string().contains("column"), "{q}");
    }

    #[test]
    fn good_catalogue() {
        let c = p(&format!(
            r#"{{{HEAD},"backtraceGraph":{{}},"tests":[
              {{"name":"a.basic","command":["/b/t","--x"],"properties":[{{"name":"LABELS","value":["unit","fast"]}},{{"name":"WORKING_DIRECTORY","value":"/b"}}]}},
              {{"name":"excl","properties":[]}},
              {{"name":"A.basic","command":["/b/t"],"config":"Debug","newMember":42}}]}}"#
        ))
        .unwrap();
        assert_eq!(c.tests.len(), 3);
        assert_eq!(c.tests[0].labels, vec!["fast", "unit"]);
        assert_eq!(c.tests[1].command, None);
        assert_eq!(c.tests[2].config.as_deref(), Some("Debug"));
    }

    #[test]
    fn invalid_utf8_is_malformed_even_in_an_ignored_member() {
        let good = format!(r#"{{{HEAD},"zz":"ok","tests":[{{"name":"a","command":["/b/t"]}}]}}"#);
        assert!(p(&good).is_ok());
        // Byte 0xFF inside the member this tool does not read.
        let bytes = good.replacen(r#""ok""#, "\"o\u{1}\"", 1).into_bytes();
        let bytes: Vec<u8> = bytes
            .into_iter()
            .map(|b| if b == 1 { 0xff } else { b })
            .collect();
        let err = parse(&bytes, "ctest.json", "/nonexistent-build", 100, false).unwrap_err();
        assert_eq!(err.code, Code::CtestMalformed);
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }

    #[test]
    fn bad_catalogues() {
        assert_eq!(code(""), Code::CtestMalformed);
        assert_eq!(code("{"), Code::CtestMalformed);
        assert_eq!(code("\u{feff}{}"), Code::CtestMalformed);
        assert_eq!(
            code(r#"{"kind":"ctestInfo","version":{"major":2,"minor":0},"tests":[]}"#),
            Code::CtestUnsupportedVersion
        );
        assert_eq!(
            code(r#"{"kind":"other","version":{"major":1,"minor":0},"tests":[]}"#),
            Code::CtestUnsupportedVersion
        );
        assert_eq!(
            code(
                r#"{"kind":"ctestInfo","kind":"ctestInfo","version":{"major":1,"minor":0},"tests":[]}"#
            ),
            Code::CtestMalformed
        );
        assert_eq!(
            code(r#"{"kind":"ctestInfo","version":{"major":1e40,"minor":0},"tests":[]}"#),
            Code::CtestMalformed
        );
        assert_eq!(
            code(r#"{"kind":"ctestInfo","version":{"major":-1,"minor":0},"tests":[]}"#),
            Code::CtestMalformed
        );
        assert_eq!(code(&format!(r#"{{{HEAD}}}"#)), Code::CtestMalformed);
        assert_eq!(
            code(&format!(r#"{{{HEAD},"tests":{{}}}}"#)),
            Code::CtestMalformed
        );
        assert_eq!(
            code(&format!(r#"{{{HEAD},"tests":[{{"name":""}}]}}"#)),
            Code::CtestEmptyName
        );
        assert_eq!(
            code(&format!(r#"{{{HEAD},"tests":[{{"name":"a "}}]}}"#)),
            Code::CtestSuspiciousName
        );
        assert_eq!(
            code(&format!(r#"{{{HEAD},"tests":[{{"name":"a\nb"}}]}}"#)),
            Code::CtestSuspiciousName
        );
        assert_eq!(
            code(&format!(
                r#"{{{HEAD},"tests":[{{"name":"a"}},{{"name":"a"}}]}}"#
            )),
            Code::CtestDuplicateName
        );
        assert_eq!(
            code(&format!(
                r#"{{{HEAD},"tests":[{{"name":"a","command":"x"}}]}}"#
            )),
            Code::CtestMalformed
        );
        assert_eq!(
            code(&format!(
                r#"{{{HEAD},"tests":[{{"name":"a","properties":[{{"name":"LABELS","value":[1]}}]}}]}}"#
            )),
            Code::CtestMalformed
        );
        assert_eq!(
            code(&format!(r#"{{{HEAD},"tests":[]}}"#)),
            Code::CtestNoTestfile
        );
        let many: Vec<String> = (0..101).map(|i| format!(r#"{{"name":"t{i}"}}"#)).collect();
        assert_eq!(
            code(&format!(r#"{{{HEAD},"tests":[{}]}}"#, many.join(","))),
            Code::CtestLimitExceeded
        );
    }

    #[test]
    fn names_differing_in_case_are_distinct() {
        let c = p(&format!(
            r#"{{{HEAD},"tests":[{{"name":"a"}},{{"name":"A"}}]}}"#
        ))
        .unwrap();
        assert_eq!(c.tests.len(), 2);
    }
}
