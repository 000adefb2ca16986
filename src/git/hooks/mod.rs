//! Git hooks: the shims `git kams init` installs, and the git half of the
//! checks they run. A push brings a set of commits (`new ^old`, or for a
//! new ref, `new` minus what the other side already has); each commit that
//! changes kams.lock is judged by what it did to the lock's entries and by
//! its `Signed-off-by` trailers. Which rule fails a push is decided in
//! `commands::hook`; this module only reads git.
//!
//! The rooms: `shim` writes the hook files; `lock_history` reads the
//! lock's history as the hooks judge it; this file reads what git hands a
//! hook (the refs pushed), the commits a push brings, what each commit
//! says about itself, and the approvers' emails.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{anyhow, bail, Context, Result};
use gix::ObjectId;

use super::signature::{Signed, Verdict, Verifier};

mod lock_history;
mod shim;

pub use lock_history::{LaunchValue, LockHistory};
pub use shim::{block, hooks_dir, install, with_shim, Hook, Installed, BEGIN, END};

/// One ref a push updates: `old` is what the receiving side has (null when
/// the ref is new there), `new` what it is to become (null: a deletion).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefUpdate {
    /// The ref on the receiving side (`refs/heads/main`, `refs/tags/v1`).
    pub name: String,
    /// The receiving side's current value; null when the ref is new there.
    pub old: ObjectId,
    /// The value pushed; null for a deletion.
    pub new: ObjectId,
}

fn object_id(word: &str, line: usize) -> Result<ObjectId> {
    ObjectId::from_hex(word.as_bytes()).map_err(|_| {
        anyhow!(
            "hook input line {line}: `{}` is not an object id",
            crate::text::escape_display(word)
        )
    })
}

/// Parses git's pre-push input: `<local ref> <local sha> <remote ref> <remote sha>` per line.
pub fn parse_pre_push(input: &str) -> Result<Vec<RefUpdate>> {
    parse_hook_lines(
        input,
        "`<local ref> <local sha> <remote ref> <remote sha>` (as git gives a pre-push hook)",
        |words| match words {
            [_local_ref, local, remote_ref, remote] => Some((*remote_ref, *remote, *local)),
            _ => None,
        },
    )
}

/// Parses git's pre-receive input: `<old> <new> <ref>` per line.
pub fn parse_pre_receive(input: &str) -> Result<Vec<RefUpdate>> {
    parse_hook_lines(
        input,
        "`<old sha> <new sha> <ref>` (as git gives a pre-receive hook)",
        |words| match words {
            [old, new, name] => Some((*name, *old, *new)),
            _ => None,
        },
    )
}

/// One [`RefUpdate`] per non-blank line; `pick` names a line's ref, old
/// and new ids from its words, or `None` when the line is not of the
/// shape `expected` describes.
fn parse_hook_lines<'a>(
    input: &'a str,
    expected: &str,
    pick: impl Fn(&[&'a str]) -> Option<(&'a str, &'a str, &'a str)>,
) -> Result<Vec<RefUpdate>> {
    let mut out = Vec::new();
    for (i, line) in input
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((name, old, new)) = pick(&words) else {
            bail!(
                "hook input line {}: expected {expected}, got `{}`",
                i + 1,
                crate::text::escape_display(line)
            );
        };
        out.push(RefUpdate {
            name: name.to_string(),
            old: object_id(old, i + 1)?,
            new: object_id(new, i + 1)?,
        });
    }
    Ok(out)
}

