//! Property tests of the pure core: the canonical form, the digests and
//! the lock's text, driven through the library (no binary), plus the real
//! corpus read two ways (raw JSON-RPC lines and pretty captures).
//!
//! The serialiser below is the test's own: it writes one JSON value in many
//! byte-different but equal ways (key order, whitespace, `\u` escapes,
//! number spellings, decomposed Unicode), which is what servers do between
//! releases and what must never move a digest.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use unicode_normalization::UnicodeNormalization;

use git_kams::canon::{jcs, normalize, Digest};
use git_kams::descriptor::Descriptor;
use git_kams::inventory::{parse_file, ReadOptions, Server};
use git_kams::json::{self, Number, Object, Value};
use git_kams::lock::merge::merge;
use git_kams::lock::{Approval, Entry, Lock, LockServer, State};
use git_kams::text::is_concealing;

use crate::common::corpus;

/// Modest case counts keep debug builds fast; no regression files are
/// written into the source tree.
fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------
// Generators

/// Characters that tend to break canonicalisation or display: invisible,
/// bidi, tags, combining marks, precomposed letters, astral, controls,
/// JSON and pointer syntax.
const TRICKY: &[char] = &[
    '\u{200B}',
    '\u{200D}',
    '\u{202E}',
    '\u{2066}',
    '\u{FEFF}',
    '\u{E0041}',
    '\u{E007F}',
    '\u{301}',
    '\u{308}',
    '\u{E9}',
    '\u{C5}',
    '\u{212B}',
    '\u{1E9B}',
    '\u{AC00}',
    '\u{1100}',
    '\u{1161}',
    '\u{1F600}',
    '\u{10FFFD}',
    '\u{0}',
    '\u{1B}',
    '\n',
    '\t',
    '\u{7F}',
    '\u{85}',
    '\u{2028}',
    '\u{A0}',
    '\u{2000}',
    ' ',
    '"',
    '\\',
    '/',
    '~',
    'ï',
    '日',
];

fn arb_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range(' ', '~'),
        2 => proptest::sample::select(TRICKY),
        1 => any::<char>(),
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(arb_char(), 0..10).prop_map(String::from_iter)
}

fn arb_name() -> impl Strategy<Value = String> {
    proptest::collection::vec(arb_char(), 1..8).prop_map(String::from_iter)
}

fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i32>().prop_map(f64::from),
        (-1000i32..1000, 1u32..6).prop_map(|(m, e)| f64::from(m) / 10f64.powi(e as i32)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        Just(-0.0),
        Just(1e21),
        Just(5e-324),
    ]
    .prop_map(|f| Number::from_f64(f).expect("finite"))
}

