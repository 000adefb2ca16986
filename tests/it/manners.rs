//! Terminal manners: colour only when asked for or on a terminal, `-q`,
//! `-v`, and a reader that goes away is not an error.

use std::path::Path;
use std::process::Stdio;

use crate::common::{kams, text};

fn samples() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

const DEMO: [&str; 5] = [
    "--lock",
    "samples/kams.lock",
    "--inventory",
    "samples/inventory-drifted",
    "scan",
];

#[test]
fn colour_only_when_asked_for_or_on_a_terminal() {
    // Not a terminal here: auto means none.
    let plain = kams(samples()).args(DEMO).output().unwrap();
    assert_eq!(plain.status.code(), Some(1));
    assert!(!plain.stdout.contains(&0x1b));

    let coloured = kams(samples())
        .args(DEMO)
        .args(["--color", "always"])
        .output()
        .unwrap();
    let shown = text(&coloured.stdout);
    assert!(
        shown.starts_with("files/list_directory (pinned): 1 finding, worst \x1b[36mlow\x1b[0m\n  \x1b[36mlow     \x1b[0m removed"),
        "{shown}"
    );
    // Only the severities are coloured: removing our escapes gives the
    // plain report back, byte for byte.
    let stripped = shown
        .replace("\x1b[0m", "")
        .replace("\x1b[1;31m", "")
        .replace("\x1b[31m", "")
        .replace("\x1b[33m", "")
        .replace("\x1b[36m", "")
        .replace("\x1b[2m", "");
    assert_eq!(stripped, text(&plain.stdout));

    let never = kams(samples())
        .args(DEMO)
        .args(["--color", "never"])
        .env("NO_COLOR", "")
        .output()
        .unwrap();
    assert_eq!(never.stdout, plain.stdout);
    let json = kams(samples())
        .args(DEMO)
        .args(["--color", "always", "--format", "json"])
        .output()
        .unwrap();
    assert!(!json.stdout.contains(&0x1b));
}

#[test]
fn quiet_prints_nothing_but_errors_and_keeps_the_exit_status() {
    let out = kams(samples()).args(DEMO).arg("-q").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());

    // The missing-lock note is not an error.
    let dir = tempfile::tempdir().unwrap();
    let out = kams(samples())
        .args(["-q", "--lock"])
        .arg(dir.path().join("none.lock"))
        .args(["--inventory", "samples/inventory", "scan"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    let out = kams(samples())
        .args([
            "-q",
            "--lock",
            "samples/kams.lock",
            "--inventory",
            "nowhere",
            "scan",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: "),
        "{}",
        text(&out.stderr)
    );
    kams(samples()).args(["-q", "-v", "scan"]).assert().code(2);
}

#[test]
fn verbose_says_what_each_step_took() {
    let out = kams(samples()).args(DEMO).arg("-v").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    for step in [
        "kams: reading the inventory and the lock took ",
        "kams: comparing with the lock took ",
        "kams: running the detectors took ",
    ] {
        assert!(err.contains(step), "{err}");
    }
    let plain = kams(samples()).args(DEMO).output().unwrap();
    assert_eq!(out.stdout, plain.stdout);
}

/// Runs git-kams with a stdout whose reader went away before anything
/// was written.
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_git-kams"))
        .current_dir(samples())
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    // The scan still says, by its status, that it found something.
    let out = with_closed_stdout(&DEMO);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    // clap_complete panics on a failed write; it never sees one.
    let out = with_closed_stdout(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// Small things a new user met (issue 24): status before any capture,
/// blame before any commit, a mistyped severity.
#[test]
fn status_without_an_inventory_shows_the_lock_and_blame_without_commits_says_so() {
    let d = crate::common::repo();
    std::fs::copy(
        samples().join("samples/kams.lock"),
        d.path().join("kams.lock"),
    )
    .unwrap();
    let o = kams(d.path()).arg("status").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("pinned       -        c84be673f3e4 -            -IS- web/fetch"),
        "{out}"
    );
    assert!(
        text(&o.stderr).starts_with("note: no inventory at "),
        "{}",
        text(&o.stderr)
    );
    let o = kams(d.path())
        .args(["--format", "json", "status"])
        .output()
        .unwrap();
    let report = crate::common::json(&o.stdout);
    assert!(report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["status"].is_null() && e["state"].is_string()));
    // A named inventory that is not there stays an error.
    let o = kams(d.path())
        .args(["--inventory", "nope", "status"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));

    let o = kams(d.path()).arg("blame").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "note: no commits yet: kams.lock has no history\n"
    );

    let o = kams(samples())
        .args(DEMO)
        .args(["--fail-on", "hihg"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "error: --fail-on: unknown value `hihg` (expected info, low, medium, high, critical or never)\n"
    );
}
