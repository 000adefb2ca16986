//! The inventory index: what reading a set of inventory files found
//! (servers, launches, server-level descriptors, each tool's name, digests
//! and span, and every ambiguity), kept under the repository's common git
//! directory so that an inventory read before is not parsed and digested
//! again. It serves readers that keep digests only (`status`, `scan`):
//! detectors still read every tool from the files' own bytes.
//!
//! An index is named by the BLAKE3 hash of everything the reading depended
//! on: each file's path and bytes, and `--server`. Only a read that
//! succeeded is indexed. An index that does not decode and check (seal,
//! layout, writer, name, structure, spans inside the files) is ignored
//! and written anew. `git -c kams.indexCache=false` neither reads nor
//! writes one. `docs/lockfile.md` describes it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::bytes::Shared;
use crate::cache::codec::{Decoder, Encoder, Fields, JsonObject};
use crate::cache::lock::sorted;
use crate::cache::store;
use crate::canon::Digest;
use crate::descriptor::{Descriptor, Lazy};
use crate::detect::flow::classes::Capabilities;
use crate::input::Input;
use crate::inventory::{
    build, Ambiguity, Help, InputError, Inventory, ReadOptions, Server, TextNames, Tool,
};
use crate::json::Object;

/// The inventory index files.
const INDEX: store::Named = store::Named {
    prefix: "inventory-",
    magic: b"kams-iix\0\0\0\x07",
    keep: store::Named::KEEP,
};

/// The name of the index of `files` read with `server` as `--server`;
/// `hash(i)` gives the BLAKE3 hash of file `i`'s bytes
/// ([`store::Namer::of`], or its record: [`crate::cache::stamp`]).
pub fn key(
    files: &[(PathBuf, Shared)],
    server: Option<&str>,
    hash: &dyn Fn(usize) -> Digest,
) -> Digest {
    let mut h = store::Namer::new();
    h.update(&(files.len() as u64).to_le_bytes());
    for (i, (path, bytes)) in files.iter().enumerate() {
        let path = path.as_os_str().as_encoded_bytes();
        h.update(&(path.len() as u64).to_le_bytes());
        h.update(path);
        h.update(&((**bytes).as_ref().len() as u64).to_le_bytes());
        h.update(&hash(i).0);
    }
    match server {
        Some(s) => {
            h.update(&[1]);
            h.update(s.as_bytes());
        }
        None => h.update(&[0]),
    }
    h.finish()
}

/// The inventory `key` names, its tools' spans in `files` (the same files
/// the key was made of); `None` when there is no usable index.
pub fn load(common_dir: &Path, key: &Digest, files: &[(PathBuf, Shared)]) -> Option<Inventory> {
    let bytes = INDEX.read(common_dir, &key.hex())?;
    decode(&bytes, key, files, &|range| bytes.release(range))
}

/// Writes the index of `inventory` (read with digests only from `files`)
/// for `key` (see [`store::Named::store`]). Nothing is written when a
/// tool has no span or a server's file is not among `files`.
pub fn store(
    common_dir: &Path,
    key: &Digest,
    files: &[(PathBuf, Shared)],
    inventory: &Inventory,
) -> std::io::Result<()> {
    match encode(inventory, key, files) {
        Some(parts) => INDEX.store_parts(common_dir, &key.hex(), parts),
        None => Ok(()),
    }
}

/// The file's body after its header. `None` as for [`store`]. With many
/// tools, the second half of the servers is encoded on another core: one
/// core encoding all of them left the other waiting (docs/performance.md,
/// "Tenth pass", 0422cb3).
fn encode(inv: &Inventory, key: &Digest, files: &[(PathBuf, Shared)]) -> Option<Vec<Encoder>> {
    encode_from(inv, key, files, ENCODE_IN_HALVES_FROM)
}

