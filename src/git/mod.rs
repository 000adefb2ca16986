//! The repository around the lock: where the work tree is, and the
//! `kams.*` and `user.*` settings, with git's layering (system, global,
//! repository, `git -c`) honoured.
//!
//! gix reads the configuration files and `GIT_CONFIG_COUNT`, but not
//! `GIT_CONFIG_PARAMETERS`, which is how `git -c key=value kams ...` hands
//! its overrides to a subcommand; those are applied here on top.

pub mod commit;
pub mod config;
pub mod history;
pub mod hooks;
pub mod message;
pub mod policy;
pub mod signature;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

/// The repository git-kams runs in, if any, and its settings.
#[derive(Default, Debug)]
pub struct Repo {
    /// Top of the work tree (`None` outside a repository or in a bare one).
    pub workdir: Option<PathBuf>,
    /// Configuration lookups, overrides first.
    overrides: Vec<(String, String)>,
    config: Option<gix::Repository>,
}

impl Repo {
    /// Discovers the repository from the current directory, honouring
    /// `GIT_DIR` and friends (hooks run with them set).
    pub fn discover() -> Repo {
        let overrides = std::env::var("GIT_CONFIG_PARAMETERS")
            .map(|s| parse_config_parameters(&s))
            .unwrap_or_default();
        match gix::discover_with_environment_overrides(".") {
            Ok(repo) => Repo {
                workdir: repo
                    .workdir()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())),
                overrides,
                config: Some(repo),
            },
            Err(_) => Repo {
                workdir: None,
                overrides,
                config: None,
            },
        }
    }

    /// The value of a config key (`section.name`, case-insensitive), the
    /// last `git -c` override winning over the files.
    pub fn config(&self, key: &str) -> Option<String> {
        let wanted = key.to_ascii_lowercase();
        if let Some((_, v)) = self
            .overrides
            .iter()
            .rev()
            .find(|(k, _)| k.to_ascii_lowercase() == wanted)
        {
            return Some(v.clone());
        }
        let repo = self.config.as_ref()?;
        repo.config_snapshot().string(key).map(|v| v.to_string())
    }

    /// The gix repository, when there is one.
    pub fn gix(&self) -> Option<&gix::Repository> {
        self.config.as_ref()
    }

    /// The repository, or an error saying that the command needs one.
    pub fn require(&self, what: &str) -> Result<&gix::Repository> {
        self.config
            .as_ref()
            .ok_or_else(|| anyhow!("{what} needs a git repository, and this is not in one"))
    }

    /// The commit a revision names (`HEAD~3`, a tag, a branch, `@{upstream}`...).
    pub fn commit_of(&self, rev: &str) -> Result<gix::ObjectId> {
        let repo = self.require("a revision")?;
        let id = repo.rev_parse_single(rev).map_err(|e| {
            anyhow!(
                "`{}` names no commit: {e}",
                crate::text::escape_display(rev)
            )
        })?;
        let commit = id.object().and_then(|o| o.peel_to_commit()).map_err(|e| {
            anyhow!(
                "`{}` names no commit: {e}",
                crate::text::escape_display(rev)
            )
        })?;
        Ok(commit.id)
    }

    /// The blob at `rel` (a path from the top of the work tree) in the tree
    /// of `commit`: its id and bytes, or `None` when there is no such file.
    pub fn blob_at(
        &self,
        commit: gix::ObjectId,
        rel: &Path,
    ) -> Result<Option<(gix::ObjectId, Vec<u8>)>> {
        let Some(id) = self.blob_id(commit, rel)? else {
            return Ok(None);
        };
        Ok(Some((id, self.blob(id, commit, rel)?)))
    }

    /// The bytes of blob `id`, the file at `rel` in `commit` (as the error
    /// says when it cannot be read).
    pub fn blob(&self, id: gix::ObjectId, commit: gix::ObjectId, rel: &Path) -> Result<Vec<u8>> {
        let repo = self.require("reading at a revision")?;
        read_blob(repo, id, crate::lock::MAX_LOCK_SIZE, commit, rel)
    }

    /// The id of the blob at `rel` in the tree of `commit`, without reading
    /// it; `None` when there is no such file.
    pub fn blob_id(&self, commit: gix::ObjectId, rel: &Path) -> Result<Option<gix::ObjectId>> {
        blob_id_at(self.require("reading at a revision")?, commit, rel)
    }

    /// The inventory files at `rel` in the tree of `commit` (see
    /// [`inventory_files_at`]); an error when there are none.
    pub fn files_at(&self, commit: gix::ObjectId, rel: &Path, max: u64) -> Result<Files> {
        let repo = self.require("reading at a revision")?;
        inventory_files_at(repo, commit, rel, max)?.ok_or_else(|| {
            anyhow!(
                "{} holds no inventory (.json or .jsonl files) at commit {commit}",
                rel.display()
            )
        })
    }

    /// `path` relative to the top of the work tree (for lookups in trees).
    pub fn relative(&self, path: &Path) -> Result<PathBuf> {
        let Some(top) = &self.workdir else {
            // A bare repository: paths are already relative to the tree's root.
            return Ok(crate::files::lexical(path));
        };
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()?.join(path)
        };
        let absolute = crate::files::lexical(&absolute);
        let top = crate::files::lexical(top);
        absolute
            .strip_prefix(&top)
            .map(Path::to_path_buf)
            .map_err(|_| {
                anyhow!(
                    "{} is outside the work tree {}",
                    absolute.display(),
                    top.display()
                )
            })
    }

    /// A path setting, relative to the top of the work tree.
    pub fn config_path(&self, key: &str) -> Option<PathBuf> {
        let v = self.config(key)?;
        let p = PathBuf::from(&v);
        Some(match (&self.workdir, p.is_absolute()) {
            (Some(top), false) => top.join(p),
            _ => p,
        })
    }
}

