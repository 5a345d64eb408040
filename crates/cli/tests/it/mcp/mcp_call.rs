//! `mcp_call`: a second `slmcode mcp` reached over stdio and HTTP, one remote session across calls,
//! remote failures, and servers only the user may configure.

use super::*;

/// A user config directory whose config.yaml lists `servers`.
fn user_config(dir: &Path, yaml: &str) -> PathBuf {
    let cfg = dir.join("slmcode");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.yaml"), yaml).unwrap();
    dir.to_path_buf()
}

fn remote_yaml(remote_root: &Path) -> String {
    format!(
        "mcp_servers:\n  other:\n    command: {}\n    args: [mcp, --root, {}]\n    timeout_sec: 30\n",
        env!("CARGO_BIN_EXE_slmcode"),
        remote_root.display()
    )
}

#[test]
fn mcp_call_reaches_a_second_slmcode_over_stdio() {
    let local = Project::new();
    let remote = Project::new();
    remote.write("b.txt", "remote line\n");
    let lines: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    remote.write("long.txt", &lines);
    let home = tempfile::tempdir().unwrap();
    let xdg = user_config(home.path(), &remote_yaml(remote.root()));
    let xdg = xdg.to_str().unwrap();
    let env = [("XDG_CONFIG_HOME", xdg)];

    // The description names server.tool pairs, at most 12 of them.
    let out = bin()
        .args(["tools", "--json", "--specialist", "--root"])
        .arg(local.root())
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.last(), Some(&"mcp_call"));
    let desc = tools.last().unwrap()["description"].as_str().unwrap();
    assert!(desc.contains("other.ws_read, other.ws_write"), "{desc}");
    assert_eq!(desc.matches("other.").count(), 12, "{desc}");
    assert!(desc.contains("and 3 more"), "{desc}");

    let (t, err) = local.tool_env(
        "mcp_call",
        r#"{"server":"other","tool":"ws_read","arguments":{"path":"b.txt"}}"#,
        &env,
    );
    assert!(!err, "{t}");
    assert_eq!(t, "     1|remote line");
    // "server.tool" in one string works too.
    let (t, err) = local.tool_env(
        "mcp_call",
        r#"{"tool":"other.ws_read","arguments":{"path":"b.txt"}}"#,
        &env,
    );
    assert!(!err && t == "     1|remote line", "{t}");
    // The remote's refusal comes back as an error with its text.
    let (t, err) = local.tool_env(
        "mcp_call",
        r#"{"server":"other","tool":"ws_read","arguments":{"path":"../etc/passwd"}}"#,
        &env,
    );
    assert!(err);
    assert!(t.starts_with("other.ws_read returned an error:"), "{t}");
    // Unknown server and tool name what exists.
    let (t, err) = local.tool_env("mcp_call", r#"{"server":"nope","tool":"ws_read"}"#, &env);
    assert!(
        err && t.contains("no MCP server \"nope\". Servers: other"),
        "{t}"
    );
    let (t, err) = local.tool_env("mcp_call", r#"{"server":"other","tool":"read_file"}"#, &env);
    assert!(
        err && t.contains("has no tool \"read_file\". Its tools: ws_read, ws_write"),
        "{t}"
    );
    // A large remote result goes through the one cap of the calling side.
    let (t, err) = local.tool_env(
        "mcp_call",
        r#"{"server":"other","tool":"ws_read","arguments":{"path":"long.txt","limit":3000}}"#,
        &[("XDG_CONFIG_HOME", xdg), ("SLMCODE_MAX_TOOL_CHARS", "2000")],
    );
    assert!(!err, "{t}");
    assert!(t.chars().count() <= 2000, "{}", t.chars().count());
    assert!(t.contains("chars omitted") || t.contains("omitted"), "{t}");
}

/// `slmcode session --specialist` with the user config in `xdg`: one reply per call.
fn specialist_session(root: &Path, xdg: &Path, calls: &[Value]) -> Vec<Value> {
    let input: String = calls.iter().map(|v| v.to_string() + "\n").collect();
    let mut child = bin()
        .args(["session", "--specialist", "--root"])
        .arg(root)
        .env("XDG_CONFIG_HOME", xdg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn mcp_call_keeps_one_remote_session_across_calls() {
    let local = Project::new();
    let remote = Project::new();
    remote.write("b.py", "x = 1\n");
    let home = tempfile::tempdir().unwrap();
    let xdg = user_config(home.path(), &remote_yaml(remote.root()));
    let input = [
        json!({"tool": "mcp_call", "args": {"server": "other", "tool": "ws_edit", "arguments": {"path": "b.py", "old_str": "x = 1", "new_str": "x = 2"}}}),
        json!({"tool": "mcp_call", "args": {"server": "other", "tool": "ws_read", "arguments": {"path": "b.py"}}}),
        json!({"tool": "mcp_call", "args": {"server": "other", "tool": "ws_edit", "arguments": {"path": "b.py", "old_str": "x = 1", "new_str": "x = 2"}}}),
    ];
    let replies = specialist_session(local.root(), &xdg, &input);
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0]["is_error"], json!(true));
    assert!(replies[0]["text"]
        .as_str()
        .unwrap()
        .contains("has not been read"));
    assert_eq!(replies[2]["is_error"], json!(false), "{}", replies[2]);
    assert_eq!(
        std::fs::read_to_string(remote.path("b.py")).unwrap(),
        "x = 2\n"
    );
}

#[test]
fn mcp_call_reaches_a_server_over_http() {
    let local = Project::new();
    let remote = Project::new();
    remote.write("c.txt", "over http\n");
    let token = "a-long-enough-token-123";
    let server = HttpServer::start(remote.root(), &[("SLMCODE_MCP_TOKEN", token)]);
    let home = tempfile::tempdir().unwrap();
    let xdg = user_config(
        home.path(),
        &format!(
            "mcp_servers:\n  web:\n    url: {}\n    bearer_token_env: WEB_TOKEN\n",
            server.url
        ),
    );
    let xdg = xdg.to_str().unwrap();
    let (t, err) = local.tool_env(
        "mcp_call",
        r#"{"server":"web","tool":"ws_read","arguments":{"path":"c.txt"}}"#,
        &[("XDG_CONFIG_HOME", xdg), ("WEB_TOKEN", token)],
    );
    assert!(!err, "{t}");
    assert_eq!(t, "     1|over http");
    // Without the token the server is named as unavailable, with the reason.
    let (t, err) = local.tool_env(
        "mcp_call",
        r#"{"server":"web","tool":"ws_read","arguments":{"path":"c.txt"}}"#,
        &[("XDG_CONFIG_HOME", xdg)],
    );
    assert!(err);
    assert!(
        t.contains("\"web\" is not available") && t.contains("WEB_TOKEN"),
        "{t}"
    );
}

#[test]
fn a_project_cannot_give_itself_mcp_servers() {
    let local = Project::new();
    let remote = Project::new();
    remote.write("b.txt", "secret\n");
    local.write(".slmcode/config.yaml", remote_yaml(remote.root()));
    let out = local.run_tool(
        "mcp_call",
        r#"{"server":"other","tool":"ws_read","arguments":{"path":"b.txt"}}"#,
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("no MCP server \"other\""), "{stdout}");
    assert!(stdout.contains("none configured"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mcp_servers") && stderr.contains("user's config"),
        "{stderr}"
    );
}

#[test]
fn mcp_call_reports_remote_failures_and_recovers() {
    let local = Project::new();
    let home = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/slow_server.py");
    let xdg = user_config(
        home.path(),
        &format!(
            "mcp_servers:\n  slow:\n    command: {}\n    args: [{}]\n    timeout_sec: 2\n  \
             broken:\n    command: sh\n    args: [-c, 'echo cannot open the socket >&2; exit 3']\n  \
             missing:\n    command: /nonexistent/mcp-server\n",
            python().display(),
            script.display()
        ),
    );
    let xdg = xdg.to_str().unwrap();
    let input = [
        json!({"tool": "mcp_call", "args": {"server": "slow", "tool": "fail"}}),
        json!({"tool": "mcp_call", "args": {"server": "slow", "tool": "picture"}}),
        json!({"tool": "mcp_call", "args": {"server": "slow", "tool": "hang"}}),
        // The hung server was dropped; the next call starts it afresh.
        json!({"tool": "mcp_call", "args": {"server": "slow", "tool": "picture", "arguments": {}}}),
        json!({"tool": "mcp_call", "args": {"server": "slow", "tool": "die"}}),
        json!({"tool": "mcp_call", "args": {"server": "slow", "tool": "fail", "arguments": {}}}),
        json!({"tool": "mcp_call", "args": {"server": "broken", "tool": "x"}}),
        json!({"tool": "mcp_call", "args": {"server": "missing", "tool": "x"}}),
    ];
    let started = Instant::now();
    let r = specialist_session(local.root(), Path::new(xdg), &input);
    let t = |i: usize| r[i]["text"].as_str().unwrap().to_string();
    let e = |i: usize| r[i]["is_error"].as_bool().unwrap();
    assert_eq!(r.len(), 8);
    assert!(
        e(0) && t(0).starts_with("slow.fail returned an error:"),
        "{}",
        t(0)
    );
    assert!(!e(1), "{}", t(1));
    assert_eq!(
        t(1),
        "[image image/png, 8 bytes of base64 not shown]\na caption"
    );
    assert!(
        e(2) && t(2).contains("slow.hang did not answer within 2 s"),
        "{}",
        t(2)
    );
    assert!(!e(3) && t(3).ends_with("a caption"), "{}", t(3));
    assert!(e(4) && t(4).contains("dying now"), "{}", t(4));
    assert!(
        e(5) && t(5).starts_with("slow.fail returned an error:"),
        "{}",
        t(5)
    );
    assert!(
        e(6) && t(6).contains("\"broken\" is not available"),
        "{}",
        t(6)
    );
    assert!(t(6).contains("cannot open the socket"), "{}", t(6));
    assert!(
        e(7) && t(7).contains("cannot start `/nonexistent/mcp-server`"),
        "{}",
        t(7)
    );
    // Bounded by the timeouts, not by the hung tool's hour.
    assert!(started.elapsed() < Duration::from_secs(60));
}
