//! A large file's BLAKE3 hash, remembered by what `stat` says of the
//! file, as git's index remembers each tracked file's blob id: the lock
//! index and the inventory index are named by the hash of the bytes they
//! describe (see [`super::store::Namer`]), and hashing a large lock on
//! every run costs more than reading its index (docs/performance.md,
//! "The stat cache and shared mappings" and "Fourth pass", 0252aff).
//!
//! A record (`.git/kams/stamp-<hex>.idx`, one per file, `<hex>` the BLAKE3
//! hash of the file's path) holds the file's device, inode, size,
//! modification and change times, and the hash of its bytes. A file whose
//! `stat` data are all the same is taken to hold the same bytes. A
//! `write` sets a file's change time to the current time, and user
//! programs cannot set it back (`touch` sets the modification time only);
//! a write through a shared mapping sets it only at the first write to a
//! clean page, and a page stays writable, without another change of time,
//! until the kernel writes it back. So:
//!
//! - only mapped files (1 MiB and more) are recorded, on Linux, on a file
//!   system that writes pages back (not tmpfs or ramfs, which never do);
//!   a smaller file is hashed on every run;
//! - before a file's bytes are hashed for a record, its dirty pages are
//!   written back (`fdatasync`), which write-protects them in every
//!   mapping: a write after that, through a mapping made before too, sets
//!   the change time. Its stamp must still be the one it had when opened;
//! - a file is recorded only when both its times are at least
//!   [`RACY_SECONDS`] older than the clock before it was hashed (git's
//!   "racily clean" rule): a file written since then, even within the
//!   same tick of a coarse file-system clock, has another change time;
//! - a file replaced by another (a checkout, a rename, `cp -p`) has another
//!   inode or change time.
//!
//! What this trusts beyond git is the clock not going back, the file
//! system keeping change times as Linux's disk file systems do, and nobody
//! with the rights to write the disk or `.git` directly: the same as the
//! indexes, which `kams.indexCache=false` turns off with this.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::codec::{self, Encoder};
use super::store::{self, Namer};
use crate::canon::Digest;
use crate::input::Input;

/// The record files.
const RECORDS: store::Named = store::Named {
    prefix: "stamp-",
    magic: b"kams-stp\0\0\0\x02",
    keep: 256,
};

/// A file changed less than this long (in seconds) before it was hashed
/// is not recorded.
pub const RACY_SECONDS: i64 = 2;

/// What `stat` says of a file, as far as it tells whether it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    /// Modification time: seconds and nanoseconds since 1970.
    mtime: (i64, i64),
    /// Change time (of the data or of the inode).
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of an open file's metadata (`None` where there is no
    /// inode and change time to go by).
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        meta.is_file().then(|| Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// The stamp of an open file's metadata (`None` where there is no
    /// inode and change time to go by).
    #[cfg(not(unix))]
    pub fn of(_meta: &std::fs::Metadata) -> Option<Stamp> {
        None
    }

    /// True when both times are at least [`RACY_SECONDS`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let limit = i64::try_from(now.as_secs()).unwrap_or(i64::MAX) - RACY_SECONDS;
        self.mtime.0 < limit && self.ctime.0 < limit
    }
}

