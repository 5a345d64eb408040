//! A fuzzy match turned into the text to put there, the way a careful human would apply it:
//! lines the model kept are written as the file has them, changed and added lines take the
//! file's indentation, and the file's blank lines stay where the model did not touch them.
//! A rung only says *where*; this is what keeps a loose match from writing the model's drift
//! (its indentation, smart quotes, escapes) into the file.

use std::borrow::Cow;
use std::collections::HashSet;

use super::indent::{
    body, cols, indent_unit, leading_ws, render_indent, text_unit, Indent, TAB_COLS,
};
use super::merge::merge_line;
use super::origin::{origins, Origin};
use super::rungs::{ascii_punctuation, trim_both, trim_end, unicode_normalized};
use super::{split_lines, Lines, Query, Replacement, Rung, Span};

/// Turns a candidate into the bytes to replace and the text to put there.
pub(super) fn replacement(
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
///
/// Three steps: [`align`] pairs the lines up, [`Alignment::place_line`] writes each non-blank
/// new line, [`Alignment::blank_runs`] puts the blank lines between them back.
fn rebuild(
    old: &[&str],
    new: &[&str],
    matched: &[&str],
    rung: Rung,
    file: Indent,
) -> Option<Vec<String>> {
    let aligned = align(old, new, matched, rung)?;
    let pairs: Vec<(&str, &str)> = aligned
        .old_nb
        .iter()
        .zip(&aligned.file_nb)
        .map(|(&i, &f)| (old[i], matched[f]))
        .collect();
    let depth = Depth::fit(&pairs, old, new, file);
    let blank_exact = matches!(rung, Rung::TrailingWhitespace | Rung::Indentation);
    let tidy = Tidy::new(old, matched, rung);

    let mut out: Vec<String> = Vec::new();
    // The line placed last: its depth as the model wrote it in new, and its indentation.
    let mut above: (usize, String) = (
        cols(old[aligned.old_nb[0]]),
        leading_ws(matched[aligned.file_nb[0]]).to_string(),
    );
    let new_nb = &aligned.new_nb;
    aligned.blank_runs(
        &mut out,
        None,
        if new_nb.is_empty() { None } else { Some(0) },
        blank_exact,
    );
    for (k, &j) in new_nb.iter().enumerate() {
        let line = new[j];
        let text = aligned.place_line(k, &depth, &tidy, &above);
        above = (cols(line), leading_ws(&text).to_string());
        out.push(text);
        let next = (k + 1 < new_nb.len()).then_some(k + 1);
        aligned.blank_runs(&mut out, Some(k), next, blank_exact);
    }
    Some(out)
}

/// The three texts of a fuzzy match — old as the model sent it, new, and the file's matched
/// lines — and how their non-blank lines pair up.
struct Alignment<'a> {
    old: &'a [&'a str],
    new: &'a [&'a str],
    matched: &'a [&'a str],
    /// Indices of the non-blank lines of each text; old's and the file's pair up by rank.
    old_nb: Vec<usize>,
    new_nb: Vec<usize>,
    file_nb: Vec<usize>,
    /// For each non-blank new line: the old non-blank line (by rank) it keeps or replaces.
    origin: Vec<Origin>,
}

/// Pairs the lines up: old's non-blank lines with the file's, rank for rank (`None` when their
/// counts differ), and new's with old's by a diff of the lines as the rung compares them.
fn align<'a>(
    old: &'a [&'a str],
    new: &'a [&'a str],
    matched: &'a [&'a str],
    rung: Rung,
) -> Option<Alignment<'a>> {
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
    let origin = origins(&old_keys, &new_keys);
    Some(Alignment {
        old,
        new,
        matched,
        old_nb,
        new_nb,
        file_nb,
        origin,
    })
}

