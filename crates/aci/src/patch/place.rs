//! Placing a parsed patch's hunks in a file: each hunk is looked for with the match ladder,
//! first near its `@@` position (or inside the block its `@@ <code line>` anchor opens), then
//! anywhere it is unique; its replacement is rebuilt from its own line account and narrowed
//! to the lines it changes, so hunks that share context do not collide. It lives beside the
//! parser because it is the other half of reading a patch: what the parser's hunks mean in
//! this file — the tool only decides whether to write the result.

use std::ops::Range;

use super::{DiffLine, Hunk, Patch};
use crate::error::RefusalClass;
use crate::matching::{self, Ladder, Lines, Query, Rung};
use crate::outcome::HunkReport;

/// A numbered hunk is looked for within this many lines of its `@@` position.
pub const ANCHOR_WINDOW_LINES: usize = 20;

/// What applying every hunk produced: edits in original-view coordinates (sorted), and per
/// hunk where it landed or why it did not.
pub struct Placement {
    pub edits: Vec<(Range<usize>, String)>,
    pub reports: Vec<Result<Landed, Failure>>,
}

/// A hunk that landed: its report line and the same facts as data.
pub struct Landed {
    pub line: String,
    pub report: HunkReport,
}

/// A hunk that did not land: why, in words and as a class.
pub struct Failure {
    pub class: RefusalClass,
    pub line: String,
}

impl Failure {
    fn new(class: RefusalClass, why: String) -> Failure {
        Failure { class, line: why }
    }
}

/// Applies the hunks in order. Each is placed against the file as read first — as `diff -u`
/// writes every hunk, so a hunk's context may show lines an earlier hunk changes — and, when
/// that fails, against the file as the earlier hunks left it (blocks written one after the
/// other). What a landed hunk changes is kept as line-level changes of the original; hunks
/// that change the same lines differently are refused. Bytes no hunk changes — context lines
/// included — are never rewritten.
pub fn apply_hunks(original: &str, parsed: &Patch) -> Placement {
    // A last line without a newline is matched as if it had one (hunks are whole lines);
    // the missing newline stays missing.
    let virtual_newline = !original.is_empty() && !original.ends_with('\n');
    let base = if virtual_newline {
        format!("{original}\n")
    } else {
        original.to_string()
    };
    let base_lines = Lines::new(&base);
    let mut changes = Changes::default();
    let mut reports = Vec::new();
    // Line delta of the hunks applied so far, carried into later @@ positions when a hunk is
    // placed against the changed text.
    let mut delta: isize = 0;
    // Numbered hunks land in order: against the original not above where the previous one's
    // region starts, against the changed text not above its change.
    let (mut floor_original, mut floor_current) = (0usize, 0usize);
    for (i, hunk) in parsed.hunks.iter().enumerate() {
        let against_original = Site {
            current: &base,
            lines: &base_lines,
            original: &base,
            delta: 0,
            floor_line: floor_original,
        };
        // Against the file as read first; why it did not land there is what is reported,
        // unless the second try lands and only then collides.
        let why = match place(&against_original, hunk) {
            Ok(placed) => {
                let region = placed.range.clone();
                match changes.add(&base, &base_lines, region.clone(), &placed.text, i) {
                    Ok(()) => {
                        reports.push(Ok(landed_line(&base_lines, &placed, &region, hunk)));
                        if hunk.old_start.is_some() {
                            floor_original = base_lines.line_of(region.start);
                            floor_current = floor_original;
                        }
                        delta += placed.hunk.new.len() as isize - placed.hunk.old.len() as isize;
                        continue;
                    }
                    Err(with) => conflict_failure(with),
                }
            }
            Err(f) => Failure::new(f.class, format!("FAILED: {}", f.line)),
        };
        // Then against the text the earlier hunks produced.
        let why = match place_after_earlier(&base, &changes, hunk, delta, floor_current) {
            Some((placed, region, floor)) => {
                match changes.add(&base, &base_lines, region.clone(), &placed.text, i) {
                    Ok(()) => {
                        reports.push(Ok(landed_line(&base_lines, &placed, &region, hunk)));
                        if hunk.old_start.is_some() {
                            floor_current = floor;
                            floor_original = base_lines.line_of(region.start);
                        }
                        delta += placed.hunk.new.len() as isize - placed.hunk.old.len() as isize;
                        continue;
                    }
                    Err(with) => conflict_failure(with),
                }
            }
            None => why,
        };
        reports.push(Err(why));
    }
    let mut edits = changes.edits(&base_lines);
    if virtual_newline {
        let len = original.len();
        for (range, text) in &mut edits {
            if range.start > len {
                // An insertion after the last line.
                *range = len..len;
                *text = format!("\n{}", text.trim_end_matches('\n'));
            } else if range.end > len {
                range.end = len;
                if text.ends_with('\n') {
                    text.pop();
                }
            }
        }
    }
    Placement { edits, reports }
}

