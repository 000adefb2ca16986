//! The three-way merge of two locks, entry by entry, for git's merge driver.
//!
//! git's own line merge conflicts whenever two branches add entries at the
//! same place in the sorted order, and its conflict markers make the lock
//! unreadable. Merging the values instead gives the same answer a person
//! would for everything but a real disagreement about one entry: two
//! branches that pin, re-pin or record different entries always merge. What
//! two sides did differently to the same entry (or to a server's launch) is
//! a conflict, left for a person; the merged lock then holds our side of it,
//! so that it stays a valid lock that `git kams pin` can work on.
//!
//! Pure: values in, the merged lock and its conflicts out.

use std::collections::BTreeSet;

use super::format::{Entry, Lock, LockServer};
use crate::json::Value;

/// A value in the merge base and on each side (`None`: absent there).
#[derive(Clone, Debug, PartialEq)]
pub struct Three<T> {
    /// In the merge base.
    pub base: Option<T>,
    /// Our side (what the merged lock holds after a conflict).
    pub ours: Option<T>,
    /// Their side.
    pub theirs: Option<T>,
}

impl<T: Clone> Three<T> {
    fn of(base: Option<&T>, ours: Option<&T>, theirs: Option<&T>) -> Three<T> {
        Three {
            base: base.cloned(),
            ours: ours.cloned(),
            theirs: theirs.cloned(),
        }
    }
}

/// What part of a server a conflict is about, with its three values.
#[derive(Clone, Debug, PartialEq)]
pub enum What {
    /// The server's recorded launch.
    Launch(Three<Value>),
    /// The server-level entry.
    Server(Three<Entry>),
    /// A tool's entry: its name and values.
    Tool(String, Three<Entry>),
}

/// A part that both sides changed, each in its own way.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    /// The server's name.
    pub server: String,
    /// Which part of it, and its values.
    pub what: What,
}

/// The merged lock and what could not be merged.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// The merge; for each conflict, our side.
    pub lock: Lock,
    /// Parts both sides changed differently, sorted by server and part.
    pub conflicts: Vec<Conflict>,
}

/// Merges `ours` and `theirs`, both descended from `base`.
///
/// For every launch and entry: a change made on one side only is taken, the
/// same change made on both sides is taken once, and different changes on
/// both sides (a removal against a change included) are a conflict that
/// keeps our side. Adding and removing are changes like any other.
pub fn merge(base: &Lock, ours: &Lock, theirs: &Lock) -> Merged {
    let names: BTreeSet<&String> = base
        .servers
        .keys()
        .chain(ours.servers.keys())
        .chain(theirs.servers.keys())
        .collect();
    let empty = LockServer::default();
    let mut lock = Lock::default();
    let mut conflicts = Vec::new();
    for name in names {
        let (b, o, t) = (
            base.servers.get(name),
            ours.servers.get(name),
            theirs.servers.get(name),
        );
        let (bs, os, ts) = (
            b.unwrap_or(&empty),
            o.unwrap_or(&empty),
            t.unwrap_or(&empty),
        );
        let mut conflict = |what: What| {
            conflicts.push(Conflict {
                server: name.clone(),
                what,
            })
        };
        let mut merged = LockServer::default();
        // A launch, its approval and the configs it was approved from are
        // one value: a side that approved the same launch anew changed it.
        let launch = |s: &LockServer| {
            (
                s.launch.clone(),
                s.launch_approval.clone(),
                s.launch_configs.clone(),
            )
        };
        let (bl, ol, tl) = (launch(bs), launch(os), launch(ts));
        match pick(Some(&bl), Some(&ol), Some(&tl)) {
            Ok(l) => {
                (merged.launch, merged.launch_approval, merged.launch_configs) =
                    l.cloned().unwrap_or_default();
            }
            Err(()) => {
                (merged.launch, merged.launch_approval, merged.launch_configs) = ol.clone();
                conflict(What::Launch(Three::of(
                    bs.launch.as_ref(),
                    os.launch.as_ref(),
                    ts.launch.as_ref(),
                )));
            }
        }
        match entry(bs.server.as_ref(), os.server.as_ref(), ts.server.as_ref()) {
            Ok(e) => merged.server = e,
            Err(()) => {
                merged.server = os.server.clone();
                conflict(What::Server(Three::of(
                    bs.server.as_ref(),
                    os.server.as_ref(),
                    ts.server.as_ref(),
                )));
            }
        }
        let tools: BTreeSet<&String> = bs
            .tools
            .keys()
            .chain(os.tools.keys())
            .chain(ts.tools.keys())
            .collect();
        for tool in tools {
            let (bt, ot, tt) = (bs.tools.get(tool), os.tools.get(tool), ts.tools.get(tool));
            let value = match entry(bt, ot, tt) {
                Ok(e) => e,
                Err(()) => {
                    conflict(What::Tool(tool.clone(), Three::of(bt, ot, tt)));
                    ot.cloned()
                }
            };
            if let Some(e) = value {
                merged.tools.insert(tool.clone(), e);
            }
        }
        // A server with nothing left in it is kept only where the sides
        // agree it is there: it was dropped by the side that dropped its
        // last entry, but a lock may hold an empty server on purpose.
        let (bp, op, tp) = (b.is_some(), o.is_some(), t.is_some());
        let present = if op == tp || tp == bp { op } else { tp };
        if present || merged != LockServer::default() {
            lock.servers.insert(name.clone(), merged);
        }
    }
    Merged { lock, conflicts }
}

