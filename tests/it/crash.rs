//! Crash safety of `git kams pin`: killed with SIGKILL at random points,
//! the lock is always the old or the new version, what a killed run leaves
//! behind is explained and never blocks the next run for good, and the
//! repository stays sound (`git fsck`). Concurrent pins never lose an
//! update.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::{copy, git, hermetic_command, kams, real, repo, text};

/// A small xorshift generator: the kill points vary but a failure can be
/// replayed from the seed printed with it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn pin_command(dir: &Path, note: &str) -> Command {
    let mut cmd = hermetic_command(env!("CARGO_BIN_EXE_git-kams"), dir);
    cmd.args(["pin", "-m", note])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Whether the lock at `dir` approves the inventory there as it is now.
fn approves_inventory(dir: &Path) -> bool {
    let out = kams(dir)
        .args(["diff", "--fail-on", "info"])
        .output()
        .unwrap();
    out.status.code() == Some(0)
}

/// Ages a leftover lock file as if the killed run had been a while ago.
fn age(path: &Path) {
    let old = std::time::SystemTime::now() - Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

#[test]
fn pin_killed_at_random_points_leaves_the_old_or_the_new_lock() {
    let repo = repo();
    let dir = repo.path();
    let inventory = copy(
        &real("server-filesystem@2026.8.31.json"),
        dir,
        ".kams/inventory/fs.json",
    );
    // How long a whole pin takes here: the kill points are spread over it.
    // The machine's load changes while the suite runs, so the span follows
    // what the runs show: shorter after a run that ended before its kill,
    // longer after one that was killed.
    let started = std::time::Instant::now();
    kams(dir).args(["pin", "-m", "first"]).assert().success();
    let mut span = started.elapsed().as_micros() as u64 + 1;
    let original = std::fs::read_to_string(&inventory).unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let (mut killed_mid_run, mut stale_locks, mut index_locks, mut uncommitted) = (0, 0, 0, 0);
    for i in 0..100 {
        // Each round changes one description, so every pin has work to do.
        let changed = original.replacen(
            "Read the complete contents",
            &format!("Read (round {i}) the complete contents"),
            1,
        );
        std::fs::write(&inventory, changed).unwrap();
        let before = std::fs::read(dir.join("kams.lock")).unwrap();
        let head_before = git(dir, &["rev-parse", "HEAD"]);

        let mut child = pin_command(dir, &format!("round {i}")).spawn().unwrap();
        let delay = Duration::from_micros(rng.next() % span);
        std::thread::sleep(delay);
        let _ = child.kill();
        let out: Output = child.wait_with_output().unwrap();
        if out.status.code().is_none() {
            killed_mid_run += 1;
            span = span * 21 / 20;
        } else {
            span = (span * 4 / 5).max(1_000);
        }

        // The lock is the old version, or one that approves this round.
        let after = std::fs::read(dir.join("kams.lock")).unwrap();
        assert!(
            after == before || approves_inventory(dir),
            "seed {seed} round {i}: kams.lock is neither the old nor the new version"
        );

        // What a killed run may leave behind: our lock file, git's index
        // lock. Each is explained, and the next pin goes on.
        let leftover = dir.join("kams.lock.lock");
        if leftover.exists() {
            stale_locks += 1;
            age(&leftover);
        }
        let index_lock = dir.join(".git/index.lock");
        let out = pin_command(dir, &format!("round {i} again"))
            .output()
            .unwrap();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        let git_locks = [
            index_lock.clone(),
            dir.join(".git/HEAD.lock"),
            dir.join(".git/refs/heads/main.lock"),
        ];
        if out.status.code() == Some(2) {
            // git's own lock files: nothing can tell a crashed git from a
            // running one, so the message says what to check and remove.
            assert!(said.contains(".lock") && said.contains("remove"), "{said}");
            assert!(git_locks.iter().any(|l| l.exists()), "{said}");
            index_locks += 1;
            for l in &git_locks {
                let _ = std::fs::remove_file(l);
            }
        } else {
            assert_eq!(out.status.code(), Some(0), "seed {seed} round {i}: {said}");
        }
        if said.contains("nothing to pin") || out.status.code() == Some(2) {
            // The killed run wrote the lock but did not commit it: the
            // next pin says so, and the user commits it.
            let out = pin_command(dir, &format!("round {i} again"))
                .output()
                .unwrap();
            let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
            if said.contains("differs from its last commit") {
                uncommitted += 1;
                for l in &git_locks {
                    let _ = std::fs::remove_file(l);
                }
                git(
                    dir,
                    &[
                        "commit",
                        "-q",
                        "-s",
                        "-m",
                        "finish the stopped pin",
                        "kams.lock",
                    ],
                );
            } else {
                assert_eq!(out.status.code(), Some(0), "seed {seed} round {i}: {said}");
            }
        }
        if leftover.exists() {
            panic!("seed {seed} round {i}: kams.lock.lock left after a clean run");
        }
        // The work tree's lock is committed: a killed run's uncommitted
        // lock was either redone or committed now.
        assert!(approves_inventory(dir), "seed {seed} round {i}");
        let status = git(dir, &["status", "--porcelain", "kams.lock"]);
        assert_eq!(
            status.trim(),
            "",
            "seed {seed} round {i}: kams.lock not committed (killed after {delay:?}: {})",
            text(&out.stderr)
        );
        assert_ne!(git(dir, &["rev-parse", "HEAD"]), head_before);
    }
    let fsck = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["fsck", "--full", "--strict"])
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "git fsck: {}{}",
        text(&fsck.stdout),
        text(&fsck.stderr)
    );
    eprintln!(
        "seed {seed}: {killed_mid_run} of 100 runs killed before they ended; {stale_locks} left kams.lock.lock, {index_locks} left a git lock file, {uncommitted} left the lock written but not committed"
    );
    // The kill points must actually land inside runs, or this tested
    // nothing.
    assert!(
        killed_mid_run >= 40,
        "only {killed_mid_run} runs were killed mid-run"
    );
}

