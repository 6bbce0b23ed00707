//! Project files configure reads that CMake does not record as inputs.
//!
//! `file(STRINGS include/x/version.h …)`, `file(READ VERSION …)` and the
//! hashing and stat subcommands read a file at configure time; cmakeFiles-v1
//! lists only what configure *includes* or *configures*, not what it reads
//! this way. What such a file holds flows into configured files (a version
//! header every unit includes), so a change to it is a change to the build
//! configuration, whatever else it is. The CMake inputs are files we can
//! read: each source-tree CMake input is scanned for those subcommands, and
//! the file each names is resolved:
//! - `${CMAKE_CURRENT_SOURCE_DIR}` and `${CMAKE_CURRENT_LIST_DIR}` are the
//!   input's own directory, a relative path is relative to it;
//! - a path still holding a variable is matched by its literal tail (every
//!   file ending in `/include/x/version.h`), after one look for a plain
//!   `set(VAR value)` of a path that is only a variable;
//! - a path that is nothing but an unresolved variable could be any file:
//!   every changed project file is then read by configure.

use super::file_api::Codemodel;
use super::Reader;
use crate::fasthash::FastSet;
use crate::paths;

/// Subcommands of `file()` that read the file named by their first argument.
const READING: &[&str] = &[
    "READ",
    "STRINGS",
    "MD5",
    "SHA1",
    "SHA224",
    "SHA256",
    "SHA384",
    "SHA512",
    "SHA3_224",
    "SHA3_256",
    "SHA3_384",
    "SHA3_512",
    "TIMESTAMP",
    "SIZE",
    "READ_SYMLINK",
    "COPY_FILE",
];

/// What configure reads, by how it was resolved.
#[derive(Debug, Default)]
pub struct ConfigureReads {
    /// Exact files (absolute, folded), each with the call site in words.
    exact: Vec<(String, String)>,
    /// Literal tails (`/include/x/version.h`) with their call sites.
    tails: Vec<(String, String)>,
    /// A call site whose file could not be resolved at all.
    unresolved: Option<String>,
    /// Every word (a run of file-name bytes) of the scanned CMake inputs:
    /// what configure may name (`unreferenced_paths`).
    words: FastSet<String>,
    /// The scanned inputs and the roots, for [`ConfigureReads::holds_word`]'s
    /// files named by path, read only when first asked (only
    /// `unreferenced_paths` asks: a selection run without it pays nothing).
    scanned: Vec<String>,
    roots: [String; 3],
    named_words: std::sync::OnceLock<FastSet<String>>,
}

impl ConfigureReads {
    /// The call site that reads `abs` (absolute, folded, in the source
    /// tree), if one may.
    pub fn site_reading(&self, abs: &str) -> Option<&str> {
        if let Ok(i) = self.exact.binary_search_by(|(p, _)| p.as_str().cmp(abs)) {
            return Some(&self.exact[i].1);
        }
        if let Some((_, site)) = self.tails.iter().find(|(t, _)| abs.ends_with(t.as_str())) {
            return Some(site);
        }
        self.unresolved.as_deref()
    }

    /// Whether a scanned CMake input, or a source-tree file one names by
    /// path (the script an `execute_process` runs), holds `name` as a word.
    pub fn holds_word(&self, name: &str) -> bool {
        self.words.contains(name)
            || self
                .named_words
                .get_or_init(|| named_words(&self.scanned, &self.roots))
                .contains(name)
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.tails.is_empty() && self.unresolved.is_none()
    }
}

