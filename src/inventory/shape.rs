//! Which shape an inventory file is: a capture (`server` and `tools`), a
//! multi-server inventory (`servers`), a bare `tools/list` result, or
//! JSON-RPC response lines. The file is read once by the streaming
//! reader into shells (its objects, their tools read on the way by
//! [`super::tools`]), and the shape is told from which members they have.
//! What a shell becomes is [`super::build`]'s.

use std::path::Path;

use super::build::{build_server, build_servers};
use super::tools::{read_tools, Keep, Reading};
use super::{Ambiguity, Help, InputError, ReadOptions, Server, Tool};
use crate::json::{self, Object, Value};

/// A top-level, server or JSON-RPC result object, read with its tools
/// digested on the way (so that no whole-file tree is ever built).
#[derive(Default)]
pub(super) struct Shell {
    /// Every member except `tools`, `servers` and `result`.
    pub(super) fields: Object,
    /// The tools, when a `tools` member was present: each with its name
    /// (NFC, its key in the lock and in [`Server::tools`]) and the keys
    /// that collided after normalisation.
    pub(super) tools: Option<Vec<(String, Tool, Vec<String>)>>,
    /// Top level only: the servers of a multi-server inventory.
    pub(super) servers: Option<Vec<Shell>>,
    /// JSON-RPC only: the response's result.
    pub(super) result: Option<Box<Shell>>,
}

/// Why reading a file stopped.
pub(super) enum Fail {
    Json(json::ParseError),
    Input(InputError),
    /// A tool needs reading without the earlier reading's help (see
    /// [`parse_with`]).
    Retry,
}

impl Fail {
    /// The error to report about `path`.
    fn into_input(self, path: &Path) -> InputError {
        match self {
            Fail::Input(e) => e,
            Fail::Json(e) => InputError::new(path, None, format!("invalid JSON: {e}")),
            // Only a read with an earlier reading retries, and the second
            // read has none.
            Fail::Retry => InputError::new(path, None, "could not be read alone"),
        }
    }
}

impl From<json::ParseError> for Fail {
    fn from(e: json::ParseError) -> Fail {
        Fail::Json(e)
    }
}

