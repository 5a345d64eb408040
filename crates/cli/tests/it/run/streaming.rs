//! A server whose streaming of tool calls is broken (a stream that comes back empty, or call
//! pieces that do not add up, while tools were offered) is asked again without streaming, and
//! the run stays with whole replies.

use super::*;

#[test]
fn a_broken_stream_is_asked_again_whole_for_the_rest_of_the_run() {
    for empty in [true, false] {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::start(vec![
            Scripted::BrokenWhenStreamed(Box::new(read_app()), empty),
            fix_app(),
            Scripted::final_done("fixed"),
        ]);
        let r = run(&p, &model, "make total() skip None");
        assert_done(&r, &["app.py"]);
        assert_fixed(&p);
        let streamed: Vec<bool> = model
            .requests()
            .iter()
            .map(|r| r["stream"] == json!(true))
            .collect();
        assert_eq!(streamed, vec![true, false, false, false], "empty: {empty}");
        assert_eq!(
            r.stderr.matches("asking again without streaming").count(),
            1,
            "{}",
            r.stderr
        );
        let why = if empty {
            "came back empty"
        } else {
            "had tool-call pieces that do not make a call"
        };
        assert!(r.stderr.contains(why), "{}", r.stderr);
    }
}

#[test]
fn a_models_json_slip_is_not_blamed_on_the_stream() {
    // A trailing comma is the model's, and repaired as always: streaming goes on.
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        Scripted::Calls(
            String::new(),
            vec![("ws_read".into(), "{\"path\": \"app.py\",}".into())],
        ),
        Scripted::final_done("read"),
    ]);
    let r = run(&p, &model, "read app.py");
    assert_done(&r, &[]);
    assert!(!r.stderr.contains("without streaming"), "{}", r.stderr);
    assert!(model.requests().iter().all(|r| r["stream"] == json!(true)));
}

#[test]
fn a_tool_call_index_sizes_nothing() {
    // A server may number a streamed call anything; 10^9 must not become a billion calls (nor
    // the memory for them). The call is read as the reply's one call, at once.
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        Scripted::CallAtIndex(
            1_000_000_000,
            "ws_read".into(),
            json!({"path": "app.py"}).to_string(),
        ),
        Scripted::final_done("read"),
    ]);
    let r = run_within(
        &p,
        &model,
        "read app.py",
        &[],
        &[],
        std::time::Duration::from_secs(20),
    )
    .unwrap_or_else(|waited| panic!("the run was still going after {waited:?}"));
    assert_done(&r, &[]);
    assert!(
        result_sent(&model, 1).contains("def total(xs):"),
        "the call at index 10^9 ran: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("without streaming"), "{}", r.stderr);
}
