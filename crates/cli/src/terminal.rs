//! Text shown to a person who is deciding something — a hook to trust, a staged change to
//! apply, a config value — passes through here first. A repository controls that text, and a
//! terminal obeys the control sequences in it: `\x1b[2K\r\x1b[1A` can erase a `curl … | sh`
//! and print a harmless line in its place, and a bidi override can reorder what is read. Every
//! control character but newline and tab is shown as an escape instead.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every C0 and C1 control character (but `\n` and `\t`), DEL and Unicode bidi
/// control shown as a visible escape (`\x1b`, `\u{202e}`).
pub fn escape(text: &str) -> Cow<'_, str> {
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
    }
}
