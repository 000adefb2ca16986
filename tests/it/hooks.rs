//! The gates: `git kams init` installs the hooks, and real `git push`es
//! through them to a local bare remote are refused for unapproved drift
//! and for approvals without a valid sign-off, and accepted once approved;
//! the bare remote's pre-receive hook refuses what `--no-verify` skipped.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{copy, git, json, kams, real, repo, with_kams_on_path};

/// `program` in `dir`, hermetic, able to run `git kams`: the installed
/// hooks call it.
pub(crate) fn command(program: &Path, dir: &Path) -> Command {
    with_kams_on_path(program, dir)
}

/// Runs git with the hooks able to find `git kams`; stderr and the status
/// are the caller's to judge.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Output {
    command(Path::new("git"), dir)
        .args(args)
        .output()
        .expect("git runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a command printed: git passes a pre-push hook's stdout through to
/// its own, and a pre-receive hook's to the client's stderr.
pub(crate) fn printed(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts that a push was refused, and returns what git printed.
pub(crate) fn refused(dir: &Path, args: &[&str]) -> String {
    let o = run(dir, args);
    let text = printed(&o);
    assert!(
        !o.status.success(),
        "git {args:?} should have been refused:\n{text}"
    );
    text
}

/// Asserts that a push went through, and returns what git printed.
pub(crate) fn accepted(dir: &Path, args: &[&str]) -> String {
    let o = run(dir, args);
    let text = printed(&o);
    assert!(
        o.status.success(),
        "git {args:?} should have been accepted:\n{text}"
    );
    text
}

pub(crate) fn inventory(dir: &Path, file: &str) {
    let _ = std::fs::remove_dir_all(dir.join(".kams/inventory"));
    copy(&real(file), dir, &format!(".kams/inventory/{file}"));
}

/// The commit a ref names in `dir`, or `None`.
pub(crate) fn rev(dir: &Path, name: &str) -> Option<String> {
    let o = run(dir, &["rev-parse", "--verify", "-q", name]);
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A work repository with `git kams init` done and a bare `origin`.
pub(crate) struct Setup {
    work: tempfile::TempDir,
    remote: tempfile::TempDir,
}

impl Setup {
    pub(crate) fn new() -> Setup {
        let work = repo();
        let remote = tempfile::tempdir().unwrap();
        git(remote.path(), &["init", "-q", "--bare", "-b", "main"]);
        git(
            work.path(),
            &["remote", "add", "origin", remote.path().to_str().unwrap()],
        );
        kams(work.path()).arg("init").assert().success();
        Setup { work, remote }
    }

    pub(crate) fn dir(&self) -> &Path {
        self.work.path()
    }

    pub(crate) fn remote(&self) -> &Path {
        self.remote.path()
    }

    /// The first inventory committed and approved (signed off), pushed.
    pub(crate) fn approved() -> Setup {
        let s = Setup::new();
        let d = s.dir();
        inventory(d, "mcp-server-time@0.6.2.json");
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "inventory"]);
        approve(d, "first review");
        accepted(d, &["push", "-q", "origin", "main"]);
        s
    }
}

/// Pins everything without committing, then commits kams.lock signed off.
pub(crate) fn approve(dir: &Path, note: &str) {
    kams(dir)
        .args(["pin", "--no-commit", "-m", note])
        .assert()
        .success();
    git(dir, &["add", "kams.lock"]);
    git(dir, &["commit", "-q", "-s", "-m", &format!("kams: {note}")]);
}

#[test]
fn init_is_idempotent_keeps_the_users_hook_lines_and_honours_hooks_path() {
    let repo = repo();
    let dir = repo.path();
    // No commit yet; the user already has a pre-push hook that reads git's input.
    let hook = dir.join(".git/hooks/pre-push");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        "#!/bin/sh\n# mine\ncat > \"$(git rev-parse --git-dir)/seen\"\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitattributes"), "*.png binary").unwrap();

    let first = kams(dir).arg("init").output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let out = String::from_utf8(first.stdout).unwrap();
    assert!(
        out.contains("updated the pre-push hook in .git/hooks/pre-push"),
        "{out}"
    );
    assert!(
        out.contains("registered `kams.lock merge=kams-lock diff=kams-lock` in .gitattributes"),
        "{out}"
    );
    let once = std::fs::read_to_string(&hook).unwrap();
    let again = kams(dir).arg("init").output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("already installed"));
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        once,
        "a second init changes nothing"
    );
    assert_eq!(once.matches("# >>> git-kams >>>").count(), 1);
    assert!(
        once.starts_with("#!/bin/sh\n# >>> git-kams >>>\n"),
        "{once}"
    );
    assert!(
        once.ends_with("# <<< git-kams <<<\n# mine\ncat > \"$(git rev-parse --git-dir)/seen\"\n"),
        "{once}"
    );
    assert_ne!(
        std::fs::metadata(&hook).unwrap().permissions().mode() & 0o111,
        0
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitattributes")).unwrap(),
        "*.png binary\nkams.lock merge=kams-lock diff=kams-lock\n.kams/inventory/** diff=kams-lock\n"
    );
    assert_eq!(
        git(dir, &["check-attr", "merge", "diff", "--", "kams.lock"]),
        "kams.lock: merge: kams-lock\nkams.lock: diff: kams-lock\n"
    );
    // The drivers the attributes name are configured, once.
    assert_eq!(
        git(dir, &["config", "--local", "--get-regexp", "kams-lock"]),
        "merge.kams-lock.name kams.lock, merged entry by entry by git-kams\n\
         merge.kams-lock.driver git kams merge-driver %O %A %B %P\n\
         diff.kams-lock.textconv git kams textconv\n"
    );

    // The shim checks, then hands git's input on to the user's lines.
    let line = format!(
        "refs/heads/gone {} refs/heads/gone {}\n",
        "0".repeat(40),
        "1".repeat(40)
    );
    let mut child = command(&hook, dir)
        .args(["origin", "/nowhere"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let ran = child.wait_with_output().unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(
        stderr(&ran).contains("git kams pre-push: 0 refs, 0 commits checked"),
        "{}",
        stderr(&ran)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".git/seen")).unwrap(),
        line
    );

    // core.hooksPath, relative to the top of the work tree even from a subfolder.
    git(dir, &["config", "core.hooksPath", ".githooks"]);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let out = kams(&dir.join("sub")).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("installed the pre-push hook in ../.githooks/pre-push"),
        "{text}"
    );
    let shim = std::fs::read_to_string(dir.join(".githooks/pre-push")).unwrap();
    assert!(
        shim.starts_with("#!/bin/sh\n# >>> git-kams >>>\n")
            && shim.contains("git kams hook pre-push \"$@\"")
    );
    assert!(!dir.join("sub/.githooks").exists());
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        once,
        "the old hooks folder is left alone"
    );
}

