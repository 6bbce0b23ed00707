//! Make-rule syntax of compiler dependency files (`.d`).
//!
//! Purpose: turn the bytes of a depfile, as GCC and Clang write it with
//! `-MD -MT <obj> -MF <obj>.d`, into rules of unescaped names, the way ninja
//! 1.11 (`depfile_parser.in.cc`) and CMake's `cmGccDepfileLexer` (Makefiles
//! generator) read it. See `cmake-evidence-formats.md` §3.2 (what compilers
//! write) and §3.3 (what the readers accept). This is only the syntax layer:
//! resolving relative paths, checking targets against the object, staleness and
//! de-duplication are the caller's job.
//!
//! **Invariant.** Every returned name appeared in the file, changed only by the
//! escapes listed below. Whatever this parser cannot interpret exactly (input
//! that needs make features we do not model, or that make, ninja and CMake read
//! differently) is a [`SyntaxError`], never a guess. The depfile then does not
//! count as evidence and the caller falls back.
//!
//! A name means what GCC meant when it wrote it: the file the compiler opened.
//! Where ninja or CMake disagree on something GCC does write, GCC wins (escaped
//! tabs, `&?'"`, `\$$`). What GCC never writes and the readers disagree on is
//! rejected.
//!
//! Accepted:
//! * Names are separated by unescaped spaces and tabs. Backslash-newline
//!   (`\` + LF or `\` + CRLF) continues the rule and counts as whitespace. An
//!   unescaped LF or CRLF ends the rule. Blank lines and a missing final newline
//!   are fine.
//! * The targets end at the first unescaped `:` followed by a space, a tab, a
//!   newline, a continuation or the end of input. Any other `:` is part of a
//!   name (`C:/x.o`, `co:lon/c.h`). Prerequisites may be empty (`-MP` phony
//!   rules `hdr.h:`), and there may be many rules.
//! * Escapes: 2N+1 backslashes before a space or tab give N backslashes and that
//!   character in the name. 2N backslashes before a space or tab stay as 2N
//!   backslashes, and the name ends. `\#` gives `#` and `\:` gives `:` (any
//!   backslashes before them are kept). `$$` gives `$`. Every other backslash is
//!   literal (`C:\dir\file.h`). For an escaped tab, GCC's meaning is used; CMake
//!   and ninja 1.11 only unescape spaces. Clang writes tabs raw, and a raw tab
//!   always separates names.
//! * Any other byte, including `%`, `&`, `?`, `'`, `"` and non-ASCII UTF-8, is
//!   part of a name. GCC writes these bytes unescaped. (ninja 1.11 splits names
//!   at `&?'"`; that is a problem for the `.ninja_deps` reader, not this one.)
//!
//! Rejected, each with its own [`SyntaxError`] variant: input that is not UTF-8;
//! NUL and other control bytes, including a CR not followed by LF; a rule without
//! a separating `:` or without a target; a `$` not followed by `$` (a make
//! variable); any unescaped `#` (a make comment, but a literal to CMake and a
//! name break to ninja). This includes `-MT` targets, which GCC copies without
//! escaping, so a `#` there would mean a literal. Such targets are rare, and
//! rejecting one only costs a fallback. Also rejected: a second separator among the prerequisites (ninja keeps
//! the colon, CMake drops it, make reads a static pattern rule); `\:` followed by
//! whitespace (CMake unescapes it, ninja ends the targets there); two or more
//! backslashes before a newline (ninja ends the rule, CMake continues it); and a
//! backslash at the very end of the input.
//!
//! Performance: one `from_utf8` check (fast on ASCII), then one scan over the
//! bytes. Runs of plain name bytes are skipped 16 at a time on x86-64 (SSE2),
//! 8 at a time elsewhere (`skip_plain`). A
//! name is borrowed from the input unless it needed unescaping, so the common
//! case allocates only the rule vectors. The scan runs at several hundred MB/s
//! on one core of a loaded machine (release build).

use std::borrow::Cow;
use std::fmt;

/// One `targets: prerequisites` rule. Paths are unescaped. Borrowed when no unescaping was needed.
///
/// Both lists keep file order and duplicates. `targets` is never empty.
/// `prereqs` is empty for `-MP` phony rules such as `hdr.h:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule<'a> {
    /// Names before the separating `:`. GCC copies a `-MT` target as given,
    /// without escaping, so a target containing spaces shows up here as several
    /// names.
    pub targets: Vec<Cow<'a, str>>,
    /// Names after the separating `:`, as the compiler opened them. They may be
    /// relative and may contain `..`.
    pub prereqs: Vec<Cow<'a, str>>,
}

/// A parsed depfile: its rules in file order.
///
/// Empty input, or input with only whitespace, gives zero rules. That is
/// syntactically fine, but the caller decides it is not evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Depfile<'a> {
    /// The rules, in file order.
    pub rules: Vec<Rule<'a>>,
}

