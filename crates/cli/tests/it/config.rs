//! Config through the real binary: the project file, environment overrides, warnings, errors.

use crate::common::Project;

#[test]
fn project_config_and_env_override() {
    let p = Project::new();
    p.write(
        "a.txt",
        (1..=50).map(|i| format!("{i}\n")).collect::<String>(),
    );
    p.write(".slmcode/config.yaml", "read_window_lines: 10\n");
    assert!(p
        .ok("ws_read", r#"{"path":"a.txt"}"#)
        .contains("[showing lines 1–10 of 50"));
    let (text, _) = p.tool_env(
        "ws_read",
        r#"{"path":"a.txt"}"#,
        &[("SLMCODE_READ_WINDOW_LINES", "20")],
    );
    assert!(text.contains("[showing lines 1–20 of 50"), "{text}");
}

#[test]
fn unknown_key_is_a_warning_naming_the_known_ones() {
    let p = Project::new();
    p.write("a.txt", "x\n");
    p.write(
        ".slmcode/config.yaml",
        "max_tool_chars: 4000\nmax_tools_chars: 3\n",
    );
    let out = p.run_tool("ws_read", r#"{"path":"a.txt"}"#, &[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let known = slmcode_aci::Config::known_keys().join(", ");
    assert!(known.starts_with("max_tool_chars, read_window_lines, context_window"));
    assert!(
        stderr.contains(&format!(
            "unknown key `max_tools_chars` is ignored (known keys: {known})"
        )),
        "{stderr}"
    );
    // The warning never leaks into what the model sees.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "     1|x\n");
}

#[test]
fn bad_values_stop_with_a_clear_error() {
    let p = Project::new();
    p.write(".slmcode/config.yaml", "max_tool_chars: 12\n");
    let out = p.run_tool("ws_list", "{}", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".slmcode/config.yaml: max_tool_chars must be a whole number from 500"),
        "{stderr}"
    );

    let p = Project::new();
    p.write(".slmcode/config.yaml", "max_tool_chars: [\n");
    let out = p.run_tool("ws_list", "{}", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not valid YAML"));

    let p = Project::new();
    let out = p.run_tool("ws_list", "{}", &[("SLMCODE_CONTEXT_WINDOW", "big")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("SLMCODE_CONTEXT_WINDOW: context_window must be a whole number"));
}
