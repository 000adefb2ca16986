//! From a JSON pointer or a byte offset to a line and a column: where a
//! reviewer finds what an error or a finding is about.

use super::pointer::push_pointer_token;
use super::reader::{ParseError, Reader, MAX_DEPTH};

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

/// [`locate`] for many pointers in one walk of `input`: a SARIF report
/// points thousands of findings into one large inventory, and a walk for
/// each made the report's time grow with findings times file size
/// (docs/performance.md). The answers are in the order of `pointers`.
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
    let depth = r.path_len();
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

/// The 1-based line and column (in characters) just after `before`.
pub(super) fn line_column(before: &[u8]) -> (usize, usize) {
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

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
