//! A strict JSON reader that keeps what ordinary parsers throw away.
//!
//! Descriptors are untrusted input whose every byte may reach a model, so
//! the usual conveniences are dangerous: `serde_json::Value` keeps one of two
//! duplicate keys silently, many parsers accept lone surrogates, NaN or a
//! number that overflows to infinity. This reader refuses all of those with
//! the byte offset and the JSON pointer of the fault, records duplicate keys
//! (keeping the last, as JavaScript's `JSON.parse` does) so that the caller
//! can report them, and bounds nesting so that hostile depth cannot overflow
//! the stack.

use std::fmt;

/// Deepest nesting accepted; real tool schemas stay far below it.
pub const MAX_DEPTH: usize = 128;

/// A JSON value with object members in input order.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, kept as its validated lexeme; see [`Number::as_f64`].
    Number(Number),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object; keys are unique (duplicates were reported and the last kept).
    Object(Object),
}

/// A JSON number: its lexeme, known to be a finite IEEE 754 double. Two
/// numbers are equal when their values are (`1`, `1.0` and `1e0` are one
/// number, as in the canonical form).
#[derive(Clone, Debug)]
pub struct Number {
    lexeme: String,
    value: f64,
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.value == other.value
    }
}

impl Number {
    /// The number as a double, the value RFC 8785 canonicalises.
    pub fn as_f64(&self) -> f64 {
        self.value
    }

    /// The number as it was written.
    pub fn lexeme(&self) -> &str {
        &self.lexeme
    }

    /// A number from a finite double (used when building values in code).
    pub fn from_f64(value: f64) -> Option<Number> {
        value.is_finite().then(|| Number {
            lexeme: ryu_js::Buffer::new().format_finite(value).to_string(),
            value,
        })
    }
}

/// An object's members in input order, keys unique. Equality ignores the
/// order of members, as JSON does.
#[derive(Clone, Debug, Default)]
pub struct Object {
    members: Vec<(String, Value)>,
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.members.len() == other.members.len()
            && self.members.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object::default()
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, replacing an earlier value in place.
    pub fn insert(&mut self, key: String, value: Value) {
        match self.members.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.members.push((key, value)),
        }
    }

    /// Members in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.members.iter().map(|(k, v)| (k, v))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// True when the object has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

impl IntoIterator for Object {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.members.into_iter()
    }
}

