//! The arguments of `capture`, and how servers are captured (which
//! `scan --capture` shares).

use std::path::PathBuf;

use clap::Args;

/// The long help of `capture`: what it runs, with what, and what it writes.
pub(super) const CAPTURE_HELP: &str = "\
Ask each MCP server of the client configs what it advertises, and write one capture
file per server into the inventory folder, in the format every other command reads.

This RUNS THE COMMANDS the configs name (stdio servers), as your MCP client would, and
connects to the URLs they name (streamable HTTP, legacy SSE). Read the configs first.
A server runs without asking only when an approval stands behind its launch (command,
arguments, environment, URL): kams.lock in the work tree and at HEAD records exactly
that launch, and the commit that recorded it has the sign-off the hooks ask for
(kams.approvers, kams.requireSigned). Any other server needs a yes on a terminal, or
--yes; `git kams record` and `git kams pin` record the launch from the capture files.

Configs: the work tree's .mcp.json, .vscode/mcp.json, .cursor/mcp.json and
.gemini/settings.json (its httpUrl is streamable HTTP, its url SSE), and every
--config PATH (Claude Desktop's claude_desktop_config.json, say); always as they are in
the work tree, never from another revision. ${VAR}, ${VAR:-default}, ${env:VAR},
${workspaceFolder} and ${userHome} are expanded; ${input:...} is refused.

A stdio server runs in the top of the work tree, in a process group of its own, with
only PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG, LC_ALL and TMPDIR from your
environment plus the variables its config names; the whole group is ended afterwards.
The client declares no capabilities: a server that asks for roots gets an empty list,
one that asks for sampling or elicitation is declined.

A server that advertises exactly what its file holds (all but the capture time) leaves
the file untouched (`unchanged`). A prompts, resources or templates list the server
refuses with an error is a warning, and the file records it as unavailable; a failing
tools/list fails the server. A capture file in the folder whose server no client config
names any more is noted; --prune removes it.

Exit status: 0 every server captured, 1 at least one failed (the others are written;
failed servers' earlier files are left as they were), 2 nothing was run (bad config,
unknown server, two configs defining one server differently, names whose files differ
only in case, no confirmation).";

/// How servers are captured (`capture`, `scan --capture`).
#[derive(Args, Debug, Clone)]
pub struct CaptureOpts {
    /// Run servers without asking even when no approval stands behind their launch (not
    /// recorded in kams.lock, another one recorded, not committed, or committed without a valid
    /// sign-off)
    #[arg(long)]
    pub yes: bool,

    /// Seconds each server gets, from start to end of session [default: 30]
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,

    /// Servers captured at once [default: 8]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Capture each server once per client identity (the clientInfo that client sends), and
    /// report a server that answers them differently (cloaking): claude-code, claude-desktop,
    /// cursor, vscode, codex, gemini-cli, git-kams, comma-separated, or all. The file holds the
    /// first one's answer [default: git-kams alone]
    #[arg(long = "as", value_name = "CLIENTS", value_parser = identities)]
    pub as_clients: Option<Identities>,
}

/// The identities a `--as` value names, in order.
#[derive(Clone, Debug)]
pub struct Identities(pub Vec<crate::capture::identity::Identity>);

/// A `--as` value.
fn identities(s: &str) -> Result<Identities, String> {
    crate::capture::identity::parse(s).map(Identities)
}

/// Arguments of `capture`.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Only these servers (names in the configs); all when none
    #[arg(value_name = "SERVER")]
    pub servers: Vec<String>,

    /// How to capture
    #[command(flatten)]
    pub opts: CaptureOpts,

    /// Folder to write to (and to prune) [default: the inventory folder, which must be one
    /// folder: --inventory, git config kams.inventory, else .kams/inventory/]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Remove the capture files of the folder whose server no client config names any more
    /// (only files capture wrote; each removal is printed)
    #[arg(long)]
    pub prune: bool,
}
