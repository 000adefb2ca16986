//! `git kams hook pre-push|pre-receive`: the gates that keep unapproved
//! drift from leaving a machine or landing in the shared repository.
//!
//! For every ref a push updates, three rules:
//! - **drift**: at the pushed tip, the committed inventory has no entry the
//!   lock at that tip does not approve (a new tool, a pinned one whose
//!   digest moved, a provisional one);
//! - **sign-off**: every commit the push brings that approves something in
//!   the lock (pins, re-pins, re-approves, unpins, removes) carries a
//!   `Signed-off-by` trailer, of an approver when `kams.approvers` is set,
//!   and a signature when `kams.requireSigned` is true;
//! - **enforce**: where the tip has the record of the clients' deny rules
//!   `enforce` wrote, the rules committed there are up to date with the
//!   lock there.
//!
//! The server side runs the same rules, so `git push --no-verify` does not
//! get around them.

mod report;

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use gix::ObjectId;
use serde::Serialize;

use super::{Env, Status, Tools};
use crate::cli::{HookArgs, HookKind};
use crate::compare;
use crate::finding::Class;
use crate::git::hooks::{self, CommitFacts, LockHistory, RefUpdate};
use crate::git::policy::{Policy, Shortfall};
use crate::inventory::ReadOptions;
use crate::text::escape_display;

/// Which side of the push runs the check.
#[derive(Clone, Debug)]
enum Side {
    /// The pushing repository; the remote's name (or URL) as git gives it.
    Push(Option<String>),
    /// The receiving (bare) repository.
    Receive,
}

/// A git boolean (`true`, `yes`, `on`, `1`, or a key with no value).
pub(crate) fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// The rule a problem breaks (named in kebab case in the JSON report:
/// `sign-off`, `not-a-commit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Rule {
    /// Unapproved drift at the pushed tip.
    Drift,
    /// A denied entry still advertised at the pushed tip.
    Denied,
    /// An approval commit without a `Signed-off-by` trailer.
    SignOff,
    /// An approval commit signed off by nobody in `kams.approvers`.
    Approver,
    /// An approval commit without a signature (`kams.requireSigned`).
    Signature,
    /// A ref that names a tree or a blob (directly or through tags): what
    /// it brings is no history the rules can judge.
    NotACommit,
    /// Clients' deny rules committed at the pushed tip that are out of
    /// date with the lock there (where `.kams/enforce.json` is committed).
    Enforce,
}

impl From<Shortfall> for Rule {
    fn from(s: Shortfall) -> Rule {
        match s {
            Shortfall::SignOff => Rule::SignOff,
            Shortfall::Approver => Rule::Approver,
            Shortfall::Signature => Rule::Signature,
        }
    }
}

/// One reason to refuse a ref.
struct Problem {
    ref_name: String,
    rules: Vec<Rule>,
    server: String,
    tool: Option<String>,
    commit: Option<ObjectId>,
    message: String,
    fix: String,
}

/// What the drift rule found at one tip, before it is told per ref.
#[derive(Clone)]
struct Unapproved {
    /// Drift, or denied.
    rule: Rule,
    server: String,
    tool: Option<String>,
    message: String,
}

/// The finding classes and drifted fields of one subject.
#[derive(Default)]
struct Seen(Vec<Class>, Vec<String>);

/// What the sign-off rule found in one commit.
#[derive(Clone)]
struct BadApproval {
    rules: Vec<Rule>,
    server: String,
    tool: Option<String>,
    message: String,
}

/// The run's state: caches shared by every ref, and what was found.
struct Check<'a> {
    repo: &'a gix::Repository,
    side: Side,
    policy: Policy,
    locks: LockHistory<'a>,
    inventory_rels: Vec<PathBuf>,
    opts: ReadOptions,
    tips: HashMap<ObjectId, Vec<Unapproved>>,
    commits: HashMap<ObjectId, (CommitFacts, Vec<BadApproval>)>,
    problems: Vec<Problem>,
    notes: Vec<String>,
    refs_checked: usize,
    commits_checked: usize,
}

/// Runs `hook`: reads git's hook input on stdin.
pub fn run(env: &Env, args: &HookArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Status> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read the hook's input from stdin")?;
    check(env, &args.hook, &input, out, err)
}

