//! The lock's three-way merge (`lock::merge::merge`), on three locks split
//! from the input at NUL bytes (base, ours, theirs; a missing part repeats
//! the last one; JSON text never holds a raw NUL). When all three parse:
//! merging never panics, a side that changed nothing gives the other side
//! (`merge(b, x, x) == x`, `merge(b, b, x) == x`), and the merged lock's
//! text parses back to it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::merge(data);
});
