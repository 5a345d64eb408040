//! The model backend: OpenAI-compatible chat completions, which Ollama (`/v1`), llama.cpp's
//! server, vLLM, LM Studio and SGLang all speak. Streaming (SSE) by default, with native
//! `tool_calls` deltas assembled; transient failures retried with backoff and jitter; the
//! failures a user can act on (nothing listening, a context overflow, a refused key) told apart.
//!
//! The API key is held here and sent as a header only; it is never part of a [`Message`], a
//! [`Reply`] or an error, so it cannot reach a log or a trajectory.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::runaway::{RunawayLimits, Watch};

mod bounds;
mod errors;
mod ollama;
mod openai;
mod thinking;
pub(crate) use bounds::{body_bytes, page_json, MAX_PAGE_BYTES, MAX_WIRE_BYTES};
use bounds::{bounded_body, reply_bytes, Clock};
pub use bounds::{MAX_REPLY_BYTES, MAX_REPLY_CALLS};
use errors::{connect_detail, error_detail};
pub use errors::{is_context_overflow, tools_refused, BackendError};
use ollama::Ollama;
use thinking::over_think_budget;
pub use thinking::THINK_BUDGET;

/// Where Ollama listens by default.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:11434/v1";

/// How many times a request is tried in all when the failure is transient.
pub const TRIES: u32 = 3;

/// One chat message as the OpenAI protocol carries it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    /// Always sent (as `""` when empty): several servers reject a missing content.
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<WireToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The reasoning that came with this assistant message, sent back to models that need
    /// their earlier reasoning in the conversation (gpt-oss between tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Message {
        Message::text("system", text)
    }
    pub fn user(text: impl Into<String>) -> Message {
        Message::text("user", text)
    }
    pub fn assistant(text: impl Into<String>) -> Message {
        Message::text("assistant", text)
    }
    fn text(role: &str, text: impl Into<String>) -> Message {
        Message {
            role: role.into(),
            content: text.into(),
            ..Message::default()
        }
    }
    /// The answer to a native tool call.
    pub fn tool_result(id: &str, text: impl Into<String>) -> Message {
        Message {
            role: "tool".into(),
            content: text.into(),
            tool_call_id: Some(id.into()),
            ..Message::default()
        }
    }
}

/// A native tool call, as sent back in the assistant message of the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: WireFunction,
}

fn function_type() -> String {
    "function".into()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireFunction {
    pub name: String,
    /// The arguments as the model wrote them: a JSON string, possibly malformed.
    #[serde(default)]
    pub arguments: String,
}

/// Token counts the server reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt tokens the server served from its cache instead of processing them, when it
    /// says: `usage.prompt_tokens_details.cached_tokens` (vLLM, LM Studio, OpenAI) or
    /// llama.cpp's `timings.cache_n`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
}

impl Usage {
    /// The counts in a reply or a stream's last chunk; `None` when it has none.
    fn of(value: &Value) -> Option<Usage> {
        let usage = &value["usage"];
        let mut found = Usage {
            prompt_tokens: usage["prompt_tokens"].as_u64()?,
            completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
            cached_tokens: usage["prompt_tokens_details"]["cached_tokens"].as_u64(),
        };
        if let Some(n) = value["timings"]["cache_n"].as_u64() {
            found.cached_tokens = Some(n);
        }
        Some(found)
    }
}

/// What the model answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Reply {
    pub content: String,
    /// Thinking text some models send apart (`reasoning_content`); kept for the log only.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    pub tool_calls: Vec<WireToolCall>,
    pub finish_reason: Option<String>,
    /// Set when the reply was stopped early for looping or rambling (then `finish_reason` is
    /// `"runaway"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runaway: Option<String>,
    pub usage: Option<Usage>,
    /// Wall time of the request, for tokens per second.
    #[serde(skip)]
    pub elapsed: Duration,
}

impl Reply {
    /// The reply stopped because it reached `max_tokens`: whatever call it held is cut off.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

/// A model listed by the server.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelInfo {
    pub id: String,
    /// Size, quantization, family — whatever the server says, in a few words.
    pub details: String,
    /// The context length the server serves the model with, when its listing says.
    pub context: Option<u64>,
    /// The listing's field `context` came from, for people.
    pub context_source: Option<&'static str>,
    /// The length the model was trained for, when the listing says: shown, never used as the
    /// window (a model is often loaded with far less).
    pub trained: Option<u64>,
}

