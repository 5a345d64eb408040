//! The rungs' search: where each rung of the ladder finds old in the file — verbatim, line
//! for line under a normalization, or between two unique anchor lines. Only finding lives here,
//! so what a rung accepts can be read (and bounded) in one place; turning a candidate into text
//! is [`super::reindent`]'s.

use std::borrow::Cow;

use super::{Lines, Query, Span};

fn in_window(q: &Query, first_line: usize) -> bool {
    q.first_line_in
        .as_ref()
        .is_none_or(|w| w.contains(&first_line))
}

/// Rung 1: every position where old occurs verbatim (overlapping occurrences count).
pub(super) fn exact(lines: &Lines, q: &Query) -> Vec<Span> {
    let hay = lines.text.as_bytes();
    let needle = q.old.as_bytes();
    let finder = memchr::memmem::Finder::new(needle);
    let mut out = Vec::new();
    let mut from = 0;
    while from <= hay.len() {
        let Some(p) = finder.find(&hay[from..]) else {
            break;
        };
        let at = from + p;
        from = at + 1;
        let first = lines.line_of(at);
        if q.whole_lines && lines.start(first) != at {
            continue;
        }
        if !in_window(q, first) {
            continue;
        }
        let end = at + needle.len();
        let last = if end > at {
            lines.line_of(end - 1)
        } else {
            first
        };
        out.push(Span(first, last, Some((at, end))));
    }
    out
}

pub(super) fn trim_end(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s.trim_end())
}

pub(super) fn trim_both(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s.trim())
}

/// Rungs 2–4 and 6: whole-line comparison under a normalization, optionally skipping blank
/// lines on both sides.
pub(super) fn by_lines(
    lines: &Lines,
    old_lines: &[&str],
    q: &Query,
    norm: fn(&str) -> Cow<'_, str>,
    skip_blank: bool,
) -> Vec<Span> {
    let old: Vec<Cow<str>> = old_lines
        .iter()
        .filter(|l| !skip_blank || !l.trim().is_empty())
        .map(|l| norm(l))
        .collect();
    if old.is_empty() {
        return Vec::new();
    }
    // The file side: indices of the lines taking part, and their normalized text.
    let idx: Vec<usize> = (0..lines.len())
        .filter(|&i| !skip_blank || !lines.line(i).trim().is_empty())
        .collect();
    let mut out = Vec::new();
    if idx.len() < old.len() {
        return out;
    }
    for j in 0..=idx.len() - old.len() {
        let first = idx[j];
        if !in_window(q, first) {
            continue;
        }
        if norm(lines.line(first)) != old[0] {
            continue;
        }
        if (1..old.len()).all(|k| norm(lines.line(idx[j + k])) == old[k]) {
            out.push(Span::lines(first, idx[j + old.len() - 1]));
        }
    }
    out
}

/// Rung 5, bounded so it cannot land in the wrong place: old must have at least three
/// non-blank lines; its first and last are non-trivial and each occurs exactly once in the
/// file (trimmed); the span between them has as many non-blank lines as old; and at least half
/// of the middle lines agree once whitespace is collapsed (when the span is old line for line,
/// its blank lines count as agreeing middle lines).
pub(super) fn anchored(lines: &Lines, old_lines: &[&str], q: &Query) -> Vec<Span> {
    let old: Vec<&str> = old_lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if old.len() < 3 {
        return Vec::new();
    }
    let (first, last) = (old[0], old[old.len() - 1]);
    if is_trivial(first) || is_trivial(last) {
        return Vec::new();
    }
    let find_unique = |want: &str| {
        let mut hits = (0..lines.len()).filter(|&i| lines.line(i).trim() == want);
        match (hits.next(), hits.next()) {
            (Some(i), None) => Some(i),
            _ => None,
        }
    };
    let (Some(a), Some(b)) = (find_unique(first), find_unique(last)) else {
        return Vec::new();
    };
    if a >= b || !in_window(q, a) {
        return Vec::new();
    }
    let span_nb: Vec<&str> = (a..=b)
        .map(|i| lines.line(i).trim())
        .filter(|l| !l.is_empty())
        .collect();
    if span_nb.len() != old.len() {
        return Vec::new();
    }
    let middle = old.len() - 2;
    let agree = (1..=middle)
        .filter(|&k| collapse_ws(span_nb[k]) == collapse_ws(old[k]))
        .count();
    // When the stretch is old line for line (blank lines in the same places), a blank line
    // the model put where the file has one agrees too: a 4-line span with a blank line in it
    // has a single non-blank middle line, which then is not all there is to go on.
    let trimmed_old: Vec<&str> = {
        let first_nb = old_lines
            .iter()
            .position(|l| !l.trim().is_empty())
            .unwrap_or(0);
        let last_nb = old_lines
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .unwrap_or(0);
        old_lines[first_nb..=last_nb].to_vec()
    };
    let line_for_line = b + 1 - a == trimmed_old.len()
        && (a..=b)
            .zip(&trimmed_old)
            .all(|(i, o)| lines.line(i).trim().is_empty() == o.trim().is_empty());
    let (agree, middle) = if line_for_line {
        let blanks = trimmed_old.iter().filter(|o| o.trim().is_empty()).count();
        (agree + blanks, middle + blanks)
    } else {
        (agree, middle)
    };
    if agree * 2 < middle {
        return Vec::new();
    }
    vec![Span::lines(a, b)]
}

