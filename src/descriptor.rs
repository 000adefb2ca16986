//! The part of a tool or server that reaches the model, in canonical form,
//! and its digests.
//!
//! Only fields that enter the model's context or constrain its calls are
//! digested (name, title, description, inputSchema, outputSchema,
//! annotations for a tool; instructions, serverInfo, prompts, resources
//! and resource templates for a server). Transport details such as
//! `execution`, `_meta` and `icons` stay out: they are not what a reviewer
//! approves when approving a descriptor.

use std::collections::BTreeMap;

use crate::canon::{nfc, normalize, Digest};
use crate::json::{Object, Value};

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

/// A canonical descriptor (NFC, `description`/`title` trimmed) and its digests.
#[derive(Clone, Debug, PartialEq)]
pub struct Descriptor {
    /// The digested fields, each already canonical.
    pub fields: Object,
    /// SHA-256 of the canonical form of the whole descriptor.
    pub digest: Digest,
    /// SHA-256 of the canonical form of each present field.
    pub field_digests: BTreeMap<String, Digest>,
}

impl Descriptor {
    /// Canonicalises `fields` (any order, any normalisation) and digests it.
    /// Returns the JSON pointers of keys that collide after NFC.
    pub fn new(fields: Object) -> (Descriptor, Vec<String>) {
        let mut collisions = Vec::new();
        let mut canon = Object::new();
        for (key, value) in fields.iter() {
            let mut at = String::from("/");
            crate::json::push_pointer_token(&mut at, key);
            let v = match (key.as_str(), value) {
                ("description" | "title", Value::String(s)) => {
                    // ASCII whitespace only: other Unicode spaces (U+2028,
                    // U+0085...) can conceal text and must reach the digest.
                    Value::String(nfc(s.trim_matches([' ', '\t', '\n', '\r'])).into_owned())
                }
                _ => normalize(value, &mut at, &mut collisions),
            };
            canon.insert(key.clone(), v);
        }
        (Descriptor::from_canonical(canon), collisions)
    }

    /// Digests fields that are already canonical (as stored in the lock).
    pub fn from_canonical(fields: Object) -> Descriptor {
        let field_digests = fields
            .iter()
            .map(|(k, v)| (k.clone(), Digest::of_value(v)))
            .collect();
        let digest = Digest::of_value(&Value::Object(fields.clone()));
        Descriptor {
            fields,
            digest,
            field_digests,
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
