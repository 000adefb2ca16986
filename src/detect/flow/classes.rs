//! What a tool can do: the capability classes of `rules/capabilities.toml`
//! (compiled by build.rs), read from the words of its name, from what its
//! description and input schema say (the file's `[[content]]` rules) and
//! from its annotations, for toxic flows and for `status`.
//!
//! The classes are a function of the tool's canonical field texts alone
//! ([`Capabilities::of_texts`], which [`crate::descriptor::Descriptor`]
//! calls where it digests them): however an inventory or a lock was read,
//! tree, stream or index, the same text gets the same classes, and the
//! index keeps them next to the digests. Hand-written: the rules are a few
//! word lists, parameter names and phrases; no crate classifies tools. The
//! phrases are found with an `aho-corasick` automaton and the schema's
//! keys with `memchr`, so a description and a schema are each read in one
//! pass. Names are cut into words as every detector cuts identifiers
//! ([`crate::detect::text::identifier_words`]).

use crate::detect::text::identifier_words_joined;

/// One class's rules, as build.rs writes them.
#[derive(Debug)]
pub struct ClassRules {
    /// Kebab-case name, as findings and JSON show it.
    pub name: &'static str,
    /// One letter, for the `CAN` column of `status`.
    pub letter: char,
    /// What the class means.
    pub doc: &'static str,
    /// Names that are in the class as a whole.
    pub whole: &'static [&'static str],
    /// Words that put a name in the class on their own.
    pub alone: &'static [&'static str],
    /// Words that put a name in the class with a word of `objects`.
    pub verbs: &'static [&'static str],
    /// Words that put a name in the class with a word of `verbs`.
    pub objects: &'static [&'static str],
    /// Whole names never in the class.
    pub except: &'static [&'static str],
    /// Names that must be in the class (the table-driven test).
    pub fires: &'static [&'static str],
    /// Names that must not be.
    pub quiet: &'static [&'static str],
}

/// One rule that reads a tool's description and schema, as build.rs
/// writes it.
#[derive(Debug)]
pub struct ContentRules {
    /// Kebab-case name, for the rules' test.
    pub name: &'static str,
    /// The classes a tool the rule holds for takes.
    pub classes: &'static [&'static str],
    /// What the rule means.
    pub doc: &'static str,
    /// Property names of the input schema, one of which must be there
    /// (none given: no condition).
    pub parameters: &'static [&'static str],
    /// Phrases, one of which the description must hold (none given: no
    /// condition).
    pub phrases: &'static [&'static str],
    /// Tools (JSON) that must take the classes (the table-driven test).
    pub fires: &'static [&'static str],
    /// Tools that must not.
    pub quiet: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/capability_rules.rs"));

/// The class that writes, changes or deletes.
pub const WRITES: &str = "writes";
/// The class that reads private data.
pub const READS_PRIVATE: &str = "reads-private";
/// The class that takes in content others wrote.
pub const TAKES_UNTRUSTED: &str = "takes-untrusted";
/// The class that sends data out.
pub const SENDS_OUT: &str = "sends-out";

/// The bit of the class named `name` in [`Capabilities::bits`] (0 for
/// no class of the file).
pub fn bit(name: &str) -> u8 {
    CLASSES
        .iter()
        .position(|c| c.name == name)
        .map_or(0, |i| 1 << i)
}

/// A set of classes, a bit per class of [`CLASSES`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities(u8);

impl Capabilities {
    /// The classes of a tool whose digested fields have the canonical
    /// texts `texts` (field name and text, as
    /// [`crate::descriptor::Descriptor::of_texts`] is given them): those of
    /// its name ([`Capabilities::of`]) and of the content rules its
    /// description and input schema meet; and `writes` when its
    /// annotations say `destructiveHint: true` and not `readOnlyHint:
    /// true` (the MCP specification gives a destructive hint meaning only
    /// on a tool that is not read-only). A read-only hint never takes a
    /// class away: a server's word that its `move_file` is read-only is
    /// what a lying annotation says (the poison detector reports it), and
    /// must not hide what the tool can do. Texts without a name (a
    /// server's) have no class.
    pub fn of_texts(texts: &[(&str, &[u8])]) -> Capabilities {
        let field = |name: &str| texts.iter().find(|(f, _)| *f == name).map(|(_, t)| *t);
        let Some(name) = field("name").and_then(json_string) else {
            return Capabilities::default();
        };
        let mut can = Capabilities::of(&name).0;
        let content = content();
        // The rules whose phrases hold (or that give none); then the
        // schema is read only when one of them also asks for a parameter:
        // few descriptions hold a phrase, every tool has a schema.
        let phrases = field("description").map_or(0, |t| content.phrases(t));
        let said = phrases | content.no_phrases;
        let params = match said & content.with_params {
            0 => 0,
            _ => field("inputSchema").map_or(0, |t| content.parameters(t)),
        };
        let held = said & (params | !content.with_params);
        for (i, classes) in content.classes.iter().enumerate() {
            if held & (1u32 << i) != 0 {
                can |= classes;
            }
        }
        let hints = field("annotations").map(hints).unwrap_or_default();
        if hints.destructive && !hints.read_only {
            can |= bit(WRITES);
        }
        Capabilities(can)
    }