/// Files read from a tree: each path (from the top) and its bytes.
pub type Files = Vec<(PathBuf, Vec<u8>)>;

/// Merge bases found, by the pair of commits asked about: the walks of
/// log and blame, and the hooks' judging of merges, ask it of the same
/// merges again and again.
#[derive(Default)]
pub struct MergeBases(
    std::collections::HashMap<(gix::ObjectId, gix::ObjectId), Option<gix::ObjectId>>,
);

impl MergeBases {
    /// Where the histories of `a` and `b` meet in `repo` (`None`: they
    /// share none), found once per pair.
    pub fn of(
        &mut self,
        repo: &gix::Repository,
        a: gix::ObjectId,
        b: gix::ObjectId,
    ) -> Result<Option<gix::ObjectId>> {
        if let Some(base) = self.0.get(&(a, b)) {
            return Ok(*base);
        }
        let base = repo
            .merge_base(a, b)
            .with_context(|| format!("cannot find where {a} and {b} meet"))?
            .map(|id| id.detach());
        self.0.insert((a, b), base);
        Ok(base)
    }
}

/// The bytes of blob `id` (the file at `rel` in `commit`, as an error
/// says), refused unread when it is larger than `max` bytes: a pushed blob
/// is untrusted input like any file, and the hooks would otherwise hold
/// whatever size was pushed in memory.
pub fn read_blob(
    repo: &gix::Repository,
    id: gix::ObjectId,
    max: u64,
    commit: gix::ObjectId,
    rel: &Path,
) -> Result<Vec<u8>> {
    let what = || {
        format!(
            "cannot read {} (object {id}) at commit {commit}",
            rel.display()
        )
    };
    let size = repo.find_header(id).with_context(what)?.size();
    if size > max {
        anyhow::bail!(
            "{} at commit {commit} is {size} bytes, larger than the input size cap of {max} bytes (--max-input-size, git config kams.maxInputSize)",
            rel.display()
        );
    }
    Ok(repo.find_object(id).with_context(what)?.detach().data)
}