/// Builds an object whose keys stay distinct after NFC (keys that only
/// normalisation tells apart are an ambiguity, tested elsewhere).
fn object(members: Vec<(String, Value)>) -> Object {
    let mut seen = std::collections::BTreeSet::new();
    members
        .into_iter()
        .filter(|(k, _)| seen.insert(k.nfc().collect::<String>()))
        .collect()
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number().prop_map(Value::Number),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((arb_string(), inner), 0..5)
                .prop_map(|m| Value::Object(object(m))),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = Object> {
    proptest::collection::vec((arb_string(), arb_value()), 0..5).prop_map(object)
}

/// A tool as a server might send it (any subset of the digested fields
/// besides the name).
fn arb_tool() -> impl Strategy<Value = Object> {
    (
        arb_name(),
        proptest::option::of(arb_string()),
        proptest::option::of(arb_string()),
        proptest::option::of(arb_object()),
        proptest::option::of(arb_object()),
        proptest::option::of(arb_object()),
    )
        .prop_map(|(name, title, description, input, output, annotations)| {
            let mut o = Object::new();
            o.insert("name".into(), Value::String(name));
            let fields = [
                ("title", title.map(Value::String)),
                ("description", description.map(Value::String)),
                ("inputSchema", input.map(Value::Object)),
                ("outputSchema", output.map(Value::Object)),
                ("annotations", annotations.map(Value::Object)),
            ];
            for (k, v) in fields {
                if let Some(v) = v {
                    o.insert(k.into(), v);
                }
            }
            o
        })
}

fn descriptor(tool: &Object) -> Descriptor {
    let (d, collisions) = Descriptor::new(tool.clone());
    assert!(
        collisions.is_empty(),
        "generator made NFC collisions: {collisions:?}"
    );
    d
}

// ---------------------------------------------------------------------------
// The test's own serialiser

/// A small deterministic generator for serialisation choices.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How one serialisation writes a value.
struct Style {
    rng: Rng,
    /// Shuffle object members.
    shuffle: bool,
    /// Random insignificant whitespace between tokens.
    spaces: bool,
    /// `\uXXXX` (and `\/`) for some characters that need no escape.
    escapes: bool,
    /// Exponent spellings of numbers (`1e0` for `1`).
    numbers: bool,
}

impl Style {
    /// Compact, members in order, minimal escapes, numbers as given.
    fn plain() -> Style {
        Style {
            rng: Rng::new(1),
            shuffle: false,
            spaces: false,
            escapes: false,
            numbers: false,
        }
    }

    /// Every variation at once, driven by `seed`.
    fn wild(seed: u64) -> Style {
        Style {
            rng: Rng::new(seed),
            shuffle: true,
            spaces: true,
            escapes: true,
            numbers: true,
        }
    }
}

fn ws(st: &mut Style, out: &mut String) {
    if st.spaces {
        for _ in 0..st.rng.below(3) {
            out.push_str([" ", "\n", "\t", "\r\n", "    "][st.rng.below(5)]);
        }
    }
}

fn write_u(c: char, upper: bool, out: &mut String) {
    let mut units = [0u16; 2];
    for u in c.encode_utf16(&mut units) {
        if upper {
            let _ = write!(out, "\\u{u:04X}");
        } else {
            let _ = write!(out, "\\u{u:04x}");
        }
    }
}

fn write_str(s: &str, st: &mut Style, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '/' if st.escapes && st.rng.one_in(2) => Some("\\/"),
            _ => None,
        };
        let must = short.is_some() || (c as u32) < 0x20;
        if st.escapes && st.rng.one_in(3) {
            let upper = st.rng.one_in(2);
            write_u(c, upper, out);
        } else if let Some(e) = short {
            out.push_str(e);
        } else if must {
            write_u(c, false, out);
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

fn write_number(n: &Number, st: &mut Style, out: &mut String) {
    let f = n.as_f64();
    if st.numbers && f.fract() == 0.0 && st.rng.one_in(3) {
        // `1.0` for `1`.
        let _ = write!(out, "{f:.1}");
    } else if st.numbers && st.rng.one_in(2) {
        if st.rng.one_in(2) {
            let _ = write!(out, "{:e}", f);
        } else {
            let _ = write!(out, "{:E}", f);
        }
    } else {
        out.push_str(n.lexeme());
    }
}

fn write(v: &Value, st: &mut Style, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, st, out),
        Value::String(s) => write_str(s, st, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(st, out);
                write(item, st, out);
                ws(st, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut members: Vec<(&String, &Value)> = o.iter().collect();
            if st.shuffle {
                for i in (1..members.len()).rev() {
                    let j = st.rng.below(i + 1);
                    members.swap(i, j);
                }
            }
            out.push('{');
            for (i, (k, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(st, out);
                write_str(k, st, out);
                ws(st, out);
                out.push(':');
                ws(st, out);
                write(item, st, out);
                ws(st, out);
            }
            out.push('}');
        }
    }
}

fn serialise(v: &Value, st: &mut Style) -> String {
    let mut out = String::new();
    ws(st, &mut out);
    write(v, st, &mut out);
    ws(st, &mut out);
    out
}

/// The same value with every string and key in NFD (canonically equal).
fn decomposed(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(s.nfd().collect()),
        Value::Array(items) => Value::Array(items.iter().map(decomposed).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.nfd().collect(), decomposed(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Parses text that the serialiser wrote; it must be valid and unambiguous.
fn reparse(text: &str) -> Value {
    let (v, dups) = json::parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("serialiser wrote invalid JSON ({e}): {text:?}"));
    assert!(dups.is_empty(), "serialiser wrote duplicate keys {dups:?}");
    v
}

fn tool_of(text: &str) -> Descriptor {
    descriptor(reparse(text).as_object().expect("an object"))
}

// ---------------------------------------------------------------------------
// Paths to string values, and edits at them

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn string_paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::String(_) => out.push(at.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Step::Index(i));
                string_paths(item, at, out);
                at.pop();
            }
        }
        Value::Object(o) => {
            for (k, item) in o.iter() {
                at.push(Step::Key(k.clone()));
                string_paths(item, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn edit_at(v: &Value, path: &[Step], f: &dyn Fn(&str) -> String) -> Value {
    match (path.first(), v) {
        (None, Value::String(s)) => Value::String(f(s)),
        (Some(Step::Index(i)), Value::Array(items)) => {
            let mut items = items.clone();
            items[*i] = edit_at(&items[*i], &path[1..], f);
            Value::Array(items)
        }
        (Some(Step::Key(k)), Value::Object(o)) => {
            let mut o = o.clone();
            let inner = edit_at(o.get(k).expect("path exists"), &path[1..], f);
            o.insert(k.clone(), inner);
            Value::Object(o)
        }
        _ => unreachable!("path was taken from this value"),
    }
}

fn string_at<'a>(v: &'a Value, path: &[Step]) -> &'a str {
    match (path.first(), v) {
        (None, Value::String(s)) => s,
        (Some(Step::Index(i)), Value::Array(items)) => string_at(&items[*i], &path[1..]),
        (Some(Step::Key(k)), Value::Object(o)) => string_at(o.get(k).expect("exists"), &path[1..]),
        _ => unreachable!("path was taken from this value"),
    }
}

fn insert_at_char(s: &str, at: Index, c: char) -> String {
    let n = s.chars().count();
    let i = at.index(n + 1);
    let mut out: String = s.chars().take(i).collect();
    out.push(c);
    out.extend(s.chars().skip(i));
    out
}

/// What the digest sees of a string: NFC, and trimmed of ASCII whitespace
/// (space, tab, LF, CR: not U+00A0, U+0085 or U+2028, which can conceal
/// text) for the top-level `description` and `title` (written here
/// independently of the crate).
fn seen_as(path: &[Step], s: &str) -> String {
    let top_text =
        path.len() == 1 && matches!(&path[0], Step::Key(k) if k == "description" || k == "title");
    if top_text {
        s.trim_matches([' ', '\t', '\n', '\r']).nfc().collect()
    } else {
        s.nfc().collect()
    }
}

fn top_field(path: &[Step]) -> &str {
    match &path[0] {
        Step::Key(k) => k,
        Step::Index(_) => unreachable!("a tool is an object"),
    }
}

// ---------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(config(256))]

    /// jcs(parse(jcs(x))) == jcs(x), and normalising twice changes nothing.
    #[test]
    fn canonical_form_is_idempotent(v in arb_value()) {
        let once = jcs(&v);
        let text = std::str::from_utf8(&once).expect("JCS is UTF-8");
        prop_assert_eq!(jcs(&reparse(text)), once.clone());

        let mut collisions = Vec::new();
        let n = normalize(&v, &mut String::new(), &mut collisions);
        prop_assert!(collisions.is_empty());
        let canon = jcs(&n);
        let again = normalize(&reparse(std::str::from_utf8(&canon).unwrap()), &mut String::new(), &mut collisions);
        prop_assert_eq!(jcs(&again), canon);
    }

    /// A descriptor rebuilt from its own canonical fields is the same
    /// descriptor (trimming and NFC are idempotent too).
    #[test]
    fn descriptor_canonicalisation_is_idempotent(tool in arb_tool()) {
        let d = descriptor(&tool);
        let text = String::from_utf8(jcs(&Value::Object(d.fields.clone()))).unwrap();
        let again = tool_of(&text);
        prop_assert_eq!(&again.digest, &d.digest);
        prop_assert_eq!(&again.field_digests, &d.field_digests);
        prop_assert_eq!(Descriptor::from_canonical(d.fields.clone()).digest, d.digest);
    }

    /// The same tool written differently (member order, whitespace,
    /// `\u` escapes, number spellings, NFD instead of NFC, padding around
    /// the description) has the same digest and sub-digests.
    #[test]
    fn digest_ignores_how_the_tool_is_written(tool in arb_tool(), seed in any::<u64>()) {
        let plain = serialise(&Value::Object(tool.clone()), &mut Style::plain());
        let a = tool_of(&plain);

        let mut variant = decomposed(&Value::Object(tool.clone()));
        if let Some(Value::String(d)) = tool.get("description") {
            let mut o = variant.as_object().unwrap().clone();
            o.insert("description".into(), Value::String(format!(" \n\t{}\r\n ", d.nfd().collect::<String>())));
            variant = Value::Object(o);
        }
        let wild = serialise(&variant, &mut Style::wild(seed));
        let b = tool_of(&wild);
        prop_assert_eq!(&a.digest, &b.digest, "\n{}\n{}", plain, wild);
        prop_assert_eq!(&a.field_digests, &b.field_digests);
    }

    /// Inserting one U+200B into any string value of a tool changes its
    /// digest and that field's sub-digest, and no other sub-digest.
    #[test]
    fn one_zero_width_character_changes_the_digest(tool in arb_tool(), which in any::<Index>(), at in any::<Index>()) {
        let v = Value::Object(tool);
        let mut paths = Vec::new();
        string_paths(&v, &mut Vec::new(), &mut paths);
        let path = which.get(&paths).clone();
        let changed = edit_at(&v, &path, &|s| insert_at_char(s, at, '\u{200B}'));
        let a = descriptor(v.as_object().unwrap());
        let b = descriptor(changed.as_object().unwrap());
        prop_assert_ne!(a.digest, b.digest);
        let field = top_field(&path);
        for (k, d) in &a.field_digests {
            if k == field {
                prop_assert_ne!(d, &b.field_digests[k]);
            } else {
                prop_assert_eq!(d, &b.field_digests[k]);
            }
        }
    }

    /// Replacing any string value with another that reads differently
    /// after NFC (and trimming, for description and title) changes the
    /// digest; one that reads the same does not.
    #[test]
    fn any_string_change_changes_the_digest(tool in arb_tool(), which in any::<Index>(), other in arb_string()) {
        let v = Value::Object(tool);
        let mut paths = Vec::new();
        string_paths(&v, &mut Vec::new(), &mut paths);
        let path = which.get(&paths).clone();
        let before = string_at(&v, &path).to_string();
        let changed = edit_at(&v, &path, &|_| other.clone());
        let a = descriptor(v.as_object().unwrap());
        let b = descriptor(changed.as_object().unwrap());
        let differs = seen_as(&path, &before) != seen_as(&path, &other);
        prop_assert_eq!(a.digest != b.digest, differs, "{:?} -> {:?} at {:?}", before, other, path);
        let field = top_field(&path);
        prop_assert_eq!(a.field_digests[field] != b.field_digests[field], differs);
    }

    /// Through the inventory reader: any tool order, any serialisation, and
    /// fields that are not digested (`_meta`, `icons`, `execution`) give
    /// the same per-tool digests.
    #[test]
    fn inventory_digests_ignore_tool_order_and_transport_fields(
        tools in proptest::collection::vec(arb_tool(), 1..5),
        seed in any::<u64>(),
    ) {
        let mut seen = std::collections::BTreeSet::new();
        let tools: Vec<Object> = tools
            .into_iter()
            .filter(|t| seen.insert(t.get("name").and_then(Value::as_str).unwrap().nfc().collect::<String>()))
            .collect();
        let capture = |tools: Vec<Value>| {
            let mut o = Object::new();
            o.insert("server".into(), Value::String("s".into()));
            o.insert("tools".into(), Value::Array(tools));
            Value::Object(o)
        };
        let plain = serialise(&capture(tools.iter().cloned().map(Value::Object).collect()), &mut Style::plain());

        let mut rng = Rng::new(seed);
        let mut shuffled: Vec<Value> = tools
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t.insert("_meta".into(), Value::String(format!("{}", rng.next())));
                t.insert("icons".into(), Value::Array(vec![Value::Null]));
                t.insert("execution".into(), Value::Bool(rng.one_in(2)));
                Value::Object(t)
            })
            .collect();
        for i in (1..shuffled.len()).rev() {
            let j = rng.below(i + 1);
            shuffled.swap(i, j);
        }
        let wild = serialise(&capture(shuffled), &mut Style::wild(seed));

        let a = read_tools(Path::new("plain.json"), plain.as_bytes(), None);
        let b = read_tools(Path::new("wild.json"), wild.as_bytes(), None);
        prop_assert_eq!(a.len(), tools.len());
        prop_assert_eq!(a, b);
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// `Lock::parse(lock.to_text())` gives the lock back, the text is a
    /// fixed point, and no invisible character is written raw.
    #[test]
    fn lock_text_round_trips(lock in arb_lock()) {
        let text = lock.to_text();
        let parsed = Lock::parse(&text).map_err(|e| TestCaseError::fail(format!("{e:?}\n{}", String::from_utf8_lossy(&text))))?;
        prop_assert_eq!(&parsed, &lock);
        prop_assert_eq!(parsed.to_text(), text.clone());
        // The fast reader keeps the same launches.
        let fast = Lock::parse_digests_only(std::sync::Arc::new(text.clone()))
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        for (name, server) in &lock.servers {
            prop_assert_eq!(&fast.servers[name].launch, &server.launch);
        }
        let s = String::from_utf8(text).expect("the lock is UTF-8");
        prop_assert!(s.ends_with("}\n"), "no final newline");
        let raw: Vec<char> = s.chars().filter(|&c| c != '\n' && is_concealing(c)).collect();
        prop_assert!(raw.is_empty(), "raw concealing characters {:?} in\n{}", raw, s);
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// The reader of large inventories (digests only, each tool's canonical
    /// text written as it is read, no tree) gives every tool the digests,
    /// and every server the ambiguities, that reading the tools into trees
    /// gives; on any serialisation, with keys repeated, and with errors.
    #[test]
    fn inventory_read_without_trees_digests_as_trees_do(
        tools in proptest::collection::vec(arb_tool(), 1..5),
        seed in any::<u64>(),
        repeat in any::<Option<Index>>(),
    ) {
        let capture = capture_of(&tools);
        let mut text = serialise(&capture, &mut Style::wild(seed));
        // A key of some object repeated with another value: the tree keeps
        // the last, and the reading reports it.
        if let Some(i) = repeat {
            let keys: Vec<usize> = text.match_indices("\":").map(|(i, _)| i + 2).collect();
            if !keys.is_empty() {
                let at = keys[i.index(keys.len())];
                let open = text[..at - 2].rfind(['{', ',']).expect("a key follows { or ,");
                let key = text[open + 1..at - 1].trim().to_string();
                text.insert_str(open + 1, &format!("{key}:null,"));
            }
        }
        let trees = parse_file(Path::new("t.json"), text.as_bytes(), &ReadOptions::default());
        let opts = ReadOptions { digests_only: true, ..ReadOptions::default() };
        let read = git_kams::inventory::read_in_memory(vec![(std::path::PathBuf::from("t.json"), text.clone().into_bytes())], &opts);
        match (trees, read) {
            (Ok(trees), Ok(read)) => {
                prop_assert_eq!(trees.len(), 1);
                let server = &read.servers[&trees[0].name];
                prop_assert_eq!(digests_of(&trees[0]), digests_of(server), "{}", text);
                prop_assert_eq!(&trees[0].ambiguities, &server.ambiguities, "{}", text);
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "trees {:?}, read {:?}\n{}", a.err(), b.err(), text),
        }
    }
}

/// Edits of an entry's members that a hand, a merge or an attacker might
/// make: each keeps the text JSON, and most make the entry wrong.
const ENTRY_EDITS: &[(&str, &str)] = &[
    ("\"pinned\"", "\"provisional\""),
    ("\"provisional\"", "\"pinned\""),
    ("\"state\": \"", "\"state\": \"x"),
    ("\"state\": ", "\"state\": \"pinned\", \"state\": "),
    ("\"digest\": ", "\"digest\": 1, \"d\": "),
    ("\"first_seen\": ", "\"extra\": 1, \"first_seen\": "),
    ("\"first_seen\": ", "\"first_seen\": null, \"f\": "),
    ("\"fields\": {", "\"fields\": 3, \"f\": {"),
    (
        "\"fields\": {",
        "\"fields\": {\"title\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\", ",
    ),
    ("\"approval\": {", "\"approval\": {\"x\": \"y\", "),
    ("\"approval\": {", "\"approval\": null, \"a\": {"),
    ("\"note\": ", "\"not\": "),
    ("\"note\": ", "\"note\": 5, \"n\": "),
    ("\"descriptor\": {", "\"descriptor\": { "),
    ("\"descriptor\": {", "\"descriptor\": {\"_meta\": 1, "),
    ("\"descriptor\": {", "\"descriptor\": [], \"e\": {"),
    // One hex digit of a digest: still well formed, no longer the text's.
    ("\"sha256:0", "\"sha256:1"),
    ("\"sha256:1", "\"sha256:0"),
    ("\"sha256:a", "\"sha256:b"),
    ("\"sha256:f", "\"sha256:e"),
];

/// `text` with occurrence `which` of edit `edit`'s pattern replaced; `None`
/// when the pattern does not occur.
fn edit_entry(text: &str, edit: usize, which: Index) -> Option<String> {
    let (from, to) = ENTRY_EDITS[edit];
    let at: Vec<usize> = text.match_indices(from).map(|(i, _)| i).collect();
    if at.is_empty() {
        return None;
    }
    let i = at[which.index(at.len())];
    Some(format!("{}{}{}", &text[..i], to, &text[i + from.len()..]))
}

proptest! {
    #![proptest_config(config(256))]

    /// The reader of large locks (digests only, each entry verified by
    /// hashing its text) takes what the strict reader takes, the same way,
    /// and refuses what it refuses with the same message: on a lock's text
    /// and on that text with one member of one entry edited.
    #[test]
    fn fast_and_strict_lock_readers_agree(
        lock in arb_lock(),
        edit in 0..ENTRY_EDITS.len() + 1,
        which in any::<Index>(),
    ) {
        let text = String::from_utf8(lock.to_text()).expect("the lock is UTF-8");
        let text = if edit == ENTRY_EDITS.len() {
            text
        } else {
            match edit_entry(&text, edit, which) {
                Some(t) => t,
                None => return Ok(()),
            }
        };
        let strict = Lock::parse(text.as_bytes());
        let fast = Lock::parse_digests_only(std::sync::Arc::new(text.clone().into_bytes()));
        match (strict, fast) {
            (Ok(mut strict), Ok(fast)) => {
                for server in strict.servers.values_mut() {
                    for e in server.server.iter_mut().chain(server.tools.values_mut()) {
                        e.descriptor.fields = Object::new();
                    }
                }
                prop_assert_eq!(strict, fast, "{}", text);
            }
            (Err(strict), Err(fast)) => prop_assert_eq!(strict, fast, "{}", text),
            (strict, fast) => prop_assert!(false, "strict {:?}, fast {:?}\n{}", strict.err(), fast.err(), text),
        }
    }
}

fn arb_entry(descriptor: Descriptor) -> impl Strategy<Value = Entry> {
    (
        prop_oneof![
            Just(State::Provisional),
            Just(State::Pinned),
            Just(State::Denied)
        ],
        arb_string(),
        arb_string(),
        arb_string(),
        arb_string(),
    )
        .prop_map(move |(state, first_seen, approver, at, note)| Entry {
            state,
            descriptor: descriptor.clone(),
            first_seen,
            approval: state
                .is_decided()
                .then_some(Approval { approver, at, note }.into()),
            lazy: Default::default(),
        })
}

fn arb_tool_entry() -> impl Strategy<Value = (String, Entry)> {
    arb_tool().prop_flat_map(|tool| {
        let d = descriptor(&tool);
        let name = d.get("name").and_then(Value::as_str).unwrap().to_string();
        arb_entry(d).prop_map(move |e| (name.clone(), e))
    })
}

fn arb_server_entry() -> impl Strategy<Value = Entry> {
    (
        proptest::option::of(arb_string()),
        proptest::option::of(arb_object()),
    )
        .prop_flat_map(|(instructions, info)| {
            let mut o = Object::new();
            if let Some(i) = instructions {
                o.insert("instructions".into(), Value::String(i));
            }
            if let Some(i) = info {
                o.insert("serverInfo".into(), Value::Object(i));
            }
            arb_entry(Descriptor::new(o).0)
        })
}

fn arb_lock() -> impl Strategy<Value = Lock> {
    proptest::collection::vec(
        (
            // Any text a server name may be: no `/`, not blank.
            arb_string().prop_map(|s| {
                let s = s.replace('/', "_");
                if s.trim().is_empty() {
                    format!("s{s}")
                } else {
                    s
                }
            }),
            // A launch is data the config wrote: any object, any strings.
            proptest::option::of((
                arb_object().prop_map(Value::Object),
                proptest::option::of((arb_string(), arb_string(), arb_string())),
                // The configs it came from: distinct file names, in order.
                proptest::collection::btree_set("[a-z./_-]{1,12}", 0..3),
            )),
            proptest::option::of(arb_server_entry()),
            proptest::collection::vec(arb_tool_entry(), 0..4),
        ),
        0..4,
    )
    .prop_map(|servers| {
        let mut lock = Lock::default();
        for (name, launch, server, tools) in servers {
            lock.servers.insert(
                name,
                LockServer {
                    launch_approval: launch.as_ref().and_then(|(_, a, _)| {
                        a.clone()
                            .map(|(approver, at, note)| Approval { approver, at, note }.into())
                    }),
                    launch_configs: launch
                        .as_ref()
                        .map(|(_, _, c)| c.iter().cloned().collect())
                        .unwrap_or_default(),
                    launch: launch.map(|(l, _, _)| l),
                    server,
                    tools: tools.into_iter().collect(),
                },
            );
        }
        lock
    })
}

// ---------------------------------------------------------------------------
// The real corpus, read two ways

type ToolDigests = BTreeMap<String, (Digest, git_kams::descriptor::FieldDigests)>;

fn digests_of(server: &Server) -> ToolDigests {
    server
        .tools
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                (t.descriptor.digest, t.descriptor.field_digests.clone()),
            )
        })
        .collect()
}

