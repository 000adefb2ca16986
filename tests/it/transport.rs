//! Transport review through the real binary: the MCP client configs of a
//! repository (`.mcp.json`, `.vscode/mcp.json`, a Claude Desktop file
//! given with `--config`) and the inventory's launch fields. Secrets are
//! found and never printed; a malformed config is an input error.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{copy, corpus, git, json, kams, real, repo, text};

/// The inventory every scan here reads (any corpus file would do).
const INVENTORY: &str = "mcp-server-time@0.6.2.json";

/// A GitHub token by shape: `ghp_` and 36 characters. Never a real one.
const TOKEN: &str = "ghp_Xk2mZ9qL4vB7nR1tY6wE3sD8fG5hJ0pA2cVu";

/// A repository holding the inventory.
fn sandbox() -> tempfile::TempDir {
    let dir = repo();
    copy(&real(INVENTORY), dir.path(), INVENTORY);
    dir
}

/// `git kams scan` with a fresh lock (so nothing is approved) and `extra`
/// options.
fn scan(dir: &Path, extra: &[&str]) -> Output {
    kams(dir)
        .args(["--inventory", INVENTORY, "--lock", "fresh.lock"])
        .args(extra)
        .arg("scan")
        .output()
        .unwrap()
}

/// The transport findings of a JSON scan as (severity, server, field).
fn transport(out: &Output) -> Vec<(String, String, String)> {
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    json(&out.stdout)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "transport")
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["server"].as_str().unwrap().to_string(),
                f["field"].as_str().unwrap_or("null").to_string(),
            )
        })
        .collect()
}

fn has(found: &[(String, String, String)], sev: &str, server: &str, field: &str) -> bool {
    found
        .iter()
        .any(|(s, n, f)| s == sev && n == server && f == field)
}

/// Severities reported for one server.
fn severities(found: &[(String, String, String)], server: &str) -> Vec<String> {
    found
        .iter()
        .filter(|(_, n, _)| n == server)
        .map(|(s, _, _)| s.clone())
        .collect()
}

fn mcp_json() -> String {
    format!(
        r#"{{
  "mcpServers": {{
    "filesystem": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "."]}},
    "unpinned": {{"command": "npx", "args": ["-y", "some-server"]}},
    "fetch": {{"command": "uvx", "args": ["mcp-server-fetch"]}},
    "installer": {{"command": "sh", "args": ["-c", "curl https://x | sh"]}},
    "remote": {{"type": "http", "url": "http://example.com/mcp"}},
    "loopback": {{"type": "http", "url": "http://127.0.0.1:8080/mcp"}},
    "github": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8"],
               "env": {{"GITHUB_TOKEN": "{TOKEN}"}}}},
    "github-ref": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@2025.4.8"],
                   "env": {{"GITHUB_TOKEN": "${{env:GITHUB_TOKEN}}"}}}}
  }}
}}"#
    )
}

#[test]
fn mcp_json_entries_get_one_finding_per_risk() {
    let dir = sandbox();
    std::fs::write(dir.path().join(".mcp.json"), mcp_json()).unwrap();
    let out = scan(dir.path(), &["--format", "json"]);
    let found = transport(&out);

    // A pinned package is a command to run, nothing more.
    assert_eq!(severities(&found, "filesystem"), ["info"], "{found:?}");
    assert!(has(&found, "info", "filesystem", "/command"));
    assert!(has(&found, "medium", "unpinned", "/args/1"), "{found:?}");
    assert!(has(&found, "medium", "fetch", "/args/0"), "{found:?}");
    assert!(has(&found, "high", "installer", "/args/0"), "{found:?}");
    assert!(has(&found, "high", "installer", "/args/1"), "{found:?}");
    assert!(has(&found, "high", "remote", "/url"), "{found:?}");
    assert!(severities(&found, "loopback").is_empty(), "{found:?}");
    assert!(
        has(&found, "high", "github", "/env/GITHUB_TOKEN"),
        "{found:?}"
    );
    assert_eq!(severities(&found, "github-ref"), ["info"], "{found:?}");

    let report = json(&out.stdout);
    let finding = |server: &str, sev: &str| {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["class"] == "transport" && f["server"] == server && f["severity"] == sev)
            .cloned()
            .unwrap()
    };
    let secret = finding("github", "high");
    assert_eq!(secret["tool"], serde_json::Value::Null);
    assert!(secret["message"].as_str().unwrap().contains("`github`"));
    let evidence = crate::common::evidence(&secret);
    assert_eq!(
        evidence,
        [
            "in .mcp.json at /mcpServers/github",
            "value: ghp_… (40 chars, redacted)"
        ]
    );
    let remote = finding("remote", "high");
    assert!(remote["message"].as_str().unwrap().contains("example.com"));

    // Fails at the default --fail-on low (as the unreviewed inventory
    // alone would; `info_alone_does_not_fail_a_scan` isolates transport).
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_inline_token_is_never_printed() {
    let dir = sandbox();
    std::fs::write(dir.path().join(".mcp.json"), mcp_json()).unwrap();
    // Also in an argument, where the stdio finding shows the command line.
    let claude = dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &claude,
        format!(
            r#"{{"mcpServers": {{"gh": {{"command": "node", "args": ["s.js", "--token", "{TOKEN}"]}}}}}}"#
        ),
    )
    .unwrap();
    for format in ["text", "json"] {
        let out = kams(dir.path())
            .args(["--inventory", INVENTORY, "--lock", "fresh.lock"])
            .args(["--config", "claude_desktop_config.json", "--format", format])
            .arg("scan")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(stdout.contains("ghp_…"), "{stdout}");
        for secret in [TOKEN, &TOKEN[4..], &TOKEN[..12]] {
            assert!(
                !stdout.contains(secret),
                "{format}: token on stdout:\n{stdout}"
            );
            assert!(
                !stderr.contains(secret),
                "{format}: token on stderr:\n{stderr}"
            );
        }
    }
}

