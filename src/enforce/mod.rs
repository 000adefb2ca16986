//! The approval, carried into the clients: from the lock and the
//! inventory, the rules each MCP client is given to refuse the tools
//! nobody approved, and the merge of those rules into the client's own
//! project settings.
//!
//! The lock and the hooks keep unapproved drift out of the repository, but
//! a model calls whatever tool its client offers. Claude Code and the
//! Cursor CLI read per-tool deny rules from a project file the team
//! commits, so `git kams enforce` writes there a rule for every tool the
//! lock denies and for every tool the inventory shows that is not pinned
//! as it is shown (new, provisional, or drifted from what was pinned).
//!
//! The settings files are the user's: their other keys and rules stay as
//! they are, in their order. The rules git-kams wrote are recorded apart
//! ([`Record`], `.kams/enforce.json`), so that a later run removes only
//! its own rules that no longer apply, and a rule the user wrote is never
//! removed, even when it is one git-kams would write too.
//!
//! Pure: values in, values out. Reading and writing the files is the
//! edge's (`commands::enforce`).

use std::collections::{BTreeMap, BTreeSet};

use crate::compare::Pair;
use crate::json::{Object, Value};
use crate::lock::State;

#[cfg(test)]
mod tests;

/// An MCP client git-kams knows the project settings of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Client {
    /// Claude Code: `.claude/settings.json`, `permissions.deny`.
    ClaudeCode,
    /// The Cursor CLI (`cursor-agent`): `.cursor/cli.json`, `permissions.deny`.
    Cursor,
    /// VS Code: no project setting that refuses one MCP tool.
    VsCode,
}

impl Client {
    /// Every client, in the order they are reported.
    pub const ALL: [Client; 3] = [Client::ClaudeCode, Client::Cursor, Client::VsCode];

    /// The name `--client` takes and the report shows.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::VsCode => "vscode",
        }
    }

    /// The client named `s`.
    pub fn parse(s: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The project settings file that holds its deny rules, from the top
    /// of the work tree; `None` when the client has none.
    pub fn settings(self) -> Option<&'static str> {
        match self {
            Client::ClaudeCode => Some(".claude/settings.json"),
            Client::Cursor => Some(".cursor/cli.json"),
            Client::VsCode => None,
        }
    }

    /// The project MCP config the client reads, from the top of the work
    /// tree: where it is there, the client is in use.
    pub fn mcp_config(self) -> &'static str {
        match self {
            Client::ClaudeCode => ".mcp.json",
            Client::Cursor => ".cursor/mcp.json",
            Client::VsCode => ".vscode/mcp.json",
        }
    }

    /// Why no rule can be written for it, for a client without settings.
    pub fn unsupported(self) -> Option<&'static str> {
        match self {
            Client::VsCode => Some(
                "not supported by this client: VS Code has no project setting that refuses one MCP tool (tools are turned off per chat in its tools picker)",
            ),
            _ => None,
        }
    }
}

/// Why a tool (or a whole server) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Why {
    /// The lock denies it.
    Denied,
    /// Advertised, and not in the lock.
    New,
    /// Advertised, and provisional in the lock.
    Provisional,
    /// Advertised, pinned, and advertised otherwise than it was pinned.
    Drifted,
}

impl Why {
    /// As the report says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Denied => "denied",
            Why::New => "not pinned: new",
            Why::Provisional => "not pinned: provisional",
            Why::Drifted => "not pinned as advertised: drifted",
        }
    }
}

/// A tool, or with no tool a whole server, that the clients must refuse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Refusal {
    /// The server's name, as in the lock and the client configs.
    pub server: String,
    /// The tool's name; `None`: every tool of the server.
    pub tool: Option<String>,
    /// Why.
    pub why: Why,
}

/// What the clients must refuse, given every pair of the inventory and the
/// lock ([`crate::compare::pairs`]): every denied entry, and every tool
/// advertised and not pinned as it is advertised. A denied server stands
/// for its tools, which are not listed apart.
pub fn refusals(pairs: &[Pair<'_>]) -> Vec<Refusal> {
    let denied_servers: BTreeSet<&str> = pairs
        .iter()
        .filter(|p| p.tool.is_none() && p.entry.is_some_and(|e| e.state == State::Denied))
        .map(|p| p.server)
        .collect();
    let mut out = Vec::new();
    for p in pairs {
        let why = match (p.entry, p.seen) {
            (Some(e), _) if e.state == State::Denied => Some(Why::Denied),
            _ if p.tool.is_none() => None,
            _ if denied_servers.contains(p.server) => None,
            (None, Some(_)) => Some(Why::New),
            (Some(e), Some(_)) if e.state == State::Provisional => Some(Why::Provisional),
            (Some(e), Some(seen)) if e.descriptor.digest != seen.digest => Some(Why::Drifted),
            _ => None,
        };
        if let Some(why) = why {
            out.push(Refusal {
                server: p.server.to_string(),
                tool: p.tool.map(str::to_string),
                why,
            });
        }
    }
    out.sort();
    out
}

/// One rule as a client reads it, and the refusals it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule's text, as written in the settings file.
    pub text: String,
    /// What it refuses and why, as the report shows it.
    pub because: Vec<String>,
}

