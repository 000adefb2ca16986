//! `git kams import descriptorpin|kams FILE`: approvals made with another
//! tool become pinned entries, so that moving to git-kams does not mean
//! reviewing everything again. It is all or nothing: one tampered tool or
//! one conflict with the lock and nothing is written, since a partly
//! imported file would look like a complete migration.

use std::io::Write;

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::pin::{approver, check_approver, commit_message, write_approval, Written};
use super::{emit, now, Env, PlainFormat, Status, Tools};
use crate::cli::{ImportArgs, ImportSource};
use crate::descriptor::Descriptor;
use crate::files::lock::Guard;
use crate::import::{self, Check, Source};
use crate::lock::{Approval, Entry, State};
use crate::report::document::{self, Displayed, EmptyRows, Layout};
use crate::report::JSON_VERSION;
use crate::text::{escape_display, shown_path};

/// What happens to one imported tool.
enum Action {
    /// Becomes pinned: new, or over a provisional entry of the same
    /// descriptor, or (`--force`) over a different one.
    Pin(Option<Entry>),
    /// Already pinned with this descriptor: the lock's approval stays.
    Already,
    /// The lock has another descriptor (without `--force`).
    Conflict(Entry),
    /// A stored hash does not match the descriptor.
    Refused,
}

/// One tool's line of the report.
struct Row {
    tool: import::Tool,
    action: Action,
}

/// Runs `import`.
pub fn run(env: &Env, args: &ImportArgs, out: &mut dyn Write) -> Result<Status> {
    let (source, a) = match &args.source {
        ImportSource::Descriptorpin(a) => (Source::DescriptorPin, a),
        ImportSource::Kams(a) => (Source::Kams, a),
    };
    let format = env.plain_format("import")?;
    let who = approver(env, a.commit.approver.as_deref())?;
    let shown = shown_path(&a.file);
    let (_, opts) = env.inventory_spec(Tools::Digests)?;
    let bytes = crate::files::read_capped(&a.file, opts.max_size).map_err(|e| anyhow!("{e}"))?;
    let bytes = crate::bytes::strip_bom(bytes);
    let file = import::parse(source, &bytes).map_err(|e| anyhow!("{shown}: {e}"))?;
    for t in &file.tools {
        if let Some(by) = &t.approver {
            check_approver(by).map_err(|e| anyhow!("{shown}: {e} (JSON pointer {})", t.pointer))?;
        }
    }
    let path = env.lock_path()?;
    let guard = Guard::acquire(&path)?;
    let mut lock = guard.read()?.unwrap_or_default();
    let rows: Vec<Row> = file
        .tools
        .into_iter()
        .map(|tool| {
            let existing = lock.entry(&tool.server, Some(&tool.name));
            let action = match existing {
                _ if tool.check != Check::Verified => Action::Refused,
                Some(e) if e.descriptor.digest == tool.descriptor.digest => {
                    if e.state == State::Pinned {
                        Action::Already
                    } else {
                        Action::Pin(Some(e.clone()))
                    }
                }
                Some(e) if !a.force => Action::Conflict(e.clone()),
                e => Action::Pin(e.cloned()),
            };
            Row { tool, action }
        })
        .collect();
    let time = now()?;
    let default_note = format!("imported from {} {shown}", source.name());
    let mut notes = not_carried_over(source, &rows, &who, &time);
    notes.extend(
        file.unknown_keys
            .iter()
            .map(|k| format!("unknown key {} ignored", escape_display(k))),
    );
    notes.extend(file.skipped.iter().map(|s| escape_display(s)));
    let blocked = rows
        .iter()
        .filter(|r| matches!(r.action, Action::Refused | Action::Conflict(_)))
        .count();
    let pinned = rows
        .iter()
        .filter(|r| matches!(r.action, Action::Pin(_)))
        .count();
    let report = Report {
        source,
        file: &shown,
        rows: &rows,
        notes: &notes,
    };
    if blocked > 0 || pinned == 0 {
        drop(guard);
        let outcome = if blocked > 0 {
            Outcome::Blocked(blocked)
        } else {
            Outcome::Nothing
        };
        report.write(format, &outcome, out)?;
        return Ok(u8::from(blocked > 0));
    }
    let mut lines = Vec::new();
    for row in &rows {
        let Action::Pin(old) = &row.action else {
            continue;
        };
        let t = &row.tool;
        lines.push(row.line());
        let entry = Entry {
            state: State::Pinned,
            descriptor: t.descriptor.clone(),
            first_seen: old.as_ref().map_or(time.clone(), |e| e.first_seen.clone()),
            approval: Some(std::sync::Arc::new(Approval {
                approver: t.approver.clone().unwrap_or_else(|| who.clone()),
                at: time.clone(),
                note: if t.note.is_empty() {
                    default_note.clone()
                } else {
                    t.note.clone()
                },
            })),
            lazy: Default::default(),
        };
        lock.servers
            .entry(t.server.clone())
            .or_default()
            .tools
            .insert(t.name.clone(), entry);
    }
    lock.tidy();
    let mut servers: Vec<&str> = rows.iter().map(|r| r.tool.server.as_str()).collect();
    servers.dedup();
    let subject = format!(
        "kams: import {} entr{} of {} from {}",
        lines.len(),
        if lines.len() == 1 { "y" } else { "ies" },
        escape_display(&servers.join(", ")),
        source.name()
    );
    let mut body = format!(
        "Approvals imported from {} {shown}, every stored hash verified.",
        source.name()
    );
    for n in &notes {
        body.push_str("\nNot carried over: ");
        body.push_str(n);
    }
    let message = commit_message(&subject, &body, &who, &lines);
    let done = write_approval(
        env,
        guard,
        &lock,
        &path,
        a.commit.commit(),
        &message,
        &super::pin::Reviewed::Files(Vec::new()),
    )?;
    report.write(format, &Outcome::Done(pinned, done), out)?;
    Ok(0)
}

