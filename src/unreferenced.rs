//! `unreferenced_paths = "skip"`: a changed path that no evidence knows (not
//! dependency evidence, not a CMake input, not read by a custom command) is
//! skipped, under a printed and recorded assumption, only when nothing in the
//! evidence references it:
//! - no test's texts (command, environment, working directory aside, named
//!   files, the scripts it runs, configure-written files it names) name it
//!   or a directory holding it;
//! - no script a test runs finds files relative to itself (`$(dirname "$0")`,
//!   `${BASH_SOURCE%/*}`, `os.path.dirname(__file__)`, `CMAKE_CURRENT_LIST_DIR`,
//!   …) from a directory holding it;
//! - no binary a test runs or loads holds its file name, or a source path
//!   (`__FILE__`) whose directory holds it;
//! - no source-tree CMake input holds its file name as a word (what
//!   configure reads with `file()` is build configuration already, and a
//!   configure-time copy a test names is one of its texts).
//!
//! Anything else keeps `CHANGE_UNKNOWN`, with the referencing evidence named.

use crate::changes::{Changed, Class};
use crate::declare::Use;
use crate::fasthash::FastSet;
use crate::graph::{Graph, TestMapping};
use crate::ingest::ctest::Catalogue;
use crate::paths;
use crate::policy::{Declared, Policy, UnreferencedMode};
use crate::reach::{Holdings, TestReach};
use crate::reason::{Code, Gap};

/// The assumption, as printed and recorded.
pub const WHY: &str = "unreferenced_paths = \"skip\": a changed path that no test text, script, binary, CMake input or custom command references is read by no build step and no test";

/// Idioms by which a script finds files relative to itself.
const SELF_LOCATING: &[&str] = &[
    "dirname \"$0\"",
    "dirname $0",
    "dirname -- \"$0\"",
    "${0%/*}",
    "BASH_SOURCE",
    "dirname(__file__)",
    "Path(__file__)",
    "__file__",
    "CMAKE_CURRENT_LIST_DIR",
    "CMAKE_CURRENT_LIST_FILE",
    "FindBin",
    "$Bin",
    "__dir__",
    "__FILE__",
];

