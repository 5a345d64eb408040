//! The focus guard on every changing tool.

use super::*;
use crate::common;

/// Every changing tool is held to the focus: each refusal names the allowed globs and leaves
/// the project byte for byte as it was; the control directory stays closed even inside it.
#[test]
fn the_focus_guard_names_the_allowed_globs_and_the_boundary_still_holds() {
    let p = Project::new();
    p.write("src/a.rs", "fn a() {}\n")
        .write("docs/readme.md", "x\n");
    p.write(".slmcode/config.yaml", "focus: [\"src/**\"]\n");
    let outside_project = |p: &Project| {
        let mut all = common::snapshot(p.root());
        all.retain(|k, _| !k.starts_with(".slmcode"));
        all
    };
    let before = outside_project(&p);
    let refused_calls = [
        json!({"tool": "ws_write", "args": {"path": "docs/new.md", "content": "y\n"}}),
        json!({"tool": "ws_write", "args": {"path": "docs/readme.md", "content": "y\n"}}),
        edit("docs/readme.md", "x", "y"),
        json!({"tool": "ws_patch", "args": {"path": "docs/readme.md", "patch": "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"}}),
        json!({"tool": "ws_patch", "args": {"patch": "--- a/docs/readme.md\n+++ b/docs/readme.md\n@@ -1 +1 @@\n-x\n+y\n"}}),
        json!({"tool": "ws_mv", "args": {"from": "docs/readme.md", "to": "src/readme.md"}}),
        json!({"tool": "ws_mv", "args": {"from": "src/a.rs", "to": "docs/a.rs"}}),
        json!({"tool": "ws_delete", "args": {"path": "docs/readme.md"}}),
    ];
    let mut calls = vec![read("docs/readme.md"), read("src/a.rs")];
    calls.extend(refused_calls.iter().cloned());
    calls.push(
        json!({"tool": "ws_write", "args": {"path": ".slmcode/hooks.json", "content": "{}"}}),
    );
    let out = run(&p, &calls);
    assert_eq!(out.len(), calls.len(), "{out:?}");
    for (call, reply) in refused_calls.iter().zip(&out[2..]) {
        let text = reply["text"].as_str().unwrap();
        assert_eq!(reply["is_error"], true, "{call}: {text}");
        assert!(
            text.contains(
                "outside this task's focus. Only paths matching \"src/**\" may be changed"
            ),
            "{call}: {text}"
        );
    }
    let last = out.last().unwrap();
    assert!(
        last["text"]
            .as_str()
            .unwrap()
            .contains("harness control state"),
        "{last}"
    );
    assert_eq!(outside_project(&p), before, "{out:?}");
    assert!(!p.path(".slmcode/hooks.json").exists());
    // Inside the focus the same tools change the file, and what was written reads back.
    let out = run(
        &p,
        &[json!({"tool": "ws_write", "args": {"path": "src/b.rs", "content": "fn b() {}\n"}})],
    );
    assert_eq!(out[0]["is_error"], false, "{}", out[0]);
    assert_eq!(
        std::fs::read_to_string(p.path("src/b.rs")).unwrap(),
        "fn b() {}\n"
    );
}
