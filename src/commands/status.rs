//! `git kams status`: each entry's state, its locked and advertised
//! digests, and whether they still match.

use std::io::Write;

use anyhow::Result;

use super::{emit, Env, PlainFormat, Selection, Status};
use crate::cli::SelectArgs;
use crate::compare::{pairs, Pair};
use crate::report::json_str;
use crate::text::escape_display;

fn word(p: &Pair<'_>) -> &'static str {
    match (p.entry, p.seen) {
        (Some(e), Some(s)) if e.descriptor.digest == s.digest => "ok",
        (Some(_), Some(_)) => "drifted",
        (Some(_), None) => "removed",
        (None, Some(_)) => "new",
        (None, None) => "absent",
    }
}

/// Runs `status`, the last thing the process does.
pub fn run(
    env: &Env,
    args: &SelectArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    let format = env.plain_format("status")?;
    let (inventory, lock, _) = env.inventory_and_lock(args, None, false, err)?;
    let all = pairs(&inventory, &lock);
    let selection = Selection::new(&args.keys);
    selection.check(&all)?;
    let rows: Vec<&Pair<'_>> = all
        .iter()
        .filter(|p| selection.matches(p.server, p.tool))
        .filter(|p| p.entry.is_some() || p.seen.is_some())
        .collect();
    emit(out, |o| match format {
        PlainFormat::Text => {
            writeln!(
                o,
                "{:<12} {:<8} {:<12} {:<12} ENTRY",
                "STATE", "STATUS", "LOCKED", "SEEN"
            )?;
            // One buffer for every line: a formatter call per column cost
            // more than the rest of a 2,000-entry status.
            let mut line = String::with_capacity(128);
            for p in &rows {
                line.clear();
                let column = |line: &mut String, text: &str, width: usize| {
                    line.push_str(text);
                    let pad = width.saturating_sub(text.chars().count()) + 1;
                    line.extend(std::iter::repeat_n(' ', pad));
                };
                column(&mut line, p.entry.map_or("-", |e| e.state.as_str()), 12);
                column(&mut line, word(p), 8);
                let locked = p.entry.map_or("-".into(), |e| e.descriptor.digest.short());
                column(&mut line, &locked, 12);
                let seen = p.seen.map_or("-".into(), |d| d.digest.short());
                column(&mut line, &seen, 12);
                line.push_str(&escape_display(p.server));
                if let Some(t) = p.tool {
                    line.push('/');
                    line.push_str(&escape_display(t));
                }
                line.push('\n');
                o.write_all(line.as_bytes())?;
            }
            Ok(())
        }
        PlainFormat::Json => {
            writeln!(o, "{{\n  \"version\": 1,\n  \"entries\": [")?;
            for (i, p) in rows.iter().enumerate() {
                let digest = |d: Option<String>| d.map_or("null".to_string(), |d| json_str(&d));
                let fields = |d: Option<&crate::descriptor::Descriptor>| {
                    d.map_or("null".to_string(), |d| {
                        let parts: Vec<String> = d
                            .field_digests
                            .iter()
                            .map(|(k, v)| format!("{}: {}", json_str(k), json_str(&v.to_string())))
                            .collect();
                        format!("{{{}}}", parts.join(", "))
                    })
                };
                write!(
                    o,
                    "    {{\"server\": {}, \"tool\": {}, \"state\": {}, \"status\": {}, \"locked\": {{\"digest\": {}, \"fields\": {}}}, \"seen\": {{\"digest\": {}, \"fields\": {}}}}}",
                    json_str(p.server),
                    p.tool.map_or("null".into(), json_str),
                    p.entry.map_or("null".into(), |e| json_str(e.state.as_str())),
                    json_str(word(p)),
                    digest(p.entry.map(|e| e.descriptor.digest.to_string())),
                    fields(p.entry.map(|e| &e.descriptor)),
                    digest(p.seen.map(|d| d.digest.to_string())),
                    fields(p.seen),
                )?;
                writeln!(o, "{}", if i + 1 < rows.len() { "," } else { "" })?;
            }
            writeln!(o, "  ]\n}}")
        }
    })?;
    // The last thing the process does: the system takes the entries back
    // at exit faster than the allocator one by one (see `scan::run`).
    drop(rows);
    drop(all);
    std::mem::forget((inventory, lock));
    Ok(0)
}
