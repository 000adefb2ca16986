//! Shapes an instruction takes in markup rather than in words: tags that
//! open an instruction block, markdown headers, and whitespace that pushes
//! what follows out of view.

use super::names::ident_words;
use super::reading::Reading;
use super::signal::{shown, Signal};
use super::tables::TAG_WORDS;

/// `<IMPORTANT>`, `</system>`, `[INST]`, `<<SYS>>`, `<|im_start|>`; not
/// a type's parameter written right after its name
/// (`ListResponseModel[OverrideShift]`, `Page<SystemEvent>`).
pub(super) fn tags(c: &str, r: &mut Reading) {
    if !c.bytes().any(|x| x == b'<' || x == b'[') {
        return;
    }
    for (i, open) in c.match_indices(['<', '[']) {
        let rest = &c[i + 1..];
        if open == "<" && rest.starts_with('|') {
            if let Some(end) = rest[1..].find("|>").filter(|&e| e > 0 && e <= 40) {
                let inner = &rest[1..1 + end];
                if inner
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | ' ' | '-'))
                {
                    r.hit(Signal::InstructionBlock, shown(&c[i..i + end + 4]));
                }
            }
            continue;
        }
        if c[..i]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
        {
            continue;
        }
        let close = if open == "<" { '>' } else { ']' };
        let body = rest.trim_start_matches(['/', '!']);
        let name_len = body
            .char_indices()
            .find(|&(_, ch)| !(ch.is_alphanumeric() || matches!(ch, '_' | '-' | ' ')))
            .map_or(body.len(), |(k, _)| k);
        if name_len == 0 || name_len > 40 || !body[name_len..].starts_with(close) {
            continue;
        }
        let name = &body[..name_len];
        if ident_words(name).iter().any(|w| TAG_WORDS.contains(w)) {
            let end = i + 1 + (rest.len() - body.len()) + name_len + 1;
            r.hit(Signal::InstructionBlock, shown(&c[i..end]));
        }
    }
}

/// `### Instruction`, `## System` at the start of a line.
pub(super) fn headers(c: &str, r: &mut Reading) {
    for line in c.lines() {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start_matches('#');
        if !rest.starts_with(' ') {
            continue;
        }
        let first = rest
            .split(|ch: char| !ch.is_alphanumeric())
            .find(|w| !w.is_empty())
            .unwrap_or("")
            .to_lowercase();
        if matches!(
            first.as_str(),
            "instruction" | "instructions" | "system" | "important" | "hidden" | "assistant"
        ) {
            r.hit(Signal::InstructionHeader, shown(l));
        }
    }
}

/// Runs of whitespace long enough to push what follows out of view.
pub(super) fn padding(c: &str, r: &mut Reading) {
    if c.is_ascii() {
        // Most texts have no whitespace run of 8 bytes, so nothing to find.
        let mut run = 0;
        let long = c.bytes().any(|x| {
            run = if x.is_ascii_whitespace() { run + 1 } else { 0 };
            run >= 8
        });
        if !long {
            return;
        }
    }
    let mut run_h = 0usize;
    let mut max_h = 0usize;
    let mut lines = 0usize;
    let mut in_run = false;
    for (i, ch) in c.char_indices() {
        if ch.is_whitespace() {
            in_run = true;
            if ch == '\n' {
                lines += 1;
                run_h = 0;
            } else if ch != '\r' {
                run_h += 1;
                max_h = max_h.max(run_h);
            }
            continue;
        }
        if in_run && (max_h >= 30 || lines >= 8) {
            r.hit(
                Signal::WhitespacePadding,
                format!(
                    "{max_h} spaces in a row and {lines} line break(s), then: {}",
                    shown(&c[i..])
                ),
            );
        }
        in_run = false;
        run_h = 0;
        max_h = 0;
        lines = 0;
    }
}
