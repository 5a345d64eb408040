//! Tool calls a small model wrote as text instead of native `tool_calls`, and the repair of
//! the sloppy JSON it writes for arguments.
//!
//! Small local models often answer in the call format they were trained on even when the
//! server offers native tool calling: Hermes `<tool_call>` tags, Qwen3-Coder XML, fenced or
//! bare JSON, or a Python-style list. [`parse_text_calls`] finds those calls so the harness
//! can run them, and lists the names that were not offered and the attempts that could not
//! be read, so the model can be told what went wrong in one line. [`repair_json_object`]
//! fixes only the JSON mistakes whose fix is unambiguous.

use std::ops::Range;

use serde_json::{Map, Number, Value};

/// The JSON type a parameter takes, as the tool's schema declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Text. A Qwen XML value is kept exactly as written.
    String,
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// An array of strings.
    StringList,
    /// A JSON object.
    Object,
}

/// A tool the model was offered: its name and its parameters' kinds.
#[derive(Clone, Debug)]
pub struct OfferedTool {
    /// The name the model must call it by.
    pub name: String,
    /// Each parameter's name and kind, to convert Qwen XML values, which are raw text.
    pub params: Vec<(String, ParamKind)>,
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

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";
const FUNCTION_TAG: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAMETER_TAG: &str = "<parameter=";
const PARAMETER_END: &str = "</parameter>";

/// Keys that name the tool in a JSON call object, in order of preference.
const NAME_KEYS: &[&str] = &["name", "tool", "tool_name", "function"];
/// Keys that hold the arguments in a JSON call object, in order of preference.
const ARGS_KEYS: &[&str] = &["arguments", "parameters", "args", "tool_input", "input"];
/// Other keys a bare or fenced call object may carry and still count as a call.
const EXTRA_KEYS: &[&str] = &[
    "type",
    "id",
    "call_id",
    "index",
    "thought",
    "thoughts",
    "reason",
    "reasoning",
    "explanation",
];
/// Namespaces models put before a tool name.
const NAME_PREFIXES: &[&str] = &["functions.", "function.", "tools.", "tool.", "default_api."];
/// Fence infos that declare a tool call.
const TOOL_FENCES: &[&str] = &[
    "tool",
    "tool_call",
    "tool_calls",
    "tool_code",
    "tool_use",
    "function_call",
];
/// Fence infos whose content may be a JSON call.
const JSON_FENCES: &[&str] = &["", "json", "json5", "jsonc"];

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

/// Deepest list/dict nesting read in a Python-style call.
const MAX_DEPTH: usize = 64;
/// Longest message kept in `unreadable`, in characters.
const MAX_MESSAGE: usize = 300;

/// Finds the tool calls written as text in `reply`.
pub fn parse_text_calls(reply: &str, offered: &[OfferedTool]) -> TextCalls {
    let mut scan = Scan {
        reply,
        offered,
        found: Vec::new(),
        taken: Vec::new(),
    };
    scan.tags();
    scan.functions();
    scan.fences();
    scan.inline();
    scan.finish()
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

/// Something a pass found, kept with its position so all passes' findings sort into text
/// order.
enum Found {
    Call(TextCall),
    Unknown(String),
    Unreadable(String),
}

/// Where a call was found: its sort key, its span and its format.
#[derive(Clone)]
struct Site {
    key: usize,
    span: Range<usize>,
    format: CallFormat,
}

impl Site {
    /// The site of the `k`-th call in the same container: same span, later in order.
    fn nth(&self, k: usize) -> Site {
        Site {
            key: self.key + k,
            span: self.span.clone(),
            format: self.format,
        }
    }
}

/// One scan of a reply. Each pass marks what it read as taken, so later passes neither read
/// it again nor look inside it.
struct Scan<'a> {
    reply: &'a str,
    offered: &'a [OfferedTool],
    found: Vec<(usize, Found)>,
    /// What earlier passes read, sorted and merged.
    taken: Vec<Range<usize>>,
}

impl Scan<'_> {
    /// `<tool_call>` tags, holding JSON, Qwen XML or a Python-style call.
    fn tags(&mut self) {
        let text = self.reply;
        let mut from = 0;
        // The next closing tag, searched again only once it is behind us.
        let mut close: Option<Option<usize>> = None;
        while let Some(start) = find_at(text, from, OPEN_TAG) {
            let body_start = start + OPEN_TAG.len();
            if close.is_none_or(|c| c.is_some_and(|c| c < body_start)) {
                close = Some(find_at(text, body_start, CLOSE_TAG));
            }
            let close = close.flatten();
            let next = find_at(text, body_start, OPEN_TAG);
            let (body_end, end, closed) = match (close, next) {
                (Some(c), n) if n.is_none_or(|n| c < n) => (c, c + CLOSE_TAG.len(), true),
                (_, Some(n)) => (n, trim_end_at(text, body_start, n), false),
                _ => (text.len(), trim_end_at(text, body_start, text.len()), false),
            };
            // A tag named in prose (`<tool_call>` in backticks, or an unclosed tag followed
            // by words) is not a call.
            let body = sub(text, body_start, body_end).trim_start();
            let words =
                body.starts_with(|c: char| c.is_alphabetic()) && !py_call_start(body.as_bytes(), 0);
            if after_backtick(text, start) || (!closed && words) {
                from = body_start;
                continue;
            }
            let site = Site {
                key: start,
                span: start..end,
                format: CallFormat::Hermes,
            };
            self.take(site.span.clone());
            self.tag_body(body_start, body_end, &site);
            from = end.max(body_end);
        }
    }

    fn tag_body(&mut self, body_start: usize, body_end: usize, site: &Site) {
        const WHAT: &str = "a <tool_call> block";
        let text = self.reply;
        let t = sub(text, body_start, body_end).trim();
        if !t.starts_with(['{', '[']) && t.contains(FUNCTION_TAG) {
            let qwen = Site {
                format: CallFormat::QwenXml,
                ..site.clone()
            };
            let mut from = body_start;
            let mut k = 0;
            while let Some((at, _)) = next_tag(text, from, body_end, &[FUNCTION_TAG]) {
                let (end, block) = read_function(text, at, body_end);
                self.function(&qwen.nth(k), block);
                k += 1;
                from = end.max(at + FUNCTION_TAG.len());
            }
            return;
        }
        let t = strip_fence(t);
        if t.is_empty() {
            self.unreadable(site.key, "an empty <tool_call> block".to_string());
            return;
        }
        let b = t.as_bytes();
        if py_list_start(b, 0) || py_call_start(b, 0) {
            let pythonic = Site {
                format: CallFormat::Pythonic,
                ..site.clone()
            };
            match read_py_all(t) {
                Ok(calls) => self.py_calls(&pythonic, calls),
                Err(e) => self.py_error(site.key, e, Some(WHAT)),
            }
            return;
        }
        if t.starts_with('[') {
            match repair_value(t) {
                Ok((v, repairs)) => {
                    for (k, c) in classify_all(&v, false).into_iter().enumerate() {
                        self.classified(&site.nth(k), c, &repairs, WHAT);
                    }
                }
                Err(e) => self.unreadable(
                    site.key,
                    format!("{WHAT} whose JSON could not be read: {e}"),
                ),
            }
            return;
        }
        let chunks = split_objects(t)
            .filter(|c| c.len() > 1)
            .unwrap_or_else(|| vec![t]);
        for (k, chunk) in chunks.into_iter().enumerate() {
            match repair_json_object(chunk) {
                Ok((v, repairs)) => {
                    for (n, c) in classify_all(&v, false).into_iter().enumerate() {
                        self.classified(&site.nth(k + n), c, &repairs, WHAT);
                    }
                }
                Err(e) => self.unreadable(
                    site.key + k,
                    format!("{WHAT} whose JSON could not be read: {e}"),
                ),
            }
        }
    }