/// Reads one inventory file of one server without ambiguity, by tool.
fn read_tools(path: &Path, bytes: &[u8], server: Option<&str>) -> ToolDigests {
    let opts = ReadOptions {
        server: server.map(str::to_string),
        ..ReadOptions::default()
    };
    let servers = parse_file(path, bytes, &opts)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)));
    assert_eq!(servers.len(), 1, "{}", path.display());
    assert!(
        servers[0].ambiguities.is_empty(),
        "{}: {:?}",
        path.display(),
        servers[0].ambiguities
    );
    digests_of(&servers[0])
}

/// Every `real/raw/<stem>.tools-list.jsonl` with its pretty `real/<stem>.json`.
fn raw_and_pretty() -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let real = corpus().join("real");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(real.join("raw")).expect("corpus real/raw") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".tools-list.jsonl") else {
            continue;
        };
        let pretty = std::fs::read(real.join(format!("{stem}.json")))
            .unwrap_or_else(|e| panic!("pretty capture of {stem}: {e}"));
        out.push((stem.to_string(), std::fs::read(&path).unwrap(), pretty));
    }
    out.sort();
    assert!(out.len() >= 29, "corpus real/raw has {} files", out.len());
    out
}

#[test]
fn raw_tools_list_lines_digest_like_the_pretty_captures() {
    let mut tools = 0;
    for (stem, raw, pretty) in raw_and_pretty() {
        let a = read_tools(
            Path::new(&format!("{stem}.tools-list.jsonl")),
            &raw,
            Some(&stem),
        );
        let b = read_tools(Path::new(&format!("{stem}.json")), &pretty, None);
        assert!(!a.is_empty(), "{stem}: no tools");
        // The raw bytes really differ from the pretty file's tools: the test
        // compares two serialisations, not one file with itself.
        assert_ne!(raw, pretty, "{stem}");
        assert_eq!(a, b, "{stem}: raw and pretty digests differ");
        tools += a.len();
    }
    assert!(tools > 200, "only {tools} tools compared");
}

