//! Signatures that prove something: with `kams.requireSigned`, a real
//! `git push` to a bare remote with the pre-receive hook is accepted only
//! for an approval signed by an approver's key (ssh keys made here with
//! `ssh-keygen`, checked against `gpg.ssh.allowedSignersFile`; gpg when it
//! is installed), sign-offs count only when well formed, and `log` and
//! `blame` say verified, unverified or unsigned.

use std::path::{Path, PathBuf};

use crate::common::{git, json, kams};
use crate::hooks::{accepted, inventory, refused, rev, run, Setup};

/// Keys made in a temporary folder: `ada` and `eve` are allowed signers
/// (only Ada is an approver), `mallory` is no allowed signer.
struct Keys {
    dir: tempfile::TempDir,
}

impl Keys {
    fn new() -> Keys {
        let dir = tempfile::tempdir().unwrap();
        let mut allowed = String::new();
        for name in ["ada", "eve", "mallory"] {
            let key = dir.path().join(name);
            let out = std::process::Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                .arg(&key)
                .output()
                .expect("ssh-keygen runs (openssh-client)");
            assert!(out.status.success(), "{out:?}");
            if name != "mallory" {
                let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
                allowed.push_str(&format!("{name}@example.org {public}"));
            }
        }
        std::fs::write(dir.path().join("allowed_signers"), allowed).unwrap();
        Keys { dir }
    }

