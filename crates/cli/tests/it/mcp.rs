//! `slmcode mcp` driven by real MCP clients: the official Python SDK over stdio and streamable
//! HTTP, raw JSON-RPC for malformed input, and `mcp_call` reaching a second `slmcode mcp`.
//!
//! The Python SDK lives in a virtual environment that `scripts/test` creates
//! (`target/test-venv`); `SLMCODE_TEST_PYTHON` points at another interpreter that has it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bin, Project};
use serde_json::{json, Value};

/// The Python interpreter with the `mcp` SDK.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("SLMCODE_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv/bin/python");
    assert!(
        venv.exists(),
        "the MCP client tests need the Python MCP SDK: run ./scripts/test (it creates {}), \
         or set SLMCODE_TEST_PYTHON to a python that has `mcp` installed",
        venv.display()
    );
    venv
}

/// Runs the Python SDK client on `plan` and returns what it saw.
fn drive(plan: Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python MCP client");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(plan.to_string().as_bytes())
        .expect("write plan");
    let out = child.wait_with_output().expect("client output");
    assert!(
        out.status.success(),
        "the Python MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("client prints JSON")
}

/// The stdio server command for a project, as the Python client starts it. The user config
/// directory is pointed away from the developer's own.
fn stdio_server(root: &Path) -> Value {
    json!({"command": [
        "env",
        format!("XDG_CONFIG_HOME={}", std::env::temp_dir().join("slmcode-tests-no-user-config").display()),
        env!("CARGO_BIN_EXE_slmcode"), "mcp", "--root", root.to_str().unwrap()
    ]})
}

fn step(out: &Value, i: usize) -> &Value {
    &out["steps"][i]
}

fn text(out: &Value, i: usize) -> &str {
    step(out, i)["text"].as_str().unwrap_or_else(|| {
        panic!("step {i} has no text: {}", step(out, i));
    })
}

fn is_error(out: &Value, i: usize) -> bool {
    step(out, i)["is_error"]
        .as_bool()
        .unwrap_or_else(|| panic!("step {i} is not a tool result: {}", step(out, i)))
}

/// `slmcode tools --json`: the registry as every caller sees it.
fn registry_json() -> Vec<Value> {
    let out = bin().args(["tools", "--json"]).output().expect("tools");
    serde_json::from_slice::<Value>(&out.stdout)
        .expect("json")
        .as_array()
        .cloned()
        .unwrap()
}

#[test]
fn stdio_lists_the_registry_with_honest_annotations() {
    let p = Project::new();
    let out = drive(json!({"server": stdio_server(p.root()), "steps": [{"list_tools": true}]}));
    let tools = step(&out, 0)["tools"].as_array().unwrap();
    let registry = registry_json();
    assert_eq!(tools.len(), registry.len());
    for (t, r) in tools.iter().zip(&registry) {
        assert_eq!(t["name"], r["name"]);
        assert_eq!(t["description"], r["description"], "{}", t["name"]);
        assert_eq!(t["schema"], r["parameters"], "{}", t["name"]);
        let a = &t["annotations"];
        assert_eq!(a["readOnlyHint"], r["read_only"], "{}", t["name"]);
        assert_eq!(a["destructiveHint"], r["destructive"], "{}", t["name"]);
        assert_eq!(a["idempotentHint"], r["idempotent"], "{}", t["name"]);
        assert_eq!(a["openWorldHint"], r["open_world"], "{}", t["name"]);
    }
    let hint = |name: &str, key: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["annotations"][key].clone()
    };
    for name in [
        "ws_read",
        "ws_list",
        "ws_glob",
        "ws_grep",
        "git_status",
        "git_diff",
        "ws_todo",
    ] {
        assert_eq!(hint(name, "readOnlyHint"), json!(true), "{name}");
    }
    for name in ["ws_delete", "ws_mv", "ws_write", "ws_shell"] {
        assert_eq!(hint(name, "destructiveHint"), json!(true), "{name}");
        assert_eq!(hint(name, "readOnlyHint"), json!(false), "{name}");
    }
}

