//! ws_read: a windowed slice of a file as `%6d|line` lines.
//!
//! The file is streamed, never loaded whole: only the lines of the window are kept (each cut at
//! 2,000 characters), the rest is only counted and hashed. So a 10 MB single-line file or a
//! 200,000-line file costs one pass and a few kilobytes of result.

use crate::error::RefusalClass;
use crate::outcome::Outcome;
use std::borrow::Cow;

use std::io::Read;

use crate::error::ToolError;
use crate::path::{PathError, RelPath};
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, FILE_PATH_ALIASES};
use crate::suggest::{did_you_mean, similar_paths, Want};
use crate::workspace::{ReadRecord, Workspace};

/// A line longer than this is cut with a marker.
pub const MAX_LINE_CHARS: usize = 2000;
/// A NUL byte in this many leading bytes marks a file as binary (as git and ripgrep do).
const BINARY_SNIFF_BYTES: usize = 8000;
const CHUNK: usize = 64 * 1024;

pub struct ReadTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_read",
    description: Cow::Borrowed(
        "Read a file as numbered lines (\"42|code\"), 120 at a time; page with offset.",
    ),
    params: &[
        Param {
            name: "path",
            kind: Kind::String,
            required: true,
            description: "",
            aliases: FILE_PATH_ALIASES,
        },
        Param {
            name: "offset",
            kind: Kind::Integer { min: 0 },
            required: false,
            description: "first line (default 1)",
            aliases: &["start_line", "line", "start"],
        },
        Param {
            name: "limit",
            kind: Kind::Integer { min: 1 },
            required: false,
            description: "lines to show (default 120)",
            aliases: &["lines", "count", "max_lines"],
        },
    ],
    example: "{\"path\":\"src/main.rs\",\"offset\":1,\"limit\":120}",
    effect: Effect::READ_ONLY,
    passes_unknown_args: false,
    rest_hint: "Read a smaller window with ws_read {\"path\":…,\"offset\":…,\"limit\":…}.",
};

impl Tool for ReadTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let given = args.str("path").unwrap_or_default();
        let path = ws.jail.parse(given)?;
        let offset = args.int("offset").unwrap_or(1).max(1) as usize;
        let limit = args
            .int("limit")
            .map(|l| l as usize)
            .unwrap_or(ws.config.read_window_lines);
        let ceiling = ws.config.read_ceiling_chars();

        let mut file = match ws.jail.open_file(&path) {
            Ok(f) => f,
            Err(PathError::NotFound { .. }) => return Err(not_found(ws, &path)),
            Err(e) => return Err(e.into()),
        };
        let meta = file
            .metadata()
            .map_err(|e| ToolError::refused(RefusalClass::Io, format!("{path}: {e}")))?;
        if meta.is_dir() {
            return Err(ToolError::refused(
                RefusalClass::Other,
                format!(
                "{path} is a directory, not a file. List it with ws_list {{\"path\":\"{path}\"}}."
            ),
            ));
        }
        if !meta.is_file() {
            return Err(ToolError::refused(
                RefusalClass::Other,
                format!(
                "{path} is not a regular file (a device, socket or pipe), so it cannot be read."
            ),
            ));
        }

        let line_budget = MAX_LINE_CHARS.min(ceiling.saturating_sub(40).max(80));
        let scan = scan(&mut file, offset, limit, line_budget, ceiling).map_err(|e| {
            ToolError::refused(RefusalClass::Io, format!("{path} could not be read: {e}"))
        })?;
        if scan.binary {
            return Err(ToolError::refused(RefusalClass::Other, format!(
                "{path} is a binary file ({} bytes), so it is not shown. Search text files with ws_grep, or inspect it with ws_shell (e.g. \"file {path}\" or \"xxd {path} | head\").",
                scan.len
            )));
        }

        if scan.total_lines > 0 && offset > scan.total_lines {
            let last_page = scan.total_lines.saturating_sub(limit.max(1) - 1).max(1);
            return Err(ToolError::refused(RefusalClass::Args, format!(
                "offset {offset} is past the end of {path}, which has {} lines. Valid offsets are 1–{}. The last page: ws_read {{\"path\":\"{path}\",\"offset\":{last_page},\"limit\":{limit}}}",
                scan.total_lines, scan.total_lines
            )));
        }

        // A read that showed something (an empty file is shown as empty) is recorded under the
        // file's real identity; one past the end showed nothing, so it is no read.
        let resolved = ws.jail.resolve(&path)?;
        if !ws.config.disable_syntax_check {
            // Parse while the model thinks, so checking its edit is incremental.
            ws.session
                .trees
                .prepare(&ws.jail, &resolved, scan.hash, scan.len);
        }
        ws.session.record_read(
            resolved,
            ReadRecord {
                hash: scan.hash,
                len: scan.len,
            },
        );

        if scan.total_lines == 0 {
            return Ok(format!(
                "{path} is empty (0 bytes). To give it content use ws_write {{\"path\":\"{path}\",\"content\":\"…\",\"allow_shrink\":true}}."
            )
            .into());
        }

        Ok(render(
            &path,
            &scan,
            offset,
            limit,
            ws.config.context_window,
            ceiling,
        ))
    }
}

