//! Issue 36: what tests read, recorded by strace on the BASE build's suite
//! run, as evidence. Each scenario is a way the textual modes (and init's
//! policy of the last round) omitted a failing test. Each runs the whole
//! suite at BASE (under strace) and HEAD, and checks:
//! * with the record (`--record`, no policy): the oracle, and the failing
//!   test selected in a subset that leaves the bystander out;
//! * without the record, with the policy `diff2test init` wrote for the BASE
//!   build, used as written: the oracle (no omission).

use super::{init_policy, main_checking, Generator, Outcome, Scenario, BYSTANDER, PROLOGUE};

const OTHER: &str = "int main() { return 0; }\n";

/// The two checks every scenario makes (see the module docs).
fn check(o: &Outcome, failing: &str) {
    o.expect_changed(failing);
    o.assert_oracle();
    o.expect_subset(&[failing]);
    assert!(
        !o.selected().contains("other"),
        "the bystander is selected with the record:\n{}",
        o.run.stderr
    );
    assert!(
        o.run.stderr.contains("assume RECORD 1"),
        "the decision rests on the record and says so:\n{}",
        o.run.stderr
    );
    let policy = o.ctx.root.join("diff2test.toml");
    let without = o.rerun(
        &["--record"],
        &["--policy".into(), policy.display().to_string()],
    );
    without.assert_oracle();
    // The textual modes, for those who choose them (init's, uncommented): no omission either.
    let text = std::fs::read_to_string(&policy).unwrap();
    let chosen = o.ctx.root.join("textual.toml");
    std::fs::write(
        &chosen,
        text.replace(
            "\n# unreferenced_paths = \"skip\"\n",
            "\nunreferenced_paths = \"skip\"\n",
        )
        .replace("\n# scripts = \"scan\"\n", "\nscripts = \"scan\"\n"),
    )
    .unwrap();
    let textual = o.rerun(
        &["--record"],
        &["--policy".into(), chosen.display().to_string()],
    );
    textual.assert_oracle();
}

fn both(f: impl Fn(Generator)) {
    for g in [Generator::Makefiles, Generator::Ninja] {
        f(g);
    }
}

