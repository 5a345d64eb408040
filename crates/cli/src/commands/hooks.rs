//! `slmcode hooks`: the project's .slmcode/hooks.json — list its hooks, or trust / untrust
//! its content. Hooks run only when the user trusted exactly this content.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Subcommand;
use slmcode_agent::approvals::Approvals;
use slmcode_agent::hooks;

use super::common::open_workspace;
use crate::terminal;

/// The arguments of `slmcode hooks`.
#[derive(clap::Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    action: HooksAction,
    /// Project root (default: the current directory).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
}

#[derive(Subcommand)]
enum HooksAction {
    /// Each hook, and whether this content is trusted.
    List,
    /// Trust the current content of .slmcode/hooks.json for this project.
    Trust,
    /// Withdraw the trust.
    Untrust,
}

/// `slmcode hooks ACTION`. `untrust` withdraws the trust even when the file is gone or
/// cannot be read.
pub fn run(args: HooksArgs) -> Result<ExitCode> {
    let ws = open_workspace(args.root)?;
    let action = args.action;
    let root = ws.jail.root();
    if matches!(action, HooksAction::Untrust) {
        // Withdrawing trust needs nothing from the file: a broken or missing one is the very
        // case where the user wants to run without its hooks.
        Approvals::HOOKS
            .set(root, None)
            .map_err(|e| anyhow::anyhow!(e))?;
        writeln!(
            terminal::stdout(),
            "hooks of {} are no longer trusted",
            root.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let file = match hooks::load(&ws.jail) {
        Ok(Some(f)) => f,
        Ok(None) => {
            writeln!(
                terminal::stdout(),
                "no .slmcode/hooks.json in {}",
                root.display()
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        Err((_, e)) => bail!(e),
    };
    let mut out = terminal::stdout();
    match action {
        HooksAction::List => {
            for h in file.hooks.pre.iter().chain(&file.hooks.post) {
                writeln!(
                    out,
                    "{:<11} {:<20} {}  (timeout {} s)",
                    h.event,
                    h.matcher,
                    h.command,
                    h.timeout.as_secs()
                )?;
            }
            let trusted = Approvals::HOOKS.is_approved(root, &file.hash);
            writeln!(
                out,
                "{}",
                if trusted {
                    "trusted: these hooks run".to_string()
                } else {
                    "NOT trusted: these hooks do not run until you review them and `slmcode hooks trust`".to_string()
                }
            )?;
        }
        HooksAction::Trust => {
            Approvals::HOOKS
                .set(root, Some(&file.hash))
                .map_err(|e| anyhow::anyhow!(e))?;
            writeln!(
                out,
                "trusted .slmcode/hooks.json ({} hook(s), content {}) for {}",
                file.hooks.pre.len() + file.hooks.post.len(),
                &file.hash[..12],
                root.display()
            )?;
        }
        // Answered before the file was read.
        HooksAction::Untrust => {}
    }
    Ok(ExitCode::SUCCESS)
}
