//! Capture keeps its limits against servers that try to break them: one
//! deadline per server that every read and write obeys, memory and threads
//! bounded per server, each failure its server's alone, and no server left
//! running when git-kams is ended by a signal. Real processes (the fake
//! servers in tests/fixtures), with the wall clock, the resident memory
//! and the thread count of git-kams watched from /proc while it runs.
//!
//! The bounds on time are ten times what a working limit needs, not
//! benchmarks: they only tell a limit that holds from one that is ignored.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json as value, Value};

use crate::common::{hermetic_command, repo, text};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A `.mcp.json` entry running the stdio fake server in `mode`.
fn fake(mode: &str, pidfile: Option<&Path>) -> Value {
    let mut entry = value!({"command": "python3", "args": [fixture("mcp_server.py"), mode]});
    if let Some(p) = pidfile {
        entry["env"] = value!({"MCP_FAKE_PIDFILE": p});
    }
    entry
}

fn config(dir: &Path, servers: &[(&str, Value)]) {
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(n, e)| (n.to_string(), e.clone()))
        .collect();
    std::fs::write(
        dir.join(".mcp.json"),
        serde_json::to_string(&value!({"mcpServers": map})).unwrap(),
    )
    .unwrap();
}

/// `git kams ARGS` started in `dir`, its output piped.
fn start(dir: &Path, args: &[&str]) -> Child {
    hermetic_command(env!("CARGO_BIN_EXE_git-kams"), dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What a watched run did.
struct Watched {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: String,
    took: Duration,
    /// Highest resident memory seen, in KiB.
    rss_kib: u64,
    /// Most threads seen at once.
    threads: u64,
}

/// A field of /proc/PID/status, as a number.
fn status_field(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// Waits for `child`, sampling its memory and threads, and kills it past
/// `limit` (the test then fails on `took`).
fn watch(mut child: Child, limit: Duration) -> Watched {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let start = Instant::now();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr_pipe.read_to_end(&mut s);
        s
    });
    let mut stdout_pipe = child.stdout.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout_pipe.read_to_end(&mut s);
    });
    let (mut rss_kib, mut threads) = (0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let pid = child.id();
        rss_kib = rss_kib.max(status_field(pid, "VmRSS:").unwrap_or(0));
        threads = threads.max(status_field(pid, "Threads:").unwrap_or(0));
        if start.elapsed() > limit {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = start.elapsed();
    drain.join().unwrap();
    // Shown when a test fails, and with --nocapture.
    eprintln!("took {took:?}, at most {rss_kib} KiB resident and {threads} threads");
    Watched {
        code: status.code(),
        signal: status.signal(),
        stderr: text(&reader.join().unwrap()),
        took,
        rss_kib,
        threads,
    }
}

fn failure<'a>(stderr: &'a str, server: &str) -> &'a str {
    let head = format!("error: capture of `{server}` failed:");
    stderr
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no `{head}` line in:\n{stderr}"))
}

