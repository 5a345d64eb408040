//! The one result cap, on every tool: nothing a tool returns exceeds max_tool_chars, and a cut
//! result names its total size and how to get the rest.

use crate::common::{git, Project};

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
