//! The part of a tool or server that reaches the model, in canonical form,
//! and its digests.
//!
//! Only fields that enter the model's context or constrain its calls are
//! digested (name, title, description, inputSchema, outputSchema,
//! annotations for a tool; instructions, serverInfo, prompts, resources
//! and resource templates for a server). Transport details such as
//! `execution`, `_meta` and `icons` stay out: they are not what a reviewer
//! approves when approving a descriptor.

use crate::canon::{nfc, normalize_owned, write_string, write_value, Canonical, Digest, Escape};
use crate::detect::flow::classes::Capabilities;
use crate::json::{Object, Value};
use sha2::Digest as _;

/// What is trimmed from a description or title: ASCII whitespace only.
/// Other Unicode spaces (U+2028, U+0085...) can conceal text and must reach
/// the digest.
const TRIMMED: [char; 4] = [' ', '\t', '\n', '\r'];

/// True when `fields` are already canonical (what [`Descriptor::new`]
/// would produce), checked without copying them.
pub fn is_canonical(fields: &Object) -> bool {
    fn nfc_ok(s: &str) -> bool {
        s.is_ascii() || unicode_normalization::is_nfc(s)
    }
    fn all_nfc(v: &Value) -> bool {
        match v {
            Value::String(s) => nfc_ok(s),
            Value::Array(items) => items.iter().all(all_nfc),
            Value::Object(o) => o.iter().all(|(k, v)| nfc_ok(k) && all_nfc(v)),
            _ => true,
        }
    }
    fields.iter().all(|(k, v)| {
        nfc_ok(k)
            && match (k.as_str(), v) {
                ("description" | "title", Value::String(s)) => {
                    s.trim_matches(TRIMMED) == s && nfc_ok(s)
                }
                _ => all_nfc(v),
            }
    })
}

/// Appends to `c.out` the canonical text of the reader's next value as the
/// value of descriptor field `field`, as [`Descriptor::new`] makes it (a
/// description or title is trimmed), without building the value;
/// `Ok(false)` as [`Canonical::write`] says.
pub fn write_field(
    field: &str,
    r: &mut crate::json::Reader<'_>,
    c: &mut Canonical,
) -> Result<bool, crate::json::ParseError> {
    if matches!(field, "description" | "title") && r.peek() == Some(b'"') {
        let s = r.string()?.expect("the next value is a string");
        write_string(&nfc(s.trim_matches(TRIMMED)), Escape::Jcs, &mut c.out);
        return Ok(true);
    }
    c.write(r)
}

/// Tool fields that are digested, in display order.
pub const TOOL_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// Server-level fields that are digested, in display order.
pub const SERVER_FIELDS: [&str; 5] = [
    "instructions",
    "serverInfo",
    "prompts",
    "resources",
    "resourceTemplates",
];

/// The bytes a dropped descriptor can be rebuilt from, and where in them.
/// Equality ignores it: it is a cache, not part of the value.
#[derive(Clone, Default)]
pub struct Lazy(pub Option<(crate::bytes::Shared, std::ops::Range<usize>)>);

impl Lazy {
    /// The bytes the descriptor can be rebuilt from.
    pub fn text(&self) -> Option<&[u8]> {
        self.0
            .as_ref()
            .map(|(bytes, span)| &(**bytes).as_ref()[span.clone()])
    }

    /// [`Lazy::text`], read into memory of its own from a mapped file
    /// (see [`crate::input::Input::read_range`]): for a few texts
    /// scattered over a large file.
    pub fn read(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        self.0
            .as_ref()
            .map(|(bytes, span)| bytes.read_range(span.clone()))
    }
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some((_, span)) => write!(f, "Lazy({span:?})"),
            None => f.write_str("Lazy(None)"),
        }
    }
}

impl PartialEq for Lazy {
    fn eq(&self, _: &Lazy) -> bool {
        true
    }
}

/// A canonical descriptor (NFC, `description`/`title` trimmed) and its digests.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor {
    /// The digested fields, each already canonical.
    pub fields: Object,
    /// SHA-256 of the canonical form of the whole descriptor.
    pub digest: Digest,
    /// SHA-256 of the canonical form of each present field.
    pub field_digests: FieldDigests,
    /// What the tool can do, read from the same canonical texts as the
    /// digests ([`Capabilities::of_texts`]); none for a server.
    pub can: Capabilities,
}

