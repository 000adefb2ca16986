//! Derived types read from a document the strict reader parsed: a serde
//! `Deserializer` over a [`Value`], so that a foreign file is read through
//! `#[derive(Deserialize)]` types and still keeps what only our reader
//! sees.
//!
//! Why not `serde_json::from_slice` into the same types: its errors name a
//! line and column and serde's words ("invalid type: sequence, expected a
//! map"), where ours name the JSON pointer in the words our documentation
//! promises ("expected an object, found an array"); its numbers beyond 64
//! bits are rounded, where ours keep the lexeme they were written with;
//! and it would be a second parse of bytes the strict reader must read
//! first anyway, for the duplicate keys serde_json does not show.
//!
//! What a derived type can count on:
//! - its fields are read in the order it declares them, so that the first
//!   fault named is the first in that order; a field that is absent is
//!   `missing `name`` at the object's pointer, in its turn (an `Option`
//!   is `None`; `#[serde(default)]` has no effect but on [`UNKNOWN`]);
//! - a field renamed [`UNKNOWN`] (a [`Unknown`], `#[serde(default)]`)
//!   receives the pointers of the object's members the type does not name,
//!   in file order;
//! - [`Value`] and [`Object`] fields receive their subtree as read (members
//!   in file order, numbers with their lexeme), and [`Ordered`] an object's
//!   members in file order.

use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{forward_to_deserialize_any, Deserialize};

use super::pointer::push_pointer_token;
use super::value::{Number, Object, Value};

/// The field name that receives the pointers of the members a type does
/// not name.
pub const UNKNOWN: &str = "$unknown";

/// The one key of the map a number is handed over as, its value the
/// lexeme (as serde_json's `arbitrary_precision` does), so that a
/// [`Value`] keeps it.
const NUMBER: &str = "$kams::json::Number";

/// Reads `value`, found at the JSON pointer `at`, as a `T`.
pub fn from_value<'de, T: Deserialize<'de>>(value: &'de Value, at: &str) -> Result<T, Error> {
    read(
        std::marker::PhantomData,
        Node {
            value,
            at: at.to_string(),
        },
    )
}

/// `node` read by `seed`, a fault not placed deeper placed at `node`
/// (what a type's own check refuses, or a member it misses).
fn read<'de, T: DeserializeSeed<'de>>(seed: T, node: Node<'de>) -> Result<T::Value, Error> {
    let at = node.at.clone();
    seed.deserialize(node).map_err(|e| e.placed(&at))
}

/// Why a value is not what a type expects, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What was wrong.
    pub message: String,
    /// JSON pointer of the fault.
    pub pointer: String,
}

impl Error {
    /// An error not yet placed: the value whose reading returns it gives
    /// its pointer ([`read`]).
    fn new(message: String) -> Error {
        Error {
            message,
            pointer: UNPLACED.to_string(),
        }
    }

    fn at(at: &str, message: String) -> Error {
        Error {
            message,
            pointer: at.to_string(),
        }
    }

    fn placed(mut self, at: &str) -> Error {
        if self.pointer == UNPLACED {
            self.pointer = at.to_string();
        }
        self
    }
}

/// The pointer of an error not yet placed: no JSON pointer starts with
/// `#` (RFC 6901 pointers are empty or start with `/`).
const UNPLACED: &str = "#";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (JSON pointer {})", self.message, self.pointer)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Error {
        Error::new(message.to_string())
    }

    fn invalid_type(unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Error {
        Error::new(format!("expected {expected}, found {unexpected}"))
    }
}

/// The pointers of an object's members that its type does not name (see
/// [`UNKNOWN`]).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Unknown(pub Vec<String>);

/// An object's members in file order, each read as a `T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ordered<T>(pub Vec<(String, T)>);

/// One value of the document and its pointer.
struct Node<'de> {
    value: &'de Value,
    at: String,
}

impl<'de> Node<'de> {
    /// The pointer of this object's member `key`.
    fn pointer(&self, key: &str) -> String {
        let mut at = self.at.clone();
        at.push('/');
        push_pointer_token(&mut at, key);
        at
    }

    /// The member `key` of this object, whose value is `value`.
    fn member(&self, key: &str, value: &'de Value) -> Node<'de> {
        Node {
            value,
            at: self.pointer(key),
        }
    }

    fn wrong(&self, expected: &str) -> Error {
        Error::at(
            &self.at,
            format!("expected {expected}, found {}", self.value.kind()),
        )
    }

    fn object(&self) -> Result<&'de Object, Error> {
        self.value
            .as_object()
            .ok_or_else(|| self.wrong("an object"))
    }
}

