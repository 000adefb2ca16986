//! Lock versions read ahead on other cores: a walk that knows the versions
//! it will compare next has them decompressed and indexed meanwhile.

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;

use super::version::{read_blob, IndexedBlob};
use super::History;

/// Where a reader gives back each blob's text.
type Replies = std::sync::mpsc::Receiver<(ObjectId, Option<IndexedBlob>)>;

/// Lock versions read on other cores, each reader taking the blobs it is
/// given in order: a first `log` of a clone spends most of its time
/// decompressing and indexing versions, which do not depend on each other
/// (docs/performance.md, "Where the history commands' time goes").
pub(super) struct ReadAhead {
    /// Per reader: where its blobs go, and where their texts come back
    /// (`None`: it could not read one; [`History::version`] then does, and
    /// says why).
    readers: Vec<(std::sync::mpsc::Sender<ObjectId>, Replies)>,
    /// The reader each blob asked for and not yet taken went to.
    asked: HashMap<ObjectId, usize>,
    /// Texts that came back before they were taken.
    arrived: HashMap<ObjectId, Option<IndexedBlob>>,
    /// The reader the next blob goes to.
    next: usize,
    /// Texts taken as read by a reader.
    taken: usize,
}

/// Texts a reader may hold finished before they are taken (each up to a
/// lock's size).
const AHEAD_BOUND: usize = 2;

/// Versions asked for and not yet taken, at most: a walk that takes
/// versions in another order than it asked for them (blame, past a merge)
/// leaves some untaken, and these may not pile up (each up to a lock's
/// size). Log asks about nine ahead.
const AHEAD_MOST: usize = 16;

impl ReadAhead {
    /// Up to `count` readers of `repo` (none when no thread can start).
    fn start(repo: &gix::Repository, path: &Path, count: usize) -> Option<ReadAhead> {
        let mut readers = Vec::new();
        for _ in 0..count {
            let (ask, asked) = std::sync::mpsc::channel::<ObjectId>();
            let (give, given) = std::sync::mpsc::sync_channel(AHEAD_BOUND);
            let repo = repo.clone().into_sync();
            let path = path.to_path_buf();
            let reader = move || {
                let repo = repo.to_thread_local();
                for blob in asked {
                    let read = read_blob(&repo, blob, &path).ok().flatten();
                    if give.send((blob, read)).is_err() {
                        break;
                    }
                }
            };
            // Detached: it ends when its History drops its sender, after
            // the blob in hand.
            if std::thread::Builder::new().spawn(reader).is_ok() {
                readers.push((ask, given));
            }
        }
        (!readers.is_empty()).then(|| ReadAhead {
            readers,
            asked: HashMap::new(),
            arrived: HashMap::new(),
            next: 0,
            taken: 0,
        })
    }

    /// Versions asked for and not yet taken.
    pub(super) fn outstanding(&self) -> usize {
        self.asked.len() + self.arrived.len()
    }

    /// Gives `blob` to the next reader, unless [`AHEAD_MOST`] are out.
    fn ask(&mut self, blob: ObjectId) {
        if self.asked.contains_key(&blob)
            || self.arrived.contains_key(&blob)
            || self.outstanding() >= AHEAD_MOST
        {
            return;
        }
        let i = self.next % self.readers.len();
        if self.readers[i].0.send(blob).is_ok() {
            self.asked.insert(blob, i);
            self.next += 1;
        }
    }

    /// The text of `blob` when a reader was given it and read it, waiting
    /// for it; `None` when none was, or it could not.
    pub(super) fn take(&mut self, blob: ObjectId) -> Option<IndexedBlob> {
        let read = self.arrived.remove(&blob).or_else(|| self.wait(blob))?;
        self.taken += usize::from(read.is_some());
        read
    }

    /// What the reader given `blob` gave back for it (`None`: none was).
    fn wait(&mut self, blob: ObjectId) -> Option<Option<IndexedBlob>> {
        let i = self.asked.remove(&blob)?;
        // A reader answers in the order it was asked: what comes first was
        // asked for before this blob, and is kept until taken.
        while let Ok((id, read)) = self.readers[i].1.recv() {
            if id == blob {
                return Some(read);
            }
            self.asked.remove(&id);
            self.arrived.insert(id, read);
        }
        None
    }
}

