//! What a change to the lock did, entry by entry: the vocabulary of
//! `git kams log` and the unit the hooks judge (a commit that pins or
//! re-pins an entry is an approval and needs a sign-off).

use super::format::{Entry, Lock, State};

/// What happened to one entry between two versions of the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeKind {
    /// A new entry, provisional.
    Recorded,
    /// A new entry, pinned; or a provisional entry now pinned as it was.
    Pinned,
    /// A pinned or provisional entry pinned with a new descriptor.
    Repinned,
    /// A provisional entry whose descriptor changed, still provisional.
    Rerecorded,
    /// The same descriptor, but the approval (approver, time, note) changed.
    Reapproved,
    /// A pinned entry that became provisional again.
    Unpinned,
    /// The entry is gone.
    Removed,
    /// A server's launch recorded where the lock had none (by `pin` of
    /// the whole server).
    LaunchRecorded,
    /// A server's recorded launch changed or was dropped: capture will now
    /// run a different command without asking, so this is an approval.
    LaunchChanged,
    /// The same launch, approved anew (another approver or note).
    LaunchReapproved,
    /// An entry denied: new, or pinned or provisional before.
    Denied,
    /// A denied entry denied anew (another descriptor, denier or note).
    Redenied,
    /// A denied entry back to provisional: the denial withdrawn.
    Undenied,
}

impl ChangeKind {
    /// Every kind, in the order of the enum.
    pub const ALL: [ChangeKind; 13] = [
        ChangeKind::Recorded,
        ChangeKind::Pinned,
        ChangeKind::Repinned,
        ChangeKind::Rerecorded,
        ChangeKind::Reapproved,
        ChangeKind::Unpinned,
        ChangeKind::Removed,
        ChangeKind::LaunchRecorded,
        ChangeKind::LaunchChanged,
        ChangeKind::LaunchReapproved,
        ChangeKind::Denied,
        ChangeKind::Redenied,
        ChangeKind::Undenied,
    ];

    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Recorded => "recorded",
            ChangeKind::Pinned => "pinned",
            ChangeKind::Repinned => "re-pinned",
            ChangeKind::Rerecorded => "re-recorded",
            ChangeKind::Reapproved => "re-approved",
            ChangeKind::Unpinned => "unpinned",
            ChangeKind::Removed => "removed",
            ChangeKind::LaunchRecorded => "launch recorded",
            ChangeKind::LaunchChanged => "launch changed",
            ChangeKind::LaunchReapproved => "launch re-approved",
            ChangeKind::Denied => "denied",
            ChangeKind::Redenied => "re-denied",
            ChangeKind::Undenied => "undenied",
        }
    }

    /// True when the change is an approval (or withdraws one): it needs a
    /// sign-off by an approver. Every launch change is one, the first
    /// included: `capture` runs a recorded launch, so recording one is
    /// approving what will run.
    pub fn needs_sign_off(self) -> bool {
        !matches!(self, ChangeKind::Recorded | ChangeKind::Rerecorded)
    }

    /// True for a change of a server's launch rather than of an entry.
    pub fn is_launch(self) -> bool {
        matches!(
            self,
            ChangeKind::LaunchRecorded | ChangeKind::LaunchChanged | ChangeKind::LaunchReapproved
        )
    }
}

/// One entry's change.
#[derive(Clone, Debug)]
pub struct EntryChange {
    /// Server name.
    pub server: String,
    /// Tool name; `None` for the server entry.
    pub tool: Option<String>,
    /// What happened.
    pub kind: ChangeKind,
    /// Digested fields whose digest changed (sorted), for re-pins;
    /// `launch` for a launch change.
    pub fields: Vec<&'static str>,
    /// The entry before, if any (for a launch change: the server entry).
    pub old: Option<Entry>,
    /// The entry after, if any.
    pub new: Option<Entry>,
}

impl EntryChange {
    /// `server` or `server/tool`.
    pub fn subject(&self) -> String {
        match &self.tool {
            Some(t) => format!("{}/{t}", self.server),
            None => self.server.clone(),
        }
    }
}

