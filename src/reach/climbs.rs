//! Climbs: how a binary's bytes say that it leaves a directory for another
//! (`"/../lib/plugins"`, a bare `..`, a call of `parent_path()`), so that
//! the plugins below where it may end up are what it may load.

/// A run of path bytes (name bytes and `/`) from a binary's run-time data
/// that names a directory relative to another by climbing out of it: it has
/// a `/` and a `..` component (`"/../lib/plugins"`, a suffix a program
/// appends to a directory it computed, such as its own; `"../plugins"`;
/// `$ORIGIN/../lib` gives `/../lib`). A bare `..` is no path.
pub(super) fn climbing_path(run: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(run).ok()?;
    (text.contains('/') && text.split('/').any(|part| part == "..")).then_some(text)
}

/// How a binary's bytes say that it leaves a directory for another.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Climb {
    /// A [`climbing_path`], joined to the directory it starts from.
    Path(String),
    /// A way out of any directory, by as many levels as the program likes:
    /// a dynamic symbol of a function that gives a directory's parent, or a
    /// bare `..` string ([`unbounded_climb`]). Where it ends is unknown, so
    /// the binary may load any plugin.
    Anywhere(&'static str),
}

/// The path of a [`Climb::Path`] that is relative (no leading `/`: it may
/// be opened as it stands, from the working directory).
pub(super) fn relative_climb(c: &Climb) -> Option<&str> {
    match c {
        Climb::Path(p) if !p.starts_with('/') => Some(p),
        _ => None,
    }
}

/// Functions that give the parent of a directory, as their names stand in a
/// binary's dynamic string table when it calls them from a shared library,
/// each with its name in words (`QDir d(appDir); d.cdUp(); d.cd("plugins")`;
/// `exe.parent_path().parent_path() / "lib"`; `dirname(self)`).
const PARENT_FUNCTIONS: &[(&str, &str)] = &[
    ("dirname", "dirname()"),
    (
        "_ZNKSt10filesystem7__cxx114path11parent_pathEv",
        "std::filesystem::path::parent_path()",
    ),
    (
        "_ZNKSt10filesystem4path11parent_pathEv",
        "std::filesystem::path::parent_path()",
    ),
    (
        "_ZNKSt12experimental10filesystem2v17__cxx114path11parent_pathEv",
        "std::experimental::filesystem::path::parent_path()",
    ),
    (
        "_ZNK5boost10filesystem4path11parent_pathEv",
        "boost::filesystem::path::parent_path()",
    ),
    ("_ZN4QDir4cdUpEv", "QDir::cdUp()"),
    ("_ZNK9QFileInfo4pathEv", "QFileInfo::path()"),
    (
        "_ZNK9QFileInfo12absolutePathEv",
        "QFileInfo::absolutePath()",
    ),
    ("_ZNK9QFileInfo3dirEv", "QFileInfo::dir()"),
    ("_ZNK9QFileInfo11absoluteDirEv", "QFileInfo::absoluteDir()"),
];

/// A whole run of path bytes that climbs out of a directory by an unknown
/// number of levels ([`Climb::Anywhere`]): one of the [`PARENT_FUNCTIONS`],
/// or `..` on its own (`dir / ".." / "lib"`, `QDir::cd("..")`), in words.
pub(super) fn unbounded_climb(run: &[u8]) -> Option<&'static str> {
    if run == b".." {
        return Some("\"..\"");
    }
    PARENT_FUNCTIONS
        .iter()
        .find(|(symbol, _)| symbol.as_bytes() == run)
        .map(|(_, words)| *words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbing_paths_need_a_slash_and_a_parent_component() {
        let climbs = |s: &str| climbing_path(s.as_bytes()).map(str::to_owned);
        assert_eq!(
            climbs("/../lib/plugins").as_deref(),
            Some("/../lib/plugins")
        );
        assert_eq!(climbs("../plugins").as_deref(), Some("../plugins"));
        assert_eq!(climbs("bin/../lib").as_deref(), Some("bin/../lib"));
        assert_eq!(climbs("/..").as_deref(), Some("/.."));
        for none in ["..", "...", "a/b", "/usr/lib", "lib..so/x", "a/.../b", ""] {
            assert_eq!(climbs(none), None, "{none:?}");
        }
    }

    #[test]
    fn unbounded_climbs_are_a_bare_parent_or_a_parent_function() {
        assert_eq!(unbounded_climb(b".."), Some("\"..\""));
        assert_eq!(unbounded_climb(b"dirname"), Some("dirname()"));
        assert_eq!(unbounded_climb(b"_ZN4QDir4cdUpEv"), Some("QDir::cdUp()"));
        assert_eq!(
            unbounded_climb(b"_ZNKSt10filesystem7__cxx114path11parent_pathEv"),
            Some("std::filesystem::path::parent_path()")
        );
        for none in [
            &b"..."[..],
            b"/..",
            b"../lib",
            b"dirname2",
            b"xdirname",
            b"_ZN4QDir2cdERK7QString",
            b"",
        ] {
            assert_eq!(unbounded_climb(none), None, "{none:?}");
        }
    }
}