#[test]
fn stdio_reads_edits_and_refuses_like_any_caller() {
    let p = Project::new();
    p.write(
        "app.py",
        "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
    );
    p.write("lib.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let out = drive(json!({
        "server": stdio_server(p.root()),
        "steps": [
            // The session's read-before-edit rule.
            {"call": "ws_edit", "args": {"path": "app.py", "old_str": "s = 0", "new_str": "s = 1"}},
            {"call": "ws_read", "args": {"path": "app.py"}},
            // A drifted edit (the model dropped the indentation) lands and says how.
            {"call": "ws_edit", "args": {"path": "app.py", "old_str": "for x in xs:\n    s += x", "new_str": "for x in xs:\n    s += x * 2"}},
            // A refusal: the syntax check reverts a breaking edit, the file stays as it was.
            {"call": "ws_read", "args": {"path": "lib.rs"}},
            {"call": "ws_edit", "args": {"path": "lib.rs", "old_str": "    println!(\"hi\");\n}", "new_str": "    println!(\"hi\";\n}"}},
            // Wrong argument type: a tool error with the example, not a crash.
            {"call": "ws_read", "args": {"path": "app.py", "offset": "first"}},
            // An unknown tool: a protocol error naming the tools.
            {"call": "ws_frobnicate", "args": {}},
            // The checklist belongs to the connection.
            {"call": "ws_todo", "args": {"items": ["[x] read", "[ ] test"]}},
            {"call": "ws_list", "args": {}}
        ]
    }));
    assert!(is_error(&out, 0));
    assert!(
        text(&out, 0).contains("has not been read in this session"),
        "{}",
        text(&out, 0)
    );
    assert!(!is_error(&out, 1));
    assert!(text(&out, 1).contains("     2|    s = 0"));
    assert!(!is_error(&out, 2), "{}", text(&out, 2));
    assert!(text(&out, 2).contains("indentation"), "{}", text(&out, 2));
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        "def total(xs):\n    s = 0\n    for x in xs:\n        s += x * 2\n    return s\n"
    );
    assert!(is_error(&out, 4));
    assert!(
        text(&out, 4).starts_with("EDIT REVERTED"),
        "{}",
        text(&out, 4)
    );
    assert_eq!(
        std::fs::read_to_string(p.path("lib.rs")).unwrap(),
        "fn main() {\n    println!(\"hi\");\n}\n"
    );
    assert!(is_error(&out, 5));
    assert!(
        text(&out, 5).contains("\"offset\" must be a whole number"),
        "{}",
        text(&out, 5)
    );
    assert_eq!(step(&out, 6)["protocol_error"], json!(-32602));
    assert!(step(&out, 6)["message"]
        .as_str()
        .unwrap()
        .contains("Available tools: ws_read"));
    assert!(text(&out, 7).contains("[x] read"));
    assert!(!is_error(&out, 8));
    // What each call did, as data beside the text, through a real client: the refusal's
    // class, the rung the drifted edit landed on, the revert; nothing for a plain read.
    assert_eq!(
        step(&out, 0)["structured"],
        json!({"outcome": "refused", "class": "not_read"})
    );
    assert_eq!(step(&out, 1)["structured"], Value::Null);
    assert_eq!(
        step(&out, 2)["structured"],
        json!({"outcome": "edited", "rung": "indentation", "gutter": false, "hunks": [], "applied": "written"})
    );
    assert_eq!(
        step(&out, 4)["structured"],
        json!({"outcome": "refused", "class": "reverted"})
    );
    assert_eq!(
        step(&out, 5)["structured"],
        json!({"outcome": "refused", "class": "args"})
    );
    // The same text a model gets from the CLI.
    let cli = p.ok("ws_read", "{\"path\":\"app.py\"}");
    let again = drive(
        json!({"server": stdio_server(p.root()), "steps": [{"call": "ws_read", "args": {"path": "app.py"}}]}),
    );
    assert_eq!(text(&again, 0), cli);
}

#[test]
fn stdio_serves_the_handshake_era_too() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let out = drive(json!({
        "server": stdio_server(p.root()), "mode": "legacy",
        "steps": [{"call": "ws_read", "args": {"path": "a.txt"}}]
    }));
    assert_eq!(out["protocol_version"], json!("2025-11-25"));
    assert_eq!(text(&out, 0), "     1|one");
}

