//! The match ladder: how an `old_str` that drifted from the file still lands — and only lands
//! when exactly one place fits.
//!
//! Rungs, tried in order; the first rung with any candidate decides. One candidate lands; two
//! or more are refused (or, with `replace_all`, all of that rung's spans are replaced). Rungs
//! loosen monotonically, so a later rung could only see more candidates, never fewer.
//!
//! 1. exact (a substring, anywhere)
//! 2. trailing-whitespace-insensitive (whole lines)
//! 3. indentation-normalized (whole lines; the file's own indentation is re-applied to new)
//! 4. blank-line-insensitive
//! 5. anchored on first and last line, bounded (see `anchored`)
//! 6. unicode punctuation normalized (beyond the spec)
//! 7. literal `\n` escapes unescaped (beyond the spec)
//!
//! Uniqueness is judged on positions (start lines), never on matched text.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

/// A rung of the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rung {
    Exact,
    TrailingWhitespace,
    Indentation,
    BlankLines,
    Anchored,
    Unicode,
    Escapes,
}

impl Rung {
    /// Every rung, in ladder order.
    pub const ALL: [Rung; 7] = [
        Rung::Exact,
        Rung::TrailingWhitespace,
        Rung::Indentation,
        Rung::BlankLines,
        Rung::Anchored,
        Rung::Unicode,
        Rung::Escapes,
    ];

    /// The stable name in data (trajectories, state files, MCP): as serialized.
    pub fn name(self) -> &'static str {
        match self {
            Rung::Exact => "exact",
            Rung::TrailingWhitespace => "trailing_whitespace",
            Rung::Indentation => "indentation",
            Rung::BlankLines => "blank_lines",
            Rung::Anchored => "anchored",
            Rung::Unicode => "unicode",
            Rung::Escapes => "escapes",
        }
    }

    /// How far the model's text had to be bent to match, 0 for exact. Not the ladder's order:
    /// an anchored match took the middle on trust, so it ranks furthest. The worst hunk of a
    /// patch is the one with the highest value.
    pub fn bend(self) -> u8 {
        match self {
            Rung::Exact => 0,
            Rung::TrailingWhitespace => 2,
            Rung::BlankLines => 3,
            Rung::Indentation => 4,
            Rung::Unicode => 5,
            Rung::Escapes => 6,
            Rung::Anchored => 7,
        }
    }

    /// The strategy's name, as used in reports (`anchored@12..20 exact`).
    pub fn label(self) -> &'static str {
        match self {
            Rung::Exact => "exact",
            Rung::TrailingWhitespace => "trailing-whitespace-insensitive",
            Rung::Indentation => "indentation-normalized",
            Rung::BlankLines => "blank-line-insensitive",
            Rung::Anchored => "anchored-first-last-line",
            Rung::Unicode => "unicode-punctuation-normalized",
            Rung::Escapes => "escape-unescaped",
        }
    }

    /// The note appended on success, telling the model how its text drifted.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Rung::Exact => None,
            Rung::TrailingWhitespace => Some("[matched ignoring trailing whitespace — your old_str had different line endings]"),
            Rung::Indentation => Some("[matched after normalizing indentation — your old_str was indented differently]"),
            Rung::BlankLines => Some("[matched ignoring blank lines — your old_str had different blank-line spacing]"),
            Rung::Anchored => Some("[matched on first+last line anchors — the middle of your old_str did not match exactly; verify the result with ws_read]"),
            Rung::Unicode => Some("[matched after normalizing unicode punctuation — your old_str had smart quotes, dashes or non-breaking spaces where the file has others]"),
            Rung::Escapes => Some("[matched after unescaping \\n and \\\" in old_str — send real line breaks and quotes, not backslash escapes]"),
        }
    }
}

/// What to look for.
#[derive(Clone, Debug)]
pub struct Query<'a> {
    pub old: &'a str,
    pub new: &'a str,
    /// Only candidates whose first line index lies in this range count (patch hunk windows).
    pub first_line_in: Option<Range<usize>>,
    /// Candidates must start at a line start (patch hunks are whole lines).
    pub whole_lines: bool,
    pub replace_all: bool,
}

/// One span to replace, in view byte offsets, with its replacement (LF text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    pub range: Range<usize>,
    pub text: String,
    /// 0-based first and last line of the replaced span.
    pub first_line: usize,
    pub last_line: usize,
}

/// The ladder's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ladder {
    /// Non-overlapping, in file order.
    Landed {
        rung: Rung,
        edits: Vec<Replacement>,
    },
    /// Two or more candidates on this rung: how many, and their 1-based first lines (a line
    /// holding two candidates is listed once).
    Ambiguous {
        rung: Rung,
        count: usize,
        lines: Vec<usize>,
    },
    NotFound,
}

