//! The inventory against the lock: drift per field, added, removed and
//! unapproved entries. A pure function over values; reading files and git
//! happens around it.

pub mod rename;
pub mod schema;

use crate::descriptor::Descriptor;
use crate::finding::{Class, Finding, Severity};
use crate::inventory::Inventory;
use crate::json::{Object, Value};
use crate::lock::{Entry, Lock, State};

/// A subject present in the lock, the inventory, or both.
pub struct Pair<'a> {
    /// Server name.
    pub server: &'a str,
    /// Tool name; `None` for the server-level entry.
    pub tool: Option<&'a str>,
    /// The lock entry, if any.
    pub entry: Option<&'a Entry>,
    /// The advertised descriptor, if any.
    pub seen: Option<&'a Descriptor>,
    /// Server level only: the launch the lock recorded, if any.
    pub locked_launch: Option<&'a Value>,
    /// Server level only: the inventory's launch fields, as written.
    pub seen_launch: Option<&'a Object>,
}

/// Every subject of the inventory and the lock, sorted by server then tool
/// (server level first).
pub fn pairs<'a>(inv: &'a Inventory, lock: &'a Lock) -> Vec<Pair<'a>> {
    let mut out = Vec::with_capacity(inv.servers.values().map(|s| s.tools.len() + 1).sum());
    for (server, s_inv, s_lock) in joined(inv.servers.iter(), lock.servers.iter()) {
        let entry = s_lock.and_then(|s| s.server.as_ref());
        let seen = s_inv.map(|s| &s.descriptor);
        out.push(Pair {
            server,
            tool: None,
            entry,
            // Input that carries no server-level field at all says nothing
            // about them: what the lock holds stands, not compared.
            seen: match (seen, entry) {
                (Some(d), Some(e)) if says_nothing_of_the_server(d, e) => Some(&e.descriptor),
                _ => seen,
            },
            locked_launch: s_lock.and_then(|s| s.launch.as_ref()),
            seen_launch: s_inv.map(|s| &s.launch),
        });
        let inv_tools = s_inv.into_iter().flat_map(|s| &s.tools);
        let lock_tools = s_lock.into_iter().flat_map(|s| &s.tools);
        for (tool, seen, entry) in joined(inv_tools, lock_tools) {
            out.push(Pair {
                server,
                tool: Some(tool),
                entry,
                seen: seen.map(|t| &t.descriptor),
                locked_launch: None,
                seen_launch: None,
            });
        }
    }
    out
}

/// True when `seen`, a server-level descriptor, has no field at all while
/// the lock's `entry` has some: the input carried no server information
/// (a bare `tools/list` result, JSON-RPC lines without `initialize`, a
/// listing of tools only), since a server always names itself in
/// `initialize`. Such input cannot hide a change: it shows no text that
/// could have changed.
pub fn says_nothing_of_the_server(seen: &Descriptor, entry: &Entry) -> bool {
    // Asked of every server of every comparison: hashed once.
    static EMPTY: std::sync::LazyLock<crate::canon::Digest> =
        std::sync::LazyLock::new(|| crate::canon::Digest::of(b"{}"));
    seen.digest == *EMPTY && entry.descriptor.digest != *EMPTY
}

/// The servers of `inv` whose input says nothing of their server-level
/// fields while `lock` records some ([`says_nothing_of_the_server`]).
pub fn servers_without_fields<'a>(inv: &'a Inventory, lock: &Lock) -> Vec<&'a str> {
    inv.servers
        .iter()
        .filter(|(name, s)| {
            lock.entry(name, None)
                .is_some_and(|e| says_nothing_of_the_server(&s.descriptor, e))
        })
        .map(|(name, _)| name.as_str())
        .collect()
}

