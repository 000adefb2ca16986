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
//!
//! The driver reads each tool's text from the bytes the inventory was read
//! from, and says it is done with a server's once its tools are read
//! ([`crate::inventory::Server::release`]): a call of
//! [`crate::bytes::Bytes::release`], whose cost the edge's holder decides
//! (a mapped file drops its pages, bytes in memory do nothing), not an act
//! of the core's own. It stays here, per server, because the edge sees the
//! run only whole: released after it instead, a cold 2000x50 scan kept
//! every tool's pages to its end and peaked at 189 MiB, not 142 MiB
//! (docs/performance.md, "The redesign", "At the edge").

mod ambiguous;
mod cloak;
pub mod flow;
mod hidden;
pub mod known;
mod poison;
mod shadow;
mod squat;
pub mod text;
pub(crate) mod transport;

use std::collections::BTreeSet;

use crate::finding::{Class, Finding, Severity};
use crate::inventory::Inventory;
use crate::json::Tree;
use crate::lock::{Lock, State};
use crate::work::Workers;

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
    pub raw: &'a Tree<'a>,
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
    /// What the findings of [`Detector::tool`], [`Detector::server`] or
    /// [`Detector::inventory`] (by `level`) depend on, which says what of
    /// them may be remembered ([`memo`]). The default is safe for any
    /// detector: it always runs.
    fn depends(&self, _level: Level) -> Depends {
        Depends::Anything
    }
    /// Findings about one server's own fields.
    fn server(&self, _cx: &Context<'_>, _s: &ServerView<'_>, _out: &mut Vec<Finding>) {}
    /// Findings across the inventory (names shared or alike).
    fn inventory(&self, _cx: &Context<'_>, _out: &mut Vec<Finding>) {}
}

/// The methods of a detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// [`Detector::server`].
    Server,
    /// [`Detector::tool`].
    Tool,
    /// [`Detector::inventory`].
    Inventory,
}

/// What a detector's findings at a [`Level`] depend on, from least to
/// most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depends {
    /// Nothing: it reports nothing at this level (it is not called).
    Nothing,
    /// The inventory alone: the findings are remembered per tool.
    Inventory,
    /// Whether it reports is a function of the inventory; what it says
    /// (a severity) may depend on the lock: its silence is remembered per
    /// tool.
    InventoryToReport,
    /// The inventory and the lock: the findings, with the severity the
    /// lock gave them, are remembered for that lock ([`known::Memo::settled`]).
    InventoryAndLock,
    /// Anything (the client configs): it always runs.
    Anything,
}

/// Every detector, in a fixed order.
pub fn all() -> Vec<Box<dyn Detector>> {
    vec![
        Box::new(ambiguous::Ambiguous),
        Box::new(poison::Poison::default()),
        Box::new(hidden::Hidden),
        Box::new(shadow::Shadow::default()),
        Box::new(squat::Squat),
        Box::new(transport::Transport),
        Box::new(flow::Flow),
        Box::new(cloak::Cloak),
    ]
}

/// Runs every detector over the inventory, then sets severities by what
/// the lock says was approved.
pub fn run(cx: &Context<'_>, workers: &dyn Workers) -> Vec<Finding> {
    run_with(cx, None, Learn::Forget, workers).0
}

/// What a run found, by what it depends on.
#[derive(Default)]
struct Found {
    /// On nothing but the inventory and the lock.
    settled: Vec<Finding>,
    /// On anything else: found anew on every run.
    live: Vec<Finding>,
}

/// What is known of a subject before the detectors run on it.
#[derive(Clone, Copy)]
enum Known<'a> {
    /// Nothing.
    Nothing,
    /// What the memo remembered of it, and whether that is to be carried
    /// into this inventory's memo (it is an earlier inventory's; this
    /// inventory's own memo is kept as it is).
    Remembered(&'a known::Remembered, bool),
    /// Every finding that does not depend on anything else is in hand.
    Settled,
    /// Nothing, and nothing is to be remembered of it (no memo is kept).
    Unkept,
}

