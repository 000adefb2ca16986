//! Writing findings for people (text), for programs (JSON) and for code
//! scanning services ([`sarif`]).
//!
//! Both formats are deterministic: findings are sorted first, and every
//! string from a descriptor is escaped so that no control, invisible or
//! bidi character reaches a terminal or a log raw.

pub mod document;
pub mod entry;
pub mod sarif;

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::finding::{Finding, Severity};
use crate::text::escape_display;
use document::Layout;

/// JSON report format version.
pub const JSON_VERSION: u32 = 1;

/// Output format (the command line's names for it are in [`crate::cli`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// The state an entry has in the lock (`pinned`, `provisional`,
/// `denied`), or `new` when the lock has none: a group's header says it.
pub type StateOf<'a> = &'a dyn Fn(&str, Option<&str>) -> &'static str;

/// Writes sorted findings as text, grouped by entry: a header per entry
/// (server entries first, then each tool, by name) with its state and its
/// worst severity, its findings under it, then a line per server and the
/// total. A reviewer reads one entry's changes together instead of
/// finding them scattered over a list sorted by severity. `colour` marks
/// each severity with an ANSI colour (only ever our own escapes:
/// descriptor text is escaped before it is written, so it can never
/// carry one).
pub fn write_text(
    findings: &[Finding],
    state: StateOf<'_>,
    colour: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    if findings.is_empty() {
        return writeln!(out, "no findings");
    }
    let paint = |s: Severity, text: &str| {
        if colour {
            format!("\x1b[{}m{text}\x1b[0m", sgr(s))
        } else {
            text.to_string()
        }
    };
    // By server, then the server entry before its tools; each group keeps
    // the report's order (most severe first).
    // A server's prompts and resources are entries of their own too.
    let mut groups: BTreeMap<Group<'_>, Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        let part = match (&f.tool, &f.field) {
            (None, Some(field)) => part_of(field),
            _ => None,
        };
        groups
            .entry((f.server.as_str(), f.tool.as_deref(), part))
            .or_default()
            .push(f);
    }
    for (i, ((server, tool, part), group)) in groups.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let worst = group
            .iter()
            .map(|f| f.severity)
            .max()
            .expect("a group has findings");
        let subject = match (tool, part) {
            (Some(t), _) => format!("{server}/{t}"),
            (None, Some((kind, name))) => format!("{server} {kind} `{name}`"),
            (None, None) => server.to_string(),
        };
        writeln!(
            out,
            "{} ({}): {}, worst {}",
            escape_display(&subject),
            state(server, *tool),
            plural(group.len(), "finding", "findings"),
            paint(worst, worst.as_str())
        )?;
        for f in group {
            let sev = format!("{:<8}", f.severity.as_str());
            write!(
                out,
                "  {} {:<10}",
                paint(f.severity, &sev),
                f.class.as_str()
            )?;
            if let Some(field) = &f.field {
                write!(out, " {} ", escape_display(field))?;
            }
            writeln!(out, " {}", escape_display(&f.message))?;
            for e in &f.evidence {
                writeln!(out, "      {}", escape_display(e))?;
            }
        }
    }
    writeln!(out)?;
    // Per server: its findings, the entries they are on, their severities.
    let mut servers: BTreeMap<&str, (Vec<&Finding>, usize)> = BTreeMap::new();
    for ((server, ..), group) in &groups {
        let (all, entries) = servers.entry(server).or_default();
        all.extend(group.iter().copied());
        *entries += 1;
    }
    let width = servers
        .keys()
        .map(|s| escape_display(s).chars().count())
        .max()
        .unwrap_or(0);
    for (server, (all, entries)) in &servers {
        let owned: Vec<Finding> = all.iter().map(|f| (*f).clone()).collect();
        writeln!(
            out,
            "{:<width$}  {} on {}: {}",
            escape_display(server),
            plural(all.len(), "finding", "findings"),
            plural(*entries, "entry", "entries"),
            severities(&owned)
        )?;
    }
    writeln!(
        out,
        "{}: {}",
        plural(findings.len(), "finding", "findings"),
        severities(findings)
    )
}

/// A group of the text report: server, tool, and the prompt or resource
/// of a server-level finding.
type Group<'a> = (&'a str, Option<&'a str>, Option<(&'static str, String)>);

