//! `slmcode`: the command line. `run` drives a local model through a task, `tool` runs one
//! call, `session` runs many calls as JSON Lines with state carried between them, `tools`
//! lists what a model is offered, `mcp` serves the tools to any MCP client.

mod commands;
mod terminal;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use commands::common::{open_workspace, report, with_project_hooks};
use commands::{config, doctor, init, mcp, run, session, tool, tools};
use slmcode_aci::{checkpoint, pending, Workspace};
use slmcode_agent::approvals::Approvals;
use slmcode_agent::hooks;

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
    /// Do a task with a local model: `slmcode run "add a --verbose flag"`. Progress goes to
    /// stderr; the final answer is printed at the end (exit 0 done, 1 blocked, 2 error, 130
    /// interrupted). Every request, reply and tool result is logged to .slmcode/runs/.
    Run(run::RunArgs),
    /// Settings: `config show` prints every effective key and where it came from.
    Config(config::ConfigArgs),
    /// Write a commented .slmcode/config.yaml and a .gitignore for the run-state folders.
    Init(init::InitArgs),
    /// Check the endpoint, the model, git, the sandbox and the grammars, and say what to fix.
    Doctor(doctor::DoctorArgs),
    /// The project's .slmcode/hooks.json: list its hooks, or trust / untrust its content.
    /// Hooks run only when you trusted exactly this content.
    Hooks {
        #[command(subcommand)]
        action: HooksAction,
        /// Project root (default: the current directory).
        #[arg(long, global = true)]
        root: Option<PathBuf>,
    },
    /// What the edit-format bandit learned: `stats` per model family and language (arms,
    /// pulls, means, drift profile), `why` for the next choice, `reset` to forget.
    Evolve {
        #[command(subcommand)]
        action: EvolveAction,
    },
    /// List the models the endpoint serves.
    Models {
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
    },
    /// Past runs of `slmcode run`: list them, or show one as a transcript.
    Runs {
        #[command(subcommand)]
        action: RunsAction,
        /// Project root (default: the current directory).
        #[arg(long, global = true)]
        root: Option<PathBuf>,
    },
    /// Run one tool call and print exactly what a model would see (exit 1 when it is an error).
    /// A specialist tool (mcp_call) is reached with the servers of the user's config.
    Tool(tool::ToolArgs),
    /// Read JSON Lines {"tool": NAME, "args": {...}} on stdin; write one JSON line per call.
    /// State (what was read, the checklist) carries from line to line.
    Session(session::SessionArgs),
    /// Serve the coding tools to an MCP client: over stdin/stdout by default, or over
    /// streamable HTTP at http://ADDR/mcp. Each connection is its own session.
    Mcp(mcp::McpArgs),
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
    Tools(tools::ToolsArgs),
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

#[derive(Subcommand)]
enum HooksAction {
    /// Each hook, and whether this content is trusted.
    List,
    /// Trust the current content of .slmcode/hooks.json for this project.
    Trust,
    /// Withdraw the trust.
    Untrust,
}

#[derive(Subcommand)]
enum RunsAction {
    /// One line per run, oldest first: id, status, turns, task.
    List,
    /// One run as a readable transcript.
    Show { id: String },
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
        Command::Tool(args) => tool::run(args),
        Command::Session(args) => session::run(args),
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
                                checkpoint::Saved::TooLarge { size } => {
                                    format!(
                                        "{}  not saved ({size} bytes, over checkpoint_max_bytes)",
                                        e.path
                                    )
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
        Command::Tools(args) => tools::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Config(args) => config::run(args),
        Command::Evolve { action } => evolve_command(action),
        Command::Hooks { action, root } => hooks_command(&open_workspace(root)?, action),
        Command::Init(args) => init::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Run(args) => {
            let mut ws = open_workspace(args.root.clone())?;
            args.apply_flags(&mut ws.config)?;
            run::run(args, ws)
        }
        Command::Models {
            endpoint,
            query,
            limit,
        } => {
            let mut ws = open_workspace(None)?;
            if let Some(e) = endpoint {
                ws.config.apply_flag("endpoint", &e, "--endpoint")?;
            }
            run::models(&ws.config, query.as_deref(), limit)
        }
        Command::Runs { action, root } => {
            let ws = open_workspace(root)?;
            let result = match action {
                RunsAction::List => slmcode_agent::trajectory::list(&ws.jail).map(|l| {
                    if l.is_empty() {
                        "no runs yet".to_string()
                    } else {
                        l.join("\n")
                    }
                }),
                RunsAction::Show { id } => slmcode_agent::trajectory::show(&ws.jail, &id),
            };
            report("slmcode runs", result)
        }
    }
}

fn evolve_command(action: EvolveAction) -> Result<ExitCode> {
    use slmcode_agent::evolve::{self, Evolve};
    let Some(path) = Evolve::default_path() else {
        bail!("no HOME or XDG_DATA_HOME, so there is no learned state");
    };
    let mut out = std::io::stdout().lock();
    match action {
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

fn hooks_command(ws: &Workspace, action: HooksAction) -> Result<ExitCode> {
    let root = ws.jail.root();
    let file = match hooks::load(&ws.jail) {
        Ok(Some(f)) => f,
        Ok(None) => {
            if matches!(action, HooksAction::Untrust) {
                Approvals::HOOKS
                    .set(root, None)
                    .map_err(|e| anyhow::anyhow!(e))?;
            }
            writeln!(
                std::io::stdout().lock(),
                "no .slmcode/hooks.json in {}",
                root.display()
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        Err((_, e)) => {
            if matches!(action, HooksAction::Untrust) {
                Approvals::HOOKS
                    .set(root, None)
                    .map_err(|e| anyhow::anyhow!(e))?;
            }
            bail!(e)
        }
    };
    let mut out = std::io::stdout().lock();
    match action {
        HooksAction::List => {
            for h in file.hooks.pre.iter().chain(&file.hooks.post) {
                writeln!(
                    out,
                    "{:<11} {:<20} {}  (timeout {} s)",
                    h.event,
                    terminal::escape(&h.matcher),
                    terminal::escape(&h.command),
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
        HooksAction::Untrust => {
            Approvals::HOOKS
                .set(root, None)
                .map_err(|e| anyhow::anyhow!(e))?;
            writeln!(out, "hooks of {} are no longer trusted", root.display())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
