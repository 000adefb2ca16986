//! What an approval would change in the lock, decided before anything is
//! written: the [`Action`]s that approving a selection of the inventory's
//! pairs takes, the denied entries it passes over, and the renames whose
//! both halves it approves. `pin` and `review` plan the same way, so that
//! an approval means the same whichever command makes it.

use anyhow::{bail, Result};

use crate::commands::Selection;
use crate::compare::Pair;
use crate::inventory::Inventory;
use crate::json::Value;
use crate::lock::{Entry, State};
use crate::text::escape_display;

/// One change to the lock that approving the inventory makes.
pub(crate) enum Action {
    /// The entry, and what the lock had there; the descriptor is taken
    /// from the inventory when the entry is written, not copied: copies
    /// of every descriptor were much of a whole-inventory pin's memory
    /// (docs/performance.md, twelfth pass).
    Pin(String, Option<String>, Option<Entry>),
    Remove(String, Option<String>, Entry),
    /// A server's launch approved: the server, the recorded launch, the new one.
    Launch(String, Option<Value>, Value),
}

/// What approving the `pairs` of `inventory` that `keys` selects changes
/// in the lock, in their order, and the denied entries it passes over
/// (shown): shared by `pin` and `review`.
pub(crate) fn plan(
    inventory: &Inventory,
    pairs: &[Pair<'_>],
    keys: &[String],
) -> Result<(Vec<Action>, Vec<String>)> {
    let selection = Selection::new(keys);
    let mut actions = Vec::new();
    // Denied entries a wider selection passed over: only naming one
    // (SERVER/TOOL) overturns its denial.
    let mut kept_denied = Vec::new();
    for p in pairs.iter().filter(|p| selection.matches(p.server, p.tool)) {
        let (server, tool) = (p.server.to_string(), p.tool.map(str::to_string));
        if p.entry.is_some_and(|e| e.state == State::Denied)
            && !names_exactly(keys, p.server, p.tool)
        {
            kept_denied.push(escape_display(
                &p.tool.map_or(server.clone(), |t| format!("{server}/{t}")),
            ));
            continue;
        }
        match (p.entry, p.seen) {
            (_, Some(seen)) => {
                if let Some(a) = inventory.servers[p.server]
                    .ambiguities
                    .iter()
                    .find(|a| a.tool.as_deref() == p.tool)
                {
                    bail!(
                        "cannot pin {}: the inventory is ambiguous ({}{}); fix {} first",
                        escape_display(&p.tool.map_or(server.clone(), |t| format!("{server}/{t}"))),
                        escape_display(&a.message),
                        a.field
                            .as_deref()
                            .map(|f| format!(" at {}", escape_display(f)))
                            .unwrap_or_default(),
                        crate::text::shown_path(&inventory.servers[p.server].source)
                    );
                }
                let unchanged = p.entry.is_some_and(|e| {
                    e.state == State::Pinned && e.descriptor.digest == seen.digest
                });
                // Pinning a whole server (or everything) approves how it is
                // launched too; pinning one tool does not.
                let launch = p
                    .seen_launch
                    .and_then(crate::config::launch_spec)
                    .filter(|l| p.tool.is_none() && p.locked_launch != Some(l));
                if let Some(l) = launch {
                    actions.push(Action::Launch(server.clone(), p.locked_launch.cloned(), l));
                }
                if !unchanged {
                    actions.push(Action::Pin(server, tool, p.entry.cloned()));
                }
            }
            (Some(entry), None) => actions.push(Action::Remove(server, tool, entry.clone())),
            (None, None) => {}
        }
    }
    // Approving a rename's new name retires the old one with it, whatever
    // was selected: they are one change.
    for r in crate::compare::rename::renames(pairs) {
        let new_pinned = pins_new(&actions, r.server, r.to);
        let old_removed = removes(&actions, r.server, r.from);
        let old = pairs
            .iter()
            .find(|p| p.server == r.server && p.tool == Some(r.from))
            .and_then(|p| p.entry);
        if let (true, false, Some(old)) = (new_pinned, old_removed, old) {
            actions.push(Action::Remove(
                r.server.to_string(),
                Some(r.from.to_string()),
                old.clone(),
            ));
        }
    }
    Ok((actions, kept_denied))
}

/// The renames `actions` approve: (server, new name) to the old name, for
/// each rename among `pairs` whose new name they pin and whose old name
/// they remove. [`apply`](super::apply()) says so in the lines and in the new entry's
/// note, so that the lock and `log` keep the link.
pub(crate) fn renamed_by(pairs: &[Pair<'_>], actions: &[Action]) -> Renamed {
    let all = crate::compare::rename::renames(pairs)
        .into_iter()
        .map(|r| ((r.server.to_string(), r.to.to_string()), r.from.to_string()))
        .collect();
    approved_renames(all, actions)
}

/// Renames, (server, new name) to the old name.
pub(crate) type Renamed = std::collections::BTreeMap<(String, String), String>;

/// The `renames` whose both halves `actions` approve: the new name
/// pinned, the old one removed (`review` decides them one by one).
pub(crate) fn approved_renames(renames: Renamed, actions: &[Action]) -> Renamed {
    renames
        .into_iter()
        .filter(|((s, new), old)| pins_new(actions, s, new) && removes(actions, s, old))
        .collect()
}

/// True when `actions` pin `server`'s tool `tool`, new to the lock.
fn pins_new(actions: &[Action], server: &str, tool: &str) -> bool {
    actions
        .iter()
        .any(|a| matches!(a, Action::Pin(s, Some(t), None) if s == server && t == tool))
}

/// True when `actions` remove `server`'s tool `tool` from the lock.
fn removes(actions: &[Action], server: &str, tool: &str) -> bool {
    actions
        .iter()
        .any(|a| matches!(a, Action::Remove(s, Some(t), _) if s == server && t == tool))
}

/// True when `keys` names exactly this entry (`SERVER/TOOL`, or `SERVER`
/// for its server entry), not a wider selection that holds it.
pub(crate) fn names_exactly(keys: &[String], server: &str, tool: Option<&str>) -> bool {
    keys.iter().any(|k| match tool {
        Some(t) => k.split_once('/') == Some((server, t)),
        None => k == server,
    })
}
