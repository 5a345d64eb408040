//! `slmcode config`: the settings — `show` prints every effective key and where it came
//! from; `trust` / `untrust` approve the project's config, which may then loosen safety
//! settings.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use serde_json::json;
use slmcode_aci::config::Shown;
use slmcode_aci::{Config, Workspace};
use slmcode_agent::approvals::Approvals;
use slmcode_agent::user_config::{self, UserConfig};

use super::common::open_workspace;
use crate::terminal;

/// The arguments of `slmcode config`.
#[derive(clap::Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    action: ConfigAction,
    /// Project root (default: the current directory).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Every key, its value, the layer it came from, and what a project asked for and did not get.
    Show {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve the current content of .slmcode/config.yaml: it may then loosen safety settings.
    Trust,
    /// Withdraw the approval.
    Untrust,
}

/// `slmcode config ACTION`.
pub fn run(args: ConfigArgs) -> Result<ExitCode> {
    let ws = open_workspace(args.root)?;
    match args.action {
        ConfigAction::Show { json } => show(&ws, json),
        ConfigAction::Trust => trust_config(&ws, true),
        ConfigAction::Untrust => trust_config(&ws, false),
    }
}

/// `slmcode config show`.
fn show(ws: &Workspace, as_json: bool) -> Result<ExitCode> {
    let user = UserConfig::load()?;
    let user_path = user_config::config_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(no HOME)".into());
    let mut rows = ws.config.show();
    for row in rows.iter_mut() {
        if row.key == "endpoint" && row.from == "default" {
            row.value = slmcode_agent::backend::DEFAULT_ENDPOINT.to_string();
        }
    }
    let servers = if user.mcp_servers.is_empty() {
        "(none)".to_string()
    } else {
        user.mcp_servers
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let servers_origin = if user.mcp_servers.is_empty() {
        "default".to_string()
    } else {
        user_path.clone()
    };
    rows.push(Shown {
        key: "mcp_servers",
        value: servers,
        from: servers_origin,
        ignored: None,
    });
    if as_json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| {
                let mut row = json!({"key": r.key, "value": r.value, "from": r.from});
                if let Some(i) = &r.ignored {
                    row["ignored"] = json!({"value": i.asked, "from": i.source});
                }
                row
            })
            .collect();
        writeln!(
            terminal::machine_stdout(),
            "{}",
            serde_json::to_string_pretty(&list)?
        )?;
    } else {
        let mut out = terminal::stdout();
        let width = rows.iter().map(|r| r.key.len()).max().unwrap_or(0);
        let vwidth = rows
            .iter()
            .map(|r| r.value.chars().count().min(40))
            .max()
            .unwrap_or(0);
        writeln!(
            out,
            "# layers: defaults < {user_path} < .slmcode/config.yaml < SLMCODE_* < flags"
        )?;
        for r in &rows {
            let ignored = r
                .ignored
                .as_ref()
                .map(|i| {
                    format!(
                        "  [IGNORED {}: {} — it would loosen this; `slmcode config trust` approves the file]",
                        i.source, i.asked
                    )
                })
                .unwrap_or_default();
            writeln!(
                out,
                "{:<width$}  {:<vwidth$}  {}{ignored}",
                r.key, r.value, r.from
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `slmcode config trust` / `untrust`: approve (or withdraw the approval of) the current
/// content of the project's config, which may then loosen safety settings.
fn trust_config(ws: &Workspace, trust: bool) -> Result<ExitCode> {
    let root = ws.jail.root();
    let mut out = terminal::stdout();
    if !trust {
        Approvals::CONFIG
            .set(root, None)
            .map_err(|e| anyhow::anyhow!(e))?;
        writeln!(
            out,
            "the config of {} is no longer approved: it may only tighten safety settings",
            root.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(hash) = Config::project_hash(&ws.jail)? else {
        writeln!(out, "no .slmcode/config.yaml in {}", root.display())?;
        return Ok(ExitCode::SUCCESS);
    };
    Approvals::CONFIG
        .set(root, Some(&hash))
        .map_err(|e| anyhow::anyhow!(e))?;
    writeln!(
        out,
        "approved .slmcode/config.yaml (content {}) for {}: its values now apply, loosening ones included; any change needs approving again",
        &hash[..12],
        root.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
