//! `git kams blame`: for each entry of the lock at a revision, the commit
//! that gave the entry its current value (state, descriptor, approval), by
//! entry and not by line, with who approved it and whether the commit's
//! signature is verified. How the walk decides is in `docs/history.md`.

use std::io::Write;

use anyhow::{anyhow, bail, Result};
use serde::Serialize;

use super::{emit, Env, PlainFormat, Selection, Status};
use crate::cli::BlameArgs;
use crate::git::history::{blame, CommitInfo, EntryValue, History, Wanted};
use crate::git::hooks::LockHistory;
use crate::git::signature::{self, Verdict};
use crate::lock::Approval;
use crate::report::document::{self, Displayed, Layout};
use crate::text::escape_display;

/// One blamed entry or launch, ready to print.
struct Row<'a> {
    server: &'a str,
    /// The tool; `None` for the server entry and the launch.
    tool: Option<&'a str>,
    /// The entry's state, or `launch`.
    state: &'static str,
    approval: Option<&'a Approval>,
    /// True when the commit may not be the one (shallow history).
    boundary: bool,
    info: &'a CommitInfo,
    verdict: &'a Verdict,
}

/// Runs `blame`.
pub fn run(env: &Env, args: &BlameArgs, out: &mut dyn Write) -> Result<Status> {
    let format = env.plain_format("blame")?;
    let repo = env.repo.require("git kams blame")?;
    let rel = env.lock_relative()?;
    let tip = match env.repo.commit_of(&args.at) {
        Ok(tip) => tip,
        // As log says it: an unborn HEAD is no error, it has no history.
        Err(_) if args.at == "HEAD" && repo.head().is_ok_and(|h| h.is_unborn()) => {
            let note = format!("no commits yet: {} has no history", rel.display());
            emit(out, |o| {
                match format {
                    PlainFormat::Text => writeln!(o, "note: {}", escape_display(&note)),
                    // Nothing to list: `entries` is `[]` on the line of its key.
                    PlainFormat::Json => document::write(
                        &JsonBlame {
                            version: 3,
                            at: None,
                            entries: Vec::new(),
                            notes: std::slice::from_ref(&note),
                        },
                        Layout::rows(&[]),
                        o,
                    ),
                }
            })?;
            return Ok(0);
        }
        Err(e) => return Err(e),
    };
    let mut history = History::new(repo, &rel)?;
    let blob = history.lock_blob(tip)?.ok_or_else(|| {
        anyhow!(
            "{} does not exist at {} (commit {tip}): nothing to blame",
            crate::text::shown_path(&rel),
            escape_display(&args.at)
        )
    })?;
    let parsed = history.lock(blob)?;
    let lock = parsed.as_ref().as_ref().map_err(|e| {
        anyhow!(
            "{}:{}: corrupt lock: {}",
            escape_display(&args.at),
            crate::text::shown_path(&rel),
            escape_display(e)
        )
    })?;
    let selection = Selection::new(&args.keys);
    let mut wanted = Vec::new();
    for (server, s) in &lock.servers {
        let tools = s.tools.iter().map(|(t, e)| (Some(t), e));
        for (tool, entry) in s.server.iter().map(|e| (None, e)).chain(tools) {
            if selection.matches(server, tool.map(String::as_str)) {
                wanted.push(Wanted {
                    server: server.clone(),
                    tool: tool.cloned(),
                    value: EntryValue::of(entry),
                });
            }
        }
    }
    for k in &args.keys {
        let one = Selection::new(std::slice::from_ref(k));
        if !wanted
            .iter()
            .any(|w| one.matches(&w.server, w.tool.as_deref()))
        {
            bail!(
                "`{}` names no server or tool of {} at {} (expected SERVER or SERVER/TOOL; see `git kams status --at {}`)",
                escape_display(k),
                crate::text::shown_path(&rel),
                escape_display(&args.at),
                escape_display(&args.at)
            );
        }
    }
    let outcome = blame(&mut history, tip, &wanted)?;
    // Each selected server's launch, by the commit that gave it its value
    // (the launch and its approval), found as the hooks find it.
    let mut launches: Vec<(&str, Option<&Approval>, gix::ObjectId, bool)> = Vec::new();
    let mut locks = LockHistory::new(repo, &rel);
    for (server, s) in &lock.servers {
        if s.launch.is_none() || !selection.matches(server, None) {
            continue;
        }
        if let Some((facts, boundary)) = locks.launch_origin(tip, server)? {
            launches.push((server, s.launch_approval.as_deref(), facts.id, boundary));
        }
    }
    let verifier = env.verifier();
    let mut infos: Vec<(CommitInfo, Verdict)> = Vec::new();
    let commits = outcome.blamed.iter().map(|b| b.commit);
    for id in commits.chain(launches.iter().map(|l| l.2)) {
        if !infos.iter().any(|(i, _)| i.id == id) {
            let info = history.commit_info(id)?;
            let verdict = signature::verdict_of(&verifier, repo, id, info.signed)?;
            infos.push((info, verdict));
        }
    }
    let read = |id: gix::ObjectId| {
        let (info, verdict) = infos
            .iter()
            .find(|(i, _)| i.id == id)
            .expect("every blamed commit was read");
        (info, verdict)
    };
    let launch_rows = launches
        .into_iter()
        .map(|(server, approval, id, boundary)| {
            let (info, verdict) = read(id);
            Row {
                server,
                tool: None,
                state: "launch",
                approval,
                boundary,
                info,
                verdict,
            }
        });
    let mut rows: Vec<Row<'_>> = wanted
        .iter()
        .zip(&outcome.blamed)
        .map(|(w, b)| {
            let (info, verdict) = read(b.commit);
            Row {
                server: &w.server,
                tool: w.tool.as_deref(),
                state: w.value.state.as_str(),
                approval: w.value.approval.as_deref(),
                boundary: b.boundary,
                info,
                verdict,
            }
        })
        .chain(launch_rows)
        .collect();
    // A server's launch comes after its server entry, before its tools
    // (stable: the entries keep the lock's order).
    rows.sort_by_key(|r| {
        let rank = match (r.tool, r.state) {
            (None, "launch") => 1,
            (None, _) => 0,
            (Some(_), _) => 2,
        };
        (r.server, rank)
    });
    let mut notes = outcome.notes;
    if wanted.is_empty() {
        notes.push(format!("{} at {} has no entries", rel.display(), args.at));
    }
    if let Some(r) = rows.iter().find(|r| r.boundary) {
        notes.push(format!(
            "history is shallow: entries marked ^ may be older than {}",
            r.info.id
        ));
    }
    emit(out, |o| match format {
        PlainFormat::Text => write_text(&rows, &notes, o),
        PlainFormat::Json => write_json(tip, &rows, &notes, o),
    })?;
    Ok(0)
}

