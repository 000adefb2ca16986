//! The binary layout every cache file is written in. A file is framed by
//! hand (the header [`super::store`] writes, counts as 4 little-endian
//! bytes, offsets as 8) and its records, `#[derive(Serialize,
//! Deserialize)]` types, are written in postcard's layout between the
//! frames ([`Encoder::record`], [`Decoder::record`]). The frames are what
//! let a reader take a large file a record at a time: give back the pages
//! behind it, step to a record by its offset, stop at a count.
//!
//! The reader answers `None` past its end or on anything it does not
//! expect, so that a damaged file is only ever a miss. The values the
//! records hold that serde does not know how to write here are below:
//! JSON values exactly (members in order, numbers as written) and no
//! deeper than [`MAX_VALUE_DEPTH`], object ids and field digests as bytes.

use std::borrow::Cow;
use std::fmt;

use gix::ObjectId;
use serde::de::{DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::canon::Digest;
use crate::descriptor::FieldDigests;
use crate::json::{Object, Value};

/// A writer of the layout.
pub struct Encoder(pub Vec<u8>);

impl Encoder {
    /// A count or length, as 4 bytes.
    pub fn u32(&mut self, n: usize) {
        let n = u32::try_from(n).expect("cache sections hold fewer than 2^32 items");
        self.0.extend_from_slice(&n.to_le_bytes());
    }
    /// An offset, as 8 bytes.
    pub fn u64(&mut self, n: u64) {
        self.0.extend_from_slice(&n.to_le_bytes());
    }
    /// A length, then the bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len());
        self.0.extend_from_slice(b);
    }
    /// `record` in postcard's layout.
    pub fn record<T: Serialize + ?Sized>(&mut self, record: &T) {
        postcard::serialize_with_flavor(record, Append(&mut self.0))
            .expect("records hold nothing postcard cannot write");
    }
}

/// Postcard's output, appended to a vector that is already there.
struct Append<'a>(&'a mut Vec<u8>);

impl postcard::ser_flavors::Flavor for Append<'_> {
    type Output = ();

    fn try_push(&mut self, byte: u8) -> postcard::Result<()> {
        self.0.push(byte);
        Ok(())
    }

    fn try_extend(&mut self, bytes: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// A reader of the layout: every getter is `None` past its end.
pub struct Decoder<'a> {
    /// What is left to read.
    pub rest: &'a [u8],
}

impl<'a> Decoder<'a> {
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }
    /// One byte.
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    /// A count of items that each take at least a byte (a larger count is
    /// a lie).
    pub fn count(&mut self) -> Option<usize> {
        let n = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        (n <= self.rest.len()).then_some(n)
    }
    /// A count, then that many items read by `item`.
    pub fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let n = self.count()?;
        let mut items = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            items.push(item(self)?);
        }
        Some(items)
    }
    /// A length, then that many bytes.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.count()?;
        self.take(n)
    }
    /// A record written by [`Encoder::record`], borrowing its strings and
    /// bytes from the file.
    pub fn record<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let (record, rest) = postcard::take_from_bytes(self.rest).ok()?;
        self.rest = rest;
        Some(record)
    }
}

/// `bytes` read whole as one record; `None` when they are not exactly
/// one.
pub fn whole<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    let mut r = Decoder { rest: bytes };
    let record = r.record()?;
    r.rest.is_empty().then_some(record)
}

/// A run of records written as one sequence (a `Vec` of them, which
/// postcard writes as its length and then each record), read a record at
/// a time: a section put into a map is not gathered in a vector first, a
/// copy more at the peak. `None` when `bytes` are not exactly that.
pub fn rows<'a, R: Deserialize<'a>>(bytes: &'a [u8]) -> Option<Rows<'a, R>> {
    let (left, rest) = postcard::take_from_bytes::<usize>(bytes).ok()?;
    // Every record takes a byte at least: a larger count is a lie.
    (left <= rest.len()).then_some(Rows {
        r: Decoder { rest },
        left,
        record: std::marker::PhantomData,
    })
}

/// The records [`rows`] reads, each `None` when it does not decode (and
/// one `None` more when bytes are left after the last).
pub struct Rows<'a, R> {
    r: Decoder<'a>,
    left: usize,
    record: std::marker::PhantomData<R>,
}

