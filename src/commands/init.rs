//! `git kams init`: sets a repository up for git-kams. In a work tree it
//! installs the pre-push hook (the gate on the pushing side), registers
//! kams.lock and the inventory folder in `.gitattributes` for the lock's
//! merge and diff drivers, and configures those drivers in the repository's
//! git config; in a bare repository, the server's, it installs the
//! pre-receive hook, the gate that `git push --no-verify` does not get
//! around.
//!
//! Running it again changes nothing; a newer git-kams brings its hook
//! block and its driver settings up to date, and the user's own hook lines
//! are kept.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::{emit, Env, PlainFormat, Status};
use crate::cli::InitArgs;
use crate::git::config::{self, Set};
use crate::git::hooks::{self, Hook, Installed};
use crate::report::document::{self, Displayed, Layout};
use crate::report::JSON_VERSION;
use crate::text::shown_path;

/// The attributes kams.lock gets; git uses its own merge and diff while
/// the drivers they name are not configured (in a fresh clone, until
/// `init` runs there: attributes are committed, config is not).
const ATTRIBUTES: &str = "merge=kams-lock diff=kams-lock";

/// The attribute inventory files get: they are diffed through the same
/// filter, so hidden characters in a captured description show in diffs.
const INVENTORY_ATTRIBUTES: &str = "diff=kams-lock";

/// The driver settings. `%P` (the file's path) is for the driver's
/// messages. No `diff.kams-lock.cachetextconv`: the filter is one pass over
/// the file, and the cache (notes under `refs/notes/textconv/`) would
/// outlive a git-kams upgrade that changes how characters are shown.
const DRIVERS: [(&str, &str); 3] = [
    (
        "merge.kams-lock.name",
        "kams.lock, merged entry by entry by git-kams",
    ),
    (
        "merge.kams-lock.driver",
        "git kams merge-driver %O %A %B %P",
    ),
    ("diff.kams-lock.textconv", "git kams textconv"),
];

/// The largest `.gitattributes` read (git itself warns past 100 MB).
const ATTRIBUTES_MAX: u64 = 100 << 20;

/// What `init` did in a work tree's `.gitattributes` and config.
struct Registered {
    /// The `.gitattributes` file.
    path: PathBuf,
    /// Each line and whether it was added (false: it was there).
    lines: Vec<(String, bool)>,
    /// Inventory paths outside the work tree, which no attribute can name.
    outside: Vec<PathBuf>,
    /// Each driver setting and what setting it did.
    config: Vec<(&'static str, &'static str, Set)>,
}

/// `init --format json`: the hook, the attributes and the driver settings.
#[derive(Serialize)]
struct JsonInit<'a> {
    version: u32,
    hook: JsonHook<'a>,
    /// The lock's attributes line; `null` outside a work tree.
    attributes: Option<JsonAttribute<'a>>,
    inventory_attributes: Vec<JsonAttribute<'a>>,
    config: Vec<JsonSetting<'a>>,
}

#[derive(Serialize)]
struct JsonHook<'a> {
    name: &'static str,
    path: Displayed<std::path::Display<'a>>,
    action: &'static str,
}

#[derive(Serialize)]
struct JsonAttribute<'a> {
    path: Displayed<std::path::Display<'a>>,
    line: &'a str,
    action: &'static str,
}

impl<'a> JsonAttribute<'a> {
    /// A line of `path` and whether `init` added it.
    fn of(path: &'a Path, (line, added): &'a (String, bool)) -> JsonAttribute<'a> {
        JsonAttribute {
            path: Displayed(path.display()),
            line,
            action: if *added { "added" } else { "unchanged" },
        }
    }
}

#[derive(Serialize)]
struct JsonSetting<'a> {
    key: &'static str,
    value: &'static str,
    action: &'static str,
    /// The value an update replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    was: Option<&'a str>,
}

