//! A run with more messages than the first (the interactive session's core): each message's
//! changes are undone exactly, from its own checkpoint, and its turns leave the history.
//! Driven through the agent library against the OpenAI test server.

use std::sync::{Arc, Mutex};

use super::*;
use slmcode_aci::{Config, Registry, Workspace};
use slmcode_agent::backend::{Backend, BackendOptions};
use slmcode_agent::evolve::Arm;
use slmcode_agent::run::{Agent, Event, RunSettings, ToolMode, UndoError};
use tokio_util::sync::CancellationToken;

fn settings(task: &str) -> RunSettings {
    RunSettings {
        task: task.into(),
        model: "test-model".into(),
        max_turns: 10,
        max_tokens: 1000,
        sampling: Vec::new(),
        context_window: 32_000,
        context_from: "test".into(),
        arm: Arm::SearchReplace,
        runaway: slmcode_agent::runaway::RunawayLimits {
            loop_chars: 4000,
            text_chars: 100_000,
        },
        tool_mode: ToolMode::Native,
        think: "auto".into(),
        think_budget: 0,
        plans: false,
        map_within: Vec::new(),
        verify: None,
        verify_retries: 0,
    }
}

#[test]
fn undo_puts_back_one_messages_files_and_drops_its_turns() {
    // Checkpoints are sealed with the user's key: this process's own data directory.
    std::env::set_var("XDG_DATA_HOME", crate::common::data_dir());
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::final_done("fixed"),
        Scripted::call(
            "ws_edit",
            json!({"path": "app.py", "old_str": "def total(xs):\n", "new_str": "def total(xs):\n    \"\"\"Sum.\"\"\"\n"}),
        ),
        Scripted::call("ws_write", json!({"path": "notes.txt", "content": "new\n"})),
        Scripted::final_done("documented"),
        Scripted::final_done("nothing more"),
    ]);
    let ws = Workspace::open(p.root(), Config::default()).unwrap();
    let backend = Backend::new(&model.url, None, BackendOptions::default()).unwrap();
    let seen: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = seen.clone();
    let mut agent = Agent::new(
        backend,
        Arc::new(Registry::coding()),
        Arc::new(Mutex::new(ws)),
        settings("make total() skip None"),
        None,
        Box::new(move |e: &Event| sink.lock().unwrap().push(e.clone())),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let first = rt
        .block_on(agent.first_message(CancellationToken::new()))
        .unwrap();
    assert_eq!(first.answer.status, "done");
    assert_fixed(&p);
    let second = rt
        .block_on(agent.follow("now add a docstring", CancellationToken::new()))
        .unwrap();
    assert_eq!(second.answer.status, "done", "{:?}", second.answer);
    assert!(std::fs::read_to_string(p.path("app.py"))
        .unwrap()
        .contains("\"\"\"Sum.\"\"\""));
    assert!(p.path("notes.txt").exists());
    let before_undo = model.requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .len();

    // /undo: the second message's files are back byte for byte, the created file is gone, and
    // the first message's fix stays.
    let undone = agent.undo(1).unwrap();
    assert_eq!(undone.messages, vec!["now add a docstring".to_string()]);
    assert_fixed(&p);
    assert!(!p.path("notes.txt").exists(), "{:?}", undone.restored);
    assert_eq!(agent.undoable(), 1);

    // The next request is the conversation as it was after the first message, plus the new one.
    let third = rt
        .block_on(agent.follow("anything else?", CancellationToken::new()))
        .unwrap();
    assert_eq!(third.answer.status, "done");
    let last = model.requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert!(last.len() < before_undo, "{} vs {before_undo}", last.len());
    let texts: Vec<String> = last
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert!(
        !texts.iter().any(|t| t.contains("now add a docstring")),
        "{texts:#?}"
    );
    assert!(texts.iter().any(|t| t.contains("anything else?")));

    // Messages are on the stream, numbered; undoing more than there is says so and changes nothing.
    let messages: Vec<usize> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::Message { number, .. } => Some(*number),
            _ => None,
        })
        .collect();
    assert_eq!(messages, vec![1, 2, 2]);
    assert!(matches!(
        agent.undo(5),
        Err(UndoError::TooMany { have: 2, asked: 5 })
    ));
    assert_fixed(&p);

    // /undo of everything: the file as it was before the session, the task message kept.
    agent.undo(2).unwrap();
    assert_eq!(std::fs::read_to_string(p.path("app.py")).unwrap(), APP);
    assert!(agent.session_diff().is_empty());
}
