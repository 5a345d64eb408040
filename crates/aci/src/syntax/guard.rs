//! What may go into the parser. tree-sitter's C library and the grammars' hand-written scanners
//! trust their input's shape: the YAML scanner keeps a stack of indentation columns and writes
//! it into a fixed 1,024-byte buffer without checking the room (a mapping nested ~250 levels
//! deep overflows it and the library aborts the process); Python's scanner does the same with
//! its indentation stack. Other shapes are only slow. So before a text is parsed, one pass
//! measures what those depend on, and a text past a limit is not parsed at all: the caller
//! says why ([`Skip`]) instead.
//!
//! The limits are per grammar, measured (`benches/parse_limits.rs`), and far above what real
//! code does: they refuse generated monsters, never a hand-written file.

use serde::{Deserialize, Serialize};

use crate::lang::Grammar;

/// Why a text was not parsed, or the parse gave no answer. The tools turn it into a note (the
/// syntax check was skipped) or a refusal (no outline), in these words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Skip {
    /// Larger than the grammar's limit.
    TooLarge {
        grammar: String,
        bytes: usize,
        limit: usize,
    },
    /// Brackets (or blocks) nested deeper than the grammar's limit, first at `line`.
    TooDeep {
        grammar: String,
        depth: usize,
        line: usize,
        limit: usize,
    },
    /// Indented to more distinct depths than the grammar's scanner can keep (YAML, Python).
    TooManyIndents {
        grammar: String,
        depths: usize,
        line: usize,
        limit: usize,
    },
    /// A line longer than the grammar's limit.
    LineTooLong {
        grammar: String,
        line: usize,
        bytes: usize,
        limit: usize,
    },
    /// The parser process ended while parsing it (see [`super::process`]).
    Crashed { how: String },
    /// The parse did not finish in time.
    TimedOut { seconds: u64 },
}

impl Skip {
    /// The reason, as a clause: "it nests 300 levels deep at line 300; the yaml parser takes
    /// at most 120".
    pub fn why(&self) -> String {
        match self {
            Skip::TooLarge {
                grammar,
                bytes,
                limit,
            } => format!(
                "it is {} KiB; the {grammar} parser is given files up to {} KiB",
                bytes.div_ceil(1024),
                limit / 1024
            ),
            Skip::TooDeep {
                grammar,
                depth,
                line,
                limit,
            } => format!(
                "it nests {depth} levels deep (line {line}); the {grammar} parser is given at most {limit}"
            ),
            Skip::TooManyIndents {
                grammar,
                depths,
                line,
                limit,
            } => format!(
                "it is indented to {depths} different depths (more than {limit} by line {line}); the {grammar} parser is given at most {limit}"
            ),
            Skip::LineTooLong {
                grammar,
                line,
                bytes,
                limit,
            } => format!(
                "line {line} is {bytes} bytes long; the {grammar} parser is given lines up to {limit}"
            ),
            Skip::Crashed { how } => format!("the parser crashed on it ({how})"),
            Skip::TimedOut { seconds } => {
                format!("the parser gave no answer within {seconds} s")
            }
        }
    }
}

/// A grammar's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The whole text, in bytes: a tree costs tens to hundreds of bytes per byte of text.
    pub bytes: usize,
    /// The longest line, in bytes.
    pub line: usize,
    /// Bracket nesting: `(`, `[`, `{` counted without regard to strings and comments, so a
    /// bracket in a string counts too (the limits leave room for that).
    pub depth: usize,
    /// Distinct indentation depths, for the grammars whose scanner keeps a stack of them.
    pub indents: Option<usize>,
}

/// The limits of a grammar, from `benches/parse_limits.rs` (release build, one core):
///
/// - Nesting: parsing is linear in depth (100,000 levels in 0.1–1.5 s), but reading an
///   outline is quadratic in how deeply definitions nest (10,000 nested functions or classes
///   take 0.4–0.5 s, 100,000 over two minutes), and a few of the C library's functions recurse
///   per level. 4,096 levels is a tenth of a second, and forty times what hand-written code
///   nests.
/// - Size and line length: linear, but not alike. A one-line file of tiny tokens is the
///   costliest per byte: 1 MB of JSON, TOML or YAML on one line takes ~1 s to parse, 2.5 s to
///   outline and 160–230 MB of tree; code takes 0.3–0.8 s and 75–120 MB. So data files stop at
///   4 MiB with lines of 1 MiB, code at 8 MiB with lines of 4 MiB (a minified bundle).
/// - Indentation (YAML, Python): by construction, see below.
pub fn limits(grammar: Grammar) -> Limits {
    let code = Limits {
        bytes: 8 * 1024 * 1024,
        line: 4 * 1024 * 1024,
        depth: 4_096,
        indents: None,
    };
    let data = Limits {
        bytes: 4 * 1024 * 1024,
        line: 1024 * 1024,
        ..code
    };
    match grammar {
        // The scanner serializes 4 bytes per indentation entry after a 10-byte header into
        // 1,024 bytes: 253 entries. Its stack holds increasing columns, a column at most
        // twice (a mapping and the sequence at its key's column), plus a block scalar's own:
        // 120 distinct columns stay within the buffer.
        Grammar::Yaml => Limits {
            indents: Some(120),
            ..data
        },
        Grammar::Json | Grammar::Toml => data,
        // 2 bytes per indentation level after up to 257 bytes of string delimiters: 383
        // levels fit; the stack holds increasing widths, so distinct widths bound it.
        Grammar::Python => Limits {
            indents: Some(380),
            ..code
        },
        _ => code,
    }
}

