//! `git kams capture` and `scan --capture` against a fake MCP server,
//! tests/fixtures/mcp_server.py: each way a server goes wrong (crash,
//! hang, garbage on stdout, a 20 MB answer, requests of its own, a
//! grandchild process) is one argument, so every failure is reproducible
//! without installing anything. A capture must read back as an inventory
//! holding byte for byte what the server sent, one bad server must not
//! cost the others, and no process may outlive the command.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json as value, Value};

use crate::common::{git, json, kams, repo, text};

/// The fake server script.
pub(crate) fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_server.py")
}

/// The Python interpreter itself, for the environment test: `python3` on
/// PATH may be a version manager's shim, a shell script that adds
/// variables of its own before it starts Python.
fn python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).trim().to_string()
    })
}

/// The tool objects of the `ok` mode, as the server writes them.
fn raw_tools() -> Vec<String> {
    let out = std::process::Command::new("python3")
        .arg(fixture())
        .arg("print-tools")
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(tools.len(), 3);
    tools
}

/// A `.mcp.json` entry that runs the fake server in `mode`, with `env`.
pub(crate) fn fake(mode: &str, env: &[(&str, &str)]) -> Value {
    let mut entry = value!({"command": "python3", "args": [fixture(), mode]});
    if !env.is_empty() {
        entry["env"] = env
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    entry
}

/// Writes `rel` (a client config) naming `servers`, under `key`
/// (`mcpServers`, or `servers` for VS Code).
pub(crate) fn config_at(dir: &Path, rel: &str, key: &str, servers: &[(&str, Value)]) {
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(name, entry)| (name.to_string(), entry.clone()))
        .collect();
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        serde_json::to_string_pretty(&value!({ key: map })).unwrap(),
    )
    .unwrap();
}

/// Writes `.mcp.json` at the top of the work tree.
pub(crate) fn config(dir: &Path, servers: &[(&str, Value)]) {
    config_at(dir, ".mcp.json", "mcpServers", servers);
}

/// Runs `git kams ARGS` without a terminal (stdin is an empty pipe), and
/// kills it if it runs for two minutes: a capture that hangs is a failure
/// here, not a stuck test run.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Output {
    kams(dir)
        .args(args)
        .write_stdin("")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

/// The default output folder.
pub(crate) const INVENTORY: &str = ".kams/inventory";

/// A capture file: its text and its value.
pub(crate) fn capture_file(dir: &Path, server: &str) -> (String, Value) {
    let path = dir.join(INVENTORY).join(format!("{server}.json"));
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed = json(raw.as_bytes());
    (raw, parsed)
}

/// The names of the files in the default output folder.
pub(crate) fn written(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(dir.join(INVENTORY)) {
        Err(_) => return Vec::new(),
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
    };
    names.sort();
    names
}

fn tool_names(capture: &Value) -> Vec<&str> {
    capture["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The `error: capture of `NAME` failed: ...` line for `server`.
pub(crate) fn failure<'a>(stderr: &'a str, server: &str) -> &'a str {
    let head = format!("error: capture of `{server}` failed:");
    stderr
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no `{head}` line in:\n{stderr}"))
}

