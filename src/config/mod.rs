//! MCP client configurations: `.mcp.json`, `.vscode/mcp.json`,
//! `.cursor/mcp.json`, `.gemini/settings.json`, and a Claude Desktop
//! config given with `--config`.
//! Each names servers and how to reach them (a command to run, or a URL
//! with headers), which the transport detector reviews and `capture` will
//! use. Nothing here runs anything. [`launch_spec`] is the one reviewable
//! form of such a launch, shared by configs, inventories and the lock.
//!
//! The files are read with the strict JSON reader, as inventories are: a
//! malformed file is an [`InputError`] naming the file and the JSON
//! pointer, never a config silently skipped, and a duplicate key is kept
//! (in [`ClientServer::duplicates`]) so that it becomes a finding.

use std::path::{Path, PathBuf};

use crate::detect::transport;
use crate::inventory::InputError;
use crate::json::{self, push_pointer_token, Object, Value};

/// The configs read by default, relative to the top of the work tree
/// (Claude Code, VS Code, Cursor, Gemini CLI). A missing one is simply
/// not there.
pub const DEFAULT_FILES: [&str; 4] = [
    ".mcp.json",
    ".vscode/mcp.json",
    ".cursor/mcp.json",
    GEMINI_SETTINGS,
];

/// The Gemini CLI's project settings: its `mcpServers` say `httpUrl` for
/// streamable HTTP and `url` for SSE (google-gemini/gemini-cli,
/// docs/tools/mcp-server.md), where the other clients say `url` and `type`.
pub const GEMINI_SETTINGS: &str = ".gemini/settings.json";

/// Whether `path` is a Gemini CLI settings file (`.gemini/settings.json`,
/// in the work tree or in a home folder given with `--config`).
fn is_gemini(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "settings.json")
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == ".gemini")
}

/// Where an entry connects to, and the key that says so: `url`, or the
/// Gemini CLI's `httpUrl` (streamable HTTP), which it reads first.
pub fn endpoint(entry: &Object) -> Option<(&'static str, &str)> {
    ["httpUrl", "url"]
        .into_iter()
        .find_map(|k| entry.get(k).and_then(Value::as_str).map(|u| (k, u)))
}

/// The transport an entry names: its `type`, or for the Gemini CLI's
/// `httpUrl` streamable HTTP.
pub fn entry_type(entry: &Object) -> Option<&str> {
    entry
        .get("type")
        .and_then(Value::as_str)
        .or_else(|| matches!(endpoint(entry), Some(("httpUrl", _))).then_some("http"))
}

/// The keys that hold the server map, in the order they are looked for:
/// `mcpServers` (Claude Code, Claude Desktop, Cursor), `servers` (VS Code's
/// `mcp.json`).
const SERVER_KEYS: [&str; 2] = ["mcpServers", "servers"];

/// One server entry of a client configuration.
#[derive(Clone, Debug)]
pub struct ClientServer {
    /// The server's name in the config.
    pub name: String,
    /// The config file it comes from, as shown to a reviewer: relative to
    /// the top of the work tree for the default files, as given for
    /// `--config`.
    pub source: PathBuf,
    /// JSON pointer of the entry in that file.
    pub pointer: String,
    /// The entry as written (`command`, `args`, `env`, `url`, `headers`, `type`...).
    pub entry: Object,
    /// Keys of the entry written twice, as pointers relative to the entry
    /// (`""`: the server's name itself appears twice in the server map).
    /// The reader keeps the last value; a client may keep the first.
    pub duplicates: Vec<String>,
}

