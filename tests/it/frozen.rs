//! Every output frozen before the redesign of issue 25 moves code: scan
//! and diff in each format, status, log and blame on a scripted history,
//! the hooks' messages, the locks that record and pin write, the merge
//! driver's results and a capture file. The redesign changes no byte a
//! user sees, so a snapshot that changes here is a reviewed diff with a
//! reason in its commit.
//!
//! Each snapshot holds what a user sees of one run: the exit status,
//! stdout and stderr together. Dates, identities and the clock are pinned
//! by `common::kams` and `common::git`, so commit ids are the same on
//! every run; what would still vary (temporary folders, the fixture's
//! absolute path, the capture's clock) is replaced by a placeholder where
//! it is read, each with a comment.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::approvals::{commit, Remote};
use crate::common::{copy, git, kams, real, repo, text, with_kams_on_path};
use crate::hooks::{approve, inventory, printed, rev, run, Setup};

/// Exit status, stdout and stderr of one run, as one text.
fn shown(o: &Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        o.status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// `text` with each temporary folder replaced by its placeholder: a
/// temporary folder's name differs on every run (and `/tmp` may be a
/// symlink, so its canonical form is replaced too).
fn scrub(text: &str, dirs: &[(&Path, &str)]) -> String {
    let mut text = text.to_string();
    for (dir, name) in dirs {
        if let Ok(real) = dir.canonicalize() {
            text = text.replace(real.to_str().unwrap(), name);
        }
        text = text.replace(dir.to_str().unwrap(), name);
    }
    text
}

/// Runs `git kams ARGS` in `dir`, stdin empty.
fn kams_in(dir: &Path, args: &[&str]) -> Output {
    kams(dir).args(args).write_stdin("").output().unwrap()
}

/// Runs git where it can run `git kams` (hooks, drivers).
fn git_with_kams(dir: &Path, args: &[&str]) -> Output {
    with_kams_on_path("git", dir)
        .args(args)
        .output()
        .expect("git runs")
}

// ---------------------------------------------------------------- samples

fn samples(args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = vec![
        "--lock",
        "samples/kams.lock",
        "--inventory",
        "samples/inventory-drifted",
    ];
    all.extend_from_slice(args);
    kams_in(root, &all)
}

#[test]
fn samples_scan_and_diff_in_every_format() {
    for command in ["scan", "diff"] {
        for format in ["text", "json", "sarif"] {
            insta::assert_snapshot!(
                format!("frozen_samples_{command}_{format}"),
                shown(&samples(&["--format", format, command]))
            );
        }
    }
}

#[test]
fn samples_status_in_text_and_json() {
    for format in ["text", "json"] {
        insta::assert_snapshot!(
            format!("frozen_samples_status_{format}"),
            shown(&samples(&["--format", format, "status"]))
        );
    }
}

// ----------------------------------------------------------------- corpus

/// Release `from` of `server` pinned, then `to` scanned and diffed in
/// every format; the files are copied under short names so that no
/// output names a machine's path. The pin's output and the lock it wrote
/// are frozen too.
fn corpus_pair(server: &str, from: &str, to: &str, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(real(&format!("{server}@{from}.json")), d.join("old.json")).unwrap();
    std::fs::copy(real(&format!("{server}@{to}.json")), d.join("new.json")).unwrap();
    let pin = kams_in(
        d,
        &[
            "--lock",
            "k.lock",
            "--inventory",
            "old.json",
            "pin",
            "-m",
            "reviewed",
            "--approver",
            "R <r@example.com>",
            "--accept-findings",
        ],
    );
    let lock = std::fs::read_to_string(d.join("k.lock")).unwrap_or_default();
    insta::assert_snapshot!(
        format!("frozen_corpus_{name}_pin"),
        format!("{}--- k.lock\n{lock}", shown(&pin))
    );
    for command in ["scan", "diff"] {
        for format in ["text", "json", "sarif"] {
            let o = kams_in(
                d,
                &[
                    "--lock",
                    "k.lock",
                    "--inventory",
                    "new.json",
                    "--format",
                    format,
                    command,
                ],
            );
            insta::assert_snapshot!(
                format!("frozen_corpus_{name}_{command}_{format}"),
                shown(&o)
            );
        }
    }
}

#[test]
fn corpus_everything_upgrade_with_prompts_and_resources() {
    corpus_pair("server-everything", "0.6.2", "2026.8.18", "everything");
}

#[test]
fn corpus_fetch_upgrade() {
    corpus_pair("mcp-server-fetch", "0.6.2", "2026.10.24", "fetch");
}

#[test]
fn corpus_filesystem_long_jump() {
    corpus_pair("server-filesystem", "0.5.1", "2026.7.10", "filesystem");
}

// -------------------------------------------------------- scripted history

const TIME: &str = ".kams/inventory/time.json";

/// The time server's real capture `file`, its launch edited by `edit`,
/// written as the inventory's time.json (as tests/it/launch.rs does).
fn time_inventory(dir: &Path, file: &str, edit: impl Fn(&mut Value)) {
    let mut capture: Value = serde_json::from_slice(&std::fs::read(real(file)).unwrap()).unwrap();
    edit(&mut capture);
    let to = dir.join(TIME);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, serde_json::to_vec_pretty(&capture).unwrap()).unwrap();
}

