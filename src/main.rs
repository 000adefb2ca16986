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
    let mut out = std::io::BufWriter::new(stdout.lock());
    let code = git_kams::run(cli, &mut out, &mut stderr.lock());
    // A reader that went away is not an error (commands already flushed).
    let _ = std::io::Write::flush(&mut out);
    ExitCode::from(code)
}
