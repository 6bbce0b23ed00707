//! One emitter per output: the four `--format`s on stdout (names, ctest
//! regexes, the JSON plan, the markdown summary), the receipt (`--receipt`)
//! and the summary on stderr (state, notes, chains, reasons, remedies). A new
//! format is a new [`Emitter`] and a new [`Format`] variant (its `--help`
//! line is the variant's doc comment); nothing else branches on the format.

use std::io::Write;

use super::{ctest_regex, markdown, plan, text::one_line};
use crate::analysis::Analysis;
use crate::decide::Outcome;
use crate::request::{Format, Request};

/// Why a finished analysis cannot be rendered as asked (a usage error).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The selection is too long for the regexes ctest can compile.
    #[error("--format ctest-regex cannot express this selection: {0}; use --format names")]
    CtestRegex(ctest_regex::RegexTooLong),
    /// `--explain NAME` names no registered test.
    #[error("--explain {name:?}: no such registered test{hint}")]
    NoSuchTest {
        /// The name asked for.
        name: String,
        /// ` (did you mean "…"?)`, or empty.
        hint: String,
    },
    /// The receipt file cannot be written.
    #[error("--receipt {path}: {source}")]
    Receipt {
        /// `--receipt`.
        path: String,
        /// What writing it said.
        source: std::io::Error,
    },
}

/// What an emitter writes from: the finished analysis, the request, and the
/// selection it carries (the shard's part when sharded; `None`: no list, the
/// catalogue cannot be trusted).
pub struct View<'a> {
    /// The finished analysis.
    pub a: &'a Analysis,
    /// The request.
    pub req: &'a Request,
    /// The selection as printed.
    pub selection: Option<&'a [String]>,
    /// With `--shard K/N`: the shard (0-based) of each test the outcome lists.
    pub shards: Option<&'a [usize]>,
}

/// One output.
pub trait Emitter {
    /// Writes `v` into `out`.
    fn emit(&self, v: &View<'_>, out: &mut Vec<u8>) -> Result<(), RenderError>;

    /// `--explain NAME...`: each named test's verdict (as text, unless the
    /// format says otherwise).
    fn explain(
        &self,
        v: &View<'_>,
        names: &[String],
        out: &mut Vec<u8>,
    ) -> Result<(), RenderError> {
        explain_text(v.a, names, out)
    }

    /// The output carries the content digest of every evidence file.
    fn needs_digests(&self) -> bool {
        false
    }

    /// The output carries each test's verdict.
    fn needs_verdicts(&self) -> bool {
        false
    }
}

/// `--format names`: one test name per line.
pub struct Names;
/// `--format ctest-regex`: anchored, escaped regexes for `ctest -R`.
pub struct CtestRegex;
/// `--format json`: the `diff2test.plan.v2` plan.
pub struct Json;
/// `--format markdown`: a CI step summary.
pub struct Markdown;
/// `--receipt FILE`: the `diff2test.receipt.v2` receipt.
pub struct Receipt;
/// The summary on stderr: the state, then notes, chains or reasons.
pub struct Summary;

/// The emitter of `--format f`.
pub fn of(f: Format) -> &'static dyn Emitter {
    match f {
        Format::Names => &Names,
        Format::CtestRegex => &CtestRegex,
        Format::Json => &Json,
        Format::Markdown => &Markdown,
    }
}

impl Emitter for Names {
    fn emit(&self, v: &View<'_>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        for n in v.selection.unwrap_or(&[]) {
            let _ = writeln!(out, "{n}");
        }
        Ok(())
    }
}

impl Emitter for CtestRegex {
    fn emit(&self, v: &View<'_>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        if let Some(names) = v.selection {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            for c in ctest_regex::regex_chunks(&refs).map_err(RenderError::CtestRegex)? {
                let _ = writeln!(out, "{c}");
            }
        }
        Ok(())
    }
}

impl Emitter for Json {
    fn emit(&self, v: &View<'_>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        out.extend_from_slice(&plan::to_pretty(&plan::plan(v.a, v.req)));
        out.push(b'\n');
        Ok(())
    }

    fn explain(
        &self,
        v: &View<'_>,
        names: &[String],
        out: &mut Vec<u8>,
    ) -> Result<(), RenderError> {
        let mut tests = Vec::new();
        for name in names {
            tests.push(plan::test_json(verdict(v.a, name)?));
        }
        let doc = serde_json::json!({"outcome": v.a.outcome.state(), "tests": tests});
        out.extend_from_slice(&plan::to_pretty(&doc));
        out.push(b'\n');
        Ok(())
    }

    fn needs_digests(&self) -> bool {
        true
    }

    fn needs_verdicts(&self) -> bool {
        true
    }
}

impl Emitter for Markdown {
    fn emit(&self, v: &View<'_>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        markdown::write(v.a, v.selection, v.req.shard, out);
        Ok(())
    }

    fn needs_verdicts(&self) -> bool {
        true
    }
}

impl Emitter for Receipt {
    fn emit(&self, v: &View<'_>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        out.extend_from_slice(&plan::to_pretty(&plan::receipt(v.a, v.req)));
        out.push(b'\n');
        Ok(())
    }

    fn needs_digests(&self) -> bool {
        true
    }
}

impl Emitter for Summary {
    fn emit(&self, v: &View<'_>, err: &mut Vec<u8>) -> Result<(), RenderError> {
        super::write_summary(v, err);
        Ok(())
    }
}

/// The verdict of test `name`, or why there is none.
fn verdict<'a>(a: &'a Analysis, name: &str) -> Result<&'a crate::decide::Verdict, RenderError> {
    a.verdicts.iter().find(|v| v.name == name).ok_or_else(|| {
        let hint = crate::paths::did_you_mean(name, a.verdicts.iter().map(|v| v.name.as_str()))
            .map(|m| format!(" (did you mean {m:?}?)"))
            .unwrap_or_default();
        RenderError::NoSuchTest {
            name: name.to_owned(),
            hint,
        }
    })
}

/// `--explain` as text: per test, the verdict, its reasons with their
/// evidence, and its build closure.
fn explain_text(a: &Analysis, names: &[String], out: &mut Vec<u8>) -> Result<(), RenderError> {
    for name in names {
        if let Outcome::FullSuiteRequired { .. } = a.outcome {
            let _ = writeln!(
                out,
                "test {name}: no verdict (FULL_SUITE_REQUIRED: the catalogue cannot be trusted)"
            );
            continue;
        }
        let v = verdict(a, name)?;
        let action = if v.selected {
            "selected"
        } else {
            "skipped (safe to skip)"
        };
        let _ = writeln!(out, "test {}: {} [{}]", v.name, action, a.outcome.state());
        for r in &v.reasons {
            let _ = writeln!(out, "  reason {}: {}", r.code, one_line(&r.detail));
            for e in &r.evidence {
                let _ = writeln!(out, "    evidence {}", one_line(e));
            }
        }
        if !v.closure.is_empty() {
            let parts: Vec<String> = v
                .closure
                .iter()
                .map(|c| format!("{} ({}, {} units)", c.target, c.kind, c.units))
                .collect();
            let _ = writeln!(out, "  closure: {}", parts.join(", "));
        }
    }
    Ok(())
}