    /// Qwen `<function=…>` blocks outside any tag.
    fn functions(&mut self) {
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = find_at(text, from, FUNCTION_TAG) {
            if let Some(end) = self.taken_at(at) {
                from = end;
                continue;
            }
            let (mut end, block) = read_function(text, at, text.len());
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

    fn function(&mut self, site: &Site, block: Result<FunctionBlock, String>) {
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

    /// Markdown code fences. A fence is taken whether or not it holds a call, so code in it
    /// is never read as a bare call.
    fn fences(&mut self) {
        let text = self.reply;
        let len = text.len();
        let mut line = 0;
        while line < len {
            let line_end = find_at(text, line, "\n").unwrap_or(len);
            let row = sub(text, line, line_end);
            let ticks_at = line + (row.len() - row.trim_start().len());
            let rest = sub(text, ticks_at, line_end);
            let ticks = rest.bytes().take_while(|&c| c == b'`').count();
            let info = sub(rest, ticks, rest.len()).trim();
            if ticks < 3 || info.contains('`') || self.taken_at(ticks_at).is_some() {
                line = line_end + 1;
                continue;
            }
            let body_start = (line_end + 1).min(len);
            let mut at = body_start;
            let mut close = None;
            while at < len {
                let end = find_at(text, at, "\n").unwrap_or(len);
                let row = sub(text, at, end).trim();
                if row.len() >= ticks && row.bytes().all(|c| c == b'`') {
                    close = Some((at, end));
                    break;
                }
                at = end + 1;
            }
            let (body_end, span_end, next) = match close {
                Some((at, end)) => (at, trim_end_at(text, at, end), end + 1),
                None => (len, trim_end_at(text, ticks_at, len), len),
            };
            let span = ticks_at..span_end;
            let k = self.taken.partition_point(|r| r.start < span.end);
            let overlaps = k > 0 && self.taken.get(k - 1).is_some_and(|r| r.end > span.start);
            self.take(span.clone());
            if !overlaps {
                self.fence(info, sub(text, body_start, body_end), span);
            }
            line = next;
        }
    }

    fn fence(&mut self, info: &str, content: &str, span: Range<usize>) {
        let kind = info
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let toolish = TOOL_FENCES.contains(&kind.as_str());
        let jsonish = toolish || JSON_FENCES.contains(&kind.as_str());
        let what = format!("a ```{kind} block");
        let t = content.trim();
        let b = t.as_bytes();
        if py_list_start(b, 0) || (toolish && py_call_start(b, 0)) {
            let site = Site {
                key: span.start,
                span,
                format: CallFormat::Pythonic,
            };
            match read_py_all(t) {
                Ok(calls) if toolish || self.recognized(&calls) => self.py_calls(&site, calls),
                Ok(_) => {}
                Err(e) if toolish || self.names_offered(&e) => {
                    self.py_error(site.key, e, Some(&what))
                }
                Err(_) => {}
            }
            return;
        }
        if !jsonish || !t.starts_with(['{', '[']) {
            return;
        }
        let site = Site {
            key: span.start,
            span,
            format: CallFormat::Fenced,
        };
        let parsed = match serde_json::from_str::<Value>(t) {
            Ok(v) => Ok((v, Vec::new())),
            Err(_) if toolish || looks_like_call(t) => repair_value(t),
            Err(_) => return,
        };
        let (v, repairs) = match parsed {
            Ok(p) => p,
            Err(e) => {
                self.unreadable(
                    site.key,
                    format!("{what} whose JSON could not be read: {e}"),
                );
                return;
            }
        };
        let found = classify_all(&v, !toolish);
        if found.iter().any(|c| matches!(c, Classified::NotCall)) {
            return;
        }
        for (k, c) in found.into_iter().enumerate() {
            self.classified(&site.nth(k), c, &repairs, &what);
        }
    }

    /// Bare JSON objects and Python-style lists in the prose, left to right, so that neither
    /// is read inside the other.
    fn inline(&mut self) {
        let text = self.reply;
        let b = text.as_bytes();
        let mut ctx = Inline::new(text, &self.taken);
        let mut i = 0;
        while let Some(off) = b
            .get(i..)
            .and_then(|s| s.iter().position(|&c| c == b'{' || c == b'['))
        {
            let at = i + off;
            let (taken_end, limit) = ctx.region(at);
            if let Some(end) = taken_end {
                i = end.max(at + 1);
                continue;
            }
            let next = if b.get(at) == Some(&b'{') {
                self.inline_object(&mut ctx, at, limit)
            } else {
                self.inline_list(&mut ctx, at, limit)
            };
            i = next.max(at + 1);
        }
    }

    /// Reads the bare object at `at`; returns where scanning goes on.
    fn inline_object(&mut self, ctx: &mut Inline<'_>, at: usize, limit: usize) -> usize {
        const WHAT: &str = "a JSON tool call";
        let text = sub(self.reply, at, limit);
        if !object_start(text.as_bytes()) {
            return at + 1;
        }
        let end = ctx.brackets.end(at).filter(|&e| e <= limit);
        let cand = sub(self.reply, at, end.unwrap_or(limit));
        let next = at + cand.len();
        let site = Site {
            key: at,
            span: at..next,
            format: CallFormat::BareJson,
        };
        if end.is_some() {
            if let Ok(v) = serde_json::from_str::<Value>(cand) {
                for (k, c) in classify_all(&v, true).into_iter().enumerate() {
                    self.classified(&site.nth(k), c, &[], WHAT);
                }
                return next;
            }
        }
        if !(starts_like_call(cand) && ctx.keys_within(at, next)) {
            return at + 1;
        }
        match repair_json_object(cand) {
            Ok((v, repairs)) => {
                for (k, c) in classify_all(&v, true).into_iter().enumerate() {
                    self.classified(&site.nth(k), c, &repairs, WHAT);
                }
            }
            Err(e) => self.unreadable(at, format!("{WHAT} that could not be read: {e}")),
        }
        next
    }

    /// Reads the Python-style call list at `at`; returns where scanning goes on.
    fn inline_list(&mut self, ctx: &mut Inline<'_>, at: usize, limit: usize) -> usize {
        let text = sub(self.reply, at, limit);
        if ctx.py_budget == 0 || !py_list_start(text.as_bytes(), 0) {
            return at + 1;
        }
        match read_py_list(text, 0) {
            Ok((end, calls)) => {
                if !self.recognized(&calls) {
                    ctx.spend(end);
                    return at + 1;
                }
                let site = Site {
                    key: at,
                    span: at..at + end,
                    format: CallFormat::Pythonic,
                };
                self.py_calls(&site, calls);
                at + end
            }
            Err(e) if self.names_offered(&e) => {
                let next = at + e.at.max(1);
                self.py_error(at, e, None);
                next
            }
            Err(e) => {
                ctx.spend(e.at);
                at + 1
            }
        }
    }

    /// Whether a parsed list is meant as calls: it names an offered tool, or a snake_case
    /// name called with keyword arguments only.
    fn recognized(&self, calls: &[PyCall]) -> bool {
        calls.iter().any(|c| {
            resolve(&c.name, self.offered).is_some()
                || (is_snake(base_name(&c.name)) && !c.args.is_empty() && c.positional == 0)
        })
    }

    fn names_offered(&self, e: &PyError) -> bool {
        e.call
            .as_deref()
            .and_then(|n| resolve(n, self.offered))
            .is_some()
    }

    fn py_calls(&mut self, site: &Site, calls: Vec<PyCall>) {
        for (k, c) in calls.into_iter().enumerate() {
            let at = site.nth(k);
            match resolve(&c.name, self.offered) {
                Some(tool) if c.positional > 0 => self.unreadable(at.key, positional_message(tool)),
                _ => self.call(&at, &c.name, Value::Object(c.args), Vec::new()),
            }
        }
    }

    fn py_error(&mut self, key: usize, e: PyError, what: Option<&str>) {
        let tool = e.call.as_deref().and_then(|n| resolve(n, self.offered));
        let message = match (tool, e.positional, what, &e.call) {
            (Some(tool), true, _, _) => positional_message(tool),
            (_, _, Some(what), _) => format!("{what} that could not be read: {}", e.msg),
            (_, _, None, Some(name)) => {
                format!("a call to {name} that could not be read: {}", e.msg)
            }
            (_, _, None, None) => format!("a call list that could not be read: {}", e.msg),
        };
        self.unreadable(key, message);
    }

    fn classified(&mut self, site: &Site, c: Classified, extra: &[&'static str], what: &str) {
        match c {
            Classified::NotCall => {}
            Classified::Broken(why) => self.unreadable(site.key, format!("{what} {why}")),
            Classified::Call {
                name,
                args,
                repairs,
            } => {
                let mut all = extra.to_vec();
                for r in repairs {
                    note(&mut all, r);
                }
                self.call(site, &name, args, all);
            }
        }
    }

    fn call(&mut self, site: &Site, name: &str, arguments: Value, repairs: Vec<&'static str>) {
        let found = match resolve(name, self.offered) {
            Some(tool) if arguments.is_object() => Found::Call(TextCall {
                name: tool.name.clone(),
                arguments,
                format: site.format,
                span: site.span.clone(),
                repairs,
            }),
            Some(tool) => Found::Unreadable(format!(
                "a call to {} whose arguments are not a JSON object",
                tool.name
            )),
            None => Found::Unknown(name.trim().to_string()),
        };
        self.found.push((site.key, found));
    }

    fn unreadable(&mut self, key: usize, message: String) {
        self.found
            .push((key, Found::Unreadable(one_line(&message))));
    }

    /// Marks `r` taken, keeping `taken` sorted and merged.
    fn take(&mut self, r: Range<usize>) {
        let k = self.taken.partition_point(|t| t.end < r.start);
        let mut merged = r;
        while let Some(t) = self.taken.get(k).filter(|t| t.start <= merged.end) {
            merged = merged.start.min(t.start)..merged.end.max(t.end);
            self.taken.remove(k);
        }
        self.taken.insert(k, merged);
    }

    /// The end of the taken range holding `at`.
    fn taken_at(&self, at: usize) -> Option<usize> {
        let k = self.taken.partition_point(|t| t.start <= at);
        let t = self.taken.get(k.checked_sub(1)?)?;
        (at < t.end).then_some(t.end)
    }

    fn finish(mut self) -> TextCalls {
        self.found.sort_by_key(|(key, _)| *key);
        let mut out = TextCalls::default();
        for (_, found) in self.found {
            match found {
                Found::Call(call) => out.calls.push(call),
                Found::Unknown(name) => {
                    if !out.unknown.contains(&name) {
                        out.unknown.push(name);
                    }
                }
                Found::Unreadable(message) => {
                    if !out.unreadable.contains(&message) {
                        out.unreadable.push(message);
                    }
                }
            }
        }
        out
    }
}

/// What the inline pass knows of the whole reply, so that trying every `{` and `[` stays
/// close to linear on long or degenerate replies.
struct Inline<'t> {
    /// The taken ranges, merged and in order.
    taken: Vec<Range<usize>>,
    /// The first taken range not yet behind the scan.
    next_taken: usize,
    brackets: Brackets<'t>,
    /// Offsets of name keys with a string value, in order.
    name_keys: Vec<usize>,
    /// Offsets of arguments keys, in order.
    args_keys: Vec<usize>,
    /// Bytes that failed Python-style reads may still cost; none left stops trying them.
    py_budget: usize,
}

impl<'t> Inline<'t> {
    /// `taken` must be sorted and merged.
    fn new(text: &'t str, taken: &[Range<usize>]) -> Self {
        Inline {
            taken: taken.to_vec(),
            next_taken: 0,
            brackets: Brackets::new(text),
            name_keys: key_offsets(text, NAME_KEYS, true),
            args_keys: key_offsets(text, ARGS_KEYS, false),
            py_budget: text.len().saturating_mul(8).saturating_add(1 << 16),
        }
    }

    /// For an offset the scan has reached (offsets only grow): the end of the taken range
    /// holding it, if one does, and where the free text around it ends.
    fn region(&mut self, at: usize) -> (Option<usize>, usize) {
        while self.taken.get(self.next_taken).is_some_and(|r| r.end <= at) {
            self.next_taken += 1;
        }
        match self.taken.get(self.next_taken) {
            Some(r) if r.start <= at => (Some(r.end), r.end),
            Some(r) => (None, r.start),
            None => (None, self.brackets.bytes.len()),
        }
    }

    /// Whether `from..to` holds both a name key with a string value and an arguments key.
    fn keys_within(&self, from: usize, to: usize) -> bool {
        let within = |keys: &[usize]| {
            let k = keys.partition_point(|&p| p <= from);
            keys.get(k).is_some_and(|&p| p < to)
        };
        within(&self.name_keys) && within(&self.args_keys)
    }

    fn spend(&mut self, bytes: usize) {
        self.py_budget = self.py_budget.saturating_sub(bytes.max(1));
    }
}

/// Where each bracket closes, from stack passes over the text that skip strings in either
/// quote. A pass knows every bracket it reads outside a string, and from that bracket on it
/// reads exactly as a scan starting there would; a bracket inside another pass's string gets
/// a pass of its own.
struct Brackets<'t> {
    bytes: &'t [u8],
    known: std::collections::HashMap<usize, Option<usize>>,
    passes: usize,
}

impl<'t> Brackets<'t> {
    /// Passes made at most; after that an unknown bracket counts as unclosed.
    const MAX_PASSES: usize = 16;

    fn new(text: &'t str) -> Self {
        Brackets {
            bytes: text.as_bytes(),
            known: std::collections::HashMap::new(),
            passes: 0,
        }
    }

    /// The end (past the closer) of the bracket at `at`; `None` if it never closes.
    fn end(&mut self, at: usize) -> Option<usize> {
        if !self.known.contains_key(&at) && self.passes < Self::MAX_PASSES {
            self.pass(at);
        }
        self.known.get(&at).copied().flatten()
    }

    fn pass(&mut self, from: usize) {
        self.passes += 1;
        let mut stack = Vec::new();
        for (at, opens) in bracket_events(self.bytes, from) {
            if opens {
                stack.push(at);
            } else if let Some(open) = stack.pop() {
                self.known.entry(open).or_insert(Some(at + 1));
            }
        }
        for open in stack {
            self.known.entry(open).or_insert(None);
        }
    }
}

/// What a JSON value is, read as a call object.
enum Classified {
    NotCall,
    Call {
        name: String,
        args: Value,
        repairs: Vec<&'static str>,
    },
    /// A call attempt that cannot be run; the text completes "a … block ".
    Broken(String),
}

/// The calls in a value: the elements of an array, the `tool_calls` of a message object, or
/// the value itself.
fn classify_all(v: &Value, strict: bool) -> Vec<Classified> {
    match v {
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|item| classify(item, strict)).collect()
        }
        Value::Object(obj) => match obj.get("tool_calls") {
            Some(Value::Array(items)) if !items.is_empty() => {
                items.iter().map(|item| classify(item, strict)).collect()
            }
            _ => vec![classify(v, strict)],
        },
        _ => vec![classify(v, strict)],
    }
}

/// Reads `v` as a call object. `strict` (bare JSON, JSON fences) wants a name key, an
/// arguments key and no unrelated keys, so data objects are not taken for calls; inside a
/// tag anything goes, and what cannot be run is `Broken`.
fn classify(v: &Value, strict: bool) -> Classified {
    let Some(obj) = v.as_object() else {
        return if strict {
            Classified::NotCall
        } else {
            Classified::Broken("that is not a JSON object".to_string())
        };
    };
    if let Some(Value::Object(inner)) = obj.get("function") {
        if strict
            && obj
                .keys()
                .any(|k| k != "function" && !EXTRA_KEYS.contains(&k.as_str()))
        {
            return Classified::NotCall;
        }
        return classify_fields(inner, strict, true);
    }
    classify_fields(obj, strict, false)
}