/// How requests are sent: streaming or not, and how long to wait between retries.
#[derive(Clone, Debug)]
pub struct BackendOptions {
    pub stream: bool,
    /// The first retry waits about this long; each next one twice as long (with jitter).
    pub retry_base: Duration,
    /// How long a request may wait for the first sign of a reply (a token, or llama.cpp's
    /// prompt progress): a CPU reading a long prompt is slow to start, but not this slow.
    pub first_token: Duration,
    /// How long a server that answers "loading model" (503) is waited for.
    pub load_wait: Duration,
    /// How long one reply may take once it has begun (the first event after the prompt was
    /// read): a stream of empty deltas or keep-alive comments is never silent, so only this
    /// ends it.
    pub reply: Duration,
}

/// What a request is waiting on, for a user who would otherwise see nothing for minutes.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// The server is still loading the model (a 503 saying so); waited this long so far.
    Loading { waited: Duration },
    /// llama.cpp reading the prompt (`return_progress`): tokens processed of the total, and
    /// those it had in its cache.
    PromptProgress {
        processed: u64,
        total: u64,
        cached: u64,
    },
    /// A piece of the reply as it streams: the answer's text, or its reasoning.
    Piece { text: String, reasoning: bool },
}

/// Receives [`Notice`]s while a request waits.
pub type NoticeSink = std::sync::Arc<dyn Fn(&Notice) + Send + Sync>;

impl Default for BackendOptions {
    fn default() -> BackendOptions {
        BackendOptions {
            stream: true,
            retry_base: Duration::from_millis(500),
            first_token: Duration::from_secs(900),
            load_wait: Duration::from_secs(600),
            reply: Duration::from_secs(slmcode_aci::config::DEFAULT_REPLY_TIMEOUT as u64),
        }
    }
}

/// An OpenAI-compatible endpoint.
#[derive(Clone)]
pub struct Backend {
    http: reqwest::Client,
    base: String,
    api_key: Option<String>,
    options: BackendOptions,
    /// Set when the server is Ollama: chat goes to its native API, with the run's context.
    ollama: Option<Ollama>,
    notices: Option<NoticeSink>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("Backend")
            .field("base", &self.base)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// What one chat request asks for.
#[derive(Clone, Debug)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    /// Tool definitions in the OpenAI `tools` format; empty to offer none.
    pub tools: &'a [Value],
    pub max_tokens: Option<u32>,
    /// Sampling settings, by name ([`crate::sampling`]).
    pub sampling: &'a [(&'static str, f64)],
    /// When to stop a reply that loops or rambles.
    pub runaway: RunawayLimits,
    /// The `think` setting: `auto` sends nothing; `stop` turns thinking off every way the
    /// servers know (the retry after the thinking budget).
    pub think: &'a str,
    /// Tokens of reasoning a reply may spend before it is stopped (0: no budget).
    pub think_budget: usize,
}

impl Backend {
    /// A backend for `endpoint` (its base URL, e.g. `http://127.0.0.1:11434/v1`).
    pub fn new(
        endpoint: &str,
        api_key: Option<String>,
        options: BackendOptions,
    ) -> Result<Backend, BackendError> {
        let base = endpoint.trim_end_matches('/').to_string();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // Once a reply flows, a silence this long is a dead stream (the wait for the first
            // token has its own, longer deadline: `first_token`).
            .read_timeout(Duration::from_secs(300));
        if is_loopback(&base) {
            // A proxy from the environment must not swallow a local server.
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| BackendError::Protocol {
            endpoint: base.clone(),
            detail: e.to_string(),
        })?;
        Ok(Backend {
            http,
            base,
            api_key: api_key.filter(|k| !k.is_empty()),
            options,
            ollama: None,
            notices: None,
        })
    }

    /// The endpoint's base URL.
    pub fn endpoint(&self) -> &str {
        &self.base
    }

