//! The `git-kams` binary: parse, dispatch, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

// Reading a large inventory allocates millions of small strings; mimalloc
// does that about twice as fast as the system allocator (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match git_kams::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    // Buffered: a status of 100,000 entries is one write, not 100,000.
    let mut out = std::io::BufWriter::new(Unpiped::new(stdout.lock()));
    let code = git_kams::run(cli, &mut out, &mut Unpiped::new(stderr.lock()));
    let _ = std::io::Write::flush(&mut out);
    ExitCode::from(code)
}

/// A reader that went away (`git kams log | head`) is not an error: once
/// the pipe is broken, output is dropped and the command runs to its end,
/// so that its exit status still tells what it found.
struct Unpiped<W> {
    inner: W,
    broken: bool,
}

impl<W> Unpiped<W> {
    fn new(inner: W) -> Unpiped<W> {
        Unpiped {
            inner,
            broken: false,
        }
    }
}

impl<W: std::io::Write> std::io::Write for Unpiped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.broken {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.broken = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.broken = true;
                Ok(())
            }
            other => other,
        }
    }
}
