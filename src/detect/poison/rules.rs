//! The rule language: the word classes and patterns of [`super::tables`]
//! compiled once into a lexicon (word ids, sets of ids, steps), and the
//! matcher that runs the patterns over the tokens of each clause. A
//! signal's `unless` patterns are matched the same way and refuse the
//! matches of their signal they overlap: the shape of a benign sentence
//! written next to the shape it resembles, as semgrep's `pattern-not`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use super::reading::Reading;
use super::signal::{shown, Signal};
use super::tables::{CLASSES, PATTERNS, UNLESS};
use super::tokens::{
    Tok, ACCOUNT, CAPS, CODE, COLON, COMMA, DIGITS, EMAIL, HOST, PATHDIR, PHONE, POSS, PROPREF,
    QUOTED, SECRET, SENSPATH, TOOLOWN, TOOLX, URL,
};

fn flag(name: &str) -> u32 {
    match name {
        "URL" => URL,
        "EMAIL" => EMAIL,
        "PHONE" => PHONE,
        "SENSPATH" => SENSPATH,
        "TOOLX" => TOOLX,
        "TOOLOWN" => TOOLOWN,
        "PROPREF" => PROPREF,
        "COLON" => COLON,
        "COMMA" => COMMA,
        "CAPS" => CAPS,
        "SECRET" => SECRET,
        "HOST" => HOST,
        "ACCOUNT" => ACCOUNT,
        "DIGITS" => DIGITS,
        "QUOTED" => QUOTED,
        "POSS" => POSS,
        other => panic!("poison pattern: unknown flag #{other}"),
    }
}

pub(super) const NO_WORD: u16 = u16::MAX;

/// FNV-1a: word lookups are many and short; SipHash's DoS resistance buys
/// nothing for a fixed table.
#[derive(Default)]
pub(super) struct Fnv(pub(super) u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A set of word ids.
#[derive(Clone, Debug)]
pub(super) struct WordSet(pub(super) Vec<u64>);

impl WordSet {
    pub(super) fn new(n: usize) -> WordSet {
        WordSet(vec![0; n.div_ceil(64)])
    }
    pub(super) fn insert(&mut self, id: u16) {
        self.0[usize::from(id) >> 6] |= 1 << (id & 63);
    }
    pub(super) fn has(&self, id: u16) -> bool {
        id != NO_WORD && (self.0[usize::from(id) >> 6] >> (id & 63)) & 1 == 1
    }
    fn union(&mut self, other: &WordSet) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    pub(super) fn ids(&self) -> impl Iterator<Item = u16> + '_ {
        self.0.iter().enumerate().flat_map(|(i, w)| {
            (0..64u16).filter_map(move |b| ((w >> b) & 1 == 1).then_some(i as u16 * 64 + b))
        })
    }
}

/// One way an element can match a token: a word (if any) and flags.
struct Alt {
    pub(super) words: Option<WordSet>,
    pub(super) flags: u32,
}

struct Step {
    alts: Vec<Alt>,
    pub(super) optional: bool,
    /// A refusal (`!A|B` after the first element): no token among the next
    /// `gap + 1` of the clause matches; it consumes none.
    refuse: bool,
    gap: u8,
}

/// Flags of a token that is a name, read as one token.
const NAME: u32 = TOOLX | TOOLOWN | PROPREF | CODE;

/// Flags of a token that names a tool.
const TOOL_NAME: u32 = TOOLX | TOOLOWN;

/// Flags of a name of data, a field or a variable, which is no word of
/// the sentence: "the `include` parameter" is no verb "include". A tool's
/// name keeps its first word: `upload_context` says what the tool does.
/// A word of a folder inside a sensitive path ([`PATHDIR`]) is none
/// either: `~/.config/mail/templates/` is no verb "mail".
const DATA_NAME: u32 = PROPREF | CODE | PATHDIR;

impl Step {
    /// Whether `t` matches: its word (unless it names data) and its flags.
    pub(super) fn matches(&self, t: &Tok) -> bool {
        let word = |w: &WordSet| t.flags & DATA_NAME == 0 && w.has(t.id);
        self.alts
            .iter()
            .any(|a| a.words.as_ref().is_none_or(word) && t.flags & a.flags == a.flags)
    }
}

