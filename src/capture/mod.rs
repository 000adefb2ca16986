//! Capture: ask the servers of the MCP client configs what they advertise,
//! and write it down in the inventory format that every other command
//! reads.
//!
//! This is the one place where git-kams runs what a config says, so the
//! edges are drawn tight: a server gets only a minimal environment plus
//! what its config names, its whole process group is ended afterwards, every
//! message is capped in size, every server has a deadline, and a failing
//! server fails alone. The protocol is in [`session`], the transports in
//! [`stdio`] and [`http`].

pub mod http;
pub mod identity;
pub mod queue;
pub mod reaper;
pub mod session;
pub mod stdio;
pub mod transport;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use crate::canon::{self, Escape};
use crate::config::ClientServer;
use crate::json::{Object, Value};
use crate::text::escape_display;
use session::{Advertised, Raw};
use transport::Transport;

/// Variables of the caller's environment that a stdio server gets, besides
/// those its config names: what a program needs to find executables, its
/// home and temporary folder, and to decode text. Tokens and other secrets
/// in the caller's environment stay out unless the config names them.
pub const BASE_ENV: [&str; 9] = [
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR",
];

/// Default per-server deadline.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Default number of servers captured at once.
pub const DEFAULT_JOBS: usize = 8;

/// How to capture.
#[derive(Clone, Debug)]
pub struct Options {
    /// Deadline per server, from start to end of session.
    pub timeout: Duration,
    /// Servers captured at once.
    pub jobs: usize,
    /// Largest message accepted from a server, in bytes.
    pub max_message: usize,
    /// Where stdio servers run, and what `${workspaceFolder}` means: the
    /// top of the work tree.
    pub workdir: PathBuf,
    /// The caller's environment, from which [`BASE_ENV`] and `${VAR}`
    /// references are taken.
    pub caller_env: Vec<(String, String)>,
    /// Who capture says it is in `initialize`.
    pub client: identity::Identity,
}

/// One server captured.
#[derive(Debug)]
pub struct Captured {
    /// Its name in the config.
    pub name: String,
    /// The capture file, in the format the inventory reader reads.
    pub file: Vec<u8>,
    /// Number of tools listed.
    pub tools: usize,
    /// Things that did not stop the capture but deserve a look.
    pub warnings: Vec<String>,
}

/// How a config entry reaches its server.
enum Reach {
    Stdio,
    Http(http::HttpKind),
}

/// Which transport a config entry asks for: `type` when given, else stdio
/// for a `command` and HTTP (streamable, falling back to SSE) for a `url`.
fn reach(entry: &Object) -> Result<Reach> {
    let kind = crate::config::entry_type(entry);
    let url = crate::config::endpoint(entry);
    match (kind, entry.get("command"), url) {
        (Some("stdio") | None, Some(_), _) => Ok(Reach::Stdio),
        (Some("http" | "streamable-http" | "streamableHttp"), _, Some(_)) => {
            Ok(Reach::Http(http::HttpKind::Streamable))
        }
        (Some("sse"), _, Some(_)) => Ok(Reach::Http(http::HttpKind::Sse)),
        (None, None, Some(_)) => Ok(Reach::Http(http::HttpKind::Auto)),
        (Some(t), _, _) => bail!(
            "transport type `{}` with {}: capture knows stdio (with `command`), http and sse (with `url`)",
            escape_display(t),
            if url.is_some() { "a url" } else { "no url" }
        ),
        (None, None, None) => bail!("the entry has neither `command` nor `url`"),
    }
}

