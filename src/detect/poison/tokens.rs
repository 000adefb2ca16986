//! The tokenizer: a string cut into what the patterns match. The text is
//! first cleaned to what the model reads; then URLs, e-mail addresses and
//! phone numbers are taken whole, and the rest split into words (looked up
//! in the lexicon) with clause numbers and punctuation flags.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

use super::rules::{Lexicon, NO_WORD};

/// A word (or a URL, address or phone number taken whole) of a string.
#[derive(Clone, Debug)]
pub(super) struct Tok {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) id: u16,
    pub(super) flags: u32,
    pub(super) clause: u32,
    /// Clauses joined by `;` are one sentence: the roles of a rule
    /// (`&&`) may sit in either.
    pub(super) sentence: u32,
}

// Token flags.
pub(super) const URL: u32 = 1;
pub(super) const EMAIL: u32 = 1 << 1;
pub(super) const PHONE: u32 = 1 << 2;
pub(super) const SENSPATH: u32 = 1 << 3;
pub(super) const INPATH: u32 = 1 << 4;
pub(super) const TOOLX: u32 = 1 << 5;
pub(super) const TOOLOWN: u32 = 1 << 6;
pub(super) const PROPREF: u32 = 1 << 7;
pub(super) const COLON: u32 = 1 << 8;
pub(super) const COMMA: u32 = 1 << 9;
pub(super) const CAPS: u32 = 1 << 10;
pub(super) const SECRET: u32 = 1 << 11;
pub(super) const QUOTED: u32 = 1 << 12;
/// A tool-shaped name in code (see [`super::code`]): a name, no tool.
pub(super) const CODE: u32 = 1 << 13;
/// A bare host name (`fp.devicegraph.io`) or IP address (`185.199.110.42:8080`).
pub(super) const HOST: u32 = 1 << 14;
/// An account to pay into: an IBAN, an Ethereum address, a Stripe account id.
pub(super) const ACCOUNT: u32 = 1 << 15;
/// A word of a folder between a sensitive path's first word and its last
/// part (`mail` of `~/.config/mail/templates/`): where the file is, no word
/// of the sentence. The first word stays one (a path of one word:
/// `keychain`), and so does the last part, which says what the file holds
/// (`~/.bash_history`, `.../Default/Cookies`).
pub(super) const PATHDIR: u32 = 1 << 16;
/// A word with three digits or more: a number, an id, a code
/// (`7731`, `SC-448120`'s `448120`, `bc1q7h3k0y...`): a value, no word.
pub(super) const DIGITS: u32 = 1 << 17;
/// A word in the possessive (`attorney's`): someone's, whoever they are.
pub(super) const POSS: u32 = 1 << 18;

/// [`COLON`] or [`COMMA`] when the byte at `at` is one: what follows a
/// word (or a whole name) a pattern may ask for.
pub(super) fn punctuation(b: &[u8], at: usize) -> u32 {
    match b.get(at) {
        Some(b':') => COLON,
        Some(b',') => COMMA,
        _ => 0,
    }
}

/// The text as the model reads it: invisible characters dropped, Unicode
/// tag characters decoded to the ASCII they mirror, typographic quotes
/// made plain, NFKC (fullwidth and styled letters become plain ones).
pub(super) fn clean(s: &str) -> (Cow<'_, str>, usize) {
    let plain = s
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || matches!(b, b'\n' | b'\t' | b'\r'));
    if plain {
        return (Cow::Borrowed(s), 0);
    }
    let mut removed = 0;
    let mut t = String::with_capacity(s.len());
    for ch in s.chars() {
        let u = ch as u32;
        if (0xE0020..=0xE007E).contains(&u) {
            t.push(char::from_u32(u - 0xE0000).unwrap_or(' '));
            removed += 1;
            continue;
        }
        if matches!(ch, '\n' | '\t' | '\r') {
            t.push(ch);
            continue;
        }
        if crate::text::is_concealing(ch) {
            removed += 1;
            continue;
        }
        t.push(match ch {
            '\u{2018}' | '\u{2019}' | '\u{02BC}' | '\u{FF07}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            c => c,
        });
    }
    if t.is_ascii() {
        (Cow::Owned(t), removed)
    } else {
        (Cow::Owned(t.nfkc().collect()), removed)
    }
}

