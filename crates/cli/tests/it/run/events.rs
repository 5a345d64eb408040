//! `slmcode run --events`: the run's event stream as JSON lines — what every front end reads.
//! Built from the loop's typed events, never from the progress text.

use super::*;

/// The events a run printed on stdout, in order.
fn events_of(p: &Project, model: &FakeModel, task: &str) -> (Vec<Value>, String) {
    let out = run_command(p, model, task, &["--events"], &[])
        .output()
        .expect("run slmcode");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let events = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("event").is_some())
        .collect();
    (events, String::from_utf8_lossy(&out.stderr).to_string())
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["event"].as_str()).collect()
}

#[test]
fn a_run_streams_its_events_in_order_with_outcomes_and_diffs() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::Reasoned(
            "all good".into(),
            r#"{"status":"done","summary":"fixed","files_changed":["app.py"],"notes":""}"#.into(),
        ),
    ]);
    let (events, stderr) = events_of(&p, &model, "make total() skip None");
    let k = kinds(&events);
    assert_eq!(k.first(), Some(&"started"), "{k:?}\n{stderr}");
    assert_eq!(k.get(1), Some(&"message"), "{k:?}");
    assert_eq!(k.last(), Some(&"final"), "{k:?}");
    assert_eq!(events[0]["model"], "test-model", "{:?}", events[0]);
    assert!(events[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "ws_edit"));
    assert_eq!(events[1]["text"], "make total() skip None");

    // Each call: its turn, its canonical arguments, then its typed outcome and the text.
    let calls: Vec<&Value> = events.iter().filter(|e| e["event"] == "call").collect();
    assert_eq!(calls.len(), 2, "{k:?}");
    assert_eq!(calls[1]["name"], "ws_edit");
    assert_eq!(calls[1]["turn"], 2);
    assert_eq!(calls[1]["args"]["path"], "app.py");
    let results: Vec<&Value> = events.iter().filter(|e| e["event"] == "result").collect();
    assert_eq!(
        results[1]["outcome"]["outcome"], "edited",
        "{:?}",
        results[1]
    );
    assert_eq!(results[1]["outcome"]["rung"], "exact", "{:?}", results[1]);
    assert_eq!(results[1]["is_error"], false);

    // The edit's diff, once, right after its result; the read changed nothing.
    let changed: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "file_changed")
        .collect();
    assert_eq!(changed.len(), 1, "{k:?}");
    assert_eq!(changed[0]["path"], "app.py");
    assert_eq!(
        (changed[0]["added"].as_u64(), changed[0]["removed"].as_u64()),
        (Some(1), Some(1))
    );
    let diff = changed[0]["diff"].as_str().unwrap();
    assert!(diff.contains("-    return sum(xs)\n"), "{diff}");
    assert!(
        diff.contains("+    return sum(x for x in xs if x is not None)\n"),
        "{diff}"
    );
    let at = |kind: &str| k.iter().position(|x| *x == kind).unwrap();
    let edit_result = k.iter().rposition(|x| *x == "result").unwrap();
    assert_eq!(at("file_changed"), edit_result + 1, "{k:?}");

    // The reply as it streamed: its reasoning and its text, in pieces that add up.
    let pieces = |kind: &str| -> String {
        events
            .iter()
            .filter(|e| e["event"] == kind)
            .filter_map(|e| e["text"].as_str())
            .collect()
    };
    assert_eq!(pieces("reasoning"), "all good");
    assert!(
        pieces("text").contains(r#""status":"done""#),
        "{}",
        pieces("text")
    );

    // Every turn has its budget and its end; the final answer is the run's.
    assert_eq!(k.iter().filter(|x| **x == "turn").count(), 3);
    assert_eq!(k.iter().filter(|x| **x == "turn_ended").count(), 3);
    let reply = events.iter().find(|e| e["event"] == "reply").unwrap();
    assert!(reply["window"].as_u64().unwrap() > 0, "{reply:?}");
    let last = events.last().unwrap();
    assert_eq!(last["answer"]["status"], "done");
    assert_eq!(last["answer"]["files_changed"], json!(["app.py"]));
    assert_eq!(last["turns"], 3);
    assert_fixed(&p);
}

#[test]
fn without_events_stdout_holds_only_the_answer() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![read_app(), fix_app(), Scripted::final_done("fixed")]);
    let r = run(&p, &model, "make total() skip None");
    // `run` reads stdout as one JSON value: anything else there makes it null.
    assert_eq!(r.answer["status"], "done", "{}", r.stderr);
    assert_fixed(&p);
}
