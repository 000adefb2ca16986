//! Squatting: a tool name that passes for a trusted one.
//!
//! A client resolves tools by name and a model picks them by name, so a
//! server that advertises `read_fіle` (Cyrillic і) next to a trusted
//! `read_file`, or `edit_fiIe` (capital I) for `edit_file`, borrows the
//! trust of a name it does not own. Lookalikes are judged with Unicode
//! TR39 (the `unicode-security` crate: confusable skeletons, script sets),
//! never with a hand-made table; near-miss spellings with an edit distance.
//!
//! The trusted set is every pinned name in the lock; every other tool name
//! in the inventory is compared too. Tools of one server are not squatting
//! each other (`read_file` and `read_files`, `git_diff` and
//! `git_diff_staged` are a family, not an attack), so within a server only
//! a true lookalike counts: one whose skeleton equals another name and that
//! carries the characters that make it look so.
//!
//! Inventories reach 100,000 tools, so names are never compared pairwise:
//! each distinct name is filed under its skeletons, its spellings and its
//! one-letter deletions, and only names that share a key are compared.

mod lookalike;

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use unicode_security::skeleton;

use super::{Context, Detector};
use crate::finding::{Class, Finding, Severity};
use crate::lock::State;

use lookalike::{own_signals, posers, posing};

/// Reports tool names that are lookalikes or near misses of other names.
pub struct Squat;

/// Relations shown per finding; the rest are counted.
const MAX_SHOWN: usize = 8;

/// Keys shared by more names than this are a generated family
/// (`tool_1` ... `tool_900`), not a typo: they are not compared.
const MAX_GROUP: usize = 256;

/// Longest name (in characters) judged for near misses. Near-miss keys
/// and the edit distance cost the square of the length, so one very long
/// name could stall a whole scan (see docs/performance.md); MCP asks for
/// names of 128 characters at most, and a longer one is still compared
/// for lookalikes (folds, spellings).
const MAX_NEAR_MISS_CHARS: usize = 128;

impl Detector for Squat {
    fn depends(&self, level: super::Level) -> super::Depends {
        match level {
            // The inventory's names and the lock's pinned ones.
            super::Level::Inventory => super::Depends::InventoryAndLock,
            super::Level::Server | super::Level::Tool => super::Depends::Nothing,
        }
    }

    fn name(&self) -> &'static str {
        "squat"
    }

    fn inventory(&self, cx: &Context<'_>, out: &mut Vec<Finding>) {
        let known = known_names(cx);
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut names: Vec<Name<'_>> = Vec::new();
        // Each entry's place in `names`.
        let mut name_of: Vec<usize> = Vec::with_capacity(known.len());
        for (i, k) in known.iter().enumerate() {
            let n = *index.entry(k.name).or_insert_with(|| {
                names.push(Name::new(k.name));
                names.len() - 1
            });
            names[n].entries.push(i);
            name_of.push(n);
        }
        let mut signals: Vec<Vec<(Severity, String)>> = vec![Vec::new(); known.len()];
        for (a, b) in candidates(&names) {
            let (na, nb) = (&names[a], &names[b]);
            let Some(rel) = relate(na, nb) else { continue };
            for &ka in &na.entries {
                for &kb in &nb.entries {
                    if let Some(s) = judge(&known[ka], na, &known[kb], nb, &rel) {
                        signals[ka].push(s);
                    }
                    if let Some(s) = judge(&known[kb], nb, &known[ka], na, &rel) {
                        signals[kb].push(s);
                    }
                }
            }
        }
        for (i, k) in known.iter().enumerate() {
            if !k.present {
                continue;
            }
            let mut all = own_signals(&names[name_of[i]]);
            if k.pinned {
                // A person approved this very name: its own signals were
                // in front of them.
                for s in &mut all {
                    s.0 = Severity::Info;
                }
            }
            all.append(&mut signals[i]);
            if all.is_empty() {
                continue;
            }
            all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let more = all.len().saturating_sub(MAX_SHOWN);
            let severity = all[0].0;
            let message = format!("tool name `{}` {}", k.name, all[0].1);
            let mut evidence: Vec<String> = all.into_iter().take(MAX_SHOWN).map(|s| s.1).collect();
            if more > 0 {
                evidence.push(format!("… and {more} more"));
            }
            out.push(Finding {
                class: Class::Squat,
                severity,
                server: k.server.to_string(),
                tool: Some(k.name.to_string()),
                field: Some("/name".to_string()),
                message,
                evidence,
            });
        }
    }
}

