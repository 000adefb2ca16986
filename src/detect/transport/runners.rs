//! Package runners: which package or image `npx`, `uvx`, `uv`, `pipx`,
//! `deno` and `docker run` fetch at every start, read from their options,
//! and a finding when it is not pinned to one release.

use super::pin::{npm_pin, python_pin, AtVersion, Pin};
use super::{Review, Word};
use crate::finding::Severity;

/// What the first word after a Python runner's options is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FirstWord {
    /// A package to fetch and run (`uvx`, `uv tool run`).
    Package,
    /// A command of the project (`uv run`): only `--with` packages are
    /// fetched.
    Command,
}

impl Review<'_> {
    pub(super) fn unpinned(&mut self, what: &str, at: &Word, runner: &str, spec: &str, why: &str) {
        self.push(
            Severity::Medium,
            &at.pointer,
            format!(
                "`{}` runs an unpinned {what} ({runner} {spec}): each start may fetch a different release",
                self.server
            ),
            vec![why.to_string()],
        );
    }

    /// `npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`: packages given
    /// with `--package`, else the first word that is not an option.
    pub(super) fn node_runner(&mut self, runner: &str, rest: &[Word]) {
        const VALUED: [&str; 8] = [
            "--registry",
            "--cache",
            "--userconfig",
            "--node-options",
            "--shell",
            "--workspace",
            "-w",
            "--script-shell",
        ];
        let mut packages: Vec<&Word> = Vec::new();
        let mut positional = None;
        let mut i = 0;
        while i < rest.len() {
            let w = &rest[i];
            let t = w.text.as_str();
            if t == "--" {
                positional = rest.get(i + 1);
                break;
            }
            if t == "-p" || t == "--package" {
                if let Some(p) = rest.get(i + 1) {
                    packages.push(p);
                }
                i += 2;
                continue;
            }
            if t.starts_with("--package=") {
                packages.push(w);
                i += 1;
                continue;
            }
            if t == "-c" || t == "--call" {
                if let Some(s) = rest.get(i + 1) {
                    self.wrapper(w, &format!("{runner} {t}"), std::slice::from_ref(s));
                    self.script(s, 1);
                }
                i += 2;
                continue;
            }
            if VALUED.contains(&t) {
                i += 2;
                continue;
            }
            if t.starts_with('-') {
                i += 1;
                continue;
            }
            positional = Some(w);
            break;
        }
        if packages.is_empty() {
            packages.extend(positional);
        }
        for w in packages {
            let spec = w.text.strip_prefix("--package=").unwrap_or(&w.text);
            if let Pin::Unpinned(why) = npm_pin(spec) {
                self.unpinned("package", w, runner, spec, &why);
            }
        }
    }

    pub(super) fn deno(&mut self, rest: &[Word]) {
        let Some(w) = rest.iter().find(|w| !w.text.starts_with('-')) else {
            return;
        };
        for prefix in ["npm:", "jsr:"] {
            if let Some(spec) = w.text.strip_prefix(prefix) {
                if let Pin::Unpinned(why) = npm_pin(spec) {
                    self.unpinned("package", w, "deno run", &w.text, &why);
                }
            }
        }
    }

    /// `uvx` and `uv tool run` ([`FirstWord::Package`]), `uv run`
    /// ([`FirstWord::Command`]: only its `--with` packages are fetched).
    pub(super) fn python_runner(&mut self, runner: &str, rest: &[Word], first: FirstWord) {
        const VALUED: [&str; 24] = [
            "--python",
            "-p",
            "--index",
            "--index-url",
            "--extra-index-url",
            "--default-index",
            "--find-links",
            "-f",
            "--directory",
            "--project",
            "--config-file",
            "--cache-dir",
            "--with-editable",
            "--with-requirements",
            "--python-preference",
            "--color",
            "--exclude-newer",
            "--index-strategy",
            "--keyring-provider",
            "--resolution",
            "--prerelease",
            "--link-mode",
            "--env-file",
            "--config-setting",
        ];
        let mut from = None;
        let mut withs = Vec::new();
        let mut positional = None;
        let mut upgrade = None;
        let mut i = 0;
        while i < rest.len() {
            let w = &rest[i];
            let t = w.text.as_str();
            if t == "--" {
                positional = rest.get(i + 1);
                break;
            }
            let (flag, inline) = match t.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v)),
                _ => (t, None),
            };
            match flag {
                "--from" | "--with" | "-w" => {
                    let spec = match inline {
                        Some(v) => Some((w, v.to_string())),
                        None => rest.get(i + 1).map(|n| (n, n.text.clone())),
                    };
                    if let Some(s) = spec {
                        if flag == "--from" {
                            from = Some(s);
                        } else {
                            withs.push(s);
                        }
                    }
                    i += if inline.is_some() { 1 } else { 2 };
                    continue;
                }
                "--upgrade" | "-U" => upgrade = Some(w),
                f if VALUED.contains(&f) && inline.is_none() => {
                    i += 2;
                    continue;
                }
                _ => {}
            }
            if !t.starts_with('-') {
                positional = Some(w);
                break;
            }
            i += 1;
        }
        let mut specs = withs;
        if first == FirstWord::Package {
            match from {
                Some(f) => specs.insert(0, f),
                None => specs.extend(positional.map(|w| (w, w.text.clone()))),
            }
        }
        for (w, spec) in specs {
            // `uvx` also takes `pkg@1.2.3`.
            if let Pin::Unpinned(why) = python_pin(
                &spec,
                match first {
                    FirstWord::Package => AtVersion::Allowed,
                    FirstWord::Command => AtVersion::NotAllowed,
                },
            ) {
                self.unpinned("package", w, runner, &spec, &why);
            }
        }
        if let Some(w) = upgrade {
            self.unpinned(
                "package",
                w,
                runner,
                &w.text,
                "--upgrade fetches the newest release at every start",
            );
        }
    }

    pub(super) fn pipx(&mut self, rest: &[Word]) {
        let mut i = 0;
        let mut spec = None;
        while i < rest.len() {
            let t = rest[i].text.as_str();
            if t == "--spec" {
                spec = rest.get(i + 1);
                break;
            }
            if let Some(v) = t.strip_prefix("--spec=") {
                if let Pin::Unpinned(why) = python_pin(v, AtVersion::NotAllowed) {
                    self.unpinned("package", &rest[i], "pipx run", v, &why);
                }
                return;
            }
            if matches!(t, "--python" | "--index-url" | "--pip-args" | "-i") {
                i += 2;
                continue;
            }
            if !t.starts_with('-') {
                spec = Some(&rest[i]);
                break;
            }
            i += 1;
        }
        if let Some(w) = spec {
            if let Pin::Unpinned(why) = python_pin(&w.text, AtVersion::NotAllowed) {
                self.unpinned("package", w, "pipx run", &w.text, &why);
            }
        }
    }

    /// `docker run IMAGE` (and podman, nerdctl): an image by tag, or with
    /// no tag (latest), is whatever the registry holds today.
    pub(super) fn container(&mut self, prog: &str, rest: &[Word]) {
        const GLOBAL: [&str; 6] = ["--context", "-c", "--host", "-H", "--config", "--log-level"];
        const VALUED: [&str; 48] = [
            "-e",
            "--env",
            "--env-file",
            "-v",
            "--volume",
            "--name",
            "-p",
            "--publish",
            "--network",
            "--net",
            "--mount",
            "-w",
            "--workdir",
            "-u",
            "--user",
            "--entrypoint",
            "--platform",
            "-l",
            "--label",
            "--label-file",
            "--cpus",
            "-m",
            "--memory",
            "--add-host",
            "--cap-add",
            "--cap-drop",
            "--device",
            "--dns",
            "-h",
            "--hostname",
            "--ipc",
            "--pid",
            "--restart",
            "--runtime",
            "--security-opt",
            "--tmpfs",
            "--ulimit",
            "--log-driver",
            "--log-opt",
            "--pull",
            "--shm-size",
            "--gpus",
            "--stop-signal",
            "--cidfile",
            "--group-add",
            "--expose",
            "--volumes-from",
            "--userns",
        ];
        let mut i = 0;
        while i < rest.len() && rest[i].text.starts_with('-') {
            i += if GLOBAL.contains(&rest[i].text.as_str()) {
                2
            } else {
                1
            };
        }
        match rest.get(i).map(|w| w.text.as_str()) {
            Some("run") => i += 1,
            Some("container") if rest.get(i + 1).is_some_and(|w| w.text == "run") => i += 2,
            _ => return,
        }
        while i < rest.len() {
            let t = rest[i].text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if !t.starts_with('-') {
                break;
            }
            i += if VALUED.contains(&t) { 2 } else { 1 };
        }
        let Some(w) = rest.get(i) else { return };
        let image = w.text.as_str();
        if image.contains("@sha256:") {
            return;
        }
        let name = image.rsplit('/').next().unwrap_or(image);
        let why = match name.split_once(':') {
            None => {
                "no tag: the image is whatever :latest is today; pin a digest (image@sha256:...)"
                    .to_string()
            }
            Some((_, "latest")) => {
                "tag latest moves with every push; pin a digest (image@sha256:...)".to_string()
            }
            Some((_, tag)) => format!(
                "tag {tag} can be pushed again with other content; pin a digest (image@sha256:...)"
            ),
        };
        self.unpinned("image", w, &format!("{prog} run"), image, &why);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{loud, M};
    use super::*;

    #[test]
    fn package_runners() {
        for (entry, want) in [
            (
                r#"{"command": "npx", "args": ["-y", "pkg"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "npx", "args": ["pkg@latest"]}"#,
                vec![(M, "/args/0")],
            ),
            (
                r#"{"command": "npx", "args": ["-y", "@s/p@1.2.3", "--x"]}"#,
                vec![],
            ),
            (
                r#"{"command": "npx", "args": ["-y", "@s/p@^1.2.3"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "npx", "args": ["-p", "a@1.0.0", "bin-name"]}"#,
                vec![],
            ),
            (
                r#"{"command": "npx.cmd", "args": ["--package=a", "b"]}"#,
                vec![(M, "/args/0")],
            ),
            (r#"{"command": "npx", "args": ["./local"]}"#, vec![]),
            (
                r#"{"command": "bunx", "args": ["pkg"]}"#,
                vec![(M, "/args/0")],
            ),
            (
                r#"{"command": "pnpm", "args": ["dlx", "pkg"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "npm", "args": ["exec", "--", "pkg@2.0.0"]}"#,
                vec![],
            ),
            (
                r#"{"command": "uvx", "args": ["mcp-server-fetch"]}"#,
                vec![(M, "/args/0")],
            ),
            (
                r#"{"command": "uvx", "args": ["mcp-server-fetch==0.6.2"]}"#,
                vec![],
            ),
            (
                r#"{"command": "uvx", "args": ["mcp-server-fetch@0.6.2"]}"#,
                vec![],
            ),
            (
                r#"{"command": "uvx", "args": ["tool@latest"]}"#,
                vec![(M, "/args/0")],
            ),
            (
                r#"{"command": "uvx", "args": ["--from", "pkg==1.2.3", "cmd"]}"#,
                vec![],
            ),
            (
                r#"{"command": "uvx", "args": ["--from", "pkg>=1", "cmd"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "uvx", "args": ["--python", "3.12", "a==1"]}"#,
                vec![],
            ),
            (
                r#"{"command": "uv", "args": ["tool", "run", "pkg"]}"#,
                vec![(M, "/args/2")],
            ),
            (
                r#"{"command": "uv", "args": ["run", "--with", "x", "s.py"]}"#,
                vec![(M, "/args/2")],
            ),
            (
                r#"{"command": "uv", "args": ["run", "--directory", "d", "server"]}"#,
                vec![],
            ),
            (
                r#"{"command": "pipx", "args": ["run", "pkg"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "pipx", "args": ["run", "pkg==1.0"]}"#,
                vec![],
            ),
            (
                r#"{"command": "docker", "args": ["run", "-i", "--rm", "-e", "X", "img"]}"#,
                vec![(M, "/args/5")],
            ),
            (
                r#"{"command": "docker", "args": ["run", "ghcr.io/o/img:1.2"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "docker", "args": ["run", "localhost:5000/img"]}"#,
                vec![(M, "/args/1")],
            ),
            (
                r#"{"command": "docker", "args": ["run", "img:1@sha256:abc"]}"#,
                vec![],
            ),
            (
                r#"{"command": ["node", "/x/node_modules/.bin/s", "<SANDBOX>"]}"#,
                vec![],
            ),
            (
                r#"{"command": ["<INSTALL_DIR>/bin/mcp-server-time", "--local-timezone", "UTC"]}"#,
                vec![],
            ),
            (
                r#"{"command": "npx -y some-server"}"#,
                vec![(M, "/command")],
            ),
        ] {
            let want: Vec<(Severity, String)> =
                want.into_iter().map(|(s, p)| (s, p.to_string())).collect();
            assert_eq!(loud(entry), want, "{entry}");
        }
    }
}
