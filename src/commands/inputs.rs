//! What a command reads: the inventory and the lock, from the work tree
//! or as committed at a revision, through the caches where one is kept
//! (`crate::cache`), read side by side when both are large.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use super::{parse_size, Env};
use crate::cache::lock::EntryFields;
use crate::canon::Digest;
use crate::cli::SelectArgs;
use crate::inventory::{self, Inventory, ReadOptions};
use crate::lock::Lock;

/// The keys of the indexes an inventory and a lock were read through
/// (`None`: no index is kept for it), held beside the core's values: the
/// findings memo is kept under them ([`crate::cache::findings`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Keys {
    /// The inventory's ([`crate::cache::inventory::key`]).
    pub inventory: Option<Digest>,
    /// The lock's ([`crate::cache::lock::Key`]).
    pub lock: Option<crate::cache::lock::Key>,
}

/// What an inventory read keeps of each tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tools {
    /// Every descriptor whole.
    Whole,
    /// Digests only, a descriptor read again when it is needed
    /// ([`Inventory::materialize`]).
    Digests,
}

impl Env {
    /// Reads the inventory with every descriptor whole.
    pub fn inventory(&self) -> Result<Inventory> {
        let (paths, opts) = self.inventory_spec(Tools::Whole)?;
        Ok(read_inventory(&paths, &opts, None)?.0)
    }

    /// Where the inventory is and how to read it, keeping `tools` of each
    /// tool.
    pub fn inventory_spec(&self, tools: Tools) -> Result<(Vec<PathBuf>, ReadOptions)> {
        let max_size = match self.global.max_input_size {
            Some(n) => n,
            None => match self.repo.config("kams.maxInputSize") {
                Some(v) => parse_size(&v).ok_or_else(|| {
                    anyhow!("git config kams.maxInputSize: `{v}` is not a size in bytes")
                })?,
                None => inventory::DEFAULT_MAX_INPUT,
            },
        };
        let opts = ReadOptions {
            server: self.global.server.clone(),
            max_size,
            digests_only: tools == Tools::Digests,
        };
        let paths = self.inventory_paths();
        if let Some(top) = &self.repo.workdir {
            for p in &paths {
                crate::files::links_below(top, p)?;
            }
        }
        Ok((paths, opts))
    }

    /// The inventory (digests only) and the lock (digests only; a missing
    /// lock reads as empty, a corrupt one is an error), read side by side,
    /// each from the work tree or from the revision `select` names.
    /// `captured`, when given, is the inventory (files in memory, from
    /// `scan --capture`). `fields`: what the lock's entries hold of their
    /// fields ([`EntryFields`]); with [`EntryFields::Digests`], a committed
    /// lock indexed before is not read at all, and with
    /// [`EntryFields::Materialised`] the caller materialises the entries
    /// whose fields it compares ([`Lock::materialize`]). Both are read
    /// through their indexes where they are kept, whose keys come beside
    /// them.
    pub fn inventory_and_lock(
        &self,
        select: &SelectArgs,
        captured: Option<Vec<(PathBuf, Vec<u8>)>>,
        fields: EntryFields,
        err: &mut dyn Write,
    ) -> Result<(Inventory, Lock, Keys)> {
        let (paths, opts) = self.inventory_spec(Tools::Digests)?;
        let index_dir = self.index_dir()?;
        let inventory_files = match (&select.inventory_at, captured) {
            (_, Some(files)) => Some(files),
            (Some(rev), None) => Some(self.inventory_files_at(rev)?),
            (None, None) => None,
        };
        // The lock comes from the revision `--at` names, or from its file.
        let lock_file = match &select.at {
            Some(_) => None,
            None => Some(self.lock_path()?),
        };
        // Both in a thread each only when neither is tiny (see
        // READ_IN_THREADS_FROM).
        let inventory_size: u64 = match &inventory_files {
            Some(files) => files.iter().map(|(_, b)| b.len() as u64).sum(),
            // A path that cannot be read is reported by the reader.
            None => paths
                .iter()
                .flat_map(|p| crate::files::files_at(p).unwrap_or_default())
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum(),
        };
        let lock_size = lock_file
            .as_ref()
            .map_or(u64::MAX, |p| std::fs::metadata(p).map_or(0, |m| m.len()));
        let beside = inventory_size.min(lock_size) >= READ_IN_THREADS_FROM;
        let reading_inventory = || match inventory_files {
            Some(files) => crate::cache::inventory::read_files(files, &opts, index_dir.as_deref())
                .map_err(|e| anyhow!("{e}")),
            None => read_inventory(&paths, &opts, index_dir.as_deref()),
        };
        let reading_lock = || match (&lock_file, &select.at) {
            (Some(path), _) => crate::files::lock::read_input(path)?
                .map(|input| crate::cache::lock::read(path, input, index_dir.as_deref(), fields))
                .transpose(),
            (None, Some(rev)) => self.lock_at(rev, fields).map(Some),
            (None, None) => Ok(None),
        };
        let (inventory, lock) =
            crate::threads::side_by_side_if(beside, reading_inventory, reading_lock);
        let (inventory, inventory_key) = inventory?;
        let (lock, lock_key) = match (lock?, &lock_file) {
            (Some(l), _) => l,
            (None, path) => {
                if let Some(path) = path {
                    let _ = writeln!(
                        err,
                        "note: {} does not exist yet: every entry is new (run `git kams record` or `git kams pin`)",
                        crate::text::shown_path(path)
                    );
                }
                (Lock::default(), None)
            }
        };
        let keys = Keys {
            inventory: inventory_key,
            lock: lock_key,
        };
        Ok((inventory, lock, keys))
    }

