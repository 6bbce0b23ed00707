//! ninja's binary deps log (`<build>/.ninja_deps`), read in-process.
//!
//! Invariant: [`parse`] returns `Ok` only for a log it read to the last byte
//! with every record consistent; the result holds, per output, exactly the
//! last deps record the log gives it, and every id in it names a path of
//! [`DepsLog::paths`]. Anything else is a typed [`DepsLogError`] carrying the
//! byte offset of the record at fault; no input panics, and every vector is
//! bounded by the input length (each element consumes at least four input
//! bytes).
//!
//! # Format (version 4, ninja 1.9 through 1.13)
//!
//! Checked against ninja's own source, `src/deps_log.cc` of
//! `ninja-build/ninja` as stored at commit `03284e18` (`kFileSignature`,
//! `kCurrentVersion = 4`, `kMaxRecordSize = (1 << 19) - 1`, `DepsLog::Load`,
//! `DepsLog::RecordDeps`, `DepsLog::RecordId`, `DepsLog::UpdateDeps`) and at
//! `484c1633` (version 3: a 32-bit mtime, which is why only version 4 is
//! read); `Builder::FinishCommand` in `src/build.cc` (the mtime recorded is a
//! fresh `Stat` of the output after the command finished, not the build
//! log's restat mtime); `RealDiskInterface::Stat` in `src/disk_interface.cc`
//! (POSIX: `st_mtim.tv_sec * 1e9 + tv_nsec`, 0 for a missing file); and a
//! log written by ninja 1.11.1 (`tests/ninja_deps.rs` builds one, compares
//! each record's mtime with its object's, and checks that [`write()`]
//! reproduces the file byte for byte, before and after an incremental
//! rebuild).
//!
//! Little-endian 4-byte integers (ninja writes native order; the version
//! doubles as a byte-order mark, so a big-endian log reads as an unsupported
//! version). Bytes 0..12 are `# ninjadeps\n`, bytes 12..16 the int32 version.
//! Then records, each a uint32 head: bit 31 set = deps record, the low 31 bits
//! the payload size, at most [`MAX_RECORD_SIZE`].
//!
//! * Path record: the path, 0–3 NULs padding it to a multiple of 4, a uint32
//!   checksum `!id`. The id is implicit: the number of path records before it.
//! * Deps record: int32 output id, uint32 mtime low and high halves, then one
//!   int32 id per input. `RecordDeps` writes the path records of any path
//!   without an id first, output before inputs, inputs in depfile order (main
//!   source first), and writes nothing when the output's live record already
//!   has the same mtime and inputs. A later record for an output replaces the
//!   earlier one (`UpdateDeps`); superseded records stay until recompaction,
//!   which renumbers every id — never keep ids across two reads.
//!
//! # What is an error
//!
//! ninja itself, on a bad signature or version, deletes the log and starts
//! over; on any inconsistent record (short read, size over the limit, deps
//! size not a multiple of 4, unknown input id, checksum mismatch, a path that
//! already has an id) it truncates the file at the last good record and goes
//! on ("premature end of file; recovering"); a torn tail is what a ninja
//! killed mid-write leaves. Either way ninja then rebuilds what lost its
//! record. diff2test cannot rebuild: the lost tail may hold the newer record
//! that replaced one earlier in the file, so a log it cannot fully read is
//! not evidence. Every one of these is an error here, including a torn tail
//! ([`DepsLogError::Truncated`]), plus what ninja does not check: an output
//! id that names no path yet (ninja's `Load` resizes its table to it), a deps
//! record shorter than its 12-byte fixed part, a path record whose size is
//! not a multiple of 4 or that holds a NUL or no path, and a path that is not
//! UTF-8. A log cut exactly at a record boundary is a valid shorter log, as
//! ninja appends it; whether a record is stale is the caller's question
//! (ninja's rule, `ImplicitDepLoader::LoadDepsFromLog` in `src/graph.cc`:
//! stale when the output's mtime is greater than the record's).
//!
//! Paths are kept as written: outputs as in `build.ninja` and inputs as the
//! canonicalized depfile paths, relative ones relative to the build
//! directory (CMake's Ninja generators run every command there).
//! [`DepsLog::resolve`] joins and folds them.

use crate::fasthash::FastMap;

