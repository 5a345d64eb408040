//! The behaviour tests of `slmcode`, as one test binary: each module drives the real binary
//! on a scratch project. One binary links once, where a binary per file linked twenty times.
//! `common` holds the shared helpers, `openai` the fake model server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod openai;

mod cap;
mod config;
mod edits;
mod escapes;
mod evolve;
mod git;
mod glob;
mod grep;
mod hooks;
mod jail;
mod list;
mod mcp;
mod mutation;
mod read;
mod registry;
mod run;
mod safety;
mod session;
mod setup;
mod shell;
mod todo;

/// Cargo builds only this file: a test file in `tests/it/` that no `mod` line here names is
/// never compiled and its tests silently never run, and a file put directly in `tests/` (or a
/// `tests/NAME/main.rs`) is a test binary of its own, linked apart. Fails naming every such
/// file, and every declared module whose file is gone.
#[test]
fn no_forgotten_test_files() {
    use std::collections::BTreeSet;

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub ").unwrap_or(line);
            Some(
                line.strip_prefix("mod ")?
                    .strip_suffix(';')?
                    .trim()
                    .to_string(),
            )
        })
        .collect();
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
