//! `slmcode session`: JSON Lines in and out, one session's state across lines.

use crate::common::Project;
use serde_json::json;

#[test]
fn one_json_line_per_call_with_state_carried() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let out = p.session(concat!(
        "{\"tool\":\"ws_read\",\"args\":{\"path\":\"a.txt\"}}\n",
        "\n",
        "{\"tool\":\"ws_todo\",\"args\":{\"items\":[\"[x] read a.txt\"]}}\n",
        "{\"tool\":\"ws_read\",\"args\":{\"path\":\"missing.txt\"}}\n",
    ));
    assert_eq!(out.len(), 3);
    assert_eq!(out[0]["tool"], "ws_read");
    assert_eq!(out[0]["is_error"], false);
    assert_eq!(out[0]["text"], "     1|hello");
    assert_eq!(out[1]["text"], "Checklist (1 of 1 done):\n[x] read a.txt");
    assert_eq!(out[2]["is_error"], true);
    assert!(out[2]["text"]
        .as_str()
        .unwrap()
        .starts_with("no such file: missing.txt."));
}

#[test]
fn malformed_lines_get_an_error_line_and_the_session_goes_on() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let out = p.session(concat!(
        "{not json\n",
        "[1,2]\n",
        "{\"args\":{}}\n",
        "{\"tool\":7}\n",
        "{\"tool\":\"ws_read\",\"args\":{\"path\":\"a.txt\"}}\n",
    ));
    assert_eq!(out.len(), 5);
    for (i, reply) in out.iter().take(4).enumerate() {
        assert_eq!(reply["is_error"], true);
        assert!(reply["tool"].is_null());
        let text = reply["text"].as_str().unwrap();
        assert!(text.starts_with(&format!("line {}:", i + 1)), "{text}");
        assert!(text.contains("{\"tool\": \"ws_read\""), "{text}");
    }
    assert_eq!(out[4]["text"], "     1|hello");
}

#[test]
fn a_thousand_lines() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let mut input = String::new();
    // Every call differs, so the loop guard has nothing to say.
    for i in 0..1000 {
        let line = match i % 4 {
            0 => json!({"tool": "ws_read", "args": {"path": "a.txt", "limit": i + 1}}),
            1 => json!({"tool": "ws_glob", "args": {"pattern": format!("*.{i}")}}),
            2 => json!({"tool": "ws_todo", "args": {"items": [format!("step {i}")]}}),
            _ => json!({"tool": "ws_grep", "args": {"pattern": format!("hel+o|x{i}")}}),
        };
        input.push_str(&format!("{line}\n"));
    }
    let out = p.session(&input);
    assert_eq!(out.len(), 1000);
    assert!(out.iter().all(|r| r["is_error"] == false), "{out:?}");
    assert_eq!(out[998]["text"], "Checklist (0 of 1 done):\n[ ] step 998");
    assert_eq!(out[999]["text"], "a.txt:1:hello\n(1 match in 1 file)");
}

#[test]
fn the_loop_guard_nudges_then_stops_and_a_task_line_resets_it() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let read = json!({"tool": "ws_read", "args": {"path": "a.txt"}}).to_string();
    let input = format!("{read}\n{read}\n{read}\n{{\"task\":\"t2\"}}\n{read}\n");
    let out = p.session(&input);
    assert_eq!(out[0]["is_error"], false);
    assert_eq!(out[1]["is_error"], true);
    assert!(
        out[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Loop detected"),
        "{}",
        out[1]
    );
    assert!(
        out[2]["text"].as_str().unwrap().starts_with("STOP"),
        "{}",
        out[2]
    );
    assert_eq!(out[3]["task"], "t2");
    assert_eq!(
        out[4]["is_error"], false,
        "a new task starts with a clean history"
    );
}

#[test]
fn a_write_in_between_resets_the_loop_guard() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let read = json!({"tool": "ws_read", "args": {"path": "a.txt"}}).to_string();
    let edit =
        json!({"tool": "ws_edit", "args": {"path": "a.txt", "old_str": "one", "new_str": "two"}});
    let out = p.session(&format!("{read}\n{edit}\n{read}\n"));
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert_eq!(
        out[2]["is_error"], false,
        "re-reading after a change is not a loop: {}",
        out[2]
    );
    assert_eq!(out[2]["text"], "     1|two");
}
