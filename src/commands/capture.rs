//! `git kams capture`: run (or connect to) the servers of the client
//! configs and write what each advertises into the inventory folder. Also
//! the capture half of `git kams scan --capture`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::{write_atomically, Env, Status, Tools};
use crate::capture::{self, Captured, Options};
use crate::cli::{CaptureArgs, CaptureOpts};
use crate::config::{self, ClientServer};
use crate::text::{escape_display, shown_path};

/// A capture file not written: the path it would have, and its bytes.
pub type InMemoryFile = (PathBuf, Vec<u8>);

/// Runs `capture`.
pub fn run(
    env: &Env,
    args: &CaptureArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Status> {
    if env.global.format != crate::report::Format::Text {
        bail!(
            "--format {}: capture reports in text only (its capture files are JSON); `git kams scan --capture` reports in JSON and SARIF",
            format!("{:?}", env.global.format).to_lowercase()
        );
    }
    let folder = out_folder(env, args.out.as_deref())?;
    let configured = env.client_configs()?;
    // An empty config (its last server removed) leaves nothing to capture
    // but may leave captures to prune.
    let prune_only =
        args.prune && args.servers.is_empty() && configured.is_empty() && configs_read(env);
    let servers = if prune_only {
        Vec::new()
    } else {
        select(configured.clone(), &args.servers)?
    };
    distinct_files(&servers)?;
    let results = capture_confirmed(env, &servers, &args.opts, err)?;
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", shown_path(&folder)))?;
    let (captured, mut failed) = report(&servers, results, err)?;
    for mut c in captured {
        // The file says which configs launched it, so that `pin` records
        // them with the launch it approves.
        c.file = capture::with_configured_in(&c.file, &config_files(&configured, &c.name));
        let path = capture::file_path(&folder, &c.name);
        let tools = format!("{} tool{}", c.tools, if c.tools == 1 { "" } else { "s" });
        // What the server advertises is what the file holds: the file is
        // left as it is (its capture time and mtime too), so that a
        // capture of unchanged servers leaves a clean work tree. A file
        // that cannot be read (or is much larger than the new one) is written.
        let old = crate::files::read_existing(&path, c.file.len() as u64 + 64)
            .ok()
            .flatten();
        if old.is_some_and(|old| capture::same_capture(&old, &c.file)) {
            remove_old_capture(&folder, &c.name, env)?;
            writeln!(
                out,
                "unchanged `{}`: {tools} in {}{}",
                escape_display(&c.name),
                shown_here(&path),
                configured_in(&configured, &c.name)
            )?;
            continue;
        }
        // One file that cannot be written costs its server, not the others.
        if let Err(e) = write_atomically(&path, &c.file) {
            writeln!(
                err,
                "error: capture of `{}` failed: {e:#}",
                escape_display(&c.name)
            )?;
            failed.push(c.name.clone());
            continue;
        }
        remove_old_capture(&folder, &c.name, env)?;
        writeln!(
            out,
            "captured `{}`: {tools} -> {}{}",
            escape_display(&c.name),
            shown_here(&path),
            configured_in(&configured, &c.name)
        )?;
    }
    for (path, server) in stale_captures(env, &folder, &configured)? {
        let server = escape_display(&server);
        if args.prune {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", shown_here(&path)))?;
            writeln!(
                out,
                "removed {}: no client config names `{server}`",
                shown_here(&path)
            )?;
        } else {
            writeln!(err, "{}", stale_note(&path, &server))?;
        }
    }
    if !failed.is_empty() {
        writeln!(
            err,
            "{} of {} server{} failed; the others were written",
            failed.len(),
            servers.len(),
            if servers.len() == 1 { "" } else { "s" }
        )?;
        return Ok(1);
    }
    Ok(0)
}

/// The client configs that name `server`, as a reviewer reads their
/// names, in the order they were read; they agree on its launch (capture
/// refuses configs that do not).
fn config_files(configured: &[ClientServer], server: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for c in configured.iter().filter(|c| c.name == server) {
        let shown = shown_path(&c.source);
        if !files.contains(&shown) {
            files.push(shown);
        }
    }
    files
}

/// ` (configured in A, B)`: [`config_files`] as capture says them.
fn configured_in(configured: &[ClientServer], server: &str) -> String {
    let files = config_files(configured, server);
    if files.is_empty() {
        String::new()
    } else {
        format!(" (configured in {})", files.join(", "))
    }
}

/// The note for a capture file no client config names any more.
fn stale_note(path: &Path, server: &str) -> String {
    format!(
        "note: {} is the capture of `{server}`, which no client config names any more; `git kams capture --prune` removes it",
        shown_here(path)
    )
}

/// `path` for a message: from the current folder when below it (as git
/// shows paths), else as it is; escaped.
fn shown_here(path: &Path) -> String {
    let here = std::env::current_dir().ok();
    let rel = here
        .as_deref()
        .and_then(|h| path.strip_prefix(h).ok())
        .filter(|r| !r.as_os_str().is_empty());
    shown_path(rel.unwrap_or(path))
}

/// Whether any client config was there to read: the work tree's
/// `.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json` or `.gemini/settings.json`, or a `--config`
/// file. Without one, nothing says which servers are still in use, and no
/// capture is judged stale.
fn configs_read(env: &Env) -> bool {
    let top = env
        .repo
        .workdir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    !env.global.config.is_empty()
        || config::DEFAULT_FILES
            .iter()
            .any(|rel| std::fs::symlink_metadata(top.join(rel)).is_ok())
}

/// The capture files in `folder` (path, server) of servers that none of
/// `configured` names, sorted; none when no client config was read. Only
/// files capture wrote are looked at ([`capture::written_for`]): regular
/// files directly in `folder` (a link is never followed, a subfolder never
/// entered), and only when `folder` itself is no link.
fn stale_captures(
    env: &Env,
    folder: &Path,
    configured: &[ClientServer],
) -> Result<Vec<(PathBuf, String)>> {
    let linked = std::fs::symlink_metadata(folder).map_or(true, |m| !m.is_dir());
    if linked || !configs_read(env) {
        return Ok(Vec::new());
    }
    let (_, opts) = env.inventory_spec(Tools::Digests)?;
    let entries = std::fs::read_dir(folder)
        .with_context(|| format!("cannot read the folder {}", shown_path(folder)))?;
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", shown_path(folder)))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !regular || name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let path = entry.path();
        let Ok(Some(bytes)) = crate::files::read_existing(&path, opts.max_size) else {
            continue;
        };
        if let Some(server) = capture::written_for(&name, &bytes) {
            if !configured.iter().any(|c| c.name == server) {
                stale.push((path, server));
            }
        }
    }
    stale.sort();
    Ok(stale)
}