/// Like [`run`], taking from `memo` (the inventory's, see [`memo`]) what
/// it remembers: the settled findings when it has them (the edge hands in
/// only those found against this run's lock), else the per-tool findings
/// of the pure detectors. Returns the findings, and, unless
/// [`Learn::Forget`] (no memo is kept), what to store when the memo
/// changed (it names some of those findings: [`known::Learned::view`]).
pub fn run_with(
    cx: &Context<'_>,
    memo: Option<known::Memo>,
    learn: Learn,
    workers: &dyn Workers,
) -> (Vec<Finding>, Option<known::Learned>) {
    let with_lock = learn == Learn::InventoryAndLock;
    let learn = learn != Learn::Forget;
    let (remembered, settled, passes_known, earlier) = match memo {
        Some(m) => (Some(m.servers), m.settled, m.passes, m.earlier),
        None => (None, None, None, false),
    };
    let settled = settled.filter(|_| !earlier);
    let detectors = all();
    // The passes on names found against this lock, for these names.
    let passes_known = passes_known.filter(|found| {
        let on_names = detectors
            .iter()
            .filter(|d| d.depends(Level::Inventory) == Depends::InventoryAndLock);
        settled.is_none() && found.len() == on_names.count()
    });
    let servers: Vec<&crate::inventory::Server> = cx.inventory.servers.values().collect();
    // With the settled findings in hand the per-tool part is not needed
    // (nor read: see `crate::cache::findings::load`).
    let remembered = remembered.filter(|m| settled.is_none() && m.len() == servers.len());
    let is_settled = settled.is_some();
    // Per-tool work is independent: cut the servers into contiguous runs
    // of about equal tool counts, several per core so that a core done
    // early takes the next, and join the findings in server order, so the
    // result is the one a single thread gives.
    let runs = (workers.cores() * RUNS_PER_CORE).min(servers.len().max(1));
    let total: usize = servers.iter().map(|s| s.tools.len() + 1).sum();
    let mut chunks: Vec<std::ops::Range<usize>> = Vec::with_capacity(runs);
    let (mut start, mut weight) = (0, 0);
    for (i, s) in servers.iter().enumerate() {
        weight += s.tools.len() + 1;
        if weight * runs >= total * (chunks.len() + 1) && chunks.len() + 1 < runs {
            chunks.push(start..i + 1);
            start = i + 1;
        }
    }
    chunks.push(start..servers.len());
    let detectors = &detectors;
    let servers = &servers;
    let known = remembered.as_ref();
    // Whole-inventory passes (shadow's and squat's name indexes) are
    // independent of the per-server runs and of each other: they go into
    // the same queue, first, as each is long; their findings join after
    // the per-server ones, in detector order.
    // Moved into the passes they serve: the run's findings are their
    // only copy (the memo stored names them there).
    let mut known_passes = passes_known.into_iter().flatten();
    let passes = detectors
        .iter()
        .map(|d| (d.depends(Level::Inventory), d))
        .filter(|(depends, _)| match depends {
            Depends::Nothing => false,
            Depends::Anything => true,
            _ => !is_settled,
        })
        .map(|(depends, d)| -> Job<'_> {
            let known = match depends {
                Depends::InventoryAndLock => known_passes.next(),
                _ => None,
            };
            Box::new(move || {
                let found = match known {
                    Some(found) => found,
                    None => {
                        let mut found = Vec::new();
                        d.inventory(cx, &mut found);
                        found
                    }
                };
                Done::Pass(depends, found)
            })
        })
        .collect::<Vec<_>>();
    let chunks = chunks.into_iter().map(|range| -> Job<'_> {
        Box::new(move || {
            let known = known.map(|m| &m[range.clone()]);
            let (found, learned) = per_server(
                cx,
                detectors,
                &servers[range],
                known,
                earlier,
                is_settled,
                learn,
            );
            Done::Servers(found, learned)
        })
    });
    let mut found = Found::default();
    let mut fresh = known::Memo::default();
    let mut passes_found = Vec::new();
    for done in crate::work::all(workers, passes.into_iter().chain(chunks).collect()) {
        match done {
            Done::Servers(f, learned) => {
                found.settled.extend(f.settled);
                found.live.extend(f.live);
                fresh.servers.extend(learned);
            }
            Done::Pass(depends, f) => passes_found.push((depends, f)),
        }
    }
    // Where each pass on names put its findings among the settled ones.
    let mut on_names = Vec::new();
    for (depends, f) in passes_found {
        match depends {
            Depends::Anything => found.live.extend(f),
            _ => {
                let start = found.settled.len();
                found.settled.extend(f);
                if depends == Depends::InventoryAndLock {
                    on_names.push(start..found.settled.len());
                }
            }
        }
    }
    // The memo keeps the passes' findings as found, and names them among
    // the run's after the lock moved their severities: it can when the
    // lock moved none (they are about names, not text; else they are not
    // kept, and found again).
    let as_found = on_names
        .iter()
        .flat_map(|r| &found.settled[r.clone()])
        .all(|f| !TEXT_CLASSES.contains(&f.class));
    for f in found.live.iter_mut().chain(&mut found.settled) {
        baseline(cx, f);
    }
    if let Some(mut out) = settled {
        out.extend(found.live);
        return (out, None);
    }
    // Nothing new to remember of this inventory's own memo without a lock.
    let learned = match remembered {
        _ if !learn => None,
        Some(_) if !earlier && !with_lock => None,
        remembered => Some(known::Learned {
            // This inventory's own memo, or what was learned and carried.
            servers: match remembered {
                Some(own) if !earlier => own,
                _ => fresh.servers,
            },
            settled: with_lock.then_some(0..found.settled.len()),
            passes: (with_lock && as_found).then_some(on_names),
        }),
    };
    let mut out = found.settled;
    out.extend(found.live);
    (out, learned)
}

