//! The session as a person uses it: typed into a real pseudo-terminal, the screen read as the
//! terminal draws it.

use super::*;

/// The screen with every run of digits as `N` (ports, times, token counts, run ids), so a
/// snapshot pins the words and the layout.
fn steady(screen: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in screen.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn a_message_streams_its_turns_with_one_line_per_call_and_the_diff() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        read_app(),
        fix_app(),
        Scripted::Reasoned(
            "The edit landed; nothing else to change.".into(),
            final_json("total() skips None now"),
        ),
    ]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 40, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("make total() skip None");
    term.wait_for("total() skips None now");
    let screen = term.wait_for("done ·");
    assert_eq!(
        std::fs::read_to_string(p.path("app.py")).unwrap(),
        APP_FIXED
    );
    insta::assert_snapshot!("chat_a_message_40_columns", steady(&screen));
    assert_eq!(term.leave(), 0);
    // No colour under NO_COLOR.
    assert!(!term.raw().contains("\x1b[32m"), "{:?}", term.raw());
}

/// A final answer as the model writes it.
fn final_json(summary: &str) -> String {
    json!({"status": "done", "summary": summary, "files_changed": ["app.py"], "notes": ""})
        .to_string()
}

#[test]
fn think_show_streams_the_reasoning_and_fold_folds_it() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::Reasoned("weighing the first option".into(), final_json("one")),
        Scripted::Reasoned("weighing the second option".into(), final_json("two")),
    ]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("/think show");
    term.wait_for("reasoning: show");
    term.line("first");
    term.wait_for("done ·");
    assert!(
        term.screen().contains("weighing the first option"),
        "{}",
        term.screen()
    );
    term.line("/think fold");
    term.wait_for("reasoning: fold");
    term.line("second");
    term.wait_for_n("done ·", 2);
    let screen = term.screen();
    assert!(!screen.contains("weighing the second option"), "{screen}");
    assert!(
        screen.contains("thinking… 26 chars (/think show)"),
        "{screen}"
    );
    assert_eq!(term.leave(), 0);
}

#[test]
fn diffs_are_coloured_on_a_colour_terminal() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![read_app(), fix_app(), Scripted::final_done("fixed")]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 100, &[]);
    term.wait_for("›");
    term.line("make total() skip None");
    term.wait_for("turn(s)");
    let raw = term.raw();
    assert!(
        raw.contains("\x1b[32m    +    return sum(x for x in xs if x is not None)"),
        "{raw:?}"
    );
    assert!(raw.contains("\x1b[31m    -    return sum(xs)"), "{raw:?}");
    assert_eq!(term.leave(), 0);
}

#[test]
fn ctrl_c_stops_a_long_turn_and_the_session_goes_on() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::Endless("la ".into()),
        Scripted::final_done("after the stop"),
    ]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("sing");
    term.wait_for("la la la");
    term.send("\x03");
    // The request is cancelled: the server sees the client hang up, soon.
    let seen = within(Duration::from_secs(3), || {
        (model.hung_up() > 0).then_some(())
    });
    assert!(seen.is_some(), "the server never saw the request cancelled");
    term.wait_for("interrupted");
    term.line("go on");
    term.wait_for("after the stop");
    // The history stayed valid: the next request was accepted and answered.
    let last = model.requests().len() - 1;
    let users = user_messages(&model, last);
    assert!(users.iter().any(|m| m.contains("go on")), "{users:?}");
    assert_eq!(term.leave(), 0);
}

