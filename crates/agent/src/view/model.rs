//! A run as the view shows it, read from its trajectory's records into types: a summary (the
//! runs list's row) and a flat timeline of items, each tagged with its turn so the timeline
//! pages by turns. One [`Reader`] serves the whole page and the live stream alike: records go
//! in as they were written, items come out.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::backend::Usage;
use crate::run::{FinalAnswer, Verified};

/// How a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Done,
    Blocked,
    /// Interrupted by its user, or its process is gone without a final answer.
    Stopped,
    /// Its process is alive and its last message has no answer yet.
    Running,
}

impl Status {
    /// The word shown and filtered on.
    pub fn name(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Blocked => "blocked",
            Status::Stopped => "stopped",
            Status::Running => "running",
        }
    }

    /// Every status, for the filter.
    pub const ALL: [Status; 4] = [
        Status::Done,
        Status::Blocked,
        Status::Stopped,
        Status::Running,
    ];
}

/// A run in one row: what the runs list shows and filters on.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub task: String,
    /// The model of the last request (a session may switch).
    pub model: String,
    pub turns: usize,
    pub files: BTreeSet<String>,
    pub verified: Option<Verified>,
    /// The last message's answer, when it has one.
    pub answer: Option<FinalAnswer>,
    pub started_ms: u64,
    pub last_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    /// A plan-mode run (its steps are runs of their own).
    pub plan: bool,
    pub resumed_from: Option<String>,
    /// The last message was answered (a session that goes on starts a new one).
    pub answered: bool,
}

impl Summary {
    /// The status, given whether the run's process is still alive.
    pub fn status(&self, writer_alive: bool) -> Status {
        match &self.answer {
            Some(a) if self.answered => match a.status.as_str() {
                "done" => Status::Done,
                "blocked" => Status::Blocked,
                _ => Status::Stopped,
            },
            _ if writer_alive => Status::Running,
            _ => Status::Stopped,
        }
    }

    /// Milliseconds from the first record to the last.
    pub fn elapsed_ms(&self) -> u64 {
        self.last_ms.saturating_sub(self.started_ms)
    }
}

/// What a call did, as a badge: a word and how it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Badge {
    pub label: String,
    pub tone: Tone,
}

/// A badge's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Landed exactly, ran and passed.
    Good,
    /// Landed on a rung below exact (the ladder bent the model's text), or a stripped gutter.
    Drift,
    /// Refused, reverted, failed.
    Bad,
    Neutral,
}

impl Tone {
    /// The CSS class.
    pub fn class(self) -> &'static str {
        match self {
            Tone::Good => "good",
            Tone::Drift => "drift",
            Tone::Bad => "bad",
            Tone::Neutral => "neutral",
        }
    }
}

/// The badges of a call's outcome, from the record of [`slmcode_aci::Outcome`] (its serialized
/// form: `{"outcome": "edited", "rung": …}`): the rung an edit landed on, a refusal's class
/// (a syntax revert is the class `reverted`), a command's exit.
pub fn badges(outcome: &Value) -> Vec<Badge> {
    let badge = |label: &str, tone| Badge {
        label: label.to_string(),
        tone,
    };
    let s = |k: &str| outcome[k].as_str().unwrap_or("");
    let mut out = Vec::new();
    match s("outcome") {
        "edited" => {
            let rung = s("rung");
            out.push(badge(
                rung,
                if rung == "exact" {
                    Tone::Good
                } else {
                    Tone::Drift
                },
            ));
            if outcome["gutter"] == true {
                out.push(badge("gutter stripped", Tone::Drift));
            }
            let hunks = outcome["hunks"].as_array().map_or(0, Vec::len);
            if hunks > 1 {
                out.push(badge(&format!("{hunks} hunks"), Tone::Neutral));
            }
            applied(&mut out, s("applied"));
        }
        "written" => {
            let word = if outcome["created"] == true {
                "created"
            } else if outcome["changed"] == false {
                "unchanged"
            } else {
                "written"
            };
            out.push(badge(word, Tone::Good));
            applied(&mut out, s("applied"));
        }
        "ran" => match outcome["exit_code"].as_i64() {
            _ if outcome["timed_out"] == true => out.push(badge("timed out", Tone::Bad)),
            Some(0) => out.push(badge("exit 0", Tone::Good)),
            Some(code) => out.push(badge(&format!("exit {code}"), Tone::Bad)),
            None => out.push(badge("killed", Tone::Bad)),
        },
        "refused" => {
            let class = s("class");
            out.push(badge(
                &format!("refused: {}", class.replace('_', " ")),
                Tone::Bad,
            ));
        }
        _ => {}
    }
    out
}

