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
//!
//! [`command`] reads a command line and what it wraps (shells, inline
//! code, downloads piped to a shell); [`runners`] finds the packages and
//! images that package runners fetch, and [`pin`] judges whether each
//! names one release; [`url`] reviews addresses; [`secrets`] and
//! [`credential_shapes`] find credentials written inline, and redact them;
//! [`agree`] finds configs that disagree on a server, or name one launch
//! twice.

mod agree;
mod command;
mod credential_shapes;
mod pin;
mod runners;
mod secrets;
mod url;

use super::{Context, Detector, ServerView};
use crate::finding::{Class, Finding, Severity};
use crate::json::{push_pointer_token, Object, Value};

use command::command_words;
use secrets::{name_words, redact, scrub};
pub(crate) use secrets::{named_secret, secret_ranges};

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
        .launch(s.launch, Written::InInventory);
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
            .launch(&c.entry, Written::InClientConfig);
        }
        agree::disagreements(cx.configs, out);
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

/// Where a launch entry was read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    /// In the inventory: how a capture reached the server, not a config a
    /// client acts on.
    InInventory,
    /// In an MCP client config of the repository.
    InClientConfig,
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

    /// Reviews one entry's launch fields; the stdio command of a client
    /// config is reported at info.
    fn launch(&mut self, o: &Object, written: Written) {
        let words = command_words(o);
        if written == Written::InClientConfig && !words.is_empty() {
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
        if let Some((key, url)) = crate::config::endpoint(o) {
            self.url(url, &format!("/{key}"), key);
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
}

fn pointer(tokens: &[&str]) -> String {
    let mut p = String::new();
    for t in tokens {
        p.push('/');
        push_pointer_token(&mut p, t);
    }
    p
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClientServer;
    use crate::inventory::Inventory;
    use crate::lock::Lock;

    /// Server `s` of `.mcp.json`, its config `entry` holding keys at
    /// `duplicates` more than once.
    fn config(entry: Object, duplicates: Vec<String>) -> ClientServer {
        ClientServer {
            name: "s".into(),
            source: ".mcp.json".into(),
            pointer: "/mcpServers/s".into(),
            entry,
            duplicates,
        }
    }

    /// What the detector finds in `configs` alone.
    fn found(configs: &[ClientServer]) -> Vec<Finding> {
        let inventory = Inventory::default();
        let lock = Lock::default();
        let cx = Context {
            inventory: &inventory,
            lock: &lock,
            configs,
        };
        let mut out = Vec::new();
        Transport.inventory(&cx, &mut out);
        out
    }

    /// What the detector finds in the config `entry` of one server.
    pub(super) fn review(entry: &str) -> Vec<Finding> {
        let (v, _) = crate::json::parse(entry.as_bytes()).unwrap();
        found(&[config(v.as_object().unwrap().clone(), Vec::new())])
    }

    /// (severity, field) of every finding above info.
    pub(super) fn loud(entry: &str) -> Vec<(Severity, String)> {
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

    pub(super) const M: Severity = Severity::Medium;
    pub(super) const H: Severity = Severity::High;

    pub(super) const GHP: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

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
    fn config_duplicates_are_ambiguous() {
        let configs = [config(Object::new(), vec![String::new(), "/env/K".into()])];
        let got: Vec<(Class, Option<String>)> = found(&configs)
            .into_iter()
            .map(|f| (f.class, f.field))
            .collect();
        assert_eq!(
            got,
            [
                (Class::Ambiguous, None),
                (Class::Ambiguous, Some("/env/K".into()))
            ]
        );
    }
}
