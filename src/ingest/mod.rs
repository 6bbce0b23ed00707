//! Evidence ingest: one module per evidence source, each auditing its own input.
//!
//! Shared here: the configured size limits and a bounded file reader that every
//! parser uses, so no input can make the tool read unboundedly. Format logic
//! lives in the per-source modules.

pub mod aliases;
pub mod autogen;
pub mod build;
pub mod build_commands;
pub mod cmake_cache;
pub mod cmake_script;
pub mod configure_reads;
pub mod coverage;
pub mod ctest;
pub mod ctest_cost;
pub mod custom_commands;
pub mod depfile;
pub mod depfile_syntax;
pub mod evidence;
pub mod file_api;
pub mod ninja_deps;
pub mod ninja_log;
pub mod ninja_manifest;
pub mod record;
pub mod record_audit;
pub mod strace;

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::reason::{Code, Gap};

/// Configured input limits. Exceeding one is a coded fallback, never a crash.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest single evidence file read, in bytes.
    pub max_file_bytes: u64,
    /// Largest total of evidence bytes read in one run.
    pub max_total_bytes: u64,
    /// Most registered tests in the catalogue.
    pub max_tests: usize,
    /// Most targets in the selected configuration.
    pub max_targets: usize,
    /// Most entries in the dependency-file list.
    pub max_depfiles: usize,
    /// Longest path accepted anywhere, in bytes.
    pub max_path_len: usize,
}

impl Default for Limits {
    /// Defaults sized for a Chromium-scale monorepo with headroom.
    fn default() -> Self {
        Limits {
            max_file_bytes: 512 << 20,
            max_total_bytes: 64 << 30,
            max_tests: 1_000_000,
            max_targets: 500_000,
            max_depfiles: 2_000_000,
            max_path_len: 4096,
        }
    }
}

/// Why [`Reader::read_chunks`] stopped.
#[derive(Debug)]
pub enum Chunked<E> {
    /// The file could not be read within the limits.
    Read(ReadError),
    /// The caller's step on a chunk failed.
    Stopped(E),
}

/// Why a bounded read failed.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The file is larger than `max_file_bytes`.
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// Reading it would exceed `max_total_bytes`.
    TotalTooLarge {
        /// The limit in bytes.
        limit: u64,
    },
}

impl ReadError {
    /// The gap for a failed read of `path`: `io` when the file could not be
    /// read, `limit` when a limit stopped it. The total-bytes gap names no
    /// file: which of several parallel reads crosses the limit depends on
    /// timing, and the report must not.
    pub fn gap(self, path: &str, io: Code, limit: Code) -> Gap {
        match self {
            ReadError::Io(e) => Gap::new(io, format!("{path}: {e}")),
            ReadError::TotalTooLarge { .. } => Gap::new(limit, self.to_string()),
            ReadError::TooLarge { .. } => Gap::new(limit, format!("{path}: {self}")),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge { limit } => write!(
                f,
                "larger than the per-file limit of {limit} bytes (--max-file-bytes)"
            ),
            ReadError::TotalTooLarge { limit } => {
                write!(
                    f,
                    "total evidence read exceeds the limit of {limit} bytes (--max-total-bytes)"
                )
            }
        }
    }
}

/// `(path, SHA-256)` of one file read.
type FileDigest = (String, [u8; 32]);

/// A reader that enforces the per-file and total byte limits. Shared across threads.
#[derive(Debug)]
pub struct Reader {
    limits: Limits,
    total: AtomicU64,
    /// Set once a read was refused by the total-bytes limit.
    total_exceeded: AtomicBool,
    /// When set, the SHA-256 of every file read (for plan input identity).
    digests: Option<std::sync::Mutex<Vec<FileDigest>>>,
}

impl Reader {
    /// A reader enforcing `limits`.
    pub fn new(limits: Limits) -> Self {
        Reader {
            limits,
            total: AtomicU64::new(0),
            total_exceeded: AtomicBool::new(false),
            digests: None,
        }
    }

    /// A reader that also records the SHA-256 of every file it reads.
    pub fn with_digests(limits: Limits) -> Self {
        Reader {
            limits,
            total: AtomicU64::new(0),
            total_exceeded: AtomicBool::new(false),
            digests: Some(std::sync::Mutex::new(Vec::new())),
        }
    }