#[test]
fn a_push_with_unapproved_drift_is_refused_and_accepted_once_approved() {
    let s = Setup::new();
    let d = s.dir();
    inventory(d, "mcp-server-time@0.6.2.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory, no lock"]);
    let text = refused(d, &["push", "origin", "main"]);
    assert!(
        text.contains("refs/heads/main: mcp-server-time/convert_time is new at ")
            && text.contains("kams.lock has no entry for it; fix: git kams pin mcp-server-time/convert_time -m NOTE"),
        "{text}"
    );
    assert_eq!(rev(s.remote(), "main"), None);

    // Recorded, but provisional, is still not approved.
    kams(d).arg("record").assert().success();
    git(d, &["add", "kams.lock"]);
    git(d, &["commit", "-qm", "record what the servers advertise"]);
    let text = refused(d, &["push", "origin", "main"]);
    assert!(
        text.contains("mcp-server-time/get_current_time is recorded but not pinned"),
        "{text}"
    );
    assert!(
        !text.contains("Signed-off-by"),
        "recording needs no sign-off: {text}"
    );

    approve(d, "time server reviewed");
    let text = accepted(d, &["push", "origin", "main"]);
    assert!(
        text.contains("git kams pre-push: 1 ref, 3 commits checked"),
        "{text}"
    );
    assert_eq!(rev(s.remote(), "main"), rev(d, "main"));

    // The server changes what it advertises: drift of pinned entries.
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    let text = refused(d, &["push", "origin", "main"]);
    assert!(
        text.contains("changed at ") && text.contains("since it was pinned (/"),
        "{text}"
    );
    assert_ne!(rev(s.remote(), "main"), rev(d, "main"));
}

