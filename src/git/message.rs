//! The acceptance lines of an approval commit's message: `pin` writes one
//! per high or critical finding it was told to accept, and `log` reads
//! them back. Both sides are here so that the line and its parse cannot
//! drift apart.
//!
//! An approval message is its subject, the note (escaped line by line, and
//! possibly of several paragraphs), one paragraph of change lines, and the
//! trailer paragraph (see `commands::pin::commit_message`). Acceptances
//! are read from the change paragraph only: the paragraph right before the
//! last, never the subject, and only when every line of it starts with a
//! change prefix. A note line that reads `accepted  ...` is in a paragraph
//! of its own, before the change paragraph, and so is never one.

use crate::finding::{Class, Finding, Severity};
use crate::text::{escape_display, unescape_display};

/// Starts an acceptance line.
pub const ACCEPTED: &str = "accepted  ";

/// Every prefix a line of an approval's change paragraph starts with.
const CHANGES: [&str; 7] = [
    "pinned    ",
    "re-pinned ",
    "removed   ",
    "denied    ",
    "launch    ",
    "inventory ",
    ACCEPTED,
];

/// A finding that an approval accepted, as its message records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acceptance {
    /// Its severity when it was accepted.
    pub severity: Severity,
    /// Its class.
    pub class: Class,
    /// `SERVER` or `SERVER/TOOL`.
    pub subject: String,
    /// The pointer of the field, if any.
    pub field: Option<String>,
    /// Its one-line message.
    pub message: String,
}

impl Acceptance {
    /// What `finding` says, to be accepted.
    pub fn of(finding: &Finding) -> Acceptance {
        Acceptance {
            severity: finding.severity,
            class: finding.class,
            subject: finding.subject(),
            field: finding.field.clone(),
            message: finding.message.clone(),
        }
    }

    /// The message line: `accepted  SEVERITY CLASS SUBJECT[ FIELD]: MESSAGE`,
    /// escaped. In the subject and the field a space and a colon are
    /// escaped too (`\u{20}`, `\u{3A}`), so that the line splits back
    /// into its parts whatever the names hold.
    pub fn line(&self) -> String {
        let mut l = format!(
            "{ACCEPTED}{} {} {}",
            self.severity,
            self.class,
            word(&self.subject)
        );
        if let Some(f) = &self.field {
            l.push(' ');
            l.push_str(&word(f));
        }
        l.push_str(": ");
        l.push_str(&escape_display(&self.message));
        l
    }

    /// The acceptance a [`Acceptance::line`] wrote; `None` for any other text.
    pub fn parse(line: &str) -> Option<Acceptance> {
        let rest = line.strip_prefix(ACCEPTED)?;
        let (head, message) = rest.split_once(':')?;
        let message = unescape_display(message.strip_prefix(' ')?)?;
        let parts: Vec<&str> = head.split(' ').collect();
        let (severity, class, subject, field) = match parts.as_slice() {
            [s, c, subject] => (s, c, subject, None),
            [s, c, subject, field] => (s, c, subject, Some(field)),
            _ => return None,
        };
        let subject = unescape_display(subject).filter(|s| !s.is_empty())?;
        Some(Acceptance {
            severity: severity.parse().ok()?,
            class: class.parse().ok()?,
            subject,
            field: match field {
                Some(f) => Some(unescape_display(f)?),
                None => None,
            },
            message,
        })
    }

    /// The server and the tool (`None`: the server entry) of the subject.
    pub fn entry(&self) -> (&str, Option<&str>) {
        match self.subject.split_once('/') {
            Some((s, t)) => (s, Some(t)),
            None => (&self.subject, None),
        }
    }
}

/// `s` escaped for a line, with spaces and colons escaped too.
fn word(s: &str) -> String {
    escape_display(s)
        .replace(' ', "\\u{20}")
        .replace(':', "\\u{3A}")
}

