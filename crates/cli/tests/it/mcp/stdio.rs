//! `slmcode mcp` over stdio: the registry listed and called through the official client, the
//! handshake era, and malformed input answered without ending the server.

use super::*;

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
        "ws_outline",
        "ws_symbols",
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

/// Raw JSON-RPC over stdio: what an SDK would never send.
pub(super) struct RawStdio {
    pub(super) child: Child,
    out: BufReader<std::process::ChildStdout>,
}

impl RawStdio {
    pub(super) fn start(root: &Path) -> RawStdio {
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

    pub(super) fn send(&mut self, line: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(super) fn recv(&mut self) -> Value {
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
    // Not JSON at all: a parse error, id null, as JSON-RPC says.
    s.send(b"{this is not json");
    s.send(b"\xff\xfe binary");
    for _ in 0..2 {
        let r = s.recv();
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32700)),
            "{r}"
        );
    }
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
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
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

/// The calls every parsing tool makes on `deep.yaml` (nested 300 levels: the YAML scanner's
/// buffer overflows), then a last unrelated one; shared by both transports.
pub(super) fn deep_yaml_steps() -> Value {
    json!([
        {"call": "ws_read", "args": {"path": "deep.yaml", "limit": 3}},
        // The read's parse runs in the background: give it time to finish (or crash).
        {"sleep": 0.5},
        {"call": "ws_outline", "args": {"path": "deep.yaml"}},
        {"call": "ws_write", "args": {"path": "copy.yaml", "content": crate::hostile::deep_yaml(300)}},
        {"call": "ws_edit", "args": {"path": "deep.yaml", "old_str": "k299: v", "new_str": "k299: w"}},
        {"call": "ws_list", "args": {}}
    ])
}

/// What those calls must have got: every one answered, the outline refused with the reason,
/// the writes made with a note, and the last call served.
pub(super) fn assert_deep_yaml_answered(out: &Value, why: &str) {
    for i in [0, 2, 3, 4, 5] {
        assert!(
            step(out, i).get("protocol_error").is_none() && step(out, i).get("text").is_some(),
            "step {i} was not answered: {}",
            step(out, i)
        );
    }
    assert!(is_error(out, 2));
    assert!(
        text(out, 2).starts_with(&format!("ws_outline cannot outline deep.yaml: {why}")),
        "{}",
        text(out, 2)
    );
    for i in [3, 4] {
        assert!(!is_error(out, i), "{}", text(out, i));
        assert!(
            text(out, i).contains("[syntax check skipped for "),
            "{}",
            text(out, i)
        );
    }
    assert!(text(out, 5).contains("copy.yaml"), "{}", text(out, 5));
}

#[test]
fn stdio_survives_a_file_the_parser_cannot_take() {
    let p = Project::new();
    p.write("deep.yaml", crate::hostile::deep_yaml(300));
    let out = drive(json!({"server": stdio_server(p.root()), "steps": deep_yaml_steps()}));
    assert_deep_yaml_answered(&out, "it is indented to 300 different depths");
    assert!(std::fs::read_to_string(p.path("deep.yaml"))
        .unwrap()
        .ends_with("k299: w\n"));
}

#[test]
fn stdio_survives_a_parser_that_aborts() {
    if !cfg!(debug_assertions) {
        crate::common::skip(
            "the MCP server's containment of a real parser abort",
            "a release build has no switch to turn the guard off",
        );
        return;
    }
    let p = Project::new();
    p.write("deep.yaml", crate::hostile::deep_yaml(300));
    let mut server = stdio_server(p.root());
    server["command"]
        .as_array_mut()
        .unwrap()
        .insert(1, json!("SLMCODE_TEST_UNGUARDED_PARSE=1"));
    let out = drive(json!({"server": server, "steps": deep_yaml_steps()}));
    assert_deep_yaml_answered(&out, "the parser crashed on it (");
}