/// The findings of a JSON report as (class, subject, field).
fn findings(out: &Output) -> Vec<(String, String, String)> {
    json(&out.stdout)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let subject = match f["tool"].as_str() {
                Some(tool) => format!("{}/{tool}", f["server"].as_str().unwrap()),
                None => f["server"].as_str().unwrap().to_string(),
            };
            (
                f["class"].as_str().unwrap().to_string(),
                subject,
                f["field"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn has(found: &[(String, String, String)], class: &str, subject: &str, field: &str) -> bool {
    found
        .iter()
        .any(|(c, s, f)| c == class && s == subject && f == field)
}

/// The messages the fake server logged (MCP_FAKE_LOG), one per line.
fn log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| json(l.as_bytes()))
        .collect()
}

fn methods(log: &[Value]) -> Vec<&str> {
    log.iter().filter_map(|m| m["method"].as_str()).collect()
}

/// The pids a fake server wrote (MCP_FAKE_PIDFILE).
fn pids(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Whether `pid` is still one of ours and running. Gone means no
/// /proc entry or a zombie (PID 1 in a container may never reap an
/// orphan); the command line is checked so that a reused pid is not
/// mistaken for a survivor.
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmdline = text(&cmdline);
    !zombie && (cmdline.contains("mcp_server.py") || cmdline.starts_with("sleep"))
}

/// The processes of `pids` still running a moment after the command
/// ended. Survivors are killed before returning, so that a failing test
/// leaves nothing behind either.
fn survivors(pids: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            for pid in &left {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A folder outside the repository for the fake servers' pid and log files.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn capture_writes_each_server_as_sent_and_it_reads_back_as_an_inventory() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let notes_log = tmp.path().join("notes.log");
    let paged_log = tmp.path().join("paged.log");
    let rich_log = tmp.path().join("rich.log");
    config(
        dir,
        &[
            (
                "notes",
                fake("ok", &[("MCP_FAKE_LOG", path_str(&notes_log))]),
            ),
            (
                "paged",
                fake("paged", &[("MCP_FAKE_LOG", path_str(&paged_log))]),
            ),
            (
                "rich",
                fake("rich", &[("MCP_FAKE_LOG", path_str(&rich_log))]),
            ),
        ],
    );

    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(written(dir), ["notes.json", "paged.json", "rich.json"]);
    // One line per captured server.
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    for server in ["notes", "paged", "rich"] {
        assert!(
            stdout.lines().any(|l| l.contains(server)),
            "{server}: {stdout}"
        );
    }

    let (raw, notes) = capture_file(dir, "notes");
    assert_eq!(notes["server"], "notes");
    assert_eq!(notes["transport"], "stdio");
    assert_eq!(notes["command"], value!(["python3", fixture(), "ok"]));
    assert_eq!(notes["env"], value!({"MCP_FAKE_LOG": path_str(&notes_log)}));
    assert_eq!(notes["protocolVersion"], "2025-11-25");
    assert_eq!(
        notes["serverInfo"],
        value!({"name": "fake-ok", "version": "1.0.0"})
    );
    assert_eq!(notes["capabilities"], value!({"tools": {}}));
    assert_eq!(
        notes["instructions"],
        "A fake server for git-kams tests (mode ok)."
    );
    assert!(notes["capturedAt"].as_str().is_some(), "{raw}");
    assert_eq!(
        tool_names(&notes),
        ["read_note", "list_notes", "delete_note"]
    );
    // The tool objects are the server's bytes: its spacing and key order,
    // the duplicate key, `\u200b` escaped, `1.50` and `0E0` spelt as sent.
    for tool in raw_tools() {
        assert!(raw.contains(&tool), "not verbatim: {tool}\nin:\n{raw}");
    }

    // The handshake: initialize at the latest protocol version, then the
    // initialized notification, then tools/list; prompts and resources
    // only from the server that advertises them.
    let notes_log = log(&notes_log);
    assert_eq!(
        methods(&notes_log),
        ["initialize", "notifications/initialized", "tools/list"]
    );
    assert_eq!(notes_log[0]["params"]["protocolVersion"], "2025-11-25");
    let rich_log = log(&rich_log);
    for method in ["tools/list", "prompts/list", "resources/list"] {
        assert!(methods(&rich_log).contains(&method), "{rich_log:?}");
    }
    let (rich_raw, rich) = capture_file(dir, "rich");
    assert_eq!(
        rich["capabilities"],
        value!({"tools": {}, "prompts": {}, "resources": {}})
    );
    for listed in ["summarise_notes", "notes://index"] {
        assert!(rich_raw.contains(listed), "{listed} not in:\n{rich_raw}");
    }

    // Every page, in order, each asked for with the cursor of the last.
    let (_, paged) = capture_file(dir, "paged");
    assert_eq!(
        tool_names(&paged),
        [
            "page_one_a",
            "page_one_b",
            "page_two_a",
            "page_two_b",
            "page_three_a"
        ]
    );
    let cursors: Vec<Value> = log(&paged_log)
        .iter()
        .filter(|m| m["method"] == "tools/list")
        .map(|m| m["params"]["cursor"].clone())
        .collect();
    assert_eq!(cursors, [Value::Null, "cursor-2".into(), "cursor-3".into()]);

    // The files are an inventory: recorded, then scanned without drift;
    // the duplicate key and the zero-width characters are found, and
    // `notes` and `rich` (the same fake server twice) shadow each other.
    kams(dir).arg("record").assert().success();
    let out = run(dir, &["--format", "json", "scan"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let found = findings(&out);
    assert!(
        found.iter().all(|(class, _, _)| [
            "unapproved",
            "ambiguous",
            "hidden",
            "transport",
            "shadow"
        ]
        .contains(&class.as_str())),
        "{found:?}"
    );
    assert!(
        has(&found, "ambiguous", "notes/list_notes", "/description"),
        "{found:?}"
    );
    assert!(
        has(&found, "hidden", "notes/delete_note", "/description"),
        "{found:?}"
    );
}

#[test]
fn each_fault_fails_its_server_only() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[
            ("good", fake("ok", &[])),
            ("crash", fake("crash", &[])),
            ("garbage-only", fake("garbage-only", &[])),
            ("huge", fake("huge", &[])),
        ],
    );

    let out = run(
        dir,
        &[
            "--max-input-size",
            "1048576",
            "capture",
            "--yes",
            "--timeout",
            "10",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(written(dir), ["good.json"], "{stderr}");
    assert_eq!(text(&out.stdout).lines().count(), 1);

    let crash = failure(&stderr, "crash");
    assert!(crash.contains("exited"), "{crash}");
    let garbage = failure(&stderr, "garbage-only");
    assert!(
        garbage.contains("initialize") || garbage.contains("JSON-RPC"),
        "{garbage}"
    );
    let huge = failure(&stderr, "huge");
    assert!(huge.contains("over 1048576 bytes"), "{huge}");
}

#[test]
fn a_20_mb_answer_under_the_cap_is_captured() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("huge", fake("huge", &[]))]);
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (_, huge) = capture_file(dir, "huge");
    assert_eq!(
        huge["tools"][0]["description"].as_str().unwrap().len(),
        20 * 1024 * 1024
    );
}

#[test]
fn garbage_lines_on_stdout_are_skipped_with_a_warning() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("noisy", fake("garbage", &[]))]);
    let out = run(dir, &["capture", "--yes", "--timeout", "20"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning"), "{stderr}");
    let (raw, noisy) = capture_file(dir, "noisy");
    assert_eq!(
        tool_names(&noisy),
        ["read_note", "list_notes", "delete_note"]
    );
    for tool in raw_tools() {
        assert!(raw.contains(&tool), "not verbatim: {tool}");
    }
}

#[test]
fn a_server_that_hangs_times_out_and_is_killed() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let pidfile = tmp.path().join("hang.pid");
    config(
        dir,
        &[
            ("good", fake("ok", &[])),
            (
                "hang",
                fake("hang", &[("MCP_FAKE_PIDFILE", path_str(&pidfile))]),
            ),
        ],
    );

    let start = Instant::now();
    let out = run(dir, &["capture", "--yes", "--timeout", "2"]);
    let took = start.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        failure(&stderr, "hang").contains("timed out after"),
        "{stderr}"
    );
    assert_eq!(written(dir), ["good.json"]);
    // Not a benchmark: a bound ten times the timeout only tells a timeout
    // that works from one that is ignored (the default is 30 s).
    assert!(took < Duration::from_secs(20), "took {took:?}");
    // The server ignores SIGTERM and the end of its input.
    assert_eq!(survivors(&pids(&pidfile)), Vec::<u32>::new());
}

