//! Plan mode in the session: in `/mode plan` a message is planned by the plan model (read-only
//! tools) and the plan is shown; `/go` runs it step by step with the edit model, `/plan edit`
//! changes it in your editor, `/plan drop` discards it. `/undo` after a plan takes back its
//! last step.

use std::sync::PoisonError;

use slmcode_agent::events;
use slmcode_agent::launch::{self, LaunchOptions};
use slmcode_agent::plan::run::{PlanRun, PlanState};
use slmcode_agent::plan::{parse_plan, Plan};
use tokio_util::sync::CancellationToken;

use super::{ask, sink_for, Chat};
use crate::terminal::Paint;

/// A plan waiting for `/go`: the message it plans, and the plan.
pub struct Pending {
    pub task: String,
    pub plan: Plan,
}

impl Chat {
    /// The plan's two roles, set up as a run sets them up: `plan_model` and `edit_model`, or
    /// the session's model.
    fn plan_run(&self) -> Result<PlanRun, String> {
        let current = self.current_model();
        let ws = self.lock_ws();
        let options = |model: String| LaunchOptions {
            stream: self.stream,
            explore: self.explore,
            task: None,
            follows: None,
            model_flag: false,
            role_model: Some(model),
            notices: None,
        };
        let planner = ws.config.plan_model.clone().unwrap_or(current.clone());
        let editor = ws.config.edit_model.clone().unwrap_or(current);
        let say = &mut crate::commands::run::say;
        let plan = self
            .runtime
            .block_on(launch::prepare(&ws, options(planner), say))
            .map_err(|e| e.to_string())?;
        let edit = self
            .runtime
            .block_on(launch::prepare(&ws, options(editor), say))
            .map_err(|e| e.to_string())?;
        drop(ws);
        let (screen, json) = (self.screen.clone(), self.json);
        Ok(PlanRun {
            plan,
            edit,
            workspace: self.workspace.clone(),
            events: Box::new(move || sink_for(screen.clone(), json)),
        })
    }

    /// The stop switch of what runs now (Ctrl-C cancels it).
    fn running(&self) -> CancellationToken {
        let cancel = CancellationToken::new();
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = Some(cancel.clone());
        cancel
    }