#[test]
fn tool_order_does_not_change_real_tool_digests() {
    for (stem, raw, _) in raw_and_pretty() {
        let base = read_tools(Path::new("raw.jsonl"), &raw, Some(&stem));
        let (v, dups) = json::parse(&raw).expect("raw line parses");
        assert!(dups.is_empty());
        let result = v.get("result").and_then(Value::as_object).unwrap();
        let list = result.get("tools").and_then(Value::as_array).unwrap();
        let n = list.len();
        let mut rng = Rng::new(n as u64);
        let mut random: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.below(i + 1);
            random.swap(i, j);
        }
        let orders: [Vec<usize>; 3] = [
            (0..n).rev().collect(),
            (0..n).map(|i| (i + 1) % n).collect(),
            random,
        ];
        for order in &orders {
            let shuffled: Vec<Value> = order.iter().map(|&i| list[i].clone()).collect();
            let mut r = result.clone();
            r.insert("tools".into(), Value::Array(shuffled));
            let mut top = v.as_object().unwrap().clone();
            top.insert("result".into(), Value::Object(r));
            let text = serialise(&Value::Object(top), &mut Style::plain());
            let again = read_tools(Path::new("shuffled.jsonl"), text.as_bytes(), Some(&stem));
            assert_eq!(base, again, "{stem}");
        }
    }
}

