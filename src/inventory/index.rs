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

use std::path::{Path, PathBuf};

use super::{Ambiguity, Inventory, Server, Tool};
use crate::canon::Digest;
use crate::descriptor::{Descriptor, Lazy};
use crate::git::cachefile::{self, In, Out};
use crate::input::Shared;
use crate::json::Object;
use crate::lock::index::sorted;

/// The inventory index files.
const INDEX: cachefile::Named = cachefile::Named {
    prefix: "inventory-",
    magic: b"kams-iix\0\0\0\x06",
    keep: cachefile::Named::KEEP,
};

/// The name of the index of `files` read with `server` as `--server`;
/// `hash(i)` gives the BLAKE3 hash of file `i`'s bytes
/// ([`cachefile::Namer::of`], or its record: [`crate::git::stamp`]).
pub fn key(
    files: &[(PathBuf, Shared)],
    server: Option<&str>,
    hash: &dyn Fn(usize) -> Digest,
) -> Digest {
    let mut h = cachefile::Namer::new();
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
/// for `key` (see [`cachefile::Named::store`]). Nothing is written when a
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
/// tools, the second half of the servers is encoded on another core (one
/// took 20 ms of a re-captured 2000x50 scan while the other core waited).
fn encode(inv: &Inventory, key: &Digest, files: &[(PathBuf, Shared)]) -> Option<Vec<Out>> {
    encode_from(inv, key, files, ENCODE_IN_HALVES_FROM)
}

/// [`encode`], in halves from `halves_from` tools.
fn encode_from(
    inv: &Inventory,
    key: &Digest,
    files: &[(PathBuf, Shared)],
    halves_from: usize,
) -> Option<Vec<Out>> {
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
            let mut out = Out(Vec::with_capacity(64 + tools * 160));
            encode_servers(&mut out, second, files).map(|()| out)
        },
        || encode_servers(&mut out, first, files),
    );
    mine?;
    // Written one after the other (joined, 11 MB more at once at 2000x50).
    Some(vec![out, theirs?])
}

/// The number of tools from which [`encode`] encodes on two cores.
const ENCODE_IN_HALVES_FROM: usize = 16_384;

/// `servers`' entries into `out`; `None` as for [`store`].
fn encode_servers(
    out: &mut Out,
    servers: &[(&String, &Server)],
    files: &[(PathBuf, Shared)],
) -> Option<()> {
    for &(name, s) in servers {
        let file = files.iter().position(|(p, _)| *p == s.source)?;
        out.bytes(name.as_bytes());
        out.u32(file);
        out.bytes(s.pointer.as_bytes());
        out.object(&s.descriptor.fields);
        out.digest(&s.descriptor.digest);
        out.field_digests(&s.descriptor.field_digests);
        out.object(&s.launch);
        out.u32(s.ambiguities.len());
        for a in &s.ambiguities {
            out.opt(a.tool.as_deref());
            out.opt(a.field.as_deref());
            out.bytes(a.message.as_bytes());
        }
        out.u32(s.tools.len());
        for (tool, t) in &s.tools {
            let span = t.lazy.0.as_ref()?.1.clone();
            out.bytes(tool.as_bytes());
            out.digest(&t.descriptor.digest);
            out.field_digests(&t.descriptor.field_digests);
            out.bytes(t.pointer.as_bytes());
            out.u64(span.start as u64);
            out.u64(span.end as u64);
            out.opt_digest(t.text.as_ref());
        }
    }
    Some(())
}

/// A server's entry up to its tools: name, file number, pointer,
/// descriptor, launch and ambiguities.
type Head = (String, usize, String, Descriptor, Object, Vec<Ambiguity>);

fn take_head(r: &mut In<'_>) -> Option<Head> {
    let name = r.str()?.to_string();
    let file = r.count()?;
    let pointer = r.str()?.to_string();
    let descriptor = Descriptor {
        fields: r.object()?,
        digest: r.digest()?,
        field_digests: r.field_digests()?,
    };
    let launch = r.object()?;
    let ambiguities = r.list(|r| {
        Some(Ambiguity {
            tool: r.opt()?.map(str::to_string),
            field: r.opt()?.map(str::to_string),
            message: r.str()?.to_string(),
        })
    })?;
    Some((name, file, pointer, descriptor, launch, ambiguities))
}

