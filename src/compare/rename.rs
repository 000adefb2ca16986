//! Renames: a tool the lock has that the inventory no longer shows, and a
//! tool of the same server the lock does not know, whose descriptors are
//! the same but for the name, or nearly (the same schema shape, the
//! description mostly the same words). Content-hash pinning alone is
//! defeated by a rename: the old name is merely removed and the new one
//! merely added, and nothing links them. Pure: pairs in, renames out.

use std::collections::BTreeSet;

use super::Pair;
use crate::descriptor::Descriptor;
use crate::json::Value;
use crate::lock::State;

/// One tool renamed on a server.
#[derive(Clone, Debug, PartialEq)]
pub struct Rename<'a> {
    /// The server.
    pub server: &'a str,
    /// The name the lock has.
    pub from: &'a str,
    /// The name the inventory shows now.
    pub to: &'a str,
    /// True when nothing but the name changed.
    pub exact: bool,
}

/// The least share of words two descriptions have in common for a near
/// rename (Jaccard index of their word sets).
const NEAR: f64 = 0.6;

/// The renames among `pairs`: per server, each tool removed (and not
/// denied: a denied tool under a new name is a new tool to review) is
/// matched with at most one tool added, the most similar first.
pub fn renames<'a>(pairs: &[Pair<'a>]) -> Vec<Rename<'a>> {
    matched(pairs, false)
}

/// The tools added under a new name that match a *denied* tool the
/// inventory no longer shows, matched as [`renames`] matches: a denial
/// is not walked around by renaming the tool.
pub fn denied_renames<'a>(pairs: &[Pair<'a>]) -> Vec<Rename<'a>> {
    matched(pairs, true)
}

/// Removed tools (denied ones, or the others) matched with added ones.
fn matched<'a>(pairs: &[Pair<'a>], denied: bool) -> Vec<Rename<'a>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pairs.len() {
        let server = pairs[i].server;
        let end = i + pairs[i..].iter().take_while(|p| p.server == server).count();
        let group = &pairs[i..end];
        i = end;
        let removed: Vec<(&str, &Descriptor)> = group
            .iter()
            .filter_map(|p| match (p.tool, p.entry, p.seen) {
                (Some(t), Some(e), None) if (e.state == State::Denied) == denied => {
                    Some((t, &e.descriptor))
                }
                _ => None,
            })
            .collect();
        let added: Vec<(&str, &Descriptor)> = group
            .iter()
            .filter_map(|p| match (p.tool, p.entry, p.seen) {
                (Some(t), None, Some(d)) => Some((t, d)),
                _ => None,
            })
            .collect();
        if removed.is_empty() || added.is_empty() {
            continue;
        }
        let mut scored: Vec<(f64, usize, usize, bool)> = Vec::new();
        for (ri, (_, old)) in removed.iter().enumerate() {
            for (ai, (_, new)) in added.iter().enumerate() {
                if let Some((score, exact)) = similarity(old, new) {
                    scored.push((score, ri, ai, exact));
                }
            }
        }
        // Most similar first; ties by the order of the names.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        let (mut used_r, mut used_a) = (BTreeSet::new(), BTreeSet::new());
        for (_, ri, ai, exact) in scored {
            if used_r.contains(&ri) || used_a.contains(&ai) {
                continue;
            }
            used_r.insert(ri);
            used_a.insert(ai);
            out.push(Rename {
                server,
                from: removed[ri].0,
                to: added[ai].0,
                exact,
            });
        }
    }
    out
}

/// How alike two tool descriptors are, but for their names: `(2, true)`
/// when every other field is the same; `(1 + share of words, false)` when
/// the input schemas have the same shape and the descriptions share at
/// least [`NEAR`] of their words; else `None`. Descriptors read with
/// digests only compare by their field digests (exact renames only).
pub fn similarity(old: &Descriptor, new: &Descriptor) -> Option<(f64, bool)> {
    let others = |d: &Descriptor| -> Vec<(String, String)> {
        d.field_digests
            .iter()
            .filter(|(k, _)| *k != "name")
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    if !old.field_digests.is_empty() && others(old) == others(new) {
        return Some((2.0, true));
    }
    if old.fields.is_empty() || new.fields.is_empty() {
        return None;
    }
    if shape(old.get("inputSchema")) != shape(new.get("inputSchema")) {
        return None;
    }
    fn text(d: &Descriptor) -> &str {
        d.get("description").and_then(Value::as_str).unwrap_or("")
    }
    let share = word_share(text(old), text(new));
    (share >= NEAR).then_some((1.0 + share, false))
}

/// A schema with the words a model reads (descriptions, titles, comments,
/// examples) taken out: what it accepts, as compact JSON.
fn shape(v: Option<&Value>) -> Option<String> {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| {
                        !matches!(
                            k.as_str(),
                            "description" | "title" | "$comment" | "examples"
                        )
                    })
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    v.map(|v| crate::canon::jcs_string(&strip(v)))
}

/// The Jaccard index of two texts' sets of lowercase words (1 for two
/// texts without words).
fn word_share(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> BTreeSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    let union = wa.union(&wb).count();
    if union == 0 {
        return 1.0;
    }
    wa.intersection(&wb).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(json: &str) -> Descriptor {
        let (v, _) = crate::json::parse(json.as_bytes()).unwrap();
        Descriptor::new(v.as_object().unwrap().clone()).0
    }

    #[test]
    fn the_same_tool_under_a_new_name_is_exact() {
        let a =
            d(r#"{"name":"read","description":"Read a file.","inputSchema":{"type":"object"}}"#);
        let b = d(
            r#"{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object"}}"#,
        );
        assert_eq!(similarity(&a, &b), Some((2.0, true)));
    }

    #[test]
    fn a_reworded_description_with_the_same_schema_is_near() {
        let a = d(
            r#"{"name":"read","description":"Read the complete contents of a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"where"}}}}"#,
        );
        let b = d(
            r#"{"name":"read_file","description":"Read the complete contents of one file.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"the path"}}}}"#,
        );
        let (score, exact) = similarity(&a, &b).unwrap();
        assert!(!exact && score > 1.6, "{score}");
        // Another schema shape, or other words, is another tool.
        let c = d(
            r#"{"name":"write","description":"Read the complete contents of a file.","inputSchema":{"type":"object","properties":{"path":{"type":"number"}}}}"#,
        );
        assert_eq!(similarity(&a, &c), None);
        let e = d(
            r#"{"name":"x","description":"Delete every note in a folder.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#,
        );
        assert_eq!(similarity(&a, &e), None);
    }
}
