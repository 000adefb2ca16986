//! The JSON grammar (RFC 8259), byte by byte, strict: the one place that
//! decides what is a value, a string or a number, shared by whole-document
//! parsing and by the member-by-member [`Reader`](super::Reader).

use std::borrow::{Borrow, Cow};

use super::locate::line_column;
use super::pointer::{pointer, push_pointer_token, shorten, Segment};
use super::reader::ParseError;
use super::tree::{Members, Tree};
use super::value::{Number, Object, Value};

/// What the grammar builds a document into: an owned [`Value`], or a
/// [`Tree`] borrowing its strings from the input (the detectors' read of a
/// tool). One grammar for both, so that both accept and refuse the same.
pub(super) trait Build<'a>: Sized {
    /// An object's key as kept.
    type Key: std::borrow::Borrow<str> + Clone + Eq + std::hash::Hash;
    fn null() -> Self;
    fn bool(b: bool) -> Self;
    /// A number: its lexeme and its value, known to be finite.
    fn number(lexeme: &'a str, value: f64) -> Self;
    fn string(s: Cow<'a, str>) -> Self;
    fn key(s: Cow<'a, str>) -> Self::Key;
    fn array(items: Vec<Self>) -> Self;
    /// An object from its members, keys unique.
    fn object(members: Vec<(Self::Key, Self)>) -> Self;
}

impl<'a> Build<'a> for Value {
    type Key = String;
    fn null() -> Value {
        Value::Null
    }
    fn bool(b: bool) -> Value {
        Value::Bool(b)
    }
    fn number(lexeme: &'a str, value: f64) -> Value {
        Value::Number(Number {
            lexeme: lexeme.to_string(),
            value,
        })
    }
    fn string(s: Cow<'a, str>) -> Value {
        Value::String(s.into_owned())
    }
    fn key(s: Cow<'a, str>) -> String {
        s.into_owned()
    }
    fn array(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
    fn object(members: Vec<(String, Value)>) -> Value {
        Value::Object(Object { members })
    }
}

impl<'a> Build<'a> for Tree<'a> {
    type Key = Cow<'a, str>;
    fn null() -> Tree<'a> {
        Tree::Null
    }
    fn bool(b: bool) -> Tree<'a> {
        Tree::Bool(b)
    }
    fn number(lexeme: &'a str, _: f64) -> Tree<'a> {
        Tree::Number(lexeme)
    }
    fn string(s: Cow<'a, str>) -> Tree<'a> {
        Tree::String(s)
    }
    fn key(s: Cow<'a, str>) -> Cow<'a, str> {
        s
    }
    fn array(items: Vec<Tree<'a>>) -> Tree<'a> {
        Tree::Array(items)
    }
    fn object(members: Vec<(Cow<'a, str>, Tree<'a>)>) -> Tree<'a> {
        Tree::Object(Members { members })
    }
}

pub(super) struct Parser<'a> {
    /// The input, validated as UTF-8.
    pub(super) t: &'a str,
    /// The same input as bytes.
    pub(super) s: &'a [u8],
    pub(super) i: usize,
    pub(super) path: Vec<Segment<'a>>,
    pub(super) duplicates: Vec<(usize, String)>,
    pub(super) top: usize,
    pub(super) max_depth: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn err(&self, message: impl Into<String>) -> ParseError {
        let at = self.i.min(self.s.len());
        let (line, column) = line_column(&self.s[..at]);
        ParseError {
            message: message.into(),
            line,
            column,
            pointer: shorten(pointer(&self.path)),
        }
    }

    #[inline]
    pub(super) fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    pub(super) fn value<B: Build<'a>>(&mut self, depth: usize) -> Result<B, ParseError> {
        self.ws();
        let Some(&b) = self.s.get(self.i) else {
            return Err(self.err("unexpected end of input: expected a value"));
        };
        match b {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => Ok(B::string(self.string_cow()?)),
            b't' => self.literal("true", B::bool(true)),
            b'f' => self.literal("false", B::bool(false)),
            b'n' => self.literal("null", B::null()),
            b'-' | b'0'..=b'9' => self.number(),
            b'N' | b'I' => Err(self.err("NaN and Infinity are not JSON numbers")),
            _ => Err(self.err(format!(
                "unexpected character {}",
                describe_at(self.s, self.i)
            ))),
        }
    }

    /// Validates the next value like [`Parser::value`] without building it
    /// (duplicate keys inside it are not looked for).
    pub(super) fn skip(&mut self, depth: usize) -> Result<(), ParseError> {
        self.ws();
        let Some(&b) = self.s.get(self.i) else {
            return Err(self.err("unexpected end of input: expected a value"));
        };
        match b {
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                self.enter(depth + 1)?;
                self.i += 1;
                self.ws();
                if self.s.get(self.i) == Some(&close) {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    if close == b'}' {
                        self.ws();
                        if self.s.get(self.i) != Some(&b'"') {
                            return Err(self.err("expected a string key"));
                        }
                        self.skip_string()?;
                        self.ws();
                        if self.s.get(self.i) != Some(&b':') {
                            return Err(self.err("expected `:` after the key"));
                        }
                        self.i += 1;
                    }
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(&c) if c == close => {
                            self.i += 1;
                            return Ok(());
                        }
                        None => return Err(self.err("unexpected end of input")),
                        _ => return Err(self.err("expected `,` or a closing bracket")),
                    }
                }
            }
            b'"' => self.skip_string(),
            _ => self.value::<Tree<'a>>(depth).map(|_| ()),
        }
    }

    /// Validates a string like [`Parser::string`] without copying it.
    fn skip_string(&mut self) -> Result<(), ParseError> {
        self.i += 1;
        loop {
            let Some(&b) = self.s.get(self.i) else {
                return Err(self.err("unterminated string"));
            };
            match b {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.i += 1;
                    match self.s.get(self.i) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 1,
                        Some(b'u') => {
                            self.i += 1;
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi) {
                                if self.s.get(self.i) != Some(&b'\\')
                                    || self.s.get(self.i + 1) != Some(&b'u')
                                {
                                    return Err(self.err(format!(
                                        "lone surrogate escape U+{hi:04X} (not valid Unicode)"
                                    )));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err(format!("lone surrogate escape U+{hi:04X} (not followed by a low surrogate)")));
                                }
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(self.err(format!(
                                    "lone surrogate escape U+{hi:04X} (not valid Unicode)"
                                )));
                            }
                        }
                        _ => return Err(self.err("invalid escape in a string")),
                    }
                }
                0x00..=0x1f => return Err(self.err("unescaped control character in a string")),
                _ => self.i = plain_run_end(self.s, self.i),
            }
        }
    }

    fn literal<B>(&mut self, word: &str, v: B) -> Result<B, ParseError> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err(format!("invalid literal: expected `{word}`")))
        }
    }

    pub(super) fn enter(&self, depth: usize) -> Result<(), ParseError> {
        if depth > self.max_depth {
            Err(self.err(format!("nesting deeper than {} levels", self.max_depth)))
        } else {
            Ok(())
        }
    }

    /// Records that `key` repeats a key of the object at the current path.
    pub(super) fn note_duplicate(&mut self, key: &str) {
        let mut at = pointer(&self.path);
        at.push('/');
        push_pointer_token(&mut at, key);
        self.duplicates.push((self.top, at));
    }

    fn object<B: Build<'a>>(&mut self, depth: usize) -> Result<B, ParseError> {
        self.enter(depth)?;
        self.i += 1;
        let mut members: Vec<(B::Key, B)> = Vec::new();
        let mut index: Option<std::collections::HashMap<B::Key, usize>> = None;
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(B::object(members));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.err("expected a string key"));
            }
            let key = self.string_cow()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(self.err("expected `:` after the key"));
            }
            self.i += 1;
            self.path.push(Segment::Key(key));
            let v = self.value(depth)?;
            let Some(Segment::Key(key)) = self.path.pop() else {
                unreachable!("path stack holds the key pushed above")
            };
            let key = B::key(key);
            let existing = match &index {
                Some(map) => map.get::<B::Key>(&key).copied(),
                None => members.iter().position(|(k, _)| *k == key),
            };
            match existing {
                Some(at) => {
                    self.note_duplicate(key.borrow());
                    members[at].1 = v;
                }
                None => {
                    if let Some(map) = index.as_mut() {
                        map.insert(key.clone(), members.len());
                    } else if members.len() >= 16 {
                        let mut map: std::collections::HashMap<B::Key, usize> = members
                            .iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.clone(), i))
                            .collect();
                        map.insert(key.clone(), members.len());
                        index = Some(map);
                    }
                    members.push((key, v));
                }
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(B::object(members));
                }
                None => return Err(self.err("unexpected end of input inside an object")),
                _ => return Err(self.err("expected `,` or `}`")),
            }
        }
    }

    fn array<B: Build<'a>>(&mut self, depth: usize) -> Result<B, ParseError> {
        self.enter(depth)?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(B::array(items));
        }
        loop {
            self.path.push(Segment::Index(items.len()));
            let v = self.value(depth)?;
            self.path.pop();
            items.push(v);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(B::array(items));
                }
                None => return Err(self.err("unexpected end of input inside an array")),
                _ => return Err(self.err("expected `,` or `]`")),
            }
        }
    }

    fn number<B: Build<'a>>(&mut self) -> Result<B, ParseError> {
        let start = self.i;
        let s = self.s;
        let mut i = self.i;
        if s[i] == b'-' {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while matches!(s.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => {
                self.i = i;
                return Err(self.err("invalid number: expected a digit"));
            }
        }
        if s.get(i) == Some(&b'.') {
            i += 1;
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                self.i = i;
                return Err(self.err("invalid number: expected a digit after `.`"));
            }
            while matches!(s.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(s.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                self.i = i;
                return Err(self.err("invalid number: expected a digit in the exponent"));
            }
            while matches!(s.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        // The grammar above admits only ASCII, so this slice is valid UTF-8.
        let lexeme = self.text(start, i);
        let value: f64 = lexeme.parse().map_err(|_| self.err("invalid number"))?;
        if !value.is_finite() {
            return Err(self.err(format!(
                "number {lexeme} is beyond the range of a double (RFC 8785 requires IEEE 754)"
            )));
        }
        self.i = i;
        Ok(B::number(lexeme, value))
    }

    /// A string, borrowed from the input when it has no escape.
    pub(super) fn string_cow(&mut self) -> Result<Cow<'a, str>, ParseError> {
        debug_assert_eq!(self.s[self.i], b'"');
        self.i += 1;
        let start = self.i;
        // Fast path: no escape before the closing quote.
        let j = plain_run_end(self.s, start);
        match self.s.get(j) {
            Some(b'"') => {
                self.i = j + 1;
                // Input was validated as UTF-8 and quotes are ASCII.
                return Ok(Cow::Borrowed(self.text(start, j)));
            }
            Some(0x00..=0x1f) => {
                self.i = j;
                return Err(self.err("unescaped control character in a string"));
            }
            _ => {}
        }
        let mut out = String::from(self.text(start, j));
        self.i = j;
        loop {
            let Some(&b) = self.s.get(self.i) else {
                return Err(self.err("unterminated string"));
            };
            match b {
                b'"' => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                b'\\' => {
                    self.i += 1;
                    let Some(&e) = self.s.get(self.i) else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) {
                                if self.s.get(self.i) == Some(&b'\\')
                                    && self.s.get(self.i + 1) == Some(&b'u')
                                {
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&lo) {
                                        return Err(self.err(format!(
                                            "lone surrogate escape U+{hi:04X} (not followed by a low surrogate)"
                                        )));
                                    }
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    return Err(self.err(format!(
                                        "lone surrogate escape U+{hi:04X} (not valid Unicode)"
                                    )));
                                }
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(self.err(format!(
                                    "lone surrogate escape U+{hi:04X} (not valid Unicode)"
                                )));
                            } else {
                                hi
                            };
                            out.push(char::from_u32(c).expect("surrogates handled above"));
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("invalid escape in a string"));
                        }
                    }
                }
                0x00..=0x1f => return Err(self.err("unescaped control character in a string")),
                _ => {
                    // Copy the run up to the next quote, backslash or control.
                    let run_start = self.i;
                    let k = plain_run_end(self.s, run_start);
                    out.push_str(self.text(run_start, k));
                    self.i = k;
                }
            }
        }
    }

    /// The input between two ASCII delimiters as text. The whole input was
    /// validated as UTF-8 before parsing, and a cut next to an ASCII byte is
    /// always a character boundary, so this never fails.
    fn text(&self, start: usize, end: usize) -> &'a str {
        &self.t[start..end]
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let Some(digits) = self.s.get(self.i..self.i + 4) else {
            return Err(self.err("truncated \\u escape"));
        };
        let mut v = 0u32;
        for &d in digits {
            let n = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape: expected four hex digits")),
            };
            v = v * 16 + u32::from(n);
        }
        self.i += 4;
        Ok(v)
    }
}