impl FromIterator<(String, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Object {
        let mut o = Object::new();
        for (k, v) in iter {
            o.insert(k, v);
        }
        o
    }
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// The JSON type name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// One step of a JSON pointer; a key is borrowed from the input unless it
/// had escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    /// An object member.
    Key(std::borrow::Cow<'a, str>),
    /// An array element.
    Index(usize),
}

/// Renders segments as an RFC 6901 JSON pointer (`""` for the root).
pub fn pointer(segments: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Key(k) => push_pointer_token(&mut out, k),
            Segment::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// Appends one RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
pub fn push_pointer_token(out: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

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

fn shorten(p: String) -> String {
    const HEAD: usize = 80;
    const TAIL: usize = 40;
    if p.chars().count() <= HEAD + TAIL + 3 {
        return p;
    }
    let head: String = p.chars().take(HEAD).collect();
    let tail: Vec<char> = p.chars().rev().take(TAIL).collect();
    let tail: String = tail.into_iter().rev().collect();
    format!("{head}...{tail}")
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
    let doc = parse_inner(input, false, max_depth)?;
    let dups = doc.duplicates.into_iter().map(|(_, p)| p).collect();
    Ok((doc.values.into_iter().next().expect("one value"), dups))
}

/// Parses a sequence of JSON texts separated by whitespace (JSON lines).
pub fn parse_many(input: &[u8]) -> Result<Document, ParseError> {
    parse_inner(input, true, MAX_DEPTH)
}

fn parse_inner(input: &[u8], many: bool, max_depth: usize) -> Result<Document, ParseError> {
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
        if !many {
            return Err(p.err("unexpected content after the JSON value"));
        }
        p.top += 1;
    }
    Ok(Document {
        values,
        duplicates: p.duplicates,
    })
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
    /// again (validating a 125 MiB lock at once held all of it).
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
                let pointer = match parse_inner(&input[..at], true, max_depth) {
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
        // times was a good part of reading it.
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
                // would bring all of it back (a 125 MiB lock's whole text
                // for its 2,000 server names).
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
        self.array_until(|_, _| false, visit).map(drop)
    }

    /// [`Reader::array`], asking `stop(n, offset)` before element `n`
    /// (at byte `offset`): when it answers true, the reader is left
    /// there, inside the array, and `Some(n)` is returned; resume with
    /// [`Reader::array_resume`] or take over another reader's state with
    /// [`Reader::adopt`]. `None` when the array was read to its end.
    pub fn array_until<E: From<ParseError>>(
        &mut self,
        stop: impl FnMut(usize, usize) -> bool,
        visit: impl FnMut(&mut Self, usize) -> Result<(), E>,
    ) -> Result<Option<usize>, E> {
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
            return Ok(None);
        }
        self.elements(0, stop, visit)
    }

    /// Reads on an array that [`Reader::array_until`] stopped before
    /// element `n`, to its end.
    pub fn array_resume<E: From<ParseError>>(
        &mut self,
        n: usize,
        visit: impl FnMut(&mut Self, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        self.elements(n, |_, _| false, visit).map(drop)
    }

    /// A second reader where this one is, for another thread to read on
    /// from (its duplicate keys start empty); see [`Reader::adopt`].
    pub fn fork(&self) -> Reader<'a> {
        Reader {
            p: Parser {
                t: self.p.t,
                s: self.p.s,
                i: self.p.i,
                path: self.p.path.clone(),
                duplicates: Vec::new(),
                top: self.p.top,
                max_depth: self.p.max_depth,
            },
            depth: self.depth,
            keys: self.keys.clone(),
        }
    }

    /// Goes on from where `other`, a [`Reader::fork`] of this reader, has
    /// got to: its position and nesting, and its duplicate keys after
    /// this reader's.
    pub fn adopt(&mut self, other: Reader<'a>) {
        let duplicates = std::mem::take(&mut self.p.duplicates);
        *self = other;
        let theirs = std::mem::replace(&mut self.p.duplicates, duplicates);
        self.p.duplicates.extend(theirs);
    }

    /// The elements of an array from element `n` on, the reader at its
    /// first byte.
    fn elements<E: From<ParseError>>(
        &mut self,
        mut n: usize,
        mut stop: impl FnMut(usize, usize) -> bool,
        mut visit: impl FnMut(&mut Self, usize) -> Result<(), E>,
    ) -> Result<Option<usize>, E> {
        loop {
            self.p.ws();
            if stop(n, self.p.i) {
                return Ok(Some(n));
            }
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
                    return Ok(None);
                }
                None => return Err(self.p.err("unexpected end of input inside an array").into()),
                _ => return Err(self.p.err("expected `,` or `]`").into()),
            }
        }
    }
}