/// The subjects of `pairs` whose lock entry and inventory descriptor
/// differ: after a read that kept digests only, the only ones whose
/// fields are compared, so the only ones to rebuild. (Collected from a
/// borrow: collecting in place from the pairs would keep their whole
/// allocation, 100,000 pairs at 2000x50, for a few names.)
pub fn drifted(pairs: &[Pair<'_>]) -> Vec<(String, Option<String>)> {
    // A server that lost a tool and gained one may have renamed it: both
    // sides' words are compared ([`rename::renames`]).
    let (mut lost, mut gained) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for p in pairs.iter().filter(|p| p.tool.is_some()) {
        match (p.entry, p.seen) {
            (Some(_), None) => {
                lost.insert(p.server);
            }
            (None, Some(_)) => {
                gained.insert(p.server);
            }
            _ => {}
        }
    }
    pairs
        .iter()
        .filter(|p| match (p.entry, p.seen) {
            (Some(e), Some(d)) => e.descriptor.digest != d.digest,
            (Some(_), None) | (None, Some(_)) => {
                p.tool.is_some() && lost.contains(p.server) && gained.contains(p.server)
            }
            (None, None) => false,
        })
        .map(|p| (p.server.to_string(), p.tool.map(str::to_string)))
        .collect()
}

/// Every key of two maps' entries (each sorted by key) once, in order,
/// with its value on either side: one pass over both, no look-ups.
fn joined<'a, A: 'a, B: 'a>(
    a: impl Iterator<Item = (&'a String, &'a A)>,
    b: impl Iterator<Item = (&'a String, &'a B)>,
) -> impl Iterator<Item = (&'a str, Option<&'a A>, Option<&'a B>)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || {
        let order = match (a.peek(), b.peek()) {
            (None, None) => return None,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((x, _)), Some((y, _))) => x.cmp(y),
        };
        Some(match order {
            std::cmp::Ordering::Less => a.next().map(|(k, v)| (k.as_str(), Some(v), None))?,
            std::cmp::Ordering::Greater => b.next().map(|(k, v)| (k.as_str(), None, Some(v)))?,
            std::cmp::Ordering::Equal => {
                let (k, v) = a.next()?;
                (k.as_str(), Some(v), b.next().map(|(_, w)| w))
            }
        })
    })
}

/// All findings of the inventory against the lock (drift, added, removed,
/// unapproved), unsorted.
pub fn compare(inv: &Inventory, lock: &Lock) -> Vec<Finding> {
    let mut out = Vec::new();
    let all = pairs(inv, lock);
    for pair in &all {
        compare_pair(pair, &mut out);
    }
    for r in rename::renames(&all) {
        renamed(&all, &r, &mut out);
    }
    for r in rename::denied_renames(&all) {
        out.push(Finding {
            class: Class::Denied,
            severity: Severity::High,
            server: r.server.to_string(),
            tool: Some(r.to.to_string()),
            field: Some("/name".into()),
            message: format!(
                "looks like `{}`, which is denied, under a new name: a client should not offer it",
                r.from
            ),
            evidence: vec![if r.exact {
                "every field but the name is the denied tool's".to_string()
            } else {
                "the same schema shape, and mostly the same description".to_string()
            }],
        });
    }
    out
}

