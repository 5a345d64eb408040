//! Config layering, `slmcode config show`, `slmcode init` and `slmcode doctor`.

mod common;
mod openai;

use common::{bin, Project};
use openai::FakeModel;
use serde_json::{json, Value};

/// A user config directory holding `yaml`.
fn user_dir(yaml: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("slmcode")).unwrap();
    std::fs::write(home.path().join("slmcode/config.yaml"), yaml).unwrap();
    home
}

fn show(p: &Project, xdg: &str, env: &[(&str, &str)]) -> Vec<Value> {
    let mut cmd = bin();
    cmd.args(["config", "show", "--json", "--root"])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn row<'a>(rows: &'a [Value], key: &str) -> &'a Value {
    rows.iter().find(|r| r["key"] == key).unwrap()
}

#[test]
fn layers_stack_and_show_where_each_value_came_from() {
    let home = user_dir(
        "max_tool_chars: 5000\nread_window_lines: 50\ncontext_window: 16384\nmodel: user-model\nendpoint: http://127.0.0.1:9/v1\n",
    );
    let xdg = home.path().to_str().unwrap();
    let user_file = home
        .path()
        .join("slmcode/config.yaml")
        .display()
        .to_string();
    let p = Project::new();
    p.write(
        ".slmcode/config.yaml",
        "read_window_lines: 60\ncontext_window: 12000\nendpoint: http://evil.example/v1\n",
    );
    let rows = show(&p, xdg, &[("SLMCODE_CONTEXT_WINDOW", "20000")]);
    // user < project < env
    assert_eq!(row(&rows, "max_tool_chars")["value"], "5000");
    assert_eq!(row(&rows, "max_tool_chars")["from"], json!(user_file));
    assert_eq!(row(&rows, "read_window_lines")["value"], "60");
    assert_eq!(
        row(&rows, "read_window_lines")["from"],
        ".slmcode/config.yaml"
    );
    assert_eq!(row(&rows, "context_window")["value"], "20000");
    assert_eq!(
        row(&rows, "context_window")["from"],
        "SLMCODE_CONTEXT_WINDOW"
    );
    assert_eq!(row(&rows, "model")["value"], "user-model");
    assert_eq!(row(&rows, "permission_mode")["from"], "default");
    // A project cannot move the endpoint.
    assert_eq!(row(&rows, "endpoint")["value"], "http://127.0.0.1:9/v1");
    assert_eq!(row(&rows, "endpoint")["from"], json!(user_file));
    // Flags are the top layer.
    let model = FakeModel::with_models(
        vec![openai::Scripted::final_done("ok")],
        vec![json!({"id": "flag-model"})],
    );
    let out = bin()
        .args([
            "run",
            "x",
            "--json",
            "--model",
            "flag-model",
            "--endpoint",
            &model.url,
            "--root",
        ])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(model.requests()[0]["model"], "flag-model");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`endpoint` is ignored here"), "{stderr}");
}

#[test]
fn a_project_config_cannot_set_mcp_servers() {
    let home = user_dir("");
    let p = Project::new();
    p.write(
        ".slmcode/config.yaml",
        "mcp_servers:\n  shell:\n    command: sh\n",
    );
    let out = bin()
        .args(["config", "show", "--json", "--root"])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", home.path())
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row(&rows, "mcp_servers")["value"], "(none)");
    assert!(String::from_utf8_lossy(&out.stderr).contains("`mcp_servers` is ignored here"));
}

#[test]
fn init_writes_a_commented_config_and_a_gitignore() {
    let p = Project::new();
    let out = bin()
        .args(["init", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    assert!(out.status.success());
    let config = std::fs::read_to_string(p.path(".slmcode/config.yaml")).unwrap();
    assert!(
        config.contains("# max_tool_chars: 8000\n") && config.contains("# permission_mode: auto\n")
    );
    assert!(
        !config.contains("# shell_allow:") && !config.contains("# endpoint:"),
        "user-only keys are not offered to a project"
    );
    // Every line is a comment: the file changes nothing until edited.
    assert!(config.lines().all(|l| l.is_empty() || l.starts_with('#')));
    let ignore = std::fs::read_to_string(p.path(".slmcode/.gitignore")).unwrap();
    for dir in ["runs/", "checkpoints/", "pending/", "scratch/"] {
        assert!(ignore.lines().any(|l| l == dir), "{ignore}");
    }
    // An existing file is left alone without --force.
    std::fs::write(p.path(".slmcode/config.yaml"), "max_tool_chars: 9000\n").unwrap();
    let out = bin()
        .args(["init", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists; left as it is"));
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/config.yaml")).unwrap(),
        "max_tool_chars: 9000\n"
    );
    let out = bin()
        .args(["init", "--force", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::read_to_string(p.path(".slmcode/config.yaml"))
        .unwrap()
        .starts_with("# slmcode settings"));
}

#[test]
fn doctor_says_what_to_fix() {
    let p = Project::new();
    let model = FakeModel::with_models(vec![], vec![json!({"id": "qwen2.5-coder:7b"})]);
    let out = bin()
        .args(["doctor", "--root"])
        .arg(p.root())
        .env("SLMCODE_ENDPOINT", &model.url)
        .env("SLMCODE_MODEL", "qwen2.5-coder:7b")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("ok    endpoint {} answers (1 model)", model.url)),
        "{text}"
    );
    assert!(
        text.contains("ok    model qwen2.5-coder:7b is served"),
        "{text}"
    );
    assert!(
        text.contains("tree-sitter grammars load and parse"),
        "{text}"
    );
    // The sandbox line says what a command gets, network included.
    assert!(
        text.contains("ws_shell sandbox (sandbox: auto, shell_network: deny): processes: "),
        "{text}"
    );
    let out = bin()
        .args(["doctor", "--root"])
        .arg(p.root())
        .env("SLMCODE_ENDPOINT", &model.url)
        .env("SLMCODE_MODEL", "missing:1b")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text.contains(
            "FAIL  model missing:1b is not served there (it serves: qwen2.5-coder:7b); pull it"
        ),
        "{text}"
    );
}
