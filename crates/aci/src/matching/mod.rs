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
//! 5. anchored on first and last line, bounded (see `rungs::anchored`)
//! 6. unicode punctuation normalized (beyond the spec)
//! 7. backslash escapes (`\n`, `\"`) unescaped, in old and new alike (beyond the spec)
//!
//! Uniqueness is judged on positions (start lines), never on matched text.
//!
//! The files, one concept each: `rungs` finds the candidates of each rung, `escapes`
//! reads the backslash escapes of old_str and new_str alike, `reindent` turns a fuzzy match into
//! the text to put there, `hunk` does the same from a unified hunk's own line account,
//! `indent` measures and writes indentation, `gutter` spots a pasted ws_read gutter and
//! `closest` finds the region a missed old_str was most like.

mod closest;
mod escapes;
mod gutter;
mod hunk;
mod indent;
mod merge;
mod origin;
mod reindent;
mod rungs;

pub use closest::{closest, Closest};
pub use gutter::{foreign_numbering, gutter, gutter_is_pasted, Gutter, Numbering};
pub use hunk::{rebuild_hunk, HunkLine};
pub use indent::{indent_unit, Indent};
pub use origin::{origins, Origin};

use std::ops::Range;

use reindent::replacement;
use rungs::{anchored, by_lines, exact, trim_both, trim_end, unicode_normalized};
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
            Rung::TrailingWhitespace => Some("[matched ignoring trailing whitespace — your old_str's lines ended in other blanks (spaces, tabs, \\r) than the file's]"),
            Rung::Indentation => Some("[matched after normalizing indentation — your old_str was indented differently]"),
            Rung::BlankLines => Some("[matched ignoring blank lines — your old_str had different blank-line spacing]"),
            Rung::Anchored => Some("[matched on first+last line anchors — the middle of your old_str did not match exactly; verify the result with ws_read]"),
            Rung::Unicode => Some("[matched after normalizing unicode punctuation — your old_str had smart quotes, dashes, unusual spaces, zero-width or full-width characters where the file has plain ones]"),
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
    // Blank text matches everywhere, so it says nowhere.
    if q.old.trim().is_empty() {
        return Ladder::NotFound;
    }
    let lines = Lines::new(view);
    let verdict = run_rungs(&lines, q, &LADDER);
    if verdict != Ladder::NotFound {
        return verdict;
    }
    // Beyond the spec: backslash escapes (`\n`, `\"`) the file does not have. Each reading is
    // one guess at what the model meant, applied to old and new alike; the first that lands
    // once wins, and only when none does is an ambiguous one reported.
    let mut ambiguous = None;
    for reading in escapes::readings(view, q.old, q.new) {
        let inner = Query {
            old: &reading.old,
            new: &reading.new,
            ..q.clone()
        };
        let rungs = if reading.exact_only {
            &LADDER[..1]
        } else {
            &LADDER[..5]
        };
        match run_rungs(&lines, &inner, rungs) {
            Ladder::Landed { edits, .. } => {
                return Ladder::Landed {
                    rung: Rung::Escapes,
                    edits,
                }
            }
            Ladder::Ambiguous { count, lines, .. } if !reading.exact_only => {
                ambiguous.get_or_insert(Ladder::Ambiguous {
                    rung: Rung::Escapes,
                    count,
                    lines,
                });
            }
            _ => {}
        }
    }
    ambiguous.unwrap_or(Ladder::NotFound)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rungs_name_is_its_serialized_name() {
        // Trajectories, state files and MCP carry the serialized form; name() reads it back.
        for rung in Rung::ALL {
            assert_eq!(serde_json::to_value(rung).unwrap(), rung.name());
        }
    }

    pub(super) fn q<'a>(old: &'a str, new: &'a str) -> Query<'a> {
        Query {
            old,
            new,
            first_line_in: None,
            whole_lines: false,
            replace_all: false,
        }
    }

    pub(super) fn apply(view: &str, old: &str, new: &str) -> (Rung, String) {
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
}
