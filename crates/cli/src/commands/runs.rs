//! `slmcode runs`: the past runs of `slmcode run` logged under .slmcode/runs/ — list them,
//! or show one as a readable transcript.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use slmcode_agent::trajectory;

use super::common::{open_workspace, report};

/// The arguments of `slmcode runs`.
#[derive(clap::Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    action: RunsAction,
    /// Project root (default: the current directory).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
}

#[derive(Subcommand)]
enum RunsAction {
    /// One line per run, oldest first: id, status, turns, task.
    List,
    /// One run as a readable transcript.
    Show { id: String },
}

/// `slmcode runs ACTION`: the result on stdout, or the error on stderr with exit 1.
pub fn run(args: RunsArgs) -> Result<ExitCode> {
    let ws = open_workspace(args.root)?;
    let result = match args.action {
        RunsAction::List => trajectory::list(&ws.jail).map(|l| {
            if l.is_empty() {
                "no runs yet".to_string()
            } else {
                l.join("\n")
            }
        }),
        RunsAction::Show { id } => trajectory::show(&ws.jail, &id),
    };
    report("slmcode runs", result)
}
