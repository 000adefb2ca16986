//! `unread-language`: a sentence in a language the rules do not read,
//! holding an address or a secret, in a text otherwise written in English;
//! or holding a secret's path, in any text.
//!
//! The word lists read English, German, French, Spanish, Italian,
//! Portuguese and Russian. An order written in Turkish, Czech or Polish
//! gets past every pattern, and the word model, which reads ASCII words,
//! sees only its URL. What such an order cannot hide is its shape: the
//! description switches language for one sentence, and that sentence
//! holds where the data goes (a URL, an e-mail address, a host, an
//! account) or what is taken (a secret's path, a secret). An honest
//! server written in one language does not switch; one that writes in two
//! does not put an address in the second alone often enough to matter
//! (the real corpus has none). A secret's path needs no switch: in a
//! sentence no rule reads it is worth a look in a server written wholly
//! in Finnish too.
//!
//! Which language a sentence is in comes from `whatlang` (trigram
//! profiles of 69 languages): a language model is data no one here should
//! write by hand. Two checks of our own keep its guesses on short texts
//! honest: the sentence has few English function words, and its guess is
//! either reliable or backed by letters outside ASCII.

use whatlang::Lang;

use super::reading::Reading;
use super::signal::{shown, Signal};
use super::tokens::{Tok, ACCOUNT, EMAIL, HOST, INPATH, SECRET, SENSPATH, URL};

/// The languages the word lists read (docs/detection.md).
const READ: [Lang; 7] = [
    Lang::Eng,
    Lang::Deu,
    Lang::Fra,
    Lang::Spa,
    Lang::Ita,
    Lang::Por,
    Lang::Rus,
];

/// Function words of English: a sentence in English has two or more of
/// them almost always; a sentence in another language has one at most
/// (`a` of Catalan, `de` is none of them).
const ENGLISH: [&str; 34] = [
    "the", "a", "an", "to", "of", "and", "or", "in", "on", "for", "with", "is", "are", "be", "by",
    "from", "this", "that", "it", "its", "as", "at", "your", "you", "not", "no", "if", "when",
    "was", "will", "can", "all", "any", "each",
];

/// What a sentence must hold for its language to matter.
const PAYLOAD: u32 = URL | EMAIL | HOST | ACCOUNT | SENSPATH | SECRET;

/// Words a sentence needs for a guess at its language.
const MIN_WORDS: usize = 4;

pub(super) fn unread_language(c: &str, toks: &[Tok], r: &mut Reading) {
    if !toks.iter().any(|t| t.flags & PAYLOAD != 0) {
        return;
    }
    let words = |t: &Tok| -> Option<&str> {
        let w = &c[t.start..t.end];
        (t.flags & (PAYLOAD | INPATH) == 0
            && w.chars().count() >= 2
            && w.chars().all(char::is_alphabetic))
        .then_some(w)
    };
    let english = |w: &str| ENGLISH.iter().any(|e| e.eq_ignore_ascii_case(w));
    let english_in_all = toks.iter().filter_map(words).filter(|w| english(w)).count();
    // What the rest of the text reads as, asked once: the text is linear
    // in its length whatever its number of sentences.
    let mut rest_read: Option<Option<Lang>> = None;
    // Tokens come in order, so a sentence is a run of them.
    for sentence in toks.chunk_by(|a, b| a.sentence == b.sentence) {
        if !sentence.iter().any(|t| t.flags & PAYLOAD != 0) {
            continue;
        }
        let said: Vec<&str> = sentence.iter().filter_map(words).collect();
        // Scripts written without spaces are one token a run: their
        // letters count, two to a word. Accented Latin words are spaced
        // and count as words.
        let unspaced: usize = said
            .iter()
            .flat_map(|w| w.chars())
            .filter(|&ch| unspaced_script(ch))
            .count();
        let wide = unspaced >= 2 * MIN_WORDS;
        if said.len() < MIN_WORDS && !wide {
            continue;
        }
        let english_here = said.iter().filter(|w| english(w)).count();
        if english_here > 1 {
            continue;
        }
        let Some(info) = whatlang::detect(&said.join(" ")) else {
            continue;
        };
        if READ.contains(&info.lang()) {
            continue;
        }
        // Languages close to each other (Indonesian and Malay, Dutch and
        // Afrikaans) make an honest guess unreliable; a long sentence with
        // no English function word at all, and no code (a call's string
        // arguments, a list of quoted names: titles, not prose), is not
        // English either way.
        let (from, to) = (sentence[0].start, sentence[sentence.len() - 1].end);
        let span = &c[from..to];
        let code = span.contains(['(', ')', '=', '{', '}', '[', ']'])
            || span.matches(['\'', '"']).count() >= 4;
        let long_and_foreign = said.len() >= 2 * MIN_WORDS && english_here == 0 && !code;
        if !(info.is_reliable() || long_and_foreign || said.iter().any(|w| !w.is_ascii())) {
            continue;
        }
        // The rest of the text is English (two of its function words, or
        // ASCII words that read as another language than this sentence's):
        // this sentence switched.
        let switched = english_in_all - english_here >= 2 || {
            let s = sentence[0].sentence;
            let read = rest_read.get_or_insert_with(|| {
                let rest: Vec<&str> = toks
                    .iter()
                    .filter(|t| t.sentence != s)
                    .filter_map(words)
                    .collect();
                (rest.len() >= 2 && rest.iter().all(|w| w.is_ascii()))
                    .then(|| whatlang::detect(&rest.join(" ")).map(|i| i.lang()))
                    .flatten()
            });
            read.is_some_and(|l| l != info.lang())
        };
        // A secret's path in a sentence no rule can read is worth a look
        // whatever the rest is written in: an honest server written wholly
        // in Finnish names `~/.ssh/id_ed25519` no more often than one in
        // English does. Not in scripts without spaces, where honest
        // servers explain their client's configuration (`mcp.json`) in
        // sentences whatlang cannot place.
        let takes = !wide && sentence.iter().any(|t| t.flags & SENSPATH != 0);
        if !switched && !takes {
            continue;
        }
        r.hit(
            Signal::UnreadLanguage,
            format!("{}: {}", info.lang().eng_name(), shown(&c[from..to])),
        );
        return;
    }
}

/// Letters of scripts written without spaces between words: Thai, Lao,
/// Myanmar, Khmer, and from the CJK radicals on (kana, Han, Hangul, Yi).
fn unspaced_script(ch: char) -> bool {
    matches!(ch, '\u{0E00}'..='\u{0EFF}' | '\u{1000}'..='\u{109F}' | '\u{1780}'..='\u{17FF}')
        || ch >= '\u{2E80}'
}
