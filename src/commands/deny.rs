//! `git kams deny`: a reviewer's refusal, kept in the lock like an
//! approval. The selected entries become denied with the denier, the time
//! and the note, and the change is committed and signed off exactly as
//! `pin` commits an approval, so that the hooks judge it the same way.
//! Whatever a denied entry advertises later, `scan` reports it and the
//! hooks refuse it while it is advertised.

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;

use super::pin::{self, approver, commit_message, write_approval, Reviewed};
use super::{emit, now, Env, Selection, Status};
use crate::cli::DenyArgs;
use crate::compare::pairs;
use crate::files::lock::Guard;
use crate::inventory::Inventory;
use crate::lock::{Approval, Entry, Lock, State};
use crate::text::escape_display;

/// Runs `deny`.
pub fn run(env: &Env, args: &DenyArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Status> {
    let who = approver(env, args.commit.approver.as_deref())?;
    let inventory = env.inventory()?;
    let path = env.lock_path()?;
    let guard = Guard::acquire(&path)?;
    if let Some(note) = guard.recovered() {
        emit(out, |o| writeln!(o, "note: {note}"))?;
    }
    let mut lock = guard.read()?.unwrap_or_default();
    let selection = Selection::new(&args.keys);
    let selected: Vec<(String, Option<String>)> = {
        let all = pairs(&inventory, &lock);
        selection.check(&all)?;
        all.iter()
            .filter(|p| selection.matches(p.server, p.tool))
            .map(|p| (p.server.to_string(), p.tool.map(str::to_string)))
            .collect()
    };
    let approval = Arc::new(Approval {
        approver: who.clone(),
        at: now()?,
        note: args.note.clone(),
    });
    let mut lines = Vec::new();
    for (server, tool) in &selected {
        if let Some(line) = deny_entry(&mut lock, &inventory, server, tool.as_deref(), &approval) {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        drop(guard);
        emit(out, |o| {
            writeln!(
                o,
                "nothing to deny: the selected entries are denied as they are"
            )
        })?;
        return Ok(0);
    }
    let servers: Vec<String> = selected.iter().map(|(s, _)| s.clone()).collect();
    let reviewed = Reviewed::Files(pin::files_of(&inventory, &servers));
    let message = denial_message(&args.note, &who, &lines);
    let done = write_approval(
        env,
        guard,
        &lock,
        &path,
        args.commit.commit(),
        &message,
        &reviewed,
    )?;
    emit(out, |o| {
        pin::write_summary(o, &lines, pin::Lines::Print, "denied", &who, &done)
    })?;
    super::enforce::refresh_after(env, out, err);
    Ok(0)
}

/// Marks `server`'s entry (`tool`: one of its tools) denied with
/// `approval`, taking the descriptor the inventory shows (else the one the
/// lock has); returns the line that says so, or `None` when it is denied
/// already as it is. Shared with `review`, whose denials are the same.
pub fn deny_entry(
    lock: &mut Lock,
    inventory: &Inventory,
    server: &str,
    tool: Option<&str>,
    approval: &Arc<Approval>,
) -> Option<String> {
    let old = lock.entry(server, tool).cloned();
    let seen = inventory.servers.get(server).and_then(|s| match tool {
        Some(t) => s.tools.get(t).map(|t| &t.descriptor),
        None => Some(&s.descriptor),
    });
    let descriptor = match (seen, &old) {
        (Some(d), _) => d.clone(),
        (None, Some(e)) => e.descriptor.clone(),
        (None, None) => return None,
    };
    if old
        .as_ref()
        .is_some_and(|e| e.state == State::Denied && e.descriptor.digest == descriptor.digest)
    {
        return None;
    }
    let subject = escape_display(&tool.map_or(server.to_string(), |t| format!("{server}/{t}")));
    let line = match &old {
        None => format!("denied    {subject} {} (new)", descriptor.digest),
        Some(e) => format!(
            "denied    {subject} {} (was {})",
            descriptor.digest,
            e.state.as_str()
        ),
    };
    let entry = Entry {
        state: State::Denied,
        descriptor,
        first_seen: old.map_or(approval.at.clone(), |e| e.first_seen),
        approval: Some(approval.clone()),
        lazy: Default::default(),
    };
    let slot = lock.servers.entry(server.to_string()).or_default();
    match tool {
        Some(t) => {
            slot.tools.insert(t.to_string(), entry);
        }
        None => slot.server = Some(entry),
    }
    Some(line)
}

/// A denial commit's message: what was denied, the note, the sign-off.
fn denial_message(note: &str, who: &str, lines: &[String]) -> String {
    let subjects: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let subject = match subjects.as_slice() {
        [one] => format!("kams: deny {one}"),
        many => format!("kams: deny {} entries", many.len()),
    };
    commit_message(&subject, note, who, lines)
}
