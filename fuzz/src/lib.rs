//! The properties the fuzz targets check, one function per target, each
//! calling git-kams' own entry points on arbitrary bytes. They live here,
//! not in the targets, so that `tests/it/fuzz_regressions.rs` runs the same
//! checks on every minimised crasher kept in `tests/fixtures/fuzz/`: it
//! `include!`s `checks.rs` (the main crate cannot depend on this one,
//! which is its own workspace).

include!("checks.rs");
