//! From settings to a ready agent, in one step every front end calls: the backend for the
//! endpoint, the model (flag, config or the server's first), the context window the server
//! really serves, the skills, the project's trusted hooks, the edit format the bandit picks
//! for the model and language, the tool mode, the sampling. `slmcode run` and the interactive
//! session only parse arguments and render; what they would print while this happens reaches
//! them as [`Said`] lines, in order.
//!
//! After a run, [`Learning::record`] teaches the bandit and remembers a server that refused
//! tools, for the next run.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use slmcode_aci::{lang, Config, Registry, Workspace};

use crate::approvals::Approvals;
use crate::backend::DEFAULT_ENDPOINT;
use crate::backend::{Backend, BackendError, BackendOptions, ModelInfo, NoticeSink};
use crate::evolve::{self, Arm, Evolve};
use crate::hooks::{self, Hooks};
use crate::run::{Agent, Event, Outcome, RunSettings, SavedRun, ToolMode};
use crate::served_context::{window_in_force, ContextWindow};
use crate::server_memory::ServerMemory;
use crate::skills::{self, Skill, SkillTool};

/// A line the setup has to say, before any run exists to carry it as an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Said {
    /// Something the user should fix or know is off (`slmcode: warning: …`).
    Warning(String),
    /// What was chosen and why (the edit format, the tool mode).
    Info(String),
}

/// Why a run cannot start. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("the endpoint `{0}` must start with http:// or https:// (e.g. {DEFAULT_ENDPOINT})")]
    Endpoint(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("the server lists no models. Pull one (e.g. `ollama pull qwen2.5-coder:7b`) or name one with --model")]
    NoModels,
    #[error("{0}; fix it, or `slmcode hooks untrust` to run without hooks")]
    Hooks(String),
}

/// What a front end asks of the setup besides the workspace's config.
pub struct LaunchOptions<'a> {
    /// Streamed replies (false: whole ones).
    pub stream: bool,
    /// Let the bandit explore (false: take the best learned edit format).
    pub explore: bool,
    /// The task, when known: the language it names picks the edit format, and it picks the
    /// skills shown. A session starts without one.
    pub task: Option<&'a str>,
    /// The run a follow-up continues: its model (unless `model` was set by a flag) and its
    /// edit format carry over.
    pub follows: Option<&'a SavedRun>,
    /// The model was named by a flag, which a follow-up obeys.
    pub model_flag: bool,
    /// A role's model (`plan_model`, `edit_model`), over `model`.
    pub role_model: Option<String>,
    /// Where the backend's waiting notices go until the agent takes them over.
    pub notices: Option<NoticeSink>,
}

/// Everything a run needs, settled.
pub struct Launch {
    pub backend: Backend,
    /// The models the server listed.
    pub listed: Vec<ModelInfo>,
    pub window: ContextWindow,
    /// The server is Ollama, spoken to through its own API with `num_ctx` set.
    pub ollama: bool,
    pub registry: Arc<Registry>,
    /// The skills relevant to the task, for its message.
    pub skills_text: Option<String>,
    /// The run's settings; `task` is empty until a front end gives it.
    pub settings: RunSettings,
    /// How to build the registry again for another edit format (`/model`).
    pub kit: Kit,
    pub learning: Learning,
}

/// What builds a registry for an edit format, and picks that format for a model.
#[derive(Clone)]
pub struct Kit {
    skills: Vec<Skill>,
    hooks: Option<Arc<Hooks>>,
    learned: Evolve,
    language: &'static str,
    explore: bool,
}

impl Kit {
    /// The coding tools ordered for `arm`, with the skills and the trusted hooks.
    pub fn registry(&self, arm: Arm) -> Arc<Registry> {
        Arc::new(self.build(arm))
    }

