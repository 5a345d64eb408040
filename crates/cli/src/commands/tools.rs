//! `slmcode tools`: the tools a model is offered, with their descriptions and argument
//! schemas, as text or JSON.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use slmcode_aci::Registry;

use super::common::{open_workspace, registry};
use crate::terminal;

/// The arguments of `slmcode tools`.
#[derive(clap::Args)]
pub struct ToolsArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
    /// The specialist set: the coding tools plus mcp_call (starts the user's MCP servers
    /// to list their tools).
    #[arg(long)]
    specialist: bool,
    /// Project root the specialist tools start in (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
}

/// `slmcode tools`.
pub fn run(args: ToolsArgs) -> Result<ExitCode> {
    let registry = if args.specialist {
        let mut ws = open_workspace(args.root)?;
        registry(true, &mut ws)?
    } else {
        Registry::coding()
    };
    print_tools(&registry, args.json)?;
    Ok(ExitCode::SUCCESS)
}

fn print_tools(registry: &Registry, json: bool) -> Result<()> {
    if json {
        let list: Vec<serde_json::Value> = registry
            .specs()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.schema(),
                    "read_only": s.effect.read_only,
                    "destructive": s.effect.destructive,
                    "idempotent": s.effect.idempotent,
                    "open_world": s.effect.open_world,
                })
            })
            .collect();
        writeln!(
            terminal::machine_stdout(),
            "{}",
            serde_json::to_string_pretty(&list)?
        )?;
        return Ok(());
    }
    let mut out = terminal::stdout();
    for spec in registry.specs() {
        writeln!(out, "{}\n  {}", spec.name, spec.description)?;
        for p in spec.params {
            let what = if p.description.is_empty() {
                String::new()
            } else {
                format!(": {}", p.description)
            };
            writeln!(
                out,
                "    {}{}{what}",
                p.name,
                if p.required { " (required)" } else { "" },
            )?;
        }
        writeln!(out, "  e.g. slmcode tool {} '{}'", spec.name, spec.example)?;
    }
    Ok(())
}
