//! `slmcode run` against a real HTTP server in the test that speaks the OpenAI protocol and
//! replays scripted model replies (streamed and whole). Each test checks the files on disk and
//! the final JSON, not only that the run ended.

use crate::common::{bin, Project};
use crate::openai::{FakeModel, Scripted};
use serde_json::{json, Value};

/// What one `slmcode run` did.
struct Ran {
    code: Option<i32>,
    answer: Value,
    stderr: String,
}

/// The `slmcode run` command for `task` against `model`, with a fresh learned state.
pub(crate) fn run_command(
    p: &Project,
    model: &FakeModel,
    task: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Command {
    let mut cmd = bin();
    // A fresh learned state each run, and no exploration: these tests script search/replace.
    // The state key stays, so a follow-up trusts what the run before it saved.
    for learned in ["evolve.json", "servers.json"] {
        let _ = std::fs::remove_file(crate::common::data_dir().join("slmcode").join(learned));
    }
    cmd.args([
        "run",
        task,
        "--json",
        "--no-explore",
        "--endpoint",
        &model.url,
        "--root",
    ])
    .arg(p.root())
    .args(args)
    .env("SLMCODE_RETRY_BASE_MS", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn ran(code: Option<i32>, stdout: &[u8], stderr: &[u8]) -> Ran {
    let stdout = String::from_utf8_lossy(stdout).to_string();
    Ran {
        code,
        answer: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(stderr).to_string(),
    }
}

fn run_with(
    p: &Project,
    model: &FakeModel,
    task: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Ran {
    let mut cmd = run_command(p, model, task, args, env);
    let out = cmd.output().expect("run slmcode");
    ran(out.status.code(), &out.stdout, &out.stderr)
}

/// `run_with`, waited on for at most `limit`: `Err` with the time waited when the run had not
/// ended by then (it is killed), so that a test of a bound fails instead of hanging.
fn run_within(
    p: &Project,
    model: &FakeModel,
    task: &str,
    args: &[&str],
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> Result<Ran, std::time::Duration> {
    use std::io::Read;
    let mut cmd = run_command(p, model, task, args, env);
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run slmcode");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let (out, err) = (stdout.join().unwrap(), stderr.join().unwrap());
            return Ok(ran(status.code(), &out, &err));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(started.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn run(p: &Project, model: &FakeModel, task: &str) -> Ran {
    run_with(p, model, task, &[], &[])
}

pub(crate) const APP: &str = "def total(xs):\n    return sum(xs)\n";
pub(crate) const APP_FIXED: &str =
    "def total(xs):\n    return sum(x for x in xs if x is not None)\n";

/// app.py holds the fixed code.
fn assert_fixed(p: &Project) {
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        APP_FIXED
    );
}

/// The model reads app.py.
pub(crate) fn read_app() -> Scripted {
    Scripted::call("ws_read", json!({"path": "app.py"}))
}

/// The model makes the edit that turns APP into APP_FIXED.
pub(crate) fn fix_app() -> Scripted {
    Scripted::call(
        "ws_edit",
        json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None)"}),
    )
}

/// The model documents total() in README.md ("# app" before).
pub(crate) fn document_readme() -> Scripted {
    Scripted::call(
        "ws_edit",
        json!({"path": "README.md", "old_str": "# app", "new_str": "# app\n\n`total` skips None."}),
    )
}

/// The text of the message the harness sent back after call number `n` (1-based), found in
/// the request that followed it.
fn result_sent(model: &FakeModel, n: usize) -> String {
    let req = &model.requests()[n];
    let last = req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool" || m["role"] == "user")
        .unwrap();
    last["content"].as_str().unwrap().to_string()
}

fn assert_done(r: &Ran, files: &[&str]) {
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_eq!(r.answer["files_changed"], json!(files), "{}", r.stderr);
}

mod budget;
mod context;
mod events;
mod lifecycle;
mod ollama;
mod plan;
mod probe;
mod repo_map;
mod resume;
mod runaway;
mod sampling;
mod server;
mod session;
mod slow;
mod streaming;
mod text_calls;
mod think_budget;
mod thinking;
mod tool_mode;
mod turns;
mod verify;