/// The rules of `client` for `refusals`, sorted by text, and the
/// refusals no rule of this client can express (a name the rule syntax
/// cannot hold), with why. Two refusals may share a rule: Claude Code
/// writes a name's characters outside `[A-Za-z0-9_-]` as `_`, and the
/// Cursor CLI cannot name a tool whose name holds its rule's punctuation,
/// so that its whole server is refused instead (refusing more, never
/// less).
pub fn rules(client: Client, refusals: &[Refusal]) -> (Vec<Rule>, Vec<String>) {
    let mut by_text: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unwritable = Vec::new();
    for r in refusals {
        let subject = match &r.tool {
            Some(t) => format!("{}/{t}", r.server),
            None => format!("{} (every tool)", r.server),
        };
        let text = match client {
            Client::ClaudeCode => Some(match &r.tool {
                Some(t) => format!("mcp__{}__{}", claude_name(&r.server), claude_name(t)),
                None => format!("mcp__{}", claude_name(&r.server)),
            }),
            Client::Cursor => match (&r.tool, cursor_name(&r.server)) {
                (_, false) => None,
                (Some(t), true) if cursor_name(t) => Some(format!("Mcp({}:{t})", r.server)),
                (_, true) => Some(format!("Mcp({}:*)", r.server)),
            },
            Client::VsCode => None,
        };
        match text {
            Some(text) => by_text
                .entry(text)
                .or_default()
                .push(format!("{subject}: {}", r.why.as_str())),
            None if client == Client::VsCode => {}
            None => unwritable.push(format!(
                "{subject}: {}: the server's name holds a character a {} rule cannot hold",
                r.why.as_str(),
                client.name()
            )),
        }
    }
    let rules = by_text
        .into_iter()
        .map(|(text, because)| Rule { text, because })
        .collect();
    (rules, unwritable)
}

/// A server's or tool's name as Claude Code writes it in a tool's
/// permission name: every character outside `[A-Za-z0-9_-]` becomes `_`.
fn claude_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `name` can stand in a Cursor `Mcp(server:tool)` rule as it is:
/// not empty, and none of the rule's punctuation, glob characters,
/// spaces, control characters, or characters that hide text (a rule the
/// team commits must read as it matches).
fn cursor_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| {
            !c.is_whitespace()
                && !c.is_control()
                && !crate::text::is_concealing(c)
                && !matches!(c, ':' | '(' | ')' | '*' | '?' | ',' | '[' | ']' | '{' | '}')
        })
}

/// The rules git-kams wrote into each settings file, as
/// `.kams/enforce.json` keeps them: by the file's path from the top of
/// the work tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Rules written, by settings file.
    pub files: BTreeMap<String, BTreeSet<String>>,
}

/// The record file's format version.
pub const RECORD_VERSION: u64 = 1;

impl Record {
    /// Reads a record file's JSON; an error says what is wrong in it.
    pub fn parse(v: &Value) -> Result<Record, String> {
        let top = v.as_object().ok_or("expected an object")?;
        match top.get("version") {
            Some(Value::Number(n)) if n.as_f64() == RECORD_VERSION as f64 => {}
            Some(Value::Number(n)) => {
                return Err(format!(
                    "format version {} is not one this git-kams reads ({RECORD_VERSION}): upgrade git-kams",
                    n.lexeme()
                ))
            }
            _ => return Err("\"version\" is missing or not a number".into()),
        }
        let mut files = BTreeMap::new();
        if let Some(written) = top.get("written") {
            let written = written.as_object().ok_or("\"written\" is not an object")?;
            for (path, rules) in written.iter() {
                let rules = rules
                    .as_array()
                    .ok_or_else(|| format!("\"written\".{path:?} is not an array"))?;
                let mut set = BTreeSet::new();
                for r in rules {
                    let r = r.as_str().ok_or_else(|| {
                        format!("\"written\".{path:?} holds {}, expected strings", r.kind())
                    })?;
                    set.insert(r.to_string());
                }
                files.insert(path.clone(), set);
            }
        }
        for key in top.iter().map(|(k, _)| k) {
            if key != "version" && key != "written" {
                return Err(format!("unknown key {key:?}"));
            }
        }
        Ok(Record { files })
    }

