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

/// A name `string()` computes is not resolved: configure may read any file
/// (here it does read `app.cpp`): the whole suite, naming the remedy.
#[test]
fn oracle_configure_read_of_a_computed_name_falls_back_naming_the_snapshot() {
    let cmake = format!(
        "{PROLOGUE}string(CONCAT p \"${{CMAKE_CURRENT_SOURCE_DIR}}\" \"/app.cpp\")\n\
         file(STRINGS ${{p}} app_lines)\n\
         add_executable(app app.cpp)\n\
         add_test(NAME t_app COMMAND app)\n{BYSTANDER}"
    );
    let o = Scenario::new("cr-computed")
        .file("CMakeLists.txt", &cmake)
        .file("app.cpp", &main_checking("", "1 + 1 == 2"))
        .with_bystander()
        .edit("app.cpp", &main_checking("", "1 + 1 == 3"))
        .run();
    o.assert_oracle();
    o.expect_changed("t_app");
    o.expect_fallback_naming(3, "CHANGE_BUILD_CONFIG");
    o.expect_stderr(&["file(STRINGS ${p} …) at CMakeLists.txt:5", "--base-snapshot"]);
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
        .file("reader.cpp", &main_checking("#include \"config.h\"", "CONFIG_VERSION == 1"))
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
    o.expect_stderr(&["version.h: configure reads it: file(STRINGS ${PATH} …) at CMakeLists.txt:5"]);
}
