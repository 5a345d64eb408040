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

pub(super) fn note(repairs: &mut Vec<&'static str>, repair: &'static str) {
    if !repairs.contains(&repair) {
        repairs.push(repair);
    }
}