/// Description and title lose ASCII whitespace at their edges, and
/// nothing else: U+00A0, U+0085, U+2028, U+2000 and U+3000 can conceal a
/// line break or a gap and must reach the digest.
#[test]
fn only_ascii_whitespace_around_text_fields_is_ignored() {
    let tool = |field: &str, text: &str| {
        let mut o = Object::new();
        o.insert("name".into(), Value::String("t".into()));
        o.insert(field.into(), Value::String(text.into()));
        descriptor(&o)
    };
    for field in ["description", "title"] {
        let base = tool(field, "Reads a file.");
        for pad in [" ", "\t", "\n", "\r", " \r\n\t "] {
            for padded in [format!("{pad}Reads a file."), format!("Reads a file.{pad}")] {
                assert_eq!(
                    tool(field, &padded).digest,
                    base.digest,
                    "{field} {padded:?}"
                );
            }
        }
        for pad in [
            '\u{A0}', '\u{85}', '\u{2028}', '\u{2029}', '\u{2000}', '\u{3000}', '\u{B}', '\u{C}',
        ] {
            for padded in [format!("{pad}Reads a file."), format!("Reads a file.{pad}")] {
                let d = tool(field, &padded);
                assert_ne!(d.digest, base.digest, "{field} {padded:?}");
                assert_ne!(d.field_digests[field], base.field_digests[field]);
            }
        }
    }
    // Elsewhere nothing is trimmed, ASCII space included.
    let mut o = Object::new();
    o.insert("name".into(), Value::String("t ".into()));
    let mut p = Object::new();
    p.insert("name".into(), Value::String("t".into()));
    assert_ne!(descriptor(&o).digest, descriptor(&p).digest);
}

