//! Reading what the servers advertise: capture files, multi-server
//! inventories, bare `tools/list` results and JSON-RPC lines.
//!
//! The format is detected from content. Parsing is strict: duplicate keys
//! and duplicate tool names are kept as [`Ambiguity`] records (they become
//! findings, never silent choices), and anything malformed is an
//! [`InputError`] that names the file and the JSON pointer.

use crate::bytes::Shared;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::canon::{write_string, Escape};
use crate::descriptor::{Descriptor, Lazy};
use crate::json::{self, Object, Value};

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

/// Something two readers may read two ways.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// The name of that text ([`crate::cache::store::name_text`]), when
    /// it was read with [`ReadOptions::digests_only`] and an index
    /// ([`ReadOptions::index_dir`]): what an earlier reading of the same
    /// text ([`crate::cache::inventory::Earlier`]) and the detectors' memo
    /// ([`crate::cache::findings`]) know it by.
    pub text: Option<crate::canon::Digest>,
}

impl Tool {
    /// The tool object as the server sent it, every key included, when it
    /// was read with [`ReadOptions::digests_only`]; otherwise its digested
    /// fields.
    pub fn raw(&self) -> Value {
        self.raw_from(self.lazy.text().map(std::borrow::Cow::Borrowed))
    }

    /// [`Tool::raw`], its text read apart from the file's mapping (see
    /// [`Lazy::read`]): for a few tools of a large inventory, the ones
    /// that changed since it was last read.
    pub fn raw_apart(&self) -> Value {
        self.raw_from(self.lazy.read())
    }

