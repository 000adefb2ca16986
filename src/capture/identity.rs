//! Who capture says it is: the `clientInfo` of the `initialize` request.
//!
//! A server learns the client's name and version in `initialize` and can
//! advertise clean descriptors to a scanner and poisoned ones to a real
//! client. `capture --as` captures each server once per identity named
//! here, with the `clientInfo` that client sends, so that a server that
//! answers by client name shows it ([`crate::detect`]'s `cloaking`).
//!
//! The names are what the clients send, as MCP servers see them (servers
//! that key on `clientInfo.name` check these strings: docs/capture.md,
//! "Capturing as several clients", says where each was observed). Versions
//! are recent releases; a server that keys on a version is still seen
//! answering differently from git-kams's own name.

/// One client identity capture can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The name `--as` takes and capture files record.
    pub key: &'static str,
    /// `clientInfo.name`, as the client sends it.
    pub name: &'static str,
    /// `clientInfo.version`.
    pub version: &'static str,
}

/// git-kams itself: what capture says without `--as`.
pub const GIT_KAMS: Identity = Identity {
    key: "git-kams",
    name: "git-kams",
    version: env!("CARGO_PKG_VERSION"),
};

/// The clients `--as` knows; `--as all` is every one of them.
pub const CLIENTS: [Identity; 6] = [
    Identity {
        key: "claude-code",
        name: "claude-code",
        version: "2.0.14",
    },
    Identity {
        key: "claude-desktop",
        name: "claude-ai",
        version: "0.1.0",
    },
    Identity {
        key: "cursor",
        name: "cursor-vscode",
        version: "1.0.0",
    },
    Identity {
        key: "vscode",
        name: "Visual Studio Code",
        version: "1.104.0",
    },
    Identity {
        key: "codex",
        name: "codex-mcp-client",
        version: "0.44.0",
    },
    Identity {
        key: "gemini-cli",
        name: "gemini-cli-mcp-client",
        version: "0.8.0",
    },
];

/// The identities a `--as` value names: keys separated by commas, `all`
/// for every client, `git-kams` for capture's own name; in the order
/// given, each once.
pub fn parse(list: &str) -> Result<Vec<Identity>, String> {
    let mut out: Vec<Identity> = Vec::new();
    for key in list.split(',').map(str::trim) {
        let found: Vec<Identity> = match key {
            "all" => CLIENTS.to_vec(),
            "git-kams" => vec![GIT_KAMS],
            _ => match CLIENTS.iter().find(|c| c.key == key) {
                Some(c) => vec![*c],
                None => {
                    let keys: Vec<&str> = CLIENTS.iter().map(|c| c.key).collect();
                    return Err(format!(
                        "`{key}` is no client capture knows: one of {}, git-kams, or all",
                        keys.join(", ")
                    ));
                }
            },
        };
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_takes_keys_all_and_git_kams_in_order_each_once() {
        let got = parse("vscode,claude-code,vscode").unwrap();
        assert_eq!(
            got.iter().map(|i| i.key).collect::<Vec<_>>(),
            ["vscode", "claude-code"]
        );
        assert_eq!(parse("all").unwrap().len(), CLIENTS.len());
        assert_eq!(parse("git-kams,all").unwrap()[0], GIT_KAMS);
        assert!(parse("cursor,emacs")
            .unwrap_err()
            .contains("`emacs` is no client"));
        assert_eq!(parse("vscode").unwrap()[0].name, "Visual Studio Code");
    }
}