    /// The server's root: the endpoint without its `/v1`.
    pub(crate) fn root(&self) -> &str {
        self.base.strip_suffix("/v1").unwrap_or(&self.base)
    }

    /// Whether the server is Ollama: only Ollama answers `/api/version` with its version.
    pub async fn is_ollama(&self) -> bool {
        let url = format!("{}/api/version", self.root());
        let Ok(response) = self.get(&url).timeout(Duration::from_secs(5)).send().await else {
            return false;
        };
        response.status().is_success()
            && page_json(response)
                .await
                .is_some_and(|v| v["version"].is_string())
    }

    /// Sends what a request waits on (the model loading, the prompt being read) to `sink`.
    pub fn on_notice(&mut self, sink: NoticeSink) {
        self.notices = Some(sink);
    }

    pub(super) fn notice(&self, notice: Notice) {
        if let Some(sink) = &self.notices {
            sink(&notice);
        }
    }

    /// A streamed piece of a reply, for front ends that show the reply as it is written.
    pub(super) fn piece(&self, text: &str, reasoning: bool) {
        if !text.is_empty() && self.notices.is_some() {
            self.notice(Notice::Piece {
                text: text.to_string(),
                reasoning,
            });
        }
    }

    /// Whether replies are asked for as streams.
    pub fn streaming(&self) -> bool {
        self.options.stream
    }

    /// Asks for whole replies from now on: a server whose streams came back broken.
    pub fn stop_streaming(&mut self) {
        self.options.stream = false;
    }

    /// Chats through Ollama's native API from now on, asking for `num_ctx` tokens of context
    /// on every request.
    pub fn use_ollama_native(&mut self, num_ctx: u64) {
        self.ollama = Some(Ollama {
            root: self.root().to_string(),
            num_ctx,
        });
    }