/// What a run says it learned ([`known::Learned`]), for the edge to keep:
/// by what the edge can keep it under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learn {
    /// What depends on the inventory alone: a memo is kept for this
    /// inventory, but no key names the lock.
    Inventory,
    /// That, and what depends on the inventory and the lock: a key names
    /// the lock too, which the edge keeps beside it.
    InventoryAndLock,
    /// Nothing: no memo is kept.
    Forget,
}

/// Runs of servers per core (see [`run_with`]): enough that the cores
/// finish together, few enough that a run is long against taking it.
const RUNS_PER_CORE: usize = 8;

/// A piece of a detector run, for [`crate::work::all`].
type Job<'a> = Box<dyn FnOnce() -> Done + Send + 'a>;

/// What a [`Job`] found.
enum Done {
    /// A run of servers: findings, and what to remember of each server.
    Servers(Found, Vec<known::Server>),
    /// A whole-inventory pass, with what its findings depend on.
    Pass(Depends, Vec<Finding>),
}

/// The per-server and per-tool findings of `servers`, in order, with
/// what to remember of each server and tool (nothing when `settled` says
/// that only what depends on more is wanted, or when `memo` is this
/// inventory's own, or when nothing is to be `learn`ed). `memo` is what is
/// remembered of them: of this inventory, or of an `earlier` one with the
/// same names, whose tools serve only where the text is the same.
fn per_server<'m>(
    cx: &Context<'_>,
    detectors: &[Box<dyn Detector>],
    servers: &[&crate::inventory::Server],
    memo: Option<&'m [known::Server]>,
    earlier: bool,
    settled: bool,
    learn: bool,
) -> (Found, Vec<known::Server>) {
    let mut found = Found::default();
    let mut learned = Vec::new();
    let known = |r: Option<&'m known::Remembered>| match (settled, r) {
        (true, _) => Known::Settled,
        (false, Some(r)) => Known::Remembered(r, earlier),
        (false, None) if learn => Known::Nothing,
        (false, None) => Known::Unkept,
    };
    for (i, server) in servers.iter().enumerate() {
        let remembered = memo.map(|m| &m[i]);
        let view = ServerView::of(server);
        let own = subject(
            detectors,
            Level::Server,
            // An earlier inventory's server may have had other fields.
            known(remembered.filter(|_| !earlier).map(|r| &r.server)),
            &mut found,
            |each| each(&|d, found| d.server(cx, &view, found)),
        );
        // What is remembered of the server is remembered of each tool.
        let mut tools = Vec::with_capacity(match own {
            Some(_) => server.tools.len(),
            None => 0,
        });
        let mut read = false;
        // With a memo, the tools read are the few it does not serve: each
        // apart from the file's mapping. Without, all are, in order, and
        // given back below.
        let apart = remembered.is_some();
        for (j, (name, tool)) in server.tools.iter().enumerate() {
            // An earlier inventory's memo serves a tool whose text it names.
            let text = tool.text;
            let remembered = remembered
                .map(|r| &r.tools[j])
                .filter(|r| !earlier || (text.is_some() && r.text == text));
            let r = subject(
                detectors,
                Level::Tool,
                known(remembered),
                &mut found,
                |each| {
                    read = true;
                    tool.with_tree(apart, |raw| {
                        let view = ToolView {
                            server: &server.name,
                            tool: name,
                            raw,
                        };
                        each(&|d, found| d.tool(cx, &view, found));
                    });
                },
            );
            tools.extend(r.map(|r| known::Remembered { text, ..r }));
        }
        if let Some(own) = own {
            learned.push(known::Server { server: own, tools });
        }
        if read {
            // Its tools' text is not needed again (a system call: not
            // made for a server whose tools were all remembered; here, not
            // at the edge: see the module comment).
            server.release();
        }
    }
    (found, learned)
}

