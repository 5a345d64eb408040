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

/// Models trained on other agents call those agents' tools: where the meaning is plain the
/// call runs as ours and the result names our tool; where it is not, nothing runs and the
/// model gets the closest tool with an example.
#[test]
fn other_harnesses_tool_names_run_as_ours() {
    let codex = "*** Begin Patch\n*** Add File: NOTES.md\n+total skips None\n*** End Patch";
    for args in MODES {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::start(vec![
            // Cursor's read_file, written as text.
            Scripted::Text(
                "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"target_file\": \"app.py\"}}</tool_call>".into(),
            ),
            // Cursor's edit_file with a sketch: no exact text to replace.
            Scripted::call(
                "edit_file",
                json!({"target_file": "app.py", "code_edit": "// ... existing code ...\n    return 0"}),
            ),
            // Claude Code's Edit, native.
            Scripted::call(
                "Edit",
                json!({"file_path": "app.py", "old_string": "    return sum(xs)", "new_string": "    return sum(x for x in xs if x is not None)"}),
            ),
            // Codex's apply_patch adding a file, native.
            Scripted::call("apply_patch", json!({"input": codex})),
            // Claude Code's Bash, timeout in milliseconds.
            Scripted::call("Bash", json!({"command": "cat app.py", "timeout": 30000})),
            Scripted::final_done("fixed"),
        ]);
        let r = run_with(&p, &model, "make total skip None", args, &[]);
        assert_done(&r, &["NOTES.md", "app.py"]);
        assert_fixed(&p);
        assert_eq!(
            std::fs::read_to_string(p.path("NOTES.md")).unwrap(),
            "total skips None\n"
        );
        let read = result_sent(&model, 1);
        assert!(
            read.starts_with("[ws_read result]\n     1|def total"),
            "{read}"
        );
        assert!(
            read.contains(
                "[read_file is not a tool here: this ran as ws_read; call it ws_read next time]"
            ),
            "{read}"
        );
        let sketch = result_sent(&model, 2);
        assert!(
            sketch.contains("edit_file is another tool set's name, not a tool here")
                && sketch.contains("The closest tool here is ws_edit")
                && sketch.contains("Example: ws_edit {"),
            "{sketch}"
        );
        assert!(
            result_sent(&model, 3).contains("[Edit is not a tool here: this ran as ws_edit"),
            "{}",
            result_sent(&model, 3)
        );
        assert!(
            result_sent(&model, 4).contains("this ran as ws_write"),
            "{}",
            result_sent(&model, 4)
        );
        let shell = result_sent(&model, 5);
        assert!(
            shell.contains("return sum(x for x in xs if x is not None)")
                && shell.contains("this ran as ws_shell"),
            "{shell}"
        );
    }
}

/// A call in a format we read but written wrong is answered as a call that was not
/// understood, with how to write it — never as an invalid final answer.
#[test]
fn an_unreadable_call_is_answered_as_a_call() {
    for args in MODES {
        let p = Project::new();
        p.write("a.txt", "one\n");
        let model = FakeModel::start(vec![
            Scripted::Text("[TOOL_CALLS]ws_read{\"path\": }".into()),
            Scripted::Text(
                "<tool_call>{\"name\": \"ws_read\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>".into(),
            ),
            Scripted::final_done("read it"),
        ]);
        let r = run_with(&p, &model, "read a.txt", args, &[]);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        let told = result_sent(&model, 1);
        assert!(
            told.starts_with("Your tool call was not understood: a [TOOL_CALLS] call for ws_read whose JSON could not be read: ")
                && told.contains("Write it as <tool_call>{\"name\": \"TOOL\", \"arguments\": {...}}</tool_call>"),
            "{told}"
        );
        assert!(!told.contains("final answer"), "{told}");
    }
}

