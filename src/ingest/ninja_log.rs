//! Ninja's build log (`BUILD/.ninja_log`): the hash of the command each output
//! was last built with, and the audit that compares it with the command the
//! manifest gives it now (`ninja_manifest.rs`).
//!
//! Ninja rebuilds an output whose command hash differs from the log's, so a
//! configure that changed a target's flags (a new `-D`, an include directory)
//! without a build after it leaves objects whose deps records describe a
//! compile that ninja would not repeat: what the unit includes under the new
//! flags is unknown. On Makefiles `flags.make` says the same thing; here the
//! log and the manifest do (contract §4.4).
//!
//! Format (ninja `src/build_log.cc`): a first line `# ninja log vN`, then one
//! line per built output, `start\tend\tmtime\toutput\thash` with the hash in
//! hex; a later line for the same output replaces an earlier one. v5 (ninja
//! 1.9–1.11) and v6 (1.12) hash the command with MurmurHash64A, v7 (1.13) with
//! rapidhash. Like ninja, a final line without its newline (a torn write) and
//! a line with too few fields are skipped; an output without an entry then
//! counts as built with an unknown command.

use std::collections::BTreeMap;

use super::file_api::Codemodel;
use super::ninja_manifest;
use super::Reader;
use crate::fasthash::FastMap;
use crate::paths;
use crate::reason::{Code, Gap};

/// The parsed log: per output path (as the manifest spells it), the hash of
/// its command.
#[derive(Debug, Default)]
pub struct BuildLog {
    /// The format version (5, 6 or 7).
    pub version: u32,
    /// Output path → command hash of its last entry.
    pub hashes: FastMap<String, u64>,
}

impl BuildLog {
    /// The hash ninja of this log's version gives `command`.
    pub fn hash(&self, command: &[u8]) -> u64 {
        hash_command(self.version, command)
    }
}

/// Why a `.ninja_log` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// The file has no complete first line.
    #[error("no header line")]
    NoHeader,
    /// The first line is not UTF-8.
    #[error("header is not UTF-8")]
    HeaderNotUtf8,
    /// The first line is not `# ninja log vN`.
    #[error("header {0:?} is not \"# ninja log vN\"")]
    NotALog(String),
    /// A version this reader does not hash.
    #[error("log version {0} (only 5 to 7, ninja 1.9 to 1.13, are read)")]
    Version(u32),
    /// An entry's output path is not UTF-8.
    #[error("an output path is not UTF-8")]
    OutputNotUtf8,
    /// An entry's command hash is not hexadecimal.
    #[error("the entry of {0:?} has no hexadecimal command hash")]
    BadHash(String),
}

/// Parses a whole `.ninja_log`.
pub fn parse(bytes: &[u8]) -> Result<BuildLog, LogError> {
    let Some(nl) = bytes.iter().position(|&b| b == b'\n') else {
        return Err(LogError::NoHeader);
    };
    let head = std::str::from_utf8(&bytes[..nl]).map_err(|_| LogError::HeaderNotUtf8)?;
    let version: u32 = head
        .strip_prefix("# ninja log v")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| LogError::NotALog(head.to_owned()))?;
    if !(5..=7).contains(&version) {
        return Err(LogError::Version(version));
    }
    let mut log = BuildLog {
        version,
        hashes: FastMap::default(),
    };
    let mut rest = &bytes[nl + 1..];
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..end];
        rest = &rest[end + 1..];
        let mut fields = line.splitn(5, |&b| b == b'\t');
        let (Some(_start), Some(_end), Some(_mtime), Some(output), Some(hash)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue; // as ninja: a line with too few fields is skipped
        };
        let Ok(output) = std::str::from_utf8(output) else {
            return Err(LogError::OutputNotUtf8);
        };
        let hash = std::str::from_utf8(hash)
            .ok()
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .ok_or_else(|| LogError::BadHash(output.to_owned()))?;
        log.hashes.insert(output.to_owned(), hash);
    }
    Ok(log)
}

