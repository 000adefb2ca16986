//! The lock index: what reading and verifying a lock's text found (every
//! entry's state, digests, dates and approval, the launches, and where
//! each entry's text is), kept under the repository's common git directory
//! so that a lock already read is not parsed and verified again.
//!
//! An index is named by the content it describes, so it cannot go out of
//! date: a committed lock by its blob id (`status --at REV` then reads no
//! blob at all), a lock file by the BLAKE3 hash of its bytes (which costs a
//! read at memory speed, against a parse). Only a lock that read and
//! verified without error is indexed; a corrupt lock is an error on every
//! run. An index that does not decode and check (seal, layout, writer,
//! name, structure, spans inside the text) is ignored and written anew.
//! `git -c kams.indexCache=false` neither reads nor writes one.
//! `docs/lockfile.md` describes it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::bytes::Shared;
use crate::cache::codec::{Encoder, Fields, Json};
use crate::cache::store;
use crate::canon::Digest;
use crate::descriptor::{Descriptor, Lazy};
use crate::detect::flow::classes::Capabilities;
use crate::input::Input;
use crate::json::Object;

use crate::lock::format::{share_approval, Approval, Entry, Lock, LockServer, State};

/// The lock index files.
const INDEX: store::Named = store::Named {
    prefix: "lock-",
    // 6 was a layout without the classes (c2ccb4e, reverted).
    magic: b"kams-lix\0\0\0\x07",
    keep: store::Named::KEEP,
};

/// What an index describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// The lock committed as this blob.
    Blob(gix::ObjectId),
    /// The lock text with this BLAKE3 hash (after any byte order mark;
    /// see [`store::Namer`]).
    Text(Digest),
}

impl Key {
    /// The key of a lock file's text (a lock file read from the work tree
    /// takes its hash from [`crate::cache::stamp::digest`]).
    pub fn of_text(text: &[u8]) -> Key {
        Key::Text(store::Namer::of(text))
    }

    /// The key's name: `blob-<id>` or `blake3-<hex>`.
    pub fn name(&self) -> String {
        match self {
            Key::Blob(id) => format!("blob-{id}"),
            Key::Text(d) => format!("blake3-{}", d.hex()),
        }
    }
}

/// What a lock read for a caller holds of each entry's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryFields {
    /// Each entry's field digests: for a caller that compares fields by
    /// them.
    Digests,
    /// The entry's whole digest only: for a caller that materialises
    /// every entry whose fields it looks at (a scan compares fields of
    /// drifted entries only; the other entries' field digests weighed on
    /// its peak: docs/performance.md, "Ninth pass", 94a5585).
    Materialised,
}

/// The lock whose text `input` holds (the file at `path`, past any byte
/// order mark: [`crate::files::lock::read_input`]), digests only (see
/// [`Lock::parse_digests_only`]), and the key of its index when one is
/// kept under `index_dir` (a common git directory).
///
/// A lock whose text was read before is taken from its index (holding what
/// `fields` says of its entries' fields: see [`load`]); else
/// it is read with the core's [`Lock::parse_digests_releasing`], and
/// indexed. Either way the pages of the part already read are given back
/// as the reader goes: a lock larger than the memory a scan should take
/// is never held whole.
pub fn read(
    path: &Path,
    input: Input,
    index_dir: Option<&Path>,
    fields: EntryFields,
) -> anyhow::Result<(Lock, Option<Key>)> {
    let input = Arc::new(input);
    let key = index_dir.map(|dir| Key::Text(crate::cache::stamp::digest_of(dir, path, &input)));
    if let (Some(dir), Some(key)) = (index_dir, &key) {
        if let Some(lock) = load(dir, key, Some(input.clone()), fields) {
            return Ok((lock, Some(*key)));
        }
    }
    let release = |n: usize| input.release(0..n);
    let lock = Lock::parse_digests_releasing(input.clone(), &release)
        .map_err(|e| crate::files::lock::lock_error(path, e))?;
    if let (Some(dir), Some(key)) = (index_dir, &key) {
        // The index only saves time: an unwritable repository is no
        // reason to fail.
        let _ = store(dir, key, &lock);
    }
    Ok((lock, key))
}

/// The lock `key` names, from its index under `common_dir`, with each
/// entry's descriptor to be rebuilt from `text` (the lock's bytes) on
/// demand, and what `fields` says of its fields; `None` when there is no
/// usable index. Without `text`, entries cannot be materialised: for
/// callers that need digests only.
pub fn load(
    common_dir: &Path,
    key: &Key,
    text: Option<Shared>,
    fields: EntryFields,
) -> Option<Lock> {
    let bytes = INDEX.read(common_dir, &key.name())?;
    decode(&bytes, key, text, fields, &|range| bytes.release(range))
}