/// Runs `init`.
pub fn run(env: &Env, _args: &InitArgs, out: &mut dyn Write) -> Result<Status> {
    let format = env.plain_format("init")?;
    let repo = env.repo.require("git kams init")?;
    let hook = if env.repo.workdir.is_some() {
        Hook::PrePush
    } else {
        Hook::PreReceive
    };
    let hooks_path = env.repo.config("core.hooksPath");
    let dir = hooks::hooks_dir(repo, env.repo.workdir.as_deref(), hooks_path.as_deref());
    if let Some(top) = &env.repo.workdir {
        // A `core.hooksPath` folder committed as a link would have the
        // hook written where it points.
        crate::files::folder_below(top, &dir)?;
    }
    let (hook_path, hook_did) = hooks::install(&dir, hook)?;
    let registered = match &env.repo.workdir {
        Some(top) => {
            let mut lines = vec![attributes_line(&env.lock_relative()?, ATTRIBUTES)];
            let mut outside = Vec::new();
            for p in env.inventory_paths() {
                match env.repo.relative(&p) {
                    // A folder (or one not captured yet) is named with all
                    // it holds; a single inventory file by itself.
                    Ok(rel) if p.is_file() => {
                        lines.push(attributes_line(&rel, INVENTORY_ATTRIBUTES))
                    }
                    Ok(rel) => lines.push(attributes_line(&rel.join("**"), INVENTORY_ATTRIBUTES)),
                    Err(_) => outside.push(p),
                }
            }
            let (path, lines) = register(top, &lines)?;
            let config = config::set_local(repo, &DRIVERS)?;
            Some(Registered {
                path,
                lines,
                outside,
                config: DRIVERS
                    .iter()
                    .zip(config)
                    .map(|(&(k, v), set)| (k, v, set))
                    .collect(),
            })
        }
        None => None,
    };
    let config_path = config::local_path(repo);
    let base = std::env::current_dir().unwrap_or_default();
    let shown = |p: &Path| shown_path(&relative_to(&base.join(p), &base));
    emit(out, |o| match format {
        PlainFormat::Text => {
            let verb = match hook_did {
                Installed::Created => "installed",
                Installed::Updated => "updated",
                Installed::Unchanged => "already installed:",
            };
            writeln!(
                o,
                "{verb} the {} hook in {}",
                hook.name(),
                shown(&hook_path)
            )?;
            if hooks_path.is_some() {
                writeln!(
                    o,
                    "  (core.hooksPath is set: that is where git runs hooks from)"
                )?;
            }
            let Some(r) = &registered else {
                writeln!(
                    o,
                    "bare repository: every push is now checked here, --no-verify or not (see docs/hooks.md)"
                )?;
                return Ok(());
            };
            for (line, added) in &r.lines {
                writeln!(
                    o,
                    "{} `{line}` in {}",
                    if *added {
                        "registered"
                    } else {
                        "already registered:"
                    },
                    shown(&r.path)
                )?;
            }
            if r.lines.iter().any(|(_, added)| *added) {
                writeln!(
                    o,
                    "  (commit {}, so that every clone shares it)",
                    shown(&r.path)
                )?;
            }
            for p in &r.outside {
                writeln!(
                    o,
                    "not registered: the inventory {} is outside the work tree",
                    shown(p)
                )?;
            }
            for (key, value, set) in &r.config {
                match set {
                    Set::Added => writeln!(o, "set `{key} = {value}` in {}", shown(&config_path))?,
                    Set::Updated(old) => writeln!(
                        o,
                        "set `{key} = {value}` in {} (was `{}`)",
                        shown(&config_path),
                        crate::text::escape_display(old)
                    )?,
                    Set::Unchanged => writeln!(
                        o,
                        "already set: `{key} = {value}` in {}",
                        shown(&config_path)
                    )?,
                }
            }
            Ok(())
        }
        PlainFormat::Json => {
            let doc = JsonInit {
                version: JSON_VERSION,
                hook: JsonHook {
                    name: hook.name(),
                    path: Displayed(hook_path.display()),
                    action: hook_did.as_str(),
                },
                // The lock's line, as before; the inventory's lines and the
                // driver settings come in keys of their own.
                attributes: registered
                    .as_ref()
                    .map(|r| JsonAttribute::of(&r.path, &r.lines[0])),
                inventory_attributes: registered
                    .iter()
                    .flat_map(|r| r.lines[1..].iter().map(|l| JsonAttribute::of(&r.path, l)))
                    .collect(),
                config: registered
                    .iter()
                    .flat_map(|r| &r.config)
                    .map(|(key, value, set)| JsonSetting {
                        key,
                        value,
                        action: match set {
                            Set::Added => "added",
                            Set::Updated(_) => "updated",
                            Set::Unchanged => "unchanged",
                        },
                        was: match set {
                            Set::Updated(old) => Some(old),
                            _ => None,
                        },
                    })
                    .collect(),
            };
            document::write(&doc, Layout::rows(&[]), o)
        }
    })?;
    Ok(0)
}

