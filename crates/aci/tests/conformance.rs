//! The data-driven conformance suite for the edit tools. Each case in
//! `tests/conformance/*.json` is a file, a call, and either the exact bytes the file must hold
//! afterwards or a refusal (the file must then be byte-for-byte unchanged).
//!
//! Case fields:
//! - `name`: unique, e.g. `"py/indent/tabs-to-spaces"`
//! - `file`: the file's path in the project (default `file.txt`); `input`: its exact content
//! - `read`: ws_read the file before the call (default true)
//! - `config`: optional `.slmcode/config.yaml` text
//! - `tool` and `args`: the call
//! - `expect`: the file's exact content after the call, or `refused`: a substring of the error
//! - `message`: optional substring of the result text (success or refusal)
//!
//! Cases can also be directories under `tests/conformance/cases/`, written to be read as
//! files (the case's name is its directory's path there):
//!
//! - `case.yaml`: `tool`, the short `args`, and either `refused` (a substring of the error)
//!   or nothing (then `after/` is the expectation); optional `message`, `read` (default true),
//!   `file` (the file ws_read before the call; default the only file in `before/`);
//! - `before/`: the project, file by file, exactly as on disk;
//! - `after/`: every file the call must change, exactly as it must be afterwards (every other
//!   file of `before/` must be unchanged);
//! - `arg.<name>[.ext]`: a long argument (`arg.patch.diff`, `arg.new_str.py`), its bytes as the
//!   value, so a patch or a new_str is read as itself and not as an escaped string.
//!
//! `CONFORMANCE_FILTER=text` runs only the cases whose file name or case name contains it.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use slmcode_aci::path::Jail;
use slmcode_aci::{Config, Registry, Workspace};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default = "default_file")]
    file: String,
    input: Option<String>,
    #[serde(default = "yes")]
    read: bool,
    config: Option<String>,
    tool: String,
    args: Value,
    expect: Option<String>,
    refused: Option<String>,
    message: Option<String>,
}

fn default_file() -> String {
    "file.txt".to_string()
}

fn yes() -> bool {
    true
}

fn load_cases() -> Vec<(String, Case)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/conformance")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read case file");
        let list: Vec<Case> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let stem = f.file_name().unwrap().to_string_lossy().into_owned();
        cases.extend(list.into_iter().map(|c| (stem.clone(), c)));
    }
    cases
}

/// Runs one case; returns a description of what went wrong, if anything.
fn run_case(case: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path();
    if let Some(config) = &case.config {
        std::fs::create_dir_all(root.join(".slmcode")).map_err(|e| e.to_string())?;
        std::fs::write(root.join(".slmcode/config.yaml"), config).map_err(|e| e.to_string())?;
    }
    let file = root.join(&case.file);
    if let Some(input) = &case.input {
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&file, input).map_err(|e| e.to_string())?;
    }
    let jail = Jail::open(root).map_err(|e| e.to_string())?;
    // A case's config is the test's own: approved.
    let (config, _) = Config::load(&jail, None, Vec::new(), |_| true).map_err(|e| e.to_string())?;
    let mut ws = Workspace::new(jail, config);
    let registry = Registry::coding();
    if case.read && case.input.is_some() {
        let r = registry.call(&mut ws, "ws_read", &serde_json::json!({"path": case.file}));
        if r.is_error {
            return Err(format!("setup ws_read failed: {}", r.text));
        }
    }
    let result = registry.call(&mut ws, &case.tool, &case.args);
    let after = std::fs::read(&file).ok();
    let after_text = after.as_deref().map(String::from_utf8_lossy);
    if let Some(m) = &case.message {
        if !result.text.contains(m.as_str()) {
            return Err(format!("result lacks {m:?}:\n{}", result.text));
        }
    }
    match (&case.expect, &case.refused) {
        (Some(expect), None) => {
            if result.is_error {
                return Err(format!("expected success, got refusal:\n{}", result.text));
            }
            if after.as_deref() != Some(expect.as_bytes()) {
                return Err(format!(
                    "file differs.\n--- expected\n{expect:?}\n--- got\n{after_text:?}\n--- result\n{}",
                    result.text
                ));
            }
        }
        (None, Some(refusal)) => {
            if !result.is_error {
                return Err(format!("expected a refusal, got success:\n{}", result.text));
            }
            if !result.text.contains(refusal.as_str()) {
                return Err(format!("refusal lacks {refusal:?}:\n{}", result.text));
            }
            let before = case.input.as_ref().map(|s| s.as_bytes().to_vec());
            if after != before {
                return Err(format!("a refused call changed the file to {after_text:?}"));
            }
        }
        _ => return Err("a case needs exactly one of \"expect\" and \"refused\"".to_string()),
    }
    Ok(())
}

/// A case written as a directory (see the module docs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DirCase {
    tool: String,
    #[serde(default)]
    args: serde_json::Map<String, Value>,
    refused: Option<String>,
    message: Option<String>,
    #[serde(default = "yes")]
    read: bool,
    file: Option<String>,
}

