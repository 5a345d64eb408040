//! One scan of a reply: the passes that find calls, each in its own file, record what they
//! find here. A pass marks what it read as taken so that later passes neither read it again
//! nor look inside it, and every finding keeps its offset so that all of them come out in
//! text order.

use std::ops::Range;

use serde_json::Value;

use super::classify::{base_name, is_snake, resolve, Classified};
use super::json_repair::note;
use super::lex::one_line;
use super::pythonic::{PyCall, PyError};
use super::{CallFormat, OfferedTool, TextCall, TextCalls};

/// Something a pass found, kept with its position so all passes' findings sort into text
/// order.
enum Found {
    Call(TextCall),
    Unknown(String),
    Unreadable(String),
}

/// Where a call was found: its sort key, its span and its format.
#[derive(Clone)]
pub(super) struct Site {
    pub(super) key: usize,
    pub(super) span: Range<usize>,
    pub(super) format: CallFormat,
}

impl Site {
    /// The site of the `k`-th call in the same container: same span, later in order.
    pub(super) fn nth(&self, k: usize) -> Site {
        Site {
            key: self.key + k,
            span: self.span.clone(),
            format: self.format,
        }
    }
}

/// One scan of a reply. Each pass marks what it read as taken, so later passes neither read
/// it again nor look inside it.
pub(super) struct Scan<'a> {
    pub(super) reply: &'a str,
    pub(super) offered: &'a [OfferedTool],
    found: Vec<(usize, Found)>,
    /// What earlier passes read, sorted and merged.
    pub(super) taken: Vec<Range<usize>>,
}

impl<'a> Scan<'a> {
    /// A scan of `reply` that has found nothing yet.
    pub(super) fn new(reply: &'a str, offered: &'a [OfferedTool]) -> Self {
        Scan {
            reply,
            offered,
            found: Vec::new(),
            taken: Vec::new(),
        }
    }
}

impl Scan<'_> {
    /// Whether a parsed list is meant as calls: it names an offered tool, or a snake_case
    /// name called with keyword arguments only.
    pub(super) fn recognized(&self, calls: &[PyCall]) -> bool {
        calls.iter().any(|c| {
            resolve(&c.name, self.offered).is_some()
                || (is_snake(base_name(&c.name)) && !c.args.is_empty() && c.positional == 0)
        })
    }

    pub(super) fn names_offered(&self, e: &PyError) -> bool {
        e.call
            .as_deref()
            .and_then(|n| resolve(n, self.offered))
            .is_some()
    }

    pub(super) fn py_calls(&mut self, site: &Site, calls: Vec<PyCall>) {
        for (k, c) in calls.into_iter().enumerate() {
            let at = site.nth(k);
            match resolve(&c.name, self.offered) {
                Some(tool) if c.positional > 0 => self.unreadable(at.key, positional_message(tool)),
                _ => self.call(&at, &c.name, Value::Object(c.args), Vec::new()),
            }
        }
    }

    pub(super) fn py_error(&mut self, key: usize, e: PyError, what: Option<&str>) {
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

    pub(super) fn classified(
        &mut self,
        site: &Site,
        c: Classified,
        extra: &[&'static str],
        what: &str,
    ) {
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

    pub(super) fn call(
        &mut self,
        site: &Site,
        name: &str,
        arguments: Value,
        repairs: Vec<&'static str>,
    ) {
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

    pub(super) fn unreadable(&mut self, key: usize, message: String) {
        self.found
            .push((key, Found::Unreadable(one_line(&message))));
    }

    /// Marks `r` taken, keeping `taken` sorted and merged.
    pub(super) fn take(&mut self, r: Range<usize>) {
        let k = self.taken.partition_point(|t| t.end < r.start);
        let mut merged = r;
        while let Some(t) = self.taken.get(k).filter(|t| t.start <= merged.end) {
            merged = merged.start.min(t.start)..merged.end.max(t.end);
            self.taken.remove(k);
        }
        self.taken.insert(k, merged);
    }

    /// The end of the taken range holding `at`.
    pub(super) fn taken_at(&self, at: usize) -> Option<usize> {
        let k = self.taken.partition_point(|t| t.start <= at);
        let t = self.taken.get(k.checked_sub(1)?)?;
        (at < t.end).then_some(t.end)
    }

    pub(super) fn finish(mut self) -> TextCalls {
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

fn positional_message(tool: &OfferedTool) -> String {
    let name = &tool.name;
    let key = tool.params.first().map_or("key", |(k, _)| k.as_str());
    format!(
        "a call to {name} with positional arguments: use keyword arguments, e.g. {name}({key}=\"...\")"
    )
}
