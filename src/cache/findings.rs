//! What the detectors found in each tool, remembered with the inventory's
//! index (see [`crate::cache::inventory`]) so that an inventory scanned
//! before is not read for poison again.
//!
//! Two things are remembered, each a function of what it is keyed by:
//!
//! - per tool and per server's own fields, keyed by the inventory: the
//!   findings of the detectors that depend on it alone
//!   ([`crate::detect::Depends::Inventory`]: poison, hidden, the launch
//!   review), before the lock moves their severity (that happens on every
//!   run), and whether those whose silence depends on it alone
//!   ([`crate::detect::Depends::InventoryToReport`]: shadow, whose
//!   severity the lock moves) said nothing. A subject they spoke about is
//!   read and run through them again.
//! - keyed by the inventory and the lock ([`Memo::settled`]): every
//!   finding of every detector that depends on nothing else, after the
//!   lock set its severity. A scan of the same inventory against the same
//!   lock runs only the detectors that read something else (the client
//!   configs).
//!
//! The file is named by the inventory's index key, which covers every
//! byte of every inventory file, and is checked like the indexes (seal,
//! layout, writer, key, and the inventory's server and tool names, in
//! order); the settled findings come first and name the lock's index key
//! (its blob id or the BLAKE3 hash of its text), so that a scan against
//! that lock reads nothing else. The key stays here: the detectors are
//! handed what was found against a lock only when it is this run's.
//!
//! An inventory captured again usually differs in a few tools only. When
//! it has no memo of its own, the newest memo of an inventory with the
//! same server and tool names, in the same order ([`load_earlier`]),
//! serves each tool whose text is byte for byte the one it remembers
//! (each tool's text is named by its SHA-256 hash,
//! [`crate::inventory::text_name`]): the pure detectors
//! read a tool and the inventory's names, nothing else. So do the passes
//! over the names that the lock moves ([`Memo::passes`]): their findings
//! serve against the same lock. Servers' own fields, and the other findings
//! that depend on more, are found anew.

use std::path::Path;

use crate::cache::codec::Decoder;
use crate::cache::codec::Encoder;
use crate::cache::store;
use crate::canon::Digest;
use crate::detect::known::{Memo, Remembered, Server, View};
use crate::finding::Finding;
use crate::inventory::Inventory;

/// The memo files.
const INDEX: store::Named = store::Named {
    prefix: "findings-",
    magic: b"kams-fix\0\0\0\x0b",
    keep: store::Named::KEEP,
};

/// The memo of `inventory` (index key `key`), `None` when there is no
/// usable one, with what was found against the lock whose index key is
/// `lock` (see [`crate::cache::lock::Key::name`]), if it was; when that
/// includes its settled findings, the per-server part is not read.
pub fn load(
    common_dir: &Path,
    key: &Digest,
    inventory: &Inventory,
    lock: Option<&str>,
) -> Option<Memo> {
    let bytes = INDEX.read(common_dir, &key.hex())?;
    decode_named(&bytes, &key.hex(), inventory, Whose::Own, lock, &|r| {
        bytes.release(r)
    })
}

/// The newest memo of another inventory whose servers and tools have the
/// names of `inventory`'s, in the same order (the one `key` names
/// excluded), marked [`Memo::earlier`], without its settled findings
/// (its passes on names serve, if they were found against the lock
/// whose index key is `lock`).
pub fn load_earlier(
    common_dir: &Path,
    key: &Digest,
    inventory: &Inventory,
    lock: Option<&str>,
) -> Option<Memo> {
    let own = key.hex();
    INDEX
        .newest(common_dir)
        .into_iter()
        .filter(|name| *name != own)
        .find_map(|name| {
            let bytes = INDEX.read(common_dir, &name)?;
            // Another inventory's settled findings are stepped over.
            let memo = decode_named(&bytes, &name, inventory, Whose::Earlier, lock, &|r| {
                bytes.release(r)
            })?;
            Some(Memo {
                earlier: true,
                ..memo
            })
        })
}

/// Writes `memo` of `inventory` for `key` (see
/// [`store::Named::store`]), what it found against the lock (settled
/// findings, passes on names) under that lock's index key `lock`: without
/// one, those are not written.
pub fn store(
    common_dir: &Path,
    key: &Digest,
    inventory: &Inventory,
    lock: Option<&str>,
    memo: &View<'_>,
) -> std::io::Result<()> {
    INDEX.store(common_dir, &key.hex(), encode(memo, lock, key, inventory))
}