#[test]
fn an_approval_without_sign_off_is_refused_and_accepted_once_signed_off() {
    let s = Setup::approved();
    let d = s.dir();
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    kams(d)
        .args(["pin", "--no-commit", "-m", "re-reviewed"])
        .assert()
        .success();
    git(d, &["add", "kams.lock"]);
    git(d, &["commit", "-qm", "approve, forgot -s"]);
    let text = refused(d, &["push", "origin", "main"]);
    let unsigned = rev(d, "HEAD").unwrap();
    assert!(
        text.contains(&format!(
            "refs/heads/main: commit {} re-pinned mcp-server-time/get_current_time without a Signed-off-by trailer; fix: git commit --amend --no-edit --signoff",
            &unsigned[..7]
        )),
        "{text}"
    );
    // The fix the message names works.
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    accepted(d, &["push", "origin", "main"]);
    assert_eq!(rev(s.remote(), "main"), rev(d, "main"));
}

/// A pushed commit judged by what it changed, whose lock cannot be read,
/// stops the push with its name; it is not taken as changing nothing.
#[test]
fn an_unsigned_commit_whose_lock_cannot_be_read_is_named() {
    let s = Setup::approved();
    let d = s.dir();
    let good = std::fs::read(d.join("kams.lock")).unwrap();
    std::fs::write(d.join("kams.lock"), "{ not a lock").unwrap();
    git(d, &["commit", "-qam", "lock edited, no sign-off"]);
    let broken = rev(d, "HEAD").unwrap();
    // Restored on top, signed off: only the commit between is unreadable.
    std::fs::write(d.join("kams.lock"), good).unwrap();
    git(d, &["commit", "-qsam", "kams: lock restored"]);
    let text = refused(d, &["push", "origin", "main"]);
    assert!(
        text.contains(&format!(
            "{}:kams.lock: the lock committed there cannot be read: not valid JSON",
            &broken[..12]
        )),
        "{text}"
    );
    assert_ne!(rev(s.remote(), "main"), rev(d, "main"));
}

/// Capture runs a server without asking when the lock records its launch,
/// so changing a recorded launch is an approval like re-pinning a tool.
#[test]
fn a_launch_changed_without_sign_off_is_refused() {
    let s = Setup::approved();
    let d = s.dir();
    let swap = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains("<INSTALL_DIR>/bin/mcp-server-time"), "{text}");
        std::fs::write(
            file,
            text.replace("<INSTALL_DIR>/bin/mcp-server-time", "/tmp/evil"),
        )
        .unwrap();
    };
    swap(&d.join(".kams/inventory/mcp-server-time@0.6.2.json"));
    swap(&d.join("kams.lock"));
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "run the time server from elsewhere"]);
    let text = refused(d, &["push", "origin", "main"]);
    assert!(
        text.contains("launch changed mcp-server-time without a Signed-off-by trailer"),
        "{text}"
    );
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    accepted(d, &["push", "origin", "main"]);
}

#[test]
fn kams_approvers_decides_whose_sign_off_counts() {
    let s = Setup::approved();
    let d = s.dir();
    git(
        d,
        &[
            "config",
            "kams.approvers",
            "Alice Approver <Alice@Example.com>, bob@example.com",
        ],
    );
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    approve(d, "rita approves");
    let text = refused(d, &["push", "origin", "main"]);
    assert!(
        text.contains("signed off by Rita Reviewer <rita@example.com> only, not an approver (git config kams.approvers); fix: as an approver, git commit --amend --no-edit --signoff"),
        "{text}"
    );
    // An approver signs it off as well.
    git(
        d,
        &[
            "-c",
            "user.name=Alice Approver",
            "-c",
            "user.email=alice@example.com",
            "commit",
            "-q",
            "--amend",
            "--no-edit",
            "--signoff",
        ],
    );
    accepted(d, &["push", "origin", "main"]);
    assert_eq!(rev(s.remote(), "main"), rev(d, "main"));
}

