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

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use slmcode_aci::{Outcome as CallOutcome, RefusalClass, Registry, ToolResult, Workspace};
use tokio_util::sync::CancellationToken;

use crate::backend::{
    Backend, BackendError, ChatRequest, Message, Reply, WireFunction, WireToolCall,
};
use crate::evolve::EditOutcome;
use crate::prompt;
use crate::toolcall::{self, OfferedTool};
use crate::trajectory::Trajectory;

/// The share of the context window the history may fill before old tool results are elided.
pub const COMPACT_AT: f64 = 0.8;

/// Turns left at which the model is warned.
pub const WARN_TURNS_LEFT: usize = 4;

/// The final answer of a run, as the spec defines it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalAnswer {
    /// "done" or "blocked" (or "interrupted" when the user stopped the run).
    pub status: String,
    pub summary: String,
    /// What the run changed on disk, as the tools recorded it (not as the model remembers it).
    pub files_changed: Vec<String>,
    pub notes: String,
}

/// What a run needs besides the workspace.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub task: String,
    pub model: String,
    pub max_turns: usize,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// Tokens of the model's context, for compaction.
    pub context_window: usize,
    /// The edit format: which edit tool is offered and which example the prompt carries (the
    /// registry given to the agent should be [`prompt::registry_for`] this arm).
    pub arm: crate::evolve::Arm,
}

/// What the user sees while a run goes (the CLI prints these on stderr).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Turn {
        number: usize,
        max: usize,
    },
    Reply {
        tokens: u64,
        tokens_per_sec: f64,
        elapsed: Duration,
    },
    Call {
        line: String,
    },
    Result {
        first_line: String,
        is_error: bool,
    },
    Note(String),
    Warning(String),
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
    /// What the edit tools saw on each edit attempt, in order (the rung report the bandit
    /// learns from).
    pub edit_outcomes: Vec<EditOutcome>,
}

/// Why a run could not go on at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// What kind of message an entry of the history is, for compaction.
#[derive(Clone, Debug)]
enum EntryKind {
    Fixed,
    Assistant,
    ToolResult { summary: String, elided: bool },
}

#[derive(Clone, Debug)]
struct Entry {
    message: Message,
    kind: EntryKind,
}

/// One tool call to run, however the model wrote it.
struct Call {
    name: String,
    arguments: Value,
    /// The native call's id; `None` when the call was written as text.
    native_id: Option<String>,
    /// For a text call: where the call ends in the reply, to cut the message after it.
    text_end: Option<usize>,
    repairs: Vec<&'static str>,
    /// Native arguments that were not JSON even after repair: why. Such a call never runs.
    unreadable: Option<String>,
}

