//! The texts of a test's closure: the compile definitions (`defines`, and
//! `-D` in compile fragments) of every target its programs are built from,
//! and the contents of every build-tree header (configured or generated) a
//! unit of theirs includes. A program carries what they name.

use super::channel::{Channel, Joined, TestCx};
use super::lookup::Lookup;
use super::named::Named;
use crate::fasthash::FastMap;
use crate::ingest::depfile::DepEvidence;
use crate::ingest::file_api::Codemodel;
use crate::paths;
use crate::reason::{Code, Gap};

/// The closure-texts channel. What each target's texts and headers name is
/// computed once per run, for every target, when the channel is made.
pub(super) struct ClosureTexts {
    /// Per target: what its definitions and build-tree headers name.
    named: Vec<Named>,
    /// Per target: whether it is, or depends on, a target whose texts name
    /// anything (only a test reaching one needs the rounds).
    reaches_source: Vec<bool>,
}

impl ClosureTexts {
    /// Reads and scans every target's texts; `max_bytes` bounds each header.
    pub(super) fn new(
        lookup: &Lookup<'_, '_>,
        deps: &DepEvidence,
        max_bytes: u64,
        gaps: &mut Vec<Gap>,
    ) -> Self {
        let model = lookup.model;
        let headers_of = build_tree_headers(model, deps);
        // What each header names, computed once.
        let mut header_named: FastMap<u32, Named> = FastMap::default();
        let named: Vec<Named> = (0..model.targets.len())
            .map(|t| {
                let mut n = Named::default();
                // Relative paths in definitions and headers are relative to each
                // test's working directory at run time, not to anything here: only
                // absolute paths and file names count (SAFETY-CONTRACT §9).
                for text in target_texts(model, t) {
                    lookup.scan_text(text, None, false, &mut n);
                }
                for &h in &headers_of[t] {
                    let hn = header_named.entry(h).or_insert_with(|| {
                        let mut hn = Named::default();
                        let path = &deps.files[h as usize];
                        match crate::ingest::read_capped(path, max_bytes) {
                            Ok(bytes) => {
                                let text = String::from_utf8_lossy(&bytes);
                                lookup.scan_text(&text, None, false, &mut hn);
                            }
                            Err(e) => gaps.push(Gap::new(
                                Code::DepPrereqUninspectable,
                                format!(
                                    "build-tree header {path} cannot be read to see what it names: {e}"
                                ),
                            )),
                        }
                        hn
                    });
                    n.absorb(hn);
                }
                n
            })
            .collect();
        // The targets whose own texts or headers name anything, and every target
        // that depends on one: only a test reaching one of those needs the
        // rounds (one reverse walk instead of one closure per test).
        let sources: Vec<usize> = (0..model.targets.len())
            .filter(|&t| {
                let n = &named[t];
                !(n.targets.is_empty()
                    && n.source.is_empty()
                    && n.configured.is_empty()
                    && n.unknown.is_empty())
            })
            .collect();
        let reaches_source = (lookup.graph.reverse_bfs(&sources).iter())
            .map(Option::is_some)
            .collect();
        ClosureTexts {
            named,
            reaches_source,
        }
    }
}

impl Channel for ClosureTexts {
    fn of_round(
        &mut self,
        _cx: &TestCx<'_, '_, '_>,
        joined: &Joined<'_>,
        out: &mut Named,
        _gaps: &mut Vec<Gap>,
    ) {
        for &t in joined.closure {
            out.absorb(&self.named[t]);
        }
    }

    fn may_grow(&self, direct: &[usize]) -> bool {
        direct.iter().any(|&d| self.reaches_source[d])
    }
}

/// Per target: the build-tree files its units include (sorted, each once).
fn build_tree_headers(model: &Codemodel, deps: &DepEvidence) -> Vec<Vec<u32>> {
    let build = &model.build_root;
    let src = &model.source_root;
    let mut headers_of: Vec<Vec<u32>> = vec![Vec::new(); model.targets.len()];
    // Decided once per file, not once per listing.
    let git = format!("{src}/.git");
    let in_build: Vec<bool> = deps
        .files
        .iter()
        // In-source builds: the build tree lies inside the source tree.
        .map(|f| paths::is_within(f, build) && !paths::is_within(f, &git))
        .collect();
    let any_in_build = in_build.contains(&true);
    for tu in deps.tus.iter().filter(|_| any_in_build) {
        for &p in &tu.prereqs {
            if in_build.get(p as usize) == Some(&true) {
                headers_of[tu.target].push(p);
            }
        }
    }
    for h in &mut headers_of {
        h.sort_unstable();
        h.dedup();
    }
    headers_of
}

/// The texts of a target that its programs receive: compile definitions,
/// and `-D` definitions written as compile fragments.
fn target_texts(model: &Codemodel, t: usize) -> Vec<&str> {
    let target = &model.targets[t];
    let mut v: Vec<&str> = target.defines.iter().map(String::as_str).collect();
    for f in &target.flags {
        let mut words = f.split_ascii_whitespace();
        while let Some(w) = words.next() {
            if w == "-D" {
                v.extend(words.next());
            } else if let Some(d) = w.strip_prefix("-D") {
                v.push(d);
            }
        }
    }
    v
}