/// The report of a landed hunk: where its region is in the file as read, by which rung, and
/// how far that is from where its `@@` line said.
fn landed_line(base_lines: &Lines, placed: &Placed, region: &Range<usize>, hunk: &Hunk) -> Landed {
    let (mut line, first_line, last_line) = if placed.hunk.old.is_empty() {
        match region.start {
            0 => ("inserted at the top".to_string(), 0, 0),
            at => {
                let after = base_lines.line_of(at - 1) + 1;
                (format!("inserted after line {after}"), after, after)
            }
        }
    } else {
        let end = region.end.max(region.start + 1);
        let (first, last) = (
            base_lines.line_of(region.start) + 1,
            base_lines.line_of(end - 1) + 1,
        );
        (
            format!("anchored@{first}..{last} {}", placed.rung.label()),
            first,
            last,
        )
    };
    if let Some(note) = &placed.note {
        line.push(' ');
        line.push_str(note);
    }
    // Where the @@ numbers put it (in the file as read), against where it landed.
    let offset = hunk.old_start.map(|n| {
        let said = if placed.hunk.old.is_empty() {
            n
        } else {
            n.max(1)
        };
        first_line as isize - said as isize
    });
    Landed {
        line,
        report: HunkReport {
            rung: placed.rung,
            first_line,
            last_line,
            offset,
        },
    }
}

/// A hunk placed against the text the earlier hunks produced: the placement, its region in
/// the original (only the lines it changes, which must be lines no earlier hunk wrote), and
/// the floor for the next numbered hunk. `None` when it does not land there either, or only
/// by changing what an earlier hunk wrote.
fn place_after_earlier(
    base: &str,
    changes: &Changes,
    hunk: &Hunk,
    delta: isize,
    floor_line: usize,
) -> Option<(Placed, Range<usize>, usize)> {
    if changes.is_empty() {
        return None;
    }
    let edits = changes.edits(&Lines::new(base));
    let current = render(base, &edits);
    let lines = Lines::new(&current);
    let site = Site {
        current: &current,
        lines: &lines,
        original: base,
        delta,
        floor_line,
    };
    let mut placed = place(&site, hunk).ok()?;
    let (range, text) = narrow(&current, &placed);
    let orig = to_original(&edits, &range)?;
    let floor = if hunk.old_start.is_some() {
        lines.line_of(range.start)
    } else {
        floor_line
    };
    placed.text = text;
    Some((placed, orig, floor))
}

fn conflict_failure(with: Option<usize>) -> Failure {
    let why = match with {
        Some(earlier) => format!(
            "FAILED: it changes lines that hunk {} also changes, differently; merge the two into one hunk",
            earlier + 1
        ),
        None => "FAILED: it changes lines an earlier hunk already changed; merge the two into one hunk"
            .to_string(),
    };
    Failure::new(RefusalClass::Args, why)
}

/// What the landed hunks change, as line-level changes of the original: each removes whole
/// lines `start..end` (none for an insertion) and puts `text` there. Sorted, disjoint.
#[derive(Default)]
struct Changes {
    list: Vec<Change>,
}

#[derive(Clone, PartialEq, Eq)]
struct Change {
    start: usize,
    end: usize,
    text: String,
    /// The hunk it came from.
    hunk: usize,
}

