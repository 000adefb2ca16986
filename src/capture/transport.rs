//! The one thing capture needs from a transport: send a JSON-RPC message,
//! receive the next one before a deadline, and end the session. Stdio
//! (a child process) and HTTP (streamable HTTP, legacy SSE) implement it,
//! so that the protocol in [`super::session`] is written once.

use std::time::Instant;

use anyhow::Result;

/// What a message sent to the server is, for transports that treat them
/// differently (streamable HTTP answers a request with a stream, and
/// anything else with no body at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// A request of ours: an answer is awaited.
    Request,
    /// A notification, or our answer to the server's request: nothing is.
    Other,
}

/// A bidirectional channel of JSON-RPC messages with one server.
///
/// Messages are whole JSON texts as bytes, never parsed here: the session
/// parses them with the strict reader, so that duplicate keys and unknown
/// fields reach the inventory as the server sent them.
pub trait Transport: Send {
    /// Sends one message (a complete JSON text, without a trailing newline),
    /// by the session's deadline at the latest.
    fn send(&mut self, message: &[u8], kind: Outgoing) -> Result<()>;

    /// The next message from the server, waiting until `deadline`.
    /// `Ok(None)`: the server ended the session (closed stdout, ended the
    /// stream). An error past the deadline says what was awaited.
    fn recv(&mut self, deadline: Instant) -> Result<Option<Vec<u8>>>;

    /// Told the protocol version once `initialize` has negotiated it (HTTP
    /// sends it back as `MCP-Protocol-Version` on every later request).
    fn negotiated(&mut self, _protocol_version: &str) {}

    /// Ends the session and everything it started (processes, streams).
    /// Called exactly once, also after errors; must not block for long.
    fn close(&mut self);

    /// Lines the server wrote that were not messages (stdout garbage, its
    /// stderr), for error messages: at most a few KiB, newest last.
    fn diagnostics(&self) -> String {
        String::new()
    }
}
