//! The lock's data: servers, entries and their states, approvals, and the
//! error a lock that cannot be read is. Its text is one block per entry,
//! keys in a fixed order, servers and tools sorted, so that approving one
//! tool changes only that tool's lines and two branches that pin different
//! tools merge cleanly: written by [`super::write`], read strictly by
//! [`super::read`] (through [`super::verify`] for entries as written here).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::descriptor::{Descriptor, Lazy};
use crate::json::{self, Value};

/// The newest format version this build reads and writes. A lock is
/// written at the oldest version that holds it ([`Lock::version`]): 1
/// unless it has a denied entry or a launch's own approval, which a
/// reader of version 1 would not know; 3 when a launch records the
/// client configs it came from (`launch_configs`).
pub const FORMAT_VERSION: u64 = 3;

/// Largest lock accepted, in bytes: every reader refuses a larger one,
/// from a file or from git.
pub const MAX_LOCK_SIZE: u64 = 1 << 30;

/// Whether a person vouched for an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Seen, nobody vouched for it.
    Provisional,
    /// Approved by a person.
    Pinned,
    /// Refused by a person: whatever it advertises, it is not to be used.
    Denied,
}

impl State {
    /// The name written in the lock.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Provisional => "provisional",
            State::Pinned => "pinned",
            State::Denied => "denied",
        }
    }

    /// The state named `s` in the lock.
    pub fn parse(s: &str) -> Option<State> {
        match s {
            "provisional" => Some(State::Provisional),
            "pinned" => Some(State::Pinned),
            "denied" => Some(State::Denied),
            _ => None,
        }
    }

    /// True when a person decided (pinned or denied): exactly such an
    /// entry carries an [`Approval`], the record of that decision.
    pub fn is_decided(self) -> bool {
        self != State::Provisional
    }
}

/// Who approved (or denied) an entry or a launch, when, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// `Name <email>`.
    pub approver: String,
    /// RFC 3339 UTC time of the approval.
    pub at: String,
    /// The reviewer's note.
    pub note: String,
}

/// The approval by `approver` at `at` with `note`: the same allocation as
/// `last` when equal to it (compared before anything is copied), otherwise
/// a new one, which becomes `last`. Entries pinned together share one
/// approval (a pin of a whole inventory writes 100,000 equal ones).
pub(crate) fn share_approval(
    approver: Cow<'_, str>,
    at: Cow<'_, str>,
    note: Cow<'_, str>,
    last: &mut Option<Arc<Approval>>,
) -> Arc<Approval> {
    match last {
        Some(l) if l.approver == approver && l.at == at && l.note == note => l.clone(),
        _ => last
            .insert(Arc::new(Approval {
                approver: approver.into_owned(),
                at: at.into_owned(),
                note: note.into_owned(),
            }))
            .clone(),
    }
}

/// One server-level or tool entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Provisional or pinned.
    pub state: State,
    /// The canonical descriptor that was seen, with its digests.
    pub descriptor: Descriptor,
    /// RFC 3339 UTC time the entry was first recorded.
    pub first_seen: String,
    /// Present exactly when the entry is pinned or denied: who decided.
    pub approval: Option<std::sync::Arc<Approval>>,
    /// Where the descriptor can be rebuilt from, when it was dropped.
    pub lazy: Lazy,
}

/// A server's entries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockServer {
    /// The launch that was reviewed ([`crate::config::launch_spec`]): what
    /// runs or where it connects. `capture` runs a server without asking
    /// only when its launch is this one. Absent in locks written before
    /// launches were recorded.
    pub launch: Option<Value>,
    /// Who approved the launch, when, and why; absent for launches
    /// recorded before approvals of launches were (format version 1).
    pub launch_approval: Option<Arc<Approval>>,
    /// The client configs the recorded launch was configured in when it
    /// was approved (`.mcp.json`, `.cursor/mcp.json`, a `--config` file as
    /// given), sorted; empty when that is not known. What they said is the
    /// launch itself: this says where a reviewer found it.
    pub launch_configs: Vec<String>,
    /// The server-level entry (instructions, serverInfo, prompts...).
    pub server: Option<Entry>,
    /// Tool entries by name.
    pub tools: BTreeMap<String, Entry>,
}

/// The whole lock.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lock {
    /// Servers by name.
    pub servers: BTreeMap<String, LockServer>,
}

/// Why a lock could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockError {
    /// JSON pointer of the fault, when there is one.
    pub pointer: Option<String>,
    /// What was wrong.
    pub message: String,
    /// True when the lock is well formed but of a newer format version.
    pub newer: bool,
}

impl LockError {
    /// An error at `pointer`.
    pub(super) fn at(pointer: &str, message: impl Into<String>) -> LockError {
        LockError {
            pointer: Some(pointer.to_string()),
            message: message.into(),
            newer: false,
        }
    }
}