fn lock_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("kams.lock")).unwrap()
}

/// Runs `git kams ARGS` and asserts that it succeeded.
fn ok(dir: &Path, args: &[&str]) -> Output {
    let o = kams_in(dir, args);
    assert!(o.status.success(), "{args:?}: {}", shown(&o));
    o
}

/// A history of kams.lock with every kind of step: a record, several
/// pins, a re-pin after an upgrade, a deny, a changed launch, and a
/// merge of a branch that pinned another server. Returns the repository
/// and what `record` and the first `pin` printed and wrote.
fn history() -> (tempfile::TempDir, String, String) {
    let repo = repo();
    let d = repo.path();
    ok(d, &["init"]);
    time_inventory(d, "mcp-server-time@0.6.2.json", |_| {});
    let record = ok(d, &["record"]);
    // `record` names the lock it wrote by its absolute path.
    let recorded = scrub(
        &format!("{}--- kams.lock\n{}", shown(&record), lock_text(d)),
        &[(d, "<repo>")],
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "record the time server"]);

    let pin = ok(d, &["pin", "mcp-server-time", "-m", "time reviewed"]);
    let pinned = format!("{}--- kams.lock\n{}", shown(&pin), lock_text(d));

    copy(
        &real("mcp-server-fetch@0.6.2.json"),
        d,
        ".kams/inventory/fetch.json",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "add the fetch server"]);
    ok(d, &["pin", "mcp-server-fetch", "-m", "fetch reviewed"]);

    // A branch pins the git server while main moves on.
    git(d, &["checkout", "-q", "-b", "side"]);
    copy(
        &real("mcp-server-git@0.6.2.json"),
        d,
        ".kams/inventory/git.json",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "add the git server"]);
    ok(d, &["pin", "mcp-server-git", "-m", "git reviewed"]);
    git(d, &["checkout", "-q", "main"]);

    // An upgrade, re-pinned.
    time_inventory(d, "mcp-server-time@2026.10.19.json", |_| {});
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server upgrade"]);
    ok(d, &["pin", "mcp-server-time", "-m", "upgrade reviewed"]);

    // A tool refused.
    ok(
        d,
        &["deny", "mcp-server-fetch/fetch", "-m", "no network access"],
    );

    // The launch changes, and is approved.
    time_inventory(d, "mcp-server-time@2026.10.19.json", |c| {
        c["command"][2] = "Europe/Paris".into()
    });
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server in Paris"]);
    ok(
        d,
        &["pin", "mcp-server-time", "-m", "Paris launch reviewed"],
    );

    let o = git_with_kams(d, &["merge", "-q", "--no-edit", "side"]);
    assert!(o.status.success(), "{}", shown(&o));
    (repo, recorded, pinned)
}

