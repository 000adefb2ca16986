//! Annotation claims: `readOnlyHint`, `destructiveHint` and
//! `openWorldHint` that claim a safety the tool's own name, title or
//! description denies.

use super::names::ident_words;
use super::signal::{shown, Signal, SignalsByPointer};
use super::tables::{Words, DESTROYER, READER, SENDER, WRITER};
use crate::json::{Object, Value};

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
    if hint("readOnlyHint") == Some(true) {
        if let Some(why) = claims(tool, WRITER) {
            signals.add(
                "/annotations",
                Signal::ReadOnlyClaim,
                format!("readOnlyHint is true, but {why}"),
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
        let why = claims(tool, SENDER).or_else(|| {
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
