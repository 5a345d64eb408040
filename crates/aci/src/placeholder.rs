//! Lazy placeholders: a comment such as `# ... existing code ...` or `// rest of the function
//! unchanged` that a model writes where real lines were, meaning "keep what is here". Written
//! as is, it deletes the code it stands for — the edit looks done and the code is gone.
//!
//! [`find`] compares a file before and after a change: a placeholder comment the change adds
//! (one the file did not already have) in place of lines it removes — lines it does not write
//! anywhere else, so not moved — is reported with those lines. A placeholder that replaces nothing (a new
//! `// ...` between two kept lines) is left alone. Every comment syntax of the language
//! table ([`crate::lang`]) is read, on every line whatever the file type (`#`, `//`, `/* */`,
//! `<!-- -->`), and `--`.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use regex::Regex;

/// A placeholder that would delete code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// 1-based line in the result, and its text.
    pub line: usize,
    pub text: String,
    /// 1-based lines of the file before, and their text, that it stands for.
    pub deleted: Vec<(usize, String)>,
}

impl Placeholder {
    /// The refusal, for `verb` on `path`.
    pub fn refusal(&self, verb: &str, path: &impl std::fmt::Display) -> String {
        let first = self.deleted.first().map_or(0, |d| d.0);
        let last = self.deleted.last().map_or(0, |d| d.0);
        let shown: Vec<String> = self
            .deleted
            .iter()
            .take(3)
            .map(|(n, t)| format!("{n:5}|{t}"))
            .collect();
        let more = if self.deleted.len() > 3 {
            format!("\n  … and {} more", self.deleted.len() - 3)
        } else {
            String::new()
        };
        format!(
            "{verb} refused — `{}` is a placeholder comment, and it stands where {path} has {} line(s) that this change would delete (lines {first}–{last}):\n{}{more}\nWrite those lines out in full in your replacement, or change a smaller span that leaves them out.",
            self.text.trim(),
            self.deleted.len(),
            shown.join("\n")
        )
    }
}

/// How long the comparison may take on a huge rewrite before it settles for an approximate
/// (still correct, possibly larger) diff.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// How many kept lines may separate a placeholder from the lines it drops: bare punctuation,
/// or lines that recur among those dropped just after.
const MAX_PUNCTUATION_GAP: usize = 2;

/// A line with no letter or digit (blank, `}`, `};`, `)`): where the diff may happen to align
/// a placeholder's neighbour.
fn trivial(line: &str) -> bool {
    !line.chars().any(char::is_alphanumeric)
}