    fn raw_from(&self, text: Option<std::borrow::Cow<'_, [u8]>>) -> Value {
        if let Some((v, _)) = text.and_then(|t| json::parse(&t).ok()) {
            return v;
        }
        Value::Object(self.descriptor.fields.clone())
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
    /// The key of its index ([`index`]), when it was read with one.
    pub index_key: Option<crate::canon::Digest>,
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
            let (_, full, _) = build_tool(Path::new(""), v, &t.pointer)
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
    /// Where inventory indexes are kept (a common git directory; see
    /// [`index`]), for reads with `digests_only`.
    pub index_dir: Option<PathBuf>,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            server: None,
            max_size: DEFAULT_MAX_INPUT,
            digests_only: false,
            index_dir: None,
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
    /// Whether each tool's text is named ([`Tool::text`]): only for an
    /// inventory whose index is kept, the only one that needs it.
    pub name_texts: bool,
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
        let src = Source::new(
            opts.digests_only.then(|| bytes.clone()),
            help.earlier,
            help.name_texts,
        );
        let text: &[u8] = (**bytes).as_ref();
        let servers = parse_source(file, text, opts, &src)?;
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

/// A top-level, server or JSON-RPC result object, read with its tools
/// digested on the way (so that no whole-file tree is ever built).
#[derive(Default)]
struct Shell {
    /// Every member except `tools`, `servers` and `result`.
    fields: Object,
    /// The tools, when a `tools` member was present: each with its name
    /// (NFC, its key in the lock and in [`Server::tools`]) and the keys
    /// that collided after normalisation.
    tools: Option<Vec<(String, Tool, Vec<String>)>>,
    /// Top level only: the servers of a multi-server inventory.
    servers: Option<Vec<Shell>>,
    /// JSON-RPC only: the response's result.
    result: Option<Box<Shell>>,
}

/// Why reading a file stopped.
enum Fail {
    Json(json::ParseError),
    Input(InputError),
    /// A tool needs reading without the earlier reading's help (see
    /// [`parse_source`]).
    Retry,
}

impl Fail {
    /// The error to report about `path`.
    fn into_input(self, path: &Path) -> InputError {
        match self {
            Fail::Input(e) => e,
            Fail::Json(e) => InputError::new(path, None, format!("invalid JSON: {e}")),
            // Only a read with an earlier reading retries, and the second
            // read has none.
            Fail::Retry => InputError::new(path, None, "could not be read alone"),
        }
    }
}

impl From<json::ParseError> for Fail {
    fn from(e: json::ParseError) -> Fail {
        Fail::Json(e)
    }
}

impl From<InputError> for Fail {
    fn from(e: InputError) -> Fail {
        Fail::Input(e)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Top,
    Server,
    Result,
}

/// Reads the object at the reader's position.
fn read_shell(
    r: &mut json::Reader<'_>,
    path: &Path,
    src: &Source,
    level: Level,
) -> Result<Shell, Fail> {
    let mut shell = Shell::default();
    r.object(|r, key| -> Result<(), Fail> {
        match (key, level) {
            ("tools", _) => {
                if r.peek() != Some(b'[') {
                    return Err(not_a(r, path, "`tools`", "an array"));
                }
                let mut list = Vec::new();
                r.array(|r, _| -> Result<(), Fail> {
                    let at = r.pointer();
                    let Some(bytes) = &src.keep_only_digests else {
                        let v = r.value()?;
                        list.push(build_tool(path, v, &at)?);
                        return Ok(());
                    };
                    let start = r.offset();
                    let earlier = src.earlier();
                    let digested = match earlier {
                        None => digest_tool(r, &mut src.canonical.borrow_mut())?,
                        // Stepped over; known by its text below.
                        Some(_) => {
                            r.skip().map_err(|_| Fail::Retry)?;
                            None
                        }
                    };
                    let end = r.offset();
                    let text = &(**bytes).as_ref()[start..end];
                    let hash = src.name_texts.then(|| text_name(text));
                    let digested = match earlier {
                        None => digested,
                        Some(earlier) => {
                            let known = hash.as_ref().and_then(|h| earlier.recall(h));
                            src.knew(known.is_some());
                            Some(match known {
                                Some(known) => known,
                                None => digest_alone(text, &mut src.canonical.borrow_mut())
                                    .ok_or(Fail::Retry)?,
                            })
                        }
                    };
                    let (name, mut tool, collisions) = match digested {
                        Some((name, descriptor)) => {
                            let pointer = at;
                            let tool = Tool {
                                descriptor,
                                pointer,
                                lazy: Lazy::default(),
                                text: None,
                            };
                            (name, tool, Vec::new())
                        }
                        None => {
                            let (v, _) = json::parse_nested(text, json::MAX_DEPTH)?;
                            build_tool(path, v, &at)?
                        }
                    };
                    tool.descriptor.fields = Object::new();
                    tool.lazy = Lazy(Some((bytes.clone(), start..end)));
                    tool.text = hash;
                    src.behind.borrow_mut().advance(&**bytes, start);
                    list.push((name, tool, collisions));
                    Ok(())
                })?;
                shell.tools = Some(list);
            }
            ("servers", Level::Top) => {
                if r.peek() != Some(b'[') {
                    return Err(InputError::new(
                        path,
                        Some("/servers".into()),
                        "`servers` must be an array",
                    )
                    .into());
                }
                shell.servers = Some(read_servers(r, path, src)?);
            }
            ("result", Level::Top) if r.peek() == Some(b'{') => {
                shell.result = Some(Box::new(read_shell(r, path, src, Level::Result)?));
            }
            _ => {
                let v = r.value()?;
                shell.fields.insert(key.to_string(), v);
            }
        }
        Ok(())
    })?;
    Ok(shell)
}

/// The error for the value at the reader, which is not `expected` as
/// `what` must be (or the JSON error that value has).
fn not_a(r: &mut json::Reader<'_>, path: &Path, what: &str, expected: &str) -> Fail {
    let at = r.pointer();
    match r.value() {
        Ok(v) => InputError::new(
            path,
            Some(at),
            format!("{what} is {}, expected {expected}", v.kind()),
        )
        .into(),
        Err(e) => e.into(),
    }
}

/// One element of a multi-server inventory's `servers`.
fn read_server(r: &mut json::Reader<'_>, path: &Path, src: &Source) -> Result<Shell, Fail> {
    if r.peek() != Some(b'{') {
        return Err(not_a(r, path, "server", "an object"));
    }
    read_shell(r, path, src, Level::Server)
}

/// The servers of a multi-server inventory, the reader at the array.
fn read_servers(r: &mut json::Reader<'_>, path: &Path, src: &Source) -> Result<Vec<Shell>, Fail> {
    let mut list = Vec::new();
    r.array(|r, _| -> Result<(), Fail> {
        list.push(read_server(r, path, src)?);
        Ok(())
    })?;
    Ok(list)
}

/// What the tools' descriptors are kept as.
struct Source<'e> {
    /// When set, tools keep only their digests and a span of these bytes,
    /// from which [`Inventory::materialize`] rebuilds them on demand.
    keep_only_digests: Option<Shared>,
    /// What of those bytes was given back as the tools were read.
    behind: std::cell::RefCell<crate::bytes::Behind>,
    /// Buffers for the tools' canonical texts, kept from tool to tool.
    canonical: std::cell::RefCell<crate::canon::Canonical>,
    /// What an earlier reading found of each tool's text, by its hash
    /// (with `keep_only_digests` only).
    earlier: Option<&'e dyn Recall>,
    /// Tools it knew and did not know so far (see [`Source::earlier`]).
    known: std::cell::Cell<(usize, usize)>,
    /// Whether each tool's text is hashed ([`Tool::text`]): only for an
    /// inventory whose index is kept, the only one that needs it.
    name_texts: bool,
}

impl<'e> Source<'e> {
    /// A source reading with `earlier`'s help, if given.
    fn new(
        keep_only_digests: Option<Shared>,
        earlier: Option<&'e dyn Recall>,
        name_texts: bool,
    ) -> Source<'e> {
        Source {
            keep_only_digests,
            behind: Default::default(),
            canonical: Default::default(),
            earlier,
            known: Default::default(),
            name_texts,
        }
    }

    /// The earlier reading, while it knows enough of the tools to save
    /// time: a tool it does not know is stepped over and read twice, so
    /// once 64 tools were read and fewer than a third were known (another
    /// inventory's index), the rest are read as without one.
    fn earlier(&self) -> Option<&'e dyn Recall> {
        let (hits, misses) = self.known.get();
        self.earlier
            .filter(|_| hits + misses < 64 || hits * 2 >= misses)
    }

