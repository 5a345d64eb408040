//! A run a person works in: more messages after the first, each with its own checkpoint, so
//! `/undo` puts back exactly what one message's turns changed and drops those turns from the
//! history; and the changes tools make, as diffs, for the event stream and `/diff`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::sync::{Arc, PoisonError};

use serde_json::json;
use slmcode_aci::checkpoint::{self, Checkpoints, Original};
use slmcode_aci::path::RelPath;
use slmcode_aci::workspace::{Session, SessionState};
use slmcode_aci::Registry;
use tokio_util::sync::CancellationToken;

use super::history::{Entry, EntryKind};
use super::{Agent, Event, Outcome, RunError};
use crate::backend::{BackendError, Message};
use crate::events;

/// Files larger than this are not read back for a diff (the change is still made and undone).
const DIFF_MAX_BYTES: u64 = 1 << 20;

/// Where a message of the user's began: what `/undo` goes back to.
#[derive(Clone, Debug)]
pub(super) struct UndoPoint {
    /// The message, for `/undo`'s report.
    text: String,
    /// The history's length before the message went in.
    history_len: usize,
    /// What the session knew then (reads, loop guard, checklist) and what it had changed.
    session: SessionState,
    pub(super) changed: BTreeSet<RelPath>,
    /// The checkpoint session holding what the message's turns changed; `None` until the
    /// message ended (then the workspace's current one is its own) or when nothing changed.
    checkpoint: Option<String>,
}

/// What the session remembers of file contents, for diffs.
#[derive(Default, Debug)]
pub(super) struct Contents {
    /// The last content seen after a tool changed the file (`None`: absent).
    seen: HashMap<RelPath, Option<Vec<u8>>>,
    /// The content before this session first changed the file (`None`: absent).
    original: BTreeMap<RelPath, Option<Vec<u8>>>,
}

/// What one `/undo` put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undone {
    /// The messages undone, newest first.
    pub messages: Vec<String>,
    /// One line per path put back (the checkpoint restore's report).
    pub restored: Vec<String>,
}

/// Why `/undo` could not go back.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("nothing to undo: no message of yours has run yet")]
    Nothing,
    #[error("only {have} message(s) can be undone, not {asked}")]
    TooMany { have: usize, asked: usize },
    #[error("the files of message {number} could not be put back: {why}")]
    Restore { number: usize, why: String },
}

/// One file's change over the session, for `/diff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub diff: String,
}

impl Agent {
    /// The next message goes to the model in a checkpoint session of its own, so that `/undo`
    /// puts back only what it changes. A fresh run starts that way; a resumed one continues the
    /// saved checkpoint (as `slmcode run --resume` does) unless a session calls this first.
    pub fn separate_checkpoints(&mut self) {
        let mut ws = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        ws.session.checkpoints = Checkpoints::default();
    }

    /// A later message of the user's, in the same conversation: its turns run to a final
    /// answer like the first message's did.
    pub async fn follow(
        &mut self,
        text: &str,
        cancel: CancellationToken,
    ) -> Result<Outcome, RunError> {
        self.repaired_final = false;
        self.verify_left = self.settings.verify_retries;
        self.nudges_left = 2;
        {
            let mut ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            ws.session.start_task();
        }
        let text = text.trim().to_string();
        // The mark first: it closes the last message on the checkpoint that was in force.
        self.mark_message(text.clone());
        self.separate_checkpoints();
        self.log("message", json!({"text": text}));
        self.push(
            Message::user(crate::prompt::follow_up_message(&text, None)),
            EntryKind::Fixed,
        );
        self.check_before().await;
        self.drive(cancel).await
    }

    /// Records where a message begins (for `/undo`) and says it on the stream.
    pub(super) fn mark_message(&mut self, text: String) {
        let (session, changed, current) = {
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            (
                ws.session.state(),
                ws.session.changed.clone(),
                ws.session.checkpoints.id().map(str::to_string),
            )
        };
        // The message before this one is over: its checkpoint is the one in force until now.
        if let Some(last) = self.undo_points.last_mut() {
            if last.checkpoint.is_none() {
                last.checkpoint = current;
            }
        }
        let history_len = self.history.len();
        // The first message's own text went in already (the task message, or a follow-up).
        let history_len = if self.undo_points.is_empty() {
            history_len.saturating_sub(1)
        } else {
            history_len
        };
        self.undo_points.push(UndoPoint {
            text: text.clone(),
            history_len,
            session,
            changed,
            checkpoint: None,
        });
        let number = self.undo_points.len();
        self.emit(Event::Message { number, text });
    }

    /// How many messages `/undo` can take back (undoing the first keeps its task message: the
    /// run is about it, and only its turns and files go back).
    pub fn undoable(&self) -> usize {
        self.undo_points.len()
    }

