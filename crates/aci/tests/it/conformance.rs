//! The conformance suite of the edit tools. Each case is a directory under
//! `tests/conformance/cases/` (its name is its path there): a project, one call, and the
//! project as it must be afterwards, or a refusal.
//!
//! - `case.yaml`: `tool`, the call's single-line `args`, and `refused` (a substring of the
//!   error) or nothing (the call must land); optional `message` (a substring of the result,
//!   landed or refused), `read` (ws_read a file before the call; default true) and `file` (the
//!   file to read: required when `before/` holds several).
//! - `arg.<name>[.<ext>]`: one more argument, its value the file's exact bytes
//!   (`arg.patch.diff`, `arg.new_str.py`), so a patch or a new_str reads as code.
//! - `before/`: the project, exactly as on disk, `.slmcode/config.yaml` included when the case
//!   needs a config. An empty project holds only `.gitkeep` (git keeps no empty directory),
//!   which is not copied.
//! - `after/` (when not `refused`): every file the call creates or changes, exactly as it must
//!   be afterwards.
//! - `removed` in `case.yaml` (when not `refused`): the files or directories of `before/` the
//!   call must take away (ws_delete, the old path of a ws_mv); a case needs `after/`, `removed`
//!   or both.
//!
//! The whole project is compared, before and after the call: a landed call must leave the
//! files of `after/` as they are there and every other file as in `before/`, creating nothing
//! else (not even an empty directory); a refused call must leave it exactly as `before/`. Only
//! the harness's own records (`.slmcode/checkpoints/`, `pending/`, `tmp/`) are not compared,
//! unless the case holds them. Every byte counts (CRLF, trailing whitespace, no final newline,
//! BOMs): `.gitattributes` and `tests/conformance/.editorconfig` keep git and editors off them.
//!
//! Every failing or malformed case is reported. `CONFORMANCE_FILTER=text` runs only the cases
//! whose name contains it.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The number of cases the suite holds; deleting one (or a directory of them) fails the run.
const MIN_CASES: usize = 330;

use serde::Deserialize;
use serde_json::{Map, Value};
use slmcode_aci::path::Jail;
use slmcode_aci::{Config, Registry, Workspace};

/// A case's `case.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseYaml {
    tool: String,
    #[serde(default)]
    args: Map<String, Value>,
    refused: Option<String>,
    message: Option<String>,
    #[serde(default = "yes")]
    read: bool,
    file: Option<String>,
    #[serde(default)]
    removed: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Files by their `/`-separated path in the project, with their bytes.
type Tree = BTreeMap<String, Vec<u8>>;

/// A case, loaded from its directory.
#[derive(Debug)]
struct Case {
    tool: String,
    /// The call's arguments, `arg.*` files included.
    args: Map<String, Value>,
    /// The file ws_read before the call, if any.
    read: Option<String>,
    before: Tree,
    /// Empty for a refusal.
    after: Tree,
    /// What of `before` must be gone: a file, or a directory and everything in it.
    removed: Vec<String>,
    refused: Option<String>,
    message: Option<String>,
}

/// Every case directory under `base`, by name, sorted. A directory holding only directories,
/// none of them `before/` or `after/`, groups cases; any other is a case.
fn case_dirs(base: &Path) -> Vec<(String, PathBuf)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        let is_group = entries.iter().all(|p| p.is_dir())
            && !entries
                .iter()
                .any(|p| p.ends_with("before") || p.ends_with("after"));
        if !is_group {
            let name = dir.strip_prefix(base).expect("inside").to_string_lossy();
            out.push((name.into_owned(), dir.to_path_buf()));
            return;
        }
        for d in entries {
            walk(base, &d, out);
        }
    }
    let mut out = Vec::new();
    walk(base, base, &mut out);
    out
}

