//! The loop of a run, one turn at a time: ask the model, then run its one tool call, answer a
//! reply that had none, or take its final answer; and how a run ends — the steering turn when
//! the budget runs out after a tool call, an interruption, the final record.

use std::sync::PoisonError;
use std::time::Instant;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::calls::{result_text, Call};
use super::final_answer::{
    announced_action, final_repair_text, make_the_call_text, parse_final, FinalAnswer,
};
use super::history::{clip, estimate_tokens, prompt_was_cut, result_summary, EntryKind};
use super::{Agent, Event, Outcome, RunError, ToolMode, Verified, WARN_TURNS_LEFT};
use crate::backend::{BackendError, ChatRequest, Message, Reply};
use crate::evolve::{Arm, EditOutcome};
use crate::prompt;
use slmcode_aci::protect::Protect;
use slmcode_aci::Outcome as CallOutcome;

/// What one turn came to.
enum Turn {
    /// The run goes on; `ran_call` says whether this turn ran a tool call (a run must not end
    /// on one).
    Continue { ran_call: bool },
    /// The model's final answer, or the run's verdict on an invalid one.
    Final(FinalAnswer),
    /// The user stopped the run.
    Interrupted,
}

impl Agent {
    /// Runs the task to its end, or until `cancel` fires.
    pub async fn run(mut self, cancel: CancellationToken) -> Result<Outcome, RunError> {
        self.first_message(cancel).await
    }

    /// The task, the first message: the start of the trajectory, then its turns.
    pub async fn first_message(&mut self, cancel: CancellationToken) -> Result<Outcome, RunError> {
        self.log_start();
        let text = match &self.resumed_from {
            Some(_) => self.history.last().map(|e| e.message.content.clone()),
            None => Some(self.settings.task.clone()),
        };
        self.mark_message(text.unwrap_or_default());
        self.check_before().await;
        self.drive(cancel).await
    }

    /// The turns of one message of the user's, to its final answer.
    pub(super) async fn drive(&mut self, cancel: CancellationToken) -> Result<Outcome, RunError> {
        let started = Instant::now();
        let mut turn = 0;
        let mut ended_on_call = false;
        while turn < self.settings.max_turns {
            turn += 1;
            let step = match self.turn(turn, &cancel).await {
                Ok(step) => step,
                Err(e) => {
                    // A server that failed can be resumed once it is back.
                    self.save_for_follow_up("error");
                    self.emit(Event::Error {
                        message: e.to_string(),
                    });
                    return Err(e);
                }
            };
            self.emit(Event::TurnEnded { number: turn });
            match step {
                Turn::Continue { ran_call } => ended_on_call = ran_call,
                Turn::Final(answer) => return Ok(self.finish(answer, turn, started)),
                Turn::Interrupted => return Ok(self.interrupted(turn, started)),
            }
        }
        let answer = if ended_on_call {
            let last = self.finish_after_budget(turn, &cancel).await;
            if let Err(e) = &last {
                self.save_for_follow_up("error");
                let message = e.to_string();
                self.emit(Event::Error { message });
            }
            match last? {
                Some(answer) => answer,
                None => return Ok(self.interrupted(turn, started)),
            }
        } else {
            FinalAnswer {
                status: "blocked".into(),
                summary: "the turn budget ran out before the task was finished".into(),
                files_changed: Vec::new(),
                notes: String::new(),
                verified: None,
            }
        };
        Ok(self.finish(answer, turn, started))
    }

