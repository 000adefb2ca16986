//! DescriptorPin's `pin.json`, format `descriptorpin/pin/1`: a list of
//! tools, each with its descriptor (`name`, `description`,
//! `input_schema`), `hash` (SHA-256 of the descriptor as Python's
//! `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
//! writes it), `digest` (the hash's first 12 digits) and the approval
//! (`approved_by`, `approved_note`).

use serde::{Deserialize, Deserializer};

use super::{descriptor, dumps, sha256_hex, Check, Import, ImportError, Tool};
use crate::json::de::{self, Unknown};
use crate::json::{Object, Value};

/// The one format version this reader knows.
pub const FORMAT: &str = "descriptorpin/pin/1";

/// What DescriptorPin writes when the approver was not given.
const UNSPECIFIED: &str = "[UNSPECIFIED]";

/// A `pin.json`. Each type's fields are in the order they are checked,
/// so that of two faults the first in that order is named.
#[derive(Deserialize)]
struct PinFile<'a> {
    /// Read first, so that a file of another format is refused as such
    /// before its tools are looked at.
    #[serde(rename = "format")]
    _format: Format,
    /// The version of DescriptorPin that wrote it: informative only.
    #[serde(rename = "tool_version")]
    _tool_version: &'a str,
    /// Read one by one, each tool checked before the next is read.
    tools: Vec<Value>,
    #[serde(rename = "$unknown", default)]
    unknown: Unknown,
}

/// [`FORMAT`], refused when the file says another.
struct Format;

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
        let format = String::deserialize(d)?;
        if format != FORMAT {
            return Err(serde::de::Error::custom(format!(
                "unknown format `{format}` (this git-kams reads {FORMAT})"
            )));
        }
        Ok(Format)
    }
}

/// Who a tool is: read and checked before the rest of it.
#[derive(Deserialize)]
struct PinKey<'a> {
    server: &'a str,
    name: &'a str,
    /// `server/name`.
    key: &'a str,
}

/// One approved tool.
#[derive(Deserialize)]
struct PinTool<'a> {
    server: &'a str,
    name: &'a str,
    /// Checked as [`PinKey`] is read.
    #[serde(rename = "key")]
    _key: &'a str,
    hash: &'a str,
    digest: &'a str,
    approved_by: &'a str,
    approved_note: &'a str,
    #[serde(borrow)]
    descriptor: PinDescriptor<'a>,
    #[serde(rename = "$unknown", default)]
    unknown: Unknown,
}

/// What DescriptorPin pinned of a tool.
#[derive(Deserialize)]
struct PinDescriptor<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Object,
    #[serde(rename = "$unknown", default)]
    unknown: Unknown,
}

/// Reads a parsed `pin.json` into `import`.
pub fn read(v: &Value, import: &mut Import) -> Result<(), ImportError> {
    let file: PinFile = de::from_value(v, "")?;
    for (i, t) in file.tools.iter().enumerate() {
        let at = format!("/tools/{i}");
        import.tools.push(tool(t, &at, &mut import.unknown_keys)?);
    }
    import.unknown_keys.extend(file.unknown.0);
    Ok(())
}