#[test]
fn history_log_blame_and_status() {
    let (repo, recorded, pinned) = history();
    let d = repo.path();
    insta::assert_snapshot!("frozen_history_record_lock", recorded);
    insta::assert_snapshot!("frozen_history_pin_lock", pinned);
    insta::assert_snapshot!("frozen_history_final_lock", lock_text(d));
    // The commits themselves: their ids are what log and blame name.
    insta::assert_snapshot!(
        "frozen_history_git_log",
        git(d, &["log", "--graph", "--format=%h %s"])
    );
    for format in ["text", "json"] {
        for args in [
            &["log"][..],
            &["log", "mcp-server-time"],
            &["blame"],
            &["blame", "mcp-server-fetch/fetch"],
            &["status"],
        ] {
            let mut all = vec!["--format", format];
            all.extend_from_slice(args);
            insta::assert_snapshot!(
                format!(
                    "frozen_history_{}_{format}",
                    args.join("_").replace('/', "_")
                ),
                shown(&kams_in(d, &all))
            );
        }
    }
    // Drift after the history: status shows it.
    time_inventory(d, "mcp-server-time@0.6.2.json", |_| {});
    for format in ["text", "json"] {
        insta::assert_snapshot!(
            format!("frozen_history_status_drifted_{format}"),
            shown(&kams_in(d, &["--format", format, "status"]))
        );
    }
}

// ------------------------------------------------------------------ hooks

/// What a push printed, its exit status first, with the two
/// temporary repositories' paths replaced (git names the remote's).
fn pushed(o: &Output, dirs: &[(&Path, &str)]) -> String {
    scrub(
        &format!("exit: {}\n{}", o.status.code().unwrap_or(-1), printed(o)),
        dirs,
    )
}

/// `git kams --format json hook pre-push` fed the line git would feed
/// it for pushing `main` over `remote_tip` (zeros: a new branch).
fn pre_push_json(dir: &Path, remote_tip: &str) -> Output {
    let head = rev(dir, "HEAD").unwrap();
    kams(dir)
        .args(["--format", "json", "hook", "pre-push", "origin", "url"])
        .write_stdin(format!(
            "refs/heads/main {head} refs/heads/main {remote_tip}\n"
        ))
        .output()
        .unwrap()
}

#[test]
fn pre_push_refuses_and_accepts() {
    let s = Setup::new();
    let d = s.dir();
    let dirs = [(s.remote(), "<remote>"), (d, "<work>")];
    let zero = "0".repeat(40);
    inventory(d, "mcp-server-time@0.6.2.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory, no lock"]);
    insta::assert_snapshot!(
        "frozen_pre_push_no_lock_text",
        pushed(&run(d, &["push", "origin", "main"]), &dirs)
    );
    insta::assert_snapshot!(
        "frozen_pre_push_no_lock_json",
        shown(&pre_push_json(d, &zero))
    );

    kams(d).arg("record").assert().success();
    git(d, &["add", "kams.lock"]);
    git(d, &["commit", "-qm", "record what the servers advertise"]);
    insta::assert_snapshot!(
        "frozen_pre_push_provisional_text",
        pushed(&run(d, &["push", "origin", "main"]), &dirs)
    );

    approve(d, "time server reviewed");
    insta::assert_snapshot!(
        "frozen_pre_push_accepted_json",
        shown(&pre_push_json(d, &zero))
    );
    insta::assert_snapshot!(
        "frozen_pre_push_accepted_text",
        pushed(&run(d, &["push", "origin", "main"]), &dirs)
    );
    let pushed_tip = rev(d, "main").unwrap();

    // Drift committed without approval.
    inventory(d, "mcp-server-time@2026.10.19.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    insta::assert_snapshot!(
        "frozen_pre_push_drift_text",
        pushed(&run(d, &["push", "origin", "main"]), &dirs)
    );
    insta::assert_snapshot!(
        "frozen_pre_push_drift_json",
        shown(&pre_push_json(d, &pushed_tip))
    );

    // Approved, but not signed off.
    kams(d)
        .args(["pin", "--no-commit", "-m", "re-reviewed"])
        .assert()
        .success();
    git(d, &["add", "kams.lock"]);
    git(d, &["commit", "-qm", "approve, forgot -s"]);
    insta::assert_snapshot!(
        "frozen_pre_push_unsigned_text",
        pushed(&run(d, &["push", "origin", "main"]), &dirs)
    );
    insta::assert_snapshot!(
        "frozen_pre_push_unsigned_json",
        shown(&pre_push_json(d, &pushed_tip))
    );
    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    insta::assert_snapshot!(
        "frozen_pre_push_signed_off_text",
        pushed(&run(d, &["push", "origin", "main"]), &dirs)
    );
}