    fn stopped(&self) {
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Plans a message (plan mode): the plan model reads, answers with a plan, and the plan
    /// waits for `/go`.
    pub(super) fn make_plan(&mut self, text: String) {
        let Some(message) = self.compose(&text) else {
            return;
        };
        self.last_message = text;
        let run = match self.plan_run() {
            Ok(run) => run,
            Err(e) => return self.say(&e, Paint::Red),
        };
        let cancel = self.running();
        let outcome = self.runtime.block_on(run.plan_phase(&message, cancel));
        self.stopped();
        match outcome {
            Ok(o) => match o.plan.filter(|_| o.answer.status == "done") {
                Some(plan) => {
                    self.show_plan(&plan);
                    self.plan = Some(Pending {
                        task: message,
                        plan,
                    });
                }
                None => self.say(
                    &format!("no plan: the plan phase ended {}", o.answer.status),
                    Paint::Red,
                ),
            },
            Err(e) => self.say(&e.to_string(), Paint::Red),
        }
    }

    fn show_plan(&self, plan: &Plan) {
        self.say(
            &format!(
                "plan ({} steps):\n{}\n/go runs it · /plan edit changes it · /plan drop discards it",
                plan.steps.len(),
                plan.render()
            ),
            Paint::Plain,
        );
    }

    /// `/go`: runs the waiting plan, a fresh focused run of the edit model per step.
    pub(super) fn go(&mut self) {
        let Some(Pending { task, plan }) = self.plan.take() else {
            return self.say(
                "no plan to run: /mode plan, then a message, makes one",
                Paint::Plain,
            );
        };
        let run = match self.plan_run() {
            Ok(run) => run,
            Err(e) => {
                self.plan = Some(Pending { task, plan });
                return self.say(&e, Paint::Red);
            }
        };
        // The steps ask as the session asks.
        let (input, screen, turn, json) = (
            self.input.clone(),
            self.screen.clone(),
            self.turn.clone(),
            self.json,
        );
        let approver = slmcode_agent::run::approver(
            events::sink(sink_for(screen.clone(), json)),
            move |request| ask(&input, &screen, &turn, json, request),
        );
        self.lock_ws().approver = Some(approver);
        let cancel = self.running();
        let state = PlanState::accepted(&task, plan);
        let outcome = self.runtime.block_on(run.run(&task, Some(state), cancel));
        self.stopped();
        match outcome {
            Ok(o) => {
                self.steps_done.extend(o.step_checkpoints);
                let answer = &o.answer;
                let style = if answer.status == "done" {
                    Paint::Bold
                } else {
                    Paint::Red
                };
                self.say(&format!("{} · {}", answer.status, answer.summary), style);
                if !answer.notes.is_empty() {
                    self.say(&answer.notes, Paint::Plain);
                }
                if answer.status != "done" {
                    self.say(
                        &format!("go on with slmcode run --plan --resume {}", o.id),
                        Paint::Dim,
                    );
                }
            }
            Err(e) => self.say(&e.to_string(), Paint::Red),
        }
    }

    /// `/plan`, `/plan edit`, `/plan drop`.
    pub(super) fn plan_command(&mut self, rest: &str) {
        match (rest, &self.plan) {
            (_, None) => self.say(
                "no plan: /mode plan, then a message, makes one",
                Paint::Plain,
            ),
            ("", Some(p)) => self.show_plan(&p.plan.clone()),
            ("drop", Some(_)) => {
                self.plan = None;
                self.say("plan discarded", Paint::Dim);
            }
            ("edit", Some(p)) => match edit_in_editor(&p.plan) {
                Ok(plan) => {
                    self.show_plan(&plan);
                    if let Some(p) = &mut self.plan {
                        p.plan = plan;
                    }
                }
                Err(e) => self.say(&format!("{e}; the plan is as it was"), Paint::Red),
            },
            _ => self.say("/plan, /plan edit or /plan drop", Paint::Plain),
        }
    }

    /// `/undo` right after a plan: its last step's files put back from that step's
    /// checkpoint. `None` when no plan step is there to undo.
    pub(super) fn undo_step(&mut self) -> Option<()> {
        let (label, checkpoint) = self.steps_done.pop()?;
        let restored = match &checkpoint {
            Some(id) => slmcode_aci::checkpoint::restore(&self.lock_ws().jail, id, &[]),
            None => Ok(Vec::new()),
        };
        match restored {
            Ok(lines) if lines.is_empty() => self.say(
                &format!("undid {label}: it had changed no file"),
                Paint::Plain,
            ),
            Ok(lines) => self.say(
                &format!("undid {label}:\n  {}", lines.join("\n  ")),
                Paint::Plain,
            ),
            Err(e) => self.say(&format!("could not undo {label}: {e}"), Paint::Red),
        }
        Some(())
    }
}

/// The plan as JSON in `$VISUAL` / `$EDITOR` (vi when neither is set), read back through the
/// same schema.
fn edit_in_editor(plan: &Plan) -> Result<Plan, String> {
    let file = tempfile::Builder::new()
        .suffix(".json")
        .tempfile()
        .map_err(|e| format!("no temporary file for the plan: {e}"))?;
    let text = serde_json::to_string_pretty(plan).map_err(|e| e.to_string())?;
    std::fs::write(file.path(), text).map_err(|e| e.to_string())?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file.path())
        .status()
        .map_err(|e| format!("the editor `{editor}` did not start: {e}"))?;
    if !status.success() {
        return Err(format!("the editor `{editor}` failed ({status})"));
    }
    let edited = std::fs::read_to_string(file.path()).map_err(|e| e.to_string())?;
    parse_plan(&edited).map_err(|e| format!("the edited plan is not valid ({e})"))
}