    fn key(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn allowed(&self) -> String {
        self.dir
            .path()
            .join("allowed_signers")
            .to_str()
            .unwrap()
            .to_string()
    }
}

/// An approved first inventory on the remote, whose pre-receive hook then
/// requires a signature by approver Ada for every approval.
fn guarded() -> (Setup, Keys) {
    let s = Setup::approved();
    let keys = Keys::new();
    let r = s.remote();
    let out = kams(r).arg("init").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    git(r, &["config", "kams.approvers", "Ada <ada@example.org>"]);
    git(r, &["config", "kams.requireSigned", "true"]);
    git(
        r,
        &["config", "gpg.ssh.allowedSignersFile", &keys.allowed()],
    );
    (s, keys)
}

/// A new version of the time server, pinned and staged: an approval
/// waiting for its commit.
fn stage_approval(d: &Path) {
    inventory(d, "mcp-server-time@2026.10.19.json");
    kams(d)
        .args(["pin", "--no-commit", "-m", "time 2026.10.19 reviewed"])
        .assert()
        .success();
    git(d, &["add", "-A"]);
}

/// Commits what is staged as Ada (so `-s` signs off as Ada), signed with
/// ssh key `key` when given; extra arguments follow.
fn commit_as_ada(d: &Path, key: Option<&Path>, extra: &[&str]) {
    let signing = key.map(|k| format!("user.signingkey={}", k.display()));
    let mut args = vec![
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.org",
        "-c",
        "gpg.format=ssh",
    ];
    if let Some(s) = &signing {
        args.extend(["-c", s.as_str()]);
    }
    args.extend(["commit", "-q"]);
    if key.is_some() {
        args.push("-S");
    }
    args.extend(extra);
    let o = run(d, &args);
    assert!(o.status.success(), "{o:?}");
}

/// Rewrites HEAD with `header` as its signature header; the new id.
fn forge_signature(d: &Path, header: &str) -> String {
    let raw = git(d, &["cat-file", "commit", "HEAD"]);
    let (headers, message) = raw.split_once("\n\n").unwrap();
    let path = d.join(".git/forged-commit");
    std::fs::write(&path, format!("{headers}\ngpgsig {header}\n\n{message}")).unwrap();
    let id = git(
        d,
        &["hash-object", "-t", "commit", "-w", path.to_str().unwrap()],
    )
    .trim()
    .to_string();
    git(d, &["update-ref", "HEAD", &id]);
    id
}

const GARBAGE_SSH: &str =
    "-----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQ==\n -----END SSH SIGNATURE-----";

fn push_refused(s: &Setup) -> String {
    let before = rev(s.remote(), "main");
    let text = refused(s.dir(), &["push", "--no-verify", "origin", "main"]);
    assert!(text.contains("pre-receive hook declined"), "{text}");
    assert_eq!(rev(s.remote(), "main"), before);
    text
}

#[test]
fn a_good_ssh_signature_by_an_approver_passes_the_remote_hook() {
    let (s, keys) = guarded();
    let d = s.dir();
    stage_approval(d);
    commit_as_ada(d, Some(&keys.key("ada")), &["-s", "-m", "kams: time"]);
    accepted(d, &["push", "--no-verify", "origin", "main"]);
    assert_eq!(rev(s.remote(), "main"), rev(d, "main"));
}

#[test]
fn a_garbage_signature_header_is_not_a_signature() {
    let (s, _keys) = guarded();
    let d = s.dir();
    stage_approval(d);
    commit_as_ada(d, None, &["-s", "-m", "kams: time"]);
    for header in [
        GARBAGE_SSH,
        "garbage",
        "-----BEGIN PGP SIGNATURE-----\n AAAA\n -----END PGP SIGNATURE-----",
    ] {
        forge_signature(d, header);
        let text = push_refused(&s);
        assert!(
            text.contains("with a signature that is not verified")
                && text.contains("(kams.requireSigned)"),
            "{header}: {text}"
        );
        git(d, &["reset", "-q", "--soft", "HEAD~1"]);
        commit_as_ada(d, None, &["-s", "-m", "kams: time"]);
    }
}

#[test]
fn a_valid_signature_by_a_key_outside_the_allowed_signers_is_refused() {
    let (s, keys) = guarded();
    let d = s.dir();
    stage_approval(d);
    commit_as_ada(d, Some(&keys.key("mallory")), &["-s", "-m", "kams: time"]);
    // git itself can verify the signature is real, just by nobody known.
    let text = push_refused(&s);
    assert!(
        text.contains("no key in the allowed signers file"),
        "{text}"
    );
}

#[test]
fn a_signature_by_an_allowed_key_that_is_no_approvers_is_refused() {
    let (s, keys) = guarded();
    let d = s.dir();
    stage_approval(d);
    // Eve signs, and signs off in Ada's name: the sign-off is a claim,
    // the signature says who it was.
    commit_as_ada(d, Some(&keys.key("eve")), &["-s", "-m", "kams: time"]);
    let text = push_refused(&s);
    assert!(
        text.contains("signed by eve@example.org only, whose key is no approver's"),
        "{text}"
    );
}

#[test]
fn a_sign_off_with_two_addresses_counts_as_nobody() {
    let (s, keys) = guarded();
    let d = s.dir();
    let r = s.remote();
    stage_approval(d);
    for (require_signed, key) in [("false", None), ("true", Some(keys.key("ada")))] {
        git(r, &["config", "kams.requireSigned", require_signed]);
        for trailer in [
            "Mallory <m@evil> <ada@example.org>",
            "Mallory <m@evil>, Ada <ada@example.org>",
            "Mallory m@evil <ada@example.org>",
        ] {
            commit_as_ada(
                d,
                key.as_deref(),
                &["-m", &format!("kams: time\n\nSigned-off-by: {trailer}")],
            );
            let text = push_refused(&s);
            assert!(
                text.contains("without a valid Signed-off-by trailer")
                    && text.contains("counts as nobody"),
                "{trailer}: {text}"
            );
            git(d, &["reset", "-q", "--soft", "HEAD~1"]);
        }
    }
    // The same approval, signed off as one name and one address, passes.
    commit_as_ada(d, Some(&keys.key("ada")), &["-s", "-m", "kams: time"]);
    accepted(d, &["push", "--no-verify", "origin", "main"]);
}

#[test]
fn log_and_blame_say_verified_unverified_or_unsigned() {
    let s = Setup::approved();
    let keys = Keys::new();
    let d = s.dir();
    git(
        d,
        &["config", "gpg.ssh.allowedSignersFile", &keys.allowed()],
    );
    stage_approval(d);
    commit_as_ada(d, Some(&keys.key("ada")), &["-s", "-m", "kams: time"]);
    let verified = rev(d, "HEAD").unwrap();
    inventory(d, "mcp-server-time@0.6.2.json");
    kams(d)
        .args(["pin", "--no-commit", "-m", "back to 0.6.2"])
        .assert()
        .success();
    git(d, &["add", "-A"]);
    commit_as_ada(d, None, &["-s", "-m", "kams: back"]);
    let forged = forge_signature(d, GARBAGE_SSH);

    let out = kams(d).arg("log").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("signature verified by ada@example.org\n"),
        "{text}"
    );
    assert!(text.contains("signature unverified: "), "{text}");
    assert!(text.contains("signature unsigned\n"), "{text}");
    assert!(!text.contains("signature signed"), "{text}");

