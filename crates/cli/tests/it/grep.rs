//! ws_grep through the real binary.

use crate::common::Project;

fn tree() -> Project {
    let p = Project::new();
    p.write(
        "src/main.rs",
        "fn main() {\n    let config = load_config();\n}\n",
    );
    p.write(
        "src/config.rs",
        "pub fn load_config() -> Config {\n    Config::default()\n}\n",
    );
    p.write("docs/notes.md", "We call load_config at start.\n");
    p.write("target/gen.rs", "fn load_config() {}\n");
    p.write(".gitignore", "target/\n");
    p.write("image.bin", b"load_config\0\x01\x02binary".as_slice());
    p
}

#[test]
fn finds_path_line_text_sorted() {
    let p = tree();
    let text = p.ok("ws_grep", r#"{"pattern":"load_config"}"#);
    assert_eq!(
        text,
        "docs/notes.md:1:We call load_config at start.\n\
         src/config.rs:1:pub fn load_config() -> Config {\n\
         src/main.rs:2:    let config = load_config();\n\
         (3 matches in 3 files)"
    );
}

#[test]
fn re2_syntax_works() {
    let p = tree();
    let text = p.ok("ws_grep", r#"{"pattern":"fn \\w+_config\\(\\)"}"#);
    assert!(text.starts_with("src/config.rs:1:"), "{text}");
    assert!(text.ends_with("(1 match in 1 file)"), "{text}");
}

#[test]
fn invalid_regex_is_searched_as_a_literal_and_says_so() {
    let p = tree();
    let text = p.ok("ws_grep", r#"{"pattern":"load_config("}"#);
    assert!(
        text.starts_with(r#"["load_config(" is not a valid regular expression"#),
        "{text}"
    );
    assert!(
        text.contains("searched for it as literal text instead]"),
        "{text}"
    );
    assert!(text.contains("src/main.rs:2:"), "{text}");
    assert!(text.contains("src/config.rs:1:"), "{text}");
}

#[test]
fn glob_and_path_narrow() {
    let p = tree();
    let text = p.ok("ws_grep", r#"{"pattern":"load_config","glob":"*.rs"}"#);
    assert!(!text.contains("docs/"), "{text}");
    assert!(text.ends_with("(2 matches in 2 files)"), "{text}");
    let text = p.ok("ws_grep", r#"{"pattern":"load_config","path":"docs"}"#);
    assert_eq!(
        text,
        "docs/notes.md:1:We call load_config at start.\n(1 match in 1 file)"
    );
    let text = p.ok(
        "ws_grep",
        r#"{"pattern":"load_config","path":"src/main.rs"}"#,
    );
    assert_eq!(
        text,
        "src/main.rs:2:    let config = load_config();\n(1 match in 1 file)"
    );
}

#[test]
fn gitignore_and_binary_are_skipped() {
    let p = tree();
    let text = p.ok("ws_grep", r#"{"pattern":"load_config"}"#);
    assert!(!text.contains("target/"), "{text}");
    assert!(!text.contains("image.bin"), "{text}");
}

#[test]
fn case_insensitive() {
    let p = tree();
    let text = p.ok(
        "ws_grep",
        r#"{"pattern":"LOAD_CONFIG","case_insensitive":true}"#,
    );
    assert!(text.ends_with("(3 matches in 3 files)"), "{text}");
    let text = p.ok("ws_grep", r#"{"pattern":"LOAD_CONFIG"}"#);
    assert!(text.starts_with("no matches"), "{text}");
}

#[test]
fn no_match_is_explicit() {
    let p = tree();
    let text = p.ok("ws_grep", r#"{"pattern":"does_not_exist_anywhere"}"#);
    assert!(
        text.starts_with(r#"no matches for "does_not_exist_anywhere" in the project"#),
        "{text}"
    );
    assert!(text.contains("files searched"), "{text}");
}

#[test]
fn long_lines_are_cut_around_the_match() {
    let p = Project::new();
    p.write(
        "min.js",
        format!("{}NEEDLE{}\n", "a".repeat(3000), "b".repeat(3000)),
    );
    let text = p.ok("ws_grep", r#"{"pattern":"NEEDLE"}"#);
    let hit = text.lines().next().unwrap();
    assert!(hit.starts_with("min.js:1:…"), "{hit}");
    assert!(hit.contains("NEEDLE"));
    assert!(hit.ends_with("[line of 6006 chars cut]"), "{hit}");
    assert!(hit.chars().count() < 320, "{}", hit.chars().count());
}

#[test]
fn at_most_50_hits_and_the_search_stops() {
    let p = Project::new();
    for f in 0..40 {
        let body: String = (0..10).map(|i| format!("hit {f} {i}\n")).collect();
        p.write(&format!("f{f:02}.txt"), body);
    }
    let text = p.ok("ws_grep", r#"{"pattern":"hit"}"#);
    let hits = text.lines().filter(|l| l.contains(":hit ")).count();
    assert_eq!(hits, 50, "{text}");
    assert!(
        text.contains("[stopped at 50 matches (the cap) after searching "),
        "{text}"
    );
    assert!(
        text.contains(" files — there are more. Narrow with glob="),
        "{text}"
    );
    // Exactly 50 matches is not "more".
    let p = Project::new();
    let body: String = (0..50).map(|i| format!("hit {i}\n")).collect();
    p.write("one.txt", body);
    let text = p.ok("ws_grep", r#"{"pattern":"hit"}"#);
    assert!(text.ends_with("(50 matches in 1 file)"), "{text}");
}

#[test]
fn a_capped_search_stops_early() {
    let p = Project::new();
    for f in 0..2000 {
        p.write(&format!("d{}/f{f:04}.txt", f % 20), "match here\n");
    }
    let text = p.ok("ws_grep", r#"{"pattern":"match"}"#);
    let searched: usize = text
        .split("after searching ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {text}"));
    // One hit a file: the walk quits soon after the 50th, far short of all 2,000 files.
    assert!((50..1000).contains(&searched), "searched {searched} files");
}

#[test]
fn missing_path_is_an_error_with_a_hint() {
    let p = tree();
    let msg = p.err("ws_grep", r#"{"pattern":"x","path":"sorce"}"#);
    assert!(
        msg.starts_with("no such file or directory: sorce."),
        "{msg}"
    );
}

#[test]
fn bad_glob_is_explained() {
    let p = tree();
    let msg = p.err("ws_grep", r#"{"pattern":"x","glob":"*.{rs"}"#);
    assert!(msg.starts_with(r#"invalid glob "*.{rs""#), "{msg}");
}
