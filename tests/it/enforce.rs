//! `git kams enforce` (issue 27, item 1): the lock's refusals written into
//! the clients' own settings, merged into the files a team commits
//! without touching its other keys and rules, refreshed (or flagged) after
//! each approval, and checked with `--check` for the hooks and CI. Real
//! git, the bundled samples, the clients' documented file formats.

use std::path::Path;

use crate::common::{git, kams, repo, text};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clients");

/// A repository with the samples' lock, their drifted inventory, a Claude
/// Code `.mcp.json` and the fixture settings, committed.
fn project() -> tempfile::TempDir {
    let dir = repo();
    let d = dir.path();
    crate::common::samples_drifted(d);
    std::fs::write(d.join(".mcp.json"), "{\"mcpServers\": {}}\n").unwrap();
    std::fs::create_dir_all(d.join(".claude")).unwrap();
    std::fs::copy(
        Path::new(FIXTURES).join("claude-code-settings.json"),
        d.join(".claude/settings.json"),
    )
    .unwrap();
    kams(d).arg("init").assert().success();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "start"]);
    dir
}

/// Runs `args`, returning stdout and the exit code.
fn run(d: &Path, args: &[&str]) -> (String, i32) {
    let o = kams(d).args(args).output().unwrap();
    (
        format!("{}{}", text(&o.stdout), text(&o.stderr)),
        o.status.code().unwrap_or(-1),
    )
}

fn read(d: &Path, rel: &str) -> String {
    std::fs::read_to_string(d.join(rel)).unwrap()
}

fn deny(d: &Path, rel: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&read(d, rel)).unwrap();
    v["permissions"]["deny"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn claude_code_settings_get_a_rule_per_unapproved_tool_and_keep_everything_else() {
    let dir = project();
    let d = dir.path();
    let (said, code) = run(d, &["enforce"]);
    assert_eq!(code, 0, "{said}");
    insta::assert_snapshot!("enforce_claude_code_output", said);
    let written = read(d, ".claude/settings.json");
    insta::assert_snapshot!("enforce_claude_code_settings", written);
    insta::assert_snapshot!("enforce_record", read(d, ".kams/enforce.json"));

    // Every other key of the fixture is there, equal.
    let before: serde_json::Value =
        serde_json::from_str(&read(Path::new(FIXTURES), "claude-code-settings.json")).unwrap();
    let after: serde_json::Value = serde_json::from_str(&written).unwrap();
    for (k, v) in before.as_object().unwrap() {
        if k != "permissions" {
            assert_eq!(&after[k], v, "{k}");
        }
    }
    for k in ["allow", "ask", "defaultMode"] {
        assert_eq!(after["permissions"][k], before["permissions"][k], "{k}");
    }

    // A second run changes nothing, to the byte.
    let (said, code) = run(d, &["enforce"]);
    assert_eq!(
        (said.as_str(), code),
        (
            "claude-code: .claude/settings.json: up to date (8 rules)\n",
            0
        )
    );
    assert_eq!(read(d, ".claude/settings.json"), written);
    assert_eq!(run(d, &["enforce", "--check"]).1, 0);
}

#[test]
fn a_rule_the_user_wrote_is_kept_even_when_enforce_would_write_it_too() {
    let dir = project();
    let d = dir.path();
    // The user refuses files/search_files themselves, and adds an own rule later.
    let settings = read(d, ".claude/settings.json").replace(
        "\"Bash(curl:*)\"",
        "\"Bash(curl:*)\",\n      \"mcp__files__search_files\"",
    );
    std::fs::write(d.join(".claude/settings.json"), settings).unwrap();
    assert_eq!(run(d, &["enforce"]).1, 0);
    let settings = read(d, ".claude/settings.json").replace(
        "\"Read(./.env)\"",
        "\"Read(./.env)\",\n      \"mcp__notes__archive\"",
    );
    std::fs::write(d.join(".claude/settings.json"), settings).unwrap();
    assert!(!read(d, ".kams/enforce.json").contains("mcp__files__search_files"));

    // files/search_files is pinned now: git-kams would take its rule out,
    // but the rule is the user's, so nothing of git-kams's is stale.
    let (said, code) = run(d, &["pin", "-m", "search reviewed", "files/search_files"]);
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("out of date"), "{said}");
    let (said, code) = run(d, &["enforce"]);
    assert_eq!(code, 0, "{said}");
    let rules = deny(d, ".claude/settings.json");
    for own in [
        "Read(./.env)",
        "mcp__notes__archive",
        "Bash(curl:*)",
        "mcp__files__search_files",
    ] {
        assert!(rules.iter().any(|r| r == own), "{own} lost: {rules:?}");
    }
    assert_eq!(
        run(d, &["enforce"]).0,
        "claude-code: .claude/settings.json: up to date (7 rules)\n"
    );
}

