//! MCP over HTTP: the streamable HTTP transport (protocol 2025-03-26 and
//! later) and the HTTP+SSE transport of 2024-11-05 that it replaced.
//!
//! We speak the transport ourselves instead of using an MCP SDK because the
//! session must see every message exactly as the server sent it (duplicate
//! keys, unknown fields) for the strict parser. So this module moves whole
//! message texts as bytes and never parses JSON: it knows just enough HTTP
//! and server-sent events to find where one message ends. Every read is
//! bounded by the session's deadline and by the message cap, so that a stuck
//! or hostile server can neither hang a capture nor fill memory.
//!
//! This file is the session: connecting, the requests and their headers,
//! which transport the server speaks, and the threads that read its
//! streams. `sse` reads server-sent events, `response` what an answer
//! holds, and `endpoint` resolves where a legacy session POSTs.

mod endpoint;
mod response;
mod sse;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use ureq::http::{self, header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use ureq::{Agent, AsSendBody, Body};

use self::endpoint::resolve_endpoint;
pub(crate) use self::response::{failed, status_error};
use self::response::{media_type, read_message, session_id, too_big};
use self::sse::{HeldBytes, SseReader, LINE_SLACK};
use super::queue::{Empty, Producer, Queue, BUDGET};
use super::transport::{Outgoing, Transport};
use crate::text::escape_display;

/// Which HTTP flavour a config entry asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpKind {
    /// Streamable HTTP, falling back to legacy SSE when the first POST is
    /// answered 400, 404 or 405 (the spec's advice for clients that support
    /// older servers).
    Auto,
    /// Streamable HTTP only (protocol 2025-03-26 and later).
    Streamable,
    /// The HTTP+SSE transport of protocol 2024-11-05 only.
    Sse,
}

/// Limits for one HTTP session.
pub struct HttpOptions {
    /// The largest message accepted, in bytes: a JSON body or the data of one
    /// server-sent event.
    pub max_message: usize,
    /// When everything must be done: connecting, every request, and every
    /// read of a stream, including those on background threads.
    pub deadline: Instant,
}

/// Opens a session with the server at `url`, sending `headers` (name, value) on every request.
///
/// For [`HttpKind::Sse`] this opens the event stream and waits for its
/// `endpoint` event; the other kinds make their first request on the first
/// [`Transport::send`].
pub fn connect(
    url: &str,
    headers: &[(String, String)],
    kind: HttpKind,
    opts: &HttpOptions,
) -> Result<Box<dyn Transport>> {
    let base = http_url(url)
        .ok_or_else(|| anyhow!("the server URL is not an absolute http or https URL"))?;
    // Checked here so that a bad entry fails before any request.
    let headers = header_pairs(headers)?;
    let agent: Agent = Agent::config_builder()
        // Error statuses are answers we report with their body, not failures.
        .http_status_as_error(false)
        // A redirect would carry the configured headers, credentials
        // included, to wherever it points; a redirect is reported instead.
        .max_redirects(0)
        // The session talks to the configured URL only; a proxy is not taken
        // from the environment behind the user's back.
        .proxy(None)
        .user_agent(concat!("git-kams/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut transport = HttpTransport {
        agent,
        base,
        url: url.to_owned(),
        headers,
        mode: Mode::Undecided,
        post_answered: false,
        session_id: None,
        protocol_version: None,
        max_message: opts.max_message,
        deadline: opts.deadline,
        json_answers: VecDeque::new(),
        streams: Queue::new(BUDGET),
        held: HeldBytes {
            total: Arc::new(AtomicUsize::new(0)),
            limit: opts.max_message.saturating_add(2 * LINE_SLACK),
        },
        ignored_streams: 0,
    };
    match kind {
        HttpKind::Auto => {}
        HttpKind::Streamable => transport.mode = Mode::Streamable,
        HttpKind::Sse => {
            let post_url = transport.open_legacy()?;
            transport.mode = Mode::Legacy { post_url };
        }
    }
    Ok(Box::new(transport))
}

/// `url` when it is an absolute http or https URL with a host.
pub(crate) fn http_url(url: &str) -> Option<Uri> {
    url.parse()
        .ok()
        .filter(|u: &Uri| matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some())
}

/// Configured headers as HTTP headers. An error names the header but never
/// shows its value, which is often a token.
pub(crate) fn header_pairs(headers: &[(String, String)]) -> Result<Vec<(HeaderName, HeaderValue)>> {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = escape_display(name);
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| anyhow!("header `{shown}`: not a valid HTTP header name"))?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                anyhow!("header `{shown}`: its value is not a valid HTTP header value")
            })?;
            Ok((name, value))
        })
        .collect()
}

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";
pub(super) const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// How long `close` gives the DELETE that ends a session: long enough for a
/// server nearby, short enough that closing never holds up the run.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// Event streams open at once (a thread each). A server needs one per
/// request in flight, and capture has one request in flight at a time; a
/// server that leaves its streams open past their response (the spec says
/// it should close them) gets room for a capture of many pages, and one
/// that opens stream after stream is refused. What the streams hold is
/// bounded together ([`HeldBytes`]), not per stream.
const MAX_STREAMS: usize = 32;

