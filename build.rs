//! Compiles `rules/poison.toml`, the poison detector's rules, into Rust
//! tables (`$OUT_DIR/poison_rules.rs`, included by
//! `src/detect/poison/tables.rs`): the `Signal` enum with each signal's
//! name and weight, the word classes, the patterns and the `unless`
//! patterns that refuse their matches, the phrases, the word lists, and
//! every signal's examples for the table-driven test.
//!
//! The file is checked here, so that a rule that cannot work fails the
//! build with its name instead of a test at run time: every signal has a
//! kebab-case name of its own, a weight from 1 to 4, a `doc`, and at least
//! three texts it must fire on and three it must not; every class a
//! pattern or another class names exists, and every flag is one the
//! tokenizer sets. docs/detection.md says how to add a signal.
//!
//! It compiles `rules/capabilities.toml`, the capability classes of toxic
//! flows, the same way (`$OUT_DIR/capability_rules.rs`, included by
//! `src/detect/flow/classes.rs`), checking that every class has a doc, a
//! letter of its own and three names it must take and three it must not,
//! and that every content rule names classes of the file, gives
//! parameters or phrases (lower-case words, one space apart), a doc, and
//! three tools it must fire on and three it must not.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

/// Flags the tokenizer sets (`src/detect/poison/tokens.rs`).
const FLAGS: [&str; 16] = [
    "URL", "EMAIL", "PHONE", "SENSPATH", "TOOLX", "TOOLOWN", "PROPREF", "COLON", "COMMA", "CAPS",
    "SECRET", "HOST", "ACCOUNT", "DIGITS", "QUOTED", "POSS",
];

/// Word lists the code reads by name.
const LISTS: [&str; 40] = [
    "known_keys",
    "covert",
    "secret_words",
    "solicit_words",
    "order_words",
    "writer",
    "destroyer",
    "sender",
    "reader",
    "slot_words",
    "needles",
    "key_ext",
    "not_names",
    "tag_words",
    "frame_words",
    "code_fences",
    "key_stems",
    "local_writes",
    "local_targets",
    "remote_targets",
    "tool_verbs",
    "action_keys",
    "write_flags",
    "destroy_flags",
    "remote_sinks",
    "url_words",
    "destination_words",
    "joiners",
    "copy_verbs",
    "doc_words",
    "consent_skip",
    "consent_words",
    "consent_need",
    "consent_need_of",
    "consent_consult",
    "consent_steps",
    "slot_secrets",
    "harmless_actions",
    "tool_nouns",
    "tool_articles",
];

/// What a signal can say a text asks for (`Ask` in
/// `src/detect/poison/signal.rs`), by its name in the file.
const ASKS: [(&str, &str); 7] = [
    ("secret", "Secret"),
    ("send", "Send"),
    ("hide", "Hide"),
    ("override", "Override"),
    ("other-tool", "OtherTool"),
    ("deceive", "Deceive"),
    ("destroy", "Destroy"),
];

/// Fewest examples of each kind a signal needs.
const MIN_EXAMPLES: usize = 3;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    lists: toml::Table,
    classes: toml::Table,
    signal: Vec<SignalRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignalRule {
    name: String,
    weight: u32,
    doc: String,
    #[serde(default)]
    asks: Option<String>,
    #[serde(default)]
    patterns: Vec<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    phrases: Vec<String>,
    fires: Vec<String>,
    quiet: Vec<String>,
}