/// Replaces the `removed` finding of `r`'s old name and the `added` one of
/// its new name with one `renamed` finding on the new name: at the
/// severity of the worst change besides the name (low when there is
/// none), each such change a line of its evidence.
fn renamed(all: &[Pair<'_>], r: &rename::Rename<'_>, out: &mut Vec<Finding>) {
    let find = |tool: &str| {
        all.iter()
            .find(|p| p.server == r.server && p.tool == Some(tool))
    };
    let (
        Some(Pair {
            entry: Some(entry), ..
        }),
        Some(Pair {
            seen: Some(seen), ..
        }),
    ) = (find(r.from), find(r.to))
    else {
        return;
    };
    out.retain(|f| {
        !(f.server == r.server
            && (f.class == Class::Removed && f.tool.as_deref() == Some(r.from)
                || f.class == Class::Added && f.tool.as_deref() == Some(r.to)))
    });
    let mut drift = Vec::new();
    if !r.exact {
        tool_drift(&entry.descriptor, seen, &mut drift);
        drift.retain(|d| d.field != "/name");
    }
    let severity = drift
        .iter()
        .map(|d| lowered(d.severity, entry.state))
        .max()
        .unwrap_or(Severity::Low)
        .max(Severity::Low);
    let mut evidence = vec![format!(
        "was `{}` ({}, digest {})",
        r.from,
        entry.state.as_str(),
        entry.descriptor.digest
    )];
    for d in &drift {
        evidence.push(format!("{}: {}", d.field, d.message));
        evidence.extend(d.evidence.iter().map(|e| format!("  {e}")));
    }
    out.push(Finding {
        class: Class::Renamed,
        severity,
        server: r.server.to_string(),
        tool: Some(r.to.to_string()),
        field: Some("/name".into()),
        message: if drift.is_empty() {
            format!("renamed from `{}`: the same tool under a new name", r.from)
        } else {
            format!(
                "renamed from `{}`, and {} other change{}",
                r.from,
                drift.len(),
                if drift.len() == 1 { "" } else { "s" }
            )
        },
        evidence,
    });
}

/// Findings for one subject.
pub fn compare_pair(pair: &Pair<'_>, out: &mut Vec<Finding>) {
    let finding = |class, severity, field: Option<String>, message: String, evidence| Finding {
        class,
        severity,
        server: pair.server.to_string(),
        tool: pair.tool.map(str::to_string),
        field,
        message,
        evidence,
    };
    if let Some(d) = launch_drift(pair) {
        let state = pair.entry.map_or(State::Pinned, |e| e.state);
        out.push(finding(
            Class::Drift,
            lowered(d.severity, state),
            Some(d.field),
            d.message,
            d.evidence,
        ));
    }
    match (pair.entry, pair.seen) {
        (None, None) => {}
        (None, Some(seen)) => {
            let what = if pair.tool.is_some() {
                "tool"
            } else {
                "server"
            };
            out.push(finding(
                Class::Added,
                Severity::Medium,
                None,
                format!("new {what}, not in the lock: a capability nobody reviewed"),
                vec![format!("digest {}", seen.digest)],
            ));
        }
        // A denial stands whatever the text is now: one finding, and
        // nothing about how it changed (it is not to be used either way).
        (Some(entry), Some(seen)) if entry.state == State::Denied => {
            let a = entry.approval.as_deref();
            out.push(finding(
                Class::Denied,
                Severity::High,
                None,
                format!(
                    "denied{}, and still advertised: a client should not offer it",
                    a.map(|a| format!(" by {} at {}", a.approver, a.at))
                        .unwrap_or_default()
                ),
                [
                    a.filter(|a| !a.note.is_empty())
                        .map(|a| format!("note: {}", a.note)),
                    Some(format!("denied digest {}", entry.descriptor.digest)),
                    (seen.digest != entry.descriptor.digest)
                        .then(|| format!("advertised digest {}", seen.digest)),
                ]
                .into_iter()
                .flatten()
                .collect(),
            ));
        }
        // Not advertised: the denial is kept for when it comes back.
        (Some(entry), None) if entry.state == State::Denied => {}
        (Some(entry), None) => {
            let sev = lowered(Severity::Low, entry.state);
            let what = if pair.tool.is_some() {
                "tool"
            } else {
                "server"
            };
            out.push(finding(
                Class::Removed,
                sev,
                None,
                format!(
                    "{what} in the lock ({}) is no longer advertised",
                    entry.state.as_str()
                ),
                vec![format!("locked digest {}", entry.descriptor.digest)],
            ));
        }
        (Some(entry), Some(seen)) => {
            if entry.state == State::Provisional {
                out.push(finding(
                    Class::Unapproved,
                    Severity::Low,
                    None,
                    "recorded but not pinned: nobody has approved it".into(),
                    vec![format!("first seen {}", entry.first_seen)],
                ));
            }
            if entry.descriptor.digest == seen.digest {
                return;
            }
            let mut drift = Vec::new();
            if pair.tool.is_some() {
                tool_drift(&entry.descriptor, seen, &mut drift);
            } else {
                server_drift(&entry.descriptor, seen, &mut drift);
            }
            for d in drift {
                out.push(finding(
                    Class::Drift,
                    lowered(d.severity, entry.state),
                    Some(d.field),
                    d.message,
                    d.evidence,
                ));
            }
        }
    }
}

/// The launch changed since the lock recorded it. Silent when the lock has
/// no launch (locks from before launches were recorded: nothing was
/// approved to differ from) or the inventory names none (nothing to
/// compare).
fn launch_drift(pair: &Pair<'_>) -> Option<Drift> {
    let locked = pair.locked_launch?;
    let seen = crate::config::launch_spec(pair.seen_launch?)?;
    if *locked == seen {
        return None;
    }
    Some(Drift {
        field: "/launch".into(),
        severity: Severity::High,
        message: if seen.get("command").is_some() {
            "launch changed since it was approved: a different command now runs"
        } else {
            "launch changed since it was approved: a different server is now reached"
        }
        .into(),
        evidence: values_evidence(Some(locked), Some(&seen)),
    })
}

fn lowered(s: Severity, state: State) -> Severity {
    match state {
        State::Pinned | State::Denied => s,
        State::Provisional => s.lower(),
    }
}

/// One changed field, before the provisional lowering.
pub struct Drift {
    /// Pointer of the change.
    pub field: String,
    /// Severity for a pinned entry.
    pub severity: Severity,
    /// One line.
    pub message: String,
    /// Diffs and values.
    pub evidence: Vec<String>,
}

fn tool_drift(old: &Descriptor, new: &Descriptor, out: &mut Vec<Drift>) {
    for field in crate::descriptor::TOOL_FIELDS {
        let (a, b) = (old.get(field), new.get(field));
        if a == b {
            continue;
        }
        let at = format!("/{field}");
        match field {
            "description" => text_drift(&at, "description", Severity::High, a, b, out),
            "title" => text_drift(&at, "title", Severity::Medium, a, b, out),
            "inputSchema" | "outputSchema" => schema_drift(field, a, b, out),
            "annotations" => annotation_drift(a, b, out),
            _ => out.push(Drift {
                field: at,
                severity: Severity::High,
                message: format!("{field} changed"),
                evidence: values_evidence(a, b),
            }),
        }
    }
}

fn server_drift(old: &Descriptor, new: &Descriptor, out: &mut Vec<Drift>) {
    for field in crate::descriptor::SERVER_FIELDS {
        let (a, b) = (old.get(field), new.get(field));
        if a == b {
            continue;
        }
        match field {
            "instructions" => text_drift(
                "/instructions",
                "server instructions",
                Severity::High,
                a,
                b,
                out,
            ),
            "serverInfo" => {
                for key in ["name", "title", "version"] {
                    let (x, y) = (a.and_then(|v| v.get(key)), b.and_then(|v| v.get(key)));
                    if x != y {
                        out.push(Drift {
                            field: format!("/serverInfo/{key}"),
                            severity: Severity::Low,
                            message: format!("serverInfo {key} changed"),
                            evidence: values_evidence(x, y),
                        });
                    }
                }
                let rest = |v: Option<&Value>| {
                    v.and_then(Value::as_object).map(|o| {
                        o.iter()
                            .filter(|(k, _)| !matches!(k.as_str(), "name" | "title" | "version"))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect::<crate::json::Object>()
                    })
                };
                if rest(a) != rest(b) {
                    out.push(Drift {
                        field: "/serverInfo".into(),
                        severity: Severity::Low,
                        message: "serverInfo changed".into(),
                        evidence: values_evidence(a, b),
                    });
                }
            }
            _ => keyed_drift(field, a, b, out),
        }
    }
}

/// Prompts and resources, compared entry by entry.
fn keyed_drift(field: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Drift>) {
    let empty = crate::json::Object::new();
    let oa = a.and_then(Value::as_object).unwrap_or(&empty);
    let ob = b.and_then(Value::as_object).unwrap_or(&empty);
    let mut keys: Vec<&String> = oa
        .iter()
        .map(|(k, _)| k)
        .chain(ob.iter().map(|(k, _)| k))
        .collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let (x, y) = (oa.get(k), ob.get(k));
        if x == y {
            continue;
        }
        let mut at = format!("/{field}/");
        crate::json::push_pointer_token(&mut at, k);
        let (severity, verb) = match (x, y) {
            (None, _) => (Severity::Medium, "added"),
            (_, None) => (Severity::Low, "removed"),
            _ => (Severity::Medium, "changed"),
        };
        out.push(Drift {
            field: at,
            severity,
            message: format!("{field} entry `{k}` {verb}"),
            evidence: values_evidence(x, y),
        });
    }
}

