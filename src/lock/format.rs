//! The lock's data and its text: one block per entry, keys in a fixed order,
//! servers and tools sorted, so that approving one tool changes only that
//! tool's lines and two branches that pin different tools merge cleanly.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::canon::{write_string, write_value, Digest, Escape};
use std::sync::Arc;

use crate::descriptor::{Descriptor, FieldDigests, Lazy};
use crate::json::{self, Object, Value};

/// The newest format version this build reads and writes. A lock is
/// written at the oldest version that holds it ([`Lock::version`]): 1
/// unless it has a denied entry or a launch's own approval, which a
/// reader of version 1 would not know.
pub const FORMAT_VERSION: u64 = 2;

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
    fn at(pointer: &str, message: impl Into<String>) -> LockError {
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

    /// The lock's text: the one canonical layout (see `docs/lockfile.md`).
    pub fn to_text(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1024 + self.len() * 1024);
        let kept = self.lay_out(&mut out, &mut |_| Ok(()));
        kept.expect("text kept in memory");
        out
    }

    /// Writes [`Lock::to_text`]'s text to `w` a server at a time, holding
    /// about 1 MiB of it at once: a large lock's text, held whole (twice,
    /// while its buffer grew) next to the inventory it was read from, was
    /// `pin`'s largest allocation (docs/performance.md, "Twelfth pass",
    /// a30ca8c).
    pub fn write_text(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(WRITE_CHUNK + 64 * 1024);
        self.lay_out(&mut out, &mut |out: &mut Vec<u8>| {
            if out.len() >= WRITE_CHUNK {
                w.write_all(out)?;
                out.clear();
            }
            Ok(())
        })?;
        w.write_all(&out)
    }

    /// The text, into `out`; `pass` is given `out` after each server.
    fn lay_out(
        &self,
        out: &mut Vec<u8>,
        pass: &mut dyn FnMut(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        out.extend_from_slice(
            format!("{{\n  \"version\": {},\n  \"servers\": {{", self.version()).as_bytes(),
        );
        for (si, (name, server)) in self.servers.iter().enumerate() {
            out.extend_from_slice(if si == 0 { b"\n    " } else { b",\n    " });
            write_string(name, Escape::Visible, out);
            out.extend_from_slice(b": {");
            let mut first = true;
            if let Some(launch) = &server.launch {
                // One line, as a descriptor field: a changed launch is one
                // removed and one added line in `git diff`.
                out.extend_from_slice(b"\n      \"launch\": ");
                write_value(launch, Escape::Visible, out);
                first = false;
            }
            if let Some(a) = &server.launch_approval {
                // One line too: re-approving a launch is one changed line.
                out.extend_from_slice(if first {
                    b"\n      \"launch_approval\": "
                } else {
                    b",\n      \"launch_approval\": "
                });
                write_approval_line(a, out);
                first = false;
            }
            if let Some(entry) = &server.server {
                out.extend_from_slice(if first {
                    b"\n      \"server\": "
                } else {
                    b",\n      \"server\": "
                });
                write_entry(entry, 6, out);
                first = false;
            }
            out.extend_from_slice(if first {
                b"\n      \"tools\": {"
            } else {
                b",\n      \"tools\": {"
            });
            for (ti, (tool, entry)) in server.tools.iter().enumerate() {
                out.extend_from_slice(if ti == 0 {
                    b"\n        "
                } else {
                    b",\n        "
                });
                write_string(tool, Escape::Visible, out);
                out.extend_from_slice(b": ");
                write_entry(entry, 8, out);
            }
            if server.tools.is_empty() {
                out.extend_from_slice(b"}");
            } else {
                out.extend_from_slice(b"\n      }");
            }
            out.extend_from_slice(b"\n    }");
            pass(out)?;
        }
        if self.servers.is_empty() {
            out.extend_from_slice(b"}\n}\n");
        } else {
            out.extend_from_slice(b"\n  }\n}\n");
        }
        Ok(())
    }

    /// Reads a lock's text strictly: unknown keys, missing keys, digests
    /// that do not match their descriptor, and newer versions are errors.
    pub fn parse(bytes: &[u8]) -> Result<Lock, LockError> {
        parse_lock(bytes, None, &|_| ())
    }

    /// Like [`Lock::parse`], every entry verified, but descriptors are
    /// dropped after verification and rebuilt on demand by
    /// [`Lock::materialize`]: scanning a large lock does not hold it as a tree.
    pub fn parse_digests_only<B>(bytes: Arc<B>) -> Result<Lock, LockError>
    where
        B: crate::bytes::Bytes + 'static,
    {
        Lock::parse_digests_releasing(bytes, &|_| ())
    }

    /// Like [`Lock::parse_digests_only`], calling `done(n)` from time to
    /// time with a length `n` of the text that is read and verified
    /// (whose memory may be given back, see [`crate::input::Input::release`]).
    pub fn parse_digests_releasing<B>(
        bytes: Arc<B>,
        done: &dyn Fn(usize),
    ) -> Result<Lock, LockError>
    where
        B: crate::bytes::Bytes + 'static,
    {
        let shared: crate::bytes::Shared = bytes.clone();
        parse_lock((*bytes).as_ref(), Some(shared), done)
    }

    /// Rebuilds the descriptors of the given entries (`None` tool: the
    /// server entry) of a lock read with [`Lock::parse_digests_only`].
    pub fn materialize(&mut self, wanted: &[(String, Option<String>)]) -> Result<(), LockError> {
        // Each text read apart from the mapping: no page of it comes in.
        for (server, tool) in wanted {
            let Some(s) = self.servers.get_mut(server) else {
                continue;
            };
            let entry = match tool {
                None => s.server.as_mut(),
                Some(t) => s.tools.get_mut(t),
            };
            let Some(entry) = entry else { continue };
            let lazy = std::mem::take(&mut entry.lazy);
            let Some(text) = lazy.read() else {
                continue;
            };
            let at = match tool {
                None => format!("{}/server", ptr("/servers", server)),
                Some(t) => ptr(&format!("{}/tools", ptr("/servers", server)), t),
            };
            let (v, _) = json::parse_nested(&text, json::MAX_DEPTH).map_err(LockError::from)?;
            *entry = read_entry(&v, &at, tool.as_deref())?;
        }
        Ok(())
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

/// Text [`Lock::write_text`] gathers before writing it.
const WRITE_CHUNK: usize = 1 << 20;

/// Text read between two calls of `parse_lock`'s `done`.
const DONE_EVERY: usize = 8 << 20;

fn parse_lock(
    bytes: &[u8],
    keep: Option<crate::bytes::Shared>,
    done: &dyn Fn(usize),
) -> Result<Lock, LockError> {
    // A descriptor sits 4 levels below the lock's top (servers, name,
    // tools, tool, descriptor); allow for them so that every lock this
    // build writes from an accepted inventory reads back.
    let mut r = json::Reader::new_releasing(bytes, json::MAX_DEPTH + 8, done)?;
    if r.at_end() {
        return Err(r.error("empty input: expected a JSON value").into());
    }
    if r.peek() != Some(b'{') {
        let v = r.value()?;
        return Err(LockError::at(
            "",
            format!("expected an object, found {}", v.kind()),
        ));
    }
    let mut version = false;
    let mut servers = false;
    let mut lock = Lock::default();
    let mut told = 0;
    let last: std::cell::RefCell<Option<Arc<Approval>>> = Default::default();
    let entry = |r: &mut json::Reader<'_>, tool: Option<&str>| -> Result<Entry, LockError> {
        let Some(shared) = &keep else {
            let at = r.pointer();
            return read_entry(&r.value()?, &at, tool);
        };
        let start = r.offset();
        let mut last = last.borrow_mut();
        let fast = fast_entry(r, bytes, tool, &mut last)?;
        let end = r.offset();
        let mut e = match fast {
            Some(e) => e,
            None => {
                // Not as this build writes it, or wrong: read it the
                // strict way, which says what is wrong and where.
                let (v, _) = json::parse_nested(&bytes[start..end], json::MAX_DEPTH + 8)?;
                let mut e = read_entry(&v, &r.pointer(), tool)?;
                e.approval = e.approval.take().map(|a| {
                    let a = Arc::unwrap_or_clone(a);
                    share_approval(a.approver.into(), a.at.into(), a.note.into(), &mut last)
                });
                e
            }
        };
        e.descriptor.fields = Object::new();
        e.lazy = Lazy(Some((shared.clone(), start..end)));
        Ok(e)
    };
    r.object(|r, key| -> Result<(), LockError> {
        match key {
            "version" => {
                match r.value()? {
                    Value::Number(n) if n.as_f64().fract() == 0.0 && n.as_f64() >= 1.0 => {
                        let v = n.as_f64() as u64;
                        if v > FORMAT_VERSION {
                            return Err(LockError {
                                newer: true,
                                ..LockError::at(
                                    "/version",
                                    format!("format version {v} is newer than this git-kams reads ({FORMAT_VERSION}); upgrade git-kams"),
                                )
                            });
                        }
                    }
                    _ => return Err(LockError::at("/version", "version must be a positive integer")),
                }
                version = true;
            }
            "servers" => {
                if !version {
                    return Err(LockError::at("", "`version` must come before `servers` (is this a kams.lock?)"));
                }
                servers = true;
                r.object(|r, name| -> Result<(), LockError> {
                    if let Some(why) = crate::text::server_name_problem(name) {
                        return Err(LockError::at(&r.pointer(), &why));
                    }
                    let mut ls = LockServer::default();
                    let mut has_tools = false;
                    r.object(|r, key| -> Result<(), LockError> {
                        match key {
                            "launch" => {
                                let at = r.pointer();
                                match r.value()? {
                                    // Its members are data (what the config
                                    // said), not format: any are kept.
                                    v @ Value::Object(_) => ls.launch = Some(v),
                                    v => return Err(LockError::at(&at, format!("expected an object, found {}", v.kind()))),
                                }
                            }
                            "launch_approval" => {
                                let at = r.pointer();
                                let v = r.value()?;
                                ls.launch_approval = Some(Arc::new(read_approval(&v, &at)?));
                            }
                            "server" => ls.server = Some(entry(r, None)?),
                            "tools" => {
                                has_tools = true;
                                let mut tools = Vec::new();
                                r.object(|r, tool| -> Result<(), LockError> {
                                    tools.push((tool.to_string(), entry(r, Some(tool))?));
                                    Ok(())
                                })?;
                                // Built at once, its nodes full (inserted in
                                // order they were half full); the last of a
                                // name is kept, as an insert keeps it.
                                ls.tools = tools.into_iter().collect();
                            }
                            _ => return Err(LockError::at(&r.pointer(), "unknown key (written by a newer git-kams, or edited by hand?)")),
                        }
                        Ok(())
                    })?;
                    if !has_tools {
                        return Err(LockError::at(&r.pointer(), "missing `tools`"));
                    }
                    if ls.launch_approval.is_some() && ls.launch.is_none() {
                        return Err(LockError::at(&r.pointer(), "a `launch_approval` needs the `launch` it approves"));
                    }
                    lock.servers.insert(name.to_string(), ls);
                    if r.offset() - told >= DONE_EVERY {
                        told = r.offset();
                        done(told);
                    }
                    Ok(())
                })?;
            }
            _ => return Err(LockError::at(&r.pointer(), "unknown key (written by a newer git-kams, or edited by hand?)")),
        }
        Ok(())
    })?;
    if !r.at_end() {
        return Err(r.error("unexpected content after the JSON value").into());
    }
    if let Some((_, d)) = r.take_duplicates().first() {
        return Err(LockError::at(
            d,
            "duplicate key (a lock is written without any: was it edited or merged by hand?)",
        ));
    }
    if !version {
        return Err(LockError::at("", "no `version`: not a kams.lock"));
    }
    if !servers {
        return Err(LockError::at("", "no `servers`"));
    }
    // All of it is read: the last stretch too (entries drifted later are
    // read apart from the mapping, see `Lock::materialize`).
    done(bytes.len());
    Ok(lock)
}

/// Reads an entry as this build writes it, without building any tree:
/// its members are read into their types, and each descriptor field's text
/// is hashed as it stands in the file. A field whose text is ASCII and
/// hashes to its recorded digest is, by SHA-256's collision resistance,
/// exactly the canonical form of its value, so it is verified without
/// parsing. Returns `None` (having consumed the entry) when anything is not
/// as written here, or does not verify; the caller then reads the entry the
/// strict way, which accepts what it accepts and says what is wrong and
/// where.
fn fast_entry(
    r: &mut json::Reader<'_>,
    bytes: &[u8],
    tool: Option<&str>,
    last: &mut Option<Arc<Approval>>,
) -> Result<Option<Entry>, LockError> {
    let mut odd = false;
    let mut state = None;
    let mut digest = None;
    let mut recorded: Option<FieldDigests> = None;
    let mut first_seen = None;
    let mut approval = None;
    let mut raw: Option<Vec<(&'static str, std::ops::Range<usize>)>> = None;
    // Steps over a member that is not an object, which makes the entry odd.
    let object = |r: &mut json::Reader<'_>, odd: &mut bool| -> Result<bool, LockError> {
        if r.peek() == Some(b'{') {
            return Ok(true);
        }
        *odd = true;
        r.skip()?;
        Ok(false)
    };
    r.object(|r, key| -> Result<(), LockError> {
        match key {
            "state" => state = r.string()?.as_deref().and_then(State::parse),
            "digest" => digest = r.string()?.as_deref().and_then(Digest::parse),
            "first_seen" => first_seen = r.string()?.map(std::borrow::Cow::into_owned),
            "fields" if object(r, &mut odd)? => {
                // Compared with the texts' own, then dropped: room for
                // any fields at once.
                let mut digests = FieldDigests::with_capacity(crate::descriptor::TOOL_FIELDS.len());
                r.object(|r, field| -> Result<(), LockError> {
                    let d = r.string()?.as_deref().and_then(Digest::parse);
                    match (crate::descriptor::field_name(field), d) {
                        (Some(name), Some(d)) => digests.insert(name, d),
                        _ => odd = true,
                    }
                    Ok(())
                })?;
                recorded = Some(digests);
            }
            "approval" if object(r, &mut odd)? => {
                let (mut approver, mut at, mut note) = (None, None, None);
                r.object(|r, key| -> Result<(), LockError> {
                    let slot = match key {
                        "approver" => &mut approver,
                        "at" => &mut at,
                        "note" => &mut note,
                        _ => {
                            odd = true;
                            return Ok(r.skip()?);
                        }
                    };
                    *slot = r.string()?;
                    Ok(())
                })?;
                match (approver, at, note) {
                    (Some(approver), Some(at), Some(note)) => {
                        approval = Some(share_approval(approver, at, note, last));
                    }
                    _ => odd = true,
                }
            }
            "descriptor" if object(r, &mut odd)? => {
                let mut spans = Vec::new();
                r.object(|r, field| -> Result<(), LockError> {
                    let start = r.offset();
                    r.skip()?;
                    match crate::descriptor::field_name(field) {
                        Some(name) => spans.push((name, start..r.position())),
                        None => odd = true,
                    }
                    Ok(())
                })?;
                raw = Some(spans);
            }
            "fields" | "approval" | "descriptor" => {}
            _ => {
                odd = true;
                r.skip()?;
            }
        }
        Ok(())
    })?;
    let (false, Some(state), Some(digest), Some(recorded), Some(first_seen), Some(raw)) =
        (odd, state, digest, recorded, first_seen, raw)
    else {
        return Ok(None);
    };
    if state.is_decided() != approval.is_some() {
        return Ok(None);
    }
    let Some(descriptor) = verify_raw(digest, recorded, raw, bytes, tool) else {
        return Ok(None);
    };
    Ok(Some(Entry {
        state,
        descriptor,
        first_seen,
        approval,
        lazy: Default::default(),
    }))
}

/// The descriptor of an entry whose field texts (`raw`, spans of `bytes`)
/// hash to its recorded digests; `None` when they do not, or when a text is
/// not ASCII, not one of the entry's fields or not the entry's key.
fn verify_raw(
    digest: Digest,
    recorded: FieldDigests,
    raw: Vec<(&'static str, std::ops::Range<usize>)>,
    bytes: &[u8],
    tool: Option<&str>,
) -> Option<Descriptor> {
    if recorded.len() != raw.len() {
        return None;
    }
    let allowed = digested_fields(tool);
    let mut texts = Vec::with_capacity(raw.len());
    for (name, span) in raw {
        let text = &bytes[span];
        if !allowed.contains(&name) || !text.is_ascii() {
            return None;
        }
        texts.push((name, text));
    }
    let descriptor = Descriptor::of_texts(texts);
    if descriptor.digest != digest || descriptor.field_digests != recorded {
        return None;
    }
    if let Some(tool) = tool {
        let mut expected = Vec::new();
        write_string(tool, Escape::Jcs, &mut expected);
        if descriptor.field_digests.get("name") != Some(&Digest::of(&expected)) {
            return None;
        }
    }
    Some(descriptor)
}

/// The fields a tool entry (`tool` is its key) or a server entry holds.
fn digested_fields(tool: Option<&str>) -> &'static [&'static str] {
    if tool.is_some() {
        &crate::descriptor::TOOL_FIELDS
    } else {
        &crate::descriptor::SERVER_FIELDS
    }
}

fn ptr(base: &str, token: &str) -> String {
    let mut p = format!("{base}/");
    json::push_pointer_token(&mut p, token);
    p
}

fn obj<'a>(v: &'a Value, at: &str) -> Result<&'a Object, LockError> {
    v.as_object()
        .ok_or_else(|| LockError::at(at, format!("expected an object, found {}", v.kind())))
}

