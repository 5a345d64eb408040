//! ws_write, ws_edit and ws_patch through the real binary, as a model drives them in a session.

use crate::common;
use crate::common::Project;
use serde_json::json;

fn lines(calls: &[serde_json::Value]) -> String {
    calls.iter().map(|c| format!("{c}\n")).collect()
}

#[test]
fn read_edit_edit_again_then_patch() {
    let p = Project::new();
    p.write(
        "app.py",
        "def load():\n    return 1\n\n\ndef save():\n    return 2\n",
    );
    let out = p.session(&lines(&[
        json!({"tool":"ws_read","args":{"path":"app.py"}}),
        json!({"tool":"ws_edit","args":{"path":"app.py","old_str":"    return 1","new_str":"    return 10"}}),
        // The session's own write counts as read: no re-read needed for the next edit.
        json!({"tool":"ws_edit","args":{"file_path":"app.py","old_string":"def save():\n  return 2","new_string":"def save():\n  return 20"}}),
        json!({"tool":"ws_patch","args":{"path":"app.py","diff":"@@ -1,2 +1,3 @@\n def load():\n+    print('loading')\n     return 10\n"}}),
    ]));
    assert_eq!(out[1]["text"], "edited app.py (1 replacement(s))");
    assert_eq!(
        out[2]["text"],
        "edited app.py (1 replacement(s)) [matched after normalizing indentation — your old_str was indented differently]"
    );
    assert_eq!(
        out[3]["text"],
        "patched app.py (1 hunk(s))\nhunk 1/1 anchored@1..2 exact"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        "def load():\n    print('loading')\n    return 10\n\n\ndef save():\n    return 20\n"
    );
}

#[test]
fn a_file_changed_on_disk_must_be_read_again() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let input = lines(&[json!({"tool":"ws_read","args":{"path":"a.txt"}})]);
    // Read in one session, change the file, then edit in a fresh session: not read there.
    p.session(&input);
    let msg = p.err(
        "ws_edit",
        r#"{"path":"a.txt","old_str":"one","new_str":"two"}"#,
    );
    assert!(msg.contains("has not been read in this session"), "{msg}");
    // Within one session: a change behind the session's back is caught.
    let script = format!(
        "{}{}",
        lines(&[json!({"tool":"ws_read","args":{"path":"a.txt"}})]),
        lines(&[json!({"tool":"ws_edit","args":{"path":"a.txt","old_str":"one","new_str":"two"}})])
    );
    let mut child = common::bin()
        .args(["session", "--root"])
        .arg(p.root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    use std::io::{BufRead, Write};
    let mut first = script.lines();
    writeln!(stdin, "{}", first.next().unwrap()).unwrap();
    let mut reply = String::new();
    stdout.read_line(&mut reply).unwrap();
    p.write("a.txt", "one\nmore\n");
    writeln!(stdin, "{}", first.next().unwrap()).unwrap();
    drop(stdin);
    reply.clear();
    stdout.read_line(&mut reply).unwrap();
    child.wait().unwrap();
    let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["is_error"], true);
    assert!(
        reply["text"]
            .as_str()
            .unwrap()
            .contains("changed on disk since you read it"),
        "{reply}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("a.txt")).unwrap(),
        "one\nmore\n"
    );
}

#[test]
fn write_creates_and_guards_overwrites() {
    let p = Project::new();
    assert_eq!(
        p.ok(
            "ws_write",
            r#"{"path":"src/util/new.rs","content":"pub fn f() {}\n"}"#
        ),
        "created src/util/new.rs (1 line, 14 bytes)"
    );
    let written = || std::fs::read_to_string(p.path("src/util/new.rs")).unwrap();
    assert_eq!(written(), "pub fn f() {}\n");
    let msg = p.err("ws_write", r#"{"path":"src/util/new.rs","content":"x\n"}"#);
    assert!(
        msg.contains("already exists and has not been read in this session"),
        "{msg}"
    );
    assert_eq!(written(), "pub fn f() {}\n", "the refused overwrite wrote");
    assert!(
        msg.contains("ws_edit {\"path\":\"src/util/new.rs\""),
        "{msg}"
    );
    let msg = p.err("ws_write", r#"{"path":"other.rs","body":""}"#);
    assert!(
        msg.contains("\"content\" (also accepted: \"contents\", \"text\", \"body\")"),
        "{msg}"
    );
    assert!(!p.path("other.rs").exists());
}

#[test]
fn a_failed_patch_writes_nothing_and_reports_each_hunk() {
    let p = Project::new();
    let body: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    p.write("f.txt", &body);
    let out = p.session(&lines(&[
        json!({"tool":"ws_read","args":{"path":"f.txt"}}),
        json!({"tool":"ws_patch","args":{"path":"f.txt","patch":"@@ -5,2 +5,2 @@\n line 5\n-line 6\n+LINE 6\n@@ -40,2 +40,2 @@\n line 40\n-line 41 typo\n+LINE 41\n"}}),
    ]));
    let text = out[1]["text"].as_str().unwrap();
    assert_eq!(out[1]["is_error"], true);
    assert!(
        text.starts_with("patch refused — nothing was written: 1 of 2 hunk(s) did not apply."),
        "{text}"
    );
    assert!(text.contains("hunk 1/2 anchored@5..6 exact"), "{text}");
    assert!(
        text.contains("hunk 2/2 FAILED: its context was not found within ±20 lines of line 40"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(p.path("f.txt")).unwrap(), body);
}
