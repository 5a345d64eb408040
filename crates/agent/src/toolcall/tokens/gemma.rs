//! Gemma and FunctionGemma: `call:NAME{key:value,…}` between the model's call tokens, string
//! values between its quote token.

use serde_json::{Map, Value};
use slmcode_aci::registry::Kind;

use super::super::classify::resolve;
use super::super::lex::sub;
use super::super::scan::Scan;
use super::super::CallFormat;
use super::typed_value;

const GEMMA: [(&str, &str, &str); 2] = [
    ("<start_function_call>", "<end_function_call>", "<escape>"),
    ("<|tool_call>", "<tool_call|>", "<|\"|>"),
];

impl Scan<'_> {
    /// Gemma: `call:NAME{key:value,…}` between FunctionGemma's or Gemma 4's call tokens, each
    /// string value between the model's quote token.
    pub(super) fn gemma(&mut self) {
        for (open, close, quote) in GEMMA {
            let text = self.reply;
            let mut from = 0;
            while let Some(at) = self.free(from, open) {
                let (body, site) = self.block(at, (open, close), CallFormat::Gemma);
                let end = site.span.end;
                let inner = sub(text, body.start, body.end).trim();
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
