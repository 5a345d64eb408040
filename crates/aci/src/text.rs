//! A file's text as the edit tools see it, and the way back to its exact bytes.
//!
//! Matching happens on a *view*: UTF-8, no BOM, `\r\n` read as `\n`, because a model never
//! reproduces those reliably. Splicing maps view positions back to the original bytes, so every
//! byte outside a replaced span stays as it was — the BOM, each line's own ending, the final
//! newline or its absence — and replacement text takes the file's dominant line ending.

use std::ops::Range;

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
    /// bytes. Only the bytes of the replaced spans change; the replacement's newlines follow
    /// the file's dominant ending.
    pub fn splice(&self, edits: &[(Range<usize>, String)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.original.len());
        let mut at = 0usize;
        for (range, replacement) in edits {
            let start = self.orig(range.start);
            let end = self.orig(range.end);
            out.extend_from_slice(&self.original[at..start]);
            out.extend_from_slice(self.encode(replacement).as_bytes());
            at = end;
        }
        out.extend_from_slice(&self.original[at..]);
        out
    }

    /// LF text in the file's line-ending convention.
    pub fn encode(&self, lf_text: &str) -> String {
        if self.crlf {
            lf_text.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            lf_text.to_string()
        }
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
    fn invalid_utf8_is_refused() {
        assert_eq!(Text::decode(b"ab\xFFcd".to_vec()).unwrap_err().offset, 2);
    }
}
