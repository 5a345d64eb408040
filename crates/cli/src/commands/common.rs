//! What every subcommand shares: the project root and its workspace, the tool registry with
//! the project's trusted hooks, and the way a result is reported.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use slmcode_aci::ToolError;
use slmcode_aci::{Config, Registry, Workspace};
use slmcode_agent::approvals::Approvals;
use slmcode_agent::user_config::UserConfig;
use slmcode_agent::{launch, specialist};

use super::run;
use crate::terminal::{self, errln};

/// The coding registry, or the specialist one with the user's MCP servers and endpoint (whose
/// tokens then join the secrets results are cleaned of).
pub fn registry(specialist: bool, ws: &mut Workspace) -> Result<Registry> {
    let registry = if specialist {
        let user = UserConfig::load()?;
        user.add_secrets(&mut ws.secrets);
        let backend = run::backend(&ws.config, true)?;
        specialist::specialist_registry(&user, ws.jail.root(), backend)
            .context("cannot start the specialist tools")?
    } else {
        Registry::coding()
    };
    with_project_hooks(registry, ws)
}

/// Attaches the project's hooks when the user trusted this content of hooks.json; otherwise
/// says on stderr that they do not run. A trusted file that cannot be read stops the command:
/// the user relies on those hooks.
pub fn with_project_hooks(registry: Registry, ws: &Workspace) -> Result<Registry> {
    Ok(match launch::project_hooks(ws, &mut run::say)? {
        Some(hooks) => registry.with_hooks(Arc::new(hooks)),
        None => registry,
    })
}

/// Prints a subcommand's result: the text on stdout, or the error on stderr with exit 1.
pub fn report(what: &str, result: Result<String, ToolError>) -> Result<ExitCode> {
    // Staged diffs, file names and transcripts come from the project: a person's streams
    // show them escaped.
    match result {
        Ok(text) => {
            writeln!(terminal::stdout(), "{}", text.trim_end())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            errln!("{what}: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The given root, or the current directory.
/// The files a run changed, in words: the end of `slmcode run` and of each message of a
/// session say it the same way.
pub fn files_changed(files: &[String]) -> String {
    if files.is_empty() {
        "no files changed".to_string()
    } else {
        format!("{} file(s) changed: {}", files.len(), files.join(", "))
    }
}

/// Runs `work` on `runtime` with `cancel` set by the first Ctrl-C: a run stops where it is
/// and says so, instead of the process dying mid-write.
pub fn until_ctrl_c<T>(
    runtime: &tokio::runtime::Runtime,
    cancel: &tokio_util::sync::CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> T {
    let stop = cancel.clone();
    runtime.block_on(async move {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        });
        work.await
    })
}

fn project_root(root: Option<PathBuf>) -> Result<PathBuf> {
    match root {
        Some(r) => Ok(r),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

/// Opens the project root with its config; config warnings go to stderr, never into a result.
pub fn open_workspace(root: Option<PathBuf>) -> Result<Workspace> {
    let root = project_root(root)?;
    if !root.is_dir() {
        bail!(
            "project root {} is not a directory (pass --root DIR)",
            root.display()
        );
    }
    let jail = slmcode_aci::path::Jail::open(&root)
        .with_context(|| format!("cannot open project root {}", root.display()))?;
    // What a killed run left behind (staged temps, checkpoints without a manifest).
    slmcode_aci::leftovers::sweep(&jail);
    let user = UserConfig::settings_file()?;
    let canonical = jail.root().to_path_buf();
    let (config, warnings) = Config::load(&jail, user.as_ref(), std::env::vars(), |hash| {
        Approvals::CONFIG.is_approved(&canonical, hash)
    })?;
    for w in warnings {
        errln!("slmcode: warning: {w}");
    }
    Ok(Workspace::new(jail, config))
}
