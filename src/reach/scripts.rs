//! Scripts a test names: a source-tree script that a test's texts name (its
//! program is handed `run.sh`, or `sh`-like wrappers run it) is a text of
//! the test too, read as it stands, so what the script names is reached: a
//! `./tool` in it names the artifact file `tool`, whichever directory the
//! script runs it from. A change to the script itself already selects the
//! test (it is a source-tree path the test names).

use super::channel::{Channel, TestCx};
use super::file_texts::{FileTexts, Follow};
use super::named::Named;
use crate::reason::Gap;

/// The scripts channel. Each script is read and scanned once per run.
#[derive(Default)]
pub(super) struct Scripts(FileTexts);

/// Names of script files, by extension.
const SCRIPT_EXTENSIONS: &[&str] = &[".sh", ".bash", ".zsh", ".ksh", ".py", ".pl", ".rb", ".tcl"];

/// Whether the regular file `path` is a script: a script extension, or a
/// first line that starts with `#!`.
fn is_script(path: &str) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    if SCRIPT_EXTENSIONS.iter().any(|e| name.ends_with(e)) {
        return true;
    }
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"#!")
}

impl Channel for Scripts {
    /// The source-tree files the channels before it found that are scripts
    /// (and the scripts those name). Relative paths in one are joined to its
    /// own directory and to each working directory of the test. One that
    /// cannot be read, or is larger than `--max-file-bytes`, is a gap.
    fn of_test(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        _direct: &[usize],
        out: &mut Named,
        gaps: &mut Vec<Gap>,
    ) {
        let how = Follow {
            reads: &is_script,
            label: "script ",
            purpose: "what it runs",
            followed: |n| &n.source,
            followed_mut: |n| &mut n.source,
            absorb: |n, out| {
                out.configured.extend(n.configured.iter().cloned());
                out.copies.extend(n.copies.iter().cloned());
            },
        };
        self.0.follow(cx, &how, out, gaps);
    }
}
