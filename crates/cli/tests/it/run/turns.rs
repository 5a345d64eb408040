//! How the loop handles what a model writes: native and text calls, two calls in a reply, repeats,
//! drifted and reverted edits, truncated replies, steering and repair turns, unknown tools, elided
//! history, skills.

use super::*;

#[test]
fn a_task_solved_with_native_calls() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::Text(
            "Done.\n{\"status\":\"done\",\"summary\":\"total skips None\",\"files_changed\":[\"app.py\"],\"notes\":\"\"}".into(),
        ),
    ]);
    let r = run(&p, &model, "make total skip None");
    assert_done(&r, &["app.py"]);
    assert_eq!(r.answer["summary"], "total skips None");
    assert_fixed(&p);
    // The tools, the system prompt and the streamed protocol were used.
    let first = &model.requests()[0];
    assert_eq!(first["stream"], true);
    assert_eq!(first["model"], "test-model");
    // Every coding tool; search/replace's ws_edit before the other edit tool, which comes last.
    let tools = model.tool_names(0);
    assert_eq!(tools.len(), 15, "{tools:?}");
    let at = |name: &str| tools.iter().position(|t| t == name);
    assert!(at("ws_edit") < at("ws_patch") && tools.last().map(String::as_str) == Some("ws_patch"));
    assert!(first["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("Edit contract"));
    assert!(first["messages"][1]["content"]
        .as_str()
        .unwrap()
        .starts_with("Task: make total skip None"));
    // Each result went back as a tool message answering its call.
    let second = &model.requests()[1];
    let msgs = second["messages"].as_array().unwrap();
    let n = msgs.len();
    assert_eq!(msgs[n - 2]["tool_calls"][0]["id"], "call_0");
    assert_eq!(msgs[n - 1]["role"], "tool");
    assert_eq!(msgs[n - 1]["tool_call_id"], "call_0");
    assert!(msgs[n - 1]["content"]
        .as_str()
        .unwrap()
        .contains("     2|    return sum(xs)"));
    // Progress on stderr, and the trajectory on disk.
    assert!(
        r.stderr.contains("turn 1/30") && r.stderr.contains("→ ws_read"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("tok/s"), "{}", r.stderr);
    // The trajectory, and what a follow-up (--resume) needs.
    let mut runs: Vec<String> = std::fs::read_dir(p.path(".slmcode/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(
        runs[0].ends_with(".jsonl") && runs[1] == runs[0].replace(".jsonl", ".state.json"),
        "{runs:?}"
    );
}

/// Each way a small model writes a tool call as text, the same task solved.
#[test]
fn a_task_solved_with_each_text_format() {
    let edit_args = json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None)"});
    let formats: Vec<(&str, String, String)> = vec![
        (
            "hermes",
            "<tool_call>\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"app.py\"}}\n</tool_call>".into(),
            format!("<tool_call>\n{{\"name\": \"ws_edit\", \"arguments\": {edit_args}}}\n</tool_call>"),
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=ws_read>\n<parameter=path>\napp.py\n</parameter>\n</function>\n</tool_call>".into(),
            "<tool_call>\n<function=ws_edit>\n<parameter=path>\napp.py\n</parameter>\n<parameter=old_str>\n    return sum(xs)\n</parameter>\n<parameter=new_str>\n    return sum(x for x in xs if x is not None)\n</parameter>\n</function>\n</tool_call>".into(),
        ),
        (
            "fenced json",
            "I will read the file first.\n```json\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"app.py\"}}\n```".into(),
            format!("```tool\n{{\"name\": \"ws_edit\", \"arguments\": {edit_args}}}\n```"),
        ),
        (
            "bare json",
            "{\"tool\": \"ws_read\", \"args\": {\"path\": \"app.py\"}}".into(),
            format!("Now the edit: {{\"name\": \"ws_edit\", \"arguments\": {edit_args}}}"),
        ),
        (
            "pythonic",
            "[ws_read(path=\"app.py\")]".into(),
            "[ws_edit(path='app.py', old_str='    return sum(xs)', new_str='    return sum(x for x in xs if x is not None)')]".into(),
        ),
    ];
    for (i, (label, read, edit)) in formats.into_iter().enumerate() {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::start(vec![
            Scripted::Text(read),
            Scripted::Text(edit),
            Scripted::final_done("fixed"),
        ]);
        // Alternate streamed and whole replies.
        let args: &[&str] = if i % 2 == 0 { &[] } else { &["--no-stream"] };
        let r = run_with(&p, &model, "make total skip None", args, &[]);
        assert_done(&r, &["app.py"]);
        assert_eq!(
            std::fs::read_to_string(p.path("app.py")).unwrap(),
            APP_FIXED,
            "{label}: {}",
            r.stderr
        );
        // A text call's result goes back as a user message naming the tool.
        let sent = result_sent(&model, 1);
        assert!(
            sent.starts_with("[ws_read result]\n     1|def total"),
            "{label}: {sent}"
        );
    }
}

#[test]
fn two_calls_in_one_reply_run_only_the_first() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    p.write("b.txt", "two\n");
    let model = FakeModel::start(vec![
        Scripted::Calls(
            String::new(),
            vec![
                ("ws_read".into(), json!({"path": "a.txt"}).to_string()),
                ("ws_delete".into(), json!({"path": "b.txt"}).to_string()),
            ],
        ),
        Scripted::final_done("read a"),
    ]);
    let r = run(&p, &model, "read a.txt");
    assert_done(&r, &[]);
    assert!(p.path("b.txt").exists(), "the second call must not run");
    let req = &model.requests()[1];
    let msgs = req["messages"].as_array().unwrap();
    let assistant = &msgs[msgs.len() - 2];
    assert_eq!(assistant["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "ws_read");
    let sent = result_sent(&model, 1);
    assert!(
        sent.contains("only your first tool call ran; 1 more was dropped"),
        "{sent}"
    );
}

#[test]
fn a_repeated_call_is_caught_by_the_loop_guard() {
    let p = Project::new();
    p.write("app.py", APP);
    let miss = json!({"path": "app.py", "old_str": "return product(xs)", "new_str": "return 0"});
    let model = FakeModel::start(vec![
        read_app(),
        Scripted::call("ws_edit", miss.clone()),
        Scripted::call("ws_edit", miss),
        Scripted::Text(json!({"status": "blocked", "summary": "could not find it", "files_changed": [], "notes": "no product()"}).to_string()),
    ]);
    let r = run(&p, &model, "replace product");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.answer["status"], "blocked");
    assert_eq!(r.answer["files_changed"], json!([]));
    let miss = result_sent(&model, 2);
    assert!(
        miss.contains("not found") && !miss.starts_with("Loop"),
        "{miss}"
    );
    assert!(
        result_sent(&model, 3).starts_with("Loop detected"),
        "{}",
        result_sent(&model, 3)
    );
    assert_eq!(std::fs::read_to_string(p.path("app.py")).unwrap(), APP);
}

#[test]
fn a_drifted_edit_lands_with_its_rung_note() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        // The model lost the indentation of the body it copied, in old_str and new_str.
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "def total(xs):\nreturn sum(xs)", "new_str": "def total(xs):\nreturn sum(x for x in xs if x is not None)"}),
        ),
        Scripted::final_done("fixed"),
    ]);
    let r = run(&p, &model, "make total skip None");
    assert_done(&r, &["app.py"]);
    assert_fixed(&p);
    let sent = result_sent(&model, 2);
    assert!(sent.contains("edited app.py (1 replacement(s))"), "{sent}");
    assert!(
        sent.contains("[matched after normalizing indentation"),
        "{sent}"
    );
}