/// Schemes of a URL that reaches a host over the network.
pub(super) const NETWORK_SCHEMES: [&str; 18] = [
    "http", "https", "ftp", "ftps", "ws", "wss", "sftp", "rtmp", "rtmps", "syslog", "mqtt",
    "mqtts", "amqp", "amqps", "smtp", "smtps", "tcp", "udp",
];

/// Schemes of [`NETWORK_SCHEMES`] that carry data one way, to the host (a
/// syslog, a message queue, a stream ingest, a mail relay): nothing is
/// read back from those.
pub(super) const ONE_WAY_SCHEMES: [&str; 10] = [
    "syslog", "udp", "mqtt", "mqtts", "amqp", "amqps", "rtmp", "rtmps", "smtp", "smtps",
];

/// The scheme a compound one runs over (`syslog+tls`, `amqp+ssl`,
/// `git+ssh`): the part before its first `+`.
pub(super) fn base_scheme(scheme: &str) -> &str {
    scheme.split('+').next().unwrap_or(scheme)
}

/// Schemes of a URL that names a storage bucket (whose name has no dot).
pub(super) const BUCKET_SCHEMES: [&str; 2] = ["s3", "gs"];

/// URLs, e-mail addresses, phone numbers, hosts and accounts: spans
/// taken as one token each. `addresses`: whether `c` holds a `:`, `@` or
/// `+`, without which it has no URL, address or phone number.
pub(super) fn specials(c: &str, addresses: bool) -> Vec<(usize, usize, u32)> {
    let mut out: Vec<(usize, usize, u32)> = Vec::new();
    if addresses {
        self::addresses(c, &mut out);
    }
    hosts_and_accounts(c, &mut out);
    out.sort();
    let mut kept: Vec<(usize, usize, u32)> = Vec::with_capacity(out.len());
    for s in out {
        if kept.last().is_none_or(|l| s.0 >= l.1) {
            kept.push(s);
        }
    }
    kept
}

