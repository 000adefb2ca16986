//! The git drivers `git kams init` registers, driven by real `git merge`
//! and `git diff`: approvals made on two branches merge entry by entry, a
//! real disagreement about one entry is a conflict that names it and
//! leaves a valid lock, and diffs show hidden characters.

use std::path::Path;
use std::process::Output;

use git_kams::lock::Lock;

use crate::common::{copy, git, kams, real, repo, with_kams_on_path};

/// Runs git where it can run `git kams`; the caller judges the outcome.
fn run(dir: &Path, args: &[&str]) -> Output {
    with_kams_on_path("git", dir)
        .args(args)
        .output()
        .expect("git runs")
}

fn printed(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A repository set up by `git kams init`, with the time server's
/// inventory recorded (provisional) and committed on `main`.
fn recorded() -> tempfile::TempDir {
    let repo = repo();
    let d = repo.path();
    kams(d).arg("init").assert().success();
    copy(
        &real("mcp-server-time@0.6.2.json"),
        d,
        ".kams/inventory/mcp-server-time@0.6.2.json",
    );
    kams(d).arg("record").assert().success();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "record the time server"]);
    repo
}

fn pin(dir: &Path, key: &str, note: &str) {
    kams(dir).args(["pin", key, "-m", note]).assert().success();
}

fn lock(dir: &Path) -> Lock {
    Lock::parse(&std::fs::read(dir.join("kams.lock")).unwrap()).expect("a valid lock")
}

#[test]
fn pins_on_two_branches_merge_cleanly() {
    let repo = recorded();
    let d = repo.path();
    git(d, &["checkout", "-q", "-b", "other"]);
    pin(d, "mcp-server-time/convert_time", "convert reviewed");
    git(d, &["checkout", "-q", "main"]);
    pin(d, "mcp-server-time/get_current_time", "time reviewed");
    let o = run(d, &["merge", "-q", "--no-edit", "other"]);
    assert!(o.status.success(), "{}", printed(&o));
    let merged = lock(d);
    let tools = &merged.servers["mcp-server-time"].tools;
    assert_eq!(
        tools["convert_time"].approval.as_ref().unwrap().note,
        "convert reviewed"
    );
    assert_eq!(
        tools["get_current_time"].approval.as_ref().unwrap().note,
        "time reviewed"
    );
    // Written in the one canonical layout.
    assert_eq!(
        merged.to_text(),
        std::fs::read(d.join("kams.lock")).unwrap()
    );
    kams(d).arg("status").assert().success();
}

