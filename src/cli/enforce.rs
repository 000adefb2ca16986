//! The arguments of `enforce`, which carries the lock's approvals into the
//! clients' own settings.

use clap::Args;

/// The long help of `enforce`.
pub const ENFORCE_HELP: &str = "\
Write the lock's refusals into the MCP clients' own project settings, so that \
the model cannot call a tool nobody approved.

For every tool the lock denies, and every tool the inventory shows that is not \
pinned as it is shown (new, provisional, or drifted from what was pinned), a deny \
rule goes into each client's settings: Claude Code's .claude/settings.json \
(permissions.deny, `mcp__SERVER__TOOL`) and the Cursor CLI's .cursor/cli.json \
(permissions.deny, `Mcp(SERVER:TOOL)`), and the Gemini CLI's .gemini/settings.json \
(each server's excludeTools; a denied server in mcp.excluded). A denied server gets \
one rule for all its tools. VS Code has no such setting and is reported as not \
supported.

The files' other keys and rules stay as they are. The rules git-kams wrote are \
recorded in .kams/enforce.json (commit it with the settings), so that a later run \
takes out only its own rules that no longer apply; a rule you wrote is never taken \
out.

Without --client, the clients whose MCP config (.mcp.json, .cursor/mcp.json, \
.vscode/mcp.json, .gemini/settings.json) or settings file is at the top of the work \
tree.

With --check nothing is written: the exit status is 1 when a client's rules are out \
of date with the lock and the inventory (for the hooks and CI), 0 when they are up \
to date. pin, review and deny say when the rules need refreshing, and refresh them \
when git config kams.enforce is true.";

/// Arguments of `enforce`.
#[derive(Args, Debug)]
pub struct EnforceArgs {
    /// The client to write rules for (repeatable): claude-code, cursor, gemini-cli, vscode, or all
    /// [default: the clients configured at the top of the work tree]
    #[arg(long = "client", value_name = "NAME", value_parser = client)]
    pub clients: Vec<String>,

    /// Write nothing; exit 1 when a client's rules are out of date
    #[arg(long)]
    pub check: bool,
}

/// A `--client` value: a client's name or `all`.
fn client(s: &str) -> Result<String, String> {
    if s == "all" || crate::enforce::Client::parse(s).is_some() {
        Ok(s.to_string())
    } else {
        let names: Vec<&str> = crate::enforce::Client::ALL
            .iter()
            .map(|c| c.name())
            .collect();
        Err(format!(
            "`{s}` is no client git-kams knows: one of {}, or all",
            names.join(", ")
        ))
    }
}