/// A tool name as one server has it, from the inventory or from the
/// lock's pinned entries.
struct Known<'a> {
    server: &'a str,
    name: &'a str,
    /// Pinned in the lock: a person trusts this name.
    pinned: bool,
    /// Advertised now (a pinned name that is gone is only a reference).
    present: bool,
}

fn known_names<'a>(cx: &Context<'a>) -> Vec<Known<'a>> {
    let mut pinned = super::pinned_tools(cx).into_iter();
    let mut known = Vec::new();
    for s in cx.inventory.servers.values() {
        for name in s.tools.keys() {
            known.push(Known {
                server: &s.name,
                name,
                pinned: pinned.next().expect("a flag per tool"),
                present: true,
            });
        }
    }
    for (server, ls) in &cx.lock.servers {
        let present = cx.inventory.servers.get(server).map(|s| &s.tools);
        for ((name, entry), tool) in ls.tools.iter().zip(super::along(ls.tools.keys(), present)) {
            if entry.state == State::Pinned && tool.is_none() {
                known.push(Known {
                    server,
                    name,
                    pinned: true,
                    present: false,
                });
            }
        }
    }
    known
}

/// One distinct name, with the spellings it is compared by.
struct Name<'a> {
    text: &'a str,
    lower: String,
    /// [`folds`] of the name.
    folds: [String; 2],
    /// Lowercase, without `_`, `-`, `.`, `/`, spaces.
    plain: String,
    /// `plain`, with I/l/1/| read as `l` and O/0 as `o`.
    loose: String,
    /// Words, lowercase (see [`words`]).
    words: Vec<String>,
    /// How many characters pose as other characters (see [`posing`]).
    posing: usize,
    /// Indices of the [`Known`] entries with this name.
    entries: Vec<usize>,
}

impl<'a> Name<'a> {
    fn new(text: &'a str) -> Name<'a> {
        let bare: String = text.chars().filter(|c| !is_separator(*c)).collect();
        Name {
            text,
            lower: text.to_lowercase(),
            folds: folds(text),
            plain: bare.to_lowercase(),
            loose: loosen(&bare),
            words: words(text),
            posing: text.chars().filter(|&c| posing(c)).count(),
            entries: Vec::new(),
        }
    }
}

/// The TR39 confusable skeleton with case folded, both ways round: case
/// folded after the skeleton (`edit_fiIe` gives `edit_file`, capital I
/// being a confusable of l) and before it (`Get_Issue` gives `get_issue`).
/// Two names that share either fold look the same or differ only in case.
/// Default-ignorable characters (zero-width, selectors, tags) vanish.
pub(super) fn folds(name: &str) -> [String; 2] {
    ascii_folds(name).unwrap_or_else(|| skeleton_folds(name))
}

/// [`folds`], character by character through [`skeleton`].
fn skeleton_folds(name: &str) -> [String; 2] {
    let s: String = skeleton(name).collect();
    [
        skeleton(&s.to_lowercase()).collect(),
        skeleton(&name.to_lowercase()).collect(),
    ]
}

/// [`folds`] of an ASCII name made from the skeletons of its characters,
/// or `None` when one of them has a skeleton that is not ASCII. The same
/// as [`skeleton_folds`]: an ASCII text is its own NFD and holds no
/// default-ignorable character, so its skeleton is the NFD of its
/// characters' prototypes one after the other; NFD decomposes character
/// by character and has nothing to reorder in ASCII, so that is their
/// skeletons one after the other when those are ASCII; and the lowercase
/// of ASCII is its ASCII lowercase. Both passes on names (shadow's and
/// squat's) fold every distinct name of the inventory, nearly all ASCII.
fn ascii_folds(name: &str) -> Option<[String; 2]> {
    /// Each ASCII character's skeleton, taken from [`skeleton`] itself,
    /// when it is ASCII too.
    static SKELETONS: std::sync::OnceLock<Vec<Option<String>>> = std::sync::OnceLock::new();
    let table = SKELETONS.get_or_init(|| {
        (0..128u8)
            .map(|b| {
                let s: String = skeleton(char::from(b).encode_utf8(&mut [0; 4])).collect();
                s.is_ascii().then_some(s)
            })
            .collect()
    });
    let of = |s: &str| -> Option<String> {
        let mut out = String::with_capacity(s.len() + 4);
        for b in s.bytes() {
            out.push_str(table.get(usize::from(b))?.as_deref()?);
        }
        Some(out)
    };
    let shown = of(name)?;
    Some([
        of(&shown.to_ascii_lowercase())?,
        of(&name.to_ascii_lowercase())?,
    ])
}

/// True when two names' [`folds`] meet.
pub(super) fn confusable(a: &[String; 2], b: &[String; 2]) -> bool {
    a[0] == b[0] || a[1] == b[1]
}

fn is_separator(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | ' ' | '/')
}