/// The inventory files at `rel` in `commit`'s tree: the blob itself, or the
/// `*.json` and `*.jsonl` blobs directly inside a folder, sorted; `None`
/// when there is no such path or the folder has no such file.
pub fn inventory_files_at(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    rel: &Path,
    max: u64,
) -> Result<Option<Files>> {
    let Some(entry) = entry_at(repo, commit, rel, "an inventory")? else {
        return Ok(None);
    };
    let read = |id: gix::ObjectId| -> Result<Vec<u8>> { read_blob(repo, id, max, commit, rel) };
    if entry.mode().is_blob() {
        return Ok(Some(vec![(rel.to_path_buf(), read(entry.object_id())?)]));
    }
    if !entry.mode().is_tree() {
        return Ok(None);
    }
    let folder = repo.find_tree(entry.object_id()).with_context(|| {
        format!(
            "cannot read the folder {} at commit {commit}",
            rel.display()
        )
    })?;
    let mut out = Vec::new();
    for e in folder.iter() {
        let e = e.with_context(|| {
            format!(
                "cannot read the folder {} at commit {commit}",
                rel.display()
            )
        })?;
        let name = e.filename().to_string();
        if name.starts_with('.')
            || !(name.ends_with(".json") || name.ends_with(".jsonl"))
            || e.mode().is_tree()
        {
            continue;
        }
        if !e.mode().is_blob() {
            return Err(not_a_file(
                commit,
                &rel.join(&name),
                e.mode(),
                "an inventory file",
            ));
        }
        out.push((rel.join(&name), read(e.object_id())?));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((!out.is_empty()).then_some(out))
}

/// Whether object replacements (`refs/replace/`) apply to `repo`: an id
/// then no longer names fixed content, and no cache keyed by ids holds.
pub fn replacements_apply(repo: &gix::Repository) -> bool {
    !repo.objects.ignore_replacements && repo.objects.store_ref().replacements().next().is_some()
}

/// The id of the blob at `rel` in `commit`'s tree, without reading it.
pub fn blob_id_at(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    rel: &Path,
) -> Result<Option<gix::ObjectId>> {
    match entry_at(repo, commit, rel, "the lock")? {
        None => Ok(None),
        Some(e) if e.mode().is_blob() => Ok(Some(e.object_id())),
        Some(e) => Err(not_a_file(commit, rel, e.mode(), "the lock")),
    }
}

/// The entry at `rel` in `commit`'s tree, looked up one folder at a time:
/// `None` when there is nothing there, an error when a folder on the way is
/// a symbolic link or a submodule. A link is a blob of its own in git but
/// is followed in a work tree, so skipping it as "nothing there" would let
/// a commit hide what a checkout of it shows (see [`crate::files`]).
/// `what` names what is looked for, in the error.
fn entry_at<'r>(
    repo: &'r gix::Repository,
    commit: gix::ObjectId,
    rel: &Path,
    what: &str,
) -> Result<Option<gix::object::tree::Entry<'r>>> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .with_context(|| format!("cannot read the tree of commit {commit}"))?;
    let parts: Vec<_> = rel.components().collect();
    let mut on_the_way = PathBuf::new();
    for (n, c) in parts.iter().enumerate() {
        on_the_way.push(c);
        let entry = tree
            .clone()
            .lookup_entry_by_path(&on_the_way)
            .with_context(|| format!("cannot look up {} in commit {commit}", rel.display()))?;
        let Some(entry) = entry else {
            return Ok(None);
        };
        if n + 1 == parts.len() {
            if entry.mode().is_link() || entry.mode().is_commit() {
                return Err(not_a_file(commit, rel, entry.mode(), what));
            }
            return Ok(Some(entry));
        }
        if entry.mode().is_link() || entry.mode().is_commit() {
            return Err(not_a_file(
                commit,
                &on_the_way,
                entry.mode(),
                &format!("a folder on the way to {what} ({})", rel.display()),
            ));
        }
        if !entry.mode().is_tree() {
            return Ok(None);
        }
    }
    Ok(None)
}

/// The error for `what` at `rel` in `commit`, which is a link or a
/// submodule where a file or folder is meant.
fn not_a_file(
    commit: gix::ObjectId,
    rel: &Path,
    mode: gix::object::tree::EntryMode,
    what: &str,
) -> anyhow::Error {
    let is = if mode.is_link() {
        "a symbolic link"
    } else if mode.is_commit() {
        "a submodule"
    } else {
        "not a file"
    };
    anyhow!(
        "{} at commit {commit} is {is}, where {what} is expected: git-kams reads files themselves, never through a link (a checkout would follow it, perhaps out of the work tree); commit the file itself there",
        crate::text::shown_path(rel)
    )
}