/// Writes the index of `lock` (as read, with its spans) for `key` (see
/// [`store::Named::store`]). Nothing is written for a lock some entry
/// of which has no span.
pub fn store(common_dir: &Path, key: &Key, lock: &Lock) -> std::io::Result<()> {
    match encode(lock, key) {
        Some(out) => INDEX.store(common_dir, &key.name(), out),
        None => Ok(()),
    }
}

/// A server's record, before its tools: its name, launch, launch
/// approval, the configs of the launch and its own entry.
#[derive(Serialize, Deserialize)]
struct Head<'a> {
    name: &'a str,
    launch: Option<Json<'a>>,
    #[serde(borrow)]
    launch_approval: Option<Said<'a>>,
    #[serde(borrow)]
    launch_configs: Vec<&'a str>,
    #[serde(borrow)]
    server: Option<Record<'a>>,
}

/// An approval: approver, time and note.
type Said<'a> = (&'a str, &'a str, &'a str);

/// An entry's record: its state (0 provisional, 1 pinned, 2 denied),
/// digests, first sighting, approval, and where its text is.
#[derive(Serialize, Deserialize)]
struct Record<'a> {
    state: u8,
    digest: Digest,
    #[serde(borrow)]
    fields: Fields<'a>,
    first_seen: &'a str,
    #[serde(borrow)]
    approval: Option<Said<'a>>,
    span: (u64, u64),
    /// The descriptor's capability classes ([`Capabilities::bits`]).
    can: u8,
}

/// The file's body after its header: each server's [`Head`], then its
/// tools' names and [`Record`]s. `None` when an entry has no span.
fn encode(lock: &Lock, key: &Key) -> Option<Encoder> {
    let mut out = INDEX.begin(&key.name(), 64 + lock.len() * 320);
    out.u32(lock.servers.len());
    for (name, server) in &lock.servers {
        out.record(&Head {
            name,
            launch: server.launch.as_ref().map(|l| Json(Cow::Borrowed(l))),
            launch_approval: server.launch_approval.as_deref().map(said),
            launch_configs: server.launch_configs.iter().map(String::as_str).collect(),
            server: match &server.server {
                Some(e) => Some(record(e)?),
                None => None,
            },
        });
        out.u32(server.tools.len());
        for (tool, e) in &server.tools {
            out.record(&(tool, record(e)?));
        }
    }
    Some(out)
}

fn said(a: &Approval) -> Said<'_> {
    (&a.approver, &a.at, &a.note)
}

fn record(e: &Entry) -> Option<Record<'_>> {
    let span = e.lazy.0.as_ref()?.1.clone();
    Some(Record {
        state: match e.state {
            State::Provisional => 0,
            State::Pinned => 1,
            State::Denied => 2,
        },
        digest: e.descriptor.digest,
        fields: Fields::Of(&e.descriptor.field_digests),
        first_seen: &e.first_seen,
        approval: e.approval.as_deref().map(said),
        span: (span.start as u64, span.end as u64),
        can: e.descriptor.can.bits(),
    })
}

/// The lock `bytes` describe, its pages given to `release` as they are
/// read (see [`store::Giving`]).
fn decode(
    bytes: &[u8],
    key: &Key,
    text: Option<Shared>,
    fields: EntryFields,
    release: &dyn Fn(std::ops::Range<usize>),
) -> Option<Lock> {
    let (mut r, mut giving) = INDEX.open_giving(bytes, &key.name(), release)?;
    let len = text.as_ref().map(|t| (**t).as_ref().len());
    let mut last = None;
    let servers = sorted(r.list(|r| {
        giving.behind(r);
        let head: Head = r.record()?;
        let mut server = LockServer::default();
        if let Some(Json(launch)) = head.launch {
            launch.as_object()?;
            server.launch = Some(launch.into_owned());
        }
        server.launch_approval = head.launch_approval.map(|(approver, at, note)| {
            Arc::new(Approval {
                approver: approver.into(),
                at: at.into(),
                note: note.into(),
            })
        });
        server.launch_configs = head
            .launch_configs
            .into_iter()
            .map(str::to_string)
            .collect();
        if let Some(e) = head.server {
            server.server = Some(entry(e, &text, len, fields, &mut last)?);
        }
        let tools = r.list(|r| {
            let (tool, e) = r.record::<(&str, Record)>()?;
            Some((tool.to_string(), entry(e, &text, len, fields, &mut last)?))
        })?;
        server.tools = sorted(tools)?;
        Some((head.name.to_string(), server))
    })?)?;
    r.rest.is_empty().then_some(Lock { servers })
}

