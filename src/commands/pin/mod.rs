//! `git kams pin`: approve what the inventory shows now. Selected entries
//! take the advertised descriptors and become pinned with the approver,
//! the time and the note; entries the inventory no longer shows are
//! removed from the lock. Pinned entries whose descriptor did not change
//! keep their original approval, so history names who really reviewed them.
//! Pinning a whole server also records its current launch.
//!
//! An approval is made knowing what it approves: the high and critical
//! findings of the classes that say what a text or a launch would do
//! ([`Class::GATED`]) on the entries it changes are printed, and refuse
//! the pin unless `--accept-findings` accepts them; the commit records
//! each one accepted, for `log` to show.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::{emit, now, Env, Selection, Status};
use crate::cli::PinArgs;
use crate::compare::pairs;
use crate::descriptor::Descriptor;
use crate::finding::{Class, Finding, Severity};
use crate::git::message::{Acceptance, ACCEPTED};
use crate::inventory::Inventory;
use crate::json::Value;
use crate::lock::store::Guard;
use crate::lock::{Entry, Lock, State};
use crate::text::{escape_display, has_concealing};

/// One change to the lock that approving the inventory makes.
pub(crate) enum Action {
    /// The entry, and what the lock had there; the descriptor is taken
    /// from the inventory when the entry is written (not copied: 100,000
    /// of them were 48 MB of a whole-inventory pin).
    Pin(String, Option<String>, Option<Entry>),
    Remove(String, Option<String>, Entry),
    /// A server's launch approved: the server, the recorded launch, the new one.
    Launch(String, Option<Value>, Value),
}

/// Starts the summary line of an approved launch; also how
/// [`approval_message`] tells it from an entry's line.
const LAUNCH: &str = "launch    ";

/// The approver: `--approver`, else git config `user.name` and `user.email`.
pub fn approver(env: &Env, flag: Option<&str>) -> Result<String> {
    let who = match flag {
        Some(a) => a.trim().to_string(),
        None => match (env.repo.config("user.name"), env.repo.config("user.email")) {
            (Some(n), Some(e)) => format!("{} <{}>", n.trim(), e.trim()),
            (Some(n), None) => n.trim().to_string(),
            _ => bail!("no approver: set git config user.name and user.email, or pass --approver \"Name <email>\""),
        },
    };
    check_approver(&who)?;
    Ok(who)
}

/// Refuses an approver that is empty or could hide text from a reviewer.
pub fn check_approver(who: &str) -> Result<()> {
    if who.is_empty() || has_concealing(who) {
        bail!(
            "approver `{}` is empty or has control or invisible characters",
            escape_display(who)
        );
    }
    Ok(())
}

