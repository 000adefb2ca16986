//! Writing findings for people (text), for programs (JSON) and for code
//! scanning services ([`sarif`]).
//!
//! Both formats are deterministic: findings are sorted first, and every
//! string from a descriptor is escaped so that no control, invisible or
//! bidi character reaches a terminal or a log raw.

pub mod entry;
pub mod sarif;

use std::io::{self, Write};

use crate::canon::{write_string, Escape};
use crate::finding::{Finding, Severity};
use crate::text::escape_display;

/// JSON report format version.
pub const JSON_VERSION: u32 = 1;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per finding, evidence indented under it.
    Text,
    /// `{"version": 1, "findings": [...], "summary": {...}}`.
    Json,
    /// SARIF 2.1.0, for code scanning (`scan` and `diff` only).
    Sarif,
}

/// Counts per severity, most severe first.
pub fn counts(findings: &[Finding]) -> Vec<(Severity, usize)> {
    Severity::ALL
        .iter()
        .rev()
        .map(|&s| (s, findings.iter().filter(|f| f.severity == s).count()))
        .collect()
}

/// The SGR colour of a severity on a terminal.
fn sgr(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "1;31",
        Severity::High => "31",
        Severity::Medium => "33",
        Severity::Low => "36",
        Severity::Info => "2",
    }
}

/// Writes sorted findings as text; `colour` marks each severity with an
/// ANSI colour (only ever our own escapes: descriptor text is escaped
/// before it is written, so it can never carry one).
pub fn write_text(findings: &[Finding], colour: bool, out: &mut dyn Write) -> io::Result<()> {
    for f in findings {
        let sev = format!("{:<8}", f.severity.as_str());
        if colour {
            write!(out, "\x1b[{}m{sev}\x1b[0m", sgr(f.severity))?;
        } else {
            out.write_all(sev.as_bytes())?;
        }
        write!(
            out,
            " {:<10} {}",
            f.class.as_str(),
            escape_display(&f.subject())
        )?;
        if let Some(field) = &f.field {
            write!(out, "  {}", escape_display(field))?;
        }
        writeln!(out, "  {}", escape_display(&f.message))?;
        for e in &f.evidence {
            writeln!(out, "    {}", escape_display(e))?;
        }
    }
    if findings.is_empty() {
        writeln!(out, "no findings")?;
    } else {
        let parts: Vec<String> = counts(findings)
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        writeln!(
            out,
            "{} finding{}: {}",
            findings.len(),
            if findings.len() == 1 { "" } else { "s" },
            parts.join(", ")
        )?;
    }
    Ok(())
}

/// A JSON string literal, concealing characters escaped.
pub fn json_str(s: &str) -> String {
    let mut v = Vec::with_capacity(s.len() + 2);
    write_string(s, Escape::Visible, &mut v);
    String::from_utf8(v).expect("escaped JSON is UTF-8")
}

fn json_opt(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_string(), json_str)
}

/// Writes sorted findings as the JSON report (keys in a fixed order).
pub fn write_json(
    findings: &[Finding],
    fail_on: Option<Severity>,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "{{\n  \"version\": {JSON_VERSION},\n  \"findings\": [")?;
    for (i, f) in findings.iter().enumerate() {
        let evidence: Vec<String> = f.evidence.iter().map(|e| json_str(e)).collect();
        write!(
            out,
            "    {{\"class\": {}, \"severity\": {}, \"server\": {}, \"tool\": {}, \"field\": {}, \"message\": {}, \"evidence\": [{}]}}",
            json_str(f.class.as_str()),
            json_str(f.severity.as_str()),
            json_str(&f.server),
            json_opt(f.tool.as_deref()),
            json_opt(f.field.as_deref()),
            json_str(&f.message),
            evidence.join(", ")
        )?;
        writeln!(out, "{}", if i + 1 < findings.len() { "," } else { "" })?;
    }
    let by_sev: Vec<String> = counts(findings)
        .into_iter()
        .map(|(s, n)| format!("{}: {n}", json_str(s.as_str())))
        .collect();
    let failing = fail_on.map_or(0, |t| findings.iter().filter(|f| f.severity >= t).count());
    writeln!(
        out,
        "  ],\n  \"summary\": {{\"total\": {}, \"by_severity\": {{{}}}, \"fail_on\": {}, \"failing\": {}}}\n}}",
        findings.len(),
        by_sev.join(", "),
        json_opt(fail_on.map(Severity::as_str)),
        failing
    )
}
