//! The `ctest -R` chunks from `report::ctest_regex`, checked against the real
//! ctest: a CMake project with more than 2,000 tests (names full of regex
//! metacharacters, a 4,200-byte name, an empty name) is configured once per
//! test; each selection is turned into chunks, every chunk is handed to
//! `ctest -N -R <chunk>`, and the union of what ctest lists must be exactly
//! the selection, with no "Expression too big" (which ctest reports only on
//! stdout, while selecting nothing and exiting 0).
//!
//! cmake and ctest are required: a missing tool fails the test with an
//! install hint, it never skips.

use diff2test::report::ctest_regex::{
    cmsys_program_size, escape_name, regex_chunks, MATCH_NOTHING, MAX_REGEX_BYTES,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL_HINT: &str = "install cmake (apt-get install cmake)";

fn require_tool(tool: &str) {
    match Command::new(tool).arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`{tool} --version` failed ({}): {INSTALL_HINT}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(err) => panic!("cannot run `{tool}` ({err}): {INSTALL_HINT}"),
    }
}

/// Names that trip a careless escaper, each next to the names an unescaped or
/// unanchored pattern would also select.
fn special_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "a.b",
        "axb",
        "a.b.c",
        "xa.b", // `.`, anchoring
        "p+q",
        "pq",
        "ppq", // `+`
        "s*t",
        "st",
        "sst", // `*`
        "q?r",
        "qr", // `?`
        "br[0]",
        "br0",
        "sq]x", // `[` `]`
        "par(x)",
        "parx", // `(` `)`
        "cur{2}",
        "curr", // `{` `}`
        "car^et",
        "dol$lar", // `^` `$`
        "pi|pe",
        "pi",
        "pe", // `|`
        "back\\slash",
        "endslash\\", // `\`
        "dd",
        "d5",
        "n",
        "t", // `\d` `\n` `\t` must not be classes
        "with space",
        " lead",
        "trail ",
        "tab\tx", // blanks
        "da-sh",
        "co:lon",
        "sl/ash",
        "ha#sh",
        "qu\"ote",
        "ap'os",
        "semi;colon",
        "ti~lde",
        "pe%rc",
        "am&p",
        "ex!cl",
        "at@x",
        "lt<gt>",
        "eq=x",
        "co,mma",
        "bt`x",
        "under_score",
        "ünï",
        "日本語.テスト", // non-ASCII
        "suite::case[3](a|b)*",
        "Suite/Param.Test/0  # GetParam() = (1, \"x\")",
    ]
    .iter()
    .map(|name| name.to_string())
    .collect();
    // One long name that needs an escape for every byte: 21,000 program bytes.
    names.push("([.*+?^$|\\{}])".repeat(300));
    names
}

/// `name` as a CMake bracket argument, which takes every byte literally.
fn bracket(name: &str) -> String {
    let mut eq = String::new();
    loop {
        let close = format!("]{eq}]");
        if format!("{name}{close}").find(&close) == Some(name.len()) {
            return format!("[{eq}[{name}{close}");
        }
        eq.push('=');
    }
}

struct Lab {
    _dir: tempfile::TempDir,
    build: PathBuf,
    names: Vec<String>,
}

/// Writes and configures a project whose tests are exactly `names`; an empty
/// name uses the old `add_test(<name> <command>)` signature, the only one
/// that accepts it.
fn configure(names: &[String]) -> Lab {
    require_tool("cmake");
    require_tool("ctest");
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("src");
    let build = dir.path().join("build");
    std::fs::create_dir_all(&source).unwrap();
    let mut lists = String::from(
        "cmake_minimum_required(VERSION 3.19)\n\
         project(regex_lab NONE)\n\
         enable_testing()\n",
    );
    for name in names {
        if name.is_empty() {
            lists.push_str("add_test(\"\" \"${CMAKE_COMMAND}\" -E true)\n");
        } else {
            lists.push_str(&format!(
                "add_test(NAME {} COMMAND \"${{CMAKE_COMMAND}}\" -E true)\n",
                bracket(name)
            ));
        }
    }
    std::fs::write(source.join("CMakeLists.txt"), lists).unwrap();
    let out = Command::new("cmake")
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&build)
        .output()
        .unwrap_or_else(|err| panic!("cannot run cmake ({err}): {INSTALL_HINT}"));
    assert!(
        out.status.success(),
        "cmake configure failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lab = Lab {
        _dir: dir,
        build,
        names: names.to_vec(),
    };
    // The lab itself: ctest must list every test under exactly its name.
    let listed = ctest_list(&lab.build, None);
    assert!(!listed.too_big);
    assert_eq!(
        listed.names,
        lab.names.iter().cloned().collect::<BTreeSet<_>>()
    );
    lab
}

