//! Annotation claims: `readOnlyHint`, `destructiveHint` and
//! `openWorldHint` that claim a safety the tool's own name, title or
//! description denies, weighed against what its input schema lets it do:
//! an `export` whose only target is a local path sends nothing out.

use super::names::ident_words;
use super::signal::{shown, Signal, SignalsByPointer};
use super::tables::{
    Words, DESTROYER, LOCAL_TARGETS, LOCAL_WRITES, READER, REMOTE_TARGETS, SENDER, WRITER,
};
use crate::json::{Object, Value};

/// Whether the tool's input names a local file or folder to write to
/// (`path`, `output_dir`, `filename`) and nothing remote to send to
/// (`url`, `recipient`, `webhook`, `bucket`...).
fn local_target(tool: &Object) -> bool {
    let Some(props) = tool
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return false;
    };
    let words: Vec<Vec<String>> = props.iter().map(|(k, _)| ident_words(k)).collect();
    let any = |list: Words| words.iter().flatten().any(|w| list.contains(w));
    any(LOCAL_TARGETS) && !any(REMOTE_TARGETS)
}

/// The verb of a claim found by [`claims`]: "the name says `export`".
fn verb(why: &str) -> &str {
    why.rsplit('`').nth(1).unwrap_or("")
}

/// The first verb of `list` found in the tool's name, title, annotation
/// title or the first word of its description, with where it was found.
fn claims(tool: &Object, list: Words) -> Option<String> {
    let title = |v: Option<&Value>| v.and_then(Value::as_str).map(ident_words);
    let names = [
        ("name", title(tool.get("name"))),
        ("title", title(tool.get("title"))),
        (
            "annotations.title",
            title(tool.get("annotations").and_then(|a| a.get("title"))),
        ),
    ];
    for (what, words) in names {
        let Some(words) = words else { continue };
        if words.first().is_some_and(|w| READER.contains(w)) {
            continue;
        }
        if let Some(w) = words.iter().find(|w| list.contains(w)) {
            return Some(format!("the {what} says `{w}`"));
        }
    }
    let first = tool
        .get("description")
        .and_then(Value::as_str)
        .and_then(|d| d.split_whitespace().next())
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })?;
    list.contains(&first)
        .then(|| format!("the description starts with `{first}`"))
}

/// Annotations that claim a safety the tool's own words deny.
pub(super) fn annotations(tool: &Object, fixed_urls: &[String], signals: &mut SignalsByPointer) {
    let Some(a) = tool.get("annotations").and_then(Value::as_object) else {
        return;
    };
    let hint = |k: &str| match a.get(k) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    // An export, save or download to a local path only: it writes a file
    // (so read-only is inaccurate, medium alone), it sends nothing out.
    let local = |why: &str| LOCAL_WRITES.contains(verb(why)) && local_target(tool);
    if hint("readOnlyHint") == Some(true) {
        if let Some(why) = claims(tool, WRITER) {
            let to = if local(&why) {
                " (to a local path)"
            } else {
                ""
            };
            signals.add(
                "/annotations",
                Signal::ReadOnlyClaim,
                format!("readOnlyHint is true, but {why}{to}"),
            );
        }
    }
    if hint("destructiveHint") == Some(false) {
        if let Some(why) = claims(tool, DESTROYER) {
            signals.add(
                "/annotations",
                Signal::NonDestructiveClaim,
                format!("destructiveHint is false, but {why}"),
            );
        }
    }
    if hint("openWorldHint") == Some(false) {
        let why = claims(tool, SENDER).filter(|why| !local(why)).or_else(|| {
            fixed_urls
                .first()
                .map(|u| format!("the input schema fixes the external URL {}", shown(u)))
        });
        if let Some(why) = why {
            signals.add(
                "/annotations",
                Signal::ClosedWorldClaim,
                format!("openWorldHint is false, but {why}"),
            );
        }
    }
}