    /// Only the tools that change nothing (plan mode): a call to any other is refused as a
    /// tool that is not offered.
    pub fn read_only(&self, arm: Arm) -> Arc<Registry> {
        let registry = self.build(arm);
        let writers: Vec<&'static str> = registry
            .specs()
            .filter(|s| !s.effect.read_only)
            .map(|s| s.name)
            .collect();
        Arc::new(registry.without(&writers))
    }

    fn build(&self, arm: Arm) -> Registry {
        let mut registry = crate::prompt::registry_for(arm, Registry::coding());
        if !self.skills.is_empty() {
            registry = registry.with(Arc::new(SkillTool::new(self.skills.clone())));
        }
        if let Some(h) = &self.hooks {
            registry = registry.with_hooks(h.clone());
        }
        registry
    }

    /// The bandit's edit format for `model` in this project's language, and one line saying
    /// why.
    pub fn choose(&self, model: &str) -> (Arm, String) {
        let family = evolve::model_family(model);
        let choice = self
            .learned
            .choose(&family, self.language, self.explore, &mut rand::rng());
        let line = format!(
            "edit format: {} for {family} · {} ({})",
            choice.arm, self.language, choice.reason
        );
        (choice.arm, line)
    }
}

/// What a finished run teaches the next one.
#[derive(Clone)]
pub struct Learning {
    state_path: Option<PathBuf>,
    memory_path: Option<PathBuf>,
    learned: Evolve,
    language: &'static str,
}

impl Learning {
    /// Teaches the bandit what the edit tools saw (per model family), and remembers that the
    /// server refused tools for this model.
    pub fn record(
        &self,
        outcome: &Outcome,
        endpoint: &str,
        model: &str,
        say: &mut (dyn FnMut(Said) + Send),
    ) {
        if let (Some(why), Some(path)) = (&outcome.refused_tools, &self.memory_path) {
            let mut memory = ServerMemory::load(path);
            memory.remember_text_tools(endpoint, model, why, slmcode_aci::state::now());
            if let Err(e) = memory.save(path) {
                say(Said::Warning(format!(
                    "could not remember that the server refused tools: {e}"
                )));
            }
        }
        if let Some(path) = &self.state_path {
            // A run without edits teaches nothing; a file changed meanwhile is read again.
            let mut learned = Evolve::load(path).unwrap_or_else(|_| self.learned.clone());
            learned.record_run(
                &evolve::model_family(model),
                self.language,
                &outcome.edit_outcomes,
                slmcode_aci::state::now(),
            );
            if let Err(e) = learned.save(path) {
                say(Said::Warning(format!(
                    "could not save what this run taught: {e}"
                )));
            }
        }
    }
}

impl Launch {
    /// A fresh run of `task`.
    pub fn start(
        self,
        task: &str,
        workspace: Arc<Mutex<Workspace>>,
        on_event: Box<dyn FnMut(&Event) + Send>,
    ) -> Agent {
        let mut settings = self.settings;
        settings.task = task.to_string();
        Agent::new(
            self.backend,
            self.registry,
            workspace,
            settings,
            self.skills_text,
            on_event,
        )
    }

    /// A follow-up of `saved` with `task`.
    pub fn resume(
        self,
        saved: SavedRun,
        task: &str,
        workspace: Arc<Mutex<Workspace>>,
        on_event: Box<dyn FnMut(&Event) + Send>,
    ) -> Agent {
        let mut settings = self.settings;
        settings.task = task.to_string();
        Agent::resume(
            self.backend,
            self.registry,
            workspace,
            settings,
            saved,
            self.skills_text,
            on_event,
        )
    }
}