impl Changes {
    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Adds what replacing the original's whole-line `region` with `text` changes, line by
    /// line. A change another hunk already made the same way is taken once; one that overlaps
    /// another hunk's change differently is refused (`Err(Some(that hunk))`), and then nothing
    /// of this hunk is added.
    fn add(
        &mut self,
        base: &str,
        lines: &Lines,
        region: Range<usize>,
        text: &str,
        hunk: usize,
    ) -> Result<(), Option<usize>> {
        let first = lines.line_of(region.start);
        let first = if region.start == lines.start(first) {
            first
        } else {
            first + 1
        };
        let old: Vec<&str> = base[region.clone()].split_inclusive('\n').collect();
        let new: Vec<&str> = text.split_inclusive('\n').collect();
        let mut found = Vec::new();
        for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
            let (o, n) = (op.old_range(), op.new_range());
            if matches!(op, similar::DiffOp::Equal { .. }) {
                continue;
            }
            found.push(Change {
                start: first + o.start,
                end: first + o.end,
                text: new[n].concat(),
                hunk,
            });
        }
        let mut merged = self.list.clone();
        for change in found {
            if merged.iter().any(|c| c.same_as(&change)) {
                continue;
            }
            if let Some(c) = merged.iter().find(|c| c.overlaps(&change)) {
                return Err(Some(c.hunk));
            }
            let at = merged.partition_point(|c| c.before(&change));
            merged.insert(at, change);
        }
        self.list = merged;
        Ok(())
    }

    /// The changes as byte edits of the original (sorted, non-overlapping).
    fn edits(&self, lines: &Lines) -> Vec<(Range<usize>, String)> {
        self.list
            .iter()
            .map(|c| (lines.start(c.start)..lines.start(c.end), c.text.clone()))
            .collect()
    }
}

impl Change {
    fn same_as(&self, other: &Change) -> bool {
        (self.start, self.end, &self.text) == (other.start, other.end, &other.text)
    }

    /// Two changes overlap when they remove a line in common, when one inserts strictly
    /// inside the other's removed lines, or when both insert at the same place (their order
    /// is then anyone's guess).
    fn overlaps(&self, other: &Change) -> bool {
        let inside = |p: usize, c: &Change| c.start < p && p < c.end;
        match (self.start == self.end, other.start == other.end) {
            (false, false) => self.start < other.end && other.start < self.end,
            (true, false) => inside(self.start, other),
            (false, true) => inside(other.start, self),
            (true, true) => self.start == other.start,
        }
    }

    /// Whether this change goes before `other` in the file (an insertion at a removal's first
    /// line goes before it).
    fn before(&self, other: &Change) -> bool {
        (self.start, self.end) < (other.start, other.end)
            || (self.start == other.start && self.end == self.start)
    }
}

struct Placed {
    /// The matched region of the current text and its full replacement.
    range: Range<usize>,
    text: String,
    rung: Rung,
    note: Option<String>,
    /// The hunk as it was placed (without soft leading lines, if those had to go).
    hunk: Hunk,
}

/// The text a hunk is placed into, and what the hunks before it did.
struct Site<'a> {
    /// The text with the earlier hunks applied.
    current: &'a str,
    lines: &'a Lines<'a>,
    /// The file as read, for line numbers in failure messages.
    original: &'a str,
    /// Line delta of the earlier hunks, carried into this hunk's @@ position.
    delta: isize,
    /// Numbered hunks may not land above this line (the previous hunk's change).
    floor_line: usize,
}

/// Finds where one hunk goes in the current text; a hunk whose unprefixed leading lines may
/// be prose is tried again without them.
fn place(site: &Site, hunk: &Hunk) -> Result<Placed, Failure> {
    match place_one(site, hunk) {
        Err(why) => match hunk.without_soft_lead() {
            Some(trimmed) => place_one(site, &trimmed).map_err(|_| why),
            None => Err(why),
        },
        ok => ok,
    }
}

