//! `kams.lock`: what was seen and what was approved, per server and tool.
//!
//! [`format`](mod@format) is the pure part (the data, its one canonical text layout and
//! its strict reader); [`store`] is the edge (reading the file, and writing
//! it atomically under a lock file that a second writer respects).
//! The layout is specified in `docs/lockfile.md`.

pub mod diff;
pub mod format;
pub mod merge;
pub mod store;

pub use format::{Approval, Entry, Lock, LockServer, State, FORMAT_VERSION};
