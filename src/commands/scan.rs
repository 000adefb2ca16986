//! `git kams scan` (every finding, and their counts as metrics) and
//! `git kams diff` (field-level drift only).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use super::{emit, Env, Selection, Status, Tools};
use crate::cache::lock::EntryFields;
use crate::cli::{MetricsArgs, ScanArgs, SelectArgs};
use crate::compare;
use crate::detect;
use crate::finding::{Class, Finding, Severity};
use crate::input::Input;
use crate::json::push_pointer_token;
use crate::lock::Lock;
use crate::metrics::{self, export, otlp};
use crate::report::sarif::{Place, Spot};
use crate::report::{self, Format};

/// What a scan found, and what it looked at.
pub struct Scan {
    /// Every finding, sorted.
    pub findings: Vec<Finding>,
    /// The lock the findings were computed against (read digests only; the
    /// metrics take each subject's state from it).
    pub lock: Lock,
    /// Every selected server of the inventory or the lock, sorted.
    pub servers: Vec<String>,
    /// Where the inputs are written, for reports that point at lines.
    pub sources: Sources,
    /// The inventory the findings were computed from (digests only, and
    /// the drifted tools' descriptors).
    pub inventory: crate::inventory::Inventory,
}

/// Where a scan's inputs are written, kept from the run so that a report
/// can point each finding at a file and line (SARIF) without reading the
/// inventory again.
#[derive(Default)]
pub struct Sources {
    /// Per server: its file as given, its object's pointer there, and each
    /// tool's pointer.
    servers: BTreeMap<String, (PathBuf, String, BTreeMap<String, String>)>,
    /// Client-config entries: the evidence line their findings start with
    /// (see [`detect::transport::config_place`]), the server's name, the
    /// file to read, and the entry's pointer.
    configs: Vec<(String, String, PathBuf, String)>,
    /// The lock file, when the lock was read from it (not with `--at`).
    lock: Option<PathBuf>,
    /// The lock's entries: (server, tool), `None` for the server entry.
    locked: BTreeSet<(String, Option<String>)>,
}

/// The number of subjects (servers and tools) from which a scan loads its
/// memo beside comparing; drifted entries are rebuilt side by side from a
/// 64th of it. Below it the other core saves nothing: a lower threshold
/// gave the same times in every state (docs/performance.md, "Twelfth
/// pass", a11e5c6).
const SIDE_BY_SIDE_FROM: usize = 16_384;

