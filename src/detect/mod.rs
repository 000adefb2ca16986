//! Detectors: what the advertised text does to the model, independent of
//! the lock.
//!
//! They run on every tool and server of the inventory (first sightings
//! included: a server can arrive already poisoned), over the descriptor as
//! the server sent it (`_meta` and unknown keys included: a client may
//! show them to the model), and across the inventory for cross-server
//! findings. The lock only moves severity afterwards (see [`run`]): a
//! pinned entry whose text did not change reports what its approver already
//! saw at info; a pinned entry whose text changed and now trips a signal is
//! critical.

mod ambiguous;
mod hidden;
pub mod memo;
mod poison;
mod shadow;
mod squat;
pub mod text;
pub(crate) mod transport;

use std::collections::BTreeSet;

use crate::finding::{Class, Finding, Severity};
use crate::inventory::Inventory;
use crate::json::Value;
use crate::lock::{Lock, State};

/// What a detector sees of the whole run.
pub struct Context<'a> {
    /// What the servers advertise now.
    pub inventory: &'a Inventory,
    /// The lock the inventory is compared with (empty when there is none).
    pub lock: &'a Lock,
    /// Server entries of the MCP client configurations in the repository.
    pub configs: &'a [crate::config::ClientServer],
}

/// One tool as a detector sees it.
pub struct ToolView<'a> {
    /// Server name.
    pub server: &'a str,
    /// Tool name.
    pub tool: &'a str,
    /// The tool object as advertised (every key, not only digested ones).
    pub raw: &'a Value,
}

/// One server as a detector sees it.
pub struct ServerView<'a> {
    /// Server name.
    pub server: &'a str,
    /// Server-level fields (instructions, serverInfo, prompts, resources).
    pub fields: &'a crate::json::Object,
    /// How the client reaches it (transport, command, url, env, headers...).
    pub launch: &'a crate::json::Object,
}

impl<'a> ServerView<'a> {
    /// The view of a server of the inventory.
    pub fn of(s: &'a crate::inventory::Server) -> ServerView<'a> {
        ServerView {
            server: &s.name,
            fields: &s.descriptor.fields,
            launch: &s.launch,
        }
    }
}

/// A detector. Each method has a default that reports nothing.
pub trait Detector: Sync {
    /// Short name, for evidence.
    fn name(&self) -> &'static str;
    /// Findings about one tool.
    fn tool(&self, _cx: &Context<'_>, _t: &ToolView<'_>, _out: &mut Vec<Finding>) {}
    /// What [`Detector::tool`]'s (or [`Detector::server`]'s) findings
    /// depend on, which says what of them may be remembered ([`memo`]).
    /// The default is safe for any detector: it always runs.
    fn depends(&self, _level: Level) -> Depends {
        Depends::Anything
    }
    /// Findings about one server's own fields.
    fn server(&self, _cx: &Context<'_>, _s: &ServerView<'_>, _out: &mut Vec<Finding>) {}
    /// Findings across the inventory (names shared or alike).
    fn inventory(&self, _cx: &Context<'_>, _out: &mut Vec<Finding>) {}
}

/// The per-subject methods of a detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// [`Detector::server`].
    Server,
    /// [`Detector::tool`].
    Tool,
}

/// What a detector's per-tool or per-server findings depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depends {
    /// Nothing: it reports nothing at this level (it is not called).
    Nothing,
    /// The inventory alone: the findings are remembered.
    Inventory,
    /// Whether it reports is a function of the inventory; what it says
    /// (a severity) may depend on the lock: its silence is remembered.
    InventoryToReport,
    /// Anything (the lock, the client configs): it always runs.
    Anything,
}

/// Every detector, in a fixed order.
pub fn all() -> Vec<Box<dyn Detector>> {
    vec![
        Box::new(ambiguous::Ambiguous),
        Box::new(poison::Poison),
        Box::new(hidden::Hidden),
        Box::new(shadow::Shadow::default()),
        Box::new(squat::Squat),
        Box::new(transport::Transport),
    ]
}

