//! A denied state (issue 23, item 2): `git kams deny` refuses a tool in a
//! signed-off commit like an approval; while the tool is advertised, scan
//! reports a high `denied` finding and the hooks refuse the push, whatever
//! its text now is; only naming it in `pin` overturns the denial; log and
//! blame show denials as they show approvals. Through a real bare remote
//! with the pre-receive hook.

use std::path::Path;

use crate::approvals::{commit, Remote};
use crate::common::{copy, git, kams, real, text};
use crate::hooks::printed;

const FILE: &str = ".kams/inventory/time.json";
const TOOL: &str = "mcp-server-time/convert_time";

/// A remote whose main holds an approved capture of the time server.
fn approved() -> Remote {
    let r = Remote::new();
    let d = r.dir();
    kams(d).arg("init").assert().success();
    std::fs::write(d.join("README"), "project\n").unwrap();
    commit(d, "start", true);
    copy(&real("mcp-server-time@0.6.2.json"), d, FILE);
    kams(d).args(["pin", "-m", "reviewed"]).assert().success();
    let (ok, said) = r.push();
    assert!(ok, "{said}");
    r
}

/// The findings of a JSON scan of class `class`.
fn findings(d: &Path, class: &str) -> Vec<serde_json::Value> {
    crate::common::findings_of(d, class)
}

fn stdout(d: &Path, args: &[&str]) -> String {
    let o = kams(d).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", printed(&o));
    text(&o.stdout)
}

#[test]
fn a_denied_tool_is_reported_refused_by_the_hook_and_overturned_only_by_name() {
    let r = approved();
    let d = r.dir();
    let said = stdout(d, &["deny", TOOL, "-m", "converts to the wrong zone"]);
    assert!(
        said.contains(&format!("denied    {TOOL} sha256:")),
        "{said}"
    );
    assert!(said.contains("(was pinned)"), "{said}");
    assert_eq!(
        git(
            d,
            &[
                "log",
                "-1",
                "--format=%s%n%(trailers:key=Signed-off-by,valueonly)"
            ]
        )
        .trim_end(),
        format!("kams: deny {TOOL}\nRita Reviewer <rita@example.com>")
    );
    let lock = std::fs::read_to_string(d.join("kams.lock")).unwrap();
    assert!(lock.starts_with("{\n  \"version\": 2,"), "{lock}");
    assert!(lock.contains("\"state\": \"denied\""), "{lock}");

    // scan: one high finding, whatever else is true of the tool.
    let denied = findings(d, "denied");
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0]["severity"], "high");
    assert_eq!(denied[0]["tool"], "convert_time");
    let o = kams(d).arg("scan").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));

    // The hook refuses the push, naming the denial.
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!(
            "{TOOL} is denied in kams.lock and still advertised"
        )),
        "{said}"
    );

    // A new version of the tool is as denied as the old one.
    copy(&real("mcp-server-time@2026.10.19.json"), d, FILE);
    assert_eq!(findings(d, "denied").len(), 1);
    assert!(findings(d, "drift")
        .iter()
        .all(|f| f["tool"] != "convert_time"));

    // A wider pin passes over it and says so; naming it overturns it.
    let said = stdout(d, &["pin", "-m", "the new version"]);
    assert!(
        said.contains(&format!("kept denied {TOOL} (name it")),
        "{said}"
    );
    assert!(std::fs::read_to_string(d.join("kams.lock"))
        .unwrap()
        .contains("\"state\": \"denied\""));
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    stdout(d, &["pin", TOOL, "-m", "fixed upstream"]);
    assert!(findings(d, "denied").is_empty());
    let (ok, said) = r.push();
    assert!(ok, "{said}");

    // log and blame show the denial like an approval.
    let log = stdout(d, &["log"]);
    assert!(
        log.contains(&format!(
            "    denied      {TOOL}  approver: Rita Reviewer <rita@example.com>  note: converts to the wrong zone"
        )),
        "{log}"
    );
    let at_denial = git(d, &["log", "--format=%H", "-1", "--grep", "kams: deny"]);
    let blame = stdout(d, &["blame", "--at", at_denial.trim(), TOOL]);
    assert!(
        blame.contains(&format!(" denied      {TOOL}  approver: Rita Reviewer")),
        "{blame}"
    );
    assert!(
        blame.contains("note: converts to the wrong zone"),
        "{blame}"
    );
}