/// Every file under `dir` (a missing `dir` is empty), and every empty directory as `name/`.
/// The harness's own records are left out unless `keep` names them; anything but a file or a
/// directory stands as a marker, so it shows up as a difference.
fn tree(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Tree, String> {
    fn walk(
        base: &Path,
        dir: &Path,
        keep: &dyn Fn(&str) -> bool,
        out: &mut Tree,
    ) -> Result<(), String> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for e in entries {
            let e = e.map_err(|e| e.to_string())?;
            let path = e.path();
            let rel = path.strip_prefix(base).expect("inside");
            let rel = rel
                .to_str()
                .ok_or_else(|| format!("{rel:?}: not UTF-8"))?
                .to_string();
            let kind = e.file_type().map_err(|e| e.to_string())?;
            if kind.is_dir() {
                let mut inside = std::fs::read_dir(&path).map_err(|e| e.to_string())?;
                if inside.next().is_none() && !harness_record(&format!("{rel}/")) {
                    out.insert(format!("{rel}/"), b"\0(an empty directory)".to_vec());
                }
                walk(base, &path, keep, out)?;
            } else if harness_record(&rel) && !keep(&rel) {
                continue;
            } else if kind.is_file() {
                let bytes = std::fs::read(&path).map_err(|e| format!("{rel}: {e}"))?;
                out.insert(rel, bytes);
            } else {
                out.insert(rel, b"\0(not a regular file)".to_vec());
            }
        }
        Ok(())
    }
    let mut out = Tree::new();
    walk(dir, dir, keep, &mut out)?;
    Ok(out)
}

/// True for the harness's own records: checkpoints, pending changes, staged temp files.
fn harness_record(rel: &str) -> bool {
    [
        ".slmcode/checkpoints/",
        ".slmcode/pending/",
        ".slmcode/tmp/",
    ]
    .iter()
    .any(|dir| rel.starts_with(dir))
}

/// Loads the case in `dir`; says what is malformed about it, if anything.
fn load(dir: &Path) -> Result<Case, String> {
    let mut yaml = None;
    let (mut has_before, mut has_after) = (false, false);
    let mut arg_files = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let is_dir = e.path().is_dir();
        match (name.as_str(), is_dir) {
            ("case.yaml", false) => {
                yaml = Some(std::fs::read_to_string(e.path()).map_err(|e| e.to_string())?);
            }
            ("before", true) => has_before = true,
            ("after", true) => has_after = true,
            (n, false) if n.starts_with("arg.") => arg_files.push((name, e.path())),
            _ => {
                return Err(format!(
                    "unexpected {name:?} (a case holds case.yaml, before/, after/, arg.* files)"
                ))
            }
        }
    }
    let text = yaml.ok_or("no case.yaml")?;
    if !has_before {
        return Err("no before/ directory".into());
    }
    let spec: CaseYaml = serde_saphyr::from_str(&text).map_err(|e| format!("case.yaml: {e}"))?;
    let mut args = spec.args;
    for (name, path) in arg_files {
        let key = name["arg.".len()..].split('.').next().unwrap_or_default();
        let bytes = std::fs::read(&path).map_err(|e| format!("{name}: {e}"))?;
        let value = String::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8"))?;
        if key.is_empty() {
            return Err(format!("{name}: names no argument"));
        }
        if args.insert(key.to_string(), Value::String(value)).is_some() {
            return Err(format!("{name}: case.yaml gives `{key}` too"));
        }
    }
    let all = |_: &str| true;
    let mut before = tree(&dir.join("before"), &all)?;
    if before.keys().eq([".gitkeep"]) {
        before.clear();
    }
    let after = tree(&dir.join("after"), &all)?;
    match (&spec.refused, has_after, after.is_empty()) {
        (Some(_), true, _) => return Err("both `refused` and after/".into()),
        (Some(_), _, _) if !spec.removed.is_empty() => {
            return Err("both `refused` and `removed`".into())
        }
        (None, false, _) if spec.removed.is_empty() => {
            return Err("neither `refused` nor after/ nor `removed`".into())
        }
        (None, true, true) => return Err("after/ is empty".into()),
        _ => {}
    }
    for gone in &spec.removed {
        if !before.keys().any(|k| within(k, gone)) {
            return Err(format!(
                "`removed` names {gone:?}, which before/ does not hold"
            ));
        }
        if after.keys().any(|k| within(k, gone)) {
            return Err(format!("`removed` names {gone:?}, which after/ holds"));
        }
    }
    let read = match (spec.read, spec.file) {
        (false, Some(_)) => return Err("`file` names the file to read, but `read` is false".into()),
        (false, None) => None,
        (true, Some(f)) => Some(f),
        (true, None) if before.len() > 1 => {
            return Err("before/ holds several files: name the one to read in `file`".into())
        }
        (true, None) => before.keys().next().cloned(),
    };
    Ok(Case {
        tool: spec.tool,
        args,
        read,
        before,
        after,
        removed: spec.removed,
        refused: spec.refused,
        message: spec.message,
    })
}

