//! Cloaking: a server that tells one client something else than another.
//!
//! `capture --as A,B,...` captures a server once per client identity and
//! records in its capture file who it was captured as (`capturedAs`) and,
//! for each identity that was told something else than the first,
//! `cloaking` with what differed. A server that answers by client name
//! can show a scanner clean tools and a real client poisoned ones, so each
//! such identity is a high finding naming the identities and the fields.

use super::{Context, Depends, Detector, Level, ServerView};
use crate::finding::{Class, Finding, Severity};
use crate::json::Value;

/// The cloaking detector.
pub struct Cloak;

impl Detector for Cloak {
    fn name(&self) -> &'static str {
        "cloak"
    }

    fn depends(&self, level: Level) -> Depends {
        match level {
            // What the capture file of the server says.
            Level::Server => Depends::Inventory,
            Level::Tool | Level::Inventory => Depends::Nothing,
        }
    }

    fn server(&self, _cx: &Context<'_>, s: &ServerView<'_>, out: &mut Vec<Finding>) {
        let Some(Value::Array(cloaked)) = s.launch.get("cloaking") else {
            return;
        };
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .unwrap_or_default()
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let captured_as = strings(s.launch.get("capturedAs"));
        let first = captured_as
            .first()
            .map_or("the first identity", String::as_str);
        for entry in cloaked {
            let who = entry.get("as").and_then(Value::as_str).unwrap_or("?");
            let client = entry
                .get("clientInfo")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let differs = strings(entry.get("differs"));
            out.push(Finding {
                class: Class::Cloaking,
                severity: Severity::High,
                server: s.server.to_string(),
                tool: None,
                field: None,
                message: format!(
                    "`{}` told {who} otherwise than {first}: {}; a server that answers by client name can show a review clean tools and a client poisoned ones",
                    s.server,
                    differs.join(", ")
                ),
                evidence: vec![
                    format!(
                        "captured as {} (the inventory holds what {first} was told)",
                        captured_as.join(", ")
                    ),
                    format!("as {who} (clientInfo name {client:?}): {}", differs.join(", ")),
                ],
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_identity_told_otherwise_is_a_high_finding_naming_both() {
        let inv = crate::detect::testing::read(&[serde_json::json!({
            "server": "s",
            "tools": [],
            "capturedAs": ["git-kams", "claude-code", "cursor"],
            "cloaking": [
                {"as": "claude-code", "clientInfo": "claude-code", "differs": ["tools/fetch", "instructions"]}
            ],
        })]);
        let server = &inv.servers["s"];
        let lock = crate::lock::Lock::default();
        let cx = Context {
            inventory: &inv,
            lock: &lock,
            configs: &[],
        };
        let mut out = Vec::new();
        Cloak.server(&cx, &ServerView::of(server), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].class, out[0].severity),
            (Class::Cloaking, Severity::High)
        );
        assert!(
            out[0]
                .message
                .contains("told claude-code otherwise than git-kams: tools/fetch, instructions"),
            "{}",
            out[0].message
        );
        // Captured as several clients that agree: nothing.
        let inv = crate::detect::testing::read(&[serde_json::json!({
            "server": "s", "tools": [], "capturedAs": ["claude-code", "cursor"],
        })]);
        let mut out = Vec::new();
        Cloak.server(&cx, &ServerView::of(&inv.servers["s"]), &mut out);
        assert!(out.is_empty());
    }
}
