//! The inventory against the lock: drift per field, added, removed and
//! unapproved entries. A pure function over values; reading files and git
//! happens around it.
//!
//! This file pairs the two sides and turns each pair into findings;
//! `drift` says what changed in a field, `words` shows a changed text word
//! by word, `schema` compares schemas and `rename` finds renamed tools.

mod drift;
pub mod rename;
pub mod schema;
mod words;

use self::drift::{launch_drift, server_drift, tool_drift};
pub use self::drift::{values_evidence, Drift};
pub use self::words::word_diff;

use crate::descriptor::Descriptor;
use crate::finding::{Class, Finding, Severity};
use crate::inventory::Inventory;
use crate::json::{Object, Value};
use crate::lock::{Entry, Lock, State};

/// A subject present in the lock, the inventory, or both.
pub struct Pair<'a> {
    /// Server name.
    pub server: &'a str,
    /// Tool name; `None` for the server-level entry.
    pub tool: Option<&'a str>,
    /// The lock entry, if any.
    pub entry: Option<&'a Entry>,
    /// The advertised descriptor, if any.
    pub seen: Option<&'a Descriptor>,
    /// Server level only: the launch the lock recorded, if any.
    pub locked_launch: Option<&'a Value>,
    /// Server level only: the inventory's launch fields, as written.
    pub seen_launch: Option<&'a Object>,
}

/// Every subject of the inventory and the lock, sorted by server then tool
/// (server level first).
pub fn pairs<'a>(inv: &'a Inventory, lock: &'a Lock) -> Vec<Pair<'a>> {
    let mut out = Vec::with_capacity(inv.servers.values().map(|s| s.tools.len() + 1).sum());
    for (server, s_inv, s_lock) in joined(inv.servers.iter(), lock.servers.iter()) {
        let entry = s_lock.and_then(|s| s.server.as_ref());
        let seen = s_inv.map(|s| &s.descriptor);
        out.push(Pair {
            server,
            tool: None,
            entry,
            // Input that carries no server-level field at all says nothing
            // about them: what the lock holds stands, not compared.
            seen: match (seen, entry) {
                (Some(d), Some(e)) if says_nothing_of_the_server(d, e) => Some(&e.descriptor),
                _ => seen,
            },
            locked_launch: s_lock.and_then(|s| s.launch.as_ref()),
            seen_launch: s_inv.map(|s| &s.launch),
        });
        let inv_tools = s_inv.into_iter().flat_map(|s| &s.tools);
        let lock_tools = s_lock.into_iter().flat_map(|s| &s.tools);
        for (tool, seen, entry) in joined(inv_tools, lock_tools) {
            out.push(Pair {
                server,
                tool: Some(tool),
                entry,
                seen: seen.map(|t| &t.descriptor),
                locked_launch: None,
                seen_launch: None,
            });
        }
    }
    out
}

/// True when `seen`, a server-level descriptor, has no field at all while
/// the lock's `entry` has some: the input carried no server information
/// (a bare `tools/list` result, JSON-RPC lines without `initialize`, a
/// listing of tools only), since a server always names itself in
/// `initialize`. Such input cannot hide a change: it shows no text that
/// could have changed.
pub fn says_nothing_of_the_server(seen: &Descriptor, entry: &Entry) -> bool {
    // Asked of every server of every comparison: hashed once.
    static EMPTY: std::sync::LazyLock<crate::canon::Digest> =
        std::sync::LazyLock::new(|| crate::canon::Digest::of(b"{}"));
    seen.digest == *EMPTY && entry.descriptor.digest != *EMPTY
}

/// The servers of `inv` whose input says nothing of their server-level
/// fields while `lock` records some ([`says_nothing_of_the_server`]).
pub fn servers_without_fields<'a>(inv: &'a Inventory, lock: &Lock) -> Vec<&'a str> {
    inv.servers
        .iter()
        .filter(|(name, s)| {
            lock.entry(name, None)
                .is_some_and(|e| says_nothing_of_the_server(&s.descriptor, e))
        })
        .map(|(name, _)| name.as_str())
        .collect()
}

