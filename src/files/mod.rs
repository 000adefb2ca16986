//! The files git-kams reads and writes in a work tree or a repository are
//! regular files, reached without following a symbolic link.
//!
//! A work tree holds what contributors commit, and a committed symbolic
//! link is a file git checks out as a link: `.gitattributes ->
//! ../victim` would have `init` append to a file outside the repository,
//! `kams.lock -> /proc/self/environ` would have a scan read (and quote) a
//! file outside it, and a FIFO would hold an open for read forever. The
//! hooks judge what a commit holds, where a link is a blob of its own, so a
//! reader that followed links would also see another inventory than the
//! hook does.
//!
//! So every file git-kams opens for reading is opened with `O_NOFOLLOW`
//! and `O_NONBLOCK` and kept only when `fstat` says it is a regular file;
//! every file it writes replaces a regular file (or nothing) by a rename
//! of a new file, never writing into what a path points to; and the
//! folders below the top of the work tree on the way to the lock and the
//! inventory are no links either ([`links_below`]).
//!
//! [`lock`] reads and writes `kams.lock` under these rules, and under a
//! claim that a second writer respects.

pub mod lock;

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::inventory::{too_big, InputError};
use crate::text::shown_path;

/// Why what `meta` describes (looked at without following a link) is not
/// a regular file; `None` when it is one. `path` is where it is, for the
/// target of a link.
pub fn not_regular(path: &Path, meta: &Metadata) -> Option<String> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    Some(if t.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| shown_path(&t))
            .unwrap_or_else(|_| "?".into());
        format!(
            "is a symbolic link (to {target}): git-kams reads and writes files themselves, never through a link (it may point outside the work tree); replace the link with the file, or name the real file"
        )
    } else if t.is_dir() {
        "is a directory, expected a file".to_string()
    } else {
        format!("is {}, expected a regular file", special_kind(&t))
    })
}

#[cfg(unix)]
fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "not a file"
}

/// The error for `path`, which is there but no regular file.
fn refused(reason: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, reason)
}

/// Opens the regular file at `path` for reading, without following a link
/// at its end and without waiting on a FIFO or a device; an error of kind
/// `InvalidInput`, whose text says what is there, for anything else.
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    // Looked at first so that a device is not even opened (opening one
    // can act: a tape rewinds); the open then checks again, in case
    // the path changed in between.
    let before = std::fs::symlink_metadata(path)?;
    if let Some(why) = not_regular(path, &before) {
        return Err(refused(why));
    }
    let file = open_no_follow(path)?;
    let meta = file.metadata()?;
    if let Some(why) = not_regular(path, &meta) {
        return Err(refused(why));
    }
    Ok((file, meta))
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refused(
                    "is a symbolic link: git-kams reads files themselves, never through a link"
                        .into(),
                )
            } else {
                e
            }
        })?;
    // Reads of a regular file never wait anyway; the flag only kept the
    // open from waiting, and is not left for a reader to trip over.
    // SAFETY: fcntl on a descriptor we own, integer arguments only.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Fails unless `path` is a regular file or nothing: what a writer that
/// replaces it checks first. `what` names the file in the error.
pub fn replaceable(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => bail!("{}: cannot look at it: {e}", shown_path(path)),
        Ok(meta) => match not_regular(path, &meta) {
            None => Ok(()),
            Some(why) => bail!("{}: {why}", shown_path(path)),
        },
    }
}

/// The bytes of the regular file at `path` (at most `max`), `None` when
/// there is none; an error for anything else there. For a file that is
/// read to be changed and written back (`.gitattributes`, a hook).
pub fn read_existing(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let (file, meta) = match open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => bail!("{}: {e}", shown_path(path)),
        Err(e) => bail!("{}: cannot read: {e}", shown_path(path)),
    };
    use std::io::Read;
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{}: cannot read", shown_path(path)))?;
    if bytes.len() as u64 > max {
        bail!(
            "{}: larger than {max} bytes: refusing to read it",
            shown_path(path)
        );
    }
    Ok(Some(bytes))
}

