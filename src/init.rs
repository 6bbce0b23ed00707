//! `diff2test init`: a commented starter `diff2test.toml` derived from the
//! build's evidence and the source tree. Every suggestion says what evidence
//! it rests on. Nothing that rests on an assumption is written active: the
//! textual modes (`unreferenced_paths = "skip"`, `scripts = "scan"`) infer
//! what a test reads from the names its texts hold, which a test that
//! computes a name defeats, so they are written commented, each with what it
//! assumes; so is every declaration the evidence cannot check (a boundary, a
//! data rule, a script rule, always-run tests). Precision without an
//! assumption comes from evidence: a record of the base's test run
//! (`diff2test record`, passed as `--record`), which the policy's header names.
//! Nothing suggested contradicts the evidence: a path the evidence references
//! is never suggested as a boundary.

use std::fmt::Write as _;

use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::ingest::custom_commands::Custom;
use crate::ingest::depfile::DepEvidence;
use crate::paths;
use crate::reach::{Holdings, Lookup, TestReach};
use crate::reason::Code;

/// What the suggestions are derived from.
pub struct Input<'a, 'g, 'm> {
    /// The naming tables (what scripts name).
    pub lookup: &'a Lookup<'g, 'm>,
    /// The target graph.
    pub graph: &'a Graph<'m>,
    /// The dependency evidence.
    pub deps: &'a DepEvidence,
    /// The custom commands.
    pub custom: &'a Custom,
    /// The catalogue.
    pub catalogue: &'a Catalogue,
    /// Each test's mapping.
    pub mappings: &'a [TestMapping],
    /// What each test's channels name.
    pub reaches: &'a [TestReach],
    /// What configure reads, and the words of the CMake inputs.
    pub configure: &'a crate::ingest::configure_reads::ConfigureReads,
    /// `--max-file-bytes`.
    pub max_bytes: u64,
}

