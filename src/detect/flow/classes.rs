//! What a tool can do, from the words of its name: the capability classes
//! of `rules/capabilities.toml` (compiled by build.rs), for toxic flows and
//! for `status`.
//!
//! Names only, because a warm scan and `status` read the inventory as
//! digests: classes read from descriptions would differ between a cold and
//! a warm scan of the same inventory. Hand-written: the rules are a few
//! word lists; no crate classifies tool names.

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
        // The words, lower-cased, joined by `_` (the whole name as the
        // rules write whole names), and where each is.
        let mut joined = String::with_capacity(name.len());
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(8);
        for_each_word(name, |w| {
            if !joined.is_empty() {
                joined.push('_');
            }
            let start = joined.len();
            joined.push_str(w);
            spans.push((start, joined.len()));
        });
        let whole = table
            .whole
            .get(joined.as_str())
            .copied()
            .unwrap_or_default();
        let mut alone = 0u8;
        // Per class, the positions of a verb and of an object: a pair
        // needs two different words.
        let mut verbs: [Option<usize>; 8] = [None; 8];
        let mut objects: [(Option<usize>, bool); 8] = [(None, false); 8];
        for (i, &(a, b)) in spans.iter().enumerate() {
            let word = &joined[a..b];
            let bits = table.word.get(word).copied().unwrap_or_default();
            alone |= bits.alone;
            let plural = singular(word)
                .into_iter()
                .flatten()
                .filter_map(|w| table.word.get(w.as_str()))
                .fold(0u8, |m, b| m | b.object);
            for c in 0..CLASSES.len() {
                let bit = 1u8 << c;
                if bits.verb & bit != 0 {
                    match verbs[c] {
                        None => verbs[c] = Some(i),
                        // A second verb makes any object a pair.
                        Some(j) if j != i => objects[c].1 = true,
                        _ => {}
                    }
                }
                if (bits.object | plural) & bit != 0 {
                    match objects[c].0 {
                        None => objects[c].0 = Some(i),
                        Some(j) if j != i => objects[c].1 = true,
                        _ => {}
                    }
                }
            }
        }
        let mut found = whole.set | alone;
        for c in 0..CLASSES.len() {
            let pair = match (verbs[c], objects[c]) {
                (Some(v), (Some(o), more)) => v != o || more,
                _ => false,
            };
            if pair {
                found |= 1 << c;
            }
        }
        Capabilities(found & !whole.except)
    }

    /// Whether the class named `name` is in the set.
    pub fn has(self, name: &str) -> bool {
        CLASSES
            .iter()
            .position(|c| c.name == name)
            .is_some_and(|i| self.0 & (1 << i) != 0)
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

/// Calls `f` with each word of a name: cut at every character that is no
/// letter or digit and where a lower-case letter meets an upper-case one,
/// lower-cased.
fn for_each_word(name: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                f(&word);
                word.clear();
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            f(&word);
            word.clear();
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        f(&word);
    }
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

/// The words of a name ([`for_each_word`]).
pub fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(name, |w| out.push(w.to_string()));
    out
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

    #[test]
    fn names_are_cut_into_words_at_separators_and_case() {
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