fn classify_fields(obj: &Map<String, Value>, strict: bool, wrapped: bool) -> Classified {
    let name = NAME_KEYS.iter().find_map(|k| obj.get(*k));
    let args_key = ARGS_KEYS.iter().copied().find(|k| obj.contains_key(*k));
    if strict {
        let other = |k: &String| {
            let k = k.as_str();
            !NAME_KEYS.contains(&k) && !ARGS_KEYS.contains(&k) && !EXTRA_KEYS.contains(&k)
        };
        if name.is_none() || args_key.is_none() || obj.keys().any(other) {
            return Classified::NotCall;
        }
    }
    let name = match name {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(_) if strict => return Classified::NotCall,
        Some(_) => return Classified::Broken("whose \"name\" is not a string".to_string()),
        None => return Classified::Broken("with no \"name\"".to_string()),
    };
    if !is_tool_name(&name) {
        return if strict {
            Classified::NotCall
        } else {
            Classified::Broken(format!("whose name {name:?} is not a tool name"))
        };
    }
    let call = |args: Value, repairs: Vec<&'static str>| Classified::Call {
        name: name.clone(),
        args,
        repairs,
    };
    match args_key.and_then(|k| obj.get(k)) {
        None | Some(Value::Null) => call(Value::Object(Map::new()), Vec::new()),
        Some(Value::Object(m)) if strict && looks_like_schema(m) => Classified::NotCall,
        Some(Value::Object(m)) => call(Value::Object(m.clone()), Vec::new()),
        Some(Value::String(s)) => match repair_json_object(s) {
            Ok((args, mut repairs)) => {
                if !wrapped {
                    note(&mut repairs, "arguments as a string");
                }
                call(args, repairs)
            }
            Err(e) => Classified::Broken(format!(
                "for {name} whose arguments string could not be read: {e}"
            )),
        },
        Some(_) => Classified::Broken(format!("for {name} whose arguments are not a JSON object")),
    }
}

/// Whether an "arguments" object is a tool's parameter schema, echoed rather than called.
fn looks_like_schema(m: &Map<String, Value>) -> bool {
    m.get("type").and_then(Value::as_str) == Some("object") && m.contains_key("properties")
}

/// A `<function=…>` block as written.
struct FunctionBlock {
    name: String,
    /// Each parameter's name and raw value, one newline stripped at each end.
    params: Vec<(String, String)>,
    /// A JSON body in place of parameters (`<function=name>{…}</function>`).
    json: Option<String>,
    /// Whether `</function>` ended it.
    closed: bool,
}