fn written(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(".kams/inventory"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Whether `pid` still runs one of the fake servers (gone or a zombie
/// is not).
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    let cmdline = text(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default());
    !zombie && cmdline.contains("mcp_server.py")
}

fn wait_for(path: &Path) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if let Ok(s) = std::fs::read_to_string(path) {
            if !s.trim().is_empty() {
                return s;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never appeared", path.display());
}

const MIB: u64 = 1024;

#[test]
fn a_flood_of_pings_fails_its_server_at_once_and_the_others_are_captured() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[
            ("good", fake("ok", None)),
            ("flood", fake("ping-flood", None)),
        ],
    );
    let run = watch(
        start(dir, &["capture", "--yes", "--timeout", "3"]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        failure(&run.stderr, "flood").contains("more than 1000 requests"),
        "{}",
        run.stderr
    );
    assert_eq!(written(dir), ["good.json"]);
    // Once 45 s: each answer blocked on the server's full stdin pipe.
    assert!(run.took < Duration::from_secs(5), "took {:?}", run.took);
}

#[test]
fn a_server_that_stops_reading_cannot_hold_a_write_past_the_deadline() {
    let repo = repo();
    let dir = repo.path();
    // 200 answers of 64 KiB each: the pipe is full after the first few.
    config(
        dir,
        &[
            ("good", fake("ok", None)),
            ("deaf", fake("fat-pings", None)),
        ],
    );
    let run = watch(
        start(dir, &["capture", "--yes", "--timeout", "3"]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let deaf = failure(&run.stderr, "deaf");
    assert!(
        deaf.contains("timed out after 3 s") && deaf.contains("stopped reading its input"),
        "{deaf}"
    );
    assert_eq!(written(dir), ["good.json"]);
    assert!(run.took < Duration::from_secs(6), "took {:?}", run.took);
}

#[test]
fn a_flooding_server_is_made_to_wait_not_held_in_memory() {
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[("good", fake("ok", None)), ("flood", fake("flood", None))],
    );
    let run = watch(
        start(dir, &["capture", "--yes", "--timeout", "3"]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        failure(&run.stderr, "flood").contains("timed out after 3 s"),
        "{}",
        run.stderr
    );
    assert_eq!(written(dir), ["good.json"]);
    assert!(run.took < Duration::from_secs(6), "took {:?}", run.took);
    // Once every line waited in memory: 1.9 GB. The queue holds 1 MiB,
    // a reader one line.
    assert!(
        run.rss_kib < 100 * MIB,
        "resident memory reached {} KiB",
        run.rss_kib
    );
}

/// A capture of servers that never answer (and ignore SIGTERM), ended by
/// `signal` once they run: none may be left running.
fn ended_by(signal: &str, number: i32) {
    let repo = repo();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let pidfiles: Vec<PathBuf> = (0..2)
        .map(|i| tmp.path().join(format!("{i}.pid")))
        .collect();
    config(
        dir,
        &[
            ("one", fake("hang", Some(&pidfiles[0]))),
            ("two", fake("hang", Some(&pidfiles[1]))),
        ],
    );
    // As a shell runs it in the foreground: a test run started in the
    // background (`cargo test &`, where SIGINT is ignored and the ignoring
    // is inherited) must not make git-kams ignore the signal under test,
    // which it rightly keeps ignored as `nohup` asks.
    let mut cmd = hermetic_command(env!("CARGO_BIN_EXE_git-kams"), dir);
    cmd.args(["capture", "--yes", "--timeout", "60"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe, which is all pre_exec allows.
    unsafe {
        cmd.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let pids: Vec<u32> = pidfiles
        .iter()
        .map(|p| wait_for(p).trim().parse::<u32>().unwrap())
        .collect();
    assert!(
        pids.iter().all(|&p| alive(p)),
        "servers run before the signal"
    );
    Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    let run = watch(child, Duration::from_secs(30));
    // Ended by the signal itself, as a shell expects.
    assert_eq!(run.signal, Some(number), "{:?}: {}", run.code, run.stderr);
    assert!(run.took < Duration::from_secs(5), "took {:?}", run.took);
    let until = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    for p in &left {
        let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    assert_eq!(left, Vec::<u32>::new(), "servers outlived git-kams");
}

#[test]
fn sigterm_during_a_capture_ends_every_server() {
    ended_by("TERM", 15);
}

#[test]
fn ctrl_c_during_a_capture_ends_every_server() {
    ended_by("INT", 2);
}

/// The hostile HTTP server in `mode`, and its URL.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(mode: &str) -> HttpServer {
        let tmp = tempfile::tempdir().unwrap();
        let portfile = tmp.path().join("port");
        let child = Command::new("python3")
            .arg(fixture("mcp_http_server.py"))
            .arg(mode)
            .arg(&portfile)
            .spawn()
            .unwrap();
        let port = wait_for(&portfile);
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{}/mcp", port.trim()),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_sse_stream_per_ping_answer_opens_no_thread_per_stream() {
    let server = HttpServer::start("sse-ping");
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[
            ("good", fake("ok", None)),
            ("pings", value!({"type": "http", "url": server.url})),
        ],
    );
    let run = watch(
        start(dir, &["capture", "--yes", "--timeout", "3"]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let pings = failure(&run.stderr, "pings");
    assert!(pings.contains("timed out after 3 s"), "{pings}");
    assert!(pings.contains("was not read"), "{pings}");
    assert_eq!(written(dir), ["good.json"]);
    assert!(run.took < Duration::from_secs(8), "took {:?}", run.took);
    // Once 3,856 threads and 2.1 GB in 7 s.
    assert!(run.threads < 32, "{} threads", run.threads);
    assert!(run.rss_kib < 100 * MIB, "{} KiB", run.rss_kib);
}

#[test]
fn endless_pages_with_fresh_cursors_stop_at_the_input_cap() {
    let server = HttpServer::start("pages:1048576");
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[
            ("good", fake("ok", None)),
            ("pages", value!({"type": "http", "url": server.url})),
        ],
    );
    let run = watch(
        start(
            dir,
            &[
                "--max-input-size",
                "16m",
                "capture",
                "--yes",
                "--timeout",
                "30",
            ],
        ),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let pages = failure(&run.stderr, "pages");
    assert!(
        pages.contains("tools/list: the server listed more than 16777216 bytes in all"),
        "{pages}"
    );
    assert_eq!(written(dir), ["good.json"]);
    // Once 1.85 GB in 15 s, until the deadline: now the cap ends it.
    assert!(run.took < Duration::from_secs(15), "took {:?}", run.took);
    assert!(run.rss_kib < 200 * MIB, "{} KiB", run.rss_kib);
    assert!(run.threads < 32, "{} threads", run.threads);
}

#[test]
fn fresh_long_cursors_are_not_kept_until_the_deadline() {
    let server = HttpServer::start("cursors:1048576");
    let repo = repo();
    let dir = repo.path();
    config(
        dir,
        &[("cursors", value!({"type": "http", "url": server.url}))],
    );
    let run = watch(
        start(dir, &["capture", "--yes", "--timeout", "5"]),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let cursors = failure(&run.stderr, "cursors");
    assert!(cursors.contains("timed out after 5 s"), "{cursors}");
    assert!(run.took < Duration::from_secs(10), "took {:?}", run.took);
    // Each cursor was once kept, to tell a repeated one: a megabyte a page.
    assert!(run.rss_kib < 100 * MIB, "{} KiB", run.rss_kib);
}
