//! Files that used to end slmcode or stall it, through the real binary: a YAML mapping nested
//! 300 levels deep (the YAML scanner writes past its 1,024-byte buffer and the C library
//! aborts), Python nested 600 blocks deep around an f-string (the same in Python's scanner),
//! 60,000 nested classes, 36,000 nested functions, a megabyte on one line. Each is given to every
//! tool that parses — ws_read's background parse, ws_outline, ws_edit's and ws_write's syntax
//! check, ws_symbols — in one process, and that process must answer every call, say why it
//! could not parse, and answer the next call. The same through both MCP transports is in
//! `mcp/stdio.rs` and `mcp/http.rs`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{bin, skip, Project};

/// A YAML mapping `depth` levels deep, one space per level.
pub fn deep_yaml(depth: usize) -> String {
    let mut s: String = (0..depth)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    s.pop();
    s.push_str(" v\n");
    s
}

/// Python nested `depth` blocks deep with an f-string at the bottom: the scanner's string
/// delimiter and its indentation stack together overflow its buffer.
pub fn deep_python(depth: usize) -> String {
    let mut s: String = (0..depth)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect();
    s.push_str(&format!("{}y = f\"\"\"{{x}}\"\"\"\n", " ".repeat(depth)));
    s
}

/// `n` functions (or classes) each nested in the one before, on one line.
fn nested(open: &str, n: usize) -> String {
    let mut s: String = (0..n).map(|i| open.replace('N', &i.to_string())).collect();
    s.push_str(&"}".repeat(n));
    s.push('\n');
    s
}

/// About `bytes` of JavaScript on one line, a tiny function after another.
pub fn one_line_js(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 32);
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&format!("function f{i}(){{}}"));
        i += 1;
    }
    s.push('\n');
    s
}

/// One JSON line per call for `slmcode session`.
fn calls(calls: &[Value]) -> String {
    calls.iter().map(|c| format!("{c}\n")).collect()
}

fn text(reply: &Value) -> &str {
    reply["text"].as_str().unwrap_or_default()
}

/// Every call a model could make on a file `name` holding `content`, in one session: the read
/// (and its parse in the background), the outline, an edit of its last line, a new file with
/// the same content, a symbol search, and a last unrelated call. Returns the replies; the
/// session must have answered them all and ended normally.
fn every_parsing_tool(p: &Project, name: &str, content: &str, env: &[(&str, &str)]) -> Vec<Value> {
    p.write(name, content);
    let last_line = content.lines().last().unwrap().trim_start();
    let copy = format!("copy-{name}");
    let out = p.session_env(
        &calls(&[
            json!({"tool": "ws_read", "args": {"path": name, "limit": 3}}),
            json!({"tool": "ws_outline", "args": {"path": name}}),
            json!({"tool": "ws_edit", "args": {"path": name, "old_str": last_line, "new_str": format!("{last_line} # edited")}}),
            json!({"tool": "ws_write", "args": {"path": copy, "content": content}}),
            json!({"tool": "ws_symbols", "args": {"query": "k1"}}),
            json!({"tool": "ws_list", "args": {}}),
        ]),
        env,
    );
    assert_eq!(out.len(), 6, "every call is answered: {out:#?}");
    assert!(
        text(&out[5]).contains(&copy),
        "the session still works after them: {}",
        text(&out[5])
    );
    out
}

#[test]
fn a_yaml_mapping_300_levels_deep_ends_no_session_and_each_tool_says_why() {
    let p = Project::new();
    let out = every_parsing_tool(&p, "deep.yaml", &deep_yaml(300), &[]);
    assert_eq!(out[0]["is_error"], false, "{}", text(&out[0]));
    assert_eq!(out[1]["is_error"], true);
    assert!(
        text(&out[1]).starts_with(
            "ws_outline cannot outline deep.yaml: it is indented to 300 different depths (more than 120 by line 121); the yaml parser is given at most 120. Read it in parts with ws_read"
        ),
        "{}",
        text(&out[1])
    );
    for (i, what) in [(2, "edited deep.yaml"), (3, "copy-deep.yaml")] {
        assert_eq!(out[i]["is_error"], false, "{}", text(&out[i]));
        assert!(text(&out[i]).contains(what), "{}", text(&out[i]));
        assert!(
            text(&out[i]).contains("[syntax check skipped for ")
                && text(&out[i]).contains("it is indented to 300 different depths"),
            "the write says it was not checked, and why: {}",
            text(&out[i])
        );
    }
    let read = |f: &str| std::fs::read_to_string(p.path(f)).unwrap();
    assert!(read("deep.yaml").ends_with(" k299: v # edited\n"));
    assert_eq!(read("copy-deep.yaml"), deep_yaml(300));
}

#[test]
fn python_nested_600_blocks_around_an_f_string_ends_no_session() {
    let p = Project::new();
    let out = every_parsing_tool(&p, "deep.py", &deep_python(600), &[]);
    assert!(
        text(&out[1]).contains("it is indented to 601 different depths (more than 380 by line 381); the python parser is given at most 380"),
        "{}",
        text(&out[1])
    );
    assert!(text(&out[2]).contains("[syntax check skipped for deep.py"));
}