/// What the file could not give: unreviewed fields, missing approvers,
/// missing times.
fn not_carried_over(source: Source, rows: &[Row], who: &str, time: &str) -> Vec<String> {
    let mut notes = vec![format!(
        "{} pins only name, description and inputSchema: title, annotations, outputSchema and \
         the server-level fields (instructions, serverInfo) were never reviewed; the next \
         `git kams scan` shows them as drift of the imported entries: review them, then `git kams pin`",
        source.name()
    )];
    let nobody = rows
        .iter()
        .filter(|r| matches!(r.action, Action::Pin(_)) && r.tool.approver.is_none())
        .count();
    if nobody > 0 {
        let why = match source {
            Source::DescriptorPin => "approved_by [UNSPECIFIED] or empty",
            Source::Kams => "kams records no approver",
        };
        notes.push(format!(
            "approver: {nobody} entr{} name no approver ({why}): recorded as approved by {}, the importer",
            if nobody == 1 { "y" } else { "ies" },
            escape_display(who)
        ));
    }
    if rows.iter().any(|r| matches!(r.action, Action::Pin(_))) {
        notes.push(format!(
            "time: {} records no approval time: recorded as {time}, the import",
            source.name()
        ));
    }
    notes
}

/// How the import ended.
enum Outcome {
    /// This many entries were pinned, and where they went.
    Done(usize, Written),
    /// Nothing to do: every tool is already pinned.
    Nothing,
    /// This many tools were refused or conflict: nothing was written.
    Blocked(usize),
}

/// Everything the import reports.
struct Report<'a> {
    source: Source,
    file: &'a str,
    rows: &'a [Row],
    notes: &'a [String],
}

impl Row {
    fn subject(&self) -> String {
        escape_display(&format!("{}/{}", self.tool.server, self.tool.name))
    }

    fn digest(&self) -> &crate::canon::Digest {
        &self.tool.descriptor.digest
    }

    /// The row's action name (JSON) and its text line.
    fn action(&self) -> &'static str {
        match &self.action {
            Action::Pin(None) => "pinned",
            Action::Pin(Some(e)) if e.descriptor.digest == *self.digest() => "pinned-provisional",
            Action::Pin(Some(_)) => "replaced",
            Action::Already => "already-pinned",
            Action::Conflict(_) => "conflict",
            Action::Refused => "refused",
        }
    }

    fn detail(&self) -> String {
        match &self.action {
            Action::Pin(None) => "(new)".into(),
            Action::Pin(Some(e)) if e.descriptor.digest == *self.digest() => {
                "(was provisional)".into()
            }
            Action::Pin(Some(e)) => format!(
                "(replaced {}, --force; differed in {})",
                e.descriptor.digest,
                differing(&e.descriptor, &self.tool.descriptor)
            ),
            Action::Already => "(already pinned: the lock's approval stays)".into(),
            Action::Conflict(e) => format!(
                "(the lock has {}, which differs in {}: --force replaces it)",
                e.descriptor.digest,
                differing(&e.descriptor, &self.tool.descriptor)
            ),
            Action::Refused => match &self.tool.check {
                Check::Mismatch {
                    key,
                    stored,
                    computed,
                } => format!(
                    "(stored {key} {} but the descriptor hashes to {computed}: edited after its review, at {})",
                    escape_display(stored),
                    escape_display(&self.tool.pointer)
                ),
                Check::Verified => unreachable!("only mismatches are refused"),
            },
        }
    }

    fn line(&self) -> String {
        let verb = match &self.action {
            Action::Pin(Some(e)) if e.descriptor.digest != *self.digest() => "replaced",
            Action::Pin(_) => "pinned",
            Action::Already => "unchanged",
            Action::Conflict(_) => "conflict",
            Action::Refused => "refused",
        };
        format!(
            "{verb:<9} {} {} {}",
            self.subject(),
            self.digest(),
            self.detail()
        )
    }
}

