//! Reading a document: whole ([`parse`]), as JSON lines ([`parse_many`]),
//! or member by member without building it ([`Reader`]), so that memory
//! follows the largest tool and not the file.

use std::fmt;

use super::locate::line_column;
use super::parser::{Build, Parser};
use super::pointer::{pointer, Segment};
use super::tree::Tree;
use super::value::Value;

/// Deepest nesting accepted; real tool schemas stay far below it.
pub const MAX_DEPTH: usize = 128;

/// Why a document was refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What was wrong.
    pub message: String,
    /// 1-based line of the fault.
    pub line: usize,
    /// 1-based column (in characters) of the fault.
    pub column: usize,
    /// JSON pointer of the value being read when the fault was found
    /// (shortened in the middle when very long, to keep errors one line).
    pub pointer: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )?;
        if !self.pointer.is_empty() {
            write!(f, " (JSON pointer {})", self.pointer)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

/// A parsed document and the duplicate keys found in it.
#[derive(Debug)]
pub struct Document {
    /// The top-level values: one for a JSON file, one per line for JSON lines.
    pub values: Vec<Value>,
    /// JSON pointers of every member whose key repeated an earlier key of the
    /// same object (pointer into the value of the given top-level index).
    pub duplicates: Vec<(usize, String)>,
}

/// Parses one JSON text (RFC 8259), refusing trailing content.
pub fn parse(input: &[u8]) -> Result<(Value, Vec<String>), ParseError> {
    parse_nested(input, MAX_DEPTH)
}

/// Like [`parse`], with another nesting limit (the lock holds descriptors a
/// few levels below its top, so it reads deeper than an inventory).
pub fn parse_nested(input: &[u8], max_depth: usize) -> Result<(Value, Vec<String>), ParseError> {
    let (values, duplicates) = parse_inner(input, Texts::One, max_depth)?;
    let dups = duplicates.into_iter().map(|(_, p)| p).collect();
    Ok((values.into_iter().next().expect("one value"), dups))
}

/// Like [`parse`], into a [`Tree`] that borrows its strings and keys from
/// `input` where they hold no escape; duplicate keys are not reported.
pub fn parse_tree(input: &[u8]) -> Result<Tree<'_>, ParseError> {
    let (values, _) = parse_inner(input, Texts::One, MAX_DEPTH)?;
    Ok(values.into_iter().next().expect("one value"))
}

/// Parses a sequence of JSON texts separated by whitespace (JSON lines).
pub fn parse_many(input: &[u8]) -> Result<Document, ParseError> {
    let (values, duplicates) = parse_inner(input, Texts::Many, MAX_DEPTH)?;
    Ok(Document { values, duplicates })
}

/// How many JSON texts an input may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Texts {
    /// One, and nothing after it.
    One,
    /// Any number separated by whitespace (JSON lines).
    Many,
}

/// The top-level values of `input` and the duplicate keys found in them
/// (as [`Document`] holds them).
type Parsed<B> = (Vec<B>, Vec<(usize, String)>);

fn parse_inner<'a, B: Build<'a>>(
    input: &'a [u8],
    texts: Texts,
    max_depth: usize,
) -> Result<Parsed<B>, ParseError> {
    let mut p = Reader::new(input, max_depth)?.p;
    let mut values = Vec::new();
    p.ws();
    if p.i == p.s.len() {
        return Err(p.err("empty input: expected a JSON value"));
    }
    loop {
        let v = p.value(0)?;
        values.push(v);
        p.ws();
        if p.i == p.s.len() {
            break;
        }
        if texts == Texts::One {
            return Err(p.err("unexpected content after the JSON value"));
        }
        p.top += 1;
    }
    Ok((values, p.duplicates))
}

/// A reader that walks a document without building it whole: the caller
/// visits objects and arrays member by member and parses only the values
/// it wants to keep. Large inventories and locks are read this way, one
/// tool at a time, so memory follows the largest tool, not the file.
/// Errors, duplicate keys and JSON pointers behave as in [`parse`].
pub struct Reader<'a> {
    p: Parser<'a>,
    depth: usize,
    /// The keys of the objects being visited, as a stack: each object's
    /// keys above its parent's (while it has few), gone when it ends. One
    /// list for all: most objects are small, and a list of their own was
    /// an allocation each.
    keys: Vec<std::borrow::Cow<'a, str>>,
}