/// The file's lines: byte offsets of each line start, with a sentinel at the end.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        for i in memchr::memchr_iter(b'\n', text.as_bytes()) {
            starts.push(i + 1);
        }
        if *starts.last().unwrap_or(&0) != text.len() {
            starts.push(text.len());
        }
        if text.is_empty() {
            starts = vec![0];
        }
        Lines { text, starts }
    }

    /// Number of lines (a final line without a newline counts).
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` without its newline.
    pub fn line(&self, i: usize) -> &'a str {
        let s = &self.text[self.starts[i]..self.starts[i + 1]];
        s.strip_suffix('\n').unwrap_or(s)
    }

    /// Byte offset where line `i` starts (`len()` gives the end of the text).
    pub fn start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// The 0-based line holding byte offset `at`.
    pub fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at).saturating_sub(1)
    }

    /// True when line `i` ends with a newline.
    fn has_newline(&self, i: usize) -> bool {
        self.text[..self.starts[i + 1]].ends_with('\n')
    }
}

/// Runs the ladder over `view`.
pub fn run(view: &str, q: &Query) -> Ladder {
    let lines = Lines::new(view);
    let verdict = run_rungs(&lines, q, &LADDER);
    if verdict != Ladder::NotFound {
        return verdict;
    }
    // Beyond the spec: literal "\n" / "\"" escapes in a one-line old_str. First the file
    // itself says which `\n` were line breaks and which are its own (in a string, a regex, a
    // char literal); then only the line breaks unescaped; then the quotes and backslashes too.
    if !q.old.contains('\n') && q.old.contains("\\n") {
        if let Some((old, new)) = decode_by_file(view, q.old, q.new) {
            let inner = Query {
                old: &old,
                new: &new,
                ..q.clone()
            };
            if let Ladder::Landed { edits, .. } = run_rungs(&lines, &inner, &LADDER[..1]) {
                return Ladder::Landed {
                    rung: Rung::Escapes,
                    edits,
                };
            }
        }
    }
    if !q.old.contains('\n') && (q.old.contains("\\n") || q.old.contains("\\\"")) {
        // Each decoding is a reading of what the model meant; the first that lands once wins,
        // and only when none does is an ambiguous one reported.
        let mut ambiguous = None;
        for unescape in [
            unescape_newlines_outside_strings,
            unescape_newlines,
            unescape,
        ] {
            let old = unescape(q.old);
            let new = if q.new.contains('\n') {
                q.new.to_string()
            } else {
                unescape(q.new)
            };
            if old == q.old {
                continue;
            }
            let inner = Query {
                old: &old,
                new: &new,
                ..q.clone()
            };
            match run_rungs(&lines, &inner, &LADDER[..5]) {
                Ladder::Landed { edits, .. } => {
                    return Ladder::Landed {
                        rung: Rung::Escapes,
                        edits,
                    }
                }
                Ladder::Ambiguous { count, lines, .. } => {
                    ambiguous.get_or_insert(Ladder::Ambiguous {
                        rung: Rung::Escapes,
                        count,
                        lines,
                    });
                }
                Ladder::NotFound => {}
            }
        }
        if let Some(verdict) = ambiguous {
            return verdict;
        }
    }
    Ladder::NotFound
}

const LADDER: [Rung; 6] = [
    Rung::Exact,
    Rung::TrailingWhitespace,
    Rung::Indentation,
    Rung::BlankLines,
    Rung::Anchored,
    Rung::Unicode,
];

fn run_rungs(lines: &Lines, q: &Query, rungs: &[Rung]) -> Ladder {
    // For the line-based rungs, whitespace after old's and new's last line break is trailing
    // junk, not a line.
    let exact_query = q;
    let line_query = Query {
        old: strip_ws_tail(q.old),
        new: strip_ws_tail(q.new),
        ..q.clone()
    };
    let old_lines: Vec<&str> = split_lines(line_query.old);
    for &rung in rungs {
        let q = if rung == Rung::Exact {
            exact_query
        } else {
            &line_query
        };
        let spans = match rung {
            Rung::Exact => exact(lines, q),
            Rung::TrailingWhitespace => by_lines(lines, &old_lines, q, trim_end, false),
            Rung::Indentation => by_lines(lines, &old_lines, q, trim_both, false),
            Rung::BlankLines => by_lines(lines, &old_lines, q, trim_both, true),
            Rung::Anchored => anchored(lines, &old_lines, q),
            Rung::Unicode => by_lines(lines, &old_lines, q, unicode_normalized, true),
            Rung::Escapes => Vec::new(),
        };
        match spans.len() {
            0 => continue,
            1 => {
                return Ladder::Landed {
                    rung,
                    edits: vec![replacement(lines, q, &old_lines, rung, spans[0])],
                }
            }
            _ if q.replace_all => {
                // Greedy, in file order, skipping candidates that overlap one already taken:
                // byte ranges for exact matches (two on one line are both replaced), whole
                // lines for the line-based rungs.
                let mut edits: Vec<Replacement> = Vec::new();
                for span in spans {
                    let overlaps = edits.last().is_some_and(|prev| match span.2 {
                        Some((start, _)) => start < prev.range.end,
                        None => span.0 <= prev.last_line,
                    });
                    if !overlaps {
                        edits.push(replacement(lines, q, &old_lines, rung, span));
                    }
                }
                return Ladder::Landed { rung, edits };
            }
            _ => {
                let mut lines: Vec<usize> = spans.iter().map(|s| s.0 + 1).collect();
                let count = lines.len();
                lines.dedup();
                return Ladder::Ambiguous { rung, count, lines };
            }
        }
    }
    Ladder::NotFound
}

/// A candidate: first and last line (inclusive), plus for exact matches the byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span(usize, usize, Option<(usize, usize)>);

impl Span {
    fn lines(first: usize, last: usize) -> Span {
        Span(first, last, None)
    }
}

/// The text without whitespace that follows its last line break.
fn strip_ws_tail(s: &str) -> &str {
    match s.rfind('\n') {
        Some(i) if s[i + 1..].trim().is_empty() => &s[..i + 1],
        _ => s,
    }
}

/// Splits text into lines; a trailing newline does not make an extra empty line.
fn split_lines(s: &str) -> Vec<&str> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    if s.is_empty() {
        return Vec::new();
    }
    body.split('\n').collect()
}

fn in_window(q: &Query, first_line: usize) -> bool {
    q.first_line_in
        .as_ref()
        .is_none_or(|w| w.contains(&first_line))
}

/// Rung 1: every position where old occurs verbatim (overlapping occurrences count).
fn exact(lines: &Lines, q: &Query) -> Vec<Span> {
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

fn trim_end(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s.trim_end())
}

fn trim_both(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s.trim())
}

/// Rungs 2–4 and 6: whole-line comparison under a normalization, optionally skipping blank
/// lines on both sides.
fn by_lines(
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
fn anchored(lines: &Lines, old_lines: &[&str], q: &Query) -> Vec<Span> {
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

/// Smart quotes, dashes, ellipses and unusual spaces mapped to ASCII, whitespace collapsed.
/// Most lines are plain ASCII with single spaces: those are borrowed, not rebuilt.
fn unicode_normalized(s: &str) -> Cow<'_, str> {
    let t = s.trim();
    if t.is_ascii() && !t.contains("  ") && !t.contains('\t') {
        return Cow::Borrowed(t);
    }
    Cow::Owned(collapse_ws(&ascii_punctuation(t, |_| true)))
}

fn ascii_punctuation(s: &str, keep: impl Fn(char) -> bool) -> String {
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
            '\u{200B}' | '\u{FEFF}' => Some(""),
            _ => None,
        };
        match mapped {
            Some(m) if keep(c) => out.push_str(m),
            _ => out.push(c),
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
fn decode_by_file(view: &str, old: &str, new: &str) -> Option<(String, String)> {
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
    let new_decoded = if new.contains('\n') {
        new.to_string()
    } else {
        decode(&new_parts, &new_breaks)
    };
    Some((old_decoded, new_decoded))
}

/// The escaped line breaks of a one-line text that stand outside string literals: the file's
/// own `"a\n"` stays as it is when the model escaped only its real line breaks. A quote opens
/// a literal unless it follows a letter or digit (the apostrophe of "don't" in a comment).
fn unescape_newlines_outside_strings(s: &str) -> String {
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
            (None, '\'') if !prev.is_alphanumeric() => open = Some(c),
            _ => {}
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Only the escaped line breaks (`\n`, `\r\n`) of a one-line text.
fn unescape_newlines(s: &str) -> String {
    s.replace("\\r\\n", "\n").replace("\\n", "\n")
}

/// `\n`, `\t`, `\"`, `\'` and `\\` unescaped.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => {}
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Turns a candidate into the bytes to replace and the text to put there.
fn replacement(
    lines: &Lines,
    q: &Query,
    old_lines: &[&str],
    rung: Rung,
    span: Span,
) -> Replacement {
    if let Some((start, end)) = span.2 {
        return Replacement {
            range: start..end,
            text: q.new.to_string(),
            first_line: span.0,
            last_line: span.1,
        };
    }
    let (first, last) = (span.0, span.1);
    let old_ends_nl = q.old.ends_with('\n');
    let start = lines.start(first);
    let end = if old_ends_nl {
        lines.start(last + 1)
    } else {
        lines.start(last) + lines.line(last).len()
    };
    let matched: Vec<&str> = (first..=last).map(|i| lines.line(i)).collect();
    // Whitespace after new's last line break, when old ended on one, is trailing junk, not a
    // line.
    let new_text = match q.new.rsplit_once('\n') {
        Some((body, tail)) if old_ends_nl && !tail.is_empty() && tail.trim().is_empty() => {
            &q.new[..body.len() + 1]
        }
        _ => q.new,
    };
    let new_lines = split_lines(new_text);
    let rebuilt = rebuild(old_lines, &new_lines, &matched, rung, indent_unit(lines))
        .unwrap_or_else(|| new_lines.iter().map(|l| l.to_string()).collect());
    // Each line gets its terminator back when old ended on one, blank last lines included.
    let mut text = rebuilt.join("\n");
    if old_ends_nl && !rebuilt.is_empty() {
        text.push('\n');
    }
    // Keep a missing final newline missing.
    if old_ends_nl && !lines.has_newline(last) && text.ends_with('\n') {
        text.pop();
    }
    Replacement {
        range: start..end,
        text,
        first_line: first,
        last_line: last,
    }
}

