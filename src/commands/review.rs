//! `git kams review`: what differs from the lock, one entry at a time, the
//! way `git add -p` stages hunks. Each entry `pin` would change (a new
//! tool, a drifted one, one no longer advertised, a server's launch) gets
//! one screen ([`crate::report::entry`]) and a prompt; what the reviewer
//! approved becomes one approval commit at the end, made by the function
//! `pin` makes its own with ([`pin::approve`]), each entry with its note.

use std::io::{BufRead, Write};
use std::sync::Arc;

use anyhow::{bail, Result};

use super::pin::{self, Action, Plan, Reviewed};
use super::{emit, Env, Selection, Status};
use crate::cli::{ReviewArgs, SelectArgs};
use crate::compare::pairs;
use crate::files::lock::Guard;
use crate::finding::{Class, Finding};
use crate::git::message::Acceptance;
use crate::inventory::Inventory;
use crate::lock::{Lock, State};
use crate::report::entry::{self, Field, Locked, Screen};
use crate::text::escape_display;

/// The keys of the prompt, as `?` explains them.
const HELP: &str = "\
a [NOTE] - approve this entry; NOTE, if given, is its note instead of the default
s - skip: leave it as it is in the lock
d [NOTE] - deny it: the lock records the refusal, and the hooks refuse it while it is advertised
b - go back to the previous entry
q - quit: keep the decisions made so far, leave this entry and the rest as they are
? - print help
";

/// The state of a provisional entry the inventory shows unchanged.
const UNAPPROVED: &str = "recorded, not approved";

/// The state of a denied entry the inventory shows unchanged (reviewed
/// only when named).
const DENIED: &str = "denied";

/// What the reviewer decided for one entry.
#[derive(Clone)]
enum Decision {
    /// Approved, with its own note or (`None`) the default one.
    Approve(Option<Arc<str>>),
    /// Left as it is.
    Skip,
    /// Denied, with its own note or (`None`) the default one.
    Deny(Option<Arc<str>>),
}

