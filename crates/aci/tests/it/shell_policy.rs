//! The adversarial suite for ws_shell's policy. Each case in `tests/shell_policy/cases.json` is a
//! command and the verdict the policy must reach on it, checked against a fixed workspace:
//! `existing.txt`, `src/main.rs`, `README.md`, `.slmcode/hooks.json`, `.slmcode/config.yaml` and
//! the directory `.slmcode/scratch/`, plus `ctl`, a symlink to `.slmcode` (a write through it must
//! still count as targeting `.slmcode/`); a git directory `.git/` (config, hooks/), `g`, a
//! symlink to it, `sub/.git`, a submodule's `.git` file whose gitdir is `moved-git/`,
//! `vendor/lib/.git/`, and `linked.txt`, a second hard link of `hardlinked.txt`. Programs may come
//! from `/usr/local/bin`, `/usr/bin` and `/bin`; the call's timeout is 120 s.
//!
//! Case fields:
//! - `command`: the command text exactly as the model would send it (newlines included)
//! - `allowed`: whether the policy must let it run
//! - `rule`: for a refused case, the id of the rule that must refuse it (`Rule::id`)
//! - `allow`: optional `shell_allow` prefixes for this case (default none)
//! - `why`: one line saying what the case tests
//!
//! Every refusal must also carry a message that says what to run instead.
//!
//! `SHELL_POLICY_FILTER=text` runs only the cases whose command or `why` contains it.

use std::path::Path;

/// The number of cases the suite holds; deleting one (or a file of them) fails the run.
const MIN_CASES: usize = 820;

use serde::Deserialize;
use slmcode_aci::boundary::Protected;
use slmcode_aci::path::Jail;
use slmcode_aci::shell::policy::programs::PROGRAMS;
use slmcode_aci::shell::policy::{check_traced, Policy, Rule, Trace};

/// The rule ids a refused case may expect.
fn rules() -> Vec<&'static str> {
    Rule::ALL.iter().map(|r| r.id()).collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    allowed: bool,
    rule: Option<String>,
    #[serde(default)]
    allow: Vec<String>,
    why: String,
}

fn load_cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shell_policy/cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The workspace every case is checked against.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for d in [
        "src",
        ".slmcode/scratch",
        ".git/hooks",
        "moved-git",
        "sub",
        "vendor/lib/.git",
    ] {
        std::fs::create_dir_all(root.join(d)).expect("mkdir");
    }
    let files = [
        ("existing.txt", "an existing file\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("README.md", "# readme\n"),
        (".slmcode/hooks.json", "{}\n"),
        (".slmcode/config.yaml", "shell_permission: allow\n"),
        (".git/config", "[core]\n\tbare = false\n"),
        ("moved-git/config", "[core]\n"),
        ("sub/.git", "gitdir: ../moved-git\n"),
        ("vendor/lib/.git/config", "[core]\n"),
    ];
    for (path, text) in files {
        std::fs::write(root.join(path), text).expect("write fixture");
    }
    std::os::unix::fs::symlink(".slmcode", root.join("ctl")).expect("symlink ctl -> .slmcode");
    std::os::unix::fs::symlink(".git", root.join("g")).expect("symlink g -> .git");
    std::fs::write(root.join("hardlinked.txt"), "notes\n").expect("write fixture");
    std::fs::hard_link(root.join("hardlinked.txt"), root.join("linked.txt")).expect("hard link");
    dir
}

/// Checks one case's definition; returns what is wrong with it, if anything.
fn validate(case: &Case) -> Result<(), String> {
    match (case.allowed, &case.rule) {
        (true, Some(rule)) => Err(format!("an allowed case names a rule ({rule})")),
        (false, None) => Err("a refused case needs a \"rule\"".to_string()),
        (false, Some(rule)) if !rules().contains(&rule.as_str()) => Err(format!(
            "unknown rule {rule:?}; known: {}",
            rules().join(", ")
        )),
        _ if case.why.trim().is_empty() => Err("the case needs a \"why\"".to_string()),
        _ => Ok(()),
    }
}

/// Runs one case; returns a description of what went wrong, if anything, and what the policy
/// consulted.
fn run_case(case: &Case, jail: &Jail, protected: &Protected) -> (Result<(), String>, Trace) {
    let policy = Policy {
        allow_prefixes: case.allow.clone(),
        ..Policy::default()
    };
    let (verdict, trace) = check_traced(&case.command, &policy, jail, protected);
    (judge_case(case, verdict), trace)
}

