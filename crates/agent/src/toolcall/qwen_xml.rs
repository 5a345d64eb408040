//! The Qwen3-Coder pass: `<function=name><parameter=key>value</parameter></function>`
//! blocks, inside a `<tool_call>` tag or bare. Values are raw text, so each is converted by
//! the kind its tool declares; closers that small models drop are not required.
//!
//! Qwen3-Coder's template writes a value on lines of its own — `<parameter=key>\n`, the
//! value, `\n</parameter>` — so exactly one line break after the opening tag and one before
//! the closing tag are the template's, not the value's, as vLLM's `qwen3_coder` parser
//! (`_parse_xml_function_call`) and llama.cpp's (`common/parsers/qwen3-coder.cpp`, which
//! expects `>\n` and `\n</parameter>`) both read it. Seed-OSS, whose blocks come inside
//! `<seed:tool_call>`, writes values right against the tags, and its values are kept as
//! written (llama.cpp's `seed-oss` parser).

use serde_json::{Map, Value};
use slmcode_aci::registry::Kind;

use super::classify::{is_tool_name, resolve};
use super::hermes::{CLOSE_TAG, OPEN_TAG};
use super::json_repair::{note, repair_value};
use super::lex::{after_backtick, find_at, line_end, next_tag, skip_ws, sub, trim_end_at};
use super::repair_json_object;
use super::scan::{Scan, Site};
use super::CallFormat;
use super::OfferedTool;

/// The tags of a Qwen3-Coder call and of its parameters.
pub(super) const FUNCTION_TAG: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAMETER_TAG: &str = "<parameter=";
const PARAMETER_END: &str = "</parameter>";

/// The tag Seed-OSS wraps its `<function=…>` blocks in.
const SEED_TAG: &str = "<seed:tool_call>";

/// Whose layout a block's values follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// Qwen3-Coder's: one line break after `<parameter=…>` and one before `</parameter>`
    /// are the template's.
    Qwen,
    /// Seed-OSS's: values right against the tags, kept as written.
    AsWritten,
}

/// Stops for the body of a `<function=…>` block.
const FUNCTION_STOPS: &[&str] = &[
    PARAMETER_TAG,
    FUNCTION_END,
    FUNCTION_TAG,
    OPEN_TAG,
    CLOSE_TAG,
];

/// Stops for a `<parameter=…>` value; the first is the proper end.
const VALUE_STOPS: &[&str] = &[
    PARAMETER_END,
    PARAMETER_TAG,
    FUNCTION_END,
    FUNCTION_TAG,
    OPEN_TAG,
    CLOSE_TAG,
];

impl Scan<'_> {
    /// Qwen `<function=…>` blocks outside any tag.
    pub(super) fn functions(&mut self) {
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = find_at(text, from, FUNCTION_TAG) {
            if let Some(end) = self.taken_at(at) {
                from = end;
                continue;
            }
            let layout = if sub(text, 0, at).trim_end().ends_with(SEED_TAG) {
                Layout::AsWritten
            } else {
                Layout::Qwen
            };
            let (mut end, block) = read_function(text, at, text.len(), self.offered, layout);
            let bare = block
                .as_ref()
                .is_ok_and(|b| !b.closed && b.params.is_empty() && b.json.is_none());
            if after_backtick(text, at) || bare {
                from = at + FUNCTION_TAG.len();
                continue;
            }
            let after = skip_ws(text.as_bytes(), end);
            if sub(text, after, text.len()).starts_with(CLOSE_TAG) {
                end = after + CLOSE_TAG.len();
            }
            let site = Site {
                key: at,
                span: at..end,
                format: CallFormat::QwenXml,
            };
            self.take(at..end);
            self.function(&site, block);
            from = end.max(at + FUNCTION_TAG.len());
        }
    }

    pub(super) fn function(&mut self, site: &Site, block: Result<FunctionBlock, String>) {
        let block = match block {
            Ok(block) => block,
            Err(why) => {
                self.unreadable(site.key, format!("a <function=…> block {why}"));
                return;
            }
        };
        if !is_tool_name(&block.name) {
            self.unreadable(
                site.key,
                format!(
                    "a <function=…> block whose name {:?} is not a tool name",
                    block.name
                ),
            );
            return;
        }
        let tool = resolve(&block.name, self.offered);
        let mut repairs = Vec::new();
        let mut args = Map::new();
        if let Some(json) = &block.json {
            match repair_json_object(json) {
                Ok((Value::Object(m), r)) => {
                    args = m;
                    repairs = r;
                }
                Ok(_) => {}
                Err(e) => {
                    let name = &block.name;
                    self.unreadable(
                        site.key,
                        format!("a <function={name}> block whose JSON could not be read: {e}"),
                    );
                    return;
                }
            }
        }
        for (param, raw) in block.params {
            let kind = tool
                .and_then(|t| t.params.iter().find(|(n, _)| *n == param))
                .map(|(_, k)| *k);
            let value = qwen_value(kind, &raw, &mut repairs);
            args.insert(param, value);
        }
        self.call(site, &block.name, Value::Object(args), repairs);
    }
}

