//! Reading the patches small models write. Accepted forms:
//!
//! - unified diff hunks (`@@ -12,4 +12,5 @@`), with or without `---`/`+++` headers; an
//!   `@@ <code line>` header with no numbers anchors on that line;
//! - `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks, the same with plain `SEARCH` /
//!   `REPLACE` header lines, or just two texts around a bare `=======`;
//! - a bare block of `-`/`+`/` ` lines, read as one hunk with no line numbers.
//!
//! Markdown fences are dropped; prose after a hunk is dropped; an unprefixed line with diff lines
//! after it (before the next header) is context the model forgot to prefix. Placing the hunks
//! in a file is in `place`; writing the result is ws_patch's, in [`crate::tools`].

mod place;

pub use place::{apply_hunks, Failure, Landed, Placement, ANCHOR_WINDOW_LINES};

use crate::matching::{foreign_numbering, gutter, Gutter, Numbering};

/// One line of a unified hunk, by what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// A line that stays (` ` prefix, or none: a prefix the model forgot).
    Context(String),
    Removed(String),
    Added(String),
}

impl DiffLine {
    pub fn text(&self) -> &str {
        match self {
            DiffLine::Context(t) | DiffLine::Removed(t) | DiffLine::Added(t) => t,
        }
    }

    fn text_mut(&mut self) -> &mut String {
        match self {
            DiffLine::Context(t) | DiffLine::Removed(t) | DiffLine::Added(t) => t,
        }
    }
}

/// One change to make: the lines to find and the lines to put there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    /// 1-based line of the old side from the `@@ -N` header.
    pub old_start: Option<usize>,
    /// An `@@ <code line>` header with no numbers: the line to anchor on.
    pub anchor: Option<String>,
    /// Context and removed lines, in order.
    pub old: Vec<String>,
    /// Context and added lines, in order.
    pub new: Vec<String>,
    /// Leading lines taken as context although unprefixed (before any diff line). They may be
    /// prose ("Change this:"), so a hunk that misses with them is tried without them.
    pub soft_lead: usize,
    /// The lines in order, each with what it does: a unified hunk's own account of which lines
    /// stay, go and come. Empty for SEARCH/REPLACE blocks, which only have two texts.
    pub body: Vec<DiffLine>,
}

impl Hunk {
    /// The hunk without its soft leading lines, if it has any.
    pub fn without_soft_lead(&self) -> Option<Hunk> {
        (self.soft_lead > 0).then(|| Hunk {
            old: self.old[self.soft_lead..].to_vec(),
            new: self.new[self.soft_lead..].to_vec(),
            soft_lead: 0,
            body: self.body[self.soft_lead.min(self.body.len())..].to_vec(),
            ..self.clone()
        })
    }

    fn push(&mut self, line: DiffLine) {
        match &line {
            DiffLine::Context(t) => {
                self.old.push(t.clone());
                self.new.push(t.clone());
            }
            DiffLine::Removed(t) => self.old.push(t.clone()),
            DiffLine::Added(t) => self.new.push(t.clone()),
        }
        self.body.push(line);
    }

    /// Rewrites every line's text (a pasted gutter stripped), keeping what each line does.
    fn map_lines(&mut self, f: impl Fn(&str) -> String) {
        for line in self.old.iter_mut().chain(self.new.iter_mut()) {
            *line = f(line);
        }
        for line in &mut self.body {
            let t = line.text_mut();
            *t = f(t);
        }
    }
}

/// The form a patch was written in, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Unified,
    SearchReplace,
    Bare,
}

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub form: Form,
    pub hunks: Vec<Hunk>,
    /// Distinct file names from `---`/`+++` headers (`a/`/`b/` prefixes removed).
    pub files: Vec<String>,
    /// True when a `--- /dev/null` or `+++ /dev/null` header says the diff creates or deletes.
    pub creates_or_deletes: bool,
    /// True when the ws_read gutter was stripped from the body.
    pub gutter_stripped: bool,
    /// Another tool's line numbers, when they were stripped from the body.
    pub numbering_stripped: Option<Numbering>,
}