fn judge_case(
    case: &Case,
    verdict: Result<(), slmcode_aci::shell::policy::Refusal>,
) -> Result<(), String> {
    match (case.allowed, verdict) {
        (true, Ok(())) => Ok(()),
        (true, Err(refusal)) => Err(format!(
            "expected ALLOWED, refused by rule {:?}:\n    {}",
            refusal.rule.id(),
            refusal.message.replace('\n', "\n    ")
        )),
        (false, Ok(())) => Err(format!(
            "expected REFUSED by rule {:?}, but it was allowed",
            case.rule.as_deref().unwrap_or("?")
        )),
        (false, Err(refusal)) => {
            let expected = case.rule.as_deref().unwrap_or("?");
            let actual = refusal.rule.id();
            let mut problems = Vec::new();
            if actual != expected {
                problems.push(format!(
                    "refused by the wrong rule: expected {expected:?}, got {actual:?}"
                ));
            }
            let message = refusal.message.trim();
            let lower = message.to_lowercase();
            if message.is_empty() {
                problems.push("the refusal message is empty".to_string());
            } else if !(lower.contains("instead") || lower.contains("run")) {
                problems.push(
                    "the refusal message does not say what to run instead (no \"instead\"/\"run\")"
                        .to_string(),
                );
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{}\n    message: {}",
                    problems.join("; "),
                    message.replace('\n', "\n    ")
                ))
            }
        }
    }
}

#[test]
fn shell_policy_suite() {
    // SHELL_POLICY_FILTER=text runs only the cases whose command or why contains it.
    let filter = std::env::var("SHELL_POLICY_FILTER").ok();
    let all = load_cases();
    let total = all.len();
    let mut seen = std::collections::HashSet::new();
    for case in &all {
        if let Err(why) = validate(case) {
            panic!("bad case {:?}: {why}", case.command);
        }
        assert!(
            seen.insert((case.command.clone(), case.allow.clone())),
            "duplicate case {:?} (allow {:?})",
            case.command,
            case.allow
        );
    }
    let cases: Vec<&Case> = all
        .iter()
        .filter(|c| {
            filter
                .as_deref()
                .is_none_or(|f| c.command.contains(f) || c.why.contains(f))
        })
        .collect();

    let dir = workspace();
    let jail = Jail::open(dir.path()).expect("open the workspace");
    let protected = Protected::discover(&jail);
    let mut failures = Vec::new();
    let mut rows_seen = std::collections::HashSet::new();
    let mut denials_seen = std::collections::HashSet::new();
    for case in &cases {
        let (verdict, trace) = run_case(case, &jail, &protected);
        rows_seen.extend(trace.rows);
        denials_seen.extend(trace.denials);
        if let Err(why) = verdict {
            let allow = if case.allow.is_empty() {
                String::new()
            } else {
                format!(" [allow {:?}]", case.allow)
            };
            failures.push(format!(
                "{:?}{allow} ({}):\n  {why}",
                case.command, case.why
            ));
        }
    }
    // The policy only classifies; it must not have touched the workspace.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("existing.txt")).unwrap(),
        "an existing file\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".slmcode/hooks.json")).unwrap(),
        "{}\n"
    );

    eprintln!(
        "shell policy: {} cases, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "shell policy: {} cases, {} failed:\n\n{}",
        cases.len(),
        failures.len(),
        failures.join("\n\n")
    );
    if filter.is_none() {
        // Every row of the program table, and every option it denies, is exercised.
        let mut missing = Vec::new();
        for row in PROGRAMS {
            if !rows_seen.contains(row.names[0]) {
                missing.push(format!("row {:?}", row.names));
            }
            for d in row.deny {
                if !denials_seen.contains(&(row.names[0], d.opt)) {
                    missing.push(format!("denial {} {}", row.names[0], d.opt));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "the case suite never reaches:\n  {}",
            missing.join("\n  ")
        );
        // The suite only grows: every case a change removed was a rule someone relied on.
        // The floor is the count today; raise it with every case added.
        assert!(
            total >= MIN_CASES,
            "the suite must hold at least {MIN_CASES} cases (it held that many), has {total}: a removed case needs a reason and a lower floor here"
        );
    }
}
