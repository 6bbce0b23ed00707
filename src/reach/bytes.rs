//! The bytes channel: the names a program or library keeps for run time.
//! Every artifact file name that stands as a token in the run-time data
//! sections of a binary (strings, `.rodata`, `.data`, `.dynstr`; the whole
//! file when it is no ELF file) is a binary it may load or run; the
//! [`Climb`]s those bytes hold say where else it may look.

use std::io::{Read, Seek, SeekFrom};

use super::climbs::{climbing_path, unbounded_climb, Climb};
use super::plugins::is_loadable;
use crate::fasthash::FastMap;
use crate::ingest::file_api::Codemodel;
use crate::reason::{Code, Gap};

/// Bytes a file name token is made of.
#[inline]
pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-' | b'~' | b'@' | b'#')
}

/// The loadable targets whose artifact file names appear as tokens in the
/// run-time bytes of `t`'s artifacts, and the [`climbing_path`]s those bytes
/// hold (sorted, each once). A binary that cannot be read is a gap.
pub(super) fn scan_target_binaries(
    model: &Codemodel,
    t: usize,
    scanner: &mut Scanner<'_>,
    gaps: &mut Vec<Gap>,
) -> (Vec<usize>, Vec<Climb>) {
    let mut found: Vec<usize> = Vec::new();
    let mut climbs: Vec<Climb> = Vec::new();
    for a in &model.targets[t].artifacts {
        match std::fs::metadata(a) {
            Err(_) => continue, // never built: nothing can run or load it
            Ok(m) if !m.is_file() => continue,
            Ok(_) => {}
        }
        if let Err(e) = scanner.scan(a, (&mut found, &mut climbs)) {
            gaps.push(Gap::new(
                Code::RuntimeLoadedTarget,
                format!(
                    "{} of target {:?} cannot be read to see which programs and libraries it may load: {e}",
                    a, model.targets[t].name
                ),
            ));
        }
    }
    found.retain(|&o| o != t && is_loadable(model.targets[o].kind));
    found.sort_unstable();
    found.dedup();
    climbs.sort_unstable();
    climbs.dedup();
    (found, climbs)
}

/// The run-time data bytes of `path` ([`runtime_ranges`]), at most `limit`
/// bytes of them.
pub(super) fn runtime_bytes(path: &str, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let ranges = runtime_ranges(&mut f, len)?;
    let mut out = Vec::new();
    for (off, size) in ranges {
        if out.len() as u64 + size > limit {
            return Err(std::io::Error::other(format!(
                "more than {limit} bytes of run-time data"
            )));
        }
        let start = out.len();
        out.resize(start + size as usize, 0);
        f.seek(SeekFrom::Start(off))?;
        f.read_exact(&mut out[start..])?;
        out.push(0);
    }
    Ok(out)
}

/// Byte ranges of `file` where a program keeps the names it uses at run
/// time: the allocated, file-backed data sections of an ELF file (strings,
/// `.rodata`, `.data`, `.dynstr`; not code, symbol tables or debug
/// information); the whole file otherwise.
fn runtime_ranges(f: &mut std::fs::File, len: u64) -> std::io::Result<Vec<(u64, u64)>> {
    let mut magic = [0u8; 8];
    let n = f.read(&mut magic)?;
    if n == 8 && &magic == b"!<arch>\n" {
        return archive_ranges(f, len);
    }
    elf_ranges(f, 0, len)
}

/// A static archive (`ar`): each member's run-time data ([`elf_ranges`];
/// its symbol table and long-name table hold no data a program uses). A
/// damaged header: the rest of the file, whole.
fn archive_ranges(f: &mut std::fs::File, len: u64) -> std::io::Result<Vec<(u64, u64)>> {
    let mut ranges = Vec::new();
    let mut at = 8u64;
    while at + 60 <= len {
        let mut h = [0u8; 60];
        f.seek(SeekFrom::Start(at))?;
        f.read_exact(&mut h)?;
        let size = std::str::from_utf8(&h[48..58])
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let Some(size) = size.filter(|&sz| &h[58..60] == b"`\n" && sz <= len - at - 60) else {
            ranges.push((at, len - at));
            return Ok(ranges);
        };
        let name = &h[..16];
        let body = at + 60;
        // GNU and BSD symbol tables and the long-name table.
        let index = name.starts_with(b"/ ")
            || name.starts_with(b"// ")
            || name.starts_with(b"/SYM64/")
            || name.starts_with(b"__.SYMDEF");
        if !index {
            ranges.extend(elf_ranges(f, body, size)?);
        }
        at = body + size + (size & 1);
    }
    Ok(ranges)
}