/// Runs every detector over the inventory, then sets severities by what
/// the lock says was approved.
pub fn run(cx: &Context<'_>) -> Vec<Finding> {
    run_with(cx, None).0
}

/// Like [`run`], taking the per-tool findings of the pure detectors from
/// `memo` (the inventory's, see [`memo`]) when given; otherwise also
/// returns what to remember.
pub fn run_with(cx: &Context<'_>, memo: Option<&memo::Memo>) -> (Vec<Finding>, Option<memo::Memo>) {
    let detectors = all();
    let servers: Vec<&crate::inventory::Server> = cx.inventory.servers.values().collect();
    // Per-tool work is independent: spread the servers over the cores in
    // contiguous runs of about equal tool counts, and join the findings in
    // server order, so the result is the one a single thread gives.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(servers.len().max(1));
    let total: usize = servers.iter().map(|s| s.tools.len() + 1).sum();
    let mut chunks: Vec<std::ops::Range<usize>> = Vec::with_capacity(threads);
    let (mut start, mut weight) = (0, 0);
    for (i, s) in servers.iter().enumerate() {
        weight += s.tools.len() + 1;
        if weight * threads >= total * (chunks.len() + 1) && chunks.len() + 1 < threads {
            chunks.push(start..i + 1);
            start = i + 1;
        }
    }
    chunks.push(start..servers.len());
    let detectors = &detectors;
    let servers = &servers;
    let (mut out, fresh): (Vec<Finding>, memo::Memo) = std::thread::scope(|scope| {
        let running: Vec<_> = chunks
            .into_iter()
            .map(|range| {
                let remembered = memo.map(|m| &m[range.clone()]);
                scope.spawn(move || per_server(cx, detectors, &servers[range], remembered))
            })
            .collect();
        let mut out = Vec::new();
        let mut fresh = Vec::new();
        for h in running {
            let (found, learned) = h.join().expect("a detector does not panic");
            out.extend(found);
            fresh.extend(learned);
        }
        (out, fresh)
    });
    // Whole-inventory passes (shadow's and squat's name indexes) are
    // independent of each other too; their findings join in detector order.
    let passes: Vec<Vec<Finding>> = std::thread::scope(|scope| {
        let running: Vec<_> = detectors
            .iter()
            .map(|d| {
                scope.spawn(move || {
                    let mut found = Vec::new();
                    d.inventory(cx, &mut found);
                    found
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| h.join().expect("a detector does not panic"))
            .collect()
    });
    out.extend(passes.into_iter().flatten());
    for f in &mut out {
        baseline(cx, f);
    }
    (out, memo.is_none().then_some(fresh))
}

/// The per-server and per-tool findings of `servers`, in order, with
/// what to remember of each server and tool (nothing when `memo` gave it).
fn per_server(
    cx: &Context<'_>,
    detectors: &[Box<dyn Detector>],
    servers: &[&crate::inventory::Server],
    memo: Option<&[memo::Server]>,
) -> (Vec<Finding>, memo::Memo) {
    let mut out = Vec::new();
    let mut learned = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        let remembered = memo.map(|m| &m[i]);
        let view = ServerView::of(server);
        let own = subject(
            detectors,
            Level::Server,
            remembered.map(|r| &r.server),
            &mut out,
            || (),
            |d, (), found| d.server(cx, &view, found),
        );
        let mut tools = Vec::new();
        for (j, (name, tool)) in server.tools.iter().enumerate() {
            let r = subject(
                detectors,
                Level::Tool,
                remembered.map(|r| &r.tools[j]),
                &mut out,
                || tool.raw(),
                |d, raw, found| {
                    let view = ToolView {
                        server: &server.name,
                        tool: name,
                        raw,
                    };
                    d.tool(cx, &view, found);
                },
            );
            tools.extend(r);
        }
        if let Some(own) = own {
            learned.push(memo::Server { server: own, tools });
        }
        server.release();
    }
    (out, learned)
}

/// Runs the detectors on one subject (a server's own fields, or a tool)
/// into `out`, taking from `known` what was remembered of it. `read`
/// gives what the detectors read (a tool's tree), only when some detector
/// has to run. Returns what to remember, when nothing was known.
fn subject<T>(
    detectors: &[Box<dyn Detector>],
    level: Level,
    known: Option<&memo::Remembered>,
    out: &mut Vec<Finding>,
    read: impl FnOnce() -> T,
    run: impl Fn(&dyn Detector, &T, &mut Vec<Finding>),
) -> Option<memo::Remembered> {
    let must = |d: &dyn Detector| match (d.depends(level), known) {
        (Depends::Nothing, _) => false,
        (_, None) | (Depends::Anything, _) => true,
        (Depends::InventoryToReport, Some(k)) => !k.quiet,
        (Depends::Inventory, Some(_)) => false,
    };
    if let Some(k) = known {
        out.extend(k.pure.iter().cloned());
    }
    let mut r = memo::Remembered {
        pure: Vec::new(),
        quiet: true,
    };
    if detectors.iter().any(|d| must(d.as_ref())) {
        let value = read();
        for d in detectors.iter().filter(|d| must(d.as_ref())) {
            match d.depends(level) {
                Depends::Inventory => run(d.as_ref(), &value, &mut r.pure),
                depends => {
                    let before = out.len();
                    run(d.as_ref(), &value, out);
                    if depends == Depends::InventoryToReport {
                        r.quiet &= out.len() == before;
                    }
                }
            }
        }
    }
    if known.is_some() {
        return None;
    }
    out.extend(r.pure.iter().cloned());
    Some(r)
}

/// Raises the drift of a pinned field to critical when the changed text is
/// itself critically poisoned (see [`baseline`]): the approved descriptor
/// was swapped for one that gives the model orders, the rug pull that
/// should page someone. Other drift keeps its severity, so "critical
/// drift" means exactly this (the SigNoz alert in docs/ relies on it).
/// Pure: `findings` holds both the comparison's and the detectors' findings.
pub fn escalate_poisoned_drift(findings: &mut [Finding]) {
    let poisoned: BTreeSet<(String, Option<String>, String)> = findings
        .iter()
        .filter(|f| f.class == Class::Poison && f.severity == Severity::Critical)
        .filter_map(|f| {
            let top = f.field.as_deref()?.split('/').nth(1)?.to_string();
            Some((f.server.clone(), f.tool.clone(), top))
        })
        .collect();
    for f in findings.iter_mut() {
        if f.class != Class::Drift || f.severity != Severity::High {
            continue;
        }
        let Some(top) = f.field.as_deref().and_then(|p| p.split('/').nth(1)) else {
            continue;
        };
        if poisoned.contains(&(f.server.clone(), f.tool.clone(), top.to_string())) {
            f.severity = Severity::Critical;
            f.evidence.push(format!(
                "critical: the new /{top} trips the poisoning detector (see the poison finding)"
            ));
        }
    }
}

/// Classes whose findings are about text the approver could read.
const TEXT_CLASSES: [Class; 2] = [Class::Poison, Class::Hidden];

/// Moves a text finding's severity by the lock: info when a pinned entry
/// still shows what was approved; critical when a pinned entry's changed
/// field now trips a poisoning signal.
fn baseline(cx: &Context<'_>, f: &mut Finding) {
    if !TEXT_CLASSES.contains(&f.class) {
        return;
    }
    let Some(entry) = cx.lock.entry(&f.server, f.tool.as_deref()) else {
        return;
    };
    if entry.state != State::Pinned {
        return;
    }
    let seen = cx
        .inventory
        .servers
        .get(&f.server)
        .and_then(|s| match &f.tool {
            Some(t) => s.tools.get(t).map(|t| &t.descriptor),
            None => Some(&s.descriptor),
        });
    let Some(seen) = seen else { return };
    if seen.digest == entry.descriptor.digest {
        f.severity = Severity::Info;
        f.message = format!(
            "{} (present when it was pinned: the approver saw it)",
            f.message
        );
        return;
    }
    let changed: BTreeSet<&str> = seen
        .field_digests
        .iter()
        .filter(|(k, d)| entry.descriptor.field_digests.get(k) != Some(*d))
        .map(|(k, _)| k)
        .collect();
    let top = f
        .field
        .as_deref()
        .and_then(|p| p.split('/').nth(1))
        .unwrap_or("");
    if f.class == Class::Poison && f.severity >= Severity::High && changed.contains(top) {
        f.severity = Severity::Critical;
        f.message = format!("{} (in text changed since it was pinned)", f.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A detector that says it reports nothing at a level is not called
    /// there (see [`subject`]): on every attack and real file of the
    /// corpus and the demo's inventory (risky launches), calling it anyway
    /// must find nothing.
    #[test]
    fn a_detector_reports_nothing_where_it_says_so() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in [
            "../shared/corpus/attacks",
            "../shared/corpus/real",
            "samples/inventory-drifted",
        ] {
            for e in std::fs::read_dir(root.join(dir)).expect("the corpus and samples") {
                let path = e.expect("an entry").path();
                if path.extension().is_some_and(|x| x == "json") {
                    files.push((path.clone(), std::fs::read(&path).expect("reads")));
                }
            }
        }
        assert!(files.len() > 10, "the corpus is there");
        let opts = crate::inventory::ReadOptions {
            max_size: 1 << 30,
            ..Default::default()
        };
        let lock = Lock::default();
        let mut checked = 0;
        for (path, bytes) in files {
            let Ok(inventory) = crate::inventory::read_files(vec![(path.clone(), bytes)], &opts)
            else {
                continue;
            };
            let cx = Context {
                inventory: &inventory,
                lock: &lock,
                configs: &[],
            };
            for d in all() {
                for s in inventory.servers.values() {
                    let mut found = Vec::new();
                    if d.depends(Level::Server) == Depends::Nothing {
                        d.server(&cx, &ServerView::of(s), &mut found);
                    }
                    if d.depends(Level::Tool) == Depends::Nothing {
                        for (name, t) in &s.tools {
                            let raw = t.raw();
                            let view = ToolView {
                                server: &s.name,
                                tool: name,
                                raw: &raw,
                            };
                            d.tool(&cx, &view, &mut found);
                            checked += 1;
                        }
                    }
                    assert!(
                        found.is_empty(),
                        "{} in {}: {found:?}",
                        d.name(),
                        path.display()
                    );
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    fn finding(class: Class, severity: Severity, tool: &str, field: &str) -> Finding {
        Finding {
            class,
            severity,
            server: "s".into(),
            tool: Some(tool.into()),
            field: Some(field.into()),
            message: String::new(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn only_drift_of_a_critically_poisoned_field_becomes_critical() {
        let mut all = vec![
            finding(Class::Drift, Severity::High, "t", "/description"),
            finding(Class::Poison, Severity::Critical, "t", "/description"),
            finding(Class::Drift, Severity::High, "t", "/annotations"),
            finding(Class::Drift, Severity::High, "u", "/description"),
            finding(Class::Poison, Severity::High, "u", "/description"),
            finding(
                Class::Drift,
                Severity::Medium,
                "v",
                "/inputSchema/properties/x",
            ),
            finding(
                Class::Poison,
                Severity::Critical,
                "v",
                "/inputSchema/properties/x/description",
            ),
        ];
        escalate_poisoned_drift(&mut all);
        let got: Vec<(Class, Severity)> = all.iter().map(|f| (f.class, f.severity)).collect();
        assert_eq!(got[0], (Class::Drift, Severity::Critical));
        assert!(all[0].evidence[0].contains("poisoning detector"));
        // Another field of the same tool, and a merely high poison signal,
        // leave drift as it was.
        assert_eq!(got[2], (Class::Drift, Severity::High));
        assert_eq!(got[3], (Class::Drift, Severity::High));
        // Medium drift (a widened schema) stays medium.
        assert_eq!(got[5], (Class::Drift, Severity::Medium));
    }
}