    /// The set of `bits` as [`Capabilities::bits`] gave them; `None` when a
    /// bit is no class of the file (a record written by another build).
    pub fn from_bits(bits: u8) -> Option<Capabilities> {
        let all = (1u16 << CLASSES.len()) - 1;
        (u16::from(bits) & !all == 0).then_some(Capabilities(bits))
    }

    /// The classes the words of a tool's name give it (a whole name of a
    /// class, a word that counts alone, or a verb and an object).
    pub fn of(name: &str) -> Capabilities {
        let table = table();
        // The whole name as the rules write whole names: its words joined
        // with `_` (which no word holds).
        let joined = identifier_words_joined(name);
        let whole = table
            .whole
            .get(joined.as_str())
            .copied()
            .unwrap_or_default();
        let (mut alone, mut verbs, mut objects) = (0u8, 0u8, 0u8);
        // Per class, the first word that is a verb or an object of it, and
        // whether another word is too: a verb and an object that are one
        // word (`post`, `query`) make no pair.
        let mut first: [Option<usize>; 8] = [None; 8];
        let mut two = 0u8;
        for (i, word) in joined.split('_').filter(|w| !w.is_empty()).enumerate() {
            let bits = table.word.get(word).copied().unwrap_or_default();
            // Every plural ends in -s.
            let plural = match word.ends_with('s') {
                true => table.plural.get(word).copied().unwrap_or_default(),
                false => 0,
            };
            alone |= bits.alone;
            verbs |= bits.verb;
            objects |= bits.object | plural;
            for (c, seen) in first.iter_mut().enumerate().take(CLASSES.len()) {
                if (bits.verb | bits.object | plural) & (1 << c) == 0 {
                    continue;
                }
                match seen {
                    None => *seen = Some(i),
                    Some(_) => two |= 1 << c,
                }
            }
        }
        // With a verb and an object of a class among two or more words,
        // some verb and some object are two different words.
        let pairs = verbs & objects & two;
        Capabilities((whole.set | alone | pairs) & !whole.except)
    }

    /// Whether the class named `name` is in the set.
    pub fn has(self, name: &str) -> bool {
        self.0 & bit(name) != 0
    }

    /// The set as bits, a bit per class ([`bit`]).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Both sets together.
    pub fn union(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }

    /// The names of the classes in the set, in the file's order.
    pub fn names(self) -> Vec<&'static str> {
        CLASSES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, c)| c.name)
            .collect()
    }

    /// A letter per class of the file, `-` for one not in the set
    /// (`R-SW`); every set's text is made once (status writes one per
    /// entry).
    pub fn letters(self) -> &'static str {
        static ALL: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let all = ALL.get_or_init(|| {
            (0..1u16 << CLASSES.len())
                .map(|bits| {
                    CLASSES
                        .iter()
                        .enumerate()
                        .map(|(i, c)| if bits & (1 << i) != 0 { c.letter } else { '-' })
                        .collect()
                })
                .collect()
        });
        &all[usize::from(self.0)]
    }
}

/// What a word or a whole name means to each class, a bit per class.
#[derive(Clone, Copy, Default)]
struct Bits {
    alone: u8,
    verb: u8,
    object: u8,
}

/// What a whole name means to each class.
#[derive(Clone, Copy, Default)]
struct Whole {
    set: u8,
    except: u8,
}

