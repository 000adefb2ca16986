//! Shared test plumbing: the binary with a hermetic environment, temporary
//! repositories, and paths into the shared corpus.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Fixed clock for every run: 2026-01-01T00:00:00Z.
pub const EPOCH: &str = "1767225600";

/// `../shared/corpus/` beside the checkout.
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

/// A file of the real corpus.
pub fn real(name: &str) -> PathBuf {
    corpus().join("real").join(name)
}

/// The `git-kams` binary with a clean environment, run in `dir`.
pub fn kams(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("git-kams").expect("binary built");
    hermetic(cmd.current_dir(dir));
    cmd
}

fn hermetic<C: EnvLike>(cmd: &mut C) {
    cmd.clear();
    cmd.set("PATH", &std::env::var("PATH").unwrap_or_default());
    cmd.set("HOME", "/nonexistent");
    cmd.set("GIT_CONFIG_GLOBAL", "/dev/null");
    cmd.set("GIT_CONFIG_NOSYSTEM", "1");
    cmd.set("TZ", "UTC");
    cmd.set("LC_ALL", "C");
    cmd.set("SOURCE_DATE_EPOCH", EPOCH);
    cmd.set("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z");
    cmd.set("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z");
}

trait EnvLike {
    fn clear(&mut self);
    fn set(&mut self, k: &str, v: &str);
}

impl EnvLike for assert_cmd::Command {
    fn clear(&mut self) {
        self.env_clear();
    }
    fn set(&mut self, k: &str, v: &str) {
        self.env(k, v);
    }
}

impl EnvLike for Command {
    fn clear(&mut self) {
        self.env_clear();
    }
    fn set(&mut self, k: &str, v: &str) {
        self.env(k, v);
    }
}

/// Runs git in `dir` hermetically and panics on failure.
/// `program` with the same hermetic environment as [`kams`], in `dir`.
pub fn hermetic_command(program: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    hermetic(&mut cmd);
    cmd.current_dir(dir);
    cmd
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    hermetic(&mut cmd);
    let out = cmd.current_dir(dir).args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A new repository in a temporary directory, with a fixed identity.
pub fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["config", "user.name", "Rita Reviewer"]);
    git(dir.path(), &["config", "user.email", "rita@example.com"]);
    dir
}

/// Copies a file into `dir/rel`, creating folders.
pub fn copy(from: &Path, dir: &Path, rel: &str) -> PathBuf {
    let to = dir.join(rel);
    std::fs::create_dir_all(to.parent().expect("has parent")).expect("mkdir");
    std::fs::copy(from, &to).expect("copy");
    to
}

/// Parses the JSON report on stdout.
pub fn json(stdout: &[u8]) -> serde_json::Value {
    serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(stdout)))
}