/// The BLAKE3 hash of `bytes` (what [`Namer`] gives), the content of the
/// file at `path`, open as `file`, whose stamp was `stamp` when it was
/// opened: from its record under `common_dir` when the stamp is the same,
/// else hashed (calling `done` as [`Namer::update_releasing`] does) and
/// recorded when it may be ([`flushed`]).
pub fn digest(
    common_dir: Option<&Path>,
    path: &Path,
    file: Option<&std::fs::File>,
    stamp: Option<Stamp>,
    bytes: &[u8],
    done: &mut dyn FnMut(usize),
) -> Digest {
    let at = common_dir.zip(stamp);
    let name = at.map(|_| record_name(path));
    if let (Some((dir, stamp)), Some(name)) = (at, &name) {
        let found = RECORDS
            .read(dir, name)
            .and_then(|file| decode(&file, name, path, &stamp));
        if let Some(d) = found {
            return d;
        }
    }
    // Flushed before the bytes are read, so that what is hashed is all a
    // write that keeps the stamp could have changed.
    let may_record = at.is_some_and(|(_, stamp)| file.is_some_and(|f| flushed(f, &stamp)));
    let now = SystemTime::now();
    let mut namer = Namer::new();
    namer.update_releasing(bytes, done);
    let d = namer.finish();
    if let (Some((dir, stamp)), Some(name)) = (at, &name) {
        if may_record && stamp.settled(now) {
            // Saves time only: an unwritable repository is no reason to
            // fail.
            let _ = RECORDS.store(dir, name, encode(name, path, &stamp, &d));
        }
    }
    d
}

/// [`digest`] of a file as [`Input::read`] gave it (its stamp and its
/// bytes), whose pages are given back as they are hashed.
pub fn digest_of(common_dir: &Path, path: &Path, input: &Input) -> Digest {
    digest(
        Some(common_dir),
        path,
        input.file(),
        input.stamp(),
        input,
        &mut |n| input.release(0..n),
    )
}

/// Whether a hash of `file`'s bytes read from now on may be recorded for
/// `stamp`: its file system writes pages back, its dirty pages were just
/// written back (`fdatasync`, which write-protects them in every shared
/// mapping, so that the next write through one sets the change time), and
/// `stamp` is still what `stat` says of it.
#[cfg(target_os = "linux")]
fn flushed(file: &std::fs::File, stamp: &Stamp) -> bool {
    use std::os::fd::AsRawFd;
    if !writes_back(file) {
        return false;
    }
    // SAFETY: fdatasync on a descriptor we own; no memory is involved.
    if unsafe { libc::fdatasync(file.as_raw_fd()) } != 0 {
        return false;
    }
    file.metadata().ok().and_then(|m| Stamp::of(&m)) == Some(*stamp)
}

#[cfg(not(target_os = "linux"))]
fn flushed(_file: &std::fs::File, _stamp: &Stamp) -> bool {
    false
}

/// False on tmpfs and ramfs, whose pages are never written back: a page
/// written once through a shared mapping stays writable, and later writes
/// through it change no time at all.
#[cfg(target_os = "linux")]
fn writes_back(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    // SAFETY: fstatfs fills the struct it is given, which is ours and
    // zeroed; the descriptor is ours.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut fs) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)]
    let kind = fs.f_type as i64;
    kind != TMPFS_MAGIC && kind != RAMFS_MAGIC
}

/// The record's name: the hash of the file's absolute path (as given when
/// it cannot be made absolute).
fn record_name(path: &Path) -> String {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Namer::of(path.as_os_str().as_encoded_bytes()).hex()
}

/// A record's body: the file's path, its stamp and its hash.
#[derive(Serialize, Deserialize)]
struct Record<'a> {
    #[serde(with = "codec::bytes", borrow)]
    path: &'a [u8],
    stamp: Stamp,
    digest: Digest,
}

fn encode(name: &str, path: &Path, stamp: &Stamp, d: &Digest) -> Encoder {
    let mut out = RECORDS.begin(name, 256);
    out.record(&Record {
        path: path.as_os_str().as_encoded_bytes(),
        stamp: *stamp,
        digest: *d,
    });
    out
}