#[test]
fn no_process_outlives_a_capture() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let pidfile = tmp.path().join("grandchild.pid");
    config(
        dir,
        &[(
            "parent",
            fake("grandchild", &[("MCP_FAKE_PIDFILE", path_str(&pidfile))]),
        )],
    );
    let out = run(dir, &["capture", "--yes", "--timeout", "20"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let pids = pids(&pidfile);
    assert_eq!(pids.len(), 2, "server and grandchild");
    assert_eq!(survivors(&pids), Vec::<u32>::new());
    assert_eq!(written(dir), ["parent.json"]);
}

#[test]
fn requests_from_the_server_are_answered_or_declined() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let log_path = tmp.path().join("asks.log");
    config(
        dir,
        &[(
            "asks",
            fake("asks", &[("MCP_FAKE_LOG", path_str(&log_path))]),
        )],
    );
    let out = run(dir, &["capture", "--yes", "--timeout", "20"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning"), "{stderr}");
    let (_, asks) = capture_file(dir, "asks");
    assert_eq!(
        tool_names(&asks),
        ["read_note", "list_notes", "delete_note"]
    );

    let log = log(&log_path);
    let answer = |id: &str| -> &Value {
        log.iter()
            .find(|m| m["id"] == id && m.get("method").is_none())
            .unwrap_or_else(|| panic!("no answer to {id}: {log:?}"))
    };
    // roots/list: an empty list.
    assert_eq!(answer("ask-0")["result"], value!({"roots": []}));
    // sampling/createMessage: declined, never a made-up completion.
    let sampling = answer("ask-1");
    assert!(
        sampling.get("error").is_some() && sampling.get("result").is_none(),
        "{sampling}"
    );
    // elicitation/create: declined (an error, or the `decline` action).
    let elicitation = answer("ask-2");
    assert!(
        elicitation.get("error").is_some() || elicitation["result"]["action"] == "decline",
        "{elicitation}"
    );
    // ping: answered.
    assert_eq!(answer("ask-3")["result"], value!({}));
}

#[test]
fn the_server_gets_a_minimal_environment() {
    let repo = repo();
    let dir = repo.path();
    let mut entry = fake("env", &[("KAMS_TEST_PLAIN", "plain")]);
    entry["command"] = python().into();
    config(dir, &[("env", entry)]);
    let out = kams(dir)
        .args(["capture", "--yes"])
        .env("SECRET_TOKEN", "x")
        .env("USER", "tester")
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", std::env::temp_dir())
        .env("EDITOR", "vi")
        .write_stdin("")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (_, env) = capture_file(dir, "env");
    // The caller had these and the hermetic GIT_*, TZ and
    // SOURCE_DATE_EPOCH too: only the base names and the config's own
    // variables may reach the server.
    assert_eq!(
        env["tools"][0]["description"],
        "names: HOME KAMS_TEST_PLAIN LANG LC_ALL PATH TERM TMPDIR USER"
    );
}

#[test]
fn config_env_is_expanded_for_the_server_and_kept_unexpanded_in_the_file() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[(
            "env",
            fake(
                "env",
                &[
                    ("KAMS_TEST_PLAIN", "plain"),
                    ("KAMS_TEST_EXPANDED", "${KAMS_CALLER_VAR}"),
                ],
            ),
        )],
    );
    let out = kams(dir)
        .args(["capture", "--yes"])
        .env("KAMS_CALLER_VAR", "from-the-caller")
        .write_stdin("")
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (_, env) = capture_file(dir, "env");
    assert_eq!(
        env["tools"][1]["description"],
        "values: KAMS_TEST_EXPANDED=from-the-caller KAMS_TEST_PLAIN=plain"
    );
    // The caller's variable is used, not passed on.
    assert!(!env["tools"][0]["description"]
        .as_str()
        .unwrap()
        .contains("KAMS_CALLER_VAR"));
    assert_eq!(
        env["env"],
        value!({"KAMS_TEST_PLAIN": "plain", "KAMS_TEST_EXPANDED": "${KAMS_CALLER_VAR}"})
    );
}