type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// The rules as look-up tables: every word of every list, every plural of
/// an object (-s, -es, and y as -ies), every whole name.
struct Table {
    word: Map<&'static str, Bits>,
    plural: Map<String, u8>,
    whole: Map<&'static str, Whole>,
}

/// The tables, built once per process from [`CLASSES`].
fn table() -> &'static Table {
    static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut word: Map<&'static str, Bits> = Default::default();
        let mut plural: Map<String, u8> = Default::default();
        let mut whole: Map<&'static str, Whole> = Default::default();
        for (i, c) in CLASSES.iter().enumerate() {
            let bit = 1u8 << i;
            for w in c.alone {
                word.entry(w).or_default().alone |= bit;
            }
            for w in c.verbs {
                word.entry(w).or_default().verb |= bit;
            }
            for w in c.objects {
                word.entry(w).or_default().object |= bit;
                let ies = w.strip_suffix('y').map(|stem| format!("{stem}ies"));
                for p in [format!("{w}s"), format!("{w}es")].into_iter().chain(ies) {
                    *plural.entry(p).or_default() |= bit;
                }
            }
            for w in c.whole {
                whole.entry(w).or_default().set |= bit;
            }
            for w in c.except {
                whole.entry(w).or_default().except |= bit;
            }
        }
        Table {
            word,
            plural,
            whole,
        }
    })
}

/// The value of a JSON string's canonical text (a name), `None` for a
/// text that is no string.
fn json_string(text: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner)
            .ok()
            .map(std::borrow::Cow::Borrowed);
    }
    let mut r = crate::json::Reader::new(text, 1).ok()?;
    r.string().ok()?
}

/// What a tool's annotations say of writing.
#[derive(Default)]
struct Hints {
    read_only: bool,
    destructive: bool,
}

/// The top-level `readOnlyHint` and `destructiveHint` of an annotations
/// object's canonical text.
fn hints(text: &[u8]) -> Hints {
    let mut out = Hints::default();
    if memchr::memmem::find(text, b"Hint\":true").is_none() {
        return out;
    }
    let Ok(mut r) = crate::json::Reader::new(text, crate::json::MAX_DEPTH) else {
        return out;
    };
    let _ = r.object(|r, key| -> Result<(), crate::json::ParseError> {
        let flag = match key {
            "readOnlyHint" => &mut out.read_only,
            "destructiveHint" => &mut out.destructive,
            _ => return r.skip(),
        };
        *flag = r.peek() == Some(b't');
        r.skip()
    });
    out
}