/// Why a patch could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("no change found in the patch. Send unified diff hunks (\"@@ -12,3 +12,4 @@\" then \" context\", \"-old\", \"+new\" lines), or a SEARCH/REPLACE block:\n<<<<<<< SEARCH\nold lines\n=======\nnew lines\n>>>>>>> REPLACE")]
    Empty,
    #[error("hunk {0} changes nothing: it has no \"-\" or \"+\" lines")]
    NoChange(usize),
    /// Reported by ws_patch when a partly-guttered patch does not apply as written.
    #[error("the patch has ws_read line-number prefixes (\"  42|\") on some lines but not on others. The prefix is display only; remove it from every line and send the patch again")]
    PartialGutter,
}

/// Reads a patch in any accepted form.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text
        .split('\n')
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("```") || t.starts_with("~~~"))
        })
        .collect();
    let is_search_replace = lines
        .iter()
        .any(|l| l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>") || l.trim_end() == "=======");
    let patch = if is_search_replace {
        parse_search_replace(&lines)
    } else if lines.iter().any(|l| l.starts_with("@@")) {
        parse_unified(&lines)
    } else {
        let mut p = parse_unified(&lines);
        p.form = Form::Bare;
        p
    };
    if patch.hunks.is_empty() {
        return Err(ParseError::Empty);
    }
    if patch.form != Form::SearchReplace {
        if let Some(i) = patch.hunks.iter().position(|h| h.old == h.new) {
            return Err(ParseError::NoChange(i + 1));
        }
    }
    Ok(patch)
}

/// What a pasted ws_read gutter means for a patch.
#[derive(Debug, PartialEq, Eq)]
pub enum GutterVariant {
    /// No copied line carries it.
    None,
    /// Every copied (context and removed) line carries it: the patch with it stripped.
    Stripped(Patch),
    /// Some copied lines carry it and some do not.
    Partial,
}

/// The gutter reading of a patch. Callers try the patch as written first: text that merely
/// looks like a gutter (`1|2 => …` match arms, shell `case` arms) may really be in the file.
pub fn gutter_variant(patch: &Patch) -> GutterVariant {
    let copied: Vec<&str> = patch
        .hunks
        .iter()
        .flat_map(|h| h.old.iter().map(String::as_str))
        .collect();
    match gutter(&copied.join("\n")) {
        Gutter::None => GutterVariant::None,
        Gutter::Some(_) => GutterVariant::Partial,
        Gutter::Every(_) => {
            let mut stripped = patch.clone();
            for hunk in &mut stripped.hunks {
                hunk.map_lines(|line| match gutter(line) {
                    Gutter::Every(s) => s,
                    _ => line.to_string(),
                });
            }
            stripped.gutter_stripped = true;
            GutterVariant::Stripped(stripped)
        }
    }
}

/// The readings of a patch with another tool's line numbers (`cat -n`, `12→`, `L12: `, `12:`)
/// stripped: one per style that every hunk's copied lines carry, numbers running on within
/// each hunk. Callers try them only when the patch as written does not apply.
pub fn numbering_variants(patch: &Patch) -> Vec<(Numbering, Patch)> {
    let mut styles: Option<Vec<Numbering>> = None;
    for hunk in &patch.hunks {
        let here: Vec<Numbering> = foreign_numbering(&hunk.old.join("\n"))
            .into_iter()
            .map(|(style, _)| style)
            .collect();
        styles = Some(match styles {
            None => here,
            Some(before) => before.into_iter().filter(|s| here.contains(s)).collect(),
        });
    }
    styles
        .unwrap_or_default()
        .into_iter()
        .map(|style| {
            let mut stripped = patch.clone();
            for hunk in &mut stripped.hunks {
                hunk.map_lines(|line| style.strip(line).unwrap_or_else(|| line.to_string()));
            }
            stripped.numbering_stripped = Some(style);
            (style, stripped)
        })
        .collect()
}

