//! Building one case: a unique span of a real file, the edit a model means to make, the exact
//! file that edit should produce, and what a drifting model actually sends.

use serde_json::{json, Value};

use crate::rng::Rng;
use crate::sources::SourceFile;

mod edits;

use edits::*;

/// The tool a case drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tool {
    Edit,
    Patch,
    Write,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Edit => "ws_edit",
            Tool::Patch => "ws_patch",
            Tool::Write => "ws_write",
        }
    }
}

/// How what the model sends differs from what it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drift {
    None,
    TrailingWs,
    Dedented,
    OverIndented,
    TabsForSpaces,
    SpacesForTabs,
    BlankDropped,
    BlankAdded,
    Gutter,
    MiddleLineOld,
    MiddleLineBoth,
    CrlfFile,
    Unicode,
    EscapedNewlines,
    PatchNone,
    PatchOffset,
    PatchFenced,
    PatchSearchReplace,
    MiddleLineUnique,
    EscapedInStrings,
    GutterNewOnly,
    PlaceholderEdit,
    PatchUnprefixedSpaces,
    PatchUnprefixedTabs,
    PatchRenamedHeader,
    PlaceholderPatch,
    PlaceholderWrite,
    TrailingExtend,
    MixedEndings,
    PatchMixedEndings,
    NbspIndent,
    BomOld,
    EscapedQuotes,
    NumbersTab,
    NumbersColon,
    LossyChannel,
    PatchAdjacentHunks,
}

pub const ALL: &[Drift] = &[
    Drift::None,
    Drift::TrailingWs,
    Drift::Dedented,
    Drift::OverIndented,
    Drift::TabsForSpaces,
    Drift::SpacesForTabs,
    Drift::BlankDropped,
    Drift::BlankAdded,
    Drift::Gutter,
    Drift::GutterNewOnly,
    Drift::MiddleLineOld,
    Drift::MiddleLineBoth,
    Drift::MiddleLineUnique,
    Drift::CrlfFile,
    Drift::Unicode,
    Drift::EscapedNewlines,
    Drift::EscapedInStrings,
    Drift::PlaceholderEdit,
    Drift::PatchNone,
    Drift::PatchOffset,
    Drift::PatchFenced,
    Drift::PatchSearchReplace,
    Drift::PatchUnprefixedSpaces,
    Drift::PatchUnprefixedTabs,
    Drift::PatchRenamedHeader,
    Drift::PlaceholderPatch,
    Drift::PlaceholderWrite,
    Drift::TrailingExtend,
    Drift::MixedEndings,
    Drift::NbspIndent,
    Drift::BomOld,
    Drift::EscapedQuotes,
    Drift::NumbersTab,
    Drift::NumbersColon,
    Drift::LossyChannel,
    Drift::PatchMixedEndings,
    Drift::PatchAdjacentHunks,
];

impl Drift {
    pub fn tool(self) -> Tool {
        match self {
            Drift::PatchNone
            | Drift::PatchOffset
            | Drift::PatchFenced
            | Drift::PatchSearchReplace
            | Drift::PatchUnprefixedSpaces
            | Drift::PatchUnprefixedTabs
            | Drift::PatchRenamedHeader
            | Drift::PlaceholderPatch
            | Drift::PatchMixedEndings
            | Drift::PatchAdjacentHunks => Tool::Patch,
            Drift::PlaceholderWrite => Tool::Write,
            _ => Tool::Edit,
        }
    }

