//! `git kams scan` (every finding) and `git kams diff` (field-level drift
//! only).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use super::{emit, Env, Selection, Status};
use crate::cli::{ScanArgs, SelectArgs};
use crate::compare;
use crate::detect;
use crate::finding::{Class, Finding, Severity};
use crate::report::{self, Format};

/// Every finding of the inventory against the lock, sorted.
pub fn findings(
    env: &Env,
    select: &SelectArgs,
    captured: Option<Vec<(PathBuf, Vec<u8>)>>,
    err: &mut dyn Write,
) -> Result<Vec<Finding>> {
    let keys = &select.keys;
    let (mut inventory, mut lock) = {
        let mut step = env.step("reading the inventory and the lock", err);
        env.inventory_and_lock(select, captured, step.err())?
    };
    let selection = Selection::new(keys);
    let pairs = compare::pairs(&inventory, &lock);
    selection.check(&pairs)?;
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
    Ok(all)
}

/// Runs `scan` (or `diff` when `drift_only`).
pub fn run(
    env: &Env,
    args: &ScanArgs,
    drift_only: bool,
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
    let mut all = findings(env, &args.select, captured, err)?;
    // A server that could not be captured is not missing from the config:
    // its entries are not reported as removed.
    all.retain(|f| !failed.contains(&f.server));
    if drift_only {
        all.retain(|f| f.class == Class::Drift);
    }
    // A server that could not be captured was not scanned: that is an
    // error, whatever the others show.
    let status = if !failed.is_empty() {
        2
    } else {
        exit_status(&all, fail_on)
    };
    emit(out, |out| match env.global.format {
        Format::Text => report::write_text(&all, env.colour, out),
        Format::Json => report::write_json(&all, fail_on, out),
    })?;
    Ok(status)
}

/// 1 when a finding is at or above `fail_on`, else 0.
pub fn exit_status(findings: &[Finding], fail_on: Option<Severity>) -> Status {
    match fail_on {
        Some(t) if findings.iter().any(|f| f.severity >= t) => 1,
        _ => 0,
    }
}
