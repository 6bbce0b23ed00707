//! Policy declarations applied to the evidence: what the user
//! declares to gain precision, checked against what the evidence shows.
//!
//! * `[[script]]`: a test whose command runs a script or interpreter
//!   (`TEST_COMMAND_UNMAPPED`) is mapped to the targets the rule names and/or
//!   the targets whose artifacts the script files mention (read, never run);
//!   the script files become that test's own: a change to one selects it.
//! * `[[boundary]]`: an unknown or deleted changed path under a boundary does
//!   not cost the subset. A boundary that covers dependency evidence, a CMake
//!   input, an external resource, a file named on a command line or a path a
//!   test names is a configuration error (`USAGE_ERROR`): the declaration is
//!   false.
//! * `[[data]]`: an unknown or deleted changed path under a data rule does not
//!   cost the subset; the tests that name it (evidence), and the tests and
//!   labels the rule lists, are selected.
//!
//! Besides declarations, one piece of *evidence* lives here: a changed file
//! that a target's compile or link command names verbatim (a linker or
//! version script, a `-include` file, a response file) is dependency evidence
//! for that target. It needs no policy.
//!
//! Every declaration a decision rests on is recorded in
//! [`crate::changes::Changed::declared`] or returned as a [`Use`], so that
//! stderr and the plan can name it.

use crate::changes::{Changed, Class};
use crate::decide::{select_code, Forced};
use crate::graph::TestMapping;
use crate::ingest::ctest::Catalogue;
use crate::ingest::file_api::Codemodel;
use crate::paths;
use crate::policy::{Declared, Policy};
use crate::reach::{Lookup, TestReach};
use crate::reason::Code;
use crate::request::UsageError;

/// One use of a declaration, for stderr and the plan.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Use {
    /// The declaration.
    pub declared: Declared,
    /// What it was applied to (a changed path or a test name), in words.
    pub subject: String,
}

/// Whether a script builds a name from a variable joined to literal name
/// characters (`calc-$1`, `tool_${n}`, `${X}_test`, `"prog-" + x`,
/// `f"prog-{x}"`): a program (or file) it runs by a name no text holds.
/// A file that is not text may be a program (an executable, compiled
/// Python, an archive an interpreter runs) and counts as computing one,
/// unless its first bytes are an image format's signature: an image is
/// decoded, never run (libpng's test scripts name the PNGs they hand the
/// program they run).
pub fn computes_a_name(path: &str) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return true; // unreadable: nothing says it does not
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => return !is_image(e.as_bytes()),
    };
    let b = text.as_bytes();
    let name = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    for i in 1..b.len() {
        let joined = (b[i] == b'$' && name(b[i - 1]) && b[i - 1] != b'.')
            || (b[i - 1] == b'}' && name(b[i]) && b[i] != b'.');
        if joined {
            return true;
        }
    }
    // Python and CMake string building: a literal ending in `-`/`_` joined to a value.
    text.contains("-\" +") || text.contains("_\" +") || text.contains("-{") || text.contains("_{")
}

