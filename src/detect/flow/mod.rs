//! Toxic flows: servers a client has together whose tools read private
//! data, take in content others wrote, and send data out.
//!
//! Every tool may be honest and the combination still leaks: a web page,
//! an issue or a mail the model reads can order it to read a private file
//! and send it out through a request or a message. So a set of servers one
//! client is given (the servers of one client config; the whole inventory
//! when no config names them) whose tools close the three legs gets a
//! `flow` finding naming the tools of each leg. It is medium; it is high
//! when a leg is filled only by tools that are new or drifted, so that the
//! change under review is what closes the flow.
//!
//! The legs come from [`classes`]: what each tool's name, description,
//! schema and annotations say it does, read against
//! `rules/capabilities.toml` when its descriptor was digested.

pub mod classes;

use std::collections::{BTreeMap, BTreeSet};

use super::{Context, Depends, Detector, Level};
use crate::finding::{Class, Finding, Severity};
use classes::{READS_PRIVATE, SENDS_OUT, TAKES_UNTRUSTED};

/// The toxic-flow detector.
pub struct Flow;

/// The legs of a flow, in the order a finding names them, with how each
/// is said.
const LEGS: [(&str, &str); 3] = [
    (TAKES_UNTRUSTED, "takes in content others wrote"),
    (READS_PRIVATE, "reads private data"),
    (SENDS_OUT, "sends data out"),
];

/// How many tools a leg names before `and N more`.
const SHOWN: usize = 5;

impl Detector for Flow {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn depends(&self, level: Level) -> Depends {
        match level {
            // Which servers go together comes from the client configs.
            Level::Inventory => Depends::Anything,
            Level::Server | Level::Tool => Depends::Nothing,
        }
    }

    fn inventory(&self, cx: &Context<'_>, out: &mut Vec<Finding>) {
        for (servers, place) in sets(cx) {
            if let Some(f) = flow(cx, &servers, &place) {
                out.push(f);
            }
        }
    }
}

/// The sets of servers a client is given, each with where it is
/// configured: one per client config (its servers that the inventory
/// shows), or, when the inventory shows a server no config names, the
/// whole inventory as one set. A set named twice is kept once.
fn sets(cx: &Context<'_>) -> Vec<(BTreeSet<String>, String)> {
    let shown = |name: &str| cx.inventory.servers.contains_key(name);
    let named: BTreeSet<&str> = cx.configs.iter().map(|c| c.name.as_str()).collect();
    let mut out: Vec<(BTreeSet<String>, String)> = Vec::new();
    if cx
        .inventory
        .servers
        .keys()
        .any(|s| !named.contains(s.as_str()))
    {
        out.push((
            cx.inventory.servers.keys().cloned().collect(),
            "in the inventory".to_string(),
        ));
        return out;
    }
    let mut by_file: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in cx.configs.iter().filter(|c| shown(&c.name)) {
        by_file
            .entry(c.source.display().to_string())
            .or_default()
            .insert(c.name.clone());
    }
    for (file, servers) in by_file {
        match out.iter_mut().find(|(s, _)| *s == servers) {
            Some((_, place)) => place.push_str(&format!(", {file}")),
            None => out.push((servers, format!("configured together in {file}"))),
        }
    }
    out
}

/// One tool of a leg.
struct Leg<'a> {
    server: &'a str,
    tool: &'a str,
    /// New to the lock, or advertised otherwise than it was pinned.
    changed: Option<&'static str>,
}

/// What is known of one leg of a flow.
#[derive(Default)]
struct LegTools<'a> {
    /// The first tools that fill it, as the evidence names them.
    shown: Vec<Leg<'a>>,
    /// How many tools fill it.
    count: usize,
    /// Whether a tool approved as it is advertised fills it.
    approved: bool,
}

