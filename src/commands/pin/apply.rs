//! Writing a [`Plan`] into the lock: every approval `pin` and `review`
//! make, and every denial `review` makes, becomes entries here, with the
//! approver, the time and the note, and one line per change for the
//! summary and the commit message.

use anyhow::Result;

use super::plan::{Action, Renamed};
use super::summary::LAUNCH;
use crate::commands::now;
use crate::descriptor::Descriptor;
use crate::inventory::Inventory;
use crate::json::Value;
use crate::lock::{Entry, Lock, State};
use crate::text::escape_display;

/// The lock as read, the inventory it is approved from, and the actions
/// decided, each with its entry's note.
pub(crate) struct Plan {
    /// The lock the actions apply to.
    pub lock: Lock,
    /// Where the pinned descriptors are taken from.
    pub inventory: Inventory,
    /// The actions, in order, and each one's note (shared: a pin of a
    /// whole inventory gives every entry the same note, held once).
    pub decided: Vec<(Action, std::sync::Arc<str>)>,
    /// The entries denied (`review`'s `d`), each with its note.
    pub denied: Vec<(String, Option<String>, std::sync::Arc<str>)>,
    /// The renames approved ([`renamed_by`](super::renamed_by)): (server, new name) to the
    /// old name.
    pub renamed: Renamed,
}

/// Applies `plan`'s denials and actions to its lock, each entry approved
/// (or denied) by `who` now with its own note; the lock, and one line per
/// change. Every approval `pin` and `review` make goes through here.
pub(crate) fn apply(plan: Plan, who: &str) -> Result<(Lock, Vec<String>)> {
    let time = now()?;
    // One approval per note, shared by the entries that have it (as
    // reading a lock shares it between entries pinned together): a pin
    // gives every entry its note.
    let mut approval = None;
    let (mut lock, mut inventory) = (plan.lock, plan.inventory);
    let mut lines = Vec::new();
    // Before the approvals take their descriptors out of the inventory.
    for (server, tool, note) in &plan.denied {
        let denial = crate::lock::format::share_approval(
            who.into(),
            time.as_str().into(),
            note.as_ref().into(),
            &mut approval,
        );
        lines.extend(crate::commands::deny::deny_entry(
            &mut lock,
            &inventory,
            server,
            tool.as_deref(),
            &denial,
        ));
    }
    for (action, note) in plan.decided {
        match action {
            Action::Pin(server, tool, old) => {
                let from = tool
                    .as_ref()
                    .and_then(|t| plan.renamed.get(&(server.clone(), t.clone())));
                // The lock's note keeps the link, as `log` shows it.
                let note: std::sync::Arc<str> = match from {
                    Some(f) if note.trim().is_empty() => format!("renamed from {f}").into(),
                    Some(f) => format!("{note} (renamed from {f})").into(),
                    None => note,
                };
                let descriptor = take_descriptor(&mut inventory, &server, tool.as_deref());
                let subject = escape_display(
                    &tool
                        .as_ref()
                        .map_or(server.clone(), |t| format!("{server}/{t}")),
                );
                lines.push(match (&old, from) {
                    (None, Some(f)) => format!(
                        "pinned    {subject} {} (renamed from {})",
                        descriptor.digest,
                        escape_display(f)
                    ),
                    (None, None) => format!("pinned    {subject} {} (new)", descriptor.digest),
                    (Some(e), _) if e.descriptor.digest == descriptor.digest => {
                        format!(
                            "pinned    {subject} {} (was provisional)",
                            descriptor.digest
                        )
                    }
                    (Some(e), _) => format!(
                        "re-pinned {subject} {} -> {}",
                        e.descriptor.digest, descriptor.digest
                    ),
                });
                let entry = Entry {
                    state: State::Pinned,
                    descriptor,
                    first_seen: old.map_or(time.clone(), |e| e.first_seen),
                    approval: Some(crate::lock::format::share_approval(
                        who.into(),
                        time.as_str().into(),
                        note.as_ref().into(),
                        &mut approval,
                    )),
                    lazy: Default::default(),
                };
                let slot = lock.servers.entry(server).or_default();
                match tool {
                    Some(t) => {
                        slot.tools.insert(t, entry);
                    }
                    None => slot.server = Some(entry),
                }
            }
            Action::Launch(server, old, launch) => {
                let shown = |v: &Value| escape_display(&crate::canon::jcs_string(v));
                lines.push(match &old {
                    None => format!(
                        "{LAUNCH}{} {} (new)",
                        escape_display(&server),
                        shown(&launch)
                    ),
                    Some(o) => format!(
                        "{LAUNCH}{} {} -> {}",
                        escape_display(&server),
                        shown(o),
                        shown(&launch)
                    ),
                });
                // Where a reviewer finds the launch: the configs capture
                // wrote into the server's file (`configuredIn`).
                let configs = inventory
                    .servers
                    .get(&server)
                    .map(|s| configured_in(&s.launch))
                    .unwrap_or_default();
                let slot = lock.servers.entry(server).or_default();
                slot.launch = Some(launch);
                slot.launch_configs = configs;
                slot.launch_approval = Some(crate::lock::format::share_approval(
                    who.into(),
                    time.as_str().into(),
                    note.as_ref().into(),
                    &mut approval,
                ));
            }
            Action::Remove(server, tool, old) => {
                let subject = escape_display(
                    &tool
                        .as_ref()
                        .map_or(server.clone(), |t| format!("{server}/{t}")),
                );
                lines.push(format!(
                    "removed   {subject} {} (no longer advertised)",
                    old.descriptor.digest
                ));
                if let Some(slot) = lock.servers.get_mut(&server) {
                    match tool {
                        Some(t) => {
                            slot.tools.remove(&t);
                        }
                        None => slot.server = None,
                    }
                }
            }
        }
    }
    Ok((lock, lines))
}

/// The descriptor the inventory shows for `server` (`tool`: one of its
/// tools, moved out); pairing found it there.
fn take_descriptor(inventory: &mut Inventory, server: &str, tool: Option<&str>) -> Descriptor {
    let s = inventory
        .servers
        .get_mut(server)
        .expect("a pinned server is in the inventory");
    match tool {
        Some(t) => {
            s.tools
                .remove(t)
                .expect("a pinned tool is in the inventory")
                .descriptor
        }
        // One per server: copied.
        None => s.descriptor.clone(),
    }
}

/// The configs a capture file says its launch came from (`configuredIn`):
/// distinct, sorted, each free of control characters, as the lock holds
/// them; anything else there is left out.
fn configured_in(launch: &crate::json::Object) -> Vec<String> {
    let mut files: Vec<String> = launch
        .get("configuredIn")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|f| !f.is_empty() && !f.chars().any(char::is_control))
        .map(str::to_string)
        .collect();
    files.sort();
    files.dedup();
    files
}
