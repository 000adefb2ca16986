//! `git kams merge-driver %O %A %B %P`: git's merge driver for kams.lock.
//!
//! git hands over the base, our and their lock in temporary files and takes
//! whatever is in %A afterwards as the merge. The three are read strictly
//! (a lock that cannot be read is never merged as an empty one), merged
//! entry by entry ([`crate::lock::merge`]), and the result replaces %A
//! atomically, in the canonical layout. A conflict leaves our side in the
//! file, so that it stays a lock every command reads, and is explained on
//! stderr; the exit status 1 makes git mark the file conflicted.

use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, Context, Result};

use super::Status;
use crate::canon::{write_value, Escape};
use crate::cli::MergeDriverArgs;
use crate::files;
use crate::lock::merge::{merge, Conflict, Three, What};
use crate::lock::{Entry, Lock, State};
use crate::text::{escape_display, shown_path};

/// A launch longer than this is cut in a conflict line.
const SHOWN_LAUNCH: usize = 100;

/// Runs the merge driver: 0 merged, 1 conflicts, an error when a lock
/// cannot be read or the merge cannot be written (%A is then unchanged).
pub fn run(args: &MergeDriverArgs, err: &mut dyn Write) -> Result<Status> {
    let path = args
        .path
        .as_deref()
        .unwrap_or_else(|| Path::new("kams.lock"));
    let shown = shown_path(path);
    let read = |file: &Path, whose: &str| -> Result<Lock> {
        let bytes = files::lock::read_bytes(file)?
            .ok_or_else(|| anyhow!("{}: no such file", shown_path(file)))?;
        // git gives an empty base when the file did not exist there (both
        // sides added it); an empty side is a broken lock like any other.
        if file == args.base && bytes.is_empty() {
            return Ok(Lock::default());
        }
        Lock::parse(&bytes)
            .map_err(|e| files::lock::lock_error(path, e))
            .with_context(|| format!("cannot merge {shown}: {whose} lock is unreadable"))
    };
    let base = read(&args.base, "the merge base's")?;
    let ours = read(&args.ours, "our")?;
    let theirs = read(&args.theirs, "their")?;
    let merged = merge(&base, &ours, &theirs);
    files::lock::Guard::acquire(&args.ours)?.commit(&merged.lock)?;
    if merged.conflicts.is_empty() {
        return Ok(0);
    }
    for c in &merged.conflicts {
        writeln!(err, "{}", conflict_line(&shown, c))?;
    }
    writeln!(
        err,
        "{shown}: {} conflicting {}; the file holds our side of each and is a valid lock: resolve, then `git add {shown}`",
        merged.conflicts.len(),
        if merged.conflicts.len() == 1 { "entry" } else { "entries" }
    )?;
    Ok(1)
}

/// One line: the entry, what each side did, and how to resolve it.
fn conflict_line(shown: &str, c: &Conflict) -> String {
    let server = escape_display(&c.server);
    let (subject, ours, theirs, fix) = match &c.what {
        What::Launch(v) => (
            format!("the launch of {server}"),
            did(v, &v.ours, launch_text),
            did(v, &v.theirs, launch_text),
            format!("check the client config, then `git kams capture {server}` and `git kams pin {server} -m NOTE` (records the launch the inventory shows)"),
        ),
        What::Server(v) => (
            format!("{server} (server entry)"),
            did(v, &v.ours, entry_text),
            did(v, &v.theirs, entry_text),
            format!("check the inventory (`git kams diff {server}`), then `git kams pin {server} -m NOTE` (pins the server and its tools)"),
        ),
        What::Tool(tool, v) => {
            let key = format!("{server}/{}", escape_display(tool));
            (
                key.clone(),
                did(v, &v.ours, entry_text),
                did(v, &v.theirs, entry_text),
                format!("check the inventory (`git kams diff {key}`), then `git kams pin {key} -m NOTE`"),
            )
        }
    };
    format!("{shown}: conflict in {subject}: ours {ours}, theirs {theirs}; kept ours. Resolve: {fix}, or edit {shown}")
}

/// What one side did to a value, short: digests and state, not descriptors.
fn did<T>(values: &Three<T>, side: &Option<T>, text: fn(&T) -> String) -> String {
    match (&values.base, side) {
        (Some(_), None) => "removed it".into(),
        (None, None) => "has none".into(),
        (Some(_), Some(v)) => text(v),
        (None, Some(v)) => format!("added {}", text(v)),
    }
}

/// `pinned sha256:0123456789ab by NAME <EMAIL> ("NOTE")` (or `denied`),
/// or `recorded ...`.
fn entry_text(e: &Entry) -> String {
    let digest = e.descriptor.digest.to_string();
    let short = &digest[..digest.len().min("sha256:".len() + 12)];
    match (e.state, &e.approval) {
        (State::Pinned | State::Denied, Some(a)) => format!(
            "{} {short} by {} (\"{}\")",
            e.state.as_str(),
            escape_display(&a.approver),
            escape_display(&a.note)
        ),
        _ => format!(
            "recorded {short} (provisional, first seen {})",
            escape_display(&e.first_seen)
        ),
    }
}

/// A launch as one line of compact JSON, cut when long.
fn launch_text(v: &crate::json::Value) -> String {
    let mut bytes = Vec::new();
    write_value(v, Escape::Visible, &mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    match text.char_indices().nth(SHOWN_LAUNCH) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.into_owned(),
    }
}