/// `slmcode mcp --http 127.0.0.1:0`, killed on drop; the URL is read from its stderr.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(root: &Path, env: &[(&str, &str)]) -> HttpServer {
        HttpServer::start_with(root, env, &[])
    }

    fn start_with(root: &Path, env: &[(&str, &str)], args: &[&str]) -> HttpServer {
        let mut cmd = bin();
        cmd.args(["mcp", "--http", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start slmcode mcp --http");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let first = lines.next().expect("a line").expect("utf-8");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in: {first}"))
            .to_string();
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        HttpServer { child, url }
    }

    fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string()
    }

    /// One raw HTTP/1.1 POST; returns the status code, the head and the body.
    fn exchange(&self, headers: &[(&str, &str)], body: &[u8]) -> (u16, String, String) {
        let mut s = TcpStream::connect(self.addr()).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.addr(),
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).expect("send head");
        s.write_all(body).expect("send body");
        let mut response = Vec::new();
        let _ = s.read_to_end(&mut response);
        let response = String::from_utf8_lossy(&response).into_owned();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line in: {head}"));
        (status, head.to_string(), body.to_string())
    }

    /// `initialize` then `notifications/initialized`; the new session's id.
    fn open_session(&self) -> String {
        let (status, head, body) = self.exchange(&[], INITIALIZE.as_bytes());
        assert_eq!(status, 200, "{head}\n{body}");
        let id = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no session id in: {head}"));
        let (status, _, body) = self.exchange(
            &self.session_headers(&id),
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(status, 202, "{body}");
        id
    }

    fn session_headers<'a>(&self, id: &'a str) -> [(&'static str, &'a str); 2] {
        [
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-06-18"),
        ]
    }

    /// `tools/list` in a session: its status (404 once the session is gone).
    fn list_tools(&self, id: &str) -> u16 {
        self.exchange(
            &self.session_headers(id),
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        )
        .0
    }

    /// The server process's open file descriptors (Linux).
    fn open_fds(&self) -> Option<usize> {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .ok()
            .map(|d| d.count())
    }

    /// One raw HTTP/1.1 POST; returns the status code.
    fn post(&self, headers: &[(&str, &str)], body: &[u8]) -> u16 {
        let mut s = TcpStream::connect(self.addr()).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.addr(),
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).expect("send head");
        // A server may answer (413) before reading the whole body; a failed write is fine then.
        let _ = s.write_all(body);
        let mut response = Vec::new();
        let _ = s.read_to_end(&mut response);
        let head = String::from_utf8_lossy(&response);
        head.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line in: {head}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[test]
fn http_serves_one_session_per_connection() {
    let p = Project::new();
    p.write("a.py", "def f():\n    return 1\n");
    let server = HttpServer::start(p.root(), &[]);
    let first = drive(json!({
        "server": {"url": server.url},
        "steps": [
            {"list_tools": true},
            {"call": "ws_read", "args": {"path": "a.py"}},
            {"call": "ws_edit", "args": {"path": "a.py", "old_str": "return 1", "new_str": "return 2"}}
        ]
    }));
    // A client that probes for the session-less 2026 era falls back to the handshake.
    assert_eq!(first["protocol_version"], json!("2025-11-25"));
    assert_eq!(
        step(&first, 0)["tools"].as_array().unwrap().len(),
        registry_json().len()
    );
    assert!(!is_error(&first, 2), "{}", text(&first, 2));
    assert_eq!(
        std::fs::read_to_string(p.path("a.py")).unwrap(),
        "def f():\n    return 2\n"
    );
    // A second connection has not read the file: its own session refuses the edit.
    let second = drive(json!({
        "server": {"url": server.url},
        "steps": [{"call": "ws_edit", "args": {"path": "a.py", "old_str": "return 2", "new_str": "return 3"}}]
    }));
    assert!(is_error(&second, 0));
    assert!(text(&second, 0).contains("has not been read in this session"));
    assert_eq!(
        std::fs::read_to_string(p.path("a.py")).unwrap(),
        "def f():\n    return 2\n"
    );
}

