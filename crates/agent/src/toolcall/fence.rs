//! The fence pass: Markdown code fences. A fence whose info names a tool call, or JSON whose
//! content is a call, is read; every fence is taken either way, so code shown in one is
//! never read as a call in the prose.

use std::ops::Range;

use serde_json::Value;

use super::classify::{classify_all, looks_like_call, Classified};
use super::json_repair::repair_value;
use super::lex::{find_at, sub, trim_end_at};
use super::pythonic::{py_call_start, py_list_start, read_py_all};
use super::scan::{Scan, Site};
use super::CallFormat;

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

impl Scan<'_> {
    /// Markdown code fences. A fence is taken whether or not it holds a call, so code in it
    /// is never read as a bare call.
    pub(super) fn fences(&mut self) {
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
        // Hermes 2 Pro also fences a JSON call as ```xml, bare or in <response> tags.
        let xml = kind == "xml";
        let jsonish = toolish || xml || JSON_FENCES.contains(&kind.as_str());
        let what = format!("a ```{kind} block");
        let t = content.trim();
        let t = match t.strip_prefix("<response>").filter(|_| xml) {
            Some(inner) => inner
                .trim_end()
                .strip_suffix("</response>")
                .unwrap_or(inner)
                .trim(),
            None => t,
        };
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
}
