//! ws_write: creates files (and their directories). Overwriting is allowed only after a fresh
//! ws_read, a large file is not silently replaced by a tiny one, and an empty body is never
//! mistaken for content.

use std::borrow::Cow;

use crate::edit_rules::check_fresh_read;
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::mutation::{self, commit, read_all};
use crate::outcome::{Applied, Outcome, Write};
use crate::path::RelPath;
use crate::registry::{
    unknown_args_error, Args, Effect, Kind, Param, Reply, Tool, ToolSpec, FILE_PATH_ALIASES,
};
use crate::text::Text;
use crate::workspace::Workspace;

/// Files above this size are protected by the truncation guard.
pub const SHRINK_GUARD_MIN_BYTES: usize = 400;

pub struct WriteTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_write",
    description: Cow::Borrowed(
        "Create a new file (and its directories); overwriting needs a ws_read first.",
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
            name: "content",
            kind: Kind::String,
            required: false,
            description: "the complete file content",
            aliases: &["contents", "text", "body"],
        },
        Param {
            name: "allow_shrink",
            kind: Kind::Boolean,
            required: false,
            description: "allow much shorter content than the file has",
            aliases: &[],
        },
    ],
    example: "{\"path\":\"src/util.py\",\"content\":\"def helper():\\n    return 1\\n\"}",
    effect: Effect {
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: false,
    },
    passes_unknown_args: true,
    rest_hint: "",
};

const BODY_KEYS: &str = "\"content\" (also accepted: \"contents\", \"text\", \"body\")";

impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let path = ws.jail.parse(args.str("path").unwrap_or_default())?;
        let target = mutation::target(ws, &path, "write")?;
        let content = args.str("content").unwrap_or_default();
        let allow_shrink = args.flag("allow_shrink");
        let unknown = args.unknown();
        let unknown_note = if unknown.is_empty() {
            String::new()
        } else {
            format!(
                " This call sent unrecognized key(s) {} — the text belongs under \"content\".",
                unknown
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if content.is_empty() && !target.exists() {
            return Err(ToolError::refused(RefusalClass::Args, format!(
                "Write refused — content is empty, so this would create {path} as a 0-byte file. Put the file's text in {BODY_KEYS}.{unknown_note}"
            )));
        }
        if !unknown.is_empty() {
            return Err(unknown_args_error(&SPEC, unknown));
        }

        let mut notes = Vec::new();
        let mut bytes = content.as_bytes().to_vec();
        let mut was_lines = None;
        let mut before = None;
        if target.exists() {
            let current = read_all(&ws.jail, &target.real)?;
            check_fresh_read(
                ws,
                &target.real,
                &current,
                || unread_refusal(&path),
                || changed_refusal(&path),
            )?;
            if content.is_empty() && !allow_shrink {
                return Err(ToolError::refused(RefusalClass::Shrink, format!(
                    "Write refused — content is empty, so this would empty {path} ({} bytes). Emptying an existing file needs \"allow_shrink\": true.",
                    current.len()
                )));
            }
            // Keep the file's conventions a model cannot type: CRLF endings and a BOM.
            if let Ok(text) = Text::decode(current.clone()) {
                let own_bom = content.starts_with('\u{feff}');
                let kept_bom = text.has_bom() && !own_bom;
                if text.has_crlf() && !content.contains("\r\n") && content.contains('\n') {
                    // Spliced over the whole file: each line keeps its own ending (a kept or
                    // changed line as before, an added one as the line above), and the BOM.
                    let body = content.strip_prefix('\u{feff}').unwrap_or(content);
                    bytes = text.splice(&[(text.whole(), body.to_string())]);
                    if own_bom && !text.has_bom() {
                        bytes.splice(0..0, *b"\xEF\xBB\xBF");
                    }
                    notes.push(if text.mixes_endings() {
                        "[kept each line's own CRLF or LF ending]"
                    } else {
                        "[kept the file's CRLF line endings]"
                    });
                } else if kept_bom {
                    bytes.splice(0..0, *b"\xEF\xBB\xBF");
                }
                if kept_bom {
                    notes.push("[kept the file's byte-order mark]");
                }
            }
            if current.len() > SHRINK_GUARD_MIN_BYTES
                && bytes.len() * 2 < current.len()
                && !allow_shrink
            {
                return Err(ToolError::refused(RefusalClass::Shrink, format!(
                    "write refused — this would shrink {path} from {} to {} bytes ({}% of its size). To change part of the file use ws_edit. If you really mean to replace it with this shorter content, repeat the call with \"allow_shrink\": true.",
                    current.len(),
                    bytes.len(),
                    bytes.len() * 100 / current.len()
                )));
            }
            if bytes == current {
                let text = format!("{path} already has exactly this content; nothing was written.");
                return Ok(Reply::from(text).with_outcome(Outcome::Written(Write {
                    created: false,
                    changed: false,
                    applied: Applied::Written,
                })));
            }
            was_lines = Some(count_lines(&current));
            before = Some(current);
        }

        let lines = count_lines(&bytes);
        let len = bytes.len();
        let done = commit(ws, &path, before.as_deref(), bytes, "ws_write")?;
        let mut summary = match was_lines {
            None => format!("created {path} ({}, {len} bytes)", count(lines, "line")),
            Some(was) => format!(
                "wrote {path} ({}, {len} bytes; was {})",
                count(lines, "line"),
                count(was, "line")
            ),
        };
        for note in notes {
            summary.push(' ');
            summary.push_str(note);
        }
        let outcome = Outcome::Written(Write {
            created: was_lines.is_none(),
            changed: true,
            applied: done.done.applied(),
        });
        Ok(Reply::from(done.present(&summary)).with_outcome(outcome))
    }
}

/// ws_write's read-before-edit refusals: unlike ws_edit's, they say how to change part of a
/// file in place, since a model overwriting an unread file usually meant to edit it.
fn unread_refusal(path: &RelPath) -> String {
    format!(
        "write refused — {path} already exists and has not been read in this session. To change part of it, edit it in place:\n  1. ws_read {{\"path\":\"{path}\"}}\n  2. ws_edit {{\"path\":\"{path}\",\"old_str\":\"<lines copied from ws_read, without the 42| prefix>\",\"new_str\":\"<the new lines>\"}}\nTo replace the whole file, ws_read it first, then send this ws_write again."
    )
}

fn changed_refusal(path: &RelPath) -> String {
    format!(
        "write refused — {path} changed on disk since you read it. Read it again with ws_read {{\"path\":\"{path}\"}} before overwriting it."
    )
}

/// "1 line", "2 lines".
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn count_lines(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}
