//! Reading the approval files of two Python tools that did part of
//! git-kams's job, DescriptorPin (`pin.json`) and kams (`kams.lock`), so
//! that their users can move over without reviewing everything again.
//!
//! Pure: bytes in, approved tools out (descriptors in our canonical form,
//! each with the outcome of checking the hash its tool stored), or an error
//! naming where the file is malformed. What the files hold and how their
//! hashes are computed is in `docs/imports.md`.
//!
//! The files are JSON, parsed by our strict reader ([`crate::json`]) and
//! then read into `#[derive(Deserialize)]` types ([`crate::json::de`]),
//! one per object of each format, not by `serde_json` alone, because an
//! import must see what serde_json does not show: a duplicate key
//! anywhere, in the input schema too, is refused (which of the two was
//! approved?) where serde_json keeps the last one silently; the stored
//! hashes are recomputed from each number as Python read it (an integer
//! of any size kept whole, from its lexeme) where serde_json rounds
//! integers beyond 64 bits; and a fault is reported with the JSON
//! pointer, the line and column, and the wording that `docs/imports.md`
//! and the tests promise. Neither format is closed: members the types do
//! not name are listed ([`Import::unknown_keys`]), not refused.

mod descriptorpin;
mod kams;
pub mod python;

use std::fmt;

use crate::descriptor::Descriptor;
use crate::json::{self, Object, Value};

/// A tool whose approval files can be imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// DescriptorPin's `pin.json`, format `descriptorpin/pin/1`.
    DescriptorPin,
    /// kams's `kams.lock`, version 1.
    Kams,
}

impl Source {
    /// The tool's name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Source::DescriptorPin => "descriptorpin",
            Source::Kams => "kams",
        }
    }
}

/// One approved tool, as the file records it.
#[derive(Clone, Debug)]
pub struct Tool {
    /// The server's name.
    pub server: String,
    /// The tool's name.
    pub name: String,
    /// The descriptor the file holds, in our canonical form.
    pub descriptor: Descriptor,
    /// Who approved it; `None` when the file names nobody.
    pub approver: Option<String>,
    /// The approver's note; empty when there is none.
    pub note: String,
    /// JSON pointer of the tool in the file.
    pub pointer: String,
    /// Whether the hashes the file stores match the descriptor it holds.
    pub check: Check,
}

/// The outcome of recomputing a tool's stored hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// Every stored hash matches the stored descriptor.
    Verified,
    /// A stored hash does not match: the file was edited after its tool
    /// wrote it.
    Mismatch {
        /// The hash's key in the file.
        key: String,
        /// What the file stores.
        stored: String,
        /// What the descriptor hashes to.
        computed: String,
    },
}

/// What an import file holds.
#[derive(Clone, Debug)]
pub struct Import {
    /// The approved tools, in file order.
    pub tools: Vec<Tool>,
    /// JSON pointers of keys this reader does not know (ignored).
    pub unknown_keys: Vec<String>,
    /// What the file holds but does not approve, one line each.
    pub skipped: Vec<String>,
}

/// Why a file could not be read, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// What was wrong.
    pub message: String,
    /// JSON pointer of the fault.
    pub pointer: String,
    /// Line and column, for faults in the JSON text itself.
    pub line: Option<(usize, usize)>,
}

impl ImportError {
    fn at(pointer: &str, message: impl Into<String>) -> ImportError {
        ImportError {
            message: message.into(),
            pointer: pointer.to_string(),
            line: None,
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::text::escape_display(&self.message))?;
        if let Some((line, column)) = self.line {
            write!(f, " at line {line} column {column}")?;
        }
        if !self.pointer.is_empty() {
            write!(
                f,
                " (JSON pointer {})",
                crate::text::escape_display(&self.pointer)
            )?;
        }
        Ok(())
    }
}

impl From<json::de::Error> for ImportError {
    fn from(e: json::de::Error) -> ImportError {
        ImportError::at(&e.pointer, e.message)
    }
}

impl From<json::ParseError> for ImportError {
    fn from(e: json::ParseError) -> ImportError {
        ImportError {
            message: format!("not valid JSON: {}", e.message),
            pointer: e.pointer,
            line: Some((e.line, e.column)),
        }
    }
}

/// Reads a `source` file strictly: JSON errors, duplicate keys, an unknown
/// format version, missing or mistyped members are errors; unknown keys
/// are listed in [`Import::unknown_keys`] and otherwise ignored.
pub fn parse(source: Source, bytes: &[u8]) -> Result<Import, ImportError> {
    let (value, duplicates) = json::parse(bytes)?;
    if let Some(d) = duplicates.first() {
        return Err(ImportError::at(
            d,
            "duplicate key (which of the two was approved?)",
        ));
    }
    let mut import = Import {
        tools: Vec::new(),
        unknown_keys: Vec::new(),
        skipped: Vec::new(),
    };
    match source {
        Source::DescriptorPin => descriptorpin::read(&value, &mut import)?,
        Source::Kams => kams::read(&value, &mut import)?,
    }
    let mut seen = std::collections::BTreeMap::new();
    for t in &import.tools {
        if let Some(first) = seen.insert((&t.server, &t.name), &t.pointer) {
            return Err(ImportError::at(
                &t.pointer,
                format!(
                    "{}/{} is approved twice (first at {first})",
                    t.server, t.name
                ),
            ));
        }
    }
    Ok(import)
}

/// Our canonical descriptor of a tool the file describes by `name`,
/// `description` and input schema.
fn descriptor(
    name: &str,
    description: &str,
    input_schema: &Value,
    at: &str,
) -> Result<Descriptor, ImportError> {
    let mut fields = Object::new();
    fields.insert("name".into(), Value::String(name.into()));
    fields.insert("description".into(), Value::String(description.into()));
    fields.insert("inputSchema".into(), input_schema.clone());
    let (d, collisions) = Descriptor::new(fields);
    if let Some(c) = collisions.first() {
        // Two keys that are one after Unicode normalisation: which one did
        // the reviewer see?
        return Err(ImportError::at(
            &format!("{at}{c}"),
            "keys collide after Unicode normalisation (NFC)",
        ));
    }
    Ok(d)
}

/// Lowercase hex SHA-256 of `text`.
fn sha256_hex(text: &str) -> String {
    crate::canon::Digest::of(text.as_bytes()).hex()
}

/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=...)`.
fn dumps(v: &Value, ensure_ascii: bool) -> String {
    let mut s = String::new();
    python::dumps(v, ensure_ascii, &mut s);
    s
}