#[test]
fn new_servers_recorded_on_two_branches_merge_where_lines_would_conflict() {
    let repo = recorded();
    let d = repo.path();
    let add = |file: &str| {
        copy(&real(file), d, &format!(".kams/inventory/{file}"));
        kams(d).arg("record").assert().success();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", file]);
    };
    git(d, &["checkout", "-q", "-b", "other"]);
    add("mcp-server-git@0.6.2.json");
    git(d, &["checkout", "-q", "main"]);
    add("mcp-server-fetch@0.6.2.json");
    pin(d, "mcp-server-time/convert_time", "reviewed");
    // Both blocks go in at the same place: a line merge conflicts there.
    let side = |rev: &str| {
        let path = d.join(format!("lock.{}", rev.replace('/', "_")));
        std::fs::write(&path, git(d, &["show", &format!("{rev}:kams.lock")])).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (ours, base, theirs) = (side("main"), side("main~2"), side("other"));
    assert!(!run(d, &["merge-file", "-q", "-p", &ours, &base, &theirs])
        .status
        .success());

    let o = run(d, &["merge", "-q", "--no-edit", "other"]);
    assert!(o.status.success(), "{}", printed(&o));
    let merged = lock(d);
    assert_eq!(
        merged.servers.keys().collect::<Vec<_>>(),
        ["mcp-server-fetch", "mcp-server-git", "mcp-server-time"]
    );
    // `record` approves no launch: none is recorded on either side.
    assert!(merged.servers["mcp-server-git"].launch.is_none());
    assert!(merged.servers["mcp-server-time"].tools["convert_time"]
        .approval
        .is_some());
    kams(d).arg("status").assert().success();
}

#[test]
fn the_same_tool_re_pinned_differently_is_a_conflict_that_keeps_ours() {
    let repo = recorded();
    let d = repo.path();
    git(d, &["checkout", "-q", "-b", "other"]);
    std::fs::remove_file(d.join(".kams/inventory/mcp-server-time@0.6.2.json")).unwrap();
    copy(
        &real("mcp-server-time@2026.10.19.json"),
        d,
        ".kams/inventory/mcp-server-time@2026.10.19.json",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    pin(d, "mcp-server-time/convert_time", "new version reviewed");
    git(d, &["checkout", "-q", "main"]);
    pin(d, "mcp-server-time/convert_time", "old version reviewed");
    let ours = git(d, &["show", "HEAD:kams.lock"]);

    let o = run(d, &["merge", "--no-edit", "other"]);
    let text = printed(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("kams.lock: conflict in mcp-server-time/convert_time: ours pinned sha256:")
            && text.contains("(\"old version reviewed\"), theirs pinned sha256:")
            && text.contains("; kept ours. Resolve: check the inventory (`git kams diff mcp-server-time/convert_time`), then `git kams pin mcp-server-time/convert_time -m NOTE`"),
        "{text}"
    );
    assert!(
        text.contains("CONFLICT (content): Merge conflict in kams.lock"),
        "{text}"
    );
    assert_eq!(
        git(d, &["status", "--porcelain", "kams.lock"]),
        "UU kams.lock\n"
    );
    // No conflict markers: our side, a lock every command reads.
    assert_eq!(std::fs::read_to_string(d.join("kams.lock")).unwrap(), ours);
    kams(d).arg("status").assert().code(0);

    // The fix the message names resolves it.
    pin(d, "mcp-server-time/convert_time", "resolved");
    git(d, &["add", "kams.lock"]);
    git(d, &["commit", "-q", "--no-edit"]);
    assert_eq!(
        lock(d).servers["mcp-server-time"].tools["convert_time"]
            .approval
            .as_ref()
            .unwrap()
            .note,
        "resolved"
    );
}

#[test]
fn a_corrupt_side_is_an_error_and_leaves_ours_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = Lock::default().to_text();
    std::fs::write(d.join("base"), b"").unwrap();
    std::fs::write(d.join("ours"), &good).unwrap();
    std::fs::write(d.join("theirs"), b"{\"version\": 1, \"servers\": {").unwrap();
    kams(d)
        .args(["merge-driver", "base", "ours", "theirs", "approvals.lock"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "error: cannot merge approvals.lock: their lock is unreadable: approvals.lock: corrupt lock: not valid JSON",
        ));
    assert_eq!(std::fs::read(d.join("ours")).unwrap(), good);
    assert!(!d.join("ours.lock").exists());
    // A newer format on one side is refused the same way.
    std::fs::write(d.join("theirs"), b"{\"version\": 4, \"servers\": {}}").unwrap();
    kams(d)
        .args(["merge-driver", "base", "ours", "theirs"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("format version 4 is newer"));
    // An empty base is no base: both sides added the lock.
    std::fs::write(d.join("theirs"), &good).unwrap();
    kams(d)
        .args(["merge-driver", "base", "ours", "theirs"])
        .assert()
        .code(0);
    kams(d).args(["merge-driver", "--help"]).assert().success();
}

#[test]
fn diffs_show_hidden_characters() {
    let repo = recorded();
    let d = repo.path();
    let file = d.join(".kams/inventory/mcp-server-time@0.6.2.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let hidden = text.replacen("Get current time", "Get current\u{200B} time", 1);
    assert_ne!(hidden, text, "the corpus file has the description");
    std::fs::write(&file, hidden).unwrap();
    let o = run(d, &["diff"]);
    let shown = String::from_utf8(o.stdout).unwrap();
    assert!(
        shown.contains("+") && shown.contains("current\\u{200B} time"),
        "{shown}"
    );
    assert!(!shown.contains('\u{200B}'), "{shown}");
    // Without the filter the raw character is what git shows.
    let raw = String::from_utf8(run(d, &["diff", "--no-textconv"]).stdout).unwrap();
    assert!(raw.contains('\u{200B}'), "{raw}");

    // A lock edited by hand to hold the raw character.
    let lock = std::fs::read_to_string(d.join("kams.lock")).unwrap();
    std::fs::write(
        d.join("kams.lock"),
        lock.replacen("Get current", "Get\u{202E} current", 1),
    )
    .unwrap();
    let shown = String::from_utf8(run(d, &["diff", "--", "kams.lock"]).stdout).unwrap();
    assert!(shown.contains("Get\\u{202E} current"), "{shown}");
    assert!(!shown.contains('\u{202E}'), "{shown}");
}

#[test]
fn textconv_never_fails_on_odd_input_but_on_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("odd"), b"a\xff\x00\xe2\x80\x8b\\u{41}\r\n").unwrap();
    kams(d)
        .args(["textconv", "odd"])
        .assert()
        .code(0)
        .stdout("a\\x{FF}\\u{0}\\u{200B}\\\\u{41}\r\n");
    kams(d)
        .args(["textconv", "missing"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("missing: cannot open"));
}