/// How a file indents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indent {
    Tabs,
    Spaces(usize),
}

const TAB_COLS: usize = 4;

/// The file's indentation style: tabs if more lines start with a tab than with a space,
/// otherwise the most common step between successive indentation widths.
pub fn indent_unit(lines: &Lines) -> Indent {
    let (mut tabs, mut spaces) = (0, 0);
    let mut steps = [0usize; 9];
    let mut prev = 0usize;
    for i in 0..lines.len() {
        let l = lines.line(i);
        if l.trim().is_empty() {
            continue;
        }
        match l.as_bytes()[0] {
            b'\t' => tabs += 1,
            b' ' => spaces += 1,
            _ => {}
        }
        let w = cols(l);
        let step = w.abs_diff(prev);
        if (1..=8).contains(&step) {
            steps[step] += 1;
        }
        prev = w;
    }
    if tabs > spaces {
        return Indent::Tabs;
    }
    let best = (1..=8).max_by_key(|&s| (steps[s], s == 4)).unwrap_or(4);
    Indent::Spaces(if steps[best] == 0 { 4 } else { best })
}

/// Indentation width in columns (a tab counts four).
fn cols(line: &str) -> usize {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { TAB_COLS } else { 1 })
        .sum()
}

fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The indentation step old/new were written with: the smallest positive difference between
/// indentation widths in them, or the file's unit when they give none.
fn text_unit(texts: &[&str], file: Indent) -> usize {
    let mut widths: Vec<usize> = texts
        .iter()
        .flat_map(|t| t.split('\n'))
        .filter(|l| !l.trim().is_empty())
        .map(cols)
        .collect();
    widths.sort_unstable();
    widths.dedup();
    let step = widths.windows(2).map(|w| w[1] - w[0]).min();
    match (step, file) {
        (Some(s), _) if s > 0 => s,
        (_, Indent::Tabs) => TAB_COLS,
        (_, Indent::Spaces(n)) => n,
    }
}

