//! SARIF 2.1.0, the format code scanning services read (GitHub code
//! scanning, Azure DevOps, IDE viewers), so that findings appear on the
//! line of the inventory file they are about and follow an entry from run
//! to run.
//!
//! One run, one rule per finding [`Class`], one result per finding. The
//! output is deterministic (findings arrive sorted, keys are written in a
//! fixed order: the order of the fields of the types below) and every
//! string goes through the same escaping as the other formats: descriptor
//! text through [`escape_display`], every JSON string through
//! [`document`], so no control, invisible or bidi character ever appears
//! raw.
//!
//! Where each finding points is worked out at the edge (it reads files):
//! this module only writes the [`Place`]s it is given.

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::document::{self, Layout};
use crate::canon::Digest;
use crate::finding::{Class, Finding, Severity};
use crate::text::escape_display;

/// The SARIF version written.
pub const SARIF_VERSION: &str = "2.1.0";

/// The schema the output declares (the OASIS schema, as SchemaStore serves it).
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The base every relative URI is resolved against: the top of the work
/// tree (or the current directory outside git).
pub const SRCROOT: &str = "%SRCROOT%";

/// The key of each result's stable fingerprint (see [`fingerprint`]).
pub const FINGERPRINT_KEY: &str = "kamsEntry/v1";

/// A position in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spot {
    /// Relative to the top of the work tree (written against
    /// [`SRCROOT`]), or absolute for a file outside it.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in Unicode code points (the run says so with
    /// `columnKind`).
    pub column: usize,
}

/// Where one finding points.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The value the finding is about, in an inventory file, a client
    /// config, or (for an entry no longer advertised) the lock.
    pub at: Option<Spot>,
    /// The JSON pointer of that value in its file, as the finding names it
    /// (the position may be an ancestor's, when the value is absent).
    pub pointer: Option<String>,
    /// The lock entry of the finding's subject, when it has one and the
    /// lock is a file of the work tree.
    pub lock: Option<Spot>,
}

/// What a rule says about its class.
struct Rule {
    class: Class,
    name: &'static str,
    short: &'static str,
    full: &'static str,
    /// The severity most findings of the class have.
    typical: Severity,
    tags: &'static [&'static str],
}

