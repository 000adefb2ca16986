//! One entry's screen in `git kams review`: who approved it last, what
//! changed in it field by field (word diffs for text, line diffs of the
//! JSON for the rest), and what the detectors found on it. Pure: it takes
//! values and returns text. Every string that comes from a descriptor, a
//! lock or a finding is escaped here, so that nothing on the screen can
//! drive the terminal or hide a character from the reviewer.

use crate::canon::{sorted_members, write_number, write_string, Escape};
use crate::finding::{Class, Finding};
use crate::json::Value;
use crate::lock::Approval;
use crate::text::escape_display;

/// What the screen of one entry shows.
pub struct Screen<'a> {
    /// `server`, `server/tool` or `server (launch)`, unescaped.
    pub subject: &'a str,
    /// What happened to it: `new`, `drifted`, `removed`, `launch changed`...
    pub state: &'a str,
    /// What the lock says of it now.
    pub locked: Locked<'a>,
    /// The descriptor's digest in the lock and in the inventory.
    pub digests: (Option<String>, Option<String>),
    /// Every field that differs, in display order.
    pub fields: Vec<Field<'a>>,
    /// Every finding on the entry, sorted.
    pub findings: Vec<&'a Finding>,
    /// What the reviewer decided before, when the screen is shown again.
    pub decided: Option<String>,
}

/// The lock's side of an entry.
pub enum Locked<'a> {
    /// Not in the lock.
    Absent,
    /// Recorded at this time, never approved.
    Provisional(&'a str),
    /// Approved.
    Pinned(&'a Approval),
    /// Refused.
    Denied(&'a Approval),
    /// A server's launch: whether the lock records one (who approved it
    /// is the commit that recorded it, which `git kams log` names).
    Launch(bool),
}

/// One field that differs: its name, and its value in the lock and in the
/// inventory (absent on a side that lacks it).
pub struct Field<'a> {
    /// The field's name (`description`, `inputSchema`, `launch`...).
    pub name: &'a str,
    /// The value the lock has.
    pub old: Option<&'a Value>,
    /// The value the inventory shows.
    pub new: Option<&'a Value>,
}

/// Lines of context around each change of a JSON field.
const CONTEXT: usize = 3;

/// The screen's text, every line ending in a line feed.
pub fn render(s: &Screen<'_>) -> String {
    let mut out = format!("{}: {}\n", escape_display(s.subject), s.state);
    match &s.locked {
        Locked::Absent => out.push_str("  not in the lock\n"),
        Locked::Provisional(at) => out.push_str(&format!(
            "  recorded {}, never approved\n",
            escape_display(at)
        )),
        Locked::Launch(true) => out
            .push_str("  the lock records another launch (`git kams log` names who approved it)\n"),
        Locked::Launch(false) => out.push_str("  the lock records no launch\n"),
        Locked::Pinned(a) | Locked::Denied(a) => {
            let note = if a.note.trim().is_empty() {
                "(no note)".to_string()
            } else {
                format!("\"{}\"", escape_display(a.note.trim()))
            };
            out.push_str(&format!(
                "  {} by {} at {}: {note}\n",
                if matches!(s.locked, Locked::Denied(_)) {
                    "denied"
                } else {
                    "approved"
                },
                escape_display(&a.approver),
                escape_display(&a.at)
            ));
        }
    }
    match &s.digests {
        (Some(a), Some(b)) if a != b => out.push_str(&format!("  digest {a} -> {b}\n")),
        (Some(a), None) => out.push_str(&format!("  digest {a}, no longer advertised\n")),
        (_, Some(b)) => out.push_str(&format!("  digest {b}\n")),
        (None, None) => {}
    }
    for f in &s.fields {
        out.push('\n');
        out.push_str(&format!("  {}:\n", escape_display(f.name)));
        field(f, &mut out);
    }
    out.push('\n');
    if s.findings.is_empty() {
        out.push_str("  no findings\n");
    } else {
        out.push_str(&format!(
            "  {} finding{}:\n",
            s.findings.len(),
            if s.findings.len() == 1 { "" } else { "s" }
        ));
    }
    for f in &s.findings {
        out.push_str(&format!(
            "    {:<8} {:<10} {}{}\n",
            f.severity.as_str(),
            f.class.as_str(),
            f.field
                .as_deref()
                .map(|p| format!("{}  ", escape_display(p)))
                .unwrap_or_default(),
            escape_display(&f.message)
        ));
        // The change itself is shown above; other findings show their why.
        if !matches!(
            f.class,
            Class::Drift | Class::Added | Class::Removed | Class::Unapproved
        ) {
            for e in &f.evidence {
                out.push_str(&format!("      {}\n", escape_display(e)));
            }
        }
    }
    if let Some(d) = &s.decided {
        out.push_str(&format!("\n  decided before: {d}\n"));
    }
    out
}

/// One field's change: a word diff when both sides are text, else the
/// lines of its JSON that differ with some around them.
fn field(f: &Field<'_>, out: &mut String) {
    match (f.old, f.new) {
        (Some(Value::String(a)), Some(Value::String(b))) => {
            let diff = crate::compare::word_diff(a, b);
            for line in diff.split('\n') {
                out.push_str(&format!("    {}\n", escape_display(line)));
            }
        }
        (None, Some(Value::String(b))) => text_lines('+', b, out),
        (Some(Value::String(a)), None) => text_lines('-', a, out),
        (a, b) => {
            let (a, b) = (
                a.map(pretty).unwrap_or_default(),
                b.map(pretty).unwrap_or_default(),
            );
            json_diff(&a, &b, out);
        }
    }
}

/// A text that is only on one side, line by line after `sign`.
fn text_lines(sign: char, text: &str, out: &mut String) {
    for line in text.split('\n') {
        out.push_str(&format!("    {sign} {}\n", escape_display(line)));
    }
}

/// The lines of `a` and `b` as `-`, `+` and context lines, groups of
/// changes apart marked by `...`.
fn json_diff(a: &str, b: &str, out: &mut String) {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(a, b);
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            out.push_str("    ...\n");
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                // The JSON was written with every concealing character
                // escaped; the line feed that ends the line is ours.
                let line = change.value().trim_end_matches('\n');
                out.push_str(&format!("    {sign} {line}\n"));
            }
        }
    }
}