/// A number written `1.0` in an inventory keeps its lexeme in the
/// descriptor while the lock writes it as `1`. When numbers compared by
/// lexeme, the lock did not round-trip and a scan after any other change
/// reported "default changed, old: 1, new: 1".
#[test]
fn lock_round_trips_a_descriptor_with_numbers_written_differently() {
    let (v, _) = json::parse(
        br#"{"name":"t","inputSchema":{"type":"object","properties":{"n":{"default":1.0,"maximum":1E1}}}}"#,
    )
    .unwrap();
    let d = descriptor(v.as_object().unwrap());
    let mut lock = Lock::default();
    let mut s = LockServer::default();
    s.tools.insert(
        "t".into(),
        Entry {
            state: State::Provisional,
            descriptor: d,
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: None,
            lazy: Default::default(),
        },
    );
    lock.servers.insert("s".into(), s);
    assert_eq!(Lock::parse(&lock.to_text()).unwrap(), lock);
}

/// A lock derived from `base` as a branch would change it: per server (by
/// `edits`, cycling) kept, dropped, stripped of its launch, stripped of
/// a tool, or replaced; plus the servers of `added` (new ones, or changes
/// when a name is already there).
fn branch(base: &Lock, added: &Lock, edits: &[u8]) -> Lock {
    let mut lock = Lock::default();
    let replacement = added.servers.values().next();
    for (i, (name, server)) in base.servers.iter().enumerate() {
        let mut server = server.clone();
        match edits.get(i % edits.len().max(1)).copied().unwrap_or(0) % 5 {
            1 => continue,
            2 => {
                (server.launch, server.launch_approval) = (None, None);
                server.launch_configs.clear();
            }
            3 => {
                let first = server.tools.keys().next().cloned();
                if let Some(t) = first {
                    server.tools.remove(&t);
                }
            }
            4 => {
                if let Some(r) = replacement {
                    server = r.clone();
                }
            }
            _ => {}
        }
        lock.servers.insert(name.clone(), server);
    }
    for (name, server) in &added.servers {
        lock.servers.insert(name.clone(), server.clone());
    }
    lock
}

