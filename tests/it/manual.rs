//! Help the git way: `git kams --help` is `git help kams`, which opens
//! `man git-kams`; the pages come from `git kams install-man`.

use std::path::Path;

use crate::common::{hermetic_command, kams, repo, text};

#[test]
fn git_kams_help_opens_the_installed_man_page() {
    let repo = repo();
    let dir = repo.path();
    let man = dir.join("man");
    let out = kams(dir)
        .args(["install-man", "--dir"])
        .arg(&man)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    for page in [
        "git-kams",
        "git-kams-scan",
        "git-kams-capture",
        "git-kams-pin",
        "git-kams-review",
    ] {
        assert!(man.join(format!("man1/{page}.1")).is_file(), "{page}");
    }

    // Through git, as a user types it: git finds git-kams on PATH and
    // turns --help into `man git-kams`.
    let bin = Path::new(env!("CARGO_BIN_EXE_git-kams")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let help = |args: &[&str]| {
        let out = hermetic_command("git", dir)
            .env("PATH", &path)
            .env("MANPATH", &man)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "100")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let page = help(&["kams", "--help"]);
    assert!(page.contains("git-kams(1)"), "{page}");
    assert!(
        page.contains("Keep MCP tool descriptors reviewed"),
        "{page}"
    );
    let page = help(&["help", "kams"]);
    assert!(page.contains("git-kams(1)"), "{page}");

    let out = hermetic_command("man", dir)
        .env("MANPATH", &man)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .arg("git-kams-capture")
        .output()
        .unwrap();
    let page = text(&out.stdout);
    let words = page.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("This RUNS THE COMMANDS the configs name"),
        "{page}"
    );
    assert!(words.contains("git kams capture [--yes]"), "{page}");
}

#[test]
fn completion_scripts_name_every_command() {
    let repo = repo();
    let dir = repo.path();
    let out = kams(dir).args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let script = text(&out.stdout);
    for word in ["capture", "scan", "pin", "--fail-on"] {
        assert!(script.contains(word), "{word}");
    }
    let file = dir.join("git-kams.bash");
    std::fs::write(&file, &script).unwrap();
    let check = hermetic_command("bash", dir)
        .arg("-n")
        .arg(&file)
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        kams(dir).args(["completions", shell]).assert().success();
    }
    kams(dir).args(["completions", "tcsh"]).assert().code(2);
}
