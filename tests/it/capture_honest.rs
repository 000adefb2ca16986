//! Captures that keep the work tree honest (issue 24, items 8 to 12): an
//! unchanged server leaves its file alone, a capture nobody configures
//! any more is reported (and pruned on request), the help says what runs,
//! a failed server's stderr reads as lines, and a refused optional list
//! costs that list, not the server.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, SystemTime};

use serde_json::{json as value, Value};

use crate::capture::{capture_file, config, failure, fake, run, written, INVENTORY};
use crate::common::{git, kams, repo, text};

/// `git kams ARGS` as [`run`] runs it, at another capture time.
fn run_at(dir: &Path, epoch: &str, args: &[&str]) -> Output {
    kams(dir)
        .env("SOURCE_DATE_EPOCH", epoch)
        .args(args)
        .write_stdin("")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn capturing_an_unchanged_server_leaves_its_file_and_the_work_tree_untouched() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("notes", fake("ok", &[]))]);
    let first = run(dir, &["capture", "--yes"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let path = dir.join(INVENTORY).join("notes.json");
    let (before, _) = capture_file(dir, "notes");
    // An mtime no capture could give it, to see that none touches it.
    let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_500_000_000);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(long_ago)
        .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "capture"]);

    // Another day: only capturedAt would differ.
    let again = run_at(dir, "1800000000", &["capture", "--yes"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(
        text(&again.stdout),
        "unchanged `notes`: 3 tools in .kams/inventory/notes.json (configured in .mcp.json)\n"
    );
    assert_eq!(capture_file(dir, "notes").0, before);
    assert_eq!(mtime(&path), long_ago);
    assert_eq!(git(dir, &["status", "--porcelain"]), "");

    // A changed launch is a change, though the server says the same.
    config(dir, &[("notes", fake("ok", &[("KAMS_TEST_FLAG", "1")]))]);
    let changed = run_at(dir, "1800000000", &["capture", "--yes"]);
    assert_eq!(changed.status.code(), Some(0), "{}", text(&changed.stderr));
    assert!(
        text(&changed.stdout).starts_with("captured `notes`: 3 tools -> "),
        "{}",
        text(&changed.stdout)
    );
    let (after, parsed) = capture_file(dir, "notes");
    assert_ne!(after, before);
    assert_eq!(parsed["env"], value!({"KAMS_TEST_FLAG": "1"}));
    assert_eq!(parsed["capturedAt"], "2027-01-15T08:00:00Z");
}

#[test]
fn a_capture_no_client_config_names_is_noted_by_capture_and_scan_and_pruned_on_request() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("kept", fake("ok", &[])), ("gone", fake("ok", &[]))]);
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Beside them, a file a person wrote for a server of no config.
    let folder = dir.join(INVENTORY);
    std::fs::write(
        folder.join("hand.json"),
        r#"{"server":"hand","tools":[{"name":"t","description":"d"}]}"#,
    )
    .unwrap();

    config(dir, &[("kept", fake("ok", &[]))]);
    let note = "note: .kams/inventory/gone.json is the capture of `gone`, which no client config names any more; `git kams capture --prune` removes it";
    let capture = run(dir, &["capture", "--yes"]);
    assert_eq!(capture.status.code(), Some(0), "{}", text(&capture.stderr));
    let stderr = text(&capture.stderr);
    assert_eq!(stderr.lines().collect::<Vec<_>>(), [note], "{stderr}");
    let scan = run(dir, &["scan"]);
    let stderr = text(&scan.stderr);
    assert!(stderr.lines().any(|l| l == note), "{stderr}");
    assert!(!stderr.contains("hand"), "{stderr}");

    // A link to a capture of a server of no config, outside the folder:
    // never followed, never removed.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("linked.json");
    let linked = std::fs::read(folder.join("gone.json"))
        .map(|b| text(&b).replace("\"gone\"", "\"linked\""))
        .unwrap();
    std::fs::write(&target, linked).unwrap();
    std::os::unix::fs::symlink(&target, folder.join("linked.json")).unwrap();

    let prune = run(dir, &["capture", "--yes", "--prune"]);
    assert_eq!(prune.status.code(), Some(0), "{}", text(&prune.stderr));
    assert_eq!(
        text(&prune.stdout),
        "unchanged `kept`: 3 tools in .kams/inventory/kept.json (configured in .mcp.json)\n\
         removed .kams/inventory/gone.json: no client config names `gone`\n"
    );
    assert_eq!(written(dir), ["hand.json", "kept.json", "linked.json"]);
    assert!(target.is_file());

    // The last server removed: nothing to capture, all to prune.
    config(dir, &[]);
    let prune = run(dir, &["capture", "--prune"]);
    assert_eq!(prune.status.code(), Some(0), "{}", text(&prune.stderr));
    assert_eq!(written(dir), ["hand.json", "linked.json"]);

    // No client config at all: nothing says what is stale.
    std::fs::remove_file(folder.join("linked.json")).unwrap();
    std::fs::copy(&target, folder.join("linked.json")).unwrap();
    std::fs::remove_file(dir.join(".mcp.json")).unwrap();
    let scan = run(dir, &["scan"]);
    assert!(
        !text(&scan.stderr).contains("no client config names"),
        "{}",
        text(&scan.stderr)
    );
}

