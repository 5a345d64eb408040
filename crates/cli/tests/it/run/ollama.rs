//! Ollama through its native `/api/chat` (its `/v1` ignores `num_ctx`): detected by
//! `/api/version`, the run sets `options.num_ctx` once — the same on every request, so the
//! model is not reloaded — to the context in force (the loaded one, the config's, or the
//! default), with `keep_alive`, and gets its calls in Ollama's wire, streamed and whole.

use super::*;

fn ollama(script: Vec<Scripted>) -> FakeModel {
    FakeModel::with_models(
        script,
        vec![json!({"id": "qwen2.5-coder:7b", "owned_by": "library"})],
    )
    .with_ollama_tags(vec![json!({"name": "qwen2.5-coder:7b"})])
    .shaped_as_ollama()
}

fn num_ctx(model: &FakeModel) -> Vec<u64> {
    model
        .requests()
        .iter()
        .map(|r| r["options"]["num_ctx"].as_u64().unwrap_or(0))
        .collect()
}

#[test]
fn the_native_api_with_the_loaded_context_set_on_every_request() {
    for args in [&[][..], &["--no-stream"][..]] {
        let p = Project::new();
        p.write("app.py", APP);
        let model = ollama(vec![read_app(), fix_app(), Scripted::final_done("fixed")]).with_route(
            "GET",
            "/api/ps",
            json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "context_length": 16384}]}),
        );
        let r = run_with(&p, &model, "make total() skip None", args, &[]);
        assert_done(&r, &["app.py"]);
        assert_fixed(&p);
        assert_eq!(num_ctx(&model), vec![16384; 3], "{args:?}");
        for request in model.requests() {
            assert_eq!(request["keep_alive"], "30m");
            assert!(
                request.get("options").is_some(),
                "every request went to /api/chat"
            );
        }
        // The call's arguments went back as an object, and its result as a tool message.
        let second = &model.requests()[1]["messages"];
        let messages = second.as_array().unwrap();
        let call = &messages[messages.len() - 2];
        assert_eq!(
            call["tool_calls"][0]["function"]["arguments"],
            json!({"path": "app.py"})
        );
        assert_eq!(messages[messages.len() - 1]["role"], "tool");
        assert!(
            r.stderr.contains("context 16384 tokens (Ollama /api/ps (the loaded model's context_length)) · Ollama's /api/chat with num_ctx set to it"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn the_config_or_the_default_context_is_what_ollama_is_asked_for() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = ollama(vec![Scripted::final_done("ok")]);
    let r = run_with(
        &p,
        &model,
        "look",
        &[],
        &[("SLMCODE_CONTEXT_WINDOW", "12000")],
    );
    assert_done(&r, &[]);
    assert_eq!(num_ctx(&model), vec![12000]);
    // Not loaded, no num_ctx in the Modelfile: the default, set — so no warning that the
    // server's own default applies.
    let model = ollama(vec![Scripted::final_done("ok")])
        .with_route("GET", "/api/ps", json!({"models": []}))
        .with_route(
            "POST",
            "/api/show",
            json!({"parameters": "", "model_info": {"qwen2.context_length": 32768}}),
        );
    let r = run(&p, &model, "look");
    assert_done(&r, &[]);
    assert_eq!(num_ctx(&model), vec![8192]);
    assert!(!r.stderr.contains("has not loaded"), "{}", r.stderr);
}

#[test]
fn an_ollama_model_without_tools_goes_on_in_text_mode() {
    let p = Project::new();
    p.write("app.py", APP);
    let call = |name: &str, args: Value| {
        Scripted::text(format!(
            "<tool_call>{{\"name\": \"{name}\", \"arguments\": {args}}}</tool_call>"
        ))
    };
    let model = ollama(vec![
        call("ws_read", json!({"path": "app.py"})),
        call("ws_edit", json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None)"})),
        Scripted::final_done("fixed"),
    ])
    .refusing_tools(400, r#"{"error":"registry.ollama.ai/library/qwen2.5-coder:7b does not support tools"}"#);
    let r = run(&p, &model, "make total() skip None");
    assert_done(&r, &["app.py"]);
    assert_fixed(&p);
    assert!(r.stderr.contains("refused tools"), "{}", r.stderr);
}