/// Every finding of the inventory against the lock, sorted, and where the
/// inputs are written.
pub fn findings(
    env: &Env,
    select: &SelectArgs,
    captured: Option<Vec<(PathBuf, Vec<u8>)>>,
    err: &mut dyn Write,
) -> Result<Scan> {
    let keys = &select.keys;
    let (mut inventory, mut lock, index_keys) = {
        let mut step = env.step("reading the inventory and the lock", err);
        env.inventory_and_lock(select, captured, EntryFields::Materialised, step.err())?
    };
    let selection = Selection::new(keys);
    let pairs = compare::pairs(&inventory, &lock);
    selection.check(&pairs)?;
    let blind: Vec<String> = compare::servers_without_fields(&inventory, &lock)
        .into_iter()
        .filter(|s| selection.matches(s, None))
        .map(crate::text::escape_display)
        .collect();
    if !blind.is_empty() {
        let _ = writeln!(
            err,
            "note: the input shows no server-level fields for {} (a bare tools/list result carries none): their instructions, serverInfo, prompts and resources are not compared",
            blind.join(", ")
        );
    }
    // The pairs come by server: one name per server, not per tool.
    let mut servers: Vec<String> = Vec::new();
    for p in pairs.iter().filter(|p| selection.matches(p.server, p.tool)) {
        if servers.last().map(String::as_str) != Some(p.server) {
            servers.push(p.server.to_string());
        }
    }
    // A large inventory's work is shared with the other core below.
    let large = pairs.len() >= SIDE_BY_SIDE_FROM;
    // Both were read keeping digests only; rebuild the descriptors of the
    // entries that differ.
    let drifted = compare::drifted(&pairs);
    drop(pairs);
    let (_, materialized) = crate::threads::side_by_side_if(
        drifted.len() >= SIDE_BY_SIDE_FROM / 64,
        || inventory.materialize(&drifted),
        || lock.materialize(&drifted),
    );
    materialized
        .map_err(|e| crate::files::lock::lock_error(&env.lock_path().unwrap_or_default(), e))?;
    drop(drifted);
    // What the detectors found in this inventory before, if it was.
    let memo_at = env.index_dir()?.zip(index_keys.inventory);
    let lock_key = index_keys.lock.map(|k| k.name());
    // Else an earlier inventory's, for the tools that did not change.
    let memo = || {
        memo_at.as_ref().and_then(|(dir, key)| {
            let lock = lock_key.as_deref();
            crate::cache::findings::load(dir, key, &inventory, lock)
                .or_else(|| crate::cache::findings::load_earlier(dir, key, &inventory, lock))
        })
    };
    let compared = || {
        let _step = env.step("comparing with the lock", err);
        compare::compare(&inventory, &lock)
    };
    // Both read the inventory only.
    let (memo, mut all) = crate::threads::side_by_side_if(large, memo, compared);
    let configs = env.client_configs()?;
    {
        let _step = env.step("running the detectors", err);
        let cx = detect::Context {
            inventory: &inventory,
            lock: &lock,
            configs: &configs,
        };
        // What was found against the lock is kept under the lock's key.
        let learn = match (&memo_at, &lock_key) {
            (None, _) => detect::Learn::Forget,
            (Some(_), None) => detect::Learn::Inventory,
            (Some(_), Some(_)) => detect::Learn::InventoryAndLock,
        };
        let workers = crate::threads::Threads::of_machine();
        let (found, learned) = detect::run_with(&cx, memo, learn, &workers);
        if let (Some((dir, key)), Some(learned)) = (memo_at, learned) {
            // Saves time only: an unwritable repository is no reason to fail.
            let view = learned.view(&found);
            let lock = lock_key.as_deref();
            let _ = crate::cache::findings::store(&dir, &key, &inventory, lock, &view);
        }
        all.extend(found);
    }
    detect::escalate_poisoned_drift(&mut all);
    all.retain(|f| selection.matches(&f.server, f.tool.as_deref()));
    Finding::sort(&mut all);
    // Places are looked up for findings only: keep those of their subjects
    // (100,000 tools' names and pointers were copied for a few findings).
    let about: BTreeSet<(&str, Option<&str>)> = all
        .iter()
        .map(|f| (f.server.as_str(), f.tool.as_deref()))
        .collect();
    // One look-up per subject with findings (there are 100,000 tools).
    let mut places: BTreeMap<String, (PathBuf, String, BTreeMap<String, String>)> = BTreeMap::new();
    let mut locked = BTreeSet::new();
    for &(name, tool) in &about {
        if let Some(s) = inventory.servers.get(name) {
            let (_, _, tools) = places
                .entry(name.to_string())
                .or_insert_with(|| (s.source.clone(), s.pointer.clone(), BTreeMap::new()));
            if let Some((t, seen)) = tool.and_then(|t| s.tools.get_key_value(t)) {
                tools.insert(t.clone(), seen.pointer.clone());
            }
        }
        if lock.entry(name, tool).is_some() {
            locked.insert((name.to_string(), tool.map(str::to_string)));
        }
    }
    let sources = Sources {
        servers: places,
        configs: configs
            .iter()
            .map(|c| {
                (
                    detect::transport::config_place(c),
                    c.name.clone(),
                    config_file(env, &c.source),
                    c.pointer.clone(),
                )
            })
            .collect(),
        lock: match select.at {
            Some(_) => None,
            None => env.lock_path().ok(),
        },
        locked,
    };
    Ok(Scan {
        findings: all,
        lock,
        servers,
        sources,
        inventory,
    })
}

/// The file a client config was read from: the default ones are named
/// relative to the top of the work tree, `--config` files as given.
fn config_file(env: &Env, shown: &Path) -> PathBuf {
    let top = env
        .repo
        .workdir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let default = crate::config::DEFAULT_FILES
        .iter()
        .any(|d| Path::new(d) == shown);
    if default && top.join(shown).is_file() {
        top.join(shown)
    } else {
        shown.to_path_buf()
    }
}

/// `base` joined with the pointer `field` (relative to it).
fn join_pointer(base: &str, field: Option<&str>) -> String {
    format!("{base}{}", field.unwrap_or(""))
}

