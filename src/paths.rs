//! One canonical form for every path the tool compares.
//!
//! CMake keeps the *logical* configured spelling of paths (symlinks are not
//! resolved, `..` is folded), so evidence is compared lexically: a path is
//! joined to its base, `.`/`..`/repeated slashes are folded, and the result is
//! expressed relative to the source root (or the build root). Symlinks are
//! resolved only where it adds safety: a changed path that lexically lies inside
//! the source root but whose real location is outside it is rejected, and the
//! real spellings of evidence files reached through in-tree symlinks are added
//! as aliases so either spelling of a change is recognised.
//!
//! Invariant: [`fold`] never produces `.` or `..` segments, never a trailing
//! slash (except the root `/`), and never two consecutive slashes.

use camino::{Utf8Path, Utf8PathBuf};

/// Lexically folds an absolute path: removes `.` segments, empty segments and
/// resolves `..` against the preceding segment (`/..` stays `/`).
///
/// `path` must be absolute (start with `/`); relative input is treated as if it
/// started at `/`.
pub fn fold(path: &str) -> String {
    if surely_folded(path) {
        return path.to_owned();
    }
    let mut out = String::with_capacity(path.len());
    push_folded(&mut out, path);
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Appends the segments of `path` to `out` (itself folded, without a trailing
/// slash; empty for `/`), folding `.`, `..` and empty segments on the way.
fn push_folded(out: &mut String, path: &str) {
    let b = path.as_bytes();
    let mut start = 0;
    while start <= b.len() {
        let end = b[start..]
            .iter()
            .position(|&c| c == b'/')
            .map_or(b.len(), |k| start + k);
        // Both bounds are at a '/' or an end of `path`: char boundaries.
        match &path[start..end] {
            "" | "." => {}
            ".." => out.truncate(out.rfind('/').unwrap_or(0)),
            seg => {
                out.push('/');
                out.push_str(seg);
            }
        }
        start = end + 1;
    }
}

/// Fast check that an absolute path is already in folded form: no `//`, no
/// `.` or `..` segment, no trailing slash. Runs for millions of depfile paths:
/// one scan for a `/` followed by `/` or `.` (16 bytes at a time on x86-64)
/// clears almost every path; only one that has such a pair is looked at
/// segment by segment.
pub fn is_folded(path: &str) -> bool {
    let b = path.as_bytes();
    if b.first() != Some(&b'/') {
        return false;
    }
    if b.len() == 1 {
        return true;
    }
    if b[b.len() - 1] == b'/' {
        return false;
    }
    // Rare: `//` or a segment starting with a dot; look at each segment.
    !has_slash_pair(b)
        || !path[1..]
            .split('/')
            .any(|seg| matches!(seg, "" | "." | ".."))
}

/// [`is_folded`] without the look at each segment: `false` also for a path
/// with a segment that merely starts with a dot (`/a/.b`). For callers that
/// fold the path when this says no (folding a folded path changes nothing).
fn surely_folded(path: &str) -> bool {
    let b = path.as_bytes();
    b.first() == Some(&b'/') && (b.len() == 1 || (b[b.len() - 1] != b'/' && !has_slash_pair(b)))
}

/// Whether some `/` in `b` is followed by `/` or `.`.
fn has_slash_pair(b: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    let from = match slash_pair_sse2(b) {
        Ok(found) => return found,
        Err(from) => from,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let from = 0;
    b[from..]
        .windows(2)
        .any(|w| w[0] == b'/' && matches!(w[1], b'/' | b'.'))
}

/// [`has_slash_pair`] for pairs starting 16 positions at a time, with SSE2
/// (part of the x86-64 baseline): `Ok(true)` when it found one, else
/// `Err(i)`: no pair starts before `i`, the rest is the caller's.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn slash_pair_sse2(b: &[u8]) -> Result<bool, usize> {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let mut i = 0;
    while i + 17 <= b.len() {
        // SAFETY: SSE2 is always available on x86-64; the two unaligned loads
        // read b[i..i + 16] and b[i + 1..i + 17], in bounds by the loop condition.
        let mask = unsafe {
            let here = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
            let next = _mm_loadu_si128(b.as_ptr().add(i + 1).cast::<__m128i>());
            let slash = _mm_set1_epi8(b'/' as i8);
            let pair = _mm_and_si128(
                _mm_cmpeq_epi8(here, slash),
                _mm_or_si128(
                    _mm_cmpeq_epi8(next, slash),
                    _mm_cmpeq_epi8(next, _mm_set1_epi8(b'.' as i8)),
                ),
            );
            _mm_movemask_epi8(pair)
        };
        if mask != 0 {
            return Ok(true);
        }
        i += 16;
    }
    Err(i)
}

/// Joins `path` to `base` (when relative) and folds the result.
pub fn join_fold(base: &str, path: &str) -> String {
    if path.starts_with('/') {
        fold(path)
    } else {
        let mut s = String::with_capacity(base.len() + 1 + path.len());
        s.push_str(base);
        s.push('/');
        s.push_str(path);
        if !surely_folded(&s) {
            // Usually only `path` needs folding (`../lib/libx.a` against a
            // folded directory): keep `base` as it is then.
            s.truncate(if surely_folded(base) && base != "/" {
                base.len()
            } else {
                0
            });
            if s.is_empty() {
                push_folded(&mut s, base);
            }
            push_folded(&mut s, path);
            if s.is_empty() {
                s.push('/');
            }
        }
        s
    }
}

/// Whether [`join_fold`]`(base, path) == expected`, without building the
/// join when `expected` (folded) is spelled as the plain join.
pub fn joins_to(base: &str, path: &str, expected: &str) -> bool {
    let plain = !path.starts_with('/')
        && expected.len() == base.len() + 1 + path.len()
        && expected.starts_with(base)
        && expected.as_bytes()[base.len()] == b'/'
        && expected.ends_with(path);
    if plain && is_folded(expected) {
        return true;
    }
    join_fold_cow(base, path) == expected
}

/// Like [`join_fold`], but borrows `path` when it is already absolute and folded
/// (the common case for compiler dependency paths), avoiding an allocation.
pub fn join_fold_cow<'a>(base: &str, path: &'a str) -> std::borrow::Cow<'a, str> {
    if surely_folded(path) {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(join_fold(base, path))
    }
}

