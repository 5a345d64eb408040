//! Formats written with a model's own special tokens, which a server without that model's
//! tool parser passes through as text: Mistral `[TOOL_CALLS]`, gpt-oss Harmony
//! (`to=functions.NAME … <|message|>{…}<|call|>`), Kimi K2 `<|tool_call_begin|>`, DeepSeek
//! `<｜tool▁call▁begin｜>` and V3.2's DSML, MiniMax M2 `<invoke name=…>`, Gemma's `call:NAME{…}`,
//! OLMo 3 `<function_calls>` and Apertus `<|tools_prefix|>`. GLM's `<arg_key>` form lives in
//! the `<tool_call>` tag and is read by the tag pass through `glm`.
//!
//! These tokens are not prose: a model writes them only to call. Each pass takes what it reads,
//! and a call it cannot read is said to be unreadable, with why.

//!
//! One file per family of shapes: `json` (a special token, then JSON: Mistral, Harmony, Kimi,
//! DeepSeek, Apertus), `invoke` (`<invoke name=…>` XML: MiniMax, DSML, `<function name=…>`),
//! `gemma`, `lines` (a call a line: OLMo 3, Functionary) and `glm`.

mod gemma;
mod glm;
mod invoke;
mod json;
mod lines;

use serde_json::Value;
use slmcode_aci::registry::Kind;

use super::json_repair::{note, repair_value};
use super::lex::find_at;
use super::repair_json_object;
use super::scan::{Scan, Site};
use super::CallFormat;

impl Scan<'_> {
    /// Every special-token format, each its own pass.
    pub(in super::super) fn tokens(&mut self) {
        self.invoke_blocks();
        self.functionary();
        self.mistral();
        self.harmony();
        self.kimi();
        self.deepseek();
        self.gemma();
        self.olmo();
        self.apertus();
    }

    /// The next `needle` at or after `from` that no earlier pass (or the reasoning) took.
    pub(super) fn free(&self, from: usize, needle: &str) -> Option<usize> {
        let mut from = from;
        loop {
            let at = find_at(self.reply, from, needle)?;
            match self.taken_at(at) {
                Some(end) => from = end.max(at + needle.len()),
                None => return Some(at),
            }
        }
    }

    /// A JSON arguments object at `at` (up to `limit`), read as the model wrote it.
    pub(super) fn json_call(&mut self, site: &Site, name: &str, raw: &str, what: &str) {
        match repair_json_object(raw) {
            Ok((args, repairs)) => self.call(site, name, args, repairs),
            Err(e) => self.unreadable(
                site.key,
                format!("{what} for {name} whose JSON could not be read: {e}"),
            ),
        }
    }

    /// The block `open` starts at `at`, up to its `close` (or the reply's end when it has
    /// none): its body, and its site, taken.
    pub(super) fn block(
        &mut self,
        at: usize,
        (open, close): (&str, &str),
        format: CallFormat,
    ) -> (std::ops::Range<usize>, Site) {
        let text = self.reply;
        let body = at + open.len();
        let body_end = find_at(text, body, close).unwrap_or(text.len());
        let end = (body_end + close.len()).min(text.len());
        (body..body_end, self.site(at, end, format))
    }

    pub(super) fn site(&mut self, start: usize, end: usize, format: CallFormat) -> Site {
        self.take(start..end);
        Site {
            key: start,
            span: start..end,
            format,
        }
    }
}

/// The end of a tool name at `from`: letters, digits and `_ - . :`.
pub(super) fn name_end(b: &[u8], from: usize) -> usize {
    name_end_at(b, from, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':')
    })
}

pub(super) fn name_end_at(b: &[u8], from: usize, ok: impl Fn(u8) -> bool) -> usize {
    let mut i = from;
    while b.get(i).is_some_and(|&c| ok(c)) {
        i += 1;
    }
    i
}

pub(super) fn strip_newlines(s: &str) -> &str {
    let s = s.strip_prefix('\n').unwrap_or(s);
    s.strip_suffix('\n').unwrap_or(s)
}

/// A raw text value typed by the kind the tool declares; undeclared, a number, boolean or
/// JSON structure when `guess` and it reads as one, else the text.
pub(super) fn typed_value(
    kind: Option<Kind>,
    raw: &str,
    guess: bool,
    repairs: &mut Vec<&'static str>,
) -> Value {
    let t = raw.trim();
    let text = || Value::String(raw.to_string());
    match kind {
        Some(Kind::String) => text(),
        Some(Kind::Integer { .. }) => t.parse::<i64>().map(Value::from).unwrap_or_else(|_| text()),
        Some(Kind::Boolean) => match t.to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => text(),
        },
        Some(Kind::StringList) | Some(Kind::Object) => match repair_value(t) {
            Ok((v, r)) => {
                for r in r {
                    note(repairs, r);
                }
                v
            }
            Err(_) => text(),
        },
        None if guess => {
            // JSON whose quotes the model escaped (`[{\"id\": 1}]`) reads once unescaped.
            let unescaped =
                (t.starts_with(['[', '{']) && t.contains("\\\"")).then(|| t.replace("\\\"", "\""));
            match serde_json::from_str::<Value>(t)
                .or_else(|e| unescaped.as_deref().map_or(Err(e), serde_json::from_str))
            {
                Ok(
                    v @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::Object(_)),
                ) => v,
                _ => text(),
            }
        }
        None => text(),
    }
}

/// A call's span `call` widened over the section markers right around it (a tool-calls
/// section holding this call), so the section belongs to the call. An empty `open` marks none.
pub(super) fn within_section(
    text: &str,
    call: std::ops::Range<usize>,
    open: &str,
    close: &str,
) -> (usize, usize) {
    let before = super::lex::sub(text, 0, call.start).trim_end();
    let start = if !open.is_empty() && before.ends_with(open) {
        before.len() - open.len()
    } else {
        call.start
    };
    let after = super::lex::skip_ws(text.as_bytes(), call.end);
    let end = if super::lex::sub(text, after, text.len()).starts_with(close) {
        after + close.len()
    } else {
        call.end
    };
    (start, end)
}