/// Runs the detectors on one subject (a server's own fields, or a tool)
/// into `found`, taking from `known` what is in hand of it. `read` makes
/// what the detectors read (a tool's tree, which borrows from the tool's
/// text), only when some detector has to run, and calls what it is given
/// with a function that runs one detector on it. Returns what to remember of it: `None` when the settled findings
/// are in hand, or when it is remembered with this inventory already.
fn subject(
    detectors: &[Box<dyn Detector>],
    level: Level,
    known: Known<'_>,
    found: &mut Found,
    read: impl FnOnce(&mut dyn FnMut(&dyn Fn(&dyn Detector, &mut Vec<Finding>))),
) -> Option<known::Remembered> {
    let must = |d: &dyn Detector| match (d.depends(level), known) {
        (Depends::Nothing, _) => false,
        (Depends::Anything, _) | (_, Known::Nothing | Known::Unkept) => true,
        (_, Known::Settled) => false,
        (Depends::InventoryToReport, Known::Remembered(k, _)) => !k.quiet,
        (Depends::Inventory, Known::Remembered(..)) => false,
        (Depends::InventoryAndLock, Known::Remembered(..)) => true,
    };
    if let Known::Remembered(k, _) = known {
        found.settled.extend(k.pure.iter().cloned());
    }
    let mut r = known::Remembered {
        pure: Vec::new(),
        quiet: true,
        text: None,
    };
    if detectors.iter().any(|d| must(d.as_ref())) {
        read(&mut |run| {
            for d in detectors.iter().filter(|d| must(d.as_ref())) {
                match d.depends(level) {
                    Depends::Inventory => run(d.as_ref(), &mut r.pure),
                    Depends::Anything => run(d.as_ref(), &mut found.live),
                    depends => {
                        let before = found.settled.len();
                        run(d.as_ref(), &mut found.settled);
                        if depends == Depends::InventoryToReport {
                            r.quiet &= found.settled.len() == before;
                        }
                    }
                }
            }
        });
    }
    match known {
        Known::Settled => None,
        Known::Remembered(k, carried) => carried.then(|| k.clone()),
        Known::Nothing => {
            found.settled.extend(r.pure.iter().cloned());
            Some(r)
        }
        Known::Unkept => {
            found.settled.append(&mut r.pure);
            None
        }
    }
}

