//! Shadowing: one server standing in front of another's tools.
//!
//! Two servers that expose the same tool name (or names that only differ
//! in case or by confusable characters) leave the choice of which one
//! runs to the client and the model; one server's descriptions that name
//! another server's tool can give the model orders about a tool its own
//! approval never covered (Invariant Labs' `send_email` example). Both are
//! reported by name, with the other server, and left to a person to judge:
//! GitHub and GitLab servers share names without ill intent.

mod mentions;

use std::collections::HashMap;

use super::squat::folds;
use super::text::{strings, Role};
use super::{Context, Detector, ServerView, ToolView};
use crate::finding::{Class, Finding, Severity};
use crate::json::{Members, Tree};
use crate::lock::State;

use mentions::{mention, Names};

/// Servers or mentions listed per finding; the rest are counted.
const MAX_SHOWN: usize = 8;

/// Reports tool names shared across servers and text that names another
/// server's tools.
///
/// It indexes the inventory's tool names on first use, so one value
/// serves one run (see [`super::all`]).
#[derive(Default)]
pub struct Shadow {
    names: std::sync::OnceLock<Names>,
}

impl Detector for Shadow {
    fn name(&self) -> &'static str {
        "shadow"
    }

    fn depends(&self, level: super::Level) -> super::Depends {
        match level {
            // Whether a text names another server's tool is the
            // inventory's business; the lock only says whether its
            // approver saw it.
            super::Level::Server | super::Level::Tool => super::Depends::InventoryToReport,
            // Which names collide, and which of them are pinned.
            super::Level::Inventory => super::Depends::InventoryAndLock,
        }
    }

    fn tool(&self, cx: &Context<'_>, t: &ToolView<'_>, out: &mut Vec<Finding>) {
        let names = self.names.get_or_init(|| Names::new(cx.inventory));
        let Some(reader) = names.reader(cx.inventory, t.server) else {
            return;
        };
        // Most descriptors name no other tool: look before building
        // every string's pointer. The tool's own name, skipped below, is
        // not looked at: it is a tool name, so `names_any` would look it
        // up in full, for every tool.
        let names_any = |v: &Tree<'_>| any_value(v, &|s| reader.names_any(s));
        let any = match t.raw {
            Tree::Object(o) => o
                .iter()
                .any(|(k, v)| !(k == "name" && matches!(v, Tree::String(_))) && names_any(v)),
            raw => names_any(raw),
        };
        if !any {
            return;
        }
        let approved = approved(cx, t.server, Some(t.tool));
        for text in strings(t.raw, "") {
            // Keys are not prose; a tool's own name is the collision case.
            if text.role == Role::Key || text.pointer == "/name" {
                continue;
            }
            mention(&reader, Some(t.tool), approved, &text, out);
        }
    }

    fn server(&self, cx: &Context<'_>, s: &ServerView<'_>, out: &mut Vec<Finding>) {
        let names = self.names.get_or_init(|| Names::new(cx.inventory));
        let Some(reader) = names.reader(cx.inventory, s.server) else {
            return;
        };
        let fields = Tree::Object(Members::of(s.fields));
        if !any_value(&fields, &|s| reader.names_any(s)) {
            return;
        }
        let approved = approved(cx, s.server, None);
        for text in strings(&fields, "") {
            // `serverInfo` is the server naming itself.
            if text.role == Role::Key || text.pointer.starts_with("/serverInfo") {
                continue;
            }
            mention(&reader, None, approved, &text, out);
        }
    }

    fn inventory(&self, cx: &Context<'_>, out: &mut Vec<Finding>) {
        collisions(cx, out);
    }
}

/// True when the entry is pinned and unchanged since: its approver saw
/// what it says.
fn approved(cx: &Context<'_>, server: &str, tool: Option<&str>) -> bool {
    let Some(entry) = cx.lock.entry(server, tool) else {
        return false;
    };
    let seen = cx.inventory.servers.get(server).and_then(|s| match tool {
        Some(t) => s.tools.get(t).map(|t| &t.descriptor),
        None => Some(&s.descriptor),
    });
    entry.state == State::Pinned && seen.is_some_and(|d| d.digest == entry.descriptor.digest)
}

/// True when `f` holds for a string value anywhere in `v`.
fn any_value(v: &Tree<'_>, f: &impl Fn(&str) -> bool) -> bool {
    match v {
        Tree::String(s) => f(s),
        Tree::Array(a) => a.iter().any(|x| any_value(x, f)),
        Tree::Object(o) => o.iter().any(|(_, x)| any_value(x, f)),
        _ => false,
    }
}

