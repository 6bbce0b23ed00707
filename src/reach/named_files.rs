//! The files a test names: configure- and generate-time build-tree files,
//! read as texts of the test.

use super::channel::{Channel, TestCx};
use super::file_texts::{FileTexts, Follow};
use super::named::Named;
use crate::reason::Gap;

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
        let how = Follow {
            reads: &|f: &str| std::fs::metadata(f).is_ok_and(|m| m.is_file()),
            label: "",
            purpose: "what it names",
            followed: |n| &n.configured,
            followed_mut: |n| &mut n.configured,
            absorb: |n, out| out.source.extend(n.source.iter().cloned()),
        };
        self.0.follow(cx, &how, out, gaps);
    }
}
