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

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(list) = args.next() else {
        eprintln!("usage: readall FILELIST [THREADS]");
        std::process::exit(2);
    };
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1).max(1);
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
    let elapsed = start.elapsed();
    match result {
        Ok(bytes) => println!(
            "files {} bytes {bytes} threads {threads} ms {:.1}",
            paths.len(),
            elapsed.as_secs_f64() * 1e3
        ),
        Err(e) => {
            eprintln!("readall: {e}");
            std::process::exit(1);
        }
    }
}