/// The subjects of `pairs` whose lock entry and inventory descriptor
/// differ: after a read that kept digests only, the only ones whose
/// fields are compared, so the only ones to rebuild. (Collected from a
/// borrow: collecting in place from the pairs would keep their whole
/// allocation alive for a few names; docs/performance.md, ninth pass.)
pub fn drifted(pairs: &[Pair<'_>]) -> Vec<(String, Option<String>)> {
    // A server that lost a tool and gained one may have renamed it: both
    // sides' words are compared ([`rename::renames`]).
    let (mut lost, mut gained) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for p in pairs.iter().filter(|p| p.tool.is_some()) {
        match (p.entry, p.seen) {
            (Some(_), None) => {
                lost.insert(p.server);
            }
            (None, Some(_)) => {
                gained.insert(p.server);
            }
            _ => {}
        }
    }
    pairs
        .iter()
        .filter(|p| match (p.entry, p.seen) {
            (Some(e), Some(d)) => e.descriptor.digest != d.digest,
            (Some(_), None) | (None, Some(_)) => {
                p.tool.is_some() && lost.contains(p.server) && gained.contains(p.server)
            }
            (None, None) => false,
        })
        .map(|p| (p.server.to_string(), p.tool.map(str::to_string)))
        .collect()
}

/// Every key of two maps' entries (each sorted by key) once, in order,
/// with its value on either side: one pass over both, no look-ups.
fn joined<'a, A: 'a, B: 'a>(
    a: impl Iterator<Item = (&'a String, &'a A)>,
    b: impl Iterator<Item = (&'a String, &'a B)>,
) -> impl Iterator<Item = (&'a str, Option<&'a A>, Option<&'a B>)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || {
        let order = match (a.peek(), b.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((x, _)), Some((y, _))) => x.cmp(y),
        };
        Some(match order {
            std::cmp::Ordering::Less => a.next().map(|(k, v)| (k.as_str(), Some(v), None))?,
            std::cmp::Ordering::Greater => b.next().map(|(k, v)| (k.as_str(), None, Some(v)))?,
            std::cmp::Ordering::Equal => {
                let (k, v) = a.next()?;
                (k.as_str(), Some(v), b.next().map(|(_, w)| w))
            }
        })
    })
}

/// All findings of the inventory against the lock (drift, added, removed,
/// unapproved), unsorted.
pub fn compare(inv: &Inventory, lock: &Lock) -> Vec<Finding> {
    let mut out = Vec::new();
    let all = pairs(inv, lock);
    for pair in &all {
        compare_pair(pair, &mut out);
    }
    for r in rename::renames(&all) {
        renamed(&all, &r, &mut out);
    }
    for r in rename::denied_renames(&all) {
        out.push(Finding {
            class: Class::Denied,
            severity: Severity::High,
            server: r.server.to_string(),
            tool: Some(r.to.to_string()),
            field: Some("/name".into()),
            message: format!(
                "looks like `{}`, which is denied, under a new name: a client should not offer it",
                r.from
            ),
            evidence: vec![if r.exact {
                "every field but the name is the denied tool's".to_string()
            } else {
                "the same schema shape, and mostly the same description".to_string()
            }],
        });
    }
    out
}

