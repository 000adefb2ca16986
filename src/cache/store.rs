//! What git-kams's cache files under `$GIT_COMMON_DIR/kams/` share: the
//! layout of [`super::codec`] (derived records in postcard's layout,
//! framed by hand) read by a reader that answers `None` past its end or on
//! anything it does not expect, a BLAKE3 seal over the whole file (so
//! truncation and corruption show), a size cap on reading, and writing by
//! a temporary file and a rename (so a reader sees the old file or the new
//! one).
//!
//! The log cache ([`super::log`]), the lock and inventory indexes
//! ([`crate::cache::lock`], [`crate::cache::inventory`]) and the findings
//! memo ([`crate::cache::findings`]) are such files.

use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::codec::{Decoder, Encoder};
use crate::canon::Digest;

/// The length of the seal at the end of every cache file.
pub const SEAL_LEN: usize = blake3::OUT_LEN;

/// `body` followed by its BLAKE3 hash.
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    body.extend_from_slice(sum(&[&body]).as_bytes());
    body
}

/// The seal of a body written in `parts`, one after the other.
fn sum(parts: &[&[u8]]) -> blake3::Hash {
    let mut sum = blake3::Hasher::new();
    for part in parts {
        sum.update(part);
    }
    sum.finalize()
}

/// The body of a sealed file, `None` when the seal does not match.
#[cfg(test)]
fn unseal(bytes: &[u8]) -> Option<&[u8]> {
    unseal_giving(bytes, &keep)
}

/// [`unseal`], hashing a few MiB at a time and giving each range hashed
/// to `release` (see [`Giving`]).
fn unseal_giving<'a>(bytes: &'a [u8], release: &dyn Fn(Range<usize>)) -> Option<&'a [u8]> {
    const STEP: usize = 2 << 20;
    let body = bytes.get(..bytes.len().checked_sub(SEAL_LEN)?)?;
    let mut sum = blake3::Hasher::new();
    for (i, chunk) in body.chunks(STEP).enumerate() {
        sum.update(chunk);
        release(i * STEP..i * STEP + chunk.len());
    }
    (sum.finalize().as_bytes() == &bytes[body.len()..]).then_some(body)
}

/// A release that keeps everything: for bytes that are not a mapped file
/// (see [`Named::open_giving`]).
pub fn keep(_: Range<usize>) {}

/// Gives a mapped cache file's pages back to the system while it is
/// decoded: the seal is checked a few MiB at a time, each range released
/// once hashed, and the decoder calls [`Giving::behind`] as it moves on,
/// so that a large index is never resident whole next to what is built
/// from it (a warm scan decodes the lock and inventory indexes at once,
/// on two threads: docs/performance.md, "Ninth pass", cab3197). Pages
/// read again come back from the page cache.
pub struct Giving<'a> {
    start: usize,
    release: &'a dyn Fn(Range<usize>),
    behind: crate::bytes::ReleaseBehind,
}

impl Giving<'_> {
    /// Releases what `r` has read, in steps of a few MiB.
    pub fn behind(&mut self, r: &Decoder<'_>) {
        let at = r.rest.as_ptr() as usize - self.start;
        self.behind.advance_with(self.release, at);
    }
}

/// Names a file's content: BLAKE3, a cryptographic hash (an index named
/// by a collision would describe another text), and faster than SHA-256
/// with SHA-NI on the large lock and inventory a scan names on every run
/// (docs/performance.md, "Third pass", "After BLAKE3 names"). Short texts
/// are named by [`crate::inventory::text_name`].
pub struct Namer(blake3::Hasher);

impl Namer {
    /// An empty one.
    pub fn new() -> Namer {
        Namer(blake3::Hasher::new())
    }
    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    /// Adds `bytes` 8 MiB at a time, calling `done(n)` with the length
    /// added so far after each (whose memory may be given back).
    pub fn update_releasing(&mut self, bytes: &[u8], done: &mut dyn FnMut(usize)) {
        let mut n = 0;
        for chunk in bytes.chunks(8 << 20) {
            self.0.update(chunk);
            n += chunk.len();
            done(n);
        }
    }
    /// The name of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        let mut n = Namer::new();
        n.update(bytes);
        n.finish()
    }
    /// The name.
    pub fn finish(&self) -> Digest {
        Digest(*self.0.finalize().as_bytes())
    }
}

