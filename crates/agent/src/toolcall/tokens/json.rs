//! A special token, then the arguments as JSON: Mistral `[TOOL_CALLS]`, gpt-oss Harmony,
//! Kimi K2, DeepSeek R1/V3/V3.1 and Apertus.

use serde_json::Value;

use super::super::classify::classify_all;
use super::super::json_repair::repair_value;
use super::super::lex::{balanced_end, find_at, skip_ws, strip_fence, sub};
use super::super::scan::Scan;
use super::super::CallFormat;
use super::{name_end, name_end_at, within_section};

const MISTRAL: &str = "[TOOL_CALLS]";
const MISTRAL_ARGS: &str = "[ARGS]";
const MISTRAL_ID: &str = "[CALL_ID]";

const HARMONY_TO: &str = "to=functions.";
const HARMONY_MESSAGE: &str = "<|message|>";
const HARMONY_ENDS: [&str; 4] = ["<|call|>", "<|end|>", "<|return|>", "<|start|>"];

const KIMI_CALL: &str = "<|tool_call_begin|>";
const KIMI_ARGS: &str = "<|tool_call_argument_begin|>";
const KIMI_END: &str = "<|tool_call_end|>";
const KIMI_SECTION: &str = "<|tool_calls_section_begin|>";
const KIMI_SECTION_END: &str = "<|tool_calls_section_end|>";

const DEEPSEEK_CALL: &str = "<｜tool▁call▁begin｜>";
const DEEPSEEK_SEP: &str = "<｜tool▁sep｜>";
const DEEPSEEK_END: &str = "<｜tool▁call▁end｜>";
const DEEPSEEK_SECTION: &str = "<｜tool▁calls▁begin｜>";
const DEEPSEEK_SECTION_END: &str = "<｜tool▁calls▁end｜>";
const DEEPSEEK_OLD_OPEN: &str = "<｜tool▁calls｜>";

const APERTUS: (&str, &str) = ("<|tools_prefix|>", "<|tools_suffix|>");

