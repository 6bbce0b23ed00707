//! Deterministic synthetic build generator for benchmarks and smoke tests.
//!
//! ```text
//! cargo run --release --example synth -- --preset llvm --out DIR [--seed N]
//! cargo run --release --example synth -- --preset llvm-ninja --out DIR [--seed N]
//! ```
//!
//! Writes `DIR/src` (a real, configurable and buildable CMake project: every
//! `CMakeLists.txt`, `.cpp` and `.hpp` exists and compiles) and `DIR/build`, the
//! evidence that CMake 3.25 (Unix Makefiles, Debug) + g++ 12 + ctest would leave
//! after `fixtures/prepare-build.sh`: the File API reply (index, codemodel-v2,
//! one target object per target, directory objects, cmakeFiles-v1, cache-v2,
//! toolchains-v1, all in jsoncpp's styled layout), `CTestTestfile.cmake` in every
//! directory, `ctest.json`, one gcc `.o.d` per translation unit (plus empty `.o`
//! and artifact placeholders) and `deps.txt`. `DIR/changes/` gets three change
//! sets usable with `--changed-from` (`one-header.txt`, `twenty-files.txt`,
//! `build-config.txt`), and what an independent oracle in this file expects
//! diff2test to do with them: `expected.txt` (exit code and counts) and
//! `<change>.expected` (the test names of each subset).
//!
//! A `-ninja` preset (`tiny-ninja`, `small-ninja`, `llvm-ninja`, `chromium-ninja`)
//! writes the same source tree and the build tree CMake 3.25 (Ninja, Debug) +
//! ninja 1.11 would leave instead: the File API index names the generator "Ninja",
//! link fragments are relative to the top of the build tree, OBJECT library
//! artifacts carry ninja's `./` (`<t>.dir/./src/a.cpp.o`), cmakeFiles lists
//! `CMakeNinjaFindMake.cmake`; there is no `.d` file, and one `BUILD/.ninja_deps`
//! holds every object's record, byte for byte as ninja's `DepsLog` writes it
//! (records in translation-unit order, each with its object's mtime, T0+200, as
//! ninja records it; the inputs are the `.d` prerequisites ninja folded in).
//! `deps.txt` names only `.ninja_deps`. `build.ninja` (with `CMakeFiles/rules.ninja`)
//! has one compile edge per unit as CMake writes it, and `.ninja_log` (v5) the hash
//! of each object's command evaluated from it (diff2test compares the two).
//!
//! Shape: a layered DAG of libraries (static, shared with PUBLIC/PRIVATE deps,
//! OBJECT libraries whose objects show up as generated `.o` sources of their
//! consumer, header-only INTERFACE libraries that the File API omits), unit-test
//! executables with several gtest-style `add_test` entries each, tools exercised
//! by tests through a driver executable (the tool's path is an argument), and
//! documentation UTILITY targets.
//!
//! Depfiles are exactly what g++ 12 prints for these sources: the include order is
//! simulated (depth-first, first inclusion wins, include guards), system headers
//! come from `bench/synth-data/gxx12-cmake325.txt` (what `g++ -M` reported for each
//! standard header on Debian bookworm), and lines are wrapped like GCC's mkdeps
//! (72 columns, ` \` continuation, one-space indent). `bench/validate-shape.sh`
//! checks all of this against a real cmake + make + ctest run on the `tiny` preset.
//!
//! Determinism: the output is a pure function of (preset, seed, output path).
//! Modification times are fixed: sources and CMake files at T0, the File API
//! reply at T0+100 (index included), ctest files at T0+150, objects and
//! depfiles (or `.ninja_deps` and its records) at T0+200, `deps.txt` at T0+300.
//!
//! The generation logic is a library-style `generate()` so tests can include
//! this file with `#[path = "../examples/synth.rs"] mod synth;`.
//! `SYNTH_DEBUG=1` prints per-layer include-closure statistics (for tuning presets).
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

const DATA: &str = include_str!("../bench/synth-data/gxx12-cmake325.txt");
/// Bumped whenever the output for a given (preset, seed) changes.
pub const GENERATOR_VERSION: u32 = 2;
/// Base modification time (2023-11-14T22:13:20Z).
const T0: i64 = 1_700_000_000;
const STDC_PREDEF: &str = "/usr/include/stdc-predef.h";

// ---------------------------------------------------------------------------
// presets

/// Size and shape parameters of one preset.
#[derive(Clone, Debug)]
pub struct Preset {
    pub name: &'static str,
    /// Libraries (including header-only INTERFACE ones).
    pub libs: usize,
    /// Directories under `lib/` grouping the libraries.
    pub groups: usize,
    /// Layers of the library DAG (a library only links lower layers).
    pub layers: usize,
    /// Percentages of SHARED, OBJECT and INTERFACE libraries.
    pub shared_pct: u32,
    pub object_pct: u32,
    pub interface_pct: u32,
    pub lib_srcs: (usize, usize),
    pub lib_hdrs: (usize, usize),
    pub lib_deps: (usize, usize),
    pub test_exes: usize,
    pub test_groups: usize,
    pub tests_per_exe: (usize, usize),
    pub test_srcs: (usize, usize),
    pub test_links: (usize, usize),
    pub tools: usize,
    pub tool_srcs: (usize, usize),
    pub tool_tests: (usize, usize),
    pub utils: usize,
    /// Soft cap on a header's project include closure.
    pub hdr_cap: usize,
    /// Soft cap on a translation unit's project include closure.
    pub tu_cap: usize,
    pub std_per_hdr: (usize, usize),
    pub std_per_tu: (usize, usize),
    /// Earlier headers of its own library a public header includes.
    pub hdr_own_incs: (usize, usize),
    /// Headers of dependencies a public header includes.
    pub hdr_dep_incs: (usize, usize),
    /// Header-count multiplier for header-only (INTERFACE) libraries.
    pub iface_hdr_mult: usize,
    /// Percentage of libraries that also link 1-2 earlier libraries of their own layer.
    pub same_layer_pct: u32,
    /// Own public headers a library translation unit includes.
    pub tu_own_incs: (usize, usize),
    /// Dependency headers a library translation unit includes.
    pub tu_dep_incs: (usize, usize),
    /// The CMake generator whose build tree is written.
    pub generator: Generator,
}

/// The CMake generator a synthetic build tree imitates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generator {
    /// Unix Makefiles: one gcc `.o.d` per object, kept after the build; link
    /// fragments relative to the target's build directory.
    Makefiles,
    /// Ninja (single-config): no `.d` files (ninja folds each into
    /// `BUILD/.ninja_deps`, byte for byte as ninja 1.11 writes it, and deletes
    /// it); link fragments relative to the top of the build tree; OBJECT
    /// library artifacts with ninja's `./` (`<t>.dir/./src/a.cpp.o`).
    Ninja,
}

/// The named presets. `NAME-ninja` (e.g. `llvm-ninja`) is preset NAME's tree as
/// the Ninja generator leaves it.
pub fn preset(name: &str) -> Option<Preset> {
    if let Some(base) = name.strip_suffix("-ninja") {
        let p = preset(base).filter(|p| p.generator == Generator::Makefiles)?;
        return Some(Preset {
            name: NINJA_NAMES[PRESETS.iter().position(|n| *n == p.name)?],
            generator: Generator::Ninja,
            ..p
        });
    }
    let base = Preset {
        name: "tiny",
        libs: 10,
        groups: 2,
        layers: 3,
        shared_pct: 25,
        object_pct: 20,
        interface_pct: 15,
        lib_srcs: (1, 3),
        lib_hdrs: (2, 4),
        lib_deps: (1, 2),
        test_exes: 3,
        test_groups: 1,
        tests_per_exe: (2, 3),
        test_srcs: (1, 2),
        test_links: (1, 2),
        tools: 2,
        tool_srcs: (1, 2),
        tool_tests: (1, 2),
        utils: 1,
        hdr_cap: 8,
        tu_cap: 12,
        std_per_hdr: (0, 1),
        std_per_tu: (1, 2),
        hdr_own_incs: (0, 1),
        hdr_dep_incs: (1, 2),
        iface_hdr_mult: 1,
        same_layer_pct: 0,
        tu_own_incs: (1, 3),
        tu_dep_incs: (0, 3),
        generator: Generator::Makefiles,
    };
    Some(match name {
        "tiny" => base,
        "small" => Preset {
            name: "small",
            libs: 64,
            groups: 8,
            layers: 6,
            shared_pct: 8,
            object_pct: 10,
            interface_pct: 5,
            lib_srcs: (4, 10),
            lib_hdrs: (3, 8),
            lib_deps: (1, 3),
            test_exes: 10,
            test_groups: 3,
            tests_per_exe: (3, 5),
            test_srcs: (3, 6),
            test_links: (1, 3),
            tools: 6,
            tool_srcs: (1, 3),
            tool_tests: (1, 2),
            utils: 2,
            hdr_cap: 30,
            tu_cap: 45,
            ..base
        },
        "llvm" => Preset {
            name: "llvm",
            libs: 780,
            groups: 40,
            layers: 12,
            shared_pct: 7,
            object_pct: 10,
            interface_pct: 3,
            lib_srcs: (3, 10),
            lib_hdrs: (4, 14),
            lib_deps: (1, 4),
            test_exes: 120,
            test_groups: 20,
            tests_per_exe: (3, 6),
            test_srcs: (3, 9),
            test_links: (1, 4),
            tools: 80,
            tool_srcs: (1, 4),
            tool_tests: (1, 1),
            utils: 10,
            hdr_cap: 220,
            tu_cap: 280,
            std_per_hdr: (1, 2),
            std_per_tu: (1, 3),
            hdr_own_incs: (2, 4),
            hdr_dep_incs: (2, 4),
            iface_hdr_mult: 4,
            same_layer_pct: 30,
            tu_own_incs: (2, 5),
            tu_dep_incs: (2, 6),
            ..base
        },
        "chromium" => Preset {
            name: "chromium",
            libs: 6000,
            groups: 200,
            layers: 20,
            shared_pct: 5,
            object_pct: 10,
            interface_pct: 3,
            lib_srcs: (3, 11),
            lib_hdrs: (4, 16),
            lib_deps: (1, 3),
            test_exes: 600,
            test_groups: 60,
            tests_per_exe: (5, 12),
            test_srcs: (5, 15),
            test_links: (2, 6),
            tools: 500,
            tool_srcs: (1, 3),
            tool_tests: (1, 2),
            utils: 40,
            hdr_cap: 350,
            tu_cap: 450,
            std_per_hdr: (1, 2),
            std_per_tu: (1, 3),
            hdr_own_incs: (2, 4),
            hdr_dep_incs: (2, 4),
            iface_hdr_mult: 4,
            same_layer_pct: 15,
            tu_own_incs: (2, 5),
            tu_dep_incs: (2, 6),
            ..base
        },
        _ => return None,
    })
}

/// Names accepted by [`preset`] (Unix Makefiles trees).
pub const PRESETS: &[&str] = &["tiny", "small", "llvm", "chromium"];
/// The same presets as Ninja build trees, in [`PRESETS`] order.
pub const NINJA_NAMES: &[&str] = &["tiny-ninja", "small-ninja", "llvm-ninja", "chromium-ninja"];

