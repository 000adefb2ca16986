//! The text report a reviewer reads once (issue 24): findings grouped by
//! entry, each entry's header with its state and worst severity, a line
//! per server and the total. Pinned by insta snapshots, on the README demo
//! and on three real release pairs of the corpus (an upgrade, a downgrade,
//! a long jump), so that a change in what a reviewer sees is a reviewed
//! diff.

use std::path::Path;

use crate::common::{kams, real, text};

/// `scan` of release `to` against a lock pinned from `from`, as text; the
/// files are copied under short names so that the report names no
/// machine's paths.
fn pinned_then_scanned(server: &str, from: &str, to: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(real(&format!("{server}@{from}.json")), d.join("old.json")).unwrap();
    std::fs::copy(real(&format!("{server}@{to}.json")), d.join("new.json")).unwrap();
    let o = kams(d)
        .args([
            "--lock",
            "k.lock",
            "--inventory",
            "old.json",
            "pin",
            "-m",
            "reviewed",
        ])
        .args(["--approver", "R <r@example.com>", "--accept-findings"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = kams(d)
        .args([
            "--lock",
            "k.lock",
            "--inventory",
            "new.json",
            "scan",
            "--fail-on",
            "never",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn the_demo_report_is_grouped_by_entry() {
    let o = kams(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args([
            "--lock",
            "samples/kams.lock",
            "--inventory",
            "samples/inventory-drifted",
            "scan",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("report_demo", text(&o.stdout));
}

#[test]
fn a_filesystem_downgrade_reads_entry_by_entry() {
    insta::assert_snapshot!(
        "report_filesystem_2026.8.31_to_2025.7.1",
        pinned_then_scanned("server-filesystem", "2026.8.31", "2025.7.1")
    );
}

#[test]
fn an_everything_upgrade_reads_entry_by_entry() {
    insta::assert_snapshot!(
        "report_everything_2025.7.1_to_2026.8.31",
        pinned_then_scanned("server-everything", "2025.7.1", "2026.8.31")
    );
}

#[test]
fn a_long_git_jump_reads_entry_by_entry() {
    insta::assert_snapshot!(
        "report_git_0.6.2_to_2026.10.19",
        pinned_then_scanned("mcp-server-git", "0.6.2", "2026.10.19")
    );
}