/// Scans every source-tree CMake input of `model` (cmakeFiles-v1). A file
/// that cannot be read is skipped: it is a CMake input, so any change to it
/// is already a build-configuration change, and what it reads is unchanged
/// unless something else changed.
pub fn scan(reader: &Reader, model: &Codemodel) -> ConfigureReads {
    let mut out = ConfigureReads::default();
    let Some(inputs) = &model.cmake_inputs else {
        return out;
    };
    for input in inputs {
        if !paths::is_within(input, model.scope_root())
            || paths::is_within(input, &model.build_root)
        {
            continue;
        }
        let Ok(bytes) = reader.read(input) else {
            continue;
        };
        for w in bytes.split(|&b| !word_byte(b)).filter(|w| !w.is_empty()) {
            let w = String::from_utf8_lossy(w);
            if !out.words.contains(w.as_ref()) {
                out.words.insert(w.into_owned());
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let dir = input.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        out.scanned.push(input.clone());
        let rel = paths::relative_to(input, &model.source_root);
        for (line, sub, arg) in file_calls(&text) {
            let site = format!("configure reads it: file({sub} {arg} …) at {rel}:{line}");
            resolve(&arg, dir, &text, &site, &mut out);
        }
    }
    out.scanned.sort();
    out.roots = [
        model.source_root.clone(),
        model.scope_root().to_owned(),
        model.build_root.clone(),
    ];
    out.exact.sort();
    out.exact.dedup_by(|a, b| a.0 == b.0);
    out.tails.sort();
    out.tails.dedup_by(|a, b| a.0 == b.0);
    out
}

/// The words of every regular source-tree file (not a scanned CMake input,
/// outside the build tree, at most 1 MiB) that a scanned input names by a
/// path: relative to its directory, or under `${CMAKE_CURRENT_SOURCE_DIR}`,
/// `${CMAKE_CURRENT_LIST_DIR}`, `${CMAKE_SOURCE_DIR}` or `${PROJECT_SOURCE_DIR}`.
fn named_words(
    scanned: &[String],
    [source_root, scope_root, build_root]: &[String; 3],
) -> FastSet<String> {
    let mut words = FastSet::default();
    let mut seen: FastSet<String> = FastSet::default();
    let sep = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ';');
    for input in scanned {
        let Ok(text) = std::fs::read_to_string(input) else {
            continue;
        };
        let dir = input.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        for tok in text
            .split(sep)
            .filter(|t| t.contains('/') || t.contains('.'))
        {
            let p = tok
                .replace("${CMAKE_CURRENT_SOURCE_DIR}", dir)
                .replace("${CMAKE_CURRENT_LIST_DIR}", dir)
                .replace("${CMAKE_SOURCE_DIR}", source_root)
                .replace("${PROJECT_SOURCE_DIR}", source_root);
            if p.contains('$') || p.contains('<') || p.is_empty() {
                continue;
            }
            let abs = paths::join_fold(dir, &p);
            if scanned.binary_search(&abs).is_ok()
                || !paths::is_within(&abs, scope_root)
                || paths::is_within(&abs, build_root)
                || !seen.insert(abs.clone())
            {
                continue;
            }
            match std::fs::metadata(&abs) {
                Ok(m) if m.is_file() && m.len() <= 1 << 20 => {}
                _ => continue,
            }
            if let Ok(b) = std::fs::read(&abs) {
                for w in b.split(|&b| !word_byte(b)).filter(|w| !w.is_empty()) {
                    words.insert(String::from_utf8_lossy(w).into_owned());
                }
            }
        }
    }
    words
}

/// A byte of a file name (what a word is made of).
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-' | b'~' | b'@' | b'#')
}

fn resolve(arg: &str, dir: &str, text: &str, site: &str, out: &mut ConfigureReads) {
    let mut p = arg
        .replace("${CMAKE_CURRENT_SOURCE_DIR}", dir)
        .replace("${CMAKE_CURRENT_LIST_DIR}", dir);
    if let Some(var) = only_variable(&p) {
        if let Some(v) = set_value(text, var) {
            p = v
                .replace("${CMAKE_CURRENT_SOURCE_DIR}", dir)
                .replace("${CMAKE_CURRENT_LIST_DIR}", dir);
        }
    }
    if !p.contains("${") && !p.contains("$<") {
        out.exact.push((paths::join_fold(dir, &p), site.to_owned()));
        return;
    }
    let tail = p.rsplit_once('}').map(|(_, t)| t).unwrap_or("");
    let name = tail.trim_start_matches('/');
    if name.is_empty() || name.contains("${") {
        out.unresolved
            .get_or_insert_with(|| format!("{site} (a file named only by a variable)"));
        return;
    }
    out.tails.push((format!("/{name}"), site.to_owned()));
}

