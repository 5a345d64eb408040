//! The final answer of a run: the JSON the model ends with, read leniently (in a fence, after
//! prose, with the repairs tool arguments get) and checked, and what the model is told when it
//! is not valid.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::toolcall;

/// The final answer of a run, as the spec defines it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalAnswer {
    /// "done" or "blocked" (or "interrupted" when the user stopped the run).
    pub status: String,
    pub summary: String,
    /// What the run changed on disk, as the tools recorded it (not as the model remembers it).
    pub files_changed: Vec<String>,
    pub notes: String,
    /// What the configured check (`verify`) showed: `None` when there was none to run.
    #[serde(default)]
    pub verified: Option<Verified>,
}

/// What the check showed. In the JSON: `true` (it failed before the change and passes after
/// it), `false` (it still fails), or `"passed before and after"` (it passed before the change
/// too, so it cannot show that the change works).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verified {
    Passed,
    Failed,
    PassedBeforeAndAfter,
}

const BEFORE_AND_AFTER: &str = "passed before and after";

impl Serialize for Verified {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Verified::Passed => s.serialize_bool(true),
            Verified::Failed => s.serialize_bool(false),
            Verified::PassedBeforeAndAfter => s.serialize_str(BEFORE_AND_AFTER),
        }
    }
}

impl<'de> Deserialize<'de> for Verified {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Verified, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) => Ok(Verified::Passed),
            Value::Bool(false) => Ok(Verified::Failed),
            Value::String(s) if s == BEFORE_AND_AFTER => Ok(Verified::PassedBeforeAndAfter),
            other => Err(serde::de::Error::custom(format!(
                "verified must be true, false or \"{BEFORE_AND_AFTER}\", not {other}"
            ))),
        }
    }
}

/// Reads the final JSON from a reply: the object may sit in a fence or after prose (which may
/// hold braces of its own, so each `{` is tried in turn, within the bound of
/// [`toolcall::first_object`]) — never in the reasoning, where a model drafts answers it has
/// not given.
pub fn parse_final(text: &str) -> Result<FinalAnswer, String> {
    let (text, _) = toolcall::split_reasoning(text);
    toolcall::first_object(&text, |value, _| final_from(&value))
        .unwrap_or_else(|| Err("there is no JSON object in the reply".into()))
}

fn final_from(value: &Value) -> Result<FinalAnswer, String> {
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
        verified: None,
    })
}

/// The action a reply says it will take next ("I'll now edit app.py") without calling a tool:
/// small models often stop there. Only the answer is looked at, never the reasoning.
pub(super) fn announced_action(reply: &str) -> Option<String> {
    // A constant pattern: it compiles (the tests run it), and were it not to, nothing is
    // announced.
    static ANNOUNCE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(?:i'll|i will|i am going to|i'm going to|let me|let's|now i|next,? i|i need to|i should)\b[^.\n]{0,40}?\b(?:read|edit|open|look at|check|run|write|update|modify|fix|patch|call|use|search|grep|list|create|change|apply|inspect|view|add|replace|remove|delete)\b[^\n]{0,80}",
        )
        .ok()
    });
    let (answer, _) = toolcall::split_reasoning(reply);
    ANNOUNCE.as_ref()?.find(&answer).map(|m| {
        // One sentence: up to its end (a dot and a space, not the dot of `app.py`).
        let text = m.as_str();
        let sentence = text.find(". ").map_or(text, |i| &text[..i]);
        sentence.trim().trim_end_matches('.').to_string()
    })
}

/// What a model that announced an action without calling is told.
pub(super) fn make_the_call_text(announced: &str) -> String {
    format!(
        "You wrote \"{announced}\" but made no tool call, so nothing happened. Make that call now: reply with the tool call itself. If the task is already done, reply with the final JSON instead."
    )
}

pub(super) fn final_repair_text(why: &str) -> String {
    format!(
        "Your final answer is not valid ({why}). Reply with only this JSON and nothing else: {{\"status\":\"done\",\"summary\":\"what you changed\",\"files_changed\":[\"path\"],\"notes\":\"\"}} (status \"blocked\" if you could not finish)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_answer_is_never_read_from_the_reasoning() {
        let drafted = "<think>I could answer {\"status\": \"done\", \"summary\": \"x\", \"files_changed\": [], \"notes\": \"\"} but first</think>I'll now read app.py to check.";
        assert!(parse_final(drafted).is_err());
        // Qwen3.6 style: the opening tag was in the prompt.
        let unopened = "thinking about {\"status\": \"done\", \"summary\": \"x\", \"files_changed\": [], \"notes\": \"\"}</think>\nStill working.";
        assert!(parse_final(unopened).is_err());
        let answered = "<think>draft</think>{\"status\": \"done\", \"summary\": \"ok\", \"files_changed\": [], \"notes\": \"\"}";
        assert_eq!(parse_final(answered).unwrap().summary, "ok");
    }

    #[test]
    fn an_announced_action_is_found_in_the_answer_only() {
        assert_eq!(
            announced_action("Sure. I'll now edit app.py to skip None values.").as_deref(),
            Some("I'll now edit app.py to skip None values")
        );
        assert!(announced_action("Let me read the file first").is_some());
        assert!(
            announced_action("<think>I'll edit app.py</think>Done, nothing else to change.")
                .is_none()
        );
        assert!(announced_action(
            "{\"status\":\"done\",\"summary\":\"fixed\",\"files_changed\":[],\"notes\":\"\"}"
        )
        .is_none());
    }

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

    /// `parse_final` on another thread: its answer, or `None` past `limit`.
    fn parse_within(
        text: String,
        limit: std::time::Duration,
    ) -> Option<Result<FinalAnswer, String>> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(parse_final(&text));
        });
        rx.recv_timeout(limit).ok()
    }

    #[test]
    fn a_reply_of_unclosed_braces_is_read_within_seconds() {
        // 120 KB of `{` and a letter: each brace opens an object that never closes.
        let braces = "{a".repeat(60_000);
        let limit = std::time::Duration::from_secs(5);
        let answer = parse_within(braces.clone(), limit).expect("answered within 5 s");
        assert!(answer.is_err());
        // An answer behind a few such braces is still found, and one behind a reply of them
        // is told apart from no answer at all.
        let answer =
            "{\"status\": \"done\", \"summary\": \"ok\", \"files_changed\": [], \"notes\": \"\"}";
        let found = parse_within(format!("fn main() {{ if x {{ {answer}"), limit)
            .expect("answered within 5 s");
        assert_eq!(found.map(|a| a.summary).as_deref(), Ok("ok"));
        let lost = parse_within(format!("{braces}{answer}"), limit).expect("answered within 5 s");
        assert!(lost.is_err());
    }
}

#[cfg(test)]
mod verified_tests {
    use super::*;

    #[test]
    fn verified_reads_back_what_it_writes() {
        for v in [
            Verified::Passed,
            Verified::Failed,
            Verified::PassedBeforeAndAfter,
        ] {
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<Verified>(&text).unwrap(), v);
        }
        assert_eq!(
            serde_json::to_string(&Verified::PassedBeforeAndAfter).unwrap(),
            "\"passed before and after\""
        );
        assert!(serde_json::from_str::<Verified>("\"maybe\"").is_err());
    }
}
