//! Where an HTTP+SSE session POSTs its messages: the URI reference of the
//! stream's `endpoint` event, resolved against the SSE URL as RFC 3986
//! says, and refused when it names another origin, since every POST
//! carries the configured headers, credentials included.

use anyhow::{anyhow, bail, Result};
use ureq::http::Uri;

use crate::text::escape_display;

/// The HTTP+SSE POST URL: the `endpoint` event's URI reference resolved
/// against the SSE URL (RFC 3986, section 5.2). Another origin is refused,
/// because every POST carries the configured headers, credentials included.
pub(super) fn resolve_endpoint(base: &Uri, reference: &str) -> Result<String> {
    let reference = reference.split('#').next().unwrap_or_default();
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map_or("", |a| a.as_str());
    let base_path = base.path();
    let has_scheme = reference
        .find(':')
        .is_some_and(|i| i > 0 && !reference[..i].contains(['/', '?']));
    let joined = if has_scheme {
        reference.to_owned()
    } else if let Some(rest) = reference.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if reference.is_empty() || reference.starts_with('?') {
        format!("{scheme}://{authority}{base_path}{reference}")
    } else {
        let merged = if reference.starts_with('/') {
            reference.to_owned()
        } else {
            let dir = &base_path[..base_path.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{reference}")
        };
        let (path, query) = match merged.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (merged.as_str(), None),
        };
        let path = remove_dot_segments(path);
        match query {
            Some(query) => format!("{scheme}://{authority}{path}?{query}"),
            None => format!("{scheme}://{authority}{path}"),
        }
    };
    let uri: Uri = joined.parse().map_err(|_| {
        anyhow!(
            "the SSE endpoint event `{}` is not a valid URI reference",
            escape_display(reference)
        )
    })?;
    let (theirs, ours) = (origin(&uri), origin(base));
    if theirs != ours {
        bail!(
            "the SSE endpoint event names another origin ({}://{}:{}) than the server URL; refusing to send the configured headers there",
            escape_display(&theirs.0),
            escape_display(&theirs.1),
            theirs.2
        );
    }
    Ok(joined)
}

/// Scheme, host and port, the way browsers compare origins.
fn origin(uri: &Uri) -> (String, String, u16) {
    let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
    let host = uri.host().unwrap_or_default().to_ascii_lowercase();
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    (scheme, host, port)
}

/// An absolute path without `.` and `..` segments (RFC 3986, section 5.2.4).
fn remove_dot_segments(path: &str) -> String {
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let mut out: Vec<&str> = Vec::new();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {}
            ".." => {
                out.pop();
            }
            other => {
                out.push(other);
                continue;
            }
        }
        // A path ending in `.` or `..` names a directory.
        if last {
            out.push("");
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_references_resolve_against_the_sse_url() {
        let base: Uri = "http://h:8/a/b/sse?x=1".parse().unwrap();
        let cases = [
            ("/m?s=1", "http://h:8/m?s=1"),
            ("m?s=1", "http://h:8/a/b/m?s=1"),
            ("../m", "http://h:8/a/m"),
            ("./", "http://h:8/a/b/"),
            ("../..", "http://h:8/"),
            ("?s=2", "http://h:8/a/b/sse?s=2"),
            ("//h:8/z", "http://h:8/z"),
            ("HTTP://H:8/z", "HTTP://H:8/z"),
        ];
        for (reference, want) in cases {
            assert_eq!(
                resolve_endpoint(&base, reference).unwrap(),
                want,
                "{reference}"
            );
        }
        for reference in ["https://h:8/z", "http://h:9/z", "//evil/z", "http://h/z"] {
            assert!(resolve_endpoint(&base, reference).is_err(), "{reference}");
        }
    }
}
