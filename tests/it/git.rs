//! Git-native approvals: `pin` commits only kams.lock (signed off, signed
//! when the user signs, through the user's commit-msg hook) and leaves the
//! user's other work alone; `--at` and `--inventory-at` read the lock and
//! the inventory from any revision without touching the work tree.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::{copy, git, json, kams, real, repo};

fn inventory(dir: &Path, file: &str) {
    let _ = std::fs::remove_dir_all(dir.join(".kams/inventory"));
    copy(&real(file), dir, &format!(".kams/inventory/{file}"));
}

fn hook(dir: &Path, name: &str, body: &str) {
    let path = dir.join(".git/hooks").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn pin_commits_the_lock_and_its_inventory_and_leaves_other_work_alone() {
    let repo = repo();
    let dir = repo.path();
    std::fs::write(dir.join("notes.txt"), "one\n").unwrap();
    git(dir, &["add", "notes.txt"]);
    git(dir, &["commit", "-qm", "start"]);
    // The user's work in progress: one staged file, one unstaged change.
    std::fs::write(dir.join("staged.txt"), "staged\n").unwrap();
    git(dir, &["add", "staged.txt"]);
    std::fs::write(dir.join("notes.txt"), "one\ntwo\n").unwrap();
    inventory(dir, "mcp-server-time@0.6.2.json");

    kams(dir)
        .args(["pin", "-m", "time server reviewed"])
        .assert()
        .success();

    // The lock and the inventory it was approved from (the hooks compare
    // the two as committed), nothing else.
    let files = git(dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        files,
        ".kams/inventory/mcp-server-time@0.6.2.json\nkams.lock\n"
    );
    let message = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("kams: approve 3 entries and 1 launch of mcp-server-time\n"),
        "{message}"
    );
    assert!(message.contains("time server reviewed"), "{message}");
    assert!(
        message.contains("mcp-server-time/convert_time sha256:"),
        "{message}"
    );
    assert!(
        message
            .trim_end()
            .ends_with("Signed-off-by: Rita Reviewer <rita@example.com>"),
        "{message}"
    );
    let status = git(dir, &["status", "--porcelain"]);
    assert_eq!(
        status, " M notes.txt\nA  staged.txt\n",
        "the index agrees with HEAD for kams.lock and the inventory"
    );
    // A later ordinary commit must not revert kams.lock (stale cache-tree trap).
    git(dir, &["commit", "-qm", "user work"]);
    assert_eq!(
        git(dir, &["show", "--name-only", "--format=", "HEAD"]),
        "staged.txt\n"
    );
    assert_eq!(
        git(
            dir,
            &["diff", "HEAD~2", "HEAD", "--stat", "--", "kams.lock"]
        )
        .lines()
        .count(),
        2
    );
    assert!(git(dir, &["status", "--porcelain", "kams.lock"]).is_empty());
}

#[test]
fn pin_in_a_repository_without_commits_and_with_no_commit() {
    let repo = repo();
    let dir = repo.path();
    inventory(dir, "mcp-server-time@0.6.2.json");
    kams(dir)
        .args(["pin", "-m", "first", "--no-commit"])
        .assert()
        .success();
    assert!(dir.join("kams.lock").is_file());
    assert!(std::process::Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .unwrap()
        .stdout
        .is_empty());
    std::fs::remove_file(dir.join("kams.lock")).unwrap();
    kams(dir).args(["pin", "-m", "first"]).assert().success();
    assert_eq!(git(dir, &["rev-list", "--count", "HEAD"]), "1\n");
    assert_eq!(
        git(dir, &["show", "--name-only", "--format=", "HEAD"]),
        ".kams/inventory/mcp-server-time@0.6.2.json\nkams.lock\n"
    );
}

