//! git-kams: MCP tool descriptors as a reviewed, versioned artifact in git.
//!
//! The pipeline, in modules: [`inventory`] reads what servers advertise,
//! [`canon`] and [`descriptor`] give each tool a canonical form and digests,
//! [`lock`] keeps what was seen and approved, [`compare`] and [`detect`]
//! turn the two into [`finding`]s, and [`report`] writes them. [`git`] and
//! [`commands`] are the edge where files, git and the command line meet the
//! pure core.

pub mod canon;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod descriptor;
pub mod detect;
pub mod finding;
pub mod git;
pub mod inventory;
pub mod json;
pub mod lock;
pub mod report;
pub mod text;

use std::io::Write;

/// Runs a parsed command line, writing to `out` and `err`; returns the exit
/// status (0 clean, 1 findings, 2 error).
pub fn run(cli: cli::Cli, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    // Only the commands that read the repository look for it: git runs the
    // drivers once per file (textconv once per blob of a `git log -p`).
    let env = || commands::Env::new(cli.global.clone());
    let result = match &cli.command {
        cli::Command::Record => commands::record::run(&env(), out),
        cli::Command::Pin(a) => commands::pin::run(&env(), a, out),
        cli::Command::Status(a) => commands::status::run(&env(), a, out, err),
        cli::Command::Scan(a) => commands::scan::run(&env(), a, false, out, err),
        cli::Command::Diff(a) => commands::scan::run(&env(), a, true, out, err),
        cli::Command::Log(a) => commands::log::run(&env(), a, out),
        cli::Command::Blame(a) => commands::blame::run(&env(), a, out),
        cli::Command::Init(a) => commands::init::run(&env(), a, out),
        cli::Command::Hook(a) => commands::hook::run(&env(), a, out, err),
        cli::Command::Capture(a) => commands::capture::run(&env(), a, out, err),
        cli::Command::MergeDriver(a) => commands::merge_driver::run(a, err),
        cli::Command::Textconv(a) => commands::textconv::run(a, out),
    };
    match result {
        Ok(status) => status,
        Err(e) => {
            let _ = writeln!(err, "error: {e:#}");
            2
        }
    }
}
