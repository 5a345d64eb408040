//! `slmcode chat` with stdin not a terminal: one message a line in, the events as JSON lines
//! out — the scripting face of the session, and the quickest way to check what it does.

use super::*;

#[test]
fn messages_run_their_turns_and_undo_puts_one_back() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::final_done("fixed"),
        Scripted::call("ws_write", json!({"path": "notes.txt", "content": "new\n"})),
        Scripted::final_done("noted"),
        Scripted::final_done("nothing more"),
    ]);
    let r = piped(
        &p,
        &model,
        &[],
        &[
            "make total() skip None",
            "write a note",
            "/diff",
            "/undo",
            "/diff",
            "what now?",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // Two messages ran to their answers, each its turns, calls and results on the stream.
    let finals: Vec<&str> = r
        .of("final")
        .iter()
        .filter_map(|e| e["answer"]["summary"].as_str())
        .collect();
    assert_eq!(finals, vec!["fixed", "noted", "nothing more"]);
    let changed: Vec<&str> = r
        .of("file_changed")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(changed, vec!["app.py", "notes.txt"]);
    // /diff showed both files before the undo, only app.py after it.
    let out = r.output();
    let (before, after) = out.split_once("undid 1 message(s)").expect(&out);
    assert!(
        before.contains("+new") && before.contains("+    return sum(x for x"),
        "{before}"
    );
    assert!(
        !after.contains("+new") && after.contains("+    return sum(x for x"),
        "{after}"
    );
    // The note is gone, app.py keeps the first message's fix, byte for byte.
    assert!(!p.path("notes.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        APP_FIXED
    );
    // The next request's history has the first message's turns, not the undone one's.
    let last = model.requests().len() - 1;
    let users = user_messages(&model, last);
    assert!(users.iter().any(|m| m.contains("what now?")), "{users:?}");
    assert!(
        !users.iter().any(|m| m.contains("write a note")),
        "{users:?}"
    );
    let history = model.requests()[last]["messages"].to_string();
    assert!(
        history.contains("skip None") && !history.contains("notes.txt"),
        "{history}"
    );
}

#[test]
fn a_json_line_carries_a_message_with_newlines() {
    let p = Project::new();
    let model = FakeModel::start(vec![Scripted::final_done("ok")]);
    let r = piped(
        &p,
        &model,
        &[],
        &[r#"{"message": "first line\nsecond line"}"#],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let users = user_messages(&model, 0);
    assert!(
        users.iter().any(|m| m.contains("first line\nsecond line")),
        "{users:?}"
    );
}

#[test]
fn bang_runs_a_command_through_the_policy_and_bang_bang_gives_it_to_the_model() {
    let p = Project::new();
    let model = FakeModel::start(vec![Scripted::final_done("seen")]);
    let r = piped(
        &p,
        &model,
        &[],
        &[
            "!echo $(id)",
            "!!echo hello-from-the-user",
            "what did it print?",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out = r.output();
    // The policy refuses a command substitution, as it would for the model.
    assert!(out.contains("$ echo $(id)\nws_shell refused"), "{out}");
    assert!(out.contains("hello-from-the-user"), "{out}");
    let users = user_messages(&model, 0);
    assert!(
        users
            .iter()
            .any(|m| m.contains("[I ran `echo hello-from-the-user`:]")
                && m.contains("what did it print?")),
        "{users:?}"
    );
    // The refused one never reached the model.
    assert!(!users.iter().any(|m| m.contains("$(id)")), "{users:?}");
}

#[test]
fn an_at_path_attaches_the_files_outline_and_a_missing_one_sends_nothing() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![Scripted::final_done("ok")]);
    let r = piped(
        &p,
        &model,
        &[],
        &["look at @nothere.py please", "look at @app.py please"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.output().contains("@nothere.py: "), "{}", r.output());
    assert!(r.output().contains("nothing was sent"), "{}", r.output());
    assert_eq!(model.requests().len(), 1);
    let users = user_messages(&model, 0);
    assert!(
        users
            .iter()
            .any(|m| m.contains("[@app.py]") && m.contains("total")),
        "{users:?}"
    );
    assert!(!users.iter().any(|m| m.contains("nothere")), "{users:?}");
}

#[test]
fn an_asked_command_waits_for_the_answer_and_no_carries_the_reason() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::call("ws_shell", json!({"command": "echo refused-by-user"})),
        Scripted::call("ws_shell", json!({"command": "echo allowed-once"})),
        Scripted::call("ws_shell", json!({"command": "ls -a"})),
        Scripted::call("ws_shell", json!({"command": "ls -la"})),
        Scripted::final_done("done"),
    ]);
    let r = piped(
        &p,
        &model,
        &["--mode", "ask"],
        &["list the files", "n use the editor instead", "y", "a"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let results: Vec<&str> = r
        .of("result")
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(
        results[0].contains("the user said no") && !results[0].contains("\nrefused-by-user"),
        "{}",
        results[0]
    );
    assert!(results[1].starts_with("allowed-once"), "{}", results[1]);
    assert!(results[2].contains("[exit code 0]"), "{}", results[2]);
    assert!(results[3].contains("[exit code 0]"), "{}", results[3]);
    // The reason reached the model in the refusal.
    let refusal = model.requests()[1]["messages"].to_string();
    assert!(refusal.contains("use the editor instead"), "{refusal}");
    // Asked three times: the fourth was covered by "always" (`ls`).
    assert_eq!(r.of("approval").len(), 3, "{:?}", r.events);
    let approved: Vec<(bool, bool)> = r
        .of("approved")
        .iter()
        .map(|e| (e["allowed"] == true, e["always"] == true))
        .collect();
    assert_eq!(
        approved,
        vec![(false, false), (true, false), (true, true), (true, true)]
    );
}

#[test]
fn review_mode_asks_for_each_change_and_a_no_leaves_the_file() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::call("ws_write", json!({"path": "notes.txt", "content": "new\n"})),
        Scripted::final_done("done"),
    ]);
    let r = piped(
        &p,
        &model,
        &["--mode", "review"],
        &["fix it", "e", "y", "n not now"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        APP_FIXED
    );
    assert!(!p.path("notes.txt").exists());
    // Nothing was staged: the answer was given inline.
    assert!(
        !p.path(".slmcode/pending").exists()
            || std::fs::read_dir(p.path(".slmcode/pending"))
                .unwrap()
                .next()
                .is_none()
    );
    let asked = r.of("approval");
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0]["request"]["kind"], "change");
    assert!(asked[0]["request"]["diff"]
        .as_str()
        .unwrap()
        .contains("+    return sum(x for x"));
    // "e" explained before the answer.
    assert!(r.output().contains("checkpointed first"), "{}", r.output());
    let refusal = model.requests()[3]["messages"].to_string();
    assert!(refusal.contains("not now"), "{refusal}");
}