#[test]
fn without_yes_and_without_a_terminal_nothing_runs() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let first = tmp.path().join("first.pid");
    let second = tmp.path().join("second.pid");
    config(
        dir,
        &[
            (
                "first",
                fake("ok", &[("MCP_FAKE_PIDFILE", path_str(&first))]),
            ),
            (
                "second",
                fake("ok", &[("MCP_FAKE_PIDFILE", path_str(&second))]),
            ),
        ],
    );
    let out = run(dir, &["capture"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("first") && stderr.contains("second"),
        "{stderr}"
    );
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(!first.exists() && !second.exists(), "a server was started");
    assert_eq!(written(dir), Vec::<String>::new());

    let out = run(dir, &["scan", "--capture"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!first.exists() && !second.exists(), "a server was started");
}

/// Runs `git kams capture` on a pseudo-terminal (through Python's pty
/// module), answering its question with `answer`; returns what the
/// terminal showed and the exit code.
fn capture_on_a_terminal(dir: &Path, answer: &str) -> (String, i32) {
    const DRIVER: &str = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "capture"])
out, sent = b"", False
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not sent and b"[y/N]" in out:
        os.write(fd, sys.argv[2].encode() + b"\n")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let out = crate::common::hermetic_command("python3", dir)
        .args(["-c", DRIVER, env!("CARGO_BIN_EXE_git-kams"), answer])
        .output()
        .expect("python3 runs");
    (text(&out.stdout), out.status.code().unwrap_or(-1))
}

