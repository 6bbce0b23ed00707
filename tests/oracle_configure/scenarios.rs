//! Issue 37: what configure reads with `file(STRINGS|READ …)` through a
//! variable, resolved from the build's cache and from the calls of the
//! function around the read. Each scenario changes a compiled source that
//! configure does not read: a subset where the read is resolved, the whole
//! suite (naming `--base-snapshot`) where it cannot be; the oracle always.

use super::{main_checking, Scenario, BYSTANDER, PROLOGUE};

/// A project whose Find module reads `${DocTool_EXECUTABLE}` (as jansson's
/// FindSphinx reads `${Sphinx-build_EXECUTABLE}`), looking for `program`.
fn find_module_scenario(name: &str, program: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}include(${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/FindDocTool.cmake)\n\
         add_executable(app app.cpp)\n\
         add_test(NAME t_app COMMAND app)\n{BYSTANDER}"
    );
    let find = format!(
        "find_program(DocTool_EXECUTABLE NAMES {program})\n\
         mark_as_advanced(DocTool_EXECUTABLE)\n\
         if (DocTool_EXECUTABLE)\n\
         \x20 file(STRINGS \"${{DocTool_EXECUTABLE}}\" DocTool_FIRST_LINE LIMIT_COUNT 1)\n\
         endif()\n"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("cmake/FindDocTool.cmake", &find)
        .file("app.cpp", &main_checking("", "1 + 1 == 2"))
        .with_bystander()
        .edit("app.cpp", &main_checking("", "1 + 1 == 3"))
}

#[test]
fn oracle_configure_read_of_a_program_not_found_reads_nothing() {
    let o = find_module_scenario("cr-not-found", "d2t-no-such-doc-tool").run();
    o.assert_oracle();
    o.expect_changed("t_app");
    o.expect_exact_subset(&["t_app"]);
}

#[test]
fn oracle_configure_read_of_a_program_found_outside_the_tree_reads_nothing_of_it() {
    let o = find_module_scenario("cr-found-outside", "sh").run();
    o.assert_oracle();
    o.expect_changed("t_app");
    o.expect_exact_subset(&["t_app"]);
}

/// A project whose configure reads `read` through a name `string()`
/// computes (not resolved: configure may read any file).
fn computed_read_scenario(name: &str, read: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}string(CONCAT p \"${{CMAKE_CURRENT_SOURCE_DIR}}\" \"/{read}\")\n\
         file(STRINGS ${{p}} read_lines)\n\
         add_executable(app app.cpp)\n\
         add_test(NAME t_app COMMAND app)\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("app.cpp", &main_checking("", "1 + 1 == 2"))
        .with_bystander()
}

/// A name `string()` computes is not resolved: configure may read any file
/// (here it does read `app.cpp`): the whole suite, naming the remedy.
#[test]
fn oracle_configure_read_of_a_computed_name_falls_back_naming_the_snapshot() {
    let o = computed_read_scenario("cr-computed", "app.cpp")
        .edit("app.cpp", &main_checking("", "1 + 1 == 3"))
        .run();
    o.assert_oracle();
    o.expect_changed("t_app");
    o.expect_fallback_naming(3, "CHANGE_BUILD_CONFIG");
    o.expect_stderr(&[
        "file(STRINGS ${p} …) at CMakeLists.txt:5",
        "--base-snapshot",
    ]);
}

/// A boundary over `.github/**` is right until configure may read any file
/// (a read through a name `string()` computes): the change under it then
/// falls back naming the rule and its own reason, exit 3 (it was 2).
#[test]
fn precision_a_boundary_over_a_path_configure_may_read_falls_back_naming_the_rule() {
    let o = computed_read_scenario("p-boundary-github", "version.txt")
        .file("version.txt", "1\n")
        .file(".github/workflows/ci.yml", "on: push\n")
        .policy("[[boundary]]\npaths = [\".github/**\"]\nwhy = \"CI configuration: no build step or test reads it\"\n")
        .edit(".github/workflows/ci.yml", "on: [push, pull_request]\n")
        .run();
    o.assert_oracle_may_be_vacuous();
    o.expect_fallback_naming(3, "reason POLICY_BOUNDARY_CONTRADICTED: .github/workflows/ci.yml: policy [[boundary]] 1 (\".github/**\") is not applied: it covers .github/workflows/ci.yml, which is a CMake input");
    o.expect_stderr(&["reason CHANGE_BUILD_CONFIG: .github/workflows/ci.yml: configure reads it"]);
}