impl From<InputError> for Fail {
    fn from(e: InputError) -> Fail {
        Fail::Input(e)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Top,
    Server,
    Result,
}

/// Reads the object at the reader's position.
fn read_shell(
    r: &mut json::Reader<'_>,
    path: &Path,
    reading: &Reading,
    level: Level,
) -> Result<Shell, Fail> {
    let mut shell = Shell::default();
    r.object(|r, key| -> Result<(), Fail> {
        match (key, level) {
            ("tools", _) => {
                if r.peek() != Some(b'[') {
                    return Err(wrong_kind(r, path, "`tools`", "an array"));
                }
                shell.tools = Some(read_tools(r, path, reading)?);
            }
            ("servers", Level::Top) => {
                if r.peek() != Some(b'[') {
                    return Err(InputError::new(
                        path,
                        Some("/servers".into()),
                        "`servers` must be an array",
                    )
                    .into());
                }
                shell.servers = Some(read_servers(r, path, reading)?);
            }
            ("result", Level::Top) if r.peek() == Some(b'{') => {
                shell.result = Some(Box::new(read_shell(r, path, reading, Level::Result)?));
            }
            _ => {
                let v = r.value()?;
                shell.fields.insert(key.to_string(), v);
            }
        }
        Ok(())
    })?;
    Ok(shell)
}

/// The error for the value at the reader, which is not `expected` as
/// `what` must be (or the JSON error that value has).
fn wrong_kind(r: &mut json::Reader<'_>, path: &Path, what: &str, expected: &str) -> Fail {
    let at = r.pointer();
    match r.value() {
        Ok(v) => InputError::new(
            path,
            Some(at),
            format!("{what} is {}, expected {expected}", v.kind()),
        )
        .into(),
        Err(e) => e.into(),
    }
}

/// One element of a multi-server inventory's `servers`.
fn read_server(r: &mut json::Reader<'_>, path: &Path, reading: &Reading) -> Result<Shell, Fail> {
    if r.peek() != Some(b'{') {
        return Err(wrong_kind(r, path, "server", "an object"));
    }
    read_shell(r, path, reading, Level::Server)
}

/// The servers of a multi-server inventory, the reader at the array.
fn read_servers(
    r: &mut json::Reader<'_>,
    path: &Path,
    reading: &Reading,
) -> Result<Vec<Shell>, Fail> {
    let mut list = Vec::new();
    r.array(|r, _| -> Result<(), Fail> {
        list.push(read_server(r, path, reading)?);
        Ok(())
    })?;
    Ok(list)
}

/// Parses one inventory file's bytes, detecting its format from content.
pub fn parse_file(
    path: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
) -> Result<Vec<Server>, InputError> {
    parse_with(
        path,
        bytes,
        opts,
        &Reading::new(Keep::Trees, Help::default()),
    )
}

/// Parses one inventory file's bytes with `reading`, once more without
/// its earlier reading when that one cannot help with a tool.
pub(super) fn parse_with(
    path: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
    reading: &Reading,
) -> Result<Vec<Server>, InputError> {
    match parse_once(path, bytes, opts, reading) {
        Err(Fail::Retry) => {
            // A tool the earlier reading did not know, and that does not
            // read alone as most do: read it all as if there were none,
            // so that what is reported is what is always reported.
            let alone = reading.without_earlier();
            parse_once(path, bytes, opts, &alone).map_err(|f| f.into_input(path))
        }
        read => read.map_err(|f| f.into_input(path)),
    }
}

/// [`parse_with`], once: [`Fail::Retry`] when `reading` has an earlier
/// reading and a tool needs more than it.
fn parse_once(
    path: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
    reading: &Reading,
) -> Result<Vec<Server>, Fail> {
    // Validated whole (an inventory is small next to its lock, and
    // reading it twice cost more than holding it); given back behind the
    // reader as the tools are digested.
    let mut r = json::Reader::new(bytes, json::MAX_DEPTH)?;
    if r.at_end() {
        return Err(r.error("empty input: expected a JSON value").into());
    }
    let mut shells = Vec::new();
    loop {
        if r.peek() != Some(b'{') {
            let v = r.value()?;
            let what = if shells.is_empty() {
                format!("top level is {}, expected an object (a capture, {{\"servers\": [...]}}, {{\"tools\": [...]}} or a JSON-RPC response)", v.kind())
            } else {
                format!(
                    "(value {}) expected a JSON-RPC response object, found {}",
                    shells.len() + 1,
                    v.kind()
                )
            };
            return Err(InputError::new(path, None, what).into());
        }
        shells.push(read_shell(&mut r, path, reading, Level::Top)?);
        if r.at_end() {
            break;
        }
        r.next_top();
    }
    let dups = r.take_duplicates();
    if shells.len() > 1 || shells[0].fields.get("jsonrpc").is_some() {
        return Ok(from_jsonrpc_lines(path, shells, &dups, opts)?);
    }
    let dups: Vec<String> = dups.into_iter().map(|(_, p)| p).collect();
    let top = shells.pop().expect("one value");
    if let Some(servers) = top.servers {
        return build_servers(path, servers, &dups);
    }
    if top.fields.get("server").is_some() {
        let name = server_name(path, &top.fields, "server", "")?;
        return Ok(vec![build_server(path, name, top, "", &dups)?]);
    }
    if top.tools.is_some() {
        let name = named_by_option(path, opts)?;
        return Ok(vec![build_server(path, name, top, "", &dups)?]);
    }
    Err(Fail::Input(InputError::new(
        path,
        None,
        "not an inventory: expected a capture (\"server\" and \"tools\"), a multi-server inventory {\"servers\": [...]}, a tools/list result {\"tools\": [...]} or JSON-RPC response lines",
    )))
}

fn named_by_option(path: &Path, opts: &ReadOptions) -> Result<String, InputError> {
    let name = opts.server.clone().ok_or_else(|| {
        InputError::new(
            path,
            None,
            "a bare tools/list result names no server: pass --server NAME",
        )
    })?;
    match crate::text::server_name_problem(&name) {
        None => Ok(name),
        Some(why) => Err(InputError::new(path, None, format!("--server: {why}"))),
    }
}

/// The server's name, the string at `key` of the object `o` at `at`.
pub(super) fn server_name(
    path: &Path,
    o: &Object,
    key: &str,
    at: &str,
) -> Result<String, InputError> {
    match o.get(key) {
        Some(Value::String(s)) => match crate::text::server_name_problem(s) {
            None => Ok(s.clone()),
            Some(why) => Err(InputError::new(path, Some(format!("{at}/{key}")), why)),
        },
        Some(v) => Err(InputError::new(
            path,
            Some(format!("{at}/{key}")),
            format!("server name is {}, expected a non-empty string", v.kind()),
        )),
        None => Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("server has no `{key}`"),
        )),
    }
}

/// JSON-RPC responses, one per line: `initialize` gives serverInfo and
/// instructions, each `tools/list` page gives tools.
fn from_jsonrpc_lines(
    path: &Path,
    shells: Vec<Shell>,
    dups: &[(usize, String)],
    opts: &ReadOptions,
) -> Result<Vec<Server>, InputError> {
    let name = named_by_option(path, opts)?;
    let mut merged = Shell {
        tools: Some(Vec::new()),
        ..Shell::default()
    };
    let mut ambiguities = Vec::new();
    for (line, shell) in shells.into_iter().enumerate() {
        let at = format!("(value {}) ", line + 1);
        if shell.fields.get("error").is_some() {
            return Err(InputError::new(
                path,
                Some("/error".into()),
                format!("{at}is a JSON-RPC error response"),
            ));
        }
        // Requests and notifications carry nothing advertised.
        if let Some(result) = shell.result {
            for (k, val) in result.fields.iter() {
                if matches!(
                    k.as_str(),
                    "serverInfo" | "instructions" | "prompts" | "resources" | "resourceTemplates"
                ) {
                    merged.fields.insert(k.clone(), val.clone());
                }
            }
            if let (Some(all), Some(page)) = (merged.tools.as_mut(), result.tools) {
                all.extend(page);
            }
        }
        for (_, p) in dups.iter().filter(|(i, _)| *i == line) {
            ambiguities.push(Ambiguity {
                tool: None,
                field: Some(p.clone()),
                message: format!(
                    "duplicate key in JSON-RPC line {}: a second value for the same key",
                    line + 1
                ),
            });
        }
    }
    let mut server = build_server(path, name, merged, "", &[])?;
    server.ambiguities.extend(ambiguities);
    Ok(vec![server])
}
