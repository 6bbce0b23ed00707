//! Property tests over whole evidence sets (issue 3 §4): an arbitrary byte
//! mutation of any evidence file of a real fixture build never panics and never
//! yields SUBSET_SELECTED omitting more tests than the unmutated run; a fallback
//! baseline never becomes a subset. Parsers are also fed arbitrary bytes.
//!
//! Bounded: PROPTEST_CASES (default 96 per property) keeps CI within minutes.

mod common;

use common::*;
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

struct Fx {
    built: Built,
    files: Vec<PathBuf>,
}

fn fx() -> &'static Mutex<Fx> {
    static F: OnceLock<Mutex<Fx>> = OnceLock::new();
    F.get_or_init(|| {
        let built = build_fixture(&[]);
        let mut files = vec![built.ctest_json(), built.deps()];
        for e in std::fs::read_dir(built.reply_dir()).unwrap() {
            files.push(e.unwrap().path());
        }
        for l in std::fs::read_to_string(built.deps()).unwrap().lines() {
            files.push(PathBuf::from(l));
        }
        files.sort();
        Mutex::new(Fx { built, files })
    })
}

/// Runs the analysis in-process; returns (exit code, stdout names).
fn run_in_process(b: &Built, changed: &str) -> (u8, Vec<String>) {
    let mut args: Vec<std::ffi::OsString> = vec!["diff2test".into()];
    args.extend(b.base_args().into_iter().map(Into::into));
    args.push("--changed".into());
    args.push(changed.into());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = diff2test::run(args, &mut std::io::empty(), &mut out, &mut err);
    let names = String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_owned)
        .collect();
    (code, names)
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace { pos: usize, byte: u8 },
    Delete { pos: usize },
    Truncate { pos: usize },
    Insert { pos: usize, byte: u8 },
}

fn mutation() -> impl Strategy<Value = (usize, Mutation)> {
    (
        any::<usize>(),
        prop_oneof![
            (any::<usize>(), any::<u8>()).prop_map(|(pos, byte)| Mutation::Replace { pos, byte }),
            any::<usize>().prop_map(|pos| Mutation::Delete { pos }),
            any::<usize>().prop_map(|pos| Mutation::Truncate { pos }),
            (any::<usize>(), any::<u8>()).prop_map(|(pos, byte)| Mutation::Insert { pos, byte }),
        ],
    )
}

fn apply(bytes: &[u8], m: &Mutation) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if v.is_empty() {
        return v;
    }
    match *m {
        Mutation::Replace { pos, byte } => {
            let i = pos % v.len();
            v[i] = if v[i] == byte {
                byte.wrapping_add(1)
            } else {
                byte
            };
        }
        Mutation::Delete { pos } => {
            v.remove(pos % v.len());
        }
        Mutation::Truncate { pos } => v.truncate(pos % v.len()),
        Mutation::Insert { pos, byte } => v.insert(pos % (v.len() + 1), byte),
    }
    v
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn byte_mutations_never_widen_the_omitted_set((which, m) in mutation()) {
        let guard = fx().lock().unwrap_or_else(|p| p.into_inner());
        let b = &guard.built;
        let (base_code, base_names) = run_in_process(b, "libs/core/include/core/core.hpp");
        prop_assert_eq!(base_code, 0);
        let (fb_code, _) = run_in_process(b, "README.md");
        prop_assert_eq!(fb_code, 3);

        let file = &guard.files[which % guard.files.len()];
        let orig = std::fs::read(file).unwrap();
        let mtime = filetime::FileTime::from_last_modification_time(&std::fs::metadata(file).unwrap());
        let mutated = apply(&orig, &m);
        // A mutated catalogue may rename a test (a byte of a name): then the
        // old name cannot be selected, and only the tests it still lists count.
        let listed: Vec<String> = if file.ends_with("ctest.json") {
            serde_json::from_slice::<serde_json::Value>(&mutated)
                .ok()
                .and_then(|v| v["tests"].as_array().cloned())
                .map(|tests| tests.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        } else {
            ALL_TESTS.iter().map(|s| s.to_string()).collect()
        };
        std::fs::write(file, &mutated).unwrap();
        filetime::set_file_mtime(file, mtime).unwrap();

        let (code, names) = run_in_process(b, "libs/core/include/core/core.hpp");
        let (code_fb, _) = run_in_process(b, "README.md");

        std::fs::write(file, &orig).unwrap();
        filetime::set_file_mtime(file, mtime).unwrap();

        prop_assert!(matches!(code, 0 | 3 | 4), "exit {} for {:?} on {}", code, m, file.display());
        prop_assert!(matches!(code_fb, 3 | 4), "fallback baseline became exit {} for {:?} on {}", code_fb, m, file.display());
        if code == 0 {
            let omitted = listed.len().saturating_sub(names.len());
            let base_omitted = ALL_TESTS.len() - base_names.len();
            prop_assert!(omitted <= base_omitted, "mutation {:?} of {} omitted {} tests (baseline {}): {:?}", m, file.display(), omitted, base_omitted, names);
            for n in base_names.iter().filter(|n| listed.contains(n)) {
                prop_assert!(names.contains(n), "mutation {:?} of {} dropped {}", m, file.display(), n);
            }
        }
    }

    #[test]
    fn ctest_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = diff2test::ingest::ctest::parse(&bytes, "fuzz.json", "/nonexistent", 1000, false);
    }

    #[test]
    fn ctest_parser_survives_mutated_valid_json((pos, byte) in (any::<usize>(), any::<u8>())) {
        let good = br#"{"kind":"ctestInfo","version":{"major":1,"minor":0},"tests":[{"name":"a","command":["/b/t"],"properties":[{"name":"LABELS","value":["x"]}]}]}"#;
        let mut v = good.to_vec();
        let i = pos % v.len();
        v[i] = byte;
        if let Ok(c) = diff2test::ingest::ctest::parse(&v, "fuzz.json", "/nonexistent", 1000, false) {
            prop_assert!(c.tests.iter().all(|t| !t.name.is_empty()));
        }
    }

    #[test]
    fn path_folding_never_escapes_by_accident(base in "/[a-z]{1,3}(/[a-z]{1,3}){0,3}", rel in "([a-z.]{1,3}/){0,5}[a-z.]{0,3}") {
        let joined = diff2test::paths::join_fold(&base, &rel);
        prop_assert_eq!(diff2test::paths::fold(&joined), joined.clone());
        // A path with no `..` segment cannot leave its base.
        if !rel.split('/').any(|s| s == "..") {
            prop_assert!(diff2test::paths::is_within(&joined, &base), "{} left {}", joined, base);
        }
    }
}
