//! Whether a commit's signature is good, and whose it is.
//!
//! A `gpgsig` header is bytes anyone can write, and a `Signed-off-by:`
//! trailer is text anyone can type: only a signature checked against keys
//! the repository's owner trusts ties an approval to a person. This module
//! runs the same verifiers git does (`ssh-keygen -Y` against
//! `gpg.ssh.allowedSignersFile`, `gpg --verify` against the keyring) and
//! says who signed: the allowed-signers principals for ssh, the primary
//! user id's email of a fully trusted key for gpg. X.509 is not verified.
//!
//! The verifiers run with a clean environment, the signed payload on
//! stdin, the signature in a private temporary folder, and a deadline:
//! a verifier that hangs must not hang a push. Anything short of a good
//! signature by a known signer is [`Verdict::Unverified`], with the words
//! that say why (plain text: outputs escape it); nothing here fails open.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gix::ObjectId;

/// How long one verifier process may take, unless told otherwise.
const DEADLINE: Duration = Duration::from_secs(10);

/// How much of a verifier's output is read (its answer is a few lines).
const MAX_OUTPUT: u64 = 64 << 10;

/// Principals of one signature tried at most (each is one `ssh-keygen`).
const MAX_PRINCIPALS: usize = 16;

/// A commit's signature and the bytes it signs (the commit object without
/// its signature header), as `git verify-commit` checks them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    /// The armored signature.
    pub signature: Vec<u8>,
    /// What it signs.
    pub payload: Vec<u8>,
}

/// The signature and payload of commit `id`; `None` when it has no
/// signature header.
pub fn signed_of(repo: &gix::Repository, id: ObjectId) -> Result<Option<Signed>> {
    let commit = repo
        .find_commit(id)
        .with_context(|| format!("cannot read commit {id}"))?;
    signed_in(&commit.data, id.kind())
        .with_context(|| format!("cannot read the signature of commit {id}"))
}

/// What commit `id`'s signature proves; `has_signature` is what the log
/// cache knows (false: unsigned, nothing to read).
pub fn verdict_of(
    verifier: &Verifier,
    repo: &gix::Repository,
    id: ObjectId,
    has_signature: bool,
) -> Result<Verdict> {
    if !has_signature {
        return Ok(Verdict::Unsigned);
    }
    Ok(verifier.verify(signed_of(repo, id)?.as_ref()))
}

/// The signature and payload in a commit object's bytes.
pub fn signed_in(data: &[u8], kind: gix::hash::Kind) -> Result<Option<Signed>> {
    let found =
        gix::objs::CommitRefIter::signature(data, kind).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(found.map(|(signature, payload)| Signed {
        signature: signature.to_vec(),
        payload: payload.to_bstring().into(),
    }))
}

/// What a commit's signature proves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No signature header.
    Unsigned,
    /// A good signature by a known key.
    Verified {
        /// Who signed, lowercased: ssh principals, or the gpg key's email.
        signers: Vec<String>,
    },
    /// A signature header that proves nothing: why.
    Unverified(String),
}

impl Verdict {
    /// The word outputs use: `verified`, `unverified` or `unsigned`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Unsigned => "unsigned",
            Verdict::Verified { .. } => "verified",
            Verdict::Unverified(_) => "unverified",
        }
    }

    /// Who signed, for a verified signature.
    pub fn signers(&self) -> &[String] {
        match self {
            Verdict::Verified { signers } => signers,
            _ => &[],
        }
    }

    /// The verdict with who or why, on one line (`verified by a@x`,
    /// `unverified: ...`, `unsigned`).
    pub fn describe(&self) -> String {
        match self {
            Verdict::Unsigned => "unsigned".into(),
            Verdict::Verified { signers } => format!("verified by {}", signers.join(", ")),
            Verdict::Unverified(why) => format!("unverified: {why}"),
        }
    }
}

