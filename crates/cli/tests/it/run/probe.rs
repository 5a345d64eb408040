//! `slmcode doctor --model M`: the model is asked what a run would ask, and the settings that
//! follow are printed (and written to the user's config with `--write`).

use super::*;

fn doctor(model: &FakeModel, config_home: &std::path::Path, write: bool) -> String {
    let p = Project::new();
    let mut cmd = bin();
    cmd.args(["doctor", "--model", "test-model", "--root"])
        .arg(p.root())
        .env("SLMCODE_ENDPOINT", &model.url)
        .env("XDG_CONFIG_HOME", config_home)
        .env("SLMCODE_RETRY_BASE_MS", "1");
    if write {
        cmd.arg("--write");
    }
    let out = cmd.output().expect("doctor");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_model_that_does_everything_gets_native_and_its_context() {
    let home = tempfile::tempdir().unwrap();
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "README.md"})),
        Scripted::text("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"README.md\"}}</tool_call>"),
        Scripted::text("PELICAN-4417"),
        Scripted::text("1 2 3 4 5 6 7 8 9 10"),
    ]);
    let out = doctor(&model, home.path(), true);
    for line in [
        "native tool calls: work",
        "the model writes Hermes calls, which slmcode reads",
        "prompt reached the model whole",
        "speed: reads about",
        "settings to use:\n      model: test-model\n      tool_mode: native\n      context_window: 8192\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    // Four requests: the native call, the text call, the long prompt, the count.
    assert_eq!(model.requests().len(), 4);
    assert!(model.requests()[0].get("tools").is_some());
    // Whole replies, so that servers which send no usage in a stream still report counts.
    assert!(model.requests().iter().all(|r| r["stream"] == json!(false)));
    assert!(model.requests()[1].get("tools").is_none());
    let long = model.requests()[2]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .len();
    assert!(
        long > 15_000,
        "the long prompt fills most of the context: {long} chars"
    );
    let written = std::fs::read_to_string(home.path().join("slmcode/config.yaml")).unwrap();
    assert_eq!(
        written,
        "model: test-model\ntool_mode: native\ncontext_window: 8192\n"
    );
}

#[test]
fn a_refusing_server_that_cuts_the_prompt_gets_text_and_a_smaller_window() {
    let home = tempfile::tempdir().unwrap();
    let model = FakeModel::start(vec![
        Scripted::text("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"README.md\"}}</tool_call>"),
        // The server kept 1,000 tokens of a prompt of about 5,700.
        Scripted::TextWithPromptTokens("I do not know.".into(), 1000),
        Scripted::text("1 2 3"),
    ])
    .refusing_tools(
        400,
        r#"{"error":{"message":"registry.ollama.ai/library/test-model does not support tools"}}"#,
    );
    let out = doctor(&model, home.path(), false);
    for line in [
        "native tool calls: refused by the server (registry.ollama.ai/library/test-model does not support tools)",
        "context: the server read only 1000 of a ",
        "      tool_mode: text\n      context_window: 768\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    // Without --write nothing is written.
    assert!(!home.path().join("slmcode/config.yaml").exists());
}
