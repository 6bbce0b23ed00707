//! Turning a test selection into `ctest -R <regex>` arguments that CTest can
//! actually apply.
//!
//! CTest compiles `-R` with `cmsys::RegularExpression` (KWSys), a derivative of
//! Henry Spencer's 1986 regexp. Facts this module relies on, each measured with
//! ctest 3.25.1 (`ctest -N -R <regex>` on a lab project with 2,140 tests) and
//! read in the KWSys source (`Source/kwsys/RegularExpression.cxx`):
//!
//! * Metacharacters are exactly `^ $ . [ ( ) | ? + * \`. `{`, `}` and `]` are
//!   ordinary characters (`^cur{2}$` matches the name `cur{2}`; there is no
//!   `{m,n}` quantifier).
//! * `\X` matches the single byte `X` literally, for every `X`. There is no
//!   escape with a special meaning: `\d` matches `d`, `\t` matches `t`, `\n`
//!   matches `n`. A tab or a non-ASCII byte can only be written as itself.
//!   Matching is bytewise (UTF-8 names work, `.` matches one byte).
//! * `-R` is a search, not a full match: `-R '1\.x'` selects `t1.x`, `t11.x`,
//!   `t21.x`, ... so every alternative must be anchored with `^` and `$`.
//! * Several `-R` options in one call: the last one wins (no union).
//! * A pattern that does not compile is reported only as a line on *stdout*
//!   (`RegularExpression::compile(): Expression too big.`); ctest then selects
//!   zero tests and still exits 0. Hence the size budget below.
//! * `-R ''` selected zero tests in 3.25 (an uncompiled program matches
//!   nothing), which is an accident of the implementation, not a contract.
//!   `^$` is not a safe "nothing" either: the old `add_test(<name> <cmd>)`
//!   signature accepts an empty name, and `^$` selects that test.
//!   [`MATCH_NOTHING`] (`^$.`: end of string followed by one more byte) can
//!   match no string at all.
//!
//! # Size of a compiled pattern
//!
//! Compilation first counts the size of the program it would emit (`regsize`)
//! and refuses the pattern when that size reaches a hard limit. Every node is
//! 3 bytes (opcode + 16-bit next offset); a literal node also carries its
//! bytes and a NUL. The limit is `regsize >= 32767` in older KWSys copies and
//! `regsize >= 65535` in the one shipped with CMake 3.25.1 (measured: a pattern
//! whose counted size is 65,534 bytes compiles, 65,535 is "too big", for plain
//! and for escape-heavy patterns alike, so the counting below is exact).
//!
//! A chunk has the form `^(n1|n2|...)$` and costs
//!
//! ```text
//! 1 (MAGIC) + 3 (BRANCH) + 3 (BOL) + 3 (OPEN) + 3 (CLOSE) + 3 (EOL) + 3 (END)
//!   = 19                                            once per chunk
//! + 3 (BRANCH) + body(name)                         per alternative
//! body(name) = sum over maximal runs of unescaped bytes: run length + 4
//!            + 5 for every escaped byte (each `\X` is its own 3+1+1 node)
//!            (3, a NOTHING node, for the empty name)
//! ```
//!
//! The worst case per input byte is 5 program bytes (every byte escaped), and
//! many tiny alternatives cost 3 + 5 = 8 bytes each for one-byte names; the
//! packing uses this exact count, not an average, so no input can overflow.
//! The pattern *text* is never longer than its program (one text byte yields at
//! least one program byte), so the budget also bounds the argument length.

use std::error::Error;
use std::fmt;

/// Conservative budget for one regex, in bytes of compiled cmsys program (see
/// the module documentation for how a pattern's program size is counted).
///
/// Derivation: the smallest limit in any KWSys version is "program size must
/// be below 32,767 bytes" (CMake 3.25.1 itself allows up to 65,534). The
/// counting in this module matched ctest 3.25.1 to the byte at that limit, so
/// 32,766 would already be safe; 30,000 keeps a margin of about 8% against an
/// unknown variant of the counting and also keeps every pattern's text under
/// 30,000 characters (below the 32,767-character Windows command line).
pub const MAX_REGEX_BYTES: usize = 30_000;

/// A pattern that matches no test name, not even an empty one (`$` must be at
/// the end of the name, and `.` then needs one more byte).
pub const MATCH_NOTHING: &str = "^$.";

