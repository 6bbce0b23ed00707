//! The only writer of output. Renders an [`Outcome`] into stdout and stderr
//! buffers; `lib::run` commits them after the final decision.
//!
//! stdout carries only the selection (names or ctest regexes); stderr carries
//! the outcome state on its own first line, then evidence chains or coded
//! reasons. Everything is sorted, so equal inputs give byte-identical output.
#![deny(clippy::wildcard_enum_match_arm)]

pub mod ctest_regex;

use std::collections::BTreeMap;
use std::io::Write;

use crate::decide::Outcome;
use crate::graph::Chain;
use crate::reason::Gap;

/// Output formats of `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One test name per line, sorted.
    Names,
    /// Anchored, escaped regexes for `ctest -R`, one per line; run ctest once per line.
    CtestRegex,
}

/// At most this many reasons per code are listed; the rest are counted.
const MAX_REASONS_PER_CODE: usize = 25;

/// Renders `outcome`. Fails only when the selection cannot be expressed in the
/// requested format (a test name too long for one ctest regex).
pub fn render(outcome: &Outcome, format: Format, out: &mut Vec<u8>, err: &mut Vec<u8>) -> Result<(), String> {
    // Writes into a Vec cannot fail.
    let _ = writeln!(err, "{}", outcome.state());
    match outcome {
        Outcome::SubsetSelected { selected, all, chains } => {
            selection(format, selected, out)?;
            let skipped = all.len() - selected.len();
            let _ = writeln!(err, "selected {} of {} tests ({} skipped)", selected.len(), all.len(), skipped);
            write_chains(chains, err);
        }
        Outcome::FullSuiteSelected { all, gaps } => {
            selection(format, all, out)?;
            write_gaps(gaps, err);
            let _ = writeln!(err, "selected all {} tests: a subset cannot be defended", all.len());
        }
        Outcome::FullSuiteRequired { gaps } => {
            write_gaps(gaps, err);
            let _ = writeln!(err, "no test list emitted: the catalogue cannot be trusted; run the complete suite with your usual ctest invocation");
        }
        Outcome::UsageError(msg) => {
            let _ = writeln!(err, "reason USAGE_ERROR: {}", one_line(msg));
        }
        Outcome::InternalError(msg) => {
            let _ = writeln!(err, "reason INTERNAL_ERROR: {}", one_line(msg));
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

fn selection(format: Format, names: &[String], out: &mut Vec<u8>) -> Result<(), String> {
    match format {
        Format::Names => {
            for n in names {
                let _ = writeln!(out, "{n}");
            }
        }
        Format::CtestRegex => {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let chunks = ctest_regex::regex_chunks(&refs).map_err(|e| e.to_string())?;
            for c in chunks {
                let _ = writeln!(out, "{c}");
            }
        }
    }
    Ok(())
}

fn write_chains(chains: &[Chain], err: &mut Vec<u8>) {
    for c in chains {
        let _ = write!(err, "chain {}: {} -> depfile {} -> unit {}", c.test, c.changed, c.depfile, c.tu);
        for t in &c.targets {
            let _ = write!(err, " -> target {t}");
        }
        let _ = writeln!(err, " -> test {}", c.test);
    }
}

fn write_gaps(gaps: &[Gap], err: &mut Vec<u8>) {
    let mut by_code: BTreeMap<_, Vec<&Gap>> = BTreeMap::new();
    for g in gaps {
        by_code.entry(g.code).or_default().push(g);
    }
    for (code, list) in by_code {
        for g in list.iter().take(MAX_REASONS_PER_CODE) {
            let _ = writeln!(err, "reason {}: {}", code.as_str(), one_line(&g.detail));
        }
        if list.len() > MAX_REASONS_PER_CODE {
            let _ = writeln!(err, "reason {}: ... and {} more", code.as_str(), list.len() - MAX_REASONS_PER_CODE);
        }
    }
}
