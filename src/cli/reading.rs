//! The arguments of the commands that read and report: `status`, `scan`
//! and `diff` (which entries, at which revisions, when to fail), `log`
//! and `blame`.

use clap::Args;

use super::CaptureOpts;

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
