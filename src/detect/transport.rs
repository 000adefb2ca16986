//! Transport review: how a client reaches each server, from the MCP client
//! configs in the repository and from the inventory's launch fields.
//!
//! A server entry is itself something to review: a command the client
//! runs (stdio), a package fetched anew at every start (`npx -y pkg`,
//! `uvx pkg`, an image by tag), a script run through a shell, plain http
//! to a remote host, or a credential written into a file that lives in
//! git. Nothing is executed; commands are read as words. Secrets are
//! never shown: evidence carries a redacted form (a few leading
//! characters and the length).

use std::ops::Range;

use super::{Context, Detector, ServerView};
use crate::finding::{Class, Finding, Severity};
use crate::json::{push_pointer_token, Object, Value};

/// Reviews client-config entries and inventory launch fields.
pub struct Transport;

impl Detector for Transport {
    fn depends(&self, level: super::Level) -> super::Depends {
        match level {
            // The launch as the inventory recorded it, and its file.
            super::Level::Server => super::Depends::Inventory,
            super::Level::Tool => super::Depends::Nothing,
            // The client configs: every run.
            super::Level::Inventory => super::Depends::Anything,
        }
    }

    fn name(&self) -> &'static str {
        "transport"
    }

    fn server(&self, cx: &Context<'_>, s: &ServerView<'_>, out: &mut Vec<Finding>) {
        let place = match cx.inventory.servers.get(s.server) {
            Some(server) => format!("in {}", server.source.display()),
            None => "in the inventory".to_string(),
        };
        // The inventory records how a capture reached the server, not a
        // config a client acts on: a stdio command there is not news, so
        // only the risky shapes are reported.
        Review {
            server: s.server,
            place,
            out,
        }
        .launch(s.launch, false);
    }

    fn inventory(&self, cx: &Context<'_>, out: &mut Vec<Finding>) {
        for c in cx.configs {
            let place = config_place(c);
            for d in &c.duplicates {
                let (field, what) = if d.is_empty() {
                    (None, "the server is defined twice".to_string())
                } else {
                    (Some(d.clone()), format!("key {d} is written twice"))
                };
                out.push(Finding {
                    class: Class::Ambiguous,
                    severity: Severity::High,
                    server: c.name.clone(),
                    tool: None,
                    field,
                    message: format!(
                        "`{}`: {what} in its client config: clients may act on either value, and only the last is reviewed",
                        c.name
                    ),
                    evidence: vec![place.clone()],
                });
            }
            Review {
                server: &c.name,
                place,
                out,
            }
            .launch(&c.entry, true);
        }
    }
}

/// The first evidence line of a finding about a client-config entry; a
/// report that points into files recognises those findings by it.
pub fn config_place(c: &crate::config::ClientServer) -> String {
    format!("in {} at {}", c.source.display(), c.pointer)
}

/// One word of a command line and where it is written.
#[derive(Clone, Debug)]
struct Word {
    text: String,
    pointer: String,
}

/// Findings about one server entry.
struct Review<'a> {
    server: &'a str,
    /// Where the entry is written (`in FILE` or `in FILE at POINTER`).
    place: String,
    out: &'a mut Vec<Finding>,
}

/// How deep wrappers (`cmd /c sh -c "npx ..."`) are followed.
const MAX_DEPTH: usize = 4;

