//! `slmcode mcp` against the reference Node server `@modelcontextprotocol/server-filesystem`,
//! both over stdio from one Rust client (rmcp), in one run:
//!
//! - start-up: spawn the server, shake hands, and get the first read back (median of runs);
//! - round trip: 2,000 sequential reads of the same file on one connection (p50 and p99).
//!
//! Run it with `bench/mcp.sh`, which builds the release binary and installs the reference
//! server. By hand: `SLMCODE_BIN=target/release/slmcode NODE_FS_SERVER=.../dist/index.js
//! cargo bench -p slmcode-agent --bench mcp_stdio`. Without NODE_FS_SERVER only slmcode is
//! measured.
//!
//! The slmcode reads cycle `offset` over 1..=16: the loop guard refuses a read that repeats
//! one of the last 12 calls with nothing changed in between, so 2,000 identical calls would
//! measure its refusal instead of a read.

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Map, Value};

const CALLS: usize = 2000;
const WARMUP: usize = 50;
const STARTS: usize = 15;

/// The tool name and the arguments of call number `i`, given the server's read tool.
type MakeCall = Box<dyn Fn(usize, &str) -> (String, Map<String, Value>)>;

struct Target {
    label: &'static str,
    program: String,
    args: Vec<String>,
    call: MakeCall,
}

struct Measured {
    startup: Duration,
    p50: Duration,
    p99: Duration,
}

async fn connect(t: &Target, root: &Path) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::new(&t.program);
    cmd.args(&t.args).current_dir(root);
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", t.program));
    ().serve(transport)
        .await
        .unwrap_or_else(|e| panic!("{} did not shake hands: {e}", t.label))
}

async fn call(client: &RunningService<RoleClient, ()>, t: &Target, i: usize, tool: &str) {
    let (name, args) = (t.call)(i, tool);
    let result = client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{}: call failed: {e}", t.label));
    assert_ne!(
        result.is_error,
        Some(true),
        "{}: the read failed: {:?}",
        t.label,
        result.content
    );
}

async fn measure(t: &Target, root: &Path, tool: &str) -> Measured {
    let mut starts = Vec::new();
    for i in 0..STARTS {
        let began = Instant::now();
        let mut client = connect(t, root).await;
        call(&client, t, i, tool).await;
        starts.push(began.elapsed());
        let _ = client.close().await;
    }
    starts.sort();
    let client = connect(t, root).await;
    for i in 0..WARMUP {
        call(&client, t, i, tool).await;
    }
    let mut rtts = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let began = Instant::now();
        call(&client, t, WARMUP + i, tool).await;
        rtts.push(began.elapsed());
    }
    drop(client);
    rtts.sort();
    Measured {
        startup: starts[starts.len() / 2],
        p50: rtts[rtts.len() / 2],
        p99: rtts[rtts.len() * 99 / 100],
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn slmcode_bin() -> PathBuf {
    std::env::var_os("SLMCODE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/slmcode")
        })
}

fn main() {
    // `cargo bench` passes --bench; nothing else is taken.
    let bin = slmcode_bin();
    assert!(
        bin.exists(),
        "no slmcode binary at {} (cargo build --release -p slmcode, or set SLMCODE_BIN)",
        bin.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical root");
    let text: String = (1..=100)
        .map(|i| format!("    let value_{i} = compute({i}, \"label {i}\");\n"))
        .collect();
    std::fs::write(root.join("sample.rs"), &text).expect("write sample");
    let file = root.join("sample.rs").display().to_string();

    let mut targets = vec![Target {
        label: "slmcode mcp",
        program: bin.display().to_string(),
        args: vec!["mcp".into(), "--root".into(), root.display().to_string()],
        call: Box::new(|i, _| {
            let args = json!({"path": "sample.rs", "offset": 1 + i % 16});
            (
                "ws_read".into(),
                args.as_object().cloned().unwrap_or_default(),
            )
        }),
    }];
    if let Some(node) = std::env::var_os("NODE_FS_SERVER") {
        let file = file.clone();
        targets.push(Target {
            label: "server-filesystem (Node)",
            program: "node".into(),
            args: vec![
                PathBuf::from(node).display().to_string(),
                root.display().to_string(),
            ],
            call: Box::new(move |_, tool| {
                let args = json!({"path": file});
                (tool.into(), args.as_object().cloned().unwrap_or_default())
            }),
        });
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let results: Vec<(String, Measured)> = runtime.block_on(async {
        let mut out = Vec::new();
        for t in &targets {
            // The reference names its read tool read_text_file (read_file in older releases).
            let tool = if t.label.starts_with("slmcode") {
                "ws_read".to_string()
            } else {
                let client = connect(t, &root).await;
                let tools = client.list_all_tools().await.expect("list tools");
                let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
                drop(client);
                ["read_text_file", "read_file"]
                    .iter()
                    .find(|n| names.iter().any(|x| x == *n))
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| panic!("no read tool among {names:?}"))
            };
            out.push((t.label.to_string(), measure(t, &root, &tool).await));
        }
        out
    });

    println!(
        "\nMCP over stdio, one Rust client (rmcp): start-up = spawn → handshake → first read \
         (median of {STARTS}); round trip over {CALLS} sequential reads of a 100-line file\n"
    );
    println!("| server | start-up | p50 | p99 |");
    println!("|---|---|---|---|");
    for (label, m) in &results {
        println!(
            "| {label} | {} | {} | {} |",
            ms(m.startup),
            ms(m.p50),
            ms(m.p99)
        );
    }
    if let [(_, ours), (_, theirs)] = &results[..] {
        let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
        println!(
            "\nreference ÷ slmcode: start-up {:.1}×, p50 {:.2}×, p99 {:.2}× (above 1 = slmcode faster)",
            ratio(ours.startup, theirs.startup),
            ratio(ours.p50, theirs.p50),
            ratio(ours.p99, theirs.p99)
        );
    }
}
