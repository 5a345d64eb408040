//! The one stream of what a run does. The loop emits these as it goes; every front end —
//! `slmcode run`'s progress lines, `slmcode chat` (its screen and its JSON lines) — learns what
//! happened from them and from nothing else: no front end reads another's printed text.
//!
//! Events are data: facts travel as fields and types ([`slmcode_aci::Outcome`] for what a call
//! did, [`FinalAnswer`] for how a message ended), and the text a person reads is made by the
//! front end. Serialized, each is one JSON object with an `event` member naming its kind.

use serde::Serialize;
use serde_json::Value;

use crate::run::FinalAnswer;

/// Something a run did or is doing.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run is set up: what it asks, with what, and which tools it offers.
    Started {
        run_id: String,
        model: String,
        endpoint: String,
        context_window: usize,
        /// Where the window came from, in a line.
        context_from: String,
        edit_format: String,
        tool_mode: String,
        max_turns: usize,
        tools: Vec<String>,
        /// The run this one continues (`--resume`).
        #[serde(skip_serializing_if = "Option::is_none")]
        resumed_from: Option<String>,
    },
    /// A message of the user's goes to the model (the task, or a later one in a session).
    Message {
        number: usize,
        text: String,
    },
    /// A request goes out.
    Turn {
        number: usize,
        max: usize,
    },
    /// A piece of the model's answer, as it streams.
    Text {
        text: String,
    },
    /// A piece of the model's reasoning, as it streams.
    Reasoning {
        text: String,
    },
    /// The server is still loading the model.
    Loading {
        waited_ms: u64,
    },
    /// The server is reading the prompt (llama.cpp): tokens processed of the total.
    PromptProgress {
        processed: u64,
        total: u64,
        cached: u64,
    },
    /// The reply is in: its size, its speed, and the context it used (the budget).
    Reply {
        tokens: u64,
        tokens_per_sec: f64,
        elapsed_ms: u64,
        /// The prompt as the server counted it, and how much of it came from its cache.
        prompt_tokens: Option<u64>,
        cached_tokens: Option<u64>,
        /// The model's context window, for "how full is it".
        window: usize,
    },
    /// The one tool call of a turn, as it will run (aliases resolved).
    Call {
        turn: usize,
        name: String,
        args: Value,
        /// The call in one line, for progress output.
        line: String,
    },
    /// What the call did, as data and as the text the model reads.
    Result {
        turn: usize,
        name: String,
        outcome: slmcode_aci::Outcome,
        is_error: bool,
        text: String,
    },
    /// A file on disk is not what it was before the call: its unified diff (capped).
    FileChanged {
        path: String,
        added: usize,
        removed: usize,
        diff: String,
    },
    /// Old tool results were elided to fit the context.
    Compacted {
        before: usize,
        after: usize,
    },
    /// A turn is over.
    TurnEnded {
        number: usize,
    },
    /// A message's answer: how it ended, in how many turns and how long.
    Final {
        answer: FinalAnswer,
        turns: usize,
        elapsed_ms: u64,
    },
    /// The run cannot go on (the server failed); what happened.
    Error {
        message: String,
    },
    /// A step waits for the user's word (ws_shell under `shell_permission: ask`, a change
    /// under review mode); the front end answers through the agent's approver.
    Approval {
        request: slmcode_aci::approval::Request,
    },
    /// How it was decided: by the user, or by an earlier "always" for this prefix or file.
    Approved {
        allowed: bool,
        always: bool,
        reason: Option<String>,
    },
    /// Something the user should know, said once.
    Note {
        text: String,
    },
    Warning {
        text: String,
    },
}

impl Event {
    /// A note's text, for front ends that print notes and warnings alike.
    pub fn note(text: impl Into<String>) -> Event {
        Event::Note { text: text.into() }
    }

    /// A warning's text.
    pub fn warning(text: impl Into<String>) -> Event {
        Event::Warning { text: text.into() }
    }