    /// Puts back every file the last `n` messages' turns changed, from their checkpoints, and
    /// drops those messages and their turns from the history: the next request is the
    /// conversation as it was before them.
    pub fn undo(&mut self, n: usize) -> Result<Undone, UndoError> {
        let have = self.undo_points.len();
        if have == 0 {
            return Err(UndoError::Nothing);
        }
        if n == 0 || n > have {
            return Err(UndoError::TooMany { have, asked: n });
        }
        let mut undone = Undone {
            messages: Vec::new(),
            restored: Vec::new(),
        };
        for _ in 0..n {
            let number = self.undo_points.len();
            let Some(point) = self.undo_points.pop() else {
                break;
            };
            let mut ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let id = point
                .checkpoint
                .clone()
                .or_else(|| ws.session.checkpoints.id().map(str::to_string));
            if let Some(id) = id {
                match checkpoint::restore(&ws.jail, &id, &[]) {
                    Ok(lines) => undone.restored.extend(lines),
                    Err(e) => {
                        // Nothing of this message is dropped: what it did is still on disk.
                        self.undo_points.push(point);
                        return Err(UndoError::Restore {
                            number,
                            why: e.to_string(),
                        });
                    }
                }
            }
            let mut session = Session::resume(&ws.jail, point.session.clone());
            std::mem::swap(&mut ws.session, &mut session);
            ws.session.changed = point.changed.clone();
            ws.session.checkpoints = Checkpoints::default();
            drop(ws);
            // The first message is the task message, which also carries the project's
            // instructions and map: it stays, with the task itself withdrawn.
            let keep = if number == 1 {
                self.withdraw_task(point.history_len);
                point.history_len + 1
            } else {
                point.history_len
            };
            self.history.truncate(keep.min(self.history.len()));
            undone.messages.push(point.text);
        }
        self.contents.seen.clear();
        self.log(
            "undo",
            json!({"messages": undone.messages, "restored": undone.restored}),
        );
        self.save_for_follow_up("undone");
        Ok(undone)
    }

    /// Takes the task out of the task message at `at`: the model is not to go on with it.
    fn withdraw_task(&mut self, at: usize) {
        let asked = format!("Task: {}\n", self.settings.task.trim());
        if let Some(entry) = self.history.get_mut(at) {
            if let Some(rest) = entry.message.content.strip_prefix(&asked) {
                entry.message.content = format!(
                    "Task: none yet — the user took their first message back; their next message says what to do.\n{rest}"
                );
            }
        }
    }

    /// What this session changed, file by file, from before its first change to now.
    pub fn session_diff(&self) -> Vec<FileDiff> {
        let ws = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        for (path, before) in &self.contents.original {
            let Some(now) = read_bounded(&ws.jail, path) else {
                continue;
            };
            if &now == before {
                continue;
            }
            let (diff, added, removed) =
                events::file_diff(path.as_str(), before.as_deref(), now.as_deref(), usize::MAX);
            out.push(FileDiff {
                path: path.to_string(),
                added,
                removed,
                diff,
            });
        }
        out
    }

    /// After a call that may change files: each file the tools changed whose content is not
    /// what it was goes on the stream as a diff.
    pub(super) fn report_changes(&mut self, tool: &str) {
        let read_only = self
            .registry
            .specs()
            .find(|s| s.name == tool)
            .is_some_and(|s| s.effect.read_only);
        if read_only {
            return;
        }
        let mut changes = Vec::new();
        {
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let checkpoint = ws.session.checkpoints.id().map(str::to_string);
            for path in &ws.session.changed {
                let Some(now) = read_bounded(&ws.jail, path) else {
                    continue;
                };
                let before = match self.contents.seen.get(path) {
                    Some(b) => Some(b.clone()),
                    None => checkpoint.as_deref().and_then(|id| {
                        match checkpoint::original(&ws.jail, id, path, DIFF_MAX_BYTES) {
                            Ok(Original::File(bytes)) => Some(Some(bytes)),
                            Ok(Original::Absent) => Some(None),
                            Ok(Original::Unknown) | Err(_) => None,
                        }
                    }),
                };
                if let Some(before) = &before {
                    self.contents
                        .original
                        .entry(path.clone())
                        .or_insert_with(|| before.clone());
                    if before != &now {
                        let (diff, added, removed) = events::file_diff(
                            path.as_str(),
                            before.as_deref(),
                            now.as_deref(),
                            events::DIFF_LINES,
                        );
                        changes.push(Event::FileChanged {
                            path: path.to_string(),
                            added,
                            removed,
                            diff,
                        });
                    }
                }
                self.contents.seen.insert(path.clone(), now);
            }
        }
        for change in changes {
            self.emit(change);
        }
    }

