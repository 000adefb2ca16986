//! Committing one file the way `git commit FILE` would: the approval
//! commit holds the change to kams.lock and nothing else, the user's other
//! staged and unstaged work stays as it was, and the index agrees with the
//! new HEAD for that one path.
//!
//! gix runs no hooks and signs nothing by itself, so both happen here: the
//! user's `commit-msg` hook runs on the message, and when `commit.gpgsign`
//! is set the commit is signed as git would sign it (`gpg.format` openpgp
//! or ssh). The index's cache-tree is dropped before the index is written:
//! a stale one makes a later `git commit` silently revert the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{anyhow, bail, Context, Result};
use gix::bstr::{BStr, ByteSlice};

/// The index, claimed for the whole approval: nobody else changes the
/// index or HEAD's tree under us while the lock file is written.
pub struct IndexClaim {
    lock: gix::lock::File,
}

impl IndexClaim {
    /// Takes `index.lock`, failing at once when git (or another
    /// git-kams) holds it.
    pub fn acquire(repo: &gix::Repository) -> Result<IndexClaim> {
        let lock = gix::lock::File::acquire_to_update_resource(
            repo.index_path(),
            gix::lock::acquire::Fail::Immediately,
            None,
            0,
        )
        .map_err(|e| {
            anyhow!(
                "cannot take the index lock ({e}); is another git running? If not, remove {}.lock",
                repo.index_path().display()
            )
        })?;
        Ok(IndexClaim { lock })
    }
}

/// The hooks folder: `core.hooksPath` (relative to the work tree top) or
/// the common git dir's `hooks`.
pub fn hooks_dir(repo: &gix::Repository) -> PathBuf {
    match repo.config_snapshot().trusted_path("core.hooksPath") {
        Ok(Some(p)) if p.is_absolute() => p,
        Ok(Some(p)) => repo.workdir().unwrap_or_else(|| repo.git_dir()).join(p),
        _ => repo.common_dir().join("hooks"),
    }
}

/// Runs the user's `commit-msg` hook on `message`, as `git commit` does,
/// and returns the message it leaves (hooks may edit it).
pub fn run_commit_msg_hook(repo: &gix::Repository, message: &str) -> Result<String> {
    let hook = hooks_dir(repo).join("commit-msg");
    if !is_executable(&hook) {
        return Ok(message.to_string());
    }
    let file = repo.git_dir().join("COMMIT_EDITMSG");
    crate::files::replace(&file, message.as_bytes(), None)?;
    let status = Command::new(&hook)
        .arg(&file)
        .current_dir(repo.workdir().unwrap_or_else(|| repo.git_dir()))
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("cannot run {}", hook.display()))?;
    if !status.success() {
        bail!(
            "the commit-msg hook ({}) refused the approval commit; kams.lock is unchanged",
            hook.display()
        );
    }
    let edited = crate::files::read_existing(&file, MESSAGE_MAX)
        .with_context(|| format!("after the commit-msg hook ({})", hook.display()))?
        .ok_or_else(|| anyhow!("the commit-msg hook removed {}", file.display()))?;
    String::from_utf8(edited).map_err(|_| {
        anyhow!(
            "{}: the commit-msg hook left text that is not UTF-8",
            file.display()
        )
    })
}

