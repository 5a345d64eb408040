//! `slmcode run` and `slmcode models`: where the settings come together (flags, environment,
//! the project's and the user's config), progress is shown on stderr, and Ctrl-C stops a run
//! cleanly.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use super::common;
use crate::terminal::{self, errln};
use anyhow::{bail, Context, Result};
use slmcode_aci::{Config, Workspace};
use slmcode_agent::backend::{Backend, ModelInfo, Notice};
use slmcode_agent::launch::{self, LaunchOptions, Said};
use slmcode_agent::run::{latest_saved_run, load_saved_run, Event, SavedRun};
use slmcode_agent::served_context::ContextWindow;
use tokio_util::sync::CancellationToken;

/// The arguments of `slmcode run`.
#[derive(clap::Args, Clone)]
pub struct RunArgs {
    /// What to do, in plain words (with --resume: the follow-up instruction).
    pub task: Option<String>,
    /// Continue a run's conversation (its history, what it read, its loop guard) with a new
    /// instruction: `--resume "now also …"` follows the project's last run, `--resume ID "…"`
    /// another one (see `slmcode runs list`).
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub settings: SettingsFlags,
    /// Print the final answer as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print the run's event stream on stdout, one JSON object a line (the streamed text, each
    /// call and its outcome, each file's diff, the budget, the final answer), for scripts and
    /// other front ends. Progress stays on stderr.
    #[arg(long)]
    pub events: bool,
    /// Plan mode: the plan model (read-only tools) answers with a plan of small steps, then
    /// each step runs as a fresh, focused run of the edit model, checked after it. With
    /// `--resume` (or `--resume ID`): continue a plan from its first unfinished step.
    #[arg(long)]
    pub plan: bool,
}

/// The settings flags `slmcode run` and `slmcode chat` share: the top layer of the config.
#[derive(clap::Args, Clone, Default)]
pub struct SettingsFlags {
    /// Project root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// The model server's OpenAI-compatible base URL (default: SLMCODE_ENDPOINT, the user's
    /// config, or Ollama at http://127.0.0.1:11434/v1).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// The model to ask for (default: SLMCODE_MODEL, the configs, or the server's first).
    #[arg(long)]
    pub model: Option<String>,
    /// The most turns the run may take (default: max_turns in the config, 30).
    #[arg(long)]
    pub max_turns: Option<usize>,
    /// A check the run's `done` must pass, e.g. `cargo test` (default: verify in the config).
    /// It runs through ws_shell's policy and sandbox; a failure goes back to the model.
    #[arg(long, value_name = "CMD")]
    pub verify: Option<String>,
    /// Paths the task must be solved without changing (a glob, e.g. "tests/**"; repeat the
    /// flag for more): refused by every edit tool, put back when a command changes them.
    /// Adds to `protect` in the config.
    #[arg(long, value_name = "GLOB")]
    pub protect: Vec<String>,
    /// Ask for whole replies instead of streamed ones.
    #[arg(long)]
    pub no_stream: bool,
    /// Take the edit format with the best learned mean instead of sampling (no exploration).
    #[arg(long)]
    pub no_explore: bool,
    /// The model that plans (default: plan_model in the config, else the model).
    #[arg(long, value_name = "MODEL")]
    pub plan_model: Option<String>,
    /// The model that does each step (default: edit_model in the config, else the model).
    #[arg(long, value_name = "MODEL")]
    pub edit_model: Option<String>,
}

impl SettingsFlags {
    /// The flags are the top layer of the settings.
    pub fn apply_flags(&self, config: &mut Config) -> Result<()> {
        if let Some(e) = &self.endpoint {
            config.apply_flag("endpoint", e, "--endpoint")?;
        }
        if let Some(m) = &self.model {
            config.apply_flag("model", m, "--model")?;
        }
        if let Some(n) = self.max_turns {
            config.apply_flag("max_turns", &n.to_string(), "--max-turns")?;
        }
        if let Some(v) = &self.verify {
            config.apply_flag("verify", v, "--verify")?;
        }
        if !self.protect.is_empty() {
            config.add_protect(&self.protect, "--protect")?;
        }
        if let Some(m) = &self.plan_model {
            config.apply_flag("plan_model", m, "--plan-model")?;
        }
        if let Some(m) = &self.edit_model {
            config.apply_flag("edit_model", m, "--edit-model")?;
        }
        Ok(())
    }
}

