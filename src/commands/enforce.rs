//! `git kams enforce`: the lock's refusals written into the MCP clients'
//! project settings ([`crate::enforce`] says which rules and how they
//! merge), and `--check`, which says whether they are up to date.
//!
//! The settings files are the user's and are committed: each is read with
//! the strict JSON reader (a file it cannot read, or one that holds a key
//! twice, is an error and stays as it is), written whole by a rename, and
//! never through a link. The rules git-kams wrote are kept in
//! `.kams/enforce.json` beside the inventory.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use super::{emit, Env, PlainFormat, Status};
use crate::cache::lock::EntryFields;
use crate::cli::{EnforceArgs, SelectArgs};
use crate::compare::pairs;
use crate::enforce::{
    merge, merge_gemini, refusals, rules, to_text, Client, Record, Refusal, Rule,
};
use crate::json::{self, Value};
use crate::report::document::Layout;
use crate::text::{escape_display, shown_path};

/// The record of the rules git-kams wrote, from the top of the work tree.
pub const RECORD: &str = ".kams/enforce.json";

/// Largest settings or record file read (they are small; a larger one is
/// refused rather than read whole).
pub const MAX_SETTINGS: u64 = 16 << 20;

/// Runs `enforce`.
pub fn run(
    env: &Env,
    args: &EnforceArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    let format = env.plain_format("enforce")?;
    let top = top(env);
    let clients = clients(&top, &args.clients)?;
    let refused = refused(env, err)?;
    let outcome = apply(&top, &clients, &refused, !args.check)?;
    match format {
        PlainFormat::Text => emit(out, |o| outcome.write(o, args.check))?,
        PlainFormat::Json => emit(out, |o| outcome.write_json(o, args.check))?,
    }
    Ok(u8::from(
        !outcome.unwritable.is_empty() || (args.check && outcome.stale()),
    ))
}

/// [`after_approval`], for a command whose approval is made: a failure
/// here is a warning on `err`, since the approval itself stands.
pub fn refresh_after(env: &Env, out: &mut dyn Write, err: &mut dyn Write) {
    if let Err(e) = after_approval(env, out, err) {
        let _ = writeln!(
            err,
            "warning: the clients' deny rules were not checked: {}",
            escape_display(&format!("{e:#}"))
        );
    }
}

