//! `tool_mode`: tools described in the prompt when the server cannot take them. Each test
//! server answers the way the real one does when it refuses tools — its status and its body
//! — and `auto` switches once, at once (a deterministic failure is not retried), goes on with
//! text calls, says so on stderr and in the trajectory, and remembers it for the next run.

use super::*;

/// The model, writing its calls as text (it has no native tools in text mode).
fn text_script() -> Vec<Scripted> {
    let call = |name: &str, args: Value| {
        Scripted::text(format!(
            "<tool_call>{{\"name\": \"{name}\", \"arguments\": {args}}}</tool_call>"
        ))
    };
    vec![
        call("ws_read", json!({"path": "app.py"})),
        call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "    return sum(xs)", "new_str": "    return sum(x for x in xs if x is not None)"}),
        ),
        Scripted::final_done("fixed"),
    ]
}

fn with_tools(model: &FakeModel) -> usize {
    model
        .requests()
        .iter()
        .filter(|r| r.get("tools").is_some())
        .count()
}

fn system_of(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The refusals of real servers: (which, status, body).
const REFUSALS: &[(&str, u16, &str)] = &[
    // Ollama's /v1, a model whose template has no tools.
    (
        "ollama",
        400,
        r#"{"error":{"message":"registry.ollama.ai/library/gemma3:4b does not support tools","type":"api_error","param":null,"code":null}}"#,
    ),
    // vLLM started without --enable-auto-tool-choice.
    (
        "vllm",
        400,
        r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}"#,
    ),
    // llama.cpp's llama-server started without --jinja.
    (
        "llama.cpp",
        500,
        r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#,
    ),
    // Ollama's own tool parser failing on the model's reply.
    (
        "ollama parser",
        500,
        r#"{"error":{"message":"error parsing tool call: raw='{\"name\": \"ws_read\", \"arguments\": {\"path\": \"app.py\"', err=unexpected end of JSON input","type":"api_error","param":null,"code":null}}"#,
    ),
];

#[test]
fn auto_switches_to_text_once_for_each_servers_refusal_and_remembers() {
    for (i, (server, status, body)) in REFUSALS.iter().enumerate() {
        let p = Project::new();
        p.write("app.py", APP);
        let data = tempfile::tempdir().unwrap();
        let env = [("XDG_DATA_HOME", data.path().to_str().unwrap())];
        // Streamed for some servers, whole for the others.
        let args: &[&str] = if i % 2 == 0 { &[] } else { &["--no-stream"] };
        // One server for both runs: what is remembered is for this endpoint and model.
        let script = [text_script(), text_script()].concat();
        let model = FakeModel::start(script).refusing_tools(*status, body);
        let r = run_with(&p, &model, "make total() skip None", args, &env);
        assert_done(&r, &["app.py"]);
        assert_fixed(&p);
        // One request with tools — refused, not retried — then none.
        assert_eq!(with_tools(&model), 1, "{server}: {}", r.stderr);
        let requests = model.requests();
        assert_eq!(requests.len(), 4, "{server}");
        assert!(!system_of(&requests[0]).contains("Tools. Call exactly one per turn"));
        for later in &requests[1..] {
            assert!(
                system_of(later).contains("Tools. Call exactly one per turn")
                    && system_of(later).contains("\n- ws_edit {"),
                "{server}"
            );
        }
        assert_eq!(
            r.stderr.matches("refused tools for test-model").count(),
            1,
            "{server}: {}",
            r.stderr
        );
        // The next run of the same model there starts in text mode.
        p.write("app.py", APP);
        let r = run_with(&p, &model, "make total() skip None", args, &env);
        assert_done(&r, &["app.py"]);
        assert_eq!(with_tools(&model), 1, "{server}: {}", r.stderr);
        assert_eq!(model.requests().len(), 7, "{server}");
        assert!(
            r.stderr
                .contains("refused tools for test-model in an earlier run"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn the_switch_is_in_the_trajectory_and_a_follow_up_keeps_it() {
    let p = Project::new();
    p.write("app.py", APP);
    let (_, status, body) = REFUSALS[0];
    let model = FakeModel::start(text_script()).refusing_tools(status, body);
    let r = run(&p, &model, "make total() skip None");
    assert_done(&r, &["app.py"]);
    let text = p.run_log();
    assert!(
        text.contains(r#""switched_to":"text""#) && text.contains("does not support tools"),
        "{text}"
    );
    // A follow-up goes on in text mode: its history describes the tools, so it sends none.
    let next = FakeModel::start(vec![Scripted::final_done("nothing more")]);
    let r = run_with(&p, &next, "anything else?", &["--resume"], &[]);
    assert_done(&r, &[]);
    assert_eq!(with_tools(&next), 0);
}

#[test]
fn text_mode_sends_no_tools_and_native_mode_does_not_fall_back() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(text_script());
    let r = run_with(
        &p,
        &model,
        "make total() skip None",
        &[],
        &[("SLMCODE_TOOL_MODE", "text")],
    );
    assert_done(&r, &["app.py"]);
    assert_eq!(with_tools(&model), 0);
    assert!(system_of(&model.requests()[0]).contains("Tools. Call exactly one per turn"));

    // Native: the refusal is one clear error, after one request, not three.
    p.write("app.py", APP);
    let (_, status, body) = REFUSALS[2];
    let model = FakeModel::start(text_script()).refusing_tools(status, body);
    let r = run_with(
        &p,
        &model,
        "make total() skip None",
        &[],
        &[("SLMCODE_TOOL_MODE", "native")],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("cannot take tools for this model (500: tools param requires --jinja flag). Set tool_mode: text"),
        "{}",
        r.stderr
    );
    assert_eq!(model.requests().len(), 1);
    // A bad value is refused with the choices.
    let r = run_with(&p, &model, "x", &[], &[("SLMCODE_TOOL_MODE", "sometimes")]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("one of auto, native, text"),
        "{}",
        r.stderr
    );
}
