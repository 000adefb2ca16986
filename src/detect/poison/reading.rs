//! Reading one string: the steps that turn a text into the signals it
//! fires, and into the parameters it names as the place for data.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::encoded::{blobs, MIN_RUN};
use super::identifiers::{identifiers, Look};
use super::language::unread_language;
use super::markup::{fenced_commands, headers, made_up_tags, markers, padding, tags};
use super::memo::Asker;
use super::model::resembles_poison;
use super::names::ident_words;
use super::rules::{lexicon, run_patterns, Lexicon, WordSet};
use super::secrets::{mark_secrets, sensitive_paths};
use super::signal::{shown, Hit, Signal};
use super::tables::{
    Words, CONSENT_CONSULT, CONSENT_NEED, CONSENT_NEED_OF, CONSENT_SKIP, CONSENT_STEPS,
    CONSENT_WORDS, HARMLESS_ACTIONS, PHRASES, SLOT_SECRETS, SLOT_WORDS,
};
use super::tokens::{
    clean, specials, tokenize, Tok, CODE, INPATH, PATHDIR, PROPREF, QUOTED, SENSPATH, URL,
};

/// What one string says.
#[derive(Clone, Default)]
pub(super) struct Reading {
    pub(super) hits: Vec<Hit>,
    /// Parameters named where data is put, with the words that name them.
    pub(super) carriers: Vec<(usize, String)>,
    /// Invisible characters removed (or tag characters decoded) first.
    pub(super) removed: usize,
}

impl Reading {
    pub(super) fn hit(&mut self, signal: Signal, span: String) {
        if self.hits.iter().filter(|h| h.signal == signal).count() < 3 {
            self.hits.push(Hit { signal, span });
        }
    }
    pub(super) fn full(&self, signal: Signal) -> bool {
        self.hits.iter().filter(|h| h.signal == signal).count() >= 3
    }
}

/// Reads one string for signals; sees the environment only through `ask`.
pub(super) fn read(text: &str, ask: &mut Asker<'_>, depth: u8) -> Reading {
    let (clean, removed) = clean(text);
    let tabled = tables_as_sentences(&clean);
    let c: &str = tabled.as_deref().unwrap_or(&clean);
    let mut r = Reading {
        removed,
        ..Reading::default()
    };
    if c.trim().is_empty() {
        return r;
    }
    let lex = lexicon();
    if unknown_word(c, lex) {
        return r;
    }
    let holds = Holds::of(c);
    let specials = specials(c, holds.any(Holds::ADDRESS));
    for &(s, e, f) in &specials {
        if f == URL && url_slot(&c[s..e], lex) {
            r.hit(
                Signal::ExfilDestination,
                format!("a URL with a slot for data: {}", shown(&c[s..e])),
            );
        }
    }
    let mut toks = tokenize(c, &specials, lex);
    for (s, e) in sensitive_paths(c, &specials) {
        let path = c[s..e].trim_end_matches(['/', '\\']);
        let last = path.rfind(['/', '\\']).map_or(s, |k| s + k + 1);
        let mut first = true;
        for t in toks.iter_mut().filter(|t| t.start >= s && t.start < e) {
            t.flags |= INPATH;
            if first {
                // The path reads as one token in evidence.
                t.flags |= SENSPATH;
                t.start = s;
                t.end = t.end.max(e);
                first = false;
            } else if t.start < last {
                t.flags |= PATHDIR;
            }
        }
    }
    identifiers(c, &specials, &mut toks, ask, lex, Look::ForToolsAndParams);
    mark_secrets(&mut toks, lex);
    run_patterns(c, &toks, lex, &mut r);
    unread_language(c, &toks, &mut r);
    fenced_commands(c, &mut r);
    if holds.any(Holds::ADDRESS | Holds::EQUALS) {
        consent_settings(c, &mut r);
    }
    risky_consent(c, &toks, lex, &mut r);
    if let Some((signal, why)) = resembles_poison(c) {
        r.hit(signal, why);
    }
    if holds.any(Holds::ANGLE | Holds::SQUARE) {
        tags(c, &mut r);
    }
    if holds.any(Holds::ANGLE) {
        made_up_tags(c, &mut r);
    }
    if holds.any(Holds::HASH) {
        headers(c, &mut r);
    }
    markers(c, holds, &mut r);
    padding(c, &mut r);
    if holds.any(Holds::NON_ASCII) {
        phrases(c, &mut r);
    }
    if depth == 0 && holds.any(Holds::RUN) {
        blobs(c, &specials, ask, &mut r);
    }
    // Parameters this string names where data goes: quoted, after "as",
    // "in", "into", "to the", or before "field", "parameter".
    if !r.hits.iter().any(|h| h.signal.moves_data()) {
        return r;
    }
    let refs = identifiers(c, &specials, &mut toks, ask, lex, Look::ForCarriers);
    let (prev_ok, next_ok) = (&lex.carrier_prev, &lex.argnoun);
    for (i, param) in refs {
        let t = &toks[i];
        let before = i > 0 && toks[i - 1].clause == t.clause && prev_ok.has(toks[i - 1].id);
        let after = toks
            .get(i + 1)
            .is_some_and(|n| n.clause == t.clause && next_ok.has(n.id));
        if t.flags & QUOTED != 0 || before || after {
            let from = if before { toks[i - 1].start } else { t.start };
            let to = if after { toks[i + 1].end } else { t.end };
            r.carriers.push((param, shown(&c[from..to])));
        }
    }
    r
}

