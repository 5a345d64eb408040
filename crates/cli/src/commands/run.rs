//! `slmcode run` and `slmcode models`: where the settings come together (flags, environment,
//! the project's and the user's config), progress is shown on stderr, and Ctrl-C stops a run
//! cleanly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::terminal::{self, errln};
use anyhow::{bail, Context, Result};
use slmcode_aci::{lang, Config, Registry, Workspace};
use slmcode_agent::backend::{Backend, BackendOptions, ModelInfo, Notice, DEFAULT_ENDPOINT};
use slmcode_agent::evolve::{self, Evolve};
use slmcode_agent::prompt;
use slmcode_agent::run::{
    latest_saved_run, load_saved_run, Agent, Event, RunSettings, SavedRun, ToolMode,
};
use slmcode_agent::served_context::{window_in_force, ContextWindow};
use slmcode_agent::server_memory::ServerMemory;
use slmcode_agent::skills::{self, SkillTool};
use slmcode_agent::user_config;
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
    /// Print the final answer as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print the run's event stream on stdout, one JSON object a line (the streamed text, each
    /// call and its outcome, each file's diff, the budget, the final answer), for scripts and
    /// other front ends. Progress stays on stderr.
    #[arg(long)]
    pub events: bool,
    /// Ask for whole replies instead of streamed ones.
    #[arg(long)]
    pub no_stream: bool,
    /// Take the edit format with the best learned mean instead of sampling (no exploration).
    #[arg(long)]
    pub no_explore: bool,
}

impl RunArgs {
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
        Ok(())
    }
}

/// The backend for the configured endpoint (Ollama's default when none is), with the API key
/// from the variable `api_key_env` names.
pub fn backend(config: &Config, stream: bool) -> Result<Backend> {
    let endpoint = config
        .endpoint
        .clone()
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        bail!("the endpoint `{endpoint}` must start with http:// or https:// (e.g. {DEFAULT_ENDPOINT})");
    }
    let api_key = match &config.api_key_env {
        Some(var) => match std::env::var(var) {
            Ok(k) if !k.is_empty() => Some(k),
            _ => {
                errln!("slmcode: warning: api_key_env names {var}, which is not set; sending no API key");
                None
            }
        },
        None => None,
    };
    let mut options = BackendOptions {
        stream,
        first_token: Duration::from_secs(config.first_token_timeout as u64),
        reply: Duration::from_secs(config.reply_timeout as u64),
        ..BackendOptions::default()
    };
    if let Some(ms) = std::env::var("SLMCODE_RETRY_BASE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        options.retry_base = Duration::from_millis(ms);
    }
    let mut backend = Backend::new(&endpoint, api_key, options)?;
    backend.on_notice(Arc::new(show_notice));
    Ok(backend)
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