/// Program bytes of `^(` `)$` plus MAGIC and END around the alternatives.
const CHUNK_OVERHEAD: usize = 19;
/// Program bytes of the BRANCH node in front of every alternative.
const ALTERNATIVE_OVERHEAD: usize = 3;

/// Bytes that [`escape_name`] prefixes with a backslash: the cmsys
/// metacharacters plus `]`, `{` and `}`, which are literal in cmsys today but
/// are metacharacters in most other dialects; escaping them costs a few bytes
/// and keeps the patterns literal should KWSys ever grow `{m,n}`.
fn needs_escape(byte: u8) -> bool {
    b"^$.[]()|?+*\\{}".contains(&byte)
}

/// Escapes one test name so that cmsys RegularExpression matches it literally.
///
/// Only ASCII punctuation is ever escaped (never a letter or digit, so no
/// escape can acquire a meaning such as `\d` in some future version); all other
/// characters, including spaces, tabs and non-ASCII text, are copied as they
/// are, which cmsys matches byte for byte. The result is not anchored.
#[must_use]
pub fn escape_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + name.len() / 4);
    for ch in name.chars() {
        if ch.is_ascii() && needs_escape(ch as u8) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Program bytes of one escaped name as the body of an alternative.
fn body_bytes(name: &str) -> usize {
    if name.is_empty() {
        return 3; // an empty branch compiles to one NOTHING node
    }
    let mut total = 0;
    let mut run = 0;
    for &byte in name.as_bytes() {
        if needs_escape(byte) {
            if run > 0 {
                total += 3 + run + 1;
                run = 0;
            }
            total += 3 + 1 + 1;
        } else {
            run += 1;
        }
    }
    if run > 0 {
        total += 3 + run + 1;
    }
    total
}

/// Program bytes that `^(` + the escaped `names` joined by `|` + `)$` compiles
/// to in cmsys RegularExpression; the measure that [`regex_chunks`] keeps at or
/// below [`MAX_REGEX_BYTES`] for every chunk.
#[must_use]
pub fn chunk_program_bytes(names: &[&str]) -> usize {
    CHUNK_OVERHEAD
        + names
            .iter()
            .map(|name| ALTERNATIVE_OVERHEAD + body_bytes(name))
            .sum::<usize>()
}

/// A test name that cannot be selected with one `ctest -R` line: either it is
/// too long to fit in one regex of at most [`MAX_REGEX_BYTES`], or it contains
/// a byte that a one-regex-per-line output cannot carry (a line feed or a
/// carriage return) or that cmsys cannot see (NUL ends its C string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexTooLong {
    /// The offending test name.
    pub name: String,
}

impl fmt::Display for RegexTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 80;
        let shown: String = self.name.chars().take(SHOWN).collect();
        let ellipsis = if self.name.chars().count() > SHOWN {
            "..."
        } else {
            ""
        };
        if self.name.contains(['\n', '\r']) {
            write!(
                f,
                "test name {shown:?}{ellipsis} contains a line break, which a one-line `ctest -R` regex cannot carry"
            )
        } else if self.name.contains('\0') {
            write!(
                f,
                "test name {shown:?}{ellipsis} contains a NUL byte, which `ctest -R` cannot express"
            )
        } else {
            write!(
                f,
                "test name {shown:?}{ellipsis} ({} bytes) is too long for one `ctest -R` regex: alone it compiles to {} bytes, the budget is {MAX_REGEX_BYTES}",
                self.name.len(),
                chunk_program_bytes(&[self.name.as_str()]),
            )
        }
    }
}

impl Error for RegexTooLong {}

fn unrepresentable(name: &str) -> bool {
    name.contains(['\n', '\r', '\0'])
}

fn render(names: &[&str]) -> String {
    let mut out = String::from("^(");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        out.push_str(&escape_name(name));
    }
    out.push_str(")$");
    out
}

