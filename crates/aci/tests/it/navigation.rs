//! ws_outline and ws_symbols through the registry: the text a model reads (pinned), the
//! refusals that say how to retry, the cap, and the index never answering about bytes that
//! are no longer on disk — after an edit through the tools, an edit by someone else, a
//! deletion, or a damaged cache.

use std::fs;
use std::time::{Duration, SystemTime};

use serde_json::json;
use slmcode_aci::control::CallControl;
use slmcode_aci::symbols::SymbolIndex;
use slmcode_aci::{Config, Registry, Workspace};

const CONFIG_RS: &str = "use std::fmt;\n\n/// The settings.\n#[derive(Debug)]\npub struct Config {\n    port: u16,\n}\n\nimpl Config {\n    pub fn new() -> Self {\n        Config { port: 80 }\n    }\n\n    pub fn port(&self) -> u16 {\n        self.port\n    }\n}\n\npub fn parse_config(text: &str) -> Config {\n    let _ = text;\n    Config::new()\n}\n";

const MAIN_RS: &str = "mod config;\n\nfn main() {\n    let c = config::parse_config(\"\");\n    println!(\"{}\", c.port());\n}\n";

fn project() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/config.rs"), CONFIG_RS).unwrap();
    fs::write(dir.path().join("src/main.rs"), MAIN_RS).unwrap();
    fs::write(dir.path().join("README.md"), "# demo\n").unwrap();
    let ws = Workspace::open(dir.path(), Config::default()).unwrap();
    (dir, ws)
}

/// Puts a file's mtime at `when`, as another process or a coarse filesystem may.
fn set_mtime(path: impl AsRef<std::path::Path>, when: SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// Renames `parse_config` in src/config.rs through ws_read and ws_edit, as a model would.
fn rename_parse_config(ws: &mut Workspace, to: &str) {
    call(ws, "ws_read", json!({"path": "src/config.rs"}));
    let (err, text) = call(
        ws,
        "ws_edit",
        json!({"path": "src/config.rs", "old_str": "pub fn parse_config(", "new_str": format!("pub fn {to}(")}),
    );
    assert!(!err, "{text}");
}

fn call(ws: &mut Workspace, tool: &str, args: serde_json::Value) -> (bool, String) {
    let r = Registry::coding().call(ws, tool, &args);
    (r.is_error, r.text)
}

#[test]
fn outline_of_a_file_nests_and_names_the_next_read() {
    let (_d, mut ws) = project();
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "src/config.rs"}));
    assert!(!err, "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn outline_of_a_directory_lists_top_level_symbols_in_walk_order() {
    let (_d, mut ws) = project();
    let (err, text) = call(&mut ws, "ws_outline", json!({}));
    assert!(!err, "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn outline_refuses_other_languages_and_missing_paths_with_the_next_call() {
    let (_d, mut ws) = project();
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "README.md"}));
    assert!(err);
    assert!(
        text.contains("no grammar for markdown files (README.md)")
            && text.contains("ws_grep {\"pattern\":\"…\",\"path\":\"README.md\"}"),
        "{text}"
    );
    let (err, text) = call(&mut ws, "ws_outline", json!({"path": "src/confg.rs"}));
    assert!(err);
    assert!(
        text.contains("no such file or directory: src/confg.rs"),
        "{text}"
    );
    assert!(text.contains("src/config.rs"), "did you mean: {text}");
}

#[test]
fn a_directory_outline_past_the_cap_says_how_to_narrow() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let d = dir.path().join(format!("m{i:02}"));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("lib.rs"),
            format!("pub fn first_{i}() {{}}\npub fn second_{i}() {{}}\n"),
        )
        .unwrap();
    }
    let config = Config {
        max_tool_chars: 2000,
        ..Config::default()
    };
    let mut ws = Workspace::open(dir.path(), config).unwrap();
    let (err, text) = call(&mut ws, "ws_outline", json!({}));
    assert!(!err, "{text}");
    assert!(text.chars().count() <= 2000, "{}", text.chars().count());
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with('[') && last.contains(" of 60 files shown"),
        "{last}"
    );
    assert!(last.contains("ws_outline {\"path\":\"m"), "{last}");
    assert!(text.starts_with("m00/lib.rs (rust, 2 lines)"), "{text}");
}