/// The not-found answer: where to look instead, and up to three similar existing paths.
fn not_found(ws: &Workspace, path: &RelPath) -> ToolError {
    let similar = similar_paths(&ws.jail, path, Want::File);
    ToolError::refused(RefusalClass::NotFound, format!(
        "no such file: {path}.{} Find the right path with ws_glob {{\"pattern\":\"**/{}\"}} or look around with ws_list {{\"path\":\"{}\"}}.",
        did_you_mean(&similar),
        path.file_name(),
        path.parent()
    ))
}

/// One line of the window, possibly cut.
struct Line {
    number: usize,
    text: String,
    /// The whole line's length in characters when it was cut.
    cut_from: Option<usize>,
}

struct Scan {
    total_lines: usize,
    window: Vec<Line>,
    /// True when the window stopped early because the character ceiling was reached.
    trimmed: bool,
    binary: bool,
    hash: [u8; 32],
    len: u64,
}

/// Streams the file once: hashes everything, counts every line, keeps the lines from
/// `offset` on — at most `limit` of them, and no more than `ceiling` characters in all.
fn scan(
    file: &mut impl Read,
    offset: usize,
    limit: usize,
    line_chars: usize,
    ceiling: usize,
) -> std::io::Result<Scan> {
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; CHUNK];
    let mut len: u64 = 0;
    let mut line_no = 1usize;
    let mut window: Vec<Line> = Vec::new();
    let mut window_chars = 0usize;
    let mut trimmed = false;
    let mut window_open = true;
    // The line being collected: kept bytes (at most enough for `line_chars`) and its full
    // length in characters.
    let mut kept: Vec<u8> = Vec::new();
    let mut line_len_chars = 0usize;
    let keep_bytes = line_chars * 4;
    let mut last_byte = b'\n';

    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        if (len as usize) < BINARY_SNIFF_BYTES {
            let sniff = (BINARY_SNIFF_BYTES - len as usize).min(n);
            if memchr::memchr(0, &chunk[..sniff]).is_some() {
                len += n as u64;
                return Ok(Scan {
                    total_lines: 0,
                    window: Vec::new(),
                    trimmed: false,
                    binary: true,
                    hash: [0; 32],
                    len,
                });
            }
        }
        hasher.update(chunk);
        len += n as u64;
        last_byte = chunk[n - 1];

        let mut pos = 0;
        while pos < n {
            if !window_open {
                // Past the window: only count what is left.
                line_no += memchr::memchr_iter(b'\n', &chunk[pos..]).count();
                break;
            }
            let newline = memchr::memchr(b'\n', &chunk[pos..]);
            if line_no < offset {
                // Before the window: skip a line.
                match newline {
                    Some(i) => {
                        line_no += 1;
                        pos += i + 1;
                    }
                    None => pos = n,
                }
                continue;
            }
            let (segment, ends_line) = match newline {
                Some(i) => (&chunk[pos..pos + i], true),
                None => (&chunk[pos..], false),
            };
            let room = keep_bytes.saturating_sub(kept.len());
            kept.extend_from_slice(&segment[..segment.len().min(room)]);
            line_len_chars += count_chars(segment);
            pos += segment.len() + usize::from(ends_line);
            if ends_line {
                let line = finish_line(line_no, &mut kept, &mut line_len_chars, line_chars);
                line_no += 1;
                window_chars += line_cost(&line);
                window.push(line);
                window_open = window.len() < limit && window_chars <= ceiling;
            }
        }
    }
    let total_lines = if len == 0 {
        0
    } else if last_byte == b'\n' {
        line_no - 1
    } else {
        // The last line has no newline; it may still be in the window.
        if window_open && line_no >= offset {
            let line = finish_line(line_no, &mut kept, &mut line_len_chars, line_chars);
            window_chars += line_cost(&line);
            window.push(line);
        }
        line_no
    };
    // The ceiling is hard: drop whole lines from the end until the window fits, keeping one.
    while window.len() > 1 && window_chars > ceiling {
        if let Some(l) = window.pop() {
            window_chars -= line_cost(&l);
            trimmed = true;
        }
    }
    Ok(Scan {
        total_lines,
        window,
        trimmed,
        binary: false,
        hash: *hasher.finalize().as_bytes(),
        len,
    })
}

/// What a line costs in the rendered window: its text plus the `%6d|` gutter and newline.
fn line_cost(line: &Line) -> usize {
    line.text.chars().count() + 8 + if line.cut_from.is_some() { 60 } else { 0 }
}

/// UTF-8 characters in a byte run: every byte that is not a continuation byte starts one.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