/// Replaces the `removed` finding of `r`'s old name and the `added` one of
/// its new name with one `renamed` finding on the new name: at the
/// severity of the worst change besides the name (low when there is
/// none), each such change a line of its evidence.
fn renamed(all: &[Pair<'_>], r: &rename::Rename<'_>, out: &mut Vec<Finding>) {
    let find = |tool: &str| {
        all.iter()
            .find(|p| p.server == r.server && p.tool == Some(tool))
    };
    let (
        Some(Pair {
            entry: Some(entry), ..
        }),
        Some(Pair {
            seen: Some(seen), ..
        }),
    ) = (find(r.from), find(r.to))
    else {
        return;
    };
    out.retain(|f| {
        !(f.server == r.server
            && (f.class == Class::Removed && f.tool.as_deref() == Some(r.from)
                || f.class == Class::Added && f.tool.as_deref() == Some(r.to)))
    });
    let mut drift = Vec::new();
    if !r.exact {
        tool_drift(&entry.descriptor, seen, &mut drift);
        drift.retain(|d| d.field != "/name");
    }
    let severity = drift
        .iter()
        .map(|d| lowered_if_provisional(d.severity, entry.state))
        .max()
        .unwrap_or(Severity::Low)
        .max(Severity::Low);
    let mut evidence = vec![format!(
        "was `{}` ({}, digest {})",
        r.from,
        entry.state.as_str(),
        entry.descriptor.digest
    )];
    for d in &drift {
        evidence.push(format!("{}: {}", d.field, d.message));
        evidence.extend(d.evidence.iter().map(|e| format!("  {e}")));
    }
    out.push(Finding {
        class: Class::Renamed,
        severity,
        server: r.server.to_string(),
        tool: Some(r.to.to_string()),
        field: Some("/name".into()),
        message: if drift.is_empty() {
            format!("renamed from `{}`: the same tool under a new name", r.from)
        } else {
            format!(
                "renamed from `{}`, and {} other change{}",
                r.from,
                drift.len(),
                if drift.len() == 1 { "" } else { "s" }
            )
        },
        evidence,
    });
}

/// Findings for one subject.
pub fn compare_pair(pair: &Pair<'_>, out: &mut Vec<Finding>) {
    let finding = |class, severity, field: Option<String>, message: String, evidence| Finding {
        class,
        severity,
        server: pair.server.to_string(),
        tool: pair.tool.map(str::to_string),
        field,
        message,
        evidence,
    };
    if let Some(d) = launch_drift(pair) {
        let state = pair.entry.map_or(State::Pinned, |e| e.state);
        out.push(finding(
            Class::Drift,
            lowered_if_provisional(d.severity, state),
            Some(d.field),
            d.message,
            d.evidence,
        ));
    }
    match (pair.entry, pair.seen) {
        (None, None) => {}
        (None, Some(seen)) => {
            let what = if pair.tool.is_some() {
                "tool"
            } else {
                "server"
            };
            out.push(finding(
                Class::Added,
                Severity::Medium,
                None,
                format!("new {what}, not in the lock: a capability nobody reviewed"),
                vec![format!("digest {}", seen.digest)],
            ));
        }
        // A denial stands whatever the text is now: one finding, and
        // nothing about how it changed (it is not to be used either way).
        (Some(entry), Some(seen)) if entry.state == State::Denied => {
            let a = entry.approval.as_deref();
            out.push(finding(
                Class::Denied,
                Severity::High,
                None,
                format!(
                    "denied{}, and still advertised: a client should not offer it",
                    a.map(|a| format!(" by {} at {}", a.approver, a.at))
                        .unwrap_or_default()
                ),
                [
                    a.filter(|a| !a.note.is_empty())
                        .map(|a| format!("note: {}", a.note)),
                    Some(format!("denied digest {}", entry.descriptor.digest)),
                    (seen.digest != entry.descriptor.digest)
                        .then(|| format!("advertised digest {}", seen.digest)),
                ]
                .into_iter()
                .flatten()
                .collect(),
            ));
        }
        // Not advertised: the denial is kept for when it comes back.
        (Some(entry), None) if entry.state == State::Denied => {}
        (Some(entry), None) => {
            let sev = lowered_if_provisional(Severity::Low, entry.state);
            let what = if pair.tool.is_some() {
                "tool"
            } else {
                "server"
            };
            out.push(finding(
                Class::Removed,
                sev,
                None,
                format!(
                    "{what} in the lock ({}) is no longer advertised",
                    entry.state.as_str()
                ),
                vec![format!("locked digest {}", entry.descriptor.digest)],
            ));
        }
        (Some(entry), Some(seen)) => {
            if entry.state == State::Provisional {
                out.push(finding(
                    Class::Unapproved,
                    Severity::Low,
                    None,
                    "recorded but not pinned: nobody has approved it".into(),
                    vec![format!("first seen {}", entry.first_seen)],
                ));
            }
            if entry.descriptor.digest == seen.digest {
                return;
            }
            let mut drift = Vec::new();
            if pair.tool.is_some() {
                tool_drift(&entry.descriptor, seen, &mut drift);
            } else {
                server_drift(&entry.descriptor, seen, &mut drift);
            }
            for d in drift {
                out.push(finding(
                    Class::Drift,
                    lowered_if_provisional(d.severity, entry.state),
                    Some(d.field),
                    d.message,
                    d.evidence,
                ));
            }
        }
    }
}

/// `s`, the severity of a change to a pinned entry, for an entry in
/// `state`: a provisional entry was never approved, so a change to it is
/// one step less severe.
fn lowered_if_provisional(s: Severity, state: State) -> Severity {
    match state {
        State::Pinned | State::Denied => s,
        State::Provisional => s.lower(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`joined`] gives what looking each key up in both maps gives, on
    /// many pairs of key sets: disjoint, equal, nested, interleaved, empty,
    /// with keys that sort by bytes (`Z` < `a` < `é`).
    #[test]
    fn joined_is_the_union_of_the_keys_with_both_values() {
        use std::collections::{BTreeMap, BTreeSet};
        let universe = ["", "Z", "a", "a_b", "ab", "b", "é", "\u{1f600}"];
        for mask in 0u32..(1 << (2 * universe.len())) {
            let a: BTreeMap<String, usize> = (0..universe.len())
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| (universe[i].to_string(), i))
                .collect();
            let b: BTreeMap<String, usize> = (0..universe.len())
                .filter(|i| mask >> (universe.len() + i) & 1 == 1)
                .map(|i| (universe[i].to_string(), 100 + i))
                .collect();
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            let expected: Vec<(&str, Option<&usize>, Option<&usize>)> = keys
                .into_iter()
                .map(|k| (k.as_str(), a.get(k), b.get(k)))
                .collect();
            let got: Vec<_> = joined(a.iter(), b.iter()).collect();
            assert_eq!(got, expected, "{a:?} {b:?}");
        }
    }

    fn launch_findings(locked: Option<&str>, seen: &str, state: Option<State>) -> Vec<Finding> {
        let parse = |t: &str| crate::json::parse(t.as_bytes()).unwrap().0;
        let locked = locked.map(parse);
        let seen = parse(seen);
        let entry = state.map(|state| Entry {
            state,
            descriptor: Descriptor::new(Object::new()).0,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: (state == State::Pinned).then(|| {
                crate::lock::Approval {
                    approver: "A <a@x>".into(),
                    at: "2026-01-01T00:00:00Z".into(),
                    note: String::new(),
                }
                .into()
            }),
            lazy: Default::default(),
        });
        let pair = Pair {
            server: "s",
            tool: None,
            entry: entry.as_ref(),
            seen: entry.as_ref().map(|e| &e.descriptor),
            locked_launch: locked.as_ref(),
            seen_launch: seen.as_object(),
        };
        let mut out = Vec::new();
        compare_pair(&pair, &mut out);
        out.retain(|f| f.class == Class::Drift);
        out
    }

    #[test]
    fn a_changed_launch_is_high_drift_when_the_lock_has_one() {
        let old = r#"{"command":["node","a.js"]}"#;
        let found = launch_findings(
            Some(old),
            r#"{"command":["node","b.js"],"transport":"stdio"}"#,
            Some(State::Pinned),
        );
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(
            (f.severity, f.field.as_deref()),
            (Severity::High, Some("/launch"))
        );
        assert!(
            f.message.contains("a different command now runs"),
            "{}",
            f.message
        );
        assert_eq!(
            f.evidence,
            [
                r#"old: {"command":["node","a.js"]}"#,
                r#"new: {"command":["node","b.js"]}"#
            ]
        );
        let found = launch_findings(
            Some(old),
            r#"{"command":["node","b.js"]}"#,
            Some(State::Provisional),
        );
        assert_eq!(found[0].severity, Severity::High.lower());
        // The same launch written the capture way, or no launch to compare.
        assert!(launch_findings(
            Some(old),
            r#"{"command":"node","args":["a.js"],"env":{}}"#,
            Some(State::Pinned)
        )
        .is_empty());
        assert!(launch_findings(None, r#"{"command":["other"]}"#, Some(State::Pinned)).is_empty());
        assert!(
            launch_findings(Some(old), r#"{"transport":"stdio"}"#, Some(State::Pinned)).is_empty()
        );
    }
}
