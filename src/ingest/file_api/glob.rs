//! `file(GLOB … CONFIGURE_DEPENDS)` calls, as cmakeFiles 1.1 records them:
//! a new file that one matches re-runs configure.

use crate::paths;

/// One `file(GLOB …)` or `file(GLOB_RECURSE …)` call made with
/// `CONFIGURE_DEPENDS`, as cmakeFiles 1.1 records it in `globsDependent`.
///
/// CMake writes `expression` absolute (relative patterns are joined to
/// `CMAKE_CURRENT_SOURCE_DIR` first); its glob (kwsys `Glob`) starts in the
/// directory before the component holding the first wildcard ([`Self::base`])
/// and matches one component per pattern; `GLOB_RECURSE` matches the last
/// pattern against names at any depth below the directories the others reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigGlob {
    /// The expression as CMake wrote it.
    pub expression: String,
    /// Where the glob starts: the expression up to the last `/` before its
    /// first wildcard, absolute and folded.
    pub base: String,
    /// The rest of the expression, one pattern per path component (`*`, `?`
    /// and `[…]` with `!`/`^` and ranges; anything else is literal). Empty
    /// components are dropped.
    pub patterns: Vec<String>,
    /// `file(GLOB_RECURSE)`.
    pub recurse: bool,
    /// Directories are listed too (`GLOB`'s default; `GLOB_RECURSE` with `LIST_DIRECTORIES true`).
    pub list_directories: bool,
    /// `GLOB_RECURSE … FOLLOW_SYMLINKS` (kept for reference: [`Self::matches`]
    /// always assumes symlinked directories are followed, which matches more).
    pub follow_symlinks: bool,
    /// What it matched at configure time, absolute and folded (CMake writes
    /// them relative to `RELATIVE <dir>` when given), sorted.
    pub matched: Vec<String>,
}

impl ConfigGlob {
    /// Builds a glob from a `globsDependent` entry; `source_root` anchors an
    /// expression that is not absolute (CMake always writes absolute ones).
    pub fn new(
        expression: &str,
        source_root: &str,
        recurse: bool,
        list_directories: bool,
        follow_symlinks: bool,
        relative: Option<&str>,
        matched: &[String],
    ) -> ConfigGlob {
        let abs = if expression.starts_with('/') {
            expression.to_owned()
        } else {
            format!("{source_root}/{expression}")
        };
        // kwsys Glob::FindFiles: the fixed prefix ends at the last '/' before the first wildcard.
        let first_wild = abs.find(['*', '?', '[']).unwrap_or(abs.len());
        let cut = abs[..first_wild].rfind('/').unwrap_or(0);
        let base = paths::fold(&abs[..cut]);
        let patterns = abs[cut..]
            .split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect();
        let rel_base = relative.map(|r| paths::join_fold(source_root, r));
        let mut matched: Vec<String> = matched
            .iter()
            .map(|p| paths::join_fold(rel_base.as_deref().unwrap_or(source_root), p))
            .collect();
        matched.sort();
        matched.dedup();
        ConfigGlob {
            expression: expression.to_owned(),
            base,
            patterns,
            recurse,
            list_directories,
            follow_symlinks,
            matched,
        }
    }

    /// True when the glob lists `abs_path` (absolute, folded) or would list it
    /// if it existed, or `abs_path` lies inside a directory the glob lists
    /// (its directory may be new). Whether the path exists now, or was listed
    /// at configure time, is not asked: a build tree configured after the
    /// change lists an added file already, so a listed path may still be one
    /// the change added (with no change kind to tell, this matches more).
    /// Symlinked directories are assumed to be followed (matches more).
    pub fn matches(&self, abs_path: &str) -> bool {
        let Some(rel) = paths::strip_root(abs_path, &self.base) else {
            return false;
        };
        let n = self.patterns.len();
        if rel.is_empty() || n == 0 {
            return false;
        }
        let comps: Vec<&str> = rel.split('/').collect();
        if comps.len() < n {
            return false;
        }
        if self.recurse {
            // Leading patterns reach directories; the last one matches names at any depth below.
            let lead = &self.patterns[..n - 1];
            if !lead.iter().zip(&comps).all(|(p, c)| glob_component(p, c)) {
                return false;
            }
            let below = &comps[n - 1..];
            (self.list_directories && below.len() >= 2)
                || glob_component(&self.patterns[n - 1], below[below.len() - 1])
        } else {
            if !self
                .patterns
                .iter()
                .zip(&comps)
                .all(|(p, c)| glob_component(p, c))
            {
                return false;
            }
            comps.len() == n || self.list_directories
        }
    }
}

/// Matches one path component against one kwsys glob pattern (byte-wise, as
/// kwsys's regex does): `*` any run, `?` one byte, `[set]` / `[!set]` /
/// `[^set]` one byte in (or not in) the set, with `a-z` ranges and a leading
/// `]` taken literally; an unclosed `[` is literal. Case-sensitive (Linux).
pub(super) fn glob_component(pattern: &str, name: &str) -> bool {
    fn class_end(p: &[u8], i: usize) -> Option<usize> {
        // p[i] == b'['; returns the index of the closing ']'.
        let mut j = i + 1;
        if p.get(j) == Some(&b'!') {
            j += 1;
        }
        if p.get(j) == Some(&b']') {
            j += 1;
        }
        while j < p.len() && p[j] != b']' {
            j += 1;
        }
        (j < p.len()).then_some(j)
    }
    fn in_class(set: &[u8], c: u8) -> bool {
        let (neg, set) = match set.first() {
            Some(b'!') | Some(b'^') => (true, &set[1..]),
            _ => (false, set),
        };
        let mut hit = false;
        let mut k = 0;
        while k < set.len() {
            if k + 2 < set.len() && set[k + 1] == b'-' {
                hit |= set[k] <= c && c <= set[k + 2];
                k += 3;
            } else {
                hit |= set[k] == c;
                k += 1;
            }
        }
        hit != neg
    }
    let (p, s) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut si) = (0, 0);
    // Backtracking point: the last '*' seen, and where in `s` it resumes.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some(b'*') => {
                star = Some((pi + 1, si));
                pi += 1;
                continue;
            }
            Some(b'?') => Some(pi + 1),
            Some(b'[') => match class_end(p, pi) {
                Some(end) => in_class(&p[pi + 1..end], s[si]).then_some(end + 1),
                None => (s[si] == b'[').then_some(pi + 1),
            },
            Some(&c) => (s[si] == c).then_some(pi + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                si += 1;
            }
            (None, Some((sp, ss))) => {
                pi = sp;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}
