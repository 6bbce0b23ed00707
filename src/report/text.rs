//! Text helpers of the report layer.

/// `s` on one line: its lines trimmed, blank ones dropped, joined by a space.
pub(crate) fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
