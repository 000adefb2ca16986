//! Where a text holds code: fenced blocks of a programming, query or data
//! language, inline code that is more than one name, and `{...}` groups.
//! An identifier there is a variable, a table, a function or a query
//! operator (`my_db` in `COPY FROM DATABASE memory TO my_db`, `$addFields`,
//! `arg_max()`), not a tool: [`super::identifiers`] takes it for another
//! tool only when the inventory has a tool of that name.

use super::tables::CODE_FENCES;

/// Byte ranges of `c` that are code, sorted, possibly nested.
pub(super) fn code_spans(c: &str) -> Vec<(usize, usize)> {
    let b = c.as_bytes();
    if !b.iter().any(|x| matches!(x, b'`' | b'~' | b'{')) {
        return Vec::new();
    }
    let blocks = fences(c);
    let mut out: Vec<(usize, usize)> = blocks.iter().filter(|f| f.code).map(|f| f.body).collect();
    let outside = |i: usize| !blocks.iter().any(|f| i >= f.whole.0 && i < f.whole.1);
    inline_code(c, &outside, &mut out);
    braces(b, &mut out);
    out.sort_unstable();
    out
}

/// A fenced block: its body, the whole block with its fences, and whether
/// it holds code.
struct Fence {
    body: (usize, usize),
    whole: (usize, usize),
    code: bool,
}

/// Fenced blocks (three or more backticks or tildes opening a line); code
/// when the info string is empty or names a language of `code_fences`: a
/// fence tagged `agent` or `prompt` holds prose.
fn fences(c: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    // (fence character, its run, where the block starts, where its body
    // starts, whether it holds code)
    let mut open: Option<(u8, usize, usize, usize, bool)> = None;
    let mut at = 0;
    for line in c.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let t = line.trim_start();
        let Some(&ch) = t.as_bytes().first().filter(|x| matches!(x, b'`' | b'~')) else {
            continue;
        };
        let run = t.bytes().take_while(|&x| x == ch).count();
        if run < 3 {
            continue;
        }
        match open {
            Some((och, orun, from, body, code))
                if och == ch && run >= orun && t[run..].trim().is_empty() =>
            {
                out.push(Fence {
                    body: (body, start),
                    whole: (from, at),
                    code,
                });
                open = None;
            }
            Some(_) => {}
            None => {
                let info = t[run..].split_whitespace().next().unwrap_or("");
                let lang = info.trim_start_matches(['{', '.']).to_ascii_lowercase();
                let code = lang.is_empty() || CODE_FENCES.contains(&lang);
                open = Some((ch, run, start, at, code));
            }
        }
    }
    if let Some((_, _, from, body, code)) = open {
        out.push(Fence {
            body: (body, c.len()),
            whole: (from, c.len()),
            code,
        });
    }
    out
}

/// Inline code spans (`` `...` ``, ``` ``...`` ```) that hold more than one
/// name: `` `fs_read_v2` `` or `` `audit_sink.post` `` may name a tool,
/// `` `s.info("lsp")` `` or `` `$rankFusion` `` is code.
fn inline_code(c: &str, outside: &dyn Fn(usize) -> bool, out: &mut Vec<(usize, usize)>) {
    let b = c.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'`' || !outside(i) {
            i += 1;
            continue;
        }
        let run = b[i..].iter().take_while(|&&x| x == b'`').count();
        let body = i + run;
        let mut j = body;
        let mut close = None;
        while j < b.len() {
            if b[j] == b'`' {
                let r = b[j..].iter().take_while(|&&x| x == b'`').count();
                if r == run {
                    close = Some(j);
                    break;
                }
                j += r;
                continue;
            }
            if b[j] == b'\n' && b.get(j + 1) == Some(&b'\n') {
                break;
            }
            j += 1;
        }
        let Some(end) = close else {
            i = body;
            continue;
        };
        let inner = c[body..end].trim();
        let one_name = inner
            .bytes()
            .all(|x| x.is_ascii_alphanumeric() || matches!(x, b'_' | b'-' | b'.' | b'/'));
        if !one_name {
            out.push((body, end));
        }
        i = end + run;
    }
}

/// Balanced `{...}` groups: object literals, query documents, templates.
fn braces(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut stack = Vec::new();
    for (i, &x) in b.iter().enumerate() {
        match x {
            b'{' => stack.push(i),
            b'}' => {
                if let Some(s) = stack.pop() {
                    if stack.is_empty() {
                        out.push((s, i + 1));
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(c: &str) -> Vec<&str> {
        code_spans(c).iter().map(|&(s, e)| &c[s..e]).collect()
    }

    #[test]
    fn fences_of_a_language_inline_expressions_and_braces_are_code() {
        let c = "Persist it:\n```sql\nCOPY FROM DATABASE memory TO my_db;\n```\nDone.";
        assert_eq!(code(c), ["COPY FROM DATABASE memory TO my_db;\n"]);
        let c = "```agent\nbefore calling: read the file\n```";
        assert!(code(c).is_empty(), "a fence tagged agent holds prose");
        assert_eq!(code("Use `arg_max()` or `fs_read_v2`."), ["arg_max()"]);
        assert_eq!(code("Use `$rankFusion` here."), ["$rankFusion"]);
        assert_eq!(
            code("e.g. `{ name: 'x' }` and { $addFields: { a: 1 } }"),
            ["{ name: 'x' }", "{ name: 'x' }", "{ $addFields: { a: 1 } }"]
        );
        assert!(code("Plain text, no code.").is_empty());
    }
}
