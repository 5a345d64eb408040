//! Formats written with a model's own special tokens, which a server without that model's
//! tool parser passes through as text: Mistral `[TOOL_CALLS]`, gpt-oss Harmony
//! (`to=functions.NAME … <|message|>{…}<|call|>`), Kimi K2 `<|tool_call_begin|>`, DeepSeek
//! `<｜tool▁call▁begin｜>` and V3.2's DSML, MiniMax M2 `<invoke name=…>`, Gemma's `call:NAME{…}`,
//! OLMo 3 `<function_calls>` and Apertus `<|tools_prefix|>`. GLM's `<arg_key>` form lives in
//! the `<tool_call>` tag and is read by the tag pass through [`Scan::glm`].
//!
//! These tokens are not prose: a model writes them only to call. Each pass takes what it reads,
//! and a call it cannot read is said to be unreadable, with why.

use serde_json::{Map, Value};
use slmcode_aci::registry::Kind;

use super::classify::resolve;
use super::json_repair::{note, repair_value};
use super::lex::{balanced_end, find_at, skip_ws, sub};
use super::pythonic::read_py_all;
use super::repair_json_object;
use super::scan::{Scan, Site};
use super::CallFormat;

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

const GEMMA: [(&str, &str, &str); 2] = [
    ("<start_function_call>", "<end_function_call>", "<escape>"),
    ("<|tool_call>", "<tool_call|>", "<|\"|>"),
];

const OLMO: (&str, &str) = ("<function_calls>", "</function_calls>");

/// Parameter names a model wraps all the arguments in.
const WRAPPERS: [&str; 4] = ["arguments", "input", "parameters", "args"];
const APERTUS: (&str, &str) = ("<|tools_prefix|>", "<|tools_suffix|>");

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