/// [`encode`], in halves from `halves_from` tools.
fn encode_from(
    inv: &Inventory,
    key: &Digest,
    files: &[(PathBuf, Shared)],
    halves_from: usize,
) -> Option<Vec<Encoder>> {
    let tools: usize = inv.servers.values().map(|s| s.tools.len()).sum();
    let mut out = INDEX.begin(&key.hex(), 64 + tools * 320);
    out.u32(inv.servers.len());
    let servers: Vec<(&String, &Server)> = inv.servers.iter().collect();
    if tools < halves_from {
        encode_servers(&mut out, &servers, files)?;
        return Some(vec![out]);
    }
    let (first, second) = servers.split_at(crate::threads::halfway(&servers, |(_, s)| {
        s.tools.len() + 1
    }));
    let (theirs, mine) = crate::threads::side_by_side(
        || {
            let mut out = Encoder(Vec::with_capacity(64 + tools * 160));
            encode_servers(&mut out, second, files).map(|()| out)
        },
        || encode_servers(&mut out, first, files),
    );
    mine?;
    // Written one after the other: joined, they were a copy more at the
    // peak (docs/performance.md, "Tenth pass", f267955).
    Some(vec![out, theirs?])
}

/// The number of tools from which [`encode`] encodes on two cores.
const ENCODE_IN_HALVES_FROM: usize = 16_384;

/// A server's record, before its tools: name, file number, pointer,
/// descriptor, launch and ambiguities.
#[derive(Serialize, Deserialize)]
struct Head<'a> {
    name: &'a str,
    file: usize,
    pointer: &'a str,
    fields: JsonObject<'a>,
    digest: Digest,
    #[serde(borrow)]
    field_digests: Fields<'a>,
    launch: JsonObject<'a>,
    ambiguities: Cow<'a, [Ambiguity]>,
}

/// A tool's record: its name and descriptor (digests only), then where
/// its text is and the text's hash.
#[derive(Serialize, Deserialize)]
struct ToolRecord<'a> {
    name: &'a str,
    digest: Digest,
    #[serde(borrow)]
    field_digests: Fields<'a>,
    pointer: &'a str,
    span: (u64, u64),
    text: Option<Digest>,
    /// The descriptor's capability classes ([`Capabilities::bits`]).
    can: u8,
}

impl ToolRecord<'_> {
    /// The tool's name and descriptor (digests only).
    fn digests(&self) -> Option<(String, Descriptor)> {
        let descriptor = Descriptor {
            fields: Object::new(),
            digest: self.digest,
            field_digests: self.field_digests.digests()?,
            can: Capabilities::from_bits(self.can)?,
        };
        Some((self.name.to_string(), descriptor))
    }

    /// Where the tool's text is.
    fn span(&self) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(self.span.0).ok()?;
        let end = usize::try_from(self.span.1).ok()?;
        (start <= end).then_some(start..end)
    }
}

/// `servers`' entries into `out`; `None` as for [`store`].
fn encode_servers(
    out: &mut Encoder,
    servers: &[(&String, &Server)],
    files: &[(PathBuf, Shared)],
) -> Option<()> {
    for &(name, s) in servers {
        let file = files.iter().position(|(p, _)| *p == s.source)?;
        out.record(&Head {
            name,
            file,
            pointer: &s.pointer,
            fields: JsonObject(Cow::Borrowed(&s.descriptor.fields)),
            digest: s.descriptor.digest,
            field_digests: Fields::Of(&s.descriptor.field_digests),
            launch: JsonObject(Cow::Borrowed(&s.launch)),
            ambiguities: Cow::Borrowed(&s.ambiguities),
        });
        out.u32(s.tools.len());
        for (tool, t) in &s.tools {
            let span = t.lazy.0.as_ref()?.1.clone();
            out.record(&ToolRecord {
                name: tool,
                digest: t.descriptor.digest,
                field_digests: Fields::Of(&t.descriptor.field_digests),
                pointer: &t.pointer,
                span: (span.start as u64, span.end as u64),
                text: t.text,
                can: t.descriptor.can.bits(),
            });
        }
    }
    Some(())
}

