//! Plugins beside a test's programs: a plugin loader looks in its working
//! directory, beside `/proc/self/exe` and in subdirectories of those (Qt's
//! library paths start with the application's own directory), so every
//! plugin below a test's working directory or below the directory of a
//! program it runs is reached without a name.

use super::channel::{Channel, Joined, TestCx};
use super::named::Named;
use super::plugins::program_dirs;
use crate::fasthash::FastSet;
use crate::ingest::file_api::TargetKind;
use crate::paths;
use crate::reason::Gap;

/// The plugins-beside channel; `looked` holds the directories already done
/// for the current test.
#[derive(Default)]
pub(super) struct Beside {
    looked: FastSet<String>,
}

impl Beside {
    /// Adds to `out` every plugin ([`super::plugins::plugin_like`]) below a
    /// directory a test's programs may look in without naming it: each of
    /// its working directories `wds`, and the directory of every program
    /// among `direct`.
    fn add(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        direct: &[usize],
        wds: &[Option<String>],
        out: &mut Named,
    ) {
        let lookup = cx.lookup;
        let looked = &mut self.looked;
        let mut add = |dir: &str, whose: &str, out: &mut Named| {
            if looked.insert(dir.to_owned()) {
                for (o, a) in lookup.modules_under(dir) {
                    let kind = match lookup.model.targets[o].kind {
                        TargetKind::ModuleLibrary => "MODULE library",
                        _ => "SHARED library that no target links",
                    };
                    out.targets
                        .push((o, format!("may load {kind} {a}, below {whose}")));
                }
            }
        };
        for wd in wds.iter().flatten() {
            let wd = paths::fold(wd);
            add(&wd, &format!("its working directory {wd}"), out);
        }
        for &t in direct {
            for (a, dir) in program_dirs(&lookup.model.targets[t]) {
                add(dir, &format!("the directory of its program {a}"), out);
            }
        }
    }
}

impl Channel for Beside {
    fn of_test(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        direct: &[usize],
        out: &mut Named,
        _gaps: &mut Vec<Gap>,
    ) {
        self.looked.clear();
        self.add(cx, direct, cx.wds, out);
    }

    fn of_round(
        &mut self,
        cx: &TestCx<'_, '_, '_>,
        joined: &Joined<'_>,
        out: &mut Named,
        _gaps: &mut Vec<Gap>,
    ) {
        self.add(cx, joined.direct, &[], out);
    }
}
