//! `git kams status`: each entry's state, its locked and advertised
//! digests, and whether they still match.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::{emit, Env, PlainFormat, Selection, Status};
use crate::cache::lock::EntryFields;
use crate::canon::Digest;
use crate::cli::SelectArgs;
use crate::compare::{pairs, Pair};
use crate::descriptor::{Descriptor, FieldDigests};
use crate::detect::flow::classes::{Capabilities, CLASSES};
use crate::report::document::{self, Displayed, Layout};
use crate::text::escape_display;

fn word(p: &Pair<'_>, captured: bool) -> &'static str {
    match (p.entry, p.seen) {
        // Nothing to compare with: the lock alone is shown.
        (Some(_), None) if !captured => "-",
        (Some(e), Some(s)) if e.descriptor.digest == s.digest => "ok",
        (Some(_), Some(_)) => "drifted",
        (Some(_), None) => "removed",
        (None, Some(_)) => "new",
        (None, None) => "absent",
    }
}

/// One server's launch: what the lock records, what the inventory shows,
/// and whether a commit that meets the sign-off policy approved it.
struct LaunchRow {
    server: String,
    locked: Option<crate::canon::Digest>,
    seen: Option<crate::canon::Digest>,
    /// `None`: the lock records no launch; else the approving commit, or
    /// why there is none.
    approval: Option<std::result::Result<gix::ObjectId, String>>,
}

impl LaunchRow {
    fn state(&self) -> &'static str {
        match &self.approval {
            None => "-",
            Some(Ok(_)) => "approved",
            Some(Err(_)) => "unapproved",
        }
    }

    fn status(&self, captured: bool) -> &'static str {
        match (self.locked, self.seen) {
            (Some(_), None) if !captured => "-",
            (Some(a), Some(b)) if a == b => "ok",
            (Some(_), Some(_)) => "drifted",
            (Some(_), None) => "unseen",
            (None, _) => "new",
        }
    }
}

/// A row for every server whose launch the lock records or the inventory
/// shows. The approval is judged in git at `--at`'s revision, else at
/// `HEAD`, whose lock must then record the same launch as the work
/// tree's: an uncommitted launch is approved by nobody.
fn launch_rows(
    env: &Env,
    args: &SelectArgs,
    inventory: &crate::inventory::Inventory,
    lock: &crate::lock::Lock,
) -> Result<Vec<LaunchRow>> {
    // The launch each inventory server shows, computed once.
    let seen: std::collections::BTreeMap<&String, crate::json::Value> = inventory
        .servers
        .iter()
        .filter_map(|(n, s)| Some((n, crate::config::launch_spec(&s.launch)?)))
        .collect();
    let mut names: std::collections::BTreeSet<&String> = lock
        .servers
        .iter()
        .filter(|(_, s)| s.launch.is_some())
        .map(|(n, _)| n)
        .collect();
    names.extend(seen.keys());
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut judge = env.launch_judge(args.at.as_deref())?;
    let mut out = Vec::new();
    for name in names {
        let locked = lock.servers.get(name).and_then(|s| s.launch.as_ref());
        let approval = match (locked, judge.as_mut()) {
            (None, _) => None,
            (Some(l), Some(judge)) => Some(judge.verdict(name, l)?),
            (Some(_), None) => Some(Err(super::NO_HISTORY.to_string())),
        };
        out.push(LaunchRow {
            server: name.clone(),
            locked: locked.map(crate::canon::Digest::of_value),
            seen: seen.get(name).map(crate::canon::Digest::of_value),
            approval,
        });
    }
    Ok(out)
}

/// Whether there is an inventory to compare with: one named with
/// `--inventory` or `--inventory-at` always is (a missing one is then an
/// error, as in every command); the default or configured one is when it
/// exists. A reviewer wants to see what is approved before capturing.
fn has_inventory(env: &Env, args: &SelectArgs) -> bool {
    args.inventory_at.is_some()
        || !env.global.inventory.is_empty()
        || env
            .inventory_paths()
            .iter()
            .any(|p| std::fs::symlink_metadata(p).is_ok())
}

