//! DescriptorPin's `pin.json`, format `descriptorpin/pin/1`: a list of
//! tools, each with its descriptor (`name`, `description`,
//! `input_schema`), `hash` (SHA-256 of the descriptor as Python's
//! `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
//! writes it), `digest` (the hash's first 12 digits) and the approval
//! (`approved_by`, `approved_note`).

use super::{descriptor, dumps, sha256_hex, Check, Import, ImportError, Members, Tool};
use crate::json::{Object, Value};

/// The one format version this reader knows.
pub const FORMAT: &str = "descriptorpin/pin/1";

/// What DescriptorPin writes when the approver was not given.
const UNSPECIFIED: &str = "[UNSPECIFIED]";

/// Reads a parsed `pin.json` into `import`.
pub fn read(v: &Value, import: &mut Import) -> Result<(), ImportError> {
    let mut top = Members::new(v, "")?;
    let format = top.string("format")?;
    if format != FORMAT {
        return Err(ImportError::at(
            "/format",
            format!("unknown format `{format}` (this git-kams reads {FORMAT})"),
        ));
    }
    // The version of DescriptorPin that wrote it: informative only.
    let _ = top.string("tool_version")?;
    let (tools, at) = top.get("tools")?;
    let Value::Array(tools) = tools else {
        return Err(ImportError::at(
            &at,
            format!("expected an array, found {}", tools.kind()),
        ));
    };
    for (i, t) in tools.iter().enumerate() {
        let at = format!("/tools/{i}");
        import.tools.push(tool(t, &at, &mut import.unknown_keys)?);
    }
    top.finish(&mut import.unknown_keys);
    Ok(())
}

fn tool(v: &Value, at: &str, unknown: &mut Vec<String>) -> Result<Tool, ImportError> {
    let mut m = Members::new(v, at)?;
    let server = m.string("server")?;
    let name = m.string("name")?;
    let key = m.string("key")?;
    if key != format!("{server}/{name}") {
        return Err(ImportError::at(
            &m.pointer("key"),
            "`key` is not `server`/`name`",
        ));
    }
    let hash = m.string("hash")?;
    let digest = m.string("digest")?;
    let approved_by = m.string("approved_by")?.trim();
    let note = m.string("approved_note")?.trim();
    let (d, d_at) = m.object("descriptor")?;
    let mut dm = Members::new(d, &d_at)?;
    let d_name = dm.string("name")?;
    let description = dm.string("description")?;
    let (schema, _) = dm.object("input_schema")?;
    dm.finish(unknown);
    m.finish(unknown);
    if d_name != name {
        return Err(ImportError::at(
            &format!("{d_at}/name"),
            "the descriptor's name is not the tool's `name`",
        ));
    }
    // The hash covers the three fields exactly as stored: DescriptorPin
    // stores them already canonical (strings trimmed, keys sorted), so a
    // file it wrote matches; one edited since does not, even where
    // DescriptorPin's own trimming would have hidden the edit.
    let mut pinned = Object::new();
    pinned.insert("description".into(), Value::String(description.into()));
    pinned.insert("input_schema".into(), schema.clone());
    pinned.insert("name".into(), Value::String(name.into()));
    let computed = sha256_hex(&dumps(&Value::Object(pinned), false));
    let check = if hash != computed {
        Check::Mismatch {
            key: "hash".into(),
            stored: hash.into(),
            computed,
        }
    } else if digest != &computed[..12] {
        Check::Mismatch {
            key: "digest".into(),
            stored: digest.into(),
            computed: computed[..12].into(),
        }
    } else {
        Check::Verified
    };
    Ok(Tool {
        server: server.into(),
        name: name.into(),
        descriptor: descriptor(name, description, schema, &d_at)?,
        approver: (!approved_by.is_empty() && approved_by != UNSPECIFIED)
            .then(|| approved_by.to_string()),
        note: note.into(),
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
}