/// The 12-byte signature at the start of every deps log.
pub const SIGNATURE: &[u8; 12] = b"# ninjadeps\n";
/// The only version read: ninja 1.9 through 1.13 write it.
pub const VERSION: i32 = 4;
/// The largest record payload ninja reads or writes, in bytes.
pub const MAX_RECORD_SIZE: u32 = (1 << 19) - 1;
/// Where the records start.
const HEADER_LEN: usize = 16;
/// Bit 31 of a record head: a deps record.
const DEPS_BIT: u32 = 0x8000_0000;

/// The live deps record of one output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Path id of the output.
    pub output: u32,
    /// The output's mtime when the record was written, as stored: POSIX
    /// nanoseconds since the epoch (ninja reads it as a signed 64-bit
    /// `TimeStamp`; 0 means the output did not exist).
    pub mtime_ns: u64,
    /// Path ids of the inputs in recorded order (main source first).
    pub inputs: Vec<u32>,
}

/// A whole deps log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepsLog {
    /// Every path, index = id, as written.
    pub paths: Vec<String>,
    /// The last record per output, sorted by output path.
    pub records: Vec<Record>,
    /// Deps records replaced by a later one for the same output.
    dead: usize,
}

/// Why a deps log cannot be used. `offset` is where the record at fault
/// starts (its head).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DepsLogError {
    /// The file does not start with `# ninjadeps\n`.
    #[error("not a ninja deps log (bad signature)")]
    BadSignature,
    /// A version other than 4 (ninja ≤ 1.8 wrote 3, with 32-bit mtimes).
    #[error("unsupported ninja deps log version {0} (only version 4, ninja 1.9-1.13, is read)")]
    UnsupportedVersion(i32),
    /// The file ends inside the header or inside a record (a torn tail).
    #[error("ninja deps log truncated inside the record at byte {offset}")]
    Truncated {
        /// Start of the incomplete record.
        offset: usize,
    },
    /// A record payload over [`MAX_RECORD_SIZE`].
    #[error(
        "ninja deps log record at byte {offset} has size {size}, over the limit {MAX_RECORD_SIZE}"
    )]
    RecordTooLarge {
        /// Start of the record.
        offset: usize,
        /// The size it gives.
        size: u32,
    },
    /// A path record whose checksum is not `!id` (two ninjas wrote the log).
    #[error("ninja deps log path record at byte {offset} has checksum {found:#010x}, expected {expected:#010x}")]
    BadChecksum {
        /// Start of the record.
        offset: usize,
        /// `!id` for the id the record would get.
        expected: u32,
        /// The checksum stored.
        found: u32,
    },
    /// A deps record naming an id no earlier path record defined.
    #[error("ninja deps log record at byte {offset} names path id {id}, but only {known} paths precede it")]
    UnknownId {
        /// Start of the record.
        offset: usize,
        /// The id, as stored (a negative int32 shows as 2^31 or more).
        id: u32,
        /// Path records before this one.
        known: usize,
    },
    /// A deps record whose size is not a multiple of 4 or under 12.
    #[error("ninja deps log deps record at byte {offset} has size {size}")]
    BadDepsSize {
        /// Start of the record.
        offset: usize,
        /// The size it gives.
        size: u32,
    },
    /// A path record whose size is not a multiple of 4, that holds no path,
    /// or whose path holds a NUL (ninja never writes one).
    #[error("ninja deps log path record at byte {offset} is malformed (size {size})")]
    BadPathRecord {
        /// Start of the record.
        offset: usize,
        /// The size it gives.
        size: u32,
    },
    /// A second path record for a path that already has an id.
    #[error("ninja deps log path record at byte {offset} repeats path id {first}")]
    DuplicatePath {
        /// Start of the second record.
        offset: usize,
        /// The id the path already has.
        first: u32,
    },
    /// A path that is not UTF-8.
    #[error("ninja deps log path record at byte {offset} is not UTF-8")]
    NotUtf8 {
        /// Start of the record.
        offset: usize,
    },
}

impl DepsLogError {
    /// The byte offset the error is about (0 for the signature, 12 for the version).
    pub fn offset(&self) -> usize {
        match self {
            DepsLogError::BadSignature => 0,
            DepsLogError::UnsupportedVersion(_) => SIGNATURE.len(),
            DepsLogError::Truncated { offset }
            | DepsLogError::RecordTooLarge { offset, .. }
            | DepsLogError::BadChecksum { offset, .. }
            | DepsLogError::UnknownId { offset, .. }
            | DepsLogError::BadDepsSize { offset, .. }
            | DepsLogError::BadPathRecord { offset, .. }
            | DepsLogError::DuplicatePath { offset, .. }
            | DepsLogError::NotUtf8 { offset } => *offset,
        }
    }
}

