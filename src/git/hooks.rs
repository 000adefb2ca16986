//! Git hooks: the shims `git kams init` installs, and the git half of the
//! checks they run. A push brings a set of commits (`new ^old`, or for a
//! new ref, `new` minus what the other side already has); each commit that
//! changes kams.lock is judged by what it did to the lock's entries and by
//! its `Signed-off-by` trailers. Which rule fails a push is decided in
//! `commands::hook`; this module only reads git.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{anyhow, bail, Context, Result};
use gix::ObjectId;

use super::cache::{Compared, LogChange};
use super::history::{Versions, Which};
use super::signature::{Signed, Verdict, Verifier};
use crate::lock::{self, Lock};

/// First line of the block git-kams owns in a hook file.
pub const BEGIN: &str = "# >>> git-kams >>>";
/// Last line of that block.
pub const END: &str = "# <<< git-kams <<<";

/// The hooks git-kams installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// Client side, before `git push` sends anything.
    PrePush,
    /// Server side, in the bare repository, before any ref is updated.
    PreReceive,
}

impl Hook {
    /// The hook's file name (and `git kams hook` argument).
    pub fn name(self) -> &'static str {
        match self {
            Hook::PrePush => "pre-push",
            Hook::PreReceive => "pre-receive",
        }
    }
}

/// The folder git runs hooks from: `core.hooksPath` (`hooks_path`; a
/// relative one is relative to `top`, the top of the work tree, or to the git dir
/// in a bare repository, as git reads it), else `hooks/` in the common git
/// dir, which linked worktrees share with the main one.
pub fn hooks_dir(repo: &gix::Repository, top: Option<&Path>, hooks_path: Option<&str>) -> PathBuf {
    match hooks_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => {
            let p = match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
                (Some(rest), Some(home)) => Path::new(&home).join(rest),
                _ => PathBuf::from(p),
            };
            if p.is_absolute() {
                p
            } else {
                top.unwrap_or_else(|| repo.git_dir()).join(p)
            }
        }
        None => repo.common_dir().join("hooks"),
    }
}

/// The hooks as a server administrator installs them by hand: the files
/// in the repository's `hooks/` folder, embedded here so that `init`
/// installs exactly what they say.
const PRE_PUSH_FILE: &str = include_str!("../../hooks/pre-push");
const PRE_RECEIVE_FILE: &str = include_str!("../../hooks/pre-receive");

/// The block git-kams owns in `hook`'s file (the file of `hooks/` without
/// its `#!` line). It reads git's input once, hands it to `git kams
/// hook`, stops the hook with that status on failure, and otherwise
/// replays the input for the user's own lines below it.
pub fn block(hook: Hook) -> String {
    let file = match hook {
        Hook::PrePush => PRE_PUSH_FILE,
        Hook::PreReceive => PRE_RECEIVE_FILE,
    };
    file.split_once('\n')
        .map_or(file, |(_, rest)| rest)
        .to_string()
}

/// Shells whose syntax the block is written in.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "yash"];

/// The interpreter a `#!` line names (`env`'s argument when it is `env`).
fn interpreter(shebang: &str) -> Option<&str> {
    let mut words = shebang.strip_prefix("#!")?.split_whitespace();
    let first = words.next()?;
    let base = first.rsplit('/').next().unwrap_or(first);
    if base == "env" {
        let arg = words.find(|w| !w.starts_with('-'))?;
        return Some(arg.rsplit('/').next().unwrap_or(arg));
    }
    Some(base)
}