/// Replaces the file at `path` (a regular file, or nothing) with `bytes`:
/// written to a new file beside it, flushed, and renamed over it, so a
/// reader sees the old file or the new one and nothing a link points to is
/// written. The new file gets the old one's permissions, or `mode` (unix
/// permission bits) when given.
pub fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    replaceable(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let (tmp, mut file) = new_file_in(dir)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| keep_mode(&file, path, mode))
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", shown_path(&tmp)))
        .and_then(|()| {
            // Looked at again just before: a link made meanwhile would be
            // replaced, not followed, but is reported rather than lost.
            replaceable(path)?;
            std::fs::rename(&tmp, path)
                .with_context(|| format!("cannot write {}", shown_path(path)))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(unix)]
fn keep_mode(file: &File, path: &Path, mode: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match (mode, std::fs::symlink_metadata(path)) {
        (Some(m), _) => m,
        (None, Ok(old)) if old.is_file() => old.permissions().mode(),
        _ => return Ok(()),
    };
    file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))
}

#[cfg(not(unix))]
fn keep_mode(_: &File, _: &Path, _: Option<u32>) -> io::Result<()> {
    Ok(())
}

/// A new file in `dir` (`O_CREAT|O_EXCL`, which never follows a link); a
/// leftover from a killed run is a dot file, which the inventory reader
/// (and man) skip.
fn new_file_in(dir: &Path) -> Result<(PathBuf, File)> {
    static FILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for _ in 0..100u32 {
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!(".kams-{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(anyhow!("cannot create a file in {}: {e}", shown_path(dir))),
        }
    }
    bail!("cannot create a temporary file in {}", shown_path(dir))
}

/// Fails when a folder on the way from `top` (the top of the work tree)
/// to `path` is a symbolic link: a link committed as `.kams` or as the
/// inventory folder would lead readers and writers out of the tree, while
/// the hooks, which read the commit, find no folder there. A path outside
/// `top`, and `top` itself and what leads to it, are the user's to name.
pub fn links_below(top: &Path, path: &Path) -> Result<()> {
    let (top, path) = (lexical(&absolute(top)), lexical(&absolute(path)));
    let Ok(rest) = path.strip_prefix(&top) else {
        return Ok(());
    };
    let mut at = top.clone();
    let parts: Vec<_> = rest.components().collect();
    // The last component is the file (or the inventory folder) itself,
    // which its reader or writer looks at.
    for c in parts.iter().take(parts.len().saturating_sub(1)) {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let why = not_regular(&at, &m).unwrap_or_default();
                bail!(
                    "{}: a folder on the way to {} {why}",
                    shown_path(&at),
                    shown_path(&path)
                )
            }
            Ok(_) => {}
            // Missing: nothing below it exists either.
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// [`links_below`] for a folder files are written into, which is no link
/// itself either when it is below `top`.
pub fn folder_below(top: &Path, dir: &Path) -> Result<()> {
    links_below(top, dir)?;
    if !lexical(&absolute(dir)).starts_with(lexical(&absolute(top))) {
        return Ok(());
    }
    match std::fs::symlink_metadata(dir) {
        Ok(m) if !m.is_dir() => {
            let why = not_regular(dir, &m).unwrap_or_else(|| "is a file".into());
            bail!("{}: {why}; expected a folder", shown_path(dir))
        }
        _ => Ok(()),
    }
}

/// `p` made absolute (from the current folder), as given when it cannot be.
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `p` with `.` dropped and `..` taking the folder before it away, with
/// no file system access (the path may exist only in git).
pub(crate) fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_opened_or_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"one").unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo touches no memory of ours.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);

        assert!(open_regular(&file).is_ok());
        for (p, says) in [
            (&link, "is a symbolic link (to "),
            (&fifo, "is a FIFO"),
            (&dir.path().to_path_buf(), "is a directory"),
        ] {
            let e = open_regular(p).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p:?}");
            assert!(e.to_string().contains(says), "{p:?}: {e}");
            let e = replace(p, b"two", None).unwrap_err().to_string();
            assert!(e.contains(says), "{p:?}: {e}");
        }
        let e = open_regular(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("is a device"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"one");

        replace(&file, b"two", Some(0o750)).unwrap();
        assert_eq!(read_existing(&file, 10).unwrap().unwrap(), b"two");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
        replace(&file, b"three", None).unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750, "the old mode is kept");
        assert!(read_existing(&file, 2).is_err());
        assert_eq!(read_existing(&dir.path().join("none"), 2).unwrap(), None);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_linked_folder_below_the_top_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("top");
        std::fs::create_dir_all(top.join("real/inventory")).unwrap();
        std::os::unix::fs::symlink("real", top.join(".kams")).unwrap();
        let e = links_below(&top, &top.join(".kams/inventory"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(".kams: a folder on the way to"), "{e}");
        assert!(links_below(&top, &top.join("real/inventory")).is_ok());
        assert!(
            links_below(&top, &top.join(".kams")).is_ok(),
            "the last is its reader's"
        );
        assert!(links_below(&top, &dir.path().join("elsewhere/x")).is_ok());
        assert!(links_below(&top, &top.join("missing/x/y")).is_ok());
    }
}