/// The content rules made ready to read texts: the parameters as names
/// to compare a schema's keys with, the phrases by an anchor word each.
///
/// A phrase is found from its first word that is no common word (`web`
/// of `from the web`, `urls` of `and urls`): one automaton finds those
/// anchors in a description, in lower case, capitalised or, when short,
/// in capitals (`URL`, `REPL`, `URLs`), and each phrase an anchor starts
/// is then compared where it would stand, case ignored. An automaton of
/// the whole phrases would stop at every "the" and "and" of every
/// description: a cold scan reads about 38 MB of them (the inventory's
/// and the lock's).
struct Content {
    /// Every parameter name and the rules (a bit each) it belongs to.
    params: Vec<(&'static str, u32)>,
    /// The end of a key that holds an object (`":{`), made ready once.
    keys: memchr::memmem::Finder<'static>,
    anchors: aho_corasick::AhoCorasick,
    /// Per pattern of `anchors`, the anchor it writes.
    anchor_of: Vec<usize>,
    /// Per anchor, the spellings of the phrases it anchors:
    /// the spelling, where the anchor stands in it, and its rules.
    spelled: Vec<Vec<(String, usize, u32)>>,
    /// Per rule, its classes as bits.
    classes: Vec<u8>,
    /// The rules that give no phrase.
    no_phrases: u32,
    /// The rules that give parameters.
    with_params: u32,
}

/// Words too common to anchor a phrase.
const COMMON: [&str; 10] = [
    "a", "an", "and", "any", "from", "in", "of", "or", "the", "to",
];

/// The automata, built once per process from [`CONTENT`].
fn content() -> &'static Content {
    static CONTENT_RULES: std::sync::OnceLock<Content> = std::sync::OnceLock::new();
    CONTENT_RULES.get_or_init(|| {
        assert!(CONTENT.len() <= 32, "a rule is a bit of a u32");
        let mut params: Vec<(&'static str, u32)> = Vec::new();
        let mut anchors: Vec<&'static str> = Vec::new();
        let mut spelled: Vec<Vec<(String, usize, u32)>> = Vec::new();
        for (i, rule) in CONTENT.iter().enumerate() {
            for p in rule.parameters {
                match params.iter_mut().find(|(name, _)| name == p) {
                    Some((_, rules)) => *rules |= 1u32 << i,
                    None => params.push((p, 1u32 << i)),
                }
            }
            for phrase in rule.phrases {
                let words: Vec<&'static str> = phrase.split(' ').collect();
                let k = words.iter().position(|w| !COMMON.contains(w)).unwrap_or(0);
                // One separator byte between words, whichever it is.
                let offset = words[..k].iter().map(|w| w.len() + 1).sum::<usize>();
                let at = match anchors.iter().position(|a| *a == words[k]) {
                    Some(at) => at,
                    None => {
                        anchors.push(words[k]);
                        spelled.push(Vec::new());
                        anchors.len() - 1
                    }
                };
                for spelling in spellings(phrase) {
                    match spelled[at].iter_mut().find(|(s, _, _)| *s == spelling) {
                        Some((_, _, rules)) => *rules |= 1u32 << i,
                        None => spelled[at].push((spelling, offset, 1u32 << i)),
                    }
                }
            }
        }
        // Each anchor as it is written: in lower case, capitalised, and in
        // capitals when it is short (`URL`, `REPL`, and `URLs`). Matched as
        // written: an automaton that ignored case would have no prefilter
        // and step through every byte; past 64 patterns the prefilter
        // (Teddy) is lost as well (docs/performance.md).
        let (mut anchor_patterns, mut anchor_of) = (Vec::new(), Vec::new());
        for (at, a) in anchors.iter().enumerate() {
            let mut capital = a.to_string();
            capital[..1].make_ascii_uppercase();
            let short = (a.len() <= 4).then(|| a.to_ascii_uppercase());
            let plural = a
                .strip_suffix('s')
                .filter(|stem| stem.len() <= 4)
                .map(|stem| format!("{}s", stem.to_ascii_uppercase()));
            for written in [a.to_string(), capital]
                .into_iter()
                .chain(short)
                .chain(plural)
            {
                if !anchor_patterns.contains(&written) {
                    anchor_patterns.push(written);
                    anchor_of.push(at);
                }
            }
        }
        Content {
            params,
            keys: memchr::memmem::Finder::new(b"\":{"),
            anchors: aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(&anchor_patterns)
                .expect("the content rules compile"),
            anchor_of,
            spelled,
            classes: CONTENT
                .iter()
                .map(|r| r.classes.iter().fold(0u8, |m, c| m | bit(c)))
                .collect(),
            no_phrases: rules_where(|r| r.phrases.is_empty()),
            with_params: rules_where(|r| !r.parameters.is_empty()),
        }
    })
}

/// The rules (a bit each) of which `test` holds.
fn rules_where(test: impl Fn(&ContentRules) -> bool) -> u32 {
    CONTENT
        .iter()
        .enumerate()
        .filter(|(_, r)| test(r))
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// A phrase as it may be written: its words a space or a hyphen apart.
fn spellings(phrase: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for (i, word) in phrase.split(' ').enumerate() {
        if i == 0 {
            out[0].push_str(word);
            continue;
        }
        out = out
            .into_iter()
            .flat_map(|p| [format!("{p} {word}"), format!("{p}-{word}")])
            .collect();
    }
    out
}

impl Content {
    /// The rules (a bit each) one of whose parameters the canonical
    /// schema `text` has as a property: the key of an object, at any depth
    /// (`{"url":{` or `,"url":{`: canonical JSON has no space). Found by
    /// the end of every key that holds an object (`":{`), a few per
    /// schema, and the key read back to its opening quote (a key with an
    /// escaped quote is no parameter name).
    fn parameters(&self, text: &[u8]) -> u32 {
        let mut rules = 0;
        for end in self.keys.find_iter(text) {
            let Some(open) = memchr::memrchr(b'"', &text[..end]) else {
                continue;
            };
            if open == 0 || !matches!(text[open - 1], b'{' | b',') {
                continue;
            }
            let key = &text[open + 1..end];
            for (name, of) in &self.params {
                if name.as_bytes() == key {
                    rules |= of;
                }
            }
        }
        rules
    }

    /// The rules one of whose phrases the canonical description `text`
    /// holds as whole words: no letter or digit on either side, an escape
    /// (`\n`) counting as none.
    fn phrases(&self, text: &[u8]) -> u32 {
        let word = |b: u8| b.is_ascii_alphanumeric();
        let starts = |start: usize| match start {
            0 => true,
            _ if !word(text[start - 1]) => true,
            // `\n`, `\t`: the escape's letter is no word.
            1 => false,
            _ => text[start - 2] == b'\\' && text[start - 1].is_ascii_alphabetic(),
        };
        let mut rules = 0;
        // Leftmost-longest, not overlapping: where a longer anchor stands
        // (`webpages`), a shorter one it begins with (`web`) is followed by
        // a letter, and no phrase it anchors could be whole there.
        for found in self.anchors.find_iter(text) {
            let anchor = self.anchor_of[found.pattern().as_usize()];
            for (spelling, offset, of) in &self.spelled[anchor] {
                let Some(start) = found.start().checked_sub(*offset) else {
                    continue;
                };
                let end = start + spelling.len();
                let holds = text
                    .get(start..end)
                    .is_some_and(|t| t.eq_ignore_ascii_case(spelling.as_bytes()));
                if holds && starts(start) && text.get(end).is_none_or(|&b| !word(b)) {
                    rules |= of;
                }
            }
        }
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_takes_the_names_it_must_and_none_it_must_not() {
        let mut wrong = Vec::new();
        for c in &CLASSES {
            for name in c.fires {
                if !Capabilities::of(name).has(c.name) {
                    wrong.push(format!("{}: should take {name}", c.name));
                }
            }
            for name in c.quiet {
                if Capabilities::of(name).has(c.name) {
                    wrong.push(format!("{}: should not take {name}", c.name));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn the_legs_of_a_flow_are_classes_of_the_file() {
        for name in [READS_PRIVATE, TAKES_UNTRUSTED, SENDS_OUT] {
            assert!(CLASSES.iter().any(|c| c.name == name), "{name}");
        }
    }

    /// The names are cut as every detector cuts identifiers
    /// ([`identifier_words`](crate::detect::text::identifier_words)).
    #[test]
    fn names_are_cut_into_words_at_separators_and_case() {
        let words = crate::detect::text::identifier_words;
        assert_eq!(
            words("slack_get_channel-history"),
            ["slack", "get", "channel", "history"]
        );
        assert_eq!(words("getConsoleLogs"), ["get", "console", "logs"]);
        assert_eq!(words("maps.v2 Geocode"), ["maps", "v2", "geocode"]);
        assert_eq!(words("MCP_TINY"), ["mcp", "tiny"]);
    }

    #[test]
    fn objects_match_their_plurals_and_a_verb_and_an_object_are_two_words() {
        for name in ["read_files", "list_entries", "get_boxes_of_mail"] {
            assert!(Capabilities::of(name).has(READS_PRIVATE), "{name}");
        }
        // `query` is a verb and an object of reads-private: alone in a
        // longer name it is neither.
        assert!(!Capabilities::of("summarize_for_query").has(READS_PRIVATE));
        assert!(Capabilities::of("run_query_query").has(READS_PRIVATE));
        assert!(Capabilities::of("query").has(READS_PRIVATE));
        assert!(!Capabilities::of("filesystem").has(READS_PRIVATE));
    }

    #[test]
    fn letters_show_the_set_and_bits_read_back() {
        let c = Capabilities::of("read_files");
        assert_eq!(c.letters().len(), CLASSES.len());
        assert!(c.letters().starts_with('R'));
        assert_eq!(Capabilities::default().letters(), "-".repeat(CLASSES.len()));
        assert_eq!(Capabilities::from_bits(c.bits()), Some(c));
        // A bit past the file's classes is another build's record.
        assert_eq!(Capabilities::from_bits(1 << CLASSES.len()), None);
    }

    /// The classes of a tool given as JSON, read as an inventory reads it
    /// into a tree.
    fn of_tool(json: &str) -> Capabilities {
        let (v, _) =
            crate::json::parse(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e:?}"));
        let object = v.as_object().unwrap_or_else(|| panic!("{json}: no object"));
        crate::descriptor::Descriptor::new(object.clone()).0.can
    }

    #[test]
    fn every_content_rule_takes_the_tools_it_must_and_none_it_must_not() {
        let mut wrong = Vec::new();
        for rule in &CONTENT {
            let classes: Vec<u8> = rule.classes.iter().map(|c| bit(c)).collect();
            for tool in rule.fires {
                let can = of_tool(tool);
                if classes.iter().any(|&b| can.bits() & b == 0) {
                    wrong.push(format!("{}: should fire on {tool}", rule.name));
                }
            }
            for tool in rule.quiet {
                // Quiet: the rule adds nothing the name does not give.
                let (v, _) = crate::json::parse(tool.as_bytes()).unwrap();
                let name = v
                    .as_object()
                    .and_then(|o| o.get("name"))
                    .and_then(|n| n.as_str());
                let by_name = Capabilities::of(name.unwrap_or_default()).bits();
                let can = of_tool(tool).bits();
                if classes.iter().any(|&b| can & b != 0 && by_name & b == 0) {
                    wrong.push(format!("{}: should not fire on {tool}", rule.name));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn annotations_say_whether_a_tool_writes() {
        let writes = |json: &str| of_tool(json).has(WRITES);
        assert!(!writes(r#"{"name":"run_report"}"#));
        assert!(writes(
            r#"{"name":"run_report","annotations":{"destructiveHint":true}}"#
        ));
        // A destructive hint means something only on a tool that is not
        // read-only, as in the MCP specification.
        assert!(!writes(
            r#"{"name":"run_job","annotations":{"destructiveHint":true,"readOnlyHint":true}}"#
        ));
        // Only the annotations' own keys count, not a nested one.
        assert!(!writes(
            r#"{"name":"run_report","annotations":{"x":{"destructiveHint":true}}}"#
        ));
        // A read-only hint takes nothing away: a lying one must not hide
        // what the name says.
        assert!(writes(
            r#"{"name":"move_file","annotations":{"readOnlyHint":true}}"#
        ));
    }

    #[test]
    fn phrases_are_whole_words_in_any_case_and_escapes_separate_words() {
        let web = |description: &str| {
            let tool = format!(
                r#"{{"name":"answer","description":{}}}"#,
                serde_json::to_string(description).unwrap()
            );
            of_tool(&tool).has(TAKES_UNTRUSTED)
        };
        assert!(web("Grounded in a Web Search."));
        assert!(web("First line.\nWeb-grounded answers."));
        assert!(web("x\tthe internet"));
        assert!(!web("web searchable index"));
        assert!(!web("cobweb search"));
        assert!(!web("web\u{a0}search"));
        // A phrase led by a common word is anchored on the next one, and
        // the common word is still required, whole.
        assert!(web("Copies pages from the web."));
        assert!(!web("Copies pages off the web."));
        assert!(!web("Fetches pages to bathe internet users."));
        assert!(web("Reads local files and URLs."));
        assert!(!web("Reads local files and their URLs."));
    }

    #[test]
    fn parameters_are_properties_at_any_depth_not_values_or_other_keys() {
        let sends = |schema: &str| {
            of_tool(&format!(
                r#"{{"name":"go","description":"Opens a URL.","inputSchema":{schema}}}"#
            ))
            .has(SENDS_OUT)
        };
        assert!(sends(r#"{"properties":{"url":{"type":"string"}}}"#));
        assert!(sends(
            r#"{"properties":{"a":{"properties":{"urls":{"type":"array"}}}}}"#
        ));
        assert!(!sends(r#"{"properties":{"URL":{"type":"string"}}}"#));
        assert!(!sends(
            r#"{"properties":{"u":{"description":"\"url\":{"}}}"#
        ));
        assert!(!sends(r#"{"required":["url"]}"#));
    }

    #[test]
    fn a_server_and_a_name_that_is_no_string_have_no_class() {
        assert_eq!(
            Capabilities::of_texts(&[("instructions", br#""fetch any url""#)]),
            Capabilities::default()
        );
        assert_eq!(
            Capabilities::of_texts(&[("name", b"3"), ("description", br#""webpage""#)]),
            Capabilities::default()
        );
        // Escaped names are read as their value.
        assert_eq!(
            Capabilities::of_texts(&[("name", br#""read\u005ffile""#)]),
            Capabilities::of("read_file")
        );
    }
}
