//! What an approval prints: one line per change (their prefixes are how
//! the summary, the question and the commit's subject tell them apart),
//! the [`Tally`] those lines count to, and the summary line that `pin`,
//! `review` and `deny` end with.

use std::io::Write;

use super::commit::Written;
use crate::git::message::ACCEPTED;
use crate::text::escape_display;

/// Starts the summary line of an approved launch; also how
/// [`approval_message`](super::approval_message) tells it from an entry's line.
pub(super) const LAUNCH: &str = "launch    ";

/// Starts the line of a denial (what [`deny_entry`](crate::commands::deny::deny_entry) says).
pub(super) const DENIED: &str = "denied    ";

/// A line per denied entry a wider selection passed over, with `how` to
/// take it up again.
pub(crate) fn write_kept_denied(
    o: &mut dyn Write,
    kept: &[String],
    how: impl Fn(&str) -> String,
) -> std::io::Result<()> {
    for k in kept {
        writeln!(o, "kept denied {k} ({})", how(k))?;
    }
    Ok(())
}

/// Whether an approval's lines are printed with its summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lines {
    /// Print them, then the summary.
    Print,
    /// They were printed before the question: the summary alone.
    Printed,
}

/// An approval's `lines` (as `show` says) and its summary: `VERB by WHO
/// (TALLY): DONE`. Shared by `pin`, `review` and `deny`, whose counts are
/// one [`Tally`].
pub(crate) fn write_summary(
    o: &mut dyn Write,
    lines: &[String],
    show: Lines,
    verb: &str,
    who: &str,
    done: &Written,
) -> std::io::Result<()> {
    if show == Lines::Print {
        write_lines(lines, o)?;
    }
    writeln!(
        o,
        "{verb} by {} ({}): {done}",
        escape_display(who),
        Tally::of(lines)
    )
}

pub(super) fn write_lines(lines: &[String], o: &mut dyn Write) -> std::io::Result<()> {
    for l in lines {
        writeln!(o, "{l}")?;
    }
    Ok(())
}

/// What one approval did, counted from its lines, so that the summary
/// line, the commit's subject and the question agree: entries (pinned,
/// re-pinned, removed), launches, denials and accepted findings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub entries: usize,
    pub launches: usize,
    pub denials: usize,
    pub accepted: usize,
}

impl Tally {
    /// The counts of an approval's `lines`.
    pub(crate) fn of(lines: &[String]) -> Tally {
        let mut t = Tally::default();
        for l in lines {
            if l.starts_with(ACCEPTED) {
                t.accepted += 1;
            } else if l.starts_with(LAUNCH) {
                t.launches += 1;
            } else if l.starts_with(DENIED) {
                t.denials += 1;
            } else if !l.starts_with("inventory ") {
                t.entries += 1;
            }
        }
        t
    }
}

impl std::fmt::Display for Tally {
    /// `12 entries, 1 launch, 1 denial, 2 findings accepted`, the zeros left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, one: &str, many: &str| {
            (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
        };
        let parts: Vec<String> = [
            plural(self.entries, "entry", "entries"),
            plural(self.launches, "launch", "launches"),
            plural(self.denials, "denial", "denials"),
            plural(self.accepted, "finding accepted", "findings accepted"),
        ]
        .into_iter()
        .flatten()
        .collect();
        f.write_str(&parts.join(", "))
    }
}
