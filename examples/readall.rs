//! In-process I/O floor for the benchmark: open and read every listed file once.
//!
//! ```text
//! cargo run --release --example readall -- FILELIST [THREADS]
//! ```
//!
//! FILELIST has one path per line. The files are split into THREADS contiguous
//! chunks (default 1) read concurrently, each with one reused buffer, the way a
//! parser that must see every byte would read them. Prints
//! `files N bytes B threads T ms X` on stdout; exits 1 if a file cannot be read.
//!
//! ```text
//! cargo run --release --example readall -- --audit-list LOG SOURCE BUILD > STATLIST
//! cargo run --release --example readall -- FILELIST THREADS --stat-list STATLIST
//! cargo run --release --example readall -- FILELIST THREADS --stat-list-spread STATLIST
//! ```
//!
//! The first writes the stats the freshness audit of a ninja deps log cannot avoid, as
//! diff2test does them: `l PATH` (an `lstat`) for each distinct project file (inside
//! SOURCE or BUILD) an object's record lists and for each directory holding one, `s PATH`
//! (a `stat`) for each object. The second does them, on one thread, after the reads, and
//! prints `stats S` as well: the floor of a Ninja build is "read + stat", not "read".
//! With `--stat-list-spread STATLIST` instead, the stats are split like the files, and each
//! of the THREADS threads does its share of both at once: the floor with the two perfectly
//! balanced, which no program that parses what it reads can beat.
//!
//! ```text
//! cargo run --release --example readall -- FILELIST THREADS --parse-spread STATLIST
//! ```
//!
//! The same as `--stat-list-spread`, and each file is also parsed as little as a parser
//! of its format can: a JSON file (File API replies, the catalogue) deserialized into
//! `serde::de::IgnoredAny` (serde_json checks every byte, builds nothing), the deps log by
//! `ninja_deps::parse`, `.ninja_log` by `ninja_log::parse`, `build.ninja` (with the files
//! it includes, read by the walk, not before it) by `ninja_manifest::for_each_edge`, which
//! lexes every statement and evaluates only custom commands. No program that builds
//! anything of what it reads with these parsers can beat this floor.

use std::io::Read;
use std::time::Instant;

/// Does the stats of `lines` (`l PATH` or `s PATH`); the number that succeeded.
fn stat_lines(lines: &[&str]) -> usize {
    // Counted, so that the stats cannot be optimised away.
    let mut stats = 0usize;
    for line in lines {
        let ok = match line.split_once(' ') {
            Some(("l", p)) => std::fs::symlink_metadata(p).is_ok(),
            Some(("s", p)) => std::fs::metadata(p).is_ok(),
            _ => false,
        };
        stats += usize::from(ok);
    }
    stats
}

fn read_chunk(paths: &[&str], parse: bool) -> std::io::Result<u64> {
    let mut buf = Vec::with_capacity(1 << 20);
    let mut total = 0u64;
    let reader = diff2test::ingest::Reader::new(diff2test::ingest::Limits::default());
    for p in paths {
        buf.clear();
        let name = p.rsplit('/').next().unwrap_or(p);
        if parse && name.ends_with(".ninja") {
            // Read by the walk of build.ninja, which includes the others.
            if name == "build.ninja" {
                let dir = &p[..p.len() - name.len()].trim_end_matches('/');
                let edges = diff2test::ingest::ninja_manifest::for_each_edge(
                    &reader,
                    dir,
                    "build.ninja",
                    |_| {},
                )
                .map_err(|e| std::io::Error::other(format!("{p}: {e}")))?;
                total += edges as u64;
            }
            continue;
        }
        std::fs::File::open(p)?.read_to_end(&mut buf)?;
        total += buf.len() as u64;
        if parse {
            parse_one(p, name, &buf)?;
        }
    }
    Ok(total)
}

