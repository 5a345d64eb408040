//! Plan mode: a small model does a big task in small steps. Phase 1 asks the plan model, with
//! only the tools that change nothing, for a plan as JSON — steps, each with its goal, the few
//! files it may change and how to check it — validated here and repaired once. Phase 2
//! ([`run`]) runs each step as a fresh sub-run of the edit model, focused on the step's files,
//! checked after it, in order.

pub mod run;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::toolcall;

/// The most steps a plan may have, and files a step may change: a step is what a small
/// context holds.
pub const MAX_STEPS: usize = 12;
pub const MAX_STEP_FILES: usize = 4;

/// A plan, as the model gave it and the schema allows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub steps: Vec<Step>,
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// What the step achieves, in a sentence.
    pub goal: String,
    /// The files it may change (project-relative; new files allowed).
    pub files: Vec<String>,
    /// The command that checks it (empty: the run's `verify`, or none).
    #[serde(default)]
    pub check: String,
}

/// Reads a plan from a reply: the first JSON object with `steps` (in a fence or after prose;
/// never in the reasoning), checked against the schema. The error says what to fix.
pub fn parse_plan(text: &str) -> Result<Plan, String> {
    let (text, _) = toolcall::split_reasoning(text);
    toolcall::first_object(&text, |value, _| plan_from(&value))
        .unwrap_or_else(|| Err("there is no JSON object in the reply".into()))
}

fn plan_from(value: &Value) -> Result<Plan, String> {
    let steps = value["steps"]
        .as_array()
        .ok_or("\"steps\" is missing or not a list")?;
    if steps.is_empty() {
        return Err("\"steps\" is empty: a plan has at least one step".into());
    }
    if steps.len() > MAX_STEPS {
        return Err(format!(
            "the plan has {} steps; at most {MAX_STEPS} — merge small ones",
            steps.len()
        ));
    }
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let n = i + 1;
        let goal = s["goal"]
            .as_str()
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .ok_or(format!("step {n} has no \"goal\""))?;
        let files: Vec<String> = s["files"]
            .as_array()
            .ok_or(format!("step {n} has no \"files\" list"))?
            .iter()
            .map(|f| {
                f.as_str()
                    .map(|f| f.trim().trim_start_matches("./").to_string())
            })
            .collect::<Option<Vec<_>>>()
            .ok_or(format!("step {n}'s \"files\" must be paths (strings)"))?;
        if files.is_empty() || files.len() > MAX_STEP_FILES {
            return Err(format!(
                "step {n} names {} files; a step changes 1 to {MAX_STEP_FILES} files — split it",
                files.len()
            ));
        }
        if let Some(bad) = files
            .iter()
            .find(|f| f.is_empty() || f.starts_with('/') || f.split('/').any(|c| c == ".."))
        {
            return Err(format!(
                "step {n}'s file \"{bad}\" is not a path inside the project"
            ));
        }
        let check = match &s["check"] {
            Value::String(c) => c.trim().to_string(),
            Value::Null => String::new(),
            _ => return Err(format!("step {n}'s \"check\" must be a command (a string)")),
        };
        out.push(Step {
            goal: goal.to_string(),
            files,
            check,
        });
    }
    Ok(Plan { steps: out })
}

impl Plan {
    /// The plan in one short block, step `current` (0-based) marked, the steps before it
    /// with their outcome in one line each.
    pub fn block(&self, current: usize, outcomes: &[String]) -> String {
        let mut text = String::from("Plan:\n");
        for (i, s) in self.steps.iter().enumerate() {
            let mark = if i == current { "→" } else { " " };
            text.push_str(&format!(
                "{mark} {}. {} [{}]",
                i + 1,
                s.goal,
                s.files.join(", ")
            ));
            if let Some(o) = outcomes.get(i) {
                text.push_str(&format!(" — {o}"));
            }
            text.push('\n');
        }
        text
    }

    /// The plan for a person: a numbered line per step, its files and its check.
    pub fn render(&self) -> String {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let check = if s.check.is_empty() {
                    String::new()
                } else {
                    format!(" · check: {}", s.check)
                };
                format!("{}. {} [{}]{check}", i + 1, s.goal, s.files.join(", "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The task of the plan phase: plan, do not change anything, answer with this JSON.
pub fn plan_task(task: &str) -> String {
    format!(
        "Plan this task; do not change anything. Read what you need with the tools (they only read), then answer with only a JSON plan: {{\"steps\": [{{\"goal\": \"one change, in a sentence\", \"files\": [\"the 1 to {MAX_STEP_FILES} files this step changes\"], \"check\": \"a command that shows the step works, or empty\"}}]}}. Each step is small: one change a short context can hold, in the order they must be made; at most {MAX_STEPS} steps.\n\nTask: {}",
        task.trim()
    )
}

/// What the plan model is told when its plan does not fit the schema.
pub fn plan_repair_text(why: &str) -> String {
    format!(
        "Your plan is not valid ({why}). Reply with only the JSON plan: {{\"steps\": [{{\"goal\": \"…\", \"files\": [\"path\"], \"check\": \"command or empty\"}}]}}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_in_a_fence_after_prose_is_read() {
        let plan = parse_plan(
            "Here is the plan:\n```json\n{\"steps\": [{\"goal\": \"skip None\", \"files\": [\"./app.py\"], \"check\": \"pytest -q\"}, {\"goal\": \"document it\", \"files\": [\"README.md\"]}]}\n```",
        )
        .unwrap();
        assert_eq!(plan.steps.len(), 2);
        assert_eq!(plan.steps[0].files, vec!["app.py"]);
        assert_eq!(plan.steps[1].check, "");
        assert_eq!(
            plan.render(),
            "1. skip None [app.py] · check: pytest -q\n2. document it [README.md]"
        );
        assert_eq!(
            plan.block(1, &["done".into()]),
            "Plan:\n  1. skip None [app.py] — done\n→ 2. document it [README.md]\n"
        );
    }

    #[test]
    fn what_the_schema_refuses_says_what_to_fix() {
        let err = |t: &str| parse_plan(t).unwrap_err();
        assert!(err("{\"steps\": []}").contains("at least one step"));
        assert!(err("{\"steps\": [{\"files\": [\"a\"]}]}").contains("step 1 has no \"goal\""));
        assert!(err("{\"steps\": [{\"goal\": \"x\", \"files\": []}]}").contains("1 to 4 files"));
        assert!(
            err("{\"steps\": [{\"goal\": \"x\", \"files\": [\"../etc/passwd\"]}]}")
                .contains("not a path inside the project")
        );
        assert!(
            err("{\"steps\": [{\"goal\": \"x\", \"files\": [\"a\"], \"check\": 3}]}")
                .contains("must be a command")
        );
        assert!(err("no json here").contains("no JSON object"));
        let many = format!(
            "{{\"steps\": [{}]}}",
            vec!["{\"goal\": \"x\", \"files\": [\"a\"]}"; 13].join(",")
        );
        assert!(err(&many).contains("at most 12"));
    }
}
