//! `kams.lock`: what was seen and what was approved, per server and tool.
//!
//! [`format`](mod@format), `write`, `read` and `verify` are the data, its
//! one canonical text layout, its strict reader, and the quick check of an
//! entry as written here; [`diff`] and [`merge`] what a change did and the
//! three-way merge. All of it takes bytes or values: the file on disk,
//! read and written under a claim, is the edge's
//! ([`crate::files::lock`]), and so is its index ([`crate::cache::lock`]).
//! The layout is specified in `docs/lockfile.md`.

pub mod diff;
pub mod format;
pub mod merge;
mod read;
mod verify;
mod write;

pub use format::{Approval, Entry, Lock, LockServer, State, FORMAT_VERSION, MAX_LOCK_SIZE};