    /// Counts a tool the earlier reading knew (or did not).
    fn knew(&self, hit: bool) {
        let (hits, misses) = self.known.get();
        self.known
            .set((hits + usize::from(hit), misses + usize::from(!hit)));
    }
}

/// Parses one inventory file's bytes, detecting its format from content.
pub fn parse_file(
    path: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
) -> Result<Vec<Server>, InputError> {
    parse_source(path, bytes, opts, &Source::new(None, None, false))
}

fn parse_source(
    path: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
    src: &Source,
) -> Result<Vec<Server>, InputError> {
    match parse_once(path, bytes, opts, src) {
        Err(Fail::Retry) => {
            // A tool the earlier reading did not know, and that does not
            // read alone as most do: read it all as if there were none,
            // so that what is reported is what is always reported.
            let alone = Source::new(src.keep_only_digests.clone(), None, src.name_texts);
            parse_once(path, bytes, opts, &alone).map_err(|f| f.into_input(path))
        }
        read => read.map_err(|f| f.into_input(path)),
    }
}

/// [`parse_source`], once: [`Fail::Retry`] when `src` has an earlier
/// reading and a tool needs more than it.
fn parse_once(
    path: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
    src: &Source,
) -> Result<Vec<Server>, Fail> {
    // Validated whole (an inventory is small next to its lock, and
    // reading it twice cost more than holding it); given back behind the
    // reader as the tools are digested.
    let mut r = json::Reader::new(bytes, json::MAX_DEPTH)?;
    if r.at_end() {
        return Err(r.error("empty input: expected a JSON value").into());
    }
    let mut shells = Vec::new();
    loop {
        if r.peek() != Some(b'{') {
            let v = r.value()?;
            let what = if shells.is_empty() {
                format!("top level is {}, expected an object (a capture, {{\"servers\": [...]}}, {{\"tools\": [...]}} or a JSON-RPC response)", v.kind())
            } else {
                format!(
                    "(value {}) expected a JSON-RPC response object, found {}",
                    shells.len() + 1,
                    v.kind()
                )
            };
            return Err(InputError::new(path, None, what).into());
        }
        shells.push(read_shell(&mut r, path, src, Level::Top)?);
        if r.at_end() {
            break;
        }
        r.next_top();
    }
    let dups = r.take_duplicates();
    if shells.len() > 1 || shells[0].fields.get("jsonrpc").is_some() {
        return Ok(from_jsonrpc_lines(path, shells, &dups, opts)?);
    }
    let dups: Vec<String> = dups.into_iter().map(|(_, p)| p).collect();
    let top = shells.pop().expect("one value");
    if let Some(servers) = top.servers {
        return build_servers(path, servers, &dups);
    }
    if top.fields.get("server").is_some() {
        let name = server_name(path, &top.fields, "server", "")?;
        return Ok(vec![build_server(path, name, top, "", &dups)?]);
    }
    if top.tools.is_some() {
        let name = named_by_option(path, opts)?;
        return Ok(vec![build_server(path, name, top, "", &dups)?]);
    }
    Err(Fail::Input(InputError::new(
        path,
        None,
        "not an inventory: expected a capture (\"server\" and \"tools\"), a multi-server inventory {\"servers\": [...]}, a tools/list result {\"tools\": [...]} or JSON-RPC response lines",
    )))
}