fn arb_branches() -> impl Strategy<Value = (Lock, Lock, Lock)> {
    (
        arb_lock(),
        arb_lock(),
        arb_lock(),
        proptest::collection::vec(any::<u8>(), 0..6),
        proptest::collection::vec(any::<u8>(), 0..6),
    )
        .prop_map(|(base, x, y, ex, ey)| {
            // The extra servers are mostly new, sometimes the same on both
            // sides (and then the same change, never a conflict).
            let a = branch(&base, &x, &ex);
            let b = branch(&base, if ey.first() == Some(&0) { &x } else { &y }, &ey);
            (base, a, b)
        })
}

proptest! {
    #![proptest_config(config(96))]

    /// The merge driver's merge: taking the same lock from both sides, or
    /// a change from one side only, gives that lock; and which side is
    /// "ours" does not matter unless there is a conflict.
    #[test]
    fn lock_merge_is_an_identity_on_one_sided_changes_and_commutes((base, a, b) in arb_branches()) {
        for x in [&a, &b] {
            for m in [merge(&base, x, x), merge(&base, &base, x), merge(&base, x, &base)] {
                prop_assert!(m.conflicts.is_empty(), "{:?}", m.conflicts);
                prop_assert_eq!(&m.lock, x);
            }
        }
        let (ab, ba) = (merge(&base, &a, &b), merge(&base, &b, &a));
        prop_assert_eq!(ab.conflicts.len(), ba.conflicts.len());
        if ab.conflicts.is_empty() {
            prop_assert_eq!(&ab.lock, &ba.lock);
            // A clean merge has every side's change: what one side changed
            // from base is in the merge as that side has it.
            for side in [&a, &b] {
                for (name, server) in &side.servers {
                    if base.servers.get(name) != Some(server) {
                        let merged = ab.lock.servers.get(name);
                        for (tool, e) in &server.tools {
                            if base.servers.get(name).and_then(|s| s.tools.get(tool)) != Some(e) {
                                prop_assert_eq!(merged.and_then(|s| s.tools.get(tool)), Some(e));
                            }
                        }
                    }
                }
            }
        }
        // Every merge, conflicted or not, is a lock the reader takes back.
        prop_assert_eq!(&Lock::parse(&ab.lock.to_text()).expect("valid"), &ab.lock);
    }
}

// ---------------------------------------------------------------------------
// Every value counts; the binary agrees with itself

/// What an edit at a path does to the value there.
#[derive(Clone, Copy, Debug)]
enum Edit {
    /// Another number, bool or null (a different canonical leaf).
    Leaf,
    /// A new member in an object.
    AddKey,
    /// One member fewer in an object.
    RemoveKey,
}

/// Paths to every number, bool and null, and to every object, below the
/// tool's own members (a new member of the tool itself is a transport
/// field, ignored by design).
fn edit_paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, Edit)>) {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => out.push((at.clone(), Edit::Leaf)),
        Value::String(_) => {}
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Step::Index(i));
                edit_paths(item, at, out);
                at.pop();
            }
        }
        Value::Object(o) => {
            if !at.is_empty() {
                out.push((at.clone(), Edit::AddKey));
                if !o.is_empty() {
                    out.push((at.clone(), Edit::RemoveKey));
                }
            }
            for (k, item) in o.iter() {
                at.push(Step::Key(k.clone()));
                edit_paths(item, at, out);
                at.pop();
            }
        }
    }
}

/// `v` with `f` applied to the value at `path`.
fn edit_value(v: &Value, path: &[Step], f: &dyn Fn(&Value) -> Value) -> Value {
    match (path.first(), v) {
        (None, _) => f(v),
        (Some(Step::Index(i)), Value::Array(items)) => {
            let mut items = items.clone();
            items[*i] = edit_value(&items[*i], &path[1..], f);
            Value::Array(items)
        }
        (Some(Step::Key(k)), Value::Object(o)) => {
            let mut o = o.clone();
            let inner = edit_value(o.get(k).expect("path exists"), &path[1..], f);
            o.insert(k.clone(), inner);
            Value::Object(o)
        }
        _ => unreachable!("path was taken from this value"),
    }
}