/// Builds a fuzzy match's replacement the way a careful human would apply it.
///
/// The non-blank lines of old and new are diffed as the rung compares them, so whitespace
/// drift alone never makes a line look changed. A line the model kept is written as the file
/// has it, verbatim — a misremembered middle line, smart quotes, escapes or stray trailing
/// spaces the model re-emitted never reach the file — and moves only if the model moved it.
/// A line the model changed or added is indented from the line it replaces, or from the line
/// placed just above it, by the depth difference the model wrote.
///
/// Blank lines are counted, not matched: between two lines that were neighbours in old, the
/// file keeps its own blank lines, changed by as many as the model added or removed there;
/// anywhere else the new text's blank lines stand.
fn rebuild(
    old: &[&str],
    new: &[&str],
    matched: &[&str],
    rung: Rung,
    file: Indent,
) -> Option<Vec<String>> {
    let key: fn(&str) -> Cow<'_, str> = match rung {
        Rung::TrailingWhitespace => trim_end,
        Rung::Unicode => unicode_normalized,
        _ => trim_both,
    };
    let old_nb: Vec<usize> = (0..old.len()).filter(|&i| !blank_line(old[i])).collect();
    let new_nb: Vec<usize> = (0..new.len()).filter(|&j| !blank_line(new[j])).collect();
    let file_nb: Vec<usize> = (0..matched.len())
        .filter(|&f| !blank_line(matched[f]))
        .collect();
    if old_nb.len() != file_nb.len() || old_nb.is_empty() {
        return None;
    }
    let old_keys: Vec<Cow<str>> = old_nb.iter().map(|&i| key(old[i])).collect();
    let new_keys: Vec<Cow<str>> = new_nb.iter().map(|&j| key(new[j])).collect();
    // For each non-blank new line: the old non-blank line (by rank) it keeps or replaces.
    #[derive(Clone, Copy, PartialEq)]
    enum Origin {
        Kept(usize),
        Changed(usize),
        Added,
    }
    let mut origin = vec![Origin::Added; new_nb.len()];
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_keys, &new_keys) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    origin[new_index + k] = Origin::Kept(old_index + k);
                }
            }
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                // Pair each replaced old line with the new line most like it (in order), so
                // an added line is not mistaken for the changed one next to it.
                let mut from = new_index;
                for (r, old_key) in old_keys.iter().enumerate().skip(old_index).take(old_len) {
                    let best = (from..new_index + new_len)
                        .map(|k| (strsim::normalized_levenshtein(old_key, &new_keys[k]), k))
                        .filter(|(score, _)| *score >= 0.5)
                        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
                    let pick = match best {
                        Some((_, k)) => Some(k),
                        None if old_len == new_len => Some(new_index + (r - old_index)),
                        None => None,
                    };
                    if let Some(k) = pick.filter(|&k| k >= from) {
                        origin[k] = Origin::Changed(r);
                        from = k + 1;
                    }
                }
            }
            _ => {}
        }
    }
    let pairs: Vec<(&str, &str)> = old_nb
        .iter()
        .zip(&file_nb)
        .map(|(&i, &f)| (old[i], matched[f]))
        .collect();
    let depth = Depth::fit(&pairs, old, new, file);
    let blank_exact = matches!(rung, Rung::TrailingWhitespace | Rung::Indentation);
    let tidy = Tidy::new(old, matched, rung);

    // Blank lines between two positions (exclusive), in each text.
    let blanks = |lines: &[&str], from: Option<usize>, to: Option<usize>| {
        let lo = from.map_or(0, |i| i + 1);
        let hi = to.unwrap_or(lines.len());
        (lo..hi.max(lo)).filter(|&i| blank_line(lines[i])).count()
    };
    let file_blank_lines = |from: Option<usize>, to: Option<usize>| -> Vec<&str> {
        let lo = from.map_or(0, |i| i + 1);
        let hi = to.unwrap_or(matched.len());
        (lo..hi.max(lo))
            .map(|f| matched[f])
            .filter(|l| blank_line(l))
            .collect()
    };
    // The rank of an old non-blank line a new line stands for, if any.
    let rank_of = |o: Origin| match o {
        Origin::Kept(r) | Origin::Changed(r) => Some(r),
        Origin::Added => None,
    };
    let mut out: Vec<String> = Vec::new();
    let emit_gap = |out: &mut Vec<String>, prev: Option<usize>, next: Option<usize>| {
        // prev/next: positions in new_nb (None = the start or the end of the region).
        let new_from = prev.map(|k| new_nb[k]);
        let new_to = next.map(|k| new_nb[k]);
        let m = blanks(new, new_from, new_to);
        let old_rank = |k: Option<usize>, edge: Option<usize>| match k {
            Some(k) => rank_of(origin[k]),
            None => edge,
        };
        // Both ends stand for old lines that were neighbours (or the region's own edges).
        let a = old_rank(prev, None);
        let b = old_rank(next, None);
        let neighbours = match (prev, next) {
            (None, None) => true,
            (None, Some(_)) => b == Some(0),
            (Some(_), None) => a == Some(old_nb.len() - 1),
            (Some(_), Some(_)) => matches!((a, b), (Some(x), Some(y)) if y == x + 1),
        };
        if neighbours {
            let (old_from, old_to) = (a.map(|r| old_nb[r]), b.map(|r| old_nb[r]));
            let (file_from, file_to) = (a.map(|r| file_nb[r]), b.map(|r| file_nb[r]));
            let kept = file_blank_lines(file_from, file_to);
            // Where old's blank lines matched the file's one for one, a different count in
            // new is the model's change; where the rung skipped blank lines, the model's
            // count is not evidence of anything and the file's stand.
            let want = if blank_exact {
                (kept.len() + m).saturating_sub(blanks(old, old_from, old_to))
            } else {
                kept.len()
            };
            for i in 0..want {
                out.push(kept.get(i).copied().unwrap_or("").to_string());
            }
        } else if !blank_exact && (prev.is_none() || next.is_none()) {
            // At the region's edges a skip-blank rung left old's own edge blank lines outside
            // the region; new's matching edge blank lines echo those and are not added.
            let edge = if prev.is_none() {
                blanks(old, None, old_nb.first().copied())
            } else {
                blanks(old, old_nb.last().copied(), None)
            };
            out.extend(std::iter::repeat_n(String::new(), m.saturating_sub(edge)));
        } else {
            out.extend(std::iter::repeat_n(String::new(), m));
        }
    };

    // The line placed last: its depth as the model wrote it in new, and its indentation.
    let mut above: (usize, String) = (
        cols(old[old_nb[0]]),
        leading_ws(matched[file_nb[0]]).to_string(),
    );
    emit_gap(
        &mut out,
        None,
        if new_nb.is_empty() { None } else { Some(0) },
    );
    for (k, &j) in new_nb.iter().enumerate() {
        let line = new[j];
        let text = match origin[k] {
            Origin::Kept(r) => {
                let (o, f) = (old[old_nb[r]], matched[file_nb[r]]);
                if cols(line) == cols(o) {
                    f.to_string()
                } else {
                    let indent = depth.shift(leading_ws(f), cols(o), line);
                    format!("{indent}{}", f.trim_start_matches([' ', '\t']))
                }
            }
            Origin::Changed(r) => {
                let (o, f) = (old[old_nb[r]], matched[file_nb[r]]);
                let indent = depth.shift(leading_ws(f), cols(o), line);
                let line_tidy = tidy.for_line(o, f);
                format!(
                    "{indent}{}",
                    line_tidy.apply(line.trim_start_matches([' ', '\t']))
                )
            }
            Origin::Added => {
                let indent = depth.shift(&above.1, above.0, line);
                format!(
                    "{indent}{}",
                    tidy.apply(line.trim_start_matches([' ', '\t']))
                )
            }
        };
        above = (cols(line), leading_ws(&text).to_string());
        out.push(text);
        let next = (k + 1 < new_nb.len()).then_some(k + 1);
        emit_gap(&mut out, Some(k), next);
    }
    Some(out)
}

