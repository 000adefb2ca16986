//! Issue 22, cases 10 and 16 and their kin: every file git-kams writes in
//! a work tree or a repository (`.gitattributes`, hooks, the lock, the
//! merge driver's output, capture files and man pages through the shared
//! writer, cache files, git config) is refused when it is a symbolic link,
//! a FIFO or a folder, and nothing a link points to is ever written; every
//! file it reads (the lock, inventory files, client configs) must be a
//! regular file, and a FIFO is an error at once, never a wait.
//!
//! FIFOs are made with `mkfifo(3)`; each command that could wait on one
//! runs under a wall-clock bound (assert_cmd's timeout kills it), so a
//! regression shows as a failure, not as a test that never ends.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common::{git, kams, repo, text};

/// Longer than any of these commands takes; a wait on a FIFO is forever.
const BOUND: Duration = Duration::from_secs(20);

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo touches no memory of ours.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{path:?}");
}

/// `git kams ARGS` in `dir`, killed past [`BOUND`].
fn bounded(dir: &Path, args: &[&str]) -> Output {
    kams(dir)
        .args(args)
        .timeout(BOUND)
        .output()
        .expect("git-kams runs")
}

/// Asserts exit 2 with one `error:` line holding each of `says`.
fn error(out: &Output, says: &[&str]) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    for s in says {
        assert!(err.contains(s), "missing {s:?} in {err}");
    }
    err
}

const INVENTORY: &str =
    r#"{"server": "s", "transport": "stdio", "tools": [{"name": "a", "description": "Adds."}]}"#;

/// A repository with `.kams/inventory/s.json` committed and pinned.
fn pinned() -> tempfile::TempDir {
    let r = repo();
    let d = r.path();
    std::fs::create_dir_all(d.join(".kams/inventory")).unwrap();
    std::fs::write(d.join(".kams/inventory/s.json"), INVENTORY).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "inventory"]);
    kams(d)
        .args(["pin", "-m", "ok", "--approver", "A <a@x>"])
        .assert()
        .success();
    r
}

/// Case 10: a committed `.gitattributes` that links out of the work tree
/// had `init`'s two lines appended to its target.
#[test]
fn init_does_not_write_through_a_symlinked_gitattributes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("repo");
    std::fs::create_dir(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    let victim = tmp.path().join("victim_file");
    std::fs::write(&victim, "precious\n").unwrap();
    symlink("../victim_file", d.join(".gitattributes")).unwrap();
    let out = bounded(&d, &["init"]);
    error(
        &out,
        &[".gitattributes: is a symbolic link (to ../victim_file)"],
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(std::fs::symlink_metadata(d.join(".gitattributes"))
        .unwrap()
        .file_type()
        .is_symlink());

    // A FIFO there: refused at once, not waited on.
    std::fs::remove_file(d.join(".gitattributes")).unwrap();
    mkfifo(&d.join(".gitattributes"));
    error(&bounded(&d, &["init"]), &[".gitattributes: is a FIFO"]);
    std::fs::remove_file(d.join(".gitattributes")).unwrap();
    bounded(&d, &["init"])
        .status
        .success()
        .then_some(())
        .unwrap();
}

/// A hook file that is a link (in `.git/hooks`, or in a committed
/// `core.hooksPath` folder) would have had its target read into the new
/// hook, or made executable.
#[test]
fn init_does_not_write_or_chmod_a_hook_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("repo");
    std::fs::create_dir(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "#!/bin/sh\necho mine\n").unwrap();
    for hooks in [".git/hooks", ".githooks"] {
        if hooks == ".githooks" {
            git(&d, &["config", "core.hooksPath", ".githooks"]);
        }
        std::fs::create_dir_all(d.join(hooks)).unwrap();
        let hook = d.join(hooks).join("pre-push");
        symlink(&victim, &hook).unwrap();
        let out = bounded(&d, &["init"]);
        error(&out, &["pre-push: is a symbolic link (to "]);
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0, "{hooks}: the target was made executable");
        assert!(std::fs::symlink_metadata(&hook)
            .unwrap()
            .file_type()
            .is_symlink());
        std::fs::remove_file(&hook).unwrap();
    }
    // The `core.hooksPath` folder itself as a link.
    std::fs::remove_dir(d.join(".githooks")).unwrap();
    std::fs::create_dir(tmp.path().join("elsewhere")).unwrap();
    symlink("../elsewhere", d.join(".githooks")).unwrap();
    let out = bounded(&d, &["init"]);
    error(&out, &[".githooks: is a symbolic link (to ../elsewhere)"]);
    assert_eq!(
        std::fs::read_dir(tmp.path().join("elsewhere"))
            .unwrap()
            .count(),
        0
    );
}