/// A map of `items`, which must be in strictly increasing order (as a map
/// is written). Built at once, its nodes are full: inserting one by one
/// leaves them half empty, which for 100,000 entries is tens of MiB.
pub(crate) fn sorted<V>(items: Vec<(String, V)>) -> Option<BTreeMap<String, V>> {
    items
        .windows(2)
        .all(|w| w[0].0 < w[1].0)
        .then(|| items.into_iter().collect())
}

/// The entry `e` records. `last` is the approval read before (see
/// [`share_approval`]).
fn entry(
    e: Record<'_>,
    text: &Option<Shared>,
    len: Option<usize>,
    fields: EntryFields,
    last: &mut Option<Arc<Approval>>,
) -> Option<Entry> {
    let state = match e.state {
        0 => State::Provisional,
        1 => State::Pinned,
        2 => State::Denied,
        _ => return None,
    };
    let field_digests = match fields {
        EntryFields::Digests => e.fields.digests()?,
        EntryFields::Materialised => Default::default(),
    };
    if e.approval.is_some() != state.is_decided() {
        return None;
    }
    let start = usize::try_from(e.span.0).ok()?;
    let end = usize::try_from(e.span.1).ok()?;
    let lazy = match (text, len) {
        (Some(t), Some(len)) if start <= end && end <= len => Lazy(Some((t.clone(), start..end))),
        (None, _) => Lazy(None),
        _ => return None,
    };
    Some(Entry {
        state,
        descriptor: Descriptor {
            fields: Object::new(),
            digest: e.digest,
            field_digests,
            can: Capabilities::from_bits(e.can)?,
        },
        first_seen: e.first_seen.to_string(),
        // Borrowed until compared with the last one: entries pinned
        // together share one approval, and three copies per entry, most
        // dropped at once, were a visible share of a warm `status --at`
        // (docs/performance.md, "Eleventh pass", 3cc9aeb).
        approval: e.approval.map(|(approver, at, note)| {
            share_approval(approver.into(), at.into(), note.into(), last)
        }),
        lazy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock `bytes` describe, nothing released.
    fn decode(bytes: &[u8], key: &Key, text: Option<Shared>) -> Option<Lock> {
        super::decode(bytes, key, text, EntryFields::Digests, &store::keep)
    }

    fn sample() -> (Shared, Lock) {
        let text = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/kams.lock"))
            .expect("the sample lock");
        // With a launch and its configs, which the sample has not.
        let mut full = Lock::parse(&text).expect("the sample lock reads");
        let (launch, _) =
            crate::json::parse(br#"{"command":"npx","args":["-y","pkg@1.0.0"],"n":1.5}"#)
                .expect("parses");
        let first = full.servers.values_mut().next().expect("a server");
        first.launch = Some(launch);
        first.launch_configs = vec![".mcp.json".into(), ".vscode/mcp.json".into()];
        let text = Arc::new(full.to_text());
        let lock = Lock::parse_digests_only(text.clone()).expect("the sample lock reads");
        (text, lock)
    }

    fn sealed(lock: &Lock, key: &Key) -> Option<Vec<u8>> {
        encode(lock, key).map(|out| store::seal(out.0))
    }

    fn spans(lock: &Lock) -> Vec<std::ops::Range<usize>> {
        lock.servers
            .values()
            .flat_map(|s| s.server.iter().chain(s.tools.values()))
            .map(|e| e.lazy.0.as_ref().expect("a span").1.clone())
            .collect()
    }

    #[test]
    fn an_index_reads_back_as_the_lock_it_describes() {
        let (text, lock) = sample();
        let key = Key::of_text((*text).as_ref());
        let bytes = sealed(&lock, &key).expect("every entry has a span");
        let back = decode(&bytes, &key, Some(text.clone())).expect("decodes");
        assert_eq!(back, lock);
        assert!(lock.servers.values().any(|s| s.launch.is_some()));
        assert!(lock.servers.values().any(|s| s.launch_configs.len() == 2));
        assert_eq!(spans(&back), spans(&lock));
        // Entries rebuild from the text as those of the parsed lock do.
        let wanted: Vec<(String, Option<String>)> = lock
            .servers
            .iter()
            .flat_map(|(s, ls)| {
                std::iter::once((s.clone(), None))
                    .chain(ls.tools.keys().map(move |t| (s.clone(), Some(t.clone()))))
            })
            .collect();
        let (mut a, mut b) = (lock.clone(), back);
        a.materialize(&wanted).expect("materialises");
        b.materialize(&wanted).expect("materialises");
        assert_eq!(a, b);
        assert_eq!(a, Lock::parse((*text).as_ref()).expect("reads"));
        assert!(
            encode(&b, &key).is_none(),
            "materialised entries have no span"
        );
    }

    /// Read without field digests, an index gives each entry's whole
    /// digest, state and approval, and the field digests of the entries
    /// that are materialised: what a scan compares.
    #[test]
    fn an_index_read_without_field_digests_has_them_where_materialised() {
        let (text, lock) = sample();
        let key = Key::of_text((*text).as_ref());
        let bytes = sealed(&lock, &key).expect("every entry has a span");
        let mut bare = super::decode(
            &bytes,
            &key,
            Some(text.clone()),
            EntryFields::Materialised,
            &store::keep,
        )
        .expect("decodes");
        let entries = |l: &Lock| -> Vec<(String, Option<String>, Entry)> {
            l.servers
                .iter()
                .flat_map(|(s, ls)| {
                    let server = ls.server.iter().map(|e| (s.clone(), None, e.clone()));
                    server.chain(
                        ls.tools
                            .iter()
                            .map(|(t, e)| (s.clone(), Some(t.clone()), e.clone())),
                    )
                })
                .collect()
        };
        let (full, without) = (entries(&lock), entries(&bare));
        assert_eq!(full.len(), without.len());
        for ((s, t, a), (_, _, b)) in full.iter().zip(&without) {
            assert!(!a.descriptor.field_digests.is_empty(), "{s} {t:?}");
            assert!(b.descriptor.field_digests.is_empty(), "{s} {t:?}");
            assert_eq!(a.descriptor.digest, b.descriptor.digest);
            assert_eq!(
                (&a.state, &a.approval, &a.first_seen),
                (&b.state, &b.approval, &b.first_seen)
            );
        }
        let wanted: Vec<(String, Option<String>)> = full
            .iter()
            .map(|(s, t, _)| (s.clone(), t.clone()))
            .collect();
        let mut a = lock.clone();
        a.materialize(&wanted).expect("materialises");
        bare.materialize(&wanted).expect("materialises");
        assert_eq!(a, bare);
    }

    #[test]
    fn a_damaged_or_foreign_index_is_refused() {
        let (text, lock) = sample();
        let key = Key::of_text((*text).as_ref());
        let bytes = sealed(&lock, &key).expect("encodes");
        for n in (0..bytes.len()).step_by(7) {
            assert_eq!(decode(&bytes[..n], &key, Some(text.clone())), None);
            let mut bad = bytes.clone();
            bad[n] ^= 0x20;
            assert_eq!(decode(&bad, &key, Some(text.clone())), None);
        }
        let other = Key::of_text(b"another lock");
        assert_eq!(decode(&bytes, &other, Some(text.clone())), None);
        // Spans past the end of the text given: not this lock's text.
        let short: Shared = Arc::new((*text).as_ref()[..100].to_vec());
        assert_eq!(decode(&bytes, &key, Some(short)), None);
        // Sealed anew after a change, every byte: an answer or a refusal,
        // never a panic.
        for n in 0..bytes.len() - 32 {
            for xor in [0x01, 0x80, 0xff] {
                let _ = decode(&store::forged(&bytes, n, xor), &key, Some(text.clone()));
            }
        }
        // Digests only: no text, no spans kept.
        let bare = decode(&bytes, &key, None).expect("decodes without text");
        assert_eq!(bare, lock);
        assert!(spans_absent(&bare));
    }

    fn spans_absent(lock: &Lock) -> bool {
        lock.servers
            .values()
            .flat_map(|s| s.server.iter().chain(s.tools.values()))
            .all(|e| e.lazy.0.is_none())
    }

    #[test]
    fn only_the_newest_indexes_are_kept() {
        let dir = std::env::temp_dir().join(format!("kams-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (text, lock) = sample();
        let _ = text;
        let keep = store::Named::KEEP;
        for n in 0..keep + 3 {
            let key = Key::of_text(format!("lock {n}").as_bytes());
            store(&dir, &key, &lock).expect("written");
            // Distinct modification times, oldest first.
            let f = std::fs::File::options()
                .write(true)
                .open(INDEX.file(&dir, &key.name()))
                .expect("opens");
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1000 + n as u64))
                .expect("sets the time");
        }
        store::prune(&dir.join("kams"), "lock-", keep);
        let left = std::fs::read_dir(dir.join("kams")).expect("lists").count();
        assert_eq!(left, keep);
        for n in 0..3 {
            let key = Key::of_text(format!("lock {n}").as_bytes());
            assert!(
                !INDEX.file(&dir, &key.name()).exists(),
                "the oldest are gone"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
