//! The log cache (`$GIT_COMMON_DIR/kams/log-*.cache`): `git kams log`
//! prints the same bytes with it and without it, cold and warm, after new
//! commits, after history was rewritten, and whatever state the file is
//! in; a cache that cannot be written is no error.

use std::path::{Path, PathBuf};

use crate::common::{copy, git, kams, real, text};
use crate::history::{commit, git_as, pin, story};

/// The ways log is asked in these tests: text and JSON, whole, selected,
/// bounded, and from another starting point.
const ASKS: &[&[&str]] = &[
    &["log"],
    &["--format", "json", "log"],
    &["log", "server-memory"],
    &["log", "-n", "2"],
    &["log", "--since", "2026-01-04"],
    &["log", "--at", "side"],
];

/// `git kams ARGS` with the cache on (the default) or off; stdout, and
/// stderr must be empty (the cache never talks, unless asked with -v).
fn run(dir: &Path, args: &[&str], cache: bool) -> String {
    let mut cmd = kams(dir);
    if !cache {
        cmd.env("GIT_CONFIG_PARAMETERS", "'kams.logCache'='false'");
    }
    let out = cmd.args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "{args:?}");
    text(&out.stdout)
}

/// The one cache file under `.git/kams`, if any.
fn cache_file(dir: &Path) -> Option<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join(".git/kams"))
        .ok()?
        .map(|e| e.unwrap().path())
        .collect();
    assert!(files.len() <= 1, "{files:?}");
    files.into_iter().next()
}

/// Asserts that every ask prints, with the cache, what it prints without.
fn same_as_without_cache(dir: &Path, when: &str) {
    for args in ASKS {
        let without = run(dir, args, false);
        assert_eq!(run(dir, args, true), without, "{when}: {args:?}");
    }
}

