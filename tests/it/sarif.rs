//! `--format sarif`: the output validates against the official SARIF 2.1.0
//! schema (tests/fixtures/sarif-schema-2.1.0.json) with Python's
//! `jsonschema`, carries every finding of the JSON report with the same
//! rule and level, points at the right file and line, and keeps its
//! fingerprints from run to run.

use std::path::Path;

use crate::common::{corpus, json, kams, py_tools};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `scan` of the README demo in `format`: (exit status, stdout).
fn demo(format: &str, inventory: &str) -> (Option<i32>, Vec<u8>) {
    let out = kams(root())
        .args(["--lock", "samples/kams.lock", "--inventory", inventory])
        .args(["--format", format, "scan"])
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), out.stdout)
}

/// Validates `doc` with the validator the schema's `$schema` names; the
/// validator's error, if any.
fn validate(doc: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.sarif");
    std::fs::write(&file, doc).unwrap();
    let out = std::process::Command::new(py_tools().join("python"))
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             schema = json.load(open(sys.argv[1]))\n\
             cls = jsonschema.validators.validator_for(schema)\n\
             cls.check_schema(schema)\n\
             cls(schema).validate(json.load(open(sys.argv[2])))\n\
             print(cls.__name__)",
        ])
        .arg(root().join("tests/fixtures/sarif-schema-2.1.0.json"))
        .arg(&file)
        .output()
        .unwrap();
    if out.status.success() {
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "Draft4Validator"
        );
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn results(sarif: &serde_json::Value) -> &Vec<serde_json::Value> {
    sarif["runs"][0]["results"].as_array().unwrap()
}

fn level(severity: &str) -> &'static str {
    match severity {
        "critical" | "high" => "error",
        "medium" => "warning",
        _ => "note",
    }
}

#[test]
fn demo_sarif_validates_and_carries_every_json_finding() {
    let (code, out) = demo("sarif", "samples/inventory-drifted");
    let (json_code, json_out) = demo("json", "samples/inventory-drifted");
    assert_eq!(code, Some(1));
    assert_eq!(code, json_code, "--fail-on does not depend on the format");
    validate(&out).unwrap();
    // The validator is not a rubber stamp.
    let mut broken = json(&out);
    broken["version"] = "2.0.0".into();
    assert!(validate(serde_json::to_string(&broken).unwrap().as_bytes()).is_err());

    let sarif = json(&out);
    let findings = json(&json_out)["findings"].as_array().unwrap().clone();
    let results = results(&sarif);
    assert_eq!(results.len(), findings.len());
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), 14, "one rule per class");
    for (f, r) in findings.iter().zip(results) {
        let class = f["class"].as_str().unwrap();
        let severity = f["severity"].as_str().unwrap();
        assert_eq!(r["ruleId"], format!("kams/{class}"));
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert_eq!(r["level"], level(severity), "{f}");
        assert_eq!(r["properties"]["severity"], severity);
        let text = r["message"]["text"].as_str().unwrap();
        let message = f["message"].as_str().unwrap();
        assert!(
            text.contains(&git_kams::text::escape_display(message)),
            "{text}"
        );
        let location = &r["locations"][0];
        let artifact = &location["physicalLocation"]["artifactLocation"];
        let uri = artifact["uri"].as_str().unwrap();
        assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
        assert!(!uri.starts_with('/') && !uri.contains(':'), "{uri}");
        assert!(root().join(uri).is_file(), "{uri}");
        let subject = match f["tool"].as_str() {
            Some(t) => format!("{}/{t}", f["server"].as_str().unwrap()),
            None => f["server"].as_str().unwrap().to_string(),
        };
        assert_eq!(
            location["logicalLocations"][0]["fullyQualifiedName"],
            subject
        );
    }
    for rule in rules {
        let tags = rule["properties"]["tags"].as_array().unwrap();
        assert_eq!(tags[0], "security");
        let score: f64 = rule["properties"]["security-severity"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((0.0..=10.0).contains(&score));
    }
}