    /// The record the trajectory keeps of this event, when it keeps one: what a file became
    /// (its capped diff) and where the history was compacted — facts a reader of the run needs
    /// that no other record holds. Named as the event is, with the event's fields.
    pub fn for_trajectory(&self) -> Option<(&'static str, Value)> {
        let kind = match self {
            Event::FileChanged { .. } => "file_changed",
            Event::Compacted { .. } => "compacted",
            _ => return None,
        };
        let mut fields = serde_json::to_value(self).ok()?;
        if let Value::Object(o) = &mut fields {
            o.remove("event");
        }
        Some((kind, fields))
    }

    /// The event as one JSON line (without the newline), for `--events` and `slmcode chat`'s
    /// machine output.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"event":"error","message":"an event could not be written as JSON: {e}"}}"#)
        })
    }
}

/// Where events go: a front end's receiver, shared by the loop and the backend's stream (which
/// emits text pieces from inside a request).
pub type EventSink = std::sync::Arc<std::sync::Mutex<Box<dyn FnMut(&Event) + Send>>>;

/// Wraps a front end's receiver as a sink.
pub fn sink(on_event: Box<dyn FnMut(&Event) + Send>) -> EventSink {
    std::sync::Arc::new(std::sync::Mutex::new(on_event))
}

/// Sends `event` to `sink`; a receiver that panicked once is still called (its lock poisoned,
/// not the run).
pub fn emit(sink: &EventSink, event: &Event) {
    let mut receiver = sink
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    receiver(event);
}

/// How many lines of a diff an event carries: a front end shows a capped diff, and `/diff`
/// shows all of it from the files.
pub const DIFF_LINES: usize = 400;

/// A unified diff of `before` → `after` for `path` (`None`: the file did not exist / does not
/// now), capped at `max_lines` lines, with the lines added and removed.
pub fn file_diff(
    path: &str,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
    max_lines: usize,
) -> (String, usize, usize) {
    let old = before.map(String::from_utf8_lossy).unwrap_or_default();
    let new = after.map(String::from_utf8_lossy).unwrap_or_default();
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let a = if before.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".into()
    };
    let b = if after.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".into()
    };
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    let total = text.lines().count();
    let mut shown: String = text.split_inclusive('\n').take(max_lines).collect();
    if total > max_lines {
        shown.push_str(&format!(
            "[… {} more diff lines; /diff shows all]\n",
            total - max_lines
        ));
    }
    (shown, added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_with_their_kind() {
        let e = Event::Turn { number: 2, max: 30 };
        assert_eq!(e.to_json_line(), r#"{"event":"turn","number":2,"max":30}"#);
        let e = Event::note("hi");
        assert_eq!(e.to_json_line(), r#"{"event":"note","text":"hi"}"#);
    }

    #[test]
    fn the_trajectory_keeps_diffs_and_compactions_as_they_are() {
        let e = Event::FileChanged {
            path: "a.py".into(),
            added: 1,
            removed: 0,
            diff: "+x\n".into(),
        };
        let (kind, fields) = e.for_trajectory().unwrap();
        assert_eq!(kind, "file_changed");
        assert_eq!(
            fields,
            serde_json::json!({"path": "a.py", "added": 1, "removed": 0, "diff": "+x\n"})
        );
        let e = Event::Compacted {
            before: 9,
            after: 3,
        };
        assert_eq!(e.for_trajectory().unwrap().0, "compacted");
        assert!(Event::Turn { number: 1, max: 2 }.for_trajectory().is_none());
    }

    #[test]
    fn a_diff_counts_and_caps() {
        let (d, a, r) = file_diff("x.py", Some(b"a\nb\n"), Some(b"a\nc\nd\n"), DIFF_LINES);
        assert_eq!((a, r), (2, 1));
        assert!(d.starts_with("--- a/x.py\n+++ b/x.py\n"), "{d}");
        assert!(d.contains("-b\n+c\n+d\n"), "{d}");
        let (d, a, r) = file_diff("new.txt", None, Some(b"x\n"), DIFF_LINES);
        assert_eq!((a, r), (1, 0));
        assert!(d.starts_with("--- /dev/null\n+++ b/new.txt\n"), "{d}");
        let big: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let (d, a, _) = file_diff("big", None, Some(big.as_bytes()), DIFF_LINES);
        assert_eq!(a, 1000);
        assert_eq!(d.lines().count(), DIFF_LINES + 1);
        assert!(d.ends_with("more diff lines; /diff shows all]\n"), "{d}");
    }
}