impl<'a> Reader<'a> {
    /// Like [`Reader::new`], validating `input` a few MiB at a time and
    /// calling `done(n)` after each with the length validated so far, so
    /// that a mapped file's pages can be given back before they are read
    /// again: validated at once, a large lock stays resident whole
    /// (figures in docs/performance.md).
    pub fn new_releasing(
        input: &'a [u8],
        max_depth: usize,
        done: &dyn Fn(usize),
    ) -> Result<Reader<'a>, ParseError> {
        const CHUNK: usize = 4 << 20;
        let mut at = 0;
        while at < input.len() {
            let mut end = (at + CHUNK).min(input.len());
            if let Err(e) = std::str::from_utf8(&input[at..end]) {
                if e.error_len().is_some() || end == input.len() {
                    // Invalid: the whole-text path says where, as always.
                    return Reader::new(input, max_depth);
                }
                // A character cut by the chunk's end: stop before it.
                end = at + e.valid_up_to();
            }
            at = end;
            done(at);
        }
        // SAFETY: every byte was validated above, in chunks that end on
        // character boundaries (a cut character ends its chunk early and
        // starts the next).
        let text = unsafe { std::str::from_utf8_unchecked(input) };
        Ok(Reader::over(text, max_depth))
    }

    /// A reader over `input` (validated as UTF-8 here).
    pub fn new(input: &'a [u8], max_depth: usize) -> Result<Reader<'a>, ParseError> {
        let text = match std::str::from_utf8(input) {
            Ok(t) => t,
            Err(e) => {
                let at = e.valid_up_to();
                let (line, column) = line_column(&input[..at]);
                // The pointer of the value holding the bad byte: the valid
                // text before it, parsed, runs out right there. An earlier
                // fault in that text would point elsewhere: no pointer then.
                let pointer = match parse_inner::<Value>(&input[..at], Texts::Many, max_depth) {
                    Err(e) if (e.line, e.column) == (line, column) => e.pointer,
                    _ => String::new(),
                };
                return Err(ParseError {
                    message: format!("invalid UTF-8 (byte offset {at})"),
                    line,
                    column,
                    pointer,
                });
            }
        };
        Ok(Reader::over(text, max_depth))
    }

    fn over(text: &'a str, max_depth: usize) -> Reader<'a> {
        Reader {
            p: Parser {
                t: text,
                s: text.as_bytes(),
                i: 0,
                path: Vec::new(),
                duplicates: Vec::new(),
                top: 0,
                max_depth,
            },
            depth: 0,
            keys: Vec::new(),
        }
    }

    /// How many segments the pointer of the value being visited has.
    pub(super) fn path_len(&self) -> usize {
        self.p.path.len()
    }

    /// Skips whitespace; true when nothing is left.
    pub fn at_end(&mut self) -> bool {
        self.p.ws();
        self.p.i >= self.p.s.len()
    }

    /// Moves on to the next top-level value (JSON lines).
    pub fn next_top(&mut self) {
        self.p.top += 1;
    }

    /// The index of the current top-level value.
    pub fn top(&self) -> usize {
        self.p.top
    }

    /// The next non-whitespace byte.
    pub fn peek(&mut self) -> Option<u8> {
        self.p.ws();
        self.p.s.get(self.p.i).copied()
    }

    /// Byte offset of the next value (after whitespace).
    pub fn offset(&mut self) -> usize {
        self.p.ws();
        self.p.i
    }

    /// The input's length in bytes.
    pub fn input_len(&self) -> usize {
        self.p.s.len()
    }

    /// Byte offset just past the last value read (no whitespace skipped).
    pub fn position(&self) -> usize {
        self.p.i
    }

    /// An error at the current position.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        self.p.err(message)
    }

    /// The JSON pointer of the value being visited.
    pub fn pointer(&self) -> String {
        pointer(&self.p.path)
    }

    /// Parses the next value whole.
    pub fn value(&mut self) -> Result<Value, ParseError> {
        self.p.value(self.depth)
    }

    /// Checks the next value and steps over it without building it.
    pub fn skip(&mut self) -> Result<(), ParseError> {
        self.p.skip(self.depth)
    }

    /// Reads the next value when it is a string (borrowed from the input
    /// unless it had escapes); steps over any other value and gives `None`.
    pub fn string(&mut self) -> Result<Option<std::borrow::Cow<'a, str>>, ParseError> {
        if self.peek() == Some(b'"') {
            self.p.string_cow().map(Some)
        } else {
            self.skip().map(|()| None)
        }
    }

    /// Duplicate keys found so far: (top-level index, pointer).
    pub fn take_duplicates(&mut self) -> Vec<(usize, String)> {
        std::mem::take(&mut self.p.duplicates)
    }

    /// Visits the members of the next value, which must be an object;
    /// `visit` must consume exactly one value for each member.
    pub fn object<E: From<ParseError>>(
        &mut self,
        mut visit: impl FnMut(&mut Self, &str) -> Result<(), E>,
    ) -> Result<(), E> {
        self.p.ws();
        if self.p.s.get(self.p.i) != Some(&b'{') {
            return Err(self.p.err("expected an object").into());
        }
        self.depth += 1;
        self.p.enter(self.depth)?;
        self.p.i += 1;
        // Keys are borrowed from the input unless they had escapes: an
        // entry of a large lock has a dozen keys, and copying each three
        // times was a good part of reading it (docs/performance.md).
        let first = self.keys.len();
        let mut seen_set: Option<std::collections::HashSet<std::borrow::Cow<'a, str>>> = None;
        self.p.ws();
        if self.p.s.get(self.p.i) == Some(&b'}') {
            self.p.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.p.ws();
            if self.p.s.get(self.p.i) != Some(&b'"') {
                return Err(self.p.err("expected a string key").into());
            }
            let key = self.p.string_cow()?;
            self.p.ws();
            if self.p.s.get(self.p.i) != Some(&b':') {
                return Err(self.p.err("expected `:` after the key").into());
            }
            self.p.i += 1;
            let repeated = match &seen_set {
                Some(set) => set.contains(&key),
                None => self.keys[first..].contains(&key),
            };
            if repeated {
                self.p.note_duplicate(&key);
            } else if let Some(set) = seen_set.as_mut() {
                set.insert(std::borrow::Cow::Owned(key.to_string()));
            } else {
                self.keys.push(key.clone());
                // Large objects (a server with thousands of tools) switch
                // to a hash set, so that checking stays linear. Its keys
                // are copied: growing it rehashes every key, and keys
                // borrowed from a mapped file given back as it is read
                // would bring all of it back: a large lock's server names
                // span its whole text (docs/performance.md).
                if self.keys.len() - first > 16 {
                    seen_set = Some(
                        self.keys
                            .drain(first..)
                            .map(|k| std::borrow::Cow::Owned(k.into_owned()))
                            .collect(),
                    );
                }
            }
            self.p.path.push(Segment::Key(key.clone()));
            visit(self, &key)?;
            self.p.path.pop();
            self.p.ws();
            match self.p.s.get(self.p.i) {
                Some(b',') => self.p.i += 1,
                Some(b'}') => {
                    self.p.i += 1;
                    self.depth -= 1;
                    self.keys.truncate(first);
                    return Ok(());
                }
                None => {
                    return Err(self
                        .p
                        .err("unexpected end of input inside an object")
                        .into())
                }
                _ => return Err(self.p.err("expected `,` or `}`").into()),
            }
        }
    }

    /// Visits the elements of the next value, which must be an array;
    /// `visit` must consume exactly one value for each element.
    pub fn array<E: From<ParseError>>(
        &mut self,
        visit: impl FnMut(&mut Self, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        self.p.ws();
        if self.p.s.get(self.p.i) != Some(&b'[') {
            return Err(self.p.err("expected an array").into());
        }
        self.depth += 1;
        self.p.enter(self.depth)?;
        self.p.i += 1;
        self.p.ws();
        if self.p.s.get(self.p.i) == Some(&b']') {
            self.p.i += 1;
            self.depth -= 1;
            return Ok(());
        }
        self.elements(visit)
    }

    /// The elements of an array, the reader at the first one.
    fn elements<E: From<ParseError>>(
        &mut self,
        mut visit: impl FnMut(&mut Self, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut n = 0;
        loop {
            self.p.ws();
            self.p.path.push(Segment::Index(n));
            visit(self, n)?;
            self.p.path.pop();
            n += 1;
            self.p.ws();
            match self.p.s.get(self.p.i) {
                Some(b',') => self.p.i += 1,
                Some(b']') => {
                    self.p.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                None => return Err(self.p.err("unexpected end of input inside an array").into()),
                _ => return Err(self.p.err("expected `,` or `]`").into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Number;

    #[test]
    fn duplicate_keys_are_reported_with_their_pointer() {
        let (v, d) = parse(br#"{"a":{"b":1,"b":2},"c/d":[{"x":1,"x":1}]}"#).unwrap();
        assert_eq!(d, vec!["/a/b".to_string(), "/c~1d/0/x".to_string()]);
        assert_eq!(
            v.get("a").unwrap().get("b"),
            Some(&Value::Number(Number::from_f64(2.0).unwrap()))
        );
    }

    #[test]
    fn refuses_what_json_does_not_allow() {
        for bad in [
            &b""[..],
            b"NaN",
            b"[Infinity]",
            b"1e400",
            br#""\ud800""#,
            br#""\udc00x""#,
            b"{\"a\":1,}",
            b"01",
            b"\"a\x01\"",
            b"{} {}",
            b"\xff",
        ] {
            assert!(
                parse(bad).is_err(),
                "accepted {:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn skip_refuses_what_value_refuses() {
        for text in [
            &br#"{"a":[1,{"b":"\u00e9"}],"c":null}"#[..],
            br#"[1,]"#,
            br#"{"a" 1}"#,
            br#""\ud800""#,
            b"\"a\x01\"",
            br#"[1e400]"#,
            br#"{"a":tru}"#,
        ] {
            let mut r = Reader::new(text, MAX_DEPTH).unwrap();
            let skipped = r.skip().is_ok() && r.at_end();
            assert_eq!(
                skipped,
                parse(text).is_ok(),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        let deep = "[".repeat(1000);
        assert!(Reader::new(deep.as_bytes(), MAX_DEPTH)
            .unwrap()
            .skip()
            .is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        let e = parse(deep.as_bytes()).unwrap_err();
        assert!(e.message.contains("nesting"), "{e}");
    }

    #[test]
    fn error_names_line_column_and_pointer() {
        let e = parse(b"{\n  \"a\": [1, 2, x]\n}").unwrap_err();
        assert_eq!((e.line, e.column, e.pointer.as_str()), (2, 15, "/a/2"));
    }

    #[test]
    fn surrogate_pairs_and_escapes_decode() {
        let (v, _) = parse(br#""\ud83d\ude00\u200b\n""#).unwrap();
        assert_eq!(v.as_str(), Some("\u{1F600}\u{200B}\n"));
    }
}

#[cfg(test)]
mod releasing_tests {
    use super::*;
    use std::cell::RefCell;

    /// A document of `n` bytes or more whose characters straddle every
    /// 4 MiB chunk boundary (three-byte `€` after one ASCII byte).
    fn straddling(n: usize) -> Vec<u8> {
        let mut s = String::from("{\"k\": \"");
        while s.len() < n {
            s.push('a');
            s.push('€');
        }
        s.push_str("\"}");
        s.into_bytes()
    }

    #[test]
    fn chunked_validation_reads_what_the_whole_text_reads() {
        let text = straddling(9 << 20);
        let calls = RefCell::new(Vec::new());
        let done = |n: usize| calls.borrow_mut().push(n);
        let mut r = Reader::new_releasing(&text, MAX_DEPTH, &done).unwrap();
        let v = r.value().unwrap();
        let (whole, _) = parse(&text).unwrap();
        assert_eq!(v, whole);
        let calls = calls.into_inner();
        assert_eq!(calls.last(), Some(&text.len()));
        assert!(calls.len() >= 3, "{calls:?}");
        assert!(calls.windows(2).all(|w| w[0] < w[1]), "{calls:?}");
        for &n in &calls {
            assert!(
                std::str::from_utf8(&text[..n]).is_ok(),
                "chunk ends mid-character at {n}"
            );
        }
    }

    #[test]
    fn chunked_validation_refuses_what_the_whole_text_refuses() {
        for at in [5 << 20, (9 << 20) - 10] {
            let mut text = straddling(9 << 20);
            text[at] = 0xFF;
            let chunked = Reader::new_releasing(&text, MAX_DEPTH, &|_| ()).err();
            let whole = Reader::new(&text, MAX_DEPTH).err();
            assert!(chunked.is_some());
            assert_eq!(chunked, whole);
        }
        // Cut in the middle of the last character.
        let mut text = straddling(5 << 20);
        text.truncate(text.len() - 3);
        text.pop();
        assert!(Reader::new_releasing(&text, MAX_DEPTH, &|_| ()).is_err());
    }
}
