//! `slmcode map "TASK"`: the repo map `slmcode run` would put in the task message, printed, so
//! a user can see where a small model will start and tune `repo_map_tokens`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use slmcode_agent::prompt;

use super::common::open_workspace;
use crate::terminal::{self, errln};

/// The arguments of `slmcode map`.
#[derive(clap::Args)]
pub struct MapArgs {
    /// The task, as it would be given to `slmcode run`.
    task: String,
    /// Tokens the map may take (default: the config's repo_map_tokens, 1,024).
    #[arg(long)]
    tokens: Option<usize>,
    /// Project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// `slmcode map TASK`: the map on stdout; what it cost and what the index did on stderr.
pub fn run(MapArgs { task, tokens, root }: MapArgs) -> Result<ExitCode> {
    let mut ws = open_workspace(root)?;
    let tokens = tokens.unwrap_or(ws.config.repo_map_tokens);
    let instructions = prompt::project_instructions(&ws.jail);
    let started = Instant::now();
    let map = prompt::repo_map(&mut ws, &task, instructions.as_deref(), tokens);
    let elapsed = started.elapsed();
    let indexed = ws.session.symbols.files().count();
    let Some(map) = map else {
        errln!(
            "slmcode: no repo map: {}",
            if tokens == 0 {
                "repo_map_tokens is 0".to_string()
            } else {
                format!("no definitions in {indexed} indexed code files fit in {tokens} tokens")
            }
        );
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(terminal::stdout(), "{}", map.text)?;
    errln!(
        "slmcode: {} definitions from {} files, ~{} of {tokens} tokens; {indexed} code files indexed; {} ms",
        map.definitions,
        map.files,
        prompt::map_tokens(&map.text),
        elapsed.as_millis()
    );
    Ok(ExitCode::SUCCESS)
}