#[test]
fn ctrl_c_kills_a_running_command_and_everything_it_started() {
    let p = Project::new();
    let model = FakeModel::start(vec![Scripted::call(
        "ws_shell",
        json!({"command": "sleep 47.25", "timeout_sec": 600}),
    )]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("wait a while");
    let started = within(Duration::from_secs(20), || {
        process_with("sleep 47.25").then_some(())
    });
    assert!(
        started.is_some(),
        "the command never started:\n{}",
        term.screen()
    );
    term.send("\x03");
    let gone = within(Duration::from_secs(3), || {
        (!process_with("sleep 47.25")).then_some(())
    });
    assert!(gone.is_some(), "a process of the command survived Ctrl-C");
    term.wait_for("interrupted");
    // A command the user runs with ! stops the same way.
    term.wait_for_n("›", 2);
    term.line("!sleep 48.5");
    let started = within(Duration::from_secs(20), || {
        process_with("sleep 48.5").then_some(())
    });
    assert!(
        started.is_some(),
        "the command never started:\n{}",
        term.screen()
    );
    term.send("\x03");
    let gone = within(Duration::from_secs(3), || {
        (!process_with("sleep 48.5")).then_some(())
    });
    assert!(gone.is_some(), "the user's command survived Ctrl-C");
    term.wait_for("cancelled");
    assert_eq!(term.leave(), 0);
}

#[test]
fn a_command_is_approved_inline() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::call("ws_shell", json!({"command": "echo approved-by-you"})),
        Scripted::final_done("made it"),
    ]);
    let args = session_args(&p, &model, &["--mode", "ask"]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("make the file");
    term.wait_for("allow? y / n");
    assert!(
        term.screen()
            .contains("ws_shell wants to run echo approved-by-you"),
        "{}",
        term.screen()
    );
    assert_eq!(model.requests().len(), 1, "nothing runs before the answer");
    term.line("y");
    term.wait_for("made it");
    assert!(
        term.screen()
            .contains("ws_shell echo approved-by-you · exit 0"),
        "{}",
        term.screen()
    );
    let result = model.requests()[1]["messages"].to_string();
    assert!(
        result.contains("approved-by-you\\n[exit code 0]"),
        "{result}"
    );
    assert_eq!(term.leave(), 0);
}

#[test]
fn undo_model_and_diff_in_a_terminal() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::with_models(
        vec![
            read_app(),
            fix_app(),
            Scripted::final_done("fixed it"),
            Scripted::final_done("other model here"),
        ],
        vec![
            json!({"id": "test-model", "object": "model"}),
            json!({"id": "other-model", "object": "model"}),
        ],
    );
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("make total() skip None");
    term.wait_for("fixed it");
    term.line("/diff");
    term.wait_for("app.py · +1 −1");
    term.line("/undo");
    term.wait_for("undid 1 message(s)");
    assert_eq!(std::fs::read_to_string(p.path("app.py")).unwrap(), APP);
    term.line("/model other-model");
    term.wait_for("model other-model");
    term.line("who are you?");
    term.wait_for("other model here");
    let last = model.requests().len() - 1;
    assert_eq!(model.requests()[last]["model"], "other-model");
    // The undone message's turns are gone, and its task withdrawn.
    let messages = model.requests()[last]["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(messages.len(), 3, "{messages:?}");
    let history = serde_json::to_string(&messages).unwrap();
    assert!(
        !history.contains("Task: make total() skip None"),
        "{history}"
    );
    assert!(
        history.contains("took their first message back"),
        "{history}"
    );
    // The screen, kept for a person to read (the README's transcript is one of these).
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("chat-transcript.txt"),
        term.screen(),
    );
    term.line("/exit");
    assert_eq!(term.wait_exit(), 0);
}

#[test]
fn ctrl_c_twice_at_the_prompt_leaves_and_the_session_is_resumable() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::final_done("noted kumquat"),
        Scripted::final_done("it was kumquat"),
    ]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.line("remember kumquat");
    term.wait_for("noted kumquat");
    let prompts = term.wait_for("›").matches('›').count();
    term.send("\x03");
    term.wait_for("Ctrl-C again");
    // The second Ctrl-C at the next prompt.
    term.wait_for_n("›", prompts + 1);
    term.send("\x03");
    assert_eq!(term.wait_exit(), 0);
    assert!(
        term.screen().contains("slmcode --resume"),
        "{}",
        term.screen()
    );
    // `slmcode` alone, in the project, with --resume: the conversation goes on.
    let resume = session_args(&p, &model, &["--resume"]);
    let mut term = Term::start(&resume, 80, &[("NO_COLOR", "1")]);
    term.wait_for("continuing run");
    term.line("what was it?");
    term.wait_for("it was kumquat");
    let history = model.requests()[1]["messages"].to_string();
    assert!(history.contains("remember kumquat"), "{history}");
    assert_eq!(term.leave(), 0);
}

