//! The arguments of the approval commands: `pin`, `review` and `deny`,
//! each of which writes kams.lock and commits it as an approval.

use clap::{Arg, Args};

use crate::commands::pin::Commit;

/// How an approval reaches git: who signs it off, and whether it is
/// committed. `pin`, `review`, `deny` and `import` take these options
/// alike (`deny` and `import` word the approver's help their own way).
#[derive(Args, Debug)]
pub struct CommitArgs {
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
    no_commit: bool,
}

impl CommitArgs {
    /// Whether the approval is committed: not with `--no-commit`.
    pub fn commit(&self) -> Commit {
        if self.no_commit {
            Commit::Skip
        } else {
            Commit::Make
        }
    }
}

/// Gives `--approver` the help `help`, for a command that words it its own
/// way. The argument stays where it is: `Command::mut_arg` would move it
/// last, and the completion scripts would list it after `--no-commit`.
pub(super) fn approver_help(help: &'static str) -> impl FnMut(Arg) -> Arg {
    move |a| {
        if a.get_id() == "approver" {
            a.help(help)
        } else {
            a
        }
    }
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

    /// Who signs the approval off, and whether it is committed
    #[command(flatten)]
    pub commit: CommitArgs,

    /// Approve even though what is approved has high or critical findings of these classes
    /// (poison, hidden, squat, shadow, ambiguous, transport, cloaking; all of them when none is given).
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
pub(super) const REVIEW_HELP: &str = "\
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

    /// Who signs the approval off, and whether it is committed
    #[command(flatten)]
    pub commit: CommitArgs,
}

/// The long help of `deny`.
pub(super) const DENY_HELP: &str = "\
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

/// Arguments of `deny`, whose approver is the denier.
#[derive(Args, Debug)]
#[command(mut_args(approver_help(
    "Denier as \"Name <email>\" [default: git config user.name and user.email]"
)))]
pub struct DenyArgs {
    /// What to refuse: SERVER/TOOL, or SERVER (its server entry and every tool)
    #[arg(value_name = "SERVER|SERVER/TOOL", required = true)]
    pub keys: Vec<String>,

    /// Why it is refused; stored in the lock with the denial
    #[arg(short = 'm', long = "message", value_name = "NOTE", required = true)]
    pub note: String,

    /// Who signs the denial off (the denier), and whether it is committed
    #[command(flatten)]
    pub commit: CommitArgs,
}
