//! A file's text as the edit tools see it, and the way back to its exact bytes.
//!
//! Matching happens on a *view*: UTF-8, no BOM, `\r\n` read as `\n`, because a model never
//! reproduces those reliably. Splicing maps view positions back to the original bytes, so every
//! byte outside a replaced span stays as it was — the BOM, each line's own ending, the final
//! newline or its absence — and inside a span each line keeps its ending too: a line kept or
//! changed ends as the line it stands for did, an added line as the line above it, so a file
//! that mixes CRLF and LF keeps its mix line by line.

use std::ops::Range;

use crate::matching::origins;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The file was not UTF-8, so text edits cannot promise to leave it intact.
#[derive(Debug, thiserror::Error)]
#[error("the file is not valid UTF-8 text (invalid byte at offset {offset})")]
pub struct NotUtf8 {
    pub offset: usize,
}

/// A decoded file: the matching view plus what is needed to write it back byte-exactly.
#[derive(Debug, Clone)]
pub struct Text {
    original: Vec<u8>,
    bom: bool,
    /// True when most line endings are `\r\n`; replacement text is written that way.
    crlf: bool,
    view: String,
    /// View indices of the `\n`s that were `\r\n` in the original, ascending.
    cr_at: Vec<usize>,
}

impl Text {
    /// Decodes file bytes. Fails on invalid UTF-8 rather than guessing.
    pub fn decode(original: Vec<u8>) -> Result<Text, NotUtf8> {
        let bom = original.starts_with(BOM);
        let body = &original[if bom { BOM.len() } else { 0 }..];
        let s = std::str::from_utf8(body).map_err(|e| NotUtf8 {
            offset: e.valid_up_to() + if bom { BOM.len() } else { 0 },
        })?;
        let mut view = String::with_capacity(s.len());
        let mut cr_at = Vec::new();
        let mut lf = 0usize;
        let mut rest = s;
        while let Some(i) = rest.find("\r\n") {
            view.push_str(&rest[..i]);
            cr_at.push(view.len());
            view.push('\n');
            rest = &rest[i + 2..];
        }
        view.push_str(rest);
        lf += memchr::memchr_iter(b'\n', view.as_bytes()).count();
        let crlf = !cr_at.is_empty() && cr_at.len() * 2 >= lf;
        Ok(Text {
            original,
            bom,
            crlf,
            view,
            cr_at,
        })
    }

    /// The text to match against.
    pub fn view(&self) -> &str {
        &self.view
    }

    /// The bytes as they are on disk.
    pub fn original(&self) -> &[u8] {
        &self.original
    }

    /// True when the file's lines mostly end in `\r\n`.
    pub fn is_crlf(&self) -> bool {
        self.crlf
    }

    /// True when any line ends in `\r\n` (all of them, or a mix with `\n`).
    pub fn has_crlf(&self) -> bool {
        !self.cr_at.is_empty()
    }

    /// True when some lines end in `\r\n` and others in `\n`.
    pub fn mixes_endings(&self) -> bool {
        let total = memchr::memchr_iter(b'\n', self.view.as_bytes()).count();
        !self.cr_at.is_empty() && self.cr_at.len() != total
    }

    /// The whole view as one range: a rewrite of the file spliced over it keeps each line's
    /// ending and the BOM as [`Text::splice`] does.
    pub fn whole(&self) -> Range<usize> {
        0..self.view.len()
    }

    /// True when the file starts with a UTF-8 byte-order mark.
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// Original byte offset of view offset `i`.
    fn orig(&self, i: usize) -> usize {
        let crs_before = self.cr_at.partition_point(|&c| c < i);
        i + crs_before + if self.bom { BOM.len() } else { 0 }
    }

    /// How many bytes of the file on disk a view range covers (CRs and BOM included), so
    /// size guards judge the file, not the view.
    pub fn original_len(&self, range: &Range<usize>) -> usize {
        self.orig(range.end) - self.orig(range.start)
    }

    /// Replaces view ranges (sorted, non-overlapping) with LF text, returning the new file
    /// bytes. Only the bytes of the replaced spans change, and each line of a replacement ends
    /// as the line it stands for (see `endings`).
    pub fn splice(&self, edits: &[(Range<usize>, String)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.original.len());
        let mut at = 0usize;
        for (range, replacement) in edits {
            let start = self.orig(range.start);
            let end = self.orig(range.end);
            out.extend_from_slice(&self.original[at..start]);
            let replacement = replacement.replace("\r\n", "\n");
            let endings = self.endings(range, &replacement);
            for (i, piece) in replacement.split('\n').enumerate() {
                if i > 0 {
                    out.extend_from_slice(if endings[i - 1] { b"\r\n" } else { b"\n" });
                }
                out.extend_from_slice(piece.as_bytes());
            }
            at = end;
        }
        out.extend_from_slice(&self.original[at..]);
        out
    }

