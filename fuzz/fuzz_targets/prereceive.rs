//! The pre-receive hook's stdin (`<old> <new> <ref>` per line), as
//! `hook::run` reads it: UTF-8 text, parsed by
//! `git::hooks::parse_pre_receive`. Never panics; what it accepts, written
//! back as git writes it, parses to the same updates.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::prereceive(data);
});