/// The backend for the configured endpoint, its warnings said on stderr and its waiting
/// notices shown there.
pub fn backend(config: &Config, stream: bool) -> Result<Backend> {
    let mut backend = launch::backend(config, stream, &mut say)?;
    backend.on_notice(Arc::new(show_notice));
    Ok(backend)
}

/// A line of the setup, on stderr as it always was.
pub fn say(said: Said) {
    match said {
        Said::Warning(w) => errln!("slmcode: warning: {w}"),
        Said::Info(i) => errln!("{i}"),
    }
}

/// What a request waits on, on stderr, at most every few seconds: minutes of silence on slow
/// hardware are not mistaken for a hang.
fn show_notice(notice: &Notice) {
    match notice {
        Notice::Loading { waited } => show_waiting(&Event::Loading {
            waited_ms: waited.as_millis() as u64,
        }),
        Notice::PromptProgress {
            processed,
            total,
            cached,
        } => show_waiting(&Event::PromptProgress {
            processed: *processed,
            total: *total,
            cached: *cached,
        }),
        // Only a run shows the reply as it streams, and it learns of it from its events.
        Notice::Piece { .. } => {}
    }
}

/// The waiting events (the model loading, the prompt being read), at most every few seconds.
fn show_waiting(event: &Event) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST_SHOWN_MS: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let done =
        matches!(event, Event::PromptProgress { processed, total, .. } if processed >= total);
    if !done && now < LAST_SHOWN_MS.load(Ordering::Relaxed) + 5000 {
        return;
    }
    let text = match event {
        Event::Loading { waited_ms } => format!(
            "the server is loading the model; waiting ({} s so far)",
            waited_ms / 1000
        ),
        Event::PromptProgress {
            processed,
            total,
            cached,
        } => format!("reading the prompt: {processed} of {total} tokens ({cached} from its cache)"),
        _ => return,
    };
    LAST_SHOWN_MS.store(now, Ordering::Relaxed);
    errln!("  [{text}]");
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// [`launch::settle_context`], for the commands that are not async.
pub fn settle_context(
    runtime: &tokio::runtime::Runtime,
    backend: &mut Backend,
    config: &Config,
    model: &str,
    listed: &[ModelInfo],
) -> (ContextWindow, bool) {
    runtime.block_on(launch::settle_context(backend, config, model, listed))
}

/// `slmcode models`.
pub fn models(config: &Config, query: Option<&str>, limit: usize) -> Result<ExitCode> {
    let backend = backend(config, true)?;
    let listed = runtime()?.block_on(backend.models())?;
    let text =
        slmcode_agent::find_models::describe(&listed, query, limit.max(1), backend.endpoint());
    writeln!(terminal::stdout(), "{text}")?;
    Ok(ExitCode::SUCCESS)
}

/// `slmcode run`.
pub fn run(args: RunArgs, ws: Workspace) -> Result<ExitCode> {
    if args.plan {
        return run_plan(args, ws);
    }
    let (task, follow) = task_and_follow_up(&args, &ws)?;
    let runtime = runtime()?;
    let launch = runtime.block_on(launch::prepare(
        &ws,
        LaunchOptions {
            stream: !args.settings.no_stream,
            explore: !args.settings.no_explore,
            task: Some(&task),
            follows: follow.as_ref(),
            model_flag: args.settings.model.is_some(),
            role_model: None,
            notices: Some(Arc::new(show_notice)),
        },
        &mut say,
    ))?;
    let model = launch.settings.model.clone();
    let max_turns = launch.settings.max_turns;
    let window = launch.window.clone();
    let ollama = launch.ollama;
    let endpoint = launch.backend.endpoint().to_string();
    let learning = launch.learning.clone();
    let workspace = Arc::new(Mutex::new(ws));
    let follows = follow
        .as_ref()
        .map(|s| format!(" (follows up {})", s.run_id))
        .unwrap_or_default();
    let on_event: Box<dyn FnMut(&Event) + Send> = if args.events {
        Box::new(|event: &Event| {
            progress(event);
            let _ = writeln!(terminal::machine_stdout(), "{}", event.to_json_line());
        })
    } else {
        Box::new(progress)
    };
    let agent = match follow {
        Some(saved) => launch.resume(saved, &task, workspace, on_event),
        None => launch.start(&task, workspace, on_event),
    };
    let run_id = agent.trajectory().id.clone();
    let log = agent.trajectory().path.to_string();
    errln!(
        "slmcode run {run_id}{follows} · {model} at {endpoint} · {}{} · up to {max_turns} turns",
        window.describe(),
        if ollama {
            " · Ollama's /api/chat with num_ctx set to it"
        } else {
            ""
        }
    );
    let cancel = CancellationToken::new();
    let outcome = common::until_ctrl_c(&runtime, &cancel, agent.run(cancel.clone()))?;
    learning.record(&outcome, &endpoint, &model, &mut say);
    let answer = &outcome.answer;
    let files = common::files_changed(&answer.files_changed);
    errln!(
        "\n{} · {files} · {} turn(s) · {:.1} s\n{}\ntrajectory: {log}",
        answer.status,
        outcome.turns,
        outcome.elapsed.as_secs_f64(),
        answer.summary.trim()
    );
    if answer.status == "interrupted" {
        errln!("stopped; what the run did is in {log} (slmcode runs show {run_id}); go on with slmcode run --resume {run_id} \"…\"");
    }
    if args.json {
        writeln!(
            terminal::machine_stdout(),
            "{}",
            serde_json::to_string(answer)?
        )?;
    }
    Ok(match answer.status.as_str() {
        "done" => ExitCode::SUCCESS,
        "interrupted" => ExitCode::from(130),
        _ => ExitCode::from(1),
    })
}

