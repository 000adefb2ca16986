//! No control byte a user or a server typed reaches a terminal raw: not
//! through clap's usage errors (which quote the bad argument), not through
//! the approval commit's message (which `git log` prints as it is).

use crate::common::{git, kams, repo};
use crate::hooks::inventory;

/// The bytes of `text` that would drive a terminal: controls other than
/// the line feed, and DEL.
fn raw_controls(text: &[u8]) -> Vec<u8> {
    text.iter()
        .copied()
        .filter(|&b| (b < 0x20 && b != b'\n') || b == 0x7f)
        .collect()
}

#[test]
fn clap_usage_errors_escape_the_bytes_of_a_bad_argument() {
    let d = repo();
    for args in [
        vec!["--format", "x\u{1b}[31m\u{7}\r", "scan"],
        vec!["bo\u{1b}]0;owned\u{7}gus"],
        vec!["scan", "--no-such-flag\u{1b}[2J"],
    ] {
        // As on a terminal: clap would colour, and copy the bytes as typed.
        let out = kams(d.path())
            .env("CLICOLOR_FORCE", "1")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            raw_controls(&out.stderr),
            b"",
            "{args:?}: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stderr).unwrap();
        assert!(
            text.starts_with("error: ") && text.contains("\\u{1B}"),
            "{text}"
        );
    }
    // Help is clap's own text, and still exit 0.
    kams(d.path()).arg("--help").assert().success();
}

#[test]
fn the_pin_commit_message_carries_the_note_escaped() {
    let d = repo();
    let d = d.path();
    inventory(d, "mcp-server-time@0.6.2.json");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory"]);
    kams(d)
        .args([
            "pin",
            "-m",
            "looks fine\u{1b}[2K\u{1b}[1A\u{7}\rreviewed by nobody\nsecond line",
        ])
        .assert()
        .success();
    let message = git(d, &["log", "-1", "--format=%B"]);
    assert_eq!(raw_controls(message.as_bytes()), b"", "{message:?}");
    assert!(
        message.contains(
            "looks fine\\u{1B}[2K\\u{1B}[1A\\u{7}\\u{D}reviewed by nobody\nsecond line\n"
        ),
        "{message}"
    );
    let trailers = git(
        d,
        &[
            "log",
            "-1",
            "--format=%(trailers:key=Signed-off-by,valueonly)",
        ],
    );
    assert_eq!(trailers.trim(), "Rita Reviewer <rita@example.com>");
}

/// A server name is text the model reads (clients prefix every tool name
/// with it) and the user approves: hidden characters in it are found as
/// in any other text, and shown escaped.
#[test]
fn hidden_characters_in_a_server_name_are_a_hidden_finding() {
    let d = repo();
    let dir = d.path().join("inv");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("a.json"),
        r#"{"servers": [{"name": "files\u200b", "transport": "stdio", "tools": [{"name": "read", "description": "Read a file."}]}]}"#,
    )
    .unwrap();
    let out = kams(d.path())
        .args([
            "--inventory",
            "inv",
            "--format",
            "json",
            "scan",
            "--fail-on",
            "never",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hidden: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "hidden")
        .collect();
    assert_eq!(hidden.len(), 1, "{report}");
    assert_eq!(hidden[0]["severity"], "high");
    assert_eq!(hidden[0]["server"], "files\u{200b}");
    assert!(hidden[0]["tool"].is_null());
    assert!(hidden[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("hidden characters in the server name: "));
    let text = kams(d.path())
        .args(["--inventory", "inv", "scan", "--fail-on", "never"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("files\\u{200B}"), "{text}");
    assert!(!text.contains('\u{200b}'), "{text}");
}
