//! `kams.lock`: what was seen and what was approved, per server and tool.
//!
//! [`format`](mod@format), `write`, `read` and `verify` are the pure part
//! (the data, its one canonical text layout, its strict reader, and the
//! quick check of an entry as written here); [`store`] is the edge
//! (reading the file, and writing it atomically under a lock file that a
//! second writer respects).
//! The layout is specified in `docs/lockfile.md`.

pub mod diff;
pub mod format;
pub mod merge;
mod read;
pub mod store;
mod verify;
mod write;

pub use format::{Approval, Entry, Lock, LockServer, State, FORMAT_VERSION};