/// Why a depfile could not be interpreted exactly.
///
/// Every variant has the 1-based physical line (LF-counted) where the problem
/// was found. For [`SyntaxError::MissingColon`], that is the line where the
/// rule starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxError {
    /// The input is not valid UTF-8. `line` holds the first invalid byte.
    InvalidUtf8 {
        /// 1-based line number.
        line: usize,
    },
    /// The input has a NUL byte. Compilers never write one; this points to
    /// truncation or a corrupt file.
    NulByte {
        /// 1-based line number.
        line: usize,
    },
    /// A control byte other than tab, LF or CRLF: a lone CR, VT, FF, DEL, etc.
    /// The readers disagree on these (CMake keeps them in the name, ninja ends the name).
    ControlCharacter {
        /// 1-based line number.
        line: usize,
        /// The offending byte.
        byte: u8,
    },
    /// A rule has names but no `:` followed by whitespace or a line end.
    MissingColon {
        /// 1-based line number where the rule starts.
        line: usize,
    },
    /// A separating `:` with no target before it (`: a.h`).
    EmptyTarget {
        /// 1-based line number.
        line: usize,
    },
    /// A second separating `:` among the prerequisites (`a.o: b.c: d.h`).
    /// ninja keeps the colon in the name, CMake drops it, and make reads a
    /// static pattern rule.
    ExtraColon {
        /// 1-based line number.
        line: usize,
    },
    /// A `$` not followed by `$`: a make variable reference we cannot expand.
    UnexpandedVariable {
        /// 1-based line number.
        line: usize,
    },
    /// A `#` without a backslash before it. make reads a comment, CMake a
    /// literal, and ninja a name break. Compilers write `\#` in prerequisites.
    UnescapedHash {
        /// 1-based line number.
        line: usize,
    },
    /// `\:` followed by whitespace, a line end or end of input. CMake reads an
    /// escaped colon inside a name; ninja reads a backslash and then the
    /// separator.
    AmbiguousEscapedColon {
        /// 1-based line number.
        line: usize,
    },
    /// Two or more backslashes right before a newline. ninja reads literal
    /// backslashes and then the end of the rule; CMake reads one fewer backslash
    /// and then a continuation.
    AmbiguousContinuation {
        /// 1-based line number of the backslashes.
        line: usize,
    },
    /// The input ends with a backslash, or with a continuation followed only by
    /// whitespace: a truncated file.
    TrailingBackslash {
        /// 1-based line number.
        line: usize,
    },
}

impl SyntaxError {
    /// The 1-based line number where the error was found.
    #[must_use]
    pub fn line(&self) -> usize {
        match *self {
            SyntaxError::InvalidUtf8 { line }
            | SyntaxError::NulByte { line }
            | SyntaxError::ControlCharacter { line, .. }
            | SyntaxError::MissingColon { line }
            | SyntaxError::EmptyTarget { line }
            | SyntaxError::ExtraColon { line }
            | SyntaxError::UnexpandedVariable { line }
            | SyntaxError::UnescapedHash { line }
            | SyntaxError::AmbiguousEscapedColon { line }
            | SyntaxError::AmbiguousContinuation { line }
            | SyntaxError::TrailingBackslash { line } => line,
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SyntaxError::InvalidUtf8 { line } => write!(f, "line {line}: depfile is not valid utf-8"),
            SyntaxError::NulByte { line } => write!(f, "line {line}: depfile contains a nul byte"),
            SyntaxError::ControlCharacter { line, byte } => {
                write!(f, "line {line}: unsupported control character 0x{byte:02x}")
            }
            SyntaxError::MissingColon { line } => {
                write!(f, "line {line}: rule has no `:` between targets and prerequisites")
            }
            SyntaxError::EmptyTarget { line } => write!(f, "line {line}: rule has no target before `:`"),
            SyntaxError::ExtraColon { line } => {
                write!(f, "line {line}: second `:` separator among prerequisites")
            }
            SyntaxError::UnexpandedVariable { line } => {
                write!(f, "line {line}: `$` not followed by `$` is a make variable that cannot be expanded")
            }
            SyntaxError::UnescapedHash { line } => {
                write!(f, "line {line}: unescaped `#` (make comment or literal; compilers write `\\#`)")
            }
            SyntaxError::AmbiguousEscapedColon { line } => write!(
                f,
                "line {line}: `\\:` before whitespace or end of input is read differently by ninja and cmake"
            ),
            SyntaxError::AmbiguousContinuation { line } => write!(
                f,
                "line {line}: several backslashes before a newline are read differently by ninja and cmake"
            ),
            SyntaxError::TrailingBackslash { line } => {
                write!(f, "line {line}: backslash at end of input (truncated depfile?)")
            }
        }
    }
}

impl std::error::Error for SyntaxError {}

/// Parses a whole depfile.
///
/// See the module docs for what is accepted. On success every name is
/// unescaped and non-empty, and every rule has at least one target. A name is
/// `Cow::Borrowed` from `input` when it needed no unescaping.
///
/// # Errors
///
/// A [`SyntaxError`] for anything that cannot be interpreted exactly. Never
/// panics, whatever the input.
pub fn parse(input: &[u8]) -> Result<Depfile<'_>, SyntaxError> {
    let mut sink = Collect {
        rules: Vec::with_capacity(1),
        targets: Vec::new(),
        // Compiler depfiles list one path per ~40-80 bytes: size the first rule's list once.
        prereqs: Vec::with_capacity(input.len() / 48 + 4),
    };
    parse_into(input, &mut sink)?;
    Ok(Depfile { rules: sink.rules })
}

/// Receives the names of a depfile as [`parse_into`] reads them, without
/// collecting them first.
///
/// For each rule: its targets, then its prerequisites, then [`Sink::end_rule`]
/// (only for rules with a separating `:`; a rule without one is an error).
/// Every name is non-empty and unescaped, exactly as [`parse`] would return it.
/// The events of a file that turns out to be malformed may stop anywhere:
/// a sink must not trust what it received when `parse_into` fails.
pub trait Sink<'a> {
    /// A target of the current rule.
    fn target(&mut self, name: Cow<'a, str>);
    /// A prerequisite of the current rule.
    fn prereq(&mut self, name: Cow<'a, str>);
    /// The current rule is complete.
    fn end_rule(&mut self);
}

/// Parses a whole depfile, streaming its names to `sink`. Accepts and rejects
/// exactly what [`parse`] does.
///
/// # Errors
///
/// A [`SyntaxError`] for anything that cannot be interpreted exactly. Never
/// panics, whatever the input.
pub fn parse_into<'a>(input: &'a [u8], sink: &mut impl Sink<'a>) -> Result<(), SyntaxError> {
    let text = match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            return Err(SyntaxError::InvalidUtf8 {
                line: line_at(input, e.valid_up_to()),
            })
        }
    };
    Parser {
        text,
        bytes: input,
        pos: 0,
        line: 1,
        sink,
        targets: 0,
        in_prereqs: false,
        rule_line: 1,
    }
    .run()
}