/// Runs `review`: reads keys from `input`, which must be a terminal.
pub fn run(
    env: &Env,
    args: &ReviewArgs,
    input: &mut dyn BufRead,
    terminal: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    if env.plain_format("review")? != super::PlainFormat::Text {
        bail!("--format json: review is for a person at a terminal; a program reads the same changes from `git kams scan --format json`");
    }
    let who = pin::approver(env, args.commit.approver.as_deref())?;
    let select = SelectArgs {
        keys: args.keys.clone(),
        at: None,
        inventory_at: None,
    };
    // Once, up front: every screen shows its entry's findings.
    let findings = super::scan::findings(env, &select, None, err)?.findings;
    let inventory = env.inventory()?;
    let path = env.lock_path()?;
    let lock = crate::files::lock::read(&path)?.unwrap_or_default();
    let selection = Selection::new(&args.keys);
    let all = pairs(&inventory, &lock);
    selection.check(&all)?;
    let (actions, kept_denied) = pin::plan(&inventory, &all, &args.keys)?;
    drop(all);
    emit(out, |o| {
        pin::write_kept_denied(o, &kept_denied, |k| {
            format!("name it, `git kams review {k}`, to review it again")
        })
    })?;
    if actions.is_empty() {
        // Approved, but from an inventory that is not committed as it is:
        // the hooks compare the committed one, and pin commits it.
        let reviewed = if args.keys.is_empty() {
            let every: Vec<String> = inventory.servers.keys().cloned().collect();
            Reviewed::Whole(pin::files_of(&inventory, &every))
        } else {
            let named: Vec<String> = inventory
                .servers
                .keys()
                .filter(|s| {
                    args.keys
                        .iter()
                        .any(|k| k.split('/').next() == Some(s.as_str()))
                })
                .cloned()
                .collect();
            Reviewed::Files(pin::files_of(&inventory, &named))
        };
        let stale = match args.commit.commit() {
            pin::Commit::Make => pin::inventory_not_committed(env, &reviewed)?,
            pin::Commit::Skip => Vec::new(),
        };
        emit(out, |o| {
            writeln!(
                o,
                "nothing to review: every selected entry matches the lock"
            )?;
            if !stale.is_empty() {
                let keys: Vec<String> = args
                    .keys
                    .iter()
                    .map(|k| format!(" {}", crate::text::escape_display(k)))
                    .collect();
                writeln!(
                    o,
                    "note: the inventory they were approved from is not committed as it is ({} file{}): `git kams pin{} -m NOTE` commits it, since the hooks compare the committed inventory",
                    stale.len(),
                    if stale.len() == 1 { "" } else { "s" },
                    keys.concat()
                )?;
            }
            Ok(())
        })?;
        return Ok(0);
    }
    if !terminal {
        bail!("{}", instead(&actions, &findings));
    }
    let default_note: Arc<str> = match &args.note {
        Some(n) => n.as_str().into(),
        None => {
            emit(out, |o| {
                write!(
                    o,
                    "note for the approvals (Enter for none; a note typed after `a` replaces it for that entry): "
                )
            })?;
            read_line(input)?.unwrap_or_default().trim().into()
        }
    };
    let decisions = prompt(&actions, &inventory, &lock, &findings, input, out)?;
    let decided = decisions
        .iter()
        .filter(|d| matches!(d, Some(Decision::Approve(_) | Decision::Deny(_))))
        .count();
    let left: Vec<String> = actions
        .iter()
        .zip(&decisions)
        .filter(|(_, d)| !matches!(d, Some(Decision::Approve(_) | Decision::Deny(_))))
        .map(|(a, _)| escape_display(&subject(a)))
        .collect();
    if decided == 0 {
        emit(out, |o| {
            writeln!(o, "nothing approved or denied: kams.lock is unchanged")
        })?;
        return Ok(0);
    }
    let reviewed_all = args.keys.is_empty() && left.is_empty();
    let shown: Vec<String> = actions.iter().map(|a| fingerprint(a, &inventory)).collect();
    drop((inventory, lock));

    // What was reviewed must be what is approved: the lock and the
    // inventory are read again under the lock's claim, and compared.
    let guard = Guard::acquire(&path)?;
    if let Some(note) = guard.recovered() {
        emit(out, |o| writeln!(o, "note: {note}"))?;
    }
    let lock = guard.read()?.unwrap_or_default();
    let inventory = env.inventory()?;
    let all = pairs(&inventory, &lock);
    let (again, _) = pin::plan(&inventory, &all, &args.keys)?;
    let renames = pin::renamed_by(&all, &again);
    drop(all);
    if again.iter().map(|a| fingerprint(a, &inventory)).ne(shown) {
        bail!(
            "the inventory or {} changed while you reviewed: nothing was written; run `git kams review` again",
            crate::text::shown_path(&path)
        );
    }
    let mut notes = Vec::new();
    let mut servers = Vec::new();
    let (mut decided, mut denied) = (Vec::new(), Vec::new());
    for (action, decision) in again.into_iter().zip(decisions) {
        let (Some(Decision::Approve(own)) | Some(Decision::Deny(own))) = &decision else {
            continue;
        };
        if let Some(n) = own {
            notes.push(format!("{}: {n}", subject(&action)));
        }
        let note = own.clone().unwrap_or_else(|| default_note.clone());
        servers.push(server(&action).to_string());
        match (decision, action) {
            (Some(Decision::Deny(_)), Action::Pin(s, t, _) | Action::Remove(s, t, _)) => {
                denied.push((s, t, note))
            }
            (_, action) => decided.push((action, note)),
        }
    }
    let denied_any = !denied.is_empty();
    let reviewed = if reviewed_all {
        let every: Vec<String> = inventory.servers.keys().cloned().collect();
        Reviewed::Whole(pin::files_of(&inventory, &every))
    } else {
        Reviewed::Files(pin::files_of(&inventory, &servers))
    };
    // The commit's note: the default one, then each entry's own.
    let mut note = default_note.to_string();
    if !notes.is_empty() {
        if !note.is_empty() {
            note.push_str("\n\n");
        }
        note.push_str(&notes.join("\n"));
    }
    // The reviewer saw every finding on each entry approved: the high and
    // critical ones are recorded as accepted, as `pin --accept-findings`
    // records them.
    let (actions, notes): (Vec<Action>, Vec<Arc<str>>) = decided.into_iter().unzip();
    let (accepted, _) = pin::gate(findings, &actions, &Class::GATED);
    // A rename counts when both its halves were approved.
    let renamed = pin::approved_renames(renames, &actions);
    let plan = Plan {
        lock,
        inventory,
        decided: actions.into_iter().zip(notes).collect(),
        denied,
        renamed,
    };
    let (mut lock, mut lines) = pin::apply(plan, &who)?;
    lines.extend(accepted.iter().map(|f| Acceptance::of(f).line()));
    lock.tidy();
    let message = pin::approval_message(&note, &who, &lines);
    let done = pin::write_approval(
        env,
        guard,
        &lock,
        &path,
        args.commit.commit(),
        &message,
        &reviewed,
    )?;
    let verb = if denied_any { "reviewed" } else { "approved" };
    emit(out, |o| {
        pin::write_summary(o, &lines, pin::Lines::Print, verb, &who, &done)
    })?;
    if !left.is_empty() {
        emit(out, |o| {
            writeln!(o, "left as they are in the lock: {}", left.join(", "))
        })?;
    }
    super::enforce::refresh_after(env, out, err);
    Ok(0)
}