/// A run in progress.
pub struct Agent {
    backend: Backend,
    registry: Arc<Registry>,
    workspace: Arc<Mutex<Workspace>>,
    settings: RunSettings,
    tools_json: Vec<Value>,
    offered: Vec<OfferedTool>,
    trajectory: Trajectory,
    on_event: Box<dyn FnMut(&Event) + Send>,
    history: Vec<Entry>,
    warned_cut: bool,
    edit_outcomes: Vec<EditOutcome>,
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
        let instructions = {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            ws.session.start_task();
            prompt::project_instructions(&ws.jail)
        };
        let task = prompt::task_message(
            &settings.task,
            instructions.as_deref(),
            skills_text.as_deref(),
        );
        let history = vec![
            Entry {
                message: Message::system(prompt::system_prompt(settings.arm)),
                kind: EntryKind::Fixed,
            },
            Entry {
                message: Message::user(task),
                kind: EntryKind::Fixed,
            },
        ];
        let tools_json = prompt::tool_definitions(&registry);
        let offered = registry
            .specs()
            .map(|s| OfferedTool {
                name: s.name.to_string(),
                params: s
                    .params
                    .iter()
                    .map(|p| (p.name.to_string(), p.kind))
                    .collect(),
            })
            .collect();
        Agent {
            backend,
            registry,
            workspace,
            settings,
            tools_json,
            offered,
            trajectory: Trajectory::create(),
            on_event,
            history,
            warned_cut: false,
            edit_outcomes: Vec::new(),
        }
    }

    /// The run's id and trajectory path, known before it starts.
    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    fn emit(&mut self, event: Event) {
        (self.on_event)(&event);
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
            self.emit(Event::Warning(format!("trajectory: {e}")));
        }
    }

    fn note(&mut self, text: String) {
        self.log("note", json!({"text": text}));
        self.emit(Event::Note(text));
    }

    /// Runs the task to its end, or until `cancel` fires.
    pub async fn run(mut self, cancel: CancellationToken) -> Result<Outcome, RunError> {
        let started = Instant::now();
        let max = self.settings.max_turns;
        self.log(
            "start",
            json!({
                "task": self.settings.task,
                "model": self.settings.model,
                "endpoint": self.backend.endpoint(),
                "max_turns": max,
                "max_tokens": self.settings.max_tokens,
                "edit_format": self.settings.arm.name(),
                "context_window": self.settings.context_window,
                "tools": self.tools_json.iter().map(|t| t["function"]["name"].clone()).collect::<Vec<_>>(),
                "system": self.history[0].message.content,
                "first_message": self.history[1].message.content,
            }),
        );
        let mut turn = 0;
        let mut ended_on_call = false;
        let mut repaired_final = false;
        let answer = loop {
            if turn == max {
                break None;
            }
            turn += 1;
            self.emit(Event::Turn { number: turn, max });
            let left = max - turn + 1;
            let extra = (left <= WARN_TURNS_LEFT).then(|| prompt::turns_left_warning(left));
            let reply = tokio::select! {
                r = self.ask(turn, extra, true) => r?,
                _ = cancel.cancelled() => return Ok(self.interrupted(turn, started)),
            };
            if reply.truncated() {
                ended_on_call = false;
                self.push(
                    Message::assistant(clip(&reply.content, 2000)),
                    EntryKind::Assistant,
                );
                let text = format!(
                    "Your reply was cut off at max_tokens ({} tokens) before it was finished, so nothing ran. Send a shorter tool call: edit a smaller span, or split the change into several ws_edit calls.",
                    self.settings.max_tokens
                );
                self.note("reply truncated at max_tokens; asked for a shorter call".into());
                self.push(Message::user(text), EntryKind::Fixed);
                continue;
            }
            let (calls, problems) = self.calls_in(&reply);
            let total = calls.len();
            let Some(call) = calls.into_iter().next() else {
                ended_on_call = false;
                if let Some(problem) = problems {
                    self.push(
                        Message::assistant(reply.content.clone()),
                        EntryKind::Assistant,
                    );
                    self.note(format!("no call could be run: {problem}"));
                    self.push(Message::user(problem), EntryKind::Fixed);
                    continue;
                }
                match parse_final(&reply.content) {
                    Ok(answer) => break Some(answer),
                    Err(why) if !repaired_final => {
                        repaired_final = true;
                        self.push(
                            Message::assistant(reply.content.clone()),
                            EntryKind::Assistant,
                        );
                        self.note(format!("final answer not valid ({why}); asked once more"));
                        self.push(Message::user(final_repair_text(&why)), EntryKind::Fixed);
                        continue;
                    }
                    Err(why) => {
                        break Some(FinalAnswer {
                            status: "blocked".into(),
                            summary: clip(reply.content.trim(), 500),
                            files_changed: Vec::new(),
                            notes: format!("the model's final answer was not valid JSON ({why})"),
                        })
                    }
                }
            };
            ended_on_call = true;
            let dropped = total - 1;
            self.keep_only(&reply, &call);
            let result = tokio::select! {
                r = self.execute(&call) => r,
                _ = cancel.cancelled() => return Ok(self.interrupted(turn, started)),
            };
            let mut text = result.text.clone();
            if !call.repairs.is_empty() {
                text.push_str(&format!(
                    "\n[your arguments needed repair ({}); send plain JSON]",
                    call.repairs.join(", ")
                ));
            }
            if dropped > 0 {
                text.push_str(&format!(
                    "\n[only your first tool call ran; {dropped} more {} dropped — make one tool call per turn]",
                    if dropped == 1 { "was" } else { "were" }
                ));
            }
            let outcome = EditOutcome::of(&call.name, &result.outcome);
            if let Some(o) = outcome {
                self.edit_outcomes.push(o);
            }
            // The trajectory shows the arguments as the tools saw them (aliases resolved).
            let args = self
                .registry
                .canonical_args(&call.name, &call.arguments)
                .unwrap_or_else(|| call.arguments.clone());
            self.log(
                "tool",
                json!({"turn": turn, "name": call.name, "args": args, "result": text,
                       "is_error": result.is_error, "edit_outcome": outcome,
                       "outcome": result.outcome}),
            );
            self.emit(Event::Result {
                first_line: text.lines().next().unwrap_or("").to_string(),
                is_error: result.is_error,
            });
            let summary = result_summary(&call, &result);
            let message = match &call.native_id {
                Some(id) => Message::tool_result(id, text),
                None => Message::user(format!("[{} result]\n{text}", call.name)),
            };
            self.push(
                message,
                EntryKind::ToolResult {
                    summary,
                    elided: false,
                },
            );
        };
        let answer = match answer {
            Some(a) => a,
            None if ended_on_call => {
                self.note(
                    "turn budget spent after a tool call; one steering turn for the final JSON"
                        .into(),
                );
                self.push(
                    Message::user(
                        "You are out of turns. Do not call any tool. Reply now with only the final JSON: {\"status\":\"done\" or \"blocked\",\"summary\":\"...\",\"files_changed\":[...],\"notes\":\"...\"}",
                    ),
                    EntryKind::Fixed,
                );
                let reply = tokio::select! {
                    r = self.ask(turn + 1, None, false) => r?,
                    _ = cancel.cancelled() => return Ok(self.interrupted(turn, started)),
                };
                self.push(
                    Message::assistant(reply.content.clone()),
                    EntryKind::Assistant,
                );
                parse_final(&reply.content).unwrap_or_else(|why| FinalAnswer {
                    status: "blocked".into(),
                    summary: "the turn budget ran out before the task was finished".into(),
                    files_changed: Vec::new(),
                    notes: format!("no valid final JSON after the budget ran out ({why})"),
                })
            }
            None => FinalAnswer {
                status: "blocked".into(),
                summary: "the turn budget ran out before the task was finished".into(),
                files_changed: Vec::new(),
                notes: String::new(),
            },
        };
        Ok(self.finish(answer, turn, started))
    }

    fn push(&mut self, message: Message, kind: EntryKind) {
        self.history.push(Entry { message, kind });
    }

    /// One request with the history (compacted to fit), plus a transient note for this turn.
    async fn ask(
        &mut self,
        turn: usize,
        extra: Option<String>,
        with_tools: bool,
    ) -> Result<Reply, BackendError> {
        self.compact();
        let mut messages: Vec<Message> = self.history.iter().map(|e| e.message.clone()).collect();
        if let Some(note) = &extra {
            messages.push(Message::user(note.clone()));
        }
        let tools: Vec<Value> = if with_tools {
            self.tools_json.clone()
        } else {
            Vec::new()
        };
        let estimate = estimate_tokens(&messages, &tools);
        let last = self.history.last().map(|e| e.message.clone());
        self.log(
            "request",
            json!({"turn": turn, "last_message": last, "extra": extra, "messages": messages.len(), "estimated_prompt_tokens": estimate}),
        );
        let request = ChatRequest {
            model: &self.settings.model,
            messages: &messages,
            tools: &tools,
            max_tokens: Some(self.settings.max_tokens),
            temperature: self.settings.temperature,
        };
        let reply = match self.backend.chat(&request).await {
            Ok(r) => r,
            Err(e) => {
                self.log("error", json!({"turn": turn, "error": e.to_string()}));
                return Err(e);
            }
        };
        self.log(
            "reply",
            json!({"turn": turn, "content": reply.content, "reasoning": reply.reasoning, "tool_calls": reply.tool_calls,
                   "finish_reason": reply.finish_reason, "usage": reply.usage, "elapsed_ms": reply.elapsed.as_millis() as u64}),
        );
        let tokens = reply
            .usage
            .map(|u| u.completion_tokens)
            .filter(|n| *n > 0)
            .unwrap_or((reply.content.len() / 4) as u64);
        let secs = reply.elapsed.as_secs_f64().max(1e-3);
        self.emit(Event::Reply {
            tokens,
            tokens_per_sec: tokens as f64 / secs,
            elapsed: reply.elapsed,
        });
        if let Some(usage) = reply.usage {
            if !self.warned_cut && prompt_was_cut(usage.prompt_tokens, estimate) {
                self.warned_cut = true;
                let text = format!(
                    "the server counted {} prompt tokens but the prompt is about {estimate}: it was probably cut to fit the server's context, and the model did not see all of it. Ollama's default context is small — start it with OLLAMA_CONTEXT_LENGTH=16384 ollama serve (or set num_ctx), and set context_window: 16384 in .slmcode/config.yaml",
                    usage.prompt_tokens
                );
                self.log("warning", json!({"text": text}));
                self.emit(Event::Warning(text));
            }
        }
        Ok(reply)
    }

    /// The calls in a reply (native first, else written as text), and, when there is none to
    /// run, what the model should be told about its attempt.
    fn calls_in(&mut self, reply: &Reply) -> (Vec<Call>, Option<String>) {
        if !reply.tool_calls.is_empty() {
            let calls = reply
                .tool_calls
                .iter()
                .map(|c| {
                    let (arguments, repairs, unreadable) =
                        match toolcall::repair_json_object(&c.function.arguments) {
                            Ok((v, r)) => (v, r, None),
                            Err(e) => (json!({}), Vec::new(), Some(e)),
                        };
                    Call {
                        unreadable,
                        name: strip_prefix(&c.function.name).to_string(),
                        arguments,
                        native_id: Some(c.id.clone()),
                        text_end: None,
                        repairs,
                    }
                })
                .collect();
            return (calls, None);
        }
        let found = toolcall::parse_text_calls(&reply.content, &self.offered);
        let calls: Vec<Call> = found
            .calls
            .into_iter()
            .map(|c| Call {
                name: c.name,
                arguments: c.arguments,
                native_id: None,
                text_end: Some(c.span.end),
                repairs: c.repairs,
                unreadable: None,
            })
            .collect();
        if !calls.is_empty() {
            return (calls, None);
        }
        let names: Vec<&str> = self.offered.iter().map(|t| t.name.as_str()).collect();
        let problem = if !found.unknown.is_empty() {
            Some(format!(
                "There is no tool named {}. The tools are: {}. Call one of them.",
                found
                    .unknown
                    .iter()
                    .map(|n| format!("\"{n}\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                names.join(", ")
            ))
        } else if !found.unreadable.is_empty() {
            Some(format!(
                "Your tool call could not be read: {}. Send it again as valid JSON arguments.",
                found.unreadable.join("; ")
            ))
        } else {
            None
        };
        (Vec::new(), problem)
    }

    /// Keeps only `call` in the assistant message of the history.
    fn keep_only(&mut self, reply: &Reply, call: &Call) {
        let message = match &call.native_id {
            Some(id) => {
                let kept: Vec<WireToolCall> = reply
                    .tool_calls
                    .iter()
                    .filter(|c| &c.id == id)
                    .take(1)
                    .map(|c| WireToolCall {
                        id: c.id.clone(),
                        kind: "function".into(),
                        function: WireFunction {
                            name: call.name.clone(),
                            // Repaired arguments, so the history holds valid JSON.
                            arguments: call.arguments.to_string(),
                        },
                    })
                    .collect();
                Message {
                    role: "assistant".into(),
                    content: reply.content.clone(),
                    tool_calls: kept,
                    tool_call_id: None,
                }
            }
            None => {
                let end = call.text_end.unwrap_or(reply.content.len());
                Message::assistant(reply.content.get(..end).unwrap_or(&reply.content))
            }
        };
        self.push(message, EntryKind::Assistant);
        let line = format!("{} {}", call.name, clip(&call.arguments.to_string(), 160));
        self.emit(Event::Call { line });
    }

    /// Runs one call on the workspace, off the async threads (tools block).
    async fn execute(&mut self, call: &Call) -> ToolResult {
        if let Some(e) = &call.unreadable {
            return ToolResult {
                text: format!(
                    "the arguments of your {} call are not valid JSON ({e}); nothing ran. Send them again as one JSON object.",
                    call.name
                ),
                is_error: true,
                outcome: CallOutcome::Refused(RefusalClass::Args),
            };
        }
        let registry = self.registry.clone();
        let workspace = self.workspace.clone();
        let (name, args) = (call.name.clone(), call.arguments.clone());
        tokio::task::spawn_blocking(move || {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            registry.call(&mut ws, &name, &args)
        })
        .await
        .unwrap_or_else(|e| ToolResult {
            text: format!("internal error running the tool: {e}"),
            is_error: true,
            outcome: CallOutcome::Refused(RefusalClass::Internal),
        })
    }

    /// Elides old tool results (oldest first, the last two kept) while the history is over
    /// [`COMPACT_AT`] of the context window. Messages are shortened, never removed, so every
    /// call keeps its result.
    fn compact(&mut self) {
        let budget = (self.settings.context_window as f64 * COMPACT_AT) as usize;
        let total =
            |h: &[Entry], tools: &[Value]| estimate_tokens(h.iter().map(|e| &e.message), tools);
        if total(&self.history, &self.tools_json) <= budget {
            return;
        }
        let results: Vec<usize> = self
            .history
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.kind, EntryKind::ToolResult { elided: false, .. }))
            .map(|(i, _)| i)
            .collect();
        let keep_from = results.len().saturating_sub(2);
        let mut elided = 0;
        for &i in &results[..keep_from] {
            if total(&self.history, &self.tools_json) <= budget {
                break;
            }
            if let Some(entry) = self.history.get_mut(i) {
                if let EntryKind::ToolResult {
                    summary,
                    elided: done,
                } = &mut entry.kind
                {
                    entry.message.content = format!("[elided to save context: {summary}]");
                    *done = true;
                    elided += 1;
                }
            }
        }
        if elided > 0 {
            self.note(format!(
                "{elided} old tool result(s) elided to stay under {budget} tokens"
            ));
        }
    }

    fn interrupted(&mut self, turn: usize, started: Instant) -> Outcome {
        let answer = FinalAnswer {
            status: "interrupted".into(),
            summary: "stopped by the user".into(),
            files_changed: Vec::new(),
            notes: String::new(),
        };
        self.finish(answer, turn, started)
    }

    fn finish(&mut self, mut answer: FinalAnswer, turns: usize, started: Instant) -> Outcome {
        {
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            answer.files_changed = ws.session.changed.iter().map(|p| p.to_string()).collect();
        }
        let elapsed = started.elapsed();
        self.log(
            "final",
            json!({"answer": answer, "turns": turns, "elapsed_ms": elapsed.as_millis() as u64}),
        );
        Outcome {
            answer,
            turns,
            elapsed,
            run_id: self.trajectory.id.clone(),
            trajectory: self.trajectory.path.to_string(),
            edit_outcomes: std::mem::take(&mut self.edit_outcomes),
        }
    }
}