#[test]
fn the_remote_pre_receive_hook_refuses_what_no_verify_skipped() {
    let s = Setup::approved();
    let d = s.dir();
    let out = kams(s.remote()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("installed the pre-receive hook in hooks/pre-receive"));
    assert!(!s.remote().join(".gitattributes").exists());
    let before = rev(s.remote(), "main");

    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update, unapproved"]);
    let text = refused(d, &["push", "--no-verify", "origin", "main"]);
    assert!(
        text.contains("remote: refs/heads/main: mcp-server-time/")
            && text.contains("since it was pinned"),
        "{text}"
    );
    assert!(text.contains("pre-receive hook declined"), "{text}");
    assert_eq!(rev(s.remote(), "main"), before);

    // A forged approval (not an approver's) is refused by the server's policy.
    git(
        s.remote(),
        &["config", "kams.approvers", "alice@example.com"],
    );
    approve(d, "rita approves");
    let text = refused(d, &["push", "--no-verify", "origin", "main"]);
    assert!(
        text.contains("remote: refs/heads/main: commit ") && text.contains("not an approver"),
        "{text}"
    );
    assert_eq!(rev(s.remote(), "main"), before);

    git(
        d,
        &[
            "-c",
            "user.email=alice@example.com",
            "commit",
            "-q",
            "--amend",
            "--no-edit",
            "--signoff",
        ],
    );
    accepted(d, &["push", "--no-verify", "origin", "main"]);
    assert_eq!(rev(s.remote(), "main"), rev(d, "main"));

    // A new branch, a tag, and a deletion on the server side.
    git(d, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(d.join("notes.txt"), "unrelated\n").unwrap();
    git(d, &["add", "notes.txt"]);
    git(d, &["commit", "-qm", "unrelated work"]);
    accepted(
        d,
        &[
            "push",
            "--no-verify",
            "origin",
            "topic",
            "main:refs/tags/v1",
        ],
    );
    accepted(d, &["push", "--no-verify", "origin", "--delete", "topic"]);
    assert_eq!(rev(s.remote(), "topic"), None);
}

#[test]
fn new_branches_tags_deletions_and_force_pushes() {
    let s = Setup::approved();
    let d = s.dir();

    // A new branch: only the commits the remote lacks are checked.
    git(d, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(d.join("notes.txt"), "unrelated\n").unwrap();
    git(d, &["add", "notes.txt"]);
    git(d, &["commit", "-qm", "unrelated work"]);
    let text = accepted(d, &["push", "origin", "topic"]);
    assert!(text.contains("1 ref, 1 commit checked"), "{text}");

    // A new branch with an approval nobody signed off.
    git(d, &["checkout", "-q", "-b", "sneaky"]);
    inventory(d, "mcp-server-time@2026.10.19.json");
    kams(d)
        .args(["pin", "--no-commit", "-m", "quietly"])
        .assert()
        .success();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "update and approve in one go"]);
    let text = refused(d, &["push", "origin", "sneaky"]);
    assert!(
        text.contains("refs/heads/sneaky: commit ")
            && text.contains("without a Signed-off-by trailer"),
        "{text}"
    );
    assert_eq!(rev(s.remote(), "sneaky"), None);

    // Tags: an annotated tag is checked at the commit it points to.
    git(d, &["tag", "-a", "-m", "bad", "v2-bad", "sneaky"]);
    let text = refused(d, &["push", "origin", "v2-bad"]);
    assert!(text.contains("refs/tags/v2-bad: commit "), "{text}");
    git(d, &["tag", "-a", "-m", "good", "v1", "main"]);
    accepted(d, &["push", "origin", "v1"]);
    assert!(rev(s.remote(), "refs/tags/v1").is_some());

    // Deleting a branch brings nothing to check.
    let text = accepted(d, &["push", "origin", "--delete", "topic"]);
    assert!(text.contains("0 refs, 0 commits checked"), "{text}");
    assert_eq!(rev(s.remote(), "topic"), None);

    // A force push is judged by what it brings over what the remote has.
    git(d, &["checkout", "-q", "main"]);
    git(d, &["reset", "-q", "--hard", "HEAD~1"]);
    kams(d)
        .args(["pin", "--no-commit", "-m", "rewritten history"])
        .assert()
        .success();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "approve again, unsigned"]);
    let text = refused(d, &["push", "--force", "origin", "main"]);
    assert!(
        text.contains("refs/heads/main: commit ") && text.contains("pinned mcp-server-time"),
        "{text}"
    );
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    accepted(d, &["push", "--force", "origin", "main"]);
    assert_eq!(rev(s.remote(), "main"), rev(d, "main"));
}