struct Listed {
    names: BTreeSet<String>,
    too_big: bool,
}

/// Runs `ctest -N [-R regex]` and parses the `Test #N: name` lines.
fn ctest_list(build: &Path, regex: Option<&str>) -> Listed {
    let mut command = Command::new("ctest");
    command.arg("-N").current_dir(build);
    if let Some(regex) = regex {
        command.arg("-R").arg(regex);
    }
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("cannot run ctest ({err}): {INSTALL_HINT}"));
    let stdout = String::from_utf8(out.stdout).expect("ctest prints UTF-8 here");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "ctest failed: {stdout}\n{stderr}");
    let too_big = stdout.contains("Expression too big") || stderr.contains("Expression too big");
    if !too_big {
        assert!(
            !stdout.contains("RegularExpression::") && !stderr.contains("RegularExpression::"),
            "ctest rejected the pattern: {stdout}\n{stderr}"
        );
    }
    let mut names = BTreeSet::new();
    let mut listed = 0;
    let mut total = None;
    for line in stdout.lines() {
        let trimmed = line.trim_start();
        if let Some(count) = trimmed.strip_prefix("Total Tests: ") {
            total = Some(count.trim().parse::<usize>().expect("Total Tests count"));
            continue;
        }
        let Some(rest) = trimmed.strip_prefix("Test") else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('#') else {
            continue;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Some(name) = rest[digits..].strip_prefix(": ") else {
            continue;
        };
        if digits == 0 {
            continue;
        }
        listed += 1;
        assert!(names.insert(name.to_string()), "listed twice: {name:?}");
    }
    assert_eq!(
        total,
        Some(listed),
        "every listed test was parsed:\n{stdout}"
    );
    Listed { names, too_big }
}

/// Chunks `selection`, runs every chunk, and checks the union is exact.
/// Returns the number of chunks.
fn assert_selects_exactly(lab: &Lab, label: &str, selection: &[&str]) -> usize {
    let mut sorted: Vec<&str> = selection.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let chunks = regex_chunks(&sorted).unwrap_or_else(|err| panic!("{label}: {err}"));
    let mut union = BTreeSet::new();
    let mut largest = 0;
    for chunk in &chunks {
        let size = cmsys_program_size(chunk).expect("cmsys accepts every chunk");
        assert!(
            size <= MAX_REGEX_BYTES,
            "{label}: chunk of {size} program bytes"
        );
        largest = largest.max(size);
        let listed = ctest_list(&lab.build, Some(chunk));
        assert!(
            !listed.too_big,
            "{label}: ctest said too big for {size} bytes"
        );
        assert!(
            sorted.is_empty() || !listed.names.is_empty(),
            "{label}: a chunk selected nothing"
        );
        for name in listed.names {
            assert!(
                union.insert(name.clone()),
                "{label}: {name:?} in two chunks"
            );
        }
    }
    let expected: BTreeSet<String> = sorted.iter().map(|name| name.to_string()).collect();
    if sorted.is_empty() {
        assert_eq!(chunks, vec![MATCH_NOTHING.to_string()]);
        let listed = ctest_list(&lab.build, Some(MATCH_NOTHING));
        assert!(!listed.too_big);
        assert!(
            listed.names.is_empty(),
            "{MATCH_NOTHING} selected {:?}",
            listed.names
        );
    }
    let unexpected: Vec<_> = union.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&union).collect();
    assert!(
        unexpected.is_empty() && missing.is_empty(),
        "{label}: ctest selected {} extra {:?} and missed {:?}",
        unexpected.len(),
        unexpected.iter().take(10).collect::<Vec<_>>(),
        missing.iter().take(10).collect::<Vec<_>>()
    );
    eprintln!(
        "{label}: {} names -> {} chunk(s), largest {largest} program bytes",
        sorted.len(),
        chunks.len()
    );
    chunks.len()
}

