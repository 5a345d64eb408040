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
    /// The reply began but did not end by the reply deadline (a stream of empty deltas or
    /// keep-alive comments is never silent); another try would stream as long.
    #[error(
        "{endpoint} did not finish its reply within {secs} s of beginning it: the server kept \
         the reply open without ending it, or the model writes very slowly. On slow hardware \
         raise reply_timeout (seconds), or lower max_tokens"
    )]
    ReplyTimeout { endpoint: String, secs: u64 },
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

/// The phrasings servers use when they refuse `tools` for this model, cannot render or parse
/// with them, or fail to parse the model's tool calls with their own parser: deterministic
/// failures, which another try of the same request only repeats (ollama/ollama#14834,
/// #18563), but which tools described in the prompt avoid. Each as the server words it today:
/// - refusing tools: Ollama ("… does not support tools"), vLLM ("\"auto\" tool choice
///   requires --enable-auto-tool-choice and --tool-call-parser to be set"), llama.cpp without
///   `--jinja` ("tools param requires --jinja flag"), SGLang without a parser ("Unsupported
///   tool_call_parser: None", sgl-project/sglang#10184);
/// - a template that breaks on tools: llama.cpp ("Unable to generate parser for this
///   template", noonghunna/club-3090#1250), LM Studio ("Error rendering prompt with jinja
///   template", lmstudio-ai/lmstudio-bug-tracker#2012, #2180 — in a stream too);
/// - the server's parser failing on the model's call: llama.cpp ("Failed to parse input at
///   pos 1360: <tool_call>…", ggml-org/llama.cpp#24644, #23838, #20761, #20532 — a 500, or an
///   error event in a stream), its older "Failed to parse tool call arguments as JSON";
///   Ollama ("error parsing tool call: raw=…" for JSON formats; its Qwen3-Coder, GLM and
///   Qwen3.5 parsers' Go XML errors, "XML syntax error on line 127: element `<parameter>` closed
///   by `</function>`", "failed to parse XML: …", "expected element type `<function>` but have
///   `<parameter>`", ollama/ollama#14834, #18563, continuedev/continue#10896; its Qwen3 parser's
///   "failed to parse JSON: unexpected end of JSON input", ollama/ollama#14570 — a 500, or a
///   `{"error": …}` line in a stream, ollama/ollama#12380).
///
/// vLLM and SGLang log their parser's failure and return the reply as text, which slmcode's
/// own parser reads; LM Studio drops the call it cannot parse and says so only in its log.
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
        "failed to parse input at pos",
        "unable to generate parser for this template",
        "error rendering prompt with jinja template",
        "xml syntax error",
        "failed to parse xml",
        "expected element type <",
        "failed to parse json",
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
            // llama.cpp's chat parser on a Qwen3.6 call (ggml-org/llama.cpp#24644).
            "Failed to parse input at pos 1360: <tool_call>\n<function=write>\n<parameter=content>",
            // LFM2.5 (ggml-org/llama.cpp#23838).
            "Failed to parse input at pos 395: <|tool_call_start|>[web_search_exa(query='x')]<|tool_call_end|>",
            // llama.cpp unable to build a parser from the template (noonghunna/club-3090#1250).
            "Unable to generate parser for this template. Automatic parser generation failed: While executing CallExpression at line 163, column 57",
            // Ollama's Qwen3-Coder parser (ollama/ollama#18563) and GLM parser
            // (continuedev/continue#10896).
            "XML syntax error on line 127: element <parameter> closed by </function>",
            "failed to parse XML: XML syntax error on line 1: element <tool_call> closed by </arg_value>",
            "expected element type <function> but have <parameter>",
            // Ollama's Qwen3 parser on a call cut off (ollama/ollama#14570).
            "failed to parse JSON: unexpected end of JSON input",
            // SGLang without --tool-call-parser (sgl-project/sglang#10184).
            "Internal server error: Unsupported tool_call_parser: None",
            // LM Studio's template on the request's tools (lmstudio-ai/lmstudio-bug-tracker#2012).
            "Error rendering prompt with jinja template: \"Cannot call something that is not a function: got UndefinedValue\".",
        ] {
            assert!(tools_refused(d), "{d}");
        }
        for d in [
            "model not found",
            "This model's maximum context length is 8192 tokens",
            "invalid api key",
            "Loading model",
            "the request exceeds the available context size, try increasing it",
        ] {
            assert!(!tools_refused(d), "{d}");
        }
    }
}
