//! Real drift between published releases: pin the older version, scan the
//! newer, and compare with the corpus' own account of what changed
//! (`drift-summary.json`).

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{corpus, json, kams, real};

type Fields = BTreeMap<String, BTreeSet<String>>;

struct Scan {
    findings: Vec<serde_json::Value>,
}

impl Scan {
    fn of(class: &str, findings: &[serde_json::Value]) -> BTreeSet<String> {
        findings
            .iter()
            .filter(|f| f["class"] == class && f["tool"].is_string())
            .map(|f| f["tool"].as_str().unwrap().to_string())
            .collect()
    }

    fn changed(&self) -> Fields {
        let mut out = Fields::new();
        for f in self
            .findings
            .iter()
            .filter(|f| f["class"] == "drift" && f["tool"].is_string())
        {
            let field = f["field"].as_str().expect("drift names its field");
            let top = field
                .split('/')
                .nth(1)
                .expect("pointer has a first segment")
                .to_string();
            out.entry(f["tool"].as_str().unwrap().to_string())
                .or_default()
                .insert(top);
        }
        out
    }
}

fn pin_then_scan(server: &str, from: &str, to: &str) -> Scan {
    let dir = tempfile::tempdir().unwrap();
    let old = real(&format!("{server}@{from}.json"));
    let new = real(&format!("{server}@{to}.json"));
    kams(dir.path())
        .args(["--lock", "k.lock", "--inventory"])
        .arg(&old)
        .args(["pin", "-m", "reviewed", "--approver", "R <r@example.com>"])
        .assert()
        .success();
    let out = kams(dir.path())
        .args(["--lock", "k.lock", "--format", "json", "--inventory"])
        .arg(&new)
        .arg("scan")
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out.stdout);
    Scan {
        findings: report["findings"].as_array().unwrap().clone(),
    }
}

/// The top-level descriptor field a drift-summary entry is about; `None`
/// for fields that are not digested (`execution`: how a client runs the
/// tool, not what the model reads).
fn summary_field(entry: &str) -> Option<String> {
    let head = entry
        .split(':')
        .next()
        .unwrap()
        .trim_start_matches(['+', '-', '~']);
    (head != "execution").then(|| head.to_string())
}