/// 1. A Python test script imports a helper module from its own directory
///    (`from clitest import run`): no path, no `.py`, no `__file__` in any text.
#[test]
fn a_python_helper_module_the_script_imports_is_read_by_its_test() {
    let cmake = format!(
        "{PROLOGUE}add_test(NAME py_cli COMMAND python3 ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/test_cli.py)\n{BYSTANDER}"
    );
    both(|g| {
        let o = Scenario::new(&format!("r36-python-helper-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("other.cpp", OTHER)
            .file(
                "tests/test_cli.py",
                "import sys\nfrom clitest import run\nsys.exit(0 if run() == 1 else 1)\n",
            )
            .file("tests/clitest.py", "def run():\n    return 1\n")
            .recorded()
            .after_base_build(init_policy)
            .edit("tests/clitest.py", "def run():\n    return 2\n")
            .run();
        check(&o, "py_cli");
    });
}

/// 2. A tested program runs a helper program from its own directory, and the
///    helper reads a data table through a compiled-in directory.
#[test]
fn a_helper_program_reading_a_table_through_a_compiled_in_directory() {
    both(|g| {
        let cmake = format!(
            "{PROLOGUE}add_executable(helper helper.cpp)\n\
             target_compile_definitions(helper PRIVATE DATA_DIR=\"${{CMAKE_CURRENT_SOURCE_DIR}}/data\")\n\
             add_executable(prog prog.cpp)\nadd_dependencies(prog helper)\n\
             add_test(NAME prog_table COMMAND prog)\n{BYSTANDER}"
        );
        let prog = main_checking(
            "#include <string>\n#include <unistd.h>\n#include <climits>\n\
             static std::string helper_output() {\n\
               char buf[PATH_MAX] = {0};\n\
               ssize_t n = readlink(\"/proc/self/exe\", buf, sizeof buf - 1);\n\
               std::string dir(buf, n > 0 ? n : 0);\n\
               dir = dir.substr(0, dir.rfind('/'));\n\
               FILE* p = popen((dir + \"/helper\").c_str(), \"r\");\n\
               char line[64] = {0};\n\
               if (p) { if (!fgets(line, sizeof line, p)) line[0] = 0; pclose(p); }\n\
               return line;\n\
             }",
            "helper_output() == \"3\\n\"",
        );
        let helper = "#include <fstream>\n#include <iostream>\n#include <string>\n\
             int main() { std::ifstream in(DATA_DIR \"/table.txt\"); std::string s; std::getline(in, s); std::cout << s << \"\\n\"; }\n";
        let o = Scenario::new(&format!("r36-helper-table-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("prog.cpp", &prog)
            .file("helper.cpp", helper)
            .file("data/table.txt", "3\n")
            .file("other.cpp", OTHER)
            .recorded()
            .after_base_build(init_policy)
            .edit("data/table.txt", "4\n")
            .run();
        check(&o, "prog_table");
    });
}

/// 3. `[[data]] tests/{test}*.expected` (the template init offers): `*` after
///    `{test}` crossed `/`, so test `re`'s rule cleared `tests/regress/…`,
///    which the `regress_suite` test reads. With the record the reader is
///    selected; with the rule as written the path is no longer the rule's.
#[test]
fn a_data_template_does_not_cross_into_another_suites_directory() {
    let cmake = format!(
        "{PROLOGUE}add_test(NAME re COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/cmp.sh re)\n\
         add_test(NAME regress_suite COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/suite.sh)\n{BYSTANDER}"
    );
    both(|g| {
        let o = Scenario::new(&format!("r36-data-template-{g:?}"))
        .generator(g)
        .file("CMakeLists.txt", &cmake)
        .file("other.cpp", OTHER)
        .file(
            "tests/cmp.sh",
            "#!/bin/sh\nd=$(dirname \"$0\")\ngrep -q ok \"$d/$1.expected\"\n",
        )
        .file("tests/re.expected", "ok\n")
        .file(
            "tests/suite.sh",
            "#!/bin/sh\nfor f in \"$(dirname \"$0\")\"/regress/*.expected; do grep -q ok \"$f\" || exit 1; done\n",
        )
        .file("tests/regress/case1.expected", "ok\n")
        .recorded()
        .after_base_build(init_policy)
        .edit("tests/regress/case1.expected", "bad\n")
        .run();
        check(&o, "regress_suite");
        let templated = o.rerun(
        &["--record"],
        &[
            "--policy".into(),
            write_policy(
                &o,
                "[[data]]\npaths = [\"tests/{test}*.expected\"]\nwhy = \"each test's expected output\"\n",
            ),
        ],
    );
        templated.assert_oracle();
    });
}

fn write_policy(o: &Outcome, text: &str) -> String {
    let p = o.ctx.root.join("templated.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// 4. A script climbs from its own directory to its data
///    (`"$(dirname "$0")/../../testdata/$2.out"`).
#[test]
fn a_script_climbing_from_its_directory_to_its_data() {
    let cmake = format!(
        "{PROLOGUE}add_executable(prog prog.cpp)\n\
         add_test(NAME climb COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/sub/run.sh $<TARGET_FILE:prog> case1)\n{BYSTANDER}"
    );
    both(|g| {
        let o = Scenario::new(&format!("r36-climb-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file(
                "prog.cpp",
                "#include <cstdio>\nint main() { std::puts(\"out-1\"); }\n",
            )
            .file(
                "tests/sub/run.sh",
                "#!/bin/sh\n\"$1\" | cmp -s - \"$(dirname \"$0\")/../../testdata/$2.out\"\n",
            )
            .file("testdata/case1.out", "out-1\n")
            .file("other.cpp", OTHER)
            .recorded()
            .after_base_build(init_policy)
            .edit("testdata/case1.out", "out-2\n")
            .run();
        check(&o, "climb");
    });
}

/// 5. A test is given a manifest (`tests/corpus.list`) that lists its cases
///    relative to itself.
#[test]
fn a_manifest_listing_cases_relative_to_itself() {
    let cmake = format!(
        "{PROLOGUE}add_executable(corpus corpus.cpp)\n\
         add_test(NAME corpus COMMAND corpus ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/corpus.list)\n{BYSTANDER}"
    );
    let corpus = "#include <fstream>\n#include <string>\n\
         int main(int, char** argv) {\n\
           std::string list = argv[1];\n\
           std::string dir = list.substr(0, list.rfind('/'));\n\
           std::ifstream in(list); std::string name;\n\
           while (std::getline(in, name)) {\n\
             std::ifstream c(dir + \"/\" + name); std::string s; std::getline(c, s);\n\
             if (s != \"valid\") return 1;\n\
           }\n\
           return 0;\n\
         }\n";
    both(|g| {
        let o = Scenario::new(&format!("r36-manifest-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("corpus.cpp", corpus)
            .file("tests/corpus.list", "cases/a.txt\ncases/b.txt\n")
            .file("tests/cases/a.txt", "valid\n")
            .file("tests/cases/b.txt", "valid\n")
            .file("other.cpp", OTHER)
            .recorded()
            .after_base_build(init_policy)
            .edit("tests/cases/b.txt", "invalid\n")
            .run();
        check(&o, "corpus");
    });
}

/// 6. A `POST_BUILD` `copy_directory` puts a data directory beside a program
///    that loads every file there (HEAD built from scratch, as a CI runner
///    without a cache does: the copy runs again).
#[test]
fn a_post_build_copy_of_a_data_directory_the_program_lists() {
    both(|g| {
        let cmake = format!(
            "{PROLOGUE}add_executable(loader loader.cpp)\n\
             add_custom_command(TARGET loader POST_BUILD COMMAND ${{CMAKE_COMMAND}} -E copy_directory ${{CMAKE_CURRENT_SOURCE_DIR}}/plugdata $<TARGET_FILE_DIR:loader>/plugdata)\n\
             add_test(NAME loader_test COMMAND loader)\n{BYSTANDER}"
        );
        let loader = "#include <dirent.h>\n#include <fstream>\n#include <string>\n#include <unistd.h>\n#include <climits>\n\
             int main() {\n\
               char buf[PATH_MAX] = {0};\n\
               ssize_t n = readlink(\"/proc/self/exe\", buf, sizeof buf - 1);\n\
               std::string dir(buf, n > 0 ? n : 0);\n\
               dir = dir.substr(0, dir.rfind('/')) + \"/plugdata\";\n\
               DIR* d = opendir(dir.c_str()); if (!d) return 2;\n\
               int bad = 0;\n\
               while (dirent* e = readdir(d)) {\n\
                 std::string name = e->d_name; if (name[0] == '.') continue;\n\
                 std::ifstream in(dir + \"/\" + name); std::string s; std::getline(in, s);\n\
                 if (s != \"ok\") bad = 1;\n\
               }\n\
               closedir(d); return bad;\n\
             }\n";
        let o = Scenario::new(&format!("r36-post-build-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("loader.cpp", loader)
            .file("plugdata/a.txt", "ok\n")
            .file("plugdata/b.txt", "ok\n")
            .file("other.cpp", OTHER)
            .recorded()
            .after_base_build(init_policy)
            .edit("plugdata/b.txt", "bad\n")
            .fresh_head_build()
            .run();
        check(&o, "loader_test");
    });
}

/// 7. `execute_process()` runs a script that reads `release.txt` into a
///    configured header: no evidence names `release.txt`.
#[test]
fn an_execute_process_script_reading_a_file_into_a_configured_header() {
    both(|g| {
        let cmake = format!(
            "{PROLOGUE}execute_process(COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tools/version.sh ${{CMAKE_CURRENT_SOURCE_DIR}} OUTPUT_VARIABLE V OUTPUT_STRIP_TRAILING_WHITESPACE)\n\
             configure_file(version.h.in ${{CMAKE_BINARY_DIR}}/version.h @ONLY)\n\
             add_executable(ver ver.cpp)\ntarget_include_directories(ver PRIVATE ${{CMAKE_BINARY_DIR}})\n\
             add_test(NAME ver_test COMMAND ver)\n{BYSTANDER}"
        );
        let o = Scenario::new(&format!("r36-execute-process-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("tools/version.sh", "#!/bin/sh\ncat \"$1/release.txt\"\n")
            .file("release.txt", "1.0\n")
            .file("version.h.in", "#define VERSION \"@V@\"\n")
            .file(
                "ver.cpp",
                &main_checking(
                    "#include <cstring>\n#include \"version.h\"",
                    "std::strcmp(VERSION, \"1.0\") == 0",
                ),
            )
            .file("other.cpp", OTHER)
            .recorded()
            .after_base_build(init_policy)
            .edit("release.txt", "2.0\n")
            .run();
        check(&o, "ver_test");
    });
}

/// 8. A script runs `calc` by name and its subcommands by a computed name
///    (`"$dir/calc-$1"`).
#[test]
fn a_script_running_subcommands_by_a_computed_name() {
    both(|g| {
        let cmake = format!(
            "{PROLOGUE}add_executable(calc calc.cpp)\nadd_executable(calc-add calc_add.cpp)\nadd_executable(calc-mul calc_mul.cpp)\n\
             add_test(NAME calc_add COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/calc.sh add 5 WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n\
             add_test(NAME calc_mul COMMAND sh ${{CMAKE_CURRENT_SOURCE_DIR}}/tests/calc.sh mul 6 WORKING_DIRECTORY ${{CMAKE_BINARY_DIR}})\n{BYSTANDER}"
        );
        let op = |sym: &str| {
            format!("#include <cstdio>\n#include <cstdlib>\nint main(int, char** v) {{ std::printf(\"%d\\n\", std::atoi(v[1]) {sym} std::atoi(v[2])); }}\n")
        };
        let o = Scenario::new(&format!("r36-computed-name-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("calc.cpp", "#include <cstdio>\nint main() { std::puts(\"calc 1\"); }\n")
            .file("calc_add.cpp", &op("+"))
            .file("calc_mul.cpp", &op("*"))
            .file(
                "tests/calc.sh",
                "#!/bin/sh\ndir=$(pwd)\n./calc >/dev/null || exit 1\ntest \"$(\"$dir/calc-$1\" 2 3)\" = \"$2\"\n",
            )
            .file("other.cpp", OTHER)
            .recorded()
            .after_base_build(init_policy)
            .edit("calc_add.cpp", &op("-"))
            .run();
        check(&o, "calc_add");
        assert!(
            !o.selected().contains("calc_mul"),
            "calc_mul ran calc and calc-mul, neither changed:\n{}",
            o.run.stderr
        );
    });
}

/// The record decides a covered test the static evidence reaches: a comment
/// added at the end of a header leaves the program that includes it byte for
/// byte the same, so its test (everything it read unchanged) is skipped, and
/// says so; without the record the header selects it.
#[test]
fn a_program_the_change_leaves_byte_identical_is_skipped_with_the_record() {
    both(|g| {
        let cmake = format!(
            "{PROLOGUE}add_executable(a a.cpp)\nadd_executable(b b.cpp)\n\
             add_test(NAME a COMMAND a)\nadd_test(NAME b COMMAND b)\n{BYSTANDER}"
        );
        let o = Scenario::new(&format!("r36-identical-{g:?}"))
            .generator(g)
            .file("CMakeLists.txt", &cmake)
            .file("common.h", "#pragma once\nint answer();\n")
            .file(
                "a.cpp",
                &main_checking(
                    "#include \"common.h\"\nint answer() { return 42; }",
                    "answer() == 42",
                ),
            )
            .file("b.cpp", &main_checking("#include \"common.h\"", "1 == 1"))
            .file("other.cpp", OTHER)
            .recorded()
            .edit(
                "common.h",
                "#pragma once\nint answer();\n// answer() is the answer\n",
            )
            .edit("b.cpp", &main_checking("#include \"common.h\"", "1 == 2"))
            .run();
        o.expect_changed("b");
        o.assert_oracle();
        o.expect_exact_subset(&["b"]);
        assert!(
            o.run.stderr.contains("test \"a\": the static evidence reaches it, and every input its recorded run touched is unchanged: skipped"),
            "{}",
            o.run.stderr
        );
        let without = o.rerun(&["--record"], &[]);
        without.assert_oracle();
        without.expect_exact_subset(&["a", "b"]);
    });
}

/// A test the record takes out does not run, so it writes nothing: its
/// output cannot select the tests that read it. Three tests name the data
/// directory (the static evidence selects all three for any change below it);
/// `writer` reads `data/a.txt` and writes `shared.txt`, which `reader` reads;
/// `checker` reads `data/c.txt`, the file HEAD changes. The record selects
/// `checker` alone: before, `reader` came too, because `writer` counted as
/// selected although the record then took it out (mbedtls: a `.data` edit
/// selected the PSA suites that read the key files `psa_its` writes).
#[test]
fn an_unaffected_writer_the_record_takes_out_selects_none_of_its_readers() {
    let cmake = format!(
        "{PROLOGUE}add_executable(tool tool.cpp)\n\
         add_test(NAME writer COMMAND tool write ${{CMAKE_CURRENT_SOURCE_DIR}}/data)\n\
         add_test(NAME reader COMMAND tool read ${{CMAKE_CURRENT_SOURCE_DIR}}/data)\n\
         set_tests_properties(reader PROPERTIES DEPENDS writer)\n\
         add_test(NAME checker COMMAND tool check ${{CMAKE_CURRENT_SOURCE_DIR}}/data)\n{BYSTANDER}"
    );
    let tool = "#include <fstream>\n#include <string>\n\
         static std::string first(const std::string& p) {\n\
           std::ifstream in(p); std::string s; std::getline(in, s); return s;\n}\n\
         int main(int, char** argv) {\n\
           std::string mode = argv[1], dir = argv[2];\n\
           if (mode == \"write\") { std::ofstream(\"shared.txt\") << first(dir + \"/a.txt\") << \"\\n\"; return 0; }\n\
           if (mode == \"read\") return first(\"shared.txt\") == \"a\" ? 0 : 1;\n\
           return first(dir + \"/c.txt\") == \"c\" ? 0 : 1;\n}\n";
    let o = Scenario::new("r37-unaffected-writer")
        .generator(Generator::Ninja)
        .file("CMakeLists.txt", &cmake)
        .file("tool.cpp", tool)
        .file("data/a.txt", "a\n")
        .file("data/c.txt", "c\n")
        .file("other.cpp", OTHER)
        .recorded()
        .edit("data/c.txt", "changed\n")
        .run();
    o.expect_changed("checker");
    o.assert_oracle();
    o.expect_exact_subset(&["checker"]);
    assert!(
        o.run.stderr.contains("test \"writer\": the static evidence reaches it, and every input its recorded run touched is unchanged: skipped"),
        "{}",
        o.run.stderr
    );
    let without = o.rerun(&["--record"], &[]);
    without.assert_oracle();
}

/// A program that opens and reads its data through an io_uring ring: the
/// ring's OPENAT and READ requests are no syscalls, so the log holds no path
/// of what it read. The record's strace line traces `io_uring_setup`, and a
/// ring that was set up makes the test unrecorded: decided without the
/// record, the data change falls back. Before, the test was recorded as
/// reading nothing there and the change to its data was skipped (the test
/// failed at HEAD). Needs a kernel with io_uring (5.6 or later, not disabled).
#[test]
fn a_test_reading_through_io_uring_is_not_recorded() {
    let cmake = format!(
        "{PROLOGUE}add_executable(uring uring.cpp)\n\
         target_compile_definitions(uring PRIVATE DATA=\"${{CMAKE_CURRENT_SOURCE_DIR}}/data/in.txt\")\n\
         add_test(NAME uring COMMAND uring)\n{BYSTANDER}"
    );
    let o = Scenario::new("r37-io-uring")
        .generator(Generator::Ninja)
        .file("CMakeLists.txt", &cmake)
        .file("uring.cpp", include_str!("uring.cpp"))
        .file("data/in.txt", "in\n")
        .file("other.cpp", OTHER)
        .recorded()
        .edit("data/in.txt", "changed\n")
        .run();
    // Base passes only where the ring worked (exit 2: no io_uring here).
    o.expect_changed("uring");
    o.assert_oracle();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN: data/in.txt");
    o.expect_stderr(&[
        "note RECORD_TEST_UNRECORDED: 1 of 2 tests are decided without",
        "\"uring\"",
    ]);
}

/// A test that binds its data directory onto another path in a mount
/// namespace of its own (as bwrap and `unshare -m` sandboxes do) and reads it
/// there: the log names only the bound path. A mount that maps a directory
/// onto other files makes its test unrecorded; before, the test was recorded
/// as reading `data/view/x.txt` only, and the change to `data/real/x.txt` was
/// skipped while the test failed at HEAD. Needs `unshare -m` (root with
/// CAP_SYS_ADMIN, as CI runs).
#[test]
fn a_test_reading_through_a_bind_mount_is_not_recorded() {
    let can = std::process::Command::new("unshare")
        .args(["-m", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        can,
        "this test needs `unshare -m` (util-linux) run as root with CAP_SYS_ADMIN"
    );
    let cmake = format!(
        "{PROLOGUE}add_test(NAME bound COMMAND unshare -m sh -c \"mount --bind ${{CMAKE_CURRENT_SOURCE_DIR}}/data/real ${{CMAKE_CURRENT_SOURCE_DIR}}/data/view && grep -q hi ${{CMAKE_CURRENT_SOURCE_DIR}}/data/view/x.txt\")\n{BYSTANDER}"
    );
    let o = Scenario::new("r37-bind-mount")
        .generator(Generator::Ninja)
        .file("CMakeLists.txt", &cmake)
        .file("data/real/x.txt", "hi\n")
        .file("data/view/.keep", "")
        .file("other.cpp", OTHER)
        .recorded()
        .edit("data/real/x.txt", "bye\n")
        .run();
    // Base passes only where `unshare -m` and `mount --bind` are permitted.
    o.expect_changed("bound");
    o.assert_oracle();
    o.expect_fallback_naming(3, "CHANGE_UNKNOWN: data/real/x.txt");
    o.expect_stderr(&["note RECORD_TEST_UNRECORDED: 1 of 2 tests are decided without"]);
}

/// A server outside every test's run: ctest starts it before the tests
/// (`CTEST_CUSTOM_PRE_TEST` in the build's CTestCustom.cmake) and stops it
/// after them; it serves `data/in.txt` over a Unix socket, or over a fixed
/// loopback TCP port, and `client` reads the data through the
/// socket, never opening the file. A connection to a Unix socket or a
/// loopback port that no process of the test's own run bound makes the test
/// unrecorded (the server may read files for it). Before, the client was
/// recorded as reading nothing there, so the data change, touched by no
/// test's run, selected nothing while the client failed at HEAD.
#[test]
fn a_client_of_a_server_outside_its_run_is_not_recorded() {
    for family in ["unix", "tcp"] {
        outside_server(family);
    }
}

fn outside_server(family: &str) {
    // A fixed port (no file the client reads may carry it: the record would
    // see that file change and select the client for it).
    let address = if family == "unix" {
        "${CMAKE_CURRENT_BINARY_DIR}/srv.sock"
    } else {
        "47631"
    };
    let cmake = format!(
        "{PROLOGUE}set(ADDR {address})\n\
         set(PY ${{CMAKE_CURRENT_SOURCE_DIR}}/tests)\n\
         file(WRITE ${{CMAKE_CURRENT_BINARY_DIR}}/CTestCustom.cmake \"\
         set(CTEST_CUSTOM_PRE_TEST \\\"python3 ${{PY}}/server.py {family} ${{ADDR}} ${{CMAKE_CURRENT_SOURCE_DIR}}/data/in.txt\\\")\\n\
         set(CTEST_CUSTOM_POST_TEST \\\"python3 ${{PY}}/client.py {family} ${{ADDR}} stop\\\")\\n\")\n\
         add_test(NAME client COMMAND python3 ${{PY}}/client.py {family} ${{ADDR}} get)\n{BYSTANDER}"
    );
    let server = "import os, socket, sys\n\
        family, addr, data = sys.argv[1], sys.argv[2], sys.argv[3]\n\
        if family == 'unix':\n\
        \x20   if os.path.exists(addr):\n        os.unlink(addr)\n\
        \x20   s = socket.socket(socket.AF_UNIX)\n    s.bind(addr)\n\
        else:\n\
        \x20   s = socket.socket(socket.AF_INET)\n\
        \x20   s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
        \x20   s.bind(('127.0.0.1', int(addr)))\n\
        s.listen(8)\n\
        if os.fork():\n    sys.exit(0)\n\
        os.setsid()\n\
        null = os.open(os.devnull, os.O_RDWR)\n\
        for fd in (0, 1, 2):\n    os.dup2(null, fd)\n\
        s.settimeout(60)\n\
        while True:\n\
        \x20   try:\n        c, _ = s.accept()\n    except OSError:\n        break\n\
        \x20   if c.recv(16) == b'stop':\n        c.close()\n        break\n\
        \x20   with open(data, 'rb') as f:\n        c.sendall(f.read())\n\
        \x20   c.close()\n";
    let client = "import socket, sys\n\
        family, addr, what = sys.argv[1], sys.argv[2], sys.argv[3]\n\
        if family == 'unix':\n\
        \x20   s = socket.socket(socket.AF_UNIX)\n    s.connect(addr)\n\
        else:\n\
        \x20   s = socket.socket(socket.AF_INET)\n\
        \x20   s.connect(('127.0.0.1', int(addr)))\n\
        s.sendall(what.encode())\n\
        got = s.recv(100)\n\
        sys.exit(0 if what == 'stop' or got == b'in\\n' else 1)\n";
    let o = Scenario::new(&format!("r37-outside-server-{family}"))
        .generator(Generator::Ninja)
        .file("CMakeLists.txt", &cmake)
        .file("tests/server.py", server)
        .file("tests/client.py", client)
        .file("data/in.txt", "in\n")
        .file("other.cpp", OTHER)
        .recorded()
        .edit("data/in.txt", "changed\n")
        .run();
    o.expect_changed("client");
    o.assert_oracle();
    o.expect_stderr(&[
        "note RECORD_TEST_UNRECORDED: 1 of 2 tests are decided without",
        "\"client\"",
    ]);
}