fn blank_line(l: &str) -> bool {
    l.trim().is_empty()
}

/// One line of a unified-diff hunk, by what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HunkLine<'a> {
    Context(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// The replacement for the region `edit` matched, built from a unified hunk's own account of
/// its lines rather than by diffing its two sides: context lines as the file has them, removed
/// lines gone, added lines where the hunk puts them.
///
/// Added lines are written as the model wrote them, unless every context and removed line is
/// off from the file by one same indentation offset — a uniform re-indent, which then moves
/// the added lines too (in the file's own tabs or spaces). A context line may match the file
/// either as written or with the ` ` it was parsed from put back, since a model that forgot a
/// line's prefix leaves its first indentation column to be read as one. Mixed offsets never
/// re-indent: a guess there lands code in the wrong column.
///
/// `None` when the region and the hunk do not pair up line for line (the caller then keeps the
/// ladder's own replacement).
pub fn rebuild_hunk(
    view: &str,
    edit: &Replacement,
    rung: Rung,
    body: &[HunkLine],
) -> Option<String> {
    let region = view.get(edit.range.clone())?;
    let ends_nl = region.ends_with('\n');
    let file = split_lines(region);
    let old: Vec<(&str, bool)> = body
        .iter()
        .filter_map(|l| match *l {
            HunkLine::Context(t) => Some((t, true)),
            HunkLine::Removed(t) => Some((t, false)),
            HunkLine::Added(_) => None,
        })
        .collect();
    let old_nb: Vec<(&str, bool)> = old
        .iter()
        .copied()
        .filter(|(t, _)| !blank_line(t))
        .collect();
    let file_nb: Vec<usize> = (0..file.len()).filter(|&i| !blank_line(file[i])).collect();
    if old_nb.len() != file_nb.len() || old_nb.is_empty() {
        return None;
    }

    let map = DepthMap::fit(
        &old_nb,
        &file_nb.iter().map(|&i| file[i]).collect::<Vec<_>>(),
    );
    let file_indent = indent_unit(&Lines::new(view));
    let copied: Vec<&str> = old.iter().map(|(t, _)| *t).collect();
    let tidy = Tidy::new(&copied, &file, rung);
    let added = |line: &str| -> String {
        if blank_line(line) {
            return String::new();
        }
        let body = tidy.apply(line.trim_start_matches([' ', '\t']));
        match map.and_then(|m| m.apply(cols(line))) {
            Some(target) => format!("{}{body}", render_indent(target, file_indent)),
            None => format!("{}{body}", leading_ws(line)),
        }
    };

    let mut out: Vec<String> = Vec::new();
    let mut at = 0usize; // the next file line not yet placed
    let mut k = 0usize; // the next non-blank copied line
    let mut after_removed = false;
    for line in body {
        match *line {
            HunkLine::Added(t) => out.push(added(t)),
            HunkLine::Context(t) | HunkLine::Removed(t) if blank_line(t) => {
                // A blank copied line pairs with a blank file line still in this gap.
                let next_nb = file_nb.get(k).copied().unwrap_or(file.len());
                if at < next_nb && blank_line(file[at]) {
                    if matches!(line, HunkLine::Context(_)) {
                        out.push(file[at].to_string());
                    }
                    at += 1;
                }
            }
            HunkLine::Context(_) | HunkLine::Removed(_) => {
                let target = file_nb[k];
                let removed = matches!(line, HunkLine::Removed(_));
                // File blank lines the hunk did not mention stay — unless they border a line
                // it removes: they went with that line in the model's view of the file.
                if !(removed || after_removed) {
                    out.extend(file[at..target].iter().map(|l| l.to_string()));
                }
                if !removed {
                    out.push(file[target].to_string());
                }
                at = target + 1;
                k += 1;
                after_removed = removed;
            }
        }
    }
    out.extend(file[at.min(file.len())..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if ends_nl && !out.is_empty() {
        text.push('\n');
    }
    Some(text)
}

/// A unified hunk's indentation against the file: `file = model * num / den + offset` (in
/// columns, a tab counting four), fitted to every copied line, or none when they disagree.
/// A context line may be read with its lost ` ` prefix put back (one column more). Only
/// the scales a re-indent really has are tried: the same steps, or steps doubled or halved
/// (two-space text in a four-space file, and back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DepthMap {
    num: usize,
    den: usize,
    offset: isize,
    /// True when every copied line's indentation is the file's, character for character:
    /// added lines are then left exactly as written.
    identity: bool,
}

impl DepthMap {
    fn fit(copied: &[(&str, bool)], file: &[&str]) -> Option<DepthMap> {
        let identity = copied.iter().zip(file).all(|(&(t, context), f)| {
            leading_ws(f) == leading_ws(t)
                || (context && leading_ws(f) == format!(" {}", leading_ws(t)))
        });
        for (num, den) in [(1, 1), (2, 1), (1, 2)] {
            // The offsets each line allows under this scale; keep those all share.
            let mut shared: Option<Vec<isize>> = None;
            for (&(t, context), f) in copied.iter().zip(file) {
                let readings: &[usize] = if context { &[0, 1] } else { &[0] };
                let allowed: Vec<isize> = readings
                    .iter()
                    .filter_map(|extra| {
                        let scaled = (cols(t) + extra) * num;
                        scaled
                            .is_multiple_of(den)
                            .then(|| cols(f) as isize - (scaled / den) as isize)
                    })
                    .collect();
                shared = Some(match shared {
                    None => allowed,
                    Some(prev) => prev.into_iter().filter(|o| allowed.contains(o)).collect(),
                });
            }
            let shared = shared.unwrap_or_default();
            if let Some(&offset) = shared.iter().min_by_key(|o| (o.unsigned_abs(), **o < 0)) {
                return Some(DepthMap {
                    num,
                    den,
                    offset,
                    identity: identity && num == den && shared.contains(&0),
                });
            }
        }
        None
    }

    /// Where an added line of `model` columns goes, or `None` to leave it as written.
    fn apply(self, model: usize) -> Option<usize> {
        if self.identity {
            return None;
        }
        let scaled = (model * self.num + self.den / 2) / self.den;
        Some((scaled as isize + self.offset).max(0) as usize)
    }
}

/// How the model's indentation depths map onto the file's, learned from the lines old
/// shares with the file: `file = ratio * model + offset` (in columns, a tab counting four).
/// Over-indented or dedented text keeps the file's steps (ratio 1); four-space text in a
/// two-space file halves (ratio 1/2); a guess from the model's own step is the fallback.
struct Depth {
    /// Numerator and denominator of the ratio.
    ratio: (usize, usize),
    file: Indent,
}

impl Depth {
    fn fit(pairs: &[(&str, &str)], old: &[&str], new: &[&str], file: Indent) -> Depth {
        let pairs: Vec<(usize, usize)> = pairs.iter().map(|(o, f)| (cols(o), cols(f))).collect();
        let step = match file {
            Indent::Tabs => TAB_COLS,
            Indent::Spaces(n) => n,
        };
        let fallback = || {
            let unit = text_unit(&[&old.join("\n"), &new.join("\n")], file);
            (step, unit.max(1))
        };
        // Two distinct model depths fix the ratio; every pair must agree with it.
        let (m0, f0) = pairs.first().copied().unwrap_or((0, 0));
        let ratio = match pairs.iter().find(|(m, _)| *m != m0) {
            None => {
                if pairs.iter().all(|&(_, f)| f == f0) {
                    (1, 1)
                } else {
                    fallback()
                }
            }
            Some(&(m1, f1)) => {
                let (num, den) = (f1.abs_diff(f0), m1.abs_diff(m0));
                let same_direction = (m1 > m0) == (f1 >= f0);
                let fits = num > 0
                    && same_direction
                    && pairs.iter().all(|&(m, f)| {
                        let dm = m as isize - m0 as isize;
                        let df = f as isize - f0 as isize;
                        df * den as isize == dm * num as isize
                    });
                if fits {
                    (num, den)
                } else {
                    fallback()
                }
            }
        };
        Depth { ratio, file }
    }

    /// The indentation for `line`: the reference line's file indentation moved by the depth
    /// difference the model wrote between the reference (`model_cols`) and `line`.
    fn shift(&self, file_ws: &str, model_cols: usize, line: &str) -> String {
        let w = cols(line);
        if w == model_cols {
            return file_ws.to_string();
        }
        let rel = w.abs_diff(model_cols);
        let moved = (rel * self.ratio.0 + self.ratio.1 / 2) / self.ratio.1;
        let base = cols(file_ws);
        let target = if w > model_cols {
            base + moved
        } else {
            base.saturating_sub(moved)
        };
        render_indent(target, self.file)
    }
}

/// What a rung's drift says about the model's new lines, applied to the lines it adds: the
/// trailing-whitespace rung trims trailing spaces when the file has none; smart punctuation
/// the model sent in old but the file lacks is turned into the file's plain form.
struct Tidy {
    trim_trailing: bool,
    to_ascii: HashSet<char>,
}

impl Tidy {
    fn new(old: &[&str], matched: &[&str], rung: Rung) -> Tidy {
        Tidy {
            trim_trailing: rung != Rung::Exact
                && matched.iter().all(|l| l.trim_end().len() == l.len()),
            to_ascii: drifted_punctuation(old, matched),
        }
    }

    /// The same, judged on one changed line against the file line it replaces: punctuation
    /// the model's old line has and that file line lacks is the model's drift.
    fn for_line(&self, old_line: &str, file_line: &str) -> Tidy {
        Tidy {
            trim_trailing: self.trim_trailing,
            to_ascii: drifted_punctuation(&[old_line], &[file_line]),
        }
    }

    fn apply(&self, body: &str) -> String {
        let body = if self.trim_trailing {
            body.trim_end()
        } else {
            body
        };
        if self.to_ascii.is_empty() {
            body.to_string()
        } else {
            ascii_punctuation(body, |c| self.to_ascii.contains(&c))
        }
    }
}

/// Smart punctuation in `old` that `file` lacks: the characters the model's channel changed.
fn drifted_punctuation(old: &[&str], file: &[&str]) -> HashSet<char> {
    let in_file: HashSet<char> = file.iter().flat_map(|l| l.chars()).collect();
    old.iter()
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_ascii() && !in_file.contains(c))
        .filter(|c| ascii_punctuation(&c.to_string(), |_| true) != c.to_string())
        .collect()
}

fn render_indent(target: usize, file: Indent) -> String {
    match file {
        Indent::Tabs => format!(
            "{}{}",
            "\t".repeat(target / TAB_COLS),
            " ".repeat(target % TAB_COLS)
        ),
        Indent::Spaces(_) => " ".repeat(target),
    }
}

/// How a `ws_read` gutter (`   42|`) shows up in a text.
#[derive(Debug, PartialEq, Eq)]
pub enum Gutter {
    /// No line carries it.
    None,
    /// Every non-blank line carries it: the text with it stripped.
    Every(String),
    /// Some lines do and some do not (1-based line numbers of those that do).
    Some(Vec<usize>),
}

/// Detects the `%6d|` gutter of ws_read output pasted into a text.
pub fn gutter(text: &str) -> Gutter {
    let lines: Vec<&str> = text.split('\n').collect();
    let non_blank: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i, *l))
        .collect();
    let with: Vec<usize> = non_blank
        .iter()
        .filter(|(_, l)| gutter_len(l).is_some())
        .map(|(i, _)| i + 1)
        .collect();
    if with.is_empty() {
        return Gutter::None;
    }
    if with.len() < non_blank.len() {
        return Gutter::Some(with);
    }
    let stripped = lines
        .iter()
        .map(|l| match gutter_len(l) {
            Some(n) => &l[n..],
            None => "",
        })
        .collect::<Vec<_>>()
        .join("\n");
    Gutter::Every(stripped)
}

