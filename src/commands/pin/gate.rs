//! The findings gate: an approval is made knowing what it approves, so the
//! high and critical findings of the [`Class::GATED`] classes on the
//! entries it changes are asked about before anything is written.

use super::plan::Action;
use crate::finding::{Class, Finding, Severity};

/// The findings an approval of `actions` must accept (high or critical,
/// of a [`Class::GATED`] class, on an entry it changes), split into
/// those of the `accept`ed classes and the rest. An entry pinned and
/// unchanged is not approved again, so its findings are not asked about;
/// a launch approved brings its server's transport findings. Both sorted.
pub(crate) fn gate(
    mut found: Vec<Finding>,
    actions: &[Action],
    accept: &[Class],
) -> (Vec<Finding>, Vec<Finding>) {
    Finding::sort(&mut found);
    let changes = |f: &Finding| {
        actions.iter().any(|a| match a {
            Action::Pin(s, t, _) => *s == f.server && *t == f.tool,
            Action::Launch(s, ..) => {
                *s == f.server && f.tool.is_none() && f.class == Class::Transport
            }
            Action::Remove(..) => false,
        })
    };
    found
        .into_iter()
        .filter(|f| f.severity >= Severity::High && Class::GATED.contains(&f.class))
        .filter(changes)
        .partition(|f| accept.contains(&f.class))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Value;

    fn finding(class: Class, severity: Severity, server: &str, tool: Option<&str>) -> Finding {
        Finding {
            class,
            severity,
            server: server.into(),
            tool: tool.map(str::to_string),
            field: None,
            message: "m".into(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn the_gate_asks_about_what_changes_at_high_and_above() {
        use Class::*;
        use Severity::*;
        let actions = vec![
            Action::Pin("a".into(), Some("t".into()), None),
            Action::Launch("b".into(), None, Value::Null),
        ];
        let found = vec![
            finding(Poison, Critical, "a", Some("t")),
            finding(Hidden, High, "a", Some("t")),
            // Not at high, not a gated class, not changed.
            finding(Poison, Medium, "a", Some("t")),
            finding(Drift, Critical, "a", Some("t")),
            finding(Poison, Critical, "a", Some("u")),
            finding(Transport, High, "a", None),
            // A launch brings its server's transport findings only.
            finding(Transport, High, "b", None),
            finding(Poison, High, "b", None),
            finding(Shadow, High, "c", None),
        ];
        let (accepted, refused) = gate(found.clone(), &actions, &[Hidden, Transport]);
        assert_eq!(accepted, vec![found[1].clone(), found[6].clone()]);
        assert_eq!(refused, vec![found[0].clone()]);
        // The server entry pinned: its findings of every gated class.
        let server = vec![Action::Pin("b".into(), None, None)];
        let (accepted, refused) = gate(found.clone(), &server, &[]);
        assert!(accepted.is_empty());
        assert_eq!(refused, vec![found[7].clone(), found[6].clone()]);
    }
}
