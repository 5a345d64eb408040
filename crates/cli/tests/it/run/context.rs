//! The context window a run works within, read from the server the way each server says it
//! (llama.cpp, Ollama, vLLM, LM Studio), the config winning, and `slmcode doctor` saying what
//! is in force. The window is checked by its effect — a small one makes the run elide old
//! results — not only by the line that names it.

use super::*;

/// Three reads of 110-line files, then done: a window of about 3K tokens must elide.
fn read_three(p: &Project) -> Vec<Scripted> {
    let big: String = (1..=110)
        .map(|i| format!("line {i} of a long file with some words on it\n"))
        .collect();
    for name in ["a.txt", "b.txt", "c.txt"] {
        p.write(name, &big);
    }
    vec![
        Scripted::call("ws_read", json!({"path": "a.txt"})),
        Scripted::call("ws_read", json!({"path": "b.txt"})),
        Scripted::call("ws_read", json!({"path": "c.txt"})),
        Scripted::final_done("read them"),
    ]
}

/// The run's header line: `slmcode run ID · model at URL · context … · up to N turns`.
fn header(r: &Ran) -> &str {
    r.stderr
        .lines()
        .find(|l| l.starts_with("slmcode run "))
        .unwrap_or("")
}

fn elided(r: &Ran) -> bool {
    r.stderr.contains("old tool result(s) elided")
}

#[test]
fn vllm_max_model_len_is_used_when_the_config_says_none() {
    let p = Project::new();
    let small = FakeModel::with_models(
        read_three(&p),
        vec![json!({"id": "m", "max_model_len": 3072})],
    );
    let r = run(&p, &small, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("· context 3072 tokens (vLLM /v1/models (max_model_len)) ·"),
        "{}",
        r.stderr
    );
    // An explicit context_window wins over the server's.
    let small = FakeModel::with_models(
        read_three(&p),
        vec![json!({"id": "m", "max_model_len": 3072})],
    );
    let r = run_with(
        &p,
        &small,
        "read the files",
        &[],
        &[("SLMCODE_CONTEXT_WINDOW", "100000")],
    );
    assert_done(&r, &[]);
    assert!(!elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("context 100000 tokens (context_window from SLMCODE_CONTEXT_WINDOW; the server serves 3072, vLLM /v1/models (max_model_len))"),
        "{}",
        r.stderr
    );
    // Larger than what the server serves: the user is told the server will cut.
    assert!(
        r.stderr.contains("slmcode: warning: context_window 100000 (from SLMCODE_CONTEXT_WINDOW) is larger than the 3072 tokens the server serves"),
        "{}",
        r.stderr
    );
}

#[test]
fn llama_cpp_props_give_the_loaded_context_not_the_trained_one() {
    let p = Project::new();
    let listed = vec![json!({"id": "m", "owned_by": "llamacpp", "meta": {"n_ctx_train": 131072}})];
    let model = FakeModel::with_models(read_three(&p), listed.clone()).with_route(
        "GET",
        "/props",
        json!({"default_generation_settings": {"n_ctx": 3072}, "total_slots": 1}),
    );
    let r = run(&p, &model, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("context 3072 tokens (llama.cpp /props (n_ctx)), trained for 131072"),
        "{}",
        r.stderr
    );
    // Asked for this model, as llama-server's router mode needs.
    assert!(
        model.probes().iter().any(|q| q == "GET /props?model=m"),
        "{:?}",
        model.probes()
    );
    // Without /props, the training length alone is never taken as the window: a smaller one
    // (8,192) elides where 131,072 would not.
    let model = FakeModel::with_models(read_three(&p), listed);
    let r = run(&p, &model, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("context 8192 tokens (default; the server does not say its context"),
        "{}",
        r.stderr
    );
}