/// The rules, one per class, in [`Class::ALL`] order (so a result's
/// `ruleIndex` is its class's index there).
///
/// A rule has one class, but findings of a class vary in severity (a
/// drifted description is high, a narrowed schema low; a pinned entry
/// moves severities). GitHub reads `security-severity` from the rule only,
/// so the rule carries the class's typical severity, the one its headline
/// case has, and each result carries its own in `level` and in
/// `properties` (`severity`, `security-severity`), which is what other
/// consumers and `--fail-on` go by.
fn rule(class: Class) -> Rule {
    let (name, short, full, typical, tags): (_, _, _, _, &'static [&'static str]) = match class {
        Class::Drift => (
            "Drift",
            "A reviewed descriptor field changed",
            "A field of a tool or server in kams.lock (description, schemas, annotations, title, server instructions or info, launch) differs from what the server advertises now. Text that enters the model's context changed after it was reviewed; review the change and pin it again (`git kams pin`) or revert it.",
            Severity::High,
            &["security", "mcp", "change-review"],
        ),
        Class::Added => (
            "Added",
            "A tool or server that nobody reviewed",
            "The inventory advertises a tool or server that kams.lock does not know: a capability nobody reviewed. Review it and record or pin it (`git kams record`, `git kams pin`).",
            Severity::Medium,
            &["security", "mcp", "change-review"],
        ),
        Class::Removed => (
            "Removed",
            "A locked tool is no longer advertised",
            "A tool or server in kams.lock is not in the inventory any more. Usually harmless; a tool that disappears and comes back under another name or server deserves a look.",
            Severity::Low,
            &["security", "mcp", "change-review"],
        ),
        Class::Ambiguous => (
            "Ambiguous",
            "Input that two readers may read two ways",
            "A duplicate key, a key that equals another after Unicode normalisation, or a tool name listed twice: clients may act on a different value than the one reviewed.",
            Severity::High,
            &["security", "mcp", "parser-differential"],
        ),
        Class::Unapproved => (
            "Unapproved",
            "Recorded but not pinned",
            "The entry is in kams.lock as provisional: it was seen, but no person approved it. Review it and run `git kams pin`.",
            Severity::Low,
            &["security", "mcp", "change-review"],
        ),
        Class::Poison => (
            "Poison",
            "Text that gives the model instructions",
            "Descriptor text carries named tool-poisoning signals (instruction blocks, concealment, reading secrets, sending data elsewhere...). The evidence names each signal and its weight; the weights add up to the severity.",
            Severity::High,
            &["security", "mcp", "prompt-injection"],
        ),
        Class::Hidden => (
            "Hidden",
            "Characters a person cannot see",
            "Zero-width characters, bidi controls, Unicode tag characters, ANSI escapes or other invisible code points in descriptor text: the model reads them, a reviewer does not see them.",
            Severity::High,
            &["security", "mcp", "prompt-injection"],
        ),
        Class::Shadow => (
            "Shadow",
            "Two servers, one tool name",
            "Two servers expose the same (or a confusable) tool name, or one server's text talks about another server's tool: which tool runs, or what the model does with it, is up to another server.",
            Severity::Medium,
            &["security", "mcp", "tool-shadowing"],
        ),
        Class::Squat => (
            "Squat",
            "A lookalike of a trusted tool name",
            "A tool name that looks like a pinned or another server's tool name (confusable characters, mixed scripts, near misses) and may be chosen in its place.",
            Severity::High,
            &["security", "mcp", "typosquatting"],
        ),
        Class::Transport => (
            "Transport",
            "A risky way to reach a server",
            "How a client starts or reaches a server: a package fetched anew at each start, a shell wrapper or inline code, plain http to a remote host, or a secret written into a file in git.",
            Severity::Medium,
            &["security", "mcp", "supply-chain"],
        ),
        Class::Denied => (
            "Denied",
            "A denied tool is still advertised",
            "A reviewer denied this tool or server in kams.lock (`git kams deny` or `git kams review`), and the server still advertises it, whatever its text now is. A client should not offer it to the model; remove it from the server or its config, or have a reviewer approve it with `git kams pin SERVER/TOOL`.",
            Severity::High,
            &["security", "mcp", "change-review"],
        ),
        Class::Renamed => (
            "Renamed",
            "A reviewed tool under a new name",
            "A tool kams.lock pins is no longer advertised, and a tool of the same server it does not know is, with the same (or nearly the same) descriptor: the tool was renamed. The finding names both names and what else changed, at the severity of the worst of it; review it and pin the new name (`git kams pin SERVER/NEW`, which records \"renamed from\" the old one).",
            Severity::Low,
            &["security", "mcp", "change-review"],
        ),
        Class::Flow => (
            "ToxicFlow",
            "Servers that together can leak private data",
            "One client is given tools that take in content others wrote (web pages, issues, messages), tools that read private data, and tools that send data out: text the model reads can order it to send the private data out, even when every tool is honest. The finding names the tools of each leg; it is high when only new or changed tools fill a leg. Split the servers between clients, refuse a leg (`git kams deny`, `git kams enforce`), or accept the risk knowingly.",
            Severity::Medium,
            &["security", "mcp", "toxic-flow"],
        ),
        Class::Cloaking => (
            "Cloaking",
            "A server that answers clients differently",
            "`capture --as` captured the server as several MCP clients (the clientInfo each sends), and it told one identity otherwise than another: other tools, descriptions or instructions. A server that answers by client name can show a scanner or a reviewer clean tools and a real client poisoned ones. Review what each identity was told; do not approve the server until they agree.",
            Severity::High,
            &["security", "mcp", "cloaking"],
        ),
    };
    Rule {
        class,
        name,
        short,
        full,
        typical,
        tags,
    }
}

