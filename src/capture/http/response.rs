//! What we make of a server's answer without trusting it: a body read
//! whole but never past the message cap, errors that name what failed and
//! show the server's own text escaped, and the headers the session needs
//! (the media type, the session id) checked before use.

use std::io::{self, Read};

use anyhow::{anyhow, bail, Result};
use ureq::http::{self, header, HeaderValue};
use ureq::Body;

use super::SESSION_ID;
use crate::text::escape_display;

/// How many characters of an error body a message shows.
const SNIPPET_CHARS: usize = 200;

/// The error for a request that got no answer.
pub(crate) fn failed(what: &str, e: ureq::Error) -> anyhow::Error {
    match e {
        ureq::Error::Timeout(_) => anyhow!("{what}: no answer before the deadline"),
        e => anyhow!("{what}: {e}"),
    }
}

/// The error for a read of a body that broke off.
pub(super) fn read_failed(what: &str, e: io::Error) -> anyhow::Error {
    failed(what, ureq::Error::from(e))
}

/// The error for a message past the cap.
pub(super) fn too_big(max_message: usize) -> String {
    format!("response over {max_message} bytes (cap on one message)")
}

/// Reads one whole message, never holding more than the cap and one byte.
pub(super) fn read_message(reader: impl Read, max_message: usize) -> Result<Vec<u8>> {
    let mut message = Vec::new();
    reader
        .take((max_message as u64).saturating_add(1))
        .read_to_end(&mut message)
        .map_err(|e| read_failed("reading the response body", e))?;
    if message.len() > max_message {
        bail!(too_big(max_message));
    }
    Ok(message)
}

/// The error for a non-2xx answer: the status and the start of the body,
/// escaped, since the body is the server's text and may hold control
/// characters meant for the terminal.
pub(crate) fn status_error(what: &str, response: http::Response<Body>) -> anyhow::Error {
    let status = response.status();
    let mut raw = Vec::new();
    // Four bytes a character at most. A body that breaks off is still worth
    // showing as far as it came, so a read error only ends the snippet.
    let _ = response
        .into_body()
        .into_reader()
        .take(SNIPPET_CHARS as u64 * 4)
        .read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let snippet: String = text.chars().take(SNIPPET_CHARS).collect();
    let snippet = snippet.trim_end();
    if snippet.is_empty() {
        anyhow!("{what} answered HTTP {status} with an empty body")
    } else {
        anyhow!("{what} answered HTTP {status}: {}", escape_display(snippet))
    }
}

/// The media type of a response, lowercase, without parameters.
pub(super) fn media_type(response: &http::Response<Body>) -> String {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The session id the server assigned, checked against the spec's
/// alphabet (visible ASCII) since it is sent back on every request.
pub(super) fn session_id(response: &http::Response<Body>) -> Result<Option<HeaderValue>> {
    match response.headers().get(SESSION_ID) {
        None => Ok(None),
        Some(id) if !id.is_empty() && id.as_bytes().iter().all(|b| (0x21..=0x7E).contains(b)) => {
            Ok(Some(id.clone()))
        }
        Some(_) => bail!("the server's Mcp-Session-Id has characters outside visible ASCII"),
    }
}