    /// `(path, sha256 hex)` of every file read, sorted by path (empty unless
    /// `with_digests`). Also empty once the total-bytes limit refused a read:
    /// which files were read by then depends on the timing of parallel reads.
    pub fn digests(&self) -> Vec<(String, String)> {
        let Some(d) = &self.digests else {
            return Vec::new();
        };
        if self.total_exceeded.load(Ordering::Relaxed) {
            return Vec::new();
        }
        let guard = match d.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut v: Vec<(String, String)> = guard
            .iter()
            .map(|(p, h)| (p.clone(), crate::digest::hex(h)))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Whether the total-bytes limit refused a read.
    pub fn total_exceeded(&self) -> bool {
        self.total_exceeded.load(Ordering::Relaxed)
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Reads a file in pieces of about `chunk` bytes, handing each to `f` in
    /// order, under the same limits (and with the same digest) as [`Self::read`],
    /// so a large file is never whole in memory. `f`'s error ends the read.
    pub fn read_chunks<E>(
        &self,
        path: &str,
        chunk: usize,
        mut f: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), Chunked<E>> {
        use sha2::Digest;
        let mut file = std::fs::File::open(path).map_err(|e| Chunked::Read(ReadError::Io(e)))?;
        let max = self.limits.max_file_bytes;
        let mut digest = self.digests.as_ref().map(|_| sha2::Sha256::new());
        let mut buf = vec![0u8; chunk.max(4096)];
        let mut n: u64 = 0;
        loop {
            let k = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Chunked::Read(ReadError::Io(e))),
            };
            n += k as u64;
            if n > max {
                return Err(Chunked::Read(ReadError::TooLarge { limit: max }));
            }
            if let Some(d) = &mut digest {
                d.update(&buf[..k]);
            }
            f(&buf[..k]).map_err(Chunked::Stopped)?;
        }
        let before = self.total.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > self.limits.max_total_bytes {
            self.total_exceeded.store(true, Ordering::Relaxed);
            return Err(Chunked::Read(ReadError::TotalTooLarge {
                limit: self.limits.max_total_bytes,
            }));
        }
        if let (Some(d), Some(h)) = (&self.digests, digest) {
            let h: [u8; 32] = h.finalize().into();
            match d.lock() {
                Ok(mut g) => g.push((path.to_owned(), h)),
                Err(poisoned) => poisoned.into_inner().push((path.to_owned(), h)),
            }
        }
        Ok(())
    }

    /// Reads a whole file, refusing files over the limits.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::new();
        let (_, n) = self.read_into_meta(path, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// Reads a whole file into `buf[..n]`, refusing files over the limits, and
    /// returns the open file's metadata (one `fstat` on the handle that was
    /// read, so timestamp and identity belong to exactly the bytes read) and `n`.
    ///
    /// `buf` is a reusable scratch buffer: bytes past `n` are left over from
    /// earlier reads, and its length only grows, so a worker reading
    /// thousands of files zeroes memory once, not once per file. Reads go
    /// straight into it: the expected size plus one byte, so a regular file
    /// takes one read and one more to see its end.
    pub fn read_into_meta(
        &self,
        path: &str,
        buf: &mut Vec<u8>,
    ) -> Result<(std::fs::Metadata, usize), ReadError> {
        let mut file = std::fs::File::open(path).map_err(ReadError::Io)?;
        let meta = file.metadata().map_err(ReadError::Io)?;
        let max = self.limits.max_file_bytes;
        // Never more than one byte past the limit, whatever the metadata says.
        let cap = usize::try_from(max.saturating_add(1)).unwrap_or(usize::MAX);
        let expected = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        let mut n = 0usize;
        loop {
            if n == buf.len() {
                if n >= cap {
                    break;
                }
                let want = expected
                    .saturating_add(1)
                    .max(n.saturating_mul(2))
                    .max(8192);
                buf.resize(want.min(cap), 0);
            }
            let end = buf.len().min(cap);
            match file.read(&mut buf[n..end]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
        if n as u64 > max {
            return Err(ReadError::TooLarge { limit: max });
        }
        let before = self.total.fetch_add(n as u64, Ordering::Relaxed);
        if before.saturating_add(n as u64) > self.limits.max_total_bytes {
            self.total_exceeded.store(true, Ordering::Relaxed);
            return Err(ReadError::TotalTooLarge {
                limit: self.limits.max_total_bytes,
            });
        }
        if let Some(d) = &self.digests {
            let h = crate::digest::sha256(&buf[..n]);
            match d.lock() {
                Ok(mut g) => g.push((path.to_owned(), h)),
                Err(poisoned) => poisoned.into_inner().push((path.to_owned(), h)),
            }
        }
        Ok((meta, n))
    }
}

/// Worker threads to use: the available cores, at most eight.
/// Asked once per process: on Linux the answer comes from the scheduler
/// affinity and the cgroup CPU quota files.
pub fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8)
    })
}