/// brotli's `read_macro(PATH …)`: the function's parameter is what its
/// calls pass (`version.h`), not any file.
fn read_macro_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}function(read_macro PATH MACRO OUTPUT)\n\
         \x20 file(STRINGS ${{PATH}} _line REGEX \"^#define +${{MACRO}} +(.+)$\")\n\
         \x20 string(REGEX REPLACE \"^#define +${{MACRO}} +(.+)$\" \"\\\\1\" _val \"${{_line}}\")\n\
         \x20 set(${{OUTPUT}} ${{_val}} PARENT_SCOPE)\n\
         endfunction()\n\
         read_macro(\"version.h\" \"APP_VERSION\" APP_VERSION)\n\
         configure_file(config.h.in ${{CMAKE_BINARY_DIR}}/config.h)\n\
         add_executable(reader reader.cpp)\n\
         target_include_directories(reader PRIVATE ${{CMAKE_BINARY_DIR}})\n\
         add_test(NAME t_config COMMAND reader)\n\
         add_executable(app app.cpp)\n\
         add_test(NAME t_app COMMAND app)\n{BYSTANDER}"
    );
    Scenario::new(name)
        .file("CMakeLists.txt", &cmake)
        .file("version.h", "#define APP_VERSION 1\n")
        .file("config.h.in", "#define CONFIG_VERSION @APP_VERSION@\n")
        .file(
            "reader.cpp",
            &main_checking("#include \"config.h\"", "CONFIG_VERSION == 1"),
        )
        .file("app.cpp", &main_checking("", "1 + 1 == 2"))
        .with_bystander()
}

#[test]
fn oracle_configure_read_through_a_function_parameter_reads_what_its_calls_pass() {
    let o = read_macro_scenario("cr-read-macro")
        .edit("app.cpp", &main_checking("", "1 + 1 == 3"))
        .run();
    o.assert_oracle();
    o.expect_changed("t_app");
    o.expect_exact_subset(&["t_app"]);
    let o = read_macro_scenario("cr-read-macro-version")
        .edit("version.h", "#define APP_VERSION 2\n")
        .run();
    o.assert_oracle();
    o.expect_changed("t_config");
    o.expect_fallback_naming(3, "CHANGE_BUILD_CONFIG");
    o.expect_stderr(&[
        "version.h: configure reads it: file(STRINGS ${PATH} …) at CMakeLists.txt:5",
    ]);
}

// ---- issue 37 item 3: the artifacts a scripted test's command line names

/// The ways CMake projects write scripted tests: `python3 run.py
/// $<TARGET_FILE:tool>` (jsoncpp), `cmake -DEXE=$<TARGET_FILE:tool> -P
/// run.cmake` (brotli) and `bash run.sh $<TARGET_FILE:tool>` with `run.sh`
/// configured into the build tree (libexpat). The scripts name no artifact
/// (they run what their argument or variable holds); the command lines do.
/// With the scan, each test is mapped to `tool`.
fn command_line_artifacts_scenario(name: &str) -> Scenario {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         add_test(NAME t_py COMMAND python3 ${{CMAKE_CURRENT_SOURCE_DIR}}/run.py $<TARGET_FILE:tool>)\n\
         add_test(NAME t_cm COMMAND ${{CMAKE_COMMAND}} -DEXE=$<TARGET_FILE:tool> -P ${{CMAKE_CURRENT_SOURCE_DIR}}/run.cmake)\n\
         configure_file(run.sh.in run.sh @ONLY)\n\
         add_test(NAME t_sh COMMAND bash run.sh $<TARGET_FILE:tool>)\n\
         {BYSTANDER}"
    );
    Scenario::new(name)
        .file("run.sh.in", "case \"@CMAKE_SYSTEM_NAME@\" in\n*) exec \"$@\" ;;\nesac\n")
        .file("CMakeLists.txt", &cmake)
        .file(
            "run.py",
            "import subprocess, sys\nsys.exit(subprocess.run([sys.argv[1]]).returncode)\n",
        )
        .file(
            "run.cmake",
            "execute_process(COMMAND ${EXE} RESULT_VARIABLE r)\nif(r)\n  message(FATAL_ERROR \"tool failed: ${r}\")\nendif()\n",
        )
        // Its bytes hold text a script scan takes for a computed name (`x$y`).
        .file("tool.cpp", &main_checking(TOOL_DATA, "marker[0] == 'p'"))
        .with_bystander()
        .policy(SCAN)
        .edit("tool.cpp", &main_checking(TOOL_DATA, "marker[0] == 'q'"))
}