/// The fields two descriptors differ in, comma-separated.
fn differing(a: &Descriptor, b: &Descriptor) -> String {
    let mut names: Vec<&str> = a
        .field_digests
        .iter()
        .chain(b.field_digests.iter())
        .map(|(k, _)| k)
        .filter(|k| a.field_digests.get(k) != b.field_digests.get(k))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

/// `import --format json`: the tools a line each, and what was written.
#[derive(Serialize)]
struct JsonImport<'a> {
    version: u32,
    source: &'static str,
    file: &'a str,
    entries: Vec<JsonRow<'a>>,
    not_carried_over: &'a [String],
    result: &'static str,
    written: Option<JsonWritten>,
}

#[derive(Serialize)]
struct JsonRow<'a> {
    server: &'a str,
    tool: &'a str,
    action: &'static str,
    digest: Displayed<&'a crate::canon::Digest>,
    approver_in_file: Option<&'a str>,
    detail: String,
}

#[derive(Serialize)]
struct JsonWritten {
    lock: String,
    /// Set when the import was committed.
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<Displayed<gix::ObjectId>>,
}

impl Report<'_> {
    fn write(&self, format: PlainFormat, outcome: &Outcome, out: &mut dyn Write) -> Result<()> {
        emit(out, |o| match format {
            PlainFormat::Text => self.text(outcome, o),
            PlainFormat::Json => self.json(outcome, o),
        })
    }

    fn text(&self, outcome: &Outcome, o: &mut dyn Write) -> std::io::Result<()> {
        for r in self.rows {
            writeln!(o, "{}", r.line())?;
        }
        if !self.notes.is_empty() {
            writeln!(o, "not carried over:")?;
            for n in self.notes {
                writeln!(o, "  {n}")?;
            }
        }
        let from = format!("{} {}", self.source.name(), self.file);
        match outcome {
            Outcome::Done(n, done) => writeln!(
                o,
                "imported {n} entr{} from {from}: {done}",
                if *n == 1 { "y" } else { "ies" }
            ),
            Outcome::Nothing => writeln!(
                o,
                "nothing to import from {from}: every tool is already pinned with this descriptor"
            ),
            Outcome::Blocked(n) => writeln!(
                o,
                "nothing imported from {from}: {n} tool{} refused or in conflict (see above); kams.lock is unchanged",
                if *n == 1 { "" } else { "s" }
            ),
        }
    }

    fn json(&self, outcome: &Outcome, o: &mut dyn Write) -> std::io::Result<()> {
        let (result, written) = match outcome {
            Outcome::Done(_, Written::File(p)) => (
                "written",
                Some(JsonWritten {
                    lock: shown_path(p),
                    commit: None,
                }),
            ),
            Outcome::Done(_, Written::Commit(id, rel, _)) => (
                "committed",
                Some(JsonWritten {
                    lock: shown_path(rel),
                    commit: Some(Displayed(*id)),
                }),
            ),
            Outcome::Nothing => ("nothing", None),
            Outcome::Blocked(_) => ("blocked", None),
        };
        let doc = JsonImport {
            version: JSON_VERSION,
            source: self.source.name(),
            file: self.file,
            entries: self
                .rows
                .iter()
                .map(|r| JsonRow {
                    server: &r.tool.server,
                    tool: &r.tool.name,
                    action: r.action(),
                    digest: Displayed(r.digest()),
                    approver_in_file: r.tool.approver.as_deref(),
                    detail: r.detail(),
                })
                .collect(),
            not_carried_over: self.notes,
            result,
            written,
        };
        // An import that pins nothing has no rows to break lines for.
        let layout = Layout::Rows {
            keys: &["entries"],
            empty: EmptyRows::Brackets,
        };
        document::write(&doc, layout, o)
    }
}