/// A TOML string literal.
fn q(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The starter policy being written: its keys and comments, and its tables
/// (which come after every top-level key: a key below a table belongs to it).
#[derive(Default)]
struct Text {
    t: String,
    tables: String,
}

/// What each test's command line and the files it names name: the targets
/// the scan maps it to and the files it runs and names.
type Scanned = Vec<(Vec<usize>, Vec<String>)>;

/// The starter policy's text.
pub fn suggest(i: &Input<'_, '_, '_>) -> String {
    let mut out = Text::default();
    let _ = writeln!(
        out.t,
        "# diff2test.toml: a starter policy written by `diff2test init` from this build's evidence.\n\
         # Review it before you commit it. Every assumption a decision rests on is printed as\n\
         # `assume ...` on stderr and recorded in the plan. Lines starting with `# ` are suggestions\n\
         # the evidence cannot check: uncomment only what you know to be true.\n\
         #\n\
         # Precision from evidence instead: record what each test reads on the base build\n\
         #   strace -f -y -s 4096 -e trace=%file,%process,getdents64,fchdir,io_uring_setup,open_by_handle_at,bind,connect -o ctest.strace ctest\n\
         #   diff2test record --source-dir SRC --build-dir BUILD --strace ctest.strace --output record.json\n\
         # and pass --record record.json on each selection run.\n"
    );

    // 1. Top-level paths no evidence references. The binaries looked at are
    // those of the tests as the suggested modes map them: a scripted test's
    // scanned targets, or the target named like it (the template below).
    // What each test's command line and the files it names name (read once,
    // for the sections below).
    let scanned: Vec<(Vec<usize>, Vec<String>)> = (i.catalogue.tests.iter())
        .map(|test| i.lookup.script_targets(test))
        .collect();
    unreferenced_section(i, &scanned, &mut out);
    unmapped_section(i, &scanned, &mut out);
    let always = data_section(i, &mut out);
    named_after_section(i, &scanned, &mut out);
    always_run_section(always, &mut out);
    cmake_section(&mut out);
    let Text { mut t, tables } = out;
    if !tables.is_empty() {
        let _ = writeln!(
            t,
            "# --- Declarations (tables: keep them below every key above) -------------------------\n"
        );
        t.push_str(&tables);
    }
    t
}

/// Section 1: top-level paths no evidence references.
fn unreferenced_section(i: &Input<'_, '_, '_>, scanned: &Scanned, out: &mut Text) {
    let Text { t, tables } = out;
    let model = i.graph.model();
    let (src, build) = (model.source_root.as_str(), model.build_root.as_str());
    let rel = |p: &str| paths::relative_to(p, src);
    let unmapped_script = |m: &TestMapping| matches!(m, TestMapping::Unmapped(g) if g.code == Code::TestCommandUnmapped);
    // The files scripted tests run and name (their scripts, followed as the
    // scan follows them): referenced, by that test.
    let mut run_files: Vec<(String, String)> = Vec::new();
    for ((test, m), (_, files)) in i.catalogue.tests.iter().zip(i.mappings).zip(scanned) {
        if unmapped_script(m) {
            run_files.extend(files.iter().map(|f| (f.clone(), test.name.clone())));
        }
    }
    run_files.sort();
    let suggested: Vec<TestMapping> = i
        .catalogue
        .tests
        .iter()
        .zip(i.mappings)
        .zip(scanned)
        .map(|((test, m), (found, _))| match m {
            m if unmapped_script(m) => {
                let direct = if found.is_empty() {
                    model
                        .targets
                        .iter()
                        .position(|t| t.name == test.name)
                        .into_iter()
                        .collect()
                } else {
                    found.clone()
                };
                if direct.is_empty() {
                    m.clone()
                } else {
                    TestMapping::Mapped { direct }
                }
            }
            _ => m.clone(),
        })
        .collect();
    let holdings = Holdings::scan(i.graph, &suggested, i.max_bytes);
    let entries = top_level_entries(model);
    let mut unreferenced = Vec::new();
    let mut referenced = Vec::new();
    // Referenced only as below a binary's source directory (`__FILE__`).
    let mut below_source = Vec::new();
    for (name, is_dir) in &entries {
        let abs = paths::join_fold(src, name);
        if paths::is_within(build, &abs) || paths::is_within(&abs, build) {
            continue; // the build tree
        }
        let by_test = run_files
            .iter()
            .find(|(f, _)| f == &abs || paths::is_within(f, &abs))
            .map(|(f, t)| format!("test {t:?} runs or names {}", rel(f)));
        match reference(i, &holdings, &abs).or(by_test) {
            Some(why) => referenced.push((name.clone(), *is_dir, why)),
            None => match holdings.holding_source_dir(&abs, build, src) {
                Some(why) => below_source.push((name.clone(), *is_dir, why)),
                None => unreferenced.push((name.clone(), *is_dir)),
            },
        }
    }
    let _ = writeln!(
        t,
        "# --- Paths no evidence references --------------------------------------------------\n\
         # No unit, CMake input, custom command, test text or test binary references these\n\
         # top-level entries of the source tree (and of the repository around it) (checked now):"
    );
    if unreferenced.is_empty() {
        let _ = writeln!(t, "#   (none)");
    }
    for (n, d) in &unreferenced {
        let _ = writeln!(t, "#   {n}{}", if *d { "/" } else { "" });
    }
    let _ = writeln!(
        t,
        "# A changed path nothing references may be skipped (checked on every run, path by path;\n\
         # a referenced one still costs the whole suite, naming the reference). An assumption:\n\
         # a test or build step that computes a file's name (a module a script imports, a file a\n\
         # helper program finds, a script's execute_process) references it in no text. With a\n\
         # record of the base's test run (--record), a path no test read is skipped from evidence.\n\
         # unreferenced_paths = \"skip\"\n\
         # (or the [[boundary]] below, which is not checked either)\n"
    );
    if !below_source.is_empty() {
        let _ = writeln!(
            t,
            "# Below the source directory of a binary a test runs or loads (as __FILE__ holds it), and\n\
             # referenced by nothing else: unreferenced_paths keeps them (the program may find files\n\
             # there by computed names); the [[boundary]] below declares them if you know it does not:"
        );
        for (n, d, why) in &below_source {
            let _ = writeln!(t, "#   {n}{}: {why}", if *d { "/" } else { "" });
        }
        let _ = writeln!(t);
    }
    let globs: Vec<String> = unreferenced
        .iter()
        .chain(
            below_source
                .iter()
                .map(|(n, d, _)| (n.clone(), *d))
                .collect::<Vec<_>>()
                .iter(),
        )
        .map(|(n, d)| q(&if *d { format!("{n}/**") } else { n.clone() }))
        .collect();
    if !globs.is_empty() {
        let _ = writeln!(
            tables,
            "# Instead of unreferenced_paths: declare the unreferenced entries (not checked: true only\n\
             # if no build step or test ever reads them):\n\
             # [[boundary]]\n# paths = [{}]\n# why = \"documentation, CI and other files no build step or test reads\"\n",
            globs.join(", ")
        );
    }
    if !referenced.is_empty() {
        let _ = writeln!(
            t,
            "# Referenced top-level entries (never skipped or declared):"
        );
        for (n, d, why) in &referenced {
            let _ = writeln!(t, "#   {n}{}: {why}", if *d { "/" } else { "" });
        }
        let _ = writeln!(t);
    }
}

/// The source tree's top-level entries, then, for a project in a
/// subdirectory of its repository, those of each directory up to the
/// repository's top (`../web`), except the one holding the project: (shown
/// path, is a directory).
fn top_level_entries(model: &crate::ingest::file_api::Codemodel) -> Vec<(String, bool)> {
    let src = model.source_root.as_str();
    let mut levels: Vec<(String, Option<String>)> = vec![(src.to_owned(), None)];
    let mut below = src.to_owned();
    while let Some((up, _)) = below.rsplit_once('/') {
        if up.is_empty() || !paths::is_within(up, model.scope_root()) {
            break;
        }
        levels.push((up.to_owned(), Some(below.clone())));
        below = up.to_owned();
    }
    let mut entries: Vec<(String, bool)> = Vec::new();
    for (dir, skip) in &levels {
        let mut here: Vec<(String, bool)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let is_dir = e.file_type().ok()?.is_dir();
                Some((name, is_dir))
            })
            .filter(|(n, _)| n != ".git" && n != "diff2test.toml")
            .filter(|(n, _)| skip.as_deref() != Some(format!("{dir}/{n}").as_str()))
            .map(|(n, d)| (model.display_path(&format!("{dir}/{n}")), d))
            .collect();
        here.sort();
        entries.extend(here);
    }
    entries
}