/// Captures every server of `servers`, at most `opts.jobs` at once, in
/// the order given. `progress` hears of each server as it ends (name, done
/// so far, total).
pub fn capture_all(
    servers: &[ClientServer],
    opts: &Options,
    captured_at: &str,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Vec<Result<Captured>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Captured>>>> =
        Mutex::new((0..servers.len()).map(|_| None).collect());
    let (tx, rx) = mpsc::channel::<usize>();
    let work = |tx: mpsc::Sender<usize>| loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(server) = servers.get(i) else { return };
        let got = capture_one(server, opts, captured_at);
        results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(got);
        let _ = tx.send(i);
    };
    std::thread::scope(|s| {
        let mut started = 0;
        for _ in 0..opts.jobs.clamp(1, servers.len().max(1)) {
            let tx = tx.clone();
            // A thread that cannot be started (a process limit) leaves its
            // servers to the others.
            if std::thread::Builder::new()
                .spawn_scoped(s, move || work(tx))
                .is_ok()
            {
                started += 1;
            }
        }
        if started == 0 {
            // None could: one after the other, here.
            work(tx.clone());
        }
        drop(tx);
        for (done, i) in rx.iter().enumerate() {
            progress(&servers[i].name, done + 1, servers.len());
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every server was captured"))
        .collect()
}

/// Captures one server, ending its session whatever happens.
pub fn capture_one(server: &ClientServer, opts: &Options, captured_at: &str) -> Result<Captured> {
    let deadline = Instant::now() + opts.timeout;
    let entry = &server.entry;
    if server.name.trim().is_empty() {
        // The inventory reader refuses such a name, so its capture file
        // would make every later command fail: nothing is run for it.
        bail!(
            "a server name that is empty or only blanks cannot be recorded in the inventory; rename it in {}",
            crate::text::shown_path(&server.source)
        );
    }
    let how = reach(entry)?;
    let mut transport: Box<dyn Transport> = match how {
        Reach::Stdio => {
            let argv = argv(entry)
                .iter()
                .map(|a| expand(a, opts))
                .collect::<Result<Vec<_>>>()?;
            let mut env: Vec<(String, String)> = opts
                .caller_env
                .iter()
                .filter(|(k, _)| BASE_ENV.contains(&k.as_str()))
                .cloned()
                .collect();
            if let Some(Value::Object(named)) = entry.get("env") {
                for (k, v) in named.iter() {
                    if let Some(v) = v.as_str() {
                        env.retain(|(have, _)| have != k);
                        env.push((k.clone(), expand(v, opts)?));
                    }
                }
            }
            let cwd = match entry.get("cwd").and_then(Value::as_str) {
                Some(c) => opts.workdir.join(expand(c, opts)?),
                None => opts.workdir.clone(),
            };
            Box::new(stdio::spawn(&argv, &env, &cwd, opts.max_message, deadline)?)
        }
        Reach::Http(kind) => {
            let url = expand(crate::config::endpoint(entry).map_or("", |(_, u)| u), opts)?;
            let mut headers = Vec::new();
            if let Some(Value::Object(h)) = entry.get("headers") {
                for (k, v) in h.iter() {
                    if let Some(v) = v.as_str() {
                        headers.push((k.clone(), expand(v, opts)?));
                    }
                }
            }
            let hopts = http::HttpOptions {
                max_message: opts.max_message,
                deadline,
            };
            http::connect(&url, &headers, kind, &hopts)?
        }
    };
    let got = session::Session::new(transport.as_mut(), deadline, opts.max_message, opts.client)
        .capture();
    let ended = Instant::now();
    let diagnostics = transport.diagnostics();
    transport.close();
    let advertised = match got {
        Ok(a) => a,
        Err(e) => {
            // Whatever was awaited (an answer, room in the server's input,
            // an HTTP response), the deadline is what ended it.
            let e = if ended >= deadline {
                anyhow!("timed out after {} s ({e:#})", opts.timeout.as_secs_f64())
            } else {
                e
            };
            if diagnostics.is_empty() {
                return Err(e);
            }
            return Err(anyhow!("{e:#}; {diagnostics}"));
        }
    };
    let file = capture_file(server, &how, &advertised, captured_at);
    reads_back(&server.name, &file, opts)?;
    Ok(Captured {
        name: server.name.clone(),
        tools: advertised.tools.len(),
        file,
        warnings: advertised.warnings,
    })
}

/// One server's captures as several clients ([`identity`]), merged into
/// the capture of the first: its file gains `capturedAs` (the identities,
/// the first being the one whose answer the file holds) and, when another
/// identity was told something else, `cloaking` (per such identity, the
/// members and items that differ), and a warning says so. A server that
/// failed as any identity failed.
pub fn combine(
    identities: &[identity::Identity],
    mut per_identity: Vec<Vec<Result<Captured>>>,
) -> Vec<Result<Captured>> {
    let Some(first) = per_identity.first_mut().map(std::mem::take) else {
        return Vec::new();
    };
    let mut rest: Vec<std::vec::IntoIter<Result<Captured>>> = per_identity
        .into_iter()
        .skip(1)
        .map(Vec::into_iter)
        .collect();
    let keys: Vec<Value> = identities
        .iter()
        .map(|i| Value::String(i.key.to_string()))
        .collect();
    first
        .into_iter()
        .map(|primary| {
            let others: Vec<Result<Captured>> =
                rest.iter_mut().filter_map(Iterator::next).collect();
            let mut primary = primary.map_err(|e| anyhow!("as {}: {e:#}", identities[0].key))?;
            let mut cloaking = Vec::new();
            for (other, id) in others.into_iter().zip(identities.iter().skip(1)) {
                let other = other.map_err(|e| anyhow!("as {}: {e:#}", id.key))?;
                if other.file == primary.file {
                    continue;
                }
                let differs = differing(&primary.file, &other.file);
                primary.warnings.push(format!(
                    "answers {} otherwise than {}: {} (scan reports a high cloaking finding)",
                    id.key,
                    identities[0].key,
                    differs.join(", ")
                ));
                let mut entry = Object::new();
                entry.insert("as".into(), Value::String(id.key.to_string()));
                entry.insert("clientInfo".into(), Value::String(id.name.to_string()));
                entry.insert(
                    "differs".into(),
                    Value::Array(differs.into_iter().map(Value::String).collect()),
                );
                cloaking.push(Value::Object(entry));
            }
            let mut members = vec![("capturedAs", Value::Array(keys.clone()))];
            if !cloaking.is_empty() {
                members.push(("cloaking", Value::Array(cloaking)));
            }
            primary.file = with_members(&primary.file, &members);
            Ok(primary)
        })
        .collect()
}

/// What differs between two capture files of one server: top-level
/// members (`instructions`, `serverInfo`...) by name, and the items of its
/// lists (`tools/NAME`, `prompts/NAME`, `resources/URI`) that one has and
/// the other has not, or has otherwise.
fn differing(a: &[u8], b: &[u8]) -> Vec<String> {
    let parse = |bytes: &[u8]| match crate::json::parse(bytes) {
        Ok((Value::Object(o), _)) => o,
        _ => Object::new(),
    };
    let (a, b) = (parse(a), parse(b));
    let keys = union(a.iter().map(|(k, _)| k), b.iter().map(|(k, _)| k));
    let mut out = Vec::new();
    for key in keys {
        if key == RUN_METADATA || a.get(key) == b.get(key) {
            continue;
        }
        let id = match key.as_str() {
            "tools" | "prompts" => "name",
            "resources" => "uri",
            "resourceTemplates" => "uriTemplate",
            _ => {
                out.push(key.clone());
                continue;
            }
        };
        let items = |o: &Object| -> Vec<(String, Value)> {
            o.get(key)
                .and_then(Value::as_array)
                .unwrap_or_default()
                .iter()
                .map(|v| {
                    let name = v.get(id).and_then(Value::as_str).unwrap_or("?").to_string();
                    (name, v.clone())
                })
                .collect()
        };
        let (ia, ib) = (items(&a), items(&b));
        let names = union(ia.iter().map(|(n, _)| n), ib.iter().map(|(n, _)| n));
        let before = out.len();
        for n in names {
            let find = |list: &[(String, Value)]| {
                list.iter().find(|(m, _)| m == n).map(|(_, v)| v.clone())
            };
            if find(&ia) != find(&ib) {
                out.push(format!("{key}/{n}"));
            }
        }
        if out.len() == before {
            // The same items in another order.
            out.push(format!("{key} (order)"));
        }
    }
    out
}

/// The names of `a`, then those of `b` that `a` has not, each once.
fn union<'a>(
    a: impl Iterator<Item = &'a String>,
    b: impl Iterator<Item = &'a String>,
) -> Vec<&'a String> {
    let mut out: Vec<&String> = Vec::new();
    for n in a.chain(b) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// `file` (a capture file, which ends with its closing brace and a line
/// feed) with `members` added at its end.
/// `file` with a `configuredIn` member naming the client configs its
/// server was launched from (sorted, as the lock records them), or as it
/// is when there are none.
pub fn with_configured_in(file: &[u8], configs: &[String]) -> Vec<u8> {
    if configs.is_empty() {
        return file.to_vec();
    }
    let mut files = configs.to_vec();
    files.sort();
    files.dedup();
    let files = Value::Array(files.into_iter().map(Value::String).collect());
    with_members(file, &[("configuredIn", files)])
}

fn with_members(file: &[u8], members: &[(&str, Value)]) -> Vec<u8> {
    let file = file.trim_ascii_end();
    let body = file.strip_suffix(b"}").unwrap_or(file);
    let mut out = body.trim_ascii_end().to_vec();
    for (key, value) in members {
        out.extend_from_slice(b",\n  ");
        canon::write_string(key, Escape::Visible, &mut out);
        out.extend_from_slice(b": ");
        canon::write_value(value, Escape::Visible, &mut out);
    }
    out.extend_from_slice(b"\n}\n");
    out
}

/// Fails unless `file` reads back, under the input size cap, as the
/// inventory of exactly the server `name`: a capture file that every later
/// command would refuse is not written at all, and its server fails alone.
fn reads_back(name: &str, file: &[u8], opts: &Options) -> Result<()> {
    let read = crate::inventory::ReadOptions {
        max_size: opts.max_message as u64,
        ..crate::inventory::ReadOptions::default()
    };
    let path = PathBuf::from(file_name(name));
    let inventory = crate::inventory::read_in_memory(vec![(path, file.to_vec())], &read)
        .map_err(|e| anyhow!("the capture would not read back as an inventory: {e}"))?;
    if inventory.servers.len() != 1 || !inventory.servers.contains_key(name) {
        bail!("the capture would not read back as the inventory of this one server");
    }
    Ok(())
}

/// The command line a stdio entry names, as written (`command` as a string
/// or an array, then `args`).
fn argv(entry: &Object) -> Vec<String> {
    let mut out: Vec<String> = match entry.get("command") {
        Some(Value::String(c)) => vec![c.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Array(args)) = entry.get("args") {
        out.extend(args.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out
}

/// Expands the references clients expand in config values: `${VAR}`,
/// `${VAR:-default}` (Claude Code), `${env:VAR}`, `${workspaceFolder}` and
/// `${userHome}` (VS Code). `${input:...}` needs a client to prompt, so it
/// is an error; so is a variable that is not set and has no default.
fn expand(s: &str, opts: &Options) -> Result<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let name = &rest[at + 2..at + end];
        let var = |n: &str| {
            opts.caller_env
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        let value = if let Some(input) = name.strip_prefix("input:") {
            bail!(
                "the config asks for an input (`${{input:{}}}`), which only an interactive client can prompt for; set it through an environment variable instead",
                escape_display(input)
            );
        } else if name == "workspaceFolder" {
            opts.workdir.to_string_lossy().into_owned()
        } else if name == "userHome" {
            var("HOME").unwrap_or_default()
        } else {
            let name = name.strip_prefix("env:").unwrap_or(name);
            let (name, default) = match name.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (name, None),
            };
            match (var(name), default) {
                (Some(v), _) => v,
                (None, Some(d)) => d.to_string(),
                (None, None) => bail!(
                    "the config refers to `${{{}}}`, which is not set in this environment",
                    escape_display(name)
                ),
            }
        };
        out.push_str(&value);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The capture file: the launch as the config writes it (references
/// unexpanded, secrets redacted), the capture time, then what the server
/// sent, byte for byte. The inventory reader digests `serverInfo`,
/// `instructions`, the tools, prompts and resources; nothing else here,
/// the time included, changes a digest.
fn capture_file(server: &ClientServer, how: &Reach, a: &Advertised, captured_at: &str) -> Vec<u8> {
    let entry = &server.entry;
    let mut out = Vec::with_capacity(4096 + a.tools.iter().map(Vec::len).sum::<usize>());
    let field = |out: &mut Vec<u8>, key: &str, value: &[u8]| {
        out.extend_from_slice(if out.is_empty() { b"{\n  " } else { b",\n  " });
        canon::write_string(key, Escape::Visible, out);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
    };
    let text = |s: &str| {
        let mut b = Vec::new();
        canon::write_string(s, Escape::Visible, &mut b);
        b
    };
    let value = |v: &Value| {
        let mut b = Vec::new();
        canon::write_value(v, Escape::Visible, &mut b);
        b
    };
    field(&mut out, "server", &text(&server.name));
    match how {
        Reach::Stdio => {
            field(&mut out, "transport", b"\"stdio\"");
            let argv: Vec<Value> = crate::config::redacted_argv(&argv(entry))
                .into_iter()
                .map(Value::String)
                .collect();
            field(&mut out, "command", &value(&Value::Array(argv)));
            if let Some(Value::Object(env)) = entry.get("env") {
                field(
                    &mut out,
                    "env",
                    &value(&Value::Object(crate::config::redacted_env(env))),
                );
            }
        }
        Reach::Http(kind) => {
            let t = match kind {
                http::HttpKind::Sse => "sse",
                _ => "http",
            };
            field(&mut out, "transport", &text(t));
            if let Some((_, u)) = crate::config::endpoint(entry) {
                field(&mut out, "url", &text(&crate::config::redacted_url(u)));
            }
            if let Some(Value::Object(h)) = entry.get("headers") {
                // Header values are credentials more often than not.
                let mut names = Object::new();
                for (k, v) in h.iter() {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => canon::jcs_string(other),
                    };
                    names.insert(k.clone(), Value::String(crate::config::redacted_header(&v)));
                }
                field(&mut out, "headers", &value(&Value::Object(names)));
            }
        }
    }
    field(&mut out, "capturedAt", &text(captured_at));
    field(
        &mut out,
        "protocolVersionRequested",
        &text(session::PROTOCOL_VERSION),
    );
    field(&mut out, "protocolVersion", &text(&a.protocol_version));
    for (key, raw) in [
        ("serverInfo", &a.server_info),
        ("capabilities", &a.capabilities),
        ("instructions", &a.instructions),
    ] {
        if let Some(raw) = raw {
            field(&mut out, key, raw);
        }
    }
    let list = |items: &[Raw]| {
        let mut b = Vec::from(&b"["[..]);
        for (i, item) in items.iter().enumerate() {
            b.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
            b.extend_from_slice(item);
        }
        b.extend_from_slice(if items.is_empty() { b"]" } else { b"\n  ]" });
        b
    };
    field(&mut out, "tools", &list(&a.tools));
    for (key, items) in [
        ("prompts", &a.prompts),
        ("resources", &a.resources),
        ("resourceTemplates", &a.resource_templates),
    ] {
        if let Some(items) = items {
            field(&mut out, key, &list(items));
        }
    }
    if !a.unavailable.is_empty() {
        let methods = a
            .unavailable
            .iter()
            .map(|m| Value::String(m.to_string()))
            .collect();
        field(&mut out, "unavailable", &value(&Value::Array(methods)));
    }
    out.extend_from_slice(b"\n}\n");
    out
}

/// The member of a capture file that changes on every run while the
/// server does not: the time of the capture.
const RUN_METADATA: &str = "capturedAt";

/// Whether the capture file `new` says exactly what `old` (the file on
/// disk) says, leaving aside when each was captured: then `old` is kept as
/// it is, byte for byte, and the work tree stays clean.
///
/// Everything else counts, compared as the bytes capture writes: the
/// launch (command, env, url, headers as redacted), the protocol versions,
/// serverInfo, capabilities, instructions, every tool, prompt, resource and
/// template as the server sent it (so a reordered list, or one spelled
/// otherwise, is a change), and which lists were unavailable. `capturedAt`
/// is the one member that changes from run to run with nothing changed:
/// tokens and cursors are not written, and the rest is the config's text
/// or the server's. An `old` that is not a capture file of this layout
/// (another version wrote it, a person edited it) differs.
pub fn same_capture(old: &[u8], new: &[u8]) -> bool {
    match (without_run_metadata(old), without_run_metadata(new)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// `file` without the value of its top-level `capturedAt` member (the key
/// stays), or `None` when it is no JSON object holding one such member.
fn without_run_metadata(file: &[u8]) -> Option<Vec<u8>> {
    let mut r = crate::json::Reader::new(file, crate::json::MAX_DEPTH).ok()?;
    let mut at: Vec<std::ops::Range<usize>> = Vec::new();
    r.object(|r, key| -> Result<(), crate::json::ParseError> {
        let start = r.offset();
        r.skip()?;
        if key == RUN_METADATA {
            at.push(start..r.position());
        }
        Ok(())
    })
    .ok()?;
    let [range] = at.as_slice() else {
        return None;
    };
    let mut out = file[..range.start].to_vec();
    out.extend_from_slice(&file[range.end..]);
    Some(out)
}

/// The server a capture file in an inventory folder was written for, when
/// `file` (named `name` there) is one that capture writes: an object with
/// the members only capture writes together (`server`, `transport`,
/// `capturedAt`, `protocolVersionRequested`, `tools`), named as capture
/// names that server's file ([`file_name`], or [`old_file_name`]). Any
/// other file (one a person wrote, a corpus file, a `tools/list` dump) is
/// `None`, and `capture --prune` never removes it.
pub fn written_for(name: &str, file: &[u8]) -> Option<String> {
    let Ok((Value::Object(o), _)) = crate::json::parse(file) else {
        return None;
    };
    let server = o.get("server")?.as_str()?.to_string();
    let members = [
        "transport",
        "capturedAt",
        "protocolVersionRequested",
        "tools",
    ];
    if !members.iter().all(|m| o.get(m).is_some()) {
        return None;
    }
    (name == file_name(&server) || name == old_file_name(&server)).then_some(server)
}

/// Longest server name kept as it is in its file name; a longer one is
/// cut and hashed like any unsafe name. File systems allow 255 bytes a
/// name, so every capture file name stays well under that.
const SAFE_NAME_MAX: usize = 100;

/// Bytes of an unsafe name's stem kept before its hash.
const STEM_MAX: usize = 64;

/// The file name of a server's capture in the inventory folder.
///
/// A name made only of safe characters (ASCII letters and digits, `-`,
/// `_`, `.`, `@`; not starting with `.`; at most [`SAFE_NAME_MAX`] bytes)
/// is used as it is. Any other name, the empty one included, becomes a
/// stem (its safe characters, others replaced by `_`, cut to
/// [`STEM_MAX`]), `~`, and 16 hex digits of the SHA-256 of the exact name:
/// so `a/b` and `a_b`, or `é` and `""`, get distinct files, none can
/// point outside the folder, and since `~` is not a safe character, a
/// hashed name never equals a name kept as it is.
pub fn file_name(server: &str) -> String {
    let safe_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@');
    let safe = !server.is_empty()
        && server.len() <= SAFE_NAME_MAX
        && !server.starts_with('.')
        && server.chars().all(safe_char);
    if safe {
        return format!("{server}.json");
    }
    let mut stem: String = server
        .chars()
        .map(|c| if safe_char(c) { c } else { '_' })
        .take(STEM_MAX)
        .collect();
    if stem.starts_with('.') {
        stem.insert(0, '_');
    }
    let digest = canon::Digest::of(server.as_bytes()).0;
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{stem}~{hex}.json")
}

/// The file name [`file_name`] gave before it told every name apart
/// (unsafe characters replaced, no hash), for [`commands::capture`] to
/// replace a capture written under it: left beside the new one, it would
/// define the server twice.
///
/// [`commands::capture`]: crate::commands::capture
pub fn old_file_name(server: &str) -> String {
    let mut s: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with('.') || s.is_empty() {
        s.insert(0, '_');
    }
    s.push_str(".json");
    s
}

/// Where the capture of `server` goes in `folder`.
pub fn file_path(folder: &Path, server: &str) -> PathBuf {
    folder.join(file_name(server))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        Options {
            timeout: DEFAULT_TIMEOUT,
            jobs: 1,
            max_message: 1 << 20,
            workdir: PathBuf::from("/repo"),
            caller_env: vec![
                ("TOKEN".into(), "s3cret".into()),
                ("HOME".into(), "/h".into()),
            ],
            client: identity::GIT_KAMS,
        }
    }

    #[test]
    fn references_expand_as_clients_do() {
        let o = opts();
        assert_eq!(expand("Bearer ${TOKEN}", &o).unwrap(), "Bearer s3cret");
        assert_eq!(
            expand("${env:TOKEN}/${workspaceFolder}", &o).unwrap(),
            "s3cret//repo"
        );
        assert_eq!(
            expand("${MISSING:-dflt} ${userHome}", &o).unwrap(),
            "dflt /h"
        );
        assert_eq!(
            expand("no refs, $HOME, ${unclosed", &o).unwrap(),
            "no refs, $HOME, ${unclosed"
        );
        assert!(expand("${MISSING}", &o)
            .unwrap_err()
            .to_string()
            .contains("not set"));
        assert!(expand("${input:key}", &o)
            .unwrap_err()
            .to_string()
            .contains("input"));
    }

    #[test]
    fn only_the_capture_time_may_differ_in_an_unchanged_capture() {
        let file = |at: &str, tools: &str| {
            format!(
                "{{\n  \"server\": \"s\",\n  \"capturedAt\": \"{at}\",\n  \"tools\": [{tools}]\n}}\n"
            )
            .into_bytes()
        };
        let old = file("2026-01-01T00:00:00Z", r#"{"name":"a"}"#);
        assert!(same_capture(
            &old,
            &file("2026-12-01T10:00:00Z", r#"{"name":"a"}"#)
        ));
        assert!(!same_capture(
            &old,
            &file("2026-01-01T00:00:00Z", r#"{"name": "a"}"#)
        ));
        assert!(!same_capture(
            &old,
            &file("2026-01-01T00:00:00Z", r#"{"name":"b"}"#)
        ));
        // A file without the time, with it twice, or not JSON: rewritten.
        let no_time = b"{\"server\":\"s\",\"tools\":[]}\n";
        assert!(!same_capture(no_time, no_time));
        let twice = b"{\"capturedAt\":\"a\",\"capturedAt\":\"b\"}";
        assert!(!same_capture(twice, twice));
        assert!(!same_capture(b"{", b"{"));
    }

    #[test]
    fn a_capture_file_is_known_by_its_members_and_its_name() {
        let file = br#"{"server":"a/b","transport":"stdio","capturedAt":"t","protocolVersionRequested":"v","tools":[]}"#;
        assert_eq!(written_for(&file_name("a/b"), file).as_deref(), Some("a/b"));
        assert_eq!(written_for("a_b.json", file).as_deref(), Some("a/b"));
        assert_eq!(written_for("other.json", file), None);
        let corpus = br#"{"server":"x","tools":[]}"#;
        assert_eq!(written_for("x.json", corpus), None);
    }

    #[test]
    fn file_names_stay_in_the_folder() {
        assert_eq!(file_name("server-everything"), "server-everything.json");
        assert_eq!(file_name("GitHub@2"), "GitHub@2.json");
        for (name, stem) in [
            ("../../etc/passwd", "_.._.._etc_passwd~"),
            (".hidden", "_.hidden~"),
            ("a/b c", "a_b_c~"),
            ("", "~"),
            (" ", "_~"),
            ("\u{e9}", "_~"),
        ] {
            let f = file_name(name);
            assert!(f.starts_with(stem) && f.ends_with(".json"), "{name:?}: {f}");
            assert_eq!(f.len(), stem.len() + 16 + 5, "{name:?}: {f}");
        }
    }

    #[test]
    fn distinct_names_get_distinct_bounded_file_names() {
        let long = "x".repeat(300);
        let names = [
            "a/b",
            "a_b",
            "a\\b",
            "",
            "\u{e9}",
            "e\u{301}",
            "_",
            " ",
            "  ",
            "a_b~0000000000000000",
            &long,
            &long[..101],
            &long[..100],
        ];
        let mut files: Vec<String> = names.iter().map(|n| file_name(n)).collect();
        assert!(files.iter().all(|f| f.len() <= 110), "{files:?}");
        files.sort();
        files.dedup();
        assert_eq!(files.len(), names.len(), "{files:?}");
        assert_eq!(file_name(&long[..100]), format!("{}.json", &long[..100]));
    }

    #[test]
    fn transport_follows_type_then_fields() {
        let entry = |text: &str| match crate::json::parse(text.as_bytes()).unwrap().0 {
            Value::Object(o) => o,
            _ => unreachable!(),
        };
        assert!(matches!(
            reach(&entry(r#"{"command":"x"}"#)),
            Ok(Reach::Stdio)
        ));
        assert!(matches!(
            reach(&entry(r#"{"url":"http://a"}"#)),
            Ok(Reach::Http(http::HttpKind::Auto))
        ));
        assert!(matches!(
            reach(&entry(r#"{"type":"sse","url":"http://a"}"#)),
            Ok(Reach::Http(http::HttpKind::Sse))
        ));
        // The Gemini CLI's `httpUrl` is streamable HTTP.
        assert!(matches!(
            reach(&entry(r#"{"httpUrl":"http://a"}"#)),
            Ok(Reach::Http(http::HttpKind::Streamable))
        ));
        assert!(reach(&entry(r#"{"type":"ws","url":"ws://a"}"#)).is_err());
        assert!(reach(&entry(r#"{}"#)).is_err());
    }
}
