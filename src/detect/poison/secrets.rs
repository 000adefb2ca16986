//! Where a text names a secret: a path to keys or credentials (any file
//! under `~/.` included), a secret word ("password"), or a pair of words
//! ("API key", "system prompt").

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::names::ident_words;
use super::rules::{Lexicon, NO_WORD};
use super::tables::{KEY_EXT, KEY_STEMS, NEEDLES};
use super::tokens::{Tok, INPATH, SECRET};

/// Paths to secrets and credentials, and any file under `~/.`.
pub(super) fn sensitive_paths(c: &str, specials: &[(usize, usize, u32)]) -> Vec<(usize, usize)> {
    // Where [`sensitive`] may say yes: most strings have no such place,
    // and are done after this one pass.
    let marks: Vec<usize> = path_marks()
        .find_overlapping_iter(c)
        .map(|m| m.start())
        .collect();
    let mut out = Vec::new();
    if marks.is_empty() && c.is_ascii() {
        return out;
    }
    let b = c.as_bytes();
    let stop = |x: u8| {
        x.is_ascii_whitespace()
            || matches!(
                x,
                b'"' | b'\''
                    | b'`'
                    | b'('
                    | b')'
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b'<'
                    | b'>'
                    | b','
                    | b';'
                    | b'|'
            )
    };
    let mut i = 0;
    while i < b.len() {
        if stop(b[i]) {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && !stop(b[i]) {
            i += 1;
        }
        let marked = marks.iter().any(|&m| s <= m && m < i) || !c[s..i].is_ascii();
        let mut e = i;
        while e > s && matches!(b[e - 1], b'.' | b':' | b'!' | b'?') {
            e -= 1;
        }
        if !marked || e == s || specials.iter().any(|&(a, z, _)| s < z && a < e) {
            continue;
        }
        let chunk = &c[s..e];
        // Every needle has a path character, or is one of two words.
        if maybe_sensitive(chunk.as_bytes()) && names_secret(chunk) {
            let start = chunk.find('~').map_or(s, |k| s + k);
            out.push((start, e));
        }
    }
    out
}

/// What every text [`sensitive`] accepts holds, ASCII case aside: for each
/// needle, extension, prefix and segment it looks for, its longest part
/// without `/` (a path may be written with `\`, which it reads as `/`). An
/// ASCII chunk in which none of these occurs is no sensitive path; one
/// with other characters is read whole (lowercasing `İ` gives an `i`).
fn path_marks() -> &'static AhoCorasick {
    static MARKS: OnceLock<AhoCorasick> = OnceLock::new();
    MARKS.get_or_init(|| {
        let parts = NEEDLES
            .iter()
            .chain(KEY_EXT.iter())
            // `~/.`, `$home/.`, `%userprofile%/.` and the segments.
            .chain(["~", "$home", "%userprofile%", ".env", ".names.", ".ssh"])
            .map(|n| {
                n.split('/')
                    .max_by_key(|p| p.len())
                    .expect("split gives a part")
            });
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(parts)
            .expect("the path marks compile")
    })
}

/// A cheap test that rules out most words before [`sensitive`] looks at
/// every needle: a needle has a path character, starts with a dot, or
/// holds one of these parts.
fn maybe_sensitive(b: &[u8]) -> bool {
    const PARTS: [&[u8]; 16] = [
        b"id_",
        b"pg_",
        b"authentication_string",
        b"authorized_keys",
        b"kubeconfig",
        b"mcp",
        b"desktop_config",
        b"wallet",
        b"keychain",
        b"cookies",
        b"credentials",
        b"secrets",
        b"logins",
        b"key4",
        b"key3",
        b"codes",
    ];
    let has = |n: &[u8]| b.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    // One pass over the chunk for both questions: this runs on every word.
    let (mut path, mut joined) = (b.first() == Some(&b'.'), false);
    for x in b {
        match x {
            b'/' | b'\\' | b'~' => path = true,
            b'_' | b'.' => joined = true,
            _ => {}
        }
    }
    if path {
        return true;
    }
    if !joined {
        return b.eq_ignore_ascii_case(b"keychain") || b.eq_ignore_ascii_case(b"kubeconfig");
    }
    PARTS.iter().any(|n| has(n))
        || b.contains(&b'.')
            && KEY_EXT.iter().any(|x| {
                b.len() > x.len() + 1 && b[b.len() - x.len()..].eq_ignore_ascii_case(x.as_bytes())
            })
}

/// Whether a path as written names a secret store, in any case and with
/// either separator (`C:\Users\me\.SSH\id_rsa`).
pub(super) fn names_secret(path: &str) -> bool {
    sensitive(&path.to_lowercase().replace('\\', "/"))
}

fn sensitive(low: &str) -> bool {
    NEEDLES.iter().any(|n| low.contains(n))
        || low.starts_with("~/.")
        || low.contains("$home/.")
        || low.contains("%userprofile%/.")
        || low
            .split('/')
            .any(|seg| env_file(seg) || seg.starts_with(".names.") || seg == ".ssh")
        || KEY_EXT.iter().any(|x| {
            low.len() > x.len() + 1 && low.ends_with(x) && !low.contains("://") && key_file(low, x)
        })
}

/// A path segment that names an environment file: `.env`, or one of a
/// stage (`.env.local`, `.env.production`), not the templates committed
/// beside it (`.env.example`).
fn env_file(seg: &str) -> bool {
    seg == ".env"
        || seg.strip_prefix(".env.").is_some_and(|stage| {
            !stage.is_empty()
                && !matches!(
                    stage,
                    "example" | "sample" | "template" | "dist" | "defaults"
                )
        })
}

/// Whether a name ending in a key file's extension is a file: `.key` is
/// also what a field of an object is called (`response.key`, `item.key`),
/// so a `.key` name without a folder is a key file only when its stem
/// says so (`server.key`, `tls-private.key`, `example.com.key`).
fn key_file(low: &str, ext: &str) -> bool {
    if ext != ".key" || low.contains(['/', '~']) {
        return true;
    }
    let stem = &low[..low.len() - ext.len()];
    stem.contains('.') || ident_words(stem).iter().any(|w| KEY_STEMS.contains(w))
}

/// Marks secrets: single words, and pairs such as "API key", "access
/// token", "environment variables", "system prompt", "chat history".
pub(super) fn mark_secrets(toks: &mut [Tok], lex: &Lexicon) {
    let (one, head, tail) = (&lex.secret1, &lex.secret_head, &lex.secret_tail);
    for i in 0..toks.len() {
        if toks[i].flags & INPATH != 0 || toks[i].id == NO_WORD {
            continue;
        }
        if one.has(toks[i].id) {
            toks[i].flags |= SECRET;
        }
        if head.has(toks[i].id) && i + 1 < toks.len() {
            let (clause, next) = (toks[i].clause, &mut toks[i + 1]);
            if next.clause == clause && next.flags & INPATH == 0 && tail.has(next.id) {
                next.flags |= SECRET;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_sensitive_accepts_is_marked() {
        let needles = NEEDLES
            .iter()
            .chain(KEY_EXT.iter())
            .map(|n| format!("keys{n}"));
        let others = [
            "~/.config",
            "$HOME/.cache",
            "%USERPROFILE%/.x",
            "a/.env",
            ".names.x",
            "/.ssh",
        ];
        for n in needles.chain(others.map(String::from)) {
            for written in [n.clone(), n.to_uppercase(), n.replace('/', "\\")] {
                if names_secret(&written) {
                    assert!(
                        path_marks().find(&written).is_some(),
                        "{written} is sensitive and unmarked"
                    );
                }
            }
        }
    }
}
