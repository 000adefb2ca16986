//! Where an approval reaches git: the lock written under its claim and,
//! in a work tree, committed alone with the inventory files it was
//! reviewed from, so that the hooks compare what was approved with what
//! was committed. `pin`, `review`, `deny` and `import` all write here.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::commands::{Env, Tools};
use crate::files::lock::Guard;
use crate::inventory::Inventory;
use crate::lock::Lock;

/// Whether an approval is committed, or only written to the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Commit it, in a work tree, alone with the inventory files it was
    /// reviewed from.
    Make,
    /// Only write the lock (`--no-commit`).
    Skip,
}

/// Where an approval went: written to the lock, or also committed.
pub enum Written {
    /// Only the lock file was written (`--no-commit`, or no work tree).
    File(std::path::PathBuf),
    /// The lock was written and committed: the commit, the lock's path
    /// in the work tree, and how many inventory files the commit changed
    /// with it.
    Commit(gix::ObjectId, std::path::PathBuf, usize),
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Written::File(p) => write!(f, "wrote {}", crate::text::shown_path(p)),
            Written::Commit(id, rel, inventory) => write!(
                f,
                "committed {} ({}{})",
                id.to_hex_with_len(12),
                crate::text::shown_path(rel),
                match inventory {
                    0 => String::new(),
                    1 => " and 1 inventory file".to_string(),
                    n => format!(" and {n} inventory files"),
                }
            ),
        }
    }
}

/// Writes an approved `lock` under `guard` and, in a work tree when
/// `commit` says to, commits it alone with `message` (which carries the
/// sign-off). Shared by `pin` and `import` so that every approval reaches
/// git the same way.
pub fn write_approval(
    env: &Env,
    guard: Guard,
    lock: &Lock,
    path: &Path,
    commit: Commit,
    message: &str,
    reviewed: &Reviewed,
) -> Result<Written> {
    let commit_in = match commit {
        Commit::Make => commit_target(env, path),
        Commit::Skip => None,
    };
    let Some((repo, rel)) = commit_in else {
        guard.commit(lock)?;
        return Ok(Written::File(path.to_path_buf()));
    };
    // Everything that can refuse runs before kams.lock is touched: the
    // index claim, the identity, the user's commit-msg hook.
    let claim = crate::git::commit::IndexClaim::acquire(repo)?;
    if repo.committer().is_none() {
        bail!(
            "no committer identity: set git config user.name and user.email (or pass --no-commit)"
        );
    }
    let message = crate::git::commit::run_commit_msg_hook(repo, message)?;
    let inventory_changed = inventory_not_committed(env, reviewed)?.len();
    guard.commit(lock)?;
    let mut rels = vec![rel.clone()];
    rels.extend(reviewed_in_tree(env, reviewed.files()));
    let removed = match reviewed {
        Reviewed::Whole(_) => removed_inventory(env, repo)?,
        Reviewed::Files(_) => Vec::new(),
    };
    let id =
        crate::git::commit::commit_files(repo, claim, &rels, &removed, &message).map_err(|e| {
            anyhow::anyhow!(
                "{e:#}; {} was written but not committed: commit it with `git commit -s {}`",
                crate::text::shown_path(path),
                rel.display()
            )
        })?;
    Ok(Written::Commit(id, rel, inventory_changed))
}

/// The inventory files an approval was made from, as paths in the work
/// tree: they go into the approval commit with the lock, since the hooks
/// compare the committed inventory with the committed lock. Files outside
/// the work tree, and anything that is not a regular file, stay out.
fn reviewed_in_tree(env: &Env, reviewed: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = reviewed
        .iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .filter_map(|p| env.repo.relative(p).ok())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What an approval reviewed of the inventory, and so what of it goes into
/// the approval commit.
pub enum Reviewed {
    /// The files of the approved servers (a server of a multi-server file
    /// brings the whole file); nothing is removed.
    Files(Vec<PathBuf>),
    /// The whole inventory (a `pin` of everything): every file, and the
    /// committed inventory files the work tree no longer has are removed.
    Whole(Vec<PathBuf>),
}

impl Reviewed {
    fn files(&self) -> &[PathBuf] {
        match self {
            Reviewed::Files(f) | Reviewed::Whole(f) => f,
        }
    }
}

/// The inventory files that hold `servers`.
pub(crate) fn files_of(inventory: &Inventory, servers: &[String]) -> Vec<PathBuf> {
    servers
        .iter()
        .filter_map(|s| inventory.servers.get(s).map(|s| s.source.clone()))
        .collect()
}

/// The paths in the work tree of the `reviewed` inventory files whose
/// content differs from HEAD's (or that HEAD lacks), and of those HEAD has
/// that the work tree no longer has (for the whole inventory).
pub(crate) fn inventory_not_committed(env: &Env, reviewed: &Reviewed) -> Result<Vec<PathBuf>> {
    let Some(repo) = env.repo.gix() else {
        return Ok(Vec::new());
    };
    if env.repo.workdir.is_none() {
        return Ok(Vec::new());
    }
    let head = env.repo.commit_of("HEAD").ok();
    let mut out = Vec::new();
    for rel in reviewed_in_tree(env, reviewed.files()) {
        let on_disk = env.repo.workdir.as_ref().map(|t| t.join(&rel));
        let now = on_disk.and_then(|p| {
            crate::files::read_existing(&p, crate::lock::MAX_LOCK_SIZE)
                .ok()
                .flatten()
        });
        let committed = head.and_then(|h| env.repo.blob_at(h, &rel).ok().flatten());
        if now.is_some() && committed.map(|(_, b)| b) != now {
            out.push(rel);
        }
    }
    if matches!(reviewed, Reviewed::Whole(_)) {
        out.extend(removed_inventory(env, repo)?);
    }
    Ok(out)
}

/// The inventory files committed at HEAD that the work tree no longer has.
fn removed_inventory(env: &Env, repo: &gix::Repository) -> Result<Vec<PathBuf>> {
    let (Ok(head), Some(top)) = (repo.head_id(), env.repo.workdir.as_ref()) else {
        return Ok(Vec::new());
    };
    let (_, opts) = env.inventory_spec(Tools::Digests)?;
    let mut out = Vec::new();
    for rel in env.inventory_relative()? {
        let Some(files) = crate::git::inventory_files_at(repo, head.detach(), &rel, opts.max_size)?
        else {
            continue;
        };
        for (path, _) in files {
            if std::fs::symlink_metadata(top.join(&path)).is_err() {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// The lock's path in the work tree when its content differs from HEAD's
/// (or HEAD has none), so that a pin that was stopped between writing the
/// lock and committing it does not go unnoticed.
pub(super) fn uncommitted_lock(env: &Env, path: &std::path::Path) -> Option<std::path::PathBuf> {
    let (_, rel) = commit_target(env, path)?;
    let on_disk = crate::files::read_existing(path, crate::lock::MAX_LOCK_SIZE)
        .ok()
        .flatten()?;
    let head = env.repo.commit_of("HEAD").ok();
    let committed = head.and_then(|h| env.repo.blob_at(h, &rel).ok().flatten());
    match committed {
        Some((_, bytes)) if bytes == on_disk => None,
        _ => Some(rel),
    }
}

/// The repository and the lock's path in it, when the approval should be
/// committed: in a work tree, with the lock inside it.
fn commit_target<'a>(
    env: &'a Env,
    path: &Path,
) -> Option<(&'a gix::Repository, std::path::PathBuf)> {
    let repo = env.repo.gix()?;
    repo.workdir()?;
    let rel = env.repo.relative(path).ok()?;
    Some((repo, rel))
}
