//! Counts that agree (issue 24): every number one run prints is the same
//! count wherever it appears, in text, in JSON, in SARIF, in the summary
//! line and in the commit it makes.

use std::path::Path;

use crate::common::{copy, git, json, kams, real, repo, text};

fn samples() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

const DEMO: [&str; 4] = [
    "--lock",
    "samples/kams.lock",
    "--inventory",
    "samples/inventory-drifted",
];

#[test]
fn a_scan_counts_the_same_findings_in_text_json_and_sarif() {
    let run = |format: &str| {
        let o = kams(samples())
            .args(DEMO)
            .args(["--format", format, "scan"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        o.stdout
    };
    let report = json(&run("json"));
    let findings = report["findings"].as_array().unwrap();
    let total = report["summary"]["total"].as_u64().unwrap() as usize;
    assert_eq!(findings.len(), total);
    let by: Vec<(String, usize)> = ["critical", "high", "medium", "low", "info"]
        .iter()
        .map(|s| {
            let n = findings.iter().filter(|f| f["severity"] == *s).count();
            assert_eq!(report["summary"]["by_severity"][*s], n as u64, "{s}");
            (s.to_string(), n)
        })
        .collect();
    let sarif = json(&run("sarif"));
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), total);
    // The text report: a line per finding (two spaces, then its
    // severity), each entry's header counting its own, and a summary line
    // with the same numbers.
    let out = text(&run("text"));
    let lines: Vec<&str> = out.lines().collect();
    let summary = lines.last().unwrap();
    let parts: Vec<String> = by
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{n} {s}"))
        .collect();
    assert_eq!(*summary, format!("{total} findings: {}", parts.join(", ")));
    let finding_lines = lines
        .iter()
        .filter(|l| {
            ["critical", "high", "medium", "low", "info"]
                .iter()
                .any(|s| l.starts_with(&format!("  {s} ")))
        })
        .count();
    assert_eq!(finding_lines, total, "{out}");
    let in_headers: usize = lines
        .iter()
        .filter_map(|l| l.split_once("): ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(in_headers, total, "{out}");
}

#[test]
fn pin_counts_what_it_approved_as_its_commit_does() {
    let r = repo();
    let d = r.path();
    copy(
        &real("mcp-server-time@0.6.2.json"),
        d,
        ".kams/inventory/time.json",
    );
    let o = kams(d).args(["pin", "-m", "first"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    let entries = lines
        .iter()
        .filter(|l| {
            l.starts_with("pinned ") || l.starts_with("re-pinned ") || l.starts_with("removed ")
        })
        .count();
    let launches = lines.iter().filter(|l| l.starts_with("launch ")).count();
    assert_eq!((entries, launches), (3, 1), "{out}");
    let summary = lines.last().unwrap();
    assert!(
        summary.starts_with(&format!(
            "approved by Rita Reviewer <rita@example.com> ({entries} entries, {launches} launch): committed "
        )),
        "{summary}"
    );
    assert!(
        summary.ends_with("(kams.lock and 1 inventory file)"),
        "{summary}"
    );
    assert_eq!(
        git(d, &["log", "-1", "--format=%s"]).trim(),
        format!("kams: approve {entries} entries and {launches} launch of mcp-server-time")
    );
    assert_eq!(
        git(d, &["show", "--name-only", "--format=", "HEAD"]),
        ".kams/inventory/time.json\nkams.lock\n"
    );
    // log lists as many changes as pin printed.
    let report = json(
        &kams(d)
            .args(["--format", "json", "log"])
            .output()
            .unwrap()
            .stdout,
    );
    assert_eq!(
        report["commits"][0]["changes"].as_array().unwrap().len(),
        entries + launches
    );
}