/// `.git/config` is replaced by a rename of `config.lock`: a link there is
/// refused rather than turned into a file.
#[test]
fn init_refuses_a_git_config_that_is_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("repo");
    std::fs::create_dir(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    std::fs::rename(d.join(".git/config"), tmp.path().join("config")).unwrap();
    symlink(tmp.path().join("config"), d.join(".git/config")).unwrap();
    let before = std::fs::read(tmp.path().join("config")).unwrap();
    let out = bounded(&d, &["init"]);
    error(&out, &["config: is a symbolic link (to "]);
    assert_eq!(std::fs::read(tmp.path().join("config")).unwrap(), before);
}

/// The merge driver replaces %A: a link there is refused, its target kept.
#[test]
fn the_merge_driver_does_not_write_through_a_link() {
    let r = pinned();
    let d = r.path();
    let lock = std::fs::read(d.join("kams.lock")).unwrap();
    for side in ["base", "theirs", "target"] {
        std::fs::write(d.join(side), &lock).unwrap();
    }
    symlink("target", d.join("ours")).unwrap();
    let out = bounded(d, &["merge-driver", "base", "ours", "theirs"]);
    error(&out, &["ours: is a symbolic link (to target)"]);
    assert_eq!(std::fs::read(d.join("target")).unwrap(), lock);
}

