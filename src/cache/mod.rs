//! Every cache git-kams keeps under `$GIT_COMMON_DIR/kams/`, in one place
//! at the edge (docs/architecture.md, "The caches").
//!
//! Each cache is a function of what it is keyed by: look the key up, else
//! compute with the core's pure function and store. None can hide a
//! change: a key names every byte its answer depends on (a blob id, a
//! BLAKE3 hash of the text, a commit id), a file that does not decode and
//! check is ignored and written anew, and `git -c kams.indexCache=false`
//! (the indexes, the stat records and the findings memo) and
//! `kams.logCache=false` (the log cache) turn them off.
//!
//! - [`store`]: the sealed, versioned file store every cache writes through,
//!   in the layout of [`codec`].
//! - [`stamp`]: a large file's hash, remembered by what `stat` says of it.
//! - [`lock`]: what reading and verifying a lock found.
//! - [`inventory`]: what reading a set of inventory files found.
//! - [`findings`]: what the detectors found in each tool.
//! - [`log`]: what `git kams log` learned of the lock's history.

pub mod codec;
pub mod findings;
pub mod inventory;
pub mod lock;
pub mod log;
pub mod stamp;
pub mod store;