/// The pointer of a lock entry in the lock file.
fn lock_pointer(server: &str, tool: Option<&str>) -> String {
    let mut p = String::from("/servers/");
    push_pointer_token(&mut p, server);
    match tool {
        None => p.push_str("/server"),
        Some(t) => {
            p.push_str("/tools/");
            push_pointer_token(&mut p, t);
        }
    }
    p
}

/// Where each finding points (see [`report::sarif::Place`]): the value in
/// the inventory file (or the client config) it is about, else the lock
/// entry, else the config entry that launches its server; plus the lock
/// entry as a related place. Files are read once each; one that cannot be
/// read (a capture held in memory, an inventory from `--inventory-at`) is
/// not pointed at.
pub fn places(env: &Env, findings: &[Finding], sources: &Sources) -> Vec<Place> {
    let max = env
        .inventory_spec(Tools::Digests)
        .map_or(crate::inventory::DEFAULT_MAX_INPUT, |(_, o)| o.max_size);
    // Two passes: the first only asks which (file, pointer) each finding
    // could look up (answering "not found", every fallback is asked too),
    // so that each file is read and walked once for all of them; the
    // second builds the places from the answers.
    let mut asked: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    let mut ask = |path: &Path, pointer: &str| -> Option<Spot> {
        asked
            .entry(path.to_path_buf())
            .or_default()
            .push(pointer.to_string());
        None
    };
    for f in findings {
        place(f, sources, &mut ask);
    }
    let mut known: BTreeMap<(PathBuf, String), Option<Spot>> = BTreeMap::new();
    // Mapped, as the scan read them (a large lock is not held whole); VS
    // Code's JSONC configs are blanked into JSON first.
    let read = |path: &Path| -> Option<Input> {
        let input = Input::read(path, max).ok()?.strip_bom();
        if path.file_name().is_some_and(|n| n == "mcp.json") {
            return Some(Input::from(crate::config::as_json(path, &input)));
        }
        Some(input)
    };
    for (path, mut pointers) in asked {
        pointers.sort();
        pointers.dedup();
        let bytes = read(&path);
        let wanted: Vec<&str> = pointers.iter().map(String::as_str).collect();
        let found = match &bytes {
            Some(b) => crate::json::locate_all(b, &wanted),
            None => vec![None; wanted.len()],
        };
        for (pointer, at) in pointers.iter().zip(found) {
            let spot = at.map(|at| Spot {
                path: shown_from_top(env, &path),
                line: at.line,
                column: at.column,
            });
            known.insert((path.clone(), pointer.clone()), spot);
        }
    }
    let mut spot = |path: &Path, pointer: &str| -> Option<Spot> {
        known
            .get(&(path.to_path_buf(), pointer.to_string()))
            .cloned()
            .flatten()
    };
    findings
        .iter()
        .map(|f| place(f, sources, &mut spot))
        .collect()
}

/// Where finding `f` points, with `spot` finding a pointer in a file.
fn place(
    f: &Finding,
    sources: &Sources,
    spot: &mut dyn FnMut(&Path, &str) -> Option<Spot>,
) -> Place {
    let entry = (f.server.clone(), f.tool.clone());
    let locked = sources.locked.contains(&entry);
    let lock_ptr = lock_pointer(&f.server, f.tool.as_deref());
    let mut lock_spot = match (&sources.lock, locked) {
        (Some(path), true) => spot(path, &lock_ptr),
        _ => None,
    };
    let field = f.field.as_deref();
    let config = sources.configs.iter().find(|c| c.1 == f.server);
    let from_config = sources
        .configs
        .iter()
        .find(|c| f.tool.is_none() && f.evidence.first() == Some(&c.0));
    let in_inventory = sources
        .servers
        .get(&f.server)
        .and_then(|(src, base, tools)| {
            let at = match &f.tool {
                None if f.class != Class::Removed => base.clone(),
                None => return None,
                Some(t) => tools.get(t)?.clone(),
            };
            Some((src, join_pointer(&at, field)))
        });
    let (at, pointer) = if let Some(c) = from_config {
        let p = join_pointer(&c.3, field);
        (spot(&c.2, &p), Some(p))
    } else if let Some((src, p)) = in_inventory.and_then(|(src, p)| spot(src, &p).map(|s| (s, p))) {
        (Some(src), Some(p))
    } else if let Some(l) = lock_spot.take() {
        (Some(l), Some(lock_ptr))
    } else if let Some(c) = config {
        (spot(&c.2, &c.3), Some(c.3.clone()))
    } else {
        (None, None)
    };
    Place {
        at,
        pointer,
        lock: lock_spot,
    }
}

