//! kams's `kams.lock`, version 1: JSON, servers by name, each with
//! `pinned` and its tools by name; a tool holds `name`, `description`,
//! `input_schema` and three hashes, each the first 16 hex digits of a
//! SHA-256: `digest` of `{"description", "inputSchema", "name"}`,
//! `schema_digest` of the input schema (both serialised sorted and compact,
//! as Python's `json.dumps(..., sort_keys=True, separators=(",", ":"))`
//! writes them) and
//! `description_digest` of the description's UTF-8. kams records no
//! approver, note or time.
//!
//! These rules are inferred from files kams wrote, not from its source or
//! documentation; their text is all ASCII, where Python's `json.dumps` and
//! RFC 8785 write the same bytes, so how kams writes other characters and
//! numbers is unknown: Python with and without `ensure_ascii` and RFC 8785
//! are all accepted (a tampered description matches none of them).

use serde::{Deserialize, Deserializer};

use super::{descriptor, dumps, sha256_hex, Check, Import, ImportError, Tool};
use crate::json::de::{self, Ordered, Unknown};
use crate::json::{Object, Value};

/// The one format version this reader knows.
pub const VERSION: u64 = 1;

/// A kams lock. Each type's fields are in the order they are checked, so
/// that of two faults the first in that order is named.
#[derive(Deserialize)]
struct KamsLock {
    /// Read first, so that a lock of another version is refused as such
    /// before its servers are looked at.
    #[serde(rename = "version")]
    _version: Version,
    /// Read one by one, each server checked before the next is read.
    servers: Ordered<Value>,
    #[serde(rename = "$unknown", default)]
    unknown: Unknown,
}

/// [`VERSION`], written as `1`; anything else is refused.
struct Version;

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Version, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) if n.lexeme() == VERSION.to_string() => Ok(Version),
            v => Err(serde::de::Error::custom(format!(
                "unknown kams lock version {} (this git-kams reads {VERSION})",
                match &v {
                    Value::Number(n) => n.lexeme(),
                    v => v.kind(),
                }
            ))),
        }
    }
}

/// A server.
#[derive(Deserialize)]
struct KamsServer {
    pinned: bool,
    /// Read tool by tool only when the server is pinned: the tools of a
    /// server kams did not pin are skipped as they are.
    tools: Object,
    #[serde(rename = "$unknown", default)]
    unknown: Unknown,
}

/// A tool's name: read and checked against its key before the rest of it.
#[derive(Deserialize)]
struct KamsName<'a> {
    name: &'a str,
}

/// A tool of a pinned server.
#[derive(Deserialize)]
struct KamsTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Object,
    digest: &'a str,
    description_digest: &'a str,
    schema_digest: &'a str,
    #[serde(rename = "$unknown", default)]
    unknown: Unknown,
}

/// Reads a parsed kams lock into `import`.
pub fn read(v: &Value, import: &mut Import) -> Result<(), ImportError> {
    let lock: KamsLock = de::from_value(v, "")?;
    for (server, s) in &lock.servers.0 {
        let mut at = String::from("/servers/");
        crate::json::push_pointer_token(&mut at, server);
        let s: KamsServer = de::from_value(s, &at)?;
        let tools_at = at + "/tools";
        import.unknown_keys.extend(s.unknown.0);
        if !s.pinned {
            import.skipped.push(format!(
                "{server}: not pinned in kams ({} tools)",
                s.tools.len()
            ));
            continue;
        }
        for (name, t) in s.tools.iter() {
            let mut at = tools_at.clone();
            at.push('/');
            crate::json::push_pointer_token(&mut at, name);
            import
                .tools
                .push(tool(server, name, t, &at, &mut import.unknown_keys)?);
        }
    }
    import.unknown_keys.extend(lock.unknown.0);
    Ok(())
}

/// How a hashed text may have been written.
#[derive(Clone, Copy)]
enum Way {
    /// `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=...)`.
    Python(bool),
    /// RFC 8785.
    Jcs,
}