/// [`runtime_ranges`] of the ELF file at `base` (`len` bytes long) of `f`.
fn elf_ranges(f: &mut std::fs::File, base: u64, len: u64) -> std::io::Result<Vec<(u64, u64)>> {
    let mut head = [0u8; 64];
    f.seek(SeekFrom::Start(base))?;
    let n = f.take(len.min(64)).read(&mut head)?;
    let whole = Ok(vec![(base, len)]);
    if n < 52 || &head[..4] != b"\x7fELF" || head[5] != 1 {
        return whole; // not little-endian ELF: scan everything
    }
    let is64 = match head[4] {
        1 => false,
        2 => true,
        _ => return whole,
    };
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let u32_at =
        |b: &[u8], o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as u64;
    let u64_at = |b: &[u8], o: usize| {
        u64::from_le_bytes([
            b[o],
            b[o + 1],
            b[o + 2],
            b[o + 3],
            b[o + 4],
            b[o + 5],
            b[o + 6],
            b[o + 7],
        ])
    };
    let (shoff, shentsize, shnum) = if is64 {
        (
            u64_at(&head, 0x28),
            u16_at(&head, 0x3a),
            u16_at(&head, 0x3c),
        )
    } else {
        (
            u32_at(&head, 0x20),
            u16_at(&head, 0x2e),
            u16_at(&head, 0x30),
        )
    };
    let need = if is64 { 64 } else { 40 };
    if shnum == 0 || shentsize < need || shoff >= len || shnum * shentsize > len - shoff {
        return whole;
    }
    let mut table = vec![0u8; (shnum * shentsize) as usize];
    f.seek(SeekFrom::Start(base + shoff))?;
    f.read_exact(&mut table)?;
    let shstrndx = if is64 {
        u16_at(&head, 0x3e)
    } else {
        u16_at(&head, 0x32)
    };
    let section = |i: usize| {
        let s = &table[i * shentsize as usize..];
        let (flags, off, size) = if is64 {
            (u64_at(s, 8), u64_at(s, 24), u64_at(s, 32))
        } else {
            (u32_at(s, 8), u32_at(s, 16), u32_at(s, 20))
        };
        (u32_at(s, 0), u32_at(s, 4), flags, off, size)
    };
    // Section names, to keep the data sections (strings live there).
    let mut names = Vec::new();
    if (shstrndx as usize) < shnum as usize {
        let (_, _, _, off, size) = section(shstrndx as usize);
        if off <= len && size <= len - off && size < (64 << 20) {
            names = vec![0u8; size as usize];
            f.seek(SeekFrom::Start(base + off))?;
            f.read_exact(&mut names)?;
        }
    }
    let name_of = |at: u64| -> &[u8] {
        let rest = names.get(at as usize..).unwrap_or(&[]);
        &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]
    };
    const SHF_ALLOC: u64 = 2;
    const SHF_EXECINSTR: u64 = 4;
    const SHF_STRINGS: u64 = 0x20;
    const SHT_NOBITS: u64 = 8;
    let mut ranges = Vec::new();
    for i in 0..shnum as usize {
        let (name, sh_type, flags, off, size) = section(i);
        if flags & SHF_ALLOC == 0
            || flags & SHF_EXECINSTR != 0
            || sh_type == SHT_NOBITS
            || size == 0
        {
            continue;
        }
        // Data a program reads at run time: string sections, and .rodata/.data
        // (arrays initialised with a name) and .dynstr (needed libraries, rpaths).
        let n = name_of(name);
        let data = flags & SHF_STRINGS != 0
            || names.is_empty()
            || [
                &b".rodata"[..],
                b".data",
                b".dynstr",
                b".tdata",
                b".lrodata",
                b".ldata",
            ]
            .iter()
            .any(|p| n.starts_with(p));
        if !data {
            continue;
        }
        if off > len || size > len - off {
            return whole; // inconsistent table: scan everything
        }
        ranges.push((base + off, size));
    }
    Ok(ranges)
}

/// The artifact file names with bytes outside [`is_name_byte`] (searched as
/// substrings, not tokens), with their targets, sorted.
pub(super) fn odd_names(names: &FastMap<String, Vec<usize>>) -> Vec<(&String, &Vec<usize>)> {
    let mut odd: Vec<_> = names
        .iter()
        .filter(|(k, _)| !k.bytes().all(is_name_byte))
        .collect();
    odd.sort();
    odd
}