    /// Whether what the model meant can be told from what it sent. For the others a refusal
    /// is the right answer: a placeholder stands for lines the call does not contain, and a
    /// middle line misremembered between anchors that repeat (or are `}`) fits several places.
    pub fn recoverable(self) -> bool {
        !matches!(
            self,
            Drift::MiddleLineOld
                | Drift::MiddleLineBoth
                | Drift::PlaceholderEdit
                | Drift::PlaceholderPatch
                | Drift::PlaceholderWrite
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Drift::None => "none (exact)",
            Drift::TrailingWs => "trailing whitespace added",
            Drift::Dedented => "indent: dedented",
            Drift::OverIndented => "indent: over-indented",
            Drift::TabsForSpaces => "indent: tabs for spaces",
            Drift::SpacesForTabs => "indent: spaces for tabs*",
            Drift::BlankDropped => "blank line dropped",
            Drift::BlankAdded => "blank line added",
            Drift::Gutter => "ws_read gutter pasted",
            Drift::MiddleLineOld => "middle line wrong: old only",
            Drift::MiddleLineBoth => "middle line wrong: old+new",
            Drift::CrlfFile => "CRLF file, LF old/new",
            Drift::Unicode => "smart quotes/dashes",
            Drift::EscapedNewlines => "literal \\n escapes",
            Drift::PatchNone => "none (unified diff)",
            Drift::PatchOffset => "@@ numbers off by 1-15",
            Drift::PatchFenced => "```diff fence + prose",
            Drift::PatchSearchReplace => "SEARCH/REPLACE block",
            Drift::MiddleLineUnique => "middle line wrong, ends unique",
            Drift::EscapedInStrings => "literal \\n, \\n in strings",
            Drift::GutterNewOnly => "gutter in new_str only",
            Drift::PlaceholderEdit => "placeholder in new_str",
            Drift::PatchUnprefixedSpaces => "context w/o prefix, spaces",
            Drift::PatchUnprefixedTabs => "context w/o prefix, tabs*",
            Drift::PatchRenamedHeader => "headers name it otherwise",
            Drift::PlaceholderPatch => "placeholder in + lines",
            Drift::PlaceholderWrite => "placeholder in content",
            Drift::TrailingExtend => "trailing ws, line extended",
            Drift::MixedEndings => "mixed CRLF/LF file",
            Drift::PatchMixedEndings => "mixed CRLF/LF file",
            Drift::NbspIndent => "indent: NBSP in old only",
            Drift::BomOld => "BOM before old_str",
            Drift::EscapedQuotes => "every \" sent as \\\"",
            Drift::NumbersTab => "numbers: cat -n, nl, 12→",
            Drift::NumbersColon => "numbers: L12:, %4d:, 12:",
            Drift::LossyChannel => "zero-width, full-width",
            Drift::PatchAdjacentHunks => "adjacent hunks, diff -u",
        }
    }

    /// Needs a span of at least five lines.
    fn long_span(self) -> bool {
        matches!(
            self,
            Drift::MiddleLineOld
                | Drift::MiddleLineBoth
                | Drift::PlaceholderEdit
                | Drift::PlaceholderPatch
                | Drift::PlaceholderWrite
        )
    }
}

/// One prepared run.
pub struct Case {
    pub drift: Drift,
    /// Source label of the file.
    pub file: String,
    /// File name inside the temporary workspace.
    pub name: String,
    /// 1-based first line and line count of the span.
    pub first_line: usize,
    pub span_lines: usize,
    pub original: Vec<u8>,
    pub expected: Vec<u8>,
    pub args: Value,
    /// What the model sent (old_str, or the patch), for reports.
    pub sent: String,
    /// The ws_read window the model looked at: offset, limit.
    pub read: (usize, usize),
    /// For the gutter drift: the lines the ws_read output must contain verbatim.
    pub gutter_lines: Vec<String>,
    /// One line saying what the intended edit was.
    pub intent: String,
}