/// `existing` hook text (`None`: no file yet) with git-kams' block for
/// `hook` in it: the block replaced where it is, else inserted right after
/// the `#!` line so that it runs before the user's lines (which may end in
/// `exit`). Lines outside the block are kept as they are; a file without a
/// `#!` line gets `#!/bin/sh`.
pub fn with_shim(existing: Option<&str>, hook: Hook) -> Result<String> {
    let block = block(hook);
    let text = existing.unwrap_or("");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let is = |l: &str, marker: &str| l.trim_end() == marker;
    let begins: Vec<usize> = (0..lines.len()).filter(|&i| is(lines[i], BEGIN)).collect();
    let ends: Vec<usize> = (0..lines.len()).filter(|&i| is(lines[i], END)).collect();
    if begins.len() != ends.len() || begins.iter().zip(&ends).any(|(b, e)| b > e) {
        bail!(
            "the git-kams block is damaged ({BEGIN} and {END} lines do not pair up); remove what is left of it and run `git kams init` again"
        );
    }
    if let Some(first) = lines.first().filter(|l| l.starts_with("#!")) {
        match interpreter(first.trim_end()) {
            Some(i) if SHELLS.contains(&i) => {}
            other => bail!(
                "it is a {} script, and git-kams only adds lines to shell hooks; call `git kams hook {} \"$@\"` from it yourself, with the hook's standard input",
                other.unwrap_or("non-shell"),
                hook.name()
            ),
        }
    }
    let mut out = String::with_capacity(text.len() + block.len() + 16);
    if begins.is_empty() {
        let body_start = match lines.first() {
            Some(l) if l.starts_with("#!") => {
                out.push_str(l);
                if !l.ends_with('\n') {
                    out.push('\n');
                }
                1
            }
            _ => {
                out.push_str("#!/bin/sh\n");
                0
            }
        };
        out.push_str(&block);
        for l in &lines[body_start..] {
            out.push_str(l);
        }
    } else {
        // One block, where the first one was; any copies are dropped.
        let mut i = 0;
        if !lines.first().is_some_and(|l| l.starts_with("#!")) {
            out.push_str("#!/bin/sh\n");
        }
        for (n, (&b, &e)) in begins.iter().zip(&ends).enumerate() {
            for l in &lines[i..b] {
                out.push_str(l);
            }
            if n == 0 {
                out.push_str(&block);
            }
            i = e + 1;
        }
        for l in &lines[i..] {
            out.push_str(l);
        }
    }
    Ok(out)
}

/// What [`install`] did to a hook file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installed {
    /// There was no such hook.
    Created,
    /// The hook existed; the block was added or brought up to date.
    Updated,
    /// The hook already had this block.
    Unchanged,
}

impl Installed {
    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Installed::Created => "created",
            Installed::Updated => "updated",
            Installed::Unchanged => "unchanged",
        }
    }
}

/// Installs git-kams' block for `hook` in `dir` (created if needed) and
/// makes the file executable.
pub fn install(dir: &Path, hook: Hook) -> Result<(PathBuf, Installed)> {
    let path = dir.join(hook.name());
    let shown = crate::text::shown_path(&path);
    // A hook that is a link (a committed `core.hooksPath` folder may hold
    // one) would have its target copied into the hook, or made executable:
    // refused, as a FIFO is.
    let existing =
        match crate::files::read_existing(&path, HOOK_MAX)? {
            Some(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
                anyhow!("{shown} is not UTF-8 text; git-kams edits only text hooks")
            })?),
            None => None,
        };
    let text = with_shim(existing.as_deref(), hook)
        .with_context(|| format!("cannot install git-kams in {shown}"))?;
    let what = match &existing {
        None => Installed::Created,
        Some(old) if *old == text => Installed::Unchanged,
        Some(_) => Installed::Updated,
    };
    if what != Installed::Unchanged {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", crate::text::shown_path(dir)))?;
        // Written beside and renamed, so that a push running now sees the
        // old hook or the new one, never half of one.
        crate::files::replace(&path, text.as_bytes(), None)?;
    }
    make_executable(&path).with_context(|| format!("cannot make {shown} executable"))?;
    Ok((path, what))
}

/// The largest hook file read.
const HOOK_MAX: u64 = 16 << 20;

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // Not through a link: chmod would change where it points.
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut perms = meta.permissions();
    let mode = perms.mode();
    // Execute wherever read is allowed, as `chmod +x` under a usual umask.
    let wanted = mode | 0o100 | ((mode & 0o044) >> 2);
    if wanted != mode {
        perms.set_mode(wanted);
        std::fs::set_permissions(path, perms)?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

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

/// The lock's history as commits see it: blob ids, and each ref tip's
/// whole lock, read once however many commits and refs share them; and,
/// for commits judged by what they changed, the recent versions those
/// changes were read from ([`Versions`]).
pub struct LockHistory<'r> {
    repo: &'r gix::Repository,
    rel: PathBuf,
    blobs: HashMap<ObjectId, Option<ObjectId>>,
    locks: HashMap<ObjectId, Arc<Lock>>,
    /// The versions read for commits judged by what they changed.
    versions: Versions<'r>,
    /// Merge bases found, by the pair of commits asked about.
    bases: super::MergeBases,
    /// Launches read, by lock blob, then server.
    launches: HashMap<ObjectId, Arc<HashMap<String, LaunchValue>>>,
}

