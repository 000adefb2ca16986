//! Addresses: a credential in a URL's user information or query, and
//! plain http or ws to a host that is not this machine.

use super::secrets::{literal, named_secret, scrub};
use super::Review;
use crate::finding::Severity;

impl Review<'_> {
    pub(super) fn url_in_text(&mut self, text: &str, field: &str, place: &str) {
        for url in text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ',')) {
            let lower = url.to_ascii_lowercase();
            if lower.starts_with("http://") || lower.starts_with("ws://") {
                self.url(url, field, place);
            }
        }
    }

    pub(super) fn url(&mut self, url: &str, field: &str, place: &str) {
        let Some((scheme, rest)) = url.split_once("://") else {
            return;
        };
        let scheme = scheme.to_ascii_lowercase();
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            if let Some((_, password)) = userinfo.split_once(':') {
                if literal(password) && password.len() >= 4 {
                    self.secret(field, place, &[password], "a password in the URL".into());
                }
            }
        }
        let query = rest.split('#').next().unwrap_or("").split_once('?');
        for pair in query.map(|(_, q)| q).unwrap_or("").split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let place = format!("{place}, query parameter {k}");
            match named_secret(k, v) {
                Some(why) => self.secret(field, &place, &[v], why),
                None => self.secrets_in(v, field, &place),
            }
        }
        if scheme != "http" && scheme != "ws" {
            return;
        }
        let host = host_of(authority);
        let shown = show_url(url);
        if host.contains('$') || host.contains('{') || host.contains('%') {
            self.push(
                Severity::Medium,
                field,
                format!(
                    "`{}` talks plain {scheme} to a host given by a variable ({place}): unless it is loopback, anyone on the path can read and change every message",
                    self.server
                ),
                vec![format!("url: {shown}")],
            );
            return;
        }
        if is_loopback(&host) {
            return;
        }
        self.push(
            Severity::High,
            field,
            format!(
                "`{}` talks plain {scheme} to {host} ({place}): anyone on the path can read and change every descriptor, call and result",
                self.server
            ),
            vec![format!("url: {shown}")],
        );
    }
}

fn host_of(authority: &str) -> String {
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(rest) = hostport.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        hostport.split(':').next().unwrap_or(hostport)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// 127.0.0.0/8, `::1` (also as an IPv4-mapped address), `localhost` and
/// names under `.localhost` (RFC 6761).
fn is_loopback(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
        return ip.is_loopback();
    }
    if let Ok(ip) = host.parse::<std::net::Ipv6Addr>() {
        return ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback());
    }
    false
}

/// A URL without its user information and query, which may carry
/// credentials.
fn show_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return scrub(url);
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let tail = &rest[end..];
    let path = tail.split(['?', '#']).next().unwrap_or("");
    let elided = if path.len() < tail.len() { "?…" } else { "" };
    scrub(&format!("{scheme}://{host}{path}{elided}"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{loud, review, H, M};

    #[test]
    fn plain_http_to_a_remote_host() {
        for (url, high) in [
            ("http://example.com/mcp", true),
            ("HTTP://Example.com:8080", true),
            ("ws://10.0.0.1/x", true),
            ("https://example.com/mcp", false),
            ("http://127.0.0.1:8080/mcp", false),
            ("http://127.8.9.1/", false),
            ("http://localhost:3000", false),
            ("http://api.localhost/", false),
            ("http://[::1]:9/", false),
            ("http://[::ffff:127.0.0.1]/", false),
            ("http://user@127.0.0.1/", false),
            ("http://127.0.0.1.evil.com/", true),
            ("http://localhost.evil.com/", true),
        ] {
            let entry = format!(r#"{{"type": "http", "url": "{url}"}}"#);
            let got = loud(&entry);
            assert_eq!(got == vec![(H, "/url".to_string())], high, "{url}: {got:?}");
            assert!(high || got.is_empty(), "{url}: {got:?}");
        }
        let got =
            loud(r#"{"command": "npx", "args": ["mcp-remote@1.0.0", "http://evil.com/sse"]}"#);
        assert_eq!(got, vec![(H, "/args/1".to_string())]);
        let got = loud(r#"{"url": "https://x/mcp?v=1&api_key=Zq9vX3mP0aB7cD1e"}"#);
        assert_eq!(got, vec![(H, "/url".to_string())]);
        let f = review(r#"{"url": "https://u:s3cr3tpass@x/mcp?v=1"}"#);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(!format!("{f:?}").contains("s3cr3tpass"), "{f:?}");
        let got = loud(r#"{"url": "http://${input:host}/mcp"}"#);
        assert_eq!(got, vec![(M, "/url".to_string())]);
        // The Gemini CLI's streamable HTTP address, at its own key.
        let got = loud(r#"{"httpUrl": "http://evil.com/mcp"}"#);
        assert_eq!(got, vec![(H, "/httpUrl".to_string())]);
    }
}