/// Reads the `<function=…>` block at `start`, not past `limit`. Returns where the block ends
/// (past `</function>` when there is one) and what it holds.
fn read_function(text: &str, start: usize, limit: usize) -> (usize, Result<FunctionBlock, String>) {
    let Some((name, mut at)) = read_tag_name(text, start + FUNCTION_TAG.len(), limit) else {
        let end = line_end(text, start, limit);
        return (end, Err("whose name is not closed with `>`".to_string()));
    };
    let name_end = at;
    let mut params = Vec::new();
    loop {
        let (stop, end) = match next_tag(text, at, limit, FUNCTION_STOPS) {
            Some((p, 0)) => {
                let Some((param, from)) = read_tag_name(text, p + PARAMETER_TAG.len(), limit)
                else {
                    let why = format!("for {name} whose <parameter=…> tag is not closed with `>`");
                    return (line_end(text, p, limit), Err(why));
                };
                let (raw_end, next) = match next_tag(text, from, limit, VALUE_STOPS) {
                    Some((e, 0)) => (e, e + PARAMETER_END.len()),
                    Some((e, _)) => (e, e),
                    None => (limit, limit),
                };
                let raw = strip_one_newline(sub(text, from, raw_end));
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
fn qwen_value(kind: Option<ParamKind>, raw: &str, repairs: &mut Vec<&'static str>) -> Value {
    let t = raw.trim();
    let text = || Value::String(raw.to_string());
    match kind {
        Some(ParamKind::String) => text(),
        Some(ParamKind::Integer) => {
            if let Ok(n) = t.parse::<u64>() {
                Value::from(n)
            } else if let Ok(n) = t.parse::<i64>() {
                Value::from(n)
            } else {
                text()
            }
        }
        Some(ParamKind::Boolean) => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Value::Bool(true),
            "false" | "no" | "0" => Value::Bool(false),
            _ => text(),
        },
        Some(ParamKind::StringList) => {
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
        Some(ParamKind::Object) => match repair_json_object(raw) {
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

/// Parses `text`, trimmed and opening with `{` or `[`, as JSON, repairing it if it must.
fn repair_value(text: &str) -> Result<(Value, Vec<&'static str>), String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok((v, Vec::new())),
        Err(_) => repair_at(text, text.len() - text.trim_start().len()),
    }
}

/// The first object in prose that repairs into one.
fn surrounded(text: &str, first: &serde_json::Error) -> Result<(Value, Vec<&'static str>), String> {
    let mut failure = None;
    for (at, _) in text.match_indices('{').take(32) {
        match repair_at(text, at) {
            Ok(found) => return Ok(found),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    Err(failure.unwrap_or_else(|| format!("no JSON object found: {first}")))
}

fn into_object(
    value: Value,
    mut repairs: Vec<&'static str>,
) -> Result<(Value, Vec<&'static str>), String> {
    match value {
        Value::Object(_) => Ok((value, repairs)),
        Value::String(s) if s.trim_start().starts_with('{') => {
            let (value, inner) = repair_json_object(&s)?;
            for r in inner {
                note(&mut repairs, r);
            }
            note(&mut repairs, "arguments as a string");
            Ok((value, repairs))
        }
        Value::Array(_) => Err("arguments must be a JSON object, not an array".to_string()),
        Value::String(_) => Err("arguments must be a JSON object, not a string".to_string()),
        Value::Number(_) => Err("arguments must be a JSON object, not a number".to_string()),
        Value::Bool(_) => Err("arguments must be a JSON object, not a boolean".to_string()),
        Value::Null => Err("arguments must be a JSON object, not null".to_string()),
    }
}

/// Repairs the value opening at `start` in `text` and parses it. Text after the value is
/// dropped as surrounding text unless it looks like more of the value.
fn repair_at(text: &str, start: usize) -> Result<(Value, Vec<&'static str>), String> {
    let rw = rewrite(text, start);
    let mut repairs = rw.repairs.clone();
    let before = sub(text, 0, start).trim();
    let rest = sub(text, rw.end, text.len());
    let after = rest.trim();
    if after.starts_with([',', ':', '"', '\'', '{', '[']) {
        let at = rw.end + (rest.len() - rest.trim_start().len());
        let (line, column) = line_col(text, at);
        return Err(format!(
            "unexpected text after the object at line {line} column {column}"
        ));
    }
    if !before.is_empty() || !after.is_empty() {
        note(&mut repairs, "surrounding text");
    }
    match serde_json::from_str::<Value>(&rw.out) {
        Ok(v) => Ok((v, repairs)),
        Err(e) => Err(locate(&e, &rw, text)),
    }
}

/// A value after the repair pass.
struct Rewritten {
    out: String,
    repairs: Vec<&'static str>,
    /// `(output offset, source offset)` at each point where lengths stopped matching.
    marks: Vec<(usize, usize)>,
    /// Source offset just past the value, or the end of the text.
    end: usize,
}

impl Rewritten {
    fn source_offset(&self, at: usize) -> usize {
        let (o, s) = self
            .marks
            .iter()
            .rev()
            .find(|(o, _)| *o <= at)
            .copied()
            .unwrap_or((0, 0));
        s + (at - o)
    }
}

/// The one string-aware repair pass over the value opening at `start`: see
/// [`repair_json_object`] for what it fixes. Stops where the value closes.
fn rewrite(text: &str, start: usize) -> Rewritten {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len().saturating_sub(start) + 16);
    let mut repairs = Vec::new();
    let mut marks = vec![(0, start)];
    let mut stack: Vec<u8> = Vec::new();
    let mut expect_key = false;
    let mut in_string = false;
    let mut i = start;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' | b'\'' => {
                if c == b'\'' {
                    note(&mut repairs, "single quotes");
                }
                out.push(b'"');
                i += 1;
                in_string = true;
                while let Some(&d) = b.get(i) {
                    i += 1;
                    let escaped: &[u8] = match d {
                        _ if d == c => {
                            out.push(b'"');
                            in_string = false;
                            break;
                        }
                        b'\\' => match b.get(i).copied() {
                            Some(e @ (b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) => {
                                out.extend_from_slice(&[b'\\', e]);
                                i += 1;
                                continue;
                            }
                            // The `u` and its digits are copied as they come.
                            Some(b'u') if hex_value(b.get(i + 1..i + 5)).is_some() => {
                                out.push(b'\\');
                                continue;
                            }
                            Some(b'\'') => {
                                if c == b'"' {
                                    note(&mut repairs, "invalid escape");
                                }
                                i += 1;
                                b"'"
                            }
                            _ => {
                                note(&mut repairs, "invalid escape");
                                b"\\\\"
                            }
                        },
                        b'"' => b"\\\"",
                        b'\n' => b"\\n",
                        b'\r' => b"\\r",
                        b'\t' => b"\\t",
                        0..=0x1f => {
                            note(&mut repairs, "control characters");
                            out.extend_from_slice(format!("\\u{d:04x}").as_bytes());
                            marks.push((out.len(), i));
                            continue;
                        }
                        _ => {
                            out.push(d);
                            continue;
                        }
                    };
                    if matches!(d, b'\n' | b'\r' | b'\t') {
                        note(&mut repairs, "unescaped newlines");
                    }
                    out.extend_from_slice(escaped);
                    marks.push((out.len(), i));
                }
                if in_string {
                    break;
                }
                if stack.last() == Some(&b'{') {
                    expect_key = false;
                }
            }
            b',' => {
                let next = b.get(skip_ws(b, i + 1)).copied();
                i += 1;
                if matches!(next, Some(b'}' | b']')) {
                    note(&mut repairs, "trailing comma");
                    marks.push((out.len(), i));
                } else {
                    out.push(b',');
                    expect_key = stack.last() == Some(&b'{');
                }
            }
            b'{' | b'[' => {
                stack.push(c);
                out.push(c);
                i += 1;
                expect_key = c == b'{';
            }
            b'}' | b']' => {
                stack.pop();
                out.push(c);
                i += 1;
                expect_key = false;
                if stack.is_empty() {
                    break;
                }
            }
            b':' => {
                out.push(c);
                i += 1;
                expect_key = false;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                let end = word_end(b, i);
                let word = sub(text, i, end);
                let is_key = expect_key
                    && stack.last() == Some(&b'{')
                    && b.get(skip_ws(b, end)) == Some(&b':');
                if is_key {
                    note(&mut repairs, "unquoted keys");
                    out.push(b'"');
                    out.extend_from_slice(word.as_bytes());
                    out.push(b'"');
                    expect_key = false;
                    marks.push((out.len(), end));
                } else {
                    let literal = match word {
                        "True" => "true",
                        "False" => "false",
                        "None" => "null",
                        _ => word,
                    };
                    if literal != word {
                        note(&mut repairs, "python literals");
                    }
                    out.extend_from_slice(literal.as_bytes());
                }
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if !in_string && !stack.is_empty() {
        marks.push((out.len(), b.len()));
        for open in stack.iter().rev() {
            out.push(if *open == b'{' { b'}' } else { b']' });
        }
        note(&mut repairs, "missing closing brace");
    }
    let out = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Rewritten {
        out,
        repairs,
        marks,
        end: i,
    }
}

/// A parse error on repaired text, told at its place in the text the model wrote.
fn locate(e: &serde_json::Error, rw: &Rewritten, text: &str) -> String {
    let message = e.to_string();
    if e.line() == 0 {
        return message;
    }
    let head = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(head, _)| head);
    let at = offset_of(&rw.out, e.line(), e.column());
    let (line, column) = line_col(text, rw.source_offset(at).min(text.len()));
    format!("{head} at line {line} column {column}")
}

/// The byte offset of serde_json's 1-based line and column.
fn offset_of(s: &str, line: usize, column: usize) -> usize {
    let b = s.as_bytes();
    let mut start = 0;
    for _ in 1..line {
        match b
            .get(start..)
            .and_then(|r| r.iter().position(|&c| c == b'\n'))
        {
            Some(k) => start += k + 1,
            None => break,
        }
    }
    (start + column.saturating_sub(1)).min(b.len())
}

/// The 1-based line and byte column of `at`, counted as serde_json counts them.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let b = text.as_bytes();
    let before = b.get(..at).unwrap_or(b);
    let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
    let start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |k| k + 1);
    (line, before.len() - start + 1)
}

/// One call of a Python-style list.
struct PyCall {
    name: String,
    args: Map<String, Value>,
    positional: usize,
}

/// Why a Python-style call could not be read, and in which call.
struct PyError {
    at: usize,
    msg: String,
    call: Option<String>,
    positional: bool,
}

/// Reads `[name(key=value), …]` or `name(key=value) …` filling all of `text`.
fn read_py_all(text: &str) -> Result<Vec<PyCall>, PyError> {
    if !text.starts_with('[') {
        return read_py_sequence(text);
    }
    let (end, calls) = read_py_list(text, 0)?;
    if !sub(text, end, text.len()).trim().is_empty() {
        let mut p = Py::new(text, end);
        p.ws();
        return p.fail("unexpected text after the call list");
    }
    Ok(calls)
}

/// Reads the list of calls opening at `start`; returns its end and the calls.
fn read_py_list(text: &str, start: usize) -> Result<(usize, Vec<PyCall>), PyError> {
    let mut p = Py::new(text, start + 1);
    let mut calls = Vec::new();
    loop {
        p.ws();
        if !calls.is_empty() && p.eat(b']') {
            break;
        }
        calls.push(p.call()?);
        p.call = None;
        p.positional = false;
        p.ws();
        if p.eat(b',') {
            continue;
        }
        if p.eat(b']') {
            break;
        }
        return p.fail("expected `,` or `]` after a call");
    }
    Ok((p.i, calls))
}

/// Reads calls without brackets, separated by whitespace, commas or semicolons.
fn read_py_sequence(text: &str) -> Result<Vec<PyCall>, PyError> {
    let mut p = Py::new(text, 0);
    let mut calls = Vec::new();
    loop {
        p.ws();
        while p.eat(b',') || p.eat(b';') {
            p.ws();
        }
        if p.peek().is_none() {
            return Ok(calls);
        }
        calls.push(p.call()?);
        p.call = None;
        p.positional = false;
    }
}

/// A reader of Python call syntax with literal arguments.
struct Py<'t> {
    text: &'t str,
    i: usize,
    depth: usize,
    /// The call being read, for error messages.
    call: Option<String>,
    /// Whether that call has had a positional argument.
    positional: bool,
}

/// What a backslash escape in a Python string stands for.
enum Escape {
    Char(char),
    /// A line continuation: nothing.
    Skip,
    /// Not an escape: the backslash stays.
    Keep,
}

impl<'t> Py<'t> {
    fn new(text: &'t str, i: usize) -> Self {
        Py {
            text,
            i,
            depth: 0,
            call: None,
            positional: false,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let ate = self.peek() == Some(c);
        if ate {
            self.i += 1;
        }
        ate
    }

    fn fail<T>(&self, msg: impl Into<String>) -> Result<T, PyError> {
        Err(PyError {
            at: self.i,
            msg: msg.into(),
            call: self.call.clone(),
            positional: self.positional,
        })
    }

    /// Skips whitespace and `#` comments.
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.i += 1;
            } else if c == b'#' {
                self.i = line_end(self.text, self.i, self.text.len());
            } else {
                break;
            }
        }
    }

    fn ident(&mut self) -> Option<&'t str> {
        let b = self.text.as_bytes();
        if !b
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return None;
        }
        let start = self.i;
        self.i = ident_end(b, start);
        self.text.get(start..self.i)
    }

    /// A dotted name: `ws_read`, `functions.ws_read`.
    fn name(&mut self) -> Option<String> {
        let mut name = self.ident()?.to_string();
        while self.peek() == Some(b'.') {
            let save = self.i;
            self.i += 1;
            match self.ident() {
                Some(part) => {
                    name.push('.');
                    name.push_str(part);
                }
                None => {
                    self.i = save;
                    break;
                }
            }
        }
        Some(name)
    }

    fn call(&mut self) -> Result<PyCall, PyError> {
        self.ws();
        let Some(name) = self.name() else {
            return self.fail("expected a tool name");
        };
        self.call = Some(name.clone());
        self.positional = false;
        self.ws();
        if !self.eat(b'(') {
            return self.fail(format!("expected `(` after {name}"));
        }
        // `print(tool(...))`, as Gemini-style models write in a tool_code fence.
        let inner = skip_ws(self.text.as_bytes(), self.i);
        if name == "print" && py_call_start(self.text.as_bytes(), inner) {
            let call = self.call()?;
            self.ws();
            if !self.eat(b')') {
                return self.fail("expected `)` after the call in print(…)");
            }
            return Ok(call);
        }
        let mut args = Map::new();
        let mut positional = 0;
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let save = self.i;
            let key = match self.ident() {
                Some(key) => {
                    self.ws();
                    let b = self.text.as_bytes();
                    if self.peek() == Some(b'=') && b.get(self.i + 1) != Some(&b'=') {
                        self.i += 1;
                        Some(key.to_string())
                    } else {
                        self.i = save;
                        None
                    }
                }
                None => None,
            };
            if key.is_none() {
                positional += 1;
                self.positional = true;
            }
            let value = self.value()?;
            if let Some(key) = key {
                args.insert(key, value);
            }
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b')') {
                break;
            }
            return self.fail("expected `,` or `)` between arguments");
        }
        Ok(PyCall {
            name,
            args,
            positional,
        })
    }

    fn value(&mut self) -> Result<Value, PyError> {
        self.ws();
        match self.peek() {
            Some(b'"' | b'\'') => self.strings(false).map(Value::String),
            Some(b'[') => self.items(b']'),
            Some(b'(') => self.items(b')'),
            Some(b'{') => self.dict(),
            Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.') => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.word(),
            Some(_) => self.fail("expected a value"),
            None => self.fail("the text ends inside the call"),
        }
    }

    /// `True`, `False`, `None`, or a prefixed string like `r'\d+'`.
    fn word(&mut self) -> Result<Value, PyError> {
        let start = self.i;
        let word = self.ident().unwrap_or_default();
        let prefix = word.len() <= 2 && word.bytes().all(|c| b"rRbBuUfF".contains(&c));
        if prefix && matches!(self.peek(), Some(b'"' | b'\'')) {
            let raw = word.contains(['r', 'R']);
            return self.strings(raw).map(Value::String);
        }
        match word {
            "True" | "true" => Ok(Value::Bool(true)),
            "False" | "false" => Ok(Value::Bool(false)),
            "None" | "null" => Ok(Value::Null),
            _ => {
                self.i = start;
                self.fail(format!("`{word}` is not a literal"))
            }
        }
    }

    fn enter(&mut self) -> Result<(), PyError> {
        if self.depth >= MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        self.depth += 1;
        self.i += 1;
        Ok(())
    }

    /// A list or tuple, as an array.
    fn items(&mut self, close: u8) -> Result<Value, PyError> {
        self.enter()?;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.eat(close) {
                break;
            }
            items.push(self.value()?);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(close) {
                break;
            }
            return self.fail(format!("expected `,` or `{}`", char::from(close)));
        }
        self.depth = self.depth.saturating_sub(1);
        Ok(Value::Array(items))
    }

    fn dict(&mut self) -> Result<Value, PyError> {
        self.enter()?;
        let mut map = Map::new();
        loop {
            self.ws();
            if self.eat(b'}') {
                break;
            }
            let key = match self.value()? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return self.fail("a dict key must be a string"),
            };
            self.ws();
            if !self.eat(b':') {
                return self.fail("expected `:` after a dict key");
            }
            let value = self.value()?;
            map.insert(key, value);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            return self.fail("expected `,` or `}` in a dict");
        }
        self.depth = self.depth.saturating_sub(1);
        Ok(Value::Object(map))
    }

    fn number(&mut self) -> Result<Value, PyError> {
        let b = self.text.as_bytes();
        let start = self.i;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.i += 1;
        }
        while let Some(c) = self.peek() {
            let after_e = matches!(b.get(self.i.wrapping_sub(1)), Some(b'e' | b'E'));
            if c.is_ascii_digit()
                || matches!(c, b'.' | b'_' | b'e' | b'E')
                || (after_e && matches!(c, b'-' | b'+'))
            {
                self.i += 1;
            } else {
                break;
            }
        }
        let literal: String = sub(self.text, start, self.i)
            .chars()
            .filter(|&c| c != '_')
            .collect();
        let literal = literal.strip_prefix('+').unwrap_or(&literal);
        if let Ok(n) = literal.parse::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = literal.parse::<u64>() {
            return Ok(Value::from(n));
        }
        if let Some(n) = literal.parse::<f64>().ok().and_then(Number::from_f64) {
            return Ok(Value::Number(n));
        }
        self.i = start;
        self.fail(format!("`{literal}` is not a number"))
    }

    /// A string literal, with adjacent literals joined as Python joins them.
    fn strings(&mut self, raw: bool) -> Result<String, PyError> {
        let mut s = self.string(raw)?;
        loop {
            let save = self.i;
            self.ws();
            if matches!(self.peek(), Some(b'"' | b'\'')) {
                s.push_str(&self.string(false)?);
            } else {
                self.i = save;
                return Ok(s);
            }
        }
    }

    fn string(&mut self, raw: bool) -> Result<String, PyError> {
        let b = self.text.as_bytes();
        let open = self.i;
        let Some(q) = self.peek() else {
            return self.fail("expected a string");
        };
        let triple = b.get(open..open + 3) == Some(&[q, q, q][..]);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        let mut run = self.i;
        loop {
            let Some(c) = self.peek() else {
                return self.fail("unterminated string");
            };
            if c == q && (!triple || b.get(self.i..self.i + 3) == Some(&[q, q, q][..])) {
                out.push_str(sub(self.text, run, self.i));
                self.i += if triple { 3 } else { 1 };
                return Ok(out);
            }
            match c {
                b'\n' if !triple => return self.fail("unterminated string"),
                b'\\' if raw => self.i += 2,
                b'\\' => {
                    out.push_str(sub(self.text, run, self.i));
                    let (escape, used) = py_escape(b, self.i + 1);
                    match escape {
                        Escape::Char(ch) => out.push(ch),
                        Escape::Skip => {}
                        Escape::Keep => out.push('\\'),
                    }
                    self.i += 1 + used;
                    run = self.i;
                }
                _ => self.i += 1,
            }
        }
    }
}

/// The escape whose letter is at `at`, and how many bytes it takes after the backslash.
fn py_escape(b: &[u8], at: usize) -> (Escape, usize) {
    let code = |n: usize| hex_value(b.get(at + 1..at + 1 + n)).and_then(char::from_u32);
    let plain = |c: char| (Escape::Char(c), 1);
    match b.get(at) {
        Some(b'n') => plain('\n'),
        Some(b't') => plain('\t'),
        Some(b'r') => plain('\r'),
        Some(b'0') => plain('\0'),
        Some(b'a') => plain('\u{7}'),
        Some(b'b') => plain('\u{8}'),
        Some(b'f') => plain('\u{c}'),
        Some(b'v') => plain('\u{b}'),
        Some(b'\\') => plain('\\'),
        Some(b'\'') => plain('\''),
        Some(b'"') => plain('"'),
        Some(b'\n') => (Escape::Skip, 1),
        Some(b'x') => code(2).map_or((Escape::Keep, 0), |c| (Escape::Char(c), 3)),
        Some(b'u') => code(4).map_or((Escape::Keep, 0), |c| (Escape::Char(c), 5)),
        Some(b'U') => code(8).map_or((Escape::Keep, 0), |c| (Escape::Char(c), 9)),
        _ => (Escape::Keep, 0),
    }
}