// ---------------------------------------------------------------------------
// PRNG (splitmix64)

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5EED_D1FF_27E5_7000)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next() % n as u64) as usize
    }
    fn range(&mut self, (lo, hi): (usize, usize)) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, pct: u32) -> bool {
        self.below(100) < pct as usize
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

// ---------------------------------------------------------------------------
// embedded machine facts

struct Data {
    sys: Vec<&'static str>,
    std_names: Vec<&'static str>,
    std_closure: Vec<Vec<u16>>,
    cmake_inputs: Vec<(bool, &'static str)>, // (generated, path)
}

impl Data {
    fn parse() -> Data {
        let mut d = Data {
            sys: Vec::new(),
            std_names: Vec::new(),
            std_closure: Vec::new(),
            cmake_inputs: Vec::new(),
        };
        let mut section = "";
        for line in DATA.lines() {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                section = line;
                continue;
            }
            match section {
                "[sys]" => d.sys.push(line),
                "[std]" => {
                    let (name, list) = line.split_once(':').expect("std line");
                    d.std_names.push(name);
                    d.std_closure
                        .push(list.split(',').map(|n| n.parse().expect("index")).collect());
                }
                "[cmake]" => {
                    let (kind, path) = line.split_once('|').expect("cmake line");
                    d.cmake_inputs.push((kind == "gen", path));
                }
                _ => panic!("synth data: line outside a section: {line}"),
            }
        }
        assert!(d.std_names.len() <= 64, "sys mask is a u64");
        d
    }
}

/// Relative weight of each standard header when a file picks one (common ones first).
fn std_weight(name: &str) -> usize {
    match name {
        "string" | "vector" | "memory" | "cstdint" | "cstddef" | "utility" | "algorithm"
        | "cassert" => 6,
        "map" | "functional" | "optional" | "type_traits" | "tuple" | "string_view"
        | "iterator" | "array" | "cstring" | "limits" | "unordered_map" | "set" => 3,
        _ => 1,
    }
}

// ---------------------------------------------------------------------------
// model

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Static,
    Shared,
    Object,
    Interface,
    Exe,
    Utility,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Lib,
    Test,
    Tool,
    Driver,
    Docs,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Vis {
    Public,
    Private,
    Interface,
}

impl Vis {
    fn word(self) -> &'static str {
        match self {
            Vis::Public => "PUBLIC",
            Vis::Private => "PRIVATE",
            Vis::Interface => "INTERFACE",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Inc {
    Proj(u32),
    Std(u8),
}

struct Header {
    /// Path relative to the source root.
    rel: String,
    /// Spelling in `#include "..."`.
    spelling: String,
    target: usize,
    incs: Vec<Inc>,
    /// Sorted project-header closure (including itself).
    closure: Vec<u32>,
    sys: u64,
}

struct Tu {
    target: usize,
    /// Relative to the source root.
    rel: String,
    /// Relative to the target's source directory.
    in_target: String,
    incs: Vec<Inc>,
    /// Sorted project-header closure.
    proj: Vec<u32>,
    sys: u64,
    main_fn: bool,
}

struct Target {
    name: String,
    kind: Kind,
    role: Role,
    layer: usize,
    dir: usize,
    /// target_link_libraries items in order.
    links: Vec<(usize, Vis)>,
    tus: Vec<usize>,
    pub_hdrs: Vec<u32>,
    priv_hdrs: Vec<u32>,
    /// Non-compiled, non-header sources (docs pages of UTILITY targets).
    doc_sources: Vec<String>,
    util_deps: Vec<usize>,
    defines: Vec<String>,
    consumers: usize,
    // computed by finish()
    deps: Vec<usize>,
    /// Link line: (library, lib whose link interface brought it in; None = direct).
    link: LinkInfo,
    includes: Vec<usize>,
    object_inputs: Vec<usize>,
    // CMakeLists line numbers
    line_add: usize,
    line_tid: usize,
    line_tll: usize,
    line_tcd: usize,
    line_adddeps: usize,
}

/// What the link step of an executable or shared library uses.
#[derive(Default)]
struct LinkInfo {
    /// Linked libraries in order: (library, lib whose link interface brought it in; None = direct).
    libs: Vec<(usize, Option<usize>)>,
    /// Shared libraries whose directories form the build-tree `-Wl,-rpath,`.
    rpath: Vec<usize>,
    /// Runtime-only shared dependencies (`-Wl,-rpath-link,`).
    rpath_link: Vec<usize>,
}

struct Dir {
    rel: String,
    parent: Option<usize>,
    children: Vec<usize>,
    targets: Vec<usize>,
    tests: Vec<usize>,
    /// Extra CMakeLists text for directories without targets (add_subdirectory lines).
    subdirs_text: String,
}

struct Test {
    name: String,
    exe: usize,
    /// Arguments as ctest prints them (target files resolved to absolute paths).
    args: Vec<String>,
    /// Arguments as written in CMakeLists (`$<TARGET_FILE:x>`).
    cmake_args: Vec<String>,
    arg_targets: Vec<usize>,
    labels: Vec<String>,
    env: Vec<String>,
    timeout: Option<u32>,
    dir: usize,
    line: usize,
}

/// What was written, for the summary.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub preset: String,
    pub seed: u64,
    pub out: PathBuf,
    pub targets: usize,
    pub tus: usize,
    pub tests: usize,
    pub headers: usize,
    pub src_files: usize,
    pub src_bytes: u64,
    pub depfiles: usize,
    pub depfile_bytes: u64,
    /// Ninja trees: `BUILD/.ninja_deps` (0 for Makefiles trees).
    pub deps_log_bytes: u64,
    pub deps_log_records: usize,
    pub deps_log_paths: usize,
    pub reply_files: usize,
    pub reply_bytes: u64,
    pub ctest_json_bytes: u64,
    pub deps_txt_bytes: u64,
    pub other_build_files: usize,
    pub other_build_bytes: u64,
    pub prereqs_total: u64,
    pub project_prereqs_total: u64,
    pub one_header: String,
    /// (change set, tests the oracle selects or usize::MAX for the full suite, suite size).
    pub expected: Vec<(String, usize, usize)>,
    /// (change set, sorted names of the tests the oracle selects).
    pub expected_names: Vec<(String, Vec<String>)>,
}

impl Summary {
    /// Bytes of evidence diff2test reads (depfiles or the deps log, reply JSON,
    /// ctest.json, deps.txt).
    pub fn evidence_bytes(&self) -> u64 {
        self.depfile_bytes
            + self.deps_log_bytes
            + self.reply_bytes
            + self.ctest_json_bytes
            + self.deps_txt_bytes
    }
    pub fn render(&self) -> String {
        let mb = |b: u64| b as f64 / 1_048_576.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "synth: preset {} seed {} -> {}",
            self.preset,
            self.seed,
            self.out.display()
        );
        let _ = writeln!(
            s,
            "  targets {}  translation units {}  tests {}  project headers {}",
            self.targets, self.tus, self.tests, self.headers
        );
        let _ = writeln!(
            s,
            "  prerequisites per TU: {:.0} (project {:.0})",
            self.prereqs_total as f64 / self.tus.max(1) as f64,
            self.project_prereqs_total as f64 / self.tus.max(1) as f64
        );
        let _ = writeln!(
            s,
            "  source tree     {:>7} files {:>9.1} MB",
            self.src_files,
            mb(self.src_bytes)
        );
        if self.deps_log_bytes > 0 {
            let _ = writeln!(
                s,
                "  .ninja_deps     {:>7} file  {:>9.1} MB ({} records, {} paths)",
                1,
                mb(self.deps_log_bytes),
                self.deps_log_records,
                self.deps_log_paths
            );
        } else {
            let _ = writeln!(
                s,
                "  .d files        {:>7} files {:>9.1} MB",
                self.depfiles,
                mb(self.depfile_bytes)
            );
        }
        let _ = writeln!(
            s,
            "  File API reply  {:>7} files {:>9.1} MB",
            self.reply_files,
            mb(self.reply_bytes)
        );
        let _ = writeln!(
            s,
            "  ctest.json      {:>7} file  {:>9.1} MB",
            1,
            mb(self.ctest_json_bytes)
        );
        let _ = writeln!(
            s,
            "  deps.txt        {:>7} file  {:>9.1} MB",
            1,
            mb(self.deps_txt_bytes)
        );
        let _ = writeln!(
            s,
            "  other build     {:>7} files {:>9.1} MB (CTestTestfile.cmake, empty .o and artifacts, ...)",
            self.other_build_files,
            mb(self.other_build_bytes)
        );
        let _ = writeln!(
            s,
            "  evidence read by diff2test: {:.1} MB",
            mb(self.evidence_bytes())
        );
        let _ = writeln!(
            s,
            "  suggested changes (relative to SRC; use with --changed-from):"
        );
        for (name, sel, all) in &self.expected {
            let what = if *sel == usize::MAX {
                "FULL_SUITE_SELECTED (CHANGE_BUILD_CONFIG)".to_owned()
            } else {
                format!("SUBSET_SELECTED, {sel} of {all} tests")
            };
            let _ = writeln!(
                s,
                "    {}/changes/{name}.txt  expected {what}",
                self.out.display()
            );
        }
        let _ = writeln!(s, "  one header: {}", self.one_header);
        s
    }
}

// ---------------------------------------------------------------------------
// JSON in jsoncpp's StreamWriterBuilder layout (what CMake and ctest print)

enum J {
    S(String),
    I(i64),
    Raw(&'static str),
    A(Vec<J>),
    O(Vec<(&'static str, J)>),
}

fn s(v: impl Into<String>) -> J {
    J::S(v.into())
}

fn obj(mut m: Vec<(&'static str, J)>) -> J {
    m.sort_by(|a, b| a.0.cmp(b.0));
    J::O(m)
}

fn arr_i(v: impl IntoIterator<Item = usize>) -> J {
    J::A(v.into_iter().map(|i| J::I(i as i64)).collect())
}

fn quote_json(out: &mut String, v: &str) {
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct JWriter<'a> {
    out: String,
    indent: &'a str,
    depth: usize,
    indented: bool,
}

impl JWriter<'_> {
    fn write_indent(&mut self) {
        self.out.push('\n');
        for _ in 0..self.depth {
            self.out.push_str(self.indent);
        }
    }
    fn with_indent(&mut self, text: &str) {
        if !self.indented {
            self.write_indent();
        }
        self.out.push_str(text);
        self.indented = false;
    }
    fn value(&mut self, v: &J) {
        match v {
            J::S(x) => quote_json(&mut self.out, x),
            J::I(i) => {
                let _ = write!(self.out, "{i}");
            }
            J::Raw(r) => self.out.push_str(r),
            J::A(items) if items.is_empty() => self.out.push_str("[]"),
            J::O(m) if m.is_empty() => self.out.push_str("{}"),
            J::A(items) => {
                self.with_indent("[");
                self.depth += 1;
                for (i, c) in items.iter().enumerate() {
                    if !self.indented {
                        self.write_indent();
                    }
                    self.indented = true;
                    self.value(c);
                    self.indented = false;
                    if i + 1 < items.len() {
                        self.out.push(',');
                    }
                }
                self.depth -= 1;
                self.with_indent("]");
            }
            J::O(m) => {
                self.with_indent("{");
                self.depth += 1;
                for (i, (k, c)) in m.iter().enumerate() {
                    let mut key = String::new();
                    quote_json(&mut key, k);
                    self.with_indent(&key);
                    self.out.push_str(" : ");
                    self.value(c);
                    if i + 1 < m.len() {
                        self.out.push(',');
                    }
                }
                self.depth -= 1;
                self.with_indent("}");
            }
        }
    }
}

/// File API layout: tab indent, trailing newline.
fn json_file_api(v: &J) -> String {
    let mut w = JWriter {
        out: String::new(),
        indent: "\t",
        depth: 0,
        indented: true,
    };
    w.value(v);
    w.out.push('\n');
    w.out
}

/// ctest --show-only=json-v1 layout: two-space indent, no trailing newline.
fn json_ctest(v: &J) -> String {
    let mut w = JWriter {
        out: String::new(),
        indent: "  ",
        depth: 0,
        indented: true,
    };
    w.value(v);
    w.out
}

/// 80-bit content hash as 20 hex digits (stands in for CMake's SHA-1 prefixes).
fn hash20(text: &str) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x8422_2325_cbf2_9ce4;
    for &byte in text.as_bytes() {
        a = (a ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
        b = (b ^ byte as u64)
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(5);
    }
    format!("{:016x}{:04x}", a, b & 0xffff)
}

// ---------------------------------------------------------------------------
// gcc depfile writer (mkdeps.cc, colmax 72)

fn munge(name: &str, out: &mut String) {
    let b = name.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b' ' | b'\t' => {
                // Backslashes right before a space are doubled, then one more.
                let mut j = i;
                while j > 0 && b[j - 1] == b'\\' {
                    out.push('\\');
                    j -= 1;
                }
                out.push('\\');
                out.push(c as char);
            }
            b'#' => out.push_str("\\#"),
            b'$' => out.push_str("$$"),
            _ => out.push(c as char),
        }
    }
}

struct DepWriter {
    out: String,
    col: usize,
    scratch: String,
}

impl DepWriter {
    fn new(target: &str) -> Self {
        // The -MT target is copied as given.
        let mut out = String::with_capacity(32 * 1024);
        out.push_str(target);
        out.push(':');
        DepWriter {
            col: target.len() + 1,
            out,
            scratch: String::new(),
        }
    }
    fn dep(&mut self, name: &str) {
        self.scratch.clear();
        munge(name, &mut self.scratch);
        let size = self.scratch.len();
        if self.col + size > 72 {
            self.out.push_str(" \\\n");
            self.col = 0;
        }
        self.col += 1;
        self.out.push(' ');
        self.col += size;
        self.out.push_str(&self.scratch);
    }
    fn finish(mut self) -> String {
        self.out.push('\n');
        self.out
    }
}

/// A `.ninja_deps` (version 4) written as ninja 1.11's `DepsLog::RecordId` and
/// `RecordDeps` write it, one record per output, streamed: byte for byte what
/// `diff2test::ingest::ninja_deps::write` gives for the same records
/// (`tests/synth_smoke.rs` checks so). Each path gets its path record (path,
/// NUL padding to 4 bytes, checksum `!id`) when it is first met, the output
/// before its inputs; then the deps record (output id, mtime low and high
/// halves, input ids).
pub struct NinjaLog {
    pub out: Vec<u8>,
    ids: HashMap<String, u32>,
    scratch: Vec<u32>,
    pub records: usize,
}

impl Default for NinjaLog {
    fn default() -> Self {
        let mut out = Vec::with_capacity(1 << 20);
        out.extend_from_slice(b"# ninjadeps\n");
        out.extend_from_slice(&4i32.to_le_bytes());
        NinjaLog {
            out,
            ids: HashMap::new(),
            scratch: Vec::new(),
            records: 0,
        }
    }
}

impl NinjaLog {
    /// ninja's `kMaxRecordSize`.
    const MAX_RECORD: usize = (1 << 19) - 1;

    /// The path's node id, writing its path record when it has none yet.
    pub fn id(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.ids.get(path) {
            return id;
        }
        let id = self.ids.len() as u32;
        let pad = (4 - path.len() % 4) % 4;
        let size = path.len() + pad + 4;
        assert!(
            !path.is_empty() && size <= Self::MAX_RECORD,
            "ninja refuses {path:?}"
        );
        self.out.extend_from_slice(&(size as u32).to_le_bytes());
        self.out.extend_from_slice(path.as_bytes());
        self.out.extend_from_slice(&[0u8; 3][..pad]);
        self.out.extend_from_slice(&(!id).to_le_bytes());
        self.ids.insert(path.to_owned(), id);
        id
    }

    /// Appends a deps record (the output's first: ninja skips a record only
    /// when the output already has one with the same mtime and inputs).
    pub fn deps(&mut self, out: u32, mtime_ns: u64, inputs: &[u32]) {
        let size = 4 * (3 + inputs.len());
        assert!(
            size <= Self::MAX_RECORD,
            "deps record over ninja's size limit"
        );
        self.out
            .extend_from_slice(&(size as u32 | 0x8000_0000).to_le_bytes());
        self.out.extend_from_slice(&out.to_le_bytes());
        self.out.extend_from_slice(&(mtime_ns as u32).to_le_bytes());
        self.out
            .extend_from_slice(&((mtime_ns >> 32) as u32).to_le_bytes());
        for id in inputs {
            self.out.extend_from_slice(&id.to_le_bytes());
        }
        self.records += 1;
    }

    /// Paths recorded so far.
    pub fn paths(&self) -> usize {
        self.ids.len()
    }
}

// ---------------------------------------------------------------------------
// helpers

const WORDS: &[&str] = &[
    "Builder",
    "Context",
    "Pass",
    "Info",
    "Utils",
    "Types",
    "Value",
    "Range",
    "Map",
    "Set",
    "Manager",
    "Emitter",
    "Parser",
    "Printer",
    "Writer",
    "Reader",
    "Lexer",
    "Cache",
    "Graph",
    "Node",
    "Table",
    "Stream",
    "Format",
    "Error",
    "Options",
    "Registry",
    "Handler",
    "Analysis",
    "Traits",
    "Helper",
    "Scheduler",
    "Allocator",
    "Buffer",
    "Visitor",
    "Verifier",
    "Lowering",
    "Selector",
    "Folder",
    "Matcher",
    "Encoder",
];

const GROUPS: &[&str] = &[
    "Support",
    "Demangle",
    "BinaryFormat",
    "Remarks",
    "Bitstream",
    "IR",
    "AsmParser",
    "Bitcode",
    "Object",
    "MC",
    "Analysis",
    "Transforms",
    "CodeGen",
    "Target",
    "Linker",
    "LTO",
    "Passes",
    "Frontend",
    "Option",
    "ProfileData",
    "DebugInfo",
    "ExecutionEngine",
    "ObjectYAML",
    "TextAPI",
    "WindowsManifest",
    "XRay",
    "FileCheck",
    "InterfaceStub",
    "DWARFLinker",
    "ToolDrivers",
    "Coverage",
    "Symbolize",
    "Vectorize",
    "Instrumentation",
    "ObjCARC",
    "Coroutines",
    "IPO",
    "Scalar",
    "Utils",
    "AggressiveInstCombine",
];

fn group_name(i: usize) -> String {
    let base = GROUPS[i % GROUPS.len()];
    if i < GROUPS.len() {
        base.to_owned()
    } else {
        // The underscore keeps "<group><k>" library names unique across name cycles.
        format!("{base}_{}_", i / GROUPS.len())
    }
}

/// `to` relative to `from` (both relative to one root, "." = root).
fn relpath(from: &str, to: &str) -> String {
    let f: Vec<&str> = if from == "." {
        Vec::new()
    } else {
        from.split('/').collect()
    };
    let t: Vec<&str> = to.split('/').collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; f.len() - common];
    parts.extend(&t[common..]);
    parts.join("/")
}

fn union_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn union_len(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
        n += 1;
    }
    n + (a.len() - i) + (b.len() - j)
}

/// UTC civil date of a Unix time, as CMake names reply indexes.
fn index_stamp(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}-0000",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

// ---------------------------------------------------------------------------
// generator

struct Gen<'p> {
    p: &'p Preset,
    rng: Rng,
    data: Data,
    std_table: Vec<u8>, // weighted pick table
    src: String,
    build: String,
    targets: Vec<Target>,
    dirs: Vec<Dir>,
    headers: Vec<Header>,
    tus: Vec<Tu>,
    tests: Vec<Test>,
    by_layer: Vec<Vec<usize>>,
    driver: usize,
}

