//! Backslash escapes in old_str: a model that escaped its line breaks (or its quotes) meant real
//! ones, but a file may hold the two characters `\n` itself — in a string, a regex, a char
//! literal. The readings of what the model meant live here, apart from the ladder, because
//! telling those two apart is its own careful problem.
//!
//! Whatever reading makes old_str land is applied to new_str too, the same way: the channel
//! that escaped one escaped the other, and a new_str decoded by half would write backslashes
//! the model never meant into the file.

/// One reading of old_str's and new_str's escapes: both texts decoded alike.
pub(super) struct Reading {
    pub(super) old: String,
    pub(super) new: String,
    /// The reading is the file's own (every escape decided by what the file has there), so
    /// only an exact match of it counts.
    pub(super) exact_only: bool,
}

/// The readings worth trying for `old`, most faithful first; none when old has no escape the
/// ladder could not already have matched.
pub(super) fn readings(view: &str, old: &str, new: &str) -> Vec<Reading> {
    let mut out = Vec::new();
    let escaped_breaks = !old.contains('\n') && old.contains("\\n");
    let escaped_quotes = old.contains("\\\"") || old.contains("\\'");
    if escaped_breaks {
        if let Some((old, new)) = decode_by_file(view, old, new) {
            out.push(Reading {
                old,
                new,
                exact_only: true,
            });
        }
    }
    let mut decodings: Vec<fn(&str) -> String> = Vec::new();
    if escaped_breaks {
        decodings.extend([
            unescape_newlines_outside_strings as fn(&str) -> String,
            unescape_newlines,
        ]);
    }
    if escaped_breaks || escaped_quotes {
        // With a real line break on either side the channel did not escape line breaks:
        // only quotes and backslashes are the channel's, and `\n` stays the file's.
        decodings.push(if old.contains('\n') || new.contains('\n') {
            unescape_quotes
        } else {
            unescape
        });
    }
    for decode in decodings {
        let decoded = decode(old);
        if decoded != old {
            out.push(Reading {
                old: decoded,
                new: decode(new),
                exact_only: false,
            });
        }
    }
    out
}

/// Reads a one-line old_str's `\n` escapes the way the file has them: each is either a line
/// break the model escaped or the file's own two characters `\n` (in a string, a regex, a
/// char literal), and at any place in the file only one of the two can follow — so walking the
/// file from where old's first piece occurs decides every one. Returns old and new decoded
/// when exactly one place in the file fits. new's escapes are decided like the old ones they
/// came from (found by a character diff of the two); those it adds are line breaks.
pub(super) fn decode_by_file(view: &str, old: &str, new: &str) -> Option<(String, String)> {
    const ESC: &str = "\\n";
    let parts: Vec<&str> = old.split(ESC).collect();
    let first = *parts.first()?;
    if parts.len() < 2 || first.is_empty() {
        return None;
    }
    let bytes = view.as_bytes();
    let mut fits: Option<Vec<bool>> = None;
    for start in memchr::memmem::find_iter(bytes, first.as_bytes()) {
        let mut at = start + first.len();
        let mut breaks = Vec::with_capacity(parts.len() - 1);
        let walked = parts[1..].iter().all(|part| {
            let line_break = match bytes.get(at) {
                Some(b'\n') => true,
                Some(b'\\') if bytes.get(at + 1) == Some(&b'n') => false,
                _ => return false,
            };
            at += if line_break { 1 } else { 2 };
            breaks.push(line_break);
            let fits_here = view.get(at..).is_some_and(|rest| rest.starts_with(part));
            at += part.len();
            fits_here
        });
        if walked {
            if fits.is_some() {
                return None;
            }
            fits = Some(breaks);
        }
    }
    let breaks = fits?;
    if !breaks.iter().any(|b| *b) {
        return None;
    }
    let decode = |parts: &[&str], breaks: &[bool]| {
        let mut out = String::new();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push_str(if breaks[i - 1] { "\n" } else { ESC });
            }
            out.push_str(part);
        }
        out
    };
    let old_decoded = decode(&parts, &breaks);
    // Where each escape of old starts (char index), and what it was read as.
    let old_chars: Vec<char> = old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let escapes = |chars: &[char]| -> Vec<usize> {
        (0..chars.len().saturating_sub(1))
            .filter(|&i| chars[i] == '\\' && chars[i + 1] == 'n')
            .collect()
    };
    let old_at: Vec<usize> = escapes(&old_chars);
    // `split` and this scan agree unless an escape overlaps another (`\\n`): then give up.
    if old_at.len() != breaks.len() || old_at.windows(2).any(|w| w[1] == w[0] + 1) {
        return None;
    }
    let mut from_old: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_chars, &new_chars) {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                from_old.insert(new_index + k, old_index + k);
            }
        }
    }
    let new_parts: Vec<&str> = new.split(ESC).collect();
    let new_at = escapes(&new_chars);
    if new_at.len() + 1 != new_parts.len() {
        return None;
    }
    let new_breaks: Vec<bool> = new_at
        .iter()
        .map(|&j| {
            let mapped = from_old.get(&j).zip(from_old.get(&(j + 1)));
            match mapped {
                Some((&i, &i1)) if i1 == i + 1 => old_at
                    .iter()
                    .position(|&o| o == i)
                    .is_none_or(|k| breaks[k]),
                _ => true,
            }
        })
        .collect();
    Some((old_decoded, decode(&new_parts, &new_breaks)))
}