#[test]
fn model_switches_the_next_request_and_plan_mode_plans_with_only_reading() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::with_models(
        vec![
            Scripted::final_done("first"),
            // The plan phase: a write is not offered, so it is refused; then the plan.
            Scripted::call("ws_write", json!({"path": "plan.txt", "content": "x\n"})),
            Scripted::text(
                json!({"steps": [{"goal": "make total skip None", "files": ["app.py"]}]})
                    .to_string(),
            ),
        ],
        vec![
            json!({"id": "test-model", "object": "model"}),
            json!({"id": "other-model", "object": "model"}),
        ],
    );
    let r = piped(
        &p,
        &model,
        &[],
        &[
            "hello",
            "/model other-model",
            "/mode plan",
            "how would you fix it?",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let requests = model.requests();
    assert_eq!(requests[0]["model"], "test-model");
    // The plan model defaults to the session's model, switched by /model.
    assert_eq!(requests[1]["model"], "other-model");
    assert!(r.output().contains("model other-model"), "{}", r.output());
    // Plan mode: only tools that change nothing; a write called anyway changes nothing.
    let offered = model.tool_names(1);
    assert!(offered.contains(&"ws_read".to_string()), "{offered:?}");
    for writer in ["ws_edit", "ws_write", "ws_shell", "ws_patch", "ws_delete"] {
        assert!(!offered.contains(&writer.to_string()), "{offered:?}");
    }
    let users = user_messages(&model, 1);
    assert!(
        users
            .iter()
            .any(|m| m.contains("Plan this task; do not change anything.")),
        "{users:?}"
    );
    assert!(!p.path("plan.txt").exists());
    assert!(
        r.output()
            .contains("plan (1 steps):\n1. make total skip None [app.py]\n/go runs it"),
        "{}",
        r.output()
    );
    assert_eq!(std::fs::read_to_string(p.path("app.py")).unwrap(), APP);
}

#[test]
fn a_plan_is_edited_run_with_go_and_its_last_step_undone() {
    let p = Project::new();
    p.write("app.py", APP);
    p.write("README.md", "# app\n");
    let model = FakeModel::start(vec![
        Scripted::text(
            json!({"steps": [
                {"goal": "make total skip None", "files": ["app.py"]},
                {"goal": "document total", "files": ["README.md"]}
            ]})
            .to_string(),
        ),
        read_app(),
        fix_app(),
        Scripted::final_done("fixed total"),
        Scripted::call("ws_read", json!({"path": "README.md"})),
        document_readme(),
        Scripted::final_done("documented"),
    ]);
    let mut cmd = chat_command(&p, &model, &[]);
    cmd.env(
        "EDITOR",
        "sed -i 's/document total/document total in the README/'",
    );
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"/mode plan\nfix total and document it\n/plan edit\n/go\n/undo\n/go\n")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "output")
        .filter_map(|e| e["text"].as_str().map(str::to_string))
        .collect();
    let said = said.join("\n");
    // The edited plan is the one that ran.
    assert!(
        said.contains("2. document total in the README [README.md]"),
        "{said}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 7);
    let step2: String = user_messages(&model, 4).join("\n");
    assert!(
        step2.contains("Do step 2 now: document total in the README."),
        "{step2}"
    );
    assert!(said.contains("done · 2 of 2 steps done"), "{said}");
    // /undo took back step 2 alone; step 1's fix stays.
    assert!(
        said.contains("undid step 2: document total in the README"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("README.md")).unwrap(),
        "# app\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        APP_FIXED
    );
    // The plan ran once: /go after it has nothing to run.
    assert!(said.contains("no plan to run"), "{said}");
}

