//! `slmcode init`: writes a commented .slmcode/config.yaml and a .gitignore for the
//! run-state folders.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use slmcode_aci::config::Shown;
use slmcode_aci::path::RelPath;
use slmcode_aci::ToolError;
use slmcode_aci::{state, Config};

use super::common::open_workspace;
use crate::terminal::{self, errln};

/// The arguments of `slmcode init`.
#[derive(clap::Args)]
pub struct InitArgs {
    /// Project root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Replace files that exist.
    #[arg(long)]
    force: bool,
}

/// The commented config `slmcode init` writes: every key a project may set, at its default.
fn config_template() -> String {
    let d = Config::default();
    let mut text = String::from(
        "# slmcode settings for this project. Layers, lowest first: built-in defaults, your\n\
         # ~/.config/slmcode/config.yaml, this file, SLMCODE_<KEY> variables, command-line flags.\n\
         # endpoint, api_key_env, mcp_servers and shell_allow are read only from your own config.\n\
         # `slmcode config show` prints what is in effect and where each value came from.\n\n",
    );
    for Shown { key, value, .. } in d.show() {
        if slmcode_aci::config::USER_ONLY_KEYS.contains(&key) {
            continue;
        }
        // "(none)", "(the model's default)": nothing to uncomment as a value.
        let value = if value.starts_with('(') {
            String::new()
        } else {
            value
        };
        text.push_str(&format!("# {key}: {value}\n"));
    }
    text
}

/// What the run-state folders are: local to this machine, never committed.
const GITIGNORE: &str =
    "# slmcode run state: local to this machine\nruns/\ncheckpoints/\npending/\nscratch/\ntmp/\ncache/\n";

/// `slmcode init`: a file that exists is left as it is unless --force.
pub fn run(args: InitArgs) -> Result<ExitCode> {
    let ws = open_workspace(args.root)?;
    let force = args.force;
    let config = RelPath::root().join(".slmcode").join("config.yaml");
    let ignore = RelPath::root().join(".slmcode").join(".gitignore");
    let mut wrote = Vec::new();
    for (path, text) in [
        (&config, config_template()),
        (&ignore, GITIGNORE.to_string()),
    ] {
        let exists = ws.jail.symlink_metadata(path).is_ok();
        if exists && !force {
            errln!("slmcode init: {path} exists; left as it is (--force replaces it)");
            continue;
        }
        state::write_shared(&ws.jail, path, text.as_bytes())
            .map_err(|e: ToolError| anyhow::anyhow!("{e}"))?;
        wrote.push(path.to_string());
    }
    if !wrote.is_empty() {
        writeln!(terminal::stdout(), "wrote {}", wrote.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}
