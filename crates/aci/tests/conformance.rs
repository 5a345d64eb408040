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
    let mut names = std::collections::HashSet::new();
    let mut failures = Vec::new();
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
        "conformance: {} cases, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} conformance cases failed:\n\n{}",
        failures.len(),
        cases.len(),
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
