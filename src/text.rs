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
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if is_concealing(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
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
}
