//! Files read as texts of a test (the configure-time files it names, the
//! scripts it runs): each read once per run, and what it names scanned once
//! per directory its relative paths are joined to.

use super::channel::TestCx;
use super::named::Named;
use super::plugins::dir_of;
use crate::fasthash::{FastMap, FastSet};
use crate::reason::{Code, Gap};

/// How a channel follows the files a test names ([`FileTexts::follow`]).
pub(super) struct Follow<'f> {
    /// Whether the channel reads a file.
    pub(super) reads: &'f dyn Fn(&str) -> bool,
    /// What a read file is called in reasons (`"script "` or `""`).
    pub(super) label: &'f str,
    /// What a file that cannot be read was to show (`"what it runs"`).
    pub(super) purpose: &'f str,
    /// The paths that are followed (`source` or `configured`).
    pub(super) followed: fn(&Named) -> &Vec<String>,
    /// The same list, to add to.
    pub(super) followed_mut: fn(&mut Named) -> &mut Vec<String>,
    /// What else of a read file's names joins `out`, besides its targets,
    /// its followed paths and its unknown files.
    pub(super) absorb: fn(&Named, &mut Named),
}

/// Why a file cannot be read (kept once, told for every test that names it).
type Unread = std::rc::Rc<std::io::Error>;

/// The files of one channel, read and scanned once per run.
#[derive(Default)]
pub(super) struct FileTexts {
    /// File → its text; `None` when the channel does not read it, `Err`
    /// when it cannot be read (the reason).
    texts: FastMap<String, Option<Result<String, Unread>>>,
    /// (file, directory its relative paths are joined to) → what it names.
    named: FastMap<(String, Option<String>), Named>,
}

impl FileTexts {
    /// What file `f` names, read (up to `--max-file-bytes`) when `reads(f)`,
    /// with its relative paths joined to its own directory and to each
    /// working directory of the test, one [`Named`] for each. `None` when the
    /// channel does not read it; `Err` with the reason when it cannot be read.
    pub(super) fn named(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        f: &str,
        reads: impl FnOnce(&str) -> bool,
    ) -> Option<Result<Vec<&Named>, Unread>> {
        let FileTexts { texts, named } = self;
        let text = texts.entry(f.to_owned()).or_insert_with(|| {
            reads(f).then(|| {
                crate::ingest::read_capped(f, cx.max_bytes)
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .map_err(std::rc::Rc::new)
            })
        });
        let text = match text.as_ref()? {
            Ok(text) => text,
            Err(e) => return Some(Err(std::rc::Rc::clone(e))),
        };
        let dirs: Vec<Option<String>> = std::iter::once(Some(dir_of(f).to_owned()))
            .chain(cx.wds.iter().cloned())
            .collect();
        for wd in &dirs {
            named.entry((f.to_owned(), wd.clone())).or_insert_with(|| {
                let mut n = Named::default();
                cx.lookup.scan_text(text, wd.as_deref(), false, &mut n);
                n
            });
        }
        Some(Ok(dirs
            .into_iter()
            .map(|wd| &named[&(f.to_owned(), wd)])
            .collect()))
    }

    /// Reads every file of `out`'s followed paths that the channel reads,
    /// and the ones those name in turn, each once: what they name joins
    /// `out` (targets and unknown files as `names LABEL F, which …`). One
    /// that cannot be read, or is larger than `--max-file-bytes`, is a gap.
    pub(super) fn follow(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        how: &Follow<'_>,
        out: &mut Named,
        gaps: &mut Vec<Gap>,
    ) {
        let mut queue: Vec<String> = (how.followed)(out).clone();
        let mut seen: FastSet<String> = queue.iter().cloned().collect();
        let label = how.label;
        while let Some(f) = queue.pop() {
            let all = match self.named(cx, &f, how.reads) {
                None => continue,
                Some(Ok(all)) => all,
                Some(Err(e)) => {
                    gaps.push(Gap::new(
                        Code::DepPrereqUninspectable,
                        format!(
                            "{label}{f}, which test {:?} names, cannot be read to see {}: {e}",
                            cx.test.name, how.purpose
                        ),
                    ));
                    continue;
                }
            };
            for n in all {
                for (t, why) in &n.targets {
                    out.targets
                        .push((*t, format!("names {label}{f}, which {why}")));
                }
                (how.absorb)(n, out);
                out.unknown.extend(
                    n.unknown
                        .iter()
                        .map(|u| format!("names {label}{f}, which {u}")),
                );
                for p in (how.followed)(n) {
                    if seen.insert(p.clone()) {
                        (how.followed_mut)(out).push(p.clone());
                        queue.push(p.clone());
                    }
                }
            }
        }
    }
}
