//! The integration tests of `slmcode-aci`, as one test binary (one link instead of one per
//! file). Their data stays beside this directory: `tests/conformance/`, `tests/shell_policy/`;
//! the insta snapshots live in `tests/it/snapshots/`, named after the module path
//! (`it__messages__<name>.snap`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conformance;
mod edit_props;
mod jail_props;
mod layers;
mod layout;
mod messages;
mod outcomes;
mod races;
mod session_state;
mod shell_policy;
mod shell_run;
mod skip;
mod syntax_props;

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