/// The first placeholder `after` puts in place of lines of `before` that it drops.
pub fn find(before: &str, after: &str) -> Option<Placeholder> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let existing: HashSet<&str> = old.iter().map(|l| l.trim()).collect();
    // Cheap first: most changes add no placeholder comment at all.
    let added: Vec<usize> = (0..new.len())
        .filter(|&j| is_placeholder(new[j]) && !existing.contains(new[j].trim()))
        .collect();
    if added.is_empty() {
        return None;
    }
    let ops = similar::capture_diff_slices_deadline(
        similar::Algorithm::Myers,
        &old,
        &new,
        Some(Instant::now() + DIFF_DEADLINE),
    );
    // Lines this change writes somewhere (code it moved rather than dropped).
    let written: HashSet<&str> = ops
        .iter()
        .filter(|op| !matches!(op, similar::DiffOp::Equal { .. }))
        .flat_map(|op| op.new_range())
        .map(|j| new[j].trim())
        .collect();
    // Deletions and insertions next to each other make one replaced stretch — also across a
    // line or two of bare punctuation (`};`, `)`) the diff happened to align on: a placeholder
    // put just above a kept `}` still stands for the lines dropped just below it.
    let mut stretches: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
    let mut gap: Option<(std::ops::Range<usize>, std::ops::Range<usize>)> = None;
    // The punctuation lines a stretch was joined across: kept, not dropped.
    let mut bridged_lines: HashSet<usize> = HashSet::new();
    for (k, op) in ops.iter().enumerate() {
        let (o, n) = (op.old_range(), op.new_range());
        if matches!(op, similar::DiffOp::Equal { .. }) {
            let follows = stretches
                .last()
                .is_some_and(|(po, pn)| po.end == o.start && pn.end == n.start);
            // A kept line the diff could as well have matched to one dropped just before or
            // after it (a repeated `#[arg(long)]` or `assert_eq!(`): where it aligned is
            // chance, not the model's meaning.
            let dropped_around: HashSet<&str> = stretches
                .last()
                .map(|(po, _)| po.clone())
                .into_iter()
                .chain(ops.get(k + 1).map(|next| next.old_range()))
                .flatten()
                .map(|i| old[i].trim())
                .collect();
            let bridgeable = |i: usize| trivial(old[i]) || dropped_around.contains(old[i].trim());
            gap = (follows && o.len() <= MAX_PUNCTUATION_GAP && o.clone().all(bridgeable))
                .then_some((o, n));
            continue;
        }
        let joins = |end_o: usize, end_n: usize| end_o == o.start && end_n == n.start;
        let bridged = gap.as_ref().is_some_and(|(go, gn)| joins(go.end, gn.end));
        match stretches.last_mut() {
            Some((po, pn)) if joins(po.end, pn.end) || bridged => {
                if let Some((go, _)) = gap.as_ref().filter(|_| bridged) {
                    bridged_lines.extend(go.clone());
                }
                po.end = o.end;
                pn.end = n.end;
            }
            _ => stretches.push((o, n)),
        }
        gap = None;
    }
    for (o, n) in stretches {
        let Some(&j) = added.iter().find(|j| n.contains(j)) else {
            continue;
        };
        // A comment the change rewrote (a word renamed in it) is not standing in for code.
        let rewrote_a_comment = o.clone().any(|i| {
            comment_body(old[i]).is_some()
                && strsim::normalized_levenshtein(old[i].trim(), new[j].trim()) >= 0.7
        });
        if rewrote_a_comment {
            continue;
        }
        // Old lines a new line of the stretch rewrites (the most alike, in order) were changed,
        // not dropped; the rest are what the placeholder stands for.
        let mut changed = HashSet::new();
        let mut from = o.start;
        for k in n
            .clone()
            .filter(|&k| !is_placeholder(new[k]) && !new[k].trim().is_empty())
        {
            let best = (from..o.end)
                .map(|i| {
                    (
                        strsim::normalized_levenshtein(old[i].trim(), new[k].trim()),
                        i,
                    )
                })
                .filter(|(score, _)| *score >= 0.5)
                .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
            if let Some((_, i)) = best {
                changed.insert(i);
                from = i + 1;
            }
        }
        let deleted: Vec<(usize, String)> = o
            .filter(|&i| {
                !old[i].trim().is_empty()
                    && !bridged_lines.contains(&i)
                    && !written.contains(old[i].trim())
                    && !changed.contains(&i)
            })
            .map(|i| (i + 1, old[i].to_string()))
            .collect();
        if !deleted.is_empty() {
            return Some(Placeholder {
                line: j + 1,
                text: new[j].to_string(),
                deleted,
            });
        }
    }
    None
}

/// Line-comment leads read besides the language table's: `--` (SQL, Lua, Haskell, which have
/// no row) and `*`, the middle lines of a block comment.
const EXTRA_LEADS: [&str; 2] = ["--", "*"];

/// The text of a comment line, without its markers; `None` when the line is not a comment.
fn comment_body(line: &str) -> Option<&str> {
    let t = line.trim();
    let forms = crate::lang::comment_forms();
    for (open, close) in &forms.block {
        if let Some(rest) = t.strip_prefix(open) {
            return Some(rest.strip_suffix(close).unwrap_or(rest));
        }
    }
    for lead in forms.line.iter().chain(&EXTRA_LEADS) {
        if let Some(rest) = t.strip_prefix(lead) {
            return Some(rest.strip_suffix("*/").unwrap_or(rest));
        }
    }
    None
}