/// Whether a span suits `drift`, with the line a misremembering drift alters; `None` when
/// the span does not fit.
fn fits(
    drift: Drift,
    span: &[&str],
    text: &str,
    old_text: &str,
    rng: &mut Rng,
) -> Option<Option<usize>> {
    let n = span.len();
    let mut middle = None;
    let fits = match drift {
        Drift::Dedented => span
            .iter()
            .filter(|l| !is_blank(l))
            .all(|l| !leading_ws(l).is_empty()),
        Drift::TabsForSpaces => {
            span.iter().any(|l| l.starts_with(' ') && !is_blank(l))
                && !span.iter().any(|l| l.starts_with('\t'))
        }
        Drift::SpacesForTabs => span.iter().any(|l| l.starts_with('\t') && !is_blank(l)),
        Drift::BlankDropped => (1..n - 1).any(|i| is_blank(span[i])),
        Drift::BlankAdded => (0..n - 1).any(|i| !is_blank(span[i]) && !is_blank(span[i + 1])),
        Drift::MiddleLineOld | Drift::MiddleLineBoth => {
            let eligible: Vec<usize> = (1..n - 1)
                .filter(|&i| !is_blank(span[i]) && !identifiers(span[i]).is_empty())
                .collect();
            if !eligible.is_empty() {
                middle = Some(*rng.pick(&eligible));
            }
            middle.is_some()
        }
        Drift::Unicode => smarten(old_text) != old_text,
        Drift::MiddleLineUnique => {
            let (first, last) = (span[0].trim(), span[n - 1].trim());
            let once = |want: &str| text.lines().filter(|l| l.trim() == want).count() == 1;
            let eligible: Vec<usize> = (1..n - 1)
                .filter(|&i| !is_blank(span[i]) && !identifiers(span[i]).is_empty())
                .collect();
            if !eligible.is_empty() {
                middle = Some(*rng.pick(&eligible));
            }
            !is_blank(first)
                && !is_blank(last)
                && !trivial(first)
                && !trivial(last)
                && once(first)
                && once(last)
                && middle.is_some()
        }
        Drift::EscapedInStrings => span.iter().any(|l| l.contains("\\n")),
        Drift::PatchUnprefixedSpaces => span.iter().any(|l| l.starts_with(' ') && !is_blank(l)),
        Drift::PatchUnprefixedTabs => span.iter().any(|l| l.starts_with('\t')),
        Drift::TrailingExtend => span
            .iter()
            .any(|l| !is_blank(l) && l.trim_end() == *l && !identifiers(l).is_empty()),
        Drift::NbspIndent => {
            span.iter().any(|l| l.starts_with(' ') && !is_blank(l))
                && !span.iter().any(|l| l.starts_with('\t'))
        }
        Drift::BomOld => !is_blank(span[0]),
        Drift::EscapedQuotes => old_text.contains('"'),
        Drift::LossyChannel => old_text.chars().any(|c| FULL_WIDTH.contains(&c)),
        Drift::PatchAdjacentHunks => !adjacent_pairs(span).is_empty(),
        _ => true,
    };
    fits.then_some(middle)
}