/// What one run scans binaries for, set up once: every artifact file name,
/// their length bounds, the names that need a substring search, and one
/// read buffer for every binary.
pub(super) struct Scanner<'n> {
    names: &'n FastMap<String, Vec<usize>>,
    min_len: usize,
    max_len: usize,
    odd: Vec<(&'n String, &'n Vec<usize>)>,
    buf: Vec<u8>,
}

impl<'n> Scanner<'n> {
    pub(super) fn new(names: &'n FastMap<String, Vec<usize>>) -> Self {
        let (min_len, max_len) = names.keys().fold((usize::MAX, 0), |(lo, hi), k| {
            (lo.min(k.len()), hi.max(k.len()))
        });
        let odd = odd_names(names);
        Scanner {
            names,
            min_len,
            max_len,
            odd,
            buf: Vec::new(),
        }
    }

    /// Adds the targets whose artifact file name is a token of `path`'s
    /// run-time bytes, and the [`climbing_path`]s they hold.
    fn scan(&mut self, path: &str, out: (&mut Vec<usize>, &mut Vec<Climb>)) -> std::io::Result<()> {
        if self.buf.is_empty() {
            self.buf = vec![0u8; 1 << 20];
        }
        let (names, min_len, max_len) = (self.names, self.min_len, self.max_len);
        let (odd, buf) = (&self.odd, &mut self.buf);
        scan_binary(path, names, (min_len, max_len), odd, buf, out)
    }
}

/// The runs of one stream of characters (a binary's bytes, or the ASCII of
/// its UTF-16LE text at one alignment), fed one at a time: a run of name
/// bytes that equals an artifact file name (not followed by `/`) is a
/// binary the scanned one may load or run; a run of path bytes is checked
/// for a [`Climb`].
struct Runs {
    run: Vec<u8>,
    too_long: bool,
    path_run: Vec<u8>,
    path_too_long: bool,
}

/// What [`Runs`] compares its runs with.
struct Names<'a> {
    names: &'a FastMap<String, Vec<usize>>,
    min_len: usize,
    max_len: usize,
}

impl Runs {
    fn new(max_len: usize) -> Self {
        Runs {
            run: Vec::with_capacity(max_len + 1),
            too_long: false,
            path_run: Vec::new(),
            path_too_long: false,
        }
    }

    fn check(&self, n: &Names<'_>, next: Option<u8>, found: &mut Vec<usize>) {
        let run = &self.run;
        if !self.too_long && run.len() >= n.min_len && run.len() <= n.max_len && next != Some(b'/')
        {
            if let Some(owners) = std::str::from_utf8(run).ok().and_then(|s| n.names.get(s)) {
                found.extend(owners.iter().copied());
            }
        }
    }

    fn end_path_run(&mut self, climbs: &mut Vec<Climb>) {
        if !self.path_too_long {
            if let Some(what) = unbounded_climb(&self.path_run) {
                climbs.push(Climb::Anywhere(what));
            } else if self.path_run.contains(&b'.') {
                if let Some(p) = climbing_path(&self.path_run) {
                    climbs.push(Climb::Path(p.to_owned()));
                }
            }
        }
        self.path_run.clear();
        self.path_too_long = false;
    }

    #[inline]
    fn feed(&mut self, b: u8, n: &Names<'_>, (found, climbs): (&mut Vec<usize>, &mut Vec<Climb>)) {
        if is_name_byte(b) || b == b'/' {
            if self.path_run.len() < MAX_CLIMBING_PATH {
                self.path_run.push(b);
            } else {
                self.path_too_long = true;
            }
        } else if !self.path_run.is_empty() {
            self.end_path_run(climbs);
        }
        if is_name_byte(b) {
            if self.run.len() <= n.max_len {
                self.run.push(b);
            } else {
                self.too_long = true;
            }
        } else {
            if !self.run.is_empty() {
                self.check(n, Some(b), found);
            }
            self.run.clear();
            self.too_long = false;
        }
    }

    fn finish(&mut self, n: &Names<'_>, (found, climbs): (&mut Vec<usize>, &mut Vec<Climb>)) {
        if !self.run.is_empty() {
            self.check(n, None, found);
        }
        self.run.clear();
        self.too_long = false;
        if !self.path_run.is_empty() {
            self.end_path_run(climbs);
        }
    }
}