/// The escaped line breaks of a one-line text that stand outside string literals: the file's
/// own `"a\n"` stays as it is when the model escaped only its real line breaks. A quote opens
/// a literal unless it follows a letter or digit (the apostrophe of "don't" in a comment).
pub(super) fn unescape_newlines_outside_strings(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut open: Option<char> = None;
    let mut prev = ' ';
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (open, c) {
            (Some(_), '\\') => {
                // An escape inside a literal is the file's: kept, and it cannot close it.
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
                prev = 'x';
                continue;
            }
            (Some(q), _) if c == q => open = None,
            (None, '\\') if chars.peek() == Some(&'n') => {
                chars.next();
                out.push('\n');
                prev = '\n';
                continue;
            }
            (None, '\\') if chars.peek() == Some(&'r') => {
                let mut ahead = chars.clone();
                ahead.next();
                if ahead.next() == Some('\\') && ahead.next() == Some('n') {
                    chars.nth(2);
                    out.push('\n');
                    prev = '\n';
                    continue;
                }
            }
            (None, '"' | '`') => open = Some(c),
            (None, '\'') if !prev.is_alphanumeric() && !lifetime(prev, chars.clone()) => {
                open = Some(c)
            }
            _ => {}
        }
        out.push(c);
        prev = c;
    }
    out
}

/// True when the `'` after `prev` starts a Rust lifetime (`<'_>`, `&'a str`), not a quoted
/// literal: right after `<` or `&`, a name, and no closing quote right after it.
fn lifetime(prev: char, mut rest: impl Iterator<Item = char>) -> bool {
    if !matches!(prev, '<' | '&') {
        return false;
    }
    let mut name = 0;
    for c in rest.by_ref() {
        if c.is_alphanumeric() || c == '_' {
            name += 1;
            continue;
        }
        return name > 0 && c != '\'';
    }
    name > 0
}

/// Only the escaped line breaks (`\n`, `\r\n`) of a one-line text.
pub(super) fn unescape_newlines(s: &str) -> String {
    s.replace("\\r\\n", "\n").replace("\\n", "\n")
}

/// Only the quotes and backslashes of a text unescaped (`\"`, `\'`, `\\`): every other
/// escape, `\n` among them, stays as written.
pub(super) fn unescape_quotes(s: &str) -> String {
    decode(s, false)
}

/// `\n`, `\t`, `\"`, `\'` and `\\` unescaped.
pub(super) fn unescape(s: &str) -> String {
    decode(s, true)
}

/// The one scanner of backslash escapes: quotes and backslashes always, line breaks and tabs
/// when `breaks` (a `\r` then goes, as the `\n` after it is the line break). An escape it does
/// not decode stays as written.
fn decode(s: &str, breaks: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(q @ ('"' | '\'' | '\\')) => out.push(q),
            Some('n') if breaks => out.push('\n'),
            Some('t') if breaks => out.push('\t'),
            Some('r') if breaks => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::apply;
    use super::super::Rung;
    use super::unescape_newlines_outside_strings;

    #[test]
    fn unicode_and_escapes() {
        let (r, out) = apply(
            "say(\"hi\") # it's\n",
            "say(“hi”) # it’s\n",
            "say(“bye”) # it’s\n",
        );
        assert_eq!(r, Rung::Unicode);
        assert_eq!(out, "say(\"bye\") # it's\n");
        let (r, out) = apply("a = 1\nb = 2\n", "a = 1\\nb = 2", "a = 1\\nb = 3");
        assert_eq!(r, Rung::Escapes);
        assert_eq!(out, "a = 1\nb = 3\n");
    }

    #[test]
    fn escapes_inside_string_literals_stay_the_files() {
        let file = "fn main() {\n    println!(\"a\\nb\");\n    let x = 1;\n}\n";
        let (r, out) = apply(
            file,
            "    println!(\"a\\nb\");\\n    let x = 1;",
            "    println!(\"a\\nb\");\\n    let x = 2;",
        );
        assert_eq!(r, Rung::Escapes);
        assert_eq!(
            out,
            "fn main() {\n    println!(\"a\\nb\");\n    let x = 2;\n}\n"
        );
        // An apostrophe in a comment does not open a literal.
        assert_eq!(
            unescape_newlines_outside_strings("# don't\\nx = 'a\\nb'\\r\\ny"),
            "# don't\nx = 'a\\nb'\ny"
        );
        // Nor does a Rust lifetime; a char literal after `&` still is one.
        assert_eq!(
            unescape_newlines_outside_strings("fn fmt(f: &mut Formatter<'_>) {\\n    x();"),
            "fn fmt(f: &mut Formatter<'_>) {\n    x();"
        );
        assert_eq!(
            unescape_newlines_outside_strings("g(&'a str)\\nh(&'\\n')"),
            "g(&'a str)\nh(&'\\n')"
        );
    }

    #[test]
    fn the_file_decides_which_escapes_were_line_breaks() {
        // A regex literal, a byte literal and a raw string keep their `\n`; the others were
        // line breaks. new's escapes follow old's, and its added line break is one.
        let file = "const d = s.replace(/^#!.*?\\n/, '')\nlet b = b'\\n';\nlet r = r#\"{\"a\":\"b\\n\"}\"#;\nend()\n";
        let old = "const d = s.replace(/^#!.*?\\n/, '')\\nlet b = b'\\n';\\nlet r = r#\"{\"a\":\"b\\n\"}\"#;";
        let new = "const d = s.replace(/^#!.*?\\n/, '')\\nlet b = b'\\n';\\nlet r = r#\"{\"a\":\"b\\n\"}\"#;\\nlog(r);";
        let (r, out) = apply(file, old, new);
        assert_eq!(r, Rung::Escapes);
        assert_eq!(
            out,
            "const d = s.replace(/^#!.*?\\n/, '')\nlet b = b'\\n';\nlet r = r#\"{\"a\":\"b\\n\"}\"#;\nlog(r);\nend()\n"
        );
    }
}