/// Returns `path` relative to `root` when `path` is `root` itself or lies
/// below it (both must be folded). `Some("")` means the root itself.
pub fn strip_root<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    if root == "/" {
        return Some(path.trim_start_matches('/'));
    }
    let rest = path.strip_prefix(root)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

/// `path` relative to `root` when inside it, else `path` unchanged (for display).
pub fn relative_to(path: &str, root: &str) -> String {
    strip_root(path, root).unwrap_or(path).to_owned()
}

/// True when `path` (folded) is `root` or below it.
#[inline]
pub fn is_within(path: &str, root: &str) -> bool {
    let (p, r) = (path.as_bytes(), root.as_bytes());
    if r == b"/" {
        return true;
    }
    if p.len() < r.len() {
        return false;
    }
    // Most depfile prerequisites are system headers: reject them on the first
    // eight bytes inline, before a full comparison.
    if r.len() >= 8
        && u64::from_ne_bytes([p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]])
            != u64::from_ne_bytes([r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]])
    {
        return false;
    }
    p[..r.len()] == *r && (p.len() == r.len() || p[r.len()] == b'/')
}

/// `path` as reached from directory `from` (both absolute, folded): the
/// relative spelling with `..` steps (`../web/app.js`), or `None` when they
/// share only the filesystem root.
pub fn climb_to(from: &str, path: &str) -> Option<String> {
    let mut base = from;
    let mut ups = 0usize;
    loop {
        if let Some(rel) = strip_root(path, base) {
            let mut out = "../".repeat(ups);
            out.push_str(rel);
            if out.ends_with('/') {
                out.pop();
            }
            return Some(out);
        }
        let (parent, _) = base.rsplit_once('/')?;
        if parent.is_empty() {
            return None;
        }
        base = parent;
        ups += 1;
    }
}

/// The work tree of the git repository holding `dir` (absolute, folded), when
/// it is a strict ancestor of `dir`: the nearest directory at or above `dir`
/// that has a `.git` entry (a directory, or the file of a worktree or
/// submodule). Read from the filesystem only; git is never run.
pub fn repo_root_above(dir: &str) -> Option<String> {
    let mut cur = dir;
    loop {
        if std::fs::symlink_metadata(format!("{cur}/.git")).is_ok() {
            return (cur != dir).then(|| cur.to_owned());
        }
        let (parent, _) = cur.rsplit_once('/')?;
        if parent.is_empty() {
            // `/` itself: a repository at the filesystem root is no scope.
            return None;
        }
        cur = parent;
    }
}

/// The candidate `word` was most likely meant as: the one equal to it but
/// for case, else the one nearest by edit distance (at most a third of its
/// length, and at least one edit); ties go to the first.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c.eq_ignore_ascii_case(word) {
            return Some(c);
        }
        let d = edit_distance(word, c);
        if d * 3 <= word.chars().count().max(3) && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The current working directory as a folded UTF-8 string.
pub fn current_dir() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let cwd = Utf8PathBuf::from_path_buf(cwd).ok()?;
    Some(fold(cwd.as_str()))
}