/// The sink behind [`parse`]: collects every rule.
struct Collect<'a> {
    rules: Vec<Rule<'a>>,
    targets: Vec<Cow<'a, str>>,
    prereqs: Vec<Cow<'a, str>>,
}

impl<'a> Sink<'a> for Collect<'a> {
    fn target(&mut self, name: Cow<'a, str>) {
        self.targets.push(name);
    }
    fn prereq(&mut self, name: Cow<'a, str>) {
        self.prereqs.push(name);
    }
    fn end_rule(&mut self) {
        self.rules.push(Rule {
            targets: std::mem::take(&mut self.targets),
            prereqs: std::mem::take(&mut self.prereqs),
        });
    }
}

/// GCC-style escaping of one path (inverse of parse for a path token); used by tests and by a synthetic build generator.
///
/// Follows GCC's `libcpp/mkdeps.cc`. A space or tab becomes `\ ` or `\<TAB>`,
/// and the backslashes right before it are doubled first (`bs\ sp.h` becomes
/// `bs\\\ sp.h`). `#` becomes `\#` and `$` becomes `$$`. Nothing else changes.
///
/// As with GCC, some paths do not round-trip through [`parse`], and are
/// returned in GCC's form anyway. [`escape_round_trips`] is the exact test for
/// them. These are paths that:
/// * are empty;
/// * contain a newline, a NUL, or another control byte except tab;
/// * end with a backslash (it would escape the following separator, or form a
///   continuation);
/// * end with `:` (it would read as a separator);
/// * contain a backslash right before `:` (`\:` reads as an escaped colon, and
///   GCC does not escape `:`).
#[must_use]
pub fn escape_path(path: &str) -> String {
    if !path
        .bytes()
        .any(|b| matches!(b, b' ' | b'\t' | b'#' | b'$'))
    {
        return path.to_owned();
    }
    let mut out = String::with_capacity(path.len() + 8);
    // Backslashes seen just before the current character.
    let mut slashes = 0usize;
    for ch in path.chars() {
        match ch {
            '\\' => {
                slashes += 1;
                out.push('\\');
                continue;
            }
            ' ' | '\t' => {
                // Double the preceding backslashes, then escape the blank.
                for _ in 0..=slashes {
                    out.push('\\');
                }
                out.push(ch);
            }
            '#' => out.push_str("\\#"),
            '$' => out.push_str("$$"),
            _ => out.push(ch),
        }
        slashes = 0;
    }
    out
}

/// Whether `parse` of `escape_path(path)` used as a prerequisite gives `path`
/// back. This is exactly the list of exceptions on [`escape_path`].
#[must_use]
pub fn escape_round_trips(path: &str) -> bool {
    let bytes = path.as_bytes();
    !bytes.is_empty()
        && !bytes.iter().any(|&b| is_control(b) && b != b'\t')
        && !matches!(bytes.last(), Some(b'\\' | b':'))
        && !bytes.windows(2).any(|w| w == b"\\:")
}

/// Bytes that can be copied into a name without further checks.
static PLAIN: [bool; 256] = plain_table();

const fn plain_table() -> [bool; 256] {
    let mut table = [true; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = false;
        b += 1;
    }
    table[0x7f] = false;
    table[b' ' as usize] = false;
    table[b'#' as usize] = false;
    table[b'$' as usize] = false;
    table[b':' as usize] = false;
    table[b'\\' as usize] = false;
    table
}

/// Index of the first byte at or after `i` that is not [`PLAIN`], or
/// `bytes.len()`.
///
/// This is the hot loop. It tests 8 bytes at a time with the usual SWAR
/// formulas (`has_less`, `has_zero`). These can report a special byte that is
/// not there, but never miss one that is. A chunk that may hold one is then
/// searched byte by byte with the table, so the result is exact.
fn skip_plain(bytes: &[u8], i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        skip_plain_sse2(bytes, i)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        skip_plain_swar(bytes, i)
    }
}

/// [`skip_plain`] 16 bytes at a time with SSE2, which every x86-64 CPU has.
/// Exact: a lane is flagged only for a byte that is not [`PLAIN`] (`<= 0x20`,
/// `#`, `$`, `:`, `\`, DEL); the tail is finished with the table.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn skip_plain_sse2(bytes: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    while i + 16 <= bytes.len() {
        // SAFETY: SSE2 is part of the x86-64 baseline, so these intrinsics are
        // always available; the unaligned load reads bytes[i..i + 16], which the
        // loop condition keeps in bounds.
        let mask = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
            let eq = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
            // Unsigned `v <= 0x20`: min(v, 0x20) == v.
            let low = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x20)), v);
            let special = _mm_or_si128(
                _mm_or_si128(low, _mm_or_si128(eq(b'#'), eq(b'$'))),
                _mm_or_si128(_mm_or_si128(eq(b':'), eq(b'\\')), eq(0x7f)),
            );
            _mm_movemask_epi8(special) as u32
        };
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 16;
    }
    skip_plain_bytewise(bytes, i)
}

