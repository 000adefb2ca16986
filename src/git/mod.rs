//! The repository around the lock: where the work tree is, and the
//! `kams.*` and `user.*` settings, with git's layering (system, global,
//! repository, `git -c`) honoured.
//!
//! gix reads the configuration files and `GIT_CONFIG_COUNT`, but not
//! `GIT_CONFIG_PARAMETERS`, which is how `git -c key=value kams ...` hands
//! its overrides to a subcommand; those are applied here on top.

use std::path::PathBuf;

/// The repository git-kams runs in, if any, and its settings.
#[derive(Default, Debug)]
pub struct Repo {
    /// Top of the work tree (`None` outside a repository or in a bare one).
    pub workdir: Option<PathBuf>,
    /// Configuration lookups, overrides first.
    overrides: Vec<(String, String)>,
    config: Option<gix::Repository>,
}

impl Repo {
    /// Discovers the repository from the current directory, honouring
    /// `GIT_DIR` and friends (hooks run with them set).
    pub fn discover() -> Repo {
        let overrides = std::env::var("GIT_CONFIG_PARAMETERS")
            .map(|s| parse_config_parameters(&s))
            .unwrap_or_default();
        match gix::discover_with_environment_overrides(".") {
            Ok(repo) => Repo {
                workdir: repo
                    .workdir()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())),
                overrides,
                config: Some(repo),
            },
            Err(_) => Repo {
                workdir: None,
                overrides,
                config: None,
            },
        }
    }

    /// The value of a config key (`section.name`, case-insensitive), the
    /// last `git -c` override winning over the files.
    pub fn config(&self, key: &str) -> Option<String> {
        let wanted = key.to_ascii_lowercase();
        if let Some((_, v)) = self
            .overrides
            .iter()
            .rev()
            .find(|(k, _)| k.to_ascii_lowercase() == wanted)
        {
            return Some(v.clone());
        }
        let repo = self.config.as_ref()?;
        repo.config_snapshot().string(key).map(|v| v.to_string())
    }

    /// A path setting, relative to the top of the work tree.
    pub fn config_path(&self, key: &str) -> Option<PathBuf> {
        let v = self.config(key)?;
        let p = PathBuf::from(&v);
        Some(match (&self.workdir, p.is_absolute()) {
            (Some(top), false) => top.join(p),
            _ => p,
        })
    }
}

/// Parses git's `GIT_CONFIG_PARAMETERS`: shell-quoted `'key'='value'`
/// pairs (or the older `'key=value'`), separated by spaces.
pub fn parse_config_parameters(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let quoted = |i: &mut usize| -> Option<String> {
        if chars.get(*i) != Some(&'\'') {
            return None;
        }
        *i += 1;
        let mut v = String::new();
        loop {
            match chars.get(*i) {
                None => return Some(v),
                Some('\'') => {
                    // `'\''` is an escaped quote inside a quoted word.
                    if chars.get(*i + 1) == Some(&'\\')
                        && chars.get(*i + 2) == Some(&'\'')
                        && chars.get(*i + 3) == Some(&'\'')
                    {
                        v.push('\'');
                        *i += 4;
                    } else {
                        *i += 1;
                        return Some(v);
                    }
                }
                Some(c) => {
                    v.push(*c);
                    *i += 1;
                }
            }
        }
    };
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let Some(first) = quoted(&mut i) else {
            break;
        };
        if chars.get(i) == Some(&'=') {
            i += 1;
            let value = quoted(&mut i).unwrap_or_default();
            out.push((first, value));
        } else if let Some((k, v)) = first.split_once('=') {
            out.push((k.to_string(), v.to_string()));
        } else {
            out.push((first, "true".to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms_of_git_config_parameters() {
        assert_eq!(
            parse_config_parameters("'kams.lock'='a b.lock' 'user.name=It'\\''s me' 'x.flag'"),
            vec![
                ("kams.lock".into(), "a b.lock".into()),
                ("user.name".into(), "It's me".into()),
                ("x.flag".into(), "true".into())
            ]
        );
    }
}