/// Makes a user-given directory absolute (against the working directory) and folds it.
pub fn absolute_dir(p: &Utf8Path) -> Option<String> {
    if p.is_absolute() {
        Some(fold(p.as_str()))
    } else {
        Some(join_fold(&current_dir()?, p.as_str()))
    }
}

/// Resolves symlinks (realpath) and returns a folded UTF-8 string, or `None`
/// when the path does not exist or is not UTF-8.
pub fn real(path: &str) -> Option<String> {
    let r = std::fs::canonicalize(path).ok()?;
    let r = Utf8PathBuf::from_path_buf(r).ok()?;
    Some(fold(r.as_str()))
}

/// The elements of `sorted` (sorted by `key`, folded paths) that are `dir`
/// or lie below it. Those below share the prefix `dir/` and so are one run;
/// a sibling such as `dir-old/x` or `dir.d/x` sorts between `dir` and
/// `dir/`, so a scan from `dir` that stops at the first path outside would
/// miss them all.
pub fn at_or_below<'a, T>(
    sorted: &'a [T],
    key: impl Fn(&T) -> &str,
    dir: &str,
) -> impl Iterator<Item = &'a T> + 'a {
    let dir = dir
        .strip_suffix('/')
        .filter(|d| !d.is_empty())
        .unwrap_or(dir);
    let prefix = if dir == "/" {
        "/".to_owned()
    } else {
        format!("{dir}/")
    };
    let lo = sorted.partition_point(|x| key(x) < prefix.as_str());
    let hi = lo + sorted[lo..].partition_point(|x| key(x).starts_with(prefix.as_str()));
    let exact_lo = sorted.partition_point(|x| key(x) < dir);
    let exact_hi = exact_lo + sorted[exact_lo..].partition_point(|x| key(x) == dir);
    let exact = if dir == "/" {
        &sorted[..0]
    } else {
        &sorted[exact_lo..exact_hi]
    };
    exact.iter().chain(&sorted[lo..hi])
}

#[cfg(test)]
mod tests {
    #[test]
    fn did_you_mean_prefers_case_then_nearest() {
        assert_eq!(
            super::did_you_mean("debug", ["Release", "Debug"]),
            Some("Debug")
        );
        assert_eq!(
            super::did_you_mean("core.ad", ["core.add", "core.mul"]),
            Some("core.add")
        );
        assert_eq!(super::did_you_mean("zzz", ["core.add"]), None);
    }

    #[test]
    fn climb_to_spells_paths_out_of_a_directory() {
        assert_eq!(
            super::climb_to("/r/cpp", "/r/web/a.js").as_deref(),
            Some("../web/a.js")
        );
        assert_eq!(
            super::climb_to("/r/a/b", "/r/x").as_deref(),
            Some("../../x")
        );
        assert_eq!(
            super::climb_to("/r/cpp", "/r/cpp/s.c").as_deref(),
            Some("s.c")
        );
        assert_eq!(super::climb_to("/r/cpp", "/r").as_deref(), Some(".."));
        assert_eq!(super::climb_to("/r/cpp", "/q/x"), None);
    }

    #[test]
    fn repo_root_above_finds_the_nearest_git_entry_above_only() {
        let t = tempfile::tempdir().unwrap();
        let top = super::fold(t.path().to_str().unwrap());
        std::fs::create_dir_all(format!("{top}/repo/.git")).unwrap();
        std::fs::create_dir_all(format!("{top}/repo/cpp/sub")).unwrap();
        assert_eq!(
            super::repo_root_above(&format!("{top}/repo/cpp/sub")),
            Some(format!("{top}/repo"))
        );
        assert_eq!(super::repo_root_above(&format!("{top}/repo")), None);
        // A nested work tree (a submodule's `.git` file) is the nearest one.
        std::fs::write(
            format!("{top}/repo/cpp/.git"),
            "gitdir: ../.git/modules/cpp\n",
        )
        .unwrap();
        assert_eq!(
            super::repo_root_above(&format!("{top}/repo/cpp/sub")),
            Some(format!("{top}/repo/cpp"))
        );
        assert_eq!(super::repo_root_above(&format!("{top}/repo/cpp")), None);
    }

    use super::*;

    #[test]
    fn fold_table() {
        for (input, want) in [
            ("/", "/"),
            ("/a/b", "/a/b"),
            ("/a/b/", "/a/b"),
            ("/a//b", "/a/b"),
            ("/a/./b", "/a/b"),
            ("/a/../b", "/b"),
            ("/../a", "/a"),
            ("/a/b/..", "/a"),
            ("/a/b/.", "/a/b"),
            ("/a/..b/c", "/a/..b/c"),
            ("/a/.b", "/a/.b"),
            ("/a/b c/d", "/a/b c/d"),
            ("/..", "/"),
            ("/a/../..", "/"),
            ("//", "/"),
            ("/a/../b/../../c/./", "/c"),
        ] {
            assert_eq!(fold(input), want, "{input}");
        }
    }