/// Portable [`skip_plain`].
#[cfg(any(not(target_arch = "x86_64"), test))]
fn skip_plain_swar(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // High bit set in some byte if some byte of `x` is zero.
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        // Bytes below 0x21 (controls and space), then `#`, `$`, `:`, `\`, DEL.
        let special = (v.wrapping_sub(ONES * 0x21) & !v & HIGHS)
            | has_zero(v ^ (ONES * u64::from(b'#')))
            | has_zero(v ^ (ONES * u64::from(b'$')))
            | has_zero(v ^ (ONES * u64::from(b':')))
            | has_zero(v ^ (ONES * u64::from(b'\\')))
            | has_zero(v ^ (ONES * 0x7f));
        if special != 0 {
            break;
        }
        i += 8;
    }
    skip_plain_bytewise(bytes, i)
}

/// [`skip_plain`] one byte at a time, with the table (the tail of the fast scans).
fn skip_plain_bytewise(bytes: &[u8], i: usize) -> usize {
    let rest = bytes.get(i..).unwrap_or_default();
    i + rest
        .iter()
        .position(|&b| !PLAIN[usize::from(b)])
        .unwrap_or(rest.len())
}

/// ASCII control bytes (tab, LF and CR included).
fn is_control(b: u8) -> bool {
    b < 0x20 || b == 0x7f
}

/// 1-based line of byte `offset` (the number of LFs before it, plus one).
fn line_at(bytes: &[u8], offset: usize) -> usize {
    let before = bytes.get(..offset).unwrap_or(bytes);
    1 + before.iter().filter(|&&b| b == b'\n').count()
}

/// Length of the newline (LF or CRLF) starting at `at`, if there is one.
fn newline_len(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at) {
        Some(b'\n') => Some(1),
        Some(b'\r') if bytes.get(at + 1) == Some(&b'\n') => Some(2),
        _ => None,
    }
}

struct Parser<'a, 's, S> {
    /// The whole input, already checked to be UTF-8.
    text: &'a str,
    /// `text` as bytes.
    bytes: &'a [u8],
    /// Next byte to look at.
    pos: usize,
    /// 1-based line of `pos`.
    line: usize,
    /// Where the names go.
    sink: &'s mut S,
    /// Number of targets of the rule being read.
    targets: usize,
    /// Whether the separator of the current rule has been seen.
    in_prereqs: bool,
    /// Line where the current rule's first name started.
    rule_line: usize,
}

impl<'a, S: Sink<'a>> Parser<'a, '_, S> {
    fn run(mut self) -> Result<(), SyntaxError> {
        while let Some(&byte) = self.bytes.get(self.pos) {
            // GCC's separator between names (a blank, a backslash-LF
            // continuation, the one-space indent) in one step when a name
            // follows: exactly what the arms below do byte by byte (that
            // continuation is not the file's last word, as a name follows).
            if let Some(&[b' ', b'\\', b'\n', b' ', next]) = self.bytes.get(self.pos..self.pos + 5)
            {
                if !matches!(next, b' ' | b'\t' | b'\n' | b'\r') {
                    self.pos += 4;
                    self.line += 1;
                    continue;
                }
            }
            match byte {
                b' ' | b'\t' => self.pos += 1,
                b'\n' => {
                    self.end_rule()?;
                    self.pos += 1;
                    self.line += 1;
                }
                b'\r' => match newline_len(self.bytes, self.pos) {
                    Some(n) => {
                        self.end_rule()?;
                        self.pos += n;
                        self.line += 1;
                    }
                    None => return Err(self.control(byte)),
                },
                b'\\' => match newline_len(self.bytes, self.pos + 1) {
                    // A continuation between names counts as whitespace.
                    Some(n) => {
                        // A continuation with nothing but whitespace after it: compilers
                        // never write that; it is a file cut at a line boundary.
                        let rest = &self.bytes[self.pos + 1 + n..];
                        if rest
                            .iter()
                            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                        {
                            return Err(SyntaxError::TrailingBackslash { line: self.line });
                        }
                        self.pos += 1 + n;
                        self.line += 1;
                    }
                    None => self.name()?,
                },
                b'#' => return Err(SyntaxError::UnescapedHash { line: self.line }),
                _ if is_control(byte) => return Err(self.control(byte)),
                _ => self.name()?,
            }
        }
        self.end_rule()
    }

    fn control(&self, byte: u8) -> SyntaxError {
        if byte == 0 {
            SyntaxError::NulByte { line: self.line }
        } else {
            SyntaxError::ControlCharacter {
                line: self.line,
                byte,
            }
        }
    }

    /// Called at every unescaped newline and at end of input.
    fn end_rule(&mut self) -> Result<(), SyntaxError> {
        if self.in_prereqs {
            self.sink.end_rule();
            self.targets = 0;
            self.in_prereqs = false;
            Ok(())
        } else if self.targets == 0 {
            // Blank line.
            Ok(())
        } else {
            Err(SyntaxError::MissingColon {
                line: self.rule_line,
            })
        }
    }

    /// Reads one name starting at `pos` and files it as a target or prerequisite.
    fn name(&mut self) -> Result<(), SyntaxError> {
        if !self.in_prereqs && self.targets == 0 {
            self.rule_line = self.line;
        }
        let (name, separator) = self.scan_name()?;
        if self.in_prereqs {
            if separator {
                return Err(SyntaxError::ExtraColon { line: self.line });
            }
            if !name.is_empty() {
                self.sink.prereq(name);
            }
        } else {
            if !name.is_empty() {
                self.targets += 1;
                self.sink.target(name);
            }
            if separator {
                if self.targets == 0 {
                    return Err(SyntaxError::EmptyTarget { line: self.line });
                }
                self.in_prereqs = true;
            }
        }
        Ok(())
    }

