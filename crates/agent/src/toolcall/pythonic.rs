//! A reader of Python-style calls, `[name(key=value), …]` and `name(key=value)`, as models
//! trained on Python function calling write them. Only literal arguments are read: strings
//! (raw, triple-quoted, adjacent), numbers, booleans, `None`, lists, tuples and dicts.

use serde_json::{Map, Number, Value};

use super::lex::{hex_value, ident_end, line_end, skip_ws, sub};

/// Deepest list/dict nesting read in a Python-style call.
const MAX_DEPTH: usize = 64;

/// One call of a Python-style list.
pub(super) struct PyCall {
    pub(super) name: String,
    pub(super) args: Map<String, Value>,
    pub(super) positional: usize,
}

/// Why a Python-style call could not be read, and in which call.
pub(super) struct PyError {
    pub(super) at: usize,
    pub(super) msg: String,
    pub(super) call: Option<String>,
    pub(super) positional: bool,
}

/// Reads `[name(key=value), …]` or `name(key=value) …` filling all of `text`.
pub(super) fn read_py_all(text: &str) -> Result<Vec<PyCall>, PyError> {
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
pub(super) fn read_py_list(text: &str, start: usize) -> Result<(usize, Vec<PyCall>), PyError> {
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

/// Whether `b` at `i` opens a Python-style call list: `[` name `(`.
pub(super) fn py_list_start(b: &[u8], i: usize) -> bool {
    b.get(i) == Some(&b'[') && py_call_start(b, skip_ws(b, i + 1))
}

/// Whether `b` at `i` opens a call: a dotted name and `(`.
pub(super) fn py_call_start(b: &[u8], i: usize) -> bool {
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
