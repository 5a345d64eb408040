//! Follow-ups: `slmcode run --resume [ID] "now also …"` continues a run's conversation with a
//! new instruction. Every run ends by saving what a follow-up needs beside its trajectory, in
//! `.slmcode/runs/<id>.state.json`: the history as the model last saw it (compaction
//! included), the edit format its system prompt teaches, the model, and the session (what was
//! read, the checklist, the task's loop guard, the checkpoint session).
//!
//! A follow-up sends the saved history unchanged and appends the new instruction, so the
//! server's cached prompt still holds; a file read in the run and unchanged since may be
//! edited at once, one changed since must be read again, as within one run. The state is a
//! sealed record ([`state`]): one shipped with a repository, or changed since it was saved,
//! is never resumed — its history would go to the server and its reads would skip the
//! read-before-edit rule.

use serde::{Deserialize, Serialize};
use slmcode_aci::boundary::layout;
use slmcode_aci::path::{Jail, RelPath};
use slmcode_aci::workspace::{Session, SessionState};
use slmcode_aci::{state, RefusalClass, ToolError};

use super::history::{Entry, EntryKind};
use super::Agent;
use crate::backend::Message;
use crate::evolve::Arm;

/// The version of the saved state; a file of another version is refused with what to do.
const VERSION: u32 = 1;

/// What a run leaves for a follow-up.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRun {
    pub version: u32,
    pub run_id: String,
    pub model: String,
    /// The edit format the saved system prompt teaches; a follow-up offers the same.
    pub arm: Arm,
    /// How the run ended (`done`, `blocked`, `interrupted`, `error`).
    pub status: String,
    /// When it was saved, in milliseconds since the epoch: the latest run is the last saved.
    pub saved_at: u64,
    pub(super) history: Vec<Entry>,
    pub session: SessionState,
    /// The tools were described in the prompt (text mode): a follow-up sends none either.
    #[serde(default)]
    pub text_tools: bool,
}

fn state_path(id: &str) -> RelPath {
    layout::path(layout::RUNS).join(&format!("{id}.state.json"))
}

/// The saved state of run `id`, when slmcode saved it for this user.
pub fn load(jail: &Jail, id: &str) -> Result<SavedRun, ToolError> {
    state::check_id(id, "run", "slmcode runs list")?;
    let read = state::read_json(jail, &state_path(id), || {
        let has_log = jail
            .metadata(&layout::path(layout::RUNS).join(&format!("{id}.jsonl")))
            .is_ok();
        if has_log {
            format!("run {id} cannot be resumed: it saved no state (it ran before slmcode saved runs for follow-ups, or it was killed); start a new run")
        } else {
            format!("no run {id} (see `slmcode runs list`)")
        }
    });
    let saved: SavedRun = match read {
        Ok(saved) => saved,
        Err(e) if e.class() == RefusalClass::Untrusted => {
            return Err(ToolError::refused(
                RefusalClass::Untrusted,
                format!("run {id} cannot be resumed: {e}; start a new run"),
            ))
        }
        Err(e) => return Err(e),
    };
    if saved.version != VERSION {
        return Err(ToolError::refused(
            RefusalClass::Io,
            format!(
                "run {id} was saved by another version of slmcode (state version {}, this one reads {VERSION}); start a new run",
                saved.version
            ),
        ));
    }
    Ok(saved)
}

