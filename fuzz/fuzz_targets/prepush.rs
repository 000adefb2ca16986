//! The pre-push hook's stdin (`<local ref> <local sha> <remote ref>
//! <remote sha>` per line), as `hook::run` reads it: UTF-8 text, parsed by
//! `git::hooks::parse_pre_push`. Never panics; what it accepts, written
//! back as git writes it, parses to the same updates.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::prepush(data);
});
