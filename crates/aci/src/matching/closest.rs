//! The region of a file most like an old_str that matched nowhere, for the not-found answer:
//! showing the model what is really there is what lets its next try land.

use std::collections::HashSet;

use super::{split_lines, Lines};

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
    use super::closest;

    #[test]
    fn closest_region_marks_differences() {
        let file = "one\ntwo\nthree\nfour\nfive\n";
        let c = closest(file, "three\nFOUR\n").unwrap();
        assert_eq!(c.lines[0], (3, "three".into(), false));
        assert_eq!(c.lines[1], (4, "four".into(), true));
    }
}