impl<'a, R: Deserialize<'a>> Iterator for Rows<'a, R> {
    type Item = Option<R>;

    fn next(&mut self) -> Option<Option<R>> {
        if self.left == 0 {
            return (!self.r.rest.is_empty()).then(|| {
                self.r.rest = &[];
                None
            });
        }
        self.left -= 1;
        Some(self.r.record())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, self.left.checked_add(1))
    }
}

/// Deepest value a [`Json`] reads back: what the JSON reader accepts, and
/// the lock's own levels.
pub const MAX_VALUE_DEPTH: usize = crate::json::MAX_DEPTH + 8;

/// A JSON value in a record, exactly: members in their order, numbers as
/// written. Read back no deeper than [`MAX_VALUE_DEPTH`] (a file that
/// nests deeper is refused, not a stack overflow) and without repeated
/// keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Json<'a>(pub Cow<'a, Value>);

/// A JSON object in a record, as [`Json`] writes one.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonObject<'a>(pub Cow<'a, Object>);

/// The variants a value is written as, by their index.
const VARIANTS: &[&str] = &["null", "bool", "number", "string", "array", "object"];

/// An object's members, written as a map.
struct Members<'a>(&'a Object);

impl Serialize for Members<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0.iter() {
            map.serialize_entry(k, &Json(Cow::Borrowed(v)))?;
        }
        map.end()
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &*self.0 {
            Value::Null => s.serialize_unit_variant("Value", 0, VARIANTS[0]),
            Value::Bool(b) => s.serialize_newtype_variant("Value", 1, VARIANTS[1], b),
            Value::Number(n) => s.serialize_newtype_variant("Value", 2, VARIANTS[2], n.lexeme()),
            Value::String(t) => s.serialize_newtype_variant("Value", 3, VARIANTS[3], t),
            Value::Array(items) => {
                s.serialize_newtype_variant("Value", 4, VARIANTS[4], &Items(items))
            }
            Value::Object(o) => s.serialize_newtype_variant("Value", 5, VARIANTS[5], &Members(o)),
        }
    }
}

/// An array's items, written as a sequence.
struct Items<'a>(&'a [Value]);

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(&Json(Cow::Borrowed(item)))?;
        }
        seq.end()
    }
}

impl Serialize for JsonObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Members(&self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Json<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ValueAt(0).deserialize(d).map(|v| Json(Cow::Owned(v)))
    }
}

impl<'de> Deserialize<'de> for JsonObject<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ObjectAt(0))
            .map(|o| JsonObject(Cow::Owned(o)))
    }
}

/// A value nested `.0` levels deep.
#[derive(Clone, Copy)]
struct ValueAt(usize);

/// An object nested `.0` levels deep.
#[derive(Clone, Copy)]
struct ObjectAt(usize);

/// An array nested `.0` levels deep.
#[derive(Clone, Copy)]
struct ArrayAt(usize);

fn too_deep<E: serde::de::Error>(depth: usize) -> Result<(), E> {
    match depth > MAX_VALUE_DEPTH {
        true => Err(E::custom("a value nested too deep")),
        false => Ok(()),
    }
}

impl<'de> DeserializeSeed<'de> for ValueAt {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        too_deep(self.0)?;
        d.deserialize_enum("Value", VARIANTS, self)
    }
}

impl<'de> Visitor<'de> for ValueAt {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (variant, v) = data.variant::<u32>()?;
        Ok(match variant {
            0 => {
                v.unit_variant()?;
                Value::Null
            }
            1 => Value::Bool(v.newtype_variant()?),
            2 => {
                let lexeme: &str = v.newtype_variant()?;
                match crate::json::parse(lexeme.as_bytes()) {
                    Ok((n @ Value::Number(_), _)) => n,
                    _ => return Err(serde::de::Error::custom("not a JSON number")),
                }
            }
            3 => Value::String(v.newtype_variant()?),
            4 => Value::Array(v.newtype_variant_seed(ArrayAt(self.0))?),
            5 => Value::Object(v.newtype_variant_seed(ObjectAt(self.0))?),
            n => {
                return Err(serde::de::Error::custom(format!(
                    "no value is written as variant {n}"
                )))
            }
        })
    }
}