/// How signatures are checked: git's own settings, from git config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    /// `gpg.ssh.allowedSignersFile`: the keys ssh signatures may be made with.
    pub allowed_signers: Option<PathBuf>,
    /// `gpg.ssh.revocationFile`.
    pub revocation_file: Option<PathBuf>,
    /// `gpg.ssh.program`, else `ssh-keygen`.
    pub ssh_program: String,
    /// `gpg.openpgp.program` or `gpg.program`, else `gpg`.
    pub gpg_program: String,
    /// How long one verifier process may take before it is killed and the
    /// signature counts as unverified.
    pub deadline: Duration,
}

impl Default for Verifier {
    fn default() -> Verifier {
        Verifier {
            allowed_signers: None,
            revocation_file: None,
            ssh_program: "ssh-keygen".into(),
            gpg_program: "gpg".into(),
            deadline: DEADLINE,
        }
    }
}

impl Verifier {
    /// The verifier git's configuration describes (`config` looks a key up).
    /// Relative paths are relative to `base` (the top of the work tree, or
    /// the git dir of a bare repository, where hooks run); `~/` is the home
    /// folder.
    pub fn from_config(config: impl Fn(&str) -> Option<String>, base: Option<&Path>) -> Verifier {
        let path = |key: &str| {
            let v = config(key).filter(|v| !v.trim().is_empty())?;
            let p = match (v.strip_prefix("~/"), std::env::var_os("HOME")) {
                (Some(rest), Some(home)) => Path::new(&home).join(rest),
                _ => PathBuf::from(&v),
            };
            Some(match base {
                Some(b) if p.is_relative() => b.join(p),
                _ => p,
            })
        };
        let program = |keys: &[&str], default: &str| {
            keys.iter()
                .find_map(|k| config(k).filter(|v| !v.trim().is_empty()))
                .unwrap_or_else(|| default.to_string())
        };
        Verifier {
            allowed_signers: path("gpg.ssh.allowedSignersFile"),
            revocation_file: path("gpg.ssh.revocationFile"),
            ssh_program: program(&["gpg.ssh.program"], "ssh-keygen"),
            gpg_program: program(&["gpg.openpgp.program", "gpg.program"], "gpg"),
            deadline: DEADLINE,
        }
    }

    /// What `signed` proves (`None`: the commit has no signature).
    pub fn verify(&self, signed: Option<&Signed>) -> Verdict {
        let Some(signed) = signed else {
            return Verdict::Unsigned;
        };
        let sig = &signed.signature;
        if sig.starts_with(b"-----BEGIN SSH SIGNATURE-----") {
            self.verify_ssh(signed)
        } else if sig.starts_with(b"-----BEGIN PGP SIGNATURE-----")
            || sig.starts_with(b"-----BEGIN PGP MESSAGE-----")
        {
            self.verify_gpg(signed)
        } else if sig.starts_with(b"-----BEGIN SIGNED MESSAGE-----") {
            Verdict::Unverified(
                "an X.509 (gpgsm) signature, which git-kams does not verify; sign with ssh or gpg"
                    .into(),
            )
        } else {
            Verdict::Unverified("the signature header holds no known kind of signature".into())
        }
    }