/// Whether `head` begins with the signature of an image format (PNG, JPEG,
/// GIF, TIFF, WebP): data that no interpreter runs.
fn is_image(head: &[u8]) -> bool {
    head.starts_with(b"\x89PNG\r\n\x1a\n")
        || head.starts_with(b"\xff\xd8\xff")
        || head.starts_with(b"GIF87a")
        || head.starts_with(b"GIF89a")
        || head.starts_with(b"II*\0")
        || head.starts_with(b"MM\0*")
        || (head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP")
}

/// Whether a script among `files` that `test` runs (not a data file its
/// command line passes, such as a text to compress) computes a name.
pub fn runs_a_computed_name(
    lookup: &Lookup<'_, '_>,
    test: &crate::ingest::ctest::Test,
    files: &[String],
) -> bool {
    let data = lookup.command_data_files(test);
    files
        .iter()
        .filter(|f| data.binary_search(f).is_err())
        .any(|f| computes_a_name(f))
}

/// The assumption `scripts = "scan"` rests on.
pub const SCAN_WHY: &str = "scripts = \"scan\": the scripts run only what they name";

/// Maps scripted tests by their `[[script]]` rule (target names may be
/// templates: `{test}` is the test's name), and with `scripts = "scan"` a
/// test that runs a source-tree script no rule covers, to the targets whose
/// artifacts its scripts name (none named: it stays unmapped). Returns the uses, and
/// per test the script files (absolute, folded) it runs. An unknown target
/// name in a rule is a usage error.
pub fn map_scripts(
    policy: &Policy,
    lookup: &Lookup<'_, '_>,
    model: &Codemodel,
    catalogue: &Catalogue,
    mappings: &mut [TestMapping],
) -> Result<(Vec<Use>, Vec<Vec<String>>), UsageError> {
    let mut uses = Vec::new();
    let mut scripts = vec![Vec::new(); catalogue.tests.len()];
    let scan = policy.scripts_mode == crate::policy::ScriptsMode::Scan;
    if policy.scripts.is_empty() && !scan {
        return Ok((uses, scripts));
    }
    for (ri, rule) in policy.scripts.iter().enumerate() {
        // A template ("{test}") names a target per test: checked per test.
        for t in rule.targets.iter().filter(|t| !t.contains("{test}")) {
            if !model.targets.iter().any(|m| &m.name == t) {
                return Err(UsageError(format!(
                    "policy [[script]] {} names target {t:?}, which is not in the codemodel",
                    ri + 1
                )));
            }
        }
    }
    for (i, (test, m)) in catalogue.tests.iter().zip(mappings.iter_mut()).enumerate() {
        let TestMapping::Unmapped(gap) = m else {
            continue;
        };
        if gap.code != Code::TestCommandUnmapped {
            continue;
        }
        let (declared, mut direct, from_script) = match policy.script_for(&test.name) {
            Some((ri, declared)) => {
                let rule = &policy.scripts[ri];
                let direct: Vec<usize> = rule
                    .targets
                    .iter()
                    .map(|n| n.replace("{test}", &test.name))
                    .filter_map(|n| model.targets.iter().position(|t| t.name == n))
                    .collect();
                (declared, direct, rule.targets_from_script)
            }
            None if scan => (
                crate::policy::Declared {
                    kind: "scripts",
                    rule: 1,
                    matched: "scan".into(),
                    why: SCAN_WHY.into(),
                },
                Vec::new(),
                true,
            ),
            None => continue,
        };
        let (found, files) = lookup.script_targets(test);
        if scan && declared.kind == "scripts" && files.is_empty() {
            continue; // it runs no source-tree script: not a scripted test
        }
        if declared.kind == "scripts" && runs_a_computed_name(lookup, test, &files) {
            // It also runs what it computes (`"$dir/calc-$1"`): the scan cannot
            // say what that is, so it maps nothing (a [[script]] rule may).
            continue;
        }
        if from_script {
            direct.extend(found);
        }
        direct.sort_unstable();
        direct.dedup();
        if direct.is_empty() {
            continue; // nothing to map it to: it stays unmapped
        }
        let names: Vec<&str> = direct
            .iter()
            .map(|&t| model.targets[t].name.as_str())
            .collect();
        uses.push(Use {
            declared,
            subject: format!(
                "test {:?} runs targets {} and scripts {}",
                test.name,
                names.join(", "),
                if files.is_empty() {
                    "(none found)".to_owned()
                } else {
                    files.join(", ")
                }
            ),
        });
        scripts[i] = files;
        *m = TestMapping::Mapped { direct };
    }
    Ok((uses, scripts))
}

/// What [`apply`] decided.
#[derive(Debug, Default)]
pub struct Applied {
    /// Tests selected by data rules and script files.
    pub forced: Vec<Forced>,
    /// The declarations used.
    pub uses: Vec<Use>,
    /// `POLICY_BOUNDARY_CONTRADICTED`: a changed path under a boundary the
    /// evidence contradicts (the boundary is not applied to it).
    pub gaps: Vec<crate::reason::Gap>,
    /// A boundary the evidence contradicts that no changed path falls
    /// under: said, and not applied.
    pub notes: Vec<String>,
}

/// Applies command-line evidence, boundaries, data rules and script files
/// to the classified changed paths. A boundary that a piece of evidence
/// contradicts (it covers a CMake input, a path a test names, or a changed
/// path that is evidence) is not applied: a changed path under it keeps
/// its own reasons and adds `POLICY_BOUNDARY_CONTRADICTED` naming the rule
/// (the policy loaded; what the evidence says now cannot make it a usage
/// error on a later change).
#[allow(clippy::too_many_arguments)]
pub fn apply(
    changed: &mut [Changed],
    policy: &Policy,
    model: &Codemodel,
    catalogue: &Catalogue,
    reaches: &[TestReach],
    scripts: &[Vec<String>],
) -> Applied {
    let mut out = Applied::default();
    let rel = |p: &str| {
        if paths::is_within(p, &model.build_root) {
            paths::relative_to(p, &model.source_root)
        } else {
            model.display_path(p)
        }
    };
    let contradicted = contradicted_boundaries(policy, model, catalogue, reaches, scripts, &rel);
    let mut under_contradicted = vec![false; policy.boundaries.len()];
    // Files named on compile and link commands.
    let mut by_cmdline: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, t) in model.targets.iter().enumerate() {
        for f in &t.cmdline_files {
            by_cmdline.entry(f.as_str()).or_default().push(i);
        }
    }
    let open = |c: &Changed| {
        c.class == Class::Unresolved
            && c.gap
                .as_ref()
                .is_some_and(|g| matches!(g.code, Code::ChangeUnknown | Code::ChangeDeleted))
    };
    for c in changed.iter_mut() {
        if c.abs.is_empty() {
            continue;
        }
        if c.gap
            .as_ref()
            .is_some_and(|g| g.code == Code::ChangeUnknown)
        {
            if let Some(ts) = by_cmdline.get(c.abs.as_str()) {
                let names: Vec<&str> = ts.iter().map(|&t| model.targets[t].name.as_str()).collect();
                c.gap = None;
                c.class = Class::Header;
                c.evidence = format!(
                    "named verbatim on the compile or link command of target {}",
                    names.join(", ")
                );
                c.cmdline_targets = ts.clone();
            }
        }
        let spellings: Vec<&str> = std::iter::once(c.display.as_str())
            .chain(c.real_display.as_deref())
            .collect();
        if let Some(d) = policy.boundary_for(spellings.iter().copied()) {
            let contradiction = match c.class {
                Class::Source | Class::Header => Some("dependency evidence"),
                Class::BuildConfig => Some("a CMake input"),
                Class::External => Some("an external resource"),
                Class::Unresolved => None,
            }
            .map(str::to_owned)
            .or_else(|| {
                catalogue.tests.iter().zip(reaches).find_map(|(t, r)| {
                    r.source
                        .iter()
                        .any(|n| *n == c.abs || paths::is_within(&c.abs, n))
                        .then(|| format!("a path test {:?} names", t.name))
                })
            });
            let why = contradiction
                .map(|what| format!("{}, which is {what}", c.display))
                .or_else(|| contradicted[d.rule - 1].clone());
            if let Some(why) = why {
                under_contradicted[d.rule - 1] = true;
                out.gaps.push(crate::reason::Gap::new(
                    Code::PolicyBoundaryContradicted,
                    format!(
                        "{}: policy [[boundary]] {} ({:?}) is not applied: it covers {why}; a boundary may only name paths no build step or test reads",
                        c.display, d.rule, d.matched
                    ),
                ));
                continue;
            }
            if open(c) {
                c.gap = None;
                c.evidence = format!(
                    "{}; under declared boundary {} ({:?}): {}",
                    c.evidence, d.rule, d.matched, d.why
                );
                out.uses.push(Use {
                    declared: d.clone(),
                    subject: c.display.clone(),
                });
                c.declared = Some(d);
                continue;
            }
        }
        if !open(c) {
            continue;
        }
        if apply_script(c, scripts, catalogue, policy, &mut out) {
            continue;
        }
        apply_data(c, catalogue, policy, &mut out);
    }
    out.uses.sort();
    out.uses.dedup();
    for (i, why) in contradicted.iter().enumerate() {
        if let (Some(why), false) = (why, under_contradicted[i]) {
            out.notes.push(format!(
                "POLICY_BOUNDARY_CONTRADICTED: policy [[boundary]] {} covers {why}: it is not applied (no changed path falls under it)",
                i + 1
            ));
        }
    }
    out
}

