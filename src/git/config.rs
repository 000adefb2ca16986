//! Writing the repository's own git config (`.git/config`, `git config
//! --local`), for the settings `git kams init` makes.
//!
//! Done with gix rather than by running `git config`: the file is parsed
//! and written back as it was (comments, layout and the user's other
//! settings kept), under `config.lock` as git takes it, so a concurrent
//! `git config` cannot lose our change or we its.

use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};

/// What setting one key did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Set {
    /// The key was not set in the repository's config.
    Added,
    /// It had another value, shown here.
    Updated(String),
    /// It already had this value.
    Unchanged,
}

/// Sets each `(key, value)` (`section.subsection.name`) in the config of
/// the repository itself (the common git dir's `config`, shared by linked
/// worktrees), writing the file only when something changes.
pub fn set_local(repo: &gix::Repository, values: &[(&str, &str)]) -> Result<Vec<Set>> {
    let path = local_path(repo);
    let shown = crate::text::shown_path(&path);
    // Renamed over by the lock's commit: a link would be replaced, a FIFO
    // would hold the read.
    crate::files::replaceable(&path)?;
    let mut lock = gix::lock::File::acquire_to_update_resource(
        &path,
        gix::lock::acquire::Fail::Immediately,
        None,
        0,
    )
    .map_err(|e| anyhow!("cannot take the config lock ({e}); is another git running? If not, remove {shown}.lock"))?;
    let mut file = if path.exists() {
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .with_context(|| format!("cannot read {shown}"))?
    } else {
        gix::config::File::new(gix::config::file::Metadata::from(
            gix::config::Source::Local,
        ))
    };
    let mut done = Vec::with_capacity(values.len());
    for (key, value) in values {
        let old = file.string(*key).map(|v| v.to_string());
        done.push(match old {
            Some(old) if old == *value => Set::Unchanged,
            old => {
                file.set_raw_value(*key, *value)
                    .with_context(|| format!("cannot set {key} in {shown}"))?;
                old.map_or(Set::Added, Set::Updated)
            }
        });
    }
    if done.iter().all(|s| *s == Set::Unchanged) {
        // Dropping the lock removes config.lock; the file is untouched.
        return Ok(done);
    }
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        // The lock file is created private; keep the config's own mode.
        lock.with_mut(|f| f.set_permissions(meta.permissions()))?;
    }
    file.write_to(&mut lock)
        .with_context(|| format!("cannot write {shown}.lock"))?;
    lock.commit()
        .map_err(|e| anyhow!("cannot replace {shown}: {}", e.error))?;
    Ok(done)
}

/// The repository's own config file, for messages.
pub fn local_path(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("config")
}