/// Shows each entry and asks for its key, until the last one is decided or
/// the reviewer quits; the decisions, `None` for an entry left undecided.
fn prompt(
    actions: &[Action],
    inventory: &Inventory,
    lock: &Lock,
    findings: &[Finding],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<Vec<Option<Decision>>> {
    let n = actions.len();
    let mut decisions: Vec<Option<Decision>> = vec![None; n];
    let mut i = 0;
    let mut show = true;
    while i < n {
        let (text, state) = screen(
            &actions[i],
            inventory,
            lock,
            findings,
            decisions[i].as_ref(),
        );
        if show {
            emit(out, |o| write!(o, "\n{text}\n"))?;
        }
        show = true;
        emit(out, |o| {
            write!(
                o,
                "({}/{n}) {} [a,s,d,b,q,?]? ",
                i + 1,
                question(&actions[i], state)
            )
        })?;
        // The end of the input (^D) quits, as in `git add -p`.
        let Some(line) = read_line(input)? else {
            emit(out, |o| writeln!(o))?;
            break;
        };
        let line = line.trim();
        let (key, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match key {
            "a" => {
                decisions[i] = Some(Decision::Approve((!rest.is_empty()).then(|| rest.into())));
                i += 1;
            }
            "s" => {
                decisions[i] = Some(Decision::Skip);
                i += 1;
            }
            // A launch has no denied state: what runs is the client
            // config's, so the fix is there.
            "d" if matches!(actions[i], Action::Launch(..)) => {
                emit(out, |o| {
                    writeln!(
                        o,
                        "a launch cannot be denied: skip it (s), and change the client config that names it"
                    )
                })?;
                show = false;
            }
            "d" => {
                decisions[i] = Some(Decision::Deny((!rest.is_empty()).then(|| rest.into())));
                i += 1;
            }
            "b" if i == 0 => {
                emit(out, |o| writeln!(o, "no previous entry"))?;
                show = false;
            }
            "b" => i -= 1,
            "q" => break,
            "?" => {
                emit(out, |o| write!(o, "{HELP}"))?;
                show = false;
            }
            other => {
                emit(out, |o| {
                    write!(o, "unknown key `{}`:\n{HELP}", escape_display(other))
                })?;
                show = false;
            }
        }
    }
    Ok(decisions)
}

/// One line of `input` without its line end; `None` at its end.
fn read_line(input: &mut dyn BufRead) -> Result<Option<String>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_string()))
}

