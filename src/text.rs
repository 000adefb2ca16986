//! Which characters a reviewer must never see raw, and how they are shown.
//!
//! A descriptor can hide instructions in characters that render as nothing
//! (zero-width, Unicode tags, variation selectors), that reorder what is
//! shown (bidi controls), or that drive the terminal (ANSI escapes, C0/C1).
//! Every place that prints or stores descriptor text goes through this
//! module, so that the text report shows `\u{200B}` and the lock and JSON
//! outputs carry `\u200b` escapes instead of the characters themselves.

/// True for a character that does not render visibly or that controls the
/// display: C0 and C1 controls (tab, newline and carriage return included,
/// since they break one-line output), DEL, format characters (Cf), line and
/// paragraph separators, bidi controls, and Unicode default-ignorable code
/// points (zero-width, variation selectors, tags, Hangul fillers).
pub fn is_concealing(c: char) -> bool {
    let u = c as u32;
    matches!(u,
        0x00..=0x1F
        | 0x7F..=0x9F
        | 0xAD
        | 0x34F
        | 0x600..=0x605
        | 0x61C
        | 0x6DD
        | 0x70F
        | 0x890..=0x891
        | 0x8E2
        | 0x115F..=0x1160
        | 0x17B4..=0x17B5
        | 0x180B..=0x180F
        | 0x200B..=0x200F
        | 0x2028..=0x202E
        | 0x2060..=0x206F
        | 0x3164
        | 0xFE00..=0xFE0F
        | 0xFEFF
        | 0xFFA0
        | 0xFFF0..=0xFFFB
        | 0x110BD
        | 0x110CD
        | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0000..=0xE0FFF
    ) || is_private_use(u)
        || is_noncharacter(u)
}

