//! One lock across every client config: the same server name configured
//! differently in two configs (`.mcp.json`, `.vscode/mcp.json`,
//! `.cursor/mcp.json`, a `--config` file), and one launch configured under
//! two names.
//!
//! A reviewer approves one launch per server name, and capture runs one;
//! when Cursor runs another command than Claude Code under the same name,
//! what the lock approved is not what one of the clients runs. And one
//! server under two names is two entries of the lock, two sets of deny
//! rules and two approvals, of which a reviewer may see only one.

use std::collections::BTreeMap;

use crate::config::{launch_differences, launch_spec, ClientServer};
use crate::finding::{Class, Finding, Severity};
use crate::json::Value;

use super::config_place;

/// Findings about configs that disagree, in `out`.
pub fn disagreements(configs: &[ClientServer], out: &mut Vec<Finding>) {
    let specs: Vec<Option<Value>> = configs.iter().map(|c| launch_spec(&c.entry)).collect();
    // The same name, another launch: each against the first place it is
    // configured.
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in configs.iter().enumerate() {
        let Some(&j) = first.get(c.name.as_str()) else {
            first.insert(&c.name, i);
            continue;
        };
        if specs[i] == specs[j] || c.source == configs[j].source {
            // Agreeing; or a duplicate within one file, which the
            // duplicate-key finding reports.
            continue;
        }
        let (a, b) = (&configs[j], c);
        let fields = launch_differences(specs[j].as_ref(), specs[i].as_ref());
        let launch_differs = fields.iter().any(|(_, values_only)| !values_only);
        let names: Vec<&str> = fields.iter().map(|(f, _)| *f).collect();
        out.push(Finding {
            class: Class::Ambiguous,
            severity: if launch_differs {
                Severity::High
            } else {
                Severity::Medium
            },
            server: c.name.clone(),
            tool: None,
            field: None,
            message: format!(
                "`{}` is configured differently in {} and {} ({}): each client runs its own, and the lock approves one launch per name; make the configs agree",
                c.name,
                a.source.display(),
                b.source.display(),
                names.join(", ")
            ),
            evidence: vec![
                config_place(b),
                format!("{}: {}", a.source.display(), shown(specs[j].as_ref())),
                format!("{}: {}", b.source.display(), shown(specs[i].as_ref())),
                config_place(a),
            ],
        });
    }
    // The same launch, another name: each name against the first that
    // runs it.
    let mut by_launch: BTreeMap<String, usize> = BTreeMap::new();
    for (i, c) in configs.iter().enumerate() {
        let Some(spec) = &specs[i] else { continue };
        let key = crate::canon::jcs_string(spec);
        let Some(&j) = by_launch.get(&key) else {
            by_launch.insert(key, i);
            continue;
        };
        let a = &configs[j];
        if a.name == c.name {
            continue;
        }
        out.push(Finding {
            class: Class::Ambiguous,
            severity: Severity::Medium,
            server: c.name.clone(),
            tool: None,
            field: None,
            message: format!(
                "`{}` in {} runs the same launch as `{}` in {}: one server under two names is two entries to approve and refuse apart; keep one name",
                c.name,
                c.source.display(),
                a.name,
                a.source.display()
            ),
            evidence: vec![
                config_place(c),
                format!("runs: {}", shown(Some(spec))),
                config_place(a),
            ],
        });
    }
}

