//! Object paths: what CMake's `CMakeFiles/<name>.dir/` layout says of the
//! source an object (and its depfile) was compiled from.

/// The part of an object path CMake derives from its source: what follows
/// `CMakeFiles/<name>.dir/`, without the object extension (`.o`, `.obj`):
/// `CMakeFiles/core.dir/sub/a.cpp.o` gives `sub/a.cpp`, the path of the
/// source below its directory. `None` for anything else (a precompiled
/// header's `.pch`/`.gch`).
pub(crate) fn object_stem(object: &str) -> Option<&str> {
    stem_below_object_dir(split_object_dir(object)?.1)
}

/// `path` split around its first `CMakeFiles/<name>.dir/` component (at its
/// start or after a `/`): what comes before it (without the `/`) and what
/// follows it. `None` when it has none.
pub(super) fn split_object_dir(path: &str) -> Option<(&str, &str)> {
    let mut from = 0;
    while let Some(pos) = path[from..].find("CMakeFiles/") {
        let at = from + pos;
        let seg_start = at + "CMakeFiles/".len();
        if at == 0 || path.as_bytes()[at - 1] == b'/' {
            if let Some(len) = path[seg_start..].find('/') {
                if path[seg_start..seg_start + len].ends_with(".dir") {
                    return Some((&path[..at.saturating_sub(1)], &path[seg_start + len + 1..]));
                }
            }
        }
        from = seg_start;
    }
    None
}

/// An object's path below its object directory (`sub/a.cpp.o`) without the
/// object extension; `None` when it has none.
pub(crate) fn stem_below_object_dir(rest: &str) -> Option<&str> {
    let stem = rest
        .strip_suffix(".o")
        .or_else(|| rest.strip_suffix(".obj"))?;
    (!stem.is_empty() && !stem.ends_with('/')).then_some(stem)
}

/// Whether `path` is `stem` or ends with `/` followed by `stem`.
pub(crate) fn ends_with_path(path: &str, stem: &str) -> bool {
    path.strip_suffix(stem)
        .is_some_and(|head| head.is_empty() || head.ends_with('/'))
}