/// True when the gutter lines of `text` are ws_read's exactly — its `{:6}|` width, and each
/// line's number the first one's plus its distance from it — so the prefixes were pasted from
/// a read, not written as code (`1|2 => …` match arms have neither).
pub fn gutter_is_pasted(text: &str) -> bool {
    let numbered: Vec<(usize, usize)> = text
        .split('\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let n = gutter_len(l)?;
            let num = l[..n - 1].trim().parse::<usize>().ok()?;
            (n == format!("{num:6}|").len()).then_some((i, num))
        })
        .collect();
    if numbered.len() != text.split('\n').filter(|l| gutter_len(l).is_some()).count() {
        return false;
    }
    let Some(&(i0, n0)) = numbered.first() else {
        return false;
    };
    numbered
        .iter()
        .all(|&(i, n)| n.checked_sub(i) == n0.checked_sub(i0) && n >= i)
}

/// Length of a leading `  42|` gutter: optional spaces, 1–7 digits, `|`.
fn gutter_len(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let digits = i - digits_start;
    if (1..=7).contains(&digits) && i < b.len() && b[i] == b'|' {
        Some(i + 1)
    } else {
        None
    }
}

/// The region of the file most like old, for a not-found answer.
#[derive(Debug)]
pub struct Closest {
    /// 1-based line numbers, text, and whether the line differs from every line of old.
    pub lines: Vec<(usize, String, bool)>,
}