impl<'de> DeserializeSeed<'de> for ArrayAt {
    type Value = Vec<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ArrayAt {
    type Value = Vec<Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(ValueAt(self.0 + 1))? {
            items.push(item);
        }
        Ok(items)
    }
}

impl<'de> DeserializeSeed<'de> for ObjectAt {
    type Value = Object;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Object, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectAt {
    type Value = Object;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
        let mut o = Object::new();
        while let Some(k) = map.next_key::<&str>()? {
            if o.get(k).is_some() {
                return Err(serde::de::Error::custom("a repeated key"));
            }
            let v = map.next_value_seed(ValueAt(self.0 + 1))?;
            o.insert(k.to_string(), v);
        }
        Ok(o)
    }
}

/// A descriptor's field digests in a record: each field's number and
/// digest, 33 bytes a field, as one run of bytes, checked and taken apart
/// only when asked for ([`Fields::digests`]): a reader that does not want
/// them steps over them.
#[derive(Clone, Copy, Debug)]
pub enum Fields<'a> {
    /// To be written.
    Of(&'a FieldDigests),
    /// As read.
    Read(&'a [u8]),
}

impl Fields<'_> {
    /// The digests; `None` for a number that is no descriptor field, or
    /// fields out of order.
    pub fn digests(&self) -> Option<FieldDigests> {
        match self {
            Fields::Of(f) => Some((*f).clone()),
            Fields::Read(bytes) => {
                // As many as there are: a large inventory keeps one list
                // per tool, and one grown by doubling holds room for
                // three more fields in eight (see `FieldDigests`).
                let mut items = Vec::with_capacity(bytes.len() / 33);
                for c in bytes.chunks_exact(33) {
                    items.push((c[0], Digest(c[1..].try_into().ok()?)));
                }
                FieldDigests::from_numbered(items)
            }
        }
    }
}

impl Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Fields::Of(f) => {
                let mut bytes = Vec::with_capacity(f.len() * 33);
                for (field, d) in f.numbered() {
                    bytes.push(field);
                    bytes.extend_from_slice(&d.0);
                }
                s.serialize_bytes(&bytes)
            }
            Fields::Read(bytes) => s.serialize_bytes(bytes),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fields<'a>, D::Error> {
        let bytes = <&[u8]>::deserialize(d)?;
        match bytes.len() % 33 {
            0 => Ok(Fields::Read(bytes)),
            _ => Err(serde::de::Error::custom("field digests of 33 bytes each")),
        }
    }
}

/// An object id in a record, as its bytes (`#[serde(with = "id")]`).
pub mod id {
    use super::*;

    /// Writes `id`'s bytes.
    pub fn serialize<S: Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(id.as_slice())
    }

    /// Reads an id's bytes.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        ObjectId::try_from(<&[u8]>::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// An object id or none in a record (`#[serde(with = "opt_id")]`).
pub mod opt_id {
    use super::*;

    /// The id, as [`id`] writes it.
    struct Id(ObjectId);

    impl Serialize for Id {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            id::serialize(&self.0, s)
        }
    }

    impl<'de> Deserialize<'de> for Id {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
            id::deserialize(d).map(Id)
        }
    }

    /// Writes `id`, if any.
    pub fn serialize<S: Serializer>(id: &Option<ObjectId>, s: S) -> Result<S::Ok, S::Error> {
        id.map(Id).serialize(s)
    }

    /// Reads an id or none.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ObjectId>, D::Error> {
        Ok(Option::<Id>::deserialize(d)?.map(|id| id.0))
    }
}

/// Bytes in a record, written as one run (`#[serde(with = "bytes")]`;
/// serde writes a `&[u8]` as a sequence of numbers).
pub mod bytes {
    use super::*;

