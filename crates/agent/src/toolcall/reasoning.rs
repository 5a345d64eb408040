//! The reasoning pass, run first: a model thinking aloud writes calls it is only considering
//! ("Let's call a tool: <tool_call>…"), and running one of those is a call it did not mean.
//! Reasoning blocks are taken before any other pass looks, so no call inside one is read; the
//! first call after the reasoning is the model's.
//!
//! Blocks: `<think>…</think>` (and `<thinking>`, `<reasoning>`, Magistral's `[THINK]…[/THINK]`),
//! a closing tag with no opening one (a template that opened the block in the prompt), an
//! opening one never closed (the model is still thinking), and gpt-oss Harmony's
//! `<|channel|>analysis<|message|>…` up to the next `<|end|>`, `<|start|>` or `<|channel|>`.

use super::lex::{after_backtick, find_at};
use super::scan::Scan;

/// Opening and closing markers of a reasoning block.
const BLOCKS: [(&str, &str); 4] = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("[THINK]", "[/THINK]"),
];

/// gpt-oss Harmony: the analysis channel is reasoning; its message runs to the first of these.
const HARMONY_ANALYSIS: &str = "<|channel|>analysis<|message|>";
const HARMONY_ENDS: [&str; 3] = ["<|end|>", "<|start|>", "<|channel|>"];

impl Scan<'_> {
    /// Takes every reasoning block of the reply.
    pub(super) fn reasoning(&mut self) {
        let text = self.reply;
        for (open, close) in BLOCKS {
            let mut from = 0;
            // A block opened in the prompt: the reply starts inside it.
            if let Some(c) = find_at(text, 0, close) {
                let opened_before = find_at(text, 0, open).is_none_or(|o| o > c);
                if opened_before && !after_backtick(text, c) {
                    self.take(0..c + close.len());
                    from = c + close.len();
                }
            }
            while let Some(o) = find_at(text, from, open) {
                if after_backtick(text, o) {
                    from = o + open.len();
                    continue;
                }
                let end =
                    find_at(text, o + open.len(), close).map_or(text.len(), |c| c + close.len());
                self.take(o..end);
                from = end;
            }
        }
        let mut from = 0;
        while let Some(o) = find_at(text, from, HARMONY_ANALYSIS) {
            let body = o + HARMONY_ANALYSIS.len();
            let end = HARMONY_ENDS
                .iter()
                .filter_map(|e| find_at(text, body, e))
                .min()
                .unwrap_or(text.len());
            self.take(o..end);
            from = end.max(body);
        }
    }
}
