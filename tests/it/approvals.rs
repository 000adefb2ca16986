//! Approvals that cannot be walked around (issue 22): a launch, first or
//! changed, is an approval the hooks ask a sign-off for, and that capture
//! looks for in git before it runs anything; a merge that takes an old
//! value back from a parent that merely still has it is a rollback, and
//! needs a sign-off of its own. Every case goes through a real bare remote
//! with the pre-receive hook installed, and real processes.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json as value, Value};

use crate::common::{copy, git, kams, real, repo};
use crate::hooks::{printed, run};

/// A work repository and a bare `origin` whose pre-receive hook is
/// installed and whose only approver is Rita (the work repository's user).
pub(crate) struct Remote {
    work: tempfile::TempDir,
    bare: tempfile::TempDir,
}

impl Remote {
    pub(crate) fn new() -> Remote {
        let work = repo();
        let bare = tempfile::tempdir().unwrap();
        git(bare.path(), &["init", "-q", "--bare", "-b", "main"]);
        let o = kams(bare.path()).arg("init").output().unwrap();
        assert!(o.status.success(), "{}", printed(&o));
        git(
            bare.path(),
            &["config", "kams.approvers", "rita@example.com"],
        );
        git(
            work.path(),
            &["remote", "add", "origin", bare.path().to_str().unwrap()],
        );
        Remote { work, bare }
    }

    pub(crate) fn dir(&self) -> &Path {
        self.work.path()
    }

    /// Pushes `main` past any client hook; returns whether the server
    /// took it, and what it said.
    pub(crate) fn push(&self) -> (bool, String) {
        let o = run(self.dir(), &["push", "--no-verify", "origin", "main"]);
        (o.status.success(), printed(&o))
    }

    fn remote_main(&self) -> Option<String> {
        let o = run(self.bare.path(), &["rev-parse", "--verify", "-q", "main"]);
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    }
}

/// A client config entry that, when run, writes `marker`: the attack of
/// case 1.
fn pwned_entry(marker: &Path) -> Value {
    value!({"command": "sh", "args": ["-c", format!("echo PWNED > {}", marker.display())]})
}

/// The launch `capture` compares with the lock for a config `entry`.
pub(crate) fn spec(entry: &Value) -> Value {
    let mut argv = vec![entry["command"].clone()];
    argv.extend(entry["args"].as_array().cloned().unwrap_or_default());
    value!({ "command": argv })
}

fn write_config(dir: &Path, servers: &[(&str, &Value)]) {
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(n, e)| (n.to_string(), (*e).clone()))
        .collect();
    std::fs::write(
        dir.join(".mcp.json"),
        serde_json::to_string_pretty(&value!({ "mcpServers": map })).unwrap(),
    )
    .unwrap();
}

/// Writes `launch` for `server` into kams.lock by hand, as a contributor
/// could: the lock's text alone must approve nothing.
pub(crate) fn write_launch(dir: &Path, server: &str, launch: &Value) {
    let path = dir.join("kams.lock");
    let mut lock: Value = match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b).unwrap(),
        Err(_) => value!({"version": 1, "servers": {}}),
    };
    let servers = lock["servers"].as_object_mut().unwrap();
    let slot = servers
        .entry(server.to_string())
        .or_insert_with(|| value!({"tools": {}}));
    slot["launch"] = launch.clone();
    // The lock's keys in its own order (serde_json would sort them).
    let text = format!(
        "{{\"version\": {}, \"servers\": {}}}\n",
        lock["version"],
        serde_json::to_string_pretty(&lock["servers"]).unwrap()
    );
    std::fs::write(&path, text).unwrap();
}

/// `git commit -a` of everything, signed off or not.
pub(crate) fn commit(dir: &Path, message: &str, signoff: bool) {
    git(dir, &["add", "-A"]);
    let mut args = vec!["commit", "-q", "-m", message];
    if signoff {
        args.push("--signoff");
    }
    git(dir, &args);
}

/// Runs `git kams ARGS` with no terminal (stdin closed).
fn kams_no_tty(dir: &Path, args: &[&str]) -> Output {
    kams(dir)
        .args(args)
        .write_stdin("")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

/// The attack of case 3: an unsigned merge of `newer` and `older` (an
/// ancestor of it) whose tree is `older`'s, checked out; its id.
fn rollback_merge(dir: &Path, newer: &str, older: &str) -> String {
    let m = git(
        dir,
        &[
            "commit-tree",
            "-p",
            newer,
            "-p",
            older,
            "-m",
            "Merge old work",
            &format!("{older}^{{tree}}"),
        ],
    );
    let m = m.trim().to_string();
    git(dir, &["reset", "-q", "--hard", &m]);
    m
}

fn marker() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("pwned");
    (d, m)
}

