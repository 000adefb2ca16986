//! Inventory files: `parse_file` and `read_files` on arbitrary bytes, with
//! and without a server name, full and digests-only. Reading must never
//! panic, and the two modes must agree: same outcome, same digests, and a
//! digests-only tool rebuilt by `materialize` equals the full read's tool;
//! the lock `record` would write from an accepted inventory reads back.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::inventory(data);
});
