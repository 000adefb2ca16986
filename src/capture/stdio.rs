//! The stdio transport: a server run as a child process, speaking
//! newline-delimited JSON-RPC on its stdin and stdout.
//!
//! The child runs in a process group of its own, so that closing the
//! session ends everything it started (an `npx` wrapper and the node
//! process under it, a shell and its children), not only the process we
//! spawned; [`super::reaper`] ends the group too when git-kams itself is
//! ended by a signal. Its stdout is read by a thread that never holds more
//! than one message of at most the cap, into a queue bounded in bytes
//! ([`super::queue`]): a server that writes faster than the session reads
//! waits on its full pipe. Its stdin is written without blocking, so that
//! a server that stops reading its input cannot hold a write past the
//! session's deadline. Its stderr is kept as a short tail for error
//! messages.

use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio as Pipe};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use super::queue::{Empty, Producer, Queue, BUDGET};
use super::reaper;
use super::transport::{Outgoing, Transport};
use crate::text::escape_display;

/// Bytes of the server's stderr kept for error messages.
const STDERR_TAIL: usize = 2048;

/// How long a server gets to exit on its own after its stdin closes, and
/// again after SIGTERM, before its process group is killed.
const GRACE: Duration = Duration::from_millis(300);

/// What the stdout reader hands over.
enum Line {
    Message(Vec<u8>),
    TooLong(usize),
    Failed(std::io::Error),
}

/// A running stdio server.
pub struct Stdio {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Queue<Line>,
    stderr: Arc<Mutex<Vec<u8>>>,
    deadline: Instant,
    closed: bool,
}

/// Starts `argv` with exactly the environment `env`, in `cwd`; every
/// read and write of its session ends by `deadline`.
pub fn spawn(
    argv: &[String],
    env: &[(String, String)],
    cwd: &Path,
    max_message: usize,
    deadline: Instant,
) -> Result<Stdio> {
    let Some((program, args)) = argv.split_first() else {
        bail!("the config names no command");
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Pipe::piped())
        .stdout(Pipe::piped())
        .stderr(Pipe::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = reaper::spawn(&mut cmd)
        .with_context(|| format!("cannot start `{}`", escape_display(program)))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let lines = Queue::new(BUDGET);
    let tx = lines.producer();
    let tail = Arc::new(Mutex::new(Vec::new()));
    let keep = tail.clone();
    // Held before the readers start: should one not start (a process
    // limit), dropping it ends the server's process group.
    let stdio = Stdio {
        stdin: child.stdin.take(),
        child,
        lines,
        stderr: tail,
        deadline,
        closed: false,
    };
    if let Some(stdin) = &stdio.stdin {
        set_nonblocking(stdin.as_raw_fd()).context("cannot set up the server's stdin")?;
    }
    std::thread::Builder::new()
        .spawn(move || read_lines(stdout, max_message, &tx))
        .context("cannot start a thread to read the server's output")?;
    std::thread::Builder::new()
        .spawn(move || read_tail(stderr, &keep))
        .context("cannot start a thread to read the server's stderr")?;
    Ok(stdio)
}

/// Reads newline-delimited messages, refusing one longer than `max`
/// without holding more than `max` bytes of it.
fn read_lines(stdout: impl Read, max: usize, tx: &Producer<Line>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tx.push(Line::Failed(e), 0);
                return;
            }
        };
        if buf.is_empty() {
            // End of output; a last line without a newline still counts.
            if !line.iter().all(u8::is_ascii_whitespace) {
                let size = line.len();
                tx.push(Line::Message(line), size);
            }
            return;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        // saturating: with the largest cap, `max + 1` would wrap to 0.
        if line.len().saturating_add(take) > max.saturating_add(1) {
            tx.push(Line::TooLong(max), 0);
            return;
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if done {
            let msg = std::mem::take(&mut line);
            let trimmed = trim(&msg);
            // Waits while the session has a full queue to read: the
            // server's pipe fills, and its writes wait in turn.
            if !trimmed.is_empty() && !tx.push(Line::Message(trimmed.to_vec()), trimmed.len()) {
                return;
            }
        }
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// Keeps the last [`STDERR_TAIL`] bytes the server wrote to stderr.
fn read_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                t.extend_from_slice(&buf[..n]);
                if t.len() > STDERR_TAIL {
                    let cut = t.len() - STDERR_TAIL;
                    t.drain(..cut);
                }
            }
        }
    }
}

