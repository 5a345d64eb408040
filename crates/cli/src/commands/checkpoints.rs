//! `slmcode checkpoints`: what the tools saved before changing files — list the sessions,
//! show what one saved, or restore it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use slmcode_aci::checkpoint::{self, Saved};
use slmcode_aci::ToolError;

use super::common::{open_workspace, report};

/// The arguments of `slmcode checkpoints`.
#[derive(clap::Args)]
pub struct CheckpointsArgs {
    #[command(subcommand)]
    action: CheckpointAction,
    /// Project root (default: the current directory).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
}

#[derive(Subcommand)]
enum CheckpointAction {
    /// List sessions with checkpoints, oldest first.
    List,
    /// Show what one session saved.
    Show { session: String },
    /// Put back what a session changed (all of it, or the given paths): bytes and modes
    /// restored, files it created removed, moves undone on both paths.
    Restore { session: String, paths: Vec<String> },
}

/// `slmcode checkpoints ACTION`: the result on stdout, or the error on stderr with exit 1.
pub fn run(args: CheckpointsArgs) -> Result<ExitCode> {
    let ws = open_workspace(args.root)?;
    let result = match args.action {
        CheckpointAction::List => checkpoint::list(&ws.jail).map(|list| {
            if list.is_empty() {
                return "no checkpoints".to_string();
            }
            list.iter()
                .map(|m| format!("{}  {} path(s)", m.session, m.entries.len()))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        CheckpointAction::Show { session } => {
            checkpoint::load_manifest(&ws.jail, &session).map(|m| {
                m.entries
                    .iter()
                    .map(|e| describe(&e.path, &e.saved))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        }
        CheckpointAction::Restore { session, paths } => paths
            .iter()
            .map(|p| ws.jail.parse(p).map_err(Into::into))
            .collect::<Result<Vec<_>, ToolError>>()
            .and_then(|paths| checkpoint::restore(&ws.jail, &session, &paths))
            .map(|lines| lines.join("\n")),
    };
    report("slmcode checkpoints", result)
}

/// One line of `checkpoints show`: a path and what was saved of it.
fn describe(path: &str, saved: &Saved) -> String {
    match saved {
        Saved::File { mode, .. } => format!("{path}  file, mode {mode:o}"),
        Saved::Symlink { target } => format!("{path}  symlink to {target}"),
        Saved::Absent => format!("{path}  did not exist"),
        Saved::TooLarge { size } => {
            format!("{path}  not saved ({size} bytes, over checkpoint_max_bytes)")
        }
    }
}
