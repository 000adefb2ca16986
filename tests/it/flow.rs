//! The user's path in a real git repository: record, scan, pin, drift,
//! diff, status, settings from git config, and what a reviewer sees.

use std::path::Path;

use crate::common::{copy, git, json, kams, real, repo};

fn inventory(dir: &Path, file: &str) {
    let _ = std::fs::remove_dir_all(dir.join(".kams/inventory"));
    copy(&real(file), dir, &format!(".kams/inventory/{file}"));
}

#[test]
fn record_pin_then_drift_is_found_and_diffed() {
    let repo = repo();
    let dir = repo.path();
    inventory(dir, "server-memory@0.6.2.json");

    kams(dir).arg("record").assert().success();
    let lock = std::fs::read_to_string(dir.join("kams.lock")).unwrap();
    assert!(lock.contains("\"state\": \"provisional\"") && !lock.contains("\"pinned\""));
    assert!(lock.contains("\"first_seen\": \"2026-01-01T00:00:00Z\""));

    // Provisional entries fail a scan at the default --fail-on low.
    let out = kams(dir)
        .args(["--format", "json", "scan"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    assert!(report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["class"] == "unapproved"));
    assert_eq!(report["version"], 1);

    // Recording again changes nothing.
    kams(dir)
        .arg("record")
        .assert()
        .success()
        .stdout(predicates::str::contains("nothing new"));
    assert_eq!(
        std::fs::read_to_string(dir.join("kams.lock")).unwrap(),
        lock
    );

    kams(dir)
        .args(["pin", "-m", "reviewed memory 0.6.2"])
        .assert()
        .success();
    let lock = std::fs::read_to_string(dir.join("kams.lock")).unwrap();
    assert!(
        lock.contains("\"approver\": \"Rita Reviewer <rita@example.com>\""),
        "{lock}"
    );
    assert!(lock.contains("\"note\": \"reviewed memory 0.6.2\""));
    kams(dir)
        .arg("scan")
        .assert()
        .code(0)
        .stdout("no findings\n");

    inventory(dir, "server-memory@2026.8.31.json");
    let out = kams(dir).arg("scan").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("drift"), "{text}");

    let out = kams(dir)
        .args(["--format", "json", "diff"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert!(findings.iter().all(|f| f["class"] == "drift"));

    // --fail-on high ignores the medium and low findings of this release.
    let worst = findings
        .iter()
        .map(|f| f["severity"].as_str().unwrap())
        .collect::<Vec<_>>();
    let expected = if worst.contains(&"high") || worst.contains(&"critical") {
        1
    } else {
        0
    };
    kams(dir)
        .args(["scan", "--fail-on", "high"])
        .assert()
        .code(expected);
    kams(dir)
        .args(["scan", "--fail-on", "never"])
        .assert()
        .code(0);
}

#[test]
fn pinning_one_tool_changes_only_its_lines() {
    let repo = repo();
    let dir = repo.path();
    inventory(dir, "server-filesystem@2025.7.1.json");
    kams(dir)
        .args(["pin", "-m", "first review"])
        .assert()
        .success();

    inventory(dir, "server-filesystem@2026.7.10.json");
    let status = kams(dir)
        .args(["--format", "json", "status"])
        .output()
        .unwrap();
    let report = json(&status.stdout);
    let drifted: Vec<String> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == "drifted" && e["tool"].is_string())
        .map(|e| e["tool"].as_str().unwrap().to_string())
        .collect();
    assert!(drifted.len() >= 2, "{drifted:?}");
    let tool = &drifted[0];
    kams(dir)
        .args([
            "pin",
            &format!("server-filesystem/{tool}"),
            "-m",
            "one tool",
        ])
        .assert()
        .success();
    let diff = git(
        dir,
        &["show", "-U0", "--format=", "HEAD", "--", "kams.lock"],
    );
    let hunks: Vec<&str> = diff.lines().filter(|l| l.starts_with("@@")).collect();
    assert!(!hunks.is_empty());
    // Every changed line lies inside the one tool's block.
    let lock = std::fs::read_to_string(dir.join("kams.lock")).unwrap();
    let start = lock.find(&format!("        \"{tool}\": {{")).unwrap();
    let end = start + lock[start..].find("\n        }").unwrap();
    let (first, last) = (
        lock[..start].lines().count() + 1,
        lock[..end].lines().count() + 1,
    );
    for h in hunks {
        let plus = h.split_whitespace().nth(2).unwrap().trim_start_matches('+');
        let line: usize = plus.split(',').next().unwrap().parse().unwrap();
        assert!(
            line >= first && line <= last,
            "hunk {h} outside {tool} ({first}..{last})"
        );
    }
    // The other drifted tools are still reported.
    let out = kams(dir)
        .args(["--format", "json", "diff"])
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let tools: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["tool"].as_str())
        .collect();
    assert!(!tools.contains(&tool.as_str()));
    assert!(tools.contains(&drifted[1].as_str()));
}

#[test]
fn settings_come_from_git_config_and_git_dash_c() {
    let repo = repo();
    let dir = repo.path();
    copy(&real("mcp-server-time@0.6.2.json"), dir, "mcp/time.json");
    git(dir, &["config", "kams.inventory", "mcp"]);
    git(dir, &["config", "kams.lock", "approvals/kams.lock"]);
    std::fs::create_dir_all(dir.join("approvals")).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    kams(&dir.join("sub"))
        .args(["pin", "-m", "ok"])
        .assert()
        .success();
    assert!(dir.join("approvals/kams.lock").is_file());
    assert!(!dir.join("kams.lock").exists());
    // `git -c` reaches a subcommand through GIT_CONFIG_PARAMETERS.
    kams(dir)
        .env("GIT_CONFIG_PARAMETERS", "'kams.lock'='other.lock'")
        .arg("status")
        .assert()
        .success()
        .stderr(predicates::str::contains("other.lock does not exist"));
    kams(dir)
        .env("GIT_CONFIG_PARAMETERS", "'kams.failon'='never'")
        .args(["--inventory"])
        .arg(real("mcp-server-time@2026.10.19.json"))
        .arg("scan")
        .assert()
        .code(0);
}