/// `slmcode run --plan`: the plan model and the edit model set up as roles (each its own
/// window, sampling and edit format), then the plan's two phases.
fn run_plan(args: RunArgs, ws: Workspace) -> Result<ExitCode> {
    use slmcode_agent::plan::run::{PlanRun, PlanState};
    let resume = match &args.resume {
        Some(id) => Some(PlanState::load(&ws.jail, id)?),
        None => None,
    };
    let task = match (&resume, &args.task) {
        (Some(state), _) => state.task.clone(),
        (None, Some(t)) if !t.trim().is_empty() => t.clone(),
        _ => bail!("say what to plan: slmcode run --plan \"add a --verbose flag\""),
    };
    let runtime = runtime()?;
    let role = |model: Option<String>| LaunchOptions {
        stream: !args.settings.no_stream,
        explore: !args.settings.no_explore,
        task: Some(&task),
        follows: None,
        model_flag: args.settings.model.is_some(),
        role_model: model,
        notices: Some(Arc::new(show_notice)),
    };
    let plan = runtime.block_on(launch::prepare(
        &ws,
        role(ws.config.plan_model.clone()),
        &mut say,
    ))?;
    let edit = runtime.block_on(launch::prepare(
        &ws,
        role(ws.config.edit_model.clone()),
        &mut say,
    ))?;
    let endpoint = edit.backend.endpoint().to_string();
    let edit_model = edit.settings.model.clone();
    let learning = edit.learning.clone();
    errln!(
        "slmcode run --plan · plans with {} ({}) · does each step with {} ({}) at {endpoint}",
        plan.settings.model,
        plan.window.describe(),
        edit_model,
        edit.window.describe()
    );
    let events = args.events;
    let on_event = move || -> Box<dyn FnMut(&Event) + Send> {
        if events {
            Box::new(|event: &Event| {
                progress(event);
                let _ = writeln!(terminal::machine_stdout(), "{}", event.to_json_line());
            })
        } else {
            Box::new(progress)
        }
    };
    let run = PlanRun {
        plan,
        edit,
        workspace: Arc::new(Mutex::new(ws)),
        events: Box::new(on_event),
    };
    let cancel = CancellationToken::new();
    let outcome = common::until_ctrl_c(&runtime, &cancel, run.run(&task, resume, cancel.clone()))?;
    let answer = &outcome.answer;
    errln!(
        "\n{} · {} file(s) changed · plan {}\n{}",
        answer.status,
        answer.files_changed.len(),
        outcome.id,
        answer.summary.trim()
    );
    if !answer.notes.is_empty() {
        errln!("{}", answer.notes);
    }
    if answer.status != "done" && outcome.plan.is_some() {
        errln!(
            "go on from the first unfinished step with slmcode run --plan --resume {}",
            outcome.id
        );
    }
    // The bandit learns from the steps' edits, for the edit model's family.
    let learned = slmcode_agent::run::Outcome {
        answer: answer.clone(),
        turns: 0,
        elapsed: std::time::Duration::ZERO,
        run_id: outcome.id.clone(),
        trajectory: String::new(),
        edit_outcomes: outcome.edit_outcomes.clone(),
        refused_tools: None,
        plan: None,
    };
    learning.record(&learned, &endpoint, &edit_model, &mut say);
    if args.json {
        let mut value = serde_json::to_value(answer)?;
        value["plan"] = serde_json::to_value(&outcome.plan)?;
        value["steps_done"] = outcome.done.into();
        value["plan_id"] = outcome.id.clone().into();
        writeln!(terminal::machine_stdout(), "{value}")?;
    }
    Ok(match answer.status.as_str() {
        "done" => ExitCode::SUCCESS,
        "interrupted" => ExitCode::from(130),
        _ => ExitCode::from(1),
    })
}

