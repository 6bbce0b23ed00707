//! The interface every source of dependency evidence implements: the
//! compilers' `.d` files of the dependency list ([`DepfileUnits`]) and a
//! Ninja deps log (`ninja_units::Prepared`), which say what each translation
//! unit read, and a record of the base's test run (`record_audit::Input`,
//! `--record`), which says what each test read. Each source maps its own
//! records to units or tests and audits them (mapping, completeness,
//! freshness); [`fold_all`] folds them in order into the run's
//! [`DepEvidence`].

use super::audit::audit;
use super::map::{LocalUnit, SourceIndex};
use super::ninja_units;
use super::stat::FileStat;
use crate::ingest::evidence::DepEvidence;
use crate::ingest::file_api::Codemodel;
use crate::ingest::record_audit;
use crate::reason::Gap;

/// What every source folds against.
pub(crate) struct FoldCx<'a> {
    /// The codemodel its records map to.
    pub(crate) model: &'a Codemodel,
    /// (target, source) → the codemodel's compiled source.
    pub(crate) sources: &'a SourceIndex<'a>,
    /// `--max-path-len`.
    pub(crate) max_path: usize,
}

/// What one source added besides its units.
#[derive(Default)]
pub(crate) struct Folded {
    /// The gaps of its mapping and audit.
    pub(crate) gaps: Vec<Gap>,
    /// The units it described as (target, object as ninja spells it), for
    /// the audit of the commands they were compiled with
    /// (`ninja_log::audit_commands`); empty for a source that records no
    /// command.
    pub(crate) built: Vec<(usize, String)>,
}

/// A source of unit dependency evidence.
pub(crate) trait DepSource {
    /// Maps its records to units of `cx.model` (or to tests), audits them,
    /// and folds what they say into `ev`.
    fn fold(self: Box<Self>, ev: &mut DepEvidence, cx: &FoldCx<'_>) -> Folded;
}

/// Folds every source into `ev`, in order.
pub(crate) fn fold_all<'s>(
    sources: Vec<Box<dyn DepSource + 's>>,
    ev: &mut DepEvidence,
    cx: &FoldCx<'_>,
) -> Folded {
    let mut all = Folded::default();
    for s in sources {
        let f = s.fold(ev, cx);
        all.gaps.extend(f.gaps);
        all.built.extend(f.built);
    }
    all
}

/// The `.d` files of the dependency list, read and mapped to their units:
/// audited together (a file's stat is taken once, however many list it).
pub(super) struct DepfileUnits<'a> {
    /// Its entries.
    pub(super) entries: &'a [String],
    /// Each mapped unit, by entry index.
    pub(super) units: Vec<(usize, LocalUnit)>,
    /// Per file id: its stat and its path's hash, when taken.
    pub(super) stats: Vec<FileStat>,
    pub(super) hashes: Vec<Option<u64>>,
    /// Every entry was mapped at the first reading.
    pub(super) clean: bool,
    /// The gaps of reading the list and mapping its entries.
    pub(super) gaps: Vec<Gap>,
}

impl DepSource for DepfileUnits<'_> {
    fn fold(self: Box<Self>, ev: &mut DepEvidence, cx: &FoldCx<'_>) -> Folded {
        let me = *self;
        let (audited, gaps) = audit(
            cx.model,
            me.entries,
            me.units,
            (me.stats, &me.hashes),
            me.clean,
            std::mem::take(ev),
            me.gaps,
        );
        *ev = audited;
        Folded {
            gaps,
            built: Vec::new(),
        }
    }
}

impl DepSource for ninja_units::Prepared {
    fn fold(self: Box<Self>, ev: &mut DepEvidence, cx: &FoldCx<'_>) -> Folded {
        let mut gaps = Vec::new();
        let built = ninja_units::merge(ev, &mut gaps, cx.model, cx.sources, *self, cx.max_path);
        Folded { gaps, built }
    }
}

impl DepSource for record_audit::Input<'_> {
    /// A record says what tests read, not units: audited against the
    /// catalogue and the base, it is the evidence's per-test part
    /// (`DepEvidence::tests`); its findings are notes, not gaps (an
    /// unusable record leaves the static evidence to decide alone).
    fn fold(self: Box<Self>, ev: &mut DepEvidence, _cx: &FoldCx<'_>) -> Folded {
        ev.tests = record_audit::audit(&self);
        Folded::default()
    }
}