#[test]
fn check_fails_after_a_pin_until_enforce_runs_and_kams_enforce_refreshes_on_its_own() {
    let dir = project();
    let d = dir.path();
    let (said, code) = run(d, &["enforce", "--check"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("out of date: 8 to add"), "{said}");
    assert!(
        said.contains("run `git kams enforce` to write the rules"),
        "{said}"
    );
    assert_eq!(
        read(d, ".claude/settings.json"),
        read(Path::new(FIXTURES), "claude-code-settings.json")
    );
    assert!(!d.join(".kams/enforce.json").exists());

    assert_eq!(run(d, &["enforce"]).1, 0);
    assert_eq!(run(d, &["enforce", "--check"]).1, 0);
    let (said, code) = run(d, &["pin", "-m", "search reviewed", "files/search_files"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("note: the clients' deny rules are out of date"),
        "{said}"
    );
    let (said, code) = run(d, &["enforce", "--check"]);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains("  - mcp__files__search_files  (no longer refused)"),
        "{said}"
    );
    assert_eq!(run(d, &["enforce"]).1, 0);
    assert_eq!(run(d, &["enforce", "--check"]).1, 0);
    assert!(!deny(d, ".claude/settings.json").contains(&"mcp__files__search_files".to_string()));

    // With kams.enforce, a denial refreshes the rules itself.
    git(d, &["config", "kams.enforce", "true"]);
    let (said, code) = run(
        d,
        &["deny", "-m", "searches too much", "files/search_files"],
    );
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("  + mcp__files__search_files  (files/search_files: denied)"),
        "{said}"
    );
    assert!(
        said.contains("note: the clients' deny rules were refreshed (kams.enforce); commit .claude/settings.json and .kams/enforce.json"),
        "{said}"
    );
    assert_eq!(run(d, &["enforce", "--check"]).1, 0);
}

