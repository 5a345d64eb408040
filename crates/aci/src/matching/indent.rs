//! Indentation, measured and written: how a file indents (tabs or a step of spaces), how deep a
//! line is in columns, and the whitespace for a depth in the file's own style. Both ways of
//! rebuilding a match ([`super::reindent`], [`super::hunk`]) move lines by these measures, so
//! they agree on what a column is.

use super::Lines;

/// How a file indents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indent {
    Tabs,
    Spaces(usize),
}

pub(super) const TAB_COLS: usize = 4;

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

/// Indentation width in columns (a tab counts four). A model's channel may have turned its
/// spaces into non-breaking ones, or put a byte-order mark before the first line: those are
/// indentation as it was meant (a space is a column, a zero-width mark none), so a line is
/// as deep as it looks.
pub(super) fn cols(line: &str) -> usize {
    line.chars().map_while(indent_cols).sum()
}

/// The columns an indentation character stands for, `None` for anything else.
fn indent_cols(c: char) -> Option<usize> {
    match c {
        '\t' => Some(TAB_COLS),
        ' ' | '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
            Some(1)
        }
        '\u{200B}' | '\u{2060}' | '\u{FEFF}' => Some(0),
        _ => None,
    }
}

/// The line's leading indentation, as [`cols`] measures it.
pub(super) fn leading_ws(line: &str) -> &str {
    &line[..line.len() - body(line).len()]
}

/// The line without its leading indentation.
pub(super) fn body(line: &str) -> &str {
    line.trim_start_matches(|c| indent_cols(c).is_some())
}

/// The indentation step old/new were written with: the smallest positive difference between
/// indentation widths in them, or the file's unit when they give none.
pub(super) fn text_unit(texts: &[&str], file: Indent) -> usize {
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

pub(super) fn render_indent(target: usize, file: Indent) -> String {
    match file {
        Indent::Tabs => format!(
            "{}{}",
            "\t".repeat(target / TAB_COLS),
            " ".repeat(target % TAB_COLS)
        ),
        Indent::Spaces(_) => " ".repeat(target),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Lines;
    use super::{indent_unit, Indent};

    #[test]
    fn indent_detection() {
        assert_eq!(indent_unit(&Lines::new("a\n\tb\n\t\tc\n")), Indent::Tabs);
        assert_eq!(
            indent_unit(&Lines::new("a\n  b\n    c\n  d\n")),
            Indent::Spaces(2)
        );
    }
}
