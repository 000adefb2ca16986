//! The bytes of an input file, read or mapped.
//!
//! A large inventory or lock is mapped instead of read: reading copies
//! every byte into freshly zeroed heap pages (much of a large scan's
//! time: docs/performance.md, "Figures moved out of code comments"),
//! while a mapping shares the page cache's copy. A mapped file's pages
//! also leave the process's memory when a reader is done with them
//! ([`Input::release`]), so a lock larger than the memory target is
//! walked without holding it.
//!
//! The risk a mapping brings: a file truncated by another process while it
//! is mapped ends this one with SIGBUS (exit 135), which fails closed; a
//! file rewritten in place can show a mix of both versions, which the
//! strict readers reject or read as the content they see. git-kams itself
//! only ever replaces files by renaming, which leaves a mapping intact.

use std::ops::{Deref, Range};
use std::path::Path;

use crate::bytes::Bytes;
use crate::inventory::InputError;

/// Files from this size on are mapped; smaller ones are read.
pub const MAP_FROM: u64 = 1 << 20;

/// From this input size on, the process gives up transparent huge pages
/// (see [`no_huge_pages`]).
pub const LARGE_RUN: u64 = 4 << 20;

/// No transparent huge pages for the rest of this process. mimalloc asks
/// for them (`madvise`), and the kernel then zeroes 2 MiB at the first
/// touch of each, which dominated a large scan's system time. A short run
/// gains from them, so they are given up only when a large input shows
/// up (docs/performance.md, "Second optimisation pass"). Failing to set
/// it changes nothing else.
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and touches no
    // memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

impl Bytes for Input {
    fn release(&self, range: Range<usize>) {
        Input::release(self, range);
    }
    fn read_range(&self, range: Range<usize>) -> std::borrow::Cow<'_, [u8]> {
        Input::read_range(self, range)
    }
}

/// An input file's bytes, past a leading byte order mark if
/// [`Input::strip_bom`] removed one.
pub struct Input {
    repr: Repr,
    start: usize,
    /// What `stat` said of the file when it was opened, for a mapped file.
    stamp: Option<crate::cache::stamp::Stamp>,
}

enum Repr {
    Owned(Vec<u8>),
    /// The mapping, and the file for [`Input::read_range`].
    Mapped(memmap2::Mmap, std::fs::File),
}

impl Input {
    /// Reads (or maps) the regular file at `path`, refusing it past
    /// `max_size`.
    pub fn read(path: &Path, max_size: u64) -> Result<Input, InputError> {
        let (file, meta) = crate::files::open_capped(path, max_size)?;
        if meta.len() >= LARGE_RUN {
            no_huge_pages();
        }
        if meta.is_file() && meta.len() >= MAP_FROM {
            // SAFETY: the mapping is read-only and private; see the module
            // comment for what another process changing the file can do.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                return Ok(Input {
                    repr: Repr::Mapped(map, file),
                    start: 0,
                    stamp: crate::cache::stamp::Stamp::of(&meta),
                });
            }
        }
        // Read whole, it is hashed whole on every run (under 1 MiB, that
        // costs less than reading a record): no stamp.
        Ok(Input::from(crate::files::read_open(
            file, &meta, path, max_size,
        )?))
    }

    /// What `stat` said of the file when it was opened, for a mapped file
    /// (`None` for one read whole, or bytes that came from elsewhere: git,
    /// a capture).
    pub fn stamp(&self) -> Option<crate::cache::stamp::Stamp> {
        self.stamp
    }

    /// The open file, for a mapped one.
    pub fn file(&self) -> Option<&std::fs::File> {
        match &self.repr {
            Repr::Mapped(_, file) => Some(file),
            Repr::Owned(_) => None,
        }
    }

    /// Skips a leading UTF-8 byte order mark (RFC 8259 lets a parser
    /// ignore it; it never reaches a string, so it cannot hide anything).
    pub fn strip_bom(mut self) -> Input {
        if self.starts_with(b"\xEF\xBB\xBF") {
            self.start += 3;
        }
        self
    }

    /// The bytes of `range`, for a mapped file read from the file into
    /// memory of their own instead of through the mapping: a few scattered
    /// entries of a large file (the drifted ones) each brought 64 KiB of
    /// the mapping in (fault-around), to be given back one system call
    /// and a TLB flush on every core at a time. The file is the one mapped
    /// (a file git-kams replaces is renamed over, not written into);
    /// should reading fail, the mapping serves.
    pub fn read_range(&self, range: Range<usize>) -> std::borrow::Cow<'_, [u8]> {
        #[cfg(unix)]
        if let Repr::Mapped(_, file) = &self.repr {
            use std::os::unix::fs::FileExt;
            let mut buf = vec![0; range.len()];
            let at = (self.start + range.start) as u64;
            if range.end <= self.len() && file.read_exact_at(&mut buf, at).is_ok() {
                return std::borrow::Cow::Owned(buf);
            }
        }
        std::borrow::Cow::Borrowed(&self[range])
    }

    /// Tells the system that `range` is not needed for now: a mapped
    /// file's pages inside it leave this process's resident memory (they
    /// are read again from the file if touched). Read bytes stay as they
    /// are. Never changes what the bytes are.
    pub fn release(&self, range: Range<usize>) {
        let Repr::Mapped(map, _) = &self.repr else {
            return;
        };
        const PAGE: usize = 4096;
        let from = (self.start + range.start).div_ceil(PAGE) * PAGE;
        let to = ((self.start + range.end.min(self.len())) / PAGE) * PAGE;
        if to > from {
            // SAFETY: the mapping is private and never written, so
            // dropping its pages only makes the next access read the file
            // again; no reference into it becomes invalid.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }
}

impl From<Vec<u8>> for Input {
    fn from(bytes: Vec<u8>) -> Input {
        Input {
            repr: Repr::Owned(bytes),
            start: 0,
            stamp: None,
        }
    }
}

impl Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        let all: &[u8] = match &self.repr {
            Repr::Owned(v) => v,
            Repr::Mapped(m, _) => m,
        };
        &all[self.start..]
    }
}

impl AsRef<[u8]> for Input {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_and_read_files_give_the_same_bytes_and_release_keeps_them() {
        let dir = std::env::temp_dir().join(format!("kams-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.json");
        let mut text = b"\xEF\xBB\xBF".to_vec();
        text.extend((0..MAP_FROM as usize * 3).map(|i| b'a' + (i % 26) as u8));
        std::fs::write(&big, &text).unwrap();
        let input = Input::read(&big, u64::MAX).unwrap().strip_bom();
        assert!(matches!(input.repr, Repr::Mapped(..)));
        assert_eq!(&input[..], &text[3..]);
        input.release(0..input.len());
        assert_eq!(&input[..], &text[3..], "released pages read back the same");
        // Read apart from the mapping, past the mark too.
        for range in [0..10, 5000..5100, input.len() - 7..input.len()] {
            let apart = input.read_range(range.clone());
            assert!(matches!(apart, std::borrow::Cow::Owned(_)), "{range:?}");
            assert_eq!(&*apart, &text[3 + range.start..3 + range.end], "{range:?}");
        }
        let small = dir.join("small.json");
        std::fs::write(&small, b"{}").unwrap();
        let input = Input::read(&small, 10).unwrap();
        assert!(matches!(input.repr, Repr::Owned(_)));
        assert_eq!(&input[..], b"{}");
        assert!(matches!(
            input.read_range(0..1),
            std::borrow::Cow::Borrowed(b"{")
        ));
        assert!(Input::read(&big, 100).is_err(), "the cap holds for maps");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