fn text_drift(
    at: &str,
    what: &str,
    severity: Severity,
    a: Option<&Value>,
    b: Option<&Value>,
    out: &mut Vec<Drift>,
) {
    let (sa, sb) = (a.and_then(Value::as_str), b.and_then(Value::as_str));
    let (message, evidence) = match (a, b, sa, sb) {
        (_, _, Some(x), Some(y)) => (
            format!("{what} changed"),
            vec![format!("words: {}", word_diff(x, y))],
        ),
        (None, Some(_), _, Some(y)) => (format!("{what} added"), vec![format!("new: {y}")]),
        (Some(_), None, Some(x), _) => (format!("{what} removed"), vec![format!("old: {x}")]),
        _ => (format!("{what} changed"), values_evidence(a, b)),
    };
    out.push(Drift {
        field: at.to_string(),
        severity,
        message,
        evidence,
    });
}

fn schema_drift(field: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Drift>) {
    let mut changes = Vec::new();
    schema::compare(a, b, &format!("/{field}"), &mut changes);
    for c in changes {
        let severity = match c.kind {
            schema::Kind::Text => Severity::High,
            schema::Kind::Widened | schema::Kind::Changed => Severity::Medium,
            schema::Kind::Narrowed | schema::Kind::Cosmetic => Severity::Low,
        };
        let evidence = match (&c.old, &c.new, c.kind) {
            (Some(Value::String(x)), Some(Value::String(y)), schema::Kind::Text) => {
                vec![format!("words: {}", word_diff(x, y))]
            }
            _ => values_evidence(c.old.as_ref(), c.new.as_ref()),
        };
        out.push(Drift {
            field: c.pointer,
            severity,
            message: format!("{field} {}: {}", c.kind.as_str(), c.what),
            evidence,
        });
    }
}

