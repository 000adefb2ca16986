//! `git kams review` through a real pseudo-terminal: keys are typed, the
//! screen is read back, and the commit it makes is looked at with git.
//!
//! The terminal is opened with libc (`posix_openpt`), already a
//! dependency of the crate: a pty crate (rexpect, expectrl, portable-pty)
//! would add a dozen crates to build for what is forty lines here, and a
//! Python driver would split each test across two languages.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{git, hermetic_command, kams, repo, text};

/// A run of the binary on a pseudo-terminal (stdin and stdout; stderr is
/// a pipe, so that progress lines stay out of the screen).
pub(crate) struct Session {
    master: std::fs::File,
    child: Child,
    screen: Arc<Mutex<Vec<u8>>>,
    /// How much of the screen [`Session::expect`] has passed.
    seen: usize,
}

impl Session {
    pub(crate) fn spawn(dir: &Path, args: &[&str]) -> Session {
        // SAFETY: plain libc calls on a descriptor this function owns.
        let (master, slave) = unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(m >= 0, "posix_openpt");
            assert_eq!(libc::grantpt(m), 0, "grantpt");
            assert_eq!(libc::unlockpt(m), 0, "unlockpt");
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
            let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            assert!(s >= 0, "open the pty's slave");
            (std::fs::File::from_raw_fd(m), OwnedFd::from_raw_fd(s))
        };
        let mut cmd = hermetic_command(env!("CARGO_BIN_EXE_git-kams"), dir);
        cmd.args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave))
            .stderr(Stdio::piped());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                // A session of its own, with the pty as its terminal.
                libc::setsid();
                libc::ioctl(0, libc::TIOCSCTTY, 0);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("git-kams runs");
        // The parent's copies of the slave went with `cmd`.
        drop(cmd);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let into = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the child has closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Session {
            master,
            child,
            screen,
            seen: 0,
        }
    }

    /// The screen so far, as a reader sees it (the terminal's CR LF as LF).
    pub(crate) fn text(&self) -> String {
        text(&self.screen.lock().unwrap()).replace("\r\n", "\n")
    }

    /// Waits until `needle` appears after what was expected before; the
    /// screen from there to its end.
    pub(crate) fn expect(&mut self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let all = self.text();
            if let Some(at) = all[self.seen..].find(needle) {
                let got = all[self.seen..].to_string();
                self.seen += at + needle.len();
                return got;
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!("`{needle}` never came; the screen:\n{all}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `line` and Enter.
    pub(crate) fn send(&mut self, line: &str) {
        self.master
            .write_all(format!("{line}\n").as_bytes())
            .unwrap();
    }

    /// Waits for the end: the exit code, the whole screen, and stderr.
    pub(crate) fn finish(mut self) -> (Option<i32>, String, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = self.child.kill();
                panic!("review did not end; the screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        // What the child wrote last is read by the thread: let it drain.
        std::thread::sleep(Duration::from_millis(200));
        (status.code(), self.text(), err)
    }
}

pub(crate) const PROMPT: &str = "[a,s,d,b,q,?]? ";

/// The tool `read_file`'s description after the upgrade: a zero-width
/// space and an escape sequence that would turn the terminal red.
const DRIFTED: &str = "Read a file\u{200b} from \u{1b}[31manywhere.";

fn write_inventory(dir: &Path, tools: serde_json::Value) {
    let inv = serde_json::json!({
        "server": "files",
        "transport": "stdio",
        "command": ["files-server", "/srv"],
        "tools": tools,
    });
    std::fs::create_dir_all(dir.join(".kams/inventory")).unwrap();
    std::fs::write(
        dir.join(".kams/inventory/files.json"),
        serde_json::to_string_pretty(&inv).unwrap(),
    )
    .unwrap();
}

fn tool(name: &str, description: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    })
}

/// A repository whose lock pins `files` with `read_file` and `write_file`,
/// committed; then the server's upgrade in the work tree: `read_file`
/// drifted, `delete_file` new. review shows `files/delete_file` first.
fn upgraded() -> tempfile::TempDir {
    let r = repo();
    let d = r.path();
    write_inventory(
        d,
        serde_json::json!([
            tool("read_file", "Read a file."),
            tool("write_file", "Write a file.")
        ]),
    );
    let o = kams(d)
        .args(["pin", "-m", "first review"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    write_inventory(
        d,
        serde_json::json!([
            tool("delete_file", "Delete a file."),
            tool("read_file", DRIFTED),
            tool("write_file", "Write a file.")
        ]),
    );
    r
}

/// The lock's entry for `files/TOOL`.
fn locked(dir: &Path, tool: &str) -> serde_json::Value {
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("kams.lock")).unwrap()).unwrap();
    lock["servers"]["files"]["tools"][tool].clone()
}

fn commits(dir: &Path) -> usize {
    git(dir, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn review_approving_one_entry_and_skipping_another_commits_only_the_approved_one() {
    let r = upgraded();
    let d = r.path();
    let before = locked(d, "read_file");
    let mut s = Session::spawn(d, &["review"]);
    s.expect("note for the approvals");
    s.send("weekly upgrade");
    s.expect(&format!("(1/2) approve this new entry {PROMPT}"));
    s.send("a");
    let screen = s.expect(&format!("(2/2) approve this change {PROMPT}"));
    // The keys typed are echoed by the terminal: the screen starts after `a`.
    insta::assert_snapshot!("review_drifted_screen", screen);
    s.send("s");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    // Nothing on the screen drives the terminal or hides text.
    assert!(
        !all.chars()
            .any(|c| c != '\n' && c != '\r' && git_kams::text::is_concealing(c)),
        "{all:?}"
    );
    assert!(
        all.contains(r"Read a [-file.-]{+file\u{200B} from \u{1B}[31manywhere.+}"),
        "{all}"
    );
    assert!(
        all.contains("pinned    files/delete_file sha256:")
            && all.contains("approved by Rita Reviewer <rita@example.com> (1 entry): committed ")
            && all.contains("left as they are in the lock: files/read_file"),
        "{all}"
    );

    // One commit, signed off, with the approved entry only.
    assert_eq!(commits(d), 2);
    let message = git(d, &["log", "-1", "--format=%B"]);
    assert!(message.starts_with("kams: approve files/delete_file\n\nweekly upgrade\n\npinned    files/delete_file sha256:"), "{message}");
    assert!(
        message
            .trim_end()
            .ends_with("Signed-off-by: Rita Reviewer <rita@example.com>"),
        "{message}"
    );
    let shown = git(d, &["show", "--stat", "--format=", "HEAD"]);
    assert!(
        shown.contains("kams.lock") && shown.contains(".kams/inventory/files.json"),
        "{shown}"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    let new = locked(d, "delete_file");
    assert_eq!(new["state"], "pinned");
    assert_eq!(new["approval"]["note"], "weekly upgrade");
    assert_eq!(
        locked(d, "read_file"),
        before,
        "a skipped entry stays as it was"
    );
}

#[test]
fn review_back_returns_to_the_previous_entry_and_each_entry_keeps_its_own_note() {
    let r = upgraded();
    let d = r.path();
    let mut s = Session::spawn(d, &["review", "-m", "the default note"]);
    s.expect(&format!("(1/2) approve this new entry {PROMPT}"));
    s.send("a a first thought");
    s.expect(&format!("(2/2) approve this change {PROMPT}"));
    s.send("b");
    let again = s.expect(&format!("(1/2) approve this new entry {PROMPT}"));
    assert!(again.contains("files/delete_file: new"), "{again}");
    assert!(
        again.contains("decided before: approve, note \"a first thought\""),
        "{again}"
    );
    s.send("a deleting is fine, it asks first");
    s.expect(&format!("(2/2) approve this change {PROMPT}"));
    s.send("a");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    assert_eq!(
        locked(d, "delete_file")["approval"]["note"],
        "deleting is fine, it asks first"
    );
    assert_eq!(
        locked(d, "read_file")["approval"]["note"],
        "the default note"
    );
    assert_eq!(commits(d), 2);
    let message = git(d, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with(
            "kams: approve 2 entries of files\n\nthe default note\n\nfiles/delete_file: deleting is fine, it asks first\n\n"
        ),
        "{message}"
    );
    // The reviewer saw the hidden characters and approved: the commit
    // records it, as `pin --accept-findings` does.
    assert!(
        message.contains("\naccepted  high hidden files/read_file /description"),
        "{message}"
    );
    let log = kams(d).arg("log").output().unwrap();
    assert!(
        text(&log.stdout).contains("accepted"),
        "{}",
        text(&log.stdout)
    );
}

#[test]
fn review_help_explains_the_keys_and_quit_keeps_the_lock_as_it_is() {
    let r = upgraded();
    let d = r.path();
    let lock = std::fs::read(d.join("kams.lock")).unwrap();
    let mut s = Session::spawn(d, &["review", "-m", "x"]);
    s.expect(&format!("(1/2) approve this new entry {PROMPT}"));
    s.send("?");
    let help = s.expect(&format!("(1/2) approve this new entry {PROMPT}"));
    insta::assert_snapshot!("review_help", help);
    s.send("b");
    s.expect("no previous entry");
    s.send("x");
    s.expect("unknown key `x`");
    s.send("q");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    assert!(
        all.ends_with("nothing approved or denied: kams.lock is unchanged\n"),
        "{all}"
    );
    assert_eq!(std::fs::read(d.join("kams.lock")).unwrap(), lock);
    assert_eq!(commits(d), 1);
}

#[test]
fn review_quit_keeps_the_decisions_made_before_it() {
    let r = upgraded();
    let d = r.path();
    let mut s = Session::spawn(d, &["review", "-m", "x"]);
    s.expect(PROMPT);
    s.send("a");
    s.expect(PROMPT);
    s.send("q");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    assert_eq!(locked(d, "delete_file")["state"], "pinned");
    assert!(
        all.contains("left as they are in the lock: files/read_file"),
        "{all}"
    );
    assert_eq!(commits(d), 2);
}

#[test]
fn review_without_a_terminal_exits_2_and_names_the_pin_commands() {
    let r = upgraded();
    let d = r.path();
    let o = kams(d).arg("review").write_stdin("a\n").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "error: review reads a key per entry from a terminal, and stdin is not one; approve without it, entry by entry:\n  git kams pin files/delete_file -m NOTE\n  git kams pin files/read_file -m NOTE --accept-findings=hidden\n(or refuse one: git kams deny SERVER/TOOL -m NOTE)\n"
    );
    assert_eq!(commits(d), 1);
    // The commands it names approve the entries, followed literally.
    let said = text(&o.stderr);
    for line in said.lines().filter_map(|l| l.strip_prefix("  git kams ")) {
        let args: Vec<&str> = line
            .split_whitespace()
            .map(|w| if w == "NOTE" { "ok" } else { w })
            .collect();
        kams(d).args(&args).assert().success();
    }
    kams(d)
        .arg("review")
        .write_stdin("")
        .assert()
        .code(0)
        .stdout("nothing to review: every selected entry matches the lock\n");
}

#[test]
fn review_of_a_selection_shows_only_it() {
    let r = upgraded();
    let d = r.path();
    let mut s = Session::spawn(d, &["review", "files/read_file", "-m", "x"]);
    let screen = s.expect(&format!("(1/1) approve this change {PROMPT}"));
    assert!(screen.contains("files/read_file: drifted"), "{screen}");
    s.send("a");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    assert!(locked(d, "delete_file").is_null());
    kams(d)
        .args(["review", "nosuch"])
        .write_stdin("")
        .assert()
        .code(2);
}

#[test]
fn review_writes_nothing_when_the_inventory_changed_while_it_was_on_screen() {
    let r = upgraded();
    let d = r.path();
    let lock = std::fs::read(d.join("kams.lock")).unwrap();
    let mut s = Session::spawn(d, &["review", "-m", "x"]);
    s.expect(PROMPT);
    s.send("a");
    s.expect(PROMPT);
    // Not what the reviewer saw.
    write_inventory(
        d,
        serde_json::json!([
            tool("delete_file", "Delete every file."),
            tool("read_file", DRIFTED),
            tool("write_file", "Write a file.")
        ]),
    );
    s.send("a");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(2), "{all}\n{err}");
    assert!(
        err.contains(
            "changed while you reviewed: nothing was written; run `git kams review` again"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(d.join("kams.lock")).unwrap(), lock);
    assert_eq!(commits(d), 1);
}

#[test]
fn review_shows_a_changed_launch_as_its_own_entry_and_approving_it_records_it() {
    let r = upgraded();
    let d = r.path();
    let mut inv: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join(".kams/inventory/files.json")).unwrap())
            .unwrap();
    inv["command"] = serde_json::json!(["files-server", "/"]);
    std::fs::write(
        d.join(".kams/inventory/files.json"),
        serde_json::to_string_pretty(&inv).unwrap(),
    )
    .unwrap();
    let mut s = Session::spawn(d, &["review", "-m", "x"]);
    let screen = s.expect(&format!("(1/3) approve this launch {PROMPT}"));
    assert!(
        screen.contains(
            "files (launch): launch changed\n  approved by Rita Reviewer <rita@example.com> at 2026-01-01T00:00:00Z: \"first review\"\n\n  launch:\n      {\n        \"command\": [\n          \"files-server\",\n    -     \"/srv\"\n    +     \"/\"\n        ]\n      }\n\n  1 finding:\n    high     drift      /launch  launch changed since it was approved: a different command now runs\n"
        ),
        "{screen}"
    );
    s.send("a");
    s.expect(PROMPT);
    s.send("s");
    s.expect(PROMPT);
    s.send("s");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("kams.lock")).unwrap()).unwrap();
    assert_eq!(
        lock["servers"]["files"]["launch"],
        serde_json::json!({"command": ["files-server", "/"]})
    );
    let message = git(d, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("kams: approve the launch of files\n"),
        "{message}"
    );
}

