//! The build's evidence, read on every core and returned as one value: the
//! CTest catalogue, the File API codemodel, the dependency evidence (`.d`
//! files, Ninja's deps log, with the aliases, assembler includes and autogen
//! outputs joined to it), the custom commands and the configure reads.
//!
//! The threads live here, and nothing of the caller runs on them. Helpers
//! start reading depfiles at once; this thread parses the catalogue, opens the
//! codemodel (index and codemodel objects), starts a thread on a Ninja build's
//! manifest and log as soon as the codemodel names them, and reads the target
//! objects; the codemodel is then handed to the helpers (so that they map each
//! depfile to its unit as they read it). The dependency evidence is joined and
//! audited on one thread while this one parses the custom commands and another
//! scans the configure reads. Without a codemodel the depfiles are still read
//! to the end, so the evidence read (and its identity) never depends on timing.

use std::sync::OnceLock;

use super::configure_reads::{self, ConfigureReads};
use super::ctest::Catalogue;
use super::custom_commands::{self, Recorded};
use super::depfile::source::{fold_all, DepSource, FoldCx};
use super::depfile::{self, DepEvidence, ReadJob, SourceIndex};
use super::file_api::{self, Codemodel};
use super::{autogen, ninja_log, record_audit, threads, Reader};
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
    /// The catalogue's bytes (read before anything else, so that what it says
    /// never depends on timing), or why they could not be read.
    pub ctest_bytes: Result<Vec<u8>, Gap>,
    /// `--ctest-json`, as the catalogue's gaps name it.
    pub ctest_json: &'a str,
    /// `--max-tests`.
    pub max_tests: usize,
    /// Keep the catalogue's document (a snapshot's and a record's entry
    /// fingerprints need it).
    pub keep_ctest_document: bool,
    /// `--record`: a record of the base's test run, folded into the
    /// dependency evidence once the catalogue it covers is read.
    pub record: Option<&'a record_audit::Asked>,
}

/// Everything read of the build.
pub struct Ingested<'m> {
    /// The CTest catalogue, or why it could not be read.
    pub catalogue: Result<Catalogue, Gap>,
    /// What rests on the codemodel, when one could be read at all.
    pub modelled: Option<Modelled<'m>>,
    /// Every gap of the codemodel and of the dependency evidence.
    pub gaps: Vec<Gap>,
}

/// The codemodel and what was read against it.
pub struct Modelled<'m> {
    /// The codemodel.
    pub model: &'m Codemodel,
    /// The dependency evidence, joined.
    pub deps: DepEvidence,
    /// The custom commands as the build's files record them.
    pub recorded: Recorded,
    /// The files the configure step reads.
    pub configure_reads: ConfigureReads,
    /// The dependency list itself gave no evidence (unreadable, or no deps
    /// log): every unit's missing evidence is its consequence.
    pub list_failed: bool,
}

/// Reads the build's evidence of `req` on every core. The codemodel is put
/// in `model_cell`, which outlives whatever the caller builds on it.
pub fn read<'m>(
    reader: &Reader,
    req: Request<'_>,
    model_cell: &'m OnceLock<Codemodel>,
) -> Ingested<'m> {
    let sources_cell: OnceLock<SourceIndex<'m>> = OnceLock::new();
    let job = ReadJob::new(reader, req.dep_list, (req.source_dir, req.build_dir));
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads()).map(|_| s.spawn(|| job.work())).collect();
        let catalogue = req.ctest_bytes.and_then(|bytes| {
            super::ctest::parse(
                &bytes,
                req.ctest_json,
                req.build_dir,
                req.max_tests,
                req.keep_ctest_document,
            )
        });
        let fa_req = file_api::Request {
            source_dir: req.source_dir,
            build_dir: req.build_dir,
            config: req.config,
            // The other cores are reading depfiles.
            threads: threads().div_ceil(2),
            fingerprints: req.fingerprints,
        };
        let mut gaps = Vec::new();
        let opened = file_api::open(reader, &fa_req, &mut gaps);
        // A Ninja build's manifest and log, read on their own thread from the
        // moment the codemodel names them: the one walk of the manifest also
        // gives its custom commands.
        let manifest = match &opened {
            Ok(o) if o.is_ninja() => {
                let (build, multi, config) = (
                    o.build_root().to_owned(),
                    o.multi_config(),
                    o.config().to_owned(),
                );
                Some(s.spawn(move || {
                    ninja_log::read_manifest_commands(reader, &build, multi, &config)
                }))
            }
            _ => None,
        };
        let loaded = opened.and_then(|o| file_api::load_opened(reader, &fa_req, o, &mut gaps));
        let commands = manifest.map(joined);
        let model = match loaded {
            Ok(m) => m,
            Err(g) => {
                gaps.push(g);
                drop(job.work_and_join(helpers));
                return Ingested {
                    catalogue,
                    modelled: None,
                    gaps,
                };
            }
        };
        let model: &'m Codemodel = model_cell.get_or_init(|| model);
        let sources = sources_cell.get_or_init(|| SourceIndex::new(model));
        job.publish(model, sources);
        if let Some(c) = commands {
            job.give_ninja_commands(c);
        }
        // The dependency evidence is joined and audited on one thread, the
        // configure reads scanned on another, the custom commands parsed here.
        let joining = s.spawn(|| {
            let pending = job.pending(job.work_and_join(helpers));
            let (mut deps, mut gaps) = pending.finish(reader, model, sources);
            let list_failed = gaps
                .iter()
                .any(|g| matches!(g.code, Code::DepListUnreadable | Code::DepsLogMissing));
            let max_bytes = reader.limits().max_file_bytes;
            gaps.extend(depfile::join_outside_aliases(&mut deps, model, max_bytes));
            depfile::scan_assembler_includes(model, &mut deps, max_bytes);
            gaps.extend(autogen::join_automoc(&mut deps, model, reader));
            (deps, gaps, list_failed)
        });
        let scanning = s.spawn(|| configure_reads::scan(reader, model));
        let custom_edges = if model.is_ninja() {
            job.ninja_commands(model).custom_edges()
        } else {
            None
        };
        let recorded = custom_commands::parse(reader, model, custom_edges);
        let configure_reads = joined(scanning);
        let (mut deps, dep_gaps, list_failed) = joined(joining);
        gaps.extend(dep_gaps);
        if let (Some(asked), Ok(catalogue)) = (req.record, &catalogue) {
            let record = record_audit::Input {
                asked,
                source_dir: req.source_dir,
                build_dir: req.build_dir,
                catalogue,
            };
            let cx = FoldCx {
                model,
                sources,
                max_path: reader.limits().max_path_len,
            };
            let per_test: Vec<Box<dyn DepSource>> = vec![Box::new(record)];
            gaps.extend(fold_all(per_test, &mut deps, &cx).gaps);
        }
        Ingested {
            catalogue,
            modelled: Some(Modelled {
                model,
                deps,
                recorded,
                configure_reads,
                list_failed,
            }),
            gaps,
        }
    })
}

/// What `h`'s thread returned; its panic is raised here.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}