impl Scan<'_> {
    /// Mistral: `[TOOL_CALLS]name[ARGS]{…}`, `[TOOL_CALLS]name{…}` (v11 and later), or
    /// `[TOOL_CALLS][{…}, …]`.
    pub(super) fn mistral(&mut self) {
        const WHAT: &str = "a [TOOL_CALLS] call";
        let text = self.reply;
        let b = text.as_bytes();
        let mut from = 0;
        while let Some(at) = self.free(from, MISTRAL) {
            let mut i = skip_ws(b, at + MISTRAL.len());
            if b.get(i) == Some(&b'[') {
                let end = balanced_end(b, i).unwrap_or(text.len());
                let site = self.site(at, end, CallFormat::Mistral);
                match repair_value(sub(text, i, end)) {
                    Ok((v, repairs)) => {
                        for (k, c) in classify_all(&v, false).into_iter().enumerate() {
                            self.classified(&site.nth(k), c, &repairs, WHAT);
                        }
                    }
                    Err(e) => {
                        self.unreadable(at, format!("{WHAT} whose JSON could not be read: {e}"))
                    }
                }
                from = end.max(at + 1);
                continue;
            }
            let name_end = name_end(b, i);
            let name = sub(text, i, name_end).to_string();
            i = name_end;
            for marker in [MISTRAL_ID, MISTRAL_ARGS] {
                if sub(text, i, text.len()).starts_with(marker) {
                    i += marker.len();
                    if marker == MISTRAL_ID {
                        i = name_end_at(b, i, |c| c != b'[' && c != b'{');
                    }
                }
            }
            let i = skip_ws(b, i);
            if name.is_empty() || b.get(i) != Some(&b'{') {
                self.unreadable(
                    at,
                    format!("{WHAT} with no name and JSON arguments after it"),
                );
                from = at + MISTRAL.len();
                continue;
            }
            let end = balanced_end(b, i).unwrap_or(text.len());
            let site = self.site(at, end, CallFormat::Mistral);
            self.json_call(&site, &name, sub(text, i, end), WHAT);
            from = end.max(at + 1);
        }
    }

    /// gpt-oss Harmony: a message to `functions.NAME` on the commentary channel; its body runs
    /// from `<|message|>` to `<|call|>`.
    pub(super) fn harmony(&mut self) {
        const WHAT: &str = "a Harmony call";
        let text = self.reply;
        let b = text.as_bytes();
        let mut from = 0;
        while let Some(to) = self.free(from, HARMONY_TO) {
            let n = to + HARMONY_TO.len();
            let name_end = name_end(b, n);
            let name = sub(text, n, name_end).to_string();
            let Some(message) = find_at(text, name_end, HARMONY_MESSAGE) else {
                self.unreadable(
                    to,
                    format!("{WHAT} to functions.{name} with no <|message|>"),
                );
                break;
            };
            let body = message + HARMONY_MESSAGE.len();
            let (body_end, end) = HARMONY_ENDS
                .iter()
                .filter_map(|e| find_at(text, body, e).map(|at| (at, e)))
                .min_by_key(|(at, _)| *at)
                .map_or((text.len(), text.len()), |(at, e)| {
                    (at, if *e == "<|start|>" { at } else { at + e.len() })
                });
            // The message's header starts at its `<|start|>` or `<|channel|>`.
            let head = sub(text, 0, to);
            let start = ["<|start|>", "<|channel|>"]
                .iter()
                .filter_map(|m| head.rfind(m))
                .max()
                .filter(|&s| {
                    self.taken_at(s).is_none() && !sub(text, s, to).contains(HARMONY_MESSAGE)
                })
                .unwrap_or(to);
            let site = self.site(start, end, CallFormat::Harmony);
            self.json_call(&site, &name, sub(text, body, body_end), WHAT);
            from = end.max(to + 1);
        }
    }

    /// Kimi K2: `<|tool_call_begin|>functions.NAME:ID<|tool_call_argument_begin|>{…}
    /// <|tool_call_end|>`, in an optional section.
    pub(super) fn kimi(&mut self) {
        const WHAT: &str = "a Kimi tool call";
        self.id_calls(
            KIMI_CALL,
            KIMI_ARGS,
            KIMI_END,
            KIMI_SECTION,
            KIMI_SECTION_END,
            CallFormat::Kimi,
            WHAT,
        );
    }

    /// DeepSeek V3/R1 (`function<｜tool▁sep｜>NAME` and a fenced JSON) and V3.1
    /// (`NAME<｜tool▁sep｜>{…}`).
    pub(super) fn deepseek(&mut self) {
        const WHAT: &str = "a DeepSeek tool call";
        self.id_calls(
            DEEPSEEK_CALL,
            DEEPSEEK_SEP,
            DEEPSEEK_END,
            DEEPSEEK_SECTION,
            DEEPSEEK_SECTION_END,
            CallFormat::DeepSeek,
            WHAT,
        );
        // R1's older spelling opens the list and its one call with a single token.
        self.id_calls(
            DEEPSEEK_OLD_OPEN,
            DEEPSEEK_SEP,
            DEEPSEEK_END,
            "",
            DEEPSEEK_SECTION_END,
            CallFormat::DeepSeek,
            WHAT,
        );
    }

    /// Calls of the shape OPEN head SEP arguments CLOSE, inside an optional section whose
    /// markers belong to the first and last call's span.
    #[allow(clippy::too_many_arguments)]
    fn id_calls(
        &mut self,
        open: &str,
        sep: &str,
        close: &str,
        section: &str,
        section_end: &str,
        format: CallFormat,
        what: &str,
    ) {
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = self.free(from, open) {
            let head_start = at + open.len();
            let next_open = find_at(text, head_start, open).unwrap_or(text.len());
            let (body_end, end) = match find_at(text, head_start, close) {
                Some(c) if c < next_open => (c, c + close.len()),
                _ => (next_open, next_open),
            };
            let (start, end) = within_section(text, at..end, section, section_end);
            let site = self.site(start, end, format);
            let inner = sub(text, head_start, body_end);
            match inner.split_once(sep) {
                Some((head, args)) => {
                    let (name, args) = if head.trim() == "function" {
                        // V3: the name on its own line, then the JSON in a fence.
                        let (name, rest) = args.split_once('\n').unwrap_or((args, ""));
                        (name.trim().to_string(), strip_fence(rest).to_string())
                    } else {
                        (call_name(head), args.to_string())
                    };
                    self.json_call(&site, &name, &args, what);
                }
                None => self.unreadable(at, format!("{what} with no arguments")),
            }
            from = end.max(at + 1);
        }
    }

    /// Apertus: `<|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>`.
    pub(super) fn apertus(&mut self) {
        const WHAT: &str = "an Apertus tool list";
        let (open, close) = APERTUS;
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = self.free(from, open) {
            let (body, site) = self.block(at, (open, close), CallFormat::Apertus);
            let end = site.span.end;
            match repair_value(sub(text, body.start, body.end).trim()) {
                Ok((Value::Array(items), repairs)) => {
                    for (k, item) in items.into_iter().enumerate() {
                        match item {
                            Value::Object(one) if one.len() == 1 => {
                                for (name, args) in one {
                                    self.call(&site.nth(k), &name, args, repairs.clone());
                                }
                            }
                            _ => self.unreadable(
                                at + k,
                                format!("{WHAT} whose item is not {{\"NAME\": {{…}}}}"),
                            ),
                        }
                    }
                }
                Ok(_) => self.unreadable(at, format!("{WHAT} that is not a list")),
                Err(e) => self.unreadable(at, format!("{WHAT} whose JSON could not be read: {e}")),
            }
            from = end.max(at + 1);
        }
    }
}

/// A call head such as `functions.get_weather:0`: the name without its index.
fn call_name(head: &str) -> String {
    let head = head.trim();
    match head.rsplit_once(':') {
        Some((name, index)) if index.chars().all(|c| c.is_ascii_digit()) => name.to_string(),
        _ => head.to_string(),
    }
}