/// What one pass measured of a text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Measured {
    /// The deepest bracket nesting, and its 1-based line.
    depth: (usize, usize),
    /// The longest line in bytes, and its line.
    line: (usize, usize),
    /// Distinct indentation depths (as the grammar's scanner counts columns), and the line
    /// where the count first passed the limit.
    indents: (usize, usize),
}

/// Whether `text` may be parsed with `grammar`; if not, why.
pub fn admit(grammar: Grammar, text: &str) -> Result<(), Skip> {
    let limits = limits(grammar);
    let name = grammar.name().to_string();
    if text.len() > limits.bytes {
        return Err(Skip::TooLarge {
            grammar: name,
            bytes: text.len(),
            limit: limits.bytes,
        });
    }
    let m = measure(grammar, text, &limits);
    if let Some(limit) = limits.indents {
        if m.indents.0 > limit {
            return Err(Skip::TooManyIndents {
                grammar: name,
                depths: m.indents.0,
                line: m.indents.1,
                limit,
            });
        }
    }
    if m.depth.0 > limits.depth {
        return Err(Skip::TooDeep {
            grammar: name,
            depth: m.depth.0,
            line: m.depth.1,
            limit: limits.depth,
        });
    }
    if m.line.0 > limits.line {
        return Err(Skip::LineTooLong {
            grammar: name,
            line: m.line.1,
            bytes: m.line.0,
            limit: limits.line,
        });
    }
    Ok(())
}

fn measure(grammar: Grammar, text: &str, limits: &Limits) -> Measured {
    let mut m = Measured::default();
    let mut depth = 0usize;
    // Columns (YAML) or widths (Python) seen at the start of a line: a bit set over the
    // columns, no larger than the longest line.
    let mut seen = ColumnSet::default();
    for (i, line) in text.split('\n').enumerate() {
        let number = i + 1;
        if line.len() > m.line.0 {
            m.line = (line.len(), number);
        }
        for b in line.bytes() {
            match b {
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    if depth > m.depth.0 {
                        m.depth = (depth, number);
                    }
                }
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        if let Some(limit) = limits.indents {
            match grammar {
                Grammar::Yaml => yaml_columns(line, &mut seen),
                _ => python_width(line, &mut seen),
            }
            if seen.len() > limit && m.indents.1 == 0 {
                m.indents.1 = number;
            }
            m.indents.0 = seen.len();
        }
    }
    m
}

/// The columns at which a YAML line can open a block: its indentation, each block indicator
/// (`- `, `? `, `: `) before its content, and where the content starts. The scanner pushes an
/// indentation entry only at such a column, and its stack holds increasing columns.
fn yaml_columns(line: &str, seen: &mut ColumnSet) {
    let bytes = line.as_bytes();
    let mut col = 0usize;
    let mut i = 0usize;
    loop {
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\r') {
            i += 1;
            col += 1;
        }
        if i >= bytes.len() || bytes[i] == b'#' {
            return;
        }
        seen.insert(col);
        let indicator = matches!(bytes[i], b'-' | b'?' | b':')
            && bytes
                .get(i + 1)
                .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\r'));
        if !indicator {
            return;
        }
        i += 1;
        col += 1;
    }
}

/// The indentation width of a Python line as its scanner counts it (a tab is 8, a form feed
/// starts over); blank and comment-only lines open nothing.
fn python_width(line: &str, seen: &mut ColumnSet) {
    let mut width = 0usize;
    for b in line.bytes() {
        match b {
            b' ' => width += 1,
            b'\t' => width += 8,
            b'\x0c' => width = 0,
            b'\r' => {}
            b'#' => return,
            _ => {
                seen.insert(width);
                return;
            }
        }
    }
}

/// A set of columns, counted.
#[derive(Default)]
struct ColumnSet {
    bits: Vec<u64>,
    len: usize,
}

impl ColumnSet {
    fn insert(&mut self, col: usize) {
        let (word, bit) = (col / 64, col % 64);
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        if let Some(w) = self.bits.get_mut(word) {
            if *w & (1 << bit) == 0 {
                *w |= 1 << bit;
                self.len += 1;
            }
        }
    }

    fn len(&self) -> usize {
        self.len
    }
}