/// I/l/1/| read as `l` and O/0 as `o`, then lowercase.
fn loosen(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'I' | 'l' | '1' | '|' => 'l',
            'O' | '0' => 'o',
            c => c,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Pairs of names (indices, smaller first) that share a key: a fold, a
/// spelling, a one-letter deletion of the loose spelling (every pair at
/// edit distance one shares one), or all words but one long one (where
/// two edits can be a misspelling).
fn candidates(names: &[Name<'_>]) -> HashSet<(usize, usize)> {
    let key = |tag: u8, parts: &[&str]| {
        let mut h = DefaultHasher::new();
        tag.hash(&mut h);
        parts.hash(&mut h);
        h.finish()
    };
    let mut keys: Vec<(u64, usize)> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        keys.push((key(0, &[&n.folds[0]]), i));
        keys.push((key(1, &[&n.folds[1]]), i));
        keys.push((key(2, &[&n.plain]), i));
        let loose: Vec<char> = n.loose.chars().collect();
        if loose.len() >= 4 {
            keys.push((key(3, &[&n.loose]), i));
        }
        if loose.len() > MAX_NEAR_MISS_CHARS {
            continue;
        }
        if loose.len() >= 4 {
            for skip in 0..loose.len() {
                let variant: String = loose
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != skip)
                    .map(|(_, c)| c)
                    .collect();
                keys.push((key(3, &[&variant]), i));
            }
        }
        if n.words.len() >= 2 {
            for (w, word) in n.words.iter().enumerate() {
                if word.chars().count() >= 8 {
                    let mut rest: Vec<&str> = n.words.iter().map(String::as_str).collect();
                    rest[w] = "";
                    keys.push((key(4, &rest), i));
                }
            }
        }
    }
    keys.sort_unstable();
    keys.dedup();
    let mut pairs = HashSet::new();
    for group in keys.chunk_by(|a, b| a.0 == b.0) {
        if group.len() < 2 || group.len() > MAX_GROUP {
            continue;
        }
        for (x, &(_, a)) in group.iter().enumerate() {
            for &(_, b) in &group[x + 1..] {
                pairs.insert((a.min(b), a.max(b)));
            }
        }
    }
    pairs
}

/// How two distinct names relate, whoever exposes them.
enum Relation {
    /// Same folds: they look alike. High unless both are ASCII and only a
    /// font makes them alike (`rn` for `m`).
    Confusable { high: bool },
    /// The same letters in another case or with other separators.
    Style,
    /// The same once I/l/1 and O/0 are read alike.
    Swapped,
    /// An edit distance of one or two, `low` for a plural or a number.
    NearMiss { d: usize, low: bool },
}

