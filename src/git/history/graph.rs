//! The commits as the walks see them: parents, time and tree (from the
//! commit-graph when there is one), generation numbers that order commits
//! of one time child first, the lock's blob in each tree, and the merge
//! rule log and blame share.

use anyhow::{Context, Result};
use gix::ObjectId;

use super::log_cache::Section;
use super::History;

/// A commit as the walks see it.
#[derive(Clone, Debug)]
pub struct Node {
    /// Committer time, seconds since the epoch.
    pub time: i64,
    /// Parent ids, first parent first.
    pub parents: Vec<ObjectId>,
    /// The root tree.
    pub tree: ObjectId,
}

impl History {
    /// True when `commit`'s parents are cut off (the boundary of a shallow
    /// clone): history ends there.
    pub fn is_boundary(&self, commit: ObjectId) -> bool {
        self.shallow.binary_search(&commit).is_ok()
    }

    /// `commit`'s generation: 1 for a root (or a shallow boundary), else
    /// one more than its parents' greatest, so a commit's is always
    /// greater than each of its ancestors'. The walks order commits of one
    /// committer time by it, so that no parent comes before its child.
    /// Found once per commit, without recursion, for all of its ancestry.
    pub fn generation(&mut self, commit: ObjectId) -> Result<u32> {
        let mut stack = vec![(commit, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.generations.contains_key(&id) {
                continue;
            }
            // A commit-graph (written by `git gc` and fetches) has them:
            // then the walk reads no history for them.
            let graphed = self
                .graph
                .as_ref()
                .and_then(|g| g.commit_by_id(id))
                .map(|c| c.generation())
                .filter(|&g| g > 0 && !self.is_boundary(id));
            if let Some(g) = graphed {
                self.generations.insert(id, g);
                continue;
            }
            let parents = if self.is_boundary(id) {
                Vec::new()
            } else {
                self.node(id)?.parents.clone()
            };
            if expanded {
                let g = parents
                    .iter()
                    .filter_map(|p| self.generations.get(p))
                    .max()
                    .map_or(1, |g| g + 1);
                self.generations.insert(id, g);
                continue;
            }
            stack.push((id, true));
            for p in parents {
                if !self.generations.contains_key(&p) {
                    stack.push((p, false));
                }
            }
        }
        Ok(self.generations[&commit])
    }

    /// Parents, time and tree of `commit`, from the commit-graph when it
    /// has the commit, else from the commit itself.
    pub fn node(&mut self, commit: ObjectId) -> Result<&Node> {
        if !self.nodes.contains_key(&commit) {
            let node = match self.node_from_graph(commit) {
                Some(n) => n,
                None => crate::git::with_commit(&self.repo, commit, |d| Node {
                    time: d.time().map(|t| t.seconds).unwrap_or_default(),
                    parents: d.parents().collect(),
                    tree: d.tree(),
                })?,
            };
            self.nodes.insert(commit, node);
        }
        Ok(&self.nodes[&commit])
    }

    fn node_from_graph(&self, commit: ObjectId) -> Option<Node> {
        let graph = self.graph.as_ref()?;
        let c = graph.commit_by_id(commit)?;
        let parents = c
            .iter_parents()
            .map(|p| p.map(|pos| graph.id_at(pos).to_owned()))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        Some(Node {
            time: i64::try_from(c.committer_timestamp()).ok()?,
            parents,
            tree: c.root_tree_id().to_owned(),
        })
    }

    /// The lock's blob id in `commit`'s tree (`None`: no lock there, or
    /// something other than a file at its path).
    pub fn lock_blob(&mut self, commit: ObjectId) -> Result<Option<ObjectId>> {
        let tree = self.node(commit)?.tree;
        self.blob_in_tree(tree, commit)
    }

    /// True when the lock in `parents[0]` differs from the lock where the
    /// histories of `parents[0]` and `parents[other]` meet: a merge that
    /// takes `parents[other]`'s lock then undoes what the first parent
    /// changed.
    pub(super) fn first_side_changed(
        &mut self,
        parents: &[ObjectId],
        other: usize,
    ) -> Result<bool> {
        let (first, side) = (parents[0], parents[other]);
        let base = self.merge_base(first, side)?;
        let at_first = self.lock_blob(first)?;
        Ok(match base {
            Some(b) => self.lock_blob(b)? != at_first,
            None => at_first.is_some(),
        })
    }

    /// Where the histories of `a` and `b` meet (`None`: nowhere),
    /// remembered: log's walk and blame both ask it of the same merges.
    pub(super) fn merge_base(&mut self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        self.bases.of(&self.repo, a, b)
    }

    /// The lock's blob id in root tree `tree` (of `commit`, for messages).
    pub(super) fn blob_in_tree(
        &mut self,
        tree: ObjectId,
        commit: ObjectId,
    ) -> Result<Option<ObjectId>> {
        self.load_log_cache(Section::Trees);
        if let Some(b) = self.known.trees.get(&tree) {
            return Ok(*b);
        }
        let entry = self
            .repo
            .find_tree(tree)
            .and_then(|t| t.lookup_entry_by_path(&self.path))
            .with_context(|| {
                format!("cannot look up {} in commit {commit}", self.path.display())
            })?;
        let blob = entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id());
        self.known.trees.insert(tree, blob);
        self.learned = true;
        Ok(blob)
    }
}