/// A changed script file of a scripted test (declared by a `[[script]]`
/// rule): its tests are selected and the path is decided. Returns whether it
/// was one.
fn apply_script(
    c: &mut Changed,
    scripts: &[Vec<String>],
    catalogue: &Catalogue,
    policy: &Policy,
    out: &mut Applied,
) -> bool {
    // A script file of a scripted test: that test's own.
    let runners: Vec<usize> = scripts
        .iter()
        .enumerate()
        .filter(|(_, files)| files.contains(&c.abs))
        .map(|(i, _)| i)
        .collect();
    if !runners.is_empty() {
        for &i in &runners {
            out.forced.push(Forced {
                test: catalogue.tests[i].name.clone(),
                code: select_code::DECLARED_SCRIPT,
                detail: format!(
                    "runs changed script {} (declared by a [[script]] rule)",
                    c.display
                ),
            });
        }
        let d = policy
            .script_for(&catalogue.tests[runners[0]].name)
            .map(|(_, d)| d);
        c.gap = None;
        c.evidence = format!("{}; the script of a declared scripted test", c.evidence);
        if let Some(d) = d {
            out.uses.push(Use {
                declared: d.clone(),
                subject: c.display.clone(),
            });
            c.declared = Some(d);
        }
        return true;
    }
    false
}

