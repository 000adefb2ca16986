//! The lock's log: the commits that changed it, newest first, with git
//! log's history simplification for its path.

use std::collections::BinaryHeap;

use anyhow::Result;
use gix::ObjectId;

use super::History;
use crate::cache::log::{IdMap, WalkStep};

/// One step of the lock's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `commit` changed the lock's blob: from `before` (its first parent's,
    /// `None` when absent there or for a root commit) to `after`.
    Changed {
        /// The commit.
        commit: ObjectId,
        /// Its committer time.
        time: i64,
        /// Its first parent, if any.
        parent: Option<ObjectId>,
        /// The lock's blob in the first parent.
        before: Option<ObjectId>,
        /// The lock's blob in the commit.
        after: Option<ObjectId>,
    },
    /// The parents of this commit are not in the repository (shallow
    /// clone): history ends here.
    Boundary(ObjectId),
}

impl From<WalkStep> for Step {
    fn from(s: WalkStep) -> Step {
        Step::Changed {
            commit: s.commit,
            time: s.time,
            parent: s.parent,
            before: s.before,
            after: s.after,
        }
    }
}

/// The commits that changed the lock, newest first (committer time), with
/// git log's default history simplification for the lock's path: a merge
/// whose lock equals one parent's is not listed and only that parent is
/// followed; a merge whose lock differs from every parent is listed and
/// all parents are followed.
///
/// A whole walk is remembered in the log cache. A later walk that reaches
/// a remembered starting commit with nothing else queued, having followed
/// a single line of commits to it (so none it visited can be that
/// commit's ancestor), takes the rest from the cache: it is exactly what
/// walking on would find.
pub struct LogWalk {
    tip: ObjectId,
    /// Commits to visit, newest first (of one time, the greater
    /// generation first: a child before its parents), each with its lock
    /// blob.
    queue: BinaryHeap<(i64, u32, ObjectId, Option<ObjectId>)>,
    queued: IdMap<()>,
    /// True while the queue never held more than one commit.
    single_line: bool,
    /// The rest of the walk, from the cache.
    replay: Option<std::vec::IntoIter<WalkStep>>,
    /// Every step so far, to remember once the walk ends.
    steps: Vec<WalkStep>,
}

impl LogWalk {
    /// Starts at `tip`.
    pub fn new(history: &mut History, tip: ObjectId) -> Result<LogWalk> {
        let mut walk = LogWalk {
            tip,
            queue: BinaryHeap::new(),
            queued: IdMap::default(),
            single_line: true,
            replay: None,
            steps: Vec::new(),
        };
        match history.remembered_walk(tip) {
            Some(steps) => walk.replay = Some(steps.into_iter()),
            None => {
                let time = history.node(tip)?.time;
                let blob = history.lock_blob(tip)?;
                let generation = history.generation(tip)?;
                walk.push(tip, time, generation, blob);
            }
        }
        Ok(walk)
    }

    fn push(&mut self, commit: ObjectId, time: i64, generation: u32, blob: Option<ObjectId>) {
        if self.queued.insert(commit, ()).is_none() {
            self.queue.push((time, generation, commit, blob));
        }
    }

    /// The next commit that changed the lock, or the shallow boundary.
    pub fn next(&mut self, history: &mut History) -> Result<Option<Step>> {
        let step = match self.replay.as_mut() {
            Some(rest) => rest.next().map(Step::from),
            None => self.walk(history)?,
        };
        match step {
            Some(Step::Changed {
                commit,
                time,
                parent,
                before,
                after,
            }) => self.steps.push(WalkStep {
                commit,
                time,
                parent,
                before,
                after,
            }),
            // Only in a shallow repository, where no walk is remembered.
            Some(Step::Boundary(_)) => {}
            None => history.remember_walk(self.tip, std::mem::take(&mut self.steps)),
        }
        Ok(step)
    }

    fn walk(&mut self, history: &mut History) -> Result<Option<Step>> {
        while let Some((time, _, commit, blob)) = self.queue.pop() {
            if self.single_line && self.queue.is_empty() {
                if let Some(steps) = history.remembered_walk(commit) {
                    let mut rest = steps.into_iter();
                    let first = rest.next().map(Step::from);
                    self.replay = Some(rest);
                    return Ok(first);
                }
            }
            if history.is_boundary(commit) {
                return Ok(Some(Step::Boundary(commit)));
            }
            let parents = history.node(commit)?.parents.clone();
            // Each parent's time and lock blob, looked up once here and
            // carried in the queue.
            let mut seen = Vec::with_capacity(parents.len());
            for &p in &parents {
                let node = history.node(p)?;
                let (time, tree) = (node.time, node.tree);
                let generation = history.generation(p)?;
                seen.push((time, generation, history.blob_in_tree(tree, p)?));
            }
            // git's simplification follows a parent whose lock is the
            // merge's, and hides the merge. Taken from a non-first parent
            // while the first parent changed the lock since the two met,
            // the merge rolls the first parent's changes back: it is
            // listed, and every parent followed, as the hooks judge it.
            let same = match seen.iter().position(|(_, _, b)| *b == blob) {
                Some(i) if i > 0 && history.first_side_changed(&parents, i)? => None,
                other => other,
            };
            if let Some(i) = same {
                self.push(parents[i], seen[i].0, seen[i].1, seen[i].2);
            } else {
                for (&p, &(time, generation, blob)) in parents.iter().zip(&seen) {
                    self.push(p, time, generation, blob);
                }
            }
            self.single_line &= self.queue.len() <= 1;
            if same.is_some() || (parents.is_empty() && blob.is_none()) {
                continue;
            }
            return Ok(Some(Step::Changed {
                commit,
                time,
                parent: parents.first().copied(),
                before: seen.first().and_then(|(_, _, b)| *b),
                after: blob,
            }));
        }
        Ok(None)
    }
}
