//! The build's evidence, read on every core: the File API codemodel and the
//! dependency evidence (`.d` files, Ninja's deps log), with the aliases,
//! assembler includes and autogen outputs joined to it.
//!
//! The threads live here. Helpers start reading depfiles at once; this
//! thread runs the caller's `first` step (the catalogue's parse), loads the
//! codemodel, hands it to the helpers (so that they map each depfile to its
//! unit as they read it), runs the caller's `with_model` step (the test
//! mapping) while they read, and then joins the reading. Without a codemodel
//! the depfiles are still read to the end, so the evidence read (and its
//! identity) never depends on timing.

use std::sync::OnceLock;

use super::depfile::{self, DepEvidence, ReadJob, SourceIndex};
use super::file_api::{self, Codemodel};
use super::ninja_manifest::OwnedEdge;
use super::{autogen, threads, Reader};
use crate::reason::{Code, Gap};

/// What the build's evidence is read from.
pub struct Request<'a> {
    /// `--source-dir`, folded absolute.
    pub source_dir: &'a str,
    /// `--build-dir`, folded absolute.
    pub build_dir: &'a str,
    /// `--dep-list`, folded absolute.
    pub dep_list: &'a str,
    /// `--config`.
    pub config: Option<&'a str>,
    /// Fingerprint the evidence as it is parsed (for a snapshot).
    pub fingerprints: bool,
}

/// The build's evidence, and what the caller's steps returned.
pub struct Build<'m, A, B> {
    /// What the `first` step returned.
    pub first: A,
    /// The codemodel, when one could be read at all.
    pub model: Option<&'m Codemodel>,
    /// What the `with_model` step returned (with a codemodel only).
    pub with_model: Option<B>,
    /// The dependency evidence, joined (empty without a codemodel).
    pub deps: DepEvidence,
    /// Every gap of the codemodel and of the dependency evidence.
    pub gaps: Vec<Gap>,
    /// The dependency list itself gave no evidence (unreadable, or no deps
    /// log): every unit's missing evidence is its consequence.
    pub list_failed: bool,
}

/// Reads the codemodel and the dependency evidence of `req` on every core,
/// running `first` and then `with_model` on this thread while the depfiles
/// are read. The codemodel is put in `model_cell`, which outlives whatever
/// `with_model` builds on it.
pub fn read<'m, A, B>(
    reader: &Reader,
    req: &Request<'_>,
    model_cell: &'m OnceLock<Codemodel>,
    first: impl FnOnce() -> A,
    with_model: impl FnOnce(&A, &'m Codemodel, Option<&[OwnedEdge]>) -> B,
) -> Build<'m, A, B> {
    let sources_cell: OnceLock<SourceIndex<'m>> = OnceLock::new();
    let job = ReadJob::new(reader, req.dep_list, (req.source_dir, req.build_dir));
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads()).map(|_| s.spawn(|| job.work())).collect();
        let first = first();
        let fa = file_api::load(
            reader,
            &file_api::Request {
                source_dir: req.source_dir,
                build_dir: req.build_dir,
                config: req.config,
                // The other cores are reading depfiles.
                threads: threads().div_ceil(2),
                fingerprints: req.fingerprints,
            },
        );
        let mut gaps = fa.gaps;
        let Some(model) = fa.model else {
            drop(job.work_and_join(helpers));
            return Build {
                first,
                model: None,
                with_model: None,
                deps: DepEvidence::default(),
                gaps,
                list_failed: false,
            };
        };
        let model: &'m Codemodel = model_cell.get_or_init(|| model);
        let sources = sources_cell.get_or_init(|| SourceIndex::new(model));
        job.publish(model, sources);
        // A Ninja build's manifest and log, read here while the deps log is:
        // the one walk of the manifest also gives its custom commands.
        let custom_edges = if model.is_ninja() {
            job.ninja_commands(model).custom_edges()
        } else {
            None
        };
        let with_model = with_model(&first, model, custom_edges);
        let pending = job.pending(job.work_and_join(helpers));
        let (mut deps, dep_gaps) = pending.finish(reader, model, sources);
        let list_failed = dep_gaps
            .iter()
            .any(|g| matches!(g.code, Code::DepListUnreadable | Code::DepsLogMissing));
        gaps.extend(dep_gaps);
        let max_bytes = reader.limits().max_file_bytes;
        gaps.extend(depfile::join_outside_aliases(&mut deps, model, max_bytes));
        depfile::scan_assembler_includes(model, &mut deps, max_bytes);
        gaps.extend(autogen::join_automoc(&mut deps, model, reader));
        Build {
            first,
            model: Some(model),
            with_model: Some(with_model),
            deps,
            gaps,
            list_failed,
        }
    })
}
