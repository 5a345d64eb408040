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
/// and data directories (the state key) are pointed away from the developer's own.
fn stdio_server(root: &Path) -> Value {
    json!({"command": [
        "env",
        format!("XDG_CONFIG_HOME={}", std::env::temp_dir().join("slmcode-tests-no-user-config").display()),
        format!("XDG_DATA_HOME={}", crate::common::data_dir().display()),
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

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

mod cancel;
mod http;
mod mcp_call;
mod protocol;
mod stateless;
mod stdio;

use http::HttpServer;
