//! Text calls through `slmcode run`, streamed and whole: calls the model only considered never
//! run, Qwen3-Coder values arrive as written, and of a broken call and a good one, the good
//! one runs and the model hears about the other.

use super::*;

/// Both ways a reply can come: streamed, then whole.
const MODES: [&[&str]; 2] = [&[], &["--no-stream"]];

const DELETE_B: &str =
    "<tool_call>{\"name\": \"ws_delete\", \"arguments\": {\"path\": \"b.txt\"}}</tool_call>";

#[test]
fn a_call_inside_the_reasoning_never_runs() {
    for args in MODES {
        let p = Project::new();
        p.write("a.txt", "one\n");
        p.write("b.txt", "two\n");
        let model = FakeModel::start(vec![
            // In a <think> block of the content.
            Scripted::Text(format!(
                "<think>\nLet's call a tool: {DELETE_B}\n\"Not the real call!\"\n</think>\n<tool_call>{{\"name\": \"ws_read\", \"arguments\": {{\"path\": \"a.txt\"}}}}</tool_call>"
            )),
            // In the server's reasoning field.
            Scripted::Reasoned(
                format!("I could delete it: {DELETE_B}"),
                "<tool_call>{\"name\": \"ws_list\", \"arguments\": {}}</tool_call>".into(),
            ),
            // gpt-oss's analysis channel.
            Scripted::Text(format!(
                "<|channel|>analysis<|message|>Or {DELETE_B}<|end|><|start|>assistant<|channel|>final<|message|><tool_call>{{\"name\": \"ws_read\", \"arguments\": {{\"path\": \"b.txt\"}}}}</tool_call>"
            )),
            Scripted::final_done("read both"),
        ]);
        let r = run_with(&p, &model, "read a.txt and b.txt", args, &[]);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert_eq!(
            std::fs::read_to_string(p.path("b.txt")).unwrap(),
            "two\n",
            "{args:?}: a call inside the reasoning ran"
        );
        assert!(
            result_sent(&model, 1).starts_with("[ws_read result]\n     1|one"),
            "{args:?}"
        );
        assert!(
            result_sent(&model, 2).starts_with("[ws_list result]"),
            "{args:?}"
        );
        assert!(
            result_sent(&model, 3).starts_with("[ws_read result]\n     1|two"),
            "{args:?}"
        );
    }
}

#[test]
fn qwen_xml_values_arrive_as_written() {
    let new = "    return sum(xs)  # <parameter=x>, <function=other> and <tool_call> are text here";
    for args in MODES {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::start(vec![
            read_app(),
            Scripted::Text(format!(
                "<tool_call>\n<function=ws_edit>\n<parameter=path>\napp.py\n</parameter>\n<parameter=old_str>\n    return sum(xs)\n</parameter>\n<parameter=new_str>\n{new}\n</parameter>\n</function>\n</tool_call>"
            )),
            Scripted::final_done("commented"),
        ]);
        let r = run_with(&p, &model, "comment the sum", args, &[]);
        assert_done(&r, &["app.py"]);
        assert_eq!(
            std::fs::read_to_string(p.path("app.py")).unwrap(),
            format!("def total(xs):\n{new}\n"),
            "{args:?}"
        );
    }
}

#[test]
fn of_a_broken_call_and_a_good_one_the_good_one_runs_and_the_model_is_told() {
    for args in MODES {
        let p = Project::new();
        p.write("a.txt", "one\n");
        p.write("b.txt", "two\n");
        let model = FakeModel::start(vec![
            Scripted::Text(
                "First try:\n{\"name\": \"ws_delete\", \"arguments\": {\"path\": \"b.txt\" \"recursive\": }}\nSecond try:\n{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.txt\"}}".into(),
            ),
            // Cohere Command R7B's action list.
            Scripted::Text(
                "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"ws_read\", \"parameters\": {\"path\": \"b.txt\"}}]<|END_ACTION|>".into(),
            ),
            Scripted::final_done("read both"),
        ]);
        let r = run_with(&p, &model, "read a.txt and b.txt", args, &[]);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert!(p.path("b.txt").exists(), "{args:?}");
        let first = result_sent(&model, 1);
        assert!(first.starts_with("[ws_read result]\n     1|one"), "{first}");
        assert!(
            first.contains("[another tool call in your reply could not be read (a JSON tool call that could not be read: "),
            "{first}"
        );
        assert!(
            result_sent(&model, 2).starts_with("[ws_read result]\n     1|two"),
            "{args:?}"
        );
    }
}