/// A changed path under a `[[data]]` rule: the tests the rule lists (by
/// name, label or the `{test}` template) are selected and the path is decided.
fn apply_data(c: &mut Changed, catalogue: &Catalogue, policy: &Policy, out: &mut Applied) {
    let spellings: Vec<&str> = std::iter::once(c.display.as_str())
        .chain(c.real_display.as_deref())
        .collect();
    if let Some((di, d)) = policy.data_for(spellings.iter().copied()) {
        let rule = &policy.data[di];
        let named = policy.data_template_tests(
            di,
            spellings.iter().copied(),
            catalogue.tests.iter().map(|t| t.name.as_str()),
        );
        for t in &catalogue.tests {
            let by_name = rule
                .tests
                .iter()
                .find(|g| crate::policy::name_match(g, &t.name));
            let by_label = rule.labels.iter().find(|l| t.labels.contains(l));
            let by_template = named.contains(&t.name.as_str());
            if let Some(why) = by_name
                .map(|g| format!("test-name pattern {g:?}"))
                .or(by_label.map(|l| format!("label {l:?}")))
                .or(by_template.then(|| "the {test} template of its path".to_owned()))
            {
                out.forced.push(Forced {
                    test: t.name.clone(),
                    code: select_code::DECLARED_DATA,
                    detail: format!(
                        "changed data {} falls under [[data]] {} ({:?}), which lists it by {why}",
                        c.display, d.rule, d.matched
                    ),
                });
            }
        }
        c.gap = None;
        c.evidence = format!(
            "{}; under declared data rule {} ({:?}): read only by the tests that name it{}: {}",
            c.evidence,
            d.rule,
            d.matched,
            if rule.tests.is_empty() && rule.labels.is_empty() {
                ""
            } else {
                " and the tests it lists"
            },
            d.why
        );
        out.uses.push(Use {
            declared: d.clone(),
            subject: c.display.clone(),
        });
        c.declared = Some(d);
    }
}

/// For each boundary, what the evidence shows it covers that a build step
/// or a test reads (a CMake input, a path a test names or runs), if any.
fn contradicted_boundaries(
    policy: &Policy,
    model: &Codemodel,
    catalogue: &Catalogue,
    reaches: &[TestReach],
    scripts: &[Vec<String>],
    rel: &dyn Fn(&str) -> String,
) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for b in &policy.boundaries {
        let covers = |p: &str| b.paths.iter().find(|g| crate::policy::glob_match(g, p));
        let input = (model.cmake_inputs.iter().flatten())
            .filter(|i| paths::is_within(i, model.scope_root()))
            .find_map(|i| {
                covers(&rel(i)).map(|g| format!("{} ({g:?}), which is a CMake input", rel(i)))
            });
        let named = || {
            catalogue.tests.iter().zip(reaches).find_map(|(test, r)| {
                r.source
                    .iter()
                    .chain(scripts.iter().flatten())
                    .find_map(|n| {
                        let rn = rel(n);
                        // The source root itself: checked per changed path.
                        (!rn.is_empty())
                            .then(|| covers(&rn))
                            .flatten()
                            .map(|g| format!("{rn} ({g:?}), which test {:?} names", test.name))
                    })
            })
        };
        out.push(input.or_else(named));
    }
    out
}