/// The index of the first byte of `s` from `i` on that ends a string's
/// plain run (a quote, a backslash or a control character), or `s.len()`.
/// Eight bytes are looked at a time: most of a lock or an inventory is
/// string text, and this is most of what reading it costs.
pub(crate) fn plain_run_end(s: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `w` is zero, or below `n` (at most 0x80): its high bit set
    // in the result; exact about whether any byte is (bit tricks of
    // "haszero" and "hasless").
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    while let Some(chunk) = s.get(i..i + 8) {
        let w = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
        let hit = below(w ^ (ONES * u64::from(b'"')), 1)
            | below(w ^ (ONES * u64::from(b'\\')), 1)
            | below(w, 0x20);
        if hit != 0 {
            break;
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

/// Where a JSON pointer's value is written in a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// Byte offset of the value's first byte.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters (Unicode code points).
    pub column: usize,
    /// The pointer that was found: the one asked for, or its deepest
    /// ancestor that the document holds.
    pub pointer: String,
}

/// Finds the value at `pointer` (RFC 6901) in the first JSON value of
/// `input`, walking it with [`Reader`] so that positions agree with what
/// was read. A pointer the document does not hold (a property that was
/// removed, a field named after its canonical key) resolves to its deepest
/// ancestor that it does; of duplicate keys the last one wins, as the
/// reader keeps the last value. A malformed document stops the walk where
/// it breaks. `None` when `pointer` is not a pointer or `input` is not
/// UTF-8.
pub fn locate(input: &[u8], pointer: &str) -> Option<Position> {
    locate_all(input, &[pointer]).pop().flatten()
}

/// [`locate`] for many pointers in one walk of `input` (a SARIF report
/// points thousands of findings into one 54 MiB inventory: one walk each
/// took hours). The answers are in the order of `pointers`.
pub fn locate_all(input: &[u8], pointers: &[&str]) -> Vec<Option<Position>> {
    let tokens: Vec<Option<Vec<String>>> = pointers
        .iter()
        .map(|p| {
            if p.is_empty() {
                return Some(Vec::new());
            }
            Some(
                p.strip_prefix('/')?
                    .split('/')
                    .map(|t| t.replace("~1", "/").replace("~0", "~"))
                    .collect(),
            )
        })
        .collect();
    let Ok(mut r) = Reader::new(input, MAX_DEPTH + 8) else {
        return vec![None; pointers.len()];
    };
    let start = r.offset();
    let mut found = vec![(start, 0); pointers.len()];
    let live: Vec<(usize, &[String])> = tokens
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some((i, t.as_deref()?)))
        .collect();
    // What was found before a fault stands: these are files that were
    // read already, and a position is only a pointer for a reviewer.
    let _ = walk_to(&mut r, &live, &mut found);
    // Lines and columns in one sweep over the offsets, in order.
    let mut order: Vec<usize> = (0..pointers.len()).collect();
    order.sort_by_key(|&i| found[i].0);
    let mut at = vec![(0, 0); pointers.len()];
    let (mut pos, mut line, mut column) = (0, 1, 1);
    for i in order {
        let offset = found[i].0;
        for &b in &input[pos..offset] {
            if b == b'\n' {
                line += 1;
                column = 1;
            } else if b & 0xC0 != 0x80 {
                // Columns count characters: not UTF-8 continuation bytes.
                column += 1;
            }
        }
        pos = offset;
        at[i] = (line, column);
    }
    tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.as_ref()?;
            let mut pointer = String::new();
            for t in &t[..found[i].1] {
                pointer.push('/');
                push_pointer_token(&mut pointer, t);
            }
            Some(Position {
                offset: found[i].0,
                line: at[i].0,
                column: at[i].1,
                pointer,
            })
        })
        .collect()
}

/// Walks the value at the reader's position along each live pointer's
/// tokens, recording in `found[i]` the offset and depth of pointer `i`'s
/// deepest match (the last one among equally deep duplicates); consumes
/// exactly one value.
fn walk_to(
    r: &mut Reader<'_>,
    live: &[(usize, &[String])],
    found: &mut [(usize, usize)],
) -> Result<(), ParseError> {
    let depth = r.p.path.len();
    let live: Vec<(usize, &[String])> = live
        .iter()
        .copied()
        .filter(|(_, t)| t.len() > depth)
        .collect();
    if live.is_empty() {
        return r.skip();
    }
    let mut step = |r: &mut Reader<'_>, name: &str| {
        let next: Vec<(usize, &[String])> = live
            .iter()
            .copied()
            .filter(|(_, t)| t[depth] == name)
            .collect();
        if next.is_empty() {
            return r.skip();
        }
        let at = r.offset();
        for &(i, _) in &next {
            if depth + 1 >= found[i].1 {
                found[i] = (at, depth + 1);
            }
        }
        walk_to(r, &next, found)
    };
    match r.peek() {
        Some(b'{') => r.object(|r, key| step(r, key)),
        Some(b'[') => r.array(|r, i| step(r, &i.to_string())),
        _ => r.skip(),
    }
}

