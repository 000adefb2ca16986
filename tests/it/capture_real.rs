//! `git kams capture` against real, published MCP servers at the versions
//! the shared corpus holds: what the binary captures must digest exactly
//! as the corpus capture of the same version does, over stdio and over
//! streamable HTTP. The servers are installed once per checkout into
//! target/mcp-servers (npm and PyPI; see .ci/run for node and venv).

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json as value, Value};

use crate::common::{copy, installed, json, kams, must, real, repo, text};

/// The npm packages, pinned to versions the corpus holds.
const NPM: [&str; 2] = [
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];
/// The PyPI package, pinned likewise.
const PYPI: &str = "mcp-server-time==2026.10.19";

/// The corpus file of each server, by the name its capture gets (the
/// corpus files' `server` field, so that the locks line up).
const EVERYTHING: (&str, &str) = ("server-everything", "server-everything@2026.8.31.json");
const FILESYSTEM: (&str, &str) = ("server-filesystem", "server-filesystem@2026.8.31.json");
const TIME: (&str, &str) = ("mcp-server-time", "mcp-server-time@2026.10.19.json");

/// Tools that server-everything registers only after initialize, and
/// only when the client declares the matching capability (roots,
/// sampling, elicitation, tasks). The corpus was captured by a client
/// that declared none; which of these appear depends on what `capture`
/// declares, not on the server's version, so they may be extra here.
const CONDITIONAL: [&str; 6] = [
    "get-roots-list",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
    "trigger-sampling-request-async",
    "trigger-elicitation-request-async",
];

/// `target/mcp-servers`, installed on first use (once per test process).
fn servers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let stamp = format!("{}\n{PYPI}\n", NPM.join("\n"));
        installed("mcp-servers", &stamp, |stage| {
            must(
                Command::new("npm")
                    .arg("install")
                    .arg("--prefix")
                    .arg(stage)
                    .args(["--no-audit", "--no-fund", "--loglevel=error"])
                    .args(NPM),
            );
            must(
                Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(stage.join("venv")),
            );
            must(Command::new(stage.join("venv/bin/pip")).args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                PYPI,
            ]));
        })
    })
}

/// Runs the capture, then checks every captured server against its
/// corpus file.
fn capture_and_compare(dir: &Path, servers: &[(&str, &str)]) {
    let out = kams(dir)
        .args(["capture", "--yes", "--timeout", "60"])
        .write_stdin("")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // The same lock twice: once recorded from the capture, once from the
    // corpus files of the same versions.
    for (_, file) in servers {
        copy(&real(file), dir, &format!("corpus/{file}"));
    }
    let captured = record(dir, ".kams/inventory", "captured.lock");
    let corpus = record(dir, "corpus", "corpus.lock");

    for (server, file) in servers {
        let ours = &captured["servers"][server];
        let theirs = &corpus["servers"][server];
        assert!(ours.is_object(), "`{server}` not captured: {captured}");
        // The corpus recorded tools/list only; capture also lists the
        // prompts and resources a server declares, so the server entries
        // are compared field by field on what both have.
        for field in ["serverInfo", "instructions"] {
            assert_eq!(
                ours["server"]["fields"][field], theirs["server"]["fields"][field],
                "{server}: {field} differs from {file}"
            );
        }

        let ours = digests(ours);
        let theirs = digests(theirs);
        let capture = capture_file(dir, server);
        let reference = json(&std::fs::read(real(file)).unwrap());
        for (tool, digest) in &theirs {
            assert!(
                ours.contains_key(tool),
                "{server}/{tool} of {file} was not captured"
            );
            assert_eq!(
                &ours[tool],
                digest,
                "{server}/{tool} differs from {file}:\n captured {}\n corpus   {}",
                tool_object(&capture, tool),
                tool_object(&reference, tool)
            );
        }
        let extra: Vec<&String> = ours.keys().filter(|t| !theirs.contains_key(*t)).collect();
        assert!(
            extra
                .iter()
                .all(|t| *server == EVERYTHING.0 && CONDITIONAL.contains(&t.as_str())),
            "{server}: tools not in {file}: {extra:?}"
        );
        if !extra.is_empty() {
            eprintln!("{server}: tools registered for declared client capabilities: {extra:?}");
        }
        assert_eq!(capture["serverInfo"], reference["serverInfo"], "{server}");
        assert_eq!(
            capture["protocolVersion"], reference["protocolVersion"],
            "{server}"
        );
    }
}

/// `git kams record` of `inventory` into a new lock; the lock's value.
fn record(dir: &Path, inventory: &str, lock: &str) -> Value {
    kams(dir)
        .args(["--inventory", inventory, "--lock", lock, "record"])
        .assert()
        .success();
    json(&std::fs::read(dir.join(lock)).unwrap())
}