#[test]
fn on_a_terminal_capture_shows_the_launch_and_asks() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("good", fake("ok", &[]))]);

    let (shown, code) = capture_on_a_terminal(dir, "n");
    assert_eq!(code, 2, "{shown}");
    assert!(
        shown.contains("good (.mcp.json): {\"command\":["),
        "{shown}"
    );
    assert!(shown.contains("not confirmed"), "{shown}");
    assert_eq!(written(dir), Vec::<String>::new());

    let (shown, code) = capture_on_a_terminal(dir, "y");
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("captured `good`"), "{shown}");
    assert_eq!(written(dir), ["good.json"]);

    // Recorded is not approved: it is asked again.
    kams(dir).arg("record").assert().success();
    let (shown, code) = capture_on_a_terminal(dir, "n");
    assert_eq!(code, 2, "{shown}");
    assert!(shown.contains("no launch of it is recorded"), "{shown}");
    // Once approved (a signed-off commit of the launch), it runs without a question.
    let entry = fake("ok", &[]);
    crate::approvals::write_launch(dir, "good", &crate::approvals::spec(&entry));
    crate::approvals::commit(dir, "approve good's launch", true);
    let (shown, code) = capture_on_a_terminal(dir, "n");
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains("[y/N]"), "{shown}");
}

