//! Annotation claims: `readOnlyHint`, `destructiveHint` and
//! `openWorldHint` that claim a safety the tool's own name, title or
//! description denies, weighed against what its input schema lets it do:
//! an `export` whose only target is a local path sends nothing out, and a
//! `get_settings` whose `operation` offers `set` writes whatever its name
//! says.

use super::names::ident_words;
use super::signal::{shown, Signal, SignalsByPointer};
use super::tables::{
    Words, ACTION_KEYS, COPY_VERBS, DESTINATION_WORDS, DESTROYER, DESTROY_FLAGS, DOC_WORDS,
    JOINERS, LOCAL_TARGETS, LOCAL_WRITES, READER, REMOTE_SINKS, REMOTE_TARGETS, SENDER, URL_WORDS,
    WRITER, WRITE_FLAGS,
};
use crate::json::{Members, Tree};

/// How deep [`properties`] follows nested schemas: an action or a flag sits
/// at the top or in an options object, and a hostile schema may nest
/// without end.
const MAX_DEPTH: usize = 6;

/// A property of the input schema: its name and its schema.
type Prop<'a> = (&'a str, &'a Members<'a>);

/// Every property of the input schema, nested ones included, by name.
fn properties<'a>(schema: &'a Tree<'_>, depth: usize, out: &mut Vec<Prop<'a>>) {
    let Some(o) = schema.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(props) = o.get("properties").and_then(Tree::as_object) {
        for (name, sub) in props.iter() {
            if let Some(sub) = sub.as_object() {
                out.push((name, sub));
            }
            properties(sub, depth + 1, out);
        }
    }
    for k in ["items", "anyOf", "oneOf", "allOf"] {
        match o.get(k) {
            Some(Tree::Array(list)) => list.iter().for_each(|s| properties(s, depth + 1, out)),
            Some(v) => properties(v, depth + 1, out),
            None => {}
        }
    }
}