/// Section 2: tests the evidence cannot map.
fn unmapped_section(i: &Input<'_, '_, '_>, scanned: &Scanned, out: &mut Text) {
    let Text { t, tables } = out;
    let model = i.graph.model();
    let src = model.source_root.as_str();
    let rel = |p: &str| paths::relative_to(p, src);
    // 2. Tests the evidence cannot map.
    let mut scannable = Vec::new();
    let mut computed = Vec::new();
    let mut named_but_computed = Vec::new();
    let mut other = Vec::new();
    for ((test, m), (found, abs_files)) in i.catalogue.tests.iter().zip(i.mappings).zip(scanned) {
        let TestMapping::Unmapped(gap) = m else {
            continue;
        };
        if gap.code != Code::TestCommandUnmapped {
            other.push((test.name.clone(), gap.code.as_str()));
            continue;
        }
        let files: Vec<String> = abs_files.iter().map(|f| rel(f)).collect();
        if files.is_empty() {
            other.push((test.name.clone(), gap.code.as_str()));
        } else if found.is_empty() {
            computed.push((test.name.clone(), files));
        } else if crate::declare::runs_a_computed_name(i.lookup, test, abs_files) {
            // The scan refuses it; a rule that takes what it names may not.
            let names: Vec<&str> = found
                .iter()
                .map(|&t| model.targets[t].name.as_str())
                .collect();
            named_but_computed.push((test.name.clone(), files, names.join(", ")));
        } else {
            let names: Vec<&str> = found
                .iter()
                .map(|&t| model.targets[t].name.as_str())
                .collect();
            scannable.push((test.name.clone(), files, names.join(", ")));
        }
    }
    let _ = writeln!(
        t,
        "# --- Tests the evidence cannot map -------------------------------------------------"
    );
    if scannable.is_empty() && computed.is_empty() && other.is_empty() {
        let _ = writeln!(t, "#   (none: every test runs a target's artifact)\n");
    }
    if !scannable.is_empty() {
        let _ = writeln!(
            t,
            "# These run source-tree scripts that name what they run; the scan would map each to those\n\
             # targets. An assumption: the scripts run only what they name (a program found by a\n\
             # computed name, or by another program, is missed). With --record, each test is mapped\n\
             # by what it ran and read:"
        );
        for (n, files, targets) in &scannable {
            let _ = writeln!(t, "#   {n}: {} -> {targets}", files.join(", "));
        }
        let _ = writeln!(t, "# scripts = \"scan\"\n");
    }
    if !named_but_computed.is_empty() {
        let _ = writeln!(
            t,
            "# These run scripts that also compute a name (the scan maps nothing for them); what they\n\
             # and their command lines name is listed. If that is all they run, the rule below says so:"
        );
        for (n, files, targets) in &named_but_computed {
            let _ = writeln!(t, "#   {n}: {} -> {targets}", files.join(", "));
        }
        let tests: Vec<String> = named_but_computed.iter().map(|(n, _, _)| q(n)).collect();
        let _ = writeln!(
            t,
            "# (see the [[script]] rule with targets_from_script below)\n"
        );
        let _ = writeln!(
            tables,
            "# For the scripts that also compute a name (review: true only if they run nothing else):\n\
             # [[script]]\n# tests = [{}]\n# targets_from_script = true\n# why = \"each script runs only what it and its command line name\"\n",
            tests.join(", ")
        );
    }
    if !computed.is_empty() {
        // A template is suggested only where it names a target for every such test.
        let templated = computed
            .iter()
            .all(|(n, _)| model.targets.iter().any(|t| &t.name == n));
        let _ = writeln!(
            t,
            "# These run scripts that name no artifact (they compute what they run): declare it{}",
            if templated {
                ".\n# A template names the target like the test: targets = [\"{test}\"]."
            } else {
                "\n# with a [[script]] rule: tests = [...], targets = [the targets each runs], why = \"...\"."
            }
        );
        let tests: Vec<String> = computed.iter().map(|(n, _)| q(n)).collect();
        for (n, files) in &computed {
            let _ = writeln!(t, "#   {n}: {}", files.join(", "));
        }
        if templated {
            let _ = writeln!(t, "# (see the [[script]] rule below)\n");
            let _ = writeln!(
                tables,
                "# For the scripts that compute what they run (review the targets):\n\
                 # [[script]]\n# tests = [{}]\n# targets = [\"{{test}}\"]\n# why = \"each script runs the program of its test's name\"\n",
                tests.join(", ")
            );
        } else {
            let _ = writeln!(t);
        }
    }
    if !other.is_empty() {
        let _ = writeln!(
            t,
            "# These cannot be mapped for another reason (see the reason on a selection run):"
        );
        for (n, code) in &other {
            let _ = writeln!(t, "#   {n}: {code}");
        }
        let _ = writeln!(
            t,
            "# opaque = \"select\"   # runs just those tests instead of the whole suite\n"
        );
    }
}

