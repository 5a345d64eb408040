//! Cancelling a running call (an MCP client's `notifications/cancelled`, a user's Ctrl-C)
//! stops the work, checked by its effect: the command's whole process tree is gone from /proc
//! at once, a walk stops, and the result says the call was cancelled. Progress of a long
//! command reaches the caller.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use slmcode_aci::control::{CallControl, Progress};
use slmcode_aci::{Config, Outcome, RefusalClass, Registry, Workspace};

use crate::shell_run::survivors;

/// Runs `args` through ws_shell on another thread, cancels it after `after`, and returns the
/// result with the time from the cancel to the call's return.
fn cancel_shell(args: serde_json::Value, after: Duration) -> (slmcode_aci::ToolResult, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let control = CallControl::new();
    let theirs = control.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = Registry::coding().call_with(&mut ws, "ws_shell", &args, &theirs);
        let _ = tx.send((r, Instant::now()));
        drop(dir);
    });
    std::thread::sleep(after);
    let cancelled_at = Instant::now();
    control.cancel();
    let (result, returned) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the cancelled call did not return");
    (result, returned.saturating_duration_since(cancelled_at))
}

#[test]
fn a_cancelled_command_and_everything_it_started_are_gone_at_once() {
    // Two children in a pipeline, both far from done.
    let (result, took) = cancel_shell(
        json!({"command": "sleep 1000.6161 | sleep 1000.6161", "timeout_sec": 600}),
        Duration::from_millis(500),
    );
    // Generous: a call that ignored the cancel would run for 600 s.
    assert!(
        took < Duration::from_secs(2),
        "took {took:?} after the cancel"
    );
    assert!(
        survivors("1000.6161").is_empty(),
        "{:?}",
        survivors("1000.6161")
    );
    assert!(result.is_error);
    assert_eq!(result.outcome, Outcome::Refused(RefusalClass::Cancelled));
    assert!(
        result
            .text
            .starts_with("ws_shell was cancelled before it finished")
            && result.text.contains("[cancelled after "),
        "{}",
        result.text
    );
}

#[test]
fn a_long_command_reports_progress_with_its_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let control = CallControl::new().with_progress(Arc::new(move |p| {
        sink.lock().unwrap().push(p);
    }));
    let r = Registry::coding().call_with(
        &mut ws,
        "ws_shell",
        &json!({"command": "echo step1; sleep 1.3; echo step2; sleep 1.3; echo done"}),
        &control,
    );
    assert!(!r.is_error, "{}", r.text);
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].elapsed < w[1].elapsed),
        "{seen:?}"
    );
    assert_eq!(seen[0].last_line.as_deref(), Some("step1"), "{seen:?}");
    assert_eq!(
        seen.last().and_then(|p| p.last_line.as_deref()),
        Some("step2"),
        "{seen:?}"
    );
}

#[test]
fn a_cancelled_walk_stops_and_is_answered_as_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..50 {
        std::fs::write(dir.path().join(format!("f{i}.txt")), "needle\n").unwrap();
    }
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let registry = Registry::coding();
    // The walk itself stops: with the switch already set, no file is visited.
    ws.control = CallControl::new();
    ws.control.cancel();
    let r = registry.call(&mut ws, "ws_grep", &json!({"pattern": "needle"}));
    assert!(!r.text.contains("f1.txt"), "{}", r.text);
    let r = registry.call(&mut ws, "ws_glob", &json!({"pattern": "**/*.txt"}));
    assert!(!r.text.contains("f1.txt"), "{}", r.text);
    // Through call_with, a cancelled search is never passed off as "no matches".
    ws.control = CallControl::new();
    let control = CallControl::new();
    control.cancel();
    let r = registry.call_with(&mut ws, "ws_grep", &json!({"pattern": "needle"}), &control);
    assert_eq!(r.outcome, Outcome::Refused(RefusalClass::Cancelled));
    // Uncancelled, the same search finds all 50.
    let r = registry.call(&mut ws, "ws_grep", &json!({"pattern": "needle"}));
    assert!(
        r.text.contains("50 matches in 50 files") || r.text.contains("(50 match"),
        "{}",
        r.text
    );
}