/// URLs, e-mail addresses and phone numbers.
fn addresses(c: &str, out: &mut Vec<(usize, usize, u32)>) {
    let b = c.as_bytes();
    let mut from = 0;
    while let Some(k) = c[from..].find("://").map(|k| k + from) {
        let mut s = k;
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || matches!(b[s - 1], b'+' | b'-' | b'.'))
        {
            s -= 1;
        }
        let mut e = k + 3;
        while e < b.len()
            && !b[e].is_ascii_whitespace()
            && !matches!(
                b[e],
                b'"' | b'\'' | b'`' | b'<' | b'>' | b')' | b']' | b'}' | b','
            )
        {
            e += 1;
        }
        while e > k + 3 && matches!(b[e - 1], b'.' | b';' | b':' | b'!' | b'?') {
            e -= 1;
        }
        let scheme = c[s..k].to_ascii_lowercase();
        let host = c[k + 3..e].split(['/', '?', '#']).next().unwrap_or("");
        // A bucket's URL names the bucket, with no dot in it.
        let scheme = base_scheme(&scheme);
        let bucket = BUCKET_SCHEMES.contains(&scheme) && !host.is_empty();
        let network = NETWORK_SCHEMES.contains(&scheme);
        if bucket
            || network
                && (host.contains('.') || host.starts_with("localhost") || host.starts_with('['))
        {
            out.push((s, e, URL));
        }
        from = e.max(k + 3);
    }
    let inside =
        |out: &[(usize, usize, u32)], i: usize| out.iter().any(|&(s, e, _)| i >= s && i < e);
    for (k, _) in c.match_indices('@') {
        if inside(out, k) {
            continue;
        }
        let mut l = k;
        while l > 0
            && (b[l - 1].is_ascii_alphanumeric()
                || matches!(b[l - 1], b'.' | b'_' | b'%' | b'+' | b'-'))
        {
            l -= 1;
        }
        let mut r = k + 1;
        while r < b.len() && (b[r].is_ascii_alphanumeric() || matches!(b[r], b'.' | b'-')) {
            r += 1;
        }
        while r > k + 1 && b[r - 1] == b'.' {
            r -= 1;
        }
        let domain = &c[k + 1..r];
        let tld = domain.rsplit('.').next().unwrap_or("");
        if l < k
            && domain.contains('.')
            && tld.len() >= 2
            && tld.bytes().all(|x| x.is_ascii_alphabetic())
        {
            out.push((l, r, EMAIL));
        }
    }
    for (k, _) in c.match_indices('+') {
        if inside(out, k) || !b.get(k + 1).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        if k > 0
            && !(b[k - 1].is_ascii_whitespace()
                || matches!(b[k - 1], b'(' | b'"' | b'\'' | b':' | b'`'))
        {
            continue;
        }
        let mut e = k + 1;
        let mut last_digit = k + 1;
        let mut digits = 0;
        while e < b.len()
            && (b[e].is_ascii_digit() || matches!(b[e], b' ' | b'-' | b'(' | b')' | b'.'))
        {
            if b[e].is_ascii_digit() {
                digits += 1;
                last_digit = e + 1;
            }
            e += 1;
        }
        if (8..=15).contains(&digits) {
            out.push((k, last_digit, PHONE));
        }
    }
}

/// Top-level domains a bare host name ends with; not those that are also
/// common file extensions or words after a dot in code (`.sh`, `.pl`,
/// `.cc`, `.info`, `.zip`, `.email` of `user.email`). `.example` is
/// reserved for documentation (RFC 2606), and stands in documentation and
/// in a test of the rules for any host a text may name: a host under it is
/// where data goes as much as one under `.com`.
pub(super) const HOST_TLDS: [&str; 52] = [
    "com", "net", "org", "io", "dev", "app", "ai", "co", "cloud", "xyz", "site", "online", "tech",
    "biz", "us", "uk", "de", "fr", "es", "it", "nl", "ru", "cn", "jp", "eu", "ch", "se", "br",
    "link", "live", "store", "shop", "top", "pro", "tv", "gg", "ly", "run", "host", "network",
    "example", "me", "ca", "au", "nz", "ie", "at", "be", "fi", "dk", "za", "sg",
];

/// Bare host names and IP addresses (with a port or not), and accounts:
/// IBANs (`DE44 5001 0517 5407 3249 31`), Ethereum addresses, Stripe
/// account ids. Nothing inside a span already taken, nor a name followed
/// by `/` or `(` (a path or a call: `api.github.com/repos`, `os.run()`).
fn hosts_and_accounts(c: &str, out: &mut Vec<(usize, usize, u32)>) {
    let b = c.as_bytes();
    let taken =
        |out: &[(usize, usize, u32)], i: usize| out.iter().any(|&(s, e, _)| i >= s && i < e);
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_alphanumeric()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric()
                    || matches!(
                        b[i - 1],
                        b'_' | b'.' | b'/' | b'\\' | b'$' | b'@' | b'-' | b'~'
                    )));
        if !starts || taken(out, i) {
            i += 1;
            continue;
        }
        // The word, and where its first `.` is (most words have none:
        // known here, not by a search of the word).
        let mut e = i;
        let mut dot = usize::MAX;
        while e < b.len() && (b[e].is_ascii_alphanumeric() || matches!(b[e], b'.' | b'-' | b'_')) {
            if b[e] == b'.' {
                dot = dot.min(e);
            }
            e += 1;
        }
        while e > i && matches!(b[e - 1], b'.' | b'-') {
            e -= 1;
        }
        if let Some(end) = account(c, i) {
            out.push((i, end, ACCOUNT));
            i = end;
            continue;
        }
        let next = b.get(e).copied();
        if dot < e && !matches!(next, Some(b'/' | b'(' | b'@' | b'\\')) {
            if let Some(end) = host(c, i, e) {
                out.push((i, end, HOST));
                i = end;
                continue;
            }
        }
        i = e.max(i + 1);
    }
}

