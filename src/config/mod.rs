//! MCP client configurations: `.mcp.json`, `.vscode/mcp.json`,
//! `.cursor/mcp.json`, and a Claude Desktop config given with `--config`.
//! Each names servers and how to reach them (a command to run, or a URL
//! with headers), which the transport detector reviews and `capture` will
//! use. Nothing here runs anything.

use std::path::PathBuf;

use crate::json::Object;

/// One server entry of a client configuration.
#[derive(Clone, Debug)]
pub struct ClientServer {
    /// The server's name in the config.
    pub name: String,
    /// The config file it comes from.
    pub source: PathBuf,
    /// JSON pointer of the entry in that file.
    pub pointer: String,
    /// The entry as written (`command`, `args`, `env`, `url`, `headers`, `type`...).
    pub entry: Object,
}