/// Every file under `dir`, by its `/`-separated path relative to it, with its bytes.
fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                if e.file_name() != ".slmcode" {
                    walk(base, &path, out);
                }
            } else if let Ok(bytes) = std::fs::read(&path) {
                let rel = path.strip_prefix(base).expect("inside");
                out.insert(rel.to_string_lossy().replace('\\', "/"), bytes);
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The directory cases: (name, case directory).
fn dir_cases() -> Vec<(String, std::path::PathBuf)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, std::path::PathBuf)>) {
        if dir.join("case.yaml").is_file() {
            let name = dir
                .strip_prefix(base)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            out.push((name, dir.to_path_buf()));
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            walk(base, &d, out);
        }
    }
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/cases");
    let mut out = Vec::new();
    walk(&base, &base, &mut out);
    out
}

/// Runs one directory case; returns what went wrong, if anything.
fn run_dir_case(dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join("case.yaml")).map_err(|e| e.to_string())?;
    let case: DirCase = serde_saphyr::from_str(&text).map_err(|e| format!("case.yaml: {e}"))?;
    let before = files_under(&dir.join("before"));
    let after = files_under(&dir.join("after"));
    let mut args = case.args.clone();
    for e in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix("arg.") {
            let key = rest.split('.').next().unwrap_or(rest).to_string();
            let value = std::fs::read_to_string(e.path()).map_err(|e| e.to_string())?;
            args.insert(key, Value::String(value));
        }
    }
    if case.refused.is_some() != after.is_empty() {
        return Err("a case needs exactly one of `refused` and an after/ directory".into());
    }
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = work.path();
    for (rel, bytes) in &before {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).map_err(|e| e.to_string())?;
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    }
    let jail = Jail::open(root).map_err(|e| e.to_string())?;
    let (config, _) = Config::load(&jail, None, Vec::new(), |_| true).map_err(|e| e.to_string())?;
    let mut ws = Workspace::new(jail, config);
    let registry = Registry::coding();
    let read = match (&case.file, before.len()) {
        (Some(f), _) => Some(f.clone()),
        (None, 1) => before.keys().next().cloned(),
        (None, _) => None,
    };
    if case.read {
        if let Some(f) = read {
            let r = registry.call(&mut ws, "ws_read", &serde_json::json!({"path": f}));
            if r.is_error {
                return Err(format!("setup ws_read failed: {}", r.text));
            }
        }
    }
    let result = registry.call(&mut ws, &case.tool, &Value::Object(args));
    let now = files_under(root);
    if let Some(m) = &case.message {
        if !result.text.contains(m.as_str()) {
            return Err(format!("result lacks {m:?}:\n{}", result.text));
        }
    }
    let show = |b: Option<&Vec<u8>>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    match &case.refused {
        Some(refusal) => {
            if !result.is_error {
                return Err(format!("expected a refusal, got success:\n{}", result.text));
            }
            if !result.text.contains(refusal.as_str()) {
                return Err(format!("refusal lacks {refusal:?}:\n{}", result.text));
            }
            if now != before {
                return Err("a refused call changed the project".into());
            }
        }
        None => {
            if result.is_error {
                return Err(format!("expected success, got refusal:\n{}", result.text));
            }
            for (rel, want) in &before {
                let expected = after.get(rel).unwrap_or(want);
                if now.get(rel) != Some(expected) {
                    return Err(format!(
                        "{rel} differs.\n--- expected\n{:?}\n--- got\n{:?}\n--- result\n{}",
                        show(Some(expected)),
                        show(now.get(rel)),
                        result.text
                    ));
                }
            }
            for (rel, want) in &after {
                if now.get(rel) != Some(want) {
                    return Err(format!("{rel} differs:\n{:?}", show(now.get(rel))));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn conformance_suite() {
    // CONFORMANCE_FILTER=text runs only the cases whose file or name contains it.
    let filter = std::env::var("CONFORMANCE_FILTER").ok();
    let cases: Vec<(String, Case)> = load_cases()
        .into_iter()
        .filter(|(file, case)| {
            filter
                .as_deref()
                .is_none_or(|f| file.contains(f) || case.name.contains(f))
        })
        .collect();
    let dirs: Vec<(String, std::path::PathBuf)> = dir_cases()
        .into_iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    let mut names = std::collections::HashSet::new();
    let mut failures = Vec::new();
    for (name, dir) in &dirs {
        assert!(names.insert(name.clone()), "duplicate case name {name}");
        if let Err(why) = run_dir_case(dir) {
            failures.push(format!("[cases/] {name}: {why}"));
        }
    }
    let total = cases.len() + dirs.len();
    for (file, case) in &cases {
        assert!(
            names.insert(case.name.clone()),
            "duplicate case name {}",
            case.name
        );
        if let Err(why) = run_case(case) {
            failures.push(format!("[{file}] {}: {why}", case.name));
        }
    }
    eprintln!(
        "conformance: {total} cases ({} as files), {} failed",
        dirs.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} conformance cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    if filter.is_none() {
        assert!(
            cases.len() >= 150,
            "the suite must hold at least 150 cases, has {}",
            cases.len()
        );
    }
}