#[test]
fn every_release_pair_matches_the_drift_summary() {
    let text = std::fs::read(corpus().join("drift-summary.json")).unwrap();
    let pairs: Vec<serde_json::Value> = serde_json::from_slice(&text).unwrap();
    assert!(
        pairs.len() >= 15,
        "drift-summary lists every consecutive pair"
    );
    for pair in &pairs {
        let (server, from, to) = (
            pair["server"].as_str().unwrap(),
            pair["from"].as_str().unwrap(),
            pair["to"].as_str().unwrap(),
        );
        let label = format!("{server} {from} -> {to}");
        let scan = pin_then_scan(server, from, to);
        let set = |k: &str| -> BTreeSet<String> {
            pair[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            Scan::of("added", &scan.findings),
            set("added"),
            "{label}: added"
        );
        assert_eq!(
            Scan::of("removed", &scan.findings),
            set("removed"),
            "{label}: removed"
        );
        let mut expected = Fields::new();
        for (tool, entries) in pair["changed"].as_object().unwrap() {
            for e in entries.as_array().unwrap() {
                if let Some(f) = summary_field(e.as_str().unwrap()) {
                    expected.entry(tool.clone()).or_default().insert(f);
                }
            }
        }
        assert_eq!(
            scan.changed(),
            expected,
            "{label}: changed tools and fields"
        );
        for tool in set("unchanged") {
            assert!(
                !scan.findings.iter().any(|f| f["tool"] == tool.as_str()),
                "{label}: unchanged tool {tool} has a finding"
            );
        }
    }
}

#[test]
fn filesystem_0_5_1_to_0_6_2_reports_nothing() {
    let scan = pin_then_scan("server-filesystem", "0.5.1", "0.6.2");
    assert!(scan.findings.is_empty(), "{:#?}", scan.findings);
}

#[test]
fn sequential_thinking_booleans_becoming_boolean_or_string_is_widened() {
    let scan = pin_then_scan("server-sequential-thinking", "0.6.2", "2026.8.31");
    for prop in ["nextThoughtNeeded", "isRevision", "needsMoreThoughts"] {
        let field = format!("/inputSchema/properties/{prop}/type");
        let f = scan
            .findings
            .iter()
            .find(|f| f["field"] == field.as_str())
            .unwrap_or_else(|| panic!("no finding at {field}"));
        assert!(f["message"].as_str().unwrap().contains("widened"), "{f}");
        assert_eq!(f["severity"], "medium", "{f}");
    }
}

#[test]
fn git_schema_titles_only_is_low() {
    let scan = pin_then_scan("mcp-server-git", "2026.10.10", "2026.10.19");
    assert!(!scan.findings.is_empty(), "the title moves are reported");
    for f in &scan.findings {
        assert_eq!(f["severity"], "low", "{f}");
    }
}

#[test]
fn annotations_title_and_output_schema_changes_are_reported() {
    let scan = pin_then_scan("server-filesystem", "2025.7.1", "2026.7.10");
    let fields: BTreeSet<String> = scan.changed().into_values().flatten().collect();
    for f in ["annotations", "title", "outputSchema"] {
        assert!(fields.contains(f), "{f} drift not reported: {fields:?}");
    }
}

#[test]
fn fetch_bounds_rewritten_for_integers_are_cosmetic() {
    let scan = pin_then_scan("mcp-server-fetch", "0.6.2", "2026.10.24");
    let bounds: Vec<_> = scan
        .findings
        .iter()
        .filter(|f| {
            f["field"]
                .as_str()
                .unwrap_or("")
                .starts_with("/inputSchema/properties/max_length/")
        })
        .filter(|f| f["field"].as_str().unwrap().contains("imum"))
        .collect();
    assert!(!bounds.is_empty());
    for f in bounds {
        assert_eq!(f["severity"], "low", "{f}");
        assert!(
            f["message"].as_str().unwrap().contains("same effect"),
            "{f}"
        );
    }
}

/// One finding per fact (issue 24): across every ordered pair of releases
/// of each real server (upgrades and downgrades), no two findings share an
/// entry, a field and a class.
#[test]
fn no_field_change_is_reported_by_two_findings() {
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in std::fs::read_dir(corpus().join("real")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some((server, v)) = name.strip_suffix(".json").and_then(|n| n.split_once('@')) {
            versions
                .entry(server.to_string())
                .or_default()
                .push(v.to_string());
        }
    }
    let mut pairs = 0;
    let mut twice = Vec::new();
    for (server, vs) in &versions {
        for from in vs {
            for to in vs.iter().filter(|v| *v != from) {
                pairs += 1;
                let scan = pin_then_scan(server, from, to);
                let mut seen = BTreeSet::new();
                for f in &scan.findings {
                    let key = (
                        f["tool"].to_string(),
                        f["field"].to_string(),
                        f["class"].to_string(),
                    );
                    if !seen.insert(key.clone()) {
                        twice.push(format!("{server} {from} -> {to}: {key:?}"));
                    }
                }
            }
        }
    }
    assert!(pairs >= 40, "{pairs} pairs");
    assert!(twice.is_empty(), "{}", twice.join("\n"));
}

/// A bare `tools/list` result carries no server information (issue 24):
/// against a lock pinned from a full capture, its server-level fields are
/// not compared (said once, as a note), and pinning from it changes
/// nothing the capture approved.
#[test]
fn a_bare_tools_list_leaves_the_server_fields_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |inventory: &std::path::Path, args: &[&str]| {
        kams(d)
            .args([
                "--lock",
                "k.lock",
                "--server",
                "mcp-server-time",
                "--inventory",
            ])
            .arg(inventory)
            .args(args)
            .output()
            .unwrap()
    };
    let full = real("mcp-server-time@0.6.2.json");
    let bare = corpus().join("real/raw/mcp-server-time@0.6.2.tools-list.jsonl");
    let o = run(
        &full,
        &["pin", "-m", "reviewed", "--approver", "R <r@example.com>"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = std::fs::read(d.join("k.lock")).unwrap();
    let o = run(&bare, &["--format", "json", "scan"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(json(&o.stdout)["findings"], serde_json::json!([]));
    assert_eq!(
        stderr
            .matches("note: the input shows no server-level fields for mcp-server-time")
            .count(),
        1,
        "{stderr}"
    );
    let o = run(
        &bare,
        &[
            "pin",
            "mcp-server-time",
            "-m",
            "again",
            "--approver",
            "R <r@example.com>",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("nothing to pin"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(std::fs::read(d.join("k.lock")).unwrap(), before);
}
