//! The history a run sends the model: its entries, compaction (old tool results elided to a
//! one-line summary, never removed, so every call keeps its result), the token estimate that
//! decides when to compact and notices a prompt the server cut, and clipping for display.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use slmcode_aci::ToolResult;

use super::calls::Call;
use super::{Agent, COMPACT_AT};
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

    /// Elides old tool results (oldest first, the last two kept) while the history is over
    /// [`COMPACT_AT`] of the context window. Messages are shortened, never removed, so every
    /// call keeps its result.
    pub(super) fn compact(&mut self) {
        let budget = (self.settings.context_window as f64 * COMPACT_AT) as usize;
        let total =
            |h: &[Entry], tools: &[Value]| estimate_tokens(h.iter().map(|e| &e.message), tools);
        let tools = self.sent_tools().to_vec();
        if total(&self.history, &tools) <= budget {
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
            if total(&self.history, &tools) <= budget {
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
pub(super) fn prompt_was_cut(counted: u64, estimate: usize) -> bool {
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