/// `p`'s components with `.` dropped and `..` resolved where it can be.
fn clean(p: &Path) -> Vec<Component<'_>> {
    let mut out = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `path` as seen from `base` (both absolute), `..` where needed, as git
/// shows paths.
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let (p, b) = (clean(path), clean(base));
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return p.iter().collect();
    }
    let mut out: PathBuf = b[common..].iter().map(|_| Component::ParentDir).collect();
    out.extend(&p[common..]);
    out
}

/// The `.gitattributes` line giving `attributes` to `rel` (from the top of
/// the work tree): a bare `kams.lock` matches the name in any folder, a
/// path with a folder is anchored at the top.
fn attributes_line(rel: &Path, attributes: &str) -> String {
    let pattern = rel.to_string_lossy().replace('\\', "/");
    let special = |c: char| c.is_whitespace() || c == '"' || c.is_control();
    let pattern = if pattern.contains(special) {
        // gitattributes reads a pattern in double quotes with C escapes.
        let mut q = String::from("\"");
        for c in pattern.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\t' => q.push_str("\\t"),
                '\n' => q.push_str("\\n"),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    } else {
        pattern
    };
    format!("{pattern} {attributes}")
}

/// `existing` `.gitattributes` text with `line` appended, or `None` when a
/// line says that already.
fn with_line(existing: &str, line: &str) -> Option<String> {
    let wanted: Vec<&str> = line.split_whitespace().collect();
    if existing
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == wanted)
    {
        return None;
    }
    let mut out = existing.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(line);
    out.push('\n');
    Some(out)
}

/// Registers `lines` in `.gitattributes` at `top`: the path, and each line
/// with whether it was added.
fn register(top: &Path, lines: &[String]) -> Result<(PathBuf, Vec<(String, bool)>)> {
    let path = top.join(".gitattributes");
    // A committed link would have the lines appended where it points
    // (outside the work tree, perhaps): refused, as a FIFO is.
    let existing = match crate::files::read_existing(&path, ATTRIBUTES_MAX)? {
        Some(bytes) => String::from_utf8(bytes)
            .map_err(|_| anyhow!("{}: is not UTF-8 text", shown_path(&path)))?,
        None => String::new(),
    };
    let mut text = existing.clone();
    let mut done = Vec::with_capacity(lines.len());
    for line in lines {
        let added = with_line(&text, line);
        done.push((line.clone(), added.is_some()));
        if let Some(t) = added {
            text = t;
        }
    }
    if text != existing {
        crate::files::replace(&path, text.as_bytes(), None)?;
    }
    Ok((path, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_shown_from_the_current_folder() {
        let top = Path::new("/r");
        assert_eq!(
            relative_to(Path::new("/r/./.git/hooks/pre-push"), top),
            Path::new(".git/hooks/pre-push")
        );
        assert_eq!(
            relative_to(Path::new("/r/.githooks/pre-push"), Path::new("/r/sub")),
            Path::new("../.githooks/pre-push")
        );
        assert_eq!(
            relative_to(Path::new("/r/sub/../.git/hooks"), Path::new("/r/sub")),
            Path::new("../.git/hooks")
        );
    }

    #[test]
    fn the_attributes_line_is_added_once() {
        let line = attributes_line(Path::new("kams.lock"), ATTRIBUTES);
        assert_eq!(line, "kams.lock merge=kams-lock diff=kams-lock");
        let once = with_line("*.png binary", &line).unwrap();
        assert_eq!(
            once,
            "*.png binary\nkams.lock merge=kams-lock diff=kams-lock\n"
        );
        assert_eq!(with_line(&once, &line), None);
        assert_eq!(
            with_line("kams.lock  merge=kams-lock\tdiff=kams-lock\n", &line),
            None
        );
        assert_eq!(
            attributes_line(Path::new("config/my approvals.lock"), ATTRIBUTES),
            "\"config/my approvals.lock\" merge=kams-lock diff=kams-lock"
        );
    }
}