#[test]
fn every_chunk_selects_exactly_its_names_in_real_ctest() {
    let mut names: Vec<String> = (0..2100).map(|i| format!("t{i}.x")).collect();
    names.extend(special_names());
    names.push(String::new());
    let lab = configure(&names);
    assert!(lab.names.len() >= 2000);

    assert_eq!(assert_selects_exactly(&lab, "empty selection", &[]), 1);
    assert_selects_exactly(&lab, "one name", &["a.b"]);
    assert_selects_exactly(&lab, "the empty name", &[""]);

    let specials = special_names();
    let few: Vec<&str> = [
        "p+q",
        "br[0]",
        "back\\slash",
        "pi|pe",
        "cur{2}",
        " lead",
        "ünï",
    ]
    .to_vec();
    assert_selects_exactly(&lab, "a few special names", &few);
    let special_refs: Vec<&str> = specials.iter().map(String::as_str).collect();
    assert!(assert_selects_exactly(&lab, "all special names", &special_refs) >= 1);

    let mut about_1500: Vec<&str> = lab
        .names
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 4 != 1)
        .map(|(_, name)| name.as_str())
        .filter(|name| name.len() < 1000)
        .collect();
    about_1500.truncate(1500);
    assert_eq!(about_1500.len(), 1500);
    assert!(assert_selects_exactly(&lab, "1,500 names", &about_1500) >= 2);

    let all: Vec<&str> = lab.names.iter().map(String::as_str).collect();
    assert!(assert_selects_exactly(&lab, "every name", &all) >= 2);
}

/// Builds `^(t0\.x|...)$` whose modelled program size is exactly `target`,
/// padded with escape-heavy alternatives (if `heavy`) and one plain filler.
fn pattern_of_size(target: usize, heavy: bool) -> String {
    let render = |alternatives: &[String]| format!("^({})$", alternatives.join("|"));
    let size = |alternatives: &[String]| cmsys_program_size(&render(alternatives)).unwrap();
    let mut alternatives = vec![escape_name("t0.x")];
    let mut n = 0;
    while heavy && size(&alternatives) + 200 < target {
        alternatives.push(escape_name(&format!("Z{n}([.*+?])")));
        n += 1;
    }
    // "|Q...Q" adds a BRANCH (3) and an EXACTLY node (3 + len + 1).
    let filler = target - size(&alternatives) - 7;
    alternatives.push("Q".repeat(filler));
    assert_eq!(size(&alternatives), target);
    render(&alternatives)
}

#[test]
fn size_model_agrees_with_ctest_at_the_limit() {
    let lab = configure(&["t0.x".to_string(), "t0x".to_string(), "Q".to_string()]);
    // KWSys refuses a program of `limit` bytes or more; the limit is 32,767 in
    // older copies and 65,535 in newer ones (CMake 3.25.1: 65,535).
    let sizes = [32_766, 32_767, 65_534, 65_535];
    for heavy in [false, true] {
        let too_big: Vec<bool> = sizes
            .iter()
            .map(|&size| {
                let listed = ctest_list(&lab.build, Some(&pattern_of_size(size, heavy)));
                if listed.too_big {
                    assert!(listed.names.is_empty(), "a refused pattern selects nothing");
                } else {
                    let expected: BTreeSet<String> = ["t0.x".to_string()].into();
                    assert_eq!(listed.names, expected, "{size} bytes");
                }
                listed.too_big
            })
            .collect();
        let limit = match too_big.as_slice() {
            [false, true, true, true] => 32_767,
            [false, false, false, true] => 65_535,
            other => panic!(
                "ctest's size limit does not follow the model (heavy={heavy}): \
                 too big at {sizes:?} = {other:?}"
            ),
        };
        eprintln!("heavy={heavy}: ctest refuses programs of {limit} bytes or more");
        assert!(MAX_REGEX_BYTES < 32_767 && MAX_REGEX_BYTES < limit);
    }
}