/// (hint, default per the MCP specification, true when `true` claims safety)
const HINTS: [(&str, bool, bool); 4] = [
    ("readOnlyHint", false, true),
    ("destructiveHint", true, false),
    ("idempotentHint", false, true),
    ("openWorldHint", true, false),
];

fn annotation_drift(a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Drift>) {
    let empty = crate::json::Object::new();
    let oa = a.and_then(Value::as_object).unwrap_or(&empty);
    let ob = b.and_then(Value::as_object).unwrap_or(&empty);
    let mut keys: Vec<&String> = oa
        .iter()
        .map(|(k, _)| k)
        .chain(ob.iter().map(|(k, _)| k))
        .collect();
    keys.sort();
    keys.dedup();
    // Changes grouped by what they mean: one finding per group, not per hint.
    let (mut claims, mut drops, mut odd, mut cosmetic) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in keys {
        let (x, y) = (oa.get(k), ob.get(k));
        if x == y {
            continue;
        }
        let Some(&(h, default, safe_when_true)) = HINTS.iter().find(|(h, _, _)| h == k) else {
            cosmetic.push(k.clone());
            continue;
        };
        let eff = |v: Option<&Value>| match v {
            None => Some(default),
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => None,
        };
        match (eff(x), eff(y)) {
            (Some(p), Some(q)) if p == q => cosmetic.push(format!("{h} (same meaning)")),
            (Some(_), Some(q)) if q == safe_when_true => claims.push(format!("{h}={q}")),
            (Some(_), Some(q)) => drops.push(format!("{h}={q}")),
            _ => odd.push(h.to_string()),
        }
    }
    // One finding for the field (one fact: the annotations changed), at
    // the severity of what matters most in it, and with a line per kind
    // of change: two findings for one field read as two changes.
    let groups = [
        (claims, Severity::High, "annotations strengthened: now claims safety it did not claim (clients may auto-approve)", "now claims"),
        (drops, Severity::Medium, "annotations weakened: no longer claims safety", "no longer claims"),
        (odd, Severity::Medium, "annotations changed: hint is not a boolean", "not a boolean"),
        (cosmetic, Severity::Low, "annotations changed", "changed"),
    ];
    let present: Vec<_> = groups.iter().filter(|g| !g.0.is_empty()).collect();
    let Some(&&(_, severity, message, _)) = present.first() else {
        return;
    };
    let mut evidence: Vec<String> = match present.as_slice() {
        [(items, ..)] => vec![format!("hints: {}", items.join(", "))],
        many => many
            .iter()
            .map(|(items, _, _, label)| format!("{label}: {}", items.join(", ")))
            .collect(),
    };
    evidence.extend(values_evidence(a, b));
    out.push(Drift {
        field: "/annotations".into(),
        severity,
        message: message.to_string(),
        evidence,
    });
}