fn relate(a: &Name<'_>, b: &Name<'_>) -> Option<Relation> {
    if a.lower == b.lower {
        // The same name in another case: the shadow detector reports it.
        return None;
    }
    if confusable(&a.folds, &b.folds) {
        let ascii = a.text.is_ascii() && b.text.is_ascii();
        return Some(Relation::Confusable {
            high: !ascii || a.loose == b.loose,
        });
    }
    if a.plain == b.plain {
        return Some(Relation::Style);
    }
    if a.loose == b.loose {
        return Some(Relation::Swapped);
    }
    let d = near_miss(&a.loose, &b.loose, 5)?;
    // A word more or less (`read_file` and `read_file_0`, `git_add` and
    // `git_add_all`) is another tool of a family, not a misspelling.
    if is_subsequence(&a.words, &b.words) || is_subsequence(&b.words, &a.words) {
        return None;
    }
    // When the names have the same words but one, that word must be the
    // near miss: `search_code` and `search_nodes` are two words apart, not
    // a misspelling; `time_v2` and `time_v3`, `file_1000` and `file_1010`
    // are numbers.
    if a.words.len() == b.words.len() {
        let differing: Vec<(&String, &String)> = a
            .words
            .iter()
            .zip(&b.words)
            .filter(|(x, y)| x != y)
            .collect();
        if let [(x, y)] = differing.as_slice() {
            let letters = |s: &str| s.replace(|c: char| c.is_ascii_digit(), "");
            if letters(x) == letters(y) {
                return None;
            }
            near_miss(&loosen(x), &loosen(y), 4)?;
        }
    }
    Some(Relation::NearMiss {
        d,
        low: plural(&a.words, &b.words),
    })
}

/// True when `short` has fewer words than `long` and they appear in
/// `long` in order.
fn is_subsequence(short: &[String], long: &[String]) -> bool {
    if short.len() >= long.len() {
        return false;
    }
    let mut rest = long.iter();
    short.iter().all(|w| rest.any(|x| x == w))
}

/// The edit distance of two loose spellings, when it makes them a near
/// miss: one edit in `one` letters or more, two in eight or more (shorter
/// words differ by chance).
fn near_miss(a: &str, b: &str, one: usize) -> Option<usize> {
    let (la, lb) = (a.chars().count(), b.chars().count());
    if la.abs_diff(lb) > 2 || la.max(lb) > MAX_NEAR_MISS_CHARS {
        return None;
    }
    let d = distance_within_two(a, b)?;
    let close = match d {
        1 => la.min(lb) >= one,
        2 => la.min(lb) >= 8,
        _ => false,
    };
    close.then_some(d)
}

/// The signal `k` (named `kn`) gets from its relation to `o`, if any.
fn judge(
    k: &Known<'_>,
    kn: &Name<'_>,
    o: &Known<'_>,
    on: &Name<'_>,
    rel: &Relation,
) -> Option<(Severity, String)> {
    if !k.present {
        return None;
    }
    let same_server = k.server == o.server;
    if k.pinned && !o.pinned && !matches!(rel, Relation::Confusable { .. }) {
        // A trusted name is never the squatter of an untrusted one.
        return None;
    }
    let whose = whose(o);
    let other = on.text;
    // Both approved: the later approval saw the relation.
    let settle = |sev: Severity| {
        if k.pinned && o.pinned {
            Severity::Info
        } else {
            sev
        }
    };
    match *rel {
        Relation::Confusable { high } => {
            if !is_lookalike_side(k, kn, o, on, same_server) {
                return None;
            }
            let mut how = posers(kn.text);
            if how.is_empty() {
                how.push(format!(
                    "`{}` and `{other}` share the skeleton `{}`",
                    kn.text, kn.folds[0]
                ));
            }
            Some((
                settle(if high {
                    Severity::High
                } else {
                    Severity::Medium
                }),
                format!(
                    "looks like `{other}` ({whose}): same TR39 confusable skeleton; {}",
                    how.join("; ")
                ),
            ))
        }
        _ if same_server => None,
        Relation::Style => Some((
            settle(if o.pinned && !k.pinned {
                Severity::Medium
            } else {
                Severity::Low
            }),
            format!("differs from `{other}` ({whose}) only in case or separators"),
        )),
        Relation::Swapped => Some((
            settle(Severity::High),
            format!("looks like `{other}` ({whose}): I/l/1 or O/0 swapped"),
        )),
        Relation::NearMiss { d, low } => {
            let (severity, note) = if low {
                (Severity::Low, "; only a plural ending differs")
            } else {
                (Severity::Medium, "")
            };
            Some((
                settle(severity),
                format!(
                    "is a near miss of `{other}` ({whose}): edit distance {d} ignoring case, `_`, `-`, I/l/1 and O/0{note}"
                ),
            ))
        }
    }
}