fn tool(v: &Value, at: &str, unknown: &mut Vec<String>) -> Result<Tool, ImportError> {
    let id: PinKey = de::from_value(v, at)?;
    if id.key != format!("{}/{}", id.server, id.name) {
        return Err(ImportError::at(
            &format!("{at}/key"),
            "`key` is not `server`/`name`",
        ));
    }
    let t: PinTool = de::from_value(v, at)?;
    let (server, name) = (t.server, t.name);
    let d = t.descriptor;
    let d_at = format!("{at}/descriptor");
    unknown.extend(d.unknown.0);
    unknown.extend(t.unknown.0);
    if d.name != name {
        return Err(ImportError::at(
            &format!("{d_at}/name"),
            "the descriptor's name is not the tool's `name`",
        ));
    }
    let schema = Value::Object(d.input_schema);
    // The hash covers the three fields exactly as stored: DescriptorPin
    // stores them already canonical (strings trimmed, keys sorted), so a
    // file it wrote matches; one edited since does not, even where
    // DescriptorPin's own trimming would have hidden the edit.
    let mut pinned = Object::new();
    pinned.insert("description".into(), Value::String(d.description.into()));
    pinned.insert("input_schema".into(), schema.clone());
    pinned.insert("name".into(), Value::String(name.into()));
    let computed = sha256_hex(&dumps(&Value::Object(pinned), false));
    let check = if t.hash != computed {
        Check::Mismatch {
            key: "hash".into(),
            stored: t.hash.into(),
            computed,
        }
    } else if t.digest != &computed[..12] {
        Check::Mismatch {
            key: "digest".into(),
            stored: t.digest.into(),
            computed: computed[..12].into(),
        }
    } else {
        Check::Verified
    };
    let approved_by = t.approved_by.trim();
    Ok(Tool {
        server: server.into(),
        name: name.into(),
        descriptor: descriptor(name, d.description, &schema, &d_at)?,
        approver: (!approved_by.is_empty() && approved_by != UNSPECIFIED)
            .then(|| approved_by.to_string()),
        note: t.approved_note.trim().into(),
        pointer: at.into(),
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Source};
    use super::*;
    use crate::json;

    const ONE: &str = r#"{"format":"descriptorpin/pin/1","tool_version":"1.0.1","tools":[{"approved_by":"Ann <ann@example.com>","approved_note":"ok","descriptor":{"description":"Echo.","input_schema":{"type":"object"},"name":"echo"},"digest":"HASH12","hash":"HASH","key":"s/echo","name":"echo","server":"s"}]}"#;

    fn with_hash(text: &str) -> String {
        // sha256 of {"description":"Echo.","input_schema":{"type":"object"},"name":"echo"}
        let h =
            sha256_hex(r#"{"description":"Echo.","input_schema":{"type":"object"},"name":"echo"}"#);
        text.replace("HASH12", &h[..12]).replace("HASH", &h)
    }

    #[test]
    fn a_file_descriptorpin_wrote_verifies() {
        let i = parse(Source::DescriptorPin, with_hash(ONE).as_bytes()).unwrap();
        assert_eq!(i.tools.len(), 1);
        let t = &i.tools[0];
        assert_eq!(t.check, Check::Verified);
        assert_eq!(t.approver.as_deref(), Some("Ann <ann@example.com>"));
        assert_eq!(
            t.descriptor.get("inputSchema"),
            Some(&json::parse(br#"{"type":"object"}"#).unwrap().0)
        );
        assert!(i.unknown_keys.is_empty());
    }

    #[test]
    fn an_edited_description_or_a_padded_one_does_not_verify() {
        for edit in ["Echo!", " Echo."] {
            let text = with_hash(ONE).replace("\"Echo.\"", &format!("\"{edit}\""));
            let i = parse(Source::DescriptorPin, text.as_bytes()).unwrap();
            assert!(
                matches!(&i.tools[0].check, Check::Mismatch { key, .. } if key == "hash"),
                "{edit}"
            );
        }
    }

    #[test]
    fn unknown_format_and_inconsistent_names_are_errors() {
        let text = with_hash(ONE).replace("pin/1", "pin/2");
        let e = parse(Source::DescriptorPin, text.as_bytes()).unwrap_err();
        assert_eq!(e.pointer, "/format");
        let text = with_hash(ONE).replace("\"s/echo\"", "\"t/echo\"");
        let e = parse(Source::DescriptorPin, text.as_bytes()).unwrap_err();
        assert_eq!(e.pointer, "/tools/0/key");
    }

    #[test]
    fn unspecified_approver_and_unknown_keys_are_reported() {
        let text = with_hash(ONE)
            .replace("Ann <ann@example.com>", UNSPECIFIED)
            .replace("\"key\"", "\"extra\":1,\"key\"");
        let i = parse(Source::DescriptorPin, text.as_bytes()).unwrap();
        assert_eq!(i.tools[0].approver, None);
        assert_eq!(i.unknown_keys, ["/tools/0/extra"]);
    }

    #[test]
    fn unknown_keys_are_listed_descriptor_first_then_tool_then_file() {
        let text = with_hash(ONE)
            .replacen("{\"format\"", "{\"z\":0,\"format\"", 1)
            .replace("\"key\"", "\"b\":1,\"a/\":1,\"key\"")
            .replace("\"name\":\"echo\"},", "\"name\":\"echo\",\"$unknown\":2},");
        let i = parse(Source::DescriptorPin, text.as_bytes()).unwrap();
        assert_eq!(
            i.unknown_keys,
            [
                "/tools/0/descriptor/$unknown",
                "/tools/0/b",
                "/tools/0/a~1",
                "/z"
            ]
        );
    }

    #[test]
    fn the_first_fault_in_the_order_fields_are_checked_is_named() {
        let e = parse(Source::DescriptorPin, br#"{"tools":{},"format":1}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected a string, found a number (JSON pointer /format)"
        );
        let text = with_hash(ONE).replace("\"approved_note\":\"ok\",", "");
        let e = parse(Source::DescriptorPin, text.as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "missing `approved_note` (JSON pointer /tools/0)"
        );
    }
}