#[test]
fn capture_and_scan_help_say_that_configs_are_run_and_what_yes_skips() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["capture", "scan"] {
        let out = kams(dir.path()).args([command, "--help"]).output().unwrap();
        let help = text(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(!help.contains("never run"), "{command}: {help}");
        assert!(
            help.contains("capture and scan --capture RUN its servers"),
            "{command}: {help}"
        );
    }
    // scan's capture options say they need --capture.
    let out = kams(dir.path()).args(["scan", "--help"]).output().unwrap();
    let help = text(&out.stdout);
    let with = help
        .split("With --capture:")
        .nth(1)
        .expect("a --capture heading");
    assert!(with.contains("--yes") && with.contains("--timeout") && with.contains("--jobs"));
    assert!(!with
        .split("Metrics:")
        .next()
        .unwrap()
        .contains("--otlp-endpoint"));
    let out = kams(dir.path())
        .args(["capture", "--help"])
        .output()
        .unwrap();
    let help = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for said in [
        "not committed, or committed without a valid sign-off",
        "--prune",
        "leaves the file untouched",
        "Output format (capture: text only)",
    ] {
        assert!(help.contains(said), "{said}: {help}");
    }
    // What the help says of --format, the command does.
    let out = kams(dir.path())
        .args(["--format", "json", "capture"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("text only"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_failed_servers_stderr_is_shown_as_lines_each_escaped() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("trace", fake("crash-trace", &[]))]);
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        failure(&stderr, "trace").ends_with("its stderr ended with:"),
        "{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("error: ")).unwrap();
    assert_eq!(
        lines[at + 1..at + 4],
        [
            "    Traceback (most recent call last):",
            "      File \"server.py\", line 1, in <module>",
            "    \\u{1B}[31mValueError: no token\\u{1B}[0m",
        ],
        "{stderr}"
    );
    assert!(
        !stderr.contains("\\u{A}") && !stderr.contains('\x1b'),
        "{stderr}"
    );
}

#[test]
fn a_refused_resources_list_is_a_warning_recorded_in_the_file_and_its_return_a_change() {
    let repo = repo();
    let dir = repo.path();
    let flag = dir.join("resources-work");
    let mode = format!("rich-if:{}", flag.display());
    config(dir, &[("hub", fake(&mode, &[]))]);
    let out = run(dir, &["capture", "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "warning: `hub`: resources/list: the server answered with error -32601: Method not found; written without resources (the capture file lists resources/list as unavailable)\n"
    );
    let (_, file) = capture_file(dir, "hub");
    assert_eq!(file["tools"].as_array().unwrap().len(), 3);
    assert_eq!(file["prompts"].as_array().unwrap().len(), 1);
    assert_eq!(file["resourceTemplates"].as_array().unwrap().len(), 1);
    assert_eq!(file.get("resources"), None);
    assert_eq!(file["unavailable"], value!(["resources/list"]));

    // The list works again: the file changes, it is not `unchanged`.
    std::fs::write(&flag, "").unwrap();
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("captured `hub`"),
        "{}",
        text(&out.stdout)
    );
    let (_, file) = capture_file(dir, "hub");
    assert_eq!(file["resources"].as_array().unwrap().len(), 1);
    assert_eq!(file.get("unavailable"), None::<&Value>);
}