/// The name of a digested field, as one of [`TOOL_FIELDS`] or [`SERVER_FIELDS`]
/// (`None` for any other name).
pub fn field_name(name: &str) -> Option<&'static str> {
    field_position(name).map(field_at)
}

/// The number of a digested field's name: its place in [`TOOL_FIELDS`],
/// then [`SERVER_FIELDS`].
fn field_position(name: &str) -> Option<u8> {
    let n = TOOL_FIELDS
        .iter()
        .chain(SERVER_FIELDS.iter())
        .position(|f| *f == name)?;
    u8::try_from(n).ok()
}

/// Per-field digests, sorted by field name: a few entries, kept compact
/// because a large inventory holds one set per tool (and its lock one per
/// entry): a field is a one-byte number, and the list is no longer than
/// it needs to be (five fields take 165 bytes, not the 384 of five
/// `(&str, Digest)` in a vector grown by doubling).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldDigests(Vec<(u8, Digest)>);

/// The name of field number `n`: [`TOOL_FIELDS`], then [`SERVER_FIELDS`].
fn field_at(n: u8) -> &'static str {
    let n = usize::from(n);
    TOOL_FIELDS
        .get(n)
        .or_else(|| SERVER_FIELDS.get(n - TOOL_FIELDS.len()))
        .copied()
        .expect("field numbers come from field_position")
}

/// The number of a field name from [`field_name`].
fn field_number(field: &str) -> u8 {
    field_position(field).expect("a digested field's name (see field_name)")
}

impl FieldDigests {
    /// No field yet, with room for `n` (inserting one at a time makes
    /// room for one at a time: a reallocation each).
    pub fn with_capacity(n: usize) -> FieldDigests {
        FieldDigests(Vec::with_capacity(n))
    }

    /// Sets the digest of `field` (a name from [`field_name`]).
    pub fn insert(&mut self, field: &'static str, digest: Digest) {
        match self.0.binary_search_by(|(k, _)| field_at(*k).cmp(field)) {
            Ok(i) => self.0[i].1 = digest,
            Err(i) => {
                self.0.reserve_exact(1);
                self.0.insert(i, (field_number(field), digest));
            }
        }
    }

    /// The digest of `field`, if present.
    pub fn get(&self, field: &str) -> Option<&Digest> {
        self.0
            .iter()
            .find(|(k, _)| field_at(*k) == field)
            .map(|(_, d)| d)
    }

    /// Fields and digests, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Digest)> {
        self.0.iter().map(|(k, d)| (field_at(*k), d))
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The fields by number (see [`FieldDigests::from_numbered`]), for
    /// files that store them compactly.
    pub fn numbered(&self) -> impl Iterator<Item = (u8, &Digest)> {
        self.0.iter().map(|(k, d)| (*k, d))
    }

    /// Field digests from [`FieldDigests::numbered`]'s output; `None` when
    /// a number names no field or the fields are not in order.
    pub fn from_numbered(items: Vec<(u8, Digest)>) -> Option<FieldDigests> {
        let count = TOOL_FIELDS.len() + SERVER_FIELDS.len();
        // Numbers first: `field_at` takes only known ones.
        let known = items.iter().all(|(k, _)| usize::from(*k) < count);
        let ordered = || {
            items
                .windows(2)
                .all(|w| field_at(w[0].0) < field_at(w[1].0))
        };
        (known && ordered()).then_some(FieldDigests(items))
    }

    /// True when there is no field.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod field_tests {
    use super::*;

    #[test]
    fn numbered_fields_read_back_and_bad_numbers_are_refused() {
        let mut f = FieldDigests::default();
        f.insert("name", Digest::of(b"n"));
        f.insert("description", Digest::of(b"d"));
        let items: Vec<(u8, Digest)> = f.numbered().map(|(k, d)| (k, *d)).collect();
        assert_eq!(FieldDigests::from_numbered(items.clone()), Some(f));
        let reversed: Vec<(u8, Digest)> = items.iter().rev().copied().collect();
        assert_eq!(FieldDigests::from_numbered(reversed), None);
        for n in [11, 200, 255] {
            assert_eq!(
                FieldDigests::from_numbered(vec![(0, Digest::of(b"x")), (n, Digest::of(b"y"))]),
                None
            );
        }
    }
}

