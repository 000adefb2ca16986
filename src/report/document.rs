//! How every JSON document git-kams writes is laid out and escaped.
//!
//! The documents are `#[derive(Serialize)]` types written by serde_json
//! through [`Style`], a formatter that keeps two promises serde_json's own
//! formatters do not. Its strings are escaped as
//! [`Escape::Visible`](crate::canon::Escape::Visible) escapes them: every
//! concealing character (bidi controls, zero-width and tag characters,
//! DEL and the C1 controls, U+2028...) as `\uXXXX`, so a document shown in
//! a terminal or a CI log cannot hide text. And its lines break where our
//! documents have always broken them ([`Layout`]), which scripts that read
//! a record a line and the snapshot tests rely on.

use std::fmt::Display;
use std::io::{self, Write};

use serde::{Serialize, Serializer};
use serde_json::ser::Formatter;

use crate::text::is_concealing;

/// Where a document breaks its lines.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// Every object and array across lines, two spaces a level; empty ones
    /// are `{}` and `[]` (SARIF, which people read in a viewer or an
    /// editor).
    Indented,
    /// The top object one member a line; each array of a top member named
    /// in `keys` one item a line, each item on a single line; everything
    /// else on a single line, with `, ` and `: ` between members. Records
    /// stay greppable and diffable a line each.
    Rows {
        /// The top members whose arrays are written a row a line.
        keys: &'static [&'static str],
        /// How such an array is written when it is empty.
        empty: EmptyRows,
    },
}

/// How an empty array of rows is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyRows {
    /// Its brackets on two lines, the closing one where a last row's
    /// would be.
    TwoLines,
    /// `[]`.
    Brackets,
}

impl Layout {
    /// [`Layout::Rows`] with empty arrays of rows on two lines, as most of
    /// our documents have them.
    pub const fn rows(keys: &'static [&'static str]) -> Layout {
        Layout::Rows {
            keys,
            empty: EmptyRows::TwoLines,
        }
    }
}

/// Writes `doc` as JSON with `layout`, and a newline after it.
pub fn write<T: Serialize + ?Sized>(
    doc: &T,
    layout: Layout,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Style::new(layout));
    doc.serialize(&mut ser)?;
    out.write_all(b"\n")
}

/// A value written as the JSON string of its `Display` form, without an
/// intermediate `String` (digests, object ids).
#[derive(Clone, Copy, Debug)]
pub struct Displayed<T>(pub T);

