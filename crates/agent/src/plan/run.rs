//! The two phases of a plan-mode run. Phase 1: the plan model, offered only the tools that
//! change nothing, answers with a plan. Phase 2: each step, in order, is a fresh sub-run of the
//! edit model whose context is the task, the plan in one block with this step marked, the
//! earlier steps' outcomes in one line each, a repo map of the step's files and their
//! neighbours, and the step's files' outlines — not the earlier steps' turns. The step may change only its files (the focus mechanism), must read what it
//! edits, and its check (or `verify`) must pass; a step that still fails stops the plan
//! `blocked` with what was done. After each step the plan's state is saved, so `--resume`
//! continues from the first unfinished step.

use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::json;
use slmcode_aci::boundary::layout;
use slmcode_aci::path::{Jail, RelPath};
use slmcode_aci::workspace::TodoItem;
use slmcode_aci::{state, Registry, ToolError, Workspace};
use tokio_util::sync::CancellationToken;

use super::{plan_task, Plan};
use crate::events::{self, Event};
use crate::launch::Launch;
use crate::run::{Agent, FinalAnswer, RunError};
use crate::trajectory::Trajectory;

/// The plan's saved state: what `--resume` continues.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanState {
    version: u32,
    /// The plan run's id (its trajectory is `.slmcode/runs/<id>.jsonl`).
    pub id: String,
    pub task: String,
    pub plan: Plan,
    /// One line per finished step, in order.
    pub outcomes: Vec<String>,
    /// The sub-run of each step that ran, in order.
    pub step_runs: Vec<String>,
    /// `planned`, `running`, `done`, `blocked` or `interrupted`.
    pub status: String,
}

const VERSION: u32 = 1;

fn state_path(id: &str) -> RelPath {
    layout::path(layout::RUNS).join(&format!("{id}.plan.json"))
}

impl PlanState {
    /// The saved plan `id`, or the project's latest when `id` is empty.
    pub fn load(jail: &Jail, id: &str) -> Result<PlanState, ToolError> {
        let id = match id.trim() {
            "" => latest(jail)?.ok_or_else(|| {
                ToolError::refused(
                    slmcode_aci::RefusalClass::NotFound,
                    "there is no plan to continue in this project: start one with slmcode run --plan \"…\"".into(),
                )
            })?,
            given if given.chars().all(|c| c.is_ascii_digit() || c == '-') => given.to_string(),
            given => {
                return Err(ToolError::refused(
                    slmcode_aci::RefusalClass::Args,
                    format!("`{given}` is not a run id (digits and dashes, as slmcode runs list shows)"),
                ))
            }
        };
        state::read_json(jail, &state_path(&id), || {
            format!("there is no plan {id} (slmcode runs list shows the runs; a plan's id is its plan run's)")
        })
    }

    fn save(&self, jail: &Jail) -> Result<(), ToolError> {
        state::write_json(jail, &state_path(&self.id), self)
    }

    /// A plan accepted by the user (the session's `/go`): a new plan run, no step done.
    pub fn accepted(task: &str, plan: Plan) -> PlanState {
        PlanState {
            version: VERSION,
            id: Trajectory::create().id,
            task: task.to_string(),
            plan,
            outcomes: Vec::new(),
            step_runs: Vec::new(),
            status: "planned".into(),
        }
    }

    /// The first step not done.
    pub fn next_step(&self) -> usize {
        self.outcomes.len()
    }
}

/// The latest saved plan's id (ids sort by time).
fn latest(jail: &Jail) -> Result<Option<String>, ToolError> {
    let dir = layout::path(layout::RUNS);
    let entries = match jail.read_dir(&dir) {
        Ok(e) => e,
        Err(slmcode_aci::path::PathError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".plan.json").map(str::to_string))
        .max())
}

/// How a plan-mode run ended.
#[derive(Debug)]
pub struct PlanOutcome {
    pub answer: FinalAnswer,
    /// The plan run's id.
    pub id: String,
    pub plan: Option<Plan>,
    /// Steps done, of the plan's.
    pub done: usize,
    /// The edit attempts of every sub-run, for the bandit.
    pub edit_outcomes: Vec<(crate::evolve::Arm, crate::evolve::EditOutcome)>,
    /// Each finished step's checkpoint session (`None`: it changed nothing), in order: what
    /// undoes that step alone.
    pub step_checkpoints: Vec<(String, Option<String>)>,
}

