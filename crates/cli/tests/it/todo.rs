//! ws_todo through the real binary.

use crate::common::Project;

#[test]
fn writes_and_echoes_the_checklist() {
    let p = Project::new();
    let text = p.ok(
        "ws_todo",
        r#"{"items":["[x] read the parser","[ ] add the flag","- [ ] run tests"]}"#,
    );
    assert_eq!(
        text,
        "Checklist (1 of 3 done):\n[x] read the parser\n[ ] add the flag\n[ ] run tests"
    );
}

#[test]
fn object_items_and_a_newline_string_are_accepted() {
    let p = Project::new();
    let text = p.ok(
        "ws_todo",
        r#"{"todos":[{"content":"a","status":"completed"},{"task":"b"}]}"#,
    );
    assert_eq!(text, "Checklist (1 of 2 done):\n[x] a\n[ ] b");
    let text = p.ok("ws_todo", r#"{"items":"[x] one\n[ ] two"}"#);
    assert_eq!(text, "Checklist (1 of 2 done):\n[x] one\n[ ] two");
}

#[test]
fn bounded_to_30_items_of_200_chars_and_says_so() {
    let p = Project::new();
    let items: Vec<String> = (0..34)
        .map(|i| format!("step {i} {}", "z".repeat(250)))
        .collect();
    let args = serde_json::json!({ "items": items }).to_string();
    let text = p.ok("ws_todo", &args);
    assert!(
        text.starts_with("Checklist (0 of 30 done):"),
        "{}",
        &text[..80]
    );
    assert!(text
        .contains("[kept the first 30 of 34 items — the checklist holds at most 30; merge steps]"));
    assert!(text.contains("[30 item(s) cut to 200 characters"));
    for line in text.lines().filter(|l| l.starts_with("[ ] ")) {
        assert_eq!(line.chars().count(), 204, "{line}");
    }
    assert!(!text.contains("step 30"));
}

#[test]
fn an_empty_list_clears_and_state_carries_in_a_session() {
    let p = Project::new();
    let out = p.session(
        "{\"tool\":\"ws_todo\",\"args\":{\"items\":[\"a\"]}}\n{\"tool\":\"ws_todo\",\"args\":{\"items\":[]}}\n",
    );
    assert_eq!(out[1]["text"], "(checklist cleared: it has no items)");
    let msg = p.err("ws_todo", "{}");
    assert!(msg.contains("ws_todo needs \"items\""), "{msg}");
    let msg = p.err("ws_todo", r#"{"items":[1,2]}"#);
    assert!(msg.contains("\"items\" must be a list of strings"), "{msg}");
}