fn positional_message(tool: &OfferedTool) -> String {
    let name = &tool.name;
    let key = tool.params.first().map_or("key", |(k, _)| k.as_str());
    format!(
        "a call to {name} with positional arguments: use keyword arguments, e.g. {name}({key}=\"...\")"
    )
}

/// The offered tool `name` stands for: exactly, or with a namespace prefix removed.
fn resolve<'o>(name: &str, offered: &'o [OfferedTool]) -> Option<&'o OfferedTool> {
    let name = name.trim();
    offered.iter().find(|t| t.name == name).or_else(|| {
        let base = base_name(name);
        offered.iter().find(|t| t.name == base)
    })
}

fn base_name(name: &str) -> &str {
    NAME_PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name)
}

/// Whether `name` could be a tool's name at all (not prose, not a path).
fn is_tool_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':'))
}

fn is_snake(name: &str) -> bool {
    let b = name.as_bytes();
    b.first().is_some_and(u8::is_ascii_lowercase)
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// Whether `text` has a name key with a string value and an arguments key, quoted or not.
fn looks_like_call(text: &str) -> bool {
    !key_offsets(text, NAME_KEYS, true).is_empty()
        && !key_offsets(text, ARGS_KEYS, false).is_empty()
}

/// Where `keys` appear in `text` as object keys (`"key":`, `'key':` or `key:`), with a
/// quoted value if `string`; in order.
fn key_offsets(text: &str, keys: &[&str], string: bool) -> Vec<usize> {
    let mut offsets: Vec<usize> = keys
        .iter()
        .flat_map(|key| key_matches(text, key, string))
        .collect();
    offsets.sort_unstable();
    offsets
}

fn key_matches<'t>(text: &'t str, key: &'t str, string: bool) -> impl Iterator<Item = usize> + 't {
    let b = text.as_bytes();
    text.match_indices(key)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = at.checked_sub(1).and_then(|p| b.get(p)).copied();
            let after = at + key.len();
            let colon_from = match (before, b.get(after).copied()) {
                (Some(q @ (b'"' | b'\'')), Some(c)) if c == q => after + 1,
                (Some(c), _) if c == b'{' || c == b',' || c.is_ascii_whitespace() => after,
                _ => return false,
            };
            let colon = skip_ws(b, colon_from);
            b.get(colon) == Some(&b':')
                && (!string || matches!(b.get(skip_ws(b, colon + 1)), Some(b'"' | b'\'')))
        })
}

/// Whether the text before `at` ends with a backtick: a tag quoted in prose.
fn after_backtick(text: &str, at: usize) -> bool {
    sub(text, 0, at).ends_with('`')
}

/// Whether an object begins like a call: its first key is one a call object has.
fn starts_like_call(cand: &str) -> bool {
    let b = cand.as_bytes();
    let mut i = skip_ws(b, 1);
    if matches!(b.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    let key = sub(cand, i, word_end(b, i));
    NAME_KEYS.contains(&key) || ARGS_KEYS.contains(&key) || EXTRA_KEYS.contains(&key)
}

/// Whether `b` opens like a JSON object: `{` and then a key.
fn object_start(b: &[u8]) -> bool {
    b.first() == Some(&b'{')
        && b.get(skip_ws(b, 1))
            .is_some_and(|c| matches!(c, b'"' | b'\'' | b'_') || c.is_ascii_alphabetic())
}

/// Whether `b` at `i` opens a Python-style call list: `[` name `(`.
fn py_list_start(b: &[u8], i: usize) -> bool {
    b.get(i) == Some(&b'[') && py_call_start(b, skip_ws(b, i + 1))
}

/// Whether `b` at `i` opens a call: a dotted name and `(`.
fn py_call_start(b: &[u8], i: usize) -> bool {
    let mut j = i;
    loop {
        if !b
            .get(j)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return false;
        }
        j = ident_end(b, j);
        if b.get(j) == Some(&b'.') {
            j += 1;
        } else {
            break;
        }
    }
    b.get(skip_ws(b, j)) == Some(&b'(')
}

/// The brackets of `b` from `from` on that lie outside strings (either quote; backslash escapes
/// skipped): `(index, true)` for an opener, `(index, false)` for a closer. The one scanner
/// behind [`balanced_end`] and the [`Brackets`] cache.
fn bracket_events(b: &[u8], from: usize) -> impl Iterator<Item = (usize, bool)> + '_ {
    let mut quote = None;
    let mut i = from;
    std::iter::from_fn(move || {
        while let Some(&c) = b.get(i) {
            let at = i;
            i += 1;
            match quote {
                Some(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'"' | b'\'' => quote = Some(c),
                    b'{' | b'[' => return Some((at, true)),
                    b'}' | b']' => return Some((at, false)),
                    _ => {}
                },
            }
        }
        None
    })
}

/// The end of the bracketed value opening at `start`, skipping strings in either quote;
/// `None` when the text ends first.
fn balanced_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, opens) in bracket_events(b, start) {
        if opens {
            depth += 1;
        } else {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(at + 1);
            }
        }
    }
    None
}

/// Splits `t` into the objects it lists, if it is nothing but objects (with whitespace or
/// commas between).
fn split_objects(t: &str) -> Option<Vec<&str>> {
    let b = t.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b',')
        {
            i += 1;
        }
        match b.get(i) {
            None => return Some(out),
            Some(b'{') => {}
            Some(_) => return None,
        }
        let end = balanced_end(b, i)?;
        out.push(t.get(i..end)?);
        i = end;
    }
}

/// `t` without a code fence around it (some models fence the JSON inside a tag).
fn strip_fence(t: &str) -> &str {
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// One newline stripped from each end of a Qwen value, which puts its text on lines of its
/// own.
fn strip_one_newline(s: &str) -> &str {
    let s = s
        .strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

fn hex_value(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    std::str::from_utf8(digits)
        .ok()
        .and_then(|s| u32::from_str_radix(s, 16).ok())
}

fn note(repairs: &mut Vec<&'static str>, repair: &'static str) {
    if !repairs.contains(&repair) {
        repairs.push(repair);
    }
}

/// `message` on one line, cut to a readable length.
fn one_line(message: &str) -> String {
    let mut out: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_MESSAGE)
        .collect();
    if message.chars().nth(MAX_MESSAGE).is_some() {
        out.push('…');
    }
    out
}

/// `text[from..to]`, or "" when that is not a valid slice.
fn sub(text: &str, from: usize, to: usize) -> &str {
    text.get(from..to).unwrap_or("")
}

fn find_at(text: &str, from: usize, needle: &str) -> Option<usize> {
    text.get(from..)?.find(needle).map(|k| k + from)
}

/// The first of `tags` at or after `from` and before `limit`: its offset and index.
fn next_tag(text: &str, from: usize, limit: usize, tags: &[&str]) -> Option<(usize, usize)> {
    let hay = text.get(from..limit.min(text.len()))?;
    hay.match_indices('<').find_map(|(k, _)| {
        let rest = hay.get(k..)?;
        tags.iter()
            .position(|t| rest.starts_with(t))
            .map(|t| (from + k, t))
    })
}

/// `lo` plus the length of `text[lo..hi]` without trailing whitespace.
fn trim_end_at(text: &str, lo: usize, hi: usize) -> usize {
    lo + sub(text, lo, hi).trim_end().len()
}

/// The offset of the next newline at or after `from`, or `limit`.
fn line_end(text: &str, from: usize, limit: usize) -> usize {
    find_at(text, from, "\n").map_or(limit, |e| e.min(limit))
}

fn skip_ws(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn ident_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        i += 1;
    }
    i
}