#[test]
fn only_the_named_servers_run() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let other = tmp.path().join("other.pid");
    config(
        dir,
        &[
            ("wanted", fake("ok", &[])),
            (
                "other",
                fake("ok", &[("MCP_FAKE_PIDFILE", path_str(&other))]),
            ),
        ],
    );
    let out = run(dir, &["capture", "--yes", "wanted"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(written(dir), ["wanted.json"]);
    assert!(!other.exists(), "an unnamed server was started");

    // A name no config knows: nothing runs.
    let out = run(dir, &["capture", "--yes", "wanted", "nosuch"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nosuch"), "{stderr}");
    assert!(!other.exists());
}

#[test]
fn a_malformed_config_runs_nothing() {
    let repo = repo();
    let dir = repo.path();
    std::fs::write(
        dir.join(".mcp.json"),
        r#"{"mcpServers": {"a": {"command": "python3",}}}"#,
    )
    .unwrap();
    let out = run(dir, &["capture", "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(".mcp.json"), "{stderr}");
    assert_eq!(written(dir), Vec::<String>::new());
}

#[test]
fn output_folder_follows_out_then_inventory_then_git_config() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("notes", fake("ok", &[]))]);

    let out = run(dir, &["capture", "--yes", "--out", "by-out"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.join("by-out/notes.json").is_file());

    let out = run(dir, &["--inventory", "by-option", "capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.join("by-option/notes.json").is_file());

    git(dir, &["config", "kams.inventory", "by-config"]);
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.join("by-config/notes.json").is_file());
    assert_eq!(written(dir), Vec::<String>::new());
}

#[test]
fn servers_come_from_every_client_config() {
    let repo = repo();
    let dir = repo.path();
    let elsewhere = scratch();
    config_at(
        dir,
        ".vscode/mcp.json",
        "servers",
        &[("vscode", fake("ok", &[]))],
    );
    config_at(
        dir,
        ".cursor/mcp.json",
        "mcpServers",
        &[("cursor", fake("ok", &[]))],
    );
    config_at(
        elsewhere.path(),
        "claude_desktop_config.json",
        "mcpServers",
        &[("desktop", fake("ok", &[]))],
    );
    let desktop = elsewhere.path().join("claude_desktop_config.json");

    // --config before the subcommand...
    let out = run(
        dir,
        &[
            "--config",
            path_str(&desktop),
            "capture",
            "--yes",
            "--jobs",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(written(dir), ["cursor.json", "desktop.json", "vscode.json"]);

    // ...or after it.
    std::fs::remove_dir_all(dir.join(INVENTORY)).unwrap();
    let out = run(
        dir,
        &[
            "capture",
            "--yes",
            "desktop",
            "--config",
            path_str(&desktop),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(written(dir), ["desktop.json"]);
}

#[test]
fn scan_capture_scans_live_servers_and_writes_nothing() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[("notes", fake("ok", &[])), ("paged", fake("paged", &[]))],
    );

    // Nothing in the lock yet: everything is new, and the duplicate key
    // and the zero-width characters are found on the live tools.
    let out = run(dir, &["--format", "json", "scan", "--capture", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let found = findings(&out);
    assert!(
        has(&found, "ambiguous", "notes/list_notes", "/description"),
        "{found:?}"
    );
    assert!(
        has(&found, "hidden", "notes/delete_note", "/description"),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(c, s, _)| c == "added" && s == "paged/page_three_a"),
        "{found:?}"
    );
    assert!(!dir.join(".kams").exists(), "scan --capture wrote files");
    assert!(
        !dir.join("kams.lock").exists(),
        "scan --capture wrote the lock"
    );

    // Against a lock recorded from a capture: no drift, only what was
    // already there; and SERVER/TOOL narrows the report.
    assert_eq!(run(dir, &["capture", "--yes"]).status.code(), Some(0));
    kams(dir).arg("record").assert().success();
    std::fs::remove_dir_all(dir.join(INVENTORY)).unwrap();
    let out = run(dir, &["--format", "json", "scan", "--capture", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let found = findings(&out);
    assert!(
        found.iter().all(|(class, _, _)| [
            "unapproved",
            "ambiguous",
            "hidden",
            "transport",
            "shadow"
        ]
        .contains(&class.as_str())),
        "{found:?}"
    );
    let out = run(
        dir,
        &[
            "--format",
            "json",
            "scan",
            "--capture",
            "--yes",
            "paged/page_one_a",
        ],
    );
    let found = findings(&out);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|(_, s, _)| s == "paged/page_one_a"),
        "{found:?}"
    );
    assert!(!dir.join(INVENTORY).exists(), "scan --capture wrote files");
}

#[test]
fn scan_capture_with_a_failed_server_is_an_error() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[("notes", fake("ok", &[])), ("crash", fake("crash", &[]))],
    );
    let out = run(dir, &["scan", "--capture", "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(failure(&stderr, "crash").contains("exited"), "{stderr}");
    assert!(!dir.join(".kams").exists());
}

/// The servers `status` lists after a capture, and its exit code: every
/// capture file must read back, so every later command works.
fn status_servers(dir: &Path) -> (Vec<String>, Option<i32>) {
    let out = run(dir, &["status", "--format", "json"]);
    if out.status.code() != Some(0) {
        return (vec![text(&out.stderr)], out.status.code());
    }
    let mut names: Vec<String> = json(&out.stdout)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["tool"].is_null())
        .map(|e| e["server"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    (names, out.status.code())
}

#[test]
fn server_names_that_once_shared_a_file_get_a_file_each() {
    let repo = repo();
    let dir = repo.path();
    // Once `a/b` and `a_b` were both a_b.json, `""` and `é` both _.json:
    // one capture silently lost, exit 0. A `/` or a blank name is now
    // refused with the config (exit 2, nothing run; see
    // bad_input::a_server_name_with_a_slash_is_refused_everywhere); the
    // names that remain still must not share a file.
    config(
        dir,
        &[("a/b", fake("ok", &[])), ("a_b", fake("paged", &[]))],
    );
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("contains `/`"));
    config(dir, &[("", fake("ok", &[]))]);
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("must not be empty or blank"));
    assert!(written(dir).is_empty());
    config(
        dir,
        &[
            ("a b", fake("ok", &[])),
            ("a_b", fake("paged", &[])),
            ("a?b", fake("ok", &[])),
            ("\u{e9}", fake("paged", &[])),
        ],
    );
    let out = run(dir, &["capture", "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let files = written(dir);
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(files.contains(&"a_b.json".to_string()), "{files:?}");
    let (servers, code) = status_servers(dir);
    assert_eq!(code, Some(0), "{servers:?}");
    assert_eq!(servers, ["a b", "a?b", "a_b", "\u{e9}"]);
}

#[test]
fn a_300_character_name_is_captured_without_a_leftover_or_a_lost_server() {
    let repo = repo();
    let dir = repo.path();
    let long = "n".repeat(300);
    // Once ENAMETOOLONG: a .kams-PID-0.tmp left, the servers after it not
    // written. And a blank name once wrote a file every later command refused.
    config(
        dir,
        &[
            ("aaa", fake("ok", &[])),
            (&long, fake("ok", &[])),
            ("zzz", fake("paged", &[])),
        ],
    );
    let out = run(dir, &["capture", "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let files = written(dir);
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(
        files.iter().all(|f| f.len() < 128 && !f.ends_with(".tmp")),
        "{files:?}"
    );
    let (servers, code) = status_servers(dir);
    assert_eq!(code, Some(0), "{servers:?}");
    assert_eq!(servers, ["aaa".to_string(), long, "zzz".to_string()]);
}

#[test]
fn a_capture_file_that_cannot_be_written_costs_its_server_only() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[
            ("aaa", fake("ok", &[])),
            ("blocked", fake("ok", &[])),
            ("zzz", fake("ok", &[])),
        ],
    );
    // A non-empty folder where blocked.json goes: the rename fails.
    std::fs::create_dir_all(dir.join(INVENTORY).join("blocked.json/x")).unwrap();
    let out = run(dir, &["capture", "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        failure(&stderr, "blocked").contains("is a directory, expected a file"),
        "{stderr}"
    );
    assert_eq!(written(dir), ["aaa.json", "blocked.json", "zzz.json"]);
    assert!(dir.join(INVENTORY).join("blocked.json").is_dir());
}

#[test]
fn names_one_case_apart_are_refused_before_anything_runs() {
    let repo = repo();
    let dir = repo.path();
    let tmp = scratch();
    let pidfile = tmp.path().join("pid");
    let pid = [("MCP_FAKE_PIDFILE", path_str(&pidfile))];
    config(
        dir,
        &[("GitHub", fake("ok", &pid)), ("github", fake("ok", &pid))],
    );
    for args in [&["capture", "--yes"][..], &["scan", "--capture", "--yes"]] {
        let out = run(dir, args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("case-insensitive"), "{stderr}");
        assert!(!pidfile.exists(), "a server ran");
        assert_eq!(written(dir), Vec::<String>::new());
    }
}

#[test]
fn a_capture_under_the_old_file_name_is_replaced_not_kept_twice() {
    let repo = repo();
    let dir = repo.path();
    config(dir, &[("my notes", fake("ok", &[]))]);
    // What capture wrote for `my notes` before names were hashed, and a
    // file by hand under a name the old scheme also gave: left alone.
    let folder = dir.join(INVENTORY);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("my_notes.json"),
        r#"{"server": "my notes", "tools": []}"#,
    )
    .unwrap();
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let files = written(dir);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("my_notes~"), "{files:?}");
    let (servers, code) = status_servers(dir);
    assert_eq!((servers, code), (vec!["my notes".to_string()], Some(0)));

    std::fs::write(
        folder.join("my_notes.json"),
        r#"{"server": "my_notes", "tools": []}"#,
    )
    .unwrap();
    let out = run(dir, &["capture", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(written(dir).len(), 2);
}