#[test]
fn a_denial_outlives_the_tool_and_catches_it_when_it_comes_back() {
    let r = approved();
    let d = r.dir();
    stdout(d, &["deny", TOOL, "-m", "no"]);
    // The server stops advertising it: nothing to report, and pin keeps
    // the denial rather than removing the entry.
    let mut capture: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join(FILE)).unwrap()).unwrap();
    let full = capture.clone();
    capture["tools"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "convert_time");
    std::fs::write(d.join(FILE), serde_json::to_vec_pretty(&capture).unwrap()).unwrap();
    assert!(findings(d, "denied").is_empty());
    assert!(findings(d, "removed").is_empty());
    let said = stdout(d, &["pin", "-m", "tool gone"]);
    assert!(said.contains("kept denied"), "{said}");
    let (ok, said) = r.push();
    assert!(ok, "{said}");
    // It comes back.
    std::fs::write(d.join(FILE), serde_json::to_vec_pretty(&full).unwrap()).unwrap();
    assert_eq!(findings(d, "denied").len(), 1);
}

#[test]
fn a_denial_or_its_withdrawal_without_a_sign_off_is_refused() {
    let r = approved();
    let d = r.dir();
    stdout(d, &["deny", TOOL, "--no-commit", "-m", "no"]);
    commit(d, "deny it quietly", false);
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(
        said.contains(&format!("denied {TOOL} without a Signed-off-by")),
        "{said}"
    );
    git(d, &["reset", "-q", "--hard", "HEAD~1"]);
    stdout(d, &["deny", TOOL, "-m", "no"]);
    // Back to provisional by hand, unsigned: the withdrawal is refused too.
    let lock = std::fs::read_to_string(d.join("kams.lock")).unwrap();
    let start = lock.find("\"convert_time\": {").unwrap();
    let end = start + lock[start..].find("\"descriptor\"").unwrap();
    let entry = &lock[start..end];
    let approval = entry.find("\"approval\"").unwrap();
    let close = approval + entry[approval..].find("},").unwrap() + 2;
    let edited = format!(
        "{}{}{}",
        &lock[..start],
        entry[..approval]
            .replace("\"denied\"", "\"provisional\"")
            .trim_end_matches(' ')
            .to_string()
            + entry[close..].trim_start_matches('\n').trim_start(),
        &lock[end..]
    );
    std::fs::write(d.join("kams.lock"), &edited).unwrap();
    let status = kams(d).arg("status").output().unwrap();
    assert!(status.status.success(), "{}\n{edited}", printed(&status));
    commit(d, "undeny it quietly", false);
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(said.contains(&format!("undenied {TOOL}")), "{said}");
}

#[test]
fn deny_needs_a_selection_and_refuses_what_is_nowhere() {
    let r = approved();
    let d = r.dir();
    let before = std::fs::read(d.join("kams.lock")).unwrap();
    let o = kams(d).args(["deny", "-m", "x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    let o = kams(d)
        .args(["deny", "mcp-server-time/nope", "-m", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert_eq!(std::fs::read(d.join("kams.lock")).unwrap(), before);
    // Denying what is denied as it is changes nothing.
    stdout(d, &["deny", TOOL, "-m", "x"]);
    let head = git(d, &["rev-parse", "HEAD"]);
    let said = stdout(d, &["deny", TOOL, "-m", "again"]);
    assert!(said.starts_with("nothing to deny"), "{said}");
    assert_eq!(git(d, &["rev-parse", "HEAD"]), head);
}

#[test]
fn a_denied_tool_under_a_new_name_is_still_denied() {
    let r = approved();
    let d = r.dir();
    stdout(d, &["deny", TOOL, "-m", "no"]);
    let mut capture: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join(FILE)).unwrap()).unwrap();
    for t in capture["tools"].as_array_mut().unwrap() {
        if t["name"] == "convert_time" {
            t["name"] = "convert_time_v2".into();
        }
    }
    std::fs::write(d.join(FILE), serde_json::to_vec_pretty(&capture).unwrap()).unwrap();
    let denied = findings(d, "denied");
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0]["tool"], "convert_time_v2");
    assert_eq!(denied[0]["severity"], "high");
    assert!(denied[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("looks like `convert_time`, which is denied, under a new name"));
    // Not a rename to approve: a new tool, and the push is refused.
    assert!(findings(d, "renamed").is_empty());
    commit(d, "upstream renamed the denied tool", true);
    let (ok, said) = r.push();
    assert!(!ok, "{said}");
    assert!(
        said.contains("mcp-server-time/convert_time_v2 is new at")
            && said.contains("looks like a tool kams.lock denies, under a new name"),
        "{said}"
    );
}