#[test]
fn slmcode_alone_is_a_session_in_the_current_directory() {
    let p = Project::new();
    let model = FakeModel::start(vec![Scripted::final_done("hello there")]);
    let mut term = Term::start_in(
        Some(p.root()),
        &[],
        80,
        &[("NO_COLOR", "1"), ("SLMCODE_ENDPOINT", &model.url)],
    );
    term.wait_for("›");
    term.line("hi");
    term.wait_for("hello there");
    assert_eq!(term.leave(), 0);
    assert!(p.path(".slmcode/runs").is_dir());
}

#[test]
fn the_editor_takes_multi_line_messages_completes_and_keeps_history_per_project() {
    let p = Project::new();
    let model = FakeModel::start(vec![
        Scripted::final_done("two lines read"),
        Scripted::final_done("again"),
    ]);
    let args = session_args(&p, &model, &[]);
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    // A line ending in a backslash goes on to the next.
    term.line("first line \\");
    term.wait_for("\n·");
    term.line("second line");
    term.wait_for("two lines read");
    let users = user_messages(&model, 0);
    assert!(
        users.iter().any(|m| m.contains("first line \nsecond line")),
        "{users:?}"
    );
    // Tab completes a command (typed at the next prompt).
    term.wait_for_n("›", 2);
    term.send("/he");
    term.wait_for("› /he");
    term.send("\t");
    // The menu of completions (without colour, the chosen one in capitals).
    term.wait_for("/HELP WHAT YOU CAN TYPE");
    // Enter takes the completion (the menu is open), Enter again sends the line.
    term.send("\r");
    std::thread::sleep(Duration::from_millis(100));
    term.send("\r");
    term.wait_for("Ctrl-C stops a turn; twice at the prompt");
    assert_eq!(term.leave(), 0);
    // The next session in this project recalls the last line with Up.
    let mut term = Term::start(&args, 80, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    term.send("\x1b[A");
    term.wait_for("› /help");
    term.send("\x1b[A");
    term.wait_for("second line");
    term.send("\x03");
    assert_eq!(term.leave(), 0);
}

#[test]
fn at_file_bang_refused_and_ctrl_c_at_an_approval_in_a_narrow_terminal() {
    let p = Project::new();
    p.write("app.py", APP);
    let model = FakeModel::start(vec![
        Scripted::call("ws_shell", json!({"command": "echo first"})),
        Scripted::final_done("asked and stopped"),
    ]);
    let args = session_args(&p, &model, &["--mode", "ask"]);
    let mut term = Term::start(&args, 40, &[("NO_COLOR", "1")]);
    term.wait_for("›");
    // The policy refuses a command substitution typed by the user, as it would the model's.
    term.line("!echo $(id)");
    term.wait_for("ws_shell refused");
    term.wait_for_n("›", 2);
    term.line("what is in @app.py?");
    term.wait_for("allow? y / n");
    // Ctrl-C at the question: no, and the message stops.
    term.send("\x03");
    let screen = term.wait_for("interrupted");
    let users = user_messages(&model, 0);
    assert!(
        users
            .iter()
            .any(|m| m.contains("[@app.py]") && m.contains("total")),
        "{users:?}"
    );
    assert_eq!(
        model.requests().len(),
        1,
        "the stopped message asked no more"
    );
    insta::assert_snapshot!("chat_refused_attached_stopped_40_columns", steady(&screen));
    assert_eq!(term.leave(), 0);
}