/// Runs `f(state, index, item)` over every item on at most `n` threads (one when `n` is 0). Threads pull
/// small blocks of indices from a shared counter (so one slow file cannot leave
/// a core idle), each with its own `state` from `make`; returns the states.
/// Callers that need a deterministic order sort by the indices they record.
fn par_each_n<T: Sync, S: Send>(
    n: usize,
    items: &[T],
    make: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize, &T) + Sync,
) -> Vec<S> {
    const BLOCK: usize = 8;
    if n <= 1 || items.len() < 2 * BLOCK {
        let mut s = make();
        for (i, t) in items.iter().enumerate() {
            f(&mut s, i, t);
        }
        return vec![s];
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (f, make, next) = (&f, &make, &next);
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                sc.spawn(move || {
                    let mut s = make();
                    loop {
                        let start = next.fetch_add(BLOCK, Ordering::Relaxed);
                        if start >= items.len() {
                            break;
                        }
                        for (i, t) in items.iter().enumerate().skip(start).take(BLOCK) {
                            f(&mut s, i, t);
                        }
                    }
                    s
                })
            })
            .collect();
        let mut out = Vec::with_capacity(n);
        for h in handles {
            match h.join() {
                Ok(v) => out.push(v),
                // Re-raise a worker's panic on this thread: it becomes INTERNAL_ERROR.
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        out
    })
}

/// Maps `f` over owned `items` on all available cores, preserving order:
/// `f` gets each item by value with its index, so whatever it drops is freed
/// on the worker threads too.
pub fn par_map_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(usize, T) -> R + Sync) -> Vec<R> {
    const BLOCK: usize = 8;
    let n = threads();
    if n <= 1 || items.len() < 2 * BLOCK {
        return items
            .into_iter()
            .enumerate()
            .map(|(i, t)| f(i, t))
            .collect();
    }
    let mut blocks: Vec<std::sync::Mutex<Vec<T>>> = Vec::with_capacity(items.len() / BLOCK + 1);
    let mut rest = items.into_iter();
    loop {
        let block: Vec<T> = rest.by_ref().take(BLOCK).collect();
        if block.is_empty() {
            break;
        }
        blocks.push(std::sync::Mutex::new(block));
    }
    let parts = par_each_n(
        n,
        &blocks,
        Vec::new,
        |out: &mut Vec<(usize, Vec<R>)>, b, block| {
            let items = std::mem::take(&mut *block.lock().unwrap_or_else(|p| p.into_inner()));
            let first = b * BLOCK;
            out.push((
                b,
                items
                    .into_iter()
                    .enumerate()
                    .map(|(k, t)| f(first + k, t))
                    .collect(),
            ));
        },
    );
    let mut parts: Vec<(usize, Vec<R>)> = parts.into_iter().flatten().collect();
    parts.sort_unstable_by_key(|p| p.0);
    parts.into_iter().flat_map(|p| p.1).collect()
}

/// Maps `f` over `items` on at most `n` threads (one when `n` is 0),
/// preserving order. Evidence files are independent, so reading and parsing
/// them in parallel is safe; results come back in input order, so output
/// stays deterministic.
pub fn par_map_n<T: Sync, R: Send>(n: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let parts = par_each_n(n, items, Vec::new, |out: &mut Vec<(usize, R)>, i, t| {
        out.push((i, f(t)))
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("par_each visits every index exactly once"))
        .collect()
}

/// Frees `heavy` (evidence: hundreds of thousands of small allocations at
/// monorepo scale) on a helper thread, so the analysis and the report are not
/// held up by it. A process that exits right after does not wait for the
/// helper; if no thread can be started, it is freed here.
pub(crate) fn drop_in_background<T: Send + 'static>(heavy: T) {
    let _ = std::thread::Builder::new().spawn(move || drop(heavy));
}

/// `path`'s bytes, or an error when it cannot be read or holds more than
/// `max` bytes (only `max + 1` are read to tell).
pub(crate) fn read_capped(path: &str, max: u64) -> std::io::Result<Vec<u8>> {
    let f = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    f.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "larger than {max} bytes (--max-file-bytes)"
        )));
    }
    Ok(buf)
}

/// The document `text` holds, when it is wanted (`keep`: a snapshot
/// fingerprints it) and parses.
pub(crate) fn json_value(text: &str, keep: bool) -> Option<serde_json::Value> {
    keep.then(|| serde_json::from_str(text).ok()).flatten()
}

/// `T` from `value` when there is one (the text is then not parsed again),
/// else from `text`; a failure from `value` is parsed again from `text`,
/// for serde's message with its position.
pub(crate) fn parse_json<'a, T: serde::Deserialize<'a>>(
    text: &'a str,
    value: Option<&'a serde_json::Value>,
) -> serde_json::Result<T> {
    match value {
        Some(v) => T::deserialize(v).or_else(|_| serde_json::from_str(text)),
        None => serde_json::from_str(text),
    }
}
