//! Bytes that a reader shares with the descriptors it built, and may give
//! back for a while: the core's view of an input, whatever holds it.
//!
//! The core reads inventories and locks from bytes and keeps, for each
//! tool, only where its text is (see [`crate::descriptor::Lazy`]). What
//! holds the bytes is the edge's business ([`crate::input`] maps a large
//! file): the core only says, through [`Bytes::release`] and
//! [`Bytes::read_range`], when it is done with a range or wants a few
//! bytes without touching the rest, and the holder decides what that
//! costs. For bytes in memory both are no-ops.

use std::ops::Range;
use std::sync::Arc;

/// Bytes shared by a reader and the descriptors rebuilt from them later
/// (see [`crate::descriptor::Lazy`]).
pub type Shared = Arc<dyn Bytes>;

/// Bytes whose memory may be given back for a while.
pub trait Bytes: AsRef<[u8]> + Send + Sync {
    /// Says that `range` will not be read for a while, so that a mapped
    /// file's pages may leave memory (see [`crate::input::Input::release`]);
    /// nothing for bytes in memory.
    fn release(&self, _range: Range<usize>) {}
    /// The bytes of `range`, read without bringing their neighbours into
    /// memory (see [`crate::input::Input::read_range`]); the bytes
    /// themselves when in memory.
    fn read_range(&self, range: Range<usize>) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.as_ref()[range])
    }
}

impl Bytes for Vec<u8> {}

/// Gives back a mapped file's pages behind a reader that moves forward
/// through it (rebuilding drifted entries, in file order), each range
/// once. Releasing only the text of each entry is not enough: a touched
/// page brings its neighbours along (fault-around; a file written in
/// large chunks sits in 2 MiB folios, all mapped at the first touch).
#[derive(Default)]
pub struct ReleaseBehind {
    upto: usize,
}

impl ReleaseBehind {
    /// One that has given back nothing and starts from `upto`: ranges
    /// before it are another reader's.
    pub fn at(upto: usize) -> ReleaseBehind {
        ReleaseBehind { upto }
    }

    /// Releases `bytes` from where the last release stopped up to `to`,
    /// in steps of 2 MiB (a system call per tool cost more than it saved).
    pub fn advance(&mut self, bytes: &dyn Bytes, to: usize) {
        self.advance_with(&|range| bytes.release(range), to);
    }

    /// [`ReleaseBehind::advance`], giving each range to `release`.
    pub fn advance_with(&mut self, release: &dyn Fn(Range<usize>), to: usize) {
        const STEP: usize = 2 << 20;
        let to = to / STEP * STEP;
        if to > self.upto {
            release(self.upto..to);
            self.upto = to;
        }
    }
}

/// Drops a leading UTF-8 byte order mark (an editor may add one; RFC 8259
/// lets a parser ignore it, and it never reaches a string).
pub fn strip_bom(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    bytes
}