/// What an earlier reading of another inventory found of each tool's
/// text: its name and digests, by the text's name
/// ([`crate::inventory::text_name`]), for the tools
/// it read without an ambiguity. A tool's name and digests are a function
/// of its text alone, so a tool captured again unchanged is taken from
/// here instead of being digested again; the entries stay in the index's
/// bytes until asked for.
pub struct Earlier {
    bytes: crate::input::Input,
    at: std::collections::HashMap<Digest, usize>,
    /// What of `bytes` was given back behind the look-ups so far.
    behind: std::cell::RefCell<Option<crate::bytes::ReleaseBehind>>,
}

impl Earlier {
    /// The newest index under `common_dir` but the one named `key`.
    pub fn load(common_dir: &Path, key: &Digest) -> Option<Earlier> {
        let own = key.hex();
        let name = INDEX.newest(common_dir).into_iter().find(|n| *n != own)?;
        let bytes = INDEX.read(common_dir, &name)?;
        let at = Earlier::entries(&bytes, &name, &|range| bytes.release(range))?;
        Some(Earlier {
            bytes,
            at,
            behind: Default::default(),
        })
    }

    /// Where each tool's entry starts in `bytes`, by its text's hash.
    fn entries(
        bytes: &[u8],
        name: &str,
        release: &dyn Fn(std::ops::Range<usize>),
    ) -> Option<std::collections::HashMap<Digest, usize>> {
        let (mut r, mut giving) = INDEX.open_giving(bytes, name, release)?;
        let mut at = std::collections::HashMap::new();
        for _ in 0..r.count()? {
            giving.behind(&r);
            let head: Head = r.record()?;
            for _ in 0..r.count()? {
                // Read without copying: only the offset and the text's
                // hash are kept, for every tool of a large inventory.
                let start = r.rest.as_ptr() as usize - bytes.as_ptr() as usize;
                let tool: ToolRecord = r.record()?;
                tool.span()?;
                let plain = !head
                    .ambiguities
                    .iter()
                    .any(|a| a.tool.as_deref() == Some(tool.name));
                if let (Some(text), true) = (tool.text, plain) {
                    at.insert(text, start);
                }
            }
        }
        r.rest.is_empty().then_some(at)
    }
}

impl crate::inventory::Recall for Earlier {
    /// Asked in about the order written (an inventory captured again), it
    /// gives back what lies well behind the first look-up.
    fn recall(&self, text: &Digest) -> Option<(String, Descriptor)> {
        let start = *self.at.get(text)?;
        self.behind
            .borrow_mut()
            .get_or_insert_with(|| crate::bytes::ReleaseBehind::at(start))
            .advance_with(&|range| self.bytes.release(range), start);
        let mut r = Decoder {
            rest: self.bytes.get(start..)?,
        };
        r.record::<ToolRecord>()?.digests()
    }
}

/// The inventory `bytes` describe, their pages given to `release` as they
/// are read (see [`store::Giving`]).
fn decode(
    bytes: &[u8],
    key: &Digest,
    files: &[(PathBuf, Shared)],
    release: &dyn Fn(std::ops::Range<usize>),
) -> Option<Inventory> {
    let (mut r, mut giving) = INDEX.open_giving(bytes, &key.hex(), release)?;
    let servers = r.list(|r| {
        giving.behind(r);
        let head: Head = r.record()?;
        let (path, text) = files.get(head.file)?;
        let len = (**text).as_ref().len();
        let tools = r.list(|r| {
            let record: ToolRecord = r.record()?;
            let span = record.span().filter(|span| span.end <= len)?;
            let (tool, descriptor) = record.digests()?;
            let t = Tool {
                descriptor,
                pointer: record.pointer.to_string(),
                lazy: Lazy(Some((text.clone(), span))),
                text: record.text,
            };
            Some((tool, t))
        })?;
        let name = head.name.to_string();
        let server = Server {
            name: name.clone(),
            source: path.clone(),
            pointer: head.pointer.to_string(),
            descriptor: Descriptor {
                fields: head.fields.0.into_owned(),
                digest: head.digest,
                field_digests: head.field_digests.digests()?,
                // A server's descriptor has no name: no class.
                can: Capabilities::default(),
            },
            launch: head.launch.0.into_owned(),
            tools: sorted(tools)?,
            ambiguities: head.ambiguities.into_owned(),
        };
        Some((name, server))
    })?;
    let inv = Inventory {
        servers: sorted(servers)?,
    };
    r.rest.is_empty().then_some(inv)
}