/// Parses one config file. `path` names the file in errors, `shown` in
/// the entries; with `named` (a file the user named with `--config`) a
/// file without a server map is an error, since it cannot be the config
/// the user meant.
pub fn parse(
    path: &Path,
    shown: &Path,
    bytes: &[u8],
    named: bool,
) -> Result<Vec<ClientServer>, InputError> {
    let bytes = as_json(path, bytes);
    let (value, dups) = json::parse(&bytes)
        .map_err(|e| InputError::new(path, None, format!("invalid JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(InputError::new(
            path,
            None,
            format!(
                "top level is {}, expected an MCP client config (an object with \"mcpServers\" or \"servers\")",
                value.kind()
            ),
        ));
    };
    let Some((key, servers)) = SERVER_KEYS.iter().find_map(|k| top.get(k).map(|v| (*k, v))) else {
        if named {
            return Err(InputError::new(
                path,
                None,
                "names no MCP servers: expected an object with \"mcpServers\" (Claude, Cursor) or \"servers\" (VS Code)",
            ));
        }
        return Ok(Vec::new());
    };
    let base = format!("/{key}");
    if dups.contains(&base) {
        return Err(InputError::new(
            path,
            Some(base),
            format!("\"{key}\" is written twice: clients may read either server list; keep one"),
        ));
    }
    let Value::Object(servers) = servers else {
        return Err(InputError::new(
            path,
            Some(base),
            format!(
                "expected an object of servers by name, found {}",
                servers.kind()
            ),
        ));
    };
    let mut out = Vec::new();
    for (name, entry) in servers.iter() {
        let mut pointer = base.clone();
        pointer.push('/');
        push_pointer_token(&mut pointer, name);
        if let Some(why) = crate::text::server_name_problem(name) {
            return Err(InputError::new(path, Some(pointer), why));
        }
        let mut entry = check_entry(path, &pointer, entry)?.clone();
        if is_gemini(shown)
            && entry.get("type").is_none()
            && endpoint(&entry).is_some_and(|(k, _)| k == "url")
        {
            // The Gemini CLI reads `url` as an SSE endpoint: said here as
            // the other clients say it, so that one server written for
            // two clients reads as the same launch.
            entry.insert("type".into(), Value::String("sse".into()));
        }
        let duplicates = dups
            .iter()
            .filter_map(|d| {
                if *d == pointer {
                    Some(String::new())
                } else {
                    d.strip_prefix(&pointer)
                        .filter(|rest| rest.starts_with('/'))
                        .map(str::to_string)
                }
            })
            .collect();
        out.push(ClientServer {
            name: name.clone(),
            source: shown.to_path_buf(),
            pointer,
            entry,
            duplicates,
        });
    }
    Ok(out)
}

/// Checks the types of the fields a client acts on, so that a detector
/// never guesses what a client would do with a wrong one.
fn check_entry<'a>(path: &Path, at: &str, entry: &'a Value) -> Result<&'a Object, InputError> {
    let Value::Object(o) = entry else {
        return Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("a server entry must be an object, found {}", entry.kind()),
        ));
    };
    let wrong = |key: &str, want: &str, v: &Value| {
        InputError::new(
            path,
            Some(format!("{at}/{key}")),
            format!("\"{key}\" must be {want}, found {}", v.kind()),
        )
    };
    for (k, v) in o.iter() {
        match (k.as_str(), v) {
            ("command", Value::String(_) | Value::Array(_))
            | ("args", Value::Array(_))
            | ("env" | "headers", Value::Object(_))
            | ("url" | "httpUrl" | "type" | "envFile", Value::String(_)) => {}
            ("command", v) => return Err(wrong(k, "a string", v)),
            ("args", v) => return Err(wrong(k, "an array of strings", v)),
            ("env" | "headers", v) => return Err(wrong(k, "an object of strings", v)),
            ("url" | "httpUrl" | "type" | "envFile", v) => return Err(wrong(k, "a string", v)),
            _ => {}
        }
    }
    Ok(o)
}

/// A config file's bytes as the strict reader reads them: without a byte
/// order mark, and for an `mcp.json` (VS Code, Cursor: JSON with
/// comments) with comments and trailing commas blanked, offsets kept.
pub fn as_json(path: &Path, bytes: &[u8]) -> Vec<u8> {
    let bytes = crate::bytes::strip_bom(bytes.to_vec());
    // Claude's files are plain JSON; the Gemini CLI strips comments from
    // its settings.
    if path.file_name().is_some_and(|n| n == "mcp.json") || is_gemini(path) {
        blank_jsonc(&bytes)
    } else {
        bytes
    }
}