/// Unified hunks (and the bare form, which is one hunk without a header).
fn parse_unified(lines: &[&str]) -> Patch {
    let mut patch = Patch {
        form: Form::Unified,
        hunks: Vec::new(),
        files: Vec::new(),
        creates_or_deletes: false,
        gutter_stripped: false,
        numbering_stripped: None,
    };
    let mut current: Option<Hunk> = None;
    // After prose has started, nothing is read until the next hunk header.
    let mut in_prose = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let next = lines.get(i + 1).copied();
        i += 1;
        if let Some(name) = header_name(line, next) {
            // A `---`/`+++` pair: a file header, which ends any hunk.
            finish(&mut patch, &mut current);
            in_prose = false;
            record_file(&mut patch, name);
            if let Some(n) = next.and_then(|n| n.strip_prefix("+++ ")) {
                record_file(&mut patch, n);
                i += 1;
            }
            continue;
        }
        if line.starts_with("@@") {
            finish(&mut patch, &mut current);
            in_prose = false;
            current = Some(hunk_header(line));
            continue;
        }
        if line.starts_with("diff --git")
            || line.starts_with("index ")
            || line.starts_with("new file mode")
            || line.starts_with("deleted file mode")
            || line.starts_with("\\ ")
        {
            continue;
        }
        if in_prose {
            continue;
        }
        let is_diff_line = |l: &str| {
            (l.starts_with(' ') || l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("--- ")
                && !l.starts_with("+++ ")
        };
        if is_diff_line(line) {
            let hunk = current.get_or_insert_with(Hunk::default);
            let (marker, body) = line.split_at(1);
            hunk.push(match marker {
                " " => DiffLine::Context(body.to_string()),
                "-" => DiffLine::Removed(body.to_string()),
                _ => DiffLine::Added(body.to_string()),
            });
            continue;
        }
        // An unprefixed line: context the model forgot to prefix when diff lines follow (a
        // tab-indented line, or several in a row, included), otherwise prose (or blank lines)
        // after the hunk.
        if !line.trim().is_empty() && diff_line_follows(lines, i, is_diff_line) {
            let starting = current
                .as_ref()
                .is_none_or(|h| h.old.len() == h.soft_lead && h.new.len() == h.soft_lead);
            let hunk = current.get_or_insert_with(Hunk::default);
            hunk.push(DiffLine::Context(line.to_string()));
            if starting {
                hunk.soft_lead += 1;
            }
            continue;
        }
        if current.is_some() && line.trim().is_empty() && diff_line_follows(lines, i, is_diff_line)
        {
            if let Some(hunk) = current.as_mut() {
                hunk.push(DiffLine::Context(String::new()));
            }
            continue;
        }
        if current.is_some() {
            in_prose = true;
        }
    }
    finish(&mut patch, &mut current);
    patch
}

/// True when a diff line comes after `from` before the next header: the unprefixed and blank
/// lines in between are then inside the hunk (context whose prefix was lost), not prose.
fn diff_line_follows(lines: &[&str], from: usize, is_diff_line: impl Fn(&str) -> bool) -> bool {
    for (k, l) in lines.iter().enumerate().skip(from) {
        let next = lines.get(k + 1).copied();
        if l.starts_with("@@") || l.starts_with("diff --git") || header_name(l, next).is_some() {
            return false;
        }
        if is_diff_line(l) {
            return true;
        }
    }
    false
}

fn finish(patch: &mut Patch, current: &mut Option<Hunk>) {
    if let Some(h) = current.take() {
        if !(h.old.is_empty() && h.new.is_empty()) {
            patch.hunks.push(h);
        }
    }
}