/// `old:` and `new:` lines with compact canonical JSON of each side.
pub fn values_evidence(a: Option<&Value>, b: Option<&Value>) -> Vec<String> {
    let show = |v: Option<&Value>| match v {
        None => "(absent)".to_string(),
        Some(v) => crate::canon::jcs_string(v),
    };
    vec![format!("old: {}", show(a)), format!("new: {}", show(b))]
}

/// A word-level diff in `git diff --word-diff=plain` notation:
/// `[-removed-]{+added+}`. Changed words separated only by spaces form one
/// run, so a rewritten sentence reads as one replacement.
pub fn word_diff(old: &str, new: &str) -> String {
    if old.len() + new.len() <= MAX_WORD_DIFF {
        return myers_word_diff(old, new);
    }
    // Only the middle that differs is diffed, and past the limit it is
    // shown as one replacement.
    let (head, tail) = common_ends(old, new);
    let (a, b) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let middle = if a.len() + b.len() <= MAX_WORD_DIFF {
        myers_word_diff(a, b)
    } else {
        let mut m = String::new();
        if !a.is_empty() {
            m.push_str(&format!("[-{a}-]"));
        }
        if !b.is_empty() {
            m.push_str(&format!("{{+{b}+}}"));
        }
        m
    };
    format!("{}{middle}{}", &old[..head], &old[old.len() - tail..])
}

/// Longest pair of texts (bytes, both sides) diffed word by word. Myers'
/// diff costs the length times the number of edits: a 10 MB description
/// that replaced a short one took hours.
const MAX_WORD_DIFF: usize = 64 * 1024;

/// Lengths in bytes of the common start and end of `a` and `b`, not
/// overlapping, cut back to whole words (the start ends after a
/// whitespace, the end begins with one).
fn common_ends(a: &str, b: &str) -> (usize, usize) {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let mut head = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    while !a.is_char_boundary(head) {
        head -= 1;
    }
    head = a[..head]
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let room = x.len().min(y.len()) - head;
    let mut tail = x
        .iter()
        .rev()
        .zip(y.iter().rev())
        .take(room)
        .take_while(|(p, q)| p == q)
        .count();
    while !a.is_char_boundary(a.len() - tail) {
        tail -= 1;
    }
    let end = &a[a.len() - tail..];
    tail = end
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, _)| end.len() - i);
    (head, tail)
}