#[test]
fn a_session_is_a_run_that_resumes_and_run_resume_continues() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::final_done("first answer"),
        Scripted::final_done("second answer"),
        Scripted::final_done("third answer"),
    ]);
    let first = piped(&p, &model, &[], &["remember the word kumquat"]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let id = first.of("started")[0]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.output().contains(&format!("slmcode --resume {id}")));
    // `slmcode chat --resume` (the last run) carries the conversation on.
    let second = piped(&p, &model, &["--resume"], &["what was the word?"]);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    let history = model.requests()[1]["messages"].to_string();
    assert!(
        history.contains("kumquat") && history.contains("first answer"),
        "{history}"
    );
    // And `slmcode run --resume ID` works on a session's run.
    let out = bin()
        .args([
            "run",
            "--resume",
            &id,
            "and again?",
            "--json",
            "--endpoint",
            &model.url,
            "--root",
        ])
        .arg(p.root())
        .env("SLMCODE_RETRY_BASE_MS", "1")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let history = model.requests()[2]["messages"].to_string();
    assert!(history.contains("kumquat"), "{history}");
}

#[test]
fn commands_answer_without_a_conversation_and_unknown_ones_say_so() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![]);
    let r = piped(
        &p,
        &model,
        &[],
        &[
            "/undo",
            "/tokens",
            "/diff",
            "/verify",
            "/nonsense",
            "/add app.py missing.py",
            "/drop",
            "/help",
            "/exit",
            "never sent",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out = r.output();
    for said in [
        "nothing to undo",
        "nothing in the context yet",
        "no changes yet",
        "no verify command",
        "/nonsense is not a command",
        "focus: app.py",
        "missing.py: ",
        "focus: none",
        "/undo",
    ] {
        assert!(out.contains(said), "{said:?} not in:\n{out}");
    }
    assert!(model.requests().is_empty());
}

#[test]
fn tokens_map_compact_clear_focus_verify_and_runs() {
    let p = Project::new();
    p.write("app.py", APP);
    let big: String = (0..150).map(|i| format!("LIMIT_{i} = {i}\n")).collect();
    p.write("limits.py", big);
    let model = FakeModel::with_models(
        vec![
            Scripted::call("ws_read", json!({"path": "limits.py"})),
            Scripted::call("ws_read", json!({"path": "limits.py", "offset": 50})),
            Scripted::call("ws_read", json!({"path": "limits.py", "offset": 100})),
            Scripted::final_done("read it"),
            Scripted::final_done("fresh start"),
        ],
        vec![
            json!({"id": "test-model", "object": "model"}),
            json!({"id": "other-model", "object": "model"}),
        ],
    );
    let r = piped(
        &p,
        &model,
        &["--verify", "echo verified-ok"],
        &[
            "/add app.py",
            "read the total function",
            "/tokens",
            "/compact",
            "/map",
            "/model",
            "/verify",
            "/runs",
            "/drop",
            "/clear",
            "hello again",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out = r.output();
    // /add told the model which files to focus on.
    let users = user_messages(&model, 0);
    assert!(
        users
            .iter()
            .any(|m| m.contains("[files to focus on: app.py]")),
        "{users:?}"
    );
    // /tokens: where the context goes.
    for part in [
        "system prompt",
        "tool results",
        "tool definitions",
        "context window",
    ] {
        assert!(out.contains(part), "{part} not in:\n{out}");
    }
    // /compact elided the old results (the last two stay).
    let compacted = r.of("compacted");
    assert_eq!(compacted.len(), 1, "{out}");
    assert!(compacted[0]["after"].as_u64() < compacted[0]["before"].as_u64());
    // /map, /model, /verify, /runs.
    assert!(out.contains("app.py") && out.contains("def total"), "{out}");
    assert!(
        out.contains("now: test-model") && out.contains("other-model"),
        "{out}"
    );
    assert!(out.contains("$ echo verified-ok\nverified-ok"), "{out}");
    let id = r.of("started")[0]["run_id"].as_str().unwrap().to_string();
    assert!(out.contains(&id), "{out}");
    // /clear: a new conversation, its own run, nothing of the old one in its history.
    assert!(out.contains("new conversation"), "{out}");
    let starts = r.of("started");
    assert_eq!(starts.len(), 2);
    assert_ne!(starts[1]["run_id"], starts[0]["run_id"]);
    let last = model.requests().len() - 1;
    let history = model.requests()[last]["messages"].to_string();
    assert!(
        history.contains("hello again") && !history.contains("read the total"),
        "{history}"
    );
    assert!(!history.contains("files to focus on"), "{history}");
}
