//! Command lines: what a client runs, read as words (nothing is executed).
//! The program decides how the rest is read: wrappers (`env`, `sudo`),
//! shells and `cmd /c` whose script is read in turn, inline code given to
//! an interpreter, package runners, and a download piped into a shell.

use super::pin::is_exact_version;
use super::runners::FirstWord;
use super::secrets::scrub;
use super::{Review, Word, MAX_DEPTH};
use crate::finding::Severity;
use crate::json::{Object, Value};

impl Review<'_> {
    /// Reviews a command line (program first).
    pub(super) fn command(&mut self, words: &[Word], depth: usize) {
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
            "uvx" => self.python_runner("uvx", rest, FirstWord::Package),
            "uv" if is_sub(rest, &["tool"]) && is_sub(&rest[1..], &["run"]) => {
                self.python_runner("uv tool run", &rest[2..], FirstWord::Package)
            }
            "uv" if is_sub(rest, &["run"]) => {
                self.python_runner("uv run", &rest[1..], FirstWord::Command)
            }
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
    pub(super) fn script(&mut self, text: &Word, depth: usize) {
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

    pub(super) fn wrapper(&mut self, at: &Word, how: &str, script: &[Word]) {
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
}

/// The command line of an entry: `command` (a string, or an array as
/// inventories write it) followed by `args`.
pub(super) fn command_words(o: &Object) -> Vec<Word> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{loud, review, H, M};
    use super::*;

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
}