/// The bytes of every inventory file at `paths` (files or folders: see
/// [`files_at`]), each read or mapped ([`crate::input`]) and refused past
/// `max_size`, for [`crate::cache::inventory::read_files`] to read into
/// one inventory.
pub fn inventory_files(
    paths: &[PathBuf],
    max_size: u64,
) -> Result<Vec<(PathBuf, crate::input::Input)>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        for file in files_at(path)? {
            let bytes = crate::input::Input::read(&file, max_size)?;
            files.push((file, bytes));
        }
    }
    Ok(files)
}

/// Reads a file whole, refusing it past `max_size`.
pub fn read_capped(path: &Path, max_size: u64) -> Result<Vec<u8>, InputError> {
    let (file, meta) = open_capped(path, max_size)?;
    read_open(file, &meta, path, max_size)
}

/// Opens the regular file at `path` for reading, refusing anything else
/// (a link, a folder, a FIFO: see the module comment) and a file past
/// `max_size` (as it stands now; [`read_open`] checks again as it reads).
pub(crate) fn open_capped(
    path: &Path,
    max_size: u64,
) -> Result<(std::fs::File, std::fs::Metadata), InputError> {
    let (file, meta) = open_regular(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidInput {
            InputError::new(path, None, e.to_string())
        } else {
            InputError::new(path, None, format!("cannot open: {e}"))
        }
    })?;
    if meta.len() > max_size {
        return Err(too_big(path, max_size));
    }
    Ok((file, meta))
}

/// Reads an opened file whole, stopping past `max_size` (a file can grow
/// after it was looked at, and a pipe has no size).
pub(crate) fn read_open(
    file: std::fs::File,
    meta: &std::fs::Metadata,
    path: &Path,
    max_size: u64,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // saturating: a cap of u64::MAX plus one would wrap to a read of nothing.
    file.take(max_size.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::new(path, None, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max_size {
        return Err(too_big(path, max_size));
    }
    Ok(bytes)
}

/// The inventory files at `path`: the file itself, or the `*.json` and
/// `*.jsonl` files directly inside a folder, sorted by name.
///
/// A link, or a FIFO or device with such a name, is an error, as the
/// hooks refuse a link in a commit: read through, it could lead out of the
/// work tree (see the module comment).
pub fn files_at(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| InputError::new(path, None, format!("cannot read inventory: {e}")))?;
    if !meta.is_dir() {
        if let Some(why) = not_regular(path, &meta) {
            return Err(InputError::new(path, None, why));
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let entries = std::fs::read_dir(path)
        .map_err(|e| InputError::new(path, None, format!("cannot list: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| InputError::new(path, None, format!("cannot list: {e}")))?;
        let p = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || !(name.ends_with(".json") || name.ends_with(".jsonl")) {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| InputError::new(&p, None, format!("cannot look at it: {e}")))?;
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            let meta = std::fs::symlink_metadata(&p)
                .map_err(|e| InputError::new(&p, None, format!("cannot look at it: {e}")))?;
            if let Some(why) = not_regular(&p, &meta) {
                return Err(InputError::new(&p, None, why));
            }
        }
        files.push(p);
    }
    files.sort();
    if files.is_empty() {
        return Err(InputError::new(
            path,
            None,
            "inventory folder has no .json or .jsonl file",
        ));
    }
    Ok(files)
}

/// Reads the client configs: the default ones under `top` (a missing file is skipped) and
/// every file of `extra` (each must exist and name a server map), in that
/// order. Files larger than `max_size` bytes are refused.
pub fn read_configs(
    top: &Path,
    extra: &[PathBuf],
    max_size: u64,
) -> Result<Vec<crate::config::ClientServer>, InputError> {
    let mut out = Vec::new();
    for rel in crate::config::DEFAULT_FILES {
        let path = top.join(rel);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            _ => {}
        }
        let bytes = read_capped(&path, max_size)?;
        out.extend(crate::config::parse(&path, Path::new(rel), &bytes, false)?);
    }
    for path in extra {
        let bytes = read_capped(path, max_size)?;
        out.extend(crate::config::parse(path, path, &bytes, true)?);
    }
    Ok(out)
}