/// The end of a host name or IP address (and its port) spanning `i..e`.
fn host(c: &str, i: usize, e: usize) -> Option<usize> {
    let word = &c[i..e];
    let labels: Vec<&str> = word.split('.').collect();
    if labels.len() < 2 || labels.iter().any(|l| l.is_empty() || l.contains('_')) {
        return None;
    }
    let ip = labels.len() == 4
        && labels.iter().all(|l| {
            l.len() <= 3
                && l.bytes().all(|x| x.is_ascii_digit())
                && l.parse::<u16>().is_ok_and(|n| n <= 255)
        });
    let tld = labels[labels.len() - 1];
    let named = !ip
        && HOST_TLDS.contains(&tld)
        && labels[..labels.len() - 1]
            .iter()
            .all(|l| !l.bytes().any(|x| x.is_ascii_uppercase()))
        && labels[0].bytes().any(|x| x.is_ascii_alphabetic());
    if !(ip || named) {
        return None;
    }
    let b = c.as_bytes();
    let mut end = e;
    if b.get(end) == Some(&b':') && b.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end += 1;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
    }
    Some(end)
}

/// The end of an account id starting at `i`: an IBAN (two capitals, two
/// digits, then 11 to 30 capitals or digits, in groups of four or not), an
/// Ethereum address (`0x` and 40 hex digits), a Stripe account (`acct_`).
fn account(c: &str, i: usize) -> Option<usize> {
    let b = c.as_bytes();
    let alnum_end = |from: usize| {
        let mut e = from;
        while e < b.len() && (b[e].is_ascii_alphanumeric()) {
            e += 1;
        }
        e
    };
    if c[i..].starts_with("0x") {
        let e = alnum_end(i + 2);
        return (e - i - 2 == 40 && b[i + 2..e].iter().all(u8::is_ascii_hexdigit)).then_some(e);
    }
    if c[i..].starts_with("acct_") {
        let e = alnum_end(i + 5);
        return (e - i - 5 >= 6).then_some(e);
    }
    if b.len() >= i + 4
        && b[i].is_ascii_uppercase()
        && b[i + 1].is_ascii_uppercase()
        && b[i + 2].is_ascii_digit()
        && b[i + 3].is_ascii_digit()
    {
        let mut e = i + 4;
        let mut n = 0;
        let mut last = e;
        while e < b.len() {
            if b[e].is_ascii_digit() || b[e].is_ascii_uppercase() {
                n += 1;
                e += 1;
                last = e;
            } else if b[e] == b' '
                && b.get(e + 1)
                    .is_some_and(|x| x.is_ascii_digit() || x.is_ascii_uppercase())
            {
                e += 1;
            } else {
                break;
            }
        }
        let digits = b[i + 4..last].iter().filter(|x| x.is_ascii_digit()).count();
        let boundary = b.get(last).is_none_or(|x| !x.is_ascii_alphanumeric());
        if (11..=30).contains(&n) && digits * 2 >= n && boundary {
            return Some(last);
        }
    }
    None
}

