//! `git kams textconv FILE`: the diff driver's filter. git shows a diff of
//! kams.lock and of inventory files through it, so that a zero-width space
//! or a bidi override added to a description is seen in `git diff`, `git
//! log -p` and `git show` as `\u{200B}`, not as nothing.

use std::io::Write;

use anyhow::{anyhow, Result};

use super::{emit, Env, Status, Tools};
use crate::cli::TextconvArgs;
use crate::text::reveal;

/// Runs `textconv`: whatever the file holds is printed (exit 0); a file
/// that cannot be read, or one past the input size cap, is an error. The
/// file is whatever git hands over (a blob of any commit, so anyone's
/// text), and the cap is the one every other input has: `--max-input-size`,
/// else `kams.maxInputSize`, else the default.
pub fn run(env: &Env, args: &TextconvArgs, out: &mut dyn Write) -> Result<Status> {
    let (_, opts) = env.inventory_spec(Tools::Whole)?;
    let bytes = crate::files::read_capped(&args.file, opts.max_size).map_err(|e| anyhow!("{e}"))?;
    emit(out, |o| o.write_all(reveal(&bytes).as_bytes()))?;
    Ok(0)
}