fn applied(out: &mut Vec<Badge>, applied: &str) {
    let word = match applied {
        "dry_run" => "dry run",
        "staged" => "staged for review",
        _ => return,
    };
    out.push(Badge {
        label: word.into(),
        tone: Tone::Neutral,
    });
}

/// The numbers of one reply: what the prompt cost and how fast the answer came.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    pub turn: usize,
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
    pub tokens_per_sec: f64,
}

/// One thing on the timeline.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Start {
        model: String,
        endpoint: String,
        task: String,
        resumed_from: Option<String>,
    },
    /// A message of the user's: the task, or a later one (a person steering).
    Message {
        number: usize,
        text: String,
    },
    /// A request goes out: a turn begins.
    Turn {
        number: usize,
    },
    /// The model's answer: its text, its reasoning (folded), the calls it made natively.
    Reply {
        text: String,
        reasoning: String,
        calls: Vec<String>,
        budget: Option<Budget>,
    },
    Call {
        name: String,
        /// The arguments as the tool ran them, as pretty JSON.
        args: String,
        badges: Vec<Badge>,
        is_error: bool,
        /// The result as the model read it (capped by the one cap).
        result: String,
    },
    FileChanged {
        path: String,
        added: usize,
        removed: usize,
        diff: String,
    },
    Compacted {
        before: u64,
        after: u64,
    },
    /// The harness wrote to the model (a repair, a nudge, the turns left).
    Steer {
        text: String,
    },
    Note {
        text: String,
        warning: bool,
    },
    /// The `verify` command ran: before the change, or on a `done`.
    Check {
        command: String,
        passed: bool,
        before: bool,
        result: String,
    },
    ModelSwitched {
        from: String,
        to: String,
    },
    Undone {
        messages: Vec<String>,
    },
    Final {
        answer: FinalAnswer,
        turns: usize,
        elapsed_ms: u64,
    },
    Error {
        text: String,
    },
    /// Plan mode: the plan the plan model made.
    Plan {
        steps: Vec<crate::plan::Step>,
    },
    /// Plan mode: how a step went (its own run is `run_id`).
    Step {
        number: usize,
        goal: String,
        files: Vec<String>,
        run_id: String,
        status: String,
        summary: String,
    },
    /// Plan mode: the planning run.
    PlanPhase {
        run_id: String,
        status: String,
    },
}

/// Reads records in order into the summary and the timeline.
#[derive(Debug, Default)]
pub struct Reader {
    pub summary: Summary,
    turn: usize,
    messages: usize,
    records: usize,
}

impl Reader {
    /// Records read so far.
    pub fn records(&self) -> usize {
        self.records
    }

    /// The turn the next item belongs to.
    pub fn turn(&self) -> usize {
        self.turn
    }