/// Splits a string into words (lowercased, looked up in the lexicon),
/// with clause numbers and punctuation flags. `send_email`, `readOnlyHint`
/// and `l'utilisateur` split into their words; `don't` stays whole;
/// `user's` is `user`.
pub(super) fn tokenize(c: &str, specials: &[(usize, usize, u32)], lex: &Lexicon) -> Vec<Tok> {
    let b = c.as_bytes();
    let mut toks = Vec::with_capacity(c.len() / 5 + 1);
    let mut clause = 0u32;
    let mut sentence = 0u32;
    let mut sp = 0;
    let mut i = 0;
    let mut word: Option<usize> = None;
    let mut prev_lower = false;
    let mut low = String::new();
    // The last run of letters and digits read for DIGITS, and whether it
    // has three digits: the humps of one run (`TQ7fXo2kYb...`) are many
    // tokens, and the run is counted once for all of them, not once each.
    let mut run = (0usize, 0usize, false);
    let mut flush = |s: usize,
                     e: usize,
                     (clause, sentence): (u32, u32),
                     toks: &mut Vec<Tok>,
                     low: &mut String| {
        low.clear();
        let w = &c[s..e];
        let key = if w.is_ascii() {
            // Asks the quick test before lowercasing, which it does not
            // need: most words go no further.
            let n = match w.as_bytes() {
                [.., b'\'', b's' | b'S'] => w.len() - 2,
                _ => w.len(),
            };
            if lex.may_know(&w[..n]) {
                low.push_str(&w[..n]);
                low.make_ascii_lowercase();
                Some(low.as_str())
            } else {
                None
            }
        } else {
            for ch in w.chars() {
                low.extend(ch.to_lowercase());
            }
            let key = low.strip_suffix("'s").unwrap_or(low);
            lex.may_know(key).then_some(key)
        };
        let id = key.map_or(NO_WORD, |k| lex.ids.get(k).copied().unwrap_or(NO_WORD));
        let mut flags = 0;
        if matches!(w.as_bytes(), [_, _, .., b'\'', b's' | b'S']) {
            flags |= POSS;
        }
        // A plural's possessive (`the homeowners' codes`): the apostrophe
        // after the word, closing no quote that opened before it.
        if matches!(w.as_bytes(), [_, _, .., b's' | b'S'])
            && b.get(e) == Some(&b'\'')
            && !b.get(e + 1).is_some_and(u8::is_ascii_alphanumeric)
            && !(s > 0 && matches!(b[s - 1], b'\'' | b'"'))
        {
            flags |= POSS;
        }
        if w.chars().next().is_some_and(char::is_uppercase)
            && w.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && w.chars().all(|c| !c.is_alphabetic() || c.is_uppercase())
        {
            flags |= CAPS;
        }
        // A value written between quotes (`set to 'GEN-OPS'`): its first
        // word, after a quote that opens (not an apostrophe in a word).
        if s > 0
            && matches!(b[s - 1], b'\'' | b'"')
            && (s == 1
                || b[s - 2].is_ascii_whitespace()
                || matches!(b[s - 2], b'(' | b'=' | b':' | b'['))
        {
            flags |= QUOTED;
        }
        if w.bytes().any(|x| x.is_ascii_digit()) {
            // The whole run of letters and digits, which humps split
            // (`TQ7fXo2kYb...`): an address or a code is one value.
            if !(run.0 <= s && s < run.1) {
                let mut rs = s;
                while rs > 0 && b[rs - 1].is_ascii_alphanumeric() {
                    rs -= 1;
                }
                let mut re = e;
                while re < b.len() && b[re].is_ascii_alphanumeric() {
                    re += 1;
                }
                run = (
                    rs,
                    re,
                    b[rs..re].iter().filter(|x| x.is_ascii_digit()).count() >= 3,
                );
            }
            if run.2 {
                flags |= DIGITS;
            }
        }
        flags |= punctuation(b, e);
        toks.push(Tok {
            start: s,
            end: e,
            id,
            flags,
            clause,
            sentence,
        });
    };
    while i < c.len() {
        if sp < specials.len() && i >= specials[sp].0 {
            if let Some(s) = word.take() {
                flush(s, i, (clause, sentence), &mut toks, &mut low);
            }
            let (s, e, f) = specials[sp];
            toks.push(Tok {
                start: s,
                end: e,
                id: NO_WORD,
                flags: f,
                clause,
                sentence,
            });
            i = e;
            sp += 1;
            prev_lower = false;
            continue;
        }
        if b[i].is_ascii_alphanumeric() {
            // The common case, as below without decoding a character.
            let x = b[i];
            match word {
                Some(s) if x.is_ascii_uppercase() && prev_lower => {
                    flush(s, i, (clause, sentence), &mut toks, &mut low);
                    word = Some(i);
                }
                Some(_) => {}
                None => word = Some(i),
            }
            prev_lower = x.is_ascii_lowercase() || x.is_ascii_digit();
            i += 1;
            continue;
        }
        let ch = if b[i] < 0x80 {
            char::from(b[i])
        } else {
            c[i..].chars().next().expect("i is a char boundary")
        };
        let n = ch.len_utf8();
        if ch.is_alphanumeric() {
            if let Some(s) = word {
                if ch.is_uppercase() && prev_lower {
                    flush(s, i, (clause, sentence), &mut toks, &mut low);
                    word = Some(i);
                }
            } else {
                word = Some(i);
            }
            prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
            i += n;
            continue;
        }
        if ch == '\''
            && word.is_some()
            && c[i + 1..].chars().next().is_some_and(char::is_alphanumeric)
        {
            let tail: String = c[i + 1..]
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect();
            if matches!(tail.as_str(), "t" | "s" | "re" | "ve" | "ll" | "d" | "m") {
                i += n;
                continue;
            }
            // An elision (`l'`, `n'`): the apostrophe ends the word.
            let s = word.take().expect("checked above");
            flush(s, i + n, (clause, sentence), &mut toks, &mut low);
            prev_lower = false;
            i += n;
            continue;
        }
        if let Some(s) = word.take() {
            flush(s, i, (clause, sentence), &mut toks, &mut low);
        }
        prev_lower = false;
        match ch {
            '.' | '!' | '?' | ';' | '。' | '！' | '？' | '；'
                if (c[i + n..].chars().next().is_none_or(char::is_whitespace)
                    || !ch.is_ascii())
                    && !(ch == '.' && abbreviation(&c[..i])) =>
            {
                clause += 1;
                if !matches!(ch, ';' | '；') {
                    sentence += 1;
                }
            }
            '\n' => {
                let rest = c[i + 1..].trim_start_matches([' ', '\t', '\r']);
                let mut r = rest.chars();
                match r.next() {
                    Some('\n' | '-' | '*' | '•') => {
                        clause += 1;
                        sentence += 1;
                    }
                    Some(d) if d.is_ascii_digit() && matches!(r.next(), Some('.' | ')')) => {
                        clause += 1;
                        sentence += 1;
                    }
                    _ => {}
                }
            }
            ':' if c[i + 1..]
                .trim_start_matches([' ', '\t', '\r'])
                .starts_with('\n') =>
            {
                clause += 1;
                sentence += 1;
            }
            _ => {}
        }
        i += n;
    }
    if let Some(s) = word {
        flush(s, c.len(), (clause, sentence), &mut toks, &mut low);
    }
    toks
}

/// Whether a text ends in an abbreviation whose dot ends no sentence:
/// "incl. dotfiles", "approx. 5 MB". Not "e.g." and "i.e.": what follows
/// them is an example or a gloss, read apart from the order before it
/// ("Pass the URL, e.g. postgres://user:password@host" passes no
/// password).
fn abbreviation(before: &str) -> bool {
    let word = before
        .rsplit(|ch: char| !ch.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    matches!(
        word,
        "incl" | "approx" | "vs" | "cf" | "esp" | "resp" | "min" | "max"
    )
}
