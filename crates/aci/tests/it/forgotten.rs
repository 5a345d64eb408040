//! The check every test binary of the workspace runs: each test file in `tests/it/` is
//! declared in its `main.rs`, and no test binary stands beside it. Shared by the three crates'
//! `main.rs` (the agent's and the cli's include this file by path).

use std::collections::BTreeSet;

/// Cargo builds only `tests/it/main.rs`: a test file in `tests/it/` that no `mod` line there
/// names is never compiled and its tests silently never run, and a file put directly in
/// `tests/` (or a `tests/NAME/main.rs`) is a test binary of its own, linked apart. Fails naming
/// every such file, and every declared module whose file is gone. A `mod` under a
/// `#[path = …]` attribute lives elsewhere and is not looked for here.
pub fn check(manifest_dir: &str) {
    let dir = std::path::Path::new(manifest_dir).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let mut declared = BTreeSet::new();
    let mut elsewhere = false;
    for line in main.lines().map(str::trim) {
        let item = line.strip_prefix("pub ").unwrap_or(line);
        if let Some(name) = item.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            if !elsewhere {
                declared.insert(name.trim().to_string());
            }
        }
        elsewhere = line.starts_with("#[path");
    }
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.join("mod.rs").is_file() {
            files.insert(name);
        } else if let Some(module) = name.strip_suffix(".rs") {
            if module != "main" {
                files.insert(module.to_string());
            }
        }
    }
    let mut binaries = Vec::new();
    for entry in std::fs::read_dir(dir.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs")
            || (path != dir && path.join("main.rs").is_file())
        {
            binaries.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    let forgotten: Vec<_> = files.difference(&declared).collect();
    let missing: Vec<_> = declared.difference(&files).collect();
    assert!(
        forgotten.is_empty() && missing.is_empty() && binaries.is_empty(),
        "every integration test belongs in {dir}, declared in its main.rs: add `mod NAME;` for \
         {forgotten:?}; declared without a file: {missing:?}; move into tests/it/: {binaries:?}",
        dir = dir.display()
    );
}
