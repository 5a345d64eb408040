//! Tool calls a small model wrote as text instead of native `tool_calls`, and the repair of
//! the sloppy JSON it writes for arguments.
//!
//! Small local models often answer in the call format they were trained on even when the
//! server offers native tool calling: Hermes `<tool_call>` tags, Qwen3-Coder XML, fenced or
//! bare JSON, or a Python-style list. [`parse_text_calls`] finds those calls so the harness
//! can run them, and lists the names that were not offered and the attempts that could not
//! be read, so the model can be told what went wrong in one line. [`repair_json_object`]
//! fixes only the JSON mistakes whose fix is unambiguous.
//!
//! The work is split by concept. `scan` runs the passes over a reply and keeps what they
//! find in text order. The first pass, `reasoning`, takes the model's thinking (`<think>…`),
//! where a call is only considered, never meant; then one pass a format: `<tool_call>` tags (`hermes`), Qwen3-Coder
//! `<function=…>` blocks (`qwen_xml`), Markdown fences (`fence`) and calls in the prose
//! (`inline`). `classify` decides whether a JSON value is a call and to which tool,
//! `json_repair` mends the JSON, `pythonic` reads `[name(key=value)]` lists, and `lex`
//! holds the byte-level helpers they share.

mod classify;
mod fence;
mod hermes;
mod inline;
mod json_repair;
mod lex;
mod pythonic;
mod qwen_xml;
mod reasoning;
mod scan;
mod tokens;

use std::ops::Range;

use serde_json::{Map, Value};
use slmcode_aci::registry::Kind;

pub use json_repair::first_object;
use json_repair::{into_object, repair_at, surrounded};
use scan::Scan;

/// A tool the model was offered: its name and its parameters' kinds.
#[derive(Clone, Debug)]
pub struct OfferedTool {
    /// The name the model must call it by.
    pub name: String,
    /// Each parameter's name and kind, to convert Qwen XML values, which are raw text (a
    /// string parameter's value is kept exactly as written). The kind is the registry's own,
    /// so the harness hands over its tool specs as they are.
    pub params: Vec<(String, Kind)>,
}

impl OfferedTool {
    /// Every tool of `registry`, as the text parser reads calls to them.
    pub fn all_of(registry: &slmcode_aci::Registry) -> Vec<OfferedTool> {
        registry
            .specs()
            .map(|s| OfferedTool {
                name: s.name.to_string(),
                params: s
                    .params
                    .iter()
                    .map(|p| (p.name.to_string(), p.kind))
                    .collect(),
            })
            .collect()
    }
}

/// How a call was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallFormat {
    /// JSON in a `<tool_call>` tag.
    Hermes,
    /// Qwen3-Coder `<function=…>` XML, with or without the `<tool_call>` tag.
    QwenXml,
    /// JSON in a Markdown code fence.
    Fenced,
    /// A JSON call object in the prose.
    BareJson,
    /// A Python-style call list, `[name(key=value)]`.
    Pythonic,
    /// Mistral `[TOOL_CALLS]name[ARGS]{…}`, `[TOOL_CALLS]name{…}` or `[TOOL_CALLS][…]`.
    Mistral,
    /// gpt-oss Harmony, `to=functions.NAME … <|message|>{…}<|call|>`.
    Harmony,
    /// Kimi K2, `<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}`.
    Kimi,
    /// DeepSeek R1/V3/V3.1, `<｜tool▁call▁begin｜>…<｜tool▁sep｜>…`.
    DeepSeek,
    /// DeepSeek V3.2's DSML `<｜DSML｜invoke name=…>`.
    Dsml,
    /// MiniMax M2, `<minimax:tool_call><invoke name=…>`.
    MiniMax,
    /// Gemma and FunctionGemma, `call:NAME{key:value}`.
    Gemma,
    /// OLMo 3, Python-style calls in `<function_calls>`.
    Olmo,
    /// Apertus, `<|tools_prefix|>[{"NAME": {…}}]`.
    Apertus,
    /// GLM 4.5–4.7, `<tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value>`.
    Glm,
    /// Functionary v3.2, `>>>NAME` and the arguments on the next line.
    Functionary,
}

/// One tool call recovered from text.
#[derive(Clone, Debug, PartialEq)]
pub struct TextCall {
    /// The offered tool's name (a prefix like `functions.` removed).
    pub name: String,
    /// Always a JSON object.
    pub arguments: Value,
    /// How the call was written.
    pub format: CallFormat,
    /// Byte range of the call in the reply text (tags/fences included), so the harness can
    /// cut the assistant message right after the first call. Calls written together in one
    /// tag, fence or list share its range.
    pub span: Range<usize>,
    /// Which repairs were needed, e.g. ["trailing comma", "single quotes"]; empty if none.
    pub repairs: Vec<&'static str>,
}

/// What the text held.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TextCalls {
    /// Calls to offered tools, in the order they appear.
    pub calls: Vec<TextCall>,
    /// Names the model called that were not offered (each once, in order of appearance).
    pub unknown: Vec<String>,
    /// Calls that were recognizably attempted but could not be read, each described in one
    /// line for the model, e.g. "a <tool_call> block whose JSON could not be read: expected
    /// `,` or `}` at line 1 column 40".
    pub unreadable: Vec<String>,
}

/// Finds the tool calls written as text in `reply`.
pub fn parse_text_calls(reply: &str, offered: &[OfferedTool]) -> TextCalls {
    let mut scan = Scan::new(reply, offered);
    scan.reasoning();
    scan.tokens();
    scan.tags();
    scan.functions();
    scan.fences();
    scan.inline();
    scan.finish()
}

/// A reply split into its answer and its reasoning: every reasoning block the call parser
/// skips (`<think>…</think>`, a block whose opening tag was in the prompt, one never closed,
/// Harmony's analysis channel) is reasoning; the rest is the answer, where a final JSON may be
/// read.
pub fn split_reasoning(reply: &str) -> (String, String) {
    let mut scan = Scan::new(reply, &[]);
    scan.reasoning();
    let mut answer = String::new();
    let mut reasoning = String::new();
    let mut at = 0;
    for r in &scan.taken {
        answer.push_str(reply.get(at..r.start).unwrap_or_default());
        reasoning.push_str(reply.get(r.clone()).unwrap_or_default());
        at = r.end;
    }
    answer.push_str(reply.get(at..).unwrap_or_default());
    (answer, reasoning)
}

/// Reads a JSON object the way a small model writes one, repairing what is unambiguous.
/// Returns the object and the repairs made. Used for native `tool_calls[].function.arguments`
/// strings too. An empty or whitespace-only string is `{}`.
pub fn repair_json_object(text: &str) -> Result<(Value, Vec<&'static str>), String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok((Value::Object(Map::new()), Vec::new()));
    }
    let (value, repairs) = match serde_json::from_str::<Value>(t) {
        Ok(v) => (v, Vec::new()),
        Err(_) if t.starts_with(['{', '[']) => {
            repair_at(text, text.len() - text.trim_start().len())?
        }
        Err(e) => surrounded(text, &e)?,
    };
    into_object(value, repairs)
}