/// Whether a property schema's `type` is or includes `ty`.
fn typed(prop: &Members<'_>, ty: &str) -> bool {
    match prop.get("type") {
        Some(Tree::String(t)) => t == ty,
        Some(Tree::Array(list)) => list.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

/// The values a property offers (`enum`, `const`, and those of its
/// `anyOf`/`oneOf` members), as strings.
fn choices<'a>(prop: &'a Members<'_>) -> Vec<&'a str> {
    fn take<'a>(o: &'a Members<'_>, out: &mut Vec<&'a str>) {
        if let Some(list) = o.get("enum").and_then(Tree::as_array) {
            out.extend(list.iter().filter_map(Tree::as_str));
        }
        if let Some(c) = o.get("const").and_then(Tree::as_str) {
            out.push(c);
        }
    }
    let mut out = Vec::new();
    take(prop, &mut out);
    for k in ["anyOf", "oneOf"] {
        for member in prop.get(k).and_then(Tree::as_array).unwrap_or_default() {
            if let Some(m) = member.as_object() {
                take(m, &mut out);
            }
        }
    }
    out
}

/// What the input schema lets the tool do of `verbs`: a boolean flag
/// named for one of `flags` (`overwrite`, `delete_source`), or one choice
/// of an action-like parameter (`operation`, `method`) that starts with
/// one of `verbs`. A list of actions (`operations: [...]` of report
/// kinds) selects what to read, so only a single choice counts.
fn schema_can(props: &[Prop<'_>], flags: Words, verbs: Words) -> Option<String> {
    props.iter().find_map(|(name, prop)| {
        let words = ident_words(name);
        if typed(prop, "boolean") && words.iter().any(|w| flags.contains(w)) {
            return Some(format!("the input schema has the flag `{}`", shown(name)));
        }
        if typed(prop, "array") || !words.iter().any(|w| ACTION_KEYS.contains(w)) {
            return None;
        }
        let choice = choices(prop)
            .into_iter()
            .find(|c| ident_words(c).first().is_some_and(|w| verbs.contains(w)))?;
        Some(format!(
            "the input schema's `{}` offers `{}`",
            shown(name),
            shown(choice)
        ))
    })
}

/// An input that names somewhere to send to: a webhook, a callback, a
/// recipient, or the URL of a destination (`target_url`, `report_to_url`);
/// a URL to read from (`url`, `base_url`) is not one.
fn remote_input(props: &[Prop<'_>]) -> Option<String> {
    props.iter().find_map(|(name, _)| {
        let words = ident_words(name);
        let any = |list: Words| words.iter().any(|w| list.contains(w));
        (any(REMOTE_SINKS) || any(URL_WORDS) && any(DESTINATION_WORDS))
            .then(|| format!("its input takes `{}`, somewhere to send to", shown(name)))
    })
}

/// What the input names as targets, one property at a time: a local file
/// or folder (`path`, `output_dir`), one to write to (`output_path`,
/// `destination_dir`, `outfile`), and somewhere remote (`url`,
/// `recipient`, `bucket`; a `destination_path` is local).
#[derive(Default)]
struct Targets {
    /// A property names a local file or folder.
    local: bool,
    /// One of those says it is where the tool writes.
    local_destination: bool,
    /// A property names somewhere remote and nothing local.
    remote: bool,
}

/// The targets `props` name.
fn targets(props: &[Prop<'_>]) -> Targets {
    let mut t = Targets::default();
    for (name, _) in props {
        let words = ident_words(name);
        let any = |list: Words| words.iter().any(|w| list.contains(w));
        if any(LOCAL_TARGETS) {
            t.local = true;
            t.local_destination |= any(DESTINATION_WORDS);
        } else if any(REMOTE_TARGETS) {
            t.remote = true;
        }
    }
    t
}

/// The verb of a claim found by [`claims`]: "the name says `export`".
fn verb(why: &str) -> &str {
    why.rsplit('`').nth(1).unwrap_or("")
}

/// The first verb of `list` found in the tool's name, title, annotation
/// title or the first word of its description, with where it was found.
fn claims(tool: &Members<'_>, list: Words) -> Option<String> {
    let title = |v: Option<&Tree<'_>>| v.and_then(Tree::as_str).map(ident_words);
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
        let Some(at) = words.iter().position(|w| list.contains(w)) else {
            continue;
        };
        // A reader before it makes the verb its object (`get_create_fields`:
        // the fields of a create), unless a joiner makes it a second action
        // (`get_or_create`).
        let object = words[..at]
            .iter()
            .rev()
            .take_while(|w| !JOINERS.contains(w))
            .any(|w| READER.contains(w))
            // A reader last names the action on what comes before it
            // (`nfs-file-share-get`, resource first, as DigitalOcean names).
            || (at + 1 < words.len()
                && words.last().is_some_and(|w| READER.contains(w))
                && !words[at + 1..].iter().any(|w| JOINERS.contains(w)));
        if !object {
            return Some(format!("the {what} says `{}`", words[at]));
        }
    }
    let first = tool
        .get("description")
        .and_then(Tree::as_str)
        .and_then(|d| d.split_whitespace().next())
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })?;
    list.contains(&first)
        .then(|| format!("the description starts with `{first}`"))
}

/// Annotations that claim a safety the tool's own words deny.
pub(super) fn annotations(
    tool: &Members<'_>,
    fixed_urls: &[String],
    signals: &mut SignalsByPointer,
) {
    let Some(a) = tool.get("annotations").and_then(Tree::as_object) else {
        return;
    };
    let hint = |k: &str| match a.get(k) {
        Some(Tree::Bool(b)) => Some(*b),
        _ => None,
    };
    let mut props = Vec::new();
    if let Some(schema) = tool.get("inputSchema") {
        properties(schema, 0, &mut props);
    }
    let to = targets(&props);
    // A tool named for documenting an action (`get_endpoint_example`)
    // offers actions as what to show, and takes none of them.
    let documents = tool
        .get("name")
        .and_then(Tree::as_str)
        .is_some_and(|n| ident_words(n).iter().any(|w| DOC_WORDS.contains(w)));
    let offers = |flags: Words, verbs: Words| {
        (!documents)
            .then(|| schema_can(&props, flags, verbs))
            .flatten()
    };
    // An export, save or download to a local path only, or any send whose
    // destination is a local file or folder and nothing remote: it writes a
    // file (so read-only is inaccurate, medium alone), it sends nothing out.
    // A send's plain `path` is what it reads and sends.
    let local = |why: &str| {
        !to.remote && (to.local_destination || to.local && LOCAL_WRITES.contains(verb(why)))
    };
    // An export with nowhere to go returns its copy: it reads. The
    // closed-world claim takes no such excuse: where a copy goes that the
    // input does not name is where the code sends it, which openWorldHint
    // false would hide.
    let returned =
        |why: &String| COPY_VERBS.contains(verb(why)) && !to.remote && !to.local_destination;
    if hint("readOnlyHint") == Some(true) {
        if let Some(why) = claims(tool, WRITER)
            .filter(|why| !returned(why))
            .or_else(|| offers(WRITE_FLAGS, WRITER))
        {
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
        if let Some(why) = claims(tool, DESTROYER).or_else(|| offers(DESTROY_FLAGS, DESTROYER)) {
            signals.add(
                "/annotations",
                Signal::NonDestructiveClaim,
                format!("destructiveHint is false, but {why}"),
            );
        }
    }
    if hint("openWorldHint") == Some(false) {
        let why = claims(tool, SENDER)
            .filter(|why| !local(why))
            .or_else(|| {
                fixed_urls
                    .first()
                    .map(|u| format!("the input schema fixes the external URL {}", shown(u)))
            })
            .or_else(|| remote_input(&props));
        if let Some(why) = why {
            signals.add(
                "/annotations",
                Signal::ClosedWorldClaim,
                format!("openWorldHint is false, but {why}"),
            );
        }
    }
}