impl Scan<'_> {
    /// Every special-token format, each its own pass.
    pub(super) fn tokens(&mut self) {
        self.invokes(&DSML);
        self.invokes(&MINIMAX);
        self.invokes(&FUNCTION_NAME);
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
    fn free(&self, from: usize, needle: &str) -> Option<usize> {
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
    fn json_call(&mut self, site: &Site, name: &str, raw: &str, what: &str) {
        match repair_json_object(raw) {
            Ok((args, repairs)) => self.call(site, name, args, repairs),
            Err(e) => self.unreadable(
                site.key,
                format!("{what} for {name} whose JSON could not be read: {e}"),
            ),
        }
    }

    /// Mistral: `[TOOL_CALLS]name[ARGS]{…}`, `[TOOL_CALLS]name{…}` (v11 and later), or
    /// `[TOOL_CALLS][{…}, …]`.
    fn mistral(&mut self) {
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
                        for (k, c) in super::classify::classify_all(&v, false)
                            .into_iter()
                            .enumerate()
                        {
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
    fn harmony(&mut self) {
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
    fn kimi(&mut self) {
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
    fn deepseek(&mut self) {
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
            let (body_end, mut end) = match find_at(text, head_start, close) {
                Some(c) if c < next_open => (c, c + close.len()),
                _ => (next_open, next_open),
            };
            let mut start = at;
            let before = sub(text, 0, at).trim_end();
            if !section.is_empty() && before.ends_with(section) {
                start = before.len() - section.len();
            }
            let after = skip_ws(text.as_bytes(), end);
            if sub(text, after, text.len()).starts_with(section_end) {
                end = after + section_end.len();
            }
            let site = self.site(start, end, format);
            let inner = sub(text, head_start, body_end);
            match inner.split_once(sep) {
                Some((head, args)) => {
                    let (name, args) = if head.trim() == "function" {
                        // V3: the name on its own line, then the JSON in a fence.
                        let (name, rest) = args.split_once('\n').unwrap_or((args, ""));
                        (name.trim().to_string(), unfence(rest).to_string())
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
            let mut end = (block_end + tags.invoke_end.len()).min(text.len());
            let mut start = at;
            let before = sub(text, 0, at).trim_end();
            if before.ends_with(tags.section) {
                start = before.len() - tags.section.len();
            }
            let after = skip_ws(text.as_bytes(), end);
            if sub(text, after, text.len()).starts_with(tags.section_end) {
                end = after + tags.section_end.len();
            }
            let site = self.site(start, end, tags.format);
            self.call(&site, &name, Value::Object(args), repairs);
            from = end.max(at + 1);
        }
    }

    /// Functionary v3.2: `>>>NAME` on a line of its own, then the JSON arguments (or, for a
    /// tool with one string parameter such as `python`, the raw text); `>>>all` is prose.
    fn functionary(&mut self) {
        const WHAT: &str = "a >>> call";
        let text = self.reply;
        let b = text.as_bytes();
        let mut from = 0;
        // A prompt that ends with `>>>` leaves the first recipient at the reply's start.
        let first = first_recipient(text, self.offered);
        let mut next = first.or_else(|| self.free(from, ">>>"));
        while let Some(at) = next {
            let marker = if Some(at) == first { 0 } else { 3 };
            let line_start = at == 0 || b.get(at - 1) == Some(&b'\n');
            let n = at + marker;
            let name_end = name_end(b, n);
            let name = sub(text, n, name_end).to_string();
            if !line_start || name.is_empty() || b.get(name_end) != Some(&b'\n') {
                from = at + 3;
                next = self.free(from, ">>>");
                continue;
            }
            let body = name_end + 1;
            let end = find_at(text, body, "\n>>>").unwrap_or(text.len());
            let raw = sub(text, body, end).trim();
            if name == "all" {
                self.take(at..end);
                from = end.max(at + 3);
                next = self.free(from, ">>>");
                continue;
            }
            let site = self.site(at, end, CallFormat::Functionary);
            let one_string = resolve(&name, self.offered).and_then(|t| match t.params.as_slice() {
                [(p, Kind::String)] => Some(p.clone()),
                _ => None,
            });
            match one_string {
                Some(param) if !raw.starts_with('{') => {
                    let mut args = Map::new();
                    args.insert(param, Value::String(raw.to_string()));
                    self.call(&site, &name, Value::Object(args), Vec::new());
                }
                _ => self.json_call(&site, &name, raw, WHAT),
            }
            from = end.max(at + 3);
            next = self.free(from, ">>>");
        }
    }

    /// Gemma: `call:NAME{key:value,…}` between FunctionGemma's or Gemma 4's call tokens, each
    /// string value between the model's quote token.
    fn gemma(&mut self) {
        for (open, close, quote) in GEMMA {
            let text = self.reply;
            let mut from = 0;
            while let Some(at) = self.free(from, open) {
                let body = at + open.len();
                let body_end = find_at(text, body, close).unwrap_or(text.len());
                let end = (body_end + close.len()).min(text.len());
                let site = self.site(at, end, CallFormat::Gemma);
                let inner = sub(text, body, body_end).trim();
                match inner.strip_prefix("call:").and_then(|r| r.split_once('{')) {
                    Some((name, rest)) => match gemma_args(rest, quote).map(|(args, _)| args) {
                        Some(args) => {
                            let tool = resolve(name.trim(), self.offered);
                            let mut repairs = Vec::new();
                            let args = args
                                .into_iter()
                                .map(|(k, v)| {
                                    let kind = tool
                                        .and_then(|t| t.params.iter().find(|(n, _)| *n == k))
                                        .map(|(_, kind)| *kind);
                                    let v = match (&v, kind) {
                                        (
                                            Value::String(s),
                                            Some(Kind::Integer { .. } | Kind::Boolean),
                                        ) => typed_value(kind, s, false, &mut repairs),
                                        _ => v,
                                    };
                                    (k, v)
                                })
                                .collect();
                            self.call(&site, name.trim(), Value::Object(args), repairs)
                        }
                        None => self.unreadable(
                            at,
                            format!(
                                "a Gemma call to {} whose arguments could not be read",
                                name.trim()
                            ),
                        ),
                    },
                    None => self.unreadable(at, "a Gemma call without `call:NAME{…}`".into()),
                }
                from = end.max(at + 1);
            }
        }
    }

    /// OLMo 3: Python-style calls, one a line, in `<function_calls>`.
    fn olmo(&mut self) {
        let (open, close) = OLMO;
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = self.free(from, open) {
            let body = at + open.len();
            let body_end = find_at(text, body, close).unwrap_or(text.len());
            let end = (body_end + close.len()).min(text.len());
            let site = self.site(at, end, CallFormat::Olmo);
            let mut k = 0;
            for line in sub(text, body, body_end)
                .lines()
                .filter(|l| !l.trim().is_empty())
            {
                match read_py_all(line.trim()) {
                    Ok(calls) => {
                        let n = calls.len();
                        self.py_calls(&site.nth(k), calls);
                        k += n;
                    }
                    Err(e) => {
                        self.py_error(site.key + k, e, Some("a <function_calls> line"));
                        k += 1;
                    }
                }
            }
            from = end.max(at + 1);
        }
    }

    /// Apertus: `<|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>`.
    fn apertus(&mut self) {
        const WHAT: &str = "an Apertus tool list";
        let (open, close) = APERTUS;
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = self.free(from, open) {
            let body = at + open.len();
            let body_end = find_at(text, body, close).unwrap_or(text.len());
            let end = (body_end + close.len()).min(text.len());
            let site = self.site(at, end, CallFormat::Apertus);
            match repair_value(sub(text, body, body_end).trim()) {
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

    /// GLM 4.5–4.7 in a `<tool_call>` tag: the name, then `<arg_key>k</arg_key><arg_value>v
    /// </arg_value>` pairs. Values are raw text, typed by the tool's declared kinds.
    pub(super) fn glm(&mut self, site: &Site, body: &str) {
        let (name, mut rest) = match body.find("<arg_key>") {
            Some(k) => (body[..k].trim(), &body[k..]),
            None => (body.trim(), ""),
        };
        let tool = resolve(name, self.offered);
        let mut args = Map::new();
        let mut repairs = Vec::new();
        while let Some(k) = rest.find("<arg_key>") {
            let after = &rest[k + "<arg_key>".len()..];
            let Some((key, after)) = after.split_once("</arg_key>") else {
                self.unreadable(
                    site.key,
                    format!("a GLM call to {name} whose <arg_key> is not closed"),
                );
                return;
            };
            let after = after.trim_start();
            let Some(v) = after.strip_prefix("<arg_value>") else {
                self.unreadable(
                    site.key,
                    format!("a GLM call to {name} whose {key} has no <arg_value>"),
                );
                return;
            };
            let (raw, next) = v.split_once("</arg_value>").unwrap_or((v, ""));
            let kind = tool
                .and_then(|t| t.params.iter().find(|(n, _)| n == key.trim()))
                .map(|(_, k)| *k);
            args.insert(
                key.trim().to_string(),
                typed_value(kind, raw, true, &mut repairs),
            );
            rest = next;
        }
        let site = Site {
            format: CallFormat::Glm,
            ..site.clone()
        };
        self.call(&site, name, Value::Object(args), repairs);
    }

    fn site(&mut self, start: usize, end: usize, format: CallFormat) -> Site {
        self.take(start..end);
        Site {
            key: start,
            span: start..end,
            format,
        }
    }
}

/// Where a reply that starts with an offered tool's name alone on its first line, then JSON
/// (or text for a one-string tool), starts: Functionary's first call after a prompt ending in
/// `>>>`. `None` for anything else.
fn first_recipient(text: &str, offered: &[super::OfferedTool]) -> Option<usize> {
    let (first, rest) = text.split_once('\n')?;
    let tool = offered.iter().find(|t| t.name == first.trim_end())?;
    let one_string = matches!(tool.params.as_slice(), [(_, Kind::String)]);
    (rest.trim_start().starts_with('{') || one_string).then_some(0)
}

/// The end of a tool name at `from`: letters, digits and `_ - . :`.
fn name_end(b: &[u8], from: usize) -> usize {
    name_end_at(b, from, |c| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':')
    })
}

fn name_end_at(b: &[u8], from: usize, ok: impl Fn(u8) -> bool) -> usize {
    let mut i = from;
    while b.get(i).is_some_and(|&c| ok(c)) {
        i += 1;
    }
    i
}

/// A call head such as `functions.get_weather:0`: the name without its index.
fn call_name(head: &str) -> String {
    let head = head.trim();
    match head.rsplit_once(':') {
        Some((name, index)) if index.chars().all(|c| c.is_ascii_digit()) => name.to_string(),
        _ => head.to_string(),
    }
}

/// `"value"` at `from` (after `name=`): the value and the offset past its closing quote.
fn quoted_attr(text: &str, from: usize) -> Option<(String, usize)> {
    let rest = text.get(from..)?;
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let close = rest[1..].find(q)? + 1;
    Some((rest[1..close].to_string(), from + close + 1))
}

/// The JSON inside a Markdown fence, or the text itself.
fn unfence(t: &str) -> &str {
    let t = t.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let body = rest.split_once('\n').map_or("", |(_, b)| b);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

fn strip_newlines(s: &str) -> &str {
    let s = s.strip_prefix('\n').unwrap_or(s);
    s.strip_suffix('\n').unwrap_or(s)
}

/// A raw text value typed by the kind the tool declares; undeclared, a number, boolean or
/// JSON structure when `guess` and it reads as one, else the text.
fn typed_value(
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

/// Gemma's `key:value,…}` (the opening `{` already read): string values between `quote`
/// tokens, nested `{…}` and `[…]` in the same syntax, other values JSON literals. Returns the
/// object and the text after its `}`.
fn gemma_args<'a>(rest: &'a str, quote: &str) -> Option<(Map<String, Value>, &'a str)> {
    let mut args = Map::new();
    let mut s = rest;
    loop {
        s = s.trim_start_matches([',', ' ', '\n']);
        if s.is_empty() {
            return Some((args, s));
        }
        if let Some(after) = s.strip_prefix('}') {
            return Some((args, after));
        }
        let (key, after) = s.split_once(':')?;
        let (value, next) = gemma_value(after.trim_start(), quote)?;
        args.insert(key.trim().to_string(), value);
        s = next;
    }
}

/// One Gemma value and the text after it.
fn gemma_value<'a>(s: &'a str, quote: &str) -> Option<(Value, &'a str)> {
    if let Some(v) = s.strip_prefix(quote) {
        let (v, next) = v.split_once(quote)?;
        return Some((Value::String(v.to_string()), next));
    }
    if let Some(rest) = s.strip_prefix('{') {
        let (obj, next) = gemma_args(rest, quote)?;
        return Some((Value::Object(obj), next));
    }
    if let Some(mut rest) = s.strip_prefix('[') {
        let mut items = Vec::new();
        loop {
            rest = rest.trim_start_matches([',', ' ', '\n']);
            if let Some(after) = rest.strip_prefix(']') {
                return Some((Value::Array(items), after));
            }
            if rest.is_empty() {
                return Some((Value::Array(items), rest));
            }
            let (v, next) = gemma_value(rest, quote)?;
            items.push(v);
            rest = next;
        }
    }
    let end = s.find([',', '}', ']']).unwrap_or(s.len());
    let raw = s[..end].trim();
    let v = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
    Some((v, &s[end..]))
}
