//! ws_read through the real binary: the window, the footer, the ceiling, and every error's
//! recovery hint.

use crate::common::Project;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn default_window_is_120_lines_with_the_spec_footer() {
    let p = Project::new();
    p.write("pkg/foo/bar.go", numbered(480));
    let text = p.ok("ws_read", r#"{"path":"pkg/foo/bar.go"}"#);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "     1|line 1");
    assert_eq!(lines[119], "   120|line 120");
    assert!(
        text.contains("[showing lines 1–120 of 480 in pkg/foo/bar.go; use offset= to see more]"),
        "{text}"
    );
    assert!(text.contains(r#"Next page: ws_read {"path":"pkg/foo/bar.go","offset":121,"limit":120}. To jump straight to a symbol use ws_grep first."#), "{text}");
}

#[test]
fn offset_and_limit_page_through() {
    let p = Project::new();
    p.write("a.txt", numbered(480));
    let text = p.ok("ws_read", r#"{"path":"a.txt","offset":121,"limit":10}"#);
    assert!(text.starts_with("   121|line 121\n"), "{text}");
    assert!(text.contains("   130|line 130\n"));
    assert!(!text.contains("line 131\n"));
    assert!(text.contains("[showing lines 121–130 of 480 in a.txt"));
    assert!(text.contains(r#""offset":131,"limit":10"#));
    let last = p.ok("ws_read", r#"{"path":"a.txt","offset":471}"#);
    assert!(
        last.contains("[showing lines 471–480 of 480 in a.txt"),
        "{last}"
    );
    assert!(last.contains("This is the end of the file"), "{last}");
}

#[test]
fn a_whole_small_file_has_no_footer() {
    let p = Project::new();
    p.write("s.txt", "a\nb\n");
    assert_eq!(p.ok("ws_read", r#"{"path":"s.txt"}"#), "     1|a\n     2|b");
}

#[test]
fn crlf_is_shown_without_carriage_returns() {
    let p = Project::new();
    p.write("w.txt", "one\r\ntwo\r\n");
    assert_eq!(
        p.ok("ws_read", r#"{"path":"w.txt"}"#),
        "     1|one\n     2|two"
    );
}

#[test]
fn out_of_range_offset_gives_the_valid_range() {
    let p = Project::new();
    p.write("a.txt", numbered(480));
    let msg = p.err("ws_read", r#"{"path":"a.txt","offset":500}"#);
    assert!(
        msg.contains(
            "offset 500 is past the end of a.txt, which has 480 lines. Valid offsets are 1–480"
        ),
        "{msg}"
    );
    assert!(
        msg.contains(r#"ws_read {"path":"a.txt","offset":361,"limit":120}"#),
        "{msg}"
    );
}

#[test]
fn missing_file_suggests_glob_list_and_similar_paths() {
    let p = Project::new();
    p.write("src/config.rs", "x\n")
        .write("src/main.rs", "x\n")
        .write("docs/guide.md", "x\n");
    let msg = p.err("ws_read", r#"{"path":"src/confg.rs"}"#);
    assert!(msg.starts_with("no such file: src/confg.rs."), "{msg}");
    assert!(
        msg.contains(r#"Similar existing paths: "src/config.rs""#),
        "{msg}"
    );
    assert!(
        msg.contains(r#"ws_glob {"pattern":"**/confg.rs"}"#),
        "{msg}"
    );
    assert!(msg.contains(r#"ws_list {"path":"src"}"#), "{msg}");
    // A file in the wrong directory is found by its name.
    let msg = p.err("ws_read", r#"{"path":"lib/config.rs"}"#);
    assert!(msg.contains(r#""src/config.rs""#), "{msg}");
}

#[test]
fn at_most_three_similar_paths() {
    let p = Project::new();
    for d in ["a", "b", "c", "d", "e"] {
        p.write(&format!("{d}/util.rs"), "x\n");
    }
    let msg = p.err("ws_read", r#"{"path":"util.rs"}"#);
    let similar = msg.split("Similar existing paths: ").nth(1).unwrap();
    let similar = similar.split(". ").next().unwrap();
    assert_eq!(similar.matches("/util.rs\"").count(), 3, "{msg}");
}

#[test]
fn directory_suggests_ws_list() {
    let p = Project::new();
    p.write("src/a.rs", "x\n");
    let msg = p.err("ws_read", r#"{"path":"src"}"#);
    assert!(
        msg.contains(r#"src is a directory, not a file. List it with ws_list {"path":"src"}"#),
        "{msg}"
    );
}

#[test]
fn binary_file_is_refused_with_its_size() {
    let p = Project::new();
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0, 0, 0, 13];
    bytes.resize(1234, 7);
    p.write("logo.png", &bytes);
    let msg = p.err("ws_read", r#"{"path":"logo.png"}"#);
    assert!(
        msg.contains("logo.png is a binary file (1234 bytes)"),
        "{msg}"
    );
}

#[test]
fn empty_file_says_it_is_empty() {
    let p = Project::new();
    p.write("empty.txt", "");
    let text = p.ok("ws_read", r#"{"path":"empty.txt"}"#);
    assert!(text.starts_with("empty.txt is empty (0 bytes)"), "{text}");
}

#[test]
fn a_line_over_2000_chars_is_cut_with_a_marker() {
    let p = Project::new();
    p.write("long.txt", format!("short\n{}\nafter\n", "x".repeat(5000)));
    let text = p.ok("ws_read", r#"{"path":"long.txt"}"#);
    let second = text.lines().nth(1).unwrap();
    assert!(
        second.starts_with(&format!("     2|{}", "x".repeat(2000))),
        "{second}"
    );
    assert!(
        second.ends_with("… [line 2 cut: 5000 chars, showing the first 2000]"),
        "{second}"
    );
    assert!(!second.contains(&"x".repeat(2001)));
    assert!(text.contains("     3|after"));
}

#[test]
fn ten_megabyte_single_line_is_read_without_flooding_the_result() {
    let p = Project::new();
    p.write("huge.min.js", "a".repeat(10 * 1024 * 1024));
    let text = p.ok("ws_read", r#"{"path":"huge.min.js"}"#);
    assert!(text.len() < 2200, "result is {} bytes", text.len());
    assert!(
        text.contains("[line 1 cut: 10485760 chars, showing the first 2000]"),
        "{}",
        &text[text.len() - 200..]
    );
}

#[test]
fn two_hundred_thousand_lines_are_read_in_windows() {
    let p = Project::new();
    p.write("big.txt", numbered(200_000));
    let text = p.ok("ws_read", r#"{"path":"big.txt","offset":150000,"limit":5}"#);
    assert!(text.starts_with("150000|line 150000\n"), "{text}");
    assert!(text.contains("150004|line 150004"));
    assert!(!text.contains("line 150005"));
    assert!(
        text.contains("[showing lines 150000–150004 of 200000 in big.txt"),
        "{text}"
    );
    assert!(text.len() < 400, "{text}");
}

#[test]
fn the_context_ceiling_trims_the_window_and_says_so() {
    let p = Project::new();
    let wide: String = (1..=200)
        .map(|i| format!("{i:04} {}\n", "y".repeat(95)))
        .collect();
    p.write("wide.txt", wide);
    // 8192 tokens → ~4915 chars: about 47 lines of 100 chars fit, not 120.
    let text = p.ok("ws_read", r#"{"path":"wide.txt"}"#);
    assert!(text.contains("[window trimmed to "), "{text}");
    assert!(
        text.contains("(15% of the 8192-token context window)"),
        "{text}"
    );
    let shown = text.lines().filter(|l| l.contains('|')).count();
    assert!(shown > 30 && shown < 60, "{shown}");
    let body: usize = text
        .lines()
        .filter(|l| l.contains('|'))
        .map(|l| l.chars().count() + 1)
        .sum();
    assert!(body <= 4915, "{body}");
    assert!(
        text.contains(&format!(r#""offset":{},"limit":{shown}"#, shown + 1)),
        "{text}"
    );
    // A larger context window lets the whole default window through.
    let (text, _) = p.tool_env(
        "ws_read",
        r#"{"path":"wide.txt"}"#,
        &[
            ("SLMCODE_CONTEXT_WINDOW", "65536"),
            ("SLMCODE_MAX_TOOL_CHARS", "20000"),
        ],
    );
    assert!(!text.contains("window trimmed"), "{text}");
    assert!(!text.contains("output truncated"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains('|')).count(), 120);
}

#[test]
fn read_window_lines_comes_from_config() {
    let p = Project::new();
    p.write("a.txt", numbered(100));
    p.write(".slmcode/config.yaml", "read_window_lines: 7\n");
    let text = p.ok("ws_read", r#"{"path":"a.txt"}"#);
    assert!(
        text.contains("[showing lines 1–7 of 100 in a.txt"),
        "{text}"
    );
}

#[test]
fn path_aliases_are_accepted() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    for key in ["file_path", "filePath", "file"] {
        let text = p.ok("ws_read", &format!(r#"{{"{key}":"a.txt"}}"#));
        assert_eq!(text, "     1|hello");
    }
}
