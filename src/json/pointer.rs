//! RFC 6901 JSON pointers: how every error and finding says where in a
//! document it is.

/// One step of a JSON pointer; a key is borrowed from the input unless it
/// had escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    /// An object member.
    Key(std::borrow::Cow<'a, str>),
    /// An array element.
    Index(usize),
}

/// Renders segments as an RFC 6901 JSON pointer (`""` for the root).
pub fn pointer(segments: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Key(k) => push_pointer_token(&mut out, k),
            Segment::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// Appends one RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
pub fn push_pointer_token(out: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// `p` shortened in the middle when very long, to keep an error on one
/// line.
pub(super) fn shorten(p: String) -> String {
    const HEAD: usize = 80;
    const TAIL: usize = 40;
    if p.chars().count() <= HEAD + TAIL + 3 {
        return p;
    }
    let head: String = p.chars().take(HEAD).collect();
    let tail: Vec<char> = p.chars().rev().take(TAIL).collect();
    let tail: String = tail.into_iter().rev().collect();
    format!("{head}...{tail}")
}