/// Reads inventory files already in memory or mapped (for example from a
/// commit), each named by the path shown in messages, and gives the key of
/// their index when one is kept under `index_dir` (a common git
/// directory; for a read with [`ReadOptions::digests_only`] only): from
/// the index of an earlier reading of the same bytes, else with the core's
/// [`build`], helped by the newest index of another reading ([`Earlier`]),
/// and the index stored. Without an index, [`build`] alone.
pub fn read_files<B: Into<Input>>(
    files: Vec<(PathBuf, B)>,
    opts: &ReadOptions,
    index_dir: Option<&Path>,
) -> Result<(Inventory, Option<Digest>), InputError> {
    let mut texts: Vec<(PathBuf, Arc<Input>)> = Vec::with_capacity(files.len());
    for (file, bytes) in files {
        let bytes: Input = bytes.into();
        if bytes.len() as u64 > opts.max_size {
            return Err(crate::inventory::too_big(&file, opts.max_size));
        }
        texts.push((file, Arc::new(bytes.strip_bom())));
    }
    let shared: Vec<(PathBuf, Shared)> = texts
        .iter()
        .map(|(p, b)| (p.clone(), b.clone() as Shared))
        .collect();
    let Some(dir) = index_dir.filter(|_| opts.digests_only) else {
        return Ok((build(&shared, opts, Help::default())?, None));
    };
    // An inventory read before, unchanged, is taken from its index.
    let key = key(&shared, opts.server.as_deref(), &|i| {
        crate::cache::stamp::digest_of(dir, &texts[i].0, &texts[i].1)
    });
    if let Some(inv) = load(dir, &key, &shared) {
        return Ok((inv, Some(key)));
    }
    // Else what an earlier reading knew of each tool's text serves for
    // the tools that did not change (an inventory captured again).
    let earlier = Earlier::load(dir, &key);
    let help = Help {
        earlier: earlier.as_ref().map(|e| e as &dyn crate::inventory::Recall),
        texts: TextNames::Named,
    };
    let inv = build(&shared, opts, help)?;
    // The index only saves time: an unwritable repository is no reason to
    // fail.
    let _ = store(dir, &key, &shared, &inv);
    Ok((inv, Some(key)))
}

#[cfg(test)]
mod tests {
    use super::read_files;
    use super::*;
    use crate::inventory::ReadOptions;
    use std::sync::Arc;

    /// The inventory `bytes` describe, nothing released.
    fn decode(bytes: &[u8], key: &Digest, files: &[(PathBuf, Shared)]) -> Option<Inventory> {
        super::decode(bytes, key, files, &store::keep)
    }

    /// The key of `files`, each hashed whole (no stamp records).
    fn hashed_key(files: &[(PathBuf, Shared)], server: Option<&str>) -> Digest {
        key(files, server, &|i| store::Namer::of((*files[i].1).as_ref()))
    }

    /// The file's body the parts make.
    fn joined(parts: Vec<Encoder>) -> Vec<u8> {
        parts.into_iter().flat_map(|part| part.0).collect()
    }