#[test]
fn outside_a_repository_the_lock_must_be_named() {
    let dir = tempfile::tempdir().unwrap();
    kams(dir.path())
        .args(["--inventory"])
        .arg(real("mcp-server-time@0.6.2.json"))
        .arg("scan")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--lock"));
    kams(dir.path())
        .args(["--lock", "k.lock", "--inventory"])
        .arg(real("mcp-server-time@0.6.2.json"))
        .args(["pin", "-m", "ok", "--approver", "A <a@example.com>"])
        .assert()
        .success();
    kams(dir.path())
        .args(["--lock", "k.lock", "--inventory"])
        .arg(real("mcp-server-time@0.6.2.json"))
        .args(["pin", "-m", "ok", "--approver", "A <a@example.com>"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("nothing to pin"));
}

#[test]
fn hidden_characters_are_escaped_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let clean = r#"{"tools":[{"name":"add","description":"Adds two numbers.","inputSchema":{"type":"object"}}]}"#;
    let sneaky = "{\"tools\":[{\"name\":\"add\",\"description\":\"Adds two numbers.\u{200B}\u{202E}\u{E0041}\\u001b[8m\",\"inputSchema\":{\"type\":\"object\"}}]}";
    std::fs::write(dir.path().join("clean.json"), clean).unwrap();
    std::fs::write(dir.path().join("sneaky.json"), sneaky).unwrap();
    let base = ["--lock", "k.lock", "--server", "calc"];
    kams(dir.path())
        .args(base)
        .args([
            "--inventory",
            "clean.json",
            "pin",
            "-m",
            "ok",
            "--approver",
            "A <a@x>",
        ])
        .assert()
        .success();
    let text = kams(dir.path())
        .args(base)
        .args(["--inventory", "sneaky.json", "scan"])
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(1));
    let stdout = String::from_utf8(text.stdout).unwrap();
    assert!(
        stdout.contains("\\u{200B}\\u{202E}\\u{E0041}\\u{1B}[8m"),
        "{stdout}"
    );
    for raw in ['\u{200B}', '\u{202E}', '\u{E0041}', '\u{1B}'] {
        assert!(!stdout.contains(raw), "raw {raw:?} in text output");
    }
    let out = kams(dir.path())
        .args(base)
        .args(["--inventory", "sneaky.json", "--format", "json", "scan"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(!stdout.contains('\u{200B}') && !stdout.contains('\u{1B}'));
    let report = json(&out.stdout);
    let evidence = report["findings"][0]["evidence"][0].as_str().unwrap();
    assert!(
        evidence.contains('\u{200B}'),
        "JSON escapes decode to the real characters: {evidence}"
    );
    // The lock stores them escaped too, and reads back to the same digest.
    kams(dir.path())
        .args(base)
        .args([
            "--inventory",
            "sneaky.json",
            "pin",
            "--accept-findings=hidden",
            "-m",
            "seen",
            "--approver",
            "A <a@x>",
        ])
        .assert()
        .success();
    let lock = std::fs::read_to_string(dir.path().join("k.lock")).unwrap();
    assert!(
        lock.contains("\\u200b\\u202e\\udb40\\udc41\\u001b"),
        "{lock}"
    );
    kams(dir.path())
        .args(base)
        .args(["--inventory", "sneaky.json", "scan"])
        .assert()
        .code(0);
}

#[test]
fn unknown_keys_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    kams(dir.path())
        .args(["--lock", "k.lock", "--inventory"])
        .arg(real("mcp-server-time@0.6.2.json"))
        .args(["pin", "nosuch/tool", "-m", "x", "--approver", "A <a@x>"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("names no server or tool"));
    assert!(!dir.path().join("k.lock").exists());
    assert!(!dir.path().join("k.lock.lock").exists());
}

#[test]
fn readme_demo_output_is_what_the_demo_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("The demo's real output:\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README has the demo output block");
    let out = kams(root)
        .args([
            "--lock",
            "samples/kams.lock",
            "--inventory",
            "samples/inventory-drifted",
            "scan",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), block);
}

#[test]
fn sample_lock_is_canonical_and_matches_the_clean_inventory() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read(root.join("samples/kams.lock")).unwrap();
    let lock = git_kams::lock::Lock::parse(&text).unwrap();
    assert_eq!(
        lock.to_text(),
        text,
        "samples/kams.lock is not in canonical layout"
    );
    // The clean inventory: nothing but the one server left provisional.
    let out = kams(root)
        .args([
            "--lock",
            "samples/kams.lock",
            "--inventory",
            "samples/inventory",
            "--format",
            "json",
            "scan",
        ])
        .output()
        .unwrap();
    let report = json(&out.stdout);
    let findings = report["findings"].as_array().unwrap();
    // And the toxic flow the approved servers close (docs/flows.md), at
    // medium: every leg is approved as it is advertised.
    assert_eq!(findings.len(), 3, "{findings:#?}");
    let (flows, rest): (Vec<_>, Vec<_>) = findings.iter().partition(|f| f["class"] == "flow");
    assert!(rest
        .iter()
        .all(|f| f["class"] == "unapproved" && f["server"] == "notes"));
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0]["severity"], "medium");
}