fn is_private_use(u: u32) -> bool {
    matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

fn is_noncharacter(u: u32) -> bool {
    (0xFDD0..=0xFDEF).contains(&u) || (u & 0xFFFE) == 0xFFFE
}

/// Text for a terminal or a log: concealing characters become `\u{XXXX}`,
/// and a backslash becomes `\\` so that an escape cannot be forged.
pub fn escape_display(s: &str) -> String {
    // Printable ASCII other than the backslash shows as it is.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if is_concealing(c) {
            push_escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// The text [`escape_display`] was made from: `\\` is a backslash and
/// `\u{XXXX}` the character; `None` for any other backslash, which that
/// function never writes. Characters it would have escaped but that are
/// raw here stay raw: print the result through it again.
pub fn unescape_display(s: &str) -> Option<String> {
    if !s.contains('\\') {
        return Some(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(r) = after.strip_prefix('\\') {
            out.push('\\');
            rest = r;
        } else {
            let r = after.strip_prefix("u{")?;
            let end = r.find('}')?;
            let hex = &r[..end];
            if hex.is_empty() || hex.len() > 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
            rest = &r[end + 1..];
        }
    }
    out.push_str(rest);
    Some(out)
}

/// `\u{XXXX}`: how a concealing character is shown.
fn push_escape(c: char, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "\\u{{{:X}}}", c as u32);
}

/// A whole file for a reader of `git diff`: as it is, line by line, except
/// that concealing characters are shown as by [`escape_display`] and bytes
/// that are not UTF-8 as `\x{XX}`. Tab, line feed and the CR of a CRLF
/// stay as they are: they are the file's layout, and hide nothing (a lone
/// CR does: it lets the rest of the line overwrite what came before).
///
/// Unlike [`escape_display`], a backslash is doubled only where it comes
/// right before an escape or before text that reads like one (`u{`, `x{`):
/// JSON is full of backslashes (`\n`, `\"`, `\u200b`), and doubling them all
/// would make every diff of a description noisy. An odd run of
/// backslashes before `u{` or `x{` therefore always ends in an escape.
pub fn reveal(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 16);
    let mut backslashes = 0usize;
    let flush = |n: &mut usize, double: bool, out: &mut String| {
        let count = if double { *n * 2 } else { *n };
        out.extend(std::iter::repeat_n('\\', count));
        *n = 0;
    };
    for chunk in bytes.utf8_chunks() {
        let mut chars = chunk.valid().chars().peekable();
        while let Some(c) = chars.next() {
            let keep = match c {
                '\\' => {
                    backslashes += 1;
                    continue;
                }
                '\t' | '\n' => true,
                '\r' => chars.peek() == Some(&'\n'),
                c => !is_concealing(c),
            };
            let reads_as_escape = !keep || (matches!(c, 'u' | 'x') && chars.peek() == Some(&'{'));
            flush(&mut backslashes, reads_as_escape, &mut out);
            if keep {
                out.push(c);
            } else {
                push_escape(c, &mut out);
            }
        }
        let invalid = chunk.invalid();
        flush(&mut backslashes, !invalid.is_empty(), &mut out);
        for b in invalid {
            use std::fmt::Write;
            let _ = write!(out, "\\x{{{b:02X}}}");
        }
    }
    flush(&mut backslashes, false, &mut out);
    out
}

/// A path for a message, concealing characters escaped.
pub fn shown_path(path: &std::path::Path) -> String {
    escape_display(&path.display().to_string())
}

/// True when `s` has a character that [`escape_display`] would escape.
pub fn has_concealing(s: &str) -> bool {
    s.chars().any(is_concealing)
}

/// Why `name` cannot name a server, if it cannot: every command addresses
/// a tool as `SERVER/TOOL`, split at the first `/`, so a server name with
/// a `/` in it would make `a/b/c` name two entries (server `a`, tool
/// `b/c`, and server `a/b`, tool `c`). Tool names may hold `/`. A name
/// that is empty or only blanks is refused too: it shows as nothing.
pub fn server_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("a server name must not be empty or blank".to_string());
    }
    if name.contains('/') {
        return Some(format!(
            "server name `{}` contains `/`, which separates a server from its tool in `SERVER/TOOL`: rename the server",
            escape_display(name)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_cannot_be_seen() {
        assert_eq!(
            escape_display("a\u{200B}b\u{202E}c\u{E0041}\x1b[31m\\u{41}"),
            "a\\u{200B}b\\u{202E}c\\u{E0041}\\u{1B}[31m\\\\u{41}"
        );
        assert_eq!(escape_display("café ünïcode 日本"), "café ünïcode 日本");
    }

    #[test]
    fn unescape_display_undoes_escape_display() {
        for s in [
            "",
            "plain",
            "a\u{200B}b\u{202E}c\u{E0041}\x1b[31m\\u{41}",
            "\\\\\u{7}",
            "café 日本 \\",
        ] {
            assert_eq!(unescape_display(&escape_display(s)).as_deref(), Some(s));
        }
        assert_eq!(unescape_display(r"a\u{20}b").as_deref(), Some("a b"));
        for bad in [
            r"\",
            r"\n",
            r"\u{",
            r"\u{}",
            r"\u{D800}",
            r"\u{1234567}",
            r"\x{FF}",
        ] {
            assert_eq!(unescape_display(bad), None, "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn unescape_display_round_trips(s in "\\PC*|[\\\\u{}a\u{200B}\u{1B}]*") {
            proptest::prop_assert_eq!(unescape_display(&escape_display(&s)), Some(s));
        }
    }

    #[test]
    fn reveal_shows_hidden_characters_and_keeps_the_layout() {
        let text = "{\r\n  \"d\": \"a\u{200B}b \\n \\u200b\t\u{202E}\"\n}\n";
        assert_eq!(
            reveal(text.as_bytes()),
            "{\r\n  \"d\": \"a\\u{200B}b \\n \\u200b\t\\u{202E}\"\n}\n"
        );
        assert_eq!(reveal(b"a\rb\x1b[31m"), "a\\u{D}b\\u{1B}[31m");
        assert_eq!(
            reveal(b"\xff\xfeok\xe2\x80"),
            "\\x{FF}\\x{FE}ok\\x{E2}\\x{80}"
        );
        assert_eq!(reveal(b""), "");
        assert_eq!(reveal("日本 é".as_bytes()), "日本 é");
    }

    #[test]
    fn reveal_cannot_be_forged_with_backslashes() {
        // Literal text that reads like an escape gets its backslash doubled...
        assert_eq!(reveal(br"\u{200B} \x{FF} \u{"), r"\\u{200B} \\x{FF} \\u{");
        assert_eq!(reveal(br"\\u{41}"), r"\\\\u{41}");
        // ...and a backslash before a real escape too, so an odd run before
        // `u{` is always an escape.
        assert_eq!(reveal("\\\u{200B}".as_bytes()), r"\\\u{200B}");
        assert_eq!(reveal(b"\\\xff"), r"\\\x{FF}");
        assert_eq!(reveal(br"a\b\\c\"), r"a\b\\c\");
    }
}