/// The flow `servers` close, if they do. The lock is asked about a tool
/// only while its legs still need it (a tool to show, or an approved one):
/// a large inventory's tools are otherwise only counted.
fn flow<'a>(cx: &Context<'a>, servers: &BTreeSet<String>, place: &str) -> Option<Finding> {
    let bits: Vec<u8> = LEGS.iter().map(|(class, _)| classes::bit(class)).collect();
    let any = bits.iter().fold(0u8, |m, b| m | b);
    let mut legs: [LegTools<'a>; 3] = Default::default();
    for name in servers {
        let Some((name, server)) = cx.inventory.servers.get_key_value(name) else {
            continue;
        };
        for (tool, seen) in &server.tools {
            let can = seen.descriptor.can.bits();
            if can & any == 0 {
                continue;
            }
            let mut changed: Option<Option<&'static str>> = None;
            for (leg, &bit) in legs.iter_mut().zip(&bits) {
                if can & bit == 0 {
                    continue;
                }
                leg.count += 1;
                if leg.shown.len() >= SHOWN && leg.approved {
                    continue;
                }
                let why = *changed.get_or_insert_with(|| match cx.lock.entry(name, Some(tool)) {
                    None => Some("new"),
                    Some(e) if e.state == crate::lock::State::Provisional => Some("not pinned"),
                    Some(e) if e.descriptor.digest != seen.descriptor.digest => Some("drifted"),
                    Some(_) => None,
                });
                leg.approved |= why.is_none();
                if leg.shown.len() < SHOWN {
                    leg.shown.push(Leg {
                        server: name,
                        tool,
                        changed: why,
                    });
                }
            }
        }
    }
    if legs.iter().any(|l| l.count == 0) {
        return None;
    }
    // The legs that only changed tools fill: the change closes the flow.
    let opened: Vec<usize> = (0..LEGS.len()).filter(|&i| !legs[i].approved).collect();
    let shown = |l: &Leg<'_>| match l.changed {
        Some(why) => format!("{}/{} ({why})", l.server, l.tool),
        None => format!("{}/{}", l.server, l.tool),
    };
    let mut evidence: Vec<String> = LEGS
        .iter()
        .zip(&legs)
        .map(|((_, said), leg)| {
            let mut names: Vec<String> = leg.shown.iter().map(shown).collect();
            if leg.count > leg.shown.len() {
                names.push(format!("and {} more", leg.count - leg.shown.len()));
            }
            format!("{said}: {}", names.join(", "))
        })
        .collect();
    let names: Vec<&str> = servers.iter().map(String::as_str).collect();
    evidence.push(format!("servers: {} ({place})", names.join(", ")));
    let severity = if opened.is_empty() {
        Severity::Medium
    } else {
        let said: Vec<&str> = opened.iter().map(|&i| LEGS[i].1).collect();
        let said = match said.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        evidence.push(format!(
            "closed by this change: no tool approved as it is advertised {said}"
        ));
        Severity::High
    };
    let first = |i: usize| &legs[i].shown[0];
    let (untrusted, private, sends) = (first(0), first(1), first(2));
    Some(Finding {
        class: Class::Flow,
        severity,
        server: sends.server.to_string(),
        tool: None,
        field: None,
        message: format!(
            "toxic flow: `{}/{}` takes in content others wrote, `{}/{}` reads private data and `{}/{}` sends data out; text the model reads can order it to send the private data out",
            untrusted.server, untrusted.tool, private.server, private.tool, sends.server, sends.tool
        ),
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::inventory as inventory_of;
    use crate::lock::{Entry, Lock, State};

    /// A lock that pins every tool of `inv` as it is advertised.
    fn approved(inv: &crate::inventory::Inventory) -> Lock {
        let mut lock = Lock::default();
        for (name, server) in &inv.servers {
            for (tool, seen) in &server.tools {
                lock.servers.entry(name.clone()).or_default().tools.insert(
                    tool.clone(),
                    Entry {
                        state: State::Pinned,
                        descriptor: seen.descriptor.clone(),
                        first_seen: "2026-01-01T00:00:00Z".into(),
                        approval: None,
                        lazy: Default::default(),
                    },
                );
            }
        }
        lock
    }

    fn found(inventory: &crate::inventory::Inventory, lock: &crate::lock::Lock) -> Vec<Finding> {
        let cx = Context {
            inventory,
            lock,
            configs: &[],
        };
        let mut out = Vec::new();
        Flow.inventory(&cx, &mut out);
        out
    }

    #[test]
    fn three_legs_across_servers_are_one_flow_naming_each_leg() {
        let inv = inventory_of(&[
            ("files", &["read_file", "write_file"]),
            ("web", &["fetch"]),
            ("clock", &["get_current_time"]),
        ]);
        let got = found(&inv, &crate::lock::Lock::default());
        assert_eq!(got.len(), 1, "{got:?}");
        let f = &got[0];
        assert_eq!((f.class, f.severity), (Class::Flow, Severity::High));
        assert_eq!(f.server, "web");
        assert!(f.message.contains("`web/fetch` takes in content others wrote, `files/read_file` reads private data and `web/fetch` sends data out"), "{}", f.message);
        assert_eq!(
            f.evidence[3],
            "servers: clock, files, web (in the inventory)"
        );
    }

    #[test]
    fn two_legs_are_no_flow() {
        for tools in [
            &[
                ("files", &["read_file"][..]),
                ("search", &["brave_web_search"][..]),
            ][..],
            &[
                ("files", &["read_file"][..]),
                ("chat", &["send_message"][..]),
            ][..],
            &[
                ("web", &["brave_web_search"][..]),
                ("chat", &["send_message"][..]),
            ][..],
        ] {
            let inv = inventory_of(tools);
            assert!(
                found(&inv, &crate::lock::Lock::default()).is_empty(),
                "{tools:?}"
            );
        }
    }

    #[test]
    fn a_flow_of_approved_tools_is_medium_and_a_change_that_closes_it_high() {
        let inv = inventory_of(&[("files", &["read_file"]), ("web", &["fetch"])]);
        let lock = approved(&inv);
        let got = found(&inv, &lock);
        assert_eq!(got[0].severity, Severity::Medium);
        // Another reader joins the approved ones: still medium, named as new.
        let more = inventory_of(&[("files", &["read_file", "read_notes"]), ("web", &["fetch"])]);
        let got = found(&more, &lock);
        assert_eq!(got[0].severity, Severity::Medium);
        assert!(
            got[0].evidence[1].contains("files/read_notes (new)"),
            "{:?}",
            got[0].evidence
        );
        // The only sender is new: the change closes the flow.
        let inv = inventory_of(&[("files", &["read_file"]), ("web", &["brave_web_search"])]);
        let lock = approved(&inv);
        let grown = inventory_of(&[
            ("files", &["read_file"]),
            ("web", &["brave_web_search"]),
            ("chat", &["slack_post_message"]),
        ]);
        let got = found(&grown, &lock);
        assert_eq!(got[0].severity, Severity::High);
        assert!(
            got[0].evidence.last().unwrap().contains("sends data out"),
            "{:?}",
            got[0].evidence
        );
    }
}