/// Lines of a server's stderr shown in an error message, at most: the
/// tail's bytes bound what is kept, this what a flood of line feeds can
/// make of it on the terminal.
const STDERR_LINES: usize = 40;

/// The kept end of a server's stderr for an error message: one line of
/// the message per line the server wrote, each escaped on its own (a
/// stack trace stays readable, and no control character reaches the
/// terminal), blank ones left out, the last [`STDERR_LINES`] of them.
/// `cut`: the tail was cut to [`STDERR_TAIL`] bytes, so its first line
/// may be a part of one.
fn stderr_lines(tail: &[u8], cut: bool) -> String {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim_start().is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let skipped = lines.len().saturating_sub(STDERR_LINES);
    let mut out = String::from("its stderr ended with:");
    if skipped > 0 {
        out.push_str(&format!("\n    ... ({skipped} lines before these)"));
    }
    for (i, line) in lines[skipped..].iter().enumerate() {
        out.push_str("\n    ");
        if i == 0 && cut && skipped == 0 {
            out.push_str("...");
        }
        out.push_str(&escape_display(line));
    }
    out
}

/// Makes writes to `fd` return at once when the pipe is full.
fn set_nonblocking(fd: i32) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Writes all of `bytes` to the non-blocking `fd`, waiting for room in the
/// pipe until `deadline` at the latest.
fn write_until(fd: i32, bytes: &[u8], deadline: Instant) -> Result<()> {
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        // SAFETY: writes from a slice we hold.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            at += n as usize;
            continue;
        }
        let e = std::io::Error::last_os_error();
        match e.kind() {
            std::io::ErrorKind::Interrupted => continue,
            std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    bail!("the server stopped reading its input: a message could not be written before the deadline");
                }
                let mut ready = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
                // SAFETY: polls one descriptor we hold. EINTR and a
                // timeout both come back to the write, which decides.
                unsafe {
                    libc::poll(&mut ready, 1, ms);
                }
            }
            _ => return Err(e.into()),
        }
    }
    Ok(())
}

impl Stdio {
    /// How the child ended, if it has (waiting up to `wait`).
    fn exit_status(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }

    fn signal_group(&self, signal: i32) {
        // The child leads its own group (process_group(0)), so its pid is
        // the group id. ESRCH, when the group is already gone, is fine.
        let pgid = self.child.id() as i32;
        // SAFETY: killpg only sends a signal; no memory is involved.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

impl Transport for Stdio {
    fn send(&mut self, message: &[u8], _kind: Outgoing) -> Result<()> {
        let stdin = self
            .stdin
            .as_ref()
            .ok_or_else(|| anyhow!("stdin already closed"))?;
        let mut framed = Vec::with_capacity(message.len() + 1);
        framed.extend_from_slice(message);
        framed.push(b'\n');
        let sent = write_until(stdin.as_raw_fd(), &framed, self.deadline);
        if let Err(e) = sent {
            if let Some(status) = self.exit_status(Duration::from_millis(200)) {
                bail!("the server exited ({status}) before reading the request");
            }
            return Err(e.context("cannot write to the server's stdin"));
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Result<Option<Vec<u8>>> {
        match self.lines.pop(deadline.min(self.deadline)) {
            Ok(Line::Message(m)) => Ok(Some(m)),
            Ok(Line::TooLong(max)) => {
                bail!("a message over {max} bytes (the cap; raise it with --max-input-size)")
            }
            Ok(Line::Failed(e)) => bail!("cannot read the server's stdout: {e}"),
            Err(Empty::Timeout) => bail!("no answer in time"),
            Err(Empty::Ended) => match self.exit_status(Duration::from_millis(500)) {
                Some(status) => bail!("the server exited ({status})"),
                None => Ok(None),
            },
        }
    }

    fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        // The spec's shutdown for stdio: close stdin, wait, SIGTERM, wait,
        // SIGKILL. The group is signalled even when the leader is gone,
        // since its children may not be.
        // The reader may wait for room in the queue: let it go.
        self.lines.close();
        drop(self.stdin.take());
        let exited = self.exit_status(GRACE).is_some();
        if !exited {
            self.signal_group(libc::SIGTERM);
            self.exit_status(GRACE);
        }
        self.signal_group(libc::SIGKILL);
        // The leader is not reaped yet, so its id names no other group
        // until the wait below.
        reaper::forget(self.child.id() as i32);
        let _ = self.child.wait();
    }

    fn diagnostics(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        stderr_lines(&t, t.len() >= STDERR_TAIL)
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Stdio {
        let path = std::env::var("PATH").unwrap_or_default();
        spawn(
            &["sh".into(), "-c".into(), script.into()],
            &[("PATH".into(), path)],
            Path::new("."),
            64,
            Instant::now() + Duration::from_secs(10),
        )
        .unwrap()
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn lines_are_messages_and_the_cap_holds() {
        let mut s = sh("printf '{\"a\":1}\\n\\n  {\"b\":2}  \\n'; printf '%0100d\\n' 0; sleep 5");
        assert_eq!(s.recv(soon()).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(s.recv(soon()).unwrap().unwrap(), b"{\"b\":2}");
        let e = s.recv(soon()).unwrap_err().to_string();
        assert!(e.contains("over 64 bytes"), "{e}");
        s.close();
    }

    #[test]
    fn exit_and_stderr_are_reported() {
        let mut s = sh("echo 'boom: bad token' >&2; exit 3");
        let e = s.recv(soon()).unwrap_err().to_string();
        assert!(e.contains("exited") && e.contains('3'), "{e}");
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            s.diagnostics().contains("boom: bad token"),
            "{}",
            s.diagnostics()
        );
    }

    #[test]
    fn stderr_is_shown_line_by_line_each_escaped() {
        let got = stderr_lines(b"\n  Traceback:\r\n  bad \x1b[31mred\n\n  end\n\n", false);
        assert_eq!(
            got,
            "its stderr ended with:\n      Traceback:\n      bad \\u{1B}[31mred\n      end"
        );
        let flood = "x\n".repeat(100);
        let got = stderr_lines(flood.as_bytes(), true);
        assert_eq!(got.lines().count(), 1 + 1 + STDERR_LINES, "{got}");
        assert!(
            got.contains("\n    ... (60 lines before these)\n    x\n"),
            "{got}"
        );
        assert_eq!(
            stderr_lines(b"tail of a line\nnext", true),
            "its stderr ended with:\n    ...tail of a line\n    next"
        );
        assert_eq!(stderr_lines(b" \n\n", false), "");
    }

    #[test]
    fn a_silent_server_times_out() {
        let mut s = sh("sleep 30");
        let e = s
            .recv(Instant::now() + Duration::from_millis(200))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no answer in time"), "{e}");
        let started = Instant::now();
        s.close();
        // TERM ends `sleep` at once; close must not wait out the sleep.
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn close_ends_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut s = sh(&format!(
            "sleep 300 & echo $! > {}; echo '{{}}'; wait",
            pidfile.display()
        ));
        assert_eq!(s.recv(soon()).unwrap().unwrap(), b"{}");
        let pid = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .to_string();
        s.close();
        std::thread::sleep(Duration::from_millis(100));
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for a PID 1 that does not reap.
        let state = stat.rsplit(')').next().unwrap_or("").trim().chars().next();
        assert!(
            matches!(state, None | Some('Z')),
            "grandchild alive: {stat}"
        );
    }
}