fn main() {
    println!("cargo::rerun-if-changed=src");
    println!("cargo::rerun-if-changed=rules");
    println!(
        "cargo::rustc-env=KAMS_SOURCE_DIGEST={:016x}",
        source_digest(&[Path::new("src"), Path::new("rules")])
    );
    let path = Path::new("rules/poison.toml");
    println!("cargo::rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rules: Rules = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let errors = check(&rules);
    if !errors.is_empty() {
        panic!("{}:\n  {}", path.display(), errors.join("\n  "));
    }
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("poison_rules.rs");
    std::fs::write(&out, generate(&rules)).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    capabilities();
}

/// FNV-1a over the path and bytes of every file under `roots`, in
/// order: which sources this build was made from. The caches in
/// `.git/kams` name their writer by it (`src/cache/store.rs`), so that a
/// build whose detectors differ (another worktree's, a bisect step's)
/// does not serve findings another build wrote under the same version.
fn source_digest(roots: &[&Path]) -> u64 {
    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    for root in roots {
        files(root, &mut all);
    }
    all.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for p in all {
        eat(p.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&std::fs::read(&p).unwrap_or_default());
        eat(&[0]);
    }
    h
}

/// What is wrong with the rules, one line each.
fn check(rules: &Rules) -> Vec<String> {
    let mut errors = Vec::new();
    for list in LISTS {
        match rules.lists.get(list) {
            Some(toml::Value::String(_)) => {}
            _ => errors.push(format!("[lists] lacks the word list `{list}`")),
        }
    }
    for key in rules.lists.keys() {
        if !LISTS.contains(&key.as_str()) {
            errors.push(format!("[lists] `{key}`: no code reads this list"));
        }
    }
    let mut classes = BTreeSet::new();
    for (name, words) in &rules.classes {
        let Some(words) = words.as_str() else {
            errors.push(format!("class {name}: not a string of words"));
            continue;
        };
        for w in words.split_whitespace() {
            if let Some(other) = w.strip_prefix('@') {
                if !classes.contains(other) {
                    errors.push(format!("class {name}: @{other} is not an earlier class"));
                }
            }
        }
        classes.insert(name.as_str());
    }
    let mut names = BTreeSet::new();
    for s in &rules.signal {
        let n = &s.name;
        if !names.insert(n.as_str()) {
            errors.push(format!("signal {n}: named twice"));
        }
        if n.is_empty()
            || !n
                .split('-')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()))
        {
            errors.push(format!(
                "signal {n}: a name is lowercase words joined by '-'"
            ));
        }
        if !(1..=4).contains(&s.weight) {
            errors.push(format!("signal {n}: weight {} is not 1 to 4", s.weight));
        }
        if let Some(a) = &s.asks {
            if !ASKS.iter().any(|(name, _)| name == a) {
                errors.push(format!("signal {n}: asks = {a:?} is none of {ASKS:?}"));
            }
        }
        if s.doc.trim().is_empty() {
            errors.push(format!("signal {n}: no doc"));
        }
        for (kind, list) in [("fires", &s.fires), ("quiet", &s.quiet)] {
            if list.len() < MIN_EXAMPLES {
                errors.push(format!(
                    "signal {n}: {} `{kind}` example(s), at least {MIN_EXAMPLES} needed",
                    list.len()
                ));
            }
        }
        for p in &s.patterns {
            for e in pattern_errors(p, &classes) {
                errors.push(format!("signal {n}: pattern {p:?}: {e}"));
            }
        }
        if !s.unless.is_empty() && s.patterns.is_empty() {
            errors.push(format!("signal {n}: `unless` with no pattern to refuse"));
        }
        for p in &s.unless {
            for e in pattern_errors(p, &classes) {
                errors.push(format!("signal {n}: unless {p:?}: {e}"));
            }
        }
    }
    errors
}

/// What a pattern names that does not exist. A pattern is a sequence,
/// then any number of `&& sequence` that must match in the same sentence.
fn pattern_errors(pattern: &str, classes: &BTreeSet<&str>) -> Vec<String> {
    pattern
        .split(" && ")
        .flat_map(|seq| sequence_errors(seq, classes))
        .collect()
}

/// What one sequence of a pattern names that does not exist, and the
/// refusals it puts where none can stand.
fn sequence_errors(pattern: &str, classes: &BTreeSet<&str>) -> Vec<String> {
    let mut errors = Vec::new();
    let mut required = false;
    if pattern.trim().is_empty() {
        errors.push("an empty sequence around `&&`".to_string());
    }
    for (i, el) in pattern.split_whitespace().enumerate() {
        if let Some(gap) = el.strip_prefix("..") {
            if gap.parse::<u8>().is_err() {
                errors.push(format!("gap `{el}` is not a number"));
            }
            continue;
        }
        if el.starts_with("?!") || el.starts_with("!?") {
            errors.push(format!("`{el}`: a refusal cannot be optional"));
        }
        if !el.starts_with(['!', '?']) {
            required = true;
        } else if el.starts_with('!') && i > 0 && !required {
            errors.push(format!(
                "`{el}`: a refusal needs a required element before it"
            ));
        }
        for atom in el.trim_start_matches(['!', '?']).split(['|', '&']) {
            if let Some(flag) = atom.strip_prefix('#') {
                if !FLAGS.contains(&flag) {
                    errors.push(format!("unknown flag #{flag}"));
                }
            } else if atom.starts_with('\'') {
                if atom.len() == 1 {
                    errors.push("an empty word".to_string());
                }
            } else if !classes.contains(atom) {
                errors.push(format!("unknown class {atom}"));
            }
        }
    }
    errors
}