/// Which transport the session settled on.
enum Mode {
    /// `Auto` before its first POST.
    Undecided,
    Streamable,
    /// HTTP+SSE: messages are POSTed to the URL the `endpoint` event named.
    Legacy {
        post_url: String,
    },
}

/// What the stream threads hand to `recv`. A stream that ends says
/// nothing: its thread's [`Producer`] is dropped.
enum Incoming {
    Message(Vec<u8>),
    /// The stream broke (timeout, a message over the cap, a reset).
    Failed(anyhow::Error),
}

/// What a request carries: one JSON message (a POST), or nothing (the
/// GET of an event stream, the DELETE that ends a session).
#[derive(Clone, Copy, PartialEq, Eq)]
enum RequestBody {
    Json,
    Empty,
}

/// One session with an MCP server over HTTP.
struct HttpTransport {
    /// One agent per session, so that `close` can shut down exactly this
    /// session's connections.
    agent: Agent,
    base: Uri,
    url: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    mode: Mode,
    /// Whether a streamable POST was answered: the session id comes with the
    /// answer to the first one (initialize).
    post_answered: bool,
    session_id: Option<HeaderValue>,
    protocol_version: Option<String>,
    max_message: usize,
    deadline: Instant,
    /// Messages that came as JSON bodies of POST answers (one at most per
    /// request, and requests go one at a time).
    json_answers: VecDeque<Vec<u8>>,
    /// Messages from the event streams, bounded in bytes: a stream thread
    /// waits while it is full. One producer per open stream.
    streams: Queue<Incoming>,
    /// Unfinished events of all the streams.
    held: HeldBytes,
    /// Bodies not read: answers to a POST of a notification or a response,
    /// which the spec has answered 202 with no body.
    ignored_streams: usize,
}

impl Transport for HttpTransport {
    fn send(&mut self, message: &[u8], kind: Outgoing) -> Result<()> {
        match &self.mode {
            Mode::Streamable => {
                let response = self.post(
                    &self.url,
                    message,
                    Some(ACCEPT_BOTH),
                    "POST to the MCP endpoint",
                )?;
                self.take_streamable(response, kind)
            }
            Mode::Legacy { post_url } => {
                let post_url = post_url.clone();
                self.send_legacy(&post_url, message)
            }
            Mode::Undecided => {
                let response = self.post(
                    &self.url,
                    message,
                    Some(ACCEPT_BOTH),
                    "POST to the MCP endpoint",
                )?;
                let status = response.status();
                // The statuses with which a server of the old transport
                // refuses a POST to its SSE URL (spec, backwards compatibility).
                if matches!(status.as_u16(), 400 | 404 | 405) {
                    let refused = status_error("the MCP endpoint", response);
                    let post_url = self.open_legacy().map_err(|e| {
                        anyhow!("{refused:#}; the legacy HTTP+SSE transport failed too: {e:#}")
                    })?;
                    self.mode = Mode::Legacy {
                        post_url: post_url.clone(),
                    };
                    return self.send_legacy(&post_url, message);
                }
                self.mode = Mode::Streamable;
                self.take_streamable(response, kind)
            }
        }
    }

    fn recv(&mut self, deadline: Instant) -> Result<Option<Vec<u8>>> {
        if let Some(message) = self.json_answers.pop_front() {
            return Ok(Some(message));
        }
        match self.streams.pop(deadline.min(self.deadline)) {
            Ok(Incoming::Message(message)) => Ok(Some(message)),
            Ok(Incoming::Failed(e)) => Err(e),
            Err(Empty::Ended) => Ok(None),
            Err(Empty::Timeout) => bail!(
                "no message from the server before the deadline ({})",
                self.flavour()
            ),
        }
    }