/// The largest commit message read back from the `commit-msg` hook.
const MESSAGE_MAX: u64 = 16 << 20;

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Commits the work tree's files `rels` (already written: the lock, and
/// the inventory files it was approved from) on top of HEAD, with only
/// those paths changed, then updates their index entries. Returns the new
/// commit's id.
pub fn commit_files(
    repo: &gix::Repository,
    claim: IndexClaim,
    rels: &[std::path::PathBuf],
    removed: &[std::path::PathBuf],
    message: &str,
) -> Result<gix::ObjectId> {
    let top = repo
        .workdir()
        .ok_or_else(|| anyhow!("approval commits need a work tree"))?;
    let mut files = Vec::with_capacity(rels.len());
    for rel in rels {
        let on_disk = top.join(rel);
        let bytes = crate::files::read_existing(&on_disk, crate::lock::MAX_LOCK_SIZE)?
            .ok_or_else(|| anyhow!("{}: no such file", on_disk.display()))?;
        let blob = repo.write_blob(&bytes)?.detach();
        files.push((gix::path::into_bstr(rel)?.into_owned(), blob, on_disk));
    }

    let head = repo.head()?;
    let parent = head.id().map(|id| id.detach());
    let base_tree = match parent {
        Some(p) => repo.find_commit(p)?.tree_id()?.detach(),
        None => gix::ObjectId::empty_tree(repo.object_hash()),
    };
    let mut editor = repo.edit_tree(base_tree)?;
    for (rel, blob, _) in &files {
        editor.upsert(rel.as_bstr(), gix::object::tree::EntryKind::Blob, *blob)?;
    }
    let mut gone = Vec::with_capacity(removed.len());
    for rel in removed {
        let rel = gix::path::into_bstr(rel)?.into_owned();
        editor.remove(rel.as_bstr())?;
        gone.push(rel);
    }
    let tree = editor.write()?.detach();

    let committer = repo.committer().ok_or_else(|| {
        anyhow!("no committer identity: set git config user.name and user.email")
    })??;
    let author = repo
        .author()
        .ok_or_else(|| anyhow!("no author identity: set git config user.name and user.email"))??;
    let mut commit = gix::objs::Commit {
        message: message.into(),
        tree,
        author: author.into(),
        committer: committer.into(),
        encoding: None,
        parents: parent.into_iter().collect(),
        extra_headers: Vec::new(),
    };
    if let Some(options) = repo.commit_signing_options_if_enabled()? {
        commit = commit
            .sign(options)
            .map_err(|e| anyhow!("cannot sign the approval commit: {e}"))?;
    }
    let id = repo.write_object(&commit)?.detach();

    // The index first, then HEAD: stopped in between, the approval is a
    // staged change that the next pin points out, never a HEAD whose index
    // looks like a staged revert of it.
    update_index(repo, claim, &files, &gone)?;

    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    use gix::refs::Target;
    let subject = message.lines().next().unwrap_or_default();
    repo.edit_reference(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: format!("commit: {subject}").into(),
            },
            expected: match parent {
                Some(p) => PreviousValue::MustExistAndMatch(Target::Object(p)),
                None => PreviousValue::MustNotExist,
            },
            new: Target::Object(id),
        },
        name: "HEAD".try_into()?,
        deref: true,
    })
    .map_err(|e| {
        anyhow!(
            "cannot move HEAD to the approval commit ({e}); if no other git is running, a crashed one left a lock file: remove {}/HEAD.lock or the branch's .lock under {}/refs/heads",
            repo.git_dir().display(),
            repo.git_dir().display()
        )
    })?;

    Ok(id)
}

/// Points the index entry of each path at its blob with fresh stat data
/// (adding it when new), drops the cache-tree, and writes the index under
/// `claim`.
fn update_index(
    repo: &gix::Repository,
    mut claim: IndexClaim,
    files: &[(gix::bstr::BString, gix::ObjectId, std::path::PathBuf)],
    gone: &[gix::bstr::BString],
) -> Result<()> {
    let mut index = if repo.index_path().exists() {
        repo.open_index()?
    } else {
        gix::index::File::from_state(
            gix::index::State::new(repo.object_hash()),
            repo.index_path(),
        )
    };
    for (path, blob, on_disk) in files {
        let path: &BStr = path.as_bstr();
        let meta = gix::index::fs::Metadata::from_path_no_follow(on_disk)?;
        let stat = gix::index::entry::Stat::from_fs(&meta)?;
        match index.entry_index_by_path(path) {
            Ok(i) => {
                let entry = &mut index.entries_mut()[i];
                entry.id = *blob;
                entry.stat = stat;
            }
            Err(_) => {
                index.dangerously_push_entry(
                    stat,
                    *blob,
                    gix::index::entry::Flags::empty(),
                    gix::index::entry::Mode::FILE,
                    path,
                );
                index.sort_entries();
            }
        }
    }
    if !gone.is_empty() {
        index.remove_entries(|_, path, _| gone.iter().any(|g| g.as_bstr() == path));
    }
    index.remove_tree();
    index.write_to(&mut claim.lock, gix::index::write::Options::default())?;
    claim
        .lock
        .commit()
        .map_err(|e| anyhow!("cannot write the index: {e}"))?;
    Ok(())
}