/// Whether `bytes` starts like a deps log (the signature only, any version:
/// an old log is then reported as [`DepsLogError::UnsupportedVersion`]
/// instead of being taken for another format).
pub fn is_deps_log(bytes: &[u8]) -> bool {
    bytes.starts_with(SIGNATURE)
}

/// The little-endian uint32 at `at`; the caller has checked the bounds.
#[inline]
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Parses a whole deps log; see the module doc for what is an error.
pub fn parse(bytes: &[u8]) -> Result<DepsLog, DepsLogError> {
    if !is_deps_log(bytes) {
        return Err(DepsLogError::BadSignature);
    }
    if bytes.len() < HEADER_LEN {
        return Err(DepsLogError::Truncated {
            offset: SIGNATURE.len(),
        });
    }
    let version = u32_at(bytes, SIGNATURE.len()) as i32;
    if version != VERSION {
        return Err(DepsLogError::UnsupportedVersion(version));
    }

    let mut paths: Vec<String> = Vec::new();
    // Path → id, borrowing the input: only to find a path given twice.
    let mut ids: FastMap<&str, u32> = FastMap::default();
    let mut records: Vec<Record> = Vec::new();
    // live[id] = index in `records` of id's record, or u32::MAX.
    let mut live: Vec<u32> = Vec::new();
    let mut dead = 0usize;

    let mut at = HEADER_LEN;
    while at < bytes.len() {
        let offset = at;
        if bytes.len() - at < 4 {
            return Err(DepsLogError::Truncated { offset });
        }
        let head = u32_at(bytes, at);
        let size = head & !DEPS_BIT;
        if size > MAX_RECORD_SIZE {
            return Err(DepsLogError::RecordTooLarge { offset, size });
        }
        let start = at + 4;
        let end = start + size as usize;
        if end > bytes.len() {
            return Err(DepsLogError::Truncated { offset });
        }
        let payload = &bytes[start..end];
        at = end;

        if head & DEPS_BIT != 0 {
            if !size.is_multiple_of(4) || size < 12 {
                return Err(DepsLogError::BadDepsSize { offset, size });
            }
            let known = paths.len();
            let check = |id: u32| {
                if (id as usize) < known {
                    Ok(id)
                } else {
                    Err(DepsLogError::UnknownId { offset, id, known })
                }
            };
            let output = check(u32_at(payload, 0))?;
            let mtime_ns = u64::from(u32_at(payload, 4)) | u64::from(u32_at(payload, 8)) << 32;
            let mut inputs = Vec::with_capacity(payload.len() / 4 - 3);
            for c in payload[12..].chunks_exact(4) {
                inputs.push(check(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))?);
            }
            let record = Record {
                output,
                mtime_ns,
                inputs,
            };
            let slot = &mut live[output as usize];
            if *slot == u32::MAX {
                *slot = records.len() as u32;
                records.push(record);
            } else {
                records[*slot as usize] = record;
                dead += 1;
            }
        } else {
            if !size.is_multiple_of(4) || size < 8 {
                return Err(DepsLogError::BadPathRecord { offset, size });
            }
            let body = &payload[..payload.len() - 4];
            let mut len = body.len();
            while len > body.len() - 3 && body[len - 1] == 0 {
                len -= 1;
            }
            let raw = &body[..len];
            if raw.is_empty() || raw.contains(&0) {
                return Err(DepsLogError::BadPathRecord { offset, size });
            }
            // ids fit in u32: each path record takes at least 12 input bytes,
            // and ninja's ids are int32 anyway.
            let id = u32::try_from(paths.len()).unwrap_or(u32::MAX);
            let found = u32_at(payload, payload.len() - 4);
            if found != !id || id == u32::MAX {
                return Err(DepsLogError::BadChecksum {
                    offset,
                    expected: !id,
                    found,
                });
            }
            let path = std::str::from_utf8(raw).map_err(|_| DepsLogError::NotUtf8 { offset })?;
            if let Some(&first) = ids.get(path) {
                return Err(DepsLogError::DuplicatePath { offset, first });
            }
            ids.insert(path, id);
            paths.push(path.to_owned());
            live.push(u32::MAX);
        }
    }
    drop(ids);
    records.sort_unstable_by(|a, b| paths[a.output as usize].cmp(&paths[b.output as usize]));
    Ok(DepsLog {
        paths,
        records,
        dead,
    })
}