/// Runs `pin`.
pub fn run(env: &Env, args: &PinArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Status> {
    let who = approver(env, args.approver.as_deref())?;
    let inventory = env.inventory()?;
    let path = env.lock_path()?;
    let guard = Guard::acquire(&path)?;
    if let Some(note) = guard.recovered() {
        emit(out, |o| writeln!(o, "note: {note}"))?;
    }
    let lock = guard.read()?.unwrap_or_default();
    let selection = Selection::new(&args.keys);
    let all = pairs(&inventory, &lock);
    selection.check(&all)?;
    let (actions, kept_denied) = plan(&inventory, &all, &args.keys)?;
    let renamed = renamed_by(&all, &actions);
    emit(out, |o| {
        write_kept_denied(o, &kept_denied, |k| {
            format!("name it, `git kams pin {k} -m NOTE`, to overturn the denial")
        })
    })?;
    let approved: Vec<String> = actions
        .iter()
        .map(|a| match a {
            Action::Pin(s, ..) | Action::Launch(s, ..) | Action::Remove(s, ..) => s.clone(),
        })
        .collect();
    let reviewed = if args.keys.is_empty() {
        let all: Vec<String> = inventory.servers.keys().cloned().collect();
        Reviewed::Whole(files_of(&inventory, &all))
    } else {
        Reviewed::Files(files_of(&inventory, &approved))
    };
    if actions.is_empty() && !args.no_commit {
        // Pinned and unchanged, but the inventory they were approved from
        // is not committed as it is (an approval made before pin committed
        // it, or by hand): the hooks compare the committed inventory, so
        // it goes into a commit of its own, signed off like an approval.
        let selected: Vec<String> = all
            .iter()
            .filter(|p| selection.matches(p.server, p.tool))
            .map(|p| p.server.to_string())
            .collect();
        let in_commit = match &reviewed {
            Reviewed::Whole(f) => Reviewed::Whole(f.clone()),
            Reviewed::Files(_) => Reviewed::Files(files_of(&inventory, &selected)),
        };
        let stale = inventory_not_committed(env, &in_commit)?;
        if !stale.is_empty() {
            let lines: Vec<String> = stale
                .iter()
                .map(|p| format!("inventory {}", escape_display(&p.display().to_string())))
                .collect();
            let subject = format!(
                "kams: commit the reviewed inventory ({} file{})",
                stale.len(),
                if stale.len() == 1 { "" } else { "s" }
            );
            let message = commit_message(&subject, &args.note, &who, &lines);
            let done = write_approval(env, guard, &lock, &path, false, &message, &in_commit)?;
            emit(out, |o| {
                for l in &lines {
                    writeln!(o, "{l}")?;
                }
                writeln!(
                    o,
                    "the selected entries are pinned and unchanged; their inventory was not committed as reviewed: {done}"
                )
            })?;
            return Ok(0);
        }
    }
    if actions.is_empty() {
        drop(guard);
        let uncommitted = if args.no_commit {
            None
        } else {
            uncommitted_lock(env, &path)
        };
        emit(out, |o| {
            writeln!(
                o,
                "nothing to pin: the selected entries are pinned and unchanged"
            )?;
            if let Some(rel) = &uncommitted {
                writeln!(
                    o,
                    "note: {0} differs from its last commit (an earlier pin stopped before committing, or it was edited): review `git diff {0}`, then `git commit -s {0}`",
                    rel.display()
                )?;
            }
            Ok(())
        })?;
        return Ok(0);
    }
    // What the approval would say yes to, seen before anything is written.
    let accept = args.accept_findings.as_ref().map_or(&[][..], |a| &a.0[..]);
    // The detectors only, on what pin read: compare's findings (drift,
    // added) are no class it asks about, and scan's indexes are scan's
    // and status's to keep.
    let (accepted, refused) = if actions.iter().any(|a| !matches!(a, Action::Remove(..))) {
        let configs = env.client_configs()?;
        let cx = crate::detect::Context {
            inventory: &inventory,
            lock: &lock,
            configs: &configs,
        };
        let found = crate::detect::run(&cx, &crate::threads::Threads::of_machine());
        gate(found, &actions, accept)
    } else {
        (Vec::new(), Vec::new())
    };
    if !refused.is_empty() {
        drop(guard);
        let state = |s: &str, t: Option<&str>| lock.entry(s, t).map_or("new", |e| e.state.as_str());
        emit(out, |o| {
            crate::report::write_text(&refused, &state, env.colour, o)
        })?;
        let mut classes: Vec<&str> = refused.iter().map(|f| f.class.as_str()).collect();
        classes.sort_unstable();
        classes.dedup();
        emit(err, |e| {
            writeln!(
                e,
                "refused: {} finding{} at high or critical on what this pin would approve; nothing was written",
                refused.len(),
                if refused.len() == 1 { "" } else { "s" },
            )?;
            writeln!(
                e,
                "hint: review them; to approve anyway, pin again with --accept-findings={} (or --accept-findings for every class); the approval commit records what it accepted",
                classes.join(",")
            )
        })?;
        return Ok(1);
    }
    let note: std::sync::Arc<str> = args.note.as_str().into();
    let decided = actions.into_iter().map(|a| (a, note.clone())).collect();
    let plan = Plan {
        lock,
        inventory,
        decided,
        denied: Vec::new(),
        renamed,
    };
    let (mut lock, mut lines) = apply(plan, &who)?;
    lines.extend(accepted.iter().map(|f| Acceptance::of(f).line()));
    lock.tidy();
    // Everything at once: on a terminal, asked once, what was listed.
    let ask = args.keys.is_empty() && !args.yes && {
        use std::io::IsTerminal;
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    };
    if ask {
        emit(out, |o| write_lines(&lines, o))?;
        if !confirm(&mut std::io::stdin().lock(), err, Tally::of(&lines))? {
            drop(guard);
            emit(out, |o| writeln!(o, "not approved: nothing was written"))?;
            return Ok(0);
        }
    }
    let message = approval_message(&args.note, &who, &lines);
    let done = write_approval(
        env,
        guard,
        &lock,
        &path,
        args.no_commit,
        &message,
        &reviewed,
    )?;
    emit(out, |o| {
        write_summary(o, &lines, !ask, "approved", &who, &done)
    })?;
    Ok(0)
}

/// What approving the `pairs` of `inventory` that `keys` selects changes
/// in the lock, in their order, and the denied entries it passes over
/// (shown): shared by `pin` and `review`.
pub(crate) fn plan(
    inventory: &Inventory,
    pairs: &[crate::compare::Pair<'_>],
    keys: &[String],
) -> Result<(Vec<Action>, Vec<String>)> {
    let selection = Selection::new(keys);
    let mut actions = Vec::new();
    // Denied entries a wider selection passed over: only naming one
    // (SERVER/TOOL) overturns its denial.
    let mut kept_denied = Vec::new();
    for p in pairs.iter().filter(|p| selection.matches(p.server, p.tool)) {
        let (server, tool) = (p.server.to_string(), p.tool.map(str::to_string));
        if p.entry.is_some_and(|e| e.state == State::Denied) && !named(keys, p.server, p.tool) {
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
/// they remove. [`apply`] says so in the lines and in the new entry's
/// note, so that the lock and `log` keep the link.
pub(crate) fn renamed_by(pairs: &[crate::compare::Pair<'_>], actions: &[Action]) -> Renamed {
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

/// The lock as read, the inventory it is approved from, and the actions
/// decided, each with its entry's note.
pub(crate) struct Plan {
    /// The lock the actions apply to.
    pub lock: Lock,
    /// Where the pinned descriptors are taken from.
    pub inventory: Inventory,
    /// The actions, in order, and each one's note (shared: a pin of a
    /// whole inventory gives 100,000 entries one note).
    pub decided: Vec<(Action, std::sync::Arc<str>)>,
    /// The entries denied (`review`'s `d`), each with its note.
    pub denied: Vec<(String, Option<String>, std::sync::Arc<str>)>,
    /// The renames approved ([`renamed_by`]): (server, new name) to the
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
        lines.extend(super::deny::deny_entry(
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
                let slot = lock.servers.entry(server).or_default();
                slot.launch = Some(launch);
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

/// True when `keys` names exactly this entry (`SERVER/TOOL`, or `SERVER`
/// for its server entry), not a wider selection that holds it.
pub(crate) fn named(keys: &[String], server: &str, tool: Option<&str>) -> bool {
    keys.iter().any(|k| match tool {
        Some(t) => k.split_once('/') == Some((server, t)),
        None => k == server,
    })
}

/// A line per denied entry a wider selection passed over, with `how` to
/// take it up again.
pub(crate) fn write_kept_denied(
    o: &mut dyn Write,
    kept: &[String],
    how: impl Fn(&str) -> String,
) -> std::io::Result<()> {
    for k in kept {
        writeln!(o, "kept denied {k} ({})", how(k))?;
    }
    Ok(())
}

/// An approval's lines (unless `show` is false: they were shown before
/// the question) and its summary: `VERB by WHO (TALLY): DONE`. Shared by
/// `pin`, `review` and `deny`, whose counts are one [`Tally`].
pub(crate) fn write_summary(
    o: &mut dyn Write,
    lines: &[String],
    show: bool,
    verb: &str,
    who: &str,
    done: &Written,
) -> std::io::Result<()> {
    if show {
        write_lines(lines, o)?;
    }
    writeln!(
        o,
        "{verb} by {} ({}): {done}",
        escape_display(who),
        Tally::of(lines)
    )
}

fn write_lines(lines: &[String], o: &mut dyn Write) -> std::io::Result<()> {
    for l in lines {
        writeln!(o, "{l}")?;
    }
    Ok(())
}

/// Asks on `err` whether to approve what `tally` counts; yes only for `y`
/// or `yes` read from `input`.
fn confirm(input: &mut dyn BufRead, err: &mut dyn Write, tally: Tally) -> Result<bool> {
    write!(err, "approve these changes ({tally})? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    input.read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The findings an approval of `actions` must accept (high or critical,
/// of a [`Class::GATED`] class, on an entry it changes), split into
/// those of the `accept`ed classes and the rest. An entry pinned and
/// unchanged is not approved again, so its findings are not asked about;
/// a launch approved brings its server's transport findings. Both sorted.
pub(crate) fn gate(
    mut found: Vec<Finding>,
    actions: &[Action],
    accept: &[Class],
) -> (Vec<Finding>, Vec<Finding>) {
    Finding::sort(&mut found);
    let changes = |f: &Finding| {
        actions.iter().any(|a| match a {
            Action::Pin(s, t, _) => *s == f.server && *t == f.tool,
            Action::Launch(s, ..) => {
                *s == f.server && f.tool.is_none() && f.class == Class::Transport
            }
            Action::Remove(..) => false,
        })
    };
    found
        .into_iter()
        .filter(|f| f.severity >= Severity::High && Class::GATED.contains(&f.class))
        .filter(changes)
        .partition(|f| accept.contains(&f.class))
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

/// Where an approval went: written to the lock, or also committed.
pub enum Written {
    /// Only the lock file was written (`--no-commit`, or no work tree).
    File(std::path::PathBuf),
    /// The lock was written and committed: the commit, the lock's path
    /// in the work tree, and how many inventory files the commit changed
    /// with it.
    Commit(gix::ObjectId, std::path::PathBuf, usize),
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Written::File(p) => write!(f, "wrote {}", crate::text::shown_path(p)),
            Written::Commit(id, rel, inventory) => write!(
                f,
                "committed {} ({}{})",
                id.to_hex_with_len(12),
                crate::text::shown_path(rel),
                match inventory {
                    0 => String::new(),
                    1 => " and 1 inventory file".to_string(),
                    n => format!(" and {n} inventory files"),
                }
            ),
        }
    }
}

/// Writes an approved `lock` under `guard` and, in a work tree unless
/// `no_commit`, commits it alone with `message` (which carries the
/// sign-off). Shared by `pin` and `import` so that every approval reaches
/// git the same way.
pub fn write_approval(
    env: &Env,
    guard: Guard,
    lock: &Lock,
    path: &Path,
    no_commit: bool,
    message: &str,
    reviewed: &Reviewed,
) -> Result<Written> {
    let commit_in = if no_commit {
        None
    } else {
        commit_target(env, path)
    };
    let Some((repo, rel)) = commit_in else {
        guard.commit(lock)?;
        return Ok(Written::File(path.to_path_buf()));
    };
    // Everything that can refuse runs before kams.lock is touched: the
    // index claim, the identity, the user's commit-msg hook.
    let claim = crate::git::commit::IndexClaim::acquire(repo)?;
    if repo.committer().is_none() {
        bail!(
            "no committer identity: set git config user.name and user.email (or pass --no-commit)"
        );
    }
    let message = crate::git::commit::run_commit_msg_hook(repo, message)?;
    let inventory_changed = inventory_not_committed(env, reviewed)?.len();
    guard.commit(lock)?;
    let mut rels = vec![rel.clone()];
    rels.extend(reviewed_in_tree(env, reviewed.files()));
    let removed = match reviewed {
        Reviewed::Whole(_) => removed_inventory(env, repo)?,
        Reviewed::Files(_) => Vec::new(),
    };
    let id =
        crate::git::commit::commit_files(repo, claim, &rels, &removed, &message).map_err(|e| {
            anyhow::anyhow!(
                "{e:#}; {} was written but not committed: commit it with `git commit -s {}`",
                crate::text::shown_path(path),
                rel.display()
            )
        })?;
    Ok(Written::Commit(id, rel, inventory_changed))
}

/// The inventory files an approval was made from, as paths in the work
/// tree: they go into the approval commit with the lock, since the hooks
/// compare the committed inventory with the committed lock. Files outside
/// the work tree, and anything that is not a regular file, stay out.
fn reviewed_in_tree(env: &Env, reviewed: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = reviewed
        .iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .filter_map(|p| env.repo.relative(p).ok())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What an approval reviewed of the inventory, and so what of it goes into
/// the approval commit.
pub enum Reviewed {
    /// The files of the approved servers (a server of a multi-server file
    /// brings the whole file); nothing is removed.
    Files(Vec<PathBuf>),
    /// The whole inventory (a `pin` of everything): every file, and the
    /// committed inventory files the work tree no longer has are removed.
    Whole(Vec<PathBuf>),
}

impl Reviewed {
    fn files(&self) -> &[PathBuf] {
        match self {
            Reviewed::Files(f) | Reviewed::Whole(f) => f,
        }
    }
}

/// The inventory files that hold `servers`.
pub(crate) fn files_of(inventory: &Inventory, servers: &[String]) -> Vec<PathBuf> {
    servers
        .iter()
        .filter_map(|s| inventory.servers.get(s).map(|s| s.source.clone()))
        .collect()
}

/// The paths in the work tree of the `reviewed` inventory files whose
/// content differs from HEAD's (or that HEAD lacks), and of those HEAD has
/// that the work tree no longer has (for the whole inventory).
pub(crate) fn inventory_not_committed(env: &Env, reviewed: &Reviewed) -> Result<Vec<PathBuf>> {
    let Some(repo) = env.repo.gix() else {
        return Ok(Vec::new());
    };
    if env.repo.workdir.is_none() {
        return Ok(Vec::new());
    }
    let head = env.repo.commit_of("HEAD").ok();
    let mut out = Vec::new();
    for rel in reviewed_in_tree(env, reviewed.files()) {
        let on_disk = env.repo.workdir.as_ref().map(|t| t.join(&rel));
        let now = on_disk.and_then(|p| {
            crate::files::read_existing(&p, crate::lock::store::MAX_LOCK_SIZE)
                .ok()
                .flatten()
        });
        let committed = head.and_then(|h| env.repo.blob_at(h, &rel).ok().flatten());
        if now.is_some() && committed.map(|(_, b)| b) != now {
            out.push(rel);
        }
    }
    if matches!(reviewed, Reviewed::Whole(_)) {
        out.extend(removed_inventory(env, repo)?);
    }
    Ok(out)
}

/// The inventory files committed at HEAD that the work tree no longer has.
fn removed_inventory(env: &Env, repo: &gix::Repository) -> Result<Vec<PathBuf>> {
    let (Ok(head), Some(top)) = (repo.head_id(), env.repo.workdir.as_ref()) else {
        return Ok(Vec::new());
    };
    let (_, opts) = env.inventory_spec(true)?;
    let mut out = Vec::new();
    for rel in env.inventory_relative()? {
        let Some(files) = crate::git::inventory_files_at(repo, head.detach(), &rel, opts.max_size)?
        else {
            continue;
        };
        for (path, _) in files {
            if std::fs::symlink_metadata(top.join(&path)).is_err() {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// The lock's path in the work tree when its content differs from HEAD's
/// (or HEAD has none), so that a pin that was stopped between writing the
/// lock and committing it does not go unnoticed.
fn uncommitted_lock(env: &Env, path: &std::path::Path) -> Option<std::path::PathBuf> {
    let (_, rel) = commit_target(env, path)?;
    let on_disk = crate::files::read_existing(path, crate::lock::store::MAX_LOCK_SIZE)
        .ok()
        .flatten()?;
    let head = env.repo.commit_of("HEAD").ok();
    let committed = head.and_then(|h| env.repo.blob_at(h, &rel).ok().flatten());
    match committed {
        Some((_, bytes)) if bytes == on_disk => None,
        _ => Some(rel),
    }
}

/// The repository and the lock's path in it, when the approval should be
/// committed: in a work tree, with the lock inside it.
fn commit_target<'a>(
    env: &'a Env,
    path: &Path,
) -> Option<(&'a gix::Repository, std::path::PathBuf)> {
    let repo = env.repo.gix()?;
    repo.workdir()?;
    let rel = env.repo.relative(path).ok()?;
    Some((repo, rel))
}

/// The approval commit's message: what was approved, the note, and the
/// approver's sign-off.
pub(crate) fn approval_message(note: &str, who: &str, lines: &[String]) -> String {
    fn subject_of(line: &str) -> Option<&str> {
        line.split_whitespace().nth(1)
    }
    // Denials (from `review`) are named after the approvals.
    let (denials, approvals): (Vec<&String>, Vec<&String>) = lines
        .iter()
        .filter(|l| !l.starts_with(ACCEPTED))
        .partition(|l| l.starts_with(DENIED));
    let denied = match denials.as_slice() {
        [] => String::new(),
        [one] => subject_of(one).unwrap_or_default().to_string(),
        many => format!("{} entries", many.len()),
    };
    if approvals.is_empty() {
        return commit_message(&format!("kams: deny {denied}"), note, who, lines);
    }
    let (launches, entries): (Vec<&String>, Vec<&String>) =
        approvals.into_iter().partition(|l| l.starts_with(LAUNCH));
    let subjects: Vec<&str> = entries.iter().filter_map(|l| subject_of(l)).collect();
    // The launch and acceptance lines are in the body; the subject counts
    // entries.
    let subject = match subjects.as_slice() {
        [] => format!(
            "kams: approve the launch of {}",
            launches
                .iter()
                .filter_map(|l| subject_of(l))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [one] => format!("kams: approve {one}"),
        many => {
            let mut servers: Vec<&str> = many
                .iter()
                .map(|s| s.split('/').next().unwrap_or(s))
                .collect();
            servers.dedup();
            // Counted as the summary line counts them (see [`Tally`]).
            let launches = match launches.len() {
                0 => String::new(),
                1 => " and 1 launch".to_string(),
                n => format!(" and {n} launches"),
            };
            format!(
                "kams: approve {} entries{launches} of {}",
                many.len(),
                servers.join(", ")
            )
        }
    };
    let subject = if denied.is_empty() {
        subject
    } else {
        format!("{subject}, deny {denied}")
    };
    commit_message(&subject, note, who, lines)
}

/// What one approval did, counted from its lines, so that the summary
/// line, the commit's subject and the question agree: entries (pinned,
/// re-pinned, removed), launches, denials and accepted findings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub entries: usize,
    pub launches: usize,
    pub denials: usize,
    pub accepted: usize,
}

impl Tally {
    /// The counts of an approval's `lines`.
    pub(crate) fn of(lines: &[String]) -> Tally {
        let mut t = Tally::default();
        for l in lines {
            if l.starts_with(ACCEPTED) {
                t.accepted += 1;
            } else if l.starts_with(LAUNCH) {
                t.launches += 1;
            } else if l.starts_with(DENIED) {
                t.denials += 1;
            } else if !l.starts_with("inventory ") {
                t.entries += 1;
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    /// `12 entries, 1 launch, 1 denial, 2 findings accepted`, the zeros left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, one: &str, many: &str| {
            (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
        };
        let parts: Vec<String> = [
            plural(self.entries, "entry", "entries"),
            plural(self.launches, "launch", "launches"),
            plural(self.denials, "denial", "denials"),
            plural(self.accepted, "finding accepted", "findings accepted"),
        ]
        .into_iter()
        .flatten()
        .collect();
        f.write_str(&parts.join(", "))
    }
}

/// Starts the line of a denial (what [`super::deny::deny_entry`] says).
const DENIED: &str = "denied    ";

/// An approval commit's message: the subject, the note, one line per
/// change, and the approver's sign-off (what the hooks check).
///
/// `git log` prints a message raw, so nothing in it may drive a terminal
/// or hide text: the note (the user's `-m`, which may span lines) is
/// escaped line by line as every output is, and whatever a caller left
/// in the other parts (names are escaped where the lines are made) has
/// its concealing characters escaped here. Nor may a note or a name end
/// a paragraph early and forge a trailer: only the last line is one.
pub fn commit_message(subject: &str, note: &str, who: &str, lines: &[String]) -> String {
    let mut m = format!("{}\n\n", unconcealed(subject));
    if !note.trim().is_empty() {
        let note: Vec<String> = note.trim().lines().map(escape_display).collect();
        m.push_str(&note.join("\n"));
        m.push_str("\n\n");
    }
    for l in lines {
        m.push_str(&unconcealed(l));
        m.push('\n');
    }
    m.push_str(&format!("\nSigned-off-by: {}\n", unconcealed(who)));
    m
}

/// `s` with its concealing characters (controls, line breaks included)
/// escaped and the rest as it is: idempotent on text [`escape_display`]
/// already made.
fn unconcealed(s: &str) -> String {
    if !crate::text::has_concealing(s) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if crate::text::is_concealing(c) {
                format!("\\u{{{:X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(class: Class, severity: Severity, server: &str, tool: Option<&str>) -> Finding {
        Finding {
            class,
            severity,
            server: server.into(),
            tool: tool.map(str::to_string),
            field: None,
            message: "m".into(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn the_gate_asks_about_what_changes_at_high_and_above() {
        use Class::*;
        use Severity::*;
        let actions = vec![
            Action::Pin("a".into(), Some("t".into()), None),
            Action::Launch("b".into(), None, Value::Null),
        ];
        let found = vec![
            finding(Poison, Critical, "a", Some("t")),
            finding(Hidden, High, "a", Some("t")),
            // Not at high, not a gated class, not changed.
            finding(Poison, Medium, "a", Some("t")),
            finding(Drift, Critical, "a", Some("t")),
            finding(Poison, Critical, "a", Some("u")),
            finding(Transport, High, "a", None),
            // A launch brings its server's transport findings only.
            finding(Transport, High, "b", None),
            finding(Poison, High, "b", None),
            finding(Shadow, High, "c", None),
        ];
        let (accepted, refused) = gate(found.clone(), &actions, &[Hidden, Transport]);
        assert_eq!(accepted, vec![found[1].clone(), found[6].clone()]);
        assert_eq!(refused, vec![found[0].clone()]);
        // The server entry pinned: its findings of every gated class.
        let server = vec![Action::Pin("b".into(), None, None)];
        let (accepted, refused) = gate(found.clone(), &server, &[]);
        assert!(accepted.is_empty());
        assert_eq!(refused, vec![found[7].clone(), found[6].clone()]);
    }

    #[test]
    fn only_yes_confirms() {
        for (answer, yes) in [
            ("y\n", true),
            ("YES\n", true),
            (" y \n", true),
            ("\n", false),
            ("n\n", false),
            ("", false),
            ("yep\n", false),
        ] {
            let mut err = Vec::new();
            assert_eq!(
                confirm(
                    &mut answer.as_bytes(),
                    &mut err,
                    Tally {
                        entries: 2,
                        launches: 1,
                        ..Tally::default()
                    }
                )
                .unwrap(),
                yes,
                "{answer:?}"
            );
            assert_eq!(
                String::from_utf8(err).unwrap(),
                "approve these changes (2 entries, 1 launch)? [y/N] "
            );
        }
    }
}
