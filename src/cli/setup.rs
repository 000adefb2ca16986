//! The arguments of the commands that set git-kams into git and the
//! shell, and of those git then runs: `init`, `hook`, `merge-driver`,
//! `textconv`, `install-man` and `completions`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

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
    /// Client side: refuse to push refs whose tip has unapproved drift or clients' deny
    /// rules out of date with its lock, or whose commits change pinned entries without a
    /// valid sign-off (reads git's pre-push stdin)
    PrePush {
        /// The remote's name, as git passes it
        remote: Option<String>,
        /// The remote's URL, as git passes it
        url: Option<String>,
    },
    /// Server side, in a bare repository: the same rules for every pushed ref (reads `old new ref` lines)
    PreReceive,
}

/// The long help of `merge-driver`.
pub(super) const MERGE_DRIVER_HELP: &str = "\
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
pub(super) const TEXTCONV_HELP: &str = "\
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
