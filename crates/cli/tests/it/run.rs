//! `slmcode run` against a real HTTP server in the test that speaks the OpenAI protocol and
//! replays scripted model replies (streamed and whole). Each test checks the files on disk and
//! the final JSON, not only that the run ended.

use crate::common::{bin, Project};
use crate::openai::{FakeModel, Scripted};
use serde_json::{json, Value};

/// What one `slmcode run` did.
struct Ran {
    code: Option<i32>,
    answer: Value,
    stderr: String,
}

fn run_with(
    p: &Project,
    model: &FakeModel,
    task: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Ran {
    let mut cmd = bin();
    // A fresh learned state each run, and no exploration: these tests script search/replace.
    let data = tempfile::tempdir().expect("data dir");
    cmd.env("XDG_DATA_HOME", data.path());
    cmd.args([
        "run",
        task,
        "--json",
        "--no-explore",
        "--endpoint",
        &model.url,
        "--root",
    ])
    .arg(p.root())
    .args(args)
    .env("SLMCODE_RETRY_BASE_MS", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run slmcode");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    Ran {
        code: out.status.code(),
        answer: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

fn run(p: &Project, model: &FakeModel, task: &str) -> Ran {
    run_with(p, model, task, &[], &[])
}

const APP: &str = "def total(xs):\n    return sum(xs)\n";
const APP_FIXED: &str = "def total(xs):\n    return sum(x for x in xs if x is not None)\n";

/// app.py holds the fixed code.
fn assert_fixed(p: &Project) {
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        APP_FIXED
    );
}

/// The model reads app.py.
fn read_app() -> Scripted {
    Scripted::call("ws_read", json!({"path": "app.py"}))
}

/// The model makes the edit that turns APP into APP_FIXED.
fn fix_app() -> Scripted {
    Scripted::call(
        "ws_edit",
        json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None)"}),
    )
}

/// The text of the message the harness sent back after call number `n` (1-based), found in
/// the request that followed it.
fn result_sent(model: &FakeModel, n: usize) -> String {
    let req = &model.requests()[n];
    let last = req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool" || m["role"] == "user")
        .unwrap();
    last["content"].as_str().unwrap().to_string()
}

fn assert_done(r: &Ran, files: &[&str]) {
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_eq!(r.answer["files_changed"], json!(files), "{}", r.stderr);
}

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
    // The coding tools with one edit tool (search/replace: ws_edit, not ws_patch).
    let tools = model.tool_names(0);
    assert_eq!(tools.len(), 12, "{tools:?}");
    assert!(tools.iter().any(|t| t == "ws_edit") && !tools.iter().any(|t| t == "ws_patch"));
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
    let runs = std::fs::read_dir(p.path(".slmcode/runs")).unwrap().count();
    assert_eq!(runs, 1);
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
    assert!(
        steering.get("tools").is_none(),
        "no tools offered in the steering turn"
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
fn an_unreachable_server_is_one_clear_error() {
    let p = Project::new();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = bin()
        .args(["run", "anything", "--endpoint", &url, "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("no model server answers at {url}")),
        "{err}"
    );
    assert!(
        err.contains("ollama serve") && err.contains("--endpoint"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn transient_errors_are_retried_and_client_errors_are_not() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::Status(503, "loading model".into()),
        Scripted::Status(429, "slow down".into()),
        Scripted::final_done("ok"),
    ]);
    let r = run(&p, &model, "nothing");
    assert_done(&r, &[]);
    assert_eq!(model.requests().len(), 3);

    let model = FakeModel::start(vec![Scripted::Status(
        400,
        "{\"error\":{\"message\":\"bad request shape\"}}".into(),
    )]);
    let r = run(&p, &model, "nothing");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("refused the request (400): bad request shape"),
        "{}",
        r.stderr
    );
    assert_eq!(model.requests().len(), 1);

    let model = FakeModel::start(vec![Scripted::Status(
        400,
        "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens\"}}".into(),
    )]);
    let r = run(&p, &model, "nothing");
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("does not fit the model's context")
            && r.stderr.contains("OLLAMA_CONTEXT_LENGTH"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_prompt_the_server_cut_is_reported() {
    let p = Project::new();
    p.write("AGENTS.md", "Be careful.\n".repeat(300));
    let model = FakeModel::start(vec![Scripted::TextWithPromptTokens(
        json!({"status": "done", "summary": "s", "files_changed": [], "notes": ""}).to_string(),
        512,
    )]);
    let r = run(&p, &model, "nothing");
    assert_done(&r, &[]);
    assert!(
        r.stderr.contains("the server counted 512 prompt tokens"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("OLLAMA_CONTEXT_LENGTH"), "{}", r.stderr);
    // The project's instructions were in the first message.
    let first = model.requests()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.contains("From AGENTS.md:\nBe careful."), "{first}");
}

#[test]
fn the_api_key_is_sent_but_never_logged() {
    let p = Project::new();
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("slmcode");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.yaml"), "api_key_env: TEST_MODEL_KEY\n").unwrap();
    let model = FakeModel::start(vec![Scripted::final_done("ok")]);
    let key = "sk-test-4f9a2b7c1d";
    let r = run_with(
        &p,
        &model,
        "nothing",
        &[],
        &[
            ("XDG_CONFIG_HOME", home.path().to_str().unwrap()),
            ("TEST_MODEL_KEY", key),
        ],
    );
    assert_done(&r, &[]);
    assert_eq!(
        model.auth_headers()[0].as_deref(),
        Some(format!("Bearer {key}").as_str())
    );
    for entry in std::fs::read_dir(p.path(".slmcode/runs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(key));
    }
    assert!(!r.stderr.contains(key));
}

/// The model tries every way to the API key: the command's environment, every process it can
/// see in /proc (the harness's own fork included), and a project file that holds the key. The
/// key reaches neither the model, nor the trajectory, nor the terminal.
#[test]
fn the_model_never_sees_the_api_key() {
    // With namespaces the harness is invisible; without (sandbox: landlock) it is in /proc,
    // and /proc/*/environ reaches it.
    for sandbox in ["auto", "landlock"] {
        the_model_never_sees_the_api_key_with(sandbox);
    }
}

fn the_model_never_sees_the_api_key_with(sandbox: &str) {
    let p = Project::new();
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("slmcode");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.yaml"), "api_key_env: TEST_MODEL_KEY\n").unwrap();
    let key = "sk-test-4f9a2b7c1d-secret";
    p.write(".env", format!("TEST_MODEL_KEY={key}\n"));
    let model = FakeModel::start(vec![
        Scripted::call("ws_shell", json!({"command": "env"})),
        Scripted::call(
            "ws_shell",
            json!({"command": "cat /proc/*/environ | tr '\\0' '\\n'"}),
        ),
        Scripted::call(
            "ws_shell",
            json!({"command": "cat /proc/1/environ /proc/$PPID/environ"}),
        ),
        Scripted::call("ws_shell", json!({"command": "cat .env"})),
        Scripted::call("ws_read", json!({"path": ".env"})),
        Scripted::final_done("looked"),
    ]);
    let r = run_with(
        &p,
        &model,
        "find the key",
        &[],
        &[
            ("XDG_CONFIG_HOME", home.path().to_str().unwrap()),
            ("TEST_MODEL_KEY", key),
            ("OTHER_SERVICE_TOKEN", "tok-0123456789abcdef"),
            ("SLMCODE_SANDBOX", sandbox),
        ],
    );
    assert_done(&r, &[]);
    // The key went where it belongs: the Authorization header.
    assert_eq!(
        model.auth_headers()[0].as_deref(),
        Some(format!("Bearer {key}").as_str())
    );
    let requests = serde_json::to_string(&model.requests()).unwrap();
    assert!(!requests.contains(key), "{sandbox}: the model saw the key");
    assert!(
        !requests.contains("tok-0123456789abcdef"),
        "the model saw a token"
    );
    // The commands ran: the environment was printed, /proc refused.
    assert!(requests.contains("TERM=dumb"), "{requests}");
    assert!(requests.contains("Permission denied"), "{requests}");
    // The project file was read, with the key replaced by its name.
    assert!(
        requests.contains("[redacted: TEST_MODEL_KEY]"),
        "{requests}"
    );
    for entry in std::fs::read_dir(p.path(".slmcode/runs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(key), "the trajectory holds the key");
    }
    assert!(!r.stderr.contains(key));
}

#[test]
fn runs_are_listed_and_shown() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "a.txt"})),
        Scripted::final_done("read it"),
    ]);
    let r = run(&p, &model, "read a.txt please");
    assert_done(&r, &[]);
    let list = bin()
        .args(["runs", "list", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(
        list.contains("done") && list.contains("read a.txt please"),
        "{list}"
    );
    let id = list.split_whitespace().next().unwrap();
    let show = bin()
        .args(["runs", "show", id, "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout).to_string();
    assert!(show.contains("task: read a.txt please"), "{show}");
    assert!(
        show.contains("── ws_read") && show.contains("     1|one"),
        "{show}"
    );
    assert!(show.contains("\"status\": \"done\""), "{show}");
}

#[test]
fn models_are_listed() {
    let model = FakeModel::with_models(
        vec![],
        vec![
            json!({"id": "qwen2.5-coder:7b"}),
            json!({"id": "llama3.2:3b", "max_model_len": 8192}),
        ],
    );
    let out = bin()
        .args(["models", "--endpoint", &model.url, "--query", "coder"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("qwen2.5-coder:7b\n(1 of 2 models match \"coder\""),
        "{text}"
    );
}

#[test]
fn an_unknown_tool_name_gets_the_list() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::text("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>"),
        Scripted::final_done("gave up on read_file"),
    ]);
    let r = run(&p, &model, "read a.txt");
    assert_done(&r, &[]);
    let sent = result_sent(&model, 1);
    assert!(
        sent.contains("There is no tool named \"read_file\". The tools are: ws_read, ws_write"),
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

#[test]
fn the_servers_context_length_is_used_when_the_config_says_none() {
    let p = Project::new();
    let big: String = (1..=110)
        .map(|i| format!("line {i} of a long file with some words on it\n"))
        .collect();
    for name in ["a.txt", "b.txt", "c.txt"] {
        p.write(name, &big);
    }
    let script = || {
        vec![
            Scripted::call("ws_read", json!({"path": "a.txt"})),
            Scripted::call("ws_read", json!({"path": "b.txt"})),
            Scripted::call("ws_read", json!({"path": "c.txt"})),
            Scripted::final_done("read them"),
        ]
    };
    // The server serves the model with a small context: old results are elided.
    let small = FakeModel::with_models(script(), vec![json!({"id": "m", "max_model_len": 3072})]);
    let r = run(&p, &small, "read the files");
    assert_done(&r, &[]);
    assert!(
        r.stderr.contains("old tool result(s) elided"),
        "{}",
        r.stderr
    );
    // An explicit context_window in the config wins over the server's.
    let small = FakeModel::with_models(script(), vec![json!({"id": "m", "max_model_len": 3072})]);
    let r = run_with(
        &p,
        &small,
        "read the files",
        &[],
        &[("SLMCODE_CONTEXT_WINDOW", "100000")],
    );
    assert_done(&r, &[]);
    assert!(!r.stderr.contains("elided"), "{}", r.stderr);
}

#[test]
fn ollama_tags_add_size_and_quantization() {
    let model = FakeModel::with_models(vec![], vec![json!({"id": "qwen2.5-coder:7b"})]).with_ollama_tags(vec![
        json!({"name": "qwen2.5-coder:7b", "size": 4_683_087_332u64, "details": {"parameter_size": "7.6B", "quantization_level": "Q4_K_M"}}),
    ]);
    let out = bin()
        .args(["models", "--endpoint", &model.url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("qwen2.5-coder:7b  (7.6B, Q4_K_M, 4.7 GB)\n(1 model at"),
        "{text}"
    );
}

#[test]
fn find_models_is_a_specialist_tool() {
    let p = Project::new();
    let model = FakeModel::with_models(
        vec![],
        vec![
            json!({"id": "qwen2.5-coder:7b"}),
            json!({"id": "qwen3-coder:30b"}),
            json!({"id": "llama3.2:3b"}),
        ],
    );
    let (text, err) = p.tool_env(
        "find_models",
        r#"{"query":"coder","limit":1}"#,
        &[("SLMCODE_ENDPOINT", &model.url)],
    );
    assert!(!err, "{text}");
    assert!(
        text.starts_with("qwen2.5-coder:7b\n(2 of 3 models match \"coder\""),
        "{text}"
    );
    assert!(text.contains("showing 1"), "{text}");
}

#[test]
fn ctrl_c_stops_cleanly_and_names_the_trajectory() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "a.txt"})),
        Scripted::Slow(20_000, Box::new(Scripted::final_done("too late"))),
    ]);
    let child = bin()
        .args([
            "run",
            "read a.txt",
            "--json",
            "--endpoint",
            &model.url,
            "--root",
        ])
        .arg(p.root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the second request is in flight, then interrupt.
    let started = std::time::Instant::now();
    while model.requests().len() < 2 {
        assert!(
            started.elapsed().as_secs() < 20,
            "the run never made its second request"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed().as_secs() < 15,
        "the run did not stop promptly"
    );
    assert_eq!(out.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stopped; what the run did is in .slmcode/runs/"),
        "{stderr}"
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["status"], "interrupted");
    let log = std::fs::read_dir(p.path(".slmcode/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(log).unwrap();
    assert!(
        text.contains("\"type\":\"tool\"") && text.contains("\"status\":\"interrupted\""),
        "{text}"
    );
}

#[test]
fn an_empty_task_is_refused_before_the_server_is_asked() {
    let p = Project::new();
    let model = FakeModel::start(vec![]);
    let r = run(&p, &model, "   ");
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("the task is empty"), "{}", r.stderr);
    assert!(model.requests().is_empty());
}
