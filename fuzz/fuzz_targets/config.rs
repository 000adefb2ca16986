//! MCP client configs: `config::parse` as `.mcp.json` (plain JSON), as
//! `mcp.json` (JSON with comments, VS Code and Cursor) and as a file named
//! with `--config`; then `launch_spec` of every entry, as `capture` and the
//! transport detector use it. Never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    git_kams_fuzz::config(data);
});
