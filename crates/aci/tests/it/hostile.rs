//! Inputs that used to crash or stall the tools, through the registry in this process: each is
//! answered in seconds, with memory that does not grow with the input.

use std::fs;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use slmcode_aci::control::CallControl;
use slmcode_aci::symbols::SymbolIndex;
use slmcode_aci::{Config, Registry, Workspace};

fn call(ws: &mut Workspace, tool: &str, args: serde_json::Value) -> (bool, String) {
    let r = Registry::coding().call(ws, tool, &args);
    (r.is_error, r.text)
}

fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let ws = Workspace::open(dir.path(), Config::default()).unwrap();
    (dir, ws)
}

#[test]
fn a_query_of_eighty_thousand_characters_is_refused_at_once() {
    // 22 s before: the query was lowered and squashed again for every definition.
    let files: Vec<(String, String)> = (0..200)
        .map(|k| {
            let defs: String = (0..50)
                .map(|j| format!("def handler_{k}_{j}(x):\n    return x\n\n"))
                .collect();
            (format!("src/m{k}.py"), defs)
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (_dir, mut ws) = workspace(&refs);
    let (err, warm) = call(&mut ws, "ws_symbols", json!({"query": "handler_3_4"}));
    assert!(!err && warm.starts_with("src/m3.py:"), "{warm}");
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "a".repeat(80_000)}));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(err, "{text}");
    assert_eq!(
        text,
        format!(
            "query is 80000 characters long; a name is at most 256. Send one name, e.g. {{\"query\":\"parse_config\"}}; to find a piece of text, use ws_grep {{\"pattern\":\"{}\"}}.",
            "a".repeat(40)
        )
    );
    // A long name that is still a name is searched, and a slip in it still found.
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "hnadler_3_4"}));
    assert!(!err && text.contains("src/m3.py:"), "{text}");
}

#[test]
fn a_file_dated_in_the_future_is_parsed_once_and_again_only_when_it_changes() {
    let (dir, _ws) = workspace(&[
        ("src/a.rs", "pub fn one() {}\n"),
        ("src/b.rs", "pub fn two() {}\n"),
    ]);
    let future = SystemTime::now() + Duration::from_secs(3600 * 24 * 365 * 50);
    let old = SystemTime::now() - Duration::from_secs(3600);
    let stamp = |name: &str, when: SystemTime| {
        fs::File::options()
            .write(true)
            .open(dir.path().join(name))
            .unwrap()
            .set_modified(when)
            .unwrap();
    };
    stamp("src/a.rs", future);
    stamp("src/b.rs", old);
    let jail = slmcode_aci::path::Jail::open(dir.path()).unwrap();
    let control = CallControl::default();
    let mut index = SymbolIndex::default();
    assert_eq!(index.refresh(&jail, &control).parsed, 2);
    // A future mtime can never be proven older than the index: it used to mean a parse per call.
    for _ in 0..3 {
        assert_eq!(index.refresh(&jail, &control).parsed, 0);
    }
    // Its bytes are still watched: the same size, the same (future) mtime, other bytes.
    fs::write(dir.path().join("src/a.rs"), "pub fn uno() {}\n").unwrap();
    stamp("src/a.rs", future);
    assert_eq!(index.refresh(&jail, &control).parsed, 1);
    assert_eq!(index.file("src/a.rs").unwrap().definitions[0].name, "uno");
    // And in a later session, from the index on disk.
    assert_eq!(SymbolIndex::default().refresh(&jail, &control).parsed, 0);
}

#[test]
fn an_outline_line_is_as_wide_three_thousand_levels_deep_as_three() {
    // Each line was indented two spaces per enclosing definition: memory grew with the
    // square of the nesting (1.08 GiB for 36,000 nested functions).
    let js: String = (0..3000)
        .map(|i| format!("function f{i}(){{"))
        .collect::<String>()
        + &"}".repeat(3000)
        + "\n";
    let (_dir, mut ws) = workspace(&[("nested.js", &js)]);
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "nested.js"}));
    assert!(!err, "{text}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest < 300, "a line of {widest} chars");
    assert!(
        text.contains("[function f2999 1-1]"),
        "the deepest is shown: {text}"
    );
    assert!(
        text.contains("[… ")
            && text.contains(" definitions not shown, lines 1-1; read them with ws_read"),
        "{text}"
    );
}

#[test]
fn a_one_line_file_of_tiny_functions_is_outlined_and_indexed_in_seconds() {
    // Every definition's signature was cut from its line by scanning the whole line.
    let mut js = String::new();
    let mut i = 0;
    while js.len() < 1_000_000 {
        js.push_str(&format!("function f{i}(){{}}"));
        i += 1;
    }
    let (_dir, mut ws) = workspace(&[("min.js", &js)]);
    let started = Instant::now();
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "min.js"}));
    assert!(!err, "{text}");
    assert!(
        text.starts_with(&format!("min.js (javascript, 1 lines, {i} symbols)")),
        "{text}"
    );
    let (err, found) = call(&mut ws, "ws_symbols", json!({"query": "f12345"}));
    assert!(!err, "{found}");
    assert!(
        found.starts_with("min.js:1 function function f0(){}"),
        "{found}"
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