/// Splits a sorted, de-duplicated list of test names into anchored regexes of
/// the form `^(name1|name2|...)$`, each guaranteed to compile in ctest (each
/// at most [`MAX_REGEX_BYTES`] by [`chunk_program_bytes`]), whose union matches
/// exactly those names and no other test name.
///
/// Names keep their input order, packed greedily; adjacent duplicates are
/// dropped. An empty list yields the single pattern [`MATCH_NOTHING`].
///
/// # Errors
///
/// [`RegexTooLong`] naming the first name that cannot be selected by one regex
/// on its own: alone it exceeds [`MAX_REGEX_BYTES`], or it contains a line
/// feed, carriage return or NUL.
pub fn regex_chunks(names: &[&str]) -> Result<Vec<String>, RegexTooLong> {
    if names.is_empty() {
        return Ok(vec![MATCH_NOTHING.to_string()]);
    }
    let mut chunks = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut current_bytes = CHUNK_OVERHEAD;
    let mut previous: Option<&str> = None;
    for &name in names {
        if previous == Some(name) {
            continue;
        }
        previous = Some(name);
        let cost = ALTERNATIVE_OVERHEAD + body_bytes(name);
        if unrepresentable(name) || CHUNK_OVERHEAD + cost > MAX_REGEX_BYTES {
            return Err(RegexTooLong {
                name: name.to_string(),
            });
        }
        if !current.is_empty() && current_bytes + cost > MAX_REGEX_BYTES {
            chunks.push(render(&current));
            current.clear();
            current_bytes = CHUNK_OVERHEAD;
        }
        current.push(name);
        current_bytes += cost;
    }
    chunks.push(render(&current));
    Ok(chunks)
}

/// A model of the first (size-counting) pass of `cmsys::RegularExpression::
/// compile` for any pattern: the program size in bytes, or `None` where cmsys
/// refuses the pattern for a reason other than size (unmatched parenthesis or
/// bracket, trailing backslash, `*`/`+`/`?` with nothing before them, nested
/// repetition, an empty `*`/`+` operand, an invalid range, more than nine
/// groups). The size limit itself is not applied here: compare with
/// [`MAX_REGEX_BYTES`]. Bytes after a NUL are ignored, as in the C code.
///
/// It is independent of [`chunk_program_bytes`] and lets tests check that
/// estimate against the compiler's own rules for every emitted pattern.
#[must_use]
pub fn cmsys_program_size(pattern: &str) -> Option<usize> {
    let bytes = pattern.as_bytes();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let mut model = SizeModel {
        pattern: &bytes[..end],
        at: 0,
        size: 1, // MAGIC
        groups: 1,
    };
    model.reg(false)?;
    Some(model.size)
}

const HASWIDTH: u8 = 1;
const SIMPLE: u8 = 2;
const SPSTART: u8 = 4;
const WORST: u8 = 0;
/// `RegularExpressionMatch::NSUBEXP`: group numbers start at 1 and must stay
/// below it.
const NSUBEXP: usize = 10;
const NODE: usize = 3;

fn is_mult(byte: u8) -> bool {
    matches!(byte, b'*' | b'+' | b'?')
}

/// KWSys `META`: where a run of ordinary characters stops.
fn is_meta(byte: u8) -> bool {
    b"^$.[()|?+*\\".contains(&byte)
}

struct SizeModel<'a> {
    pattern: &'a [u8],
    at: usize,
    size: usize,
    groups: usize,
}