/// The repository as a hook must see it. In a pre-receive hook, git keeps
/// the pushed objects in a quarantine folder (`GIT_QUARANTINE_PATH`,
/// announced to git through `GIT_OBJECT_DIRECTORY`, which gix does not
/// read) until the hook accepts them; they are loaded into memory here so
/// that the pushed commits can be read. The pack there is complete (git
/// fixes thin packs before the hook runs), and as large as the push.
pub fn for_hook(repo: &gix::Repository) -> Result<gix::Repository> {
    let Some(quarantine) = std::env::var_os("GIT_QUARANTINE_PATH").filter(|q| !q.is_empty()) else {
        return Ok(repo.clone());
    };
    use gix::objs::{Find, Write};
    let repo = repo.clone().with_object_memory();
    let store =
        gix::odb::at(PathBuf::from(&quarantine), repo.object_hash()).with_context(|| {
            format!(
                "cannot open the pushed objects in {}",
                Path::new(&quarantine).display()
            )
        })?;
    let mut buf = Vec::new();
    for id in store.iter().context("cannot list the pushed objects")? {
        let id = id.context("cannot list the pushed objects")?;
        let data = store
            .try_find(&id, &mut buf)
            .with_context(|| format!("cannot read pushed object {id}"))?
            .ok_or_else(|| anyhow!("pushed object {id} is listed but cannot be read"))?;
        repo.objects
            .write_buf_with_known_id(data.kind, data.data, id)
            .with_context(|| format!("cannot hold pushed object {id}"))?;
    }
    Ok(repo)
}

/// The commit `id` names, following tags; `None` when it is a tag of a
/// tree or a blob. An object this repository does not have is an error:
/// what cannot be read cannot be judged.
pub fn peel_to_commit(repo: &gix::Repository, id: ObjectId) -> Result<Option<ObjectId>> {
    let object = repo
        .try_find_object(id)
        .with_context(|| format!("cannot read object {id}"))?
        .ok_or_else(|| anyhow!("object {id} is not in this repository, so it cannot be checked"))?;
    let end = object
        .peel_tags_to_end()
        .with_context(|| format!("cannot follow tag {id}"))?;
    Ok((end.kind == gix::object::Kind::Commit).then_some(end.id))
}