/// `v` as JSON, two spaces per level, keys in canonical order, every
/// concealing character escaped (`\u200b`), one member per line.
pub fn pretty(v: &Value) -> String {
    let mut out = Vec::new();
    write_pretty(v, 0, &mut out);
    out.push(b'\n');
    String::from_utf8(out).expect("JSON text is UTF-8")
}

fn write_pretty(v: &Value, level: usize, out: &mut Vec<u8>) {
    let indent = |n: usize, out: &mut Vec<u8>| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', 2 * n));
    };
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => write_number(n.as_f64(), out),
        Value::String(s) => write_string(s, Escape::Visible, out),
        Value::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                indent(level + 1, out);
                write_pretty(item, level + 1, out);
            }
            indent(level, out);
            out.push(b']');
        }
        Value::Object(o) if o.is_empty() => out.extend_from_slice(b"{}"),
        Value::Object(o) => {
            out.push(b'{');
            for (i, (k, item)) in sorted_members(o).into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                indent(level + 1, out);
                write_string(k, Escape::Visible, out);
                out.extend_from_slice(b": ");
                write_pretty(item, level + 1, out);
            }
            indent(level, out);
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;

    fn value(text: &str) -> Value {
        crate::json::parse(text.as_bytes()).unwrap().0
    }

    fn screen<'a>(fields: Vec<Field<'a>>, findings: Vec<&'a Finding>) -> Screen<'a> {
        Screen {
            subject: "files/read\u{1b}[2J",
            state: "drifted",
            locked: Locked::Absent,
            digests: (None, None),
            fields,
            findings,
            decided: None,
        }
    }

    #[test]
    fn text_fields_are_word_diffed_and_hidden_characters_escaped() {
        let (a, b) = (
            Value::String("Reads a file.".into()),
            Value::String("Reads any\u{200b} file.\nSecond line".into()),
        );
        let text = render(&screen(
            vec![Field {
                name: "description",
                old: Some(&a),
                new: Some(&b),
            }],
            vec![],
        ));
        assert_eq!(
            text,
            "files/read\\u{1B}[2J: drifted\n  not in the lock\n\n  description:\n    Reads [-a-]{+any\\u{200B}+} file.{+\n    Second line+}\n\n  no findings\n"
        );
    }

    #[test]
    fn json_fields_show_the_lines_that_differ_with_context() {
        let a = value(
            r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}"#,
        );
        let b = value(
            r#"{"type":"object","properties":{"path":{"type":"string","description":"a\u0007"}},"required":["path"]}"#,
        );
        let mut out = String::new();
        field(
            &Field {
                name: "inputSchema",
                old: Some(&a),
                new: Some(&b),
            },
            &mut out,
        );
        assert_eq!(
            out,
            r#"      {
    -   "additionalProperties": false,
        "properties": {
          "path": {
    +       "description": "a\u0007",
            "type": "string"
          }
        },
"#
        );
        assert!(!out
            .chars()
            .any(|c| c != '\n' && crate::text::is_concealing(c)));
    }

    #[test]
    fn findings_show_their_evidence_unless_they_are_the_change() {
        let finding = |class, evidence: &str| Finding {
            class,
            severity: Severity::High,
            server: "files".into(),
            tool: Some("read".into()),
            field: Some("/description".into()),
            message: "m\u{202e}".into(),
            evidence: vec![evidence.into()],
        };
        let (drift, hidden) = (
            finding(Class::Drift, "words: x"),
            finding(Class::Hidden, "U+200B"),
        );
        let text = render(&screen(vec![], vec![&drift, &hidden]));
        assert!(text.ends_with(
            "  2 findings:\n    high     drift      /description  m\\u{202E}\n    high     hidden     /description  m\\u{202E}\n      U+200B\n"
        ), "{text}");
    }
}
