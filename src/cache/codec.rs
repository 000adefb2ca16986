//! The binary layout every cache file is written in: little-endian
//! numbers, length-prefixed bytes, and the project's values (JSON values,
//! digests, object ids), with a reader that answers `None` past its end or
//! on anything it does not expect, so that a damaged file is only ever a
//! miss. [`super::store`] seals and names the files.

use gix::ObjectId;

use super::log::IdMap;
use crate::canon::Digest;
use crate::descriptor::FieldDigests;
use crate::json::{Object, Value};

/// Deepest value [`Decoder::value`] reads back: what the JSON reader accepts,
/// and the lock's own levels.
pub(super) const MAX_VALUE_DEPTH: usize = crate::json::MAX_DEPTH + 8;

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
    /// 0, or 1 and the string.
    pub fn opt(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.0.push(1);
                self.bytes(s.as_bytes());
            }
            None => self.0.push(0),
        }
    }
    /// A JSON value exactly: members in their order, numbers as written.
    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.0.push(0),
            Value::Bool(b) => self.0.push(1 + u8::from(*b)),
            Value::Number(n) => {
                self.0.push(3);
                self.bytes(n.lexeme().as_bytes());
            }
            Value::String(s) => {
                self.0.push(4);
                self.bytes(s.as_bytes());
            }
            Value::Array(items) => {
                self.0.push(5);
                self.u32(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(o) => {
                self.0.push(6);
                self.object(o);
            }
        }
    }
    /// An object's members, in their order.
    pub fn object(&mut self, o: &Object) {
        self.u32(o.len());
        for (k, v) in o.iter() {
            self.bytes(k.as_bytes());
            self.value(v);
        }
    }
    /// A digest's 32 bytes.
    pub fn digest(&mut self, d: &Digest) {
        self.0.extend_from_slice(&d.0);
    }
    /// 0, or 1 and the digest.
    pub fn opt_digest(&mut self, d: Option<&Digest>) {
        match d {
            Some(d) => {
                self.0.push(1);
                self.digest(d);
            }
            None => self.0.push(0),
        }
    }
    /// Each field's number and digest.
    pub fn field_digests(&mut self, f: &FieldDigests) {
        self.u32(f.len());
        for (field, d) in f.numbered() {
            self.0.push(field);
            self.digest(d);
        }
    }
    /// 0, or 1 and the id's bytes.
    pub fn id(&mut self, id: Option<ObjectId>) {
        match id {
            Some(id) => {
                self.0.push(1);
                self.0.extend_from_slice(id.as_slice());
            }
            None => self.0.push(0),
        }
    }
}

/// A reader of the layout: every getter is `None` past its end.
pub struct Decoder<'a> {
    /// What is left to read.
    pub rest: &'a [u8],
    /// The length of an object id in this file.
    pub id_len: usize,
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
    /// 8 bytes, signed.
    pub fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// 8 bytes, unsigned.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A byte that must be 0 or 1.
    pub fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
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
    /// A count, then that many ids, each followed by its value.
    pub fn id_map<T>(&mut self, mut value: impl FnMut(&mut Self) -> Option<T>) -> Option<IdMap<T>> {
        let n = self.count()?;
        let mut map = IdMap::default();
        map.reserve(n);
        for _ in 0..n {
            let id = self.id()?;
            map.insert(id, value(self)?);
        }
        Some(map)
    }
    /// A length, then that many bytes.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.count()?;
        self.take(n)
    }
    /// [`Decoder::bytes`] that are UTF-8.
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
    /// 0 and `None`, or 1 and a string.
    pub fn opt(&mut self) -> Option<Option<&'a str>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.str()?)),
            _ => None,
        }
    }
    /// A value written by [`Encoder::value`].
    pub fn value(&mut self) -> Option<Value> {
        self.value_at(0)
    }
    fn value_at(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_VALUE_DEPTH {
            return None;
        }
        Some(match self.u8()? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => match crate::json::parse(self.bytes()?).ok()?.0 {
                v @ Value::Number(_) => v,
                _ => return None,
            },
            4 => Value::String(self.str()?.to_string()),
            5 => {
                let n = self.count()?;
                let mut items = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    items.push(self.value_at(depth + 1)?);
                }
                Value::Array(items)
            }
            6 => Value::Object(self.object_at(depth)?),
            _ => return None,
        })
    }
    /// An object written by [`Encoder::object`]; `None` for a repeated key.
    pub fn object(&mut self) -> Option<Object> {
        self.object_at(0)
    }
    fn object_at(&mut self, depth: usize) -> Option<Object> {
        let mut o = Object::new();
        for _ in 0..self.count()? {
            let k = self.str()?.to_string();
            if o.get(&k).is_some() {
                return None;
            }
            let v = self.value_at(depth + 1)?;
            o.insert(k, v);
        }
        Some(o)
    }
    /// A digest's 32 bytes.
    pub fn digest(&mut self) -> Option<Digest> {
        Some(Digest(self.take(32)?.try_into().ok()?))
    }
    /// A digest written by [`Encoder::opt_digest`]: `Some(None)` for none.
    pub fn opt_digest(&mut self) -> Option<Option<Digest>> {
        match self.bool()? {
            false => Some(None),
            true => self.digest().map(Some),
        }
    }
    /// Field digests written by [`Encoder::field_digests`]; `None` for a
    /// number that is no descriptor field, or fields out of order.
    pub fn field_digests(&mut self) -> Option<FieldDigests> {
        let n = self.count()?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push((self.u8()?, self.digest()?));
        }
        FieldDigests::from_numbered(items)
    }
    /// Steps over what [`Decoder::field_digests`] reads, checking only that
    /// it is there.
    pub fn skip_field_digests(&mut self) -> Option<()> {
        let n = self.count()?;
        self.take(n.checked_mul(33)?).map(drop)
    }
    /// An object id.
    pub fn id(&mut self) -> Option<ObjectId> {
        ObjectId::try_from(self.take(self.id_len)?).ok()
    }
    /// 0 and `None`, or 1 and an id.
    pub fn opt_id(&mut self) -> Option<Option<ObjectId>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.id()?)),
            _ => None,
        }
    }
}