#[test]
fn a_merge_carries_the_approvals_of_its_sides() {
    let s = Setup::approved();
    let d = s.dir();
    git(d, &["checkout", "-q", "-b", "review"]);
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    approve(d, "reviewed on a branch");
    // Meanwhile main approves another server: both sides change kams.lock.
    git(d, &["checkout", "-q", "main"]);
    copy(
        &real("mcp-server-git@0.6.2.json"),
        d,
        ".kams/inventory/mcp-server-git@0.6.2.json",
    );
    git(d, &["add", "-A"]);
    approve(d, "git server reviewed");
    // The merge's lock equals neither parent's, but each entry it changed
    // has the value one side brought, signed off there: it needs no
    // sign-off of its own.
    // (through the merge driver `init` configured, which git runs as `git kams`)
    let merged = run(
        d,
        &["merge", "-q", "--no-ff", "-m", "merge review", "review"],
    );
    assert!(merged.status.success(), "{}", printed(&merged));
    assert_ne!(
        git(d, &["rev-parse", "HEAD:kams.lock"]),
        git(d, &["rev-parse", "HEAD^1:kams.lock"])
    );
    assert_ne!(
        git(d, &["rev-parse", "HEAD:kams.lock"]),
        git(d, &["rev-parse", "HEAD^2:kams.lock"])
    );
    let text = accepted(d, &["push", "origin", "main"]);
    assert!(text.contains("1 ref, 4 commits checked"), "{text}");

    // An "evil" merge that approves something neither side had is judged.
    git(d, &["checkout", "-q", "-b", "other", "HEAD~1"]);
    std::fs::write(d.join("other.txt"), "x\n").unwrap();
    git(d, &["add", "other.txt"]);
    git(d, &["commit", "-qm", "other work"]);
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "--no-commit", "other"]);
    copy(
        &real("mcp-server-fetch@0.6.2.json"),
        d,
        ".kams/inventory/mcp-server-fetch@0.6.2.json",
    );
    kams(d)
        .args(["pin", "--no-commit", "-m", "slipped into a merge"])
        .assert()
        .success();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "merge other"]);
    let text = refused(d, &["push", "origin", "main"]);
    let merge = rev(d, "HEAD").unwrap();
    assert!(
        text.contains(&format!(
            "commit {} pinned mcp-server-fetch/fetch without a Signed-off-by",
            &merge[..7]
        )),
        "{text}"
    );
    assert!(
        !text.contains("mcp-server-time") && !text.contains("mcp-server-git"),
        "what the sides brought is not the merge's: {text}"
    );
    assert!(
        text.contains("git rebase --force-rebase --rebase-merges --signoff"),
        "{text}"
    );
}

#[test]
fn a_push_from_a_linked_worktree_runs_the_shared_hook() {
    let s = Setup::approved();
    let d = s.dir();
    let wt_parent = tempfile::tempdir().unwrap();
    let wt = wt_parent.path().join("wt");
    git(
        d,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    // init from the worktree finds the hook where git runs it: the common dir.
    let out = kams(&wt).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("already installed: the pre-push hook in "),
        "{text}"
    );
    assert!(PathBuf::from(d).join(".git/hooks/pre-push").is_file());

    inventory(&wt, "mcp-server-time@2026.10.19.json");
    git(&wt, &["add", "-A"]);
    git(&wt, &["commit", "-qm", "drift in a worktree"]);
    let text = refused(&wt, &["push", "origin", "wt"]);
    assert!(
        text.contains("refs/heads/wt: mcp-server-time/") && text.contains("since it was pinned"),
        "{text}"
    );
    approve(&wt, "reviewed in the worktree");
    accepted(&wt, &["push", "origin", "wt"]);
    assert_eq!(rev(s.remote(), "wt"), rev(&wt, "HEAD"));
}

