//! Reading what the servers advertise: capture files, multi-server
//! inventories, bare `tools/list` results and JSON-RPC lines.
//!
//! The format is detected from content. Parsing is strict: duplicate keys
//! and duplicate tool names are kept as [`Ambiguity`] records (they become
//! findings, never silent choices), and anything malformed is an
//! [`InputError`] that names the file and the JSON pointer.
//!
//! This file holds what a reading gives (servers, tools, ambiguities) and
//! its entry points; [`shape`] tells which shape a file is, [`tools`] reads
//! the tools of a `tools` array, and [`build`](mod@build) makes servers of
//! what was read.

mod build;
mod shape;
mod tools;

pub use shape::parse_file;

use crate::bytes::Shared;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::descriptor::{Descriptor, Lazy};
use crate::json::{self, Members, Object, Tree};
use shape::parse_with;
use tools::{Keep, Reading};

/// Default cap on one input file, in bytes (see `--max-input-size`).
pub const DEFAULT_MAX_INPUT: u64 = 128 * 1024 * 1024;

/// Input that cannot be read as an inventory or a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file.
    pub path: PathBuf,
    /// JSON pointer of the fault, when there is one.
    pub pointer: Option<String>,
    /// What was wrong.
    pub message: String,
}

impl InputError {
    /// An error about `path` at `pointer`.
    pub fn new(path: &Path, pointer: Option<String>, message: impl Into<String>) -> InputError {
        InputError {
            path: path.to_path_buf(),
            pointer,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            crate::text::shown_path(&self.path),
            crate::text::escape_display(&self.message)
        )?;
        if let Some(p) = &self.pointer {
            write!(f, " (JSON pointer {})", crate::text::escape_display(p))?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// Something two readers may read two ways (kept as it is in the
/// inventory index, `cache/inventory.rs`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ambiguity {
    /// The tool, or `None` for the server level.
    pub tool: Option<String>,
    /// Pointer into the tool's descriptor (or the server entry).
    pub field: Option<String>,
    /// What is ambiguous.
    pub message: String,
}

/// One tool as advertised.
#[derive(Clone, Debug)]
pub struct Tool {
    /// Canonical descriptor and digests (fields empty until materialised
    /// when read with [`ReadOptions::digests_only`]).
    pub descriptor: Descriptor,
    /// JSON pointer of the tool object in its file.
    pub pointer: String,
    /// Where to rebuild the fields from, when they were dropped.
    pub lazy: Lazy,
    /// The name of that text ([`text_name`]), when it was read with
    /// [`ReadOptions::digests_only`] and [`Help::name_texts`]: what an
    /// earlier reading of the same text ([`Recall`]) and the detectors'
    /// memo ([`crate::detect::known`]) know it by.
    pub text: Option<crate::canon::Digest>,
}

impl Tool {
    /// Calls `f` with the tool object as the server sent it, every key
    /// included, when it was read with [`ReadOptions::digests_only`]
    /// (otherwise its digested fields): a tree that borrows its strings
    /// from the tool's text. With `apart`, the text is read apart from the
    /// file's mapping (see [`Lazy::read`]): for a few tools of a large
    /// inventory, the ones that changed since it was last read.
    pub fn with_tree<R>(&self, apart: bool, f: impl FnOnce(&Tree<'_>) -> R) -> R {
        let text = match apart {
            true => self.lazy.read(),
            false => self.lazy.text().map(std::borrow::Cow::Borrowed),
        };
        match text.as_deref().and_then(|t| json::parse_tree(t).ok()) {
            Some(tree) => f(&tree),
            None => f(&Tree::Object(Members::of(&self.descriptor.fields))),
        }
    }
}

impl Server {
    /// Gives back the memory of the text this server's tools were read
    /// from (see [`crate::input::Input::release`]); it is read again if
    /// needed.
    pub fn release(&self) {
        let mut spans = self.tools.values().filter_map(|t| t.lazy.0.as_ref());
        let Some((bytes, first)) = spans.next() else {
            return;
        };
        let (start, end) = spans.fold((first.start, first.end), |(s, e), (_, r)| {
            (s.min(r.start), e.max(r.end))
        });
        bytes.release(start..end);
    }
}

/// One server as advertised.
#[derive(Clone, Debug)]
pub struct Server {
    /// The server's name (the key in the lock).
    pub name: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// JSON pointer of the server's object in that file (`""` for a
    /// one-server file), so that a report can point at its fields.
    pub pointer: String,
    /// Server-level descriptor (instructions, serverInfo, prompts...).
    pub descriptor: Descriptor,
    /// How the client reaches it (`transport`, `command`, `cwd`, `url`,
    /// `env`...), as written; not digested, reviewed by the transport
    /// detector, and recorded in the lock through
    /// [`crate::config::launch_spec`].
    pub launch: Object,
    /// Tools by name.
    pub tools: BTreeMap<String, Tool>,
    /// Duplicate keys and names found while reading.
    pub ambiguities: Vec<Ambiguity>,
}

/// Every server of every inventory file, by name.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    /// Servers by name.
    pub servers: BTreeMap<String, Server>,
}

impl Inventory {
    /// Rebuilds the fields of the given tools (`None`: a server's own
    /// fields, which are always whole), read with
    /// [`ReadOptions::digests_only`], from the bytes they were read from:
    /// `wanted` names subjects as [`crate::lock::Lock::materialize`] does.
    pub fn materialize(&mut self, wanted: &[(String, Option<String>)]) {
        // Each text read apart from the mapping: no page of it comes in.
        for (server, tool) in wanted {
            let Some(tool) = tool else { continue };
            let Some(t) = self
                .servers
                .get_mut(server)
                .and_then(|s| s.tools.get_mut(tool))
            else {
                continue;
            };
            // Keep the span: detectors read the tool as sent (`_meta` too).
            let Some(text) = t.lazy.read() else {
                continue;
            };
            // These bytes parsed once already; they cannot fail now.
            let (v, _) = json::parse(&text).expect("a span that parsed before parses again");
            let (_, full, _) = build::build_tool(Path::new(""), v, &t.pointer)
                .expect("a tool that was built before builds again");
            debug_assert_eq!(full.descriptor.digest, t.descriptor.digest);
            t.descriptor = full.descriptor;
        }
    }
}

/// Names a tool's text in an inventory (an index gives the digests of a
/// tool whose text it has seen by this name): SHA-256, as cryptographic as
/// BLAKE3 and, with SHA-NI, faster on texts this short: a tool's text is
/// far below the length where BLAKE3 gets ahead (docs/performance.md,
/// "Eleventh pass", 803d208).
pub fn text_name(text: &[u8]) -> crate::canon::Digest {
    crate::canon::Digest::of(text)
}

/// How to read inventory files.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Server name for bare `tools/list` results and JSON-RPC lines.
    pub server: Option<String>,
    /// Largest file accepted, in bytes.
    pub max_size: u64,
    /// Keep only the tools' digests (and where to rebuild them from), so
    /// that scanning a large inventory does not hold every tree in memory.
    pub digests_only: bool,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            server: None,
            max_size: DEFAULT_MAX_INPUT,
            digests_only: false,
        }
    }
}

