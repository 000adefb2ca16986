//! The pure core, enforced (issue 25; docs/architecture.md, "The rule").
//!
//! Parsing, the canonical form, the descriptor and finding model, the
//! lock's format, diff and merge, comparison, the detectors and the
//! report writers take bytes or values and return values. This test reads
//! their sources and fails when one of them reaches for the file system,
//! git, the command line, a thread, a process, the network, a cache or
//! the edge modules that own those. Every module is core but those the
//! edge list names, so a module added anywhere else is held to the rule
//! without a word, and the list cannot name what is gone. Only code before
//! a file's test module counts (tests may read the corpus from disk);
//! comments and string literals do not.

use std::path::{Path, PathBuf};

/// The edge, relative to `src/`: where files, git, the command line,
/// threads, servers and caches are met (a folder means every file under
/// it). Everything else is the core.
const EDGE: &[&str] = &[
    "cache",
    "capture",
    "cli",
    "commands",
    "files",
    "git",
    "input.rs",
    "lib.rs",
    "main.rs",
    "metrics/export.rs",
    "threads.rs",
];

/// What the core must not name, and why.
const FORBIDDEN: &[(&str, &str)] = &[
    ("fs", "the file system"),
    ("gix", "git"),
    ("clap", "the command line"),
    ("thread", "a thread"),
    ("thread_local!", "state kept per thread (a cache)"),
    ("std::process", "a process"),
    ("TcpStream", "the network"),
    ("TcpListener", "the network"),
    ("UdpSocket", "the network"),
    ("ureq", "the network"),
    ("std::env", "the environment"),
    ("std::{", "a group of std's modules (name each on its own)"),
    ("memmap2", "a mapped file"),
    ("libc", "system calls"),
];

/// The paths the core would name an edge module by (`cache` is
/// `crate::cache`, `metrics/export.rs` is `crate::metrics::export`), from
/// [`EDGE`] itself, so that the two lists cannot drift apart. `main.rs`
/// and `lib.rs` are the crate itself, named by no path.
fn edge_paths() -> Vec<String> {
    EDGE.iter()
        .filter(|edge| !matches!(**edge, "main.rs" | "lib.rs"))
        .map(|edge| {
            let module = edge.trim_end_matches(".rs").trim_end_matches("/mod");
            format!("crate::{}", module.replace('/', "::"))
        })
        .collect()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .expect("a source folder")
            .map(|e| e.expect("an entry").path())
            .collect();
        entries.sort();
        for e in entries {
            rust_files(&e, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// Whether `line` opens a test module (after a `#[cfg(test)]` line).
fn opens_module(line: &str) -> bool {
    ["mod ", "pub mod ", "pub(crate) mod "]
        .iter()
        .any(|start| line.starts_with(start))
}

/// `line` without its string literals and its comment.
fn bare(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => in_string = false,
            (true, _) => {}
            (false, '"') => in_string = true,
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, c) => out.push(c),
        }
    }
    out
}

/// The code of `text` that counts, by line number: before its test module
/// (a `#[cfg(test)]` line at the start of a line, then a `mod`).
fn code(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0] == "#[cfg(test)]" && opens_module(w[1]))
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .enumerate()
        .map(|(i, l)| (i + 1, bare(l)))
        .collect()
}

/// Where `needle` stands as a path or a name in `line` (not as part of a
/// longer identifier: `prefs` is not `fs`, `threads` is not `thread`).
fn names(line: &str, needle: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(needle).any(|(at, _)| {
        let joined_before = line[..at].chars().next_back().is_some_and(ident);
        let joined_after =
            needle.ends_with(ident) && line[at + needle.len()..].chars().next().is_some_and(ident);
        !joined_before && !joined_after
    })
}

fn violations(files: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).expect("a source file");
        for (n, line) in code(&text) {
            let shown = file.strip_prefix(src()).unwrap_or(file).display();
            for (needle, what) in FORBIDDEN {
                if names(&line, needle) {
                    found.push(format!("src/{shown}:{n}: names `{needle}` ({what})"));
                }
            }
            for needle in edge_paths() {
                if names(&line, &needle) {
                    found.push(format!(
                        "src/{shown}:{n}: names `{needle}` (an edge module)"
                    ));
                }
            }
        }
    }
    found
}

fn is_edge(file: &Path) -> bool {
    let rel = file.strip_prefix(src()).expect("under src/");
    EDGE.iter().any(|edge| rel.starts_with(edge))
}

fn core_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.retain(|f| !is_edge(f));
    files
}

#[test]
fn the_core_touches_no_file_git_command_line_thread_or_cache() {
    let files = core_files();
    assert!(
        files.len() > 20,
        "the core holds {} files: has the layout moved without this test?",
        files.len()
    );
    let found = violations(&files);
    assert!(
        found.is_empty(),
        "the pure core reaches outside itself (docs/architecture.md, \"The rule\"):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_edge_list_names_only_what_is_there() {
    for edge in EDGE {
        assert!(
            src().join(edge).exists(),
            "src/{edge} is gone: take it off EDGE"
        );
    }
}

#[test]
fn the_check_sees_each_kind_of_forbidden_use() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("bad.rs");
    let bad = "use std::fs;\nuse std::{io, sync};\nfn f() { std::thread::spawn(|| ()); }\n\
               #[cfg(test)]\nfn only_in_tests() {}\nuse crate::cache::lock;\n\
               let l = crate::metrics::export::send(p);\n\
               // std::fs in a comment is fine\nlet prefs = threads::x;\nlet s = \"std::fs\";\n\
               #[cfg(test)]\nmod tests { use std::fs; }\n";
    std::fs::write(&file, bad).expect("writes");
    let found = violations(&[file]);
    let lines: Vec<&str> = found
        .iter()
        .map(|f| f.rsplit(": names ").next().unwrap_or(""))
        .collect();
    assert_eq!(
        lines,
        [
            "`fs` (the file system)",
            "`std::{` (a group of std's modules (name each on its own))",
            "`thread` (a thread)",
            "`crate::cache` (an edge module)",
            "`crate::metrics::export` (an edge module)",
        ],
        "{found:#?}"
    );
}
