//! The turn loop of `slmcode run`: ask the model, run the one tool call it made, feed back the
//! result, until it gives its final JSON or the turn budget is spent.
//!
//! Invariants (spec, design.md "Harness"):
//! - One tool call per turn: only the first runs; the others are removed from the assistant
//!   message kept in history (the model is told), so the transcript never holds an unanswered
//!   call.
//! - Tool calls written as text are an input path like native ones.
//! - Never end on a tool call: a run whose budget runs out after a tool call gets one steering
//!   turn asking for the final JSON; an invalid final JSON gets one repair turn.
//! - The loop guard is per task; the history is compacted by eliding old tool results, and a
//!   call is never separated from its result.
//!
//! The parts: this module sets a run up ([`Agent::new`]); `turn` is the loop, one turn at a
//! time, and how a run ends; `calls` reads the tool calls out of a reply (native or written as
//! text) and runs the first; `history` is what the model is sent (compaction, the token
//! estimate); `final_answer` reads the final JSON.

mod approve;
mod calls;
mod final_answer;
mod history;
mod resume;
mod session;
mod turn;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use slmcode_aci::{Registry, Workspace};

use crate::backend::{Backend, BackendError, Message, Notice};
pub use crate::events::Event;
use crate::events::{self, EventSink};
use crate::evolve::EditOutcome;
use crate::prompt;
use crate::toolcall::OfferedTool;
use crate::trajectory::Trajectory;

pub use approve::{always_key, approver, Decision};
pub use final_answer::{parse_final, FinalAnswer, Verified};
pub use history::{estimate_tokens, prompt_was_cut};
pub use resume::{latest as latest_saved_run, load as load_saved_run, SavedRun};
pub use session::{FileDiff, Switched, UndoError, Undone};

use history::{Entry, EntryKind};

/// The share of the prompt budget compaction brings the history down to, in one step: well
/// under the budget, so that many turns pass, each appending to an unchanged prefix, before
/// the next compaction rewrites it.
pub const COMPACT_TO: f64 = 0.6;

/// Turns left at which the model is warned.
pub const WARN_TURNS_LEFT: usize = 4;

/// What a run needs besides the workspace.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub task: String,
    pub model: String,
    pub max_turns: usize,
    pub max_tokens: u32,
    /// Sampling settings sent with every request ([`crate::sampling`]).
    pub sampling: crate::sampling::Sampling,
    /// Tokens of the model's context, for compaction.
    pub context_window: usize,
    /// Where that window came from, in a line (the trajectory keeps it).
    pub context_from: String,
    /// The edit format: which edit tool is taught and offered first, and which example the prompt carries (the
    /// registry given to the agent should be [`prompt::registry_for`] this arm).
    pub arm: crate::evolve::Arm,
    /// When a reply that loops or rambles is stopped on the stream.
    pub runaway: crate::runaway::RunawayLimits,
    /// How the tools reach the model (`tool_mode`).
    pub tool_mode: ToolMode,
    /// The `think` setting (`auto`: the server's default).
    pub think: String,
    /// Tokens of reasoning a reply may spend before it is stopped and asked again with
    /// thinking off (0: none).
    pub think_budget: usize,
    /// The answer is a plan ([`crate::plan`]), not the final JSON: plan mode's first phase.
    pub plans: bool,
    /// The files the run is about (a plan step's): its repo map is restricted to them and
    /// their neighbours. Empty: the whole project.
    pub map_within: Vec<String>,
    /// The check a `done` answer must pass (`verify` in the config), run through ws_shell.
    pub verify: Option<String>,
    /// How many failed checks go back to the model before the run ends blocked.
    pub verify_retries: usize,
}

/// How the tools reach the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolMode {
    /// The API's `tools`, and native tool calls.
    Native,
    /// Described in the system prompt, with one call format to write; no `tools` are sent.
    Text,
    /// Native, switching to text for the rest of the run when the server refuses tools or
    /// its tool parser fails on the model's reply.
    Auto,
}

