//! What a hook says: each problem with its fix and the summary on stderr
//! (git passes a pre-push hook's stdout through to its own), or one JSON
//! document on stdout.

use std::io::Write;

use anyhow::Result;
use gix::ObjectId;
use serde::Serialize;

use super::{Check, Rule};
use crate::commands::{emit, PlainFormat};
use crate::report::document::{self, Displayed, Layout};
use crate::report::JSON_VERSION;
use crate::text::escape_display;

/// The hooks' JSON report: the problems a line each, notes, a summary.
#[derive(Serialize)]
struct JsonCheck<'a> {
    version: u32,
    hook: &'a str,
    problems: Vec<JsonProblem<'a>>,
    notes: &'a [String],
    summary: JsonSummary,
}

#[derive(Serialize)]
struct JsonProblem<'a> {
    #[serde(rename = "ref")]
    ref_name: &'a str,
    rules: &'a [Rule],
    /// None for a problem of no one server (the `enforce` rule).
    server: Option<&'a str>,
    tool: Option<&'a str>,
    commit: Option<Displayed<ObjectId>>,
    message: &'a str,
    fix: &'a str,
}

#[derive(Serialize)]
struct JsonSummary {
    refs: usize,
    commits: usize,
    problems: usize,
}

pub(super) fn report(
    format: PlainFormat,
    hook: &str,
    check: &Check<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    match format {
        PlainFormat::Text => {
            // Everything a hook says goes to stderr: git passes a pre-push
            // hook's stdout through to its own, where `git push
            // --porcelain` output is read by tools, and `git push 2>log`
            // would lose the reasons.
            for p in &check.problems {
                let _ = writeln!(
                    err,
                    "{}: {}; fix: {}",
                    escape_display(&p.ref_name),
                    escape_display(&p.message),
                    escape_display(&p.fix)
                );
            }
            for n in &check.notes {
                let _ = writeln!(err, "git kams: note: {n}");
            }
            let commits = format!(
                "{} ref{}, {} commit{}",
                check.refs_checked,
                if check.refs_checked == 1 { "" } else { "s" },
                check.commits_checked,
                if check.commits_checked == 1 { "" } else { "s" }
            );
            let _ = if check.problems.is_empty() {
                writeln!(err, "git kams {hook}: {commits} checked: no unapproved drift, every approval signed off")
            } else {
                let refs: std::collections::BTreeSet<&str> =
                    check.problems.iter().map(|p| p.ref_name.as_str()).collect();
                writeln!(
                    err,
                    "git kams {hook}: refused: {} problem{} in {} (see above)",
                    check.problems.len(),
                    if check.problems.len() == 1 { "" } else { "s" },
                    refs.into_iter()
                        .map(escape_display)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Ok(())
        }
        PlainFormat::Json => emit(out, |o| {
            let doc = JsonCheck {
                version: JSON_VERSION,
                hook,
                problems: check
                    .problems
                    .iter()
                    .map(|p| JsonProblem {
                        ref_name: &p.ref_name,
                        rules: &p.rules,
                        server: (!p.server.is_empty()).then_some(p.server.as_str()),
                        tool: p.tool.as_deref(),
                        commit: p.commit.map(Displayed),
                        message: &p.message,
                        fix: &p.fix,
                    })
                    .collect(),
                notes: &check.notes,
                summary: JsonSummary {
                    refs: check.refs_checked,
                    commits: check.commits_checked,
                    problems: check.problems.len(),
                },
            };
            document::write(&doc, Layout::rows(&["problems"]), o)
        }),
    }
}