/// The guard keeps the known dangers from the parser; the parser process contains the rest.
/// Debug builds let a test turn the guard off (`SLMCODE_TEST_UNGUARDED_PARSE`), so the real
/// assertion of the YAML scanner fires, in the parser process, and the session goes on.
#[test]
fn a_parser_that_aborts_ends_its_own_process_not_the_session() {
    if !cfg!(debug_assertions) {
        skip(
            "the parser process's containment of a real abort",
            "a release build has no switch to turn the guard off",
        );
        return;
    }
    let p = Project::new();
    let out = every_parsing_tool(
        &p,
        "deep.yaml",
        &deep_yaml(300),
        &[("SLMCODE_TEST_UNGUARDED_PARSE", "1")],
    );
    assert!(
        text(&out[1])
            .starts_with("ws_outline cannot outline deep.yaml: the parser crashed on it (")
            && text(&out[1]).contains("Assertion `length <= 1024' failed)"),
        "{}",
        text(&out[1])
    );
    assert!(
        text(&out[2]).contains("[syntax check skipped for deep.yaml: the parser crashed on it"),
        "{}",
        text(&out[2])
    );
    // The copy is the same text: its check is answered from what the crash taught, at once.
    assert!(
        text(&out[3]).contains("the parser crashed on it"),
        "{}",
        text(&out[3])
    );
}

/// Runs `slmcode tool ws_outline` in a project holding `name`, under an address-space limit of
/// `mib` MiB (the shell's `ulimit -v`), and says how long it took and what it printed.
fn outline_within(name: &str, content: &str, mib: u64) -> (Duration, String, bool) {
    let p = Project::new();
    p.write(name, content);
    let started = Instant::now();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib * 1024))
        .arg(bin().get_program())
        .args([
            "tool",
            "ws_outline",
            &json!({"path": name}).to_string(),
            "--root",
        ])
        .arg(p.root())
        .envs(bin().get_envs().filter_map(|(k, v)| Some((k, v?))))
        .output()
        .unwrap();
    let took = started.elapsed();
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "ws_outline of {name} ended with {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (
        took,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        code == Some(1),
    )
}

#[test]
fn thirty_six_thousand_nested_functions_are_answered_in_seconds_and_little_memory() {
    // The outline's indentation grew with the square of the nesting: 1.08 GiB and 20 s here.
    let (took, out, refused) = outline_within("nested.js", &nested("function fN(){", 36_000), 1024);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(refused, "{out}");
    assert!(
        out.contains(
            "it nests 36000 levels deep (line 1); the javascript parser is given at most 4096"
        ),
        "{out}"
    );
}

#[test]
fn sixty_thousand_nested_classes_are_answered_in_seconds() {
    // 79 s before (the outline's query is quadratic in the nesting of definitions).
    let (took, out, refused) = outline_within("Nested.java", &nested("class CN{", 60_000), 1024);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(refused, "{out}");
    assert!(out.contains("it nests 60000 levels deep"), "{out}");
}

#[test]
fn a_megabyte_on_one_line_is_read_outlined_checked_and_indexed_in_seconds() {
    // Each definition's signature was cut from its line by scanning the whole line: quadratic
    // in a minified file (17 s for the outline, 18 s for ws_symbols, before).
    let p = Project::new();
    let js = one_line_js(1_000_000);
    p.write("min.js", &js);
    let started = Instant::now();
    let out = p.session(&calls(&[
        json!({"tool": "ws_read", "args": {"path": "min.js", "limit": 1}}),
        json!({"tool": "ws_outline", "args": {"path": "min.js"}}),
        json!({"tool": "ws_edit", "args": {"path": "min.js", "old_str": "function f7(){}", "new_str": "function f7(){return 7}"}}),
        json!({"tool": "ws_edit", "args": {"path": "min.js", "old_str": "function f9(){}", "new_str": "function f9(){return (}"}}),
        json!({"tool": "ws_symbols", "args": {"query": "f7777"}}),
    ]));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert_eq!(out.len(), 5);
    let outline = text(&out[1]);
    assert!(
        outline.starts_with("min.js (javascript, 1 lines, "),
        "{outline}"
    );
    assert!(outline.chars().count() <= 8000, "within the cap by itself");
    assert!(
        text(&out[2]).starts_with("edited min.js"),
        "{}",
        text(&out[2])
    );
    // A break is located, and the line shown is the part around it, not a megabyte.
    let reverted = text(&out[3]);
    assert!(reverted.starts_with("EDIT REVERTED"), "{reverted}");
    assert!(reverted.contains("function f9(){return (}"), "{reverted}");
    assert!(
        reverted.chars().count() < 1500,
        "{}",
        reverted.chars().count()
    );
    assert!(
        text(&out[4]).starts_with("min.js:1 function "),
        "{}",
        text(&out[4])
    );
}