/// The shared atomic writer (capture files, man pages) refuses a link or a
/// FIFO where its file goes.
#[test]
fn the_shared_writer_refuses_a_link_or_a_fifo() {
    let tmp = tempfile::tempdir().unwrap();
    let man1 = tmp.path().join("man/man1");
    std::fs::create_dir_all(&man1).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    symlink(&victim, man1.join("git-kams.1")).unwrap();
    let dir = tmp.path().join("man");
    let dir = dir.to_str().unwrap();
    let out = bounded(tmp.path(), &["install-man", "--dir", dir]);
    error(&out, &["git-kams.1: is a symbolic link (to "]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    std::fs::remove_file(man1.join("git-kams.1")).unwrap();
    mkfifo(&man1.join("git-kams.1"));
    let out = bounded(tmp.path(), &["install-man", "--dir", dir]);
    error(&out, &["git-kams.1: is a FIFO"]);
    std::fs::remove_file(man1.join("git-kams.1")).unwrap();
    assert!(bounded(tmp.path(), &["install-man", "--dir", dir])
        .status
        .success());
}

/// `capture` writes into the inventory folder: a committed link in its
/// place (or on the way to it) would have it write out of the work tree.
#[test]
fn capture_does_not_write_into_a_linked_inventory_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("repo");
    std::fs::create_dir(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    std::fs::create_dir(tmp.path().join("outside")).unwrap();
    std::fs::create_dir(d.join(".kams")).unwrap();
    symlink("../../outside", d.join(".kams/inventory")).unwrap();
    std::fs::write(
        d.join(".mcp.json"),
        r#"{"mcpServers": {"s": {"command": "true"}}}"#,
    )
    .unwrap();
    let out = bounded(&d, &["capture", "--yes"]);
    error(
        &out,
        &[".kams/inventory: is a symbolic link (to ../../outside)"],
    );
    assert_eq!(
        std::fs::read_dir(tmp.path().join("outside"))
            .unwrap()
            .count(),
        0
    );
}

/// A cache file under `.git/kams` that is a link is replaced, never
/// written through, and never read.
#[test]
fn cache_files_are_not_written_through_links() {
    let r = pinned();
    let d = r.path();
    assert_eq!(bounded(d, &["status"]).status.code(), Some(0));
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    let links: Vec<_> = std::fs::read_dir(d.join(".git/kams"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .collect();
    assert!(!links.is_empty());
    for p in &links {
        std::fs::write(&victim, "precious").unwrap();
        std::fs::remove_file(p).unwrap();
        symlink(&victim, p).unwrap();
    }
    assert_eq!(bounded(d, &["status"]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// Case 16: a lock that is a FIFO made `status` wait forever; so did an
/// inventory file or a client config. Each is now an error at once.
#[test]
fn a_fifo_where_a_file_is_read_is_an_error_not_a_wait() {
    let r = pinned();
    let d = r.path();
    let lock = std::fs::read(d.join("kams.lock")).unwrap();

    std::fs::remove_file(d.join("kams.lock")).unwrap();
    mkfifo(&d.join("kams.lock"));
    for command in [&["status"][..], &["scan"], &["record"], &["diff"]] {
        let out = bounded(d, command);
        error(&out, &["kams.lock: is a FIFO (named pipe)"]);
    }
    std::fs::remove_file(d.join("kams.lock")).unwrap();
    std::fs::write(d.join("kams.lock"), &lock).unwrap();

    // A FIFO where a writer takes its claim (kams.lock.lock): looked at
    // to tell whether it is stale, never opened.
    mkfifo(&d.join("kams.lock.lock"));
    error(
        &bounded(d, &["record"]),
        &["kams.lock.lock: is a FIFO", "remove it"],
    );
    std::fs::remove_file(d.join("kams.lock.lock")).unwrap();

    // A FIFO named like an inventory file in the folder, and one named
    // with --inventory.
    mkfifo(&d.join(".kams/inventory/t.json"));
    error(&bounded(d, &["status"]), &["t.json: is a FIFO"]);
    let fifo = d.join(".kams/inventory/t.json");
    let named = fifo.to_str().unwrap();
    error(
        &bounded(d, &["--inventory", named, "status"]),
        &["t.json: is a FIFO"],
    );
    std::fs::remove_file(&fifo).unwrap();

    // A client config.
    mkfifo(&d.join(".mcp.json"));
    error(&bounded(d, &["scan"]), &[".mcp.json: is a FIFO"]);
    std::fs::remove_file(d.join(".mcp.json")).unwrap();

    // A client config behind a linked folder.
    std::fs::create_dir(d.join("vscode")).unwrap();
    std::fs::write(
        d.join("vscode/mcp.json"),
        r#"{"servers": {"x": {"command": "true"}}}"#,
    )
    .unwrap();
    symlink("vscode", d.join(".vscode")).unwrap();
    error(
        &bounded(d, &["scan"]),
        &[
            ".vscode: a folder on the way to ",
            "is a symbolic link (to vscode)",
        ],
    );
    std::fs::remove_file(d.join(".vscode")).unwrap();

    // A device: not opened at all.
    error(
        &bounded(d, &["--lock", "/dev/zero", "status"]),
        &["/dev/zero: is a device"],
    );
    assert_eq!(bounded(d, &["status"]).status.code(), Some(0));
}

/// A symlinked inventory file, or a symlinked inventory folder, is refused
/// in the work tree as the hooks refuse it in a commit (see hooks.rs).
#[test]
fn a_symlinked_inventory_is_refused_in_the_work_tree() {
    let r = pinned();
    let d = r.path();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("outside.json");
    std::fs::write(&target, INVENTORY.replace("Adds.", "Exfiltrates.")).unwrap();
    symlink(&target, d.join(".kams/inventory/t.json")).unwrap();
    error(
        &bounded(d, &["scan"]),
        &["t.json: is a symbolic link (to ", "outside.json)"],
    );
    std::fs::remove_file(d.join(".kams/inventory/t.json")).unwrap();
    std::fs::rename(d.join(".kams/inventory"), d.join("inv")).unwrap();
    symlink("../inv", d.join(".kams/inventory")).unwrap();
    error(
        &bounded(d, &["status"]),
        &[".kams/inventory: is a symbolic link (to ../inv)"],
    );
}
