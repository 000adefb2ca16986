//! Every string a model may read in a descriptor, with its JSON pointer:
//! values and keys, at any depth (schemas nest in `properties`, `items`,
//! `$defs`, `anyOf`...), `_meta` and unknown keys included. Detectors walk
//! these instead of knowing where text hides.

use crate::json::{push_pointer_token, Tree};

/// Whether a string is a key or a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// An object key (a property name, a keyword, a `_meta` field).
    Key,
    /// A string value.
    Value,
}

/// One string of a descriptor.
#[derive(Clone, Debug)]
pub struct Text<'a> {
    /// RFC 6901 pointer: of the value, or of the member whose key this is.
    pub pointer: String,
    /// Key or value.
    pub role: Role,
    /// The string.
    pub text: &'a str,
}

/// Keys under which values are images or links a model does not read as
/// text (`icons[].src` is often a base64 data URI).
const SKIP: [&str; 1] = ["icons"];

/// Every string and key of `v`, pointers starting at `base`.
pub fn strings<'a>(v: &'a Tree<'_>, base: &str) -> Vec<Text<'a>> {
    let mut out = Vec::new();
    walk(v, &mut base.to_string(), &mut out);
    out
}

fn walk<'a>(v: &'a Tree<'_>, at: &mut String, out: &mut Vec<Text<'a>>) {
    match v {
        Tree::String(s) => out.push(Text {
            pointer: at.clone(),
            role: Role::Value,
            text: s,
        }),
        Tree::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                walk(item, at, out);
                at.truncate(len);
            }
        }
        Tree::Object(o) => {
            for (k, item) in o.iter() {
                let len = at.len();
                at.push('/');
                push_pointer_token(at, k);
                out.push(Text {
                    pointer: at.clone(),
                    role: Role::Key,
                    text: k,
                });
                if !SKIP.contains(&k) {
                    walk(item, at, out);
                }
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// Words of an identifier, lowercase: split at `_`, `-`, `.`, spaces and
/// camel humps; digits stay with their word (`v2`, `base64`).
pub fn identifier_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_numeric();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The words [`identifier_words`] finds in `s`, joined with `_` (which no
/// word holds), made in one pass for an ASCII `s`: the capability classes
/// ask it of the name of every tool of every inventory and lock read.
pub fn identifier_words_joined(s: &str) -> String {
    if !s.is_ascii() {
        return identifier_words(s).join("_");
    }
    let mut out = String::with_capacity(s.len() + 4);
    let (mut in_word, mut prev_lower) = (false, false);
    for b in s.bytes() {
        if !b.is_ascii_alphanumeric() {
            in_word = false;
            prev_lower = false;
            continue;
        }
        if b.is_ascii_uppercase() && prev_lower && in_word {
            in_word = false;
        }
        if !in_word && !out.is_empty() {
            out.push('_');
        }
        in_word = true;
        prev_lower = b.is_ascii_lowercase() || b.is_ascii_digit();
        out.push(char::from(b.to_ascii_lowercase()));
    }
    out
}

/// How many words [`identifier_words`] finds in `s`, without making them
/// (poison asks it of every key that is no known vocabulary).
pub fn identifier_word_count(s: &str) -> usize {
    let (mut n, mut in_word, mut prev_lower) = (0, false, false);
    for c in s.chars() {
        if !c.is_alphanumeric() {
            n += usize::from(in_word);
            in_word = false;
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && in_word {
            n += 1;
        }
        prev_lower = c.is_lowercase() || c.is_numeric();
        in_word = true;
    }
    n + usize::from(in_word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_tree;

    proptest::proptest! {
        #[test]
        fn counts_the_words_identifier_words_makes(s in "[a-zA-Z0-9_ .\\-ÀÉßİǅΣσ\u{2160}\u{2170}\u{1F600}]{0,24}") {
            proptest::prop_assert_eq!(identifier_word_count(&s), identifier_words(&s).len());
        }

        #[test]
        fn joins_the_words_identifier_words_makes(s in "[a-zA-Z0-9_ .\\-ÀÉßİǅΣσ\u{2160}\u{2170}\u{1F600}]{0,24}") {
            proptest::prop_assert_eq!(identifier_words_joined(&s), identifier_words(&s).join("_"));
        }

        /// ASCII only: the one-pass way.
        #[test]
        fn joins_ascii_words_in_one_pass(s in "[a-zA-Z0-9_ .\\-]{0,24}") {
            proptest::prop_assert_eq!(identifier_words_joined(&s), identifier_words(&s).join("_"));
        }
    }

    #[test]
    fn splits_identifiers_into_words() {
        assert_eq!(
            identifier_words("getTinyImage_v2-base64"),
            vec!["get", "tiny", "image", "v2", "base64"]
        );
    }

    #[test]
    fn finds_keys_and_values_at_any_depth() {
        let v =
            parse_tree(br#"{"a":{"b/c":["x",{"d":"y"}]},"icons":[{"src":"data:..."}]}"#).unwrap();
        let got: Vec<(String, Role, &str)> = strings(&v, "")
            .into_iter()
            .map(|t| (t.pointer, t.role, t.text))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/a".into(), Role::Key, "a"),
                ("/a/b~1c".into(), Role::Key, "b/c"),
                ("/a/b~1c/0".into(), Role::Value, "x"),
                ("/a/b~1c/1/d".into(), Role::Key, "d"),
                ("/a/b~1c/1/d".into(), Role::Value, "y"),
                ("/icons".into(), Role::Key, "icons"),
            ]
        );
    }
}