/// True for a comment that says "the rest is here": only an ellipsis, an ellipsis with a word
/// about code that stays, or one of the phrases models use for it.
pub fn is_placeholder(line: &str) -> bool {
    let Some(body) = comment_body(line) else {
        return false;
    };
    let body = body
        .trim_start_matches(['/', '#', '-', '*', '!'])
        .trim()
        .to_lowercase();
    let words = body
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '.' && c != '…')
        .trim();
    let ellipsis = words.contains("...") || words.contains('…') || words.contains(". . .");
    if !words.is_empty()
        && words
            .chars()
            .all(|c| c == '.' || c == '…' || c.is_whitespace())
        && (words.contains("..") || words.contains('…'))
    {
        return true;
    }
    // Constant patterns, so never `None` (which would only make them match nothing); the
    // tests below exercise both.
    static KEYWORD: OnceLock<Option<Regex>> = OnceLock::new();
    static PHRASE: OnceLock<Option<Regex>> = OnceLock::new();
    let keyword = KEYWORD.get_or_init(|| {
        Regex::new(r"\b(existing|rest|remaining|unchanged|same|omitted|other|previous|original|more|code|here|above|below|before|etc|continues?|implementation|methods?|functions?|fields?|lines?|logic|body)\b").ok()
    });
    // A short note around an ellipsis; a sentence that merely contains one is a comment.
    let short = words
        .split(|c: char| c.is_whitespace() || c == '.' || c == '…')
        .filter(|w| !w.is_empty())
        .count()
        <= 6;
    if ellipsis && short && keyword.as_ref().is_some_and(|k| k.is_match(&body)) {
        return true;
    }
    let phrase = PHRASE.get_or_init(|| {
        Regex::new(concat!(
            r"^\(?(unchanged|same as before|no changes?|as before)\)?\.?$",
            r"|\b(existing|remaining|previous|other|original|unchanged) (code|lines|methods|functions|implementation|logic|content|fields|imports|tests|cases|body)\b",
            r"|\brest of (the |this |your )?(code|file|function|method|class|module|implementation|body|lines|logic|component|test|tests)\b",
            r"|\b(remains?|stays?|left|kept) (the same|unchanged|as[- ]is|as before)\b",
            r"|\bomitted for brevity\b|\bkeep (the )?existing\b|\bcode (continues|omitted)\b",
        ))
        .ok()
    });
    phrase.as_ref().is_some_and(|p| p.is_match(words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_comments_in_every_syntax() {
        for line in [
            "    # ... existing code ...",
            "  // ... rest of the function unchanged ...",
            "// ...",
            "/* ... */",
            "    # (unchanged)",
            "// rest of code remains the same",
            "-- ... other columns ...",
            "<!-- ... -->",
            "    // …",
            "# rest of the file is unchanged",
            "  /* existing methods */",
        ] {
            assert!(is_placeholder(line), "{line}");
        }
        for line in [
            "# returns the input",
            "// TODO: handle errors",
            "let x = a ... b;",
            "    ...",
            "# Copyright 2024",
            "    // A note after the label (`[landed 3 lines below …]`) is not part of it.",
            "// the value is unchanged if nil",
            "#include <stdio.h>",
            "--i;",
        ] {
            assert!(!is_placeholder(line), "{line}");
        }
    }

    #[test]
    fn only_a_placeholder_that_drops_lines_is_found() {
        let before = "def f():\n    a = 1\n    b = 2\n    return a + b\n";
        // Stands for the two middle lines: found, naming them.
        let after = "def f():\n    # ... existing code ...\n    return a + b + 1\n";
        let p = find(before, after).expect("found");
        assert_eq!(p.line, 2);
        assert_eq!(
            p.deleted,
            vec![(2, "    a = 1".to_string()), (3, "    b = 2".to_string())]
        );
        // Replaces nothing: fine.
        let after = "def f():\n    a = 1\n    # ...\n    b = 2\n    return a + b\n";
        assert_eq!(find(before, after), None);
        // The file already had it: fine.
        let before2 = "x = 1\n# ...\ny = 2\n";
        assert_eq!(find(before2, "x = 1\n# ...\n"), None);
        // The lines it replaced are still in the result (moved): fine.
        let after =
            "def f():\n    # ... existing code ...\n    return a + b\n    a = 1\n    b = 2\n";
        assert_eq!(find(before, after), None);
    }

    #[test]
    fn a_placeholder_above_a_kept_brace_still_stands_for_the_lines_below_it() {
        // The diff aligns the placeholder's `};` with the first `};`, so the dropped lines sit
        // in the next stretch, past one line of punctuation (found by the robustness bench).
        let before = "let port = match p {\n    None => 8080,\n};\nlet retries = match r {\n    Some(r) => r,\n    None => 3,\n};\nOk(Settings {\n";
        let after = "let port = match p {\n    None => 8080,\n// ... existing code ...\n};\nOk(Settings2 {\n";
        let p = find(before, after).expect("found");
        assert_eq!(p.line, 3);
        assert_eq!(
            p.deleted,
            vec![
                (4, "let retries = match r {".to_string()),
                (5, "    Some(r) => r,".to_string()),
                (6, "    None => 3,".to_string()),
                (7, "};".to_string())
            ]
        );
        // A placeholder that replaces nothing next to a kept brace is still fine.
        let after = "let port = match p {\n    None => 8080,\n// ...\n};\nlet retries = match r {\n    Some(r) => r,\n    None => 3,\n};\nOk(Settings {\n";
        assert_eq!(find(before, after), None);
    }

    #[test]
    fn a_placeholder_above_a_repeated_line_stands_for_the_copy_dropped_below_it() {
        // The diff keeps the first `#[arg(long)]` and drops the second with the lines the
        // placeholder stands for (found by the robustness bench).
        let before = "    /// Where.\n    #[arg(long)]\n    endpoint: Option<String>,\n    /// Which.\n    #[arg(long)]\n    query: Option<String>,\n    /// How many.\n";
        let after = "    /// Where.\n    // ... existing code ...\n    // edited: keep this in sync\n    #[arg(long)]\n    query: Option2<String>,\n    /// How many.\n";
        let p = find(before, after).expect("found");
        assert_eq!(p.line, 2);
        assert_eq!(
            p.deleted,
            vec![
                (3, "    endpoint: Option<String>,".to_string()),
                (4, "    /// Which.".to_string()),
                (5, "    #[arg(long)]".to_string()),
            ]
        );
        // The same shape without a placeholder is an ordinary edit.
        let after = "    /// Where.\n    // edited: keep this in sync\n    #[arg(long)]\n    query: Option2<String>,\n    /// How many.\n";
        assert_eq!(find(before, after), None);
    }

    #[test]
    fn a_placeholder_below_a_repeated_line_stands_for_the_copy_dropped_above_it() {
        // The diff drops the first `assert_eq!(` with the lines above and keeps the second,
        // right above the placeholder (found by the robustness bench).
        let before = "let server = start();\nassert_eq!(\n    server.post(evil),\n    403\n);\nassert_eq!(\n    server.post(null),\n";
        let after = "let server2 = start();\nassert_eq!(\n    // ... existing code ...\n    server.post(null),\n";
        let p = find(before, after).expect("found");
        assert_eq!(p.line, 3);
        let deleted: Vec<&str> = p.deleted.iter().map(|(_, t)| t.trim()).collect();
        assert!(deleted.contains(&"server.post(evil),"), "{deleted:?}");
        assert!(deleted.contains(&"403"), "{deleted:?}");
    }
}