    /// The lock as committed at `rev` (digests only, holding what `fields`
    /// says of its entries' fields), from the object database; a lock
    /// missing there is an error.
    pub fn lock_at(
        &self,
        rev: &str,
        fields: EntryFields,
    ) -> Result<(Lock, Option<crate::cache::lock::Key>)> {
        let commit = self.repo.commit_of(rev)?;
        let rel = self.lock_relative()?;
        let missing = || {
            anyhow!(
                "{} does not exist at {} (commit {commit}): nothing was approved there",
                rel.display(),
                crate::text::escape_display(rev)
            )
        };
        // Blob ids name fixed content unless objects are replaced.
        let index = self.index_dir()?.filter(|_| {
            self.repo
                .gix()
                .is_some_and(|r| !crate::git::replacements_apply(r))
        });
        let id = self.repo.blob_id(commit, &rel)?.ok_or_else(missing)?;
        let key = crate::cache::lock::Key::Blob(id);
        if let (Some(dir), EntryFields::Digests) = (&index, fields) {
            // Digests only: a lock read before needs no blob at all.
            if let Some(lock) = crate::cache::lock::load(dir, &key, None, fields) {
                return Ok((lock, Some(key)));
            }
        }
        let bytes = self.repo.blob(id, commit, &rel)?;
        let text = std::sync::Arc::new(crate::bytes::strip_bom(bytes));
        if let Some(lock) = index
            .as_deref()
            .and_then(|dir| crate::cache::lock::load(dir, &key, Some(text.clone()), fields))
        {
            return Ok((lock, Some(key)));
        }
        let lock = Lock::parse_digests_only(text).map_err(|e| {
            anyhow!(
                "{}:{}: the lock committed there is unreadable: {}{}",
                crate::text::escape_display(rev),
                rel.display(),
                crate::text::escape_display(&e.message),
                e.pointer
                    .filter(|p| !p.is_empty())
                    .map(|p| format!(" (JSON pointer {})", crate::text::escape_display(&p)))
                    .unwrap_or_default()
            )
        })?;
        if let Some(dir) = &index {
            // The index only saves time: an unwritable repository is no
            // reason to fail.
            let _ = crate::cache::lock::store(dir, &key, &lock);
        }
        // Without an index, the blob id does not name the content.
        Ok((lock, index.map(|_| key)))
    }

    /// The inventory files committed at `rev`.
    pub fn inventory_files_at(&self, rev: &str) -> Result<Vec<(PathBuf, Vec<u8>)>> {
        let commit = self.repo.commit_of(rev)?;
        let rels = self.inventory_relative()?;
        let (_, opts) = self.inventory_spec(Tools::Digests)?;
        let mut out = Vec::new();
        for rel in rels {
            for (p, bytes) in self.repo.files_at(commit, &rel, opts.max_size)? {
                out.push((
                    PathBuf::from(format!(
                        "{}:{}",
                        crate::text::escape_display(rev),
                        p.display()
                    )),
                    bytes,
                ));
            }
        }
        Ok(out)
    }
}

/// Reads every inventory at `paths` (files or folders) into one inventory,
/// through its index when one is kept under `index_dir` (see
/// [`crate::cache::inventory::read_files`], which gives its key), with a
/// hint when there is none. A server defined twice is an error: which
/// definition to trust is for a person to decide.
pub fn read_inventory(
    paths: &[PathBuf],
    opts: &ReadOptions,
    index_dir: Option<&Path>,
) -> Result<(Inventory, Option<Digest>)> {
    crate::files::inventory_files(paths, opts.max_size)
        .and_then(|files| crate::cache::inventory::read_files(files, opts, index_dir))
        .map_err(|e| {
            let hint = if e.message.starts_with("cannot read inventory") {
                "; capture one, or name it with --inventory PATH (or git config kams.inventory)"
            } else {
                ""
            };
            anyhow!("{e}{hint}")
        })
}

/// The size (in bytes) from which the inventory and the lock file are
/// read in a thread each (see [`Env::inventory_and_lock`]; a lock read at
/// a revision counts as large: git's lookups come first). It was 4 MiB
/// while waking the other core cost more than a small read (4701d16);
/// measured again, two threads are faster for `status --at` on the
/// history benchmark's small inventory (docs/performance.md, "Eleventh
/// pass", c5e3d82). Tiny inputs (the README's demo) stay on one.
const READ_IN_THREADS_FROM: u64 = 64 << 10;
