//! The reasoning pass, run first: a model thinking aloud writes calls it is only considering
//! ("Let's call a tool: <tool_call>…"), and running one of those is a call it did not mean.
//! Reasoning blocks are taken before any other pass looks, so no call inside one is read; the
//! first call after the reasoning is the model's.
//!
//! Blocks: `<think>…</think>` (and `<thinking>`, `<reasoning>`, Magistral's `[THINK]…[/THINK]`),
//! a closing tag with no opening one (a template that opened the block in the prompt), an
//! opening one never closed (the model is still thinking — up to a call token only a call is
//! written with, such as Kimi's tool section), and gpt-oss Harmony's
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

/// Special tokens a model emits only to call (never text it muses about): an unclosed
/// reasoning block ends at the first of them.
const CALL_TOKENS: [&str; 6] = [
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<｜tool▁calls▁begin｜>",
    "<｜DSML｜function_calls>",
    "<minimax:tool_call>",
    "[TOOL_CALLS]",
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
                // Never closed: it runs to the end, unless a call token a model writes only to
                // call (Kimi's tool section, say) ends the thinking first.
                let end = find_at(text, o + open.len(), close).map_or_else(
                    || {
                        CALL_TOKENS
                            .iter()
                            .filter_map(|t| find_at(text, o + open.len(), t))
                            .min()
                            .unwrap_or(text.len())
                    },
                    |c| c + close.len(),
                );
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