/// A server shaped like Ollama: its tags, and what /api/show says of the model.
fn ollama(script: Vec<Scripted>, parameters: &str) -> FakeModel {
    FakeModel::with_models(script, vec![json!({"id": "qwen2.5-coder:7b", "owned_by": "library"})])
        .with_ollama_tags(vec![json!({"name": "qwen2.5-coder:7b", "size": 4_683_087_332u64})])
        .with_route(
            "POST",
            "/api/show",
            json!({"parameters": parameters, "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}),
        )
}

#[test]
fn ollama_loaded_context_then_modelfile_then_a_warning() {
    let p = Project::new();
    // Loaded: /api/ps says the context it was loaded with.
    let model = ollama(read_three(&p), "").with_route(
        "GET",
        "/api/ps",
        json!({"models": [{"name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "context_length": 3072}]}),
    );
    let r = run(&p, &model, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("context 3072 tokens (Ollama /api/ps (the loaded model's context_length)), trained for 32768"),
        "{}",
        r.stderr
    );
    // Not loaded: the Modelfile's num_ctx.
    let model = ollama(
        read_three(&p),
        "num_ctx                        3000\nstop \"<|im_end|>\"",
    )
    .with_route("GET", "/api/ps", json!({"models": []}));
    let r = run(&p, &model, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("context 3000 tokens (Ollama /api/show (the Modelfile's num_ctx))"),
        "{}",
        r.stderr
    );
    // Neither: the user is told the server's default applies and cannot be read.
    let model = ollama(vec![Scripted::final_done("nothing")], "").with_route(
        "GET",
        "/api/ps",
        json!({"models": []}),
    );
    let r = run(&p, &model, "nothing");
    assert_done(&r, &[]);
    assert!(
        r.stderr.contains("slmcode: warning: Ollama has not loaded qwen2.5-coder:7b yet and its Modelfile sets no num_ctx"),
        "{}",
        r.stderr
    );
}

#[test]
fn lm_studio_loaded_instance_context() {
    let p = Project::new();
    let listed =
        vec![json!({"id": "qwen3-8b", "object": "model", "owned_by": "organization_owner"})];
    let model = FakeModel::with_models(read_three(&p), listed.clone()).with_route(
        "GET",
        "/api/v1/models",
        json!({"models": [{"key": "qwen3-8b", "type": "llm", "max_context_length": 40960,
                           "loaded_instances": [{"id": "qwen3-8b", "config": {"context_length": 3072}}]}]}),
    );
    let r = run(&p, &model, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r).contains("context 3072 tokens (LM Studio /api/v1/models (the loaded instance's context_length)), trained for 40960"),
        "{}",
        r.stderr
    );
    // Older LM Studio: /api/v0/models.
    let model = FakeModel::with_models(read_three(&p), listed).with_route(
        "GET",
        "/api/v0/models",
        json!({"data": [{"id": "qwen3-8b", "state": "loaded", "max_context_length": 40960, "loaded_context_length": 3072}]}),
    );
    let r = run(&p, &model, "read the files");
    assert_done(&r, &[]);
    assert!(elided(&r), "{}", r.stderr);
    assert!(
        header(&r)
            .contains("context 3072 tokens (LM Studio /api/v0/models (loaded_context_length))"),
        "{}",
        r.stderr
    );
}

#[test]
fn doctor_says_what_context_is_in_force_and_where_from() {
    let p = Project::new();
    let model = FakeModel::with_models(
        vec![],
        vec![json!({"id": "m", "meta": {"n_ctx_train": 131072}})],
    )
    .with_route(
        "GET",
        "/props",
        json!({"default_generation_settings": {"n_ctx": 16384}}),
    );
    let doctor = |env: &[(&str, &str)]| {
        let mut cmd = bin();
        cmd.args(["doctor", "--root"])
            .arg(p.root())
            .env("SLMCODE_ENDPOINT", &model.url);
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8_lossy(&cmd.output().expect("doctor").stdout).to_string()
    };
    let out = doctor(&[]);
    assert!(
        out.contains(
            "ok    context 16384 tokens (llama.cpp /props (n_ctx)), trained for 131072 for m\n"
        ),
        "{out}"
    );
    // The config wins, and doctor warns when it is more than the server serves.
    let out = doctor(&[("SLMCODE_CONTEXT_WINDOW", "32768")]);
    assert!(
        out.contains("warn  context 32768 tokens (context_window from SLMCODE_CONTEXT_WINDOW; the server serves 16384, llama.cpp /props (n_ctx)), trained for 131072 for m: context_window 32768"),
        "{out}"
    );
    let out = doctor(&[("SLMCODE_CONTEXT_WINDOW", "8192")]);
    assert!(
        out.contains("ok    context 8192 tokens (context_window from SLMCODE_CONTEXT_WINDOW; the server serves 16384"),
        "{out}"
    );
}
