//! One lock across every client config (issue 27, item 3): the same server
//! name configured differently in two configs is one finding naming both
//! files and what differs; one launch under two names is a finding too;
//! capture refuses configs that disagree, saying what differs, and says
//! which configs each server it captured came from.

use serde_json::json as value;

use crate::capture::{config, config_at, fake, run};
use crate::common::{copy, kams, real, repo, text};

/// The `ambiguous` findings of a JSON scan of `dir`'s configs.
fn ambiguous(dir: &std::path::Path) -> Vec<serde_json::Value> {
    // A capture of another server: what is scanned here is the configs.
    copy(
        &real("mcp-server-time@0.6.2.json"),
        dir,
        ".kams/inventory/time.json",
    );
    crate::common::findings_of(dir, "ambiguous")
}

#[test]
fn two_configs_that_disagree_on_a_server_give_one_finding_naming_both_files_and_the_field() {
    let repo = repo();
    let d = repo.path();
    config(
        d,
        &[(
            "files",
            value!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/srv"]}),
        )],
    );
    config_at(
        d,
        ".cursor/mcp.json",
        "mcpServers",
        &[(
            "files",
            value!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/"]}),
        )],
    );
    let found = ambiguous(d);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f["severity"], "high");
    assert_eq!(f["server"], "files");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains(".mcp.json and .cursor/mcp.json (arguments)"),
        "{message}"
    );
    let o = kams(d)
        .args(["scan", "--fail-on", "never"])
        .output()
        .unwrap();
    let said = text(&o.stdout);
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("ambiguous") || l.contains("server-filesystem"))
        .collect();
    insta::assert_snapshot!("configs_disagree_text", lines.join("\n"));
}

#[test]
fn one_launch_under_two_names_is_a_finding_naming_both() {
    let repo = repo();
    let d = repo.path();
    let launch = value!({"type": "http", "url": "https://mcp.example.com/mcp"});
    config(d, &[("docs", launch.clone())]);
    config_at(
        d,
        ".vscode/mcp.json",
        "servers",
        &[("company-docs", launch)],
    );
    let found = ambiguous(d);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "medium");
    assert_eq!(found[0]["server"], "company-docs");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "`company-docs` in .vscode/mcp.json runs the same launch as `docs` in .mcp.json"
        ),
        "{message}"
    );
}

#[test]
fn configs_that_agree_give_no_finding_and_capture_names_them() {
    let repo = repo();
    let d = repo.path();
    config(d, &[("one", fake("ok", &[]))]);
    // VS Code's form of the same launch.
    let mut vscode = fake("ok", &[]);
    vscode["type"] = value!("stdio");
    config_at(d, ".vscode/mcp.json", "servers", &[("one", vscode)]);
    assert!(ambiguous(d).is_empty());
    let o = run(d, &["capture", "--yes"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(
        said.contains("(configured in .mcp.json, .vscode/mcp.json)"),
        "{said}"
    );
}

#[test]
fn capture_refuses_configs_that_disagree_and_says_what_differs() {
    let repo = repo();
    let d = repo.path();
    config(d, &[("one", fake("ok", &[]))]);
    config_at(
        d,
        ".cursor/mcp.json",
        "mcpServers",
        &[("one", fake("ok", &[("EXTRA", "1")]))],
    );
    let o = run(d, &["capture", "--yes"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let said = text(&o.stderr);
    assert!(
        said.contains("server `one` is configured differently in .mcp.json and .cursor/mcp.json (environment names)"),
        "{said}"
    );
    assert!(!d.join(".kams/inventory/one.json").exists());
}

#[test]
fn the_gemini_cli_settings_are_a_config_read_with_its_own_keys() {
    let repo = repo();
    let d = repo.path();
    // The same streamable HTTP server for Claude Code and for the Gemini
    // CLI (`httpUrl`): one launch, no finding.
    config(
        d,
        &[(
            "docs",
            value!({"type": "http", "url": "https://mcp.example.com/mcp"}),
        )],
    );
    config_at(
        d,
        ".gemini/settings.json",
        "mcpServers",
        &[(
            "docs",
            value!({"httpUrl": "https://mcp.example.com/mcp", "timeout": 30000}),
        )],
    );
    assert!(ambiguous(d).is_empty());
    // Gemini's `url` is SSE: the same address over another transport is
    // another launch, named with both files.
    config_at(
        d,
        ".gemini/settings.json",
        "mcpServers",
        &[("docs", value!({"url": "https://mcp.example.com/mcp"}))],
    );
    let found = ambiguous(d);
    assert_eq!(found.len(), 1, "{found:#?}");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains(".mcp.json and .gemini/settings.json (transport)"),
        "{message}"
    );
    // A plain-http `httpUrl` is reported at its own key.
    config_at(
        d,
        ".gemini/settings.json",
        "mcpServers",
        &[("plain", value!({"httpUrl": "http://mcp.example.com/mcp"}))],
    );
    let transport = crate::common::findings_of(d, "transport");
    assert!(
        transport.iter().any(|f| f["server"] == "plain"
            && f["severity"] == "high"
            && f["field"] == "/httpUrl"
            && f["evidence"][0] == "in .gemini/settings.json at /mcpServers/plain"),
        "{transport:#?}"
    );
}

#[test]
fn the_lock_records_which_configs_an_approved_launch_came_from() {
    let repo = repo();
    let d = repo.path();
    config(d, &[("one", fake("paged", &[]))]);
    config_at(
        d,
        ".cursor/mcp.json",
        "mcpServers",
        &[("one", fake("paged", &[]))],
    );
    let o = run(d, &["capture", "--yes"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The capture file names the configs, sorted.
    let file = std::fs::read_to_string(d.join(".kams/inventory/one.json")).unwrap();
    assert!(
        file.contains(r#""configuredIn": [".cursor/mcp.json",".mcp.json"]"#),
        "{file}"
    );
    // Approving the server's launch records them with it (format version 3).
    crate::history::pin(d, "Ana", "reviewed", &["one"]);
    let lock = std::fs::read_to_string(d.join("kams.lock")).unwrap();
    assert!(lock.starts_with("{\n  \"version\": 3,"), "{lock}");
    assert!(
        lock.contains("\n      \"launch_configs\": [\".cursor/mcp.json\",\".mcp.json\"],\n"),
        "{lock}"
    );
    // The recorded launch is still the one capture runs without asking:
    // no config is part of it.
    crate::history::commit(d, "Ana", "2026-01-02T00:00:00Z", "pin one");
    let o = run(d, &["capture"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("unchanged `one`"),
        "{}",
        text(&o.stdout)
    );
}
