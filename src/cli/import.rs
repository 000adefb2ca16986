//! The arguments of `import`: which older tool's approval file to take
//! over, and how.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::approval::approver_help;
use super::CommitArgs;

/// The long help of `import`: what is carried over and what is not.
pub(super) const IMPORT_HELP: &str = "\
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

/// Arguments of `import descriptorpin` and `import kams`, whose approver
/// is also the approver of the tools the file names none for.
#[derive(Args, Debug)]
#[command(mut_args(approver_help(
    "You, as \"Name <email>\": the approver of tools the file names none for, and the commit's sign-off [default: git config user.name and user.email]"
)))]
pub struct ImportFileArgs {
    /// The file to import
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Replace entries of kams.lock whose descriptor differs from the imported one
    #[arg(long)]
    pub force: bool,

    /// You, the approver of tools the file names none for, and whether
    /// the import is committed
    #[command(flatten)]
    pub commit: CommitArgs,
}
