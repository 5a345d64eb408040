//! ws_mv and ws_delete: git mv for tracked files, never an overwrite; links deleted, not their
//! targets; directories only recursively.

use super::*;
use crate::common::git;

#[test]
fn mv_uses_git_for_tracked_files_and_never_overwrites() {
    let p = Project::new();
    p.write("a.txt", "a\n")
        .write("b.txt", "b\n")
        .write("untracked.txt", "u\n");
    git(p.root(), &["init", "-q"]);
    git(p.root(), &["add", "a.txt", "b.txt"]);
    git(p.root(), &["commit", "-qm", "init"]);
    let out = run(
        &p,
        &[
            json!({"tool": "ws_mv", "args": {"from": "a.txt", "to": "b.txt"}}),
            json!({"tool": "ws_mv", "args": {"from": "a.txt", "to": "moved/a.txt"}}),
            json!({"tool": "ws_mv", "args": {"source": "untracked.txt", "destination": "u2.txt"}}),
            json!({"tool": "ws_mv", "args": {"from": ".slmcode/config.yaml", "to": "c.yaml"}}),
        ],
    );
    let refusal = out[0]["text"].as_str().unwrap();
    assert!(
        refusal.contains("b.txt already exists and ws_mv never overwrites"),
        "{refusal}"
    );
    assert_eq!(std::fs::read_to_string(p.path("b.txt")).unwrap(), "b\n");
    assert_eq!(out[1]["text"], "moved a.txt → moved/a.txt (git mv)");
    assert_eq!(out[2]["text"], "moved untracked.txt → u2.txt (renamed)");
    assert!(
        out[3]["text"]
            .as_str()
            .unwrap()
            .contains("harness control state"),
        "{}",
        out[3]
    );
    let status = std::process::Command::new("git")
        .args(["status", "--short"])
        .current_dir(p.root())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("R  a.txt -> moved/a.txt"), "{status}");
}

#[test]
fn delete_takes_links_not_targets_and_directories_only_recursively() {
    let p = Project::new();
    p.write("real.txt", "keep me\n")
        .write("dir/a.txt", "a\n")
        .write("dir/sub/b.txt", "b\n");
    p.symlink("real.txt", "link.txt");
    let out = run(
        &p,
        &[
            json!({"tool": "ws_delete", "args": {"path": "link.txt"}}),
            json!({"tool": "ws_delete", "args": {"path": "dir"}}),
            json!({"tool": "ws_delete", "args": {"path": "dir", "recursive": true}}),
            json!({"tool": "ws_delete", "args": {"path": "missing.txt"}}),
        ],
    );
    assert!(
        out[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("deleted link.txt"),
        "{}",
        out[0]
    );
    assert!(std::fs::symlink_metadata(p.path("link.txt")).is_err());
    assert_eq!(
        std::fs::read_to_string(p.path("real.txt")).unwrap(),
        "keep me\n"
    );
    assert!(
        out[1]["text"]
            .as_str()
            .unwrap()
            .contains("repeat the call with \"recursive\": true"),
        "{}",
        out[1]
    );
    assert!(
        out[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("deleted dir (2 files)"),
        "{}",
        out[2]
    );
    assert!(!p.path("dir").exists());
    assert_eq!(out[3]["is_error"], true);
    // Everything comes back, the link as a link.
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (code, _, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_link(p.path("link.txt")).unwrap().to_str(),
        Some("real.txt")
    );
    assert_eq!(
        std::fs::read_to_string(p.path("dir/sub/b.txt")).unwrap(),
        "b\n"
    );
}
