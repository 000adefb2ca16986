//! Blame: for each entry of the lock at a commit, the commit that gave it
//! its value, walking back by value and not by text.

use std::collections::{BinaryHeap, HashMap};

use anyhow::{anyhow, Result};
use gix::ObjectId;

use super::{History, LogWalk, Step};
use crate::canon::Digest;
use crate::lock::{Approval, Entry, State};

/// An entry's value as blame follows it: what a reviewer approved.
/// `first_seen` is not part of it, nor is the text's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryValue {
    /// Provisional or pinned.
    pub state: State,
    /// The descriptor's digest.
    pub digest: Digest,
    /// Who approved it, when, and why.
    pub approval: Option<std::sync::Arc<Approval>>,
}

impl EntryValue {
    /// The value of `entry`.
    pub fn of(entry: &Entry) -> EntryValue {
        EntryValue {
            state: entry.state,
            digest: entry.descriptor.digest,
            approval: entry.approval.clone(),
        }
    }

    fn same_as(&self, entry: &Entry) -> bool {
        self.state == entry.state
            && self.digest == entry.descriptor.digest
            && self.approval == entry.approval
    }
}

/// The entry a blame asks about.
#[derive(Clone, Debug)]
pub struct Wanted {
    /// Server name.
    pub server: String,
    /// Tool name; `None` for the server entry.
    pub tool: Option<String>,
    /// Its value at the revision blamed.
    pub value: EntryValue,
}

/// Where an entry's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blamed {
    /// The commit that introduced the value.
    pub commit: ObjectId,
    /// True when the commit is a shallow boundary: the value may be older.
    pub boundary: bool,
}

/// Blame's answer: one [`Blamed`] per wanted entry, in order, and notes
/// for the reader (unreadable locks met on the way).
#[derive(Clone, Debug)]
pub struct BlameOutcome {
    /// Per wanted entry.
    pub blamed: Vec<Blamed>,
    /// What the reader should know.
    pub notes: Vec<String>,
}

/// Versions blame keeps read ahead (see [`History::read_ahead`]).
const BLAME_AHEAD: usize = 8;

