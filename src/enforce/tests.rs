//! The rules and the merge, with examples and properties: a second run is
//! the first, a user's rule is never taken out, every wanted rule is there.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::Config;

use super::*;
use crate::json;

fn refusal(server: &str, tool: Option<&str>, why: Why) -> Refusal {
    Refusal {
        server: server.into(),
        tool: tool.map(str::to_string),
        why,
    }
}

fn set(rules: &[&str]) -> BTreeSet<String> {
    rules.iter().map(|r| r.to_string()).collect()
}

fn parsed(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("test JSON").0
}

fn deny_of(v: &Value) -> Vec<String> {
    v.get("permissions")
        .and_then(|p| p.get("deny"))
        .and_then(Value::as_array)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r.as_str().map(str::to_string))
        .collect()
}

#[test]
fn claude_code_rules_name_the_tool_with_its_server_as_claude_code_writes_them() {
    let refused = [
        refusal("notes", Some("delete_note"), Why::Denied),
        refusal("my server.v2", Some("get/item"), Why::New),
        refusal("web", None, Why::Denied),
    ];
    let (rules, unwritable) = rules(Client::ClaudeCode, &refused);
    let texts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "mcp__my_server_v2__get_item",
            "mcp__notes__delete_note",
            "mcp__web"
        ]
    );
    assert!(unwritable.is_empty());
    assert_eq!(rules[2].because, ["web (every tool): denied"]);
}

#[test]
fn two_tools_that_claude_code_names_alike_share_one_rule() {
    let refused = [
        refusal("s", Some("a.b"), Why::New),
        refusal("s", Some("a b"), Why::Drifted),
    ];
    let (rules, _) = rules(Client::ClaudeCode, &refused);
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].text, "mcp__s__a_b");
    assert_eq!(rules[0].because.len(), 2);
}

#[test]
fn cursor_refuses_the_whole_server_when_a_tool_name_cannot_stand_in_a_rule() {
    let refused = [
        refusal("files", Some("read_file"), Why::Provisional),
        refusal("files", Some("odd:name"), Why::New),
        refusal("bad:server", Some("x"), Why::New),
        refusal("files", Some("read\u{202e}elif"), Why::New),
    ];
    let (rules, unwritable) = rules(Client::Cursor, &refused);
    let texts: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["Mcp(files:*)", "Mcp(files:read_file)"]);
    assert_eq!(unwritable.len(), 1);
    assert!(unwritable[0].starts_with("bad:server/x: not pinned: new"));
}

#[test]
fn vscode_has_no_rules_and_says_why() {
    let (rules, unwritable) = rules(Client::VsCode, &[refusal("a", Some("b"), Why::New)]);
    assert!(rules.is_empty() && unwritable.is_empty());
    assert!(Client::VsCode
        .unsupported()
        .unwrap()
        .starts_with("not supported by this client"));
}

#[test]
fn the_merge_keeps_the_users_keys_rules_and_order() {
    let before = parsed(
        r#"{"model": "x", "permissions": {"allow": ["Bash(ls)"], "deny": ["Read(.env)", "mcp__a__b"], "ask": []}, "env": {"N": 1.50}}"#,
    );
    let merged = merge(Some(&before), &set(&[]), &set(&["mcp__a__b", "mcp__z__y"])).unwrap();
    assert_eq!(merged.added, ["mcp__z__y"]);
    assert!(merged.removed.is_empty());
    // The user's own mcp__a__b is theirs: not recorded as git-kams's.
    assert_eq!(merged.owned, set(&["mcp__z__y"]));
    assert_eq!(
        to_text(&merged.settings),
        r#"{
  "model": "x",
  "permissions": {
    "allow": [
      "Bash(ls)"
    ],
    "deny": [
      "Read(.env)",
      "mcp__a__b",
      "mcp__z__y"
    ],
    "ask": []
  },
  "env": {
    "N": 1.50
  }
}
"#
    );
}