impl<'p> Gen<'p> {
    fn new(p: &'p Preset, seed: u64, src: String, build: String) -> Self {
        let data = Data::parse();
        let mut std_table = Vec::new();
        for (i, n) in data.std_names.iter().enumerate() {
            for _ in 0..std_weight(n) {
                std_table.push(i as u8);
            }
        }
        Gen {
            p,
            rng: Rng::new(seed),
            data,
            std_table,
            src,
            build,
            targets: Vec::new(),
            dirs: Vec::new(),
            headers: Vec::new(),
            tus: Vec::new(),
            tests: Vec::new(),
            by_layer: vec![Vec::new(); p.layers],
            driver: usize::MAX,
        }
    }

    fn add_dir(&mut self, rel: String, parent: Option<usize>) -> usize {
        let i = self.dirs.len();
        self.dirs.push(Dir {
            rel,
            parent,
            children: Vec::new(),
            targets: Vec::new(),
            tests: Vec::new(),
            subdirs_text: String::new(),
        });
        if let Some(p) = parent {
            self.dirs[p].children.push(i);
        }
        i
    }

    fn add_target(
        &mut self,
        name: String,
        kind: Kind,
        role: Role,
        layer: usize,
        dir: usize,
    ) -> usize {
        let i = self.targets.len();
        self.targets.push(Target {
            name,
            kind,
            role,
            layer,
            dir,
            links: Vec::new(),
            tus: Vec::new(),
            pub_hdrs: Vec::new(),
            priv_hdrs: Vec::new(),
            doc_sources: Vec::new(),
            util_deps: Vec::new(),
            defines: Vec::new(),
            consumers: 0,
            deps: Vec::new(),
            link: LinkInfo::default(),
            includes: Vec::new(),
            object_inputs: Vec::new(),
            line_add: 0,
            line_tid: 0,
            line_tll: 0,
            line_tcd: 0,
            line_adddeps: 0,
        });
        self.dirs[dir].targets.push(i);
        i
    }

    fn pick_std(&mut self, n: (usize, usize), incs: &mut Vec<Inc>, sys: &mut u64) {
        let k = self.rng.range(n);
        for _ in 0..k {
            let s = self.rng.pick(&self.std_table);
            if !incs.contains(&Inc::Std(s)) {
                incs.push(Inc::Std(s));
                *sys |= 1u64 << s;
            }
        }
    }

    /// Tries to include `h` (a project header); accepted when the closure stays under `cap`
    /// or `force` is set.
    fn try_include(
        &self,
        h: u32,
        cap: usize,
        force: bool,
        incs: &mut Vec<Inc>,
        closure: &mut Vec<u32>,
        sys: &mut u64,
    ) -> bool {
        if incs.contains(&Inc::Proj(h)) {
            return false;
        }
        let hc = &self.headers[h as usize].closure;
        if !force && union_len(closure, hc) > cap {
            return false;
        }
        *closure = union_sorted(closure, hc);
        *sys |= self.headers[h as usize].sys;
        incs.push(Inc::Proj(h));
        true
    }

    fn new_header(
        &mut self,
        t: usize,
        rel: String,
        spelling: String,
        incs: Vec<Inc>,
        mut closure: Vec<u32>,
        sys: u64,
    ) -> u32 {
        let id = self.headers.len() as u32;
        closure = union_sorted(&closure, &[id]);
        self.headers.push(Header {
            rel,
            spelling,
            target: t,
            incs,
            closure,
            sys,
        });
        id
    }

    /// Headers visible to a consumer of `d` through its interface: d's own public headers.
    fn dep_headers(&self, deps: &[usize]) -> Vec<u32> {
        deps.iter()
            .flat_map(|&d| self.targets[d].pub_hdrs.iter().copied())
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn make_tu(
        &mut self,
        t: usize,
        rel: String,
        in_target: String,
        own: &[u32],
        priv_h: &[u32],
        deps_visible: &[usize],
        main_fn: bool,
    ) {
        let p = self.p;
        let mut incs = Vec::new();
        let mut closure = Vec::new();
        let mut sys = 0u64;
        if !priv_h.is_empty() && self.rng.chance(60) {
            let h = self.rng.pick(priv_h);
            self.try_include(h, p.tu_cap, true, &mut incs, &mut closure, &mut sys);
        }
        if !own.is_empty() {
            for k in 0..self.rng.range(p.tu_own_incs) {
                let h = self.rng.pick(own);
                self.try_include(h, p.tu_cap, k == 0, &mut incs, &mut closure, &mut sys);
            }
        }
        let cand = self.dep_headers(deps_visible);
        if !cand.is_empty() {
            let want = if own.is_empty() {
                self.rng.range((1, 4))
            } else {
                self.rng.range(p.tu_dep_incs)
            };
            let mut got = 0;
            for attempt in 0..want * 4 {
                if got == want {
                    break;
                }
                let h = self.rng.pick(&cand);
                let force = own.is_empty() && got == 0 && attempt == 0;
                if self.try_include(h, p.tu_cap, force, &mut incs, &mut closure, &mut sys) {
                    got += 1;
                }
            }
        }
        self.pick_std(p.std_per_tu, &mut incs, &mut sys);
        let id = self.tus.len();
        self.tus.push(Tu {
            target: t,
            rel,
            in_target,
            incs,
            proj: closure,
            sys,
            main_fn,
        });
        self.targets[t].tus.push(id);
    }

    fn pick_words(&mut self, n: usize) -> Vec<&'static str> {
        let mut w: Vec<&'static str> = WORDS.to_vec();
        let n = n.min(w.len());
        for i in 0..n {
            let j = i + self.rng.below(w.len() - i);
            w.swap(i, j);
        }
        w.truncate(n);
        w
    }

    fn build_libs(&mut self) {
        let p = self.p;
        let lib_dir = self.add_dir("lib".into(), Some(0));
        let mut group_dirs = Vec::new();
        let mut group_counts = vec![0usize; p.groups];
        for i in 0..p.libs {
            let g = i * p.groups / p.libs;
            if group_dirs.len() <= g {
                let gd = self.add_dir(format!("lib/{}", group_name(g)), Some(lib_dir));
                group_dirs.push(gd);
            }
            let layer = i * p.layers / p.libs;
            let kind = if layer <= 1 && self.rng.chance(p.interface_pct) {
                Kind::Interface
            } else if layer >= 1 && layer + 1 < p.layers && self.rng.chance(p.object_pct) {
                Kind::Object
            } else if layer >= 1 && self.rng.chance(p.shared_pct) {
                Kind::Shared
            } else {
                Kind::Static
            };
            let name = format!("{}{}", group_name(g), group_counts[g]);
            group_counts[g] += 1;
            let d = self.add_dir(
                format!("lib/{}/{}", group_name(g), name),
                Some(group_dirs[g]),
            );
            let t = self.add_target(name.clone(), kind, Role::Lib, layer, d);
            self.by_layer[layer].push(t);

            // Links.
            if kind != Kind::Interface {
                let mut chosen: Vec<usize> = Vec::new();
                if layer > 0 {
                    let nd = self.rng.range(p.lib_deps);
                    for _ in 0..nd * 8 {
                        if chosen.len() == nd {
                            break;
                        }
                        let l = if self.rng.chance(75) {
                            layer - 1 - self.rng.below(layer.min(3))
                        } else {
                            self.rng.below(layer)
                        };
                        if self.by_layer[l].is_empty() {
                            continue;
                        }
                        let d = self.rng.pick(&self.by_layer[l]);
                        let dk = self.targets[d].kind;
                        if chosen.contains(&d)
                            || (dk == Kind::Object
                                && (kind == Kind::Object || self.targets[d].consumers >= 2))
                        {
                            continue;
                        }
                        chosen.push(d);
                    }
                }
                if p.same_layer_pct > 0 && self.rng.chance(p.same_layer_pct) {
                    let earlier: Vec<usize> = self.by_layer[layer]
                        .iter()
                        .copied()
                        .filter(|&x| {
                            x != t && matches!(self.targets[x].kind, Kind::Static | Kind::Shared)
                        })
                        .collect();
                    if !earlier.is_empty() {
                        for _ in 0..self.rng.range((1, 2)) {
                            let d = self.rng.pick(&earlier);
                            if !chosen.contains(&d) {
                                chosen.push(d);
                            }
                        }
                    }
                }
                // Header-only libraries are used from every layer.
                if self.rng.chance(30) {
                    let ifaces: Vec<usize> = (0..t)
                        .filter(|&x| self.targets[x].kind == Kind::Interface)
                        .collect();
                    if !ifaces.is_empty() {
                        let d = self.rng.pick(&ifaces);
                        if !chosen.contains(&d) {
                            chosen.push(d);
                        }
                    }
                }
                for d in chosen {
                    let dk = self.targets[d].kind;
                    let vis = match (kind, dk) {
                        (_, Kind::Object) => Vis::Private,
                        (Kind::Object, _) => Vis::Public,
                        (Kind::Shared, _) => {
                            if self.rng.chance(25) {
                                Vis::Public
                            } else {
                                Vis::Private
                            }
                        }
                        _ => {
                            if self.rng.chance(60) {
                                Vis::Public
                            } else {
                                Vis::Private
                            }
                        }
                    };
                    if dk == Kind::Object {
                        self.targets[d].consumers += 1;
                    }
                    self.targets[t].links.push((d, vis));
                }
            }

            // Public headers.
            let nh = self.rng.range(p.lib_hdrs)
                * if kind == Kind::Interface {
                    p.iface_hdr_mult
                } else {
                    1
                };
            let words = self.pick_words(nh + 1);
            let dir_rel = self.dirs[d].rel.clone();
            let pub_deps: Vec<usize> = self.targets[t]
                .links
                .iter()
                .filter(|(_, v)| *v != Vis::Private)
                .map(|(x, _)| *x)
                .collect();
            let all_deps: Vec<usize> = self.targets[t].links.iter().map(|(x, _)| *x).collect();
            let dep_cand = self.dep_headers(&pub_deps);
            for j in 0..nh {
                let mut incs = Vec::new();
                let mut closure = Vec::new();
                let mut sys = 0u64;
                let own: Vec<u32> = self.targets[t].pub_hdrs.clone();
                if !own.is_empty() {
                    for k in 0..self.rng.range(p.hdr_own_incs) {
                        let h = if self.rng.chance(60) {
                            own[own.len() - 1]
                        } else {
                            self.rng.pick(&own)
                        };
                        self.try_include(h, p.hdr_cap, k == 0, &mut incs, &mut closure, &mut sys);
                    }
                }
                if !dep_cand.is_empty() {
                    let want = self.rng.range(p.hdr_dep_incs);
                    let mut got = 0;
                    for attempt in 0..6.max(want * 3) {
                        if got == want {
                            break;
                        }
                        let h = self.rng.pick(&dep_cand);
                        let force = j == 0 && attempt == 0;
                        if self.try_include(h, p.hdr_cap, force, &mut incs, &mut closure, &mut sys)
                        {
                            got += 1;
                        }
                    }
                }
                self.pick_std(p.std_per_hdr, &mut incs, &mut sys);
                let w = if j < words.len() {
                    words[j].to_owned()
                } else {
                    format!("{}{}", words[j % words.len()], j / words.len())
                };
                let h = self.new_header(
                    t,
                    format!("{dir_rel}/include/{name}/{w}.hpp"),
                    format!("{name}/{w}.hpp"),
                    incs,
                    closure,
                    sys,
                );
                self.targets[t].pub_hdrs.push(h);
            }
            if kind == Kind::Interface {
                continue;
            }
            // Private header.
            let own = self.targets[t].pub_hdrs.clone();
            if self.rng.chance(40) {
                let mut incs = Vec::new();
                let mut closure = Vec::new();
                let mut sys = 0u64;
                for k in 0..self.rng.range((1, 2)) {
                    let h = self.rng.pick(&own);
                    self.try_include(h, p.hdr_cap, k == 0, &mut incs, &mut closure, &mut sys);
                }
                let cand = self.dep_headers(&all_deps);
                if !cand.is_empty() {
                    let h = self.rng.pick(&cand);
                    self.try_include(h, p.hdr_cap, false, &mut incs, &mut closure, &mut sys);
                }
                self.pick_std(p.std_per_hdr, &mut incs, &mut sys);
                let w = words[nh.min(words.len() - 1)];
                let h = self.new_header(
                    t,
                    format!("{dir_rel}/src/{w}Impl.hpp"),
                    format!("{w}Impl.hpp"),
                    incs,
                    closure,
                    sys,
                );
                self.targets[t].priv_hdrs.push(h);
            }
            // Sources.
            let ns = self.rng.range(p.lib_srcs);
            let srcw = self.pick_words(ns);
            let priv_h = self.targets[t].priv_hdrs.clone();
            for w in srcw {
                self.make_tu(
                    t,
                    format!("{dir_rel}/src/{w}.cpp"),
                    format!("src/{w}.cpp"),
                    &own,
                    &priv_h,
                    &all_deps,
                    false,
                );
            }
        }
    }

    /// A library for an executable to link, biased to the upper layers.
    fn pick_upper_lib(&mut self, from_layer: usize, allow_object: bool) -> Option<usize> {
        for _ in 0..32 {
            let l = from_layer + self.rng.below(self.p.layers - from_layer);
            if self.by_layer[l].is_empty() {
                continue;
            }
            let d = self.rng.pick(&self.by_layer[l]);
            match self.targets[d].kind {
                Kind::Interface => continue,
                Kind::Object if !allow_object || self.targets[d].consumers >= 2 => continue,
                _ => return Some(d),
            }
        }
        None
    }

    fn exe_links(&mut self, t: usize, n: (usize, usize), from_layer: usize) {
        let k = self.rng.range(n);
        for _ in 0..k {
            let allow_object = self.rng.chance(20);
            if let Some(d) = self.pick_upper_lib(from_layer, allow_object) {
                if self.targets[t].links.iter().any(|(x, _)| *x == d) {
                    continue;
                }
                if self.targets[d].kind == Kind::Object {
                    self.targets[d].consumers += 1;
                }
                self.targets[t].links.push((d, Vis::Private));
            }
        }
        if self.targets[t].links.is_empty() {
            let d = self.by_layer[self.p.layers - 1].iter().copied().find(|&d| {
                self.targets[d].kind == Kind::Static || self.targets[d].kind == Kind::Shared
            });
            let d = d.unwrap_or_else(|| {
                self.by_layer[0]
                    .iter()
                    .copied()
                    .find(|&d| self.targets[d].kind == Kind::Static)
                    .expect("a static lib")
            });
            self.targets[t].links.push((d, Vis::Private));
        }
    }

    fn exe_sources(
        &mut self,
        t: usize,
        dir_rel: &str,
        n: usize,
        first: Option<&str>,
        suffix: &str,
    ) {
        let deps: Vec<usize> = self.targets[t].links.iter().map(|(x, _)| *x).collect();
        let mut words = self.pick_words(n);
        let mut names: Vec<String> = words
            .drain(..)
            .map(|w| format!("{w}{suffix}.cpp"))
            .collect();
        if let Some(f) = first {
            names[0] = f.to_owned();
        }
        for (i, f) in names.into_iter().enumerate() {
            let rel = if dir_rel == "." {
                f.clone()
            } else {
                format!("{dir_rel}/{f}")
            };
            self.make_tu(t, rel, f, &[], &[], &deps, i == 0);
        }
    }