/// Tool name to digest, of one server of a lock.
fn digests(server: &Value) -> BTreeMap<String, String> {
    server["tools"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, entry)| (name.clone(), entry["digest"].as_str().unwrap().to_string()))
        .collect()
}

fn capture_file(dir: &Path, server: &str) -> Value {
    let path = dir.join(format!(".kams/inventory/{server}.json"));
    json(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn tool_object<'a>(capture: &'a Value, name: &str) -> &'a Value {
    capture["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or(&Value::Null)
}

#[test]
fn stdio_captures_digest_as_the_corpus_does() {
    let bin = servers().join("node_modules/.bin");
    let repo = repo();
    let dir = repo.path();
    let sandbox = tempfile::tempdir().unwrap();
    let config = value!({"mcpServers": {
        EVERYTHING.0: {"command": "node", "args": [bin.join("mcp-server-everything"), "stdio"]},
        FILESYSTEM.0: {"command": "node", "args": [bin.join("mcp-server-filesystem"), sandbox.path()]},
        TIME.0: {
            "command": servers().join("venv/bin/mcp-server-time"),
            "args": ["--local-timezone", "UTC"]
        },
    }});
    std::fs::write(dir.join(".mcp.json"), config.to_string()).unwrap();
    capture_and_compare(dir, &[EVERYTHING, FILESYSTEM, TIME]);

    // The launch is recorded as configured.
    let capture = capture_file(dir, TIME.0);
    assert_eq!(capture["transport"], "stdio");
    assert_eq!(
        capture["command"],
        value!([
            servers().join("venv/bin/mcp-server-time"),
            "--local-timezone",
            "UTC"
        ])
    );
}

/// The streamable HTTP server-everything, killed when dropped (also when
/// a test panics).
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    /// Starts `mcp-server-everything streamableHttp`. It listens on the
    /// port in `PORT` (default 3001, see dist/transports/streamableHttp.js;
    /// `PORT=0` would work but it never says which port it got), so a free
    /// port is picked first; another process may take it meanwhile, then
    /// the server exits and another port is tried.
    fn start() -> HttpServer {
        let script = servers().join("node_modules/.bin/mcp-server-everything");
        for _ in 0..5 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let child = Command::new("node")
                .arg(&script)
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("node runs");
            let mut server = HttpServer { child, port };
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if server.child.try_wait().unwrap().is_some() {
                    break;
                }
                if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
                    return server;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = server.child.kill();
        }
        panic!("mcp-server-everything streamableHttp did not start listening");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn streamable_http_capture_digests_as_the_corpus_does() {
    let http = HttpServer::start();
    let repo = repo();
    let dir = repo.path();
    let url = format!("http://127.0.0.1:{}/mcp", http.port);
    let config = value!({"mcpServers": {EVERYTHING.0: {"type": "http", "url": url}}});
    std::fs::write(dir.join(".mcp.json"), config.to_string()).unwrap();
    // The corpus capture was over stdio; the server builds the same tools
    // for either transport (createServer in dist/server/index.js).
    capture_and_compare(dir, &[EVERYTHING]);
    let capture = capture_file(dir, EVERYTHING.0);
    assert!(
        ["http", "streamable-http", "streamableHttp"]
            .contains(&capture["transport"].as_str().unwrap_or("")),
        "{}",
        capture["transport"]
    );
    drop(http);
}

/// Issue 27, item 2: the honest server-everything, captured as three
/// clients, tells each the same: no `cloaking` member, no finding.
#[test]
fn server_everything_captured_as_three_clients_tells_each_the_same() {
    let bin = servers().join("node_modules/.bin");
    let repo = repo();
    let dir = repo.path();
    let config = value!({"mcpServers": {
        EVERYTHING.0: {"command": "node", "args": [bin.join("mcp-server-everything"), "stdio"]},
    }});
    std::fs::write(dir.join(".mcp.json"), config.to_string()).unwrap();
    let o = kams(dir)
        .args(["capture", "--yes", "--as", "claude-code,cursor,vscode"])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("otherwise than"),
        "{}",
        text(&o.stderr)
    );
    let capture = capture_file(dir, EVERYTHING.0);
    assert_eq!(
        capture["capturedAs"],
        value!(["claude-code", "cursor", "vscode"])
    );
    assert!(capture.get("cloaking").is_none(), "{capture:#}");
    let o = kams(dir)
        .args(["--format", "json", "scan", "--fail-on", "never"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let findings = json(&o.stdout)["findings"].as_array().unwrap().clone();
    assert!(
        findings.iter().all(|f| f["class"] != "cloaking"),
        "{findings:#?}"
    );
}