/// `path` relative to the top of the work tree, or absolute when it is
/// outside.
fn shown_from_top(env: &Env, path: &Path) -> PathBuf {
    env.repo.relative(path).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    })
}

/// Which command runs.
pub enum Mode<'a> {
    /// `scan`: every finding; metrics sent where configured.
    Scan(&'a MetricsArgs),
    /// `diff`: drift only; no metrics, which would undercount.
    Diff,
}

/// Runs `scan` or `diff`, the last thing the process does: what it read
/// is left for the system to take back at exit (see the end).
pub fn run(
    env: &Env,
    args: &ScanArgs,
    mode: Mode<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    let fail_on = env.fail_on(args.fail_on.as_deref())?;
    let (captured, failed) = if args.capture {
        let (files, failed) =
            super::capture::in_memory(env, &args.select.keys, &args.capture_opts, err)?;
        (Some(files), failed)
    } else {
        (None, Vec::new())
    };
    let mut scan = findings(env, &args.select, captured, err)?;
    // A server that could not be captured is not missing from the config:
    // its entries are not reported as removed.
    scan.findings.retain(|f| !failed.contains(&f.server));
    scan.servers.retain(|s| !failed.contains(s));
    if let Mode::Diff = mode {
        scan.findings.retain(|f| f.class == Class::Drift);
    }
    // Files of a work tree inventory only: a capture in memory or an
    // inventory from git is not what the folder holds.
    if !args.capture && args.select.inventory_at.is_none() {
        super::capture::note_stale(env, err)?;
    }
    let all = &scan.findings;
    // A server that could not be captured was not scanned: that is an
    // error, whatever the others show.
    let status = if !failed.is_empty() {
        2
    } else {
        exit_status(all, fail_on)
    };
    emit(out, |out| match env.global.format {
        Format::Text => {
            let lock = &scan.lock;
            let state =
                |s: &str, t: Option<&str>| lock.entry(s, t).map_or("new", |e| e.state.as_str());
            report::write_text(all, &state, env.colour, out)
        }
        Format::Json => report::write_json(all, fail_on, out),
        Format::Sarif => {
            let places = places(env, all, &scan.sources);
            let id = match mode {
                Mode::Diff => "diff",
                Mode::Scan(_) => "scan",
            };
            report::sarif::write(all, &places, &format!("git-kams/{id}/"), out)
        }
    })?;
    if let Mode::Scan(metrics) = mode {
        // After the report, so that a slow backend never holds it up; and a
        // warning, never a change of status: a scheduled scan must still
        // fail on its findings when the backend is down, and must not fail
        // because of the backend alone.
        if let Err(e) = export_metrics(metrics, &scan) {
            let _ = writeln!(err, "warning: metrics not exported: {e:#}");
        }
    }
    // The process exits next: giving every entry and tool back to the
    // allocator one by one cost a large scan time (docs/performance.md,
    // "Fourth pass", 599fc72); the system takes the whole heap back at once.
    std::mem::forget(scan);
    Ok(status)
}

/// Sends the scan's metrics when an endpoint is configured.
fn export_metrics(args: &MetricsArgs, scan: &Scan) -> Result<()> {
    let Some(config) = export::Config::resolve(args.otlp_endpoint.as_deref(), &|name| {
        std::env::var(name).ok()
    })?
    else {
        return Ok(());
    };
    let time = super::clock()?;
    let nanos = time
        .timestamp_nanos_opt()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| anyhow!("the time {time} cannot be sent as nanoseconds since 1970"))?;
    let metrics = metrics::metrics(&scan.findings, &scan.lock, &scan.servers);
    export::send(&config, otlp::encode(&config.resource, &metrics, nanos))
}

/// 1 when a finding is at or above `fail_on`, else 0.
pub fn exit_status(findings: &[Finding], fail_on: Option<Severity>) -> Status {
    match fail_on {
        Some(t) if findings.iter().any(|f| f.severity >= t) => 1,
        _ => 0,
    }
}
