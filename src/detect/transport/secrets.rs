//! Credentials written inline: where they are in a text (by name, after an
//! authorization scheme, or by shape), whether a value is a literal rather
//! than a reference or a placeholder, and how a secret is shown (redacted).

use std::ops::Range;

use super::credential_shapes::shape;

/// The shown form of a secret: its first four characters when it is long
/// enough that they give little away, and its length.
pub(super) fn redact(v: &str) -> String {
    let n = v.chars().count();
    if n >= 16 {
        let head: String = v.chars().take(4).collect();
        format!("{head}… ({n} chars, redacted)")
    } else {
        format!("… ({n} chars, redacted)")
    }
}

/// Text with every secret-shaped or secret-named part redacted, for
/// evidence that shows a command line or a script.
pub(super) fn scrub(s: &str) -> String {
    let mut out = s.to_string();
    for (r, _) in secret_ranges(s).into_iter().rev() {
        out.replace_range(r.clone(), &redact(&s[r]));
    }
    out
}

/// Authorization schemes written before a credential.
fn is_scheme(w: &str) -> bool {
    ["bearer", "basic", "token"].contains(&w.to_ascii_lowercase().as_str())
}

/// Where secrets are in a piece of text (an argument, a script, a value),
/// and what each is: by shape anywhere (`ghp_...`, `sk-...`, a JWT), by
/// name (`TOKEN=VALUE`, `--api-key VALUE`, `--token=VALUE`,
/// `Authorization: Bearer VALUE`), and a credential after `Bearer` or
/// `Basic`. Sorted, not overlapping.
pub(crate) fn secret_ranges(text: &str) -> Vec<(Range<usize>, String)> {
    const QUOTES: [char; 2] = ['\'', '"'];
    let mut toks: Vec<Range<usize>> = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (start, c.is_whitespace()) {
            (None, false) => start = Some(i),
            (Some(b), true) => {
                toks.push(b..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        toks.push(b..text.len());
    }
    // A token without its quotes (and a trailing `,` or `;`).
    let core = |r: &Range<usize>| -> Range<usize> {
        let t = &text[r.clone()];
        let head = t.len() - t.trim_start_matches(QUOTES).len();
        let tail = t.len()
            - t.trim_end_matches(|c| QUOTES.contains(&c) || c == ',' || c == ';')
                .len();
        (r.start + head)..(r.end - tail).max(r.start + head)
    };
    // The value that follows token `i`: the next token, past a scheme word.
    let value_after = |i: usize| -> Option<Range<usize>> {
        let mut j = i + 1;
        if toks.get(j).is_some_and(|r| is_scheme(&text[core(r)])) {
            j += 1;
        }
        toks.get(j).map(&core)
    };
    let mut out: Vec<(Range<usize>, String)> = Vec::new();
    for (i, r) in toks.iter().enumerate() {
        let mut at = r.start;
        while at < r.end {
            match shape(&text[at..r.end]) {
                Some((s, kind)) if !s.is_empty() => {
                    out.push((at + s.start..at + s.end, kind));
                    at += s.end;
                }
                _ => break,
            }
        }
        let c = core(r);
        let word = &text[c.clone()];
        let mut named: Vec<(&str, Range<usize>)> = Vec::new();
        for sep in ['=', ':'] {
            if let Some((k, v)) = word.split_once(sep) {
                let key = k.trim_start_matches('-');
                let value = if v.is_empty() || is_scheme(v) {
                    value_after(i)
                } else {
                    let v = &word[k.len() + 1..];
                    let head = v.len() - v.trim_start_matches(QUOTES).len();
                    Some((c.start + k.len() + 1 + head).min(c.end)..c.end)
                };
                if let Some(v) = value {
                    named.push((key, v));
                }
            }
        }
        if word.starts_with('-') && !word.contains(['=', ':']) {
            if let Some(v) = value_after(i).filter(|v| !text[v.clone()].starts_with('-')) {
                named.push((word.trim_start_matches('-'), v));
            }
        }
        for (key, v) in named {
            if !key.is_empty() && !key.contains(char::is_whitespace) {
                if let Some(why) = named_secret(key, &text[v.clone()]) {
                    out.push((v, why));
                }
            }
        }
        if is_scheme(word) && !word.eq_ignore_ascii_case("token") {
            if let Some(v) = value_after(i) {
                let cred = &text[v.clone()];
                if cred.len() >= 8 && literal(cred) && cred.chars().any(|c| !c.is_ascii_lowercase())
                {
                    out.push((v, format!("a {} credential", word.to_ascii_lowercase())));
                }
            }
        }
    }
    out.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
    let mut merged: Vec<(Range<usize>, String)> = Vec::new();
    for (r, why) in out {
        match merged.last_mut() {
            Some((last, _)) if r.start < last.end => last.end = last.end.max(r.end),
            _ => merged.push((r, why)),
        }
    }
    merged
}

/// Words of an identifier: `GITHUB_TOKEN`, `apiKey`, `X-Api-Key`.
pub(super) fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let boundary = c.is_ascii_uppercase()
            && i > 0
            && (chars[i - 1].is_ascii_lowercase()
                || (chars[i - 1].is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())));
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Words before `key` that make it a credential (`API_KEY`, not `SORT_KEY`).
const KEY_QUALIFIERS: [&str; 20] = [
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "client",
    "master",
    "service",
    "license",
    "encryption",
    "signing",
    "ssh",
    "app",
    "subscription",
    "account",
    "admin",
    "deploy",
    "personal",
    "bot",
    "session",
];

/// Why a value under `name` is a secret, if it is: a credential name and
/// a literal value (not a reference or a placeholder).
pub(crate) fn named_secret(name: &str, value: &str) -> Option<String> {
    let words = name_words(name);
    let last = words.last()?.as_str();
    let strong = matches!(
        last,
        "token"
            | "secret"
            | "password"
            | "passwd"
            | "passphrase"
            | "credential"
            | "credentials"
            | "apikey"
            | "authorization"
            | "cookie"
            | "pat"
            | "privatekey"
            | "accesstoken"
            | "secretkey"
    ) || (matches!(last, "pass" | "pwd") && words.len() > 1);
    let key = last == "key"
        && (words.len() == 1
            || KEY_QUALIFIERS.contains(&words[words.len() - 2].as_str())
            || looks_random(value));
    if !(strong || key) {
        return None;
    }
    let v = strip_scheme(value);
    if !literal(v) || v.chars().count() < 4 {
        return None;
    }
    if matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "none" | "null" | "on" | "off"
    ) {
        return None;
    }
    Some("named like a credential".to_string())
}

