//! Characters a person reviewing a descriptor cannot see, but a model reads:
//! zero-width characters, bidi controls, Unicode tag characters (ASCII
//! smuggling), variation selectors and other default-ignorable code points,
//! ANSI escape sequences and C0/C1 controls.
//!
//! A reviewer approves what is rendered, so any of these in a descriptor
//! splits what the person saw from what the model reads. Unicode gives some
//! of them ordinary uses (a joiner inside an emoji sequence or a Persian
//! word, a variation selector after a warning sign, tags that spell a
//! subdivision flag, a right-to-left mark in Hebrew text); those are judged
//! by their neighbours and left alone. Everything else is one finding per
//! string (value or key) naming each character, where it sits, and what a
//! tag run or a binary run of zero-width characters decodes to.

mod evidence;

use super::text::strings;
use super::{Context, Detector, ServerView, ToolView};
use crate::finding::{Class, Finding, Severity};
use crate::json::{Members, Tree};
use crate::text::is_concealing;

use evidence::{render, Report};

/// Reports hidden characters in every string and key of every tool and
/// server descriptor.
pub struct Hidden;

impl Detector for Hidden {
    fn name(&self) -> &'static str {
        "hidden"
    }

    fn depends(&self, level: super::Level) -> super::Depends {
        match level {
            super::Level::Server | super::Level::Tool => super::Depends::Inventory,
            super::Level::Inventory => super::Depends::Nothing,
        }
    }

    fn tool(&self, _cx: &Context<'_>, t: &ToolView<'_>, out: &mut Vec<Finding>) {
        // Most descriptors are clean: look before building every string's
        // pointer.
        if !any_string(t.raw) {
            return;
        }
        for s in strings(t.raw, "") {
            if let Some(r) = inspect(s.text) {
                out.push(r.finding(t.server, Some(t.tool), &s));
            }
        }
    }

    fn server(&self, _cx: &Context<'_>, s: &ServerView<'_>, out: &mut Vec<Finding>) {
        // The name too: clients show it to the model in every tool's name
        // (`mcp__<server>__<tool>`), and to the user when they approve.
        if let Some(r) = inspect(s.server) {
            out.push(Finding {
                class: Class::Hidden,
                severity: Severity::High,
                server: s.server.to_string(),
                tool: None,
                field: None,
                message: format!("hidden characters in the server name: {}", r.message),
                evidence: r.evidence,
            });
        }
        let fields = Tree::Object(Members::of(s.fields));
        if !any_string(&fields) {
            return;
        }
        for text in strings(&fields, "") {
            if let Some(r) = inspect(text.text) {
                out.push(r.finding(s.server, None, &text));
            }
        }
    }
}

/// True when a string or key anywhere in `v` may hold a hidden character.
fn any_string(v: &Tree<'_>) -> bool {
    match v {
        Tree::String(s) => may_hide(s),
        Tree::Array(a) => a.iter().any(any_string),
        Tree::Object(o) => o.iter().any(|(k, x)| may_hide(k) || any_string(x)),
        _ => false,
    }
}

/// False for text that cannot hold a hidden character: printable ASCII,
/// tabs and line breaks (checked byte-wise, the common case).
fn may_hide(s: &str) -> bool {
    let odd = |b: &u8| *b >= 0x7F || (*b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'));
    // Eight bytes at a time: every string of every tool comes here. A word
    // with a byte of 0x7F or more, or under 0x20 (a tab or a line break
    // too), is looked at byte by byte.
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = s.as_bytes().chunks_exact(8);
    for w in words.by_ref() {
        let x = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        let del = x ^ (0x7F * ONES);
        let flagged =
            (x | (x.wrapping_sub(0x20 * ONES) & !x) | (del.wrapping_sub(ONES) & !del)) & HIGH;
        if flagged != 0 && w.iter().any(odd) {
            return true;
        }
    }
    words.remainder().iter().any(odd)
}

/// What kind of hidden character; the order is the order of the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Tag,
    ZeroWidth,
    Bidi,
    Selector,
    Ansi,
    Control,
    Separator,
    Ignorable,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Tag => "tag characters",
            Kind::ZeroWidth => "zero-width",
            Kind::Bidi => "bidi controls",
            Kind::Selector => "variation selectors",
            Kind::Ansi => "ANSI escape sequences",
            Kind::Control => "control characters",
            Kind::Separator => "line/paragraph separators",
            Kind::Ignorable => "other invisible (default-ignorable or format) characters",
        }
    }
}