fn place_one(site: &Site, hunk: &Hunk) -> Result<Placed, Failure> {
    let Site {
        current,
        lines,
        original,
        delta,
        floor_line,
    } = *site;
    let new_text = join(&hunk.new);
    let expected = hunk
        .old_start
        .map(|n| ((n as isize - 1) + delta).max(0) as usize);
    if hunk.old.is_empty() {
        return insertion(lines, hunk, expected, new_text);
    }
    let old_text = join(&hunk.old);
    let query = |window: Option<Range<usize>>| Query {
        old: &old_text,
        new: &new_text,
        first_line_in: window,
        whole_lines: true,
        replace_all: false,
    };
    // A unified hunk says which lines stay, go and come: its replacement is built from that
    // (added lines as written unless the whole hunk was uniformly re-indented), not from a diff
    // of its two sides. SEARCH/REPLACE blocks only have the two sides.
    let body: Vec<matching::HunkLine> = hunk
        .body
        .iter()
        .map(|l| match l {
            DiffLine::Context(t) => matching::HunkLine::Context(t),
            DiffLine::Removed(t) => matching::HunkLine::Removed(t),
            DiffLine::Added(t) => matching::HunkLine::Added(t),
        })
        .collect();
    let placed = |rung: Rung, mut edits: Vec<matching::Replacement>, note: Option<String>| {
        let e = edits.remove(0);
        let text = if body.is_empty() {
            None
        } else {
            matching::rebuild_hunk(current, &e, rung, &body)
        };
        Placed {
            text: text.unwrap_or(e.text),
            range: e.range,
            rung,
            note,
            hunk: hunk.clone(),
        }
    };
    let ambiguous = |rung: Rung, count: usize, lines: &[usize]| {
        Failure::new(RefusalClass::Ambiguous { count }, format!(
            "its context matches {count} places (lines {}) under the {} match; add more context lines so it matches once",
            lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
            rung.label()
        ))
    };
    let not_found = |header: Option<usize>| {
        Failure::new(
            RefusalClass::NotFound,
            not_found(original, &old_text, header),
        )
    };

    if let (Some(exp), Some(header)) = (expected, hunk.old_start) {
        let lo = exp.saturating_sub(ANCHOR_WINDOW_LINES).max(floor_line);
        let hi = exp + ANCHOR_WINDOW_LINES + 1;
        match matching::run(current, &query(Some(lo..hi))) {
            Ladder::Landed { rung, edits } => return Ok(placed(rung, edits, None)),
            Ladder::Ambiguous { rung, count, lines } => return Err(ambiguous(rung, count, &lines)),
            Ladder::NotFound => {}
        }
        // Beyond the spec: context unique anywhere else in the file still lands, with a note.
        return match matching::run(current, &query(Some(floor_line..usize::MAX))) {
            Ladder::Landed { rung, edits } => {
                let first = edits[0].first_line;
                let offset = first as isize - exp as isize;
                let note = format!(
                    "[landed {} lines {} its @@ position: its context is unique in the file]",
                    offset.unsigned_abs(),
                    if offset > 0 { "below" } else { "above" }
                );
                Ok(placed(rung, edits, Some(note)))
            }
            Ladder::Ambiguous { count, lines, .. } => Err(Failure::new(RefusalClass::Ambiguous { count }, format!(
                "its context was not found within ±{ANCHOR_WINDOW_LINES} lines of line {header} and matches {count} places elsewhere (lines {}); fix the @@ line numbers or add context",
                lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ))),
            Ladder::NotFound => Err(not_found(Some(header))),
        };
    }
    // An `@@ <code line>` header: look inside the block that line opens.
    let block = hunk
        .anchor
        .as_deref()
        .and_then(|a| anchor_line(lines, a))
        .map(|a| a..block_end(lines, a));
    if let Some(window) = &block {
        match matching::run(current, &query(Some(window.clone()))) {
            Ladder::Landed { rung, edits } => return Ok(placed(rung, edits, None)),
            Ladder::Ambiguous { rung, count, lines } => return Err(ambiguous(rung, count, &lines)),
            Ladder::NotFound => {}
        }
    }
    match matching::run(current, &query(None)) {
        Ladder::Landed { rung, edits } => Ok(placed(rung, edits, None)),
        Ladder::Ambiguous { rung, count, lines } => Err(ambiguous(rung, count, &lines)),
        Ladder::NotFound => Err(not_found(None)),
    }
}

