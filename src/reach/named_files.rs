//! The files a test names: configure- and generate-time build-tree files,
//! read as texts of the test.

use super::channel::{Channel, TestCx};
use super::file_texts::FileTexts;
use super::named::Named;
use crate::fasthash::FastSet;
use crate::reason::{Code, Gap};

/// The named-files channel: the build-tree files that configure or
/// generate wrote and that a test's texts name (`out.configured`, as the
/// channels before it found them: a list of plugin paths `file(GENERATE)`
/// wrote, a configured settings file its program reads) are texts of the
/// test too, read as they stand now; so are the ones those name. Each file
/// is read and scanned once per run.
#[derive(Default)]
pub(super) struct NamedFiles(FileTexts);

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
        let mut queue: Vec<String> = out.configured.clone();
        let mut seen: FastSet<String> = queue.iter().cloned().collect();
        while let Some(f) = queue.pop() {
            let regular = |f: &str| std::fs::metadata(f).is_ok_and(|m| m.is_file());
            let all = match self.0.named(cx, &f, regular) {
                None => continue,
                Some(Ok(all)) => all,
                Some(Err(e)) => {
                    gaps.push(Gap::new(
                        Code::DepPrereqUninspectable,
                        format!(
                            "{f}, which test {:?} names, cannot be read to see what it names: {e}",
                            cx.test.name
                        ),
                    ));
                    continue;
                }
            };
            for n in all {
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