/// The launch a reviewer approves, in one canonical shape: what runs (the
/// full argv, the environment, the working directory) or where it connects
/// (the URL, the transport, the header names). `None` when the entry names
/// neither a command nor a URL.
///
/// Takes a client-config entry or an inventory server's launch fields, so
/// that `capture` can compare a config with what the lock recorded from an
/// inventory: `command` may be a string (configs) or the whole argv
/// (capture files), `args` is appended. Secrets in the environment, the
/// arguments, the URL and the headers are replaced by their digests (see
/// [`redaction`]), since the result is written to the committed lock; a
/// changed secret is still a changed launch.
pub fn launch_spec(entry: &Object) -> Option<Value> {
    let strings = |v: Option<&Value>| -> Vec<Value> {
        match v {
            Some(Value::String(s)) => vec![Value::String(s.clone())],
            Some(Value::Array(items)) => items
                .iter()
                .filter(|i| matches!(i, Value::String(_)))
                .cloned()
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut spec = Object::new();
    if let Some(command @ (Value::String(_) | Value::Array(_))) = entry.get("command") {
        let mut argv = strings(Some(command));
        if let Some(args @ Value::Array(_)) = entry.get("args") {
            argv.extend(strings(Some(args)));
        }
        let argv: Vec<String> = argv
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect();
        spec.insert(
            "command".into(),
            Value::Array(
                redacted_argv(&argv)
                    .into_iter()
                    .map(Value::String)
                    .collect(),
            ),
        );
        if let Some(env) = entry
            .get("env")
            .and_then(Value::as_object)
            .filter(|e| !e.is_empty())
        {
            spec.insert("env".into(), Value::Object(redacted_env(env)));
        }
        if let Some(cwd @ Value::String(_)) = entry.get("cwd") {
            spec.insert("cwd".into(), cwd.clone());
        }
    } else if let Some((_, url)) = endpoint(entry) {
        spec.insert("url".into(), Value::String(redacted_url(url)));
        // Configs say `type` (or `httpUrl`); capture files say `transport`.
        let kind = entry_type(entry).or_else(|| entry.get("transport").and_then(Value::as_str));
        if let Some(kind) = kind {
            // One name per transport, so that the same server written for
            // two clients reads as the same launch.
            let kind = match kind {
                "streamable-http" | "streamableHttp" | "http" => "http",
                other => other,
            };
            spec.insert("type".into(), Value::String(kind.to_string()));
        }
        if let Some(headers) = entry
            .get("headers")
            .and_then(Value::as_object)
            .filter(|h| !h.is_empty())
        {
            let mut kept = Object::new();
            for (name, v) in headers.iter() {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => crate::canon::jcs_string(other),
                };
                kept.insert(name.clone(), Value::String(redacted_header(&text)));
            }
            spec.insert("headers".into(), Value::Object(kept));
        }
    } else {
        return None;
    }
    Some(Value::Object(spec))
}

/// The parts of two launches ([`launch_spec`]) that differ, named as a
/// reviewer reads them, each with whether only values
/// differ there (environment or header values under the same names),
/// which weighs less than another command, address or set of names.
pub fn launch_differences(a: Option<&Value>, b: Option<&Value>) -> Vec<(&'static str, bool)> {
    let empty = Object::new();
    let obj = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let (a, b) = (obj(a), obj(b));
    let argv = |o: &Object| -> Vec<Value> {
        o.get("command")
            .and_then(Value::as_array)
            .map(<[Value]>::to_vec)
            .unwrap_or_default()
    };
    let (av, bv) = (argv(&a), argv(&b));
    let mut out = Vec::new();
    if av.first() != bv.first() {
        out.push(("command", false));
    }
    if av.get(1..) != bv.get(1..) {
        out.push(("arguments", false));
    }
    for (key, what) in [
        ("url", "url"),
        ("type", "transport"),
        ("cwd", "working folder"),
    ] {
        if a.get(key) != b.get(key) {
            out.push((what, false));
        }
    }
    for (key, names, values) in [
        ("env", "environment names", "environment values"),
        ("headers", "header names", "header values"),
    ] {
        let am = a.get(key).and_then(Value::as_object).unwrap_or(&empty);
        let bm = b.get(key).and_then(Value::as_object).unwrap_or(&empty);
        let mut an: Vec<&String> = am.iter().map(|(k, _)| k).collect();
        let mut bn: Vec<&String> = bm.iter().map(|(k, _)| k).collect();
        an.sort();
        bn.sort();
        if an != bn {
            out.push((names, false));
        } else if am != bm {
            out.push((values, true));
        }
    }
    if out.is_empty() {
        // Launches of no known shape (no command, no url) on either side.
        out.push(("launch", false));
    }
    out
}

/// What stands in a launch, a lock or a capture file for a secret: a
/// digest of the secret, so that a changed secret is a changed launch
/// (a bare `<redacted>` made every value the same, and a launch could be
/// rewritten unseen around it). The digest is SHA-256 of a fixed prefix
/// and the secret, cut to 128 bits: enough that no other value is found
/// with the same one, and it shows nothing of a high-entropy token; a
/// low-entropy password could be guessed from it by anyone who can read
/// the lock, which docs/security.md says (use a `${env:NAME}` reference).
pub fn redaction(secret: &str) -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    h.update(b"git-kams redacted secret v1\0");
    h.update(secret.as_bytes());
    let d = h.finalize();
    format!("<redacted sha256:{}>", crate::canon::hex(&d[..16]))
}

