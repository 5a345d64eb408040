//! The Hermes pass: `<tool_call>` tags, the format most chat templates teach. A tag may hold
//! JSON (one object, several, or an array), Qwen3-Coder XML, or a Python-style call, and
//! may be left unclosed when the model stops early.

use super::classify::{classify_all, is_tool_name};
use super::json_repair::repair_value;
use super::lex::{
    after_backtick, balanced_end, find_at, next_tag, skip_ws, strip_fence, sub, trim_end_at,
};
use super::pythonic::{py_call_start, py_list_start, read_py_all};
use super::qwen_xml::{read_function, Layout, FUNCTION_TAG};
use super::repair_json_object;
use super::scan::{Scan, Site};
use super::CallFormat;

/// The tags around a Hermes call; Qwen3-Coder templates use them too.
pub(super) const OPEN_TAG: &str = "<tool_call>";
pub(super) const CLOSE_TAG: &str = "</tool_call>";

impl Scan<'_> {
    /// `<tool_call>` tags, holding JSON, Qwen XML or a Python-style call.
    pub(super) fn tags(&mut self) {
        let text = self.reply;
        let mut from = 0;
        // The next closing tag, searched again only once it is behind us.
        let mut close: Option<Option<usize>> = None;
        while let Some(start) = find_at(text, from, OPEN_TAG) {
            let body_start = start + OPEN_TAG.len();
            // Inside reasoning: never a call.
            if let Some(end) = self.taken_at(start) {
                from = end;
                continue;
            }
            if let Some(end) = self.xml_tag(start, body_start) {
                from = end;
                continue;
            }
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

    /// A `<tool_call>` tag whose body is Qwen3-Coder XML: its values are literal text, so the
    /// blocks' own structure, not the next tag-like text, says where the call ends. Returns
    /// where scanning goes on, or `None` when the body is something else.
    fn xml_tag(&mut self, start: usize, body_start: usize) -> Option<usize> {
        let text = self.reply;
        let b = text.as_bytes();
        let mut at = skip_ws(b, body_start);
        if !sub(text, at, text.len()).starts_with(FUNCTION_TAG) || after_backtick(text, start) {
            return None;
        }
        let mut blocks = Vec::new();
        let mut end;
        loop {
            let (block_end, block) =
                read_function(text, at, text.len(), self.offered, Layout::Qwen);
            blocks.push(block);
            end = block_end.max(at + FUNCTION_TAG.len());
            let next = skip_ws(b, end);
            if !sub(text, next, text.len()).starts_with(FUNCTION_TAG) {
                break;
            }
            at = next;
        }
        let after = skip_ws(b, end);
        if sub(text, after, text.len()).starts_with(CLOSE_TAG) {
            end = after + CLOSE_TAG.len();
        }
        let site = Site {
            key: start,
            span: start..end,
            format: CallFormat::QwenXml,
        };
        self.take(site.span.clone());
        for (k, block) in blocks.into_iter().enumerate() {
            self.function(&site.nth(k), block);
        }
        Some(end)
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
                let (end, block) = read_function(text, at, body_end, self.offered, Layout::Qwen);
                self.function(&qwen.nth(k), block);
                k += 1;
                from = end.max(at + FUNCTION_TAG.len());
            }
            return;
        }
        // GLM: the name, then `<arg_key>`/`<arg_value>` pairs (or the name alone).
        if t.contains("<arg_key>") || (!t.is_empty() && is_tool_name(t)) {
            self.glm(site, t);
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
