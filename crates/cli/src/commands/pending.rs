//! `slmcode pending`: the review-mode changes waiting under .slmcode/pending/ — list them,
//! show one as a diff, apply or reject it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use slmcode_aci::{pending, review};

use super::common::{open_workspace, report};

/// The arguments of `slmcode pending`.
#[derive(clap::Args)]
pub struct PendingArgs {
    #[command(subcommand)]
    action: PendingAction,
    /// Project root (default: the current directory).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
}

#[derive(Subcommand)]
enum PendingAction {
    /// List staged changes, oldest first.
    List,
    /// Show one staged change as a diff against the file as it is now.
    Show { id: String },
    /// Write one staged change (refused if the file changed since it was staged).
    Apply { id: String },
    /// Drop one staged change.
    Reject { id: String },
}

/// `slmcode pending ACTION`: the result on stdout, or the error on stderr with exit 1.
pub fn run(args: PendingArgs) -> Result<ExitCode> {
    let mut ws = open_workspace(args.root)?;
    let result = match args.action {
        PendingAction::List => pending::list(&ws.jail).map(|list| {
            if list.is_empty() {
                return "no pending changes".to_string();
            }
            list.iter()
                .map(|p| format!("{}  {}  {}", p.id, p.tool, p.path))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        PendingAction::Show { id } => pending::show(&ws.jail, &id),
        PendingAction::Apply { id } => review::apply(&mut ws, &id),
        PendingAction::Reject { id } => pending::reject(&ws.jail, &id),
    };
    report("slmcode pending", result)
}