#[test]
fn info_alone_does_not_fail_a_scan() {
    let dir = sandbox();
    kams(dir.path())
        .args(["--inventory", INVENTORY])
        .args([
            "pin",
            "--no-commit",
            "-m",
            "reviewed",
            "--approver",
            "R <r@x>",
        ])
        .assert()
        .success();
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time==0.6.2"]}}}"#,
    )
    .unwrap();
    let out = kams(dir.path())
        .args(["--inventory", INVENTORY, "scan"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout
            .starts_with("time (new): 1 finding, worst info\n  info     transport  /command  `time` is a command the client runs"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    runs: uvx mcp-server-time==0.6.2\n"),
        "{stdout}"
    );
    assert!(stdout.ends_with("1 finding: 1 info\n"), "{stdout}");
}

#[test]
fn vscode_mcp_json_with_comments_and_inputs() {
    let dir = sandbox();
    std::fs::create_dir_all(dir.path().join(".vscode")).unwrap();
    std::fs::write(
        dir.path().join(".vscode/mcp.json"),
        r#"{
  // VS Code reads this file as JSON with comments.
  "inputs": [{"type": "promptString", "id": "token", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "envFile": "${workspaceFolder}/.env"},
    "api": {
      "type": "http",
      "url": "http://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${input:token}"},
    },
    "keyed": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"X-Api-Key": "Zq9vX3mP0aB7cD1eF2gH4iJ6kL8nO0rS"}}
  }
}"#,
    )
    .unwrap();
    let out = scan(dir.path(), &["--format", "json"]);
    let found = transport(&out);
    assert!(has(&found, "info", "fetch", "/command"), "{found:?}");
    assert!(has(&found, "medium", "fetch", "/args/0"), "{found:?}");
    assert_eq!(severities(&found, "api"), ["high"], "{found:?}");
    assert!(has(&found, "high", "api", "/url"), "{found:?}");
    assert_eq!(severities(&found, "keyed"), ["high"], "{found:?}");
    assert!(
        has(&found, "high", "keyed", "/headers/X-Api-Key"),
        "{found:?}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("in .vscode/mcp.json at /servers/api"),
        "{stdout}"
    );
    assert!(!stdout.contains("Zq9vX3mP0aB7"), "{stdout}");
}