struct Pattern {
    pub(super) signal: Signal,
    /// An `unless` pattern: refuses the matches of `signal` it overlaps.
    unless: bool,
    not_after: Option<WordSet>,
    steps: Vec<Step>,
    /// Sequences that must each match somewhere in the same sentence
    /// (clauses joined by `;`), before or after the match (`A ..3 B && C`):
    /// roles of one sentence whose order varies with its wording.
    with: Vec<Vec<Step>>,
}

pub(super) struct Lexicon {
    pub(super) ids: HashMap<&'static str, u16, BuildHasherDefault<Fnv>>,
    patterns: Vec<Pattern>,
    /// Patterns whose first element may match a word, by word id.
    by_word: Vec<Vec<u16>>,
    /// Patterns whose first element matches on flags alone.
    by_flag: Vec<u16>,
    /// Bits of [`quick_index`] of every word.
    quick: Vec<u64>,
    // Classes the code (not only the patterns) uses.
    pub(super) secret1: WordSet,
    pub(super) secret_head: WordSet,
    pub(super) secret_tail: WordSet,
    pub(super) carrier_prev: WordSet,
    pub(super) argnoun: WordSet,
    /// Verbs that call (`CALL`): before a function call, a tool's name.
    pub(super) call: WordSet,
    /// Actions that delete, send or pay (`RISKY`): consent bypassed for
    /// one of them is `unconfirmed-action`, wherever the text names it.
    pub(super) risky: WordSet,
    /// Verbs of destruction in every form (`DESTROYS`), of sending
    /// (`SEND`), of reading (`READ`) and of handing over (`COLLECT`): a
    /// value the model copies that says one of them is an order carried
    /// out (`reading::slot_order`).
    pub(super) destroys: WordSet,
    pub(super) send: WordSet,
    pub(super) read: WordSet,
    pub(super) collect: WordSet,
    /// Personal data (`PERSONALDATA`) and those it goes to outside
    /// (`PARTNER`): a value that names both is a hand-over
    /// (`reading::slot_order`).
    pub(super) personal: WordSet,
    pub(super) partner: WordSet,
}

impl Lexicon {
    /// Whether one of `words` (lower case) is in `set`.
    pub(super) fn any_of(&self, set: &WordSet, words: &[String]) -> bool {
        words
            .iter()
            .any(|w| self.ids.get(w.as_str()).is_some_and(|&id| set.has(id)))
    }

    /// False when no word of the lexicon has this length, first and last
    /// letter (in either case, as ASCII has no letter whose lowercase
    /// differs in length): most words of a text are looked up no further.
    pub(super) fn may_know(&self, w: &str) -> bool {
        match quick_index(w) {
            Some(i) => (self.quick[i >> 6] >> (i & 63)) & 1 == 1,
            None => true,
        }
    }
}

/// The bit of [`Lexicon::may_know`] for an ASCII word that starts and ends
/// with a letter, the same for every case of its letters.
fn quick_index(w: &str) -> Option<usize> {
    let b = w.as_bytes();
    let (first, last) = (
        b.first()?.to_ascii_lowercase(),
        b.last()?.to_ascii_lowercase(),
    );
    (first.is_ascii_lowercase() && last.is_ascii_lowercase())
        .then(|| (b.len().min(31) * 26 + usize::from(first - b'a')) * 26 + usize::from(last - b'a'))
}

pub(super) fn lexicon() -> &'static Lexicon {
    static LEX: OnceLock<Lexicon> = OnceLock::new();
    LEX.get_or_init(build_lexicon)
}

