//! `slmcode run --plan`: the plan model plans with read-only tools; each step runs as a fresh
//! sub-run of the edit model, focused on its files and checked after it; a plan that stops
//! continues with `--resume` from its first unfinished step. Two model names, so each
//! request's model, tools and messages show which phase and step sent it.

use super::*;

const README: &str = "# app\n";

fn models() -> Vec<Value> {
    vec![
        json!({"id": "plan-model", "object": "model"}),
        json!({"id": "edit-model", "object": "model"}),
    ]
}

fn plan_text(steps: Value) -> Scripted {
    Scripted::Text(json!({ "steps": steps }).to_string())
}

fn plan_run(p: &Project, model: &FakeModel, args: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut all = vec![
        "--plan",
        "--plan-model",
        "plan-model",
        "--edit-model",
        "edit-model",
    ];
    all.extend_from_slice(args);
    let task = if args.contains(&"--resume") {
        ""
    } else {
        "fix total and document it"
    };
    let mut cmd = run_command(p, model, task, &all, env);
    let out = cmd.output().expect("run slmcode");
    ran(out.status.code(), &out.stdout, &out.stderr)
}

fn user_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn the_plan_is_made_reading_then_each_step_runs_fresh_and_focused() {
    let p = Project::new();
    p.write("app.py", APP);
    p.write("README.md", README);
    let model = FakeModel::with_models(
        vec![
            // Phase 1: the plan model reads, then plans.
            read_app(),
            plan_text(json!([
                {"goal": "make total skip None", "files": ["app.py"], "check": ""},
                {"goal": "document total", "files": ["README.md"]}
            ])),
            // Step 1.
            read_app(),
            fix_app(),
            Scripted::final_done("fixed total"),
            // Step 2: an edit outside the step's files is refused; then the step's own.
            Scripted::call("ws_write", json!({"path": "notes.txt", "content": "x\n"})),
            Scripted::call("ws_read", json!({"path": "README.md"})),
            document_readme(),
            Scripted::final_done("documented"),
        ],
        models(),
    );
    let r = plan_run(&p, &model, &[], &[]);
    // What a person saw, kept for the record.
    let _ = std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plan-run.txt"),
        &r.stderr,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.answer["status"], "done", "{}", r.answer);
    assert_eq!(r.answer["steps_done"], 2);
    assert_eq!(r.answer["files_changed"], json!(["README.md", "app.py"]));
    assert_fixed(&p);
    assert!(std::fs::read_to_string(p.path("README.md"))
        .unwrap()
        .contains("skips None"));
    assert!(!p.path("notes.txt").exists());
    let requests = model.requests();
    assert_eq!(requests.len(), 9);
    // Phase 1: the plan model, only tools that change nothing.
    for (i, request) in requests.iter().enumerate().take(2) {
        assert_eq!(request["model"], "plan-model");
        let tools = model.tool_names(i);
        assert!(
            tools.contains(&"ws_read".to_string()) && tools.contains(&"ws_grep".to_string()),
            "{tools:?}"
        );
        for writer in [
            "ws_edit",
            "ws_write",
            "ws_patch",
            "ws_shell",
            "ws_delete",
            "ws_mv",
        ] {
            assert!(!tools.contains(&writer.to_string()), "{tools:?}");
        }
    }
    assert!(user_text(&requests[0]).contains("Plan this task; do not change anything."));
    // Step 1's first request: the edit model, its step marked, its file's outline.
    assert_eq!(requests[2]["model"], "edit-model");
    assert!(model.tool_names(2).contains(&"ws_edit".to_string()));
    let step1 = user_text(&requests[2]);
    assert!(
        step1.contains("Step 1 of 2 of a plan for this task: fix total and document it"),
        "{step1}"
    );
    assert!(
        step1.contains("→ 1. make total skip None [app.py]"),
        "{step1}"
    );
    assert!(
        step1.contains("Outline of app.py:") && step1.contains("total"),
        "{step1}"
    );
    // Step 2's first request: a fresh context — the task, the plan with step 1's outcome in
    // one line, nothing of step 1's turns.
    let messages = requests[5]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    let step2 = user_text(&requests[5]);
    assert!(
        step2.contains("  1. make total skip None [app.py] — done: fixed total"),
        "{step2}"
    );
    assert!(step2.contains("→ 2. document total [README.md]"), "{step2}");
    // The edit outside the step's files was refused, naming them.
    let refused = result_sent(&model, 6);
    assert!(
        refused.contains("outside this task's focus. Only paths matching \"README.md\""),
        "{refused}"
    );
    // Each step's context is smaller than carrying the whole conversation would be.
    let counted = model.counted();
    assert!(counted[5] < counted[4], "{counted:?}");
    // The checklist mirrored the plan: step 2's saved session has step 1 done, itself not.
    let states: Vec<String> = std::fs::read_dir(p.path(".slmcode/runs"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".state.json"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    let step2_todo = json!([
        {"text": "1. make total skip None", "done": true},
        {"text": "2. document total", "done": false}
    ]);
    assert!(
        states
            .iter()
            .any(|s| serde_json::from_str::<Value>(s)
                .is_ok_and(|v| v["session"]["todo"] == step2_todo)),
        "{states:?}"
    );
    // The trajectory records the phases and the steps.
    let id = r.answer["plan_id"].as_str().unwrap();
    let log = std::fs::read_to_string(p.path(&format!(".slmcode/runs/{id}.jsonl"))).unwrap();
    for kind in ["\"plan_phase\"", "\"plan\"", "\"step\"", "\"final\""] {
        assert!(log.contains(kind), "{kind} not in {log}");
    }
}

#[test]
fn a_step_whose_check_still_fails_blocks_the_plan_and_resume_goes_on_from_it() {
    let p = Project::new();
    p.write("app.py", APP);
    p.write("README.md", README);
    p.write(
        "check.py",
        "import app\nassert app.total([1, None, 2]) == 3, 'total must skip None'\n",
    );
    let env = [
        ("SLMCODE_SHELL_ALLOW", "python3 check.py"),
        ("SLMCODE_VERIFY_RETRIES", "1"),
    ];
    let model = FakeModel::with_models(
        vec![
            plan_text(json!([
                {"goal": "make total skip None", "files": ["app.py"], "check": "python3 check.py"},
                {"goal": "document total", "files": ["README.md"], "check": ""}
            ])),
            // Step 1 claims done twice without fixing: the check fails, goes back, fails again.
            Scripted::final_done("fixed"),
            Scripted::final_done("fixed now"),
        ],
        models(),
    );
    let r = plan_run(&p, &model, &[], &env);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.answer["status"], "blocked", "{}", r.answer);
    assert_eq!(r.answer["steps_done"], 0);
    assert!(
        r.answer["notes"]
            .as_str()
            .unwrap()
            .starts_with("step 1 of 2 (make total skip None) ended blocked"),
        "{}",
        r.answer
    );
    // The failed check went back to the step with its output.
    let back = result_sent(&model, 2);
    assert!(
        back.starts_with("The check `python3 check.py` failed")
            && back.contains("total must skip None"),
        "{back}"
    );
    assert!(
        r.stderr.contains("slmcode run --plan --resume"),
        "{}",
        r.stderr
    );
    let id = r.answer["plan_id"].as_str().unwrap().to_string();

    // --resume: no new plan; step 1 again, then step 2.
    let model = FakeModel::with_models(
        vec![
            read_app(),
            fix_app(),
            Scripted::final_done("fixed total"),
            Scripted::final_done("nothing to document"),
        ],
        models(),
    );
    let r = plan_run(&p, &model, &["--resume", &id], &env);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.answer["status"], "done", "{}", r.answer);
    assert_eq!(r.answer["steps_done"], 2);
    assert_eq!(r.answer["plan_id"], id.as_str());
    assert_fixed(&p);
    let first = user_text(&model.requests()[0]);
    assert!(first.contains("Step 1 of 2"), "{first}");
    assert_eq!(model.requests()[0]["model"], "edit-model");
    let later = user_text(&model.requests()[3]);
    assert!(
        later.contains("Step 2 of 2") && later.contains("— done: fixed total"),
        "{later}"
    );
}

