//! The canonical form of a descriptor and its SHA-256 digests.
//!
//! Servers reorder keys, re-indent and re-escape between releases; a digest
//! over their bytes would cry drift on every harmless re-serialisation. The
//! canonical form is RFC 8785 (JCS) over NFC-normalised strings, so that
//! identical meaning gives identical bytes, while every code point that a
//! model would read, invisible ones included, still changes the digest.
//! See `docs/canonical-form.md`.

use std::cmp::Ordering;
use std::fmt;
use std::ops::Range;

use sha2::{Digest as _, Sha256};
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::json::{push_pointer_token, Object, ParseError, Reader, Value};
use crate::text::is_concealing;

/// NFC form of `s`, borrowing when it already is.
pub fn nfc(s: &str) -> std::borrow::Cow<'_, str> {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.nfc().collect())
    }
}

/// Returns `v` with every string and key in NFC. Keys that become equal
/// only after normalisation are ambiguous (two readers may see two texts):
/// their JSON pointers are pushed to `collisions` and the later one kept.
pub fn normalize(v: &Value, at: &mut String, collisions: &mut Vec<String>) -> Value {
    match v {
        Value::String(s) => Value::String(nfc(s).into_owned()),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&i.to_string());
                    let n = normalize(item, at, collisions);
                    at.truncate(len);
                    n
                })
                .collect(),
        ),
        Value::Object(o) => {
            let mut out = Object::new();
            for (k, item) in o.iter() {
                let key = nfc(k).into_owned();
                let len = at.len();
                at.push('/');
                push_pointer_token(at, &key);
                if out.get(&key).is_some() {
                    collisions.push(at.clone());
                }
                let n = normalize(item, at, collisions);
                at.truncate(len);
                out.insert(key, n);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Like [`normalize`], consuming `v`: strings already in NFC (nearly all)
/// are moved, not copied.
pub fn normalize_owned(v: Value, at: &mut String, collisions: &mut Vec<String>) -> Value {
    match v {
        Value::String(s) => match nfc(&s) {
            std::borrow::Cow::Borrowed(_) => Value::String(s),
            std::borrow::Cow::Owned(n) => Value::String(n),
        },
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&i.to_string());
                    let n = normalize_owned(item, at, collisions);
                    at.truncate(len);
                    n
                })
                .collect(),
        ),
        Value::Object(o) => {
            let mut out = Object::new();
            for (k, item) in o {
                let key = match nfc(&k) {
                    std::borrow::Cow::Borrowed(_) => k,
                    std::borrow::Cow::Owned(n) => n,
                };
                let len = at.len();
                at.push('/');
                push_pointer_token(at, &key);
                if out.get(&key).is_some() {
                    collisions.push(at.clone());
                }
                let n = normalize_owned(item, at, collisions);
                at.truncate(len);
                out.insert(key, n);
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// Writes canonical texts of values as they are read: what [`normalize`]
/// then [`write_value`] with [`Escape::Jcs`] write, without building the
/// values. Its buffers are kept from one value to the next (a large
/// inventory has half a million small objects).
#[derive(Default)]
pub struct Canonical {
    /// What was written.
    pub out: Vec<u8>,
    /// The keys of the objects being written, one after another.
    keys: String,
    /// Their members: key (in `keys`) and text (in `out`).
    members: Vec<(Range<usize>, Range<usize>)>,
    /// An object's members while they are put in order.
    moved: Vec<u8>,
}

impl Canonical {
    /// Appends the canonical text of the reader's next value to `out`.
    /// Returns `Ok(false)` (having consumed the value, and having noted its
    /// duplicate keys as [`Value`]'s reading does) when an object repeats a
    /// key or has a key that NFC changes: [`normalize`] says which keys
    /// collide, so such a value is read into a tree instead.
    pub fn write(&mut self, r: &mut Reader<'_>) -> Result<bool, ParseError> {
        // An error may have left an object's members behind.
        self.keys.clear();
        self.members.clear();
        self.value(r)
    }

    fn value(&mut self, r: &mut Reader<'_>) -> Result<bool, ParseError> {
        match r.peek() {
            Some(b'{') => self.object(r),
            Some(b'[') => {
                self.out.push(b'[');
                let mut ok = true;
                r.array(|r, i| -> Result<(), ParseError> {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    ok &= self.value(r)?;
                    Ok(())
                })?;
                self.out.push(b']');
                Ok(ok)
            }
            Some(b'"') => {
                let s = r.string()?.expect("the next value is a string");
                write_string(&nfc(&s), Escape::Jcs, &mut self.out);
                Ok(true)
            }
            _ => {
                write_value(&r.value()?, Escape::Jcs, &mut self.out);
                Ok(true)
            }
        }
    }

    fn object(&mut self, r: &mut Reader<'_>) -> Result<bool, ParseError> {
        self.out.push(b'{');
        let base = self.out.len();
        // Members of objects inside this one are pushed above these and
        // gone again before the next member of this one.
        let (first_key, first) = (self.keys.len(), self.members.len());
        let mut ok = true;
        r.object(|r, key| -> Result<(), ParseError> {
            ok &= matches!(nfc(key), std::borrow::Cow::Borrowed(_));
            let k = self.keys.len()..self.keys.len() + key.len();
            self.keys.push_str(key);
            if self.members.len() > first {
                self.out.push(b',');
            }
            let start = self.out.len();
            write_string(key, Escape::Jcs, &mut self.out);
            self.out.push(b':');
            ok &= self.value(r)?;
            self.members.push((k, start..self.out.len()));
            Ok(())
        })?;
        let Canonical {
            out,
            keys,
            members,
            moved,
        } = self;
        let members = &mut members[first..];
        let key = |m: &(Range<usize>, Range<usize>)| &keys[m.0.clone()];
        let sorted = members
            .windows(2)
            .all(|w| key_order(key(&w[0]), key(&w[1])) == Ordering::Less);
        if !sorted {
            members.sort_by(|a, b| key_order(key(a), key(b)));
            ok &= members.windows(2).all(|w| key(&w[0]) != key(&w[1]));
            moved.clear();
            moved.extend_from_slice(&out[base..]);
            out.truncate(base);
            for (i, (_, text)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&moved[text.start - base..text.end - base]);
            }
        }
        out.push(b'}');
        self.keys.truncate(first_key);
        self.members.truncate(first);
        Ok(ok)
    }
}

/// Orders keys as RFC 8785 does: by their UTF-16 code units.
pub fn key_order(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// How strings are escaped when a value is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Exactly RFC 8785: only `"`, `\` and C0 controls are escaped.
    Jcs,
    /// RFC 8785 plus `\uXXXX` for every concealing character (see
    /// [`crate::text::is_concealing`]): same value, but safe to `cat`.
    Visible,
}

/// The RFC 8785 serialisation of `v` (strings as they are: normalise first).
pub fn jcs(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(v, Escape::Jcs, &mut out);
    out
}

/// [`jcs`] as a string, for messages and evidence (escape it for display).
pub fn jcs_string(v: &Value) -> String {
    String::from_utf8(jcs(v)).expect("JCS output is UTF-8")
}

/// Appends `v` compactly with sorted keys and the given escaping.
pub fn write_value(v: &Value, esc: Escape, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n.as_f64(), out),
        Value::String(s) => write_string(s, esc, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, esc, out);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            for (i, (k, item)) in sorted_members(o).into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, esc, out);
                out.push(b':');
                write_value(item, esc, out);
            }
            out.push(b'}');
        }
    }
}