fn literals(pattern: &'static str) -> impl Iterator<Item = &'static str> {
    pattern
        .split_whitespace()
        .flat_map(|el| el.trim_start_matches(['!', '?']).split(['|', '&']))
        .filter_map(|atom| atom.strip_prefix('\''))
}

fn build_lexicon() -> Lexicon {
    let mut ids: HashMap<&'static str, u16, BuildHasherDefault<Fnv>> = HashMap::default();
    let intern = |w: &'static str, ids: &mut HashMap<&'static str, u16, _>| {
        let n = ids.len() as u16;
        ids.entry(w).or_insert(n);
    };
    for (_, words) in CLASSES {
        for w in words.split_whitespace().filter(|w| !w.starts_with('@')) {
            intern(w, &mut ids);
        }
    }
    for (_, p) in PATTERNS.iter().chain(UNLESS) {
        for w in literals(p) {
            intern(w, &mut ids);
        }
    }
    let n = ids.len();
    let mut classes: HashMap<&'static str, WordSet> = HashMap::new();
    for (name, words) in CLASSES {
        let mut set = WordSet::new(n);
        for w in words.split_whitespace() {
            match w.strip_prefix('@') {
                Some(other) => set.union(
                    classes
                        .get(other)
                        .unwrap_or_else(|| panic!("poison class {name}: @{other} undefined")),
                ),
                None => set.insert(ids[w]),
            }
        }
        classes.insert(name, set);
    }
    let words_of = |atom: &str| -> WordSet {
        match atom.strip_prefix('\'') {
            Some(w) => {
                let mut s = WordSet::new(n);
                s.insert(ids[w]);
                s
            }
            None => classes
                .get(atom)
                .unwrap_or_else(|| panic!("poison pattern: unknown class {atom}"))
                .clone(),
        }
    };
    let mut patterns = Vec::new();
    let sources = PATTERNS
        .iter()
        .map(|p| (p, false))
        .chain(UNLESS.iter().map(|p| (p, true)));
    for ((signal, src), unless) in sources {
        let mut parts = src.split(" && ");
        let (not_after, steps) = steps_of(parts.next().unwrap_or(""), &words_of, n);
        let with = parts.map(|w| steps_of(w, &words_of, n).1).collect();
        patterns.push(Pattern {
            signal: *signal,
            unless,
            not_after,
            steps,
            with,
        });
    }
    let mut by_word = vec![Vec::new(); n];
    let mut by_flag = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        let mut flagged = false;
        for alt in &p.steps[0].alts {
            match &alt.words {
                Some(w) => {
                    for id in w.ids() {
                        if !by_word[usize::from(id)].contains(&(i as u16)) {
                            by_word[usize::from(id)].push(i as u16);
                        }
                    }
                }
                None => flagged = true,
            }
        }
        if flagged {
            by_flag.push(i as u16);
        }
    }
    let mut quick = vec![0u64; (32 * 26 * 26usize).div_ceil(64)];
    for w in ids.keys() {
        if let Some(i) = quick_index(w) {
            quick[i >> 6] |= 1 << (i & 63);
        }
    }
    Lexicon {
        secret1: classes["SECRET1"].clone(),
        secret_head: classes["SECRET_HEAD"].clone(),
        secret_tail: classes["SECRET_TAIL"].clone(),
        carrier_prev: classes["CARRIER_PREV"].clone(),
        risky: classes["RISKY"].clone(),
        argnoun: classes["ARGNOUN"].clone(),
        call: classes["CALL"].clone(),
        destroys: classes["DESTROYS"].clone(),
        send: classes["SEND"].clone(),
        read: classes["READ"].clone(),
        collect: classes["COLLECT"].clone(),
        personal: classes["PERSONALDATA"].clone(),
        partner: classes["PARTNER"].clone(),
        ids,
        patterns,
        by_word,
        by_flag,
        quick,
    }
}

/// The steps of one sequence of a pattern, and the words its first
/// element must not follow (a leading `!A|B`).
fn steps_of(
    src: &str,
    words_of: &dyn Fn(&str) -> WordSet,
    n: usize,
) -> (Option<WordSet>, Vec<Step>) {
    let mut steps = Vec::new();
    let mut gap = 0u8;
    let mut not_after = None;
    for (i, el) in src.split_whitespace().enumerate() {
        if let Some(g) = el.strip_prefix("..") {
            gap = g.parse().expect("poison pattern: a gap is a number");
            continue;
        }
        if i == 0 {
            if let Some(list) = el.strip_prefix('!') {
                let mut set = WordSet::new(n);
                for atom in list.split('|') {
                    set.union(&words_of(atom));
                }
                not_after = Some(set);
                continue;
            }
        }
        let (optional, body) = match el.strip_prefix('?') {
            Some(b) => (true, b),
            None => (false, el),
        };
        let (refuse, body) = match body.strip_prefix('!') {
            Some(b) => (true, b),
            None => (false, body),
        };
        let mut plain = WordSet::new(n);
        let mut has_plain = false;
        let mut alts = Vec::new();
        for alt in body.split('|') {
            let mut words = None;
            let mut flags = 0;
            for atom in alt.split('&') {
                match atom.strip_prefix('#') {
                    Some(f) => flags |= flag(f),
                    None => words = Some(words_of(atom)),
                }
            }
            match (words, flags) {
                (Some(w), 0) => {
                    plain.union(&w);
                    has_plain = true;
                }
                (words, flags) => alts.push(Alt { words, flags }),
            }
        }
        if has_plain {
            alts.push(Alt {
                words: Some(plain),
                flags: 0,
            });
        }
        steps.push(Step {
            alts,
            optional,
            refuse,
            gap,
        });
        gap = 0;
    }
    (not_after, steps)
}