/// Length of a [`redaction`]: `<redacted sha256:` and 32 hex digits and `>`.
const REDACTION_LEN: usize = 17 + 32 + 1;

/// Where the next [`redaction`] in `text` starts, from byte `from`.
fn next_redaction(text: &str, from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(i) = text[at..].find("<redacted sha256:") {
        let start = at + i;
        let hex = text.get(start + 17..start + 49).unwrap_or("");
        if hex.len() == 32
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && text.as_bytes().get(start + 49) == Some(&b'>')
        {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

/// True when `v` is a [`redaction`] and nothing else: read back from a
/// capture file or a lock, it is kept as it is, so that redacting twice
/// is redacting once.
fn is_redaction(v: &str) -> bool {
    v.len() == REDACTION_LEN && next_redaction(v, 0) == Some(0)
}

/// `text` with each secret-shaped or secret-named part replaced by its
/// [`redaction`], the rest kept: a change around a secret stays a change
/// a reviewer can read. Redactions already in the text are kept.
fn redact_parts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let end = next_redaction(text, at).unwrap_or(text.len());
        let piece = &text[at..end];
        let mut part = piece.to_string();
        for (r, _) in transport::secret_ranges(piece).into_iter().rev() {
            part.replace_range(r.clone(), &redaction(&piece[r]));
        }
        out.push_str(&part);
        if end < text.len() {
            out.push_str(&text[end..end + REDACTION_LEN]);
            at = end + REDACTION_LEN;
        } else {
            at = end;
        }
    }
    out
}

/// A header's value as a launch keeps it: a reference to the environment
/// (`Bearer ${env:TOKEN}`) as written, anything else as its
/// [`redaction`], since header values are credentials more often than
/// not, and a changed value is a changed launch.
pub fn redacted_header(value: &str) -> String {
    if value.contains("${") || is_redaction(value) {
        value.to_string()
    } else {
        redaction(value)
    }
}

/// An environment with the same keys, where a value named like a secret
/// is replaced whole by its [`redaction`], and secret-shaped parts of
/// other values by theirs. A reference (`${env:NAME}`, `${NAME}`,
/// `${input:NAME}`) is kept: it names a secret without holding it, and a
/// changed reference is a changed launch.
pub fn redacted_env(env: &Object) -> Object {
    env.iter()
        .map(|(name, v)| {
            // A value that is not a string is judged by its JSON text.
            let text = match v {
                Value::String(s) => s.clone(),
                other => crate::canon::jcs_string(other),
            };
            let v = if is_reference(&text) || is_redaction(&text) {
                v.clone()
            } else if transport::named_secret(name, &text).is_some() {
                Value::String(redaction(&text))
            } else {
                let parts = redact_parts(&text);
                if parts == text {
                    v.clone()
                } else {
                    Value::String(parts)
                }
            };
            (name.clone(), v)
        })
        .collect()
}

/// A command line with its secrets redacted ([`redaction`]): secret-shaped
/// and `NAME=VALUE` parts of each argument, and the argument after an
/// option named like a secret (`--token VALUE`).
pub fn redacted_argv(argv: &[String]) -> Vec<String> {
    let mut out: Vec<String> = argv.iter().map(|a| redact_parts(a)).collect();
    for i in 1..argv.len() {
        let (flag, value) = (&argv[i - 1], &argv[i]);
        let Some(name) = flag.strip_prefix('-') else {
            continue;
        };
        let name = name.trim_start_matches('-');
        if !name.contains(['=', ':'])
            && !value.starts_with('-')
            && !is_reference(value)
            && !is_redaction(value)
            && transport::named_secret(name, value).is_some()
        {
            out[i] = redaction(value);
        }
    }
    out
}

/// A URL with its credentials redacted ([`redaction`]): the password of
/// its user information, query values named like secrets or shaped like
/// them, and secret-shaped parts elsewhere.
pub fn redacted_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let userinfo = match userinfo.split_once(':') {
                Some((user, pass)) if !is_redaction(pass) => {
                    format!("{}:{}", redact_parts(user), redaction(pass))
                }
                Some(_) => userinfo.to_string(),
                // A lone user name is a token as often as not (`TOKEN@host`).
                None if userinfo.len() >= 16 && !is_redaction(userinfo) => redaction(userinfo),
                None => redact_parts(userinfo),
            };
            format!("{userinfo}@{host}")
        }
        None => authority.to_string(),
    };
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (tail, None),
    };
    let tail = match before_fragment.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, v))
                        if !is_reference(v)
                            && !is_redaction(v)
                            && (transport::named_secret(k, v).is_some()
                                || !transport::secret_ranges(v).is_empty()) =>
                    {
                        format!("{k}={}", redaction(v))
                    }
                    _ => redact_parts(p),
                })
                .collect();
            format!("{}?{}", redact_parts(path), params.join("&"))
        }
        None => redact_parts(before_fragment),
    };
    let mut out = match scheme {
        Some(s) => format!("{s}://{authority}{tail}"),
        None => format!("{authority}{tail}"),
    };
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&redact_parts(f));
    }
    out
}

