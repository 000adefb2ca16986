//! Who may approve: the sign-off policy of git config `kams.approvers` and
//! `kams.requireSigned`, and whether one commit's credentials meet it.
//!
//! A `Signed-off-by:` trailer is a claim anyone can type; it counts only
//! when it is exactly one name and one address, and then only as a
//! claim. With `kams.requireSigned` the commit must also carry a
//! signature that verifies ([`super::signature`]) and, when approvers are
//! named, be signed by one of them: that is what ties an approval to a
//! person.
//!
//! It lives apart from the hooks because two places ask it the same
//! question: the hooks, of every commit that approves something in the
//! lock, and `capture`, of the commit that recorded a server's launch
//! (a launch is run without asking only when that commit meets the
//! policy). One answer for both, so that what the hooks would refuse is
//! never run.

use anyhow::{bail, Result};

use super::hooks::{self, CommitFacts, LockHistory};
use super::signature::{Verdict, Verifier};
use crate::text::escape_display;

/// The sign-off policy, from git config.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// `kams.approvers` emails, lowercased; empty: any sign-off will do.
    pub approvers: Vec<String>,
    /// `kams.requireSigned`: a verified signature, by an approver when
    /// `approvers` names any.
    pub require_signed: bool,
    /// How signatures are checked (git's `gpg.*` settings).
    pub verifier: Verifier,
}

/// What a commit lacks to count as an approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// No `Signed-off-by` trailer.
    SignOff,
    /// Signed off, but by nobody in `kams.approvers`.
    Approver,
    /// No verified signature (by an approver, when approvers are named),
    /// while `kams.requireSigned` asks for one.
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
        Ok(Policy {
            approvers,
            require_signed,
            verifier: Verifier::default(),
        })
    }

    /// The policy checking signatures with `verifier`; what it cannot
    /// check goes to `notes`.
    pub fn with_verifier(mut self, verifier: Verifier, notes: &mut Vec<String>) -> Policy {
        if self.require_signed && verifier.allowed_signers.is_none() {
            notes.push("kams.requireSigned: git config gpg.ssh.allowedSignersFile is not set, so no ssh signature can be verified (gpg signatures are checked against the keyring)".into());
        }
        self.verifier = verifier;
        self
    }

    /// What the commit of `facts` lacks to count as an approval, each with
    /// the words that say so; empty when it meets the policy.
    pub fn shortfalls(&self, facts: &CommitFacts) -> Vec<(Shortfall, String)> {
        let mut out = Vec::new();
        let mut emails = Vec::new();
        let mut malformed = Vec::new();
        for s in &facts.sign_offs {
            match super::parse_sign_off(s) {
                Ok(email) => emails.push(email),
                Err(why) => {
                    malformed.push(format!("`Signed-off-by: {s}` ({why}) counts as nobody"))
                }
            }
        }
        let malformed = malformed.join(", ");
        if emails.is_empty() {
            out.push((
                Shortfall::SignOff,
                if malformed.is_empty() {
                    "without a Signed-off-by trailer".to_string()
                } else {
                    format!("without a valid Signed-off-by trailer: {malformed}")
                },
            ));
        } else if !self.approvers.is_empty() && !emails.iter().any(|e| self.approvers.contains(e)) {
            let well_formed: Vec<String> = facts
                .sign_offs
                .iter()
                .filter(|s| super::parse_sign_off(s).is_ok())
                .cloned()
                .collect();
            out.push((
                Shortfall::Approver,
                format!(
                    "signed off by {} only, not an approver (git config kams.approvers){}",
                    well_formed.join(", "),
                    if malformed.is_empty() {
                        String::new()
                    } else {
                        format!("; {malformed}")
                    }
                ),
            ));
        }
        if self.require_signed {
            let why = match facts.verdict(&self.verifier) {
                Verdict::Unsigned => Some("without a signature".to_string()),
                Verdict::Unverified(why) => {
                    Some(format!("with a signature that is not verified ({why})"))
                }
                Verdict::Verified { signers }
                    if !self.approvers.is_empty()
                        && !signers.iter().any(|s| self.approvers.contains(s)) =>
                {
                    Some(format!(
                        "signed by {} only, whose key is no approver's (git config kams.approvers)",
                        signers.join(", ")
                    ))
                }
                Verdict::Verified { .. } => None,
            };
            if let Some(why) = why {
                out.push((Shortfall::Signature, format!("{why} (kams.requireSigned)")));
            }
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
