//! Where each line of a new text comes from: the old line it keeps, the old line it changes,
//! or nowhere. Both a fuzzy match's rebuild (which line takes which indentation) and a splice
//! (which line keeps which line ending) ask this, so they agree on what "the line it replaces"
//! means.

use similar::{capture_diff_slices, Algorithm, DiffOp};

/// What a new line stands for, by index into the old lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Equal to this old line.
    Kept(usize),
    /// Replaces this old line (the most similar one of a changed stretch).
    Changed(usize),
    /// Stands for no old line.
    Added,
}

impl Origin {
    /// The old line a new line stands for, if any.
    pub fn old(self) -> Option<usize> {
        match self {
            Origin::Kept(i) | Origin::Changed(i) => Some(i),
            Origin::Added => None,
        }
    }
}

/// Above this many line pairs in one changed stretch, its lines pair up in order instead of by
/// similarity: the similarity of every pair costs the product of the two counts.
const MAX_SIMILARITY_PAIRS: usize = 4_096;

/// The origin of every line of `new`, from a line diff against `old`. Inside a changed stretch
/// each old line is paired with the new line most like it (in order, at least half alike), so
/// an added line is not mistaken for the changed one next to it; a stretch of equal length
/// with no such likeness pairs line for line.
pub fn origins<S: AsRef<str> + Eq + std::hash::Hash>(old: &[S], new: &[S]) -> Vec<Origin> {
    let mut origin = vec![Origin::Added; new.len()];
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    origin[new_index + k] = Origin::Kept(old_index + k);
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                if old_len * new_len > MAX_SIMILARITY_PAIRS {
                    for k in 0..old_len.min(new_len) {
                        origin[new_index + k] = Origin::Changed(old_index + k);
                    }
                    continue;
                }
                let mut from = new_index;
                for (r, old_line) in old.iter().enumerate().skip(old_index).take(old_len) {
                    let best = (from..new_index + new_len)
                        .map(|k| {
                            let score =
                                strsim::normalized_levenshtein(old_line.as_ref(), new[k].as_ref());
                            (score, k)
                        })
                        .filter(|(score, _)| *score >= 0.5)
                        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
                    let pick = match best {
                        Some((_, k)) => Some(k),
                        None if old_len == new_len => Some(new_index + (r - old_index)),
                        None => None,
                    };
                    if let Some(k) = pick.filter(|&k| k >= from) {
                        origin[k] = Origin::Changed(r);
                        from = k + 1;
                    }
                }
            }
            _ => {}
        }
    }
    origin
}

#[cfg(test)]
mod tests {
    use super::{origins, Origin};

    #[test]
    fn an_added_line_beside_a_changed_one_is_added() {
        let old = ["let total = 0;", "return total;"];
        let new = ["// sum them", "let total = 1;", "return total;"];
        assert_eq!(
            origins(&old, &new),
            vec![Origin::Added, Origin::Changed(0), Origin::Kept(1)]
        );
    }

    #[test]
    fn unlike_lines_of_equal_count_pair_in_order() {
        assert_eq!(
            origins(&["a"], &["zzzz"]),
            vec![Origin::Changed(0)],
            "one line for one line is a change, however different"
        );
        assert_eq!(origins(&["a"], &["xyz", "qrs"]), vec![Origin::Added; 2]);
    }
}
