//! Ollama's native chat API (`/api/chat`), used instead of its `/v1` when the server is Ollama:
//! `/v1` ignores `options.num_ctx` (and `think`), so a run through it gets whatever context
//! the server defaults to — often 2,048 or 4,096 tokens — and its prompt is cut from the front
//! without a word (ollama#16814). Through `/api/chat` the run sets `num_ctx` once, to a
//! constant (a change would reload the model), and `keep_alive`, so the model is not unloaded
//! while a long tool call runs.
//!
//! The wire differs from OpenAI's: tool call arguments are JSON objects, not strings; a
//! stream is JSON lines, not SSE; the counts are `prompt_eval_count` and `eval_count`.

use serde_json::{json, Value};

use super::{
    bounded_body, ChatRequest, Clock, Reply, Transient, Usage, WireFunction, WireToolCall,
    MAX_REPLY_BYTES, MAX_REPLY_CALLS,
};
use crate::runaway::{RunawayLimits, Watch};

/// How long Ollama keeps the model loaded after a request: longer than any tool call.
pub const KEEP_ALIVE: &str = "30m";

/// The run's settings for Ollama's native API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ollama {
    /// The server's root (the endpoint without `/v1`).
    pub root: String,
    /// The context the run asks for, the same on every request.
    pub num_ctx: u64,
}

impl Ollama {
    pub(super) fn url(&self) -> String {
        format!("{}/api/chat", self.root)
    }

    /// The body of one `/api/chat` request.
    pub(super) fn body(&self, request: &ChatRequest<'_>, stream: bool) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(message).collect();
        let mut options = json!({"num_ctx": self.num_ctx});
        if let Some(n) = request.max_tokens {
            options["num_predict"] = json!(n);
        }
        for (key, value) in request.sampling {
            options[*key] = if crate::sampling::is_integer(key) {
                json!(*value as i64)
            } else {
                json!(value)
            };
        }
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": stream,
            "options": options,
            "keep_alive": KEEP_ALIVE,
        });
        if !request.tools.is_empty() {
            body["tools"] = Value::Array(request.tools.to_vec());
        }
        // Ollama's own switch (its /v1 ignores it): a bool, or a level for gpt-oss.
        match request.think {
            "on" => body["think"] = json!(true),
            "off" | "stop" => body["think"] = json!(false),
            level @ ("low" | "medium" | "high") => body["think"] = json!(level),
            _ => {}
        }
        body
    }
}

/// A message as Ollama takes it: a call's arguments as an object.
fn message(m: &super::Message) -> Value {
    let mut out = json!({"role": m.role, "content": m.content});
    if let Some(thinking) = &m.reasoning_content {
        out["thinking"] = json!(thinking);
    }
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                let arguments = serde_json::from_str::<Value>(&c.function.arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                json!({"function": {"name": c.function.name, "arguments": arguments}})
            })
            .collect();
        out["tool_calls"] = Value::Array(calls);
    }
    out
}

/// Adds one response object (a stream line, or the whole reply) to `reply`.
fn take(reply: &mut Reply, chunk: &Value) {
    let message = &chunk["message"];
    if let Some(text) = message["content"].as_str() {
        reply.content.push_str(text);
    }
    if let Some(text) = message["thinking"].as_str() {
        reply.reasoning.push_str(text);
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let n = reply.tool_calls.len();
        // Past the most a reply keeps: the loop would drop it unrun anyway.
        if n >= MAX_REPLY_CALLS {
            break;
        }
        let arguments = match &call["function"]["arguments"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        reply.tool_calls.push(WireToolCall {
            id: call["id"]
                .as_str()
                .map_or_else(|| format!("call_{n}"), str::to_string),
            kind: "function".into(),
            function: WireFunction {
                name: call["function"]["name"].as_str().unwrap_or_default().into(),
                arguments,
            },
        });
    }
    if chunk["done"] == json!(true) {
        reply.finish_reason = Some(match chunk["done_reason"].as_str() {
            Some("length") => "length".into(),
            _ if !reply.tool_calls.is_empty() => "tool_calls".into(),
            Some(other) => other.into(),
            None => "stop".into(),
        });
        reply.usage = Some(Usage {
            prompt_tokens: chunk["prompt_eval_count"].as_u64().unwrap_or(0),
            completion_tokens: chunk["eval_count"].as_u64().unwrap_or(0),
            cached_tokens: None,
        });
    }
}

/// Reads a whole (non-streamed) reply.
pub(super) async fn read_whole(response: reqwest::Response) -> Result<Reply, Transient> {
    let body = super::body_bytes(response, super::MAX_WIRE_BYTES)
        .await
        .map_err(Transient::Failed)?;
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| Transient::Failed(format!("the reply was not JSON: {e}")))?;
    if let Some(err) = value["error"].as_str() {
        return Err(Transient::Reported(500, err.to_string()));
    }
    let mut reply = Reply::default();
    take(&mut reply, &value);
    Ok(reply)
}

