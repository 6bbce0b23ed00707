//! What one run found: the decision, with everything the report layer may
//! show about it.

use crate::decide::{Outcome, Verdict};
use crate::policy::Policy;
use crate::{changes, declare};

/// Everything the report layer may show about one run.
#[derive(Debug)]
pub struct Analysis {
    /// The decision.
    pub outcome: Outcome,
    /// One verdict per registered test, sorted by name (empty when the catalogue is untrusted).
    pub verdicts: Vec<Verdict>,
    /// Classified changed paths, in input order.
    pub changed: Vec<changes::Changed>,
    /// Changed paths exactly as given (lossy for non-UTF-8), for identities.
    pub changed_raw: Vec<String>,
    /// Affected translation units (source paths relative to the source root).
    pub affected_units: Vec<String>,
    /// Targets owning an affected unit.
    pub affected_direct: Vec<String>,
    /// Targets affected only through dependencies.
    pub affected_dependent: Vec<String>,
    /// `(path, sha256)` of every evidence file read (only with `--format json` or `--receipt`).
    pub evidence: Vec<(String, String)>,
    /// The policy in force.
    pub policy: Policy,
    /// Every policy declaration the analysis applied, with what to.
    pub declarations: Vec<declare::Use>,
    /// Test name → the key of its data-flow group (fixtures, DEPENDS,
    /// RESOURCE_LOCK), for tests in a group of two or more: `--shard` keeps a
    /// group in one shard.
    pub flow_groups: std::collections::BTreeMap<String, String>,
    /// With `--shard`: the test costs ctest recorded in the build tree
    /// (`Testing/Temporary/CTestCostData.txt`), which balance the shards.
    pub shard_costs: Option<crate::ingest::ctest_cost::Costs>,
    /// `diff2test snapshot`: the snapshot, when the evidence was complete.
    pub snapshot: Option<serde_json::Value>,
    /// `diff2test init`: the starter policy's text.
    pub init: Option<String>,
    /// `CODE: detail` lines said on stderr as `note …` (a record not used, tests it does not cover).
    pub notes: Vec<String>,
}
