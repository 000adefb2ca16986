//! What a parsed document holds: values whose objects keep their members
//! in input order (so that positions and pointers can be found again) and
//! whose numbers keep the lexeme they were written with.

/// A JSON value with object members in input order.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, kept as its validated lexeme; see [`Number::as_f64`].
    Number(Number),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object; keys are unique (duplicates were reported and the last kept).
    Object(Object),
}

/// A JSON number: its lexeme, known to be a finite IEEE 754 double. Two
/// numbers are equal when their values are (`1`, `1.0` and `1e0` are one
/// number, as in the canonical form).
#[derive(Clone, Debug)]
pub struct Number {
    pub(super) lexeme: String,
    pub(super) value: f64,
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.value == other.value
    }
}

impl Number {
    /// The number as a double, the value RFC 8785 canonicalises.
    pub fn as_f64(&self) -> f64 {
        self.value
    }

    /// The number as it was written.
    pub fn lexeme(&self) -> &str {
        &self.lexeme
    }

    /// A number from a finite double (used when building values in code).
    pub fn from_f64(value: f64) -> Option<Number> {
        value.is_finite().then(|| Number {
            lexeme: ryu_js::Buffer::new().format_finite(value).to_string(),
            value,
        })
    }
}

/// An object's members in input order, keys unique. Equality ignores the
/// order of members, as JSON does.
#[derive(Clone, Debug, Default)]
pub struct Object {
    pub(super) members: Vec<(String, Value)>,
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.members.len() == other.members.len()
            && self.members.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object::default()
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, replacing an earlier value in place.
    pub fn insert(&mut self, key: String, value: Value) {
        match self.members.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.members.push((key, value)),
        }
    }

    /// Members in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.members.iter().map(|(k, v)| (k, v))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// True when the object has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

impl IntoIterator for Object {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.into_iter()
    }
}

impl FromIterator<(String, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Object {
        let mut o = Object::new();
        for (k, v) in iter {
            o.insert(k, v);
        }
        o
    }
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// The JSON type name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}