#[test]
fn log_is_the_same_without_the_cache_cold_and_warm() {
    let s = story();
    let p = s.path();
    let without: Vec<String> = ASKS.iter().map(|a| run(p, a, false)).collect();
    assert_eq!(cache_file(p), None, "kams.logCache=false writes nothing");
    for (args, expected) in ASKS.iter().zip(&without) {
        let _ = std::fs::remove_dir_all(p.join(".git/kams"));
        assert_eq!(&run(p, args, true), expected, "cold: {args:?}");
        assert!(cache_file(p).is_some(), "{args:?} writes the cache");
        assert_eq!(&run(p, args, true), expected, "warm: {args:?}");
    }
    // One cache serves every ask, in any order.
    for (args, expected) in ASKS.iter().zip(&without).rev() {
        assert_eq!(&run(p, args, true), expected, "shared: {args:?}");
    }
    // A warm run that learns nothing leaves the file alone.
    let file = cache_file(p).unwrap();
    let before = std::fs::read(&file).unwrap();
    run(p, &["log"], true);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn a_warm_cache_extends_to_new_commits() {
    let s = story();
    let p = s.path();
    same_as_without_cache(p, "story");
    // New commits on top: an unrelated one, a pin, and a merge of a side
    // branch that re-pinned an entry.
    std::fs::write(p.join("README"), "servers we use, and why\n").unwrap();
    commit(p, "Bob", "2026-01-09T00:00:00Z", "Say why");
    copy(
        &real("server-filesystem@0.6.2.json"),
        p,
        ".kams/inventory/server-filesystem.json",
    );
    pin(p, "Alice", "filesystem reviewed", &["server-filesystem"]);
    commit(p, "Alice", "2026-01-10T00:00:00Z", "Pin filesystem");
    same_as_without_cache(p, "after a pin");
    git(p, &["checkout", "-q", "-b", "later", "side"]);
    std::fs::write(p.join("NOTES"), "side notes\n").unwrap();
    commit(p, "Carol", "2026-01-11T00:00:00Z", "Notes");
    git(p, &["checkout", "-q", "main"]);
    git_as(
        p,
        "Rita",
        "2026-01-12T00:00:00Z",
        &["merge", "-q", "--no-ff", "-m", "Merge later", "later"],
    );
    same_as_without_cache(p, "after a merge");
}

#[test]
fn a_corrupt_truncated_or_foreign_cache_is_ignored_and_rewritten() {
    let s = story();
    let p = s.path();
    let expected = run(p, &["log"], false);
    assert_eq!(run(p, &["log"], true), expected);
    let file = cache_file(p).unwrap();
    let good = std::fs::read(&file).unwrap();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 1;
    let mut other_version = good.clone();
    other_version[11] = 0x7f;
    let garbage: Vec<u8> = (0..good.len()).map(|i| (i * 7 + 3) as u8).collect();
    for (what, bytes) in [
        ("empty", Vec::new()),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("one byte short", good[..good.len() - 1].to_vec()),
        ("one bit flipped", flipped),
        ("another layout version", other_version),
        ("garbage", garbage),
        ("text", b"kams-log\n".to_vec()),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(run(p, &["log"], true), expected, "{what}");
        assert_eq!(std::fs::read(&file).unwrap(), good, "{what}: rewritten");
    }
    // A folder where the file should be: ignored, and not written.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    assert_eq!(run(p, &["log"], true), expected, "a folder");
}

#[test]
fn a_cache_from_another_history_gives_the_right_log() {
    let s = story();
    let p = s.path();
    same_as_without_cache(p, "story");
    let file = cache_file(p).unwrap();

    // Rewrite the last two commits: the re-indent is dropped and the
    // fetch pin is amended with another note and approver.
    git(p, &["reset", "-q", "--hard", "HEAD~2"]);
    pin(p, "Erin", "fetch reviewed again", &["mcp-server-fetch"]);
    git_as(
        p,
        "Erin",
        "2026-01-06T00:00:00Z",
        &[
            "commit",
            "-q",
            "-a",
            "--amend",
            "-s",
            "-m",
            "Pin fetch, amended",
        ],
    );
    same_as_without_cache(p, "after an amend");

    // The cache of this history, copied into an unrelated repository with
    // the same lock path: nothing in it applies there.
    let other = story();
    let q = other.path();
    git(q, &["checkout", "-q", "side"]);
    git(q, &["commit", "-q", "--allow-empty", "-m", "Diverge"]);
    std::fs::create_dir_all(q.join(".git/kams")).unwrap();
    std::fs::copy(&file, q.join(".git/kams").join(file.file_name().unwrap())).unwrap();
    same_as_without_cache(q, "a foreign cache");
}

#[test]
fn a_cache_that_cannot_be_written_is_no_error() {
    let s = story();
    let p = s.path();
    let expected = run(p, &["log"], false);
    // `.git/kams` is a file: the cache's folder cannot be made (running
    // as root, permissions would not stop the write).
    std::fs::write(p.join(".git/kams"), "not a folder").unwrap();
    assert_eq!(run(p, &["log"], true), expected);
    let out = kams(p).args(["-v", "log"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), expected);
    assert!(
        text(&out.stderr).contains("the log cache was not written"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn worktrees_share_the_cache_of_the_common_git_dir() {
    let s = story();
    let p = s.path();
    let wt = tempfile::tempdir().unwrap();
    let wt_path = wt.path().join("wt");
    git(
        p,
        &["worktree", "add", "-q", wt_path.to_str().unwrap(), "side"],
    );
    let expected = run(&wt_path, &["log"], false);
    assert_eq!(run(&wt_path, &["log"], true), expected);
    assert!(cache_file(p).is_some(), "written to the common git dir");
    assert!(!p.join(".git/worktrees/wt/kams").exists());
    assert_eq!(run(&wt_path, &["log"], true), expected);
}

#[test]
fn object_replacements_turn_the_cache_off() {
    let s = story();
    let p = s.path();
    let readme = git(p, &["rev-parse", "HEAD~1:README"]);
    let other = git(p, &["rev-parse", "HEAD:kams.lock"]);
    git(p, &["replace", readme.trim(), other.trim()]);
    let expected = run(p, &["log"], false);
    assert_eq!(run(p, &["log"], true), expected);
    assert_eq!(cache_file(p), None);
}

/// Regression: a remembered walk is taken up only after a single line of
/// commits. Here the walk from the merge visits the root before the
/// older-dated main commit (clock skew); walking on from that commit skips
/// the root, which its own remembered walk lists.
#[test]
fn a_remembered_walk_is_not_spliced_in_after_a_fork() {
    let dir = crate::common::repo();
    let p = dir.path();
    let inventory = |name: &str| {
        copy(
            &real(&format!("{name}.json")),
            p,
            &format!(".kams/inventory/{name}.json"),
        );
    };
    inventory("server-memory@0.6.2");
    pin(p, "Alice", "memory", &[]);
    commit(p, "Alice", "2026-01-10T00:00:00Z", "Root");
    git(p, &["checkout", "-q", "-b", "side"]);
    inventory("server-filesystem@0.6.2");
    pin(p, "Bob", "filesystem", &["server-filesystem"]);
    commit(p, "Bob", "2026-01-11T00:00:00Z", "Side");
    git(p, &["checkout", "-q", "main"]);
    inventory("mcp-server-fetch@0.6.2");
    pin(p, "Carol", "fetch", &["mcp-server-fetch"]);
    let skewed = commit(p, "Carol", "2026-01-02T00:00:00Z", "Skewed clock");
    git_as(
        p,
        "Rita",
        "2026-01-12T00:00:00Z",
        &["merge", "-q", "--no-commit", "-s", "ours", "side"],
    );
    inventory("server-sequential-thinking@0.6.2");
    pin(p, "Rita", "thinking", &["server-sequential-thinking"]);
    commit(
        p,
        "Rita",
        "2026-01-12T00:00:00Z",
        "Merge side, pin thinking",
    );

    let expected = run(p, &["log"], false);
    assert_eq!(expected.matches("commit ").count(), 4, "{expected}");
    run(p, &["log", "--at", &skewed], true);
    assert_eq!(run(p, &["log"], true), expected);
}

#[test]
fn unreadable_versions_read_the_same_from_the_cache() {
    let dir = crate::common::repo();
    let p = dir.path();
    copy(
        &real("mcp-server-fetch@0.6.2.json"),
        p,
        ".kams/inventory/fetch.json",
    );
    pin(p, "Alice", "fetch reviewed", &[]);
    commit(p, "Alice", "2026-01-02T00:00:00Z", "Pin fetch");
    let good = std::fs::read(p.join("kams.lock")).unwrap();
    std::fs::write(p.join("kams.lock"), &good[..good.len() / 2]).unwrap();
    commit(p, "Bob", "2026-01-03T00:00:00Z", "Oops");
    std::fs::write(p.join("kams.lock"), &good).unwrap();
    commit(p, "Bob", "2026-01-04T00:00:00Z", "Restore kams.lock");
    let text = String::from_utf8(good).unwrap();
    std::fs::write(
        p.join("kams.lock"),
        text.replacen("Fetches a URL", "Fetches any URL", 1),
    )
    .unwrap();
    commit(p, "Mallory", "2026-01-05T00:00:00Z", "Tweak wording");

    for args in [&["log"][..], &["--format", "json", "log"]] {
        let without = run(p, args, false);
        assert_eq!(without.matches("cannot be read").count(), 3, "{without}");
        assert_eq!(run(p, args, true), without, "cold: {args:?}");
        assert_eq!(run(p, args, true), without, "warm: {args:?}");
    }
}
