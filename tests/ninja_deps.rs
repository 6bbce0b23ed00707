//! The deps-log reader against logs real ninja writes: a tiny CMake project is
//! configured with `-G Ninja` and built, then `BUILD/.ninja_deps` is parsed and
//! compared with the objects on disk and with what `ninja_deps::write` writes.
//!
//! cmake, ninja and g++ are required; a missing one fails the test naming
//! the apt package (`cmake`, `ninja-build`, `g++`). Nothing is skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, UNIX_EPOCH};

use diff2test::ingest::ninja_deps::{self, DepsLog, Record};

mod common;

fn require_tools() {
    common::require(
        "the ninja deps log tests",
        &[("cmake", "cmake"), ("ninja", "ninja-build"), ("g++", "g++")],
    );
}

fn run(cmd: &mut Command) {
    common::run_ok(cmd);
}

struct Proj {
    _dir: tempfile::TempDir,
    src: PathBuf,
    build: PathBuf,
}

impl Proj {
    /// Writes, configures (`-G Ninja`) and builds the project.
    fn build() -> Proj {
        require_tools();
        let dir = tempfile::Builder::new()
            .prefix("d2t-ninja-")
            .tempdir_in(common::scratch_root())
            .unwrap();
        let src = dir.path().join("src");
        let build = dir.path().join("build");
        std::fs::create_dir_all(&src).unwrap();
        for (name, text) in [
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.16)\nproject(t CXX)\n\
                 add_library(t STATIC a.cpp b.cpp)\n",
            ),
            ("a.hpp", "#pragma once\nint fa();\n"),
            ("b.hpp", "#pragma once\nint fb2();\n"),
            ("a.cpp", "#include \"a.hpp\"\nint fa() { return 1; }\n"),
            ("b.cpp", "#include \"a.hpp\"\nint fb() { return fa(); }\n"),
        ] {
            std::fs::write(src.join(name), text).unwrap();
        }
        run(Command::new("cmake")
            .arg("-S")
            .arg(&src)
            .arg("-B")
            .arg(&build)
            .args(["-G", "Ninja"]));
        let p = Proj {
            _dir: dir,
            src,
            build,
        };
        p.ninja(&[]);
        p
    }

    fn ninja(&self, args: &[&str]) {
        run(Command::new("ninja").arg("-C").arg(&self.build).args(args));
    }

    fn deps_bytes(&self) -> Vec<u8> {
        std::fs::read(self.build.join(".ninja_deps")).expect("read BUILD/.ninja_deps")
    }

    fn s(p: &Path) -> &str {
        p.to_str().expect("UTF-8 temp path")
    }

    fn mtime_ns(&self, rel: &str) -> u64 {
        let m = std::fs::metadata(self.build.join(rel))
            .unwrap()
            .modified()
            .unwrap();
        m.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
    }

    /// The resolved input paths of `output`'s record.
    fn inputs(&self, log: &DepsLog, output: &str) -> Vec<String> {
        let r = log
            .get(output)
            .unwrap_or_else(|| panic!("no record for {output}"));
        r.inputs
            .iter()
            .map(|&i| log.resolve(Self::s(&self.build), i))
            .collect()
    }
}

/// The writer's input for `records`, in the given order.
fn as_tuples<'a>(log: &'a DepsLog, records: &[&Record]) -> Vec<(&'a str, u64, Vec<&'a str>)> {
    records
        .iter()
        .map(|r| {
            (
                log.paths[r.output as usize].as_str(),
                r.mtime_ns,
                r.inputs
                    .iter()
                    .map(|&i| log.paths[i as usize].as_str())
                    .collect(),
            )
        })
        .collect()
}

fn write_tuples(t: &[(&str, u64, Vec<&str>)]) -> Vec<u8> {
    let borrowed: Vec<(&str, u64, &[&str])> =
        t.iter().map(|(o, m, i)| (*o, *m, i.as_slice())).collect();
    ninja_deps::write(&borrowed)
}

/// Resolved `(output, mtime, inputs)` of every live record, sorted.
fn resolved(log: &DepsLog, build: &str) -> Vec<(String, u64, Vec<String>)> {
    log.records
        .iter()
        .map(|r| {
            (
                log.resolve(build, r.output),
                r.mtime_ns,
                r.inputs.iter().map(|&i| log.resolve(build, i)).collect(),
            )
        })
        .collect()
}

#[test]
fn real_ninja_log_lists_source_first_header_and_output_mtime() {
    let p = Proj::build();
    let bytes = p.deps_bytes();
    assert!(ninja_deps::is_deps_log(&bytes));
    let log = ninja_deps::parse(&bytes).expect("parse the log ninja wrote");
    assert_eq!(log.dead_outputs(), 0);
    assert_eq!(log.records.len(), 2, "{:?}", log.paths);

    let src = Proj::s(&p.src);
    for (obj, source) in [
        ("CMakeFiles/t.dir/a.cpp.o", "a.cpp"),
        ("CMakeFiles/t.dir/b.cpp.o", "b.cpp"),
    ] {
        let inputs = p.inputs(&log, obj);
        assert_eq!(inputs[0], format!("{src}/{source}"), "main source first");
        assert!(
            inputs.contains(&format!("{src}/a.hpp")),
            "{obj} lists a.hpp: {inputs:?}"
        );
        assert!(!inputs.contains(&format!("{src}/b.hpp")));
        // Builder::FinishCommand records a Stat of the output after the command.
        assert_eq!(log.get(obj).unwrap().mtime_ns, p.mtime_ns(obj), "{obj}");
    }
    // Outputs are kept as build.ninja spells them (relative to the build dir).
    let r = log.get("CMakeFiles/t.dir/a.cpp.o").unwrap();
    assert_eq!(log.paths[r.output as usize], "CMakeFiles/t.dir/a.cpp.o");
    assert_eq!(
        log.resolve(Proj::s(&p.build), r.output),
        format!("{}/CMakeFiles/t.dir/a.cpp.o", Proj::s(&p.build))
    );
}