/// The file's body after its header.
fn encode(memo: &View<'_>, lock: Option<&str>, key: &Digest, inventory: &Inventory) -> Encoder {
    let settled = lock.zip(memo.settled);
    let passes = lock.zip(memo.passes.as_ref());
    // Sized not to grow (each doubling was a copy at the scan's peak:
    // docs/performance.md, "Tenth pass", 67f3fef): pages never written
    // are never the process's.
    let found = settled.map_or(0, |(_, f)| f.len())
        + passes
            .iter()
            .flat_map(|(_, p)| p.iter())
            .map(|f| f.len())
            .sum::<usize>()
        + memo
            .servers
            .iter()
            .flat_map(|s| std::iter::once(&s.server).chain(&s.tools))
            .map(|r| r.pure.len())
            .sum::<usize>();
    let tools: usize = inventory.servers.values().map(|s| 1 + s.tools.len()).sum();
    let mut out = INDEX.begin(&key.hex(), 4096 + tools * 96 + found * 512);
    // The lock's key first, apart, so that a reader can step over what
    // was found against another lock without reading it.
    out.record(&settled.map(|(lock, _)| lock));
    if let Some((_, findings)) = settled {
        out.record(findings);
    }
    out.record(&passes.map(|(lock, _)| lock));
    if let Some((_, found)) = passes {
        out.record(found);
    }
    out.u32(memo.servers.len());
    for (server, m) in inventory.servers.values().zip(memo.servers) {
        out.record(&(&server.name, &m.server));
        out.u32(m.tools.len());
        for (name, r) in server.tools.keys().zip(&m.tools) {
            out.record(&(name, r));
        }
    }
    out
}

/// A finding stepped over: [`Finding`]'s layout (class, severity,
/// server, tool, field, message, evidence), its text borrowed from the
/// file and dropped, nothing copied.
type SteppedOver<'a> = (
    &'a str,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    &'a str,
    Vec<&'a str>,
);

/// Whose memo a file is, to its reader.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Whose {
    /// The inventory's own.
    Own,
    /// Another inventory's, with the same names ([`load_earlier`]).
    Earlier,
}