/// Which side of a lookalike pair is the squatter: the untrusted one when
/// exactly one is pinned, else the one with more posing characters (both
/// when they tie across servers; never a tie within one server).
fn is_lookalike_side(
    k: &Known<'_>,
    kn: &Name<'_>,
    o: &Known<'_>,
    on: &Name<'_>,
    same_server: bool,
) -> bool {
    match (k.pinned, o.pinned) {
        (false, true) => true,
        (true, false) => false,
        _ if same_server => kn.posing > on.posing,
        _ => kn.posing >= on.posing,
    }
}

fn whose(k: &Known<'_>) -> String {
    match (k.pinned, k.present) {
        (true, true) => format!("server `{}`, pinned", k.server),
        (true, false) => format!("pinned in the lock for server `{}`", k.server),
        _ => format!("server `{}`", k.server),
    }
}

/// Words of a name (see [`super::text::identifier_words`]).
fn words(name: &str) -> Vec<String> {
    super::text::identifier_words(name)
}

/// `get_issue` / `get_issues`: the same words but for a plural ending,
/// as families of benign tools are named.
fn plural(wa: &[String], wb: &[String]) -> bool {
    if wa.len() != wb.len() {
        return false;
    }
    let differing: Vec<(&String, &String)> = wa.iter().zip(wb).filter(|(x, y)| x != y).collect();
    let [(x, y)] = differing.as_slice() else {
        return false;
    };
    let plural = |s: &str, t: &str| {
        s.strip_prefix(t)
            .is_some_and(|rest| rest == "s" || rest == "es")
    };
    plural(x, y) || plural(y, x)
}