/// `functions.ws_read` and the like, as some templates name native calls.
fn strip_prefix(name: &str) -> &str {
    for p in ["functions.", "tools.", "default_api.", "function."] {
        if let Some(rest) = name.strip_prefix(p) {
            return rest;
        }
    }
    name
}

/// A short description of a tool result that survives compaction: the call and its outcome.
fn result_summary(call: &Call, result: &ToolResult) -> String {
    let target = ["path", "pattern", "command", "from"]
        .iter()
        .find_map(|k| call.arguments.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let outcome = if result.is_error { "error" } else { "ok" };
    let first = result.text.lines().next().unwrap_or("");
    format!(
        "{} {} → {outcome}: {} ({} lines)",
        call.name,
        clip(target, 80),
        clip(first, 100),
        result.text.lines().count()
    )
}

/// Tokens of a request, estimated at 3.5 characters a token plus a little per message; close
/// enough to decide when to compact, and to notice a prompt the server cut.
pub fn estimate_tokens<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
    tools: &[Value],
) -> usize {
    let mut count = 0;
    let mut chars: usize = tools.iter().map(|t| t.to_string().chars().count()).sum();
    for m in messages {
        count += 1;
        chars += m.content.chars().count()
            + m.tool_calls
                .iter()
                .map(|c| c.function.name.len() + c.function.arguments.chars().count())
                .sum::<usize>();
    }
    chars * 2 / 7 + count * 4
}

