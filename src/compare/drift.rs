//! Field drift: what changed in one entry's descriptor, or in its launch,
//! since the lock recorded it, field by field, each change with its
//! severity for a pinned entry and its evidence. Each field says what it
//! does in its own way (a description is words, a schema a shape, an
//! annotation a claim), so each is compared by the rule for its kind.

use super::schema;
use super::words::word_diff;
use super::Pair;
use crate::descriptor::Descriptor;
use crate::finding::Severity;
use crate::json::{Object, Value};

/// The launch changed since the lock recorded it. Silent when the lock has
/// no launch (locks from before launches were recorded: nothing was
/// approved to differ from) or the inventory names none (nothing to
/// compare).
pub(super) fn launch_drift(pair: &Pair<'_>) -> Option<Drift> {
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

pub(super) fn tool_drift(old: &Descriptor, new: &Descriptor, out: &mut Vec<Drift>) {
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

pub(super) fn server_drift(old: &Descriptor, new: &Descriptor, out: &mut Vec<Drift>) {
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
                            .collect::<Object>()
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
    let empty = Object::new();
    let oa = a.and_then(Value::as_object).unwrap_or(&empty);
    let ob = b.and_then(Value::as_object).unwrap_or(&empty);
    let keys = keys_of_either(oa, ob);
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

/// One of the MCP specification's annotation hints.
struct Hint {
    name: &'static str,
    /// What an absent hint means, per the specification.
    default: bool,
    /// The value that claims safety (`readOnlyHint: true`,
    /// `destructiveHint: false`): a change to it is a stronger claim.
    claims_safety: bool,
}

const HINTS: [Hint; 4] = [
    Hint {
        name: "readOnlyHint",
        default: false,
        claims_safety: true,
    },
    Hint {
        name: "destructiveHint",
        default: true,
        claims_safety: false,
    },
    Hint {
        name: "idempotentHint",
        default: false,
        claims_safety: true,
    },
    Hint {
        name: "openWorldHint",
        default: true,
        claims_safety: false,
    },
];

fn annotation_drift(a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Drift>) {
    let empty = Object::new();
    let oa = a.and_then(Value::as_object).unwrap_or(&empty);
    let ob = b.and_then(Value::as_object).unwrap_or(&empty);
    let keys = keys_of_either(oa, ob);
    // Changes grouped by what they mean: one finding per group, not per hint.
    let (mut claims, mut drops, mut odd, mut cosmetic) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in keys {
        let (x, y) = (oa.get(k), ob.get(k));
        if x == y {
            continue;
        }
        let Some(hint) = HINTS.iter().find(|h| h.name == k) else {
            cosmetic.push(k.clone());
            continue;
        };
        let h = hint.name;
        let meaning = |v: Option<&Value>| match v {
            None => Some(hint.default),
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => None,
        };
        match (meaning(x), meaning(y)) {
            (Some(p), Some(q)) if p == q => cosmetic.push(format!("{h} (same meaning)")),
            (Some(_), Some(q)) if q == hint.claims_safety => claims.push(format!("{h}={q}")),
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

/// Every key of `a` and of `b`, sorted, each once.
fn keys_of_either<'a>(a: &'a Object, b: &'a Object) -> Vec<&'a String> {
    let mut keys: Vec<&String> = a
        .iter()
        .map(|(k, _)| k)
        .chain(b.iter().map(|(k, _)| k))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// `old:` and `new:` lines with compact canonical JSON of each side.
pub fn values_evidence(a: Option<&Value>, b: Option<&Value>) -> Vec<String> {
    let show = |v: Option<&Value>| match v {
        None => "(absent)".to_string(),
        Some(v) => crate::canon::jcs_string(v),
    };
    vec![format!("old: {}", show(a)), format!("new: {}", show(b))]
}