    /// Whether each line break of `replacement` (LF text for the view range `range`) is
    /// written `\r\n`. A file with one kind of ending gets that kind throughout. In a mixed
    /// file a line kept or changed ends as the line it stands for ([`origins`]: a line diff of
    /// the span against the replacement); an added line ends as the line above it (the one
    /// before the span, at the span's start), or, at the top of the file, as the line below.
    fn endings(&self, range: &Range<usize>, replacement: &str) -> Vec<bool> {
        let breaks = memchr::memchr_iter(b'\n', replacement.as_bytes()).count();
        if !self.mixes_endings() {
            return vec![!self.cr_at.is_empty(); breaks];
        }
        let is_cr = |view_nl: usize| self.cr_at.binary_search(&view_nl).is_ok();
        let (Some(old), Some(before), Some(after)) = (
            self.view.get(range.clone()),
            self.view.get(..range.start),
            self.view.get(range.end..),
        ) else {
            return vec![self.crlf; breaks];
        };
        // The ending of each old piece's line: inside the span its own break, for the last
        // piece the break that ends its line after the span (none at the end of the file).
        let mut old_ends: Vec<Option<bool>> = memchr::memchr_iter(b'\n', old.as_bytes())
            .map(|i| Some(is_cr(range.start + i)))
            .collect();
        old_ends.push(memchr::memchr(b'\n', after.as_bytes()).map(|i| is_cr(range.end + i)));
        let old_pieces: Vec<&str> = old.split('\n').collect();
        let new_pieces: Vec<&str> = replacement.split('\n').collect();
        let origin = origins(&old_pieces, &new_pieces);
        let mut own: Vec<Option<bool>> = (0..breaks)
            .map(|j| origin[j].old().and_then(|i| old_ends[i]))
            .collect();
        // Added lines: the line above, else the line below, else the file's usual ending.
        let above = memchr::memrchr(b'\n', before.as_bytes()).map(is_cr);
        let below = own
            .iter()
            .flatten()
            .next()
            .copied()
            .or(old_ends[old_ends.len() - 1]);
        let mut prev = above;
        for end in &mut own {
            let e = end.or(prev).or(below).unwrap_or(self.crlf);
            *end = Some(e);
            prev = Some(e);
        }
        own.into_iter().map(|e| e.unwrap_or(self.crlf)).collect()
    }
}

/// A unified diff of two versions of a file, for dry-run and review.
pub fn unified_diff(path: &crate::path::RelPath, before: &[u8], after: &[u8]) -> String {
    let before = String::from_utf8_lossy(before);
    let after = String::from_utf8_lossy(after);
    similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splice(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
        let t = Text::decode(bytes.to_vec()).unwrap();
        let start = t.view().find(from).unwrap();
        t.splice(&[(start..start + from.len(), to.to_string())])
    }

    #[test]
    fn lf_file_round_trips() {
        assert_eq!(splice(b"a\nb\nc", "b\n", "B\nB2\n"), b"a\nB\nB2\nc");
    }

    #[test]
    fn crlf_file_keeps_crlf_and_gets_crlf() {
        assert_eq!(
            splice(b"a\r\nb\r\nc\r\n", "b\n", "B\nB2\n"),
            b"a\r\nB\r\nB2\r\nc\r\n"
        );
    }

    #[test]
    fn bom_and_missing_final_newline_are_kept() {
        assert_eq!(
            splice(b"\xEF\xBB\xBFx = 1\ny = 2", "y = 2", "y = 3"),
            b"\xEF\xBB\xBFx = 1\ny = 3"
        );
    }

    #[test]
    fn mixed_endings_outside_the_span_are_untouched() {
        // Mostly LF: a lone CRLF line elsewhere keeps its CRLF; the replacement gets LF.
        assert_eq!(splice(b"a\r\nb\nc\nd\n", "c\n", "C\n"), b"a\r\nb\nC\nd\n");
    }

    #[test]
    fn a_mixed_file_keeps_each_lines_ending_inside_the_span() {
        // Two CRLF and two LF lines: neither kind is the file's, so no line takes the other's.
        let file = b"a = 1\r\nb = 2\nc = 3\r\nd = 4\n";
        // Changed lines end as the lines they replace.
        assert_eq!(
            splice(file, "b = 2\nc = 3\n", "b = 20\nc = 30\n"),
            b"a = 1\r\nb = 20\nc = 30\r\nd = 4\n"
        );
        // Kept lines keep their bytes; added lines end as the line above them.
        assert_eq!(
            splice(file, "b = 2\nc = 3\n", "b = 2\nb2 = 5\nc = 3\nc2 = 6\n"),
            b"a = 1\r\nb = 2\nb2 = 5\nc = 3\r\nc2 = 6\r\nd = 4\n"
        );
        // A span inside one line keeps that line's ending for the line it becomes.
        assert_eq!(
            splice(file, "c = 3", "c = 3\nc2 = 6"),
            b"a = 1\r\nb = 2\nc = 3\r\nc2 = 6\r\nd = 4\n"
        );
        // Lines added at the top take the ending of the line below.
        assert_eq!(
            splice(b"a\r\nb\nc\n", "a\n", "x\ny\na\n"),
            b"x\r\ny\r\na\r\nb\nc\n"
        );
    }

    #[test]
    fn invalid_utf8_is_refused() {
        assert_eq!(Text::decode(b"ab\xFFcd".to_vec()).unwrap_err().offset, 2);
    }
}