#[test]
fn the_merge_takes_out_only_its_own_rules_that_no_longer_apply() {
    let before = parsed(r#"{"permissions": {"deny": ["mcp__a__old", "mcp__user__rule", 7]}}"#);
    let merged = merge(
        Some(&before),
        &set(&["mcp__a__old", "mcp__gone__x"]),
        &set(&[]),
    )
    .unwrap();
    assert_eq!(merged.removed, ["mcp__a__old"]);
    assert_eq!(deny_of(&merged.settings), ["mcp__user__rule"]);
    assert_eq!(
        merged
            .settings
            .get("permissions")
            .unwrap()
            .get("deny")
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2,
        "a value that is no string stays too"
    );
}

#[test]
fn the_merge_refuses_settings_of_another_shape() {
    for (text, why) in [
        ("[1]", "top level is an array"),
        (r#"{"permissions": 1}"#, "\"permissions\" is a number"),
        (r#"{"permissions": {"deny": "x"}}"#, "\"deny\" is a string"),
    ] {
        let e = merge(Some(&parsed(text)), &set(&[]), &set(&["r"])).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn no_file_and_nothing_wanted_is_no_change() {
    let merged = merge(None, &set(&[]), &set(&[])).unwrap();
    assert!(merged.unchanged());
}

#[test]
fn the_record_reads_what_it_writes_and_refuses_what_it_does_not_know() {
    let mut record = Record::default();
    record.files.insert(
        ".claude/settings.json".into(),
        set(&["mcp__b", "mcp__a__x"]),
    );
    let text = record.to_text();
    assert_eq!(
        text,
        "{\n  \"version\": 1,\n  \"written\": {\n    \".claude/settings.json\": [\n      \"mcp__a__x\",\n      \"mcp__b\"\n    ]\n  }\n}\n"
    );
    assert_eq!(Record::parse(&parsed(&text)).unwrap(), record);
    for (bad, why) in [
        (r#"{"version": 2}"#, "format version 2"),
        (r#"{"written": {}}"#, "\"version\" is missing"),
        (r#"{"version": 1, "written": {"f": "x"}}"#, "not an array"),
        (r#"{"version": 1, "extra": 1}"#, "unknown key"),
    ] {
        let e = Record::parse(&parsed(bad)).unwrap_err();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn gemini_gets_each_servers_refused_tools_and_keeps_the_users_own() {
    let settings = parsed(
        r#"{"ui": {"theme": "x"}, "mcpServers": {"web": {"command": "u", "excludeTools": ["mine"]}, "files": {"command": "n"}}}"#,
    );
    let refused = [
        refusal("web", Some("fetch"), Why::Drifted),
        refusal("files", Some("write_file"), Why::New),
        refusal("elsewhere", Some("t"), Why::New),
        refusal("gone", None, Why::Denied),
    ];
    let merged = merge_gemini(
        Some(&settings),
        ".gemini/settings.json",
        &refused,
        &Default::default(),
    )
    .unwrap();
    let after = merged.settings.clone().unwrap();
    let list = |v: &Value, path: &[&str]| -> Vec<String> {
        let mut at = v;
        for p in path {
            at = at.get(p).unwrap();
        }
        at.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        list(&after, &["mcpServers", "web", "excludeTools"]),
        ["mine", "fetch"]
    );
    assert_eq!(
        list(&after, &["mcpServers", "files", "excludeTools"]),
        ["write_file"]
    );
    assert_eq!(list(&after, &["mcp", "excluded"]), ["gone"]);
    assert_eq!(merged.elsewhere, ["elsewhere/t"]);
    assert_eq!(after.get("ui"), settings.get("ui"));
    // Recorded, a second run changes nothing; with fetch pinned, only
    // git-kams's entry goes.
    let recorded: BTreeMap<String, BTreeSet<String>> = merged.owned.iter().cloned().collect();
    assert!(!recorded[".gemini/settings.json#/mcpServers/web/excludeTools"].contains("mine"));
    let again = merge_gemini(Some(&after), ".gemini/settings.json", &refused, &recorded).unwrap();
    assert!(
        again.added.is_empty() && again.removed.is_empty(),
        "{again:?}"
    );
    let later = merge_gemini(
        Some(&after),
        ".gemini/settings.json",
        &refused[1..],
        &recorded,
    )
    .unwrap();
    assert_eq!(later.removed, ["web/fetch (excludeTools)"]);
    let after = later.settings.unwrap();
    assert_eq!(
        list(&after, &["mcpServers", "web", "excludeTools"]),
        ["mine"]
    );
}

// ---------------------------------------------------------------------------
// Properties

fn config() -> Config {
    Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    }
}

/// A small alphabet of rules, so that user rules, recorded rules and
/// wanted rules overlap often.
fn rule() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "mcp__a__x",
        "mcp__a__y",
        "mcp__b",
        "mcp__c__z",
        "Read(.env)",
        "Bash(rm:*)",
    ])
    .prop_map(str::to_string)
}

fn rules_set() -> impl Strategy<Value = BTreeSet<String>> {
    prop::collection::btree_set(rule(), 0..5)
}

/// A settings file: maybe none, maybe other keys, a deny list of rules
/// (with repeats) and maybe a value that is no string.
fn settings() -> impl Strategy<Value = Option<Value>> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(rule(), 0..6),
        any::<bool>(),
    )
        .prop_map(|(exists, other_keys, deny, odd)| {
            if !exists {
                return None;
            }
            let mut list: Vec<Value> = deny.into_iter().map(Value::String).collect();
            if odd {
                list.push(Value::Bool(true));
            }
            let mut permissions = Object::new();
            if other_keys {
                permissions.insert(
                    "allow".into(),
                    Value::Array(vec![Value::String("Bash(ls)".into())]),
                );
            }
            permissions.insert("deny".into(), Value::Array(list));
            let mut top = Object::new();
            if other_keys {
                top.insert("model".into(), Value::String("m".into()));
            }
            top.insert("permissions".into(), Value::Object(permissions));
            Some(Value::Object(top))
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn running_twice_is_running_once(
        before in settings(),
        recorded in rules_set(),
        wanted in rules_set(),
    ) {
        let once = merge(before.as_ref(), &recorded, &wanted).unwrap();
        let twice = merge(Some(&once.settings), &once.owned, &wanted).unwrap();
        prop_assert!(twice.unchanged(), "{:?}", twice);
        prop_assert_eq!(&twice.settings, &once.settings);
        prop_assert_eq!(to_text(&twice.settings), to_text(&once.settings));
        prop_assert_eq!(twice.owned, once.owned);
    }

    #[test]
    fn a_users_rule_is_never_taken_out(
        before in settings(),
        recorded in rules_set(),
        wanted in rules_set(),
        later in rules_set(),
    ) {
        let users: BTreeSet<String> = before
            .as_ref()
            .map(deny_of)
            .unwrap_or_default()
            .into_iter()
            .filter(|r| !recorded.contains(r))
            .collect();
        let once = merge(before.as_ref(), &recorded, &wanted).unwrap();
        // And a later run, with other rules wanted, from what this one recorded.
        let then = merge(Some(&once.settings), &once.owned, &later).unwrap();
        for merged in [&once, &then] {
            let after: BTreeSet<String> = deny_of(&merged.settings).into_iter().collect();
            prop_assert!(users.is_subset(&after), "{:?} lost from {:?}", users, after);
            prop_assert!(users.is_disjoint(&merged.owned));
        }
    }

    #[test]
    fn every_wanted_rule_is_there_and_no_stale_one_of_ours(
        before in settings(),
        recorded in rules_set(),
        wanted in rules_set(),
    ) {
        let merged = merge(before.as_ref(), &recorded, &wanted).unwrap();
        let after: BTreeSet<String> = deny_of(&merged.settings).into_iter().collect();
        prop_assert!(wanted.is_subset(&after));
        for r in &merged.owned {
            prop_assert!(wanted.contains(r));
        }
        for r in &merged.removed {
            prop_assert!(!after.contains(r));
        }
    }
}