#[test]
fn a_reverted_edit_is_then_fixed() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None"}),
        ),
        fix_app(),
        Scripted::final_done("fixed after a revert"),
    ]);
    let r = run(&p, &model, "make total skip None");
    assert_done(&r, &["app.py"]);
    assert!(
        result_sent(&model, 2).starts_with("EDIT REVERTED"),
        "{}",
        result_sent(&model, 2)
    );
    assert_fixed(&p);
}

#[test]
fn a_truncated_reply_asks_for_a_shorter_call() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        Scripted::Truncated("<tool_call>\n{\"name\": \"ws_write\", \"arguments\": {\"path\": \"app.py\", \"content\": \"def total(xs):\\n    return".into()),
        read_app(),
        fix_app(),
        Scripted::final_done("fixed"),
    ]);
    let r = run(&p, &model, "make total skip None");
    assert_done(&r, &["app.py"]);
    let sent = result_sent(&model, 1);
    assert!(
        sent.contains("cut off at max_tokens (4096 tokens)") && sent.contains("nothing ran"),
        "{sent}"
    );
    assert_fixed(&p);
}

#[test]
fn a_run_that_ends_on_a_tool_call_gets_one_steering_turn() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::Text(json!({"status": "done", "summary": "edited in time", "files_changed": ["app.py"], "notes": ""}).to_string()),
    ]);
    let r = run_with(
        &p,
        &model,
        "make total skip None",
        &["--max-turns", "2"],
        &[],
    );
    assert_done(&r, &["app.py"]);
    assert_eq!(r.answer["summary"], "edited in time");
    let steering = &model.requests()[2];
    // The same tools as every request (the prompt cache holds); the words say not to call.
    assert_eq!(
        steering.get("tools"),
        model.requests()[1].get("tools"),
        "the steering turn offers the same tools"
    );
    let last = steering["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last.starts_with("You are out of turns"), "{last}");
    // The budget warning appeared when few turns were left.
    let first_msgs = model.requests()[0]["messages"].as_array().unwrap().clone();
    assert!(first_msgs.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("You have 2 turns left"));
}

