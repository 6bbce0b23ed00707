//! Mapping: each parsed depfile to exactly one (target, source) unit.

use super::super::evidence::FileId;
use super::super::file_api::Codemodel;
use std::time::SystemTime;

use crate::fasthash::FastMap;
use crate::paths;
use crate::reason::{Code, Gap};

/// What one `.d` says, read before its owner target is known.
pub(super) struct Parsed {
    /// (device, inode) of the depfile, to catch one file listed under two spellings.
    pub(super) identity: (u64, u64),
    /// Targets of the first rule with prerequisites.
    pub(super) main_targets: Vec<String>,
    /// First prerequisite of that rule.
    pub(super) first: Option<String>,
    /// When the first prerequisite does not end with the object's stem
    /// ([`object_stem`]): the later ones that do, as written (usually one:
    /// Clang lists a precompiled header's inputs before the main source).
    pub(super) stem_matches: Vec<String>,
    pub(super) rules_with_prereqs: usize,
    pub(super) too_long: bool,
    pub(super) table_full: bool,
    /// The directory relative prerequisites were resolved against, when there were any.
    pub(super) relative_to: Option<String>,
    /// Provisional ids of its project prerequisites, each once, in first-listed order.
    pub(super) prereqs: Vec<FileId>,
    /// Those not older than the depfile, or without a timestamp, in order.
    pub(super) aged: Vec<Aged>,
    /// Whether its main rule lists a prerequisite outside both roots.
    pub(super) lists_outside: bool,
    /// When the depfile was written (the unit was compiled).
    pub(super) mtime: SystemTime,
}

pub(super) struct LocalUnit {
    pub(super) target: usize,
    /// Index of the main source in the target's compiled sources.
    pub(super) source_index: usize,
    pub(super) source: String,
    /// (device, inode) of the depfile, to catch one file listed under two spellings.
    pub(super) identity: (u64, u64),
    /// Provisional ids, each once, in first-listed order.
    pub(super) prereqs: Vec<FileId>,
    /// Prerequisites newer than the depfile or without a timestamp, in order.
    pub(super) aged: Vec<Aged>,
    /// Whether the depfile lists a prerequisite outside both roots.
    pub(super) lists_outside: bool,
    /// When the depfile was written.
    pub(super) mtime: std::time::SystemTime,
}

/// The unit depfile `d` (owned by `target`) describes, from its parse `p`:
/// the mapping checks ([`check_unit`]) and the freshness of its prerequisites.
pub(super) fn unit_of(
    d: &str,
    model: &Codemodel,
    target: usize,
    max_path: usize,
    p: Parsed,
    sources: &FastMap<(usize, &str), usize>,
) -> Result<LocalUnit, Gap> {
    let (source_index, source) = check_unit(d, model, target, max_path, &p, sources)?;
    Ok(LocalUnit {
        target,
        source_index,
        source,
        identity: p.identity,
        prereqs: p.prereqs,
        aged: p.aged,
        lists_outside: p.lists_outside,
        mtime: p.mtime,
    })
}

/// A prerequisite whose timestamp does not show the depfile is fresh.
#[derive(Clone, Copy)]
pub(super) enum Aged {
    /// Modified after the depfile was written.
    Newer(FileId),
    /// No timestamp could be read.
    Unknown(FileId),
}

/// The mapping checks after a clean parse, first failure wins: exactly one
/// rule with prerequisites; one target, its own object; first prerequisite a
/// compiled source of the owner (or else exactly one later prerequisite that
/// is, named by the object's path: [`main_by_stem`]); no prerequisite path
/// over `--max-path-len`.
/// Returns the unit's main source.
pub(super) fn check_unit(
    depfile: &str,
    model: &Codemodel,
    target: usize,
    max_path: usize,
    sink: &Parsed,
    sources: &FastMap<(usize, &str), usize>,
) -> Result<(usize, String), Gap> {
    let t = &model.targets[target];
    if sink.rules_with_prereqs > 1 {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!("{depfile}: more than one rule with prerequisites"),
        ));
    }
    let Some(first) = &sink.first else {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!("{depfile}: no rule with prerequisites"),
        ));
    };
    if sink.main_targets.len() != 1 {
        return Err(Gap::new(
            Code::DepFileMalformed,
            format!(
                "{depfile}: main rule has {} targets",
                sink.main_targets.len()
            ),
        ));
    }
    // The -MT target is the object path relative to the build root; it must be this depfile's object.
    let expected = depfile.strip_suffix(".d").unwrap_or(depfile);
    if !paths::joins_to(&model.build_root, &sink.main_targets[0], expected) {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: rule target {:?} is not its own object {expected}",
                sink.main_targets[0]
            ),
        ));
    }
    let first = paths::join_fold_cow(&t.dir_build, first);
    let main = sources.get(&(target, first.as_ref())).copied().or_else(|| {
        main_by_stem(
            sink.stem_matches
                .iter()
                .map(|m| paths::join_fold_cow(&t.dir_build, m)),
            |p| sources.get(&(target, p)).copied(),
        )
    });
    let Some(src) = main else {
        return Err(Gap::new(
            Code::DepFileUnmapped,
            format!(
                "{depfile}: main source {first} is not a compiled source of target {:?}{}",
                t.name,
                leftover_hint(&first, "delete it and its object, or build afresh")
            ),
        ));
    };
    if sink.too_long {
        return Err(Gap::new(
            Code::LimitExceeded,
            format!(
                "{depfile}: a prerequisite path exceeds {} bytes (--max-path-len)",
                max_path
            ),
        ));
    }
    if sink.table_full {
        return Err(Gap::new(
            Code::LimitExceeded,
            format!("{depfile}: more distinct project files than this tool can number"),
        ));
    }
    Ok((src, t.compiled[src].path.clone()))
}