/// `VAR` when `p` is `${VAR}` and nothing else.
fn only_variable(p: &str) -> Option<&str> {
    let inner = p.strip_prefix("${")?.strip_suffix('}')?;
    (!inner.contains(['$', '{', '}'])).then_some(inner)
}

/// The value of the first `set(VAR value)` of `text` with one plain value.
fn set_value(text: &str, var: &str) -> Option<String> {
    for (_, name, args) in calls(text, "set") {
        let _ = name;
        let words = split_args(&args);
        if words.len() == 2 && words[0] == var {
            return Some(words[1].clone());
        }
    }
    None
}

/// Every `file(SUB path …)` call with a reading subcommand: (line, SUB, path).
fn file_calls(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (line, _, args) in calls(text, "file") {
        let words = split_args(&args);
        if words.len() >= 2 {
            let sub = words[0].to_ascii_uppercase();
            if READING.contains(&sub.as_str()) {
                out.push((line, sub, words[1].clone()));
            }
        }
    }
    out
}

/// Every call of command `name` (case-insensitive) outside comments:
/// (1-based line, name as written, the text between its parentheses).
fn calls<'t>(text: &'t str, name: &str) -> Vec<(usize, &'t str, String)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' {
            line += 1;
            i += 1;
            continue;
        }
        if b == b'#' {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if at_word
            && bytes.len() >= i + name.len()
            && bytes[i..i + name.len()].eq_ignore_ascii_case(name.as_bytes())
        {
            let mut j = i + name.len();
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == b'(' {
                let start_line = line;
                let mut depth = 0;
                let mut k = j;
                let mut quoted = false;
                while k < bytes.len() {
                    match bytes[k] {
                        b'\\' if quoted => k += 1,
                        b'"' => quoted = !quoted,
                        b'(' if !quoted => depth += 1,
                        b')' if !quoted => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        b'\n' => line += 1,
                        _ => {}
                    }
                    k += 1;
                }
                let end = k.min(bytes.len());
                out.push((
                    start_line,
                    &text[i..i + name.len()],
                    text[j + 1..end].to_owned(),
                ));
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Arguments of a command: split on blanks outside quotes, quotes removed,
/// comments left out.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = args.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '#' if !quoted => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(text: &str) -> ConfigureReads {
        let mut out = ConfigureReads::default();
        for (line, sub, arg) in file_calls(text) {
            resolve(&arg, "/s/sub", text, &format!("{sub}:{line}"), &mut out);
        }
        out.exact.sort();
        out
    }

    #[test]
    fn a_version_header_read_with_strings_is_found() {
        let r = reads(
            "# file(READ not/this)\nfile(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/include/x/version.h\" v REGEX \"X\")\n",
        );
        assert_eq!(
            r.site_reading("/s/sub/include/x/version.h"),
            Some("STRINGS:2")
        );
        assert_eq!(r.site_reading("/s/sub/include/x/other.h"), None);
    }

    #[test]
    fn variables_fall_back_to_the_literal_tail_or_to_everything() {
        let r = reads("FILE(READ ${PROJECT_SOURCE_DIR}/VERSION ver)\n");
        assert!(r.site_reading("/s/VERSION").is_some());
        assert!(r.site_reading("/s/x/VERSION").is_some());
        assert!(r.site_reading("/s/VERSION.txt").is_none());
        let r = reads("set(F ${CMAKE_CURRENT_SOURCE_DIR}/v.txt)\nfile(READ ${F} v)\n");
        assert!(r.site_reading("/s/sub/v.txt").is_some());
        assert!(r.site_reading("/s/sub/w.txt").is_none());
        let r = reads("function(f p)\nfile(READ ${p} v)\nendfunction()\n");
        assert!(r.site_reading("/s/anything.cpp").is_some());
    }

    #[test]
    fn relative_paths_are_relative_to_the_input_and_writes_are_not_reads() {
        let r = reads("file(WRITE out.txt x)\nfile(SHA256 data/blob.bin h)\nprofile(READ x)\n");
        assert!(r.site_reading("/s/sub/data/blob.bin").is_some());
        assert!(r.site_reading("/s/sub/out.txt").is_none());
        assert!(r.site_reading("/s/sub/x").is_none());
    }
}
