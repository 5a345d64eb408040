//! What a session records, through the real registry: each ws_read notes the file's identity
//! (symlinks resolved) and a hash of its content, for the read-before-edit rule.

use serde_json::json;
use slmcode_aci::path::RelPath;
use slmcode_aci::{Config, Registry, Workspace};

#[test]
fn a_read_records_path_and_content_hash() {
    let dir = tempfile::tempdir().unwrap();
    let body = "fn main() {}\n".repeat(50);
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), &body).unwrap();
    std::os::unix::fs::symlink("src/main.rs", dir.path().join("alias.rs")).unwrap();
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let registry = Registry::coding();
    let key = RelPath::parse("src/main.rs", dir.path()).unwrap();
    assert!(ws.session.read_record(&key).is_none());

    // A partial window still counts as a read of the whole file's current content.
    let r = registry.call(&mut ws, "ws_read", &json!({"path": "alias.rs", "limit": 3}));
    assert!(!r.is_error, "{}", r.text);
    let record = ws
        .session
        .read_record(&key)
        .expect("recorded under the real path");
    assert_eq!(record.hash, *blake3::hash(body.as_bytes()).as_bytes());
    assert_eq!(record.len, body.len() as u64);

    // A failed read records nothing.
    let r = registry.call(&mut ws, "ws_read", &json!({"path": "nope.rs"}));
    assert!(r.is_error);
    assert!(ws
        .session
        .read_record(&RelPath::parse("nope.rs", dir.path()).unwrap())
        .is_none());

    // Reading again after a change records the new content.
    std::fs::write(dir.path().join("src/main.rs"), "changed\n").unwrap();
    registry.call(&mut ws, "ws_read", &json!({"path": "src/main.rs"}));
    assert_eq!(
        ws.session.read_record(&key).unwrap().hash,
        *blake3::hash(b"changed\n").as_bytes()
    );
}

#[test]
fn tool_names_is_the_coding_set() {
    assert_eq!(
        slmcode_aci::tool_names(),
        [
            "ws_read",
            "ws_write",
            "ws_edit",
            "ws_patch",
            "ws_mv",
            "ws_delete",
            "ws_list",
            "ws_glob",
            "ws_grep",
            "ws_outline",
            "ws_symbols",
            "ws_shell",
            "ws_todo",
            "git_status",
            "git_diff"
        ]
    );
}

#[test]
fn overwriting_needs_a_fresh_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let registry = Registry::coding();
    let write = json!({"path": "a.txt", "content": "two\n"});
    let r = registry.call(&mut ws, "ws_write", &write);
    assert!(
        r.is_error && r.text.contains("has not been read in this session"),
        "{}",
        r.text
    );
    registry.call(&mut ws, "ws_read", &json!({"path": "a.txt"}));
    // Changed behind the session's back: read again first.
    std::fs::write(dir.path().join("a.txt"), "one, edited elsewhere\n").unwrap();
    let r = registry.call(&mut ws, "ws_write", &write);
    assert!(
        r.is_error && r.text.contains("changed on disk since you read it"),
        "{}",
        r.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one, edited elsewhere\n"
    );
    registry.call(&mut ws, "ws_read", &json!({"path": "a.txt"}));
    let r = registry.call(&mut ws, "ws_write", &write);
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "two\n"
    );
}

/// A read that failed — an offset past the end of the file — does not count as a read: an
/// edit after it is refused as unread, as if there had been none.
#[test]
fn a_read_past_the_end_is_not_a_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\ny = 2\n").unwrap();
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let registry = Registry::coding();
    let r = registry.call(&mut ws, "ws_read", &json!({"path": "a.py", "offset": 40}));
    assert!(
        r.is_error && r.text.contains("is past the end of a.py"),
        "{}",
        r.text
    );
    assert!(ws
        .session
        .read_record(&RelPath::parse("a.py", dir.path()).unwrap())
        .is_none());
    let r = registry.call(
        &mut ws,
        "ws_edit",
        &json!({"path": "a.py", "old_str": "y = 2", "new_str": "y = 3"}),
    );
    assert!(r.is_error, "{}", r.text);
    assert_eq!(
        r.outcome,
        slmcode_aci::Outcome::Refused(slmcode_aci::RefusalClass::NotRead),
        "{}",
        r.text
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        "x = 1\ny = 2\n"
    );
}
