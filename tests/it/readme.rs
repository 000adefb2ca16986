//! The README's workflow section, followed as written (issue 23): from an
//! empty repository to an accepted push, with the real binary on PATH and
//! real git, the block run by bash exactly as a user would paste it.

use std::path::Path;

use crate::common::{text, with_kams_on_path};

/// The first ```sh block after `## Workflow` in README.md.
fn workflow_block() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find("\n## Workflow\n").expect("a workflow section")..];
    let start = section.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let end = start + section[start..].find("```\n").expect("the block ends");
    section[start..end].to_string()
}

#[test]
fn the_readme_workflow_runs_as_written_to_an_accepted_push() {
    let block = workflow_block();
    assert!(block.contains("git push -q origin main"), "{block}");
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("gitconfig");
    std::fs::write(
        &config,
        "[user]\n\tname = Rita Reviewer\n\temail = rita@example.com\n",
    )
    .unwrap();
    let tmp = home.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let script = format!("set -eu\n{block}echo WORKFLOW-DONE\ngit log --format=%s origin/main\n");
    let o = with_kams_on_path("bash", Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["-c", &script])
        .env("GIT_CONFIG_GLOBAL", &config)
        .env("HOME", home.path())
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    let (_, after) = out.split_once("WORKFLOW-DONE\n").expect("every step ran");
    // The remote took the approval: its main is the approval commit.
    assert!(
        after.starts_with("kams: approve 9 entries and 3 launches of files, notes, web\nstart\n"),
        "{after}"
    );
    assert!(
        err.contains("no unapproved drift, every approval signed off"),
        "{err}"
    );
    // log shows who approved, signed off.
    assert!(
        out.contains("approver  Rita Reviewer <rita@example.com>"),
        "{out}"
    );
}
