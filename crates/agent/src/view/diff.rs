//! An edit's diff as the view draws it: the unified diff a `file_changed` record holds, read
//! into rows with the old and new line numbers from its `@@` headers, shown unified or side
//! by side (a block of removed lines beside the block that replaced it).

use maud::{html, Markup};

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Line {
    /// `--- a/x` / `+++ b/x`, an `@@` header, or the cap's note.
    Meta(String),
    Same(usize, usize, String),
    Removed(usize, String),
    Added(usize, String),
}

/// Reads a unified diff into lines with their numbers.
fn lines(diff: &str) -> Vec<Line> {
    let (mut old, mut new) = (0usize, 0usize);
    let mut out = Vec::new();
    for l in diff.lines() {
        if let Some(h) = l.strip_prefix("@@ ") {
            // `@@ -12,3 +12,4 @@`: where each side's lines start.
            let mut parts = h.split_whitespace();
            let start = |p: Option<&str>, sign: char| {
                p.and_then(|p| p.strip_prefix(sign))
                    .and_then(|p| p.split(',').next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(1)
            };
            old = start(parts.next(), '-');
            new = start(parts.next(), '+');
            out.push(Line::Meta(l.to_string()));
        } else if l.starts_with("--- ") || l.starts_with("+++ ") || l.starts_with("[…") {
            out.push(Line::Meta(l.to_string()));
        } else if let Some(t) = l.strip_prefix('-') {
            out.push(Line::Removed(old, t.to_string()));
            old += 1;
        } else if let Some(t) = l.strip_prefix('+') {
            out.push(Line::Added(new, t.to_string()));
            new += 1;
        } else {
            let t = l.strip_prefix(' ').unwrap_or(l);
            out.push(Line::Same(old, new, t.to_string()));
            old += 1;
            new += 1;
        }
    }
    out
}

/// The diff as one column: removed and added lines in place.
pub fn unified(diff: &str) -> Markup {
    html! {
        table.diff.unified {
            @for line in lines(diff) {
                @match line {
                    Line::Meta(t) => tr.meta { td colspan="3" { (t) } },
                    Line::Same(o, n, t) => tr { td.n { (o) } td.n { (n) } td.code { " " (t) } },
                    Line::Removed(o, t) => tr.del { td.n { (o) } td.n {} td.code { "-" (t) } },
                    Line::Added(n, t) => tr.add { td.n {} td.n { (n) } td.code { "+" (t) } },
                }
            }
        }
    }
}

/// The diff in two columns: before on the left, after on the right.
pub fn split(diff: &str) -> Markup {
    let lines = lines(diff);
    let mut rows: Vec<(Option<Line>, Option<Line>)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match &lines[i] {
            Line::Removed(..) | Line::Added(..) => {
                let mut removed = Vec::new();
                while let Some(l @ Line::Removed(..)) = lines.get(i) {
                    removed.push(l.clone());
                    i += 1;
                }
                let mut added = Vec::new();
                while let Some(l @ Line::Added(..)) = lines.get(i) {
                    added.push(l.clone());
                    i += 1;
                }
                let n = removed.len().max(added.len());
                let mut removed = removed.into_iter();
                let mut added = added.into_iter();
                for _ in 0..n {
                    rows.push((removed.next(), added.next()));
                }
            }
            other => {
                rows.push((Some(other.clone()), None));
                i += 1;
            }
        }
    }
    html! {
        table.diff.split {
            @for (left, right) in rows {
                @match (left, right) {
                    (Some(Line::Meta(t)), _) => tr.meta { td colspan="4" { (t) } },
                    (Some(Line::Same(o, n, t)), _) => tr {
                        td.n { (o) } td.code { (t) } td.n { (n) } td.code { (t) }
                    },
                    (left, right) => tr {
                        (side(left.as_ref()))
                        (side(right.as_ref()))
                    },
                }
            }
        }
    }
}

fn side(line: Option<&Line>) -> Markup {
    html! {
        @match line {
            Some(Line::Removed(n, t)) => { td.n.del { (n) } td.code.del { (t) } },
            Some(Line::Added(n, t)) => { td.n.add { (n) } td.code.add { (t) } },
            _ => { td.n {} td.code {} },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "--- a/x.py\n+++ b/x.py\n@@ -10,3 +10,4 @@\n a\n-b\n+c\n+d\n e\n";

    #[test]
    fn numbers_follow_the_hunk_headers() {
        let l = lines(DIFF);
        assert_eq!(l[3], Line::Same(10, 10, "a".into()));
        assert_eq!(l[4], Line::Removed(11, "b".into()));
        assert_eq!(l[5], Line::Added(11, "c".into()));
        assert_eq!(l[6], Line::Added(12, "d".into()));
        assert_eq!(l[7], Line::Same(12, 13, "e".into()));
    }

    #[test]
    fn side_by_side_pairs_a_removal_with_its_replacement() {
        let html = split(DIFF).into_string();
        // b beside c, then nothing beside d.
        assert!(
            html.contains(r#"<td class="n del">11</td><td class="code del">b</td><td class="n add">11</td><td class="code add">c</td>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<td class="n"></td><td class="code"></td><td class="n add">12</td>"#),
            "{html}"
        );
        let html = unified("@@ -1 +1 @@\n-<script>alert(1)</script>\n").into_string();
        assert!(
            html.contains("-&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
    }
}