    /// The first record of the trajectory: the settings, the tools, the first two messages.
    fn log_start(&mut self) {
        let max = self.settings.max_turns;
        let mut start = json!({
            "task": self.settings.task,
            "model": self.settings.model,
            "endpoint": self.backend.endpoint(),
            "max_turns": max,
            "max_tokens": self.settings.max_tokens,
            "edit_format": self.settings.arm.name(),
            "tool_mode": if self.text_tools { "text" } else { "native" },
            "context_window": self.settings.context_window,
            "context_from": self.settings.context_from,
            "tools": self.tools_json.iter().map(|t| t["function"]["name"].clone()).collect::<Vec<_>>(),
            "system": self.history[0].message.content,
            "first_message": self.history[1].message.content,
        });
        if let Some(id) = &self.resumed_from {
            start["resumed_from"] = json!(id);
            start["follow_up"] = json!(self.history.last().map(|e| e.message.content.clone()));
        }
        self.log("start", start);
        let tools = self
            .tools_json
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect();
        self.emit(Event::Started {
            run_id: self.trajectory.id.clone(),
            model: self.settings.model.clone(),
            endpoint: self.backend.endpoint().to_string(),
            context_window: self.settings.context_window,
            context_from: self.settings.context_from.clone(),
            edit_format: self.settings.arm.name().to_string(),
            tool_mode: if self.text_tools { "text" } else { "native" }.to_string(),
            max_turns: max,
            tools,
            resumed_from: self.resumed_from.clone(),
        });
    }

    /// One turn: the request, then whatever the reply calls for.
    async fn turn(&mut self, turn: usize, cancel: &CancellationToken) -> Result<Turn, RunError> {
        let max = self.settings.max_turns;
        self.emit(Event::Turn { number: turn, max });
        let left = max - turn + 1;
        if left <= WARN_TURNS_LEFT {
            // Kept in the history, not added to this request alone: each request then extends
            // the one before, and the server's prompt cache holds.
            self.steer(prompt::turns_left_warning(left));
        }
        let mut reply = tokio::select! {
            r = self.ask(turn) => r?,
            _ = cancel.cancelled() => return Ok(Turn::Interrupted),
        };
        if reply.thinking_stopped() {
            self.keep_thoughts(turn, &reply);
            reply = tokio::select! {
                r = self.ask_with(turn, "stop") => r?,
                _ = cancel.cancelled() => return Ok(Turn::Interrupted),
            };
        }
        if let Some(why) = &reply.runaway {
            self.push(
                Message::assistant(clip(&reply.content, 2000)),
                EntryKind::Assistant,
            );
            let text = format!(
                "Your reply was stopped early: {why}, so nothing ran. Answer with one tool call, or with the final JSON if you are done."
            );
            self.note(format!("reply stopped early: {why}"));
            self.steer(text);
            return Ok(Turn::Continue { ran_call: false });
        }
        if reply.truncated() {
            self.push(
                Message::assistant(clip(&reply.content, 2000)),
                EntryKind::Assistant,
            );
            let text = format!(
                "Your reply was cut off at max_tokens ({} tokens) before it was finished, so nothing ran. Send a shorter tool call: edit a smaller span, or split the change into several ws_edit calls.",
                self.settings.max_tokens
            );
            self.note("reply truncated at max_tokens; asked for a shorter call".into());
            self.steer(text);
            return Ok(Turn::Continue { ran_call: false });
        }
        let (calls, problem) = self.calls_in(&reply);
        let dropped = calls.len().saturating_sub(1);
        Ok(match calls.into_iter().next() {
            Some(call) => self.run_call(turn, &reply, call, dropped, cancel).await,
            None => match self.no_call(&reply, problem) {
                Turn::Final(answer) => {
                    // The answer is part of the conversation a follow-up continues.
                    self.push(
                        Message::assistant(reply.content.clone()),
                        EntryKind::Assistant,
                    );
                    if answer.status == "done" && self.tried_edits_but_changed_nothing() {
                        self.asked_unchanged = true;
                        self.note(
                            "done with nothing changed after edits were tried; asked once whether the task is done".into(),
                        );
                        self.steer(prompt::NOTHING_CHANGED);
                        return Ok(Turn::Continue { ran_call: false });
                    }
                    self.verify(answer, true).await
                }
                other => other,
            },
        })
    }

