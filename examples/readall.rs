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
//! ```
//!
//! The first writes the stats the freshness audit of a ninja deps log cannot avoid, as
//! diff2test does them: `l PATH` (an `lstat`) for each distinct project file (inside
//! SOURCE or BUILD) an object's record lists and for each directory holding one, `s PATH`
//! (a `stat`) for each object. The second does them, on one thread, after the reads, and
//! prints `stats S` as well: the floor of a Ninja build is "read + stat", not "read".

use std::io::Read;
use std::time::Instant;

fn read_chunk(paths: &[&str]) -> std::io::Result<u64> {
    let mut buf = Vec::with_capacity(1 << 20);
    let mut total = 0u64;
    for p in paths {
        buf.clear();
        std::fs::File::open(p)?.read_to_end(&mut buf)?;
        total += buf.len() as u64;
    }
    Ok(total)
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
        eprintln!("usage: readall FILELIST [THREADS [--stat-list STATLIST]]");
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
    let stat_list = match args.next().as_deref() {
        None => String::new(),
        Some("--stat-list") => {
            let f = args.next().unwrap_or_else(|| {
                eprintln!("usage: readall FILELIST THREADS --stat-list STATLIST");
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
    let paths: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    let start = Instant::now();
    let chunk = paths.len().div_ceil(threads).max(1);
    let result: std::io::Result<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .chunks(chunk)
            .map(|c| s.spawn(move || read_chunk(c)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("reader thread panicked"))
            .sum()
    });
    // Counted, so that the stats cannot be optimised away.
    let mut stats = 0usize;
    for line in stat_list.lines() {
        let ok = match line.split_once(' ') {
            Some(("l", p)) => std::fs::symlink_metadata(p).is_ok(),
            Some(("s", p)) => std::fs::metadata(p).is_ok(),
            _ => false,
        };
        stats += usize::from(ok);
    }
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