/// Checks the ref updates in `input` (git's hook input for `hook`).
pub fn check(
    env: &Env,
    hook: &HookKind,
    input: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    let format = env.plain_format("hook")?;
    let (side, updates, name) = match hook {
        HookKind::PrePush { remote, .. } => (
            Side::Push(remote.clone()),
            hooks::parse_pre_push(input)?,
            "pre-push",
        ),
        HookKind::PreReceive => (
            Side::Receive,
            hooks::parse_pre_receive(input)?,
            "pre-receive",
        ),
    };
    let repo = hooks::for_hook(env.repo.require(&format!("git kams hook {name}"))?)?;
    let mut notes = Vec::new();
    let policy = env.policy(&mut notes)?;
    let (_, opts) = env.inventory_spec(Tools::Digests)?;
    let lock_rel = env.lock_relative()?;
    let mut check = Check {
        repo: &repo,
        side,
        policy,
        locks: LockHistory::new(&repo, &lock_rel),
        inventory_rels: inventory_rels(env)?,
        opts,
        tips: HashMap::new(),
        commits: HashMap::new(),
        problems: Vec::new(),
        notes,
        refs_checked: 0,
        commits_checked: 0,
    };
    if repo.is_shallow().unwrap_or(false) {
        check
            .notes
            .push("this is a shallow clone: commits beyond its boundary are not checked".into());
    }
    for update in &updates {
        check.update(update)?;
    }
    report::report(format, name, &check, out, err)?;
    Ok(if check.problems.is_empty() { 0 } else { 1 })
}

/// The inventory's paths from the top of the tree, as `inventory_files_at` resolves them.
fn inventory_rels(env: &Env) -> Result<Vec<PathBuf>> {
    env.inventory_relative()
}

/// `server` or `server/tool`.
fn subject(server: &str, tool: Option<&str>) -> String {
    match tool {
        Some(t) => format!("{server}/{t}"),
        None => server.to_string(),
    }
}

