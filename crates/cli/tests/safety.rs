//! The safety net through the real binary: the syntax check and its revert, checkpoints and
//! restore, ws_mv, ws_delete and the focus guard.

mod common;
use std::os::unix::fs::PermissionsExt;

use common::{bin, git, Project};
use serde_json::{json, Value};

fn run(p: &Project, calls: &[Value]) -> Vec<Value> {
    p.session(&calls.iter().map(|c| format!("{c}\n")).collect::<String>())
}

fn read(path: &str) -> Value {
    json!({"tool": "ws_read", "args": {"path": path}})
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"tool": "ws_edit", "args": {"path": path, "old_str": old, "new_str": new}})
}

fn checkpoints(p: &Project, args: &[&str]) -> (i32, String, String) {
    let out = bin()
        .arg("checkpoints")
        .args(args)
        .arg("--root")
        .arg(p.root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_edit_that_breaks_a_parsing_file_is_reverted_byte_for_byte() {
    let cases = [
        (
            "lib.rs",
            "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            "    a + b\n",
            "    (a + b\n",
        ),
        (
            "app.py",
            "def f(x):\n    return x + 1\n",
            "    return x + 1\n",
            "    return (x + 1\n",
        ),
        (
            "main.go",
            "package main\n\nfunc main() {\n\tprintln(1)\n}\n",
            "\tprintln(1)\n",
            "\tprintln(1\n",
        ),
        (
            "app.ts",
            "export function f(x: number): number {\n  return x;\n}\n",
            "  return x;\n",
            "  return [x;\n",
        ),
        (
            "config.json",
            "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
            "  \"b\": 2\n",
            "  \"b\": 2,\n",
        ),
    ];
    for (file, original, old, new) in cases {
        let p = Project::new();
        p.write(file, original);
        let out = run(&p, &[read(file), edit(file, old, new)]);
        let text = out[1]["text"].as_str().unwrap();
        assert_eq!(out[1]["is_error"], true, "{file}: {text}");
        assert!(text.starts_with(&format!("EDIT REVERTED — {file} parsed correctly before your change and does NOT parse after it (tree-sitter ")), "{file}: {text}");
        assert!(
            text.contains(&format!("{file}:")),
            "{file}: the location: {text}"
        );
        assert!(text.contains("The file is unchanged on disk."), "{text}");
        assert!(
            text.ends_with("Do NOT retry the identical edit — it will be reverted again."),
            "{text}"
        );
        assert_eq!(
            std::fs::read(p.path(file)).unwrap(),
            original.as_bytes(),
            "{file}"
        );
    }
}

#[test]
fn write_and_patch_are_checked_too() {
    let p = Project::new();
    p.write("a.rs", "fn main() {}\n");
    let out = run(
        &p,
        &[
            read("a.rs"),
            json!({"tool": "ws_write", "args": {"path": "a.rs", "content": "fn main() {\n"}}),
            json!({"tool": "ws_patch", "args": {"path": "a.rs", "patch": "@@ -1 +1 @@\n-fn main() {}\n+fn main() {\n"}}),
        ],
    );
    assert!(
        out[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("WRITE REVERTED — a.rs"),
        "{}",
        out[1]
    );
    assert!(
        out[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("PATCH REVERTED — a.rs"),
        "{}",
        out[2]
    );
    assert_eq!(
        std::fs::read_to_string(p.path("a.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn an_already_broken_file_gets_the_error_appended() {
    let p = Project::new();
    p.write("bad.py", "def f(:\n    return 1\n\nx = 1\n");
    let out = run(&p, &[read("bad.py"), edit("bad.py", "x = 1", "x = 2")]);
    let text = out[1]["text"].as_str().unwrap();
    assert_eq!(out[1]["is_error"], false, "{text}");
    assert!(
        text.starts_with("edited bad.py (1 replacement(s))"),
        "{text}"
    );
    assert!(
        text.contains("[syntax: bad.py does not parse (tree-sitter python): bad.py:1:"),
        "{text}"
    );
    assert!(text.contains("fix it now"), "{text}");
    assert_eq!(
        std::fs::read_to_string(p.path("bad.py")).unwrap(),
        "def f(:\n    return 1\n\nx = 2\n"
    );
}

#[test]
fn unknown_extensions_are_skipped_and_the_check_can_be_disabled() {
    let p = Project::new();
    p.write("notes.txt", "(balanced)\n");
    let out = run(
        &p,
        &[
            read("notes.txt"),
            edit("notes.txt", "(balanced)", "((unbalanced"),
        ],
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    p.write("a.rs", "fn main() {}\n");
    // The user turns the check off (a project's own config could only turn it on).
    let calls = [read("a.rs"), edit("a.rs", "fn main() {}", "fn main() {")];
    let out = p.session_env(
        &calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
        &[("SLMCODE_DISABLE_SYNTAX_CHECK", "true")],
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert_eq!(
        std::fs::read_to_string(p.path("a.rs")).unwrap(),
        "fn main() {\n"
    );
}

#[test]
fn write_edit_delete_then_restore_gives_back_bytes_and_mode() {
    let p = Project::new();
    p.write("tool.sh", "#!/bin/sh\necho one\n");
    std::fs::set_permissions(p.path("tool.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let out = run(
        &p,
        &[
            read("tool.sh"),
            json!({"tool": "ws_write", "args": {"path": "tool.sh", "content": "#!/bin/sh\necho two\n"}}),
            edit("tool.sh", "echo two", "echo three"),
            json!({"tool": "ws_write", "args": {"path": "new.txt", "content": "fresh\n"}}),
            json!({"tool": "ws_delete", "args": {"path": "tool.sh"}}),
        ],
    );
    for reply in &out {
        assert_eq!(reply["is_error"], false, "{reply}");
    }
    let deleted = out[4]["text"].as_str().unwrap();
    assert!(
        deleted.starts_with("deleted tool.sh; restore it with `slmcode checkpoints restore "),
        "{deleted}"
    );
    assert!(!p.path("tool.sh").exists());
    let (code, list, _) = checkpoints(&p, &["list"]);
    assert_eq!(code, 0);
    let session = list.split_whitespace().next().unwrap().to_string();
    assert!(deleted.contains(&session), "{deleted} / {list}");
    let (_, show, _) = checkpoints(&p, &["show", &session]);
    assert!(show.contains("tool.sh  file, mode 750"), "{show}");
    assert!(show.contains("new.txt  did not exist"), "{show}");
    let (code, restored, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert!(restored.contains("restored tool.sh"), "{restored}");
    assert!(restored.contains("removed new.txt"), "{restored}");
    assert_eq!(
        std::fs::read_to_string(p.path("tool.sh")).unwrap(),
        "#!/bin/sh\necho one\n"
    );
    let mode = std::fs::metadata(p.path("tool.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o750);
    assert!(!p.path("new.txt").exists());
    let (code, _, err) = checkpoints(&p, &["restore", "../etc"]);
    assert_eq!(code, 1);
    assert!(err.contains("is not a checkpoint session id"), "{err}");
}

#[test]
fn a_move_restores_on_both_paths() {
    let p = Project::new();
    p.write("src/old.rs", "pub fn f() {}\n");
    let out = run(
        &p,
        &[json!({"tool": "ws_mv", "args": {"from": "src/old.rs", "to": "src/deep/new.rs"}})],
    );
    assert_eq!(
        out[0]["text"],
        "moved src/old.rs → src/deep/new.rs (renamed)"
    );
    assert!(!p.path("src/old.rs").exists());
    assert_eq!(
        std::fs::read_to_string(p.path("src/deep/new.rs")).unwrap(),
        "pub fn f() {}\n"
    );
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let (code, _, err) = checkpoints(&p, &["restore", &session]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(p.path("src/old.rs")).unwrap(),
        "pub fn f() {}\n"
    );
    assert!(!p.path("src/deep/new.rs").exists());
}

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

#[test]
fn the_focus_guard_names_the_allowed_globs_and_the_boundary_still_holds() {
    let p = Project::new();
    p.write("src/a.rs", "fn a() {}\n")
        .write("docs/readme.md", "x\n");
    p.write(".slmcode/config.yaml", "focus: [\"src/**\"]\n");
    let out = run(
        &p,
        &[
            json!({"tool": "ws_write", "args": {"path": "src/b.rs", "content": "fn b() {}\n"}}),
            json!({"tool": "ws_write", "args": {"path": "docs/new.md", "content": "y\n"}}),
            json!({"tool": "ws_delete", "args": {"path": "docs/readme.md"}}),
            json!({"tool": "ws_write", "args": {"path": ".slmcode/hooks.json", "content": "{}"}}),
        ],
    );
    assert_eq!(out[0]["is_error"], false, "{}", out[0]);
    for reply in &out[1..3] {
        let text = reply["text"].as_str().unwrap();
        assert!(
            text.contains(
                "outside this task's focus. Only paths matching \"src/**\" may be changed"
            ),
            "{text}"
        );
    }
    assert!(
        out[3]["text"]
            .as_str()
            .unwrap()
            .contains("harness control state"),
        "{}",
        out[3]
    );
    assert!(p.path("docs/readme.md").exists());
}

/// Undo goes through the same checked path as every write: after `d/` became a symlink to
/// `.slmcode`, restoring `d/config.yaml` (created in the session, so restore removes it) and
/// `d/a.txt` (changed, so restore writes it) touches nothing in `.slmcode/`.
#[test]
fn restore_never_writes_or_removes_through_a_swapped_directory() {
    let p = Project::new();
    p.write("d/a.txt", "original\n");
    p.write(".slmcode/config.yaml", "shell_permission: deny\n");
    let out = run(
        &p,
        &[
            read("d/a.txt"),
            edit("d/a.txt", "original", "changed"),
            json!({"tool": "ws_write", "args": {"path": "d/config.yaml", "content": "x: 1\n"}}),
        ],
    );
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    std::fs::rename(p.path("d"), p.path("d.real")).unwrap();
    p.symlink(".slmcode", "d");
    let before = common::snapshot(&p.path(".slmcode"));
    let (code, said, err) = checkpoints(&p, &["restore", &session]);
    assert_ne!(code, 0, "{said}{err}");
    assert!(err.contains("harness control state"), "{err}");
    let after = common::snapshot(&p.path(".slmcode"));
    assert_eq!(
        after.get("config.yaml"),
        before.get("config.yaml"),
        "the control file was removed or rewritten"
    );
    assert!(!p.path(".slmcode/a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/config.yaml")).unwrap(),
        "shell_permission: deny\n"
    );
}
