//! Writing the lock's one canonical text (see `docs/lockfile.md`): the
//! same lock always gives the same bytes, a server at a time, so that a
//! large lock is written without holding its whole text.

use super::format::{Approval, Entry, Lock};
use crate::canon::{write_string, write_value, Escape};

/// Text [`Lock::write_text`] gathers before writing it.
pub(super) const WRITE_CHUNK: usize = 1 << 20;

impl Lock {
    /// The lock's text: the one canonical layout (see `docs/lockfile.md`).
    pub fn to_text(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1024 + self.len() * 1024);
        let kept = self.lay_out(&mut out, &mut |_| Ok(()));
        kept.expect("text kept in memory");
        out
    }

    /// Writes [`Lock::to_text`]'s text to `w` a server at a time, holding
    /// about 1 MiB of it at once: a large lock's text, held whole (twice,
    /// while its buffer grew) next to the inventory it was read from, was
    /// `pin`'s largest allocation (docs/performance.md, "Twelfth pass",
    /// a30ca8c).
    pub fn write_text(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(WRITE_CHUNK + 64 * 1024);
        self.lay_out(&mut out, &mut |out: &mut Vec<u8>| {
            if out.len() >= WRITE_CHUNK {
                w.write_all(out)?;
                out.clear();
            }
            Ok(())
        })?;
        w.write_all(&out)
    }

    /// The text, into `out`; `after_server` is given `out` after each
    /// server.
    fn lay_out(
        &self,
        out: &mut Vec<u8>,
        after_server: &mut dyn FnMut(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        out.extend_from_slice(
            format!("{{\n  \"version\": {},\n  \"servers\": {{", self.version()).as_bytes(),
        );
        for (si, (name, server)) in self.servers.iter().enumerate() {
            out.extend_from_slice(if si == 0 { b"\n    " } else { b",\n    " });
            write_string(name, Escape::Visible, out);
            out.extend_from_slice(b": {");
            let mut first = true;
            if let Some(launch) = &server.launch {
                // One line, as a descriptor field: a changed launch is one
                // removed and one added line in `git diff`.
                server_member("launch", &mut first, out);
                write_value(launch, Escape::Visible, out);
            }
            if let Some(a) = &server.launch_approval {
                // One line too: re-approving a launch is one changed line.
                server_member("launch_approval", &mut first, out);
                write_approval_line(a, out);
            }
            if !server.launch_configs.is_empty() {
                // One line: where the launch was configured.
                server_member("launch_configs", &mut first, out);
                let files = server
                    .launch_configs
                    .iter()
                    .map(|f| crate::json::Value::String(f.clone()))
                    .collect();
                write_value(&crate::json::Value::Array(files), Escape::Visible, out);
            }
            if let Some(entry) = &server.server {
                server_member("server", &mut first, out);
                write_entry(entry, 6, out);
            }
            server_member("tools", &mut first, out);
            out.push(b'{');
            for (ti, (tool, entry)) in server.tools.iter().enumerate() {
                out.extend_from_slice(if ti == 0 {
                    b"\n        "
                } else {
                    b",\n        "
                });
                write_string(tool, Escape::Visible, out);
                out.extend_from_slice(b": ");
                write_entry(entry, 8, out);
            }
            if server.tools.is_empty() {
                out.extend_from_slice(b"}");
            } else {
                out.extend_from_slice(b"\n      }");
            }
            out.extend_from_slice(b"\n    }");
            after_server(out)?;
        }
        if self.servers.is_empty() {
            out.extend_from_slice(b"}\n}\n");
        } else {
            out.extend_from_slice(b"\n  }\n}\n");
        }
        Ok(())
    }
}

/// Starts a server's member `name` (a key that needs no escape), after a
/// comma unless it is the server's first.
fn server_member(name: &str, first: &mut bool, out: &mut Vec<u8>) {
    if !std::mem::take(first) {
        out.push(b',');
    }
    out.extend_from_slice(b"\n      \"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\": ");
}

/// A launch's approval, on one line, keys in the entries' order.
fn write_approval_line(a: &Approval, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"approver\": ");
    write_string(&a.approver, Escape::Visible, out);
    out.extend_from_slice(b", \"at\": ");
    write_string(&a.at, Escape::Visible, out);
    out.extend_from_slice(b", \"note\": ");
    write_string(&a.note, Escape::Visible, out);
    out.push(b'}');
}

/// A new line, indented `n` spaces.
fn indent(n: usize, out: &mut Vec<u8>) {
    out.push(b'\n');
    out.extend(std::iter::repeat_n(b' ', n));
}

/// A new line, indented `n` spaces, and the key `k`.
fn write_key(k: &str, n: usize, out: &mut Vec<u8>) {
    indent(n, out);
    write_string(k, Escape::Visible, out);
    out.extend_from_slice(b": ");
}

/// An entry's block, its lines indented `n` spaces.
fn write_entry(e: &Entry, n: usize, out: &mut Vec<u8>) {
    out.push(b'{');
    write_key("state", n + 2, out);
    write_string(e.state.as_str(), Escape::Visible, out);
    out.push(b',');
    write_key("digest", n + 2, out);
    write_string(&e.descriptor.digest.to_string(), Escape::Visible, out);
    out.push(b',');
    write_key("fields", n + 2, out);
    out.push(b'{');
    for (i, (f, d)) in e.descriptor.field_digests.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_key(f, n + 4, out);
        write_string(&d.to_string(), Escape::Visible, out);
    }
    indent(n + 2, out);
    out.extend_from_slice(b"},");
    write_key("first_seen", n + 2, out);
    write_string(&e.first_seen, Escape::Visible, out);
    out.push(b',');
    if let Some(a) = &e.approval {
        write_key("approval", n + 2, out);
        out.push(b'{');
        write_key("approver", n + 4, out);
        write_string(&a.approver, Escape::Visible, out);
        out.push(b',');
        write_key("at", n + 4, out);
        write_string(&a.at, Escape::Visible, out);
        out.push(b',');
        write_key("note", n + 4, out);
        write_string(&a.note, Escape::Visible, out);
        indent(n + 2, out);
        out.extend_from_slice(b"},");
    }
    write_key("descriptor", n + 2, out);
    out.push(b'{');
    let members = crate::canon::sorted_members(&e.descriptor.fields);
    for (i, (f, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_key(f, n + 4, out);
        write_value(v, Escape::Visible, out);
    }
    indent(n + 2, out);
    out.push(b'}');
    indent(n, out);
    out.push(b'}');
}