    /// A GET with the API key, for the probes of what the server serves.
    pub(crate) fn get(&self, url: &str) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::GET, url)
    }

    /// A POST with the API key.
    pub(crate) fn post(&self, url: &str) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, url)
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let req = self.http.request(method, url);
        match &self.api_key {
            Some(key) => req.bearer_auth(key),
            None => req,
        }
    }

    /// The body of an OpenAI chat-completions request.
    fn openai_body(&self, request: &ChatRequest<'_>) -> Value {
        let mut body = json!({
            "model": request.model,
            "messages": request.messages,
            "stream": self.options.stream,
        });
        if !request.tools.is_empty() {
            body["tools"] = Value::Array(request.tools.to_vec());
            body["tool_choice"] = json!("auto");
        }
        if let Some(n) = request.max_tokens {
            body["max_tokens"] = json!(n);
        }
        for (key, value) in request.sampling {
            let value = if crate::sampling::is_integer(key) {
                json!(*value as i64)
            } else {
                json!(value)
            };
            // llama.cpp says repeat_penalty, vLLM repetition_penalty: both are sent.
            if *key == "repeat_penalty" {
                body["repetition_penalty"] = value.clone();
            }
            body[*key] = value;
        }
        if self.options.stream {
            body["stream_options"] = json!({"include_usage": true});
            // llama.cpp then reports its progress through a long prompt (others ignore it).
            body["return_progress"] = json!(true);
        }
        // Thinking, as vLLM, llama.cpp and SGLang take it: the template's switch (Qwen3 and
        // the like) and, for a level, the effort (gpt-oss).
        match request.think {
            "on" => body["chat_template_kwargs"] = json!({"enable_thinking": true}),
            "off" => body["chat_template_kwargs"] = json!({"enable_thinking": false}),
            "stop" => {
                body["chat_template_kwargs"] = json!({"enable_thinking": false});
                body["reasoning_effort"] = json!("low");
            }
            level @ ("low" | "medium" | "high") => {
                body["chat_template_kwargs"] = json!({"enable_thinking": true});
                body["reasoning_effort"] = json!(level);
            }
            _ => {}
        }
        body
    }

    /// Sends one chat request, retrying what is transient.
    pub async fn chat(&self, request: &ChatRequest<'_>) -> Result<Reply, BackendError> {
        let (url, body) = match &self.ollama {
            Some(o) => (o.url(), o.body(request, self.options.stream)),
            None => (
                format!("{}/chat/completions", self.base),
                self.openai_body(request),
            ),
        };
        let mut last = String::new();
        let loading_since = Instant::now();
        let mut attempt = 0;
        while attempt < TRIES {
            if attempt > 0 {
                tokio::time::sleep(self.backoff(attempt, None)).await;
            }
            attempt += 1;
            let started = Instant::now();
            let mut clock = Clock::new(self.options.first_token, self.options.reply);
            let send = self.request(reqwest::Method::POST, &url).json(&body).send();
            let Ok(sent) = tokio::time::timeout_at(clock.first, send).await else {
                return Err(self.no_first_token());
            };
            let response = match sent {
                Ok(r) => r,
                Err(e) if e.is_connect() && attempt == 1 => {
                    return Err(BackendError::Unreachable {
                        endpoint: self.base.clone(),
                        detail: connect_detail(&e),
                    })
                }
                Err(e) => {
                    last = e.to_string();
                    continue;
                }
            };
            let status = response.status();
            if status.is_success() {
                let result = if self.options.stream {
                    match &self.ollama {
                        Some(_) => {
                            ollama::read_stream(
                                self,
                                response,
                                request.runaway,
                                request.think_budget,
                                clock,
                            )
                            .await
                        }
                        None => {
                            self.read_stream(response, request.runaway, request.think_budget, clock)
                                .await
                        }
                    }
                } else {
                    let read = async {
                        match &self.ollama {
                            Some(_) => ollama::read_whole(response).await,
                            None => self.read_whole(response).await,
                        }
                    };
                    // The answer has begun (its headers came): the rest by the reply deadline.
                    clock.begin();
                    let whole = tokio::time::timeout_at(clock.deadline(), read)
                        .await
                        .unwrap_or(Err(Transient::ReplyDeadline));
                    whole.map(|mut reply| {
                        // A whole reply reaches the front ends in one piece each.
                        self.piece(&reply.reasoning, true);
                        self.piece(&reply.content, false);
                        // A whole reply is judged at once, the same way.
                        if let Some(r) =
                            Watch::new(request.runaway).verdict(&reply.content, &reply.reasoning)
                        {
                            reply.finish_reason = Some("runaway".into());
                            reply.runaway = Some(r.to_string());
                        }
                        // Whole, the thinking was already spent: the budget acts only on a
                        // reply that thought past it and holds no answer.
                        if request.think_budget > 0
                            && reply.thought_tokens_whole() > request.think_budget
                            && reply.tool_calls.is_empty()
                            && reply.content_after_thoughts().trim().is_empty()
                        {
                            // Thought past the budget (looping there, often): the notes are
                            // kept and the turn asked again, rather than the reply dropped.
                            reply.finish_reason = Some(THINK_BUDGET.into());
                            reply.runaway = None;
                        }
                        reply
                    })
                };
                match result {
                    Ok(mut reply) => {
                        reply.elapsed = started.elapsed();
                        return Ok(reply);
                    }
                    // A stream cut in the middle is a transient failure: ask again.
                    Err(Transient::Failed(detail)) => {
                        last = detail;
                        continue;
                    }
                    Err(Transient::NoFirstToken) => return Err(self.no_first_token()),
                    Err(Transient::ReplyDeadline) => {
                        return Err(BackendError::ReplyTimeout {
                            endpoint: self.base.clone(),
                            secs: self.options.reply.as_secs(),
                        })
                    }
                    // An error the server sent inside the reply is judged as its status
                    // would be: a tool parser's failure switches to text, not retried.
                    Err(Transient::Reported(status, detail)) => {
                        if !request.tools.is_empty() && tools_refused(&detail) {
                            return Err(BackendError::ToolsRefused {
                                endpoint: self.base.clone(),
                                status,
                                detail,
                            });
                        }
                        if is_context_overflow(&detail) {
                            return Err(self.overflow(detail));
                        }
                        last = format!("the server reported: {detail}");
                        continue;
                    }
                }
            }
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let text = body_bytes(response, MAX_PAGE_BYTES)
                .await
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let detail = error_detail(&text);
            let code = status.as_u16();
            // llama.cpp answers 503 "Loading model" until the model is in memory: waited out
            // (up to `load_wait`), said, and not counted as a failed try.
            if code == 503 && detail.to_ascii_lowercase().contains("loading") {
                let waited = loading_since.elapsed();
                if waited < self.options.load_wait {
                    self.notice(Notice::Loading { waited });
                    attempt -= 1;
                    tokio::time::sleep((self.options.retry_base * 4).min(Duration::from_secs(5)))
                        .await;
                    continue;
                }
                return Err(BackendError::GaveUp {
                    endpoint: self.base.clone(),
                    tries: attempt,
                    detail: format!(
                        "the server was still loading the model after {} s (503: {detail})",
                        waited.as_secs()
                    ),
                });
            }
            if !request.tools.is_empty() && tools_refused(&detail) {
                return Err(BackendError::ToolsRefused {
                    endpoint: self.base.clone(),
                    status: code,
                    detail,
                });
            }
            if code == 429 || status.is_server_error() {
                if is_context_overflow(&detail) {
                    return Err(self.overflow(detail));
                }
                last = format!("{code}: {detail}");
                if let Some(secs) = retry_after {
                    if attempt + 1 < TRIES {
                        tokio::time::sleep(self.backoff(attempt + 1, Some(secs))).await;
                    }
                }
                continue;
            }
            if is_context_overflow(&detail) {
                return Err(self.overflow(detail));
            }
            let hint = match code {
                401 | 403 => ". Set the key: api_key_env in ~/.config/slmcode/config.yaml names the environment variable that holds it",
                404 => ". Check the endpoint (it should end in /v1) and the model name (`slmcode models` lists them)",
                _ => "",
            };
            return Err(BackendError::Refused {
                endpoint: self.base.clone(),
                status: code,
                detail,
                hint,
            });
        }
        Err(BackendError::GaveUp {
            endpoint: self.base.clone(),
            tries: TRIES,
            detail: last,
        })
    }

    fn no_first_token(&self) -> BackendError {
        BackendError::NoFirstToken {
            endpoint: self.base.clone(),
            secs: self.options.first_token.as_secs(),
        }
    }

    fn overflow(&self, detail: String) -> BackendError {
        BackendError::ContextOverflow {
            endpoint: self.base.clone(),
            detail,
        }
    }

    /// Exponential backoff with jitter (0.5×–1.5×), or the server's Retry-After (capped).
    fn backoff(&self, attempt: u32, retry_after: Option<u64>) -> Duration {
        if let Some(secs) = retry_after {
            return Duration::from_secs(secs.min(30));
        }
        let base = self.options.retry_base * 2u32.saturating_pow(attempt.saturating_sub(1));
        base.mul_f64(0.5 + jitter())
    }

    /// The models the server offers: `/v1/models`, and Ollama's `/api/tags` when it answers.
    pub async fn models(&self) -> Result<Vec<ModelInfo>, BackendError> {
        let url = format!("{}/models", self.base);
        let response = self
            .request(reqwest::Method::GET, &url)
            .send()
            .await
            .map_err(|e| self.unreachable(&e))?;
        let status = response.status();
        let text = body_bytes(response, MAX_PAGE_BYTES)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|detail| BackendError::Protocol {
                endpoint: self.base.clone(),
                detail: format!("/models: {detail}"),
            })?;
        if !status.is_success() {
            return Err(BackendError::Refused {
                endpoint: self.base.clone(),
                status: status.as_u16(),
                detail: error_detail(&text),
                hint: "",
            });
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| BackendError::Protocol {
            endpoint: self.base.clone(),
            detail: format!("/models is not JSON: {e}"),
        })?;
        let mut models: Vec<ModelInfo> = value["data"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|m| {
                        let id = m["id"].as_str()?.to_string();
                        let (served, trained) = crate::served_context::listed_context(m);
                        Some(ModelInfo {
                            id,
                            details: String::new(),
                            context: served.map(|s| s.0),
                            context_source: served.map(|s| s.1),
                            trained,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Ollama says more about each model (size, quantization) at /api/tags.
        if let Some(root) = self.base.strip_suffix("/v1") {
            if let Ok(r) = self
                .request(reqwest::Method::GET, &format!("{root}/api/tags"))
                .send()
                .await
            {
                if let Some(tags) = page_json(r).await {
                    for m in tags["models"].as_array().into_iter().flatten() {
                        let Some(name) = m["name"].as_str().or(m["model"].as_str()) else {
                            continue;
                        };
                        let details = ollama_details(m);
                        match models.iter_mut().find(|x| x.id == name) {
                            Some(x) => x.details = details,
                            None => models.push(ModelInfo {
                                id: name.to_string(),
                                details,
                                context: None,
                                context_source: None,
                                trained: None,
                            }),
                        }
                    }
                }
            }
        }
        Ok(models)
    }

    fn unreachable(&self, e: &reqwest::Error) -> BackendError {
        BackendError::Unreachable {
            endpoint: self.base.clone(),
            detail: connect_detail(e),
        }
    }
}

/// Why reading a reply failed.
enum Transient {
    /// Worth another try (a stream cut in the middle, a reply that is not JSON).
    Failed(String),
    /// The server reported an error inside a reply that had begun (llama.cpp's and Ollama's
    /// way of saying, mid-stream, that their tool parser failed): its code (500 when it gives
    /// none) and words, judged like an error status.
    Reported(u16, String),
    /// Nothing came before the first-token deadline: another try would wait as long again.
    NoFirstToken,
    /// The reply began but did not finish within the reply deadline.
    ReplyDeadline,
}

fn ollama_details(m: &Value) -> String {
    let d = &m["details"];
    let mut parts = Vec::new();
    if let Some(p) = d["parameter_size"].as_str() {
        parts.push(p.to_string());
    }
    if let Some(q) = d["quantization_level"].as_str() {
        parts.push(q.to_string());
    }
    if let Some(size) = m["size"].as_u64() {
        parts.push(format!("{:.1} GB", size as f64 / 1e9));
    }
    parts.join(", ")
}

fn is_loopback(base: &str) -> bool {
    let rest = base
        .strip_prefix("http://")
        .or_else(|| base.strip_prefix("https://"))
        .unwrap_or(base);
    let host = rest.split(['/', ':']).next().unwrap_or("");
    host == "localhost" || host.starts_with("127.") || rest.starts_with("[::1]")
}

/// A number in [0, 1) that differs from call to call; enough to spread retries apart.
fn jitter() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut x = u64::from(nanos) ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    (x % 10_000) as f64 / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_says_what_the_cache_served() {
        let openai = json!({"usage": {"prompt_tokens": 900, "completion_tokens": 20,
                                      "prompt_tokens_details": {"cached_tokens": 800}}});
        assert_eq!(Usage::of(&openai).unwrap().cached_tokens, Some(800));
        let llama = json!({"usage": {"prompt_tokens": 900, "completion_tokens": 20},
                           "timings": {"cache_n": 850, "prompt_n": 50}});
        assert_eq!(Usage::of(&llama).unwrap().cached_tokens, Some(850));
        let plain = json!({"usage": {"prompt_tokens": 900}});
        assert_eq!(Usage::of(&plain).unwrap().cached_tokens, None);
        assert_eq!(Usage::of(&json!({"usage": null})), None);
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://127.0.0.1:11434/v1"));
        assert!(is_loopback("http://localhost:8080/v1"));
        assert!(is_loopback("http://[::1]:8080/v1"));
        assert!(!is_loopback("https://api.example.com/v1"));
    }

    #[test]
    fn backoff_grows_and_honours_retry_after() {
        let b = Backend::new(
            "http://127.0.0.1:1/v1",
            Some("sk-secret-123".into()),
            BackendOptions::default(),
        )
        .unwrap();
        let first = b.backoff(1, None);
        assert!(first >= Duration::from_millis(250) && first < Duration::from_millis(750));
        let second = b.backoff(2, None);
        assert!(second >= Duration::from_millis(500) && second < Duration::from_millis(1500));
        assert_eq!(b.backoff(1, Some(3)), Duration::from_secs(3));
        assert_eq!(b.backoff(1, Some(3600)), Duration::from_secs(30));
        let shown = format!("{b:?}");
        assert!(
            shown.contains("<set>") && !shown.contains("sk-secret"),
            "{shown}"
        );
    }
}
