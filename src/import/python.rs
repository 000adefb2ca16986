//! Python's `json.dumps(value, sort_keys=True, separators=(",", ":"))`,
//! byte for byte.
//!
//! DescriptorPin and kams both digest descriptors as SHA-256 of that text
//! (see `docs/imports.md`). Reproducing it is what lets an import check the
//! hashes those tools stored, so that a pin file edited after its review
//! does not become an approval. It is not our canonical form (RFC 8785
//! differs in number format, escapes and key order), only theirs.

use crate::json::Value;

/// Writes `v` as Python's `json.dumps(v, sort_keys=True,
/// separators=(",", ":"), ensure_ascii=ensure_ascii)` would, `v` having
/// been read by Python's `json.loads`.
pub fn dumps(v: &Value, ensure_ascii: bool, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n.lexeme(), n.as_f64())),
        Value::String(s) => string(s, ensure_ascii, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                dumps(item, ensure_ascii, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            // Python sorts `str` keys by code point, which is the byte
            // order of their UTF-8 (RFC 8785 sorts by UTF-16 units instead).
            let mut members: Vec<_> = o.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(k, ensure_ascii, out);
                out.push(':');
                dumps(v, ensure_ascii, out);
            }
            out.push('}');
        }
    }
}

/// A string literal with Python's escapes: the two-character ones for
/// `"`, `\`, `\n`, `\r`, `\t`, `\b`, `\f`, `\u00XX` (lowercase) for other
/// control characters, and with `ensure_ascii` every character outside
/// space to `~` as `\uXXXX` (UTF-16 surrogate pairs beyond U+FFFF).
fn string(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as Python writes what `json.loads` made of its lexeme: an
/// integer (no `.`, `e` or `E`) as itself, anything else as `repr(float)`.
fn number(lexeme: &str, value: f64) -> String {
    if !lexeme.contains(['.', 'e', 'E']) {
        // Python ints are exact; only `-0` changes (to `0`).
        return if lexeme.trim_start_matches('-').bytes().all(|b| b == b'0') {
            "0".into()
        } else {
            lexeme.into()
        };
    }
    float_repr(value)
}

/// Python's `repr(float)`: the shortest digits that read back as `x`,
/// positional when the decimal exponent is in -4..16, else `1e+16` style.
fn float_repr(x: f64) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    // ryu-js gives the same shortest round-trip digits in JavaScript's
    // layout; take the digits and the point's position from it.
    let js = ryu_js::Buffer::new().format_finite(x.abs()).to_string();
    let (mantissa, exp) = match js.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().expect("ryu writes an integer exponent")),
        None => (js.as_str(), 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0');
    // Position of the point after the first significant digit's
    // predecessor: 0.0123 has digits 123 and decpt -1.
    let decpt = int.len() as i32 + exp - leading as i32;
    let n = digits.len() as i32;
    let body = if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1);
        let e = decpt - 1;
        let point = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!(
            "{first}{point}e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        format!("{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        let (a, b) = digits.split_at(decpt as usize);
        format!("{a}.{b}")
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(json: &str, ascii: bool) -> String {
        let (v, _) = crate::json::parse(json.as_bytes()).unwrap();
        let mut s = String::new();
        dumps(&v, ascii, &mut s);
        s
    }

    #[test]
    fn numbers_as_python_writes_them() {
        // Expected values from CPython 3: json.dumps(json.loads(text)).
        let cases = [
            ("1", "1"),
            ("-0", "0"),
            ("-0.0", "-0.0"),
            ("1.0", "1.0"),
            ("1E2", "100.0"),
            ("1.5e-7", "1.5e-07"),
            ("0.0001", "0.0001"),
            ("0.00001", "1e-05"),
            ("1e16", "1e+16"),
            ("1e15", "1000000000000000.0"),
            ("123.456", "123.456"),
            ("0.1", "0.1"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "5e-324"),
            ("12345678901234567890", "12345678901234567890"),
            ("2.5e3", "2500.0"),
            ("-12.5e-3", "-0.0125"),
        ];
        for (text, want) in cases {
            assert_eq!(py(text, true), want, "{text}");
        }
    }

    #[test]
    fn strings_keys_and_escapes_as_python_writes_them() {
        // json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=...)
        let text = r#"{"b":"caf\u00e9 \ud83d\ude00 \u2028\u007f","a":["\"\\\n\t\b\f\u0001"],"\u00e9":null,"Z":true}"#;
        assert_eq!(
            py(text, true),
            r#"{"Z":true,"a":["\"\\\n\t\b\f\u0001"],"b":"caf\u00e9 \ud83d\ude00 \u2028\u007f","\u00e9":null}"#
        );
        assert_eq!(
            py(text, false),
            "{\"Z\":true,\"a\":[\"\\\"\\\\\\n\\t\\b\\f\\u0001\"],\"b\":\"caf\u{e9} \u{1f600} \u{2028}\u{7f}\",\"\u{e9}\":null}"
        );
    }
}