    /// A reply stopped at the thinking budget: its reasoning so far goes into the history as
    /// the model's notes (bounded), and the model is asked for the answer without more
    /// thinking. Said once on the stream and recorded.
    fn keep_thoughts(&mut self, turn: usize, reply: &Reply) {
        let budget = self.settings.think_budget;
        let thoughts = reply.thoughts();
        let notes = tail_chars(thoughts.trim(), THOUGHT_NOTES_CHARS);
        self.log(
            "think_budget",
            json!({"turn": turn, "budget": budget, "reasoning_chars": thoughts.chars().count()}),
        );
        self.note(format!(
            "thinking passed its budget ({budget} tokens): stopped, its notes kept, and the turn asked again with thinking off"
        ));
        self.push(
            Message::assistant(format!(
                "My notes so far (thinking stopped at its budget):\n{notes}"
            )),
            EntryKind::Assistant,
        );
        self.steer(prompt::THINK_BUDGET_SPENT);
    }

    /// Runs `check` as a ws_shell call (its policy, sandbox and hooks): whether it passed, and
    /// what it printed.
    async fn run_check(&mut self, check: &str) -> (bool, String) {
        let registry = self.registry.clone();
        let workspace = self.workspace.clone();
        let args = json!({ "command": check });
        let result = tokio::task::spawn_blocking(move || {
            let mut ws = workspace.lock().unwrap_or_else(PoisonError::into_inner);
            // The harness's own check: not a call of the model's, so its loop guard does not
            // count it (the same check before and after an unchanged tree is not a loop).
            let guard = std::mem::take(&mut ws.session.loop_guard);
            let result = registry.call(&mut ws, "ws_shell", &args);
            ws.session.loop_guard = guard;
            result
        })
        .await;
        match &result {
            Ok(r) => (
                matches!(&r.outcome, CallOutcome::Ran(ran) if ran.passed()),
                r.text.clone(),
            ),
            Err(e) => (false, format!("the check could not run: {e}")),
        }
    }

    /// Puts back protected files that changed since the message began (a build script, a
    /// hook: what no tool's own guard saw). One line per path.
    fn put_back_protected(&mut self) -> Vec<String> {
        let Some((protect, before)) = self.protected.take() else {
            return Vec::new();
        };
        let ws = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        before.restore_changed(&protect, &ws.jail)
    }

    /// This message's turns called edit tools, no file is changed since the message began,
    /// and the question was not asked yet.
    fn tried_edits_but_changed_nothing(&self) -> bool {
        // A plan changes nothing by design.
        if self.settings.plans
            || self.asked_unchanged
            || self.edit_outcomes.len() <= self.edits_at_start
        {
            return false;
        }
        let Some(start) = self.undo_points.last() else {
            return false;
        };
        let ws = self
            .workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        ws.session.changed == start.changed
    }

    /// The check, once before a message's first turn: a check that passes already cannot
    /// show that the change works, and the final answer will say so.
    pub(super) async fn check_before(&mut self) {
        {
            // The protected files as the message found them: what its end puts back.
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.protected = Protect::new(&ws.config.protect).map(|p| {
                let before = p.snapshot(&ws.jail);
                (p, before)
            });
        }
        self.asked_unchanged = false;
        self.edits_at_start = self.edit_outcomes.len();
        self.passed_before = None;
        let Some(check) = self.settings.verify.clone() else {
            return;
        };
        let (passed, text) = self.run_check(&check).await;
        self.log(
            "verify_before",
            json!({"command": check, "passed": passed, "result": text}),
        );
        self.note(format!(
            "before the change, `{check}` {}",
            if passed {
                "passes already: it cannot show that the change works"
            } else {
                "fails, as a check of the change should"
            }
        ));
        self.passed_before = Some(passed);
    }

