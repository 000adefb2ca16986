//! `git kams textconv`'s filter, `text::reveal`, on arbitrary bytes (the
//! command only reads the file and prints this). Never panics, and no
//! concealing character reaches the output raw: only tab, line feed and
//! the CR of a CRLF stay as they are.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::textconv(data);
});
