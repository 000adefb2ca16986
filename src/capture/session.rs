//! The client side of the MCP lifecycle, as far as capture needs it:
//! `initialize`, `notifications/initialized`, then the `*/list` requests
//! with their pagination, answering whatever the server asks meanwhile.
//!
//! Every message is read with the project's strict JSON reader, and what
//! the server advertised is kept as the bytes it sent (one slice per tool,
//! prompt or resource), never re-serialised: a duplicate key or an unknown
//! field in a tool object reaches the inventory, and from there a finding,
//! exactly as a client would have received it.

use std::ops::Range;
use std::time::Instant;

use anyhow::{bail, Result};

use super::transport::{Outgoing, Transport};
use crate::canon::{self, Escape};
use crate::json::{self, Value};
use crate::text::escape_display;

/// The protocol version capture asks for: the newest this client knows.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// Versions this client knows; a server may negotiate any of them. Another
/// answer is accepted with a warning: capture only lists, and the list
/// methods have not changed shape across these versions.
const KNOWN_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Pages followed per list before giving up: a server that keeps handing
/// out new cursors would otherwise keep capture busy until the timeout.
const MAX_PAGES: usize = 10_000;

/// Notes kept of stdout lines that are not JSON-RPC messages.
const MAX_NOTED_GARBAGE: usize = 3;

/// Requests of its own a server may send in one session. A real server
/// sends a few (a ping, roots/list); each answer costs a write, and a
/// server that floods them is refused instead of answered until the
/// deadline.
const MAX_SERVER_REQUESTS: usize = 1000;

/// Warnings kept per server; the rest are counted.
const MAX_WARNINGS: usize = 20;

/// A JSON text exactly as the server sent it.
pub type Raw = Vec<u8>;

/// What one server advertised.
#[derive(Clone, Debug, Default)]
pub struct Advertised {
    /// The version the server answered `initialize` with.
    pub protocol_version: String,
    /// `serverInfo`, `capabilities` and `instructions` from the
    /// `initialize` result, as sent (absent members stay `None`).
    pub server_info: Option<Raw>,
    /// See [`Advertised::server_info`].
    pub capabilities: Option<Raw>,
    /// See [`Advertised::server_info`].
    pub instructions: Option<Raw>,
    /// Every tool object of every `tools/list` page, in order.
    pub tools: Vec<Raw>,
    /// `prompts/list`, when the server advertises prompts.
    pub prompts: Option<Vec<Raw>>,
    /// `resources/list`, when the server advertises resources.
    pub resources: Option<Vec<Raw>>,
    /// `resources/templates/list`, when the server advertises resources
    /// and answers it.
    pub resource_templates: Option<Vec<Raw>>,
    /// The optional lists (prompts, resources, templates) the server
    /// advertised but refused with a JSON-RPC error, by method: recorded
    /// in the capture file, so that a later capture where the list works
    /// is a change of the file, not an equal one.
    pub unavailable: Vec<&'static str>,
    /// What the server did that a reviewer should hear of but that did
    /// not stop the capture (stdout noise, requests declined...).
    pub warnings: Vec<String>,
}

/// A JSON-RPC error the server answered a request with: its code (as
/// JSON text) and its message, escaped for display.
#[derive(Debug)]
pub struct ErrorAnswer {
    code: String,
    message: String,
}

impl std::fmt::Display for ErrorAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server answered with error {}: {}",
            self.code, self.message
        )
    }
}

impl std::error::Error for ErrorAnswer {}

/// One list method: its name, the member of its result that holds the
/// items, and where the items go.
struct List {
    method: &'static str,
    member: &'static str,
}

const TOOLS: List = List {
    method: "tools/list",
    member: "tools",
};
const PROMPTS: List = List {
    method: "prompts/list",
    member: "prompts",
};
const RESOURCES: List = List {
    method: "resources/list",
    member: "resources",
};
const TEMPLATES: List = List {
    method: "resources/templates/list",
    member: "resourceTemplates",
};

/// A response's `result`: its members as byte ranges of the message, and
/// for the list member, the range of each element.
struct Result_ {
    bytes: Vec<u8>,
    members: Vec<(String, Range<usize>)>,
    items: Option<Vec<Range<usize>>>,
}