impl Review<'_> {
    fn push(&mut self, severity: Severity, field: &str, message: String, detail: Vec<String>) {
        let mut evidence = vec![self.place.clone()];
        evidence.extend(detail);
        self.out.push(Finding {
            class: Class::Transport,
            severity,
            server: self.server.to_string(),
            tool: None,
            field: Some(field.to_string()),
            message,
            evidence,
        });
    }

    /// Reviews one entry's launch fields; `config` for a client config
    /// (whose stdio command is reported at info).
    fn launch(&mut self, o: &Object, config: bool) {
        let words = command_words(o);
        if config && !words.is_empty() {
            // Quoted where a word has blanks, so that `sh -c 'a | b'`
            // reads as it runs.
            let line: Vec<String> = words
                .iter()
                .map(|w| {
                    if w.text.contains(char::is_whitespace) {
                        format!("'{}'", w.text)
                    } else {
                        w.text.clone()
                    }
                })
                .collect();
            self.push(
                Severity::Info,
                &words[0].pointer,
                format!(
                    "`{}` is a command the client runs (stdio): it starts with the user's rights",
                    self.server
                ),
                vec![format!("runs: {}", scrub(&line.join(" ")))],
            );
        }
        self.command(&words, 0);
        if let Some(url) = o.get("url").and_then(Value::as_str) {
            self.url(url, "/url", "url");
        }
        for (key, what) in [("env", "env"), ("headers", "header")] {
            let Some(map) = o.get(key).and_then(Value::as_object) else {
                continue;
            };
            for (name, v) in map.iter() {
                let Some(v) = v.as_str() else { continue };
                let pointer = pointer(&[key, name]);
                let place = format!("{what} {name}");
                match named_secret(name, v) {
                    Some(why) => self.secret(&pointer, &place, &[v], why),
                    None => self.secrets_in(v, &pointer, &place),
                }
                if key == "env" {
                    self.loads_code(name, v, &pointer);
                }
                // An http proxy is plain http by design: https still
                // travels through it encrypted.
                if key == "env" && name_words(name).last().map(String::as_str) != Some("proxy") {
                    self.url_in_text(v, &pointer, &format!("env {name}"));
                }
            }
        }
    }

    /// An environment variable that makes the program (or the shell or
    /// interpreter it starts) load and run code of the variable's
    /// choosing: whoever sets it decides what runs, whatever the command
    /// says.
    fn loads_code(&mut self, name: &str, value: &str, pointer: &str) {
        let Some(what) = code_loading_variable(name) else {
            return;
        };
        self.push(
            Severity::High,
            pointer,
            format!(
                "`{}` sets {}, which {what}: the command shown is not all that runs",
                self.server,
                crate::text::escape_display(name)
            ),
            vec![format!("value: {}", scrub(value))],
        );
    }

    /// A secret finding; `parts` are the secret strings, shown redacted.
    fn secret(&mut self, field: &str, place: &str, parts: &[&str], why: String) {
        let shown: Vec<String> = parts.iter().map(|p| redact(p)).collect();
        self.push(
            Severity::High,
            field,
            format!(
                "`{}` has a secret inline in {place} ({why}): anyone who can read the file, or its git history, can use it; refer to it instead (${{env:NAME}}, ${{input:NAME}})",
                self.server
            ),
            vec![format!("value: {}", shown.join(", "))],
        );
    }

    /// Secrets found in free text (an argument, a value under an innocent
    /// name): one finding naming the first kind, every part redacted.
    fn secrets_in(&mut self, text: &str, field: &str, place: &str) {
        let found = secret_ranges(text);
        if let Some((_, why)) = found.first() {
            let parts: Vec<&str> = found.iter().map(|(r, _)| &text[r.clone()]).collect();
            self.secret(field, place, &parts, why.clone());
        }
    }

    /// Reviews a command line (program first).
    fn command(&mut self, words: &[Word], depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(first) = words.first() else { return };
        if depth == 0 {
            self.args_secrets_and_urls(words);
        }
        let prog = program(&first.text);
        let rest = &words[1..];
        match prog.as_str() {
            "env" | "sudo" | "doas" | "nohup" | "exec" => {
                let skip = rest
                    .iter()
                    .position(|w| !w.text.starts_with('-') && !is_assignment(&w.text))
                    .unwrap_or(rest.len());
                self.command(&rest[skip..], depth + 1);
            }
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "busybox" => {
                self.shell(&prog, rest, depth);
            }
            "cmd" => {
                if let Some(i) = rest.iter().position(|w| {
                    let l = w.text.to_ascii_lowercase();
                    l == "/c" || l == "/k"
                }) {
                    self.wrapper(&rest[i], &format!("cmd {}", rest[i].text), &rest[i + 1..]);
                    self.inner(&rest[i + 1..], depth);
                }
            }
            "powershell" | "pwsh" => self.powershell(rest, depth),
            p if is_inline_interpreter(p, rest) => {
                let i = rest
                    .iter()
                    .position(|w| inline_flag(p, &w.text))
                    .expect("checked");
                let code = rest.get(i + 1).unwrap_or(&rest[i]);
                self.push(
                    Severity::High,
                    &code.pointer,
                    format!(
                        "`{}` runs inline code ({p} {}): a program written into the config, not a package anyone reviewed",
                        self.server, rest[i].text
                    ),
                    vec![format!("code: {}", scrub(&code.text))],
                );
            }
            "npx" | "pnpx" => self.node_runner(&prog, rest),
            "npm" if is_sub(rest, &["exec", "x"]) => self.node_runner("npm exec", &rest[1..]),
            "pnpm" | "yarn" if is_sub(rest, &["dlx"]) => {
                self.node_runner(&format!("{prog} dlx"), &rest[1..])
            }
            "bunx" => self.node_runner("bunx", rest),
            "bun" if is_sub(rest, &["x"]) => self.node_runner("bun x", &rest[1..]),
            "deno" if is_sub(rest, &["run"]) => self.deno(&rest[1..]),
            "uvx" => self.python_runner("uvx", rest, true),
            "uv" if is_sub(rest, &["tool"]) && is_sub(&rest[1..], &["run"]) => {
                self.python_runner("uv tool run", &rest[2..], true)
            }
            "uv" if is_sub(rest, &["run"]) => self.python_runner("uv run", &rest[1..], false),
            "pipx" if is_sub(rest, &["run"]) => self.pipx(&rest[1..]),
            "docker" | "podman" | "nerdctl" => self.container(&prog, rest),
            "go" if is_sub(rest, &["run"]) => {
                for w in &rest[1..] {
                    if let Some((_, v)) = w.text.rsplit_once('@') {
                        if !w.text.starts_with('-') && !is_exact_version(v.trim_start_matches('v'))
                        {
                            self.unpinned(
                                "package",
                                w,
                                "go run",
                                &w.text,
                                &format!("version `{v}` moves"),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A wrapper's inner command line: the words after `cmd /c`, or one
    /// string of shell text split into commands.
    fn inner(&mut self, words: &[Word], depth: usize) {
        if let [one] = words {
            self.script(one, depth);
        } else {
            self.command(words, depth + 1);
        }
    }

    /// Shell text: every simple command in it, each as a command line
    /// (words split on blanks, quotes dropped).
    fn script(&mut self, text: &Word, depth: usize) {
        for segment in split_commands(&text.text) {
            let words: Vec<Word> = shell_words(&segment)
                .into_iter()
                .map(|t| Word {
                    text: t,
                    pointer: text.pointer.clone(),
                })
                .collect();
            self.command(&words, depth + 1);
        }
        if let Some(pipe) = download_to_shell(&text.text) {
            self.push(
                Severity::High,
                &text.pointer,
                format!(
                    "`{}` downloads a script and runs it ({pipe}): whatever the server at that address sends is executed",
                    self.server
                ),
                vec![format!("script: {}", scrub(&text.text))],
            );
        }
    }

    fn wrapper(&mut self, at: &Word, how: &str, script: &[Word]) {
        let text: Vec<String> = script.iter().map(|w| scrub(&w.text)).collect();
        self.push(
            Severity::High,
            &at.pointer,
            format!(
                "`{}` runs its command through a shell ({how}): a script in the config, read by a shell, can do anything a user can",
                self.server
            ),
            vec![format!("script: {}", text.join(" "))],
        );
    }

    fn shell(&mut self, prog: &str, rest: &[Word], depth: usize) {
        // `busybox sh -c`: the applet is the shell.
        let rest = if prog == "busybox" {
            match rest.first() {
                Some(w) if matches!(program(&w.text).as_str(), "sh" | "ash" | "bash") => &rest[1..],
                _ => return,
            }
        } else {
            rest
        };
        for (i, w) in rest.iter().enumerate() {
            let t = w.text.as_str();
            let is_c = t == "--command"
                || (t.starts_with('-')
                    && !t.starts_with("--")
                    && t[1..].chars().all(|c| c.is_ascii_alphabetic())
                    && t.contains('c'));
            if is_c {
                let script = &rest[i + 1..rest.len().min(i + 2)];
                self.wrapper(w, &format!("{prog} {t}"), script);
                if let Some(s) = script.first() {
                    self.script(s, depth);
                }
                return;
            }
            if !t.starts_with('-') {
                // `bash script.sh`: a local file, not a wrapper.
                return;
            }
        }
    }

    fn powershell(&mut self, rest: &[Word], depth: usize) {
        for (i, w) in rest.iter().enumerate() {
            let l = w.text.to_ascii_lowercase();
            let abbrev = |full: &str, min: usize| l.len() >= min && full.starts_with(l.as_str());
            if abbrev("-command", 2) {
                self.wrapper(w, &format!("powershell {}", w.text), &rest[i + 1..]);
                self.inner(&rest[i + 1..], depth);
                return;
            }
            if abbrev("-encodedcommand", 2) || l == "-ec" {
                self.push(
                    Severity::High,
                    &w.pointer,
                    format!(
                        "`{}` runs a base64-encoded PowerShell command ({}): a script hidden from review",
                        self.server, w.text
                    ),
                    Vec::new(),
                );
                return;
            }
        }
    }

    fn unpinned(&mut self, what: &str, at: &Word, runner: &str, spec: &str, why: &str) {
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
    fn node_runner(&mut self, runner: &str, rest: &[Word]) {
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

    fn deno(&mut self, rest: &[Word]) {
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

    /// `uvx` and `uv tool run` (`tool`: the first word is a package),
    /// `uv run` (only its `--with` packages are fetched).
    fn python_runner(&mut self, runner: &str, rest: &[Word], tool: bool) {
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
        if tool {
            match from {
                Some(f) => specs.insert(0, f),
                None => specs.extend(positional.map(|w| (w, w.text.clone()))),
            }
        }
        for (w, spec) in specs {
            // `uvx` also takes `pkg@1.2.3`.
            if let Pin::Unpinned(why) = python_pin(&spec, tool) {
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

    fn pipx(&mut self, rest: &[Word]) {
        let mut i = 0;
        let mut spec = None;
        while i < rest.len() {
            let t = rest[i].text.as_str();
            if t == "--spec" {
                spec = rest.get(i + 1);
                break;
            }
            if let Some(v) = t.strip_prefix("--spec=") {
                if let Pin::Unpinned(why) = python_pin(v, false) {
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
            if let Pin::Unpinned(why) = python_pin(&w.text, false) {
                self.unpinned("package", w, "pipx run", &w.text, &why);
            }
        }
    }

    /// `docker run IMAGE` (and podman, nerdctl): an image by tag, or with
    /// no tag (latest), is whatever the registry holds today.
    fn container(&mut self, prog: &str, rest: &[Word]) {
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

    /// Secrets and plain-http URLs in the arguments of a command line.
    fn args_secrets_and_urls(&mut self, words: &[Word]) {
        let mut prev: Option<&str> = None;
        for w in words {
            let field = w.pointer.clone();
            let place = format!("argument {field}");
            // `--api-key VALUE`: the name is the word before.
            let flag = prev
                .and_then(|p| p.strip_prefix('-'))
                .map(|p| p.trim_start_matches('-'))
                .filter(|f| !f.contains('=') && !w.text.starts_with('-'));
            match flag.and_then(|f| named_secret(f, &w.text)) {
                Some(why) => self.secret(&field, &place, &[&w.text], why),
                None => self.secrets_in(&w.text, &field, &place),
            }
            self.url_in_text(&w.text, &field, &format!("argument {field}"));
            prev = Some(&w.text);
        }
    }

    fn url_in_text(&mut self, text: &str, field: &str, place: &str) {
        for url in text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ',')) {
            let lower = url.to_ascii_lowercase();
            if lower.starts_with("http://") || lower.starts_with("ws://") {
                self.url(url, field, place);
            }
        }
    }

    fn url(&mut self, url: &str, field: &str, place: &str) {
        let Some((scheme, rest)) = url.split_once("://") else {
            return;
        };
        let scheme = scheme.to_ascii_lowercase();
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            if let Some((_, password)) = userinfo.split_once(':') {
                if literal(password) && password.len() >= 4 {
                    self.secret(field, place, &[password], "a password in the URL".into());
                }
            }
        }
        let query = rest.split('#').next().unwrap_or("").split_once('?');
        for pair in query.map(|(_, q)| q).unwrap_or("").split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let place = format!("{place}, query parameter {k}");
            match named_secret(k, v) {
                Some(why) => self.secret(field, &place, &[v], why),
                None => self.secrets_in(v, field, &place),
            }
        }
        if scheme != "http" && scheme != "ws" {
            return;
        }
        let host = host_of(authority);
        let shown = show_url(url);
        if host.contains('$') || host.contains('{') || host.contains('%') {
            self.push(
                Severity::Medium,
                field,
                format!(
                    "`{}` talks plain {scheme} to a host given by a variable ({place}): unless it is loopback, anyone on the path can read and change every message",
                    self.server
                ),
                vec![format!("url: {shown}")],
            );
            return;
        }
        if is_loopback(&host) {
            return;
        }
        self.push(
            Severity::High,
            field,
            format!(
                "`{}` talks plain {scheme} to {host} ({place}): anyone on the path can read and change every descriptor, call and result",
                self.server
            ),
            vec![format!("url: {shown}")],
        );
    }
}

// ---------------------------------------------------------------------------
// Command lines

/// The command line of an entry: `command` (a string, or an array as
/// inventories write it) followed by `args`.
fn command_words(o: &Object) -> Vec<Word> {
    let mut words = Vec::new();
    match o.get("command") {
        // A string with blanks is split: some clients accept
        // `"command": "npx -y pkg"`, and a path with blanks only loses
        // precision here, nothing more.
        Some(Value::String(s)) => words.extend(s.split_whitespace().map(|t| Word {
            text: t.to_string(),
            pointer: "/command".into(),
        })),
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                if let Some(s) = v.as_str() {
                    words.push(Word {
                        text: s.to_string(),
                        pointer: format!("/command/{i}"),
                    });
                }
            }
        }
        _ => {}
    }
    if let Some(items) = o.get("args").and_then(Value::as_array) {
        for (i, v) in items.iter().enumerate() {
            if let Some(s) = v.as_str() {
                words.push(Word {
                    text: s.to_string(),
                    pointer: format!("/args/{i}"),
                });
            }
        }
    }
    words
}

fn pointer(tokens: &[&str]) -> String {
    let mut p = String::new();
    for t in tokens {
        p.push('/');
        push_pointer_token(&mut p, t);
    }
    p
}

/// A program's name without folders and Windows suffixes, lowercase.
fn program(path: &str) -> String {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = base.to_ascii_lowercase();
    for suffix in [".exe", ".cmd", ".bat", ".ps1"] {
        if let Some(stem) = lower.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    lower
}

fn is_sub(rest: &[Word], names: &[&str]) -> bool {
    rest.first()
        .is_some_and(|w| names.contains(&w.text.as_str()))
}

fn is_assignment(t: &str) -> bool {
    t.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_interpreter(p: &str) -> bool {
    let python = p
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    python || matches!(p, "node" | "nodejs" | "perl" | "ruby" | "php")
}

fn inline_flag(p: &str, t: &str) -> bool {
    if p.starts_with("python") {
        t == "-c"
    } else if p == "php" {
        t == "-r"
    } else {
        matches!(t, "-e" | "--eval" | "-p" | "--print")
    }
}

fn is_inline_interpreter(p: &str, rest: &[Word]) -> bool {
    if !is_interpreter(p) {
        return false;
    }
    // Only options before the script: `node server.js -e x` passes `-e` on.
    for w in rest {
        if inline_flag(p, &w.text) {
            return true;
        }
        if !w.text.starts_with('-') {
            return false;
        }
    }
    false
}

/// Splits shell text into simple commands at `;`, `&&`, `||`, `|`, `&`
/// and newlines (quotes respected).
fn split_commands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                cur.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                ';' | '|' | '&' | '\n' | '(' | ')' | '`' => {
                    if !cur.trim().is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    cur.clear();
                }
                c => cur.push(c),
            },
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// Words of one simple command, quotes removed (no expansion).
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                started = false;
            }
            None => cur.push(c),
        }
    }
    if started || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `curl ... | sh`, `wget -O- ... | bash`, `sh <(curl ...)`,
/// `irm ... | iex`: the text of the downloader and the shell, if present.
fn download_to_shell(s: &str) -> Option<String> {
    const FETCH: [&str; 6] = [
        "curl",
        "wget",
        "iwr",
        "irm",
        "invoke-webrequest",
        "invoke-restmethod",
    ];
    const RUN: [&str; 13] = [
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "iex",
        "invoke-expression",
        "python",
        "python3",
        "node",
        "perl",
        "ruby",
    ];
    let first_word = |seg: &str| -> Option<String> {
        let words = shell_words(seg);
        let mut it = words
            .iter()
            .map(|w| program(w))
            .skip_while(|w| w == "sudo" || w == "env" || w.starts_with('-'));
        it.next()
    };
    let lower = s.to_ascii_lowercase();
    let segments: Vec<&str> = lower.split('|').filter(|p| !p.is_empty()).collect();
    for pair in segments.windows(2) {
        let fetches = shell_words(pair[0])
            .iter()
            .any(|w| FETCH.contains(&program(w).as_str()));
        if let (true, Some(run)) = (fetches, first_word(pair[1])) {
            if RUN.contains(&run.as_str()) {
                let fetch = shell_words(pair[0])
                    .into_iter()
                    .map(|w| program(&w))
                    .find(|w| FETCH.contains(&w.as_str()))
                    .unwrap_or_default();
                return Some(format!("{fetch} ... | {run}"));
            }
        }
    }
    for fetch in FETCH {
        for open in ["<(", "$(", "`"] {
            if lower.contains(&format!("{open}{fetch} ")) {
                return Some(format!("{open}{fetch} ...)"));
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------
// Versions

/// Whether a package reference names one release.
#[derive(Debug, PartialEq, Eq)]
enum Pin {
    /// A file on this machine: nothing is fetched.
    Local,
    /// One release, or one commit.
    Pinned,
    /// Anything else, and why.
    Unpinned(String),
}

fn is_local(spec: &str) -> bool {
    spec.starts_with('.')
        || spec.starts_with('/')
        || spec.starts_with('~')
        || spec.starts_with("file:")
        || spec.as_bytes().get(1..3) == Some(b":\\")
}

/// A git or URL reference: pinned when it names a full commit.
fn remote_pin(spec: &str) -> Pin {
    let rev = spec.rsplit(['#', '@']).next().unwrap_or("");
    if rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()) {
        Pin::Pinned
    } else {
        Pin::Unpinned(format!(
            "{spec} names a branch, tag or URL whose content can change; name a full commit"
        ))
    }
}

fn is_url_or_git(spec: &str) -> bool {
    [
        "git+",
        "git:",
        "github:",
        "gitlab:",
        "bitbucket:",
        "http:",
        "https:",
    ]
    .iter()
    .any(|p| spec.starts_with(p))
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build`.
fn is_exact_version(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// An npm package spec: `name@1.2.3` and `@scope/name@1.2.3` are pinned;
/// no version, a range or a tag (`latest`) is not.
fn npm_pin(spec: &str) -> Pin {
    let spec = spec.strip_prefix("npm:").unwrap_or(spec);
    if is_local(spec) {
        return Pin::Local;
    }
    if is_url_or_git(spec) {
        return remote_pin(spec);
    }
    let (scope, rest) = match spec.strip_prefix('@') {
        Some(r) => ("@", r),
        None => ("", spec),
    };
    if scope.is_empty() && rest.contains('/') {
        // `user/repo`: a GitHub shorthand.
        return remote_pin(spec);
    }
    match rest.split_once('@') {
        None => Pin::Unpinned(format!(
            "no version: whatever is newest is fetched; pin one ({spec}@1.2.3)"
        )),
        Some((_, v)) if is_exact_version(v.trim_start_matches(['v', '='])) => Pin::Pinned,
        Some((name, v)) => Pin::Unpinned(format!(
            "version `{v}` is a range or a tag, not one release; pin one ({scope}{name}@1.2.3)"
        )),
    }
}

/// A Python requirement: `name==1.2.3` (or `name@1.2.3` for `uvx`) is
/// pinned; a bare name or a range is not.
fn python_pin(spec: &str, at_form: bool) -> Pin {
    if is_local(spec) {
        return Pin::Local;
    }
    if is_url_or_git(spec) || spec.contains(" @ ") {
        return remote_pin(spec);
    }
    if let Some((name, v)) = spec.split_once("===").or_else(|| spec.split_once("==")) {
        let v = v.trim();
        return if v.is_empty() || v.contains('*') || v.contains(',') {
            Pin::Unpinned(format!(
                "`{spec}` is not one release; pin one ({}==1.2.3)",
                name.trim()
            ))
        } else {
            Pin::Pinned
        };
    }
    if at_form {
        if let Some((name, v)) = spec.split_once('@') {
            return if v.is_empty() || v == "latest" {
                Pin::Unpinned(format!(
                    "`{spec}` asks for the newest release; pin one ({name}==1.2.3)"
                ))
            } else {
                Pin::Pinned
            };
        }
    }
    let name: String = spec
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']'))
        .collect();
    if name.len() == spec.len() {
        Pin::Unpinned(format!(
            "no version: whatever is newest is fetched; pin one ({name}==1.2.3)"
        ))
    } else {
        Pin::Unpinned(format!(
            "`{spec}` is a range, not one release; pin one ({name}==1.2.3)"
        ))
    }
}

// ---------------------------------------------------------------------------
// URLs

fn host_of(authority: &str) -> String {
    let hostport = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(rest) = hostport.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        hostport.split(':').next().unwrap_or(hostport)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// 127.0.0.0/8, `::1` (also as an IPv4-mapped address), `localhost` and
/// names under `.localhost` (RFC 6761).
fn is_loopback(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
        return ip.is_loopback();
    }
    if let Ok(ip) = host.parse::<std::net::Ipv6Addr>() {
        return ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback());
    }
    false
}

/// A URL without its user information and query, which may carry
/// credentials.
fn show_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return scrub(url);
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let tail = &rest[end..];
    let path = tail.split(['?', '#']).next().unwrap_or("");
    let elided = if path.len() < tail.len() { "?…" } else { "" };
    scrub(&format!("{scheme}://{host}{path}{elided}"))
}

// ---------------------------------------------------------------------------
// Secrets

/// The shown form of a secret: its first four characters when it is long
/// enough that they give little away, and its length.
fn redact(v: &str) -> String {
    let n = v.chars().count();
    if n >= 16 {
        let head: String = v.chars().take(4).collect();
        format!("{head}… ({n} chars, redacted)")
    } else {
        format!("… ({n} chars, redacted)")
    }
}

/// Text with every secret-shaped or secret-named part redacted, for
/// evidence that shows a command line or a script.
fn scrub(s: &str) -> String {
    let mut out = s.to_string();
    for (r, _) in secret_ranges(s).into_iter().rev() {
        out.replace_range(r.clone(), &redact(&s[r]));
    }
    out
}

/// What an environment variable makes a program load, when it is one of
/// those that inject code: into the shell (`BASH_ENV`, `ENV`), the dynamic
/// linker (`LD_PRELOAD`...), or an interpreter (`NODE_OPTIONS`,
/// `PYTHONSTARTUP`, `PERL5OPT`...). Matched case-sensitively, as the
/// programs read them.
fn code_loading_variable(name: &str) -> Option<&'static str> {
    Some(match name {
        "BASH_ENV" | "ENV" => "makes a non-interactive shell run a file of its choosing first",
        "PROMPT_COMMAND" | "ZDOTDIR" | "PS4" | "SHELLOPTS" | "BASHOPTS" => {
            "changes what a shell runs"
        }
        "LD_PRELOAD"
        | "LD_AUDIT"
        | "LD_LIBRARY_PATH"
        | "DYLD_INSERT_LIBRARIES"
        | "DYLD_LIBRARY_PATH"
        | "DYLD_FRAMEWORK_PATH"
        | "GCONV_PATH" => "makes the dynamic linker load libraries of its choosing",
        "NODE_OPTIONS" | "NODE_PATH" => "makes Node.js load modules of its choosing",
        "PYTHONSTARTUP" | "PYTHONPATH" | "PYTHONHOME" | "PYTHONUSERBASE" => {
            "makes Python load code of its choosing"
        }
        "PERL5OPT" | "PERL5LIB" | "PERLLIB" => "makes Perl load modules of its choosing",
        "RUBYOPT" | "RUBYLIB" => "makes Ruby load code of its choosing",
        "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS" | "JDK_JAVA_OPTIONS" => {
            "makes the JVM load agents or classes of its choosing"
        }
        "GIT_SSH_COMMAND" | "GIT_EXEC_PATH" | "GIT_CONFIG_PARAMETERS" => "changes what git runs",
        _ => return None,
    })
}

/// Authorization schemes written before a credential.
fn is_scheme(w: &str) -> bool {
    ["bearer", "basic", "token"].contains(&w.to_ascii_lowercase().as_str())
}

/// Where secrets are in a piece of text (an argument, a script, a value),
/// and what each is: by shape anywhere (`ghp_...`, `sk-...`, a JWT), by
/// name (`TOKEN=VALUE`, `--api-key VALUE`, `--token=VALUE`,
/// `Authorization: Bearer VALUE`), and a credential after `Bearer` or
/// `Basic`. Sorted, not overlapping.
pub(crate) fn secret_ranges(text: &str) -> Vec<(Range<usize>, String)> {
    const QUOTES: [char; 2] = ['\'', '"'];
    let mut toks: Vec<Range<usize>> = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (start, c.is_whitespace()) {
            (None, false) => start = Some(i),
            (Some(b), true) => {
                toks.push(b..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        toks.push(b..text.len());
    }
    // A token without its quotes (and a trailing `,` or `;`).
    let core = |r: &Range<usize>| -> Range<usize> {
        let t = &text[r.clone()];
        let head = t.len() - t.trim_start_matches(QUOTES).len();
        let tail = t.len()
            - t.trim_end_matches(|c| QUOTES.contains(&c) || c == ',' || c == ';')
                .len();
        (r.start + head)..(r.end - tail).max(r.start + head)
    };
    // The value that follows token `i`: the next token, past a scheme word.
    let value_after = |i: usize| -> Option<Range<usize>> {
        let mut j = i + 1;
        if toks.get(j).is_some_and(|r| is_scheme(&text[core(r)])) {
            j += 1;
        }
        toks.get(j).map(&core)
    };
    let mut out: Vec<(Range<usize>, String)> = Vec::new();
    for (i, r) in toks.iter().enumerate() {
        let mut at = r.start;
        while at < r.end {
            match shape(&text[at..r.end]) {
                Some((s, kind)) if !s.is_empty() => {
                    out.push((at + s.start..at + s.end, kind));
                    at += s.end;
                }
                _ => break,
            }
        }
        let c = core(r);
        let word = &text[c.clone()];
        let mut named: Vec<(&str, Range<usize>)> = Vec::new();
        for sep in ['=', ':'] {
            if let Some((k, v)) = word.split_once(sep) {
                let key = k.trim_start_matches('-');
                let value = if v.is_empty() || is_scheme(v) {
                    value_after(i)
                } else {
                    let v = &word[k.len() + 1..];
                    let head = v.len() - v.trim_start_matches(QUOTES).len();
                    Some((c.start + k.len() + 1 + head).min(c.end)..c.end)
                };
                if let Some(v) = value {
                    named.push((key, v));
                }
            }
        }
        if word.starts_with('-') && !word.contains(['=', ':']) {
            if let Some(v) = value_after(i).filter(|v| !text[v.clone()].starts_with('-')) {
                named.push((word.trim_start_matches('-'), v));
            }
        }
        for (key, v) in named {
            if !key.is_empty() && !key.contains(char::is_whitespace) {
                if let Some(why) = named_secret(key, &text[v.clone()]) {
                    out.push((v, why));
                }
            }
        }
        if is_scheme(word) && !word.eq_ignore_ascii_case("token") {
            if let Some(v) = value_after(i) {
                let cred = &text[v.clone()];
                if cred.len() >= 8 && literal(cred) && cred.chars().any(|c| !c.is_ascii_lowercase())
                {
                    out.push((v, format!("a {} credential", word.to_ascii_lowercase())));
                }
            }
        }
    }
    out.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
    let mut merged: Vec<(Range<usize>, String)> = Vec::new();
    for (r, why) in out {
        match merged.last_mut() {
            Some((last, _)) if r.start < last.end => last.end = last.end.max(r.end),
            _ => merged.push((r, why)),
        }
    }
    merged
}

/// Words of an identifier: `GITHUB_TOKEN`, `apiKey`, `X-Api-Key`.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let boundary = c.is_ascii_uppercase()
            && i > 0
            && (chars[i - 1].is_ascii_lowercase()
                || (chars[i - 1].is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())));
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Words before `key` that make it a credential (`API_KEY`, not `SORT_KEY`).
const KEY_QUALIFIERS: [&str; 20] = [
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "client",
    "master",
    "service",
    "license",
    "encryption",
    "signing",
    "ssh",
    "app",
    "subscription",
    "account",
    "admin",
    "deploy",
    "personal",
    "bot",
    "session",
];

/// Why a value under `name` is a secret, if it is: a credential name and
/// a literal value (not a reference or a placeholder).
pub(crate) fn named_secret(name: &str, value: &str) -> Option<String> {
    let words = name_words(name);
    let last = words.last()?.as_str();
    let strong = matches!(
        last,
        "token"
            | "secret"
            | "password"
            | "passwd"
            | "passphrase"
            | "credential"
            | "credentials"
            | "apikey"
            | "authorization"
            | "cookie"
            | "pat"
            | "privatekey"
            | "accesstoken"
            | "secretkey"
    ) || (matches!(last, "pass" | "pwd") && words.len() > 1);
    let key = last == "key"
        && (words.len() == 1
            || KEY_QUALIFIERS.contains(&words[words.len() - 2].as_str())
            || looks_random(value));
    if !(strong || key) {
        return None;
    }
    let v = strip_scheme(value);
    if !literal(v) || v.chars().count() < 4 {
        return None;
    }
    if matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "none" | "null" | "on" | "off"
    ) {
        return None;
    }
    Some("named like a credential".to_string())
}

/// `Bearer X`, `Basic X`, `token X` → `X`.
fn strip_scheme(v: &str) -> &str {
    let t = v.trim();
    match t.split_once(' ') {
        Some((s, rest))
            if ["bearer", "basic", "token", "apikey"]
                .contains(&s.to_ascii_lowercase().as_str()) =>
        {
            rest.trim()
        }
        _ => t,
    }
}

/// A value written into the file, as opposed to a reference to one
/// (`${env:X}`, `${input:x}`, `$X`, `%X%`, `{{x}}`), nothing, or a
/// placeholder (`<token>`, `your-key-here`, `dummy-not-a-key`, `xxxx`).
fn literal(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() || v.contains("${") || v.contains("{{") || v.contains("$(") {
        return false;
    }
    if let Some(rest) = v.strip_prefix('$') {
        let rest = rest.strip_prefix("env:").unwrap_or(rest);
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return false;
        }
    }
    if v.len() > 2 && v.starts_with('%') && v.ends_with('%') {
        return false;
    }
    !is_placeholder(v)
}

fn is_placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    if l.starts_with('<') && l.ends_with('>') {
        return true;
    }
    const WORDS: [&str; 16] = [
        "dummy",
        "placeholder",
        "changeme",
        "change-me",
        "change_me",
        "your-",
        "your_",
        "yourkey",
        "yourtoken",
        "example",
        "replace",
        "redacted",
        "not-a-",
        "xxxx",
        "****",
        "....",
    ];
    if WORDS.iter().any(|w| l.contains(w)) {
        return true;
    }
    let distinct: std::collections::BTreeSet<char> = l.chars().collect();
    distinct.len() <= 2
}

fn looks_random(v: &str) -> bool {
    v.len() >= 16
        && !v.contains(char::is_whitespace)
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
}

/// A credential recognised by its shape, anywhere in `s`: where it is, and
/// what kind it is.
fn shape(s: &str) -> Option<(Range<usize>, String)> {
    if s.contains("-----BEGIN") && s.contains("PRIVATE KEY") {
        let start = s.find("-----BEGIN").unwrap_or(0);
        return Some((start..s.len(), "a private key".into()));
    }
    let is_tok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    let mut start = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        match (start, is_tok(c) && i < s.len()) {
            (None, true) => start = Some(i),
            (Some(b), false) => {
                start = None;
                if let Some(hit) = token_shape(&s[b..i]) {
                    return Some((b..i, hit.to_string()));
                }
                // Dots join a JWT's parts, but also glue a prefix onto a
                // token (`key.ghp_...`): try the pieces too.
                let mut at = b;
                for piece in s[b..i].split('.') {
                    if let Some(hit) = token_shape(piece) {
                        return Some((at..at + piece.len(), hit.to_string()));
                    }
                    at += piece.len() + 1;
                }
            }
            _ => {}
        }
    }
    None
}

/// The kind of credential a token is, by its documented prefix or by
/// looking random.
fn token_shape(t: &str) -> Option<&'static str> {
    let t = t.trim_matches(['.', '-']);
    let body = |prefix: &str, min: usize, ok: fn(char) -> bool| -> bool {
        t.strip_prefix(prefix)
            .is_some_and(|b| b.len() >= min && b.chars().all(ok) && !is_placeholder(b))
    };
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let dashed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let upper = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit();
    for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        if body(p, 30, alnum) {
            return Some("a GitHub token");
        }
    }
    if body("github_pat_", 22, word) {
        return Some("a GitHub fine-grained token");
    }
    if body("glpat-", 20, dashed) {
        return Some("a GitLab token");
    }
    for p in ["sk_live_", "rk_live_", "sk_test_", "rk_test_"] {
        if body(p, 16, alnum) {
            return Some("a Stripe key");
        }
    }
    if body("sk-", 20, dashed) {
        return Some("an API secret key (sk-...)");
    }
    for p in [
        "xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xapp-",
    ] {
        if body(p, 10, dashed) {
            return Some("a Slack token");
        }
    }
    for p in ["AKIA", "ASIA"] {
        if t.len() == 20 && body(p, 16, upper) {
            return Some("an AWS access key id");
        }
    }
    if body("AIza", 35, dashed) {
        return Some("a Google API key");
    }
    if body("npm_", 36, alnum) {
        return Some("an npm token");
    }
    if body("hf_", 30, alnum) {
        return Some("a Hugging Face token");
    }
    if body("pypi-", 50, dashed) {
        return Some("a PyPI token");
    }
    let parts: Vec<&str> = t.split('.').collect();
    if parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[1].starts_with("eyJ")
        && parts[..2]
            .iter()
            .all(|p| p.len() >= 10 && p.chars().all(dashed))
        && parts[2].chars().all(dashed)
    {
        return Some("a JSON Web Token");
    }
    if !t.contains('.') && high_entropy(t) {
        return Some("a long random-looking string");
    }
    None
}

/// At least 32 characters with upper and lower case letters and digits,
/// not hexadecimal (digests and commit ids are hex), and close to random:
/// many distinct characters, and the kind of character (upper, lower,
/// digit) changing often, as it does about every other character in a
/// random base62 string and rarely in words (`ThinkingTool-2026`).
fn high_entropy(t: &str) -> bool {
    if t.len() < 32
        || !t.chars().any(|c| c.is_ascii_uppercase())
        || !t.chars().any(|c| c.is_ascii_lowercase())
        || !t.chars().any(|c| c.is_ascii_digit())
        || t.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        || is_placeholder(t)
    {
        return false;
    }
    let mut counts = std::collections::BTreeMap::new();
    for c in t.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = t.len() as f64;
    let entropy: f64 = counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum();
    let kind = |c: char| {
        (
            c.is_ascii_uppercase(),
            c.is_ascii_lowercase(),
            c.is_ascii_digit(),
        )
    };
    let changes = t
        .chars()
        .zip(t.chars().skip(1))
        .filter(|(a, b)| kind(*a) != kind(*b))
        .count();
    entropy >= 4.0 && changes as f64 >= 0.35 * (n - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClientServer;
    use crate::inventory::Inventory;
    use crate::lock::Lock;

    fn review(entry: &str) -> Vec<Finding> {
        let (v, _) = crate::json::parse(entry.as_bytes()).unwrap();
        let configs = vec![ClientServer {
            name: "s".into(),
            source: ".mcp.json".into(),
            pointer: "/mcpServers/s".into(),
            entry: v.as_object().unwrap().clone(),
            duplicates: Vec::new(),
        }];
        let inventory = Inventory::default();
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs: &configs,
        };
        let mut out = Vec::new();
        Transport.inventory(&cx, &mut out);
        out
    }

    /// (severity, field) of every finding above info.
    fn loud(entry: &str) -> Vec<(Severity, String)> {
        review(entry)
            .into_iter()
            .filter(|f| f.severity > Severity::Info)
            .map(|f| (f.severity, f.field.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn environment_variables_that_load_code_are_high() {
        // Issue 22: BASH_ENV (and its kin) decide what runs, whatever the command says.
        for name in [
            "BASH_ENV",
            "ENV",
            "LD_PRELOAD",
            "NODE_OPTIONS",
            "PYTHONSTARTUP",
            "PERL5OPT",
            "DYLD_INSERT_LIBRARIES",
            "JAVA_TOOL_OPTIONS",
            "RUBYOPT",
        ] {
            let entry = format!(r#"{{"command": "srv", "env": {{"{name}": "/tmp/x"}}}}"#);
            assert_eq!(
                loud(&entry),
                vec![(Severity::High, format!("/env/{name}"))],
                "{name}"
            );
        }
        for name in ["NODE_ENV", "PATH_PREFIX", "bash_env", "LOG_LEVEL"] {
            let entry = format!(r#"{{"command": "srv", "env": {{"{name}": "/tmp/x"}}}}"#);
            assert_eq!(loud(&entry), vec![], "{name}");
        }
    }

    const M: Severity = Severity::Medium;
    const H: Severity = Severity::High;

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

    #[test]
    fn shells_and_inline_code() {
        for (entry, want) in [
            (
                r#"{"command": "sh", "args": ["-c", "node s.js"]}"#,
                vec![(H, "/args/0")],
            ),
            (
                r#"{"command": "/bin/bash", "args": ["-lc", "npx -y pkg"]}"#,
                vec![(H, "/args/0"), (M, "/args/1")],
            ),
            (r#"{"command": "bash", "args": ["run.sh"]}"#, vec![]),
            (
                r#"{"command": "cmd", "args": ["/c", "npx", "-y", "pkg"]}"#,
                vec![(H, "/args/0"), (M, "/args/3")],
            ),
            (
                r#"{"command": "powershell", "args": ["-Command", "x"]}"#,
                vec![(H, "/args/0")],
            ),
            (
                r#"{"command": "pwsh", "args": ["-enc", "SQBFAFgA"]}"#,
                vec![(H, "/args/0")],
            ),
            (
                r#"{"command": "python3", "args": ["-c", "import x"]}"#,
                vec![(H, "/args/1")],
            ),
            (
                r#"{"command": "node", "args": ["server.js", "-e", "x"]}"#,
                vec![],
            ),
            (
                r#"{"command": "env", "args": ["A=1", "sh", "-c", "x"]}"#,
                vec![(H, "/args/2")],
            ),
        ] {
            let want: Vec<(Severity, String)> =
                want.into_iter().map(|(s, p)| (s, p.to_string())).collect();
            assert_eq!(loud(entry), want, "{entry}");
        }
        let f = loud(r#"{"command": "sh", "args": ["-c", "curl -fsSL https://x.sh | sudo bash"]}"#);
        assert_eq!(
            f,
            vec![(H, "/args/0".to_string()), (H, "/args/1".to_string())]
        );
        let f = review(r#"{"command": "bash", "args": ["-c", "bash <(wget -qO- https://x)"]}"#);
        assert!(
            f.iter().any(|f| f.message.contains("downloads a script")),
            "{f:?}"
        );
    }

    #[test]
    fn plain_http_to_a_remote_host() {
        for (url, high) in [
            ("http://example.com/mcp", true),
            ("HTTP://Example.com:8080", true),
            ("ws://10.0.0.1/x", true),
            ("https://example.com/mcp", false),
            ("http://127.0.0.1:8080/mcp", false),
            ("http://127.8.9.1/", false),
            ("http://localhost:3000", false),
            ("http://api.localhost/", false),
            ("http://[::1]:9/", false),
            ("http://[::ffff:127.0.0.1]/", false),
            ("http://user@127.0.0.1/", false),
            ("http://127.0.0.1.evil.com/", true),
            ("http://localhost.evil.com/", true),
        ] {
            let entry = format!(r#"{{"type": "http", "url": "{url}"}}"#);
            let got = loud(&entry);
            assert_eq!(got == vec![(H, "/url".to_string())], high, "{url}: {got:?}");
            assert!(high || got.is_empty(), "{url}: {got:?}");
        }
        let got =
            loud(r#"{"command": "npx", "args": ["mcp-remote@1.0.0", "http://evil.com/sse"]}"#);
        assert_eq!(got, vec![(H, "/args/1".to_string())]);
        let got = loud(r#"{"url": "https://x/mcp?v=1&api_key=Zq9vX3mP0aB7cD1e"}"#);
        assert_eq!(got, vec![(H, "/url".to_string())]);
        let f = review(r#"{"url": "https://u:s3cr3tpass@x/mcp?v=1"}"#);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(!format!("{f:?}").contains("s3cr3tpass"), "{f:?}");
        let got = loud(r#"{"url": "http://${input:host}/mcp"}"#);
        assert_eq!(got, vec![(M, "/url".to_string())]);
    }

    const GHP: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    #[test]
    fn inline_secrets_by_name_and_shape_are_redacted() {
        let entry = format!(
            r#"{{"command": "node", "args": ["s.js", "--api-key", "k3yV4lue!", "--token={GHP}"],
                "env": {{"GITHUB_TOKEN": "{GHP}", "DB_PASSWORD": "hunter22", "SORT_KEY": "created_at",
                        "MAX_TOKENS": "4096", "REF": "${{env:GITHUB_TOKEN}}", "PAT": "$PAT",
                        "BRAVE_API_KEY": "dummy-not-a-key", "OTHER": "<your token>",
                        "SLACK": "xoxb-1234567890-abcdefghij", "AWS": "AKIAIOSFODNN7EXAMPL3",
                        "EMPTY": "", "HTTPS_PROXY": "http://proxy.corp:3128",
                        "API_BASE": "http://api.corp/v1"}},
                "headers": {{"Authorization": "Bearer abcdef123456", "X-Api-Key": "${{input:key}}"}}}}"#
        );
        let found = review(&entry);
        let mut fields: Vec<(Severity, String)> = found
            .iter()
            .filter(|f| f.severity > Severity::Info)
            .map(|f| (f.severity, f.field.clone().unwrap()))
            .collect();
        fields.sort();
        let want: Vec<(Severity, String)> = [
            "/args/2",
            "/args/3",
            "/env/API_BASE",
            "/env/AWS",
            "/env/DB_PASSWORD",
            "/env/GITHUB_TOKEN",
            "/env/SLACK",
            "/headers/Authorization",
        ]
        .iter()
        .map(|p| (H, p.to_string()))
        .collect();
        assert_eq!(fields, want);
        for f in &found {
            let all = format!("{} {:?}", f.message, f.evidence);
            for raw in [
                GHP,
                "hunter22",
                "k3yV4lue!",
                "abcdef123456",
                "xoxb-1234567890",
            ] {
                assert!(!all.contains(raw), "{raw} shown in {all}");
            }
        }
        let gh = found
            .iter()
            .find(|f| f.field.as_deref() == Some("/env/GITHUB_TOKEN"))
            .unwrap();
        assert_eq!(gh.evidence[1], "value: ghp_… (40 chars, redacted)");
    }

    #[test]
    fn stdio_is_info_and_shows_a_scrubbed_command_line() {
        let f = review(&format!(
            r#"{{"command": "node", "args": ["s.js", "--token", "{GHP}"]}}"#
        ));
        let info: Vec<&Finding> = f.iter().filter(|f| f.severity == Severity::Info).collect();
        assert_eq!(info.len(), 1);
        assert_eq!(info[0].field.as_deref(), Some("/command"));
        assert_eq!(
            info[0].evidence[1],
            "runs: node s.js --token ghp_… (40 chars, redacted)"
        );
        assert!(review(r#"{"type": "http", "url": "https://x"}"#).is_empty());
        let f = review(r#"{"command": "sh", "args": ["-c", "a | b"]}"#);
        assert_eq!(f[0].severity, Severity::Info);
        assert_eq!(f[0].evidence[1], "runs: sh -c 'a | b'");
    }

    #[test]
    fn secrets_in_text_are_found_by_shape_name_and_scheme() {
        let parts = |t: &str| -> Vec<String> {
            secret_ranges(t)
                .into_iter()
                .map(|(r, _)| t[r].to_string())
                .collect()
        };
        assert_eq!(
            parts("--header 'Authorization: Bearer s3cretvalue123'"),
            ["s3cretvalue123"]
        );
        assert_eq!(parts("Authorization:${AUTH_HEADER}"), Vec::<String>::new());
        assert_eq!(parts("Bearer abc123def456ghi"), ["abc123def456ghi"]);
        assert_eq!(parts("basic configuration"), Vec::<String>::new());
        assert_eq!(
            parts(&format!(
                "GITHUB_TOKEN={GHP} npx -y srv@1.0.0 --api-key k3yV4lue!"
            )),
            [GHP, "k3yV4lue!"]
        );
        assert_eq!(parts("--token=\"abcd1234\","), ["abcd1234"]);
        assert_eq!(parts("-y some-server --port 8080"), Vec::<String>::new());
        assert_eq!(
            scrub(&format!("sh -c 'X={GHP} y'")),
            "sh -c 'X=ghp_… (40 chars, redacted) y'"
        );
    }

    proptest::proptest! {
        /// Any text around a token: no panic, and the token never survives.
        #[test]
        fn scrub_never_panics_and_hides_tokens(
            before in "[ -~\u{80}-\u{10FFFF}]{0,40}",
            after in "[ -~\u{80}-\u{10FFFF}]{0,40}",
        ) {
            let text = format!("{before} {GHP} {after}");
            let shown = scrub(&text);
            proptest::prop_assert!(!shown.contains(GHP), "{}", shown);
            let _ = secret_ranges(&before);
            let _ = review_any_text(&after);
        }
    }

    fn review_any_text(s: &str) -> Vec<Finding> {
        review(&format!(
            r#"{{"command": "sh", "args": ["-c", {}], "url": {}}}"#,
            serde_json::to_string(s).unwrap(),
            serde_json::to_string(s).unwrap()
        ))
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(name_words("X-Api-Key"), ["x", "api", "key"]);
        assert_eq!(name_words("apiKey"), ["api", "key"]);
        assert_eq!(name_words("APIKey"), ["api", "key"]);
        assert_eq!(
            name_words("GITHUB_PERSONAL_ACCESS_TOKEN").last().unwrap(),
            "token"
        );
        assert!(named_secret("KEY_FILE", "/x/y").is_none());
        assert!(named_secret("API_KEY_ID", "abc123").is_none());
        assert!(named_secret("OPENAI_KEY", "Zq9vX3mP0aB7cD1eF2gH").is_some());
    }

    #[test]
    fn shapes_do_not_fire_on_paths_digests_or_versions() {
        for s in [
            "<INSTALL_DIR>/node_modules/.bin/mcp-server-filesystem",
            "sha256:6a1f3c9e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a",
            "@modelcontextprotocol/server-filesystem@2026.8.31",
            "550e8400-e29b-41d4-a716-446655440000",
            "postgresql://127.0.0.1:9/none",
            "mcp-server-sequential-thinking-ThinkingTool-2026",
        ] {
            assert!(shape(s).is_none(), "{s}");
        }
        assert!(shape("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_part").is_some());
        assert!(shape("Zq9vX3mP0aB7cD1eF2gH4iJ6kL8nO0rS").is_some());
        assert!(shape("sk-proj-Ab3dEf6hIj9kLm2nOp5q").is_some());
        let glued = format!("cfg.{GHP}.x");
        assert_eq!(shape(&glued).map(|(r, _)| &glued[r]), Some(GHP));
    }

    #[test]
    fn config_duplicates_are_ambiguous() {
        let configs = vec![ClientServer {
            name: "s".into(),
            source: ".mcp.json".into(),
            pointer: "/mcpServers/s".into(),
            entry: Object::new(),
            duplicates: vec![String::new(), "/env/K".into()],
        }];
        let inventory = Inventory::default();
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs: &configs,
        };
        let mut out = Vec::new();
        Transport.inventory(&cx, &mut out);
        let got: Vec<(Class, Option<String>)> =
            out.into_iter().map(|f| (f.class, f.field)).collect();
        assert_eq!(
            got,
            [
                (Class::Ambiguous, None),
                (Class::Ambiguous, Some("/env/K".into()))
            ]
        );
    }
}