#[test]
fn cursor_gets_its_rules_and_vscode_is_said_to_be_unsupported() {
    let dir = project();
    let d = dir.path();
    std::fs::create_dir_all(d.join(".cursor")).unwrap();
    std::fs::write(d.join(".cursor/mcp.json"), "{\"mcpServers\": {}}\n").unwrap();
    std::fs::copy(
        Path::new(FIXTURES).join("cursor-cli.json"),
        d.join(".cursor/cli.json"),
    )
    .unwrap();
    std::fs::create_dir_all(d.join(".vscode")).unwrap();
    std::fs::write(d.join(".vscode/mcp.json"), "{\"servers\": {}}\n").unwrap();
    let (said, code) = run(d, &["enforce"]);
    assert_eq!(code, 0, "{said}");
    insta::assert_snapshot!("enforce_three_clients_output", said);
    insta::assert_snapshot!("enforce_cursor_cli", read(d, ".cursor/cli.json"));
    let (said, code) = run(d, &["--format", "json", "enforce", "--check"]);
    assert_eq!(code, 0, "{said}");
    insta::assert_snapshot!("enforce_three_clients_json", said);
    let (said, code) = run(d, &["enforce", "--client", "vscode", "--check"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.starts_with("vscode: not supported by this client"),
        "{said}"
    );
}

#[test]
fn a_settings_file_enforce_cannot_read_whole_is_an_error_and_stays_as_it_is() {
    for (name, bad) in [
        (
            "comment",
            "{\n  // mine\n  \"permissions\": {\"deny\": []}\n}\n",
        ),
        (
            "twice",
            "{\"permissions\": {\"deny\": []}, \"permissions\": {}}\n",
        ),
        ("shape", "{\"permissions\": {\"deny\": \"mcp__a\"}}\n"),
        ("top", "[]\n"),
    ] {
        let dir = project();
        let d = dir.path();
        std::fs::write(d.join(".claude/settings.json"), bad).unwrap();
        let (said, code) = run(d, &["enforce"]);
        assert_eq!(code, 2, "{name}: {said}");
        assert!(said.contains(".claude/settings.json"), "{name}: {said}");
        assert_eq!(read(d, ".claude/settings.json"), bad, "{name}");
        assert!(!d.join(".kams/enforce.json").exists(), "{name}");
    }
}

#[cfg(unix)]
#[test]
fn enforce_never_writes_through_a_link() {
    let dir = project();
    let d = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.json");
    std::fs::write(&victim, "{}\n").unwrap();
    std::fs::remove_file(d.join(".claude/settings.json")).unwrap();
    std::os::unix::fs::symlink(&victim, d.join(".claude/settings.json")).unwrap();
    let (said, code) = run(d, &["enforce"]);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("symbolic link"), "{said}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "{}\n");

    // A linked folder on the way is refused too.
    let dir = project();
    let d = dir.path();
    std::fs::remove_dir_all(d.join(".claude")).unwrap();
    std::os::unix::fs::symlink(outside.path(), d.join(".claude")).unwrap();
    let (said, code) = run(d, &["enforce", "--client", "claude-code"]);
    assert_eq!(code, 2, "{said}");
    assert!(!outside.path().join("settings.json").exists());
}

#[test]
fn with_no_client_configured_enforce_says_which_to_name() {
    let dir = project();
    let d = dir.path();
    std::fs::remove_file(d.join(".mcp.json")).unwrap();
    std::fs::remove_dir_all(d.join(".claude")).unwrap();
    let (said, code) = run(d, &["enforce"]);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("name one with --client"), "{said}");
    let (said, code) = run(d, &["enforce", "--client", "nope"]);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("`nope` is no client git-kams knows"),
        "{said}"
    );
    // Named, a client's settings file is made.
    let (said, code) = run(d, &["enforce", "--client", "claude-code"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(deny(d, ".claude/settings.json").len(), 8);
}

/// [`project`] with the Gemini CLI settings `fixture` as
/// `.gemini/settings.json`, after `enforce --client gemini-cli` (which
/// must succeed), and what it said.
fn gemini_enforced(fixture: &str) -> (tempfile::TempDir, String) {
    let dir = project();
    let d = dir.path();
    std::fs::create_dir_all(d.join(".gemini")).unwrap();
    std::fs::copy(
        Path::new(FIXTURES).join(fixture),
        d.join(".gemini/settings.json"),
    )
    .unwrap();
    let (said, code) = run(d, &["enforce", "--client", "gemini-cli"]);
    assert_eq!(code, 0, "{said}");
    (dir, said)
}

#[test]
fn gemini_cli_gets_excluded_tools_per_server_it_configures() {
    let (dir, said) = gemini_enforced("gemini-settings.json");
    let d = dir.path();
    insta::assert_snapshot!("enforce_gemini_output", said);
    insta::assert_snapshot!("enforce_gemini_settings", read(d, ".gemini/settings.json"));
    // The user's own exclusion stays; a second run is the first.
    let written = read(d, ".gemini/settings.json");
    assert!(written.contains("\"fetch_raw\""), "{written}");
    let (said, code) = run(d, &["enforce", "--client", "gemini-cli", "--check"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(read(d, ".gemini/settings.json"), written);
    // Detected without --client from its settings file.
    let (said, _) = run(d, &["enforce", "--check"]);
    assert!(
        said.contains("gemini-cli: .gemini/settings.json: up to date"),
        "{said}"
    );
}

/// The `enforce` problems of `git kams hook pre-receive` fed the commits
/// from nothing to HEAD, as a server or CI would check them.
fn enforce_problems(d: &Path) -> Vec<serde_json::Value> {
    let tip = git(d, &["rev-parse", "HEAD"]);
    let zero = "0".repeat(40);
    let out = kams(d)
        .args(["--format", "json", "hook", "pre-receive"])
        .write_stdin(format!("{zero} {} refs/heads/main\n", tip.trim()))
        .output()
        .unwrap();
    let report = crate::common::json(&out.stdout);
    let problems = report["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"));
    problems
        .iter()
        .filter(|p| p["rules"] == serde_json::json!(["enforce"]))
        .cloned()
        .collect()
}

#[test]
fn the_hooks_refuse_a_tip_whose_committed_rules_are_out_of_date_with_its_lock() {
    let dir = project();
    let d = dir.path();
    // No record committed: enforcement is not in use, nothing to check.
    assert_eq!(enforce_problems(d), Vec::<serde_json::Value>::new());
    assert_eq!(run(d, &["enforce"]).1, 0);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-s", "-m", "deny rules"]);
    assert_eq!(enforce_problems(d), Vec::<serde_json::Value>::new());

    // A pin commits a lock that no longer refuses the tool, and the rules
    // still do: the push is refused, with the fix.
    let (said, code) = run(d, &["pin", "-m", "search reviewed", "files/search_files"]);
    assert_eq!(code, 0, "{said}");
    let problems = enforce_problems(d);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let p = &problems[0];
    assert!(
        p["message"].as_str().unwrap().contains(
            "out of date with kams.lock there: .claude/settings.json (0 to add, 1 to take out)"
        ),
        "{p}"
    );
    assert_eq!(p["fix"], "git kams enforce, and commit what it writes");
    assert_eq!(p["server"], serde_json::Value::Null);

    // Refreshed and committed, the tip passes again.
    assert_eq!(run(d, &["enforce"]).1, 0);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-s", "-m", "rules refreshed"]);
    assert_eq!(enforce_problems(d), Vec::<serde_json::Value>::new());

    // A hand edit of the committed rules is caught as well.
    let before = read(d, ".claude/settings.json");
    let settings = before.replace("mcp__files__move_file", "mcp__files__moved");
    assert_ne!(settings, before, "a rule git-kams wrote: {before}");
    std::fs::write(d.join(".claude/settings.json"), settings).unwrap();
    git(d, &["commit", "-q", "-a", "-m", "edited by hand"]);
    let problems = enforce_problems(d);
    assert_eq!(problems.len(), 1, "{problems:?}");
    git(
        d,
        &["checkout", "-q", "HEAD~1", "--", ".claude/settings.json"],
    );
    git(d, &["commit", "-q", "-m", "hand edit undone"]);
    assert_eq!(enforce_problems(d), Vec::<serde_json::Value>::new());

    // With no inventory committed, the drift rule reads no lock; this
    // rule reads it, and the rules for tools no inventory shows are stale.
    git(d, &["rm", "-q", "-r", ".kams/inventory"]);
    git(d, &["commit", "-q", "-m", "inventory dropped"]);
    let problems = enforce_problems(d);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains(".claude/settings.json (0 to add, "),
        "{problems:?}"
    );
}

#[test]
fn a_settings_file_the_gemini_cli_wrote_itself_takes_the_rules_in_its_own_layout() {
    // Written by the real Gemini CLI 0.61.0 (`gemini mcp add --scope
    // project`, tests/fixtures/README.md), not from its documentation.
    let (dir, _) = gemini_enforced("gemini-settings.by-gemini-cli-0.61.0.json");
    let d = dir.path();
    let written = read(d, ".gemini/settings.json");
    insta::assert_snapshot!("enforce_gemini_written_by_gemini", written);
    let v: serde_json::Value = serde_json::from_str(&written).unwrap();
    let servers = &v["mcpServers"];
    // The client's own keys and the user's exclusion stay.
    assert_eq!(servers["files"]["timeout"], 30000, "{written}");
    assert_eq!(
        servers["web"]["args"],
        serde_json::json!(["mcp-server-fetch"])
    );
    let excluded = |server: &str| -> Vec<String> {
        servers[server]["excludeTools"]
            .as_array()
            .unwrap_or_else(|| panic!("{server}: {written}"))
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        excluded("web").contains(&"fetch_raw".to_string()),
        "{written}"
    );
    assert!(!excluded("files").is_empty(), "{written}");
    let (said, code) = run(d, &["enforce", "--client", "gemini-cli", "--check"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(read(d, ".gemini/settings.json"), written);
}