/// `${NAME}`, `${env:NAME}` or `${input:NAME}`, and nothing else.
fn is_reference(v: &str) -> bool {
    let Some(inner) = v.strip_prefix("${").and_then(|r| r.strip_suffix('}')) else {
        return false;
    };
    let name = inner
        .strip_prefix("env:")
        .or_else(|| inner.strip_prefix("input:"))
        .unwrap_or(inner);
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// JSON with comments to JSON, offsets kept: `//` and `/* */` comments and
/// trailing commas outside strings become spaces (newlines stay, so that
/// an error's line and column still point into the file as written).
fn blank_jsonc(input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < out.len() {
        let c = out[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (c, out.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                while i < out.len() && out[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let Some(len) = out[i + 2..].windows(2).position(|w| w == b"*/") else {
                    // Unterminated: leave it for the parser to report.
                    return out;
                };
                for b in &mut out[i..i + 2 + len + 2] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i += len + 4;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Trailing commas, now that comments are blank.
    let mut in_string = false;
    let mut i = 0;
    while i < out.len() {
        let c = out[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else if c == b',' {
            let next = out[i + 1..]
                .iter()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            if matches!(next, Some(b'}' | b']')) {
                out[i] = b' ';
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers(text: &str, file: &str) -> Result<Vec<ClientServer>, InputError> {
        parse(Path::new(file), Path::new(file), text.as_bytes(), false)
    }

    #[test]
    fn reads_claude_and_vscode_shapes() {
        let got = servers(
            r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"]},
                "web": {"type": "http", "url": "https://e.com/mcp"}}}"#,
            ".mcp.json",
        )
        .unwrap();
        let names: Vec<(&str, &str)> = got
            .iter()
            .map(|s| (s.name.as_str(), s.pointer.as_str()))
            .collect();
        assert_eq!(
            names,
            [("fs", "/mcpServers/fs"), ("web", "/mcpServers/web")]
        );

        let got = servers(
            "{\n  // comment\n  \"servers\": {\"a~b\": {\"type\": \"stdio\", \"command\": \"uvx\", /* x */ \"args\": [\"p\",],},},\n  \"inputs\": []\n}",
            "mcp.json",
        )
        .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].pointer, "/servers/a~0b");
        assert_eq!(
            got[0].entry.get("command").and_then(Value::as_str),
            Some("uvx")
        );
    }

    #[test]
    fn reads_the_gemini_cli_shape_as_the_same_launches() {
        // Gemini: `httpUrl` is streamable HTTP, `url` is SSE, comments allowed.
        let gemini = servers(
            "{\n  // project servers\n  \"mcpServers\": {\"h\": {\"httpUrl\": \"https://e.com/mcp\", \"timeout\": 3000},\n  \"s\": {\"url\": \"https://e.com/sse\"}, \"both\": {\"url\": \"https://e.com/sse\", \"httpUrl\": \"https://e.com/mcp\"}}}",
            ".gemini/settings.json",
        )
        .unwrap();
        let claude = servers(
            r#"{"mcpServers": {"h": {"type": "http", "url": "https://e.com/mcp"},
                "s": {"type": "sse", "url": "https://e.com/sse"}}}"#,
            ".mcp.json",
        )
        .unwrap();
        for (g, c) in gemini.iter().zip(&claude) {
            assert_eq!(launch_spec(&g.entry), launch_spec(&c.entry), "{}", g.name);
        }
        // The Gemini CLI reads `httpUrl` first.
        assert_eq!(launch_spec(&gemini[2].entry), launch_spec(&claude[0].entry));
        assert_eq!(entry_type(&gemini[0].entry), Some("http"));
        // Outside Gemini's settings a `url` keeps the client's own guess.
        let cursor = servers(
            r#"{"mcpServers": {"s": {"url": "https://e.com/sse"}}}"#,
            ".cursor/mcp.json",
        )
        .unwrap();
        assert_eq!(entry_type(&cursor[0].entry), None);
        // A named settings file in a home folder is read the same way.
        let home = parse(
            Path::new("/home/u/.gemini/settings.json"),
            Path::new("/home/u/.gemini/settings.json"),
            br#"{"mcpServers": {"s": {"url": "https://e.com/sse"}}}"#,
            true,
        )
        .unwrap();
        assert_eq!(entry_type(&home[0].entry), Some("sse"));
        let e = servers(
            r#"{"mcpServers": {"h": {"httpUrl": 3}}}"#,
            ".gemini/settings.json",
        )
        .unwrap_err();
        assert!(e.message.contains("\"httpUrl\" must be a string"), "{e}");
    }

    #[test]
    fn comments_are_refused_outside_mcp_json() {
        let e = servers("{// c\n\"mcpServers\": {}}", "claude_desktop_config.json").unwrap_err();
        assert!(e.message.starts_with("invalid JSON"), "{e}");
    }

    #[test]
    fn slashes_inside_strings_are_not_comments() {
        let got = servers(
            r#"{"servers": {"w": {"url": "https://x//y/*z*/", "args": ["a,]"]}}}"#,
            "mcp.json",
        )
        .unwrap();
        assert_eq!(
            got[0].entry.get("url").and_then(Value::as_str),
            Some("https://x//y/*z*/")
        );
    }

    #[test]
    fn duplicates_are_kept_relative_to_the_entry() {
        let got = servers(
            r#"{"mcpServers": {"a": {"env": {"K": "1", "K": "2"}}, "a": {"command": "x", "command": "y"}}}"#,
            ".mcp.json",
        )
        .unwrap();
        assert_eq!(got.len(), 1);
        let mut d = got[0].duplicates.clone();
        d.sort();
        assert_eq!(d, ["", "/command", "/env/K"]);
    }

    #[test]
    fn wrong_shapes_are_input_errors_with_a_pointer() {
        for (text, pointer) in [
            (r#"{"mcpServers": []}"#, "/mcpServers"),
            (r#"{"mcpServers": {"a": "npx"}}"#, "/mcpServers/a"),
            (
                r#"{"mcpServers": {"a": {"args": "-y x"}}}"#,
                "/mcpServers/a/args",
            ),
            (
                r#"{"mcpServers": {"a": {"env": ["K=V"]}}}"#,
                "/mcpServers/a/env",
            ),
            (r#"{"mcpServers": {}, "mcpServers": {}}"#, "/mcpServers"),
        ] {
            let e = servers(text, ".mcp.json").unwrap_err();
            assert_eq!(e.pointer.as_deref(), Some(pointer), "{text}: {e}");
        }
        let e = servers("[1]", ".mcp.json").unwrap_err();
        assert!(e.message.contains("top level is an array"), "{e}");
    }

    #[test]
    fn a_named_file_must_name_servers() {
        assert!(servers(r#"{"theme": "dark"}"#, ".mcp.json")
            .unwrap()
            .is_empty());
        let e = parse(
            Path::new("c.json"),
            Path::new("c.json"),
            br#"{"theme": "dark"}"#,
            true,
        )
        .unwrap_err();
        assert!(e.message.contains("names no MCP servers"), "{e}");
    }
    fn obj(text: &str) -> Object {
        json::parse(text.as_bytes())
            .unwrap()
            .0
            .as_object()
            .unwrap()
            .clone()
    }

    fn spec(text: &str) -> Option<String> {
        launch_spec(&obj(text)).map(|v| crate::canon::jcs_string(&v))
    }

    #[test]
    fn launch_spec_of_a_command_is_the_whole_argv() {
        // A config: command and args.
        assert_eq!(
            spec(r#"{"command": "npx", "args": ["-y", "pkg@1.0.0"], "type": "stdio"}"#).as_deref(),
            Some(r#"{"command":["npx","-y","pkg@1.0.0"]}"#)
        );
        // A capture file: the argv in `command`, an empty env, a transport.
        assert_eq!(
            spec(r#"{"transport": "stdio", "command": ["node", "x.js"], "env": {}}"#).as_deref(),
            Some(r#"{"command":["node","x.js"]}"#)
        );
        // The same launch from both shapes is the same value.
        assert_eq!(
            launch_spec(&obj(r#"{"command": "uvx", "args": ["a"], "cwd": "/srv"}"#)),
            launch_spec(&obj(r#"{"cwd": "/srv", "command": ["uvx", "a"]}"#))
        );
        assert_eq!(
            spec(r#"{"command": ["a", 1, "b"], "args": ["c", null], "cwd": "/w", "env": {"DEBUG": "1"}}"#)
                .as_deref(),
            Some(r#"{"command":["a","b","c"],"cwd":"/w","env":{"DEBUG":"1"}}"#)
        );
    }

    #[test]
    fn launch_spec_of_a_url_keeps_header_digests_only() {
        assert_eq!(
            spec(
                r#"{"url": "https://e.com/mcp", "type": "streamable-http",
                     "headers": {"X-Api-Key": "sk-live-1234567890abcdef", "Accept": "a"}}"#
            ),
            Some(format!(
                r#"{{"headers":{{"Accept":"{}","X-Api-Key":"{}"}},"type":"http","url":"https://e.com/mcp"}}"#,
                redaction("a"),
                redaction("sk-live-1234567890abcdef")
            ))
        );
        for (kind, want) in [("streamableHttp", "http"), ("http", "http"), ("sse", "sse")] {
            let got = spec(&format!(
                r#"{{"url": "u", "type": "{kind}", "headers": {{}}}}"#
            ));
            assert_eq!(got, Some(format!(r#"{{"type":"{want}","url":"u"}}"#)));
        }
        assert_eq!(
            spec(r#"{"url": "u", "transport": "streamable-http"}"#).as_deref(),
            Some(r#"{"type":"http","url":"u"}"#)
        );
        assert_eq!(spec(r#"{"url": "u"}"#).as_deref(), Some(r#"{"url":"u"}"#));
    }

    #[test]
    fn launch_spec_needs_a_command_or_a_url() {
        assert_eq!(spec(r#"{"type": "stdio", "env": {"A": "b"}}"#), None);
        assert_eq!(spec(r#"{"command": 3, "url": 4}"#), None);
        assert_eq!(spec("{}"), None);
    }

    #[test]
    fn redacted_env_hides_secrets_and_keeps_references() {
        let env = obj(
            r#"{"GITHUB_TOKEN": "ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "PASSWORD": "hunter2hunter2",
                "OPTS": "--verbose --api-key=Zk8c2LqP9xVb4RtY7w",
                "API_KEY": "${env:API_KEY}",
                "TOKEN": "${input:token}",
                "SECRET": "${SECRET}",
                "PIN_CODE_SECRET": 12345678,
                "HOME_DIR": "/home/me",
                "DEBUG": "1",
                "SLACK_BOT_TOKEN": "dummy-not-a-token"}"#,
        );
        let got = redacted_env(&env);
        let keys: Vec<&String> = got.iter().map(|(k, _)| k).collect();
        let want: Vec<&String> = env.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, want, "same keys, same order");
        let value = |k: &str| crate::canon::jcs_string(got.get(k).unwrap());
        for k in ["GITHUB_TOKEN", "PASSWORD", "PIN_CODE_SECRET"] {
            assert!(
                is_redaction(got.get(k).unwrap().as_str().unwrap_or("")),
                "{k}: {}",
                value(k)
            );
        }
        // Only the secret part of a value with more in it.
        assert_eq!(
            value("OPTS"),
            format!(
                r#""--verbose --api-key={}""#,
                redaction("Zk8c2LqP9xVb4RtY7w")
            )
        );
        assert_eq!(value("API_KEY"), r#""${env:API_KEY}""#);
        assert_eq!(value("TOKEN"), r#""${input:token}""#);
        assert_eq!(value("SECRET"), r#""${SECRET}""#);
        assert_eq!(value("HOME_DIR"), r#""/home/me""#);
        assert_eq!(value("DEBUG"), r#""1""#);
        assert_eq!(value("SLACK_BOT_TOKEN"), r#""dummy-not-a-token""#);
        // Through launch_spec, a secret never reaches the spec.
        let s = spec(r#"{"command": "x", "env": {"GITHUB_TOKEN": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}}"#)
            .unwrap();
        assert!(!s.contains("ghp_"), "{s}");
    }

    #[test]
    fn a_redaction_hides_the_secret_but_not_a_change() {
        // Issue 22, case 2: BASH_ENV="/dev/null api_key=..." changed around
        // the secret used to read `<redacted>` on both sides.
        let before = obj(r#"{"BASH_ENV": "/dev/null api_key=Zk8c2LqP9xVb4RtY7w"}"#);
        let after = obj(r#"{"BASH_ENV": "$(echo PWNED > /tmp/x) api_key=Zk8c2LqP9xVb4RtY7w"}"#);
        let (b, a) = (redacted_env(&before), redacted_env(&after));
        assert_ne!(b, a);
        let shown = crate::canon::jcs_string(&Value::Object(a.clone()));
        assert!(
            shown.contains("$(echo PWNED") && !shown.contains("Zk8c"),
            "{shown}"
        );
        // Another secret under the same name is another value.
        let other = obj(r#"{"GITHUB_TOKEN": "ghp_1123456789abcdefghijABCDEFGHIJ012345"}"#);
        let one = obj(r#"{"GITHUB_TOKEN": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}"#);
        assert_ne!(redacted_env(&one), redacted_env(&other));
        // Redacting twice is redacting once (capture files are read back).
        assert_eq!(redacted_env(&a), a);
        assert_eq!(redacted_env(&redacted_env(&one)), redacted_env(&one));
    }

    #[test]
    fn secrets_in_arguments_urls_and_headers_are_redacted() {
        // Issue 22, case 9.
        let ghp = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let argv: Vec<String> = [
            "npx",
            "srv@1.0",
            "--token",
            ghp,
            "--api-key=sk-live-0123456789abcdefABCDEF",
            "--name",
            "plain",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = redacted_argv(&argv);
        let text = got.join(" ");
        assert!(
            !text.contains("ghp_") && !text.contains("sk-live"),
            "{text}"
        );
        assert_eq!(got[0..3], argv[0..3]);
        assert_eq!(got[5..], argv[5..]);
        assert!(
            got[4].starts_with("--api-key=<redacted sha256:"),
            "{}",
            got[4]
        );
        assert_eq!(redacted_argv(&got), got);

        let url = "https://alice:s3cr3tpass@mcp.example.com/v1?api_key=sk-live-0123456789abcdef&region=eu#top";
        let got = redacted_url(url);
        assert!(
            !got.contains("s3cr3tpass") && !got.contains("sk-live"),
            "{got}"
        );
        assert!(got.starts_with("https://alice:<redacted sha256:"), "{got}");
        assert!(
            got.contains("@mcp.example.com/v1?api_key=<redacted sha256:"),
            "{got}"
        );
        assert!(got.ends_with("&region=eu#top"), "{got}");
        assert_eq!(redacted_url(&got), got);
        assert_ne!(
            redacted_url(url),
            redacted_url(&url.replace("s3cr3tpass", "other-pass"))
        );
        assert_eq!(
            redacted_url("http://localhost:3000/mcp"),
            "http://localhost:3000/mcp"
        );

        let s = spec(&format!(
            r#"{{"url": "{url}", "headers": {{"Authorization": "Bearer {ghp}", "X-Ref": "Bearer ${{env:T}}"}}}}"#
        ))
        .unwrap();
        assert!(!s.contains("ghp_") && !s.contains("s3cr3t"), "{s}");
        assert!(s.contains(r#""X-Ref":"Bearer ${env:T}""#), "{s}");
        let s2 = spec(&format!(
            r#"{{"url": "{url}", "headers": {{"Authorization": "Bearer ghp_9", "X-Ref": "Bearer ${{env:T}}"}}}}"#
        ))
        .unwrap();
        assert_ne!(s, s2, "a changed header value is a changed launch");
    }

    #[test]
    fn only_whole_references_are_references() {
        assert!(is_reference("${env:A_B}"));
        assert!(is_reference("${input:my-token}"));
        assert!(is_reference("${X}"));
        assert!(!is_reference("${}"));
        assert!(!is_reference("x${env:A}"));
        assert!(!is_reference("${env:A} ghp_x"));
    }
}
