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
    /// The Gemini CLI: `.gemini/settings.json`, each server's `excludeTools`
    /// and `mcp.excluded`.
    GeminiCli,
    /// VS Code: no project setting that refuses one MCP tool.
    VsCode,
}

impl Client {
    /// Every client, in the order they are reported.
    pub const ALL: [Client; 4] = [
        Client::ClaudeCode,
        Client::Cursor,
        Client::GeminiCli,
        Client::VsCode,
    ];

    /// The name `--client` takes and the report shows.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::GeminiCli => "gemini-cli",
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
            Client::GeminiCli => Some(".gemini/settings.json"),
            Client::VsCode => None,
        }
    }

    /// The project MCP config the client reads, from the top of the work
    /// tree: where it is there, the client is in use.
    pub fn mcp_config(self) -> &'static str {
        match self {
            Client::ClaudeCode => ".mcp.json",
            Client::Cursor => ".cursor/mcp.json",
            Client::GeminiCli => ".gemini/settings.json",
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
            Client::GeminiCli | Client::VsCode => None,
        };
        match text {
            Some(text) => by_text
                .entry(text)
                .or_default()
                .push(format!("{subject}: {}", r.why.as_str())),
            None if matches!(client, Client::VsCode | Client::GeminiCli) => {}
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
/// no file), where `recorded` are the rules git-kams wrote there before:
/// [`merge_at`] the `permissions.deny` list of Claude Code and the Cursor
/// CLI.
pub fn merge(
    settings: Option<&Value>,
    recorded: &BTreeSet<String>,
    wanted: &BTreeSet<String>,
) -> Result<Merged, String> {
    merge_at(settings, &["permissions", "deny"], recorded, wanted)
}

/// Merges `wanted` into the list at `path` (object members down to an
/// array) of `settings`, where `recorded` are the entries git-kams wrote
/// there before.
///
/// A recorded entry still in the list and no longer wanted is taken out;
/// a wanted entry not there is added at the end; every other key, entry
/// and order stays. An entry the user wrote (there and not recorded) is
/// never taken out and never recorded, even when it is wanted. Objects on
/// the way are made when an entry is to be added. Running the merge on its
/// own result changes nothing.
pub fn merge_at(
    settings: Option<&Value>,
    path: &[&str],
    recorded: &BTreeSet<String>,
    wanted: &BTreeSet<String>,
) -> Result<Merged, String> {
    let top = match settings {
        None => Object::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(v) => return Err(format!("top level is {}, expected an object", v.kind())),
    };
    let (list_key, parents) = path.split_last().expect("a path to a list");
    // The objects on the way, each as it is (or new).
    let mut chain: Vec<Object> = vec![top];
    let mut at = String::new();
    for key in parents {
        at.push_str(&format!("{key:?}."));
        let next = match chain.last().and_then(|o| o.get(key)) {
            None => Object::new(),
            Some(Value::Object(o)) => o.clone(),
            Some(v) => {
                return Err(format!(
                    "{} is {}, expected an object",
                    at.trim_end_matches('.'),
                    v.kind()
                ))
            }
        };
        chain.push(next);
    }
    let list: Vec<Value> = match chain.last().and_then(|o| o.get(list_key)) {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(v) => {
            return Err(format!(
                "{at}{list_key:?} is {}, expected an array",
                v.kind()
            ))
        }
    };
    let present: BTreeSet<&str> = list.iter().filter_map(Value::as_str).collect();
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
    let mut kept: Vec<Value> = list
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
    let changed = !added.is_empty() || !removed.is_empty();
    // Put the list back, and each object into the one above it.
    let mut inner = Value::Array(kept);
    let mut key: &str = list_key;
    let settings = loop {
        let mut o = chain.pop().expect("the top is there");
        if changed {
            o.insert(key.to_string(), inner);
        }
        match chain.len() {
            0 => break Value::Object(o),
            n => {
                key = parents[n - 1];
                inner = Value::Object(o);
            }
        }
    };
    Ok(Merged {
        settings,
        owned,
        added,
        removed,
    })
}

/// The Gemini CLI's settings with the refusals merged in: each server the
/// file configures (`mcpServers`) gets its refused tools in its
/// `excludeTools`, by their exact names, and each denied server is in
/// `mcp.excluded`. `recorded` gives what git-kams wrote at each list (by
/// [`gemini_key`]). Returns the settings, what is now git-kams's at each
/// list, the lines of what was added and taken out, every entry wanted
/// (shown as `SERVER/TOOL` or `SERVER (every tool)`), and the refusals of
/// servers the file does not configure, which the Gemini CLI does not run
/// from it.
pub fn merge_gemini(
    settings: Option<&Value>,
    file: &str,
    refusals: &[Refusal],
    recorded: &BTreeMap<String, BTreeSet<String>>,
) -> Result<GeminiMerged, String> {
    let configured: Vec<String> = settings
        .and_then(|s| s.get("mcpServers"))
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut out = GeminiMerged {
        settings: settings.cloned(),
        ..GeminiMerged::default()
    };
    let mut lists: Vec<(Vec<String>, BTreeSet<String>, String)> = Vec::new();
    let excluded: BTreeSet<String> = refusals
        .iter()
        .filter(|r| r.tool.is_none())
        .map(|r| r.server.clone())
        .collect();
    lists.push((
        vec!["mcp".into(), "excluded".into()],
        excluded.clone(),
        String::new(),
    ));
    for server in &configured {
        let tools: BTreeSet<String> = refusals
            .iter()
            .filter(|r| &r.server == server)
            .filter_map(|r| r.tool.clone())
            .collect();
        lists.push((
            vec!["mcpServers".into(), server.clone(), "excludeTools".into()],
            tools,
            server.clone(),
        ));
    }
    for r in refusals {
        let subject = match &r.tool {
            Some(t) => format!("{}/{t}", r.server),
            None => format!("{} (every tool)", r.server),
        };
        let written = r.tool.is_none() || configured.contains(&r.server);
        if written {
            out.wanted.push(format!("{subject}: {}", r.why.as_str()));
        } else {
            out.elsewhere.push(subject);
        }
    }
    for (path, wanted, server) in lists {
        let key = gemini_key(file, &path);
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let mine = recorded.get(&key).cloned().unwrap_or_default();
        let merged = merge_at(out.settings.as_ref(), &path, &mine, &wanted)?;
        let shown = |entry: &String| {
            if server.is_empty() {
                format!("{entry} (every tool: mcp.excluded)")
            } else {
                format!("{server}/{entry} (excludeTools)")
            }
        };
        out.added.extend(merged.added.iter().map(shown));
        out.removed.extend(merged.removed.iter().map(shown));
        if !merged.unchanged() {
            out.settings = Some(merged.settings);
        }
        out.owned.push((key, merged.owned));
    }
    Ok(out)
}

/// The Gemini CLI's settings with the refusals merged in ([`merge_gemini`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeminiMerged {
    /// The settings (`None`: there was no file, and nothing to write).
    pub settings: Option<Value>,
    /// What is git-kams's at each list, by [`gemini_key`].
    pub owned: Vec<(String, BTreeSet<String>)>,
    /// Entries added, as the report shows them.
    pub added: Vec<String>,
    /// Entries taken out, as the report shows them.
    pub removed: Vec<String>,
    /// Every refusal written, with why.
    pub wanted: Vec<String>,
    /// Refusals of servers the file does not configure.
    pub elsewhere: Vec<String>,
}

/// Where a list of the Gemini CLI's settings is recorded: the file and the
/// list's JSON pointer.
pub fn gemini_key(file: &str, path: &[String]) -> String {
    let mut key = format!("{file}#");
    for p in path {
        key.push('/');
        crate::json::push_pointer_token(&mut key, p);
    }
    key
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
