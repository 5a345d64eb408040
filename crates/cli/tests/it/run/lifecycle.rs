//! A run's edges: the API key sent but never logged or shown to the model, runs listed and shown,
//! Ctrl-C, an empty task.

use super::*;

#[test]
fn the_api_key_is_sent_but_never_logged() {
    let p = Project::new();
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("slmcode");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.yaml"), "api_key_env: TEST_MODEL_KEY\n").unwrap();
    let model = FakeModel::start(vec![Scripted::final_done("ok")]);
    let key = "sk-test-4f9a2b7c1d";
    let r = run_with(
        &p,
        &model,
        "nothing",
        &[],
        &[
            ("XDG_CONFIG_HOME", home.path().to_str().unwrap()),
            ("TEST_MODEL_KEY", key),
        ],
    );
    assert_done(&r, &[]);
    assert_eq!(
        model.auth_headers()[0].as_deref(),
        Some(format!("Bearer {key}").as_str())
    );
    for entry in std::fs::read_dir(p.path(".slmcode/runs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(key));
    }
    assert!(!r.stderr.contains(key));
}

/// The model tries every way to the API key: the command's environment, every process it can
/// see in /proc (the harness's own fork included), and a project file that holds the key. The
/// key reaches neither the model, nor the trajectory, nor the terminal.
#[test]
fn the_model_never_sees_the_api_key() {
    // With namespaces the harness is invisible; without (sandbox: landlock) it is in /proc,
    // and /proc/*/environ reaches it.
    for sandbox in ["auto", "landlock"] {
        the_model_never_sees_the_api_key_with(sandbox);
    }
}

fn the_model_never_sees_the_api_key_with(sandbox: &str) {
    let p = Project::new();
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("slmcode");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.yaml"), "api_key_env: TEST_MODEL_KEY\n").unwrap();
    let key = "sk-test-4f9a2b7c1d-secret";
    p.write(".env", format!("TEST_MODEL_KEY={key}\n"));
    let model = FakeModel::start(vec![
        Scripted::call("ws_shell", json!({"command": "env"})),
        Scripted::call(
            "ws_shell",
            json!({"command": "cat /proc/*/environ | tr '\\0' '\\n'"}),
        ),
        Scripted::call(
            "ws_shell",
            json!({"command": "cat /proc/1/environ /proc/$PPID/environ"}),
        ),
        Scripted::call("ws_shell", json!({"command": "cat .env"})),
        Scripted::call("ws_read", json!({"path": ".env"})),
        Scripted::final_done("looked"),
    ]);
    let r = run_with(
        &p,
        &model,
        "find the key",
        &[],
        &[
            ("XDG_CONFIG_HOME", home.path().to_str().unwrap()),
            ("TEST_MODEL_KEY", key),
            ("OTHER_SERVICE_TOKEN", "tok-0123456789abcdef"),
            ("SLMCODE_SANDBOX", sandbox),
        ],
    );
    assert_done(&r, &[]);
    // The key went where it belongs: the Authorization header.
    assert_eq!(
        model.auth_headers()[0].as_deref(),
        Some(format!("Bearer {key}").as_str())
    );
    let requests = serde_json::to_string(&model.requests()).unwrap();
    assert!(!requests.contains(key), "{sandbox}: the model saw the key");
    assert!(
        !requests.contains("tok-0123456789abcdef"),
        "the model saw a token"
    );
    // The commands ran: the environment was printed, /proc refused.
    assert!(requests.contains("TERM=dumb"), "{requests}");
    assert!(requests.contains("Permission denied"), "{requests}");
    // The project file was read, with the key replaced by its name.
    assert!(
        requests.contains("[redacted: TEST_MODEL_KEY]"),
        "{requests}"
    );
    for entry in std::fs::read_dir(p.path(".slmcode/runs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(key), "the trajectory holds the key");
    }
    assert!(!r.stderr.contains(key));
}

#[test]
fn runs_are_listed_and_shown() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "a.txt"})),
        Scripted::final_done("read it"),
    ]);
    let r = run(&p, &model, "read a.txt please");
    assert_done(&r, &[]);
    let list = bin()
        .args(["runs", "list", "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(
        list.contains("done") && list.contains("read a.txt please"),
        "{list}"
    );
    let id = list.split_whitespace().next().unwrap();
    let show = bin()
        .args(["runs", "show", id, "--root"])
        .arg(p.root())
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout).to_string();
    assert!(show.contains("task: read a.txt please"), "{show}");
    assert!(
        show.contains("── ws_read") && show.contains("     1|one"),
        "{show}"
    );
    assert!(show.contains("\"status\": \"done\""), "{show}");
}