/// Reads and decodes the commit `id`, and hands it to `f` (the decoded
/// commit borrows the object's buffer, so it cannot be returned).
pub fn with_commit<T>(
    repo: &gix::Repository,
    id: gix::ObjectId,
    f: impl FnOnce(&gix::objs::CommitRef<'_>) -> T,
) -> Result<T> {
    let commit = repo
        .find_commit(id)
        .with_context(|| format!("cannot read commit {id}"))?;
    let decoded = commit
        .decode()
        .with_context(|| format!("cannot decode commit {id}"))?;
    Ok(f(&decoded))
}

/// The values of a commit's `Signed-off-by:` trailers (`Name <email>`),
/// trimmed; empty ones are no sign-off. They are claims, as typed: see
/// [`parse_sign_off`] for which of them name somebody.
pub fn sign_offs(commit: &gix::objs::CommitRef<'_>) -> Vec<String> {
    use gix::bstr::ByteSlice;
    commit
        .signed_off_by_trailers()
        .map(|t| t.value.to_str_lossy().trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// True when a commit carries a signature header (gpg, ssh or x509),
/// good or not: [`signature::Verifier`] tells what it proves.
pub fn is_signed(commit: &gix::objs::CommitRef<'_>) -> bool {
    commit.extra_headers().pgp_signature().is_some()
}

/// The email (lowercased) of a `Signed-off-by:` value, which must be
/// exactly one name and one address, `Name <local@domain>`; otherwise why
/// it names nobody. Strict because the value is free text: `Mallory
/// <m@evil> <ada@example.org>` must not count as Ada, nor as anyone.
pub fn parse_sign_off(value: &str) -> std::result::Result<String, &'static str> {
    let v = value.trim();
    if v.chars().any(char::is_control) {
        return Err("it holds control characters");
    }
    if v.matches('<').count() != 1 || v.matches('>').count() != 1 {
        return Err("expected one name and one <address>");
    }
    let (name, rest) = v.split_once('<').expect("one `<`");
    let Some(email) = rest.strip_suffix('>') else {
        return Err("expected nothing after the <address>");
    };
    let name = name.trim();
    if name.is_empty() {
        return Err("it names no one before the <address>");
    }
    if name.contains('@') {
        return Err("the name holds an address");
    }
    let mut parts = email.split('@');
    let (Some(local), Some(domain), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err("the <address> is not one local@domain");
    };
    if local.is_empty() || domain.is_empty() || email.chars().any(char::is_whitespace) {
        return Err("the <address> is not one local@domain");
    }
    Ok(email.to_lowercase())
}

/// Parses git's `GIT_CONFIG_PARAMETERS`: shell-quoted `'key'='value'`
/// pairs (or the older `'key=value'`), separated by spaces.
pub fn parse_config_parameters(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let quoted = |i: &mut usize| -> Option<String> {
        if chars.get(*i) != Some(&'\'') {
            return None;
        }
        *i += 1;
        let mut v = String::new();
        loop {
            match chars.get(*i) {
                None => return Some(v),
                Some('\'') => {
                    // `'\''` is an escaped quote inside a quoted word.
                    if chars.get(*i + 1) == Some(&'\\')
                        && chars.get(*i + 2) == Some(&'\'')
                        && chars.get(*i + 3) == Some(&'\'')
                    {
                        v.push('\'');
                        *i += 4;
                    } else {
                        *i += 1;
                        return Some(v);
                    }
                }
                Some(c) => {
                    v.push(*c);
                    *i += 1;
                }
            }
        }
    };
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let Some(first) = quoted(&mut i) else {
            break;
        };
        if chars.get(i) == Some(&'=') {
            i += 1;
            let value = quoted(&mut i).unwrap_or_default();
            out.push((first, value));
        } else if let Some((k, v)) = first.split_once('=') {
            out.push((k.to_string(), v.to_string()));
        } else {
            out.push((first, "true".to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_off_is_one_name_and_one_address() {
        assert_eq!(
            parse_sign_off(" Ada Lovelace <Ada@Example.org> "),
            Ok("ada@example.org".to_string())
        );
        for bad in [
            "Mallory <m@evil> <ada@example.org>",
            "Mallory <m@evil>, Ada <ada@example.org>",
            "<ada@example.org>",
            "ada@example.org",
            "Ada <ada@example.org> trailing",
            "Ada <ada@@example.org>",
            "Ada <ada at example.org>",
            "Ada <@example.org>",
            "m@evil <ada@example.org>",
            "Ada <ada@example.org>>",
            "Ada\u{1b}[2K <ada@example.org>",
        ] {
            assert!(parse_sign_off(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_both_forms_of_git_config_parameters() {
        assert_eq!(
            parse_config_parameters("'kams.lock'='a b.lock' 'user.name=It'\\''s me' 'x.flag'"),
            vec![
                ("kams.lock".into(), "a b.lock".into()),
                ("user.name".into(), "It's me".into()),
                ("x.flag".into(), "true".into())
            ]
        );
    }
}