    fn build_driver(&mut self) {
        let d = self.add_dir("utils/ToolDriver".into(), Some(0));
        let t = self.add_target(
            "ToolDriver".into(),
            Kind::Exe,
            Role::Driver,
            self.p.layers,
            d,
        );
        let base = self.by_layer[0]
            .iter()
            .copied()
            .find(|&x| self.targets[x].kind == Kind::Static)
            .expect("a static lib in layer 0");
        self.targets[t].links.push((base, Vis::Private));
        self.exe_sources(t, "utils/ToolDriver", 1, Some("ToolDriver.cpp"), "");
        self.driver = t;
        let test = self.tests.len();
        self.tests.push(Test {
            name: "ToolDriver.selftest".into(),
            exe: t,
            args: vec!["--self".into()],
            cmake_args: vec!["--self".into()],
            arg_targets: Vec::new(),
            labels: vec!["tools".into()],
            env: Vec::new(),
            timeout: None,
            dir: d,
            line: 0,
        });
        self.dirs[d].tests.push(test);
    }

    fn build_tools(&mut self) {
        let p = self.p;
        let tools_dir = self.add_dir("tools".into(), Some(0));
        let cases = [
            "basic",
            "empty-input",
            "large-input",
            "errors",
            "roundtrip",
            "stdin",
        ];
        for i in 0..p.tools {
            let w = WORDS[i % WORDS.len()].to_ascii_lowercase();
            let name = format!("synth-{w}{}", i / WORDS.len());
            let d = self.add_dir(format!("tools/{name}"), Some(tools_dir));
            let t = self.add_target(name.clone(), Kind::Exe, Role::Tool, p.layers, d);
            self.exe_links(t, (1, 3), p.layers / 2);
            let dir_rel = self.dirs[d].rel.clone();
            let n = self.rng.range(p.tool_srcs);
            self.exe_sources(t, &dir_rel, n, Some("main.cpp"), "");
            let nt = self.rng.range(p.tool_tests);
            for c in 0..nt {
                let case = cases[c % cases.len()];
                let art = format!("{}/tools/{name}/{name}", self.build);
                let test = self.tests.len();
                self.tests.push(Test {
                    name: format!("tools.{name}.{case}"),
                    exe: self.driver,
                    args: vec![art, "--case".into(), case.into()],
                    cmake_args: vec![
                        format!("$<TARGET_FILE:{name}>"),
                        "--case".into(),
                        case.into(),
                    ],
                    arg_targets: vec![t],
                    labels: vec!["tools".into()],
                    env: Vec::new(),
                    timeout: if self.rng.chance(30) { Some(120) } else { None },
                    dir: d,
                    line: 0,
                });
                self.dirs[d].tests.push(test);
            }
        }
    }

    fn build_unittests(&mut self) {
        let p = self.p;
        let ut = self.add_dir("unittests".into(), Some(0));
        let mut gdirs = Vec::new();
        for i in 0..p.test_exes {
            let g = i * p.test_groups / p.test_exes;
            if gdirs.len() <= g {
                let gd = self.add_dir(format!("unittests/{}", group_name(g)), Some(ut));
                gdirs.push(gd);
            }
            let gname = group_name(g);
            let name = format!(
                "{gname}Tests{}",
                i - (g * p.test_exes).div_ceil(p.test_groups)
            );
            let d = self.add_dir(format!("unittests/{gname}/{name}"), Some(gdirs[g]));
            let t = self.add_target(name.clone(), Kind::Exe, Role::Test, p.layers, d);
            self.targets[t].defines.push("SYNTH_UNITTEST=1".into());
            self.exe_links(t, p.test_links, p.layers / 3);
            let dir_rel = self.dirs[d].rel.clone();
            let n = self.rng.range(p.test_srcs);
            self.exe_sources(t, &dir_rel, n, None, "Test");
            let nt = self.rng.range(p.tests_per_exe);
            let suites = self.pick_words(nt);
            for sname in suites {
                let suite = format!("{sname}Test");
                let env = if self.rng.chance(20) {
                    vec![
                        "GTEST_COLOR=0".to_owned(),
                        format!("SYNTH_TMPDIR={}/unittests/tmp", self.build),
                    ]
                } else {
                    Vec::new()
                };
                let test = self.tests.len();
                self.tests.push(Test {
                    name: format!("{name}.{suite}"),
                    exe: t,
                    args: vec![format!("--gtest_filter={suite}.*")],
                    cmake_args: vec![format!("--gtest_filter={suite}.*")],
                    arg_targets: Vec::new(),
                    labels: vec!["unit".into(), gname.to_ascii_lowercase()],
                    env,
                    timeout: if self.rng.chance(30) { Some(60) } else { None },
                    dir: d,
                    line: 0,
                });
                self.dirs[d].tests.push(test);
            }
        }
    }

    fn build_docs(&mut self) {
        if self.p.utils == 0 {
            return;
        }
        let d = self.add_dir("docs".into(), Some(0));
        let test_exes: Vec<usize> = (0..self.targets.len())
            .filter(|&t| self.targets[t].role == Role::Test)
            .collect();
        for i in 0..self.p.utils {
            let g = group_name(i);
            let t = self.add_target(
                format!("docs-{}", g.to_ascii_lowercase()),
                Kind::Utility,
                Role::Docs,
                self.p.layers,
                d,
            );
            self.targets[t].doc_sources.push(format!("{g}.md"));
            if let Some(&e) = test_exes.get(i * 7 % test_exes.len().max(1)) {
                self.targets[e].util_deps.push(t);
            }
        }
    }

    /// Link interface of `x`: what its consumers also depend on.
    fn interface(&self, x: usize) -> Vec<usize> {
        let t = &self.targets[x];
        match t.kind {
            Kind::Static | Kind::Object | Kind::Interface => {
                t.links.iter().map(|(d, _)| *d).collect()
            }
            Kind::Shared => t
                .links
                .iter()
                .filter(|(_, v)| *v != Vis::Private)
                .map(|(d, _)| *d)
                .collect(),
            Kind::Exe | Kind::Utility => Vec::new(),
        }
    }

    /// Interface include providers of `x` (x itself, then PUBLIC/INTERFACE deps recursively).
    fn iface_includes(&self, x: usize, out: &mut Vec<usize>, visited: &mut HashSet<usize>) {
        if !visited.insert(x) {
            return;
        }
        if !self.targets[x].pub_hdrs.is_empty() && !out.contains(&x) {
            out.push(x);
        }
        for &(d, v) in &self.targets[x].links {
            if v != Vis::Private {
                self.iface_includes(d, out, visited);
            }
        }
    }

    fn finish(&mut self) {
        // Every shared library must be reachable by some test (else a change in it is a
        // RUNTIME_LOADED_TARGET fallback): link unreached ones into a test executable.
        self.compute_graph();
        let test_exes: Vec<usize> = (0..self.targets.len())
            .filter(|&t| self.targets[t].role == Role::Test)
            .collect();
        let reached = self.reached_by_tests();
        let mut fixed = false;
        for s in 0..self.targets.len() {
            if self.targets[s].kind == Kind::Shared && !reached[s] && !test_exes.is_empty() {
                let e = test_exes[s % test_exes.len()];
                self.targets[e].links.push((s, Vis::Private));
                fixed = true;
            }
        }
        if fixed {
            self.compute_graph();
        }
    }

    /// Private link dependencies of a shared library that are shared libraries
    /// themselves (cmLinkInterface::SharedDeps): needed at run time, not linked.
    fn shared_deps(&self, x: usize) -> Vec<usize> {
        let t = &self.targets[x];
        if t.kind != Kind::Shared {
            return Vec::new();
        }
        t.links
            .iter()
            .filter(|(d, v)| *v == Vis::Private && self.targets[*d].kind == Kind::Shared)
            .map(|(d, _)| *d)
            .collect()
    }

    /// The link line CMake 3.25 computes for `t` (cmComputeLinkDepends for an acyclic
    /// graph, then cmComputeLinkInformation): a breadth-first walk of the link
    /// interfaces from the direct items, plus the runtime-only shared dependencies of
    /// shared libraries; ordered by the component graph (Tarjan numbering, topological
    /// ids, pending components), static libraries repeated where a later item needs them
    /// again, only the last occurrence of a shared library kept. Object and interface
    /// libraries take part in the ordering but are not linked.
    fn link_info(&self, t: usize) -> LinkInfo {
        #[derive(Clone, Copy, PartialEq)]
        enum EKind {
            Library,
            SharedDep,
        }
        let mut entries: Vec<(usize, Option<usize>, EKind)> = Vec::new();
        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut edges: Vec<Vec<usize>> = Vec::new();
        let mut bfs = std::collections::VecDeque::new();
        let mut originals = Vec::new();
        for &(d, _) in &self.targets[t].links {
            let e = *index.entry(d).or_insert_with(|| {
                entries.push((d, None, EKind::Library));
                edges.push(Vec::new());
                bfs.push_back(entries.len() - 1);
                entries.len() - 1
            });
            originals.push(e);
        }
        let mut shared_q: std::collections::VecDeque<(usize, usize)> =
            std::collections::VecDeque::new();
        let mut followed: HashSet<usize> = HashSet::new();
        while let Some(e) = bfs.pop_front() {
            let x = entries[e].0;
            for y in self.interface(x) {
                let j = match index.get(&y) {
                    Some(&j) => j,
                    None => {
                        entries.push((y, Some(x), EKind::Library));
                        edges.push(Vec::new());
                        bfs.push_back(entries.len() - 1);
                        index.insert(y, entries.len() - 1);
                        entries.len() - 1
                    }
                };
                edges[e].push(j);
            }
            if self.targets[x].kind != Kind::Interface && followed.insert(e) {
                for s in self.shared_deps(x) {
                    shared_q.push_back((e, s));
                }
            }
        }
        while let Some((dep_e, y)) = shared_q.pop_front() {
            let j = match index.get(&y) {
                Some(&j) => j,
                None => {
                    entries.push((y, None, EKind::SharedDep));
                    edges.push(Vec::new());
                    index.insert(y, entries.len() - 1);
                    entries.len() - 1
                }
            };
            edges[dep_e].push(j);
            if followed.insert(j) {
                for z in self.interface(y).into_iter().chain(self.shared_deps(y)) {
                    shared_q.push_back((j, z));
                }
            }
        }
        let n = entries.len();
        // CleanConstraintGraph: each node's edges sorted and de-duplicated.
        for e in &mut edges {
            e.sort_unstable();
            e.dedup();
        }
        // cmComputeComponentGraph: Tarjan from entry 0 onwards numbers the (here trivial)
        // strongly connected components in DFS post-order.
        let mut comp = vec![usize::MAX; n];
        let mut node_of = Vec::with_capacity(n);
        fn tarjan(i: usize, edges: &[Vec<usize>], comp: &mut [usize], node_of: &mut Vec<usize>) {
            comp[i] = usize::MAX - 1; // on the stack
            for &j in &edges[i] {
                if comp[j] == usize::MAX {
                    tarjan(j, edges, comp, node_of);
                }
            }
            comp[i] = node_of.len();
            node_of.push(i);
        }
        for i in 0..n {
            if comp[i] == usize::MAX {
                tarjan(i, &edges, &mut comp, &mut node_of);
            }
        }
        // VisitComponent: topological ids, components from the last to the first,
        // neighbours in reverse order.
        let mut corder = vec![usize::MAX; n];
        let mut next_id = n;
        fn visit(
            c: usize,
            edges: &[Vec<usize>],
            comp: &[usize],
            node_of: &[usize],
            corder: &mut [usize],
            next_id: &mut usize,
        ) {
            if corder[c] != usize::MAX {
                return;
            }
            corder[c] = usize::MAX - 1; // visiting
            for &e in edges[node_of[c]].iter().rev() {
                visit(comp[e], edges, comp, node_of, corder, next_id);
            }
            *next_id -= 1;
            corder[c] = *next_id;
        }
        for c in (0..n).rev() {
            visit(c, &edges, &comp, &node_of, &mut corder, &mut next_id);
        }
        let order: Vec<usize> = (0..n).map(|i| corder[comp[i]]).collect();
        // VisitEntry: the original items in order, then pending components by id.
        let mut pending: std::collections::BTreeMap<usize, usize> =
            std::collections::BTreeMap::new();
        let mut final_order: Vec<usize> = Vec::new();
        let mut visit_entry = |i: usize, pending: &mut std::collections::BTreeMap<usize, usize>| {
            final_order.push(i);
            pending.remove(&order[i]);
            for &d in &edges[i] {
                pending.insert(order[d], d);
            }
        };
        for &o in &originals {
            visit_entry(o, &mut pending);
        }
        while let Some((_, &e)) = pending.iter().next() {
            visit_entry(e, &mut pending);
        }
        // Keep only the last occurrence of a shared library.
        let mut seen_shared = HashSet::new();
        let mut fin = Vec::new();
        for &i in final_order.iter().rev() {
            let x = entries[i].0;
            if self.targets[x].kind != Kind::Shared || seen_shared.insert(x) {
                fin.push(i);
            }
        }
        fin.reverse();
        // cmComputeLinkInformation: linked items, runtime path, rpath-link directories.
        let mut info = LinkInfo::default();
        for i in fin {
            let (x, via, kind) = entries[i];
            match (self.targets[x].kind, kind) {
                (Kind::Static, EKind::Library) => info.libs.push((x, via)),
                (Kind::Shared, EKind::Library) => {
                    info.libs.push((x, via));
                    if !info.rpath.contains(&x) {
                        info.rpath.push(x);
                    }
                }
                (Kind::Shared, EKind::SharedDep) => {
                    if !info.rpath.contains(&x) {
                        info.rpath.push(x);
                    }
                    if !info.rpath_link.contains(&x) {
                        info.rpath_link.push(x);
                    }
                }
                _ => {}
            }
        }
        info
    }

    fn compute_graph(&mut self) {
        let n = self.targets.len();
        for t in 0..n {
            // dependencies: direct links, then link interfaces recursively (cmComputeTargetDepends).
            let mut emitted = vec![false; n];
            emitted[t] = true;
            let mut deps = Vec::new();
            let mut stack: Vec<usize> = Vec::new();
            for &(d, _) in &self.targets[t].links {
                if !emitted[d] {
                    emitted[d] = true;
                    deps.push(d);
                    stack.push(d);
                }
            }
            while let Some(x) = stack.pop() {
                for y in self.interface(x) {
                    if !emitted[y] {
                        emitted[y] = true;
                        deps.push(y);
                        stack.push(y);
                    }
                }
            }
            // Link line (BFS: direct items first, then what each one's interface brings).
            let link = if matches!(self.targets[t].kind, Kind::Exe | Kind::Shared) {
                self.link_info(t)
            } else {
                LinkInfo::default()
            };
            deps.extend(self.targets[t].util_deps.iter().copied());
            // Interface libraries without sources are not File API targets.
            deps.retain(|&d| self.targets[d].kind != Kind::Interface);
            deps.sort_unstable(); // creation order
            deps.dedup();
            let mut includes = Vec::new();
            if !self.targets[t].pub_hdrs.is_empty() {
                includes.push(t);
            }
            let mut visited = HashSet::new();
            for &(d, _) in &self.targets[t].links {
                self.iface_includes(d, &mut includes, &mut visited);
            }
            let object_inputs: Vec<usize> = self.targets[t]
                .links
                .iter()
                .map(|(d, _)| *d)
                .filter(|&d| self.targets[d].kind == Kind::Object)
                .collect();
            let tg = &mut self.targets[t];
            tg.deps = deps;
            tg.link = link;
            tg.includes = includes;
            tg.object_inputs = object_inputs;
        }
    }

    fn direct_targets(&self, test: &Test) -> Vec<usize> {
        let mut v = vec![test.exe];
        v.extend(test.arg_targets.iter().copied());
        v
    }

