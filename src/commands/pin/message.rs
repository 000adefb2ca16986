//! The approval commit's message: its subject, said from the lines of the
//! change, the note, the lines, and the approver's sign-off (the trailer
//! the hooks check). `git log` prints a message raw, so nothing in it may
//! drive a terminal, hide text or forge a trailer.

use super::summary::{DENIED, LAUNCH};
use crate::git::message::ACCEPTED;
use crate::text::escape_display;

/// The approval commit's message: what was approved, the note, and the
/// approver's sign-off.
pub(crate) fn approval_message(note: &str, who: &str, lines: &[String]) -> String {
    fn subject_of(line: &str) -> Option<&str> {
        line.split_whitespace().nth(1)
    }
    // Denials (from `review`) are named after the approvals.
    let (denials, approvals): (Vec<&String>, Vec<&String>) = lines
        .iter()
        .filter(|l| !l.starts_with(ACCEPTED))
        .partition(|l| l.starts_with(DENIED));
    let denied = match denials.as_slice() {
        [] => String::new(),
        [one] => subject_of(one).unwrap_or_default().to_string(),
        many => format!("{} entries", many.len()),
    };
    if approvals.is_empty() {
        return commit_message(&format!("kams: deny {denied}"), note, who, lines);
    }
    let (launches, entries): (Vec<&String>, Vec<&String>) =
        approvals.into_iter().partition(|l| l.starts_with(LAUNCH));
    let subjects: Vec<&str> = entries.iter().filter_map(|l| subject_of(l)).collect();
    // The launch and acceptance lines are in the body; the subject counts
    // entries.
    let subject = match subjects.as_slice() {
        [] => format!(
            "kams: approve the launch of {}",
            launches
                .iter()
                .filter_map(|l| subject_of(l))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [one] => format!("kams: approve {one}"),
        many => {
            let mut servers: Vec<&str> = many
                .iter()
                .map(|s| s.split('/').next().unwrap_or(s))
                .collect();
            servers.dedup();
            // Counted as the summary line counts them (see [`Tally`]).
            let launches = match launches.len() {
                0 => String::new(),
                1 => " and 1 launch".to_string(),
                n => format!(" and {n} launches"),
            };
            format!(
                "kams: approve {} entries{launches} of {}",
                many.len(),
                servers.join(", ")
            )
        }
    };
    let subject = if denied.is_empty() {
        subject
    } else {
        format!("{subject}, deny {denied}")
    };
    commit_message(&subject, note, who, lines)
}

/// An approval commit's message: the subject, the note, one line per
/// change, and the approver's sign-off (what the hooks check).
///
/// `git log` prints a message raw, so nothing in it may drive a terminal
/// or hide text: the note (the user's `-m`, which may span lines) is
/// escaped line by line as every output is, and whatever a caller left
/// in the other parts (names are escaped where the lines are made) has
/// its concealing characters escaped here. Nor may a note or a name end
/// a paragraph early and forge a trailer: only the last line is one.
pub fn commit_message(subject: &str, note: &str, who: &str, lines: &[String]) -> String {
    let mut m = format!("{}\n\n", unconcealed(subject));
    if !note.trim().is_empty() {
        let note: Vec<String> = note.trim().lines().map(escape_display).collect();
        m.push_str(&note.join("\n"));
        m.push_str("\n\n");
    }
    for l in lines {
        m.push_str(&unconcealed(l));
        m.push('\n');
    }
    m.push_str(&format!("\nSigned-off-by: {}\n", unconcealed(who)));
    m
}

/// `s` with its concealing characters (controls, line breaks included)
/// escaped and the rest as it is: idempotent on text [`escape_display`]
/// already made.
fn unconcealed(s: &str) -> String {
    if !crate::text::has_concealing(s) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if crate::text::is_concealing(c) {
                format!("\\u{{{:X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}
