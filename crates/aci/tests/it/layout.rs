//! ARCHITECTURE.md's map is true to the tree: every file and folder directly under each
//! crate's `src/` is named there by its full path, and every `crates/…` path the document
//! names exists. A new module without a line in the map, or a line left behind by a removed
//! one, fails here.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc() -> String {
    std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// `crates/<crate>/src/<entry>` for every entry of each crate's `src/` (folders with a
/// trailing `/`).
fn entries() -> Vec<String> {
    let mut out = Vec::new();
    for krate in std::fs::read_dir(repo().join("crates")).unwrap() {
        let krate = krate.unwrap().path();
        let src = krate.join("src");
        if !src.is_dir() {
            continue;
        }
        for e in std::fs::read_dir(&src).unwrap() {
            let path = e.unwrap().path();
            let rel = path
                .strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let rel = rel.trim_start_matches("./").to_string();
            out.push(if path.is_dir() {
                format!("{rel}/")
            } else {
                rel
            });
        }
    }
    out.sort();
    out
}

#[test]
fn every_source_entry_is_on_the_map() {
    let doc = doc();
    let missing: Vec<String> = entries()
        .into_iter()
        .filter(|e| !doc.contains(&format!("`{e}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's map does not name these (add a line for each, in backticks):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_path_on_the_map_exists() {
    let doc = doc();
    let mut gone = Vec::new();
    for piece in doc.split('`').skip(1).step_by(2) {
        if !piece.starts_with("crates/") || piece.contains(' ') || piece.contains('*') {
            continue;
        }
        let path = piece.split("::").next().unwrap_or(piece);
        if !Path::new(&repo().join(path)).exists() {
            gone.push(piece.to_string());
        }
    }
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n{}",
        gone.join("\n")
    );
}
