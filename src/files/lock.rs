//! Reading and writing `kams.lock` on disk: the edge of [`crate::lock`],
//! whose format, reader and writer are pure.
//!
//! A writer takes `kams.lock.lock` with `O_CREAT|O_EXCL` (git's own
//! convention for `index.lock`), reads the current lock while holding it,
//! writes the new text into the lock file, flushes it to disk and renames it
//! over `kams.lock`. Readers therefore see the old lock or the new one,
//! never half of one, and two writers cannot lose each other's update.
//!
//! The writer also holds an advisory `flock` on the lock file, which the
//! kernel drops when the process dies however it dies. A `kams.lock.lock`
//! that nobody holds and that is older than [`STALE_AFTER`] was left by a
//! killed run: the next writer removes it, says so, and goes on, instead of
//! refusing forever.
//!
//! A reader that keeps digests only goes through the lock's index
//! ([`crate::cache::lock::read`]), from the bytes [`read_input`] gives.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use super::read_capped;
use crate::input::Input;
use crate::lock::format::LockError;
use crate::lock::{Lock, MAX_LOCK_SIZE};

/// Reads the lock at `path`: `Ok(None)` when there is no file, an error
/// (never an empty lock) when it cannot be read or parsed.
pub fn read(path: &Path) -> Result<Option<Lock>> {
    let Some(bytes) = read_bytes(path)? else {
        return Ok(None);
    };
    parse_at(path, &bytes).map(Some)
}

/// The lock file's bytes past any byte order mark, read, or mapped when
/// large ([`Input::read`]), `None` when there is no file; an error as for
/// [`read_bytes`].
pub fn read_input(path: &Path) -> Result<Option<Input>> {
    if !exists(path)? {
        return Ok(None);
    }
    let input = Input::read(path, MAX_LOCK_SIZE).map_err(|e| anyhow!("{e}"))?;
    Ok(Some(input.strip_bom()))
}

/// The lock file's bytes without a byte order mark, `None` when there is
/// no file, an error past [`MAX_LOCK_SIZE`] or when it cannot be read.
pub fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    if !exists(path)? {
        return Ok(None);
    }
    let bytes = read_capped(path, MAX_LOCK_SIZE).map_err(|e| anyhow!("{e}"))?;
    Ok(Some(crate::bytes::strip_bom(bytes)))
}

/// Whether there is a lock file at `path`: an error when it cannot be
/// looked at, is no regular file (see [`refuse_special`]) or is larger
/// than [`MAX_LOCK_SIZE`].
fn exists(path: &Path) -> Result<bool> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => bail!(
            "{}: cannot read the lock: {e}",
            crate::text::shown_path(path)
        ),
        Ok(m) => m,
    };
    refuse_special(path)?;
    if meta.len() > MAX_LOCK_SIZE {
        bail!(
            "{}: the lock is larger than {MAX_LOCK_SIZE} bytes: refusing to read it",
            crate::text::shown_path(path)
        );
    }
    Ok(true)
}

/// Parses lock text, naming `path` in the error.
pub fn parse_at(path: &Path, bytes: &[u8]) -> Result<Lock> {
    Lock::parse(bytes).map_err(|e| lock_error(path, e))
}

/// A lock error as the user sees it.
pub fn lock_error(path: &Path, e: LockError) -> anyhow::Error {
    let at = e
        .pointer
        .filter(|p| !p.is_empty())
        .map(|p| format!(" (JSON pointer {})", crate::text::escape_display(&p)))
        .unwrap_or_default();
    let message = crate::text::escape_display(&e.message);
    if e.newer {
        anyhow!("{}: {message}{at}", crate::text::shown_path(path))
    } else {
        anyhow!(
                "{}: corrupt lock: {message}{at}; restore it from git (`git checkout -- {}`) or fix it by hand",
                crate::text::shown_path(path),
                crate::text::shown_path(path)
            )
    }
}

/// Age past which an unheld lock file counts as left by a dead writer.
/// A live writer holds its `flock` from a few microseconds after it
/// creates the file, so only a file this old and unheld is stale.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// An exclusive claim on the lock path, released on drop.
pub struct Guard {
    path: PathBuf,
    lock_path: PathBuf,
    file: Option<File>,
    recovered: Option<String>,
}