/// The command hash ninja writes into a log of `version`.
pub fn hash_command(version: u32, command: &[u8]) -> u64 {
    if version >= 7 {
        rapidhash(command)
    } else {
        murmur_hash_64a(command)
    }
}

/// MurmurHash64A with ninja's seed (logs v5 and v6).
pub fn murmur_hash_64a(key: &[u8]) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h: u64 = 0xDECA_FBAD_DECA_FBAD ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

const RAPID_SECRET: [u64; 3] = [
    0x2d35_8dcc_aa6c_78a5,
    0x8bb8_4b93_962e_acc9,
    0x4b33_a62e_d433_d4a3,
];

fn rapid_mum(a: u64, b: u64) -> (u64, u64) {
    let r = u128::from(a) * u128::from(b);
    (r as u64, (r >> 64) as u64)
}

fn rapid_mix(a: u64, b: u64) -> u64 {
    let (lo, hi) = rapid_mum(a, b);
    lo ^ hi
}

fn r64(p: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"))
}

fn r32(p: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(
        p[at..at + 4].try_into().expect("4 bytes"),
    ))
}

/// rapidhash (V1) with its default seed, as ninja 1.13 hashes commands (log v7).
pub fn rapidhash(p: &[u8]) -> u64 {
    let s = RAPID_SECRET;
    let len = p.len();
    let mut seed: u64 = 0xbdd8_9aa9_8270_4029;
    seed ^= rapid_mix(seed ^ s[0], s[1]) ^ len as u64;
    let (mut a, mut b);
    if len <= 16 {
        if len >= 4 {
            let last = len - 4;
            a = (r32(p, 0) << 32) | r32(p, last);
            let delta = (len & 24) >> (len >> 3);
            b = (r32(p, delta) << 32) | r32(p, last - delta);
        } else if len > 0 {
            a = (u64::from(p[0]) << 56) | (u64::from(p[len >> 1]) << 32) | u64::from(p[len - 1]);
            b = 0;
        } else {
            a = 0;
            b = 0;
        }
    } else {
        let mut i = len;
        let mut o = 0;
        if i > 48 {
            let (mut see1, mut see2) = (seed, seed);
            while i >= 48 {
                seed = rapid_mix(r64(p, o) ^ s[0], r64(p, o + 8) ^ seed);
                see1 = rapid_mix(r64(p, o + 16) ^ s[1], r64(p, o + 24) ^ see1);
                see2 = rapid_mix(r64(p, o + 32) ^ s[2], r64(p, o + 40) ^ see2);
                o += 48;
                i -= 48;
            }
            seed ^= see1 ^ see2;
        }
        if i > 16 {
            seed = rapid_mix(r64(p, o) ^ s[2], r64(p, o + 8) ^ seed ^ s[1]);
            if i > 32 {
                seed = rapid_mix(r64(p, o + 16) ^ s[2], r64(p, o + 24) ^ seed);
            }
        }
        // The last 16 bytes of the key (they may overlap what was mixed).
        a = r64(p, o + i - 16);
        b = r64(p, o + i - 8);
    }
    a ^= s[1];
    b ^= seed;
    let (lo, hi) = rapid_mum(a, b);
    rapid_mix(lo ^ s[0] ^ len as u64, hi ^ s[1])
}

/// Each output's command hash in the build manifest now and in `.ninja_log`,
/// or why they cannot be compared; and the manifest's `CUSTOM_COMMAND` edges,
/// whole, when the manifest was walked (the one walk serves
/// [`crate::ingest::custom_commands`] too).
pub struct Commands(
    Result<CommandHashes, Incomparable>,
    Option<Vec<ninja_manifest::OwnedEdge>>,
);

