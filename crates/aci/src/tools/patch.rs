//! ws_patch: applies a unified diff or SEARCH/REPLACE blocks to one file, hunk by hunk, with
//! the match ladder inside each hunk's window — and all or nothing: if any hunk misses, nothing
//! is written and the report says which hunks landed where and which failed.

use std::borrow::Cow;

use crate::edit_rules::{
    decode, foreign_numbering_note, missing_file, over_edit_guard, require_fresh_read, GUTTER_NOTE,
};
use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::matching::Rung;
use crate::mutation::{self, commit, read_all};
use crate::outcome::{Edit, HunkReport, Outcome};
use crate::patch::{self, apply_hunks, Form, GutterVariant, Patch};
use crate::path::{PathError, RelPath};
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, FILE_PATH_ALIASES};
use crate::workspace::Workspace;

pub struct PatchTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_patch",
    description: Cow::Borrowed("Apply a unified diff or SEARCH/REPLACE blocks to one file; all hunks or none."),
    params: &[
        Param {
            name: "path",
            kind: Kind::String,
            required: false,
            description: "file (default: from the diff)",
            aliases: FILE_PATH_ALIASES,
        },
        Param {
            name: "patch",
            kind: Kind::String,
            required: true,
            description: "the diff or SEARCH/REPLACE block(s)",
            aliases: &["diff", "hunk", "patch_text", "content"],
        },
    ],
    example: "{\"path\":\"src/app.py\",\"patch\":\"@@ -10,3 +10,3 @@\\n def load():\\n-    return 1\\n+    return 2\\n\"}",
    effect: Effect { read_only: false, destructive: true, idempotent: false, open_world: false },
    passes_unknown_args: false,
    rest_hint: "",
};

impl Tool for PatchTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let parsed = patch::parse(args.str("patch").unwrap_or_default())
            .map_err(|e| ToolError::refused(RefusalClass::Args, format!("patch refused — {e}")))?;
        let (path, header_note) = file_to_patch(ws, args.str("path"), &parsed)?;
        let target = mutation::target(ws, &path, "patch")?;
        if parsed.creates_or_deletes {
            return Err(ToolError::refused(RefusalClass::Args, format!(
                "patch refused — the diff creates or deletes a file (/dev/null in its headers). Create files with ws_write {{\"path\":\"{path}\",\"content\":\"…\"}}; ws_patch changes an existing file."
            )));
        }
        if !target.exists() {
            return Err(missing_file(ws, &path));
        }
        let current = read_all(&ws.jail, &target.real)?;
        require_fresh_read(ws, &path, &target.real, &current, "patch")?;
        let text = decode(&path, current)?;

        // The patch as written first; a pasted ws_read gutter is stripped only when that
        // does not apply (text that looks like a gutter may really be in the file).
        let mut parsed = parsed;
        let mut placement = apply_hunks(text.view(), &parsed);
        if placement.reports.iter().any(Result::is_err) {
            match patch::gutter_variant(&parsed) {
                GutterVariant::Stripped(stripped) => {
                    placement = apply_hunks(text.view(), &stripped);
                    parsed = stripped;
                }
                GutterVariant::Partial => {
                    return Err(ToolError::refused(
                        RefusalClass::Args,
                        format!("patch refused — {}", patch::ParseError::PartialGutter),
                    ))
                }
                GutterVariant::None => {
                    // Another tool's line numbers, stripped only when that lands every hunk;
                    // of two readings (`  12: ` or `12:`), the one whose worst hunk lands on
                    // the closest rung.
                    let best = patch::numbering_variants(&parsed)
                        .into_iter()
                        .filter_map(|(_, stripped)| {
                            let tried = apply_hunks(text.view(), &stripped);
                            let worst = tried
                                .reports
                                .iter()
                                .map(|r| r.as_ref().ok().map(|l| l.report.rung.bend()))
                                .try_fold(0, |worst, bend| bend.map(|b| b.max(worst)))?;
                            Some((worst, tried, stripped))
                        })
                        .min_by_key(|(worst, ..)| *worst);
                    if let Some((_, tried, stripped)) = best {
                        placement = tried;
                        parsed = stripped;
                    }
                }
            }
        }
        let unit = if parsed.form == Form::SearchReplace {
            "block"
        } else {
            "hunk"
        };
        let total = parsed.hunks.len();
        let failed = placement.reports.iter().filter(|r| r.is_err()).count();
        let mut report = String::new();
        for (i, r) in placement.reports.iter().enumerate() {
            let line = match r {
                Ok(landed) => &landed.line,
                Err(failure) => &failure.line,
            };
            report.push_str(&format!("{unit} {}/{total} {line}\n", i + 1));
        }
        // The refusal's class is the first failed hunk's.
        let failure_class = placement
            .reports
            .iter()
            .find_map(|r| r.as_ref().err().map(|f| f.class))
            .unwrap_or(RefusalClass::NotFound);
        if failed > 0 {
            return Err(ToolError::refused(failure_class, format!(
                "patch refused — nothing was written: {failed} of {total} {unit}(s) did not apply.\n{report}Fix the failed {unit}(s) (re-read those lines with ws_read) and send the whole patch again."
            )));
        }
        let replaced: usize = placement
            .edits
            .iter()
            .map(|(r, _)| text.original_len(r))
            .sum();
        over_edit_guard(ws, &path, replaced, text.original().len(), "patch")?;
        let bytes = text.splice(&placement.edits);
        let done = commit(ws, &path, Some(text.original()), bytes, "ws_patch")?;
        let mut summary = format!("patched {path} ({total} {unit}(s))\n{}", report.trim_end());
        let hunks: Vec<HunkReport> = placement
            .reports
            .into_iter()
            .filter_map(Result::ok)
            .map(|landed| landed.report)
            .collect();
        let mut notes: Vec<String> = hunks
            .iter()
            .filter_map(|h| h.rung.note().map(String::from))
            .collect();
        notes.dedup();
        if parsed.gutter_stripped {
            notes.push(GUTTER_NOTE.to_string());
        }
        if let Some(style) = parsed.numbering_stripped {
            notes.push(foreign_numbering_note(style));
        }
        notes.extend(header_note);
        for note in notes {
            summary.push('\n');
            summary.push_str(&note);
        }
        let rung = hunks
            .iter()
            .map(|h| h.rung)
            .max_by_key(|r| r.bend())
            .unwrap_or(Rung::Exact);
        let outcome = Outcome::Edited(Edit {
            rung,
            gutter: parsed.gutter_stripped || parsed.numbering_stripped.is_some(),
            hunks,
            applied: done.done.applied(),
        });
        Ok(Reply::from(done.present(&summary)).with_outcome(outcome))
    }
}