/// The text with each body row of its Markdown tables written as a
/// sentence, each cell after its column's header (`field: payee_iban,
/// source: caller, value used: DE89 ...`), and the header and rule lines
/// left blank; `None` when it has no table. A row then reads as prose
/// does: what a column says of a row ("in the summary for the visitor:
/// no") is said in the row's sentence, where the patterns see it.
/// Hand-written: a table is found by its rule line (`|---|:--|`), which no
/// crate is needed to read.
fn tables_as_sentences(c: &str) -> Option<String> {
    if !c.contains("|-") && !c.contains("| -") && !c.contains("|:") {
        return None;
    }
    let cells = |line: &str| -> Vec<String> {
        let t = line.trim();
        let t = t.strip_prefix('|').unwrap_or(t);
        let t = t.strip_suffix('|').unwrap_or(t);
        t.split('|').map(|c| c.trim().to_string()).collect()
    };
    let row = |line: &str| line.trim_start().starts_with('|') && line.matches('|').count() >= 2;
    let rule = |line: &str| {
        let t = line.trim();
        row(line) && t.contains("---") && t.chars().all(|ch| matches!(ch, '|' | '-' | ':' | ' '))
    };
    let lines: Vec<&str> = c.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut found = false;
    let mut i = 0;
    while i < lines.len() {
        if row(lines[i]) && lines.get(i + 1).is_some_and(|l| rule(l)) {
            found = true;
            let header = cells(lines[i]);
            out.push(String::new());
            out.push(String::new());
            i += 2;
            while i < lines.len() && row(lines[i]) {
                let said: Vec<String> = cells(lines[i])
                    .into_iter()
                    .enumerate()
                    .filter(|(_, cell)| !cell.is_empty())
                    .map(|(k, cell)| match header.get(k).filter(|h| !h.is_empty()) {
                        Some(h) => format!("{h}: {cell}"),
                        None => cell,
                    })
                    .collect();
                out.push(format!("{}.", said.join(", ")));
                i += 1;
            }
            continue;
        }
        out.push(lines[i].to_string());
        i += 1;
    }
    found.then(|| out.join("\n"))
}

/// Which of the bytes that the passes over a text start from it holds,
/// found in one pass over it: a pass that can find nothing without one of
/// them is not made (tags, headers, markers, fences and addresses each
/// looked for their bytes in a pass of their own, or searched the text
/// line by line for nothing).
#[derive(Clone, Copy)]
pub(super) struct Holds(u16);

impl Holds {
    /// `:`, `@`, `+`: a URL, an e-mail address, a phone number.
    pub(super) const ADDRESS: u16 = 1;
    /// `<`: a tag, an HTML comment.
    pub(super) const ANGLE: u16 = 1 << 1;
    /// `[`: a tag (`[INST]`), a marker (`[[ADMIN]]`).
    pub(super) const SQUARE: u16 = 1 << 2;
    /// `{`: a marker (`{{#system}}`).
    pub(super) const CURLY: u16 = 1 << 3;
    /// `#`: a header, a banner line.
    pub(super) const HASH: u16 = 1 << 4;
    /// `=`, `-`, `~`, `+`: a banner line.
    pub(super) const BANNER: u16 = 1 << 5;
    /// A backtick or `~`: a code fence.
    pub(super) const FENCE: u16 = 1 << 6;
    /// A byte of a character beyond ASCII.
    pub(super) const NON_ASCII: u16 = 1 << 7;
    /// A run of [`MIN_RUN`] bytes or more of the alphabet of base64 and
    /// hex: what [`blobs`] reads.
    pub(super) const RUN: u16 = 1 << 8;
    /// A byte of that alphabet (letters, digits, `+/-_`).
    const ALPHABET: u16 = 1 << 9;
    /// `=`: a setting written out (`require_confirmation=false`).
    pub(super) const EQUALS: u16 = 1 << 10;

