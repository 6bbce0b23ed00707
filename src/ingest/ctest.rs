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
#[derive(Clone, Debug, PartialEq)]
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
}

/// The whole catalogue, in file order.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    /// Registered tests.
    pub tests: Vec<Test>,
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
pub fn parse(
    bytes: &[u8],
    origin: &str,
    build_dir: &str,
    max_tests: usize,
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
    // to tell an unsupported kind/version from malformed JSON.
    let raw: RawCatalogue = match serde_json::from_str::<RawCatalogue>(bytes) {
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
        let mut labels = Vec::new();
        let mut environment = Vec::new();
        for p in t.properties.unwrap_or_default() {
            match p.name.as_str() {
                "LABELS" => labels = string_list("LABELS", &t.name, &p.value)?,
                "ENVIRONMENT" => environment = string_list("ENVIRONMENT", &t.name, &p.value)?,
                _ => {}
            }
        }
        labels.sort();
        labels.dedup();
        tests.push(Test {
            name: t.name,
            command: t.command,
            config: t.config,
            labels,
            environment,
        });
    }
    if tests.is_empty() {
        let testfile = format!("{build_dir}/CTestTestfile.cmake");
        if !std::path::Path::new(&testfile).is_file() {
            return Err(Gap::new(
                Code::CtestNoTestfile,
                format!("{origin}: no tests and no {testfile}"),
            ));
        }
    }
    Ok(Catalogue { tests })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Catalogue, Gap> {
        parse(s.as_bytes(), "ctest.json", "/nonexistent-build", 100)
    }

    fn code(s: &str) -> Code {
        p(s).unwrap_err().code
    }

    const HEAD: &str = r#""kind":"ctestInfo","version":{"major":1,"minor":0}"#;

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
        let err = parse(&bytes, "ctest.json", "/nonexistent-build", 100).unwrap_err();
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