/// A tool's name and descriptor (digests only), the first part of its
/// entry.
fn take_digests(r: &mut In<'_>) -> Option<(String, Descriptor)> {
    let name = r.str()?.to_string();
    let descriptor = Descriptor {
        fields: Object::new(),
        digest: r.digest()?,
        field_digests: r.field_digests()?,
    };
    Some((name, descriptor))
}

/// [`take_digests`] stepped over: the tool's name only, nothing copied.
fn skip_digests<'a>(r: &mut In<'a>) -> Option<&'a str> {
    let name = r.str()?;
    r.digest()?;
    r.skip_field_digests()?;
    Some(name)
}

/// The rest of a tool's entry: pointer, span and text's hash.
fn take_place<'a>(r: &mut In<'a>) -> Option<(&'a str, std::ops::Range<usize>, Option<Digest>)> {
    let pointer = r.str()?;
    let start = usize::try_from(r.u64()?).ok()?;
    let end = usize::try_from(r.u64()?).ok()?;
    let text = r.opt_digest()?;
    (start <= end).then_some((pointer, start..end, text))
}

/// What an earlier reading of another inventory found of each tool's
/// text: its name and digests, by the text's name
/// ([`cachefile::name_text`]), for the tools
/// it read without an ambiguity. A tool's name and digests are a function
/// of its text alone, so a tool captured again unchanged is taken from
/// here instead of being digested again; the entries stay in the index's
/// bytes until asked for.
pub struct Earlier {
    bytes: crate::input::Input,
    at: std::collections::HashMap<Digest, usize>,
}

impl Earlier {
    /// The newest index under `common_dir` but the one named `key`.
    pub fn load(common_dir: &Path, key: &Digest) -> Option<Earlier> {
        let own = key.hex();
        let name = INDEX.newest(common_dir).into_iter().find(|n| *n != own)?;
        let bytes = INDEX.read(common_dir, &name)?;
        let at = Earlier::entries(&bytes, &name, &|range| bytes.release(range))?;
        Some(Earlier { bytes, at })
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
            let (.., ambiguities) = take_head(&mut r)?;
            for _ in 0..r.count()? {
                // Stepped over without copying: only the offset and the
                // text's hash are kept (100,000 tools at 2000x50).
                let start = r.rest.as_ptr() as usize - bytes.as_ptr() as usize;
                let tool = skip_digests(&mut r)?;
                let (_, _, text) = take_place(&mut r)?;
                let plain = !ambiguities.iter().any(|a| a.tool.as_deref() == Some(tool));
                if let (Some(text), true) = (text, plain) {
                    at.insert(text, start);
                }
            }
        }
        r.rest.is_empty().then_some(at)
    }

    /// The name and digests of the tool whose text has the hash `text`.
    /// Asked in about the order written (an inventory captured again),
    /// it gives back what lies well behind the first look-up a reader
    /// made, as `behind` records (each reader has its own).
    pub fn get(
        &self,
        text: &Digest,
        behind: &mut Option<crate::input::Behind>,
    ) -> Option<(String, Descriptor)> {
        let start = *self.at.get(text)?;
        behind
            .get_or_insert_with(|| crate::input::Behind::at(start))
            .advance_with(&|range| self.bytes.release(range), start);
        let mut r = In {
            rest: self.bytes.get(start..)?,
            id_len: 0,
        };
        take_digests(&mut r)
    }
}

