//! The `git-kams` binary: parse, dispatch, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

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