fn edited(v: &Value, edit: Edit) -> Value {
    match (edit, v) {
        (Edit::Leaf, Value::Bool(b)) => Value::Bool(!b),
        (Edit::Leaf, Value::Null) => Value::Bool(false),
        (Edit::Leaf, Value::Number(_)) => {
            // A number whose canonical text differs (`-0` reads as `0`).
            let old = jcs(v);
            [1.0, 2.0, -1.0, 0.5]
                .into_iter()
                .map(|f| Value::Number(Number::from_f64(f).unwrap()))
                .find(|c| jcs(c) != old)
                .expect("one of four differs")
        }
        (Edit::AddKey, Value::Object(o)) => {
            let mut o = o.clone();
            let mut key = String::from("added");
            while o.iter().any(|(k, _)| k.nfc().eq(key.chars())) {
                key.push('+');
            }
            o.insert(key, Value::Null);
            Value::Object(o)
        }
        (Edit::RemoveKey, Value::Object(o)) => Value::Object(
            o.iter()
                .skip(1)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        _ => unreachable!("edit {edit:?} of {v:?}"),
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// The canonical text of a normalised value parses back to that value.
    #[test]
    fn jcs_text_parses_back_to_the_normalised_value(v in arb_value()) {
        let n = normalize(&v, &mut String::new(), &mut Vec::new());
        let text = jcs(&n);
        prop_assert_eq!(reparse(std::str::from_utf8(&text).expect("UTF-8")), n);
    }

    /// Changing any number, bool or null, or adding or removing a member
    /// of any object inside a field, changes the digest and that field's
    /// sub-digest, and no other sub-digest.
    #[test]
    fn any_leaf_or_member_change_changes_the_digest(tool in arb_tool(), which in any::<Index>()) {
        let v = Value::Object(tool);
        let mut paths = Vec::new();
        edit_paths(&v, &mut Vec::new(), &mut paths);
        prop_assume!(!paths.is_empty());
        let (path, edit) = which.get(&paths).clone();
        let changed = edit_value(&v, &path, &|x| edited(x, edit));
        let a = descriptor(v.as_object().unwrap());
        let b = descriptor(changed.as_object().unwrap());
        prop_assert_ne!(a.digest, b.digest, "{:?} at {:?}", edit, path);
        let field = top_field(&path);
        for (k, d) in &a.field_digests {
            prop_assert_eq!(d != &b.field_digests[k], k == field, "{}", k);
        }
    }

    /// Through the inventory reader, a capture written with every
    /// variation at once (member and tool order, whitespace, escapes,
    /// number spellings, NFD) gives the digests of the plain capture.
    #[test]
    fn inventory_digests_ignore_serialisation_and_normal_form(
        tools in proptest::collection::vec(arb_tool(), 1..4),
        seed in any::<u64>(),
    ) {
        let tools = distinct(tools);
        let plain = serialise(&capture_of(&tools), &mut Style::plain());
        let nfd: Vec<Object> = tools
            .iter()
            .rev()
            .map(|t| decomposed(&Value::Object(t.clone())).as_object().unwrap().clone())
            .collect();
        let wild = serialise(&capture_of(&nfd), &mut Style::wild(seed));
        prop_assert_eq!(
            read_tools(Path::new("plain.json"), plain.as_bytes(), None),
            read_tools(Path::new("wild.json"), wild.as_bytes(), None)
        );
    }
}

/// Tools whose names differ after NFC (the same name twice is ambiguous,
/// tested elsewhere).
fn distinct(tools: Vec<Object>) -> Vec<Object> {
    let mut seen = std::collections::BTreeSet::new();
    tools
        .into_iter()
        .filter(|t| {
            seen.insert(
                t.get("name")
                    .and_then(Value::as_str)
                    .unwrap()
                    .nfc()
                    .collect::<String>(),
            )
        })
        .collect()
}

/// A capture file of server `s` holding `tools`.
fn capture_of(tools: &[Object]) -> Value {
    let mut o = Object::new();
    o.insert("server".into(), Value::String("s".into()));
    o.insert(
        "tools".into(),
        Value::Array(tools.iter().cloned().map(Value::Object).collect()),
    );
    Value::Object(o)
}

proptest! {
    // Each case runs the binary twice.
    #![proptest_config(config(16))]

    /// `record` then `scan` of the same inventory, written any way, finds
    /// nothing changed: the lock keeps exactly what was read.
    #[test]
    fn scan_after_record_finds_no_drift(
        tools in proptest::collection::vec(arb_tool(), 1..4),
        seed in any::<u64>(),
    ) {
        let tools = distinct(tools);
        let dir = tempfile::tempdir().unwrap();
        let text = serialise(&capture_of(&tools), &mut Style::wild(seed));
        std::fs::write(dir.path().join("inv.json"), &text).unwrap();
        let run = |command: &[&str]| {
            crate::common::kams(dir.path())
                .args(["--lock", "kams.lock", "--inventory", "inv.json", "--format", "json"])
                .args(command)
                .output()
                .expect("git-kams runs")
        };
        let out = run(&["record"]);
        prop_assert_eq!(out.status.code(), Some(0), "{}\n{}", String::from_utf8_lossy(&out.stderr), text);
        let out = run(&["scan", "--fail-on", "never"]);
        prop_assert_eq!(out.status.code(), Some(0), "{}\n{}", String::from_utf8_lossy(&out.stderr), text);
        let report = crate::common::json(&out.stdout);
        let moved: Vec<&serde_json::Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| matches!(f["class"].as_str(), Some("drift" | "added" | "removed")))
            .collect();
        prop_assert!(moved.is_empty(), "{:?}\n{}", moved, text);
    }
}
