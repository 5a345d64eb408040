//! ws_delete: removes a file or a symlink (the link, never what it points to); a directory
//! only with `recursive: true`. Everything removed is checkpointed first, and the result says
//! how to get it back.

use std::borrow::Cow;

use crate::error::ToolError;
use crate::mutation;
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec, FILE_PATH_ALIASES};
use crate::workspace::Workspace;

pub struct DeleteTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_delete",
    description: Cow::Borrowed("Delete a file; a directory needs recursive: true."),
    params: &[
        Param {
            name: "path",
            kind: Kind::String,
            required: true,
            description: "",
            aliases: FILE_PATH_ALIASES,
        },
        Param {
            name: "recursive",
            kind: Kind::Boolean,
            required: false,
            description: "delete a directory and its contents",
            aliases: &["r", "recurse"],
        },
    ],
    example: "{\"path\":\"old/unused.py\"}",
    effect: Effect {
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: false,
    },
    passes_unknown_args: false,
    rest_hint: "",
};

impl Tool for DeleteTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let path = ws.jail.parse(args.str("path").unwrap_or_default())?;
        let deleted = mutation::delete(ws, &path, args.flag("recursive"))?;
        let what = match deleted.paths.len() {
            1 if deleted.paths[0] == path => path.to_string(),
            n => format!("{path} ({n} files)"),
        };
        if deleted.dry_run {
            return Ok(format!("[dry-run — nothing was written] would delete {what}").into());
        }
        let mut text = if deleted.not_saved.len() == deleted.paths.len() {
            format!("deleted {what}")
        } else {
            format!("deleted {what}; {}", mutation::restore_hint(ws, &path))
        };
        for n in &deleted.not_saved {
            text.push('\n');
            text.push_str(&n.note());
        }
        Ok(text.into())
    }
}