    fn verify_ssh(&self, signed: &Signed) -> Verdict {
        let Some(allowed) = &self.allowed_signers else {
            return Verdict::Unverified(
                "an ssh signature, and git config gpg.ssh.allowedSignersFile is not set, so nobody can tell whose key made it".into(),
            );
        };
        if !allowed.is_file() {
            return Verdict::Unverified(format!(
                "an ssh signature, and the allowed signers file {} (git config gpg.ssh.allowedSignersFile) cannot be read",
                allowed.display()
            ));
        }
        let dir = match PrivateDir::new() {
            Ok(d) => d,
            Err(e) => return Verdict::Unverified(format!("cannot check it: {e:#}")),
        };
        let sig_file = dir.path.join("signature");
        if let Err(e) = std::fs::write(&sig_file, &signed.signature) {
            return Verdict::Unverified(format!(
                "cannot check it: cannot write the signature: {e}"
            ));
        }
        let mut common: Vec<OsString> = vec!["-f".into(), allowed.into()];
        if let Some(r) = self.revocation_file.as_ref().filter(|r| r.exists()) {
            common.extend(["-r".into(), r.into()]);
        }
        let mut find: Vec<OsString> = vec!["-Y".into(), "find-principals".into()];
        find.extend(common.iter().cloned());
        find.extend(["-s".into(), sig_file.clone().into()]);
        let found = match run(&self.ssh_program, &find, &[], self.deadline) {
            Ok(o) => o,
            Err(e) => return Verdict::Unverified(e),
        };
        if !found.success {
            return Verdict::Unverified(format!(
                "no key in the allowed signers file {} made it{}",
                allowed.display(),
                found.reason()
            ));
        }
        let text = String::from_utf8_lossy(&found.stdout);
        let principals: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .take(MAX_PRINCIPALS)
            .collect();
        let mut signers = Vec::new();
        let mut last = String::new();
        for p in principals {
            let mut verify: Vec<OsString> =
                vec!["-Y".into(), "verify".into(), "-n".into(), "git".into()];
            verify.extend(common.iter().cloned());
            verify.extend(["-I".into(), p.into(), "-s".into(), sig_file.clone().into()]);
            match run(&self.ssh_program, &verify, &signed.payload, self.deadline) {
                Ok(o) if o.success && o.stdout.starts_with(b"Good \"git\" signature for ") => {
                    signers.push(p.to_lowercase());
                }
                Ok(o) => last = o.reason(),
                Err(e) => return Verdict::Unverified(e),
            }
        }
        if signers.is_empty() {
            return Verdict::Unverified(format!("ssh-keygen did not verify it{last}"));
        }
        signers.sort();
        signers.dedup();
        Verdict::Verified { signers }
    }

    fn verify_gpg(&self, signed: &Signed) -> Verdict {
        let dir = match PrivateDir::new() {
            Ok(d) => d,
            Err(e) => return Verdict::Unverified(format!("cannot check it: {e:#}")),
        };
        let sig_file = dir.path.join("signature.asc");
        if let Err(e) = std::fs::write(&sig_file, &signed.signature) {
            return Verdict::Unverified(format!(
                "cannot check it: cannot write the signature: {e}"
            ));
        }
        let args: Vec<OsString> = vec![
            "--batch".into(),
            "--no-tty".into(),
            "--no-auto-key-retrieve".into(),
            "--keyid-format=long".into(),
            "--status-fd=1".into(),
            "--verify".into(),
            sig_file.into(),
            "-".into(),
        ];
        match run(&self.gpg_program, &args, &signed.payload, self.deadline) {
            Ok(o) => gpg_verdict(&String::from_utf8_lossy(&o.stdout), o.success),
            Err(e) => Verdict::Unverified(e),
        }
    }
}

