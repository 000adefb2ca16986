//! The log cache: what `git kams log` learned about the lock's history,
//! kept under the repository's common git directory so the next run need
//! not read 2,000 versions of the lock again (as git's commit-graph keeps
//! commit metadata so that `git log` need not parse commits).
//!
//! It holds only answers that are functions of object ids, so it can never
//! be out of date, only incomplete: the lock's blob id per root tree id
//! (for one lock path), the entry changes per pair of lock blob ids, what
//! log shows of a commit (author, sign-offs, subject, acceptances) per commit id, and
//! the whole walk of log from its last few starting commits (the commits
//! that changed the lock, with their blobs), valid because a commit's
//! ancestry never changes.
//! Anything a run cannot decode and check (truncated, corrupt, another
//! version of git-kams, another hash or lock path) is ignored and written
//! anew; a run that cannot write it (read-only) carries on without it.
//! `docs/history.md` describes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use std::borrow::Cow;

use gix::ObjectId;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::codec::{self, Encoder};
use super::store;
use crate::lock::diff::ChangeKind;

/// The log cache files (one per lock path). The magic number is the
/// layout's version:
// 2: walks list a merge that takes a parent's lock back over its first
// parent's changes (a rollback); 3: a launch change carries no entry's
// approval; 4: a commit's facts hold its acceptance lines; 6: the header
// is the one every cache file has ([`store::Named::begin`]); 7: the
// sections are postcard records. What was remembered before is not reused.
const LOG: store::Named = store::Named {
    prefix: "log-",
    magic: b"kams-log\0\0\0\x07",
    keep: store::Named::KEEP,
};

/// A larger file is not read (and so is replaced by one holding only what
/// the next run learns): it bounds what rewritten histories leave behind.
const MAX_SIZE: u64 = 256 << 20;

/// Every change kind, to read one back by its name.
const KINDS: [ChangeKind; 13] = ChangeKind::ALL;

/// One entry change as `log` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogChange {
    /// What happened.
    #[serde(with = "kind")]
    pub kind: ChangeKind,
    /// Server name.
    pub server: String,
    /// Tool name; `None` for the server entry.
    pub tool: Option<String>,
    /// The fields whose digest changed, or `launch`.
    #[serde(with = "fields")]
    pub fields: Vec<&'static str>,
    /// Approver and note recorded in the new version of the entry.
    pub approval: Option<(String, String)>,
}

impl LogChange {
    /// `server` or `server/tool`.
    pub fn subject(&self) -> String {
        match &self.tool {
            Some(t) => format!("{}/{t}", self.server),
            None => self.server.clone(),
        }
    }
}

/// What a commit did to the lock's entries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compared {
    /// The entries whose value changed, as [`crate::lock::diff::diff`] says.
    Changes(Vec<LogChange>),
    /// A version could not be read: the commit's own (`at_parent` false)
    /// or its first parent's.
    Unreadable {
        /// True when the parent's version is the unreadable one.
        at_parent: bool,
        /// Why.
        message: String,
    },
}

/// A pair of lock blobs: a commit's first parent's and its own (`None`:
/// no lock there).
pub type Pair = (Option<ObjectId>, Option<ObjectId>);

/// A map keyed by object id (hashed by its first bytes: ids are hashes).
pub type IdMap<V> = gix::hashtable::HashMap<ObjectId, V>;

/// What log shows of a commit, besides its id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitFacts {
    /// Committer time, seconds since the epoch.
    pub time: i64,
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

/// The cache's contents: the lock's blob per root tree, what changed per
/// pair of lock blobs, and what log shows per commit.
#[derive(Debug, Default, PartialEq)]
pub struct Contents {
    /// Root tree id to the lock's blob id in it (`None`: no lock file).
    pub trees: IdMap<Option<ObjectId>>,
    /// Pair of lock blobs to what changed between them.
    pub pairs: HashMap<Pair, Compared>,
    /// Commit id to what log shows of it.
    pub commits: IdMap<CommitFacts>,
    /// Whole walks of log, most recent first: the starting commit and
    /// every step (never a shallow boundary).
    pub walks: Vec<(ObjectId, Vec<WalkStep>)>,
}

/// How many whole walks are kept: the branches one switches between.
pub const WALKS: usize = 4;

/// A commit that changed the lock's blob, as log's walk finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkStep {
    /// The commit.
    #[serde(with = "codec::id")]
    pub commit: ObjectId,
    /// Its committer time.
    pub time: i64,
    /// Its first parent, if any.
    #[serde(with = "codec::opt_id")]
    pub parent: Option<ObjectId>,
    /// The lock's blob in the first parent.
    #[serde(with = "codec::opt_id")]
    pub before: Option<ObjectId>,
    /// The lock's blob in the commit.
    #[serde(with = "codec::opt_id")]
    pub after: Option<ObjectId>,
}

