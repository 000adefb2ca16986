//! What a tool can do, from the words of its name: the capability classes
//! of `rules/capabilities.toml` (compiled by build.rs), for toxic flows and
//! for `status`.
//!
//! Names only, because a warm scan and `status` read the inventory as
//! digests: classes read from descriptions would differ between a cold and
//! a warm scan of the same inventory. Hand-written: the rules are a few
//! word lists; no crate classifies tool names. Names are cut into words
//! as every detector cuts identifiers ([`identifier_words`]).

use crate::detect::text::identifier_words;

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

include!(concat!(env!("OUT_DIR"), "/capability_rules.rs"));

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
    /// The classes of a tool named `name`.
    pub fn of(name: &str) -> Capabilities {
        let table = table();
        let words = identifier_words(name);
        // The whole name as the rules write whole names.
        let whole = table
            .whole
            .get(words.join("_").as_str())
            .copied()
            .unwrap_or_default();
        let (mut alone, mut verbs, mut objects) = (0u8, 0u8, 0u8);
        // Per class, the first word that is a verb or an object of it, and
        // whether another word is too: a verb and an object that are one
        // word (`post`, `query`) make no pair.
        let mut first: [Option<usize>; 8] = [None; 8];
        let mut two = 0u8;
        for (i, word) in words.iter().enumerate() {
            let bits = table.word.get(word.as_str()).copied().unwrap_or_default();
            let plural = singular(word)
                .into_iter()
                .flatten()
                .filter_map(|w| table.word.get(w.as_str()))
                .fold(0u8, |m, b| m | b.object);
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

/// The rules as look-up tables: every word of every list, every whole name.
struct Table {
    word: std::collections::HashMap<&'static str, Bits>,
    whole: std::collections::HashMap<&'static str, Whole>,
}

/// The tables, built once per process from [`CLASSES`].
fn table() -> &'static Table {
    static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut word: std::collections::HashMap<&'static str, Bits> = Default::default();
        let mut whole: std::collections::HashMap<&'static str, Whole> = Default::default();
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
            }
            for w in c.whole {
                whole.entry(w).or_default().set |= bit;
            }
            for w in c.except {
                whole.entry(w).or_default().except |= bit;
            }
        }
        Table { word, whole }
    })
}

/// The singular forms `word` may be the plural of: without -s, without
/// -es, and -ies as -y.
fn singular(word: &str) -> [Option<String>; 3] {
    [
        word.strip_suffix('s').map(str::to_string),
        word.strip_suffix("es").map(str::to_string),
        word.strip_suffix("ies").map(|stem| format!("{stem}y")),
    ]
}

/// The classes of tool names, each name classified once: a run meets the
/// same names on many servers.
#[derive(Default)]
pub struct Known<'a> {
    seen: std::collections::HashMap<&'a str, Capabilities, foldhash::fast::RandomState>,
}

impl<'a> Known<'a> {
    /// The classes of a tool named `name` ([`Capabilities::of`]).
    pub fn of(&mut self, name: &'a str) -> Capabilities {
        *self
            .seen
            .entry(name)
            .or_insert_with(|| Capabilities::of(name))
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
    /// ([`identifier_words`]).
    #[test]
    fn names_are_cut_into_words_at_separators_and_case() {
        let words = identifier_words;
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
    fn letters_show_the_set_and_known_names_are_classified_once() {
        let c = Capabilities::of("read_files");
        assert_eq!(c.letters().len(), CLASSES.len());
        assert!(c.letters().starts_with('R'));
        assert_eq!(Capabilities::default().letters(), "-".repeat(CLASSES.len()));
        let mut known = Known::default();
        assert_eq!(known.of("fetch"), Capabilities::of("fetch"));
        assert_eq!(known.of("fetch"), Capabilities::of("fetch"));
        assert_eq!(known.seen.len(), 1);
    }
}