fn short(id: ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// A word for a shell command line, quoted when it needs to be.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./@:+=,%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

impl Check<'_> {
    fn update(&mut self, u: &RefUpdate) -> Result<()> {
        let shown = escape_display(&u.name);
        if u.new.is_null() {
            // A deletion brings nothing.
            return Ok(());
        }
        let Some(tip) = hooks::peel_to_commit(self.repo, u.new)? else {
            // A tree or a blob carries a lock and an inventory no commit
            // approved: refused, not waved through unchecked.
            let kind = self
                .repo
                .find_object(u.new)
                .and_then(|o| Ok(o.peel_tags_to_end()?.kind))
                .map_or("object", |k| match k {
                    gix::object::Kind::Tree => "tree",
                    gix::object::Kind::Blob => "blob",
                    _ => "object",
                });
            self.refs_checked += 1;
            self.problems.push(Problem {
                ref_name: u.name.clone(),
                rules: vec![Rule::NotACommit],
                server: String::new(),
                tool: None,
                commit: None,
                message: format!(
                    "{} is a {kind}, not a commit (nor a tag of one): git-kams checks commits only, so it is refused",
                    short(u.new)
                ),
                fix: format!(
                    "push a commit (or a tag of one) to {}, or delete the ref",
                    u.name
                ),
            });
            return Ok(());
        };
        self.refs_checked += 1;
        self.drift_at(&u.name, tip)?;
        let hidden = self.hidden(u)?;
        let commits = hooks::commits_between(self.repo, tip, &hidden)?;
        if commits.is_empty() && u.old.is_null() {
            self.notes.push(format!(
                "{shown}: every commit it brings is already on another ref: only its tip is checked"
            ));
        }
        for id in commits {
            self.approvals_in(&u.name, id, tip)?;
        }
        Ok(())
    }

    /// What the other side already has, so that only what the push brings
    /// is judged: its old value of the ref when this repository knows it;
    /// else, for pre-push, the remote-tracking refs of the remote, and for
    /// pre-receive, every ref.
    fn hidden(&mut self, u: &RefUpdate) -> Result<Vec<ObjectId>> {
        if !u.old.is_null() && self.repo.has_object(u.old) {
            if let Some(old) = hooks::peel_to_commit(self.repo, u.old)? {
                return Ok(vec![old]);
            }
        }
        match &self.side {
            Side::Receive => {
                let mut tips = hooks::ref_tips(self.repo, "")?;
                // On a server the pushed ref does not name what is pushed
                // yet. When it does (the hook run in a clone, in CI, after
                // the fact), the refs at the pushed tip would hide every
                // commit it brings: they hide nothing.
                let Some(tip) = hooks::peel_to_commit(self.repo, u.new)? else {
                    return Ok(tips);
                };
                let named = self
                    .repo
                    .find_reference(u.name.as_str())
                    .ok()
                    .and_then(|mut r| r.peel_to_id().ok())
                    .map(|id| id.detach());
                let at_tip = match named {
                    Some(id) => hooks::peel_to_commit(self.repo, id)? == Some(tip),
                    None => false,
                };
                if at_tip {
                    tips.retain(|t| *t != tip);
                    self.notes.push(format!(
                        "{}: it already names the pushed commit here (not a server's pre-receive): the commits it brings are checked against the other refs",
                        escape_display(&u.name)
                    ));
                }
                Ok(tips)
            }
            Side::Push(remote) => {
                // `remote` is a URL when the push named no remote; it then
                // names no valid prefix, and nothing is hidden.
                let tips = match remote {
                    Some(r) => hooks::ref_tips(self.repo, &format!("refs/remotes/{r}/"))
                        .unwrap_or_default(),
                    None => Vec::new(),
                };
                if tips.is_empty() {
                    self.notes.push(format!(
                        "{}: the remote's refs are not known here: every commit reachable from it is checked",
                        escape_display(&u.name)
                    ));
                }
                Ok(tips)
            }
        }
    }

    /// The drift rule at `tip`.
    fn drift_at(&mut self, ref_name: &str, tip: ObjectId) -> Result<()> {
        if !self.tips.contains_key(&tip) {
            let found = self.unapproved_at(ref_name, tip)?;
            self.tips.insert(tip, found);
        }
        for u in &self.tips[&tip] {
            self.problems.push(Problem {
                ref_name: ref_name.to_string(),
                rules: vec![u.rule],
                server: u.server.clone(),
                tool: u.tool.clone(),
                commit: Some(tip),
                message: u.message.clone(),
                fix: match u.rule {
                    Rule::Enforce => "git kams enforce, and commit what it writes".to_string(),
                    _ => format!(
                        "git kams pin {} -m NOTE",
                        shell_word(&subject(&u.server, u.tool.as_deref()))
                    ),
                },
            });
        }
        Ok(())
    }

    fn unapproved_at(&mut self, ref_name: &str, tip: ObjectId) -> Result<Vec<Unapproved>> {
        let mut files = Vec::new();
        for rel in &self.inventory_rels {
            if let Some(found) =
                crate::git::inventory_files_at(self.repo, tip, rel, self.opts.max_size)?
            {
                for (p, bytes) in found {
                    files.push((
                        PathBuf::from(format!("{}:{}", short(tip), p.display())),
                        bytes,
                    ));
                }
            }
        }
        if files.is_empty() {
            let paths: Vec<String> = self
                .inventory_rels
                .iter()
                .map(|p| crate::text::shown_path(p))
                .collect();
            self.notes.push(format!(
                "{}: no inventory is committed at {} ({}): the drift check is skipped there; commit the inventory with its approval (`git kams pin -m NOTE` does), since the drift check compares the committed inventory with the committed lock",
                escape_display(ref_name),
                short(tip),
                paths.join(", ")
            ));
            return self.enforce_at(tip, &crate::inventory::Inventory::default(), None);
        }
        let mut inventory =
            crate::inventory::read_in_memory(files, &self.opts).map_err(|e| anyhow!("{e}"))?;
        let lock_name = self.locks.rel().display().to_string();
        let mut lock = match self.locks.lock_at(tip)? {
            Some(l) => (*l).clone(),
            None => {
                self.notes.push(format!(
                    "{}: {} does not exist at {}: nothing there is approved",
                    escape_display(ref_name),
                    escape_display(&lock_name),
                    short(tip)
                ));
                crate::lock::Lock::default()
            }
        };
        let stale = self.enforce_at(tip, &inventory, Some(&lock))?;
        // Both were read keeping digests only: rebuild the entries that
        // differ, whose fields are named.
        let drifted = compare::drifted(&compare::pairs(&inventory, &lock));
        lock.materialize(&drifted).map_err(|e| {
            crate::files::lock::lock_error(Path::new(&format!("{}:{lock_name}", short(tip))), e)
        })?;
        inventory.materialize(&drifted);

        // Per subject: the classes found and the fields that drifted.
        let mut by_subject: BTreeMap<(String, Option<String>), Seen> = BTreeMap::new();
        for f in compare::compare(&inventory, &lock) {
            if !matches!(
                f.class,
                Class::Added | Class::Drift | Class::Unapproved | Class::Denied | Class::Renamed
            ) {
                continue;
            }
            let Seen(classes, fields) = by_subject.entry((f.server, f.tool)).or_default();
            if !classes.contains(&f.class) {
                classes.push(f.class);
            }
            if let Some(field) = f.field {
                if !fields.contains(&field) {
                    fields.push(field);
                }
            }
        }
        Ok(by_subject
            .into_iter()
            .map(|((server, tool), Seen(classes, fields))| {
                let subject = subject(&server, tool.as_deref());
                let at = short(tip);
                let in_lock = lock.entry(&server, tool.as_deref()).is_some();
                let message = if classes.contains(&Class::Denied) && !in_lock {
                    format!("{subject} is new at {at} and looks like a tool {lock_name} denies, under a new name: stop advertising it, or have a reviewer pin it by name")
                } else if classes.contains(&Class::Denied) {
                    format!("{subject} is denied in {lock_name} and still advertised at {at}: stop advertising it (change the server or its config, capture, commit the inventory), or have a reviewer overturn the denial")
                } else if classes.contains(&Class::Renamed) {
                    format!("{subject} is new at {at}, a rename of a tool {lock_name} pins: the new name is not approved")
                } else if classes.contains(&Class::Added) {
                    format!("{subject} is new at {at}: {lock_name} has no entry for it")
                } else if classes.contains(&Class::Drift) {
                    let provisional = classes.contains(&Class::Unapproved);
                    format!(
                        "{subject} changed at {at} since it was {} ({})",
                        if provisional {
                            "recorded, and it was never pinned"
                        } else {
                            "pinned"
                        },
                        fields.join(", ")
                    )
                } else {
                    format!("{subject} is recorded but not pinned at {at}: nobody approved it")
                };
                Unapproved {
                    rule: if classes.contains(&Class::Denied) {
                        Rule::Denied
                    } else {
                        Rule::Drift
                    },
                    server,
                    tool,
                    message,
                }
            })
            .chain(stale)
            .collect())
    }

    /// The enforce rule at `tip`, whose committed inventory and lock are
    /// `inventory` and `lock` (`None`: the lock is read here, where no
    /// inventory is committed and the drift rule read none): where the tip
    /// has a record of the rules `enforce` wrote, the clients' settings
    /// committed there hold the rules the lock there asks for (the server
    /// side too, so that a commit made with `--no-verify` past the
    /// pre-commit hook's `enforce --check` is refused on its way in).
    fn enforce_at(
        &mut self,
        tip: ObjectId,
        inventory: &crate::inventory::Inventory,
        lock: Option<&crate::lock::Lock>,
    ) -> Result<Vec<Unapproved>> {
        let repo = self.repo;
        let exists = |rel: &str| -> Result<bool> {
            Ok(crate::git::blob_id_at(repo, tip, Path::new(rel))?.is_some())
        };
        let read = |rel: &str| -> Result<Option<Vec<u8>>> {
            let rel = Path::new(rel);
            match crate::git::blob_id_at(repo, tip, rel)? {
                None => Ok(None),
                Some(id) => crate::git::read_blob(
                    repo,
                    id,
                    crate::commands::enforce::MAX_SETTINGS,
                    tip,
                    rel,
                )
                .map(Some),
            }
        };
        let locks = &mut self.locks;
        let mut refused = || -> Result<Vec<crate::enforce::Refusal>> {
            let read_here;
            let lock = match lock {
                Some(lock) => lock,
                None => {
                    read_here = locks.lock_at(tip)?.unwrap_or_default();
                    &*read_here
                }
            };
            Ok(crate::enforce::refusals(&compare::pairs(inventory, lock)))
        };
        let stale = crate::commands::enforce::stale_in(&read, &exists, &mut refused)?;
        if stale.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![Unapproved {
            rule: Rule::Enforce,
            server: String::new(),
            tool: None,
            message: format!(
                "the clients' deny rules committed at {} are out of date with {} there: {}",
                short(tip),
                self.locks.rel().display(),
                stale.join(", ")
            ),
        }])
    }

    /// The sign-off rule for commit `id`, pushed to `ref_name` whose tip is `tip`.
    fn approvals_in(&mut self, ref_name: &str, id: ObjectId, tip: ObjectId) -> Result<()> {
        if !self.commits.contains_key(&id) {
            self.commits_checked += 1;
            let facts = hooks::commit_facts(self.repo, id)?;
            let found = if facts.shallow {
                self.notes.push(format!(
                    "commit {}: its parents are beyond the shallow boundary: what it changed is not checked",
                    short(id)
                ));
                Vec::new()
            } else {
                self.judge(&facts)?
            };
            self.commits.insert(id, (facts, found));
        }
        let (facts, found) = &self.commits[&id];
        for bad in found {
            self.problems.push(Problem {
                ref_name: ref_name.to_string(),
                rules: bad.rules.clone(),
                server: bad.server.clone(),
                tool: bad.tool.clone(),
                commit: Some(id),
                message: bad.message.clone(),
                fix: fix_for(facts, tip, &bad.rules),
            });
        }
        Ok(())
    }

    fn judge(&mut self, facts: &CommitFacts) -> Result<Vec<BadApproval>> {
        // Checking a signature runs a verifier: not for a commit whose
        // lock is its first parent's (or a root commit without one), which
        // approved nothing. (A lock equal to another parent's may still be
        // a rollback: that is for own_changes to judge.)
        if self.policy.require_signed {
            let blob = self.locks.blob(facts.id)?;
            let first = match facts.parents.first() {
                Some(p) => self.locks.blob(*p)?,
                None => None,
            };
            if blob == first {
                return Ok(Vec::new());
            }
        }
        // The commit's credentials first: a commit that has them passes
        // whatever it did to the lock, and its lock need not be read.
        let (rules, why): (Vec<Rule>, Vec<String>) = self
            .policy
            .shortfalls(facts)
            .into_iter()
            .map(|(s, why)| (Rule::from(s), why))
            .unzip();
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        let changes = self.locks.own_changes(facts)?;
        Ok(changes
            .iter()
            .filter(|c| c.kind.needs_sign_off())
            .map(|c| BadApproval {
                rules: rules.clone(),
                server: c.server.clone(),
                tool: c.tool.clone(),
                message: format!(
                    "commit {} {} {} {}",
                    short(facts.id),
                    c.kind.as_str(),
                    c.subject(),
                    why.join(" and ")
                ),
            })
            .collect())
    }
}

