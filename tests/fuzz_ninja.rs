//! Property tests of the deps-log reader: byte mutations and truncations of a
//! log real ninja wrote never panic, and whatever is accepted is consistent;
//! byte mutations of the manifest (`build.ninja`, `rules.ninja`) and the
//! build log (`.ninja_log`) of that build never panic either, and unmutated,
//! every command the manifest gives hashes to what ninja logged;
//! arbitrary records after a valid header likewise; and the writer's logs
//! read back as the last record per output.
//!
//! The real log comes from a tiny CMake project built with `-G Ninja` (cmake,
//! ninja and g++ required: `apt-get install cmake ninja-build g++`).
//! Bounded: PROPTEST_CASES (default 256 per property).

use std::collections::HashMap;
use std::process::Command;
use std::sync::OnceLock;

use diff2test::ingest::ninja_deps::{self, DepsLog};
use diff2test::ingest::{ninja_log, ninja_manifest};
use proptest::prelude::*;

mod common;

fn run(cmd: &mut Command) {
    common::run_ok(cmd);
}

/// The build tree of a two-object project built with `-G Ninja`, rebuilt once
/// so its deps log holds a superseded record too (kept for the whole run).
struct RealBuild {
    _dir: tempfile::TempDir,
    build: std::path::PathBuf,
    deps_log: Vec<u8>,
}

/// `.ninja_deps` of [`real_build`].
fn real_log() -> &'static [u8] {
    &real_build().deps_log
}

fn real_build() -> &'static RealBuild {
    static LOG: OnceLock<RealBuild> = OnceLock::new();
    LOG.get_or_init(|| {
        common::require(
            "the ninja deps log fuzz test",
            &[("cmake", "cmake"), ("ninja", "ninja-build"), ("g++", "g++")],
        );
        let dir = tempfile::Builder::new()
            .prefix("d2t-fuzz-ninja-")
            .tempdir_in(common::scratch_root())
            .unwrap();
        let (src, build) = (dir.path().join("src"), dir.path().join("build"));
        std::fs::create_dir_all(&src).unwrap();
        for (name, text) in [
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.16)\nproject(t CXX)\n\
                 add_library(t STATIC a.cpp sub/b.cpp)\n",
            ),
            ("a.hpp", "#pragma once\nint fa();\n"),
            (
                "a.cpp",
                "#include \"a.hpp\"\n#include <vector>\nint fa() { return 1; }\n",
            ),
            (
                "sub/b.cpp",
                "#include \"../a.hpp\"\nint fb() { return fa(); }\n",
            ),
        ] {
            std::fs::create_dir_all(src.join(name).parent().unwrap()).unwrap();
            std::fs::write(src.join(name), text).unwrap();
        }
        run(Command::new("cmake")
            .arg("-S")
            .arg(&src)
            .arg("-B")
            .arg(&build)
            .args(["-G", "Ninja"]));
        run(Command::new("ninja").arg("-C").arg(&build));
        let b = src.join("sub/b.cpp");
        std::fs::write(&b, "#include <cstdio>\nint fb() { return 2; }\n").unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        filetime::set_file_mtime(&b, later.into()).unwrap();
        run(Command::new("ninja").arg("-C").arg(&build));
        let bytes = std::fs::read(build.join(".ninja_deps")).unwrap();
        let log = ninja_deps::parse(&bytes).expect("the real log parses");
        assert_eq!(log.dead_outputs(), 1);
        RealBuild {
            _dir: dir,
            build,
            deps_log: bytes,
        }
    })
}