impl std::ops::Index<&str> for FieldDigests {
    type Output = Digest;
    fn index(&self, field: &str) -> &Digest {
        self.get(field)
            .unwrap_or_else(|| panic!("no digest for field {field}"))
    }
}

impl<'a> IntoIterator for &'a FieldDigests {
    type Item = (&'static str, &'a Digest);
    type IntoIter = Box<dyn Iterator<Item = (&'static str, &'a Digest)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl Descriptor {
    /// Canonicalises `fields` (any order, any normalisation) and digests it.
    /// Returns the JSON pointers of keys that collide after NFC.
    pub fn new(fields: Object) -> (Descriptor, Vec<String>) {
        let mut collisions = Vec::new();
        let mut canon = Object::new();
        for (key, value) in fields {
            let mut at = String::from("/");
            crate::json::push_pointer_token(&mut at, &key);
            let v = match (key.as_str(), value) {
                ("description" | "title", Value::String(s)) => {
                    // ASCII whitespace only: other Unicode spaces (U+2028,
                    // U+0085...) can conceal text and must reach the digest.
                    Value::String(nfc(s.trim_matches(TRIMMED)).into_owned())
                }
                (_, value) => normalize_owned(value, &mut at, &mut collisions),
            };
            canon.insert(key, v);
        }
        (Descriptor::from_canonical(canon), collisions)
    }

    /// Digests fields that are already canonical (as stored in the lock).
    /// Each field is serialised once, and digested as [`Descriptor::of_texts`]
    /// digests texts.
    pub fn from_canonical(fields: Object) -> Descriptor {
        let mut texts = Vec::with_capacity(512);
        let mut spans = Vec::with_capacity(fields.len());
        for (k, v) in fields.iter() {
            let start = texts.len();
            write_value(v, Escape::Jcs, &mut texts);
            let name = field_name(k).expect("descriptors hold only digested fields");
            spans.push((name, start..texts.len()));
        }
        let spans = spans.into_iter().map(|(f, span)| (f, &texts[span]));
        Descriptor {
            fields,
            ..Descriptor::of_texts(spans.collect())
        }
    }

    /// The digests of a descriptor whose fields are given as their
    /// canonical texts (field name and text), without the fields: each
    /// text is hashed as it stands, and the whole is those texts joined
    /// under their sorted names (field names are ASCII: their byte order is
    /// RFC 8785's).
    pub fn of_texts(mut texts: Vec<(&'static str, &[u8])>) -> Descriptor {
        texts.sort_by(|a, b| a.0.cmp(b.0));
        let can = Capabilities::of_texts(&texts);
        let mut whole = sha2::Sha256::new();
        let mut field_digests = FieldDigests::with_capacity(texts.len());
        let mut name = Vec::with_capacity(16);
        whole.update(b"{");
        for (i, (field, text)) in texts.into_iter().enumerate() {
            name.clear();
            if i > 0 {
                name.push(b',');
            }
            write_string(field, Escape::Jcs, &mut name);
            name.push(b':');
            whole.update(&name);
            whole.update(text);
            field_digests.insert(field, Digest::of(text));
        }
        whole.update(b"}");
        Descriptor {
            fields: Object::new(),
            digest: Digest(whole.finalize().into()),
            field_digests,
            can,
        }
    }

    /// The value of one field.
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.fields.get(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn desc(json: &str) -> Descriptor {
        let (v, _) = parse(json.as_bytes()).unwrap();
        Descriptor::new(v.as_object().unwrap().clone()).0
    }

    #[test]
    fn order_whitespace_and_normalisation_do_not_change_the_digest() {
        let a = desc(
            r#"{"name":"t","description":"Caf\u00e9 ","inputSchema":{"type":"object","properties":{}}}"#,
        );
        let b = desc("{ \"inputSchema\" : {\"properties\":{},\"type\":\"object\"}, \"description\":\" Cafe\u{301}\", \"name\":\"t\" }");
        assert_eq!(a.digest, b.digest);
        assert_eq!(a.field_digests, b.field_digests);
    }

    #[test]
    fn a_zero_width_character_changes_the_digest() {
        let a = desc(r#"{"name":"t","description":"read a file"}"#);
        let b = desc(r#"{"name":"t","description":"read a\u200b file"}"#);
        assert_ne!(a.digest, b.digest);
        assert_ne!(
            a.field_digests["description"],
            b.field_digests["description"]
        );
        assert_eq!(a.field_digests["name"], b.field_digests["name"]);
    }
}
