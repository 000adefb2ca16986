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

/// Output bytes as text, for assertions and messages.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `program` with the same hermetic environment as [`kams`], in `dir`.
pub fn hermetic_command(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    hermetic(&mut cmd);
    cmd.current_dir(dir);
    cmd
}

/// [`hermetic_command`] with the built `git-kams` first on PATH, for what
/// git runs as `git kams` (hooks, merge and diff drivers).
pub fn with_kams_on_path(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_git-kams")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = hermetic_command(program, dir);
    cmd.env("PATH", path);
    cmd
}

/// Runs git in `dir` hermetically and panics on failure.
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

/// `target/NAME`, built by `build` into a fresh folder unless a finished
/// build of the same `stamp` (what it holds: pinned versions) is there.
///
/// A half-finished install must never look finished, and two test
/// processes may install at once. So each builds into a folder of its own
/// under `target/NAME.d/`, then points the symlink `target/NAME` at it with
/// a rename, which is atomic. The folder itself is never moved: a Python
/// venv is not relocatable (its scripts' `#!` lines name its absolute
/// path).
pub fn installed(name: &str, stamp: &str, build: impl FnOnce(&Path)) -> PathBuf {
    const STAMP: &str = ".installed";
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let dir = target.join(name);
    if std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s == stamp) {
        return dir;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let unique = format!("{}-{nanos}", std::process::id());
    let stage = target.join(format!("{name}.d")).join(&unique);
    std::fs::create_dir_all(&stage).unwrap();
    let start = std::time::Instant::now();
    build(&stage);
    std::fs::write(stage.join(STAMP), stamp).unwrap();
    eprintln!(
        "installed {name} in {} ({:.0?})",
        stage.display(),
        start.elapsed()
    );
    let link = target.join(format!("{name}.link-{unique}"));
    std::os::unix::fs::symlink(Path::new(&format!("{name}.d")).join(&unique), &link).unwrap();
    // A real folder there (an install by hand) cannot be renamed over.
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::rename(&link, &dir).unwrap();
    dir
}

/// Runs an install step and panics with its output on failure.
pub fn must(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (see .ci/run for what to install)"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Python packages the tests drive (a real SARIF schema validator,
/// the pre-commit framework, the official OTLP protobuf definitions),
/// pinned, in a venv under `target/py-tools`; returns its `bin` folder.
pub fn py_tools() -> &'static Path {
    const PACKAGES: [&str; 3] = [
        "jsonschema==4.23.0",
        "pre-commit==4.0.1",
        "opentelemetry-proto==1.29.0",
    ];
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        installed("py-tools", &PACKAGES.join("\n"), |stage| {
            must(
                Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(stage.join("venv")),
            );
            must(
                Command::new(stage.join("venv/bin/pip"))
                    .args(["install", "--quiet", "--disable-pip-version-check"])
                    .args(PACKAGES),
            );
        })
        .join("venv/bin")
    })
}

/// The findings of class `class` in a JSON scan of `dir` (`--fail-on
/// never`, so that the scan itself must succeed).
pub fn findings_of(dir: &Path, class: &str) -> Vec<serde_json::Value> {
    let o = kams(dir)
        .args(["--format", "json", "scan", "--fail-on", "never"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    json(&o.stdout)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == class)
        .cloned()
        .collect()
}

/// Copies the bundled samples' lock to `dir/kams.lock` and their drifted
/// inventory to `dir/.kams/inventory/`.
pub fn samples_drifted(dir: &Path) {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    std::fs::copy(samples.join("kams.lock"), dir.join("kams.lock")).unwrap();
    std::fs::create_dir_all(dir.join(".kams/inventory")).unwrap();
    for f in std::fs::read_dir(samples.join("inventory-drifted")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.join(".kams/inventory").join(f.file_name().unwrap())).unwrap();
    }
}

/// The evidence lines of a finding of a JSON report.
pub fn evidence(finding: &serde_json::Value) -> Vec<&str> {
    finding["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect()
}