impl History {
    /// Has the lock versions a later [`History::changes`] will compare
    /// (`before`, then `after`) read on other cores from now on, those not
    /// at hand already: for a walk that knows its next steps
    /// ([`History::compares`]).
    pub fn read_ahead(&mut self, before: Option<ObjectId>, after: Option<ObjectId>) {
        if !self.ahead_tried {
            self.ahead_tried = true;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            if cores >= 2 {
                self.ahead = ReadAhead::start(&self.blobs, &self.path, 2);
            }
        }
        let Some(ahead) = self.ahead.as_mut() else {
            return;
        };
        for blob in [before, after].into_iter().flatten() {
            if !self.versions.iter().any(|(id, _)| *id == blob) {
                ahead.ask(blob);
            }
        }
    }

    /// Whether versions asked for now would be read ahead: read-ahead
    /// works here, and fewer than `most` are out.
    pub(super) fn ahead_room(&self, most: usize) -> bool {
        match &self.ahead {
            Some(a) => a.outstanding() < most,
            None => !self.ahead_tried,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{commit, empty_repo, git, lock_text};
    use super::super::{Compared, LogWalk, Step};
    use super::*;

    #[test]
    fn versions_asked_ahead_and_not_taken_are_bounded() {
        let (_dir, repo) = empty_repo();
        let mut ahead = ReadAhead::start(&repo, Path::new("kams.lock"), 2).unwrap();
        // Blobs this repository does not have: each reader gives back none.
        let blob = |i: u8| ObjectId::from_bytes_or_panic(&[i; 20]);
        for i in 0..20 {
            ahead.ask(blob(i));
        }
        assert_eq!(ahead.outstanding(), AHEAD_MOST);
        assert!(ahead.asked.contains_key(&blob(15)) && !ahead.asked.contains_key(&blob(16)));
        // Taking one (and waiting past those its reader was given first)
        // makes room for one more.
        assert!(ahead.take(blob(2)).is_none(), "not read, read here");
        assert_eq!(ahead.outstanding(), AHEAD_MOST - 1);
        ahead.ask(blob(16));
        assert_eq!(ahead.outstanding(), AHEAD_MOST);
        ahead.ask(blob(17));
        assert_eq!(ahead.outstanding(), AHEAD_MOST);
    }

    #[test]
    fn versions_read_ahead_compare_as_versions_read_here() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        git(p, "2026-01-01T00:00:00Z", &["init", "-q"]);
        // Each version another value; one not a lock at all, which the
        // readers read and whose error is the one read here.
        for i in 1..10u32 {
            let text = match i {
                5 => "not a lock".to_string(),
                _ => lock_text().replace("\"d\"", &format!("\"d{i}\"")),
            };
            commit(p, i, &[("kams.lock", &text)]);
        }
        let repo = gix::open(p).unwrap();
        let tip = repo.head_id().unwrap().detach();
        let compared = |ahead: bool| {
            let mut history = History::new(&repo, Path::new("kams.lock")).unwrap();
            let mut walk = LogWalk::new(&mut history, tip).unwrap();
            let mut steps = Vec::new();
            while let Some(Step::Changed { before, after, .. }) = walk.next(&mut history).unwrap() {
                steps.push((before, after));
            }
            if ahead {
                // Two readers whatever the machine has.
                history.ahead = ReadAhead::start(&history.blobs, &history.path, 2);
                history.ahead_tried = true;
                // Asked for oldest first, taken newest first: each reader's
                // texts come back in another order than they are taken.
                for &(before, after) in steps.iter().rev() {
                    history.read_ahead(before, after);
                }
            }
            let out: Vec<Compared> = steps
                .iter()
                .map(|&(before, after)| history.changes(before, after).unwrap())
                .collect();
            if let Some(a) = &history.ahead {
                assert!(
                    a.asked.is_empty() && a.arrived.is_empty(),
                    "every text taken"
                );
                assert_eq!(a.taken, 9, "every version read ahead");
            }
            // Each version holds its own blob's text.
            assert_eq!(history.versions.len(), 9);
            for (blob, version) in &history.versions {
                let text = repo.find_object(*blob).unwrap().detach().data;
                assert_eq!(*version.bytes, text, "{blob}");
            }
            (out, history.reads())
        };
        let (here, reads) = compared(false);
        assert_eq!(here.len(), 9);
        assert_eq!(reads, 9);
        assert!(here
            .iter()
            .any(|c| matches!(c, Compared::Unreadable { .. })));
        assert_eq!(compared(true), (here, reads));
    }
}
