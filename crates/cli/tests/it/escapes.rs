//! Writes through symlinks that lead out of the project, for every tool and command that
//! changes files: ws_write, ws_edit, ws_patch, ws_mv, ws_delete, `checkpoints restore` and
//! `pending apply`. Each is checked by its effect: the directory outside is byte for byte as
//! before, nothing is created there, and the refusal says where the link leads.

use crate::common::{self, Project};
use serde_json::{json, Value};

/// A directory outside the project holding `victim.txt`, and a project that reaches it through
/// `out/` (a directory link), `victim.txt` (a file link) and `fresh.txt` (a link to a file
/// that does not exist yet). Read-before-edit is off, so what refuses is the jail alone.
fn escaping_project() -> (Project, tempfile::TempDir) {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside\n").unwrap();
    std::fs::create_dir(outside.path().join("keep")).unwrap();
    std::fs::write(outside.path().join("keep/deep.txt"), "deep\n").unwrap();
    let p = Project::new();
    p.write("src/main.rs", "fn main() {}\n");
    p.write(".slmcode/config.yaml", "read_before_edit: false\n");
    p.symlink(outside.path(), "out");
    p.symlink(outside.path().join("victim.txt"), "victim.txt");
    p.symlink(outside.path().join("fresh.txt"), "fresh.txt");
    (p, outside)
}

const SR: &str = "<<<<<<< SEARCH\noutside\n=======\npwned\n>>>>>>> REPLACE\n";

/// A call that must be refused because of where the link leads.
fn call(tool: &str, args: Value) -> (String, Value, &'static str) {
    (tool.to_string(), args, "leads outside the project")
}

#[test]
fn no_changing_tool_writes_through_a_link_out_of_the_project() {
    let (p, outside) = escaping_project();
    let before = common::snapshot(outside.path());
    let calls = [
        call(
            "ws_write",
            json!({"path": "out/victim.txt", "content": "pwned\n"}),
        ),
        call(
            "ws_write",
            json!({"path": "out/new.txt", "content": "pwned\n"}),
        ),
        call(
            "ws_write",
            json!({"path": "out/newdir/new.txt", "content": "pwned\n"}),
        ),
        call(
            "ws_write",
            json!({"path": "victim.txt", "content": "pwned\n"}),
        ),
        call(
            "ws_write",
            json!({"path": "fresh.txt", "content": "pwned\n"}),
        ),
        call(
            "ws_edit",
            json!({"path": "victim.txt", "old_str": "outside", "new_str": "pwned"}),
        ),
        call(
            "ws_edit",
            json!({"path": "out/victim.txt", "old_str": "outside", "new_str": "pwned"}),
        ),
        call("ws_patch", json!({"path": "victim.txt", "patch": SR})),
        call("ws_patch", json!({"path": "out/victim.txt", "patch": SR})),
        call(
            "ws_patch",
            json!({"patch": "--- a/out/victim.txt\n+++ b/out/victim.txt\n@@ -1 +1 @@\n-outside\n+pwned\n"}),
        ),
        call(
            "ws_patch",
            json!({"patch": "--- /dev/null\n+++ b/out/created.txt\n@@ -0,0 +1 @@\n+pwned\n"}),
        ),
        call("ws_mv", json!({"from": "src/main.rs", "to": "out/main.rs"})),
        call(
            "ws_mv",
            json!({"from": "out/victim.txt", "to": "stolen.txt"}),
        ),
        // The link itself is there, and ws_mv never replaces what is there.
        (
            "ws_mv".into(),
            json!({"from": "src/main.rs", "to": "fresh.txt"}),
            "fresh.txt already exists and ws_mv never overwrites",
        ),
        call("ws_delete", json!({"path": "out/victim.txt"})),
        call("ws_delete", json!({"path": "out/keep", "recursive": true})),
    ];
    for (tool, args, why) in &calls {
        let (text, err) = p.tool(tool, &args.to_string());
        assert!(err, "{tool} {args} was not refused: {text}");
        assert!(text.contains(why), "{tool} {args}: {text}");
        assert_eq!(
            common::snapshot(outside.path()),
            before,
            "{tool} {args} changed the directory outside: {text}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(p.path("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!p.path("stolen.txt").exists());
    // Deleting a link takes the link, never what it leads to.
    for link in ["victim.txt", "out"] {
        let args = json!({"path": link, "recursive": true}).to_string();
        let text = p.ok("ws_delete", &args);
        assert!(text.starts_with(&format!("deleted {link}")), "{text}");
        assert!(
            p.path(link).symlink_metadata().is_err(),
            "{link} is still there"
        );
        assert_eq!(common::snapshot(outside.path()), before, "{text}");
    }
}

fn checkpoints(p: &Project, args: &[&str]) -> (i32, String, String) {
    p.cli("checkpoints", args)
}

fn pending(p: &Project, args: &[&str]) -> (i32, String, String) {
    p.cli("pending", args)
}

/// Replaces the project's `d/` by a link to a directory outside holding files of the same
/// names; returns that directory.
fn swap_for_a_link_out(p: &Project) -> tempfile::TempDir {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "outside a\n").unwrap();
    std::fs::write(outside.path().join("b.txt"), "outside b\n").unwrap();
    std::fs::rename(p.path("d"), p.path("d.real")).unwrap();
    p.symlink(outside.path(), "d");
    outside
}