/// Takes the advisory lock on `file` without waiting; false when another
/// process holds it.
#[cfg(unix)]
fn try_flock(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor we own; no memory is involved.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

#[cfg(not(unix))]
fn try_flock(_file: &File) -> bool {
    false
}

impl Guard {
    /// Takes `PATH.lock`, failing at once if another writer holds it.
    pub fn acquire(path: &Path) -> Result<Guard> {
        refuse_special(path)?;
        // A lock moved by `kams.lock` may name a folder that does not exist yet.
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
        {
            std::fs::create_dir_all(dir).with_context(|| {
                format!("cannot create the folder {}", crate::text::shown_path(dir))
            })?;
        }
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let shown = crate::text::shown_path;
        let mut recovered = None;
        // Twice at most: once more after removing a stale file.
        for _ in 0..2 {
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock_path)
            {
                Ok(file) => {
                    // A new file nobody else can have locked yet.
                    try_flock(&file);
                    return Ok(Guard {
                        path: path.to_path_buf(),
                        lock_path,
                        file: Some(file),
                        recovered,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if recovered.is_none() {
                        if let Some(note) = remove_if_stale(&lock_path)? {
                            recovered = Some(note);
                            continue;
                        }
                    }
                    bail!(
                        "{}: lock held by another git-kams run ({} exists); try again when it is done (a file left by a run that was killed is removed by the next run {} s after)",
                        shown(path),
                        shown(&lock_path),
                        STALE_AFTER.as_secs()
                    );
                }
                Err(e) => bail!("{}: cannot create {}: {e}", shown(path), shown(&lock_path)),
            }
        }
        bail!(
            "{}: {} keeps coming back: another git-kams is starting at the same moment; try again",
            shown(path),
            shown(&lock_path)
        )
    }

    /// What was recovered on the way in: a note about a stale lock file
    /// removed, for the command to show.
    pub fn recovered(&self) -> Option<&str> {
        self.recovered.as_deref().filter(|n| !n.is_empty())
    }

    /// Reads the current lock while holding the claim.
    pub fn read(&self) -> Result<Option<Lock>> {
        read(&self.path)
    }

    /// Replaces the lock with `lock`, atomically, and releases the claim.
    pub fn commit(mut self, lock: &Lock) -> Result<()> {
        let mut file = self.file.take().expect("guard holds its file until commit");
        let written = lock.write_text(&mut file).and_then(|_| file.sync_all());
        drop(file);
        let renamed = written
            .with_context(|| format!("cannot write {}", crate::text::shown_path(&self.lock_path)))
            .and_then(|_| {
                std::fs::rename(&self.lock_path, &self.path).with_context(|| {
                    format!(
                        "cannot rename {} to {}",
                        crate::text::shown_path(&self.lock_path),
                        crate::text::shown_path(&self.path)
                    )
                })
            });
        if renamed.is_err() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
        renamed?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Make the rename itself durable; not every file system allows it.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

/// Refuses a lock path that is a symbolic link, a FIFO, a device or a
/// folder, for readers and writers alike. The new lock is renamed over the
/// path, which would replace a link by a file (and a writer that followed
/// it would write wherever it points, outside the work tree perhaps); a
/// reader that followed it would judge another lock than the hooks, which
/// read the commit, and a FIFO would hold it forever.
fn refuse_special(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let Some(why) = crate::files::not_regular(path, &meta) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| crate::text::shown_path(&t))
            .unwrap_or_else(|_| "?".into());
        bail!(
            "{}: is a symbolic link (to {target}): git-kams reads and replaces the lock itself, never through a link (a reader would judge another lock than the hooks, a writer would replace the link or write where it points); name the real file with --lock PATH (or git config kams.lock)",
            crate::text::shown_path(path)
        )
    }
    bail!(
        "{}: {why}; name the lock with --lock PATH (or git config kams.lock)",
        crate::text::shown_path(path)
    )
}

/// Removes `lock_path` when no process holds it and it is older than
/// [`STALE_AFTER`]; the note says what was done. `None`: it is held (or
/// too young to tell), or it went away meanwhile.
fn remove_if_stale(lock_path: &Path) -> Result<Option<String>> {
    // Not through a link, and not a FIFO (whose open would wait): only
    // a file a writer left can be stale.
    let file = match crate::files::open_regular(lock_path) {
        Ok((f, _)) => f,
        // Its writer finished meanwhile: take it again.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Some(String::new()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => bail!(
            "{}: {e}; git-kams never leaves one: remove it",
            crate::text::shown_path(lock_path)
        ),
        Err(_) => return Ok(None),
    };
    if !try_flock(&file) {
        return Ok(None);
    }
    let age = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .unwrap_or_default();
    if age < STALE_AFTER {
        return Ok(None);
    }
    // Still holding the flock: a second recoverer waits on it and then
    // finds the file gone.
    std::fs::remove_file(lock_path).with_context(|| {
        format!(
            "cannot remove the stale {}",
            crate::text::shown_path(lock_path)
        )
    })?;
    Ok(Some(format!(
        "removed {}, left {:.0} s ago by a git-kams run that ended before finishing (no process holds it); the lock itself was never half written",
        crate::text::shown_path(lock_path),
        age.as_secs_f64()
    )))
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = std::fs::remove_file(&self.lock_path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_writer_is_refused_and_claim_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kams.lock");
        let g = Guard::acquire(&path).unwrap();
        let err = Guard::acquire(&path).err().unwrap().to_string();
        assert!(err.contains("lock held"), "{err}");
        g.commit(&Lock::default()).unwrap();
        assert!(!dir.path().join("kams.lock.lock").exists());
        assert_eq!(read(&path).unwrap(), Some(Lock::default()));
        drop(Guard::acquire(&path).unwrap());
        assert!(Guard::acquire(&path).is_ok());
    }

    #[test]
    fn a_lock_file_nobody_holds_is_stale_once_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kams.lock");
        let stale = dir.path().join("kams.lock.lock");
        // What a killed writer leaves: a file, half written, unheld.
        std::fs::write(&stale, "{ half").unwrap();
        // Too young to tell from a writer that just created it.
        let err = Guard::acquire(&path).err().unwrap().to_string();
        assert!(err.contains("lock held"), "{err}");
        let old = std::time::SystemTime::now() - STALE_AFTER * 2;
        File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let g = Guard::acquire(&path).unwrap();
        let note = g.recovered().unwrap();
        assert!(
            note.contains("removed") && note.contains("kams.lock.lock"),
            "{note}"
        );
        // A held one, however old, is never taken.
        File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let err = Guard::acquire(&path).err().unwrap().to_string();
        assert!(err.contains("lock held"), "{err}");
        g.commit(&Lock::default()).unwrap();
        assert_eq!(read(&path).unwrap(), Some(Lock::default()));
    }
}