    fn of(c: &str) -> Holds {
        const CLASS: [u16; 256] = {
            let mut t = [0u16; 256];
            let mut b = 0;
            while b < 128 {
                if (b as u8).is_ascii_alphanumeric() {
                    t[b] = Holds::ALPHABET;
                }
                b += 1;
            }
            t[b':' as usize] = Holds::ADDRESS;
            t[b'@' as usize] = Holds::ADDRESS;
            t[b'+' as usize] = Holds::ADDRESS | Holds::BANNER | Holds::ALPHABET;
            t[b'/' as usize] = Holds::ALPHABET;
            t[b'_' as usize] = Holds::ALPHABET;
            t[b'<' as usize] = Holds::ANGLE;
            t[b'[' as usize] = Holds::SQUARE;
            t[b'{' as usize] = Holds::CURLY;
            t[b'#' as usize] = Holds::HASH;
            t[b'=' as usize] = Holds::BANNER | Holds::EQUALS;
            t[b'-' as usize] = Holds::BANNER | Holds::ALPHABET;
            t[b'~' as usize] = Holds::BANNER | Holds::FENCE;
            t[b'`' as usize] = Holds::FENCE;
            b = 0x80;
            while b < 256 {
                t[b] = Holds::NON_ASCII;
                b += 1;
            }
            t
        };
        let (mut m, mut run) = (0, 0);
        for b in c.bytes() {
            let k = CLASS[usize::from(b)];
            m |= k;
            run = if k & Holds::ALPHABET != 0 { run + 1 } else { 0 };
            if run >= MIN_RUN {
                m |= Holds::RUN;
            }
        }
        Holds(m)
    }

    /// Whether it holds a byte of any of the classes `mask`.
    pub(super) fn any(self, mask: u16) -> bool {
        self.0 & mask != 0
    }
}

/// A `default`, `const`, `enum` or `examples` value written as an order, in
/// the words of an identifier or of a phrase (`revoke_every_existing_key`,
/// `csv_then_email_copy_to_x@y.example`, `read_dotenv_and_put_it_in_notes`,
/// `TRUNCATE bookings CASCADE`): the model copies the value into its call
/// as it stands, so what it says is done. A destruction counts only in a
/// value that is sent when the model chooses nothing (`fixed`: a default,
/// a const), of everything (`every`, `all`) or as SQL; one choice of an
/// enum is an operation's name (`delete_table_row`). A send counts with an
/// address in the value; a read with a secret and a hand-over.
pub(super) fn slot_order(text: &str, fixed: bool) -> Option<(Signal, String)> {
    // Counted before the words are made: most values are a word or two.
    if crate::detect::text::identifier_word_count(text) < 3 {
        return None;
    }
    let words = ident_words(text);
    let lex = lexicon();
    let any = |set: &WordSet| lex.any_of(set, &words);
    let said = || {
        format!(
            "a value the model copies into its call is an order: {}",
            shown(text)
        )
    };
    let first = text.split_whitespace().next().unwrap_or("");
    let sql = matches!(first, "TRUNCATE" | "DROP" | "DELETE");
    let all = words
        .iter()
        .any(|w| matches!(w.as_str(), "every" | "all" | "entire" | "whole"));
    if fixed && (sql || (all && any(&lex.destroys))) {
        return Some((Signal::DestructiveStep, said()));
    }
    let address = text.contains("://")
        || text
            .split_once('@')
            .is_some_and(|(who, at)| !who.is_empty() && at.contains('.'));
    if address && any(&lex.send) {
        return Some((Signal::ExfilDestination, said()));
    }
    // Personal data handed to others, as the value sent when the model
    // chooses nothing (`all_contacts_and_photos_to_partner_network`).
    // One phrase that says where it goes, not a list of fields.
    let toward = words.iter().any(|w| matches!(w.as_str(), "to" | "with"));
    if fixed && toward && !text.contains(',') && any(&lex.personal) && any(&lex.partner) {
        return Some((Signal::DisclosedTransfer, said()));
    }
    // A read and a hand-over, not an operation's name (`get_temp_credentials`).
    let secret = any(&lex.secret1) || words.iter().any(|w| SLOT_SECRETS.contains(w));
    if words.len() >= 4 && secret && any(&lex.read) && any(&lex.collect) {
        return Some((Signal::ReadSecret, said()));
    }
    None
}

