//! ws_edit: replace old_str with new_str, exactly once — through the match ladder, so drifted
//! whitespace, indentation, blank lines or a pasted gutter still land, and an ambiguous match
//! never does.

use std::borrow::Cow;

use crate::edit_rules::{
    decode, foreign_numbering_note, missing_file, over_edit_guard, require_fresh_read, GUTTER_NOTE,
    NEW_GUTTER_NOTE,
};
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::matching::{self, Gutter, Ladder, Query, Rung};
use crate::mutation::{self, commit, read_all};
use crate::outcome::{Edit, Outcome};
use crate::path::RelPath;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, FILE_PATH_ALIASES};
use crate::workspace::Workspace;

pub struct EditTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_edit",
    description: Cow::Borrowed("Replace old_str with new_str in a file, exactly once. Copy old_str from ws_read without the \"42|\" prefix."),
    params: &[
        Param {
            name: "path",
            kind: Kind::String,
            required: true,
            description: "",
            aliases: FILE_PATH_ALIASES,
        },
        Param {
            name: "old_str",
            kind: Kind::String,
            required: false,
            description: "the exact text to replace",
            aliases: &["old_string", "search", "old"],
        },
        Param {
            name: "new_str",
            kind: Kind::String,
            required: true,
            description: "the replacement (\"\" deletes old_str)",
            aliases: &["new_string", "replace", "new"],
        },
        Param {
            name: "replace_all",
            kind: Kind::Boolean,
            required: false,
            description: "replace every match",
            aliases: &["replaceAll"],
        },
    ],
    example: "{\"path\":\"src/app.py\",\"old_str\":\"def load():\\n    return 1\\n\",\"new_str\":\"def load():\\n    return 2\\n\"}",
    effect: Effect { read_only: false, destructive: true, idempotent: false, open_world: false },
    passes_unknown_args: false,
    rest_hint: "",
};

impl Tool for EditTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let path = ws.jail.parse(args.str("path").unwrap_or_default())?;
        let target = mutation::target(ws, &path, "edit")?;
        if !target.exists() {
            return Err(missing_file(ws, &path));
        }
        let old = args
            .str("old_str")
            .unwrap_or_default()
            .replace("\r\n", "\n");
        let new = args
            .str("new_str")
            .unwrap_or_default()
            .replace("\r\n", "\n");
        let replace_all = args.flag("replace_all");
        // A ws_read gutter on new_str alone (old_str carries none on every line: lines of
        // old_str that merely look like one are the file's own text): pasted, never meant for
        // the file — stripped when every line carries it, refused when only some do.
        let mut new_gutter_note = None;
        let mut new = new;
        if !matches!(matching::gutter(&old), Gutter::Every(_)) && matching::gutter_is_pasted(&new) {
            match matching::gutter(&new) {
                Gutter::Every(stripped) => {
                    new = stripped;
                    new_gutter_note = Some(NEW_GUTTER_NOTE);
                }
                Gutter::Some(lines) => {
                    return Err(ToolError::refused(
                        RefusalClass::Args,
                        partial_new_gutter_refusal(&lines),
                    ))
                }
                Gutter::None => {}
            }
        }
        if old.trim().is_empty() {
            return Err(ToolError::refused(
                RefusalClass::Args,
                empty_old_refusal(&path),
            ));
        }
        // A pasted ws_read gutter: the text without it, tried only when the text as sent
        // does not land (`1|2 => …` match arms look like a gutter but are real code).
        let gutter = matching::gutter(&old);
        let stripped = match &gutter {
            Gutter::Every(old_stripped) if old_stripped.trim().is_empty() => {
                return Err(ToolError::refused(
                    RefusalClass::Args,
                    empty_old_refusal(&path),
                ))
            }
            Gutter::Every(old_stripped) => {
                let new_stripped = match matching::gutter(&new) {
                    Gutter::Every(n) => n,
                    _ => new.clone(),
                };
                Some((old_stripped.clone(), new_stripped))
            }
            _ => None,
        };
        if old == new || stripped.as_ref().is_some_and(|(o, n)| o == n) {
            return Err(ToolError::refused(RefusalClass::Args,
                "No-op edit refused — old_str and new_str are identical. Put the changed text in new_str.".into(),
            ));
        }

        let current = read_all(&ws.jail, &target.real)?;
        require_fresh_read(ws, &path, &target.real, &current, "edit")?;
        let text = decode(&path, current)?;
        let run = |old: &str, new: &str| {
            matching::run(
                text.view(),
                &Query {
                    old,
                    new,
                    first_line_in: None,
                    whole_lines: false,
                    replace_all,
                },
            )
        };
        let mut gutter_stripped = new_gutter_note.is_some();
        let mut notes: Vec<String> = new_gutter_note.into_iter().map(String::from).collect();
        let mut verdict = run(&old, &new);
        let mut searched = old.as_str();
        if !matches!(verdict, Ladder::Landed { .. }) {
            match (&gutter, &stripped) {
                (_, Some((o, n))) => {
                    verdict = run(o, n);
                    searched = o;
                    notes.push(GUTTER_NOTE.to_string());
                    gutter_stripped = true;
                }
                (Gutter::Some(lines), _) => {
                    return Err(ToolError::refused(
                        RefusalClass::Args,
                        partial_gutter_refusal(lines),
                    ))
                }
                _ => {}
            }
        }
        // Another agent's line numbers (`cat -n`, `12→`, `L12: `, `12:`) on every line of
        // old_str, running on: stripped the same way, tried only when nothing else landed.
        // `  12:     x` reads as `%4d: ` or as `12:` before an indented line; the reading
        // that lands on the closest rung is the one the file confirms.
        if !matches!(verdict, Ladder::Landed { .. }) && stripped.is_none() {
            let best = matching::foreign_numbering(&old)
                .into_iter()
                .filter_map(|(style, old_stripped)| {
                    let new_stripped = style.strip(&new).unwrap_or_else(|| new.clone());
                    if old_stripped.trim().is_empty() || old_stripped == new_stripped {
                        return None;
                    }
                    match run(&old_stripped, &new_stripped) {
                        landed @ Ladder::Landed { rung, .. } => Some((rung.bend(), style, landed)),
                        _ => None,
                    }
                })
                .min_by_key(|(bend, ..)| *bend);
            if let Some((_, style, landed)) = best {
                verdict = landed;
                notes.push(foreign_numbering_note(style));
                gutter_stripped = true;
            }
        }
        let (rung, edits) = match verdict {
            Ladder::Landed { rung, edits } => {
                if let Some(note) = rung.note() {
                    notes.insert(0, note.to_string());
                }
                (rung, edits)
            }
            Ladder::Ambiguous { rung, count, lines } => {
                return Err(ToolError::refused(
                    RefusalClass::Ambiguous { count },
                    ambiguous_refusal(&path, rung, count, &lines),
                ))
            }
            Ladder::NotFound => {
                return Err(ToolError::refused(
                    RefusalClass::NotFound,
                    not_found(&path, text.view(), searched),
                ))
            }
        };
        let replaced: usize = edits.iter().map(|e| text.original_len(&e.range)).sum();
        over_edit_guard(ws, &path, replaced, text.original().len(), "edit")?;
        let count = edits.len();
        let bytes = text.splice(
            &edits
                .into_iter()
                .map(|e| (e.range, e.text))
                .collect::<Vec<_>>(),
        );
        let done = commit(ws, &path, Some(text.original()), bytes, "ws_edit")?;
        let mut summary = format!("edited {path} ({count} replacement(s))");
        for note in notes {
            summary.push(' ');
            summary.push_str(&note);
        }
        let outcome = Outcome::Edited(Edit {
            rung,
            gutter: gutter_stripped,
            hunks: Vec::new(),
            applied: done.done.applied(),
        });
        Ok(Reply::from(done.present(&summary)).with_outcome(outcome))
    }
}