impl DepsLog {
    /// Deps records the log holds that a later record for the same output
    /// replaced (for diagnostics: ninja recompacts above 1000 records when
    /// the total is over three times the live count).
    pub fn dead_outputs(&self) -> usize {
        self.dead
    }

    /// The live record of the output spelled `output` (as written in the log).
    pub fn get(&self, output: &str) -> Option<&Record> {
        self.records
            .binary_search_by(|r| self.paths[r.output as usize].as_str().cmp(output))
            .ok()
            .map(|i| &self.records[i])
    }

    /// Path `id` joined to `build_dir` when relative, folded lexically.
    ///
    /// # Panics
    /// When `id` is not a path id of this log (every id in [`DepsLog::records`] is).
    pub fn resolve(&self, build_dir: &str, id: u32) -> String {
        crate::paths::join_fold(build_dir, &self.paths[id as usize])
    }
}

/// Writes a deps log exactly as ninja's `DepsLog::RecordDeps` does for the
/// `(output, mtime_ns, inputs)` records in order, starting from an empty log:
/// a path record for each path without an id (the output first, then the
/// inputs in order), then the deps record, unless the output's current record
/// already has the same mtime and inputs. For tests and benchmarks.
///
/// # Panics
/// On an empty path, or a record ninja refuses to write (over
/// [`MAX_RECORD_SIZE`]), as ninja's `RecordId` asserts or fails.
pub fn write(log: &[(&str, u64, &[&str])]) -> Vec<u8> {
    let mut w = Writer {
        out: Vec::with_capacity(HEADER_LEN + log.len() * 64),
        ids: FastMap::default(),
        current: Vec::new(),
    };
    w.out.extend_from_slice(SIGNATURE);
    w.out.extend_from_slice(&VERSION.to_le_bytes());
    let mut in_ids: Vec<u32> = Vec::new();
    for &(output, mtime, inputs) in log {
        let mut made_change = false;
        let out_id = w.id(output, &mut made_change);
        in_ids.clear();
        for p in inputs {
            in_ids.push(w.id(p, &mut made_change));
        }
        if !made_change {
            made_change = match &w.current[out_id as usize] {
                Some((m, ins)) => *m != mtime || *ins != in_ids,
                None => true,
            };
        }
        if !made_change {
            continue;
        }
        let size = 4 * (3 + in_ids.len());
        assert!(
            size <= MAX_RECORD_SIZE as usize,
            "deps record over the size limit"
        );
        w.out
            .extend_from_slice(&(size as u32 | DEPS_BIT).to_le_bytes());
        w.out.extend_from_slice(&out_id.to_le_bytes());
        w.out.extend_from_slice(&(mtime as u32).to_le_bytes());
        w.out
            .extend_from_slice(&((mtime >> 32) as u32).to_le_bytes());
        for id in &in_ids {
            w.out.extend_from_slice(&id.to_le_bytes());
        }
        w.current[out_id as usize] = Some((mtime, in_ids.clone()));
    }
    w.out
}

/// State of [`write()`]: the bytes so far, each path's id and each output's
/// live record.
struct Writer<'a> {
    out: Vec<u8>,
    ids: FastMap<&'a str, u32>,
    current: Vec<Option<(u64, Vec<u32>)>>,
}

impl<'a> Writer<'a> {
    /// The id of `path`, writing its path record first when it has none
    /// (ninja's `RecordId`).
    fn id(&mut self, path: &'a str, made_change: &mut bool) -> u32 {
        if let Some(&id) = self.ids.get(path) {
            return id;
        }
        assert!(!path.is_empty(), "ninja never records an empty path");
        let padding = (4 - path.len() % 4) % 4;
        let size = path.len() + padding + 4;
        assert!(
            size <= MAX_RECORD_SIZE as usize,
            "path record over the size limit"
        );
        let id = self.current.len() as u32;
        self.out.extend_from_slice(&(size as u32).to_le_bytes());
        self.out.extend_from_slice(path.as_bytes());
        self.out.extend_from_slice(&[0u8; 3][..padding]);
        self.out.extend_from_slice(&(!id).to_le_bytes());
        self.current.push(None);
        self.ids.insert(path, id);
        *made_change = true;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut v = SIGNATURE.to_vec();
        v.extend_from_slice(&4i32.to_le_bytes());
        v
    }

