//! MCP 2026-07-28 over HTTP: no sessions, every request stands alone. What was read is kept
//! per server process, by the file's resolved path and the hash of the bytes shown: a request
//! may edit a file whose current bytes this server showed to any client; a file never shown,
//! or changed since, must be read (again) first. The official Python SDK pinned to the newest
//! revision is the client.

use super::*;

#[test]
fn the_newest_revision_reads_then_edits_over_http() {
    let p = Project::new();
    p.write("a.py", "a = 1\n");
    p.write("b.py", "b = 1\n");
    let http = HttpServer::start(p.root(), &[]);
    let out = drive(json!({
        "server": {"url": http.url}, "mode": "2026-07-28",
        "steps": [
            {"list_tools": true},
            {"call": "ws_read", "args": {"path": "a.py"}},
            {"call": "ws_edit", "args": {"path": "a.py", "old_str": "a = 1", "new_str": "a = 2"}},
            // What the edit wrote counts as shown: a second edit goes through too.
            {"call": "ws_edit", "args": {"path": "a.py", "old_str": "a = 2", "new_str": "a = 3"}},
            {"call": "ws_edit", "args": {"path": "b.py", "old_str": "b = 1", "new_str": "b = 2"}},
        ]
    }));
    assert_eq!(out["protocol_version"], json!("2026-07-28"), "{out}");
    assert_eq!(
        step(&out, 0)["tools"].as_array().unwrap().len(),
        registry_json().len()
    );
    assert!(!is_error(&out, 2), "{}", text(&out, 2));
    assert!(!is_error(&out, 3), "{}", text(&out, 3));
    assert_eq!(std::fs::read_to_string(p.path("a.py")).unwrap(), "a = 3\n");
    // Never shown: refused, and the file is as it was.
    assert!(is_error(&out, 4));
    assert!(
        text(&out, 4).starts_with("edit refused — b.py has not been read"),
        "{}",
        text(&out, 4)
    );
    assert_eq!(std::fs::read_to_string(p.path("b.py")).unwrap(), "b = 1\n");

    // Changed on disk since it was shown: refused until read again.
    p.write("a.py", "a = 3\nx = 0\n");
    let out = drive(json!({
        "server": {"url": http.url}, "mode": "2026-07-28",
        "steps": [
            {"call": "ws_edit", "args": {"path": "a.py", "old_str": "a = 3", "new_str": "a = 4"}},
            {"call": "ws_read", "args": {"path": "a.py"}},
            {"call": "ws_edit", "args": {"path": "a.py", "old_str": "a = 3", "new_str": "a = 4"}},
        ]
    }));
    assert!(is_error(&out, 0));
    assert!(
        text(&out, 0).contains("changed on disk since"),
        "{}",
        text(&out, 0)
    );
    assert!(!is_error(&out, 2), "{}", text(&out, 2));
    assert_eq!(
        std::fs::read_to_string(p.path("a.py")).unwrap(),
        "a = 4\nx = 0\n"
    );
}

#[test]
fn what_one_client_was_shown_lets_another_edit_the_same_bytes() {
    // The trust this revision implies (the README says it): the record is the server's, not
    // a client's. Sessions of the handshake revisions stay apart (http.rs).
    let p = Project::new();
    p.write("a.py", "a = 1\n");
    let http = HttpServer::start(p.root(), &[]);
    let reader = drive(json!({
        "server": {"url": http.url}, "mode": "2026-07-28",
        "steps": [{"call": "ws_read", "args": {"path": "a.py"}}]
    }));
    assert!(!is_error(&reader, 0));
    let editor = drive(json!({
        "server": {"url": http.url}, "mode": "2026-07-28",
        "steps": [{"call": "ws_edit", "args": {"path": "a.py", "old_str": "a = 1", "new_str": "a = 2"}}]
    }));
    assert!(!is_error(&editor, 0), "{}", text(&editor, 0));
    assert_eq!(std::fs::read_to_string(p.path("a.py")).unwrap(), "a = 2\n");
}
