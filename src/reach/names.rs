//! What a text names: its absolute paths (and relative ones joined to a
//! working directory), folded and looked up as artifacts, build-time
//! outputs, source-tree paths, named build-tree directories and files; and
//! its file-name tokens, looked up as artifact file names. Every channel
//! that reads text (a test's command and environment, the files it names,
//! its closure's definitions and headers, the scripts it runs) names
//! through [`Lookup::scan_text`].

use super::bytes::is_name_byte;
use super::channel::working_dirs;
use super::lookup::{Kind, Lookup};
use super::named::Named;
use crate::ingest::ctest::Test;
use crate::paths;

/// Bytes that end a path token (besides the end of the text).
fn ends_path(c: char, allow_space: bool) -> bool {
    matches!(
        c,
        '"' | '\'' | ';' | ',' | '\t' | '\n' | '\r' | '<' | '>' | '|' | '(' | ')' | '`' | '\0'
    ) || (!allow_space && c == ' ')
}

/// Characters after which a path token may start.
fn starts_after(c: char) -> bool {
    !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+' | '~' | '/' | '$' | '\\'))
}

impl Lookup<'_, '_> {
    /// File-name tokens of `text` that are artifact names.
    pub(super) fn scan_names(&self, text: &str, out: &mut Named) {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !is_name_byte(b[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && is_name_byte(b[i]) {
                i += 1;
            }
            if b.get(i) == Some(&b'/') {
                continue; // a directory component, not a file
            }
            let tok = &text[start..i];
            if let Some(owners) = self.graph.artifact_names().get(tok) {
                for &o in owners {
                    out.targets.push((o, format!("names artifact file {tok}")));
                }
            }
        }
        for &(name, owners) in &self.odd_names {
            if text.contains(name.as_str()) {
                for &o in owners {
                    out.targets.push((o, format!("names artifact file {name}")));
                }
            }
        }
    }

    /// For a scripted test: the source-tree files its command names (the
    /// scripts it runs, read but never run) and the targets whose artifacts
    /// those files name.
    pub fn script_targets(&self, test: &Test) -> (Vec<usize>, Vec<String>) {
        let wds = working_dirs(test, self.model);
        let wd = wds[0].as_deref();
        let (src, build) = (self.model.scope_root(), &self.model.build_root);
        let mut files = Vec::new();
        for arg in test.command.iter().flatten() {
            for wd in &wds {
                for p in Self::path_candidates(arg, wd.as_deref()) {
                    // A source-tree file, or a script configure wrote into
                    // the build tree (libexpat's `bash run.sh $<TARGET_FILE:runtests>`,
                    // `run.sh` configured from `run.sh.in`, a CMake input).
                    let in_build = paths::is_within(&p, build);
                    // (Not a target's artifact or a build step's output: a
                    // program a later reconfigure left older than the reply.)
                    let ours = if in_build {
                        self.kind(&p) == super::lookup::Kind::ConfigureTime
                            && self.graph.artifact_owners(&p).is_empty()
                            && !self.outputs.contains_key(p.as_str())
                    } else {
                        paths::is_within(&p, src)
                    };
                    if ours && std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                        files.push(p);
                    }
                }
            }
        }
        files.sort();
        files.dedup();
        let mut named = Named::default();
        // What the command line names besides its program: an artifact
        // passed as an argument (`$<TARGET_FILE:tool>` as CMake expands it,
        // `-DTOOL=/b/tool` for a `cmake -P` script) is what the script runs.
        for arg in test.command.iter().flatten().skip(1) {
            for wd in &wds {
                let mut here = Named::default();
                self.scan_text(arg, wd.as_deref(), false, &mut here);
                named.targets.extend(here.targets);
            }
        }
        // The files they name in turn (`source`/`.`/`include()`d scripts,
        // followed while named literally), up to a bound.
        let mut at = 0;
        while at < files.len() && files.len() <= 256 {
            let f = files[at].clone();
            at += 1;
            let dir = f.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            // Relative to the working directory, and to the script's own too.
            for join in wd.into_iter().chain(Some(dir)) {
                let Some(here) = self.file_scan(&f, join) else {
                    continue;
                };
                for p in &here.source {
                    if !files.contains(p) && std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
                        files.push(p.clone());
                    }
                }
                named.absorb(&here);
            }
        }
        files.sort();
        files.dedup();
        let mut targets: Vec<usize> = named.targets.into_iter().map(|(t, _)| t).collect();
        targets.sort_unstable();
        targets.dedup();
        (targets, files)
    }

    /// The source-tree files `test`'s command line names as data: every
    /// argument but the script an interpreter it runs is given (`cmake … -P
    /// SCRIPT`, `python3 [-opts] SCRIPT`, every argument of a program that
    /// is itself a source-tree file). Empty for another program (a wrapper:
    /// any argument may be what it runs).
    pub fn command_data_files(&self, test: &Test) -> Vec<String> {
        let Some(cmd) = test.command.as_deref().filter(|c| !c.is_empty()) else {
            return Vec::new();
        };
        let (src, build) = (self.model.scope_root(), &self.model.build_root);
        let program = &cmd[0];
        let base = program.rsplit('/').next().unwrap_or(program);
        let script = if paths::is_within(program, src) && !paths::is_within(program, build) {
            None
        } else if base == "cmake" || Some(program) == self.model.cmake_command.as_ref() {
            match cmd.iter().position(|a| a == "-P") {
                Some(p) => Some(p + 1),
                None => return Vec::new(),
            }
        } else if crate::ingest::custom_commands::is_interpreter(program)
            && !base.starts_with("env")
        {
            match cmd.iter().skip(1).position(|a| !a.starts_with('-')) {
                Some(p)
                    if !cmd[1..=p]
                        .iter()
                        .any(|a| a == "-c" || a == "-m" || a == "-e") =>
                {
                    Some(p + 1)
                }
                _ => return Vec::new(),
            }
        } else {
            return Vec::new();
        };
        let wds = working_dirs(test, self.model);
        let mut out = Vec::new();
        for (i, arg) in cmd.iter().enumerate().skip(1) {
            if Some(i) == script {
                continue;
            }
            for wd in &wds {
                out.extend(Self::path_candidates(arg, wd.as_deref()));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// What file `f` names, relative names joined to `join` (read and
    /// scanned once per run); `None` when it cannot be read.
    fn file_scan(&self, f: &str, join: &str) -> Option<std::rc::Rc<Named>> {
        let key = (f.to_owned(), join.to_owned());
        if let Some(n) = self.file_scans.borrow().get(&key) {
            return Some(n.clone());
        }
        let bytes = crate::ingest::read_capped(f, 16 << 20).ok()?;
        let mut here = Named::default();
        self.scan_text(
            &String::from_utf8_lossy(&bytes),
            Some(join),
            false,
            &mut here,
        );
        let here = std::rc::Rc::new(here);
        self.file_scans.borrow_mut().insert(key, here.clone());
        Some(here)
    }

    /// Path candidates in `text`: absolute ones, and relative ones joined to `wd`.
    pub(super) fn path_candidates(text: &str, wd: Option<&str>) -> Vec<String> {
        // Bytewise: every delimiter is ASCII, and no byte of a multi-byte
        // UTF-8 character is ASCII, so slicing at these positions is safe.
        const MAX: usize = 4096;
        let b = text.as_bytes();
        let ends = |c: u8, allow_space: bool| ends_path(c as char, allow_space);
        let starts = |c: u8| c < 0x80 && starts_after(c as char);
        let mut out = Vec::new();
        for i in 0..b.len() {
            let c = b[i];
            if c >= 0x80 || (i > 0 && !starts(b[i - 1])) || ends(c, false) || c == b'=' || c == b':'
            {
                continue;
            }
            let absolute = c == b'/';
            for allow_space in [false, true] {
                let limit = (i + MAX).min(b.len());
                let e = (i..limit)
                    .find(|&j| ends(b[j], allow_space))
                    .unwrap_or(limit);
                if !text.is_char_boundary(e) {
                    continue;
                }
                let tok = text[i..e].trim_end_matches([' ', '.', ':']);
                if tok.is_empty() {
                    continue;
                }
                if absolute {
                    out.push(paths::fold(tok));
                    // A search-path list (`QT_PLUGIN_PATH=/a/bin:/b`): the
                    // element before each ':' too (those after one start
                    // candidates of their own).
                    for (at, _) in tok.match_indices(':') {
                        out.push(paths::fold(&tok[..at]));
                    }
                } else if let Some(wd) = wd.filter(|w| w.starts_with('/')) {
                    // A relative name: only file-like ones (a `/` or a `.`); a
                    // bare word is an artifact name at most (see scan_names).
                    if tok.contains('/') || tok.contains('.') {
                        out.push(paths::join_fold(wd, tok));
                    }
                }
                if e < limit && !allow_space && b[e] != b' ' {
                    break; // both variants end at the same delimiter
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Everything `text` names. `is_wd`: the text is a working directory, which
    /// names itself only (a test's default working directory holds much that
    /// it does not read).
    pub(super) fn scan_text(&self, text: &str, wd: Option<&str>, is_wd: bool, out: &mut Named) {
        if !is_wd {
            self.scan_names(text, out);
        }
        let (src, build) = (self.model.scope_root(), &self.model.build_root);
        let candidates = if is_wd {
            vec![paths::fold(text)]
        } else {
            Self::path_candidates(text, wd)
        };
        // The absolute paths written in the text (for the check below: a
        // search per candidate was quadratic on a large data file).
        let written: std::cell::OnceCell<Vec<String>> = std::cell::OnceCell::new();
        for p in candidates {
            for &o in self.graph.artifact_owners(&p) {
                out.targets.push((o, format!("names artifact {p}")));
            }
            if paths::is_within(&p, src) && !paths::is_within(&p, build) {
                out.source.push(p.clone());
            }
            if let Some(owners) = self.outputs.get(p.as_str()) {
                for &o in owners {
                    out.targets
                        .push((o, format!("names build-time output {p}")));
                }
            }
            let in_build = paths::is_within(&p, build);
            if !in_build && !paths::is_within(&p, src) {
                continue;
            }
            match self.kind(&p) {
                Kind::Missing | Kind::AfterListing => {
                    // Absolute as written (a relative word joined to the
                    // working directory is often no path at all).
                    if in_build
                        && !is_wd
                        && written
                            .get_or_init(|| Self::path_candidates(text, None))
                            .binary_search(&p)
                            .is_ok()
                        && self.graph.artifact_owners(&p).is_empty()
                        && !self.outputs.contains_key(p.as_str())
                    {
                        out.shared.push(p);
                    }
                }
                Kind::Dir if is_wd => {}
                Kind::Dir => {
                    // At any depth: plugin loaders look in subdirectories
                    // (`QT_PLUGIN_PATH=DIR` loads `DIR/<type>/*.so`).
                    for (o, a, artifact) in self.under(&p) {
                        let why = if !artifact {
                            format!("names directory {p}, which holds build-time output {a}")
                        } else if a.rsplit_once('/').is_some_and(|(d, _)| d == p) {
                            format!("names directory {p}, which holds its artifact")
                        } else {
                            format!("names directory {p}, which holds its artifact {a}")
                        };
                        out.targets.push((o, why));
                    }
                    // What else it holds that a program could load or run: a
                    // plugin a POST_BUILD step copied there is no artifact.
                    if in_build {
                        let u = self.unexplained_in(&p);
                        for (o, link) in &u.links {
                            out.targets
                                .push((*o, format!("names directory {p}, which holds {link}")));
                        }
                        out.configured.extend(u.configured.iter().cloned());
                        out.copies.extend(u.copies.iter().cloned());
                        out.unknown.extend(
                            u.build_time
                                .iter()
                                .map(|f| format!("names directory {p}, which holds {f}")),
                        );
                    }
                }
                Kind::ConfigureTime | Kind::BuildTime if !in_build => {}
                Kind::ConfigureTime => {
                    if self.graph.artifact_owners(&p).is_empty()
                        && !self.outputs.contains_key(p.as_str())
                    {
                        out.configured.push(p);
                    }
                }
                Kind::BuildTime => {
                    if self.graph.artifact_owners(&p).is_empty()
                        && !self.outputs.contains_key(p.as_str())
                    {
                        out.unknown.push(format!("names {p}"));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_candidates_cover_spellings() {
        let c = Lookup::path_candidates("--plugin=/b/plugins//libp.so", None);
        assert!(c.contains(&"/b/plugins/libp.so".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("PLUG=set:/b/x/libp.so", None);
        assert!(c.contains(&"/b/x/libp.so".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("/dir with space/a.txt", None);
        assert!(c.contains(&"/dir with space/a.txt".to_owned()), "{c:?}");
        assert!(c.contains(&"/dir".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("./libp.so", Some("/b/plugins"));
        assert!(c.contains(&"/b/plugins/libp.so".to_owned()), "{c:?}");
        let c = Lookup::path_candidates("#define P \"/b/x.so\"", None);
        assert!(c.contains(&"/b/x.so".to_owned()), "{c:?}");
        // A search-path list: every element.
        let c = Lookup::path_candidates("QT_PLUGIN_PATH=/b/bin:/usr/lib/qt5/plugins:", None);
        for want in ["/b/bin", "/usr/lib/qt5/plugins"] {
            assert!(c.contains(&want.to_owned()), "{want} not in {c:?}");
        }
    }
}
