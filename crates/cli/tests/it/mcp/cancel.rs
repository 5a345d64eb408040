//! A cancelled call stops its work, and a long call reports progress — over stdio and HTTP,
//! in the session revisions and in 2026-07-28, with the official Python SDK as the client. The
//! effect is what is checked: the command is gone from /proc, and the next call is not kept
//! waiting behind it.

use super::*;

/// Each transport and revision a client may use.
fn targets(root: &Path, http: &HttpServer) -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("stdio", stdio_server(root), "auto"),
        ("stdio", stdio_server(root), "legacy"),
        ("http", json!({"url": http.url}), "auto"),
        ("http", json!({"url": http.url}), "legacy"),
    ]
}

#[test]
fn a_cancelled_call_is_killed_and_the_next_call_is_served_at_once() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let http = HttpServer::start(p.root(), &[]);
    for (i, (transport, server, mode)) in targets(p.root(), &http).into_iter().enumerate() {
        let marker = format!("30.{}{i}", std::process::id());
        let out = drive(json!({
            "server": server, "mode": mode,
            "steps": [
                // The client gives up after 1 s and sends notifications/cancelled.
                {"call": "ws_shell", "args": {"command": format!("sleep {marker}")}, "timeout": 1.0},
                {"sleep": 0.5},
                {"alive": marker},
                {"call": "ws_read", "args": {"path": "a.txt"}},
            ]
        }));
        let what = format!("{transport} {mode}: {out}");
        assert_eq!(step(&out, 0)["timed_out"], json!(true), "{what}");
        assert_eq!(
            step(&out, 2)["alive"],
            json!(false),
            "the command outlived the cancel: {what}"
        );
        assert_eq!(text(&out, 3), "     1|one", "{what}");
        // Generous (the figure is milliseconds): behind the sleep it would wait 29 s.
        let read = step(&out, 3)["elapsed"].as_f64().unwrap();
        assert!(read < 2.0, "the read waited {read} s: {what}");
    }
}

#[test]
fn a_long_command_sends_progress_with_its_last_line() {
    let p = Project::new();
    let http = HttpServer::start(p.root(), &[]);
    for (transport, server, mode) in targets(p.root(), &http) {
        let out = drive(json!({
            "server": server, "mode": mode,
            "steps": [{"call": "ws_shell", "args": {"command": "echo one; sleep 1.4; echo two; sleep 1.4"}, "progress": true}]
        }));
        let what = format!("{transport} {mode}: {out}");
        assert_eq!(step(&out, 0)["is_error"], json!(false), "{what}");
        let progress = step(&out, 0)["progress"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(progress.len() >= 2, "{what}");
        let values: Vec<f64> = progress
            .iter()
            .filter_map(|p| p["progress"].as_f64())
            .collect();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "progress must grow: {what}"
        );
        assert_eq!(
            progress[0]["message"],
            json!("running for 1 s: one"),
            "{what}"
        );
        assert!(
            progress
                .last()
                .and_then(|p| p["message"].as_str())
                .is_some_and(|m| m.ends_with(": two")),
            "{what}"
        );
    }
}