impl<'r> LockHistory<'r> {
    /// The lock at `rel` (from the top of the tree) in `repo`'s commits.
    pub fn new(repo: &'r gix::Repository, rel: &Path) -> LockHistory<'r> {
        LockHistory {
            repo,
            rel: rel.to_path_buf(),
            blobs: HashMap::new(),
            locks: HashMap::new(),
            versions: Versions::new(repo, rel),
            bases: super::MergeBases::default(),
            launches: HashMap::new(),
        }
    }

    /// The lock's path from the top of the tree.
    pub fn rel(&self) -> &Path {
        &self.rel
    }

    /// The lock's blob id at `commit`, `None` when the commit has no lock.
    pub fn blob(&mut self, commit: ObjectId) -> Result<Option<ObjectId>> {
        if let Some(b) = self.blobs.get(&commit) {
            return Ok(*b);
        }
        let b = super::blob_id_at(self.repo, commit, &self.rel)?;
        self.blobs.insert(commit, b);
        Ok(b)
    }

    /// The lock at `commit` (digests only); `None` when there is none.
    pub fn lock_at(&mut self, commit: ObjectId) -> Result<Option<Arc<Lock>>> {
        match self.blob(commit)? {
            Some(blob) => self.parse(commit, blob).map(Some),
            None => Ok(None),
        }
    }

    fn parse(&mut self, commit: ObjectId, blob: ObjectId) -> Result<Arc<Lock>> {
        if let Some(l) = self.locks.get(&blob) {
            return Ok(l.clone());
        }
        let parsed = Arc::new(self.read(commit, blob)?);
        self.locks.insert(blob, parsed.clone());
        Ok(parsed)
    }

    /// Reads and verifies (digests only) the lock in `blob`, `commit`'s.
    fn read(&self, commit: ObjectId, blob: ObjectId) -> Result<Lock> {
        let bytes = super::read_blob(
            self.repo,
            blob,
            lock::store::MAX_LOCK_SIZE,
            commit,
            &self.rel,
        )?;
        let shown = format!("{}:{}", commit.to_hex_with_len(12), self.rel.display());
        Lock::parse_digests_only(Arc::new(lock::store::strip_bom(bytes)))
            .map_err(|e| lock::store::lock_error(Path::new(&shown), e))
    }

    /// The commit where the histories of `a` and `b` meet (`None`: they
    /// share none).
    pub fn merge_base(&mut self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        self.bases.of(self.repo, a, b)
    }

    /// The launch of `server` recorded in the lock at `commit` (`None`: no
    /// lock, no such server, or no launch). A version's launches are read
    /// once, all servers at a time, and kept apart from whole locks: a walk
    /// back through the history reads many versions, each once.
    pub fn launch_at(
        &mut self,
        commit: ObjectId,
        server: &str,
    ) -> Result<Option<crate::json::Value>> {
        Ok(self.launch_value_at(commit, server)?.map(|(v, _)| v))
    }

    /// `server`'s launch in the lock at `commit` with its approval: the
    /// value a change of the launch, or of its approval, gives it.
    pub fn launch_value_at(
        &mut self,
        commit: ObjectId,
        server: &str,
    ) -> Result<Option<LaunchValue>> {
        let Some(blob) = self.blob(commit)? else {
            return Ok(None);
        };
        if let Some(l) = self.launches.get(&blob) {
            return Ok(l.get(server).cloned());
        }
        let launches: HashMap<String, LaunchValue> = match self.locks.get(&blob) {
            Some(lock) => launches_of(lock),
            None => launches_of(&self.read(commit, blob)?),
        };
        let launch = launches.get(server).cloned();
        self.launches.insert(blob, Arc::new(launches));
        Ok(launch)
    }

    /// The commit that gave `server`'s launch its value at `tip`, by the
    /// hooks' rules: walking back, the value passes to the first parent
    /// when it has it, to another parent when that parent has it and
    /// changed it since the merge base, and otherwise stays with the
    /// commit, which made it (and is the one whose sign-off approves it).
    /// `None` when the lock at `tip` records no launch for `server`; the
    /// flag is true when the walk met the shallow boundary (the value may
    /// be older, and its approval cannot be seen).
    pub fn launch_origin(
        &mut self,
        tip: ObjectId,
        server: &str,
    ) -> Result<Option<(CommitFacts, bool)>> {
        let Some(value) = self.launch_value_at(tip, server)? else {
            return Ok(None);
        };
        let mut at = tip;
        loop {
            let facts = commit_facts(self.repo, at)?;
            if facts.shallow {
                return Ok(Some((facts, true)));
            }
            let Some(&first) = facts.parents.first() else {
                return Ok(Some((facts, false)));
            };
            // A parent whose lock cannot be read has no value to pass the
            // launch to: it stays with this commit, whose sign-off then
            // has to approve it.
            if self.launch_value_at(first, server).ok().flatten().as_ref() == Some(&value) {
                at = first;
                continue;
            }
            let mut next = None;
            for &p in &facts.parents[1..] {
                if self.launch_value_at(p, server).ok().flatten().as_ref() != Some(&value) {
                    continue;
                }
                // Unreadable at the base: not shown to be that side's change.
                let side_changed = match self.merge_base(first, p)? {
                    Some(b) => self
                        .launch_value_at(b, server)
                        .is_ok_and(|l| l.as_ref() != Some(&value)),
                    None => true,
                };
                if side_changed {
                    next = Some(p);
                    break;
                }
            }
            match next {
                Some(p) => at = p,
                None => return Ok(Some((facts, false))),
            }
        }
    }

    /// The entry changes `commit` made to the lock that are its own: against
    /// its first parent (against an empty lock for a root commit). For a
    /// merge, a change is the other side's, and left out, only when that
    /// parent has the same value *and* changed it since the merge base:
    /// taking an approval from a branch that made it is no approval, but
    /// taking an old value back from a parent that merely still has it (a
    /// rollback: the other parent is behind the first) is one, and needs a
    /// sign-off of its own.
    ///
    /// Only entries whose text differs are parsed: a merge of two pull
    /// requests reads its versions' structure, and the few entries each
    /// side changed.
    pub fn own_changes(&mut self, commit: &CommitFacts) -> Result<Vec<LogChange>> {
        let blob = self.blob(commit.id)?;
        let mut parent_blobs = Vec::with_capacity(commit.parents.len());
        for p in &commit.parents {
            parent_blobs.push(self.blob(*p)?);
        }
        let first = parent_blobs.first().copied().flatten();
        if commit.parents.is_empty() && blob.is_none()
            || !commit.parents.is_empty() && first == blob
        {
            return Ok(Vec::new());
        }
        let unreadable = |rel: &Path, at: ObjectId, message: &str| {
            anyhow!(
                "{}:{}: the lock committed there cannot be read: {}",
                at.to_hex_with_len(12),
                rel.display(),
                crate::text::escape_display(message)
            )
        };
        let mut changes = match self.versions.changes(first, blob)? {
            Compared::Changes(changes) => changes,
            Compared::Unreadable { at_parent, message } => {
                let at = if at_parent {
                    commit.parents[0]
                } else {
                    commit.id
                };
                return Err(unreadable(&self.rel, at, &message));
            }
        };
        for (parent, other) in commit.parents.iter().zip(&parent_blobs).skip(1) {
            if changes.is_empty() {
                break;
            }
            let base = self.merge_base(commit.parents[0], *parent)?;
            let base_blob = match base {
                Some(b) => self.blob(b)?,
                None => None,
            };
            let mut theirs = Vec::with_capacity(changes.len());
            let entries: Vec<(&str, Option<&str>)> = changes
                .iter()
                .filter(|c| !c.kind.is_launch())
                .map(|c| (c.server.as_str(), c.tool.as_deref()))
                .collect();
            let (same_as_other, same_as_base) = if entries.is_empty() {
                (Vec::new(), Vec::new())
            } else {
                let now = match self.versions.same_values(*other, blob, &entries)? {
                    Ok(same) => same,
                    Err((which, message)) => {
                        let at = match which {
                            Which::A => *parent,
                            Which::B => commit.id,
                        };
                        return Err(unreadable(&self.rel, at, &message));
                    }
                };
                let before = match self.versions.same_values(base_blob, *other, &entries)? {
                    Ok(same) => same,
                    Err((which, message)) => {
                        let at = match which {
                            Which::A => base.unwrap_or(*parent),
                            Which::B => *parent,
                        };
                        return Err(unreadable(&self.rel, at, &message));
                    }
                };
                (now, before)
            };
            let (mut now, mut before) = (same_as_other.into_iter(), same_as_base.into_iter());
            for c in &changes {
                let is_theirs = if c.kind.is_launch() {
                    let here = self.launch_value_at(commit.id, &c.server)?;
                    let there = self.launch_value_at(*parent, &c.server)?;
                    let at_base = match base {
                        Some(b) => self.launch_value_at(b, &c.server)?,
                        None => None,
                    };
                    here == there && there != at_base
                } else {
                    now.next().unwrap_or(false) && !before.next().unwrap_or(true)
                };
                theirs.push(is_theirs);
            }
            let mut theirs = theirs.into_iter();
            changes.retain(|_| !theirs.next().unwrap_or(false));
        }
        Ok(changes)
    }
}

/// A server's launch and its approval (`None` for a launch recorded
/// before launches had one).
pub type LaunchValue = (
    crate::json::Value,
    Option<Arc<crate::lock::format::Approval>>,
);

/// Every server's launch in `lock`.
fn launches_of(lock: &Lock) -> HashMap<String, LaunchValue> {
    lock.servers
        .iter()
        .filter_map(|(name, s)| {
            Some((name.clone(), (s.launch.clone()?, s.launch_approval.clone())))
        })
        .collect()
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
    fn the_block_is_added_once_after_the_shebang_and_the_users_lines_stay() {
        let user = "#!/bin/bash\nset -e\necho mine\nexit 0\n";
        let once = with_shim(Some(user), Hook::PrePush).unwrap();
        assert!(
            once.starts_with(&format!("#!/bin/bash\n{BEGIN}\n")),
            "{once}"
        );
        assert!(
            once.ends_with(&format!("{END}\nset -e\necho mine\nexit 0\n")),
            "{once}"
        );
        assert_eq!(with_shim(Some(&once), Hook::PrePush).unwrap(), once);
        assert_eq!(once.matches(BEGIN).count(), 1);

        let new = with_shim(None, Hook::PreReceive).unwrap();
        assert!(new.starts_with(&format!("#!/bin/sh\n{BEGIN}\n")));
        assert!(new.contains("git kams hook pre-receive \"$@\" || exit $?"));
        // No shebang: one is added, the user's lines follow the block.
        let bare = with_shim(Some("echo hi"), Hook::PrePush).unwrap();
        assert!(
            bare.starts_with("#!/bin/sh\n") && bare.ends_with(&format!("{END}\necho hi")),
            "{bare}"
        );
    }

    #[test]
    fn init_installs_exactly_the_files_of_the_hooks_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
        for hook in [Hook::PrePush, Hook::PreReceive] {
            let file = std::fs::read_to_string(dir.join(hook.name())).unwrap();
            assert_eq!(with_shim(None, hook).unwrap(), file, "{}", hook.name());
            assert!(file.starts_with(&format!("#!/bin/sh\n{BEGIN}\n")));
            assert!(file.ends_with(&format!("{END}\n")));
            assert!(file.contains(&format!("git kams hook {} \"$@\" || exit $?", hook.name())));
        }
    }

    #[test]
    fn an_old_block_is_replaced_in_place_and_copies_are_dropped() {
        let old = format!("#!/bin/sh\necho before\n{BEGIN}\nold line\n{END}\necho between\n{BEGIN}\ncopy\n{END}\necho after\n");
        let new = with_shim(Some(&old), Hook::PrePush).unwrap();
        assert_eq!(
            new,
            format!(
                "#!/bin/sh\necho before\n{}echo between\necho after\n",
                block(Hook::PrePush)
            )
        );
    }

    #[test]
    fn a_damaged_block_or_a_non_shell_hook_is_refused() {
        let damaged = format!("#!/bin/sh\n{BEGIN}\necho half\n");
        assert!(with_shim(Some(&damaged), Hook::PrePush)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
        let python = "#!/usr/bin/env python3\nprint('hi')\n";
        let e = with_shim(Some(python), Hook::PrePush)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("python3 script") && e.contains("git kams hook pre-push"),
            "{e}"
        );
        assert!(with_shim(Some("#!/usr/bin/env -S bash -e\n"), Hook::PrePush).is_ok());
    }

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