#[test]
fn an_invalid_final_answer_gets_one_repair_turn() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::text("All done, the code is fine."),
        Scripted::final_done("nothing to change"),
    ]);
    let r = run(&p, &model, "check the code");
    assert_done(&r, &[]);
    assert_eq!(r.answer["summary"], "nothing to change");
    assert!(
        result_sent(&model, 1).contains("Your final answer is not valid"),
        "{}",
        result_sent(&model, 1)
    );
}

#[test]
fn an_unknown_tool_name_gets_the_list() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::text("<tool_call>{\"name\": \"fetch_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"),
        Scripted::final_done("gave up on fetch_weather"),
    ]);
    let r = run(&p, &model, "read a.txt");
    assert_done(&r, &[]);
    let sent = result_sent(&model, 1);
    assert!(
        sent.contains("There is no tool named \"fetch_weather\". The tools are: ws_read, ws_write"),
        "{sent}"
    );
}

#[test]
fn old_tool_results_are_elided_and_calls_keep_their_results() {
    let p = Project::new();
    let big: String = (1..=110)
        .map(|i| format!("line {i} of a long file with some words on it\n"))
        .collect();
    for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        p.write(name, &big);
    }
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "a.txt"})),
        Scripted::call("ws_read", json!({"path": "b.txt"})),
        Scripted::call("ws_read", json!({"path": "c.txt"})),
        Scripted::call("ws_read", json!({"path": "d.txt"})),
        Scripted::final_done("read them"),
    ]);
    let r = run_with(
        &p,
        &model,
        "read the files",
        &[],
        &[("SLMCODE_CONTEXT_WINDOW", "4096")],
    );
    assert_done(&r, &[]);
    let last = model.requests().last().unwrap().clone();
    let msgs = last["messages"].as_array().unwrap();
    let tool_msgs: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 4, "every call keeps its result");
    let first = tool_msgs[0]["content"].as_str().unwrap();
    assert!(
        first.starts_with("[elided to save context: ws_read a.txt → ok: "),
        "{first}"
    );
    let newest = tool_msgs[3]["content"].as_str().unwrap();
    assert!(
        newest.contains("     1|line 1 of a long file"),
        "the newest result stays whole"
    );
    // Every tool message answers the assistant call right before it.
    for (i, m) in msgs.iter().enumerate() {
        if m["role"] == "tool" {
            assert_eq!(msgs[i - 1]["tool_calls"][0]["id"], m["tool_call_id"]);
        }
    }
    assert!(
        r.stderr.contains("old tool result(s) elided"),
        "{}",
        r.stderr
    );
}