/// The recorded hash, when the record is of `path` with `stamp`.
fn decode(bytes: &[u8], name: &str, path: &Path, stamp: &Stamp) -> Option<Digest> {
    let r = RECORDS.open(bytes, name)?;
    let record: Record = codec::whole(r.rest)?;
    (record.path == path.as_os_str().as_encoded_bytes() && record.stamp == *stamp)
        .then_some(record.digest)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn stamp_of(path: &Path) -> Stamp {
        Stamp::of(&std::fs::metadata(path).unwrap()).unwrap()
    }

    /// A file's hash is recorded once it is old enough, then served while
    /// its stamp holds, and hashed anew after any change, even one that
    /// keeps its size and modification time.
    #[test]
    fn a_recorded_hash_serves_only_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path().join("git");
        std::fs::create_dir_all(common.join("kams")).unwrap();
        let file = dir.path().join("kams.lock");
        std::fs::write(&file, b"one").unwrap();
        let open = std::fs::File::open(&file).unwrap();
        let f = Some(&open);
        let hash = Namer::of;
        let records = || cachefile_count(&common);
        // Just written: hashed, not recorded.
        let d = digest(
            Some(&common),
            &file,
            f,
            Some(stamp_of(&file)),
            b"one",
            &mut |_| {},
        );
        assert_eq!(d, hash(b"one"));
        assert_eq!(records(), 0, "a file this new is not recorded");
        if !writes_back(&open) {
            // tmpfs: never recorded.
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(
            (RACY_SECONDS as u64 + 1) * 1000 + 100,
        ));
        let stamp = stamp_of(&file);
        assert_eq!(
            digest(Some(&common), &file, f, Some(stamp), b"one", &mut |_| {}),
            hash(b"one")
        );
        assert_eq!(records(), 1);
        // Served without looking at the bytes: they are not hashed.
        let mut hashed = false;
        let served = digest(Some(&common), &file, f, Some(stamp), b"two", &mut |_| {
            hashed = true
        });
        assert_eq!((served, hashed), (hash(b"one"), false));
        // Written again with the same size and modification time: the
        // change time moved, so it is hashed.
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, b"two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let after = stamp_of(&file);
        assert_ne!(after, stamp);
        assert_eq!(
            digest(Some(&common), &file, f, Some(after), b"two", &mut |_| {}),
            hash(b"two")
        );
        // Another path with the same stamp has its own record; no stamp or
        // no directory means hashing.
        let other = dir.path().join("other.lock");
        assert_eq!(
            digest(Some(&common), &other, f, Some(stamp), b"x", &mut |_| {}),
            hash(b"x")
        );
        assert_eq!(
            digest(None, &file, f, Some(stamp), b"y", &mut |_| {}),
            hash(b"y")
        );
        assert_eq!(
            digest(Some(&common), &file, f, None, b"y", &mut |_| {}),
            hash(b"y")
        );
    }

    fn cachefile_count(common: &Path) -> usize {
        std::fs::read_dir(common.join("kams"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("stamp-")
            })
            .count()
    }

    /// A record read back is the one written, and any damage, or a record
    /// of another path or stamp, is refused without a panic.
    #[test]
    fn a_record_reads_back_for_its_path_and_stamp_only() {
        let stamp = Stamp {
            dev: 1,
            ino: 2,
            size: 3,
            mtime: (4, 5),
            ctime: (6, -7),
        };
        let path = Path::new("/r/kams.lock");
        let d = Digest::of(b"text");
        let bytes = store::seal(encode("n", path, &stamp, &d).0);
        assert_eq!(decode(&bytes, "n", path, &stamp), Some(d));
        assert_eq!(decode(&bytes, "m", path, &stamp), None);
        assert_eq!(decode(&bytes, "n", Path::new("/r/x"), &stamp), None);
        let moved = Stamp { ino: 9, ..stamp };
        assert_eq!(decode(&bytes, "n", path, &moved), None);
        for n in 0..bytes.len() - 32 {
            for xor in [0x01, 0x80, 0xff] {
                let _ = decode(&store::forged(&bytes, n, xor), "n", path, &stamp);
            }
        }
        for n in 0..bytes.len() {
            assert_eq!(decode(&bytes[..n], "n", path, &stamp), None);
        }
    }
}