impl ToolMode {
    /// The config's spelling (`tool_mode`); anything else is `auto`.
    pub fn parse(name: &str) -> ToolMode {
        match name {
            "native" => ToolMode::Native,
            "text" => ToolMode::Text,
            _ => ToolMode::Auto,
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct Outcome {
    pub answer: FinalAnswer,
    pub turns: usize,
    pub elapsed: Duration,
    pub run_id: String,
    /// Project-relative path of the trajectory.
    pub trajectory: String,
    /// What the edit tools saw on each edit attempt, in order, with the edit format the
    /// attempt used (the rung report the bandit learns from).
    pub edit_outcomes: Vec<(crate::evolve::Arm, EditOutcome)>,
    /// The server refused tools during this run (its words), so the run went on with the
    /// tools in the prompt: worth remembering for the next run.
    pub refused_tools: Option<String>,
    /// The plan the model answered with, when it was asked for one.
    pub plan: Option<crate::plan::Plan>,
}

/// Why a run could not go on at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// What `registry` offers: the tool definitions sent, the offered tools, and what the text
/// parser reads as calls (those and other harnesses' tool names, [`crate::foreign`]).
fn tools_of(registry: &Registry) -> (Vec<Value>, Vec<OfferedTool>, Vec<OfferedTool>) {
    let tools_json = prompt::tool_definitions(registry);
    let offered = OfferedTool::all_of(registry);
    let mut readable = offered.clone();
    for name in crate::foreign::NAMES {
        if !readable.iter().any(|t| t.name == *name) {
            readable.push(OfferedTool {
                name: (*name).to_string(),
                params: Vec::new(),
            });
        }
    }
    (tools_json, offered, readable)
}

/// A run in progress.
pub struct Agent {
    backend: Backend,
    registry: Arc<Registry>,
    workspace: Arc<Mutex<Workspace>>,
    settings: RunSettings,
    tools_json: Vec<Value>,
    offered: Vec<OfferedTool>,
    /// The offered tools and other harnesses' tool names ([`crate::foreign`]): what the text
    /// parser reads as calls.
    readable: Vec<OfferedTool>,
    trajectory: Trajectory,
    on_event: EventSink,
    history: Vec<Entry>,
    warned_cut: bool,
    /// The one repair turn for an invalid final answer has been spent.
    repaired_final: bool,
    /// Failed checks that may still go back to the model.
    verify_left: usize,
    edit_outcomes: Vec<(crate::evolve::Arm, EditOutcome)>,
    /// The run this one follows up (`slmcode run --resume`).
    resumed_from: Option<String>,
    /// The tools are described in the system prompt and no `tools` are sent.
    text_tools: bool,
    /// Why the run switched to text tools, when it did.
    refused_tools: Option<String>,
    /// The server's tokens per slmcode-estimated token, from its counts (1 until it says).
    calibration: f64,
    calibrated_once: bool,
    /// The user was told the fixed part of the prompt leaves no room.
    warned_full: bool,
    /// Times a reply that announced an action without a call may still be asked to make it.
    nudges_left: usize,
    /// Whether the check passed before this message's first turn (`None`: not run).
    passed_before: Option<bool>,
    /// This message's "nothing changed — is the task done?" was asked.
    asked_unchanged: bool,
    /// Edit attempts made before this message (its own are those after).
    edits_at_start: usize,
    /// The plan the model answered with (plan mode's first phase).
    plan: Option<crate::plan::Plan>,
    /// The protected files as this message found them ([`slmcode_aci::protect`]).
    protected: Option<(
        slmcode_aci::protect::Protect,
        slmcode_aci::protect::Snapshot,
    )>,
    /// Where each message of the user's began, for `/undo`.
    undo_points: Vec<session::UndoPoint>,
    /// File contents before and since the session changed them, for diffs.
    contents: session::Contents,
}

impl Agent {
    /// Sets up a run: the system prompt, the task with the project's instructions and skills,
    /// the tool definitions, and a fresh task for the loop guard.
    pub fn new(
        backend: Backend,
        registry: Arc<Registry>,
        workspace: Arc<Mutex<Workspace>>,
        settings: RunSettings,
        skills_text: Option<String>,
        on_event: Box<dyn FnMut(&Event) + Send>,
    ) -> Agent {
        let (instructions, map) = {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            ws.session.start_task();
            let instructions = prompt::project_instructions(&ws.jail);
            let budget =
                prompt::repo_map_budget(ws.config.repo_map_tokens, settings.context_window);
            let map = prompt::repo_map_within(
                &mut ws,
                &settings.task,
                instructions.as_deref(),
                budget,
                &settings.map_within,
            );
            (instructions, map)
        };
        let task = prompt::task_message(
            &settings.task,
            instructions.as_deref(),
            map.as_ref().map(|m| m.text.as_str()),
            skills_text.as_deref(),
        );
        let mut system = prompt::system_prompt(settings.arm);
        if settings.tool_mode == ToolMode::Text {
            system.push_str(&prompt::text_tools(&registry));
        }
        let history = vec![
            Entry {
                message: Message::system(system),
                kind: EntryKind::Fixed,
            },
            Entry {
                message: Message::user(task),
                kind: EntryKind::Fixed,
            },
        ];
        Agent::assemble(backend, registry, workspace, settings, history, on_event)
    }

    /// A run over `history`: the tool definitions and what the text parser reads as calls.
    fn assemble(
        backend: Backend,
        registry: Arc<Registry>,
        workspace: Arc<Mutex<Workspace>>,
        settings: RunSettings,
        history: Vec<Entry>,
        on_event: Box<dyn FnMut(&Event) + Send>,
    ) -> Agent {
        let (tools_json, offered, readable) = tools_of(&registry);
        let verify_left = settings.verify_retries;
        let text_tools = settings.tool_mode == ToolMode::Text;
        let on_event = events::sink(on_event);
        let mut backend = backend;
        // What a request waits on, and the reply as it streams, reach the front ends as
        // events like everything else.
        let pieces = on_event.clone();
        backend.on_notice(Arc::new(move |notice: &Notice| {
            let event = match notice {
                Notice::Loading { waited } => Event::Loading {
                    waited_ms: waited.as_millis() as u64,
                },
                Notice::PromptProgress {
                    processed,
                    total,
                    cached,
                } => Event::PromptProgress {
                    processed: *processed,
                    total: *total,
                    cached: *cached,
                },
                Notice::Piece { text, reasoning } if *reasoning => {
                    Event::Reasoning { text: text.clone() }
                }
                Notice::Piece { text, .. } => Event::Text { text: text.clone() },
            };
            events::emit(&pieces, &event);
        }));
        Agent {
            backend,
            registry,
            workspace,
            settings,
            tools_json,
            offered,
            readable,
            trajectory: Trajectory::create(),
            on_event,
            history,
            warned_cut: false,
            repaired_final: false,
            verify_left,
            edit_outcomes: Vec::new(),
            resumed_from: None,
            text_tools,
            refused_tools: None,
            calibration: 1.0,
            calibrated_once: false,
            warned_full: false,
            nudges_left: 2,
            passed_before: None,
            asked_unchanged: false,
            edits_at_start: 0,
            protected: None,
            plan: None,
            undo_points: Vec::new(),
            contents: session::Contents::default(),
        }
    }

    /// The `tools` a request carries: none once they are described in the prompt.
    fn sent_tools(&self) -> &[Value] {
        if self.text_tools {
            &[]
        } else {
            &self.tools_json
        }
    }

    /// The server refused tools: from now on they are described in the system prompt (a
    /// one-time change of the prompt's start; the server re-reads it once), said once on
    /// stderr and in the trajectory.
    fn switch_to_text_tools(&mut self, why: String) {
        self.text_tools = true;
        let section = prompt::text_tools(&self.registry);
        if let Some(system) = self.history.first_mut() {
            system.message.content.push_str(&section);
        }
        let line = format!(
            "{} refused tools for {} ({why}); describing the tools in the prompt for the rest of the run",
            self.backend.endpoint(),
            self.settings.model
        );
        self.log("tool_mode", json!({"switched_to": "text", "why": why}));
        self.emit(Event::warning(line));
        self.refused_tools = Some(why);
    }

    /// The run's id and trajectory path, known before it starts.
    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    /// Sends `event` to the front end; the events a reader of the run needs later (a file's
    /// diff, a compaction) also go into the trajectory, as they are.
    fn emit(&mut self, event: Event) {
        if let Some((kind, fields)) = event.for_trajectory() {
            self.log(kind, fields);
        }
        events::emit(&self.on_event, &event);
    }

    /// Appends a record to the trajectory; a failure to log is a warning, not a stop.
    fn log(&mut self, kind: &str, fields: Value) {
        let result = {
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.trajectory.record(&ws.jail, kind, fields)
        };
        if let Err(e) = result {
            self.emit(Event::warning(format!("trajectory: {e}")));
        }
    }

    fn note(&mut self, text: String) {
        self.log("note", json!({"text": text}));
        self.emit(Event::note(text));
    }
}
