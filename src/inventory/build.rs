//! What a shell read from an inventory file becomes: servers with their
//! tools, descriptors and launch fields, and the ambiguities found on the
//! way (tools of one name, duplicate keys, keys that NFC makes equal,
//! prompts or resources listed twice), which become findings, never
//! silent choices.

use std::collections::BTreeMap;
use std::path::Path;

use super::shape::{server_name, Fail, Shell};
use super::{Ambiguity, InputError, Server, Tool};
use crate::descriptor::{Descriptor, Lazy};
use crate::json::{Object, Value};

/// The servers of a multi-server inventory from their objects, in order
/// (the first error in that order, if any). With many tools, each half is
/// built on a core of its own: one core building all of them left the
/// other waiting (docs/performance.md, "Tenth pass", 0422cb3).
pub(super) fn build_servers(
    path: &Path,
    shells: Vec<Shell>,
    dups: &[String],
) -> Result<Vec<Server>, Fail> {
    let mut out = Vec::with_capacity(shells.len());
    for (i, shell) in shells.into_iter().enumerate() {
        let at = format!("/servers/{i}");
        let name = server_name(path, &shell.fields, "name", &at)?;
        out.push(build_server(path, name, shell, &at, dups)?);
    }
    Ok(out)
}

/// Builds a server from its object (`base` is its pointer in the file) and
/// the file's duplicate-key pointers.
pub(super) fn build_server(
    path: &Path,
    name: String,
    shell: Shell,
    base: &str,
    dups: &[String],
) -> Result<Server, InputError> {
    let mut ambiguities = Vec::new();
    let shell_tools = shell.tools.unwrap_or_default();
    let mut tools: Vec<(String, Tool)> = Vec::with_capacity(shell_tools.len());
    for (tool_name, tool, collisions) in shell_tools {
        let at = &tool.pointer;
        for c in collisions {
            ambiguities.push(Ambiguity {
                tool: Some(tool_name.clone()),
                field: Some(c.clone()),
                message: format!("key {c} equals another key after Unicode NFC normalisation: clients may read either"),
            });
        }
        for p in dups.iter().filter(|p| p.starts_with(&format!("{at}/"))) {
            let rel = rename_schema_key(&p[at.len()..]);
            ambiguities.push(Ambiguity {
                tool: Some(tool_name.clone()),
                field: Some(rel.clone()),
                message: format!("duplicate key {rel}: the tool object names it twice, and clients may read either value"),
            });
        }
        tools.push((tool_name, tool));
    }
    // By name, each name's tools in the file's order (a stable sort).
    tools.sort_by(|a, b| a.0.cmp(&b.0));
    for same in tools
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|same| same.len() > 1)
    {
        let places: Vec<&str> = same.iter().map(|(_, t)| t.pointer.as_str()).collect();
        ambiguities.push(Ambiguity {
            tool: Some(same[0].0.clone()),
            field: Some("/name".into()),
            message: format!(
                "tool name appears {} times in one server (at {}); clients may resolve either",
                places.len(),
                places.join(", ")
            ),
        });
    }
    // Built from the sorted list, its nodes full (inserted one by one in
    // the file's order they were not: docs/performance.md, "Tenth pass",
    // ab8f7a4); the last of a name is the one kept, as an insert keeps it.
    let tools: BTreeMap<String, Tool> = tools.into_iter().collect();
    for p in dups
        .iter()
        .filter(|p| p.starts_with(base) && !p.starts_with(&format!("{base}/tools/")))
    {
        ambiguities.push(Ambiguity {
            tool: None,
            field: Some(p[base.len()..].to_string()),
            message: "duplicate key at the server level: two values for the same key".into(),
        });
    }

    let mut server_fields = Object::new();
    let mut launch = Object::new();
    for (k, v) in shell.fields.iter() {
        match k.as_str() {
            "instructions" | "serverInfo" => {
                server_fields.insert(k.clone(), v.clone());
            }
            "prompts" | "resources" | "resourceTemplates" => {
                let id = match k.as_str() {
                    "prompts" => "name",
                    "resources" => "uri",
                    _ => "uriTemplate",
                };
                let at = format!("{base}/{k}");
                let keyed = keyed_list(path, v, id, &at, &mut ambiguities)?;
                server_fields.insert(k.clone(), Value::Object(keyed));
            }
            // With the launch: who capture said it was (`capture --as`),
            // what another client was told instead, and which client
            // configs launched it.
            "transport" | "command" | "args" | "cwd" | "url" | "env" | "headers" | "type"
            | "capturedAs" | "cloaking" | "configuredIn" => {
                launch.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    let (descriptor, collisions) = Descriptor::new(server_fields);
    for c in collisions {
        ambiguities.push(Ambiguity {
            tool: None,
            field: Some(c.clone()),
            message: format!("key {c} equals another key after Unicode NFC normalisation"),
        });
    }
    Ok(Server {
        name,
        source: path.to_path_buf(),
        pointer: base.to_string(),
        descriptor,
        launch,
        tools,
        ambiguities,
    })
}

/// A server's `prompts`, `resources` or `resourceTemplates` list (at `at`)
/// as an object keyed by each item's `id` member; an id listed twice is an
/// ambiguity, and the last item of an id is kept.
fn keyed_list(
    path: &Path,
    v: &Value,
    id: &str,
    at: &str,
    ambiguities: &mut Vec<Ambiguity>,
) -> Result<Object, InputError> {
    let Some(list) = v.as_array() else {
        return Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("expected an array, found {}", v.kind()),
        ));
    };
    let mut out = Object::new();
    for (i, item) in list.iter().enumerate() {
        let Some(key) = item.get(id).and_then(Value::as_str) else {
            return Err(InputError::new(
                path,
                Some(format!("{at}/{i}")),
                format!("entry has no string `{id}`"),
            ));
        };
        if out.get(key).is_some() {
            ambiguities.push(Ambiguity {
                tool: None,
                field: Some(format!("{at}/{i}")),
                message: format!("`{key}` is listed twice"),
            });
        }
        out.insert(key.to_string(), item.clone());
    }
    Ok(out)
}

