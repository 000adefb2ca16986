// The checks, included by `fuzz/src/lib.rs` and by
// `tests/it/fuzz_regressions.rs` (plain comments: `include!` takes no
// inner doc comments). Each returns whether the parser accepted the input;
// a broken property is a panic, as is any panic of the code under test.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use git_kams::canon::{jcs, normalize};
use git_kams::config::launch_spec;
use git_kams::descriptor::{field_name, Descriptor};
use git_kams::git::hooks::{parse_pre_push, parse_pre_receive};
use git_kams::inventory::{parse_file, read_in_memory, ReadOptions};
use git_kams::json::{self, Object, Value};
use git_kams::lock::merge::merge as merge_locks;
use git_kams::lock::{Entry, Lock, State};
use git_kams::text::{is_concealing, reveal};

/// Inventory files: `parse_file` and `read_in_memory` with and without a
/// server name, full and digests-only. The two modes agree: same outcome,
/// same digests, and a digests-only tool rebuilt by `materialize` equals
/// the full read's tool; and the lock `record` would write from what was
/// read reads back.
pub fn inventory(data: &[u8]) -> bool {
    let path = Path::new("fuzz.json");
    let _ = parse_file(path, data, &ReadOptions::default());
    let named = ReadOptions {
        server: Some("fuzz".to_string()),
        ..ReadOptions::default()
    };
    let _ = parse_file(path, data, &named);

    let files = || vec![(PathBuf::from("fuzz.json"), data.to_vec())];
    let full = read_in_memory(files(), &named);
    let lean = read_in_memory(
        files(),
        &ReadOptions {
            digests_only: true,
            ..named.clone()
        },
    );
    let (full, mut lean) = match (full, lean) {
        (Ok(f), Ok(l)) => (f, l),
        (Err(_), Err(_)) => return false,
        (f, l) => panic!(
            "full and digests-only reads disagree: {:?} vs {:?}",
            f.err(),
            l.err()
        ),
    };
    let wanted: Vec<(String, Option<String>)> = lean
        .servers
        .values()
        .flat_map(|s| s.tools.keys().map(|t| (s.name.clone(), Some(t.clone()))))
        .collect();
    lean.materialize(&wanted);
    assert_eq!(
        full.servers.keys().collect::<Vec<_>>(),
        lean.servers.keys().collect::<Vec<_>>()
    );
    for (name, f) in &full.servers {
        let l = &lean.servers[name];
        assert_eq!(f.descriptor, l.descriptor, "server {name}");
        assert_eq!(f.tools.len(), l.tools.len(), "server {name}");
        for (tool, ft) in &f.tools {
            assert_eq!(
                ft.descriptor, l.tools[tool].descriptor,
                "tool {name}/{tool}"
            );
        }
    }
    recorded_lock_reads_back(&full);
    true
}

/// The lock `git kams record` writes for an accepted inventory (every
/// entry provisional, every launch recorded) reads back as the same lock:
/// the promise of `lock::format`'s depth allowance, over any descriptor.
fn recorded_lock_reads_back(inv: &git_kams::inventory::Inventory) {
    let mut lock = Lock::default();
    for p in git_kams::compare::pairs(inv, &Lock::default()) {
        let Some(seen) = p.seen else { continue };
        let entry = Entry {
            state: State::Provisional,
            descriptor: seen.clone(),
            first_seen: "2026-01-01T00:00:00Z".to_string(),
            approval: None,
            lazy: Default::default(),
        };
        let slot = lock.servers.entry(p.server.to_string()).or_default();
        match p.tool {
            Some(t) => {
                slot.tools.insert(t.to_string(), entry);
            }
            None => slot.server = Some(entry),
        }
    }
    for (name, server) in &inv.servers {
        if let Some(spec) = launch_spec(&server.launch) {
            lock.servers.entry(name.clone()).or_default().launch = Some(spec);
        }
    }
    let text = lock.to_text();
    let back =
        Lock::parse(&text).unwrap_or_else(|e| panic!("a recorded lock does not read back: {e:?}"));
    assert_eq!(back, lock, "a recorded lock reads back as another lock");
}

