//! Scripts a test names: a source-tree script that a test's texts name (its
//! program is handed `run.sh`, or `sh`-like wrappers run it) is a text of
//! the test too, read as it stands, so what the script names is reached: a
//! `./tool` in it names the artifact file `tool`, whichever directory the
//! script runs it from. A change to the script itself already selects the
//! test (it is a source-tree path the test names).

use super::channel::{Channel, TestCx};
use super::file_texts::FileTexts;
use super::named::Named;
use crate::fasthash::FastSet;
use crate::reason::{Code, Gap};

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
        let mut queue: Vec<String> = out.source.clone();
        let mut seen: FastSet<String> = queue.iter().cloned().collect();
        while let Some(f) = queue.pop() {
            let all = match self.0.named(cx, &f, is_script) {
                None => continue,
                Some(Ok(all)) => all,
                Some(Err(e)) => {
                    gaps.push(Gap::new(
                        Code::DepPrereqUninspectable,
                        format!(
                            "script {f}, which test {:?} names, cannot be read to see what it runs: {e}",
                            cx.test.name
                        ),
                    ));
                    continue;
                }
            };
            for n in all {
                for (t, why) in &n.targets {
                    out.targets
                        .push((*t, format!("names script {f}, which {why}")));
                }
                out.configured.extend(n.configured.iter().cloned());
                out.copies.extend(n.copies.iter().cloned());
                out.unknown.extend(
                    n.unknown
                        .iter()
                        .map(|u| format!("names script {f}, which {u}")),
                );
                for s in &n.source {
                    if seen.insert(s.clone()) {
                        out.source.push(s.clone());
                        queue.push(s.clone());
                    }
                }
            }
        }
    }
}
