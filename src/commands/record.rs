//! `git kams record`: first sightings become provisional entries; entries
//! already in the lock are left exactly as they are. A server's launch is
//! recorded once, when the lock has none.

use std::io::Write;

use anyhow::Result;

use super::{emit, now, Env, Status};
use crate::compare::pairs;
use crate::lock::store::Guard;
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
    // A server whose lock has no launch yet (new, or from a lock written
    // before launches were recorded) takes the one the inventory shows.
    let mut launches = 0;
    for (name, server) in &inventory.servers {
        // Every advertised server has an entry by now (its server entry).
        let Some(slot) = lock.servers.get_mut(name) else {
            continue;
        };
        if slot.launch.is_some() {
            continue;
        }
        if let Some(spec) = crate::config::launch_spec(&server.launch) {
            lines.push(format!(
                "recorded launch {} {}",
                escape_display(name),
                escape_display(&crate::canon::jcs_string(&spec))
            ));
            slot.launch = Some(spec);
            launches += 1;
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
        let entries = lines.len() - launches;
        let mut what = Vec::new();
        if entries > 0 {
            what.push(format!(
                "{entries} provisional entr{} added",
                if entries == 1 { "y" } else { "ies" }
            ));
        }
        if launches > 0 {
            what.push(format!(
                "launch of {launches} server{} recorded",
                if launches == 1 { "" } else { "s" }
            ));
        }
        writeln!(
            o,
            "wrote {} ({})",
            crate::text::shown_path(&path),
            what.join(", ")
        )
    })?;
    Ok(0)
}
