//! A unified hunk's replacement, built from the hunk's own account of its lines — context
//! kept as the file has it, removed lines gone, added lines where the hunk puts them — rather
//! than from a diff of its two sides, which can pair lines the hunk never meant to pair.

use super::indent::{self, cols, indent_unit, leading_ws, render_indent};
use super::reindent::{blank_line, Tidy};
use super::{split_lines, Lines, Replacement, Rung};

/// One line of a unified-diff hunk, by what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HunkLine<'a> {
    Context(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// The replacement for the region `edit` matched, built from a unified hunk's own account of
/// its lines rather than by diffing its two sides: context lines as the file has them, removed
/// lines gone, added lines where the hunk puts them.
///
/// Added lines are written as the model wrote them, unless every context and removed line is
/// off from the file by one same indentation offset — a uniform re-indent, which then moves
/// the added lines too (in the file's own tabs or spaces). A context line may match the file
/// either as written or with the ` ` it was parsed from put back, since a model that forgot a
/// line's prefix leaves its first indentation column to be read as one. Mixed offsets never
/// re-indent: a guess there lands code in the wrong column.
///
/// `None` when the region and the hunk do not pair up line for line (the caller then keeps the
/// ladder's own replacement).
pub fn rebuild_hunk(
    view: &str,
    edit: &Replacement,
    rung: Rung,
    body: &[HunkLine],
) -> Option<String> {
    let region = view.get(edit.range.clone())?;
    let ends_nl = region.ends_with('\n');
    let file = split_lines(region);
    let old: Vec<(&str, bool)> = body
        .iter()
        .filter_map(|l| match *l {
            HunkLine::Context(t) => Some((t, true)),
            HunkLine::Removed(t) => Some((t, false)),
            HunkLine::Added(_) => None,
        })
        .collect();
    let old_nb: Vec<(&str, bool)> = old
        .iter()
        .copied()
        .filter(|(t, _)| !blank_line(t))
        .collect();
    let file_nb: Vec<usize> = (0..file.len()).filter(|&i| !blank_line(file[i])).collect();
    if old_nb.len() != file_nb.len() || old_nb.is_empty() {
        return None;
    }

    let map = DepthMap::fit(
        &old_nb,
        &file_nb.iter().map(|&i| file[i]).collect::<Vec<_>>(),
    );
    let file_indent = indent_unit(&Lines::new(view));
    let copied: Vec<&str> = old.iter().map(|(t, _)| *t).collect();
    let tidy = Tidy::new(&copied, &file, rung);
    let added = |line: &str| -> String {
        if blank_line(line) {
            return String::new();
        }
        let body = tidy.apply(indent::body(line));
        match map.and_then(|m| m.apply(cols(line))) {
            Some(target) => format!("{}{body}", render_indent(target, file_indent)),
            None => format!("{}{body}", leading_ws(line)),
        }
    };

    let mut out: Vec<String> = Vec::new();
    let mut at = 0usize; // the next file line not yet placed
    let mut k = 0usize; // the next non-blank copied line
    let mut after_removed = false;
    for line in body {
        match *line {
            HunkLine::Added(t) => out.push(added(t)),
            HunkLine::Context(t) | HunkLine::Removed(t) if blank_line(t) => {
                // A blank copied line pairs with a blank file line still in this gap.
                let next_nb = file_nb.get(k).copied().unwrap_or(file.len());
                if at < next_nb && blank_line(file[at]) {
                    if matches!(line, HunkLine::Context(_)) {
                        out.push(file[at].to_string());
                    }
                    at += 1;
                }
            }
            HunkLine::Context(_) | HunkLine::Removed(_) => {
                let target = file_nb[k];
                let removed = matches!(line, HunkLine::Removed(_));
                // File blank lines the hunk did not mention stay — unless they border a line
                // it removes: they went with that line in the model's view of the file.
                if !(removed || after_removed) {
                    out.extend(file[at..target].iter().map(|l| l.to_string()));
                }
                if !removed {
                    out.push(file[target].to_string());
                }
                at = target + 1;
                k += 1;
                after_removed = removed;
            }
        }
    }
    out.extend(file[at.min(file.len())..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if ends_nl && !out.is_empty() {
        text.push('\n');
    }
    Some(text)
}

/// A unified hunk's indentation against the file: `file = model * num / den + offset` (in
/// columns, a tab counting four), fitted to every copied line, or none when they disagree.
/// A context line may be read with its lost ` ` prefix put back (one column more). Only
/// the scales a re-indent really has are tried: the same steps, or steps doubled or halved
/// (two-space text in a four-space file, and back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DepthMap {
    num: usize,
    den: usize,
    offset: isize,
    /// True when every copied line's indentation is the file's, character for character:
    /// added lines are then left exactly as written.
    identity: bool,
}

impl DepthMap {
    fn fit(copied: &[(&str, bool)], file: &[&str]) -> Option<DepthMap> {
        let identity = copied.iter().zip(file).all(|(&(t, context), f)| {
            leading_ws(f) == leading_ws(t)
                || (context && leading_ws(f) == format!(" {}", leading_ws(t)))
        });
        for (num, den) in [(1, 1), (2, 1), (1, 2)] {
            // The offsets each line allows under this scale; keep those all share.
            let mut shared: Option<Vec<isize>> = None;
            for (&(t, context), f) in copied.iter().zip(file) {
                let readings: &[usize] = if context { &[0, 1] } else { &[0] };
                let allowed: Vec<isize> = readings
                    .iter()
                    .filter_map(|extra| {
                        let scaled = (cols(t) + extra) * num;
                        scaled
                            .is_multiple_of(den)
                            .then(|| cols(f) as isize - (scaled / den) as isize)
                    })
                    .collect();
                shared = Some(match shared {
                    None => allowed,
                    Some(prev) => prev.into_iter().filter(|o| allowed.contains(o)).collect(),
                });
            }
            let shared = shared.unwrap_or_default();
            if let Some(&offset) = shared.iter().min_by_key(|o| (o.unsigned_abs(), **o < 0)) {
                return Some(DepthMap {
                    num,
                    den,
                    offset,
                    identity: identity && num == den && shared.contains(&0),
                });
            }
        }
        None
    }

    /// Where an added line of `model` columns goes, or `None` to leave it as written.
    fn apply(self, model: usize) -> Option<usize> {
        if self.identity {
            return None;
        }
        let scaled = (model * self.num + self.den / 2) / self.den;
        Some((scaled as isize + self.offset).max(0) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{run, Ladder, Query};
    use super::{rebuild_hunk, HunkLine};

    /// The region a hunk's old side matched, rebuilt from its lines.
    fn hunk(view: &str, old: &str, rung_old: &str, body: &[HunkLine]) -> String {
        let query = Query {
            old: rung_old,
            new: "",
            first_line_in: None,
            whole_lines: true,
            replace_all: false,
        };
        let Ladder::Landed { rung, edits } = run(view, &query) else {
            panic!("{old} did not land");
        };
        let text = rebuild_hunk(view, &edits[0], rung, body).expect("pairs up");
        let mut out = view.to_string();
        out.replace_range(edits[0].range.clone(), &text);
        out
    }

    #[test]
    fn hunk_lines_are_added_as_written_unless_the_hunk_moved_as_one() {
        use HunkLine::{Added, Context, Removed};
        let file =
            "class A:\n    def f(self):\n        y = 1\n        if y:\n            return y\n";
        // A context line that lost its prefix reads one column short: the added line is not
        // moved for it.
        let out = hunk(
            file,
            "",
            "        y = 1\n       if y:\n            return y\n",
            &[
                Context("        y = 1"),
                Context("       if y:"),
                Added("            print(y)"),
                Context("            return y"),
            ],
        );
        assert_eq!(
            out,
            "class A:\n    def f(self):\n        y = 1\n        if y:\n            print(y)\n            return y\n"
        );
        // The whole hunk four columns short: the added line moves with it.
        let out = hunk(
            file,
            "",
            "    y = 1\n    if y:\n",
            &[
                Context("    y = 1"),
                Removed("    if y:"),
                Added("    if y > 0:"),
            ],
        );
        assert_eq!(
            out,
            "class A:\n    def f(self):\n        y = 1\n        if y > 0:\n            return y\n"
        );
        // Mixed offsets: nothing is guessed, the added line stays as written.
        let out = hunk(
            file,
            "",
            "  def f(self):\n        y = 1\n",
            &[
                Context("  def f(self):"),
                Context("        y = 1"),
                Added("      z = 2"),
            ],
        );
        assert!(out.contains("\n      z = 2\n"), "{out}");
        // Two-space text in a four-space file: steps doubled.
        let out = hunk(
            file,
            "",
            "  def f(self):\n    y = 1\n",
            &[
                Context("  def f(self):"),
                Context("    y = 1"),
                Added("    z = 2"),
            ],
        );
        assert!(out.contains("        y = 1\n        z = 2\n"), "{out}");
    }
}
