//! The server as it really is: unreachable, transient and client errors, a prompt it cut, its
//! context length, the models it lists, find_models.

use super::*;

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
    assert!(
        r.stderr
            .contains("Set context_window to the server's context"),
        "{}",
        r.stderr
    );
    // The project's instructions were in the first message.
    let first = model.requests()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(first.contains("From AGENTS.md:\nBe careful."), "{first}");
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
