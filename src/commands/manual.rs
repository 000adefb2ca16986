//! `git kams install-man` and `git kams completions`: help the git way.
//! `git kams --help` is turned by git into `git help kams`, which opens
//! `man git-kams`; so the command and each subcommand get a man page,
//! generated from the same clap definitions as `-h`, and shells get
//! completion scripts from them too.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::CommandFactory;

use super::{write_atomically, Env, Status};
use crate::cli::{Cli, CompletionsArgs, InstallManArgs};
use crate::text::shown_path;

/// Runs `install-man`: writes `man1/git-kams.1` and one
/// `man1/git-kams-<command>.1` per subcommand.
pub fn install(_env: &Env, args: &InstallManArgs, out: &mut dyn Write) -> Result<Status> {
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => default_dir()?,
    };
    let dir = root.join("man1");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", shown_path(&dir)))?;
    for (name, page) in pages()? {
        let path = dir.join(format!("{name}.1"));
        write_atomically(&path, &page)?;
        writeln!(out, "wrote {}", shown_path(&path))?;
    }
    if args.dir.is_some() {
        match bin_for(&root) {
            Some(bin) => writeln!(
                out,
                "man finds these when {} is on MANPATH (or when {} is on PATH)",
                shown_path(&root),
                shown_path(&bin)
            )?,
            None => writeln!(
                out,
                "man finds these when {} is on MANPATH",
                shown_path(&root)
            )?,
        }
    }
    Ok(0)
}

/// The `bin` folder on PATH from which man-db finds the man folder `root`:
/// it maps `X/bin` to `X/man` and `X/share/man`, so `X` is one level up
/// from a `man` folder and two from `share/man`; `None` for any other.
fn bin_for(root: &std::path::Path) -> Option<PathBuf> {
    let root = crate::files::lexical(root);
    if root.file_name()? != "man" {
        return None;
    }
    let up = root.parent()?;
    let top = if up.file_name().is_some_and(|n| n == "share") {
        up.parent()?
    } else {
        up
    };
    Some(top.join("bin"))
}

/// Runs `completions`: the script for `shell` on stdout.
pub fn completions(args: &CompletionsArgs, out: &mut dyn Write) -> Result<Status> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "git-kams", out);
    Ok(0)
}

/// Every man page: (page name, roff text), the top page first.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let top = Cli::command().name("git-kams");
    let mut out = Vec::new();
    let mut page = Vec::new();
    clap_mangen::Man::new(top.clone()).render(&mut page)?;
    out.push(("git-kams".to_string(), page));
    for sub in top.get_subcommands() {
        if sub.is_hide_set() {
            continue;
        }
        let name = format!("git-kams-{}", sub.get_name());
        let mut page = Vec::new();
        let sub = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("git kams {}", sub.get_name()));
        clap_mangen::Man::new(sub).render(&mut page)?;
        out.push((name, page));
    }
    Ok(out)
}

/// `share/man` beside the folder of the running executable: for a binary
/// in `~/.cargo/bin` or `/usr/local/bin`, that is `~/.cargo/share/man` or
/// `/usr/local/share/man`, where man-db looks for every `bin` on PATH.
fn default_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the running executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    Ok(share_man_for(&exe))
}

fn share_man_for(exe: &Path) -> PathBuf {
    let bin = exe.parent().unwrap_or(Path::new("."));
    bin.parent().unwrap_or(bin).join("share").join("man")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_every_visible_command() {
        let pages = pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        for want in [
            "git-kams",
            "git-kams-scan",
            "git-kams-capture",
            "git-kams-pin",
        ] {
            assert!(names.contains(&want), "{names:?}");
        }
        let scan = &pages.iter().find(|(n, _)| n == "git-kams-scan").unwrap().1;
        let scan = String::from_utf8_lossy(scan);
        assert!(scan.contains(".TH git-kams-scan 1"), "{scan}");
        assert!(scan.contains("fail\\-on"), "{scan}");
    }

    #[test]
    fn the_bin_folder_named_is_the_one_man_maps_to_the_folder() {
        let bin = |d: &str| bin_for(Path::new(d)).map(|p| p.display().to_string());
        assert_eq!(
            bin("/usr/local/share/man").as_deref(),
            Some("/usr/local/bin")
        );
        assert_eq!(bin("/opt/x/man").as_deref(), Some("/opt/x/bin"));
        assert_eq!(bin("/opt/x/man/").as_deref(), Some("/opt/x/bin"));
        assert_eq!(bin("/opt/docs"), None);
    }

    #[test]
    fn the_default_folder_is_share_man_beside_bin() {
        assert_eq!(
            share_man_for(Path::new("/home/u/.cargo/bin/git-kams")),
            PathBuf::from("/home/u/.cargo/share/man")
        );
    }
}