/// Finds the window of old's height sharing the most with old: whole trimmed lines count most,
/// shared identifiers some. Linear in the file, so it is cheap on a 50,000-line miss.
pub fn closest(view: &str, old: &str) -> Option<Closest> {
    let lines = Lines::new(view);
    let old_lines = split_lines(old);
    let height = old_lines.len().clamp(1, 40);
    if lines.is_empty() {
        return None;
    }
    let old_set: HashSet<&str> = old_lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let old_tokens: HashSet<String> = old_lines
        .iter()
        .flat_map(|l| tokens(l))
        .map(str::to_ascii_lowercase)
        .collect();
    let mut lowered = String::new();
    let mut shared = |l: &str| {
        tokens(l)
            .filter(|t| {
                lowered.clear();
                lowered.push_str(t);
                lowered.make_ascii_lowercase();
                old_tokens.contains(lowered.as_str())
            })
            .count()
    };
    let score: Vec<usize> = (0..lines.len())
        .map(|i| {
            let l = lines.line(i).trim();
            if l.is_empty() {
                0
            } else if old_set.contains(l) {
                4
            } else {
                shared(l).min(3)
            }
        })
        .collect();
    let height = height.min(lines.len());
    // A window that starts where old starts is the better of two equal ones.
    let old_first = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty());
    let starts_like_old =
        |i: usize| usize::from(old_first.is_some_and(|f| lines.line(i).trim() == f)) * 2;
    let mut sum: usize = score[..height].iter().sum();
    let (mut best, mut best_at) = (sum + starts_like_old(0), 0);
    for i in height..lines.len() {
        sum = sum + score[i] - score[i - height];
        let start = i + 1 - height;
        if sum + starts_like_old(start) > best {
            best = sum + starts_like_old(start);
            best_at = start;
        }
    }
    if best == 0 {
        return None;
    }
    Some(Closest {
        lines: (best_at..best_at + height)
            .map(|i| {
                let l = lines.line(i);
                let differs = !l.trim().is_empty() && !old_set.contains(l.trim());
                (i + 1, l.to_string(), differs)
            })
            .collect(),
    })
}