#[test]
fn http_refuses_foreign_origins_and_huge_bodies_and_keeps_serving() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let server = HttpServer::start(p.root(), &[]);
    assert_eq!(
        server.post(&[("Origin", "http://evil.example")], INITIALIZE.as_bytes()),
        403
    );
    assert_eq!(
        server.post(&[("Origin", "null")], INITIALIZE.as_bytes()),
        403
    );
    assert_eq!(
        server.post(
            &[("Origin", "http://localhost:3000")],
            INITIALIZE.as_bytes()
        ),
        200
    );
    let mut huge = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ws_write","arguments":{"path":"x","content":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 20 * 1024 * 1024));
    huge.extend(br#""}}}"#);
    assert_eq!(server.post(&[], &huge), 413);
    // A body that is not JSON-RPC: a client error (rmcp answers 415), never a hang.
    for body in [&b"{not json"[..], b"[1, 2]", b"\xff\xfe"] {
        let status = server.post(&[], body);
        assert!((400..500).contains(&status), "{status}");
    }
    assert!(!p.path("x").exists());
    let out = drive(
        json!({"server": {"url": server.url}, "steps": [{"call": "ws_read", "args": {"path": "a.txt"}}]}),
    );
    assert_eq!(text(&out, 0), "     1|one");
}

#[test]
fn http_sessions_are_capped_and_the_longest_idle_goes_first() {
    let p = Project::new();
    let server = HttpServer::start_with(p.root(), &[], &["--max-sessions", "4"]);
    let first: Vec<String> = (0..4).map(|_| server.open_session()).collect();
    let fds = server.open_fds();
    // The first session is used again, so the second is now the one idle the longest.
    assert_eq!(server.list_tools(&first[0]), 200);
    let fifth = server.open_session();
    assert_eq!(
        server.list_tools(&first[1]),
        404,
        "the longest idle is closed"
    );
    for id in [&first[0], &first[2], &first[3], &fifth] {
        assert_eq!(server.list_tools(id), 200);
    }
    // A flood of initializes keeps the table (and the descriptors behind it) at the cap,
    // and the newest clients are served.
    let flood: Vec<String> = (0..300).map(|_| server.open_session()).collect();
    if let (Some(before), Some(after)) = (fds, server.open_fds()) {
        assert!(
            after <= before + 16,
            "{before} descriptors with 4 sessions, {after} after 300 more initializes"
        );
    }
    for id in &flood[flood.len() - 4..] {
        assert_eq!(server.list_tools(id), 200);
    }
    assert_eq!(server.list_tools(&flood[0]), 404);
    assert_eq!(server.list_tools(&fifth), 404);
}

#[test]
fn http_refuses_a_new_session_while_every_session_is_running_a_call() {
    let p = Project::new();
    let server = std::sync::Arc::new(HttpServer::start_with(
        p.root(),
        &[],
        &["--max-sessions", "2"],
    ));
    let busy: Vec<_> = (0..2)
        .map(|i| {
            let id = server.open_session();
            let server = server.clone();
            std::thread::spawn(move || {
                let call = format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"ws_shell","arguments":{{"command":"sleep 3"}}}}}}"#
                );
                let (status, _, body) = server.exchange(&server.session_headers(&id), call.as_bytes());
                assert_eq!(status, 200, "{body}");
                id
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1200));
    let (status, head, body) = server.exchange(&[], INITIALIZE.as_bytes());
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(head.to_ascii_lowercase().contains("retry-after"), "{head}");
    let error: Value = serde_json::from_str(&body).expect("a JSON-RPC error");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("maximum of 2 MCP sessions") && message.contains("--max-sessions"),
        "{message}"
    );
    assert_eq!(error["id"], json!(1));
    let ids: Vec<String> = busy.into_iter().map(|t| t.join().unwrap()).collect();
    // Both calls kept their sessions; once they are done a new client gets in.
    let third = server.open_session();
    assert_eq!(server.list_tools(&third), 200);
    assert_eq!(
        ids.iter().filter(|id| server.list_tools(id) == 200).count(),
        1,
        "exactly one of the idle sessions made room"
    );
}