/// The context window a run of `model` works within — the config's when set, else what the
/// server says it loaded — and whether the server is Ollama, in which case `backend` now talks
/// to its native API with that window as `num_ctx` (its `/v1` ignores `num_ctx`).
pub fn settle_context(
    runtime: &tokio::runtime::Runtime,
    backend: &mut Backend,
    config: &Config,
    model: &str,
    listed: &[ModelInfo],
) -> (ContextWindow, bool) {
    let served = runtime.block_on(backend.served_context(model, listed));
    let window = window_in_force(
        config.context_window,
        config.origins.get("context_window").map(String::as_str),
        served,
    );
    let ollama = runtime.block_on(backend.is_ollama());
    if ollama {
        backend.use_ollama_native(window.tokens as u64);
    }
    (window, ollama)
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
    let (task, follow) = task_and_follow_up(&args, &ws)?;
    let mut backend = backend(&ws.config, !args.no_stream)?;
    let runtime = runtime()?;
    // Is anyone there, and with which models? One clear error if not.
    let listed = runtime.block_on(backend.models())?;
    let model = match (&follow, &args.model) {
        // A follow-up keeps its run's model unless told otherwise.
        (Some(saved), None) => saved.model.clone(),
        _ => choose_model(&ws, &listed)?,
    };
    let (window, ollama) = settle_context(&runtime, &mut backend, &ws.config, &model, &listed);
    // Through Ollama's own API the run sets the context itself: nothing to warn of.
    if let Some(w) = window.warning().filter(|_| !ollama) {
        errln!("slmcode: warning: {w}");
    }
    let max_turns = ws.config.max_turns.max(1);
    let mut warnings = Vec::new();
    let user_skills = user_config::config_dir().map(|d| d.join("skills"));
    let skill_list = skills::load(&ws.jail, user_skills.as_deref(), &mut warnings);
    for w in warnings {
        errln!("slmcode: warning: skill {w}");
    }
    let skills_text = skills::render(&skill_list, &task);
    // The edit format: the bandit's choice for this model family and language.
    let family = evolve::model_family(&model);
    let language = task_language(&task, &ws);
    let state_path = Evolve::default_path();
    let learned = match state_path.as_deref().map(Evolve::load) {
        Some(Ok(e)) => e,
        Some(Err(e)) => {
            errln!("slmcode: warning: {e}; learning starts afresh for this run");
            Evolve::default()
        }
        None => Evolve::default(),
    };
    let arm = match &follow {
        // The saved conversation teaches its edit format; a follow-up keeps it.
        Some(saved) => {
            errln!(
                "edit format: {} for {family} · {language} (as in run {}, which this follows up)",
                saved.arm,
                saved.run_id
            );
            saved.arm
        }
        None => {
            let choice = learned.choose(&family, language, !args.no_explore, &mut rand::rng());
            errln!(
                "edit format: {} for {family} · {language} ({})",
                choice.arm,
                choice.reason
            );
            choice.arm
        }
    };
    let mut registry = prompt::registry_for(arm, Registry::coding());
    if !skill_list.is_empty() {
        registry = registry.with(Arc::new(SkillTool::new(skill_list)));
    }
    let registry = crate::with_project_hooks(registry, &ws)?;
    let endpoint = backend.endpoint().to_string();
    let memory_path = ServerMemory::default_path();
    let tool_mode = tool_mode(&ws.config, memory_path.as_deref(), &endpoint, &model);
    let settings = RunSettings {
        task,
        model: model.clone(),
        max_turns,
        max_tokens: u32::try_from(ws.config.max_tokens).unwrap_or(u32::MAX),
        sampling: slmcode_agent::sampling::for_model(&model, &ws.config.sampling),
        context_window: window.tokens,
        context_from: window.describe(),
        arm,
        runaway: slmcode_agent::runaway::RunawayLimits {
            loop_chars: ws.config.runaway_loop_chars,
            text_chars: ws.config.runaway_text_chars,
        },
        verify: ws.config.verify.clone().filter(|v| !v.trim().is_empty()),
        verify_retries: ws.config.verify_retries,
        tool_mode,
        think: ws.config.think.to_string(),
    };
    let workspace = Arc::new(Mutex::new(ws));
    let registry = Arc::new(registry);
    let follows = follow
        .as_ref()
        .map(|s| format!(" (follows up {})", s.run_id))
        .unwrap_or_default();
    let on_event = |events: bool| -> Box<dyn FnMut(&Event) + Send> {
        if events {
            Box::new(|event: &Event| {
                progress(event);
                let _ = writeln!(terminal::machine_stdout(), "{}", event.to_json_line());
            })
        } else {
            Box::new(progress)
        }
    };
    let agent = match follow {
        Some(saved) => Agent::resume(
            backend,
            registry,
            workspace,
            settings,
            saved,
            skills_text,
            on_event(args.events),
        ),
        None => Agent::new(
            backend,
            registry,
            workspace,
            settings,
            skills_text,
            on_event(args.events),
        ),
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
    let stop = cancel.clone();
    let outcome = runtime.block_on(async move {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        });
        agent.run(cancel).await
    })?;
    if let (Some(why), Some(path)) = (&outcome.refused_tools, &memory_path) {
        // The next run of this model at this endpoint starts with the tools in the prompt.
        let mut memory = ServerMemory::load(path);
        memory.remember_text_tools(&endpoint, &model, why, slmcode_aci::state::now());
        if let Err(e) = memory.save(path) {
            errln!("slmcode: warning: could not remember that the server refused tools: {e}");
        }
    }
    if let Some(path) = &state_path {
        // Learn from what the edit tools saw; a run without edits teaches nothing.
        let mut learned = Evolve::load(path).unwrap_or(learned);
        learned.record_run(
            &family,
            language,
            &outcome.edit_outcomes,
            slmcode_aci::state::now(),
        );
        if let Err(e) = learned.save(path) {
            errln!("slmcode: warning: could not save what this run taught: {e}");
        }
    }
    let answer = &outcome.answer;
    let files = if answer.files_changed.is_empty() {
        "no files changed".to_string()
    } else {
        format!(
            "{} file(s) changed: {}",
            answer.files_changed.len(),
            answer.files_changed.join(", ")
        )
    };
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

/// How the tools reach the model: `tool_mode` from the config, except that `auto` starts in
/// text mode for an endpoint and model that refused tools in an earlier run (said on stderr,
/// with how to try native again).
fn tool_mode(config: &Config, memory: Option<&Path>, endpoint: &str, model: &str) -> ToolMode {
    let configured = ToolMode::parse(config.tool_mode);
    if configured != ToolMode::Auto {
        return configured;
    }
    let memory = memory.map(ServerMemory::load).unwrap_or_default();
    match memory.text_tools(endpoint, model) {
        Some(why) => {
            errln!(
                "tools in the prompt: {endpoint} refused tools for {model} in an earlier run ({why}); set tool_mode: native to try them again"
            );
            ToolMode::Text
        }
        None => ToolMode::Auto,
    }
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

/// The configured model (flag, environment, project, user), else the server's first.
fn choose_model(ws: &Workspace, listed: &[ModelInfo]) -> Result<String> {
    match ws.config.model.clone() {
        Some(m) => {
            if !listed.is_empty() && !listed.iter().any(|x| x.id == m) {
                let names: Vec<&str> = listed.iter().take(8).map(|x| x.id.as_str()).collect();
                errln!(
                    "slmcode: warning: the server does not list the model {m} (it lists: {}); asking for it anyway",
                    names.join(", ")
                );
            }
            Ok(m)
        }
        None => match listed.first() {
            Some(first) => Ok(first.id.clone()),
            None => bail!(
                "the server lists no models. Pull one (e.g. `ollama pull qwen2.5-coder:7b`) or name one with --model"
            ),
        },
    }
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

/// The language a task edits: the files it names, else the project's most common language
/// among the first 5,000 files the tools see (`.gitignore` honoured, hidden entries skipped).
pub fn task_language(task: &str, ws: &Workspace) -> &'static str {
    let named: Vec<&str> = task
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | '(' | ')'))
        .map(|w| w.trim_end_matches(['.', ':', ';']))
        .filter(|w| w.contains('.') && lang::key_of(w) != lang::OTHER)
        .collect();
    if !named.is_empty() {
        return lang::dominant(named);
    }
    lang::dominant_in(&ws.jail, 5000)
}
