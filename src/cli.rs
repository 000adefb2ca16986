//! The command line: every clap type, and how clap's usage errors are
//! shown.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
    /// .mcp.json, .vscode/mcp.json, .cursor/mcp.json]
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
    #[command(long_about = REVIEW_HELP)]
    Review(ReviewArgs),
    /// Refuse a tool: the entry becomes denied, with denier, time and note, whatever it advertises
    #[command(long_about = DENY_HELP)]
    Deny(DenyArgs),
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
    #[command(long_about = CAPTURE_HELP)]
    Capture(CaptureArgs),
    /// Write the man pages where man finds them, so that `git kams --help` opens them
    InstallMan(InstallManArgs),
    /// Print a shell completion script for git-kams
    Completions(CompletionsArgs),
    /// Take over approvals made with DescriptorPin or kams: their pinned tools become pinned entries
    #[command(long_about = IMPORT_HELP)]
    Import(ImportArgs),
    /// git's merge driver for kams.lock: merges two locks entry by entry (`git kams init`
    /// registers it)
    #[command(hide = true, long_about = MERGE_DRIVER_HELP)]
    MergeDriver(MergeDriverArgs),
    /// git's diff filter for kams.lock and inventory files: prints FILE with every hidden
    /// character shown as \u{XXXX} (`git kams init` registers it)
    #[command(hide = true, long_about = TEXTCONV_HELP)]
    Textconv(TextconvArgs),
}

/// Arguments of `install-man`.
#[derive(Args, Debug)]
pub struct InstallManArgs {
    /// Man folder to write man1/ into [default: share/man beside the folder of this
    /// executable, e.g. ~/.cargo/share/man for ~/.cargo/bin/git-kams, which man finds
    /// through PATH]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Arguments of `completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The long help of `import`: what is carried over and what is not.
const IMPORT_HELP: &str = "\
Take over approvals made with DescriptorPin (pin.json) or kams (kams.lock): each tool
they approved becomes a pinned entry of kams.lock, with the approver and note the file
records, and the change is committed, signed off by you, as `git kams pin` does.

Every hash the file stores is recomputed from the descriptor it holds; a tool whose hash
does not match was edited after its review and is refused. An entry already in kams.lock
with the same descriptor is kept as it is; one with a different descriptor is a conflict,
replaced only with --force. Nothing is written unless every tool can be imported.

Those tools pin only name, description and input schema: titles, annotations, output
schemas and server-level fields (instructions, serverInfo) were never reviewed there, so
the next `git kams scan` shows them as drift of the imported entries; review them and
`git kams pin`. See docs/imports.md.

Exit status: 0 imported (or nothing to do), 1 refused or conflicting entries (nothing
written), 2 a malformed file or an unknown format version (nothing written).";

/// Arguments of `import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Which tool wrote the file
    #[command(subcommand)]
    pub source: ImportSource,
}

/// The tools whose approval files `import` reads.
#[derive(Subcommand, Debug)]
pub enum ImportSource {
    /// Import DescriptorPin's pin.json (format descriptorpin/pin/1)
    #[command(long_about = IMPORT_HELP)]
    Descriptorpin(ImportFileArgs),
    /// Import kams's kams.lock (version 1); it records no approver: you become the approver
    #[command(long_about = IMPORT_HELP)]
    Kams(ImportFileArgs),
}

/// Arguments of `import descriptorpin` and `import kams`.
#[derive(Args, Debug)]
pub struct ImportFileArgs {
    /// The file to import
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Replace entries of kams.lock whose descriptor differs from the imported one
    #[arg(long)]
    pub force: bool,

    /// You, as `"Name <email>"`: the approver of tools the file names none
    /// for, and the commit's sign-off (the help text is given whole, as it
    /// holds `<email>`, which rustdoc would take for HTML).
    #[arg(
        long,
        value_name = "NAME <EMAIL>",
        help = "You, as \"Name <email>\": the approver of tools the file names none for, and the commit's sign-off [default: git config user.name and user.email]"
    )]
    pub approver: Option<String>,

    /// Only write kams.lock, do not commit (outside a repository this is always the case)
    #[arg(long)]
    pub no_commit: bool,
}

/// The long help of `merge-driver`.
const MERGE_DRIVER_HELP: &str = "\
git's merge driver for kams.lock. git runs it as `git kams merge-driver %O %A %B %P`
(`git kams init` sets merge.kams-lock.driver) with the lock of the merge base, ours and
theirs in temporary files, and takes %A as the result.

