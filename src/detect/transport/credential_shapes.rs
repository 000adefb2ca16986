//! Credentials recognised by their shape alone: documented token prefixes
//! (GitHub, GitLab, Stripe, Slack, AWS...), JSON Web Tokens, private keys,
//! and long random-looking strings.

use std::ops::Range;

use super::secrets::is_placeholder;

/// A credential recognised by its shape, anywhere in `s`: where it is, and
/// what kind it is.
pub(super) fn shape(s: &str) -> Option<(Range<usize>, String)> {
    if s.contains("-----BEGIN") && s.contains("PRIVATE KEY") {
        let start = s.find("-----BEGIN").unwrap_or(0);
        return Some((start..s.len(), "a private key".into()));
    }
    let is_tok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    let mut start = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        match (start, is_tok(c) && i < s.len()) {
            (None, true) => start = Some(i),
            (Some(b), false) => {
                start = None;
                if let Some(hit) = token_shape(&s[b..i]) {
                    return Some((b..i, hit.to_string()));
                }
                // Dots join a JWT's parts, but also glue a prefix onto a
                // token (`key.ghp_...`): try the pieces too.
                let mut at = b;
                for piece in s[b..i].split('.') {
                    if let Some(hit) = token_shape(piece) {
                        return Some((at..at + piece.len(), hit.to_string()));
                    }
                    at += piece.len() + 1;
                }
            }
            _ => {}
        }
    }
    None
}

/// The kind of credential a token is, by its documented prefix or by
/// looking random.
fn token_shape(t: &str) -> Option<&'static str> {
    let t = t.trim_matches(['.', '-']);
    let body = |prefix: &str, min: usize, ok: fn(char) -> bool| -> bool {
        t.strip_prefix(prefix)
            .is_some_and(|b| b.len() >= min && b.chars().all(ok) && !is_placeholder(b))
    };
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let dashed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let upper = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        if body(p, 30, alnum) {
            return Some("a GitHub token");
        }
    }
    if body("github_pat_", 22, word) {
        return Some("a GitHub fine-grained token");
    }
    if body("glpat-", 20, dashed) {
        return Some("a GitLab token");
    }
    for p in ["sk_live_", "rk_live_", "sk_test_", "rk_test_"] {
        if body(p, 16, alnum) {
            return Some("a Stripe key");
        }
    }
    if body("sk-", 20, dashed) {
        return Some("an API secret key (sk-...)");
    }
    for p in [
        "xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xapp-",
    ] {
        if body(p, 10, dashed) {
            return Some("a Slack token");
        }
    }
    for p in ["AKIA", "ASIA"] {
        if t.len() == 20 && body(p, 16, upper) {
            return Some("an AWS access key id");
        }
    }
    if body("AIza", 35, dashed) {
        return Some("a Google API key");
    }
    if body("npm_", 36, alnum) {
        return Some("an npm token");
    }
    if body("hf_", 30, alnum) {
        return Some("a Hugging Face token");
    }
    if body("pypi-", 50, dashed) {
        return Some("a PyPI token");
    }
    let parts: Vec<&str> = t.split('.').collect();
    if parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[1].starts_with("eyJ")
        && parts[..2]
            .iter()
            .all(|p| p.len() >= 10 && p.chars().all(dashed))
        && parts[2].chars().all(dashed)
    {
        return Some("a JSON Web Token");
    }
    if !t.contains('.') && high_entropy(t) {
        return Some("a long random-looking string");
    }
    None
}

/// At least 32 characters with upper and lower case letters and digits,
/// not hexadecimal (digests and commit ids are hex), and close to random:
/// many distinct characters, and the kind of character (upper, lower,
/// digit) changing often, as it does about every other character in a
/// random base62 string and rarely in words (`ThinkingTool-2026`).
fn high_entropy(t: &str) -> bool {
    if t.len() < 32
        || !t.chars().any(|c| c.is_ascii_uppercase())
        || !t.chars().any(|c| c.is_ascii_lowercase())
        || !t.chars().any(|c| c.is_ascii_digit())
        || t.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        || is_placeholder(t)
    {
        return false;
    }
    let mut counts = std::collections::BTreeMap::new();
    for c in t.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = t.len() as f64;
    let entropy: f64 = counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum();
    let kind = |c: char| {
        (
            c.is_ascii_uppercase(),
            c.is_ascii_lowercase(),
            c.is_ascii_digit(),
        )
    };
    let changes = t
        .chars()
        .zip(t.chars().skip(1))
        .filter(|(a, b)| kind(*a) != kind(*b))
        .count();
    entropy >= 4.0 && changes as f64 >= 0.35 * (n - 1.0)
}

#[cfg(test)]
mod tests {
    use super::super::tests::GHP;
    use super::*;

    #[test]
    fn shapes_do_not_fire_on_paths_digests_or_versions() {
        for s in [
            "<INSTALL_DIR>/node_modules/.bin/mcp-server-filesystem",
            "sha256:6a1f3c9e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a",
            "@modelcontextprotocol/server-filesystem@2026.8.31",
            "550e8400-e29b-41d4-a716-446655440000",
            "postgresql://127.0.0.1:9/none",
            "mcp-server-sequential-thinking-ThinkingTool-2026",
        ] {
            assert!(shape(s).is_none(), "{s}");
        }
        assert!(shape("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_part").is_some());
        assert!(shape("Zq9vX3mP0aB7cD1eF2gH4iJ6kL8nO0rS").is_some());
        assert!(shape("sk-proj-Ab3dEf6hIj9kLm2nOp5q").is_some());
        let glued = format!("cfg.{GHP}.x");
        assert_eq!(shape(&glued).map(|(r, _)| &glued[r]), Some(GHP));
    }
}