/// One hidden character, or one whole ANSI escape sequence.
#[derive(Clone, Debug)]
struct Hit {
    /// Offset in code points from the start of the string.
    at: usize,
    /// Length in code points (more than one only for escape sequences).
    len: usize,
    /// The (first) character.
    c: char,
    kind: Kind,
    /// For escape sequences: what the sequence does.
    what: &'static str,
}

/// The hidden characters of `s`, or `None` when it has none (or only
/// ordinary uses of otherwise invisible characters).
fn inspect(s: &str) -> Option<Report> {
    // Fast path: the overwhelming majority of descriptor text is clean.
    if !may_hide(s)
        || !s
            .chars()
            .any(|c| is_concealing(c) && !matches!(c, '\t' | '\n' | '\r'))
    {
        return None;
    }
    let chars: Vec<char> = s.chars().collect();
    let hits = scan(&chars);
    if hits.is_empty() {
        return None;
    }
    let mut report = render(&chars, &hits);
    report.stray = stray(&chars, &hits);
    Some(report)
}

/// Zero-width spaces left next to a space, as text pasted from a web page
/// or a document editor carries them: a run of at most three U+200B that
/// touches whitespace splits no word, spells nothing (one symbol carries no
/// bits) and changes nothing a model reads. Still reported, at medium.
fn stray(chars: &[char], hits: &[Hit]) -> bool {
    if !hits.iter().all(|h| h.c == '\u{200B}') {
        return false;
    }
    let mut i = 0;
    while i < hits.len() {
        let mut j = i;
        while j + 1 < hits.len() && hits[j + 1].at == hits[j].at + 1 {
            j += 1;
        }
        let (first, last) = (hits[i].at, hits[j].at);
        let space = |k: Option<usize>| {
            k.and_then(|k| chars.get(k))
                .is_some_and(|c| c.is_whitespace())
        };
        if j - i >= 3 || !(space(first.checked_sub(1)) || space(Some(last + 1))) {
            return false;
        }
        i = j + 1;
    }
    true
}

/// Every hidden character of `chars`, judged in context.
fn scan(chars: &[char]) -> Vec<Hit> {
    let rtl = chars.iter().any(|&c| is_rtl(c));
    let mut hits = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let u = c as u32;
        let kind = match u {
            0x09 | 0x0A | 0x0D => None,
            0x1B | 0x9B => {
                let (len, what) = escape(&chars[i..]);
                hits.push(Hit {
                    at: i,
                    len,
                    c,
                    kind: Kind::Ansi,
                    what,
                });
                i += len;
                continue;
            }
            0x00..=0x1F | 0x7F..=0x9F => Some(Kind::Control),
            0xE0000..=0xE007F => {
                let end = run_end(chars, i, |c| (0xE0000..=0xE007F).contains(&(c as u32)));
                if !is_flag_tag_sequence(chars, i, end) {
                    for (j, &t) in chars.iter().enumerate().take(end).skip(i) {
                        hits.push(Hit {
                            at: j,
                            len: 1,
                            c: t,
                            kind: Kind::Tag,
                            what: "",
                        });
                    }
                }
                i = end;
                continue;
            }
            0x200B..=0x200D | 0x2060 | 0xFEFF | 0x180E => {
                (!joiner_in_context(chars, i)).then_some(Kind::ZeroWidth)
            }
            0x202A..=0x202E | 0x2066..=0x2069 => Some(Kind::Bidi),
            0x200E | 0x200F | 0x061C => (!rtl).then_some(Kind::Bidi),
            _ if is_selector(c) => (!selector_in_context(chars, i)).then_some(Kind::Selector),
            0x2028 | 0x2029 => Some(Kind::Separator),
            _ if is_private_use(u) => None,
            _ if is_concealing(c) => (!format_in_context(chars, i)).then_some(Kind::Ignorable),
            _ => None,
        };
        if let Some(kind) = kind {
            hits.push(Hit {
                at: i,
                len: 1,
                c,
                kind,
                what: "",
            });
        }
        i += 1;
    }
    hits
}