    /// Switches the model for the next requests (`/model`): the conversation goes on as it
    /// is; the sampling defaults and the context window are the new model's.
    pub fn set_model(
        &mut self,
        model: String,
        sampling: crate::sampling::Sampling,
        context_window: usize,
        context_from: String,
    ) {
        self.log(
            "model",
            json!({"from": self.settings.model, "to": model, "context_window": context_window}),
        );
        self.settings.model = model;
        self.settings.sampling = sampling;
        self.settings.context_window = context_window;
        self.settings.context_from = context_from;
    }

    /// Switches to `model` for the next requests (`/model NAME`): its context window as the
    /// server serves it, its sampling defaults, and the edit format the bandit picks for its
    /// family — the tools' order and the system prompt follow that format. The conversation
    /// goes on as it is.
    pub async fn switch_model(
        &mut self,
        model: &str,
        kit: &crate::launch::Kit,
    ) -> Result<Switched, BackendError> {
        let config = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .config
            .clone();
        let listed = self.backend.models().await?;
        let (window, _) =
            crate::launch::settle_context(&mut self.backend, &config, model, &listed).await;
        let listed = listed.is_empty() || listed.iter().any(|m| m.id == model);
        let (arm, edit_format) = kit.choose(model);
        self.set_model(
            model.to_string(),
            crate::sampling::for_model(model, &config.sampling),
            window.tokens,
            window.describe(),
        );
        self.set_edit_format(arm, kit.registry(arm));
        Ok(Switched {
            context: window.describe(),
            edit_format,
            listed,
        })
    }

    /// Teaches `arm` from now on: `registry` (ordered for it) is what is offered, and the
    /// system prompt is the one for that format.
    pub fn set_edit_format(&mut self, arm: crate::evolve::Arm, registry: Arc<Registry>) {
        self.settings.arm = arm;
        let mut system = crate::prompt::system_prompt(arm);
        if self.text_tools {
            system.push_str(&crate::prompt::text_tools(&registry));
        }
        if let Some(first) = self.history.first_mut() {
            first.message.content = system;
        }
        self.set_tools(registry);
    }

    /// Offers `registry`'s tools from the next request on (plan mode offers the read-only
    /// ones); a call to any other tool is refused as unknown.
    pub fn set_tools(&mut self, registry: Arc<Registry>) {
        (self.tools_json, self.offered, self.readable) = super::tools_of(&registry);
        self.registry = registry;
    }

    /// Elides every old tool result but the last two now (`/compact`), and says so on the
    /// stream; how many it elided.
    pub fn compact_now(&mut self) -> usize {
        self.elide(true)
    }

    /// The edit format the prompt teaches now.
    pub fn edit_format(&self) -> crate::evolve::Arm {
        self.settings.arm
    }

    /// The model the next request asks for.
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// Where the context goes: the history's messages by kind, in estimated tokens, and the
    /// window (`/tokens`).
    pub fn token_use(&self) -> Vec<(String, usize)> {
        let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
        for Entry { message, kind } in &self.history {
            let name = match (kind, message.role.as_str()) {
                (EntryKind::Fixed, "system") => "system prompt",
                (EntryKind::Fixed, _) => "your messages and the harness's",
                (EntryKind::Assistant, _) => "the model's replies",
                (EntryKind::ToolResult { .. }, _) => "tool results",
            };
            *by_kind.entry(name).or_default() +=
                super::estimate_tokens(std::slice::from_ref(message), &[]);
        }
        let tools = super::estimate_tokens(&[], self.sent_tools());
        let mut out: Vec<(String, usize)> = by_kind
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        out.push(("tool definitions".into(), tools));
        out.push(("context window".into(), self.settings.context_window));
        out
    }
}

/// What `/model NAME` settled.
#[derive(Clone, Debug)]
pub struct Switched {
    /// The context window, and where it came from.
    pub context: String,
    /// The edit format the bandit picked, and why.
    pub edit_format: String,
    /// The server lists the model (a name it does not list is asked for anyway).
    pub listed: bool,
}

/// A file's content for a diff: `Some(None)` when it is absent, `None` when it cannot be read
/// or is too large to show.
fn read_bounded(jail: &slmcode_aci::path::Jail, path: &RelPath) -> Option<Option<Vec<u8>>> {
    let file = match jail.open_file(path) {
        Ok(f) => f.into_std(),
        Err(_) => {
            // Gone, or not a file we may read: only "not there at all" is an absence.
            return match jail.symlink_metadata(path) {
                Err(_) => Some(None),
                Ok(_) => None,
            };
        }
    };
    if file.metadata().ok()?.len() > DIFF_MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(DIFF_MAX_BYTES + 1).read_to_end(&mut bytes).ok()?;
    Some(Some(bytes))
}