/// The rule id of a class: `kams/drift`, `kams/poison`...
pub fn rule_id(class: Class) -> String {
    format!("kams/{}", class.as_str())
}

/// The SARIF level of a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// GitHub's `security-severity` of a severity: a CVSS-like score whose
/// bands (9.0 critical, 7.0 high, 4.0 medium, 0.1 low) put each of ours in
/// the band of the same name.
pub fn security_severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "9.5",
        Severity::High => "8.0",
        Severity::Medium => "5.5",
        Severity::Low => "3.0",
        Severity::Info => "1.0",
    }
}

/// The stable key of a finding across runs: hex SHA-256 of `server \0
/// tool \0 class \0 field` (an absent tool or field is empty; tool names
/// are never empty). It names the lock entry, the class and the field, not
/// the message, whose digests and diffs change from run to run.
pub fn fingerprint(f: &Finding) -> String {
    let key = [
        f.server.as_str(),
        f.tool.as_deref().unwrap_or(""),
        f.class.as_str(),
        f.field.as_deref().unwrap_or(""),
    ]
    .join("\0");
    hex(&key)
}

fn hex(s: &str) -> String {
    let d = Digest::of(s.as_bytes()).to_string();
    d.strip_prefix("sha256:").unwrap_or(&d).to_string()
}

