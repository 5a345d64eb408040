//! Slow hardware, as llama.cpp's server shows it: a 503 "Loading model" while the model loads
//! (waited out, said, not counted as failed tries), the prompt's progress while a long prompt
//! is read (`return_progress`), and a first-token deadline apart from the silence allowed once
//! a reply flows.

use super::*;

/// llama-server's answer while it loads the model.
const LOADING: &str =
    r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#;

#[test]
fn a_loading_server_is_waited_out_and_said() {
    let p = Project::new();
    let mut script: Vec<Scripted> = (0..6)
        .map(|_| Scripted::Status(503, LOADING.into()))
        .collect();
    script.push(Scripted::final_done("ready"));
    let model = FakeModel::start(script);
    let r = run(&p, &model, "look");
    assert_done(&r, &[]);
    assert_eq!(model.requests().len(), 7);
    assert!(
        r.stderr
            .contains("[the server is loading the model; waiting ("),
        "{}",
        r.stderr
    );
}

#[test]
fn the_prompts_progress_is_shown_while_streaming() {
    let p = Project::new();
    let model = FakeModel::start(vec![Scripted::final_done("ok")]);
    let r = run(&p, &model, "look");
    assert_done(&r, &[]);
    assert_eq!(model.requests()[0]["return_progress"], json!(true));
    assert!(r.stderr.contains("[reading the prompt: "), "{}", r.stderr);
    // Whole replies have no progress to report: not asked for.
    let model = FakeModel::start(vec![Scripted::final_done("ok")]);
    let r = run_with(&p, &model, "look", &["--no-stream"], &[]);
    assert_done(&r, &[]);
    assert!(model.requests()[0].get("return_progress").is_none());
}

#[test]
fn nothing_before_the_first_token_deadline_is_one_clear_error() {
    for args in [&[][..], &["--no-stream"][..]] {
        let p = Project::new();
        let model = FakeModel::start(vec![Scripted::Slow(
            4000,
            Box::new(Scripted::final_done("too late")),
        )]);
        let started = std::time::Instant::now();
        let r = run_with(
            &p,
            &model,
            "look",
            args,
            &[("SLMCODE_FIRST_TOKEN_TIMEOUT", "1")],
        );
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(r.stderr.contains("sent nothing within 1 s"), "{}", r.stderr);
        // Not asked again: another try would wait as long.
        assert_eq!(model.requests().len(), 1);
        assert!(
            started.elapsed().as_secs() < 4,
            "{args:?}: {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_reply_that_never_finishes_ends_at_the_reply_deadline() {
    // Events flow — empty deltas, or keep-alive comments — but the reply never ends: the run
    // ends with one clear error naming the setting, within a generous bound, not never.
    for comments in [false, true] {
        let p = Project::new();
        let model = FakeModel::start(vec![Scripted::NeverFinishes(comments)]);
        let r = run_within(
            &p,
            &model,
            "look",
            &[],
            &[("SLMCODE_REPLY_TIMEOUT", "2")],
            std::time::Duration::from_secs(20),
        )
        .unwrap_or_else(|waited| {
            panic!("comments {comments}: the run was still waiting after {waited:?}")
        });
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(
            r.stderr.contains("did not finish its reply within 2 s")
                && r.stderr.contains("reply_timeout"),
            "{}",
            r.stderr
        );
        // Not asked again: another try would stream as long.
        assert_eq!(model.requests().len(), 1);
    }
}
