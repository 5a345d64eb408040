//! The text work of building a case: the edit a model means to make to a span, and the ways a
//! drifting model bends text (indentation, tabs, trailing spaces, smart quotes, a misremembered
//! line, a placeholder), plus the unified diff a patch case sends.

use crate::rng::Rng;

/// The edit a model means to make to the span.
pub(super) struct Intended {
    pub(super) lines: Vec<String>,
    /// Index (in the span) of the line a new line was inserted after.
    pub(super) inserted_after: Option<usize>,
    /// The one line the edit changes in place, when it changes only one.
    pub(super) changed: Option<usize>,
    /// Two nearby lines changed by two hunks.
    pub(super) pair: Option<(usize, usize)>,
    pub(super) summary: String,
}

/// Identifier-like tokens of at least three characters: byte ranges.
pub(super) fn identifiers(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // Not the tail of a number or of a non-ASCII word.
            let glued = s > 0 && !b[s - 1].is_ascii();
            if i - s >= 3 && !glued && b[s..i].iter().any(|c| c.is_ascii_alphabetic()) {
                out.push((s, i));
            }
        } else {
            i += 1;
        }
    }
    out
}

pub(super) fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

pub(super) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// A realistic modification: rename one identifier occurrence, insert a comment line with its
/// neighbour's indentation, or both. `keep` is a span line that must not be renamed.
pub(super) fn intend(
    span: &[&str],
    comment: &str,
    rng: &mut Rng,
    keep: Option<usize>,
) -> Option<Intended> {
    let mode = rng.below(4); // 0,1: rename; 2: insert; 3: both
    let mut lines: Vec<String> = span.iter().map(|s| s.to_string()).collect();
    let mut inserted_after = None;
    let mut summary = Vec::new();
    if mode != 2 {
        let eligible: Vec<usize> = (0..span.len())
            .filter(|&i| Some(i) != keep && !identifiers(span[i]).is_empty())
            .collect();
        if eligible.is_empty() {
            return None;
        }
        let i = *rng.pick(&eligible);
        let ids = identifiers(span[i]);
        let (s, e) = *rng.pick(&ids);
        let token = &span[i][s..e];
        lines[i] = format!("{}{}_v2{}", &span[i][..s], token, &span[i][e..]);
        summary.push(format!(
            "rename `{token}` → `{token}_v2` in span line {}",
            i + 1
        ));
    }
    if mode >= 2 {
        let eligible: Vec<usize> = (0..span.len()).filter(|&i| !is_blank(span[i])).collect();
        let j = *rng.pick(&eligible);
        let indent = leading_ws(span[j]).to_string();
        lines.insert(
            j + 1,
            format!("{indent}{comment} edited: keep this in sync with the caller"),
        );
        inserted_after = Some(j);
        summary.push(format!("insert a comment line after span line {}", j + 1));
    }
    Some(Intended {
        lines,
        inserted_after,
        changed: None,
        pair: None,
        summary: summary.join(", "),
    })
}

/// Overlapping occurrences of `needle` in `hay`, stopping at `limit`.
pub(super) fn occurrences(hay: &str, needle: &str, limit: usize) -> usize {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let finder = memchr::memmem::Finder::new(n);
    let mut count = 0;
    let mut from = 0;
    while let Some(p) = finder.find(&h[from..]) {
        count += 1;
        if count >= limit {
            break;
        }
        from += p + 1;
    }
    count
}

/// The file's space indentation step: 4 when nearly every indented line is a multiple of 4.
pub(super) fn space_unit(text: &str) -> usize {
    let widths: Vec<usize> = text
        .lines()
        .filter(|l| !is_blank(l) && l.starts_with(' '))
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .collect();
    if widths.is_empty() {
        return 4;
    }
    let fours = widths.iter().filter(|w| *w % 4 == 0).count();
    if fours * 10 >= widths.len() * 9 {
        4
    } else {
        2
    }
}

