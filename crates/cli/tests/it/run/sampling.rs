//! Sampling: each model family's recommended settings from its card, the user's on top,
//! `temperature: server` to send none, on the OpenAI wire and on Ollama's.

use super::*;

fn first_body(model_id: &str, env: &[(&str, &str)], ollama: bool) -> (Value, Ran) {
    let p = Project::new();
    let mut model = FakeModel::with_models(
        vec![Scripted::final_done("ok")],
        vec![json!({"id": model_id})],
    );
    if ollama {
        model = model.shaped_as_ollama();
    }
    let r = run_with(&p, &model, "look", &[], env);
    let body = model.requests().first().cloned().unwrap_or(Value::Null);
    (body, r)
}

#[test]
fn the_familys_card_then_the_users_settings() {
    let (b, r) = first_body("qwen2.5-coder:7b", &[], false);
    assert_done(&r, &[]);
    assert_eq!(
        (
            b["temperature"].clone(),
            b["top_p"].clone(),
            b["top_k"].clone()
        ),
        (json!(0.7), json!(0.8), json!(20))
    );
    assert_eq!(b["repeat_penalty"], json!(1.05));
    assert_eq!(b["repetition_penalty"], json!(1.05));
    let (b, _) = first_body("devstral-small-2507", &[], false);
    assert_eq!(b["temperature"], json!(0.15));
    assert!(b.get("top_k").is_none());
    // The user's values win; `server` drops one, or, for temperature, all.
    let (b, _) = first_body(
        "qwen2.5-coder:7b",
        &[
            ("SLMCODE_TOP_K", "40"),
            ("SLMCODE_REPEAT_PENALTY", "server"),
            ("SLMCODE_SEED", "7"),
        ],
        false,
    );
    assert_eq!(
        (b["top_k"].clone(), b["seed"].clone()),
        (json!(40), json!(7))
    );
    assert!(b.get("repeat_penalty").is_none());
    let (b, _) = first_body(
        "qwen2.5-coder:7b",
        &[("SLMCODE_TEMPERATURE", "server")],
        false,
    );
    for key in ["temperature", "top_p", "top_k", "repeat_penalty", "min_p"] {
        assert!(b.get(key).is_none(), "{key}: {b}");
    }
    // An unknown family gets nothing: the server's own apply.
    let (b, _) = first_body("test-model", &[], false);
    assert!(b.get("temperature").is_none());
    // Out of range: refused with the range.
    let (_, r) = first_body("qwen2.5-coder:7b", &[("SLMCODE_TOP_P", "2")], false);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("a number from 0 to 1, or server"),
        "{}",
        r.stderr
    );
}

#[test]
fn ollama_gets_them_as_options() {
    let (b, r) = first_body("gemma3:4b", &[], true);
    assert_done(&r, &[]);
    assert_eq!(b["options"]["temperature"], json!(1.0));
    assert_eq!(b["options"]["top_k"], json!(64));
    assert_eq!(b["options"]["top_p"], json!(0.95));
}
