//! The canonical form: `json::parse`, then NFC (`canon::normalize`), RFC
//! 8785 (`canon::jcs`) and the digests of `Descriptor::new`. Canonicalising
//! is idempotent, JCS output parses back to an equal value, and a
//! descriptor's digest does not change when it is built again from its
//! own canonical fields.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::canon(data);
});