/// Leading runs of spaces rewritten as tabs (one per `unit` spaces, remainder kept as spaces).
pub(super) fn spaces_to_tabs(line: &str, unit: usize) -> String {
    let n = line.len() - line.trim_start_matches(' ').len();
    if n == 0 {
        return line.to_string();
    }
    format!(
        "{}{}{}",
        "\t".repeat(n / unit),
        " ".repeat(n % unit),
        &line[n..]
    )
}

/// Leading tabs rewritten as four spaces each.
pub(super) fn tabs_to_spaces(line: &str) -> String {
    let ws = leading_ws(line);
    format!("{}{}", ws.replace('\t', "    "), &line[ws.len()..])
}

/// A real file with its leading space indentation turned into tabs (the file a Go or
/// Makefile-style project would have); only used when no tab-indented span was found.
pub(super) fn tabify(text: &str) -> String {
    let unit = space_unit(text);
    text.split_inclusive('\n')
        .map(|l| spaces_to_tabs(l, unit))
        .collect()
}

pub(super) fn join_lines<S: AsRef<str>>(lines: &[S]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(l.as_ref());
        s.push('\n');
    }
    s
}

pub(super) fn lines_of(text: &str) -> Vec<String> {
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .map(str::to_string)
        .collect()
}

pub(super) fn add_trailing(text: &str, rng: &mut Rng) -> String {
    const WS: &[&str] = &[" ", "  ", "\t", "    ", " \t"];
    let lines = lines_of(text);
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            if rng.chance(0.6) {
                format!("{l}{}", rng.pick(WS))
            } else {
                l.clone()
            }
        })
        .collect();
    if out == lines {
        let i = rng.below(out.len());
        out[i].push(' ');
    }
    join_lines(&out)
}

/// Smart quotes for straight ones, and en/em dashes for ` - ` and `--`.
pub(super) fn smarten(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut dq_open, mut sq_open) = (true, true);
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        match c {
            '"' => {
                out.push(if dq_open { '\u{201C}' } else { '\u{201D}' });
                dq_open = !dq_open;
            }
            '\'' => {
                if prev.is_alphanumeric() && chars.get(i + 1).is_some_and(|n| n.is_alphabetic()) {
                    out.push('\u{2019}'); // apostrophe
                } else {
                    out.push(if sq_open { '\u{2018}' } else { '\u{2019}' });
                    sq_open = !sq_open;
                }
            }
            '-' if chars.get(i + 1) == Some(&'-') && prev == ' ' => {
                out.push('\u{2014}');
                i += 1;
            }
            '-' if prev == ' ' && chars.get(i + 1) == Some(&' ') => out.push('\u{2013}'),
            _ => out.push(c),
        }
        if c == '\n' {
            dq_open = true;
            sq_open = true;
        }
        i += 1;
    }
    out
}

/// Misremembers one identifier in a line: drops its last letter, pluralizes it, or flips the
/// case of its first letter.
pub(super) fn misremember(line: &str, rng: &mut Rng) -> Option<String> {
    let ids = identifiers(line);
    if ids.is_empty() {
        return None;
    }
    let (s, e) = *rng.pick(&ids);
    let token = &line[s..e];
    let altered = match rng.below(3) {
        0 => token[..token.len() - 1].to_string(),
        1 => format!("{token}s"),
        _ => {
            let mut c = token.chars();
            let first = c.next()?;
            let flipped: String = if first.is_uppercase() {
                first.to_lowercase().collect()
            } else {
                first.to_uppercase().collect()
            };
            format!("{flipped}{}", c.as_str())
        }
    };
    let out = format!("{}{}{}", &line[..s], altered, &line[e..]);
    (out != line).then_some(out)
}

/// A line that says nothing about where it is: no word of three letters, or a bare keyword.
pub(super) fn trivial(line: &str) -> bool {
    // The tool's own list (matching::is_trivial), so "ends unique" means what the rung needs.
    const KEYWORDS: &[&str] = &[
        "end", "fi", "done", "esac", "else", "endif", "begin", "then", "do", "try", "finally",
        "pass", "break", "continue", "return", "default:", "else:", "try:", "finally:",
    ];
    !line.chars().any(char::is_alphanumeric) || KEYWORDS.contains(&line.trim_end_matches(';'))
}