    /// A `done` answer checked by the configured `verify` command, run as a ws_shell call
    /// (its policy, sandbox and hooks). Passed: the answer stands, verified. Failed: the
    /// output goes back to the model (tail first) while retries are left, then the run ends
    /// blocked. No check configured, or not `done`: the answer as it is.
    async fn verify(&mut self, mut answer: FinalAnswer, may_retry: bool) -> Turn {
        let Some(check) = self.settings.verify.clone() else {
            return Turn::Final(answer);
        };
        if answer.status != "done" {
            return Turn::Final(answer);
        }
        let (passed, text) = self.run_check(&check).await;
        self.log(
            "verify",
            json!({"command": check, "passed": passed, "result": text}),
        );
        if passed && self.passed_before == Some(true) {
            // A check that passed before the change says nothing about the change.
            let warning = format!(
                "`{check}` passed before the change too, so it cannot show that the change works"
            );
            self.note(format!("verified? {warning}"));
            answer.verified = Some(Verified::PassedBeforeAndAfter);
            answer.summary = format!("{} [note: {warning}]", answer.summary.trim_end());
            return Turn::Final(answer);
        }
        if passed {
            self.note(format!("verified: `{check}` passed"));
            answer.verified = Some(Verified::Passed);
            return Turn::Final(answer);
        }
        let tail = tail_chars(&text, VERIFY_OUTPUT_CHARS);
        if may_retry && self.verify_left > 0 {
            self.verify_left -= 1;
            self.note(format!(
                "verify: `{check}` failed; back to the model ({} {} left)",
                self.verify_left,
                if self.verify_left == 1 {
                    "retry"
                } else {
                    "retries"
                }
            ));
            self.steer(format!(
                    "The check `{check}` failed, so the task is not done yet:\n{tail}\nFix the cause, then answer again."
                ));
            return Turn::Continue { ran_call: false };
        }
        self.note(format!(
            "verify: `{check}` still fails; the run ends blocked"
        ));
        answer.status = "blocked".into();
        answer.verified = Some(Verified::Failed);
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with("[sandbox"))
            .unwrap_or("")
            .trim();
        let why = format!("the check `{check}` still fails ({last})");
        answer.notes = if answer.notes.trim().is_empty() {
            why
        } else {
            format!("{}; {why}", answer.notes.trim_end())
        };
        Turn::Final(answer)
    }

    /// A reply without a call to run: a failed attempt at one (the model is told why), else
    /// the final answer — with one repair turn when it is not valid.
    fn no_call(&mut self, reply: &Reply, problem: Option<String>) -> Turn {
        if let Some(problem) = problem {
            self.push(
                Message::assistant(reply.content.clone()),
                EntryKind::Assistant,
            );
            self.note(format!("no call could be run: {problem}"));
            self.steer(problem);
            return Turn::Continue { ran_call: false };
        }
        let announced = announced_action(&reply.content);
        let parsed = if self.settings.plans {
            crate::plan::parse_plan(&reply.content).map(|plan| {
                let answer = FinalAnswer {
                    status: "done".into(),
                    summary: plan.render(),
                    files_changed: Vec::new(),
                    notes: String::new(),
                    verified: None,
                };
                self.plan = Some(plan);
                answer
            })
        } else {
            parse_final(&reply.content)
        };
        match parsed {
            Ok(answer) => Turn::Final(answer),
            // "I'll now edit app.py" and no call: the model meant to act, not to end.
            Err(_) if announced.is_some() && self.nudges_left > 0 => {
                self.nudges_left -= 1;
                let announced = announced.unwrap_or_default();
                self.push(
                    Message::assistant(reply.content.clone()),
                    EntryKind::Assistant,
                );
                self.note(format!(
                    "the model announced \"{announced}\" without a call; asked to make it"
                ));
                self.steer(make_the_call_text(&announced));
                Turn::Continue { ran_call: false }
            }
            Err(why) if !self.repaired_final => {
                self.repaired_final = true;
                self.push(
                    Message::assistant(reply.content.clone()),
                    EntryKind::Assistant,
                );
                let repair = if self.settings.plans {
                    self.note(format!("plan not valid ({why}); asked once more"));
                    crate::plan::plan_repair_text(&why)
                } else {
                    self.note(format!("final answer not valid ({why}); asked once more"));
                    final_repair_text(&why)
                };
                self.steer(repair);
                Turn::Continue { ran_call: false }
            }
            Err(why) => Turn::Final(FinalAnswer {
                status: "blocked".into(),
                summary: clip(reply.content.trim(), 500),
                files_changed: Vec::new(),
                notes: format!("the model's final answer was not valid JSON ({why})"),
                verified: None,
            }),
        }
    }

    /// Runs the first call of a reply (the others were `dropped`) and puts its result in the
    /// history.
    async fn run_call(
        &mut self,
        turn: usize,
        reply: &Reply,
        call: Call,
        dropped: usize,
        cancel: &CancellationToken,
    ) -> Turn {
        self.keep_only(turn, reply, &call);
        // A stop while the call runs kills it (a command's whole process tree); the call
        // still gets its result in the history, so a follow-up can go on from there.
        let result = self.execute(&call, cancel).await;
        let text = result_text(&call, &result, dropped);
        let outcome = EditOutcome::of(&call.name, &result.outcome);
        if let Some(o) = outcome {
            // Counted for the format the model actually used, whatever the prompt taught.
            let arm = Arm::used(&call.name, &result.outcome).unwrap_or(self.settings.arm);
            self.edit_outcomes.push((arm, o));
        }
        // The trajectory shows the arguments as the tools saw them (aliases resolved).
        let args = self
            .registry
            .canonical_args(&call.name, &call.arguments)
            .unwrap_or_else(|| call.arguments.clone());
        self.log(
            "tool",
            json!({"turn": turn, "name": call.name, "args": args, "result": text,
                   "is_error": result.is_error, "edit_outcome": outcome,
                   "outcome": result.outcome}),
        );
        self.emit(Event::Result {
            turn,
            name: call.name.clone(),
            outcome: result.outcome.clone(),
            is_error: result.is_error,
            text: text.clone(),
        });
        self.report_changes(&call.name);
        let summary = result_summary(&call, &result);
        let message = match &call.native_id {
            Some(id) => Message::tool_result(id, text),
            None => Message::user(format!("[{} result]\n{text}", call.name)),
        };
        self.push(
            message,
            EntryKind::ToolResult {
                summary,
                elided: false,
            },
        );
        if cancel.is_cancelled() {
            return Turn::Interrupted;
        }
        Turn::Continue { ran_call: true }
    }

    /// The budget ran out after a tool call: one steering turn, without tools, for the final
    /// JSON. `None` when the user stopped the run meanwhile.
    async fn finish_after_budget(
        &mut self,
        turn: usize,
        cancel: &CancellationToken,
    ) -> Result<Option<FinalAnswer>, RunError> {
        self.note(
            "turn budget spent after a tool call; one steering turn for the final JSON".into(),
        );
        self.steer("You are out of turns. Do not call any tool. Reply now with only the final JSON: {\"status\":\"done\" or \"blocked\",\"summary\":\"...\",\"files_changed\":[...],\"notes\":\"...\"}");
        let reply = tokio::select! {
            r = self.ask(turn + 1) => r?,
            _ = cancel.cancelled() => return Ok(None),
        };
        self.push(
            Message::assistant(reply.content.clone()),
            EntryKind::Assistant,
        );
        let answer = parse_final(&reply.content).unwrap_or_else(|why| FinalAnswer {
            status: "blocked".into(),
            summary: "the turn budget ran out before the task was finished".into(),
            files_changed: Vec::new(),
            notes: format!("no valid final JSON after the budget ran out ({why})"),
            verified: None,
        });
        // Out of turns: checked, but no retry.
        Ok(match self.verify(answer, false).await {
            Turn::Final(answer) => Some(answer),
            _ => None,
        })
    }

    /// One request with the history (compacted to fit). Nothing is added for one request only,
    /// and every request offers the same tools (the final steering turn too, which tells the
    /// model not to call them): each request extends the previous one unless compaction ran,
    /// so local servers reuse their cached prompt.
    async fn ask(&mut self, turn: usize) -> Result<Reply, BackendError> {
        let think = self.settings.think.clone();
        self.ask_with(turn, &think).await
    }

    /// [`Agent::ask`] with this `think` setting (the retry after the thinking budget turns
    /// thinking off).
    async fn ask_with(&mut self, turn: usize, think: &str) -> Result<Reply, BackendError> {
        let (reply, estimate) = loop {
            self.compact();
            let messages: Vec<Message> = self.history.iter().map(|e| e.message.clone()).collect();
            let tools: Vec<Value> = self.sent_tools().to_vec();
            let estimate = estimate_tokens(&messages, &tools);
            let expected = self.scaled(estimate);
            let max_tokens = self.reply_room(expected);
            let last = self.history.last().map(|e| e.message.clone());
            self.log(
                "request",
                json!({"turn": turn, "last_message": last, "messages": messages.len(),
                       "estimated_prompt_tokens": estimate, "expected_prompt_tokens": expected,
                       "max_tokens": max_tokens}),
            );
            let request = ChatRequest {
                model: &self.settings.model,
                messages: &messages,
                tools: &tools,
                max_tokens: Some(max_tokens),
                sampling: &self.settings.sampling,
                runaway: self.settings.runaway,
                think,
                think_budget: self.settings.think_budget,
            };
            match self.backend.chat(&request).await {
                // A stream that came back empty, or with tool-call deltas that do not add up,
                // while tools were offered: some servers' streaming of calls is broken. Asked
                // again whole, and whole for the rest of the run.
                Ok(r) if self.backend.streaming() && !tools.is_empty() && stream_was_broken(&r) => {
                    self.backend.stop_streaming();
                    let why = if r.tool_calls.is_empty() {
                        "came back empty"
                    } else {
                        "had tool-call pieces that do not make a call"
                    };
                    self.log(
                        "streaming",
                        json!({"turn": turn, "stopped": why, "reply": r}),
                    );
                    self.emit(Event::warning(format!(
                        "the streamed reply {why}; asking again without streaming, and for the rest of the run"
                    )));
                }
                Ok(r) => break (r, estimate),
                // The server cannot take tools for this model: in auto mode the run goes on
                // with them in the prompt, asking again at once (the refusal is not transient).
                Err(BackendError::ToolsRefused { detail, .. })
                    if self.settings.tool_mode == ToolMode::Auto && !self.text_tools =>
                {
                    self.switch_to_text_tools(detail);
                }
                Err(e) => {
                    self.log("error", json!({"turn": turn, "error": e.to_string()}));
                    return Err(e);
                }
            }
        };
        self.log(
            "reply",
            json!({"turn": turn, "content": reply.content, "reasoning": reply.reasoning, "tool_calls": reply.tool_calls,
                   "finish_reason": reply.finish_reason, "usage": reply.usage, "elapsed_ms": reply.elapsed.as_millis() as u64}),
        );
        let tokens = reply
            .usage
            .map(|u| u.completion_tokens)
            .filter(|n| *n > 0)
            .unwrap_or((reply.content.len() / 4) as u64);
        let secs = reply.elapsed.as_secs_f64().max(1e-3);
        self.emit(Event::Reply {
            tokens,
            tokens_per_sec: tokens as f64 / secs,
            elapsed_ms: reply.elapsed.as_millis() as u64,
            window: self.settings.context_window,
            prompt_tokens: reply.usage.map(|u| u.prompt_tokens).filter(|n| *n > 0),
            cached_tokens: reply.usage.and_then(|u| u.cached_tokens),
        });
        if let Some(usage) = reply.usage {
            self.calibrate(usage.prompt_tokens, estimate);
            if !self.warned_cut && prompt_was_cut(usage.prompt_tokens, estimate) {
                self.warned_cut = true;
                let text = format!(
                    "the server counted {} prompt tokens but the prompt is about {estimate}: it cut the prompt to fit a smaller context than slmcode assumes, or left part of it out (a chat template without tools drops their schemas; tool_mode: text avoids that), and the model did not see all of it. Set context_window to the server's context; `slmcode doctor --model M` tests it",
                    usage.prompt_tokens
                );
                self.log("warning", json!({"text": text}));
                self.emit(Event::warning(text));
            }
        }
        Ok(reply)
    }

    /// How a run the user stopped ends.
    fn interrupted(&mut self, turn: usize, started: Instant) -> Outcome {
        let answer = FinalAnswer {
            status: "interrupted".into(),
            summary: "stopped by the user".into(),
            files_changed: Vec::new(),
            notes: String::new(),
            verified: None,
        };
        self.finish(answer, turn, started)
    }

    /// The end of every run: the files changed, as the session recorded them, and the last
    /// record of the trajectory.
    fn finish(&mut self, mut answer: FinalAnswer, turns: usize, started: Instant) -> Outcome {
        let put_back = self.put_back_protected();
        if !put_back.is_empty() {
            let text = format!(
                "protected files changed during the run and were put back: {}",
                put_back.join("; ")
            );
            self.log("protect", json!({"put_back": put_back}));
            self.emit(Event::warning(text.clone()));
            answer.notes = if answer.notes.trim().is_empty() {
                text
            } else {
                format!("{}; {text}", answer.notes.trim_end())
            };
        }
        {
            let ws = self
                .workspace
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let changed: Vec<String> = ws.session.changed.iter().map(|p| p.to_string()).collect();
            let claimed: Vec<String> = answer
                .files_changed
                .iter()
                .filter(|f| !changed.iter().any(|c| c == f.trim_start_matches("./")))
                .cloned()
                .collect();
            if !claimed.is_empty() {
                let note = format!(
                    "the model also named {}, which no tool changed",
                    claimed.join(", ")
                );
                answer.notes = if answer.notes.trim().is_empty() {
                    note
                } else {
                    format!("{}; {note}", answer.notes.trim_end())
                };
            }
            answer.files_changed = changed;
        }
        let elapsed = started.elapsed();
        self.save_for_follow_up(&answer.status);
        self.log(
            "final",
            json!({"answer": answer, "turns": turns, "elapsed_ms": elapsed.as_millis() as u64}),
        );
        self.emit(Event::Final {
            answer: answer.clone(),
            turns,
            elapsed_ms: elapsed.as_millis() as u64,
        });
        Outcome {
            answer,
            turns,
            elapsed,
            run_id: self.trajectory.id.clone(),
            trajectory: self.trajectory.path.to_string(),
            edit_outcomes: std::mem::take(&mut self.edit_outcomes),
            refused_tools: self.refused_tools.take(),
            plan: self.plan.take(),
        }
    }
}

