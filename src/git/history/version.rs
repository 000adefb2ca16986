//! One version of the lock as the history commands read it out of a blob:
//! its text and where each entry lies in it, so that two versions are
//! compared by parsing only the entries whose text differs; and
//! [`Versions`], the few recent ones the hooks compare without a
//! [`History`](super::History).

use std::cell::OnceCell;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use anyhow::{Context, Result};
use gix::ObjectId;

use super::Key;
use super::{Compared, LogChange};
use crate::canon::{write_string, Escape};
use crate::json::{self, Value};
use crate::lock::diff::diff;
use crate::lock::{Lock, FORMAT_VERSION};

/// Lock versions kept at once: a linear history needs two (a commit's and
/// its parent's); merges and nearby branches a few more. Each holds the
/// lock's text, so the cache stays small.
const RECENT_VERSIONS: usize = 16;

/// A lock version read from git: parsed, or why it could not be.
pub type Parsed = Rc<Result<Lock, String>>;

/// One version of the lock: its text, where each entry lies in it, and,
/// when asked for, the whole lock parsed.
pub(super) struct Version {
    pub(super) bytes: Arc<Vec<u8>>,
    /// Entry spans sorted by key; `None` when the text is not a lock as
    /// [`index`] reads it (then only a whole parse can say what it is).
    pub(super) index: Option<Vec<(Key, Range<usize>)>>,
    /// Set when the blob is not read at all (too large).
    pub(super) refused: Option<String>,
    pub(super) full: OnceCell<Parsed>,
}

impl Version {
    /// The version [`read_blob`] read, or one too large to read.
    fn of(read: Option<IndexedBlob>) -> Version {
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
                    crate::lock::MAX_LOCK_SIZE
                )),
                full: OnceCell::new(),
            },
        }
    }

    pub(super) fn full(&self) -> Parsed {
        self.full
            .get_or_init(|| {
                Rc::new(match &self.refused {
                    Some(why) => Err(why.clone()),
                    None => Lock::parse_digests_only(self.bytes.clone()).map_err(lock_error),
                })
            })
            .clone()
    }

    pub(super) fn span(&self, server: &str, tool: Option<&str>) -> Option<&[u8]> {
        let index = self.index.as_ref()?;
        let i = index
            .binary_search_by(|((s, t), _)| (s.as_str(), t.as_deref()).cmp(&(server, tool)))
            .ok()?;
        Some(&self.bytes[index[i].1.clone()])
    }

    /// A lock of only the `keys` present here, parsed and verified.
    pub(super) fn subset(&self, keys: &[(&str, Option<&str>)]) -> Result<Lock, String> {
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
pub(super) fn compare(old: Option<&Version>, new: Option<&Version>) -> Compared {
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
/// read, and which.
fn same_values(
    a: Option<&Version>,
    b: Option<&Version>,
    keys: &[(&str, Option<&str>)],
) -> Result<Vec<bool>, (Which, String)> {
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
        (Err(message), _) => return Err((Which::A, message.clone())),
        (_, Err(message)) => return Err((Which::B, message.clone())),
        (Ok(a), Ok(b)) => (a, b),
    };
    for (same, &(s, t)) in same.iter_mut().zip(keys) {
        *same = *same || a.entry(s, t) == b.entry(s, t);
    }
    Ok(same)
}

/// The version of `blob` among `recent`, made the most recent, else the
/// one `read` reads, kept there (the [`RECENT_VERSIONS`] most recent are).
pub(super) fn recent_version(
    recent: &mut Vec<(ObjectId, Rc<Version>)>,
    blob: ObjectId,
    read: impl FnOnce() -> Result<Option<IndexedBlob>>,
) -> Result<Rc<Version>> {
    if let Some(i) = recent.iter().position(|(id, _)| *id == blob) {
        let hit = recent.remove(i);
        let version = hit.1.clone();
        recent.push(hit);
        return Ok(version);
    }
    let version = Rc::new(Version::of(read()?));
    recent.push((blob, version.clone()));
    if recent.len() > RECENT_VERSIONS {
        recent.remove(0);
    }
    Ok(version)
}

/// Which of two lock versions compared, `a` or `b`, could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The first one given.
    A,
    /// The second one given.
    B,
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
    /// error says why a version could not be read, and which.
    pub fn same_values(
        &mut self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
        keys: &[(&str, Option<&str>)],
    ) -> Result<Result<Vec<bool>, (Which, String)>> {
        let a = a.map(|blob| self.version(blob)).transpose()?;
        let b = b.map(|blob| self.version(blob)).transpose()?;
        Ok(same_values(a.as_deref(), b.as_deref(), keys))
    }
}

/// A lock blob's text and index, as a [`Version`] holds them.
pub(super) type IndexedBlob = (Vec<u8>, Option<Vec<(Key, Range<usize>)>>);

/// The text of lock blob `blob` (after any byte order mark) and its
/// [`index`]; `None` when it is larger than a lock may be.
pub(super) fn read_blob(
    repo: &gix::Repository,
    blob: ObjectId,
    path: &Path,
) -> Result<Option<IndexedBlob>> {
    let size = repo
        .find_header(blob)
        .with_context(|| format!("cannot read blob {blob} of {}", path.display()))?
        .size();
    if size > crate::lock::MAX_LOCK_SIZE {
        return Ok(None);
    }
    let object = repo
        .find_object(blob)
        .with_context(|| format!("cannot read blob {blob} of {}", path.display()))?;
    let bytes = crate::bytes::strip_bom(object.detach().data);
    let index = index(&bytes);
    Ok(Some((bytes, index)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{empty_repo, entry, lock_text, values};
    use super::*;
    use crate::lock::LockServer;

    #[test]
    fn same_values_compares_values_not_texts() {
        let (_dir, repo) = empty_repo();
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
        assert!(matches!(same(v1, broken, &[t]), Err((Which::B, _))));
        assert!(matches!(same(broken, v1, &[t]), Err((Which::A, _))));
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
            text.replacen(
                "\"version\": 1",
                &format!("\"version\": {}", FORMAT_VERSION + 1),
                1,
            ),
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