#[test]
fn pre_receive_refuses_and_accepts() {
    let r = Remote::new();
    let d = r.dir();
    let bare = git(d, &["remote", "get-url", "origin"]).trim().to_string();
    let bare = Path::new(&bare);
    let dirs = [(bare, "<remote>"), (d, "<work>")];
    inventory(d, "mcp-server-time@0.6.2.json");
    commit(d, "inventory", false);
    kams(d)
        .args(["pin", "--no-commit", "-m", "unsigned"])
        .assert()
        .success();
    commit(d, "approve, forgot -s", false);
    let push = || run(d, &["push", "--no-verify", "origin", "main"]);
    insta::assert_snapshot!("frozen_pre_receive_unsigned_text", pushed(&push(), &dirs));
    // The JSON report, as a CI job asks for it: `old new ref` lines fed
    // in the work repository, where the commits are.
    let pre_receive_json = |old: &str| {
        let head = rev(d, "HEAD").unwrap();
        kams(d)
            .args(["--format", "json", "hook", "pre-receive"])
            .write_stdin(format!("{old} {head} refs/heads/main\n"))
            .output()
            .unwrap()
    };
    insta::assert_snapshot!(
        "frozen_pre_receive_unsigned_json",
        shown(&pre_receive_json(&rev(d, "HEAD~1").unwrap()))
    );
    // A new ref (old all zeros) judged outside a server, where `main`
    // already names the new tip: the refs at the tip hide nothing, so the
    // unsigned approval is named (it was let through before the fix).
    insta::assert_snapshot!(
        "frozen_pre_receive_new_ref_in_work_repo_json",
        shown(&pre_receive_json(&"0".repeat(40)))
    );

    git(d, &["commit", "-q", "--amend", "--no-edit", "--signoff"]);
    insta::assert_snapshot!("frozen_pre_receive_signed_off_text", pushed(&push(), &dirs));
}

// ----------------------------------------------------------- merge driver

/// The three sides of kams.lock for merging `theirs` into `ours` in `d`,
/// written as files `base`, `ours`, `theirs` into a fresh folder; then
/// `git kams merge-driver base ours theirs kams.lock` run there, as git
/// runs it. Returns what it printed and the lock it left in `ours`.
fn merge_driver(d: &Path, ours: &str, theirs: &str) -> String {
    let base = git(d, &["merge-base", ours, theirs]).trim().to_string();
    let sides = tempfile::tempdir().unwrap();
    for (name, rev) in [("base", base.as_str()), ("ours", ours), ("theirs", theirs)] {
        std::fs::write(
            sides.path().join(name),
            git(d, &["show", &format!("{rev}:kams.lock")]),
        )
        .unwrap();
    }
    let o = kams_in(
        sides.path(),
        &["merge-driver", "base", "ours", "theirs", "kams.lock"],
    );
    let merged = std::fs::read_to_string(sides.path().join("ours")).unwrap();
    format!("{}--- merged kams.lock\n{merged}", shown(&o))
}

