//! The thinking budget ([`crate::run::RunSettings::think_budget`]): how much a reply has
//! reasoned, however the server sends the reasoning, and the verdict that stops it.

use super::Reply;

impl Reply {
    /// The reply was stopped because its reasoning passed the thinking budget.
    pub fn thinking_stopped(&self) -> bool {
        self.finish_reason.as_deref() == Some(THINK_BUDGET)
    }

    /// The reasoning so far: the server's separate field, or what stands inside (or after an
    /// unclosed) `<think>` at the start of the content.
    pub fn thoughts(&self) -> String {
        if !self.reasoning.is_empty() {
            return self.reasoning.clone();
        }
        let content = self.content.trim_start();
        match content.strip_prefix("<think>") {
            Some(rest) => rest.split("</think>").next().unwrap_or("").to_string(),
            None => String::new(),
        }
    }

    /// The reasoning's tokens, estimated as every budget here is (3.5 characters a token).
    /// All of the reasoning's tokens, closed or not (a whole reply).
    pub fn thought_tokens_whole(&self) -> usize {
        self.thoughts().chars().count() * 2 / 7
    }

    /// The content without a leading `<think>…</think>`.
    pub fn content_after_thoughts(&self) -> &str {
        let content = self.content.trim_start();
        match content.strip_prefix("<think>") {
            Some(rest) => rest
                .split_once("</think>")
                .map(|(_, after)| after)
                .unwrap_or(""),
            None => &self.content,
        }
    }

    pub fn thought_tokens(&self) -> usize {
        let chars = if self.reasoning.is_empty() {
            // Only an unclosed <think> is reasoning still being written.
            let content = self.content.trim_start();
            match content.strip_prefix("<think>") {
                Some(rest) if !rest.contains("</think>") => rest.chars().count(),
                _ => 0,
            }
        } else {
            self.reasoning.chars().count()
        };
        chars * 2 / 7
    }
}

/// The `finish_reason` of a reply stopped at the thinking budget.
pub const THINK_BUDGET: &str = "think_budget";

/// Whether a reply being streamed has passed `budget` tokens of reasoning (0: no budget).
pub(super) fn over_think_budget(reply: &Reply, budget: usize) -> bool {
    budget > 0 && reply.thought_tokens() > budget
}
