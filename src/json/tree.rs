//! The tree the detectors read: a tool as sent, whose strings and keys
//! are borrowed from the tool's JSON text when they hold no escape (nearly
//! all do not). A cold scan parses 100,000 tools for the detectors, each
//! once and for a moment; a [`Value`] copied every string and key of each
//! into an allocation of its own (docs/performance.md, "Issue 26: a tree
//! that borrows").

use std::borrow::Cow;

use super::value::{Object, Value};

/// A JSON value borrowed from a text (or from a [`Value`]), object
/// members in input order.
#[derive(Clone, Debug, PartialEq)]
pub enum Tree<'a> {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, as it was written (validated as a finite double).
    Number(&'a str),
    /// A string, unescaped: borrowed when it held no escape.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Tree<'a>>),
    /// An object; keys are unique (of two, the last value is kept, in the
    /// place of the first, as in a [`Value`]).
    Object(Members<'a>),
}

/// An object's members in input order, keys unique.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Members<'a> {
    pub(super) members: Vec<(Cow<'a, str>, Tree<'a>)>,
}

impl<'a> Members<'a> {
    /// The members of `o`, borrowed.
    pub fn of(o: &'a Object) -> Members<'a> {
        Members {
            members: o
                .iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Tree::of(v)))
                .collect(),
        }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Tree<'a>> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Members in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tree<'a>)> {
        self.members.iter().map(|(k, v)| (&**k, v))
    }
}

impl<'a> Tree<'a> {
    /// `v`, borrowed.
    pub fn of(v: &'a Value) -> Tree<'a> {
        match v {
            Value::Null => Tree::Null,
            Value::Bool(b) => Tree::Bool(*b),
            Value::Number(n) => Tree::Number(n.lexeme()),
            Value::String(s) => Tree::String(Cow::Borrowed(s)),
            Value::Array(items) => Tree::Array(items.iter().map(Tree::of).collect()),
            Value::Object(o) => Tree::Object(Members::of(o)),
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tree::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Tree::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Members<'a>> {
        match self {
            Tree::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Tree<'a>]> {
        match self {
            Tree::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Tree<'a>> {
        self.as_object().and_then(|o| o.get(key))
    }
}