/// A repository with the time server recorded on `main`.
fn recorded() -> tempfile::TempDir {
    let repo = repo();
    let d = repo.path();
    ok(d, &["init"]);
    copy(
        &real("mcp-server-time@0.6.2.json"),
        d,
        ".kams/inventory/time.json",
    );
    ok(d, &["record"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "record the time server"]);
    repo
}

#[test]
fn merge_driver_clean_and_conflict() {
    let repo = recorded();
    let d = repo.path();
    git(d, &["checkout", "-q", "-b", "other"]);
    ok(
        d,
        &[
            "pin",
            "mcp-server-time/convert_time",
            "-m",
            "convert reviewed",
        ],
    );
    copy(
        &real("mcp-server-git@0.6.2.json"),
        d,
        ".kams/inventory/git.json",
    );
    ok(d, &["record"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "record the git server"]);
    git(d, &["checkout", "-q", "main"]);
    ok(
        d,
        &[
            "pin",
            "mcp-server-time/get_current_time",
            "-m",
            "time reviewed",
        ],
    );
    insta::assert_snapshot!(
        "frozen_merge_driver_clean",
        merge_driver(d, "main", "other")
    );

    // The same tool pinned differently on each side.
    git(d, &["checkout", "-q", "-b", "upgrade", "main~1"]);
    copy(
        &real("mcp-server-time@2026.10.19.json"),
        d,
        ".kams/inventory/time.json",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "time server update"]);
    ok(
        d,
        &[
            "pin",
            "mcp-server-time/get_current_time",
            "-m",
            "new version reviewed",
        ],
    );
    insta::assert_snapshot!(
        "frozen_merge_driver_conflict",
        merge_driver(d, "main", "upgrade")
    );
    // The same conflict through `git merge`, as a user sees it.
    git(d, &["checkout", "-q", "main"]);
    let o = git_with_kams(d, &["merge", "--no-edit", "upgrade"]);
    insta::assert_snapshot!("frozen_merge_conflict_git_merge", shown(&o));
}

// ---------------------------------------------------------------- capture

#[test]
fn capture_of_the_fake_server() {
    use crate::capture::{config, fake, fixture, written, INVENTORY};
    let repo = repo();
    let d = repo.path();
    config(
        d,
        &[
            ("notes", fake("ok", &[])),
            ("paged", fake("paged", &[])),
            ("rich", fake("rich", &[])),
            ("broken", fake("crash", &[])),
        ],
    );
    let o = crate::capture::run(d, &["capture", "--yes"]);
    insta::assert_snapshot!("frozen_capture_run", shown(&o));
    // A capture file names the fixture by its absolute path, in the
    // launch it records.
    let fixture = fixture();
    let dirs = [(fixture.as_path(), "<fixture>")];
    let names = written(d);
    assert_eq!(names, ["notes.json", "paged.json", "rich.json"]);
    for name in names {
        let raw = std::fs::read_to_string(d.join(INVENTORY).join(&name)).unwrap();
        // `capturedAt` is the clock at capture time.
        let raw = redact_captured_at(&raw);
        insta::assert_snapshot!(
            format!("frozen_capture_file_{}", name.trim_end_matches(".json")),
            scrub(&raw, &dirs)
        );
    }
}

/// `raw` with the value of its `"capturedAt"` member replaced.
fn redact_captured_at(raw: &str) -> String {
    let key = "\"capturedAt\": \"";
    let start = raw.find(key).expect("a capture file has capturedAt") + key.len();
    let end = start + raw[start..].find('"').expect("a closing quote");
    format!("{}<captured-at>{}", &raw[..start], &raw[end..])
}