pub(super) fn run_patterns(c: &str, toks: &[Tok], lex: &Lexicon, r: &mut Reading) {
    let mut next_free: Vec<usize> = Vec::new();
    // Whether a pattern's `&&` roles are in a sentence, by (pattern, sentence).
    let mut roles: HashMap<(usize, u32), bool> = HashMap::new();
    // Every match, as (pattern, first token, token after the last).
    let mut found: Vec<(usize, usize, usize)> = Vec::new();
    // The end of the last name met: the words inside it start nothing
    // (`jira_update_issue` gives no verb "update").
    let mut in_name = 0;
    for i in 0..toks.len() {
        let t = &toks[i];
        if t.start < in_name {
            continue;
        }
        if t.flags & NAME != 0 {
            in_name = t.end;
        }
        let by_word: &[u16] = if t.id == NO_WORD {
            &[]
        } else {
            &lex.by_word[usize::from(t.id)]
        };
        let by_flag: &[u16] = if t.flags == 0 { &[] } else { &lex.by_flag };
        for &p in by_word.iter().chain(by_flag) {
            let p = usize::from(p);
            if next_free.get(p).is_some_and(|&n| n > i) {
                continue;
            }
            let pat = &lex.patterns[p];
            if (!pat.unless && r.full(pat.signal)) || !pat.steps[0].matches(t) {
                continue;
            }
            if let Some(na) = &pat.not_after {
                if i > 0 && toks[i - 1].clause == t.clause && na.has(toks[i - 1].id) {
                    continue;
                }
            }
            let Some(end) = match_steps(&pat.steps[1..], toks, i + 1, t.clause, name_end(t), 0)
            else {
                continue;
            };
            // Whether the other roles are in the sentence depends on the
            // sentence, not on where in it this match is: asked once.
            if !pat.with.is_empty()
                && !*roles
                    .entry((p, t.sentence))
                    .or_insert_with(|| pat.with.iter().all(|w| in_sentence(w, toks, i)))
            {
                continue;
            }
            found.push((p, i, end.max(i + 1)));
            if next_free.is_empty() {
                next_free.resize(lex.patterns.len(), 0);
            }
            next_free[p] = end.max(i + 1);
        }
    }
    // The `unless` matches by signal, then first token, each with the
    // furthest end among those of its signal up to it: a match is refused
    // when one of them overlaps it, which a binary search tells (a scan of
    // every match for every match cost the square of a long text's
    // matches).
    let mut unless: Vec<(Signal, usize, usize)> = found
        .iter()
        .filter(|&&(q, _, _)| lex.patterns[q].unless)
        .map(|&(q, a, z)| (lex.patterns[q].signal, a, z))
        .collect();
    unless.sort_unstable();
    let mut reach: Vec<usize> = Vec::with_capacity(unless.len());
    for (i, &(signal, _, z)) in unless.iter().enumerate() {
        let before = if i > 0 && unless[i - 1].0 == signal {
            reach[i - 1]
        } else {
            0
        };
        reach.push(before.max(z));
    }
    let refused = |signal: Signal, from: usize, to: usize| {
        let after = unless.partition_point(|&(s, a, _)| (s, a) < (signal, to));
        after > 0 && unless[after - 1].0 == signal && reach[after - 1] > from
    };
    for &(p, from, to) in &found {
        let pat = &lex.patterns[p];
        if pat.unless || refused(pat.signal, from, to) {
            continue;
        }
        let end = toks[from..to]
            .iter()
            .map(|t| t.end)
            .max()
            .unwrap_or(toks[from].end);
        r.hit(pat.signal, shown(&c[toks[from].start..end]));
    }
}