fn line_column(before: &[u8]) -> (usize, usize) {
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

struct Parser<'a> {
    /// The input, validated as UTF-8.
    t: &'a str,
    /// The same input as bytes.
    s: &'a [u8],
    i: usize,
    path: Vec<Segment<'a>>,
    duplicates: Vec<(usize, String)>,
    top: usize,
    max_depth: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, message: impl Into<String>) -> ParseError {
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
    fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.ws();
        let Some(&b) = self.s.get(self.i) else {
            return Err(self.err("unexpected end of input: expected a value"));
        };
        match b {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => Ok(Value::String(self.string()?)),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
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
    fn skip(&mut self, depth: usize) -> Result<(), ParseError> {
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
            _ => self.value(depth).map(|_| ()),
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

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, ParseError> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err(format!("invalid literal: expected `{word}`")))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), ParseError> {
        if depth > self.max_depth {
            Err(self.err(format!("nesting deeper than {} levels", self.max_depth)))
        } else {
            Ok(())
        }
    }

    /// Records that `key` repeats a key of the object at the current path.
    fn note_duplicate(&mut self, key: &str) {
        let mut at = pointer(&self.path);
        at.push('/');
        push_pointer_token(&mut at, key);
        self.duplicates.push((self.top, at));
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.enter(depth)?;
        self.i += 1;
        let mut members: Vec<(String, Value)> = Vec::new();
        let mut index: Option<std::collections::HashMap<String, usize>> = None;
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Object(Object { members }));
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
            let key = key.into_owned();
            let existing = match &index {
                Some(map) => map.get(&key).copied(),
                None => members.iter().position(|(k, _)| *k == key),
            };
            match existing {
                Some(at) => {
                    self.note_duplicate(&key);
                    members[at].1 = v;
                }
                None => {
                    if let Some(map) = index.as_mut() {
                        map.insert(key.clone(), members.len());
                    } else if members.len() >= 16 {
                        let mut map: std::collections::HashMap<String, usize> = members
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
                    return Ok(Value::Object(Object { members }));
                }
                None => return Err(self.err("unexpected end of input inside an object")),
                _ => return Err(self.err("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.enter(depth)?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::Array(items));
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
                    return Ok(Value::Array(items));
                }
                None => return Err(self.err("unexpected end of input inside an array")),
                _ => return Err(self.err("expected `,` or `]`")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, ParseError> {
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
        let lexeme = std::str::from_utf8(&s[start..i]).expect("ASCII number");
        let value: f64 = lexeme.parse().map_err(|_| self.err("invalid number"))?;
        if !value.is_finite() {
            return Err(self.err(format!(
                "number {lexeme} is beyond the range of a double (RFC 8785 requires IEEE 754)"
            )));
        }
        self.i = i;
        Ok(Value::Number(Number {
            lexeme: lexeme.to_string(),
            value,
        }))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.string_cow().map(std::borrow::Cow::into_owned)
    }

    /// A string, borrowed from the input when it has no escape.
    fn string_cow(&mut self) -> Result<std::borrow::Cow<'a, str>, ParseError> {
        debug_assert_eq!(self.s[self.i], b'"');
        self.i += 1;
        let start = self.i;
        // Fast path: no escape before the closing quote.
        let j = plain_run_end(self.s, start);
        match self.s.get(j) {
            Some(b'"') => {
                self.i = j + 1;
                // Input was validated as UTF-8 and quotes are ASCII.
                return Ok(std::borrow::Cow::Borrowed(self.text(start, j)));
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
                    return Ok(std::borrow::Cow::Owned(out));
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

    fn at(input: &str, pointer: &str) -> (usize, usize, String) {
        let p = locate(input.as_bytes(), pointer).unwrap();
        (p.line, p.column, p.pointer)
    }

    #[test]
    fn locate_finds_members_and_elements_by_line_and_column() {
        let doc = "{\n  \"tools\": [\n    {\"name\": \"a\"},\n    {\n      \"name\": \"b\",\n      \"inputSchema\": {\"properties\": {\"x/y\": {}, \"m~n\": 1}}\n    }\n  ]\n}\n";
        assert_eq!(at(doc, ""), (1, 1, String::new()));
        assert_eq!(at(doc, "/tools"), (2, 12, "/tools".into()));
        assert_eq!(at(doc, "/tools/0"), (3, 5, "/tools/0".into()));
        assert_eq!(at(doc, "/tools/1/name"), (5, 15, "/tools/1/name".into()));
        assert_eq!(
            at(doc, "/tools/1/inputSchema/properties/x~1y"),
            (6, 45, "/tools/1/inputSchema/properties/x~1y".into())
        );
        assert_eq!(
            at(doc, "/tools/1/inputSchema/properties/m~0n"),
            (6, 56, "/tools/1/inputSchema/properties/m~0n".into())
        );
    }

    #[test]
    fn locate_falls_back_to_the_deepest_ancestor_present() {
        let doc = "{\"a\": {\n \"b\": [1, 2]\n}}";
        assert_eq!(at(doc, "/a/b/7"), (2, 7, "/a/b".into()));
        assert_eq!(at(doc, "/a/c/d"), (1, 7, "/a".into()));
        assert_eq!(at(doc, "/zzz"), (1, 1, String::new()));
        // An index is not a key, and a key is not an index.
        assert_eq!(at(doc, "/a/b/x"), (2, 7, "/a/b".into()));
        assert_eq!(at("[0, {\"0\": 1}]", "/1/0"), (1, 11, "/1/0".into()));
    }

    #[test]
    fn locate_takes_the_last_of_duplicate_keys() {
        let doc = "{\n\"d\": \"first\",\n\"d\": \"second\"\n}";
        assert_eq!(at(doc, "/d"), (3, 6, "/d".into()));
    }

    #[test]
    fn locate_counts_columns_in_characters_and_survives_bad_input() {
        // 16 characters in, 19 bytes in.
        assert_eq!(
            at("{\"é\u{200B}\": 1, \"k\": 2}", "/k"),
            (1, 16, "/k".into())
        );
        // What was found before a fault stands.
        assert_eq!(at("{\"a\": 1, \"b\": ]", "/a"), (1, 7, "/a".into()));
        assert_eq!(locate(b"{}", "no-slash"), None);
        assert_eq!(locate(b"\xff", ""), None);
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

#[cfg(test)]
mod locate_all_tests {
    use super::*;

    #[test]
    fn one_walk_answers_as_one_walk_per_pointer() {
        let input = "{\"a\": [1, {\"b\": \"é\", \"b\": 2}],\n \"c~/\": {\"d\": [true, null]},\n\"é\": {\"x\": 1}, \"a\": [3]}";
        let pointers = [
            "",
            "/a",
            "/a/0",
            "/a/1",
            "/a/1/b",
            "/c~0~1/d/1",
            "/c~0~1/d/7",
            "/é/x",
            "/missing/deeper",
            "no-slash",
            "/a/1/b",
            "/c~0~1",
        ];
        let all = locate_all(input.as_bytes(), &pointers);
        assert_eq!(all.len(), pointers.len());
        for (p, got) in pointers.iter().zip(&all) {
            assert_eq!(
                got,
                &locate_all(input.as_bytes(), &[p]).pop().flatten(),
                "{p}"
            );
        }
        // The last of duplicate members wins; a missing tail resolves to
        // its deepest ancestor; columns count characters.
        let a = all[1].as_ref().unwrap();
        assert_eq!((a.line, a.pointer.as_str()), (3, "/a"));
        let d = all[6].as_ref().unwrap();
        assert_eq!((d.line, d.pointer.as_str()), (2, "/c~0~1/d"));
        let x = all[7].as_ref().unwrap();
        assert_eq!((x.line, x.column), (3, 12));
        assert_eq!(all[9], None);
        assert_eq!(all[4], all[10]);
    }
}