impl SizeModel<'_> {
    /// The byte at the parse position; 0 past the end, like the C string.
    fn peek(&self) -> u8 {
        self.pattern.get(self.at).copied().unwrap_or(0)
    }

    fn reg(&mut self, paren: bool) -> Option<u8> {
        let mut flags = HASWIDTH;
        if paren {
            if self.groups >= NSUBEXP {
                return None;
            }
            self.groups += 1;
            self.size += NODE; // OPEN
        }
        loop {
            let branch = self.branch()?;
            if branch & HASWIDTH == 0 {
                flags &= !HASWIDTH;
            }
            flags |= branch & SPSTART;
            if self.peek() == b'|' {
                self.at += 1;
            } else {
                break;
            }
        }
        self.size += NODE; // CLOSE or END
        if paren {
            if self.peek() != b')' {
                return None;
            }
            self.at += 1;
        } else if self.peek() != 0 {
            return None;
        }
        Some(flags)
    }

    fn branch(&mut self) -> Option<u8> {
        let mut flags = WORST;
        self.size += NODE; // BRANCH
        let mut pieces = 0;
        while !matches!(self.peek(), 0 | b'|' | b')') {
            let piece = self.piece()?;
            flags |= piece & HASWIDTH;
            if pieces == 0 {
                flags |= piece & SPSTART;
            }
            pieces += 1;
        }
        if pieces == 0 {
            self.size += NODE; // NOTHING
        }
        Some(flags)
    }

    fn piece(&mut self) -> Option<u8> {
        let atom = self.atom()?;
        let op = self.peek();
        if !is_mult(op) {
            return Some(atom);
        }
        if atom & HASWIDTH == 0 && op != b'?' {
            return None;
        }
        let flags = if op != b'+' {
            WORST | SPSTART
        } else {
            WORST | HASWIDTH
        };
        self.size += match op {
            b'*' | b'+' if atom & SIMPLE != 0 => NODE, // STAR or PLUS
            b'*' | b'+' => 4 * NODE,                   // BRANCH, BACK, BRANCH, NOTHING
            _ => 3 * NODE,                             // '?': BRANCH, BRANCH, NOTHING
        };
        self.at += 1;
        if is_mult(self.peek()) {
            return None;
        }
        Some(flags)
    }

    fn atom(&mut self) -> Option<u8> {
        let byte = self.peek();
        self.at += 1;
        match byte {
            b'^' | b'$' => {
                self.size += NODE;
                Some(WORST)
            }
            b'.' => {
                self.size += NODE;
                Some(HASWIDTH | SIMPLE)
            }
            b'[' => {
                self.size += NODE; // ANYOF or ANYBUT
                if self.peek() == b'^' {
                    self.at += 1;
                }
                if matches!(self.peek(), b']' | b'-') {
                    self.size += 1;
                    self.at += 1;
                }
                while !matches!(self.peek(), 0 | b']') {
                    if self.peek() == b'-' {
                        self.at += 1;
                        if matches!(self.peek(), 0 | b']') {
                            self.size += 1;
                        } else {
                            let first = usize::from(self.pattern[self.at - 2]) + 1;
                            let last = usize::from(self.pattern[self.at]);
                            if first > last + 1 {
                                return None;
                            }
                            self.size += last + 1 - first;
                            self.at += 1;
                        }
                    } else {
                        self.size += 1;
                        self.at += 1;
                    }
                }
                self.size += 1; // NUL
                if self.peek() != b']' {
                    return None;
                }
                self.at += 1;
                Some(HASWIDTH | SIMPLE)
            }
            b'(' => {
                let inner = self.reg(true)?;
                Some(inner & (HASWIDTH | SPSTART))
            }
            0 | b'|' | b')' | b'?' | b'+' | b'*' => None,
            b'\\' => {
                if self.peek() == 0 {
                    return None;
                }
                self.at += 1;
                self.size += NODE + 2; // EXACTLY, the byte, NUL
                Some(HASWIDTH | SIMPLE)
            }
            _ => {
                self.at -= 1;
                let rest = &self.pattern[self.at..];
                let mut len = rest.iter().take_while(|&&b| !is_meta(b)).count();
                let ender = rest.get(len).copied().unwrap_or(0);
                if len > 1 && is_mult(ender) {
                    len -= 1; // the last byte is the operand of the repetition
                }
                self.size += NODE + len + 1;
                self.at += len;
                Some(if len == 1 {
                    HASWIDTH | SIMPLE
                } else {
                    HASWIDTH
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a chunk back into the literal names it selects; panics if the
    /// chunk is anything but `^(literal|literal|...)$`.
    fn alternatives(chunk: &str) -> Vec<String> {
        let body = chunk
            .strip_prefix("^(")
            .and_then(|rest| rest.strip_suffix(")$"))
            .unwrap_or_else(|| panic!("not an anchored group: {chunk:?}"));
        let mut names = vec![String::new()];
        let mut chars = body.chars();
        while let Some(ch) = chars.next() {
            match ch {
                '\\' => {
                    let escaped = chars.next().expect("trailing backslash");
                    assert!(
                        escaped.is_ascii_punctuation(),
                        "escaped a non-punctuation character: {escaped:?}"
                    );
                    names.last_mut().unwrap().push(escaped);
                }
                '|' => names.push(String::new()),
                ch if ch.is_ascii() && is_meta(ch as u8) => {
                    panic!("unescaped metacharacter {ch:?} in {chunk:?}")
                }
                ch => names.last_mut().unwrap().push(ch),
            }
        }
        names
    }

    fn check(names: &[&str]) -> Vec<String> {
        let chunks = regex_chunks(names).expect("names fit");
        let mut back = Vec::new();
        for chunk in &chunks {
            let modelled = cmsys_program_size(chunk).expect("cmsys accepts the chunk");
            assert!(modelled <= MAX_REGEX_BYTES, "{modelled} bytes");
            let parsed = alternatives(chunk);
            let refs: Vec<&str> = parsed.iter().map(String::as_str).collect();
            assert_eq!(chunk_program_bytes(&refs), modelled, "estimate == model");
            assert!(
                chunk.len() <= modelled,
                "text is never longer than the program"
            );
            back.extend(parsed);
        }
        let mut expected: Vec<&str> = names.to_vec();
        expected.dedup();
        assert_eq!(back, expected);
        chunks
    }

    #[test]
    fn escaping_table() {
        let table = [
            ("^", r"\^"),
            ("$", r"\$"),
            (".", r"\."),
            ("[", r"\["),
            ("]", r"\]"),
            ("(", r"\("),
            (")", r"\)"),
            ("|", r"\|"),
            ("?", r"\?"),
            ("+", r"\+"),
            ("*", r"\*"),
            ("\\", r"\\"),
            ("{", r"\{"),
            ("}", r"\}"),
            ("-", "-"),
            (":", ":"),
            ("/", "/"),
            ("#", "#"),
            ("\"", "\""),
            ("'", "'"),
            (";", ";"),
            (" ", " "),
            ("\t", "\t"),
            ("~%&!@<>=,`_", "~%&!@<>=,`_"),
            ("abcXYZ019", "abcXYZ019"),
            ("ünï", "ünï"),
            ("t1.x", r"t1\.x"),
            ("suite::case[3](a|b)", r"suite::case\[3\]\(a\|b\)"),
            ("", ""),
        ];
        for (name, escaped) in table {
            assert_eq!(escape_name(name), escaped, "escaping {name:?}");
        }
    }

    #[test]
    fn every_ascii_punctuation_round_trips() {
        let all: String = (0x20u8..0x7f).map(char::from).collect();
        check(&[all.as_str()]);
    }

    #[test]
    fn empty_selection_matches_nothing() {
        assert_eq!(regex_chunks(&[]).unwrap(), vec![MATCH_NOTHING.to_string()]);
        assert!(cmsys_program_size(MATCH_NOTHING).is_some());
    }

    #[test]
    fn single_name_and_empty_name() {
        assert_eq!(
            regex_chunks(&["a.b"]).unwrap(),
            vec![r"^(a\.b)$".to_string()]
        );
        assert_eq!(regex_chunks(&[""]).unwrap(), vec!["^()$".to_string()]);
        check(&["", "a", "b"]);
    }

    #[test]
    fn adjacent_duplicates_are_dropped() {
        assert_eq!(
            regex_chunks(&["a", "a", "b"]).unwrap(),
            vec!["^(a|b)$".to_string()]
        );
    }

    #[test]
    fn body_bytes_follow_the_compiler() {
        for name in [
            "x", "xy", "a.b", ".", "..", "a..b", "(((", "t1.x", "", "ünï", "a{2}",
        ] {
            let pattern = format!("^({})$", escape_name(name));
            assert_eq!(
                cmsys_program_size(&pattern),
                Some(chunk_program_bytes(&[name])),
                "{pattern}"
            );
        }
        // Hand counts: 19 + 3 + (2+4) + 5 + (1+4) for t1.x.
        assert_eq!(chunk_program_bytes(&["t1.x"]), 38);
        // Every byte escaped: 5 bytes each.
        assert_eq!(chunk_program_bytes(&["...."]), 19 + 3 + 20);
    }

    #[test]
    fn model_matches_known_cmsys_behaviour() {
        assert_eq!(cmsys_program_size("a"), Some(1 + 3 + 5 + 3));
        assert_eq!(cmsys_program_size(""), Some(1 + 3 + 3 + 3));
        // "ab*" is EXACTLY "a", then STAR over EXACTLY "b".
        assert_eq!(cmsys_program_size("ab*"), Some(1 + 3 + 5 + 5 + 3 + 3));
        assert_eq!(
            cmsys_program_size("(ab)*"),
            Some(1 + 3 + 3 + 3 + 6 + 3 + 12 + 3)
        );
        assert_eq!(cmsys_program_size("[a-c]"), Some(1 + 3 + 3 + 3 + 1 + 3));
        assert_eq!(cmsys_program_size("a?"), Some(1 + 3 + 5 + 9 + 3));
        for bad in [
            "(",
            ")",
            "[a",
            "\\",
            "*a",
            "a**",
            "()*",
            "((((((((((a))))))))))",
            "[c-a]",
        ] {
            assert_eq!(cmsys_program_size(bad), None, "{bad}");
        }
        assert!(
            cmsys_program_size("(((((((((a)))))))))").is_some(),
            "nine groups are fine"
        );
    }

    #[test]
    fn chunk_boundary_is_exact() {
        // One name per alternative of exactly `len` plain bytes costs len + 7.
        // Fill a chunk to exactly MAX_REGEX_BYTES, then one byte more.
        let per = 100;
        let alternatives_fitting = (MAX_REGEX_BYTES - CHUNK_OVERHEAD) / (per + 7);
        let rest = MAX_REGEX_BYTES - CHUNK_OVERHEAD - alternatives_fitting * (per + 7);
        assert!(rest >= 8, "room for a last name");
        let mut names: Vec<String> = (0..alternatives_fitting)
            .map(|i| format!("{i:0>width$}", width = per))
            .collect();
        names.push("z".repeat(rest - 7));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(chunk_program_bytes(&refs), MAX_REGEX_BYTES);
        assert_eq!(check(&refs).len(), 1, "exactly at the budget: one chunk");

        names.pop();
        names.push("z".repeat(rest - 6));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(chunk_program_bytes(&refs), MAX_REGEX_BYTES + 1);
        let chunks = check(&refs);
        assert_eq!(chunks.len(), 2, "one byte over: two chunks");
        assert_eq!(alternatives(&chunks[1]), vec!["z".repeat(rest - 6)]);
    }

    #[test]
    fn worst_case_many_tiny_escaped_alternatives() {
        // Every 1-, 2- and 3-byte name made only of bytes that need an escape:
        // the most program bytes per byte of name (5) and per alternative.
        let punct = [
            "^", "$", ".", "[", "]", "(", ")", "|", "?", "+", "*", "\\", "{", "}",
        ];
        let mut owned: Vec<String> = Vec::new();
        for a in punct {
            owned.push(a.to_string());
            for b in punct {
                owned.push(format!("{a}{b}"));
                for c in punct {
                    owned.push(format!("{a}{b}{c}"));
                }
            }
        }
        owned.sort();
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        assert_eq!(refs.len(), 14 + 14 * 14 + 14 * 14 * 14);
        let chunks = check(&refs);
        assert!(chunks.len() >= 2, "{} chunks", chunks.len());
        // Greedy packing leaves less than one alternative of slack per chunk.
        for chunk in &chunks[..chunks.len() - 1] {
            assert!(cmsys_program_size(chunk).unwrap() > MAX_REGEX_BYTES - (3 + 15));
        }
    }

    #[test]
    fn pseudo_random_names_survive() {
        let alphabet: Vec<char> = "ab.()[]|?+*\\^${}- _:/ü\t".chars().collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut owned: Vec<String> = (0..4000)
            .map(|_| {
                let len = (next() % 40) as usize;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            })
            .collect();
        owned.sort();
        owned.dedup();
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let chunks = check(&refs);
        assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    }

    #[test]
    fn single_huge_name() {
        // Every byte escaped: 19 + 3 + 5n <= 30_000  =>  n <= 5995.
        let fits = ".".repeat((MAX_REGEX_BYTES - CHUNK_OVERHEAD - ALTERNATIVE_OVERHEAD) / 5);
        assert_eq!(fits.len(), 5995);
        check(&[fits.as_str()]);
        let too_long = ".".repeat(5996);
        let err = regex_chunks(&["a", too_long.as_str(), "b"]).unwrap_err();
        assert_eq!(err.name, too_long);
        let text = err.to_string();
        assert!(text.contains("too long"), "{text}");
        assert!(text.len() < 400, "the message does not repeat a huge name");

        // Plain bytes: 19 + 3 + n + 4 <= 30_000  =>  n <= 29_974.
        let plain = "p".repeat(29_974);
        check(&[plain.as_str()]);
        assert!(regex_chunks(&["p".repeat(29_975).as_str()]).is_err());
    }

    #[test]
    fn names_a_line_cannot_carry_are_refused() {
        for name in ["nl\nx", "cr\rx", "nul\0x"] {
            let err = regex_chunks(&["a", name]).unwrap_err();
            assert_eq!(err.name, name);
            assert!(!err.to_string().contains("too long"), "{err}");
        }
    }
}