/// The members of `o` in RFC 8785 key order.
pub fn sorted_members(o: &Object) -> Vec<(&String, &Value)> {
    let mut members: Vec<_> = o.iter().collect();
    members.sort_by(|a, b| key_order(a.0, b.0));
    members
}

/// Appends a double as ECMAScript's `Number.prototype.toString` does
/// (RFC 8785 section 3.2.2.3); `-0` is written `0`.
pub fn write_number(x: f64, out: &mut Vec<u8>) {
    if x == 0.0 {
        out.push(b'0');
    } else {
        out.extend_from_slice(ryu_js::Buffer::new().format_finite(x).as_bytes());
    }
}

/// Appends a JSON string literal.
pub fn write_string(s: &str, esc: Escape, out: &mut Vec<u8>) {
    out.push(b'"');
    // Most strings need no escape at all: copy them whole.
    let plain = match esc {
        Escape::Jcs => crate::json::plain_run_end(s.as_bytes(), 0) == s.len(),
        Escape::Visible => s
            .bytes()
            .all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b < 0x7F),
    };
    if plain {
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escape: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let hex =
            escape.is_none() && ((c as u32) < 0x20 || (esc == Escape::Visible && is_concealing(c)));
        if escape.is_some() || hex {
            out.extend_from_slice(&bytes[start..i]);
            if let Some(e) = escape {
                out.extend_from_slice(e.as_bytes());
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{:04x}", u).as_bytes());
                }
            }
            start = i + c.len_utf8();
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// A SHA-256 digest, written `sha256:` and 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// The digest of the canonical form of `v` (which must be normalised).
    pub fn of_value(v: &Value) -> Digest {
        Digest::of(&jcs(v))
    }

    /// Parses the `sha256:<hex>` form.
    pub fn parse(s: &str) -> Option<Digest> {
        let hex = s.strip_prefix("sha256:")?;
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return None;
        }
        let nibble = |b: u8| {
            if b.is_ascii_digit() {
                b - b'0'
            } else {
                b - b'a' + 10
            }
        };
        let mut d = [0u8; 32];
        for (byte, pair) in d.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
            *byte = (nibble(pair[0]) << 4) | nibble(pair[1]);
        }
        Some(Digest(d))
    }

    /// The first 12 hex digits, for one-line displays.
    pub fn short(&self) -> String {
        hex(&self.0[..6])
    }

    /// The 64 hex digits.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

