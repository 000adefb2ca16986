//! The lock's history in git: which commits changed `kams.lock` (for
//! `git kams log`) and which commit gave each entry its current value
//! (for `git kams blame`).
//!
//! Both walks first compare the lock's blob id between a commit and its
//! parents: one tree lookup, no parsing, and commits that did not touch the
//! lock cost nothing more. Where the blob changed, each version is read
//! once (while among the recently used ones) and indexed: where each
//! entry's text lies. An entry whose text is byte-identical in both
//! versions has the same value; only entries whose text differs are parsed
//! and verified, and compared by value (state, descriptor digest,
//! approval), so re-indenting or re-ordering the file moves neither log nor
//! blame. What log learns is kept in the log cache ([`crate::cache::log`]), so
//! a log that was run before reads none of it again. How the walks decide,
//! and why the cache cannot change an answer, is written down in
//! `docs/history.md`.
//!
//! The rooms: `graph` (commits, generation order, the merge rule),
//! `version` (a lock version read from a blob, and comparing two), `log`
//! (the commits that changed the lock), `blame` (where each entry's value
//! came from), `ahead` (versions read on other cores) and `log_cache`
//! (what the log cache keeps for [`History`]).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, Result};
use gix::bstr::ByteSlice;
use gix::prelude::ObjectIdExt;
use gix::ObjectId;

use crate::cache::log::{CommitFacts, Contents, IdMap};
pub use crate::cache::log::{Compared, LogChange};

mod ahead;
mod blame;
mod graph;
mod log;
mod log_cache;
mod version;

use ahead::ReadAhead;
pub use blame::{blame, BlameOutcome, Blamed, EntryValue, Wanted};
pub use graph::Node;
pub use log::{LogWalk, Step};
use log_cache::{CacheFile, Section};
use version::{compare, read_blob, recent_version, Version};
pub use version::{Parsed, Versions, Which};

/// An entry's key: server, and tool (`None` for the server entry).
type Key = (String, Option<String>);

/// What a commit says about itself, for people.
#[derive(Clone, Debug)]
pub struct CommitInfo {
    /// Full id.
    pub id: ObjectId,
    /// Shortest unambiguous id (at least 7 hex digits, as git shows it).
    pub short: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    /// Committer time, RFC 3339 UTC.
    pub date: String,
    /// `Name <email>` of the author.
    pub author: String,
    /// Values of the `Signed-off-by:` trailers, in order.
    pub sign_offs: Vec<String>,
    /// True when the commit carries a signature header (not verified).
    pub signed: bool,
    /// First line of the message.
    pub subject: String,
    /// The acceptance lines of its message, as written
    /// ([`super::message::acceptance_lines`]).
    pub accepted: Vec<String>,
}

/// Reads the lock's versions out of a repository's history, caching what
/// it looked up: commits, the lock's blob id per root tree, parsed locks,
/// what changed per pair of versions.
pub struct History {
    repo: gix::Repository,
    /// The same repository, for short ids only: it never re-lists the pack
    /// folder (see [`History::new`]).
    short_ids: gix::Repository,
    /// The same repository, for lock blobs only: without the object cache
    /// (see [`History::new`]).
    blobs: gix::Repository,
    path: PathBuf,
    graph: Option<gix::commitgraph::Graph>,
    shallow: Vec<ObjectId>,
    nodes: IdMap<Node>,
    /// Generation numbers found ([`History::generation`]).
    generations: IdMap<u32>,
    /// What is known for good (the log cache's contents): lock blob per
    /// root tree, changes per pair of blobs, facts per commit.
    known: Contents,
    versions: Vec<(ObjectId, Rc<Version>)>,
    /// Versions being read on other cores ([`History::read_ahead`]);
    /// `None` until asked for, or for good on one core or where no thread
    /// could start (then `ahead_tried`).
    ahead: Option<ReadAhead>,
    ahead_tried: bool,
    /// The log cache in use, if any.
    cache: Option<CacheFile>,
    /// True once `known` holds something the cache file did not.
    learned: bool,
    reads: usize,
    /// Merge bases found, by the pair of commits asked about.
    bases: super::MergeBases,
}

