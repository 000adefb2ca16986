//! `git kams pin`: approve what the inventory shows now. Selected entries
//! take the advertised descriptors and become pinned with the approver,
//! the time and the note; entries the inventory no longer shows are
//! removed from the lock. Pinned entries whose descriptor did not change
//! keep their original approval, so history names who really reviewed them.
//! Pinning a whole server also records its current launch.
//!
//! An approval is made knowing what it approves: the high and critical
//! findings of the classes that say what a text or a launch would do
//! ([`Class::GATED`](crate::finding::Class::GATED)) on the entries it
//! changes are printed, and refuse the pin unless `--accept-findings`
//! accepts them; the commit records each one accepted, for `log` to show.
//!
//! Every approval (`pin`, `review`, `deny`, `import`) is made with the
//! pieces here, one room each: [`plan()`] decides the actions, [`gate()`]
//! the findings to accept, [`apply()`] writes them into the lock,
//! `summary` and `message` say what was done, and [`write_approval`]
//! commits it. This file is the `pin` command that drives them.

mod apply;
mod commit;
mod gate;
mod message;
mod plan;
mod summary;

use std::io::{BufRead, Write};

use anyhow::{bail, Result};

pub(crate) use self::apply::{apply, Plan};
use self::commit::uncommitted_lock;
pub(crate) use self::commit::{files_of, inventory_not_committed};
pub use self::commit::{write_approval, Commit, Reviewed, Written};
pub(crate) use self::gate::gate;
pub(crate) use self::message::approval_message;
pub use self::message::commit_message;
pub(crate) use self::plan::{approved_renames, plan, renamed_by, Action};
pub(crate) use self::summary::{write_kept_denied, write_summary, Lines};
use self::summary::{write_lines, Tally};
use super::{emit, Env, Selection, Status};
use crate::cli::PinArgs;
use crate::compare::pairs;
use crate::files::lock::Guard;
use crate::git::message::Acceptance;
use crate::text::{escape_display, has_concealing};

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
    let who = approver(env, args.commit.approver.as_deref())?;
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
    if actions.is_empty() && args.commit.commit() == Commit::Make {
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
            let done =
                write_approval(env, guard, &lock, &path, Commit::Make, &message, &in_commit)?;
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
        let uncommitted = match args.commit.commit() {
            Commit::Make => uncommitted_lock(env, &path),
            Commit::Skip => None,
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
    let show = if ask { Lines::Printed } else { Lines::Print };
    let message = approval_message(&args.note, &who, &lines);
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
        write_summary(o, &lines, show, "approved", &who, &done)
    })?;
    super::enforce::refresh_after(env, out, err);
    Ok(0)
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

#[cfg(test)]
mod tests {
    use super::*;

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
