//! The jail, through the real binary: every path form a model gets wrong is refused with what
//! to send instead, and no symlink leads out of the project.

use crate::common::Project;

fn project() -> Project {
    let p = Project::new();
    p.write("src/main.rs", "fn main() {}\n");
    p
}

#[test]
fn dotdot_is_refused_with_the_inside_form_when_there_is_one() {
    let p = project();
    let msg = p.err("ws_read", r#"{"path":"src/../src/main.rs"}"#);
    assert!(msg.contains(r#"send "src/main.rs""#), "{msg}");
    let msg = p.err("ws_read", r#"{"path":"../etc/passwd"}"#);
    assert!(msg.contains("would leave the project"), "{msg}");
}

#[test]
fn absolute_paths_are_refused_and_translated_when_inside() {
    let p = project();
    let inside = p.path("src/main.rs");
    let msg = p.err("ws_read", &format!(r#"{{"path":"{}"}}"#, inside.display()));
    assert!(msg.contains("absolute paths are refused"), "{msg}");
    assert!(msg.contains(r#"send "src/main.rs""#), "{msg}");
    let msg = p.err("ws_read", r#"{"path":"/etc/passwd"}"#);
    assert!(msg.contains("outside the project"), "{msg}");
    assert!(!msg.contains("root:"), "must not leak content: {msg}");
}

#[test]
fn nul_backslash_drive_letters_and_home_are_refused() {
    let p = project();
    let msg = p.err("ws_read", r#"{"path":"src/main.rs\u0000.txt"}"#);
    assert!(msg.contains("NUL"), "{msg}");
    let msg = p.err("ws_read", r#"{"path":"src\\main.rs"}"#);
    assert!(
        msg.contains(r#"Use forward slashes: "src/main.rs""#),
        "{msg}"
    );
    let msg = p.err("ws_read", r#"{"path":"C:\\src\\main.rs"}"#);
    assert!(msg.contains("drive letters are refused"), "{msg}");
    let msg = p.err("ws_read", r#"{"path":"~/.bashrc"}"#);
    assert!(msg.contains("\"~\" paths are refused"), "{msg}");
}

#[test]
fn symlink_to_etc_is_refused() {
    let p = project();
    p.symlink("/etc", "etc_link");
    let msg = p.err("ws_read", r#"{"path":"etc_link/passwd"}"#);
    assert!(msg.contains("leads outside the project"), "{msg}");
    assert!(!msg.contains("root:x"), "{msg}");
    let msg = p.err("ws_list", r#"{"path":"etc_link"}"#);
    assert!(msg.contains("leads outside the project"), "{msg}");
    p.symlink("/etc/passwd", "passwd");
    let msg = p.err("ws_read", r#"{"path":"passwd"}"#);
    assert!(msg.contains("leads outside the project"), "{msg}");
}

#[test]
fn symlink_to_parent_is_refused() {
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "TOP SECRET\n").unwrap();
    // A link to the project's parent directory, and one to a sibling directory.
    p.symlink("..", "up");
    p.symlink(outside.path(), "sib");
    let name = outside.path().file_name().unwrap().to_str().unwrap();
    let msg = p.err("ws_read", &format!(r#"{{"path":"up/{name}/secret.txt"}}"#));
    assert!(msg.contains("leads outside the project"), "{msg}");
    let msg = p.err("ws_read", r#"{"path":"sib/secret.txt"}"#);
    assert!(msg.contains("leads outside the project"), "{msg}");
    assert!(!msg.contains("TOP SECRET"));
    // Walkers do not follow links out either.
    let text = p.ok("ws_grep", r#"{"pattern":"TOP SECRET"}"#);
    assert!(text.starts_with("no matches"), "{text}");
    let text = p.ok("ws_glob", r#"{"pattern":"**/secret.txt"}"#);
    assert!(text.starts_with("no files match"), "{text}");
    // ws_list shows the link for what it is without following it.
    let text = p.ok("ws_list", "{}");
    assert!(
        text.contains("up (symlink leading outside the project)"),
        "{text}"
    );
}

#[test]
fn symlinks_that_stay_inside_work() {
    let p = project();
    p.symlink("src/main.rs", "relative_link.rs");
    p.symlink(p.path("src/main.rs"), "absolute_link.rs");
    p.symlink("src", "srclink");
    assert!(p
        .ok("ws_read", r#"{"path":"relative_link.rs"}"#)
        .contains("fn main"));
    assert!(p
        .ok("ws_read", r#"{"path":"absolute_link.rs"}"#)
        .contains("fn main"));
    assert!(p
        .ok("ws_read", r#"{"path":"srclink/main.rs"}"#)
        .contains("fn main"));
    assert!(p.ok("ws_list", r#"{"path":"srclink"}"#).contains("main.rs"));
}

#[test]
fn a_fifo_does_not_hang_a_read() {
    let p = project();
    let fifo = p.path("pipe");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let msg = p.err("ws_read", r#"{"path":"pipe"}"#);
    assert!(msg.contains("not a regular file"), "{msg}");
}
