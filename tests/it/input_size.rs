//! `--max-input-size` and `kams.maxInputSize` at their boundaries, and the
//! one reader that used to read without the cap (`textconv`): every input
//! git-kams reads is read up to the cap and one byte, never more, and a
//! cap of any size, the largest included, means what it says.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::{git, json, kams, repo, text};

/// A capture file of one server with one tool.
const CAPTURE: &str =
    r#"{"server": "notes", "tools": [{"name": "read_note", "description": "Reads a note."}]}"#;

fn scan(dir: &Path, pre: &[&str]) -> Output {
    kams(dir)
        .args(pre)
        .args(["--inventory", "notes.json", "status", "--format", "json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// The tools `status` lists, as `server/tool`.
fn listed(out: &Output) -> Vec<String> {
    let v = json(&out.stdout);
    let mut names = Vec::new();
    for e in v["entries"].as_array().into_iter().flatten() {
        if let Some(t) = e["tool"].as_str() {
            names.push(format!("{}/{t}", e["server"].as_str().unwrap_or("")));
        }
    }
    names
}

#[test]
fn the_largest_max_input_size_reads_every_file_whole_not_as_empty() {
    let repo = repo();
    let dir = repo.path();
    std::fs::write(dir.join("notes.json"), CAPTURE).unwrap();
    let size = CAPTURE.len().to_string();
    let below = (CAPTURE.len() - 1).to_string();
    // u64::MAX once overflowed `cap + 1` to 0: every file read as empty.
    for cap in ["18446744073709551615", "18446744073709551614", &size, "1g"] {
        let out = scan(dir, &["--max-input-size", cap]);
        assert_eq!(out.status.code(), Some(0), "{cap}: {}", text(&out.stderr));
        assert_eq!(listed(&out), ["notes/read_note"], "{cap}");
    }
    for cap in ["0", "1", &below] {
        let out = scan(dir, &["--max-input-size", cap]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cap}: {stderr}");
        assert!(
            stderr.contains(&format!("size cap of {cap} bytes")),
            "{cap}: {stderr}"
        );
    }
    // The same values through git config.
    for (cap, code) in [("18446744073709551615", 0), ("1k", 0), ("0", 2)] {
        git(dir, &["config", "kams.maxInputSize", cap]);
        let out = scan(dir, &[]);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{cap}: {}",
            text(&out.stderr)
        );
        if code == 0 {
            assert_eq!(listed(&out), ["notes/read_note"], "{cap}");
        }
    }
    // A size past u64 is an error, not a wrap.
    for cap in ["18446744073709551616", "18014398509481984k", "-1", "1t"] {
        let out = scan(dir, &["--max-input-size", cap]);
        assert_eq!(out.status.code(), Some(2), "{cap}: {}", text(&out.stderr));
    }
}

#[test]
fn textconv_of_dev_zero_stops_at_the_cap() {
    let repo = repo();
    let dir = repo.path();
    // A device is refused before it is read (docs/security.md); the cap
    // is for regular files larger than it.
    let out = kams(dir).args(["textconv", "/dev/zero"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is a device"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(dir.join("big"), vec![b'x'; (1 << 20) + 1]).unwrap();
    let start = Instant::now();
    let out = kams(dir)
        .args(["--max-input-size", "1m", "textconv", "big"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("big") && stderr.contains("size cap of 1048576 bytes"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing printed of a refused input");
    // Not a benchmark: an uncapped read of /dev/zero never ends.
    assert!(start.elapsed() < Duration::from_secs(30));

    // git config's cap applies without the option.
    git(dir, &["config", "kams.maxInputSize", "4k"]);
    std::fs::write(dir.join("small"), "x".repeat(4097)).unwrap();
    let out = kams(dir).args(["textconv", "small"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("size cap of 4096 bytes"));
    std::fs::write(dir.join("small"), "x".repeat(4096)).unwrap();
    let out = kams(dir).args(["textconv", "small"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout.len(), 4096);
}

/// A committed inventory larger than the cap is refused unread, by `scan
/// --inventory-at` and by the hooks (a pushed blob is untrusted input).
#[test]
fn a_committed_inventory_past_the_cap_is_refused_unread() {
    let repo = repo();
    let dir = repo.path();
    let inv = dir.join(".kams/inventory");
    std::fs::create_dir_all(&inv).unwrap();
    let big = CAPTURE.replace("Reads a note.", &"x".repeat(4096));
    std::fs::write(inv.join("notes.json"), big).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "big inventory"]);
    git(dir, &["config", "kams.maxInputSize", "1k"]);
    let out = kams(dir)
        .args(["scan", "--inventory-at", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("larger than the input size cap of 1024 bytes"),
        "{}",
        text(&out.stderr)
    );
    let head = git(dir, &["rev-parse", "HEAD"]);
    let out = kams(dir)
        .args(["hook", "pre-receive"])
        .write_stdin(format!(
            "{} {} refs/heads/main\n",
            "0".repeat(40),
            head.trim()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("larger than the input size cap"),
        "{}",
        text(&out.stderr)
    );
}