/// The verdict of gpg's `--status-fd` lines: exactly one signature, good,
/// with a valid key whose owner is fully (or ultimately) trusted; the
/// signer is the email of the user id gpg names. Human text is not read.
pub fn gpg_verdict(status: &str, success: bool) -> Verdict {
    let mut results = Vec::new();
    let mut valid = false;
    let mut trusted = None;
    for line in status.lines() {
        let Some(rest) = line.strip_prefix("[GNUPG:] ") else {
            continue;
        };
        let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
        match word {
            "GOODSIG" | "BADSIG" | "ERRSIG" | "EXPSIG" | "EXPKEYSIG" | "REVKEYSIG" => {
                results.push((word, args.to_string()));
            }
            "VALIDSIG" => valid = true,
            w if w.starts_with("TRUST_") => trusted = Some(w.to_string()),
            _ => {}
        }
    }
    let (word, args) = match results.as_slice() {
        [] => {
            return Verdict::Unverified(
                "gpg found no signature it could check (is the key in the keyring?)".into(),
            )
        }
        [one] => one,
        _ => return Verdict::Unverified("gpg found more than one signature".into()),
    };
    let shown = args.trim();
    match *word {
        "GOODSIG" if valid && success => {}
        "GOODSIG" => {
            return Verdict::Unverified(format!("gpg did not confirm the signature by {shown}"))
        }
        "BADSIG" => {
            return Verdict::Unverified(format!("gpg: a bad signature, claiming to be by {shown}"))
        }
        "ERRSIG" => {
            return Verdict::Unverified(format!(
                "gpg cannot check it (the key {} is not in the keyring?)",
                args.split(' ').next().unwrap_or("")
            ))
        }
        "EXPSIG" => {
            return Verdict::Unverified(format!("gpg: the signature by {shown} has expired"))
        }
        "EXPKEYSIG" => return Verdict::Unverified(format!("gpg: the key of {shown} has expired")),
        _ => return Verdict::Unverified(format!("gpg: the key of {shown} is revoked")),
    }
    let uid = args.split_once(' ').map_or("", |(_, u)| u);
    if !matches!(trusted.as_deref(), Some("TRUST_FULLY" | "TRUST_ULTIMATE")) {
        return Verdict::Unverified(format!(
            "gpg: a good signature by {shown}, but the keyring does not vouch for whose key it is ({}); certify it with `gpg --lsign-key`",
            trusted.as_deref().unwrap_or("no trust line").to_ascii_lowercase()
        ));
    }
    match super::hooks::email_of(uid) {
        Some(email) => Verdict::Verified {
            signers: vec![email],
        },
        None => Verdict::Unverified(format!(
            "gpg: a good signature by {shown}, whose user id names no email"
        )),
    }
}

/// What a verifier process did.
struct Output {
    success: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Output {
    /// `: ` and the first line of stderr, escaped; empty when it said nothing.
    fn reason(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        match text.lines().map(str::trim).find(|l| !l.is_empty()) {
            Some(l) => format!(": {l}"),
            None => String::new(),
        }
    }
}

/// Runs `program` with `args`, `input` on stdin, a clean environment and
/// `deadline`; an error says (in words for a verdict) why it gave no
/// answer.
fn run(
    program: &str,
    args: &[OsString],
    input: &[u8],
    deadline: Duration,
) -> std::result::Result<Output, String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The verifier's own settings only: where it finds programs and keys,
    // and English, machine-stable output.
    for key in ["PATH", "HOME", "GNUPGHOME"] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.env("LC_ALL", "C");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let shown = program;
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run `{shown}` to check it: {e}"))?;
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    let readers = [
        (
            true,
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
        (
            false,
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
    ];
    for (is_out, pipe) in readers {
        let Some(pipe) = pipe else { continue };
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut buf);
            let _ = tx.send((is_out, buf));
        });
    }
    drop(tx);
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(None) => {
                kill(&mut child);
                return Err(format!(
                    "`{shown}` gave no answer within {} ms",
                    deadline.as_millis()
                ));
            }
            Err(e) => {
                kill(&mut child);
                return Err(format!("cannot wait for `{shown}`: {e}"));
            }
        }
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    // A helper it started (gpg-agent) may hold the pipes open: the
    // answer is whatever arrived by the deadline.
    for _ in 0..2 {
        let left = deadline.saturating_sub(start.elapsed());
        match rx.recv_timeout(left.max(Duration::from_millis(100))) {
            Ok((true, b)) => stdout = b,
            Ok((false, b)) => stderr = b,
            Err(_) => break,
        }
    }
    Ok(Output {
        success: status.success(),
        stdout,
        stderr,
    })
}