/// A setting written out in a text that turns the person's consent off:
/// `require_confirmation=false`, `auto_approve: true`, `ask_user = no`.
/// An identifier is one token to the patterns (its words are no words of
/// the sentence), so the setting is read here, by its key's words and its
/// value.
fn consent_settings(c: &str, r: &mut Reading) {
    let b = c.as_bytes();
    for (at, _) in c.match_indices(['=', ':']) {
        // The key: the identifier right before the sign.
        let key_end = c[..at].trim_end_matches([' ', '"', '\'', '`']).len();
        let key_start = c[..key_end]
            .char_indices()
            .rev()
            .find(|&(_, ch)| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
            .map_or(0, |(k, ch)| k + ch.len_utf8());
        // The value: the word right after it.
        let rest = c[at + 1..].trim_start_matches([' ', '"', '\'', '`', '=']);
        let value_len = rest
            .find(|ch: char| !ch.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if key_start >= key_end || value_len == 0 || b.get(at + 1) == Some(&b'/') {
            continue;
        }
        let words = ident_words(&c[key_start..key_end]);
        let value = rest[..value_len].to_ascii_lowercase();
        let on = matches!(
            value.as_str(),
            "true" | "yes" | "on" | "1" | "always" | "enabled"
        );
        let off = matches!(
            value.as_str(),
            "false" | "no" | "off" | "0" | "never" | "none" | "disabled"
        );
        // One word names the step itself (`review=none`, `approval:
        // never`); `false` of a bare word is an answer not yet given.
        let gone = matches!(
            value.as_str(),
            "never" | "none" | "off" | "disabled" | "skip" | "skipped"
        );
        let step = matches!(words.as_slice(), [w] if CONSENT_STEPS.contains(w));
        if (on && skips_consent(&words)) || (off && needs_consent(&words)) || (gone && step) {
            let end = c.len() - rest.len() + value_len;
            r.hit(
                Signal::ConsentBypass,
                format!(
                    "a setting that turns consent off: {}",
                    shown(&c[key_start..end])
                ),
            );
        }
    }
}

/// A key named for acting without the person's consent (`auto_approve`,
/// `skip_confirmation`, `no_prompt`, `bypass_review`).
pub(super) fn skips_consent(words: &[String]) -> bool {
    let has = |list: Words| words.iter().any(|w| list.contains(w));
    has(CONSENT_SKIP) && has(CONSENT_WORDS)
}

/// A key named for asking the person first (`require_confirmation`,
/// `ask_user`, `approval_required`, `check_with_dispatcher`); not a bare
/// `confirm`, which is the person's answer, false until they give it.
pub(super) fn needs_consent(words: &[String]) -> bool {
    let has = |list: Words| words.iter().any(|w| list.contains(w));
    let consult = has(CONSENT_CONSULT) && words.iter().any(|w| w == "with");
    words.len() >= 2 && (consult || has(CONSENT_NEED) && has(CONSENT_NEED_OF))
}

/// Consent bypassed in a text whose first sentence, or the sentence of
/// the bypass or one next to it, deletes, sends or pays ("Deletes
/// records. Confirmation is not required."; "Confirmation is not required.
/// Publish each post at once."): the bypass is of that action's
/// confirmation. (An action named farther off may be an aside.)
fn risky_consent(c: &str, toks: &[Tok], lex: &Lexicon, r: &mut Reading) {
    let has = |s: Signal| r.hits.iter().any(|h| h.signal == s);
    if has(Signal::UnconfirmedAction) {
        return;
    }
    let near: Vec<u32> = r
        .hits
        .iter()
        .filter(|h| h.signal == Signal::ConsentBypass)
        .filter_map(|h| c.find(h.span.as_str()))
        .filter_map(|at| toks.iter().find(|t| t.start >= at).map(|t| t.clause))
        .collect();
    let risky = |t: &Tok| t.flags & (PROPREF | CODE) == 0 && lex.risky.has(t.id);
    let in_clause = |n: u32, f: &dyn Fn(&Tok) -> bool| toks.iter().any(|t| t.clause == n && f(t));
    // A bypass whose own clause names a harmless action ("fetch the next
    // page without asking", "a timed-out call may be repeated without
    // asking") is of that action, not of a send or a payment named nearby.
    let harmless = |t: &Tok| {
        HARMLESS_ACTIONS
            .iter()
            .any(|w| c[t.start..t.end].eq_ignore_ascii_case(w))
    };
    let near: Vec<u32> = near
        .into_iter()
        .filter(|&n| in_clause(n, &risky) || !in_clause(n, &harmless))
        .collect();
    if near.is_empty() {
        return;
    }
    let close = |k: u32| k == 0 || near.iter().any(|&n| k + 1 >= n && k <= n + 1);
    if let Some(t) = toks.iter().find(|t| close(t.clause) && risky(t)) {
        r.hit(
            Signal::UnconfirmedAction,
            format!(
                "consent bypassed for an action that deletes, sends or pays: {}",
                shown(&c[t.start..t.end])
            ),
        );
    }
}

/// The [`PHRASES`] in `c`, read in one pass: each at its first place, in
/// the order of the table.
fn phrases(c: &str, r: &mut Reading) {
    // The distinct phrases, and which of them each entry of the table is.
    static PHRASE_SET: OnceLock<(AhoCorasick, Vec<usize>)> = OnceLock::new();
    let (set, of) = PHRASE_SET.get_or_init(|| {
        let mut distinct: Vec<&str> = Vec::new();
        let of = PHRASES
            .iter()
            .map(|(_, p)| match distinct.iter().position(|d| d == p) {
                Some(k) => k,
                None => {
                    distinct.push(p);
                    distinct.len() - 1
                }
            })
            .collect();
        let set = AhoCorasick::new(distinct).expect("the phrases compile");
        (set, of)
    });
    let mut first: Vec<Option<usize>> = Vec::new();
    for m in set.find_overlapping_iter(c) {
        if first.is_empty() {
            first.resize(set.patterns_len(), None);
        }
        let at = &mut first[m.pattern().as_usize()];
        *at = Some(at.map_or(m.start(), |a| a.min(m.start())));
    }
    if first.is_empty() {
        return;
    }
    for ((signal, _), &k) in PHRASES.iter().zip(of) {
        if let Some(i) = first[k] {
            r.hit(*signal, shown(&c[i..]));
        }
    }
}

/// A single plain word that is no word of the lexicon (`string`, `id`,
/// `cursor`): most strings of a schema, and nothing can fire in them.
fn unknown_word(c: &str, lex: &Lexicon) -> bool {
    let b = c.as_bytes();
    if b.len() > 32 || !b.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    if b.windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
    {
        return false;
    }
    let mut buf = [0u8; 32];
    buf[..b.len()].copy_from_slice(b);
    buf[..b.len()].make_ascii_lowercase();
    let low = std::str::from_utf8(&buf[..b.len()]).unwrap_or("");
    !lex.may_know(low) || !lex.ids.contains_key(low)
}

/// A URL with a placeholder for data to fill in: `https://x/log?d={chat_history}`,
/// `.../${API_KEY}` (the image-link exfiltration shape).
fn url_slot(url: &str, lex: &Lexicon) -> bool {
    // `{form_token}`, `{page_key}` name a thing by its token or key: a
    // slot for data only after a word that makes it a secret (`{api_key}`,
    // `{session_token}`) or alone (`{token}`).
    let slot = |inner: &str| {
        let words = ident_words(inner);
        words.iter().enumerate().any(|(i, w)| {
            SLOT_WORDS.contains(w)
                && (i == 0
                    || !matches!(w.as_str(), "token" | "tokens" | "key" | "keys")
                    || lex
                        .ids
                        .get(words[i - 1].as_str())
                        .is_some_and(|&id| lex.secret_head.has(id)))
        })
    };
    let mut rest = url;
    while let Some(k) = rest.find(['{', '$']) {
        let tail = &rest[k + 1..];
        let inner = match tail.find('}') {
            Some(end) if rest.as_bytes()[k] == b'{' => &tail[..end],
            _ => {
                let end = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '{'))
                    .unwrap_or(tail.len());
                &tail[..end]
            }
        };
        if slot(inner) {
            return true;
        }
        rest = tail;
    }
    false
}