/// Adds to `found` the targets whose artifact file name is a token of
/// `path`'s run-time bytes, and to `climbs` the [`climbing_path`]s those
/// bytes hold. The bytes are read as they stand (ASCII and UTF-8 strings)
/// and as UTF-16LE text at both alignments (`u"conv"`, Qt's
/// `QStringLiteral("/conv")`, Windows-style wide strings): every character
/// below 0x80 followed by a zero byte is that character, anything else ends
/// a run. Names with bytes outside [`is_name_byte`] (`odd`) are searched as
/// substrings of the bytes as they stand.
fn scan_binary(
    path: &str,
    names: &FastMap<String, Vec<usize>>,
    (min_len, max_len): (usize, usize),
    odd: &[(&String, &Vec<usize>)],
    buf: &mut [u8],
    (found, climbs): (&mut Vec<usize>, &mut Vec<Climb>),
) -> std::io::Result<()> {
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    let ranges = runtime_ranges(&mut f, len)?;
    let n = Names {
        names,
        min_len,
        max_len,
    };
    for (off, size) in ranges {
        f.seek(SeekFrom::Start(off))?;
        let mut left = size;
        let mut tail: Vec<u8> = Vec::new();
        let mut bytes = Runs::new(max_len);
        // UTF-16LE at even and at odd offsets: the low byte of a pending unit.
        let mut wide = [Runs::new(max_len), Runs::new(max_len)];
        let mut low: [Option<u8>; 2] = [None, None];
        let mut at = off;
        while left > 0 {
            let want = left.min(buf.len() as u64) as usize;
            f.read_exact(&mut buf[..want])?;
            left -= want as u64;
            let chunk = &buf[..want];
            for &b in chunk {
                bytes.feed(b, &n, (found, climbs));
                let a = (at & 1) as usize;
                // This byte starts a unit at alignment `a`, and ends the one at the other.
                if let Some(lo) = low[1 - a].take() {
                    let ch = if b == 0 && lo != 0 && lo < 0x80 {
                        lo
                    } else {
                        0
                    };
                    wide[1 - a].feed(ch, &n, (found, climbs));
                }
                low[a] = Some(b);
                at += 1;
            }
            if !odd.is_empty() {
                let mut joined = std::mem::take(&mut tail);
                joined.extend_from_slice(chunk);
                for (name, owners) in odd {
                    let n = name.as_bytes();
                    if joined.windows(n.len()).any(|w| w == n) {
                        found.extend(owners.iter().copied());
                    }
                }
                let keep = joined.len().min(max_len);
                tail = joined[joined.len() - keep..].to_vec();
            }
        }
        bytes.finish(&n, (found, climbs));
        for w in &mut wide {
            w.finish(&n, (found, climbs));
        }
    }
    Ok(())
}

/// The longest run of path bytes [`scan_binary`] takes for a climbing path.
const MAX_CLIMBING_PATH: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(bytes: &[u8], names: &[&str]) -> (Vec<usize>, Vec<Climb>) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bin");
        std::fs::write(&p, bytes).unwrap();
        let map: FastMap<String, Vec<usize>> = (names.iter().enumerate())
            .map(|(i, n)| (n.to_string(), vec![i]))
            .collect();
        let mut s = Scanner::new(&map);
        let (mut found, mut climbs) = (Vec::new(), Vec::new());
        s.scan(p.to_str().unwrap(), (&mut found, &mut climbs))
            .unwrap();
        found.sort_unstable();
        found.dedup();
        (found, climbs)
    }

    fn utf16(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn names_in_utf16_are_found_at_either_alignment() {
        for pad in [0usize, 1, 2, 3] {
            let mut bytes = vec![0xffu8; pad];
            bytes.extend(utf16("/conv"));
            bytes.extend([0, 0]);
            bytes.extend(utf16("../lib/plugins"));
            bytes.extend([0, 0, b'x']);
            let (found, climbs) = scan(&bytes, &["conv", "other"]);
            assert_eq!(found, vec![0], "pad {pad}");
            assert!(
                climbs.contains(&Climb::Path("../lib/plugins".into())),
                "pad {pad}: {climbs:?}"
            );
        }
        // Wide characters above ASCII end a run; plain bytes still count.
        let mut bytes = utf16("co\u{e9}nv");
        bytes.extend(b" other ");
        assert_eq!(scan(&bytes, &["conv", "other"]).0, vec![1]);
    }
}