/// `--- a/x` followed by `+++ b/x` is a file header; returns the old name.
fn header_name<'a>(line: &'a str, next: Option<&str>) -> Option<&'a str> {
    let name = line.strip_prefix("--- ")?;
    next.filter(|n| n.starts_with("+++ ")).map(|_| name)
}

fn record_file(patch: &mut Patch, raw: &str) {
    let name = raw.split('\t').next().unwrap_or(raw).trim();
    if name == "/dev/null" {
        patch.creates_or_deletes = true;
        return;
    }
    let name = name
        .strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .unwrap_or(name);
    let name = name.trim_start_matches("./").to_string();
    if !name.is_empty() && !patch.files.contains(&name) {
        patch.files.push(name);
    }
}

/// `@@ -12,4 +12,5 @@ fn x()` → old_start 12; `@@ fn main() {` → anchor; `@@` → neither.
fn hunk_header(line: &str) -> Hunk {
    let rest = line.trim_start_matches('@').trim();
    let mut hunk = Hunk::default();
    if let Some(spec) = rest.strip_prefix('-') {
        let num: String = spec.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = num.parse::<usize>() {
            hunk.old_start = Some(n);
            return hunk;
        }
    }
    let anchor = rest.trim_end_matches('@').trim();
    if !anchor.is_empty() {
        hunk.anchor = Some(anchor.to_string());
    }
    hunk
}

/// SEARCH/REPLACE blocks, with or without conflict markers, or a bare `=======` split.
fn parse_search_replace(lines: &[&str]) -> Patch {
    #[derive(PartialEq)]
    enum State {
        Outside,
        Search,
        Replace,
    }
    let is_search_start = |l: &str| l.starts_with("<<<<<<<") || l.trim() == "SEARCH";
    let is_separator = |l: &str| l.trim_end() == "=======";
    let is_replace_end = |l: &str| l.starts_with(">>>>>>>") || l.trim() == "REPLACE";

    let mut hunks = Vec::new();
    let mut state = State::Outside;
    let mut hunk = Hunk::default();
    // Lines seen outside any block: for the bare form, they are the search text.
    let mut loose: Vec<&str> = Vec::new();
    for line in lines {
        match state {
            State::Outside => {
                if is_search_start(line) {
                    state = State::Search;
                    hunk = Hunk::default();
                    loose.clear();
                } else if is_separator(line) {
                    state = State::Replace;
                    hunk = Hunk {
                        old: trim_blank_edges(&loose),
                        ..Hunk::default()
                    };
                    loose.clear();
                } else {
                    loose.push(line);
                }
            }
            State::Search => {
                if is_separator(line) {
                    state = State::Replace;
                } else {
                    hunk.old.push(line.to_string());
                }
            }
            State::Replace => {
                if is_replace_end(line) {
                    hunks.push(std::mem::take(&mut hunk));
                    state = State::Outside;
                } else if is_search_start(line) {
                    hunks.push(std::mem::take(&mut hunk));
                    state = State::Search;
                } else {
                    hunk.new.push(line.to_string());
                }
            }
        }
    }
    if state == State::Replace {
        // The bare form (or a block missing its end marker): drop the trailing blank lines a
        // fence or the end of the message left behind.
        while hunk.new.last().is_some_and(|l| l.trim().is_empty()) {
            hunk.new.pop();
        }
        hunks.push(hunk);
    }
    Patch {
        form: Form::SearchReplace,
        hunks,
        files: Vec::new(),
        creates_or_deletes: false,
        gutter_stripped: false,
        numbering_stripped: None,
    }
}