/// The backend for the configured endpoint (Ollama's default when none is), with the API key
/// from the variable `api_key_env` names.
pub fn backend(
    config: &Config,
    stream: bool,
    say: &mut (dyn FnMut(Said) + Send),
) -> Result<Backend, LaunchError> {
    let endpoint = config
        .endpoint
        .clone()
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(LaunchError::Endpoint(endpoint));
    }
    let api_key = match &config.api_key_env {
        Some(var) => match std::env::var(var) {
            Ok(k) if !k.is_empty() => Some(k),
            _ => {
                say(Said::Warning(format!(
                    "api_key_env names {var}, which is not set; sending no API key"
                )));
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
    // The tests' servers answer at once; waiting seconds between their retries is only slow.
    if let Some(ms) = std::env::var("SLMCODE_RETRY_BASE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        options.retry_base = Duration::from_millis(ms);
    }
    Ok(Backend::new(&endpoint, api_key, options)?)
}

/// The context window a run of `model` works within — the config's when set, else what the
/// server says it loaded — and whether the server is Ollama, in which case `backend` now talks
/// to its native API with that window as `num_ctx` (its `/v1` ignores `num_ctx`).
pub async fn settle_context(
    backend: &mut Backend,
    config: &Config,
    model: &str,
    listed: &[ModelInfo],
) -> (ContextWindow, bool) {
    let served = backend.served_context(model, listed).await;
    let window = window_in_force(
        config.context_window,
        config.origins.get("context_window").map(String::as_str),
        served,
    );
    let ollama = backend.is_ollama().await;
    if ollama {
        backend.use_ollama_native(window.tokens as u64);
    }
    (window, ollama)
}

/// The project's hooks when the user trusted this content of hooks.json; otherwise said as a
/// warning (they do not run). A trusted file that cannot be read is an error: the user relies
/// on those hooks.
pub fn project_hooks(
    ws: &Workspace,
    say: &mut (dyn FnMut(Said) + Send),
) -> Result<Option<Hooks>, LaunchError> {
    // One read: the bytes whose hash is checked are the bytes that run.
    let (hash, loaded) = match hooks::load(&ws.jail) {
        Ok(None) => return Ok(None),
        Ok(Some(file)) => (Some(file.hash.clone()), Ok(file)),
        Err((hash, e)) => (hash, Err(e)),
    };
    if !hash.is_some_and(|h| Approvals::HOOKS.is_approved(ws.jail.root(), &h)) {
        say(Said::Warning(
            ".slmcode/hooks.json is not trusted, so its hooks do not run. Review it, then `slmcode hooks trust`".into(),
        ));
        return Ok(None);
    }
    match loaded {
        Ok(file) => Ok(Some(file.hooks)),
        Err(e) => Err(LaunchError::Hooks(e)),
    }
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

/// The configured model (flag, environment, project, user), else the server's first.
pub fn choose_model(
    config: &Config,
    listed: &[ModelInfo],
    say: &mut (dyn FnMut(Said) + Send),
) -> Result<String, LaunchError> {
    match config.model.clone() {
        Some(m) => {
            if !listed.is_empty() && !listed.iter().any(|x| x.id == m) {
                let names: Vec<&str> = listed.iter().take(8).map(|x| x.id.as_str()).collect();
                say(Said::Warning(format!(
                    "the server does not list the model {m} (it lists: {}); asking for it anyway",
                    names.join(", ")
                )));
            }
            Ok(m)
        }
        None => listed
            .first()
            .map(|m| m.id.clone())
            .ok_or(LaunchError::NoModels),
    }
}

/// How the tools reach the model: `tool_mode` from the config, except that `auto` starts in
/// text mode for an endpoint and model that refused tools in an earlier run.
fn tool_mode(
    config: &Config,
    memory: Option<&std::path::Path>,
    endpoint: &str,
    model: &str,
    say: &mut (dyn FnMut(Said) + Send),
) -> ToolMode {
    let configured = ToolMode::parse(config.tool_mode);
    if configured != ToolMode::Auto {
        return configured;
    }
    let memory = memory.map(ServerMemory::load).unwrap_or_default();
    match memory.text_tools(endpoint, model) {
        Some(why) => {
            say(Said::Info(format!(
                "tools in the prompt: {endpoint} refused tools for {model} in an earlier run ({why}); set tool_mode: native to try them again"
            )));
            ToolMode::Text
        }
        None => ToolMode::Auto,
    }
}

/// The one setup step: asks the server which models it serves (one clear error if nobody
/// answers), settles the model and its context, and picks the edit format and tools.
pub async fn prepare(
    ws: &Workspace,
    options: LaunchOptions<'_>,
    say: &mut (dyn FnMut(Said) + Send),
) -> Result<Launch, LaunchError> {
    let mut backend = backend(&ws.config, options.stream, say)?;
    if let Some(n) = options.notices {
        backend.on_notice(n);
    }
    let listed = backend.models().await?;
    let model = match (options.follows, &options.role_model) {
        (_, Some(role)) => {
            let mut config = ws.config.clone();
            config.model = Some(role.clone());
            choose_model(&config, &listed, say)?
        }
        // A follow-up keeps its run's model unless a flag says otherwise.
        (Some(saved), None) if !options.model_flag => saved.model.clone(),
        _ => choose_model(&ws.config, &listed, say)?,
    };
    let (window, ollama) = settle_context(&mut backend, &ws.config, &model, &listed).await;
    // Through Ollama's own API the run sets the context itself: nothing to warn of.
    if let Some(w) = window.warning().filter(|_| !ollama) {
        say(Said::Warning(w));
    }
    let task = options.task.unwrap_or("");
    let mut warnings = Vec::new();
    let user_skills = crate::user_config::config_dir().map(|d| d.join("skills"));
    let skill_list = skills::load(&ws.jail, user_skills.as_deref(), &mut warnings);
    for w in warnings {
        say(Said::Warning(format!("skill {w}")));
    }
    let skills_text = skills::render(&skill_list, task);
    let language = task_language(task, ws);
    let state_path = Evolve::default_path();
    let learned = match state_path.as_deref().map(Evolve::load) {
        Some(Ok(e)) => e,
        Some(Err(e)) => {
            say(Said::Warning(format!(
                "{e}; learning starts afresh for this run"
            )));
            Evolve::default()
        }
        None => Evolve::default(),
    };
    let hooks = project_hooks(ws, say)?.map(Arc::new);
    let kit = Kit {
        skills: skill_list,
        hooks,
        learned: learned.clone(),
        language,
        explore: options.explore,
    };
    let arm = match options.follows {
        // The saved conversation teaches its edit format; a follow-up keeps it.
        Some(saved) => {
            say(Said::Info(format!(
                "edit format: {} for {} · {language} (as in run {}, which this follows up)",
                saved.arm,
                evolve::model_family(&model),
                saved.run_id
            )));
            saved.arm
        }
        None => {
            let (arm, line) = kit.choose(&model);
            say(Said::Info(line));
            arm
        }
    };
    let registry = kit.registry(arm);
    let memory_path = ServerMemory::default_path();
    let tool_mode = tool_mode(
        &ws.config,
        memory_path.as_deref(),
        backend.endpoint(),
        &model,
        say,
    );
    let settings = RunSettings {
        task: String::new(),
        model: model.clone(),
        max_turns: ws.config.max_turns.max(1),
        max_tokens: u32::try_from(ws.config.max_tokens).unwrap_or(u32::MAX),
        sampling: crate::sampling::for_model(&model, &ws.config.sampling),
        context_window: window.tokens,
        context_from: window.describe(),
        arm,
        runaway: crate::runaway::RunawayLimits {
            loop_chars: ws.config.runaway_loop_chars,
            text_chars: ws.config.runaway_text_chars,
        },
        verify: ws.config.verify.clone().filter(|v| !v.trim().is_empty()),
        verify_retries: ws.config.verify_retries,
        tool_mode,
        think: ws.config.think.to_string(),
        think_budget: ws.config.think_budget,
        plans: false,
        map_within: Vec::new(),
    };
    Ok(Launch {
        backend,
        listed,
        window,
        ollama,
        registry,
        skills_text,
        settings,
        kit,
        learning: Learning {
            state_path,
            memory_path,
            learned,
            language,
        },
    })
}