/// The lock (digests only) from its file, or from `--at`'s revision.
fn lock_alone(env: &Env, args: &SelectArgs, err: &mut dyn Write) -> Result<crate::lock::Lock> {
    if let Some(rev) = &args.at {
        return Ok(env.lock_at(rev, EntryFields::Digests)?.0);
    }
    let path = env.lock_path()?;
    match crate::files::lock::read_input(&path)? {
        Some(input) => Ok(crate::cache::lock::read(
            &path,
            input,
            env.index_dir()?.as_deref(),
            EntryFields::Digests,
        )?
        .0),
        None => {
            let _ = writeln!(
                err,
                "note: {} does not exist yet: nothing is approved",
                crate::text::shown_path(&path)
            );
            Ok(crate::lock::Lock::default())
        }
    }
}

/// `status --format json`, version 1: entries and launches a line each.
#[derive(Serialize)]
struct JsonStatus<'a> {
    version: u32,
    entries: Vec<JsonEntry<'a>>,
    launches: Vec<JsonLaunch<'a>>,
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    server: &'a str,
    tool: Option<&'a str>,
    state: Option<&'static str>,
    status: Option<&'static str>,
    locked: Digests<'a>,
    seen: Digests<'a>,
    /// The capability classes of the tool (of the server: of its tools),
    /// from their names.
    can: Vec<&'static str>,
}

/// A descriptor's digest and its fields' digests; both `null` without one.
#[derive(Serialize)]
struct Digests<'a> {
    digest: Option<Displayed<&'a Digest>>,
    fields: Option<Fields<'a>>,
}

impl<'a> Digests<'a> {
    fn of(d: Option<&'a Descriptor>) -> Digests<'a> {
        Digests {
            digest: d.map(|d| Displayed(&d.digest)),
            fields: d.map(|d| Fields(&d.field_digests)),
        }
    }
}

/// Field digests as an object, by field name.
struct Fields<'a>(&'a FieldDigests);

impl Serialize for Fields<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, d)| (k, Displayed(d))))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonLaunch<'a> {
    server: &'a str,
    state: &'static str,
    status: Option<&'static str>,
    locked: Option<Displayed<Digest>>,
    seen: Option<Displayed<Digest>>,
    approved_by: Option<Displayed<gix::ObjectId>>,
    unapproved_because: Option<&'a str>,
}