fn trim_blank_edges(lines: &[&str]) -> Vec<String> {
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |e| e + 1);
    lines[start..end].iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_with_headers_fence_and_prose() {
        let p = parse("```diff\n--- a/src/x.py\n+++ b/src/x.py\n@@ -3,2 +3,2 @@\n a\n-b\n+c\n```\nThis fixes it.\n").unwrap();
        assert_eq!(p.form, Form::Unified);
        assert_eq!(p.files, vec!["src/x.py"]);
        assert_eq!(p.hunks.len(), 1);
        assert_eq!(p.hunks[0].old_start, Some(3));
        assert_eq!(p.hunks[0].old, vec!["a", "b"]);
        assert_eq!(p.hunks[0].new, vec!["a", "c"]);
    }

    #[test]
    fn unprefixed_context_and_blank_context() {
        let p =
            parse("@@ -1,4 +1,4 @@\ndef f():\n-    return 1\n+    return 2\n\n x = 1\n").unwrap();
        assert_eq!(
            p.hunks[0].old,
            vec!["def f():", "    return 1", "", "x = 1"]
        );
    }

    #[test]
    fn unprefixed_lines_with_diff_lines_after_them_are_context() {
        // Two tab-indented lines in a row lost their prefix: both are context, not prose.
        let p = parse("@@ -4,4 +4,5 @@\n\tif !ok {\n\t\treturn nil\n \t}\n+\tx++\n").unwrap();
        let h = &p.hunks[0];
        assert_eq!(h.old, vec!["\tif !ok {", "\t\treturn nil", "\t}"]);
        assert_eq!(h.new.last().map(String::as_str), Some("\tx++"));
        assert_eq!(
            h.body,
            vec![
                DiffLine::Context("\tif !ok {".into()),
                DiffLine::Context("\t\treturn nil".into()),
                DiffLine::Context("\t}".into()),
                DiffLine::Added("\tx++".into()),
            ]
        );
        // Prose after the last diff line is still prose.
        let p = parse("@@ -1 +1 @@\n-a\n+b\nThis fixes it.\nThanks.\n").unwrap();
        assert_eq!(
            (p.hunks[0].old.clone(), p.hunks[0].new.clone()),
            (vec!["a".to_string()], vec!["b".to_string()])
        );
    }

    #[test]
    fn anchor_headers() {
        let p = parse("@@ def f():\n-    return 1\n+    return 2\n").unwrap();
        assert_eq!(p.hunks[0].anchor.as_deref(), Some("def f():"));
        assert_eq!(p.hunks[0].old_start, None);
    }

    #[test]
    fn search_replace_forms() {
        let p = parse("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n").unwrap();
        assert_eq!(
            (p.hunks[0].old.clone(), p.hunks[0].new.clone()),
            (vec!["a".to_string()], vec!["b".to_string()])
        );
        let p = parse("SEARCH\na\n=======\nb\nREPLACE\n").unwrap();
        assert_eq!(p.hunks[0].new, vec!["b"]);
        let p = parse("a\n=======\nb\n").unwrap();
        assert_eq!(p.hunks[0].old, vec!["a"]);
        assert_eq!(p.hunks[0].new, vec!["b"]);
        let two = parse("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n").unwrap();
        assert_eq!(two.hunks.len(), 2);
    }

    #[test]
    fn bare_block() {
        let p = parse("-old\n+new\n").unwrap();
        assert_eq!(p.form, Form::Bare);
        assert_eq!(p.hunks[0].old, vec!["old"]);
    }

    #[test]
    fn gutter_variants() {
        let p = parse("@@ -2 +2 @@\n-     2|old\n+     2|new\n").unwrap();
        let GutterVariant::Stripped(s) = gutter_variant(&p) else {
            panic!("expected a stripped variant");
        };
        assert!(s.gutter_stripped);
        assert_eq!(s.hunks[0].old, vec!["old"]);
        assert_eq!(s.hunks[0].new, vec!["new"]);
        let p = parse("@@ -2 +2 @@\n      1|a\n-old\n+new\n").unwrap();
        assert_eq!(gutter_variant(&p), GutterVariant::Partial);
    }

    #[test]
    fn empty_and_no_change() {
        assert_eq!(parse("just some words"), Err(ParseError::Empty));
        assert_eq!(parse("@@ -1 +1 @@\n a\n"), Err(ParseError::NoChange(1)));
    }
}
