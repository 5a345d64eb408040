//! One changed line, merged three ways: the model's edit (its old line → its new line) applied
//! to the line as the file has it. The parts of the line the model kept are written with the
//! file's bytes — its `--` where the model's channel turned it into `—`, its `"` for `“` —
//! and only the text the model put in is the model's. Where the model's edit and its drift
//! from the file touch the same characters, there is no one right merge: the caller falls back
//! to the model's own line.

use std::collections::HashMap;

use similar::{capture_diff_slices, Algorithm, DiffOp};

use super::rungs::ascii_punctuation;

/// `file` with the edit `old` → `new` applied, all three without their indentation; `None`
/// when the edit and the file's difference from `old` overlap, or the file already reads as
/// `old`. `tidy` turns text the model inserted into the file's plain punctuation.
pub(super) fn merge_line(
    old: &str,
    file: &str,
    new: &str,
    tidy: &dyn Fn(&str) -> String,
) -> Option<String> {
    if old == file {
        return None;
    }
    let (o, f, n): (Vec<char>, Vec<char>, Vec<char>) = (
        old.chars().collect(),
        file.chars().collect(),
        new.chars().collect(),
    );
    let map = Boundaries::of(&o, &f);
    let learned = learned_punctuation(&o, &f);
    let mut out = String::with_capacity(file.len() + new.len());
    // The tiles of `file` the edit's steps stand for, in order; they must cover it exactly.
    let mut covered = 0;
    for op in capture_diff_slices(Algorithm::Myers, &o, &n) {
        let (a, b) = (op.old_range().start, op.old_range().end);
        let (from, to) = match op {
            DiffOp::Equal { .. } => (map.lo(a)?, map.hi(b)?),
            _ => (map.hi(a)?, map.lo(b)?),
        };
        if from != covered || to < from {
            return None;
        }
        covered = to;
        match op {
            DiffOp::Equal { .. } => out.extend(&f[from..to]),
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { .. } | DiffOp::Replace { .. } => {
                let put: String = n[op.new_range()].iter().collect();
                out.push_str(&tidy(&translate(&put, &learned)));
            }
        }
    }
    (covered == f.len()).then_some(out)
}

/// Where each position between `old`'s characters falls in `file`, from a character diff of
/// the two: defined at the edges of a differing stretch, not inside one.
struct Boundaries {
    /// Per position of `old` (0..=len): the first and last position in `file` it stands for
    /// (they differ where `file` has characters `old` lacks right there), or `None` inside a
    /// stretch where the two differ.
    at: Vec<Option<(usize, usize)>>,
}

impl Boundaries {
    fn of(old: &[char], file: &[char]) -> Boundaries {
        let mut at: Vec<Option<(usize, usize)>> = vec![None; old.len() + 1];
        let mut mark = |i: usize, j: usize| {
            at[i] = Some(match at[i] {
                Some((lo, hi)) => (lo.min(j), hi.max(j)),
                None => (j, j),
            });
        };
        for op in capture_diff_slices(Algorithm::Myers, old, file) {
            let (o, f) = (op.old_range(), op.new_range());
            match op {
                DiffOp::Equal { len, .. } => {
                    for k in 0..=len {
                        mark(o.start + k, f.start + k);
                    }
                }
                _ => {
                    mark(o.start, f.start);
                    mark(o.end, f.end);
                }
            }
        }
        Boundaries { at }
    }

    fn lo(&self, i: usize) -> Option<usize> {
        self.at.get(i).copied().flatten().map(|(lo, _)| lo)
    }

    fn hi(&self, i: usize) -> Option<usize> {
        self.at.get(i).copied().flatten().map(|(_, hi)| hi)
    }
}

/// What each smart punctuation character of `old` stands for in `file`, where the diff pairs
/// that one character with plain ASCII text (`—` with `--`); a character paired two ways is
/// left to the default.
fn learned_punctuation(old: &[char], file: &[char]) -> HashMap<char, String> {
    let mut seen: HashMap<char, Option<String>> = HashMap::new();
    for op in capture_diff_slices(Algorithm::Myers, old, file) {
        if let DiffOp::Replace { .. } = op {
            let (o, f) = (&old[op.old_range()], &file[op.new_range()]);
            let plain: String = f.iter().collect();
            if let [c] = o {
                let smart = ascii_punctuation(&c.to_string(), |_| true) != c.to_string();
                if smart && plain.is_ascii() && !plain.is_empty() {
                    let entry = seen.entry(*c).or_insert_with(|| Some(plain.clone()));
                    if entry.as_deref() != Some(plain.as_str()) {
                        *entry = None;
                    }
                }
            }
        }
    }
    seen.into_iter()
        .filter_map(|(c, s)| s.map(|s| (c, s)))
        .collect()
}

fn translate(text: &str, learned: &HashMap<char, String>) -> String {
    if learned.is_empty() {
        return text.to_string();
    }
    text.chars()
        .map(|c| learned.get(&c).cloned().unwrap_or_else(|| c.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::merge_line;

    fn plain(s: &str) -> String {
        super::ascii_punctuation(s, |_| true)
    }

    #[test]
    fn kept_text_is_the_files_and_put_text_the_models() {
        // The channel turned `--` into `—` and straight quotes into curly ones; the model
        // renamed one word.
        let got = merge_line(
            "/// Do it: `slmcode run “add a —verbose flag”`. Progress goes to",
            "/// Do it: `slmcode run \"add a --verbose flag\"`. Progress goes to",
            "/// Do it: `slmcode run “add a —verbose flag”`. Progress_v2 goes to",
            &plain,
        );
        assert_eq!(
            got.as_deref(),
            Some("/// Do it: `slmcode run \"add a --verbose flag\"`. Progress_v2 goes to")
        );
        // Text the model put in learns the file's spelling of its punctuation.
        let got = merge_line("a — b", "a -- b", "a — b — c", &plain);
        assert_eq!(got.as_deref(), Some("a -- b -- c"));
    }

    #[test]
    fn the_files_own_spacing_survives_an_edit_beside_it() {
        let got = merge_line(
            "total = compute(a,b)",
            "total = compute(a, b)",
            "total = compute(a,c)",
            &plain,
        );
        assert_eq!(got.as_deref(), Some("total = compute(a, c)"));
    }

    #[test]
    fn an_edit_over_the_drift_is_left_to_the_caller() {
        // The model changed the very characters it had wrong: no merge is the right one.
        assert_eq!(merge_line("x = “a”", "x = \"b\"", "x = “c”", &plain), None);
        // Nothing to merge when the file reads as old.
        assert_eq!(merge_line("a", "a", "b", &plain), None);
    }
}