/// The declaration that would have avoided a fallback reason, when one
/// would (`--explain-changes` and plans): `(code, declaration hint)`.
pub fn hint(g: &crate::reason::Gap) -> Option<String> {
    let subject = g.detail.split(": ").next().unwrap_or(&g.detail);
    match g.code {
        Code::ChangeUnknown if g.detail.contains("(referenced: ") => Some(format!(
            "{subject} is in no dependency evidence and is referenced (see the reason): declare a [[data]] rule if only the tests that name it (or tests you list) read it"
        )),
        Code::ChangeUnknown => Some(format!(
            "{subject} is in no dependency evidence: pass --record with a record of the base's test run (`diff2test record`: a path no test read is skipped from evidence); or declare a [[boundary]] if no build step or test reads it, or a [[data]] rule if only the tests that name it (or tests you list) read it; or set unreferenced_paths = \"skip\" to skip such paths whenever no text names them (an assumption: a computed name is missed)"
        )),
        Code::ChangeDeleted => Some(format!(
            "{subject} is in no dependency evidence: declare a [[boundary]] if no build step or test reads it, or a [[data]] rule if only the tests that name it (or tests you list) read it"
        )),
        Code::TestCommandUnmapped => Some(format!(
            "{subject}: pass --record with a record of the base's test run (`diff2test record`: the test is mapped by what it ran and read); or set scripts = \"scan\" to map a test whose script names what it runs (an assumption: a computed name is missed), or declare a [[script]] rule (tests = [name glob], targets = [...], a template such as targets = [\"{{test}}\"], or targets_from_script = true) if you know what the script runs"
        )),
        Code::ChangeBuildConfig => Some(format!(
            "{subject}: pass the base commit's `diff2test snapshot` as --base-snapshot to decide CMake edits by build-description fingerprints"
        )),
        _ => None,
    }
}

/// `build_config = "compare"`: every changed CMake script is decided by the
/// per-test build-description fingerprints instead of costing the whole
/// suite. Clears their gaps and returns the declarations used.
pub fn compare_mode(changed: &mut [Changed]) -> Vec<Use> {
    let why = "build_config = \"compare\": a CMake edit changes a test only through its build description (catalogue entry, closure targets' descriptions, configured headers, toolchain); files configure writes that no unit includes and no test names, and install rules are assumed unchanged (custom commands are part of the description of the target they belong to)";
    let mut uses = Vec::new();
    for c in changed {
        let script = c.class == crate::changes::Class::BuildConfig
            && (c.display.ends_with("CMakeLists.txt") || c.display.ends_with(".cmake"));
        // A project file configure reads: what it changes reaches tests
        // through configured files, which the snapshots compare.
        let read = c.read_by_configure.is_some()
            && c.gap
                .as_ref()
                .is_some_and(|g| g.code == Code::ChangeBuildConfig);
        let script = script || read;
        if script {
            c.gap = None;
            let d = Declared {
                kind: "build_config",
                rule: 1,
                matched: "compare".into(),
                why: why.into(),
            };
            uses.push(Use {
                declared: d.clone(),
                subject: c.display.clone(),
            });
            c.evidence = format!("{}; compared by build-description fingerprints", c.evidence);
            c.declared = Some(d);
        }
    }
    uses
}

#[cfg(test)]
mod tests {
    use super::computes_a_name;

    /// `(bytes, computes a name)`: an image is data; any other file that is
    /// not text may be a program; text is read for joined names.
    #[test]
    fn only_an_image_among_files_that_are_not_text_computes_no_name() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&[u8], bool); 9] = [
            (b"\x89PNG\r\n\x1a\n\x00\xff", false),
            (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", false),
            (b"GIF89a\x01\x00\xff", false),
            (b"II*\x00\x08\x00\xff", false),
            (b"RIFF\x10\x00\x00\x00WEBPVP8 \xff", false),
            (b"\x7fELF\x02\x01\x01\x00\xff", true),
            (b"PK\x03\x04\x14\x00\xff", true),
            (b"\x89PNX\r\n\x1a\n\xff", true),
            (b"./tool_${n}\n", true),
        ];
        for (i, (bytes, computes)) in cases.iter().enumerate() {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, bytes).unwrap();
            assert_eq!(
                computes_a_name(p.to_str().unwrap()),
                *computes,
                "case {i}: {bytes:?}"
            );
        }
        let plain = dir.path().join("plain.sh");
        std::fs::write(&plain, "./tool --check\n").unwrap();
        assert!(!computes_a_name(plain.to_str().unwrap()));
        assert!(computes_a_name(dir.path().join("absent").to_str().unwrap()));
    }
}
