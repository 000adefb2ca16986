//! The `git-kams` binary: parse, dispatch, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

// Reading a large inventory allocates millions of small strings; mimalloc
// does that about twice as fast as the system allocator (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its number in mimalloc 3's
/// `mi_option_t`; the crate names only the options both versions share).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> ExitCode {
    // Give freed memory back to the system after 3 ms instead of mimalloc
    // 3's 1 s, which outlasts a whole scan, so a large scan's temporaries
    // stayed in its peak; 1 ms saved a little more memory but slowed the
    // shortest commands (docs/performance.md, "Ninth pass", 46be0fd and
    // b0c2c71). Set before any other thread runs, as mimalloc asks.
    // SAFETY: a plain option store; no thread has started.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 3) };
    let cli = match git_kams::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version are clap's own text; an error quotes what was
        // typed, escaped.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::from(0);
        }
        Err(e) => {
            let shown = git_kams::cli::shown_error(&e, std::env::args_os());
            let _ = std::io::Write::write_all(&mut std::io::stderr(), shown.as_bytes());
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    // Buffered: a status of 100,000 entries is one write, not 100,000.
    let mut out = std::io::BufWriter::new(Unpiped::new(stdout.lock()));
    // Cache files are written while the run goes on, and waited for
    // before it exits.
    let background_writes = git_kams::cache::store::BackgroundWrites::begin();
    let code = git_kams::run(cli, &mut out, &mut Unpiped::new(stderr.lock()));
    let _ = std::io::Write::flush(&mut out);
    drop(background_writes);
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