/// The formats models write with their own special tokens, when the server passes them
/// through as text: the same task solved with each, streamed and whole.
#[test]
fn a_task_solved_with_each_special_token_format() {
    let old = "    return sum(xs)";
    let new = "    return sum(x for x in xs if x is not None)";
    let json_edit = json!({"path": "app.py", "old_str": old, "new_str": new}).to_string();
    let formats: Vec<(&str, String, String)> = vec![
        (
            "mistral",
            "[TOOL_CALLS]ws_read[ARGS]{\"path\": \"app.py\"}".into(),
            format!("[TOOL_CALLS]ws_edit{json_edit}"),
        ),
        (
            "harmony",
            "<|channel|>commentary to=functions.ws_read <|constrain|>json<|message|>{\"path\":\"app.py\"}<|call|>".into(),
            format!("<|start|>assistant to=functions.ws_edit<|channel|>commentary json<|message|>{json_edit}<|call|>"),
        ),
        (
            "kimi",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.ws_read:0<|tool_call_argument_begin|>{\"path\": \"app.py\"}<|tool_call_end|><|tool_calls_section_end|>".into(),
            format!("<|tool_calls_section_begin|><|tool_call_begin|>functions.ws_edit:1<|tool_call_argument_begin|>{json_edit}<|tool_call_end|><|tool_calls_section_end|>"),
        ),
        (
            "deepseek v3.1",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>ws_read<｜tool▁sep｜>{\"path\": \"app.py\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>".into(),
            format!("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>ws_edit<｜tool▁sep｜>{json_edit}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        ),
        (
            "glm",
            "<tool_call>ws_read\n<arg_key>path</arg_key>\n<arg_value>app.py</arg_value>\n</tool_call>".into(),
            format!("<tool_call>ws_edit\n<arg_key>path</arg_key>\n<arg_value>app.py</arg_value>\n<arg_key>old_str</arg_key>\n<arg_value>{old}</arg_value>\n<arg_key>new_str</arg_key>\n<arg_value>{new}</arg_value>\n</tool_call>"),
        ),
        (
            "minimax",
            "<minimax:tool_call>\n<invoke name=\"ws_read\">\n<parameter name=\"path\">app.py</parameter>\n</invoke>\n</minimax:tool_call>".into(),
            format!("<minimax:tool_call>\n<invoke name=\"ws_edit\">\n<parameter name=\"path\">app.py</parameter>\n<parameter name=\"old_str\">{old}</parameter>\n<parameter name=\"new_str\">{new}</parameter>\n</invoke>\n</minimax:tool_call>"),
        ),
        (
            "gemma 4",
            "<|tool_call>call:ws_read{path:<|\"|>app.py<|\"|>}<tool_call|>".into(),
            format!("<|tool_call>call:ws_edit{{path:<|\"|>app.py<|\"|>,old_str:<|\"|>{old}<|\"|>,new_str:<|\"|>{new}<|\"|>}}<tool_call|>"),
        ),
    ];
    for (label, read, edit) in formats {
        for args in MODES {
            let p = Project::new();
            p.write("app.py", APP);
            let model = FakeModel::start(vec![
                Scripted::Text(read.clone()),
                Scripted::Text(edit.clone()),
                Scripted::final_done("fixed"),
            ]);
            let r = run_with(&p, &model, "make total skip None", args, &[]);
            assert_done(&r, &["app.py"]);
            assert_eq!(
                std::fs::read_to_string(p.path("app.py")).unwrap(),
                APP_FIXED,
                "{label} {args:?}: {}",
                r.stderr
            );
            assert!(
                result_sent(&model, 1).starts_with("[ws_read result]\n     1|def total"),
                "{label} {args:?}"
            );
        }
    }
}

/// Codex's apply_patch updating a file, in a run that teaches ws_edit: every edit tool is
/// callable in every run, so it runs as ws_patch and the model hears the right name.
#[test]
fn a_mapped_call_to_another_edit_tool_runs_in_any_run() {
    let codex = "*** Begin Patch\n*** Update File: app.py\n@@ def total(xs):\n-    return sum(xs)\n+    return sum(x for x in xs if x is not None)\n*** End Patch";
    for args in MODES {
        let p = Project::new();
        p.write("app.py", APP);
        let model = FakeModel::start(vec![
            read_app(),
            Scripted::call("apply_patch", json!({"input": codex})),
            Scripted::final_done("patched"),
        ]);
        let r = run_with(&p, &model, "make total skip None", args, &[]);
        assert_done(&r, &["app.py"]);
        assert_fixed(&p);
        let told = result_sent(&model, 2);
        assert!(
            told.contains("[apply_patch is not a tool here: this ran as ws_patch; call it ws_patch next time]"),
            "{told}"
        );
    }
}

#[test]
fn a_reply_of_unclosed_braces_is_answered_at_once() {
    use std::time::Duration;
    // 120 KB of `{` and a letter: every `{` opens an object that never closes. Reading it for
    // calls and for the final answer must not try each brace to the end of the reply (28 s of
    // JSON repair for this reply before); the model is told its answer is not valid.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let reply: String = (0..60_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{{{}", (b'a' + (x % 26) as u8) as char)
        })
        .collect();
    for args in MODES {
        let p = Project::new();
        let model = FakeModel::start(vec![
            Scripted::Text(reply.clone()),
            Scripted::final_done("nothing to do"),
        ]);
        let r = run_within(&p, &model, "look", args, &[], Duration::from_secs(20))
            .unwrap_or_else(|waited| panic!("{args:?}: still reading after {waited:?}"));
        assert_done(&r, &[]);
        assert!(
            result_sent(&model, 1).contains("Your final answer is not valid"),
            "{}",
            result_sent(&model, 1)
        );
    }
}
