//! `slmcode mcp` over streamable HTTP: sessions, origins, body and header limits, capped sessions,
//! slow clients, tokens and binds.

use super::*;

/// `slmcode mcp --http 127.0.0.1:0`, killed on drop; the URL is read from its stderr.
pub(super) struct HttpServer {
    child: Child,
    pub(super) url: String,
}

impl HttpServer {
    pub(super) fn start(root: &Path, env: &[(&str, &str)]) -> HttpServer {
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
    pub(super) fn exchange(&self, headers: &[(&str, &str)], body: &[u8]) -> (u16, String, String) {
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
    pub(super) fn open_session(&self) -> String {
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

    pub(super) fn session_headers<'a>(&self, id: &'a str) -> [(&'static str, &'a str); 2] {
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

#[test]
fn http_serves_one_session_per_connection() {
    let p = Project::new();
    p.write("a.py", "def f():\n    return 1\n");
    let server = HttpServer::start(p.root(), &[]);
    let first = drive(json!({
        "server": {"url": server.url}, "mode": "legacy",
        "steps": [
            {"list_tools": true},
            {"call": "ws_read", "args": {"path": "a.py"}},
            {"call": "ws_edit", "args": {"path": "a.py", "old_str": "return 1", "new_str": "return 2"}}
        ]
    }));
    // The handshake revisions: a session per connection.
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
        "server": {"url": server.url}, "mode": "legacy",
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

/// One client's file must not end the other clients' sessions: while one session feeds the
/// server a file that aborts the parser (debug builds: with the guard off; release: the file
/// the guard refuses), another session, opened before and used after, is still served.
#[test]
fn http_one_clients_file_ends_no_session() {
    let p = Project::new();
    p.write("deep.yaml", crate::hostile::deep_yaml(300));
    p.write("a.py", "def f():\n    return 1\n");
    let unguarded = cfg!(debug_assertions);
    let env: &[(&str, &str)] = if unguarded {
        &[("SLMCODE_TEST_UNGUARDED_PARSE", "1")]
    } else {
        &[]
    };
    let server = HttpServer::start(p.root(), env);
    let url = server.url.clone();
    let other = std::thread::spawn(move || {
        drive(json!({
            "server": {"url": url}, "mode": "legacy",
            "steps": [
                {"call": "ws_read", "args": {"path": "a.py"}},
                {"sleep": 4},
                {"call": "ws_edit", "args": {"path": "a.py", "old_str": "return 1", "new_str": "return 2"}}
            ]
        }))
    });
    std::thread::sleep(Duration::from_millis(500));
    let out = drive(json!({
        "server": {"url": server.url}, "mode": "legacy",
        "steps": super::stdio::deep_yaml_steps()
    }));
    let why = if unguarded {
        "the parser crashed on it ("
    } else {
        "it is indented to 300 different depths"
    };
    super::stdio::assert_deep_yaml_answered(&out, why);
    let other = other.join().unwrap();
    assert!(!is_error(&other, 2), "{}", text(&other, 2));
    assert_eq!(
        std::fs::read_to_string(p.path("a.py")).unwrap(),
        "def f():\n    return 2\n"
    );
}