/// Reads a streamed reply, a JSON object a line, watching it for a runaway, by the deadlines
/// of `clock`.
pub(super) async fn read_stream(
    backend: &super::Backend,
    response: reqwest::Response,
    limits: RunawayLimits,
    think_budget: usize,
    mut clock: Clock,
) -> Result<Reply, Transient> {
    let (body, cut) = bounded_body(response.bytes_stream());
    let mut bytes = std::pin::pin!(body);
    let mut reply = Reply::default();
    let mut watch = Watch::new(limits);
    let mut pending: Vec<u8> = Vec::new();
    // How much of `pending` is known to hold no line end: a long line is scanned once.
    let mut scanned = 0;
    let mut done = false;
    while let Some(piece) = clock.next_piece(&mut bytes).await? {
        let piece = piece.map_err(|e| Transient::Failed(format!("the stream broke: {e}")))?;
        pending.extend_from_slice(&piece);
        while let Some(k) = memchr::memchr(b'\n', pending.get(scanned..).unwrap_or_default()) {
            let end = scanned + k;
            scanned = 0;
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Ok(chunk) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            // Ollama's tool parser failing on the reply ends the stream with this line.
            if let Some(err) = chunk["error"].as_str() {
                return Err(Transient::Reported(500, err.to_string()));
            }
            take(&mut reply, &chunk);
            let message = &chunk["message"];
            backend.piece(message["content"].as_str().unwrap_or_default(), false);
            backend.piece(message["thinking"].as_str().unwrap_or_default(), true);
            done |= chunk["done"] == json!(true);
            // Past the thinking budget: stopped here, the connection closed.
            if super::over_think_budget(&reply, think_budget) {
                reply.finish_reason = Some(super::THINK_BUDGET.into());
                return Ok(reply);
            }
            if let Some(r) = watch.check(&reply.content, &reply.reasoning) {
                reply.finish_reason = Some("runaway".into());
                reply.runaway = Some(r.to_string());
                return Ok(reply);
            }
            if super::reply_bytes(&reply) > MAX_REPLY_BYTES {
                reply.finish_reason = Some("length".into());
                return Ok(reply);
            }
        }
        scanned = pending.len();
    }
    if cut.load(std::sync::atomic::Ordering::Relaxed) {
        reply.finish_reason = Some("length".into());
        return Ok(reply);
    }
    if let Ok(chunk) = serde_json::from_slice::<Value>(&pending) {
        if let Some(err) = chunk["error"].as_str() {
            return Err(Transient::Reported(500, err.to_string()));
        }
        take(&mut reply, &chunk);
        done |= chunk["done"] == json!(true);
    }
    if !done {
        return Err(Transient::Failed(
            "the stream ended before the reply was finished".into(),
        ));
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Message;

    #[test]
    fn calls_go_out_as_objects_and_come_back_as_text() {
        let mut m = Message::assistant("");
        m.tool_calls.push(WireToolCall {
            id: "call_0".into(),
            kind: "function".into(),
            function: WireFunction {
                name: "ws_read".into(),
                arguments: "{\"path\":\"a.py\"}".into(),
            },
        });
        let out = message(&m);
        assert_eq!(
            out["tool_calls"][0]["function"]["arguments"],
            json!({"path": "a.py"})
        );
        let mut reply = Reply::default();
        take(
            &mut reply,
            &json!({"message": {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "ws_edit", "arguments": {"path": "a.py", "old_str": "x"}}}]},
                "done": true, "done_reason": "stop", "prompt_eval_count": 812, "eval_count": 31}),
        );
        assert_eq!(reply.tool_calls[0].function.name, "ws_edit");
        let args: Value = serde_json::from_str(&reply.tool_calls[0].function.arguments).unwrap();
        assert_eq!(args, json!({"path": "a.py", "old_str": "x"}));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage.unwrap().prompt_tokens, 812);
    }

    #[test]
    fn the_body_sets_the_context_and_keeps_the_model_loaded() {
        let o = Ollama {
            root: "http://127.0.0.1:11434".into(),
            num_ctx: 16384,
        };
        let messages = [Message::user("hi")];
        let request = ChatRequest {
            model: "qwen2.5-coder:7b",
            messages: &messages,
            tools: &[],
            max_tokens: Some(2048),
            sampling: &[("temperature", 0.7), ("top_k", 20.0)],
            runaway: RunawayLimits::default(),
            think: "low",
            think_budget: 0,
        };
        let body = o.body(&request, true);
        assert_eq!(
            body["options"],
            json!({"num_ctx": 16384, "num_predict": 2048, "temperature": 0.7, "top_k": 20})
        );
        assert_eq!(body["keep_alive"], KEEP_ALIVE);
        assert_eq!(body["think"], "low");
        assert!(body.get("tools").is_none());
        assert_eq!(o.url(), "http://127.0.0.1:11434/api/chat");
    }
}
