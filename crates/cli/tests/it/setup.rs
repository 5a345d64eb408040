//! Config layering, `slmcode config show`, `slmcode init` and `slmcode doctor`.

use crate::common::{bin, Project};
use crate::openai;
use crate::openai::FakeModel;
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
    // The platform: which sandbox and containment this build has, and what it lacks.
    match slmcode_aci::platform::Platform::current() {
        slmcode_aci::platform::Platform::Linux => {
            assert!(
                text.contains("ok    platform: linux x86_64: the Linux sandbox and containment\n")
                    || text.contains(
                        "ok    platform: linux aarch64: the Linux sandbox and containment\n"
                    ),
                "{text}"
            );
            assert!(!text.contains("missing on this platform"), "{text}");
        }
        _ => {
            assert!(
                text.contains("platform: linux")
                    && text.contains("the portable fallbacks (built with the `portable` feature)"),
                "{text}"
            );
            assert!(
                text.contains(
                    "warn  missing on this platform: a sandbox: commands may write anywhere"
                ),
                "{text}"
            );
        }
    }
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

/// `slmcode config trust` / `untrust` for the project in `p`, with the user's config in `xdg`.
/// `slmcode config ACTION`, which must exit 0; its stdout.
fn config_trust(p: &Project, xdg: &str, action: &str) -> String {
    let out = bin()
        .args(["config", action, "--root"])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The issue's case: the user's safety settings, a cloned project's config that loosens each.
const USER_SAFETY: &str = "shell_permission: deny\npermission_mode: review\nsandbox: auto\nfocus: [\"src/**\"]\nshell_timeout_max: 2\nshell_network: deny\n";
const PROJECT_LOOSE: &str = "shell_permission: allow\npermission_mode: auto\nsandbox: off\nfocus: []\nshell_timeout_max: 86400\nshell_network: allow\nread_before_edit: false\nmax_tool_chars: 9000\n";

#[test]
fn a_project_config_only_tightens_unless_the_user_approves_it() {
    let p = Project::new();
    let home = user_dir(USER_SAFETY);
    let xdg = home.path().to_str().unwrap();
    p.write(".slmcode/config.yaml", PROJECT_LOOSE);
    p.write("src/a.txt", "a\n");
    let rows = show(&p, xdg, &[]);
    let user_file = home
        .path()
        .join("slmcode/config.yaml")
        .display()
        .to_string();
    for (key, kept, asked) in [
        ("shell_permission", "deny", "allow"),
        ("permission_mode", "review", "auto"),
        ("sandbox", "auto", "off"),
        ("shell_timeout_max", "2", "86400"),
        ("shell_network", "deny", "allow"),
        ("read_before_edit", "true", "false"),
    ] {
        let r = row(&rows, key);
        assert_eq!(r["value"], kept, "{key}: {r}");
        assert_ne!(r["from"], ".slmcode/config.yaml", "{key}: {r}");
        assert_eq!(r["ignored"]["value"], asked, "{key}: {r}");
        assert_eq!(r["ignored"]["from"], ".slmcode/config.yaml", "{key}: {r}");
    }
    assert_eq!(row(&rows, "shell_permission")["from"], user_file.as_str());
    // A setting that is not about safety applies as before.
    assert_eq!(row(&rows, "max_tool_chars")["value"], "9000");
    // The user's focus holds (the project's empty one narrows nothing).
    assert_eq!(row(&rows, "focus")["value"], "[\"src/**\"]");
    // Each ignored value is a warning naming its key.
    let out = bin()
        .args([
            "tool",
            "ws_shell",
            r#"{"command":"touch ran.txt"}"#,
            "--root",
        ])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for key in [
        "shell_permission",
        "permission_mode",
        "sandbox",
        "shell_timeout_max",
        "shell_network",
        "read_before_edit",
    ] {
        assert!(stderr.contains(&format!("`{key}: ")), "{key}: {stderr}");
    }
    assert!(stderr.contains("slmcode config trust"), "{stderr}");
    // In effect: commands are refused, writes are staged, not written.
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("shell_permission: deny"));
    assert!(!p.path("ran.txt").exists());
    let out = bin()
        .args([
            "tool",
            "ws_write",
            r#"{"path":"src/b.txt","content":"b\n"}"#,
            "--root",
        ])
        .arg(p.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("review mode"));
    assert!(!p.path("src/b.txt").exists());

    // Approved, the exact file applies whole.
    let said = config_trust(&p, xdg, "trust");
    assert!(said.contains("approved .slmcode/config.yaml"), "{said}");
    let rows = show(&p, xdg, &[]);
    assert_eq!(row(&rows, "shell_permission")["value"], "allow");
    assert_eq!(row(&rows, "sandbox")["value"], "off");
    assert!(row(&rows, "shell_permission").get("ignored").is_none());
    // Any change withdraws the approval.
    p.write(".slmcode/config.yaml", format!("{PROJECT_LOOSE}# edited\n"));
    let rows = show(&p, xdg, &[]);
    assert_eq!(row(&rows, "shell_permission")["value"], "deny");
    // As does untrust.
    p.write(".slmcode/config.yaml", PROJECT_LOOSE);
    config_trust(&p, xdg, "trust");
    let said = config_trust(&p, xdg, "untrust");
    assert!(said.contains("is no longer approved"), "{said}");
    assert_eq!(row(&show(&p, xdg, &[]), "sandbox")["value"], "auto");
}

#[test]
fn a_project_config_may_tighten_without_approval() {
    let p = Project::new();
    let home = user_dir("shell_permission: allow\nfocus: [\"src/**\"]\nshell_network: allow\n");
    let xdg = home.path().to_str().unwrap();
    p.write(
        ".slmcode/config.yaml",
        "shell_permission: deny\nfocus: [\"src/app/**\"]\nshell_timeout_max: 5\nshell_network: loopback\n",
    );
    let rows = show(&p, xdg, &[]);
    assert_eq!(row(&rows, "shell_permission")["value"], "deny");
    assert_eq!(row(&rows, "shell_timeout_max")["value"], "5");
    assert_eq!(row(&rows, "shell_network")["value"], "loopback");
    assert!(row(&rows, "shell_permission").get("ignored").is_none());
    // The project's focus narrows the user's: a change must match both.
    assert_eq!(
        row(&rows, "focus")["value"],
        "[\"src/**\"] and [\"src/app/**\"]"
    );
    p.write("src/lib.rs", "\n");
    let text = |path: &str| {
        let out = bin()
            .args(["tool", "ws_write"])
            .arg(json!({"path": path, "content": "x\n"}).to_string())
            .arg("--root")
            .arg(p.root())
            .env("XDG_CONFIG_HOME", xdg)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(text("src/other.rs").contains("outside this task's focus"));
    assert!(text("src/app/main.rs").starts_with("created src/app/main.rs"));
    // The user's own environment is not a project: it may loosen.
    let rows = show(&p, xdg, &[("SLMCODE_SHELL_PERMISSION", "allow")]);
    assert_eq!(row(&rows, "shell_permission")["value"], "allow");
}
