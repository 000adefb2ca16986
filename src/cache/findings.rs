//! What the detectors found in each tool, remembered with the inventory's
//! index (see [`crate::cache::inventory`]) so that an inventory scanned
//! before is not read for poison again.
//!
//! Two things are remembered, each a function of what it is keyed by:
//!
//! - per tool and per server's own fields, keyed by the inventory: the
//!   findings of the detectors that depend on it alone
//!   ([`super::Depends::Inventory`]: poison, hidden, the launch review),
//!   before the lock moves their severity (that happens on every run), and
//!   whether those whose silence depends on it alone
//!   ([`super::Depends::InventoryToReport`]: shadow, whose severity the
//!   lock moves) said nothing. A subject they spoke about is read and run
//!   through them again.
//! - keyed by the inventory and the lock ([`Settled`]): every finding of
//!   every detector that depends on nothing else, after the lock set its
//!   severity. A scan of the same inventory against the same lock runs
//!   only the detectors that read something else (the client configs).
//!
//! The file is named by the inventory's index key, which covers every
//! byte of every inventory file, and is checked like the indexes (seal,
//! layout, writer, key, and the inventory's server and tool names, in
//! order); the settled findings come first and name the lock's index key
//! (its blob id or the BLAKE3 hash of its text), so that a scan against
//! that lock reads nothing else.
//!
//! An inventory captured again usually differs in a few tools only. When
//! it has no memo of its own, the newest memo of an inventory with the
//! same server and tool names, in the same order ([`load_earlier`]),
//! serves each tool whose text is byte for byte the one it remembers
//! (each tool's text is named by its SHA-256 hash,
//! [`store::name_text`]): the pure detectors
//! read a tool and the inventory's names, nothing else. So do the passes
//! over the names that the lock moves ([`Passes`]): their findings serve
//! against the same lock. Servers' own fields, and the other findings
//! that depend on more, are found anew.

use std::path::Path;

use crate::cache::codec::Encoder;
use crate::cache::store;
use crate::canon::Digest;
use crate::detect::known::{Memo, Passes, Remembered, Server, Settled, View};
use crate::finding::Finding;
use crate::inventory::Inventory;

/// The memo files.
const INDEX: store::Named = store::Named {
    prefix: "findings-",
    magic: b"kams-fix\0\0\0\x0b",
    keep: store::Named::KEEP,
};

/// The memo of `inventory` (index key `key`), `None` when there is no
/// usable one. When its settled findings are those of the lock whose
/// index key is `lock`, the per-server part is not read.
pub fn load(
    common_dir: &Path,
    key: &Digest,
    inventory: &Inventory,
    lock: Option<&str>,
) -> Option<Memo> {
    let bytes = INDEX.read(common_dir, &key.hex())?;
    decode_named(&bytes, &key.hex(), inventory, Some(lock), &|r| {
        bytes.release(r)
    })
}

/// The newest memo of another inventory whose servers and tools have the
/// names of `inventory`'s, in the same order (the one `key` names
/// excluded), marked [`Memo::earlier`], without its settled findings
/// (its passes on names serve).
pub fn load_earlier(common_dir: &Path, key: &Digest, inventory: &Inventory) -> Option<Memo> {
    let own = key.hex();
    INDEX
        .newest(common_dir)
        .into_iter()
        .filter(|name| *name != own)
        .find_map(|name| {
            let bytes = INDEX.read(common_dir, &name)?;
            // Another inventory's settled findings are stepped over.
            let memo = decode_named(&bytes, &name, inventory, None, &|r| bytes.release(r))?;
            Some(Memo {
                earlier: true,
                ..memo
            })
        })
}

/// Writes `memo` of `inventory` for `key` (see
/// [`store::Named::store`]).
pub fn store(
    common_dir: &Path,
    key: &Digest,
    inventory: &Inventory,
    memo: &View<'_>,
) -> std::io::Result<()> {
    INDEX.store(common_dir, &key.hex(), encode(memo, key, inventory))
}