impl<T: Display> Serialize for Displayed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// Serialises pairs as an object, in their order (`serialize_with`).
pub fn pairs<K: Serialize, V: Serialize, S: Serializer>(
    pairs: &[(K, V)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// The serde_json formatter of our documents: [`Layout`] and visible
/// escaping.
struct Style {
    layout: Layout,
    /// The containers being written, outermost first.
    open: Vec<Frame>,
    /// The name of the top object's member being written: it says whether
    /// an array under it is written a row a line. serde tells a formatter
    /// nothing but the text, so the name is read as it is written.
    key: String,
    in_top_key: bool,
}

/// An object or array being written.
struct Frame {
    /// Its members go on lines of their own.
    across_lines: bool,
    /// Closed on a line of its own even with no member.
    two_lines_when_empty: bool,
    has_member: bool,
}

impl Style {
    fn new(layout: Layout) -> Style {
        Style {
            layout,
            open: Vec::new(),
            key: String::new(),
            in_top_key: false,
        }
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, array: bool) -> io::Result<()> {
        let (across_lines, two_lines_when_empty) = match self.layout {
            Layout::Indented => (true, false),
            Layout::Rows { .. } if self.open.is_empty() => (true, false),
            Layout::Rows { keys, empty }
                if array && self.open.len() == 1 && keys.contains(&self.key.as_str()) =>
            {
                (true, empty == EmptyRows::TwoLines)
            }
            Layout::Rows { .. } => (false, false),
        };
        self.open.push(Frame {
            across_lines,
            two_lines_when_empty,
            has_member: false,
        });
        w.write_all(if array { b"[" } else { b"{" })
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W, array: bool) -> io::Result<()> {
        let f = self.open.pop().expect("a container is open");
        if f.across_lines && (f.has_member || f.two_lines_when_empty) {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(if array { b"]" } else { b"}" })
    }

    fn begin_member<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        let f = self.open.last().expect("a container is open");
        if f.across_lines {
            w.write_all(if first { b"\n" } else { b",\n" })?;
            self.indent(w)
        } else if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn end_member(&mut self) {
        self.open
            .last_mut()
            .expect("a container is open")
            .has_member = true;
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        for _ in 0..self.open.len() {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Formatter for Style {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, true)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, true)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.begin_member(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.end_member();
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, false)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, false)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.open.len() == 1 {
            self.in_top_key = true;
            self.key.clear();
        }
        self.begin_member(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.in_top_key = false;
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.end_member();
        Ok(())
    }

    /// serde_json has already escaped `"`, `\` and the C0 controls, as
    /// [`Escape::Visible`](crate::canon::Escape::Visible) does; a fragment
    /// is the text between them, where the concealing characters are left.
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if self.in_top_key {
            self.key.push_str(fragment);
        }
        // Most text is printable ASCII: written whole.
        if fragment.bytes().all(|b| b < 0x7F) {
            return w.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_concealing(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::{write_string, Escape};

    fn written<T: Serialize + ?Sized>(doc: &T, layout: Layout) -> String {
        let mut out = Vec::new();
        write(doc, layout, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// What the hand-written writers produced for a string.
    fn visible(s: &str) -> String {
        let mut out = Vec::new();
        write_string(s, Escape::Visible, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_the_visible_escape_does() {
        let cases = [
            "",
            "plain",
            // Control characters: the short escapes, the others in hex.
            "\u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1b}[31m\u{1f}",
            // DEL and C1 controls.
            "a\u{7f}b\u{80}c\u{85}d\u{9f}",
            // Bidi controls and isolates.
            "\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{200e}\u{200f}\u{61c}",
            // Zero-width, soft hyphen, word joiner, BOM, line and
            // paragraph separators, variation selectors.
            "a\u{200b}b\u{200c}c\u{200d}d\u{2060}e\u{feff}f\u{ad}g\u{2028}h\u{2029}i\u{fe0f}",
            // Tag characters and private use, beyond U+FFFF: surrogate pairs.
            "\u{e0041}\u{e007f}\u{f0000}\u{10fffd}\u{e000}",
            // Non-ASCII that shows: written as it is.
            "café 日本語 😀 Ω",
            // Lone escapes and escape-looking text.
            "\\",
            "\"",
            "\\u200b",
            "\\\"\\",
            "end\\",
        ];
        for s in cases {
            assert_eq!(
                written(s, Layout::Indented),
                format!("{}\n", visible(s)),
                "{s:?}"
            );
        }
        assert_eq!(
            written("a\u{202e}b\u{e0041}\u{7f}é\\", Layout::Indented),
            "\"a\\u202eb\\udb40\\udc41\\u007fé\\\\\"\n"
        );
    }

    #[test]
    fn every_code_point_is_escaped_as_before() {
        let all: String = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
        for chunk in all.chars().collect::<Vec<_>>().chunks(4096) {
            let s: String = chunk.iter().collect();
            assert_eq!(written(&s, Layout::Indented), format!("{}\n", visible(&s)));
        }
    }

    #[test]
    fn keys_are_escaped_too() {
        let map = std::collections::BTreeMap::from([("k\u{200b}", 1)]);
        assert_eq!(written(&map, Layout::Indented), "{\n  \"k\\u200b\": 1\n}\n");
    }

    #[derive(Serialize)]
    struct Doc<'a> {
        version: u32,
        rows: &'a [Row],
        notes: &'a [&'a str],
        summary: Row,
    }

    #[derive(Serialize)]
    struct Row {
        name: &'static str,
        tags: Vec<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        extra: Option<u32>,
        none: Option<u32>,
    }

    fn row(name: &'static str) -> Row {
        Row {
            name,
            tags: vec!["a", "b"],
            extra: None,
            none: None,
        }
    }

    #[test]
    fn rows_go_a_line_each_and_the_rest_on_one_line() {
        let rows = [row("x"), row("y")];
        let doc = Doc {
            version: 1,
            rows: &rows,
            notes: &["n1", "n2"],
            summary: row("s"),
        };
        assert_eq!(
            written(&doc, Layout::rows(&["rows"])),
            "{\n  \"version\": 1,\n  \"rows\": [\n    {\"name\": \"x\", \"tags\": [\"a\", \"b\"], \"none\": null},\n    {\"name\": \"y\", \"tags\": [\"a\", \"b\"], \"none\": null}\n  ],\n  \"notes\": [\"n1\", \"n2\"],\n  \"summary\": {\"name\": \"s\", \"tags\": [\"a\", \"b\"], \"none\": null}\n}\n"
        );
    }

    #[test]
    fn empty_rows_are_two_lines_or_brackets() {
        let doc = Doc {
            version: 1,
            rows: &[],
            notes: &[],
            summary: row("s"),
        };
        let two = written(&doc, Layout::rows(&["rows"]));
        assert!(two.contains("\"rows\": [\n  ],\n  \"notes\": [],"), "{two}");
        let brackets = written(
            &doc,
            Layout::Rows {
                keys: &["rows"],
                empty: EmptyRows::Brackets,
            },
        );
        assert!(brackets.contains("\"rows\": [],\n"), "{brackets}");
    }

    #[test]
    fn indented_is_indented_throughout() {
        let doc = Doc {
            version: 1,
            rows: &[row("x")],
            notes: &[],
            summary: Row {
                tags: vec![],
                ..row("s")
            },
        };
        assert_eq!(
            written(&doc, Layout::Indented),
            "{\n  \"version\": 1,\n  \"rows\": [\n    {\n      \"name\": \"x\",\n      \"tags\": [\n        \"a\",\n        \"b\"\n      ],\n      \"none\": null\n    }\n  ],\n  \"notes\": [],\n  \"summary\": {\n    \"name\": \"s\",\n    \"tags\": [],\n    \"none\": null\n  }\n}\n"
        );
    }
}