fn kill(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on the process group we made for the child.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A temporary folder only this user can enter, removed when dropped:
/// the signature is handed to the verifier by path, and no other user may
/// swap it meanwhile.
struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    fn new() -> Result<PrivateDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        for _ in 0..16 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("kams-verify-{}-{nanos:x}-{n}", std::process::id()));
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            match builder.create(&path) {
                Ok(()) => return Ok(PrivateDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot make a temporary folder in {}", base.display())
                    })
                }
            }
        }
        anyhow::bail!(
            "cannot make a temporary folder in {}: every name tried exists",
            base.display()
        )
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpg_status_lines_make_the_verdict() {
        let good = "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG ABCDEF0123456789 Ada <Ada@Example.org>\n[GNUPG:] VALIDSIG FPR 2026-01-01 0 4 0 22 10 00 FPR\n[GNUPG:] TRUST_ULTIMATE 0 pgp\n";
        assert_eq!(
            gpg_verdict(good, true),
            Verdict::Verified {
                signers: vec!["ada@example.org".into()]
            }
        );
        // Good, but nobody vouched for the key: who it is is unknown.
        let untrusted = good.replace("TRUST_ULTIMATE", "TRUST_UNDEFINED");
        assert!(
            matches!(gpg_verdict(&untrusted, true), Verdict::Unverified(w) if w.contains("lsign"))
        );
        // A failed gpg, two results, a bad signature, no status at all.
        assert_eq!(gpg_verdict(good, false).word(), "unverified");
        let two = format!("{good}[GNUPG:] GOODSIG 1 Eve <eve@x>\n");
        assert_eq!(gpg_verdict(&two, true).word(), "unverified");
        assert_eq!(
            gpg_verdict("[GNUPG:] BADSIG 1 Ada <ada@example.org>\n", false).word(),
            "unverified"
        );
        assert_eq!(
            gpg_verdict("Good signature from Ada", true).word(),
            "unverified"
        );
    }

    #[test]
    fn a_verifier_that_hangs_is_killed_at_the_deadline() {
        let dir = std::env::temp_dir().join(format!("kams-hang-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let allowed = dir.join("allowed");
        std::fs::write(&allowed, "a@x ssh-ed25519 AAAA\n").unwrap();
        let hang = dir.join("hang");
        std::fs::write(&hang, "#!/bin/sh\n[ \"$1\" = probe ] && exit 0\nsleep 30\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Another test's thread may fork while the script is still open for
        // writing here; its child holds the write descriptor until it execs,
        // and running the script fails with ETXTBSY until then. Wait until
        // the script runs.
        for _ in 0..100 {
            match std::process::Command::new(&hang).arg("probe").status() {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break,
            }
        }
        let v = Verifier {
            allowed_signers: Some(allowed),
            ssh_program: hang.to_str().unwrap().into(),
            deadline: Duration::from_millis(300),
            ..Verifier::default()
        };
        let start = Instant::now();
        let verdict = v.verify(Some(&Signed {
            signature: b"-----BEGIN SSH SIGNATURE-----\nx\n".to_vec(),
            payload: Vec::new(),
        }));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert!(
            matches!(&verdict, Verdict::Unverified(w) if w.contains("no answer within 300 ms")),
            "{verdict:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_signature_of_no_known_kind_or_x509_is_unverified() {
        let v = Verifier::default();
        let signed = |s: &str| Signed {
            signature: s.as_bytes().to_vec(),
            payload: b"tree 0\n".to_vec(),
        };
        assert_eq!(v.verify(None), Verdict::Unsigned);
        assert_eq!(v.verify(Some(&signed("garbage"))).word(), "unverified");
        assert_eq!(
            v.verify(Some(&signed("-----BEGIN SIGNED MESSAGE-----\nx\n")))
                .word(),
            "unverified"
        );
        // ssh without an allowed signers file: nobody can tell whose.
        let ssh = v.verify(Some(&signed("-----BEGIN SSH SIGNATURE-----\nx\n")));
        assert!(
            matches!(&ssh, Verdict::Unverified(w) if w.contains("allowedSignersFile")),
            "{ssh:?}"
        );
    }
}