fn named_by_option(path: &Path, opts: &ReadOptions) -> Result<String, InputError> {
    let name = opts.server.clone().ok_or_else(|| {
        InputError::new(
            path,
            None,
            "a bare tools/list result names no server: pass --server NAME",
        )
    })?;
    match crate::text::server_name_problem(&name) {
        None => Ok(name),
        Some(why) => Err(InputError::new(path, None, format!("--server: {why}"))),
    }
}

fn server_name(path: &Path, o: &Object, key: &str, at: &str) -> Result<String, InputError> {
    match o.get(key) {
        Some(Value::String(s)) => match crate::text::server_name_problem(s) {
            None => Ok(s.clone()),
            Some(why) => Err(InputError::new(path, Some(format!("{at}/{key}")), why)),
        },
        Some(v) => Err(InputError::new(
            path,
            Some(format!("{at}/{key}")),
            format!("server name is {}, expected a non-empty string", v.kind()),
        )),
        None => Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("server has no `{key}`"),
        )),
    }
}

/// JSON-RPC responses, one per line: `initialize` gives serverInfo and
/// instructions, each `tools/list` page gives tools.
fn from_jsonrpc_lines(
    path: &Path,
    shells: Vec<Shell>,
    dups: &[(usize, String)],
    opts: &ReadOptions,
) -> Result<Vec<Server>, InputError> {
    let name = named_by_option(path, opts)?;
    let mut merged = Shell {
        tools: Some(Vec::new()),
        ..Shell::default()
    };
    let mut ambiguities = Vec::new();
    for (line, shell) in shells.into_iter().enumerate() {
        let at = format!("(value {}) ", line + 1);
        if shell.fields.get("error").is_some() {
            return Err(InputError::new(
                path,
                Some("/error".into()),
                format!("{at}is a JSON-RPC error response"),
            ));
        }
        // Requests and notifications carry nothing advertised.
        if let Some(result) = shell.result {
            for (k, val) in result.fields.iter() {
                if matches!(
                    k.as_str(),
                    "serverInfo" | "instructions" | "prompts" | "resources" | "resourceTemplates"
                ) {
                    merged.fields.insert(k.clone(), val.clone());
                }
            }
            if let (Some(all), Some(page)) = (merged.tools.as_mut(), result.tools) {
                all.extend(page);
            }
        }
        for (_, p) in dups.iter().filter(|(i, _)| *i == line) {
            ambiguities.push(Ambiguity {
                tool: None,
                field: Some(p.clone()),
                message: format!(
                    "duplicate key in JSON-RPC line {}: a second value for the same key",
                    line + 1
                ),
            });
        }
    }
    let mut server = build_server(path, name, merged, "", &[])?;
    server.ambiguities.extend(ambiguities);
    Ok(vec![server])
}

