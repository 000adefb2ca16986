//! `kams.lock`: `Lock::parse` and `Lock::parse_digests_only` on arbitrary
//! bytes. Neither may panic; they agree on what is a lock; and a lock that
//! parses round-trips: its text parses to an equal lock whose text is the
//! same bytes (the lock is canonical by construction).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::lock(data);
});