    /// A path record as ninja's `RecordId` writes it, with checksum `sum`.
    fn path_rec(v: &mut Vec<u8>, path: &[u8], sum: u32) {
        let pad = (4 - path.len() % 4) % 4;
        v.extend_from_slice(&((path.len() + pad + 4) as u32).to_le_bytes());
        v.extend_from_slice(path);
        v.extend_from_slice(&[0u8; 3][..pad]);
        v.extend_from_slice(&sum.to_le_bytes());
    }

    fn deps_rec(v: &mut Vec<u8>, out: u32, mtime: u64, ins: &[u32]) {
        v.extend_from_slice(&((4 * (3 + ins.len())) as u32 | DEPS_BIT).to_le_bytes());
        v.extend_from_slice(&out.to_le_bytes());
        v.extend_from_slice(&(mtime as u32).to_le_bytes());
        v.extend_from_slice(&((mtime >> 32) as u32).to_le_bytes());
        for i in ins {
            v.extend_from_slice(&i.to_le_bytes());
        }
    }

    /// `paths` as path records with ids 0.., then `deps`.
    fn log(paths: &[&str], deps: &[(u32, u64, &[u32])]) -> Vec<u8> {
        let mut v = header();
        for (i, p) in paths.iter().enumerate() {
            path_rec(&mut v, p.as_bytes(), !(i as u32));
        }
        for &(o, m, ins) in deps {
            deps_rec(&mut v, o, m, ins);
        }
        v
    }

    fn err(bytes: &[u8]) -> DepsLogError {
        parse(bytes).expect_err("must be rejected")
    }

    #[test]
    fn reads_the_layout_of_the_reference_example() {
        // The bytes of cmake-evidence-formats.md §4: an output, its source
        // (one pad byte) and a deps record out=0, inputs [1, 2, 3, 4].
        let mut v = header();
        path_rec(&mut v, b"liba/CMakeFiles/liba.dir/a.cpp.o", !0);
        assert_eq!(&v[16..20], &[0x24, 0, 0, 0]);
        assert_eq!(&v[v.len() - 4..], &[0xff; 4]);
        for (i, p) in [
            "/src/proj/liba/a.cpp",
            "/usr/include/stdc-predef.h",
            "/x/a.hpp",
            "/x/b.hpp",
        ]
        .iter()
        .enumerate()
        {
            path_rec(&mut v, p.as_bytes(), !(i as u32 + 1));
        }
        deps_rec(&mut v, 0, 0x18ec_a894_ab51_c944, &[1, 2, 3, 4]);
        let tail = &v[v.len() - 32..];
        assert_eq!(&tail[..4], &[0x1c, 0, 0, 0x80]);
        assert_eq!(
            &tail[8..16],
            &[0x44, 0xc9, 0x51, 0xab, 0x94, 0xa8, 0xec, 0x18]
        );
        let d = parse(&v).unwrap();
        assert_eq!(d.paths[0], "liba/CMakeFiles/liba.dir/a.cpp.o");
        assert_eq!(d.paths[1], "/src/proj/liba/a.cpp");
        assert_eq!(
            d.records,
            vec![Record {
                output: 0,
                mtime_ns: 0x18ec_a894_ab51_c944,
                inputs: vec![1, 2, 3, 4]
            }]
        );
        assert_eq!(d.dead_outputs(), 0);
    }

    #[test]
    fn empty_log_and_header_check() {
        let d = parse(&header()).unwrap();
        assert!(d.paths.is_empty() && d.records.is_empty());
        assert!(is_deps_log(&header()));
        assert!(is_deps_log(b"# ninjadeps\n\x03\0\0\0"));
        assert!(!is_deps_log(b"# ninjadeps"));
        assert!(!is_deps_log(b"# ninja log v5\n"));
    }

    #[test]
    fn bad_signature() {
        assert_eq!(err(b""), DepsLogError::BadSignature);
        assert_eq!(err(b"# ninjadeps"), DepsLogError::BadSignature);
        assert_eq!(err(b"# ninjadepz\n\x04\0\0\0"), DepsLogError::BadSignature);
        assert_eq!(err(b"# ninja log v5\n"), DepsLogError::BadSignature);
        assert_eq!(DepsLogError::BadSignature.offset(), 0);
    }