    #[test]
    fn join_and_strip() {
        assert_eq!(join_fold("/s/p", "x/../y.h"), "/s/p/y.h");
        assert_eq!(join_fold("/s/p", "../../../etc/passwd"), "/etc/passwd");
        assert_eq!(join_fold("/s/p", "/abs/x"), "/abs/x");
        assert_eq!(strip_root("/s/p/a.h", "/s/p"), Some("a.h"));
        assert_eq!(strip_root("/s/p", "/s/p"), Some(""));
        assert_eq!(strip_root("/s/pq/a.h", "/s/p"), None);
        assert!(!is_within("/s/pq", "/s/p"));
        assert!(is_within("/x", "/"));
    }

    proptest::proptest! {
        #[test]
        fn fold_is_idempotent_and_clean(segs in proptest::collection::vec("(\\.|\\.\\.|[a-z ]{0,3})", 0..8)) {
            let p = format!("/{}", segs.join("/"));
            let f = fold(&p);
            proptest::prop_assert_eq!(fold(&f), f.clone());
            proptest::prop_assert!(f.starts_with('/'));
            proptest::prop_assert!(!f.contains("//"));
            proptest::prop_assert!(f == "/" || !f.ends_with('/'));
            proptest::prop_assert!(!f.split('/').any(|s| s == "." || s == ".."));
            proptest::prop_assert_eq!(is_folded(&p), fold(&p) == p);
        }

        #[test]
        fn surely_folded_implies_folded(p in "[a/.]{0,40}") {
            if surely_folded(&p) {
                proptest::prop_assert!(is_folded(&p), "{}", p);
            }
            proptest::prop_assert_eq!(fold(&format!("/{p}")), fold(&fold(&format!("/{p}"))));
        }

        #[test]
        fn is_folded_is_exact(p in "/[a/.]{0,70}") {
            let slow = !p.ends_with('/') || p == "/";
            let slow = slow && !p.contains("//") && !p.split('/').skip(1).any(|s| s == "." || s == "..");
            proptest::prop_assert_eq!(is_folded(&p), slow, "{}", p);
            proptest::prop_assert_eq!(has_slash_pair(p.as_bytes()), p.contains("//") || p.contains("/."));
        }

        #[test]
        fn joins_to_is_join_fold_equality(
            base in "/[ab./]{0,8}",
            path in "[ab./]{1,8}",
            expected in "/[ab./]{0,12}",
        ) {
            let base = fold(&base);
            let plain = format!("{base}/{path}");
            for e in [expected.as_str(), plain.as_str(), fold(&plain).as_str()] {
                proptest::prop_assert_eq!(joins_to(&base, &path, e), join_fold(&base, &path) == e);
            }
        }

        #[test]
        fn join_fold_is_fold_of_the_join(
            base in proptest::collection::vec("(\\.|\\.\\.|[a-z]{0,2})", 0..5),
            rel in proptest::collection::vec("(\\.|\\.\\.|[a-z]{0,2})", 1..5),
        ) {
            let base = format!("/{}", base.join("/"));
            let rel = rel.join("/");
            if !rel.starts_with('/') {
                proptest::prop_assert_eq!(join_fold(&base, &rel), fold(&format!("{base}/{rel}")));
            }
        }
    }

    #[test]
    fn at_or_below_keeps_the_whole_run_past_longer_named_siblings() {
        let mut sorted = vec![
            "/b/p",
            "/b/p-old/x.so",
            "/b/p.d/y.so",
            "/b/p/a.so",
            "/b/p/z/b.so",
            "/b/pq/c.so",
            "/b/q/d.so",
            "/c/e.so",
        ];
        sorted.sort_unstable();
        let below =
            |dir: &str| -> Vec<&str> { at_or_below(&sorted, |s| s, dir).copied().collect() };
        assert_eq!(below("/b/p"), vec!["/b/p", "/b/p/a.so", "/b/p/z/b.so"]);
        assert_eq!(below("/b/p/"), vec!["/b/p", "/b/p/a.so", "/b/p/z/b.so"]);
        assert_eq!(below("/b/p/z"), vec!["/b/p/z/b.so"]);
        assert_eq!(below("/b/q"), vec!["/b/q/d.so"]);
        assert_eq!(below("/b/r"), Vec::<&str>::new());
        assert_eq!(below("/").len(), sorted.len());
    }
}
