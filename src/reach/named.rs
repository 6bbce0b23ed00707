//! What channels find: [`Named`], what one text or directory names, and
//! [`TestReach`], what the evidence says one test names beyond its closure.

use crate::reason::Gap;

/// What one text source names.
#[derive(Clone, Debug, Default)]
pub struct Named {
    /// Targets it names, each with the reference in words.
    pub targets: Vec<(usize, String)>,
    /// Source-tree paths (absolute, folded).
    pub source: Vec<String>,
    /// Build-tree files written by configure (possible copies).
    pub configured: Vec<String>,
    /// Configure-time data files below build-tree directories it names
    /// (possible copies; not read as texts).
    pub copies: Vec<String>,
    /// Build-tree files of unknown origin, each as the test names it
    /// (`names FILE`, `names directory D, which holds FILE`).
    pub unknown: Vec<String>,
    /// Build-tree paths no build step writes that do not exist, or that a
    /// test wrote (newer than the catalogue): test-time data.
    pub shared: Vec<String>,
}

impl Named {
    /// Adds everything `other` names.
    pub fn absorb(&mut self, other: &Named) {
        self.targets.extend(other.targets.iter().cloned());
        self.source.extend(other.source.iter().cloned());
        self.configured.extend(other.configured.iter().cloned());
        self.copies.extend(other.copies.iter().cloned());
        self.unknown.extend(other.unknown.iter().cloned());
        self.shared.extend(other.shared.iter().cloned());
    }
}

/// What the evidence says one test names, beyond its graph closure.
#[derive(Clone, Debug, Default)]
pub struct TestReach {
    /// Source-tree paths it names (absolute, folded, sorted): a change at or
    /// under one of them selects the test.
    pub source: Vec<String>,
    /// Configure-time build-tree files it names (sorted): possible copies.
    pub configured: Vec<String>,
    /// Configure-time data files below build-tree directories it names
    /// (sorted): possible copies (`file(COPY data DESTINATION …)`).
    pub copies: Vec<String>,
    /// Why each target joined its direct list (target, reference), sorted.
    pub via: Vec<(usize, String)>,
    /// The test names a build-tree file of unknown origin.
    pub unknown: Option<Gap>,
    /// Build-tree paths it names that no build step writes and that hold
    /// test-time data (missing, or written by a test): sorted.
    pub shared: Vec<String>,
}