#[test]
fn ctrl_c_stops_cleanly_and_names_the_trajectory() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let model = FakeModel::start(vec![
        Scripted::call("ws_read", json!({"path": "a.txt"})),
        Scripted::Slow(20_000, Box::new(Scripted::final_done("too late"))),
    ]);
    let child = spawn_run(&p, &model, "read a.txt");
    // Wait until the second request is in flight, then interrupt.
    let started = std::time::Instant::now();
    while model.requests().len() < 2 {
        assert!(
            started.elapsed().as_secs() < 20,
            "the run never made its second request"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed().as_secs() < 15,
        "the run did not stop promptly"
    );
    assert_eq!(out.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stopped; what the run did is in .slmcode/runs/"),
        "{stderr}"
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["status"], "interrupted");
    // The run can go on from where it stopped.
    assert!(
        stderr.contains("go on with slmcode run --resume "),
        "{stderr}"
    );
    let text = p.run_log();
    assert!(
        text.contains("\"type\":\"tool\"") && text.contains("\"status\":\"interrupted\""),
        "{text}"
    );
}

#[test]
fn an_empty_task_is_refused_before_the_server_is_asked() {
    let p = Project::new();
    let model = FakeModel::start(vec![]);
    let r = run(&p, &model, "   ");
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("the task is empty"), "{}", r.stderr);
    assert!(model.requests().is_empty());
}

#[test]
fn ctrl_c_during_a_command_kills_it_and_the_call_keeps_its_result() {
    let p = Project::new();
    let marker = format!("1000.{}", std::process::id());
    let model = FakeModel::start(vec![
        Scripted::call(
            "ws_shell",
            json!({"command": format!("sleep {marker}"), "timeout_sec": 600}),
        ),
        Scripted::final_done("never asked"),
    ]);
    let child = spawn_run(&p, &model, "wait");
    let started = std::time::Instant::now();
    while !crate::common::alive(&marker) {
        assert!(
            started.elapsed().as_secs() < 20,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let interrupted = std::time::Instant::now();
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    // Generous: a run that waited for the command would take its 600 s.
    assert!(
        interrupted.elapsed().as_secs() < 5,
        "took {:?}",
        interrupted.elapsed()
    );
    assert_eq!(out.status.code(), Some(130));
    assert!(
        !crate::common::alive(&marker),
        "the command outlived the stop"
    );
    // The call has its result in what a follow-up continues from.
    let state = std::fs::read_dir(p.path(".slmcode/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".state.json"))
        .expect("the stopped run saved its state");
    let state: Value = serde_json::from_slice(&std::fs::read(state).unwrap()).unwrap();
    let last = state["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["message"]["role"], "tool", "{last}");
    assert!(
        last["message"]["content"]
            .as_str()
            .unwrap()
            .starts_with("ws_shell was cancelled before it finished"),
        "{last}"
    );
    assert_eq!(model.requests().len(), 1, "no request after the stop");
}

/// `slmcode run TASK --json` against `model`, in the background, its output captured.
fn spawn_run(p: &Project, model: &FakeModel, task: &str) -> std::process::Child {
    bin()
        .args(["run", task, "--json", "--endpoint", &model.url, "--root"])
        .arg(p.root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C, as a terminal sends it.
fn interrupt(child: &std::process::Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