/// A `<function=…>` block as written.
pub(super) struct FunctionBlock {
    name: String,
    /// Each parameter's name and raw value, without the line breaks of the layout.
    params: Vec<(String, String)>,
    /// A JSON body in place of parameters (`<function=name>{…}</function>`).
    json: Option<String>,
    /// Whether `</function>` ended it.
    closed: bool,
}

/// Reads the `<function=…>` block at `start`, not past `limit`. Returns where the block ends
/// (past `</function>` when there is one) and what it holds. `offered` says which parameters
/// the tool declares: one of them opening on a line of its own starts a new parameter even
/// when the one before was never closed.
pub(super) fn read_function(
    text: &str,
    start: usize,
    limit: usize,
    offered: &[OfferedTool],
    layout: Layout,
) -> (usize, Result<FunctionBlock, String>) {
    let Some((name, mut at)) = read_tag_name(text, start + FUNCTION_TAG.len(), limit) else {
        let end = line_end(text, start, limit);
        return (end, Err("whose name is not closed with `>`".to_string()));
    };
    let declared: Vec<&str> = resolve(&name, offered)
        .map(|t| t.params.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default();
    let name_end = at;
    let mut params: Vec<(String, String)> = Vec::new();
    loop {
        let (stop, end) = match next_tag(text, at, limit, FUNCTION_STOPS) {
            Some((p, 0)) => {
                let Some((param, from)) = read_tag_name(text, p + PARAMETER_TAG.len(), limit)
                else {
                    let why = format!("for {name} whose <parameter=…> tag is not closed with `>`");
                    return (line_end(text, p, limit), Err(why));
                };
                // The parameters that may still come: declared, and not given yet.
                let pending: Vec<&str> = declared
                    .iter()
                    .copied()
                    .filter(|d| *d != param && !params.iter().any(|(g, _)| g == d))
                    .collect();
                let (raw_end, next) = value_end(text, from, limit, &pending);
                let raw = sub(text, from, raw_end);
                let raw = match layout {
                    Layout::Qwen => strip_layout(raw),
                    Layout::AsWritten => raw,
                };
                params.push((param, raw.to_string()));
                at = next;
                continue;
            }
            Some((p, 1)) => (p, p + FUNCTION_END.len()),
            Some((p, _)) => (p, trim_end_at(text, start, p)),
            None => (limit, trim_end_at(text, start, limit)),
        };
        let inner = sub(text, name_end, stop).trim();
        let json = (params.is_empty() && inner.starts_with('{')).then(|| inner.to_string());
        let closed = text
            .get(stop..)
            .is_some_and(|r| r.starts_with(FUNCTION_END));
        let block = FunctionBlock {
            name,
            params,
            json,
            closed,
        };
        return (end, Ok(block));
    }
}

/// Where the value starting at `from` ends, and where reading goes on. A value is literal
/// text: only the `</parameter>` the structure expects ends it — one followed by the next
/// `<parameter=`, by `</function>` or `</tool_call>`, or by nothing — so a value holding
/// `<parameter=…>`, `<function=…>`, `<tool_call>` or `</parameter` text is kept whole. But a
/// parameter of `pending` (declared by the tool, not given yet) opening on a line of its own
/// before that `</parameter>` starts the next parameter: the model forgot to close this one
/// (vLLM reads it so too). A model that dropped every closer gets the first tag that can
/// follow a value.
fn value_end(text: &str, from: usize, limit: usize, pending: &[&str]) -> (usize, usize) {
    let closed = structural_close(text, from, limit);
    let opened = pending_open(text, from, closed.map_or(limit, |(e, _)| e), pending);
    if let Some(o) = opened {
        return (o, o);
    }
    if let Some(found) = closed {
        return found;
    }
    match next_tag(text, from, limit, VALUE_STOPS) {
        Some((e, 0)) => (e, e + PARAMETER_END.len()),
        Some((e, _)) => (e, e),
        None => (limit, limit),
    }
}

/// The first `</parameter>` after `from` that the structure expects: where the value ends
/// and where reading goes on.
fn structural_close(text: &str, from: usize, limit: usize) -> Option<(usize, usize)> {
    let mut search = from;
    while let Some(e) = find_at(text, search, PARAMETER_END).filter(|&e| e < limit) {
        let next = e + PARAMETER_END.len();
        let after = skip_ws(text.as_bytes(), next).min(limit);
        let rest = sub(text, after, limit);
        let structural = [PARAMETER_TAG, FUNCTION_END, CLOSE_TAG]
            .iter()
            .any(|t| rest.starts_with(t));
        if rest.is_empty() || structural {
            return Some((e, next));
        }
        search = next;
    }
    None
}

/// The first `<parameter=NAME>`, NAME one of `pending`, at the start of a line between `from`
/// and `before`.
fn pending_open(text: &str, from: usize, before: usize, pending: &[&str]) -> Option<usize> {
    if pending.is_empty() {
        return None;
    }
    let hay = text.get(from..before.min(text.len()))?;
    hay.match_indices(PARAMETER_TAG).find_map(|(k, _)| {
        if !hay.get(..k)?.ends_with('\n') {
            return None;
        }
        // A parameter's name is short and on the tag's line.
        let rest = hay.get(k + PARAMETER_TAG.len()..)?;
        let gt = rest
            .bytes()
            .take(128)
            .position(|b| b == b'>' || b == b'\n')?;
        let name = rest.get(..gt)?.trim();
        (rest.as_bytes().get(gt) == Some(&b'>') && pending.contains(&name)).then_some(from + k)
    })
}

/// Reads `name>` at `from`: the name, trimmed, and the offset past `>`. The name may not
/// cross a line or another tag.
fn read_tag_name(text: &str, from: usize, limit: usize) -> Option<(String, usize)> {
    let hay = text.get(from..limit.min(text.len()))?;
    let gt = hay.find('>')?;
    let name = hay.get(..gt)?;
    if name.contains(['\n', '<']) {
        return None;
    }
    Some((name.trim().to_string(), from + gt + 1))
}

/// Converts a raw Qwen XML value by the kind its tool declares for it.
fn qwen_value(kind: Option<Kind>, raw: &str, repairs: &mut Vec<&'static str>) -> Value {
    let t = raw.trim();
    let text = || Value::String(raw.to_string());
    match kind {
        Some(Kind::String) => text(),
        Some(Kind::Integer { .. }) => {
            if let Ok(n) = t.parse::<u64>() {
                Value::from(n)
            } else if let Ok(n) = t.parse::<i64>() {
                Value::from(n)
            } else {
                text()
            }
        }
        Some(Kind::Boolean) => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => text(),
        },
        Some(Kind::StringList) => {
            if t.starts_with('[') {
                if let Ok((Value::Array(items), r)) = repair_value(t) {
                    for r in r {
                        note(repairs, r);
                    }
                    return Value::Array(items);
                }
            }
            let lines = raw
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| Value::String(l.to_string()));
            Value::Array(lines.collect())
        }
        Some(Kind::Object) => match repair_json_object(raw) {
            Ok((v, r)) => {
                for r in r {
                    note(repairs, r);
                }
                v
            }
            Err(_) => text(),
        },
        None => match serde_json::from_str::<Value>(t) {
            Ok(v @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::Object(_))) => v,
            _ => text(),
        },
    }
}

/// A Qwen3-Coder value without the line breaks its template puts around it: one after the
/// opening tag and one before the closing tag, each only if there — never more, so a value
/// that begins or ends with a blank line keeps it.
fn strip_layout(s: &str) -> &str {
    let s = s
        .strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}