impl History {
    /// Prepares to read the lock at `path` (relative to the top of the
    /// tree) in `repo`'s history.
    pub fn new(repo: &gix::Repository, path: &Path) -> Result<History> {
        let mut repo = repo.clone();
        repo.object_cache_size_if_unset(4 << 20);
        // Each short id is a prefix lookup that must see every object; by
        // default it re-lists the pack folder first, and a cached log,
        // which does little else, spent much of its time there. For short
        // ids the packs there when the run starts
        // (and the loose objects, always looked at) are enough. Other reads
        // keep refreshing, in case a `git gc` replaces the packs while a
        // long log runs.
        let mut short_ids = repo.clone();
        short_ids.objects.refresh_never();
        // Lock blobs are read once per version and kept in `versions`: in
        // the object cache each was only copied, and a lock fills much of
        // it, pushing out the commits and trees it is there for; a first
        // `log` of a clone is faster without them (figures in
        // docs/performance.md, "Eleventh pass").
        let mut blobs = repo.clone();
        blobs.object_cache_size(None);
        // The commit-graph is a cache: a broken one only makes us slower.
        let graph = repo.commit_graph_if_enabled().ok().flatten();
        let mut shallow: Vec<ObjectId> = repo
            .shallow_commits()
            .context("cannot read the list of shallow commits")?
            .map(|c| c.iter().copied().collect())
            .unwrap_or_default();
        shallow.sort_unstable();
        Ok(History {
            repo,
            short_ids,
            blobs,
            path: path.to_path_buf(),
            graph,
            shallow,
            nodes: IdMap::default(),
            generations: IdMap::default(),
            known: Contents::default(),
            versions: Vec::new(),
            ahead: None,
            ahead_tried: false,
            cache: None,
            learned: false,
            reads: 0,
            bases: super::MergeBases::default(),
        })
    }

    /// The lock's path inside the tree.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock version in blob `blob`, read and indexed once while it is
    /// among the recently used ones.
    fn version(&mut self, blob: ObjectId) -> Result<Rc<Version>> {
        let (ahead, blobs, path, reads) =
            (&mut self.ahead, &self.blobs, &self.path, &mut self.reads);
        recent_version(&mut self.versions, blob, || {
            // Read ahead, or here: where the reader could not (too large,
            // or an error), reading here says why.
            let read = match ahead.as_mut().and_then(|a| a.take(blob)) {
                Some(read) => Some(read),
                None => read_blob(blobs, blob, path)?,
            };
            *reads += usize::from(read.is_some());
            Ok(read)
        })
    }

    /// Whether [`History::changes`] of these versions will read them (what
    /// it found is not known already).
    pub fn compares(&mut self, before: Option<ObjectId>, after: Option<ObjectId>) -> bool {
        self.load_log_cache(Section::Pairs);
        !self.known.pairs.contains_key(&(before, after))
    }

    /// The whole lock in blob `blob`, parsed (digests only, every entry
    /// verified); the error says why it could not be read.
    pub fn lock(&mut self, blob: ObjectId) -> Result<Parsed> {
        Ok(self.version(blob)?.full())
    }

    /// What changed between the lock in blob `before` (a commit's first
    /// parent's; `None`: no lock) and in `after` (the commit's). Entries
    /// whose text is the same in both are not read; the others are parsed,
    /// verified and compared by value.
    pub fn changes(
        &mut self,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
    ) -> Result<Compared> {
        self.load_log_cache(Section::Pairs);
        if let Some(known) = self.known.pairs.get(&(before, after)) {
            return Ok(known.clone());
        }
        let old = before.map(|b| self.version(b)).transpose()?;
        let new = after.map(|b| self.version(b)).transpose()?;
        let compared = compare(old.as_deref(), new.as_deref());
        self.known.pairs.insert((before, after), compared.clone());
        self.learned = true;
        Ok(compared)
    }

    /// How many lock blobs were read so far.
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// Author, sign-offs, signature, subject and acceptances of `commit`.
    pub fn commit_info(&mut self, commit: ObjectId) -> Result<CommitInfo> {
        self.load_log_cache(Section::Commits);
        if !self.known.commits.contains_key(&commit) {
            let facts = self.read_commit_facts(commit)?;
            self.known.commits.insert(commit, facts);
            self.learned = true;
        }
        let facts = &self.known.commits[&commit];
        Ok(CommitInfo {
            id: commit,
            short: commit.attach(&self.short_ids).shorten_or_id().to_string(),
            time: facts.time,
            date: rfc3339(facts.time),
            author: facts.author.clone(),
            sign_offs: facts.sign_offs.clone(),
            signed: facts.signed,
            subject: facts.subject.clone(),
            accepted: facts.accepted.clone(),
        })
    }

    fn read_commit_facts(&self, commit: ObjectId) -> Result<CommitFacts> {
        super::with_commit(&self.repo, commit, |d| CommitFacts {
            time: d.time().map(|t| t.seconds).unwrap_or_default(),
            author: d
                .author()
                .map(|a| format!("{} <{}>", a.name.to_str_lossy(), a.email.to_str_lossy()))
                .unwrap_or_default(),
            sign_offs: super::sign_offs(d),
            signed: super::is_signed(d),
            subject: d
                .message
                .lines()
                .map(|l| l.to_str_lossy().trim().to_string())
                .find(|l| !l.is_empty())
                .unwrap_or_default(),
            accepted: super::message::acceptance_lines(&d.message.to_str_lossy()),
        })
    }
}