/// One finding per tool per server whose name another server also
/// exposes, exactly, in another case, or as a confusable; one per group
/// of such names when every tool of the group is pinned.
fn collisions(cx: &Context<'_>, out: &mut Vec<Finding>) {
    // Every (server, tool), servers by index; folds once per distinct name.
    let mut entries: Vec<(usize, &str, usize)> = Vec::new();
    let mut servers: Vec<&str> = Vec::new();
    let mut distinct: HashMap<&str, usize> = HashMap::new();
    let mut by_name: Vec<Vec<usize>> = Vec::new();
    for (si, s) in cx.inventory.servers.values().enumerate() {
        servers.push(&s.name);
        for name in s.tools.keys() {
            let n = *distinct.entry(name).or_insert_with(|| {
                by_name.push(Vec::new());
                by_name.len() - 1
            });
            by_name[n].push(entries.len());
            entries.push((si, name, n));
        }
    }
    if servers.len() < 2 {
        return;
    }
    let mut name_folds: Vec<[String; 2]> = vec![Default::default(); by_name.len()];
    for (name, &n) in &distinct {
        name_folds[n] = folds(name);
    }
    // Exact and case-folded names share both folds, so the two fold
    // groups hold every collision.
    let mut groups: [HashMap<&str, Vec<usize>>; 2] = Default::default();
    for (n, f) in name_folds.iter().enumerate() {
        for (g, key) in groups.iter_mut().zip(f) {
            g.entry(key.as_str()).or_default().push(n);
        }
    }
    // In the order of `entries`.
    let pinned = super::pinned_tools(cx);
    for (n, f) in name_folds.iter().enumerate() {
        let mut related: Vec<usize> = groups
            .iter()
            .zip(f)
            .flat_map(|(g, key)| g[key.as_str()].iter().copied())
            .collect();
        related.sort_unstable();
        related.dedup();
        let others_of_name: Vec<usize> = related
            .iter()
            .flat_map(|&r| by_name[r].iter().copied())
            .collect();
        for &e in &by_name[n] {
            let (si, name, _) = entries[e];
            let others = || {
                let entries = &entries;
                others_of_name
                    .iter()
                    .copied()
                    .filter(move |&o| entries[o].0 != si)
            };
            // Every side approved: one finding for the group, at its first
            // entry, instead of one per server (2,000 servers sharing a
            // name would otherwise be 2,000 findings saying the same).
            // Known before the others are listed: most entries of an
            // approved inventory are such.
            if pinned[e] && others().all(|o| pinned[o]) && others().any(|o| o < e) {
                continue;
            }
            let others: Vec<usize> = others().collect();
            if others.is_empty() {
                continue;
            }
            out.push(collision(
                &entries,
                &servers,
                &name_folds,
                &pinned,
                e,
                &others,
            ));
            debug_assert_eq!(entries[e].1, name);
        }
    }
}