    fn sample() -> (Vec<(PathBuf, Shared)>, Inventory) {
        let dir = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/inventory-drifted"
        ));
        let mut files: Vec<(PathBuf, Shared)> = Vec::new();
        for e in std::fs::read_dir(dir).expect("the sample inventory") {
            let path = e.expect("an entry").path();
            let bytes: Shared = Arc::new(std::fs::read(&path).expect("reads"));
            files.push((path, bytes));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        // With an index kept, so that each tool's text is named.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let opts = ReadOptions {
            digests_only: true,
            ..ReadOptions::default()
        };
        let (inv, _) = read_files(
            files
                .iter()
                .map(|(p, b)| (p.clone(), (**b).as_ref().to_vec()))
                .collect(),
            &opts,
            Some(dir.path()),
        )
        .expect("the sample inventory reads");
        // The spans must point into `files`: take them over.
        let mut inv = inv;
        for s in inv.servers.values_mut() {
            let text = files
                .iter()
                .find(|(p, _)| *p == s.source)
                .expect("its file")
                .1
                .clone();
            for t in s.tools.values_mut() {
                let span = t.lazy.0.as_ref().expect("a span").1.clone();
                t.lazy = Lazy(Some((text.clone(), span)));
            }
        }
        (files, inv)
    }

    fn summary(inv: &Inventory) -> Vec<String> {
        inv.servers
            .values()
            .flat_map(|s| {
                let head = format!(
                    "{} {} {} {:?} {:?} {:?}",
                    s.name,
                    s.source.display(),
                    s.pointer,
                    s.descriptor,
                    s.launch,
                    s.ambiguities
                );
                std::iter::once(head).chain(s.tools.iter().map(|(name, t)| {
                    format!(
                        "{} {:?} {} {:?} {:?}",
                        name,
                        t.descriptor,
                        t.pointer,
                        t.lazy.text().map(<[u8]>::to_vec),
                        t.text
                    )
                }))
            })
            .collect()
    }

    #[test]
    fn an_index_reads_back_as_the_inventory_it_describes() {
        let (files, inv) = sample();
        assert!(inv.servers.values().any(|s| !s.ambiguities.is_empty()));
        assert!(inv.servers.values().any(|s| !s.launch.is_empty()));
        let key = hashed_key(&files, None);
        let bytes = store::seal(joined(encode(&inv, &key, &files).expect("encodes")));
        let back = decode(&bytes, &key, &files).expect("decodes");
        assert_eq!(summary(&back), summary(&inv));
        let halves = encode_from(&inv, &key, &files, 0).expect("encodes in halves");
        assert_eq!(halves.len(), 2);
        assert_eq!(store::seal(joined(halves)), bytes, "in halves, the same");
        // A server of the second half is not in the files: nothing either way.
        let mut unfiled = inv.clone();
        let last = unfiled.servers.values_mut().last().expect("servers");
        last.source = PathBuf::from("elsewhere.json");
        assert!(encode_from(&unfiled, &key, &files, usize::MAX).is_none());
        assert!(encode_from(&unfiled, &key, &files, 0).is_none());
    }

    #[test]
    fn an_earlier_index_gives_each_plain_tool_by_its_text() {
        let (files, inv) = sample();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let dir = dir.path();
        let key = hashed_key(&files, None);
        assert!(Earlier::load(dir, &key).is_none(), "none yet");
        store(dir, &key, &files, &inv).expect("stores");
        assert!(Earlier::load(dir, &key).is_none(), "its own is not earlier");
        let earlier = Earlier::load(dir, &Digest::of(b"another")).expect("an earlier index");
        let (mut served, mut refused) = (0, 0);
        for s in inv.servers.values() {
            for (tool, t) in &s.tools {
                let text = t.text.expect("a tool read with digests only is named");
                assert_eq!(
                    Some(text),
                    t.lazy.text().map(crate::inventory::text_name),
                    "its text's hash"
                );
                let plain = !s.ambiguities.iter().any(|a| a.tool.as_ref() == Some(tool));
                match crate::inventory::Recall::recall(&earlier, &text) {
                    Some((name, descriptor)) => {
                        assert!(plain, "{tool}");
                        assert_eq!((name, descriptor), (tool.clone(), t.descriptor.clone()));
                        served += 1;
                    }
                    None => {
                        assert!(!plain, "{tool}");
                        refused += 1;
                    }
                }
            }
        }
        assert!(served > 5 && refused > 0, "{served} {refused}");
        assert!(crate::inventory::Recall::recall(&earlier, &Digest::of(b"no tool")).is_none());
    }

    /// A capture of `tools` tools, the description of tool `i` given by
    /// `describe(i)`.
    fn capture(tools: usize, describe: impl Fn(usize) -> String) -> Vec<u8> {
        let tools: Vec<String> = (0..tools)
            .map(|i| {
                format!(
                    r#"{{"name": "tool_{i}", "description": "{}", "inputSchema": {{"type": "object"}}, "_meta": {{"n": {i}}}}}"#,
                    describe(i)
                )
            })
            .collect();
        format!(r#"{{"server": "s", "tools": [{}]}}"#, tools.join(",\n")).into_bytes()
    }

    /// Whether an earlier index knows most tools, few, or none, a read
    /// with it gives what a read without any (in a directory with no
    /// index yet) gives.
    #[test]
    fn a_read_with_an_earlier_index_is_a_read_without_one() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let read = |bytes: Vec<u8>, earlier: bool| {
            let fresh = tempfile::tempdir().expect("a temporary directory");
            let index = if earlier { dir.path() } else { fresh.path() };
            let opts = ReadOptions {
                digests_only: true,
                ..ReadOptions::default()
            };
            let (inv, _) = read_files(vec![(PathBuf::from("inv.json"), bytes)], &opts, Some(index))
                .expect("reads");
            summary(&inv)
        };
        let first = capture(200, |i| format!("Does thing {i}."));
        assert_eq!(read(first.clone(), true), read(first, false));
        // Most known; then none (another inventory's index, given up on);
        // then a tenth.
        for (n, describe) in [
            (
                1,
                Box::new(|i: usize| {
                    format!("Does thing {}.", i + usize::from(i.is_multiple_of(10)))
                }) as Box<dyn Fn(usize) -> String>,
            ),
            (2, Box::new(|i: usize| format!("Does another thing {i}."))),
            (
                3,
                Box::new(|i: usize| match i % 10 {
                    0 => format!("Does another thing {i}."),
                    _ => format!("Does a third thing {i}."),
                }),
            ),
        ] {
            let text = capture(200, describe);
            assert_eq!(read(text.clone(), true), read(text, false), "inventory {n}");
        }
    }

    #[test]
    fn a_damaged_or_foreign_index_is_refused() {
        let (files, inv) = sample();
        let k = hashed_key(&files, None);
        let bytes = store::seal(joined(encode(&inv, &k, &files).expect("encodes")));
        for n in (0..bytes.len()).step_by(5) {
            assert!(decode(&bytes[..n], &k, &files).is_none());
            let mut bad = bytes.clone();
            bad[n] ^= 0x20;
            assert!(decode(&bad, &k, &files).is_none());
        }
        assert_ne!(
            k,
            hashed_key(&files, Some("srv")),
            "--server is part of the key"
        );
        // Sealed anew after a change, every byte: an answer or a refusal,
        // never a panic.
        for n in 0..bytes.len() - 32 {
            for xor in [0x01, 0x80, 0xff] {
                let _ = decode(&store::forged(&bytes, n, xor), &k, &files);
            }
        }
        let other = hashed_key(&files[1..], None);
        assert!(decode(&bytes, &other, &files).is_none());
        // Spans past the end of the files given: not these files.
        let short: Vec<(PathBuf, Shared)> = files
            .iter()
            .map(|(p, b)| (p.clone(), Arc::new((**b).as_ref()[..10].to_vec()) as Shared))
            .collect();
        assert!(decode(&bytes, &k, &short).is_none());
    }
}