/// The main source of a unit whose first prerequisite is none of its
/// target's compiled sources, from the later prerequisites that end with the
/// object's stem (`candidates`, absolute folded): the one compiled source of
/// the target among them (`lookup` gives its index), when there is exactly
/// one. Clang lists the inputs of a precompiled header (the forced include
/// `cmake_pch.hxx`, `cmake_pch.hxx.cxx`, the headers) before the unit's own
/// source; the object path CMake derives from that source (`core.cpp.o` for
/// `core.cpp`, `sub/a.cpp.o` for `sub/a.cpp`) says which of the listed
/// sources it is. Two candidates (a source including another one of the same
/// relative path), or none (an `OBJECT_NAME` rename), leave the unit unmapped.
pub(crate) fn main_by_stem<P: AsRef<str>>(
    candidates: impl Iterator<Item = P>,
    lookup: impl Fn(&str) -> Option<usize>,
) -> Option<usize> {
    let mut found = None;
    for c in candidates {
        if let Some(i) = lookup(c.as_ref()) {
            if found.is_some_and(|f| f != i) {
                return None;
            }
            found = Some(i);
        }
    }
    found
}

/// Every compiled source of the codemodel by (target, path), for the check
/// that a depfile's first prerequisite is a compiled source of its owner.
/// Built apart so it can be built while the depfiles are still being read.
pub struct SourceIndex<'m>(pub(super) FastMap<(usize, &'m str), usize>);

impl<'m> SourceIndex<'m> {
    /// Indexes every compiled source of `model`.
    pub fn new(model: &'m Codemodel) -> Self {
        let mut sources = FastMap::default();
        for (ti, t) in model.targets.iter().enumerate() {
            for (ci, c) in t.compiled.iter().enumerate() {
                sources.entry((ti, c.path.as_str())).or_insert(ci);
            }
        }
        SourceIndex(sources)
    }

    /// The index in `target`'s compiled sources of its first source spelled `path`.
    pub fn get(&self, target: usize, path: &str) -> Option<usize> {
        self.0.get(&(target, path)).copied()
    }
}

/// The codemodel and its source index, for mapping depfiles to units.
#[derive(Clone, Copy)]
pub(super) struct Mapper<'m> {
    pub(super) model: &'m Codemodel,
    pub(super) sources: &'m SourceIndex<'m>,
    pub(super) max_path: usize,
}

/// What the codemodel says of one depfile read.
pub(super) enum Mapped {
    Unmapped(Gap),
    /// Its relative prerequisites were resolved against a wrong guess of its
    /// directory: to be read again against its owner's (`target`).
    Again(usize),
    Done(Result<LocalUnit, Gap>),
}

impl Mapper<'_> {
    /// Maps depfile `d` (read as `result`; `None`: never read) to its owner
    /// target and checks it ([`unit_of`]).
    pub(super) fn map(&self, d: &str, result: Option<Result<Parsed, Gap>>) -> Mapped {
        let model = self.model;
        let target = match model.object_owner(d) {
            Ok(t) => t,
            Err(why) => {
                if std::fs::symlink_metadata(d).is_err() {
                    return Mapped::Unmapped(Gap::new(
                        Code::DepFileUnreadable,
                        format!(
                            "{d} does not exist (relative dep-list entries are relative to BUILD)"
                        ),
                    ));
                }
                return Mapped::Unmapped(Gap::new(Code::DepFileUnmapped, format!("{d} {why}")));
            }
        };
        let t = &model.targets[target];
        match result {
            Some(Ok(p))
                if p.relative_to
                    .as_ref()
                    .is_some_and(|dir| *dir != t.dir_build) =>
            {
                Mapped::Again(target)
            }
            Some(Ok(p)) => {
                Mapped::Done(unit_of(d, model, target, self.max_path, p, &self.sources.0))
            }
            Some(Err(g)) => Mapped::Done(Err(g)),
            // Every entry is read; were one not, it would be missing evidence, never empty.
            None => Mapped::Done(Err(Gap::new(
                Code::DepFileUnreadable,
                format!("{d}: not read"),
            ))),
        }
    }
}

/// For a dependency record whose main source the target no longer compiles:
/// when that source no longer exists either, the record is a leftover of an
/// earlier build of a renamed or deleted source (a build directory kept
/// between commits keeps them), and the message says how to clear it. It is
/// still unmappable evidence: the run falls back.
pub(crate) fn leftover_hint(source: &str, remedy: &str) -> String {
    if std::fs::symlink_metadata(source).is_ok() {
        String::new()
    } else {
        format!(
            " (it no longer exists: a leftover of an earlier build of a renamed or deleted source; {remedy})"
        )
    }
}