/// Index one past the run of characters matching `f` that starts at `i`.
fn run_end(chars: &[char], i: usize, f: impl Fn(char) -> bool) -> usize {
    i + chars[i..].iter().take_while(|&&c| f(c)).count()
}

/// Tags after U+1F3F4 WAVING BLACK FLAG spelling a subdivision code and
/// closed by CANCEL TAG are an emoji flag (England, Scotland, Wales...).
fn is_flag_tag_sequence(chars: &[char], start: usize, end: usize) -> bool {
    let body = &chars[start..end];
    start > 0
        && chars[start - 1] == '\u{1F3F4}'
        && (3..=8).contains(&body.len())
        && body.last() == Some(&'\u{E007F}')
        && body[..body.len() - 1]
            .iter()
            .all(|&c| matches!(c as u32, 0xE0030..=0xE0039 | 0xE0061..=0xE007A))
}

/// ZWJ inside an emoji sequence, or ZWJ/ZWNJ between letters of a script
/// that shapes with them (Arabic, Indic, Mongolian...), is ordinary text.
fn joiner_in_context(chars: &[char], i: usize) -> bool {
    let (Some(&prev), Some(&next)) = (
        i.checked_sub(1).and_then(|p| chars.get(p)),
        chars.get(i + 1),
    ) else {
        return false;
    };
    match chars[i] {
        '\u{200D}' if is_emoji(next) => {
            is_emoji(prev) || (prev == '\u{FE0F}' && i >= 2 && is_emoji(chars[i - 2]))
        }
        '\u{200C}' | '\u{200D}' => is_joining_script(prev) && is_joining_script(next),
        _ => false,
    }
}

fn is_selector(c: char) -> bool {
    matches!(c as u32, 0xFE00..=0xFE0F | 0xE0100..=0xE01EF | 0x180B..=0x180D | 0x180F)
}

/// One variation selector after a character that has variations of that
/// kind is ordinary; a run of selectors, or one after a character that
/// takes none, carries something else.
fn selector_in_context(chars: &[char], i: usize) -> bool {
    let in_run =
        (i > 0 && is_selector(chars[i - 1])) || chars.get(i + 1).is_some_and(|&c| is_selector(c));
    let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) else {
        return false;
    };
    if in_run {
        return false;
    }
    let p = prev as u32;
    match chars[i] as u32 {
        // Text or emoji presentation: emoji, and keycaps (`1` VS16 U+20E3).
        0xFE0E | 0xFE0F => {
            is_emoji(prev)
                || (matches!(prev, '0'..='9' | '#' | '*') && chars.get(i + 1) == Some(&'\u{20E3}'))
        }
        // StandardizedVariants.txt: mathematical symbols, CJK ideographs,
        // Myanmar, Phags-pa, Manichaean, Egyptian hieroglyphs, slashed zero.
        0xFE00..=0xFE0D => {
            prev == '0'
                || matches!(p, 0x2190..=0x22FF | 0x27C0..=0x27FF | 0x2A00..=0x2AFF)
                || is_cjk_ideograph(p)
                || matches!(
                    p,
                    0x1000..=0x109F | 0xA840..=0xA877 | 0x10AC0..=0x10AFF | 0x13000..=0x1345F
                )
        }
        // Ideographic variation sequences.
        0xE0100..=0xE01EF => is_cjk_ideograph(p),
        // Mongolian free variation selectors.
        _ => (0x1820..=0x18AA).contains(&p),
    }
}