#[test]
fn the_commit_msg_hook_runs_and_can_refuse() {
    let repo = repo();
    let dir = repo.path();
    inventory(dir, "mcp-server-time@0.6.2.json");
    hook(
        dir,
        "commit-msg",
        "echo 'Reviewed-on: https://review.example/1' >> \"$1\"",
    );
    kams(dir).args(["pin", "-m", "ok"]).assert().success();
    assert!(
        git(dir, &["log", "-1", "--format=%B"]).contains("Reviewed-on: https://review.example/1")
    );

    let before = std::fs::read(dir.join("kams.lock")).unwrap();
    hook(
        dir,
        "commit-msg",
        "echo 'no approvals on Fridays' >&2; exit 1",
    );
    inventory(dir, "mcp-server-time@2026.10.19.json");
    kams(dir)
        .args(["pin", "-m", "again"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("commit-msg hook"));
    assert_eq!(
        std::fs::read(dir.join("kams.lock")).unwrap(),
        before,
        "a refused approval leaves the lock as it was"
    );
    assert_eq!(git(dir, &["rev-list", "--count", "HEAD"]), "1\n");
}

#[test]
fn pin_signs_with_ssh_when_the_user_signs_commits() {
    if std::process::Command::new("ssh-keygen")
        .arg("-?")
        .output()
        .is_err()
    {
        panic!("ssh-keygen is needed for this test (package openssh-client)");
    }
    let repo = repo();
    let dir = repo.path();
    let key = dir.join("signing-key");
    let out = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rita", "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(out.status.success());
    git(dir, &["config", "gpg.format", "ssh"]);
    git(dir, &["config", "user.signingkey", key.to_str().unwrap()]);
    git(dir, &["config", "commit.gpgsign", "true"]);
    let public = std::fs::read_to_string(dir.join("signing-key.pub")).unwrap();
    std::fs::write(dir.join("allowed"), format!("rita@example.com {public}")).unwrap();
    git(
        dir,
        &[
            "config",
            "gpg.ssh.allowedSignersFile",
            dir.join("allowed").to_str().unwrap(),
        ],
    );
    inventory(dir, "mcp-server-time@0.6.2.json");
    kams(dir)
        .args(["pin", "-m", "signed approval"])
        .assert()
        .success();
    git(dir, &["verify-commit", "HEAD"]);
}

#[test]
fn at_reads_the_lock_of_any_revision_without_touching_the_work_tree() {
    let repo = repo();
    let dir = repo.path();
    inventory(dir, "server-memory@0.6.2.json");
    // The approval commit holds the inventory too.
    kams(dir).args(["pin", "-m", "v1"]).assert().success();
    git(dir, &["tag", "v1"]);
    inventory(dir, "server-memory@2026.8.31.json");
    kams(dir).args(["pin", "-m", "v2"]).assert().success();
    let lock_now = std::fs::read(dir.join("kams.lock")).unwrap();

    kams(dir).arg("scan").assert().code(0);
    // What has drifted since the approvals of v1?
    let out = kams(dir)
        .args(["--format", "json", "scan", "--at", "v1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    assert!(report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["class"] == "drift"));
    kams(dir).args(["diff", "--at", "HEAD~1"]).assert().code(1);
    // The committed inventory of v1 against the lock of v1: clean.
    kams(dir)
        .args(["scan", "--at", "v1", "--inventory-at", "v1"])
        .assert()
        .code(0)
        .stdout("no findings\n");
    let out = kams(dir)
        .args([
            "--format",
            "json",
            "status",
            "--at",
            "v1",
            "--inventory-at",
            "v1",
        ])
        .output()
        .unwrap();
    let entries = json(&out.stdout)["entries"].as_array().unwrap().clone();
    assert!(!entries.is_empty() && entries.iter().all(|e| e["status"] == "ok"));
    assert_eq!(
        std::fs::read(dir.join("kams.lock")).unwrap(),
        lock_now,
        "--at never writes the work tree"
    );

    kams(dir)
        .args(["scan", "--at", "no-such-rev"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("names no commit"));
    git(dir, &["rm", "-q", "--cached", "kams.lock"]);
    git(dir, &["commit", "-qm", "drop the lock"]);
    kams(dir)
        .args(["scan", "--at", "HEAD"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "kams.lock does not exist at HEAD",
        ));
}

#[test]
fn at_follows_a_lock_moved_by_config_and_works_from_a_subfolder() {
    let repo = repo();
    let dir = repo.path();
    git(dir, &["config", "kams.lock", "policy/kams.lock"]);
    std::fs::create_dir_all(dir.join("policy")).unwrap();
    inventory(dir, "mcp-server-time@0.6.2.json");
    kams(dir).args(["pin", "-m", "moved"]).assert().success();
    assert_eq!(
        git(dir, &["show", "--name-only", "--format=", "HEAD"]),
        ".kams/inventory/mcp-server-time@0.6.2.json\npolicy/kams.lock\n"
    );
    kams(&dir.join("policy"))
        .args(["status", "--at", "HEAD"])
        .assert()
        .success();
}

#[test]
fn at_outside_a_repository_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    kams(dir.path())
        .args(["--lock", "k.lock", "--inventory"])
        .arg(real("mcp-server-time@0.6.2.json"))
        .args(["scan", "--at", "HEAD"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("git repository"));
}

#[test]
fn pin_commits_on_a_detached_head_and_in_a_linked_worktree() {
    let repo = repo();
    let dir = repo.path();
    std::fs::write(dir.join("f"), "one\n").unwrap();
    git(dir, &["add", "f"]);
    git(dir, &["commit", "-qm", "one"]);
    git(dir, &["checkout", "-q", "--detach"]);
    inventory(dir, "mcp-server-time@0.6.2.json");
    kams(dir).args(["pin", "-m", "detached"]).assert().success();
    assert_eq!(git(dir, &["rev-list", "--count", "HEAD"]), "2\n");
    assert_eq!(
        git(dir, &["rev-list", "--count", "main"]),
        "1\n",
        "the branch stays where it was"
    );
    assert!(git(dir, &["status", "--porcelain", "kams.lock"]).is_empty());

    let linked = dir.join("linked");
    git(
        dir,
        &["worktree", "add", "-q", linked.to_str().unwrap(), "main"],
    );
    inventory(&linked, "mcp-server-time@2026.10.19.json");
    kams(&linked)
        .args(["pin", "-m", "from the worktree"])
        .assert()
        .success();
    assert_eq!(
        git(dir, &["rev-list", "--count", "main"]),
        "2\n",
        "the worktree's branch moved"
    );
    assert_eq!(
        git(&linked, &["show", "--name-only", "--format=", "HEAD"]),
        ".kams/inventory/mcp-server-time@2026.10.19.json\nkams.lock\n"
    );
    assert!(git(&linked, &["status", "--porcelain", "kams.lock"]).is_empty());
}