/// A streamed reply that says nothing — no text, no reasoning, no call, not cut — or whose
/// native calls lack a name or hold arguments that not even repair makes JSON of: the marks
/// of a server whose streaming of tool calls is broken (a model's own slips, a trailing comma
/// or single quotes, are repaired as always).
fn stream_was_broken(reply: &Reply) -> bool {
    if reply.runaway.is_some() || reply.truncated() {
        return false;
    }
    let empty = reply.content.trim().is_empty()
        && reply.reasoning.trim().is_empty()
        && reply.tool_calls.is_empty();
    let broken_call = reply.tool_calls.iter().any(|c| {
        c.function.name.trim().is_empty()
            || (!c.function.arguments.trim().is_empty()
                && crate::toolcall::repair_json_object(&c.function.arguments).is_err())
    });
    empty || broken_call
}

/// How much of a failed check's output goes back to the model.
const VERIFY_OUTPUT_CHARS: usize = 3000;

/// The most characters of stopped thinking kept as the model's notes (its end: where the
/// thought had got to).
const THOUGHT_NOTES_CHARS: usize = 4000;

/// The last `n` characters of `text`, cut at a line start when one is near: a failing test
/// run says what failed at its end.
fn tail_chars(text: &str, n: usize) -> String {
    let total = text.chars().count();
    if total <= n {
        return text.to_string();
    }
    let cut: String = text.chars().skip(total - n).collect();
    let cut = match cut.find('\n') {
        Some(i) if i < 200 => cut[i + 1..].to_string(),
        _ => cut,
    };
    format!(
        "[… {} earlier characters not shown]\n{cut}",
        total - cut.chars().count()
    )
}
