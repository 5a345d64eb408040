//! The module graph of `slmcode-aci` is layered, and ARCHITECTURE.md says how: its table of
//! layers is read here, every module of `src/` must be in exactly one layer, and every
//! `crate::…` reference in non-test code must point to a strictly lower layer. No tool may
//! name another tool. So the layering cannot rot, and the document cannot drift from the code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The layer table from ARCHITECTURE.md: rows `| N | `a`, `b` | … |` after the heading that
/// names the aci layers.
fn layers() -> BTreeMap<String, usize> {
    let doc = std::fs::read_to_string(manifest().join("../../ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md at the repository root");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("The layers of `crates/aci`"))
        .expect("a section \"The layers of `crates/aci`\" in ARCHITECTURE.md");
    let mut out = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(Ok(layer)) = cells.get(1).map(|c| c.parse::<usize>()) else {
            continue;
        };
        for module in cells[2].split(',') {
            let module = module.trim().trim_matches('`').to_string();
            assert!(
                out.insert(module.clone(), layer).is_none(),
                "{module} is listed twice in ARCHITECTURE.md"
            );
        }
    }
    assert!(!out.is_empty(), "no layer rows found in ARCHITECTURE.md");
    out
}

/// Every top-level module of `src/` (a file or a folder), with the non-test source of all its
/// files.
fn modules() -> BTreeMap<String, Vec<(PathBuf, String)>> {
    let src = manifest().join("src");
    let mut out: BTreeMap<String, Vec<(PathBuf, String)>> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let mut files = Vec::new();
        collect(&path, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            out.entry(name.clone())
                .or_default()
                .push((f, non_test(&text)));
        }
    }
    out
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            collect(&e.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The source without comments and without a trailing `#[cfg(test)] mod …` block.
fn non_test(text: &str) -> String {
    let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(text);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a source names through `crate::` (paths and `use crate::{a, b::c}` groups).
fn references(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            // A group: each item's first segment, at depth 0 of the braces.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.extend(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 || !item.contains("::") {
                    item.push(c);
                }
            }
            out.extend(first_segment(&item));
        } else {
            out.extend(first_segment(after));
        }
        rest = after;
    }
    out
}

fn first_segment(text: &str) -> Option<String> {
    let name: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name != "self").then_some(name)
}

#[test]
fn every_module_is_in_one_layer_and_imports_only_lower_layers() {
    let layers = layers();
    let modules = modules();
    let listed: BTreeSet<&String> = layers.keys().collect();
    let present: BTreeSet<&String> = modules.keys().collect();
    assert_eq!(
        listed, present,
        "ARCHITECTURE.md's aci layers must list exactly the modules of crates/aci/src"
    );
    let mut wrong = Vec::new();
    for (module, files) in &modules {
        let own = layers[module];
        for (file, code) in files {
            for to in references(code) {
                if &to == module {
                    continue;
                }
                let Some(&theirs) = layers.get(&to) else {
                    continue; // a macro or an item of lib.rs, not a module
                };
                if theirs >= own {
                    wrong.push(format!(
                        "{} (layer {own}) uses crate::{to} (layer {theirs})",
                        file.strip_prefix(manifest()).unwrap_or(file).display()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that point up or sideways:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_tool_imports_another_tool() {
    let dir = manifest().join("src/tools");
    let tools: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_stem().is_some_and(|s| s != "mod"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut wrong = Vec::new();
    for tool in &tools {
        let mut files = Vec::new();
        for candidate in [dir.join(format!("{tool}.rs")), dir.join(tool)] {
            if candidate.exists() {
                collect(&candidate, &mut files);
            }
        }
        for f in files {
            let code = non_test(&std::fs::read_to_string(&f).unwrap());
            for other in tools.iter().filter(|t| *t != tool) {
                for spelled in [
                    format!("crate::tools::{other}"),
                    format!("super::{other}::"),
                    format!("super::{other};"),
                ] {
                    if code.contains(&spelled) {
                        wrong.push(format!("tools/{tool} uses {spelled}"));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reference_scanner_reads_groups_and_paths() {
    let code = "use crate::a::{X, Y};\nuse crate::{b, c::{D, E}, self};\nlet x = crate::d::f();";
    let found: Vec<String> = references(code).into_iter().collect();
    assert_eq!(found, ["a", "b", "c", "d"]);
}