/// Every command the manifest gives, by output (the real build, or `dir`).
fn commands_in(dir: &std::path::Path) -> Result<HashMap<String, String>, String> {
    let reader = diff2test::ingest::Reader::new(diff2test::ingest::Limits::default());
    let mut all = HashMap::new();
    ninja_manifest::for_each_command(
        &reader,
        dir.to_str().unwrap(),
        "build.ninja",
        None,
        |o, c| {
            all.insert(o.to_owned(), c.to_owned());
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(all)
}

/// The evaluator against real ninja: every output `.ninja_log` holds (the
/// objects and the library) hashes, from the manifest CMake wrote, to the
/// hash ninja logged for it.
#[test]
fn every_logged_command_is_the_manifests() {
    let b = real_build();
    let log = ninja_log::parse(&std::fs::read(b.build.join(".ninja_log")).unwrap()).unwrap();
    let commands = commands_in(&b.build).unwrap();
    let mut checked = 0;
    for (out, &hash) in &log.hashes {
        let cmd = commands
            .get(out)
            .unwrap_or_else(|| panic!("no edge builds {out}"));
        assert_eq!(log.hash(cmd.as_bytes()), hash, "{out}: {cmd}");
        checked += 1;
    }
    assert!(
        checked >= 3,
        "objects and the library: {:?}",
        log.hashes.keys()
    );
}

/// `build.ninja` and `CMakeFiles/rules.ninja` of the real build, with `m`
/// applied to one of them, written into a fresh directory.
fn mutated_manifest(ms: &[Mutation], rules: bool) -> tempfile::TempDir {
    let b = real_build();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("CMakeFiles")).unwrap();
    for (name, mutate) in [("build.ninja", !rules), ("CMakeFiles/rules.ninja", rules)] {
        let mut bytes = std::fs::read(b.build.join(name)).unwrap();
        if mutate {
            for m in ms {
                apply(&mut bytes, m);
            }
        }
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

/// What every accepted log must satisfy.
fn check_consistent(log: &DepsLog) {
    let n = log.paths.len();
    let mut seen = std::collections::HashSet::new();
    for p in &log.paths {
        assert!(!p.is_empty() && !p.contains('\0'));
        assert!(seen.insert(p.as_str()), "path {p:?} twice");
    }
    for w in log.records.windows(2) {
        assert!(
            log.paths[w[0].output as usize] < log.paths[w[1].output as usize],
            "records sorted by output path, one per output"
        );
    }
    for r in &log.records {
        assert!((r.output as usize) < n);
        assert!(r.inputs.iter().all(|&i| (i as usize) < n));
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(prop::sample::Index, u8),
    Delete(prop::sample::Index),
    Insert(prop::sample::Index, u8),
    Truncate(prop::sample::Index),
    /// Sets or clears bit 31 of the 4-byte word at the index (record heads).
    FlipHigh(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        any::<prop::sample::Index>().prop_map(Mutation::FlipHigh),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    match m {
        Mutation::Replace(i, b) => {
            let at = i.index(bytes.len());
            bytes[at] = *b;
        }
        Mutation::Delete(i) => {
            bytes.remove(i.index(bytes.len()));
        }
        Mutation::Insert(i, b) => {
            let at = i.index(bytes.len() + 1);
            bytes.insert(at, *b);
        }
        Mutation::Truncate(i) => bytes.truncate(i.index(bytes.len())),
        Mutation::FlipHigh(i) => {
            let at = i.index(bytes.len()) & !3;
            if at + 3 < bytes.len() {
                bytes[at + 3] ^= 0x80;
            }
        }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

fn header() -> Vec<u8> {
    let mut v = ninja_deps::SIGNATURE.to_vec();
    v.extend_from_slice(&ninja_deps::VERSION.to_le_bytes());
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_log_never_panics(ms in prop::collection::vec(mutation(), 1..4)) {
        let mut bytes = real_log().to_vec();
        for m in &ms {
            apply(&mut bytes, m);
        }
        if let Ok(log) = ninja_deps::parse(&bytes) {
            check_consistent(&log);
        }
    }

    #[test]
    fn mutated_real_manifest_never_panics(ms in prop::collection::vec(mutation(), 1..4), rules in any::<bool>()) {
        let dir = mutated_manifest(&ms, rules);
        // Accepted or refused, never a panic; what is accepted names real outputs.
        if let Ok(all) = commands_in(dir.path()) {
            prop_assert!(all.keys().all(|o| !o.is_empty()));
        }
    }

    #[test]
    fn mutated_real_build_log_never_panics(ms in prop::collection::vec(mutation(), 1..4)) {
        let mut bytes = std::fs::read(real_build().build.join(".ninja_log")).unwrap();
        for m in &ms {
            apply(&mut bytes, m);
        }
        if let Ok(log) = ninja_log::parse(&bytes) {
            prop_assert!((5..=7).contains(&log.version));
        }
    }

    #[test]
    fn every_truncation_of_the_real_log_is_handled(i in any::<prop::sample::Index>()) {
        let bytes = real_log();
        let n = i.index(bytes.len());
        match ninja_deps::parse(&bytes[..n]) {
            Ok(log) => check_consistent(&log),
            Err(e) => prop_assert!(matches!(
                e,
                ninja_deps::DepsLogError::Truncated { .. } | ninja_deps::DepsLogError::BadSignature
            ), "{e}"),
        }
    }

    #[test]
    fn arbitrary_records_after_a_header_never_panic(
        words in prop::collection::vec(any::<u32>(), 0..64),
        tail in prop::collection::vec(any::<u8>(), 0..4),
        small in any::<bool>(),
    ) {
        let mut bytes = header();
        for w in words {
            // Small sizes and ids make deeper records reachable.
            let w = if small { w & 0x8000_003f } else { w };
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes.extend_from_slice(&tail);
        if let Ok(log) = ninja_deps::parse(&bytes) {
            check_consistent(&log);
        }
    }

    #[test]
    fn written_logs_read_back_as_the_last_record_per_output(
        recs in prop::collection::vec(
            (0usize..6, 0u64..4, prop::collection::vec(0usize..10, 0..6)),
            0..24,
        ),
    ) {
        let names = ["a.o", "sub/b.o", "../x/c.o", "/abs/d.o", "e", "f.o"];
        let files = ["a.c", "x.h", "../inc/y.h", "/usr/include/z.h", "sub/./w.h",
                     "é.h", "b.hh", "c.hpp", "d", "longer/path/name.h"];
        let ins: Vec<Vec<&str>> = recs.iter().map(|(_, _, i)| i.iter().map(|&k| files[k]).collect()).collect();
        let log: Vec<(&str, u64, &[&str])> = recs.iter().zip(&ins)
            .map(|((o, m, _), i)| (names[*o], *m, i.as_slice())).collect();
        let parsed = ninja_deps::parse(&ninja_deps::write(&log)).unwrap();
        check_consistent(&parsed);
        // Model: last (mtime, inputs) per output; a record equal to the
        // output's current one is not written (ninja's RecordDeps).
        let mut model: HashMap<&str, (u64, Vec<&str>)> = HashMap::new();
        let mut written = 0;
        for (o, m, i) in &log {
            let v = (*m, i.to_vec());
            if model.get(o) != Some(&v) {
                written += 1;
                model.insert(o, v);
            }
        }
        prop_assert_eq!(parsed.records.len(), model.len());
        prop_assert_eq!(parsed.dead_outputs(), written - model.len());
        for r in &parsed.records {
            let (m, i) = &model[parsed.paths[r.output as usize].as_str()];
            prop_assert_eq!(r.mtime_ns, *m);
            let got: Vec<&str> = r.inputs.iter().map(|&k| parsed.paths[k as usize].as_str()).collect();
            prop_assert_eq!(&got, i);
        }
    }
}