/// Whether each tool of the inventory, in its order (servers by name,
/// then tools by name), is pinned in the lock. A server's tools and its
/// lock entries are both sorted by name, so they are walked side by side
/// rather than each tool looked up in the lock (shadow's and squat's
/// passes each asked 100,000 times at 2000x50: docs/performance.md,
/// "Issue 26: one walk per tool").
fn pinned_tools(cx: &Context<'_>) -> Vec<bool> {
    let mut pinned = Vec::new();
    for s in cx.inventory.servers.values() {
        let entries = cx.lock.servers.get(&s.name).map(|l| &l.tools);
        pinned.extend(
            along(s.tools.keys(), entries).map(|e| e.is_some_and(|e| e.state == State::Pinned)),
        );
    }
    pinned
}

/// For each of `names` (ascending), its value in `map`, if any: one walk
/// of both.
fn along<'m, 'n, V, I: Iterator<Item = &'n String>>(
    names: I,
    map: Option<&'m std::collections::BTreeMap<String, V>>,
) -> impl Iterator<Item = Option<&'m V>> + use<'m, 'n, V, I> {
    let mut entries = map.map(|m| m.iter().peekable());
    names.map(move |name| {
        let entries = entries.as_mut()?;
        while entries.next_if(|(k, _)| *k < name).is_some() {}
        entries.next_if(|(k, _)| *k == name).map(|(_, v)| v)
    })
}