/// What a plan-mode run is given.
pub struct PlanRun {
    /// The plan model's setup (phase 1).
    pub plan: Launch,
    /// The edit model's setup (each step of phase 2).
    pub edit: Launch,
    pub workspace: Arc<Mutex<Workspace>>,
    /// A fresh front-end sink for each sub-run and for the plan's own lines.
    pub events: SinkMaker,
}

/// Makes a front end's event sink, one per sub-run.
pub type SinkMaker = Box<dyn Fn() -> Box<dyn FnMut(&Event) + Send> + Send + Sync>;

impl PlanRun {
    fn lock(&self) -> std::sync::MutexGuard<'_, Workspace> {
        self.workspace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Plans `task` and runs the plan; or, with `resume`, continues a saved plan from its
    /// first unfinished step.
    pub async fn run(
        self,
        task: &str,
        resume: Option<PlanState>,
        cancel: CancellationToken,
    ) -> Result<PlanOutcome, RunError> {
        let sink = events::sink((self.events)());
        let trajectory = match &resume {
            Some(s) => Trajectory::open(&s.id),
            None => Trajectory::create(),
        };
        let log = |kind: &str, fields: serde_json::Value| {
            let recorded = trajectory.record(&self.lock().jail, kind, fields);
            if let Err(e) = recorded {
                events::emit(&sink, &Event::warning(format!("trajectory: {e}")));
            }
        };
        let mut edit_outcomes = Vec::new();
        let mut state = match resume {
            Some(s) => {
                log("plan_resumed", json!({"from_step": s.next_step() + 1}));
                s
            }
            None => {
                let model = self.plan.settings.model.clone();
                let outcome = self.plan_phase(task, cancel.clone()).await?;
                log(
                    "plan_phase",
                    json!({"model": model, "run_id": outcome.run_id, "status": outcome.answer.status}),
                );
                let Some(plan) = outcome.plan.filter(|_| outcome.answer.status == "done") else {
                    let answer = FinalAnswer {
                        status: if outcome.answer.status == "interrupted" {
                            "interrupted".into()
                        } else {
                            "blocked".into()
                        },
                        summary: "no plan: the plan phase ended without a valid plan".into(),
                        files_changed: Vec::new(),
                        notes: outcome.answer.notes,
                        verified: None,
                    };
                    return Ok(PlanOutcome {
                        answer,
                        id: trajectory.id.clone(),
                        plan: None,
                        done: 0,
                        edit_outcomes,
                        step_checkpoints: Vec::new(),
                    });
                };
                PlanState {
                    version: VERSION,
                    id: trajectory.id.clone(),
                    task: task.to_string(),
                    plan,
                    outcomes: Vec::new(),
                    step_runs: Vec::new(),
                    status: "planned".into(),
                }
            }
        };
        log("plan", json!({"plan": state.plan}));
        events::emit(
            &sink,
            &Event::note(format!(
                "plan {} ({} steps):\n{}",
                state.id,
                state.plan.steps.len(),
                state.plan.render()
            )),
        );
        let save = |state: &PlanState| {
            let saved = state.save(&self.lock().jail);
            if let Err(e) = saved {
                events::emit(
                    &sink,
                    &Event::warning(format!("could not save the plan for --resume: {e}")),
                );
            }
        };
        save(&state);
        let verify = self.edit.settings.verify.clone();
        let total = state.plan.steps.len();
        let mut status = "done".to_string();
        let mut notes = String::new();
        let mut step_checkpoints = Vec::new();
        while state.next_step() < total {
            let i = state.next_step();
            let step = state.plan.steps[i].clone();
            events::emit(
                &sink,
                &Event::note(format!(
                    "step {}/{total}: {} [{}]",
                    i + 1,
                    step.goal,
                    step.files.join(", ")
                )),
            );
            let text = self.step_task(&state, i);
            let mut settings = self.edit.settings.clone();
            settings.task = text;
            settings.map_within = step.files.clone();
            settings.verify = if step.check.is_empty() {
                verify.clone()
            } else {
                Some(step.check.clone())
            };
            let agent = Agent::new(
                self.edit.backend.clone(),
                self.edit.registry.clone(),
                self.workspace.clone(),
                settings,
                self.edit.skills_text.clone(),
                (self.events)(),
            );
            // The step's files are all it may change; what it edits it reads first; the
            // checklist mirrors the plan.
            let focus = {
                let mut ws = self.lock();
                ws.session.forget_reads();
                // Each step's first copies apart, so one step can be undone alone.
                ws.session.checkpoints = slmcode_aci::checkpoint::Checkpoints::default();
                ws.session.todo = checklist(&state.plan, i);
                std::mem::replace(&mut ws.config.focus, step.files.clone())
            };
            state.status = "running".into();
            save(&state);
            let result = agent.run(cancel.clone()).await;
            let checkpoint = {
                let mut ws = self.lock();
                ws.config.focus = focus;
                ws.session.checkpoints.id().map(str::to_string)
            };
            step_checkpoints.push((format!("step {}: {}", i + 1, step.goal), checkpoint));
            let outcome = match result {
                Ok(o) => o,
                Err(e) => {
                    state.status = "blocked".into();
                    save(&state);
                    return Err(e);
                }
            };
            edit_outcomes.extend(outcome.edit_outcomes.iter().cloned());
            let answer = &outcome.answer;
            log(
                "step",
                json!({"step": i + 1, "goal": step.goal, "files": step.files, "run_id": outcome.run_id,
                       "status": answer.status, "summary": answer.summary, "verified": answer.verified}),
            );
            if answer.status != "done" {
                status = answer.status.clone();
                notes = format!(
                    "step {} of {total} ({}) ended {}: {} {}",
                    i + 1,
                    step.goal,
                    answer.status,
                    answer.summary.trim(),
                    answer.notes.trim()
                )
                .trim()
                .to_string();
                state.status = answer.status.clone();
                save(&state);
                break;
            }
            state.step_runs.push(outcome.run_id.clone());
            state
                .outcomes
                .push(format!("done: {}", first_line(&answer.summary, 120)));
            events::emit(
                &sink,
                &Event::note(format!(
                    "step {}/{total} done: {}",
                    i + 1,
                    first_line(&answer.summary, 120)
                )),
            );
            save(&state);
        }
        if status == "done" {
            state.status = "done".into();
            save(&state);
            self.lock().session.todo = checklist(&state.plan, total);
        }
        let files_changed: Vec<String> = self
            .lock()
            .session
            .changed
            .iter()
            .map(|p| p.to_string())
            .collect();
        let done = state.outcomes.len();
        let answer = FinalAnswer {
            status,
            summary: format!(
                "{done} of {total} steps done:\n{}",
                state.plan.block(usize::MAX, &state.outcomes).trim_end()
            ),
            files_changed,
            notes,
            verified: None,
        };
        log("final", json!({"answer": answer, "steps_done": done}));
        Ok(PlanOutcome {
            answer,
            id: state.id.clone(),
            plan: Some(state.plan),
            done,
            edit_outcomes,
            step_checkpoints,
        })
    }