/// A hunk with no old lines inserts after line N (N = 0: the top).
fn insertion(
    lines: &Lines,
    hunk: &Hunk,
    expected: Option<usize>,
    text: String,
) -> Result<Placed, Failure> {
    // `@@ -N,0` means "after line N", so the insertion point is line index N (+ delta).
    let at_line = match (hunk.old_start, expected, &hunk.anchor) {
        (Some(0), _, _) => 0,
        (Some(_), Some(exp), _) => exp + 1,
        (None, _, Some(anchor)) => anchor_line(lines, anchor)
            .map(|a| a + 1)
            .ok_or_else(|| Failure::new(RefusalClass::NotFound, format!("it only adds lines, and its anchor line \"{anchor}\" was not found exactly once; include 2–3 unchanged lines around the new ones")))?,
        _ => {
            return Err(Failure::new(
                RefusalClass::Args,
                "it only adds lines and has no line numbers or context, so there is no telling where they go; include 2–3 unchanged lines around the new ones".to_string(),
            ))
        }
    };
    if at_line > lines.len() {
        return Err(Failure::new(
            RefusalClass::NotFound,
            format!(
                "it inserts after line {}, but the file has {} lines",
                at_line,
                lines.len()
            ),
        ));
    }
    let pos = lines.start(at_line);
    Ok(Placed {
        range: pos..pos,
        text,
        rung: Rung::Exact,
        note: None,
        hunk: hunk.clone(),
    })
}

