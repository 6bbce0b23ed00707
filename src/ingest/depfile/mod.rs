//! Compiler dependency files from `--dep-list`: mapping, completeness and freshness.
//!
//! Invariant: when [`load`] returns no gaps, every compiled C/C++ translation
//! unit (target, source) of the codemodel has exactly one `.d` file, each `.d`
//! maps to exactly one such unit through the Unix Makefiles layout
//! `<dir_build>/CMakeFiles/<target>.dir/…` and its first prerequisite, its rule
//! target is its own object file, and no project prerequisite it lists is newer
//! than it (contract §7-8). Missing evidence is never read as "no dependencies".
//!
//! Paths in a Makefiles depfile are as the compiler opened them, relative to
//! the directory the compiler ran in (`<dir_build>`); they are joined and folded
//! lexically (symlinks kept, as CMake keeps them). Only prerequisites inside the
//! source or build root are project prerequisites; system headers are ignored.

use super::file_api::Codemodel;
use super::Reader;
use crate::reason::{Code, Gap};

pub use super::aliases::join_outside_aliases;
pub use super::coverage::{
    coverage_gaps, language_supported, scan_assembler_includes, system_headers_gaps,
};
pub use super::evidence::{DepEvidence, FileId, Tu};

mod audit;
mod map;
/// The Ninja deps log (`.ninja_deps`): the dependency evidence of a Ninja
/// build, merged into the units as a depfile's is.
pub(in crate::ingest) mod ninja_units;
mod objects;
mod read;
pub(crate) mod source;
mod stat;
pub use map::SourceIndex;
use map::*;
use read::*;
use source::{fold_all, DepSource, DepfileUnits, FoldCx};
use stat::FileStat;

/// Reads `--dep-list`, maps and audits every listed `.d`. Returns the evidence
/// (possibly partial, for explanations) and every gap found.
pub fn load(reader: &Reader, dep_list: &str, model: &Codemodel) -> (DepEvidence, Vec<Gap>) {
    let roots = (model.source_root.as_str(), model.build_root.as_str());
    let job = ReadJob::new(reader, dep_list, roots);
    job.read_all()
        .finish(reader, model, &SourceIndex::new(model))
}

/// Reading every depfile of the list, shared by any number of threads: each
/// calls [`ReadJob::work`] and takes blocks of depfiles until none is left,
/// so the thread that loads the codemodel joins in once it is done. Paths are
/// resolved against the roots given on the command line and each depfile's
/// directory as its path shows it; everything that needs the codemodel waits
/// for [`Pending::finish`].
pub struct ReadJob<'r> {
    reader: &'r Reader,
    dep_list: String,
    /// The roots prerequisites are resolved against (`--source-dir`, `--build-dir`).
    source_root: String,
    build_root: String,
    /// The root of the project's files ([`Codemodel::scope_root`]: the
    /// repository holding the source root, or the source root itself):
    /// prerequisites below it or the build root are kept, others are
    /// outside (system headers).
    scope_root: String,
    /// Read by the first thread that needs it.
    list: std::sync::OnceLock<DepList>,
    /// Next entry to take.
    next: std::sync::atomic::AtomicUsize,
    shared: SharedFiles,
    /// The codemodel, once [`ReadJob::publish`]ed: from then on each worker
    /// maps what it reads to its unit as it goes.
    mapper: std::sync::OnceLock<Mapper<'r>>,
    /// Ninja builds: each output's command hash, in the manifest now and in
    /// `.ninja_log` (read once, by whichever thread asks first).
    commands: std::sync::OnceLock<super::ninja_log::Commands>,
}

impl<'r> ReadJob<'r> {
    /// A job for `dep_list`, resolving against `roots` (source, build).
    pub fn new(
        reader: &'r Reader,
        dep_list: &str,
        (source_root, build_root): (&str, &str),
    ) -> Self {
        ReadJob {
            reader,
            dep_list: dep_list.to_owned(),
            source_root: source_root.to_owned(),
            build_root: build_root.to_owned(),
            scope_root: crate::paths::repo_root_above(source_root)
                .unwrap_or_else(|| source_root.to_owned()),
            list: std::sync::OnceLock::new(),
            next: std::sync::atomic::AtomicUsize::new(0),
            shared: SharedFiles::new(),
            mapper: std::sync::OnceLock::new(),
            commands: std::sync::OnceLock::new(),
        }
    }

    /// The command hashes of a Ninja build (`ninja_log::read_commands`), read
    /// now: the thread that loaded the codemodel calls this while the deps log
    /// is still being read, so the manifest costs no time of its own.
    pub fn ninja_commands(&self, model: &Codemodel) -> &super::ninja_log::Commands {
        self.commands
            .get_or_init(|| super::ninja_log::read_commands(self.reader, model))
    }

