//! A call a line: OLMo 3's Python-style calls in `<function_calls>`, and Functionary v3.2's
//! `>>>NAME` followed by the arguments.

use serde_json::{Map, Value};
use slmcode_aci::registry::Kind;

use super::super::classify::resolve;
use super::super::lex::{find_at, sub};
use super::super::pythonic::read_py_all;
use super::super::scan::Scan;
use super::super::{CallFormat, OfferedTool};
use super::name_end;

const OLMO: (&str, &str) = ("<function_calls>", "</function_calls>");

impl Scan<'_> {
    /// Functionary v3.2: `>>>NAME` on a line of its own, then the JSON arguments (or, for a
    /// tool with one string parameter such as `python`, the raw text); `>>>all` is prose.
    pub(super) fn functionary(&mut self) {
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

    /// OLMo 3: Python-style calls, one a line, in `<function_calls>`.
    pub(super) fn olmo(&mut self) {
        let (open, close) = OLMO;
        let text = self.reply;
        let mut from = 0;
        while let Some(at) = self.free(from, open) {
            let (body, site) = self.block(at, (open, close), CallFormat::Olmo);
            let end = site.span.end;
            let mut k = 0;
            for line in sub(text, body.start, body.end)
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
}

/// Where a reply that starts with an offered tool's name alone on its first line, then JSON
/// (or text for a one-string tool), starts: Functionary's first call after a prompt ending in
/// `>>>`. `None` for anything else.
fn first_recipient(text: &str, offered: &[OfferedTool]) -> Option<usize> {
    let (first, rest) = text.split_once('\n')?;
    let tool = offered.iter().find(|t| t.name == first.trim_end())?;
    let one_string = matches!(tool.params.as_slice(), [(_, Kind::String)]);
    (rest.trim_start().starts_with('{') || one_string).then_some(0)
}
