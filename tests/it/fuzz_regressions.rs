//! Every minimised fuzz crasher kept in `tests/fixtures/fuzz/<target>/`
//! goes through the same check as its fuzz target (`fuzz/src/checks.rs`,
//! included here, since the fuzz crate is a workspace of its own): a new
//! file dropped in a folder is tested with no other change. A file named
//! `*.ok` must be accepted by the parser and one named `*.err` refused with
//! an error; any other file must only not panic nor break a property.
//! See docs/fuzzing.md.

use std::path::Path;

#[allow(dead_code)]
mod checks {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/src/checks.rs"));
}

/// Runs `check` on every file of the target's folder; returns how many.
fn each(target: &str, check: fn(&[u8]) -> bool) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable folder").path())
        .filter(|p| p.file_name().is_some_and(|n| n != ".gitkeep"))
        .collect();
    files.sort();
    for path in &files {
        let data = std::fs::read(path).expect("readable fixture");
        let accepted = std::panic::catch_unwind(|| check(&data))
            .unwrap_or_else(|_| panic!("{target}: {} panics", path.display()));
        match path.extension().and_then(|e| e.to_str()) {
            Some("ok") => assert!(accepted, "{}: refused, expected accepted", path.display()),
            Some("err") => assert!(!accepted, "{}: accepted, expected an error", path.display()),
            _ => {}
        }
    }
    files.len()
}

#[test]
fn inventory_crashers() {
    each("inventory", checks::inventory);
}

#[test]
fn lock_crashers() {
    each("lock", checks::lock);
}

#[test]
fn canon_crashers() {
    each("canon", checks::canon);
}

#[test]
fn prepush_crashers() {
    each("prepush", checks::prepush);
}

#[test]
fn prereceive_crashers() {
    each("prereceive", checks::prereceive);
}

#[test]
fn config_crashers() {
    each("config", checks::config);
}

#[test]
fn merge_crashers() {
    each("merge", checks::merge);
}

#[test]
fn textconv_crashers() {
    each("textconv", checks::textconv);
}
