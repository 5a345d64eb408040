//! Thinking models: a call or a final answer inside the reasoning is never taken (a block
//! opened in the prompt — Qwen3.6 style — included); a reply that announces an action but
//! makes no call is asked to make it; gpt-oss gets its reasoning back between tool calls; and
//! `think` reaches each server as its own switch.

use super::*;

fn final_json(summary: &str) -> String {
    json!({"status": "done", "summary": summary, "files_changed": [], "notes": ""}).to_string()
}

#[test]
fn an_answer_drafted_in_the_reasoning_does_not_end_the_run() {
    for args in [&[][..], &["--no-stream"][..]] {
        drafted_case(args);
    }
}

fn drafted_case(args: &[&str]) {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        // A final answer only drafted, and an action only announced.
        Scripted::text(format!(
            "<think>I could just say {}</think>I'll now read app.py to see the code.",
            final_json("drafted")
        )),
        // Qwen3.6: the opening tag was in the prompt; the call after the reasoning runs.
        Scripted::text(format!(
            "the file is short, maybe {}</think>\n<tool_call>{{\"name\": \"ws_read\", \"arguments\": {{\"path\": \"app.py\"}}}}</tool_call>",
            final_json("drafted again")
        )),
        fix_app(),
        Scripted::final_done("fixed"),
    ]);
    let r = run_with(&p, &model, "make total() skip None", args, &[]);
    assert_done(&r, &["app.py"]);
    assert_eq!(r.answer["summary"], "fixed");
    assert_fixed(&p);
    let nudge = result_sent(&model, 1);
    assert!(
        nudge.starts_with(
            "You wrote \"I'll now read app.py to see the code\" but made no tool call"
        ),
        "{nudge}"
    );
    assert!(result_sent(&model, 2).contains("     1|def total(xs):"));
}

#[test]
fn gpt_oss_gets_its_reasoning_back_and_others_do_not() {
    for (id, wants) in [("gpt-oss-20b", true), ("test-model", false)] {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::with_models(
            vec![
                Scripted::Reasoned(
                    "I need to look at the file first.".into(),
                    "<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"app.py\"}}</tool_call>".into(),
                ),
                Scripted::final_done("read"),
            ],
            vec![json!({"id": id})],
        );
        let r = run(&p, &model, "read app.py");
        assert_done(&r, &[]);
        let messages = model.requests()[1]["messages"].as_array().unwrap().clone();
        let assistant = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .unwrap();
        assert_eq!(
            assistant.get("reasoning_content").and_then(Value::as_str),
            wants.then_some("I need to look at the file first."),
            "{id}"
        );
    }
}

#[test]
fn think_reaches_each_server_as_its_own_switch() {
    let p = Project::new();
    let body = |think: &str, ollama: bool| {
        let mut model = FakeModel::start(vec![Scripted::final_done("ok")]);
        if ollama {
            model = model.shaped_as_ollama();
        }
        let r = run_with(&p, &model, "look", &[], &[("SLMCODE_THINK", think)]);
        assert_done(&r, &[]);
        model.requests()[0].clone()
    };
    let off = body("off", false);
    assert_eq!(
        off["chat_template_kwargs"],
        json!({"enable_thinking": false})
    );
    assert!(off.get("reasoning_effort").is_none());
    let high = body("high", false);
    assert_eq!(high["reasoning_effort"], "high");
    assert_eq!(
        high["chat_template_kwargs"],
        json!({"enable_thinking": true})
    );
    let auto = body("auto", false);
    assert!(auto.get("chat_template_kwargs").is_none() && auto.get("reasoning_effort").is_none());
    assert_eq!(body("off", true)["think"], json!(false));
    assert_eq!(body("medium", true)["think"], json!("medium"));
    assert!(body("auto", true).get("think").is_none());
}