/// The end of a bare word in sloppy JSON: an unquoted key or a literal.
fn word_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'-'))
    {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered() -> Vec<OfferedTool> {
        let tool = |name: &str, params: &[(&str, ParamKind)]| OfferedTool {
            name: name.to_string(),
            params: params.iter().map(|(n, k)| (n.to_string(), *k)).collect(),
        };
        vec![
            tool(
                "ws_read",
                &[
                    ("path", ParamKind::String),
                    ("offset", ParamKind::Integer),
                    ("limit", ParamKind::Integer),
                ],
            ),
            tool(
                "ws_edit",
                &[
                    ("path", ParamKind::String),
                    ("old_str", ParamKind::String),
                    ("new_str", ParamKind::String),
                    ("replace_all", ParamKind::Boolean),
                ],
            ),
            tool("ws_todo", &[("items", ParamKind::StringList)]),
            tool(
                "ws_grep",
                &[
                    ("pattern", ParamKind::String),
                    ("glob", ParamKind::String),
                    ("path", ParamKind::String),
                ],
            ),
        ]
    }

    fn parse(reply: &str) -> TextCalls {
        parse_text_calls(reply, &offered())
    }

    /// The one call in `reply`, which must hold nothing else.
    fn only(reply: &str) -> TextCall {
        let found = parse(reply);
        assert_eq!(found.calls.len(), 1, "{found:#?}");
        assert!(
            found.unknown.is_empty() && found.unreadable.is_empty(),
            "{found:#?}"
        );
        found.calls.into_iter().next().unwrap()
    }

    fn nothing(reply: &str) {
        assert_eq!(parse(reply), TextCalls::default(), "{reply}");
    }

    fn repaired(text: &str) -> (Value, Vec<&'static str>) {
        repair_json_object(text).unwrap()
    }

    // Hermes.

    #[test]
    fn hermes_call_between_prose() {
        let tag = "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>";
        let reply = format!("I'll read the file first.\n{tag}\nThen I'll fix it.");
        let call = only(&reply);
        assert_eq!(call.name, "ws_read");
        assert_eq!(call.arguments, json!({"path": "a.py"}));
        assert_eq!(call.format, CallFormat::Hermes);
        assert_eq!(&reply[call.span], tag);
        assert!(call.repairs.is_empty());
    }

    #[test]
    fn hermes_unclosed_at_the_end() {
        let reply = "Reading.\n<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}\n\n";
        let call = only(reply);
        assert_eq!(call.arguments, json!({"path": "a.py"}));
        assert_eq!(
            &reply[call.span],
            "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}"
        );
    }

    #[test]
    fn hermes_unclosed_before_the_next_tag() {
        let reply = "<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"b\"}}</tool_call>";
        let found = parse(reply);
        assert_eq!(found.calls.len(), 2);
        assert_eq!(found.calls[0].arguments, json!({"path": "a"}));
        assert_eq!(found.calls[1].arguments, json!({"path": "b"}));
        assert!(reply[found.calls[0].span.clone()].ends_with("}}"));
        assert!(reply[found.calls[1].span.clone()].starts_with("<tool_call>"));
    }

    #[test]
    fn hermes_accepts_parameters_and_args() {
        for key in ["parameters", "args", "arguments"] {
            let reply = format!("<tool_call>{{\"name\": \"ws_read\", \"{key}\": {{\"path\": \"a.py\"}}}}</tool_call>");
            assert_eq!(only(&reply).arguments, json!({"path": "a.py"}), "{key}");
        }
    }

    #[test]
    fn hermes_arguments_as_a_json_string_are_decoded() {
        let reply = r#"<tool_call>{"name": "ws_read", "arguments": "{\"path\": \"a.py\", \"offset\": 3}"}</tool_call>"#;
        let call = only(reply);
        assert_eq!(call.arguments, json!({"path": "a.py", "offset": 3}));
        assert_eq!(call.repairs, ["arguments as a string"]);
    }

    #[test]
    fn hermes_without_arguments_is_an_empty_object() {
        let call = only(r#"<tool_call>{"name": "ws_todo"}</tool_call>"#);
        assert_eq!(call.arguments, json!({}));
    }

    #[test]
    fn hermes_two_calls_keep_order_and_spans() {
        let first = r#"<tool_call>{"name": "ws_read", "arguments": {"path": "a.py"}}</tool_call>"#;
        let second =
            r#"<tool_call>{"name": "ws_grep", "arguments": {"pattern": "fn main"}}</tool_call>"#;
        let reply = format!("First this:\n{first}\nand then:\n{second}\nok?");
        let found = parse(&reply);
        assert_eq!(found.calls.len(), 2);
        assert_eq!(found.calls[0].name, "ws_read");
        assert_eq!(found.calls[1].name, "ws_grep");
        assert_eq!(&reply[found.calls[0].span.clone()], first);
        assert_eq!(&reply[found.calls[1].span.clone()], second);
        assert!(found.calls[0].span.end <= found.calls[1].span.start);
    }

    #[test]
    fn hermes_several_objects_or_an_array_in_one_tag() {
        let reply = "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>";
        let found = parse(reply);
        let paths: Vec<_> = found
            .calls
            .iter()
            .map(|c| c.arguments["path"].clone())
            .collect();
        assert_eq!(paths, [json!("a"), json!("b")]);
        assert_eq!(found.calls[0].span, 0..reply.len());
        assert_eq!(found.calls[1].span, 0..reply.len());

        let reply = r#"<tool_call>[{"name": "ws_read", "arguments": {"path": "a"}}, {"name": "ws_todo", "arguments": {"items": ["x"]}}]</tool_call>"#;
        let names: Vec<_> = parse(reply).calls.into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["ws_read", "ws_todo"]);
    }

    #[test]
    fn hermes_json_repairs_are_reported() {
        let call =
            only("<tool_call>{'name': 'ws_read', 'arguments': {'path': 'a.py',}}</tool_call>");
        assert_eq!(call.arguments, json!({"path": "a.py"}));
        assert_eq!(call.repairs, ["single quotes", "trailing comma"]);

        let call =
            only(r#"<tool_call>{"name": "ws_read", "arguments": {"path": "a.py"}</tool_call>"#);
        assert_eq!(call.arguments, json!({"path": "a.py"}));
        assert_eq!(call.repairs, ["missing closing brace"]);
    }

    #[test]
    fn hermes_fenced_inside_the_tag() {
        let call = only("<tool_call>\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n```\n</tool_call>");
        assert_eq!(call.format, CallFormat::Hermes);
        assert_eq!(call.arguments, json!({"path": "a"}));
    }

    #[test]
    fn hermes_with_a_pythonic_body() {
        let call = only("<tool_call>\nws_read(path=\"a.py\", offset=2)\n</tool_call>");
        assert_eq!(call.format, CallFormat::Pythonic);
        assert_eq!(call.arguments, json!({"path": "a.py", "offset": 2}));
        assert_eq!(call.span.start, 0);
    }

    #[test]
    fn the_same_unreadable_attempt_is_listed_once() {
        let tag = r#"<tool_call>{"name": "ws_read", "arguments": {"path": }}</tool_call>"#;
        let found = parse(&format!("{tag}\n{tag}\n{tag}"));
        assert_eq!(found.unreadable.len(), 1, "{found:?}");
    }

    #[test]
    fn hermes_unreadable_attempts_are_described() {
        let json = r#"{"name": "ws_read", "arguments": {"path": "a.py" "offset": 3}}"#;
        let found = parse(&format!("<tool_call>{json}</tool_call>"));
        assert!(found.calls.is_empty());
        let column = json.find("\"offset\"").unwrap() + 1;
        assert_eq!(
            found.unreadable,
            [format!("a <tool_call> block whose JSON could not be read: expected `,` or `}}` at line 1 column {column}")]
        );

        let found = parse(r#"<tool_call>{"arguments": {"path": "a"}}</tool_call>"#);
        assert_eq!(found.unreadable, ["a <tool_call> block with no \"name\""]);

        let found = parse("<tool_call>\n</tool_call>");
        assert_eq!(found.unreadable, ["an empty <tool_call> block"]);

        let found = parse(r#"<tool_call>{"name": "ws_read", "arguments": [1]}</tool_call>"#);
        assert_eq!(
            found.unreadable,
            ["a <tool_call> block for ws_read whose arguments are not a JSON object"]
        );

        let found =
            parse(r#"<tool_call>{"name": "ws_read", "arguments": "path=a.py"}</tool_call>"#);
        assert_eq!(found.unreadable.len(), 1);
        assert!(found.unreadable[0].starts_with(
            "a <tool_call> block for ws_read whose arguments string could not be read: "
        ));
    }

    // Qwen XML.

    #[test]
    fn qwen_in_a_tag_keeps_indentation() {
        let tag = "<tool_call>\n<function=ws_edit>\n<parameter=path>\nsrc/a.py\n</parameter>\n<parameter=old_str>\n    x = 1\n\n</parameter>\n<parameter=new_str>\n    if x:\n\ty = {\"a\":1}\n</parameter>\n<parameter=replace_all>\nYes\n</parameter>\n</function>\n</tool_call>";
        let reply = format!("Let me edit it.\n{tag}\nDone.");
        let call = only(&reply);
        assert_eq!(call.name, "ws_edit");
        assert_eq!(call.format, CallFormat::QwenXml);
        assert_eq!(
            call.arguments,
            json!({
                "path": "src/a.py",
                "old_str": "    x = 1\n",
                "new_str": "    if x:\n\ty = {\"a\":1}",
                "replace_all": true,
            })
        );
        assert_eq!(&reply[call.span], tag);
        assert!(call.repairs.is_empty());
    }

    #[test]
    fn qwen_without_tag_or_closers() {
        let reply = "Reading:\n<function=ws_read>\n<parameter=path>\na.py\n</parameter>\n<parameter=offset>\n 10 \n";
        let call = only(reply);
        assert_eq!(call.arguments, json!({"path": "a.py", "offset": 10}));
        assert_eq!(
            &reply[call.span],
            "<function=ws_read>\n<parameter=path>\na.py\n</parameter>\n<parameter=offset>\n 10"
        );

        // No `</parameter>` before the next parameter or `</function>`; a stray
        // `</tool_call>` after the block belongs to it.
        let reply = "<function=ws_read>\n<parameter=path>\na.py\n<parameter=limit>\n5\n</function>\n</tool_call> ok";
        let call = only(reply);
        assert_eq!(call.arguments, json!({"path": "a.py", "limit": 5}));
        assert_eq!(&reply[call.span], &reply[..reply.len() - 3]);
    }

    #[test]
    fn qwen_converts_values_by_kind() {
        let call = only("<function=ws_read>\n<parameter=path>\n42\n</parameter>\n<parameter=offset>\n-3\n</parameter>\n<parameter=limit>\nall\n</parameter>\n</function>");
        assert_eq!(
            call.arguments,
            json!({"path": "42", "offset": -3, "limit": "all"})
        );

        for (raw, want) in [
            ("no", json!(false)),
            ("TRUE", json!(true)),
            ("1", json!(true)),
            ("0", json!(false)),
            ("maybe", json!("maybe")),
        ] {
            let reply = format!(
                "<function=ws_edit>\n<parameter=replace_all>\n{raw}\n</parameter>\n</function>"
            );
            assert_eq!(only(&reply).arguments["replace_all"], want, "{raw}");
        }

        let reply = "<function=ws_grep>\n<parameter=pattern>\n1\n</parameter>\n<parameter=count>\n7\n</parameter>\n<parameter=opts>\n{\"a\": [1]}\n</parameter>\n<parameter=note>\nhello\n</parameter>\n<parameter=flag>\nnull\n</parameter>\n</function>";
        assert_eq!(
            only(reply).arguments,
            json!({"pattern": "1", "count": 7, "opts": {"a": [1]}, "note": "hello", "flag": "null"})
        );
    }

    #[test]
    fn qwen_string_parameters_are_never_decoded() {
        let reply = "<function=ws_edit>\n<parameter=path>\ntrue\n</parameter>\n<parameter=new_str>\n{\"a\":1}\n</parameter>\n<parameter=old_str>\n[1, 2]\n</parameter>\n</function>";
        assert_eq!(
            only(reply).arguments,
            json!({"path": "true", "new_str": "{\"a\":1}", "old_str": "[1, 2]"})
        );
    }

    #[test]
    fn qwen_string_lists_from_lines_or_json() {
        let call = only("<function=ws_todo>\n<parameter=items>\n- read a.py\n\n   fix the bug  \r\n</parameter>\n</function>");
        assert_eq!(
            call.arguments,
            json!({"items": ["- read a.py", "fix the bug"]})
        );

        let call = only(
            "<function=ws_todo>\n<parameter=items>\n['read', \"fix\",]\n</parameter>\n</function>",
        );
        assert_eq!(call.arguments, json!({"items": ["read", "fix"]}));
        assert_eq!(call.repairs, ["single quotes", "trailing comma"]);
    }

    #[test]
    fn qwen_json_body_instead_of_parameters() {
        let call = only("<function=ws_read>{\"path\": \"a.py\"}</function>");
        assert_eq!(call.arguments, json!({"path": "a.py"}));
    }

    #[test]
    fn qwen_several_functions() {
        let reply = "<tool_call>\n<function=ws_read>\n<parameter=path>\na\n</parameter>\n</function>\n<function=ws_read>\n<parameter=path>\nb\n</parameter>\n</function>\n</tool_call>";
        let found = parse(reply);
        assert_eq!(found.calls.len(), 2);
        assert_eq!(found.calls[0].arguments, json!({"path": "a"}));
        assert_eq!(found.calls[1].arguments, json!({"path": "b"}));
        assert_eq!(found.calls[0].span, 0..reply.len());

        let a = "<function=ws_read>\n<parameter=path>\na\n</parameter>\n</function>";
        let b = "<function=ws_grep>\n<parameter=pattern>\nx\n</parameter>\n</function>";
        let reply = format!("{a}\nthen\n{b}");
        let found = parse(&reply);
        assert_eq!(found.calls.len(), 2);
        assert_eq!(&reply[found.calls[0].span.clone()], a);
        assert_eq!(&reply[found.calls[1].span.clone()], b);
    }

    #[test]
    fn qwen_unknown_and_unreadable() {
        let found = parse("<function=ws_delete>\n<parameter=path>\na\n</parameter>\n</function>");
        assert_eq!(found.unknown, ["ws_delete"]);
        assert!(found.calls.is_empty());

        let found = parse("<function=ws_read\n<parameter=path>\na\n</parameter>");
        assert_eq!(
            found.unreadable,
            ["a <function=…> block whose name is not closed with `>`"]
        );

        let found = parse("<function=read the file>\n</function>");
        assert_eq!(
            found.unreadable,
            ["a <function=…> block whose name \"read the file\" is not a tool name"]
        );
    }

    // Fences.

    #[test]
    fn fenced_json_call() {
        let fence = "```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.py\"}}\n```";
        let reply = format!("Here is the call:\n{fence}\nLet me know.");
        let call = only(&reply);
        assert_eq!(call.format, CallFormat::Fenced);
        assert_eq!(call.arguments, json!({"path": "a.py"}));
        assert_eq!(&reply[call.span], fence);
    }

    #[test]
    fn fenced_variants() {
        for info in ["tool", "tool_call", "tool_code", "", "JSON"] {
            let reply =
                format!("```{info}\n{{\"tool\": \"ws_read\", \"args\": {{\"path\": \"a\"}}}}\n```");
            assert_eq!(only(&reply).arguments, json!({"path": "a"}), "{info}");
        }

        let reply = "```\n[{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}},\n {\"name\": \"ws_grep\", \"arguments\": {\"pattern\": \"b\"}}]\n```";
        let found = parse(reply);
        let names: Vec<_> = found.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["ws_read", "ws_grep"]);
        assert!(found.calls.iter().all(|c| c.span == (0..reply.len())));

        let reply = "```tool_code\nws_read(path=\"a.py\")\nws_grep(pattern='x')\n```";
        let found = parse(reply);
        assert_eq!(found.calls.len(), 2);
        assert_eq!(found.calls[0].format, CallFormat::Pythonic);
        assert_eq!(found.calls[1].arguments, json!({"pattern": "x"}));

        // Unclosed at the end of the reply.
        let reply =
            "Calling:\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}\n";
        let call = only(reply);
        assert_eq!(
            &reply[call.span],
            "```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}"
        );
    }

    #[test]
    fn fences_that_are_not_calls_are_ignored() {
        nothing("Set this:\n```json\n{\"compilerOptions\": {\"strict\": true}}\n```\n");
        nothing("```json\n{\"name\": \"my-pkg\", \"version\": \"1.0.0\"}\n```");
        nothing("```json\n[1, 2, 3]\n```");
        nothing("```json\n{\"name\": \"x\", \"arguments\": {}, \"version\": 2}\n```");
        nothing("```python\nprint({\"name\": \"ws_read\", \"arguments\": {}})\nxs = [f(x) for x in y]\n```");
        nothing("```json\n{\"name\": \"ws_read\", \"description\": \"Read\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}\n```");
        nothing("```json\n{\"name\": \"ws_read\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {}}}}\n```");
        nothing("```rust\nfn main() { let v = json!({\"name\": \"a\", \"arguments\": {}}); }\n```");
        nothing("```yaml\nname: x\n```");
    }

    #[test]
    fn fenced_unreadable_call() {
        let found = parse("```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": }}\n```");
        assert_eq!(found.unreadable.len(), 1, "{found:?}");
        assert!(found.unreadable[0]
            .starts_with("a ```json block whose JSON could not be read: expected value at line 1"));

        let found = parse("```tool_call\nread the file a.py\n```");
        assert!(found.calls.is_empty());
    }

    // Bare JSON.

    #[test]
    fn bare_json_key_variants() {
        let cases = [
            r#"{"name": "ws_read", "arguments": {"path": "a"}}"#,
            r#"{"name": "ws_read", "parameters": {"path": "a"}}"#,
            r#"{"tool": "ws_read", "args": {"path": "a"}}"#,
            r#"{"tool": "ws_read", "arguments": {"path": "a"}}"#,
            r#"{"tool_name": "ws_read", "tool_input": {"path": "a"}}"#,
            r#"{"tool_name": "ws_read", "input": {"path": "a"}}"#,
            r#"{"function": {"name": "ws_read", "arguments": {"path": "a"}}}"#,
            r#"{"id": "call_1", "type": "function", "function": {"name": "ws_read", "arguments": "{\"path\": \"a\"}"}}"#,
        ];
        for json in cases {
            let reply = format!("I will call {json} now.");
            let call = only(&reply);
            assert_eq!(call.format, CallFormat::BareJson, "{json}");
            assert_eq!(call.arguments, json!({"path": "a"}), "{json}");
            assert!(call.repairs.is_empty(), "{json}");
            assert_eq!(&reply[call.span], json);
        }
    }

    #[test]
    fn bare_json_needs_an_arguments_key() {
        nothing(r#"Package: {"name": "ws_read"} is fine."#);
        let call = only(r#"{"name": "ws_todo", "arguments": {}}"#);
        assert_eq!(call.arguments, json!({}));
    }

    #[test]
    fn final_answer_is_not_a_call() {
        let answer = r#"{"status": "done", "summary": "Fixed the bug", "files_changed": ["a.py"], "notes": "ran {\"name\": \"ws_read\", \"arguments\": {}}"}"#;
        nothing(answer);
        nothing(&format!("All done.\n{answer}\n"));
        nothing(&format!("```json\n{answer}\n```"));
    }

    #[test]
    fn bare_json_repaired_truncated_and_broken() {
        let call =
            only("Calling {'name': 'ws_read', 'arguments': {'path': 'a', 'offset': None,},} now");
        assert_eq!(call.arguments, json!({"path": "a", "offset": null}));
        assert_eq!(
            call.repairs,
            ["single quotes", "python literals", "trailing comma"]
        );

        let reply = r#"Calling: {"name": "ws_read", "arguments": {"path": "a.py"}"#;
        let call = only(reply);
        assert_eq!(call.repairs, ["missing closing brace"]);
        assert_eq!(call.span, 9..reply.len());

        let found =
            parse(r#"Calling {"name": "ws_read", "arguments": {"path": "a.py" "offset": 1}} now"#);
        assert!(found.calls.is_empty());
        assert_eq!(found.unreadable.len(), 1);
        assert!(found.unreadable[0].starts_with(
            "a JSON tool call that could not be read: expected `,` or `}` at line 1 column "
        ));
    }

    #[test]
    fn bare_json_inside_tags_and_fences_is_not_counted_twice() {
        let found = parse("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"b\"}}\n```");
        assert_eq!(found.calls.len(), 2);
        assert_eq!(found.calls[0].format, CallFormat::Hermes);
        assert_eq!(found.calls[1].format, CallFormat::Fenced);
    }

    #[test]
    fn message_objects_with_tool_calls() {
        let reply = r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "ws_read", "arguments": "{\"path\": \"a\"}"}}]}"#;
        assert_eq!(only(reply).arguments, json!({"path": "a"}));
    }

    // Pythonic.

    #[test]
    fn pythonic_calls() {
        let list = r#"[ws_read(path="a.py", offset=3), ws_grep(pattern='fn main')]"#;
        let reply = format!("Let me look: {list} and see.");
        let found = parse(&reply);
        assert_eq!(found.calls.len(), 2);
        assert_eq!(
            found.calls[0].arguments,
            json!({"path": "a.py", "offset": 3})
        );
        assert_eq!(found.calls[1].arguments, json!({"pattern": "fn main"}));
        for call in &found.calls {
            assert_eq!(call.format, CallFormat::Pythonic);
            assert_eq!(&reply[call.span.clone()], list);
        }

        let call = only("[ws_read(path=\"a.py\")]");
        assert_eq!(call.arguments, json!({"path": "a.py"}));
    }

    #[test]
    fn pythonic_literals() {
        let reply = r#"[ws_grep(pattern=r"\d+\s", glob="*.rs", path=None, depth=-2, ratio=1.5e3, big=1_000, extra={'a': [1, 2.5, None], 'b': (True, 'x'), 3: False},)]"#;
        assert_eq!(
            only(reply).arguments,
            json!({
                "pattern": "\\d+\\s",
                "glob": "*.rs",
                "path": null,
                "depth": -2,
                "ratio": 1500.0,
                "big": 1000,
                "extra": {"a": [1, 2.5, null], "b": [true, "x"], "3": false},
            })
        );
    }

    #[test]
    fn pythonic_strings_with_triple_quotes_and_escapes() {
        let reply = "[ws_edit(path='a.py', old_str=\"\"\"def f():\n    return \"x\"\n\"\"\", new_str='''def f():\n    return {'a': [1]}\n''', replace_all=False)]";
        assert_eq!(
            only(reply).arguments,
            json!({
                "path": "a.py",
                "old_str": "def f():\n    return \"x\"\n",
                "new_str": "def f():\n    return {'a': [1]}\n",
                "replace_all": false,
            })
        );

        let reply = r#"[ws_grep(pattern="a\tb\\n\"q\" \x41\u00e9\d", glob='it\'s' "!")]"#;
        assert_eq!(
            only(reply).arguments,
            json!({"pattern": "a\tb\\n\"q\" Aé\\d", "glob": "it's!"})
        );
    }

    #[test]
    fn pythonic_positional_arguments_are_unreadable() {
        let found = parse(r#"[ws_read("a.py")]"#);
        assert!(found.calls.is_empty());
        assert_eq!(
            found.unreadable,
            ["a call to ws_read with positional arguments: use keyword arguments, e.g. ws_read(path=\"...\")"]
        );
        let found = parse("[ws_read(a.py)]");
        assert_eq!(found.unreadable.len(), 1);
        assert!(found.unreadable[0].contains("keyword arguments"));

        let found = parse(r#"[ws_read(path="a.py)]"#);
        assert_eq!(
            found.unreadable,
            ["a call to ws_read that could not be read: unterminated string"]
        );
    }

    #[test]
    fn brackets_that_are_not_calls_are_ignored() {
        nothing("Use [x(1)] or [f(x) for x in xs] or [link](http://e.com) or arr[idx(2)].");
        nothing("[print(i) for i in range(3)] and [len(s), max(a, b)] and [a, b] and [] and [ x ]");
        nothing("See [the docs](https://example.com/a(b)) and [Foo(Bar=1)] and [foo(x)].");
        nothing("[ws_read]");
    }

    #[test]
    fn print_wrapped_calls_in_tool_code() {
        let reply = "```tool_code\nprint(default_api.ws_read(path=\"a\"))\nprint(ws_grep(pattern=\"b\"))\n```";
        let names: Vec<_> = parse(reply).calls.into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["ws_read", "ws_grep"]);
    }

    #[test]
    fn pythonic_tool_like_names_are_unknown() {
        let found = parse(r#"[ws_move(src="a", dst="b")]"#);
        assert!(found.calls.is_empty());
        assert_eq!(found.unknown, ["ws_move"]);
    }

    // Names.

    #[test]
    fn prefixed_names_resolve() {
        for prefix in ["functions.", "tools.", "default_api."] {
            let reply = format!("<tool_call>{{\"name\": \"{prefix}ws_read\", \"arguments\": {{\"path\": \"a\"}}}}</tool_call>");
            assert_eq!(only(&reply).name, "ws_read", "{prefix}");
            let reply = format!("[{prefix}ws_read(path=\"a\")]");
            assert_eq!(only(&reply).name, "ws_read", "{prefix}");
            let reply = format!(
                "<function={prefix}ws_read>\n<parameter=offset>\n4\n</parameter>\n</function>"
            );
            let call = only(&reply);
            assert_eq!(call.arguments, json!({"offset": 4}), "{prefix}");
        }
        assert_eq!(
            parse(r#"<tool_call>{"name": "other.ws_read", "arguments": {}}</tool_call>"#).unknown,
            ["other.ws_read"]
        );
    }

    #[test]
    fn unknown_names_are_listed_once_in_order() {
        let reply = "<tool_call>{\"name\": \"ws_delete\", \"arguments\": {}}</tool_call>\n[ws_move(src=\"a\", dst=\"b\")]\n<tool_call>{\"name\": \"ws_delete\", \"arguments\": {}}</tool_call>\n<function=ws_delete>\n</function>\n{\"name\": \"ws_run\", \"arguments\": {\"cmd\": \"ls\"}}\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {}}</tool_call>";
        let found = parse(reply);
        assert_eq!(found.unknown, ["ws_delete", "ws_move", "ws_run"]);
        assert_eq!(found.calls.len(), 1);
        assert!(found.unreadable.is_empty());
    }

    #[test]
    fn mixed_formats_come_out_in_text_order() {
        let reply = "a [ws_grep(pattern=\"p\")] b {\"name\": \"ws_read\", \"arguments\": {\"path\": \"x\"}} c\n<tool_call>{\"name\": \"ws_todo\", \"arguments\": {\"items\": []}}</tool_call>\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"y\"}}\n```\n<function=ws_edit>\n<parameter=path>\nz\n</parameter>\n</function>";
        let found = parse(reply);
        let formats: Vec<_> = found.calls.iter().map(|c| c.format).collect();
        assert_eq!(
            formats,
            [
                CallFormat::Pythonic,
                CallFormat::BareJson,
                CallFormat::Hermes,
                CallFormat::Fenced,
                CallFormat::QwenXml
            ]
        );
        let starts: Vec<_> = found.calls.iter().map(|c| c.span.start).collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
        for call in &found.calls {
            let at = &reply[call.span.clone()];
            assert!(["[", "{", "<tool_call>", "```", "<function="]
                .iter()
                .any(|p| at.starts_with(p)));
        }
    }

    #[test]
    fn tags_named_in_prose_are_not_calls() {
        nothing("I'll use `<tool_call>` tags, or `<function=name>` blocks.");
        nothing("Qwen writes <function=foo> blocks and Hermes writes <tool_call> blocks.");
        let found = parse("Models emit <tool_call> blocks when asked.\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}</tool_call>");
        assert_eq!(found.calls.len(), 1);
        assert!(found.unreadable.is_empty());
        let call = only("<tool_call>\nSure:\n<function=ws_read>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>");
        assert_eq!(call.format, CallFormat::QwenXml);
    }

    #[test]
    fn code_and_braces_in_prose_are_not_calls() {
        nothing("function f() { return {name: x, args: y}; }");
        nothing("Use {x} and {it's fine} and {\"name\": 1, \"arguments\": 2");
        nothing("for (a in b) { if (c) { d(); } }\nfn main() { let v = vec![1]; }");
        let call = only(
            "Don't worry {it's fine} and {\"name\": \"ws_read\", \"arguments\": {\"path\": \"a\"}}",
        );
        assert_eq!(call.arguments, json!({"path": "a"}));
        let call = only("{name: \"ws_read\", arguments: {path: \"a\"}}");
        assert_eq!(call.repairs, ["unquoted keys"]);
    }

    // Repairs.

    #[test]
    fn valid_json_needs_no_repair() {
        assert_eq!(
            repaired(r#" {"a": [1, {"b": null}]} "#),
            (json!({"a": [1, {"b": null}]}), vec![])
        );
        assert_eq!(repaired(""), (json!({}), vec![]));
        assert_eq!(repaired("  \n\t"), (json!({}), vec![]));
    }

    #[test]
    fn repair_each_alone() {
        let cases: &[(&str, Value, &str)] = &[
            (
                r#"{"a": 1, "b": [1, 2,],}"#,
                json!({"a": 1, "b": [1, 2]}),
                "trailing comma",
            ),
            (
                r#"{'a': 'say "hi"', 'b': 'it\'s'}"#,
                json!({"a": "say \"hi\"", "b": "it's"}),
                "single quotes",
            ),
            (
                r#"{"a": True, "b": False, "c": None, "d": "True"}"#,
                json!({"a": true, "b": false, "c": null, "d": "True"}),
                "python literals",
            ),
            (
                "{\"a\": \"l1\nl2\tx\r\"}",
                json!({"a": "l1\nl2\tx\r"}),
                "unescaped newlines",
            ),
            (
                r#"{path: "a", old_str: "b", $x-y: 1}"#,
                json!({"path": "a", "old_str": "b", "$x-y": 1}),
                "unquoted keys",
            ),
            (
                r#"{"a": {"b": [1, 2"#,
                json!({"a": {"b": [1, 2]}}),
                "missing closing brace",
            ),
            (
                r#"{"a": {"b": 1}"#,
                json!({"a": {"b": 1}}),
                "missing closing brace",
            ),
            (
                r#"Arguments: {"path": "a.py"} thanks"#,
                json!({"path": "a.py"}),
                "surrounding text",
            ),
            (
                "```json\n{\"path\": \"a.py\"}\n```",
                json!({"path": "a.py"}),
                "surrounding text",
            ),
            (r#"{"a": 1}}"#, json!({"a": 1}), "surrounding text"),
            (
                r#"{"pattern": "\d+\.rs", "b": "\q"}"#,
                json!({"pattern": "\\d+\\.rs", "b": "\\q"}),
                "invalid escape",
            ),
            (r#"{"a": "it\'s"}"#, json!({"a": "it's"}), "invalid escape"),
            (
                "{\"a\": \"x\u{1}y\"}",
                json!({"a": "x\u{1}y"}),
                "control characters",
            ),
            (
                r#""{\"path\": \"a\"}""#,
                json!({"path": "a"}),
                "arguments as a string",
            ),
        ];
        for (text, want, repair) in cases {
            assert_eq!(repaired(text), (want.clone(), vec![*repair]), "{text}");
        }
    }

    #[test]
    fn repairs_combined() {
        let text = "Here you go: {path: 'src/é.py', force: True, pattern: '\\d+', body: \"l1\nl2\", items: ['a', 'b',]";
        let (value, mut repairs) = repaired(text);
        assert_eq!(
            value,
            json!({"path": "src/é.py", "force": true, "pattern": "\\d+", "body": "l1\nl2", "items": ["a", "b"]})
        );
        repairs.sort_unstable();
        assert_eq!(
            repairs,
            [
                "invalid escape",
                "missing closing brace",
                "python literals",
                "single quotes",
                "surrounding text",
                "trailing comma",
                "unescaped newlines",
                "unquoted keys"
            ]
        );
        let (value, _) = repaired(r#"{'a': "\u00e9", 'b': '\u00e9'}"#);
        assert_eq!(value, json!({"a": "é", "b": "é"}));
    }

    #[test]
    fn repair_refuses_what_is_ambiguous() {
        let err = |t: &str| repair_json_object(t).unwrap_err();
        assert_eq!(
            err("[1, 2]"),
            "arguments must be a JSON object, not an array"
        );
        assert!(err("42").starts_with("arguments must be a JSON object"));
        assert!(err("\"text\"").starts_with("arguments must be a JSON object"));
        assert_eq!(
            err(r#"{"a": 1 "b": 2}"#),
            "expected `,` or `}` at line 1 column 9"
        );
        // Columns point into the text as written, not the repaired text.
        assert_eq!(
            err(r#"{a: 1 "b": 2}"#),
            "expected `,` or `}` at line 1 column 7"
        );
        assert_eq!(
            err("{\n  \"a\": 1\n  \"b\": 2\n}"),
            "expected `,` or `}` at line 3 column 3"
        );
        assert!(err(r#"{"a": "abc"#).starts_with("EOF while parsing a string"));
        assert!(err(r#"{"a":"#).contains("at line 1"));
        // Cut off after a comma: more was coming, so it is not closed for the model.
        assert!(err(r#"{"a": 1,"#).starts_with("trailing comma at line 1"));
        assert!(err(r#"{"a": 'it's'}"#).contains("at line 1"));
        assert!(err(r#"{"a": "print("hi")"}"#).contains("at line 1"));
        assert_eq!(
            err(r#"{"a": 1}, "b": 2}"#),
            "unexpected text after the object at line 1 column 9"
        );
        assert!(err("just words").starts_with("no JSON object found: "));
        // Two objects: which one was meant is not clear.
        assert_eq!(
            err(r#"{"a": 1} {"b": 2}"#),
            "unexpected text after the object at line 1 column 10"
        );
        assert!(err(r#"{"a": undefined}"#).contains("at line 1 column 7"));
    }

    // Text and robustness.

    #[test]
    fn multibyte_text_around_and_inside_calls() {
        let reply = "Voilà → je lis le fichier 🦀.\n<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"café/é→🦀.py\"}}</tool_call> ✅ fini";
        let call = only(reply);
        assert_eq!(call.arguments, json!({"path": "café/é→🦀.py"}));
        assert!(reply[call.span].starts_with("<tool_call>"));

        let reply =
            "é→🦀 <function=ws_edit>\n<parameter=new_str>\n  « 🦀 »\n</parameter>\n</function> é";
        assert_eq!(only(reply).arguments, json!({"new_str": "  « 🦀 »"}));

        let call = only("→ [ws_grep(pattern='→ 🦀', glob=\"*.é\")] ←");
        assert_eq!(call.arguments, json!({"pattern": "→ 🦀", "glob": "*.é"}));

        let call = only("🦀 {'name': 'ws_read', 'arguments': {'path': 'é→🦀'}} 🦀");
        assert_eq!(call.arguments, json!({"path": "é→🦀"}));

        let err = repair_json_object("{\"é\": 1 \"🦀\": 2}").unwrap_err();
        assert!(err.starts_with("expected `,` or `}` at line 1"));
        let found = parse("```json\n{\"name\": \"ws_read\", \"arguments\": {\"🦀\": é}}\n```");
        assert_eq!(found.unreadable.len(), 1);
    }

    #[test]
    fn every_prefix_of_a_reply_is_safe() {
        let reply = "Plan → read.\n<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {'path': 'é.py',}}\n</tool_call>\n<function=ws_edit>\n<parameter=old_str>\n  🦀\n</parameter>\n</function>\n```json\n{\"tool\": \"ws_grep\", \"args\": {\"pattern\": \"\\d\"}}\n```\n[ws_read(path='''a\nb''', offset=1)] {\"name\": \"ws_todo\", \"arguments\": {\"items\": [\"x\"]}}";
        for (at, _) in reply.char_indices() {
            check(&reply[..at]);
            check(&reply[at..]);
        }
        let found = parse(reply);
        assert_eq!(found.calls.len(), 5, "{found:#?}");
        assert!(found.unknown.is_empty() && found.unreadable.is_empty());
    }

    /// Parses `text` both ways and checks what must hold for any input.
    fn check(text: &str) {
        let found = parse(text);
        for call in &found.calls {
            assert!(call.arguments.is_object(), "{text:?}");
            assert!(text.get(call.span.clone()).is_some(), "{text:?} {call:?}");
            assert!(call.span.start < call.span.end, "{text:?} {call:?}");
        }
        for message in &found.unreadable {
            assert!(!message.contains('\n'), "{message:?}");
        }
        if let Ok((value, _)) = repair_json_object(text) {
            assert!(value.is_object(), "{text:?}");
        }
    }

    #[test]
    fn garbage_never_panics() {
        const PIECES: &[&str] = &[
            "<tool_call>",
            "</tool_call>",
            "<function=",
            "ws_read>",
            "ws_edit",
            "<parameter=",
            "path>",
            "</parameter>",
            "</function>",
            "```",
            "```json\n",
            "```tool_code\n",
            "{",
            "}",
            "[",
            "]",
            "(",
            ")",
            "\"",
            "'",
            "'''",
            "\"\"\"",
            "\\",
            "\\u00",
            "\\x4",
            ":",
            ",",
            "=",
            "name",
            "\"name\"",
            "\"arguments\"",
            "'args'",
            "ws_read(",
            "path=",
            "True",
            "None",
            "\n",
            " ",
            "\t",
            "é",
            "→",
            "🦀",
            "#",
            "1e5",
            "-",
            "_",
            "0",
            "functions.",
            "r'",
            "\"tool\":",
            "\r",
            "\u{0}",
            "<",
            ">",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..4000 {
            let mut text = String::new();
            for _ in 0..(next() % 40) {
                let r = next();
                if r % 5 == 0 {
                    text.push(char::from_u32((r >> 8) as u32 % 0x3000).unwrap_or('x'));
                } else {
                    text.push_str(PIECES[(r >> 8) as usize % PIECES.len()]);
                }
            }
            check(&text);
        }
        let bytes: Vec<u8> = (0..5000).map(|_| next() as u8).collect();
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        for text in [
            "[".repeat(50_000),
            "{".repeat(50_000),
            format!("{{\"a\": {}", "[".repeat(50_000)),
            format!("[ws_read(path={})]", "[".repeat(50_000)),
            format!("<tool_call>{}", "{\"a\":".repeat(20_000)),
            "<tool_call>".repeat(5_000),
            "<function=ws_read><parameter=a>".repeat(5_000),
        ] {
            check(&text);
        }
    }
}
