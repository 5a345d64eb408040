//! The OpenAI chat-completions wire, as Ollama's `/v1`, llama.cpp, vLLM, LM Studio and SGLang
//! send it: a whole reply, or an SSE stream of deltas (tool calls assembled from their pieces),
//! both read into one [`Reply`].

use serde_json::Value;

use super::{error_detail, Backend, Reply, Transient, Usage, WireFunction, WireToolCall};
use crate::runaway::{RunawayLimits, Watch};

impl Backend {
    pub(super) async fn read_whole(&self, response: reqwest::Response) -> Result<Reply, Transient> {
        let value: Value = match response.json().await {
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

    /// Reads an SSE stream; nothing before `first` ends it as [`Transient::NoFirstToken`].
    pub(super) async fn read_stream(
        &self,
        response: reqwest::Response,
        limits: RunawayLimits,
        first: tokio::time::Instant,
    ) -> Result<Reply, Transient> {
        let mut events = sse_stream::SseStream::from_bytes_stream(response.bytes_stream());
        let mut reply = Reply::default();
        let mut watch = Watch::new(limits);
        let mut done = false;
        let mut first = Some(first);
        while let Some(event) = super::next_piece(&mut events, &mut first).await? {
            let event = event.map_err(|e| Transient::Failed(format!("the stream broke: {e}")))?;
            let Some(data) = event.data else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                done = true;
                break;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if let Some(err) = chunk.get("error") {
                return Err(Transient::Failed(format!(
                    "the server reported: {}",
                    error_detail(&err.to_string())
                )));
            }
            // llama.cpp reading a long prompt (`return_progress`): said, so minutes of
            // silence on slow hardware are not mistaken for a hang.
            let progress = &chunk["prompt_progress"];
            if let (Some(processed), Some(total)) =
                (progress["processed"].as_u64(), progress["total"].as_u64())
            {
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
            }
            reply.reasoning.push_str(reasoning_of(delta));
            if let Some(calls) = delta["tool_calls"].as_array() {
                for c in calls {
                    let index = c["index"].as_u64().unwrap_or(0) as usize;
                    while reply.tool_calls.len() <= index {
                        let n = reply.tool_calls.len();
                        reply.tool_calls.push(WireToolCall {
                            id: format!("call_{n}"),
                            kind: "function".into(),
                            function: WireFunction {
                                name: String::new(),
                                arguments: String::new(),
                            },
                        });
                    }
                    if let Some(call) = reply.tool_calls.get_mut(index) {
                        if let Some(id) = c["id"].as_str().filter(|s| !s.is_empty()) {
                            call.id = id.to_string();
                        }
                        if let Some(name) = c["function"]["name"].as_str() {
                            call.function.name.push_str(name);
                        }
                        call.function
                            .arguments
                            .push_str(&arguments_text(&c["function"]["arguments"]));
                    }
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                reply.finish_reason = Some(reason.to_string());
            }
            // Stopped here: dropping the stream closes the connection, and the server stops
            // generating.
            if let Some(r) = watch.check(&reply.content, &reply.reasoning) {
                reply.finish_reason = Some("runaway".into());
                reply.runaway = Some(r.to_string());
                return Ok(reply);
            }
        }
        if !done && reply.finish_reason.is_none() {
            return Err(Transient::Failed(
                "the stream ended before the reply was finished".into(),
            ));
        }
        Ok(reply)
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