/// Why the commands the objects were compiled with cannot be compared with
/// the manifest's.
#[derive(Debug, thiserror::Error)]
pub enum Incomparable {
    /// `.ninja_log` cannot be read.
    #[error("{log}: {cause}")]
    LogUnreadable {
        /// The log, relative to the build root.
        log: String,
        /// Why.
        cause: super::ReadError,
    },
    /// `.ninja_log` is not a log this reader knows.
    #[error("{log}: {cause}")]
    Log {
        /// The log, relative to the build root.
        log: String,
        /// What is wrong with it.
        cause: LogError,
    },
    /// The manifest cannot be walked.
    #[error(transparent)]
    Manifest(#[from] ninja_manifest::ManifestError),
    /// The manifest keeps ninja's files in another directory.
    #[error("{file} sets builddir = {dir:?}, so ninja keeps its log elsewhere (not followed)")]
    BuildDir {
        /// The manifest.
        file: String,
        /// Its `builddir`.
        dir: String,
    },
}

impl Commands {
    /// The manifest's custom-command edges, when this read walked it.
    pub fn custom_edges(&self) -> Option<&[ninja_manifest::OwnedEdge]> {
        self.1.as_deref()
    }
}

/// The two sides of the comparison.
pub struct CommandHashes {
    /// The manifest read (`build.ninja`, `build-<Config>.ninja`).
    file: String,
    /// The log read, relative to the build root.
    log_shown: String,
    /// What the log recorded.
    log: BuildLog,
    /// Output → hash of the command the manifest gives it now.
    now: FastMap<String, u64>,
}

/// Reads `.ninja_log` and then the manifest of the selected configuration,
/// hashing every non-phony output's command as the log's version requires.
pub(crate) fn read_commands(reader: &Reader, model: &Codemodel) -> Commands {
    read_manifest_commands(reader, &model.build_root, model.multi_config, &model.config)
}

/// [`read_commands`] for the build tree at `build` (folded) whose generator is
/// multi-config or not, for configuration `config`: what the File API's index
/// and codemodel tell before any target is read.
pub(crate) fn read_manifest_commands(
    reader: &Reader,
    build: &str,
    multi_config: bool,
    config: &str,
) -> Commands {
    let file = if multi_config {
        format!("build-{config}.ninja")
    } else {
        "build.ninja".to_owned()
    };
    let log_path = format!("{build}/.ninja_log");
    let log_shown = paths::relative_to(&log_path, build).to_owned();
    let log = match reader.read(&log_path) {
        Err(cause) => {
            let log = log_shown;
            return Commands(Err(Incomparable::LogUnreadable { log, cause }), None);
        }
        Ok(b) => match parse(&b) {
            Ok(l) => l,
            Err(cause) => {
                return Commands(
                    Err(Incomparable::Log {
                        log: log_shown,
                        cause,
                    }),
                    None,
                )
            }
        },
    };
    let mut now: FastMap<String, u64> = FastMap::default();
    let mut custom = Vec::new();
    let walked = ninja_manifest::for_each_command_and_custom_edge(reader, build, &file, |e| {
        let hash = log.hash(e.command.as_bytes());
        for o in e.outs {
            now.insert(o.to_owned(), hash);
        }
        if e.rule == ninja_manifest::CUSTOM_COMMAND {
            custom.push(ninja_manifest::OwnedEdge::of(e));
        }
    });
    let custom = walked.is_ok().then_some(custom);
    let hashes = match walked {
        Err(e) => Err(Incomparable::Manifest(e)),
        Ok((_, Some(dir))) if !dir.is_empty() && dir != "." => {
            Err(Incomparable::BuildDir { file, dir })
        }
        Ok(_) => Ok(CommandHashes {
            file,
            log_shown,
            log,
            now,
        }),
    };
    Commands(hashes, custom)
}

/// The command audit: for every unit a deps record describes (`built`: its
/// target and its object as ninja spells it), the command hash `.ninja_log`
/// recorded must be the hash of the command the manifest gives the object now,
/// as ninja's own dirty check requires. A difference means a configure changed
/// how the unit compiles after it was compiled: `DEP_EVIDENCE_STALE`, once per
/// target. A manifest or log that cannot be read is `DEP_PREREQ_UNINSPECTABLE`.
pub(crate) fn audit_commands(
    model: &Codemodel,
    commands: &Commands,
    built: &[(usize, String)],
    gaps: &mut Vec<Gap>,
) {
    let c = match &commands.0 {
        Ok(c) => c,
        Err(e) => {
            return gaps.push(Gap::new(
                Code::DepPrereqUninspectable,
                format!("{e}: the commands the objects were compiled with cannot be compared with the manifest's"),
            ))
        }
    };
    // Per target: how many objects differ, and the first by name.
    let mut changed: BTreeMap<usize, (usize, &str, &'static str)> = BTreeMap::new();
    for (target, out) in built {
        let why = match (c.now.get(out.as_str()), c.log.hashes.get(out.as_str())) {
            (None, _) => "the manifest no longer builds it",
            (Some(_), None) => "no .ninja_log entry says how it was compiled",
            (Some(now), Some(then)) if now != then => {
                "its command in the manifest is not the one .ninja_log recorded (ninja would compile it again)"
            }
            _ => continue,
        };
        let e = changed.entry(*target).or_insert((0, out, why));
        e.0 += 1;
        if out.as_str() < e.1 {
            (e.1, e.2) = (out, why);
        }
    }
    for (target, (n, first, why)) in changed {
        let more = match n {
            1 => String::new(),
            2 => " (and 1 more object of the target)".to_owned(),
            _ => format!(" (and {} more objects of the target)", n - 1),
        };
        gaps.push(Gap::new(
            Code::DepEvidenceStale,
            format!(
                "{first} of target {:?}: {why}{more}; the build is not what {} describes now ({} against {})",
                model.targets[target].name, c.file, c.file, c.log_shown
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One command, as ninja 1.11 (log v5) and ninja 1.13 (log v7) logged it
    /// for `rule cxx: g++ -MD -MF $out.d -c $in -o $out`, `build a.o: cxx a.cpp`.
    #[test]
    fn hashes_agree_with_real_ninja_logs() {
        let c = b"g++ -MD -MF a.o.d -c a.cpp -o a.o";
        assert_eq!(murmur_hash_64a(c), 0xdb38_4bae_03c8_3383);
        assert_eq!(rapidhash(c), 0x23fc_277e_c6ad_ea37);
        assert_eq!(hash_command(5, c), hash_command(6, c));
        assert_ne!(hash_command(6, c), hash_command(7, c));
    }

    #[test]
    fn hashes_take_every_length() {
        // Every branch of both functions (short, 4..16, 17..48, the 48-byte loop).
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut seen = std::collections::HashSet::new();
        for n in 0..bytes.len() {
            assert!(
                seen.insert(rapidhash(&bytes[..n])),
                "rapidhash collides at {n}"
            );
            assert!(
                seen.insert(murmur_hash_64a(&bytes[..n])),
                "murmur collides at {n}"
            );
        }
    }

    #[test]
    fn log_lines_last_wins_torn_tail_skipped() {
        let log = parse(
            b"# ninja log v5\n1\t2\t3\ta.o\tff\n1\t2\t3\tb.o\t10\n4\t5\t6\ta.o\t1a\nshort\n7\t8\t9\tc.o\t2",
        )
        .unwrap();
        assert_eq!(log.version, 5);
        assert_eq!(log.hashes.get("a.o"), Some(&0x1a));
        assert_eq!(log.hashes.get("b.o"), Some(&0x10));
        assert_eq!(
            log.hashes.get("c.o"),
            None,
            "a torn last line is skipped, as ninja does"
        );
    }

    #[test]
    fn unknown_versions_and_bad_hashes_are_rejected() {
        assert!(parse(b"# ninja log v4\n").is_err());
        assert!(parse(b"# ninja log v8\n").is_err());
        assert!(parse(b"ninja log\n").is_err());
        assert!(parse(b"").is_err());
        assert!(parse(b"# ninja log v7\n1\t2\t3\ta.o\tnothex\n").is_err());
        assert_eq!(parse(b"# ninja log v7\n").unwrap().hashes.len(), 0);
    }
}
