//! `git kams scan` (every finding, and their counts as metrics) and
//! `git kams diff` (field-level drift only).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, Result};

use super::{emit, Env, Selection, Status};
use crate::cli::{MetricsArgs, ScanArgs, SelectArgs};
use crate::compare;
use crate::detect;
use crate::finding::{Class, Finding, Severity};
use crate::lock::Lock;
use crate::metrics::{self, export, otlp};
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
}

/// Every finding of the inventory against the lock, sorted.
pub fn findings(
    env: &Env,
    select: &SelectArgs,
    captured: Option<Vec<(PathBuf, Vec<u8>)>>,
    err: &mut dyn Write,
) -> Result<Scan> {
    let keys = &select.keys;
    let (mut inventory, mut lock) = {
        let mut step = env.step("reading the inventory and the lock", err);
        env.inventory_and_lock(select, captured, step.err())?
    };
    let selection = Selection::new(keys);
    let pairs = compare::pairs(&inventory, &lock);
    selection.check(&pairs)?;
    let mut servers: Vec<String> = pairs
        .iter()
        .filter(|p| selection.matches(p.server, p.tool))
        .map(|p| p.server.to_string())
        .collect();
    servers.dedup();
    // Both were read keeping digests only; rebuild the descriptors of the
    // entries that differ, the only ones whose fields are compared.
    let drifted: Vec<(String, Option<String>)> = pairs
        .into_iter()
        .filter(
            |p| matches!((p.entry, p.seen), (Some(e), Some(d)) if e.descriptor.digest != d.digest),
        )
        .map(|p| (p.server.to_string(), p.tool.map(str::to_string)))
        .collect();
    lock.materialize(&drifted)
        .map_err(|e| crate::lock::store::lock_error(&env.lock_path().unwrap_or_default(), e))?;
    let tools: Vec<(String, String)> = drifted
        .into_iter()
        .filter_map(|(s, t)| t.map(|t| (s, t)))
        .collect();
    inventory.materialize(&tools);
    let mut all = {
        let _step = env.step("comparing with the lock", err);
        compare::compare(&inventory, &lock)
    };
    let configs = env.client_configs()?;
    {
        let _step = env.step("running the detectors", err);
        all.extend(detect::run(&detect::Context {
            inventory: &inventory,
            lock: &lock,
            configs: &configs,
        }));
    }
    all.retain(|f| selection.matches(&f.server, f.tool.as_deref()));
    Finding::sort(&mut all);
    Ok(Scan {
        findings: all,
        lock,
        servers,
    })
}

/// Which command runs.
pub enum Mode<'a> {
    /// `scan`: every finding; metrics sent where configured.
    Scan(&'a MetricsArgs),
    /// `diff`: drift only; no metrics, which would undercount.
    Diff,
}

/// Runs `scan` or `diff`.
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
    let all = &scan.findings;
    // A server that could not be captured was not scanned: that is an
    // error, whatever the others show.
    let status = if !failed.is_empty() {
        2
    } else {
        exit_status(all, fail_on)
    };
    emit(out, |out| match env.global.format {
        Format::Text => report::write_text(all, env.colour, out),
        Format::Json => report::write_json(all, fail_on, out),
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