Each server's launch, server entry and tool entry is merged on its own: a change made
on one side only is taken, the same change on both sides is taken once, and entries
added, removed or re-pinned on different sides never conflict. Two sides that recorded
the same entry at different times keep the earlier first_seen. Different changes to the
same entry (or launch) on both sides, a removal against a change included, are a
conflict: %A then holds our side of it, so it stays a valid lock, and stderr names each
conflicting entry, what each side did and how to resolve it.

Exit status: 0 merged, 1 conflicts (git marks kams.lock conflicted), 2 a lock could not
be read (corrupt, or of a newer format version) or %A could not be written; %A is then
left as it was.";

/// The long help of `textconv`.
const TEXTCONV_HELP: &str = "\
git's textconv filter for kams.lock and inventory files (`git kams init` sets
diff.kams-lock.textconv). Prints FILE as it is, except that every character that renders
as nothing or changes what the terminal shows (zero-width, bidi controls, tags, C0 and
C1 controls but tab, line feed and the CR of a CRLF) is written \\u{XXXX}, and a byte
that is not UTF-8 is written \\x{XX}, so that `git diff` and `git log -p` show them. A
backslash before something that reads like such an escape is doubled, so that an
escape cannot be forged by the file.

Exit status: 0 printed (whatever the file holds), 2 the file cannot be read.";

/// Arguments of `merge-driver`, in the order git's `%O %A %B %P` gives them.
#[derive(Args, Debug)]
pub struct MergeDriverArgs {
    /// The lock of the merge base (%O; empty when the file did not exist there)
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// Our lock (%A); the merge is written here
    #[arg(value_name = "OURS")]
    pub ours: PathBuf,
    /// Their lock (%B)
    #[arg(value_name = "THEIRS")]
    pub theirs: PathBuf,
    /// The lock's path in the work tree (%P), for messages [default: kams.lock]
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
}

/// Arguments of `textconv`.
#[derive(Args, Debug)]
pub struct TextconvArgs {
    /// The file to print
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// The long help of `capture`: what it runs, with what, and what it writes.
const CAPTURE_HELP: &str = "\
Ask each MCP server of the client configs what it advertises, and write one capture
file per server into the inventory folder, in the format every other command reads.

This RUNS THE COMMANDS the configs name (stdio servers), as your MCP client would, and
connects to the URLs they name (streamable HTTP, legacy SSE). Read the configs first.
A server runs without asking only when an approval stands behind its launch (command,
arguments, environment, URL): kams.lock in the work tree and at HEAD records exactly
that launch, and the commit that recorded it has the sign-off the hooks ask for
(kams.approvers, kams.requireSigned). Any other server needs a yes on a terminal, or
--yes; `git kams record` and `git kams pin` record the launch from the capture files.

Configs: the work tree's .mcp.json, .vscode/mcp.json and .cursor/mcp.json, and every
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

/// Arguments of `log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    /// Only commits that changed these entries (SERVER or SERVER/TOOL)
    #[arg(value_name = "SERVER|SERVER/TOOL")]
    pub keys: Vec<String>,

    /// Show at most this many commits
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub max_count: Option<usize>,

    /// Only commits more recent than this date (as git log --since: 2026-01-31, "2 weeks ago", ...)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    /// Only commits older than this date
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,

    /// Start from this revision instead of HEAD
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub at: String,
}

/// Arguments of `blame`.
#[derive(Args, Debug)]
pub struct BlameArgs {
    /// Only these entries (SERVER or SERVER/TOOL); all when none
    #[arg(value_name = "SERVER|SERVER/TOOL")]
    pub keys: Vec<String>,

    /// Blame the lock as it is at this revision
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub at: String,
}

/// Arguments of `init`.
#[derive(Args, Debug)]
pub struct InitArgs {}

/// Arguments of `hook`.
#[derive(Args, Debug)]
pub struct HookArgs {
    /// Which hook
    #[command(subcommand)]
    pub hook: HookKind,
}

/// The hooks git-kams implements.
#[derive(Subcommand, Debug)]
pub enum HookKind {
    /// Client side: refuse to push refs whose tip has unapproved drift or whose
    /// commits change pinned entries without a valid sign-off (reads git's pre-push stdin)
    PrePush {
        /// The remote's name, as git passes it
        remote: Option<String>,
        /// The remote's URL, as git passes it
        url: Option<String>,
    },
    /// Server side, in a bare repository: the same rules for every pushed ref (reads `old new ref` lines)
    PreReceive,
}