/// The optimal string alignment distance of `a` and `b` (insertions,
/// deletions, substitutions and transpositions of neighbours each cost
/// one) when it is at most two, else `None`; each at most
/// [`MAX_NEAR_MISS_CHARS`] characters long. Only the cells within two of
/// the diagonal are computed: a path through any other costs more than two
/// (each step off the diagonal costs one; a transposition stays on it), so
/// a value of two or less is exact, and no table is allocated. The pass on
/// names asks this of every pair of names alike enough to compare.
fn distance_within_two(a: &str, b: &str) -> Option<usize> {
    // Any value above two: all are the same to a near miss.
    const FAR: u8 = 3;
    const N: usize = MAX_NEAR_MISS_CHARS;
    let mut ca = ['\0'; N];
    let mut cb = ['\0'; N];
    let mut la = 0;
    for c in a.chars().take(N) {
        ca[la] = c;
        la += 1;
    }
    let mut lb = 0;
    for c in b.chars().take(N) {
        cb[lb] = c;
        lb += 1;
    }
    let (a, b) = (&ca[..la], &cb[..lb]);
    // Rows i - 2, i - 1 and i of the table, FAR outside the band; each
    // row moves up by its reference, not by copying it.
    let mut rows = [[FAR; N + 1]; 3];
    let [before, prev, cur] = &mut rows;
    let (mut before, mut prev, mut cur) = (before, prev, cur);
    for (j, x) in prev.iter_mut().enumerate().take(lb.min(2) + 1) {
        *x = j as u8;
    }
    for i in 1..=la {
        cur[..=lb].fill(FAR);
        if i <= 2 {
            cur[0] = i as u8;
        }
        for j in i.saturating_sub(2).max(1)..=(i + 2).min(lb) {
            let cost = u8::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            cur[j] = v.min(FAR);
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[lb];
    (d < FAR).then_some(usize::from(d))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::detect::testing::{inventory, pinned};
    use crate::inventory::Inventory;
    use crate::lock::Lock;

    /// The whole table: what [`distance_within_two`] must agree with.
    fn distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let w = b.len() + 1;
        let mut d = vec![0usize; (a.len() + 1) * w];
        for i in 0..=a.len() {
            d[i * w] = i;
        }
        for (j, x) in d.iter_mut().enumerate().take(w) {
            *x = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut v = (d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1)
                    .min(d[(i - 1) * w + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                d[i * w + j] = v;
            }
        }
        d[a.len() * w + b.len()]
    }

    proptest::proptest! {
        #[test]
        fn ascii_folds_are_the_skeletons_folds(name in "[ -~]{0,16}") {
            if let Some(folds) = ascii_folds(&name) {
                proptest::prop_assert_eq!(folds, skeleton_folds(&name));
            }
        }

        #[test]
        fn the_band_agrees_with_the_whole_table(a in "[ab_é1]{0,12}", b in "[ab_é1]{0,12}") {
            let d = distance(&a, &b);
            proptest::prop_assert_eq!(distance_within_two(&a, &b), (d <= 2).then_some(d));
        }
    }

    #[test]
    fn ascii_names_are_folded_without_the_skeleton_pass() {
        // Lookalikes within ASCII (`I` and `1` read as `l`, `m` as `rn`)
        // have ASCII skeletons.
        for name in ["edit_fiIe", "Get_Issue", "read_file_1", "summarise_item"] {
            assert_eq!(ascii_folds(name), Some(skeleton_folds(name)), "{name}");
        }
        assert_eq!(ascii_folds("r\u{435}ad_file"), None);
    }

    #[test]
    fn the_band_reads_names_of_the_longest_length() {
        let a = "a".repeat(MAX_NEAR_MISS_CHARS);
        let mut b = a.clone();
        b.replace_range(60..62, "bc");
        assert_eq!(distance_within_two(&a, &a), Some(0));
        assert_eq!(distance_within_two(&a, &b), Some(2));
        assert_eq!(distance_within_two(&a, &a[..MAX_NEAR_MISS_CHARS - 3]), None);
    }

    pub(super) fn squats(inv: &Inventory, lock: &Lock) -> Vec<(String, String, Severity, String)> {
        let cx = Context {
            inventory: inv,
            lock,
            configs: &[],
        };
        let mut out = Vec::new();
        Squat.inventory(&cx, &mut out);
        out.into_iter()
            .map(|f| {
                assert_eq!(f.field.as_deref(), Some("/name"));
                assert_eq!(f.class, Class::Squat);
                (f.server, f.tool.unwrap(), f.severity, f.evidence.join("\n"))
            })
            .collect()
    }

    pub(super) fn subjects(
        found: &[(String, String, Severity, String)],
    ) -> Vec<(&str, &str, Severity)> {
        found
            .iter()
            .map(|(s, t, sev, _)| (s.as_str(), t.as_str(), *sev))
            .collect()
    }

    const FILESYSTEM: &[&str] = &[
        "read_file",
        "read_text_file",
        "read_multiple_files",
        "write_file",
        "edit_file",
        "list_directory",
        "list_directory_with_sizes",
        "get_file_info",
    ];

    #[test]
    fn lookalikes_of_another_servers_tools_are_high() {
        let inv = inventory(&[
            ("fs", FILESYSTEM),
            (
                "evil",
                &[
                    "read_f\u{456}le",
                    "list_direct\u{43E}ry",
                    "wr\u{3B9}te_file",
                    "edit_fiIe",
                    "read_text\u{200B}_file",
                ],
            ),
        ]);
        let found = squats(&inv, &Lock::default());
        assert_eq!(
            subjects(&found),
            vec![
                ("evil", "edit_fiIe", Severity::High),
                ("evil", "list_direct\u{43E}ry", Severity::High),
                ("evil", "read_f\u{456}le", Severity::High),
                ("evil", "read_text\u{200B}_file", Severity::High),
                ("evil", "wr\u{3B9}te_file", Severity::High),
            ]
        );
        let ev = &found[2].3;
        assert!(ev.contains("looks like `read_file` (server `fs`)"), "{ev}");
        assert!(
            ev.contains("U+0456 (Cyrillic) at char 6 reads as `i`"),
            "{ev}"
        );
        assert!(
            found[3].3.contains("reads as nothing (invisible)"),
            "{}",
            found[3].3
        );
    }

    #[test]
    fn lookalikes_are_caught_without_a_second_server() {
        let inv = inventory(&[(
            "evil",
            &[
                "read_f\u{456}le",
                "list_direct\u{43E}ry",
                "wr\u{3B9}te_file",
                "edit_fiIe",
            ],
        )]);
        let found = squats(&inv, &Lock::default());
        assert_eq!(
            subjects(&found),
            vec![
                ("evil", "edit_fiIe", Severity::Medium),
                ("evil", "list_direct\u{43E}ry", Severity::High),
                ("evil", "read_f\u{456}le", Severity::High),
                ("evil", "wr\u{3B9}te_file", Severity::High),
            ]
        );
        assert!(found[0].3.contains("reads as `edit_file`"));
        assert!(found[1].3.contains("Cyrillic, Latin"), "{}", found[1].3);
        assert!(
            found[3].3.contains("reads as `write_file`"),
            "{}",
            found[3].3
        );
    }

    #[test]
    fn greek_armenian_and_digit_lookalikes() {
        let inv = inventory(&[
            ("fs", FILESYSTEM),
            ("git", &["git_log", "git_commit"]),
            (
                "evil",
                // Greek omicron, Armenian oh, digit one for l, digit zero for o.
                &[
                    "list_direct\u{3BF}ry",
                    "list_direct\u{585}ry",
                    "git_1og",
                    "git_c0mmit",
                ],
            ),
        ]);
        let found = squats(&inv, &Lock::default());
        assert_eq!(
            subjects(&found),
            vec![
                ("evil", "git_1og", Severity::High),
                ("evil", "git_c0mmit", Severity::High),
                ("evil", "list_direct\u{3BF}ry", Severity::High),
                ("evil", "list_direct\u{585}ry", Severity::High),
            ]
        );
        assert!(found[3].3.contains("Armenian"), "{}", found[3].3);
    }

    #[test]
    fn pinned_names_are_the_trusted_set() {
        // The trusted server is gone from the inventory; its pinned names
        // still protect it.
        let inv = inventory(&[("new", &["edit_fi1e", "read_fiel", "push_files"])]);
        let lock = pinned(&[
            ("fs", "edit_file"),
            ("fs", "read_file"),
            ("gh", "push_file"),
        ]);
        let found = squats(&inv, &lock);
        assert_eq!(
            subjects(&found),
            vec![
                ("new", "edit_fi1e", Severity::High),
                ("new", "push_files", Severity::Low),
                ("new", "read_fiel", Severity::Medium),
            ]
        );
        assert!(found[0].3.contains("pinned in the lock for server `fs`"));
        assert!(found[2].3.contains("edit distance 1"), "{}", found[2].3);
    }

    #[test]
    fn the_genuine_name_is_not_the_squatter() {
        let inv = inventory(&[("fs", &["edit_file"]), ("evil", &["edit_fiIe"])]);
        let found = squats(&inv, &Lock::default());
        assert_eq!(
            subjects(&found),
            vec![("evil", "edit_fiIe", Severity::High)]
        );
        // Pinned names are trusted: once the lookalike is pinned, a
        // newcomer that collides with it is the one reported.
        let lock = pinned(&[("evil", "edit_fiIe")]);
        let found = squats(&inv, &lock);
        assert_eq!(
            subjects(&found),
            vec![
                ("evil", "edit_fiIe", Severity::Info),
                ("fs", "edit_file", Severity::High)
            ]
        );
    }

    #[test]
    fn a_server_that_swaps_its_own_pinned_name_for_a_lookalike() {
        let inv = inventory(&[("fs", &["read_f\u{456}le", "read_files"])]);
        let lock = pinned(&[("fs", "read_file"), ("fs", "read_files")]);
        let found = squats(&inv, &lock);
        assert_eq!(
            subjects(&found),
            vec![("fs", "read_f\u{456}le", Severity::High)]
        );
        assert!(
            found[0].3.contains("pinned in the lock for server `fs`"),
            "{}",
            found[0].3
        );
    }

    #[test]
    fn approved_names_are_info() {
        let inv = inventory(&[
            ("fs", &["read_file"]),
            ("alt", &["read_fiel", "wr\u{3B9}te"]),
        ]);
        let lock = pinned(&[
            ("fs", "read_file"),
            ("alt", "read_fiel"),
            ("alt", "wr\u{3B9}te"),
        ]);
        let found = squats(&inv, &lock);
        assert_eq!(
            subjects(&found),
            vec![
                ("alt", "read_fiel", Severity::Info),
                ("alt", "wr\u{3B9}te", Severity::Info),
                ("fs", "read_file", Severity::Info),
            ]
        );
    }

    #[test]
    fn families_of_names_in_one_server_are_quiet() {
        let inv = inventory(&[(
            "fs",
            &[
                "read_file",
                "read_files",
                "git_diff",
                "git_diff_staged",
                "get_file_info",
                "list_directory",
                "list_directory_with_sizes",
                "create_entities",
                "create_relations",
                "search_nodes",
                "open_nodes",
                "set_table_column_width",
                "set_table_column_widths",
            ],
        )]);
        let lock = pinned(&[("fs", "read_file")]);
        assert!(squats(&inv, &lock).is_empty());
    }

    #[test]
    fn near_misses_across_servers_are_medium_or_low() {
        let inv = inventory(&[
            (
                "a",
                &[
                    "search_nodes",
                    "get_issue",
                    "time_v2",
                    "echo",
                    "list_tables",
                    "read_file",
                    "search_code",
                ],
            ),
            (
                "b",
                &[
                    "serach_nodes",
                    "get_issues",
                    "time_v3",
                    "echa",
                    "listTables",
                    "read_file_0",
                    "get_user2",
                ],
            ),
        ]);
        let found = squats(&inv, &Lock::default());
        let got: Vec<(&str, &str, Severity)> = subjects(&found);
        assert!(
            got.contains(&("b", "serach_nodes", Severity::Medium)),
            "{got:?}"
        );
        assert!(
            got.contains(&("a", "search_nodes", Severity::Medium)),
            "{got:?}"
        );
        assert!(got.contains(&("b", "get_issues", Severity::Low)), "{got:?}");
        // A version number is not a misspelling, nor is a word more, nor
        // another word (`search_code` and `search_nodes`).
        for quiet in ["time", "read_file", "get_user", "search_code"] {
            assert!(!got.iter().any(|g| g.1.starts_with(quiet)), "{got:?}");
        }
        // Another style of the same words: low, unless the other is trusted.
        assert!(got.contains(&("b", "listTables", Severity::Low)), "{got:?}");
        // Short names are too close to each other by chance.
        assert!(!got.iter().any(|g| g.1.starts_with("ech")), "{got:?}");
        assert!(got.iter().all(|g| g.2 < Severity::High), "{got:?}");
        let lock = pinned(&[("a", "list_tables"), ("a", "search_nodes")]);
        let found = squats(&inv, &lock);
        let got: Vec<(&str, &str, Severity)> = subjects(&found);
        assert!(
            got.contains(&("b", "listTables", Severity::Medium)),
            "{got:?}"
        );
        assert!(
            got.contains(&("b", "serach_nodes", Severity::Medium)),
            "{got:?}"
        );
        assert!(
            !got.iter().any(|g| g.0 == "a" && g.1 == "list_tables"),
            "{got:?}"
        );
    }

    #[test]
    fn generated_families_do_not_blow_up() {
        // 150 servers sharing 1,500 names that differ in a number: no
        // squat, and no pairwise comparison of every name.
        let names: Vec<String> = (0..1500).map(|i| format!("read_file_{i}")).collect();
        let per: Vec<Vec<&str>> = (0..150)
            .map(|s| {
                names[s * 10..s * 10 + 10]
                    .iter()
                    .map(String::as_str)
                    .collect()
            })
            .collect();
        let servers: Vec<String> = (0..150).map(|s| format!("s{s}")).collect();
        let spec: Vec<(&str, &[&str])> = servers
            .iter()
            .zip(&per)
            .map(|(s, t)| (s.as_str(), t.as_slice()))
            .collect();
        let inv = inventory(&spec);
        let found = squats(&inv, &Lock::default());
        assert!(found.is_empty(), "{:?}", &found[..found.len().min(3)]);
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(distance("readfile", "raedfile"), 1);
        assert_eq!(distance("readfile", "readfiles"), 1);
        assert_eq!(distance("abc", "xyz"), 3);
        assert_eq!(distance("", "ab"), 2);
    }
}