/// After an approval (`pin`, `review`, `deny`) changed the lock: where
/// enforcement is in use (git config `kams.enforce`, or a record of rules
/// written), the rules are refreshed (with `kams.enforce` true) or a line
/// says that they need to be. Nothing when neither is the case.
pub fn after_approval(env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Result<()> {
    let top = top(env);
    let refresh = env.config_bool("kams.enforce", false)?;
    if !refresh && !top.join(RECORD).exists() {
        return Ok(());
    }
    let clients = clients(&top, &[])?;
    let refused = refused(env, err)?;
    let outcome = apply(&top, &clients, &refused, refresh)?;
    if refresh {
        emit(out, |o| {
            outcome.write(o, false)?;
            if outcome.stale() {
                let files: Vec<&str> = outcome
                    .written
                    .iter()
                    .filter(|w| !w.added.is_empty() || !w.removed.is_empty())
                    .map(|w| w.file)
                    .chain([RECORD])
                    .collect();
                writeln!(
                    o,
                    "note: the clients' deny rules were refreshed (kams.enforce); commit {}",
                    files.join(" and ")
                )?;
            }
            Ok(())
        })?;
    } else if outcome.stale() {
        emit(out, |o| {
            writeln!(
                o,
                "note: the clients' deny rules are out of date with the lock: run `git kams enforce` and commit what it writes"
            )
        })?;
    }
    Ok(())
}

/// The top of the work tree (or the current folder outside git).
fn top(env: &Env) -> PathBuf {
    env.repo
        .workdir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The clients named (`all`: every one), or else those whose MCP config or
/// settings file is at `top`; an error when there is none.
fn clients(top: &Path, named: &[String]) -> Result<Vec<Client>> {
    let mut out: BTreeSet<Client> = BTreeSet::new();
    for n in named {
        match Client::parse(n) {
            Some(c) => {
                out.insert(c);
            }
            None => out.extend(Client::ALL),
        }
    }
    if named.is_empty() {
        out.extend(configured(&|f| {
            Ok(std::fs::symlink_metadata(top.join(f)).is_ok())
        })?);
        if out.is_empty() {
            bail!(
                "no MCP client is configured at the top of the work tree (no .mcp.json, .cursor/mcp.json, .gemini/settings.json or .vscode/mcp.json): name one with --client claude-code, cursor, gemini-cli or vscode"
            );
        }
    }
    Ok(out.into_iter().collect())
}

/// The clients whose MCP config or settings file is there, as `exists`
/// says of a path from the top (of the work tree, or of a commit's tree).
fn configured(exists: &Exists<'_>) -> Result<Vec<Client>> {
    let mut out = Vec::new();
    for c in Client::ALL {
        for f in std::iter::once(c.mcp_config()).chain(c.settings()) {
            if exists(f)? {
                out.push(c);
                break;
            }
        }
    }
    Ok(out)
}

/// What the clients must refuse, from the lock and the inventory of the
/// work tree.
fn refused(env: &Env, err: &mut dyn Write) -> Result<Vec<Refusal>> {
    let select = SelectArgs {
        keys: Vec::new(),
        at: None,
        inventory_at: None,
    };
    let (inventory, lock, _) = env.inventory_and_lock(&select, None, EntryFields::Digests, err)?;
    Ok(refusals(&pairs(&inventory, &lock)))
}

/// What happened to one client's settings.
struct Written {
    client: Client,
    /// The settings file, from the top of the work tree.
    file: &'static str,
    /// Every rule git-kams wants there.
    rules: Vec<Rule>,
    /// How many rules (or entries) git-kams wants there.
    count: usize,
    added: Vec<String>,
    removed: Vec<String>,
}

/// What `enforce` did (or, with `--check`, would do).
struct Outcome {
    written: Vec<Written>,
    /// Lines that say what was not written, and why (not errors).
    notes: Vec<String>,
    unsupported: Vec<(Client, &'static str)>,
    /// Refusals a client's rules cannot express, by client.
    unwritable: Vec<(Client, String)>,
}

impl Outcome {
    /// Whether a client's rules are out of date.
    fn stale(&self) -> bool {
        self.written
            .iter()
            .any(|w| !w.added.is_empty() || !w.removed.is_empty())
    }

    /// `enforce --format json`, version 1: per client its file, whether
    /// its rules are up to date, every rule wanted with why, and what was
    /// (or, with `--check`, would be) added and taken out.
    fn write_json(&self, o: &mut dyn Write, check: bool) -> std::io::Result<()> {
        let clients: Vec<serde_json::Value> = self
            .written
            .iter()
            .map(|w| {
                let rules: Vec<serde_json::Value> = w
                    .rules
                    .iter()
                    .map(|r| serde_json::json!({"rule": r.text, "because": r.because}))
                    .collect();
                serde_json::json!({
                    "client": w.client.name(),
                    "supported": true,
                    "file": w.file,
                    "up_to_date": w.added.is_empty() && w.removed.is_empty(),
                    "wanted": w.count,
                    "rules": rules,
                    "added": w.added,
                    "removed": w.removed,
                })
            })
            .chain(self.unsupported.iter().map(
                |(c, why)| serde_json::json!({"client": c.name(), "supported": false, "why": why}),
            ))
            .collect();
        let errors: Vec<serde_json::Value> = self
            .unwritable
            .iter()
            .map(|(c, what)| serde_json::json!({"client": c.name(), "cannot_refuse": what}))
            .collect();
        let doc = serde_json::json!({
            "version": 1,
            "check": check,
            "clients": clients,
            "errors": errors,
        });
        crate::report::document::write(&doc, Layout::rows(&["clients", "errors"]), o)
    }

    fn write(&self, o: &mut dyn Write, check: bool) -> std::io::Result<()> {
        for w in &self.written {
            let name = w.client.name();
            let count = match w.count {
                1 => "1 rule".to_string(),
                n => format!("{n} rules"),
            };
            if w.added.is_empty() && w.removed.is_empty() {
                writeln!(o, "{name}: {}: up to date ({count})", w.file)?;
                continue;
            }
            let (add, take) = if check {
                ("to add", "to take out")
            } else {
                ("added", "taken out")
            };
            let mut parts = Vec::new();
            if !w.added.is_empty() {
                parts.push(format!("{} {add}", w.added.len()));
            }
            if !w.removed.is_empty() {
                parts.push(format!("{} {take}", w.removed.len()));
            }
            let head = if check { "out of date: " } else { "" };
            writeln!(
                o,
                "{name}: {}: {head}{} ({count} wanted)",
                w.file,
                parts.join(", ")
            )?;
            for r in &w.added {
                match w.rules.iter().find(|rule| &rule.text == r) {
                    Some(rule) => writeln!(
                        o,
                        "  + {}  ({})",
                        escape_display(r),
                        escape_display(&rule.because.join("; "))
                    )?,
                    None => writeln!(o, "  + {}", escape_display(r))?,
                }
            }
            for r in &w.removed {
                writeln!(o, "  - {}  (no longer refused)", escape_display(r))?;
            }
        }
        for (client, why) in &self.unsupported {
            writeln!(o, "{}: {why}", client.name())?;
        }
        for note in &self.notes {
            writeln!(o, "note: {}", escape_display(note))?;
        }
        for (client, what) in &self.unwritable {
            writeln!(
                o,
                "error: {}: cannot refuse {}",
                client.name(),
                escape_display(what)
            )?;
        }
        if check && self.stale() {
            writeln!(
                o,
                "run `git kams enforce` to write the rules, and commit them"
            )?;
        }
        Ok(())
    }
}

/// Merges the rules of `refused` into each client's settings at `top`,
/// writing the files (and the record) when `write`; nothing is written
/// before every file has been read and merged.
fn apply(top: &Path, clients: &[Client], refused: &[Refusal], write: bool) -> Result<Outcome> {
    // Read from the work tree, never through a link.
    let read = |rel: &str| -> Result<Option<Vec<u8>>> {
        let path = top.join(rel);
        crate::files::links_below(top, &path)?;
        crate::files::read_existing(&path, MAX_SETTINGS)
    };
    let shown = |rel: &str| shown_path(&top.join(rel));
    let planned = plan(&read, &shown, clients, refused)?;
    if write {
        for (rel, text) in &planned.files {
            write_file(top, &top.join(rel), text)?;
        }
        let text = planned.record.to_text();
        let old = read(RECORD)?;
        let empty = planned.record.files.values().all(BTreeSet::is_empty);
        if old.as_deref() != Some(text.as_bytes()) && !(old.is_none() && empty) {
            write_file(top, &top.join(RECORD), &text)?;
        }
    }
    Ok(planned.outcome)
}

/// Where the files `enforce` reads come from: a path from the top of the
/// work tree (or of a commit's tree) to the file's bytes, `None` when
/// there is none.
type Read<'r> = dyn Fn(&str) -> Result<Option<Vec<u8>>> + 'r;

/// Whether a file is there, by its path from the top, without reading it.
type Exists<'r> = dyn Fn(&str) -> Result<bool> + 'r;

/// What merging the rules would do, before anything is written.
struct Plan {
    outcome: Outcome,
    /// The settings files to write, from the top, with their new text.
    files: Vec<(&'static str, String)>,
    /// The record, as it would be written.
    record: Record,
}

/// Merges the rules of `refused` into each client's settings as `read`
/// gives them (`shown` names a file in messages).
fn plan(
    read: &Read<'_>,
    shown: &dyn Fn(&str) -> String,
    clients: &[Client],
    refused: &[Refusal],
) -> Result<Plan> {
    let mut record = match read_json(read(RECORD)?, &shown(RECORD))? {
        None => Record::default(),
        Some(v) => Record::parse(&v).map_err(|e| anyhow!("{}: {e}", shown(RECORD)))?,
    };
    let mut outcome = Outcome {
        written: Vec::new(),
        notes: Vec::new(),
        unsupported: Vec::new(),
        unwritable: Vec::new(),
    };
    let mut files = Vec::new();
    for &client in clients {
        let Some(file) = client.settings() else {
            if let Some(why) = client.unsupported() {
                outcome.unsupported.push((client, why));
            }
            continue;
        };
        let before = read_json(read(file)?, &shown(file))?;
        if client == Client::GeminiCli {
            let merged = merge_gemini(before.as_ref(), file, refused, &record.files)
                .map_err(|e| anyhow!("{}: {e}; fix it, and run enforce again", shown(file)))?;
            if !merged.added.is_empty() || !merged.removed.is_empty() {
                if let Some(settings) = &merged.settings {
                    files.push((file, to_text(settings)));
                }
            }
            for (key, owned) in merged.owned {
                record.files.insert(key, owned);
            }
            if !merged.elsewhere.is_empty() {
                outcome.notes.push(format!(
                    "gemini-cli: {} refused tool{} of servers {file} does not configure: the Gemini CLI does not run them from this file ({})",
                    merged.elsewhere.len(),
                    if merged.elsewhere.len() == 1 { "" } else { "s" },
                    merged.elsewhere.join(", ")
                ));
            }
            outcome.written.push(Written {
                client,
                file,
                rules: Vec::new(),
                count: merged.wanted.len(),
                added: merged.added,
                removed: merged.removed,
            });
            continue;
        }
        let (rules, unwritable) = rules(client, refused);
        outcome
            .unwritable
            .extend(unwritable.into_iter().map(|u| (client, u)));
        let wanted: BTreeSet<String> = rules.iter().map(|r| r.text.clone()).collect();
        let recorded = record.files.get(file).cloned().unwrap_or_default();
        let merged = merge(before.as_ref(), &recorded, &wanted)
            .map_err(|e| anyhow!("{}: {e}; fix it, and run enforce again", shown(file)))?;
        if !merged.unchanged() {
            files.push((file, to_text(&merged.settings)));
        }
        record.files.insert(file.to_string(), merged.owned);
        outcome.written.push(Written {
            client,
            file,
            count: rules.len(),
            rules,
            added: merged.added,
            removed: merged.removed,
        });
    }
    Ok(Plan {
        outcome,
        files,
        record,
    })
}

/// The settings files out of date with what `refused` gives in a tree
/// that `read` reads and `exists` looks into (a pushed commit's, for the
/// hooks), each with how many rules it lacks and holds too many: empty
/// when they are up to date, or when the tree has no record of rules
/// written (`.kams/enforce.json`), where enforcement is not in use and
/// nothing else is read (nor `refused` asked). The clients are those whose
/// MCP config or settings file the tree holds, as `enforce` with no
/// `--client` takes.
pub fn stale_in(
    read: &Read<'_>,
    exists: &Exists<'_>,
    refused: &mut dyn FnMut() -> Result<Vec<Refusal>>,
) -> Result<Vec<String>> {
    if !exists(RECORD)? {
        return Ok(Vec::new());
    }
    let planned = plan(
        read,
        &|rel| rel.to_string(),
        &configured(exists)?,
        &refused()?,
    )?;
    Ok(planned
        .outcome
        .written
        .iter()
        .filter(|w| !w.added.is_empty() || !w.removed.is_empty())
        .map(|w| {
            format!(
                "{} ({} to add, {} to take out)",
                w.file,
                w.added.len(),
                w.removed.len()
            )
        })
        .collect())
}

/// The JSON of a file's `bytes` (`None`: no file), the file named
/// `shown` in errors: one this reader does not take, or that holds a key
/// twice, is an error.
fn read_json(bytes: Option<Vec<u8>>, shown: &str) -> Result<Option<Value>> {
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let (value, duplicates) = json::parse(&bytes).map_err(|e| {
        anyhow!(
            "{shown}: invalid JSON: {e}: git-kams rewrites only a file it can read whole (comments are not JSON)"
        )
    })?;
    if let Some(d) = duplicates.first() {
        bail!(
            "{shown}: the key at {} is written twice: a client may read either value; keep one and run enforce again",
            escape_display(d)
        );
    }
    Ok(Some(value))
}

/// Writes `text` to `path` below `top`, making its folder when needed; the
/// folder and the file are no links.
fn write_file(top: &Path, path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::files::folder_below(top, dir)?;
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow!("cannot create {}: {e}", shown_path(dir)))?;
    }
    crate::files::replace(path, text.as_bytes(), None)
}