    /// Phase 1: the plan model with the read-only tools, asked for the plan.
    pub async fn plan_phase(
        &self,
        task: &str,
        cancel: CancellationToken,
    ) -> Result<crate::run::Outcome, RunError> {
        let mut settings = self.plan.settings.clone();
        settings.task = plan_task(task);
        settings.plans = true;
        settings.verify = None;
        let registry = self.plan.kit.read_only(settings.arm);
        let agent = Agent::new(
            self.plan.backend.clone(),
            registry,
            self.workspace.clone(),
            settings,
            None,
            (self.events)(),
        );
        agent.run(cancel).await
    }

    /// A step's task: the whole task, the plan with this step marked and the earlier steps'
    /// outcomes, what to do now, and the outlines of the step's files.
    fn step_task(&self, state: &PlanState, i: usize) -> String {
        let step = &state.plan.steps[i];
        let mut text = format!(
            "Step {} of {} of a plan for this task: {}\n\n{}\nDo step {} now: {}. Change only {}; read a file before you edit it. When this step is done, answer with the final JSON.\n",
            i + 1,
            state.plan.steps.len(),
            state.task.trim(),
            state.plan.block(i, &state.outcomes),
            i + 1,
            step.goal,
            step.files.join(", ")
        );
        let registry = Registry::coding();
        let mut ws = self.lock();
        for file in &step.files {
            let outline = registry.call(&mut ws, "ws_outline", &json!({ "path": file }));
            let body = if outline.is_error {
                "(not there yet, or no outline: create or read it)".to_string()
            } else {
                outline.text
            };
            text.push_str(&format!("\nOutline of {file}:\n{}\n", body.trim_end()));
        }
        text
    }
}

/// The checklist a plan's step works under: the steps before it done.
fn checklist(plan: &Plan, current: usize) -> Vec<TodoItem> {
    plan.steps
        .iter()
        .enumerate()
        .map(|(i, s)| TodoItem {
            text: format!("{}. {}", i + 1, s.goal),
            done: i < current,
        })
        .collect()
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_string()
    }
}