/// The file's body after its header.
fn encode(memo: &View<'_>, key: &Digest, inventory: &Inventory) -> Encoder {
    // Sized not to grow (each doubling was a copy at the scan's peak:
    // docs/performance.md, "Tenth pass", 67f3fef): pages never written
    // are never the process's.
    let found = memo.settled.map_or(0, |(_, f)| f.len())
        + memo
            .passes
            .iter()
            .flat_map(|(_, p)| p)
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
    out.record(&memo.settled);
    out.record(&memo.passes);
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

/// The memo of `inventory` in `bytes`, the file named `name`, its pages
/// given to `release` as they are read (see [`store::Giving`]); with
/// the settled findings of `lock`, only those. `lock` is `None` for
/// another inventory's memo: its settled findings are stepped over, not
/// read and dropped (docs/performance.md, "Tenth pass", d1c9fba).
fn decode_named(
    bytes: &[u8],
    name: &str,
    inventory: &Inventory,
    lock: Option<Option<&str>>,
    release: &dyn Fn(std::ops::Range<usize>),
) -> Option<Memo> {
    let (mut r, mut giving) = INDEX.open_giving(bytes, name, release)?;
    let settled = match lock {
        None => {
            r.record::<Option<(&str, Vec<SteppedOver>)>>()?;
            None
        }
        Some(_) => r
            .record::<Option<(String, Vec<Finding>)>>()?
            .map(|(lock, findings)| Settled { lock, findings }),
    };
    let lock = lock.flatten();
    let passes = r
        .record::<Option<(String, Vec<Vec<Finding>>)>>()?
        .map(|(lock, found)| Passes { lock, found });
    if settled
        .as_ref()
        .is_some_and(|s| lock == Some(s.lock.as_str()))
    {
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

    /// The memo of `inventory` in `bytes`, named by `key`.
    fn decode(
        bytes: &[u8],
        key: &Digest,
        inventory: &Inventory,
        lock: Option<&str>,
    ) -> Option<Memo> {
        decode_named(bytes, &key.hex(), inventory, Some(lock), &store::keep)
    }

    fn sample() -> (Inventory, Memo) {
        let inv = crate::detect::test_inventory(&[("a", &["t1", "t2"]), ("b", &["u"])]);
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
            settled: Some(Settled {
                lock: "blake3-00".into(),
                findings: vec![finding.clone(), finding.clone()],
            }),
            passes: Some(Passes {
                lock: "blake3-00".into(),
                found: vec![Vec::new(), vec![finding]],
            }),
            earlier: false,
        };
        (inv, memo)
    }

    #[test]
    fn an_earlier_memo_is_the_newest_with_the_same_names_but_its_own() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let dir = dir.path();
        let (inv, memo) = sample();
        let other = crate::detect::test_inventory(&[("a", &["t1", "t3"]), ("b", &["u"])]);
        let keys: Vec<Digest> = (0..4u8).map(|n| Digest::of(&[n])).collect();
        assert_eq!(load_earlier(dir, &keys[0], &inv), None, "none yet");
        let mut older = memo.clone();
        older.servers[0].tools[0].quiet = false;
        // Oldest first: this inventory's names twice, then another's.
        for (key, of, m) in [
            (&keys[1], &inv, &older),
            (&keys[2], &inv, &memo),
            (&keys[3], &other, &memo),
        ] {
            store(dir, key, of, &m.view()).expect("stores");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let earlier = load_earlier(dir, &keys[0], &inv).expect("an earlier memo");
        assert!(earlier.earlier);
        assert_eq!(
            earlier.settled, None,
            "another inventory's settled findings"
        );
        assert_eq!(earlier.servers, memo.servers, "the newest with these names");
        assert_eq!(earlier.passes, memo.passes, "the passes on names serve");
        let earlier = load_earlier(dir, &keys[2], &inv).expect("not its own");
        assert_eq!(earlier.servers, older.servers);
        assert_eq!(
            load_earlier(
                dir,
                &keys[0],
                &crate::detect::test_inventory(&[("c", &["t"])])
            ),
            None
        );
    }

    #[test]
    fn a_memo_reads_back_for_its_inventory_only() {
        let (inv, memo) = sample();
        let key = Digest::of(b"inventory");
        let bytes = store::seal(encode(&memo.view(), &key, &inv).0);
        assert_eq!(decode(&bytes, &key, &inv, None), Some(memo.clone()));
        assert_eq!(
            decode(&bytes, &key, &inv, Some("blake3-01")),
            Some(memo.clone()),
            "another lock: the per-tool part is read"
        );
        let settled_only = Memo {
            servers: Vec::new(),
            ..memo.clone()
        };
        assert_eq!(
            decode(&bytes, &key, &inv, Some("blake3-00")),
            Some(settled_only),
            "its lock: the settled findings are all it reads"
        );
        let unsettled = Memo {
            settled: None,
            ..memo.clone()
        };
        let bytes2 = store::seal(encode(&unsettled.view(), &key, &inv).0);
        assert_eq!(decode(&bytes2, &key, &inv, None), Some(unsettled));
        assert_eq!(decode(&bytes, &Digest::of(b"other"), &inv, None), None);
        let other = crate::detect::test_inventory(&[("a", &["t1", "t3"]), ("b", &["u"])]);
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
