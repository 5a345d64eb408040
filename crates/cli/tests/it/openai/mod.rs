//! A real HTTP server, in the test, that speaks the OpenAI chat-completions protocol (whole
//! JSON replies and SSE streams) and replays scripted model replies in order. It records every
//! request it got, so tests can check what the harness sent.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

mod ollama;

/// One scripted reply of the model.
#[derive(Clone, Debug)]
pub enum Scripted {
    /// Plain text content (a text-format tool call, or the final answer).
    Text(String),
    /// Native tool calls: (name, arguments as the model wrote them), with optional content.
    Calls(String, Vec<(String, String)>),
    /// Text cut off by max_tokens (finish_reason "length").
    Truncated(String),
    /// An HTTP error status with a body; it does not use up the next scripted reply.
    Status(u16, String),
    /// Text with a usage block that claims this many prompt tokens.
    TextWithPromptTokens(String, u64),
    /// The same reply, sent after a delay (milliseconds).
    Slow(u64, Box<Scripted>),
    /// Text with the server's separate reasoning field (`reasoning_content`, as vLLM and
    /// llama.cpp send a thinking model's reasoning): (reasoning, content).
    Reasoned(String, String),
    /// A server whose streaming of tool calls is broken: streamed, the reply comes back empty
    /// (`true`) or as a call whose argument pieces do not add up (`false`), and the reply is
    /// kept for the next request; whole, it is the reply.
    BrokenWhenStreamed(Box<Scripted>, bool),
    /// A model stuck in a loop: streamed, this text repeated without end, a piece every few
    /// milliseconds, until the client hangs up; whole, repeated to 40,000 characters.
    Endless(String),
    /// A model that thinks without end: streamed, this text repeated as reasoning
    /// (`reasoning_content`) until the client hangs up; whole, 40,000 characters of reasoning
    /// and no answer.
    EndlessThinking(String),
    /// A server that keeps a stream open without ever finishing the reply: streamed, empty
    /// deltas (`false`) or SSE comments (`true`, keep-alives) every few milliseconds until the
    /// client hangs up; whole, the reply never comes.
    NeverFinishes(bool),
    /// The same reply, after writing `content` to the file at this absolute path: something
    /// outside the tools (a build, another process) changing the project mid-run.
    Touch(std::path::PathBuf, String, Box<Scripted>),
    /// A native call whose streamed delta carries this `index` (a server may send any number):
    /// (index, name, arguments). Whole, it is an ordinary call.
    CallAtIndex(u64, String, String),
}

impl Scripted {
    pub fn text(t: impl Into<String>) -> Scripted {
        Scripted::Text(t.into())
    }
    pub fn call(name: &str, args: Value) -> Scripted {
        Scripted::Calls(String::new(), vec![(name.into(), args.to_string())])
    }
    pub fn final_done(summary: &str) -> Scripted {
        Scripted::Text(
            json!({"status": "done", "summary": summary, "files_changed": [], "notes": ""})
                .to_string(),
        )
    }
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Scripted>,
    requests: Vec<Value>,
    auth: Vec<Option<String>>,
    models: Vec<Value>,
    /// What Ollama's /api/tags lists (empty: the route answers with no models).
    tags: Vec<Value>,
    /// Other pages the server answers, by "METHOD /path" (the query ignored): how a test
    /// shapes the server as llama.cpp, Ollama, LM Studio… Anything else is a 404.
    routes: std::collections::HashMap<String, Value>,
    /// Every request to one of the other pages, as "METHOD /path?query".
    probes: Vec<String>,
    /// A server that cannot take tools: every chat request carrying `tools` gets this status
    /// and body (the script is not used up).
    refuse_tools: Option<(u16, String)>,
    /// Whether a streamed request carrying `tools` gets that refusal inside the stream (200,
    /// a piece of the reply, then the body as an error event and no end), as llama.cpp and
    /// Ollama report a failure found while streaming.
    refuse_in_stream: bool,
    /// How many characters the server's tokenizer makes one token (3.5 unless a test says).
    chars_per_token: f64,
    /// The prompt tokens counted for each chat request, in order.
    counted: Vec<u64>,
    /// Endless streams the client hung up on (the request was cancelled).
    hung_up: usize,
}