    fn reached_by_tests(&self) -> Vec<bool> {
        let mut seen = vec![false; self.targets.len()];
        let mut stack = Vec::new();
        for test in &self.tests {
            for d in self.direct_targets(test) {
                if !seen[d] {
                    seen[d] = true;
                    stack.push(d);
                }
            }
        }
        while let Some(t) = stack.pop() {
            for &d in &self.targets[t].deps {
                if !seen[d] {
                    seen[d] = true;
                    stack.push(d);
                }
            }
        }
        seen
    }

    // ------------------------------------------------------------------ paths

    fn obj_rel(&self, tu: &Tu) -> String {
        let t = &self.targets[tu.target];
        let dir = &self.dirs[t.dir].rel;
        let in_t = tu.in_target.replace("..", "__").replace(' ', "_");
        if dir == "." {
            format!("CMakeFiles/{}.dir/{in_t}.o", t.name)
        } else {
            format!("{dir}/CMakeFiles/{}.dir/{in_t}.o", t.name)
        }
    }

    /// An OBJECT library's object as its `artifacts[]` names it: single-config
    /// Ninja puts its (empty) configuration directory in, as `./`.
    fn obj_artifact(&self, tu: &Tu) -> String {
        let rel = self.obj_rel(tu);
        match self.p.generator {
            Generator::Makefiles => rel,
            Generator::Ninja => {
                let i = rel.find(".dir/").expect("object directory") + 5;
                format!("{}./{}", &rel[..i], &rel[i..])
            }
        }
    }

    fn artifact_rel(&self, t: usize) -> Option<String> {
        let tg = &self.targets[t];
        let dir = &self.dirs[tg.dir].rel;
        let file = match tg.kind {
            Kind::Static => format!("lib{}.a", tg.name),
            Kind::Shared => format!("lib{}.so", tg.name),
            Kind::Exe => tg.name.clone(),
            _ => return None,
        };
        Some(if dir == "." {
            file
        } else {
            format!("{dir}/{file}")
        })
    }

    fn target_id(&self, t: usize) -> String {
        let tg = &self.targets[t];
        format!(
            "{}::@{}",
            tg.name,
            hash20(&format!("dir:{}", self.dirs[tg.dir].rel))
        )
    }

    fn build_abs(&self, rel: &str) -> String {
        if rel == "." {
            self.build.clone()
        } else {
            format!("{}/{rel}", self.build)
        }
    }

    fn src_abs(&self, rel: &str) -> String {
        if rel == "." {
            self.src.clone()
        } else {
            format!("{}/{rel}", self.src)
        }
    }

    // --------------------------------------------------------------- writing

    fn cmakelists(&mut self) -> Vec<(String, String)> {
        let mut files = Vec::new();
        for di in 0..self.dirs.len() {
            let mut text = String::new();
            let mut line = 0usize;
            let mut push = |text: &mut String, l: &str| {
                text.push_str(l);
                text.push('\n');
                line += 1;
                line
            };
            if di == 0 {
                for l in [
                    "# Synthetic project written by examples/synth.rs (diff2test benchmarks).",
                    "cmake_minimum_required(VERSION 3.20)",
                    "project(Synth LANGUAGES CXX)",
                    "set(CMAKE_CXX_STANDARD 17)",
                    "set(CMAKE_CXX_STANDARD_REQUIRED ON)",
                    "set(CMAKE_CXX_EXTENSIONS OFF)",
                    "set(CMAKE_POSITION_INDEPENDENT_CODE ON)",
                    "enable_testing()",
                ] {
                    push(&mut text, l);
                }
            }
            let me = self.dirs[di].rel.clone();
            for &c in &self.dirs[di].children.clone() {
                let child = relpath(&me, &self.dirs[c].rel);
                push(&mut text, &format!("add_subdirectory({child})"));
            }
            for &t in &self.dirs[di].targets.clone() {
                let tg = &self.targets[t];
                let name = tg.name.clone();
                let mut srcs: Vec<String> = tg
                    .tus
                    .iter()
                    .map(|&u| self.tus[u].in_target.clone())
                    .collect();
                srcs.extend(
                    tg.pub_hdrs
                        .iter()
                        .chain(&tg.priv_hdrs)
                        .map(|&h| relpath(&me, &self.headers[h as usize].rel)),
                );
                let add;
                let tid;
                match tg.kind {
                    Kind::Interface => {
                        add = push(&mut text, &format!("add_library({name} INTERFACE)"));
                        tid = push(
                            &mut text,
                            &format!("target_include_directories({name} INTERFACE ${{CMAKE_CURRENT_SOURCE_DIR}}/include)"),
                        );
                    }
                    Kind::Utility => {
                        add = push(
                            &mut text,
                            &format!(
                                "add_custom_target({name} SOURCES {})",
                                tg.doc_sources.join(" ")
                            ),
                        );
                        tid = 0;
                    }
                    _ => {
                        let head = match tg.kind {
                            Kind::Static => format!("add_library({name} STATIC"),
                            Kind::Shared => format!("add_library({name} SHARED"),
                            Kind::Object => format!("add_library({name} OBJECT"),
                            _ => format!("add_executable({name}"),
                        };
                        add = push(&mut text, &head);
                        for s in &srcs {
                            push(&mut text, &format!("  {s}"));
                        }
                        push(&mut text, "  )");
                        tid = if tg.pub_hdrs.is_empty() {
                            0
                        } else {
                            push(
                                &mut text,
                                &format!("target_include_directories({name} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}}/include)"),
                            )
                        };
                    }
                }
                let tg = &self.targets[t];
                let tll = if tg.links.is_empty() {
                    0
                } else {
                    let mut l = format!("target_link_libraries({name}");
                    let mut last: Option<Vis> = None;
                    for &(d, v) in &tg.links {
                        let v = if tg.kind == Kind::Interface {
                            Vis::Interface
                        } else {
                            v
                        };
                        if last != Some(v) {
                            l.push(' ');
                            l.push_str(v.word());
                            last = Some(v);
                        }
                        l.push(' ');
                        l.push_str(&self.targets[d].name);
                    }
                    l.push(')');
                    push(&mut text, &l)
                };
                let tcd = if tg.defines.is_empty() {
                    0
                } else {
                    push(
                        &mut text,
                        &format!(
                            "target_compile_definitions({name} PRIVATE {})",
                            tg.defines.join(" ")
                        ),
                    )
                };
                let addd = if tg.util_deps.is_empty() {
                    0
                } else {
                    let names: Vec<&str> = tg
                        .util_deps
                        .iter()
                        .map(|&u| self.targets[u].name.as_str())
                        .collect();
                    push(
                        &mut text,
                        &format!("add_dependencies({name} {})", names.join(" ")),
                    )
                };
                let tg = &mut self.targets[t];
                tg.line_add = add;
                tg.line_tid = tid;
                tg.line_tll = tll;
                tg.line_tcd = tcd;
                tg.line_adddeps = addd;
            }
            for &ti in &self.dirs[di].tests.clone() {
                let test = &self.tests[ti];
                let mut l = format!(
                    "add_test(NAME {} COMMAND {}",
                    test.name, self.targets[test.exe].name
                );
                for a in &test.cmake_args {
                    l.push(' ');
                    l.push_str(a);
                }
                l.push(')');
                let n = push(&mut text, &l);
                self.tests[ti].line = n;
            }
            for &ti in &self.dirs[di].tests.clone() {
                let test = &self.tests[ti];
                let mut l = format!("set_tests_properties({} PROPERTIES", test.name);
                if !test.env.is_empty() {
                    let _ = write!(l, " ENVIRONMENT \"{}\"", test.env.join(";"));
                }
                let _ = write!(l, " LABELS \"{}\"", test.labels.join(";"));
                if let Some(to) = test.timeout {
                    let _ = write!(l, " TIMEOUT {to}");
                }
                l.push(')');
                push(&mut text, &l);
            }
            let path = if me == "." {
                "CMakeLists.txt".to_owned()
            } else {
                format!("{me}/CMakeLists.txt")
            };
            files.push((path, text));
        }
        files
    }

    fn header_text(&self, h: u32) -> String {
        let hd = &self.headers[h as usize];
        let guard: String = hd
            .rel
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        let mut t =
            format!("// {} (synthetic header, examples/synth.rs)\n#ifndef SYNTH_{guard}\n#define SYNTH_{guard}\n", hd.rel);
        for inc in &hd.incs {
            match inc {
                Inc::Proj(x) => {
                    let _ = writeln!(t, "#include \"{}\"", self.headers[*x as usize].spelling);
                }
                Inc::Std(s) => {
                    let _ = writeln!(t, "#include <{}>", self.data.std_names[*s as usize]);
                }
            }
        }
        let ns = &self.targets[hd.target].name;
        let stem = hd
            .rel
            .rsplit('/')
            .next()
            .unwrap_or("H")
            .trim_end_matches(".hpp");
        let _ = writeln!(
            t,
            "namespace synth_{ns} {{\nstruct {stem} {{\n  int value = {};\n  int twice() const {{ return value * 2; }}\n}};\n}} // namespace synth_{ns}\n#endif",
            h % 97
        );
        t
    }

    fn tu_text(&self, u: usize) -> String {
        let tu = &self.tus[u];
        let tg = &self.targets[tu.target];
        let mut t = format!(
            "// {} (synthetic translation unit of {}, examples/synth.rs)\n",
            tu.rel, tg.name
        );
        for inc in &tu.incs {
            match inc {
                Inc::Proj(x) => {
                    let _ = writeln!(t, "#include \"{}\"", self.headers[*x as usize].spelling);
                }
                Inc::Std(s) => {
                    let _ = writeln!(t, "#include <{}>", self.data.std_names[*s as usize]);
                }
            }
        }
        let stem: String = tu
            .in_target
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let ns = tg.name.replace('-', "_");
        let _ =
            writeln!(t, "\nnamespace synth_{ns} {{\nint {stem}_entry() {{ return {}; }}\n}} // namespace synth_{ns}", u % 101);
        if tu.main_fn {
            let _ = writeln!(t, "\nint main(int argc, char** argv) {{\n  (void)argc;\n  (void)argv;\n  return 0;\n}}");
        }
        t
    }

    /// The depfile text and (total, project) prerequisite counts.
    fn depfile(&self, u: usize, stamp: &mut [u32], sstamp: &mut [u32]) -> (String, usize, usize) {
        let mut w = DepWriter::new(&self.obj_rel(&self.tus[u]));
        let (mut n, mut np) = (0, 0);
        self.prereqs(u, stamp, sstamp, |p, project| {
            w.dep(p);
            n += 1;
            np += usize::from(project);
        });
        (w.finish(), n, np)
    }

    /// Appends the unit's `.ninja_deps` record (the same prerequisites as its
    /// depfile, which ninja folds in and deletes) and returns the
    /// (total, project) prerequisite counts.
    fn ninja_record(
        &self,
        u: usize,
        stamp: &mut [u32],
        sstamp: &mut [u32],
        log: &mut NinjaLog,
        mtime_ns: u64,
    ) -> (usize, usize) {
        let out = log.id(&self.obj_rel(&self.tus[u]));
        let mut ins = std::mem::take(&mut log.scratch);
        ins.clear();
        let mut np = 0;
        self.prereqs(u, stamp, sstamp, |p, project| {
            ins.push(log.id(p));
            np += usize::from(project);
        });
        log.deps(out, mtime_ns, &ins);
        let n = ins.len();
        log.scratch = ins;
        (n, np)
    }

    /// `CMakeFiles/rules.ninja` and `build.ninja` as CMake 3.25's Ninja
    /// generator writes them for the compile steps: one rule per target, one
    /// edge per unit with the bindings CMake gives it.
    fn ninja_manifest(&self) -> (String, String) {
        let mut rules = String::from(
            "# CMAKE generated file: DO NOT EDIT!\n\nninja_required_version = 1.5\n\n",
        );
        let mut build = String::from(
            "# CMAKE generated file: DO NOT EDIT!\n\nninja_required_version = 1.5\n\nCONFIGURATION = Debug\n\ninclude CMakeFiles/rules.ninja\n\n",
        );
        for t in &self.targets {
            if t.tus.is_empty() {
                continue;
            }
            rules.push_str(&format!(
                "rule CXX_COMPILER__{n}_Debug\n  depfile = $DEP_FILE\n  deps = gcc\n  \
                 command = /usr/bin/c++ $DEFINES $INCLUDES $FLAGS -MD -MT $out -MF $DEP_FILE -o $out -c $in\n  \
                 description = Building CXX object $out\n\n",
                n = t.name
            ));
            let defines: Vec<String> = (t.kind == Kind::Shared)
                .then(|| format!("-D{}_EXPORTS", t.name))
                .into_iter()
                .chain(t.defines.iter().map(|d| format!("-D{d}")))
                .collect();
            let includes: Vec<String> = t
                .includes
                .iter()
                .map(|&p| {
                    format!(
                        "-I{}/include",
                        self.src_abs(&self.dirs[self.targets[p].dir].rel)
                    )
                })
                .collect();
            let pic = if t.kind == Kind::Exe {
                "-g -fPIE"
            } else {
                "-g -fPIC"
            };
            let dir = &self.dirs[t.dir].rel;
            let objdir = if dir == "." {
                format!("CMakeFiles/{}.dir", t.name)
            } else {
                format!("{dir}/CMakeFiles/{}.dir", t.name)
            };
            for &u in &t.tus {
                let tu = &self.tus[u];
                let obj = self.obj_rel(tu).replace(' ', "$ ").replace(':', "$:");
                let src = format!("{}/{}", self.src, tu.rel)
                    .replace(' ', "$ ")
                    .replace(':', "$:");
                let file_dir = obj.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
                build.push_str(&format!(
                    "build {obj}: CXX_COMPILER__{n}_Debug {src} || cmake_object_order_depends_target_{n}\n",
                    n = t.name
                ));
                if !defines.is_empty() {
                    build.push_str(&format!("  DEFINES = {}\n", defines.join(" ")));
                }
                build.push_str(&format!(
                    "  DEP_FILE = {obj}.d\n  FLAGS = {pic} -std=c++17\n  INCLUDES = {}\n  \
                     OBJECT_DIR = {objdir}\n  OBJECT_FILE_DIR = {file_dir}\n\n",
                    includes.join(" ")
                ));
            }
        }
        (rules, build)
    }

    /// Calls `f(path, is_project_file)` for each prerequisite g++ 12 lists for
    /// the unit, in its order: the source, `stdc-predef.h`, then the includes.
    fn prereqs(
        &self,
        u: usize,
        stamp: &mut [u32],
        sstamp: &mut [u32],
        mut f: impl FnMut(&str, bool),
    ) {
        let tu = &self.tus[u];
        let cur = u as u32 + 1;
        f(&format!("{}/{}", self.src, tu.rel), true);
        f(STDC_PREDEF, false);
        // Explicit stack of include lists: depth-first, first inclusion wins.
        let mut stack: Vec<(&[Inc], usize)> = vec![(&tu.incs, 0)];
        let mut path = String::new();
        while let Some((incs, i)) = stack.pop() {
            if i >= incs.len() {
                continue;
            }
            stack.push((incs, i + 1));
            match incs[i] {
                Inc::Proj(h) => {
                    if stamp[h as usize] != cur {
                        stamp[h as usize] = cur;
                        let hd = &self.headers[h as usize];
                        path.clear();
                        path.push_str(&self.src);
                        path.push('/');
                        path.push_str(&hd.rel);
                        f(&path, true);
                        stack.push((&hd.incs, 0));
                    }
                }
                Inc::Std(s) => {
                    for &p in &self.data.std_closure[s as usize] {
                        if sstamp[p as usize] != cur {
                            sstamp[p as usize] = cur;
                            f(self.data.sys[p as usize], false);
                        }
                    }
                }
            }
        }
    }

