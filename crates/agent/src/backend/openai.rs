//! The OpenAI chat-completions wire, as Ollama's `/v1`, llama.cpp, vLLM, LM Studio and SGLang
//! send it: a whole reply, or an SSE stream of deltas (tool calls assembled from their pieces),
//! both read into one [`Reply`].

use serde_json::Value;

use super::{
    bounded_body, error_detail, Backend, Clock, Reply, Transient, Usage, WireFunction,
    WireToolCall, MAX_REPLY_BYTES, MAX_REPLY_CALLS,
};
use crate::runaway::{RunawayLimits, Watch};

impl Backend {
    pub(super) async fn read_whole(&self, response: reqwest::Response) -> Result<Reply, Transient> {
        let body = super::body_bytes(response, super::MAX_WIRE_BYTES)
            .await
            .map_err(Transient::Failed)?;
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => return Err(Transient::Failed(format!("the reply was not JSON: {e}"))),
        };
        let choice = &value["choices"][0];
        let message = &choice["message"];
        let mut reply = Reply {
            content: message["content"].as_str().unwrap_or_default().to_string(),
            reasoning: reasoning_of(message).to_string(),
            finish_reason: choice["finish_reason"].as_str().map(str::to_string),
            usage: Usage::of(&value),
            ..Reply::default()
        };
        if let Some(calls) = message["tool_calls"].as_array() {
            for (i, c) in calls.iter().enumerate() {
                reply.tool_calls.push(WireToolCall {
                    id: c["id"]
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("call_{i}")),
                    kind: "function".into(),
                    function: WireFunction {
                        name: c["function"]["name"].as_str().unwrap_or_default().into(),
                        arguments: arguments_text(&c["function"]["arguments"]),
                    },
                });
            }
        }
        Ok(reply)
    }

    /// Reads an SSE stream by the deadlines of `clock`.
    pub(super) async fn read_stream(
        &self,
        response: reqwest::Response,
        limits: RunawayLimits,
        think_budget: usize,
        mut clock: Clock,
    ) -> Result<Reply, Transient> {
        let (bytes, cut) = bounded_body(response.bytes_stream());
        let mut events = sse_stream::SseStream::from_bytes_stream(bytes);
        let mut reply = Reply::default();
        let mut watch = Watch::new(limits);
        let mut calls = Calls::default();
        let mut done = false;
        while let Some(event) = clock.next_piece(&mut events).await? {
            let event = event.map_err(|e| Transient::Failed(format!("the stream broke: {e}")))?;
            let is_error_event = event.event.as_deref() == Some("error");
            let Some(data) = event.data else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                done = true;
                break;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                if is_error_event {
                    return Err(Transient::Reported(500, error_detail(data)));
                }
                continue;
            };
            // llama.cpp ends a stream that failed (its tool parser, say) with the error as
            // its last event; LM Studio sends one error event.
            if let Some(err) = chunk.get("error") {
                let code = err["code"]
                    .as_u64()
                    .and_then(|c| u16::try_from(c).ok())
                    .unwrap_or(500);
                let detail = error_detail(&serde_json::json!({ "error": err }).to_string());
                return Err(Transient::Reported(code, detail));
            }
            if is_error_event {
                return Err(Transient::Reported(500, error_detail(data)));
            }
            // llama.cpp reading a long prompt (`return_progress`): said, so minutes of
            // silence on slow hardware are not mistaken for a hang; the reply has not begun.
            let progress = &chunk["prompt_progress"];
            if let (Some(processed), Some(total)) =
                (progress["processed"].as_u64(), progress["total"].as_u64())
            {
                clock.begin();
                self.notice(super::Notice::PromptProgress {
                    processed,
                    total,
                    cached: progress["cache"].as_u64().unwrap_or(0),
                });
            }
            if let Some(usage) = Usage::of(&chunk) {
                reply.usage = Some(usage);
            } else if let (Some(usage), Some(n)) =
                (reply.usage.as_mut(), chunk["timings"]["cache_n"].as_u64())
            {
                // llama.cpp may send its timings in a chunk of their own.
                usage.cached_tokens = Some(n);
            }
            let Some(choice) = chunk["choices"].get(0) else {
                continue;
            };
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                reply.content.push_str(text);
                self.piece(text, false);
            }
            reply.reasoning.push_str(reasoning_of(delta));
            self.piece(reasoning_of(delta), true);
            for c in delta["tool_calls"].as_array().into_iter().flatten() {
                calls.add(&mut reply.tool_calls, c);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                reply.finish_reason = Some(reason.to_string());
            }
            // Stopped here: dropping the stream closes the connection, and the server stops
            // generating.
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
        if cut.load(std::sync::atomic::Ordering::Relaxed) {
            reply.finish_reason = Some("length".into());
            return Ok(reply);
        }
        if !done && reply.finish_reason.is_none() {
            return Err(Transient::Failed(
                "the stream ended before the reply was finished".into(),
            ));
        }
        Ok(reply)
    }
}

/// The native calls of a streamed reply, assembled from their pieces. Each piece names its
/// call by `index`, a number the server chooses: calls are kept in the order their index
/// first came, at most [`MAX_REPLY_CALLS`] of them, so no index sizes anything.
#[derive(Default)]
struct Calls {
    /// Each call's index, in the order of `Reply::tool_calls`.
    indices: Vec<u64>,
}

impl Calls {
    /// Adds one piece of a call to `calls`.
    fn add(&mut self, calls: &mut Vec<WireToolCall>, piece: &Value) {
        let index = piece["index"].as_u64().unwrap_or(0);
        let at = match self.indices.iter().position(|i| *i == index) {
            Some(at) => at,
            None if self.indices.len() < MAX_REPLY_CALLS => {
                self.indices.push(index);
                calls.push(WireToolCall {
                    id: format!("call_{}", calls.len()),
                    kind: "function".into(),
                    function: WireFunction {
                        name: String::new(),
                        arguments: String::new(),
                    },
                });
                calls.len() - 1
            }
            // Past the most a reply keeps: the loop would drop it unrun anyway.
            None => return,
        };
        let Some(call) = calls.get_mut(at) else {
            return;
        };
        if let Some(id) = piece["id"].as_str().filter(|s| !s.is_empty()) {
            call.id = id.to_string();
        }
        if let Some(name) = piece["function"]["name"].as_str() {
            call.function.name.push_str(name);
        }
        call.function
            .arguments
            .push_str(&arguments_text(&piece["function"]["arguments"]));
    }
}

fn reasoning_of(v: &Value) -> &str {
    v["reasoning_content"]
        .as_str()
        .or(v["reasoning"].as_str())
        .unwrap_or_default()
}

/// Arguments arrive as a JSON string (the protocol) or, from some servers, as an object.
fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
