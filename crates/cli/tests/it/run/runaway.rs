//! Runaway generation through `slmcode run`: a reply stuck in a loop is stopped on the stream
//! and the model told in one line; a long whole-file write is not cut.

use super::*;

const MODES: [&[&str]; 2] = [&[], &["--no-stream"]];

#[test]
fn a_looping_reply_is_stopped_early_and_the_model_is_told() {
    for args in MODES {
        let p = Project::new();
        p.write("a.txt", "one\n");
        let model = FakeModel::start(vec![
            Scripted::Endless("I will read the file now. ".into()),
            Scripted::call("ws_read", json!({"path": "a.txt"})),
            Scripted::final_done("read it"),
        ]);
        let started = std::time::Instant::now();
        let r = run_with(&p, &model, "read a.txt", args, &[]);
        // Generous: streamed, the reply would never end by itself.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{args:?}: {:?}",
            started.elapsed()
        );
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        let told = result_sent(&model, 1);
        assert_eq!(
            told,
            "Your reply was stopped early: it repeated the same 26-character span over its last 3000 characters, so nothing ran. Answer with one tool call, or with the final JSON if you are done.",
            "{args:?}"
        );
        assert!(r.stderr.contains("reply stopped early"), "{}", r.stderr);
        assert!(result_sent(&model, 2).starts_with("     1|one"), "{args:?}");
    }
}

#[test]
fn a_long_whole_file_write_is_not_cut_and_the_thresholds_are_config() {
    let content: String = (0..2500)
        .map(|i| format!("value_{i} = {}\n", i * 31 % 1009))
        .collect();
    assert!(content.len() > 30_000);
    for args in MODES {
        let p = Project::new();
        let call =
            json!({"name": "ws_write", "arguments": {"path": "table.py", "content": content}});
        let model = FakeModel::start(vec![
            Scripted::Text(format!("<tool_call>{call}</tool_call>")),
            Scripted::final_done("wrote it"),
        ]);
        let r = run_with(&p, &model, "write the table", args, &[]);
        assert_done(&r, &["table.py"]);
        assert_eq!(
            std::fs::read_to_string(p.path("table.py")).unwrap(),
            content
        );
        // A project may turn the loop check off: the same looping text then runs to its end.
        let p = Project::new();
        p.write(
            ".slmcode/config.yaml",
            "runaway_loop_chars: 0\nrunaway_text_chars: 0\n",
        );
        let model = FakeModel::start(vec![
            Scripted::Truncated("again ".repeat(2000)),
            Scripted::final_done("gave up"),
        ]);
        let r = run_with(&p, &model, "loop", args, &[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(
            result_sent(&model, 1).starts_with("Your reply was cut off at max_tokens"),
            "{}",
            result_sent(&model, 1)
        );
    }
}
