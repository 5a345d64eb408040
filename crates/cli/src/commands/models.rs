//! `slmcode models`: the models the endpoint serves, optionally only those matching a query.

use std::process::ExitCode;

use anyhow::Result;

use super::common::open_workspace;
use super::run;

/// The arguments of `slmcode models`.
#[derive(clap::Args)]
pub struct ModelsArgs {
    /// The model server's OpenAI-compatible base URL (default: SLMCODE_ENDPOINT, the
    /// user's config, or Ollama at http://127.0.0.1:11434/v1).
    #[arg(long)]
    endpoint: Option<String>,
    /// Only models whose name contains this.
    #[arg(long)]
    query: Option<String>,
    /// How many to list.
    #[arg(long, default_value_t = slmcode_agent::find_models::DEFAULT_LIMIT)]
    limit: usize,
}

/// `slmcode models`: the settings of the current directory, --endpoint on top; the listing
/// itself is `run::models`, next to the backend it shares with `slmcode run`.
pub fn run(args: ModelsArgs) -> Result<ExitCode> {
    let mut ws = open_workspace(None)?;
    if let Some(e) = args.endpoint {
        ws.config.apply_flag("endpoint", &e, "--endpoint")?;
    }
    run::models(&ws.config, args.query.as_deref(), args.limit)
}