    /// Whether a `:` just before `at` is a separator: whitespace, a newline,
    /// a continuation or end of input follows it.
    fn ends_name_at(&self, at: usize) -> bool {
        match self.bytes.get(at) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r') => true,
            Some(b'\\') => newline_len(self.bytes, at + 1).is_some(),
            Some(_) => false,
        }
    }

    /// Scans one name from `pos`, which is not whitespace, a newline or a
    /// continuation. Returns the unescaped name (possibly empty when the token
    /// is a lone `:`) and whether it ended at a separating `:` (consumed).
    /// Stops before whitespace, a newline or a continuation.
    ///
    /// Always consumes at least one byte, so `run` makes progress.
    ///
    /// Every escape drops bytes from the input: `owned` collects the kept
    /// spans, and `seg` is the start of the span not yet copied. All span
    /// bounds are at ASCII bytes or the end of input, so they are char
    /// boundaries of `text`.
    fn scan_name(&mut self) -> Result<(Cow<'a, str>, bool), SyntaxError> {
        let bytes = self.bytes;
        let start = self.pos;
        let mut i = start;
        let mut seg = start;
        let mut owned: Option<String> = None;
        let mut separator = false;
        let end;
        loop {
            i = skip_plain(bytes, i);
            let Some(&byte) = bytes.get(i) else {
                end = i;
                break;
            };
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    end = i;
                    break;
                }
                b':' => {
                    if self.ends_name_at(i + 1) {
                        end = i;
                        separator = true;
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                b'$' => {
                    if bytes.get(i + 1) != Some(&b'$') {
                        return Err(SyntaxError::UnexpandedVariable { line: self.line });
                    }
                    // Keep the first `$`, drop the second.
                    self.keep(&mut owned, seg, i + 1);
                    i += 2;
                    seg = i;
                }
                b'\\' => {
                    let run_start = i;
                    let mut j = i;
                    while bytes.get(j) == Some(&b'\\') {
                        j += 1;
                    }
                    let run = j - run_start;
                    match bytes.get(j) {
                        None => return Err(SyntaxError::TrailingBackslash { line: self.line }),
                        Some(b' ' | b'\t') => {
                            if run % 2 == 1 {
                                // 2N+1 backslashes + blank: N backslashes and the blank.
                                self.keep(&mut owned, seg, run_start + run / 2);
                                seg = j;
                                i = j + 1;
                            } else {
                                // 2N backslashes stay; the blank ends the name.
                                end = j;
                                i = j;
                                break;
                            }
                        }
                        Some(b'\n' | b'\r') if newline_len(bytes, j).is_some() => {
                            if run != 1 {
                                return Err(SyntaxError::AmbiguousContinuation { line: self.line });
                            }
                            // A continuation ends the name. `Parser::run` consumes it;
                            // the name is not empty, because `run` handles a
                            // continuation at the start of a name itself.
                            end = run_start;
                            i = run_start;
                            break;
                        }
                        Some(b'#') => {
                            // Drop the last backslash, keep any before it.
                            self.keep(&mut owned, seg, j - 1);
                            seg = j;
                            i = j + 1;
                        }
                        Some(b':') => {
                            if self.ends_name_at(j + 1) {
                                return Err(SyntaxError::AmbiguousEscapedColon { line: self.line });
                            }
                            self.keep(&mut owned, seg, j - 1);
                            seg = j;
                            i = j + 1;
                        }
                        // Literal backslashes; the next byte is handled by the loop
                        // (this includes `$`, a lone CR and control bytes).
                        Some(_) => i = j,
                    }
                }
                b'#' => return Err(SyntaxError::UnescapedHash { line: self.line }),
                _ => return Err(self.control(byte)),
            }
        }
        self.pos = i;
        let name = match owned {
            Some(mut buf) => {
                buf.push_str(&self.text[seg..end]);
                Cow::Owned(buf)
            }
            None => Cow::Borrowed(&self.text[start..end]),
        };
        Ok((name, separator))
    }

    /// Appends `text[seg..until]` to the unescaped copy, creating it on first use.
    fn keep(&self, owned: &mut Option<String>, seg: usize, until: usize) {
        owned
            .get_or_insert_with(|| String::with_capacity(until.saturating_sub(seg) + 32))
            .push_str(&self.text[seg..until]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Owned, comparable form of a parse result.
    type Plain = Vec<(Vec<String>, Vec<String>)>;

    fn plain(input: &[u8]) -> Result<Plain, SyntaxError> {
        parse(input).map(|d| {
            d.rules
                .into_iter()
                .map(|r| {
                    (
                        r.targets.into_iter().map(Cow::into_owned).collect(),
                        r.prereqs.into_iter().map(Cow::into_owned).collect(),
                    )
                })
                .collect()
        })
    }

    fn rules(spec: &[(&[&str], &[&str])]) -> Plain {
        spec.iter()
            .map(|(t, p)| {
                (
                    t.iter().map(ToString::to_string).collect(),
                    p.iter().map(ToString::to_string).collect(),
                )
            })
            .collect()
    }

    const REALISTIC_GCC: &str = "\
CMakeFiles/lab.dir/m\\ a\\#in.cpp.o: /src/proj/m\\ a\\#in.cpp \\
 /usr/include/stdc-predef.h /src/proj/inc\\ dir/a\\ b.h \\
 /src/proj/we$$ird/d$$$$.h /src/proj/co:lon/c.h /src/proj/back\\slash/b.h \\
 /src/proj/pct%dir/p.h rel/r.h /src/proj/hash\\#.h \\
 /usr/include/c++/12/vector \\
 /usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h \\
 /src/proj/bs\\\\\\ sp.h
";

    #[test]
    fn good_inputs() {
        let cases: Vec<(&str, &[u8], Plain)> = vec![
            (
                "gcc continuation, 1-space indent",
                b"a.o: a.c \\\n /usr/include/stdio.h \\\n b.h\n",
                rules(&[(&["a.o"], &["a.c", "/usr/include/stdio.h", "b.h"])]),
            ),
            (
                "clang continuation, 2-space indent",
                b"a.o: a.c \\\n  b.h \\\n  c.h\n",
                rules(&[(&["a.o"], &["a.c", "b.h", "c.h"])]),
            ),
            (
                "continuation right after the name and after the colon",
                b"a.o:\\\n a.c\\\n b.h\n",
                rules(&[(&["a.o"], &["a.c", "b.h"])]),
            ),
            (
                "escaped spaces",
                b"a.o: inc\\ dir/a\\ b.h \\ lead.h\n",
                rules(&[(&["a.o"], &["inc dir/a b.h", " lead.h"])]),
            ),
            (
                "2N+1 backslashes before a space: bs\\\\\\ sp.h",
                b"a.o: bs\\\\\\ sp.h\n",
                rules(&[(&["a.o"], &["bs\\ sp.h"])]),
            ),
            (
                "2N backslashes before a space end the name",
                b"a.o: x\\\\ y.h\n",
                rules(&[(&["a.o"], &["x\\\\", "y.h"])]),
            ),
            (
                "escaped tab and tab separators",
                b"a.o:\ta.c\tb\\\tc.h\n",
                rules(&[(&["a.o"], &["a.c", "b\tc.h"])]),
            ),
            (
                "dollars",
                b"a.o: we$$ird/d$$$$.h \\$$x.h\n",
                rules(&[(&["a.o"], &["we$ird/d$$.h", "\\$x.h"])]),
            ),
            (
                "escaped hash",
                b"a.o: hash\\#.h \\#lead.h bs\\\\#.h\n",
                rules(&[(&["a.o"], &["hash#.h", "#lead.h", "bs\\#.h"])]),
            ),
            (
                "-MP phony rules, gcc (no blank lines)",
                b"a.o: a.c b.h c.h\nb.h:\nc.h:\n",
                rules(&[(&["a.o"], &["a.c", "b.h", "c.h"]), (&["b.h"], &[]), (&["c.h"], &[])]),
            ),
            (
                "-MP phony rules, clang (blank lines)",
                b"a.o: a.c \\\n  b.h\n\nb.h:\n\nc.h:\n",
                rules(&[(&["a.o"], &["a.c", "b.h"]), (&["b.h"], &[]), (&["c.h"], &[])]),
            ),
            (
                "CRLF everywhere",
                b"a.o: a.c \\\r\n b\\ c.h\r\n\r\nb\\ c.h:\r\n",
                rules(&[(&["a.o"], &["a.c", "b c.h"]), (&["b c.h"], &[])]),
            ),
            ("no final newline", b"a.o: a.c b.h", rules(&[(&["a.o"], &["a.c", "b.h"])])),
            ("phony rule at end of input", b"a.o: a.c\nb.h:", rules(&[(&["a.o"], &["a.c"]), (&["b.h"], &[])])),
            (
                "windows paths",
                b"C:/x.o: C:\\x.h C:/y.h C:\\dir\\file.h\n",
                rules(&[(&["C:/x.o"], &["C:\\x.h", "C:/y.h", "C:\\dir\\file.h"])]),
            ),
            ("colon inside a prerequisite", b"a.o: co:lon/c.h :lead.h\n", rules(&[(&["a.o"], &["co:lon/c.h", ":lead.h"])])),
            ("escaped colon inside a name", b"a.o: x\\:y.h x\\\\:z.h\n", rules(&[(&["a.o"], &["x:y.h", "x\\:z.h"])])),
            ("space before the colon", b"a.o : a.c\n", rules(&[(&["a.o"], &["a.c"])])),
            (
                "several targets, -MT given with a space",
                b"out dir/m.o b.o: m.c\n",
                rules(&[(&["out", "dir/m.o", "b.o"], &["m.c"])]),
            ),
            ("targets continued", b"a.o \\\n b.o: m.c\n", rules(&[(&["a.o", "b.o"], &["m.c"])])),
            ("empty prerequisites", b"a.o:\n", rules(&[(&["a.o"], &[])])),
            (
                "characters GCC does not escape",
                "a.o: it's&a?\"q\"%=@[]!{}~,+.h ünï/日本.h\n".as_bytes(),
                rules(&[(&["a.o"], &["it's&a?\"q\"%=@[]!{}~,+.h", "ünï/日本.h"])]),
            ),
            ("empty input", b"", rules(&[])),
            ("only whitespace", b" \t\n\r\n  \n", rules(&[])),
            (
                "realistic gcc depfile",
                REALISTIC_GCC.as_bytes(),
                rules(&[(
                    &["CMakeFiles/lab.dir/m a#in.cpp.o"],
                    &[
                        "/src/proj/m a#in.cpp",
                        "/usr/include/stdc-predef.h",
                        "/src/proj/inc dir/a b.h",
                        "/src/proj/we$ird/d$$.h",
                        "/src/proj/co:lon/c.h",
                        "/src/proj/back\\slash/b.h",
                        "/src/proj/pct%dir/p.h",
                        "rel/r.h",
                        "/src/proj/hash#.h",
                        "/usr/include/c++/12/vector",
                        "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h",
                        "/src/proj/bs\\ sp.h",
                    ],
                )]),
            ),
        ];
        for (name, input, expected) in cases {
            assert_eq!(plain(input), Ok(expected), "case: {name}");
        }
    }

    #[test]
    fn bad_inputs() {
        use SyntaxError as E;
        let cases: Vec<(&str, &[u8], SyntaxError)> = vec![
            ("no colon", b"a.o a.c\n", E::MissingColon { line: 1 }),
            (
                "no colon in a later rule",
                b"a.o: a.c\n\nb.o \\\n c.h\n",
                E::MissingColon { line: 3 },
            ),
            (
                "colon not followed by whitespace",
                b"a.o:a.c\n",
                E::MissingColon { line: 1 },
            ),
            ("empty target", b": a.h\n", E::EmptyTarget { line: 1 }),
            (
                "empty target after a rule",
                b"a.o: a.c\n  : a.h\n",
                E::EmptyTarget { line: 2 },
            ),
            (
                "lone dollar",
                b"a.o: $(FOO)/a.h\n",
                E::UnexpandedVariable { line: 1 },
            ),
            (
                "lone dollar at end",
                b"a.o: a.h$",
                E::UnexpandedVariable { line: 1 },
            ),
            (
                "odd dollars",
                b"a.o: \\\n a$$$b.h\n",
                E::UnexpandedVariable { line: 2 },
            ),
            (
                "invalid utf-8",
                b"a.o: a.c \\\n \xff.h\n",
                E::InvalidUtf8 { line: 2 },
            ),
            ("truncated utf-8", b"a.o: \xc3", E::InvalidUtf8 { line: 1 }),
            ("nul in a name", b"a.o: a\0.h\n", E::NulByte { line: 1 }),
            ("nul between names", b"a.o: a.h\n\0", E::NulByte { line: 2 }),
            (
                "comment line",
                b"# comment\na.o: a.c\n",
                E::UnescapedHash { line: 1 },
            ),
            (
                "hash inside a name",
                b"a.o: a.c\nb#c.o: d.h\n",
                E::UnescapedHash { line: 2 },
            ),
            (
                "second separator",
                b"a.o: b.c: d.h\n",
                E::ExtraColon { line: 1 },
            ),
            (
                "separator at end of prerequisites",
                b"a.o: b.c:",
                E::ExtraColon { line: 1 },
            ),
            (
                "escaped colon before space",
                b"a.o\\: b.c\n",
                E::AmbiguousEscapedColon { line: 1 },
            ),
            (
                "escaped colon at end",
                b"a.o: b\\:",
                E::AmbiguousEscapedColon { line: 1 },
            ),
            (
                "two backslashes before newline",
                b"a.o: a\\\\\n b.h\n",
                E::AmbiguousContinuation { line: 1 },
            ),
            (
                "two backslashes before CRLF",
                b"a.o: a\\\\\r\n",
                E::AmbiguousContinuation { line: 1 },
            ),
            (
                "trailing backslash",
                b"a.o: a.c \\",
                E::TrailingBackslash { line: 1 },
            ),
            (
                "file cut after a continuation",
                b"a.o: a.c \\\n b.h \\\n",
                E::TrailingBackslash { line: 2 },
            ),
            (
                "file cut after a continuation and indentation (CRLF)",
                b"a.o: a.c \\\r\n  ",
                E::TrailingBackslash { line: 1 },
            ),
            (
                "bare CR",
                b"a.o: a.c\rb.h\n",
                E::ControlCharacter {
                    line: 1,
                    byte: b'\r',
                },
            ),
            (
                "bare CR after backslash",
                b"a.o: a\\\r.h\n",
                E::ControlCharacter {
                    line: 1,
                    byte: b'\r',
                },
            ),
            (
                "vertical tab",
                b"a.o: a\x0b.h\n",
                E::ControlCharacter {
                    line: 1,
                    byte: 0x0b,
                },
            ),
            (
                "DEL",
                b"a.o:\n\x7f: b\n",
                E::ControlCharacter {
                    line: 2,
                    byte: 0x7f,
                },
            ),
        ];
        for (name, input, expected) in cases {
            assert_eq!(plain(input), Err(expected), "case: {name}");
        }
    }

    #[test]
    fn messages_are_lowercase_single_lines_with_the_line_number() {
        let all = [
            SyntaxError::InvalidUtf8 { line: 7 },
            SyntaxError::NulByte { line: 7 },
            SyntaxError::ControlCharacter {
                line: 7,
                byte: 0x0d,
            },
            SyntaxError::MissingColon { line: 7 },
            SyntaxError::EmptyTarget { line: 7 },
            SyntaxError::ExtraColon { line: 7 },
            SyntaxError::UnexpandedVariable { line: 7 },
            SyntaxError::UnescapedHash { line: 7 },
            SyntaxError::AmbiguousEscapedColon { line: 7 },
            SyntaxError::AmbiguousContinuation { line: 7 },
            SyntaxError::TrailingBackslash { line: 7 },
        ];
        for e in all {
            let msg = e.to_string();
            assert!(msg.starts_with("line 7: "), "{msg}");
            assert_eq!(msg, msg.to_lowercase(), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
            assert_eq!(e.line(), 7);
        }
        assert_eq!(
            SyntaxError::ControlCharacter {
                line: 1,
                byte: 0x0d
            }
            .to_string(),
            "line 1: unsupported control character 0x0d"
        );
    }

    #[test]
    fn names_are_borrowed_unless_unescaped() {
        let input = b"a.o: plain/a.h sp\\ ace.h d$$.h h\\#.h C:\\x.h\n";
        let d = parse(input).unwrap();
        let kinds: Vec<bool> = d.rules[0]
            .prereqs
            .iter()
            .map(|p| matches!(p, Cow::Borrowed(_)))
            .collect();
        assert_eq!(kinds, [true, false, false, false, true]);
        assert!(matches!(d.rules[0].targets[0], Cow::Borrowed("a.o")));
    }

    #[test]
    fn escape_path_matches_gcc() {
        for (path, escaped) in [
            ("plain/a.h", "plain/a.h"),
            ("a b.h", "a\\ b.h"),
            ("bs\\ sp.h", "bs\\\\\\ sp.h"),
            ("a\tb", "a\\\tb"),
            ("h#.h", "h\\#.h"),
            ("bs\\#.h", "bs\\\\#.h"),
            ("d$.h", "d$$.h"),
            ("C:\\dir\\f.h", "C:\\dir\\f.h"),
            ("co:lon", "co:lon"),
        ] {
            assert_eq!(escape_path(path), escaped, "{path:?}");
        }
    }

    #[test]
    fn round_trip_exceptions_are_the_documented_ones() {
        for (path, ok) in [
            ("a.h", true),
            (" ", true),
            ("a: b", true),
            (":lead", true),
            ("bs\\ sp\\\\ x\\#$", true),
            ("", false),
            ("a\nb", false),
            ("a\rb", false),
            ("a\0b", false),
            ("a\x0bb", false),
            ("trail\\", false),
            ("trail:", false),
            ("esc\\:colon", false),
        ] {
            assert_eq!(escape_round_trips(path), ok, "{path:?}");
        }
    }

    /// Bytes biased toward the ones the lexer treats specially.
    fn any_byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            any::<u8>(),
            proptest::sample::select(b" \t\n\r\\:$#\0a".to_vec()),
        ]
    }

    /// Characters biased toward the special ones, with some multi-byte ones.
    fn any_char() -> impl Strategy<Value = char> {
        prop_oneof![
            proptest::sample::select(vec![
                ' ', '\t', '\\', ':', '$', '#', '/', '.', 'a', 'é', '日', '🦀'
            ]),
            (0x20u8..0x7f).prop_map(char::from),
            any::<char>(),
        ]
    }

    fn any_path() -> impl Strategy<Value = String> {
        proptest::collection::vec(any_char(), 0..12).prop_map(|v| v.into_iter().collect())
    }

    /// Printable paths (no control bytes except tab) that can round-trip.
    fn good_path() -> impl Strategy<Value = String> {
        let printable = prop_oneof![
            proptest::sample::select(vec![
                ' ', '\t', '\\', ':', '$', '#', '/', '.', 'a', 'é', '日'
            ]),
            (0x20u8..0x7f).prop_map(char::from),
        ];
        proptest::collection::vec(printable, 1..12)
            .prop_map(|v| v.into_iter().collect::<String>())
            .prop_filter("cannot round-trip", |p| escape_round_trips(p))
    }

    proptest! {
        #[test]
        fn never_panics_on_bytes(input in proptest::collection::vec(any_byte(), 0..256)) {
            let _ = parse(&input);
        }

        #[test]
        fn ok_results_keep_the_invariants(
            names in proptest::collection::vec(any_path(), 0..6),
            seps in proptest::collection::vec(
                proptest::sample::select(vec![" ", ": ", ":\n", "\n", " \\\n ", "\r\n", ":"]), 0..6),
        ) {
            let mut input = String::new();
            for (i, name) in names.iter().enumerate() {
                input.push_str(name);
                input.push_str(seps.get(i).copied().unwrap_or(" "));
            }
            if let Ok(d) = parse(input.as_bytes()) {
                let range = input.as_ptr() as usize..input.as_ptr() as usize + input.len();
                for rule in &d.rules {
                    prop_assert!(!rule.targets.is_empty());
                    for name in rule.targets.iter().chain(&rule.prereqs) {
                        prop_assert!(!name.is_empty());
                        prop_assert!(!name.contains('\n') && !name.contains('\0'));
                        if let Cow::Borrowed(s) = name {
                            // Borrowed names are slices of the input.
                            prop_assert!(range.contains(&(s.as_ptr() as usize)));
                            prop_assert!(input.contains(s));
                        }
                    }
                }
            }
        }

        #[test]
        fn lf_and_crlf_continuations_read_alike(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    " \\\n ", " \\\n", "\\\n ", " ", "\t", "\n", ":", " : ", "a", "/x.h",
                    "\\ ", "\\", "\\\\", "#", "$$", "$", "o.o: ",
                ]),
                0..40,
            )
        ) {
            // CRLF continuations never take the fast path for GCC's ` \<LF> `
            // separator, so this compares it with the byte-by-byte reading.
            let lf = parts.concat();
            let crlf = lf.replace("\\\n", "\\\r\n");
            prop_assert_eq!(plain(lf.as_bytes()), plain(crlf.as_bytes()), "{:?}", lf);
        }

        #[test]
        fn escaped_paths_round_trip(paths in proptest::collection::vec(good_path(), 0..8)) {
            let escaped: Vec<String> = paths.iter().map(|p| escape_path(p)).collect();
            let gcc = format!("t.o: {}\n", escaped.join(" \\\n "));
            prop_assert_eq!(plain(gcc.as_bytes()), Ok(vec![(vec!["t.o".to_string()], paths.clone())]));
            let clang_crlf = format!("t.o: {}\r\n", escaped.join(" \\\r\n  "));
            prop_assert_eq!(plain(clang_crlf.as_bytes()), Ok(vec![(vec!["t.o".to_string()], paths)]));
        }

        #[test]
        fn skip_plain_matches_the_table(
            input in proptest::collection::vec(
                prop_oneof![4 => 0x25u8..0x7f, 1 => any_byte(), 1 => any::<u8>()], 0..64),
            from in 0usize..64,
        ) {
            let from = from.min(input.len());
            let naive = input[from..]
                .iter()
                .position(|&b| !PLAIN[usize::from(b)])
                .map_or(input.len(), |k| from + k);
            prop_assert_eq!(skip_plain(&input, from), naive);
            prop_assert_eq!(skip_plain_swar(&input, from), naive);
        }

        #[test]
        fn escape_round_trips_is_exact(path in any_path()) {
            let input = format!("t.o: {}\n", escape_path(&path));
            let back = plain(input.as_bytes());
            let exact = back == Ok(vec![(vec!["t.o".to_string()], vec![path.clone()])]);
            prop_assert_eq!(exact, escape_round_trips(&path), "{:?} -> {:?} -> {:?}", path, input, back);
        }
    }
}