impl<'de> Deserializer<'de> for Node<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visitor.visit_map(NumberAccess(Some(n.lexeme()))),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Items {
                items: items.iter().enumerate(),
                at: &self.at,
            }),
            Value::Object(o) => visitor.visit_map(Members {
                node: &self,
                members: o.members.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            _ => Err(self.wrong("true or false")),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(self.wrong("a string")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // Integers as such when they are, so that the visitor's own range
        // check applies; any other number as a double.
        match self.value {
            Value::Number(n) => match (n.lexeme().parse::<u64>(), n.lexeme().parse::<i64>()) {
                (Ok(u), _) => visitor.visit_u64(u),
                (_, Ok(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f64(n.as_f64()),
            },
            _ => Err(self.wrong("a number")),
        }
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(items) => visitor.visit_seq(Items {
                items: items.iter().enumerate(),
                at: &self.at,
            }),
            _ => Err(self.wrong("an array")),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let object = self.object()?;
        visitor.visit_map(Members {
            node: &self,
            members: object.members.iter(),
            value: None,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let object = self.object()?;
        let unknown = fields.contains(&UNKNOWN).then(|| {
            object
                .iter()
                .filter(|(k, _)| *k == UNKNOWN || !fields.contains(&k.as_str()))
                .map(|(k, _)| self.pointer(k))
                .collect()
        });
        visitor.visit_map(Fields {
            node: &self,
            object,
            fields: fields.iter(),
            unknown,
            value: None,
        })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u32 u128 f32 char bytes byte_buf unit
        unit_struct tuple tuple_struct enum identifier
    }
}

/// An array's items, each with its pointer.
struct Items<'a, 'de> {
    items: std::iter::Enumerate<std::slice::Iter<'de, Value>>,
    at: &'a str,
}

impl<'de> SeqAccess<'de> for Items<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((i, value)) = self.items.next() else {
            return Ok(None);
        };
        let at = format!("{}/{i}", self.at);
        read(seed, Node { value, at }).map(Some)
    }
}

/// All of an object's members, in file order.
struct Members<'a, 'de> {
    node: &'a Node<'de>,
    members: std::slice::Iter<'de, (String, Value)>,
    value: Option<Node<'de>>,
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((k, v)) = self.members.next() else {
            return Ok(None);
        };
        self.value = Some(self.node.member(k, v));
        seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        read(seed, self.value.take().expect("a key before its value"))
    }
}

/// The members of an object that a struct names, in the order it
/// declares them, each when its turn comes: present, missing, or the
/// members it does not name (see [`UNKNOWN`]).
struct Fields<'a, 'de> {
    node: &'a Node<'de>,
    object: &'de Object,
    fields: std::slice::Iter<'static, &'static str>,
    unknown: Option<Vec<String>>,
    value: Option<Field<'de>>,
}

/// What a struct's field reads.
enum Field<'de> {
    Present(Node<'de>),
    Missing(Missing),
    Unknown(Vec<String>),
}

impl<'de> MapAccess<'de> for Fields<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(&field) = self.fields.next() else {
            return Ok(None);
        };
        self.value = Some(match (field == UNKNOWN, self.object.get(field)) {
            (true, _) => Field::Unknown(self.unknown.take().unwrap_or_default()),
            (false, Some(v)) => Field::Present(self.node.member(field, v)),
            (false, None) => Field::Missing(Missing {
                field,
                at: self.node.at.clone(),
            }),
        });
        seed.deserialize(BorrowedStrDeserializer::new(field))
            .map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take().expect("a key before its value") {
            Field::Present(node) => read(seed, node),
            Field::Missing(missing) => seed.deserialize(missing),
            Field::Unknown(unknown) => seed.deserialize(SeqDeserializer::new(unknown.into_iter())),
        }
    }
}

/// A field the object does not have: `None` to an `Option`, else
/// `missing `field``, at the object's pointer, when its turn comes (not
/// after the fields declared after it, as serde would say it).
struct Missing {
    field: &'static str,
    at: String,
}

impl<'de> Deserializer<'de> for Missing {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(Error::at(&self.at, format!("missing `{}`", self.field)))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_none()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple tuple_struct
        map struct enum identifier ignored_any
    }
}

/// A number, handed over as a map of one member (see [`NUMBER`]).
struct NumberAccess<'de>(Option<&'de str>);

impl<'de> MapAccess<'de> for NumberAccess<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.0 {
            Some(_) => seed
                .deserialize(BorrowedStrDeserializer::new(NUMBER))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        let lexeme = self.0.take().expect("a key before its value");
        seed.deserialize(BorrowedStrDeserializer::new(lexeme))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Object, D::Error> {
        d.deserialize_map(ValueVisitor).and_then(|v| match v {
            Value::Object(o) => Ok(o),
            // A number's map, from this module's deserializer only for a
            // number, which `deserialize_map` refuses first.
            v => Err(de::Error::custom(format!(
                "expected an object, found {}",
                v.kind()
            ))),
        })
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered<T>, D::Error> {
        struct Members<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Members<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered<T>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Ordered(members))
            }
        }
        d.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// Builds a [`Value`] from whatever a deserializer hands over.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        number(&n.to_string())
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        number(&n.to_string())
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{n} is not a JSON number")))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Object::new();
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(object));
        };
        if first == NUMBER {
            return number(&map.next_value::<String>()?);
        }
        object.insert(first, map.next_value()?);
        while let Some((k, v)) = map.next_entry()? {
            object.insert(k, v);
        }
        Ok(Value::Object(object))
    }
}