    fn negotiated(&mut self, protocol_version: &str) {
        self.protocol_version = Some(protocol_version.to_owned());
    }

    fn close(&mut self) {
        if matches!(self.mode, Mode::Streamable) && self.session_id.is_some() {
            if let Ok(request) = self
                .request(Method::DELETE, &self.url, None, RequestBody::Empty)
                .and_then(|b| Ok(b.body(())?))
            {
                // The spec lets a server refuse (405), and a server that is
                // gone has ended the session anyway: nothing to report.
                let _ = self.run(request, CLOSE_TIMEOUT);
            }
        }
        // A stream thread waiting for room in the queue ends at once.
        self.streams.close();
        // Closes every connection of this session, also those the stream
        // threads are blocked reading, so the threads end now and not at the
        // deadline.
        self.agent.clone().shutdown();
    }

    fn diagnostics(&self) -> String {
        if self.ignored_streams == 0 {
            return String::new();
        }
        format!(
            "the server answered {} notification or response POST{} with a body, which was not read (the spec has it answer 202 with none)",
            self.ignored_streams,
            if self.ignored_streams == 1 { "" } else { "s" }
        )
    }
}

impl HttpTransport {
    /// The transport's name for messages.
    fn flavour(&self) -> &'static str {
        match self.mode {
            Mode::Legacy { .. } => "HTTP+SSE",
            _ => "streamable HTTP",
        }
    }

    /// Time left before the deadline, or an error naming what could not start.
    fn remaining(&self, what: &str) -> Result<Duration> {
        match self.deadline.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => Ok(left),
            _ => bail!("{what}: the deadline passed before it could start"),
        }
    }

    /// A request with the configured headers and the session's own. Ours
    /// replace configured ones of the same name, since the transport depends
    /// on them.
    fn request(
        &self,
        method: Method,
        url: &str,
        accept: Option<&'static str>,
        body: RequestBody,
    ) -> Result<http::request::Builder> {
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            headers.append(name.clone(), value.clone());
        }
        if let Some(accept) = accept {
            headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
        }
        if body == RequestBody::Json {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        if let Some(id) = &self.session_id {
            headers.insert(HeaderName::from_static(SESSION_ID), id.clone());
        }
        if let Some(version) = &self.protocol_version {
            let value = HeaderValue::from_str(version).map_err(|_| {
                anyhow!(
                    "the negotiated protocol version `{}` cannot be sent as an HTTP header",
                    escape_display(version)
                )
            })?;
            headers.insert(HeaderName::from_static(PROTOCOL_VERSION), value);
        }
        let mut builder = http::Request::builder().method(method).uri(url);
        if let Some(slot) = builder.headers_mut() {
            *slot = headers;
        }
        Ok(builder)
    }

    /// Runs a request, the whole of it (body reads included) bounded by `timeout`.
    fn run(
        &self,
        request: http::Request<impl AsSendBody>,
        timeout: Duration,
    ) -> Result<http::Response<Body>, ureq::Error> {
        let request = self
            .agent
            .configure_request(request)
            .timeout_global(Some(timeout))
            .build();
        self.agent.run(request)
    }

    /// POSTs one message, bounded by the session deadline.
    fn post(
        &self,
        url: &str,
        message: &[u8],
        accept: Option<&'static str>,
        what: &str,
    ) -> Result<http::Response<Body>> {
        let timeout = self.remaining(what)?;
        let request = self
            .request(Method::POST, url, accept, RequestBody::Json)?
            .body(message)?;
        self.run(request, timeout).map_err(|e| failed(what, e))
    }

    /// Takes the answer to a streamable HTTP POST: nothing (202), one JSON
    /// message, or an event stream read on a thread. Only a request's
    /// answer is read: a body in answer to a notification or a response
    /// (which the spec answers 202, without one) is dropped unread, so a
    /// server cannot have each of our answers open another stream.
    fn take_streamable(&mut self, response: http::Response<Body>, kind: Outgoing) -> Result<()> {
        let first = !self.post_answered;
        self.post_answered = true;
        let status = response.status();
        if !status.is_success() {
            let ended = status == StatusCode::NOT_FOUND && self.session_id.is_some();
            let e = status_error("the MCP endpoint", response);
            // A 404 to a request with a session id is how the spec says the
            // server ended the session.
            return Err(if ended {
                e.context("the server ended the session")
            } else {
                e
            });
        }
        if first {
            self.session_id = session_id(&response)?;
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Ok(());
        }
        if kind == Outgoing::Other {
            if media_type(&response) == EVENT_STREAM {
                self.ignored_streams += 1;
            }
            return Ok(());
        }
        match media_type(&response).as_str() {
            "application/json" => {
                let body = response.into_body();
                if body.content_length().is_some_and(|n| n > self.max_message as u64) {
                    bail!(too_big(self.max_message));
                }
                let message = read_message(body.into_reader(), self.max_message)?;
                // Some servers answer a notification with an empty 200 instead
                // of 202: there is no message in it.
                if !message.iter().all(u8::is_ascii_whitespace) {
                    self.json_answers.push_back(message);
                }
                Ok(())
            }
            EVENT_STREAM => self.spawn_stream(
                SseReader::new(
                    BufReader::new(response.into_body().into_reader()),
                    self.max_message,
                )
                .sharing(self.held.clone()),
            ),
            other => bail!(
                "the MCP endpoint answered HTTP {status} with content type `{}`, expected application/json or text/event-stream",
                escape_display(other)
            ),
        }
    }

    /// Opens the HTTP+SSE event stream and returns the URL its `endpoint`
    /// event names; the stream then goes on on a thread.
    fn open_legacy(&mut self) -> Result<String> {
        let what = "GET of the SSE stream";
        let timeout = self.remaining(what)?;
        let request = self
            .request(
                Method::GET,
                &self.url,
                Some(EVENT_STREAM),
                RequestBody::Empty,
            )?
            .body(())?;
        let response = self.run(request, timeout).map_err(|e| failed(what, e))?;
        if !response.status().is_success() {
            return Err(status_error("the SSE endpoint", response));
        }
        let media = media_type(&response);
        if media != EVENT_STREAM {
            bail!(
                "the SSE endpoint answered with content type `{}`, expected text/event-stream",
                escape_display(&media)
            );
        }
        let mut events = SseReader::new(
            BufReader::new(response.into_body().into_reader()),
            self.max_message,
        )
        .sharing(self.held.clone());
        let endpoint = match events.next_event()? {
            Some(event) if event.kind == "endpoint" => event.data,
            Some(event) => bail!(
                "the SSE stream's first event is `{}`, expected `endpoint`",
                escape_display(&event.kind)
            ),
            None => bail!("the SSE stream ended before its endpoint event"),
        };
        let endpoint = String::from_utf8(endpoint)
            .map_err(|_| anyhow!("the SSE endpoint event is not UTF-8"))?;
        let post_url = resolve_endpoint(&self.base, endpoint.trim())?;
        self.spawn_stream(events)?;
        Ok(post_url)
    }

    /// POSTs one message to the HTTP+SSE message endpoint; the answer comes
    /// on the event stream.
    fn send_legacy(&mut self, post_url: &str, message: &[u8]) -> Result<()> {
        let what = "POST to the SSE message endpoint";
        let response = self.post(post_url, message, None, what)?;
        if !response.status().is_success() {
            return Err(status_error("the SSE message endpoint", response));
        }
        Ok(())
    }

    /// Reads an event stream on its own thread, each `message` event into
    /// the queue; at most [`MAX_STREAMS`] at once.
    fn spawn_stream<R: BufRead + Send + 'static>(&mut self, events: SseReader<R>) -> Result<()> {
        if self.streams.producers() >= MAX_STREAMS {
            bail!(
                "the server keeps more than {MAX_STREAMS} event streams open at once (capture sends one request at a time)"
            );
        }
        let tx = self.streams.producer();
        thread::Builder::new()
            .name("kams-mcp-sse".to_owned())
            .spawn(move || pump(events, tx))
            .context("cannot start a thread to read the server's event stream")?;
        Ok(())
    }
}