#[test]
fn the_hook_reads_stdin_directly_as_ci_would_feed_it() {
    let s = Setup::approved();
    let d = s.dir();
    let tip = rev(d, "main").unwrap();
    let zero = "0".repeat(40);
    // A CI job checks a range as the server would: `old new ref` lines.
    let out = kams(d)
        .args(["--format", "json", "hook", "pre-receive"])
        .write_stdin(format!("{zero} {tip} refs/heads/main\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out.stdout);
    assert_eq!(report["version"], 1);
    assert_eq!(report["problems"].as_array().unwrap().len(), 0);
    // main already names the tip here (not a server): it hides nothing,
    // so the approvals it brings are checked (and pass, signed off).
    assert_eq!(
        report["summary"]["commits"], 2,
        "the commits main brings are checked: {report}"
    );
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .contains("it already names the pushed commit here"),
        "{report}"
    );

    // An unsigned approval on top, checked against what main had.
    inventory(d, "mcp-server-time@2026.10.19.json");
    kams(d)
        .args(["pin", "--no-commit", "-m", "unsigned"])
        .assert()
        .success();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "unsigned approval"]);
    let new = rev(d, "HEAD").unwrap();
    let out = kams(d)
        .args(["--format", "json", "hook", "pre-receive"])
        .write_stdin(format!("{tip} {new} refs/heads/main\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    let problems = report["problems"].as_array().unwrap();
    assert!(!problems.is_empty());
    assert!(
        problems
            .iter()
            .all(|p| p["rules"][0] == "sign-off" && p["commit"] == new.as_str()),
        "{report}"
    );
    assert_eq!(problems[0]["server"], "mcp-server-time");
    assert_eq!(report["summary"]["commits"], 1);

    // kams.requireSigned: an unsigned commit fails, and says so.
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    let new = rev(d, "HEAD").unwrap();
    git(d, &["config", "kams.requireSigned", "true"]);
    let out = kams(d)
        .args(["hook", "pre-receive"])
        .write_stdin(format!("{tip} {new} refs/heads/main\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "a hook speaks on stderr");
    let text = stderr(&out);
    assert!(
        text.contains(
            "without a signature (kams.requireSigned); fix: git commit --amend --no-edit -S"
        ),
        "{text}"
    );
    assert!(
        stderr(&out).contains("gpg.ssh.allowedSignersFile is not set"),
        "{}",
        stderr(&out)
    );

    // Garbage on stdin is an input error, not a refusal by rule.
    kams(d)
        .args(["hook", "pre-push", "origin", "url"])
        .write_stdin("not a ref line\n")
        .assert()
        .code(2);
    // A commit the repository does not have cannot be judged: refused.
    let missing = "1".repeat(40);
    kams(d)
        .args(["hook", "pre-receive"])
        .write_stdin(format!("{tip} {missing} refs/heads/main\n"))
        .assert()
        .code(2);
}

#[test]
fn no_committed_inventory_skips_the_drift_check_with_a_note_and_a_shallow_clone_stops_at_its_boundary(
) {
    let s = Setup::new();
    let d = s.dir();
    std::fs::write(d.join("README"), "no inventory here\n").unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "start"]);
    let text = accepted(d, &["push", "origin", "main"]);
    assert!(
        text.contains("no inventory is committed at ")
            && text.contains("the drift check is skipped")
            && text.contains("git kams pin -m NOTE"),
        "{text}"
    );

    inventory(d, "mcp-server-time@0.6.2.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory"]);
    approve(d, "reviewed");
    accepted(d, &["push", "origin", "main"]);

    // A shallow clone of depth 1 pushes a new branch with no remote-tracking
    // history below its boundary.
    let clone_parent = tempfile::tempdir().unwrap();
    let url = format!("file://{}", s.remote().display());
    git(
        clone_parent.path(),
        &["clone", "-q", "--depth", "1", &url, "c"],
    );
    let c = clone_parent.path().join("c");
    git(&c, &["config", "user.name", "Rita Reviewer"]);
    git(&c, &["config", "user.email", "rita@example.com"]);
    kams(&c).arg("init").assert().success();
    std::fs::write(c.join("notes.txt"), "from a shallow clone\n").unwrap();
    git(&c, &["add", "notes.txt"]);
    git(&c, &["commit", "-qm", "work"]);
    let text = accepted(&c, &["push", "origin", "HEAD:refs/heads/from-shallow"]);
    assert!(text.contains("1 ref, 1 commit checked"), "{text}");
    // Without the remote-tracking refs, the walk reaches the boundary and stops there.
    git(&c, &["update-ref", "-d", "refs/remotes/origin/main"]);
    let _ = run(&c, &["update-ref", "-d", "refs/remotes/origin/HEAD"]);
    let text = accepted(&c, &["push", "origin", "HEAD:refs/heads/from-shallow-2"]);
    assert!(text.contains("shallow clone"), "{text}");
    assert!(text.contains("beyond the shallow boundary"), "{text}");
}