/// The screen of `action`'s entry.
fn screen(
    action: &Action,
    inventory: &Inventory,
    lock: &Lock,
    findings: &[Finding],
    decided: Option<&Decision>,
) -> (String, &'static str) {
    let shown = subject(action);
    let (server, tool) = match action {
        Action::Pin(s, t, _) | Action::Remove(s, t, _) => (s.as_str(), t.as_deref()),
        Action::Launch(s, ..) => (s.as_str(), None),
    };
    let launch = matches!(action, Action::Launch(..));
    // A server's findings about how it is reached go with its launch;
    // when its launch is not reviewed, with its server entry.
    let about_launch =
        |f: &Finding| f.field.as_deref() == Some("/launch") || f.class == Class::Transport;
    let launch_reviewed = launch
        || inventory.servers.get(server).is_some_and(|s| {
            crate::config::launch_spec(&s.launch).is_some_and(|l| {
                lock.servers.get(server).and_then(|s| s.launch.as_ref()) != Some(&l)
            })
        });
    let on_it: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.server == server && f.tool.as_deref() == tool)
        .filter(|f| tool.is_some() || !launch_reviewed || about_launch(f) == launch)
        .collect();
    let locked_entry = lock.entry(server, tool);
    let locked = match locked_entry {
        None => Locked::Absent,
        Some(e) => match (&e.approval, e.state) {
            (Some(a), State::Pinned) => Locked::Pinned(a),
            (Some(a), State::Denied) => Locked::Denied(a),
            _ => Locked::Provisional(&e.first_seen),
        },
    };
    let seen = inventory.servers.get(server).and_then(|s| match tool {
        Some(t) => s.tools.get(t).map(|t| &t.descriptor),
        None => Some(&s.descriptor),
    });
    let names: &[&str] = if tool.is_some() {
        &crate::descriptor::TOOL_FIELDS
    } else {
        &crate::descriptor::SERVER_FIELDS
    };
    let (state, digests, fields) = match action {
        Action::Launch(_, old, new) => (
            if old.is_some() {
                "launch changed"
            } else {
                "new launch"
            },
            (None, None),
            vec![Field {
                name: "launch",
                old: old.as_ref(),
                new: Some(new),
            }],
        ),
        _ => {
            let old = locked_entry.map(|e| &e.descriptor);
            let state = match (old, seen) {
                (None, _) => "new",
                (Some(_), None) => "removed",
                (Some(o), Some(s))
                    if o.digest == s.digest && matches!(locked, Locked::Denied(_)) =>
                {
                    DENIED
                }
                (Some(o), Some(s)) if o.digest == s.digest => UNAPPROVED,
                (Some(_), Some(_)) => "drifted",
            };
            let fields = names
                .iter()
                .map(|&name| Field {
                    name,
                    old: old.and_then(|d| d.get(name)),
                    new: seen.and_then(|d| d.get(name)),
                })
                .filter(|f| f.old != f.new)
                .collect();
            (
                state,
                (
                    old.map(|d| d.digest.to_string()),
                    seen.map(|d| d.digest.to_string()),
                ),
                fields,
            )
        }
    };
    let text = entry::render(&Screen {
        subject: &shown,
        state,
        locked: match action {
            // Who approved the launch the lock records (locks of version 1
            // do not say: `git kams log` does).
            Action::Launch(_, old, _) => match lock
                .servers
                .get(server)
                .and_then(|s| s.launch_approval.as_deref())
            {
                Some(a) if old.is_some() => Locked::Pinned(a),
                _ => Locked::Launch(old.is_some()),
            },
            _ => locked,
        },
        digests,
        fields,
        findings: on_it,
        decided: decided.map(|d| match d {
            Decision::Approve(None) => "approve".to_string(),
            Decision::Approve(Some(n)) => format!("approve, note \"{}\"", escape_display(n)),
            Decision::Skip => "skip".to_string(),
            Decision::Deny(None) => "deny".to_string(),
            Decision::Deny(Some(n)) => format!("deny, note \"{}\"", escape_display(n)),
        }),
    });
    (text, state)
}