#[test]
fn a_plan_that_does_not_fit_the_schema_is_repaired_once() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::with_models(
        vec![
            plan_text(json!([{"goal": "everything", "files": []}])),
            plan_text(json!([{"goal": "make total skip None", "files": ["app.py"]}])),
            read_app(),
            fix_app(),
            Scripted::final_done("fixed"),
        ],
        models(),
    );
    let r = plan_run(&p, &model, &[], &[]);
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_eq!(
        result_sent(&model, 1),
        "Your plan is not valid (step 1 names 0 files; a step changes 1 to 4 files — split it). Reply with only the JSON plan: {\"steps\": [{\"goal\": \"…\", \"files\": [\"path\"], \"check\": \"command or empty\"}]}."
    );
    assert_fixed(&p);
}

/// The same task and edits, planned and not: the prompt tokens of every request (as the test
/// server counts them), written to target/tmp for the record. A step starts from a fresh
/// context; an unplanned run's context only grows.
#[test]
fn a_planned_run_keeps_each_requests_context_small() {
    let edits = || {
        vec![
            read_app(),
            fix_app(),
            Scripted::final_done("fixed total"),
            Scripted::call("ws_read", json!({"path": "README.md"})),
            document_readme(),
            Scripted::final_done("documented"),
        ]
    };
    let p = Project::new();
    p.write("app.py", APP);
    p.write("README.md", README);
    let mut script = vec![plan_text(json!([
        {"goal": "make total skip None", "files": ["app.py"]},
        {"goal": "document total", "files": ["README.md"]}
    ]))];
    script.extend(edits());
    let planned = FakeModel::with_models(script, models());
    let r = plan_run(&p, &planned, &[], &[]);
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);

    let q = Project::new();
    q.write("app.py", APP);
    q.write("README.md", README);
    // Unplanned, the model goes on to the README after its first summary line.
    let mut unplanned_script = edits();
    unplanned_script.remove(2);
    let unplanned = FakeModel::start(unplanned_script);
    let r = run(&q, &unplanned, "fix total and document it");
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);

    let steps = planned.counted();
    let whole = unplanned.counted();
    let record = format!(
        "prompt tokens per request, planned (plan phase, step 1 ×3, step 2 ×3): {steps:?}\nunplanned: {whole:?}\n"
    );
    let _ = std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plan-request-sizes.txt"),
        &record,
    );
    // Each step starts from a fresh context (its first request is smaller than the step
    // before it ended with); unplanned, the context only grows.
    assert!(steps[4] < steps[3], "{record}");
    assert!(whole.windows(2).all(|w| w[0] < w[1]), "{record}");
}

