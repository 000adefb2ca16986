//! The shims `git kams init` installs: git-kams' block in a hook file,
//! added or brought up to date in place, the user's own lines kept, in the
//! folder git runs hooks from.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

/// First line of the block git-kams owns in a hook file.
pub const BEGIN: &str = "# >>> git-kams >>>";
/// Last line of that block.
pub const END: &str = "# <<< git-kams <<<";

/// The hooks git-kams installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// Client side, before `git push` sends anything.
    PrePush,
    /// Server side, in the bare repository, before any ref is updated.
    PreReceive,
}

impl Hook {
    /// The hook's file name (and `git kams hook` argument).
    pub fn name(self) -> &'static str {
        match self {
            Hook::PrePush => "pre-push",
            Hook::PreReceive => "pre-receive",
        }
    }
}

/// The folder git runs hooks from: `core.hooksPath` (`hooks_path`; a
/// relative one is relative to `top`, the top of the work tree, or to the git dir
/// in a bare repository, as git reads it), else `hooks/` in the common git
/// dir, which linked worktrees share with the main one.
pub fn hooks_dir(repo: &gix::Repository, top: Option<&Path>, hooks_path: Option<&str>) -> PathBuf {
    match hooks_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => {
            let p = match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
                (Some(rest), Some(home)) => Path::new(&home).join(rest),
                _ => PathBuf::from(p),
            };
            if p.is_absolute() {
                p
            } else {
                top.unwrap_or_else(|| repo.git_dir()).join(p)
            }
        }
        None => repo.common_dir().join("hooks"),
    }
}

/// The hooks as a server administrator installs them by hand: the files
/// in the repository's `hooks/` folder, embedded here so that `init`
/// installs exactly what they say.
const PRE_PUSH_FILE: &str = include_str!("../../../hooks/pre-push");
const PRE_RECEIVE_FILE: &str = include_str!("../../../hooks/pre-receive");

/// The block git-kams owns in `hook`'s file (the file of `hooks/` without
/// its `#!` line). It reads git's input once, hands it to `git kams
/// hook`, stops the hook with that status on failure, and otherwise
/// replays the input for the user's own lines below it.
pub fn block(hook: Hook) -> String {
    let file = match hook {
        Hook::PrePush => PRE_PUSH_FILE,
        Hook::PreReceive => PRE_RECEIVE_FILE,
    };
    file.split_once('\n')
        .map_or(file, |(_, rest)| rest)
        .to_string()
}

/// Shells whose syntax the block is written in.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "yash"];

/// The interpreter a `#!` line names (`env`'s argument when it is `env`).
fn interpreter(shebang: &str) -> Option<&str> {
    let mut words = shebang.strip_prefix("#!")?.split_whitespace();
    let first = words.next()?;
    let base = first.rsplit('/').next().unwrap_or(first);
    if base == "env" {
        let arg = words.find(|w| !w.starts_with('-'))?;
        return Some(arg.rsplit('/').next().unwrap_or(arg));
    }
    Some(base)
}

/// `existing` hook text (`None`: no file yet) with git-kams' block for
/// `hook` in it: the block replaced where it is, else inserted right after
/// the `#!` line so that it runs before the user's lines (which may end in
/// `exit`). Lines outside the block are kept as they are; a file without a
/// `#!` line gets `#!/bin/sh`.
pub fn with_shim(existing: Option<&str>, hook: Hook) -> Result<String> {
    let block = block(hook);
    let text = existing.unwrap_or("");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let is = |l: &str, marker: &str| l.trim_end() == marker;
    let begins: Vec<usize> = (0..lines.len()).filter(|&i| is(lines[i], BEGIN)).collect();
    let ends: Vec<usize> = (0..lines.len()).filter(|&i| is(lines[i], END)).collect();
    if begins.len() != ends.len() || begins.iter().zip(&ends).any(|(b, e)| b > e) {
        bail!(
            "the git-kams block is damaged ({BEGIN} and {END} lines do not pair up); remove what is left of it and run `git kams init` again"
        );
    }
    if let Some(first) = lines.first().filter(|l| l.starts_with("#!")) {
        match interpreter(first.trim_end()) {
            Some(i) if SHELLS.contains(&i) => {}
            other => bail!(
                "it is a {} script, and git-kams only adds lines to shell hooks; call `git kams hook {} \"$@\"` from it yourself, with the hook's standard input",
                other.unwrap_or("non-shell"),
                hook.name()
            ),
        }
    }
    let mut out = String::with_capacity(text.len() + block.len() + 16);
    if begins.is_empty() {
        let body_start = match lines.first() {
            Some(l) if l.starts_with("#!") => {
                out.push_str(l);
                if !l.ends_with('\n') {
                    out.push('\n');
                }
                1
            }
            _ => {
                out.push_str("#!/bin/sh\n");
                0
            }
        };
        out.push_str(&block);
        for l in &lines[body_start..] {
            out.push_str(l);
        }
    } else {
        // One block, where the first one was; any copies are dropped.
        let mut i = 0;
        if !lines.first().is_some_and(|l| l.starts_with("#!")) {
            out.push_str("#!/bin/sh\n");
        }
        for (n, (&b, &e)) in begins.iter().zip(&ends).enumerate() {
            for l in &lines[i..b] {
                out.push_str(l);
            }
            if n == 0 {
                out.push_str(&block);
            }
            i = e + 1;
        }
        for l in &lines[i..] {
            out.push_str(l);
        }
    }
    Ok(out)
}

