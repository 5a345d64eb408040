//! `think_budget`: a reply whose reasoning passes the budget is stopped (the server sees the
//! connection closed), its thinking is kept as the model's notes, and the same turn is asked
//! again with thinking off — streamed and whole.

use super::*;

#[test]
fn a_stream_that_thinks_past_the_budget_is_stopped_and_asked_again_without_thinking() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        Scripted::EndlessThinking("the sum should skip None values; ".into()),
        read_app(),
        fix_app(),
        Scripted::final_done("fixed"),
    ]);
    let r = run_with(
        &p,
        &model,
        "make total skip None",
        &[],
        &[("SLMCODE_THINK_BUDGET", "100")],
    );
    assert_done(&r, &["app.py"]);
    assert_fixed(&p);
    // The endless stream was closed by slmcode, not ended by the server.
    assert_eq!(model.hung_up(), 1);
    let retry = &model.requests()[1];
    assert_eq!(
        retry["chat_template_kwargs"]["enable_thinking"], false,
        "{retry}"
    );
    assert_eq!(retry["reasoning_effort"], "low", "{retry}");
    let messages = retry["messages"].as_array().unwrap();
    let notes = messages[messages.len() - 2]["content"].as_str().unwrap();
    assert!(
        notes.starts_with("My notes so far (thinking stopped at its budget):\n")
            && notes.contains("the sum should skip None values")
            && notes.chars().count() < 4200,
        "{notes}"
    );
    assert_eq!(messages[messages.len() - 2]["role"], "assistant");
    assert_eq!(
        messages[messages.len() - 1]["content"],
        "Your thinking reached its budget, so it was stopped; your notes are above. Do not think further: answer now with one tool call, or with the final JSON if you are done."
    );
    // The requests after the retry think as configured again.
    assert!(model.requests()[2].get("reasoning_effort").is_none());
    assert!(
        r.stderr.contains("thinking passed its budget (100 tokens)"),
        "{}",
        r.stderr
    );
    assert!(p.run_log().contains("\"think_budget\""));
}

#[test]
fn a_whole_reply_that_thought_past_the_budget_with_no_answer_is_asked_again() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::EndlessThinking("hmm, ".into()),
        Scripted::final_done("answered"),
    ]);
    let r = run_with(
        &p,
        &model,
        "say hello",
        &["--no-stream"],
        &[("SLMCODE_THINK_BUDGET", "100")],
    );
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_eq!(r.answer["summary"], "answered");
    assert_eq!(model.requests()[1]["reasoning_effort"], "low");
}

#[test]
fn within_the_budget_or_with_none_nothing_is_stopped() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::Reasoned("short thought".repeat(20), String::new()),
        Scripted::final_done("answered"),
    ]);
    let r = run_with(
        &p,
        &model,
        "say hello",
        &[],
        &[("SLMCODE_THINK_BUDGET", "0")],
    );
    // No budget: the empty answer is asked to be repaired, as before; nothing was stopped.
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert!(
        !r.stderr.contains("thinking passed its budget"),
        "{}",
        r.stderr
    );
    assert!(model.requests()[1].get("reasoning_effort").is_none());
}
