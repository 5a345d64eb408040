//! `slmcode`: the command line. `run` drives a local model through a task, `tool` runs one
//! call, `session` runs many calls as JSON Lines with state carried between them, `tools`
//! lists what a model is offered, `mcp` serves the tools to any MCP client. Each subcommand
//! is a module of `commands`; this file only parses the command line and dispatches.

mod commands;
mod terminal;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use commands::{
    bench, chat, checkpoints, config, doctor, evolve, hooks, init, map, mcp, models, pending, run,
    runs, session, tool, tools, view,
};

#[derive(Parser)]
#[command(
    name = "slmcode",
    version,
    about = "The tool layer that lets small local coding models land real edits"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Work with a model in a session (also `slmcode` alone): messages stream their turns,
    /// Ctrl-C stops one, approvals are asked inline, /undo /diff /model and more (/help).
    /// With stdin not a terminal: one message a line in, the events as JSON lines out.
    Chat(chat::ChatArgs),
    /// Measure what a model achieves with slmcode: `bench run SUITE` runs the exercises of a
    /// suite in Aider's polyglot layout (pass@1, pass@2, repeats, shards) and records JSON
    /// lines under bench/results/LABEL/; `bench merge` joins shards' results.
    Bench(bench::BenchArgs),
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
    Hooks(hooks::HooksArgs),
    /// What the edit-format bandit learned: `stats` per model family and language (arms,
    /// pulls, means, drift profile), `why` for the next choice, `reset` to forget.
    Evolve(evolve::EvolveArgs),
    /// List the models the endpoint serves.
    Models(models::ModelsArgs),
    /// Past runs of `slmcode run`: list them, or show one as a transcript.
    Runs(runs::RunsArgs),
    /// See the runs in a browser: a local page (127.0.0.1, a token in its address) with the
    /// runs list, each run's turns, calls, outcomes and diffs, running runs live, and the
    /// bench reports.
    View(view::ViewArgs),
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
    Pending(pending::PendingArgs),
    /// Checkpoints the tools saved before changing files: list, show or restore them.
    Checkpoints(checkpoints::CheckpointsArgs),
    /// List the tools with their descriptions and argument schemas.
    Tools(tools::ToolsArgs),
    /// Print the repo map `slmcode run` would give a model for TASK: the definitions the task
    /// points at, ranked over the project's symbol index, within repo_map_tokens.
    Map(map::MapArgs),
}

fn main() -> ExitCode {
    // Started as the parser process of another slmcode: serve it, and nothing else (no key,
    // no state: it only parses what it is sent).
    if slmcode_aci::serve_parser_process() {
        return ExitCode::SUCCESS;
    }
    // What one command saves under .slmcode/ the next trusts: sealed with the user's own key.
    // A state file slmcode did not write is ignored, and said so on stderr, once.
    slmcode_aci::seal::use_user_key();
    slmcode_aci::seal::set_reporter(|m| terminal::errln!("slmcode: warning: {m}"));
    // Every parse runs in a child process, so no file can end this one.
    if let Ok(me) = slmcode_aci::platform::host::this_program() {
        slmcode_aci::syntax::process::isolate(me);
    }
    match dispatch(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            terminal::errln!("slmcode: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let Some(command) = cli.command else {
        let args = chat::ChatArgs::default();
        let ws = commands::common::open_workspace(None)?;
        return chat::run(args, ws);
    };
    match command {
        Command::Chat(args) => {
            let mut ws = commands::common::open_workspace(args.settings.root.clone())?;
            args.settings.apply_flags(&mut ws.config)?;
            chat::run(args, ws)
        }
        Command::Run(args) => {
            let mut ws = commands::common::open_workspace(args.settings.root.clone())?;
            args.settings.apply_flags(&mut ws.config)?;
            run::run(args, ws)
        }
        Command::Bench(args) => bench::run(args),
        Command::Config(args) => config::run(args),
        Command::Init(args) => init::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Hooks(args) => hooks::run(args),
        Command::Evolve(args) => evolve::run(args),
        Command::Models(args) => models::run(args),
        Command::Runs(args) => runs::run(args),
        Command::View(args) => view::run(args),
        Command::Tool(args) => tool::run(args),
        Command::Session(args) => session::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Pending(args) => pending::run(args),
        Command::Checkpoints(args) => checkpoints::run(args),
        Command::Tools(args) => tools::run(args),
        Command::Map(args) => map::run(args),
    }
}