impl Lock {
    /// The entry for `server` (`tool` = None for the server level).
    pub fn entry(&self, server: &str, tool: Option<&str>) -> Option<&Entry> {
        let s = self.servers.get(server)?;
        match tool {
            None => s.server.as_ref(),
            Some(t) => s.tools.get(t),
        }
    }

    /// Number of entries, server-level ones included.
    pub fn len(&self) -> usize {
        self.servers
            .values()
            .map(|s| s.tools.len() + usize::from(s.server.is_some()))
            .sum()
    }

    /// True when the lock has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The format version this lock is written at: the oldest that holds it.
    pub fn version(&self) -> u64 {
        if self.servers.values().any(|s| !s.launch_configs.is_empty()) {
            return 3;
        }
        let newer = self.servers.values().any(|s| {
            s.launch_approval.is_some()
                || s.server
                    .iter()
                    .chain(s.tools.values())
                    .any(|e| e.state == State::Denied)
        });
        if newer {
            2
        } else {
            1
        }
    }

    /// Drops servers left with no entry.
    pub fn tidy(&mut self) {
        self.servers
            .retain(|_, s| s.server.is_some() || !s.tools.is_empty());
    }
}

impl From<json::ParseError> for LockError {
    fn from(e: json::ParseError) -> LockError {
        LockError {
            pointer: Some(e.pointer.clone()),
            message: format!(
                "not valid JSON: {} at line {} column {}",
                e.message, e.line, e.column
            ),
            newer: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::write::WRITE_CHUNK;
    use super::*;
    use crate::json::Object;

    fn sample() -> Lock {
        let (v, _) = json::parse(
            br#"{"name":"read","description":"Read\u200b it","inputSchema":{"type":"object"}}"#,
        )
        .unwrap();
        let (d, _) = Descriptor::new(v.as_object().unwrap().clone());
        let mut lock = Lock::default();
        let mut s = LockServer::default();
        s.tools.insert(
            "read".into(),
            Entry {
                state: State::Pinned,
                descriptor: d,
                first_seen: "2026-01-01T00:00:00Z".into(),
                approval: Some(
                    Approval {
                        approver: "A <a@example.com>".into(),
                        at: "2026-01-02T00:00:00Z".into(),
                        note: "ok".into(),
                    }
                    .into(),
                ),
                lazy: Default::default(),
            },
        );
        lock.servers.insert("fs".into(), s);
        lock
    }

    #[test]
    fn written_text_is_the_text_across_chunks() {
        // Servers enough for the text to pass WRITE_CHUNK a few times.
        let mut lock = Lock::default();
        let server = sample().servers.remove("fs").unwrap();
        for i in 0..3 * WRITE_CHUNK / 600 {
            lock.servers.insert(format!("fs-{i:05}"), server.clone());
        }
        let text = lock.to_text();
        assert!(text.len() > 2 * WRITE_CHUNK, "{}", text.len());
        let mut written = Vec::new();
        lock.write_text(&mut written).unwrap();
        assert!(written == text, "write_text differs from to_text");
        // An empty lock too (nothing passes a server boundary).
        let mut empty = Vec::new();
        Lock::default().write_text(&mut empty).unwrap();
        assert_eq!(empty, Lock::default().to_text());
    }

    #[test]
    fn text_round_trips_and_hides_nothing() {
        let lock = sample();
        let text = lock.to_text();
        assert!(!String::from_utf8_lossy(&text).contains('\u{200B}'));
        assert!(text.ends_with(b"}\n"));
        assert_eq!(Lock::parse(&text).unwrap(), lock);
        assert_eq!(
            Lock::parse(&Lock::default().to_text()).unwrap(),
            Lock::default()
        );
    }

    #[test]
    fn refuses_newer_versions_and_tampered_entries() {
        let e = Lock::parse(br#"{"version": 99, "servers": {}}"#).unwrap_err();
        assert!(e.message.contains("newer"), "{e:?}");
        let text = String::from_utf8(sample().to_text()).unwrap();
        let tampered = text.replace("Read\\u200b it", "Read it");
        let e = Lock::parse(tampered.as_bytes()).unwrap_err();
        assert!(e.message.contains("does not match"), "{e:?}");
    }

    fn with_launch(launch: &str) -> Lock {
        let mut lock = sample();
        let (v, _) = json::parse(launch.as_bytes()).unwrap();
        lock.servers.get_mut("fs").unwrap().launch = Some(v);
        lock
    }

    #[test]
    fn launch_is_one_canonical_line_before_the_entries() {
        let lock = with_launch(
            r#"{"env": {"Z": "1", "A": "\u200b"}, "command": ["node", "x.js"], "future": [1.0E1]}"#,
        );
        let text = String::from_utf8(lock.to_text()).unwrap();
        let want = "    \"fs\": {\n      \"launch\": {\"command\":[\"node\",\"x.js\"],\"env\":{\"A\":\"\\u200b\",\"Z\":\"1\"},\"future\":[10]},\n      \"tools\": {\n";
        assert!(text.contains(want), "{text}");
        // Read back by both readers, and written back byte for byte.
        let parsed = Lock::parse(text.as_bytes()).unwrap();
        assert_eq!(parsed, lock);
        assert_eq!(parsed.to_text(), text.as_bytes());
        let fast = Lock::parse_digests_only(Arc::new(text.clone().into_bytes())).unwrap();
        assert_eq!(fast.servers["fs"].launch, lock.servers["fs"].launch);
        // Before `server` when both are there.
        let mut lock = lock;
        lock.servers.get_mut("fs").unwrap().server = Some(Entry {
            state: State::Provisional,
            descriptor: Descriptor::new(Object::new()).0,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: None,
            lazy: Default::default(),
        });
        let text = lock.to_text();
        let s = String::from_utf8(text.clone()).unwrap();
        let (launch, server) = (s.find("\"launch\"").unwrap(), s.find("\"server\"").unwrap());
        assert!(
            launch < server && s.contains("},\n      \"server\": {"),
            "{s}"
        );
        assert_eq!(Lock::parse(&text).unwrap().to_text(), text);
    }

    #[test]
    fn a_lock_without_launch_still_reads() {
        let text = sample().to_text();
        assert!(!String::from_utf8_lossy(&text).contains("launch"));
        assert_eq!(Lock::parse(&text).unwrap().servers["fs"].launch, None);
    }

    #[test]
    fn launch_must_be_an_object_in_both_readers() {
        let text = String::from_utf8(with_launch(r#"{"url":"u"}"#).to_text()).unwrap();
        for bad in [r#""npx""#, "[\"npx\"]", "null", "1"] {
            let edited = text.replace(r#"{"url":"u"}"#, bad);
            let strict = Lock::parse(edited.as_bytes()).unwrap_err();
            let fast = Lock::parse_digests_only(Arc::new(edited.into_bytes())).unwrap_err();
            for e in [strict, fast] {
                assert_eq!(
                    e.pointer.as_deref(),
                    Some("/servers/fs/launch"),
                    "{bad}: {e:?}"
                );
                assert!(e.message.starts_with("expected an object"), "{e:?}");
            }
        }
        let twice = text.replace(
            r#""launch": {"url":"u"},"#,
            r#""launch": {"url":"u"}, "launch": {"url":"v"},"#,
        );
        let e = Lock::parse(twice.as_bytes()).unwrap_err();
        assert!(e.message.starts_with("duplicate key"), "{e:?}");
    }

    #[test]
    fn launch_configs_are_one_line_after_the_launch_and_make_version_3() {
        let mut lock = with_launch(r#"{"url":"u"}"#);
        assert_eq!(lock.version(), 1);
        lock.servers.get_mut("fs").unwrap().launch_configs =
            vec![".cursor/mcp.json".into(), ".mcp.json".into()];
        assert_eq!(lock.version(), 3);
        let text = String::from_utf8(lock.to_text()).unwrap();
        assert!(text.starts_with("{\n  \"version\": 3,"), "{text}");
        let want = "      \"launch\": {\"url\":\"u\"},\n      \"launch_configs\": [\".cursor/mcp.json\",\".mcp.json\"],\n      \"tools\": {\n";
        assert!(text.contains(want), "{text}");
        // Read back by both readers, and written back byte for byte.
        let parsed = Lock::parse(text.as_bytes()).unwrap();
        assert_eq!(parsed, lock);
        assert_eq!(parsed.to_text(), text.as_bytes());
        let fast = Lock::parse_digests_only(Arc::new(text.clone().into_bytes())).unwrap();
        assert_eq!(
            fast.servers["fs"].launch_configs,
            lock.servers["fs"].launch_configs
        );
        // What git-kams would not write is refused, where it is.
        let configs = r#"[".cursor/mcp.json",".mcp.json"]"#;
        for (bad, why) in [
            (r#"".mcp.json""#, "expected an array"),
            ("[]", "an empty list"),
            ("[1]", "expected a file name"),
            (
                r#"[".mcp.json",".cursor/mcp.json"]"#,
                "distinct and in order",
            ),
            (r#"[".mcp.json",".mcp.json"]"#, "distinct and in order"),
            (r#"["a\u001b[31m"]"#, "without control characters"),
        ] {
            let edited = text.replace(configs, bad);
            for e in [
                Lock::parse(edited.as_bytes()).unwrap_err(),
                Lock::parse_digests_only(Arc::new(edited.into_bytes())).unwrap_err(),
            ] {
                assert!(
                    e.pointer
                        .as_deref()
                        .is_some_and(|p| p.starts_with("/servers/fs/launch_configs")),
                    "{bad}: {e:?}"
                );
                assert!(e.message.contains(why), "{bad}: {e:?}");
            }
        }
        let orphan = text.replace(r#""launch": {"url":"u"},"#, "");
        let e = Lock::parse(orphan.as_bytes()).unwrap_err();
        assert!(e.message.contains("needs the `launch`"), "{e:?}");
    }
}
