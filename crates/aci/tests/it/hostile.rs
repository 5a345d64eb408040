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