    /// The command hashes of a Ninja build, read by another thread from what
    /// the File API's index and codemodel named (the same manifest
    /// [`ReadJob::ninja_commands`] would read).
    pub fn give_ninja_commands(&self, commands: super::ninja_log::Commands) {
        let _ = self.commands.set(commands);
    }

    /// Hands the codemodel to the workers, so that they map depfiles to units
    /// while the rest is read (only when its roots are the ones the depfiles
    /// are read against; [`Pending::finish`] maps whatever is left).
    pub fn publish(&self, model: &'r Codemodel, sources: &'r SourceIndex<'r>) {
        if model.source_root == self.source_root && model.build_root == self.build_root {
            let _ = self.mapper.set(Mapper {
                model,
                sources,
                max_path: self.reader.limits().max_path_len,
            });
        }
    }

    fn list(&self) -> &DepList {
        self.list
            .get_or_init(|| read_list(self.reader, &self.dep_list, &self.build_root))
    }

    /// Reads depfiles until none is left; returns what this thread read.
    pub fn work(&self) -> Worker {
        const BLOCK: usize = 8;
        let mut w = Worker::default();
        let list = self.list();
        if list.failed {
            return w;
        }
        let scope = Scope::new(&self.scope_root, &self.build_root);
        loop {
            let start = self
                .next
                .fetch_add(BLOCK, std::sync::atomic::Ordering::Relaxed);
            let Some(block) = list
                .entries
                .get(start..(start + BLOCK).min(list.entries.len()))
            else {
                break;
            };
            if block.is_empty() {
                break;
            }
            for (k, d) in block.iter().enumerate() {
                let parsed = read_one(self.reader, d, scope, guessed_dir(d), &self.shared, &mut w);
                // `None`: a ninja deps log, prepared into `w.logs` and merged in `finish`.
                match parsed.transpose() {
                    Some(parsed) => w.results.push((start + k, parsed)),
                    None => w.log_entries.push(start + k),
                }
            }
            if let Some(m) = self.mapper.get() {
                for (i, r) in w.results.drain(..) {
                    w.mapped.push((i, m.map(&list.entries[i], Some(r))));
                }
            }
        }
        w
    }

    /// Reads everything on all cores.
    pub fn read_all(&self) -> Pending<'_, 'r> {
        let workers = std::thread::scope(|s| {
            let helpers: Vec<_> = (1..super::threads())
                .map(|_| s.spawn(|| self.work()))
                .collect();
            self.work_and_join(helpers)
        });
        self.pending(workers)
    }