impl<'a> Alignment<'a> {
    /// The text of the `k`th non-blank new line. A kept line is the file's, moved only if the
    /// model moved it; a changed line is indented from the file line it replaces, an added one
    /// from the line placed just `above` it (its depth in new, and its indentation).
    fn place_line(&self, k: usize, depth: &Depth, tidy: &Tidy, above: &(usize, String)) -> String {
        let (old, matched) = (self.old, self.matched);
        let line = self.new[self.new_nb[k]];
        match self.origin[k] {
            Origin::Kept(r) => {
                let (o, f) = (old[self.old_nb[r]], matched[self.file_nb[r]]);
                if cols(line) == cols(o) {
                    f.to_string()
                } else {
                    let indent = depth.shift(leading_ws(f), cols(o), line);
                    format!("{indent}{}", body(f))
                }
            }
            Origin::Changed(r) => {
                let (o, f) = (old[self.old_nb[r]], matched[self.file_nb[r]]);
                let indent = depth.shift(leading_ws(f), cols(o), line);
                let line_tidy = tidy.for_line(o, f);
                let written = body(line);
                // Blanks the model's old line ends in and the file's line does not are drift
                // only at the end of a line: where its new line goes on past them
                // (`x = 1  ` → `x = 1  # note`), they are text the model wrote.
                let (o, f) = (body(o), body(f));
                let o = if trailing_blanks(o) == trailing_blanks(f) {
                    o
                } else {
                    o.trim_end()
                };
                // The model's edit onto the file's own line, where the two can be told apart.
                let merged = merge_line(o, f, written, &|put| line_tidy.punctuation(put));
                let text = match merged {
                    Some(m) => line_tidy.trailing(&m).to_string(),
                    None => line_tidy.apply(written),
                };
                format!("{indent}{text}")
            }
            Origin::Added => {
                let indent = depth.shift(&above.1, above.0, line);
                format!("{indent}{}", tidy.apply(body(line)))
            }
        }
    }

    /// Puts back the blank lines between two placed new lines. `prev`/`next` are positions in
    /// `new_nb` (`None` = the start or the end of the region).
    fn blank_runs(
        &self,
        out: &mut Vec<String>,
        prev: Option<usize>,
        next: Option<usize>,
        blank_exact: bool,
    ) {
        let (old, new) = (self.old, self.new);
        let (old_nb, new_nb, file_nb) = (&self.old_nb, &self.new_nb, &self.file_nb);
        let new_from = prev.map(|k| new_nb[k]);
        let new_to = next.map(|k| new_nb[k]);
        let m = blanks(new, new_from, new_to);
        let old_rank = |k: Option<usize>, edge: Option<usize>| match k {
            Some(k) => self.origin[k].old(),
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
            let kept = self.file_blank_lines(file_from, file_to);
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
    }

    /// The file's blank lines between two matched lines (exclusive; `None` = the region's
    /// start or end).
    fn file_blank_lines(&self, from: Option<usize>, to: Option<usize>) -> Vec<&'a str> {
        let lo = from.map_or(0, |i| i + 1);
        let hi = to.unwrap_or(self.matched.len());
        (lo..hi.max(lo))
            .map(|f| self.matched[f])
            .filter(|l| blank_line(l))
            .collect()
    }
}

/// Blank lines between two positions (exclusive; `None` = the start or the end of `lines`).
fn blanks(lines: &[&str], from: Option<usize>, to: Option<usize>) -> usize {
    let lo = from.map_or(0, |i| i + 1);
    let hi = to.unwrap_or(lines.len());
    (lo..hi.max(lo)).filter(|&i| blank_line(lines[i])).count()
}

/// The spaces and tabs a line ends in.
fn trailing_blanks(l: &str) -> &str {
    &l[l.trim_end().len()..]
}

pub(super) fn blank_line(l: &str) -> bool {
    l.trim().is_empty()
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
pub(super) struct Tidy {
    trim_trailing: bool,
    to_ascii: HashSet<char>,
}

impl Tidy {
    pub(super) fn new(old: &[&str], matched: &[&str], rung: Rung) -> Tidy {
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

    pub(super) fn apply(&self, body: &str) -> String {
        self.punctuation(self.trailing(body))
    }

    /// `body` without trailing whitespace when the rung's drift says the model added it.
    fn trailing<'b>(&self, body: &'b str) -> &'b str {
        if self.trim_trailing {
            body.trim_end()
        } else {
            body
        }
    }

    /// `text` with the model's drifted punctuation in the file's plain form.
    fn punctuation(&self, text: &str) -> String {
        if self.to_ascii.is_empty() {
            text.to_string()
        } else {
            ascii_punctuation(text, |c| self.to_ascii.contains(&c))
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

#[cfg(test)]
mod tests {
    use super::super::tests::apply;
    use super::super::Rung;

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
}