fn string<'a>(o: &'a Object, key: &str, at: &str) -> Result<&'a str, LockError> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(LockError::at(
            &ptr(at, key),
            format!("expected a string, found {}", v.kind()),
        )),
        None => Err(LockError::at(at, format!("missing `{key}`"))),
    }
}

fn only_keys(o: &Object, at: &str, allowed: &[&str]) -> Result<(), LockError> {
    for (k, _) in o.iter() {
        if !allowed.contains(&k.as_str()) {
            return Err(LockError::at(
                &ptr(at, k),
                "unknown key (written by a newer git-kams, or edited by hand?)",
            ));
        }
    }
    Ok(())
}

fn digest(o: &Object, key: &str, at: &str) -> Result<Digest, LockError> {
    let s = string(o, key, at)?;
    Digest::parse(s).ok_or_else(|| {
        LockError::at(
            &ptr(at, key),
            "expected `sha256:` and 64 lowercase hex digits",
        )
    })
}

/// Reads an entry: a tool entry (`tool` is its key) or a server entry.
fn read_entry(v: &Value, at: &str, tool: Option<&str>) -> Result<Entry, LockError> {
    let o = obj(v, at)?;
    only_keys(
        o,
        at,
        &[
            "state",
            "digest",
            "fields",
            "first_seen",
            "approval",
            "descriptor",
        ],
    )?;
    let s = string(o, "state", at)?;
    let state = State::parse(s).ok_or_else(|| {
        LockError::at(
            &ptr(at, "state"),
            format!("unknown state `{s}` (expected provisional, pinned or denied)"),
        )
    })?;
    let descriptor_at = ptr(at, "descriptor");
    let fields = obj(
        o.get("descriptor")
            .ok_or_else(|| LockError::at(at, "missing `descriptor`"))?,
        &descriptor_at,
    )?;
    let allowed = digested_fields(tool);
    only_keys(fields, &descriptor_at, allowed)?;
    if !crate::descriptor::is_canonical(fields) {
        return Err(LockError::at(
            &descriptor_at,
            "descriptor is not in canonical form (NFC, trimmed): edited by hand?",
        ));
    }
    if tool.is_some() && fields.get("name").and_then(Value::as_str) != tool {
        return Err(LockError::at(
            at,
            "descriptor name differs from the entry's key",
        ));
    }
    let descriptor = Descriptor::from_canonical(fields.clone());
    if digest(o, "digest", at)? != descriptor.digest {
        return Err(LockError::at(
            &ptr(at, "digest"),
            "digest does not match the stored descriptor (edited by hand?)",
        ));
    }
    let fields_at = ptr(at, "fields");
    let field_digests = obj(
        o.get("fields")
            .ok_or_else(|| LockError::at(at, "missing `fields`"))?,
        &fields_at,
    )?;
    if field_digests.len() != descriptor.field_digests.len() {
        return Err(LockError::at(
            &fields_at,
            "field digests do not list exactly the descriptor's fields",
        ));
    }
    for (k, expected) in &descriptor.field_digests {
        if digest(field_digests, k, &fields_at)? != *expected {
            return Err(LockError::at(
                &ptr(&fields_at, k),
                "field digest does not match the stored descriptor",
            ));
        }
    }
    let first_seen = string(o, "first_seen", at)?.to_string();
    let approval = match o.get("approval") {
        None => None,
        Some(a) => Some(read_approval(a, &ptr(at, "approval"))?),
    };
    if state.is_decided() != approval.is_some() {
        return Err(LockError::at(
            at,
            "a pinned or denied entry needs an `approval`, and only such an entry has one",
        ));
    }
    Ok(Entry {
        state,
        descriptor,
        first_seen,
        approval: approval.map(Arc::new),
        lazy: Default::default(),
    })
}

