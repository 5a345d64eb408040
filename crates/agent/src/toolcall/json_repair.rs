//! The repair of the JSON small models write: single quotes, trailing commas, Python
//! literals, raw newlines, unquoted keys, missing closers, text around the object. One
//! string-aware pass rewrites the text; a parse error on the result is told at its place in
//! the text the model wrote, so the model can find it.

use serde_json::Value;

use super::lex::{hex_value, skip_ws, sub, word_end};
use super::repair_json_object;

/// Parses `text`, trimmed and opening with `{` or `[`, as JSON, repairing it if it must.
pub(super) fn repair_value(text: &str) -> Result<(Value, Vec<&'static str>), String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok((v, Vec::new())),
        Err(_) => repair_at(text, text.len() - text.trim_start().len()),
    }
}

/// The first object in prose that repairs into one.
pub(super) fn surrounded(
    text: &str,
    first: &serde_json::Error,
) -> Result<(Value, Vec<&'static str>), String> {
    first_object(text, |value, repairs| Ok((value, repairs)))
        .unwrap_or_else(|| Err(format!("no JSON object found: {first}")))
}

/// The first object opening at one of the `{` of `text`, left to right, that repairs and
/// that `accept` takes; the first error when none does, `None` when `text` has no `{`.
///
/// Each try reads from its `{` to where its object closes — to the end of the text when it
/// never does — so trying every `{` of a reply of unclosed braces would read the reply once
/// per brace (120 KB of `{a`: 28 s). The tries together read at most eight times the text
/// and a megabyte, then stop: the object a model means is seldom behind more than a few
/// braces that never close.
pub fn first_object<T>(
    text: &str,
    mut accept: impl FnMut(Value, Vec<&'static str>) -> Result<T, String>,
) -> Option<Result<T, String>> {
    let mut budget = text.len().saturating_mul(8).saturating_add(1 << 20);
    let mut failure = None;
    for (at, _) in text.match_indices('{') {
        let (repaired, end) = repair_measured(text, at);
        let tried = repaired.and_then(|(value, repairs)| accept(value, repairs));
        match tried {
            Ok(found) => return Some(Ok(found)),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
        let read = end.saturating_sub(at).max(1);
        match budget.checked_sub(read) {
            Some(left) => budget = left,
            None => break,
        }
    }
    failure.map(Err)
}

pub(super) fn into_object(
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
pub(super) fn repair_at(text: &str, start: usize) -> Result<(Value, Vec<&'static str>), String> {
    repair_measured(text, start).0
}

/// [`repair_at`], and where in `text` the value it read ends.
fn repair_measured(
    text: &str,
    start: usize,
) -> (Result<(Value, Vec<&'static str>), String>, usize) {
    let rw = Rewriter::new(text, start).run();
    let end = rw.end;
    (parse_rewritten(text, start, &rw), end)
}

fn parse_rewritten(
    text: &str,
    start: usize,
    rw: &Rewritten,
) -> Result<(Value, Vec<&'static str>), String> {
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
        Err(e) => Err(locate(&e, rw, text)),
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

/// The one string-aware repair pass over a value: see [`repair_json_object`] for what it
/// fixes. It reads the source once, left to right, writing the repaired JSON as it goes; each
/// step reads one token (a string, a bare word, a bracket or a separator) and returns whether
/// the value goes on.
struct Rewriter<'t> {
    text: &'t str,
    b: &'t [u8],
    /// The repaired JSON so far.
    out: Vec<u8>,
    repairs: Vec<&'static str>,
    /// `(output offset, source offset)` at each point where lengths stopped matching.
    marks: Vec<(usize, usize)>,
    /// The open brackets, innermost last.
    stack: Vec<u8>,
    /// Whether an object key may come next, so a bare word there is an unquoted key.
    expect_key: bool,
    /// Whether the text ended inside a string.
    in_string: bool,
    /// The source offset read next.
    i: usize,
}

impl<'t> Rewriter<'t> {
    /// A pass over the value opening at `start` in `text`.
    fn new(text: &'t str, start: usize) -> Self {
        let b = text.as_bytes();
        Rewriter {
            text,
            b,
            out: Vec::with_capacity(b.len().saturating_sub(start) + 16),
            repairs: Vec::new(),
            marks: vec![(0, start)],
            stack: Vec::new(),
            expect_key: false,
            in_string: false,
            i: start,
        }
    }

    /// Rewrites up to where the value closes (or the text ends) and closes what is still open.
    fn run(mut self) -> Rewritten {
        while let Some(&c) = self.b.get(self.i) {
            let go_on = match c {
                b'"' | b'\'' => self.string(c),
                _ if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => {
                    self.literal();
                    true
                }
                _ => self.structure(c),
            };
            if !go_on {
                break;
            }
        }
        self.finish()
    }

    /// The string opening at `i` with `quote`, written double-quoted with JSON escapes.
    /// Returns false when the text ends inside it.
    fn string(&mut self, quote: u8) -> bool {
        if quote == b'\'' {
            note(&mut self.repairs, "single quotes");
        }
        self.out.push(b'"');
        self.i += 1;
        self.in_string = true;
        while let Some(&d) = self.b.get(self.i) {
            self.i += 1;
            let escaped: &[u8] = match d {
                _ if d == quote => {
                    self.out.push(b'"');
                    self.in_string = false;
                    break;
                }
                b'\\' => match self.escape(quote) {
                    Some(escaped) => escaped,
                    None => continue,
                },
                b'"' => b"\\\"",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0..=0x1f => {
                    note(&mut self.repairs, "control characters");
                    self.out.extend_from_slice(format!("\\u{d:04x}").as_bytes());
                    self.marks.push((self.out.len(), self.i));
                    continue;
                }
                _ => {
                    self.out.push(d);
                    continue;
                }
            };
            if matches!(d, b'\n' | b'\r' | b'\t') {
                note(&mut self.repairs, "unescaped newlines");
            }
            self.out.extend_from_slice(escaped);
            self.marks.push((self.out.len(), self.i));
        }
        if self.in_string {
            return false;
        }
        if self.stack.last() == Some(&b'{') {
            self.expect_key = false;
        }
        true
    }

    /// The escape after a backslash at `i - 1` in a string opened with `quote`. An escape JSON
    /// has is copied and `None` returned; otherwise the text to write in its place.
    fn escape(&mut self, quote: u8) -> Option<&'static [u8]> {
        match self.b.get(self.i).copied() {
            Some(e @ (b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) => {
                self.out.extend_from_slice(&[b'\\', e]);
                self.i += 1;
                None
            }
            // The `u` and its digits are copied as they come.
            Some(b'u') if hex_value(self.b.get(self.i + 1..self.i + 5)).is_some() => {
                self.out.push(b'\\');
                None
            }
            Some(b'\'') => {
                if quote == b'"' {
                    note(&mut self.repairs, "invalid escape");
                }
                self.i += 1;
                Some(b"'")
            }
            _ => {
                note(&mut self.repairs, "invalid escape");
                Some(b"\\\\")
            }
        }
    }

    /// A bare word at `i`: an unquoted key, quoted, or a literal, with Python's spelled as
    /// JSON's.
    fn literal(&mut self) {
        let b = self.b;
        let end = word_end(b, self.i);
        let word = sub(self.text, self.i, end);
        let is_key = self.expect_key
            && self.stack.last() == Some(&b'{')
            && b.get(skip_ws(b, end)) == Some(&b':');
        if is_key {
            note(&mut self.repairs, "unquoted keys");
            self.out.push(b'"');
            self.out.extend_from_slice(word.as_bytes());
            self.out.push(b'"');
            self.expect_key = false;
            self.marks.push((self.out.len(), end));
        } else {
            let literal = match word {
                "True" => "true",
                "False" => "false",
                "None" => "null",
                _ => word,
            };
            if literal != word {
                note(&mut self.repairs, "python literals");
            }
            self.out.extend_from_slice(literal.as_bytes());
        }
        self.i = end;
    }

    /// Any other byte at `i`: brackets, separators, numbers, whitespace. A comma before a
    /// closer is dropped. Returns false once the outermost bracket closes.
    fn structure(&mut self, c: u8) -> bool {
        match c {
            b',' => {
                let next = self.b.get(skip_ws(self.b, self.i + 1)).copied();
                self.i += 1;
                if matches!(next, Some(b'}' | b']')) {
                    note(&mut self.repairs, "trailing comma");
                    self.marks.push((self.out.len(), self.i));
                } else {
                    self.out.push(b',');
                    self.expect_key = self.stack.last() == Some(&b'{');
                }
            }
            b'{' | b'[' => {
                self.stack.push(c);
                self.out.push(c);
                self.i += 1;
                self.expect_key = c == b'{';
            }
            b'}' | b']' => {
                self.stack.pop();
                self.out.push(c);
                self.i += 1;
                self.expect_key = false;
                if self.stack.is_empty() {
                    return false;
                }
            }
            b':' => {
                self.out.push(c);
                self.i += 1;
                self.expect_key = false;
            }
            _ => {
                self.out.push(c);
                self.i += 1;
            }
        }
        true
    }

    /// Closes the brackets a cut-off value left open (not when it was cut inside a string:
    /// what the string held is not known).
    fn finish(mut self) -> Rewritten {
        if !self.in_string && !self.stack.is_empty() {
            self.marks.push((self.out.len(), self.b.len()));
            for open in self.stack.iter().rev() {
                self.out.push(if *open == b'{' { b'}' } else { b']' });
            }
            note(&mut self.repairs, "missing closing brace");
        }
        let out = String::from_utf8(self.out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Rewritten {
            out,
            repairs: self.repairs,
            marks: self.marks,
            end: self.i,
        }
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

pub(super) fn note(repairs: &mut Vec<&'static str>, repair: &'static str) {
    if !repairs.contains(&repair) {
        repairs.push(repair);
    }
}
