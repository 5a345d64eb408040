//! `slmcode evolve`: what the edit-format bandit learned — `stats` per model family and
//! language, `why` for the next choice, `reset` to forget.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Subcommand;
use slmcode_agent::evolve::{self, Evolve};

use super::common::open_workspace;
use super::run;
use crate::terminal;

/// The arguments of `slmcode evolve`.
#[derive(clap::Args)]
pub struct EvolveArgs {
    #[command(subcommand)]
    action: EvolveAction,
}

#[derive(Subcommand)]
enum EvolveAction {
    /// Each model family and language: arms with pulls and means, and the drift profile.
    Stats,
    /// Why the next run would take the edit format it takes.
    Why {
        /// The model id (default: the configured model).
        #[arg(long)]
        model: Option<String>,
        /// The language (default: the project's most common one).
        #[arg(long)]
        language: Option<String>,
        /// Project root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Forget everything learned.
    Reset,
}

/// `slmcode evolve ACTION`.
pub fn run(args: EvolveArgs) -> Result<ExitCode> {
    let Some(path) = Evolve::default_path() else {
        bail!("no HOME or XDG_DATA_HOME, so there is no learned state");
    };
    let mut out = terminal::stdout();
    match args.action {
        EvolveAction::Stats => {
            let state = Evolve::load(&path)?;
            writeln!(out, "{}", state.stats().trim_end())?;
        }
        EvolveAction::Why {
            model,
            language,
            root,
        } => {
            let state = Evolve::load(&path)?;
            let ws = open_workspace(root)?;
            let model = model.or(ws.config.model.clone()).ok_or_else(|| {
                anyhow::anyhow!("name the model: --model ID (or set model: in the config)")
            })?;
            let language = match language {
                Some(l) => l,
                None => run::task_language("", &ws).to_string(),
            };
            writeln!(
                out,
                "{}",
                state
                    .why(&evolve::model_family(&model), &language)
                    .trim_end()
            )?;
        }
        EvolveAction::Reset => {
            let removed = Evolve::reset(&path)?;
            writeln!(
                out,
                "{}",
                if removed {
                    format!("forgot everything learned ({} removed)", path.display())
                } else {
                    "nothing learned yet".to_string()
                }
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
