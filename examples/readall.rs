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
//! cargo run --release --example readall -- FILELIST THREADS --stat-ninja-log LOG SOURCE BUILD
//! ```
//!
//! Also does, after the reads and on one thread, the stats the freshness audit of a
//! ninja deps log cannot avoid (as diff2test does them): one `lstat` of each distinct
//! project file (inside SOURCE or BUILD) an object's record lists, one `lstat` of each
//! distinct directory holding one, and one `stat` of each object. The floor of a Ninja
//! build is then "read + stat", not "read" alone; it prints `stats S` as well.

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

/// The stats the audit of the ninja deps log `log` needs: (paths to lstat, objects to stat).
fn audit_paths(log: &str, source: &str, build: &str) -> (Vec<String>, Vec<String>) {
    use diff2test::ingest::ninja_deps;
    let bytes = std::fs::read(log).unwrap_or_else(|e| {
        eprintln!("readall: {log}: {e}");
        std::process::exit(1);
    });
    let parsed = ninja_deps::parse(&bytes).unwrap_or_else(|e| {
        eprintln!("readall: {log}: {e}");
        std::process::exit(1);
    });
    let within = |p: &str, root: &str| p == root || p.starts_with(&format!("{root}/"));
    let mut files = std::collections::BTreeSet::new();
    let mut objects = Vec::new();
    for rec in &parsed.records {
        let out = parsed.resolve(build, rec.output);
        if !(out.ends_with(".o") || out.ends_with(".obj")) {
            continue;
        }
        objects.push(out);
        for &i in &rec.inputs {
            let p = parsed.resolve(build, i);
            if within(&p, source) || within(&p, build) {
                files.insert(p);
            }
        }
    }
    let dirs: std::collections::BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_owned()))
        .collect();
    (files.into_iter().chain(dirs).collect(), objects)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(list) = args.next() else {
        eprintln!("usage: readall FILELIST [THREADS]");
        std::process::exit(2);
    };
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1).max(1);
    let audit = match args.next().as_deref() {
        None => None,
        Some("--stat-ninja-log") => match (args.next(), args.next(), args.next()) {
            (Some(log), Some(source), Some(build)) => Some(audit_paths(&log, &source, &build)),
            _ => {
                eprintln!("usage: readall FILELIST THREADS --stat-ninja-log LOG SOURCE BUILD");
                std::process::exit(2);
            }
        },
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
    if let Some((lstat, stat)) = &audit {
        stats += lstat
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .count();
        stats += stat.iter().filter(|p| std::fs::metadata(p).is_ok()).count();
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
