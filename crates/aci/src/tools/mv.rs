//! ws_mv: the supported way to rename — rewriting a file under a new name and leaving the old
//! one behind is a common small-model failure. Uses `git mv` for tracked files in a git
//! checkout, otherwise a rename; never overwrites.

use std::borrow::Cow;

use crate::error::RefusalClass;
use crate::error::ToolError;
use crate::mutation::{self, Moved};
use crate::registry::{Args, Effect, Kind, Param, Reply, Tool, ToolSpec};
use crate::workspace::Workspace;

pub struct MvTool;

static SPEC: ToolSpec = ToolSpec {
    name: "ws_mv",
    description: Cow::Borrowed("Move or rename a file (git mv when tracked); never overwrites."),
    params: &[
        Param {
            name: "from",
            kind: Kind::String,
            required: true,
            description: "",
            aliases: &["source", "src", "path", "old_path", "from_path"],
        },
        Param {
            name: "to",
            kind: Kind::String,
            required: true,
            description: "",
            aliases: &[
                "destination",
                "dest",
                "dst",
                "new_path",
                "to_path",
                "target",
            ],
        },
    ],
    example: "{\"from\":\"src/util.py\",\"to\":\"src/helpers/util.py\"}",
    effect: Effect {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    },
    passes_unknown_args: false,
    rest_hint: "",
};

impl Tool for MvTool {
    fn spec(&self) -> &ToolSpec {
        &SPEC
    }

    fn run(&self, ws: &mut Workspace, args: &Args) -> Result<Reply, ToolError> {
        let from = ws.jail.parse(args.str("from").unwrap_or_default())?;
        let to = ws.jail.parse(args.str("to").unwrap_or_default())?;
        if from == to {
            return Err(ToolError::refused(
                RefusalClass::Args,
                format!("move refused — from and to are both {from}. Give the new path in \"to\"."),
            ));
        }
        let (how, not_saved) = mutation::rename(ws, &from, &to)?;
        let mut text = match how {
            Moved::GitMv => format!("moved {from} → {to} (git mv)"),
            Moved::Renamed => format!("moved {from} → {to} (renamed)"),
            Moved::DryRun => format!("[dry-run — nothing was written] would move {from} → {to}"),
        };
        for n in &not_saved {
            text.push('\n');
            text.push_str(&n.note());
        }
        Ok(text.into())
    }
}
