//! Ollama's native `/api/chat` on the test server: the same scripted replies, in Ollama's
//! wire — a call's arguments as an object, a stream of JSON lines ending with `"done": true`
//! and the counts `prompt_eval_count` / `eval_count`, errors as `{"error": "…"}`. Served only
//! to a client that talks to Ollama; the request bodies are recorded like the others.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::{take_next, Scripted, Shared, Wire};
use std::sync::{Arc, Mutex};

pub(super) async fn chat(
    State(shared): State<Arc<Mutex<Shared>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let (next, counted, _) = match take_next(&shared, &headers, &body, Wire::Ollama).await {
        Ok(next) => next,
        Err(response) => return response,
    };
    let (content, thinking, calls, reason, prompt) = match next {
        Scripted::Status(code, text) => {
            return (
                StatusCode::from_u16(code).unwrap(),
                Json(json!({"error": text})),
            )
                .into_response();
        }
        Scripted::Text(t) => (t, String::new(), vec![], "stop", counted),
        Scripted::TextWithPromptTokens(t, n) => (t, String::new(), vec![], "stop", n),
        Scripted::Reasoned(r, t) => (t, r, vec![], "stop", counted),
        Scripted::Calls(t, c) => (t, String::new(), c, "stop", counted),
        Scripted::Truncated(t) => (t, String::new(), vec![], "length", counted),
        Scripted::Endless(piece) => (piece.repeat(1000), String::new(), vec![], "length", counted),
        Scripted::EndlessThinking(piece) => {
            (String::new(), piece.repeat(1000), vec![], "length", counted)
        }
        Scripted::Slow(..)
        | Scripted::Touch(..)
        | Scripted::BrokenWhenStreamed(..)
        | Scripted::NeverFinishes(_)
        | Scripted::CallAtIndex(..) => {
            unreachable!("not scripted for Ollama")
        }
    };
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(name, args)| {
            let arguments: Value = serde_json::from_str(args).unwrap_or(json!({}));
            json!({"function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let last = json!({"model": body["model"], "message": {"role": "assistant", "content": ""},
                      "done": true, "done_reason": reason,
                      "prompt_eval_count": prompt, "eval_count": 20});
    if body["stream"] == json!(false) {
        let mut whole = last;
        whole["message"] = json!({"role": "assistant", "content": content});
        if !thinking.is_empty() {
            whole["message"]["thinking"] = json!(thinking);
        }
        if !tool_calls.is_empty() {
            whole["message"]["tool_calls"] = json!(tool_calls);
        }
        return Json(whole).into_response();
    }
    let mut lines = Vec::new();
    let piece = |field: &str, text: String| json!({"model": body["model"], "message": {"role": "assistant", "content": "", field: text}, "done": false});
    for part in thinking.chars().collect::<Vec<_>>().chunks(7) {
        lines.push(piece("thinking", part.iter().collect()));
    }
    for part in content.chars().collect::<Vec<_>>().chunks(7) {
        lines.push(piece("content", part.iter().collect()));
    }
    if !tool_calls.is_empty() {
        lines.push(json!({"model": body["model"], "message": {"role": "assistant", "content": "", "tool_calls": tool_calls}, "done": false}));
    }
    lines.push(last);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    ([("content-type", "application/x-ndjson")], text).into_response()
}