/// What [`install`] did to a hook file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installed {
    /// There was no such hook.
    Created,
    /// The hook existed; the block was added or brought up to date.
    Updated,
    /// The hook already had this block.
    Unchanged,
}

impl Installed {
    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Installed::Created => "created",
            Installed::Updated => "updated",
            Installed::Unchanged => "unchanged",
        }
    }
}

/// Installs git-kams' block for `hook` in `dir` (created if needed) and
/// makes the file executable.
pub fn install(dir: &Path, hook: Hook) -> Result<(PathBuf, Installed)> {
    let path = dir.join(hook.name());
    let shown = crate::text::shown_path(&path);
    // A hook that is a link (a committed `core.hooksPath` folder may hold
    // one) would have its target copied into the hook, or made executable:
    // refused, as a FIFO is.
    let existing =
        match crate::files::read_existing(&path, HOOK_MAX)? {
            Some(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
                anyhow!("{shown} is not UTF-8 text; git-kams edits only text hooks")
            })?),
            None => None,
        };
    let text = with_shim(existing.as_deref(), hook)
        .with_context(|| format!("cannot install git-kams in {shown}"))?;
    let what = match &existing {
        None => Installed::Created,
        Some(old) if *old == text => Installed::Unchanged,
        Some(_) => Installed::Updated,
    };
    if what != Installed::Unchanged {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", crate::text::shown_path(dir)))?;
        // Written beside and renamed, so that a push running now sees the
        // old hook or the new one, never half of one.
        crate::files::replace(&path, text.as_bytes(), None)?;
    }
    make_executable(&path).with_context(|| format!("cannot make {shown} executable"))?;
    Ok((path, what))
}

/// The largest hook file read.
const HOOK_MAX: u64 = 16 << 20;

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // Not through a link: chmod would change where it points.
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut perms = meta.permissions();
    let mode = perms.mode();
    // Execute wherever read is allowed, as `chmod +x` under a usual umask.
    let wanted = mode | 0o100 | ((mode & 0o044) >> 2);
    if wanted != mode {
        perms.set_mode(wanted);
        std::fs::set_permissions(path, perms)?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_added_once_after_the_shebang_and_the_users_lines_stay() {
        let user = "#!/bin/bash\nset -e\necho mine\nexit 0\n";
        let once = with_shim(Some(user), Hook::PrePush).unwrap();
        assert!(
            once.starts_with(&format!("#!/bin/bash\n{BEGIN}\n")),
            "{once}"
        );
        assert!(
            once.ends_with(&format!("{END}\nset -e\necho mine\nexit 0\n")),
            "{once}"
        );
        assert_eq!(with_shim(Some(&once), Hook::PrePush).unwrap(), once);
        assert_eq!(once.matches(BEGIN).count(), 1);

        let new = with_shim(None, Hook::PreReceive).unwrap();
        assert!(new.starts_with(&format!("#!/bin/sh\n{BEGIN}\n")));
        assert!(new.contains("git kams hook pre-receive \"$@\" || exit $?"));
        // No shebang: one is added, the user's lines follow the block.
        let bare = with_shim(Some("echo hi"), Hook::PrePush).unwrap();
        assert!(
            bare.starts_with("#!/bin/sh\n") && bare.ends_with(&format!("{END}\necho hi")),
            "{bare}"
        );
    }

    #[test]
    fn init_installs_exactly_the_files_of_the_hooks_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
        for hook in [Hook::PrePush, Hook::PreReceive] {
            let file = std::fs::read_to_string(dir.join(hook.name())).unwrap();
            assert_eq!(with_shim(None, hook).unwrap(), file, "{}", hook.name());
            assert!(file.starts_with(&format!("#!/bin/sh\n{BEGIN}\n")));
            assert!(file.ends_with(&format!("{END}\n")));
            assert!(file.contains(&format!("git kams hook {} \"$@\" || exit $?", hook.name())));
        }
    }

    #[test]
    fn an_old_block_is_replaced_in_place_and_copies_are_dropped() {
        let old = format!("#!/bin/sh\necho before\n{BEGIN}\nold line\n{END}\necho between\n{BEGIN}\ncopy\n{END}\necho after\n");
        let new = with_shim(Some(&old), Hook::PrePush).unwrap();
        assert_eq!(
            new,
            format!(
                "#!/bin/sh\necho before\n{}echo between\necho after\n",
                block(Hook::PrePush)
            )
        );
    }

    #[test]
    fn a_damaged_block_or_a_non_shell_hook_is_refused() {
        let damaged = format!("#!/bin/sh\n{BEGIN}\necho half\n");
        assert!(with_shim(Some(&damaged), Hook::PrePush)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
        let python = "#!/usr/bin/env python3\nprint('hi')\n";
        let e = with_shim(Some(python), Hook::PrePush)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("python3 script") && e.contains("git kams hook pre-push"),
            "{e}"
        );
        assert!(with_shim(Some("#!/usr/bin/env -S bash -e\n"), Hook::PrePush).is_ok());
    }
}
