//! The lock's history as the hooks judge it: the lock and its launches
//! at each commit, read once however many commits share them, and the
//! entry changes a commit made that are its own, not a merged side's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, Result};
use gix::ObjectId;

use super::{commit_facts, CommitFacts};
use crate::cache::log::{Compared, LogChange};
use crate::git::history::{Versions, Which};
use crate::lock::{self, Lock};

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
    bases: crate::git::MergeBases,
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
            bases: crate::git::MergeBases::default(),
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
        let b = crate::git::blob_id_at(self.repo, commit, &self.rel)?;
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
        let bytes = crate::git::read_blob(self.repo, blob, lock::MAX_LOCK_SIZE, commit, &self.rel)?;
        let shown = format!("{}:{}", commit.to_hex_with_len(12), self.rel.display());
        Lock::parse_digests_only(Arc::new(crate::bytes::strip_bom(bytes)))
            .map_err(|e| crate::files::lock::lock_error(Path::new(&shown), e))
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
