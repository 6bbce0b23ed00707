//! The files a test names: configure- and generate-time build-tree files,
//! read as texts of the test.

use super::channel::{Channel, TestCx};
use super::named::Named;
use super::plugins::dir_of;
use crate::fasthash::{FastMap, FastSet};
use crate::reason::{Code, Gap};

/// The named-files channel: the build-tree files that configure or
/// generate wrote and that a test's texts name (`out.configured`, as the
/// channels before it found them: a list of plugin paths `file(GENERATE)`
/// wrote, a configured settings file its program reads) are texts of the
/// test too, read as they stand now; so are the ones those name. Each file
/// is read and scanned once per run.
#[derive(Default)]
pub(super) struct NamedFiles {
    /// File → its text; `None` when it is no regular file, `Err` when it
    /// cannot be read (the reason).
    texts: FastMap<String, Option<Result<String, String>>>,
    /// (file, directory its relative paths are joined to) → what it names.
    named: FastMap<(String, Option<String>), Named>,
}

impl Channel for NamedFiles {
    /// Relative paths in a named file are joined to its own directory and
    /// to each working directory of the test. One that cannot be read, or
    /// is larger than `--max-file-bytes`, is a gap.
    fn of_test(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        _direct: &[usize],
        out: &mut Named,
        gaps: &mut Vec<Gap>,
    ) {
        let (lookup, test, wds, max_bytes, cache) =
            (cx.lookup, cx.test, cx.wds, cx.max_bytes, self);
        let mut queue: Vec<String> = out.configured.clone();
        let mut seen: FastSet<String> = queue.iter().cloned().collect();
        while let Some(f) = queue.pop() {
            let text = cache.texts.entry(f.clone()).or_insert_with(|| {
                std::fs::metadata(&f).is_ok_and(|m| m.is_file()).then(|| {
                    crate::ingest::read_capped(&f, max_bytes)
                        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                        .map_err(|e| e.to_string())
                })
            });
            let text = match text {
                None => continue,
                Some(Ok(text)) => text,
                Some(Err(e)) => {
                    gaps.push(Gap::new(
                        Code::DepPrereqUninspectable,
                        format!(
                            "{f}, which test {:?} names, cannot be read to see what it names: {e}",
                            test.name
                        ),
                    ));
                    continue;
                }
            };
            let own_dir = dir_of(&f).to_owned();
            for wd in std::iter::once(Some(own_dir)).chain(wds.iter().cloned()) {
                let n = cache
                    .named
                    .entry((f.clone(), wd.clone()))
                    .or_insert_with(|| {
                        let mut n = Named::default();
                        lookup.scan_text(text, wd.as_deref(), false, &mut n);
                        n
                    });
                for (t, why) in &n.targets {
                    out.targets.push((*t, format!("names {f}, which {why}")));
                }
                out.source.extend(n.source.iter().cloned());
                out.unknown
                    .extend(n.unknown.iter().map(|u| format!("names {f}, which {u}")));
                for c in &n.configured {
                    if seen.insert(c.clone()) {
                        out.configured.push(c.clone());
                        queue.push(c.clone());
                    }
                }
            }
        }
    }
}