#[test]
fn concurrent_pins_never_lose_an_approval() {
    let repo = repo();
    let dir = repo.path();
    copy(
        &real("server-filesystem@2026.8.31.json"),
        dir,
        ".kams/inventory/fs.json",
    );
    kams(dir).arg("record").assert().success();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "recorded"]);
    let tools = [
        "read_file",
        "read_text_file",
        "write_file",
        "edit_file",
        "create_directory",
        "list_directory",
        "move_file",
        "search_files",
    ];
    let children: Vec<_> = tools
        .iter()
        .map(|t| {
            let mut cmd = pin_command(dir, &format!("pin {t}"));
            cmd.arg(format!("server-filesystem/{t}"));
            (t, cmd.spawn().unwrap())
        })
        .collect();
    let mut pinned = Vec::new();
    for (tool, child) in children {
        let out = child.wait_with_output().unwrap();
        match out.status.code() {
            Some(0) => pinned.push(*tool),
            Some(2) => {
                let said = text(&out.stderr);
                assert!(
                    said.contains("lock held") || said.contains("index lock"),
                    "{tool}: {said}"
                );
            }
            other => panic!("{tool}: exit {other:?}: {}", text(&out.stderr)),
        }
    }
    assert!(!pinned.is_empty());
    let status = kams(dir)
        .args(["--format", "json", "status"])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let committed = git(dir, &["show", "HEAD:kams.lock"]);
    for tool in &pinned {
        let entry = status["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["tool"] == *tool)
            .unwrap();
        assert_eq!(entry["state"], "pinned", "{tool} lost its approval");
        assert!(
            committed.contains(&format!("\"note\": \"pin {tool}\"")),
            "{tool} not committed"
        );
    }
    assert_eq!(git(dir, &["status", "--porcelain", "kams.lock"]).trim(), "");
}
