//! Reading a lock's text strictly: unknown keys, missing keys, digests
//! that do not match their descriptor, duplicate keys and newer versions
//! are errors, each at its JSON pointer. Read whole, or keeping only the
//! digests and where each entry's text is, for a large lock (its entries
//! then read the quick way of [`super::verify`] where they can be).

use std::sync::Arc;

use super::format::{
    share_approval, Approval, Entry, Lock, LockError, LockServer, State, FORMAT_VERSION,
};
use super::verify::{digested_fields, fast_entry};
use crate::canon::Digest;
use crate::descriptor::{Descriptor, Lazy};
use crate::json::{self, Object, Value};

impl Lock {
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
                None => format!("{}/server", child_pointer("/servers", server)),
                Some(t) => {
                    child_pointer(&format!("{}/tools", child_pointer("/servers", server)), t)
                }
            };
            let (v, _) = json::parse_nested(&text, json::MAX_DEPTH).map_err(LockError::from)?;
            *entry = read_entry(&v, &at, tool.as_deref())?;
        }
        Ok(())
    }
}

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
                    let mut lock_server = LockServer::default();
                    let mut has_tools = false;
                    r.object(|r, key| -> Result<(), LockError> {
                        match key {
                            "launch" => {
                                let at = r.pointer();
                                match r.value()? {
                                    // Its members are data (what the config
                                    // said), not format: any are kept.
                                    v @ Value::Object(_) => lock_server.launch = Some(v),
                                    v => return Err(LockError::at(&at, format!("expected an object, found {}", v.kind()))),
                                }
                            }
                            "launch_approval" => {
                                let at = r.pointer();
                                let v = r.value()?;
                                lock_server.launch_approval = Some(Arc::new(read_approval(&v, &at)?));
                            }
                            "launch_configs" => {
                                let at = r.pointer();
                                lock_server.launch_configs = read_configs(&r.value()?, &at)?;
                            }
                            "server" => lock_server.server = Some(entry(r, None)?),
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
                                lock_server.tools = tools.into_iter().collect();
                            }
                            _ => return Err(LockError::at(&r.pointer(), "unknown key (written by a newer git-kams, or edited by hand?)")),
                        }
                        Ok(())
                    })?;
                    if !has_tools {
                        return Err(LockError::at(&r.pointer(), "missing `tools`"));
                    }
                    if lock_server.launch_approval.is_some() && lock_server.launch.is_none() {
                        return Err(LockError::at(&r.pointer(), "a `launch_approval` needs the `launch` it approves"));
                    }
                    if !lock_server.launch_configs.is_empty() && lock_server.launch.is_none() {
                        return Err(LockError::at(&r.pointer(), "`launch_configs` needs the `launch` they configured"));
                    }
                    lock.servers.insert(name.to_string(), lock_server);
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

/// The pointer of `base`'s member `token`.
fn child_pointer(base: &str, token: &str) -> String {
    let mut p = format!("{base}/");
    json::push_pointer_token(&mut p, token);
    p
}

/// `v` (at `at`) as an object.
fn as_object<'a>(v: &'a Value, at: &str) -> Result<&'a Object, LockError> {
    v.as_object()
        .ok_or_else(|| LockError::at(at, format!("expected an object, found {}", v.kind())))
}

/// The object at `key` of `o` (at `at`), and its pointer.
fn object_member<'a>(
    o: &'a Object,
    key: &str,
    at: &str,
) -> Result<(&'a Object, String), LockError> {
    let member_at = child_pointer(at, key);
    let v = o
        .get(key)
        .ok_or_else(|| LockError::at(at, format!("missing `{key}`")))?;
    Ok((as_object(v, &member_at)?, member_at))
}

/// The string at `key` of `o` (at `at`).
fn string_member<'a>(o: &'a Object, key: &str, at: &str) -> Result<&'a str, LockError> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(LockError::at(
            &child_pointer(at, key),
            format!("expected a string, found {}", v.kind()),
        )),
        None => Err(LockError::at(at, format!("missing `{key}`"))),
    }
}

