//! Byte-level helpers the passes share: slicing that never panics, finding tags and line
//! ends, skipping whitespace and words, and the bracket scanner that skips strings.

/// Longest message kept in `unreadable`, in characters.
const MAX_MESSAGE: usize = 300;

/// `message` on one line, cut to a readable length.
pub(super) fn one_line(message: &str) -> String {
    let mut out: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_MESSAGE)
        .collect();
    if message.chars().nth(MAX_MESSAGE).is_some() {
        out.push('…');
    }
    out
}

/// `text[from..to]`, or "" when that is not a valid slice.
pub(super) fn sub(text: &str, from: usize, to: usize) -> &str {
    text.get(from..to).unwrap_or("")
}

pub(super) fn find_at(text: &str, from: usize, needle: &str) -> Option<usize> {
    text.get(from..)?.find(needle).map(|k| k + from)
}

/// The first of `tags` at or after `from` and before `limit`: its offset and index.
pub(super) fn next_tag(
    text: &str,
    from: usize,
    limit: usize,
    tags: &[&str],
) -> Option<(usize, usize)> {
    let hay = text.get(from..limit.min(text.len()))?;
    hay.match_indices('<').find_map(|(k, _)| {
        let rest = hay.get(k..)?;
        tags.iter()
            .position(|t| rest.starts_with(t))
            .map(|t| (from + k, t))
    })
}

/// `lo` plus the length of `text[lo..hi]` without trailing whitespace.
pub(super) fn trim_end_at(text: &str, lo: usize, hi: usize) -> usize {
    lo + sub(text, lo, hi).trim_end().len()
}

/// The offset of the next newline at or after `from`, or `limit`.
pub(super) fn line_end(text: &str, from: usize, limit: usize) -> usize {
    find_at(text, from, "\n").map_or(limit, |e| e.min(limit))
}

pub(super) fn skip_ws(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

pub(super) fn ident_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        i += 1;
    }
    i
}

/// The end of a bare word in sloppy JSON: an unquoted key or a literal.
pub(super) fn word_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'-'))
    {
        i += 1;
    }
    i
}

pub(super) fn hex_value(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    std::str::from_utf8(digits)
        .ok()
        .and_then(|s| u32::from_str_radix(s, 16).ok())
}

/// Whether the text before `at` ends with a backtick: a tag quoted in prose.
pub(super) fn after_backtick(text: &str, at: usize) -> bool {
    sub(text, 0, at).ends_with('`')
}

/// The brackets of `b` from `from` on that lie outside strings (either quote; backslash escapes
/// skipped): `(index, true)` for an opener, `(index, false)` for a closer. The one scanner
/// behind [`balanced_end`] and the inline pass's `Brackets` cache.
pub(super) fn bracket_events(b: &[u8], from: usize) -> impl Iterator<Item = (usize, bool)> + '_ {
    let mut quote = None;
    let mut i = from;
    std::iter::from_fn(move || {
        while let Some(&c) = b.get(i) {
            let at = i;
            i += 1;
            match quote {
                Some(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'"' | b'\'' => quote = Some(c),
                    b'{' | b'[' => return Some((at, true)),
                    b'}' | b']' => return Some((at, false)),
                    _ => {}
                },
            }
        }
        None
    })
}

/// The end of the bracketed value opening at `start`, skipping strings in either quote;
/// `None` when the text ends first.
pub(super) fn balanced_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, opens) in bracket_events(b, start) {
        if opens {
            depth += 1;
        } else {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(at + 1);
            }
        }
    }
    None
}

/// `t`, trimmed, without a Markdown code fence around it: models fence the JSON inside a tag
/// (Hermes) or after a token (DeepSeek V3).
pub(super) fn strip_fence(t: &str) -> &str {
    let t = t.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}