/// Notes on `err` each capture file of the inventory folders that no
/// client config names any more, for `scan`: a server removed from
/// `.mcp.json` would otherwise stay in the inventory, scanned and
/// approved, with nothing said.
pub fn note_stale(env: &Env, err: &mut dyn Write) -> Result<()> {
    let folders: Vec<PathBuf> = env
        .inventory_paths()
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    if folders.is_empty() {
        return Ok(());
    }
    let configured = env.client_configs()?;
    for folder in folders {
        for (path, server) in stale_captures(env, &folder, &configured)? {
            writeln!(err, "{}", stale_note(&path, &escape_display(&server)))?;
        }
    }
    Ok(())
}

/// Captures the servers named by `keys` (`SERVER` or `SERVER/TOOL`; all
/// when none) into memory, for `scan --capture`: the capture files as
/// inventory files named as they would be written, and the names of the
/// servers that failed (each reported on `err`).
pub fn in_memory(
    env: &Env,
    keys: &[String],
    opts: &CaptureOpts,
    err: &mut dyn Write,
) -> Result<(Vec<InMemoryFile>, Vec<String>)> {
    let mut names: Vec<String> = keys
        .iter()
        .map(|k| k.split_once('/').map_or(k.as_str(), |(s, _)| s).to_string())
        .collect();
    names.dedup();
    let servers = select(env.client_configs()?, &names)?;
    distinct_files(&servers)?;
    let results = capture_confirmed(env, &servers, opts, err)?;
    let (captured, failed) = report(&servers, results, err)?;
    let files = captured
        .into_iter()
        .map(|c| {
            let path = PathBuf::from("(captured)").join(capture::file_name(&c.name));
            (path, c.file)
        })
        .collect();
    Ok((files, failed))
}

