//! The names a string is read against: the tools of the inventory, this
//! tool, its parameters and the properties of its output, compared as a
//! model takes them (ignoring case, `_`, `-` and spaces: `listFollowedProjects`
//! is `list_followed_projects`).

use crate::inventory::Inventory;

/// What a string is read against: the inventory (for other tools' names),
/// this tool, its parameters and its output's properties.
pub(super) struct KnownNames<'a> {
    pub(super) inventory: &'a Inventory,
    pub(super) server: &'a str,
    pub(super) tool: Option<&'a str>,
    pub(super) params: &'a [Param],
    /// The property names of the output schema and the names the schemas
    /// take as values (`enum`, `const`), folded ([`fold`]).
    pub(super) outputs: &'a [String],
}

/// An input parameter: its name and where it is declared.
pub(super) struct Param {
    pub(super) name: String,
    pub(super) folded: String,
    pub(super) pointer: String,
}

impl KnownNames<'_> {
    /// A tool of this server (or this tool), compared as written and
    /// ignoring case, `_` and `-`: a server that names its tools in
    /// snake_case and writes them in camelCase in its prose names its own.
    /// So is a name that ends one of its tools after a `_` or `-`: a server
    /// that prefixes its tools (`confluence_get_attachments`) drops the
    /// prefix in its prose ("using the get_attachments tool").
    pub(super) fn own(&self, name: &str) -> bool {
        if self.tool.is_some_and(|t| folded_eq(t, name)) {
            return true;
        }
        let Some(server) = self.inventory.servers.get(self.server) else {
            return false;
        };
        let tail = |t: &str| {
            t.len() > name.len()
                && matches!(t.as_bytes()[t.len() - name.len() - 1], b'_' | b'-')
                && t.is_char_boundary(t.len() - name.len())
                && t[t.len() - name.len()..].eq_ignore_ascii_case(name)
        };
        server.tools.contains_key(name)
            || server.tools.keys().any(|t| folded_eq(t, name) || tail(t))
    }

    /// A property of this tool's input or output schema, or a name one of
    /// its schemas takes as a value: a field, which a text may name as it
    /// likes, and no tool.
    pub(super) fn is_field(&self, name: &str) -> bool {
        self.param(name).is_some() || {
            let f = fold(name);
            self.outputs.contains(&f)
        }
    }

    /// A tool of another server of the inventory, as `tool`, `server.tool`
    /// or with `_` and `-` swapped.
    pub(super) fn other(&self, name: &str) -> bool {
        if let Some((srv, tool)) = name.split_once('.') {
            if srv != self.server {
                if let Some(s) = self.inventory.servers.get(srv) {
                    if s.tools.contains_key(tool) {
                        return true;
                    }
                }
            }
        }
        let swapped_a = name.replace('-', "_");
        let swapped_b = name.replace('_', "-");
        self.inventory.servers.iter().any(|(n, s)| {
            n != self.server
                && (s.tools.contains_key(name)
                    || s.tools.contains_key(&swapped_a)
                    || s.tools.contains_key(&swapped_b))
        })
    }

    pub(super) fn param(&self, name: &str) -> Option<usize> {
        let len = name
            .bytes()
            .filter(|b| !matches!(b, b'_' | b'-' | b' '))
            .count();
        self.params
            .iter()
            .position(|p| (!name.is_ascii() || p.folded.len() == len) && folded_eq(&p.folded, name))
    }
}

/// Lowercase, without `_`, `-` and spaces: `next_thought_needed` and
/// `nextThoughtNeeded` are one name.
pub(super) fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

fn folded_eq(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        // The common case, without decoding characters.
        let keep = |c: &u8| !matches!(c, b'_' | b'-' | b' ');
        let mut x = a.bytes().filter(keep);
        let mut y = b.bytes().filter(keep);
        loop {
            match (x.next(), y.next()) {
                (None, None) => return true,
                (Some(p), Some(q)) if p.eq_ignore_ascii_case(&q) => continue,
                _ => return false,
            }
        }
    }
    let mut x = a
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase);
    let mut y = b
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (a, b) if a == b => continue,
            _ => return false,
        }
    }
}

/// Words of an identifier (see [`crate::detect::text::identifier_words`]).
pub(super) fn ident_words(s: &str) -> Vec<String> {
    crate::detect::text::identifier_words(s)
}