const TOOL_DATA: &str = "extern const char marker[];\nconst char marker[] = \"price$100\";";

/// A change to `tool` selects exactly the three.
#[test]
fn oracle_the_scan_maps_the_artifacts_a_scripted_tests_command_line_names() {
    let o = command_line_artifacts_scenario("cl-artifacts").run();
    o.assert_oracle();
    o.expect_changed("t_py");
    o.expect_changed("t_cm");
    o.expect_changed("t_sh");
    o.expect_exact_subset(&["t_cm", "t_py", "t_sh"]);
    o.expect_stderr(&["assume SCRIPTS 1"]);
}

/// The same after a reconfigure that relinked nothing: `tool` is older than
/// the File API reply, as a file configure wrote would be. A program is no
/// script configure wrote: it is the artifact the test runs, not a text to
/// scan (its bytes, scanned as a script's, "computed names" and the scan
/// refused the test: libexpat's `runtests`, on a real history).
#[test]
fn oracle_the_scan_maps_an_artifact_older_than_the_reply() {
    let o = command_line_artifacts_scenario("cl-artifacts-aged")
        .after_head_build(|ctx| {
            let reply = ctx.build.join(".cmake/api/v1/reply");
            let index = std::fs::read_dir(&reply)
                .unwrap()
                .flatten()
                .find(|e| e.file_name().to_string_lossy().starts_with("index-"))
                .unwrap();
            let then = filetime::FileTime::from_last_modification_time(&index.metadata().unwrap());
            let older = filetime::FileTime::from_unix_time(then.unix_seconds() - 60, 0);
            filetime::set_file_mtime(ctx.build.join("tool"), older).unwrap();
        })
        .run();
    o.assert_oracle();
    o.expect_exact_subset(&["t_cm", "t_py", "t_sh"]);
}

const SCAN: &str = "scripts = \"scan\"\n";

/// libpng's tests: `cmake -DTEST_COMMAND=$<TARGET_FILE:pngtest> -P BUILD/tests/NAME.cmake`,
/// the script configured with the PNGs the program reads. The scan follows
/// the files a script names as scripts; a PNG is not text, and before, a
/// file that is not text counted as computing a name, so the scan refused
/// every libpng test that reads a PNG (22 of 37). An image is decoded, never
/// run: with the scan, a change to the PNG selects exactly its test.
#[test]
fn oracle_the_scan_maps_a_script_that_names_an_image() {
    const PNG_A: &[u8] = b"\x89PNG\r\n\x1a\nA\x00\xff price$100 x_${n}";
    const PNG_B: &[u8] = b"\x89PNG\r\n\x1a\nB\x00\xff price$100 x_${n}";
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         function(image_test NAME)\n\
         \x20 set(TEST_FILES \"${{ARGN}}\")\n\
         \x20 configure_file(${{CMAKE_SOURCE_DIR}}/test.cmake.in ${{CMAKE_BINARY_DIR}}/tests/${{NAME}}.cmake @ONLY)\n\
         \x20 add_test(NAME ${{NAME}} COMMAND ${{CMAKE_COMMAND}} -DTEST_COMMAND=$<TARGET_FILE:tool> -P ${{CMAKE_BINARY_DIR}}/tests/${{NAME}}.cmake)\n\
         endfunction()\n\
         image_test(t_png ${{CMAKE_SOURCE_DIR}}/data/image.png)\n\
         image_test(t_none)\n\
         {BYSTANDER}"
    );
    let tool = "#include <cstdio>\n\
                int main(int argc, char** argv) {\n\
                \x20 if (argc < 2) { std::puts(\"no file\"); return 0; }\n\
                \x20 std::FILE* f = std::fopen(argv[1], \"rb\");\n\
                \x20 if (!f) return 2;\n\
                \x20 unsigned char b[9] = {0};\n\
                \x20 std::size_t n = std::fread(b, 1, 9, f);\n\
                \x20 std::fclose(f);\n\
                \x20 bool ok = n == 9 && b[8] == 'A';\n\
                \x20 std::puts(ok ? \"ok\" : \"FAIL\");\n\
                \x20 return ok ? 0 : 1;\n\
                }\n";
    let o = Scenario::new("scan-image")
        .file("CMakeLists.txt", &cmake)
        .file(
            "test.cmake.in",
            "set(TEST_FILES \"@TEST_FILES@\")\n\
             execute_process(COMMAND \"${TEST_COMMAND}\" ${TEST_FILES} RESULT_VARIABLE rc)\n\
             if(rc)\n  message(FATAL_ERROR \"failed: ${rc}\")\nendif()\n",
        )
        .file("tool.cpp", tool)
        .file("data/image.png", "placeholder")
        .after_base_files(|ctx| std::fs::write(ctx.src.join("data/image.png"), PNG_A).unwrap())
        .with_bystander()
        .policy(SCAN)
        .edit("data/image.png", "placeholder")
        .after_edits(|ctx| std::fs::write(ctx.src.join("data/image.png"), PNG_B).unwrap())
        .run();
    o.assert_oracle();
    o.expect_changed("t_png");
    o.expect_exact_subset(&["t_png"]);
    o.expect_stderr(&["assume SCRIPTS 1"]);
}

