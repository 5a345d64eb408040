//! The inline pass: JSON call objects and Python-style call lists in the prose, outside any
//! tag or fence. It tries every `{` and `[`, so [`Inline`] and [`Brackets`] keep that close
//! to linear on long or degenerate replies.

use std::ops::Range;

use serde_json::Value;

use super::classify::{classify_all, key_offsets, ARGS_KEYS, EXTRA_KEYS, NAME_KEYS};
use super::lex::{bracket_events, skip_ws, sub, word_end};
use super::pythonic::{py_list_start, read_py_list};
use super::repair_json_object;
use super::scan::{Scan, Site};
use super::CallFormat;

impl Scan<'_> {
    /// Bare JSON objects and Python-style lists in the prose, left to right, so that neither
    /// is read inside the other.
    pub(super) fn inline(&mut self) {
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