/// Runs a case; says what went wrong, if anything.
fn run(case: &Case) -> Result<(), String> {
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = work.path();
    for (rel, bytes) in &case.before {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).map_err(|e| e.to_string())?;
        if rel.ends_with('/') {
            std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
        } else {
            std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        }
    }
    let jail = Jail::open(root).map_err(|e| e.to_string())?;
    // A case's config is the test's own: approved.
    let (config, _) = Config::load(&jail, None, Vec::new(), |_| true).map_err(|e| e.to_string())?;
    let mut ws = Workspace::new(jail, config);
    let registry = Registry::coding();
    if let Some(file) = &case.read {
        let r = registry.call(&mut ws, "ws_read", &serde_json::json!({"path": file}));
        if r.is_error {
            return Err(format!("setup ws_read failed: {}", r.text));
        }
    }
    let result = registry.call(&mut ws, &case.tool, &Value::Object(case.args.clone()));
    let named = |rel: &str| case.before.contains_key(rel) || case.after.contains_key(rel);
    let now = tree(root, &named)?;
    if let Some(m) = &case.message {
        if !result.text.contains(m.as_str()) {
            return Err(format!("result lacks {m:?}:\n{}", result.text));
        }
    }
    match &case.refused {
        Some(_) if !result.is_error => {
            Err(format!("expected a refusal, got success:\n{}", result.text))
        }
        Some(refusal) if !result.text.contains(refusal.as_str()) => {
            Err(format!("refusal lacks {refusal:?}:\n{}", result.text))
        }
        None if result.is_error => Err(format!("expected success, got refusal:\n{}", result.text)),
        _ => {
            let mut want = case.before.clone();
            want.retain(|k, _| !case.removed.iter().any(|gone| within(k, gone)));
            want.extend(case.after.clone());
            let diffs = differences(&case.before, &want, &now);
            if diffs.is_empty() {
                Ok(())
            } else {
                let what = if case.refused.is_some() {
                    "a refused"
                } else {
                    "the"
                };
                Err(format!(
                    "{what} call left the project other than expected:\n{}\n--- result\n{}",
                    diffs.join("\n"),
                    result.text
                ))
            }
        }
    }
}

/// True when the file `rel` is `gone` or lies in the directory `gone`.
fn within(rel: &str, gone: &str) -> bool {
    let gone = gone.trim_end_matches('/');
    rel == gone || rel.strip_prefix(gone).is_some_and(|r| r.starts_with('/'))
}

/// Each file that differs between `want` and `got` (`before` tells a file the call failed to
/// remove from one it created).
fn differences(before: &Tree, want: &Tree, got: &Tree) -> Vec<String> {
    let mut paths: Vec<&String> = want.keys().chain(got.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|p| match (want.get(p), got.get(p)) {
            (None, Some(_)) if before.contains_key(p) => {
                Some(format!("{p}: still there, though the call must remove it"))
            }
            (None, Some(_)) => Some(format!("{p}: created")),
            (Some(_), None) => Some(format!("{p}: missing")),
            (Some(w), Some(g)) if w != g => Some(format!("{p}: {}", first_difference(w, g))),
            _ => None,
        })
        .collect()
}

/// The first line where `want` and `got` differ, both versions escaped (so line endings and
/// whitespace show).
fn first_difference(want: &[u8], got: &[u8]) -> String {
    fn lines(b: &[u8]) -> Vec<&[u8]> {
        b.split_inclusive(|&c| c == b'\n').collect()
    }
    let (w, g) = (lines(want), lines(got));
    let n = (0..).find(|&i| w.get(i) != g.get(i)).expect("a difference");
    let show = |l: Option<&&[u8]>| {
        l.map_or("(end of file)".to_string(), |l| {
            format!("{:?}", String::from_utf8_lossy(l))
        })
    };
    format!(
        "line {} differs\n  expected {}\n  got      {}",
        n + 1,
        show(w.get(n)),
        show(g.get(n))
    )
}

#[test]
fn conformance_suite() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/cases");
    let all = case_dirs(&base);
    let filter = std::env::var("CONFORMANCE_FILTER").ok();
    let cases: Vec<_> = all
        .iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    let mut failures = Vec::new();
    for (name, dir) in &cases {
        let outcome = match load(dir) {
            Err(why) => Err(format!("malformed case: {why}")),
            Ok(case) => catch_unwind(AssertUnwindSafe(|| run(&case)))
                .unwrap_or_else(|_| Err("panicked (see above)".to_string())),
        };
        if let Err(why) = outcome {
            failures.push(format!("{name}: {why}"));
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
    assert!(
        filter.is_some() || all.len() >= MIN_CASES,
        "the suite must hold at least {MIN_CASES} cases (it held that many), has {}: a removed case needs a reason and a lower floor here",
        all.len()
    );
}
