//! ws_list through the real binary.

use crate::common::Project;

#[test]
fn sorted_with_directories_marked_and_git_skipped() {
    let p = Project::new();
    p.write("b.txt", "")
        .write("a.txt", "")
        .write("src/x.rs", "")
        .write(".git/HEAD", "ref\n");
    p.write(".env", "");
    let text = p.ok("ws_list", "{}");
    assert_eq!(
        text,
        ".env\na.txt\nb.txt\nsrc/\n(4 entries in .: 3 files, 1 directories)"
    );
    assert_eq!(
        p.ok("ws_list", r#"{"path":"src"}"#),
        "x.rs\n(1 entries in src: 1 files, 0 directories)"
    );
}

#[test]
fn empty_directory_is_said_in_words() {
    let p = Project::new();
    p.mkdir("empty");
    assert_eq!(
        p.ok("ws_list", r#"{"path":"empty"}"#),
        "(empty is an empty directory)"
    );
}

#[test]
fn missing_directory_is_an_error_with_a_way_forward() {
    let p = Project::new();
    p.write("src/lib.rs", "");
    let msg = p.err("ws_list", r#"{"path":"scr"}"#);
    assert!(msg.starts_with("no such directory: scr."), "{msg}");
    assert!(msg.contains(r#"Similar existing paths: "src""#), "{msg}");
    assert!(msg.contains(r#"ws_list {"path":"."}"#), "{msg}");
    assert!(msg.contains(r#"ws_glob {"pattern":"**/scr"}"#), "{msg}");
}

#[test]
fn a_file_is_not_a_directory() {
    let p = Project::new();
    p.write("src/lib.rs", "");
    let msg = p.err("ws_list", r#"{"path":"src/lib.rs"}"#);
    assert!(
        msg.contains(
            r#"src/lib.rs is a file, not a directory. Read it with ws_read {"path":"src/lib.rs"}"#
        ),
        "{msg}"
    );
}

#[test]
fn aliases_and_dot() {
    let p = Project::new();
    p.write("src/lib.rs", "");
    assert!(p.ok("ws_list", r#"{"dir":"src"}"#).starts_with("lib.rs"));
    assert!(p.ok("ws_list", r#"{"path":"."}"#).starts_with("src/"));
    assert!(p.ok("ws_list", r#"{"path":"./"}"#).starts_with("src/"));
}
