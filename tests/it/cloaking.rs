//! Cloaking (issue 27, item 2): `capture --as` captures each server once
//! per client identity; a server that answers by client name is a high
//! `cloaking` finding naming the identities and the fields, and an honest
//! one captured as several clients gives none. The fake server's `cloak`
//! mode poisons what it tells `claude-code` only.

use serde_json::json as value;

use crate::capture::{capture_file, config, fake, run};
use crate::common::{kams, repo, text};

/// The `cloaking` findings of a JSON scan of the captures.
fn cloaking(dir: &std::path::Path) -> Vec<serde_json::Value> {
    crate::common::findings_of(dir, "cloaking")
}

#[test]
fn a_server_that_answers_by_client_name_is_caught_with_the_identities_named() {
    let repo = repo();
    let d = repo.path();
    config(d, &[("notes", fake("cloak", &[]))]);
    let o = run(
        d,
        &["capture", "--yes", "--as", "git-kams,claude-code,vscode"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stderr);
    assert!(
        said.contains("warning: `notes`: answers claude-code otherwise than git-kams: instructions, tools/read_notes (scan reports a high cloaking finding)"),
        "{said}"
    );
    let (_, file) = capture_file(d, "notes");
    assert_eq!(
        file["capturedAs"],
        value!(["git-kams", "claude-code", "vscode"])
    );
    assert_eq!(
        file["cloaking"],
        value!([{"as": "claude-code", "clientInfo": "claude-code", "differs": ["instructions", "tools/read_notes"]}])
    );
    // The file holds what git-kams was told.
    assert_eq!(
        file["instructions"],
        "A fake server for git-kams tests (mode cloak)."
    );
    let found = cloaking(d);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "high");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "`notes` told claude-code otherwise than git-kams: instructions, tools/read_notes"
        ),
        "{message}"
    );
    // pin refuses it like any gated class.
    let o = kams(d).args(["pin", "-m", "reviewed"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("cloaking"), "{}", text(&o.stdout));
}

#[test]
fn an_honest_server_captured_as_several_clients_gives_no_finding() {
    let repo = repo();
    let d = repo.path();
    config(
        d,
        &[("one", fake("ok", &[])), ("notes", fake("cloak", &[]))],
    );
    // Neither of these identities is claude-code: the cloaking server
    // answers both alike, and so does the honest one.
    let o = run(d, &["capture", "--yes", "--as", "cursor,vscode,codex"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("otherwise than"),
        "{}",
        text(&o.stderr)
    );
    let (_, file) = capture_file(d, "one");
    assert_eq!(file["capturedAs"], value!(["cursor", "vscode", "codex"]));
    assert!(file.get("cloaking").is_none());
    assert!(cloaking(d).is_empty());
    // Without --as the capture file says nothing of identities, as before.
    let o = run(d, &["capture", "--yes", "one"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(capture_file(d, "one").1.get("capturedAs").is_none());
}

#[test]
fn an_unknown_identity_is_refused_before_anything_runs() {
    let repo = repo();
    let d = repo.path();
    config(d, &[("one", fake("ok", &[]))]);
    let o = run(d, &["capture", "--yes", "--as", "cursor,emacs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("`emacs` is no client capture knows"),
        "{}",
        text(&o.stderr)
    );
    assert!(!d.join(".kams/inventory/one.json").exists());
}
