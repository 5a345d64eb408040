//! The `   42|` gutter of ws_read output, pasted into an edit: spotted, told apart from code
//! that only looks like it (`1|2 => …` match arms), and stripped. The tools decide when to
//! strip; this only says what is there.

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

#[cfg(test)]
mod tests {
    use super::{gutter, gutter_is_pasted, Gutter};

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