/// `sha256:<hex>` in a document a person reads; its 32 bytes in a binary
/// one (the cache files).
impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.collect_str(self)
        } else {
            s.serialize_bytes(&self.0)
        }
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Digest, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Digest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a SHA-256 digest")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Digest, E> {
                Digest::parse(s).ok_or_else(|| E::custom("not a sha256:<hex> digest"))
            }
            fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> Result<Digest, E> {
                b.try_into()
                    .map(Digest)
                    .map_err(|_| E::invalid_length(b.len(), &self))
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(Visit)
        } else {
            d.deserialize_bytes(Visit)
        }
    }
}

/// Lowercase hex digits of `bytes` (without a formatter per byte: a status
/// or a lock of 100,000 entries writes millions of them).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_its_text_in_json_and_a_class_its_name() {
        let d = Digest::of(b"x");
        let text = serde_json::to_string(&d).expect("serialises");
        assert_eq!(text, format!("\"{d}\""));
        assert_eq!(serde_json::from_str::<Digest>(&text).expect("reads"), d);
        assert!(serde_json::from_str::<Digest>("\"sha256:00\"").is_err());
        let class = crate::finding::Class::Poison;
        let text = serde_json::to_string(&class).expect("serialises");
        assert_eq!(text, format!("\"{}\"", class.as_str()));
        assert_eq!(
            serde_json::from_str::<crate::finding::Class>(&text).expect("reads"),
            class
        );
        assert!(serde_json::from_str::<crate::finding::Severity>("\"dire\"").is_err());
    }
    use crate::json::parse;

    #[test]
    fn rfc8785_test_vectors() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/jcs");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir.join("input")).expect("corpus jcs/input") {
            let path = entry.unwrap().path();
            let input = std::fs::read(&path).unwrap();
            let expected =
                std::fs::read(dir.join("output").join(path.file_name().unwrap())).unwrap();
            let (v, _) = parse(&input).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&jcs(&v)),
                String::from_utf8_lossy(&expected),
                "{}",
                path.display()
            );
            seen += 1;
        }
        assert_eq!(seen, 6);
    }

    #[test]
    fn visible_escaping_round_trips() {
        let s = "a\u{200B}\u{E0041}\u{1F600}\"\n";
        let mut out = Vec::new();
        write_string(s, Escape::Visible, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "\"a\\u200b\\udb40\\udc41\u{1F600}\\\"\\n\""
        );
        let (v, _) = parse(&out).unwrap();
        assert_eq!(v.as_str(), Some(s));
    }

    #[test]
    fn nfc_collisions_are_reported() {
        let (v, d) = parse("{\"e\u{301}\":1,\"\u{E9}\":2}".as_bytes()).unwrap();
        assert!(d.is_empty());
        let mut c = Vec::new();
        let n = normalize(&v, &mut String::new(), &mut c);
        assert_eq!(c, vec!["/\u{E9}".to_string()]);
        assert_eq!(n.as_object().unwrap().len(), 1);
    }

    #[test]
    fn digest_text_round_trips() {
        let d = Digest::of(b"x");
        assert_eq!(Digest::parse(&d.to_string()), Some(d));
        assert_eq!(Digest::parse("sha256:XY"), None);
    }
}