#[test]
fn writer_reproduces_real_log_bytes_and_replacement() {
    let p = Proj::build();
    let bytes = p.deps_bytes();
    let log = ninja_deps::parse(&bytes).unwrap();
    // A fresh build writes each output's path record just before its deps
    // record, so output-id order is the order ninja recorded them.
    let mut order: Vec<&Record> = log.records.iter().collect();
    order.sort_by_key(|r| r.output);
    let first = as_tuples(&log, &order);
    assert_eq!(
        write_tuples(&first),
        bytes,
        "writer matches ninja byte for byte"
    );
    assert_eq!(ninja_deps::parse(&write_tuples(&first)).unwrap(), log);

    // b.cpp now includes b.hpp: ninja appends a path record for the new
    // header and a second deps record for b.cpp.o, which replaces the first.
    std::fs::write(
        p.src.join("b.cpp"),
        "#include \"a.hpp\"\n#include \"b.hpp\"\nint fb() { return fa(); }\n",
    )
    .unwrap();
    let later = std::time::SystemTime::now() + Duration::from_secs(5);
    filetime::set_file_mtime(p.src.join("b.cpp"), later.into()).unwrap();
    p.ninja(&[]);
    let bytes2 = p.deps_bytes();
    assert!(bytes2.starts_with(&bytes), "ninja appends");
    let log2 = ninja_deps::parse(&bytes2).unwrap();
    assert_eq!(log2.dead_outputs(), 1);
    assert_eq!(log2.records.len(), 2);
    let b = "CMakeFiles/t.dir/b.cpp.o";
    let src = Proj::s(&p.src);
    assert!(p.inputs(&log2, b).contains(&format!("{src}/b.hpp")));
    assert_eq!(log2.get(b).unwrap().mtime_ns, p.mtime_ns(b));
    assert_ne!(log2.get(b), log.get(b));
    assert_eq!(
        p.inputs(&log2, "CMakeFiles/t.dir/a.cpp.o"),
        p.inputs(&log, "CMakeFiles/t.dir/a.cpp.o")
    );
    // The same history through the writer gives the same bytes.
    let mut history = first.clone();
    history.extend(as_tuples(&log2, &[log2.get(b).unwrap()]));
    assert_eq!(write_tuples(&history), bytes2);

    // Recompaction renumbers ids but keeps the live records.
    p.ninja(&["-t", "recompact"]);
    let log3 = ninja_deps::parse(&p.deps_bytes()).unwrap();
    assert_eq!(log3.dead_outputs(), 0);
    let build = Proj::s(&p.build);
    assert_eq!(resolved(&log3, build), resolved(&log2, build));
}

#[test]
fn real_log_rewritten_by_write_parses_to_the_same_records() {
    let p = Proj::build();
    let log = ninja_deps::parse(&p.deps_bytes()).unwrap();
    // Sorted-by-path order: ids differ from ninja's, records do not.
    let all: Vec<&Record> = log.records.iter().collect();
    let again = ninja_deps::parse(&write_tuples(&as_tuples(&log, &all))).unwrap();
    let build = Proj::s(&p.build);
    assert_eq!(resolved(&again, build), resolved(&log, build));
    // Any strict prefix that is not a record boundary is a torn tail.
    let bytes = p.deps_bytes();
    for n in 0..bytes.len() {
        if let Err(e) = ninja_deps::parse(&bytes[..n]) {
            assert!(
                matches!(
                    e,
                    ninja_deps::DepsLogError::Truncated { .. }
                        | ninja_deps::DepsLogError::BadSignature
                ),
                "prefix {n}: {e}"
            );
        }
    }
}

#[test]
fn synthetic_llvm_scale_log_parse_speed() {
    // 5,000 objects with 500 headers each from a pool of 12,000 (~10 MB): the
    // shape of an LLVM build's log.
    let headers: Vec<String> = (0..12_000)
        .map(|i| format!("/src/llvm/include/llvm/Dir{}/Header{i}.h", i % 89))
        .collect();
    let objs: Vec<(String, Vec<&str>)> = (0..5_000)
        .map(|i| {
            let ins = (0..500).map(|k| headers[(i * 13 + k * 41) % headers.len()].as_str());
            (
                format!("lib/X{}/CMakeFiles/o.dir/F{i}.cpp.o", i % 40),
                ins.collect(),
            )
        })
        .collect();
    let recs: Vec<(&str, u64, &[&str])> = objs
        .iter()
        .enumerate()
        .map(|(i, (o, ins))| {
            (
                o.as_str(),
                1_700_000_000_000_000_000 + i as u64,
                ins.as_slice(),
            )
        })
        .collect();
    let bytes = ninja_deps::write(&recs);
    let t = Instant::now();
    let log = ninja_deps::parse(&bytes).unwrap();
    let took = t.elapsed();
    assert_eq!(log.records.len(), 5_000);
    let mb = bytes.len() as f64 / (1 << 20) as f64;
    eprintln!(
        "parsed {mb:.1} MB in {took:?} ({:.0} MB/s)",
        mb / took.as_secs_f64()
    );
    assert!(took < Duration::from_secs(2));
}
