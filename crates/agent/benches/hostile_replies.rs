//! What a hostile or broken model server costs the harness, one case per process so that
//! `bench/hostile.sh` can read each case's peak memory (`/usr/bin/time`):
//!
//! - `tool-index N`: a streamed reply whose one tool-call delta carries `"index": N`;
//! - `braces KB`: a reply of `{` and a letter repeated to KB kilobytes, read as the run reads
//!   a reply (text tool calls, then the final answer);
//! - `empty-deltas` / `keep-alive`: a stream of empty deltas, or of SSE comments, that never
//!   ends; the time until the request gives up, with a reply deadline of `REPLY_SECS`
//!   (capped at `CAP_SECS`).
//!
//! Usage: `cargo bench -p slmcode-agent --bench hostile_replies -- CASE [ARG]`; with no case,
//! every case runs in this process (times only). Each case prints one line:
//! `case arg: <seconds> s, <outcome>`.

// A benchmark may panic on a broken setup, as a test does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use slmcode_agent::backend::{Backend, BackendOptions, ChatRequest, Message};
use slmcode_agent::runaway::RunawayLimits;
use slmcode_agent::toolcall::{parse_text_calls, OfferedTool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a stream that never ends is waited on before the bench says so.
const CAP_SECS: u64 = 60;

/// The reply deadline the stream cases ask for (`reply_timeout`).
const REPLY_SECS: u64 = 5;

/// How the test server answers a chat request.
#[derive(Clone, Copy)]
enum Serve {
    /// One tool-call delta with this index, then the end of the reply.
    ToolIndex(u64),
    /// Empty deltas, every 10 ms, forever.
    EmptyDeltas,
    /// SSE comments (`: keep-alive`), every 10 ms, forever.
    KeepAlive,
}

fn chunk(delta: &serde_json::Value, finish: Option<&str>) -> String {
    let event = serde_json::json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {event}\n\n")
}

/// Reads one HTTP request (headers and a Content-Length body) and answers it as `serve` says.
async fn answer(mut socket: tokio::net::TcpStream, serve: Serve) {
    let mut request = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request);
        if let Some(head_end) = text.find("\r\n\r\n") {
            let length = text[..head_end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if request.len() >= head_end + 4 + length {
                break;
            }
        }
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    match serve {
        Serve::ToolIndex(index) => {
            let mut body = chunk(
                &serde_json::json!({"role": "assistant", "content": ""}),
                None,
            );
            body.push_str(&chunk(
                &serde_json::json!({"tool_calls": [{"index": index, "id": "call_x", "type": "function",
                    "function": {"name": "ws_read", "arguments": "{\"path\": \"a.py\"}"}}]}),
                None,
            ));
            body.push_str(&chunk(&serde_json::json!({}), Some("tool_calls")));
            body.push_str("data: [DONE]\n\n");
            let _ = socket.write_all(body.as_bytes()).await;
        }
        Serve::EmptyDeltas | Serve::KeepAlive => {
            let first = chunk(
                &serde_json::json!({"role": "assistant", "content": ""}),
                None,
            );
            let _ = socket.write_all(first.as_bytes()).await;
            loop {
                let piece = match serve {
                    Serve::EmptyDeltas => chunk(&serde_json::json!({"content": ""}), None),
                    _ => ": keep-alive\n\n".to_string(),
                };
                if socket.write_all(piece.as_bytes()).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    let _ = socket.shutdown().await;
}

/// A server on a free local port answering every request as `serve` says; its base URL.
async fn server(serve: Serve) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer(socket, serve));
        }
    });
    format!("http://{addr}/v1")
}

/// One streamed chat request against a server answering as `serve` says.
async fn stream_case(serve: Serve) -> String {
    let url = server(serve).await;
    let options = BackendOptions {
        retry_base: Duration::from_millis(1),
        reply: Duration::from_secs(REPLY_SECS),
        ..BackendOptions::default()
    };
    let backend = Backend::new(&url, None, options).unwrap();
    let messages = [Message::user("read a.py")];
    let request = ChatRequest {
        model: "m",
        messages: &messages,
        tools: &[],
        max_tokens: Some(64),
        sampling: &[],
        runaway: RunawayLimits::default(),
        think: "auto",
        think_budget: 0,
    };
    match tokio::time::timeout(Duration::from_secs(CAP_SECS), backend.chat(&request)).await {
        Err(_) => format!("no answer within {CAP_SECS} s (the bench's cap)"),
        Ok(Ok(reply)) => format!("a reply with {} tool call(s)", reply.tool_calls.len()),
        Ok(Err(e)) => format!("error: {e}"),
    }
}

/// A reply of `{` and a letter, as the run reads it: text tool calls, then the final answer.
fn braces_case(kb: usize) -> String {
    let text = "{a".repeat(kb * 512);
    let offered = [OfferedTool {
        name: "ws_read".into(),
        params: vec![("path".into(), slmcode_aci::registry::Kind::String)],
    }];
    let found = parse_text_calls(&text, &offered);
    let answer = slmcode_agent::run::parse_final(&text);
    format!(
        "{} call(s), final answer: {}",
        found.calls.len(),
        match answer {
            Ok(_) => "read".to_string(),
            Err(e) => format!("refused ({e})"),
        }
    )
}

fn run_case(runtime: &tokio::runtime::Runtime, case: &str, arg: Option<&str>) {
    let started = Instant::now();
    let (arg_shown, outcome) = match case {
        "tool-index" => {
            let index = arg.and_then(|a| a.parse().ok()).unwrap_or(1_000_000_000);
            (
                index.to_string(),
                runtime.block_on(stream_case(Serve::ToolIndex(index))),
            )
        }
        "braces" => {
            let kb = arg.and_then(|a| a.parse().ok()).unwrap_or(120);
            (format!("{kb} KB"), braces_case(kb))
        }
        "empty-deltas" => (
            String::new(),
            runtime.block_on(stream_case(Serve::EmptyDeltas)),
        ),
        "keep-alive" => (
            String::new(),
            runtime.block_on(stream_case(Serve::KeepAlive)),
        ),
        other => panic!("unknown case {other}: tool-index, braces, empty-deltas, keep-alive"),
    };
    println!(
        "{case} {arg_shown}: {:.3} s, {outcome}",
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // `cargo bench` passes `--bench`; the rest are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.first() {
        Some(case) => run_case(&runtime, case, args.get(1).map(String::as_str)),
        None => {
            for (case, arg) in [
                ("tool-index", "1000000"),
                ("braces", "120"),
                ("empty-deltas", ""),
                ("keep-alive", ""),
            ] {
                run_case(&runtime, case, Some(arg).filter(|a| !a.is_empty()));
            }
        }
    }
}
