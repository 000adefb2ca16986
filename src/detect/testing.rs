//! What the detectors' unit tests are built from: inventories read from
//! capture files written with serde_json (as every inventory is read), a lock
//! that pins given tools, and the way to drive
//! [`Detector::tool`](super::Detector::tool) by hand.

use std::path::PathBuf;

use super::ToolView;
use crate::descriptor::{Descriptor, Lazy};
use crate::inventory::{read_in_memory, Inventory, ReadOptions, Server};
use crate::json::{Object, Value};
use crate::lock::{Entry, Lock, State};

/// The inventory of the capture files `files`, each a JSON document.
pub(crate) fn read(files: &[serde_json::Value]) -> Inventory {
    let files = files
        .iter()
        .map(|f| (PathBuf::from("t.json"), f.to_string().into_bytes()))
        .collect();
    read_in_memory(files, &ReadOptions::default()).expect("a test inventory")
}

/// An inventory of servers given as (name, tool names).
pub(crate) fn inventory(servers: &[(&str, &[&str])]) -> Inventory {
    let files: Vec<serde_json::Value> = servers
        .iter()
        .map(|(server, tools)| {
            let tools: Vec<serde_json::Value> = tools
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "name": t,
                        "description": "d",
                        "inputSchema": {"type": "object"},
                    })
                })
                .collect();
            serde_json::json!({"server": server, "tools": tools})
        })
        .collect();
    read(&files)
}

/// A lock pinning (server, tool) pairs.
pub(crate) fn pinned(entries: &[(&str, &str)]) -> Lock {
    let mut lock = Lock::default();
    for (server, tool) in entries {
        let mut fields = Object::new();
        fields.insert("name".into(), Value::String(tool.to_string()));
        let (descriptor, _) = Descriptor::new(fields);
        lock.servers
            .entry(server.to_string())
            .or_default()
            .tools
            .insert(
                tool.to_string(),
                Entry {
                    state: State::Pinned,
                    descriptor,
                    first_seen: "2026-01-01T00:00:00Z".into(),
                    approval: None,
                    lazy: Lazy(None),
                },
            );
    }
    lock
}

/// Calls `f` with the view of each tool of `server`, in order: how tests
/// drive [`Detector::tool`](super::Detector::tool) by hand.
pub(crate) fn each_tool(server: &Server, mut f: impl FnMut(&ToolView<'_>)) {
    for (name, tool) in &server.tools {
        tool.with_tree(false, |raw| {
            f(&ToolView {
                server: &server.name,
                tool: name,
                raw,
            })
        });
    }
}