#[test]
fn review_deny_records_the_refusal_in_the_same_commit_as_the_approval() {
    let r = upgraded();
    let d = r.path();
    let mut s = Session::spawn(d, &["review", "-m", "upgrade"]);
    s.expect(&format!("(1/2) approve this new entry {PROMPT}"));
    s.send("a");
    s.expect(&format!("(2/2) approve this change {PROMPT}"));
    s.send("d reads anywhere now");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    assert!(
        all.contains("denied    files/read_file sha256:")
            && all.contains(
                "reviewed by Rita Reviewer <rita@example.com> (1 entry, 1 denial): committed "
            ),
        "{all}"
    );
    let denied = locked(d, "read_file");
    assert_eq!(denied["state"], "denied");
    assert_eq!(denied["approval"]["note"], "reads anywhere now");
    assert_eq!(denied["descriptor"]["description"], DRIFTED);
    assert_eq!(locked(d, "delete_file")["approval"]["note"], "upgrade");
    assert_eq!(commits(d), 2);
    let message = git(d, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with(
            "kams: approve files/delete_file, deny files/read_file\n\nupgrade\n\nfiles/read_file: reads anywhere now\n\n"
        ),
        "{message}"
    );
    assert!(
        message
            .trim_end()
            .ends_with("Signed-off-by: Rita Reviewer <rita@example.com>"),
        "{message}"
    );
    // scan reports it as `git kams deny` would have left it; a wider
    // review passes over it, naming it shows it again.
    let scan = kams(d).arg("scan").output().unwrap();
    assert!(
        text(&scan.stdout).contains("denied"),
        "{}",
        text(&scan.stdout)
    );
    kams(d)
        .arg("review")
        .write_stdin("")
        .assert()
        .code(0)
        .stdout("kept denied files/read_file (name it, `git kams review files/read_file`, to review it again)\nnothing to review: every selected entry matches the lock\n");
    let mut s = Session::spawn(d, &["review", "files/read_file", "-m", "x"]);
    let screen = s.expect(&format!("(1/1) approve this entry {PROMPT}"));
    assert!(
        screen.contains("files/read_file: denied\n  denied by Rita Reviewer <rita@example.com> at 2026-01-01T00:00:00Z: \"reads anywhere now\"\n"),
        "{screen}"
    );
    s.send("q");
    assert_eq!(s.finish().0, Some(0));
}