/// `Bearer X`, `Basic X`, `token X` → `X`.
fn strip_scheme(v: &str) -> &str {
    let t = v.trim();
    match t.split_once(' ') {
        Some((s, rest))
            if ["bearer", "basic", "token", "apikey"]
                .contains(&s.to_ascii_lowercase().as_str()) =>
        {
            rest.trim()
        }
        _ => t,
    }
}

/// A value written into the file, as opposed to a reference to one
/// (`${env:X}`, `${input:x}`, `$X`, `%X%`, `{{x}}`), nothing, or a
/// placeholder (`<token>`, `your-key-here`, `dummy-not-a-key`, `xxxx`).
pub(super) fn literal(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() || v.contains("${") || v.contains("{{") || v.contains("$(") {
        return false;
    }
    if let Some(rest) = v.strip_prefix('$') {
        let rest = rest.strip_prefix("env:").unwrap_or(rest);
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return false;
        }
    }
    if v.len() > 2 && v.starts_with('%') && v.ends_with('%') {
        return false;
    }
    !is_placeholder(v)
}

pub(super) fn is_placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    if l.starts_with('<') && l.ends_with('>') {
        return true;
    }
    const WORDS: [&str; 16] = [
        "dummy",
        "placeholder",
        "changeme",
        "change-me",
        "change_me",
        "your-",
        "your_",
        "yourkey",
        "yourtoken",
        "example",
        "replace",
        "redacted",
        "not-a-",
        "xxxx",
        "****",
        "....",
    ];
    if WORDS.iter().any(|w| l.contains(w)) {
        return true;
    }
    let distinct: std::collections::BTreeSet<char> = l.chars().collect();
    distinct.len() <= 2
}

fn looks_random(v: &str) -> bool {
    v.len() >= 16
        && !v.contains(char::is_whitespace)
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{review, GHP};
    use super::*;
    use crate::finding::Finding;

    #[test]
    fn secrets_in_text_are_found_by_shape_name_and_scheme() {
        let parts = |t: &str| -> Vec<String> {
            secret_ranges(t)
                .into_iter()
                .map(|(r, _)| t[r].to_string())
                .collect()
        };
        assert_eq!(
            parts("--header 'Authorization: Bearer s3cretvalue123'"),
            ["s3cretvalue123"]
        );
        assert_eq!(parts("Authorization:${AUTH_HEADER}"), Vec::<String>::new());
        assert_eq!(parts("Bearer abc123def456ghi"), ["abc123def456ghi"]);
        assert_eq!(parts("basic configuration"), Vec::<String>::new());
        assert_eq!(
            parts(&format!(
                "GITHUB_TOKEN={GHP} npx -y srv@1.0.0 --api-key k3yV4lue!"
            )),
            [GHP, "k3yV4lue!"]
        );
        assert_eq!(parts("--token=\"abcd1234\","), ["abcd1234"]);
        assert_eq!(parts("-y some-server --port 8080"), Vec::<String>::new());
        assert_eq!(
            scrub(&format!("sh -c 'X={GHP} y'")),
            "sh -c 'X=ghp_… (40 chars, redacted) y'"
        );
    }

    proptest::proptest! {
        /// Any text around a token: no panic, and the token never survives.
        #[test]
        fn scrub_never_panics_and_hides_tokens(
            before in "[ -~\u{80}-\u{10FFFF}]{0,40}",
            after in "[ -~\u{80}-\u{10FFFF}]{0,40}",
        ) {
            let text = format!("{before} {GHP} {after}");
            let shown = scrub(&text);
            proptest::prop_assert!(!shown.contains(GHP), "{}", shown);
            let _ = secret_ranges(&before);
            let _ = review_any_text(&after);
        }
    }

    fn review_any_text(s: &str) -> Vec<Finding> {
        review(&format!(
            r#"{{"command": "sh", "args": ["-c", {}], "url": {}}}"#,
            serde_json::to_string(s).unwrap(),
            serde_json::to_string(s).unwrap()
        ))
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(name_words("X-Api-Key"), ["x", "api", "key"]);
        assert_eq!(name_words("apiKey"), ["api", "key"]);
        assert_eq!(name_words("APIKey"), ["api", "key"]);
        assert_eq!(
            name_words("GITHUB_PERSONAL_ACCESS_TOKEN").last().unwrap(),
            "token"
        );
        assert!(named_secret("KEY_FILE", "/x/y").is_none());
        assert!(named_secret("API_KEY_ID", "abc123").is_none());
        assert!(named_secret("OPENAI_KEY", "Zq9vX3mP0aB7cD1eF2gH").is_some());
    }
}
