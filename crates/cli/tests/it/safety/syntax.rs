//! The syntax check through the real binary: an edit that breaks a file that parsed is
//! reverted byte for byte; a file already broken gets the error appended; unknown kinds pass.

use super::*;

#[test]
fn an_edit_that_breaks_a_parsing_file_is_reverted_byte_for_byte() {
    let cases = [
        (
            "lib.rs",
            "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            "    a + b\n",
            "    (a + b\n",
        ),
        (
            "app.py",
            "def f(x):\n    return x + 1\n",
            "    return x + 1\n",
            "    return (x + 1\n",
        ),
        (
            "main.go",
            "package main\n\nfunc main() {\n\tprintln(1)\n}\n",
            "\tprintln(1)\n",
            "\tprintln(1\n",
        ),
        (
            "app.ts",
            "export function f(x: number): number {\n  return x;\n}\n",
            "  return x;\n",
            "  return [x;\n",
        ),
        (
            "config.json",
            "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
            "  \"b\": 2\n",
            "  \"b\": 2,\n",
        ),
    ];
    for (file, original, old, new) in cases {
        let p = Project::new();
        p.write(file, original);
        let out = run(&p, &[read(file), edit(file, old, new)]);
        let text = out[1]["text"].as_str().unwrap();
        assert_eq!(out[1]["is_error"], true, "{file}: {text}");
        assert!(text.starts_with(&format!("EDIT REVERTED — {file} parsed correctly before your change and does NOT parse after it (tree-sitter ")), "{file}: {text}");
        assert!(
            text.contains(&format!("{file}:")),
            "{file}: the location: {text}"
        );
        assert!(text.contains("The file is unchanged on disk."), "{text}");
        assert!(
            text.ends_with("Do NOT retry the identical edit — it will be reverted again."),
            "{text}"
        );
        assert_eq!(
            std::fs::read(p.path(file)).unwrap(),
            original.as_bytes(),
            "{file}"
        );
    }
}

#[test]
fn write_and_patch_are_checked_too() {
    let p = Project::new();
    p.write("a.rs", "fn main() {}\n");
    let out = run(
        &p,
        &[
            read("a.rs"),
            json!({"tool": "ws_write", "args": {"path": "a.rs", "content": "fn main() {\n"}}),
            json!({"tool": "ws_patch", "args": {"path": "a.rs", "patch": "@@ -1 +1 @@\n-fn main() {}\n+fn main() {\n"}}),
        ],
    );
    assert!(
        out[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("WRITE REVERTED — a.rs"),
        "{}",
        out[1]
    );
    assert!(
        out[2]["text"]
            .as_str()
            .unwrap()
            .starts_with("PATCH REVERTED — a.rs"),
        "{}",
        out[2]
    );
    assert_eq!(
        std::fs::read_to_string(p.path("a.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn an_already_broken_file_gets_the_error_appended() {
    let p = Project::new();
    p.write("bad.py", "def f(:\n    return 1\n\nx = 1\n");
    let out = run(&p, &[read("bad.py"), edit("bad.py", "x = 1", "x = 2")]);
    let text = out[1]["text"].as_str().unwrap();
    assert_eq!(out[1]["is_error"], false, "{text}");
    assert!(
        text.starts_with("edited bad.py (1 replacement(s))"),
        "{text}"
    );
    assert!(
        text.contains("[syntax: bad.py does not parse (tree-sitter python): bad.py:1:"),
        "{text}"
    );
    assert!(text.contains("fix it now"), "{text}");
    assert_eq!(
        std::fs::read_to_string(p.path("bad.py")).unwrap(),
        "def f(:\n    return 1\n\nx = 2\n"
    );
}

#[test]
fn unknown_extensions_are_skipped_and_the_check_can_be_disabled() {
    let p = Project::new();
    p.write("notes.txt", "(balanced)\n");
    let out = run(
        &p,
        &[
            read("notes.txt"),
            edit("notes.txt", "(balanced)", "((unbalanced"),
        ],
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    p.write("a.rs", "fn main() {}\n");
    // The user turns the check off (a project's own config could only turn it on).
    let calls = [read("a.rs"), edit("a.rs", "fn main() {}", "fn main() {")];
    let out = p.session_env(
        &calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
        &[("SLMCODE_DISABLE_SYNTAX_CHECK", "true")],
    );
    assert_eq!(out[1]["is_error"], false, "{}", out[1]);
    assert_eq!(
        std::fs::read_to_string(p.path("a.rs")).unwrap(),
        "fn main() {\n"
    );
}
