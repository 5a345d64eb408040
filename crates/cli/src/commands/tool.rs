//! `slmcode tool`: one tool call, printed exactly as a model would see it (exit 1 when the
//! result is an error).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use slmcode_agent::specialist;

use super::common::{open_workspace, registry};
use crate::terminal;

/// The arguments of `slmcode tool`.
#[derive(clap::Args)]
pub struct ToolArgs {
    /// Tool name, e.g. ws_read.
    name: String,
    /// Arguments as a JSON object, e.g. '{"path":"src/main.rs"}'.
    #[arg(default_value = "{}")]
    args: String,
    /// Project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// `slmcode tool NAME ARGS`.
pub fn run(ToolArgs { name, args, root }: ToolArgs) -> Result<ExitCode> {
    let args: serde_json::Value = serde_json::from_str(&args).with_context(|| {
        format!("the arguments are not valid JSON: {args}\n  e.g. slmcode tool ws_read '{{\"path\":\"src/main.rs\"}}'")
    })?;
    let mut ws = open_workspace(root)?;
    let registry = registry(specialist::is_meta_tool(&name), &mut ws)?;
    let result = registry.call(&mut ws, &name, &args);
    let mut out = terminal::machine_stdout();
    writeln!(out, "{}", result.text)?;
    Ok(if result.is_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
