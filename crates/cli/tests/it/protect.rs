//! `protect`: paths a task must be solved without changing. Every edit tool refuses them, a
//! command that changes them is undone, and a run puts back what changed outside the tools.
//! Checked by their effect: the protected bytes on disk are the bytes before.

use crate::common::{bin, Project};
use crate::openai::{FakeModel, Scripted};
use serde_json::{json, Value};

const TEST: &str = "from app import total\nassert total([1, None]) == 1\n";
const APP: &str = "def total(xs):\n    return sum(xs)\n";

fn lines(calls: &[Value]) -> String {
    calls
        .iter()
        .map(|c| format!("{c}\n"))
        .collect::<Vec<_>>()
        .concat()
}

fn call(tool: &str, args: Value) -> Value {
    json!({"tool": tool, "args": args})
}

#[test]
fn every_edit_tool_refuses_a_protected_path() {
    let p = Project::new();
    p.write("tests/test_app.py", TEST);
    p.write("app.py", APP);
    let out = p.session_env(
        &lines(&[
            call("ws_read", json!({"path": "tests/test_app.py"})),
            call("ws_edit", json!({"path": "tests/test_app.py", "old_str": "== 1", "new_str": "== 0"})),
            call("ws_write", json!({"path": "tests/test_app.py", "content": "pass\n"})),
            call("ws_write", json!({"path": "tests/test_new.py", "content": "pass\n"})),
            call("ws_patch", json!({"patch": "--- a/tests/test_app.py\n+++ b/tests/test_app.py\n@@ -2 +2 @@\n-assert total([1, None]) == 1\n+assert True\n"})),
            call("ws_mv", json!({"from": "tests/test_app.py", "to": "old_test.py"})),
            call("ws_mv", json!({"from": "app.py", "to": "tests/app.py"})),
            call("ws_delete", json!({"path": "tests", "recursive": true})),
            call("ws_delete", json!({"path": "tests/test_app.py"})),
            // Unprotected paths change as always.
            call("ws_read", json!({"path": "app.py"})),
            call("ws_edit", json!({"path": "app.py", "old_str": "sum(xs)", "new_str": "sum(x for x in xs if x is not None)"})),
        ]),
        &[("SLMCODE_PROTECT", "tests/**")],
    );
    assert_eq!(out.len(), 11);
    for (i, reply) in out.iter().enumerate().take(9).skip(1) {
        let text = reply["text"].as_str().unwrap();
        assert_eq!(reply["is_error"], true, "call {i}: {text}");
        assert!(
            text.contains(
                "is protected (\"tests/**\"): the task must be solved without changing it"
            ),
            "call {i}: {text}"
        );
    }
    assert!(out[7]["text"]
        .as_str()
        .unwrap()
        .contains("tests (it holds tests/test_app.py)"));
    assert_eq!(out[10]["is_error"], false, "{}", out[10]["text"]);
    assert_eq!(
        std::fs::read_to_string(p.path("tests/test_app.py")).unwrap(),
        TEST
    );
    assert!(!p.path("tests/test_new.py").exists() && !p.path("tests/app.py").exists());
    assert!(p.path("app.py").exists() && !p.path("old_test.py").exists());
}

#[test]
fn a_command_that_changes_protected_files_is_undone() {
    let p = Project::new();
    p.write("tests/test_app.py", TEST);
    p.write("tests/test_gone.py", "assert True\n");
    p.write(
        "tamper.py",
        "import os\nopen('tests/test_app.py', 'w').write('assert True\\n')\nopen('tests/test_new.py', 'w').write('x\\n')\nos.remove('tests/test_gone.py')\nopen('out.txt', 'w').write('built\\n')\n",
    );
    let out = p.session_env(
        &lines(&[call("ws_shell", json!({"command": "python3 tamper.py"}))]),
        &[
            ("SLMCODE_PROTECT", "tests/**"),
            ("SLMCODE_SHELL_ALLOW", "python3 tamper.py"),
        ],
    );
    let text = out[0]["text"].as_str().unwrap();
    assert!(
        text.contains("[the command changed protected files, so slmcode undid it: put back tests/test_app.py; put back tests/test_gone.py; removed tests/test_new.py, which is new. They must stay as they are: solve the task without changing them.]"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("tests/test_app.py")).unwrap(),
        TEST
    );
    assert_eq!(
        std::fs::read_to_string(p.path("tests/test_gone.py")).unwrap(),
        "assert True\n"
    );
    assert!(!p.path("tests/test_new.py").exists());
    // What is not protected stays as the command left it.
    assert_eq!(
        std::fs::read_to_string(p.path("out.txt")).unwrap(),
        "built\n"
    );
}

#[test]
fn a_run_puts_back_a_protected_file_changed_outside_the_tools() {
    let p = Project::new();
    p.write("tests/test_app.py", TEST);
    p.write("app.py", APP);
    let model = FakeModel::start(vec![Scripted::Touch(
        p.path("tests/test_app.py"),
        "assert True\n".into(),
        Box::new(Scripted::final_done("done")),
    )]);
    let out = bin()
        .args([
            "run",
            "fix total",
            "--json",
            "--no-explore",
            "--protect",
            "tests/**",
            "--endpoint",
            &model.url,
            "--root",
        ])
        .arg(p.root())
        .env("SLMCODE_RETRY_BASE_MS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(answer["status"], "done", "{stderr}");
    assert_eq!(
        answer["notes"],
        "protected files changed during the run and were put back: put back tests/test_app.py",
        "{answer}"
    );
    assert!(
        stderr.contains("slmcode: warning: protected files changed during the run"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("tests/test_app.py")).unwrap(),
        TEST
    );
}

#[test]
fn a_projects_config_protects_more_on_top_of_the_users() {
    let p = Project::new();
    p.write("tests/test_app.py", TEST);
    p.write("docs/a.md", "a\n");
    p.write(".slmcode/config.yaml", "protect: [\"docs/**\"]\n");
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join("slmcode")).unwrap();
    std::fs::write(
        user.path().join("slmcode/config.yaml"),
        "protect: [\"tests/**\"]\n",
    )
    .unwrap();
    let out = p.session_env(
        &lines(&[
            call("ws_write", json!({"path": "docs/a.md", "content": "b\n"})),
            call(
                "ws_write",
                json!({"path": "tests/test_app.py", "content": "b\n"}),
            ),
        ]),
        &[("XDG_CONFIG_HOME", user.path().to_str().unwrap())],
    );
    for reply in &out {
        assert_eq!(reply["is_error"], true, "{}", reply["text"]);
    }
    assert!(
        out[0]["text"]
            .as_str()
            .unwrap()
            .contains("\"tests/**\", \"docs/**\""),
        "{}",
        out[0]["text"]
    );
    assert_eq!(std::fs::read_to_string(p.path("docs/a.md")).unwrap(), "a\n");
    assert_eq!(
        std::fs::read_to_string(p.path("tests/test_app.py")).unwrap(),
        TEST
    );
}