/// The index of the first byte of `s` from `i` on that ends a string's
/// plain run (a quote, a backslash or a control character), or `s.len()`.
/// Eight bytes are looked at a time: most of a lock or an inventory is
/// string text, and this is most of what reading it costs.
pub(crate) fn plain_run_end(s: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // A byte of `w` is zero, or below `n` (at most 0x80): its high bit set
    // in the result; exact about whether any byte is, and about which is
    // the first (bit tricks of "haszero" and "hasless": a borrow only
    // runs from a flagged byte towards the later ones).
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    while let Some(chunk) = s.get(i..i + 8) {
        // Little-endian whatever the machine: the first byte is the
        // lowest, so the lowest flag is the first byte that ends the run.
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let hit = below(w ^ (ONES * u64::from(b'"')), 1)
            | below(w ^ (ONES * u64::from(b'\\')), 1)
            | below(w, 0x20);
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = s.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

fn describe_at(s: &[u8], i: usize) -> String {
    let rest = std::str::from_utf8(&s[i..]).unwrap_or("");
    match rest.chars().next() {
        Some(c) if c.is_ascii_graphic() => format!("`{c}`"),
        Some(c) => format!("U+{:04X}", c as u32),
        None => "end of input".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_runs_end_where_a_byte_by_byte_look_ends_them() {
        let slow = |s: &[u8], i: usize| {
            (i..s.len())
                .find(|&k| s[k] == b'"' || s[k] == b'\\' || s[k] < 0x20)
                .unwrap_or(s.len())
        };
        // Every byte value at every place of a word and its neighbours,
        // among plain bytes, high bytes and bytes next to the special ones.
        for filler in [b'a', 0x7F, 0x80, 0xFF, b'!', b'#', 0x20, b'[', b']'] {
            for len in 0..20 {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut s = vec![filler; len];
                        s[at] = b;
                        for from in [0, 1, at.saturating_sub(1), at] {
                            let from = from.min(len);
                            assert_eq!(
                                plain_run_end(&s, from),
                                slow(&s, from),
                                "{s:?} from {from}"
                            );
                        }
                    }
                }
            }
        }
        // Two bytes that end a run in one word: the first ends it (a
        // borrow from it may flag the later one, never an earlier one).
        for len in 2..20 {
            for a in 0..len {
                for z in a + 1..len {
                    for (x, y) in [(b'"', 0x00), (0x1F, b'\\'), (0x00, b'"'), (b'\\', 0x01)] {
                        let mut s = vec![0x80; len];
                        s[a] = x;
                        s[z] = y;
                        assert_eq!(plain_run_end(&s, 0), slow(&s, 0), "{s:?}");
                        assert_eq!(plain_run_end(&s, a + 1), slow(&s, a + 1), "{s:?}");
                    }
                }
            }
        }
    }
}
