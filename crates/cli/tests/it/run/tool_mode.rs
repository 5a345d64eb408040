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

/// The failures of a server's own tool parser on the model's reply, or of its template with
/// tools in it, as each server words them today: deterministic (the same conversation fails
/// the same way on every resubmit, ollama/ollama#18563), so a retry only repeats it, while the
/// same model's calls written as text are read by slmcode's parser. (vLLM and SGLang log
/// their parser's failure and return the reply as text, which slmcode reads; LM Studio drops
/// the call it could not parse and says so only in its log.)
const PARSER_FAILURES: &[(&str, u16, &str)] = &[
    // llama.cpp's chat parser (Qwen3.6 in ggml-org/llama.cpp#24644, LFM2.5 in #23838,
    // Qwen3.5 in #20761, gpt-oss in #20532, GLM-4.7 in pwilkin/llama.cpp#5).
    (
        "llama.cpp parser",
        500,
        r#"{"error":{"code":500,"message":"Failed to parse input at pos 1360: <tool_call>\n<function=ws_edit>\n<parameter=path>\napp.py\n</parameter>","type":"server_error"}}"#,
    ),
    // llama.cpp unable to build a parser from the model's template (noonghunna/club-3090#1250).
    (
        "llama.cpp template",
        400,
        r#"{"error":{"code":400,"message":"Unable to generate parser for this template. Automatic parser generation failed: While executing CallExpression at line 163, column 57","type":"invalid_request_error"}}"#,
    ),
    // Ollama's qwen3coder parser (ollama/ollama#14834, #18563).
    (
        "ollama qwen3coder",
        500,
        r#"{"error":"XML syntax error on line 127: element <parameter> closed by </function>"}"#,
    ),
    // Ollama's qwen3.5 parser on qwen3.6's drift (continuedev/continue#10896).
    (
        "ollama qwen3.5",
        500,
        r#"{"error":"expected element type <function> but have <parameter>"}"#,
    ),
    // Ollama's GLM parser (continuedev/continue#10896).
    (
        "ollama glm",
        500,
        r#"{"error":"failed to parse XML: XML syntax error on line 1: element <tool_call> closed by </arg_value>"}"#,
    ),
    // Ollama's qwen3 parser on a call cut off by num_predict (ollama/ollama#14570, #14492).
    (
        "ollama qwen3",
        500,
        r#"{"error":"failed to parse JSON: unexpected end of JSON input"}"#,
    ),
    // LM Studio rendering a template that breaks on the request's tools
    // (lmstudio-ai/lmstudio-bug-tracker#2012, #2180).
    (
        "lm studio",
        400,
        r#"{"error":"Error rendering prompt with jinja template: \"Cannot call something that is not a function: got UndefinedValue\".\n\nThis is usually an issue with the model's prompt template."}"#,
    ),
];

/// One run against a server that answers every request carrying tools as `model` is set up
/// to, then a second run of the same model there: the first switches to text once, at once,
/// and the second starts in text mode.
fn switches_once_and_remembers(server: &str, model: &FakeModel, args: &[&str]) {
    let p = Project::new();
    p.write("app.py", APP);
    let data = tempfile::tempdir().unwrap();
    let env = [("XDG_DATA_HOME", data.path().to_str().unwrap())];
    let r = run_with(&p, model, "make total() skip None", args, &env);
    assert_done(&r, &["app.py"]);
    assert_fixed(&p);
    // One request with tools — refused, not retried — then none.
    assert_eq!(with_tools(model), 1, "{server}: {}", r.stderr);
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
    let r = run_with(&p, model, "make total() skip None", args, &env);
    assert_done(&r, &["app.py"]);
    assert_eq!(with_tools(model), 1, "{server}: {}", r.stderr);
    assert_eq!(model.requests().len(), 7, "{server}");
    assert!(
        r.stderr
            .contains("refused tools for test-model in an earlier run"),
        "{}",
        r.stderr
    );
}

#[test]
fn auto_switches_to_text_once_for_each_servers_refusal_and_remembers() {
    for (i, (server, status, body)) in REFUSALS.iter().chain(PARSER_FAILURES).enumerate() {
        // Streamed for some servers, whole for the others.
        let args: &[&str] = if i % 2 == 0 { &[] } else { &["--no-stream"] };
        // One server for both runs: what is remembered is for this endpoint and model.
        let script = [text_script(), text_script()].concat();
        let model = FakeModel::start(script).refusing_tools(*status, body);
        switches_once_and_remembers(server, &model, args);
    }
}

#[test]
fn a_parser_failure_inside_a_stream_switches_too() {
    // A failure found while streaming comes inside a 200: llama.cpp sends its error as the
    // stream's last event (`data: {"error": …}`, no `[DONE]`), Ollama's native stream as a
    // `{"error": …}` line (ollama/ollama#12380); LM Studio the same for a template that breaks
    // on the tools (lmstudio-ai/lmstudio-bug-tracker#2180).
    let cases = [
        ("llama.cpp", false, PARSER_FAILURES[0]),
        ("lm studio", false, PARSER_FAILURES[6]),
        ("ollama", true, PARSER_FAILURES[2]),
    ];
    for (server, ollama, (_, status, body)) in cases {
        let script = [text_script(), text_script()].concat();
        let mut model = FakeModel::start(script);
        if ollama {
            model = model.shaped_as_ollama();
        }
        let model = model.refusing_tools_mid_stream(status, body);
        switches_once_and_remembers(server, &model, &[]);
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
