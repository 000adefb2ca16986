//! The table-driven test of `rules/poison.toml`: every signal fires on each
//! of its `fires` examples and on none of its `quiet` ones. An example is a
//! tool's description, or, when it starts with `{`, a whole tool object
//! (for the signals that read a schema or annotations).

use super::tables::EXAMPLES;
use super::tests::{scan, signals};
use crate::finding::Finding;

/// The findings of one example, as the only tool of a server.
fn findings(example: &str) -> Vec<Finding> {
    let tool: serde_json::Value = if example.starts_with('{') {
        serde_json::from_str(example).unwrap_or_else(|e| panic!("example {example:?}: {e}"))
    } else {
        serde_json::json!({
            "name": "t",
            "description": example,
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}
        })
    };
    scan(&serde_json::json!({"servers": [{"name": "s", "tools": [tool]}]}).to_string())
}

#[test]
fn every_signal_fires_on_its_examples_and_on_no_counterexample() {
    let mut wrong = Vec::new();
    for (signal, must, example) in EXAMPLES {
        let found = findings(example);
        let fired = found.iter().any(|f| signals(f).contains(&signal.name()));
        if fired != *must {
            let evidence: Vec<&String> = found.iter().flat_map(|f| &f.evidence).collect();
            wrong.push(format!(
                "{} {} on {example:?}; evidence {evidence:?}",
                signal.name(),
                if *must { "did not fire" } else { "fired" },
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} example(s) of rules/poison.toml disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
