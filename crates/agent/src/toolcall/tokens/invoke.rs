//! `<invoke name="…">` blocks with one tag per parameter: MiniMax M2, DeepSeek V3.2's DSML, and
//! the `<function name="…">` form (MiniCPM's `<param>` values, Hermes 2 Pro's JSON body).

use serde_json::{Map, Value};

use super::super::classify::resolve;
use super::super::lex::{find_at, sub};
use super::super::repair_json_object;
use super::super::scan::Scan;
use super::super::CallFormat;
use super::{strip_newlines, typed_value, within_section};

/// `<invoke name="…">` blocks: MiniMax M2's and DeepSeek V3.2's DSML, which differ in tags.
struct InvokeTags {
    section: &'static str,
    section_end: &'static str,
    invoke: &'static str,
    invoke_end: &'static str,
    parameter: &'static str,
    parameter_end: &'static str,
    format: CallFormat,
}

const MINIMAX: InvokeTags = InvokeTags {
    section: "<minimax:tool_call>",
    section_end: "</minimax:tool_call>",
    invoke: "<invoke name=",
    invoke_end: "</invoke>",
    parameter: "<parameter name=",
    parameter_end: "</parameter>",
    format: CallFormat::MiniMax,
};

/// `<function name="…">` with `<param name="…">` values (MiniCPM) or a JSON body (Hermes 2
/// Pro's XML form).
const FUNCTION_NAME: InvokeTags = InvokeTags {
    section: "<tool_call>",
    section_end: "</tool_call>",
    invoke: "<function name=",
    invoke_end: "</function>",
    parameter: "<param name=",
    parameter_end: "</param>",
    format: CallFormat::Hermes,
};

const DSML: InvokeTags = InvokeTags {
    section: "<｜DSML｜function_calls>",
    section_end: "</｜DSML｜function_calls>",
    invoke: "<｜DSML｜invoke name=",
    invoke_end: "</｜DSML｜invoke>",
    parameter: "<｜DSML｜parameter name=",
    parameter_end: "</｜DSML｜parameter>",
    format: CallFormat::Dsml,
};

/// Parameter names a model wraps all the arguments in.
const WRAPPERS: [&str; 4] = ["arguments", "input", "parameters", "args"];

impl Scan<'_> {
    /// DSML first (its tags hold the others' names), then MiniMax, then `<function name=…>`.
    pub(super) fn invoke_blocks(&mut self) {
        self.invokes(&DSML);
        self.invokes(&MINIMAX);
        self.invokes(&FUNCTION_NAME);
    }

    /// `<invoke name="NAME"><parameter name="k">v</parameter>…</invoke>` blocks.
    fn invokes(&mut self, tags: &InvokeTags) {
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = self.free(from, tags.invoke) {
            let Some((name, mut i)) = quoted_attr(text, at + tags.invoke.len()) else {
                self.unreadable(at, "an <invoke> block whose name is not quoted".into());
                from = at + tags.invoke.len();
                continue;
            };
            let block_end = find_at(text, i, tags.invoke_end).unwrap_or(text.len());
            let tool = resolve(&name, self.offered);
            let mut args = Map::new();
            let mut repairs = Vec::new();
            while let Some(p) = find_at(text, i, tags.parameter).filter(|&p| p < block_end) {
                let Some((key, after)) = quoted_attr(text, p + tags.parameter.len()) else {
                    break;
                };
                // DSML says whether the value is a string: `string="true|false">`.
                let head_end = find_at(text, after.saturating_sub(1), ">").map_or(after, |g| g + 1);
                let is_string = sub(text, after, head_end).contains("string=\"true\"");
                let not_string = sub(text, after, head_end).contains("string=\"false\"");
                // A CDATA section is literal, closing tags in it included.
                let cdata = sub(text, head_end, block_end)
                    .strip_prefix("<![CDATA[")
                    .and_then(|r| {
                        let close = r.find("]]>")?;
                        Some((
                            r[..close].to_string(),
                            head_end + "<![CDATA[".len() + close + 3,
                        ))
                    });
                let search_from = cdata.as_ref().map_or(head_end, |(_, after)| *after);
                let value_end = find_at(text, search_from, tags.parameter_end)
                    .filter(|&e| e <= block_end)
                    .unwrap_or(block_end);
                let raw = match &cdata {
                    Some((inner, _)) => inner.as_str(),
                    None => strip_newlines(sub(text, head_end, value_end)),
                };
                let kind = tool
                    .and_then(|t| t.params.iter().find(|(n, _)| *n == key))
                    .map(|(_, k)| *k);
                let value = match kind {
                    Some(_) => typed_value(kind, raw, false, &mut repairs),
                    None if is_string => Value::String(raw.to_string()),
                    None => typed_value(None, raw, not_string, &mut repairs),
                };
                args.insert(key, value);
                i = value_end + tags.parameter_end.len();
            }
            // No parameters but a JSON body: the arguments.
            if args.is_empty() {
                let head_end = find_at(text, i.saturating_sub(1), ">").map_or(i, |g| g + 1);
                let body = sub(text, head_end, block_end).trim();
                if body.starts_with('{') {
                    match repair_json_object(body) {
                        Ok((Value::Object(o), r)) => {
                            args = o;
                            repairs = r;
                        }
                        _ => {
                            self.take(at..block_end);
                            self.unreadable(at, format!("a <function name=…> block for {name} whose JSON could not be read"));
                            from = block_end.max(at + 1);
                            continue;
                        }
                    }
                }
            }
            // A whole-arguments parameter (`name="arguments">{…}`, or `input`) the tool does not
            // declare: the JSON object it holds is the arguments.
            if let Some((key, value)) = args.iter().next().filter(|_| args.len() == 1) {
                let declared = tool.is_some_and(|t| t.params.iter().any(|(n, _)| n == key));
                if !declared && WRAPPERS.contains(&key.as_str()) {
                    let inner = match value {
                        Value::Object(o) => Some(o.clone()),
                        Value::String(s) => match repair_json_object(s) {
                            Ok((Value::Object(o), _)) => Some(o),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some(inner) = inner {
                        args = inner;
                    }
                }
            }
            if find_at(text, i, tags.invoke_end).is_none() {
                self.take(at..text.len());
                self.unreadable(
                    at,
                    format!(
                        "an <invoke> block for {name} that is not closed with {}",
                        tags.invoke_end
                    ),
                );
                break;
            }
            let end = (block_end + tags.invoke_end.len()).min(text.len());
            let (start, end) = within_section(text, at..end, tags.section, tags.section_end);
            let site = self.site(start, end, tags.format);
            self.call(&site, &name, Value::Object(args), repairs);
            from = end.max(at + 1);
        }
    }
}

/// `"value"` at `from` (after `name=`): the value and the offset past its closing quote.
fn quoted_attr(text: &str, from: usize) -> Option<(String, usize)> {
    let rest = text.get(from..)?;
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let close = rest[1..].find(q)? + 1;
    Some((rest[1..close].to_string(), from + close + 1))
}