/// The commits that refs under `prefix` (`refs/remotes/origin/`; empty for
/// every ref) point to, tags followed.
pub fn ref_tips(repo: &gix::Repository, prefix: &str) -> Result<Vec<ObjectId>> {
    let platform = repo.references().context("cannot read the refs")?;
    let iter = if prefix.is_empty() {
        platform.all()
    } else {
        platform.prefixed(prefix)
    }
    .context("cannot read the refs")?;
    let mut out = Vec::new();
    for r in iter {
        // A broken ref hides nothing: more commits are checked, not fewer.
        let Ok(mut r) = r else { continue };
        let Ok(id) = r.peel_to_id() else { continue };
        if !repo.has_object(id) {
            continue;
        }
        if let Some(c) = peel_to_commit(repo, id.detach())? {
            out.push(c);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The commits reachable from `tip` and from none of `hidden` (`tip
/// ^hidden...`), newest first. Hidden ids this repository does not have
/// are ignored. In a shallow clone the walk stops at the boundary.
pub fn commits_between(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
) -> Result<Vec<ObjectId>> {
    let hidden: Vec<ObjectId> = hidden
        .iter()
        .copied()
        .filter(|h| repo.has_object(h))
        .collect();
    let walk = repo
        .rev_walk([tip])
        .with_hidden(hidden)
        .all()
        .with_context(|| format!("cannot walk the history of {tip}"))?;
    let mut out = Vec::new();
    for info in walk {
        out.push(
            info.with_context(|| format!("cannot walk the history of {tip}"))?
                .id,
        );
    }
    Ok(out)
}

/// What a commit says about itself, for the sign-off rules.
#[derive(Clone, Debug)]
pub struct CommitFacts {
    /// The commit.
    pub id: ObjectId,
    /// Its parents, in order.
    pub parents: Vec<ObjectId>,
    /// The values of its `Signed-off-by` trailers, as typed (claims: see
    /// [`super::parse_sign_off`]).
    pub sign_offs: Vec<String>,
    /// Its signature and what it signs; `None` when it has none.
    pub signed: Option<Arc<Signed>>,
    /// What the signature proves, worked out the first time it is asked
    /// ([`CommitFacts::verdict`]): a verifier runs only for a policy that
    /// needs it.
    pub verdict: OnceLock<Verdict>,
    /// True when a parent is missing: the shallow boundary.
    pub shallow: bool,
}

impl CommitFacts {
    /// What the commit's signature proves, checked by `verifier` once.
    pub fn verdict(&self, verifier: &Verifier) -> &Verdict {
        self.verdict
            .get_or_init(|| verifier.verify(self.signed.as_deref()))
    }
}

/// Reads the commit `id` (its signature is not checked yet).
pub fn commit_facts(repo: &gix::Repository, id: ObjectId) -> Result<CommitFacts> {
    let commit = repo
        .find_commit(id)
        .with_context(|| format!("cannot read commit {id}"))?;
    let (parents, sign_offs) = {
        let d = commit
            .decode()
            .with_context(|| format!("cannot decode commit {id}"))?;
        (d.parents().collect::<Vec<ObjectId>>(), super::sign_offs(&d))
    };
    let signed = super::signature::signed_in(&commit.data, id.kind())
        .with_context(|| format!("cannot read the signature of commit {id}"))?
        .map(Arc::new);
    let shallow = parents.iter().any(|p| !repo.has_object(p));
    Ok(CommitFacts {
        id,
        parents,
        sign_offs,
        signed,
        verdict: OnceLock::new(),
        shallow,
    })
}

/// The email of an identity (`Name <email>`, or a bare address), lowercased.
pub fn email_of(identity: &str) -> Option<String> {
    let s = identity.trim();
    let email = match (s.rfind('<'), s.rfind('>')) {
        (Some(a), Some(b)) if a < b => &s[a + 1..b],
        _ if s.contains('@') && !s.contains(char::is_whitespace) => s,
        _ => return None,
    };
    let email = email.trim();
    (!email.is_empty()).then(|| email.to_lowercase())
}

/// The approvers' emails from git config `kams.approvers`: `Name <email>`
/// or bare addresses, separated by commas or newlines. Items that carry no
/// email are returned in the second list, for a warning.
pub fn parse_approvers(value: &str) -> (Vec<String>, Vec<String>) {
    let (mut emails, mut unusable) = (Vec::new(), Vec::new());
    let mut item = String::new();
    let mut in_angle = false;
    let mut flush = |item: &mut String| {
        let t = item.trim();
        if !t.is_empty() {
            match email_of(t) {
                Some(e) => emails.push(e),
                None => unusable.push(t.to_string()),
            }
        }
        item.clear();
    };
    for c in value.chars() {
        match c {
            '<' => in_angle = true,
            '>' => in_angle = false,
            _ => {}
        }
        if (c == ',' || c == '\n') && !in_angle {
            flush(&mut item);
        } else {
            item.push(c);
        }
    }
    flush(&mut item);
    emails.sort();
    emails.dedup();
    (emails, unusable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hook_input_and_refuses_garbage() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let push = parse_pre_push(&format!("refs/heads/main {a} refs/heads/main {z}\n\n")).unwrap();
        assert_eq!(push.len(), 1);
        assert!(push[0].old.is_null() && !push[0].new.is_null());
        assert_eq!(push[0].name, "refs/heads/main");
        let recv = parse_pre_receive(&format!("{a} {z} refs/tags/v1\n")).unwrap();
        assert!(recv[0].new.is_null() && recv[0].name == "refs/tags/v1");
        assert!(parse_pre_push("refs/heads/main abc\n").is_err());
        assert!(parse_pre_receive(&format!("{a} xyz refs/heads/main\n")).is_err());
    }

    #[test]
    fn approvers_are_matched_by_email() {
        let (emails, unusable) = parse_approvers(
            "Rita Reviewer <Rita@Example.com>, bob@example.com\nDoe, Jane <jane@x.org>,\n",
        );
        assert_eq!(
            emails,
            vec!["bob@example.com", "jane@x.org", "rita@example.com"]
        );
        assert_eq!(unusable, vec!["Doe"]);
        assert_eq!(
            email_of("Mallory <MAL@evil.test>").as_deref(),
            Some("mal@evil.test")
        );
        assert_eq!(email_of("just a name"), None);
    }
}
