//! The rules every edit tool shares: a file is changed only after a fresh read of it, only
//! when it decodes as text, never rewritten wholesale through a partial edit, and a missing
//! file gets the same answer whichever tool asked. They live here, not in one tool, so the
//! tools stay independent of each other and a rule changes for all of them at once.

use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::matching::Numbering;
use crate::path::RelPath;
use crate::suggest::{did_you_mean, similar_paths, Want};
use crate::text::Text;
use crate::workspace::{Freshness, Workspace};

/// The over-edit guard: a change replacing at least this share of a file…
pub const OVER_EDIT_SHARE: f64 = 0.72;
/// …of more than this many bytes is refused in favour of ws_write.
pub const OVER_EDIT_MIN_BYTES: usize = 400;

/// Appended when a pasted ws_read gutter was stripped.
pub const GUTTER_NOTE: &str = "[stripped ws_read line numbers from old_str — do not include them]";

/// Appended when another tool's line numbers were stripped (from old_str, a patch's lines).
pub fn foreign_numbering_note(style: Numbering) -> String {
    format!(
        "[stripped line-number prefixes ({}) from the text to match — line numbers from any read are display only; do not include them]",
        style.example()
    )
}

/// Appended when new_str alone carried the gutter.
pub const NEW_GUTTER_NOTE: &str =
    "[stripped ws_read line numbers from new_str — they are display only; never include them]";

/// The read-before-edit rule: a file not read in this session, or changed on disk since, is
/// not changed. The refusals are the caller's words (`never_read`, `changed`): ws_write's must
/// point at editing in place instead, ws_edit's and ws_patch's at copying old text exactly.
pub fn check_fresh_read(
    ws: &Workspace,
    real: &RelPath,
    current: &[u8],
    never_read: impl FnOnce() -> String,
    changed: impl FnOnce() -> String,
) -> Result<(), ToolError> {
    if !ws.config.read_before_edit {
        return Ok(());
    }
    match ws.session.freshness(real, current) {
        Freshness::Fresh => Ok(()),
        Freshness::NeverRead => Err(ToolError::refused(RefusalClass::NotRead, never_read())),
        Freshness::Changed => Err(ToolError::refused(RefusalClass::Stale, changed())),
    }
}

/// The read-before-edit rule as ws_edit and ws_patch word it.
pub fn require_fresh_read(
    ws: &Workspace,
    path: &RelPath,
    real: &RelPath,
    current: &[u8],
    verb: &str,
) -> Result<(), ToolError> {
    check_fresh_read(
        ws,
        real,
        current,
        || unread_refusal(verb, path),
        || changed_refusal(verb, path),
    )
}

fn unread_refusal(verb: &str, path: &RelPath) -> String {
    format!(
        "{verb} refused — {path} has not been read in this session. Read it first with ws_read {{\"path\":\"{path}\"}}, then copy old_str exactly from what it shows."
    )
}

fn changed_refusal(verb: &str, path: &RelPath) -> String {
    format!(
        "{verb} refused — {path} changed on disk since you read it. Read it again with ws_read {{\"path\":\"{path}\"}} and base the change on what it shows now."
    )
}

/// Decodes a file for editing; non-UTF-8 files are refused rather than risked.
pub fn decode(path: &RelPath, bytes: Vec<u8>) -> Result<Text, ToolError> {
    Text::decode(bytes).map_err(|e| {
        ToolError::refused(
            RefusalClass::Other,
            format!(
            "{path}: {e}. Text edits could corrupt it; change it with a tool made for its format."
        ),
        )
    })
}

/// The over-edit guard, shared by ws_edit and ws_patch.
pub fn over_edit_guard(
    ws: &Workspace,
    path: &RelPath,
    replaced: usize,
    total: usize,
    verb: &str,
) -> Result<(), ToolError> {
    if ws.config.over_edit_guard
        && total > OVER_EDIT_MIN_BYTES
        && replaced as f64 >= OVER_EDIT_SHARE * total as f64
    {
        return Err(ToolError::refused(RefusalClass::OverEdit, format!(
            "{verb} refused by the over-edit guard — this replaces {}% of {path} ({replaced} of {total} bytes). To rewrite most of a file use ws_write with the complete new content (after a ws_read); to change part of it, send a smaller old_str.",
            replaced * 100 / total
        )));
    }
    Ok(())
}

/// The answer when the file to edit does not exist.
pub fn missing_file(ws: &Workspace, path: &RelPath) -> ToolError {
    let similar = similar_paths(&ws.jail, path, Want::File);
    ToolError::refused(RefusalClass::NotFound, format!(
        "no such file: {path}.{} To create it use ws_write {{\"path\":\"{path}\",\"content\":\"…\"}}; to find an existing file use ws_glob {{\"pattern\":\"**/{}\"}}.",
        did_you_mean(&similar),
        path.file_name()
    ))
}