/// The memo of `inventory` in `bytes`, the file named `name`, its pages
/// given to `release` as they are read (see [`store::Giving`]), with what
/// was found against the lock whose index key is `lock` only. Another
/// inventory's settled findings, and what was found against another lock,
/// are stepped over, not read and dropped (docs/performance.md, "Tenth
/// pass", d1c9fba).
fn decode_named(
    bytes: &[u8],
    name: &str,
    inventory: &Inventory,
    whose: Whose,
    lock: Option<&str>,
    release: &dyn Fn(std::ops::Range<usize>),
) -> Option<Memo> {
    let (mut r, mut giving) = INDEX.open_giving(bytes, name, release)?;
    // Whether what follows was found against `lock` (`None`: nothing was
    // written).
    let against_lock = |r: &mut Decoder<'_>| -> Option<Option<bool>> {
        Some(r.record::<Option<&str>>()?.map(|key| Some(key) == lock))
    };
    let settled = match against_lock(&mut r)? {
        None => None,
        Some(true) if whose == Whose::Own => Some(r.record::<Vec<Finding>>()?),
        Some(_) => {
            r.record::<Vec<SteppedOver>>()?;
            None
        }
    };
    let passes = match against_lock(&mut r)? {
        None => None,
        Some(true) => Some(r.record::<Vec<Vec<Finding>>>()?),
        Some(false) => {
            r.record::<Vec<Vec<SteppedOver>>>()?;
            None
        }
    };
    if settled.is_some() {
        // The seal covered the rest; the key names the inventory.
        return Some(Memo {
            servers: Vec::new(),
            settled,
            passes,
            earlier: false,
        });
    }
    if r.count()? != inventory.servers.len() {
        return None;
    }
    let mut servers = Vec::with_capacity(inventory.servers.len());
    for server in inventory.servers.values() {
        giving.behind(&r);
        let (name, own) = r.record::<(&str, Remembered)>()?;
        if name != server.name || r.count()? != server.tools.len() {
            return None;
        }
        let mut tools = Vec::with_capacity(server.tools.len());
        for name in server.tools.keys() {
            let (read, remembered) = r.record::<(&str, Remembered)>()?;
            if read != name {
                return None;
            }
            tools.push(remembered);
        }
        servers.push(Server { server: own, tools });
    }
    r.rest.is_empty().then_some(Memo {
        servers,
        settled,
        passes,
        earlier: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Class, Severity};

    /// The memo of `inventory` in `bytes`, named by `key`, with what was
    /// found against `lock`.
    fn decode(
        bytes: &[u8],
        key: &Digest,
        inventory: &Inventory,
        lock: Option<&str>,
    ) -> Option<Memo> {
        decode_named(bytes, &key.hex(), inventory, Whose::Own, lock, &store::keep)
    }

    /// The lock `sample`'s memo was found against.
    const LOCK: Option<&str> = Some("blake3-00");

    fn sample() -> (Inventory, Memo) {
        let inv = crate::detect::testing::inventory(&[("a", &["t1", "t2"]), ("b", &["u"])]);
        let finding = Finding {
            class: Class::Poison,
            severity: Severity::High,
            server: "a".into(),
            tool: Some("t2".into()),
            field: Some("/description".into()),
            message: "says \u{200b} things".into(),
            evidence: vec!["one".into(), String::new()],
        };
        let servers = vec![
            Server {
                server: Remembered {
                    pure: vec![finding.clone()],
                    quiet: true,
                    text: None,
                },
                tools: vec![
                    Remembered {
                        pure: Vec::new(),
                        quiet: true,
                        text: Some(Digest::of(b"t1")),
                    },
                    Remembered {
                        pure: vec![finding.clone(), finding.clone()],
                        quiet: false,
                        text: None,
                    },
                ],
            },
            Server {
                server: Remembered::default(),
                tools: vec![Remembered::default()],
            },
        ];
        let memo = Memo {
            servers,
            settled: Some(vec![finding.clone(), finding.clone()]),
            passes: Some(vec![Vec::new(), vec![finding]]),
            earlier: false,
        };
        (inv, memo)
    }

    #[test]
    fn an_earlier_memo_is_the_newest_with_the_same_names_but_its_own() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let dir = dir.path();
        let (inv, memo) = sample();
        let other = crate::detect::testing::inventory(&[("a", &["t1", "t3"]), ("b", &["u"])]);
        let keys: Vec<Digest> = (0..4u8).map(|n| Digest::of(&[n])).collect();
        assert_eq!(load_earlier(dir, &keys[0], &inv, LOCK), None, "none yet");
        let mut older = memo.clone();
        older.servers[0].tools[0].quiet = false;
        // Oldest first: this inventory's names twice, then another's.
        for (key, of, m) in [
            (&keys[1], &inv, &older),
            (&keys[2], &inv, &memo),
            (&keys[3], &other, &memo),
        ] {
            store(dir, key, of, LOCK, &m.view()).expect("stores");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let earlier = load_earlier(dir, &keys[0], &inv, LOCK).expect("an earlier memo");
        assert!(earlier.earlier);
        assert_eq!(
            earlier.settled, None,
            "another inventory's settled findings"
        );
        assert_eq!(earlier.servers, memo.servers, "the newest with these names");
        assert_eq!(earlier.passes, memo.passes, "the passes on names serve");
        for lock in [Some("blake3-01"), None] {
            let earlier = load_earlier(dir, &keys[0], &inv, lock).expect("an earlier memo");
            assert_eq!(earlier.servers, memo.servers);
            assert_eq!(earlier.passes, None, "found against another lock");
        }
        let earlier = load_earlier(dir, &keys[2], &inv, LOCK).expect("not its own");
        assert_eq!(earlier.servers, older.servers);
        assert_eq!(
            load_earlier(
                dir,
                &keys[0],
                &crate::detect::testing::inventory(&[("c", &["t"])]),
                LOCK
            ),
            None
        );
    }

    #[test]
    fn a_memo_reads_back_for_its_inventory_only() {
        let (inv, memo) = sample();
        let key = Digest::of(b"inventory");
        let bytes = store::seal(encode(&memo.view(), LOCK, &key, &inv).0);
        let per_tool = Memo {
            settled: None,
            passes: None,
            ..memo.clone()
        };
        for lock in [None, Some("blake3-01")] {
            assert_eq!(
                decode(&bytes, &key, &inv, lock),
                Some(per_tool.clone()),
                "another lock, or none: the per-tool part is read, and nothing found against the lock"
            );
        }
        let settled_only = Memo {
            servers: Vec::new(),
            ..memo.clone()
        };
        assert_eq!(
            decode(&bytes, &key, &inv, LOCK),
            Some(settled_only),
            "its lock: the settled findings are all it reads"
        );
        let unsettled = Memo {
            settled: None,
            ..memo.clone()
        };
        let bytes2 = store::seal(encode(&unsettled.view(), LOCK, &key, &inv).0);
        assert_eq!(decode(&bytes2, &key, &inv, LOCK), Some(unsettled));
        // Without a key for the lock, what was found against it is not
        // written.
        let bytes3 = store::seal(encode(&memo.view(), None, &key, &inv).0);
        assert_eq!(decode(&bytes3, &key, &inv, LOCK), Some(per_tool));
        assert_eq!(decode(&bytes, &Digest::of(b"other"), &inv, None), None);
        let other = crate::detect::testing::inventory(&[("a", &["t1", "t3"]), ("b", &["u"])]);
        assert_eq!(
            decode(&bytes, &key, &other, None),
            None,
            "another tool name"
        );
        for n in 0..bytes.len() - 32 {
            for xor in [0x01, 0x80, 0xff] {
                let _ = decode(&store::forged(&bytes, n, xor), &key, &inv, None);
            }
        }
        for n in (0..bytes.len()).step_by(3) {
            assert_eq!(decode(&bytes[..n], &key, &inv, None), None);
            let mut bad = bytes.clone();
            bad[n] ^= 0x10;
            assert_eq!(decode(&bad, &key, &inv, None), None);
        }
    }
}
