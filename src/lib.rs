//! git-kams: MCP tool descriptors as a reviewed, versioned artifact in git.
//!
//! The pipeline, in modules: [`inventory`] reads what servers advertise,
//! [`canon`] and [`descriptor`] give each tool a canonical form and digests,
//! [`lock`] keeps what was seen and approved, [`compare`] and [`detect`]
//! turn the two into [`finding`]s, [`report`] writes them and [`metrics`]
//! sends their counts to an OpenTelemetry backend; [`import`] reads the
//! approval files of two older tools. [`git`] and
//! [`commands`] are the edge where files, git and the command line meet the
//! pure core; [`threads`] shares large inputs' work with a second core.

pub mod bytes;
pub mod cache;
pub mod canon;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod descriptor;
pub mod detect;
pub mod enforce;
pub mod files;
pub mod finding;
pub mod git;
pub mod import;
pub mod input;
pub mod inventory;
pub mod json;
pub mod lock;
pub mod metrics;
pub mod report;
pub mod text;
pub mod threads;
pub mod work;

use std::io::Write;

/// Runs a parsed command line, writing to `out` and `err`; returns the exit
/// status (0 clean, 1 findings, 2 error).
pub fn run(cli: cli::Cli, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    if cli.global.quiet {
        let mut errors = ErrorsOnly::new(err);
        let status = run_env(cli, &mut std::io::sink(), &mut errors);
        errors.finish();
        return status;
    }
    run_env(cli, out, err)
}

fn run_env(cli: cli::Cli, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    // Only the commands that read the repository look for it: git runs the
    // drivers once per file (textconv once per blob of a `git log -p`; it
    // looks, for kams.maxInputSize, since the blob is anyone's text).
    let env = || commands::Env::new(cli.global.clone());
    let result = match &cli.command {
        cli::Command::Record => commands::record::run(&env(), out),
        cli::Command::Pin(a) => commands::pin::run(&env(), a, out, err),
        cli::Command::Review(a) => {
            use std::io::IsTerminal;
            let stdin = std::io::stdin();
            let terminal = stdin.is_terminal();
            commands::review::run(&env(), a, &mut stdin.lock(), terminal, out, err)
        }
        cli::Command::Deny(a) => commands::deny::run(&env(), a, out, err),
        cli::Command::Enforce(a) => commands::enforce::run(&env(), a, out, err),
        cli::Command::Status(a) => commands::status::run(&env(), a, out, err),
        cli::Command::Scan(a) => commands::scan::run(
            &env(),
            &a.scan,
            commands::scan::Mode::Scan(&a.metrics),
            out,
            err,
        ),
        cli::Command::Diff(a) => {
            commands::scan::run(&env(), a, commands::scan::Mode::Diff, out, err)
        }
        cli::Command::Log(a) => commands::log::run(&env(), a, out, err),
        cli::Command::Blame(a) => commands::blame::run(&env(), a, out),
        cli::Command::Init(a) => commands::init::run(&env(), a, out),
        cli::Command::Hook(a) => commands::hook::run(&env(), a, out, err),
        cli::Command::Capture(a) => commands::capture::run(&env(), a, out, err),
        cli::Command::InstallMan(a) => commands::manual::install(&env(), a, out),
        cli::Command::Completions(a) => commands::manual::completions(a, out),
        cli::Command::Import(a) => commands::import::run(&env(), a, out),
        cli::Command::MergeDriver(a) => commands::merge_driver::run(a, err),
        cli::Command::Textconv(a) => commands::textconv::run(&env(), a, out),
    };
    match result {
        Ok(status) => status,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            2
        }
    }
}

/// The stderr of `--quiet`: only error messages (a line starting with
/// `error` and the lines that continue it) get through; notes, warnings
/// and progress do not.
struct ErrorsOnly<'a> {
    inner: &'a mut dyn Write,
    line: Vec<u8>,
    passing: bool,
}

impl<'a> ErrorsOnly<'a> {
    fn new(inner: &'a mut dyn Write) -> ErrorsOnly<'a> {
        ErrorsOnly {
            inner,
            line: Vec::new(),
            passing: false,
        }
    }

    fn judge_line(&mut self) -> std::io::Result<()> {
        let line = std::mem::take(&mut self.line);
        if line.starts_with(b"error") {
            self.passing = true;
        } else if line.starts_with(b"\r")
            || [&b"warning:"[..], b"note:", b"kams:", b"hint:"]
                .iter()
                .any(|p| line.starts_with(p))
        {
            self.passing = false;
        }
        if self.passing {
            self.inner.write_all(&line)?;
        }
        Ok(())
    }

    fn finish(&mut self) {
        if !self.line.is_empty() {
            let _ = self.judge_line();
        }
        let _ = self.inner.flush();
    }
}

impl Write for ErrorsOnly<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.line.push(b);
            if b == b'\n' {
                self.judge_line()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_keeps_errors_and_their_continuation_lines() {
        let mut got = Vec::new();
        let mut e = ErrorsOnly::new(&mut got);
        write!(e, "note: lock missing\nwarning: `x`: skipped\n").unwrap();
        write!(e, "error: not run:\n  x (.mcp.json)\nreview it\n").unwrap();
        write!(e, "warning: later\n\r\x1b[Kprogress").unwrap();
        e.finish();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "error: not run:\n  x (.mcp.json)\nreview it\n"
        );
    }
}