/// Tries to build one case of `drift` from `file`.
pub fn build(drift: Drift, file: &SourceFile, rng: &mut Rng) -> Option<Case> {
    // The spaces-for-tabs drift needs a tab-indented file; use the file itself when it is one.
    let text: String = if matches!(drift, Drift::SpacesForTabs | Drift::PatchUnprefixedTabs) {
        let tabbed = file.text.lines().filter(|l| l.starts_with('\t')).count();
        let spaced = file.text.lines().filter(|l| l.starts_with(' ')).count();
        if tabbed > spaced {
            file.text.clone()
        } else {
            tabify(&file.text)
        }
    } else {
        file.text.clone()
    };
    let file_tabbed = text.lines().filter(|l| l.starts_with('\t')).count()
        > text.lines().filter(|l| l.starts_with(' ')).count();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let comment = file.lang.comment(&file.name);

    for _attempt in 0..40 {
        let n = if drift.long_span() {
            rng.range(5, 8)
        } else if drift == Drift::MiddleLineUnique {
            rng.range(4, 5)
        } else {
            rng.range(3, 8)
        };
        if lines.len() < n + 2 {
            return None;
        }
        let start = rng.below(lines.len() - n + 1);
        let raw = &lines[start..start + n];
        if !raw.iter().all(|l| l.ends_with('\n')) || raw.iter().any(|l| l.len() > 240) {
            continue;
        }
        if raw
            .iter()
            .filter(|l| l.chars().any(char::is_alphanumeric))
            .count()
            < 2
        {
            continue;
        }
        let old_text: String = raw.concat();
        if occurrences(&text, &old_text, 2) != 1
            || occurrences(&text, &old_text[..old_text.len() - 1], 2) != 1
        {
            continue;
        }
        let span: Vec<&str> = raw.iter().map(|l| &l[..l.len() - 1]).collect();

        // Kind-specific requirements, and the line a misremembering drift alters.
        let Some(middle) = fits(drift, &span, &text, &old_text, rng) else {
            continue;
        };

        let intended = match drift {
            Drift::TrailingExtend => extend_a_line(&span, comment, rng),
            Drift::PatchAdjacentHunks => rename_two_near(&span, rng),
            _ => intend(&span, comment, rng, middle),
        };
        let Some(intended) = intended else {
            continue;
        };
        let new_text = join_lines(&intended.lines);
        let at = lines[..start].iter().map(|l| l.len()).sum::<usize>();
        let expected_text = format!(
            "{}{}{}",
            &text[..at],
            new_text,
            &text[at + old_text.len()..]
        );
        let mut original = text.clone().into_bytes();
        let mut expected = expected_text.into_bytes();
        let first_line = start + 1;
        let mut gutter_lines = Vec::new();
        let mut intent = intended.summary.clone();

        // What the model sends.
        let (old, new): (String, String) = match drift {
            Drift::None | Drift::CrlfFile => (old_text.clone(), new_text.clone()),
            Drift::TrailingWs => (add_trailing(&old_text, rng), add_trailing(&new_text, rng)),
            Drift::Dedented => {
                let base = span
                    .iter()
                    .filter(|l| !is_blank(l))
                    .map(|l| leading_ws(l).len())
                    .min()
                    .unwrap_or(0);
                let dedent = |t: &str| {
                    join_lines(
                        &lines_of(t)
                            .iter()
                            .map(|l| {
                                if is_blank(l) {
                                    String::new()
                                } else {
                                    l[base.min(leading_ws(l).len())..].to_string()
                                }
                            })
                            .collect::<Vec<_>>(),
                    )
                };
                (dedent(&old_text), dedent(&new_text))
            }
            Drift::OverIndented => {
                let unit = if file_tabbed { "\t" } else { "    " };
                let indent = |t: &str| {
                    join_lines(
                        &lines_of(t)
                            .iter()
                            .map(|l| {
                                if is_blank(l) {
                                    l.clone()
                                } else {
                                    format!("{unit}{l}")
                                }
                            })
                            .collect::<Vec<_>>(),
                    )
                };
                (indent(&old_text), indent(&new_text))
            }
            Drift::TabsForSpaces => {
                let unit = space_unit(&text);
                let conv = |t: &str| {
                    join_lines(
                        &lines_of(t)
                            .iter()
                            .map(|l| spaces_to_tabs(l, unit))
                            .collect::<Vec<_>>(),
                    )
                };
                (conv(&old_text), conv(&new_text))
            }
            Drift::SpacesForTabs => {
                let conv = |t: &str| {
                    join_lines(
                        &lines_of(t)
                            .iter()
                            .map(|l| tabs_to_spaces(l))
                            .collect::<Vec<_>>(),
                    )
                };
                (conv(&old_text), conv(&new_text))
            }
            Drift::BlankDropped => {
                let cands: Vec<usize> = (1..n - 1).filter(|&i| is_blank(span[i])).collect();
                let b = *rng.pick(&cands);
                let kept: Vec<&str> = (0..n).filter(|&i| i != b).map(|i| span[i]).collect();
                (join_lines(&kept), new_text.clone())
            }
            Drift::BlankAdded => {
                let cands: Vec<usize> = (0..n - 1)
                    .filter(|&i| !is_blank(span[i]) && !is_blank(span[i + 1]))
                    .collect();
                let i = *rng.pick(&cands);
                let mut with: Vec<&str> = span.clone();
                with.insert(i + 1, "");
                (join_lines(&with), new_text.clone())
            }
            Drift::Gutter => {
                gutter_lines = span
                    .iter()
                    .enumerate()
                    .map(|(k, l)| format!("{:6}|{}", first_line + k, l))
                    .collect();
                (join_lines(&gutter_lines), new_text.clone())
            }
            Drift::MiddleLineOld | Drift::MiddleLineBoth | Drift::MiddleLineUnique => {
                let m = middle.expect("chosen above");
                let Some(altered) = misremember(span[m], rng) else {
                    continue;
                };
                let mut old_lines: Vec<&str> = span.clone();
                old_lines[m] = &altered;
                let old = join_lines(&old_lines);
                let new = if drift == Drift::MiddleLineBoth {
                    // The model re-emits the unchanged line from memory in new_str too.
                    let shift = usize::from(intended.inserted_after.is_some_and(|j| j < m));
                    let mut new_lines = intended.lines.clone();
                    debug_assert_eq!(new_lines[m + shift], span[m]);
                    new_lines[m + shift] = altered.clone();
                    join_lines(&new_lines)
                } else {
                    new_text.clone()
                };
                intent.push_str(&format!(
                    "; span line {} misremembered as {:?}",
                    m + 1,
                    altered.trim()
                ));
                (old, new)
            }
            Drift::Unicode => (smarten(&old_text), smarten(&new_text)),
            Drift::TrailingExtend => {
                // The model's copy has blanks at the ends of lines, the one it extends among
                // them; new_str echoes them and goes on past the extended one's.
                let extended = intended.changed.expect("extend_a_line marks its line");
                let ws: Vec<&str> = (0..n)
                    .map(|i| {
                        if i == extended {
                            "  "
                        } else {
                            *rng.pick(&["", "", " ", "\t", "   "])
                        }
                    })
                    .collect();
                let old: Vec<String> = (0..n).map(|i| format!("{}{}", span[i], ws[i])).collect();
                let new: Vec<String> = (0..n)
                    .map(|i| {
                        if i == extended {
                            intended.lines[i].clone()
                        } else {
                            format!("{}{}", intended.lines[i], ws[i])
                        }
                    })
                    .collect();
                (join_lines(&old), join_lines(&new))
            }
            Drift::NbspIndent => (nbsp_indent(&old_text), new_text.clone()),
            Drift::BomOld => (format!("\u{feff}{old_text}"), new_text.clone()),
            Drift::EscapedQuotes => {
                let esc = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
                (esc(&old_text), esc(&new_text))
            }
            Drift::NumbersTab | Drift::NumbersColon => {
                let styles: &[usize] = if drift == Drift::NumbersTab {
                    &[0, 1, 2]
                } else {
                    &[3, 4, 5]
                };
                let style = *rng.pick(styles);
                let numbered_before = lines[..start].iter().filter(|l| !is_blank(l)).count();
                let old = number_lines(&span, style, first_line, numbered_before + 1);
                intent.push_str(&format!("; old_str numbered {}", NUMBER_STYLES[style]));
                let new = if rng.chance(0.3) {
                    let lines: Vec<&str> = intended.lines.iter().map(String::as_str).collect();
                    number_lines(&lines, style, first_line, numbered_before + 1)
                } else {
                    new_text.clone()
                };
                (old, new)
            }
            Drift::LossyChannel => {
                let drift_text = |t: &str| channel_drift(t, &old_text);
                (drift_text(&old_text), drift_text(&new_text))
            }
            Drift::EscapedNewlines | Drift::EscapedInStrings => {
                let esc = |t: &str| t[..t.len() - 1].replace('\n', "\\n");
                (esc(&old_text), esc(&new_text))
            }
            Drift::GutterNewOnly => {
                let numbered: Vec<String> = intended
                    .lines
                    .iter()
                    .enumerate()
                    .map(|(k, l)| format!("{:6}|{}", first_line + k, l))
                    .collect();
                (old_text.clone(), join_lines(&numbered))
            }
            Drift::PlaceholderEdit | Drift::PlaceholderPatch | Drift::PlaceholderWrite => {
                let Some(stood_for) = placeholder_run(&span, &intended, &text, rng) else {
                    continue;
                };
                let (at, len) = stood_for;
                let indent = leading_ws(&intended.lines[at]).to_string();
                let mut lines = intended.lines.clone();
                lines.splice(
                    at..at + len,
                    [format!("{indent}{comment} ... existing code ...")],
                );
                intent.push_str(&format!(
                    "; {len} unchanged line(s) sent as a placeholder comment"
                ));
                (old_text.clone(), join_lines(&lines))
            }
            Drift::PatchNone
            | Drift::PatchOffset
            | Drift::PatchFenced
            | Drift::PatchSearchReplace
            | Drift::PatchUnprefixedSpaces
            | Drift::PatchUnprefixedTabs
            | Drift::PatchRenamedHeader
            | Drift::MixedEndings
            | Drift::PatchMixedEndings
            | Drift::PatchAdjacentHunks => (old_text.clone(), new_text.clone()),
        };

        // A drift that happens to change nothing is not a case of that drift.
        let drifted = matches!(
            drift,
            Drift::None
                | Drift::CrlfFile
                | Drift::GutterNewOnly
                | Drift::PlaceholderEdit
                | Drift::MixedEndings
        ) || drift.tool() != Tool::Edit;
        if !drifted && old == old_text {
            continue;
        }
        // Nor is one whose old_str is still, verbatim, somewhere in the file (dropping one of two
        // adjacent blank lines at the edge of the span does that): the model then asked for a
        // different exact edit, and no tool could tell.
        if !drifted
            && (text.contains(old.as_str())
                || text.contains(old.strip_suffix('\n').unwrap_or(&old)))
        {
            continue;
        }

        if matches!(drift, Drift::MixedEndings | Drift::PatchMixedEndings) {
            // Each line of the file ends in CRLF or LF at random; the edit keeps each line's
            // ending, and a line it adds ends as the line above it.
            let crlf: Vec<bool> = (0..lines.len()).map(|_| rng.chance(0.5)).collect();
            if crlf.iter().all(|c| *c) || !crlf.iter().any(|c| *c) {
                continue;
            }
            let end = |line: &str, cr: bool| match line.strip_suffix('\n') {
                Some(body) if cr => format!("{body}\r\n"),
                _ => line.to_string(),
            };
            original = lines
                .iter()
                .zip(&crlf)
                .map(|(l, c)| end(l, *c))
                .collect::<String>()
                .into_bytes();
            let mut out: String = (0..start).map(|i| end(lines[i], crlf[i])).collect();
            for (k, line) in intended.lines.iter().enumerate() {
                let from = match intended.inserted_after {
                    Some(j) if k == j + 1 => j,
                    Some(j) if k > j + 1 => k - 1,
                    _ => k,
                };
                out.push_str(&end(&format!("{line}\n"), crlf[start + from]));
            }
            for i in start + n..lines.len() {
                out.push_str(&end(lines[i], crlf[i]));
            }
            expected = out.into_bytes();
        }
        if drift == Drift::CrlfFile {
            original = text.replace('\n', "\r\n").into_bytes();
            expected = String::from_utf8(expected)
                .expect("utf-8")
                .replace('\n', "\r\n")
                .into_bytes();
        }

        let (args, sent) = match drift.tool() {
            Tool::Edit => {
                // Models leave the final newline off about half the time.
                let (old, new) = if drift != Drift::EscapedNewlines && rng.chance(0.5) {
                    (
                        old.strip_suffix('\n').unwrap_or(&old).to_string(),
                        new.strip_suffix('\n').unwrap_or(&new).to_string(),
                    )
                } else {
                    (old, new)
                };
                (
                    json!({"path": file.name, "old_str": old, "new_str": new}),
                    old,
                )
            }
            Tool::Patch => {
                let patch = match drift {
                    Drift::PatchNone | Drift::PlaceholderPatch | Drift::PatchMixedEndings => {
                        unified(&file.name, first_line, &old, &new)
                    }
                    Drift::PatchAdjacentHunks => {
                        let (a, b) = intended.pair.expect("rename_two_near marks its lines");
                        two_hunks(&file.name, first_line, &span, &intended.lines, a, b)
                    }
                    Drift::PatchUnprefixedSpaces | Drift::PatchUnprefixedTabs => {
                        let lead = if drift == Drift::PatchUnprefixedTabs { '\t' } else { ' ' };
                        let diff = unified(&file.name, first_line, &old, &new);
                        let mut lines: Vec<String> = diff.lines().map(str::to_string).collect();
                        let eligible: Vec<usize> = (3..lines.len())
                            .filter(|&i| {
                                lines[i].starts_with(' ') && lines[i][1..].starts_with(lead)
                            })
                            .collect();
                        if eligible.is_empty() {
                            continue;
                        }
                        let i = *rng.pick(&eligible);
                        lines[i].remove(0);
                        intent.push_str(&format!(
                            "; diff line {} lost its leading space",
                            i + 1
                        ));
                        join_lines(&lines)
                    }
                    Drift::PatchRenamedHeader => {
                        let diff = unified(&file.name, first_line, &old, &new);
                        diff.replacen(
                            &format!("--- a/{0}\n+++ b/{0}", file.name),
                            &format!("--- a/myrepo/{0}\n+++ b/myrepo/{0}", file.name),
                            1,
                        )
                    }
                    Drift::PatchOffset => {
                        let off = rng.range(1, 15);
                        let at = if first_line > off && rng.chance(0.5) {
                            first_line - off
                        } else {
                            first_line + off
                        };
                        intent.push_str(&format!("; @@ says line {at}, span is at {first_line}"));
                        unified(&file.name, at, &old, &new)
                    }
                    Drift::PatchFenced => format!(
                        "```diff\n{}```\nThis renames the identifier and keeps the caller in sync.\n",
                        unified(&file.name, first_line, &old, &new)
                    ),
                    _ => format!("<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"),
                };
                (json!({"path": file.name, "patch": patch}), patch)
            }
            Tool::Write => {
                let content = format!("{}{}{}", &text[..at], new, &text[at + old_text.len()..]);
                (json!({"path": file.name, "content": content}), new)
            }
        };

        let read_offset = first_line.saturating_sub(5).max(1);
        return Some(Case {
            drift,
            file: file.label.clone(),
            name: file.name.clone(),
            first_line,
            span_lines: n,
            original,
            expected,
            args,
            sent,
            read: (read_offset, n + 10),
            gutter_lines,
            intent,
        });
    }
    None
}
