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

use std::cell::OnceCell;
use std::collections::{BinaryHeap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use gix::bstr::ByteSlice;
use gix::prelude::ObjectIdExt;
use gix::ObjectId;

use crate::cache::log::{self as cache, CommitFacts, Contents, IdMap, WalkStep};
pub use crate::cache::log::{Compared, LogChange};
use crate::canon::{write_string, Digest, Escape};
use crate::json::{self, Value};
use crate::lock::diff::diff;
use crate::lock::{Approval, Entry, Lock, State, FORMAT_VERSION};

/// Lock versions kept at once: a linear history needs two (a commit's and
/// its parent's); merges and nearby branches a few more. Each holds the
/// lock's text, so the cache stays small.
const LOCK_CACHE: usize = 16;

/// An entry's key: server, and tool (`None` for the server entry).
type Key = (String, Option<String>);

/// One version of the lock: its text, where each entry lies in it, and,
/// when asked for, the whole lock parsed.
struct Version {
    bytes: Arc<Vec<u8>>,
    /// Entry spans sorted by key; `None` when the text is not a lock as
    /// [`index`] reads it (then only a whole parse can say what it is).
    index: Option<Vec<(Key, Range<usize>)>>,
    /// Set when the blob is not read at all (too large).
    refused: Option<String>,
    full: OnceCell<Parsed>,
}

impl Version {
    /// The version [`read_blob`] read, or one too large to read.
    fn of(read: Option<Read>) -> Version {
        match read {
            Some((bytes, index)) => Version {
                index,
                bytes: Arc::new(bytes),
                refused: None,
                full: OnceCell::new(),
            },
            None => Version {
                bytes: Arc::new(Vec::new()),
                index: None,
                refused: Some(format!(
                    "larger than {} bytes: not read",
                    crate::lock::store::MAX_LOCK_SIZE
                )),
                full: OnceCell::new(),
            },
        }
    }

    fn full(&self) -> Parsed {
        self.full
            .get_or_init(|| {
                Rc::new(match &self.refused {
                    Some(why) => Err(why.clone()),
                    None => Lock::parse_digests_only(self.bytes.clone()).map_err(lock_error),
                })
            })
            .clone()
    }

    fn span(&self, server: &str, tool: Option<&str>) -> Option<&[u8]> {
        let index = self.index.as_ref()?;
        let i = index
            .binary_search_by(|((s, t), _)| (s.as_str(), t.as_deref()).cmp(&(server, tool)))
            .ok()?;
        Some(&self.bytes[index[i].1.clone()])
    }

    /// A lock of only the `keys` present here, parsed and verified.
    fn subset(&self, keys: &[(&str, Option<&str>)]) -> Result<Lock, String> {
        if let Some(why) = &self.refused {
            return Err(why.clone());
        }
        let mut text = Vec::with_capacity(1024);
        text.extend_from_slice(b"{\"version\":1,\"servers\":{");
        let mut open: Option<&str> = None;
        for &(server, tool) in keys {
            let Some(span) = self.span(server, tool) else {
                continue;
            };
            if open != Some(server) {
                if open.is_some() {
                    text.extend_from_slice(b"}},");
                }
                write_string(server, Escape::Jcs, &mut text);
                text.extend_from_slice(b":{\"tools\":{");
                open = Some(server);
            } else if text.last() != Some(&b'{') {
                text.push(b',');
            }
            match tool {
                Some(t) => write_string(t, Escape::Jcs, &mut text),
                // The server entry, as a sibling of `tools` (read in any order).
                None => {
                    text.truncate(text.len() - b"\"tools\":{".len());
                    text.extend_from_slice(b"\"server\"");
                }
            }
            text.push(b':');
            text.extend_from_slice(span);
            if tool.is_none() {
                text.extend_from_slice(b",\"tools\":{");
            }
        }
        if open.is_some() {
            text.extend_from_slice(b"}}");
        }
        text.extend_from_slice(b"}}");
        Lock::parse_digests_only(Arc::new(text)).map_err(lock_error)
    }
}

fn lock_error(e: crate::lock::format::LockError) -> String {
    let at = e
        .pointer
        .filter(|p| !p.is_empty())
        .map(|p| format!(" (JSON pointer {p})"))
        .unwrap_or_default();
    format!("{}{at}", e.message)
}

/// Where each entry's text lies in a lock, by a structural scan that
/// builds no value and hashes nothing. `None` for anything the strict
/// reader might judge otherwise (syntax errors, unknown or duplicate keys,
/// another format version): such text is parsed whole instead.
fn index(bytes: &[u8]) -> Option<Vec<(Key, Range<usize>)>> {
    let mut r = json::Reader::new(bytes, json::MAX_DEPTH + 8).ok()?;
    let mut out: Vec<(Key, Range<usize>)> = Vec::new();
    let (mut version, mut servers) = (false, false);
    r.object(|r, key| -> Result<(), json::ParseError> {
        match key {
            "version" if !version => match r.value()? {
                Value::Number(n)
                    if n.as_f64() >= 1.0
                        && n.as_f64() <= FORMAT_VERSION as f64
                        && n.as_f64().fract() == 0.0 =>
                {
                    version = true;
                }
                _ => return Err(r.error("unexpected version")),
            },
            "servers" if version && !servers => {
                servers = true;
                r.object(|r, name| -> Result<(), json::ParseError> {
                    let mut tools = false;
                    r.object(|r, key| -> Result<(), json::ParseError> {
                        match key {
                            "server" => {
                                let start = r.offset();
                                r.skip()?;
                                out.push(((name.to_string(), None), start..r.position()));
                            }
                            "tools" if !tools => {
                                tools = true;
                                r.object(|r, tool| -> Result<(), json::ParseError> {
                                    let start = r.offset();
                                    r.skip()?;
                                    out.push((
                                        (name.to_string(), Some(tool.to_string())),
                                        start..r.position(),
                                    ));
                                    Ok(())
                                })?;
                            }
                            _ => return Err(r.error("unexpected key")),
                        }
                        Ok(())
                    })?;
                    if tools {
                        Ok(())
                    } else {
                        Err(r.error("no tools"))
                    }
                })?;
            }
            _ => return Err(r.error("unexpected key")),
        }
        Ok(())
    })
    .ok()?;
    if !r.at_end() || !version || !servers || !r.take_duplicates().is_empty() {
        return None;
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Some(out)
}

/// What changed between lock versions `old` (`None`: no lock) and `new`.
/// With both indexed, entries whose text is the same in both are not
/// read; the others are parsed, verified and compared by value.
fn compare(old: Option<&Version>, new: Option<&Version>) -> Compared {
    let none = Vec::new();
    let old_index = old.map_or(Some(&none), |v| v.index.as_ref());
    let new_index = new.map_or(Some(&none), |v| v.index.as_ref());
    let (old_lock, new_lock) = match (old_index, new_index) {
        (Some(oi), Some(ni)) => {
            let mut touched: Vec<(&str, Option<&str>)> = Vec::new();
            let (mut i, mut j) = (0, 0);
            while i < oi.len() || j < ni.len() {
                let order = match (oi.get(i), ni.get(j)) {
                    (Some(a), Some(b)) => a.0.cmp(&b.0),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    _ => std::cmp::Ordering::Greater,
                };
                let key = match order {
                    std::cmp::Ordering::Less => {
                        i += 1;
                        Some(&oi[i - 1].0)
                    }
                    std::cmp::Ordering::Greater => {
                        j += 1;
                        Some(&ni[j - 1].0)
                    }
                    std::cmp::Ordering::Equal => {
                        i += 1;
                        j += 1;
                        let same = old.zip(new).is_some_and(|(o, n)| {
                            o.bytes[oi[i - 1].1.clone()] == n.bytes[ni[j - 1].1.clone()]
                        });
                        (!same).then_some(&ni[j - 1].0)
                    }
                };
                if let Some((s, t)) = key {
                    touched.push((s.as_str(), t.as_deref()));
                }
            }
            let new_lock = match new {
                Some(v) => v.subset(&touched),
                None => Ok(Lock::default()),
            };
            let new_lock = match new_lock {
                Ok(l) => l,
                Err(message) => {
                    return Compared::Unreadable {
                        at_parent: false,
                        message,
                    }
                }
            };
            let old_lock = match old {
                Some(v) => v.subset(&touched),
                None => Ok(Lock::default()),
            };
            match old_lock {
                Ok(l) => (Rc::new(Ok(l)), Rc::new(Ok(new_lock))),
                Err(message) => {
                    return Compared::Unreadable {
                        at_parent: true,
                        message,
                    }
                }
            }
        }
        _ => {
            let empty = || Rc::new(Ok(Lock::default()));
            (
                old.map_or_else(empty, |v| v.full()),
                new.map_or_else(empty, |v| v.full()),
            )
        }
    };
    match (old_lock.as_ref(), new_lock.as_ref()) {
        (_, Err(message)) => Compared::Unreadable {
            at_parent: false,
            message: message.clone(),
        },
        (Err(message), _) => Compared::Unreadable {
            at_parent: true,
            message: message.clone(),
        },
        (Ok(o), Ok(n)) => Compared::Changes(
            diff(o, n)
                .into_iter()
                .map(|c| LogChange {
                    // A launch has an approval of its own (the server
                    // entry's is an older commit's, and would name the
                    // wrong note); one recorded before launches had one
                    // shows none, and the commit's sign-offs approve it.
                    approval: if c.kind.is_launch() {
                        n.servers
                            .get(&c.server)
                            .and_then(|s| s.launch.as_ref().and(s.launch_approval.as_ref()))
                            .map(|a| (a.approver.clone(), a.note.clone()))
                    } else {
                        c.new
                            .and_then(|e| e.approval)
                            .map(|a| (a.approver.clone(), a.note.clone()))
                    },
                    kind: c.kind,
                    server: c.server,
                    tool: c.tool,
                    fields: c.fields,
                })
                .collect(),
        ),
    }
}

/// For each of `keys`, whether its entry has the same value (state,
/// digests, first seen, approval) in lock version `a` as in `b` (`None`:
/// no lock; an entry in neither is the same). Entries whose text is the
/// same in both are not parsed. The error says why a version could not be
/// read, `true` when it is `b`.
fn same_values(
    a: Option<&Version>,
    b: Option<&Version>,
    keys: &[(&str, Option<&str>)],
) -> Result<Vec<bool>, (bool, String)> {
    let mut same: Vec<bool> = keys
        .iter()
        .map(|&(s, t)| {
            let (x, y) = (a.and_then(|a| a.span(s, t)), b.and_then(|b| b.span(s, t)));
            x.is_some() && x == y
        })
        .collect();
    let mut unsure: Vec<(&str, Option<&str>)> = keys
        .iter()
        .zip(&same)
        .filter(|(_, &same)| !same)
        .map(|(&key, _)| key)
        .collect();
    if unsure.is_empty() {
        return Ok(same);
    }
    unsure.sort_unstable();
    unsure.dedup();
    let read = |v: Option<&Version>| -> Parsed {
        match v {
            None => Rc::new(Ok(Lock::default())),
            Some(v) if v.index.is_some() => Rc::new(v.subset(&unsure)),
            Some(v) => v.full(),
        }
    };
    let (a, b) = (read(a), read(b));
    let (a, b) = match (a.as_ref(), b.as_ref()) {
        (Err(message), _) => return Err((false, message.clone())),
        (_, Err(message)) => return Err((true, message.clone())),
        (Ok(a), Ok(b)) => (a, b),
    };
    for (same, &(s, t)) in same.iter_mut().zip(keys) {
        *same = *same || a.entry(s, t) == b.entry(s, t);
    }
    Ok(same)
}

/// The version of `blob` among `recent`, made the most recent, else the
/// one `read` reads, kept there (the [`LOCK_CACHE`] most recent are).
fn recent_version(
    recent: &mut Vec<(ObjectId, Rc<Version>)>,
    blob: ObjectId,
    read: impl FnOnce() -> Result<Option<Read>>,
) -> Result<Rc<Version>> {
    if let Some(i) = recent.iter().position(|(id, _)| *id == blob) {
        let hit = recent.remove(i);
        let version = hit.1.clone();
        recent.push(hit);
        return Ok(version);
    }
    let version = Rc::new(Version::of(read()?));
    recent.push((blob, version.clone()));
    if recent.len() > LOCK_CACHE {
        recent.remove(0);
    }
    Ok(version)
}

/// Lock versions read from blobs and kept while recently used, compared
/// as [`History`] compares them: for the hooks, which judge a few commits
/// and need none of `History`'s walks, caches or extra repository handles
/// (in a pre-receive hook the pushed objects are held in the repository's
/// memory, which each handle would copy).
pub struct Versions<'r> {
    repo: &'r gix::Repository,
    path: PathBuf,
    recent: Vec<(ObjectId, Rc<Version>)>,
}

impl<'r> Versions<'r> {
    /// Versions of the lock at `path` in `repo`.
    pub fn new(repo: &'r gix::Repository, path: &Path) -> Versions<'r> {
        Versions {
            repo,
            path: path.to_path_buf(),
            recent: Vec::new(),
        }
    }

    fn version(&mut self, blob: ObjectId) -> Result<Rc<Version>> {
        let (repo, path) = (self.repo, &self.path);
        recent_version(&mut self.recent, blob, || read_blob(repo, blob, path))
    }

    /// What changed between the lock in blob `before` (`None`: no lock)
    /// and in `after`, as [`History::changes`] says.
    pub fn changes(
        &mut self,
        before: Option<ObjectId>,
        after: Option<ObjectId>,
    ) -> Result<Compared> {
        let old = before.map(|b| self.version(b)).transpose()?;
        let new = after.map(|b| self.version(b)).transpose()?;
        Ok(compare(old.as_deref(), new.as_deref()))
    }

    /// For each of `keys`, whether its entry has the same value in the
    /// lock of blob `a` as in that of blob `b` (`None`: no lock); the inner
    /// error says why a version could not be read, `true` when it is `b`'s.
    pub fn same_values(
        &mut self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
        keys: &[(&str, Option<&str>)],
    ) -> Result<Result<Vec<bool>, (bool, String)>> {
        let a = a.map(|blob| self.version(blob)).transpose()?;
        let b = b.map(|blob| self.version(blob)).transpose()?;
        Ok(same_values(a.as_deref(), b.as_deref(), keys))
    }
}

/// A lock blob's text and index, as a [`Version`] holds them.
type Read = (Vec<u8>, Option<Vec<(Key, Range<usize>)>>);

/// The text of lock blob `blob` (after any byte order mark) and its
/// [`index`]; `None` when it is larger than a lock may be.
fn read_blob(repo: &gix::Repository, blob: ObjectId, path: &Path) -> Result<Option<Read>> {
    let size = repo
        .find_header(blob)
        .with_context(|| format!("cannot read blob {blob} of {}", path.display()))?
        .size();
    if size > crate::lock::store::MAX_LOCK_SIZE {
        return Ok(None);
    }
    let object = repo
        .find_object(blob)
        .with_context(|| format!("cannot read blob {blob} of {}", path.display()))?;
    let bytes = crate::lock::store::strip_bom(object.detach().data);
    let index = index(&bytes);
    Ok(Some((bytes, index)))
}

/// Where a reader gives back each blob's text.
type Given = std::sync::mpsc::Receiver<(ObjectId, Option<Read>)>;

/// Lock versions read on other cores, each reader taking the blobs it is
/// given in order: a first `log` of a clone spends nine tenths of its time
/// decompressing and indexing versions, which do not depend on each other.
struct Ahead {
    /// Per reader: where its blobs go, and where their texts come back
    /// (`None`: it could not read one; [`History::version`] then does, and
    /// says why).
    readers: Vec<(std::sync::mpsc::Sender<ObjectId>, Given)>,
    /// The reader each blob asked for and not yet taken went to.
    asked: HashMap<ObjectId, usize>,
    /// Texts that came back before they were taken.
    arrived: HashMap<ObjectId, Option<Read>>,
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

impl Ahead {
    /// Up to `count` readers of `repo` (none when no thread can start).
    fn start(repo: &gix::Repository, path: &Path, count: usize) -> Option<Ahead> {
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
        (!readers.is_empty()).then(|| Ahead {
            readers,
            asked: HashMap::new(),
            arrived: HashMap::new(),
            next: 0,
            taken: 0,
        })
    }

    /// Versions asked for and not yet taken.
    fn outstanding(&self) -> usize {
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
    fn take(&mut self, blob: ObjectId) -> Option<Read> {
        let read = self.arrived.remove(&blob).or_else(|| self.wait(blob))?;
        self.taken += usize::from(read.is_some());
        read
    }

    /// What the reader given `blob` gave back for it (`None`: none was).
    fn wait(&mut self, blob: ObjectId) -> Option<Option<Read>> {
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

/// A lock version read from git: parsed, or why it could not be.
pub type Parsed = Rc<Result<Lock, String>>;

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
    ahead: Option<Ahead>,
    ahead_tried: bool,
    /// The log cache in use, if any.
    cache: Option<CacheFile>,
    /// True once `known` holds something the cache file did not.
    learned: bool,
    reads: usize,
    /// Merge bases found, by the pair of commits asked about.
    bases: super::MergeBases,
}

/// The log cache file of a [`History`].
struct CacheFile {
    file: PathBuf,
    /// True once read (or found missing or unusable).
    loaded: bool,
    /// What it holds, sections not yet merged into `known`.
    stored: Option<cache::Stored>,
    /// Which sections (trees, pairs, commits, walks) were merged.
    merged: [bool; 4],
}

impl History {
    /// Prepares to read the lock at `path` (relative to the top of the
    /// tree) in `repo`'s history.
    pub fn new(repo: &gix::Repository, path: &Path) -> Result<History> {
        let mut repo = repo.clone();
        repo.object_cache_size_if_unset(4 << 20);
        // Each short id is a prefix lookup that must see every object; by
        // default it re-lists the pack folder first, which was a third of a
        // cached log. For short ids the packs there when the run starts
        // (and the loose objects, always looked at) are enough. Other reads
        // keep refreshing, in case a `git gc` replaces the packs while a
        // long log runs.
        let mut short_ids = repo.clone();
        short_ids.objects.refresh_never();
        // Lock blobs are read once per version and kept in `versions`: in
        // the object cache each was only copied (a 1.5 MB lock, in a 4 MiB
        // cache), pushing out the commits and trees it is there for. The
        // first `log` of a clone of the benchmark history took 6.3-6.7 s
        // with them in it, 5.5-5.6 s without (docs/performance.md,
        // "Eleventh pass").
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

    /// Uses the log cache under the repository's common git directory
    /// (see [`cache`]), read when first needed. Not with object
    /// replacements (`refs/replace/`): an id then no longer names fixed
    /// content.
    pub fn use_log_cache(&mut self) {
        if super::replacements_apply(&self.repo) {
            return;
        }
        self.cache = Some(CacheFile {
            file: cache::file(self.repo.common_dir(), &self.path),
            loaded: false,
            stored: None,
            merged: [false; 4],
        });
    }

    /// Merges section `i` of the log cache (trees, pairs, commits, walks)
    /// into `known`, reading the file first if need be. A section that
    /// does not decode is dropped, and the file rewritten at the end.
    fn load_log_cache(&mut self, i: usize) {
        let Some(c) = self.cache.as_mut() else {
            return;
        };
        if !c.loaded {
            c.loaded = true;
            c.stored = cache::load(&c.file, self.repo.object_hash(), &self.path);
            // A missing or unusable file is replaced by what this run learns.
            self.learned |= c.stored.is_none();
        }
        if c.merged[i] {
            return;
        }
        c.merged[i] = true;
        let Some(stored) = &c.stored else {
            return;
        };
        let known = &mut self.known;
        let merged = match i {
            0 => stored.trees().map(|t| known.trees.extend(t)),
            1 => stored.pairs().map(|p| known.pairs.extend(p)),
            2 => stored.commits().map(|m| known.commits.extend(m)),
            _ => stored.walks().map(|mut w| {
                w.retain(|(tip, _)| known.walks.iter().all(|(t, _)| t != tip));
                known.walks.append(&mut w);
                known.walks.truncate(cache::WALKS);
            }),
        };
        self.learned |= merged.is_none();
    }

    /// The whole log walk from `tip` as remembered, if it is.
    fn remembered_walk(&mut self, tip: ObjectId) -> Option<Vec<WalkStep>> {
        // A shallow boundary can move (`git fetch --deepen`): walks are
        // remembered only where history is whole.
        if !self.shallow.is_empty() {
            return None;
        }
        self.load_log_cache(3);
        let walks = &self.known.walks;
        walks
            .iter()
            .find(|(t, _)| *t == tip)
            .map(|(_, steps)| steps.clone())
    }

    /// Remembers the whole log walk from `tip` (the latest first, a few).
    fn remember_walk(&mut self, tip: ObjectId, steps: Vec<WalkStep>) {
        if !self.shallow.is_empty() || self.cache.is_none() {
            return;
        }
        self.load_log_cache(3);
        let walks = &mut self.known.walks;
        if walks.first().is_some_and(|(t, _)| *t == tip) {
            return;
        }
        walks.retain(|(t, _)| *t != tip);
        walks.insert(0, (tip, steps));
        walks.truncate(cache::WALKS);
        self.learned = true;
    }

    /// Writes what this run learned to the log cache, when it learned
    /// anything and [`History::use_log_cache`] was called. The caller may
    /// ignore a failure: the cache only saves time.
    pub fn save_log_cache(&mut self) -> std::io::Result<()> {
        if !self.learned {
            return Ok(());
        }
        for i in 0..4 {
            self.load_log_cache(i);
        }
        match &self.cache {
            Some(c) => cache::store(&c.file, self.repo.object_hash(), &self.path, &self.known),
            None => Ok(()),
        }
    }

    /// The lock's path inside the tree.
    pub fn path(&self) -> &Path {
        &self.path
    }

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
                None => super::with_commit(&self.repo, commit, |d| Node {
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

    /// The lock's blob id in root tree `tree` (of `commit`, for messages).
    /// True when the lock in `parents[0]` differs from the lock where the
    /// histories of `parents[0]` and `parents[other]` meet: a merge that
    /// takes `parents[other]`'s lock then undoes what the first parent
    /// changed.
    fn first_side_changed(&mut self, parents: &[ObjectId], other: usize) -> Result<bool> {
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
    fn merge_base(&mut self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
        self.bases.of(&self.repo, a, b)
    }

    fn blob_in_tree(&mut self, tree: ObjectId, commit: ObjectId) -> Result<Option<ObjectId>> {
        self.load_log_cache(0);
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

    /// Has the lock versions a later [`History::changes`] will compare
    /// (`before`, then `after`) read on other cores from now on, those not
    /// at hand already: for a walk that knows its next steps
    /// ([`History::compares`]).
    pub fn read_ahead(&mut self, before: Option<ObjectId>, after: Option<ObjectId>) {
        if !self.ahead_tried {
            self.ahead_tried = true;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            if cores >= 2 {
                self.ahead = Ahead::start(&self.blobs, &self.path, 2);
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
    fn ahead_room(&self, most: usize) -> bool {
        match &self.ahead {
            Some(a) => a.outstanding() < most,
            None => !self.ahead_tried,
        }
    }

    /// Whether [`History::changes`] of these versions will read them (what
    /// it found is not known already).
    pub fn compares(&mut self, before: Option<ObjectId>, after: Option<ObjectId>) -> bool {
        self.load_log_cache(1);
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
        self.load_log_cache(1);
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

    /// How many lock blobs were read so far.
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// Author, sign-offs, signature, subject and acceptances of `commit`.
    pub fn commit_info(&mut self, commit: ObjectId) -> Result<CommitInfo> {
        self.load_log_cache(2);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Descriptor;
    use crate::lock::LockServer;

    fn git(dir: &Path, date: &str, args: &[&str]) {
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

    /// Commits `files` at the given second (distinct dates keep the order).
    fn commit(dir: &Path, second: u32, files: &[(&str, &str)]) {
        let date = format!("2026-01-01T00:00:{second:02}Z");
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        git(dir, &date, &["add", "-A"]);
        git(dir, &date, &["commit", "-q", "-m", "c"]);
    }

    fn entry(descriptor: &str) -> Entry {
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
    fn lock_text() -> String {
        let mut server = LockServer::default();
        server
            .tools
            .insert("t".into(), entry(r#"{"name":"t","description":"d"}"#));
        let mut lock = Lock::default();
        lock.servers.insert("s".into(), server);
        String::from_utf8(lock.to_text()).unwrap()
    }

    #[test]
    fn same_values_compares_values_not_texts() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), "2026-01-01T00:00:00Z", &["init", "-q"]);
        let repo = gix::open(dir.path()).unwrap();
        let blob = |text: &str| Some(repo.write_blob(text.as_bytes()).unwrap().detach());
        let v1 = blob(&lock_text());
        // The same value laid out otherwise: its text differs.
        let spaced = blob(&lock_text().replace("\"state\": ", "\"state\":  "));
        let other_note = blob(&lock_text().replace("\"note\": \"ok\"", "\"note\": \"ok too\""));
        let broken = blob("not a lock");
        let mut versions = Versions::new(&repo, Path::new("kams.lock"));
        let t = ("s", Some("t"));
        let x = ("s", Some("x"));
        let mut same =
            |a, b, keys: &[(&str, Option<&str>)]| versions.same_values(a, b, keys).unwrap();
        assert_ne!(v1, spaced);
        assert_eq!(same(v1, spaced, &[t, x]), Ok(vec![true, true]));
        assert_eq!(same(v1, other_note, &[x, t]), Ok(vec![true, false]));
        assert_eq!(same(v1, None, &[t, x]), Ok(vec![false, true]));
        assert_eq!(same(None, None, &[t]), Ok(vec![true]));
        // A version that cannot be read is named, when it must be read.
        assert!(matches!(same(v1, broken, &[t]), Err((true, _))));
        assert!(matches!(same(broken, v1, &[t]), Err((false, _))));
    }

    #[test]
    fn versions_asked_ahead_and_not_taken_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), "2026-01-01T00:00:00Z", &["init", "-q"]);
        let repo = gix::open(dir.path()).unwrap();
        let mut ahead = Ahead::start(&repo, Path::new("kams.lock"), 2).unwrap();
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
                history.ahead = Ahead::start(&history.blobs, &history.path, 2);
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

    fn values(lock: &Lock) -> Vec<(String, Option<String>, EntryValue)> {
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
    fn a_subset_read_through_the_index_equals_the_whole_parse() {
        // A server entry, two tools, and a layout of one's own.
        let mut server = LockServer {
            server: Some(entry(r#"{"instructions":"be \u200b nice"}"#)),
            ..LockServer::default()
        };
        for t in ["t", "\u{e9}t\u{e9}"] {
            let d = format!(r#"{{"name":"{t}","description":"d"}}"#);
            server.tools.insert(t.into(), entry(&d));
        }
        let mut lock = Lock::default();
        lock.servers.insert("s\"1".into(), server);
        let text = String::from_utf8(lock.to_text())
            .unwrap()
            .replace('\n', "\n\t");
        let bytes = text.into_bytes();
        let whole = Lock::parse_digests_only(Arc::new(bytes.clone()))
            .map_err(lock_error)
            .unwrap_or_else(|e| panic!("{e}"));
        let version = Version {
            index: index(&bytes),
            bytes: Arc::new(bytes),
            refused: None,
            full: OnceCell::new(),
        };
        let keys: Vec<(&str, Option<&str>)> = version
            .index
            .as_ref()
            .expect("indexed")
            .iter()
            .map(|((s, t), _)| (s.as_str(), t.as_deref()))
            .collect();
        assert_eq!(
            keys,
            [
                ("s\"1", None),
                ("s\"1", Some("t")),
                ("s\"1", Some("\u{e9}t\u{e9}"))
            ]
        );
        let subset = version.subset(&keys).unwrap();
        assert_eq!(values(&subset), values(&whole));
        assert_eq!(values(&subset).len(), 3);
        assert_eq!(
            values(&version.subset(&keys[1..]).unwrap()),
            values(&whole)[1..]
        );
    }

    #[test]
    fn text_the_index_cannot_vouch_for_is_left_to_the_whole_parse() {
        let text = lock_text();
        assert!(index(text.as_bytes()).is_some());
        for bad in [
            text.replacen("\"version\": 1", "\"version\": 3", 1),
            text.replacen("\"servers\": {", "\"servers\": {\"s\": {\"tools\": {}},", 1),
            text.replacen("\"version\": 1,", "\"version\": 1, \"extra\": 0,", 1),
            text.replacen("\"tools\": {", "\"tool\": {", 1),
            format!("{text}{{}}"),
            text[..text.len() - 3].to_string(),
        ] {
            assert!(index(bad.as_bytes()).is_none(), "{bad}");
        }
    }
}