fn finish_line(number: usize, kept: &mut Vec<u8>, full_chars: &mut usize, max: usize) -> Line {
    let raw = String::from_utf8_lossy(kept);
    let raw = raw.strip_suffix('\r').unwrap_or(&raw);
    let full = *full_chars;
    let line = if full > max {
        Line {
            number,
            text: raw.chars().take(max).collect(),
            cut_from: Some(full),
        }
    } else {
        Line {
            number,
            text: raw.to_string(),
            cut_from: None,
        }
    };
    kept.clear();
    *full_chars = 0;
    line
}

fn render(
    path: &RelPath,
    scan: &Scan,
    offset: usize,
    limit: usize,
    context_window: usize,
    ceiling: usize,
) -> Reply {
    let mut out = String::new();
    for line in &scan.window {
        out.push_str(&format!("{:6}|{}", line.number, line.text));
        if let Some(full) = line.cut_from {
            out.push_str(&format!(
                "… [line {} cut: {full} chars, showing the first {}]",
                line.number,
                line.text.chars().count()
            ));
        }
        out.push('\n');
    }
    let first = offset;
    let last = scan.window.last().map(|l| l.number).unwrap_or(offset);
    let total = scan.total_lines;
    let shown = last + 1 - first;
    let next_limit = if scan.trimmed { shown.max(1) } else { limit };
    let next_call = format!(
        "ws_read {{\"path\":\"{path}\",\"offset\":{},\"limit\":{next_limit}}}",
        last + 1
    );
    if scan.trimmed {
        out.push_str(&format!(
            "[window trimmed to {shown} lines: one read is capped at about {ceiling} chars (15% of the {context_window}-token context window)]\n"
        ));
    }
    if first > 1 || last < total {
        out.push_str(&format!(
            "[showing lines {first}–{last} of {total} in {path}; use offset= to see more]\n"
        ));
        if last < total {
            out.push_str(&format!(
                "Next page: {next_call}. To jump straight to a symbol use ws_grep first."
            ));
        } else {
            out.push_str(&format!(
                "This is the end of the file. Earlier lines: ws_read {{\"path\":\"{path}\",\"offset\":{},\"limit\":{limit}}}. To jump straight to a symbol use ws_grep first.",
                first.saturating_sub(limit).max(1)
            ));
        }
    }
    Reply {
        text: out.trim_end_matches('\n').to_string(),
        rest_hint: Some(format!(
            "Read a smaller window: ws_read {{\"path\":\"{path}\",\"offset\":{first},\"limit\":{}}}.",
            (shown / 2).max(1)
        )),
        outcome: Outcome::Done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_scan(text: &[u8], offset: usize, limit: usize, ceiling: usize) -> Scan {
        scan(&mut &text[..], offset, limit, MAX_LINE_CHARS, ceiling).unwrap()
    }

    #[test]
    fn counts_lines_with_and_without_final_newline() {
        assert_eq!(run_scan(b"a\nb\n", 1, 10, 5000).total_lines, 2);
        assert_eq!(run_scan(b"a\nb", 1, 10, 5000).total_lines, 2);
        assert_eq!(run_scan(b"", 1, 10, 5000).total_lines, 0);
        assert_eq!(run_scan(b"\n", 1, 10, 5000).total_lines, 1);
        let s = run_scan(b"a\nb", 2, 10, 5000);
        assert_eq!(s.window.len(), 1);
        assert_eq!(s.window[0].text, "b");
    }

    #[test]
    fn window_and_crlf() {
        let text: String = (1..=300).map(|i| format!("l{i}\r\n")).collect();
        let s = run_scan(text.as_bytes(), 121, 120, 100_000);
        assert_eq!(s.total_lines, 300);
        assert_eq!(s.window.first().map(|l| l.number), Some(121));
        assert_eq!(s.window.last().map(|l| l.text.as_str()), Some("l240"));
    }

    #[test]
    fn long_line_is_cut_and_counted() {
        let text = "é".repeat(5000);
        let s = run_scan(text.as_bytes(), 1, 10, 100_000);
        assert_eq!(s.window[0].cut_from, Some(5000));
        assert_eq!(s.window[0].text.chars().count(), MAX_LINE_CHARS);
    }

    #[test]
    fn ceiling_trims_the_window() {
        let text: String = (1..=500).map(|i| format!("{i:080}\n")).collect();
        let s = run_scan(text.as_bytes(), 1, 120, 2000);
        assert!(s.trimmed);
        assert!(s.window.len() < 120 && !s.window.is_empty());
        let chars: usize = s.window.iter().map(|l| l.text.len() + 8).sum();
        assert!(chars <= 2000);
        assert_eq!(s.total_lines, 500);
    }

    #[test]
    fn nul_means_binary() {
        let s = run_scan(b"abc\0def", 1, 10, 5000);
        assert!(s.binary);
        assert_eq!(s.len, 7);
    }
}