/// Undo after `d/` became a link out of the project: restoring `d/a.txt` (changed, so restore
/// writes it) and `d/b.txt` (created, so restore removes it) touches nothing outside.
#[test]
fn restore_never_writes_or_removes_through_a_link_out_of_the_project() {
    let p = Project::new();
    p.write("d/a.txt", "original\n");
    let calls = [
        json!({"tool": "ws_read", "args": {"path": "d/a.txt"}}),
        json!({"tool": "ws_edit", "args": {"path": "d/a.txt", "old_str": "original", "new_str": "changed"}}),
        json!({"tool": "ws_write", "args": {"path": "d/b.txt", "content": "new\n"}}),
    ];
    let out = p.session(&calls.iter().map(|c| format!("{c}\n")).collect::<String>());
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    let (_, list, _) = checkpoints(&p, &["list"]);
    let session = list.split_whitespace().next().unwrap().to_string();
    let outside = swap_for_a_link_out(&p);
    let before = common::snapshot(outside.path());
    let (code, said, err) = checkpoints(&p, &["restore", &session]);
    // The effect first: nothing outside was written or removed.
    assert_eq!(common::snapshot(outside.path()), before, "{said}{err}");
    assert_ne!(code, 0, "{said}{err}");
    assert!(err.contains("leads outside the project"), "{said}{err}");
}

/// A change staged in review mode, applied after its directory became a link out of the
/// project, is refused and writes nothing outside.
#[test]
fn pending_apply_never_writes_through_a_link_out_of_the_project() {
    let p = Project::new();
    p.write("d/a.txt", "outside a\n");
    let calls = [
        json!({"tool": "ws_read", "args": {"path": "d/a.txt"}}),
        json!({"tool": "ws_edit", "args": {"path": "d/a.txt", "old_str": "outside a", "new_str": "pwned"}}),
        json!({"tool": "ws_write", "args": {"path": "d/c.txt", "content": "pwned\n"}}),
    ];
    let out = p.session_env(
        &calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
        &[("SLMCODE_PERMISSION_MODE", "review")],
    );
    let ids: Vec<String> = out[1..]
        .iter()
        .map(|r| {
            let text = r["text"].as_str().unwrap();
            text.split("pending apply ")
                .nth(1)
                .unwrap_or_else(|| panic!("not staged: {text}"))
                .trim_end_matches("`]")
                .to_string()
        })
        .collect();
    let outside = swap_for_a_link_out(&p);
    let before = common::snapshot(outside.path());
    for id in &ids {
        let (code, said, err) = pending(&p, &["apply", id]);
        assert_eq!(
            common::snapshot(outside.path()),
            before,
            "{id}: {said}{err}"
        );
        assert_ne!(code, 0, "{id}: {said}{err}");
        assert!(
            err.contains("leads outside the project"),
            "{id}: {said}{err}"
        );
    }
}