#[test]
fn review_cannot_deny_a_launch() {
    let r = upgraded();
    let d = r.path();
    let mut inv: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join(".kams/inventory/files.json")).unwrap())
            .unwrap();
    inv["command"] = serde_json::json!(["other-server"]);
    std::fs::write(
        d.join(".kams/inventory/files.json"),
        serde_json::to_string_pretty(&inv).unwrap(),
    )
    .unwrap();
    let mut s = Session::spawn(d, &["review", "files", "-m", "x"]);
    s.expect(&format!("(1/3) approve this launch {PROMPT}"));
    s.send("d");
    s.expect("a launch cannot be denied: skip it (s), and change the client config that names it");
    s.expect(&format!("(1/3) approve this launch {PROMPT}"));
    s.send("q");
    let (code, all, err) = s.finish();
    assert_eq!(code, Some(0), "{all}\n{err}");
    assert_eq!(commits(d), 1);
}

#[test]
fn review_with_nothing_to_review_says_when_the_inventory_is_not_committed() {
    let r = repo();
    let d = r.path();
    write_inventory(d, serde_json::json!([tool("read_file", "Read a file.")]));
    // Approved with the lock alone committed, as pin once did.
    let o = kams(d)
        .args(["pin", "--no-commit", "-m", "first"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    git(d, &["add", "kams.lock"]);
    git(d, &["commit", "-q", "-s", "-m", "the lock alone"]);
    let o = kams(d).arg("review").output().unwrap();
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(out.starts_with("nothing to review"), "{out}");
    assert!(
        out.contains("note: the inventory they were approved from is not committed as it is (1 file): `git kams pin -m NOTE` commits it"),
        "{out}"
    );
    // The command it names does it.
    let o = kams(d)
        .args(["pin", "-m", "the inventory"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    let out = text(&kams(d).arg("review").output().unwrap().stdout);
    assert_eq!(
        out,
        "nothing to review: every selected entry matches the lock\n"
    );
}