impl Default for Namer {
    fn default() -> Namer {
        Namer::new()
    }
}

/// The file's bytes (mapped when large: they leave memory with the
/// returned value, where bytes read into the heap may stay with the
/// allocator), `None` when it is missing, unreadable or larger than `max`.
/// Files are only ever replaced by a rename, never changed in place, so a
/// mapping keeps the bytes it was made of.
pub fn read(file: &Path, max: u64) -> Option<crate::input::Input> {
    crate::input::Input::read(file, max).ok()
}

/// Writes `bytes` to `file` through a temporary file
/// (`.{stem}-{pid}-{n}.tmp` next to it, `n` counting this process's
/// writes, since two threads may write at once) and a rename, creating
/// the folder.
pub fn write(file: &Path, stem: &str, bytes: &[u8]) -> std::io::Result<()> {
    write_parts(file, stem, &[bytes])
}

/// [`write()`] of `parts`, one after the other.
fn write_parts(file: &Path, stem: &str, parts: &[&[u8]]) -> std::io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{stem}-{}-{n}.tmp", std::process::id()));
    // A new file: `O_EXCL` follows no link left at the name.
    let written = std::fs::File::create_new(&tmp)
        .and_then(|mut f| parts.iter().try_for_each(|part| f.write_all(part)))
        .and_then(|()| std::fs::rename(&tmp, file));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Removes all but the newest `keep` files of `dir` whose names start
/// with `prefix` and end in `.idx`.
pub fn prune(dir: &Path, prefix: &str, keep: usize) {
    for old in newest(dir, prefix).into_iter().skip(keep) {
        let _ = std::fs::remove_file(old);
    }
}

/// The files under `dir` whose names start with `prefix` and end with
/// `.idx`, newest first.
fn newest(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, std::path::PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(prefix) && name.ends_with(".idx")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, path)| path).collect()
}

/// For tests of a decoder: `sealed` with byte `at` of its body changed
/// and sealed again, a well-formed file that says something else (what a
/// writer with a bug, or someone who can write to `.git`, could leave).
#[cfg(test)]
pub fn forged(sealed: &[u8], at: usize, xor: u8) -> Vec<u8> {
    let mut body = sealed[..sealed.len() - 32].to_vec();
    let at = at % body.len();
    body[at] ^= xor;
    seal(body)
}

/// The build that writes and reads the cache files: the release and a
/// digest of the sources it was built from (`build.rs`). Two builds of
/// one release with different detectors share `.git/kams` (worktrees of
/// one repository do), and must not read each other's findings.
pub const WRITER: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("KAMS_SOURCE_DIGEST"));

/// A kind of cache file named by the content it describes:
/// `$GIT_COMMON_DIR/kams/<prefix><name>.idx`. Each starts with `magic`
/// (the kind and its layout's version), the build of git-kams that wrote
/// it ([`WRITER`]: another may read or detect differently) and its name, and ends with
/// its seal. Files larger than [`Named::MAX_SIZE`] are not read, and only
/// the newest `keep` of a kind are kept.
pub struct Named {
    /// The start of the file names.
    pub prefix: &'static str,
    /// The first bytes; the last is the layout's version.
    pub magic: &'static [u8; 12],
    /// How many files of this kind are kept (see [`Named::KEEP`]).
    pub keep: usize,
}

impl Named {
    /// Largest file read.
    pub const MAX_SIZE: u64 = 1 << 30;
    /// Files kept of a kind whose files describe a lock or an inventory:
    /// a branch switch or a pin makes a new one.
    pub const KEEP: usize = 8;

    /// The file named `name` under the common git directory `common_dir`.
    pub fn file(&self, common_dir: &Path, name: &str) -> std::path::PathBuf {
        common_dir
            .join("kams")
            .join(format!("{}{name}.idx", self.prefix))
    }

    /// A writer that has written the header of the file named `name`.
    pub fn begin(&self, name: &str, capacity: usize) -> Encoder {
        let mut out = Encoder(Vec::with_capacity(capacity));
        out.0.extend_from_slice(self.magic);
        out.bytes(WRITER.as_bytes());
        out.bytes(name.as_bytes());
        out
    }

