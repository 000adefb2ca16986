//! `git kams textconv FILE`: the diff driver's filter. git shows a diff of
//! kams.lock and of inventory files through it, so that a zero-width space
//! or a bidi override added to a description is seen in `git diff`, `git
//! log -p` and `git show` as `\u{200B}`, not as nothing.

use std::io::Write;

use anyhow::{Context, Result};

use super::{emit, Status};
use crate::cli::TextconvArgs;
use crate::text::{reveal, shown_path};

/// Runs `textconv`: whatever the file holds is printed (exit 0); a file
/// that cannot be read is an error.
pub fn run(args: &TextconvArgs, out: &mut dyn Write) -> Result<Status> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("{}: cannot read", shown_path(&args.file)))?;
    emit(out, |o| o.write_all(reveal(&bytes).as_bytes()))?;
    Ok(0)
}
