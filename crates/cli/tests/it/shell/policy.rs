//! ws_shell's policy as a model meets it: allowed commands and their exit, refusals that name the
//! rule, timeouts, deny and headless ask.

use super::*;

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

/// Each refusal names its rule and what to run instead, and nothing of the command ran: the
/// project is byte for byte as before, though every command here would change it if run.
#[test]
fn refusals_name_the_rule_and_what_to_run_instead() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    p.write("sub/b.txt", "b\n");
    p.write(".slmcode/hooks.json", "{}\n");
    let before = common::snapshot(p.root());
    for (command, rule) in [
        ("echo $(touch made.txt)", "substitution"),
        ("touch bg.txt &", "background"),
        ("bash -c 'rm a.txt'", "nested-interpreter"),
        ("echo x > a.txt", "write-existing"),
        ("echo x >> .slmcode/hooks.json", "control-dir"),
        ("rm -rf a.txt", "tier"),
        ("rm -rf sub", "tier"),
        ("git -c core.pager='touch pager.txt' log", "dangerous-flag"),
        ("echo 'unclosed > a.txt", "parse"),
        ("ls && rm -rf a.txt", "tier"),
        ("echo x > first.txt && rm -rf a.txt", "tier"),
        (
            "echo x > first.txt; echo x >> .slmcode/hooks.json",
            "control-dir",
        ),
    ] {
        let (text, err) = shell(&p, command);
        assert!(err, "{command} should be refused: {text}");
        assert!(
            text.contains(&format!("[rule: {rule}]")),
            "{command}: {text}"
        );
        assert!(text.contains("instead"), "{command}: {text}");
        assert_eq!(
            common::snapshot(p.root()),
            before,
            "{command} was refused but changed the project: {text}"
        );
    }
    let (text, _) = shell(&p, "ls && echo $(id)");
    assert!(
        text.starts_with("ws_shell refused the part `echo $(id)`: "),
        "{text}"
    );
    // The same first part alone runs: the snapshots above would have seen it.
    let (text, err) = shell(&p, "echo x > first.txt");
    assert!(!err, "{text}");
    assert_eq!(std::fs::read(p.path("first.txt")).unwrap(), b"x\n");
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
    let before = common::snapshot(p.root());
    let (text, err) = shell(&p, "echo x > denied.txt");
    assert!(err && text.contains("shell_permission: deny"), "{text}");
    assert_eq!(common::snapshot(p.root()), before, "{text}");
    p.write(".slmcode/config.yaml", "shell_permission: ask\n");
    let before = common::snapshot(p.root());
    // The test has no terminal to ask on (setsid drops the controlling terminal).
    let out = std::process::Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_slmcode"))
        .args([
            "tool",
            "ws_shell",
            r#"{"command":"echo x > asked.txt"}"#,
            "--root",
        ])
        .arg(p.root())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("needs the user's approval"), "{text}");
    assert_eq!(common::snapshot(p.root()), before, "{text}");
}