    /// A reader of the body of `bytes`, when they are a sealed file of
    /// this kind and layout, by this release, named `name`.
    pub fn open<'a>(&self, bytes: &'a [u8], name: &str) -> Option<Decoder<'a>> {
        self.open_giving(bytes, name, &keep).map(|(r, _)| r)
    }

    /// [`Named::open`], giving `bytes`' ranges to `release` as they are
    /// checked and then read (see [`Giving`]); [`keep`] releases nothing.
    pub fn open_giving<'a>(
        &self,
        bytes: &'a [u8],
        name: &str,
        release: &'a dyn Fn(Range<usize>),
    ) -> Option<(Decoder<'a>, Giving<'a>)> {
        let mut r = Decoder {
            rest: unseal_giving(bytes, release)?.strip_prefix(self.magic)?,
        };
        let giving = Giving {
            start: bytes.as_ptr() as usize,
            release,
            behind: Default::default(),
        };
        (r.bytes()? == WRITER.as_bytes() && r.bytes()? == name.as_bytes()).then_some((r, giving))
    }

    /// The bytes of the file named `name`, if there is one to read.
    pub fn read(&self, common_dir: &Path, name: &str) -> Option<crate::input::Input> {
        read(&self.file(common_dir, name), Named::MAX_SIZE)
    }

    /// The names of the files of this kind, newest first.
    pub fn newest(&self, common_dir: &Path) -> Vec<String> {
        newest(&common_dir.join("kams"), self.prefix)
            .iter()
            .filter_map(|path| {
                let file = path.file_name()?.to_str()?;
                let name = file.strip_prefix(self.prefix)?.strip_suffix(".idx")?;
                Some(name.to_string())
            })
            .collect()
    }

    /// Seals `out` into the file named `name`, and removes all but the
    /// newest `keep` of this kind. While a [`BackgroundWrites`] lives, this happens
    /// on a thread of its own and returns `Ok` at once.
    pub fn store(&self, common_dir: &Path, name: &str, out: Encoder) -> std::io::Result<()> {
        self.store_parts(common_dir, name, vec![out])
    }

    /// [`Named::store`] of `parts` one after the other, as one file: parts
    /// encoded apart (on a core each) are joined without a copy.
    pub fn store_parts(
        &self,
        common_dir: &Path,
        name: &str,
        parts: Vec<Encoder>,
    ) -> std::io::Result<()> {
        let path = self.file(common_dir, name);
        let (prefix, keep) = (self.prefix, self.keep);
        let store = move || -> std::io::Result<()> {
            let mut all: Vec<&[u8]> = parts.iter().map(|part| part.0.as_slice()).collect();
            let seal = sum(&all);
            all.push(seal.as_bytes());
            write_parts(&path, prefix.trim_end_matches('-'), &all)?;
            prune(path.parent().unwrap_or(Path::new(".")), prefix, keep);
            Ok(())
        };
        let mut background = BACKGROUND_WRITES.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pending) = background.as_mut() else {
            return store();
        };
        // A thread that cannot be started (a process limit) is no reason
        // to fail: the file is written here then.
        type Store = Box<dyn FnOnce() -> std::io::Result<()> + Send>;
        let job: Arc<Mutex<Option<Store>>> = Arc::new(Mutex::new(Some(Box::new(store))));
        let theirs = job.clone();
        let take =
            |job: &Mutex<Option<Store>>| job.lock().unwrap_or_else(|e| e.into_inner()).take();
        match std::thread::Builder::new().spawn(move || {
            if let Some(store) = take(&theirs) {
                let _ = store();
            }
        }) {
            Ok(thread) => {
                pending.push(thread);
                Ok(())
            }
            Err(_) => {
                drop(background);
                take(&job).map_or(Ok(()), |store| store())
            }
        }
    }
}

/// The stores [`BackgroundWrites`] lets finish on threads of their own.
static BACKGROUND_WRITES: std::sync::Mutex<Option<Vec<std::thread::JoinHandle<()>>>> =
    std::sync::Mutex::new(None);