    /// Reads one record; the items it adds to the timeline, each with its turn.
    pub fn add(&mut self, r: &Value) -> Vec<(usize, Item)> {
        self.records += 1;
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        let sum = &mut self.summary;
        if let Some(t) = r["t"].as_u64() {
            if sum.started_ms == 0 {
                sum.started_ms = t;
            }
            sum.last_ms = sum.last_ms.max(t);
        }
        let item = match r["type"].as_str().unwrap_or("") {
            "start" => {
                if sum.task.is_empty() {
                    sum.task = s("task");
                }
                sum.model = s("model");
                sum.resumed_from = r["resumed_from"].as_str().map(str::to_string);
                Item::Start {
                    model: s("model"),
                    endpoint: s("endpoint"),
                    task: s("task"),
                    resumed_from: sum.resumed_from.clone(),
                }
            }
            "message" => {
                self.messages += 1;
                sum.answered = false;
                if sum.task.is_empty() {
                    sum.task = s("text");
                }
                Item::Message {
                    number: self.messages,
                    text: s("text"),
                }
            }
            "request" => {
                let number = r["turn"].as_u64().unwrap_or(0) as usize;
                if number == self.turn {
                    // A retry of the same turn (a stream stopped, thinking over budget).
                    return Vec::new();
                }
                self.turn = number;
                sum.turns = sum.turns.max(number);
                Item::Turn { number }
            }
            "reply" => {
                let usage: Option<Usage> = serde_json::from_value(r["usage"].clone()).ok();
                let elapsed = r["elapsed_ms"].as_u64().unwrap_or(0);
                let budget = usage.map(|u| {
                    sum.prompt_tokens += u.prompt_tokens;
                    sum.completion_tokens += u.completion_tokens;
                    sum.cached_tokens += u.cached_tokens.unwrap_or(0);
                    Budget {
                        turn: self.turn,
                        prompt: u.prompt_tokens,
                        cached: u.cached_tokens.unwrap_or(0),
                        completion: u.completion_tokens,
                        tokens_per_sec: if elapsed > 0 {
                            u.completion_tokens as f64 * 1000.0 / elapsed as f64
                        } else {
                            0.0
                        },
                    }
                });
                let calls = r["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        format!(
                            "{} {}",
                            c["function"]["name"].as_str().unwrap_or("?"),
                            c["function"]["arguments"].as_str().unwrap_or("")
                        )
                    })
                    .collect();
                Item::Reply {
                    text: s("content"),
                    reasoning: s("reasoning"),
                    calls,
                    budget,
                }
            }
            "tool" => Item::Call {
                name: s("name"),
                args: serde_json::to_string_pretty(&r["args"]).unwrap_or_default(),
                badges: badges(&r["outcome"]),
                is_error: r["is_error"] == true,
                result: s("result"),
            },
            "file_changed" => {
                sum.files.insert(s("path"));
                Item::FileChanged {
                    path: s("path"),
                    added: r["added"].as_u64().unwrap_or(0) as usize,
                    removed: r["removed"].as_u64().unwrap_or(0) as usize,
                    diff: s("diff"),
                }
            }
            "compacted" => Item::Compacted {
                before: r["before"].as_u64().unwrap_or(0),
                after: r["after"].as_u64().unwrap_or(0),
            },
            "steer" => Item::Steer { text: s("text") },
            "note" => Item::Note {
                text: s("text"),
                warning: false,
            },
            "warning" => Item::Note {
                text: s("text"),
                warning: true,
            },
            "think_budget" => Item::Note {
                text: format!(
                    "thinking passed its budget of {} tokens: stopped, its notes kept, the turn asked again without thinking",
                    r["budget"]
                ),
                warning: false,
            },
            kind @ ("verify" | "verify_before") => Item::Check {
                command: s("command"),
                passed: r["passed"] == true,
                before: kind == "verify_before",
                result: s("result"),
            },
            "model" => {
                sum.model = s("to");
                Item::ModelSwitched {
                    from: s("from"),
                    to: s("to"),
                }
            }
            "undo" => Item::Undone {
                messages: strings(&r["messages"]),
            },
            "error" => Item::Error { text: s("error") },
            "final" => {
                let Ok(answer) = serde_json::from_value::<FinalAnswer>(r["answer"].clone()) else {
                    return Vec::new();
                };
                sum.verified = answer.verified;
                if sum.files.is_empty() {
                    sum.files.extend(answer.files_changed.iter().cloned());
                }
                sum.answered = true;
                sum.answer = Some(answer.clone());
                Item::Final {
                    answer,
                    turns: r["turns"].as_u64().unwrap_or(sum.turns as u64) as usize,
                    elapsed_ms: r["elapsed_ms"].as_u64().unwrap_or(0),
                }
            }
            "plan" => {
                sum.plan = true;
                Item::Plan {
                    steps: serde_json::from_value(r["plan"]["steps"].clone()).unwrap_or_default(),
                }
            }
            "plan_phase" => {
                sum.plan = true;
                if sum.model.is_empty() {
                    sum.model = s("model");
                }
                Item::PlanPhase {
                    run_id: s("run_id"),
                    status: s("status"),
                }
            }
            "step" => {
                sum.plan = true;
                let number = r["step"].as_u64().unwrap_or(0) as usize;
                self.turn = self.turn.max(number);
                sum.turns = sum.turns.max(number);
                Item::Step {
                    number,
                    goal: s("goal"),
                    files: strings(&r["files"]),
                    run_id: s("run_id"),
                    status: s("status"),
                    summary: s("summary"),
                }
            }
            _ => return Vec::new(),
        };
        vec![(self.turn, item)]
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use slmcode_aci::matching::Rung;
    use slmcode_aci::outcome::{Applied, Edit, Outcome, Ran, Write};
    use slmcode_aci::RefusalClass;

    fn labels(o: Outcome) -> Vec<(String, Tone)> {
        badges(&serde_json::to_value(o).unwrap())
            .into_iter()
            .map(|b| (b.label, b.tone))
            .collect()
    }

    #[test]
    fn outcomes_become_badges_from_their_own_serialization() {
        let edit = |rung, gutter, applied| {
            Outcome::Edited(Edit {
                rung,
                gutter,
                hunks: vec![],
                applied,
            })
        };
        assert_eq!(
            labels(edit(Rung::Exact, false, Applied::Written)),
            vec![("exact".into(), Tone::Good)]
        );
        assert_eq!(
            labels(edit(Rung::Indentation, true, Applied::Staged)),
            vec![
                ("indentation".into(), Tone::Drift),
                ("gutter stripped".into(), Tone::Drift),
                ("staged for review".into(), Tone::Neutral)
            ]
        );
        assert_eq!(
            labels(Outcome::Refused(RefusalClass::Reverted)),
            vec![("refused: reverted".into(), Tone::Bad)]
        );
        assert_eq!(
            labels(Outcome::Refused(RefusalClass::Ambiguous { count: 2 })),
            vec![("refused: ambiguous".into(), Tone::Bad)]
        );
        assert_eq!(
            labels(Outcome::Ran(Ran {
                exit_code: Some(1),
                timed_out: false
            })),
            vec![("exit 1".into(), Tone::Bad)]
        );
        assert_eq!(
            labels(Outcome::Written(Write {
                created: true,
                changed: true,
                applied: Applied::Written
            })),
            vec![("created".into(), Tone::Good)]
        );
        assert!(labels(Outcome::Done).is_empty());
    }

    #[test]
    fn a_run_reads_into_its_summary_and_timeline() {
        let mut r = Reader::default();
        let records = [
            json!({"type": "start", "task": "fix it", "model": "m", "endpoint": "e", "t": 1000}),
            json!({"type": "request", "turn": 1, "t": 1100}),
            json!({"type": "reply", "turn": 1, "content": "x", "reasoning": "",
                   "usage": {"prompt_tokens": 900, "completion_tokens": 20, "cached_tokens": 800},
                   "elapsed_ms": 1000, "t": 2000}),
            json!({"type": "tool", "name": "ws_edit", "args": {"path": "a.py"}, "result": "ok",
                   "is_error": false, "outcome": {"outcome": "edited", "rung": "exact", "gutter": false, "hunks": [], "applied": "written"}}),
            json!({"type": "file_changed", "path": "a.py", "added": 1, "removed": 1, "diff": "-a\n+b\n"}),
            json!({"type": "request", "turn": 2}),
            json!({"type": "request", "turn": 2}),
            json!({"type": "compacted", "before": 9000, "after": 4000}),
            json!({"type": "steer", "text": "You have 3 turns left."}),
            json!({"type": "final", "answer": {"status": "done", "summary": "s", "files_changed": ["a.py"], "notes": "", "verified": true},
                   "turns": 2, "elapsed_ms": 5, "t": 3000}),
        ];
        let items: Vec<_> = records.iter().flat_map(|x| r.add(x)).collect();
        assert_eq!(items.len(), 9, "{items:?}");
        assert_eq!(
            items[6],
            (
                2,
                Item::Compacted {
                    before: 9000,
                    after: 4000
                }
            )
        );
        assert!(matches!(&items[7], (2, Item::Steer { text }) if text.contains("3 turns")));
        assert_eq!(items[1], (1, Item::Turn { number: 1 }));
        assert!(
            matches!(&items[2].1, Item::Reply { budget: Some(b), .. } if b.cached == 800 && b.prompt == 900 && b.tokens_per_sec == 20.0)
        );
        assert!(matches!(&items[8], (2, Item::Final { turns: 2, .. })));
        let s = &r.summary;
        assert_eq!(
            (s.task.as_str(), s.turns, s.elapsed_ms()),
            ("fix it", 2, 2000)
        );
        assert_eq!(s.files.len(), 1);
        assert_eq!(s.verified, Some(Verified::Passed));
        assert_eq!(s.status(true), Status::Done);
        let mut open = Reader::default();
        open.add(&records[0]);
        assert_eq!(open.summary.status(true), Status::Running);
        assert_eq!(open.summary.status(false), Status::Stopped);
    }
}