    let out = kams(d).args(["--format", "json", "log"]).output().unwrap();
    let report = json(&out.stdout);
    assert_eq!(report["version"], 3);
    let commits = report["commits"].as_array().unwrap();
    let words: Vec<(&str, &str)> = commits
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["signature"].as_str().unwrap()))
        .collect();
    assert_eq!(words[0], (forged.as_str(), "unverified"));
    assert_eq!(words[1], (verified.as_str(), "verified"));
    assert_eq!(words[2].1, "unsigned");
    assert_eq!(
        commits[1]["signers"],
        serde_json::json!(["ada@example.org"])
    );
    assert!(commits[0]["signature_problem"].is_string());

    // Blame, at the verified commit and at the forged one.
    let words = |at: &str| {
        let out = kams(d)
            .args(["--format", "json", "blame", "--at", at])
            .output()
            .unwrap();
        let report = json(&out.stdout);
        assert_eq!(report["version"], 3);
        report["entries"]
            .as_array()
            .unwrap()
            .iter()
            // A launch row names the commit that gave the launch its
            // value, which the forged commit did not change.
            .filter(|e| e["state"] != "launch")
            .map(|e| e["signature"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(words(&verified).contains(&"verified".to_string()));
    assert!(words("HEAD").iter().all(|w| w == "unverified"));
    let out = kams(d).args(["blame"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(" unverified "), "{text}");
}

#[test]
fn a_malformed_sign_off_is_marked_in_log() {
    let s = Setup::approved();
    let d = s.dir();
    stage_approval(d);
    commit_as_ada(
        d,
        None,
        &[
            "-m",
            "kams: time\n\nSigned-off-by: Mallory <m@evil> <ada@example.org>",
        ],
    );
    let out = kams(d).arg("log").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("approver  Mallory <m@evil> <ada@example.org> (malformed: "),
        "{text}"
    );
    let out = kams(d)
        .args(["--format", "json", "log", "-n", "1"])
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert_eq!(report["commits"][0]["approvers"], serde_json::json!([]));
    assert_eq!(
        report["commits"][0]["malformed_sign_offs"],
        serde_json::json!(["Mallory <m@evil> <ada@example.org>"])
    );
}

/// gpg, when it is installed (CI installs it): a key made here, trusted
/// ultimately as gpg trusts its own keys, signs as Ada.
#[test]
fn a_good_gpg_signature_by_an_approver_passes_and_a_stranger_is_refused() {
    if std::process::Command::new("gpg")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("gpg is not installed: skipped");
        return;
    }
    let (s, _keys) = guarded();
    let d = s.dir();
    let home = tempfile::Builder::new()
        .prefix("g")
        .tempdir_in("/tmp")
        .unwrap();
    let gpg = |args: &[&str]| {
        let o = std::process::Command::new("gpg")
            .env("GNUPGHOME", home.path())
            .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
    };
    gpg(&[
        "--quick-gen-key",
        "Ada <ada@example.org>",
        "ed25519",
        "sign",
        "never",
    ]);
    gpg(&[
        "--quick-gen-key",
        "Eve <eve@example.org>",
        "ed25519",
        "sign",
        "never",
    ]);
    let commit = |who: &str| {
        let o = crate::hooks::command(Path::new("git"), d)
            .env("GNUPGHOME", home.path())
            .args([
                "-c",
                "user.name=Ada",
                "-c",
                "user.email=ada@example.org",
                "-c",
                &format!("user.signingkey={who}@example.org"),
                "commit",
                "-q",
                "-S",
                "-s",
                "-m",
                "kams: time",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
    };
    let push = || {
        crate::hooks::command(Path::new("git"), d)
            .env("GNUPGHOME", home.path())
            .args(["push", "--no-verify", "origin", "main"])
            .output()
            .unwrap()
    };
    stage_approval(d);
    commit("eve");
    let o = push();
    let text = crate::hooks::printed(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("signed by eve@example.org only, whose key is no approver's"),
        "{text}"
    );
    git(d, &["reset", "-q", "--soft", "HEAD~1"]);
    commit("ada");
    let o = push();
    assert!(o.status.success(), "{}", crate::hooks::printed(&o));
    let _ = std::process::Command::new("gpgconf")
        .env("GNUPGHOME", home.path())
        .args(["--kill", "gpg-agent"])
        .output();
}

#[test]
fn a_commit_that_leaves_the_lock_alone_runs_no_verifier() {
    let (s, keys) = guarded();
    let d = s.dir();
    let marker = keys.dir.path().join("ran");
    let spy = keys.dir.path().join("spy");
    std::fs::write(
        &spy,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&spy, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(
        s.remote(),
        &["config", "gpg.ssh.program", spy.to_str().unwrap()],
    );
    std::fs::write(d.join("notes.txt"), "unrelated\n").unwrap();
    git(d, &["add", "notes.txt"]);
    git(d, &["commit", "-qm", "unrelated work"]);
    forge_signature(d, GARBAGE_SSH);
    accepted(d, &["push", "--no-verify", "origin", "main"]);
    assert!(
        !marker.exists(),
        "a verifier ran for a commit that approved nothing"
    );
    // An approval does run it (and, the spy failing, is refused).
    stage_approval(d);
    commit_as_ada(d, None, &["-s", "-m", "kams: time"]);
    forge_signature(d, GARBAGE_SSH);
    push_refused(&s);
    assert!(marker.exists());
}