/// What each entry of `all` can do ([`Capabilities`]), in its order: a
/// tool's classes as advertised (as the lock recorded it when the
/// inventory does not show it); a server's, those of all its tools, which
/// follow it ([`pairs`] sorts by server, server level first).
fn capabilities(all: &[Pair<'_>]) -> Vec<Capabilities> {
    let mut out: Vec<Capabilities> = Vec::with_capacity(all.len());
    let mut server_row: Option<(&str, usize)> = None;
    for p in all {
        match p.tool {
            None => {
                server_row = Some((p.server, out.len()));
                out.push(Capabilities::default());
            }
            Some(_) => {
                let c = p
                    .seen
                    .or(p.entry.map(|e| &e.descriptor))
                    .map(|d| d.can)
                    .unwrap_or_default();
                if let Some((server, row)) = server_row {
                    if server == p.server {
                        out[row] = out[row].union(c);
                    }
                }
                out.push(c);
            }
        }
    }
    out
}

/// A status word for JSON: `-` (nothing to compare with) is `null`.
fn shown_status(word: &'static str) -> Option<&'static str> {
    (word != "-").then_some(word)
}

/// Runs `status`, the last thing the process does.
pub fn run(
    env: &Env,
    args: &SelectArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    let format = env.plain_format("status")?;
    let captured = has_inventory(env, args);
    let (inventory, lock) = if captured {
        let (inventory, lock, _) = env.inventory_and_lock(args, None, EntryFields::Digests, err)?;
        (inventory, lock)
    } else {
        let paths: Vec<String> = env
            .inventory_paths()
            .iter()
            .map(|p| crate::text::shown_path(p))
            .collect();
        let _ = writeln!(
            err,
            "note: no inventory at {}: the lock's entries are shown, compared with nothing (`git kams capture` writes one)",
            paths.join(", ")
        );
        (
            crate::inventory::Inventory::default(),
            lock_alone(env, args, err)?,
        )
    };
    let all = pairs(&inventory, &lock);
    let selection = Selection::new(&args.keys);
    selection.check(&all)?;
    let launches: Vec<LaunchRow> = launch_rows(env, args, &inventory, &lock)?
        .into_iter()
        .filter(|l| selection.matches(&l.server, None))
        .collect();
    let can = capabilities(&all);
    let rows: Vec<(&Pair<'_>, Capabilities)> = all
        .iter()
        .zip(can.iter().copied())
        .filter(|(p, _)| selection.matches(p.server, p.tool))
        .filter(|(p, _)| p.entry.is_some() || p.seen.is_some())
        .collect();
    emit(out, |o| match format {
        PlainFormat::Text => {
            writeln!(
                o,
                "{:<12} {:<8} {:<12} {:<12} {:<width$} ENTRY",
                "STATE",
                "STATUS",
                "LOCKED",
                "SEEN",
                "CAN",
                width = CLASSES.len()
            )?;
            // One buffer for every line: a formatter call per column cost
            // more than the rest of a 2,000-entry status.
            let mut line = String::with_capacity(128);
            for (p, can) in &rows {
                line.clear();
                let column = |line: &mut String, text: &str, width: usize| {
                    line.push_str(text);
                    let pad = width.saturating_sub(text.chars().count()) + 1;
                    line.extend(std::iter::repeat_n(' ', pad));
                };
                column(&mut line, p.entry.map_or("-", |e| e.state.as_str()), 12);
                column(&mut line, word(p, captured), 8);
                let locked = p.entry.map_or("-".into(), |e| e.descriptor.digest.short());
                column(&mut line, &locked, 12);
                let seen = p.seen.map_or("-".into(), |d| d.digest.short());
                column(&mut line, &seen, 12);
                column(&mut line, can.letters(), CLASSES.len());
                line.push_str(&escape_display(p.server));
                if let Some(t) = p.tool {
                    line.push('/');
                    line.push_str(&escape_display(t));
                }
                line.push('\n');
                o.write_all(line.as_bytes())?;
            }
            for l in &launches {
                let short = |d: &Option<crate::canon::Digest>| d.map_or("-".into(), |d| d.short());
                writeln!(
                    o,
                    "{:<12} {:<8} {:<12} {:<12} {:<width$} {} (launch){}",
                    l.state(),
                    l.status(captured),
                    short(&l.locked),
                    short(&l.seen),
                    "",
                    escape_display(&l.server),
                    match &l.approval {
                        Some(Err(why)) => format!(": {}", escape_display(why)),
                        _ => String::new(),
                    },
                    width = CLASSES.len()
                )?;
            }
            Ok(())
        }
        PlainFormat::Json => {
            let status = JsonStatus {
                version: 1,
                entries: rows
                    .iter()
                    .map(|(p, can)| JsonEntry {
                        server: p.server,
                        tool: p.tool,
                        state: p.entry.map(|e| e.state.as_str()),
                        status: shown_status(word(p, captured)),
                        locked: Digests::of(p.entry.map(|e| &e.descriptor)),
                        seen: Digests::of(p.seen),
                        can: can.names(),
                    })
                    .collect(),
                launches: launches
                    .iter()
                    .map(|l| JsonLaunch {
                        server: &l.server,
                        state: l.state(),
                        status: shown_status(l.status(captured)),
                        locked: l.locked.map(Displayed),
                        seen: l.seen.map(Displayed),
                        approved_by: match &l.approval {
                            Some(Ok(c)) => Some(Displayed(*c)),
                            _ => None,
                        },
                        unapproved_because: match &l.approval {
                            Some(Err(why)) => Some(why.as_str()),
                            _ => None,
                        },
                    })
                    .collect(),
            };
            document::write(&status, Layout::rows(&["entries", "launches"]), o)
        }
    })?;
    // The last thing the process does: the system takes the entries back
    // at exit faster than the allocator one by one (see `scan::run`).
    drop(rows);
    drop(all);
    std::mem::forget((inventory, lock));
    Ok(0)
}