/// The long help of `deny`.
const DENY_HELP: &str = "\
Refuse a tool (SERVER/TOOL) or a server's own entry and every tool of it (SERVER): each
selected entry of kams.lock becomes denied, with you as the denier, the time and NOTE,
and the change is committed, signed off by you, as `git kams pin` commits an approval.

A denied entry stays denied whatever the server advertises under that name: while it is
advertised, `git kams scan` reports a high `denied` finding and the pre-push and
pre-receive hooks refuse the push. A client should not offer a denied tool to the model
(see docs/lockfile.md). A denial is kept when the tool stops being advertised, so that
it is caught if it comes back. `git kams pin SERVER/TOOL` (naming the entry, not a wider
selection) overturns a denial.

Exit status: 0 denied (or already denied as it is), 2 an error (nothing written).";

/// Arguments of `deny`.
#[derive(Args, Debug)]
pub struct DenyArgs {
    /// What to refuse: SERVER/TOOL, or SERVER (its server entry and every tool)
    #[arg(value_name = "SERVER|SERVER/TOOL", required = true)]
    pub keys: Vec<String>,

    /// Why it is refused; stored in the lock with the denial
    #[arg(short = 'm', long = "message", value_name = "NOTE", required = true)]
    pub note: String,

    /// Denier as `"Name <email>"`.
    #[arg(
        long,
        value_name = "NAME <EMAIL>",
        help = "Denier as \"Name <email>\" [default: git config user.name and user.email]"
    )]
    pub approver: Option<String>,

    /// Only write kams.lock, do not commit (outside a repository this is always the case)
    #[arg(long)]
    pub no_commit: bool,
}

/// Arguments of `pin`.
#[derive(Args, Debug)]
pub struct PinArgs {
    /// What to approve: SERVER (its server entry and every tool) or SERVER/TOOL; all when none
    #[arg(value_name = "SERVER|SERVER/TOOL")]
    pub keys: Vec<String>,

    /// Why this is approved; stored in the lock with the approval
    #[arg(short = 'm', long = "message", value_name = "NOTE", required = true)]
    pub note: String,

    /// Approver as `"Name <email>"` (the help text is given whole, as it
    /// holds `<email>`, which rustdoc would take for HTML).
    #[arg(
        long,
        value_name = "NAME <EMAIL>",
        help = "Approver as \"Name <email>\" [default: git config user.name and user.email]"
    )]
    pub approver: Option<String>,

    /// Only write kams.lock, do not commit (outside a repository this is always the case)
    #[arg(long)]
    pub no_commit: bool,

    /// Approve even though what is approved has high or critical findings of these classes
    /// (poison, hidden, squat, shadow, ambiguous, transport; all of them when none is given).
    /// Without it pin prints such findings and refuses (exit 1); the approval commit records
    /// each finding it accepted
    #[arg(
        long,
        value_name = "CLASS[,CLASS]",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        value_parser = accepted_classes
    )]
    pub accept_findings: Option<Accepted>,

    /// Do not ask before approving everything (a pin with no SERVER or TOOL asks on a terminal)
    #[arg(short = 'y', long)]
    pub yes: bool,
}

/// The finding classes `pin --accept-findings` accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accepted(pub Vec<crate::finding::Class>);

/// `--accept-findings`' value: nothing (every class pin refuses), or
/// classes separated by commas, each one that pin refuses.
fn accepted_classes(s: &str) -> Result<Accepted, String> {
    use crate::finding::Class;
    if s.is_empty() {
        return Ok(Accepted(Class::GATED.to_vec()));
    }
    let mut classes = Vec::new();
    for name in s.split(',').map(str::trim) {
        match name.parse::<Class>() {
            Ok(c) if Class::GATED.contains(&c) => classes.push(c),
            _ => {
                let valid: Vec<&str> = Class::GATED.iter().map(|c| c.as_str()).collect();
                return Err(format!(
                    "`{name}` is not a class pin asks to accept (expected one or more of {}, separated by commas)",
                    valid.join(", ")
                ));
            }
        }
    }
    Ok(Accepted(classes))
}

