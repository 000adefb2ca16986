//! Who may approve: the sign-off policy of git config `kams.approvers` and
//! `kams.requireSigned`, and whether one commit's credentials meet it.
//!
//! It lives apart from the hooks because two places ask it the same
//! question: the hooks, of every commit that approves something in the
//! lock, and `capture`, of the commit that recorded a server's launch
//! (a launch is run without asking only when that commit meets the
//! policy). One answer for both, so that what the hooks would refuse is
//! never run.

use anyhow::{bail, Result};

use super::hooks::{self, CommitFacts, LockHistory};
use crate::text::escape_display;

/// The sign-off policy, from git config.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// `kams.approvers` emails, lowercased; empty: any sign-off will do.
    pub approvers: Vec<String>,
    /// `kams.requireSigned`.
    pub require_signed: bool,
}

/// What a commit lacks to count as an approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// No `Signed-off-by` trailer.
    SignOff,
    /// Signed off, but by nobody in `kams.approvers`.
    Approver,
    /// No signature, while `kams.requireSigned` asks for one.
    Signature,
}

impl Policy {
    /// The policy of `approvers` (the value of `kams.approvers`, if set)
    /// and `require_signed`. Approvers that name no email are told in
    /// `notes`; a value that names no email at all is an error (it would
    /// otherwise let any sign-off through).
    pub fn new(
        approvers: Option<&str>,
        require_signed: bool,
        notes: &mut Vec<String>,
    ) -> Result<Policy> {
        let approvers = match approvers {
            Some(v) if !v.trim().is_empty() => {
                let (emails, unusable) = hooks::parse_approvers(v);
                for u in unusable {
                    notes.push(format!(
                        "git config kams.approvers: `{}` has no email and matches nobody",
                        escape_display(&u)
                    ));
                }
                if emails.is_empty() {
                    bail!("git config kams.approvers is set but names no email (expected `Name <email>` or emails, separated by commas)");
                }
                emails
            }
            _ => Vec::new(),
        };
        if require_signed {
            notes.push(
                "kams.requireSigned: approval commits must carry a signature; it is not verified here (have the server or CI verify it, e.g. with git verify-commit)".into(),
            );
        }
        Ok(Policy {
            approvers,
            require_signed,
        })
    }

    /// What the commit of `facts` lacks to count as an approval, each with
    /// the words that say so; empty when it meets the policy.
    pub fn shortfalls(&self, facts: &CommitFacts) -> Vec<(Shortfall, String)> {
        let mut out = Vec::new();
        if facts.sign_offs.is_empty() {
            out.push((
                Shortfall::SignOff,
                "without a Signed-off-by trailer".to_string(),
            ));
        } else if !self.approvers.is_empty()
            && !facts
                .sign_offs
                .iter()
                .filter_map(|s| hooks::email_of(s))
                .any(|e| self.approvers.contains(&e))
        {
            out.push((
                Shortfall::Approver,
                format!(
                    "signed off by {} only, not an approver (git config kams.approvers)",
                    facts.sign_offs.join(", ")
                ),
            ));
        }
        if self.require_signed && !facts.signed {
            out.push((
                Shortfall::Signature,
                "without a signature (kams.requireSigned)".to_string(),
            ));
        }
        out
    }
}

impl Policy {
    /// Whether the launch of `server` recorded in the lock at `tip` is
    /// approved: the commit that gave it its value ([`LockHistory::launch_origin`])
    /// is `Ok`, when it meets the policy; else why not. `Err` of the inner
    /// result also when the lock at `tip` records no launch for `server`.
    pub fn launch_approval(
        &self,
        history: &mut LockHistory<'_>,
        tip: gix::ObjectId,
        server: &str,
    ) -> Result<std::result::Result<gix::ObjectId, String>> {
        Ok(match history.launch_origin(tip, server)? {
            None => Err("no launch of it is committed".to_string()),
            Some((facts, true)) => Err(format!(
                "its launch was recorded beyond the shallow boundary at {}, where its approval cannot be seen",
                facts.id.to_hex_with_len(7)
            )),
            Some((facts, false)) => {
                let short: Vec<String> = self
                    .shortfalls(&facts)
                    .into_iter()
                    .map(|(_, why)| why)
                    .collect();
                if short.is_empty() {
                    Ok(facts.id)
                } else {
                    Err(format!(
                        "its launch was recorded by commit {} {}",
                        facts.id.to_hex_with_len(7),
                        short.join(" and ")
                    ))
                }
            }
        })
    }
}
