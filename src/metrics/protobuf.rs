//! Just enough of the protobuf wire format to write one OTLP request.
//!
//! Written by hand rather than generated (prost, tonic) because git-kams
//! sends one small message shape and never reads one: four field kinds
//! (varint, length-delimited, fixed64, sfixed64) cover it, and a code
//! generator would bring a build script and a protoc dependency for that.
//! Encoding follows <https://protobuf.dev/programming-guides/encoding/>.

/// Wire type of a varint field (only the tests write one: OTLP gauges of
/// integers need none).
#[cfg(test)]
const VARINT: u8 = 0;
/// Wire type of an 8-byte little-endian field (fixed64, sfixed64, double).
const I64: u8 = 1;
/// Wire type of a length-prefixed field (string, bytes, message).
const LEN: u8 = 2;

/// Appends `v` as a base-128 varint: seven bits a byte, least significant
/// group first, the high bit set on every byte but the last.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a field's key: its number and wire type in one varint.
fn key(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// Appends a string field; written even when empty, which is what a field
/// in a `oneof` needs to say which member is set.
pub fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    key(out, field, LEN);
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Appends a fixed64 field (timestamps in nanoseconds).
pub fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, I64);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends an sfixed64 field (an integer data point's value).
pub fn sfixed64(out: &mut Vec<u8>, field: u32, v: i64) {
    key(out, field, I64);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends an embedded message field whose body `write` produces.
///
/// The body is written to a buffer of its own first, since its length
/// prefix comes before it; the messages here are small.
pub fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    let mut body = Vec::new();
    write(&mut body);
    key(out, field, LEN);
    varint(out, body.len() as u64);
    out.extend_from_slice(&body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uint64(out: &mut Vec<u8>, field: u32, v: u64) {
        key(out, field, VARINT);
        varint(out, v);
    }

    fn bytes(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out);
        out
    }

    #[test]
    fn varints_match_the_encoding_guide() {
        // The guide's own examples: 1 is 01, 150 is 96 01.
        assert_eq!(bytes(|o| varint(o, 0)), [0x00]);
        assert_eq!(bytes(|o| varint(o, 1)), [0x01]);
        assert_eq!(bytes(|o| varint(o, 127)), [0x7F]);
        assert_eq!(bytes(|o| varint(o, 128)), [0x80, 0x01]);
        assert_eq!(bytes(|o| varint(o, 150)), [0x96, 0x01]);
        assert_eq!(bytes(|o| varint(o, 300)), [0xAC, 0x02]);
        assert_eq!(bytes(|o| varint(o, 16_384)), [0x80, 0x80, 0x01]);
        assert_eq!(
            bytes(|o| varint(o, u64::MAX)),
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        );
    }

    #[test]
    fn scalar_fields_carry_their_key() {
        // The guide's `Test1 { a: 150 }` (field 1, varint) is 08 96 01.
        assert_eq!(bytes(|o| uint64(o, 1, 150)), [0x08, 0x96, 0x01]);
        // `Test2 { b: "testing" }` (field 2) is 12 07 74 65 73 74 69 6e 67.
        assert_eq!(
            bytes(|o| string(o, 2, "testing")),
            b"\x12\x07testing".to_vec()
        );
        // An empty string still says it is there: key and a zero length.
        assert_eq!(bytes(|o| string(o, 1, "")), [0x0A, 0x00]);
        // Field 3, wire type 1: key 0x19, then eight bytes little-endian.
        assert_eq!(
            bytes(|o| fixed64(o, 3, 0x0102_0304_0506_0708)),
            [0x19, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]
        );
        assert_eq!(
            bytes(|o| sfixed64(o, 6, -2)),
            [0x31, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        // Field numbers past 15 take a two-byte key.
        assert_eq!(bytes(|o| uint64(o, 16, 1)), [0x80, 0x01, 0x01]);
    }

    #[test]
    fn a_nested_message_is_length_prefixed() {
        // The guide's `Test3 { c: Test1 { a: 150 } }` is 1a 03 08 96 01.
        assert_eq!(
            bytes(|o| message(o, 3, |m| uint64(m, 1, 150))),
            [0x1A, 0x03, 0x08, 0x96, 0x01]
        );
        assert_eq!(bytes(|o| message(o, 1, |_| {})), [0x0A, 0x00]);
        // A body of 128 bytes needs a two-byte length.
        let long = bytes(|o| message(o, 2, |m| m.extend_from_slice(&[0; 128])));
        assert_eq!(&long[..3], &[0x12, 0x80, 0x01]);
        assert_eq!(long.len(), 3 + 128);
    }
}
