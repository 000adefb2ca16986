//! One file per subcommand: each gathers its inputs (files, git config),
//! calls the pure core, and reports through the writer it is given.

pub mod blame;
pub mod capture;
pub mod deny;
pub mod hook;
pub mod import;
pub mod init;
pub mod log;
pub mod manual;
pub mod merge_driver;
pub mod pin;
pub mod record;
pub mod review;
pub mod scan;
pub mod status;
pub mod textconv;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use crate::cli::{ColorChoice, Global, SelectArgs};
use crate::compare::Pair;
use crate::config::{self, ClientServer};
use crate::finding::Severity;
use crate::git::Repo;
use crate::inventory::{self, Inventory, ReadOptions};
use crate::lock::{self, Lock};
use crate::report::Format;

/// What a command resolved from the command line, git config and the
/// environment.
pub struct Env {
    /// Global options as given.
    pub global: Global,
    /// The repository, if any.
    pub repo: Repo,
    /// Whether the text report is coloured (`--color`, `NO_COLOR`, a terminal).
    pub colour: bool,
    /// Whether a progress line may be drawn: stderr is a terminal and
    /// neither `--quiet` nor `--verbose` (whose lines would interleave).
    pub progress: bool,
}

/// A step of a long command: its end is reported with `--verbose`, and its
/// progress line cleared on a terminal.
pub struct Step<'e> {
    what: String,
    started: std::time::Instant,
    verbose: bool,
    progress: bool,
    err: &'e mut dyn Write,
}

impl Step<'_> {
    /// The writer the step borrowed, for messages meanwhile.
    pub fn err(&mut self) -> &mut dyn Write {
        self.err
    }
}

impl Drop for Step<'_> {
    fn drop(&mut self) {
        if self.verbose {
            let _ = writeln!(
                self.err,
                "kams: {} took {:.3} s{}",
                self.what,
                self.started.elapsed().as_secs_f64(),
                memory()
            );
        } else if self.progress {
            let _ = write!(self.err, "\r\x1b[K");
            let _ = self.err.flush();
        }
    }
}

/// The process's resident memory now and at its peak, as `-v` shows it
/// after each step (where the system says: Linux's `/proc`).
pub(crate) fn memory() -> String {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return String::new();
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().strip_suffix(" kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(now), Some(peak)) => {
            format!(", memory {} MiB (peak {} MiB)", now / 1024, peak / 1024)
        }
        _ => String::new(),
    }
}

/// The output format of a command that reports no findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlainFormat {
    /// For people.
    Text,
    /// For programs.
    Json,
}

/// The exit status of a command that ran to its end.
pub type Status = u8;

