//! One file per subcommand: each gathers its inputs (files, git config),
//! calls the pure core, and reports through the writer it is given.

pub mod blame;
pub mod capture;
pub mod deny;
pub mod enforce;
pub mod hook;
pub mod import;
pub mod init;
mod inputs;
pub mod log;
pub mod manual;
pub mod merge_driver;
pub mod pin;
pub mod record;
pub mod review;
pub mod scan;
pub mod status;
pub mod textconv;

pub use inputs::{read_inventory, Tools};

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use crate::cli::{ColorChoice, Global};
use crate::compare::Pair;
use crate::config::{self, ClientServer};
use crate::finding::Severity;
use crate::git::Repo;
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

    /// The MCP client configs of the work tree (or of the current directory
    /// outside git) and those named with `--config`; always the work
    /// tree's, even with `--at`, since a client runs what is there now.
    pub fn client_configs(&self) -> Result<Vec<ClientServer>> {
        let top = self
            .repo
            .workdir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let (_, opts) = self.inventory_spec(Tools::Digests)?;
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

    /// Where lock and inventory indexes are kept (see [`crate::cache::lock`]
    /// and [`crate::cache::inventory`]): the common git directory, unless git config
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