/// The file the patch is for, and a note when its headers name it otherwise.
///
/// `path`, when given, is the target. Headers that name it by a suffix or its base name
/// (`--- a/target.go`, `--- a/myrepo/src/target.go` for `src/target.go`), or that name no
/// existing file, are accepted with a note; only headers naming a *different existing* file
/// are refused, with that file suggested. Without `path`, the headers' file is the target —
/// or, when it does not exist, the one existing file it names with leading directories
/// dropped.
fn file_to_patch(
    ws: &Workspace,
    given: Option<&str>,
    parsed: &Patch,
) -> Result<(RelPath, Option<String>), ToolError> {
    if parsed.files.len() > 1 {
        return Err(ToolError::refused(RefusalClass::Args, format!(
            "patch refused — this diff touches {} files ({}). ws_patch changes one file per call: send one ws_patch per file.",
            parsed.files.len(),
            parsed.files.join(", ")
        )));
    }
    let named = parsed.files.first();
    let is_file = |p: &RelPath| ws.jail.metadata(p).is_ok_and(|m| m.is_file());
    match given.filter(|g| !g.trim().is_empty()) {
        Some(g) => {
            let path = ws.jail.parse(g)?;
            let Some(named) = named else {
                return Ok((path, None));
            };
            let header = ws.jail.parse(named).ok();
            if header.as_ref() == Some(&path) {
                return Ok((path, None));
            }
            if let Some(h) = header.as_ref().filter(|h| is_file(h)) {
                return Err(ToolError::refused(RefusalClass::Args, format!(
                    "patch refused — the diff's ---/+++ headers name {h}, an existing file other than path {path}. Send path \"{h}\" if the diff is for that file, or fix the headers."
                )));
            }
            let how = if names_same_file(named, &path) {
                "which is how they name it"
            } else {
                "a file that does not exist"
            };
            Ok((
                path.clone(),
                Some(format!(
                    "[the diff's headers say {named}, {how}; patched {path} as path says]"
                )),
            ))
        }
        None => {
            let Some(named) = named else {
                return Err(ToolError::Args(
                    "ws_patch needs \"path\" (the file to patch) when the diff has no ---/+++ headers. Example: ws_patch {\"path\":\"src/app.py\",\"patch\":\"@@ -10,3 +10,3 @@\\n …\"}".into(),
                ));
            };
            let header = ws.jail.parse(named).map_err(|e| {
                ToolError::refused(RefusalClass::Args, format!(
                    "patch refused — the diff's header names a bad path: {e}. Send \"path\" with the file to patch."
                ))
            })?;
            // A diff that creates or deletes is refused by the caller, naming this path.
            if is_file(&header) || parsed.creates_or_deletes {
                return Ok((header, None));
            }
            // A header that leads out of the project (or into a loop) is refused for what it
            // is, not searched for as a missing file.
            if let Err(e @ (PathError::Escapes { .. } | PathError::Loop { .. })) =
                ws.jail.metadata(&header)
            {
                return Err(e.into());
            }
            // `myrepo/src/x.go` for `src/x.go`: the longest tail that is a file.
            let comps: Vec<&str> = header.components().collect();
            let tail = (1..comps.len())
                .map(|k| comps[k..].join("/"))
                .filter_map(|t| ws.jail.parse(&t).ok())
                .find(|t| is_file(t));
            match tail {
                Some(t) => Ok((
                    t.clone(),
                    Some(format!("[the diff's headers say {named}; patched {t}, the file they name]")),
                )),
                None => Err(ToolError::refused(RefusalClass::NotFound, format!(
                    "patch refused — the diff's headers name {named}, which does not exist. Send \"path\" with the file to patch (ws_glob {{\"pattern\":\"**/{}\"}} finds it).",
                    header.file_name()
                ))),
            }
        }
    }
}

/// True when a header's name and `path` are the same file named from different roots: one is
/// the other with leading directories dropped, whole components at a time.
fn names_same_file(named: &str, path: &RelPath) -> bool {
    let named = named.trim_start_matches("./");
    let p = path.as_str();
    let tail_of = |long: &str, short: &str| long == short || long.ends_with(&format!("/{short}"));
    !named.is_empty() && (tail_of(p, named) || tail_of(named, p))
}