/// Default-ignorable and format characters with an ordinary use where
/// they stand.
fn format_in_context(chars: &[char], i: usize) -> bool {
    let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
    let next = chars.get(i + 1).copied();
    let u = chars[i] as u32;
    match u {
        // A soft hyphen is a hyphenation point inside a word.
        0xAD => prev.is_some_and(char::is_alphabetic) && next.is_some_and(char::is_alphabetic),
        // Prepended concatenation marks render visibly over the digits
        // that follow (Arabic number sign, Syriac abbreviation mark...).
        0x600..=0x605 | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x110BD | 0x110CD => {
            next.is_some_and(char::is_numeric)
        }
        // Egyptian hieroglyph format controls between hieroglyphs.
        0x13430..=0x1343F => prev.is_some_and(|c| (0x13000..=0x1345F).contains(&(c as u32))),
        // Hangul choseong/jungseong fillers inside a conjoining jamo syllable.
        0x115F | 0x1160 => {
            let jamo = |c: Option<char>| {
                c.is_some_and(|c| matches!(c as u32, 0x1100..=0x115E | 0x1161..=0x11FF))
            };
            jamo(prev) || jamo(next)
        }
        _ => false,
    }
}

/// Characters with the Emoji property outside ASCII, by block (from
/// emoji-data.txt); the emoji variation and ZWJ sequences are built on them.
fn is_emoji(c: char) -> bool {
    matches!(c as u32,
        0xA9 | 0xAE | 0x203C | 0x2049 | 0x2122 | 0x2139
        | 0x2194..=0x2199 | 0x21A9..=0x21AA | 0x231A..=0x231B | 0x2328 | 0x23CF
        | 0x23E9..=0x23F3 | 0x23F8..=0x23FA | 0x24C2 | 0x25AA..=0x25AB | 0x25B6
        | 0x25C0 | 0x25FB..=0x25FE | 0x2600..=0x27BF | 0x2934..=0x2935
        | 0x2B05..=0x2B07 | 0x2B1B..=0x2B1C | 0x2B50 | 0x2B55 | 0x3030 | 0x303D
        | 0x3297 | 0x3299 | 0x1F000..=0x1FAFF)
}

fn is_cjk_ideograph(u: u32) -> bool {
    matches!(u, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x323AF)
}

/// Scripts whose shaping uses ZWJ and ZWNJ: Arabic, Syriac, Thaana, N'Ko,
/// the Indic scripts, Tibetan, Myanmar, Khmer, Mongolian.
fn is_joining_script(c: char) -> bool {
    matches!(c as u32,
        0x0600..=0x07FF | 0x0860..=0x08FF | 0x0900..=0x0DFF | 0x0F00..=0x0FFF
        | 0x1000..=0x109F | 0x1780..=0x18AF | 0xA8E0..=0xA8FF | 0xFB50..=0xFDFF
        | 0xFE70..=0xFEFE)
}

/// Strong right-to-left letters (Hebrew, Arabic, Syriac, Thaana, N'Ko...):
/// where they appear, directional marks are ordinary typography.
fn is_rtl(c: char) -> bool {
    matches!(c as u32,
        0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFE | 0x10800..=0x10FFF
        | 0x1E800..=0x1EFFF)
}