/// The servers of a multi-server inventory from their objects, in order
/// (the first error in that order, if any). With many tools, each half is
/// built on a core of its own: one core building all of them left the
/// other waiting (docs/performance.md, "Tenth pass", 0422cb3).
fn build_servers(path: &Path, shells: Vec<Shell>, dups: &[String]) -> Result<Vec<Server>, Fail> {
    let mut out = Vec::with_capacity(shells.len());
    for (i, shell) in shells.into_iter().enumerate() {
        let at = format!("/servers/{i}");
        let name = server_name(path, &shell.fields, "name", &at)?;
        out.push(build_server(path, name, shell, &at, dups)?);
    }
    Ok(out)
}

/// Builds a server from its object (`base` is its pointer in the file) and
/// the file's duplicate-key pointers.
fn build_server(
    path: &Path,
    name: String,
    shell: Shell,
    base: &str,
    dups: &[String],
) -> Result<Server, InputError> {
    let mut ambiguities = Vec::new();
    let o = &shell.fields;
    let shell_tools = shell.tools.unwrap_or_default();
    let mut tools: Vec<(String, Tool)> = Vec::with_capacity(shell_tools.len());
    for (tool_name, tool, collisions) in shell_tools {
        let at = &tool.pointer;
        for c in collisions {
            ambiguities.push(Ambiguity {
                tool: Some(tool_name.clone()),
                field: Some(c.clone()),
                message: format!("key {c} equals another key after Unicode NFC normalisation: clients may read either"),
            });
        }
        for p in dups.iter().filter(|p| p.starts_with(&format!("{at}/"))) {
            let rel = rename_schema_key(&p[at.len()..]);
            ambiguities.push(Ambiguity {
                tool: Some(tool_name.clone()),
                field: Some(rel.clone()),
                message: format!("duplicate key {rel}: the tool object names it twice, and clients may read either value"),
            });
        }
        tools.push((tool_name, tool));
    }
    // By name, each name's tools in the file's order (a stable sort).
    tools.sort_by(|a, b| a.0.cmp(&b.0));
    for same in tools
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|same| same.len() > 1)
    {
        let places: Vec<&str> = same.iter().map(|(_, t)| t.pointer.as_str()).collect();
        ambiguities.push(Ambiguity {
            tool: Some(same[0].0.clone()),
            field: Some("/name".into()),
            message: format!(
                "tool name appears {} times in one server (at {}); clients may resolve either",
                places.len(),
                places.join(", ")
            ),
        });
    }
    // Built from the sorted list, its nodes full (inserted one by one in
    // the file's order they were not: docs/performance.md, "Tenth pass",
    // ab8f7a4); the last of a name is the one kept, as an insert keeps it.
    let tools: BTreeMap<String, Tool> = tools.into_iter().collect();
    for p in dups
        .iter()
        .filter(|p| p.starts_with(base) && !p.starts_with(&format!("{base}/tools/")))
    {
        ambiguities.push(Ambiguity {
            tool: None,
            field: Some(p[base.len()..].to_string()),
            message: "duplicate key at the server level: two values for the same key".into(),
        });
    }

    let mut server_fields = Object::new();
    let mut launch = Object::new();
    for (k, v) in o.iter() {
        match k.as_str() {
            "instructions" | "serverInfo" => {
                server_fields.insert(k.clone(), v.clone());
            }
            "prompts" | "resources" | "resourceTemplates" => {
                let id = match k.as_str() {
                    "prompts" => "name",
                    "resources" => "uri",
                    _ => "uriTemplate",
                };
                let at = format!("{base}/{k}");
                let keyed = keyed_list(path, v, id, &at, &mut ambiguities)?;
                server_fields.insert(k.clone(), Value::Object(keyed));
            }
            "transport" | "command" | "args" | "cwd" | "url" | "env" | "headers" | "type" => {
                launch.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    let (descriptor, collisions) = Descriptor::new(server_fields);
    for c in collisions {
        ambiguities.push(Ambiguity {
            tool: None,
            field: Some(c.clone()),
            message: format!("key {c} equals another key after Unicode NFC normalisation"),
        });
    }
    Ok(Server {
        name,
        source: path.to_path_buf(),
        pointer: base.to_string(),
        descriptor,
        launch,
        tools,
        ambiguities,
    })
}

fn keyed_list(
    path: &Path,
    v: &Value,
    id: &str,
    at: &str,
    amb: &mut Vec<Ambiguity>,
) -> Result<Object, InputError> {
    let Some(list) = v.as_array() else {
        return Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("expected an array, found {}", v.kind()),
        ));
    };
    let mut out = Object::new();
    for (i, item) in list.iter().enumerate() {
        let Some(key) = item.get(id).and_then(Value::as_str) else {
            return Err(InputError::new(
                path,
                Some(format!("{at}/{i}")),
                format!("entry has no string `{id}`"),
            ));
        };
        if out.get(key).is_some() {
            amb.push(Ambiguity {
                tool: None,
                field: Some(format!("{at}/{i}")),
                message: format!("`{key}` is listed twice"),
            });
        }
        out.insert(key.to_string(), item.clone());
    }
    Ok(out)
}

