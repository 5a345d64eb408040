//! Exact protocol errors over both transports, in raw JSON-RPC (what no SDK would send): a
//! parse error is -32700 and an invalid request -32600, both with `"id": null`; a method MCP
//! defines with params that do not fit is -32602, never "method not found"; a cursor the
//! server never gave is -32602; no message, before or after the handshake, ends the server;
//! `serverInfo` names slmcode and its own version. Progress goes only to a client that asked.

use super::stdio::RawStdio;
use super::*;

/// The JSON-RPC message in an HTTP response body, whether sent as JSON or as one SSE event.
fn message_in(body: &str) -> Value {
    serde_json::from_str(body.trim()).unwrap_or_else(|_| {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC message in: {body}"))
    })
}

fn code_and_id(v: &Value) -> (Value, Value) {
    assert!(
        v.as_object().is_some_and(|o| o.contains_key("id")),
        "an error carries an id: {v}"
    );
    (v["error"]["code"].clone(), v["id"].clone())
}

#[test]
fn stdio_answers_each_fault_and_never_ends_before_the_handshake() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let mut s = RawStdio::start(p.root());
    s.send(b"garbage");
    assert_eq!(code_and_id(&s.recv()), (json!(-32700), Value::Null));
    s.send(br#"{"jsonrpc":"2.0","id":5}"#);
    assert_eq!(code_and_id(&s.recv()), (json!(-32600), Value::Null));
    // A handshake without params: invalid params, saying what initialize takes.
    s.send(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#);
    let r = s.recv();
    assert_eq!(code_and_id(&r), (json!(-32602), json!(1)));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize takes"),
        "{r}"
    );
    // A stray response and a notification before the handshake used to end the server.
    s.send(br#"{"jsonrpc":"2.0","id":77,"result":{}}"#);
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#);
    s.send(INITIALIZE.as_bytes());
    let r = s.recv();
    assert_eq!(r["id"], json!(1), "{r}");
    assert_eq!(r["result"]["serverInfo"]["name"], json!("slmcode"), "{r}");
    assert_eq!(
        r["result"]["serverInfo"]["version"],
        json!(env!("CARGO_PKG_VERSION")),
        "{r}"
    );
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Malformed tools/call params: -32602 with what is wrong, never -32601.
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ws_read","arguments":"text"}}"#);
    let r = s.recv();
    assert_eq!(code_and_id(&r), (json!(-32602), json!(2)));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invalid type: string"),
        "{r}"
    );
    s.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#);
    let r = s.recv();
    assert_eq!(code_and_id(&r), (json!(-32602), json!(3)));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `name`"),
        "{r}"
    );
    // A cursor this server never gave.
    s.send(br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"abc"}}"#);
    let r = s.recv();
    assert_eq!(code_and_id(&r), (json!(-32602), json!(4)));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown cursor"),
        "{r}"
    );
    // And it serves on.
    s.send(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ws_read","arguments":{"path":"a.txt"}}}"#);
    let r = s.recv();
    assert_eq!(
        r["result"]["content"][0]["text"],
        json!("     1|one"),
        "{r}"
    );
    drop(s.child.stdin.take());
    assert!(s.child.wait().unwrap().success());
}

#[test]
fn a_client_that_leaves_before_the_handshake_is_not_an_error() {
    let p = Project::new();
    let mut s = RawStdio::start(p.root());
    s.send(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    drop(s.child.stdin.take());
    assert!(s.child.wait().unwrap().success());
}

#[test]
fn http_answers_each_fault_with_its_status_and_error() {
    let p = Project::new();
    let http = HttpServer::start(p.root(), &[]);
    let (status, _, body) = http.exchange(&[], b"garbage");
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        code_and_id(&message_in(&body)),
        (json!(-32700), Value::Null)
    );
    let (status, _, body) = http.exchange(&[], br#"{"jsonrpc":"2.0","id":5}"#);
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        code_and_id(&message_in(&body)),
        (json!(-32600), Value::Null)
    );
    let (status, _, body) =
        http.exchange(&[], br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#);
    assert_eq!(status, 200, "{body}");
    assert_eq!(code_and_id(&message_in(&body)), (json!(-32602), json!(1)));
    // The handshake names slmcode and its version.
    let (status, _, body) = http.exchange(&[], INITIALIZE.as_bytes());
    assert_eq!(status, 200, "{body}");
    let r = message_in(&body);
    assert_eq!(
        r["result"]["serverInfo"]["version"],
        json!(env!("CARGO_PKG_VERSION")),
        "{r}"
    );
    // In a session: bad tools/call params and an unknown cursor.
    let id = http.open_session();
    let headers = http.session_headers(&id);
    let (_, _, body) = http.exchange(
        &headers,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ws_read","arguments":"text"}}"#,
    );
    assert_eq!(code_and_id(&message_in(&body)), (json!(-32602), json!(2)));
    let (_, _, body) = http.exchange(
        &headers,
        br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"abc"}}"#,
    );
    assert_eq!(code_and_id(&message_in(&body)), (json!(-32602), json!(3)));
}

#[test]
fn progress_goes_only_to_a_client_that_asked() {
    let p = Project::new();
    let mut s = RawStdio::start(p.root());
    s.send(INITIALIZE.as_bytes());
    s.recv();
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"build-1"},"name":"ws_shell","arguments":{"command":"echo compiling; sleep 1.4; echo linking"}}}"#);
    let mut notes = Vec::new();
    let result = loop {
        let m = s.recv();
        if m["method"] == json!("notifications/progress") {
            notes.push(m);
        } else {
            break m;
        }
    };
    assert_eq!(result["id"], json!(2), "{result}");
    assert!(!notes.is_empty(), "no progress before the result");
    assert_eq!(notes[0]["params"]["progressToken"], json!("build-1"));
    assert_eq!(
        notes[0]["params"]["message"],
        json!("running for 1 s: compiling")
    );
    // Without a token, the next message is the result itself.
    s.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ws_shell","arguments":{"command":"echo a; sleep 1.4"}}}"#);
    assert_eq!(s.recv()["id"], json!(3));
}
