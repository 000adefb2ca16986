//! `git kams blame`: for each entry of the lock at a revision, the commit
//! that gave the entry its current value (state, descriptor, approval), by
//! entry and not by line, with who approved it and whether the commit's
//! signature is verified. How the walk decides is in `docs/history.md`.

use std::io::Write;

use anyhow::{anyhow, bail, Result};

use super::{emit, Env, PlainFormat, Selection, Status};
use crate::cli::BlameArgs;
use crate::git::history::{blame, Blamed, CommitInfo, EntryValue, History, Wanted};
use crate::git::signature::{self, Verdict};
use crate::report::json_str;
use crate::text::escape_display;

/// One blamed entry, ready to print.
struct Row<'a> {
    wanted: &'a Wanted,
    blamed: Blamed,
    info: &'a CommitInfo,
    verdict: &'a Verdict,
}

/// Runs `blame`.
pub fn run(env: &Env, args: &BlameArgs, out: &mut dyn Write) -> Result<Status> {
    let format = env.plain_format("blame")?;
    let repo = env.repo.require("git kams blame")?;
    let rel = env.lock_relative()?;
    let tip = env.repo.commit_of(&args.at)?;
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
    let verifier = env.verifier();
    let mut infos: Vec<(CommitInfo, Verdict)> = Vec::new();
    for b in &outcome.blamed {
        if !infos.iter().any(|(i, _)| i.id == b.commit) {
            let info = history.commit_info(b.commit)?;
            let verdict = signature::verdict_of(&verifier, repo, b.commit, info.signed)?;
            infos.push((info, verdict));
        }
    }
    let rows: Vec<Row<'_>> = wanted
        .iter()
        .zip(&outcome.blamed)
        .map(|(w, b)| {
            let (info, verdict) = infos
                .iter()
                .find(|(i, _)| i.id == b.commit)
                .expect("every blamed commit was read");
            Row {
                wanted: w,
                blamed: *b,
                info,
                verdict,
            }
        })
        .collect();
    let mut notes = outcome.notes;
    if wanted.is_empty() {
        notes.push(format!("{} at {} has no entries", rel.display(), args.at));
    }
    if let Some(b) = outcome.blamed.iter().find(|b| b.boundary) {
        notes.push(format!(
            "history is shallow: entries marked ^ may be older than {}",
            b.commit
        ));
    }
    emit(out, |o| match format {
        PlainFormat::Text => write_text(&rows, &notes, o),
        PlainFormat::Json => write_json(tip, &rows, &notes, o),
    })?;
    Ok(0)
}

fn subject(w: &Wanted) -> String {
    match &w.tool {
        Some(t) => format!("{}/{t}", w.server),
        None => w.server.clone(),
    }
}

fn write_text(rows: &[Row<'_>], notes: &[String], o: &mut dyn Write) -> std::io::Result<()> {
    for r in rows {
        let approval = r.wanted.value.approval.as_ref();
        let sign_offs = if r.info.sign_offs.is_empty() {
            "-".to_string()
        } else {
            r.info.sign_offs.join(", ")
        };
        writeln!(
            o,
            "{}{} {} {:<10} {:<11} {}  approver: {}  signed-off-by: {}  note: {}",
            if r.blamed.boundary { "^" } else { "" },
            r.info.short,
            r.info.date,
            r.verdict.word(),
            r.wanted.value.state.as_str(),
            escape_display(&subject(r.wanted)),
            escape_display(approval.map_or("-", |a| a.approver.as_str())),
            escape_display(&sign_offs),
            // A provisional entry has no approval note: the commit's
            // subject says why it was recorded.
            escape_display(approval.map_or(r.info.subject.as_str(), |a| a.note.as_str())),
        )?;
    }
    for n in notes {
        writeln!(o, "note: {}", escape_display(n))?;
    }
    Ok(())
}

fn write_json(
    tip: gix::ObjectId,
    rows: &[Row<'_>],
    notes: &[String],
    o: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        o,
        "{{\n  \"version\": 2,\n  \"at\": {},\n  \"entries\": [",
        json_str(&tip.to_string())
    )?;
    for (i, r) in rows.iter().enumerate() {
        let approval = r.wanted.value.approval.as_ref();
        let sign_offs: Vec<String> = r.info.sign_offs.iter().map(|a| json_str(a)).collect();
        write!(
            o,
            "    {{\"server\": {}, \"tool\": {}, \"state\": {}, \"commit\": {}, \"date\": {}, \"approver\": {}, \"signed_off_by\": [{}], \"signature\": {}, \"signers\": [{}], \"note\": {}, \"commit_subject\": {}, \"boundary\": {}}}",
            json_str(&r.wanted.server),
            r.wanted.tool.as_deref().map_or("null".into(), json_str),
            json_str(r.wanted.value.state.as_str()),
            json_str(&r.info.id.to_string()),
            json_str(&r.info.date),
            approval.map_or("null".into(), |a| json_str(&a.approver)),
            sign_offs.join(", "),
            json_str(r.verdict.word()),
            r.verdict
                .signers()
                .iter()
                .map(|s| json_str(s))
                .collect::<Vec<_>>()
                .join(", "),
            approval.map_or("null".into(), |a| json_str(&a.note)),
            json_str(&r.info.subject),
            r.blamed.boundary,
        )?;
        writeln!(o, "{}", if i + 1 < rows.len() { "," } else { "" })?;
    }
    let notes: Vec<String> = notes.iter().map(|n| json_str(n)).collect();
    writeln!(o, "  ],\n  \"notes\": [{}]\n}}", notes.join(", "))
}