/// The error for an input past the size cap.
pub fn too_big(path: &Path, max_size: u64) -> InputError {
    InputError::new(
        path,
        None,
        format!("larger than the input size cap of {max_size} bytes (raise it with --max-input-size or git config kams.maxInputSize)"),
    )
}

/// Reads inventory files held in memory, each named by the path shown in
/// messages: [`build`] with no help from earlier readings (the edge's
/// [`crate::cache::inventory::read_files`] reads through an index).
pub fn read_in_memory(
    files: Vec<(PathBuf, Vec<u8>)>,
    opts: &ReadOptions,
) -> Result<Inventory, InputError> {
    let mut texts: Vec<(PathBuf, Shared)> = Vec::with_capacity(files.len());
    for (file, bytes) in files {
        if bytes.len() as u64 > opts.max_size {
            return Err(too_big(&file, opts.max_size));
        }
        texts.push((file, std::sync::Arc::new(crate::bytes::strip_bom(bytes))));
    }
    build(&texts, opts, Help::default())
}

/// What an earlier reading of an inventory knew of a tool, by the name of
/// its text ([`text_name`]): a tool's name and digests are a function of
/// its text alone, so a tool captured again unchanged need not be
/// digested again. The edge keeps such readings
/// ([`crate::cache::inventory::Earlier`]).
pub trait Recall {
    /// The name and digests of the tool whose text is named `text`.
    fn recall(&self, text: &crate::canon::Digest) -> Option<(String, Descriptor)>;
}

/// What helps a reading, from readings before it.
#[derive(Clone, Copy, Default)]
pub struct Help<'e> {
    /// What an earlier reading knew of each tool's text.
    pub earlier: Option<&'e dyn Recall>,
    /// Whether each tool's text is named ([`Tool::text`]).
    pub texts: TextNames,
}

/// Whether a reading names each tool's text ([`Tool::text`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextNames {
    /// Not named: nothing would look them up.
    #[default]
    Unnamed,
    /// Named: for an inventory whose index is kept, the only one that
    /// needs it.
    Named,
}

/// Reads inventory files (each named by the path shown in messages, its
/// bytes past any byte order mark) into one inventory. A server defined
/// twice is an error: which definition to trust is for a person to
/// decide.
pub fn build(
    texts: &[(PathBuf, Shared)],
    opts: &ReadOptions,
    help: Help<'_>,
) -> Result<Inventory, InputError> {
    let mut inv = Inventory::default();
    for (file, bytes) in texts {
        let keep = match opts.digests_only {
            true => Keep::Digests(bytes.clone()),
            false => Keep::Trees,
        };
        let reading = Reading::new(keep, help);
        let text: &[u8] = (**bytes).as_ref();
        let servers = parse_with(file, text, opts, &reading)?;
        // Tools are read again one server at a time (detectors, drift):
        // until then the text need not stay in memory.
        if opts.digests_only {
            bytes.release(0..text.len());
        }
        for server in servers {
            if let Some(prev) = inv.servers.get(&server.name) {
                return Err(InputError::new(
                    file,
                    None,
                    format!(
                        "server `{}` is also defined in {}; keep one definition per server",
                        server.name,
                        crate::text::shown_path(&prev.source)
                    ),
                ));
            }
            inv.servers.insert(server.name.clone(), server);
        }
    }
    Ok(inv)
}