fn subject(r: &Row<'_>) -> String {
    match r.tool {
        Some(t) => format!("{}/{t}", r.server),
        None => r.server.to_string(),
    }
}

fn write_text(rows: &[Row<'_>], notes: &[String], o: &mut dyn Write) -> std::io::Result<()> {
    for r in rows {
        let approval = r.approval;
        let sign_offs = if r.info.sign_offs.is_empty() {
            "-".to_string()
        } else {
            r.info.sign_offs.join(", ")
        };
        writeln!(
            o,
            "{}{} {} {:<10} {:<11} {}  approver: {}  signed-off-by: {}  note: {}",
            if r.boundary { "^" } else { "" },
            r.info.short,
            r.info.date,
            r.verdict.word(),
            r.state,
            escape_display(&subject(r)),
            escape_display(approval.map_or("-", |a| a.approver.as_str())),
            escape_display(&sign_offs),
            // A provisional entry (or a launch recorded before launches
            // had an approval) has no note: the commit's subject says why.
            escape_display(approval.map_or(r.info.subject.as_str(), |a| a.note.as_str())),
        )?;
    }
    for n in notes {
        writeln!(o, "note: {}", escape_display(n))?;
    }
    Ok(())
}

/// `blame --format json`, version 3: the entries a line each, then notes.
#[derive(Serialize)]
struct JsonBlame<'a> {
    version: u32,
    /// The blamed revision; `null` before the first commit.
    at: Option<Displayed<gix::ObjectId>>,
    entries: Vec<JsonEntry<'a>>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    server: &'a str,
    tool: Option<&'a str>,
    state: &'static str,
    commit: Displayed<gix::ObjectId>,
    date: &'a str,
    approver: Option<&'a str>,
    signed_off_by: &'a [String],
    signature: &'static str,
    signers: &'a [String],
    note: Option<&'a str>,
    commit_subject: &'a str,
    boundary: bool,
}

fn write_json(
    tip: gix::ObjectId,
    rows: &[Row<'_>],
    notes: &[String],
    o: &mut dyn Write,
) -> std::io::Result<()> {
    let entries = rows
        .iter()
        .map(|r| JsonEntry {
            server: r.server,
            tool: r.tool,
            state: r.state,
            commit: Displayed(r.info.id),
            date: &r.info.date,
            approver: r.approval.map(|a| a.approver.as_str()),
            signed_off_by: &r.info.sign_offs,
            signature: r.verdict.word(),
            signers: r.verdict.signers(),
            note: r.approval.map(|a| a.note.as_str()),
            commit_subject: &r.info.subject,
            boundary: r.boundary,
        })
        .collect();
    let blame = JsonBlame {
        version: 3,
        at: Some(Displayed(tip)),
        entries,
        notes,
    };
    document::write(&blame, Layout::rows(&["entries"]), o)
}