/// Section 3: source-tree files tests name (data); returns the tests that name the
/// whole source tree.
fn data_section<'a>(i: &Input<'a, '_, '_>, out: &mut Text) -> Vec<&'a str> {
    let Text { t, tables } = out;
    let model = i.graph.model();
    let src = model.source_root.as_str();
    let rel = |p: &str| paths::relative_to(p, src);
    // 3. Source-tree files tests name (data); a directory (xz's tests get
    // `srcdir=SRC/tests`) is shown with its `/` and ruled over as `DIR/**`.
    let mut named: Vec<&str> = Vec::new();
    let mut always: Vec<&str> = Vec::new();
    for (test, r) in i.catalogue.tests.iter().zip(i.reaches) {
        for p in &r.source {
            if p == src {
                always.push(&test.name);
            } else {
                named.push(p);
            }
        }
    }
    // Each path once, however many tests name it.
    named.sort_unstable();
    named.dedup();
    let mut data: Vec<String> = Vec::new();
    for p in named {
        let evidence = i.deps.id_of(p).is_some()
            || model
                .cmake_inputs
                .as_ref()
                .is_some_and(|c| c.binary_search_by(|x| x.as_str().cmp(p)).is_ok())
            || !i.custom.readers_of(p, model).is_empty();
        if !evidence {
            let dir = std::path::Path::new(p).is_dir();
            data.push(format!("{}{}", rel(p), if dir { "/" } else { "" }));
        }
    }
    data.sort();
    data.dedup();
    let _ = writeln!(
        t,
        "# --- Source-tree files tests name -------------------------------------------------"
    );
    if data.is_empty() {
        let _ = writeln!(t, "#   (none)\n");
    } else {
        let _ = writeln!(
            t,
            "# A change to one selects the tests that name it, but also costs the whole suite unless\n\
             # a data rule says who else reads it (not checked: list the tests that read it by a\n\
             # name they compute):"
        );
        for d in &data {
            let _ = writeln!(t, "#   {d}");
        }
        let mut dirs: Vec<String> = data
            .iter()
            .map(|d| match d.strip_suffix('/') {
                Some(dir) => format!("{dir}/**"),
                None => match d.rsplit_once('/') {
                    Some((dir, _)) => format!("{dir}/**"),
                    None => d.clone(),
                },
            })
            .collect();
        dirs.sort();
        dirs.dedup();
        let globs: Vec<String> = dirs.iter().map(|d| q(d)).collect();
        let _ = writeln!(t, "# (see the [[data]] rule below)\n");
        let _ = writeln!(
            tables,
            "# For the files tests name (review: list the tests that read them by computed names):\n\
             # [[data]]\n# paths = [{}]\n# why = \"test data, read only by the tests that name it\"\n",
            globs.join(", ")
        );
    }

    always
}