/// The body of a stream thread: every `message` event to `tx`, then a
/// failure if the stream broke. It waits while the queue is full, and
/// ends when the transport closed it.
fn pump<R: BufRead>(mut events: SseReader<R>, tx: Producer<Incoming>) {
    loop {
        match events.next_event() {
            Ok(Some(event)) if event.kind == "message" => {
                let size = event.data.len();
                if !tx.push(Incoming::Message(event.data), size) {
                    return; // the transport is gone: nobody is listening
                }
            }
            // Other events (a later `endpoint`, pings) carry no message.
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(e) => {
                tx.push(Incoming::Failed(e), 0);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{self, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc, Mutex};

    /// One request as the test server saw it.
    #[derive(Clone, Debug)]
    struct Seen {
        method: String,
        target: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    }

    impl Seen {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }

        fn body_has(&self, needle: &str) -> bool {
            String::from_utf8_lossy(&self.body).contains(needle)
        }
    }

    /// A scripted HTTP/1.1 server on 127.0.0.1: a thread per connection,
    /// one request per connection, answered by `handler` writing to the
    /// socket. It stops when dropped, and after 30 s whatever happens.
    struct Server {
        base: String,
        seen: Arc<Mutex<Vec<Seen>>>,
        stop: Arc<AtomicBool>,
    }

    impl Server {
        fn start(handler: impl Fn(&Seen, TcpStream) + Send + Sync + 'static) -> Server {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            listener.set_nonblocking(true).unwrap();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let stop = Arc::new(AtomicBool::new(false));
            let handler = Arc::new(handler);
            let (seen2, stop2) = (seen.clone(), stop.clone());
            thread::spawn(move || {
                let started = Instant::now();
                while !stop2.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(30) {
                    match listener.accept() {
                        Ok((mut stream, _)) => {
                            let (seen, handler) = (seen2.clone(), handler.clone());
                            thread::spawn(move || {
                                stream.set_nonblocking(false).unwrap();
                                stream
                                    .set_read_timeout(Some(Duration::from_secs(10)))
                                    .unwrap();
                                stream.set_nodelay(true).unwrap();
                                if let Some(request) = read_request(&mut stream) {
                                    seen.lock().unwrap().push(request.clone());
                                    handler(&request, stream);
                                }
                            });
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            thread::sleep(Duration::from_millis(5))
                        }
                        Err(_) => break,
                    }
                }
            });
            Server { base, seen, stop }
        }

        fn url(&self, path: &str) -> String {
            format!("{}{path}", self.base)
        }

        fn seen(&self) -> Vec<Seen> {
            self.seen.lock().unwrap().clone()
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
        }
    }

    fn read_request(stream: &mut TcpStream) -> Option<Seen> {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).ok()? == 0 {
                return None;
            }
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).ok()?;
        let mut lines = head.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let method = first.next()?.to_owned();
        let target = first.next()?.to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; length];
        stream.read_exact(&mut body).ok()?;
        Some(Seen {
            method,
            target,
            headers,
            body,
        })
    }

    /// A whole answer with a Content-Length; the connection then closes.
    fn respond(mut stream: TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
        let mut head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
    }

    /// The head of an answer whose body runs until the connection closes.
    fn open_body(stream: &mut TcpStream, content_type: &str) {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).unwrap();
    }

    /// Writes in small pieces, so that lines and events arrive split.
    fn dribble(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
        for piece in bytes.chunks(5) {
            stream.write_all(piece)?;
            stream.flush()?;
        }
        Ok(())
    }

    fn options(max_message: usize, deadline: Duration) -> HttpOptions {
        HttpOptions {
            max_message,
            deadline: Instant::now() + deadline,
        }
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    fn api_key() -> Vec<(String, String)> {
        vec![("X-Api-Key".to_owned(), "secret-value".to_owned())]
    }

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

    #[test]
    fn streamable_json_echoes_session_id_and_protocol_version() {
        // Duplicate keys and unknown fields must reach the session verbatim.
        const INIT_RESULT: &[u8] =
            br#"{"jsonrpc":"2.0","id":1,"result":{"k":1,"k":2,"extra":true}}"#;
        const LIST_RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
        let server = Server::start(|req, stream| {
            if req.method == "DELETE" {
                respond(stream, "200 OK", &[], b"");
            } else if req.body_has("\"initialize\"") {
                let headers = [
                    ("Content-Type", "application/json; charset=utf-8"),
                    ("Mcp-Session-Id", "sess-42"),
                ];
                respond(stream, "200 OK", &headers, INIT_RESULT);
            } else if req.body_has("notifications/initialized") {
                respond(stream, "202 Accepted", &[], b"");
            } else {
                respond(
                    stream,
                    "200 OK",
                    &[("Content-Type", "application/json")],
                    LIST_RESULT,
                );
            }
        });
        let opts = options(1 << 16, Duration::from_secs(10));
        let mut t = connect(&server.url("/mcp"), &api_key(), HttpKind::Streamable, &opts).unwrap();
        t.send(INIT, Outgoing::Request).unwrap();
        assert_eq!(t.recv(soon()).unwrap().unwrap(), INIT_RESULT);
        t.negotiated("2025-11-25");
        t.send(INITIALIZED, Outgoing::Other).unwrap();
        t.send(LIST, Outgoing::Request).unwrap();
        assert_eq!(t.recv(soon()).unwrap().unwrap(), LIST_RESULT);
        assert_eq!(
            t.recv(soon()).unwrap(),
            None,
            "no stream is open, no reply can come"
        );
        t.close();

        let posts: Vec<Seen> = server
            .seen()
            .into_iter()
            .filter(|s| s.method == "POST")
            .collect();
        assert_eq!(posts.len(), 3);
        assert_eq!(posts[0].body, INIT);
        assert_eq!(posts[2].body, LIST);
        for post in &posts {
            assert_eq!(post.target, "/mcp");
            assert_eq!(post.header("accept"), Some(ACCEPT_BOTH));
            assert_eq!(post.header("content-type"), Some("application/json"));
            assert_eq!(post.header("x-api-key"), Some("secret-value"));
        }
        assert_eq!(posts[0].header("mcp-session-id"), None);
        assert_eq!(posts[0].header("mcp-protocol-version"), None);
        for post in &posts[1..] {
            assert_eq!(post.header("mcp-session-id"), Some("sess-42"));
            assert_eq!(post.header("mcp-protocol-version"), Some("2025-11-25"));
        }
    }

    #[test]
    fn streamable_sse_delivers_server_request_then_response_in_order() {
        let server = Server::start(|req, mut stream| {
            if req.method != "POST" {
                return respond(stream, "405 Method Not Allowed", &[], b"");
            }
            open_body(&mut stream, "text/event-stream");
            let events = concat!(
                "id: p1\ndata:\n\n",
                ": keep-alive\n\n",
                "event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n\n",
                "event: ping\ndata: not a message\n\n",
                "retry: 1000\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata:\"id\":7,\"result\":{}}\r\n\r\n",
            );
            let _ = dribble(&mut stream, events.as_bytes());
        });
        let opts = options(1 << 16, Duration::from_secs(10));
        let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
        t.send(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
            Outgoing::Request,
        )
        .unwrap();
        assert_eq!(
            t.recv(soon()).unwrap().unwrap(),
            br#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#
        );
        assert_eq!(
            t.recv(soon()).unwrap().unwrap(),
            b"{\"jsonrpc\":\"2.0\",\n\"id\":7,\"result\":{}}"
        );
        assert_eq!(t.recv(soon()).unwrap(), None, "the only stream has ended");
        t.close();
        assert!(
            server.seen().iter().all(|s| s.method != "DELETE"),
            "no session id, so no DELETE"
        );
    }

    /// A server of the 2024-11-05 transport at /mcp/sse whose endpoint event
    /// is `endpoint`, refusing POSTs to the SSE URL with `post_status`. Each
    /// message POSTed is answered on the stream wrapped in a result.
    fn legacy_server(post_status: &'static str, endpoint: &'static str) -> Server {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let tx = Mutex::new(tx);
        let rx = Mutex::new(Some(rx));
        Server::start(
            move |req, mut stream| match (req.method.as_str(), req.target.as_str()) {
                ("POST", "/mcp/sse") => respond(stream, post_status, &[], b"wrong transport"),
                ("GET", "/mcp/sse") => {
                    let Some(rx) = rx.lock().unwrap().take() else {
                        return respond(stream, "409 Conflict", &[], b"one stream only");
                    };
                    open_body(&mut stream, "text/event-stream");
                    let hello = format!(": hello\n\nevent: endpoint\ndata: {endpoint}\n\n");
                    if dribble(&mut stream, hello.as_bytes()).is_err() {
                        return;
                    }
                    while let Ok(body) = rx.recv_timeout(Duration::from_secs(5)) {
                        let body = String::from_utf8(body).unwrap();
                        let event = format!("event: message\ndata: {{\"result\":{body}}}\n\n");
                        if dribble(&mut stream, event.as_bytes()).is_err() {
                            break;
                        }
                    }
                }
                ("POST", _) => {
                    tx.lock().unwrap().send(req.body.clone()).unwrap();
                    respond(stream, "202 Accepted", &[], b"Accepted");
                }
                _ => respond(
                    stream,
                    "500 Internal Server Error",
                    &[],
                    b"unexpected request",
                ),
            },
        )
    }

    #[test]
    fn auto_falls_back_to_legacy_sse() {
        for status in ["400 Bad Request", "404 Not Found", "405 Method Not Allowed"] {
            let server = legacy_server(status, "messages?sessionId=abc");
            let opts = options(1 << 16, Duration::from_secs(10));
            let mut t =
                connect(&server.url("/mcp/sse"), &api_key(), HttpKind::Auto, &opts).unwrap();
            t.send(INIT, Outgoing::Request).unwrap();
            let expected = format!("{{\"result\":{}}}", String::from_utf8_lossy(INIT));
            assert_eq!(
                t.recv(soon()).unwrap().unwrap(),
                expected.as_bytes(),
                "{status}"
            );
            t.negotiated("2024-11-05");
            t.send(LIST, Outgoing::Request).unwrap();
            let expected = format!("{{\"result\":{}}}", String::from_utf8_lossy(LIST));
            assert_eq!(
                t.recv(soon()).unwrap().unwrap(),
                expected.as_bytes(),
                "{status}"
            );
            t.close();

            let seen = server.seen();
            let route: Vec<(&str, &str)> = seen
                .iter()
                .map(|s| (s.method.as_str(), s.target.as_str()))
                .collect();
            assert_eq!(
                route,
                [
                    ("POST", "/mcp/sse"),
                    ("GET", "/mcp/sse"),
                    ("POST", "/mcp/messages?sessionId=abc"),
                    ("POST", "/mcp/messages?sessionId=abc"),
                ],
                "{status}"
            );
            assert_eq!(seen[0].body, INIT);
            assert_eq!(seen[2].body, INIT, "the refused message is sent again");
            assert_eq!(seen[1].header("accept"), Some("text/event-stream"));
            assert!(seen
                .iter()
                .all(|s| s.header("x-api-key") == Some("secret-value")));
            assert_eq!(seen[3].header("mcp-protocol-version"), Some("2024-11-05"));
        }
    }

    #[test]
    fn legacy_sse_refuses_an_endpoint_on_another_origin() {
        let server = legacy_server("405 Method Not Allowed", "http://127.0.0.2:9/messages");
        let opts = options(1 << 16, Duration::from_secs(10));
        let e = connect(&server.url("/mcp/sse"), &api_key(), HttpKind::Sse, &opts)
            .err()
            .expect("another origin must be refused");
        let e = format!("{e:#}");
        assert!(e.contains("another origin (http://127.0.0.2:9)"), "{e}");
    }

    #[test]
    fn oversized_messages_are_errors() {
        let server = Server::start(|req, mut stream| {
            if req.body_has("declared") {
                let body = vec![b' '; 1000];
                respond(
                    stream,
                    "200 OK",
                    &[("Content-Type", "application/json")],
                    &body,
                );
            } else if req.body_has("undeclared") {
                open_body(&mut stream, "application/json");
                let _ = stream.write_all(&[b' '; 1000]);
            } else {
                open_body(&mut stream, "text/event-stream");
                let event = format!("data: \"{}\"\n\n", "x".repeat(100));
                let _ = stream.write_all(event.as_bytes());
            }
        });
        let opts = options(64, Duration::from_secs(10));
        for case in ["declared", "undeclared"] {
            let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
            let e = t
                .send(format!("\"{case}\"").as_bytes(), Outgoing::Request)
                .unwrap_err();
            assert!(
                format!("{e:#}").contains("response over 64 bytes"),
                "{case}: {e:#}"
            );
            t.close();
        }
        let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
        t.send(b"\"sse\"", Outgoing::Request).unwrap();
        let e = t.recv(soon()).unwrap_err();
        assert!(format!("{e:#}").contains("response over 64 bytes"), "{e:#}");
        t.close();
    }

    #[test]
    fn a_silent_server_fails_at_the_deadline() {
        let server = Server::start(|req, mut stream| {
            if req.body_has("stream") {
                open_body(&mut stream, "text/event-stream");
            }
            // Never a message, nor an end, for longer than any deadline here.
            thread::sleep(Duration::from_secs(3));
        });

        // The session deadline ends the stream thread's read.
        let opts = options(1 << 16, Duration::from_millis(300));
        let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
        let start = Instant::now();
        t.send(b"\"stream\"", Outgoing::Request).unwrap();
        let e = t.recv(soon()).unwrap_err();
        assert!(start.elapsed() < Duration::from_millis(2500), "{e:#}");
        assert!(format!("{e:#}").contains("deadline"), "{e:#}");
        t.close();

        // The deadline given to recv.
        let opts = options(1 << 16, Duration::from_secs(10));
        let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
        t.send(b"\"stream\"", Outgoing::Request).unwrap();
        let start = Instant::now();
        let e = t
            .recv(Instant::now() + Duration::from_millis(300))
            .unwrap_err();
        assert!(start.elapsed() < Duration::from_millis(2500), "{e:#}");
        assert!(
            format!("{e:#}").contains("no message from the server"),
            "{e:#}"
        );
        t.close();

        // A POST that is never answered.
        let opts = options(1 << 16, Duration::from_millis(300));
        let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
        let start = Instant::now();
        let e = t.send(b"\"silence\"", Outgoing::Request).unwrap_err();
        assert!(start.elapsed() < Duration::from_millis(2500), "{e:#}");
        assert!(
            format!("{e:#}").contains("no answer before the deadline"),
            "{e:#}"
        );
        t.close();
    }

    #[test]
    fn an_error_status_names_the_status_and_an_escaped_snippet() {
        let server = Server::start(|_, stream| {
            let mut body = b"boom\x1b[31m\r\nline two ".to_vec();
            body.extend(std::iter::repeat_n(b'z', 300));
            respond(
                stream,
                "500 Internal Server Error",
                &[("Content-Type", "text/plain")],
                &body,
            );
        });
        let opts = options(1 << 16, Duration::from_secs(10));
        for kind in [HttpKind::Streamable, HttpKind::Auto] {
            let mut t = connect(&server.url("/mcp"), &api_key(), kind, &opts).unwrap();
            let e = format!("{:#}", t.send(INIT, Outgoing::Request).unwrap_err());
            t.close();
            assert!(e.contains("HTTP 500 Internal Server Error"), "{e}");
            assert!(e.contains(r"boom\u{1B}[31m\u{D}\u{A}line two zzz"), "{e}");
            assert!(!e.contains('\x1b') && !e.contains('\n'), "{e}");
            let zs = e.matches('z').count();
            assert!(
                zs > 100 && zs < 200,
                "the snippet is cut at 200 characters: {e}"
            );
            assert!(
                !e.contains("secret-value"),
                "header values are never shown: {e}"
            );
        }
        assert!(
            server.seen().iter().all(|s| s.method == "POST"),
            "500 is no reason to try the legacy transport"
        );
    }

    #[test]
    fn close_deletes_the_session_and_ends_the_streams() {
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let ended_tx = Mutex::new(ended_tx);
        let server = Server::start(move |req, mut stream| {
            if req.method == "DELETE" {
                respond(stream, "200 OK", &[], b"");
            } else if req.body_has("\"initialize\"") {
                let headers = [
                    ("Content-Type", "application/json"),
                    ("Mcp-Session-Id", "sess-7"),
                ];
                respond(
                    stream,
                    "200 OK",
                    &headers,
                    br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                );
            } else {
                // A stream that stays open until the client goes away.
                open_body(&mut stream, "text/event-stream");
                let mut byte = [0u8; 1];
                if matches!(stream.read(&mut byte), Ok(0)) {
                    ended_tx.lock().unwrap().send(()).unwrap();
                }
            }
        });
        let opts = options(1 << 16, Duration::from_secs(20));
        let mut t = connect(&server.url("/mcp"), &[], HttpKind::Streamable, &opts).unwrap();
        t.send(INIT, Outgoing::Request).unwrap();
        t.recv(soon()).unwrap().unwrap();
        t.negotiated("2025-11-25");
        t.send(LIST, Outgoing::Request).unwrap();
        let start = Instant::now();
        t.close();
        assert!(start.elapsed() < Duration::from_secs(3));
        ended_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("close ends the open stream");

        let deletes: Vec<Seen> = server
            .seen()
            .into_iter()
            .filter(|s| s.method == "DELETE")
            .collect();
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].target, "/mcp");
        assert_eq!(deletes[0].header("mcp-session-id"), Some("sess-7"));
        assert_eq!(
            deletes[0].header("mcp-protocol-version"),
            Some("2025-11-25")
        );
    }

    #[test]
    fn bad_configuration_is_refused_without_showing_values() {
        let opts = options(1 << 16, Duration::from_secs(10));
        let e = connect("ftp://h/x", &[], HttpKind::Auto, &opts)
            .err()
            .unwrap();
        assert!(e.to_string().contains("not an absolute http or https URL"));
        let headers = vec![("Authorization".to_owned(), "Bearer tok\nen".to_owned())];
        let e = connect("http://h/x", &headers, HttpKind::Auto, &opts)
            .err()
            .unwrap();
        let e = e.to_string();
        assert!(e.contains("Authorization") && !e.contains("tok"), "{e}");
    }
}