/// Lines that say nothing about where they are: only punctuation, or a block keyword.
fn is_trivial(line: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "end", "fi", "done", "esac", "else", "endif", "begin", "then", "do", "try", "finally",
        "pass", "break", "continue", "return", "default:", "else:", "try:", "finally:",
    ];
    !line.chars().any(char::is_alphanumeric) || KEYWORDS.contains(&line.trim_end_matches(';'))
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The ASCII punctuation a full-width form (`（`, `：`, `＝`) stands for: an input method or a
/// channel set in CJK type gives a model these for plain punctuation. Full-width letters and
/// digits are left alone — they are text, not typesetting.
fn full_width_punctuation(c: char) -> Option<char> {
    let ascii = char::from_u32((c as u32).checked_sub(0xFEE0)?)?;
    (('\u{FF01}'..='\u{FF5E}').contains(&c) && ascii.is_ascii_punctuation()).then_some(ascii)
}

/// Smart quotes, dashes, ellipses, unusual spaces, zero-width characters and full-width
/// punctuation mapped to ASCII, whitespace collapsed,
/// and a run of dashes counted as one: a channel that typesets `--force` as `—force` turns two
/// characters into one. Most lines are plain ASCII with single spaces and no `--`: those are
/// borrowed, not rebuilt.
pub(super) fn unicode_normalized(s: &str) -> Cow<'_, str> {
    let t = s.trim();
    if t.is_ascii() && !t.contains("  ") && !t.contains('\t') && !t.contains("--") {
        return Cow::Borrowed(t);
    }
    let mut out = collapse_ws(&ascii_punctuation(t, |_| true));
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    Cow::Owned(out)
}

pub(super) fn ascii_punctuation(s: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let mapped = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Some("'"),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Some("\""),
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => Some("-"),
            '\u{2026}' => Some("..."),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
                Some(" ")
            }
            '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Some(""),
            _ => None,
        };
        match mapped {
            Some(m) if keep(c) => out.push_str(m),
            None if keep(c) && full_width_punctuation(c).is_some() => {
                out.extend(full_width_punctuation(c));
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{apply, q};
    use super::super::{run, Ladder, Rung};

    #[test]
    fn trailing_whitespace() {
        let (r, out) = apply(
            "fn a() {\n    x();\n}\n",
            "fn a() {  \n    x();   \n",
            "fn a() {  \n    y();  \n",
        );
        assert_eq!(r, Rung::TrailingWhitespace);
        assert_eq!(out, "fn a() {\n    y();\n}\n");
    }

    #[test]
    fn a_double_dash_typeset_as_one_still_lands_and_stays_double() {
        let file = "/// Kept unless --force.\npub fn run(force: bool) {\n    let f = force;\n}\n";
        let (r, out) = apply(
            file,
            "/// Kept unless —force.\npub fn run(force: bool) {\n    let f = force;\n",
            "/// Kept unless —force.\npub fn run(force_v2: bool) {\n    let f = force_v2;\n",
        );
        assert_eq!(r, Rung::Unicode);
        assert_eq!(
            out,
            "/// Kept unless --force.\npub fn run(force_v2: bool) {\n    let f = force_v2;\n}\n"
        );
        // A changed line keeps the file's `--` too, and what the model added learns it.
        let (_, out) = apply(
            file,
            "/// Kept unless —force.\npub fn run(force: bool) {\n",
            "/// Kept unless —force or —yes.\npub fn run(force: bool) {\n",
        );
        assert!(
            out.starts_with("/// Kept unless --force or --yes.\n"),
            "{out}"
        );
    }

    #[test]
    fn anchored_bounded() {
        let file = "def f(x):\n    y = x + 1\n    z = y * 2\n    w = z - 3\n    return w\n";
        let (r, out) = apply(
            file,
            "def f(x):\n    y = x + 1\n    z = y * 3\n    w = z - 3\n    return w\n",
            "def f(x):\n    return x\n",
        );
        assert_eq!(r, Rung::Anchored);
        assert_eq!(out, "def f(x):\n    return x\n");
        // Too few middle lines agree: refused.
        let miss = run(
            file,
            &q("def f(x):\n    a\n    b\n    c\n    return w\n", "x"),
        );
        assert_eq!(miss, Ladder::NotFound);
        // A trivial anchor is refused.
        let miss = run("{\n a\n b\n}\n", &q("{\n a\n c\n}\n", "x"));
        assert_eq!(miss, Ladder::NotFound);
    }

    #[test]
    fn overlapping_exact_positions_count() {
        assert!(matches!(
            run("aaa", &q("aa", "b")),
            Ladder::Ambiguous { .. }
        ));
    }

    #[test]
    fn anchors_with_a_blank_line_between_pin_a_single_middle_line() {
        let file = "fn a() {}\n\nfn load(path: &str) -> Config {\n    let text = read(path);\n\n    parse(&text)\n}\n";
        let (r, out) = apply(
            file,
            "fn load(path: &str) -> Config {\n    let text = reed(path);\n\n    parse(&text)\n",
            "fn load(path: &str) -> Config {\n    let text = reed(path);\n\n    parse(&text).unwrap()\n",
        );
        assert_eq!(r, Rung::Anchored);
        assert_eq!(
            out,
            "fn a() {}\n\nfn load(path: &str) -> Config {\n    let text = read(path);\n\n    parse(&text).unwrap()\n}\n"
        );
        // Without the blank line the one middle line is all there is: refused.
        let file =
            "fn load(path: &str) -> Config {\n    let text = read(path);\n    parse(&text)\n}\n";
        let miss = run(
            file,
            &q(
                "fn load(path: &str) -> Config {\n    let text = reed(path);\n    parse(&text)\n",
                "x",
            ),
        );
        assert_eq!(miss, Ladder::NotFound);
    }
}