#[test]
fn skills_are_cards_and_ws_skill_gives_the_body() {
    let p = Project::new();
    p.write(
        ".slmcode/skills/python-style/SKILL.md",
        "---\nname: python-style\ndescription: how this project writes Python\ntriggers: [python]\n---\nUse four spaces. Prefer generator expressions.\n",
    );
    p.write(
        ".slmcode/skills/release/SKILL.md",
        "---\nname: release\ndescription: how to cut a release\ntriggers: [release]\n---\nBump the version first.\n",
    );
    let model = FakeModel::start(vec![
        Scripted::call("ws_skill", json!({"name": "release"})),
        Scripted::final_done("read the skill"),
    ]);
    let r = run(&p, &model, "tidy the python helpers");
    assert_done(&r, &[]);
    let first = model.requests()[0].clone();
    let task = first["messages"][1]["content"].as_str().unwrap();
    assert!(
        task.contains("- python-style: how this project writes Python\n    Use four spaces."),
        "{task}"
    );
    assert!(
        task.contains("Other skills (ws_skill {\"name\": …} shows one): release"),
        "{task}"
    );
    assert!(!task.contains("Bump the version"), "{task}");
    let tools = model.tool_names(0);
    assert_eq!(tools.last().map(String::as_str), Some("ws_skill"));
    assert!(
        result_sent(&model, 1).contains("Bump the version first."),
        "{}",
        result_sent(&model, 1)
    );
}

/// Local servers reuse the cached prompt of a shared prefix: every request extends the one
/// before it — calls, results, repairs and the turns-left warnings included — as long as no
/// compaction ran. Streamed and whole.
#[test]
fn each_request_extends_the_previous_one() {
    for args in [
        &["--max-turns", "5"][..],
        &["--max-turns", "5", "--no-stream"][..],
    ] {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::start(vec![
            read_app(),
            // A text call and a broken one, so every kind of turn is in the history.
            Scripted::text("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"app.py\", \"offset\": 2}}</tool_call>"),
            Scripted::text("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": }</tool_call>"),
            fix_app(),
            Scripted::final_done("fixed"),
        ]);
        let r = run_with(&p, &model, "make total skip None", args, &[]);
        assert_done(&r, &["app.py"]);
        let requests = model.requests();
        assert_eq!(requests.len(), 5);
        for pair in requests.windows(2) {
            let (before, after) = (
                pair[0]["messages"].as_array().unwrap(),
                pair[1]["messages"].as_array().unwrap(),
            );
            assert!(
                after.len() > before.len() && after[..before.len()] == before[..],
                "{args:?}: a request does not extend the previous one:\n{}\n---\n{}",
                serde_json::to_string_pretty(before).unwrap(),
                serde_json::to_string_pretty(after).unwrap()
            );
            assert_eq!(pair[0]["tools"], pair[1]["tools"], "{args:?}");
        }
        // The warnings are in it.
        let last = requests[4]["messages"].as_array().unwrap();
        assert!(
            last.iter().any(|m| m["content"]
                .as_str()
                .is_some_and(|c| c.contains("turns left"))),
            "{args:?}"
        );
    }
}