/// A row of the trees section: a root tree and the lock's blob in it.
#[derive(Serialize, Deserialize)]
struct TreeRow {
    #[serde(with = "codec::id")]
    tree: ObjectId,
    #[serde(with = "codec::opt_id")]
    blob: Option<ObjectId>,
}

/// A row of the pairs section: two lock blobs and what changed.
#[derive(Serialize, Deserialize)]
struct PairRow<'a> {
    #[serde(with = "codec::opt_id")]
    before: Option<ObjectId>,
    #[serde(with = "codec::opt_id")]
    after: Option<ObjectId>,
    compared: Cow<'a, Compared>,
}

/// A row of the commits section.
#[derive(Serialize, Deserialize)]
struct CommitRow<'a> {
    #[serde(with = "codec::id")]
    commit: ObjectId,
    facts: Cow<'a, CommitFacts>,
}

/// A row of the walks section: where a walk started, and its steps.
#[derive(Serialize, Deserialize)]
struct WalkRow<'a> {
    #[serde(with = "codec::id")]
    tip: ObjectId,
    steps: Cow<'a, [WalkStep]>,
}

/// The cache file for the lock at `lock_path` in the repository whose
/// common git directory is `common_dir` (shared by its worktrees).
pub fn file(common_dir: &Path, lock_path: &Path) -> PathBuf {
    // Not `LOG.file`: `.idx` names the indexes, which `kams.indexCache`
    // governs, and this cache is `kams.logCache`'s.
    common_dir
        .join("kams")
        .join(format!("log-{}.cache", name(lock_path)))
}

/// The name of the cache of the lock at `lock_path`.
fn name(lock_path: &Path) -> String {
    let digest = Sha256::digest(lock_path.as_os_str().as_encoded_bytes());
    crate::canon::hex(&digest[..8])
}

/// A cache file read and checked (checksum, layout version, writer, hash,
/// lock path); each section is decoded, and its structure checked, when
/// first asked for: a cached log needs only the walks, not the 10,000
/// trees.
pub struct Stored {
    bytes: crate::input::Input,
    sections: [std::ops::Range<usize>; 4],
}

/// Reads the cache at `file`, written for ids of `hash` and the lock at
/// `lock_path`. `None` when it is missing or not such a file.
pub fn load(file: &Path, hash: gix::hash::Kind, lock_path: &Path) -> Option<Stored> {
    open(store::read(file, MAX_SIZE)?, hash, lock_path)
}

fn open(bytes: crate::input::Input, hash: gix::hash::Kind, lock_path: &Path) -> Option<Stored> {
    let mut r = LOG.open(&bytes, &name(lock_path))?;
    let body_len = bytes.len() - store::SEAL_LEN;
    if usize::from(r.u8()?) != hash.len_in_bytes()
        || r.bytes()? != lock_path.as_os_str().as_encoded_bytes()
    {
        return None;
    }
    let mut lengths = [0usize; 4];
    for l in &mut lengths {
        *l = r.count()?;
    }
    let mut start = body_len - r.rest.len();
    let sections = lengths.map(|l| {
        let range = start..start + l;
        start += l;
        range
    });
    (start == body_len).then_some(Stored { sections, bytes })
}