/// Reads an approval object (`approver`, `at`, `note`, nothing else).
fn read_approval(v: &Value, at: &str) -> Result<Approval, LockError> {
    let o = obj(v, at)?;
    only_keys(o, at, &["approver", "at", "note"])?;
    Ok(Approval {
        approver: string(o, "approver", at)?.to_string(),
        at: string(o, "at", at)?.to_string(),
        note: string(o, "note", at)?.to_string(),
    })
}

/// A launch's approval, on one line, keys in the entries' order.
fn write_approval_line(a: &Approval, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"approver\": ");
    write_string(&a.approver, Escape::Visible, out);
    out.extend_from_slice(b", \"at\": ");
    write_string(&a.at, Escape::Visible, out);
    out.extend_from_slice(b", \"note\": ");
    write_string(&a.note, Escape::Visible, out);
    out.push(b'}');
}

fn indent(n: usize, out: &mut Vec<u8>) {
    out.push(b'\n');
    out.extend(std::iter::repeat_n(b' ', n));
}

fn key(k: &str, n: usize, out: &mut Vec<u8>) {
    indent(n, out);
    write_string(k, Escape::Visible, out);
    out.extend_from_slice(b": ");
}

fn write_entry(e: &Entry, n: usize, out: &mut Vec<u8>) {
    out.push(b'{');
    key("state", n + 2, out);
    write_string(e.state.as_str(), Escape::Visible, out);
    out.push(b',');
    key("digest", n + 2, out);
    write_string(&e.descriptor.digest.to_string(), Escape::Visible, out);
    out.push(b',');
    key("fields", n + 2, out);
    out.push(b'{');
    for (i, (f, d)) in e.descriptor.field_digests.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        key(f, n + 4, out);
        write_string(&d.to_string(), Escape::Visible, out);
    }
    indent(n + 2, out);
    out.extend_from_slice(b"},");
    key("first_seen", n + 2, out);
    write_string(&e.first_seen, Escape::Visible, out);
    out.push(b',');
    if let Some(a) = &e.approval {
        key("approval", n + 2, out);
        out.push(b'{');
        key("approver", n + 4, out);
        write_string(&a.approver, Escape::Visible, out);
        out.push(b',');
        key("at", n + 4, out);
        write_string(&a.at, Escape::Visible, out);
        out.push(b',');
        key("note", n + 4, out);
        write_string(&a.note, Escape::Visible, out);
        indent(n + 2, out);
        out.extend_from_slice(b"},");
    }
    key("descriptor", n + 2, out);
    out.push(b'{');
    let members = crate::canon::sorted_members(&e.descriptor.fields);
    for (i, (f, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        key(f, n + 4, out);
        write_value(v, Escape::Visible, out);
    }
    indent(n + 2, out);
    out.push(b'}');
    indent(n, out);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