/// The prompt, resource or resource template a server-level field points
/// into (`/prompts/<name>/...`): its kind and (unescaped) name.
fn part_of(field: &str) -> Option<(&'static str, String)> {
    let mut parts = field.strip_prefix('/')?.splitn(3, '/');
    let kind = match parts.next()? {
        "prompts" => "prompt",
        "resources" => "resource",
        "resourceTemplates" => "resource template",
        _ => return None,
    };
    let name = parts.next()?.replace("~1", "/").replace("~0", "~");
    Some((kind, name))
}

/// `3 findings`, `1 finding`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `2 critical, 8 high, 12 medium`: the counts that are not zero.
fn severities(findings: &[Finding]) -> String {
    let parts: Vec<String> = counts(findings)
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {s}"))
        .collect();
    parts.join(", ")
}

/// The JSON report: `version`, the findings a line each, and a summary.
#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    findings: Vec<JsonFinding<'a>>,
    summary: Summary,
}

/// A finding as the JSON report writes it.
#[derive(Serialize)]
struct JsonFinding<'a> {
    class: &'static str,
    severity: &'static str,
    server: &'a str,
    tool: Option<&'a str>,
    field: Option<&'a str>,
    message: &'a str,
    evidence: &'a [String],
}

#[derive(Serialize)]
struct Summary {
    total: usize,
    /// Every severity, most severe first.
    #[serde(serialize_with = "document::pairs")]
    by_severity: Vec<(&'static str, usize)>,
    fail_on: Option<&'static str>,
    failing: usize,
}

/// Writes sorted findings as the JSON report (keys in a fixed order).
pub fn write_json(
    findings: &[Finding],
    fail_on: Option<Severity>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let report = JsonReport {
        version: JSON_VERSION,
        findings: findings
            .iter()
            .map(|f| JsonFinding {
                class: f.class.as_str(),
                severity: f.severity.as_str(),
                server: &f.server,
                tool: f.tool.as_deref(),
                field: f.field.as_deref(),
                message: &f.message,
                evidence: &f.evidence,
            })
            .collect(),
        summary: Summary {
            total: findings.len(),
            by_severity: counts(findings)
                .into_iter()
                .map(|(s, n)| (s.as_str(), n))
                .collect(),
            fail_on: fail_on.map(Severity::as_str),
            failing: fail_on.map_or(0, |t| findings.iter().filter(|f| f.severity >= t).count()),
        },
    };
    document::write(&report, Layout::rows(&["findings"]), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Class;

    fn f(severity: Severity, tool: Option<&str>, field: &str, message: &str) -> Finding {
        Finding {
            class: Class::Drift,
            severity,
            server: "s".into(),
            tool: tool.map(str::to_string),
            field: Some(field.into()),
            message: message.into(),
            evidence: vec!["old: 1".into()],
        }
    }

    #[test]
    fn findings_are_grouped_by_entry_prompts_and_resources_included() {
        let mut all = vec![
            f(
                Severity::High,
                Some("t"),
                "/description",
                "description changed",
            ),
            f(
                Severity::Medium,
                None,
                "/prompts/sum~1up/description",
                "prompts entry changed",
            ),
            f(
                Severity::Low,
                None,
                "/serverInfo/version",
                "serverInfo version changed",
            ),
            f(Severity::Low, Some("t"), "/title", "title changed"),
        ];
        Finding::sort(&mut all);
        let state = |_: &str, t: Option<&str>| if t.is_some() { "pinned" } else { "new" };
        let mut out = Vec::new();
        write_text(&all, &state, false, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "s (new): 1 finding, worst low\n\
             \x20 low      drift      /serverInfo/version  serverInfo version changed\n\
             \x20     old: 1\n\
             \n\
             s prompt `sum/up` (new): 1 finding, worst medium\n\
             \x20 medium   drift      /prompts/sum~1up/description  prompts entry changed\n\
             \x20     old: 1\n\
             \n\
             s/t (pinned): 2 findings, worst high\n\
             \x20 high     drift      /description  description changed\n\
             \x20     old: 1\n\
             \x20 low      drift      /title  title changed\n\
             \x20     old: 1\n\
             \n\
             s  4 findings on 3 entries: 1 high, 1 medium, 2 low\n\
             4 findings: 1 high, 1 medium, 2 low\n"
        );
    }
}