fn is_private_use(u: u32) -> bool {
    matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

/// The length (in chars) of the escape sequence at the start of `s`, and
/// what it does.
fn escape(s: &[char]) -> (usize, &'static str) {
    // C1 CSI (U+009B) is ESC [ in one character.
    let (body, skip) = if s[0] == '\u{9B}' {
        (Some('['), 1)
    } else {
        (s.get(1).copied(), 2)
    };
    match body {
        Some('[') => {
            let mut j = skip;
            while j < s.len() && ('\x30'..='\x3F').contains(&s[j]) {
                j += 1;
            }
            while j < s.len() && ('\x20'..='\x2F').contains(&s[j]) {
                j += 1;
            }
            match s.get(j) {
                Some(&f) if ('\x40'..='\x7E').contains(&f) => (j + 1, csi_kind(f, &s[skip..j])),
                _ => (j, "CSI (unterminated)"),
            }
        }
        Some(k @ (']' | 'P' | 'X' | '^' | '_')) => {
            // A string sequence, up to BEL or ST (ESC \ or U+009C).
            let mut j = 2;
            let len = loop {
                match s.get(j) {
                    None => break j,
                    Some('\x07') | Some('\u{9C}') => break j + 1,
                    Some('\x1B') if s.get(j + 1) == Some(&'\\') => break j + 2,
                    _ => j += 1,
                }
            };
            let what = match k {
                ']' => osc_kind(&s[2..len.min(s.len())]),
                'P' => "DCS (device control string)",
                _ => "SOS/PM/APC string (hidden by terminals)",
            };
            (len, what)
        }
        Some(c) if ('\x20'..='\x2F').contains(&c) => {
            // nF escape (character set selection...): intermediates, final.
            let mut j = 2;
            while j < s.len() && ('\x20'..='\x2F').contains(&s[j]) {
                j += 1;
            }
            let len = if j < s.len() { j + 1 } else { j };
            (len, "character set or mode escape")
        }
        Some('7') | Some('8') => (2, "cursor save/restore"),
        Some('c') => (2, "terminal reset"),
        Some(c) if ('\x30'..='\x7E').contains(&c) => (2, "escape"),
        _ => (1, "lone ESC"),
    }
}

fn csi_kind(final_byte: char, params: &[char]) -> &'static str {
    match final_byte {
        'm' => "CSI SGR (colour/style)",
        'A'..='G' | 'H' | 'f' | 'd' | 'a' | 'e' | '`' => "CSI cursor movement",
        'J' => "CSI erase display",
        'K' => "CSI erase line",
        'S' | 'T' => "CSI scroll",
        'h' | 'l' if params.first() == Some(&'?') => "CSI private mode (cursor/screen)",
        'h' | 'l' => "CSI mode set/reset",
        's' | 'u' => "CSI cursor save/restore",
        'n' => "CSI device status report",
        't' => "CSI window manipulation",
        _ => "CSI (other)",
    }
}

fn osc_kind(body: &[char]) -> &'static str {
    let num: String = body.iter().take_while(|c| c.is_ascii_digit()).collect();
    match num.as_str() {
        "8" => "OSC 8 (hyperlink)",
        "0" | "1" | "2" => "OSC (window title)",
        "52" => "OSC 52 (clipboard write)",
        _ => "OSC (operating system command)",
    }
}

/// `U+XXXX NAME` for the characters this detector reports.
fn describe(c: char) -> String {
    let u = c as u32;
    let name: Option<String> = match u {
        0x00..=0x1F => Some(format!("{} (control)", C0[u as usize])),
        0x7F => Some("DELETE".into()),
        0x85 => Some("NEXT LINE (control)".into()),
        0x9B => Some("CONTROL SEQUENCE INTRODUCER".into()),
        0x80..=0x9F => Some("C1 control".into()),
        0xAD => Some("SOFT HYPHEN".into()),
        0x34F => Some("COMBINING GRAPHEME JOINER".into()),
        0x61C => Some("ARABIC LETTER MARK".into()),
        0x115F => Some("HANGUL CHOSEONG FILLER".into()),
        0x1160 => Some("HANGUL JUNGSEONG FILLER".into()),
        0x180E => Some("MONGOLIAN VOWEL SEPARATOR".into()),
        0x180B..=0x180D | 0x180F => Some("MONGOLIAN FREE VARIATION SELECTOR".into()),
        0x200B => Some("ZERO WIDTH SPACE".into()),
        0x200C => Some("ZERO WIDTH NON-JOINER".into()),
        0x200D => Some("ZERO WIDTH JOINER".into()),
        0x200E => Some("LEFT-TO-RIGHT MARK".into()),
        0x200F => Some("RIGHT-TO-LEFT MARK".into()),
        0x2028 => Some("LINE SEPARATOR".into()),
        0x2029 => Some("PARAGRAPH SEPARATOR".into()),
        0x202A => Some("LEFT-TO-RIGHT EMBEDDING".into()),
        0x202B => Some("RIGHT-TO-LEFT EMBEDDING".into()),
        0x202C => Some("POP DIRECTIONAL FORMATTING".into()),
        0x202D => Some("LEFT-TO-RIGHT OVERRIDE".into()),
        0x202E => Some("RIGHT-TO-LEFT OVERRIDE".into()),
        0x2060 => Some("WORD JOINER".into()),
        0x2061 => Some("FUNCTION APPLICATION".into()),
        0x2062 => Some("INVISIBLE TIMES".into()),
        0x2063 => Some("INVISIBLE SEPARATOR".into()),
        0x2064 => Some("INVISIBLE PLUS".into()),
        0x2066 => Some("LEFT-TO-RIGHT ISOLATE".into()),
        0x2067 => Some("RIGHT-TO-LEFT ISOLATE".into()),
        0x2068 => Some("FIRST STRONG ISOLATE".into()),
        0x2069 => Some("POP DIRECTIONAL ISOLATE".into()),
        0x3164 => Some("HANGUL FILLER".into()),
        0xFE00..=0xFE0F => Some(format!("VARIATION SELECTOR-{}", u - 0xFE00 + 1)),
        0xFEFF => Some("ZERO WIDTH NO-BREAK SPACE".into()),
        0xFFA0 => Some("HALFWIDTH HANGUL FILLER".into()),
        0xE0001 => Some("LANGUAGE TAG".into()),
        0xE007F => Some("CANCEL TAG".into()),
        0xE0020..=0xE007E => Some(format!("TAG {}", tag_ascii(c).unwrap_or('?'))),
        0xE0100..=0xE01EF => Some(format!("VARIATION SELECTOR-{}", u - 0xE0100 + 17)),
        _ => None,
    };
    match name {
        Some(n) => format!("U+{u:04X} {n}"),
        None => format!("U+{u:04X}"),
    }
}