impl Result_ {
    fn member(&self, key: &str) -> Option<&[u8]> {
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, r)| &self.bytes[r.clone()])
    }

    fn value(&self, key: &str) -> Option<Value> {
        self.member(key)
            .map(|b| json::parse(b).expect("a member that parsed parses again").0)
    }
}

/// One client session over a transport.
pub struct Session<'t> {
    transport: &'t mut dyn Transport,
    deadline: Instant,
    next_id: u64,
    garbage: usize,
    warnings: Vec<String>,
    /// Warnings past [`MAX_WARNINGS`], not kept.
    more_warnings: usize,
    server_requests: usize,
    /// Bytes of every item listed so far, against `max_bytes`.
    listed: usize,
    max_bytes: usize,
    /// Who the session says it is in `initialize`.
    client: super::identity::Identity,
}

impl<'t> Session<'t> {
    /// A session that must be done by `deadline`, and whose listed items
    /// (tools, prompts, resources, across every page) may hold `max_bytes`
    /// in all: the capture file is an input like any other, and one past
    /// the input cap would not read back.
    pub fn new(
        transport: &'t mut dyn Transport,
        deadline: Instant,
        max_bytes: usize,
        client: super::identity::Identity,
    ) -> Session<'t> {
        Session {
            transport,
            deadline,
            next_id: 1,
            garbage: 0,
            warnings: Vec::new(),
            more_warnings: 0,
            server_requests: 0,
            listed: 0,
            max_bytes,
            client,
        }
    }

    fn warn(&mut self, warning: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(warning);
        } else {
            self.more_warnings += 1;
        }
    }

    /// Runs the whole capture: handshake, then every list the server
    /// advertises.
    pub fn capture(mut self) -> Result<Advertised> {
        let mut params = Vec::new();
        params.extend_from_slice(b"{\"protocolVersion\":\"");
        params.extend_from_slice(PROTOCOL_VERSION.as_bytes());
        // No client capabilities: capture never samples, elicits or lists
        // roots for a server, and a server that asks anyway is declined.
        params.extend_from_slice(b"\",\"capabilities\":{},\"clientInfo\":{\"name\":");
        crate::canon::write_string(self.client.name, crate::canon::Escape::Visible, &mut params);
        params.extend_from_slice(b",\"version\":");
        crate::canon::write_string(
            self.client.version,
            crate::canon::Escape::Visible,
            &mut params,
        );
        params.extend_from_slice(b"}}");
        let init = self
            .request("initialize", &params, None)
            .map_err(|e| e.context("initialize"))?;
        let version = match init.value("protocolVersion") {
            Some(Value::String(v)) => v,
            Some(v) => bail!(
                "initialize: protocolVersion is {}, expected a string",
                v.kind()
            ),
            None => bail!("initialize: the result has no protocolVersion"),
        };
        if !KNOWN_VERSIONS.contains(&version.as_str()) {
            self.warn(format!(
                "the server negotiated protocol version `{}`, which this client does not know; listed anyway",
                escape_display(&version)
            ));
        }
        self.transport.negotiated(&version);
        self.notify("notifications/initialized")?;

        let capabilities = init.value("capabilities");
        let has = |name: &str| {
            capabilities
                .as_ref()
                .and_then(|c| c.get(name))
                .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
        };
        let mut out = Advertised {
            protocol_version: version,
            server_info: init.member("serverInfo").map(<[u8]>::to_vec),
            capabilities: init.member("capabilities").map(<[u8]>::to_vec),
            instructions: init.member("instructions").map(<[u8]>::to_vec),
            ..Advertised::default()
        };
        out.tools = match self.list(&TOOLS) {
            Ok(tools) => tools,
            // A server that does not declare tools may refuse to list them.
            Err(e) if !has("tools") => {
                self.warn(format!(
                    "the server declares no tools capability and tools/list failed ({e:#}); recorded with no tools"
                ));
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        // Tools are what is reviewed: a server that refuses one of the
        // optional lists (@hubspot/mcp-server 0.4.0 declares resources and
        // answers resources/list with -32601; older servers declare
        // resources without templates) is still captured, without it.
        if has("prompts") {
            out.prompts = self.optional(&PROMPTS, &mut out.unavailable)?;
        }
        if has("resources") {
            out.resources = self.optional(&RESOURCES, &mut out.unavailable)?;
            out.resource_templates = self.optional(&TEMPLATES, &mut out.unavailable)?;
        }
        if self.more_warnings > 0 {
            self.warnings.push(format!(
                "and {} more warnings like these",
                self.more_warnings
            ));
        }
        if self.garbage > MAX_NOTED_GARBAGE {
            self.warnings.push(format!(
                "{} lines in all on stdout were not JSON-RPC messages and were skipped",
                self.garbage
            ));
        }
        out.warnings = self.warnings;
        Ok(out)
    }

    /// An optional list: its items, or `None` with a warning when the
    /// server answers it with a JSON-RPC error (its method is added to
    /// `unavailable`). Anything else that goes wrong (the session ends,
    /// the deadline, an ambiguous answer, the size cap) fails the capture,
    /// as it does for tools: only a refusal is the server's to make.
    fn optional(
        &mut self,
        list: &List,
        unavailable: &mut Vec<&'static str>,
    ) -> Result<Option<Vec<Raw>>> {
        match self.list(list) {
            Ok(items) => Ok(Some(items)),
            Err(e) if e.downcast_ref::<ErrorAnswer>().is_some() => {
                self.warn(format!(
                    "{e:#}; written without {} (the capture file lists {} as unavailable)",
                    list.member, list.method
                ));
                unavailable.push(list.method);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Every item of a paginated list.
    fn list(&mut self, list: &List) -> Result<Vec<Raw>> {
        let mut items = Vec::new();
        // Digests of the cursors handed out, not the cursors: a server
        // handing out a fresh megabyte-long cursor a page would otherwise
        // fill memory with them until the deadline.
        let mut seen: std::collections::HashSet<canon::Digest> = Default::default();
        let mut cursor: Option<String> = None;
        loop {
            let mut params = Vec::from(&b"{"[..]);
            if let Some(c) = &cursor {
                params.extend_from_slice(b"\"cursor\":");
                canon::write_string(c, Escape::Jcs, &mut params);
            }
            params.push(b'}');
            let page = self
                .request(list.method, &params, Some(list.member))
                .map_err(|e| e.context(list.method))?;
            let Some(ranges) = &page.items else {
                bail!("{}: the result has no `{}` array", list.method, list.member);
            };
            self.listed = self
                .listed
                .saturating_add(ranges.iter().map(|r| r.len()).sum::<usize>());
            if self.listed > self.max_bytes {
                bail!(
                    "{}: the server listed more than {} bytes in all (the input size cap, which its capture file must stay under; raise it with --max-input-size)",
                    list.method,
                    self.max_bytes
                );
            }
            items.extend(ranges.iter().map(|r| page.bytes[r.clone()].to_vec()));
            match page.value("nextCursor") {
                None | Some(Value::Null) => return Ok(items),
                Some(Value::String(c)) => {
                    if !seen.insert(canon::Digest::of(c.as_bytes())) {
                        bail!(
                            "{}: the server handed out cursor `{}` twice; pagination would never end",
                            list.method,
                            escape_display(&shorten(&c, 120))
                        );
                    }
                    if seen.len() > MAX_PAGES {
                        bail!("{}: more than {MAX_PAGES} pages", list.method);
                    }
                    cursor = Some(c);
                }
                Some(v) => bail!(
                    "{}: nextCursor is {}, expected a string",
                    list.method,
                    v.kind()
                ),
            }
        }
    }

    fn notify(&mut self, method: &str) -> Result<()> {
        let mut msg = Vec::from(&b"{\"jsonrpc\":\"2.0\",\"method\":"[..]);
        canon::write_string(method, Escape::Jcs, &mut msg);
        msg.push(b'}');
        self.transport.send(&msg, Outgoing::Other)
    }

    /// Sends a request and waits for its response, answering the server's
    /// own requests and skipping its notifications meanwhile. `list` names
    /// the result member whose elements are wanted as ranges.
    fn request(&mut self, method: &str, params: &[u8], list: Option<&str>) -> Result<Result_> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":").into_bytes();
        canon::write_string(method, Escape::Jcs, &mut msg);
        msg.extend_from_slice(b",\"params\":");
        msg.extend_from_slice(params);
        msg.push(b'}');
        self.transport.send(&msg, Outgoing::Request)?;
        loop {
            let Some(bytes) = self.transport.recv(self.deadline)? else {
                bail!("the server ended the session before answering");
            };
            let value = match json::parse(&bytes) {
                Ok((v, _)) => v,
                Err(e) => {
                    self.note_garbage(&bytes, &e.to_string());
                    continue;
                }
            };
            let Value::Object(o) = &value else {
                self.note_garbage(
                    &bytes,
                    &format!("{} is not a JSON-RPC message", value.kind()),
                );
                continue;
            };
            if let Some(Value::String(m)) = o.get("method") {
                // Notifications (logging, list_changed, progress) carry
                // nothing capture records; requests get an answer.
                if let Some(req_id) = o.get("id") {
                    self.server_requests += 1;
                    if self.server_requests > MAX_SERVER_REQUESTS {
                        bail!(
                            "the server sent more than {MAX_SERVER_REQUESTS} requests of its own (`{}` the last); a flood is not answered",
                            escape_display(m)
                        );
                    }
                    self.answer(m, req_id)?;
                }
                continue;
            }
            let Some(got) = o.get("id") else {
                self.note_garbage(
                    &bytes,
                    "a JSON object that is neither request, notification nor response",
                );
                continue;
            };
            if !matches!(got, Value::Number(n) if n.as_f64() == id as f64) {
                self.warn(format!(
                    "skipped a response to id {} while waiting for {id}",
                    escape_display(&String::from_utf8_lossy(&canon::jcs(got)))
                ));
                continue;
            }
            if let Some(err) = o.get("error") {
                let code = err
                    .get("code")
                    .map(|c| String::from_utf8_lossy(&canon::jcs(c)).into_owned())
                    .unwrap_or_else(|| "?".into());
                let message = err.get("message").and_then(Value::as_str).unwrap_or("");
                return Err(ErrorAnswer {
                    code,
                    message: escape_display(&shorten(message, 300)),
                }
                .into());
            }
            return split_result(bytes, list);
        }
    }

    /// Answers a request from the server: roots with an empty list,
    /// `ping` with an empty result, and everything else (sampling,
    /// elicitation, unknown methods) declined, since capture acts for no
    /// user and has no model.
    fn answer(&mut self, method: &str, id: &Value) -> Result<()> {
        let mut msg = Vec::from(&b"{\"jsonrpc\":\"2.0\",\"id\":"[..]);
        canon::write_value(id, Escape::Jcs, &mut msg);
        let shown = escape_display(method);
        match method {
            "ping" => msg.extend_from_slice(b",\"result\":{}}"),
            "roots/list" => {
                self.warn(format!(
                    "the server asked for `{shown}`; answered with no roots"
                ));
                msg.extend_from_slice(b",\"result\":{\"roots\":[]}}");
            }
            "elicitation/create" => {
                self.warn(format!(
                    "the server asked for `{shown}` (user input); declined"
                ));
                msg.extend_from_slice(b",\"result\":{\"action\":\"decline\"}}");
            }
            _ => {
                self.warn(format!("the server asked for `{shown}`; declined"));
                msg.extend_from_slice(
                    b",\"error\":{\"code\":-32601,\"message\":\"git-kams capture does not offer this\"}}",
                );
            }
        }
        self.transport.send(&msg, Outgoing::Other)
    }

    fn note_garbage(&mut self, bytes: &[u8], why: &str) {
        self.garbage += 1;
        if self.garbage <= MAX_NOTED_GARBAGE {
            let line = String::from_utf8_lossy(bytes);
            self.warn(format!(
                "skipped output that is not a JSON-RPC message ({}): {}",
                escape_display(why),
                escape_display(&shorten(&line, 120))
            ));
        }
    }
}

/// The first `max` characters of `s`, marked when cut.
fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

/// Splits a response into its result's members (and the elements of the
/// member `list`) as byte ranges. A key repeated in the result envelope is
/// refused: two readers of the same response would see different lists.
fn split_result(bytes: Vec<u8>, list: Option<&str>) -> Result<Result_> {
    let mut members = Vec::new();
    let mut items = None;
    let mut found = false;
    let mut r = json::Reader::new(&bytes, json::MAX_DEPTH)?;
    r.object(|r, key| -> Result<()> {
        if key != "result" {
            return Ok(r.skip()?);
        }
        found = true;
        if r.peek() != Some(b'{') {
            bail!("the result is not an object");
        }
        r.object(|r, key| -> Result<()> {
            let start = r.offset();
            if Some(key) == list && r.peek() == Some(b'[') {
                let mut ranges = Vec::new();
                r.array(|r, _| -> Result<()> {
                    let s = r.offset();
                    r.skip()?;
                    ranges.push(s..r.position());
                    Ok(())
                })?;
                items = Some(ranges);
            } else {
                r.skip()?;
            }
            members.push((key.to_string(), start..r.position()));
            Ok(())
        })
    })?;
    if let Some((_, p)) = r.take_duplicates().into_iter().find(|(_, p)| {
        // Inside the listed items a duplicate is data, kept for the
        // inventory reader to report; in the envelope it is ambiguity about
        // what was listed at all.
        let item = list.is_some_and(|l| p.starts_with(&format!("/result/{l}/")));
        !item
    }) {
        bail!(
            "the response names {} twice: clients may read either value",
            escape_display(&p)
        );
    }
    if !found {
        bail!("a response with neither result nor error");
    }
    Ok(Result_ {
        bytes,
        members,
        items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::time::Duration;

    /// A scripted server: for each request it receives, the next batch of
    /// lines to hand back.
    struct Script {
        replies: VecDeque<Vec<&'static str>>,
        queue: VecDeque<Vec<u8>>,
        sent: Vec<String>,
    }

    impl Transport for Script {
        fn send(&mut self, message: &[u8], _kind: Outgoing) -> Result<()> {
            let text = String::from_utf8(message.to_vec()).unwrap();
            let is_request = text.contains("\"id\":") && text.contains("\"method\":");
            self.sent.push(text);
            if is_request {
                if let Some(batch) = self.replies.pop_front() {
                    self.queue
                        .extend(batch.into_iter().map(|l| l.as_bytes().to_vec()));
                }
            }
            Ok(())
        }
        fn recv(&mut self, _deadline: Instant) -> Result<Option<Vec<u8>>> {
            Ok(self.queue.pop_front())
        }
        fn close(&mut self) {}
    }

    fn run(replies: Vec<Vec<&'static str>>) -> (Result<Advertised>, Vec<String>) {
        let mut t = Script {
            replies: replies.into(),
            queue: VecDeque::new(),
            sent: Vec::new(),
        };
        let got = Session::new(
            &mut t,
            Instant::now() + Duration::from_secs(5),
            1 << 20,
            crate::capture::identity::GIT_KAMS,
        )
        .capture();
        (got, t.sent)
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;

    #[test]
    fn tools_are_kept_as_sent_across_pages() {
        let (got, sent) = run(vec![
            vec![INIT],
            vec![
                r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"x","description":"y"}],"nextCursor":"p2"}}"#,
            ],
            vec![r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[ {"name":"b"} ]}}"#],
        ]);
        let got = got.unwrap();
        assert_eq!(got.protocol_version, "2025-06-18");
        let tools: Vec<&str> = got
            .tools
            .iter()
            .map(|t| std::str::from_utf8(t).unwrap())
            .collect();
        assert_eq!(
            tools,
            [
                r#"{"name":"a","description":"x","description":"y"}"#,
                r#"{"name":"b"}"#
            ]
        );
        assert_eq!(
            got.server_info.as_deref(),
            Some(&br#"{"name":"s","version":"1"}"#[..])
        );
        assert!(sent[1].contains("notifications/initialized"), "{sent:?}");
        assert!(sent[3].contains(r#""params":{"cursor":"p2"}"#), "{sent:?}");
        assert!(got.prompts.is_none() && got.resources.is_none());
    }

    #[test]
    fn server_requests_are_answered_and_noise_skipped() {
        let (got, sent) = run(vec![
            vec![
                "Server starting on stdio...",
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":"r1","method":"roots/list"}"#,
                r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{}}"#,
                INIT,
            ],
            vec![r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#],
        ]);
        let got = got.unwrap();
        assert!(sent
            .iter()
            .any(|s| s == r#"{"jsonrpc":"2.0","id":"r1","result":{"roots":[]}}"#));
        assert!(sent
            .iter()
            .any(|s| s.starts_with(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601"#)));
        assert!(sent
            .iter()
            .any(|s| s.contains(r#""id":8,"result":{"action":"decline"}"#)));
        let w = got.warnings.join("\n");
        assert!(w.contains("Server starting on stdio"), "{w}");
        assert!(w.contains("sampling/createMessage"), "{w}");
    }

    #[test]
    fn errors_and_ambiguous_envelopes_fail() {
        let (got, _) = run(vec![vec![
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no\u001b[31m"}}"#,
        ]]);
        let e = format!("{:#}", got.unwrap_err());
        assert!(e.contains("error -32600") && e.contains("\\u{1B}"), "{e}");

        let (got, _) = run(vec![
            vec![INIT],
            vec![r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[],"tools":[{"name":"x"}]}}"#],
        ]);
        let e = format!("{:#}", got.unwrap_err());
        assert!(e.contains("/result/tools twice"), "{e}");

        let (got, _) = run(vec![
            vec![INIT],
            vec![r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"a"}}"#],
            vec![r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[],"nextCursor":"a"}}"#],
        ]);
        assert!(format!("{:#}", got.unwrap_err()).contains("twice"));

        let (got, _) = run(vec![vec![INIT]]);
        assert!(format!("{:#}", got.unwrap_err()).contains("ended the session"));
    }

    #[test]
    fn advertised_lists_are_fetched() {
        let (got, _) = run(vec![
            vec![
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{}},"serverInfo":{"name":"s","version":"1"},"instructions":"hi"}}"#,
            ],
            vec![r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#],
            vec![r#"{"jsonrpc":"2.0","id":3,"result":{"prompts":[{"name":"p"}]}}"#],
            vec![r#"{"jsonrpc":"2.0","id":4,"result":{"resources":[{"uri":"a:b","name":"r"}]}}"#],
            vec![r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope"}}"#],
        ]);
        let got = got.unwrap();
        assert_eq!(got.instructions.as_deref(), Some(&b"\"hi\""[..]));
        assert_eq!(got.prompts.unwrap().len(), 1);
        assert_eq!(got.resources.unwrap().len(), 1);
        assert!(got.resource_templates.is_none());
        assert!(got.warnings.iter().any(|w| w.contains("templates")));
        assert_eq!(got.unavailable, ["resources/templates/list"]);
    }

    #[test]
    fn a_refused_optional_list_is_unavailable_and_anything_else_fails() {
        let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{}}}}"#;
        let (got, _) = run(vec![
            vec![init],
            vec![r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t"}]}}"#],
            vec![r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no prompts"}}"#],
            vec![
                r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#,
            ],
            vec![r#"{"jsonrpc":"2.0","id":5,"result":{"resourceTemplates":[]}}"#],
        ]);
        let got = got.unwrap();
        assert_eq!(got.tools.len(), 1);
        assert!(got.prompts.is_none() && got.resources.is_none());
        assert_eq!(got.resource_templates.as_deref(), Some(&[][..]));
        assert_eq!(got.unavailable, ["prompts/list", "resources/list"]);
        let w = got.warnings.join("\n");
        assert!(
            w.contains("resources/list: the server answered with error -32601: Method not found"),
            "{w}"
        );

        // Not a refusal: an ambiguous answer fails the server, as for tools.
        let (got, _) = run(vec![
            vec![init],
            vec![r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#],
            vec![r#"{"jsonrpc":"2.0","id":3,"result":{"prompts":[],"prompts":[{"name":"x"}]}}"#],
        ]);
        assert!(format!("{:#}", got.unwrap_err()).contains("/result/prompts twice"));

        // A refused tools/list fails the server.
        let (got, _) = run(vec![
            vec![init],
            vec![r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#],
        ]);
        assert!(format!("{:#}", got.unwrap_err())
            .contains("tools/list: the server answered with error -32601"));
    }
}