#[test]
fn symbols_answer_definitions_best_first_with_reference_counts() {
    let (_d, mut ws) = project();
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_config"}));
    assert!(!err, "{text}");
    insta::assert_snapshot!("symbols_exact", text);
    // A qualified name, a kind, a near miss.
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "Config::port"}));
    assert!(
        text.starts_with("src/config.rs:14 method pub fn port(&self) -> u16 {"),
        "{text}"
    );
    let (_, text) = call(
        &mut ws,
        "ws_symbols",
        json!({"query": "Config", "kind": "struct"}),
    );
    assert!(
        text.starts_with("src/config.rs:5 struct pub struct Config {"),
        "{text}"
    );
    assert!(!text.contains(" impl "), "{text}");
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "prase_config"}));
    assert!(
        text.starts_with("nothing is named \"prase_config\"; the closest names:\nsrc/config.rs:19"),
        "{text}"
    );
}

#[test]
fn symbols_refuse_a_bad_kind_and_say_when_nothing_matches() {
    let (_d, mut ws) = project();
    let (err, text) = call(
        &mut ws,
        "ws_symbols",
        json!({"query": "x", "kind": "widget"}),
    );
    assert!(err);
    assert!(
        text.contains("kind \"widget\" is not one of: function, method"),
        "{text}"
    );
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "zzqqy"}));
    assert!(!err);
    assert!(
        text.starts_with("no definition matches \"zzqqy\" (2 code files indexed")
            && text.contains("ws_grep {\"pattern\":\"zzqqy\"}"),
        "{text}"
    );
    let (err, text) = call(&mut ws, "ws_symbols", json!({"query": "  "}));
    assert!(err && text.contains("query is empty"), "{text}");
}

#[test]
fn symbols_list_at_most_fifty_and_say_how_to_narrow() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..70)
        .map(|i| format!("def handle_{i}():\n    pass\n\n"))
        .collect();
    fs::write(dir.path().join("h.py"), body).unwrap();
    let mut ws = Workspace::open(dir.path(), Config::default()).unwrap();
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "handle"}));
    assert_eq!(text.lines().filter(|l| l.starts_with("h.py:")).count(), 50);
    assert!(
        text.ends_with("[50 of 70 definitions shown, best first; narrow with kind= or path=]"),
        "{text}"
    );
}

/// The heart of it: no answer is about bytes that are gone.
#[test]
fn an_edit_through_the_tools_is_seen_by_the_next_query() {
    let (_d, mut ws) = project();
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_config"}));
    assert!(text.starts_with("src/config.rs:19"), "{text}");
    // Same length, same file, within the same second as the indexing.
    rename_parse_config(&mut ws, "parse_cfgxxx");
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_cfgxxx"}));
    assert!(
        text.starts_with("src/config.rs:19 function pub fn parse_cfgxxx("),
        "{text}"
    );
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_config"}));
    assert!(!text.contains("function pub fn parse_config("), "{text}");
    // A moved file is found under its new name only; a deleted one not at all.
    call(
        &mut ws,
        "ws_mv",
        json!({"from": "src/config.rs", "to": "src/settings.rs"}),
    );
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_cfgxxx"}));
    assert!(text.starts_with("src/settings.rs:19"), "{text}");
    call(&mut ws, "ws_delete", json!({"path": "src/settings.rs"}));
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_cfgxxx"}));
    assert!(text.starts_with("no definition matches"), "{text}");
}

#[test]
fn an_edit_by_someone_else_is_seen_even_with_the_same_size_and_mtime() {
    let (dir, mut ws) = project();
    let path = dir.path().join("src/config.rs");
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_config"}));
    assert!(text.starts_with("src/config.rs:19"), "{text}");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    // Another process (an editor, ws_shell) writes the same number of bytes and puts the
    // mtime back: size and mtime agree with the index, but the file was indexed within the
    // timestamp granule of its mtime, so it is read again.
    fs::write(&path, CONFIG_RS.replace("parse_config", "parse_zzzzzz")).unwrap();
    set_mtime(&path, mtime);
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_zzzzzz"}));
    assert!(text.starts_with("src/config.rs:19"), "{text}");
    // In a later session, an older file changed by size is read again.
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::write(&path, CONFIG_RS.replace("parse_config", "parse_b")).unwrap();
    set_mtime(&path, old);
    let mut later = Workspace::open(dir.path(), Config::default()).unwrap();
    let (_, text) = call(&mut later, "ws_symbols", json!({"query": "parse_b"}));
    assert!(
        text.starts_with("src/config.rs:19 function pub fn parse_b("),
        "{text}"
    );
}