/// `kams.lock`: `Lock::parse` and `Lock::parse_digests_only` agree on what
/// is a lock, and a lock round-trips: its text parses to an equal lock
/// whose text is the same bytes (canonical by construction); a
/// digests-only lock materialised equals the full one.
pub fn lock(data: &[u8]) -> bool {
    let full = Lock::parse(data);
    let lean = Lock::parse_digests_only(Arc::new(data.to_vec()));
    let (lock, mut lean) = match (full, lean) {
        (Ok(f), Ok(l)) => (f, l),
        (Err(_), Err(_)) => return false,
        (f, l) => panic!("parse and parse_digests_only disagree: {f:?} vs {l:?}"),
    };
    let text = lock.to_text();
    // What a lock file gets (a server at a time) is the same text.
    let mut written = Vec::new();
    lock.write_text(&mut written).expect("writing to memory");
    assert!(written == text, "write_text differs from to_text");
    let again = Lock::parse(&text).expect("a lock's own text parses");
    assert_eq!(lock, again, "the text round trip changed the lock");
    assert_eq!(
        text,
        again.to_text(),
        "the text round trip changed the text"
    );

    let wanted: Vec<(String, Option<String>)> = lean
        .servers
        .iter()
        .flat_map(|(name, s)| {
            s.server
                .iter()
                .map(|_| (name.clone(), None))
                .chain(s.tools.keys().map(|t| (name.clone(), Some(t.clone()))))
        })
        .collect();
    lean.materialize(&wanted)
        .expect("a verified entry materialises");
    assert_eq!(lock, lean, "materialised digests-only lock differs");
    assert_eq!(text, lean.to_text());
    true
}

/// The canonical form: `json::parse`, NFC (`canon::normalize`), RFC 8785
/// (`canon::jcs`) and `Descriptor::new`'s digests. Canonicalising is
/// idempotent, JCS output parses back to an equal value, and a
/// descriptor built again from its own canonical fields is the same.
pub fn canon(data: &[u8]) -> bool {
    let Ok((value, _duplicates)) = json::parse(data) else {
        return false;
    };
    let once = normalize(&value, &mut String::new(), &mut Vec::new());
    let twice = normalize(&once, &mut String::new(), &mut Vec::new());
    assert_eq!(once, twice, "NFC normalisation is not idempotent");
    let bytes = jcs(&once);
    assert_eq!(bytes, jcs(&twice), "canonical bytes are not idempotent");
    let (back, dups) = json::parse(&bytes).expect("JCS output parses");
    assert!(dups.is_empty(), "JCS output has duplicate keys: {dups:?}");
    assert_eq!(back, once, "JCS output parses to another value");
    assert_eq!(jcs(&back), bytes, "JCS of parsed JCS differs");

    // Digests: only an object's digested fields make a descriptor.
    if let Value::Object(o) = value {
        let fields: Object = o
            .into_iter()
            .filter(|(k, _)| field_name(k).is_some())
            .collect();
        let (d, _) = Descriptor::new(fields);
        let (again, _) = Descriptor::new(d.fields.clone());
        assert_eq!(
            d, again,
            "canonical fields canonicalise to another descriptor"
        );
        let stored = Descriptor::from_canonical(d.fields.clone());
        assert_eq!(d.digest, stored.digest);
        assert_eq!(d.field_digests, stored.field_digests);
    }
    true
}

/// The pre-push hook's stdin (`<local ref> <local sha> <remote ref>
/// <remote sha>` per line), read as `hook::run` reads it (UTF-8 text).
/// What it accepts, written back as git writes it, parses the same.
pub fn prepush(data: &[u8]) -> bool {
    hook_lines(data, parse_pre_push, |u| {
        format!("refs/heads/x {} {} {}\n", u.new, u.name, u.old)
    })
}

/// The pre-receive hook's stdin (`<old> <new> <ref>` per line), read as
/// `hook::run` reads it. What it accepts, written back as git writes it,
/// parses the same.
pub fn prereceive(data: &[u8]) -> bool {
    hook_lines(data, parse_pre_receive, |u| {
        format!("{} {} {}\n", u.old, u.new, u.name)
    })
}