/// A launch as one line: its command words, or its url and transport.
fn shown(spec: Option<&Value>) -> String {
    let Some(o) = spec.and_then(Value::as_object) else {
        return "no command and no url".to_string();
    };
    let mut parts = Vec::new();
    if let Some(argv) = o.get("command").and_then(Value::as_array) {
        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        parts.push(format!("runs {}", words.join(" ")));
    }
    if let Some(url) = o.get("url").and_then(Value::as_str) {
        parts.push(format!("connects to {url}"));
    }
    if let Some(t) = o.get("type").and_then(Value::as_str) {
        parts.push(format!("over {t}"));
    }
    for (key, what) in [("env", "env"), ("headers", "headers")] {
        if let Some(m) = o.get(key).and_then(Value::as_object) {
            let names: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
            parts.push(format!("{what} {}", names.join(", ")));
        }
    }
    if let Some(cwd) = o.get("cwd").and_then(Value::as_str) {
        parts.push(format!("in {cwd}"));
    }
    super::scrub(&parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn config(name: &str, source: &str, entry: &str) -> ClientServer {
        let (v, _) = crate::json::parse(entry.as_bytes()).unwrap();
        ClientServer {
            name: name.into(),
            source: PathBuf::from(source),
            pointer: format!("/mcpServers/{name}"),
            entry: v.as_object().unwrap().clone(),
            duplicates: Vec::new(),
        }
    }

    fn found(configs: &[ClientServer]) -> Vec<(Severity, String, String)> {
        let mut out = Vec::new();
        disagreements(configs, &mut out);
        out.into_iter()
            .map(|f| (f.severity, f.server, f.message))
            .collect()
    }

    #[test]
    fn the_same_name_with_another_command_arguments_url_or_env_names_is_high() {
        for (other, field) in [
            (r#"{"command": "uvx", "args": ["pkg@1"]}"#, "command"),
            (r#"{"command": "npx", "args": ["pkg@2"]}"#, "arguments"),
            (
                r#"{"command": "npx", "args": ["pkg@1"], "env": {"EXTRA": "1"}}"#,
                "environment names",
            ),
        ] {
            let got = found(&[
                config("s", ".mcp.json", r#"{"command": "npx", "args": ["pkg@1"]}"#),
                config("s", ".cursor/mcp.json", other),
            ]);
            assert_eq!(got.len(), 1, "{other}: {got:?}");
            assert_eq!(got[0].0, Severity::High, "{other}");
            assert!(
                got[0].2.contains(".mcp.json and .cursor/mcp.json"),
                "{}",
                got[0].2
            );
            assert!(got[0].2.contains(field), "{field}: {}", got[0].2);
        }
        let got = found(&[
            config(
                "w",
                ".vscode/mcp.json",
                r#"{"type": "http", "url": "https://a.example/mcp"}"#,
            ),
            config(
                "w",
                "claude.json",
                r#"{"type": "http", "url": "https://b.example/mcp"}"#,
            ),
        ]);
        assert_eq!(got[0].0, Severity::High);
        assert!(got[0].2.contains("(url)"), "{}", got[0].2);
    }

    #[test]
    fn values_alone_differing_is_medium_and_agreement_is_nothing() {
        let got = found(&[
            config(
                "s",
                ".mcp.json",
                r#"{"command": "x", "env": {"MODE": "ro"}}"#,
            ),
            config(
                "s",
                ".cursor/mcp.json",
                r#"{"command": "x", "env": {"MODE": "rw"}}"#,
            ),
        ]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, Severity::Medium);
        assert!(got[0].2.contains("environment values"), "{}", got[0].2);
        // The same launch written for two clients: VS Code's `type` and
        // Claude Code's differ in name only.
        assert!(found(&[
            config("s", ".mcp.json", r#"{"command": "x", "args": ["a"]}"#),
            config(
                "s",
                ".vscode/mcp.json",
                r#"{"type": "stdio", "command": "x", "args": ["a"]}"#
            ),
            config(
                "h",
                ".mcp.json",
                r#"{"type": "http", "url": "https://h.example/mcp"}"#
            ),
            config(
                "h",
                ".cursor/mcp.json",
                r#"{"type": "streamable-http", "url": "https://h.example/mcp"}"#
            ),
        ])
        .is_empty());
    }

    #[test]
    fn one_launch_under_two_names_is_medium_and_names_both() {
        let got = found(&[
            config(
                "files",
                ".mcp.json",
                r#"{"command": "npx", "args": ["-y", "fs@1", "/p"]}"#,
            ),
            config(
                "fs",
                ".cursor/mcp.json",
                r#"{"command": "npx", "args": ["-y", "fs@1", "/p"]}"#,
            ),
            config(
                "other",
                ".cursor/mcp.json",
                r#"{"command": "npx", "args": ["-y", "fs@1", "/q"]}"#,
            ),
        ]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, Severity::Medium);
        assert_eq!(got[0].1, "fs");
        assert!(
            got[0].2.contains("same launch as `files` in .mcp.json"),
            "{}",
            got[0].2
        );
    }
}
