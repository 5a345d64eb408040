//! `slmcode`: the command line. `tool` runs one call, `session` runs many calls as JSON Lines
//! with state carried between them, `tools` lists what a model is offered.

mod session;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use slmcode_aci::{checkpoint, pending, Config, Registry, Workspace};

#[derive(Parser)]
#[command(
    name = "slmcode",
    version,
    about = "The tool layer that lets small local coding models land real edits"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one tool call and print exactly what a model would see (exit 1 when it is an error).
    Tool {
        /// Tool name, e.g. ws_read.
        name: String,
        /// Arguments as a JSON object, e.g. '{"path":"src/main.rs"}'.
        #[arg(default_value = "{}")]
        args: String,
        /// Project root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Read JSON Lines {"tool": NAME, "args": {...}} on stdin; write one JSON line per call.
    /// State (what was read, the checklist) carries from line to line.
    Session {
        /// Project root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Review-mode changes waiting under .slmcode/pending/: list, show, apply or reject them.
    Pending {
        #[command(subcommand)]
        action: PendingAction,
        /// Project root (default: the current directory).
        #[arg(long, global = true)]
        root: Option<PathBuf>,
    },
    /// Checkpoints the tools saved before changing files: list, show or restore them.
    Checkpoints {
        #[command(subcommand)]
        action: CheckpointAction,
        /// Project root (default: the current directory).
        #[arg(long, global = true)]
        root: Option<PathBuf>,
    },
    /// List the tools with their descriptions and argument schemas.
    Tools {
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum PendingAction {
    /// List staged changes, oldest first.
    List,
    /// Show one staged change as a diff against the file as it is now.
    Show { id: String },
    /// Write one staged change (refused if the file changed since it was staged).
    Apply { id: String },
    /// Drop one staged change.
    Reject { id: String },
}

#[derive(Subcommand)]
enum CheckpointAction {
    /// List sessions with checkpoints, oldest first.
    List,
    /// Show what one session saved.
    Show { session: String },
    /// Put back what a session changed (all of it, or the given paths): bytes and modes
    /// restored, files it created removed, moves undone on both paths.
    Restore { session: String, paths: Vec<String> },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("slmcode: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Tool { name, args, root } => {
            let args: serde_json::Value = serde_json::from_str(&args).with_context(|| {
                format!("the arguments are not valid JSON: {args}\n  e.g. slmcode tool ws_read '{{\"path\":\"src/main.rs\"}}'")
            })?;
            let mut ws = open_workspace(root)?;
            let result = Registry::coding().call(&mut ws, &name, &args);
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", result.text)?;
            Ok(if result.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Session { root } => {
            let mut ws = open_workspace(root)?;
            session::run(
                &Registry::coding(),
                &mut ws,
                std::io::stdin().lock(),
                std::io::stdout().lock(),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Pending { action, root } => {
            let mut ws = open_workspace(root)?;
            let result = match action {
                PendingAction::List => pending::list(&ws.jail).map(|list| {
                    if list.is_empty() {
                        return "no pending changes".to_string();
                    }
                    list.iter()
                        .map(|p| format!("{}  {}  {}", p.id, p.tool, p.path))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
                PendingAction::Show { id } => pending::show(&ws.jail, &id),
                PendingAction::Apply { id } => pending::apply(&mut ws, &id),
                PendingAction::Reject { id } => pending::reject(&ws.jail, &id),
            };
            report("slmcode pending", result)
        }
        Command::Checkpoints { action, root } => {
            let ws = open_workspace(root)?;
            let result = match action {
                CheckpointAction::List => checkpoint::list(&ws.jail).map(|list| {
                    if list.is_empty() {
                        return "no checkpoints".to_string();
                    }
                    list.iter()
                        .map(|m| format!("{}  {} path(s)", m.session, m.entries.len()))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
                CheckpointAction::Show { session } => checkpoint::load_manifest(&ws.jail, &session)
                    .map(|m| {
                        m.entries
                            .iter()
                            .map(|e| match &e.saved {
                                checkpoint::Saved::File { mode, .. } => {
                                    format!("{}  file, mode {mode:o}", e.path)
                                }
                                checkpoint::Saved::Symlink { target } => {
                                    format!("{}  symlink to {target}", e.path)
                                }
                                checkpoint::Saved::Absent => {
                                    format!("{}  did not exist", e.path)
                                }
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    }),
                CheckpointAction::Restore { session, paths } => paths
                    .iter()
                    .map(|p| ws.jail.parse(p).map_err(Into::into))
                    .collect::<Result<Vec<_>, slmcode_aci::registry::ToolError>>()
                    .and_then(|paths| checkpoint::restore(&ws.jail, &session, &paths))
                    .map(|lines| lines.join("\n")),
            };
            report("slmcode checkpoints", result)
        }
        Command::Tools { json } => {
            print_tools(json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Prints a subcommand's result: the text on stdout, or the error on stderr with exit 1.
fn report(
    what: &str,
    result: Result<String, slmcode_aci::registry::ToolError>,
) -> Result<ExitCode> {
    match result {
        Ok(text) => {
            writeln!(std::io::stdout().lock(), "{}", text.trim_end())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{what}: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// Opens the project root with its config; config warnings go to stderr, never into a result.
fn open_workspace(root: Option<PathBuf>) -> Result<Workspace> {
    let root = match root {
        Some(r) => r,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !root.is_dir() {
        bail!(
            "project root {} is not a directory (pass --root DIR)",
            root.display()
        );
    }
    let jail = slmcode_aci::path::Jail::open(&root)
        .with_context(|| format!("cannot open project root {}", root.display()))?;
    let (config, warnings) = Config::load(&jail, std::env::vars())?;
    for w in warnings {
        eprintln!("slmcode: warning: {w}");
    }
    Ok(Workspace::new(jail, config))
}

fn print_tools(json: bool) -> Result<()> {
    let registry = Registry::coding();
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<serde_json::Value> = registry
            .specs()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.schema(),
                    "read_only": s.read_only,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(());
    }
    for spec in registry.specs() {
        writeln!(out, "{}\n  {}", spec.name, spec.description)?;
        for p in spec.params {
            writeln!(
                out,
                "    {}{}: {}",
                p.name,
                if p.required { " (required)" } else { "" },
                p.description
            )?;
        }
        writeln!(out, "  e.g. slmcode tool {} '{}'", spec.name, spec.example)?;
    }
    Ok(())
}
