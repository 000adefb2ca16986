//! Duplicate keys and duplicate tool names: input that two JSON readers (or
//! two MCP clients) may read two ways is never resolved silently.

use super::{Context, Detector};
use crate::finding::{Class, Finding, Severity};

/// Reports every ambiguity recorded while reading the inventory.
pub struct Ambiguous;

impl Detector for Ambiguous {
    fn depends(&self, level: super::Level) -> super::Depends {
        match level {
            // What reading the inventory recorded.
            super::Level::Inventory => super::Depends::Inventory,
            super::Level::Server | super::Level::Tool => super::Depends::Nothing,
        }
    }

    fn name(&self) -> &'static str {
        "ambiguous"
    }

    fn inventory(&self, cx: &Context<'_>, out: &mut Vec<Finding>) {
        for server in cx.inventory.servers.values() {
            for a in &server.ambiguities {
                out.push(Finding {
                    class: Class::Ambiguous,
                    severity: Severity::High,
                    server: server.name.clone(),
                    tool: a.tool.clone(),
                    field: a.field.clone(),
                    message: a.message.clone(),
                    evidence: vec![format!("in {}", server.source.display())],
                });
            }
        }
    }
}