/// Two to four consecutive non-blank lines the intended edit keeps as they are, at least one
/// of them found nowhere else in the file: what a lazy model sends a placeholder for. Returns
/// their index in the intended lines and how many.
pub(super) fn placeholder_run(
    span: &[&str],
    intended: &Intended,
    text: &str,
    rng: &mut Rng,
) -> Option<(usize, usize)> {
    // Intended index of each span line (the inserted comment shifts what follows it).
    let at = |i: usize| i + usize::from(intended.inserted_after.is_some_and(|j| j < i));
    let unchanged = |i: usize| !is_blank(span[i]) && intended.lines[at(i)] == span[i];
    let unique = |l: &str| text.lines().filter(|x| x.trim() == l.trim()).count() == 1;
    let mut runs = Vec::new();
    for start in 0..span.len() {
        for len in 2..=4 {
            let end = start + len;
            if end > span.len() || !(start..end).all(unchanged) {
                break;
            }
            // The run must be contiguous in the intended lines too (no comment inserted in it).
            if at(end - 1) - at(start) != len - 1 {
                break;
            }
            if (start..end).any(|i| unique(span[i])) && len < span.len() - 1 {
                runs.push((at(start), len));
            }
        }
    }
    if runs.is_empty() {
        None
    } else {
        Some(*rng.pick(&runs))
    }
}

/// A unified diff turning `old` into `new` as one hunk starting at `at` (1-based).
pub(super) fn unified(name: &str, at: usize, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut body = String::new();
    for change in diff.iter_all_changes() {
        let mark = match change.tag() {
            similar::ChangeTag::Equal => ' ',
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
        };
        body.push(mark);
        body.push_str(change.value());
    }
    format!(
        "--- a/{name}\n+++ b/{name}\n@@ -{at},{} +{at},{} @@\n{body}",
        old.lines().count(),
        new.lines().count()
    )
}

/// `line` with one identifier renamed (`name` → `name_v2`).
fn rename_in(line: &str, rng: &mut Rng) -> Option<String> {
    let ids = identifiers(line);
    if ids.is_empty() {
        return None;
    }
    let (s, e) = *rng.pick(&ids);
    Some(format!("{}{}_v2{}", &line[..s], &line[s..e], &line[e..]))
}

/// The edit of an inline comment: one line without trailing blanks gets `  # note` (in the
/// file's comment syntax) at its end, two spaces before it as the common style has.
pub(super) fn extend_a_line(span: &[&str], comment: &str, rng: &mut Rng) -> Option<Intended> {
    let eligible: Vec<usize> = (0..span.len())
        .filter(|&i| !is_blank(span[i]) && span[i].trim_end() == span[i])
        .collect();
    if eligible.is_empty() {
        return None;
    }
    let i = *rng.pick(&eligible);
    let mut lines: Vec<String> = span.iter().map(|l| l.to_string()).collect();
    lines[i] = format!("{}  {comment} note: keep in sync", span[i]);
    Some(Intended {
        lines,
        inserted_after: None,
        changed: Some(i),
        pair: None,
        summary: format!("append an inline comment to span line {}", i + 1),
    })
}

/// Pairs of span lines one or two apart that can each take a rename.
pub(super) fn adjacent_pairs(span: &[&str]) -> Vec<(usize, usize)> {
    let ok = |i: usize| !is_blank(span[i]) && !identifiers(span[i]).is_empty();
    let mut out = Vec::new();
    for a in 0..span.len() {
        for b in a + 1..(a + 3).min(span.len()) {
            if ok(a) && ok(b) {
                out.push((a, b));
            }
        }
    }
    out
}

/// Two renames on lines one or two apart: what two hunks with overlapping context change.
pub(super) fn rename_two_near(span: &[&str], rng: &mut Rng) -> Option<Intended> {
    let pairs = adjacent_pairs(span);
    if pairs.is_empty() {
        return None;
    }
    let (a, b) = *rng.pick(&pairs);
    let mut lines: Vec<String> = span.iter().map(|l| l.to_string()).collect();
    lines[a] = rename_in(span[a], rng)?;
    lines[b] = rename_in(span[b], rng)?;
    Some(Intended {
        lines,
        inserted_after: None,
        changed: None,
        pair: Some((a, b)),
        summary: format!("rename in span lines {} and {}", a + 1, b + 1),
    })
}