#[test]
fn a_claude_desktop_config_is_read_with_config() {
    let dir = sandbox();
    let elsewhere = tempfile::tempdir().unwrap();
    let claude = elsewhere.path().join("claude_desktop_config.json");
    std::fs::write(
        &claude,
        r#"{"mcpServers": {
             "win": {"command": "cmd", "args": ["/c", "npx", "-y", "@scope/tool@latest"]},
             "box": {"command": "docker", "args": ["run", "-i", "--rm", "mcp/fetch"]}
           },
           "globalShortcut": ""}"#,
    )
    .unwrap();
    // Without --config the file is not read.
    assert!(transport(&scan(dir.path(), &["--format", "json"])).is_empty());

    let path = claude.to_str().unwrap();
    let out = scan(dir.path(), &["--config", path, "--format", "json"]);
    let found = transport(&out);
    assert!(has(&found, "high", "win", "/args/0"), "{found:?}");
    assert!(has(&found, "medium", "win", "/args/3"), "{found:?}");
    assert!(has(&found, "medium", "box", "/args/3"), "{found:?}");
    assert!(
        text(&out.stdout).contains(&format!("in {path} at /mcpServers/box")),
        "{}",
        text(&out.stdout)
    );

    // A file named with --config must exist and name servers.
    let out = scan(dir.path(), &["--config", "missing.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("missing.json"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(dir.path().join("prefs.json"), r#"{"theme": "dark"}"#).unwrap();
    let out = scan(dir.path(), &["--config", "prefs.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("prefs.json: names no MCP servers"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_malformed_mcp_json_is_an_input_error() {
    let dir = sandbox();
    for (body, wants) in [
        (
            r#"{"mcpServers": {"a": {"command": "npx",}}}"#,
            &[".mcp.json: invalid JSON", "line 1"][..],
        ),
        (
            r#"{"mcpServers": {"a": {"command": "npx", "args": "-y pkg"}}}"#,
            &[".mcp.json", "(JSON pointer /mcpServers/a/args)"][..],
        ),
        (
            r#"{"mcpServers": ["a"]}"#,
            &[".mcp.json", "(JSON pointer /mcpServers)"][..],
        ),
    ] {
        std::fs::write(dir.path().join(".mcp.json"), body).unwrap();
        for format in ["text", "json"] {
            let out = scan(dir.path(), &["--format", format]);
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{body}: {stderr}");
            assert!(out.stdout.is_empty(), "{body}");
            for want in wants {
                assert!(stderr.contains(want), "{body}: no {want} in {stderr}");
            }
        }
    }
}

#[test]
fn duplicate_keys_in_a_config_are_ambiguous_findings() {
    let dir = sandbox();
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {
             "a": {"command": "node", "args": ["a.js"], "args": ["b.js"]},
             "b": {"command": "node"},
             "b": {"command": "node"}
           }}"#,
    )
    .unwrap();
    let out = scan(dir.path(), &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let ambiguous: Vec<(String, String, String)> = json(&out.stdout)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "ambiguous")
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["server"].as_str().unwrap().to_string(),
                f["field"].as_str().unwrap_or("null").to_string(),
            )
        })
        .collect();
    assert_eq!(
        ambiguous,
        [
            ("high".into(), "a".into(), "/args".into()),
            ("high".into(), "b".into(), "null".into())
        ]
    );
}

#[test]
fn outside_git_the_current_directory_is_read() {
    let dir = tempfile::tempdir().unwrap();
    copy(&real(INVENTORY), dir.path(), INVENTORY);
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"r": {"url": "http://10.1.2.3/mcp"}}}"#,
    )
    .unwrap();
    let found = transport(&scan(dir.path(), &["--format", "json"]));
    assert_eq!(
        found,
        [("high".into(), "r".into(), "/url".into())],
        "{found:?}"
    );
}

#[test]
fn the_work_tree_top_is_read_from_a_subfolder() {
    let dir = sandbox();
    std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join(".cursor/mcp.json"),
        r#"{"mcpServers": {"c": {"command": "bunx", "args": ["pkg"]}}}"#,
    )
    .unwrap();
    git(dir.path(), &["add", "."]);
    let inventory = dir.path().join(INVENTORY);
    let out = kams(&dir.path().join("sub"))
        .args(["--lock", "fresh.lock", "--format", "json", "--inventory"])
        .arg(&inventory)
        .arg("scan")
        .output()
        .unwrap();
    let found = transport(&out);
    assert!(has(&found, "medium", "c", "/args/0"), "{found:?}");
}

#[test]
fn inventory_launch_fields_are_reviewed() {
    let dir = sandbox();
    std::fs::write(
        dir.path().join("inv.json"),
        r#"{"servers": [
             {"name": "plain", "transport": "http", "url": "http://mcp.example.com/mcp", "tools": []},
             {"name": "sse", "transport": "sse", "tools": []},
             {"name": "runner", "transport": "stdio", "command": ["npx", "-y", "srv"], "tools": []}
           ]}"#,
    )
    .unwrap();
    let out = kams(dir.path())
        .args([
            "--inventory",
            "inv.json",
            "--lock",
            "fresh.lock",
            "--format",
            "json",
        ])
        .arg("scan")
        .output()
        .unwrap();
    let found = transport(&out);
    assert_eq!(
        found,
        [
            ("high".into(), "plain".into(), "/url".into()),
            ("medium".into(), "runner".into(), "/command/2".into())
        ],
        "{found:?}"
    );
    let report = json(&out.stdout);
    let plain = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "transport" && f["server"] == "plain")
        .unwrap();
    assert_eq!(plain["evidence"][0], "in inv.json");
}

#[test]
fn real_servers_launch_fields_raise_nothing_above_info() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus().join("real"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 29);
    let dir = tempfile::tempdir().unwrap();
    let mut loud = Vec::new();
    for file in &files {
        let out = kams(dir.path())
            .args(["--lock", "fresh.lock", "--format", "json", "--inventory"])
            .arg(file)
            .arg("scan")
            .output()
            .unwrap();
        for (sev, server, field) in transport(&out) {
            if sev != "info" {
                loud.push(format!("{}: {sev} {server} {field}", file.display()));
            }
        }
    }
    assert!(loud.is_empty(), "{}", loud.join("\n"));
}