#[test]
fn a_steps_repo_map_holds_its_files_and_their_neighbours_only() {
    let p = Project::new();
    p.write("app.py", APP);
    p.write(
        "report.py",
        "from app import total\n\ndef report(xs):\n    return total(xs)\n",
    );
    p.write("other.py", "def unrelated_helper():\n    return 1\n");
    let model = FakeModel::with_models(
        vec![
            plan_text(json!([{"goal": "make total skip None", "files": ["app.py"]}])),
            Scripted::final_done("looked"),
        ],
        models(),
    );
    let mut cmd = run_command(
        &p,
        &model,
        "fix total; unrelated_helper stays as it is",
        &[
            "--plan",
            "--plan-model",
            "plan-model",
            "--edit-model",
            "edit-model",
        ],
        &[],
    );
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The plan phase's map is the whole project's: the task names unrelated_helper.
    let planning = user_text(&model.requests()[0]);
    assert!(planning.contains("other.py:"), "{planning}");
    // The step's map: app.py and report.py (which calls total), not other.py, though the
    // step's task text names unrelated_helper too.
    let step = user_text(&model.requests()[1]);
    assert!(step.contains("unrelated_helper"), "{step}");
    let map = step
        .split("Repo map")
        .nth(1)
        .unwrap_or_else(|| panic!("no map in {step}"));
    assert!(
        map.contains("app.py:") && map.contains("report.py:"),
        "{map}"
    );
    assert!(!map.contains("other.py"), "{map}");
}