/// Two hunks, each written against the original file as `diff -u` writes them: the first
/// changes line `a` and shows line `b` as context, the second changes `b` and shows line `a`
/// as it was before the first hunk.
pub(super) fn two_hunks(
    name: &str,
    first_line: usize,
    span: &[&str],
    new: &[String],
    a: usize,
    b: usize,
) -> String {
    let hunk = |lo: usize, hi: usize, change: usize| {
        let mut body = String::new();
        for i in lo..=hi {
            if i == change {
                body.push_str(&format!("-{}\n+{}\n", span[i], new[i]));
            } else {
                body.push_str(&format!(" {}\n", span[i]));
            }
        }
        let len = hi + 1 - lo;
        let at = first_line + lo;
        format!("@@ -{at},{len} +{at},{len} @@\n{body}")
    };
    format!(
        "--- a/{name}\n+++ b/{name}\n{}{}",
        hunk(a.saturating_sub(1), b, a),
        hunk(a, (b + 1).min(span.len() - 1), b)
    )
}

/// Leading spaces turned into non-breaking spaces, as some chat channels render them.
pub(super) fn nbsp_indent(text: &str) -> String {
    let lines: Vec<String> = lines_of(text)
        .iter()
        .map(|l| {
            let n = l.len() - l.trim_start_matches(' ').len();
            format!("{}{}", "\u{a0}".repeat(n), &l[n..])
        })
        .collect();
    join_lines(&lines)
}

/// The read formats of other agents, by index: cat -n, nl, Claude Code, Codex, `%4d: `, grep -n.
pub(super) const NUMBER_STYLES: [&str; 6] = [
    "as cat -n",
    "as nl",
    "as Claude Code's 12→",
    "as Codex's L12:",
    "as %4d: ",
    "as grep -n",
];

/// `lines` with another agent's line numbers: `first` is the file line of the first, and
/// `first_numbered` the nl number of its first non-blank line (nl numbers only those).
pub(super) fn number_lines(
    lines: &[&str],
    style: usize,
    first: usize,
    first_numbered: usize,
) -> String {
    let mut nl = first_numbered;
    let out: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let n = first + k;
            match style {
                0 => format!("{n:6}\t{l}"),
                1 if is_blank(l) => "       ".to_string(),
                1 => {
                    nl += 1;
                    format!("{:6}\t{l}", nl - 1)
                }
                2 => format!("{n:6}→{l}"),
                3 => format!("L{n}: {l}"),
                4 => format!("{n:4}: {l}"),
                _ => format!("{n}:{l}"),
            }
        })
        .collect();
    join_lines(&out)
}

/// The ASCII punctuation a CJK channel turns full-width.
pub(super) const FULL_WIDTH: [char; 8] = ['(', ')', ':', ',', ';', '=', '[', ']'];

/// What a lossy channel does to text: the punctuation `seen` (the text the model read) has
/// turned full-width, and a zero-width space after the indentation of every other line.
pub(super) fn channel_drift(text: &str, seen: &str) -> String {
    let lines: Vec<String> = lines_of(text)
        .iter()
        .map(|l| {
            let body: String = l
                .chars()
                .map(|c| {
                    if FULL_WIDTH.contains(&c) && seen.contains(c) {
                        char::from_u32(c as u32 + 0xFEE0).unwrap_or(c)
                    } else {
                        c
                    }
                })
                .collect();
            let n = body.len() - body.trim_start().len();
            // The same line gets the same mark in old and new: decided by its text.
            if !is_blank(l) && l.len() % 2 == 0 {
                format!("{}\u{200b}{}", &body[..n], &body[n..])
            } else {
                body
            }
        })
        .collect();
    join_lines(&lines)
}
