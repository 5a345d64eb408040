//! Why a request did not produce a reply, told apart so that each failure gets what it needs:
//! a retry (transient), one clear error naming what to change (nothing listening, a refused
//! key, a context overflow), or — when the server refuses `tools` or cannot parse the model's
//! calls — the switch to tools described in the prompt ([`tools_refused`]), never a retry of
//! a request that will fail the same way.

use serde_json::Value;

/// Why a request did not produce a reply. Every message names the endpoint and what to do.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(
        "no model server answers at {endpoint} ({detail}). Start one — `ollama serve` (then \
         `ollama pull qwen2.5-coder:7b`), `llama-server -m MODEL.gguf --port 8080 --jinja`, \
         `vllm serve MODEL`, or LM Studio's server — or point slmcode elsewhere with \
         --endpoint URL or SLMCODE_ENDPOINT"
    )]
    Unreachable { endpoint: String, detail: String },
    #[error(
        "the prompt does not fit the model's context at {endpoint}: {detail}. Raise the \
         server's context (Ollama: OLLAMA_CONTEXT_LENGTH=16384 ollama serve; llama.cpp: -c \
         16384) and set context_window to match"
    )]
    ContextOverflow { endpoint: String, detail: String },
    #[error("{endpoint} refused the request ({status}): {detail}{hint}")]
    Refused {
        endpoint: String,
        status: u16,
        detail: String,
        hint: &'static str,
    },
    /// The server refused the request's `tools`, or its tool parser failed on the reply: the
    /// same request fails the same way, so it is not retried.
    #[error(
        "{endpoint} cannot take tools for this model ({status}: {detail}). Set tool_mode: text \
         in the config to describe the tools in the prompt instead (tool_mode: auto does that \
         by itself)"
    )]
    ToolsRefused {
        endpoint: String,
        status: u16,
        detail: String,
    },
    /// Nothing came back before the first-token deadline; another try would wait as long.
    #[error(
        "{endpoint} sent nothing within {secs} s: the model is still reading the prompt, or the \
         server is stuck. On slow hardware raise first_token_timeout, or use a smaller \
         context_window so there is less to read"
    )]
    NoFirstToken { endpoint: String, secs: u64 },
    #[error("{endpoint} failed {tries} times: {detail}")]
    GaveUp {
        endpoint: String,
        tries: u32,
        detail: String,
    },
    #[error("{endpoint} sent something that is not an OpenAI chat completion: {detail}")]
    Protocol { endpoint: String, detail: String },
}

/// The server's error message out of an error body (`{"error": {"message": …}}` or text).
pub(super) fn error_detail(text: &str) -> String {
    let from_json = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or(v["error"].as_str())
            .or(v["message"].as_str())
            .or(v["detail"].as_str())
            .map(str::to_string)
    });
    let detail = from_json.unwrap_or_else(|| text.trim().to_string());
    let mut detail: String = detail.chars().take(400).collect();
    if detail.is_empty() {
        detail = "(no message)".into();
    }
    detail
}

/// The phrasings servers use when the prompt is longer than the context.
pub fn is_context_overflow(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "maximum context",
        "context window",
        "exceeds the available context",
        "too many tokens",
        "prompt is too long",
        "input is too long",
        "exceed_context_size",
    ]
    .iter()
    .any(|p| d.contains(p))
}

pub(super) fn connect_detail(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    let mut last = e.to_string();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

/// The phrasings servers use when they refuse `tools` for this model or fail to parse the
/// model's tool calls with their own parser: deterministic failures, which another try of the
/// same request only repeats (ollama#14834), but which tools described in the prompt avoid.
/// Ollama ("… does not support tools", "error parsing tool call"), vLLM ("auto" tool choice
/// requires --enable-auto-tool-choice), llama.cpp without `--jinja` ("tools param requires
/// --jinja flag"), and the parse errors of their tool parsers.
pub fn tools_refused(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase();
    [
        "does not support tools",
        "does not support tool",
        "enable-auto-tool-choice",
        "tool choice requires",
        "tool_choice requires",
        "requires --jinja",
        "tools param requires",
        "error parsing tool call",
        "failed to parse tool call",
        "tool call parse",
        "error in extracting tool call",
        "tool-call-parser",
        "tool_call_parser",
    ]
    .iter()
    .any(|p| d.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_phrasings_are_recognized() {
        for d in [
            "This model's maximum context length is 8192 tokens",
            "the request exceeds the available context size, try increasing it",
            "prompt is too long: 9000 tokens > 8192",
            "Input is too long for requested model",
        ] {
            assert!(is_context_overflow(d), "{d}");
        }
        assert!(!is_context_overflow("model not found"));
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"model 'x' not found"}}"#),
            "model 'x' not found"
        );
        assert_eq!(error_detail(r#"{"error":"bad"}"#), "bad");
        assert_eq!(error_detail("plain text\n"), "plain text");
        assert_eq!(error_detail(""), "(no message)");
    }

    #[test]
    fn tool_refusals_of_each_server_are_recognized() {
        for d in [
            // Ollama, a model whose template has no tools.
            "registry.ollama.ai/library/gemma3:4b does not support tools",
            // Ollama's parser on a reply it cannot read.
            "error parsing tool call: raw='{\"name\": \"ws_read\"', err=unexpected end of JSON input",
            // vLLM without the flags.
            "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            // llama.cpp without --jinja.
            "tools param requires --jinja flag",
            "Failed to parse tool call arguments as JSON",
        ] {
            assert!(tools_refused(d), "{d}");
        }
        for d in [
            "model not found",
            "This model's maximum context length is 8192 tokens",
            "invalid api key",
        ] {
            assert!(!tools_refused(d), "{d}");
        }
    }
}