/// Section 3b: files beside a test's script named after the test.
fn named_after_section(i: &Input<'_, '_, '_>, scanned: &Scanned, out: &mut Text) {
    let Text { t, tables } = out;
    let model = i.graph.model();
    let src = model.source_root.as_str();
    let rel = |p: &str| paths::relative_to(p, src);
    // 3b. Files beside a test's script named after the test (a script
    // that reads `tests/NAME.expected` by a name it computes).
    let mut by_pattern: std::collections::BTreeMap<String, Vec<(String, String)>> =
        Default::default();
    let mut listed: crate::fasthash::FastMap<String, Vec<String>> = Default::default();
    // A test's own scripts are its texts, never data another test is named
    // for (libpng's `tests/pngtest-png-3.cmake` beside `tests/pngtest.cmake`).
    let scripts: std::collections::HashSet<&str> = scanned
        .iter()
        .flat_map(|(_, files)| files.iter().map(String::as_str))
        .collect();
    for (test, (_, files)) in i.catalogue.tests.iter().zip(scanned) {
        for f in files {
            let Some((dir, script)) = f.rsplit_once('/') else {
                continue;
            };
            // A script configure wrote into the build tree (libpng's
            // `BUILD/tests/NAME.cmake`): no change set holds what lies beside it.
            if !model.is_project_file(dir) {
                continue;
            }
            let names = listed.entry(dir.to_owned()).or_insert_with(|| {
                let mut v: Vec<String> = std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect();
                v.sort();
                v
            });
            for n in names.iter() {
                let abs = format!("{dir}/{n}");
                let Some((_, ext)) = n.rsplit_once('.') else {
                    continue;
                };
                if n == script
                    || !n.starts_with(test.name.as_str())
                    || i.deps.id_of(&abs).is_some()
                    || scripts.contains(abs.as_str())
                {
                    continue;
                }
                let pattern = format!("{}/{{test}}*.{ext}", rel(dir));
                let e = by_pattern.entry(pattern).or_default();
                if !e.iter().any(|(t, _)| *t == test.name) {
                    e.push((test.name.clone(), n.clone()));
                }
            }
        }
    }
    by_pattern.retain(|_, v| v.len() >= 2);
    if !by_pattern.is_empty() {
        let _ = writeln!(
            t,
            "# --- Files named after the tests whose scripts they lie beside ---------------------\n\
             # A script that reads them by a name it computes from its test's references its whole\n\
             # directory, so a change to one costs the whole suite unless a data rule says which\n\
             # test reads it (not checked: see the [[data]] rule below):"
        );
        for (pat, v) in &by_pattern {
            let _ = writeln!(
                t,
                "#   {pat}: beside the scripts of {} tests (e.g. {} of {})",
                v.len(),
                v[0].1,
                v[0].0
            );
        }
        let _ = writeln!(t);
        let globs: Vec<String> = by_pattern.keys().map(|p| q(p)).collect();
        let _ = writeln!(
            tables,
            "# For files a test's script finds by its test's name (review: true only if each is read\n\
             # by the test it is named after):\n\
             # [[data]]\n# paths = [{}]\n# why = \"each test's script reads the files named after its test\"\n",
            globs.join(", ")
        );
    }
}