    fn backtrace_graph(&self, nodes: &BtGraph) -> J {
        obj(vec![
            (
                "commands",
                J::A(nodes.commands.iter().map(|c| s(*c)).collect()),
            ),
            (
                "files",
                J::A(nodes.files.iter().map(|f| s(f.clone())).collect()),
            ),
            (
                "nodes",
                J::A(
                    nodes
                        .nodes
                        .iter()
                        .map(|n| {
                            let mut m = vec![("file", J::I(n.file as i64))];
                            if let Some((c, line, parent)) = n.cmd {
                                m.push(("command", J::I(c as i64)));
                                m.push(("line", J::I(line as i64)));
                                m.push(("parent", J::I(parent as i64)));
                            }
                            obj(m)
                        })
                        .collect(),
                ),
            ),
        ])
    }

    fn target_json(&self, t: usize) -> J {
        let tg = &self.targets[t];
        let dir = &self.dirs[tg.dir].rel;
        let file = if dir == "." {
            "CMakeLists.txt".to_owned()
        } else {
            format!("{dir}/CMakeLists.txt")
        };
        let mut bt = BtGraph::default();
        let add_cmd = match tg.kind {
            Kind::Exe => "add_executable",
            Kind::Utility => "add_custom_target",
            _ => "add_library",
        };
        let bt_add = bt.node(&file, add_cmd, tg.line_add);
        let mut m: Vec<(&'static str, J)> = vec![
            ("name", s(tg.name.clone())),
            ("id", s(self.target_id(t))),
            (
                "type",
                s(match tg.kind {
                    Kind::Static => "STATIC_LIBRARY",
                    Kind::Shared => "SHARED_LIBRARY",
                    Kind::Object => "OBJECT_LIBRARY",
                    Kind::Interface => "INTERFACE_LIBRARY",
                    Kind::Exe => "EXECUTABLE",
                    Kind::Utility => "UTILITY",
                }),
            ),
            ("backtrace", J::I(bt_add as i64)),
            (
                "paths",
                obj(vec![("build", s(dir.clone())), ("source", s(dir.clone()))]),
            ),
        ];
        if let Some(a) = self.artifact_rel(t) {
            m.push(("artifacts", J::A(vec![obj(vec![("path", s(a.clone()))])])));
            m.push((
                "nameOnDisk",
                s(a.rsplit('/').next().unwrap_or(&a).to_owned()),
            ));
        } else if tg.kind == Kind::Object {
            m.push((
                "artifacts",
                J::A(
                    tg.tus
                        .iter()
                        .map(|&u| obj(vec![("path", s(self.obj_artifact(&self.tus[u])))]))
                        .collect(),
                ),
            ));
        }
        // link / archive
        match tg.kind {
            Kind::Static => m.push(("archive", obj(Vec::new()))),
            Kind::Exe | Kind::Shared => {
                let mut frags = Vec::new();
                if tg.kind == Kind::Exe {
                    frags.push(obj(vec![("fragment", s("-g")), ("role", s("flags"))]));
                }
                frags.push(obj(vec![("fragment", s("")), ("role", s("flags"))]));
                let dirs_of = |ts: &[usize]| -> String {
                    let v: Vec<String> = ts
                        .iter()
                        .map(|&l| self.build_abs(&self.dirs[self.targets[l].dir].rel))
                        .collect();
                    v.join(":")
                };
                if !tg.link.rpath.is_empty() {
                    frags.push(obj(vec![
                        (
                            "fragment",
                            s(format!("-Wl,-rpath,{}", dirs_of(&tg.link.rpath))),
                        ),
                        ("role", s("libraries")),
                    ]));
                }
                for &(l, via) in &tg.link.libs {
                    let b = match via {
                        None => bt.node(&file, "target_link_libraries", tg.line_tll),
                        Some(v) => {
                            let vt = &self.targets[v];
                            let vdir = &self.dirs[vt.dir].rel;
                            bt.node(
                                &format!("{vdir}/CMakeLists.txt"),
                                "target_link_libraries",
                                vt.line_tll,
                            )
                        }
                    };
                    let a = self.artifact_rel(l).expect("linkable");
                    frags.push(obj(vec![
                        ("backtrace", J::I(b as i64)),
                        // Makefiles link in the target's directory, Ninja at the top.
                        (
                            "fragment",
                            s(match self.p.generator {
                                Generator::Makefiles => relpath(dir, &a),
                                Generator::Ninja => a,
                            }),
                        ),
                        ("role", s("libraries")),
                    ]));
                }
                if !tg.link.rpath_link.is_empty() {
                    frags.push(obj(vec![
                        (
                            "fragment",
                            s(format!("-Wl,-rpath-link,{}", dirs_of(&tg.link.rpath_link))),
                        ),
                        ("role", s("libraries")),
                    ]));
                }
                m.push((
                    "link",
                    obj(vec![
                        ("commandFragments", J::A(frags)),
                        ("language", s("CXX")),
                    ]),
                ));
            }
            _ => {}
        }
        if !tg.deps.is_empty() {
            let deps = tg
                .deps
                .iter()
                .map(|&d| {
                    let b = if self.targets[d].kind == Kind::Utility {
                        bt.node(&file, "add_dependencies", tg.line_adddeps)
                    } else {
                        bt.node(&file, "target_link_libraries", tg.line_tll)
                    };
                    obj(vec![
                        ("backtrace", J::I(b as i64)),
                        ("id", s(self.target_id(d))),
                    ])
                })
                .collect();
            m.push(("dependencies", J::A(deps)));
        }
        // sources
        let mut sources = Vec::new();
        let mut groups: Vec<(&'static str, Vec<usize>)> = Vec::new();
        let add_group =
            |groups: &mut Vec<(&'static str, Vec<usize>)>, g: &'static str, i: usize| -> usize {
                match groups.iter().position(|(n, _)| *n == g) {
                    Some(p) => {
                        groups[p].1.push(i);
                        p
                    }
                    None => {
                        groups.push((g, vec![i]));
                        groups.len() - 1
                    }
                }
            };
        let mut compiled = Vec::new();
        for &u in &tg.tus {
            let i = sources.len();
            let gi = add_group(&mut groups, "Source Files", i);
            compiled.push(i);
            sources.push(obj(vec![
                ("backtrace", J::I(bt_add as i64)),
                ("compileGroupIndex", J::I(0)),
                ("path", s(self.tus[u].rel.clone())),
                ("sourceGroupIndex", J::I(gi as i64)),
            ]));
        }
        for &h in tg.pub_hdrs.iter().chain(&tg.priv_hdrs) {
            if tg.kind == Kind::Interface {
                break;
            }
            let i = sources.len();
            let gi = add_group(&mut groups, "Header Files", i);
            sources.push(obj(vec![
                ("backtrace", J::I(bt_add as i64)),
                ("path", s(self.headers[h as usize].rel.clone())),
                ("sourceGroupIndex", J::I(gi as i64)),
            ]));
        }
        for d in &tg.doc_sources {
            let i = sources.len();
            let gi = add_group(&mut groups, "", i);
            let rel = if dir == "." {
                d.clone()
            } else {
                format!("{dir}/{d}")
            };
            sources.push(obj(vec![
                ("backtrace", J::I(bt_add as i64)),
                ("path", s(rel)),
                ("sourceGroupIndex", J::I(gi as i64)),
            ]));
        }
        for &o in &tg.object_inputs {
            let b = bt.node(&file, "target_link_libraries", tg.line_tll);
            for &u in &self.targets[o].tus {
                let i = sources.len();
                let gi = add_group(&mut groups, "Object Libraries", i);
                sources.push(obj(vec![
                    ("backtrace", J::I(b as i64)),
                    ("isGenerated", J::Raw("true")),
                    (
                        "path",
                        s(format!("{}/{}", self.build, self.obj_rel(&self.tus[u]))),
                    ),
                    ("sourceGroupIndex", J::I(gi as i64)),
                ]));
            }
        }
        if !compiled.is_empty() {
            let mut includes = Vec::new();
            for &p in &tg.includes {
                let b = if p == t {
                    bt.node(&file, "target_include_directories", tg.line_tid)
                } else {
                    bt.node(&file, "target_link_libraries", tg.line_tll)
                };
                let pd = &self.dirs[self.targets[p].dir].rel;
                includes.push(obj(vec![
                    ("backtrace", J::I(b as i64)),
                    ("path", s(format!("{}/include", self.src_abs(pd)))),
                ]));
            }
            let pic = if tg.kind == Kind::Exe {
                "-g -fPIE"
            } else {
                "-g -fPIC"
            };
            let mut cg = vec![
                (
                    "compileCommandFragments",
                    J::A(vec![
                        obj(vec![("fragment", s(pic))]),
                        obj(vec![("fragment", s("-std=c++17"))]),
                    ]),
                ),
                ("language", s("CXX")),
                (
                    "languageStandard",
                    obj(vec![("backtraces", arr_i([bt_add])), ("standard", s("17"))]),
                ),
                ("sourceIndexes", arr_i(compiled)),
            ];
            let mut defines = Vec::new();
            if tg.kind == Kind::Shared {
                defines.push(obj(vec![("define", s(format!("{}_EXPORTS", tg.name)))]));
            }
            for d in &tg.defines {
                let b = bt.node(&file, "target_compile_definitions", tg.line_tcd);
                defines.push(obj(vec![
                    ("backtrace", J::I(b as i64)),
                    ("define", s(d.clone())),
                ]));
            }
            if !defines.is_empty() {
                cg.push(("defines", J::A(defines)));
            }
            if !includes.is_empty() {
                cg.push(("includes", J::A(includes)));
            }
            m.push(("compileGroups", J::A(vec![obj(cg)])));
        }
        m.push(("sources", J::A(sources)));
        m.push((
            "sourceGroups",
            J::A(
                groups
                    .into_iter()
                    .map(|(n, idx)| obj(vec![("name", s(n)), ("sourceIndexes", arr_i(idx))]))
                    .collect(),
            ),
        ));
        m.push(("backtraceGraph", self.backtrace_graph(&bt)));
        obj(m)
    }

    // -------------------------------------------------------------- oracle

    /// Tests an independent re-implementation of the selection rule expects for
    /// a change of `files` (project headers and translation-unit sources):
    /// `None` when the change forces the full suite (a header no depfile lists, or
    /// an affected executable or shared library that no test reaches).
    fn oracle(
        &self,
        hdr_users: &[Vec<usize>],
        hdrs: &[u32],
        srcs: &[usize],
    ) -> Option<Vec<String>> {
        let n = self.targets.len();
        let mut rev = vec![Vec::new(); n];
        for (t, tg) in self.targets.iter().enumerate() {
            for &d in &tg.deps {
                rev[d].push(t);
            }
        }
        let mut affected = vec![false; n];
        let mut stack = Vec::new();
        let start = |t: usize, affected: &mut Vec<bool>, stack: &mut Vec<usize>| {
            if !affected[t] {
                affected[t] = true;
                stack.push(t);
            }
        };
        for &h in hdrs {
            if hdr_users[h as usize].is_empty() {
                return None; // in no depfile: diff2test reports CHANGE_UNKNOWN
            }
            for &u in &hdr_users[h as usize] {
                start(self.tus[u].target, &mut affected, &mut stack);
            }
        }
        for &u in srcs {
            start(self.tus[u].target, &mut affected, &mut stack);
        }
        while let Some(t) = stack.pop() {
            for &r in &rev[t] {
                if !affected[r] {
                    affected[r] = true;
                    stack.push(r);
                }
            }
        }
        let reached = self.reached_by_tests();
        for t in 0..n {
            if affected[t]
                && matches!(self.targets[t].kind, Kind::Exe | Kind::Shared)
                && !reached[t]
            {
                return None;
            }
        }
        let mut names: Vec<String> = self
            .tests
            .iter()
            .filter(|test| self.direct_targets(test).iter().any(|&d| affected[d]))
            .map(|test| test.name.clone())
            .collect();
        names.sort();
        Some(names)
    }
}

#[derive(Default)]
struct BtNode {
    file: usize,
    cmd: Option<(usize, usize, usize)>,
}

#[derive(Default)]
struct BtGraph {
    commands: Vec<&'static str>,
    files: Vec<String>,
    nodes: Vec<BtNode>,
    file_node: HashMap<usize, usize>,
    cmd_node: HashMap<(usize, usize, usize), usize>,
}

impl BtGraph {
    /// The node of `command` at `file:line` (creating the file's root node first).
    fn node(&mut self, file: &str, command: &'static str, line: usize) -> usize {
        let fi = match self.files.iter().position(|f| f == file) {
            Some(i) => i,
            None => {
                self.files.push(file.to_owned());
                self.files.len() - 1
            }
        };
        let root = *self.file_node.entry(fi).or_insert_with(|| {
            self.nodes.push(BtNode {
                file: fi,
                cmd: None,
            });
            self.nodes.len() - 1
        });
        let ci = match self.commands.iter().position(|c| *c == command) {
            Some(i) => i,
            None => {
                self.commands.push(command);
                self.commands.len() - 1
            }
        };
        *self.cmd_node.entry((fi, ci, line)).or_insert_with(|| {
            self.nodes.push(BtNode {
                file: fi,
                cmd: Some((ci, line, root)),
            });
            self.nodes.len() - 1
        })
    }
}

// ---------------------------------------------------------------------------
// output

struct Writer {
    made: HashSet<PathBuf>,
    files: Vec<(PathBuf, i64)>,
}

impl Writer {
    fn write(&mut self, path: PathBuf, bytes: &[u8], mtime: i64) -> io::Result<u64> {
        if let Some(parent) = path.parent() {
            if !self.made.contains(parent) {
                std::fs::create_dir_all(parent)?;
                self.made.insert(parent.to_path_buf());
            }
        }
        std::fs::write(&path, bytes)?;
        self.files.push((path, mtime));
        Ok(bytes.len() as u64)
    }
}

fn prepare_out(out: &Path) -> io::Result<()> {
    if out.exists() {
        let stamp = out.join("synth-stamp.txt");
        let empty = std::fs::read_dir(out)?.next().is_none();
        if !empty && !stamp.exists() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists, is not empty and was not written by synth (no synth-stamp.txt); refusing to overwrite",
                    out.display()
                ),
            ));
        }
        for sub in ["src", "build", "changes"] {
            let p = out.join(sub);
            if p.exists() {
                std::fs::remove_dir_all(&p)?;
            }
        }
        if stamp.exists() {
            std::fs::remove_file(&stamp)?;
        }
    }
    std::fs::create_dir_all(out)
}

fn absolute(p: &Path) -> io::Result<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()?.join(p)
    };
    // Fold "." and ".." lexically (CMake keeps the logical path).
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    Ok(out)
}