/// The number written `lexeme`.
fn number<E: de::Error>(lexeme: &str) -> Result<Value, E> {
    match super::parse(lexeme.as_bytes()) {
        Ok((v @ Value::Number(_), _)) => Ok(v),
        _ => Err(E::custom(format!("`{lexeme}` is not a JSON number"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        super::super::parse(text.as_bytes()).expect("parses").0
    }

    #[derive(Debug, Deserialize)]
    struct Tool<'a> {
        name: &'a str,
        enabled: bool,
        schema: Object,
        tags: Vec<String>,
        #[serde(rename = "$unknown", default)]
        unknown: Unknown,
    }

    #[test]
    fn a_derived_type_reads_members_and_lists_the_unknown_ones() {
        let v = parse(
            r#"{"x":1,"tags":["a"],"name":"n","schema":{"b":1.50,"a":[123456789012345678901234567890]},"enabled":true,"a/b":{}}"#,
        );
        let t: Tool = from_value(&v, "/tools/0").expect("reads");
        assert_eq!(
            (t.name, t.enabled, &t.tags[..]),
            ("n", true, &["a".to_string()][..])
        );
        // Members in file order, numbers as written.
        let keys: Vec<&String> = t.schema.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["b", "a"]);
        match t.schema.get("b") {
            Some(Value::Number(n)) => assert_eq!(n.lexeme(), "1.50"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            Value::Object(t.schema),
            parse(r#"{"b":1.5,"a":[1.2345678901234568e29]}"#)
        );
        assert_eq!(t.unknown.0, ["/tools/0/x", "/tools/0/a~1b"]);
    }

    #[test]
    fn faults_are_named_in_our_words_at_their_pointer() {
        let cases = [
            (r#"[]"#, "expected an object, found an array", ""),
            (
                r#"{"name":1,"enabled":true,"schema":{},"tags":[]}"#,
                "expected a string, found a number",
                "/name",
            ),
            (
                r#"{"name":"n","enabled":null,"schema":{},"tags":[]}"#,
                "expected true or false, found null",
                "/enabled",
            ),
            (
                r#"{"name":"n","enabled":true,"schema":[],"tags":[]}"#,
                "expected an object, found an array",
                "/schema",
            ),
            (
                r#"{"name":"n","enabled":true,"schema":{},"tags":[1]}"#,
                "expected a string, found a number",
                "/tags/0",
            ),
            (
                r#"{"name":"n","enabled":true,"schema":{},"tags":{}}"#,
                "expected an array, found an object",
                "/tags",
            ),
            (
                r#"{"name":"n","enabled":true,"tags":[]}"#,
                "missing `schema`",
                "",
            ),
        ];
        for (text, message, pointer) in cases {
            let v = parse(text);
            let e = from_value::<Tool>(&v, "").expect_err(text);
            assert_eq!(
                (e.message.as_str(), e.pointer.as_str()),
                (message, pointer),
                "{text}"
            );
        }
    }

    #[test]
    fn the_first_fault_in_declared_order_is_named() {
        // Fields are read as declared (name, enabled...), not as written.
        let v = parse(r#"{"tags":[1],"schema":{},"enabled":1,"name":"n"}"#);
        let e = from_value::<Tool>(&v, "").expect_err("two faults");
        assert_eq!(e.pointer, "/enabled");
        // A missing field in its turn, too.
        let v = parse(r#"{"tags":[1],"schema":{},"name":"n"}"#);
        let e = from_value::<Tool>(&v, "").expect_err("two faults");
        assert_eq!(
            (e.message.as_str(), e.pointer.as_str()),
            ("missing `enabled`", "")
        );
    }

    #[test]
    fn an_object_keeps_its_order_and_a_value_its_numbers() {
        let v = parse(r#"{"z":{"n":-0},"a":{"n":12345678901234567890123}}"#);
        let o: Ordered<Value> = from_value(&v, "").expect("reads");
        let keys: Vec<&str> = o.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a"]);
        match o.0[1].1.get("n") {
            Some(Value::Number(n)) => assert_eq!(n.lexeme(), "12345678901234567890123"),
            other => panic!("{other:?}"),
        }
        let n: u8 = from_value(&parse("300"), "/n").map_or(0, |n| n);
        assert_eq!(n, 0, "out of range for the type");
    }
}
