//! Hostile input, through the real binary in real repositories: a lock
//! that is a symbolic link out of the repository, inventory paths that
//! leave the work tree, objects missing from or corrupt in the object
//! database, and inventories built to be large, long, deep or malformed.
//! Each ends in a finding (exit 1) or in one `error:` line that names the
//! file and the fault (exit 2), never in a panic, and none of them writes
//! anything: the lock stays byte for byte, no `kams.lock.lock` is left and
//! no commit is made.
//!
//! Inputs are generated once per test and written with `std::fs`; sizes
//! are the ones that once took minutes (a 100 KB tool name) or could
//! (100,000 tools, 10 million escapes), and the whole file runs in well
//! under a minute in a debug build. Nothing is timed: a quadratic path
//! shows as a test that does not finish.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use git_kams::text::is_concealing;

use crate::common::{git, json, kams, repo, text};

const PIN: &[&str] = &["pin", "-m", "reviewed", "--approver", "A <a@x>"];

/// A capture of server `s` holding `tools` (raw JSON texts).
fn capture(tools: &[String]) -> String {
    format!(
        r#"{{"server": "s", "transport": "stdio", "tools": [{}]}}"#,
        tools.join(", ")
    )
}

fn tool(name: &str, description: &str) -> String {
    format!(r#"{{"name": "{name}", "description": "{description}"}}"#)
}

/// The inventory every repository starts from: two tools.
fn two_tools() -> String {
    capture(&[tool("a", "Adds."), tool("b", "Bs.")])
}

/// A repository at `dir` whose `inv.json` is committed and pinned into a
/// committed `kams.lock`.
struct Sandbox {
    dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Sandbox {
    /// In a temporary repository of its own.
    fn new() -> Sandbox {
        let tmp = repo();
        let dir = tmp.path().to_path_buf();
        Sandbox::pinned(tmp, dir)
    }

    /// In `tmp/repo`, so that `tmp` holds files outside the work tree.
    fn nested() -> Sandbox {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("repo");
        std::fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["config", "user.name", "Rita Reviewer"]);
        git(&dir, &["config", "user.email", "rita@example.com"]);
        Sandbox::pinned(tmp, dir)
    }

    fn pinned(tmp: tempfile::TempDir, dir: PathBuf) -> Sandbox {
        let sb = Sandbox { dir, _tmp: tmp };
        sb.write("inv.json", two_tools());
        git(&sb.dir, &["add", "inv.json"]);
        git(&sb.dir, &["commit", "-q", "-m", "inventory"]);
        let out = sb.run(&["--inventory", "inv.json"], PIN);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        sb
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        std::fs::write(self.path(rel), bytes).expect("write");
    }

    fn run(&self, global: &[&str], command: &[&str]) -> Output {
        kams(&self.dir)
            .args(global)
            .args(command)
            .output()
            .expect("git-kams runs")
    }

    fn head(&self) -> String {
        git(&self.dir, &["rev-parse", "HEAD"])
    }

    /// What must not change: the lock's bytes and HEAD.
    fn state(&self) -> (Vec<u8>, String) {
        (std::fs::read(self.path("kams.lock")).unwrap(), self.head())
    }

    /// Nothing was written since `before` was taken.
    fn untouched(&self, before: &(Vec<u8>, String), what: &str) {
        assert!(self.state() == *before, "{what}: the lock or HEAD changed");
        assert!(
            !self.path("kams.lock.lock").exists(),
            "{what}: kams.lock.lock left behind"
        );
    }

    /// Runs `command` and checks the refusal: exit 2, one `error:` line
    /// holding every `expect`ed piece and no raw invisible character,
    /// nothing on stdout, nothing written.
    fn refused(&self, global: &[&str], command: &[&str], expect: &[&str]) -> String {
        let before = self.state();
        let out = self.run(global, command);
        let err = text(&out.stderr);
        let what = format!("{global:?} {command:?}: stderr {err:?}");
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(err.starts_with("error: "), "{what}");
        assert_eq!(err.matches('\n').count(), 1, "not one line: {what}");
        for piece in expect {
            assert!(err.contains(piece), "missing {piece:?}: {what}");
        }
        assert!(
            !err.chars().any(|c| c != '\n' && is_concealing(c)),
            "{what}"
        );
        assert!(out.stdout.is_empty(), "{what}: {}", text(&out.stdout));
        self.untouched(&before, &what);
        err
    }

    /// `file` holding `bytes` is refused as an inventory by every command
    /// that reads one, naming the file and `expect`.
    fn bad_inventory(&self, file: &str, bytes: impl AsRef<[u8]>, expect: &[&str]) {
        self.write(file, bytes);
        let names_file = format!("error: {file}: ");
        let mut all = vec![names_file.as_str()];
        all.extend_from_slice(expect);
        for command in [&["scan"][..], &["status"], &["record"], PIN] {
            self.refused(&["--inventory", file], command, &all);
        }
    }
}

/// Findings of a `--format json` report as (class, tool) pairs.
fn findings(out: &Output) -> Vec<(String, Option<String>)> {
    json(&out.stdout)["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["class"].as_str().unwrap().to_string(),
                f["tool"].as_str().map(str::to_string),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The lock's path

/// A lock that is a symbolic link is refused by readers and writers alike
/// (it was once read through): a reader that followed it would judge
/// another lock than the hooks, which read the commit, and renaming the
/// new lock over the link would silently turn it into a file (following it
/// would write wherever it points, here outside the repository).
#[test]
fn a_lock_symlinked_out_of_the_repository_is_neither_read_nor_written_through() {
    let sb = Sandbox::nested();
    let outside = sb.path("../outside.lock");
    std::fs::rename(sb.path("kams.lock"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, sb.path("kams.lock")).unwrap();
    let target = std::fs::read(&outside).unwrap();
    let head = sb.head();
    sb.write(
        "inv.json",
        capture(&[tool("a", "Adds."), tool("b", "Bs."), tool("c", "Cs.")]),
    );

    for command in [&["scan"][..], &["status"], &["record"], PIN] {
        let out = sb.run(&["--inventory", "inv.json"], command);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {err}");
        assert_eq!(err.matches('\n').count(), 1, "{command:?}: {err}");
        assert!(
            err.starts_with("error: ")
                && err.contains("kams.lock: is a symbolic link (to ")
                && err.contains("outside.lock")
                && err.contains("--lock PATH"),
            "{command:?}: {err}"
        );
        let link = std::fs::symlink_metadata(sb.path("kams.lock")).unwrap();
        assert!(
            link.file_type().is_symlink(),
            "{command:?} replaced the link"
        );
        assert_eq!(std::fs::read_link(sb.path("kams.lock")).unwrap(), outside);
        assert!(std::fs::read(&outside).unwrap() == target, "{command:?}");
        assert!(!sb.path("kams.lock.lock").exists(), "{command:?}");
        assert_eq!(sb.head(), head, "{command:?} committed");
    }
}

// ---------------------------------------------------------------------------
// Inventory paths

/// A file the user names is read wherever it is; a path read from a
/// commit's tree (`--inventory-at`, `--at`) must be inside the work tree,
/// and `..` in it is resolved, not looked up as a name.
#[test]
fn paths_out_of_the_work_tree_are_read_from_disk_but_never_from_a_commit() {
    let sb = Sandbox::nested();
    std::fs::write(sb.path("../elsewhere.json"), two_tools()).unwrap();
    let before = sb.state();

    let clean = |global: &[&str], command: &[&str]| {
        let out = sb.run(global, command);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{global:?} {command:?}: {}",
            text(&out.stderr)
        );
        sb.untouched(&before, &format!("{global:?} {command:?}"));
    };
    let outside = "elsewhere.json is outside the work tree";
    let hint = "an inventory read from git must be in the work tree";

    clean(&["--inventory", "../elsewhere.json"], &["scan"]);
    sb.refused(
        &["--inventory", "../elsewhere.json"],
        &["scan", "--inventory-at", "HEAD"],
        &["error: --inventory: ", outside, hint],
    );
    clean(
        &["--inventory", "sub/../inv.json"],
        &["scan", "--inventory-at", "HEAD"],
    );

    git(&sb.dir, &["config", "kams.inventory", "../elsewhere.json"]);
    clean(&[], &["scan"]);
    sb.refused(
        &[],
        &["scan", "--inventory-at", "HEAD"],
        &["error: git config kams.inventory: ", outside, hint],
    );
    // Was looked up in the tree as `sub/../inv.json`: "holds no inventory".
    git(&sb.dir, &["config", "kams.inventory", "sub/../inv.json"]);
    clean(&[], &["scan", "--inventory-at", "HEAD"]);
    git(&sb.dir, &["config", "--unset", "kams.inventory"]);

    git(&sb.dir, &["config", "kams.lock", "../elsewhere.lock"]);
    sb.refused(
        &["--inventory", "inv.json"],
        &["status", "--at", "HEAD"],
        &[
            "error: git config kams.lock: ",
            "elsewhere.lock is outside the work tree",
            "a lock read from git must be in the work tree",
        ],
    );
    git(&sb.dir, &["config", "kams.lock", "sub/../kams.lock"]);
    clean(&["--inventory", "inv.json"], &["status", "--at", "HEAD"]);
}

// ---------------------------------------------------------------------------
// The object database

/// The commands that read the lock from git.
const AT_HEAD: &[&[&str]] = &[
    &["status", "--at", "HEAD"],
    &["scan", "--at", "HEAD"],
    &["log"],
    &["blame"],
];

#[test]
fn a_missing_lock_object_is_an_error_naming_it() {
    let sb = Sandbox::new();
    let blob = git(&sb.dir, &["rev-parse", "HEAD:kams.lock"]);
    let blob = blob.trim();
    std::fs::remove_file(sb.path(&format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
        .expect("the lock's blob is a loose object");
    for command in AT_HEAD {
        sb.refused(&["--inventory", "inv.json"], command, &["kams.lock", blob]);
    }
}

/// Flips 16 bytes in the middle of `at..at + len` of `file`.
fn corrupt(file: &Path, at: usize, len: usize) {
    let mut perms = std::fs::metadata(file).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(file, perms).unwrap();
    let mut bytes = std::fs::read(file).unwrap();
    let mid = at + len / 2;
    for b in &mut bytes[mid.saturating_sub(8)..(mid + 8).min(at + len)] {
        *b ^= 0x5a;
    }
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn a_corrupt_pack_is_an_error_not_a_panic() {
    let sb = Sandbox::new();
    git(&sb.dir, &["gc", "-q", "--prune=now"]);
    let blob = git(&sb.dir, &["rev-parse", "HEAD:kams.lock"]);
    let blob = blob.trim().to_string();
    let packs = sb.path(".git/objects/pack");
    let file = |ext: &str| {
        std::fs::read_dir(&packs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == ext))
            .unwrap_or_else(|| panic!("no .{ext} after git gc"))
    };
    let (pack, idx) = (file("pack"), file("idx"));
    // `SHA TYPE SIZE SIZE-IN-PACK OFFSET`: where the lock's blob is packed.
    let listing = git(&sb.dir, &["verify-pack", "-v", idx.to_str().unwrap()]);
    let row: Vec<usize> = listing
        .lines()
        .find(|l| l.starts_with(&blob))
        .expect("the lock's blob is in the pack")
        .split_whitespace()
        .skip(3)
        .take(2)
        .map(|n| n.parse().unwrap())
        .collect();
    corrupt(&pack, row[1], row[0]);
    for command in AT_HEAD {
        sb.refused(&["--inventory", "inv.json"], command, &["kams.lock", &blob]);
    }
    // Anywhere else in the pack (a commit, a tree, the inventory): each
    // command ends in a clean result or an error, never in a panic.
    let len = std::fs::metadata(&pack).unwrap().len() as usize;
    corrupt(&pack, 0, len);
    for command in AT_HEAD {
        let out = sb.run(&["--inventory", "inv.json"], command);
        let err = text(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0..=2)),
            "{command:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{command:?}: {err}");
    }
}

// ---------------------------------------------------------------------------
// Size

#[test]
fn a_10_mb_description_is_scanned_and_a_smaller_cap_names_itself() {
    let sb = Sandbox::new();
    let description = "Reads a file and returns its text. ".repeat(300_000);
    assert!(description.len() > 10_000_000);
    sb.write("big.json", capture(&[tool("a", &description)]));
    let size = std::fs::metadata(sb.path("big.json")).unwrap().len();
    let before = sb.state();

    let out = sb.run(&["--inventory", "big.json", "--format", "json"], &["scan"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        findings(&out).contains(&("drift".into(), Some("a".into()))),
        "{:?}",
        findings(&out)
    );
    sb.untouched(&before, "scan");

    let cap = (size - 1).to_string();
    sb.refused(
        &["--inventory", "big.json", "--max-input-size", &cap],
        &["scan"],
        &["error: big.json: ", &format!("size cap of {cap} bytes")],
    );
}

/// Scans one tool whose description is `description` and asserts that
/// the scan ends, within ten times a working scan's time on a slow debug
/// build; `what` names the text in a failure.
fn scans_in_linear_time(what: &str, description: &str) {
    let sb = Sandbox::new();
    sb.write("big.json", capture(&[tool("a", description)]));
    let start = std::time::Instant::now();
    let out = sb.run(&["--inventory", "big.json", "--format", "json"], &["scan"]);
    let took = start.elapsed();
    assert!(out.status.code().is_some(), "{what}: {}", text(&out.stderr));
    assert!(
        took < std::time::Duration::from_secs(30),
        "{what} took {took:?}"
    );
}

/// A run of letters and digits that camelCase humps split into many words
/// (`aB3aB3...`, the shape of an encoded blob) is one value: it was read
/// again from end to end for each of its words, a megabyte for minutes.
#[test]
fn a_megabyte_of_humped_letters_and_digits_is_scanned_in_linear_time() {
    scans_in_linear_time("humps", &"aB3".repeat(350_000));
}

/// One sentence of a megabyte (clauses joined by `;`) full of matches:
/// each match once looked at every other match, and at the whole sentence
/// for the roles of its `&&` patterns; a tool named in capitals was looked
/// for from the first token.
#[test]
fn a_megabyte_sentence_of_orders_is_scanned_in_linear_time() {
    let description = "Then run the Vault Sync tool and call geo::resolve_owner; ".repeat(18_000);
    scans_in_linear_time("orders", &description);
}

/// A megabyte of made-up tags, opened and closed around long prose and
/// nested: each closing tag once looked back through every opening one,
/// and read the prose inside again.
#[test]
fn a_megabyte_of_made_up_tags_is_scanned_in_linear_time() {
    let prose = "1 2 3 ".repeat(40_000);
    let opens: String = (0..20_000).map(|i| format!("<t{i} a=\"b\">")).collect();
    let closes: String = (0..60_000).map(|i| format!("</t{}>", i % 20_000)).collect();
    let description = format!("{opens}{prose}{closes}");
    assert!(description.len() > 1_000_000);
    scans_in_linear_time("tags", &description);
}

/// A megabyte of opening marks that never close (`<a x`, `<|`, `[[`,
/// `{{`): each once looked for its closing mark to the end of the text,
/// `<|` for minutes.
#[test]
fn a_megabyte_of_marks_that_never_close_is_scanned_in_linear_time() {
    for (name, mark) in [
        ("tag", "<a x"),
        ("pipe", "<|"),
        ("square", "[["),
        ("curly", "{{"),
    ] {
        scans_in_linear_time(name, &mark.repeat(1_000_000 / mark.len() + 1));
    }
}

/// Distinct names of 12 letters, far apart (a generated family such as
/// `t000001` ... is a test of the squatting detector, not of size).
fn names(n: usize) -> Vec<String> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut v = x;
        let name: String = (0..12)
            .map(|_| {
                let c = char::from(b'a' + (v % 26) as u8);
                v /= 26;
                c
            })
            .collect();
        if seen.insert(name.clone()) {
            out.push(name);
        }
    }
    out
}

#[test]
fn a_hundred_thousand_tools_are_recorded_and_a_duplicate_is_ambiguous() {
    let sb = Sandbox::new();
    let names = names(100_000);
    let mut tools: Vec<String> = names.iter().map(|n| tool(n, "One of many.")).collect();
    sb.write("many.json", capture(&tools));
    let out = sb.run(&["--inventory", "many.json"], &["record"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Two were pinned already (a and b); the server entry is there.
    assert!(
        text(&out.stdout).ends_with("(100000 provisional entries added)\n"),
        "{}",
        text(&out.stdout)
    );

    let dup = &names[42];
    tools.push(tool(dup, "Another tool of the same name."));
    sb.write("many.json", capture(&tools));
    let before = sb.state();
    let out = sb.run(&["--inventory", "many.json", "--format", "json"], &["scan"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let found = findings(&out);
    assert!(found.contains(&("ambiguous".into(), Some(dup.clone()))));
    // Besides it, only a and b (pinned, not in this inventory) moved; the
    // duplicate itself may also drift, being read one of its two ways.
    let moved: Vec<_> = found
        .iter()
        .filter(|(c, t)| match c.as_str() {
            "drift" => t.as_ref() != Some(dup),
            "added" => true,
            "removed" => !matches!(t.as_deref(), Some("a" | "b")),
            _ => false,
        })
        .collect();
    assert!(moved.is_empty(), "{moved:?}");
    sb.untouched(&before, "scan");

    // Many changed at once: past the sizes from which a scan rebuilds
    // drifted entries and loads what it found before on two threads.
    tools.pop();
    for (i, n) in names.iter().enumerate().step_by(300).take(300) {
        tools[i] = tool(n, "Changed since it was recorded.");
    }
    sb.write("many.json", capture(&tools));
    let out = sb.run(&["--inventory", "many.json", "--format", "json"], &["scan"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // Each drift names the field, and shows the old and new text: both
    // sides were rebuilt.
    let report = json(&out.stdout);
    let drifted: HashSet<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["class"] == "drift")
        .map(|f| {
            let tool = f["tool"].as_str().expect("a tool");
            let shown = f.to_string();
            assert_eq!(f["field"], "/description", "{shown}");
            assert!(
                shown.contains("One of many.") && shown.contains("Changed since"),
                "{shown}"
            );
            tool.to_string()
        })
        .collect();
    let changed: HashSet<String> = names.iter().step_by(300).take(300).cloned().collect();
    assert_eq!(drifted, changed);
}

/// A 100 KB name is recorded whole and shown whole: it is the key that
/// `pin s/NAME` selects, so the report never truncates it, but each line
/// names it once, escaped. The invisible characters in it are a `hidden`
/// finding on `/name`.
#[test]
fn a_100_kb_tool_name_is_recorded_and_reported_escaped_once_per_line() {
    let sb = Sandbox::new();
    let half = "n".repeat(50_000);
    let name = format!("read_{half}\u{200B}\u{1B}[31m{half}");
    let escaped_json = format!("read_{half}\\u200b\\u001b[31m{half}");
    sb.write("long.json", capture(&[tool(&escaped_json, "Reads.")]));

    let out = sb.run(&["--inventory", "long.json"], &["record"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lock = std::fs::read_to_string(sb.path("kams.lock")).unwrap();
    assert!(
        lock.contains(&format!("\"{escaped_json}\": {{")),
        "key not escaped"
    );
    assert!(!lock.chars().any(|c| c != '\n' && is_concealing(c)));

    let before = sb.state();
    let out = sb.run(&["--inventory", "long.json"], &["scan"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let shown = format!("s/read_{half}\\u{{200B}}\\u{{1B}}[31m{half}");
    for line in report.lines() {
        assert!(
            line.len() < name.len() + 300,
            "a line of {} bytes",
            line.len()
        );
        assert!(!line.chars().any(is_concealing), "raw in {:.80}", line);
    }
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(&format!("{shown} (provisional): ")) && l.contains("worst high")),
        "{:.300}",
        report
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("  high     hidden     /name ")),
        "{:.300}",
        report
    );
    // The name is in the entry's header, once: its findings are under it.
    assert_eq!(report.matches(&shown).count(), 1, "{:.300}", report);
    assert!(report
        .lines()
        .any(|l| l.starts_with("  low      unapproved ")));
    sb.untouched(&before, "scan");
}

#[test]
fn ten_million_escapes_decode_in_linear_time() {
    let sb = Sandbox::new();
    let n = 10_000_000;
    let mut description = String::with_capacity(6 * n);
    for _ in 0..n {
        description.push_str("\\u0041");
    }
    sb.write("escapes.json", capture(&[tool("a", &description)]));
    let before = sb.state();
    let out = sb.run(
        &["--inventory", "escapes.json", "--format", "json"],
        &["scan"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = json(&out.stdout);
    let drift = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "drift" && f["tool"] == "a")
        .expect("a drift finding for a");
    // The escapes decode to ten million `A`s, the word that replaced
    // the pinned description.
    let evidence = drift["evidence"][0].as_str().expect("evidence");
    let inserted = format!("{{+{}+}}", "A".repeat(n));
    assert!(evidence.ends_with(&inserted), "{evidence:.300}");
    sb.untouched(&before, "scan");
}

// ---------------------------------------------------------------------------
// Malformed text

#[test]
fn a_hundred_thousand_open_brackets_are_refused_at_the_depth_limit() {
    let sb = Sandbox::new();
    let deep = format!(
        r#"{{"server": "s", "tools": [{{"name": "a", "inputSchema": {{"enum": {}"#,
        "[".repeat(100_000)
    );
    let limit = format!("nesting deeper than {} levels", git_kams::json::MAX_DEPTH);
    sb.bad_inventory(
        "deep.json",
        deep,
        &[&limit, "(JSON pointer /tools/0/inputSchema/enum/0/0/"],
    );
}

#[test]
fn invalid_utf8_a_raw_nul_and_lone_surrogates_are_refused_with_their_pointer() {
    let sb = Sandbox::new();
    let at = "(JSON pointer /tools/0/description)";
    let mut latin1 = capture(&[tool("a", "caf@ cr@me")]).into_bytes();
    for b in latin1.iter_mut().filter(|b| **b == b'@') {
        *b = 0xE9;
    }
    sb.bad_inventory("latin1.json", latin1, &["invalid UTF-8 (byte offset ", at]);
    sb.bad_inventory(
        "nul.json",
        capture(&[tool("a", "x\0y")]),
        &["unescaped control character", at],
    );
    for (file, escape, shown) in [
        ("high.json", r"\ud800", "U+D800"),
        ("low.json", r"\udc00", "U+DC00"),
        ("reversed.json", r"\udc00\ud800", "U+DC00"),
        ("unpaired.json", r"\ud800\u0041", "U+D800"),
    ] {
        let err_piece = format!("lone surrogate escape {shown} ");
        sb.bad_inventory(
            file,
            capture(&[tool("a", &format!("x{escape}y"))]),
            &[&err_piece, at],
        );
    }
    // An escaped NUL is valid JSON, and a hidden character in the text.
    sb.write("nul-escaped.json", capture(&[tool("a", r"x\u0000y")]));
    let before = sb.state();
    let out = sb.run(
        &["--inventory", "nul-escaped.json", "--format", "json"],
        &["scan"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(findings(&out).contains(&("hidden".into(), Some("a".into()))));
    sb.untouched(&before, "scan");
}
