//! `git kams init`: sets a repository up for git-kams. In a work tree it
//! installs the pre-push hook (the gate on the pushing side) and registers
//! kams.lock in `.gitattributes` for the lock's merge and diff drivers; in
//! a bare repository, the server's, it installs the pre-receive hook, the
//! gate that `git push --no-verify` does not get around.
//!
//! Running it again changes nothing; a newer git-kams brings its hook
//! block up to date, and the user's own hook lines are kept.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};

use super::{emit, Env, PlainFormat, Status};
use crate::cli::InitArgs;
use crate::git::hooks::{self, Hook, Installed};
use crate::report::{json_str, JSON_VERSION};
use crate::text::shown_path;

/// The attributes kams.lock gets; git uses its own merge and diff while
/// the drivers they name are not configured.
const ATTRIBUTES: &str = "merge=kams-lock diff=kams-lock";

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
    let (hook_path, hook_did) = hooks::install(&dir, hook)?;
    let attributes = match &env.repo.workdir {
        Some(top) => Some(register(top, &env.lock_relative()?)?),
        None => None,
    };
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
            match &attributes {
                Some((path, line, added)) => writeln!(
                    o,
                    "{} `{line}` in {}{}",
                    if *added { "registered" } else { "already registered:" },
                    shown(path),
                    if *added { " (commit it, so that every clone shares it)" } else { "" }
                )?,
                None => writeln!(
                    o,
                    "bare repository: every push is now checked here, --no-verify or not (see docs/hooks.md)"
                )?,
            }
            Ok(())
        }
        PlainFormat::Json => {
            let attrs = match &attributes {
                Some((path, line, added)) => format!(
                    "{{\"path\": {}, \"line\": {}, \"action\": {}}}",
                    json_str(&path.display().to_string()),
                    json_str(line),
                    json_str(if *added { "added" } else { "unchanged" })
                ),
                None => "null".into(),
            };
            writeln!(
                o,
                "{{\n  \"version\": {JSON_VERSION},\n  \"hook\": {{\"name\": {}, \"path\": {}, \"action\": {}}},\n  \"attributes\": {attrs}\n}}",
                json_str(hook.name()),
                json_str(&hook_path.display().to_string()),
                json_str(hook_did.as_str())
            )
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

/// The `.gitattributes` line for the lock at `rel` (from the top of the
/// work tree): a bare `kams.lock` matches the name in any folder, a path
/// with a folder is anchored at the top.
fn attributes_line(rel: &Path) -> String {
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
    format!("{pattern} {ATTRIBUTES}")
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

/// Registers the lock in `.gitattributes` at `top`: the path, the line,
/// and whether it was added.
fn register(top: &Path, lock_rel: &Path) -> Result<(PathBuf, String, bool)> {
    let path = top.join(".gitattributes");
    let existing = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", shown_path(&path))),
    };
    let line = attributes_line(lock_rel);
    match with_line(&existing, &line) {
        Some(text) => {
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", shown_path(&path)))?;
            Ok((path, line, true))
        }
        None => Ok((path, line, false)),
    }
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
        let line = attributes_line(Path::new("kams.lock"));
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
            attributes_line(Path::new("config/my approvals.lock")),
            "\"config/my approvals.lock\" merge=kams-lock diff=kams-lock"
        );
    }
}