/// The three-way choice for one value: `Err` when the sides changed it
/// differently.
fn pick<'a, T: PartialEq>(
    base: Option<&'a T>,
    ours: Option<&'a T>,
    theirs: Option<&'a T>,
) -> Result<Option<&'a T>, ()> {
    if ours == theirs || theirs == base {
        Ok(ours)
    } else if ours == base {
        Ok(theirs)
    } else {
        Err(())
    }
}

/// [`pick`] for an entry, with one more agreement: two sides that recorded
/// the same entry at different times (each ran `git kams record` on the
/// same new tool) agree on everything a reviewer looks at, and the entry
/// was first seen at the earlier of the two times.
fn entry(
    base: Option<&Entry>,
    ours: Option<&Entry>,
    theirs: Option<&Entry>,
) -> Result<Option<Entry>, ()> {
    match pick(base, ours, theirs) {
        Ok(e) => Ok(e.cloned()),
        Err(()) => match (ours, theirs) {
            (Some(o), Some(t))
                if o.first_seen != t.first_seen
                    && Entry {
                        first_seen: t.first_seen.clone(),
                        ..o.clone()
                    } == *t =>
            {
                Ok(Some(if o.first_seen <= t.first_seen {
                    o.clone()
                } else {
                    t.clone()
                }))
            }
            _ => Err(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Descriptor;
    use crate::json;
    use crate::lock::{Approval, State};

    fn tool(name: &str, description: &str, note: Option<&str>) -> Entry {
        let text = format!(r#"{{"name":"{name}","description":"{description}"}}"#);
        let (v, _) = json::parse(text.as_bytes()).unwrap();
        Entry {
            state: if note.is_some() {
                State::Pinned
            } else {
                State::Provisional
            },
            descriptor: Descriptor::new(v.as_object().unwrap().clone()).0,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: note.map(|n| {
                Approval {
                    approver: "A <a@example.com>".into(),
                    at: "2026-01-02T00:00:00Z".into(),
                    note: n.into(),
                }
                .into()
            }),
            lazy: Default::default(),
        }
    }

    fn lock(entries: &[(&str, &str, Entry)]) -> Lock {
        let mut lock = Lock::default();
        for (server, name, e) in entries {
            lock.servers
                .entry(server.to_string())
                .or_default()
                .tools
                .insert(name.to_string(), e.clone());
        }
        lock
    }

    fn launch(text: &str) -> Value {
        json::parse(text.as_bytes()).unwrap().0
    }

    #[test]
    fn changes_on_different_entries_merge() {
        let a = tool("a", "A", None);
        let b = tool("b", "B", None);
        let base = lock(&[("s", "a", a.clone()), ("s", "b", b.clone())]);
        let a2 = tool("a", "A", Some("ok"));
        let b2 = tool("b", "B2", Some("ok"));
        let ours = lock(&[("s", "a", a2.clone()), ("s", "b", b.clone())]);
        let theirs = lock(&[
            ("s", "a", a.clone()),
            ("s", "b", b2.clone()),
            ("t", "c", tool("c", "C", None)),
        ]);
        let m = merge(&base, &ours, &theirs);
        assert!(m.conflicts.is_empty(), "{:?}", m.conflicts);
        assert_eq!(
            m.lock,
            lock(&[
                ("s", "a", a2),
                ("s", "b", b2),
                ("t", "c", tool("c", "C", None))
            ])
        );
    }

    #[test]
    fn a_removal_against_no_change_removes_and_drops_the_empty_server() {
        let a = tool("a", "A", None);
        let base = lock(&[("s", "a", a.clone()), ("t", "x", tool("x", "X", None))]);
        let ours = lock(&[("t", "x", tool("x", "X", None))]);
        let m = merge(&base, &ours, &base);
        assert!(m.conflicts.is_empty());
        assert_eq!(m.lock, ours);
        assert_eq!(merge(&base, &base, &ours).lock, ours);
    }

    #[test]
    fn the_same_change_on_both_sides_is_taken_once() {
        let base = lock(&[("s", "a", tool("a", "A", None))]);
        let both = lock(&[("s", "a", tool("a", "A2", Some("ok")))]);
        let m = merge(&base, &both, &both);
        assert!(m.conflicts.is_empty());
        assert_eq!(m.lock, both);
    }

    #[test]
    fn different_changes_to_one_entry_conflict_and_keep_ours() {
        let base = lock(&[("s", "a", tool("a", "A", None))]);
        let ours = lock(&[("s", "a", tool("a", "A2", Some("mine")))]);
        let theirs = lock(&[("s", "a", tool("a", "A3", Some("theirs")))]);
        let m = merge(&base, &ours, &theirs);
        assert_eq!(m.lock, ours);
        assert_eq!(m.conflicts.len(), 1);
        let c = &m.conflicts[0];
        assert_eq!(c.server, "s");
        let What::Tool(name, values) = &c.what else {
            panic!("{c:?}")
        };
        assert_eq!(name, "a");
        assert_eq!(values.theirs.as_ref(), theirs.servers["s"].tools.get("a"));
        assert_eq!(values.base.as_ref(), base.servers["s"].tools.get("a"));

        // A removal against a change.
        let removed = Lock::default();
        let m = merge(&base, &removed, &theirs);
        assert_eq!(m.lock, removed);
        assert!(matches!(&m.conflicts[0].what, What::Tool(_, v) if v.ours.is_none()));
        let m = merge(&base, &theirs, &removed);
        assert_eq!(m.lock, theirs);
        assert_eq!(m.conflicts.len(), 1);

        // Two different additions of the same new entry.
        let m = merge(&Lock::default(), &ours, &theirs);
        assert_eq!((m.lock, m.conflicts.len()), (ours, 1));
    }

    #[test]
    fn the_same_approval_of_different_approvers_conflicts() {
        let base = lock(&[("s", "a", tool("a", "A", None))]);
        let ours = lock(&[("s", "a", tool("a", "A2", Some("mine")))]);
        let theirs = lock(&[("s", "a", tool("a", "A2", Some("theirs")))]);
        assert_eq!(merge(&base, &ours, &theirs).conflicts.len(), 1);
    }

    #[test]
    fn the_same_recording_at_two_times_keeps_the_earlier() {
        let early = tool("a", "A", None);
        let late = Entry {
            first_seen: "2026-03-01T00:00:00Z".into(),
            ..early.clone()
        };
        let ours = lock(&[("s", "a", late)]);
        let theirs = lock(&[("s", "a", early)]);
        let m = merge(&Lock::default(), &ours, &theirs);
        assert!(m.conflicts.is_empty());
        assert_eq!(m.lock, theirs);
        assert_eq!(merge(&Lock::default(), &theirs, &ours).lock, theirs);
    }

    #[test]
    fn launches_merge_like_entries() {
        let base = lock(&[("s", "a", tool("a", "A", None))]);
        let with = |l: &str| {
            let mut lock = base.clone();
            lock.servers.get_mut("s").unwrap().launch = Some(launch(l));
            lock
        };
        let (one, two) = (with(r#"{"url":"u1"}"#), with(r#"{"url":"u2"}"#));
        // One side records a launch, the other pins a tool: both are kept.
        let mut pinned = base.clone();
        pinned
            .servers
            .get_mut("s")
            .unwrap()
            .tools
            .insert("a".into(), tool("a", "A", Some("ok")));
        let m = merge(&base, &one, &pinned);
        assert!(m.conflicts.is_empty());
        assert_eq!(m.lock.servers["s"].launch, Some(launch(r#"{"url":"u1"}"#)));
        assert_eq!(m.lock.servers["s"].tools["a"].state, State::Pinned);
        // Two launches.
        let m = merge(&base, &one, &two);
        assert_eq!(m.lock, one);
        assert_eq!(m.conflicts.len(), 1);
        assert!(matches!(m.conflicts[0].what, What::Launch(_)));
    }

    #[test]
    fn an_empty_server_both_sides_keep_stays() {
        let mut x = Lock::default();
        x.servers.insert("empty".into(), LockServer::default());
        assert_eq!(merge(&Lock::default(), &x, &x).lock, x);
        assert_eq!(merge(&Lock::default(), &Lock::default(), &x).lock, x);
        assert_eq!(merge(&x, &Lock::default(), &x).lock, Lock::default());
    }
}