/// The one line equal (trimmed) to an `@@ <code line>` anchor, if exactly one.
fn anchor_line(lines: &Lines, anchor: &str) -> Option<usize> {
    let want = anchor.trim();
    let mut hits = (0..lines.len()).filter(|&i| lines.line(i).trim() == want);
    match (hits.next(), hits.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

/// The end (exclusive) of the block an anchor line opens: up to and including the next
/// non-blank line indented no deeper than the anchor (a closing brace, or the next def).
fn block_end(lines: &Lines, anchor: usize) -> usize {
    let depth = |l: &str| l.len() - l.trim_start().len();
    let base = depth(lines.line(anchor));
    (anchor + 1..lines.len())
        .find(|&i| {
            let l = lines.line(i);
            !l.trim().is_empty() && depth(l) <= base
        })
        .map_or(lines.len(), |i| i + 1)
}

/// Narrows a placed hunk to the lines it changes. The ladder already wrote the hunk's context
/// lines as the file has them; here the unchanged lines at either end are left out of the
/// edit, so neighbouring hunks that share a context line do not collide.
fn narrow(current: &str, placed: &Placed) -> (Range<usize>, String) {
    if placed.range.is_empty() {
        return (placed.range.clone(), placed.text.clone());
    }
    let region = &current[placed.range.clone()];
    let text = &placed.text;
    // Drop whole lines both sides share at the start and at the end.
    let mut head = 0;
    for (a, b) in region.split_inclusive('\n').zip(text.split_inclusive('\n')) {
        if a != b || !a.ends_with('\n') {
            break;
        }
        head += a.len();
    }
    let mut tail = 0;
    let (r_rest, t_rest) = (&region[head..], &text[head..]);
    for (a, b) in r_rest
        .split_inclusive('\n')
        .rev()
        .zip(t_rest.split_inclusive('\n').rev())
    {
        if a != b || tail + a.len() > r_rest.len().min(t_rest.len()) {
            break;
        }
        tail += a.len();
    }
    let range = placed.range.start + head..placed.range.end - tail;
    (range, text[head..text.len() - tail].to_string())
}

fn not_found(original: &str, old_text: &str, header: Option<usize>) -> String {
    let place = match header {
        Some(n) => format!("its context was not found within ±{ANCHOR_WINDOW_LINES} lines of line {n}, nor anywhere else in the file"),
        None => "its context was not found in the file".to_string(),
    };
    match matching::closest(original, old_text) {
        Some(region) => {
            let mut out = format!("{place}. The closest region (lines marked > differ):\n");
            for (n, line, differs) in &region.lines {
                out.push_str(&format!(
                    "   {}{n:5}|{line}\n",
                    if *differs { ">" } else { " " }
                ));
            }
            out.trim_end().to_string()
        }
        None => place,
    }
}

fn join(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    if !lines.is_empty() {
        s.push('\n');
    }
    s
}

/// The original view with `edits` (original coordinates, sorted) applied.
fn render(original: &str, edits: &[(Range<usize>, String)]) -> String {
    let mut out = String::with_capacity(original.len());
    let mut at = 0;
    for (r, text) in edits {
        out.push_str(&original[at..r.start]);
        out.push_str(text);
        at = r.end;
    }
    out.push_str(&original[at..]);
    out
}

/// Maps a range of the current text back to the original, or `None` when it touches text an
/// earlier hunk wrote.
fn to_original(edits: &[(Range<usize>, String)], cur: &Range<usize>) -> Option<Range<usize>> {
    let mut shift: isize = 0;
    let mut gap_start = 0usize;
    for (orig, text) in edits {
        let new_start = (orig.start as isize + shift) as usize;
        let new_end = new_start + text.len();
        if cur.start >= gap_start && cur.end <= new_start {
            break;
        }
        if cur.start < new_end && cur.end > new_start
            || (cur.start == cur.end && cur.start > new_start && cur.start < new_end)
        {
            return None;
        }
        shift += text.len() as isize - orig.len() as isize;
        gap_start = new_end;
    }
    if cur.start < gap_start {
        return None;
    }
    let start = (cur.start as isize - shift) as usize;
    let end = (cur.end as isize - shift) as usize;
    Some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(file: &str, patch: &str) -> Result<String, Vec<String>> {
        let parsed = super::super::parse(patch).unwrap();
        let p = apply_hunks(file, &parsed);
        if p.reports.iter().any(Result::is_err) {
            return Err(p
                .reports
                .into_iter()
                .filter_map(Result::err)
                .map(|f| f.line)
                .collect());
        }
        Ok(render(file, &p.edits))
    }

    #[test]
    fn hunks_land_whether_written_against_the_original_or_one_after_another() {
        let file = "a = 1\nb = 2\nc = 3\nd = 4\n";
        // As diff -u writes them: hunk 2's context shows `b = 2`, which hunk 1 changes.
        assert_eq!(
            applied(file, "@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 20\n@@ -2,2 +2,2 @@\n b = 2\n-c = 3\n+c = 30\n"),
            Ok("a = 1\nb = 20\nc = 30\nd = 4\n".to_string())
        );
        // One after another: block 2 looks for what block 1 wrote.
        assert_eq!(
            applied(file, "<<<<<<< SEARCH\nb = 2\n=======\nb = 20\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nb = 20\nc = 3\n=======\nb = 20\nc = 30\n>>>>>>> REPLACE\n"),
            Ok("a = 1\nb = 20\nc = 30\nd = 4\n".to_string())
        );
        // The same change twice is made once.
        assert_eq!(
            applied(
                file,
                "@@ -2 +2 @@\n-b = 2\n+b = 20\n@@ -2 +2 @@\n-b = 2\n+b = 20\n"
            ),
            Ok("a = 1\nb = 20\nc = 3\nd = 4\n".to_string())
        );
    }

    #[test]
    fn hunks_that_change_a_line_differently_are_refused() {
        let file = "a = 1\nb = 2\nc = 3\n";
        let refused = applied(
            file,
            "@@ -2 +2 @@\n-b = 2\n+b = 20\n@@ -2 +2 @@\n-b = 2\n+b = 21\n",
        )
        .unwrap_err();
        assert_eq!(
            refused,
            ["FAILED: it changes lines that hunk 1 also changes, differently; merge the two into one hunk"]
        );
        // Two insertions at one place: their order is a guess.
        assert!(applied(file, "@@ -1,0 +2 @@\n+x\n@@ -1,0 +2 @@\n+y\n").is_err());
    }

    #[test]
    fn maps_ranges_around_earlier_edits() {
        // Original "aaaa bbbb cccc"; an edit turned "bbbb" (5..9) into "B".
        let edits = vec![(5..9, "B".to_string())];
        // Current "aaaa B cccc": "cccc" is at 7..11, originally 10..14.
        assert_eq!(to_original(&edits, &(7..11)), Some(10..14));
        assert_eq!(to_original(&edits, &(0..4)), Some(0..4));
        assert_eq!(to_original(&edits, &(4..6)), None);
    }
}