/// A URI reference for `path`: relative paths percent-encoded segment by
/// segment (written against [`SRCROOT`]), absolute ones as `file://` URIs.
fn uri(path: &Path) -> (String, bool) {
    let mut segments = Vec::new();
    let mut absolute = false;
    for c in path.components() {
        match c {
            Component::RootDir => absolute = true,
            Component::Normal(n) => segments.push(percent_encode(n.as_encoded_bytes())),
            Component::ParentDir => segments.push("..".into()),
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
    let joined = segments.join("/");
    if absolute {
        (format!("file:///{joined}"), true)
    } else {
        (joined, false)
    }
}

/// RFC 3986 percent-encoding of one path segment: only unreserved
/// characters and a few sub-delimiters stay as they are, so that spaces,
/// `:` (which would read as a scheme), `%`, `#`, `?` and every non-ASCII
/// byte are encoded.
fn percent_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A SARIF log (the subset we write), in the order its keys are written.
#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    automation_details: Id<&'a str>,
    /// [`SRCROOT`] and what it stands for.
    #[serde(serialize_with = "document::pairs")]
    original_uri_base_ids: [(&'static str, Description); 1],
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    information_uri: &'static str,
    rules: Vec<RuleJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleJson {
    id: String,
    name: &'static str,
    short_description: Text<&'static str>,
    full_description: Text<&'static str>,
    help: Text<&'static str>,
    default_configuration: Level,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Level {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: &'static [&'static str],
    severity: &'static str,
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
}

#[derive(Serialize)]
struct Description {
    description: Text<&'static str>,
}

/// SARIF's message object.
#[derive(Serialize)]
struct Text<S> {
    text: S,
}

#[derive(Serialize)]
struct Id<T> {
    id: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text<String>,
    locations: [Location<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    related_locations: Option<[Related; 1]>,
    /// [`FINGERPRINT_KEY`] and the finding's fingerprint.
    #[serde(serialize_with = "document::pairs")]
    partial_fingerprints: [(&'static str, String); 1],
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<Physical>,
    logical_locations: [Logical<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<PointerProperty<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Logical<'a> {
    fully_qualified_name: String,
    name: &'a str,
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PointerProperty<'a> {
    json_pointer: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Related {
    id: u32,
    physical_location: Physical,
    message: Text<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Physical {
    artifact_location: Artifact,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Artifact {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    severity: &'static str,
    #[serde(rename = "security-severity")]
    security_severity: &'static str,
    class: &'static str,
    server: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

fn physical(spot: &Spot) -> Physical {
    let (uri, absolute) = uri(&spot.path);
    Physical {
        artifact_location: Artifact {
            uri,
            uri_base_id: (!absolute).then_some(SRCROOT),
        },
        region: Region {
            start_line: spot.line,
            start_column: spot.column,
        },
    }
}

fn rule_json(r: &Rule) -> RuleJson {
    RuleJson {
        id: rule_id(r.class),
        name: r.name,
        short_description: Text { text: r.short },
        full_description: Text { text: r.full },
        help: Text { text: r.full },
        default_configuration: Level {
            level: level(r.typical),
        },
        properties: RuleProperties {
            tags: r.tags,
            severity: r.typical.as_str(),
            security_severity: security_severity(r.typical),
        },
    }
}

fn result_json<'a>(f: &'a Finding, place: &'a Place, fingerprint: String) -> SarifResult<'a> {
    let subject = f.subject();
    let mut first = escape_display(&subject);
    if let Some(field) = &f.field {
        first.push(' ');
        first.push_str(&escape_display(field));
    }
    first.push_str(": ");
    first.push_str(&escape_display(&f.message));
    let message: Vec<String> = std::iter::once(first)
        .chain(f.evidence.iter().map(|e| escape_display(e)))
        .collect();
    let class_index = Class::ALL
        .iter()
        .position(|c| *c == f.class)
        .expect("every class has a rule");
    let related_locations = place.lock.as_ref().map(|lock| {
        [Related {
            id: 1,
            physical_location: physical(lock),
            message: Text {
                text: format!("kams.lock entry of {}", escape_display(&subject)),
            },
        }]
    });
    SarifResult {
        rule_id: rule_id(f.class),
        rule_index: class_index,
        level: level(f.severity),
        message: Text {
            text: message.join("\n"),
        },
        locations: [Location {
            physical_location: place.at.as_ref().map(physical),
            logical_locations: [Logical {
                fully_qualified_name: subject,
                name: f.tool.as_deref().unwrap_or(&f.server),
                kind: if f.tool.is_some() {
                    "function"
                } else {
                    "module"
                },
            }],
            properties: place
                .pointer
                .as_deref()
                .map(|p| PointerProperty { json_pointer: p }),
        }],
        related_locations,
        partial_fingerprints: [(FINGERPRINT_KEY, fingerprint)],
        properties: ResultProperties {
            severity: f.severity.as_str(),
            security_severity: security_severity(f.severity),
            class: f.class.as_str(),
            server: &f.server,
            tool: f.tool.as_deref(),
            field: f.field.as_deref(),
        },
    }
}

/// Writes sorted findings as a SARIF 2.1.0 log with one run. `places[i]`
/// is where `findings[i]` points; `automation_id` tells runs of different
/// commands apart (`git-kams/scan/`).
pub fn write(
    findings: &[Finding],
    places: &[Place],
    automation_id: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    assert_eq!(findings.len(), places.len(), "one place per finding");
    // The same entry, class and field twice in one run (a config and an
    // inventory naming one server, say) must stay two results: the second
    // and later get their ordinal in the key.
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    let results = findings
        .iter()
        .zip(places)
        .map(|(f, p)| {
            let base = fingerprint(f);
            let n = seen.entry(base.clone()).or_insert(0);
            let fp = if *n == 0 {
                base
            } else {
                hex(&format!("{base}\0{n}"))
            };
            *n += 1;
            result_json(f, p, fp)
        })
        .collect();
    let log = Log {
        schema: SARIF_SCHEMA,
        version: SARIF_VERSION,
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "git-kams",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    // Set when Cargo.toml names a repository; a made-up
                    // address would be worse than none.
                    information_uri: option_env!("CARGO_PKG_REPOSITORY").unwrap_or(""),
                    rules: Class::ALL.iter().map(|&c| rule_json(&rule(c))).collect(),
                },
            },
            automation_details: Id { id: automation_id },
            original_uri_base_ids: [(
                SRCROOT,
                Description {
                    description: Text {
                        text: "The top of the git work tree (outside git: the current directory)",
                    },
                },
            )],
            column_kind: "unicodeCodePoints",
            results,
        }],
    };
    document::write(&log, Layout::Indented, out)
}
