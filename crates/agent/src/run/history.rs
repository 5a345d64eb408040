//! The history a run sends the model: its entries, the budget (the window less the reply's
//! room and a margin, so a request cannot overrun the window), compaction (old tool results
//! elided to a one-line summary in one step down to a low-water mark, never removed, so every
//! call keeps its result), the token estimate calibrated by the server's own counts, and
//! clipping for display.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use slmcode_aci::ToolResult;

use super::calls::Call;
use super::{Agent, COMPACT_TO};
use crate::backend::Message;

/// What kind of message an entry of the history is, for compaction.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum EntryKind {
    Fixed,
    Assistant,
    ToolResult { summary: String, elided: bool },
}

/// A message of the history, and what kind it is.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) message: Message,
    pub(super) kind: EntryKind,
}

impl Agent {
    /// Appends a message to the history.
    pub(super) fn push(&mut self, message: Message, kind: EntryKind) {
        self.history.push(Entry { message, kind });
    }

    /// A message of the harness's own to the model — a repair, a nudge, the turns left —
    /// kept in the history like any other and recorded in the trajectory as a steering turn,
    /// so that whoever reads the run later sees where the harness stepped in.
    pub(super) fn steer(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.log("steer", serde_json::json!({"text": text}));
        self.push(Message::user(text), EntryKind::Fixed);
    }

    /// The prompt's budget: the window less the reply's room (`max_tokens`, but at most a
    /// quarter of the window) and a margin for the estimate's error and the chat template's
    /// own tokens. A request whose prompt stays under it, with the reply's room, cannot run
    /// past the window.
    pub(super) fn prompt_budget(&self) -> usize {
        let window = self.settings.context_window;
        let reply = (self.settings.max_tokens as usize).min(window / 4);
        window.saturating_sub(reply + margin(window))
    }

    /// The tokens the server will count for these messages and tools: slmcode's estimate
    /// scaled by what the server counted for earlier requests.
    pub(super) fn calibrated<'a>(
        &self,
        messages: impl IntoIterator<Item = &'a Message>,
        tools: &[Value],
    ) -> usize {
        self.scaled(estimate_tokens(messages, tools))
    }

    /// slmcode's `estimate` scaled to the server's count.
    pub(super) fn scaled(&self, estimate: usize) -> usize {
        (estimate as f64 * self.calibration).ceil() as usize
    }

    /// Learns the server's tokenizer from its count for a request slmcode estimated at
    /// `estimate` (a prompt the server cut says nothing about it).
    pub(super) fn calibrate(&mut self, counted: u64, estimate: usize) {
        // A count well under the estimate is a server counting only what it did not take
        // from its cache (Ollama's prompt_eval_count) or a prompt it cut: no measure of its
        // tokenizer. Going by it would let the next prompt overrun the window.
        if counted == 0 || estimate < 200 || (counted as f64) < estimate as f64 * 0.8 {
            return;
        }
        let ratio = (counted as f64 / estimate as f64).min(3.0);
        self.calibration = if self.calibrated_once {
            (self.calibration + ratio) / 2.0
        } else {
            ratio
        };
        self.calibrated_once = true;
    }

    /// Keeps the prompt under [`Agent::prompt_budget`]: once over it, old tool results
    /// (oldest first, the last two kept) are elided in one step down to [`COMPACT_TO`] of the
    /// budget, so that the turns after it append to an unchanged prefix and the server's
    /// prompt cache holds. Messages are shortened, never removed, so every call keeps its
    /// result. When eliding cannot free enough, the user is told what takes the room.
    pub(super) fn compact(&mut self) {
        self.elide(false);
    }

    /// Elides old tool results: when over the budget (down to [`COMPACT_TO`] of it), or, when
    /// the user asks (`/compact`), every one but the last two.
    pub(super) fn elide(&mut self, asked: bool) -> usize {
        let budget = self.prompt_budget();
        let tools = self.sent_tools().to_vec();
        let total = |a: &Agent| a.calibrated(a.history.iter().map(|e| &e.message), &tools);
        let before = total(self);
        if before <= budget && !asked {
            return 0;
        }
        let target = if asked {
            0
        } else {
            (budget as f64 * COMPACT_TO) as usize
        };
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
            if total(self) <= target {
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
        let after = total(self);
        if elided > 0 {
            self.emit(super::Event::Compacted { before, after });
            self.note(format!(
                "{elided} old tool result(s) elided: the prompt went from about {before} to {after} tokens (budget {budget}, aiming at {target})"
            ));
        }
        if after > budget && !self.warned_full {
            self.warned_full = true;
            let text = format!(
                "the prompt is about {after} tokens and eliding old results cannot bring it under {budget} (the {} -token window less the reply's room): the system prompt, the task with the project's instructions and the last results take that much. Raise context_window (and the server's context), lower max_tokens, or shorten AGENTS.md",
                self.settings.context_window
            );
            self.log("warning", serde_json::json!({"text": text}));
            self.emit(super::Event::warning(text));
        }
        elided
    }

    /// The reply's room in a request whose prompt is about `prompt` tokens: `max_tokens`, or
    /// less when the window has no more, so prompt and reply never overrun it.
    pub(super) fn reply_room(&self, prompt: usize) -> u32 {
        let window = self.settings.context_window;
        let room = window.saturating_sub(prompt + margin(window));
        let room = u32::try_from(room).unwrap_or(u32::MAX);
        self.settings.max_tokens.min(room.max(MIN_REPLY_TOKENS))
    }
}

/// The least reply room a request asks for: a call or a final answer needs at least this.
const MIN_REPLY_TOKENS: u32 = 256;

/// Tokens kept free beyond the prompt and the reply: 5% of the window, at least 256.
fn margin(window: usize) -> usize {
    (window / 20).max(256)
}

/// A short description of a tool result that survives compaction: the call and its outcome.
pub(super) fn result_summary(call: &Call, result: &ToolResult) -> String {
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
pub fn prompt_was_cut(counted: u64, estimate: usize) -> bool {
    let counted = counted as usize;
    counted > 0 && estimate > 1000 && counted * 2 < estimate
}

/// `text` cut to `max` characters, with `…` when it was cut.
pub(super) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_prompt_is_noticed() {
        assert!(prompt_was_cut(2048, 9000));
        assert!(!prompt_was_cut(8000, 9000));
        assert!(!prompt_was_cut(0, 9000));
        assert!(!prompt_was_cut(100, 500));
    }
}
