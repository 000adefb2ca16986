//! Encoded text: base64 and hex runs, decoded and read again when they are
//! text, reported when they are long and random-looking.

use super::memo::Asker;
use super::reading::{read, Reading};
use super::signal::{shown, Signal};

/// The shortest run of base64's or hex's alphabet [`blobs`] reads.
pub(super) const MIN_RUN: usize = 20;

/// Base64 and hex runs: decoded when they are text (and read again), or
/// reported when long and random-looking.
pub(super) fn blobs(
    c: &str,
    specials: &[(usize, usize, u32)],
    ask: &mut Asker<'_>,
    r: &mut Reading,
) {
    let b = c.as_bytes();
    let in_alphabet = |x: u8| x.is_ascii_alphanumeric() || matches!(x, b'+' | b'/' | b'-' | b'_');
    let mut i = 0;
    while i < b.len() {
        if !in_alphabet(b[i]) {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && in_alphabet(b[i]) {
            i += 1;
        }
        let mut e = i;
        while e < b.len() && b[e] == b'=' && e - i < 2 {
            e += 1;
        }
        let run = &c[s..i];
        if run.len() < MIN_RUN || specials.iter().any(|&(a, z, _)| s < z && a < e) {
            continue;
        }
        let decoded = if run.len() >= 32
            && run.len().is_multiple_of(2)
            && run.bytes().all(|x| x.is_ascii_hexdigit())
        {
            hex_decode(run)
        } else {
            let upper = run.bytes().any(|x| x.is_ascii_uppercase());
            let lower = run.bytes().any(|x| x.is_ascii_lowercase());
            let digit = run.bytes().any(|x| x.is_ascii_digit());
            if !(upper && lower && digit) {
                continue;
            }
            b64_decode(run)
        };
        match decoded.as_deref().and_then(as_text) {
            Some(text) => {
                r.hit(
                    Signal::EncodedText,
                    format!("{} decodes to: {}", shown(run), shown(&text)),
                );
                let inner = read(&text, ask, 1);
                for h in inner.hits {
                    r.hit(h.signal, format!("(decoded) {}", h.span));
                }
            }
            None if run.len() >= 64 && entropy(run) >= 4.5 => {
                r.hit(Signal::EncodedBlob, shown(run));
            }
            None => {}
        }
    }
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|k| u8::from_str_radix(&s[k..k + 2], 16).ok())
        .collect()
}

fn b64_decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for x in s.bytes() {
        let v = match x {
            b'A'..=b'Z' => x - b'A',
            b'a'..=b'z' => x - b'a' + 26,
            b'0'..=b'9' => x - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Decoded bytes that are text: UTF-8, printable, with words.
fn as_text(bytes: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(bytes).ok()?;
    let total = s.chars().count();
    let printable = s
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .count();
    (total >= 12 && printable * 100 >= total * 95 && s.contains(' ')).then(|| s.to_string())
}

/// Shannon entropy in bits per byte.
fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for x in s.bytes() {
        counts[usize::from(x)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&k| k > 0)
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}