    /// Reads on this thread too until nothing is left, then waits for the
    /// `helpers` (threads running [`ReadJob::work`]); a helper's panic is
    /// raised here. Returns every thread's worker.
    pub fn work_and_join(
        &self,
        helpers: Vec<std::thread::ScopedJoinHandle<'_, Worker>>,
    ) -> Vec<Worker> {
        let mut workers = vec![self.work()];
        for h in helpers {
            match h.join() {
                Ok(w) => workers.push(w),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        workers
    }

    /// What `workers` (every thread that called [`ReadJob::work`], once all
    /// of them returned) read, by entry.
    pub fn pending(&self, workers: Vec<Worker>) -> Pending<'_, 'r> {
        let list = self.list();
        let mut p = Pending {
            job: self,
            results: std::iter::repeat_with(|| Slot::Unread)
                .take(list.entries.len())
                .collect(),
            created: Vec::new(),
            logs: Vec::new(),
        };
        for w in workers {
            // The entry a deps log was read from holds no depfile.
            for &i in &w.log_entries {
                if let Some(slot) = p.results.get_mut(i) {
                    *slot = Slot::Log;
                }
            }
            p.logs.extend(w.logs);
            for (i, r) in w.results {
                if let Some(slot) = p.results.get_mut(i) {
                    *slot = Slot::Read(r);
                }
            }
            for (i, m) in w.mapped {
                if let Some(slot) = p.results.get_mut(i) {
                    *slot = Slot::Mapped(m);
                }
            }
            p.created.extend(w.created);
        }
        p
    }
}

/// Depfiles read and parsed, some of them mapped.
pub struct Pending<'j, 'r> {
    job: &'j ReadJob<'r>,
    /// By entry index.
    results: Vec<Slot>,
    created: Vec<(FileId, u64, FileStat)>,
    /// Ninja deps logs met among the entries.
    logs: Vec<ninja_units::Prepared>,
}

/// What became of one entry of the list.
enum Slot {
    Unread,
    /// A Ninja deps log: a source of its own ([`DepSource`]).
    Log,
    Read(Result<Parsed, Gap>),
    Mapped(Mapped),
}

impl Pending<'_, '_> {
    /// Maps every depfile read to its owner target and audits the whole
    /// evidence against `model` (coverage excepted: see [`coverage_gaps`]).
    /// When the codemodel's roots are not the ones the depfiles were read
    /// against, they are all read again against the codemodel's.
    pub fn finish(
        self,
        reader: &Reader,
        model: &Codemodel,
        sources: &SourceIndex<'_>,
    ) -> (DepEvidence, Vec<Gap>) {
        let job = self.job;
        if job.source_root != model.source_root || job.build_root != model.build_root {
            return load(reader, &job.dep_list, model);
        }
        let mut ev = DepEvidence::default();
        let list = job.list();
        let mut gaps = list.gaps.clone();
        let no_log_gap = || deps_log_missing(&job.dep_list, model);
        let ninja = model.is_ninja();
        // CMake before 3.20 has its Makefiles generator scan dependencies
        // itself (depend.make): the compilers write no depfile to read.
        let makefiles = model.generator.ends_with("Makefiles");
        if let Some((major, minor)) = model.cmake_version.filter(|&v| makefiles && v < (3, 20)) {
            return (
                ev,
                vec![Gap::new(
                    Code::DepListUnreadable,
                    format!(
                        "the build was configured by CMake {major}.{minor} with the {:?} generator, which writes no compiler dependency files (CMake 3.20 and later do): configure with CMake >= 3.20, or with -G Ninja",
                        model.generator
                    ),
                )],
            );
        }
        if list.failed {
            if ninja {
                gaps.push(no_log_gap());
            }
            return (ev, gaps);
        }
        let entries = &list.entries;
        let shared = &job.shared;
        let scope = Scope::new(model.scope_root(), &model.build_root);
        let max_path = reader.limits().max_path_len;
        // Map and check every depfile not mapped yet (all of them, unless the
        // codemodel was published while they were read), on all cores; only a
        // depfile whose relative prerequisites were resolved against a wrong
        // guess of its directory waits, to be read again against its owner's.
        let mapper = Mapper {
            model,
            sources,
            max_path,
        };
        // `None`: a deps log's entry.
        let mapped: Vec<Option<Mapped>> =
            if (self.results.iter()).all(|s| matches!(s, Slot::Mapped(_) | Slot::Log)) {
                (self.results.into_iter())
                    .map(|s| match s {
                        Slot::Mapped(m) => Some(m),
                        _ => None,
                    })
                    .collect()
            } else {
                super::par_map_owned(self.results, |i, slot| match slot {
                    Slot::Log => None,
                    Slot::Mapped(m) => Some(m),
                    Slot::Read(r) => Some(mapper.map(&entries[i], Some(r))),
                    Slot::Unread => Some(mapper.map(&entries[i], None)),
                })
            };
        let mut again = Worker::default();
        let mut clean = true;
        let mut units: Vec<(usize, LocalUnit)> = Vec::with_capacity(entries.len());
        let mut logs = self.logs;
        for (i, m) in mapped.into_iter().enumerate() {
            let Some(m) = m else { continue };
            let d = &entries[i];
            let unit = match m {
                Mapped::Unmapped(g) => Err(g),
                Mapped::Done(unit) => unit,
                Mapped::Again(target) => {
                    let dir = &model.targets[target].dir_build;
                    let parsed = read_one(reader, d, scope, dir, shared, &mut again)
                        .transpose()
                        .unwrap_or_else(|| {
                            Err(Gap::new(
                                Code::DepFileUnmapped,
                                format!("{d}: a ninja deps log, read as a depfile before"),
                            ))
                        });
                    clean = false;
                    parsed.and_then(|p| unit_of(d, model, target, max_path, p, &sources.0))
                }
            };
            match unit {
                Ok(u) => units.push((i, u)),
                Err(g) => {
                    clean = false;
                    gaps.push(g);
                }
            }
        }
        // Every file met, with its path's hash and its stat, by id.
        let files = shared.take_paths();
        let mut stats: Vec<FileStat> = std::iter::repeat_with(|| FileStat {
            mtime: None,
            size: None,
            real: None,
        })
        .take(files.len())
        .collect();
        let mut hashes: Vec<Option<u64>> = vec![None; files.len()];
        for (id, hash, st) in self.created.into_iter().chain(again.created) {
            if let Some(slot) = stats.get_mut(id as usize) {
                *slot = st;
                hashes[id as usize] = Some(hash);
            }
        }
        ev.files = files;
        logs.extend(again.logs);
        logs.sort_by(|a, b| a.path.cmp(&b.path));
        if ninja && logs.is_empty() {
            gaps.push(no_log_gap());
        }
        let depfiles = DepfileUnits {
            entries,
            units,
            stats,
            hashes,
            clean,
            gaps,
        };
        let mut each: Vec<Box<dyn DepSource + '_>> = vec![Box::new(depfiles)];
        each.extend(logs.into_iter().map(|l| Box::new(l) as Box<dyn DepSource>));
        let cx = FoldCx {
            model,
            sources,
            max_path,
        };
        let folded = fold_all(each, &mut ev, &cx);
        let mut gaps = folded.gaps;
        if !folded.built.is_empty() {
            let commands = job.ninja_commands(model);
            super::ninja_log::audit_commands(model, commands, &folded.built, &mut gaps);
        }
        (ev, gaps)
    }
}

/// `DEPS_LOG_MISSING`: a Ninja build whose dependency list (`dep_list`,
/// empty when none was given) names no deps log.
fn deps_log_missing(dep_list: &str, model: &Codemodel) -> Gap {
    Gap::new(
        Code::DepsLogMissing,
        if dep_list.is_empty() {
            format!(
                "the build uses the {:?} generator, which folds compiler depfiles into BUILD/.ninja_deps, and there is no {}/.ninja_deps: build the project with ninja first",
                model.generator, model.build_root
            )
        } else {
            format!(
                "the build uses the {:?} generator, which folds compiler depfiles into BUILD/.ninja_deps, and {} names no deps log: add {}/.ninja_deps to it",
                model.generator, dep_list, model.build_root
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fasthash::hash_str;
    use crate::ingest::evidence::PathIndex;
    use crate::ingest::file_api::{CompiledSource, Target, TargetKind};
    use crate::ingest::Limits;
    use crate::paths;

    #[test]
    fn a_source_listed_twice_is_covered_by_its_one_unit() {
        let source = |path: &str| CompiledSource {
            path: path.into(),
            language: "CXX".into(),
            generated: false,
        };
        let mut model = Codemodel::default();
        model.targets.push(Target {
            name: "t".into(),
            id: "t::@1".into(),
            kind: TargetKind::StaticLibrary,
            artifacts: Vec::new(),
            dir_build: "/b".into(),
            compiled: vec![source("/s/a.cpp"), source("/s/a.cpp"), source("/s/b.cpp")],
            deps: Vec::new(),
            object_inputs: Vec::new(),
            defines: Vec::new(),
            link_paths: Vec::new(),
            ..Target::default()
        });
        let ev = DepEvidence {
            files: vec!["/s/a.cpp".into()],
            tus: vec![Tu {
                target: 0,
                source: "/s/a.cpp".into(),
                source_index: 0,
                depfile: "/b/CMakeFiles/t.dir/a.cpp.o.d".into(),
                from_log: false,
                prereqs: vec![0],
                lists_outside: true,
            }],
            ..DepEvidence::default()
        };
        let gaps = coverage_gaps(&model, &ev, &[true]);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert!(gaps[0].to_string().contains("/s/b.cpp"), "{gaps:?}");
        assert!(coverage_gaps(&model, &ev, &[false]).is_empty());
    }

    #[test]
    fn units_of_a_target_with_a_system_dir_in_the_tree_must_list_a_system_header() {
        let mut model = Codemodel {
            source_root: "/s".into(),
            build_root: "/b".into(),
            implicit_includes: vec!["/s/toolchain/include".into()],
            ..Codemodel::default()
        };
        let cxx = |path: &str| CompiledSource {
            path: path.into(),
            language: "CXX".into(),
            generated: false,
        };
        for (name, system, dir) in [
            ("vendored", "/s/vendor", "/b"),
            ("outside", "/usr/local/include", "/b"),
            ("neighbour", "/s/vendor", "/b/sub"),
        ] {
            model.targets.push(Target {
                name: name.into(),
                dir_build: dir.into(),
                compiled: vec![cxx("/s/b.cpp"), cxx("/s/a.cpp")],
                system_includes: vec![system.into()],
                ..Target::default()
            });
        }
        let tu = |target: usize, source: &str, prereqs: Vec<FileId>, lists_outside: bool| Tu {
            target,
            source: source.into(),
            source_index: usize::from(source == "/s/a.cpp"),
            depfile: format!("{source}.d"),
            from_log: false,
            prereqs,
            lists_outside,
        };
        let files: Vec<String> = ["/s/b.cpp", "/s/a.cpp", "/s/toolchain/include/stdio.h"]
            .map(String::from)
            .into();
        let ev = |tus: Vec<Tu>| DepEvidence {
            files: files.clone(),
            tus,
            ..DepEvidence::default()
        };
        let all = [true, true, true];
        // Two units of `vendored` list no system header: one gap, the first source named.
        let e = ev(vec![
            tu(0, "/s/b.cpp", vec![0], false),
            tu(0, "/s/a.cpp", vec![1], false),
        ]);
        let gaps = system_headers_gaps(&model, &e, &all);
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert_eq!(gaps[0].code, Code::DepSystemHeadersOmitted);
        let text = gaps[0].to_string();
        assert!(
            text.contains("2 unit(s) of target \"vendored\" (first: /s/a.cpp)"),
            "{text}"
        );
        assert!(text.contains("/s/vendor"), "{text}");
        // Out of scope, or a system header listed: nothing to report.
        assert!(system_headers_gaps(&model, &e, &[false, true, true]).is_empty());
        let e = ev(vec![tu(0, "/s/b.cpp", vec![0], true)]);
        assert!(system_headers_gaps(&model, &e, &all).is_empty());
        // A header of the compiler's own (an in-tree toolchain) counts as one.
        let e = ev(vec![tu(0, "/s/b.cpp", vec![0, 2], false)]);
        assert!(system_headers_gaps(&model, &e, &all).is_empty());
        // Another unit of the same language in the same directory lists one: the
        // depfile flags there are -MD, and this unit includes no system header.
        let e = ev(vec![
            tu(0, "/s/b.cpp", vec![0], false),
            tu(1, "/s/a.cpp", vec![1], true),
        ]);
        assert!(system_headers_gaps(&model, &e, &all).is_empty());
        // One in another directory says nothing about this one.
        let e = ev(vec![
            tu(0, "/s/b.cpp", vec![0], false),
            tu(2, "/s/a.cpp", vec![1], true),
        ]);
        assert_eq!(system_headers_gaps(&model, &e, &all).len(), 1);
        // A SYSTEM directory outside the roots holds no project file.
        let e = ev(vec![tu(1, "/s/b.cpp", vec![0], false)]);
        assert!(system_headers_gaps(&model, &e, &all).is_empty());
    }

    #[test]
    fn token_cache_hits_only_the_token_it_holds() {
        let mut c = TokenCache::default();
        let (a, b) = ("/s/a.h", "/s/b.h");
        c.insert(hash_str(a), a, 7);
        assert_eq!(c.get(hash_str(a), a), Some(7));
        assert_eq!(c.get(hash_str(b), b), None);
        // Same hash, other token (a collision): neither cached nor confused.
        c.insert(hash_str(a), b, 8);
        assert_eq!(c.get(hash_str(a), b), None);
        assert_eq!(c.get(hash_str(a), a), Some(7));
        c.insert(hash_str(b), b, 9);
        assert_eq!(c.get(hash_str(b), b), Some(9));
    }

    #[test]
    fn path_index_checks_every_hit_against_the_file_table() {
        let files: Vec<String> = ["/s/a.h", "/s/b.h", "/s/c.h"].map(String::from).into();
        let hashes = [None, Some(hash_str("/s/b.h")), None];
        let index = PathIndex::new(&files, &hashes, |id| id != 2);
        assert_eq!(index.get(&files, "/s/a.h"), Some(0));
        assert_eq!(index.get(&files, "/s/b.h"), Some(1));
        assert_eq!(index.get(&files, "/s/c.h"), None, "not kept");
        assert_eq!(index.get(&files, "/s/d.h"), None);
        // A hash taken by another path: the slot's file does not match, so
        // the spilled ids are searched.
        let mut collided = PathIndex::default();
        collided.by_hash.insert(hash_str("/s/b.h"), 0);
        collided.spill.push(1);
        assert_eq!(collided.get(&files, "/s/b.h"), Some(1));
        assert_eq!(collided.get(&files, "/s/a.h"), None);
    }

    #[test]
    fn may_hold_rejects_only_paths_that_start_with_neither_root() {
        let s = Scope::new("/work/src", "/b");
        for (path, want) in [
            ("/work/src/a.h", true),
            ("/work/srcX/a.h", true), // same first eight bytes: only a guess
            ("/work/sr", true),
            ("/work/s", false),
            ("/usr/include/stdio.h", false),
            ("/b", true),
            ("/b/x.h", true),
            ("/bin/x.h", true),
            ("/", false),
            ("", false),
            ("/a/b", false),
        ] {
            assert_eq!(s.may_hold(path), want, "{path}");
            let slow = |r: &str| path.as_bytes().starts_with(&r.as_bytes()[..r.len().min(8)]);
            assert_eq!(want, slow(s.source_root) || slow(s.build_root), "{path}");
        }
        let all = Scope::new("/", "/");
        assert!(all.may_hold("/usr/x.h"));
    }

    #[test]
    fn guessed_dir_is_what_precedes_the_object_directory() {
        assert_eq!(guessed_dir("/b/lib/CMakeFiles/t.dir/a.cpp.o.d"), "/b/lib");
        assert_eq!(guessed_dir("/b/CMakeFiles/t.dir/sub/a.cpp.o.d"), "/b");
        // A CMakeFiles directory that is not an object directory is skipped.
        assert_eq!(
            guessed_dir("/b/CMakeFiles/x/lib/CMakeFiles/t.dir/a.o.d"),
            "/b/CMakeFiles/x/lib"
        );
        // Only a guess: the first object directory wins, the codemodel decides.
        assert_eq!(
            guessed_dir("/t/CMakeFiles/w.dir/b/CMakeFiles/t.dir/a.o.d"),
            "/t"
        );
        assert_eq!(guessed_dir("/b/a.o.d"), "");
    }

    /// A hand-made tree whose build root itself lies inside a
    /// `CMakeFiles/<x>.dir/` directory, so the guess made before the codemodel
    /// is known is wrong for every depfile, and relative prerequisites must be
    /// resolved again against the owner's directory.
    struct Tree {
        _tmp: tempfile::TempDir,
        model: Codemodel,
        dep_list: String,
        header: String,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = paths::fold(tmp.path().to_str().expect("utf-8 temp dir"));
        let src = format!("{root}/src");
        let build = format!("{root}/CMakeFiles/w.dir/b");
        let dir_build = format!("{build}/sub");
        let obj_dir = format!("{dir_build}/CMakeFiles/t.dir");
        std::fs::create_dir_all(&src).expect("mkdir");
        std::fs::create_dir_all(&obj_dir).expect("mkdir");
        std::fs::write(format!("{src}/a.cpp"), "int a;\n").expect("write");
        let header = format!("{dir_build}/gen.h");
        std::fs::write(&header, "\n").expect("write");
        // `src/x.h` is `<dir_build>/src/x.h`; the wrong guess of the directory
        // would make it `<root>/src/x.h`, a real file of the source tree.
        std::fs::create_dir_all(format!("{dir_build}/src")).expect("mkdir");
        std::fs::write(format!("{dir_build}/src/x.h"), "\n").expect("write");
        std::fs::write(format!("{src}/x.h"), "\n").expect("write");
        let dep_list = write_depfile(
            &root,
            &obj_dir,
            &format!("sub/CMakeFiles/t.dir/a.cpp.o: {src}/a.cpp \\\n gen.h /usr/include/stdio.h src/x.h\n"),
        );
        let model = one_target_model(&src, &build, &dir_build, obj_dir);
        Tree {
            _tmp: tmp,
            model,
            dep_list,
            header,
        }
    }

    /// Writes `text` as `<obj_dir>/a.cpp.o.d`, last (so it is no older than
    /// its prerequisites), and a dependency list naming it; returns the list.
    fn write_depfile(root: &str, obj_dir: &str, text: &str) -> String {
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(format!("{obj_dir}/a.cpp.o.d"), text).expect("write");
        let dep_list = format!("{root}/deps.txt");
        std::fs::write(&dep_list, format!("{obj_dir}/a.cpp.o.d\n")).expect("write");
        dep_list
    }

    /// A codemodel of one static library `t` compiling `<src>/a.cpp` in
    /// `dir_build`, its objects in `obj_dir`.
    fn one_target_model(src: &str, build: &str, dir_build: &str, obj_dir: String) -> Codemodel {
        Codemodel {
            object_dirs: [(obj_dir, 0)].into_iter().collect(),
            source_root: src.into(),
            build_root: build.into(),
            targets: vec![Target {
                name: "t".into(),
                id: "t::@1".into(),
                kind: TargetKind::StaticLibrary,
                artifacts: Vec::new(),
                dir_build: dir_build.into(),
                compiled: vec![CompiledSource {
                    path: format!("{src}/a.cpp"),
                    language: "CXX".into(),
                    generated: false,
                }],
                deps: Vec::new(),
                object_inputs: Vec::new(),
                defines: Vec::new(),
                link_paths: Vec::new(),
                ..Target::default()
            }],
            ..Codemodel::default()
        }
    }

    fn prereq_paths(ev: &DepEvidence) -> Vec<&str> {
        ev.tus[0]
            .prereqs
            .iter()
            .map(|&id| ev.files[id as usize].as_str())
            .collect()
    }

    #[test]
    fn relative_prerequisites_are_resolved_against_the_owner_not_the_guess() {
        let t = tree();
        let reader = Reader::new(Limits::default());
        let (ev, gaps) = load(&reader, &t.dep_list, &t.model);
        assert!(gaps.is_empty(), "{gaps:?}");
        assert_eq!(ev.tus.len(), 1);
        let source = t.model.targets[0].compiled[0].path.as_str();
        let built_x = format!("{}/src/x.h", t.model.targets[0].dir_build);
        assert_eq!(
            prereq_paths(&ev),
            vec![source, t.header.as_str(), built_x.as_str()]
        );
        assert!(ev.id_of(&t.header).is_some());
        assert!(ev.id_of(&built_x).is_some());
        assert_eq!(ev.source_id(&ev.tus[0]), ev.id_of(source));
        assert!(ev.source_id(&ev.tus[0]).is_some());
        // What the wrong guess named is no evidence: a change to it must stay unknown.
        let decoy = format!("{}/x.h", t.model.source_root);
        assert!(ev.id_of(&decoy).is_none(), "{:?}", ev.files);
        assert!(ev.ids_of(&decoy, None).is_empty());
    }

    #[test]
    fn units_mapped_while_reading_are_the_units_mapped_after() {
        let t = tree();
        let reader = Reader::new(Limits::default());
        let (after, after_gaps) = load(&reader, &t.dep_list, &t.model);
        let sources = SourceIndex::new(&t.model);
        let roots = (t.model.source_root.as_str(), t.model.build_root.as_str());
        let job = ReadJob::new(&reader, &t.dep_list, roots);
        job.publish(&t.model, &sources);
        assert!(job.mapper.get().is_some());
        let pending = job.read_all();
        assert!(
            pending.results.iter().all(|s| matches!(s, Slot::Mapped(_))),
            "every depfile was mapped by the worker that read it"
        );
        let (during, during_gaps) = pending.finish(&reader, &t.model, &sources);
        assert_eq!(format!("{during_gaps:?}"), format!("{after_gaps:?}"));
        assert_eq!(prereq_paths(&during), prereq_paths(&after));
        let decoy = format!("{}/x.h", t.model.source_root);
        assert!(during.id_of(&decoy).is_none());
        // A codemodel with other roots is not handed to the workers.
        let other = ReadJob::new(&reader, &t.dep_list, ("/elsewhere/src", "/elsewhere/build"));
        other.publish(&t.model, &sources);
        assert!(other.mapper.get().is_none());
    }

    /// A scratch tree: `(its guard, root, root/src, root/build, the object
    /// directory build/CMakeFiles/t.dir)`, with `src/<d>` made for each of
    /// `src_dirs`, all folded.
    fn scratch(src_dirs: &[&str]) -> (tempfile::TempDir, String, String, String, String) {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = paths::fold(tmp.path().to_str().expect("utf-8 temp dir"));
        let (src, build) = (format!("{root}/src"), format!("{root}/build"));
        let obj_dir = format!("{build}/CMakeFiles/t.dir");
        for d in src_dirs
            .iter()
            .map(|d| format!("{src}/{d}"))
            .chain([obj_dir.clone()])
        {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        (tmp, root, src, build, obj_dir)
    }

    /// Two reads in one process (and on one calling thread) of a tree whose
    /// include directory became a symlink in between: the second read sees
    /// the link, whatever the first one learnt about that directory.
    #[test]
    fn each_read_looks_at_the_symlinks_afresh() {
        let (_tmp, root, src, build, obj_dir) = scratch(&["real", "inc"]);
        std::fs::write(format!("{src}/a.cpp"), "int a;\n").expect("write");
        std::fs::write(format!("{src}/real/x.h"), "\n").expect("write");
        std::fs::write(format!("{src}/inc/x.h"), "\n").expect("write");
        let dep_list = write_depfile(
            &root,
            &obj_dir,
            &format!("CMakeFiles/t.dir/a.cpp.o: {src}/a.cpp \\\n {src}/inc/x.h\n"),
        );
        let model = one_target_model(&src, &build, &build, obj_dir);
        let reader = Reader::new(Limits::default());
        let (real_x, listed_x) = (format!("{src}/real/x.h"), format!("{src}/inc/x.h"));
        let (ev, gaps) = load(&reader, &dep_list, &model);
        assert!(gaps.is_empty(), "{gaps:?}");
        assert!(
            ev.ids_of(&real_x, None).is_empty(),
            "inc/ is a directory of its own"
        );
        // inc/ becomes a symlink to real/.
        std::fs::remove_dir_all(format!("{src}/inc")).expect("rm");
        std::os::unix::fs::symlink(format!("{src}/real"), format!("{src}/inc")).expect("ln");
        let (ev, gaps) = load(&reader, &dep_list, &model);
        assert!(gaps.is_empty(), "{gaps:?}");
        let listed = ev.id_of(&listed_x).expect("inc/x.h is listed");
        assert_eq!(ev.ids_of(&real_x, None), vec![listed]);
    }

    #[test]
    fn depfiles_read_against_other_roots_are_read_again() {
        let t = tree();
        let reader = Reader::new(Limits::default());
        // As when --source-dir/--build-dir spell the roots differently from the codemodel.
        let job = ReadJob::new(&reader, &t.dep_list, ("/elsewhere/src", "/elsewhere/build"));
        let (ev, gaps) = job
            .read_all()
            .finish(&reader, &t.model, &SourceIndex::new(&t.model));
        assert!(gaps.is_empty(), "{gaps:?}");
        let source = t.model.targets[0].compiled[0].path.as_str();
        let built_x = format!("{}/src/x.h", t.model.targets[0].dir_build);
        assert_eq!(
            prereq_paths(&ev),
            vec![source, t.header.as_str(), built_x.as_str()]
        );
    }

    #[test]
    fn object_stems_are_the_source_path_below_the_object_directory() {
        use super::objects::{ends_with_path, object_stem};
        assert_eq!(object_stem("CMakeFiles/t.dir/a.cpp.o"), Some("a.cpp"));
        assert_eq!(
            object_stem("lib/CMakeFiles/t.dir/sub/a.cpp.o"),
            Some("sub/a.cpp")
        );
        assert_eq!(object_stem("CMakeFiles/t.dir/a.c.obj"), Some("a.c"));
        assert_eq!(
            object_stem("CMakeFiles/t.dir/Unity/unity_0_cxx.cxx.o"),
            Some("Unity/unity_0_cxx.cxx")
        );
        // A precompiled header, a name that is not an object, no object directory.
        assert_eq!(object_stem("CMakeFiles/t.dir/cmake_pch.hxx.pch"), None);
        assert_eq!(object_stem("CMakeFiles/t.dir/.o"), None);
        assert_eq!(object_stem("xCMakeFiles/t.dir/a.cpp.o"), None);
        assert_eq!(object_stem("a.cpp.o"), None);
        assert!(ends_with_path("/s/sub/a.cpp", "sub/a.cpp"));
        assert!(ends_with_path("sub/a.cpp", "sub/a.cpp"));
        assert!(!ends_with_path("/s/xsub/a.cpp", "sub/a.cpp"));
        assert!(!ends_with_path("/s/sub/a.cpp.h", "sub/a.cpp"));
    }

    /// Clang lists what a precompiled header was made from (the forced
    /// include, the PCH's own source, its headers) before the unit's source,
    /// as a real `clang++` 14 `.d` of CMake's PCH rule does: the object's
    /// path names the unit among them. A second listed source of the same
    /// relative path, or none (`OBJECT_NAME`), leaves the depfile unmapped.
    #[test]
    fn clang_pch_units_are_mapped_by_their_object_path() {
        let (_tmp, root, src, build, obj_dir) = scratch(&["sub"]);
        let pch_cxx = format!("{obj_dir}/cmake_pch.hxx.cxx");
        for f in [
            format!("{src}/a.cpp"),
            format!("{src}/sub/a.cpp"),
            format!("{src}/deep.h"),
            format!("{obj_dir}/cmake_pch.hxx"),
            pch_cxx.clone(),
        ] {
            std::fs::write(f, "\n").expect("write");
        }
        let mut model = one_target_model(&src, &build, &build, obj_dir.clone());
        let source = |path: &str| CompiledSource {
            path: path.into(),
            language: "CXX".into(),
            generated: false,
        };
        model.targets[0].compiled.push(source(&pch_cxx));
        let pch_inputs = format!("{obj_dir}/cmake_pch.hxx \\\n {pch_cxx} {src}/deep.h");
        let reader = Reader::new(Limits::default());

        let list = write_depfile(
            &root,
            &obj_dir,
            &format!("CMakeFiles/t.dir/a.cpp.o: {pch_inputs} \\\n {src}/a.cpp\n"),
        );
        let (ev, gaps) = load(&reader, &list, &model);
        assert!(gaps.is_empty(), "{gaps:?}");
        assert_eq!(ev.tus.len(), 1);
        assert_eq!(
            (ev.tus[0].source.as_str(), ev.tus[0].source_index),
            (model.targets[0].compiled[0].path.as_str(), 0)
        );
        assert!(prereq_paths(&ev).contains(&format!("{src}/deep.h").as_str()));

        // The unit's source is a compiled source, but so is another listed
        // file of the same path below some directory: which one is unknown.
        model.targets[0]
            .compiled
            .push(source(&format!("{src}/sub/a.cpp")));
        let list = write_depfile(
            &root,
            &obj_dir,
            &format!("CMakeFiles/t.dir/a.cpp.o: {pch_inputs} \\\n {src}/sub/a.cpp {src}/a.cpp\n"),
        );
        let (ev, gaps) = load(&reader, &list, &model);
        assert!(ev.tus.is_empty());
        assert_eq!(gaps[0].code, Code::DepFileUnmapped, "{gaps:?}");
        assert!(
            gaps[0]
                .to_string()
                .contains("cmake_pch.hxx is not a compiled source"),
            "{gaps:?}"
        );

        // An object renamed (`OBJECT_NAME`): its path names no listed source.
        model.targets[0].compiled.pop();
        std::fs::remove_file(format!("{obj_dir}/a.cpp.o.d")).expect("rm");
        let renamed = format!("{obj_dir}/renamed.o.d");
        std::fs::write(
            &renamed,
            format!("CMakeFiles/t.dir/renamed.o: {pch_inputs} \\\n {src}/a.cpp\n"),
        )
        .expect("write");
        std::fs::write(&list, format!("{renamed}\n")).expect("write");
        let (ev, gaps) = load(&reader, &list, &model);
        assert!(ev.tus.is_empty());
        assert_eq!(gaps[0].code, Code::DepFileUnmapped, "{gaps:?}");
    }
}