/// DescriptorPin's `input_schema` is MCP's `inputSchema`; pointers name the latter.
fn rename_schema_key(rel: &str) -> String {
    for (from, to) in [
        ("/input_schema", "/inputSchema"),
        ("/output_schema", "/outputSchema"),
    ] {
        if rel == from || rel.starts_with(&format!("{from}/")) {
            return format!("{to}{}", &rel[from.len()..]);
        }
    }
    rel.to_string()
}

/// The name of a tool's member as a descriptor field: older servers wrote
/// the schemas' keys in snake case.
pub(super) fn tool_field(key: &str) -> &str {
    match key {
        "input_schema" => "inputSchema",
        "output_schema" => "outputSchema",
        other => other,
    }
}

/// True for the tool fields whose value must be an object.
pub(super) fn holds_object(field: &str) -> bool {
    matches!(field, "inputSchema" | "outputSchema" | "annotations")
}
/// A tool's name (NFC), the tool, and the pointers of its keys that
/// collide after NFC.
pub(super) fn build_tool(
    path: &Path,
    t: Value,
    at: &str,
) -> Result<(String, Tool, Vec<String>), InputError> {
    let Value::Object(members) = t else {
        return Err(InputError::new(
            path,
            Some(at.to_string()),
            format!("tool is {}, expected an object", t.kind()),
        ));
    };
    match members.get("name") {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(v) => {
            return Err(InputError::new(
                path,
                Some(format!("{at}/name")),
                format!("tool name is {}, expected a non-empty string", v.kind()),
            ))
        }
        None => {
            return Err(InputError::new(
                path,
                Some(at.to_string()),
                "tool has no `name`",
            ))
        }
    }
    let mut fields = Object::new();
    for (k, v) in members {
        let key = tool_field(&k);
        if !crate::descriptor::TOOL_FIELDS.contains(&key) {
            continue;
        }
        if fields.get(key).is_some() {
            return Err(InputError::new(
                path,
                Some(format!("{at}/{k}")),
                format!("tool has both `{k}` and `{key}`"),
            ));
        }
        if holds_object(key) && !matches!(v, Value::Object(_)) {
            return Err(InputError::new(
                path,
                Some(format!("{at}/{k}")),
                format!("`{k}` is {}, expected an object", v.kind()),
            ));
        }
        fields.insert(key.to_string(), v);
    }
    let (descriptor, collisions) = Descriptor::new(fields);
    Ok((
        descriptor
            .get("name")
            .and_then(Value::as_str)
            .expect("the name was checked above")
            .to_string(),
        Tool {
            descriptor,
            pointer: at.to_string(),
            lazy: Lazy::default(),
            text: None,
        },
        collisions,
    ))
}

#[cfg(test)]
mod tests {
    use crate::inventory::{read_in_memory, ReadOptions};
    use crate::json::Tree;
    use std::path::PathBuf;

    /// Tools of one name in one server: one ambiguity per name, in name
    /// order, naming every place in the file's order; the last of each
    /// name is the one kept. Read whole and keeping digests only.
    #[test]
    fn tools_of_one_name_are_ambiguous_and_the_last_is_kept() {
        let tool = |name: &str, n: u32| {
            format!(
                r#"{{"name":"{name}","description":"{name} {n}","inputSchema":{{"type":"object"}}}}"#
            )
        };
        let tools = [
            tool("b", 1),
            tool("a", 1),
            tool("b", 2),
            tool("c", 1),
            tool("a", 2),
            tool("b", 3),
        ];
        let text = format!(r#"{{"server":"s","tools":[{}]}}"#, tools.join(","));
        for digests_only in [false, true] {
            let opts = ReadOptions {
                digests_only,
                ..ReadOptions::default()
            };
            let servers = read_in_memory(
                vec![(PathBuf::from("t.json"), text.clone().into_bytes())],
                &opts,
            )
            .expect("reads")
            .servers;
            let s = &servers["s"];
            let names: Vec<(Option<&str>, Option<&str>, &str)> = s
                .ambiguities
                .iter()
                .map(|a| (a.tool.as_deref(), a.field.as_deref(), a.message.as_str()))
                .collect();
            assert_eq!(
                names,
                [
                    (
                        Some("a"),
                        Some("/name"),
                        "tool name appears 2 times in one server (at /tools/1, /tools/4); clients may resolve either"
                    ),
                    (
                        Some("b"),
                        Some("/name"),
                        "tool name appears 3 times in one server (at /tools/0, /tools/2, /tools/5); clients may resolve either"
                    ),
                ],
                "digests only: {digests_only}"
            );
            let kept: Vec<(&str, Option<String>)> = s
                .tools
                .iter()
                .map(|(name, t)| {
                    let said = t.with_tree(false, |raw| {
                        raw.get("description")
                            .and_then(Tree::as_str)
                            .map(str::to_string)
                    });
                    (name.as_str(), said)
                })
                .collect();
            let said = |name, text: &str| (name, Some(text.to_string()));
            assert_eq!(
                kept,
                [said("a", "a 2"), said("b", "b 3"), said("c", "c 1")],
                "digests only: {digests_only}"
            );
            assert_eq!(s.tools["b"].pointer, "/tools/5");
        }
    }
}