const C0: [&str; 32] = [
    "NUL",
    "SOH",
    "STX",
    "ETX",
    "EOT",
    "ENQ",
    "ACK",
    "BEL",
    "BACKSPACE",
    "TAB",
    "LF",
    "VT",
    "FORM FEED",
    "CR",
    "SO",
    "SI",
    "DLE",
    "DC1",
    "DC2",
    "DC3",
    "DC4",
    "NAK",
    "SYN",
    "ETB",
    "CAN",
    "EM",
    "SUB",
    "ESC",
    "FS",
    "GS",
    "RS",
    "US",
];

/// The ASCII character a tag character mirrors (U+E0020..U+E007E).
fn tag_ascii(c: char) -> Option<char> {
    let u = c as u32;
    (0xE0020..=0xE007E)
        .contains(&u)
        .then(|| char::from_u32(u - 0xE0000))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Inventory;
    use crate::json::{parse, parse_tree, Value};
    use crate::lock::Lock;

    #[test]
    fn may_hide_reads_every_byte_of_a_word() {
        // Each character at each place of the first, second and last word.
        for ch in (0u8..0x80)
            .map(char::from)
            .chain(['\u{a0}', '\u{200b}', 'é'])
        {
            let odd = ch == '\u{7f}' || !ch.is_ascii() || (ch < ' ' && !"\t\n\r".contains(ch));
            for at in 0..20 {
                let mut s = "a".repeat(20);
                s.replace_range(at..at + 1, &ch.to_string());
                assert_eq!(may_hide(&s), odd, "{ch:?} at {at}");
            }
        }
    }

    fn check(s: &str) -> Option<Report> {
        inspect(s)
    }

    pub(super) fn evidence(s: &str) -> String {
        let r = check(s).unwrap_or_else(|| panic!("expected a finding in {s:?}"));
        format!("{}\n{}", r.message, r.evidence.join("\n"))
    }

    #[test]
    fn zero_width_spaces_next_to_a_space_are_stray_and_others_are_not() {
        // lark-mcp 0.5.1: "How \u{200B}\u{200B}to obtain thread_id".
        for s in [
            "How \u{200B}\u{200B}to obtain",
            "Done.\u{200B} Next",
            "end \u{200B}",
        ] {
            assert!(check(s).is_some_and(|r| r.stray), "{s:?}");
        }
        for s in [
            // Inside a word: splits it for a filter.
            "pass\u{200B}word",
            // Two symbols: bits.
            "a \u{200B}\u{200C}\u{200B} b",
            // A run of four carries something.
            "a \u{200B}\u{200B}\u{200B}\u{200B}b",
            // Next to a space on one side, but another character elsewhere.
            "a \u{200B}b\u{2060}c",
        ] {
            assert!(check(s).is_some_and(|r| !r.stray), "{s:?}");
        }
    }

    #[test]
    fn plain_text_and_ordinary_whitespace_are_clean() {
        for s in [
            "Read a file.\n\tLine two.\r\n",
            "café ünïcode 日本語 — “quotes”",
            "",
        ] {
            assert!(check(s).is_none(), "{s:?}");
        }
    }

    #[test]
    fn subdivision_flags_are_ordinary_but_other_tags_after_a_flag_are_not() {
        // England: U+1F3F4, tags g b e n g, CANCEL TAG.
        let england = "Made in 🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}.";
        assert!(check(england).is_none());
        let smuggled = "🏴\u{E0049}\u{E0020}\u{E0061}\u{E006D}\u{E007F}";
        assert!(evidence(smuggled).contains("I am"));
    }

    #[test]
    fn joiners_in_emoji_and_shaping_scripts_are_ordinary() {
        for s in [
            "Family: 👨\u{200D}👩\u{200D}👧",
            "Rainbow flag 🏳\u{FE0F}\u{200D}🌈",
            "Persian: می\u{200C}خواهم",
            "Hindi: क्\u{200D}ष",
        ] {
            assert!(check(s).is_none(), "{s:?}");
        }
        assert!(evidence("pass\u{200D}word").contains("U+200D ZERO WIDTH JOINER"));
        assert!(evidence("👨\u{200D}\u{200D}👩").contains("2 zero-width"));
        assert!(evidence("\u{180E}").contains("MONGOLIAN VOWEL SEPARATOR"));
    }

    #[test]
    fn variation_selectors_are_judged_by_what_they_follow() {
        for s in [
            "⚠\u{FE0F} Destructive.",
            "Text style ☺\u{FE0E}",
            "Press 1\u{FE0F}\u{20E3}",
            "Ideograph 葛\u{E0101}",
            "Math ≩\u{FE00}",
        ] {
            assert!(check(s).is_none(), "{s:?}");
        }
        assert!(evidence("a\u{FE0F}").contains("U+FE0F VARIATION SELECTOR-16 ×1"));
        assert!(evidence("⚠\u{FE0F}\u{FE0F}").contains("2 variation selectors"));
        assert!(evidence("x\u{E0100}").contains("VARIATION SELECTOR-17"));
        assert!(evidence("1\u{FE0F}").contains("variation selectors"));
    }

    #[test]
    fn names_ansi_escape_kinds() {
        let e = evidence("\n  Echo.\n  \u{1b}[31mred\u{1b}[0m \u{1b}[1mbold\u{1b}[0m\n");
        assert!(e.starts_with("4 ANSI escape sequences"), "{e}");
        assert!(e.contains("CSI SGR (colour/style) ×4"), "{e}");
        assert!(e.contains("ESC[31m, ESC[0m, ESC[1m, ESC[0m"), "{e}");
        let e = evidence("see \u{1b}]8;;https://evil.example\u{7}here\u{1b}]8;;\u{7}");
        assert!(e.contains("OSC 8 (hyperlink) ×2"), "{e}");
        let e = evidence("ok\u{1b}[2K\u{1b}[1A\u{9b}2J done");
        assert!(e.contains("CSI erase line ×1"), "{e}");
        assert!(e.contains("CSI cursor movement ×1"), "{e}");
        assert!(e.contains("CSI erase display ×1"), "{e}");
        assert!(evidence("trailing \u{1b}").contains("lone ESC"));
        assert!(evidence("x\u{1b}[?25l").contains("private mode"));
    }

    #[test]
    fn control_characters_other_than_whitespace() {
        let e = evidence("safe\u{8}\u{8}\u{8}\u{8}evil");
        assert!(e.contains("U+0008 BACKSPACE (control) ×4"), "{e}");
        assert!(evidence("a\u{0}b").contains("NUL"));
        assert!(evidence("a\u{85}b").contains("NEXT LINE"));
        assert!(evidence("a\u{7f}b").contains("DELETE"));
        assert!(evidence("a\u{2028}b").contains("LINE SEPARATOR"));
    }

    #[test]
    fn bidi_controls_and_marks() {
        let e = evidence("access\u{202E}nimda\u{202C} level");
        assert!(e.contains("U+202E RIGHT-TO-LEFT OVERRIDE ×1"), "{e}");
        assert!(evidence("x\u{2067}y\u{2069}").contains("RIGHT-TO-LEFT ISOLATE"));
        // Marks are typography next to right-to-left text, hiding elsewhere.
        assert!(check("שלום\u{200F} (hello)").is_none());
        assert!(evidence("hello\u{200F}").contains("RIGHT-TO-LEFT MARK"));
        // Overrides are never ordinary, even in right-to-left text.
        assert!(check("שלום\u{202E}").is_some());
    }

    #[test]
    fn other_default_ignorables() {
        assert!(evidence("a\u{3164}b").contains("U+3164 HANGUL FILLER"));
        assert!(evidence("f\u{2062}x").contains("INVISIBLE TIMES"));
        assert!(evidence("a\u{34F}b").contains("COMBINING GRAPHEME JOINER"));
        assert!(evidence("x\u{E0080}").contains("U+E0080"));
        assert!(evidence("x\u{FFFF}").contains("U+FFFF"));
        // A soft hyphen is a hyphenation point inside a word, not outside.
        assert!(check("hyphen\u{AD}ation").is_none());
        assert!(evidence("\u{AD} leading").contains("SOFT HYPHEN"));
        // Private use characters render (as a glyph or a box): not hidden.
        assert!(check("icon \u{E0A0}").is_none());
    }

    fn tool_findings(json: &str) -> Vec<Finding> {
        let raw = parse_tree(json.as_bytes()).unwrap();
        let inventory = Inventory::default();
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs: &[],
        };
        let mut out = Vec::new();
        let name = raw.get("name").and_then(Tree::as_str).unwrap().to_string();
        Hidden.tool(
            &cx,
            &ToolView {
                server: "s",
                tool: &name,
                raw: &raw,
            },
            &mut out,
        );
        out
    }

    #[test]
    fn one_finding_per_string_with_its_pointer_keys_and_names_included() {
        let f = tool_findings(
            r#"{"name":"read_text\u200b_file","description":"a\u200bb\u200cc",
                "inputSchema":{"properties":{"pa\u2060th":{"description":"ok"}}},
                "_meta":{"note":"\u001b[8mconcealed\u001b[0m"}}"#,
        );
        let got: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.field.as_deref().unwrap(), f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/name", "hidden characters in the tool name: 1 zero-width"),
                (
                    "/description",
                    "hidden characters in the text: 2 zero-width"
                ),
                (
                    "/inputSchema/properties/pa\u{2060}th",
                    "hidden characters in a key: 1 zero-width"
                ),
                (
                    "/_meta/note",
                    "hidden characters in the text: 2 ANSI escape sequences"
                ),
            ]
        );
        assert!(f
            .iter()
            .all(|f| f.class == Class::Hidden && f.severity == Severity::High));
        assert!(tool_findings(r#"{"name":"ok","description":"⚠️ careful"}"#).is_empty());
    }

    #[test]
    fn server_fields_are_inspected() {
        let (v, _) = parse(br#"{"instructions":"Use me\u200b first"}"#).unwrap();
        let Value::Object(fields) = v else { panic!() };
        let launch = crate::json::Object::new();
        let inventory = Inventory::default();
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs: &[],
        };
        let mut out = Vec::new();
        Hidden.server(
            &cx,
            &ServerView {
                server: "s",
                fields: &fields,
                launch: &launch,
            },
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tool, None);
        assert_eq!(out[0].field.as_deref(), Some("/instructions"));
    }
}