impl Stored {
    /// Section `i`'s rows, which must be all of it.
    fn section<'a, R: Deserialize<'a>>(&'a self, i: usize) -> Option<codec::Rows<'a, R>> {
        codec::rows(&self.bytes[self.sections[i].clone()])
    }

    /// Root tree id to the lock's blob id; `None` when malformed.
    pub fn trees(&self) -> Option<IdMap<Option<ObjectId>>> {
        let rows = self.section::<TreeRow>(0)?;
        let mut map = IdMap::default();
        map.reserve(rows.size_hint().0);
        for r in rows {
            let r = r?;
            map.insert(r.tree, r.blob);
        }
        Some(map)
    }

    /// Pair of lock blobs to what changed; `None` when malformed.
    pub fn pairs(&self) -> Option<HashMap<Pair, Compared>> {
        let rows = self.section::<PairRow>(1)?;
        let mut map = HashMap::with_capacity(rows.size_hint().0);
        for r in rows {
            let r = r?;
            map.insert((r.before, r.after), r.compared.into_owned());
        }
        Some(map)
    }

    /// Commit id to what log shows of it; `None` when malformed.
    pub fn commits(&self) -> Option<IdMap<CommitFacts>> {
        let rows = self.section::<CommitRow>(2)?;
        let mut map = IdMap::default();
        map.reserve(rows.size_hint().0);
        for r in rows {
            let r = r?;
            map.insert(r.commit, r.facts.into_owned());
        }
        Some(map)
    }

    /// The remembered walks; `None` when malformed.
    pub fn walks(&self) -> Option<Vec<(ObjectId, Vec<WalkStep>)>> {
        let walks = self
            .section::<WalkRow>(3)?
            .map(|r| r.map(|r| (r.tip, r.steps.into_owned())))
            .collect::<Option<Vec<_>>>()?;
        (walks.len() <= WALKS).then_some(walks)
    }
}

/// Writes `contents` to `file` through a temporary file and a rename, so a
/// reader sees the old file or the new one, never half of one.
pub fn store(
    file: &Path,
    hash: gix::hash::Kind,
    lock_path: &Path,
    contents: &Contents,
) -> std::io::Result<()> {
    store::write(file, "log", &encode(contents, hash, lock_path))
}

/// The file's bytes: the header every cache file has (magic, writer,
/// name), id length, lock path, the lengths of the four sections, the
/// sections (trees, pairs, commits, walks), then the seal over all that
/// (so truncation and corruption show). Maps are
/// written sorted, so equal contents make equal files.
fn encode(contents: &Contents, hash: gix::hash::Kind, lock_path: &Path) -> Vec<u8> {
    let mut trees = Encoder(Vec::with_capacity(4 + contents.trees.len() * 48));
    let mut sorted: Vec<_> = contents.trees.iter().collect();
    sorted.sort_unstable();
    let rows: Vec<TreeRow> = sorted
        .into_iter()
        .map(|(tree, blob)| TreeRow {
            tree: *tree,
            blob: *blob,
        })
        .collect();
    trees.record(&rows);

    let mut pairs = Encoder(Vec::with_capacity(4 + contents.pairs.len() * 160));
    let mut sorted: Vec<_> = contents.pairs.iter().collect();
    sorted.sort_unstable_by_key(|(k, _)| **k);
    let rows: Vec<PairRow> = sorted
        .into_iter()
        .map(|((before, after), compared)| PairRow {
            before: *before,
            after: *after,
            compared: Cow::Borrowed(compared),
        })
        .collect();
    pairs.record(&rows);

    let mut commits = Encoder(Vec::with_capacity(4 + contents.commits.len() * 160));
    let mut sorted: Vec<_> = contents.commits.iter().collect();
    sorted.sort_unstable_by_key(|(k, _)| **k);
    let rows: Vec<CommitRow> = sorted
        .into_iter()
        .map(|(commit, facts)| CommitRow {
            commit: *commit,
            facts: Cow::Borrowed(facts),
        })
        .collect();
    commits.record(&rows);

    let mut walks = Encoder(Vec::new());
    let rows: Vec<WalkRow> = contents
        .walks
        .iter()
        .map(|(tip, steps)| WalkRow {
            tip: *tip,
            steps: Cow::Borrowed(steps),
        })
        .collect();
    walks.record(&rows);

    let sections = [trees.0, pairs.0, commits.0, walks.0];
    let mut out = LOG.begin(
        &name(lock_path),
        256 + sections.iter().map(Vec::len).sum::<usize>(),
    );
    out.0.push(hash.len_in_bytes() as u8);
    out.bytes(lock_path.as_os_str().as_encoded_bytes());
    for section in &sections {
        out.u32(section.len());
    }
    for section in &sections {
        out.0.extend_from_slice(section);
    }
    store::seal(out.0)
}

#[cfg(test)]
fn decode(bytes: &[u8], hash: gix::hash::Kind, lock_path: &Path) -> Option<Contents> {
    let stored = open(bytes.to_vec().into(), hash, lock_path)?;
    Some(Contents {
        trees: stored.trees()?,
        pairs: stored.pairs()?,
        commits: stored.commits()?,
        walks: stored.walks()?,
    })
}

/// A change's kind, by its name (`#[serde(with = "kind")]`).
mod kind {
    use super::*;

    pub fn serialize<S: serde::Serializer>(kind: &ChangeKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.as_str())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ChangeKind, D::Error> {
        let name = <&str>::deserialize(d)?;
        KINDS
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom("an unknown change kind"))
    }
}

/// A change's fields, by their names, each a descriptor field or
/// `launch` (`#[serde(with = "fields")]`).
mod fields {
    use super::*;

