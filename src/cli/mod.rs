//! The command line: the top of it (the commands, the options they all
//! share, the value parsers they share) and how clap's usage errors are
//! shown. Each group of commands' arguments has a file of its own.

mod approval;
mod capture;
mod enforce;
mod import;
mod reading;
mod setup;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use approval::{Accepted, CommitArgs, DenyArgs, PinArgs, ReviewArgs};
pub use capture::{CaptureArgs, CaptureOpts, Identities};
pub use enforce::EnforceArgs;
pub use import::{ImportArgs, ImportFileArgs, ImportSource};
pub use reading::{BlameArgs, LogArgs, MetricsArgs, ScanArgs, ScanCommand, SelectArgs};
pub use setup::{
    CompletionsArgs, HookArgs, HookKind, InitArgs, InstallManArgs, MergeDriverArgs, TextconvArgs,
};

use crate::report::Format;

/// The names `--format` takes. The report writers stay free of the command
/// line (docs/architecture.md, "The rule"), so the mapping lives here.
impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[Format::Text, Format::Json, Format::Sarif]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            Format::Text => {
                PossibleValue::new("text").help("One line per finding, evidence indented under it")
            }
            Format::Json => PossibleValue::new("json")
                .help("`{\"version\": 1, \"findings\": [...], \"summary\": {...}}`"),
            Format::Sarif => PossibleValue::new("sarif")
                .help("SARIF 2.1.0, for code scanning (`scan` and `diff` only)"),
        })
    }
}

/// The usage error `e` that parsing `args` gave, as it is printed: clap's
/// text without colours, every control or invisible character but the
/// line feed escaped. clap quotes the offending argument as it was typed,
/// so an argument holding ESC or BEL bytes would otherwise reach the
/// terminal raw; it is parsed again without colours so that what is left
/// to escape is only what was typed.
pub fn shown_error(e: &clap::Error, args: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    use clap::CommandFactory;
    let plain = Cli::command()
        .color(clap::ColorChoice::Never)
        .styles(clap::builder::Styles::plain())
        .try_get_matches_from(args)
        .err();
    let text = plain.as_ref().unwrap_or(e).render().ansi().to_string();
    text.split('\n')
        .map(crate::text::escape_display)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Keep MCP tool descriptors reviewed and versioned in git.
///
/// git-kams records what each MCP server advertises (tool names,
/// descriptions, schemas, annotations, server instructions) in kams.lock,
/// lets a reviewer pin it, and reports every change after approval, field
/// by field, with a severity. It never runs anything an inventory says.
///
/// Exit status: 0 no finding at or above --fail-on, 1 findings, 2 usage or
/// input error (a corrupt lock, unreadable inventory, bad arguments).
#[derive(Parser, Debug)]
#[command(
    name = "git-kams",
    bin_name = "git kams",
    version,
    max_term_width = 100
)]
pub struct Cli {
    /// Options shared by every command.
    #[command(flatten)]
    pub global: Global,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by every command.
#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Inventory file or folder of *.json / *.jsonl files (repeatable)
    /// [default: git config kams.inventory, else .kams/inventory/ at the top of the work tree]
    #[arg(long, global = true, value_name = "PATH")]
    pub inventory: Vec<PathBuf>,

    /// Lock file; works outside any git repository
    /// [default: git config kams.lock, else kams.lock at the top of the work tree]
    #[arg(long, global = true, value_name = "PATH")]
    pub lock: Option<PathBuf>,

    /// Server name for a bare tools/list result or JSON-RPC lines
    #[arg(long, global = true, value_name = "NAME")]
    pub server: Option<String>,

    /// Largest input file read (for capture: largest message from a server, and all it lists),
    /// in bytes, or with a suffix k, m or g [default: git config kams.maxInputSize, else 134217728]
    #[arg(long, global = true, value_name = "BYTES", value_parser = size)]
    pub max_input_size: Option<u64>,

    /// Output format (capture: text only)
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Colour the text report: auto (only on a terminal, and not when NO_COLOR is set), always, never
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print nothing but errors; the exit status tells the outcome
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say on stderr what is read and how long each step takes
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// MCP client config to read as well, e.g. Claude Desktop's claude_desktop_config.json
    /// (repeatable). scan and status read it; capture and scan --capture RUN its servers, as the
    /// ones of the default configs [always read when present, at the top of the work tree:
    /// .mcp.json, .vscode/mcp.json, .cursor/mcp.json, .gemini/settings.json]
    #[arg(long = "config", global = true, value_name = "PATH")]
    pub config: Vec<PathBuf>,
}

/// When to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set or TERM is dumb.
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Remember first sightings as provisional entries (existing entries stay as they are)
    Record,
    /// Approve what the inventory shows now: entries become pinned with approver, time and note
    Pin(PinArgs),
    /// Review each entry that differs from the lock, one screen each, and approve, skip or deny it
    #[command(long_about = approval::REVIEW_HELP)]
    Review(ReviewArgs),
    /// Refuse a tool: the entry becomes denied, with denier, time and note, whatever it advertises
    #[command(long_about = approval::DENY_HELP)]
    Deny(DenyArgs),
    /// Write the lock's refusals into the MCP clients' settings (Claude Code, Cursor CLI), so
    /// that the model cannot call a tool nobody approved
    #[command(long_about = enforce::ENFORCE_HELP)]
    Enforce(EnforceArgs),
    /// Show each entry's state and digests, and whether the inventory still matches
    Status(SelectArgs),
    /// Report every finding of the inventory against the lock
    Scan(ScanCommand),
    /// Show field-level diffs between the lock and the inventory
    Diff(ScanArgs),
    /// Approval history: the commits that changed kams.lock, newest first
    Log(LogArgs),
    /// For each lock entry, the commit that gave it its current value
    Blame(BlameArgs),
    /// Install the pre-push hook and register git-kams in .gitattributes and git config
    Init(InitArgs),
    /// Run a git hook's check (pre-push, pre-receive); git calls this through the installed shim
    Hook(HookArgs),
    /// RUNS the configured MCP servers' commands (or connects to their URLs) and writes
    /// what each advertises into the inventory folder
    #[command(long_about = capture::CAPTURE_HELP)]
    Capture(CaptureArgs),
    /// Write the man pages where man finds them, so that `git kams --help` opens them
    InstallMan(InstallManArgs),
    /// Print a shell completion script for git-kams
    Completions(CompletionsArgs),
    /// Take over approvals made with DescriptorPin or kams: their pinned tools become pinned entries
    #[command(long_about = import::IMPORT_HELP)]
    Import(ImportArgs),
    /// git's merge driver for kams.lock: merges two locks entry by entry (`git kams init`
    /// registers it)
    #[command(hide = true, long_about = setup::MERGE_DRIVER_HELP)]
    MergeDriver(MergeDriverArgs),
    /// git's diff filter for kams.lock and inventory files: prints FILE with every hidden
    /// character shown as \u{XXXX} (`git kams init` registers it)
    #[command(hide = true, long_about = setup::TEXTCONV_HELP)]
    Textconv(TextconvArgs),
}

/// A size in bytes as `--max-input-size` and `kams.maxInputSize` take it:
/// digits, optionally followed by k, m or g (powers of 1024); a size past
/// u64 is refused, not wrapped.
fn size(s: &str) -> Result<u64, String> {
    crate::commands::parse_size(s).ok_or_else(|| {
        format!("`{s}` is not a size in bytes (digits, optionally followed by k, m or g, at most 18446744073709551615 bytes)")
    })
}