    /// The record file's text: canonical, so that two runs that record the
    /// same write the same bytes.
    pub fn to_text(&self) -> String {
        let written: Object = self
            .files
            .iter()
            .filter(|(_, rules)| !rules.is_empty())
            .map(|(path, rules)| {
                let list = rules.iter().map(|r| Value::String(r.clone())).collect();
                (path.clone(), Value::Array(list))
            })
            .collect();
        let top: Object = [
            (
                "version".to_string(),
                Value::Number(
                    crate::json::Number::from_f64(RECORD_VERSION as f64).expect("finite"),
                ),
            ),
            ("written".to_string(), Value::Object(written)),
        ]
        .into_iter()
        .collect();
        to_text(&Value::Object(top))
    }
}

/// A settings file with the rules merged in.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// The settings, the user's keys and rules as they were.
    pub settings: Value,
    /// The rules git-kams now owns in the file (to record).
    pub owned: BTreeSet<String>,
    /// Rules added to `permissions.deny`, sorted.
    pub added: Vec<String>,
    /// Rules of git-kams's that no longer apply, taken out, sorted.
    pub removed: Vec<String>,
}

impl Merged {
    /// Whether the merge changed nothing in the settings.
    pub fn unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// Merges `wanted` (rule texts) into `settings` (the file's JSON; `None`:
/// no file), where `recorded` are the rules git-kams wrote there before.
///
/// A recorded rule still in `permissions.deny` and no longer wanted is
/// taken out; a wanted rule not there is added at the end; every other
/// key, rule and order stays. A rule the user wrote (there and not
/// recorded) is never taken out and never recorded, even when it is
/// wanted. Running the merge on its own result changes nothing.
pub fn merge(
    settings: Option<&Value>,
    recorded: &BTreeSet<String>,
    wanted: &BTreeSet<String>,
) -> Result<Merged, String> {
    let mut top = match settings {
        None => Object::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(v) => return Err(format!("top level is {}, expected an object", v.kind())),
    };
    let mut permissions = match top.get("permissions") {
        None => Object::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(v) => {
            return Err(format!(
                "\"permissions\" is {}, expected an object",
                v.kind()
            ))
        }
    };
    let deny: Vec<Value> = match permissions.get("deny") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(v) => {
            return Err(format!(
                "\"permissions\".\"deny\" is {}, expected an array",
                v.kind()
            ))
        }
    };
    let present: BTreeSet<&str> = deny.iter().filter_map(Value::as_str).collect();
    let ours: BTreeSet<&str> = present
        .iter()
        .copied()
        .filter(|r| recorded.contains(*r))
        .collect();
    let users: BTreeSet<&str> = present.difference(&ours).copied().collect();
    let removed: BTreeSet<&str> = ours
        .iter()
        .copied()
        .filter(|r| !wanted.contains(*r))
        .collect();
    let mut kept: Vec<Value> = deny
        .iter()
        .filter(|v| v.as_str().is_none_or(|r| !removed.contains(r)))
        .cloned()
        .collect();
    let added: Vec<String> = wanted
        .iter()
        .filter(|r| !present.contains(r.as_str()))
        .cloned()
        .collect();
    kept.extend(added.iter().cloned().map(Value::String));
    let owned: BTreeSet<String> = wanted
        .iter()
        .filter(|r| !users.contains(r.as_str()))
        .cloned()
        .collect();
    let removed: Vec<String> = removed.into_iter().map(str::to_string).collect();
    if !added.is_empty() || !removed.is_empty() {
        permissions.insert("deny".into(), Value::Array(kept));
        top.insert("permissions".into(), Value::Object(permissions));
    }
    Ok(Merged {
        settings: Value::Object(top),
        owned,
        added,
        removed,
    })
}

/// `v` as a settings file's text: two spaces per level, members in their
/// order, numbers as they were written, and a final line feed.
pub fn to_text(v: &Value) -> String {
    let mut out = String::new();
    write(v, 0, &mut out);
    out.push('\n');
    out
}

fn write(v: &Value, level: usize, out: &mut String) {
    let indent = |n: usize, out: &mut String| {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', 2 * n));
    };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(n.lexeme()),
        Value::String(s) => out.push_str(&quoted(s)),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(level + 1, out);
                write(item, level + 1, out);
            }
            indent(level, out);
            out.push(']');
        }
        Value::Object(o) if o.is_empty() => out.push_str("{}"),
        Value::Object(o) => {
            out.push('{');
            for (i, (k, item)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(level + 1, out);
                out.push_str(&quoted(k));
                out.push_str(": ");
                write(item, level + 1, out);
            }
            indent(level, out);
            out.push('}');
        }
    }
}

/// `s` as a JSON string: serde_json's escaping (quotes, backslashes and
/// control characters), the text otherwise as it is.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}