/// Refuses a key of `o` (at `at`) not in `allowed`.
fn only_keys(o: &Object, at: &str, allowed: &[&str]) -> Result<(), LockError> {
    for (k, _) in o.iter() {
        if !allowed.contains(&k.as_str()) {
            return Err(LockError::at(
                &child_pointer(at, k),
                "unknown key (written by a newer git-kams, or edited by hand?)",
            ));
        }
    }
    Ok(())
}

/// The digest at `key` of `o` (at `at`).
fn digest_member(o: &Object, key: &str, at: &str) -> Result<Digest, LockError> {
    let s = string_member(o, key, at)?;
    Digest::parse(s).ok_or_else(|| {
        LockError::at(
            &child_pointer(at, key),
            "expected `sha256:` and 64 lowercase hex digits",
        )
    })
}

/// Reads an entry: a tool entry (`tool` is its key) or a server entry.
fn read_entry(v: &Value, at: &str, tool: Option<&str>) -> Result<Entry, LockError> {
    let o = as_object(v, at)?;
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
    let s = string_member(o, "state", at)?;
    let state = State::parse(s).ok_or_else(|| {
        LockError::at(
            &child_pointer(at, "state"),
            format!("unknown state `{s}` (expected provisional, pinned or denied)"),
        )
    })?;
    let (fields, descriptor_at) = object_member(o, "descriptor", at)?;
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
    if digest_member(o, "digest", at)? != descriptor.digest {
        return Err(LockError::at(
            &child_pointer(at, "digest"),
            "digest does not match the stored descriptor (edited by hand?)",
        ));
    }
    let (field_digests, fields_at) = object_member(o, "fields", at)?;
    if field_digests.len() != descriptor.field_digests.len() {
        return Err(LockError::at(
            &fields_at,
            "field digests do not list exactly the descriptor's fields",
        ));
    }
    for (k, expected) in &descriptor.field_digests {
        if digest_member(field_digests, k, &fields_at)? != *expected {
            return Err(LockError::at(
                &child_pointer(&fields_at, k),
                "field digest does not match the stored descriptor",
            ));
        }
    }
    let first_seen = string_member(o, "first_seen", at)?.to_string();
    let approval = match o.get("approval") {
        None => None,
        Some(a) => Some(read_approval(a, &child_pointer(at, "approval"))?),
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

/// Reads the configs a launch was configured in: an array of distinct
/// file names in order, as the writer leaves it, each free of control
/// characters (a name is shown to reviewers as it is).
fn read_configs(v: &Value, at: &str) -> Result<Vec<String>, LockError> {
    let Value::Array(items) = v else {
        return Err(LockError::at(
            at,
            format!("expected an array of file names, found {}", v.kind()),
        ));
    };
    if items.is_empty() {
        return Err(LockError::at(
            at,
            "an empty list (git-kams leaves `launch_configs` out instead)",
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let here = format!("{at}/{i}");
        let Value::String(name) = item else {
            return Err(LockError::at(
                &here,
                format!("expected a file name, found {}", item.kind()),
            ));
        };
        if name.is_empty() || name.chars().any(char::is_control) {
            return Err(LockError::at(
                &here,
                "a file name must be non-empty, without control characters",
            ));
        }
        if out
            .last()
            .is_some_and(|last| last.as_str() >= name.as_str())
        {
            return Err(LockError::at(
                &here,
                "file names must be distinct and in order (as git-kams writes them)",
            ));
        }
        out.push(name.clone());
    }
    Ok(out)
}

/// Reads an approval object (`approver`, `at`, `note`, nothing else).
fn read_approval(v: &Value, at: &str) -> Result<Approval, LockError> {
    let o = as_object(v, at)?;
    only_keys(o, at, &["approver", "at", "note"])?;
    Ok(Approval {
        approver: string_member(o, "approver", at)?.to_string(),
        at: string_member(o, "at", at)?.to_string(),
        note: string_member(o, "note", at)?.to_string(),
    })
}