/// The question of the prompt for `action`, whose entry is in `state`.
fn question(action: &Action, state: &str) -> &'static str {
    match action {
        Action::Pin(_, _, None) => "approve this new entry",
        Action::Pin(..) if state == UNAPPROVED || state == DENIED => "approve this entry",
        Action::Pin(..) => "approve this change",
        Action::Remove(..) => "approve this removal",
        Action::Launch(..) => "approve this launch",
    }
}

/// The server an action changes.
fn server(action: &Action) -> &str {
    match action {
        Action::Pin(s, ..) | Action::Remove(s, ..) | Action::Launch(s, ..) => s,
    }
}

/// `server`, `server/tool`, or `server (launch)`.
fn subject(action: &Action) -> String {
    match action {
        Action::Pin(s, t, _) | Action::Remove(s, t, _) => match t {
            Some(t) => format!("{s}/{t}"),
            None => s.clone(),
        },
        Action::Launch(s, ..) => format!("{s} (launch)"),
    }
}

/// What an action approves, to tell whether the inventory or the lock
/// changed during the review: the subject, what the inventory shows of it
/// and what the lock had.
fn fingerprint(action: &Action, inventory: &Inventory) -> String {
    let digest = |d: Option<&crate::descriptor::Descriptor>| d.map(|d| d.digest.to_string());
    match action {
        Action::Pin(s, t, old) => {
            let seen = inventory.servers.get(s).and_then(|srv| match t {
                Some(t) => srv.tools.get(t).map(|t| &t.descriptor),
                None => Some(&srv.descriptor),
            });
            format!(
                "pin {s:?} {t:?} {:?} {:?}",
                digest(seen),
                digest(old.as_ref().map(|e| &e.descriptor))
            )
        }
        Action::Remove(s, t, old) => format!("remove {s:?} {t:?} {}", old.descriptor.digest),
        Action::Launch(s, old, new) => format!(
            "launch {s:?} {:?} {}",
            old.as_ref().map(crate::canon::jcs_string),
            crate::canon::jcs_string(new)
        ),
    }
}

/// The error without a terminal: the `pin` commands that approve the same
/// entries, one per entry, each accepting the findings `pin` would refuse
/// it for (which review shows on its screen).
fn instead(actions: &[Action], findings: &[Finding]) -> String {
    let (_, refused) = pin::gate(findings.to_vec(), actions, &[]);
    let mut gated: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for f in &refused {
        let classes = gated.entry(f.subject()).or_default();
        if !classes.contains(&f.class.as_str()) {
            classes.push(f.class.as_str());
        }
    }
    let mut keys: Vec<(String, bool)> = Vec::new();
    for a in actions {
        let (key, server) = match a {
            Action::Pin(s, Some(t), _) | Action::Remove(s, Some(t), _) => {
                (format!("{s}/{t}"), false)
            }
            Action::Pin(s, None, _) | Action::Remove(s, None, _) | Action::Launch(s, ..) => {
                (s.clone(), true)
            }
        };
        if !keys.iter().any(|(k, _)| *k == key) {
            keys.push((key, server));
        }
    }
    let lines: Vec<String> = keys
        .iter()
        .map(|(k, server)| {
            format!(
                "  git kams pin {} -m NOTE{}{}",
                quoted(k),
                gated
                    .get(k)
                    .map(|c| format!(" --accept-findings={}", c.join(",")))
                    .unwrap_or_default(),
                if *server {
                    "   # the server: its launch, its server entry and every tool"
                } else {
                    ""
                }
            )
        })
        .collect();
    format!(
        "review reads a key per entry from a terminal, and stdin is not one; approve without it, entry by entry:\n{}\n(or refuse one: git kams deny SERVER/TOOL -m NOTE)",
        lines.join("\n")
    )
}

/// `key` as one shell word, shown escaped.
fn quoted(key: &str) -> String {
    let shown = escape_display(key);
    if shown
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./@:+,=".contains(c))
    {
        shown
    } else {
        format!("'{}'", shown.replace('\'', r"'\''"))
    }
}