/// The task, and the saved run it follows up when `--resume` is given. `--resume "now also …"`
/// with no other words reads the words as the task (clap cannot tell them from an id): a run
/// id is digits and dashes, a task is not.
fn task_and_follow_up(args: &RunArgs, ws: &Workspace) -> Result<(String, Option<SavedRun>)> {
    let (id, task) = match (&args.resume, &args.task) {
        (None, task) => (None, task.clone().unwrap_or_default()),
        (Some(id), Some(task)) => (Some(id.clone()), task.clone()),
        (Some(given), None) if looks_like_run_id(given) => {
            bail!("say what the follow-up should do: slmcode run --resume {given} \"now also …\"")
        }
        (Some(given), None) => (Some(String::new()), given.clone()),
    };
    if task.trim().is_empty() {
        bail!(
            "the task is empty: say what to do, e.g. slmcode run \"add a --verbose flag\"{}",
            if id.is_some() {
                " (or slmcode run --resume \"now also …\")"
            } else {
                ""
            }
        );
    }
    let Some(id) = id else {
        return Ok((task, None));
    };
    let id = match id.trim() {
        "" => match latest_saved_run(&ws.jail)? {
            Some(id) => id,
            None => bail!(
                "there is no run to follow up in this project yet: start one with slmcode run \"…\""
            ),
        },
        given => given.to_string(),
    };
    Ok((task, Some(load_saved_run(&ws.jail, &id)?)))
}

/// Run ids are `YYYYMMDD-HHMMSS-PID`: digits and dashes.
fn looks_like_run_id(s: &str) -> bool {
    !s.is_empty() && s.contains('-') && s.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// Progress on stderr: the turn, the call in one line, the first line of its result, tokens.
/// Read from the run's events alone; the streamed pieces and the diffs are the interactive
/// session's to show.
fn progress(event: &Event) {
    use std::sync::atomic::{AtomicBool, Ordering};
    // "turn N/M" waits on its line for the reply's figures; anything else starts a new line.
    static TURN_LINE_OPEN: AtomicBool = AtomicBool::new(false);
    if matches!(event, Event::Loading { .. } | Event::PromptProgress { .. }) {
        // Said as before the events: on the open turn line, which stays open.
        show_waiting(event);
        return;
    }
    let shown = matches!(
        event,
        Event::Turn { .. }
            | Event::Reply { .. }
            | Event::Call { .. }
            | Event::Result { .. }
            | Event::Note { .. }
            | Event::Warning { .. }
    );
    if !shown {
        return;
    }
    let mut err = terminal::stderr();
    let open = TURN_LINE_OPEN.swap(matches!(event, Event::Turn { .. }), Ordering::Relaxed);
    if open && !matches!(event, Event::Reply { .. }) {
        let _ = writeln!(err);
    }
    let _ = match event {
        Event::Turn { number, max } => write!(err, "turn {number}/{max}"),
        Event::Reply {
            tokens,
            tokens_per_sec,
            prompt_tokens,
            cached_tokens,
            ..
        } => {
            // The prompt cache at work: how much of the prompt the server did not re-read.
            let prompt = match (prompt_tokens, cached_tokens) {
                (Some(p), Some(c)) => format!(" · prompt {p} tok, {c} cached"),
                (Some(p), None) => format!(" · prompt {p} tok"),
                _ => String::new(),
            };
            writeln!(err, "  · {tokens} tok, {tokens_per_sec:.1} tok/s{prompt}")
        }
        Event::Call { line, .. } => writeln!(err, "  → {line}"),
        Event::Result { text, is_error, .. } => writeln!(
            err,
            "  {} {}",
            if *is_error { "✗" } else { "✓" },
            text.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(120)
                .collect::<String>()
        ),
        Event::Note { text } => writeln!(err, "  [{text}]"),
        Event::Warning { text } => writeln!(err, "slmcode: warning: {text}"),
        _ => Ok(()),
    };
}

/// The language a task edits ([`launch::task_language`]).
pub fn task_language(task: &str, ws: &Workspace) -> &'static str {
    launch::task_language(task, ws)
}