// ---- issue 37 item 2: init suggests only what the loader and a run accept

/// Every suggestion of `init`'s policy (a commented `key = value` line, or
/// a commented `[[table]]` with its keys), uncommented alone.
fn suggestions(policy: &str) -> Vec<String> {
    let key = |l: &str| {
        l.strip_prefix("# ").is_some_and(|r| {
            let k = r.split(" = ").next().unwrap_or("");
            r.contains(" = ")
                && !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        })
    };
    let lines: Vec<&str> = policy.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let table = l.starts_with("# [[") && l.ends_with("]]");
        if !table && !key(l) {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        if table {
            while end < lines.len() && key(lines[end]) {
                end += 1;
            }
        }
        let mut text = String::new();
        for (j, line) in lines.iter().enumerate() {
            let line = if (i..end).contains(&j) {
                &line[2..]
            } else {
                line
            };
            text.push_str(line);
            text.push('\n');
        }
        out.push(text);
        i = end;
    }
    out
}

/// A project with every kind of test init writes about (a script the scan
/// maps from its command line, one that also computes a name, one that
/// names nothing, a foreign program) and unreferenced files: each
/// suggestion, uncommented alone, makes a run that keeps the oracle and is
/// never a usage error.
#[test]
fn init_suggestions_each_uncommented_alone_never_make_a_usage_error() {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         add_test(NAME t_scan COMMAND python3 ${{CMAKE_CURRENT_SOURCE_DIR}}/run.py $<TARGET_FILE:tool>)\n\
         add_test(NAME t_calc COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/calc.sh $<TARGET_FILE:tool> x)\n\
         add_test(NAME t_computed COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/computed.sh)\n\
         add_test(NAME t_foreign COMMAND true)\n\
         {BYSTANDER}"
    );
    let o = Scenario::new("init-suggestions")
        .file("CMakeLists.txt", &cmake)
        .file(
            "run.py",
            "import subprocess, sys\nsys.exit(subprocess.run([sys.argv[1]]).returncode)\n",
        )
        .file(
            "calc.sh",
            "\"$1\" || exit 1\nhelper=\"calc-$2\"\nif [ -x \"$helper\" ]; then \"$helper\"; fi\nexit 0\n",
        )
        .file("computed.sh", "n=to\nexec \"./${n}ol\"\n")
        .file("tool.cpp", &main_checking("", "1 + 1 == 2"))
        .file("README.md", "# tool\n")
        .file("docs/guide.md", "how\n")
        .with_bystander()
        .edit("tool.cpp", &main_checking("", "1 + 1 == 3"))
        .run();
    o.assert_oracle();
    let init = o.init();
    assert_eq!(init.code, 0, "{}", init.stderr);
    let policy = init.stdout;
    for want in [
        "\n# scripts = \"scan\"\n",
        "#   t_scan: run.py -> tool\n",
        "#   t_calc: calc.sh -> tool\n",
        "# targets_from_script = true\n",
        "#   t_computed: computed.sh\n",
        "#   t_foreign: TEST_COMMAND_UNMAPPED\n",
    ] {
        assert!(policy.contains(want), "{want:?} not in\n{policy}");
    }
    // No template: t_computed names no target `t_computed`.
    assert!(!policy.contains("targets = [\"{test}\"]"), "{policy}");
    let each = suggestions(&policy);
    assert!(each.len() >= 4, "{each:#?}");
    for (k, text) in each.iter().enumerate() {
        let file = o.ctx.root.join(format!("suggestion-{k}.toml"));
        std::fs::write(&file, text).unwrap();
        let r = o.rerun(
            &["--policy"],
            &["--policy".into(), file.display().to_string()],
        );
        assert_ne!(
            r.run.code, 2,
            "suggestion {k} is refused:\n{text}\n{}",
            r.run.stderr
        );
        r.assert_oracle();
    }
}