/// The server counted far fewer prompt tokens than were sent: it cut the prompt.
fn prompt_was_cut(counted: u64, estimate: usize) -> bool {
    let counted = counted as usize;
    counted > 0 && estimate > 1000 && counted * 2 < estimate
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// Reads the final JSON from a reply: the object may sit in a fence or after prose (which may
/// hold braces of its own, so each `{` is tried in turn).
pub fn parse_final(text: &str) -> Result<FinalAnswer, String> {
    let mut first_error = None;
    for (i, _) in text.match_indices('{') {
        match final_from(&text[i..]) {
            Ok(answer) => return Ok(answer),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "there is no JSON object in the reply".into()))
}

fn final_from(text: &str) -> Result<FinalAnswer, String> {
    let (value, _) = toolcall::repair_json_object(text)?;
    let status = value["status"]
        .as_str()
        .ok_or("\"status\" is missing")?
        .trim()
        .to_ascii_lowercase();
    let status = match status.as_str() {
        "done" | "success" | "completed" | "complete" | "ok" => "done",
        "blocked" | "failed" | "failure" | "error" | "incomplete" => "blocked",
        other => {
            return Err(format!(
                "\"status\" must be \"done\" or \"blocked\", not \"{other}\""
            ))
        }
    };
    let summary = value["summary"]
        .as_str()
        .ok_or("\"summary\" is missing")?
        .to_string();
    let files_changed = value["files_changed"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let notes = match &value["notes"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    Ok(FinalAnswer {
        status: status.into(),
        summary,
        files_changed,
        notes,
    })
}

fn final_repair_text(why: &str) -> String {
    format!(
        "Your final answer is not valid ({why}). Reply with only this JSON and nothing else: {{\"status\":\"done\",\"summary\":\"what you changed\",\"files_changed\":[\"path\"],\"notes\":\"\"}} (status \"blocked\" if you could not finish)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_answers_are_read_leniently_and_checked() {
        let a = parse_final("Done!\n```json\n{\"status\": \"done\", \"summary\": \"added it\", \"files_changed\": [\"a.py\"], \"notes\": \"\"}\n```").unwrap();
        assert_eq!(a.status, "done");
        assert_eq!(a.summary, "added it");
        let a = parse_final("{'status': 'success', 'summary': 'x', 'notes': None,}").unwrap();
        assert_eq!((a.status.as_str(), a.notes.as_str()), ("done", ""));
        assert!(parse_final("I changed the file.")
            .unwrap_err()
            .contains("no JSON"));
        assert!(parse_final("{\"summary\": \"x\"}")
            .unwrap_err()
            .contains("status"));
        assert!(parse_final("{\"status\": \"maybe\", \"summary\": \"x\"}")
            .unwrap_err()
            .contains("not \"maybe\""));
    }

    #[test]
    fn a_cut_prompt_is_noticed() {
        assert!(prompt_was_cut(2048, 9000));
        assert!(!prompt_was_cut(8000, 9000));
        assert!(!prompt_was_cut(0, 9000));
        assert!(!prompt_was_cut(100, 500));
    }

    #[test]
    fn names_lose_template_prefixes() {
        assert_eq!(strip_prefix("functions.ws_read"), "ws_read");
        assert_eq!(strip_prefix("ws_read"), "ws_read");
    }
}