fn myers_word_diff(old: &str, new: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_words(old, new);
    let (mut out, mut del, mut ins, mut gap) =
        (String::new(), String::new(), String::new(), String::new());
    let flush = |out: &mut String, del: &mut String, ins: &mut String| {
        if !del.is_empty() {
            out.push_str(&format!("[-{del}-]"));
        }
        if !ins.is_empty() {
            out.push_str(&format!("{{+{ins}+}}"));
        }
        del.clear();
        ins.clear();
    };
    for change in diff.iter_all_changes() {
        let v = change.value();
        match change.tag() {
            ChangeTag::Delete => {
                if !gap.is_empty() {
                    del.push_str(&gap);
                    ins.push_str(&std::mem::take(&mut gap));
                }
                del.push_str(v);
            }
            ChangeTag::Insert => {
                if !gap.is_empty() {
                    del.push_str(&gap);
                    ins.push_str(&std::mem::take(&mut gap));
                }
                ins.push_str(v);
            }
            ChangeTag::Equal if v.trim().is_empty() && !(del.is_empty() && ins.is_empty()) => {
                gap.push_str(v)
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut del, &mut ins);
                out.push_str(&std::mem::take(&mut gap));
                out.push_str(v);
            }
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out.push_str(&gap);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`joined`] gives what looking each key up in both maps gives, on
    /// many pairs of key sets: disjoint, equal, nested, interleaved, empty,
    /// with keys that sort by bytes (`Z` < `a` < `é`).
    #[test]
    fn joined_is_the_union_of_the_keys_with_both_values() {
        use std::collections::{BTreeMap, BTreeSet};
        let universe = ["", "Z", "a", "a_b", "ab", "b", "é", "\u{1f600}"];
        for mask in 0u32..(1 << (2 * universe.len())) {
            let a: BTreeMap<String, usize> = (0..universe.len())
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| (universe[i].to_string(), i))
                .collect();
            let b: BTreeMap<String, usize> = (0..universe.len())
                .filter(|i| mask >> (universe.len() + i) & 1 == 1)
                .map(|i| (universe[i].to_string(), 100 + i))
                .collect();
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            let expected: Vec<(&str, Option<&usize>, Option<&usize>)> = keys
                .into_iter()
                .map(|k| (k.as_str(), a.get(k), b.get(k)))
                .collect();
            let got: Vec<_> = joined(a.iter(), b.iter()).collect();
            assert_eq!(got, expected, "{a:?} {b:?}");
        }
    }

    #[test]
    fn word_diff_marks_changed_words() {
        assert_eq!(
            word_diff("read a file", "read the file"),
            "read [-a-]{+the+} file"
        );
    }

    /// Past the limit only the middle that differs is diffed, and a
    /// middle past it too is one replacement (it took hours).
    #[test]
    fn word_diff_of_long_texts_diffs_the_middle_or_replaces_it() {
        let pad = "word ".repeat(MAX_WORD_DIFF / 5);
        let (old, new) = (
            format!("{pad}read a file {pad}"),
            format!("{pad}read the file {pad}"),
        );
        assert_eq!(
            word_diff(&old, &new),
            format!("{pad}read [-a-]{{+the+}} file {pad}")
        );
        let long = "Reads a file. ".repeat(MAX_WORD_DIFF / 7);
        assert_eq!(word_diff("Adds.", &long), format!("[-Adds.-]{{+{long}+}}"));
    }
    fn launch_findings(locked: Option<&str>, seen: &str, state: Option<State>) -> Vec<Finding> {
        let parse = |t: &str| crate::json::parse(t.as_bytes()).unwrap().0;
        let locked = locked.map(parse);
        let seen = parse(seen);
        let entry = state.map(|state| Entry {
            state,
            descriptor: Descriptor::new(Object::new()).0,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: (state == State::Pinned).then(|| {
                crate::lock::Approval {
                    approver: "A <a@x>".into(),
                    at: "2026-01-01T00:00:00Z".into(),
                    note: String::new(),
                }
                .into()
            }),
            lazy: Default::default(),
        });
        let pair = Pair {
            server: "s",
            tool: None,
            entry: entry.as_ref(),
            seen: entry.as_ref().map(|e| &e.descriptor),
            locked_launch: locked.as_ref(),
            seen_launch: seen.as_object(),
        };
        let mut out = Vec::new();
        compare_pair(&pair, &mut out);
        out.retain(|f| f.class == Class::Drift);
        out
    }

    #[test]
    fn a_changed_launch_is_high_drift_when_the_lock_has_one() {
        let old = r#"{"command":["node","a.js"]}"#;
        let found = launch_findings(
            Some(old),
            r#"{"command":["node","b.js"],"transport":"stdio"}"#,
            Some(State::Pinned),
        );
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(
            (f.severity, f.field.as_deref()),
            (Severity::High, Some("/launch"))
        );
        assert!(
            f.message.contains("a different command now runs"),
            "{}",
            f.message
        );
        assert_eq!(
            f.evidence,
            [
                r#"old: {"command":["node","a.js"]}"#,
                r#"new: {"command":["node","b.js"]}"#
            ]
        );
        let found = launch_findings(
            Some(old),
            r#"{"command":["node","b.js"]}"#,
            Some(State::Provisional),
        );
        assert_eq!(found[0].severity, Severity::High.lower());
        // The same launch written the capture way, or no launch to compare.
        assert!(launch_findings(
            Some(old),
            r#"{"command":"node","args":["a.js"],"env":{}}"#,
            Some(State::Pinned)
        )
        .is_empty());
        assert!(launch_findings(None, r#"{"command":["other"]}"#, Some(State::Pinned)).is_empty());
        assert!(
            launch_findings(Some(old), r#"{"transport":"stdio"}"#, Some(State::Pinned)).is_empty()
        );
    }
}
