//! `.pre-commit-hooks.yaml`, run by the real pre-commit framework (PyPI,
//! pinned in `common::py_tools`) from a repository that holds it, as a
//! user's `.pre-commit-config.yaml` would point at git-kams.

use std::path::Path;
use std::process::Output;

use crate::common::{copy, git, hermetic_command, kams, py_tools, real, repo, text};

/// A repository holding only our hook definitions, committed; returns its
/// head commit, for `rev:`.
fn hooks_repo(dir: &Path) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml");
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Hook Author"]);
    git(dir, &["config", "user.email", "hooks@example.com"]);
    std::fs::copy(manifest, dir.join(".pre-commit-hooks.yaml")).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "hooks"]);
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

/// Runs pre-commit with git-kams and the tools venv on PATH.
fn pre_commit(dir: &Path, cache: &Path, args: &[&str]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_git-kams")).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        py_tools().display(),
        std::env::var("PATH").unwrap()
    );
    hermetic_command(py_tools().join("pre-commit").to_str().unwrap(), dir)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", cache)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_hook_definitions_validate_and_run_under_pre_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let rev = hooks_repo(&tmp.path().join("hooks"));

    let out = pre_commit(
        tmp.path(),
        &cache,
        &["validate-manifest", "hooks/.pre-commit-hooks.yaml"],
    );
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // A project with an approved inventory.
    let project = repo();
    let dir = project.path();
    copy(
        &real("mcp-server-time@0.6.2.json"),
        dir,
        ".kams/inventory/time.json",
    );
    kams(dir)
        .args(["pin", "--no-commit", "-m", "reviewed"])
        .assert()
        .success();
    // Claude Code is the client: its deny rules are kept with the lock.
    std::fs::write(dir.join(".mcp.json"), "{\"mcpServers\": {}}\n").unwrap();
    kams(dir).args(["enforce"]).assert().success();
    std::fs::write(
        dir.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n- repo: {}\n  rev: {rev}\n  hooks:\n  - id: kams-scan\n  - id: kams-diff\n  - id: kams-enforce\n",
            tmp.path().join("hooks").display()
        ),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "approved"]);

    let out = pre_commit(dir, &cache, &["run", "--all-files"]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("git-kams scan") && shown.contains("Passed"),
        "{shown}"
    );

    // The server changes under the approval: both hooks fail, and the
    // scan's findings are what pre-commit shows.
    copy(
        &real("mcp-server-time@2026.10.19.json"),
        dir,
        ".kams/inventory/time.json",
    );
    git(dir, &["add", "-A"]);
    let out = pre_commit(dir, &cache, &["run", "--all-files"]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("Failed"), "{shown}");
    assert!(
        shown.contains("drift") && shown.contains("time/get_current_time"),
        "{shown}"
    );
    // The drifted tools are no longer approved as advertised: the rules
    // that refuse them are missing, until enforce writes them.
    assert!(
        shown.contains("out of date: ")
            && shown.contains("+ mcp__mcp-server-time__get_current_time"),
        "{shown}"
    );
    kams(dir).args(["enforce"]).assert().success();
    git(dir, &["add", "-A"]);
    let out = pre_commit(dir, &cache, &["run", "kams-enforce", "--all-files"]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{shown}");

    // Files the hooks do not watch do not run them.
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let out = pre_commit(dir, &cache, &["run", "--files", "notes.txt"]);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("Skipped"), "{shown}");
}
