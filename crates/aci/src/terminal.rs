//! Text a person reads on a terminal, made safe to show. That text holds what slmcode does
//! not control: a server's model names and error bodies, a model's commands and summaries, a
//! repository's file names, lines, hooks and config. A terminal obeys the control sequences in
//! it: `\x1b[2K\r\x1b[1A` can erase a `curl … | sh` and print a harmless line in its place,
//! U+009B is a CSI to an 8-bit terminal, and a bidi override reorders what is read. Through
//! [`Human`] every control character but newline and tab is shown as an escape instead.
//!
//! The one copy: ws_shell asks its question on the terminal through it, and the binary's
//! streams for a person (`crates/cli/src/terminal.rs`) wrap it.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

/// `text` with every C0 and C1 control character (but `\n` and `\t`), DEL and Unicode bidi
/// control shown as a visible escape (`\x1b`, `\u{202e}`). Escaping twice is escaping once:
/// an escape holds no control character.
fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            let code = c as u32;
            let _ = if code < 0x100 {
                write!(out, "\\x{code:02x}")
            } else {
                write!(out, "\\u{{{code:04x}}}")
            };
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c as u32, 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069 | 0x061C)
}

/// A stream a person reads: whatever is written is shown escaped. Bytes that are not UTF-8
/// (a file name, a lone 0x9b) are shown as `\xNN`; a character split across two writes is
/// held until its end arrives.
pub struct Human<W: Write> {
    inner: W,
    /// The start of a UTF-8 character whose end has not been written yet (at most 3 bytes).
    partial: Vec<u8>,
}

impl<W: Write> Human<W> {
    /// `inner`, escaped from now on.
    pub fn new(inner: W) -> Human<W> {
        Human {
            inner,
            partial: Vec::new(),
        }
    }
}

/// Appends `bytes` that are not UTF-8 to `out` as `\xNN` escapes.
fn escape_bytes(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        let _ = write!(out, "\\x{b:02x}");
    }
}

impl<W: Write> Write for Human<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut pending = std::mem::take(&mut self.partial);
        pending.extend_from_slice(buf);
        let mut shown = String::with_capacity(pending.len());
        let mut rest: &[u8] = &pending;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    shown.push_str(&escape(text));
                    rest = &[];
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    shown.push_str(&escape(std::str::from_utf8(valid).unwrap_or_default()));
                    match e.error_len() {
                        Some(bad) => {
                            escape_bytes(&mut shown, after.get(..bad).unwrap_or(after));
                            rest = after.get(bad..).unwrap_or_default();
                        }
                        // A character cut by the end of this write: its end comes next.
                        None => {
                            self.partial = after.to_vec();
                            rest = &[];
                        }
                    }
                }
            }
        }
        self.inner.write_all(shown.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for Human<W> {
    /// A character never finished is shown as the bytes it had.
    fn drop(&mut self) {
        if !self.partial.is_empty() {
            let mut shown = String::new();
            escape_bytes(&mut shown, &self.partial);
            let _ = self.inner.write_all(shown.as_bytes());
        }
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_become_visible() {
        assert_eq!(
            escape("curl x | sh\x1b[2K\r\x1b[1Aecho safe"),
            "curl x | sh\\x1b[2K\\x0d\\x1b[1Aecho safe"
        );
        assert_eq!(escape("a\u{202e}b\u{9b}c\x7f"), "a\\u{202e}b\\x9bc\\x7f");
        assert!(matches!(escape("plain\n\ttext"), Cow::Borrowed(_)));
        let once = escape("\x1b[2K\u{202e}").into_owned();
        assert_eq!(escape(&once), once);
    }

    /// What a person's stream gets for these writes, in this order.
    fn through_human(writes: &[&[u8]]) -> String {
        let mut out = Vec::new();
        {
            let mut human = Human::new(&mut out);
            for w in writes {
                human.write_all(w).unwrap();
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_stream_for_a_person_escapes_whatever_is_written() {
        // Formatted text: each piece escaped, newlines and tabs kept.
        let mut out = Vec::new();
        let name = "a\x1b[2Kb\u{202e}";
        writeln!(Human::new(&mut out), "model {name}\tok").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "model a\\x1b[2Kb\\u{202e}\tok\n"
        );
        // U+009B split across two writes is one character, escaped once it is whole.
        assert_eq!(through_human(&[b"a\xc2", b"\x9bb"]), "a\\x9bb");
        // Bytes that are not UTF-8 — a lone C1 CSI among them — are shown, never sent.
        assert_eq!(through_human(&[b"x\x9b2Jy\xff"]), "x\\x9b2Jy\\xff");
        // A character never finished is shown as what it had.
        assert_eq!(through_human(&[b"end\xe2\x80"]), "end\\xe2\\x80");
        assert_eq!(
            through_human(&[b"plain \xe2\x9c\x93\n"]),
            "plain \u{2713}\n"
        );
    }
}