/// Seconds since the epoch as RFC 3339 UTC.
pub fn rfc3339(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| format!("@{seconds}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Descriptor;
    use crate::lock::{Approval, Entry, Lock, LockServer, State};

    pub(super) fn git(dir: &Path, date: &str, args: &[&str]) {
        let out = std::process::Command::new("git")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", "/nonexistent")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "A")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "A")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// An empty repository in a temporary folder (gone with the folder).
    pub(super) fn empty_repo() -> (tempfile::TempDir, gix::Repository) {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), "2026-01-01T00:00:00Z", &["init", "-q"]);
        let repo = gix::open(dir.path()).unwrap();
        (dir, repo)
    }

    /// Commits `files` at the given second (distinct dates keep the order).
    pub(super) fn commit(dir: &Path, second: u32, files: &[(&str, &str)]) {
        let date = format!("2026-01-01T00:00:{second:02}Z");
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        git(dir, &date, &["add", "-A"]);
        git(dir, &date, &["commit", "-q", "-m", "c"]);
    }

    pub(super) fn entry(descriptor: &str) -> Entry {
        let (v, _) = crate::json::parse(descriptor.as_bytes()).unwrap();
        Entry {
            state: State::Pinned,
            descriptor: Descriptor::new(v.as_object().unwrap().clone()).0,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: Some(
                Approval {
                    approver: "A <a@example.com>".into(),
                    at: "2026-01-01T00:00:00Z".into(),
                    note: "ok".into(),
                }
                .into(),
            ),
            lazy: Default::default(),
        }
    }

    /// A lock with one pinned tool `s/t`.
    pub(super) fn lock_text() -> String {
        let mut server = LockServer::default();
        server
            .tools
            .insert("t".into(), entry(r#"{"name":"t","description":"d"}"#));
        let mut lock = Lock::default();
        lock.servers.insert("s".into(), server);
        String::from_utf8(lock.to_text()).unwrap()
    }

    pub(super) fn values(lock: &Lock) -> Vec<(String, Option<String>, EntryValue)> {
        let mut out = Vec::new();
        for (server, s) in &lock.servers {
            if let Some(e) = &s.server {
                out.push((server.clone(), None, EntryValue::of(e)));
            }
            for (tool, e) in &s.tools {
                out.push((server.clone(), Some(tool.clone()), EntryValue::of(e)));
            }
        }
        out
    }

    #[test]
    fn each_lock_blob_is_parsed_once_and_unchanged_commits_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        git(p, "2026-01-01T00:00:00Z", &["init", "-q"]);
        // Three layouts of one lock: three blobs, one value.
        let v1 = lock_text();
        let v2 = v1.replace('\n', "\n ");
        let v3 = v1.replace('\n', "\n  ");
        commit(p, 1, &[("kams.lock", &v1)]);
        for i in 2..12 {
            commit(p, i, &[("other", &i.to_string())]);
        }
        commit(p, 12, &[("kams.lock", &v2)]);
        commit(p, 13, &[("other", "x")]);
        commit(p, 14, &[("kams.lock", &v3)]);
        commit(p, 15, &[("kams.lock", &v1)]);
        commit(p, 16, &[("other", "y")]);
        let repo = gix::open(p).unwrap();
        let tip = repo.head_id().unwrap().detach();
        let first = repo.rev_parse_single("HEAD~15").unwrap().detach();

        let mut history = History::new(&repo, Path::new("kams.lock")).unwrap();
        let mut walk = LogWalk::new(&mut history, tip).unwrap();
        let mut changed = Vec::new();
        while let Some(step) = walk.next(&mut history).unwrap() {
            let Step::Changed {
                commit,
                before,
                after,
                ..
            } = step
            else {
                panic!("not shallow")
            };
            match history.changes(before, after).unwrap() {
                Compared::Changes(c) if before.is_none() => assert_eq!(c.len(), 1),
                Compared::Changes(c) => assert!(c.is_empty(), "{c:?}"),
                other => panic!("{other:?}"),
            }
            changed.push(commit);
        }
        assert_eq!(changed.len(), 4);
        assert_eq!(changed[3], first);
        assert_eq!(history.reads(), 3);

        let mut history = History::new(&repo, Path::new("kams.lock")).unwrap();
        let blob = history.lock_blob(tip).unwrap().unwrap();
        let parsed = history.lock(blob).unwrap();
        let lock = parsed.as_ref().as_ref().unwrap();
        let wanted = vec![Wanted {
            server: "s".into(),
            tool: Some("t".into()),
            value: EntryValue::of(lock.entry("s", Some("t")).unwrap()),
        }];
        let outcome = blame(&mut history, tip, &wanted).unwrap();
        assert_eq!(
            outcome.blamed,
            vec![Blamed {
                commit: first,
                boundary: false
            }]
        );
        assert_eq!(history.reads(), 3);
    }
}