    #[test]
    fn unsupported_versions() {
        for v in [1i32, 3, 5, -1, 0x0400_0000] {
            let mut b = SIGNATURE.to_vec();
            b.extend_from_slice(&v.to_le_bytes());
            assert_eq!(err(&b), DepsLogError::UnsupportedVersion(v));
        }
        // A big-endian version 4 reads as 0x04000000.
        let mut b = SIGNATURE.to_vec();
        b.extend_from_slice(&4i32.to_be_bytes());
        assert_eq!(err(&b), DepsLogError::UnsupportedVersion(0x0400_0000));
        assert_eq!(DepsLogError::UnsupportedVersion(3).offset(), 12);
    }

    #[test]
    fn truncated_header_and_every_torn_tail() {
        for n in 12..16 {
            assert_eq!(err(&header()[..n]), DepsLogError::Truncated { offset: 12 });
        }
        let v = log(
            &["out.o", "src.cpp", "h.h"],
            &[(0, 7, &[1, 2]), (0, 8, &[1])],
        );
        // Record starts: every prefix ending there is a valid shorter log.
        let mut starts = vec![16usize];
        let mut at = 16;
        while at < v.len() {
            at += 4 + (u32_at(&v, at) & !DEPS_BIT) as usize;
            starts.push(at);
        }
        for n in 16..v.len() {
            match parse(&v[..n]) {
                Ok(_) => assert!(starts.contains(&n), "prefix {n} accepted"),
                Err(e) => {
                    let start = *starts.iter().rfind(|&&s| s <= n).unwrap();
                    assert_eq!(e, DepsLogError::Truncated { offset: start }, "prefix {n}");
                }
            }
        }
        assert!(parse(&v).is_ok());
    }

