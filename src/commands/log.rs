//! `git kams log`: the approval history. The commits that changed the
//! lock's entries, newest first, each with who signed it off, whether its
//! signature is verified, and what it did in lock terms (pinned, re-pinned and which
//! fields, recorded, re-approved, unpinned, removed). How commits are
//! chosen is in `docs/history.md`.

use std::collections::VecDeque;
use std::io::Write;

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::{emit, Env, PlainFormat, Selection, Status};
use crate::cli::LogArgs;
use crate::git::history::{CommitInfo, Compared, History, LogChange, LogWalk, Step};
use crate::git::message::Acceptance;
use crate::git::signature::{self, Verdict};
use crate::report::document::{self, Displayed, Layout};
use crate::text::escape_display;

/// One listed commit.
struct Listed {
    info: CommitInfo,
    /// What its signature proves, checked now (never cached: it depends
    /// on the allowed signers and the keyring, not on the commit alone).
    verdict: Verdict,
    changes: Vec<LogChange>,
    /// The findings its approval accepted, of the selected entries.
    accepted: Vec<Acceptance>,
    error: Option<String>,
}

/// Runs `log`.
pub fn run(env: &Env, args: &LogArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Status> {
    let format = env.plain_format("log")?;
    let repo = env.repo.require("git kams log")?;
    let rel = env.lock_relative()?;
    let since = args
        .since
        .as_deref()
        .map(|s| parse_date("--since", s))
        .transpose()?;
    let until = args
        .until
        .as_deref()
        .map(|s| parse_date("--until", s))
        .transpose()?;
    // A commit's time against the limits: after --until, before --since.
    let too_new = |time: i64| until.is_some_and(|u| time > u);
    let too_old = |time: i64| since.is_some_and(|s| time < s);
    let selection = Selection::new(&args.keys);
    let mut notes = Vec::new();
    let mut listed = Vec::new();
    let verifier = env.verifier();
    let tip = match env.repo.commit_of(&args.at) {
        Ok(tip) => Some(tip),
        Err(_) if args.at == "HEAD" && repo.head().is_ok_and(|h| h.is_unborn()) => None,
        Err(e) => return Err(e),
    };
    match tip {
        None => notes.push(format!("no commits yet: {} has no history", rel.display())),
        Some(tip) => {
            let mut history = History::new(repo, &rel)?;
            if env.config_bool("kams.logCache", true)? {
                history.use_log_cache();
            }
            let mut walk = LogWalk::new(&mut history, tip)?;
            // The walk runs a few steps ahead, so that the lock versions
            // they compare are read on the other cores meanwhile.
            let mut ahead: VecDeque<Step> = VecDeque::new();
            let mut walked = false;
            while args.max_count.is_none_or(|n| listed.len() < n) {
                while !walked && ahead.len() < READ_AHEAD {
                    let Some(step) = walk.next(&mut history)? else {
                        walked = true;
                        break;
                    };
                    if let Step::Changed {
                        time,
                        before,
                        after,
                        ..
                    } = step
                    {
                        if !too_new(time) && !too_old(time) && history.compares(before, after) {
                            history.read_ahead(before, after);
                        }
                    }
                    ahead.push_back(step);
                }
                let Some(step) = ahead.pop_front() else {
                    break;
                };
                let (commit, time, parent, before, after) = match step {
                    Step::Boundary(id) => {
                        notes.push(format!("history is shallow: stops at {id}"));
                        continue;
                    }
                    Step::Changed {
                        commit,
                        time,
                        parent,
                        before,
                        after,
                    } => (commit, time, parent, before, after),
                };
                if too_new(time) {
                    continue;
                }
                // Newest first: everything after this is older still.
                if too_old(time) {
                    break;
                }
                let (changes, error) = match history.changes(before, after)? {
                    Compared::Changes(changes) => (
                        changes
                            .into_iter()
                            .filter(|c| selection.matches(&c.server, c.tool.as_deref()))
                            .collect(),
                        None,
                    ),
                    Compared::Unreadable {
                        at_parent: false,
                        message,
                    } => (
                        Vec::new(),
                        Some(format!("{} cannot be read here: {message}", rel.display())),
                    ),
                    Compared::Unreadable {
                        at_parent: true,
                        message,
                    } => (
                        Vec::new(),
                        Some(format!(
                            "{} cannot be read at the parent {}: {message}; what changed is unknown",
                            rel.display(),
                            parent.map(|p| p.to_string()).unwrap_or_default()
                        )),
                    ),
                };
                // A blob change with no entry change (re-indented, only
                // `first_seen` moved) is no approval: not listed.
                if changes.is_empty() && error.is_none() {
                    continue;
                }
                let info = history.commit_info(commit)?;
                let accepted = info
                    .accepted
                    .iter()
                    .filter_map(|l| Acceptance::parse(l))
                    .filter(|a| {
                        let (server, tool) = a.entry();
                        selection.matches(server, tool)
                    })
                    .collect();
                listed.push(Listed {
                    accepted,
                    verdict: signature::verdict_of(&verifier, repo, commit, info.signed)?,
                    info,
                    changes,
                    error,
                });
            }
            // The cache only saves time: a repository we may not write to
            // (read-only, someone else's) is no reason to fail.
            if let Err(e) = history.save_log_cache() {
                if env.global.verbose {
                    let _ = writeln!(err, "kams: the log cache was not written: {e}");
                }
            }
            if listed.is_empty() && notes.is_empty() {
                notes.push(format!(
                    "no commit reachable from {} changed {}{}{}",
                    args.at,
                    if args.keys.is_empty() {
                        ""
                    } else {
                        "the selected entries of "
                    },
                    rel.display(),
                    if since.is_some() || until.is_some() || args.max_count == Some(0) {
                        " within the given limits"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    emit(out, |o| match format {
        PlainFormat::Text => write_text(&listed, &notes, o),
        PlainFormat::Json => write_json(&listed, &notes, o),
    })?;
    Ok(0)
}

/// Steps the walk runs ahead of the listing (see [`History::read_ahead`]):
/// enough to keep two readers busy, few enough that `-n 1` reads little
/// more than it lists.
const READ_AHEAD: usize = 8;

/// A `--since` / `--until` value as seconds since the epoch: RFC 3339, or
/// anything git's date parser reads (`2026-01-31`, `2 weeks ago`...);
/// relative dates count back from `SOURCE_DATE_EPOCH` when it is set.
fn parse_date(flag: &str, s: &str) -> Result<i64> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s.trim()) {
        return Ok(t.timestamp());
    }
    let now = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v
            .trim()
            .parse::<i64>()
            .map_err(|_| anyhow!("SOURCE_DATE_EPOCH `{v}` is not a number of seconds"))?,
        Err(_) => chrono::Utc::now().timestamp(),
    };
    let now = gix::date::Time::new(now, 0).to_zoned().ok();
    gix::date::parse(s.trim(), now).map(|t| t.seconds).map_err(|e| {
        anyhow!(
            "{flag} `{}` is not a date ({e}); use e.g. 2026-01-31, 2026-01-31T12:00:00Z or \"2 weeks ago\"",
            escape_display(s)
        )
    })
}

/// [`escape_display`] without a copy for the common case, text with
/// nothing to escape (printable ASCII, no backslash).
fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'\\') {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(escape_display(s))
    }
}

fn write_text(listed: &[Listed], notes: &[String], o: &mut dyn Write) -> std::io::Result<()> {
    for (i, l) in listed.iter().enumerate() {
        if i > 0 {
            writeln!(o)?;
        }
        let info = &l.info;
        writeln!(o, "commit    {} {}", info.short, info.id)?;
        writeln!(o, "date      {}", info.date)?;
        writeln!(o, "author    {}", shown(&info.author))?;
        if info.sign_offs.is_empty() {
            writeln!(o, "approvers none (no Signed-off-by)")?;
        }
        for a in &info.sign_offs {
            match crate::git::parse_sign_off(a) {
                Ok(_) => writeln!(o, "approver  {}", shown(a))?,
                Err(why) => writeln!(
                    o,
                    "approver  {} (malformed: {why}; counts as nobody)",
                    shown(a)
                )?,
            }
        }
        writeln!(o, "signature {}", shown(&l.verdict.describe()))?;
        writeln!(o, "subject   {}", shown(&info.subject))?;
        if let Some(e) = &l.error {
            writeln!(o, "    error: {}", shown(e))?;
        }
        for a in &l.accepted {
            writeln!(o, "    {}", a.line())?;
        }
        for c in &l.changes {
            write!(o, "    {:<11} {}", c.kind.as_str(), shown(&c.subject()))?;
            if !c.fields.is_empty() {
                write!(o, "  fields: {}", c.fields.join(", "))?;
            }
            if let Some((approver, note)) = &c.approval {
                write!(o, "  approver: {}  note: {}", shown(approver), shown(note))?;
            }
            writeln!(o)?;
        }
    }
    if !listed.is_empty() && !notes.is_empty() {
        writeln!(o)?;
    }
    for n in notes {
        writeln!(o, "note: {}", shown(n))?;
    }
    Ok(())
}

/// `log --format json`, version 3: the commits a line each, then notes.
#[derive(Serialize)]
struct JsonLog<'a> {
    version: u32,
    commits: Vec<JsonCommit<'a>>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct JsonCommit<'a> {
    id: Displayed<gix::ObjectId>,
    date: &'a str,
    author: &'a str,
    /// The well-formed sign-offs; the others are `malformed_sign_offs`.
    approvers: Vec<&'a str>,
    malformed_sign_offs: Vec<&'a str>,
    signature: &'static str,
    signers: &'a [String],
    signature_problem: Option<&'a str>,
    subject: &'a str,
    accepted: Vec<JsonAccepted<'a>>,
    changes: Vec<JsonChange<'a>>,
    error: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonAccepted<'a> {
    severity: &'static str,
    class: &'static str,
    subject: &'a str,
    field: Option<&'a str>,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonChange<'a> {
    kind: &'static str,
    server: &'a str,
    tool: Option<&'a str>,
    fields: &'a [&'static str],
    approver: Option<&'a str>,
    note: Option<&'a str>,
}

fn write_json(listed: &[Listed], notes: &[String], o: &mut dyn Write) -> std::io::Result<()> {
    let log = JsonLog {
        version: 3,
        commits: listed.iter().map(json_commit).collect(),
        notes,
    };
    document::write(&log, Layout::rows(&["commits"]), o)
}

fn json_commit(l: &Listed) -> JsonCommit<'_> {
    let info = &l.info;
    let (approvers, malformed_sign_offs) = info
        .sign_offs
        .iter()
        .map(String::as_str)
        .partition(|a| crate::git::parse_sign_off(a).is_ok());
    JsonCommit {
        id: Displayed(info.id),
        date: &info.date,
        author: &info.author,
        approvers,
        malformed_sign_offs,
        signature: l.verdict.word(),
        signers: l.verdict.signers(),
        signature_problem: match &l.verdict {
            Verdict::Unverified(why) => Some(why.as_str()),
            _ => None,
        },
        subject: &info.subject,
        accepted: l
            .accepted
            .iter()
            .map(|a| JsonAccepted {
                severity: a.severity.as_str(),
                class: a.class.as_str(),
                subject: &a.subject,
                field: a.field.as_deref(),
                message: &a.message,
            })
            .collect(),
        changes: l
            .changes
            .iter()
            .map(|c| JsonChange {
                kind: c.kind.as_str(),
                server: &c.server,
                tool: c.tool.as_deref(),
                fields: &c.fields,
                approver: c.approval.as_ref().map(|a| a.0.as_str()),
                note: c.approval.as_ref().map(|a| a.1.as_str()),
            })
            .collect(),
        error: l.error.as_deref(),
    }
}
