//! How [`History`] uses the log cache ([`crate::cache::log`]): each
//! section is read when first needed, a whole walk is remembered, and what
//! a run learned is written back at the end.

use std::path::PathBuf;

use gix::ObjectId;

use super::History;
use crate::cache::log::{self as cache, WalkStep};

/// A section of the log cache file, merged into what [`History`] knows
/// when first needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Section {
    /// The lock's blob per root tree.
    Trees,
    /// What changed per pair of blobs.
    Pairs,
    /// Facts per commit.
    Commits,
    /// Whole walks, by the commit they started from.
    Walks,
}

impl Section {
    /// Every section, in the order of [`CacheFile::merged`].
    const ALL: [Section; 4] = [
        Section::Trees,
        Section::Pairs,
        Section::Commits,
        Section::Walks,
    ];
}

/// The log cache file of a [`History`].
pub(super) struct CacheFile {
    file: PathBuf,
    /// True once read (or found missing or unusable).
    loaded: bool,
    /// What it holds, sections not yet merged into `known`.
    stored: Option<cache::Stored>,
    /// Which sections were merged, by [`Section`].
    merged: [bool; Section::ALL.len()],
}

impl History {
    /// Uses the log cache under the repository's common git directory
    /// (see [`cache`]), read when first needed. Not with object
    /// replacements (`refs/replace/`): an id then no longer names fixed
    /// content.
    pub fn use_log_cache(&mut self) {
        if crate::git::replacements_apply(&self.repo) {
            return;
        }
        self.cache = Some(CacheFile {
            file: cache::file(self.repo.common_dir(), &self.path),
            loaded: false,
            stored: None,
            merged: [false; Section::ALL.len()],
        });
    }

    /// Merges `section` of the log cache into `known`, reading the file
    /// first if need be. A section that does not decode is dropped, and the
    /// file rewritten at the end.
    pub(super) fn load_log_cache(&mut self, section: Section) {
        let Some(c) = self.cache.as_mut() else {
            return;
        };
        if !c.loaded {
            c.loaded = true;
            c.stored = cache::load(&c.file, self.repo.object_hash(), &self.path);
            // A missing or unusable file is replaced by what this run learns.
            self.learned |= c.stored.is_none();
        }
        if c.merged[section as usize] {
            return;
        }
        c.merged[section as usize] = true;
        let Some(stored) = &c.stored else {
            return;
        };
        let known = &mut self.known;
        let merged = match section {
            Section::Trees => stored.trees().map(|t| known.trees.extend(t)),
            Section::Pairs => stored.pairs().map(|p| known.pairs.extend(p)),
            Section::Commits => stored.commits().map(|m| known.commits.extend(m)),
            Section::Walks => stored.walks().map(|mut w| {
                w.retain(|(tip, _)| known.walks.iter().all(|(t, _)| t != tip));
                known.walks.append(&mut w);
                known.walks.truncate(cache::WALKS);
            }),
        };
        self.learned |= merged.is_none();
    }

    /// The whole log walk from `tip` as remembered, if it is.
    pub(super) fn remembered_walk(&mut self, tip: ObjectId) -> Option<Vec<WalkStep>> {
        // A shallow boundary can move (`git fetch --deepen`): walks are
        // remembered only where history is whole.
        if !self.shallow.is_empty() {
            return None;
        }
        self.load_log_cache(Section::Walks);
        let walks = &self.known.walks;
        walks
            .iter()
            .find(|(t, _)| *t == tip)
            .map(|(_, steps)| steps.clone())
    }

    /// Remembers the whole log walk from `tip` (the latest first, a few).
    pub(super) fn remember_walk(&mut self, tip: ObjectId, steps: Vec<WalkStep>) {
        if !self.shallow.is_empty() || self.cache.is_none() {
            return;
        }
        self.load_log_cache(Section::Walks);
        let walks = &mut self.known.walks;
        if walks.first().is_some_and(|(t, _)| *t == tip) {
            return;
        }
        walks.retain(|(t, _)| *t != tip);
        walks.insert(0, (tip, steps));
        walks.truncate(cache::WALKS);
        self.learned = true;
    }

    /// Writes what this run learned to the log cache, when it learned
    /// anything and [`History::use_log_cache`] was called. The caller may
    /// ignore a failure: the cache only saves time.
    pub fn save_log_cache(&mut self) -> std::io::Result<()> {
        if !self.learned {
            return Ok(());
        }
        for section in Section::ALL {
            self.load_log_cache(section);
        }
        match &self.cache {
            Some(c) => cache::store(&c.file, self.repo.object_hash(), &self.path, &self.known),
            None => Ok(()),
        }
    }
}