/// While one lives, [`Named::store`] writes on a thread of its own, so
/// that a run goes on while the file is written (a large scan's writes
/// cost enough CPU to be worth overlapping: docs/performance.md, "Ninth
/// pass", 7eec8a2); dropping it waits for every such write. The binary
/// holds one for the whole run: a cache file only saves time, so its
/// errors were never reported, and each is still written whole or not at
/// all.
pub struct BackgroundWrites(());

impl BackgroundWrites {
    /// Defers stores until the returned guard drops.
    pub fn begin() -> BackgroundWrites {
        let mut pending = BACKGROUND_WRITES.lock().unwrap_or_else(|e| e.into_inner());
        pending.get_or_insert_with(Vec::new);
        BackgroundWrites(())
    }
}

impl Drop for BackgroundWrites {
    fn drop(&mut self) {
        let pending = BACKGROUND_WRITES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        for write in pending.into_iter().flatten() {
            let _ = write.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_shows_every_flipped_byte_and_truncation() {
        let sealed = seal(b"some body".to_vec());
        assert_eq!(unseal(&sealed), Some(&b"some body"[..]));
        for n in 0..sealed.len() {
            assert_eq!(unseal(&sealed[..n]), None);
            let mut bad = sealed.clone();
            bad[n] ^= 1;
            assert_eq!(unseal(&bad), None);
        }
    }

    #[test]
    fn a_file_given_back_as_it_is_read_reads_the_same() {
        const NAMED: Named = Named {
            prefix: "test-",
            magic: b"kams-tst\0\0\0\x01",
            keep: 1,
        };
        // Three 2 MiB steps and a bit, in entries of 1000 bytes.
        let mut out = NAMED.begin("n", 0);
        let entries = (6 << 20) / 1000 + 7;
        out.u32(entries);
        for i in 0..entries {
            out.bytes(&[(i % 251) as u8; 996]);
        }
        let sealed = seal(out.0);
        let given = std::cell::RefCell::new(Vec::new());
        let release = |r: Range<usize>| given.borrow_mut().push(r);
        let (mut r, mut giving) = NAMED.open_giving(&sealed, "n", &release).expect("opens");
        // The seal was checked a step at a time, each range given once.
        let body = sealed.len() - 32;
        let checked: Vec<Range<usize>> = given.borrow_mut().drain(..).collect();
        assert_eq!(checked.first().map(|r| r.start), Some(0));
        assert!(checked.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(checked.last().map(|r| r.end), Some(body));
        // Then behind the reader, in whole steps, what it read and no more.
        for i in 0..r.count().expect("a count") {
            giving.behind(&r);
            assert_eq!(r.bytes(), Some(&[(i % 251) as u8; 996][..]));
        }
        let behind: Vec<Range<usize>> = given.borrow().clone();
        assert_eq!(behind, vec![0..2 << 20, 2 << 20..4 << 20, 4 << 20..6 << 20]);
        assert!(r.rest.is_empty());
        // A flipped byte is still a broken seal.
        let mut bad = sealed.clone();
        bad[5 << 20] ^= 1;
        assert!(NAMED.open_giving(&bad, "n", &keep).is_none());
    }

    #[test]
    fn parts_are_stored_as_one_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        const PARTS: Named = Named {
            prefix: "parts-",
            magic: b"kams-prt\0\0\0\x01",
            keep: 2,
        };
        let mut first = PARTS.begin("n", 0);
        first.u32(3);
        first.bytes(b"one");
        let mut second = Encoder(Vec::new());
        second.bytes(b"two");
        second.bytes(b"three");
        let mut joined = first.0.clone();
        joined.extend_from_slice(&second.0);
        PARTS
            .store_parts(dir.path(), "n", vec![first, second])
            .expect("stores");
        let file = std::fs::read(PARTS.file(dir.path(), "n")).expect("written");
        assert_eq!(file, seal(joined));
        let mut r = PARTS.open(&file, "n").expect("opens");
        let items = r.list(|r| r.bytes());
        assert_eq!(items.as_deref(), Some(&[&b"one"[..], b"two", b"three"][..]));
        assert!(r.rest.is_empty());
    }
}