/// The id of the project's most recently saved run, if any run saved state. A state slmcode
/// did not save for this user is passed over, and reported.
pub fn latest(jail: &Jail) -> Result<Option<String>, ToolError> {
    let names = state::list_names(jail, &layout::path(layout::RUNS))?;
    /// Only the stamp is needed to choose.
    #[derive(Deserialize)]
    struct Stamp {
        version: u32,
        saved_at: u64,
    }
    let mut best: Option<(u64, String)> = None;
    for id in names.iter().filter_map(|n| n.strip_suffix(".state.json")) {
        let stamp = match state::read_json::<Stamp>(jail, &state_path(id), String::new) {
            Ok(stamp) => stamp,
            Err(e) => {
                state::report_ignored(&e);
                continue;
            }
        };
        if stamp.version == VERSION && best.as_ref().is_none_or(|(t, _)| stamp.saved_at >= *t) {
            best = Some((stamp.saved_at, id.to_string()));
        }
    }
    Ok(best.map(|(_, id)| id))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Agent {
    /// Saves what a follow-up needs. A failure is a warning: the run itself stands.
    pub(super) fn save_for_follow_up(&mut self, status: &str) {
        let result = {
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let saved = SavedRun {
                version: VERSION,
                run_id: self.trajectory.id.clone(),
                model: self.settings.model.clone(),
                arm: self.settings.arm,
                status: status.to_string(),
                saved_at: now_ms(),
                history: self.history.clone(),
                session: ws.session.state(),
                text_tools: self.text_tools,
            };
            state::write_json(&ws.jail, &state_path(&self.trajectory.id), &saved)
        };
        if let Err(e) = result {
            self.emit(super::Event::warning(format!(
                "could not save the run for a follow-up (slmcode run --resume): {e}"
            )));
        }
    }

    /// A run that continues `saved` with the task in `settings` as a follow-up instruction:
    /// the saved history, the session restored into the workspace, the same edit format.
    pub fn resume(
        backend: crate::backend::Backend,
        registry: std::sync::Arc<slmcode_aci::Registry>,
        workspace: std::sync::Arc<std::sync::Mutex<slmcode_aci::Workspace>>,
        mut settings: super::RunSettings,
        saved: SavedRun,
        skills_text: Option<String>,
        on_event: Box<dyn FnMut(&super::Event) + Send>,
    ) -> Agent {
        settings.arm = saved.arm;
        {
            let mut ws = workspace
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let session = Session::resume(&ws.jail, saved.session);
            ws.session = session;
        }
        let mut history = saved.history;
        close_unanswered_calls(&mut history);
        history.push(Entry {
            message: Message::user(crate::prompt::follow_up_message(
                &settings.task,
                skills_text.as_deref(),
            )),
            kind: EntryKind::Fixed,
        });
        let mut agent = Agent::assemble(backend, registry, workspace, settings, history, on_event);
        agent.resumed_from = Some(saved.run_id);
        agent.text_tools = saved.text_tools;
        agent
    }
}

/// A run stopped while a native call ran leaves the call without a result; servers refuse a
/// history like that, so the call gets one saying what happened.
fn close_unanswered_calls(history: &mut Vec<Entry>) {
    let Some(last) = history.last() else { return };
    if last.message.role != "assistant" {
        return;
    }
    let ids: Vec<String> = last
        .message
        .tool_calls
        .iter()
        .map(|c| c.id.clone())
        .collect();
    for id in ids {
        history.push(Entry {
            message: Message::tool_result(
                &id,
                "[not finished: the run was stopped while this call ran; check what it did before relying on it]",
            ),
            kind: EntryKind::Fixed,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{WireFunction, WireToolCall};

    #[test]
    fn a_call_cut_off_by_a_stop_gets_a_result() {
        let call = Message {
            role: "assistant".into(),
            content: String::new(),
            tool_calls: vec![WireToolCall {
                id: "call_7".into(),
                kind: "function".into(),
                function: WireFunction {
                    name: "ws_shell".into(),
                    arguments: "{}".into(),
                },
            }],
            tool_call_id: None,
            reasoning_content: None,
        };
        let mut history = vec![Entry {
            message: call,
            kind: EntryKind::Assistant,
        }];
        close_unanswered_calls(&mut history);
        assert_eq!(history.len(), 2);
        assert_eq!(history[1].message.role, "tool");
        assert_eq!(history[1].message.tool_call_id.as_deref(), Some("call_7"));
        // A history that ends on a result is left alone.
        close_unanswered_calls(&mut history);
        assert_eq!(history.len(), 2);
    }
}
