//! The `   42|` gutter of ws_read output, pasted into an edit: spotted, told apart from code
//! that only looks like it (`1|2 => …` match arms), and stripped. Models trained on other
//! agents paste those agents' read formats too (`cat -n`, Claude Code's `12→`, Codex's
//! `L12: `, `12:`): [`Numbering`] reads them. The tools decide when to strip; this only says
//! what is there.

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

/// Another tool's line-number prefix, as models trained on other agents paste it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// `cat -n` and `nl`: the number right-aligned, then a tab (`     12\t`).
    Tab,
    /// Claude Code's read: the number, then `→` (`    12→`).
    Arrow,
    /// Codex's read: `L12: `.
    CodexL,
    /// The number, a colon and one space (`%4d: ` → `  12: `).
    ColonSpace,
    /// The number and a colon, as `grep -n` and `nl -s:` write it (`12:`).
    Colon,
}

impl Numbering {
    /// Every style, in the order they are tried (a colon and a space before a bare colon).
    pub const ALL: [Numbering; 5] = [
        Numbering::Tab,
        Numbering::Arrow,
        Numbering::CodexL,
        Numbering::ColonSpace,
        Numbering::Colon,
    ];

    /// How the style looks, for the note that says it was stripped.
    pub fn example(self) -> &'static str {
        match self {
            Numbering::Tab => "\"    12\\t\", as cat -n writes it",
            Numbering::Arrow => "\"    12→\"",
            Numbering::CodexL => "\"L12: \"",
            Numbering::ColonSpace => "\"  12: \"",
            Numbering::Colon => "\"12:\"",
        }
    }

    /// The prefix's length on `line` and the number in it, when the line carries this style.
    fn prefix(self, line: &str) -> Option<(usize, u64)> {
        let b = line.as_bytes();
        let mut i = 0;
        if self == Numbering::CodexL {
            if b.first() != Some(&b'L') {
                return None;
            }
            i = 1;
        } else {
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
        }
        let digits = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if !(1..=7).contains(&(i - digits)) {
            return None;
        }
        let number: u64 = line[digits..i].parse().ok()?;
        let rest = &line[i..];
        let sep = match self {
            Numbering::Tab => "\t",
            Numbering::Arrow => "→",
            Numbering::CodexL | Numbering::ColonSpace => {
                // A numbered line with nothing on it may have lost the space too.
                if rest == ":" {
                    ":"
                } else {
                    ": "
                }
            }
            Numbering::Colon => ":",
        };
        rest.starts_with(sep).then_some((i + sep.len(), number))
    }

    /// Bare colons are common in code (`1: one`), so one numbered line is not enough for them.
    fn min_lines(self) -> usize {
        match self {
            Numbering::ColonSpace | Numbering::Colon => 2,
            _ => 1,
        }
    }

    /// `text` with this style's prefix taken off every line that carries it, when every
    /// non-blank line does; `None` otherwise.
    pub fn strip(self, text: &str) -> Option<String> {
        let mut out = Vec::new();
        for line in text.split('\n') {
            match self.prefix(line) {
                Some((len, _)) => out.push(&line[len..]),
                None if line.trim().is_empty() => out.push(""),
                None => return None,
            }
        }
        Some(out.join("\n"))
    }

    /// True when `text` carries this style on every non-blank line, enough of them, and the
    /// numbers run on: one more per line, or one more per numbered line (`nl` leaves blank
    /// lines unnumbered).
    fn pasted(self, text: &str) -> bool {
        let mut numbered: Vec<(usize, u64)> = Vec::new();
        for (i, line) in text.split('\n').enumerate() {
            match self.prefix(line) {
                Some((_, n)) => numbered.push((i, n)),
                None if line.trim().is_empty() => {}
                None => return false,
            }
        }
        let Some(&(i0, n0)) = numbered.first() else {
            return false;
        };
        let per_line = numbered
            .iter()
            .all(|&(i, n)| n.checked_sub(n0) == Some((i - i0) as u64));
        let per_numbered = numbered
            .iter()
            .enumerate()
            .all(|(k, &(_, n))| n.checked_sub(n0) == Some(k as u64));
        numbered.len() >= self.min_lines() && (per_line || per_numbered)
    }
}

/// The readings of `text` with another tool's line numbers stripped, one per style that was
/// pasted (every non-blank line carries it and the numbers run on), in the order to try them.
pub fn foreign_numbering(text: &str) -> Vec<(Numbering, String)> {
    Numbering::ALL
        .into_iter()
        .filter(|style| style.pasted(text))
        .filter_map(|style| Some((style, style.strip(text)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{foreign_numbering, gutter, gutter_is_pasted, Gutter, Numbering};

    #[test]
    fn other_tools_numbers_are_read_only_when_they_run_on() {
        let styles = |t: &str| -> Vec<Numbering> {
            foreign_numbering(t).into_iter().map(|(s, _)| s).collect()
        };
        assert_eq!(
            foreign_numbering("     7\tx = 1\n     8\t\n     9\t    y = 2"),
            vec![(Numbering::Tab, "x = 1\n\n    y = 2".to_string())]
        );
        // nl leaves blank lines unnumbered; its numbers run over the numbered lines.
        assert_eq!(
            styles("     7\tx = 1\n       \n     8\ty = 2"),
            [Numbering::Tab]
        );
        assert_eq!(styles("    12→fn a() {\n    13→}"), [Numbering::Arrow]);
        assert_eq!(styles("L12: fn a() {\nL13: }"), [Numbering::CodexL]);
        // `  12: ` could also be `12:` before an indented line: both readings, spaced first.
        assert_eq!(
            styles("  12: a = 1\n  13:     b = 2"),
            [Numbering::ColonSpace, Numbering::Colon]
        );
        assert_eq!(styles("12:a = 1\n13:b = 2"), [Numbering::Colon]);
        // Numbers that jump, a line without one, or one bare `1:` line are not a paste.
        assert!(styles("     7\tx = 1\n     9\ty = 2").is_empty());
        assert!(styles("     7\tx = 1\ny = 2").is_empty());
        assert!(styles("1: one").is_empty());
        assert!(styles("x = 1\ny = 2").is_empty());
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
}