fn tool(
    server: &str,
    key: &str,
    v: &Value,
    at: &str,
    unknown: &mut Vec<String>,
) -> Result<Tool, ImportError> {
    let id: KamsName = de::from_value(v, at)?;
    if id.name != key {
        return Err(ImportError::at(
            &format!("{at}/name"),
            "the tool's name is not its key",
        ));
    }
    let t: KamsTool = de::from_value(v, at)?;
    let (name, description) = (t.name, t.description);
    let schema = &Value::Object(t.input_schema);
    let stored = [
        ("digest", t.digest),
        ("description_digest", t.description_digest),
        ("schema_digest", t.schema_digest),
    ];
    unknown.extend(t.unknown.0);
    let mut whole = Object::new();
    whole.insert("description".into(), Value::String(description.into()));
    whole.insert("inputSchema".into(), schema.clone());
    whole.insert("name".into(), Value::String(name.into()));
    let whole = Value::Object(whole);
    // The ways kams may have serialised: Python's json.dumps with or
    // without ensure_ascii, or RFC 8785 (our canonical form, which all three
    // agree with on ASCII text).
    let computed = |way: Way| {
        let text = |v: &Value| match way {
            Way::Python(ensure_ascii) => dumps(v, ensure_ascii),
            Way::Jcs => crate::canon::jcs_string(v),
        };
        [
            sha256_hex(&text(&whole)),
            sha256_hex(description),
            sha256_hex(&text(schema)),
        ]
    };
    let mismatch = |way: Way| {
        stored
            .iter()
            .zip(computed(way))
            .find(|((_, s), c)| *s != &c[..16])
            .map(|((k, s), c)| Check::Mismatch {
                key: (*k).into(),
                stored: (*s).into(),
                computed: c[..16].into(),
            })
    };
    // Python's default (ensure_ascii) first: it is what is reported.
    let check = match mismatch(Way::Python(true)) {
        Some(m) if mismatch(Way::Python(false)).is_some() && mismatch(Way::Jcs).is_some() => m,
        _ => Check::Verified,
    };
    Ok(Tool {
        server: server.into(),
        name: name.into(),
        descriptor: descriptor(name, description, schema, at)?,
        approver: None,
        note: String::new(),
        pointer: at.into(),
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Source};
    use super::*;

    fn lock(description: &str) -> String {
        let schema = r#"{"type":"object"}"#;
        let whole =
            format!(r#"{{"description":"{description}","inputSchema":{schema},"name":"echo"}}"#);
        format!(
            r#"{{"servers":{{"s":{{"pinned":true,"tools":{{"echo":{{"description":"{description}","description_digest":"{}","digest":"{}","input_schema":{schema},"name":"echo","schema_digest":"{}"}}}}}}}},"version":1}}"#,
            &sha256_hex(description)[..16],
            &sha256_hex(&whole)[..16],
            &sha256_hex(schema)[..16],
        )
    }

    #[test]
    fn a_lock_kams_wrote_verifies_and_names_no_approver() {
        let i = parse(Source::Kams, lock("Echo.").as_bytes()).unwrap();
        assert_eq!(i.tools[0].check, Check::Verified);
        assert_eq!(i.tools[0].approver, None);
    }

    #[test]
    fn non_ascii_text_verifies_whether_kams_escapes_it_or_not() {
        // Written with ensure_ascii=False (raw UTF-8 in the hashed text).
        let i = parse(Source::Kams, lock("caf\u{e9}").as_bytes()).unwrap();
        assert_eq!(i.tools[0].check, Check::Verified);
    }

    #[test]
    fn an_edited_description_does_not_verify() {
        let text = lock("Echo.").replacen("\"Echo.\"", "\"Echo!\"", 1);
        let i = parse(Source::Kams, text.as_bytes()).unwrap();
        assert!(
            matches!(&i.tools[0].check, Check::Mismatch { key, .. } if key == "digest"),
            "{:?}",
            i.tools[0].check
        );
    }

    #[test]
    fn unpinned_servers_are_skipped_and_unknown_versions_refused() {
        let text = lock("Echo.").replace("\"pinned\":true", "\"pinned\":false");
        let i = parse(Source::Kams, text.as_bytes()).unwrap();
        assert!(i.tools.is_empty());
        assert_eq!(i.skipped, ["s: not pinned in kams (1 tools)"]);
        let text = lock("Echo.").replace("\"version\":1", "\"version\":2");
        let e = parse(Source::Kams, text.as_bytes()).unwrap_err();
        assert_eq!(e.pointer, "/version");
    }

    #[test]
    fn an_unpinned_server_s_tools_are_not_read() {
        let text = lock("Echo.")
            .replace("\"pinned\":true", "\"pinned\":false")
            .replace("\"name\":\"echo\",", "\"name\":7,\"extra\":1,");
        let i = parse(Source::Kams, text.as_bytes()).unwrap();
        assert_eq!(i.skipped, ["s: not pinned in kams (1 tools)"]);
        assert!(i.unknown_keys.is_empty());
        let text = lock("Echo.").replace("\"pinned\":true", "\"pinned\":\"yes\"");
        let e = parse(Source::Kams, text.as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "expected true or false, found a string (JSON pointer /servers/s/pinned)"
        );
    }

    #[test]
    fn unknown_keys_are_listed_server_first_then_tool_then_file() {
        let text = lock("Echo.")
            .replace("\"pinned\"", "\"x\":1,\"pinned\"")
            .replace("\"name\":\"echo\",", "\"name\":\"echo\",\"y\":1,")
            .replace("\"version\":1", "\"version\":1,\"z\":1");
        let i = parse(Source::Kams, text.as_bytes()).unwrap();
        assert_eq!(
            i.unknown_keys,
            ["/servers/s/x", "/servers/s/tools/echo/y", "/z"]
        );
        for (version, shown) in [("1.0", "1.0"), ("\"1\"", "a string")] {
            let text = lock("Echo.").replace("\"version\":1", &format!("\"version\":{version}"));
            let e = parse(Source::Kams, text.as_bytes()).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("unknown kams lock version {shown} (this git-kams reads 1) (JSON pointer /version)")
            );
        }
    }
}