/// A class's words with each `~word` written out in its inflections.
fn expand_words(words: &str) -> String {
    words
        .split_whitespace()
        .flat_map(|w| match w.strip_prefix('~') {
            Some(base) => inflections(base),
            None => vec![w.to_string()],
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A pattern with each alternative `'~word` written out as the
/// alternatives of its inflections (`'skip|'skips|'skipped|'skipping`).
fn expand_pattern(pattern: &str) -> String {
    pattern
        .split(' ')
        .map(|el| {
            // `?` and `!` mark the element, not its first alternative.
            let body = el.trim_start_matches(['?', '!']);
            let marks = &el[..el.len() - body.len()];
            let alts = body
                .split('|')
                .map(|alt| match alt.strip_prefix("'~") {
                    Some(base) if !base.contains('&') => inflections(base)
                        .iter()
                        .map(|f| format!("'{f}"))
                        .collect::<Vec<_>>()
                        .join("|"),
                    _ => alt.to_string(),
                })
                .collect::<Vec<_>>()
                .join("|");
            format!("{marks}{alts}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Verbs whose past tense or participle no rule gives.
const IRREGULAR: [(&str, &str); 30] = [
    ("send", "sent"),
    ("pay", "paid"),
    ("sell", "sold"),
    ("withdraw", "withdrew withdrawn"),
    ("write", "wrote written"),
    ("give", "gave given"),
    ("take", "took taken"),
    ("choose", "chose chosen"),
    ("put", "put"),
    ("set", "set"),
    ("hide", "hid hidden"),
    ("keep", "kept"),
    ("leave", "left"),
    ("tell", "told"),
    ("forget", "forgot forgotten"),
    ("get", "got gotten"),
    ("make", "made"),
    ("run", "ran"),
    ("read", "read"),
    ("shut", "shut"),
    ("forbid", "forbade forbidden"),
    ("override", "overrode overridden"),
    ("overwrite", "overwrote overwritten"),
    ("undo", "undid undone"),
    ("mislead", "misled"),
    ("hold", "held"),
    ("lose", "lost"),
    ("find", "found"),
    ("bring", "brought"),
    ("seek", "sought"),
];

/// The forms of an English verb or noun from its base (`~skip`: skip,
/// skips, skipped, skipping), by the spelling rules: `-e` drops before
/// `-ing`, `-y` after a consonant turns to `-ies`/`-ied`, a sibilant takes
/// `-es`, and a final consonant after one vowel may double (both spellings
/// are kept: a form no text writes matches nothing). Irregular pasts come
/// from [`IRREGULAR`].
fn inflections(base: &str) -> Vec<String> {
    let b = base.as_bytes();
    let vowel = |c: u8| b"aeiou".contains(&c);
    let mut out = vec![base.to_string()];
    let n = b.len();
    let last = b.last().copied().unwrap_or(b'a');
    if last == b'e' {
        let stem = &base[..n - 1];
        out.extend([format!("{base}s"), format!("{base}d"), format!("{stem}ing")]);
        if base.ends_with("ee") {
            out.push(format!("{base}ing"));
        }
    } else if last == b'y' && n >= 2 && !vowel(b[n - 2]) {
        let stem = &base[..n - 1];
        out.extend([
            format!("{stem}ies"),
            format!("{stem}ied"),
            format!("{base}ing"),
        ]);
    } else {
        let es = ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|e| base.ends_with(e));
        out.extend([
            format!("{base}{}", if es { "es" } else { "s" }),
            format!("{base}ed"),
            format!("{base}ing"),
        ]);
        let cvc = n >= 3
            && !vowel(last)
            && !b"wxy".contains(&last)
            && vowel(b[n - 2])
            && !vowel(b[n - 3]);
        if cvc {
            let l = last as char;
            out.extend([format!("{base}{l}ed"), format!("{base}{l}ing")]);
        }
    }
    // An irregular verb after a prefix (`rewrite`, `overwrite`): its forms,
    // with the prefix.
    if let Some((verb, forms)) = IRREGULAR.iter().find(|(v, _)| base.ends_with(v)) {
        let prefix = &base[..base.len() - verb.len()];
        out.extend(forms.split(' ').map(|f| format!("{prefix}{f}")));
    }
    out.dedup();
    out
}

/// `instruction-block` as `InstructionBlock`.
fn variant(name: &str) -> String {
    name.split('-')
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn generate(rules: &Rules) -> String {
    let mut o =
        String::from("// Generated by build.rs from rules/poison.toml: edit that file.\n\n");
    o.push_str(
        "/// A named signal of the poison detector (rules/poison.toml).\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]\n\
         pub(super) enum Signal {\n",
    );
    for s in &rules.signal {
        let _ = writeln!(o, "    {},", variant(&s.name));
    }
    o.push_str("}\n\n");
    let n = rules.signal.len();
    let _ = writeln!(
        o,
        "/// Every signal with its name, weight, doc and what it says a text asks\n\
         /// for, in the order of [`Signal`].\n\
         pub(super) const SIGNALS: [(Signal, &str, u32, &str, Option<Ask>); {n}] = ["
    );
    for s in &rules.signal {
        let _ = writeln!(
            o,
            "    (Signal::{}, {:?}, {}, {:?}, {}),",
            variant(&s.name),
            s.name,
            s.weight,
            s.doc,
            match &s.asks {
                Some(a) => format!(
                    "Some(Ask::{})",
                    ASKS.iter()
                        .find(|(name, _)| name == a)
                        .map_or("", |(_, v)| v)
                ),
                None => "None".to_string(),
            }
        );
    }
    o.push_str("];\n\n");
    o.push_str("/// Word classes, space separated; `@NAME` includes an earlier class.\n");
    o.push_str("pub(super) const CLASSES: &[(&str, &str)] = &[\n");
    for (name, words) in &rules.classes {
        let _ = writeln!(
            o,
            "    ({name:?}, {:?}),",
            expand_words(words.as_str().unwrap_or_default())
        );
    }
    o.push_str("];\n\n");
    for (what, doc, get) in [
        (
            "PATTERNS",
            "The patterns of the rule language (see [`super::rules`]).",
            (|s: &SignalRule| &s.patterns) as fn(&SignalRule) -> &Vec<String>,
        ),
        (
            "UNLESS",
            "Patterns that refuse a match of their signal they overlap.",
            |s: &SignalRule| &s.unless,
        ),
        (
            "PHRASES",
            "Phrases of scripts written without spaces, matched as substrings.",
            |s: &SignalRule| &s.phrases,
        ),
    ] {
        let _ = writeln!(
            o,
            "/// {doc}\npub(super) const {what}: &[(Signal, &str)] = &["
        );
        for s in &rules.signal {
            for p in get(s) {
                let p = expand_pattern(p);
                let _ = writeln!(o, "    (Signal::{}, {p:?}),", variant(&s.name));
            }
        }
        o.push_str("];\n\n");
    }
    for list in LISTS {
        let words = rules
            .lists
            .get(list)
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "/// The word list `{list}` of rules/poison.toml.\n\
             pub(super) const {}: Words = Words({words:?});",
            list.to_ascii_uppercase()
        );
    }
    o.push_str(
        "\n/// Every signal's examples: the text, and whether the signal must fire on it.\n\
         #[cfg(test)]\n\
         pub(super) const EXAMPLES: &[(Signal, bool, &str)] = &[\n",
    );
    for s in &rules.signal {
        for (fires, list) in [(true, &s.fires), (false, &s.quiet)] {
            for e in list {
                let _ = writeln!(o, "    (Signal::{}, {fires}, {e:?}),", variant(&s.name));
            }
        }
    }
    o.push_str("];\n");
    o
}

/// `rules/capabilities.toml`: the capability classes of toxic flows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Capabilities {
    class: Vec<Capability>,
    #[serde(default)]
    content: Vec<ContentRule>,
}

/// A rule that reads a tool's description and schema: the classes a tool
/// takes when its schema has one of `parameters` (if any are given) and
/// its description one of `phrases` (if any are given).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContentRule {
    name: String,
    classes: Vec<String>,
    doc: String,
    parameters: Vec<String>,
    phrases: Vec<String>,
    fires: Vec<String>,
    quiet: Vec<String>,
}

/// One capability class: the words of tool names that put a tool in it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Capability {
    name: String,
    letter: String,
    doc: String,
    whole: Vec<String>,
    alone: Vec<String>,
    verbs: Vec<String>,
    objects: Vec<String>,
    except: Vec<String>,
    fires: Vec<String>,
    quiet: Vec<String>,
}

/// Reads, checks and compiles `rules/capabilities.toml` into
/// `$OUT_DIR/capability_rules.rs`.
fn capabilities() {
    let path = Path::new("rules/capabilities.toml");
    println!("cargo::rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rules: Capabilities =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    let mut letters = BTreeSet::new();
    for c in &rules.class {
        if !names.insert(c.name.clone()) {
            errors.push(format!("class `{}` is defined twice", c.name));
        }
        if c.letter.chars().count() != 1 || !letters.insert(c.letter.clone()) {
            errors.push(format!(
                "class `{}`: `letter` must be one letter of its own",
                c.name
            ));
        }
        if c.doc.trim().is_empty() {
            errors.push(format!("class `{}` has no doc", c.name));
        }
        if c.fires.len() < 3 || c.quiet.len() < 3 {
            errors.push(format!(
                "class `{}` needs at least three names it fires on and three it must not",
                c.name
            ));
        }
        if c.verbs.is_empty() != c.objects.is_empty() {
            errors.push(format!("class `{}`: verbs and objects go together", c.name));
        }
        for w in c
            .whole
            .iter()
            .chain(&c.alone)
            .chain(&c.verbs)
            .chain(&c.objects)
        {
            if w.is_empty()
                || !w
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            {
                errors.push(format!(
                    "class `{}`: `{w}` is no word (lower-case letters and digits)",
                    c.name
                ));
            }
        }
    }
    let mut rule_names = BTreeSet::new();
    for r in &rules.content {
        let at = format!("content rule `{}`", r.name);
        if !rule_names.insert(r.name.clone()) {
            errors.push(format!("{at} is defined twice"));
        }
        if r.doc.trim().is_empty() {
            errors.push(format!("{at} has no doc"));
        }
        if r.classes.is_empty() || r.classes.iter().any(|c| !names.contains(c)) {
            errors.push(format!("{at}: `classes` must name classes of the file"));
        }
        if r.parameters.is_empty() && r.phrases.is_empty() {
            errors.push(format!("{at}: give `parameters`, `phrases` or both"));
        }
        if r.fires.len() < 3 || r.quiet.len() < 3 {
            errors.push(format!(
                "{at} needs at least three tools it fires on and three it must not"
            ));
        }
        if r.parameters
            .iter()
            .any(|p| p.is_empty() || p.contains(['"', '\\']))
        {
            errors.push(format!(
                "{at}: a parameter is empty or holds a quote or backslash"
            ));
        }
        for phrase in &r.phrases {
            let words: Vec<&str> = phrase.split(' ').collect();
            if words.iter().any(|w| {
                w.is_empty()
                    || !w
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            }) {
                errors.push(format!(
                    "{at}: `{phrase}` is no phrase (lower-case words of letters and digits, one space apart)"
                ));
            }
        }
    }
    if !errors.is_empty() {
        panic!("{}:\n  {}", path.display(), errors.join("\n  "));
    }
    let list = |items: &[String]| -> String {
        let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
        format!("&[{}]", quoted.join(", "))
    };
    let mut out = String::from("// Generated by build.rs from rules/capabilities.toml.\n\n");
    let _ = writeln!(
        out,
        "/// Every capability class, in the file's order.\npub static CLASSES: [ClassRules; {}] = [",
        rules.class.len()
    );
    for c in &rules.class {
        let _ = writeln!(
            out,
            "    ClassRules {{ name: {:?}, letter: {:?}, doc: {:?}, whole: {}, alone: {}, verbs: {}, objects: {}, except: {}, fires: {}, quiet: {} }},",
            c.name,
            c.letter.chars().next().unwrap_or('?'),
            c.doc,
            list(&c.whole),
            list(&c.alone),
            list(&c.verbs),
            list(&c.objects),
            list(&c.except),
            list(&c.fires),
            list(&c.quiet)
        );
    }
    out.push_str("];\n\n");
    let _ = writeln!(
        out,
        "/// Every rule that reads descriptions and schemas, in the file's order.\npub static CONTENT: [ContentRules; {}] = [",
        rules.content.len()
    );
    for r in &rules.content {
        let _ = writeln!(
            out,
            "    ContentRules {{ name: {:?}, classes: {}, doc: {:?}, parameters: {}, phrases: {}, fires: {}, quiet: {} }},",
            r.name,
            list(&r.classes),
            r.doc,
            list(&r.parameters),
            list(&r.phrases),
            list(&r.fires),
            list(&r.quiet)
        );
    }
    out.push_str("];\n");
    let target = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("capability_rules.rs");
    std::fs::write(&target, out).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
}
