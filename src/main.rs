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
    let code = git_kams::run(cli, &mut stdout.lock(), &mut stderr.lock());
    ExitCode::from(code)
}