/// Parses `bytes` (the file `path`, named `name`) as little as its format allows.
fn parse_one(path: &str, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    use diff2test::ingest::{ninja_deps, ninja_log};
    let bad = |e: String| std::io::Error::other(format!("{path}: {e}"));
    if name.ends_with(".json") {
        serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map_err(|e| bad(e.to_string()))?;
    } else if name == ".ninja_deps" {
        ninja_deps::parse(bytes).map_err(|e| bad(e.to_string()))?;
    } else if name == ".ninja_log" {
        ninja_log::parse(bytes).map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

/// Prints the stats the audit of the ninja deps log `log` needs (see the module docs).
fn audit_list(log: &str, source: &str, build: &str) {
    use diff2test::ingest::ninja_deps;
    use std::io::Write;
    let bytes = std::fs::read(log).unwrap_or_else(|e| {
        eprintln!("readall: {log}: {e}");
        std::process::exit(1);
    });
    let parsed = ninja_deps::parse(&bytes).unwrap_or_else(|e| {
        eprintln!("readall: {log}: {e}");
        std::process::exit(1);
    });
    let (src_dir, build_dir) = (format!("{source}/"), format!("{build}/"));
    let abs: Vec<String> = (0..parsed.paths.len() as u32)
        .map(|id| parsed.resolve(build, id))
        .collect();
    let mut listed = vec![false; abs.len()];
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for rec in &parsed.records {
        let obj = &abs[rec.output as usize];
        if obj.ends_with(".o") || obj.ends_with(".obj") {
            let _ = writeln!(out, "s {obj}");
            rec.inputs.iter().for_each(|&i| listed[i as usize] = true);
        }
    }
    let mut dirs = std::collections::BTreeSet::new();
    for (p, _) in abs.iter().zip(&listed).filter(|(_, &l)| l) {
        if p.starts_with(&src_dir) || p.starts_with(&build_dir) {
            let _ = writeln!(out, "l {p}");
            dirs.extend(p.rsplit_once('/').map(|(d, _)| d.to_owned()));
        }
    }
    for d in dirs {
        let _ = writeln!(out, "l {d}");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(list) = args.next() else {
        eprintln!(
            "usage: readall FILELIST [THREADS [--stat-list[-spread]|--parse-spread STATLIST]]"
        );
        std::process::exit(2);
    };
    if list == "--audit-list" {
        match (args.next(), args.next(), args.next()) {
            (Some(log), Some(source), Some(build)) => audit_list(&log, &source, &build),
            _ => {
                eprintln!("usage: readall --audit-list LOG SOURCE BUILD");
                std::process::exit(2);
            }
        }
        return;
    }
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1).max(1);
    let (mut spread, mut parse) = (false, false);
    let stat_list = match args.next().as_deref() {
        None => String::new(),
        Some(flag @ ("--stat-list" | "--stat-list-spread" | "--parse-spread")) => {
            spread = flag != "--stat-list";
            parse = flag == "--parse-spread";
            let f = args.next().unwrap_or_else(|| {
                eprintln!(
                    "usage: readall FILELIST THREADS --stat-list[-spread]|--parse-spread STATLIST"
                );
                std::process::exit(2);
            });
            std::fs::read_to_string(&f).unwrap_or_else(|e| {
                eprintln!("readall: {f}: {e}");
                std::process::exit(1);
            })
        }
        Some(other) => {
            eprintln!("readall: unknown argument {other}");
            std::process::exit(2);
        }
    };
    let text = std::fs::read_to_string(&list).unwrap_or_else(|e| {
        eprintln!("readall: {list}: {e}");
        std::process::exit(1);
    });
    // Leaked: the process ends after this one measurement.
    let paths: &'static [&str] = Vec::leak(text.leak().lines().filter(|l| !l.is_empty()).collect());
    let stats_all: &'static [&str] = Vec::leak(stat_list.leak().lines().collect());
    // With --parse-spread the files go to the threads by size, largest first, each to the
    // thread with the fewest bytes so far: the parse of one large manifest or log must not
    // leave a core idle (the other modes keep their contiguous shares).
    let groups: Vec<&'static [&'static str]> = if parse {
        let mut sized: Vec<(u64, &str)> = (paths.iter())
            .map(|p| (std::fs::metadata(p).map(|m| m.len()).unwrap_or(0), *p))
            .collect();
        sized.sort_by(|a, b| b.cmp(a));
        let mut load = vec![(0u64, Vec::new()); threads];
        for (size, p) in sized {
            let t = (0..threads).min_by_key(|&t| load[t].0).unwrap_or(0);
            load[t].0 += size;
            load[t].1.push(p);
        }
        load.into_iter().map(|(_, g)| &*Vec::leak(g)).collect()
    } else {
        let chunk = paths.len().div_ceil(threads).max(1);
        (0..threads)
            .map(|i| {
                let from = (i * chunk).min(paths.len());
                &paths[from..(from + chunk).min(paths.len())]
            })
            .collect()
    };
    let start = Instant::now();
    // With --stat-list-spread, thread i also does the i-th share of the stats.
    let stat_chunk = if spread {
        stats_all.len().div_ceil(threads).max(1)
    } else {
        0
    };
    let (result, spread_stats): (std::io::Result<u64>, usize) = std::thread::scope(|s| {
        // Thread i: its group of the files, and with --stat-list-spread the i-th share of the stats.
        let share = |all: &'static [&str], each: usize, i: usize| -> &'static [&str] {
            let from = (i * each).min(all.len());
            &all[from..(from + each).min(all.len())]
        };
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (files, mine) = (groups[i], share(stats_all, stat_chunk, i));
                s.spawn(move || (read_chunk(files, parse), stat_lines(mine)))
            })
            .collect();
        let mut bytes = Ok(0u64);
        let mut stats = 0usize;
        for h in handles {
            let (r, n) = h.join().expect("reader thread panicked");
            stats += n;
            bytes = match (bytes, r) {
                (Ok(a), Ok(b)) => Ok(a + b),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
        }
        (bytes, stats)
    });
    let stats = if spread {
        spread_stats
    } else {
        stat_lines(stats_all)
    };
    let elapsed = start.elapsed();
    match result {
        Ok(bytes) => println!(
            "files {} bytes {bytes} threads {threads} stats {stats} ms {:.1}",
            paths.len(),
            elapsed.as_secs_f64() * 1e3
        ),
        Err(e) => {
            eprintln!("readall: {e}");
            std::process::exit(1);
        }
    }
}
