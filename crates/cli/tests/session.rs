//! `slmcode session`: JSON Lines in and out, one session's state across lines.

mod common;
use common::Project;

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
    for i in 0..1000 {
        match i % 4 {
            0 => input.push_str("{\"tool\":\"ws_read\",\"args\":{\"path\":\"a.txt\"}}\n"),
            1 => input.push_str("{\"tool\":\"ws_list\",\"args\":{}}\n"),
            2 => input.push_str(&format!(
                "{{\"tool\":\"ws_todo\",\"args\":{{\"items\":[\"step {i}\"]}}}}\n"
            )),
            _ => input.push_str("{\"tool\":\"ws_grep\",\"args\":{\"pattern\":\"hel+o\"}}\n"),
        }
    }
    let out = p.session(&input);
    assert_eq!(out.len(), 1000);
    assert!(out.iter().all(|r| r["is_error"] == false));
    assert_eq!(out[998]["text"], "Checklist (0 of 1 done):\n[ ] step 998");
    assert_eq!(out[999]["text"], "a.txt:1:hello\n(1 match in 1 file)");
}