#[test]
fn a_lock_moved_by_config_and_a_push_from_a_detached_head() {
    let s = Setup::new();
    let d = s.dir();
    git(d, &["config", "kams.lock", "approvals/mcp.lock"]);
    let out = kams(d).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(d.join(".gitattributes"))
        .unwrap()
        .contains("approvals/mcp.lock merge=kams-lock diff=kams-lock\n"));
    inventory(d, "mcp-server-time@0.6.2.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory"]);
    // A kams.lock at the default place approves nothing: the config names another.
    kams(d)
        .args([
            "--lock",
            "kams.lock",
            "pin",
            "--no-commit",
            "-m",
            "wrong file",
        ])
        .assert()
        .success();
    git(d, &["add", "kams.lock"]);
    git(
        d,
        &["commit", "-q", "-s", "-m", "a lock git-kams does not read"],
    );
    git(d, &["checkout", "-q", "--detach"]);
    let text = refused(d, &["push", "origin", "HEAD:refs/heads/main"]);
    assert!(
        text.contains("approvals/mcp.lock does not exist at ")
            && text.contains("approvals/mcp.lock has no entry for it"),
        "{text}"
    );
    // (pin does not create the lock's folder.)
    std::fs::create_dir_all(d.join("approvals")).unwrap();
    kams(d)
        .args(["pin", "--no-commit", "-m", "reviewed"])
        .assert()
        .success();
    assert!(d.join("approvals/mcp.lock").is_file());
    git(d, &["add", "approvals/mcp.lock"]);
    git(d, &["commit", "-q", "-m", "approve, unsigned"]);
    let text = refused(d, &["push", "origin", "HEAD:refs/heads/main"]);
    assert!(
        text.contains("pinned mcp-server-time/convert_time without a Signed-off-by"),
        "{text}"
    );
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    accepted(d, &["push", "origin", "HEAD:refs/heads/main"]);
    assert_eq!(rev(s.remote(), "main"), rev(d, "HEAD"));
}