/// Whether `steps` match from some token of the sentence of token `at`
/// (its clause, and those `;` joins to it), each match within a clause.
fn in_sentence(steps: &[Step], toks: &[Tok], at: usize) -> bool {
    let sentence = toks[at].sentence;
    let first = (0..at)
        .rev()
        .take_while(|&j| toks[j].sentence == sentence)
        .last()
        .unwrap_or(at);
    (first..toks.len())
        .take_while(|&j| toks[j].sentence == sentence)
        .any(|j| {
            steps[0].matches(&toks[j])
                && match_steps(
                    &steps[1..],
                    toks,
                    j + 1,
                    toks[j].clause,
                    name_end(&toks[j]),
                    0,
                )
                .is_some()
        })
}

/// Where the words of a token end: for the name of a tool or parameter,
/// the end of the whole identifier (see [`super::identifiers`]).
fn name_end(t: &Tok) -> usize {
    if t.flags & NAME != 0 {
        t.end
    } else {
        t.start + 1
    }
}

/// Matches `steps` from token `from` on, within one clause; returns the
/// index after the last token matched. A token that starts before `after`
/// lies inside the name matched last: its words are the name's, not the
/// sentence's, so `chroma_add_documentsArguments` gives no verb `add` and
/// no noun `arguments` to a pattern that matched the name. `carry` is the
/// gap of an optional step that did not match, which its successor keeps
/// (`A ..8 ?B C` finds C up to 8 words after A when there is no B).
fn match_steps(
    steps: &[Step],
    toks: &[Tok],
    from: usize,
    clause: u32,
    after: usize,
    carry: usize,
) -> Option<usize> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(from);
    };
    // The rest of a name is neither matched nor counted in a gap.
    let mut from = from;
    while from < toks.len() && toks[from].start < after {
        from += 1;
    }
    let last = from + usize::from(step.gap) + carry;
    if step.refuse {
        let seen = (from..=last)
            .take_while(|&j| j < toks.len() && toks[j].clause == clause)
            .any(|j| step.matches(&toks[j]));
        return match seen {
            true => None,
            false => match_steps(rest, toks, from, clause, after, 0),
        };
    }
    let mut j = from;
    // The words inside a tool's name passed over in the gap are the
    // name's, not the sentence's: "confirm before `reset_mfa`" asks for
    // no MFA code.
    let mut in_name = after;
    while j <= last && j < toks.len() && toks[j].clause == clause {
        let t = &toks[j];
        if t.start >= in_name && step.matches(t) {
            if let Some(e) = match_steps(rest, toks, j + 1, clause, name_end(t), 0) {
                return Some(e);
            }
        }
        if t.flags & TOOL_NAME != 0 {
            in_name = in_name.max(t.end);
        }
        j += 1;
    }
    if step.optional {
        return match_steps(rest, toks, from, clause, after, last - from);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A ..N ?B C`: with no B, C may still come up to N words after A.
    #[test]
    fn a_gap_before_an_optional_word_holds_when_the_word_is_absent() {
        let lex = lexicon();
        let n = lex.ids.len();
        let words_of = |atom: &str| {
            let mut set = WordSet::new(n);
            set.insert(lex.ids[atom.trim_start_matches('\'')]);
            set
        };
        let (_, steps) = steps_of("'if ..3 ?'first 'call", &words_of, n);
        let ends = |text: &str| {
            let toks = super::super::tokens::tokenize(text, &[], lex);
            match_steps(&steps[1..], &toks, 1, toks[0].clause, 0, 0)
        };
        assert!(ends("if you can then call it").is_some());
        assert!(ends("if you can first call it").is_some());
        assert!(ends("if so call it").is_some());
        assert!(ends("if you can then quickly call it").is_none());
    }

    #[test]
    fn every_pattern_compiles_and_starts_with_a_required_element() {
        let lex = lexicon();
        assert_eq!(lex.patterns.len(), PATTERNS.len() + UNLESS.len());
        for (p, (_, src)) in lex.patterns.iter().zip(PATTERNS.iter().chain(UNLESS)) {
            for steps in std::iter::once(&p.steps).chain(&p.with) {
                assert!(!steps.is_empty(), "{src}");
                assert!(!steps[0].optional, "{src}: first element is optional");
                assert!(!steps[0].refuse, "{src}: first element is a refusal");
            }
            for s in p.steps.iter().chain(p.with.iter().flatten()) {
                for a in &s.alts {
                    assert!(
                        a.words.is_some() || a.flags != 0,
                        "{src}: matches any token"
                    );
                }
            }
        }
    }
}