/// Applies the mode to `changed`; returns the uses of the assumption and
/// the gaps that forbid applying it at all (an unreadable binary).
#[allow(clippy::too_many_arguments)]
pub fn apply(
    changed: &mut [Changed],
    policy: &Policy,
    graph: &Graph<'_>,
    catalogue: &Catalogue,
    mappings: &[TestMapping],
    reaches: &[TestReach],
    configure: &crate::ingest::configure_reads::ConfigureReads,
    max_bytes: u64,
) -> (Vec<Use>, Vec<Gap>) {
    let open = |c: &Changed| {
        c.class == Class::Unresolved
            && !c.abs.is_empty()
            && c.gap
                .as_ref()
                .is_some_and(|g| g.code == Code::ChangeUnknown)
    };
    if policy.unreferenced_paths != UnreferencedMode::Skip || !changed.iter().any(open) {
        return (Vec::new(), Vec::new());
    }
    let model = graph.model();
    let holdings = Holdings::scan(graph, mappings, max_bytes);
    if !holdings.gaps.is_empty() {
        return (Vec::new(), holdings.gaps);
    }
    // Every source-tree file a test names, read once.
    let named = files_named(reaches, max_bytes);
    let mut script_dirs: Vec<(String, String)> = Vec::new(); // (dir, script)
    for (s, bytes) in &named {
        if let Some(ups) = self_locating(bytes) {
            // From its directory, as far up as its relative paths climb
            // (`"$(dirname "$0")/../../testdata"`).
            let mut dir = s.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
            for _ in 0..ups {
                match dir.rsplit_once('/') {
                    Some((up, _)) if !up.is_empty() => dir = up.to_owned(),
                    _ => break,
                }
            }
            script_dirs.push((dir, s.clone()));
        }
    }
    // The plain-text ones (UTF-8, no NUL byte): scripts, manifests, lists.
    let named_texts: Vec<(&String, &str)> = (named.iter())
        .filter_map(|(s, b)| Some((s, std::str::from_utf8(b).ok()?)))
        .filter(|(_, t)| !t.contains('\0'))
        .collect();
    let mut uses = Vec::new();
    for c in changed.iter_mut().filter(|c| open(c)) {
        let rel = paths::relative_to(&c.abs, &model.source_root);
        let by_text = catalogue.tests.iter().zip(reaches).find_map(|(t, r)| {
            crate::select::names_changed(r, c).map(|why| format!("test {:?} {why}", t.name))
        });
        let by_script = || {
            script_dirs
                .iter()
                .find(|(d, _)| paths::is_within(&c.abs, d))
                .map(|(_, s)| {
                    format!(
                        "{} finds files relative to itself, from a directory holding it",
                        paths::relative_to(s, &model.source_root)
                    )
                })
        };
        let by_binary = || holdings.referencing(&c.abs, &model.build_root, &model.source_root);
        // Its file name, or the name of a directory holding it (a POST_BUILD
        // `copy_directory` of `data/`), as a word of a CMake input or of a
        // file one names (the script an execute_process runs).
        let by_cmake = || {
            let in_scope = paths::relative_to(&c.abs, model.scope_root());
            let name = in_scope.rsplit('/').next().unwrap_or(&in_scope);
            if configure.holds_word(name) {
                return Some(format!(
                    "a CMake input holds its file name {name:?} (itself, or a file it names)"
                ));
            }
            let dirs = in_scope.rsplit_once('/').map_or("", |(d, _)| d);
            dirs.split('/')
                .filter(|n| !n.is_empty())
                .find(|n| configure.holds_word(n))
                .map(|n| {
                    format!(
                        "a CMake input (or a file it names) holds {n:?}, a directory holding it"
                    )
                })
        };
        // A plain-text file a test names (a manifest listing its cases
        // relative to itself) holding its file name.
        let by_named_text = || {
            let name = rel.rsplit('/').next().unwrap_or(&rel);
            named_texts
                .iter()
                .find(|(_, text)| text.contains(name))
                .map(|(f, _)| {
                    format!(
                        "{} (a file a test names) holds its file name",
                        paths::relative_to(f, &model.source_root)
                    )
                })
        };
        let referenced = by_text
            .or_else(by_script)
            .or_else(by_binary)
            .or_else(by_cmake)
            .or_else(by_named_text);
        match referenced {
            Some(why) => {
                c.evidence = format!("{}; not skipped by unreferenced_paths: {why}", c.evidence);
                if let Some(g) = &mut c.gap {
                    g.detail = format!("{} (referenced: {why})", g.detail);
                }
            }
            None => {
                let d = Declared {
                    kind: "unreferenced_paths",
                    rule: 1,
                    matched: "skip".into(),
                    why: WHY.into(),
                };
                c.gap = None;
                c.evidence =
                    "no evidence references it: skipped by unreferenced_paths = \"skip\"".into();
                uses.push(Use {
                    declared: d.clone(),
                    subject: c.display.clone(),
                });
                c.declared = Some(d);
            }
        }
    }
    (uses, Vec::new())
}

/// Every regular source-tree file a test names (at most `max_bytes`), with
/// its bytes, each once.
fn files_named(reaches: &[TestReach], max_bytes: u64) -> Vec<(String, Vec<u8>)> {
    let mut seen: FastSet<&str> = FastSet::default();
    let mut out = Vec::new();
    for s in reaches.iter().flat_map(|r| &r.source) {
        if !seen.insert(s.as_str()) {
            continue;
        }
        match std::fs::metadata(s) {
            Ok(m) if m.is_file() && m.len() <= max_bytes => {}
            _ => continue,
        }
        if let Ok(b) = std::fs::read(s) {
            out.push((s.clone(), b));
        }
    }
    out
}

/// When a file holding `b` is a script that finds files relative to itself:
/// how many levels its relative paths climb (the longest run of `../`, plus
/// one per `dirname` or `.parent` beyond the first).
fn self_locating(b: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(b);
    if !SELF_LOCATING.iter().any(|i| text.contains(i)) {
        return None;
    }
    let longest_run = text
        .split(|c: char| !(c == '.' || c == '/'))
        .map(|run| run.matches("../").count() + usize::from(run.ends_with("..")))
        .max()
        .unwrap_or(0);
    let nested =
        text.matches("dirname").count().saturating_sub(1) + text.matches(".parent").count();
    Some(longest_run + nested)
}