/// Every entry that differs between `old` and `new`, sorted by server and
/// tool (server entry first). Entries equal in value are not listed,
/// however their text was laid out.
pub fn diff(old: &Lock, new: &Lock) -> Vec<EntryChange> {
    let mut keys: Vec<(&str, Option<&str>)> = Vec::new();
    for lock in [old, new] {
        for (s, ls) in &lock.servers {
            if ls.server.is_some() {
                keys.push((s, None));
            }
            keys.extend(ls.tools.keys().map(|t| (s.as_str(), Some(t.as_str()))));
        }
    }
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::new();
    for (server, tool) in keys {
        let (a, b) = (old.entry(server, tool), new.entry(server, tool));
        let kind = match (a, b) {
            (None, None) => continue,
            (Some(_), None) => ChangeKind::Removed,
            (None, Some(n)) => match n.state {
                State::Pinned => ChangeKind::Pinned,
                State::Provisional => ChangeKind::Recorded,
                State::Denied => ChangeKind::Denied,
            },
            (Some(o), Some(n)) => {
                let same_descriptor = o.descriptor.digest == n.descriptor.digest;
                match (o.state, n.state) {
                    _ if same_descriptor && o.state == n.state && o.approval == n.approval => {
                        continue
                    }
                    (State::Denied, State::Denied) => ChangeKind::Redenied,
                    (_, State::Denied) => ChangeKind::Denied,
                    (State::Denied, State::Provisional) => ChangeKind::Undenied,
                    (State::Pinned, State::Provisional) => ChangeKind::Unpinned,
                    (State::Provisional | State::Denied, State::Pinned) if same_descriptor => {
                        ChangeKind::Pinned
                    }
                    (_, State::Pinned) if !same_descriptor => ChangeKind::Repinned,
                    (State::Pinned, State::Pinned) => ChangeKind::Reapproved,
                    (State::Provisional, State::Provisional) if !same_descriptor => {
                        ChangeKind::Rerecorded
                    }
                    // Same descriptor, both provisional: only first_seen moved.
                    _ => continue,
                }
            }
        };
        let fields = match (a, b) {
            (Some(o), Some(n)) => {
                let mut f: Vec<&'static str> = o
                    .descriptor
                    .field_digests
                    .iter()
                    .filter(|(k, d)| n.descriptor.field_digests.get(k) != Some(*d))
                    .map(|(k, _)| k)
                    .chain(
                        n.descriptor
                            .field_digests
                            .iter()
                            .filter(|(k, _)| o.descriptor.field_digests.get(k).is_none())
                            .map(|(k, _)| k),
                    )
                    .collect();
                f.sort_unstable();
                f.dedup();
                f
            }
            _ => Vec::new(),
        };
        out.push(EntryChange {
            server: server.to_string(),
            tool: tool.map(str::to_string),
            kind,
            fields,
            old: a.cloned(),
            new: b.cloned(),
        });
    }
    let servers: std::collections::BTreeSet<&String> =
        old.servers.keys().chain(new.servers.keys()).collect();
    for server in servers {
        let launch = |l: &Lock| l.servers.get(server).and_then(|s| s.launch.clone());
        let approval = |l: &Lock| {
            l.servers
                .get(server)
                .and_then(|s| s.launch_approval.clone())
        };
        let kind = match (launch(old), launch(new)) {
            (a, b) if a == b && approval(old) == approval(new) => continue,
            (a, b) if a == b => ChangeKind::LaunchReapproved,
            (None, Some(_)) => ChangeKind::LaunchRecorded,
            _ => ChangeKind::LaunchChanged,
        };
        out.push(EntryChange {
            server: server.clone(),
            tool: None,
            kind,
            fields: vec!["launch"],
            old: old.entry(server, None).cloned(),
            new: new.entry(server, None).cloned(),
        });
    }
    // Server first, then its launch, then its tools.
    out.sort_by(|a, b| {
        (&a.server, a.tool.is_some(), &a.tool).cmp(&(&b.server, b.tool.is_some(), &b.tool))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Descriptor;
    use crate::json::parse;
    use crate::lock::format::{Approval, LockServer};

    fn entry(desc: &str, pinned: bool, note: &str) -> Entry {
        let (v, _) = parse(desc.as_bytes()).unwrap();
        Entry {
            state: if pinned {
                State::Pinned
            } else {
                State::Provisional
            },
            descriptor: Descriptor::new(v.as_object().unwrap().clone()).0,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: pinned.then(|| {
                Approval {
                    approver: "A <a@x>".into(),
                    at: "2026-01-02T00:00:00Z".into(),
                    note: note.into(),
                }
                .into()
            }),
            lazy: Default::default(),
        }
    }

    fn lock(entries: &[(&str, Entry)]) -> Lock {
        let mut l = Lock::default();
        let mut s = LockServer::default();
        for (t, e) in entries {
            s.tools.insert(t.to_string(), e.clone());
        }
        l.servers.insert("s".into(), s);
        l
    }

    #[test]
    fn names_each_kind_of_change() {
        let a = r#"{"name":"a","description":"x"}"#;
        let a2 = r#"{"name":"a","description":"y"}"#;
        let b = r#"{"name":"b"}"#;
        let c = r#"{"name":"c"}"#;
        let old = lock(&[
            ("a", entry(a, true, "n")),
            ("b", entry(b, false, "")),
            ("c", entry(c, true, "n")),
        ]);
        let new = lock(&[("a", entry(a2, true, "n")), ("b", entry(b, true, "ok"))]);
        let changes: Vec<(String, ChangeKind, Vec<&str>)> = diff(&old, &new)
            .into_iter()
            .map(|c| (c.subject(), c.kind, c.fields))
            .collect();
        assert_eq!(
            changes,
            vec![
                ("s/a".into(), ChangeKind::Repinned, vec!["description"]),
                ("s/b".into(), ChangeKind::Pinned, vec![]),
                ("s/c".into(), ChangeKind::Removed, vec![]),
            ]
        );
        assert!(diff(&new, &new).is_empty());
    }

    #[test]
    fn a_launch_first_or_changed_is_an_approval() {
        let launch = |argv: &str| {
            let mut l = lock(&[]);
            let (v, _) = parse(format!(r#"{{"command":["{argv}"]}}"#).as_bytes()).unwrap();
            l.servers.get_mut("s").unwrap().launch = Some(v);
            l
        };
        let kinds = |a: &Lock, b: &Lock| -> Vec<(ChangeKind, Vec<&str>)> {
            diff(a, b).into_iter().map(|c| (c.kind, c.fields)).collect()
        };
        assert_eq!(
            kinds(&lock(&[]), &launch("npx")),
            [(ChangeKind::LaunchRecorded, vec!["launch"])]
        );
        assert_eq!(
            kinds(&launch("npx"), &launch("sh")),
            [(ChangeKind::LaunchChanged, vec!["launch"])]
        );
        assert_eq!(
            kinds(&launch("npx"), &lock(&[])),
            [(ChangeKind::LaunchChanged, vec!["launch"])]
        );
        assert!(ChangeKind::LaunchChanged.needs_sign_off());
        assert!(ChangeKind::LaunchRecorded.needs_sign_off());
        assert!(kinds(&launch("npx"), &launch("npx")).is_empty());
    }
}
