//! `git kams log` and `git kams blame` over a real history: pins by
//! different approvers on distinct dates, an unrelated commit, a partial
//! re-pin, a branch and a merge, a hand re-indent, a signed commit, a
//! shallow clone, a corrupt lock, and git's own log as the oracle for which
//! commits changed the lock.

use std::path::Path;
use std::process::Command;

use crate::common::{copy, git, json, kams, real, repo};

/// Runs git as `who` (author, committer and so sign-off) at `date`.
pub(crate) fn git_as(dir: &Path, who: &str, date: &str, args: &[&str]) -> String {
    let email = format!("{}@example.com", who.to_lowercase());
    let out = Command::new("git")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", who)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_COMMITTER_NAME", who)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn head(dir: &Path) -> String {
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

fn short(dir: &Path, id: &str) -> String {
    git(dir, &["rev-parse", "--short", id]).trim().to_string()
}

/// Writes the lock with `git kams pin --no-commit` as `who`.
pub(crate) fn pin(dir: &Path, who: &str, note: &str, keys: &[&str]) {
    let approver = format!("{who} <{}@example.com>", who.to_lowercase());
    kams(dir)
        .args(["pin", "--no-commit", "-m", note, "--approver", &approver])
        .args(keys)
        .assert()
        .success();
}

/// Commits everything as `who` at `date`, signed off; returns the id.
pub(crate) fn commit(dir: &Path, who: &str, date: &str, message: &str) -> String {
    git_as(dir, who, date, &["add", "-A"]);
    git_as(dir, who, date, &["commit", "-q", "-s", "-m", message]);
    head(dir)
}

/// Rewrites HEAD with a `gpgsig` header that no key made: git-kams shows
/// it as unverified (tests/it/signatures.rs makes real signatures).
fn add_signature_header(dir: &Path) -> String {
    let raw = git(dir, &["cat-file", "commit", "HEAD"]);
    let (headers, message) = raw.split_once("\n\n").unwrap();
    let signed = format!(
        "{headers}\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQ==\n -----END SSH SIGNATURE-----\n\n{message}"
    );
    let path = dir.join(".git/signed-commit");
    std::fs::write(&path, signed).unwrap();
    let id = git(
        dir,
        &["hash-object", "-t", "commit", "-w", path.to_str().unwrap()],
    )
    .trim()
    .to_string();
    std::fs::remove_file(&path).unwrap();
    git(dir, &["update-ref", "HEAD", &id]);
    id
}

/// The commits of the story, by role.
pub(crate) struct Story {
    dir: tempfile::TempDir,
    /// Initial commit, no lock.
    c0: String,
    /// Alice pins server-memory 0.6.2 (every entry).
    a: String,
    /// Unrelated commit (README).
    u: String,
    /// Bob re-pins two tools after memory 2026.8.31 arrives.
    b: String,
    /// On `side`: Carol pins server-sequential-thinking.
    t: String,
    /// On `main`: Dave pins mcp-server-fetch (a signed commit).
    d: String,
    /// Rita merges `side` into `main`.
    m: String,
    /// Erin re-indents kams.lock with 4 spaces and reverses its tool order.
    r: String,
}

impl Story {
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

pub(crate) fn story() -> Story {
    let dir = repo();
    let p = dir.path();
    std::fs::write(p.join("README"), "servers\n").unwrap();
    let c0 = commit(p, "Rita", "2026-01-01T12:00:00Z", "Initial commit");

    copy(
        &real("server-memory@0.6.2.json"),
        p,
        ".kams/inventory/server-memory.json",
    );
    pin(p, "Alice", "reviewed memory 0.6.2", &[]);
    let a = commit(
        p,
        "Alice",
        "2026-01-02T00:00:00Z",
        "Pin server-memory 0.6.2",
    );

    std::fs::write(p.join("README"), "servers we use\n").unwrap();
    let u = commit(p, "Bob", "2026-01-03T00:00:00Z", "Describe the servers");

    copy(
        &real("server-memory@2026.8.31.json"),
        p,
        ".kams/inventory/server-memory.json",
    );
    pin(
        p,
        "Bob",
        "read_graph and create_entities as of 2026.8.31",
        &["server-memory/read_graph", "server-memory/create_entities"],
    );
    let b = commit(p, "Bob", "2026-01-04T00:00:00Z", "Re-pin two memory tools");

    git(p, &["checkout", "-q", "-b", "side"]);
    copy(
        &real("server-sequential-thinking@0.6.2.json"),
        p,
        ".kams/inventory/server-sequential-thinking.json",
    );
    pin(
        p,
        "Carol",
        "thinking tool reviewed",
        &["server-sequential-thinking"],
    );
    let t = commit(
        p,
        "Carol",
        "2026-01-05T00:00:00Z",
        "Pin sequential thinking",
    );

    git(p, &["checkout", "-q", "main"]);
    copy(
        &real("mcp-server-fetch@0.6.2.json"),
        p,
        ".kams/inventory/mcp-server-fetch.json",
    );
    pin(p, "Dave", "fetch reviewed", &["mcp-server-fetch"]);
    commit(p, "Dave", "2026-01-06T00:00:00Z", "Pin fetch");
    let d = add_signature_header(p);

    git_as(
        p,
        "Rita",
        "2026-01-07T00:00:00Z",
        &[
            "merge",
            "-q",
            "--no-ff",
            "--signoff",
            "-m",
            "Merge side",
            "side",
        ],
    );
    let m = head(p);

    let script = r#"
import json, sys
with open(sys.argv[1]) as f:
    lock = json.load(f)
for server in lock["servers"].values():
    server["tools"] = dict(reversed(list(server["tools"].items())))
with open(sys.argv[1], "w") as f:
    json.dump(lock, f, indent=4)
    f.write("\n")
"#;
    let status = Command::new("python3")
        .args(["-c", script, p.join("kams.lock").to_str().unwrap()])
        .status()
        .expect("python3 runs");
    assert!(status.success());
    let r = commit(p, "Erin", "2026-01-08T00:00:00Z", "Re-indent kams.lock");

    Story {
        dir,
        c0,
        a,
        u,
        b,
        t,
        d,
        m,
        r,
    }
}

fn log_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = kams(dir)
        .args(["--format", "json", "log"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

fn ids(report: &serde_json::Value) -> Vec<String> {
    report["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn changes(commit: &serde_json::Value) -> Vec<(String, String)> {
    commit["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let subject = match c["tool"].as_str() {
                Some(t) => format!("{}/{t}", c["server"].as_str().unwrap()),
                None => c["server"].as_str().unwrap().to_string(),
            };
            (c["kind"].as_str().unwrap().to_string(), subject)
        })
        .collect()
}

#[test]
fn log_lists_the_commits_that_changed_entries_newest_first() {
    let s = story();
    let report = log_json(s.path(), &[]);
    assert_eq!(report["version"], 3);
    // Not listed: the initial and unrelated commits (no lock change) and
    // the re-indent (a new blob, but no entry changed).
    assert_eq!(
        ids(&report),
        vec![
            s.m.as_str(),
            s.d.as_str(),
            s.t.as_str(),
            s.b.as_str(),
            s.a.as_str()
        ],
        "{report:#}"
    );
    let commits = report["commits"].as_array().unwrap();
    let approvers: Vec<&serde_json::Value> = commits.iter().map(|c| &c["approvers"]).collect();
    assert_eq!(
        approvers,
        [
            &serde_json::json!(["Rita <rita@example.com>"]),
            &serde_json::json!(["Dave <dave@example.com>"]),
            &serde_json::json!(["Carol <carol@example.com>"]),
            &serde_json::json!(["Bob <bob@example.com>"]),
            &serde_json::json!(["Alice <alice@example.com>"]),
        ]
    );
    let signed: Vec<&str> = commits
        .iter()
        .map(|c| c["signature"].as_str().unwrap())
        .collect();
    assert_eq!(
        signed,
        ["unsigned", "unverified", "unsigned", "unsigned", "unsigned"]
    );
    assert_eq!(commits[3]["subject"], "Re-pin two memory tools");
    assert_eq!(commits[3]["author"], "Bob <bob@example.com>");
    assert_eq!(commits[3]["date"], "2026-01-04T00:00:00Z");
    assert!(commits.iter().all(|c| c["error"].is_null()));

    // Alice pinned every entry of server-memory, its server entry first,
    // and with it the launch of its capture file.
    let alice = changes(&commits[4]);
    assert_eq!(alice.len(), 11, "{alice:?}");
    assert_eq!(alice[0], ("pinned".into(), "server-memory".into()));
    assert_eq!(alice[1], ("launch recorded".into(), "server-memory".into()));
    assert!(alice[2..].iter().all(|(k, _)| k == "pinned"));
    assert_eq!(commits[4]["changes"][0]["note"], "reviewed memory 0.6.2");

    // Bob re-pinned exactly the two tools he named, with the changed fields.
    assert_eq!(
        changes(&commits[3]),
        vec![
            ("re-pinned".into(), "server-memory/create_entities".into()),
            ("re-pinned".into(), "server-memory/read_graph".into()),
        ]
    );
    for c in commits[3]["changes"].as_array().unwrap() {
        assert_eq!(
            c["fields"],
            serde_json::json!(["annotations", "inputSchema", "outputSchema", "title"])
        );
        assert_eq!(c["approver"], "Bob <bob@example.com>");
    }

    assert_eq!(
        changes(&commits[2]),
        vec![
            ("pinned".into(), "server-sequential-thinking".into()),
            (
                "launch recorded".into(),
                "server-sequential-thinking".into()
            ),
            (
                "pinned".into(),
                "server-sequential-thinking/sequentialthinking".into()
            )
        ]
    );
    assert_eq!(
        changes(&commits[1]),
        vec![
            ("pinned".into(), "mcp-server-fetch".into()),
            ("launch recorded".into(), "mcp-server-fetch".into()),
            ("pinned".into(), "mcp-server-fetch/fetch".into())
        ]
    );
    // The merge differs from both parents; described against the first
    // (main), it brought in what the side branch pinned.
    assert_eq!(changes(&commits[0]), changes(&commits[2]));
    assert_eq!(
        commits[0]["changes"][0]["approver"],
        "Carol <carol@example.com>"
    );
    assert_eq!(report["notes"], serde_json::json!([]));
}

#[test]
fn log_lists_what_git_log_lists_for_the_lock_except_layout_only_changes() {
    let s = story();
    let git_ids: Vec<String> = git(s.path(), &["log", "--format=%H", "--", "kams.lock"])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(git_ids[0], s.r, "git lists the re-indent");
    assert_eq!(ids(&log_json(s.path(), &[])), git_ids[1..]);

    // A merge that keeps main's lock (`-s ours`) is TREESAME to its first
    // parent: git follows only that parent, so the side branch's pin is not
    // in the history of the lock, and neither is the merge.
    let p = s.path();
    git(p, &["checkout", "-q", "-b", "other", &s.u]);
    copy(
        &real("mcp-server-time@0.6.2.json"),
        p,
        ".kams/inventory/mcp-server-time.json",
    );
    pin(p, "Frank", "time reviewed", &["mcp-server-time"]);
    let f = commit(p, "Frank", "2026-01-09T00:00:00Z", "Pin time");
    git(p, &["checkout", "-q", "main"]);
    git_as(
        p,
        "Rita",
        "2026-01-10T00:00:00Z",
        &[
            "merge",
            "-q",
            "-s",
            "ours",
            "-m",
            "Merge other, keep ours",
            "other",
        ],
    );
    let git_ids: Vec<String> = git(p, &["log", "--format=%H", "--", "kams.lock"])
        .lines()
        .map(str::to_string)
        .collect();
    assert!(!git_ids.contains(&f));
    assert_eq!(ids(&log_json(p, &[])), git_ids[1..]);
    // From the other branch's tip, Frank's pin is there.
    assert_eq!(ids(&log_json(p, &["--at", "other"]))[0], f);
}

#[test]
fn log_text_names_commit_approver_signature_and_each_change() {
    let s = story();
    let out = kams(s.path()).arg("log").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let expected_head = format!(
        "commit    {} {}\ndate      2026-01-04T00:00:00Z\nauthor    Bob <bob@example.com>\napprover  Bob <bob@example.com>\nsignature unsigned\nsubject   Re-pin two memory tools\n    re-pinned   server-memory/create_entities  fields: annotations, inputSchema, outputSchema, title  approver: Bob <bob@example.com>  note: read_graph and create_entities as of 2026.8.31\n",
        short(s.path(), &s.b),
        s.b
    );
    assert!(text.contains(&expected_head), "{text}");
    assert!(text.contains(&format!("commit    {} {}\n", short(s.path(), &s.d), s.d)));
    assert!(
        text.contains("signature unverified: an ssh signature, and git config gpg.ssh.allowedSignersFile is not set, so nobody can tell whose key made it\nsubject   Pin fetch\n"),
        "{text}"
    );
    for absent in [&s.r, &s.u, &s.c0] {
        assert!(!text.contains(absent.as_str()), "{absent} listed:\n{text}");
    }
    assert!(!text.lines().any(|l| l.starts_with("note:")), "{text}");
}

#[test]
fn log_max_count_since_and_until() {
    let s = story();
    let p = s.path();
    assert_eq!(
        ids(&log_json(p, &["-n", "2"])),
        vec![s.m.as_str(), s.d.as_str()]
    );
    assert_eq!(
        ids(&log_json(p, &["--max-count", "0"])),
        Vec::<String>::new()
    );
    assert_eq!(
        ids(&log_json(p, &["--since", "2026-01-05"])),
        vec![s.m.as_str(), s.d.as_str(), s.t.as_str()]
    );
    assert_eq!(
        ids(&log_json(p, &["--until", "2026-01-04T00:00:00Z"])),
        vec![s.b.as_str(), s.a.as_str()]
    );
    assert_eq!(
        ids(&log_json(
            p,
            &[
                "--since",
                "2026-01-04",
                "--until",
                "2026-01-05T00:00:00Z",
                "-n",
                "5"
            ]
        )),
        vec![s.t.as_str(), s.b.as_str()]
    );
    assert_eq!(
        ids(&log_json(
            p,
            &["--until", "2026-01-05T12:00:00Z", "-n", "1"]
        )),
        vec![s.t.as_str()]
    );
    // Relative dates count back from now (SOURCE_DATE_EPOCH in tests).
    let out = kams(p)
        .env("SOURCE_DATE_EPOCH", "1768003200") // 2026-01-10T00:00:00Z
        .args(["--format", "json", "log", "--since", "4 days ago"])
        .output()
        .unwrap();
    assert_eq!(ids(&json(&out.stdout)), vec![s.m.as_str(), s.d.as_str()]);

    let out = kams(p)
        .args(["log", "--since", "not a date"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--since `not a date` is not a date"));
}

#[test]
fn log_keys_select_commits_and_lines() {
    let s = story();
    let p = s.path();
    let report = log_json(p, &["server-memory/read_graph"]);
    assert_eq!(ids(&report), vec![s.b.as_str(), s.a.as_str()]);
    for c in report["commits"].as_array().unwrap() {
        assert_eq!(
            changes(c).into_iter().map(|(_, s)| s).collect::<Vec<_>>(),
            vec!["server-memory/read_graph".to_string()]
        );
    }
    assert_eq!(ids(&log_json(p, &["mcp-server-fetch"])), vec![s.d.as_str()]);
    assert_eq!(
        ids(&log_json(
            p,
            &["server-sequential-thinking", "mcp-server-fetch/fetch"]
        )),
        vec![s.m.as_str(), s.d.as_str(), s.t.as_str()]
    );
    let report = log_json(p, &["server-memory/nonexistent"]);
    assert_eq!(ids(&report), Vec::<String>::new());
    assert_eq!(
        report["notes"],
        serde_json::json!([
            "no commit reachable from HEAD changed the selected entries of kams.lock"
        ])
    );
}

#[test]
fn log_json_keys_come_in_the_documented_order() {
    let s = story();
    let out = kams(s.path())
        .args(["--format", "json", "log", "-n", "1", "--at", &s.b])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let at = |k: &str| {
        text.find(&format!("\"{k}\":"))
            .unwrap_or_else(|| panic!("{k}: {text}"))
    };
    let order = [
        "version",
        "commits",
        "id",
        "date",
        "author",
        "approvers",
        "malformed_sign_offs",
        "signature",
        "signers",
        "signature_problem",
        "subject",
        "changes",
        "kind",
        "server",
        "tool",
        "fields",
    ];
    for w in order.windows(2) {
        assert!(at(w[0]) < at(w[1]), "{} before {}: {text}", w[0], w[1]);
    }
}

fn blame_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = kams(dir)
        .args(["--format", "json", "blame"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

/// `subject -> (commit, approver)` of a blame report.
/// The entries' rows of a JSON blame (launches have their own test).
fn blamed(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["state"] != "launch")
        .map(|e| {
            let subject = match e["tool"].as_str() {
                Some(t) => format!("{}/{t}", e["server"].as_str().unwrap()),
                None => e["server"].as_str().unwrap().to_string(),
            };
            (
                subject,
                e["commit"].as_str().unwrap().to_string(),
                e["approver"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

#[test]
fn blame_names_the_commit_and_approver_of_each_entry_through_reindent_and_merge() {
    let s = story();
    let report = blame_json(s.path(), &[]);
    assert_eq!(report["version"], 3);
    assert_eq!(report["at"], s.r.as_str());
    let rows = blamed(&report);
    let alice = (s.a.clone(), "Alice <alice@example.com>".to_string());
    let bob = (s.b.clone(), "Bob <bob@example.com>".to_string());
    let dave = (s.d.clone(), "Dave <dave@example.com>".to_string());
    let carol = (s.t.clone(), "Carol <carol@example.com>".to_string());
    let expected: Vec<(String, (String, String))> = vec![
        ("mcp-server-fetch".into(), dave.clone()),
        ("mcp-server-fetch/fetch".into(), dave),
        ("server-memory".into(), alice.clone()),
        ("server-memory/add_observations".into(), alice.clone()),
        ("server-memory/create_entities".into(), bob.clone()),
        ("server-memory/create_relations".into(), alice.clone()),
        ("server-memory/delete_entities".into(), alice.clone()),
        ("server-memory/delete_observations".into(), alice.clone()),
        ("server-memory/delete_relations".into(), alice.clone()),
        ("server-memory/open_nodes".into(), alice.clone()),
        ("server-memory/read_graph".into(), bob),
        ("server-memory/search_nodes".into(), alice),
        ("server-sequential-thinking".into(), carol.clone()),
        (
            "server-sequential-thinking/sequentialthinking".into(),
            carol,
        ),
    ];
    let got: Vec<(String, (String, String))> =
        rows.into_iter().map(|(s, c, a)| (s, (c, a))).collect();
    assert_eq!(got, expected);

    let entries: Vec<&serde_json::Value> = report["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["state"] != "launch")
        .collect();
    let fetch = entries[1];
    assert_eq!(fetch["tool"], "fetch");
    assert_eq!(fetch["state"], "pinned");
    assert_eq!(fetch["signature"], "unverified");
    assert_eq!(
        fetch["signed_off_by"],
        serde_json::json!(["Dave <dave@example.com>"])
    );
    assert_eq!(fetch["note"], "fetch reviewed");
    assert_eq!(fetch["commit_subject"], "Pin fetch");
    assert_eq!(fetch["date"], "2026-01-06T00:00:00Z");
    assert_eq!(fetch["boundary"], false);
    assert!(entries
        .iter()
        .all(|e| e["commit"] != s.r.as_str() && e["commit"] != s.m.as_str()));

    // The same answers before the re-indent and on the side branch.
    assert_eq!(
        blamed(&blame_json(s.path(), &["--at", &s.m])),
        blamed(&report)
    );
    let side = blamed(&blame_json(
        s.path(),
        &[
            "--at",
            "side",
            "server-sequential-thinking/sequentialthinking",
        ],
    ));
    assert_eq!(
        side,
        vec![(
            "server-sequential-thinking/sequentialthinking".to_string(),
            s.t.clone(),
            "Carol <carol@example.com>".to_string()
        )]
    );
    // Before Bob's re-pin every memory entry is Alice's.
    let before = blamed(&blame_json(s.path(), &["--at", &s.u]));
    assert_eq!(before.len(), 10);
    assert_eq!(before[0].0, "server-memory");
    assert!(before.iter().all(|(_, c, _)| *c == s.a));
}

#[test]
fn blame_text_is_one_line_per_entry() {
    let s = story();
    let out = kams(s.path())
        .args([
            "blame",
            "server-memory/read_graph",
            "mcp-server-fetch/fetch",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        format!(
            "{} 2026-01-06T00:00:00Z unverified pinned      mcp-server-fetch/fetch  approver: Dave <dave@example.com>  signed-off-by: Dave <dave@example.com>  note: fetch reviewed\n\
             {} 2026-01-04T00:00:00Z unsigned   pinned      server-memory/read_graph  approver: Bob <bob@example.com>  signed-off-by: Bob <bob@example.com>  note: read_graph and create_entities as of 2026.8.31\n",
            short(s.path(), &s.d),
            short(s.path(), &s.b)
        )
    );
}

#[test]
fn blame_errors_name_the_file_and_revision() {
    let s = story();
    let out = kams(s.path())
        .args(["blame", "--at", &s.c0])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "kams.lock does not exist at {} (commit {})",
            s.c0, s.c0
        )),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = kams(s.path())
        .args(["blame", "no-such-server"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("`no-such-server` names no server or tool of kams.lock at HEAD"));

    let out = kams(s.path())
        .args(["blame", "--at", "no-such-rev"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`no-such-rev` names no commit"));
    let out = kams(s.path())
        .args(["log", "--at", "no-such-rev"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`no-such-rev` names no commit"));

    let outside = tempfile::tempdir().unwrap();
    for command in ["log", "blame"] {
        let out = kams(outside.path()).arg(command).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("needs a git repository"));
    }
}

#[test]
fn shallow_clone_log_and_blame_stop_at_the_boundary_with_a_note() {
    let s = story();
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", s.path().display());
    git(
        clone.path(),
        &["clone", "-q", "--depth", "2", &url, "shallow"],
    );
    let p = clone.path().join("shallow");
    assert_eq!(
        git(&p, &["rev-parse", "--is-shallow-repository"]).trim(),
        "true"
    );

    let out = kams(&p).arg("log").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("note: history is shallow: stops at {}\n", s.m)
    );

    // Depth 3 keeps the merge's parents: the merge is listed, then the note.
    git(
        clone.path(),
        &["clone", "-q", "--depth", "3", &url, "deeper"],
    );
    let report = log_json(&clone.path().join("deeper"), &[]);
    assert_eq!(ids(&report), vec![s.m.as_str()]);
    let notes = report["notes"].as_array().unwrap();
    assert!(notes.contains(&serde_json::json!(format!(
        "history is shallow: stops at {}",
        s.d
    ))));

    // Blame gives the boundary what it cannot see past, and says so.
    let report = blame_json(&p, &[]);
    for e in report["entries"].as_array().unwrap() {
        assert_eq!(e["commit"], s.m.as_str());
        assert_eq!(e["boundary"], true);
    }
    let out = kams(&p)
        .args(["blame", "mcp-server-fetch"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("^{} ", short(&p, &s.m))),
        "{text}"
    );
    assert!(text.ends_with(&format!(
        "note: history is shallow: entries marked ^ may be older than {}\n",
        s.m
    )));
}

#[test]
fn log_and_blame_agree_with_and_without_a_commit_graph() {
    let s = story();
    let log = kams(s.path()).arg("log").output().unwrap().stdout;
    let blame = kams(s.path()).arg("blame").output().unwrap().stdout;
    git(s.path(), &["commit-graph", "write", "--reachable"]);
    assert!(s.path().join(".git/objects/info/commit-graph").exists());
    assert_eq!(kams(s.path()).arg("log").output().unwrap().stdout, log);
    assert_eq!(kams(s.path()).arg("blame").output().unwrap().stdout, blame);
}

#[test]
fn a_repository_without_commits_has_an_empty_log() {
    let dir = repo();
    let out = kams(dir.path()).arg("log").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "note: no commits yet: kams.lock has no history\n"
    );
    let report = log_json(dir.path(), &[]);
    assert_eq!(report["commits"], serde_json::json!([]));

    // blame says the same, not a rev-spec error (issue 24).
    let out = kams(dir.path()).arg("blame").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "note: no commits yet: kams.lock has no history
"
    );
}

#[test]
fn a_corrupt_lock_in_history_is_reported_not_fatal() {
    let dir = repo();
    let p = dir.path();
    copy(
        &real("mcp-server-fetch@0.6.2.json"),
        p,
        ".kams/inventory/fetch.json",
    );
    pin(p, "Alice", "fetch reviewed", &[]);
    let a = commit(p, "Alice", "2026-01-02T00:00:00Z", "Pin fetch");
    let good = std::fs::read(p.join("kams.lock")).unwrap();
    std::fs::write(p.join("kams.lock"), &good[..good.len() / 2]).unwrap();
    let x = commit(p, "Bob", "2026-01-03T00:00:00Z", "Oops");
    std::fs::write(p.join("kams.lock"), &good).unwrap();
    let f = commit(p, "Bob", "2026-01-04T00:00:00Z", "Restore kams.lock");
    // Well-formed JSON, but the description no longer matches its digest.
    let text = String::from_utf8(good).unwrap();
    assert!(text.contains("Fetches a URL"));
    std::fs::write(
        p.join("kams.lock"),
        text.replacen("Fetches a URL", "Fetches any URL", 1),
    )
    .unwrap();
    let y = commit(p, "Mallory", "2026-01-05T00:00:00Z", "Tweak wording");

    let report = log_json(p, &[]);
    assert_eq!(
        ids(&report),
        vec![y.as_str(), f.as_str(), x.as_str(), a.as_str()]
    );
    let commits = report["commits"].as_array().unwrap();
    let err = commits[0]["error"].as_str().unwrap();
    assert!(
        err.starts_with("kams.lock cannot be read here: ")
            && err.contains("(JSON pointer /servers/mcp-server-fetch/tools/fetch"),
        "{err}"
    );
    let err = commits[2]["error"].as_str().unwrap();
    assert!(
        err.starts_with("kams.lock cannot be read here: not valid JSON"),
        "{err}"
    );
    assert_eq!(commits[2]["changes"], serde_json::json!([]));
    let err = commits[1]["error"].as_str().unwrap();
    assert!(
        err.contains(&format!("cannot be read at the parent {x}")),
        "{err}"
    );
    assert!(commits[3]["error"].is_null());

    // Blame refuses a corrupt lock at the revision asked for.
    let out = kams(p).arg("blame").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("HEAD:kams.lock: corrupt lock"));

    // Blame cannot see through the corrupt version, and says so.
    let report = blame_json(p, &["--at", &f]);
    assert_eq!(report["entries"][0]["commit"], f.as_str());
    let notes = report["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(notes[0]
        .as_str()
        .unwrap()
        .contains(&format!("kams.lock at {x} cannot be read")));
}

/// Commits of one committer time (a script, a bot, a quick rebase) are
/// listed children first: the walk orders them by generation, not by id,
/// which could put a parent ahead of its own child (found by the frozen
/// snapshots of issue 25). Every test repository here has one time.
#[test]
fn log_never_lists_a_commit_before_one_of_its_descendants() {
    let dir = repo();
    let d = dir.path();
    // The lock's merge driver, so that the two branches' pins merge.
    kams(d).arg("init").assert().success();
    git(d, &["add", ".gitattributes"]);
    git(d, &["commit", "-q", "-m", "attributes"]);
    let pin = |file: &str, rel: &str, note: &str| {
        copy(&real(file), d, rel);
        kams(d).args(["pin", "-m", note]).assert().success();
    };
    pin(
        "mcp-server-time@0.6.2.json",
        ".kams/inventory/time.json",
        "time",
    );
    git(d, &["checkout", "-q", "-b", "side"]);
    pin(
        "mcp-server-fetch@0.6.2.json",
        ".kams/inventory/fetch.json",
        "fetch",
    );
    pin(
        "mcp-server-fetch@2026.10.24.json",
        ".kams/inventory/fetch.json",
        "fetch 2",
    );
    git(d, &["checkout", "-q", "main"]);
    pin(
        "mcp-server-time@2026.10.19.json",
        ".kams/inventory/time.json",
        "time 2",
    );
    pin(
        "mcp-server-git@0.6.2.json",
        ".kams/inventory/git.json",
        "git",
    );
    let o = crate::common::with_kams_on_path("git", d)
        .args(["merge", "-q", "--no-edit", "side"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let check = |how: &str| {
        let report = log_json(d, &[]);
        let listed: Vec<String> = report["commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect();
        assert!(listed.len() >= 5, "{how}: {report}");
        for (i, earlier) in listed.iter().enumerate() {
            for later in &listed[i + 1..] {
                let o = crate::common::hermetic_command("git", d)
                    .args(["merge-base", "--is-ancestor", earlier, later])
                    .output()
                    .unwrap();
                assert!(
                    !o.status.success(),
                    "{how}: {earlier} is listed before its descendant {later}: {listed:?}"
                );
            }
        }
        listed
    };
    let walked = check("generations found by walking");
    // With a commit-graph, its generation numbers serve (the log cache
    // is bypassed, so that the walk runs again).
    git(d, &["commit-graph", "write", "--reachable"]);
    git(d, &["config", "kams.logCache", "false"]);
    assert_eq!(check("generations from the commit-graph"), walked);
}