/// The command that rewrites `facts`' commit so that it passes.
fn fix_for(facts: &CommitFacts, tip: ObjectId, rules: &[Rule]) -> String {
    let sign = if rules.contains(&Rule::Signature) {
        " -S"
    } else {
        ""
    };
    let who = if rules.contains(&Rule::Approver) {
        "as an approver, "
    } else {
        ""
    };
    let signoff = if rules
        .iter()
        .any(|r| matches!(r, Rule::SignOff | Rule::Approver))
    {
        " --signoff"
    } else {
        ""
    };
    if facts.id == tip && facts.parents.len() <= 1 {
        format!("{who}git commit --amend --no-edit{signoff}{sign}")
    } else if facts.parents.is_empty() {
        format!("{who}git rebase --force-rebase{signoff}{sign} --root")
    } else {
        format!(
            "{who}git rebase --force-rebase --rebase-merges{signoff}{sign} {}~1",
            short(facts.id)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_booleans() {
        for t in ["true", "Yes", "on", "1", ""] {
            assert_eq!(parse_bool(t), Some(true), "{t}");
        }
        for f in ["false", "NO", "off", "0"] {
            assert_eq!(parse_bool(f), Some(false), "{f}");
        }
        assert_eq!(parse_bool("maybe"), None);
    }

    #[test]
    fn suggested_commands_quote_what_a_shell_would_split() {
        assert_eq!(shell_word("srv/tool_1"), "srv/tool_1");
        assert_eq!(shell_word("my srv/it's"), "'my srv/it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
