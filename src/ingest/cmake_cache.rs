//! The build's CMake cache: the value a `${VAR}` had when configure ran,
//! for a variable no normal variable shadows (see
//! [`crate::ingest::configure_reads`], which decides that).
//!
//! Read from the File API's cache-v2 reply when the reply index names one
//! (written by the same configure as the codemodel), else from
//! `BUILD/CMakeCache.txt` when it is no newer than the reply (a newer cache
//! is a later, failed or hand-edited configure the reply does not describe:
//! not used). No cache means no value: what needed one stays unresolved.

use super::Reader;
use crate::fasthash::FastMap;

/// Cache entries by name.
#[derive(Debug, Default)]
pub struct Cache {
    entries: FastMap<String, String>,
    /// Where the entries came from, in words.
    pub source: String,
}

impl Cache {
    /// The value of entry `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }

    /// A cache of these entries (unit tests).
    pub fn of(entries: &[(&str, &str)]) -> Self {
        Cache {
            entries: entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            source: "test".into(),
        }
    }
}

/// The cache of the build `model` describes, if one can be trusted.
pub fn load(reader: &Reader, model: &super::file_api::Codemodel) -> Option<Cache> {
    if let Some(reply) = &model.cache_reply {
        let bytes = reader.read(reply).ok()?;
        return Some(Cache {
            entries: parse_reply(&bytes)?,
            source: reply.clone(),
        });
    }
    let path = format!("{}/CMakeCache.txt", model.build_root);
    let written = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    if model.reply_time.is_none_or(|reply| written > reply) {
        return None;
    }
    let bytes = reader.read(&path).ok()?;
    Some(Cache {
        entries: parse_text(&String::from_utf8_lossy(&bytes)),
        source: path,
    })
}

/// `CMakeCache.txt`: `NAME:TYPE=VALUE` lines (`"NAME":TYPE=VALUE` when the
/// name holds a colon), `#` and `//` lines are comments.
fn parse_text(text: &str) -> FastMap<String, String> {
    let mut out = FastMap::default();
    for line in text.lines() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        // After the name: `:TYPE=VALUE` for a quoted name, `TYPE=VALUE` else.
        let split = match line.strip_prefix('"') {
            Some(q) => q
                .split_once('"')
                .and_then(|(n, r)| Some((n, r.strip_prefix(':')?))),
            None => line.split_once(':'),
        };
        let Some((name, rest)) = split else {
            continue;
        };
        let Some((_, value)) = rest.split_once('=') else {
            continue;
        };
        out.insert(name.to_owned(), value.to_owned());
    }
    out
}

/// The File API's cache-v2 object; `None` when it is not one.
fn parse_reply(bytes: &[u8]) -> Option<FastMap<String, String>> {
    #[derive(serde::Deserialize)]
    struct Version {
        major: u64,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        name: String,
        value: String,
    }
    #[derive(serde::Deserialize)]
    struct Reply {
        kind: String,
        version: Version,
        entries: Vec<Entry>,
    }
    let r: Reply = serde_json::from_slice(bytes).ok()?;
    (r.kind == "cache" && r.version.major == 2)
        .then(|| r.entries.into_iter().map(|e| (e.name, e.value)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_text_entries() {
        let m = parse_text(
            "# This is the CMakeCache file.\n//Path to a program.\nSphinx-build_EXECUTABLE:FILEPATH=Sphinx-build_EXECUTABLE-NOTFOUND\n\"A:B\":STRING=x=y\nEMPTY:PATH=\nbroken line\n",
        );
        assert_eq!(
            m.get("Sphinx-build_EXECUTABLE").map(String::as_str),
            Some("Sphinx-build_EXECUTABLE-NOTFOUND")
        );
        assert_eq!(m.get("A:B").map(String::as_str), Some("x=y"));
        assert_eq!(m.get("EMPTY").map(String::as_str), Some(""));
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn cache_reply_entries_and_its_version() {
        let v2 = br#"{"kind":"cache","version":{"major":2,"minor":0},"entries":[{"name":"X","properties":[],"type":"PATH","value":"/opt/x"}]}"#;
        assert_eq!(
            parse_reply(v2).unwrap().get("X").map(String::as_str),
            Some("/opt/x")
        );
        let v3 = br#"{"kind":"cache","version":{"major":3,"minor":0},"entries":[]}"#;
        assert!(parse_reply(v3).is_none());
    }
}