/// Counts a hang-up when an endless stream's body is dropped: the client went away.
struct HangUp(Arc<Mutex<Shared>>);

impl Drop for HangUp {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.lock() {
            s.hung_up += 1;
        }
    }
}

/// The characters of a request's first `n` messages (and, for the whole request, its tools).
fn prompt_chars(body: &Value, n: usize) -> usize {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let mut chars: usize = messages
        .iter()
        .take(n)
        .map(|m| {
            m["content"].as_str().map_or(0, |c| c.chars().count())
                + m["tool_calls"]
                    .as_array()
                    .map_or(0, |c| Value::Array(c.clone()).to_string().len())
                + 16
        })
        .sum();
    if n >= messages.len() {
        chars += body.get("tools").map_or(0, |t| t.to_string().len());
    }
    chars
}

/// How many leading messages two requests share exactly.
fn common_messages(a: &Value, b: &Value) -> usize {
    match (a["messages"].as_array(), b["messages"].as_array()) {
        (Some(a), Some(b)) => a.iter().zip(b).take_while(|(x, y)| x == y).count(),
        _ => 0,
    }
}

/// The running server; stops when dropped (with the test).
pub struct FakeModel {
    pub url: String,
    shared: Arc<Mutex<Shared>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeModel {
    pub fn start(script: Vec<Scripted>) -> FakeModel {
        FakeModel::with_models(script, vec![json!({"id": "test-model", "object": "model"})])
    }

    pub fn with_models(script: Vec<Scripted>, models: Vec<Value>) -> FakeModel {
        let shared = Arc::new(Mutex::new(Shared {
            script: script.into(),
            models,
            chars_per_token: 3.5,
            ..Shared::default()
        }));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel::<SocketAddr>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let app = Router::new()
                    .route("/v1/models", get(list_models))
                    .route("/api/tags", get(list_tags))
                    .route("/v1/chat/completions", post(chat))
                    .route("/api/chat", post(ollama::chat))
                    .fallback(other_page)
                    .with_state(state);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        let addr = addr_rx.recv().expect("server address");
        FakeModel {
            url: format!("http://{addr}/v1"),
            shared,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// Serves these entries at Ollama's `/api/tags` too.
    pub fn with_ollama_tags(self, tags: Vec<Value>) -> FakeModel {
        self.shared.lock().unwrap().tags = tags;
        self
    }

    /// Answers `method path` (e.g. "GET /props") with this JSON.
    pub fn with_route(self, method: &str, path: &str, body: Value) -> FakeModel {
        self.shared
            .lock()
            .unwrap()
            .routes
            .insert(format!("{method} {path}"), body);
        self
    }

    /// Answers every request that carries `tools` with `status` and `body`, the way a server
    /// answers when it cannot take tools for the model.
    pub fn refusing_tools(self, status: u16, body: &str) -> FakeModel {
        self.shared.lock().unwrap().refuse_tools = Some((status, body.to_string()));
        self
    }

    /// Like [`FakeModel::refusing_tools`], but a streamed request gets the refusal inside a
    /// stream that began well: the way llama.cpp (`data: {"error": …}` and no `[DONE]`) and
    /// Ollama (a `{"error": …}` line) report their tool parser failing on the reply.
    pub fn refusing_tools_mid_stream(self, status: u16, body: &str) -> FakeModel {
        {
            let mut s = self.shared.lock().unwrap();
            s.refuse_tools = Some((status, body.to_string()));
            s.refuse_in_stream = true;
        }
        self
    }

    /// The prompt tokens this server counted for each chat request, in order.
    pub fn counted(&self) -> Vec<u64> {
        self.shared.lock().unwrap().counted.clone()
    }

    /// Shapes the server as Ollama: `/api/version` answers, so slmcode talks to `/api/chat`.
    pub fn shaped_as_ollama(self) -> FakeModel {
        self.with_route("GET", "/api/version", json!({"version": "0.12.6"}))
    }

    /// A server whose tokenizer makes one token of `chars` characters (code and non-English
    /// text make more tokens than slmcode's estimate assumes).
    pub fn counting(self, chars: f64) -> FakeModel {
        self.shared.lock().unwrap().chars_per_token = chars;
        self
    }

    /// The requests to pages other than the chat and the model list, in order.
    pub fn probes(&self) -> Vec<String> {
        self.shared.lock().unwrap().probes.clone()
    }

    /// Every chat request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.lock().unwrap().requests.clone()
    }

    /// The names of the tools offered in chat request `i`.
    pub fn tool_names(&self, i: usize) -> Vec<String> {
        self.requests()[i]["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The Authorization header of each chat request.
    pub fn auth_headers(&self) -> Vec<Option<String>> {
        self.shared.lock().unwrap().auth.clone()
    }

    /// Endless streams the client hung up on.
    pub fn hung_up(&self) -> usize {
        self.shared.lock().unwrap().hung_up
    }

    /// Scripted replies not used.
    pub fn left(&self) -> usize {
        self.shared.lock().unwrap().script.len()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn list_models(State(shared): State<Arc<Mutex<Shared>>>) -> Json<Value> {
    let models = shared.lock().unwrap().models.clone();
    Json(json!({"object": "list", "data": models}))
}

async fn list_tags(State(shared): State<Arc<Mutex<Shared>>>) -> Json<Value> {
    let tags = shared.lock().unwrap().tags.clone();
    Json(json!({"models": tags}))
}

async fn other_page(
    State(shared): State<Arc<Mutex<Shared>>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Response {
    let mut s = shared.lock().unwrap();
    s.probes.push(format!("{method} {uri}"));
    match s.routes.get(&format!("{method} {}", uri.path())) {
        Some(body) => Json(body.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "File Not Found").into_response(),
    }
}

/// The next scripted reply for a chat request, with the prompt tokens a server would count
/// for it and those its cache would serve; or the response that answers the request instead
/// (tools refused, the script used up).
async fn take_next(
    shared: &Arc<Mutex<Shared>>,
    headers: &HeaderMap,
    body: &Value,
    wire: Wire,
) -> Result<(Scripted, u64, u64), Response> {
    let (next, counted, cached) = {
        let mut s = shared.lock().unwrap();
        // Tokens as a server counts them (about 3.5 characters a token, or the test's
        // ratio), and those of the messages this request shares with the one before: what a
        // server's prompt cache serves.
        let ratio = s.chars_per_token;
        let counted = prompt_chars(body, usize::MAX) as f64 / ratio;
        let shared_prefix = s
            .requests
            .last()
            .map(|prev| common_messages(prev, body))
            .unwrap_or(0);
        let cached = if shared_prefix == 0 {
            0.0
        } else {
            prompt_chars(body, shared_prefix) as f64 / ratio
        };
        s.requests.push(body.clone());
        s.counted.push(counted as u64);
        s.auth.push(
            headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
        );
        if let Some((code, text)) = s.refuse_tools.clone() {
            if body.get("tools").is_some() && s.refuse_in_stream && body["stream"] == json!(true) {
                return Err(failed_stream(wire, &text));
            }
            if body.get("tools").is_some() {
                return Err((
                    StatusCode::from_u16(code).unwrap(),
                    [("content-type", "application/json")],
                    text,
                )
                    .into_response());
            }
        }
        (s.script.pop_front(), counted as u64, cached as u64)
    };
    let Some(mut next) = next else {
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "the test script has no more replies",
        )
            .into_response());
    };
    loop {
        next = match next {
            Scripted::Slow(ms, inner) => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                *inner
            }
            Scripted::Touch(path, content, inner) => {
                std::fs::write(&path, content).expect("the test's touch");
                *inner
            }
            other => break next = other,
        };
    }
    Ok((next, counted, cached))
}

/// The wire a chat request came in on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Wire {
    OpenAi,
    Ollama,
}

/// A stream that starts a reply and then reports `error_body` (a server's error JSON) the way
/// its wire does, without ever finishing.
fn failed_stream(wire: Wire, error_body: &str) -> Response {
    let error: Value = serde_json::from_str(error_body).unwrap_or(json!({"error": error_body}));
    match wire {
        Wire::OpenAi => {
            let chunk = |delta: Value| {
                json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
            };
            let text = format!(
                "data: {}\n\ndata: {}\n\ndata: {error}\n\n",
                chunk(json!({"role": "assistant", "content": ""})),
                chunk(json!({"content": "<tool_call>\n<function=ws_read>"})),
            );
            ([("content-type", "text/event-stream")], text).into_response()
        }
        Wire::Ollama => {
            let piece = json!({"model": "test-model", "message": {"role": "assistant",
                               "content": "<tool_call>\n<function=ws_read>"}, "done": false});
            let text = format!("{piece}\n{error}\n");
            ([("content-type", "application/x-ndjson")], text).into_response()
        }
    }
}

async fn chat(
    State(shared): State<Arc<Mutex<Shared>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let (mut next, counted, cached) = match take_next(&shared, &headers, &body, Wire::OpenAi).await
    {
        Ok(next) => next,
        Err(response) => return response,
    };
    if let Scripted::BrokenWhenStreamed(inner, empty) = next {
        if body["stream"] != json!(true) {
            next = *inner;
        } else {
            shared.lock().unwrap().script.push_front(*inner);
            let chunk = |delta: Value, finish: Option<&str>| {
                json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
            if !empty {
                events.push(chunk(
                    json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
                                           "function": {"name": "ws_read", "arguments": "{\"path\": \"ap"}}]}),
                    None,
                ));
                events.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "p.py\"}, \"limit"}}]}),
                    None,
                ));
            }
            events.push(chunk(
                json!({}),
                Some(if empty { "stop" } else { "tool_calls" }),
            ));
            let mut text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            text.push_str("data: [DONE]\n\n");
            return ([("content-type", "text/event-stream")], text).into_response();
        }
    }
    if let Scripted::NeverFinishes(comments) = next {
        if body["stream"] != json!(true) {
            // The whole reply never comes.
            std::future::pending::<()>().await;
        }
        let first = json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                           "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]});
        let piece = if comments {
            ": keep-alive\n\n".to_string()
        } else {
            let empty = json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                               "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": null}]});
            format!("data: {empty}\n\n")
        };
        let start = futures_util::stream::once(async move {
            Ok::<_, std::convert::Infallible>(format!("data: {first}\n\n"))
        });
        let rest = futures_util::stream::unfold((), move |()| {
            let piece = piece.clone();
            async move {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                Some((Ok::<_, std::convert::Infallible>(piece), ()))
            }
        });
        use futures_util::StreamExt;
        return (
            [("content-type", "text/event-stream")],
            axum::body::Body::from_stream(start.chain(rest)),
        )
            .into_response();
    }
    if let Scripted::CallAtIndex(index, name, args) = &next {
        if body["stream"] == json!(true) {
            let chunk = |delta: Value, finish: Option<&str>| {
                json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let events = [
                chunk(json!({"role": "assistant", "content": ""}), None),
                chunk(
                    json!({"tool_calls": [{"index": index, "id": "call_x", "type": "function",
                                           "function": {"name": name, "arguments": args}}]}),
                    None,
                ),
                chunk(json!({}), Some("tool_calls")),
            ];
            let mut text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            text.push_str("data: [DONE]\n\n");
            return ([("content-type", "text/event-stream")], text).into_response();
        }
        next = Scripted::Calls(String::new(), vec![(name.clone(), args.clone())]);
    }
    if let Scripted::EndlessThinking(piece) = &next {
        if body["stream"] != json!(true) {
            next = Scripted::Reasoned(piece.repeat(40_000 / piece.len().max(1) + 1), String::new());
        }
    }
    if let Scripted::Endless(piece) | Scripted::EndlessThinking(piece) = &next {
        let field = if matches!(next, Scripted::Endless(_)) {
            "content"
        } else {
            "reasoning_content"
        };
        if body["stream"] == json!(true) {
            let chunk = move |text: &str| {
                let event = json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                                   "choices": [{"index": 0, "delta": {field: text}, "finish_reason": null}]});
                Ok::<_, std::convert::Infallible>(format!("data: {event}\n\n"))
            };
            let piece = piece.clone();
            let guard = HangUp(shared.clone());
            let stream = futures_util::stream::unfold(guard, move |guard| {
                let event = chunk(&piece);
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    Some((event, guard))
                }
            });
            return (
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(stream),
            )
                .into_response();
        }
        let text = piece.repeat(40_000 / piece.len().max(1) + 1);
        next = Scripted::Truncated(text);
    }
    let mut reasoning = String::new();
    let (content, calls, finish, prompt_tokens) = match next {
        Scripted::Status(code, text) => {
            return (StatusCode::from_u16(code).unwrap(), text).into_response();
        }
        Scripted::Reasoned(r, t) => {
            reasoning = r;
            (t, vec![], "stop", counted)
        }
        Scripted::Text(t) => (t, vec![], "stop", counted),
        Scripted::TextWithPromptTokens(t, n) => (t, vec![], "stop", n),
        Scripted::Calls(t, c) => (t, c, "tool_calls", counted),
        Scripted::Truncated(t) => (t, vec![], "length", counted),
        Scripted::Slow(..)
        | Scripted::Touch(..)
        | Scripted::Endless(_)
        | Scripted::EndlessThinking(_)
        | Scripted::BrokenWhenStreamed(..)
        | Scripted::NeverFinishes(_)
        | Scripted::CallAtIndex(..) => {
            unreachable!("unwrapped above")
        }
    };
    let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": 20, "total_tokens": prompt_tokens + 20,
                       "prompt_tokens_details": {"cached_tokens": cached.min(prompt_tokens)}});
    if body["stream"] == json!(true) {
        let mut events = Vec::new();
        let chunk = |delta: Value, finish: Option<&str>| {
            json!({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        // llama.cpp, asked for `return_progress`, reports its way through the prompt first.
        if body["return_progress"] == json!(true) {
            for processed in [prompt_tokens / 2, prompt_tokens] {
                events.push(
                    json!({"id": "c1", "object": "chat.completion.chunk", "choices": [],
                                   "prompt_progress": {"total": prompt_tokens, "cache": cached,
                                                       "processed": processed, "time_ms": 120}}),
                );
            }
        }
        events.push(chunk(json!({"role": "assistant", "content": ""}), None));
        let thought: Vec<char> = reasoning.chars().collect();
        for piece in thought.chunks(7) {
            events.push(chunk(
                json!({"reasoning_content": piece.iter().collect::<String>()}),
                None,
            ));
        }
        // Content in several pieces, split on char boundaries.
        let chars: Vec<char> = content.chars().collect();
        for piece in chars.chunks(7) {
            events.push(chunk(
                json!({"content": piece.iter().collect::<String>()}),
                None,
            ));
        }
        for (i, (name, args)) in calls.iter().enumerate() {
            events.push(chunk(
                json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
                                       "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            let mid = args
                .char_indices()
                .nth(args.chars().count() / 2)
                .map_or(0, |(b, _)| b);
            for part in [&args[..mid], &args[mid..]] {
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]}),
                    None,
                ));
            }
        }
        events.push(chunk(json!({}), Some(finish)));
        events.push(
            json!({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": usage}),
        );
        let mut text = String::new();
        for e in events {
            text.push_str(&format!("data: {e}\n\n"));
        }
        text.push_str("data: [DONE]\n\n");
        return ([("content-type", "text/event-stream")], text).into_response();
    }
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (n, a))| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": n, "arguments": a}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": content});
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    Json(json!({
        "id": "c1", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }))
    .into_response()
}