#[test]
fn the_index_is_kept_on_disk_and_rebuilt_when_damaged() {
    let (dir, _ws) = project();
    let jail = slmcode_aci::path::Jail::open(dir.path()).unwrap();
    let control = CallControl::default();
    // Old enough that the racy-mtime rule does not re-read them.
    let old = SystemTime::now() - Duration::from_secs(3600);
    for f in ["src/config.rs", "src/main.rs"] {
        set_mtime(dir.path().join(f), old);
    }
    let first = SymbolIndex::default().refresh(&jail, &control);
    assert_eq!((first.files, first.parsed, first.from_cache), (2, 2, false));
    let cache = dir.path().join(".slmcode/cache/symbols.idx");
    assert!(cache.is_file());
    let mut warm_index = SymbolIndex::default();
    let warm = warm_index.refresh(&jail, &control);
    assert_eq!((warm.files, warm.parsed, warm.from_cache), (2, 0, true));
    // What the mutation path touched is read again whatever its stat says.
    warm_index.touch(&jail.parse("src/main.rs").unwrap());
    assert_eq!(warm_index.refresh(&jail, &control).parsed, 1);
    assert_eq!(warm_index.refresh(&jail, &control).parsed, 0);
    // A damaged cache is rebuilt, not trusted, and answers stay right.
    fs::write(&cache, b"\x01\xff\xff garbage").unwrap();
    let mut index = SymbolIndex::default();
    let rebuilt = index.refresh(&jail, &control);
    assert_eq!((rebuilt.parsed, rebuilt.from_cache), (2, false));
    assert_eq!(index.references_to("parse_config"), 1);
    // A deleted file is dropped on the next refresh.
    fs::remove_file(dir.path().join("src/main.rs")).unwrap();
    let after = index.refresh(&jail, &control);
    assert_eq!((after.files, after.dropped), (1, 1));
    assert_eq!(index.references_to("parse_config"), 0);
}

/// A word the task uses in passing and that many files define ("limit") must not crowd out
/// the one name it is about.
#[test]
fn the_map_leads_with_the_specific_name_not_the_common_word() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..30 {
        fs::write(
            dir.path().join(format!("take_{i}.rs")),
            format!("pub struct Take{i};\nimpl Take{i} {{\n    pub fn limit(&self) -> usize {{ {i} }}\n}}\n"),
        )
        .unwrap();
    }
    // Many callers make `limit` the better-connected name.
    for i in 0..20 {
        fs::write(
            dir.path().join(format!("use_{i}.rs")),
            format!("fn use_{i}(t: &Take{i}) -> usize {{ t.limit() + t.limit() }}\n"),
        )
        .unwrap();
    }
    fs::write(
        dir.path().join("builder.rs"),
        "pub struct RegexBuilder {\n    size: usize,\n}\n\nimpl RegexBuilder {\n    pub fn size_limit(&mut self, n: usize) -> &mut Self {\n        self.size = n;\n        self\n    }\n}\n",
    )
    .unwrap();
    let jail = slmcode_aci::path::Jail::open(dir.path()).unwrap();
    let mut index = SymbolIndex::default();
    index.refresh(&jail, &CallControl::default());
    let map = slmcode_aci::symbols::map::build(
        &index,
        &jail,
        &["RegexBuilder should accept a limit"],
        &|text| text.chars().count() <= 400,
    )
    .unwrap();
    let files: Vec<&str> = map
        .text
        .lines()
        .skip(1)
        .filter(|l| l.ends_with(':'))
        .collect();
    assert_eq!(files.first(), Some(&"builder.rs:"), "{}", map.text);
    assert!(
        map.text.contains("|pub struct RegexBuilder {"),
        "{}",
        map.text
    );
    assert!(map.text.chars().count() <= 400);
}

/// The mutation path tells the index what it wrote: even on a filesystem whose timestamps
/// cannot tell the write apart (the mtime put back to an old value, the size unchanged),
/// the next query reads the file again.
#[test]
fn the_mutation_path_marks_what_it_wrote() {
    let (dir, mut ws) = project();
    let path = dir.path().join("src/config.rs");
    let old = SystemTime::now() - Duration::from_secs(3600);
    let set_old = || set_mtime(&path, old);
    set_old();
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_config"}));
    assert!(text.starts_with("src/config.rs:19"), "{text}");
    rename_parse_config(&mut ws, "parse_qqqqqq");
    set_old();
    let (_, text) = call(&mut ws, "ws_symbols", json!({"query": "parse_qqqqqq"}));
    assert!(
        text.starts_with("src/config.rs:19 function pub fn parse_qqqqqq("),
        "{text}"
    );
}