/// DescriptorPin's `input_schema` is MCP's `inputSchema`; pointers name the latter.
fn rename_schema_key(rel: &str) -> String {
    for (from, to) in [
        ("/input_schema", "/inputSchema"),
        ("/output_schema", "/outputSchema"),
    ] {
        if rel == from || rel.starts_with(&format!("{from}/")) {
            return format!("{to}{}", &rel[from.len()..]);
        }
    }
    rel.to_string()
}

/// The name of a tool's member as a descriptor field: older servers wrote
/// the schemas' keys in snake case.
fn tool_field(key: &str) -> &str {
    match key {
        "input_schema" => "inputSchema",
        "output_schema" => "outputSchema",
        other => other,
    }
}

/// True for the tool fields whose value must be an object.
fn holds_object(field: &str) -> bool {
    matches!(field, "inputSchema" | "outputSchema" | "annotations")
}

/// Reads a tool's name and digests straight from its text, as
/// [`build_tool`] then [`Descriptor::new`] would from its tree, without
/// building it. `None` (the tool consumed) when the tool is to be read into
/// a tree instead: when it is not as [`build_tool`] expects (which it then
/// reports), or has keys that NFC changes or that repeat (which
/// [`Descriptor::new`] reports).
fn digest_tool(
    r: &mut json::Reader<'_>,
    c: &mut crate::canon::Canonical,
) -> Result<Option<(String, Descriptor)>, json::ParseError> {
    if r.peek() != Some(b'{') {
        r.value()?;
        return Ok(None);
    }
    let mut ok = true;
    let mut name = None;
    let mut spans: Vec<(&'static str, std::ops::Range<usize>)> = Vec::new();
    c.out.clear();
    r.object(|r, key| -> Result<(), json::ParseError> {
        let Some(field) = crate::descriptor::field_name(tool_field(key))
            .filter(|f| crate::descriptor::TOOL_FIELDS.contains(f))
        else {
            // Not digested; read all the same, as the tree is, so that
            // its duplicate keys are noted.
            r.value()?;
            return Ok(());
        };
        ok &= spans.iter().all(|(f, _)| *f != field);
        let start = c.out.len();
        let expected = match field {
            "name" => b'"',
            f if holds_object(f) => b'{',
            _ => 0,
        };
        if expected != 0 && r.peek() != Some(expected) {
            ok = false;
            r.value()?;
        } else if field == "name" {
            let s = r.string()?.expect("the next value is a string");
            ok &= !s.is_empty();
            let n = crate::canon::nfc(&s);
            write_string(&n, Escape::Jcs, &mut c.out);
            name = Some(n.into_owned());
        } else {
            ok &= crate::descriptor::write_field(field, r, c)?;
        }
        spans.push((field, start..c.out.len()));
        Ok(())
    })?;
    let (true, Some(name)) = (ok, name) else {
        return Ok(None);
    };
    let texts = spans
        .into_iter()
        .map(|(f, span)| (f, &c.out[span]))
        .collect();
    Ok(Some((name, Descriptor::of_texts(texts))))
}

/// [`digest_tool`] of a tool's text read alone, when it reads as most
/// tools do: digested straight from its text, with no key twice (a
/// duplicate key is reported at its place in the file, which a reader of
/// the text alone does not know).
fn digest_alone(text: &[u8], c: &mut crate::canon::Canonical) -> Option<(String, Descriptor)> {
    let mut r = json::Reader::new(text, json::MAX_DEPTH).ok()?;
    let digested = digest_tool(&mut r, c).ok()??;
    (r.at_end() && r.take_duplicates().is_empty()).then_some(digested)
}

/// A tool's name (NFC), the tool, and the pointers of its keys that
/// collide after NFC.
fn build_tool(path: &Path, t: Value, at: &str) -> Result<(String, Tool, Vec<String>), InputError> {
    let Value::Object(o) = t else {
        return Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("tool is {}, expected an object", t.kind()),
        ));
    };
    match o.get("name") {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(v) => {
            return Err(InputError::new(
                path,
                Some(format!("{at}/name")),
                format!("tool name is {}, expected a non-empty string", v.kind()),
            ))
        }
        None => {
            return Err(InputError::new(
                path,
                Some(at.to_string()),
                "tool has no `name`",
            ))
        }
    }
    let mut fields = Object::new();
    for (k, v) in o {
        let key = tool_field(&k);
        if !crate::descriptor::TOOL_FIELDS.contains(&key) {
            continue;
        }
        if fields.get(key).is_some() {
            return Err(InputError::new(
                path,
                Some(format!("{at}/{k}")),
                format!("tool has both `{k}` and `{key}`"),
            ));
        }
        if holds_object(key) && !matches!(v, Value::Object(_)) {
            return Err(InputError::new(
                path,
                Some(format!("{at}/{k}")),
                format!("`{k}` is {}, expected an object", v.kind()),
            ));
        }
        fields.insert(key.to_string(), v);
    }
    let (descriptor, collisions) = Descriptor::new(fields);
    Ok((
        descriptor
            .get("name")
            .and_then(Value::as_str)
            .expect("the name was checked above")
            .to_string(),
        Tool {
            descriptor,
            pointer: at.to_string(),
            lazy: Lazy::default(),
            text: None,
        },
        collisions,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tools of one name in one server: one ambiguity per name, in name
    /// order, naming every place in the file's order; the last of each
    /// name is the one kept. Read whole and keeping digests only.
    #[test]
    fn tools_of_one_name_are_ambiguous_and_the_last_is_kept() {
        let tool = |name: &str, n: u32| {
            format!(
                r#"{{"name":"{name}","description":"{name} {n}","inputSchema":{{"type":"object"}}}}"#
            )
        };
        let tools = [
            tool("b", 1),
            tool("a", 1),
            tool("b", 2),
            tool("c", 1),
            tool("a", 2),
            tool("b", 3),
        ];
        let text = format!(r#"{{"server":"s","tools":[{}]}}"#, tools.join(","));
        for digests_only in [false, true] {
            let opts = ReadOptions {
                digests_only,
                ..ReadOptions::default()
            };
            let servers = read_in_memory(
                vec![(PathBuf::from("t.json"), text.clone().into_bytes())],
                &opts,
            )
            .expect("reads")
            .servers;
            let s = &servers["s"];
            let names: Vec<(Option<&str>, Option<&str>, &str)> = s
                .ambiguities
                .iter()
                .map(|a| (a.tool.as_deref(), a.field.as_deref(), a.message.as_str()))
                .collect();
            assert_eq!(
                names,
                [
                    (
                        Some("a"),
                        Some("/name"),
                        "tool name appears 2 times in one server (at /tools/1, /tools/4); clients may resolve either"
                    ),
                    (
                        Some("b"),
                        Some("/name"),
                        "tool name appears 3 times in one server (at /tools/0, /tools/2, /tools/5); clients may resolve either"
                    ),
                ],
                "digests only: {digests_only}"
            );
            let kept: Vec<(&str, Option<String>)> = s
                .tools
                .iter()
                .map(|(name, t)| {
                    let raw = t.raw();
                    let said = raw.get("description").and_then(Value::as_str);
                    (name.as_str(), said.map(str::to_string))
                })
                .collect();
            let said = |name, text: &str| (name, Some(text.to_string()));
            assert_eq!(
                kept,
                [said("a", "a 2"), said("b", "b 3"), said("c", "c 1")],
                "digests only: {digests_only}"
            );
            assert_eq!(s.tools["b"].pointer, "/tools/5");
        }
    }
}