/// The long help of `review`: the keys, and what the commit holds.
const REVIEW_HELP: &str = "\
Review each entry that differs from the lock, the way `git add -p` reviews hunks: a new
tool, a drifted one, one no longer advertised, a server's changed launch. Each gets one
screen with its whole change (every changed field, word diffs for text, hidden characters
shown as \\u{XXXX}) and every finding on it, then a prompt:

  a [NOTE]  approve this entry (NOTE replaces the default note for it)
  s         skip: leave it as it is in the lock
  d [NOTE]  deny it, as `git kams deny` does (a launch cannot be denied)
  b         back to the previous entry
  q         quit: keep the decisions made so far, leave the rest as they are
  ?         help

At the end, the approved entries are written to kams.lock and committed in one approval
commit, signed off by the approver, exactly as `git kams pin` makes it (with the inventory
files they were approved from). Each entry keeps its own note; the default note (-m, or
asked once at the start) goes to the others and to the commit message.

review reads its keys from a terminal. Without one it exits 2 and lists the
`git kams pin SERVER/TOOL -m NOTE` commands that approve the same entries.";

/// Arguments of `review`.
#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// What to review: SERVER (its server entry, launch and every tool) or SERVER/TOOL; all when none
    #[arg(value_name = "SERVER|SERVER/TOOL")]
    pub keys: Vec<String>,

    /// The default note of each approval, and the commit's [default: asked once at the start]
    #[arg(short = 'm', long = "message", value_name = "NOTE")]
    pub note: Option<String>,

    /// Approver as `"Name <email>"` (see `PinArgs::approver`).
    #[arg(
        long,
        value_name = "NAME <EMAIL>",
        help = "Approver as \"Name <email>\" [default: git config user.name and user.email]"
    )]
    pub approver: Option<String>,

    /// Only write kams.lock, do not commit (outside a repository this is always the case)
    #[arg(long)]
    pub no_commit: bool,
}

/// Entry selection, and the revisions to read from.
#[derive(Args, Debug)]
pub struct SelectArgs {
    /// Limit to SERVER or SERVER/TOOL entries; all when none
    #[arg(value_name = "SERVER|SERVER/TOOL")]
    pub keys: Vec<String>,

    /// Compare against kams.lock as it was at this revision (a commit, HEAD~3, a tag, a branch, @{upstream}),
    /// read from git without touching the work tree
    #[arg(long, value_name = "REV")]
    pub at: Option<String>,

    /// Read the inventory committed at this revision instead of the work tree's
    #[arg(long, value_name = "REV")]
    pub inventory_at: Option<String>,
}

/// Arguments of `scan` and `diff`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Entries and revisions
    #[command(flatten)]
    pub select: SelectArgs,

    /// Exit 1 when a finding is at or above this severity (info, low, medium, high, critical, or never)
    /// [default: git config kams.failOn, else low]
    #[arg(long, value_name = "SEVERITY")]
    pub fail_on: Option<String>,

    /// Capture the configured servers now (RUNS their commands, see `git kams capture --help`;
    /// only the servers SERVER|SERVER/TOOL name, when given) and scan what they advertise instead
    /// of the inventory files, writing no file; exit 2 when a capture fails (its lock entries are
    /// not reported as removed)
    #[arg(long, conflicts_with = "inventory_at")]
    pub capture: bool,

    /// How to capture, with --capture (they do nothing without it)
    #[command(flatten, next_help_heading = "With --capture")]
    pub capture_opts: CaptureOpts,
}

/// Arguments of `scan`: those it shares with `diff`, and the metrics export.
#[derive(Args, Debug)]
pub struct ScanCommand {
    /// What to scan and when to fail
    #[command(flatten)]
    pub scan: ScanArgs,

    /// Where to send metrics
    #[command(flatten, next_help_heading = "Metrics")]
    pub metrics: MetricsArgs,
}

/// Where `scan` sends its counts as OpenTelemetry metrics (docs/metrics.md).
#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// After the scan, POST the counts of findings as OTLP/HTTP metrics to this base URL
    /// (v1/metrics is appended); a failed export is a warning and leaves the exit status as it is
    /// [default: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT;
    /// neither: nothing is sent]
    #[arg(long, value_name = "URL", value_parser = crate::metrics::export::parse_base_url)]
    pub otlp_endpoint: Option<String>,
}

/// A size in bytes as `--max-input-size` and `kams.maxInputSize` take it:
/// digits, optionally followed by k, m or g (powers of 1024); a size past
/// u64 is refused, not wrapped.
fn size(s: &str) -> Result<u64, String> {
    crate::commands::parse_size(s).ok_or_else(|| {
        format!("`{s}` is not a size in bytes (digits, optionally followed by k, m or g, at most 18446744073709551615 bytes)")
    })
}
