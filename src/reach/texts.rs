//! A test's own texts: its command, environment, required files and
//! working directories.

use super::channel::{Channel, TestCx};
use super::named::Named;
use crate::reason::Gap;

/// The texts channel: every element of a test's command, its
/// ENVIRONMENT, ENVIRONMENT_MODIFICATION and REQUIRED_FILES, each relative
/// name joined to each of its working directories; and each working
/// directory itself, which names itself only (a test's default working
/// directory holds much that it does not read).
pub(super) struct Texts;

impl Channel for Texts {
    fn of_test(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        _direct: &[usize],
        out: &mut Named,
        _gaps: &mut Vec<Gap>,
    ) {
        for wd in cx.wds {
            let wd = wd.as_deref();
            let test = cx.test;
            for t in test
                .command
                .iter()
                .flatten()
                .chain(&test.environment)
                .chain(&test.environment_modification)
                .chain(&test.required_files)
            {
                cx.lookup.scan_text(t, wd, false, out);
            }
            if let Some(wd) = wd {
                cx.lookup.scan_text(wd, None, true, out);
            }
        }
    }
}
