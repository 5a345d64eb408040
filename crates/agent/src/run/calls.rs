//! The tool calls of a reply: read from the native `tool_calls` or, failing those, from the
//! text (every format small models write), with their arguments repaired; only the first runs,
//! and the assistant message kept in history is cut down to it.

use std::sync::PoisonError;

use serde_json::{json, Value};
use slmcode_aci::control::CallControl;
use slmcode_aci::{Outcome as CallOutcome, RefusalClass, ToolResult};
use tokio_util::sync::CancellationToken;

use super::history::{clip, EntryKind};
use super::{Agent, Event};
use crate::backend::{Message, Reply, WireFunction, WireToolCall};
use crate::foreign::{self, Foreign};
use crate::toolcall;

/// One tool call to run, however the model wrote it.
pub(super) struct Call {
    pub(super) name: String,
    pub(super) arguments: Value,
    /// The native call's id; `None` when the call was written as text.
    pub(super) native_id: Option<String>,
    /// For a text call: where the call ends in the reply, to cut the message after it.
    pub(super) text_end: Option<usize>,
    pub(super) repairs: Vec<&'static str>,
    /// Native arguments that were not JSON even after repair: why. Such a call never runs.
    pub(super) unreadable: Option<String>,
    /// Other call attempts in the same reply that could not be read, said with this call's
    /// result so the model knows which of its calls ran.
    pub(super) unread_others: Vec<String>,
    /// Another harness's tool name this call was written with, when it ran as ours.
    pub(super) ran_as: Option<String>,
    /// Another harness's tool with no one counterpart here: what the model is told instead.
    pub(super) not_ours: Option<String>,
}