fn partial_new_gutter_refusal(lines: &[usize]) -> String {
    let shown = lines
        .iter()
        .take(5)
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Edit refused — new_str has ws_read line-number prefixes (\"  42|\") on some lines (line {shown} of new_str) but not on others; they would be written into the file. The prefix is display only: remove it from every line of new_str and send the edit again."
    )
}

fn empty_old_refusal(path: &RelPath) -> String {
    format!(
        "Edit refused — old_str is empty (or only whitespace). An empty search matches everywhere, so it cannot say where the change goes. Say what you mean:\n\
         • create a new file → ws_write {{\"path\":\"…\",\"content\":\"…\"}}\n\
         • append to {path} → old_str = its last 2–3 lines, new_str = those lines followed by the new text\n\
         • insert → old_str = 2–3 lines next to the spot, new_str = the same lines with the new ones added"
    )
}

fn partial_gutter_refusal(lines: &[usize]) -> String {
    let shown = lines
        .iter()
        .take(5)
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "Edit refused — old_str has ws_read line-number prefixes (\"  42|\") on some lines (line {shown} of old_str) but not on others. The prefix is display only and never part of the file. Remove it from every line:\n\
         before: \"    41|    x = 1\\n    y = 2\"\n\
         after:  \"    x = 1\\n    y = 2\""
    )
}

/// The refusal for an ambiguous match, naming the strategy and every candidate line.
pub fn ambiguous_refusal(path: &RelPath, rung: Rung, count: usize, lines: &[usize]) -> String {
    let shown = lines
        .iter()
        .take(20)
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if rung == Rung::Exact {
        format!(
            "old_str found {count} times in {path} (at lines {shown}) — pass replace_all:true, or include more surrounding context so it matches exactly once. Do NOT use ws_write."
        )
    } else {
        format!(
            "Ambiguous edit refused — the search text matches {count} places in {path} (at lines {shown}) under the {} match. Include more surrounding context so it matches once, or pass replace_all:true to replace every one.",
            rung.label()
        )
    }
}

/// Not-found guidance: the closest region with line numbers, differing lines marked.
pub fn not_found(path: &RelPath, view: &str, old: &str) -> String {
    let mut out = format!(
        "old_str not found in {path} — not exactly, nor ignoring trailing whitespace, indentation or blank lines, nor on first+last line anchors."
    );
    match matching::closest(view, old) {
        Some(region) => {
            let (first, last) = (
                region.lines.first().map(|l| l.0).unwrap_or(1),
                region.lines.last().map(|l| l.0).unwrap_or(1),
            );
            out.push_str(&format!(
                "\nThe closest region is lines {first}–{last} (lines marked > differ from your old_str):\n"
            ));
            for (n, line, differs) in &region.lines {
                out.push_str(&format!(
                    "{}{n:5}|{line}\n",
                    if *differs { ">" } else { " " }
                ));
            }
            out.push_str(&format!(
                "Re-read it with ws_read {{\"path\":\"{path}\",\"offset\":{first},\"limit\":{}}} and copy old_str exactly, without the line-number prefix. Do NOT use ws_write.",
                last + 1 - first
            ));
        }
        None => out.push_str(&format!(
            "\nNothing in the file resembles it. Find the right place with ws_grep {{\"pattern\":\"…\",\"path\":\"{path}\"}}, then ws_read around it."
        )),
    }
    out
}
