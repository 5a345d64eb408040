//! The loop guard: a small model that repeats a call it just made, with nothing changed in
//! between, is stuck. The repeat is not run; the model is told so, and after two such refusals
//! in a row it is told to stop and give its final answer. The history is per task.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many recent calls are remembered.
pub const LOOP_WINDOW: usize = 12;

/// Repeated-call detection for one task. Saved with a run, so a follow-up (`slmcode run
/// --resume`) continues the task's guard rather than forgetting what was repeated.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopGuard {
    /// Recent calls and a hash of what each returned.
    recent: VecDeque<(String, u64)>,
    refusals_in_row: u32,
}

/// The canonical form of a call: name plus arguments with keys sorted.
pub fn call_key(name: &str, args: &Value) -> String {
    // serde_json's Map is ordered by key, so serializing is canonical.
    format!("{name} {args}")
}

/// A hash of a result, to tell "the same answer again" from a changed one.
pub fn result_hash(text: &str, is_error: bool) -> u64 {
    let digest = blake3::hash(text.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_bytes()[..8]);
    u64::from_le_bytes(first) ^ u64::from(is_error)
}

impl LoopGuard {
    /// True when `key` is one of the last [`LOOP_WINDOW`] calls since the last change of
    /// state — and, when `result` is given, it also gave that same result.
    pub fn repeated(&self, key: &str, result: Option<u64>) -> bool {
        self.recent
            .iter()
            .any(|(k, r)| k == key && result.is_none_or(|h| h == *r))
    }

    /// The intervention for a repeated call: a nudge, and after two in a row, the order to
    /// stop and answer.
    pub fn intervene(&mut self, name: &str) -> String {
        self.refusals_in_row += 1;
        if self.refusals_in_row >= 2 {
            "STOP — you have repeated identical tool calls twice in a row; you are stuck in a loop. Do not call any more tools. Give your final answer now as JSON: {\"status\":\"blocked\",\"summary\":\"what you did and what is left\",\"files_changed\":[…],\"notes\":\"…\"}".to_string()
        } else {
            format!(
                "Loop detected — you already made this exact {name} call and nothing has changed since, so it gives the same result. Do something different: re-read the file with ws_read, change old_str or the pattern, or try another approach."
            )
        }
    }

    /// Records a call that ran. A state-changing call clears the history: after a change,
    /// repeating a call is legitimate.
    pub fn record(&mut self, key: String, result: u64, changed_state: bool) {
        self.refusals_in_row = 0;
        if changed_state {
            self.recent.clear();
        }
        self.recent.push_back((key, result));
        while self.recent.len() > LOOP_WINDOW {
            self.recent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeats_are_caught_and_cleared_by_changes() {
        let mut g = LoopGuard::default();
        let k = call_key("ws_read", &json!({"path": "a", "offset": 1}));
        assert!(!g.repeated(&k, None));
        g.record(k.clone(), 7, false);
        assert!(g.repeated(&k, None));
        assert!(g.repeated(&k, Some(7)));
        assert!(!g.repeated(&k, Some(8)), "a different answer is not a loop");
        assert!(g.intervene("ws_read").starts_with("Loop detected"));
        assert!(g.intervene("ws_read").starts_with("STOP"));
        g.record(call_key("ws_edit", &json!({})), 1, true);
        assert!(!g.repeated(&k, None));
    }

    #[test]
    fn key_order_does_not_matter_and_the_window_is_twelve() {
        let a = call_key("t", &json!({"a": 1, "b": 2}));
        let b = call_key(
            "t",
            &serde_json::from_str::<Value>(r#"{"b":2,"a":1}"#).unwrap(),
        );
        assert_eq!(a, b);
        let mut g = LoopGuard::default();
        g.record(a.clone(), 0, false);
        for i in 0..LOOP_WINDOW {
            g.record(format!("other {i}"), 0, false);
        }
        assert!(!g.repeated(&a, None));
    }
}