    pub fn serialize<S: serde::Serializer>(
        fields: &[&'static str],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        fields.serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<&'static str>, D::Error> {
        <Vec<&str>>::deserialize(d)?
            .into_iter()
            .map(|f| match f {
                "launch" => Some("launch"),
                f => crate::descriptor::field_name(f),
            })
            .collect::<Option<_>>()
            .ok_or_else(|| serde::de::Error::custom("an unknown field"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn sample() -> Contents {
        let mut c = Contents::default();
        c.trees.insert(id(1), Some(id(2)));
        c.trees.insert(id(3), None);
        c.pairs.insert(
            (None, Some(id(2))),
            Compared::Changes(vec![
                LogChange {
                    kind: ChangeKind::Repinned,
                    server: "s\u{e9}".into(),
                    tool: Some("t".into()),
                    fields: vec!["description", "name"],
                    approval: Some(("A <a@x>".into(), "ok".into())),
                },
                LogChange {
                    kind: ChangeKind::LaunchChanged,
                    server: "s".into(),
                    tool: None,
                    fields: vec!["launch"],
                    approval: None,
                },
            ]),
        );
        c.pairs.insert(
            (Some(id(2)), Some(id(4))),
            Compared::Unreadable {
                at_parent: false,
                message: "bad".into(),
            },
        );
        c.pairs.insert(
            (Some(id(4)), None),
            Compared::Unreadable {
                at_parent: true,
                message: "worse".into(),
            },
        );
        c.commits.insert(
            id(5),
            CommitFacts {
                time: -1,
                author: "A <a@x>".into(),
                sign_offs: vec!["A <a@x>".into(), "B <b@x>".into()],
                signed: true,
                subject: "pin".into(),
                accepted: vec!["accepted  high poison a/b /description: m".into()],
            },
        );
        c.walks.push((
            id(5),
            vec![
                WalkStep {
                    commit: id(5),
                    time: 7,
                    parent: Some(id(6)),
                    before: Some(id(2)),
                    after: Some(id(4)),
                },
                WalkStep {
                    commit: id(6),
                    time: 6,
                    parent: None,
                    before: None,
                    after: Some(id(2)),
                },
            ],
        ));
        c.walks.push((id(7), Vec::new()));
        c
    }

    const SHA1: gix::hash::Kind = gix::hash::Kind::Sha1;

    #[test]
    fn contents_round_trip() {
        let bytes = encode(&sample(), SHA1, Path::new("kams.lock"));
        assert_eq!(decode(&bytes, SHA1, Path::new("kams.lock")), Some(sample()));
        assert_eq!(
            bytes,
            encode(
                &decode(&bytes, SHA1, Path::new("kams.lock")).unwrap(),
                SHA1,
                Path::new("kams.lock")
            )
        );
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let bytes = encode(&sample(), SHA1, Path::new("kams.lock"));
        for n in 0..bytes.len() {
            assert_eq!(decode(&bytes[..n], SHA1, Path::new("kams.lock")), None);
            let mut bad = bytes.clone();
            bad[n] ^= 0x20;
            assert_eq!(decode(&bad, SHA1, Path::new("kams.lock")), None);
        }
    }

    /// `bytes` with the first `from` replaced by `to` (same length) and
    /// the checksum made right again: a well-formed file that says
    /// something else.
    fn forged(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
        assert_eq!(from.len(), to.len());
        let mut body = bytes[..bytes.len() - 32].to_vec();
        let at = body
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .expect("present");
        body[at..at + to.len()].copy_from_slice(to.as_bytes());
        store::seal(body)
    }

    #[test]
    fn another_lock_path_or_writer_is_refused() {
        let bytes = encode(&sample(), SHA1, Path::new("kams.lock"));
        assert_eq!(decode(&bytes, SHA1, Path::new("other.lock")), None);
        const WRITER: &str = store::WRITER;
        let writer = "9".repeat(WRITER.len());
        let other = forged(&bytes, WRITER, &writer);
        assert_eq!(decode(&other, SHA1, Path::new("kams.lock")), None);
        // The forgery itself is sound: only the writer differs.
        let same = forged(&bytes, WRITER, WRITER);
        assert_eq!(decode(&same, SHA1, Path::new("kams.lock")), Some(sample()));
    }

    #[test]
    fn a_well_formed_file_with_unknown_names_is_refused() {
        let bytes = encode(&sample(), SHA1, Path::new("kams.lock"));
        for (from, to) in [
            ("launch changed", "launch chanGed"),
            ("description", "descriptioN"),
        ] {
            assert_eq!(
                decode(&forged(&bytes, from, to), SHA1, Path::new("kams.lock")),
                None,
                "{to}"
            );
        }
    }
}