#[test]
fn an_unsigned_commit_cannot_make_capture_run_a_command() {
    let r = Remote::new();
    let d = r.dir();
    std::fs::write(d.join("README"), "project\n").unwrap();
    commit(d, "start", true);
    assert!(r.push().0);

    let (_keep, marker) = marker();
    let entry = pwned_entry(&marker);
    write_config(d, &[("helper", &entry)]);
    write_launch(d, "helper", &spec(&entry));
    commit(d, "add a helper server", false);

    // The server refuses the push: a first launch is an approval.
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(
        said.contains("launch recorded helper") && said.contains("without a Signed-off-by"),
        "{said}"
    );

    // Had it landed anyway (a remote without the hook), capture asks and,
    // with no terminal, runs nothing.
    for args in [&["capture"][..], &["scan", "--capture"][..]] {
        let o = kams_no_tty(d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", printed(&o));
        let said = printed(&o);
        assert!(
            said.contains("not approved: its launch was recorded by commit")
                && said.contains("without a Signed-off-by trailer"),
            "{said}"
        );
        assert!(!marker.exists(), "{args:?} ran the unapproved command");
    }

    // status lists the launch, and says why it is not approved.
    std::fs::create_dir_all(d.join(".kams/inventory")).unwrap();
    std::fs::write(d.join(".kams/inventory/none.json"), r#"{"servers": []}"#).unwrap();
    let o = kams_no_tty(d, &["status"]);
    let said = printed(&o);
    assert!(
        said.lines().any(|l| l.starts_with("unapproved")
            && l.contains("helper (launch): its launch was recorded by commit")),
        "{said}"
    );

    // A sign-off by somebody who is not an approver (here) approves nothing either.
    git(d, &["config", "kams.approvers", "alice@example.com"]);
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    let o = kams_no_tty(d, &["capture"]);
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(printed(&o).contains("not an approver"), "{}", printed(&o));
    assert!(!marker.exists());

    // Signed off by an approver: the hook takes it, and capture runs it.
    git(d, &["config", "--unset", "kams.approvers"]);
    let (ok, said) = r.push();
    assert!(ok, "{said}");
    let o = kams_no_tty(d, &["capture"]);
    assert!(marker.exists(), "{}", printed(&o));
    let o = kams_no_tty(d, &["status"]);
    assert!(
        printed(&o)
            .lines()
            .any(|l| l.starts_with("approved") && l.ends_with("helper (launch)")),
        "{}",
        printed(&o)
    );
}

#[test]
fn an_uncommitted_or_changed_launch_is_not_approved() {
    let r = Remote::new();
    let d = r.dir();
    let (_keep, marker) = marker();
    let entry = pwned_entry(&marker);
    write_config(d, &[("helper", &entry)]);
    write_launch(d, "helper", &spec(&entry));
    let o = kams_no_tty(d, &["capture"]);
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(
        printed(&o).contains("not in a git history") || printed(&o).contains("not committed"),
        "{}",
        printed(&o)
    );
    commit(d, "helper", true);
    assert!(r.push().0);

    // The config now runs something else than the approved launch.
    let (_keep2, other) = self::marker();
    let changed = pwned_entry(&other);
    write_config(d, &[("helper", &changed)]);
    let o = kams_no_tty(d, &["capture"]);
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(
        printed(&o).contains("records another launch"),
        "{}",
        printed(&o)
    );
    // And the lock edited in the work tree but not committed.
    write_launch(d, "helper", &spec(&changed));
    let o = kams_no_tty(d, &["capture"]);
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(printed(&o).contains("not committed"), "{}", printed(&o));
    assert!(!other.exists());

    // Changed by an unsigned commit: the hook refuses, capture asks.
    commit(d, "helper v2", false);
    let (ok, said) = r.push();
    assert!(!ok && said.contains("launch changed helper"), "{said}");
    let o = kams_no_tty(d, &["capture"]);
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(!other.exists());
}

#[test]
fn an_unsigned_merge_cannot_roll_a_launch_back() {
    let r = Remote::new();
    let d = r.dir();
    let (_keep, old) = marker();
    let (_keep2, new) = marker();
    let (v1, v2) = (pwned_entry(&old), pwned_entry(&new));
    write_config(d, &[("helper", &v1)]);
    write_launch(d, "helper", &spec(&v1));
    commit(d, "B: helper v1", true);
    let b = git(d, &["rev-parse", "HEAD"]).trim().to_string();
    write_config(d, &[("helper", &v2)]);
    write_launch(d, "helper", &spec(&v2));
    commit(d, "C: helper v2", true);
    assert!(r.push().0);

    let m = rollback_merge(d, "HEAD", &b);
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(said.contains("launch changed helper"), "{said}");

    let o = kams_no_tty(d, &["capture"]);
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(
        printed(&o).contains("recorded by commit") && printed(&o).contains(&m.trim()[..7]),
        "{}",
        printed(&o)
    );
    assert!(!old.exists());
}

/// The time server's capture `file` in the inventory, pinned and
/// committed signed off as `message`; the commit's id.
fn pin_version(dir: &Path, file: &str, message: &str) -> String {
    copy(&real(file), dir, ".kams/inventory/time.json");
    kams(dir)
        .args(["pin", "--no-commit", "-m", message])
        .assert()
        .success();
    commit(dir, message, true);
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

/// The time server pinned (v1) and re-pinned (v2), both signed off and pushed.
fn pinned_twice(r: &Remote) -> (String, String) {
    let d = r.dir();
    let b = pin_version(d, "mcp-server-time@0.6.2.json", "B: pin v1");
    let c = pin_version(d, "mcp-server-time@2026.10.19.json", "C: re-pin v2");
    let (ok, said) = r.push();
    assert!(ok, "{said}");
    (b, c)
}

#[test]
fn an_unsigned_merge_cannot_roll_an_approval_back() {
    let r = Remote::new();
    let d = r.dir();
    let (b, c) = pinned_twice(&r);
    let m = rollback_merge(d, &c, &b);
    let m = m.as_str();
    let before = r.remote_main();
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("commit {}", &m[..7]))
            && said.contains("re-pinned mcp-server-time/")
            && said.contains("without a Signed-off-by"),
        "{said}"
    );
    assert_eq!(r.remote_main(), before);

    // log and blame show the rollback, where git's history simplification
    // (the merge's lock is B's) would hide it and the v2 re-pin.
    let o = kams_no_tty(d, &["log"]);
    let log = printed(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains(&m[..7]), "the merge is listed: {log}");
    assert!(log.contains(&c[..7]), "the v2 re-pin is listed: {log}");
    let o = kams_no_tty(d, &["blame", "mcp-server-time/get_current_time"]);
    let blame = printed(&o);
    assert!(o.status.success(), "{blame}");
    assert!(
        blame.contains(&m[..7]),
        "the merge approved v1 again: {blame}"
    );
}

#[test]
fn a_merge_of_a_branch_that_approved_needs_no_second_sign_off() {
    let r = Remote::new();
    let d = r.dir();
    pin_version(d, "mcp-server-time@0.6.2.json", "pin v1");
    assert!(r.push().0);
    // A branch re-pins (signed off); main moves on elsewhere; an unsigned merge.
    git(d, &["checkout", "-q", "-b", "topic"]);
    pin_version(d, "mcp-server-time@2026.10.19.json", "re-pin v2");
    git(d, &["checkout", "-q", "main"]);
    std::fs::write(d.join("NOTES"), "other work\n").unwrap();
    commit(d, "other work", false);
    git(d, &["merge", "-q", "--no-ff", "--no-edit", "topic"]);
    let (ok, said) = r.push();
    assert!(ok, "{said}");
}

#[test]
fn a_redacted_value_cannot_hide_a_launch_change() {
    let r = Remote::new();
    let d = r.dir();
    let capture = |prefix: &str| {
        let mut c: Value = serde_json::from_slice(
            &std::fs::read(real("mcp-server-time@2026.10.19.json")).unwrap(),
        )
        .unwrap();
        c["env"] = value!({ "BASH_ENV": format!("{prefix} api_key=Zk8c2LqP9xVb4RtY7w") });
        let to = d.join(".kams/inventory/time.json");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, serde_json::to_vec_pretty(&c).unwrap()).unwrap();
    };
    capture("/dev/null");
    // The inline secret is what this test is about: accepted.
    kams(d)
        .args(["pin", "--no-commit", "-m", "reviewed", "--accept-findings"])
        .assert()
        .success();
    commit(d, "approve time", true);
    let (ok, said) = r.push();
    assert!(ok, "{said}");
    let lock = std::fs::read_to_string(d.join("kams.lock")).unwrap();
    assert!(!lock.contains("Zk8c2LqP9xVb4RtY7w"), "{lock}");
    assert!(
        lock.contains(r#""BASH_ENV":"/dev/null api_key=<redacted sha256:"#),
        "{lock}"
    );

    // An unsigned commit changes what runs around the secret.
    capture("$(echo PWNED > /tmp/kams-pwned)");
    // pin itself now shows the change (issue 23); accepted regardless, the
    // hook must still catch an approval nobody signed off.
    kams(d)
        .args(["pin", "--no-commit", "-m", "looks the same"])
        .assert()
        .code(1);
    kams(d)
        .args([
            "pin",
            "--no-commit",
            "-m",
            "looks the same",
            "--accept-findings",
        ])
        .assert()
        .success();
    commit(d, "refresh", false);
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(said.contains("launch changed mcp-server-time"), "{said}");
}

#[test]
fn secrets_in_arguments_and_urls_never_reach_a_capture_or_the_lock() {
    // Issue 22, case 9: a `ghp_...` argument, from a --config outside the
    // repository, was copied verbatim into the capture file and the lock.
    let repo = repo();
    let d = repo.path();
    let outside = tempfile::tempdir().unwrap();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_server.py");
    let config = outside.path().join("claude_desktop_config.json");
    std::fs::write(
        &config,
        serde_json::to_string(&value!({"mcpServers": {"notes": {
            "command": "python3",
            "args": [fixture.to_str().unwrap(), "ok", "--token", token]
        }}}))
        .unwrap(),
    )
    .unwrap();
    let o = kams(d)
        .args(["capture", "--yes", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", printed(&o));
    let captured = std::fs::read_to_string(d.join(".kams/inventory/notes.json")).unwrap();
    assert!(!captured.contains(token), "{captured}");
    assert!(
        captured.contains("\"--token\",\"<redacted sha256:"),
        "{captured}"
    );
    // Nor does any report of it.
    let o = kams(d)
        .args(["--format", "json", "scan", "--fail-on", "never"])
        .output()
        .unwrap();
    assert!(!printed(&o).contains(token), "{}", printed(&o));
    // The URL form: userinfo and a secret query value.
    let url = format!(
        "http://alice:s3cr3tpass@127.0.0.1:9/mcp?api_key=sk-live-{}",
        "0".repeat(24)
    );
    write_config(d, &[("web", &value!({"type": "http", "url": url}))]);
    let o = kams_no_tty(d, &["capture"]);
    let said = printed(&o);
    assert!(
        !said.contains("s3cr3tpass") && !said.contains("sk-live"),
        "{said}"
    );
}

/// Issue 23, item 4: after `pin`, the push was refused, and the fix it
/// printed (`git kams pin SERVER/TOOL -m NOTE`) said "nothing to pin": pin
/// committed only kams.lock, and the hooks compare the committed inventory.
#[test]
fn after_pin_the_push_passes_and_every_fix_the_hook_prints_works() {
    let r = Remote::new();
    let d = r.dir();
    kams(d).arg("init").assert().success();
    std::fs::write(d.join("README"), "project\n").unwrap();
    commit(d, "start", true);
    assert!(r.push().0);

    // The first day: capture (here: a capture file), pin, push.
    copy(
        &real("mcp-server-time@0.6.2.json"),
        d,
        ".kams/inventory/time.json",
    );
    kams(d).args(["pin", "-m", "reviewed"]).assert().success();
    assert_eq!(
        git(d, &["show", "--name-only", "--format=", "HEAD"]),
        ".kams/inventory/time.json\nkams.lock\n",
        "the approval commit holds what the hooks check"
    );
    let o = run(d, &["push", "origin", "main"]);
    assert!(o.status.success(), "{}", printed(&o));

    // An approval that committed the lock alone (as pin used to): refused,
    // and the printed fix, followed literally, makes the push pass.
    copy(
        &real("mcp-server-time@2026.10.19.json"),
        d,
        ".kams/inventory/time.json",
    );
    kams(d)
        .args(["pin", "--no-commit", "-m", "v2"])
        .assert()
        .success();
    git(d, &["commit", "-q", "-s", "-m", "approve v2", "kams.lock"]);
    let o = run(d, &["push", "origin", "main"]);
    let said = printed(&o);
    assert!(!o.status.success(), "{said}");
    let fixes: Vec<String> = said
        .lines()
        .filter_map(|l| l.split_once("; fix: ").map(|(_, f)| f.to_string()))
        .collect();
    assert!(!fixes.is_empty(), "{said}");
    for fix in &fixes {
        let words: Vec<&str> = fix.split_whitespace().collect();
        assert_eq!(&words[..3], ["git", "kams", "pin"], "{fix}");
        let args: Vec<&str> = words[2..]
            .iter()
            .map(|w| {
                if *w == "NOTE" {
                    "following the hook's fix"
                } else {
                    w
                }
            })
            .collect();
        let o = kams(d).args(&args).output().unwrap();
        assert!(o.status.success(), "{fix}: {}", printed(&o));
    }
    let o = run(d, &["push", "origin", "main"]);
    assert!(o.status.success(), "{}", printed(&o));
    assert!(git(d, &["status", "--porcelain"]).is_empty());
}