/// The finding for entry `e`, exposed also as `others`.
fn collision(
    entries: &[(usize, &str, usize)],
    servers: &[&str],
    name_folds: &[[String; 2]],
    pinned: &[bool],
    e: usize,
    others: &[usize],
) -> Finding {
    let (si, name, _) = entries[e];
    let trusted_other = !pinned[e] && others.iter().any(|&o| pinned[o]);
    // Every side approved: the reviewers saw the collision (it was
    // reported when the later one was pinned); keep it in view, quietly.
    let all_pinned = pinned[e] && others.iter().all(|&o| pinned[o]);
    let mut evidence = Vec::new();
    let mut list = Vec::new();
    // The message names the servers; evidence says how a name differs and
    // which ones are pinned (the same name, unpinned, needs no more).
    let same = others.iter().filter(|&&o| entries[o].1 == name).count();
    if same > 0 {
        let noun = if same == 1 {
            "server exposes"
        } else {
            "servers expose"
        };
        evidence.push(format!("{same} other {noun} the same name"));
    }
    for (i, &o) in others.iter().enumerate() {
        let (os, on, n) = entries[o];
        let os = servers[os];
        if i < MAX_SHOWN {
            list.push(if on == name {
                format!("`{os}`")
            } else {
                format!("`{os}` (as `{on}`)")
            });
        }
        if (on == name && !pinned[o]) || evidence.len() > MAX_SHOWN {
            continue;
        }
        let how = if on == name {
            "the same name".to_string()
        } else if on.to_lowercase() == name.to_lowercase() {
            format!("`{on}`, the same name in another case")
        } else {
            format!(
                "`{on}`, a confusable (same TR39 skeleton `{}`)",
                name_folds[n][0]
            )
        };
        let state = if pinned[o] { " (pinned)" } else { "" };
        evidence.push(format!("server `{os}`{state} exposes {how}"));
    }
    if others.len() > MAX_SHOWN {
        list.push(format!("{} more", others.len() - MAX_SHOWN));
    }
    if all_pinned {
        evidence.push("every server exposing it is pinned: each was approved".to_string());
    }
    if trusted_other {
        evidence.push(
            "another server's tool of this name is pinned and this one is not: this one may be standing in for it"
                .to_string(),
        );
    }
    Finding {
        class: Class::Shadow,
        severity: if trusted_other {
            Severity::High
        } else if all_pinned {
            Severity::Info
        } else {
            Severity::Medium
        },
        server: servers[si].to_string(),
        tool: Some(name.to_string()),
        field: Some("/name".to_string()),
        message: format!(
            "tool name `{name}` is also exposed by server {}: which one runs is up to the client",
            list.join(", ")
        ),
        evidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::{inventory, pinned};
    use crate::inventory::Inventory;
    use crate::lock::Lock;

    /// Drives the detector as `detect::run` does.
    pub(super) fn run(inv: &Inventory, lock: &Lock) -> Vec<Finding> {
        let cx = Context {
            inventory: inv,
            lock,
            configs: &[],
        };
        let shadow = Shadow::default();
        let mut out = Vec::new();
        for s in inv.servers.values() {
            shadow.server(&cx, &ServerView::of(s), &mut out);
            crate::detect::testing::each_tool(s, |view| shadow.tool(&cx, view, &mut out));
        }
        shadow.inventory(&cx, &mut out);
        Finding::sort(&mut out);
        out
    }

    pub(super) fn subjects(f: &[Finding]) -> Vec<(String, Severity, String)> {
        f.iter()
            .map(|f| (f.subject(), f.severity, f.field.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn the_same_name_on_two_servers_exact_case_and_confusable() {
        let inv = inventory(&[
            ("github", &["create_issue", "get_issue"]),
            ("gitlab", &["create_issue", "Get_Issue"]),
            ("evil", &["cr\u{435}ate_issue"]),
        ]);
        let f = run(&inv, &Lock::default());
        let got = subjects(&f);
        let m = Severity::Medium;
        assert_eq!(
            got,
            vec![
                ("evil/cr\u{435}ate_issue".into(), m, "/name".into()),
                ("github/create_issue".into(), m, "/name".into()),
                ("github/get_issue".into(), m, "/name".into()),
                ("gitlab/Get_Issue".into(), m, "/name".into()),
                ("gitlab/create_issue".into(), m, "/name".into()),
            ]
        );
        let evil = f[0].evidence.join("\n");
        assert!(
            evil.contains("server `github` exposes `create_issue`, a confusable"),
            "{evil}"
        );
        assert!(
            evil.contains("server `gitlab` exposes `create_issue`"),
            "{evil}"
        );
        assert!(f[1]
            .evidence
            .contains(&"1 other server exposes the same name".to_string()));
        let gh = f[1].evidence.join("\n");
        assert!(
            gh.contains("server `evil` exposes `cr\u{435}ate_issue`, a confusable"),
            "{gh}"
        );
        assert!(
            f[1].message
                .contains("server `evil` (as `cr\u{435}ate_issue`), `gitlab`"),
            "{}",
            f[1].message
        );
        assert_eq!(
            f[2].evidence,
            vec!["server `gitlab` exposes `Get_Issue`, the same name in another case"]
        );
    }

    #[test]
    fn high_when_the_other_is_pinned_and_this_one_is_not() {
        let inv = inventory(&[("fs", &["read_file"]), ("evil", &["read_file"])]);
        let lock = pinned(&[("fs", "read_file")]);
        let f = run(&inv, &lock);
        assert_eq!(
            subjects(&f),
            vec![
                ("evil/read_file".into(), Severity::High, "/name".into()),
                ("fs/read_file".into(), Severity::Medium, "/name".into()),
            ]
        );
        assert!(f[0]
            .evidence
            .contains(&"server `fs` (pinned) exposes the same name".to_string()));
        assert!(f[0].evidence.last().unwrap().contains("standing in for it"));
        assert!(run(
            &inventory(&[("fs", &["read_file"]), ("b", &["write_file"])]),
            &lock
        )
        .is_empty());
    }

    #[test]
    fn info_when_every_side_is_pinned() {
        let inv = inventory(&[("github", &["create_issue"]), ("gitlab", &["create_issue"])]);
        let lock = pinned(&[("github", "create_issue"), ("gitlab", "create_issue")]);
        let f = run(&inv, &lock);
        assert_eq!(
            subjects(&f),
            vec![("github/create_issue".into(), Severity::Info, "/name".into())]
        );
        assert!(f[0].message.contains("server `gitlab`"), "{}", f[0].message);
        // One unpinned side: each tool is reported again, and not at info.
        let inv = inventory(&[
            ("github", &["create_issue"]),
            ("gitlab", &["create_issue"]),
            ("new", &["create_issue"]),
        ]);
        let f = run(&inv, &lock);
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f.iter().all(|f| f.severity > Severity::Info), "{f:?}");
    }

    #[test]
    fn many_servers_are_counted_not_listed() {
        let names: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
        let spec: Vec<(&str, &[&str])> =
            names.iter().map(|n| (n.as_str(), &["query"][..])).collect();
        let f = run(&inventory(&spec), &Lock::default());
        assert_eq!(f.len(), 30);
        assert_eq!(
            f[0].message,
            "tool name `query` is also exposed by server `s01`, `s02`, `s03`, `s04`, `s05`, `s06`, `s07`, `s08`, 21 more: which one runs is up to the client"
        );
        assert_eq!(f[0].evidence, vec!["29 other servers expose the same name"]);
    }
}
