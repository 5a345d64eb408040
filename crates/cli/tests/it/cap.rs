//! The one result cap, on every tool: nothing a tool returns exceeds max_tool_chars, and a cut
//! result names its total size and how to get the rest.

use crate::common::{git, Project};
use serde_json::json;

const MAX: usize = 600;

fn capped(p: &Project, tool: &str, args: &str, hint: &str) {
    let (text, _) = p.tool_env(
        tool,
        args,
        &[
            ("SLMCODE_MAX_TOOL_CHARS", "600"),
            ("SLMCODE_CONTEXT_WINDOW", "100000"),
        ],
    );
    assert!(
        text.chars().count() <= MAX,
        "{tool}: {} chars",
        text.chars().count()
    );
    assert!(
        text.contains("chars in all; showing the first"),
        "{tool}: {text}"
    );
    assert!(text.contains("chars omitted"), "{tool}: {text}");
    assert!(
        text.contains(hint),
        "{tool} should steer with {hint:?}: {text}"
    );
}

#[test]
fn every_tool_is_capped_with_steering_text() {
    let p = Project::new();
    let long: String = (0..400)
        .map(|i| format!("needle line {i} {}\n", "q".repeat(60)))
        .collect();
    p.write("big.txt", &long);
    for i in 0..300 {
        p.write(
            &format!("many/file_{i:03}_with_a_long_name.txt"),
            "needle\n",
        );
    }
    git(p.root(), &["init", "-q"]);

    capped(
        &p,
        "ws_read",
        r#"{"path":"big.txt"}"#,
        r#"Read a smaller window: ws_read {"path":"big.txt","offset":1,"limit":60}"#,
    );
    capped(
        &p,
        "ws_list",
        r#"{"path":"many"}"#,
        "List a subdirectory with ws_list",
    );
    capped(
        &p,
        "ws_glob",
        r#"{"pattern":"many/*.txt"}"#,
        "Narrow the pattern",
    );
    capped(
        &p,
        "ws_grep",
        r#"{"pattern":"needle"}"#,
        "Narrow the search with glob=",
    );
    let items: Vec<String> = (0..30)
        .map(|i| format!("[ ] step {i} {}", "w".repeat(100)))
        .collect();
    capped(
        &p,
        "ws_todo",
        &serde_json::json!({ "items": items }).to_string(),
        "Keep the checklist short",
    );
    for i in 0..100 {
        p.write(&format!("untracked_{i:03}_with_a_long_name.txt"), "x\n");
    }
    capped(&p, "git_status", "{}", "git_diff {\"path\":");
    git(p.root(), &["add", "."]);
    git(
        p.root(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
    );
    p.write("big.txt", long.replace("needle", "thread"));
    capped(
        &p,
        "git_diff",
        "{}",
        r#"Pass a path to see one file: git_diff {"path":"big.txt"}"#,
    );
}

#[test]
fn errors_are_capped_too() {
    let p = Project::new();
    let pattern = "x(".repeat(2000);
    let (text, _) = p.tool_env(
        "ws_grep",
        &serde_json::json!({ "pattern": pattern }).to_string(),
        &[("SLMCODE_MAX_TOOL_CHARS", "600")],
    );
    assert!(text.chars().count() <= MAX, "{}", text.chars().count());
}

/// The shell and the five changing tools go through the same cap: a command's long output, and
/// reports that name a long path (the jail allows paths of any length the system does).
#[test]
fn the_shell_and_every_changing_tool_are_capped() {
    let p = Project::new();
    capped(
        &p,
        "ws_shell",
        r#"{"command":"seq 1 2000"}"#,
        "Narrow the command's output",
    );
    let deep = ["a", "b", "c", "d"].map(|c| c.repeat(200)).join("/");
    let file = format!("{deep}/f.py");
    let moved = format!("{deep}/g.py");
    let gone = format!("{deep}/h.py");
    p.write(&gone, "x = 0\n");
    let session: Vec<serde_json::Value> = vec![
        json!({"tool": "ws_write", "args": {"path": file, "content": "x = 1\n"}}),
        json!({"tool": "ws_read", "args": {"path": file}}),
        json!({"tool": "ws_edit", "args": {"path": file, "old_str": "x = 1", "new_str": "x = 2"}}),
        json!({"tool": "ws_patch", "args": {"path": file, "patch": "<<<<<<< SEARCH\nx = 2\n=======\nx = 3\n>>>>>>> REPLACE\n"}}),
        json!({"tool": "ws_mv", "args": {"from": file, "to": moved}}),
        json!({"tool": "ws_delete", "args": {"path": gone}}),
    ];
    let input: String = session.iter().map(|c| format!("{c}\n")).collect();
    let out = p.session_env(
        &input,
        &[
            ("SLMCODE_MAX_TOOL_CHARS", "600"),
            ("SLMCODE_CONTEXT_WINDOW", "100000"),
        ],
    );
    assert_eq!(out.len(), session.len());
    for (call, reply) in session.iter().zip(&out) {
        let text = reply["text"].as_str().unwrap();
        assert_eq!(reply["is_error"], false, "{call}: {text}");
        assert!(
            text.chars().count() <= MAX,
            "{call}: {} chars",
            text.chars().count()
        );
        if call["tool"] != "ws_read" {
            assert!(text.contains("chars omitted"), "{call}: {text}");
        }
    }
    // Capped reports, whole changes.
    assert_eq!(std::fs::read_to_string(p.path(&moved)).unwrap(), "x = 3\n");
    assert!(!p.path(&file).exists() && !p.path(&gone).exists());
}