/// A hook's stdin through `parse`: at most one update per line, and the
/// updates accepted, written back one `line` each, parse the same.
fn hook_lines<U: PartialEq + std::fmt::Debug, E: std::fmt::Debug>(
    data: &[u8],
    parse: fn(&str) -> Result<Vec<U>, E>,
    line: fn(&U) -> String,
) -> bool {
    // `hook::run` reads stdin with `read_to_string`: invalid UTF-8 is an
    // I/O error before any parsing.
    let Ok(input) = std::str::from_utf8(data) else {
        return false;
    };
    let Ok(updates) = parse(input) else {
        return false;
    };
    assert!(updates.len() <= input.lines().count());
    let text: String = updates.iter().map(line).collect();
    assert_eq!(parse(&text).expect("git's own form parses"), updates);
    true
}

/// MCP client configs: `config::parse` as `.mcp.json` (plain JSON), as
/// `mcp.json` (JSON with comments: VS Code, Cursor) and as a file named
/// with `--config`, then `launch_spec` of every entry. Returns whether
/// the `--config` reading accepted it.
pub fn config(data: &[u8]) -> bool {
    let mut accepted = false;
    for (name, named) in [
        (".mcp.json", false),
        (".vscode/mcp.json", false),
        ("claude_desktop_config.json", true),
    ] {
        let path = Path::new(name);
        accepted = match git_kams::config::parse(path, path, data, named) {
            Ok(servers) => {
                for s in &servers {
                    let _ = launch_spec(&s.entry);
                }
                true
            }
            Err(_) => false,
        };
    }
    accepted
}

/// The lock's three-way merge on three locks split from the input at NUL
/// bytes (base, ours, theirs; a missing part repeats the one before; lock
/// text never holds a raw NUL). When all three parse: merging never
/// panics, a side that changed nothing gives the other side
/// (`merge(b, x, x) == x`, `merge(b, b, x) == x`, without conflicts), and
/// the merged lock's text parses back to it.
pub fn merge(data: &[u8]) -> bool {
    let mut parts = data.splitn(3, |b| *b == 0);
    let base = parts.next().unwrap_or_default();
    let ours = parts.next().unwrap_or(base);
    let theirs = parts.next().unwrap_or(ours);
    let (Ok(b), Ok(o), Ok(t)) = (Lock::parse(base), Lock::parse(ours), Lock::parse(theirs)) else {
        return false;
    };
    let m = merge_locks(&b, &o, &t);
    let again = Lock::parse(&m.lock.to_text()).expect("the merged lock's text parses");
    assert_eq!(again, m.lock, "the merged lock does not round-trip");
    for x in [&o, &t] {
        let same = merge_locks(&b, x, x);
        assert_eq!(&same.lock, x, "merge(b, x, x) != x");
        assert!(same.conflicts.is_empty(), "merge(b, x, x) conflicts");
        let one_sided = merge_locks(&b, &b, x);
        assert_eq!(&one_sided.lock, x, "merge(b, b, x) != x");
        assert!(one_sided.conflicts.is_empty(), "merge(b, b, x) conflicts");
    }
    true
}

/// `git kams textconv`'s filter, `text::reveal` (the command only reads
/// the file and prints this): no concealing character reaches the output
/// raw (only tab, line feed and the CR of a CRLF stay), and text with
/// nothing to reveal passes unchanged. Always "accepts".
pub fn textconv(data: &[u8]) -> bool {
    let shown = reveal(data);
    let mut chars = shown.chars().peekable();
    while let Some(c) = chars.next() {
        let layout = c == '\t' || c == '\n' || (c == '\r' && chars.peek() == Some(&'\n'));
        assert!(
            layout || !is_concealing(c),
            "U+{:04X} reached the output raw",
            c as u32
        );
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let plain = !s.contains('\\')
            && !s.contains('\r')
            && s.chars()
                .all(|c| c == '\t' || c == '\n' || !is_concealing(c));
        if plain {
            assert_eq!(shown, s);
        }
    }
    true
}