/// For each wanted entry of the lock at `tip`, the commit that gave it its
/// value: walking back from `tip`, an entry passes to a parent whose lock
/// has the same value for it (the first such parent, in parent order; all
/// entries pass to a parent whose lock blob is identical, as git blame's
/// TREESAME rule), and stays with the commit when no parent has it.
pub fn blame(history: &mut History, tip: ObjectId, wanted: &[Wanted]) -> Result<BlameOutcome> {
    let mut blamed: Vec<Option<Blamed>> = vec![None; wanted.len()];
    let mut notes = Vec::new();
    let mut pending: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    let mut queue = BinaryHeap::new();
    if !wanted.is_empty() {
        pending.insert(tip, (0..wanted.len()).collect());
        queue.push((history.node(tip)?.time, history.generation(tip)?, tip));
    }
    // The lock's changes as log walks them, read ahead: in a history
    // without merges these are the versions blame compares next, newest
    // first. Versions it then does not take only cost reading
    // ([`AHEAD_MOST`] bounds them).
    let mut hint = if wanted.is_empty() {
        None
    } else {
        Some(LogWalk::new(history, tip)?)
    };
    let give = |history: &mut History,
                pending: &mut HashMap<ObjectId, Vec<usize>>,
                queue: &mut BinaryHeap<(i64, u32, ObjectId)>,
                commit: ObjectId,
                entries: Vec<usize>|
     -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        match pending.get_mut(&commit) {
            Some(list) => list.extend(entries),
            None => {
                pending.insert(commit, entries);
                let generation = history.generation(commit)?;
                queue.push((history.node(commit)?.time, generation, commit));
            }
        }
        Ok(())
    };
    while let Some((_, _, commit)) = queue.pop() {
        while let Some(walk) = hint.as_mut().filter(|_| history.ahead_room(BLAME_AHEAD)) {
            match walk.next(history)? {
                Some(Step::Changed { before, after, .. }) => history.read_ahead(before, after),
                Some(Step::Boundary(_)) => {}
                None => hint = None,
            }
        }
        let Some(mut entries) = pending.remove(&commit) else {
            continue;
        };
        entries.sort_unstable();
        entries.dedup();
        if history.is_boundary(commit) {
            for i in entries {
                blamed[i] = Some(Blamed {
                    commit,
                    boundary: true,
                });
            }
            continue;
        }
        let node = history.node(commit)?.clone();
        let blob = history.lock_blob(commit)?;
        let mut blamed_here: Vec<usize> = Vec::new();
        let mut parent_blobs = Vec::with_capacity(node.parents.len());
        for p in &node.parents {
            parent_blobs.push(history.lock_blob(*p)?);
        }
        // The lock of a parent, whole: every entry came from there, unless
        // it is a non-first parent taken over the first parent's changes
        // (a rollback, which the hooks judge as the merge's own change).
        let treesame = match parent_blobs.iter().position(|b| *b == blob) {
            Some(i) if i > 0 && history.first_side_changed(&node.parents, i)? => None,
            other => other,
        };
        if let Some(i) = treesame {
            give(history, &mut pending, &mut queue, node.parents[i], entries)?;
            continue;
        }
        let mut left = entries;
        for (k, (parent, parent_blob)) in node.parents.iter().zip(parent_blobs).enumerate() {
            if left.is_empty() {
                break;
            }
            let (Some(parent_blob), Some(blob)) = (parent_blob, blob) else {
                continue;
            };
            let (same, mut differ, unreadable) =
                history.split_at_parent(blob, parent_blob, left, wanted)?;
            // From a non-first parent, only what that side changed since
            // the histories met passes to it; a value it merely still has
            // is the merge's own (as the hooks judge it).
            let same = if k == 0 || same.is_empty() {
                same
            } else {
                let base = history.merge_base(node.parents[0], *parent)?;
                let base_blob = match base {
                    Some(b) => history.lock_blob(b)?,
                    None => None,
                };
                match base_blob {
                    None => same,
                    Some(base_blob) => {
                        let (kept, changed, _) =
                            history.split_at_parent(blob, base_blob, same, wanted)?;
                        blamed_here.extend(kept);
                        changed
                    }
                }
            };
            differ.retain(|i| !blamed_here.contains(i));
            if let Some(e) = unreadable {
                let note = format!(
                    "{} at {} cannot be read ({}): entries it may share with its child are blamed on the child",
                    history.path().display(),
                    parent,
                    e
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
            give(history, &mut pending, &mut queue, *parent, same)?;
            left = differ;
        }
        for i in left.into_iter().chain(blamed_here) {
            blamed[i] = Some(Blamed {
                commit,
                boundary: false,
            });
        }
    }
    let blamed = blamed
        .into_iter()
        .map(|b| b.ok_or_else(|| anyhow!("blame lost an entry (a bug in git-kams)")))
        .collect::<Result<Vec<_>>>()?;
    Ok(BlameOutcome { blamed, notes })
}

impl History {
    /// Splits `entries` (indexes into `wanted`, each holding its wanted
    /// value in the lock of blob `child`) into those whose value is the
    /// same in the lock of blob `parent` and those whose value differs
    /// there; the note says what could not be read.
    fn split_at_parent(
        &mut self,
        child: ObjectId,
        parent: ObjectId,
        entries: Vec<usize>,
        wanted: &[Wanted],
    ) -> Result<(Vec<usize>, Vec<usize>, Option<String>)> {
        let c = self.version(child)?;
        let p = self.version(parent)?;
        let (mut same, mut differ, mut unsure) = (Vec::new(), Vec::new(), Vec::new());
        if p.index.is_none() {
            return Ok(match p.full().as_ref() {
                Ok(lock) => {
                    let (same, differ) = entries.into_iter().partition(|&i| {
                        let w = &wanted[i];
                        lock.entry(&w.server, w.tool.as_deref())
                            .is_some_and(|e| w.value.same_as(e))
                    });
                    (same, differ, None)
                }
                Err(e) => (Vec::new(), entries, Some(e.clone())),
            });
        }
        for i in entries {
            let w = &wanted[i];
            match (
                c.span(&w.server, w.tool.as_deref()),
                p.span(&w.server, w.tool.as_deref()),
            ) {
                (_, None) => differ.push(i),
                (Some(a), Some(b)) if a == b => same.push(i),
                _ => unsure.push(i),
            }
        }
        let mut note = None;
        if !unsure.is_empty() {
            let keys: Vec<(&str, Option<&str>)> = unsure
                .iter()
                .map(|&i| (wanted[i].server.as_str(), wanted[i].tool.as_deref()))
                .collect();
            let mut keys_sorted = keys.clone();
            keys_sorted.sort_unstable();
            let lock = match p.subset(&keys_sorted) {
                Ok(lock) => Some(lock),
                Err(e) => {
                    note = Some(e);
                    None
                }
            };
            for (n, &i) in unsure.iter().enumerate() {
                let w = &wanted[i];
                // One unreadable entry must not cost the others their
                // history: when the batch fails, read each alone.
                let alone;
                let lock = match &lock {
                    Some(l) => Some(l),
                    None => {
                        alone = p.subset(&keys[n..=n]).ok();
                        alone.as_ref()
                    }
                };
                let is_same = lock
                    .and_then(|l| l.entry(&w.server, w.tool.as_deref()))
                    .is_some_and(|e| w.value.same_as(e));
                if is_same {
                    same.push(i);
                } else {
                    differ.push(i);
                }
            }
        }
        Ok((same, differ, note))
    }
}