/// Identifier-like words (compared lowercased, so a case slip still counts as shared).
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| t.len() >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q<'a>(old: &'a str, new: &'a str) -> Query<'a> {
        Query {
            old,
            new,
            first_line_in: None,
            whole_lines: false,
            replace_all: false,
        }
    }

    fn apply(view: &str, old: &str, new: &str) -> (Rung, String) {
        match run(view, &q(old, new)) {
            Ladder::Landed { rung, edits } => {
                let mut out = view.to_string();
                for e in edits.iter().rev() {
                    out.replace_range(e.range.clone(), &e.text);
                }
                (rung, out)
            }
            other => panic!("did not land: {other:?}"),
        }
    }

    #[test]
    fn exact_first() {
        assert_eq!(
            apply("a\nb\nc\n", "b", "B"),
            (Rung::Exact, "a\nB\nc\n".into())
        );
    }

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
    fn indentation_reapplies_tabs() {
        let file = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
        let (r, out) = apply(
            file,
            "if x {\n    return 1\n}",
            "if x {\n    log()\n    return 2\n}",
        );
        assert_eq!(r, Rung::Indentation);
        assert_eq!(
            out,
            "func f() {\n\tif x {\n\t\tlog()\n\t\treturn 2\n\t}\n}\n"
        );
    }

    #[test]
    fn blank_lines() {
        let file = "a = 1\n\nb = 2\nc = 3\n";
        let (r, out) = apply(file, "a = 1\nb = 2\n", "a = 10\nb = 20\n");
        assert_eq!(r, Rung::BlankLines);
        // The file's blank line stays: the model's spacing is not evidence on this rung.
        assert_eq!(out, "a = 10\n\nb = 20\nc = 3\n");
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
    fn ambiguous_is_refused_with_lines() {
        let file = "x = 1\ny = 2\nx = 1\n";
        assert_eq!(
            run(file, &q("x = 1", "x = 3")),
            Ladder::Ambiguous {
                rung: Rung::Exact,
                count: 2,
                lines: vec![1, 3]
            }
        );
        assert_eq!(
            run(file, &q("  x = 1  \n", "x = 3\n")),
            Ladder::Ambiguous {
                rung: Rung::Indentation,
                count: 2,
                lines: vec![1, 3]
            }
        );
    }

    #[test]
    fn overlapping_exact_positions_count() {
        assert!(matches!(
            run("aaa", &q("aa", "b")),
            Ladder::Ambiguous { .. }
        ));
    }

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

    /// The region a hunk's old side matched, rebuilt from its lines.
    fn hunk(view: &str, old: &str, rung_old: &str, body: &[HunkLine]) -> String {
        let query = Query {
            old: rung_old,
            new: "",
            first_line_in: None,
            whole_lines: true,
            replace_all: false,
        };
        let Ladder::Landed { rung, edits } = run(view, &query) else {
            panic!("{old} did not land");
        };
        let text = rebuild_hunk(view, &edits[0], rung, body).expect("pairs up");
        let mut out = view.to_string();
        out.replace_range(edits[0].range.clone(), &text);
        out
    }

    #[test]
    fn hunk_lines_are_added_as_written_unless_the_hunk_moved_as_one() {
        use HunkLine::{Added, Context, Removed};
        let file =
            "class A:\n    def f(self):\n        y = 1\n        if y:\n            return y\n";
        // A context line that lost its prefix reads one column short: the added line is not
        // moved for it.
        let out = hunk(
            file,
            "",
            "        y = 1\n       if y:\n            return y\n",
            &[
                Context("        y = 1"),
                Context("       if y:"),
                Added("            print(y)"),
                Context("            return y"),
            ],
        );
        assert_eq!(
            out,
            "class A:\n    def f(self):\n        y = 1\n        if y:\n            print(y)\n            return y\n"
        );
        // The whole hunk four columns short: the added line moves with it.
        let out = hunk(
            file,
            "",
            "    y = 1\n    if y:\n",
            &[
                Context("    y = 1"),
                Removed("    if y:"),
                Added("    if y > 0:"),
            ],
        );
        assert_eq!(
            out,
            "class A:\n    def f(self):\n        y = 1\n        if y > 0:\n            return y\n"
        );
        // Mixed offsets: nothing is guessed, the added line stays as written.
        let out = hunk(
            file,
            "",
            "  def f(self):\n        y = 1\n",
            &[
                Context("  def f(self):"),
                Context("        y = 1"),
                Added("      z = 2"),
            ],
        );
        assert!(out.contains("\n      z = 2\n"), "{out}");
        // Two-space text in a four-space file: steps doubled.
        let out = hunk(
            file,
            "",
            "  def f(self):\n    y = 1\n",
            &[
                Context("  def f(self):"),
                Context("    y = 1"),
                Added("    z = 2"),
            ],
        );
        assert!(out.contains("        y = 1\n        z = 2\n"), "{out}");
    }

    #[test]
    fn gutter_detection() {
        assert!(gutter_is_pasted("    41|a\n    42|b\n\n    44|c"));
        assert!(!gutter_is_pasted("    41|a\n    43|b"));
        assert!(!gutter_is_pasted("        1|2 => a,\n        3|4 => b,"));
        assert!(!gutter_is_pasted("1|2 => a,"));
        assert!(!gutter_is_pasted("no gutter"));
        assert_eq!(gutter("    41|a\n    42|b"), Gutter::Every("a\nb".into()));
        assert_eq!(gutter("    41|a\nb"), Gutter::Some(vec![1]));
        assert_eq!(gutter("a | b"), Gutter::None);
    }

    #[test]
    fn closest_region_marks_differences() {
        let file = "one\ntwo\nthree\nfour\nfive\n";
        let c = closest(file, "three\nFOUR\n").unwrap();
        assert_eq!(c.lines[0], (3, "three".into(), false));
        assert_eq!(c.lines[1], (4, "four".into(), true));
    }

    #[test]
    fn indent_detection() {
        assert_eq!(indent_unit(&Lines::new("a\n\tb\n\t\tc\n")), Indent::Tabs);
        assert_eq!(
            indent_unit(&Lines::new("a\n  b\n    c\n  d\n")),
            Indent::Spaces(2)
        );
    }
}