/// Raises the drift of a pinned field to critical when the changed text is
/// itself critically poisoned (see `baseline`): the approved descriptor
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
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use super::testing::each_tool;
    use super::*;
    use crate::json::Value;

    /// Every inventory of the corpus (attacks and real tools) and the
    /// demo's drifted one (risky launches), as read.
    fn inventories() -> Vec<(std::path::PathBuf, Inventory)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let opts = crate::inventory::ReadOptions {
            max_size: 1 << 30,
            ..Default::default()
        };
        let mut out = Vec::new();
        for dir in [
            "../shared/corpus/attacks",
            "../shared/corpus/real",
            "samples/inventory-drifted",
        ] {
            for e in std::fs::read_dir(root.join(dir)).expect("the corpus and samples") {
                let path = e.expect("an entry").path();
                if path.extension().is_none_or(|x| x != "json") {
                    continue;
                }
                let bytes = std::fs::read(&path).expect("reads");
                if let Ok(inv) =
                    crate::inventory::read_in_memory(vec![(path.clone(), bytes)], &opts)
                {
                    out.push((path, inv));
                }
            }
        }
        assert!(out.len() > 10, "the corpus is there");
        out
    }

    /// A lock pinning everything `inventory` shows, as it shows it.
    fn approving(inventory: &Inventory) -> Lock {
        let pinned = |descriptor: &crate::descriptor::Descriptor| crate::lock::Entry {
            state: State::Pinned,
            descriptor: descriptor.clone(),
            first_seen: "2026-01-01T00:00:00Z".into(),
            approval: None,
            lazy: crate::descriptor::Lazy(None),
        };
        let mut lock = Lock::default();
        for s in inventory.servers.values() {
            let ls = lock.servers.entry(s.name.clone()).or_default();
            ls.server = Some(pinned(&s.descriptor));
            for (name, t) in &s.tools {
                ls.tools.insert(name.clone(), pinned(&t.descriptor));
            }
        }
        lock
    }

    /// A client config giving every server of `inventory` a risky launch.
    fn risky_configs(inventory: &Inventory) -> Vec<crate::config::ClientServer> {
        let mut servers = crate::json::Object::new();
        for name in inventory.servers.keys().chain([&"other".to_string()]) {
            let entry = crate::json::parse(
                br#"{"command": "npx", "args": ["-y", "pkg"], "env": {"API_KEY": "sk-live-0123456789abcdef0123"}}"#,
            )
            .expect("parses")
            .0;
            servers.insert(name.clone(), entry);
        }
        let mut top = crate::json::Object::new();
        top.insert("mcpServers".into(), Value::Object(servers));
        let text = crate::canon::jcs(&Value::Object(top));
        let path = std::path::Path::new(".mcp.json");
        let configs = crate::config::parse(path, path, &text, false).expect("a config");
        assert!(!configs.is_empty());
        configs
    }

    /// What `d` finds at `level`, per subject (one for the inventory).
    fn found_at(d: &dyn Detector, level: Level, cx: &Context<'_>) -> Vec<Vec<Finding>> {
        let mut per = Vec::new();
        for s in cx.inventory.servers.values() {
            match level {
                Level::Server => {
                    let mut found = Vec::new();
                    d.server(cx, &ServerView::of(s), &mut found);
                    per.push(found);
                }
                Level::Tool => each_tool(s, |view| {
                    let mut found = Vec::new();
                    d.tool(cx, view, &mut found);
                    per.push(found);
                }),
                Level::Inventory => {}
            }
        }
        if level == Level::Inventory {
            let mut found = Vec::new();
            d.inventory(cx, &mut found);
            per.push(found);
        }
        per
    }

    /// What a detector says its findings depend on ([`Detector::depends`])
    /// is all that moves them, since [`memo`] remembers them by it: on
    /// every file of the corpus and the demo's inventory, each against no
    /// lock and a lock approving all of it, with no client config and a
    /// risky one, a detector finds nothing where it says `Nothing`; the
    /// same everywhere where it says `Inventory`; the same with either
    /// config, and for the same subjects, where it says
    /// `InventoryToReport`; the same with either config where it says
    /// `InventoryAndLock`.
    #[test]
    fn a_detector_depends_on_no_more_than_it_says() {
        let mut checked = 0;
        for (path, inventory) in inventories() {
            let (empty, approved) = (Lock::default(), approving(&inventory));
            let configs = risky_configs(&inventory);
            let worlds = [
                (&empty, &[][..]),
                (&empty, &configs[..]),
                (&approved, &[][..]),
                (&approved, &configs[..]),
            ];
            for (n, name) in all().iter().map(|d| d.name()).enumerate() {
                for level in [Level::Server, Level::Tool, Level::Inventory] {
                    let found: Vec<Vec<Vec<Finding>>> = worlds
                        .iter()
                        .map(|&(lock, configs)| {
                            let cx = Context {
                                inventory: &inventory,
                                lock,
                                configs,
                            };
                            found_at(all()[n].as_ref(), level, &cx)
                        })
                        .collect();
                    let at = format!("{name} at {level:?} in {}", path.display());
                    let spoke = |f: &Vec<Vec<Finding>>| -> Vec<bool> {
                        f.iter().map(|s| !s.is_empty()).collect()
                    };
                    match all()[n].depends(level) {
                        Depends::Nothing => {
                            assert!(found.iter().flatten().all(Vec::is_empty), "{at}");
                        }
                        Depends::Inventory => {
                            assert!(found.iter().all(|f| *f == found[0]), "{at}");
                        }
                        Depends::InventoryToReport => {
                            assert!(found.iter().all(|f| spoke(f) == spoke(&found[0])), "{at}");
                            assert_eq!(found[0], found[1], "{at}");
                            assert_eq!(found[2], found[3], "{at}");
                        }
                        Depends::InventoryAndLock => {
                            assert_eq!(found[0], found[1], "{at}");
                            assert_eq!(found[2], found[3], "{at}");
                        }
                        Depends::Anything => {}
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    /// What [`known::load_earlier`] relies on: a tool's findings at
    /// [`Level::Tool`] are a function of its text and the inventory's
    /// names, and the passes that depend on the inventory and the lock
    /// read only its names. On every file of the corpus and the demo's
    /// inventory, the first stay the same when every server's own fields
    /// and launch are emptied, and when every other tool is cut down to
    /// its name; the passes, when all of that is done at once, against no
    /// lock and a lock approving the inventory.
    #[test]
    fn a_tool_is_read_against_its_text_and_the_inventorys_names_only() {
        let lock = Lock::default();
        let tools_found = |inventory: &Inventory| -> Vec<Vec<Vec<Finding>>> {
            let cx = Context {
                inventory,
                lock: &lock,
                configs: &[],
            };
            all()
                .iter()
                .filter(|d| d.depends(Level::Tool) != Depends::Nothing)
                .map(|d| found_at(d.as_ref(), Level::Tool, &cx))
                .collect()
        };
        let mut spoke = 0;
        for (path, inventory) in inventories() {
            let found = tools_found(&inventory);
            let mut bare = inventory.clone();
            for s in bare.servers.values_mut() {
                s.descriptor.fields = crate::json::Object::new();
                s.launch = crate::json::Object::new();
            }
            assert_eq!(tools_found(&bare), found, "{}", path.display());
            let mut names = bare.clone();
            for s in names.servers.values_mut() {
                for (name, t) in s.tools.iter_mut() {
                    let mut fields = crate::json::Object::new();
                    fields.insert("name".into(), Value::String(name.clone()));
                    // Other digests too: the lock no longer matches.
                    t.descriptor = crate::descriptor::Descriptor::new(fields).0;
                }
            }
            let approved = approving(&inventory);
            for lock in [&lock, &approved] {
                let passes = |inventory: &Inventory| -> Vec<Vec<Vec<Finding>>> {
                    let cx = Context {
                        inventory,
                        lock,
                        configs: &[],
                    };
                    all()
                        .iter()
                        .filter(|d| d.depends(Level::Inventory) == Depends::InventoryAndLock)
                        .map(|d| found_at(d.as_ref(), Level::Inventory, &cx))
                        .collect()
                };
                let on_names = passes(&inventory);
                assert_eq!(passes(&names), on_names, "{}", path.display());
                spoke += on_names.iter().flatten().filter(|f| !f.is_empty()).count();
            }
            for parity in 0..2 {
                let mut cut = inventory.clone();
                let mut n = 0;
                for s in cut.servers.values_mut() {
                    for (name, t) in s.tools.iter_mut() {
                        if n % 2 == parity {
                            let mut fields = crate::json::Object::new();
                            fields.insert("name".into(), Value::String(name.clone()));
                            t.descriptor.fields = fields;
                        }
                        n += 1;
                    }
                }
                let other = tools_found(&cut);
                for (d, (a, b)) in found.iter().zip(&other).enumerate() {
                    for (i, (a, b)) in a.iter().zip(b).enumerate() {
                        if i % 2 != parity {
                            assert_eq!(a, b, "detector {d}, tool {i} of {}", path.display());
                            spoke += usize::from(!a.is_empty());
                        }
                    }
                }
            }
        }
        assert!(spoke > 20, "the corpus has findings to keep ({spoke})");
    }

    /// Read with each tool's text kept and named (as `scan` reads), from
    /// the corpus.
    fn with_texts(file: &str) -> Inventory {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/corpus")
            .join(file);
        // With an index kept, as `scan` reads in a repository.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let opts = crate::inventory::ReadOptions {
            max_size: 1 << 30,
            digests_only: true,
            ..Default::default()
        };
        let bytes = std::fs::read(&path).expect("the corpus");
        crate::cache::inventory::read_files(vec![(path, bytes)], &opts, Some(dir.path()))
            .expect("reads")
            .0
    }

    /// An earlier inventory's memo serves a tool whose text it names, and
    /// neither a tool whose text changed nor a server's own fields; what a
    /// run learns from it is remembered as this inventory's.
    #[test]
    fn an_earlier_memo_serves_a_tool_only_where_its_text_is_the_same() {
        let mut inventory = with_texts("real/server-memory@0.6.2.json");
        inventory
            .servers
            .append(&mut with_texts("attacks/invariant-direct-poisoning.json").servers);
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs: &[],
        };
        // Each tool's text's name, in order.
        let texts = |servers: &[known::Server]| -> Vec<Option<crate::canon::Digest>> {
            servers
                .iter()
                .flat_map(|s| s.tools.iter().map(|t| t.text))
                .collect()
        };
        let (cold, learned) = run_with(&cx, None, Learn::Inventory, &crate::work::InOrder);
        assert_eq!(
            run(&cx, &crate::work::InOrder),
            cold,
            "the same, with nothing learned"
        );
        assert!(run_with(&cx, None, Learn::Forget, &crate::work::InOrder)
            .1
            .is_none());
        let learned = learned.expect("a first run remembers");
        let named = texts(&learned.servers);
        assert!(
            named.iter().all(Option::is_some),
            "every tool's text is named"
        );
        // Marked findings show where the memo served.
        let mark = |tool: Option<&str>| Finding {
            message: format!("remembered {tool:?}"),
            ..finding(Class::Poison, Severity::Low, tool.unwrap_or(""), "/x")
        };
        let mut earlier = learned.memo(&cold);
        earlier.earlier = true;
        for s in &mut earlier.servers {
            s.server.pure.push(mark(None));
            for t in &mut s.tools {
                t.pure = vec![mark(Some("tool"))];
            }
        }
        // The attack's poisoned tool, as if its text had changed.
        let changed = inventory
            .servers
            .keys()
            .position(|name| name == "invariant-direct-poisoning")
            .expect("the attack's server");
        earlier.servers[changed].tools[0].text = Some(crate::canon::Digest::of(b"other"));
        let (found, relearned) =
            run_with(&cx, Some(earlier), Learn::Inventory, &crate::work::InOrder);
        let marks = found
            .iter()
            .filter(|f| f.message.starts_with("remembered"))
            .count();
        assert_eq!(marks, named.len() - 1, "every tool but the changed one");
        assert!(
            !found.iter().any(|f| f.message == "remembered None"),
            "no server"
        );
        let poison = |fs: &[Finding]| -> Vec<Finding> {
            let server = inventory.servers.keys().nth(changed).expect("a server");
            fs.iter()
                .filter(|f| f.server == *server && !f.message.starts_with("remembered"))
                .cloned()
                .collect()
        };
        assert!(!poison(&cold).is_empty(), "the attack is found");
        assert_eq!(
            poison(&found),
            poison(&cold),
            "the changed tool is read anew"
        );
        let relearned = relearned.expect("remembered as this inventory's");
        assert_eq!(texts(&relearned.servers), named);
    }

    /// The passes on names that an earlier inventory's memo found against
    /// the lock serve (the edge hands them in for that lock only:
    /// `crate::cache::findings`), and are remembered only where a key
    /// names the lock.
    #[test]
    fn an_earlier_memos_passes_serve_against_its_lock() {
        let mut inventory = with_texts("attacks/invariant-shadowing.json");
        // A shadowed name and a squatted one.
        let names: &[(&str, &[&str])] = &[
            ("mail-a", &["send_email"]),
            ("mail-b", &["send_email"]),
            ("mail-c", &["send_emall"]),
        ];
        inventory
            .servers
            .append(&mut super::testing::inventory(names).servers);
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs: &[],
        };
        let (found, learned) = run_with(&cx, None, Learn::InventoryAndLock, &crate::work::InOrder);
        let mut earlier = learned.expect("a first run remembers").memo(&found);
        // Without client configs every finding is settled.
        let settled = earlier.settled.as_ref().expect("the settled findings");
        assert_eq!(*settled, found);
        let passes = earlier.passes.as_mut().expect("the passes on names");
        let on_names: Vec<Vec<Finding>> = all()
            .iter()
            .filter(|d| d.depends(Level::Inventory) == Depends::InventoryAndLock)
            .map(|d| {
                let mut found = Vec::new();
                d.inventory(&cx, &mut found);
                found
            })
            .collect();
        assert_eq!(on_names.len(), 2, "shadow's and squat's");
        assert!(on_names.iter().all(|f| !f.is_empty()), "{on_names:?}");
        assert_eq!(*passes, on_names, "as the passes found them");
        for found in passes.iter_mut() {
            found.push(Finding {
                message: "remembered".into(),
                ..finding(Class::Shadow, Severity::Low, "t", "/name")
            });
        }
        earlier.settled = None;
        earlier.earlier = true;
        let (found, learned) = run_with(
            &cx,
            Some(earlier),
            Learn::InventoryAndLock,
            &crate::work::InOrder,
        );
        let marks = found.iter().filter(|f| f.message == "remembered").count();
        assert_eq!(marks, 2, "each pass's");
        assert!(learned.expect("carried").passes.is_some());
        // With no key for the lock, nothing found against it is kept.
        let (_, learned) = run_with(&cx, None, Learn::Inventory, &crate::work::InOrder);
        let learned = learned.expect("a first run remembers");
        assert_eq!((learned.settled, learned.passes), (None, None));
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