/// Whether the server closed `s` (end of stream or reset) within `within`.
fn closed_by_server(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn http_drops_clients_that_never_finish_a_request() {
    let p = Project::new();
    let server = HttpServer::start_with(p.root(), &[], &["--read-timeout", "1"]);
    let started = Instant::now();
    // Slowloris: connections that send part of a head, or nothing at all.
    let mut slow: Vec<TcpStream> = (0..200)
        .map(|i| {
            let mut s = TcpStream::connect(server.addr()).expect("connect");
            if i % 2 == 0 {
                s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    .expect("send part of a head");
            }
            s
        })
        .collect();
    // A body that never completes is answered 408.
    let mut dribble = TcpStream::connect(server.addr()).expect("connect");
    dribble
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .expect("send a head and part of a body");
    // Honest clients are served meanwhile.
    assert_eq!(server.post(&[], INITIALIZE.as_bytes()), 200);
    for s in slow.iter_mut().step_by(17) {
        let _ = s.write_all(b"a");
    }
    let all_closed = slow
        .iter_mut()
        .all(|s| closed_by_server(s, Duration::from_secs(10)));
    assert!(all_closed, "a slow connection is still open");
    let mut answer = String::new();
    dribble
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = dribble.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "slow clients were dropped only after {:?}",
        started.elapsed()
    );
    assert_eq!(server.post(&[], INITIALIZE.as_bytes()), 200);
}

#[test]
fn http_with_a_token_needs_it() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let token = "0123456789abcdef-token";
    let server = HttpServer::start(p.root(), &[("SLMCODE_MCP_TOKEN", token)]);
    assert_eq!(server.post(&[], INITIALIZE.as_bytes()), 401);
    assert_eq!(
        server.post(&[("Authorization", "Bearer wrong")], INITIALIZE.as_bytes()),
        401
    );
    let out = drive(json!({
        "server": {"url": server.url, "headers": {"Authorization": format!("Bearer {token}")}},
        "steps": [{"call": "ws_read", "args": {"path": "a.txt"}}]
    }));
    assert_eq!(text(&out, 0), "     1|one");
}

#[test]
fn a_non_loopback_bind_needs_a_flag_and_a_token() {
    let p = Project::new();
    let out = bin()
        .args(["mcp", "--http", "0.0.0.0:0", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-remote"),
        "{err}"
    );
    let out = bin()
        .args(["mcp", "--http", "0.0.0.0:0", "--allow-remote", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bearer token of at least 16"), "{err}");
}

/// Raw JSON-RPC over stdio: what an SDK would never send.
struct RawStdio {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
}

impl RawStdio {
    fn start(root: &Path) -> RawStdio {
        let mut child = bin()
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        RawStdio { child, out }
    }

    fn send(&mut self, line: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
    }
}

#[test]
fn stdio_survives_malformed_input() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let mut s = RawStdio::start(p.root());
    s.send(INITIALIZE.as_bytes());
    assert_eq!(s.recv()["id"], json!(1));
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Not JSON at all: ignored, as every MCP SDK does (answering could start an error storm).
    s.send(b"{this is not json");
    s.send(b"\xff\xfe binary");
    // JSON that is not a JSON-RPC message: Invalid Request.
    s.send(b"[1, 2, 3]");
    assert_eq!(s.recv()["error"]["code"], json!(-32600));
    // An unknown method.
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/frobnicate"}"#);
    let r = s.recv();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(2), json!(-32601))
    );
    // Arguments of the wrong JSON type for the protocol: a protocol error.
    s.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ws_read","arguments":"a.txt"}}"#);
    let r = s.recv();
    assert_eq!(r["id"], json!(3));
    assert!(r["error"]["code"].is_i64(), "{r}");
    // A request over the 16 MiB limit is answered with an error and never buffered whole.
    let mut huge = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"ws_write","arguments":{"path":"big.txt","content":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 17 * 1024 * 1024));
    huge.extend(br#""}},"id":4}"#);
    s.send(&huge);
    let r = s.recv();
    assert_eq!(r["id"], json!(4), "{r}");
    assert_eq!(r["error"]["code"], json!(-32600), "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("16 MiB"),
        "{r}"
    );
    assert!(!p.path("big.txt").exists());
    // And it still serves.
    s.send(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ws_read","arguments":{"path":"a.txt"}}}"#);
    let r = s.recv();
    assert_eq!(r["id"], json!(5));
    assert_eq!(r["result"]["content"][0]["text"], json!("     1|one"));
    assert_eq!(r["result"]["isError"], json!(false));
    drop(s.child.stdin.take());
    let started = Instant::now();
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

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
    assert!(desc.contains("and 1 more"), "{desc}");

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