impl Env {
    /// Resolves settings for this run.
    pub fn new(global: Global) -> Env {
        use std::io::IsTerminal;
        let colour = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
            }
        };
        let progress = std::io::stderr().is_terminal() && !global.quiet && !global.verbose;
        Env {
            global,
            repo: Repo::discover(),
            colour,
            progress,
        }
    }

    /// With `--verbose`, says on `err` what is being done and, when the
    /// step ends (the returned guard is dropped), how long it took.
    pub fn step<'e>(&self, what: &str, err: &'e mut dyn Write) -> Step<'e> {
        if self.global.verbose {
            let _ = writeln!(err, "kams: {what}");
        } else if self.progress {
            let _ = write!(err, "\r\x1b[K{what}...");
            let _ = err.flush();
        }
        Step {
            what: what.to_string(),
            started: std::time::Instant::now(),
            verbose: self.global.verbose,
            progress: self.progress,
            err,
        }
    }

    /// The lock path: `--lock`, git config `kams.lock`, or `kams.lock` at
    /// the top of the work tree. A folder below the top of the work tree
    /// on the way to it is no link ([`crate::files::links_below`]).
    pub fn lock_path(&self) -> Result<PathBuf> {
        let path = if let Some(p) = &self.global.lock {
            p.clone()
        } else if let Some(p) = self.repo.config_path("kams.lock") {
            p
        } else {
            match &self.repo.workdir {
                Some(top) => top.join("kams.lock"),
                None => bail!("not in a git work tree: name the lock with --lock PATH"),
            }
        };
        if let Some(top) = &self.repo.workdir {
            crate::files::links_below(top, &path)?;
        }
        Ok(path)
    }

    /// Inventory paths: `--inventory`, git config `kams.inventory`, or
    /// `.kams/inventory/` at the top of the work tree (or here).
    pub fn inventory_paths(&self) -> Vec<PathBuf> {
        if !self.global.inventory.is_empty() {
            return self.global.inventory.clone();
        }
        if let Some(p) = self.repo.config_path("kams.inventory") {
            return vec![p];
        }
        let base = self
            .repo
            .workdir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        vec![base.join(".kams").join("inventory")]
    }

    /// Reads the inventory with every descriptor whole.
    pub fn inventory(&self) -> Result<Inventory> {
        let (paths, opts) = self.inventory_spec(false)?;
        read_inventory(&paths, &opts)
    }

    /// Where the inventory is and how to read it (`digests_only`: see
    /// [`Inventory::materialize`]).
    pub fn inventory_spec(&self, digests_only: bool) -> Result<(Vec<PathBuf>, ReadOptions)> {
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
            digests_only,
            index_dir: None,
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
    /// `scan --capture`). `descriptors`: whether the lock's entries whose
    /// fields are compared will be materialised ([`Lock::materialize`]):
    /// then a lock taken from its index comes without field digests (see
    /// [`crate::cache::lock::load`]); without, a committed lock indexed before is
    /// not read at all.
    pub fn inventory_and_lock(
        &self,
        select: &SelectArgs,
        captured: Option<Vec<(PathBuf, Vec<u8>)>>,
        descriptors: bool,
        err: &mut dyn Write,
    ) -> Result<(Inventory, Lock, Option<crate::cache::lock::Key>)> {
        let (paths, mut opts) = self.inventory_spec(true)?;
        let index_dir = self.index_dir()?;
        opts.index_dir.clone_from(&index_dir);
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
            Some(files) => {
                crate::cache::inventory::read_files(files, &opts).map_err(|e| anyhow!("{e}"))
            }
            None => read_inventory(&paths, &opts),
        };
        let reading_lock = || match (&lock_file, &select.at) {
            (Some(path), _) => {
                lock::store::read_digests_only(path, index_dir.as_deref(), !descriptors)
            }
            (None, Some(rev)) => self.lock_at(rev, descriptors).map(Some),
            (None, None) => Ok(None),
        };
        let (inventory, lock) =
            crate::threads::side_by_side_if(beside, reading_inventory, reading_lock);
        let inventory = inventory?;
        let (lock, key) = match (lock?, &lock_file) {
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
        Ok((inventory, lock, key))
    }

    /// The MCP client configs of the work tree (or of the current directory
    /// outside git) and those named with `--config`; always the work
    /// tree's, even with `--at`, since a client runs what is there now.
    pub fn client_configs(&self) -> Result<Vec<ClientServer>> {
        let top = self
            .repo
            .workdir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let (_, opts) = self.inventory_spec(true)?;
        // A committed `.vscode` that links elsewhere would have its
        // `mcp.json` read from outside the work tree.
        for rel in config::DEFAULT_FILES {
            crate::files::links_below(&top, &top.join(rel))?;
        }
        crate::files::read_configs(&top, &self.global.config, opts.max_size)
            .map_err(|e| anyhow!("{e}"))
    }

    /// The lock's path from the top of the work tree, for reading it from git.
    pub fn lock_relative(&self) -> Result<PathBuf> {
        if let Some(p) = &self.global.lock {
            return self.repo.relative(p).map_err(|e| {
                anyhow!("--lock: {e}: a lock read from git must be in the work tree")
            });
        }
        // A relative setting goes through `relative` too, so that `..`
        // is resolved (or refused when it leaves the work tree) instead of
        // being looked up in the tree as a name.
        match self.repo.config_path("kams.lock") {
            Some(p) => self.repo.relative(&p).map_err(|e| {
                anyhow!("git config kams.lock: {e}: a lock read from git must be in the work tree")
            }),
            None => Ok(PathBuf::from("kams.lock")),
        }
    }

    /// The inventory's paths from the top of the work tree, for reading
    /// them from git: `--inventory`, git config `kams.inventory`, or
    /// `.kams/inventory`. A path outside the work tree is an error: no
    /// commit holds it.
    pub fn inventory_relative(&self) -> Result<Vec<PathBuf>> {
        let outside = |what: &str, e: anyhow::Error| {
            anyhow!("{what}: {e}: an inventory read from git must be in the work tree")
        };
        if !self.global.inventory.is_empty() {
            return self
                .global
                .inventory
                .iter()
                .map(|p| self.repo.relative(p).map_err(|e| outside("--inventory", e)))
                .collect();
        }
        match self.repo.config_path("kams.inventory") {
            Some(p) => Ok(vec![self
                .repo
                .relative(&p)
                .map_err(|e| outside("git config kams.inventory", e))?]),
            None => Ok(vec![PathBuf::from(".kams/inventory")]),
        }
    }

    /// The lock as committed at `rev` (digests only), from the object
    /// database; a lock missing there is an error.
    pub fn lock_at(
        &self,
        rev: &str,
        descriptors: bool,
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
        if let (Some(dir), false) = (&index, descriptors) {
            // Digests only: a lock read before needs no blob at all.
            if let Some(lock) = crate::cache::lock::load(dir, &key, None, true) {
                return Ok((lock, Some(key)));
            }
        }
        let bytes = self.repo.blob(id, commit, &rel)?;
        let text = std::sync::Arc::new(lock::store::strip_bom(bytes));
        if let Some(lock) = index
            .as_deref()
            .and_then(|dir| crate::cache::lock::load(dir, &key, Some(text.clone()), !descriptors))
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

    /// Where lock and inventory indexes are kept (see [`lock::index`] and
    /// [`inventory::index`]): the common git directory, unless git config
    /// `kams.indexCache` is false or there is no repository.
    pub fn index_dir(&self) -> Result<Option<PathBuf>> {
        let Some(repo) = self.repo.gix() else {
            return Ok(None);
        };
        let on = self.config_bool("kams.indexCache", true)?;
        Ok(on.then(|| repo.common_dir().to_path_buf()))
    }

    /// The boolean git config `key`, `default` when unset; an error naming
    /// the key when it is no boolean.
    pub fn config_bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.repo.config(key) {
            None => Ok(default),
            Some(v) => hook::parse_bool(&v).ok_or_else(|| {
                anyhow!(
                    "git config {key}: `{}` is not a boolean (true or false)",
                    crate::text::escape_display(&v)
                )
            }),
        }
    }

    /// The sign-off policy of git config `kams.approvers` and
    /// `kams.requireSigned`; what the reader should know goes to `notes`.
    pub fn policy(&self, notes: &mut Vec<String>) -> Result<crate::git::policy::Policy> {
        Ok(crate::git::policy::Policy::new(
            self.repo.config("kams.approvers").as_deref(),
            self.config_bool("kams.requireSigned", false)?,
            notes,
        )?
        .with_verifier(self.verifier(), notes))
    }

    /// How commit signatures are checked here: git's `gpg.*` settings,
    /// relative paths from the top of the work tree (the git dir of a bare
    /// repository).
    pub fn verifier(&self) -> crate::git::signature::Verifier {
        let base = self
            .repo
            .workdir
            .clone()
            .or_else(|| self.repo.gix().map(|r| r.git_dir().to_path_buf()));
        crate::git::signature::Verifier::from_config(|k| self.repo.config(k), base.as_deref())
    }

    /// What judges whether a launch recorded in the lock is approved, at
    /// `rev`'s commit (`HEAD` when `None`); `None` when there is no git
    /// history to judge in (outside a repository, or before the first
    /// commit), where no launch is approved.
    pub fn launch_judge(&self, rev: Option<&str>) -> Result<Option<LaunchJudge<'_>>> {
        let Some(repo) = self.repo.gix() else {
            return Ok(None);
        };
        let tip = match rev {
            Some(rev) => self.repo.commit_of(rev)?,
            None => match repo.head_id() {
                Ok(id) => id.detach(),
                Err(_) => return Ok(None),
            },
        };
        // A lock outside the work tree (`--lock` elsewhere) has no
        // history here: no commit approved its launches.
        let rel = match self.lock_relative() {
            Ok(rel) => rel,
            Err(_) if rev.is_none() => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut notes = Vec::new();
        Ok(Some(LaunchJudge {
            policy: self.policy(&mut notes)?,
            history: crate::git::hooks::LockHistory::new(repo, &rel),
            tip,
        }))
    }

    /// The inventory files committed at `rev`.
    pub fn inventory_files_at(&self, rev: &str) -> Result<Vec<(PathBuf, Vec<u8>)>> {
        let commit = self.repo.commit_of(rev)?;
        let rels = self.inventory_relative()?;
        let (_, opts) = self.inventory_spec(true)?;
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

    /// `--format` for a command that reports no findings: text or JSON.
    /// SARIF is refused before anything runs, since it carries findings
    /// only (`scan` and `diff` write it).
    pub fn plain_format(&self, command: &str) -> Result<PlainFormat> {
        match self.global.format {
            Format::Text => Ok(PlainFormat::Text),
            Format::Json => Ok(PlainFormat::Json),
            Format::Sarif => bail!(
                "--format sarif: `{command}` reports no findings; use --format text or json (SARIF is written by `git kams scan` and `git kams diff`)"
            ),
        }
    }

    /// The severity at which a run fails (`None`: never).
    pub fn fail_on(&self, flag: Option<&str>) -> Result<Option<Severity>> {
        let value = match flag {
            Some(v) => v.to_string(),
            None => self
                .repo
                .config("kams.failOn")
                .unwrap_or_else(|| "low".into()),
        };
        if value == "never" || value == "none" {
            return Ok(None);
        }
        let from = if flag.is_some() {
            "--fail-on"
        } else {
            "git config kams.failOn"
        };
        value.parse::<Severity>().map(Some).map_err(|_| {
            anyhow!(
                "{from}: unknown value `{}` (expected info, low, medium, high, critical or never)",
                crate::text::escape_display(&value)
            )
        })
    }
}

/// Reads the inventory at `paths`, with a hint when there is none.
pub fn read_inventory(paths: &[PathBuf], opts: &ReadOptions) -> Result<Inventory> {
    crate::files::read_inventory(paths, opts).map_err(|e| {
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

/// Parses a size in bytes, with an optional k, m or g suffix (as git does).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, mult) = match s.chars().last()?.to_ascii_lowercase() {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// The time recorded in the lock: [`clock`], RFC 3339, UTC, seconds.
pub fn now() -> Result<String> {
    Ok(clock()?.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// The time of this run: `SOURCE_DATE_EPOCH` when set (for reproducible
/// tests and samples), else now.
pub fn clock() -> Result<chrono::DateTime<chrono::Utc>> {
    Ok(match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => {
            let secs: i64 = v
                .trim()
                .parse()
                .map_err(|_| anyhow!("SOURCE_DATE_EPOCH `{v}` is not a number of seconds"))?;
            chrono::DateTime::from_timestamp(secs, 0)
                .ok_or_else(|| anyhow!("SOURCE_DATE_EPOCH {secs} is out of range"))?
        }
        Err(_) => chrono::Utc::now(),
    })
}

/// Entry selection by `SERVER` or `SERVER/TOOL` keys.
pub struct Selection {
    keys: Vec<String>,
}

/// Judges launches recorded in the lock as `capture` and `status` must:
/// approved only when the lock committed at the tip records the same
/// launch and the commit that gave it that value meets the sign-off
/// policy ([`crate::git::policy::Policy::launch_approval`]).
pub struct LaunchJudge<'r> {
    policy: crate::git::policy::Policy,
    history: crate::git::hooks::LockHistory<'r>,
    tip: gix::ObjectId,
}

impl LaunchJudge<'_> {
    /// The commit that approved `launch` (the launch of `server` in the
    /// lock being read), or why none did.
    pub fn verdict(
        &mut self,
        server: &str,
        launch: &crate::json::Value,
    ) -> Result<std::result::Result<gix::ObjectId, String>> {
        match self.history.launch_at(self.tip, server) {
            Err(e) => Ok(Err(format!(
                "the lock committed at {} cannot be read: {e:#}",
                self.tip.to_hex_with_len(7)
            ))),
            Ok(at) if at.as_ref() != Some(launch) => Ok(Err(
                "its launch in kams.lock is not committed (an approval is a commit: git kams pin)"
                    .to_string(),
            )),
            Ok(_) => self
                .policy
                .launch_approval(&mut self.history, self.tip, server),
        }
    }
}

/// What a reason says when no git history can approve a launch.
pub const NO_HISTORY: &str =
    "kams.lock is not in a git history, so no approval commit stands behind its launch";

impl Selection {
    /// Selects `keys` (all when empty).
    pub fn new(keys: &[String]) -> Selection {
        Selection {
            keys: keys.to_vec(),
        }
    }

    /// True when the subject is selected.
    pub fn matches(&self, server: &str, tool: Option<&str>) -> bool {
        self.keys.is_empty()
            || self.keys.iter().any(|k| {
                k == server
                    || tool.is_some_and(|t| {
                        k.len() == server.len() + 1 + t.len() && *k == format!("{server}/{t}")
                    })
            })
    }

    /// Fails on a key that names nothing in `pairs`.
    pub fn check(&self, pairs: &[Pair<'_>]) -> Result<()> {
        for k in &self.keys {
            let one = Selection {
                keys: vec![k.clone()],
            };
            if !pairs.iter().any(|p| one.matches(p.server, p.tool)) {
                bail!(
                    "`{}` names no server or tool of the inventory or the lock (expected SERVER or SERVER/TOOL; see `git kams status`)",
                    crate::text::escape_display(k)
                );
            }
        }
        Ok(())
    }
}

/// Runs `write` on `out`; a reader that went away (broken pipe) is not an
/// error: the command's status stands.
pub fn emit(
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    match write(out).and_then(|_| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// so that a reader never sees half a file (a capture, a man page); what
/// is at `path` must be a regular file or nothing ([`crate::files::replace`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::files::replace(path, bytes, None)
}