/// The inventory `bytes` describe, their pages given to `release` as they
/// are read (see [`cachefile::Giving`]).
fn decode(
    bytes: &[u8],
    key: &Digest,
    files: &[(PathBuf, Shared)],
    release: &dyn Fn(std::ops::Range<usize>),
) -> Option<Inventory> {
    let (mut r, mut giving) = INDEX.open_giving(bytes, &key.hex(), release)?;
    let servers = r.list(|r| {
        giving.behind(r);
        let (name, file, pointer, descriptor, launch, ambiguities) = take_head(r)?;
        let (path, text) = files.get(file)?;
        let len = (**text).as_ref().len();
        let tools = r.list(|r| {
            let (tool, descriptor) = take_digests(r)?;
            let (pointer, span, hash) = take_place(r)?;
            if span.end > len {
                return None;
            }
            let t = Tool {
                descriptor,
                pointer: pointer.to_string(),
                lazy: Lazy(Some((text.clone(), span))),
                text: hash,
            };
            Some((tool, t))
        })?;
        let server = Server {
            name: name.clone(),
            source: path.clone(),
            pointer,
            descriptor,
            launch,
            tools: sorted(tools)?,
            ambiguities,
        };
        Some((name, server))
    })?;
    let inv = Inventory {
        servers: sorted(servers)?,
        index_key: None,
    };
    r.rest.is_empty().then_some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{read_files, ReadOptions};
    use std::sync::Arc;

    /// The inventory `bytes` describe, nothing released.
    fn decode(bytes: &[u8], key: &Digest, files: &[(PathBuf, Shared)]) -> Option<Inventory> {
        super::decode(bytes, key, files, &cachefile::keep)
    }

    /// The key of `files`, each hashed whole (no stamp records).
    fn hashed_key(files: &[(PathBuf, Shared)], server: Option<&str>) -> Digest {
        key(files, server, &|i| {
            cachefile::Namer::of((*files[i].1).as_ref())
        })
    }

    /// The file's body the parts make.
    fn joined(parts: Vec<Out>) -> Vec<u8> {
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
            index_dir: Some(dir.path().to_path_buf()),
            ..ReadOptions::default()
        };
        let inv = read_files(
            files
                .iter()
                .map(|(p, b)| (p.clone(), (**b).as_ref().to_vec()))
                .collect(),
            &opts,
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
        let bytes = cachefile::seal(joined(encode(&inv, &key, &files).expect("encodes")));
        let back = decode(&bytes, &key, &files).expect("decodes");
        assert_eq!(summary(&back), summary(&inv));
        let halves = encode_from(&inv, &key, &files, 0).expect("encodes in halves");
        assert_eq!(halves.len(), 2);
        assert_eq!(
            cachefile::seal(joined(halves)),
            bytes,
            "in halves, the same"
        );
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
                    t.lazy.text().map(cachefile::name_text),
                    "its text's hash"
                );
                let plain = !s.ambiguities.iter().any(|a| a.tool.as_ref() == Some(tool));
                match earlier.get(&text, &mut None) {
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
        assert!(earlier.get(&Digest::of(b"no tool"), &mut None).is_none());
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

    /// A multi-server inventory of `n` servers of twelve tools (about
    /// 4.6 MB at 1000: read by two threads), server `i`'s text replaced
    /// by `server(i)` where it gives one. Between two `version` keys.
    fn servers(n: usize, server: impl Fn(usize) -> Option<String>) -> Vec<u8> {
        let list: Vec<String> = (0..n)
            .map(|i| {
                server(i).unwrap_or_else(|| {
                    let tools: Vec<String> = (0..12)
                        .map(|j| {
                            format!(
                                r#"{{"name": "t{j}", "description": "Tool {j} of {i}. {}", "inputSchema": {{"type": "object"}}}}"#,
                                "Reads. ".repeat(48)
                            )
                        })
                        .collect();
                    format!(
                        r#"{{"name": "s{i}", "command": "npx", "tools": [{}]}}"#,
                        tools.join(",\n")
                    )
                })
            })
            .collect();
        format!(
            r#"{{"version": 1, "servers": [{}], "version": 2}}"#,
            list.join(",\n")
        )
        .into_bytes()
    }

    /// A large `servers` array read by two threads (a second core free)
    /// reads as one reader reads it (no core free): servers, tools,
    /// spans, ambiguities in either part, duplicate keys after the array,
    /// with an earlier index or without, and the same error wherever
    /// the text is wrong.
    #[test]
    fn a_large_inventory_read_on_two_threads_is_read_as_on_one() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let splits = || super::super::SPLITS.load(Ordering::Relaxed);
        let dir = tempfile::tempdir().expect("a temporary directory");
        // Each read in a directory of its own (a read leaves its index),
        // with a copy of the earlier capture's index or none.
        let read = |bytes: &[u8], free: bool, earlier: bool| {
            let fresh = tempfile::tempdir().expect("a temporary directory");
            if earlier {
                std::fs::create_dir(fresh.path().join("kams")).expect("a directory");
                for e in std::fs::read_dir(dir.path().join("kams")).expect("the index") {
                    let path = e.expect("an entry").path();
                    let to = fresh
                        .path()
                        .join("kams")
                        .join(path.file_name().expect("a name"));
                    std::fs::copy(&path, to).expect("copies");
                }
            }
            let opts = ReadOptions {
                digests_only: true,
                index_dir: Some(fresh.path().to_path_buf()),
                free_core: Some(std::sync::Arc::new(AtomicBool::new(free))),
                ..ReadOptions::default()
            };
            let before = splits();
            let read = read_files(vec![(PathBuf::from("inv.json"), bytes.to_vec())], &opts);
            let split = splits() > before;
            (
                read.map(|inv| summary(&inv)).map_err(|e| e.to_string()),
                split,
            )
        };
        let twice = r#"{"name": "t0", "description": "one", "description": "two"}"#;
        let odd = |i: usize| -> Option<String> {
            match i {
                // A tool key twice, early and late.
                3 | 990 => Some(format!(r#"{{"name": "s{i}", "tools": [{twice}]}}"#)),
                _ => None,
            }
        };
        let clean = servers(1000, odd);
        assert!(clean.len() > super::super::SPLIT_FROM, "{}", clean.len());
        // The index of another capture, for the earlier reading.
        let before = servers(1000, |i| match i {
            500 => Some(r#"{"name": "s500", "tools": []}"#.into()),
            _ => odd(i),
        });
        let opts = ReadOptions {
            digests_only: true,
            index_dir: Some(dir.path().to_path_buf()),
            ..ReadOptions::default()
        };
        read_files(vec![(PathBuf::from("inv.json"), before)], &opts).expect("reads");
        // Whether a second reader gets a part: not when the first fails
        // before it could start.
        let cases: Vec<(&str, bool, Vec<u8>)> = vec![
            ("as indexed", true, clean.clone()),
            (
                "changed late",
                true,
                servers(1000, |i| match i {
                    800 => Some(r#"{"name": "s800", "tools": [{"name": "new"}]}"#.into()),
                    _ => odd(i),
                }),
            ),
            (
                "not an object late",
                true,
                servers(1000, |i| (i == 900).then(|| "\"s900\"".to_string())),
            ),
            (
                "bad JSON late",
                true,
                servers(1000, |i| {
                    (i == 950).then(|| r#"{"name": "s950" "tools": []}"#.into())
                }),
            ),
            (
                "bad JSON early",
                false,
                servers(1000, |i| (i == 10).then(|| r#"{"name": "s10",}"#.into())),
            ),
        ];
        for (what, splits, text) in &cases {
            for earlier in [false, true] {
                let (one, split) = read(text, false, earlier);
                assert!(!split, "{what}: split with no core free");
                // The second reader starts only if the first is not at
                // its part yet: try a few times for one that did.
                let mut tries = 0;
                let two = loop {
                    let (two, split) = read(text, true, earlier);
                    tries += 1;
                    if split || !splits || tries == 5 {
                        assert!(split || !splits, "{what}: no second reader");
                        break two;
                    }
                };
                assert_eq!(one, two, "{what}, earlier index: {earlier}");
            }
        }
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
                index_dir: Some(index.to_path_buf()),
                ..ReadOptions::default()
            };
            let inv = read_files(vec![(PathBuf::from("inv.json"), bytes)], &opts).expect("reads");
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
        let bytes = cachefile::seal(joined(encode(&inv, &k, &files).expect("encodes")));
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
                let _ = decode(&cachefile::forged(&bytes, n, xor), &k, &files);
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
