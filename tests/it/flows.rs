//! Toxic flows (issue 27, item 4): the capability classes of every real
//! server of the corpus as docs/flows.md tables them, the `flow` finding of
//! servers one client is given together, and the `CAN` column of `status`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{corpus, json, kams, text};

/// The `.json` files of a folder, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The letters of a server's classes, as docs/flows.md writes them.
fn letters(can: &serde_json::Value) -> String {
    let shown: Vec<&str> = can
        .as_array()
        .unwrap()
        .iter()
        .map(|c| match c.as_str().unwrap() {
            "reads-private" => "R",
            "takes-untrusted" => "I",
            "sends-out" => "S",
            "writes" => "W",
            other => panic!("unknown class {other}"),
        })
        .collect();
    if shown.is_empty() {
        "-".into()
    } else {
        shown.join(" ")
    }
}

/// The classes git-kams gives the server of `file` (`status --format json`).
fn classes_of(file: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    // scan and status refuse `/` in a server name (see attacks.rs).
    let inventory = match doc["server"].as_str() {
        Some(n) if n.contains('/') || n.starts_with('@') => {
            doc["server"] = n.trim_start_matches('@').replace('/', "__").into();
            let copy = dir.path().join("s.json");
            std::fs::write(&copy, serde_json::to_vec(&doc).unwrap()).unwrap();
            copy
        }
        _ => file.to_path_buf(),
    };
    let o = kams(dir.path())
        .args([
            "--lock",
            "k.lock",
            "--format",
            "json",
            "status",
            "--inventory",
        ])
        .arg(&inventory)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}",
        file.display(),
        text(&o.stderr)
    );
    let status = json(&o.stdout);
    let server = status["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["tool"].is_null())
        .unwrap_or_else(|| panic!("{}: no server entry", file.display()));
    letters(&server["can"])
}

#[test]
fn every_real_server_has_the_classes_docs_flows_md_gives_it() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/flows.md"))
        .unwrap();
    let table = docs
        .split("<!-- classes:begin -->")
        .nth(1)
        .and_then(|t| t.split("<!-- classes:end -->").next())
        .expect("docs/flows.md has the classes table");
    let mut documented: BTreeMap<String, (String, String, bool)> = BTreeMap::new();
    let mut agree_count = 0;
    for line in table.lines().skip(3) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 4 {
            continue;
        }
        // `yes`, or `yes: why` where a class comes from a description, a
        // schema or annotations, or the reader's column was corrected.
        let agree = cells[3] == "yes" || cells[3].starts_with("yes: ");
        assert!(agree || cells[3].starts_with("no: "), "{line}");
        assert_eq!(
            agree,
            cells[1] == cells[2],
            "the agree column is wrong: {line}"
        );
        agree_count += usize::from(agree);
        documented.insert(cells[0].into(), (cells[1].into(), cells[2].into(), agree));
    }
    let files: Vec<PathBuf> = json_files(&corpus().join("real"))
        .into_iter()
        .chain(json_files(&corpus().join("benign")))
        .collect();
    let mut wrong = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        let got = classes_of(file);
        match documented.remove(&name) {
            None => wrong.push(format!("| {name} | ? | {got} | ? |  (missing)")),
            Some((_, table, _)) if table != got => wrong.push(format!(
                "{name}: the table says {table}, git-kams gives {got}"
            )),
            Some(_) => {}
        }
    }
    wrong.extend(
        documented
            .keys()
            .map(|k| format!("{k}: in the table, not in the corpus")),
    );
    assert!(
        wrong.is_empty(),
        "docs/flows.md is out of date:\n{}",
        wrong.join("\n")
    );
    assert!(
        docs.contains(&format!(
            "Agreement: **{agree_count} of {}** servers",
            files.len()
        )),
        "docs/flows.md states another agreement than {agree_count} of {}",
        files.len()
    );
}

#[test]
fn servers_one_client_is_given_together_are_one_set_and_the_finding_names_its_config() {
    let repo = crate::common::repo();
    let d = repo.path();
    crate::common::samples_drifted(d);
    let entry = |pkg: &str| serde_json::json!({"command": "uvx", "args": [pkg]});
    let write = |rel: &str, servers: &[(&str, &str)]| {
        let map: serde_json::Map<String, serde_json::Value> = servers
            .iter()
            .map(|(n, p)| (n.to_string(), entry(p)))
            .collect();
        let path = d.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::json!({"mcpServers": map}).to_string()).unwrap();
    };
    // Claude Code is given the reader and the fetcher; Cursor two readers.
    write(".mcp.json", &[("files", "files==1"), ("web", "web==1")]);
    write(
        ".cursor/mcp.json",
        &[("notes", "notes==1"), ("helper", "helper==1")],
    );
    let flows = |d: &Path| crate::common::findings_of(d, "flow");
    let found = flows(d);
    assert_eq!(found.len(), 1, "{found:#?}");
    let evidence = crate::common::evidence(&found[0]);
    assert!(
        evidence.contains(&"servers: files, web (configured together in .mcp.json)"),
        "{evidence:?}"
    );
    assert_eq!(found[0]["severity"], "high");
    // Split between the clients, the legs close no flow.
    write(
        ".mcp.json",
        &[
            ("files", "files==1"),
            ("notes", "notes==1"),
            ("helper", "helper==1"),
        ],
    );
    write(".cursor/mcp.json", &[("web", "web==1")]);
    assert!(flows(d).is_empty());
}
