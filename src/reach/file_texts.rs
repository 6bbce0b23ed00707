//! Files read as texts of a test (the configure-time files it names, the
//! scripts it runs): each read once per run, and what it names scanned once
//! per directory its relative paths are joined to.

use super::channel::TestCx;
use super::named::Named;
use super::plugins::dir_of;
use crate::fasthash::FastMap;

/// The files of one channel, read and scanned once per run.
#[derive(Default)]
pub(super) struct FileTexts {
    /// File → its text; `None` when the channel does not read it, `Err`
    /// when it cannot be read (the reason).
    texts: FastMap<String, Option<Result<String, String>>>,
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
    ) -> Option<Result<Vec<&Named>, String>> {
        let FileTexts { texts, named } = self;
        let text = texts.entry(f.to_owned()).or_insert_with(|| {
            reads(f).then(|| {
                crate::ingest::read_capped(f, cx.max_bytes)
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .map_err(|e| e.to_string())
            })
        });
        let text = match text.as_ref()? {
            Ok(text) => text,
            Err(e) => return Some(Err(e.clone())),
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
}