/// Removes the capture of `server` written under its old file name
/// ([`capture::old_file_name`]), if there is one: only a file that reads
/// as the capture of exactly that server, so that a file of another
/// server, or one a person wrote, is never touched.
fn remove_old_capture(folder: &Path, server: &str, env: &Env) -> Result<()> {
    let old = folder.join(capture::old_file_name(server));
    if old == capture::file_path(folder, server) || !old.is_file() {
        return Ok(());
    }
    let (_, opts) = env.inventory_spec(Tools::Whole)?;
    let Ok(bytes) = crate::files::read_capped(&old, opts.max_size) else {
        return Ok(());
    };
    let same = crate::inventory::read_in_memory(vec![(old.clone(), bytes)], &opts)
        .is_ok_and(|inv| inv.servers.len() == 1 && inv.servers.contains_key(server));
    if same {
        std::fs::remove_file(&old)
            .with_context(|| format!("cannot remove the old capture {}", shown_path(&old)))?;
    }
    Ok(())
}

/// Refuses, before anything runs, servers whose capture files would be
/// one file on a case-insensitive file system (macOS and Windows by
/// default: `GitHub` and `github`): a clone there would keep one of the
/// two. Names that differ otherwise always get distinct files
/// ([`capture::file_name`]).
fn distinct_files(servers: &[ClientServer]) -> Result<()> {
    let mut seen: std::collections::BTreeMap<String, &ClientServer> = Default::default();
    for s in servers {
        let file = capture::file_name(&s.name);
        if let Some(other) = seen.insert(file.to_lowercase(), s) {
            bail!(
                "servers `{}` ({}) and `{}` ({}) would share the capture file {file} on a case-insensitive file system; rename one",
                escape_display(&other.name),
                shown_path(&other.source),
                escape_display(&s.name),
                shown_path(&s.source)
            );
        }
    }
    Ok(())
}

/// Reports each server's warnings, or its failure, on `err`; returns the
/// servers captured and the names of those that failed.
fn report(
    servers: &[ClientServer],
    results: Vec<Result<Captured>>,
    err: &mut dyn Write,
) -> Result<(Vec<Captured>, Vec<String>)> {
    let mut captured = Vec::new();
    let mut failed = Vec::new();
    for (server, got) in servers.iter().zip(results) {
        let name = escape_display(&server.name);
        match got {
            Ok(c) => {
                for w in &c.warnings {
                    writeln!(err, "warning: `{name}`: {w}")?;
                }
                captured.push(c);
            }
            Err(e) => {
                writeln!(err, "error: capture of `{name}` failed: {e:#}")?;
                failed.push(server.name.clone());
            }
        }
    }
    Ok((captured, failed))
}