/// Generates `preset` with `seed` into `out` (`out/src`, `out/build`, `out/changes`).
pub fn generate(preset: &Preset, seed: u64, out: &Path) -> io::Result<Summary> {
    let out = absolute(out)?;
    let out_str = out
        .to_str()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "output path is not UTF-8"))?;
    prepare_out(&out)?;
    let src = format!("{out_str}/src");
    let build = format!("{out_str}/build");
    let mut g = Gen::new(preset, seed, src.clone(), build.clone());

    // ---- model
    g.add_dir(".".into(), None);
    g.build_libs();
    g.build_driver();
    g.build_tools();
    g.build_unittests();
    g.build_docs();
    g.finish();
    let cmake_files = g.cmakelists();
    if std::env::var_os("SYNTH_DEBUG").is_some() {
        for l in 0..=g.p.layers {
            let hs: Vec<usize> = g
                .headers
                .iter()
                .filter(|h| g.targets[h.target].layer == l)
                .map(|h| h.closure.len())
                .collect();
            let ts: Vec<usize> = g
                .tus
                .iter()
                .filter(|u| g.targets[u.target].layer == l)
                .map(|u| u.proj.len())
                .collect();
            let avg = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
            eprintln!(
                "layer {l}: {} headers avg closure {:.1} max {}; {} TUs avg proj {:.1} max {}",
                hs.len(),
                avg(&hs),
                hs.iter().max().unwrap_or(&0),
                ts.len(),
                avg(&ts),
                ts.iter().max().unwrap_or(&0)
            );
        }
    }

    let missing: Vec<&str> = g
        .data
        .sys
        .iter()
        .copied()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "synth: warning: {} of {} system headers named in the depfiles do not exist on this machine (e.g. {}); the tree is still usable (diff2test ignores system headers)",
            missing.len(),
            g.data.sys.len(),
            missing[0]
        );
    }

    let mut w = Writer {
        made: HashSet::new(),
        files: Vec::new(),
    };
    let mut sum = Summary {
        preset: preset.name.into(),
        seed,
        out: out.clone(),
        ..Default::default()
    };
    let src_p = PathBuf::from(&src);
    let build_p = PathBuf::from(&build);
    let ninja = preset.generator == Generator::Ninja;
    let (gen_name, make_program, make_help) = if ninja {
        (
            "Ninja",
            "/usr/bin/ninja",
            "Program used to build from build.ninja files.",
        )
    } else {
        ("Unix Makefiles", "/usr/bin/gmake", "Path to a program.")
    };

    // ---- source tree (T0)
    for (rel, text) in &cmake_files {
        sum.src_bytes += w.write(src_p.join(rel), text.as_bytes(), T0)?;
        sum.src_files += 1;
    }
    for h in 0..g.headers.len() {
        let text = g.header_text(h as u32);
        sum.src_bytes += w.write(src_p.join(&g.headers[h].rel), text.as_bytes(), T0)?;
        sum.src_files += 1;
    }
    for u in 0..g.tus.len() {
        let text = g.tu_text(u);
        sum.src_bytes += w.write(src_p.join(&g.tus[u].rel), text.as_bytes(), T0)?;
        sum.src_files += 1;
    }
    for t in 0..g.targets.len() {
        for d in &g.targets[t].doc_sources {
            let dir = &g.dirs[g.targets[t].dir].rel;
            let text = format!(
                "# {}\n\nSynthetic documentation page of {}.\n",
                d, g.targets[t].name
            );
            sum.src_bytes += w.write(src_p.join(dir).join(d), text.as_bytes(), T0)?;
            sum.src_files += 1;
        }
    }

    // ---- File API reply (T0+100)
    let reply = build_p.join(".cmake/api/v1/reply");
    let query = build_p.join(".cmake/api/v1/query");
    for q in ["codemodel-v2", "cache-v2", "cmakeFiles-v1", "toolchains-v1"] {
        sum.other_build_bytes += w.write(query.join(q), b"", T0)?;
        sum.other_build_files += 1;
    }
    let reply_write =
        |w: &mut Writer, sum: &mut Summary, prefix: &str, text: String| -> io::Result<String> {
            let name = format!("{prefix}-{}.json", hash20(&text));
            sum.reply_bytes += w.write(reply.join(&name), text.as_bytes(), T0 + 100)?;
            sum.reply_files += 1;
            Ok(name)
        };
    // Targets sorted by name in the codemodel.
    let mut order: Vec<usize> = (0..g.targets.len())
        .filter(|&t| g.targets[t].kind != Kind::Interface)
        .collect();
    order.sort_by(|a, b| g.targets[*a].name.cmp(&g.targets[*b].name));
    let mut cm_index = vec![usize::MAX; g.targets.len()];
    for (i, &t) in order.iter().enumerate() {
        cm_index[t] = i;
    }
    let mut target_refs = Vec::new();
    for &t in &order {
        let text = json_file_api(&g.target_json(t));
        let file = reply_write(
            &mut w,
            &mut sum,
            &format!("target-{}-Debug", g.targets[t].name),
            text,
        )?;
        target_refs.push(obj(vec![
            ("directoryIndex", J::I(g.targets[t].dir as i64)),
            ("id", s(g.target_id(t))),
            ("jsonFile", s(file)),
            ("name", s(g.targets[t].name.clone())),
            ("projectIndex", J::I(0)),
        ]));
    }
    let mut dirs_json = Vec::new();
    for d in g.dirs.iter() {
        let dj = obj(vec![
            (
                "backtraceGraph",
                obj(vec![
                    ("commands", J::A(Vec::new())),
                    ("files", J::A(Vec::new())),
                    ("nodes", J::A(Vec::new())),
                ]),
            ),
            ("installers", J::A(Vec::new())),
            (
                "paths",
                obj(vec![
                    ("build", s(d.rel.clone())),
                    ("source", s(d.rel.clone())),
                ]),
            ),
        ]);
        let file = reply_write(
            &mut w,
            &mut sum,
            &format!("directory-{}-Debug", d.rel.replace('/', ".")),
            json_file_api(&dj),
        )?;
        let mut m = vec![
            ("build", s(d.rel.clone())),
            ("jsonFile", s(file)),
            ("minimumCMakeVersion", obj(vec![("string", s("3.20"))])),
            ("projectIndex", J::I(0)),
            ("source", s(d.rel.clone())),
        ];
        if !d.children.is_empty() {
            m.push(("childIndexes", arr_i(d.children.iter().copied())));
        }
        if let Some(p) = d.parent {
            m.push(("parentIndex", J::I(p as i64)));
        }
        let mut ti: Vec<usize> = d
            .targets
            .iter()
            .map(|&t| cm_index[t])
            .filter(|&i| i != usize::MAX)
            .collect();
        ti.sort_unstable();
        if !ti.is_empty() {
            m.push(("targetIndexes", arr_i(ti)));
        }
        dirs_json.push(obj(m));
    }
    let codemodel = obj(vec![
        (
            "configurations",
            J::A(vec![obj(vec![
                ("directories", J::A(dirs_json)),
                ("name", s("Debug")),
                (
                    "projects",
                    J::A(vec![obj(vec![
                        ("directoryIndexes", arr_i(0..g.dirs.len())),
                        ("name", s("Synth")),
                        ("targetIndexes", arr_i(0..order.len())),
                    ])]),
                ),
                ("targets", J::A(target_refs)),
            ])]),
        ),
        ("kind", s("codemodel")),
        (
            "paths",
            obj(vec![
                ("build", s(build.clone())),
                ("source", s(src.clone())),
            ]),
        ),
        ("version", obj(vec![("major", J::I(2)), ("minor", J::I(4))])),
    ]);
    let cm_file = reply_write(&mut w, &mut sum, "codemodel-v2", json_file_api(&codemodel))?;
    // cmakeFiles-v1: root CMakeLists, CMake's own modules, then every other CMakeLists in order.
    let mut inputs = vec![obj(vec![("path", s("CMakeLists.txt"))])];
    for (gen, p) in &g.data.cmake_inputs {
        if *gen {
            inputs.push(obj(vec![
                ("isGenerated", J::Raw("true")),
                ("path", s(format!("{build}/{p}"))),
            ]));
        } else {
            // The generator's make-program module (CMakeUnixFindMake / CMakeNinjaFindMake).
            let p = match p.strip_suffix("CMakeUnixFindMake.cmake") {
                Some(dir) if ninja => format!("{dir}CMakeNinjaFindMake.cmake"),
                _ => (*p).to_owned(),
            };
            inputs.push(obj(vec![
                ("isCMake", J::Raw("true")),
                ("isExternal", J::Raw("true")),
                ("path", s(p)),
            ]));
        }
    }
    for (rel, _) in cmake_files.iter().skip(1) {
        inputs.push(obj(vec![("path", s(rel.clone()))]));
    }
    let cmake_files_json = obj(vec![
        ("inputs", J::A(inputs)),
        ("kind", s("cmakeFiles")),
        (
            "paths",
            obj(vec![
                ("build", s(build.clone())),
                ("source", s(src.clone())),
            ]),
        ),
        ("version", obj(vec![("major", J::I(1)), ("minor", J::I(0))])),
    ]);
    let cf_file = reply_write(
        &mut w,
        &mut sum,
        "cmakeFiles-v1",
        json_file_api(&cmake_files_json),
    )?;
    let cache_entry = |name: &str, ty: &str, value: &str, help: &str| {
        let mut props = Vec::new();
        if ninja && name == "CMAKE_MAKE_PROGRAM" {
            props.push(obj(vec![("name", s("ADVANCED")), ("value", s("1"))]));
        }
        props.push(obj(vec![("name", s("HELPSTRING")), ("value", s(help))]));
        obj(vec![
            ("name", s(name)),
            ("properties", J::A(props)),
            ("type", s(ty)),
            ("value", s(value)),
        ])
    };
    let cache = obj(vec![
        (
            "entries",
            J::A(vec![
                cache_entry(
                    "CMAKE_BUILD_TYPE",
                    "STRING",
                    "Debug",
                    "Choose the type of build.",
                ),
                cache_entry(
                    "CMAKE_CXX_COMPILER",
                    "STRING",
                    "/usr/bin/c++",
                    "CXX compiler",
                ),
                cache_entry(
                    "CMAKE_GENERATOR",
                    "INTERNAL",
                    gen_name,
                    "Name of generator.",
                ),
                cache_entry(
                    "CMAKE_HOME_DIRECTORY",
                    "INTERNAL",
                    &src,
                    "Source directory with the top level CMakeLists.txt file for this project",
                ),
                cache_entry("CMAKE_MAKE_PROGRAM", "FILEPATH", make_program, make_help),
                cache_entry(
                    "CMAKE_PROJECT_NAME",
                    "STATIC",
                    "Synth",
                    "Value Computed by CMake",
                ),
                cache_entry(
                    "Synth_BINARY_DIR",
                    "STATIC",
                    &build,
                    "Value Computed by CMake",
                ),
                cache_entry(
                    "Synth_SOURCE_DIR",
                    "STATIC",
                    &src,
                    "Value Computed by CMake",
                ),
            ]),
        ),
        ("kind", s("cache")),
        ("version", obj(vec![("major", J::I(2)), ("minor", J::I(0))])),
    ]);
    let cache_file = reply_write(&mut w, &mut sum, "cache-v2", json_file_api(&cache))?;
    let toolchains = obj(vec![
        ("kind", s("toolchains")),
        (
            "toolchains",
            J::A(vec![obj(vec![
                (
                    "compiler",
                    obj(vec![
                        ("id", s("GNU")),
                        (
                            "implicit",
                            obj(vec![
                                (
                                    "includeDirectories",
                                    J::A(
                                        [
                                            "/usr/include/c++/12",
                                            "/usr/include/x86_64-linux-gnu/c++/12",
                                            "/usr/include/c++/12/backward",
                                            "/usr/lib/gcc/x86_64-linux-gnu/12/include",
                                            "/usr/local/include",
                                            "/usr/include/x86_64-linux-gnu",
                                            "/usr/include",
                                        ]
                                        .iter()
                                        .map(|x| s(*x))
                                        .collect(),
                                    ),
                                ),
                                (
                                    "linkDirectories",
                                    J::A(
                                        [
                                            "/usr/lib/gcc/x86_64-linux-gnu/12",
                                            "/usr/lib/x86_64-linux-gnu",
                                            "/usr/lib",
                                            "/lib/x86_64-linux-gnu",
                                            "/lib",
                                        ]
                                        .iter()
                                        .map(|x| s(*x))
                                        .collect(),
                                    ),
                                ),
                                ("linkFrameworkDirectories", J::A(Vec::new())),
                                (
                                    "linkLibraries",
                                    J::A(
                                        ["stdc++", "m", "gcc_s", "gcc", "c", "gcc_s", "gcc"]
                                            .iter()
                                            .map(|x| s(*x))
                                            .collect(),
                                    ),
                                ),
                            ]),
                        ),
                        ("path", s("/usr/bin/c++")),
                        ("version", s("12.2.0")),
                    ]),
                ),
                ("language", s("CXX")),
                (
                    "sourceFileExtensions",
                    J::A(
                        [
                            "C", "M", "c++", "cc", "cpp", "cxx", "m", "mm", "mpp", "CPP", "ixx",
                            "cppm",
                        ]
                        .iter()
                        .map(|x| s(*x))
                        .collect(),
                    ),
                ),
            ])]),
        ),
        ("version", obj(vec![("major", J::I(1)), ("minor", J::I(0))])),
    ]);
    let tc_file = reply_write(
        &mut w,
        &mut sum,
        "toolchains-v1",
        json_file_api(&toolchains),
    )?;
    let oref = |kind: &str, file: &str, major: i64, minor: i64| {
        obj(vec![
            ("jsonFile", s(file)),
            ("kind", s(kind)),
            (
                "version",
                obj(vec![("major", J::I(major)), ("minor", J::I(minor))]),
            ),
        ])
    };
    let index = obj(vec![
        (
            "cmake",
            obj(vec![
                (
                    "generator",
                    obj(vec![
                        ("multiConfig", J::Raw("false")),
                        ("name", s(gen_name)),
                    ]),
                ),
                (
                    "paths",
                    obj(vec![
                        ("cmake", s("/usr/bin/cmake")),
                        ("cpack", s("/usr/bin/cpack")),
                        ("ctest", s("/usr/bin/ctest")),
                        ("root", s("/usr/share/cmake-3.25")),
                    ]),
                ),
                (
                    "version",
                    obj(vec![
                        ("isDirty", J::Raw("false")),
                        ("major", J::I(3)),
                        ("minor", J::I(25)),
                        ("patch", J::I(1)),
                        ("string", s("3.25.1")),
                        ("suffix", s("")),
                    ]),
                ),
            ]),
        ),
        (
            "objects",
            J::A(vec![
                oref("codemodel", &cm_file, 2, 4),
                oref("cache", &cache_file, 2, 0),
                oref("cmakeFiles", &cf_file, 1, 0),
                oref("toolchains", &tc_file, 1, 0),
            ]),
        ),
        (
            "reply",
            obj(vec![
                ("cache-v2", oref("cache", &cache_file, 2, 0)),
                ("cmakeFiles-v1", oref("cmakeFiles", &cf_file, 1, 0)),
                ("codemodel-v2", oref("codemodel", &cm_file, 2, 4)),
                ("toolchains-v1", oref("toolchains", &tc_file, 1, 0)),
            ]),
        ),
    ]);
    let index_text = json_file_api(&index);
    sum.reply_bytes += w.write(
        reply.join(format!("index-{}.json", index_stamp(T0 + 100))),
        index_text.as_bytes(),
        T0 + 100,
    )?;
    sum.reply_files += 1;

    // ---- ctest (T0+150)
    for d in g.dirs.iter() {
        let mut t = format!(
            "# CMake generated Testfile for \n# Source directory: {}\n# Build directory: {}\n# \n# This file includes the relevant testing commands required for \n# testing this directory and lists subdirectories to be tested as well.\n",
            g.src_abs(&d.rel),
            g.build_abs(&d.rel)
        );
        let cml = format!("{}/CMakeLists.txt", g.src_abs(&d.rel));
        for &ti in &d.tests {
            let test = &g.tests[ti];
            let exe = g.build_abs(&g.artifact_rel(test.exe).expect("exe"));
            let _ = write!(t, "add_test([=[{}]=] \"{exe}\"", test.name);
            for a in &test.args {
                let _ = write!(t, " \"{a}\"");
            }
            t.push_str(")\n");
            let _ = write!(t, "set_tests_properties([=[{}]=] PROPERTIES ", test.name);
            if !test.env.is_empty() {
                let _ = write!(t, " ENVIRONMENT \"{}\"", test.env.join(";"));
            }
            let _ = write!(t, " LABELS \"{}\"", test.labels.join(";"));
            if let Some(to) = test.timeout {
                let _ = write!(t, " TIMEOUT \"{to}\"");
            }
            let _ = writeln!(
                t,
                " _BACKTRACE_TRIPLES \"{cml};{};add_test;{cml};0;\")",
                test.line
            );
        }
        for &c in &d.children {
            let _ = writeln!(t, "subdirs(\"{}\")", relpath(&d.rel, &g.dirs[c].rel));
        }
        sum.other_build_bytes += w.write(
            build_p.join(&d.rel).join("CTestTestfile.cmake"),
            t.as_bytes(),
            T0 + 150,
        )?;
        sum.other_build_files += 1;
    }
    // ctest.json: tests in directory (CTestTestfile) order.
    let mut ct_files: Vec<String> = Vec::new();
    let mut ct_nodes = Vec::new();
    let mut ct_tests = Vec::new();
    let mut preorder = Vec::new();
    let mut st = vec![0usize];
    while let Some(d) = st.pop() {
        preorder.push(d);
        for &c in g.dirs[d].children.iter().rev() {
            st.push(c);
        }
    }
    for &d in &preorder {
        let cml = format!("{}/CMakeLists.txt", g.src_abs(&g.dirs[d].rel));
        for &ti in &g.dirs[d].tests {
            let test = &g.tests[ti];
            let fi = match ct_files.iter().position(|f| *f == cml) {
                Some(i) => i,
                None => {
                    ct_files.push(cml.clone());
                    ct_files.len() - 1
                }
            };
            ct_nodes.push(obj(vec![("file", J::I(fi as i64))]));
            let parent = ct_nodes.len() - 1;
            ct_nodes.push(obj(vec![
                ("command", J::I(0)),
                ("file", J::I(fi as i64)),
                ("line", J::I(test.line as i64)),
                ("parent", J::I(parent as i64)),
            ]));
            let bt = ct_nodes.len() - 1;
            let mut cmd = vec![s(g.build_abs(&g.artifact_rel(test.exe).expect("exe")))];
            cmd.extend(test.args.iter().map(|a| s(a.clone())));
            let mut props = Vec::new();
            if !test.env.is_empty() {
                props.push(obj(vec![
                    ("name", s("ENVIRONMENT")),
                    (
                        "value",
                        J::A(test.env.iter().map(|e| s(e.clone())).collect()),
                    ),
                ]));
            }
            let mut labels = test.labels.clone();
            labels.sort();
            labels.dedup();
            props.push(obj(vec![
                ("name", s("LABELS")),
                ("value", J::A(labels.into_iter().map(s).collect())),
            ]));
            if let Some(to) = test.timeout {
                props.push(obj(vec![
                    ("name", s("TIMEOUT")),
                    ("value", J::Raw(if to == 60 { "60.0" } else { "120.0" })),
                ]));
            }
            props.push(obj(vec![
                ("name", s("WORKING_DIRECTORY")),
                ("value", s(g.build_abs(&g.dirs[d].rel))),
            ]));
            ct_tests.push(obj(vec![
                ("backtrace", J::I(bt as i64)),
                ("command", J::A(cmd)),
                ("name", s(test.name.clone())),
                ("properties", J::A(props)),
            ]));
        }
    }
    sum.tests = ct_tests.len();
    let ctest = obj(vec![
        (
            "backtraceGraph",
            obj(vec![
                ("commands", J::A(vec![s("add_test")])),
                ("files", J::A(ct_files.into_iter().map(s).collect())),
                ("nodes", J::A(ct_nodes)),
            ]),
        ),
        ("kind", s("ctestInfo")),
        ("tests", J::A(ct_tests)),
        ("version", obj(vec![("major", J::I(1)), ("minor", J::I(0))])),
    ]);
    sum.ctest_json_bytes = w.write(
        build_p.join("ctest.json"),
        json_ctest(&ctest).as_bytes(),
        T0 + 150,
    )?;

    // ---- objects, depfiles or the deps log, artifacts (T0+200)
    let mut stamp = vec![0u32; g.headers.len()];
    let mut sstamp = vec![0u32; g.data.sys.len()];
    let mut dep_paths = Vec::with_capacity(g.tus.len());
    let mut log = NinjaLog::default();
    for u in 0..g.tus.len() {
        let obj_rel = g.obj_rel(&g.tus[u]);
        let (n, np) = if ninja {
            // ninja records the object's mtime (the object exists, T0+200),
            // so the record is fresh: object and every input <= record.
            g.ninja_record(
                u,
                &mut stamp,
                &mut sstamp,
                &mut log,
                (T0 + 200) as u64 * 1_000_000_000,
            )
        } else {
            let (text, n, np) = g.depfile(u, &mut stamp, &mut sstamp);
            sum.depfile_bytes += w.write(
                build_p.join(format!("{obj_rel}.d")),
                text.as_bytes(),
                T0 + 200,
            )?;
            sum.depfiles += 1;
            dep_paths.push(format!("{build}/{obj_rel}.d"));
            (n, np)
        };
        sum.prereqs_total += n as u64;
        sum.project_prereqs_total += np as u64;
        w.write(build_p.join(&obj_rel), b"", T0 + 200)?;
        sum.other_build_files += 1;
    }
    if ninja {
        // The manifest CMake writes (T0) and the build log ninja appends to
        // (T0+200): every object's command hash, evaluated from the manifest.
        let (rules, manifest) = g.ninja_manifest();
        sum.other_build_bytes +=
            w.write(build_p.join("CMakeFiles/rules.ninja"), rules.as_bytes(), T0)?;
        sum.other_build_bytes += w.write(build_p.join("build.ninja"), manifest.as_bytes(), T0)?;
        let reader = diff2test::ingest::Reader::new(diff2test::ingest::Limits::default());
        let mut commands = std::collections::HashMap::new();
        diff2test::ingest::ninja_manifest::for_each_command(
            &reader,
            &build,
            "build.ninja",
            None,
            |o, c| {
                commands.insert(o.to_owned(), c.to_owned());
            },
        )
        .map_err(std::io::Error::other)?;
        let mut ninja_log = String::from("# ninja log v5\n");
        for (i, tu) in g.tus.iter().enumerate() {
            let obj_rel = g.obj_rel(tu);
            let cmd = commands
                .get(&obj_rel)
                .ok_or_else(|| std::io::Error::other(format!("no edge builds {obj_rel}")))?;
            let hash = diff2test::ingest::ninja_log::hash_command(5, cmd.as_bytes());
            let mtime_ns = (T0 + 200) as u64 * 1_000_000_000;
            ninja_log.push_str(&format!(
                "{i}\t{}\t{mtime_ns}\t{obj_rel}\t{hash:x}\n",
                i + 1
            ));
        }
        sum.other_build_bytes +=
            w.write(build_p.join(".ninja_log"), ninja_log.as_bytes(), T0 + 200)?;
        sum.other_build_files += 3;
        // One log for the whole tree, at the top (CMake sets no builddir).
        sum.deps_log_bytes = w.write(build_p.join(".ninja_deps"), &log.out, T0 + 200)?;
        sum.deps_log_records = log.records;
        sum.deps_log_paths = log.paths();
        dep_paths.push(format!("{build}/.ninja_deps"));
    }
    for t in 0..g.targets.len() {
        if let Some(a) = g.artifact_rel(t) {
            let p = build_p.join(&a);
            w.write(p.clone(), b"", T0 + 200)?;
            sum.other_build_files += 1;
            if g.targets[t].kind == Kind::Exe {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
            }
        }
    }
    // The generated CMake inputs cmakeFiles-v1 names (written by configure, T0).
    for (gen, p) in &g.data.cmake_inputs {
        if *gen && !build_p.join(p).exists() {
            sum.other_build_bytes += w.write(
                build_p.join(p),
                b"# generated by CMake (synthetic placeholder)\n",
                T0,
            )?;
            sum.other_build_files += 1;
        }
    }
    sum.other_build_bytes += w.write(
        build_p.join("CMakeCache.txt"),
        format!("# synthetic CMakeCache.txt\nCMAKE_BUILD_TYPE:STRING=Debug\nCMAKE_HOME_DIRECTORY:INTERNAL={src}\nCMAKE_GENERATOR:INTERNAL={gen_name}\n").as_bytes(),
        T0,
    )?;
    sum.other_build_files += 1;
    dep_paths.sort();
    let mut list = dep_paths.join("\n");
    list.push('\n');
    sum.deps_txt_bytes = w.write(build_p.join("deps.txt"), list.as_bytes(), T0 + 300)?;

    // ---- changes
    let mut hdr_users: Vec<Vec<usize>> = vec![Vec::new(); g.headers.len()];
    for (u, tu) in g.tus.iter().enumerate() {
        for &h in &tu.proj {
            hdr_users[h as usize].push(u);
        }
    }
    let total = g.tests.len();
    let mut crng = Rng::new(seed ^ 0xC4A7_6E5E);
    // One header: a public library header whose change selects about 8% of the suite.
    let lib_hdrs: Vec<u32> = (0..g.headers.len() as u32)
        .filter(|&h| {
            let t = &g.targets[g.headers[h as usize].target];
            t.role == Role::Lib && t.pub_hdrs.contains(&h) && !hdr_users[h as usize].is_empty()
        })
        .collect();
    let want = (total as f64 * 0.08).max(2.0);
    let mut best: Option<(f64, u32, Vec<String>)> = None;
    for _ in 0..300.min(lib_hdrs.len() * 2) {
        let h = crng.pick(&lib_hdrs);
        if let Some(names) = g.oracle(&hdr_users, &[h], &[]) {
            let sel = names.len();
            if sel == 0 || sel >= total {
                continue;
            }
            let score = (sel as f64 - want).abs();
            if best.as_ref().is_none_or(|(b, _, _)| score < *b) {
                best = Some((score, h, names));
            }
        }
    }
    let (_, one_h, one_names) =
        best.ok_or_else(|| io::Error::other("no header selects a proper subset"))?;
    sum.one_header = g.headers[one_h as usize].rel.clone();
    // Twenty files: 12 sources and 8 headers from the upper layers and executables.
    let upper = g.p.layers / 2;
    let src_cand: Vec<usize> = (0..g.tus.len())
        .filter(|&u| g.targets[g.tus[u].target].layer >= upper)
        .collect();
    let hdr_cand: Vec<u32> = lib_hdrs
        .iter()
        .copied()
        .filter(|&h| g.targets[g.headers[h as usize].target].layer >= (g.p.layers * 2) / 3)
        .collect();
    let mut best20: Option<(Vec<String>, Vec<u32>, Vec<usize>)> = None;
    for _ in 0..60 {
        let mut hs: Vec<u32> = Vec::new();
        let mut us: Vec<usize> = Vec::new();
        while hs.len() < 8.min(hdr_cand.len()) {
            let h = crng.pick(&hdr_cand);
            if !hs.contains(&h) {
                hs.push(h);
            }
        }
        while us.len() + hs.len() < 20.min(src_cand.len() + hs.len()) {
            let u = crng.pick(&src_cand);
            if !us.contains(&u) {
                us.push(u);
            }
        }
        if let Some(names) = g.oracle(&hdr_users, &hs, &us) {
            let sel = names.len();
            if sel > 0 && sel < total && best20.as_ref().is_none_or(|(b, _, _)| sel < b.len()) {
                best20 = Some((names, hs, us));
                if (sel as f64) < total as f64 * 0.5 {
                    break;
                }
            }
        }
    }
    let (names20, hs20, us20) =
        best20.ok_or_else(|| io::Error::other("no 20-file change selects a proper subset"))?;
    let mut twenty: Vec<String> = hs20
        .iter()
        .map(|&h| g.headers[h as usize].rel.clone())
        .collect();
    twenty.extend(us20.iter().map(|&u| g.tus[u].rel.clone()));
    twenty.sort();
    let owner = g.headers[one_h as usize].target;
    let cfg = format!("{}/CMakeLists.txt", g.dirs[g.targets[owner].dir].rel);
    let changes = out.join("changes");
    w.write(
        changes.join("one-header.txt"),
        format!("{}\n", sum.one_header).as_bytes(),
        T0 + 400,
    )?;
    w.write(
        changes.join("twenty-files.txt"),
        format!("{}\n", twenty.join("\n")).as_bytes(),
        T0 + 400,
    )?;
    w.write(
        changes.join("build-config.txt"),
        format!("{cfg}\n").as_bytes(),
        T0 + 400,
    )?;
    let (one_sel, sel20) = (one_names.len(), names20.len());
    w.write(
        changes.join("one-header.expected"),
        format!("{}\n", one_names.join("\n")).as_bytes(),
        T0 + 400,
    )?;
    w.write(
        changes.join("twenty-files.expected"),
        format!("{}\n", names20.join("\n")).as_bytes(),
        T0 + 400,
    )?;
    sum.expected_names = vec![
        ("one-header".into(), one_names),
        ("twenty-files".into(), names20),
    ];
    sum.expected = vec![
        ("one-header".into(), one_sel, total),
        ("twenty-files".into(), sel20, total),
        ("build-config".into(), usize::MAX, total),
    ];
    let exp = format!(
        "# what examples/synth.rs's oracle expects diff2test to do (name exit selected total)\none-header 0 {one_sel} {total}\ntwenty-files 0 {sel20} {total}\nbuild-config 3 {total} {total}\n"
    );
    w.write(changes.join("expected.txt"), exp.as_bytes(), T0 + 400)?;

    // ---- mtimes
    for (p, t) in &w.files {
        filetime::set_file_mtime(p, filetime::FileTime::from_unix_time(*t, 0))?;
    }
    sum.targets = order.len();
    sum.tus = g.tus.len();
    sum.headers = g.headers.len();
    std::fs::write(
        out.join("synth-stamp.txt"),
        format!(
            "preset={} seed={} version={} out={}\n",
            preset.name,
            seed,
            GENERATOR_VERSION,
            out.display()
        ),
    )?;
    // Like every other file, the stamp has a fixed timestamp: equal inputs, equal tree.
    filetime::set_file_mtime(
        out.join("synth-stamp.txt"),
        filetime::FileTime::from_unix_time(T0, 0),
    )?;
    Ok(sum)
}

// ---------------------------------------------------------------------------
// CLI

fn usage() -> ! {
    eprintln!(
        "usage: cargo run --release --example synth -- --preset {{{}|{}}} --out DIR [--seed N]",
        PRESETS.join("|"),
        NINJA_NAMES.join("|")
    );
    eprintln!("       cargo run --release --example synth -- --version   (generator version recorded in OUT/synth-stamp.txt)");
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut preset_name, mut out, mut seed) = (None, None, 1u64);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => preset_name = args.next(),
            "--out" => out = args.next().map(PathBuf::from),
            "--seed" => {
                seed = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--version" => {
                println!("{GENERATOR_VERSION}");
                return;
            }
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    let (Some(name), Some(out)) = (preset_name, out) else {
        usage()
    };
    let Some(p) = preset(&name) else {
        eprintln!("synth: unknown preset {name:?}");
        usage()
    };
    let start = std::time::Instant::now();
    match generate(&p, seed, &out) {
        Ok(sum) => {
            print!("{}", sum.render());
            println!("  generated in {:.1}s", start.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("synth: error: {e}");
            std::process::exit(1);
        }
    }
}
