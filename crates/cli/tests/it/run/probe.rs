//! `slmcode doctor --model M`: the model is asked what a run would ask, and the settings that
//! follow are printed (and written to the user's config with `--write`).

use super::*;

fn doctor(model: &FakeModel, config_home: &std::path::Path, write: bool) -> String {
    doctor_of(model, config_home, "test-model", write)
}

fn doctor_of(model: &FakeModel, config_home: &std::path::Path, name: &str, write: bool) -> String {
    let p = Project::new();
    let mut cmd = bin();
    // `--model=NAME`, so that a name starting with `-` is the option's value.
    cmd.arg("doctor")
        .arg(format!("--model={name}"))
        .arg("--root")
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

/// The four replies of a probe that finds everything working.
fn probe_script() -> Vec<Scripted> {
    vec![
        Scripted::call("ws_read", json!({"path": "README.md"})),
        Scripted::text("<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"README.md\"}}</tool_call>"),
        Scripted::text("PELICAN-4417"),
        Scripted::text("1 2 3 4 5 6 7 8 9 10"),
    ]
}

#[test]
fn a_claimed_context_of_a_trillion_tokens_is_not_believed() {
    // A hostile or broken server: its /v1/models says the model has 10^12 tokens of context.
    // Nothing is sized by that number, and the output says it was not believed.
    let home = tempfile::tempdir().unwrap();
    let model = FakeModel::with_models(
        probe_script(),
        vec![json!({"id": "test-model", "object": "model", "max_model_len": 1_000_000_000_000u64})],
    );
    let started = std::time::Instant::now();
    let out = doctor(&model, home.path(), true);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(
        out.contains("claims 1000000000000 tokens of context; not believed, 10000000 used"),
        "{out}"
    );
    assert_eq!(model.requests().len(), 4, "{out}");
    // The long prompt fills a bounded part of the clamped context.
    let long = model.requests()[2]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .len();
    assert!(long < 2_000_000, "the long prompt is {long} bytes");
    let written = std::fs::read_to_string(home.path().join("slmcode/config.yaml")).unwrap();
    assert!(written.contains("context_window: 10000000\n"), "{written}");
}

#[test]
fn any_model_name_written_loads_back_as_itself() {
    // What YAML reads as something else — a mapping, a comment, a number, a boolean, null, an
    // alias, a tag, a block scalar — and what ends a line: `--write` quotes it, and the next
    // run reads the same name back from the config (it asks the server for exactly that).
    for name in [
        "org/m: \"q\" #1 [it's] {x}",
        "line one\nline: two",
        "123",
        "true",
        "~",
        "- &a *b !c |d >e %f @g `h`",
        " padded\t",
    ] {
        let home = tempfile::tempdir().unwrap();
        // A config's values are read trimmed: the doctor takes the name so.
        let listed = vec![json!({"id": name.trim(), "object": "model"})];
        let model = FakeModel::with_models(probe_script(), listed.clone());
        let out = doctor_of(&model, home.path(), name, true);
        assert!(out.contains("written to"), "{name:?}: {out}");
        let p = Project::new();
        let next = FakeModel::with_models(vec![Scripted::final_done("ok")], listed);
        let r = bin()
            .args([
                "run",
                "look",
                "--json",
                "--no-explore",
                "--endpoint",
                &next.url,
                "--root",
            ])
            .arg(p.root())
            .env("XDG_CONFIG_HOME", home.path())
            .env("XDG_DATA_HOME", home.path())
            .output()
            .expect("run");
        assert_eq!(
            r.status.code(),
            Some(0),
            "{name:?}: {}\n{}",
            String::from_utf8_lossy(&r.stderr),
            std::fs::read_to_string(home.path().join("slmcode/config.yaml")).unwrap()
        );
        assert_eq!(next.requests()[0]["model"], json!(name.trim()), "{name:?}");
    }
}

#[test]
fn a_roles_model_is_probed_and_written_under_its_own_key() {
    let home = tempfile::tempdir().unwrap();
    let model = FakeModel::with_models(
        probe_script(),
        vec![
            json!({"id": "test-model", "object": "model"}),
            json!({"id": "planner", "object": "model"}),
        ],
    );
    let p = Project::new();
    p.write(".slmcode/config.yaml", "plan_model: planner\n");
    let out = bin()
        .args(["doctor", "--role", "plan", "--write", "--root"])
        .arg(p.root())
        .env("SLMCODE_ENDPOINT", &model.url)
        .env("XDG_CONFIG_HOME", home.path())
        .env("SLMCODE_RETRY_BASE_MS", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("plan_model planner is served"), "{text}");
    assert!(text.contains("probing planner"), "{text}");
    assert!(model.requests().iter().all(|r| r["model"] == "planner"));
    let written = std::fs::read_to_string(home.path().join("slmcode/config.yaml")).unwrap();
    assert_eq!(written, "plan_model: planner\ntool_mode: native\n");
    // No role model and no model: said, nothing probed.
    let bare = Project::new();
    let out = bin()
        .args(["doctor", "--role", "edit", "--root"])
        .arg(bare.root())
        .env("SLMCODE_ENDPOINT", &model.url)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the edit role has no model: set edit_model (or model) in the config"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
