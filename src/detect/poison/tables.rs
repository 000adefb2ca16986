//! The detector's data, apart from the code that reads it: the signals,
//! word lists, the word classes and patterns of the rule language
//! (compiled by [`super::rules`]), phrases of scripts written without
//! spaces, and every signal's examples. They are written in
//! `rules/poison.toml` and compiled into Rust by `build.rs`; a new wording
//! of a known shape is a line there, a new signal one entry with its
//! examples (docs/detection.md, "Adding a signal").

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

use super::rules::Fnv;
use super::signal::Ask;

/// A word list, space separated (one word per entry would make the
/// tables below several screens long).
#[derive(Clone, Copy)]
pub(super) struct Words(pub(super) &'static str);

impl Words {
    pub(super) fn iter(self) -> std::str::SplitWhitespace<'static> {
        self.0.split_whitespace()
    }
    pub(super) fn contains(self, w: &str) -> bool {
        self.iter().any(|x| x == w)
    }
}

/// Whether `key` is JSON Schema or MCP vocabulary; looked up for every key
/// of every tool, so from a set.
pub(super) fn known_key(key: &str) -> bool {
    // FNV, as the lexicon's words: a fixed table of short keys.
    type Set = HashSet<&'static str, BuildHasherDefault<Fnv>>;
    static SET: OnceLock<Set> = OnceLock::new();
    SET.get_or_init(|| KNOWN_KEYS.iter().collect())
        .contains(key)
}

include!(concat!(env!("OUT_DIR"), "/poison_rules.rs"));