#[test]
fn sarif_points_at_the_line_of_the_value() {
    let (_, out) = demo("sarif", "samples/inventory-drifted");
    let sarif = json(&out);
    let helper =
        std::fs::read_to_string(root().join("samples/inventory-drifted/helper.json")).unwrap();
    // The duplicate key: the reader keeps the second `description`, and so
    // does the location.
    let second = helper
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("\"description\""))
        .map(|(i, _)| i + 1)
        .nth(1)
        .unwrap();
    let dup = results(&sarif)
        .iter()
        .find(|r| r["ruleId"] == "kams/ambiguous")
        .unwrap();
    let at = &dup["locations"][0]["physicalLocation"];
    assert_eq!(
        at["artifactLocation"]["uri"],
        "samples/inventory-drifted/helper.json"
    );
    assert_eq!(at["region"]["startLine"], second);
    assert_eq!(
        dup["locations"][0]["properties"]["jsonPointer"],
        "/tools/0/description"
    );

    // A removed tool points at its block in the lock; a drifted one has
    // the lock entry as a related location.
    let lock = std::fs::read_to_string(root().join("samples/kams.lock")).unwrap();
    let line_of = |needle: &str| lock.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let removed = results(&sarif)
        .iter()
        .find(|r| r["ruleId"] == "kams/removed")
        .unwrap();
    let at = &removed["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"]["uri"], "samples/kams.lock");
    assert_eq!(at["region"]["startLine"], line_of("\"list_directory\": {"));
    let drift = results(&sarif)
        .iter()
        .find(|r| {
            r["ruleId"] == "kams/drift"
                && r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
                    == "files/write_file"
        })
        .unwrap();
    let related = &drift["relatedLocations"][0]["physicalLocation"];
    assert_eq!(related["artifactLocation"]["uri"], "samples/kams.lock");
    assert_eq!(related["region"]["startLine"], line_of("\"write_file\": {"));
}

#[test]
fn sarif_is_deterministic_and_fingerprints_follow_the_entry() {
    let (_, a) = demo("sarif", "samples/inventory-drifted");
    let (_, b) = demo("sarif", "samples/inventory-drifted");
    assert_eq!(a, b, "same input, same bytes");
    let fingerprints = |out: &[u8]| -> Vec<(String, String)> {
        results(&json(out))
            .iter()
            .map(|r| {
                (
                    format!(
                        "{} {} {}",
                        r["ruleId"],
                        r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
                        r["properties"]["field"]
                    ),
                    r["partialFingerprints"]["kamsEntry/v1"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect()
    };
    let drifted = fingerprints(&a);
    let mut unique: Vec<&String> = drifted.iter().map(|(_, f)| f).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), drifted.len(), "one fingerprint per result");
    // Another inventory, the same unapproved entry: the same fingerprint,
    // although nothing else of the run is alike.
    let (_, clean) = demo("sarif", "samples/inventory");
    let clean = fingerprints(&clean);
    let unapproved = |list: &[(String, String)]| {
        list.iter()
            .find(|(k, _)| k.contains("kams/unapproved") && k.contains("\"notes/search_nodes\""))
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(unapproved(&drifted), unapproved(&clean));
}

#[test]
fn sarif_of_an_attack_escapes_every_hidden_character() {
    let dir = tempfile::tempdir().unwrap();
    let attack = corpus().join("attacks/synthetic-unicode-tags.json");
    let out = kams(dir.path())
        .args(["--lock", "kams.lock", "--inventory"])
        .arg(&attack)
        .args(["--format", "sarif", "scan"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    validate(&out.stdout).unwrap();
    let text = String::from_utf8(out.stdout.clone()).expect("UTF-8");
    assert!(
        !text
            .chars()
            .any(|c| c != '\n' && git_kams::text::is_concealing(c)),
        "a concealing character reached the output raw"
    );
    let sarif = json(&out.stdout);
    assert!(results(&sarif)
        .iter()
        .any(|r| r["ruleId"] == "kams/hidden" && r["level"] == "error"));
    // Outside the work tree, the inventory is named by an absolute URI.
    let uri = results(&sarif)[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(uri.starts_with("file:///"), "{uri}");
}

#[test]
fn commands_without_findings_refuse_sarif() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["status"][..], &["log"][..], &["blame"][..], &["init"][..]] {
        kams(dir.path())
            .args(["--lock", "k.lock", "--format", "sarif"])
            .args(args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("reports no findings"));
    }
}