/// Section 4: always-run candidates.
fn always_run_section(mut always: Vec<&str>, out: &mut Text) {
    let Text { t, tables } = out;
    // 4. Always-run candidates.
    always.sort_unstable();
    always.dedup();
    let _ = writeln!(
        t,
        "# --- Always-run candidates ----------------------------------------------------------"
    );
    if always.is_empty() {
        let _ = writeln!(t, "#   (none: no test names the whole source tree)\n");
    } else {
        let names: Vec<String> = always.iter().map(|n| q(n)).collect();
        let _ = writeln!(t, "# These name the source root: any changed path selects them (see [always_run] below).\n");
        let _ = writeln!(
            tables,
            "# Tests that name the whole source tree:\n# [always_run]\n# tests = [{}]\n",
            names.join(", ")
        );
    }
}

/// Section 5: CMake edits.
fn cmake_section(out: &mut Text) {
    let t = &mut out.t;
    // 5. CMake edits.
    let _ = writeln!(
        t,
        "# --- CMake edits ------------------------------------------------------------------------\n\
         # A CMakeLists.txt edit costs the whole suite. Keep the base branch's `diff2test snapshot`\n\
         # and pass it as --base-snapshot to compare build descriptions instead.\n"
    );
}

/// The first name at or below `abs` (the entry itself, then every file and
/// directory below it, in name order; the build tree left out) that a CMake
/// input, or a file one names, holds as a word: `unreferenced_paths` keeps
/// every changed path whose file name or directory's name is such a word, so
/// an entry is unreferenced only when no name below it is (mbedtls's
/// top-level CMakeLists.txt runs `scripts/config.py` with `execute_process`).
fn word_below(i: &Input<'_, '_, '_>, abs: &str) -> Option<String> {
    let name = abs.rsplit('/').next().unwrap_or(abs);
    let is_file = std::fs::metadata(abs).is_ok_and(|m| m.is_file());
    if i.configure.holds_word(name) {
        return Some(if is_file {
            format!("a CMake input holds its file name {name:?}")
        } else {
            format!("a CMake input (or a file it names) holds its name {name:?}")
        });
    }
    if is_file {
        return None;
    }
    let build = &i.graph.model().build_root;
    let walk = walkdir::WalkDir::new(abs)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !paths::is_within(&e.path().to_string_lossy(), build));
    walk.filter_map(Result::ok).find_map(|e| {
        let n = e.file_name().to_str()?;
        i.configure.holds_word(n).then(|| {
            let src = &i.graph.model().source_root;
            format!(
                "a CMake input (or a file it names) holds {n:?}, the name of {}",
                paths::relative_to(&e.path().to_string_lossy(), src)
            )
        })
    })
}

/// What references `abs` (a top-level entry of the source tree), if anything.
fn reference(i: &Input<'_, '_, '_>, holdings: &Holdings, abs: &str) -> Option<String> {
    let model = i.graph.model();
    let within = |p: &str| p == abs || paths::is_within(p, abs);
    // The smallest such file: the table's order is the reading threads' (not stable).
    if let Some(f) = (i.deps.files.iter())
        .filter(|f| within(f) && i.deps.id_of(f).is_some())
        .min()
    {
        return Some(format!("dependency evidence ({})", model.display_path(f)));
    }
    if let Some(f) = model.cmake_inputs.iter().flatten().find(|f| within(f)) {
        return Some(format!("a CMake input ({})", model.display_path(f)));
    }
    for c in &i.custom.commands {
        if c.files.iter().any(|f| within(f))
            || c.dirs.iter().any(|d| within(d) || paths::is_within(abs, d))
        {
            return Some("read by a custom command".into());
        }
    }
    for (test, r) in i.catalogue.tests.iter().zip(i.reaches) {
        if r.source
            .iter()
            .any(|p| within(p) || paths::is_within(abs, p))
        {
            return Some(format!("named by test {:?}", test.name));
        }
    }
    // As `unreferenced_paths` decides a changed file, path by path: its file
    // name, or the name of a directory holding it, as a word of a CMake input.
    word_below(i, abs).or_else(|| holdings.holding_name(abs, &model.build_root))
}