    /// Writes `b` as one run.
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(b)
    }

    /// Borrows the run from the file.
    pub fn deserialize<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<&'a [u8], D::Error> {
        <&[u8]>::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
        whole(bytes)
    }

    #[test]
    fn values_read_back_exactly() {
        let text = br#"{"z":[1.50,-0,1e2,"\u00e9\n",true,false,null],"a":{},"m":{"k":[[]]}}"#;
        let (v, _) = crate::json::parse(text).expect("parses");
        let mut out = Encoder(Vec::new());
        out.record(&Json(Cow::Borrowed(&v)));
        let back: Json = read(&out.0).expect("reads");
        assert_eq!(*back.0, v);
        // Same member order and number lexemes: the same bytes again.
        let mut again = Encoder(Vec::new());
        again.record(&back);
        assert_eq!(again.0, out.0);
        // An object alone reads back as one.
        let mut out = Encoder(Vec::new());
        out.record(&JsonObject(Cow::Borrowed(
            v.as_object().expect("an object"),
        )));
        let back: JsonObject = read(&out.0).expect("reads");
        assert_eq!(Value::Object(back.0.into_owned()), v);
    }

    #[test]
    fn a_value_too_deep_or_with_a_repeated_key_is_refused() {
        // Arrays (variant 4) of one item, nested past the limit: refused,
        // not a stack overflow.
        let mut deep: Vec<u8> = [4, 1].repeat(MAX_VALUE_DEPTH + 2);
        deep.push(0);
        assert!(read::<Json>(&deep).is_none());
        let mut shallow: Vec<u8> = [4, 1].repeat(MAX_VALUE_DEPTH);
        shallow.push(0);
        assert!(read::<Json>(&shallow).is_some());
        // An object (variant 5) of two members named `a`.
        assert!(read::<Json>(&[5, 2, 1, b'a', 0, 1, b'a', 0]).is_none());
        assert!(read::<Json>(&[5, 2, 1, b'a', 0, 1, b'b', 0]).is_some());
        // A number that is not one, a variant that is none.
        assert!(read::<Json>(&[2, 1, b'x']).is_none());
        assert!(read::<Json>(&[2, 2, b'1', b'2']).is_some());
        assert!(read::<Json>(&[6]).is_none());
    }

    #[test]
    fn field_digests_read_back_when_asked_for() {
        let mut f = FieldDigests::default();
        f.insert("name", Digest::of(b"n"));
        f.insert("description", Digest::of(b"d"));
        let mut out = Encoder(Vec::new());
        out.record(&Fields::Of(&f));
        let back: Fields = read(&out.0).expect("reads");
        assert_eq!(back.digests(), Some(f));
        // Not whole 33-byte fields; a number that is no field.
        assert!(read::<Fields>(&[2, 0, 0]).is_none());
        let mut bad = vec![33, 200];
        bad.extend_from_slice(&[0; 32]);
        assert_eq!(read::<Fields>(&bad).expect("reads").digests(), None);
    }

    #[test]
    fn the_reader_stops_at_the_end_and_at_lying_counts() {
        let mut out = Encoder(Vec::new());
        out.bytes(b"abc");
        out.record(&(Some("d"), 7u64));
        let mut r = Decoder { rest: &out.0 };
        assert_eq!(r.bytes(), Some(&b"abc"[..]));
        assert_eq!(r.record::<(Option<&str>, u64)>(), Some((Some("d"), 7)));
        assert_eq!(r.u8(), None);
        assert_eq!(r.record::<u8>(), None);
        let lying = 1000u32.to_le_bytes();
        let mut r = Decoder { rest: &lying };
        assert_eq!(r.bytes(), None);
        // A record must be all of what `whole` is given.
        assert_eq!(whole::<u8>(&[1, 2]), None);
        assert_eq!(whole::<u8>(&[1]), Some(1));
        // Rows: a sequence, and nothing after it.
        let mut out = Encoder(Vec::new());
        out.record(&vec![(1u8, "a"), (2, "b")]);
        let read: Option<Vec<(u8, &str)>> = rows(&out.0).expect("a count").collect();
        assert_eq!(read, Some(vec![(1, "a"), (2, "b")]));
        out.0.push(0);
        let read: Option<Vec<(u8, &str)>> = rows(&out.0).expect("a count").collect();
        assert_eq!(read, None);
        assert!(rows::<u8>(&[5, 1]).is_none(), "a lying count");
    }
}