    #[test]
    fn record_too_large() {
        let mut v = header();
        v.extend_from_slice(&(MAX_RECORD_SIZE + 1).to_le_bytes());
        v.resize(v.len() + MAX_RECORD_SIZE as usize + 1, b'a');
        assert_eq!(
            err(&v),
            DepsLogError::RecordTooLarge {
                offset: 16,
                size: MAX_RECORD_SIZE + 1
            }
        );
        // A huge deps size is refused before anything is read or allocated.
        let mut v = header();
        v.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            err(&v),
            DepsLogError::RecordTooLarge {
                offset: 16,
                size: 0x7fff_ffff
            }
        );
        // The limit itself is fine (ninja: `size > kMaxRecordSize` fails).
        let mut v = header();
        let path = "p".repeat(MAX_RECORD_SIZE as usize - 4 - 3);
        path_rec(&mut v, path.as_bytes(), !0);
        assert_eq!(u32_at(&v, 16), MAX_RECORD_SIZE - 3);
        assert_eq!(parse(&v).unwrap().paths, vec![path]);
    }

    #[test]
    fn bad_checksum() {
        let mut v = header();
        path_rec(&mut v, b"a.o", !0);
        path_rec(&mut v, b"b.o", !0);
        assert_eq!(
            err(&v),
            DepsLogError::BadChecksum {
                offset: 28,
                expected: !1,
                found: !0
            }
        );
        let mut v = header();
        path_rec(&mut v, b"a.o", 0);
        assert!(matches!(
            err(&v),
            DepsLogError::BadChecksum { offset: 16, .. }
        ));
    }

    #[test]
    fn unknown_ids() {
        // An input defined later than the record.
        let mut v = log(&["a.o", "a.c"], &[]);
        deps_rec(&mut v, 0, 1, &[1, 2]);
        path_rec(&mut v, b"late.h", !2);
        let at = log(&["a.o", "a.c"], &[]).len();
        assert_eq!(
            err(&v),
            DepsLogError::UnknownId {
                offset: at,
                id: 2,
                known: 2
            }
        );
        // An output id no path record gave (ninja's Load does not check it).
        let v = log(&["a.o"], &[(5, 1, &[0])]);
        assert!(matches!(
            err(&v),
            DepsLogError::UnknownId {
                id: 5,
                known: 1,
                ..
            }
        ));
        // A negative int32 id.
        let v = log(&["a.o", "a.c"], &[(0, 1, &[u32::MAX])]);
        assert!(matches!(
            err(&v),
            DepsLogError::UnknownId { id: u32::MAX, .. }
        ));
        // Deps before any path.
        let v = log(&[], &[(0, 1, &[])]);
        assert_eq!(
            err(&v),
            DepsLogError::UnknownId {
                offset: 16,
                id: 0,
                known: 0
            }
        );
    }

    #[test]
    fn bad_deps_sizes() {
        for size in [0u32, 4, 8, 13, 14, 15, 17] {
            let mut v = log(&["a.o"], &[]);
            let at = v.len();
            v.extend_from_slice(&(size | DEPS_BIT).to_le_bytes());
            v.resize(v.len() + size as usize, 0);
            assert_eq!(
                err(&v),
                DepsLogError::BadDepsSize { offset: at, size },
                "size {size}"
            );
        }
        // 12 is an output with no inputs (an empty depfile).
        let d = parse(&log(&["a.o"], &[(0, 3, &[])])).unwrap();
        assert_eq!(d.records[0].inputs, Vec::<u32>::new());
    }

    #[test]
    fn bad_path_records() {
        let cases: &[&[u8]] = &[
            b"",                             // size 0
            b"\xff\xff\xff\xff",             // size 4: checksum only, no path
            b"\0\0\0\0\xff\xff\xff\xff",     // only padding
            b"abcd\0\0\0\0\xff\xff\xff\xff", // four NULs: one stays in the path
            b"a\0b\0\xff\xff\xff\xff",       // NUL inside
            b"abcde\xff\xff\xff\xff",        // size 9: not a multiple of 4
        ];
        for body in cases {
            let mut v = header();
            v.extend_from_slice(&(body.len() as u32).to_le_bytes());
            v.extend_from_slice(body);
            assert_eq!(
                err(&v),
                DepsLogError::BadPathRecord {
                    offset: 16,
                    size: body.len() as u32
                },
                "{body:?}"
            );
        }
    }

    #[test]
    fn duplicate_path() {
        let v = log(&["a.o", "a.c", "a.o"], &[]);
        assert_eq!(
            err(&v),
            DepsLogError::DuplicatePath {
                offset: 40,
                first: 0
            }
        );
        // Padding is not part of the path: "ab" and "ab\0\0" are the same path.
        let mut v = header();
        path_rec(&mut v, b"ab", !0);
        path_rec(&mut v, b"ab\0", !1);
        assert!(matches!(
            err(&v),
            DepsLogError::DuplicatePath { first: 0, .. }
        ));
    }

    #[test]
    fn not_utf8() {
        let mut v = header();
        path_rec(&mut v, b"a.o", !0);
        path_rec(&mut v, b"caf\xe9.h", !1);
        assert_eq!(err(&v), DepsLogError::NotUtf8 { offset: 28 });
    }

    #[test]
    fn later_record_replaces_earlier_and_counts_dead() {
        let v = log(
            &["b.o", "b.c", "x.h", "a.o", "a.c", "y.h"],
            &[
                (0, 10, &[1, 2]),
                (3, 11, &[4]),
                (0, 12, &[1]),
                (3, 13, &[4, 5]),
                (0, 14, &[1, 2, 5]),
            ],
        );
        let d = parse(&v).unwrap();
        assert_eq!(d.dead_outputs(), 3);
        // Sorted by output path: a.o before b.o.
        assert_eq!(
            d.records,
            vec![
                Record {
                    output: 3,
                    mtime_ns: 13,
                    inputs: vec![4, 5]
                },
                Record {
                    output: 0,
                    mtime_ns: 14,
                    inputs: vec![1, 2, 5]
                },
            ]
        );
        assert_eq!(d.get("b.o").unwrap().mtime_ns, 14);
        assert_eq!(d.get("a.o").unwrap().inputs, vec![4, 5]);
        assert!(d.get("x.h").is_none());
        assert!(d.get("c.o").is_none());
    }

    #[test]
    fn full_64_bit_mtime_is_kept() {
        let m = 0xfedc_ba98_7654_3210u64;
        let d = parse(&log(&["a.o"], &[(0, m, &[0])])).unwrap();
        assert_eq!(d.records[0].mtime_ns, m);
    }

    #[test]
    fn writer_mirrors_record_deps() {
        let bytes = write(&[
            ("obj/a.o", 5, &["../src/a.c", "inc/x.h"]),
            ("obj/b.o", 6, &["../src/b.c", "inc/x.h", "inc/x.h"]),
            // Unchanged: RecordDeps writes nothing.
            ("obj/a.o", 5, &["../src/a.c", "inc/x.h"]),
            // New mtime: a second record, no new path records.
            ("obj/a.o", 7, &["../src/a.c", "inc/x.h"]),
        ]);
        // Output first, then inputs, each once, in first-use order.
        let mut want = log(&["obj/a.o", "../src/a.c", "inc/x.h"], &[(0, 5, &[1, 2])]);
        path_rec(&mut want, b"obj/b.o", !3);
        path_rec(&mut want, b"../src/b.c", !4);
        deps_rec(&mut want, 3, 6, &[4, 2, 2]);
        deps_rec(&mut want, 0, 7, &[1, 2]);
        assert_eq!(bytes, want);
        let d = parse(&bytes).unwrap();
        assert_eq!(d.dead_outputs(), 1);
        assert_eq!(d.get("obj/a.o").unwrap().mtime_ns, 7);
        assert_eq!(d.get("obj/b.o").unwrap().inputs, vec![4, 2, 2]);
    }

    #[test]
    fn writer_writes_path_ids_of_outputs_met_as_inputs() {
        // A path first met as an input keeps its id when it becomes an output.
        let bytes = write(&[("gen.h", 1, &["gen.py"]), ("a.o", 2, &["a.c", "gen.h"])]);
        let d = parse(&bytes).unwrap();
        assert_eq!(d.paths, vec!["gen.h", "gen.py", "a.o", "a.c"]);
        assert_eq!(d.get("a.o").unwrap().inputs, vec![3, 0]);
        assert_eq!(write(&[]), header());
    }

    #[test]
    fn resolve_joins_relative_paths_and_folds() {
        let d = parse(&write(&[(
            "CMakeFiles/t.dir/./a.cpp.o",
            1,
            &["/src/p/../p/a.cpp", "gen/../gen/x.h"],
        )]))
        .unwrap();
        assert_eq!(d.resolve("/bld", 0), "/bld/CMakeFiles/t.dir/a.cpp.o");
        assert_eq!(d.resolve("/bld", 1), "/src/p/a.cpp");
        assert_eq!(d.resolve("/bld/sub", 2), "/bld/sub/gen/x.h");
        assert_eq!(d.paths[2], "gen/../gen/x.h", "kept as written");
    }

    /// A log shaped like a large C++ build: `outs` objects, each with its
    /// source and `per` headers from a shared pool, some rebuilt once.
    pub(crate) fn synthetic(outs: usize, per: usize, pool: usize) -> Vec<u8> {
        let headers: Vec<String> = (0..pool)
            .map(|i| format!("/src/llvm/include/llvm/Module{}/Header{i}.h", i % 97))
            .collect();
        let objs: Vec<(String, String)> = (0..outs)
            .map(|i| {
                (
                    format!("lib/Part{}/CMakeFiles/obj.dir/File{i}.cpp.o", i % 53),
                    format!("/src/llvm/lib/Part{}/File{i}.cpp", i % 53),
                )
            })
            .collect();
        let inputs: Vec<Vec<&str>> = objs
            .iter()
            .enumerate()
            .map(|(i, (_, src))| {
                std::iter::once(src.as_str())
                    .chain((0..per).map(|k| headers[(i * 31 + k * 7) % pool].as_str()))
                    .collect()
            })
            .collect();
        let mut recs: Vec<(&str, u64, &[&str])> = objs
            .iter()
            .zip(&inputs)
            .enumerate()
            .map(|(i, ((o, _), ins))| {
                (
                    o.as_str(),
                    1_700_000_000_000_000_000 + i as u64,
                    ins.as_slice(),
                )
            })
            .collect();
        for i in (0..outs).step_by(10) {
            let (o, m, ins) = recs[i];
            recs.push((o, m + 1, ins));
        }
        write(&recs)
    }

    #[test]
    fn parses_a_10_mb_log_fast() {
        let bytes = synthetic(6_000, 400, 20_000);
        assert!(bytes.len() >= 10 << 20, "{} bytes", bytes.len());
        let t = std::time::Instant::now();
        let d = parse(&bytes).unwrap();
        let took = t.elapsed();
        assert_eq!(d.records.len(), 6_000);
        assert_eq!(d.dead_outputs(), 600);
        assert_eq!(d.paths.len(), 6_000 * 2 + 20_000);
        assert!(d.records.iter().all(|r| r.inputs.len() == 401));
        assert!(
            took < std::time::Duration::from_secs(2),
            "parse of {} bytes took {took:?}",
            bytes.len()
        );
    }
}