impl Agent {
    /// The calls in a reply (native first, else written as text), and, when there is none to
    /// run, what the model should be told about its attempt.
    pub(super) fn calls_in(&self, reply: &Reply) -> (Vec<Call>, Option<String>) {
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
                        unread_others: Vec::new(),
                        ran_as: None,
                        not_ours: None,
                    }
                })
                .map(|c| self.ours(c))
                .collect();
            return (calls, None);
        }
        let found = toolcall::parse_text_calls(&reply.content, &self.readable);
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
                unread_others: found.unreadable.clone(),
                ran_as: None,
                not_ours: None,
            })
            .map(|c| self.ours(c))
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
                "Your tool call was not understood: {}. Write it as <tool_call>{{\"name\": \"TOOL\", \"arguments\": {{...}}}}</tool_call> with the arguments as valid JSON.",
                found.unreadable.join("; ")
            ))
        } else {
            None
        };
        (Vec::new(), problem)
    }

    /// `call` with another harness's tool name mapped onto ours ([`foreign`]), or marked with
    /// the closest tool when no one call of ours means the same.
    fn ours(&self, mut call: Call) -> Call {
        if self.registry.names().contains(&call.name.as_str()) {
            return call;
        }
        let offered = |tool: &str| self.registry.specs().find(|s| s.name == tool);
        match foreign::translate(&call.name, &call.arguments) {
            None => {}
            Some(Foreign::Run { tool, args }) if offered(tool).is_some() => {
                call.ran_as = Some(std::mem::replace(&mut call.name, tool.to_string()));
                call.arguments = args;
            }
            Some(Foreign::Run { tool, .. }) | Some(Foreign::Closest { tool, .. }) => {
                let why = match foreign::translate(&call.name, &call.arguments) {
                    Some(Foreign::Closest { why, .. }) => format!(" ({why})"),
                    _ => String::new(),
                };
                // An edit tool this run does not offer: the edit tool it does is the closest.
                const EDIT_TOOLS: [&str; 3] = ["ws_edit", "ws_patch", "ws_write"];
                let tool = if offered(tool).is_none() && EDIT_TOOLS.contains(&tool) {
                    EDIT_TOOLS
                        .into_iter()
                        .find(|t| offered(t).is_some())
                        .unwrap_or(tool)
                } else {
                    tool
                };
                call.not_ours = Some(match offered(tool) {
                    Some(spec) => format!(
                        "{} is another tool set's name, not a tool here{why}; nothing ran. The closest tool here is {tool}: {} Example: {tool} {}",
                        call.name, spec.description, spec.example
                    ),
                    None => format!(
                        "{} is another tool set's name, not a tool here{why}; nothing ran. The tools here are: {}.",
                        call.name,
                        self.registry.names().join(", ")
                    ),
                });
            }
        }
        call
    }

    /// Keeps only `call` in the assistant message of the history.
    pub(super) fn keep_only(&mut self, turn: usize, reply: &Reply, call: &Call) {
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
                    reasoning_content: None,
                }
            }
            None => {
                let end = call.text_end.unwrap_or(reply.content.len());
                Message::assistant(reply.content.get(..end).unwrap_or(&reply.content))
            }
        };
        let mut message = message;
        // gpt-oss needs its reasoning between tool calls: without it, it loses the thread.
        if needs_reasoning_back(&self.settings.model) && !reply.reasoning.trim().is_empty() {
            message.reasoning_content = Some(reply.reasoning.clone());
        }
        self.push(message, EntryKind::Assistant);
        let line = format!("{} {}", call.name, clip(&call.arguments.to_string(), 160));
        let args = self
            .registry
            .canonical_args(&call.name, &call.arguments)
            .unwrap_or_else(|| call.arguments.clone());
        self.emit(Event::Call {
            turn,
            name: call.name.clone(),
            args,
            line,
        });
    }

    /// Runs one call on the workspace, off the async threads (tools block). When `cancel`
    /// fires the call is stopped (a command's process tree killed) and its result says so.
    pub(super) async fn execute(&mut self, call: &Call, cancel: &CancellationToken) -> ToolResult {
        if let Some(text) = &call.not_ours {
            return ToolResult {
                text: text.clone(),
                is_error: true,
                outcome: CallOutcome::Refused(RefusalClass::Args),
            };
        }
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
        let control = CallControl::new();
        let theirs = control.clone();
        let mut task = tokio::task::spawn_blocking(move || {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            registry.call_with(&mut ws, &name, &args, &theirs)
        });
        let joined = tokio::select! {
            r = &mut task => r,
            () = cancel.cancelled() => {
                control.cancel();
                task.await
            }
        };
        joined.unwrap_or_else(|e| ToolResult {
            text: format!("internal error running the tool: {e}"),
            is_error: true,
            outcome: CallOutcome::Refused(RefusalClass::Internal),
        })
    }
}

/// Models that must see their earlier reasoning in the conversation (gpt-oss: its chat
/// format carries the reasoning of a tool-calling turn into the next request).
fn needs_reasoning_back(model: &str) -> bool {
    model.to_ascii_lowercase().contains("gpt-oss")
}

/// What the model reads of a result: the tool's text, and what it must do differently next
/// time (plain JSON arguments, one call per turn; `dropped` calls did not run).
pub(super) fn result_text(call: &Call, result: &ToolResult, dropped: usize) -> String {
    let mut text = result.text.clone();
    if !call.repairs.is_empty() {
        text.push_str(&format!(
            "\n[your arguments needed repair ({}); send plain JSON]",
            call.repairs.join(", ")
        ));
    }
    if let Some(theirs) = &call.ran_as {
        text.push_str(&format!(
            "\n[{theirs} is not a tool here: this ran as {name}; call it {name} next time]",
            name = call.name
        ));
    }
    if !call.unread_others.is_empty() {
        text.push_str(&format!(
            "\n[another tool call in your reply could not be read ({}); only this one ran]",
            call.unread_others.join("; ")
        ));
    }
    if dropped > 0 {
        text.push_str(&format!(
            "\n[only your first tool call ran; {dropped} more {} dropped — make one tool call per turn]",
            if dropped == 1 { "was" } else { "were" }
        ));
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_template_prefixes() {
        assert_eq!(strip_prefix("functions.ws_read"), "ws_read");
        assert_eq!(strip_prefix("ws_read"), "ws_read");
    }
}
