//! ws_shell through the real binary: the policy's refusals, the bounded run and its messages,
//! the permission switch, and the Landlock sandbox keeping `.slmcode/` intact.

mod common;
use common::Project;
use serde_json::json;

fn shell(p: &Project, command: &str) -> (String, bool) {
    p.tool("ws_shell", &json!({"command": command}).to_string())
}

#[test]
fn allowed_commands_run_and_report_their_exit() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let (text, err) = shell(&p, "cat a.txt && ls");
    assert!(!err, "{text}");
    assert!(text.starts_with("hello\na.txt\n[exit code 0]"), "{text}");
    let (text, err) = shell(&p, "true");
    assert!(!err);
    assert!(
        text.starts_with("(command succeeded with no output: true)"),
        "{text}"
    );
    let (text, _) = shell(&p, "grep nothing a.txt");
    assert!(text.starts_with("[exit code 1]"), "{text}");
    // Big output: the tail and the totals survive the result cap.
    let (text, _) = shell(&p, "seq 1 300000");
    assert!(
        text.contains("300000\n[exit code 0]"),
        "{}",
        &text[text.len() - 400..]
    );
    assert!(
        text.contains("[the command wrote 1988895 bytes; "),
        "{}",
        &text[text.len() - 400..]
    );
    assert!(
        text.contains("bytes from the middle were not kept"),
        "{text}"
    );
}

#[test]
fn refusals_name_the_rule_and_what_to_run_instead() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    for (command, rule) in [
        ("echo $(id)", "substitution"),
        ("sleep 1 &", "background"),
        ("bash -c ls", "nested-interpreter"),
        ("echo x > a.txt", "write-existing"),
        ("echo x >> .slmcode/hooks.json", "control-dir"),
        ("rm -rf a.txt", "tier"),
        ("git -c core.pager=sh log", "dangerous-flag"),
        ("echo 'unclosed", "parse"),
        ("ls && rm -rf a.txt", "tier"),
    ] {
        let (text, err) = shell(&p, command);
        assert!(err, "{command} should be refused: {text}");
        assert!(
            text.contains(&format!("[rule: {rule}]")),
            "{command}: {text}"
        );
        assert!(text.contains("instead"), "{command}: {text}");
    }
    let (text, _) = shell(&p, "ls && echo $(id)");
    assert!(
        text.starts_with("ws_shell refused the part `echo $(id)`: "),
        "{text}"
    );
}

#[test]
fn timeouts_are_capped_and_reported() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "shell_timeout_max: 1\n");
    let (text, _) = p.tool("ws_shell", r#"{"command":"sleep 30","timeout_sec":60}"#);
    assert!(
        text.contains("[timed out after 1 s — the command and everything it started were killed"),
        "{text}"
    );
    assert!(
        text.contains("[timeout_sec 60 was capped at shell_timeout_max = 1]"),
        "{text}"
    );
}

#[test]
fn permission_deny_and_headless_ask_refuse() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "shell_permission: deny\n");
    let (text, err) = shell(&p, "ls");
    assert!(err && text.contains("shell_permission: deny"), "{text}");
    p.write(".slmcode/config.yaml", "shell_permission: ask\n");
    // The test has no terminal to ask on (setsid drops the controlling terminal).
    let out = std::process::Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_slmcode"))
        .args(["tool", "ws_shell", r#"{"command":"ls"}"#, "--root"])
        .arg(p.root())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("needs the user's approval"), "{text}");
}

#[test]
fn the_sandbox_keeps_harness_state_intact() {
    let p = Project::new();
    p.write(".slmcode/hooks.json", "{}\n");
    p.mkdir(".slmcode/scratch");
    p.write("src/lib.rs", "\n");
    p.symlink(".slmcode", "ctl");
    p.write(
        "runner.py",
        "import os\nfor path in ['.slmcode/hooks.json', 'ctl/hooks.json', '.slmcode/new.json', 'src/out.txt', '.slmcode/scratch/ok.txt']:\n    try:\n        with open(path, 'a') as f:\n            f.write('pwned')\n        print('WROTE', path)\n    except OSError as e:\n        print('DENIED', path)\n",
    );
    // A "test runner" the user allowed that turns hostile.
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": "python3 runner.py"}).to_string(),
        &[("SLMCODE_SHELL_ALLOW", "python3 runner.py")],
    );
    assert!(!err, "{text}");
    if text.contains("[sandbox off") {
        eprintln!("Landlock unavailable here: {text}");
        return;
    }
    assert!(text.contains("DENIED .slmcode/hooks.json"), "{text}");
    assert!(text.contains("DENIED ctl/hooks.json"), "{text}");
    assert!(text.contains("DENIED .slmcode/new.json"), "{text}");
    assert!(text.contains("WROTE src/out.txt"), "{text}");
    assert!(text.contains("WROTE .slmcode/scratch/ok.txt"), "{text}");
    assert_eq!(
        std::fs::read_to_string(p.path(".slmcode/hooks.json")).unwrap(),
        "{}\n"
    );
    assert!(!p.path(".slmcode/new.json").exists());
}

#[test]
fn a_project_cannot_allow_itself_commands() {
    let p = Project::new();
    p.write("runner.py", "print('ran')\n");
    p.write(
        ".slmcode/config.yaml",
        "shell_allow: [\"python3 runner.py\"]\n",
    );
    let out = p.run_tool(
        "ws_shell",
        &json!({"command": "python3 runner.py"}).to_string(),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`shell_allow` is ignored here"), "{stderr}");
    // The user's own config may.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("slmcode")).unwrap();
    std::fs::write(
        home.path().join("slmcode/config.yaml"),
        "shell_allow: [\"python3 runner.py\"]\n",
    )
    .unwrap();
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": "python3 runner.py"}).to_string(),
        &[("XDG_CONFIG_HOME", home.path().to_str().unwrap())],
    );
    assert!(!err && text.contains("ran"), "{text}");
}