/// Issue 22, case 6: a link in the committed inventory (the `.kams`
/// folder, an inventory file) or at the lock's path was "no inventory is
/// committed" to the hook, which skipped the drift check, while a checkout
/// follows the link and scans what it points to. The pre-receive hook now
/// refuses the push (exit 2: the commit cannot be read as git-kams reads
/// it), and so does the scan of such a work tree.
#[test]
fn a_symlink_in_the_committed_inventory_or_at_the_lock_is_refused_by_the_hook() {
    let s = Setup::approved();
    let d = s.dir();
    let out = kams(s.remote()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let before = rev(s.remote(), "main");

    // `.kams` as a link to a folder of the work tree holding a drifted
    // inventory: the checkout scans it, the hook found no `.kams` folder.
    std::fs::rename(d.join(".kams"), d.join("elsewhere")).unwrap();
    std::fs::remove_file(d.join("elsewhere/inventory/mcp-server-time@0.6.2.json")).unwrap();
    copy(
        &real("mcp-server-time@2026.10.19.json"),
        d,
        "elsewhere/inventory/mcp-server-time@2026.10.19.json",
    );
    std::os::unix::fs::symlink("elsewhere", d.join(".kams")).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory moved behind a link"]);
    let out = kams(d).args(["scan"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(".kams: a folder on the way to ") && err.contains("is a symbolic link"),
        "{err}"
    );
    let text = refused(d, &["push", "--no-verify", "origin", "main"]);
    assert!(
        text.contains(".kams at commit ")
            && text.contains("is a symbolic link, where a folder on the way to an inventory"),
        "{text}"
    );
    assert!(!text.contains("drift check is skipped"), "{text}");
    assert_eq!(rev(s.remote(), "main"), before);

    // An inventory file that is a link.
    std::fs::remove_file(d.join(".kams")).unwrap();
    std::fs::create_dir_all(d.join(".kams/inventory")).unwrap();
    std::os::unix::fs::symlink(
        "../../elsewhere/inventory/mcp-server-time@2026.10.19.json",
        d.join(".kams/inventory/time.json"),
    )
    .unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory file as a link"]);
    let out = kams(d).args(["scan"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("time.json: is a symbolic link (to ../../elsewhere/"),
        "{err}"
    );
    let text = refused(d, &["push", "--no-verify", "origin", "main"]);
    assert!(
        text.contains(".kams/inventory/time.json at commit ")
            && text.contains("is a symbolic link, where an inventory file"),
        "{text}"
    );
    assert_eq!(rev(s.remote(), "main"), before);

    // The lock as a link, to a lock that approves the drifted inventory.
    std::fs::remove_file(d.join(".kams/inventory/time.json")).unwrap();
    copy(
        &real("mcp-server-time@2026.10.19.json"),
        d,
        ".kams/inventory/mcp-server-time@2026.10.19.json",
    );
    std::fs::remove_dir_all(d.join("elsewhere")).unwrap();
    std::fs::rename(d.join("kams.lock"), d.join("other.lock")).unwrap();
    kams(d)
        .args(["--lock", "other.lock", "pin", "--no-commit", "-m", "mine"])
        .assert()
        .success();
    std::os::unix::fs::symlink("other.lock", d.join("kams.lock")).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-s", "-m", "lock behind a link"]);
    let out = kams(d).args(["status"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("kams.lock: is a symbolic link (to other.lock)"),
        "{err}"
    );
    let text = refused(d, &["push", "--no-verify", "origin", "main"]);
    assert!(
        text.contains("kams.lock at commit ")
            && text.contains("is a symbolic link, where the lock"),
        "{text}"
    );
    assert_eq!(rev(s.remote(), "main"), before);
}

#[test]
fn a_tag_of_a_tree_or_a_blob_is_refused_by_the_remote_hook() {
    let s = Setup::approved();
    let d = s.dir();
    let out = kams(s.remote()).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // A tree holding an unapproved inventory, never committed.
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    let tree = git(d, &["write-tree"]).trim().to_string();
    let blob = git(d, &["rev-parse", "HEAD:kams.lock"]).trim().to_string();
    git(d, &["tag", "-a", "-m", "a tree", "annotated-tree", &tree]);
    for (spec, kind) in [
        (format!("{tree}:refs/tags/tree"), "tree"),
        (format!("{blob}:refs/tags/blob"), "blob"),
        ("annotated-tree".to_string(), "tree"),
    ] {
        let text = refused(d, &["push", "--no-verify", "origin", &spec]);
        assert!(
            text.contains(&format!("is a {kind}, not a commit (nor a tag of one)"))
                && text.contains("pre-receive hook declined"),
            "{spec}: {text}"
        );
    }
    assert_eq!(rev(s.remote(), "refs/tags/tree"), None);
    // The JSON report names the rule.
    let z = "0".repeat(40);
    let out = kams(d)
        .args(["--format", "json", "hook", "pre-receive"])
        .write_stdin(format!("{z} {tree} refs/tags/tree\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    assert_eq!(report["problems"][0]["rules"][0], "not-a-commit");
    // A deletion brings nothing, whatever the ref named.
    let old = git(s.remote(), &["rev-parse", "main^{tree}"])
        .trim()
        .to_string();
    git(s.remote(), &["update-ref", "refs/tags/old-tree", &old]);
    accepted(
        d,
        &[
            "push",
            "--no-verify",
            "origin",
            "--delete",
            "refs/tags/old-tree",
        ],
    );
}

/// Issue 23, item 6: git passes a pre-push hook's stdout through to its
/// own, so `git push --porcelain` (read by tools) got the hook's problem
/// lines mixed in, and `git push 2>log` lost them.
#[test]
fn a_refusing_hook_speaks_on_stderr_only() {
    let s = Setup::approved();
    let d = s.dir();
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update, unapproved"]);
    let o = run(d, &["push", "--porcelain", "origin", "main"]);
    assert!(!o.status.success(), "{}", printed(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        !stdout.contains("since it was pinned") && !stdout.contains("fix:"),
        "{stdout}"
    );
    assert!(
        stderr(&o).contains("since it was pinned (")
            && stderr(&o).contains("; fix: git kams pin mcp-server-time/"),
        "{}",
        stderr(&o)
    );
    // The JSON document keeps stdout.
    let head = rev(d, "HEAD").unwrap();
    let out = kams(d)
        .args(["--format", "json", "hook", "pre-receive"])
        .write_stdin(format!("{} {head} refs/heads/main\n", "0".repeat(40)))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(json(&out.stdout)["problems"]
        .as_array()
        .is_some_and(|p| !p.is_empty()));
}