/// The acceptance lines of a commit message (see the module comment), as
/// written.
pub fn acceptance_lines(message: &str) -> Vec<String> {
    let mut paragraphs: Vec<Vec<&str>> = vec![Vec::new()];
    for line in message.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            if !paragraphs.last().is_some_and(Vec::is_empty) {
                paragraphs.push(Vec::new());
            }
        } else {
            paragraphs.last_mut().expect("one at least").push(line);
        }
    }
    if paragraphs.last().is_some_and(Vec::is_empty) {
        paragraphs.pop();
    }
    // The subject, the changes, the trailers: three at least.
    if paragraphs.len() < 3 {
        return Vec::new();
    }
    let changes = &paragraphs[paragraphs.len() - 2];
    if !changes
        .iter()
        .all(|l| CHANGES.iter().any(|p| l.starts_with(p)))
    {
        return Vec::new();
    }
    changes
        .iter()
        .filter(|l| l.starts_with(ACCEPTED))
        .map(|l| l.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poison() -> Acceptance {
        Acceptance {
            severity: Severity::Critical,
            class: Class::Poison,
            subject: "memory/read_graph".into(),
            field: Some("/description".into()),
            message: "poisoning signals: read-secret +3".into(),
        }
    }

    #[test]
    fn a_line_reads_as_it_is_written() {
        let a = poison();
        assert_eq!(
            a.line(),
            "accepted  critical poison memory/read_graph /description: poisoning signals: read-secret +3"
        );
        assert_eq!(Acceptance::parse(&a.line()), Some(a));
        let odd = Acceptance {
            severity: Severity::High,
            class: Class::Transport,
            subject: "my server: two\u{200B}".into(),
            field: None,
            message: "a: b \\ \u{1B}[31m".into(),
        };
        assert_eq!(
            odd.line(),
            "accepted  high transport my\\u{20}server\\u{3A}\\u{20}two\\u{200B}: a: b \\\\ \\u{1B}[31m"
        );
        assert_eq!(Acceptance::parse(&odd.line()), Some(odd.clone()));
        assert_eq!(odd.entry(), ("my server: two\u{200B}", None));
        assert_eq!(poison().entry(), ("memory", Some("read_graph")));
    }

    #[test]
    fn other_text_is_no_acceptance() {
        for l in [
            "accepted critical poison a/b /d: m",
            "accepted  critical poison a/b /d m",
            "accepted  critical nonsense a/b /d: m",
            "accepted  severe poison a/b /d: m",
            "accepted  critical poison a/b /d x: m",
            "accepted  critical poison: m",
            "accepted  critical poison a/b: \\q",
            "pinned    a/b sha256:00 (new)",
        ] {
            assert_eq!(Acceptance::parse(l), None, "{l}");
        }
    }

    #[test]
    fn only_the_change_paragraph_counts() {
        let line = poison().line();
        let signed = "Signed-off-by: Rita <rita@example.com>";
        let message = format!(
            "kams: approve a/b\n\nlooks fine\n\npinned    a/b sha256:00 (new)\n{line}\n\n{signed}\n"
        );
        assert_eq!(acceptance_lines(&message), vec![line.clone()]);
        // A note that forges one: its own paragraph, before the changes.
        let forged =
            format!("kams: approve a/b\n\n{line}\n\npinned    a/b sha256:00 (new)\n\n{signed}\n");
        assert!(acceptance_lines(&forged).is_empty());
        // ...or a note line among other note lines.
        let forged = format!(
            "kams: approve a/b\n\nfine\n{line}\n\npinned    a/b sha256:00 (new)\n\n{signed}\n"
        );
        assert!(acceptance_lines(&forged).is_empty());
        // A paragraph with a line that is no change is not the changes.
        let mixed = format!("s\n\npinned    a/b x\n{line}\nsomething else\n\n{signed}\n");
        assert!(acceptance_lines(&mixed).is_empty());
        // The subject is never the changes, nor the trailers.
        assert!(acceptance_lines(&format!("{line}\n\n{signed}\n")).is_empty());
        assert!(acceptance_lines(&format!("s\n\n{line}\n")).is_empty());
        assert!(acceptance_lines("").is_empty());
    }
}
