//! `git kams record`: first sightings become provisional entries; entries
//! already in the lock are left exactly as they are. A server's launch is
//! not recorded here: `capture` runs a recorded launch, so recording one is
//! an approval, which `pin` makes (and the hooks ask a sign-off for).

use std::io::Write;

use anyhow::Result;

use super::{emit, now, Env, Status};
use crate::compare::pairs;
use crate::files::lock::Guard;
use crate::lock::{Entry, State};
use crate::text::escape_display;

/// Runs `record`.
pub fn run(env: &Env, out: &mut dyn Write) -> Result<Status> {
    let inventory = env.inventory()?;
    let path = env.lock_path()?;
    let guard = Guard::acquire(&path)?;
    if let Some(note) = guard.recovered() {
        emit(out, |o| writeln!(o, "note: {note}"))?;
    }
    let mut lock = guard.read()?.unwrap_or_default();
    let time = now()?;
    let new: Vec<(String, Option<String>, crate::descriptor::Descriptor)> =
        pairs(&inventory, &lock)
            .into_iter()
            .filter(|p| p.entry.is_none())
            .filter_map(|p| {
                p.seen
                    .map(|d| (p.server.to_string(), p.tool.map(str::to_string), d.clone()))
            })
            .collect();
    let mut lines = Vec::new();
    for (server, tool, descriptor) in new {
        let entry = Entry {
            state: State::Provisional,
            descriptor,
            first_seen: time.clone(),
            approval: None,
            lazy: Default::default(),
        };
        let slot = lock.servers.entry(server.clone()).or_default();
        let subject = match &tool {
            Some(t) => format!("{server}/{t}"),
            None => server.clone(),
        };
        lines.push(format!(
            "recorded {} {}",
            entry.descriptor.digest.short(),
            escape_display(&subject)
        ));
        match tool {
            Some(t) => {
                slot.tools.insert(t, entry);
            }
            None => slot.server = Some(entry),
        }
    }
    if lines.is_empty() {
        drop(guard);
        emit(out, |o| {
            writeln!(
                o,
                "nothing new: every advertised entry is already in {}",
                crate::text::shown_path(&path)
            )
        })?;
        return Ok(0);
    }
    guard.commit(&lock)?;
    emit(out, |o| {
        for l in &lines {
            writeln!(o, "{l}")?;
        }
        let entries = lines.len();
        writeln!(
            o,
            "wrote {} ({entries} provisional entr{} added)",
            crate::text::shown_path(&path),
            if entries == 1 { "y" } else { "ies" }
        )
    })?;
    Ok(0)
}