/// The servers of `all` (the work tree's configs and `--config` files),
/// or only those named; an unknown name is an error, as is a config that cannot be
/// read.
fn select(all: Vec<ClientServer>, names: &[String]) -> Result<Vec<ClientServer>> {
    if all.is_empty() {
        bail!(
            "no MCP servers configured: capture reads .mcp.json, .vscode/mcp.json, .cursor/mcp.json and .gemini/settings.json at the top of the work tree, and files named with --config"
        );
    }
    for name in names {
        if !all.iter().any(|s| &s.name == name) {
            bail!(
                "no server `{}` in the configs (configured: {})",
                escape_display(name),
                all.iter()
                    .map(|s| escape_display(&s.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let mut out: Vec<ClientServer> = Vec::new();
    for s in all {
        if !names.is_empty() && !names.contains(&s.name) {
            continue;
        }
        // The same name in two configs: capture one, when they agree.
        if let Some(prev) = out.iter().find(|p| p.name == s.name) {
            if config::launch_spec(&prev.entry) != config::launch_spec(&s.entry) {
                let fields: Vec<&str> = config::launch_differences(
                    config::launch_spec(&prev.entry).as_ref(),
                    config::launch_spec(&s.entry).as_ref(),
                )
                .into_iter()
                .map(|(f, _)| f)
                .collect();
                bail!(
                    "server `{}` is configured differently in {} and {} ({}): which one a client runs depends on the client; make them agree (`git kams scan` shows both)",
                    escape_display(&s.name),
                    shown_path(&prev.source),
                    shown_path(&s.source),
                    fields.join(", ")
                );
            }
            continue;
        }
        out.push(s);
    }
    Ok(out)
}

/// Asks for confirmation where no approval stands behind a server's
/// launch ([`unapproved_launches`]), then captures.
fn capture_confirmed(
    env: &Env,
    servers: &[ClientServer],
    opts: &CaptureOpts,
    err: &mut dyn Write,
) -> Result<Vec<Result<Captured>>> {
    let unapproved = unapproved_launches(env, servers)?;
    if !unapproved.is_empty() && !opts.yes {
        confirm(&unapproved, err)?;
    }
    let options = options(env, opts)?;
    let at = super::now()?;
    let progress = env.progress;
    let mut report = |name: &str, done: usize, total: usize| {
        if progress {
            let _ = write!(
                err,
                "\r\x1b[Kcapturing: {done}/{total} done ({} last)",
                escape_display(name)
            );
            if done == total {
                let _ = write!(err, "\r\x1b[K");
            }
            let _ = err.flush();
        }
    };
    let started = std::time::Instant::now();
    let results = match &opts.as_clients {
        None => capture::capture_all(servers, &options, &at, &mut report),
        Some(crate::cli::Identities(identities)) => {
            // Once per identity, one after the other: each capture keeps
            // its own deadline, as a single one does.
            let per: Vec<Vec<Result<Captured>>> = identities
                .iter()
                .map(|id| {
                    let options = Options {
                        client: *id,
                        ..options.clone()
                    };
                    capture::capture_all(servers, &options, &at, &mut report)
                })
                .collect();
            capture::combine(identities, per)
        }
    };
    if env.global.verbose {
        writeln!(
            err,
            "kams: captured {} server{} in {:.3} s",
            servers.len(),
            if servers.len() == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64()
        )?;
    }
    Ok(results)
}

/// The servers whose launch no approval stands behind, each with the
/// reason. A launch is approved when the lock in the work tree records
/// exactly the launch the config asks for, the lock committed at `HEAD`
/// records the same, and the commit that gave it that value (walking back
/// as the hooks judge merges) meets the sign-off policy (`kams.approvers`,
/// `kams.requireSigned`). The lock's text alone approves nothing: anyone
/// who can commit can write a launch into it; the sign-off rules are what
/// the hooks enforce, so they are what capture asks for.
fn unapproved_launches<'s>(env: &Env, servers: &'s [ClientServer]) -> Result<Vec<Unapproved<'s>>> {
    let lock = crate::files::lock::read(&env.lock_path()?)?.unwrap_or_default();
    let mut judge = env.launch_judge(None)?;
    let mut out = Vec::new();
    for s in servers {
        let wanted = config::launch_spec(&s.entry);
        let recorded = lock.servers.get(&s.name).and_then(|l| l.launch.as_ref());
        let why = match (recorded, &wanted, judge.as_mut()) {
            (None, _, _) => Some("no launch of it is recorded in kams.lock".to_string()),
            (Some(r), w, _) if Some(r) != w.as_ref() => {
                Some("kams.lock records another launch for it".to_string())
            }
            (Some(_), _, None) => Some(super::NO_HISTORY.to_string()),
            (Some(r), _, Some(judge)) => judge.verdict(&s.name, r)?.err(),
        };
        if let Some(why) = why {
            out.push((s, wanted, why));
        }
    }
    Ok(out)
}

/// A server whose launch no approval stands behind: the server, the launch
/// its config asks for, and why it is not approved.
type Unapproved<'s> = (&'s ClientServer, Option<crate::json::Value>, String);

/// Shows what would run and why it is not approved, and asks on the
/// terminal; without one, refuses and says how to go on.
fn confirm(unapproved: &[Unapproved<'_>], err: &mut dyn Write) -> Result<()> {
    let mut list = String::new();
    for (s, launch, why) in unapproved {
        let launch = launch
            .as_ref()
            .map(|v| {
                let mut b = Vec::new();
                crate::canon::write_value(v, crate::canon::Escape::Visible, &mut b);
                String::from_utf8_lossy(&b).into_owned()
            })
            .unwrap_or_else(|| "(no command or url)".into());
        list.push_str(&format!(
            "  {} ({}): {}\n    not approved: {}\n",
            escape_display(&s.name),
            shown_path(&s.source),
            escape_display(&launch),
            escape_display(why)
        ));
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() || !std::io::stderr().is_terminal() {
        bail!(
            "not run: no approval stands behind the launch of {} server{}:\n{list}review {} and run again with --yes, then approve with `git kams pin SERVER -m NOTE`",
            unapproved.len(),
            if unapproved.len() == 1 { "" } else { "s" },
            if unapproved.len() == 1 { "it" } else { "them" }
        );
    }
    write!(
        err,
        "capture will run or connect to these servers, whose launch nobody approved:\n{list}run them? [y/N] "
    )?;
    err.flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        return Ok(());
    }
    bail!("not run: not confirmed")
}

/// Capture settings from the options, git config and the environment.
fn options(env: &Env, opts: &CaptureOpts) -> Result<Options> {
    let timeout = match opts.timeout {
        Some(t) if t.is_finite() && t > 0.0 && t < 1e9 => Duration::from_secs_f64(t),
        Some(t) => bail!("--timeout {t}: expected a positive number of seconds"),
        None => capture::DEFAULT_TIMEOUT,
    };
    let jobs = match opts.jobs {
        Some(0) => bail!("--jobs 0: expected at least 1"),
        Some(n) => n,
        None => capture::DEFAULT_JOBS,
    };
    let (_, read) = env.inventory_spec(Tools::Digests)?;
    let workdir = match &env.repo.workdir {
        Some(top) => top.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(Options {
        timeout,
        jobs,
        max_message: usize::try_from(read.max_size).unwrap_or(usize::MAX),
        workdir,
        caller_env: std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
        client: capture::identity::GIT_KAMS,
    })
}

/// The folder capture writes to: `--out`, else the inventory folder.
fn out_folder(env: &Env, out: Option<&Path>) -> Result<PathBuf> {
    let checked = |dir: &Path| -> Result<PathBuf> {
        if let Some(top) = &env.repo.workdir {
            crate::files::folder_below(top, dir)?;
        }
        Ok(dir.to_path_buf())
    };
    if let Some(dir) = out {
        return checked(dir);
    }
    let paths = env.inventory_paths();
    match paths.as_slice() {
        [one] if !one.is_file() => checked(one),
        _ => Err(anyhow!(
            "capture writes one file per server into a folder, and the inventory is {}: name a folder with --out",
            paths
                .iter()
                .map(|p| shown_path(p))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
